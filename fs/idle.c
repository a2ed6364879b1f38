/* Compression when a file goes idle (idle.h). */
#include "fs/idle.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fs/backing.h"
#include "fs/commit.h"
#include "fs/log.h"
#include "fs/options.h"
#include "fs/share.h"
#include "fs/write.h"

/* Compressed bytes staged before they are committed. A file whose chunks compress into
 * less (most files) is compacted once (fs/commit), and its stored bytes, overwritten or
 * cut off before the kernel wrote them back, mostly never reach the disk; a larger one is
 * committed in place batch by batch (durably: what was stored may have been fsynced; its
 * readers get in between), and the rewrite at the end copies them. Staged, they count
 * against dirty_size like any uncommitted data. */
#define IDLE_BATCH ((size_t)256 << 20)
/* Files waiting past this many (each entry keeps its file open): the one due first is
 * compressed at once. */
#define IDLE_QUEUE_MAX 128
/* Files waiting past this many: the thread is behind (idle_behind), and new small files
 * are compressed by their closers again, so that the queue stays bounded. */
#define IDLE_BEHIND (2 * IDLE_QUEUE_MAX)
/* A file whose lock was held when it was due (a closer, a reader) is looked at again
 * after this many milliseconds. */
#define RETRY_MS 20
/* Tries after which the thread waits for the lock (readers holding it all along). */
#define MAX_TRIES 50

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond;   /* with idle_lock: queue or stopping changed; on
                                    * CLOCK_MONOTONIC */
static b2fs_node *queue;           /* idle_lock: through idle_next, unordered */
static int queued;                 /* idle_lock */
static int stopping;               /* idle_lock */
/* idle_lock: how the thread waits, so that a file queued behind the one it waits for
 * (each new file: its first write queues it) does not wake it for nothing */
static enum { BUSY, WAIT_ANY, WAIT_UNTIL } waiting;
static struct timespec wait_until; /* idle_lock: with WAIT_UNTIL */
/* idle_lock: the node the thread took from the queue and is trying to lock; idle_forget
 * waits on claim_cond until it is queued again or locked */
static b2fs_node *claimed;
static pthread_cond_t claim_cond = PTHREAD_COND_INITIALIZER;
static int running;                /* atomic: the thread is there to take notes */
static pthread_t thread;

int idle_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

void idle_due_in(struct timespec *t, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

int idle_thread_start(pthread_t *t, pthread_cond_t *cond, void *(*run)(void *))
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) != 0)
        return -ENOMEM;
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int r = pthread_cond_init(cond, &a);
    pthread_condattr_destroy(&a);
    if (r != 0)
        return -r;
    return -pthread_create(t, NULL, run, NULL);
}

int idle_wanted(const b2fs_node *n)
{
    return __atomic_load_n(&running, __ATOMIC_ACQUIRE) && n->kind == B2FS_FRAME && !n->view &&
           n->chunksize > 0;
}

/* Puts n in the queue, due at *due (caller holds idle_lock and gives it a reference). */
static void enqueue_locked(b2fs_node *n, const struct timespec *due)
{
    n->idle_queued = 1;
    n->idle_due = *due;
    n->idle_next = queue;
    queue = n;
    queued++;
    if (waiting == WAIT_ANY ||
        (waiting == WAIT_UNTIL && (idle_before(due, &wait_until) || queued > IDLE_QUEUE_MAX)))
        pthread_cond_signal(&idle_cond);
}

void idle_note(b2fs_node *n)
{
    pthread_mutex_lock(&idle_lock);
    if (!n->idle_queued && !stopping) {
        /* (a write since moves nothing here: the thread looks at n->written when due) */
        struct timespec due;
        idle_due_in(&due, 1000L * b2fs_cfg.compress_idle);
        node_ref(n);
        enqueue_locked(n, &due);
    }
    pthread_mutex_unlock(&idle_lock);
}

int idle_behind(void)
{
    pthread_mutex_lock(&idle_lock);
    int behind = queued >= IDLE_BEHIND;
    pthread_mutex_unlock(&idle_lock);
    return behind;
}

void idle_forget(b2fs_node *n)
{
    pthread_mutex_lock(&idle_lock);
    while (claimed == n)   /* (not for long: the thread only tries n->lock, held here) */
        pthread_cond_wait(&claim_cond, &idle_lock);
    int had = n->idle_queued;
    if (had) {
        for (b2fs_node **pp = &queue; *pp; pp = &(*pp)->idle_next) {
            if (*pp == n) {
                *pp = n->idle_next;
                break;
            }
        }
        queued--;
        n->idle_queued = 0;
    }
    pthread_mutex_unlock(&idle_lock);
    if (had)
        node_put(n);   /* not the last: the caller's */
}

/* Milliseconds until n has been idle long enough (n->lock held), 0 when it has: since its
 * last write here, or its file's last change, which another mount's commits move (a file
 * queued when opened, its chunks stored by a daemon that died, may be another's to write). */
static long idle_wait_ms(const b2fs_node *n)
{
    struct timespec now, last = n->written;
    struct stat st;
    if (fstat(n->fd, &st) == 0 && idle_before(&last, &st.st_mtim))
        last = st.st_mtim;
    clock_gettime(CLOCK_REALTIME, &now);
    long long since = (long long)(now.tv_sec - last.tv_sec) * 1000 +
                      (now.tv_nsec - last.tv_nsec) / 1000000;
    long long want = 1000LL * b2fs_cfg.compress_idle;
    /* (a clock set back: now) */
    return since >= 0 && since < want ? (long)(want - since) : 0;
}

/* n's stored chunks were compressed, or are to stay stored: its file loses the mark of
 * them (fs/backing), unless a writer stored more since, queuing n again (n->lock held). */
static void unmark_stored(b2fs_node *n)
{
    pthread_mutex_lock(&idle_lock);
    int again = n->idle_queued;
    pthread_mutex_unlock(&idle_lock);
    if (again || !n->stored_marked || !n->frame || !n->writable)
        return;
    int r = backing_mark_stored(n->fd, 0);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: cannot remove the mark of chunks stored as written: %s",
                 n->path, strerror(-r));
    else
        n->stored_marked = 0;
}

/* Compresses what n stored as it is, unless a write came too recently or, with hard
 * links, another program has its file open (without force): then returns 1 with *again,
 * when to look again. With hurry (unmount) on the workers,
 * otherwise on this thread alone. Called and returns with n->lock held (write). */
static int compress_locked(b2fs_node *n, int force, int hurry, struct timespec *again)
{
    /* (a .npy file written is an array by now, its chunks compressed as it became one) */
    if (!n->defer || !n->frame || !n->writable || n->view) {
        n->defer = 0;
        unmark_stored(n);
        return 0;
    }
    long wait = force ? 0 : idle_wait_ms(n);
    if (wait > 0) {
        idle_due_in(again, wait);
        return 1;
    }
    /* a new file of one chunk: the rule for a plain file (fs/plain; which also leaves out
     * arrays) applies at its writer's close, as if it had been closed before this came */
    int small_new = write_is_small_new(n);
    /* what the writers left (a last partial chunk, stored too) is committed first */
    int r = commit_node(n, 0);
    /* the contents do not change: nor does the time the file was last written */
    struct stat before;
    int timed = r == 0 && fstat(n->fd, &before) == 0;
    struct timespec written = n->written;
    /* a file deleted meanwhile is not worth it. One with hard links cannot be rewritten
     * into a new file renamed over it (that would split the names), and compressed after
     * its stored chunks it would keep them as dead space and grow: it is compressed only
     * when it can be compacted in its own file then (commit_lease_linked), else it stays
     * as written */
    int leased = -1;
    if (timed && before.st_nlink > 1) {
        int l = commit_lease_linked(n);
        if (l == 1) {
            leased = n->fd;
        } else if (l == -EAGAIN && !force) {   /* open elsewhere now: looked at later */
            idle_due_in(again, 1000L * b2fs_cfg.compress_idle);
            return 1;
        } else {
            r = 1;
        }
    } else if (timed && before.st_nlink != 1) {
        r = 1;
    }
    int64_t next = 0;
    while (r == 0) {
        if ((r = share_lock(n)) < 0)
            break;
        /* another mount's commits first: what is compressed is the file as it is now */
        r = share_rebase_if_changed(n, 1);
        if (r == 0)
            r = write_compress_stored(n, &next, IDLE_BATCH, hurry);
        b2f_stat st;
        b2f_stat_get(n->frame, &st);
        int last = next >= st.nchunks;
        if (r < 0 || !n->changed) {
            share_unlock(n);
            if (r < 0 || last)
                break;
            continue;
        }
        /* each of these takes the commit lock again and releases it */
        r = last ? commit_compressed(n) : commit_node(n, 1);
        if (last)
            break;
        pthread_rwlock_unlock(&n->lock);
        sched_yield();   /* readers waiting get in between batches */
        pthread_rwlock_wrlock(&n->lock);
        if (!n->frame || !n->writable)
            break;
    }
    if (leased >= 0 && n->fd == leased)
        backing_lease(n->fd, 0);   /* (commit_compressed's, let go already when it ran) */
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: compressing it failed (%s): its chunks stay stored as written",
                 n->path, b2f_strerror(r));
    else if (n->frame && !n->changed)
        unmark_stored(n);
    /* (unless a writer got in between batches: its write is the file's last change) */
    if (timed && n->frame && n->written.tv_sec == written.tv_sec &&
        n->written.tv_nsec == written.tv_nsec) {
        const struct timespec times[2] = {before.st_atim, before.st_mtim};
        if (futimens(n->fd, times) == 0)
            node_stamp(n);
    }
    n->defer = 0;
    /* (a writer still has it open: its close may make it a plain file) */
    n->small_new = r == 0 && small_new && n->frame && !n->changed;
    return 0;
}

static void *run(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "b2fs-idle");
    pthread_mutex_lock(&idle_lock);
    for (;;) {
        if (!queue) {
            if (stopping)
                break;
            waiting = WAIT_ANY;
            pthread_cond_wait(&idle_cond, &idle_lock);
            waiting = BUSY;
            continue;
        }
        b2fs_node **first = &queue;
        for (b2fs_node **pp = &queue; *pp; pp = &(*pp)->idle_next)
            if (idle_before(&(*pp)->idle_due, &(*first)->idle_due))
                first = pp;
        b2fs_node *n = *first;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!stopping && queued <= IDLE_QUEUE_MAX && idle_before(&now, &n->idle_due)) {
            waiting = WAIT_UNTIL;
            wait_until = n->idle_due;
            pthread_cond_timedwait(&idle_cond, &idle_lock, &n->idle_due);
            waiting = BUSY;
            continue;
        }
        *first = n->idle_next;
        queued--;
        n->idle_queued = 0;
        int force = stopping || queued >= IDLE_QUEUE_MAX, hurry = stopping;
        /* n->lock is only tried: a closer holding it may be waiting in idle_forget for
         * this claim to end, and must find n queued or this reference gone. At unmount no
         * closer is left, and after MAX_TRIES (readers holding it all along) the thread
         * waits for it: then a closer may find this reference (the file stays a frame) */
        int wait = stopping || n->idle_tries >= MAX_TRIES;
        claimed = wait ? NULL : n;
        pthread_mutex_unlock(&idle_lock);
        int locked = wait ? pthread_rwlock_wrlock(&n->lock) == 0
                          : pthread_rwlock_trywrlock(&n->lock) == 0;
        pthread_mutex_lock(&idle_lock);
        claimed = NULL;
        pthread_cond_broadcast(&claim_cond);
        if (!locked) {
            n->idle_tries++;
            struct timespec soon;
            idle_due_in(&soon, RETRY_MS);
            if (!n->idle_queued)
                enqueue_locked(n, &soon);   /* with the reference it had */
            else
                node_put_shared(n);   /* (a writer queued it again: the queue's is kept) */
            /* (when forced, the queue is not waited on: not the same file at once) */
            if (force && !stopping) {
                pthread_mutex_unlock(&idle_lock);
                struct timespec pause = {0, RETRY_MS * 1000000L};
                nanosleep(&pause, NULL);
                pthread_mutex_lock(&idle_lock);
            }
            continue;
        }
        n->idle_tries = 0;
        pthread_mutex_unlock(&idle_lock);
        struct timespec again;
        int later = compress_locked(n, force, hurry, &again);
        /* the reference goes before n->lock does, so that a closer waiting for the lock
         * finds only its own (fs/plain wants the handle's alone) */
        pthread_mutex_lock(&idle_lock);
        int kept = later && !n->idle_queued;
        if (kept)
            enqueue_locked(n, &again);   /* with the reference it had */
        pthread_mutex_unlock(&idle_lock);
        int put = !kept && !node_put_shared(n);
        pthread_rwlock_unlock(&n->lock);
        if (put)
            node_put(n);
        pthread_mutex_lock(&idle_lock);
    }
    pthread_mutex_unlock(&idle_lock);
    return NULL;
}

int idle_start(void)
{
    int r = idle_thread_start(&thread, &idle_cond, run);
    if (r == 0)
        __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    return r;
}

void idle_stop(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&idle_lock);
    stopping = 1;
    pthread_cond_signal(&idle_cond);
    pthread_mutex_unlock(&idle_lock);
    pthread_join(thread, NULL);
    __atomic_store_n(&running, 0, __ATOMIC_RELEASE);
}
