/* Commits (commit.h). */
#include "fs/commit.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/dirty.h"
#include "fs/log.h"
#include "fs/replace.h"
#include "fs/share.h"
#include "fs/write.h"

/* committed bytes that make a commit trim the heap */
#define TRIM_AFTER_COMMIT ((size_t)8 << 20)

/* What a compaction in place may write while others wait to open the file. */
#define IN_PLACE_MAX ((int64_t)16 << 20)

/* Whether n's file has other names, which a new file renamed over one would split. */
static int has_links(const b2fs_node *n)
{
    struct stat st;
    return fstat(n->fd, &st) == 0 && st.st_nlink > 1;
}

/* Dead space worth moving a linked file's live chunks for: at least this, and a quarter
 * of what they take. */
#define MOVE_FOR_DEAD 4096

/* Compacts a file with hard links in its own file, its live chunks moved past its end
 * first when the compacted frame does not fit in front of them. The caller holds the
 * lease and the commit lock; the steps that overwrite bytes first look that the lease
 * still holds (the kernel takes it away after lease-break-time). 1 when the file changed,
 * 0 when not (too big, little dead space, the lease gone), or an error. */
static int compact_linked(b2fs_node *n, int durable, char *err, size_t errlen)
{
    if (!backing_lease_held(n->fd))
        return 0;
    int r = b2f_compact_in_place(n->frame, IN_PLACE_MAX, durable, err, errlen);
    if (r != 0)
        return r;
    b2f_stat st;
    b2f_stat_get(n->frame, &st);
    int64_t dead = b2f_dead_bytes(n->frame);
    if (dead < MOVE_FOR_DEAD || dead * 4 < st.cbytes ||
        (r = b2f_move_past_end(n->frame, IN_PLACE_MAX, durable, err, errlen)) != 1)
        return r;
    if (backing_lease_held(n->fd) &&
        (r = b2f_compact_in_place(n->frame, IN_PLACE_MAX, durable, err, errlen)) == 0)
        b2fs_log(LOG_WARNING, "%s: its chunks moved past its end, its compacted frame did not "
                 "fit in front of them", n->path);
    return r < 0 ? r : 1;   /* (moved: changed, compacted then or not) */
}

/* After a compaction in n's own file (rc: 1 done, 0 not, or an error): an error is logged,
 * and the frame read again at the next look (the file may hold the compacted frame);
 * otherwise the file as it is now is this mount's own. */
static void own_compaction_done(b2fs_node *n, int rc, const char *err)
{
    if (rc < 0) {
        b2fs_log(LOG_WARNING, "%s: compaction in its own file failed: %s%s%s", n->path,
                 b2f_strerror(rc), err[0] ? ": " : "", err);
        n->bsize = -1;
    } else {
        node_stamp(n);
    }
}

/* Whether more than half of the frame file is space no chunk uses (at least 1 MiB). */
static int compaction_due(b2fs_node *n)
{
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    int64_t dead = b2f_dead_bytes(n->frame);
    return dead >= (1 << 20) && dead * 2 >= fs.file_len;
}

/* Compaction when it is due (commit lock held): into a new file, or, for a file with hard
 * links, which a new file would split, in its own file, durably (its old bytes may be on
 * the disk), when nothing else has it open (the lease: commit_compressed's, or taken
 * here). */
static void maybe_compact(b2fs_node *n)
{
    n->compact_check = 0;
    if (!compaction_due(n) || replace_file(n, b2f_compact_into, "compaction") != -EMLINK)
        return;
    int held = backing_lease_held(n->fd);
    if (!held && backing_lease(n->fd, 1) < 0)
        return;
    char err[200] = "";
    own_compaction_done(n, compact_linked(n, 1, err, sizeof err), err);
    if (!held)
        backing_lease(n->fd, 0);
}

/* Bytes committed since the heap was last trimmed. */
static size_t untrimmed;

static void note_committed(size_t bytes)
{
    __atomic_add_fetch(&untrimmed, bytes, __ATOMIC_RELAXED);
}

/* A file stored as written carries the mark of it before its stored chunks are first
 * committed (commit lock held, after the rebase, which may switch n->fd): should the
 * daemon die before the file goes idle, the next mount compresses it once opened. */
static void mark_stored(b2fs_node *n)
{
    if (!n->defer || n->stored_marked)
        return;
    int r = backing_mark_stored(n->fd, 1);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: cannot mark it as stored as written: %s", n->path,
                 strerror(-r));
    else
        n->stored_marked = 1;
}

/* rewrite: the new state goes into a new file renamed into place (compacted), not after
 * the old one */
static int commit_staged(b2fs_node *n, int durable, int rewrite)
{
    if (!n->frame || !n->writable || n->plain)
        return 0;
    /* one that failed left everything staged: this commit tries again, and says */
    commit_behind_end(n, 1);
    int r = write_flush(n);
    if (r < 0)
        return r;
    if (!n->changed) {
        if (durable && fdatasync(n->fd) < 0)
            return -errno;
        /* commits behind the writer may have left dead space: compaction is looked at
         * here, under the commit lock, as after a commit of this node's own */
        if (!n->compact_check || !compaction_due(n)) {
            n->compact_check = 0;
            return 0;
        }
        if ((r = share_lock(n)) < 0)
            return r;
        if ((r = share_rebase_if_changed(n, 1)) == 0 && !n->changed)
            maybe_compact(n);
        share_unlock(n);
        return r;
    }
    char err[200] = "";
    size_t staged = n->staged;
    /* other b2fs mounts of the same backing directory: one commit at a time, each on
     * top of what the others committed (node_rebase_if_changed may switch n->fd to
     * the file that replaced ours; closing the old one releases its lock) */
    r = share_lock(n);
    if (r < 0)
        return r;
    r = share_rebase_if_changed(n, 1);
    if (r == 0) {
        mark_stored(n);
        /* an empty frame with new vlmetalayers cannot be committed in place atomically;
         * a rewrite that fails (hard links, say) is committed in place */
        r = (rewrite || !b2f_commit_is_atomic(n->frame)) &&
                    replace_file(n, b2f_compact_into, rewrite ? "compression" : "rewriting the file") == 0
                ? 0
                : b2f_commit(n->frame, durable, err, sizeof err);
        if (r < 0) {
            b2fs_log(LOG_ERR, "%s: commit failed: %s%s%s", n->path, b2f_strerror(r),
                     err[0] ? ": " : "", err);
        } else {
            n->changed = 0;
            n->staged = 0;
            dirty_forget_changes(n);
            dirty_account(n);
            maybe_compact(n);
            node_stamp(n);
        }
    }
    share_unlock(n);
    if (r == 0)
        note_committed(staged);
    return r;
}

/* The commit, then the times a program set while the changes were staged (fs/file), which
 * the commit's writes would have moved */
static int commit(b2fs_node *n, int durable, int rewrite)
{
    int r = commit_staged(n, durable, rewrite);
    if (r == 0 && n->times_pending && !node_has_changes(n)) {
        n->times_pending = 0;
        if (futimens(n->fd, n->times_set) < 0)
            r = -errno;
        node_stamp(n);
    }
    return r;
}

static int commit_trimmed(b2fs_node *n, int durable, int rewrite)
{
    int r = commit(n, durable, rewrite);
#ifdef __GLIBC__
    /* The staged chunks freed by this commit and the ones before it were allocated by
     * several threads; glibc keeps such memory in its arenas (4 writers of 1 GiB left
     * 180 MiB resident, idle) unless asked to give it back. */
    if (__atomic_load_n(&untrimmed, __ATOMIC_RELAXED) >= TRIM_AFTER_COMMIT) {
        __atomic_store_n(&untrimmed, 0, __ATOMIC_RELAXED);
        malloc_trim(0);
    }
#endif
    return r;
}

int commit_node(b2fs_node *n, int durable)
{
    return commit_trimmed(n, durable, 0);
}

int commit_rewrite(b2fs_node *n)
{
    return commit_trimmed(n, 1, 1);
}

int commit_compressed(b2fs_node *n)
{
    b2f_stat st;
    if (!n->frame)
        return commit_rewrite(n);
    /* one that may be on the disk already (fsynced, or written before the last 20 s) is
     * made compact durably: into a new file, or, one with hard links, in its own file,
     * synced before the compaction writes and on each side of every header write */
    int durable = !node_fresh_unsynced(n);
    if (durable && !has_links(n))
        return commit_rewrite(n);
    b2f_stat_get(n->frame, &st);
    if (st.cbytes > IN_PLACE_MAX || backing_lease(n->fd, 1) < 0)
        return commit_rewrite(n);
    int leased = n->fd;
    ino_t ino = n->ino;
    int r = commit_node(n, durable);
    /* Compacted in its own file after that commit, as an optimisation: what fails here
     * is logged and leaves a whole frame of the same contents. The commit may have
     * compacted it into a new file already (more than half of it dead, at least 1 MiB),
     * or moved the node to another mount's file: neither is leased, nor needs this. */
    if (r == 0 && n->ino == ino && share_lock(n) == 0) {
        char err[200] = "";
        int done = 0;
        if (share_rebase_if_changed(n, 1) == 0 && n->ino == ino && !n->changed) {
            if (has_links(n))
                done = compact_linked(n, durable, err, sizeof err);
            else if (!backing_lease_held(n->fd) ||
                     (done = b2f_compact_in_place(n->frame, IN_PLACE_MAX, durable, err,
                                                  sizeof err)) == 0)
                replace_file(n, b2f_compact_into, "compression");   /* did not fit */
        }
        own_compaction_done(n, done, err);
        share_unlock(n);   /* (after a rewrite, the new file's lock) */
    }
    if (n->fd == leased && n->ino == ino)
        backing_lease(n->fd, 0);
    return r;
}

int commit_lease_linked(b2fs_node *n)
{
    b2f_stat st;
    if (!n->frame)
        return 0;
    b2f_stat_get(n->frame, &st);
    if (st.cbytes > IN_PLACE_MAX)
        return 0;
    int r = backing_lease(n->fd, 1);
    return r == 0 ? 1 : r;
}

int commit_while_writing(b2fs_node *n)
{
    return commit(n, 0, 0);
}

struct b2fs_commit_behind {
    pthread_t thread;
    b2f_pending *p;
    int fd;
    int rc;
    char err[200];
    struct stat st;         /* the file right after the commit, under the lock */
    int st_ok;
    int unlock_rc;          /* releasing the commit lock (0 or -errno) */
    int done;               /* atomic: the thread is about to return */
    size_t staged;          /* the node's staged bytes it commits */
    int ntouched;           /* the node's notes of what it commits (share.c) */
    int resized, meta_changed;
};

static void *run(void *arg)
{
    b2fs_commit_behind *b = arg;
    pthread_setname_np(pthread_self(), "b2fs-commit");
    b->rc = b2f_pending_write(b->p, b->err, sizeof b->err);
    b->st_ok = fstat(b->fd, &b->st) == 0;
    b->unlock_rc = backing_unlock(b->fd);
    __atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A chunk still being compressed that lies inside the frame as staged now: the frame
 * holds zeros there (it grew past it), which a commit would make visible. */
static int job_inside_frame(b2fs_node *n)
{
    for (b2fs_job *j = n->jobs; j; j = j->next)
        if ((uint64_t)j->n * (uint64_t)n->chunksize < n->fnbytes)
            return 1;
    return 0;
}

int commit_behind_start(b2fs_node *n)
{
    if (n->behind || !n->frame || !n->writable || !n->changed)
        return 1;
    int r = write_harvest(n, 0);
    if (r < 0)
        return r;
    if (job_inside_frame(n))
        return 1;
    b2fs_commit_behind *b = calloc(1, sizeof *b);
    if (!b)
        return 1;
    r = share_lock(n);
    if (r < 0) {
        free(b);
        return r;
    }
    r = share_rebase_if_changed(n, 1);
    if (r == 0) {
        r = b2f_pending_begin(n->frame, &b->p);
        r = r < 0 ? r : b->p ? 0 : 1;
    }
    if (r == 0) {
        mark_stored(n);
        b->fd = n->fd;
        b->staged = n->staged;
        b->ntouched = n->ntouched;
        b->resized = n->resized;
        b->meta_changed = n->meta_changed;
        n->resized = n->meta_changed = 0;
        n->touched_mark = n->ntouched;
        if (pthread_create(&b->thread, NULL, run, b) != 0) {
            b2f_pending_end(n->frame, b->p);
            n->resized = b->resized;
            n->meta_changed = b->meta_changed;
            n->touched_mark = 0;
            r = 1;
        }
    }
    if (r != 0) {
        share_unlock(n);
        free(b);
        return r;
    }
    n->behind = b;
    n->behind_started++;
    return 0;
}

size_t commit_behind_staged(const b2fs_node *n)
{
    return n->behind ? n->behind->staged : 0;
}

int commit_behind_end(b2fs_node *n, int wait)
{
    b2fs_commit_behind *b = n->behind;
    if (!b || (!wait && !__atomic_load_n(&b->done, __ATOMIC_ACQUIRE)))
        return 0;
    pthread_join(b->thread, NULL);
    n->behind = NULL;
    n->touched_mark = 0;
    b2f_pending_end(n->frame, b->p);
    int r = 0;
    if (b->rc < 0) {
        b2fs_log(LOG_ERR, "%s: commit failed: %s%s%s", n->path, b2f_strerror(b->rc),
                 b->err[0] ? ": " : "", b->err);
        /* all of it is still staged, for the next commit */
        n->resized |= b->resized;
        n->meta_changed |= b->meta_changed;
        r = b->rc;
    } else {
        n->ntouched -= b->ntouched;
        memmove(n->touched, n->touched + b->ntouched, (size_t)n->ntouched * sizeof *n->touched);
        n->staged -= b->staged;
        n->changed = b2f_is_dirty(n->frame);
        if (b->st_ok) {
            n->mtime = b->st.st_mtim;
            n->bsize = b->st.st_size;
        }
        dirty_account(n);
        note_committed(b->staged);
        n->compact_check = 1;
    }
    if (b->unlock_rc < 0)
        b2fs_log(LOG_WARNING, "%s: cannot release the commit lock: %s", n->path,
                 strerror(-b->unlock_rc));
    free(b);
    return r;
}

static void commit_one(b2fs_node *n, void *arg)
{
    pthread_rwlock_wrlock(&n->lock);
    if (node_has_changes(n))
        commit_node(n, 1);
    pthread_rwlock_unlock(&n->lock);
}

void commit_all(void)
{
    node_each(commit_one, NULL);
}

void commit_retire(b2fs_node *n)
{
    pthread_rwlock_wrlock(&n->lock);
    commit_behind_end(n, 1);
    write_harvest(n, 1);
    if (node_has_changes(n) && commit_node(n, 0) < 0)
        b2fs_log(LOG_ERR, "%s: uncommitted changes lost", n->path);
    for (int i = 0; i < n->ndirty; i++)
        dirty_img_put(n->dirty[i].img, (size_t)n->chunksize);
    n->ndirty = 0;
    n->staged = 0;
    dirty_account(n);
    pthread_rwlock_unlock(&n->lock);
    node_destroy(n);
}
