/* Commits a writer does not wait for. A writer that has staged enough commits what it
 * staged so far on a thread of its own and goes on writing: the compressed chunks, the
 * index, the trailer and the header are written while the next chunks are compressed
 * (the frame layer's pending commit: frame/pending.c). The protocol is the one of a
 * plain commit: the OFD lock is taken and other mounts' commits merged before, and held
 * until the header is written; the thread releases it. Whatever then touches the file
 * or the frame's committed state (a plain commit, compaction, closing the node) first
 * waits for it: node_commit_behind_end. */
#include "fs/b2fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

struct b2fs_behind {
    pthread_t thread;
    b2f_pending *p;
    int fd;
    int rc;
    char err[200];
    struct stat st;         /* the file right after the commit, under the lock */
    int st_ok;
    int done;               /* atomic: the thread is about to return */
    size_t staged;          /* the node's staged bytes it commits */
    int ntouched;           /* the node's notes of what it commits (share.c) */
    int resized, meta_changed;
};

static void *run(void *arg)
{
    b2fs_behind *b = arg;
    b->rc = b2f_pending_write(b->p, b->err, sizeof b->err);
    b->st_ok = fstat(b->fd, &b->st) == 0;
    struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET};
    fcntl(b->fd, F_OFD_SETLK, &fl);
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

int node_commit_behind(b2fs_node *n)
{
    if (n->behind || !n->frame || !n->writable || !n->changed)
        return 1;
    int r = node_harvest(n, 0);
    if (r < 0)
        return r;
    if (job_inside_frame(n))
        return 1;
    b2fs_behind *b = calloc(1, sizeof *b);
    if (!b)
        return 1;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    fcntl(n->fd, F_OFD_SETLKW, &fl);
    r = node_rebase_if_changed(n, 1);
    if (r == 0) {
        r = b2f_pending_begin(n->frame, &b->p);
        r = r < 0 ? b2fs_errno(r) : b->p ? 0 : 1;
    }
    if (r == 0) {
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
        fl.l_type = F_UNLCK;
        fcntl(n->fd, F_OFD_SETLK, &fl);
        free(b);
        return r;
    }
    n->behind = b;
    return 0;
}

int node_commit_behind_end(b2fs_node *n, int wait)
{
    b2fs_behind *b = n->behind;
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
        r = b2fs_errno(b->rc);
    } else {
        n->ntouched -= b->ntouched;
        memmove(n->touched, n->touched + b->ntouched, (size_t)n->ntouched * sizeof *n->touched);
        n->staged -= b->staged;
        n->changed = b2f_is_dirty(n->frame);
        if (b->st_ok) {
            n->mtime = b->st.st_mtim;
            n->bsize = b->st.st_size;
        }
        node_account(n);
        node_note_committed(b->staged);
    }
    free(b);
    return r;
}
