/* fs/node: one node per open frame file, the table of nodes and their life cycle.
 *
 * Owns: the node table (keyed by backing inode, so renames and hard links need no
 * bookkeeping) and the idle list (unused nodes stay open, LRU, so that `ls -l` and
 * repeated opens do not parse the frame again); a node's identity, backing fd and frame.
 * The other fields of struct b2fs_node are managed by the modules named beside them.
 *
 * Life cycle: node_get (or node_adopt for a file just created) finds or opens a node
 * and takes a reference; node_ref takes another (read-ahead tasks); node_put drops one.
 * At zero references the node goes idle, still in the table. It leaves the table when
 * its file is deleted or more than MAX_IDLE nodes are idle: node_put then calls the
 * retire hook set by node_table_init (fs/commit: commits what is left under the node's
 * write lock), which ends with node_destroy. A node found again while idle is reused.
 *
 * Locks, in the order they are taken (docs/ARCHITECTURE.md, "Locks"):
 *   n->lock (rwlock)  the node's contents and state: read lock for reads, stat and
 *                     listing xattrs; write lock for anything that changes the node
 *                     or its backing file (writes, commits, compaction, xattr sets).
 *                     Anything that uses n->fd holds it (compaction replaces the fd).
 *   the commit lock   an OFD lock on n->fd (fs/backing), taken under the write lock.
 *   n->ra_lock        the sequential-reader fields; taken under n->lock (read) or alone.
 *   n->job_lock       compression jobs' completion; under n->lock or alone (workers).
 *   idle_lock         fs/idle's queue, the idle_* fields and the node its thread is
 *                     trying to lock; under n->lock or alone (idle_forget waits with
 *                     it for that try, which never waits).
 *   table_lock        the table, the idle list, refs, dev/ino; under any of the above
 *                     or alone. Never wait for a node lock while holding it.
 *   leaf locks        block cache, worker queue, chunk image pool, inode table (the
 *                     rekey hook takes it under table_lock): nothing under them.
 * Fields marked "atomic" are read and written with __atomic builtins only.
 *
 * Calls: frame/ (open, refresh, close), fs/layout (the view), fs/paths, fs/backing,
 * fs/options, fs/log. */
#ifndef B2FS_NODE_H
#define B2FS_NODE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "frame/frame.h"
#include "fs/paths.h"
#include "fs/wpool.h"

/* Room in front of every chunk image (its allocation starts there): a chunk stored as it
 * is gets its header written there and goes to the frame without a copy (fs/write). */
#define B2FS_IMG_ROOM B2_HEADER_LEN

/* A chunk whose bytes are newer than the frame's (fs/dirty). */
typedef struct b2fs_dirty {
    int64_t n;              /* chunk number */
    uint8_t *img;           /* chunksize bytes, B2FS_IMG_ROOM after its allocation */
    uint32_t valid;         /* img's bytes from here on are not cleared yet: they read as
                             * zeros (dirty_clear_to before anything looks at them; a new
                             * file's first chunk then costs no 1 MiB memset) */
} b2fs_dirty;

/* A full chunk being compressed on a worker (fs/write). The image stays readable until
 * the result is installed in the frame by whoever holds the node's write lock next. */
typedef struct b2fs_job {
    b2fs_task task;         /* first: the pool hands this back */
    struct b2fs_node *node;
    int64_t n;
    uint8_t *img;           /* chunksize bytes, read only while in flight */
    size_t len;
    b2_cctx *cctx;
    int typesize;           /* the frame's, when the job was made */
    uint8_t *out;           /* encoded chunk (written by the worker before done) */
    int rc;                 /* cbytes or a B2E_* code (likewise) */
    int done;               /* node->job_lock */
    int superseded;         /* node->lock (write): rewritten since, drop the result */
    struct b2fs_job *next;  /* node->lock (write): the node's in-flight list */
} b2fs_job;

typedef struct b2fs_commit_behind b2fs_commit_behind;

typedef struct b2fs_node {
    /* identity and table (fs/node) */
    dev_t dev;              /* table_lock; changed only with n->lock (write) held too */
    ino_t ino;              /* likewise */
    int refs;               /* table_lock */
    int unlisted;           /* table_lock: out of the table, its file no frame any more
                             * (fs/plain): its last node_put retires it */
    struct b2fs_node *next, *lru_prev, *lru_next; /* table_lock */
    int kind;               /* B2FS_FRAME or B2FS_BLP; fixed */
    char *path;             /* backing path for logs; fixed */
    pthread_rwlock_t lock;
    pthread_mutex_t ra_lock;
    pthread_mutex_t job_lock;
    pthread_cond_t job_cond; /* with job_lock: a job finished */

    /* the backing file (fs/node; replaced by fs/replace and fs/share); n->lock */
    int fd;
    int dirfd;              /* O_PATH fd of the backing directory ... */
    char *name;             /* ... and the name in it (renames through the mount) */
    b2_frame *frame;        /* NULL when the file did not open (broken) */
    char broken[200];       /* why it did not open */
    int writable;
    uint64_t gen;           /* new whenever the contents change (block cache key) */
    uint64_t size;          /* contents size, including dirty data */
    uint64_t fnbytes;       /* size of the frame as staged in the frame layer */
    int32_t chunksize;      /* 0: chunks of variable sizes */
    struct b2fs_view *view; /* an array shown as a .npy file (fs/layout), or NULL */
    struct timespec mtime;  /* backing mtime when last seen */
    off_t bsize;            /* backing size when last seen */
    int cached_ok;          /* kernel page cache may be kept at next open */
    int push_holds;         /* fs/push's push_lock: writable handles and truncates under
                             * way; no decoded block goes to the page cache meanwhile */

    /* uncommitted state (fs/dirty, fs/write); n->lock (write) */
    b2fs_dirty *dirty;
    int ndirty, cap_dirty;
    b2fs_job *jobs;         /* chunks in flight */
    int njobs;
    int npending;           /* n->job_lock: jobs not yet encoded */
    b2_cctx *cctx;
    b2_cctx *spare_cctx[8]; /* compression contexts for jobs, reused */
    int defer;              /* chunks written are stored as they are, to be compressed when
                             * the file goes idle (fs/idle): a file created through the
                             * mount or truncated to 0, until then */
    int stored_marked;      /* the backing file carries the mark of chunks stored as
                             * written, not yet compressed when idle (fs/backing) */
    int nspare;
    size_t staged;          /* bytes handed to the frame since the last commit */
    int changed;            /* staged changes not committed */
    size_t accounted;       /* this node's share of the uncommitted-bytes total */
    struct timespec written; /* when the contents last changed (stat shows it as mtime and
                              * ctime until the change is committed) */
    struct timespec times_set[2]; /* atime, mtime set (utimens) while changes were staged:
                             * given to the file after its commit (fs/commit), shown by
                             * stat meanwhile; UTIME_OMIT: not set */
    int times_pending;      /* times_set is to be given (a change since drops it) */
    int small_new;          /* a new file of one chunk, made a frame at its close (fs/write:
                             * compressed or stored then, not left for fs/idle) or, while
                             * its writer still had it open, by fs/idle: it may become a
                             * plain file at the close (fs/plain) */
    int fsynced;            /* a commit was made durable since the node opened (fs/file) */
    int plain;              /* the file became a plain file (fs/plain): changes through the
                             * node are refused (-ESTALE), nothing is committed */

    /* what changed since the last commit, for merging with other mounts' commits
     * (fs/dirty, fs/share, fs/commit); n->lock (write) */
    int64_t *touched;       /* chunks changed */
    int ntouched, cap_touched;
    int touched_mark;       /* entries before it go with the commit in progress behind */
    int resized;            /* the size changed */
    int meta_changed;       /* vlmetalayers changed */
    b2fs_commit_behind *behind; /* a commit being written behind the writer, or NULL */
    uint64_t behind_started;    /* commits started behind the writer so far (a writer at the
                                 * bound waits for one within its write: n->behind is NULL
                                 * again when the write returns) */
    int compact_check;      /* a commit behind the writer ended: the next commit looks
                             * at compaction even with nothing of its own to commit */

    /* readers (fs/read) */
    uint64_t ra_next;       /* ra_lock: offset a sequential reader asks for next */
    uint64_t ra_claimed;    /* ra_lock: end of the streaming read started last:
                             * read-ahead keeps no block before it */
    int64_t ra_done;        /* ra_lock: last chunk queued for read-ahead (a view's reader:
                             * the file offset read-ahead was queued up to) */
#define VIEW_RA_RECENT 32
    int64_t ra_recent[VIEW_RA_RECENT]; /* ra_lock: a view's chunks queued last, plus one
                                        * (0: none) */
    unsigned ra_recent_next; /* ra_lock: where the next one goes */
    int64_t bad_logged;     /* atomic: last damaged chunk logged (one line per chunk) */
    uint64_t decoded_blocks; /* atomic: blocks decoded since the node opened */
    uint64_t decoded_chunks; /* atomic: chunks decoded whole (special values, Bloscpack) */
    uint64_t damaged_reads; /* atomic: reads refused because a checksum did not hold */
    time_t checked;         /* atomic: last time a reader looked for other mounts' commits */

    /* compression when idle (fs/idle); idle's lock */
    int idle_queued;        /* in idle's queue (which holds a reference) */
    struct b2fs_node *idle_next;
    struct timespec idle_due; /* CLOCK_MONOTONIC: when to look at it again */
    int idle_tries;         /* times its lock was found held when it was due, in a row */
} b2fs_node;

/* The hook node_put calls for a node leaving the table (no references, no lock held);
 * it must end with node_destroy(n). */
typedef void (*node_retire_fn)(b2fs_node *n);
/* The hook told that a node's file is now another backing file (dev, old) -> (dev, ino):
 * rewritten whole by compaction here or by another mount. Called under table_lock: it
 * may take only a leaf lock. May be NULL. */
typedef void (*node_rekey_fn)(dev_t dev, ino_t old, ino_t ino);
void node_table_init(node_retire_fn retire, node_rekey_fn rekeyed);

/* Finds or opens the node of a backing frame file (loc->kind FRAME or BLP). path is the
 * mount path (for logs). 0 or -errno. */
int node_get(const char *path, const b2fs_loc *loc, b2fs_node **out);
/* Registers a new frame file just created as name in dirfd (fd and frame are taken
 * over; dirfd is not). */
int node_adopt(int fd, b2_frame *f, const char *bpath, int dirfd, const char *name,
               b2fs_node **out);
/* Looks a node up by inode without opening it (NULL if not open). Takes a reference. */
b2fs_node *node_find(dev_t dev, ino_t ino);
void node_ref(b2fs_node *n);
void node_put(b2fs_node *n);
/* Drops a reference only if it is not the last (then returns 1): safe with n->lock held,
 * as the last one's node_put takes it. */
int node_put_shared(b2fs_node *n);
/* Frees what node_get made (the frame, fds, names, locks). Only from the retire hook or
 * for a node never shown to anyone. */
void node_destroy(b2fs_node *n);
/* Calls fn on every node in the table, each with a reference and without table_lock. */
void node_each(void (*fn)(b2fs_node *n, void *arg), void *arg);

/* The following need n->lock (write), except node_fill_stat (read is enough). */
/* A backing file was renamed through the mount: its node follows. Takes the lock. */
void node_moved(dev_t dev, ino_t ino, int dirfd, const char *name);
/* Renames n's backing file to name in its directory, unless name exists there; n follows.
 * 0 or -errno (nothing renamed). */
int node_rename_in_place(b2fs_node *n, const char *name);
/* The node's file got a new inode (another mount's rewrite). */
void node_rekey(b2fs_node *n, dev_t dev, ino_t ino);
/* Renames tmp (the new version of n's file, open as fd) over name in dirfd and moves n to
 * fd's inode, with no node_get registering a node in between: one node per file, also
 * across compaction. 0 or -errno (nothing renamed). */
int node_rename_over(b2fs_node *n, int dirfd, const char *tmp, const char *name, int fd);
/* Makes n's frame file the plain file plain holding buf (len bytes, at most the frame's
 * size), in place: no new inode (creating one and deleting the frame's is what costs most
 * in a tree of small files on ext4). Only when n has no other reference and plain is free:
 * a hard link plain (the frame still shows: suffixed names win), the contents written
 * over the frame's bytes and the file cut to them when it was longer, the frame's name
 * removed. n then leaves the table (unlisted). 0; 1 when a step after the contents began
 * failed (the file is no frame and may still have both names: the caller says so); or
 * -EBUSY (another reference), -ESTALE (n's file is no longer under its name), -EEXIST
 * (plain is taken), -errno, with nothing changed. */
int node_swap_to_plain(b2fs_node *n, const char *plain, const void *buf, size_t len);
void node_new_gen(b2fs_node *n);
/* Notes the backing file's size and time as seen now. */
void node_stamp(b2fs_node *n);
/* How recent the last write through this mount must be for b2fs to change a file's bytes
 * in place without an fsync: the kernel writes dirty pages back after 30 s
 * (vm.dirty_expire_centisecs), so a file written since is most likely still in the page
 * cache alone, and a crash of the machine loses it or keeps it whole, as it would any
 * file written and not fsynced. An older one may be on the disk. */
#define B2FS_FRESH_WITHIN_S 20
/* Whether n's contents were last written through this mount less than
 * B2FS_FRESH_WITHIN_S seconds ago (not a file queued again after a daemon that died) and
 * never fsynced (caller holds n->lock). */
int node_fresh_unsynced(const b2fs_node *n);
/* Sizes from the frame (a new frame or one re-read); keeps writable as it was. */
void node_load_sizes(b2fs_node *n);
/* Sets the frame's write policy its backing file carries (filters=auto: backing_choose_marked),
 * after any (re)open of the frame. node_load_sizes calls it. */
void node_apply_policy(b2fs_node *n);
/* Makes sure the node matches the backing file when nothing of its own is uncommitted
 * (another program changed it). */
void node_refresh(b2fs_node *n);
/* Whether the node holds changes not yet committed. */
int node_has_changes(const b2fs_node *n);
/* Frees the spare compression contexts (an idle node, new parameters). */
void node_drop_spare_cctx(b2fs_node *n);
/* Stat of a node: backing attributes, contents size. */
void node_fill_stat(b2fs_node *n, struct stat *st);

#endif
