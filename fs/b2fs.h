/* fs/: the b2fs program. Private header shared by the fs/ sources.
 *
 * Pieces: options.c (command line), log.c (stderr or syslog), paths.c (mount name ->
 * backing name, all access relative to one directory fd), node.c (table of open frames,
 * dirty chunks, commit, compaction), commit_behind.c (commits a writer does not wait
 * for), share.c (several mounts of one backing directory), rechunk.c, bcache.c (decoded
 * block cache, read-ahead), wpool.c (worker threads), io.c (read, write, truncate, lseek on
 * a node; chunk compression jobs), xattr.c (user.blosc2.*), ops.c (the FUSE callbacks),
 * main.c. */
#ifndef B2FS_FS_H
#define B2FS_FS_H

#define FUSE_USE_VERSION 31

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "frame/frame.h"

/* ---- configuration (options.c) ---- */

typedef struct b2fs_config {
    const char *backing;      /* as given */
    int rootfd;               /* O_PATH directory fd of BACKING */
    b2f_params params;        /* defaults for new files */
    int nthreads;             /* worker threads (read-ahead, compression) */
    size_t cache_size;        /* block cache bound, bytes */
    size_t dirty_limit;       /* dirty bytes per file before it is written out */
    int ro;
    int foreground;
} b2fs_config;

extern b2fs_config b2fs_cfg;

/* Largest FUSE read and write request asked for (max_write, max_readahead), and the
 * st_blksize frame files show. */
#define B2FS_IO_SIZE (1u << 20)

/* Parses argv: takes BACKING and the b2fs options out of args, leaves FUSE's own in it.
 * Returns 0 to go on, 1 to exit successfully (--help, --version), -1 on a bad option
 * (the message has been printed). */
struct fuse_args;
int b2fs_options_parse(struct fuse_args *args, b2fs_config *cfg);
/* "1M" -> 1048576; returns -1 on a bad text. */
int64_t b2fs_parse_size(const char *text);
/* Checks one codec parameter given as text (name: codec, clevel, filters, typesize,
 * chunksize, blocksize) and stores it into p. sep is the filter separator.
 * Returns 0 or -1 (and a reason in why). */
int b2fs_param_set(b2f_params *p, const char *name, const char *value, char sep,
                   const char **why);

/* ---- logging (log.c) ---- */

void b2fs_log_to_syslog(void);
void b2fs_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A frame-layer or codec return code as a negative errno. */
int b2fs_errno(int code);

/* ---- path mapping (paths.c) ---- */

enum b2fs_kind { B2FS_NONE = 0, B2FS_PLAIN, B2FS_FRAME, B2FS_BLP };

/* Where a mount path lives in BACKING. dirfd is an O_PATH fd of the parent directory
 * (owned: loc_done closes it); name is the backing entry name in it. */
typedef struct b2fs_loc {
    int dirfd;
    int kind;               /* B2FS_NONE when nothing visible has that name */
    char name[300];
    char mname[256];        /* the last component as the mount shows it */
    struct stat st;         /* backing stat (valid unless kind == B2FS_NONE) */
} b2fs_loc;

/* Resolves path ("/a/b"). Returns 0 (also when the last component does not exist:
 * kind NONE, dirfd valid) or -errno (parent missing, not a directory, a symlink on the
 * way, name too long). */
int loc_resolve(const char *path, b2fs_loc *loc);
void loc_done(b2fs_loc *loc);
/* Kind of a backing name by suffix, and the length of the shown name. */
int name_kind(const char *name, size_t *shown_len);
/* Builds backing name mname + suffix of kind (frames get ".b2frame"). */
int name_with_suffix(char *out, size_t cap, const char *mname, const char *suffix);
const char *kind_suffix(const char *backing_name);
/* True for the temporary names b2fs uses while creating a file. */
int name_is_temp(const char *name);
/* Opens a backing dir for reading entries (O_RDONLY, never through a symlink). */
int loc_open_dir(const char *path);
/* Lists the names the mount shows in the directory open as dfd (consumes dfd).
 * Calls fill for each; returns 0 or -errno. */
int dir_list(int dfd, int (*fill)(void *ctx, const char *name), void *ctx);

/* ---- nodes: one per open frame file (node.c) ---- */

typedef struct b2fs_dirty {
    int64_t n;              /* chunk number */
    uint8_t *img;           /* chunksize bytes */
} b2fs_dirty;

/* Work for the worker threads (wpool.c): run() is called once, on a worker. */
typedef struct b2fs_task {
    void (*run)(struct b2fs_task *t);
    struct b2fs_task *qnext;
} b2fs_task;

/* A full chunk being compressed on a worker (io.c). The image stays readable until
 * the result is installed in the frame by whoever holds the node's write lock next. */
typedef struct b2fs_job {
    b2fs_task task;         /* first: the pool hands this back */
    struct b2fs_node *node;
    int64_t n;
    uint8_t *img;           /* chunksize bytes, read only while in flight */
    size_t len;
    b2_cctx *cctx;
    int typesize;           /* the frame's, when the job was made */
    uint8_t *out;           /* encoded chunk (worker output) */
    int rc;                 /* cbytes or a B2E_* code */
    int done;               /* set by the worker under node->job_lock */
    int superseded;         /* rewritten since: drop the result */
    struct b2fs_job *next;  /* node's in-flight list */
} b2fs_job;

typedef struct b2fs_node {
    dev_t dev;
    ino_t ino;
    uint64_t gen;           /* changes whenever the contents change (block cache key) */
    int refs;
    struct b2fs_node *next, *lru_prev, *lru_next;
    int fd;
    int kind;               /* B2FS_FRAME or B2FS_BLP */
    int writable;
    b2_frame *frame;        /* NULL when the file did not open (broken) */
    char broken[200];       /* why it did not open */
    char *path;             /* backing path, for logs */
    int dirfd;              /* O_PATH fd of the backing directory and the name in it */
    char *name;             /* (kept up to date by renames through the mount) */
    pthread_rwlock_t lock;  /* read: reads; write: anything that changes the node */
    pthread_mutex_t ra_lock;
    uint64_t size;          /* contents size, including dirty data */
    uint64_t fnbytes;       /* size of the frame as staged in the frame layer */
    int32_t chunksize;
    b2fs_dirty *dirty;
    int ndirty, cap_dirty;
    size_t staged;          /* bytes handed to the frame since the last commit */
    int changed;            /* staged changes not committed */
    int cached_ok;          /* kernel page cache may be kept at next open */
    b2_cctx *cctx;
    struct timespec mtime;  /* backing mtime when last seen */
    off_t bsize;            /* backing size when last seen */
    uint64_t ra_next;       /* offset a sequential reader asks for next */
    uint64_t ra_claimed;    /* end of the streaming read started last: read-ahead keeps no
                             * block before it (that reader is copying or has copied it) */
    int64_t ra_done;        /* last chunk queued for read-ahead */
    int64_t bad_logged;     /* last damaged chunk logged (one line per chunk) */
    b2fs_job *jobs;         /* chunks in flight (list changed under the write lock) */
    int njobs, npending;    /* in flight; of those not yet encoded (job_lock) */
    pthread_mutex_t job_lock;
    pthread_cond_t job_cond;
    size_t accounted;       /* this node's share of the uncommitted-bytes total */
    int64_t *touched;       /* chunks changed since the last commit (share.c) */
    int ntouched, cap_touched;
    int touched_mark;       /* entries before it go with the commit in progress behind */
    struct b2fs_behind *behind; /* a commit being written behind the writer, or NULL */
    int resized;            /* the size changed since the last commit */
    int meta_changed;       /* vlmetalayers changed since the last commit */
    struct timespec checked; /* last time a reader looked for other mounts' commits */
    b2_cctx *spare_cctx[8]; /* compression contexts for jobs, reused */
    int nspare;
} b2fs_node;

/* Finds or opens the node of a backing frame file (loc->kind FRAME or BLP). */
int node_get(const char *path, const b2fs_loc *loc, b2fs_node **out);
void node_ref(b2fs_node *n);
/* Registers a new frame file just created as name in dirfd (fd and frame are taken
 * over; dirfd is not). */
int node_adopt(int fd, b2_frame *f, const char *path, int dirfd, const char *name,
               b2fs_node **out);
/* A backing file was renamed through the mount: its node follows. */
void node_moved(dev_t dev, ino_t ino, int dirfd, const char *name);
void node_put(b2fs_node *n);
/* Writes out dirty chunks and commits (caller holds the write lock). */
int node_commit(b2fs_node *n, int durable);
/* node_commit for a writer that goes on: the memory the commit frees is kept for
 * the chunks it writes next. */
int node_commit_while_writing(b2fs_node *n);
/* Commits every node (at unmount). */
void node_commit_all(void);
/* Adds bytes a commit has written to what the next node_commit may give back to the
 * system. */
void node_note_committed(size_t bytes);

/* ---- commits a writer does not wait for (commit_behind.c); write lock held ---- */

typedef struct b2fs_behind b2fs_behind;
/* Starts committing what the node has staged, written by a thread of its own, while
 * the writer goes on. 0 started; 1 not now (one is still running, nothing staged, a
 * chunk below the frame's end still being compressed, or a change that needs a plain
 * commit); or -errno. */
int node_commit_behind(b2fs_node *n);
/* Takes the result of the commit behind, if any: waits for it (wait), or only when it
 * is done. 0, or the -errno of a commit that failed (logged; what it had to write
 * stays staged for the next commit). */
int node_commit_behind_end(b2fs_node *n, int wait);
/* Looks a node up by inode without opening it (NULL if not open). Takes a reference. */
b2fs_node *node_find(dev_t dev, ino_t ino);
/* Stat of a node: backing attributes, contents size. Caller holds a lock. */
void node_fill_stat(b2fs_node *n, struct stat *st);
/* Makes sure the node matches the backing file (another writer committed). Caller
 * holds the write lock. */
void node_refresh(b2fs_node *n);
void node_new_gen(b2fs_node *n);
void node_set_path(b2fs_node *n, const char *path);

/* ---- several mounts of one backing directory (share.c) ---- */

/* On a file made by compaction: "dev:ino" of the first file of its line (the file that
 * was compacted first; kept through later compactions). */
#define B2FS_XATTR_FROM "user.b2fs.from"
/* The line the node's file belongs to: its user.b2fs.from, or its own "dev:ino". */
void node_lineage(b2fs_node *n, char *out, size_t cap);

/* write lock: notes that chunk c changed (kept over other mounts' commits) */
void node_touch(b2fs_node *n, int64_t c);
/* write lock: when another mount committed the file since this node read it, or
 * replaced it (compaction), re-reads it and applies this node's changes on top. With
 * committing (the commit lock on n->fd is held), a replacing file gets locked too.
 * Returns 0 or -errno. */
int node_rebase_if_changed(b2fs_node *n, int committing);
void node_forget_changes(b2fs_node *n);
/* read-side check (at most once a second): picks up other mounts' commits when this
 * node has no changes of its own. Takes the write lock itself; call without locks. */
void node_check_shared(b2fs_node *n);
/* node.c helpers used by share.c */
void node_stamp(b2fs_node *n);
void node_load_sizes(b2fs_node *n);
/* Before the first write to a frame of variable-size chunks: rewrites it with fixed-size
 * chunks (fs/rechunk.c). 0, or -errno (-EOPNOTSUPP while not supported). */
int node_make_fixed(b2fs_node *n);
/* Writes a new version of the node's file with write() (b2f_compact_into,
 * b2f_rechunk_into ...) to a temporary name next to it, fsyncs it and renames it into
 * place (a crash leaves one whole file or the other), keeping mode, owner, xattrs and
 * the line of the file (B2FS_XATTR_FROM); then the node reads the new file. what names
 * the operation in logs. Caller holds the write lock. 0, or -errno (nothing changed;
 * -ESTALE, not logged: the file is no longer at the node's name). */
typedef int (*node_writer)(b2_frame *f, int fd, char *err, size_t errlen);
int node_replace_with(b2fs_node *n, node_writer write, const char *what);
void node_rekey(b2fs_node *n, dev_t dev, ino_t ino);

/* ---- io on a node (io.c); callers hold the node lock as noted ---- */

/* read lock */
ssize_t node_read(b2fs_node *n, char *buf, size_t len, uint64_t off);
/* write lock */
ssize_t node_write(b2fs_node *n, const char *buf, size_t len, uint64_t off);
/* write lock: the same with the bytes copied by fill, in order, straight into the
 * chunk images (no buffer in between): fill(ctx, dst, len) returns 0 or -errno */
typedef int (*b2fs_fill)(void *ctx, void *dst, size_t len);
ssize_t node_write_with(b2fs_node *n, size_t len, uint64_t off, b2fs_fill fill, void *ctx);
int node_truncate(b2fs_node *n, uint64_t size);
/* write lock: brings the node's share of the uncommitted-bytes total (dirty images,
 * chunks in flight, staged chunks) up to date; returns the new total */
size_t node_account(b2fs_node *n);
/* write lock: writes out dirty chunks to the frame layer (no commit) */
int node_flush_dirty(b2fs_node *n);
/* read lock: SEEK_DATA / SEEK_HOLE */
off_t node_seek(b2fs_node *n, off_t off, int whence);
/* What node_read_chunk_part leaves in the block cache: every block it decoded (KEEP);
 * for a sequential reader that will not come back, none that it read to their end
 * (STREAM); for read-ahead, none that the sequential reader already went past (AHEAD).
 * A NULL dst only fills the cache. */
enum { B2FS_READ_KEEP, B2FS_READ_STREAM, B2FS_READ_AHEAD };
/* fills [off, off + len) of chunk c of the frame into dst through the block cache */
int node_read_chunk_part(b2fs_node *n, int64_t c, uint32_t off, uint32_t len, uint8_t *dst,
                         int mode);
/* Whether the streaming read started last reaches content offset end (its reader copies,
 * or has copied, everything before end itself). */
int node_behind_reader(b2fs_node *n, uint64_t end);

/* ---- block cache and read-ahead (bcache.c) ---- */

void bcache_init(size_t bytes);
void bcache_shutdown(void);
/* Copies block `block` of chunk c of node generation gen into dst if cached. */
int bcache_get(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len);
/* bcache_get for a reader streaming through the file: when the copy reaches the block's
 * end the block leaves the cache (the kernel's page cache has it now), so a long
 * sequential read recycles a few pages instead of pushing out every other file's
 * blocks and faulting in the whole cache after a mount. */
int bcache_take(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len);
void bcache_put(uint64_t gen, int64_t c, int32_t block, const void *src, size_t len);
/* Room for a block of len bytes in the cache, contiguous, for a decoder to write the block
 * into: NULL when the cache is off or has no such room (other threads hold the rest, or
 * evicting a few blocks did not free a long enough run). The
 * caller then either publishes it under its key, which makes it a cached block (unless
 * another thread put that key first: then the room is given back), or cancels it. */
typedef struct bcache_entry bcache_entry;
uint8_t *bcache_reserve(size_t len, bcache_entry **slot);
void bcache_publish(bcache_entry *slot, uint64_t gen, int64_t c, int32_t block);
void bcache_cancel(bcache_entry *slot);
/* Bytes of cache pages holding blocks now (<= cache_size), and bytes of pages ever
 * used (what the cache adds to the daemon's resident memory; <= cache_size too). */
size_t bcache_used(void);
size_t bcache_touched(void);
/* Queues decoding chunk c of node n ahead of a sequential reader. */
void bcache_readahead(b2fs_node *n, int64_t c);
/* A decode context for this thread. */
b2_dctx *thread_dctx(void);

/* ---- worker threads: compression and read-ahead (wpool.c) ---- */

void wpool_init(int nworkers);
/* Runs what is queued, then stops the workers. */
void wpool_shutdown(void);
int wpool_size(void);
/* Queues t (runs it right here when there are no workers). */
void wpool_submit(b2fs_task *t);
/* write lock: installs finished jobs; with wait, waits for all of them first */
int node_harvest(b2fs_node *n, int wait);
/* frees the spare compression contexts (after a parameter change) */
void node_drop_cctx(b2fs_node *n);

/* ---- xattrs (xattr.c) ---- */

int b2fs_getxattr(const char *path, const char *name, char *value, size_t size);
int b2fs_setxattr(const char *path, const char *name, const char *value, size_t size,
                  int flags);
int b2fs_listxattr(const char *path, char *list, size_t size);
int b2fs_removexattr(const char *path, const char *name);
/* Parameters for a new file created in the directory of path (mount defaults with the
 * directory defaults of every ancestor applied). */
void b2fs_params_for_new(const char *path, b2f_params *p);

#endif
