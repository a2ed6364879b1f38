/* The node table and the nodes' life cycle (node.h). */
#include "fs/node.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/layout.h"
#include "fs/log.h"
#include "fs/options.h"

#define NBUCKETS 1024
#define MAX_IDLE 128

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static b2fs_node *buckets[NBUCKETS];
static b2fs_node *idle_head, *idle_tail; /* most recent first */
static int nidle;
static uint64_t next_gen = 1;
static node_retire_fn retire_hook;
static node_rekey_fn rekey_hook;

void node_table_init(node_retire_fn retire, node_rekey_fn rekeyed)
{
    retire_hook = retire;
    rekey_hook = rekeyed;
}

static size_t bucket_of(dev_t dev, ino_t ino)
{
    return (size_t)((ino * 0x9E3779B97F4A7C15ull) ^ dev) % NBUCKETS;
}

void node_new_gen(b2fs_node *n)
{
    n->gen = __atomic_fetch_add(&next_gen, 1, __ATOMIC_RELAXED);
}

static void idle_unlink(b2fs_node *n)
{
    if (n->lru_prev)
        n->lru_prev->lru_next = n->lru_next;
    else
        idle_head = n->lru_next;
    if (n->lru_next)
        n->lru_next->lru_prev = n->lru_prev;
    else
        idle_tail = n->lru_prev;
    n->lru_prev = n->lru_next = NULL;
    nidle--;
}

static void idle_push(b2fs_node *n)
{
    n->lru_prev = NULL;
    n->lru_next = idle_head;
    if (idle_head)
        idle_head->lru_prev = n;
    idle_head = n;
    if (!idle_tail)
        idle_tail = n;
    nidle++;
}

void node_stamp(b2fs_node *n)
{
    struct stat st;
    if (fstat(n->fd, &st) == 0) {
        n->mtime = st.st_mtim;
        n->bsize = st.st_size;
    }
}

int node_fresh_unsynced(const b2fs_node *n)
{
    if (n->fsynced || (n->written.tv_sec == 0 && n->written.tv_nsec == 0))
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec >= n->written.tv_sec &&
           now.tv_sec - n->written.tv_sec < B2FS_FRESH_WITHIN_S;
}

void node_apply_policy(b2fs_node *n)
{
    if (n->frame && n->writable && n->fd >= 0) {
        int marked = backing_choose_marked(n->fd);
        b2f_set_choose(n->frame, marked & CHOSEN_FILTERS, marked & CHOSEN_TYPESIZE);
    }
}

void node_load_sizes(b2fs_node *n)
{
    node_apply_policy(n);
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    n->size = n->fnbytes = (uint64_t)fs.nbytes;
    n->chunksize = fs.chunksize;
    n->writable = n->writable && fs.writable && fs.kind == B2F_KIND_FRAME;
    free(n->view);
    n->view = layout_view_make(n);
}

static void node_open_frame(b2fs_node *n)
{
    char err[160] = "";
    int r = b2f_open(&n->frame, n->fd, n->writable ? B2F_RDWR : B2F_RDONLY, NULL, err, sizeof err);
    if (r < 0) {
        n->frame = NULL;
        snprintf(n->broken, sizeof n->broken, "%s%s%s", b2f_strerror(r), err[0] ? ": " : "", err);
        b2fs_log(LOG_ERR, "%s: does not open: %s", n->path, n->broken);
        struct stat st;
        n->size = fstat(n->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
        n->writable = 0;
        return;
    }
    n->broken[0] = 0;
    node_load_sizes(n);
    n->cctx = n->writable ? b2f_cctx_new(n->frame) : NULL;
}

static void set_location(b2fs_node *n, int dirfd, const char *name)
{
    int d = dirfd >= 0 ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0) : -1;
    char *nm = name ? strdup(name) : NULL;
    if (n->dirfd >= 0)
        close(n->dirfd);
    free(n->name);
    n->dirfd = nm ? d : -1;
    n->name = nm;
    if (!nm && d >= 0)
        close(d);
}

static b2fs_node *node_alloc(int fd, const char *path)
{
    b2fs_node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->fd = fd;
    n->dirfd = -1;
    n->path = strdup(path ? path : "?");
    pthread_rwlock_init(&n->lock, NULL);
    pthread_mutex_init(&n->ra_lock, NULL);
    pthread_mutex_init(&n->job_lock, NULL);
    pthread_cond_init(&n->job_cond, NULL);
    n->ra_done = -1;
    n->bad_logged = -1;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        n->dev = st.st_dev;
        n->ino = st.st_ino;
    }
    node_new_gen(n);
    return n;
}

void node_drop_spare_cctx(b2fs_node *n)
{
    while (n->nspare)
        b2_cctx_free(n->spare_cctx[--n->nspare]);
}

void node_destroy(b2fs_node *n)
{
    for (int i = 0; i < n->ndirty; i++)
        free(n->dirty[i].img - B2FS_IMG_ROOM);
    free(n->dirty);
    free(n->touched);
    free(n->view);
    node_drop_spare_cctx(n);
    if (n->cctx)
        b2_cctx_free(n->cctx);
    if (n->frame)
        b2f_close(n->frame);
    close(n->fd);
    if (n->dirfd >= 0)
        close(n->dirfd);
    free(n->name);
    free(n->path);
    pthread_rwlock_destroy(&n->lock);
    pthread_mutex_destroy(&n->ra_lock);
    pthread_mutex_destroy(&n->job_lock);
    pthread_cond_destroy(&n->job_cond);
    free(n);
}

/* The bucket list under n's dev and ino: with table_lock held. */
static void bucket_add(b2fs_node *n)
{
    size_t b = bucket_of(n->dev, n->ino);
    n->next = buckets[b];
    buckets[b] = n;
}

/* Takes n out of its bucket list; returns whether it was in it. With table_lock held. */
static int bucket_remove(b2fs_node *n)
{
    b2fs_node **pp = &buckets[bucket_of(n->dev, n->ino)];
    while (*pp && *pp != n)
        pp = &(*pp)->next;
    if (!*pp)
        return 0;
    *pp = n->next;
    return 1;
}

/* Inserts n unless a node for the same inode got there first (then returns that one,
 * referenced, and frees n). Called with table_lock held. */
static b2fs_node *insert_locked(b2fs_node *n)
{
    size_t b = bucket_of(n->dev, n->ino);
    for (b2fs_node *o = buckets[b]; o; o = o->next) {
        if (o->dev == n->dev && o->ino == n->ino) {
            if (o->refs++ == 0)
                idle_unlink(o);
            node_destroy(n);
            return o;
        }
    }
    n->refs = 1;
    bucket_add(n);
    return n;
}

static b2fs_node *find_locked(dev_t dev, ino_t ino)
{
    for (b2fs_node *o = buckets[bucket_of(dev, ino)]; o; o = o->next)
        if (o->dev == dev && o->ino == ino)
            return o;
    return NULL;
}

b2fs_node *node_find(dev_t dev, ino_t ino)
{
    pthread_mutex_lock(&table_lock);
    b2fs_node *n = find_locked(dev, ino);
    if (n && n->refs++ == 0)
        idle_unlink(n);
    pthread_mutex_unlock(&table_lock);
    return n;
}

void node_ref(b2fs_node *n)
{
    pthread_mutex_lock(&table_lock);
    n->refs++;
    pthread_mutex_unlock(&table_lock);
}

int node_put_shared(b2fs_node *n)
{
    pthread_mutex_lock(&table_lock);
    int shared = n->refs > 1;
    if (shared)
        n->refs--;
    pthread_mutex_unlock(&table_lock);
    return shared;
}

void node_refresh(b2fs_node *n)
{
    struct stat st;
    if (fstat(n->fd, &st) < 0)
        return;
    if (st.st_mtim.tv_sec == n->mtime.tv_sec && st.st_mtim.tv_nsec == n->mtime.tv_nsec &&
        st.st_size == n->bsize)
        return;
    n->cached_ok = 0;
    if (node_has_changes(n))
        return; /* our own uncommitted changes win; the commit will say if that fails */
    if (!n->frame) {
        node_open_frame(n);
    } else {
        char err[160] = "";
        int r = b2f_refresh(n->frame, err, sizeof err);
        if (r < 0)
            b2fs_log(LOG_ERR, "%s: changed on disk and does not read: %s%s%s", n->path,
                     b2f_strerror(r), err[0] ? ": " : "", err);
        else
            node_load_sizes(n);
    }
    node_new_gen(n);
    n->mtime = st.st_mtim;
    n->bsize = st.st_size;
}

int node_has_changes(const b2fs_node *n)
{
    return n->ndirty || n->njobs || n->changed || (n->frame && n->size != n->fnbytes);
}

static int open_node(const char *path, const b2fs_loc *loc, b2fs_node **out);

int node_get(const char *path, const b2fs_loc *loc, b2fs_node **out)
{
    b2fs_node *n = node_find(loc->st.st_dev, loc->st.st_ino);
    if (n) {
        pthread_rwlock_wrlock(&n->lock);
        node_refresh(n);
        pthread_rwlock_unlock(&n->lock);
        *out = n;
        return 0;
    }
    for (int tries = 0;; tries++) {
        int r = open_node(path, loc, out);
        if (r != -EAGAIN || tries == 8)
            return r == -EAGAIN ? -ESTALE : r;
    }
}

/* node_get's opening of a node not in the table: -EAGAIN when the file it opened was
 * replaced (compaction renamed a new one over it) before it could be registered: the
 * caller opens the name again. */
static int open_node(const char *path, const b2fs_loc *loc, b2fs_node **out)
{
    b2fs_node *n;
    int want_rw = loc->kind == B2FS_FRAME && !b2fs_cfg.ro;
    int fd = backing_open_frame(loc->dirfd, loc->name, want_rw ? O_RDWR : O_RDONLY);
    if (fd < 0 && want_rw && (fd == -EACCES || fd == -EROFS || fd == -EPERM)) {
        want_rw = 0;
        fd = backing_open_frame(loc->dirfd, loc->name, O_RDONLY);
    }
    if (fd < 0)
        return fd;
    char *bp = loc_backing_path(path, loc, NULL);
    n = node_alloc(fd, bp);
    free(bp);
    if (!n) {
        close(fd);
        return -ENOMEM;
    }
    n->kind = loc->kind;
    n->writable = want_rw;
    set_location(n, loc->dirfd, loc->name);
    node_stamp(n); /* before reading: a commit by another mount after it shows as a change */
    node_open_frame(n);
    n->stored_marked = n->frame && n->writable && backing_stored_marked(fd);
    /* Under the table lock, as node_rename_over renames and moves a node: either the
     * file is still the one at the name (a node of it is found, or this one is the first)
     * or it was replaced, and what replaced it is opened instead. Without this, a file
     * opened just before a compaction got a second node, whose commits merged whole
     * chunks over the first one's. */
    struct stat st;
    pthread_mutex_lock(&table_lock);
    if (fstat(fd, &st) == 0 && st.st_nlink == 0) {
        pthread_mutex_unlock(&table_lock);
        node_destroy(n);
        return -EAGAIN;
    }
    *out = insert_locked(n);
    pthread_mutex_unlock(&table_lock);
    return 0;
}

int node_adopt(int fd, b2_frame *f, const char *bpath, int dirfd, const char *name,
               b2fs_node **out)
{
    b2fs_node *n = node_alloc(fd, bpath);
    if (!n)
        return -ENOMEM;
    set_location(n, dirfd, name);
    n->kind = B2FS_FRAME;
    n->frame = f;
    n->writable = 1;
    node_load_sizes(n);
    n->cctx = n->writable ? b2f_cctx_new(f) : NULL;
    node_stamp(n);
    pthread_mutex_lock(&table_lock);
    *out = insert_locked(n);
    pthread_mutex_unlock(&table_lock);
    return 0;
}

int node_rename_in_place(b2fs_node *n, const char *name)
{
    if (n->dirfd < 0 || !n->name)
        return -ENOENT;
    if (renameat2(n->dirfd, n->name, n->dirfd, name, RENAME_NOREPLACE) < 0)
        return -errno;
    set_location(n, n->dirfd, name);
    return 0;
}

void node_moved(dev_t dev, ino_t ino, int dirfd, const char *name)
{
    b2fs_node *n = node_find(dev, ino);
    if (!n)
        return;
    pthread_rwlock_wrlock(&n->lock);
    set_location(n, dirfd, name);
    pthread_rwlock_unlock(&n->lock);
    node_put(n);
}

static void rekey_locked(b2fs_node *n, dev_t dev, ino_t ino)
{
    int listed = bucket_remove(n);
    if (rekey_hook && n->dev == dev && n->ino != ino)
        rekey_hook(dev, n->ino, ino);
    n->dev = dev;
    n->ino = ino;
    if (listed)
        bucket_add(n);
}

void node_rekey(b2fs_node *n, dev_t dev, ino_t ino)
{
    pthread_mutex_lock(&table_lock);
    rekey_locked(n, dev, ino);
    pthread_mutex_unlock(&table_lock);
}

int node_rename_over(b2fs_node *n, int dirfd, const char *tmp, const char *name, int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    pthread_mutex_lock(&table_lock);
    int r = renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
    if (r == 0)
        rekey_locked(n, st.st_dev, st.st_ino);
    pthread_mutex_unlock(&table_lock);
    return r;
}

int node_swap_to_plain(b2fs_node *n, const char *plain, const void *buf, size_t len)
{
    struct stat st;
    pthread_mutex_lock(&table_lock);
    int r = n->refs != 1 ? -EBUSY : 0;
    /* n's file still under its name (a rename through the mount may have moved it) */
    if (r == 0 && (fstatat(n->dirfd, n->name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                   st.st_ino != n->ino || st.st_dev != n->dev))
        r = -ESTALE;
    /* a second name first (the frame still shows: suffixed names win), so that a failure
     * before the contents go in leaves the frame as it was */
    if (r == 0 && linkat(n->dirfd, n->name, n->dirfd, plain, 0) < 0)
        r = -errno;
    int changed = 0;
    if (r == 0) {
        /* the contents over the frame's bytes, then the file cut to them if it was longer
         * (st: its size now): truncated to 0 first, ext4 would write the file out at its
         * close */
        changed = 1;
        r = b2f_pwrite_all(n->fd, buf, len, 0);
        if (r == 0 && st.st_size > (off_t)len && ftruncate(n->fd, (off_t)len) < 0)
            r = -errno;
        if (r == 0 && unlinkat(n->dirfd, n->name, 0) < 0)
            r = -errno;
    }
    if (changed) {
        /* the file is no frame any more: out of the table, so that no call finds it */
        bucket_remove(n);
        n->unlisted = 1;
        set_location(n, n->dirfd, plain);
    }
    pthread_mutex_unlock(&table_lock);
    return changed && r < 0 ? 1 : r;
}

/* The last reference is about to go: an idle node keeps its frame, not its compression
 * contexts (about 1.4 MiB each) nor the chunk layouts reads cached (0.25 MiB a GiB
 * read): with up to MAX_IDLE nodes kept, writing or reading many files grew the daemon.
 * Returns whether the file is deleted (or replaced by another mount's compaction): such
 * a node is not kept. */
static int trim_for_idle(b2fs_node *n)
{
    pthread_rwlock_wrlock(&n->lock);
    node_drop_spare_cctx(n);
    if (n->frame)
        b2f_forget_layouts(n->frame);
    struct stat st;
    int gone = fstat(n->fd, &st) == 0 && st.st_nlink == 0;
    pthread_rwlock_unlock(&n->lock);
    return gone;
}

void node_put(b2fs_node *n)
{
    pthread_mutex_lock(&table_lock);
    int last = n->refs == 1;
    pthread_mutex_unlock(&table_lock);
    /* (another thread may take a reference meanwhile: trimming is harmless then) */
    int gone = last ? trim_for_idle(n) : 0;
    b2fs_node *evict = NULL;
    pthread_mutex_lock(&table_lock);
    if (--n->refs == 0 && n->unlisted) {
        evict = n;   /* (in no bucket, nor in the idle list) */
    } else if (n->refs == 0) {
        idle_push(n);
        if (gone)
            evict = n;
        else if (nidle > MAX_IDLE)
            evict = idle_tail;
        if (evict) {
            idle_unlink(evict);
            bucket_remove(evict);
        }
    }
    pthread_mutex_unlock(&table_lock);
    if (evict) {
        if (retire_hook)
            retire_hook(evict);
        else
            node_destroy(evict);
    }
}

void node_each(void (*fn)(b2fs_node *n, void *arg), void *arg)
{
    /* references under the table lock, calls without it (fn may commit and compact,
     * which moves the node in the table) */
    b2fs_node **all = NULL;
    size_t count = 0, cap = 0;
    pthread_mutex_lock(&table_lock);
    for (size_t b = 0; b < NBUCKETS; b++) {
        for (b2fs_node *n = buckets[b]; n; n = n->next) {
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                b2fs_node **na = realloc(all, ncap * sizeof *na);
                if (!na)
                    break;
                all = na;
                cap = ncap;
            }
            if (n->refs++ == 0)
                idle_unlink(n);
            all[count++] = n;
        }
    }
    pthread_mutex_unlock(&table_lock);
    for (size_t i = 0; i < count; i++) {
        fn(all[i], arg);
        node_put(all[i]);
    }
    free(all);
}

void node_fill_stat(b2fs_node *n, struct stat *st)
{
    fstat(n->fd, st);
    st->st_size = (off_t)layout_size(n);
    if (n->kind == B2FS_BLP || !n->writable)
        st->st_mode &= ~(mode_t)0222;
    if (node_has_changes(n)) {
        st->st_mtim = n->written;
        st->st_ctim = n->written;
    }
    if (n->times_pending) {
        if (n->times_set[0].tv_nsec != UTIME_OMIT)
            st->st_atim = n->times_set[0];
        if (n->times_set[1].tv_nsec != UTIME_OMIT)
            st->st_mtim = n->times_set[1];
    }
}
