/* The table of open frame files, keyed by backing inode so that renames and hard links
 * need no bookkeeping. Unused nodes stay open (idle, LRU) for a while so that `ls -l`
 * and repeated opens do not parse the frame again. */
#include "fs/b2fs.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/xattr.h>
#include <unistd.h>

#define NBUCKETS 1024
#define MAX_IDLE 128
#define TRIM_AFTER_COMMIT ((size_t)8 << 20) /* committed bytes that make a commit trim the heap */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static b2fs_node *buckets[NBUCKETS];
static b2fs_node *idle_head, *idle_tail; /* most recent first */
static int nidle;
static uint64_t next_gen = 1;

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

void node_load_sizes(b2fs_node *n)
{
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    n->size = n->fnbytes = (uint64_t)fs.nbytes;
    n->chunksize = fs.chunksize;
    n->writable = fs.writable && fs.kind == B2F_KIND_FRAME;
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

void node_set_path(b2fs_node *n, const char *path)
{
    char *p = strdup(path);
    if (p) {
        free(n->path);
        n->path = p;
    }
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

static void node_free(b2fs_node *n)
{
    node_commit_behind_end(n, 1);
    node_harvest(n, 1);
    node_drop_cctx(n);
    for (int i = 0; i < n->ndirty; i++)
        free(n->dirty[i].img);
    n->ndirty = 0;
    n->staged = 0;
    node_account(n);
    free(n->dirty);
    if (n->cctx)
        b2_cctx_free(n->cctx);
    if (n->frame)
        b2f_close(n->frame);
    close(n->fd);
    if (n->dirfd >= 0)
        close(n->dirfd);
    free(n->name);
    free(n->path);
    free(n->touched);
    pthread_rwlock_destroy(&n->lock);
    pthread_mutex_destroy(&n->ra_lock);
    pthread_mutex_destroy(&n->job_lock);
    pthread_cond_destroy(&n->job_cond);
    free(n);
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
            node_free(n);
            return o;
        }
    }
    n->refs = 1;
    n->next = buckets[b];
    buckets[b] = n;
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

void node_refresh(b2fs_node *n)
{
    struct stat st;
    if (fstat(n->fd, &st) < 0)
        return;
    if (st.st_mtim.tv_sec == n->mtime.tv_sec && st.st_mtim.tv_nsec == n->mtime.tv_nsec &&
        st.st_size == n->bsize)
        return;
    n->cached_ok = 0;
    if (n->ndirty || n->njobs || n->changed)
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

static char *backing_path(const char *path, const b2fs_loc *loc)
{
    char *out = NULL;
    const char *slash = path ? strrchr(path, '/') : NULL;
    int plen = slash ? (int)(slash - path) : 0;
    if (asprintf(&out, "%s%.*s/%s", b2fs_cfg.backing, plen, path ? path : "", loc->name) < 0)
        return NULL;
    return out;
}

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
    int want_rw = loc->kind == B2FS_FRAME && !b2fs_cfg.ro;
    int fd = openat(loc->dirfd, loc->name, (want_rw ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && want_rw && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        want_rw = 0;
        fd = openat(loc->dirfd, loc->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0)
        return -errno;
    char *bp = backing_path(path, loc);
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
    pthread_mutex_lock(&table_lock);
    *out = insert_locked(n);
    pthread_mutex_unlock(&table_lock);
    return 0;
}

int node_adopt(int fd, b2_frame *f, const char *path, int dirfd, const char *name,
               b2fs_node **out)
{
    b2fs_node *n = node_alloc(fd, path);
    if (!n)
        return -ENOMEM;
    set_location(n, dirfd, name);
    n->kind = B2FS_FRAME;
    n->frame = f;
    node_load_sizes(n);
    n->cctx = n->writable ? b2f_cctx_new(f) : NULL;
    node_stamp(n);
    pthread_mutex_lock(&table_lock);
    *out = insert_locked(n);
    pthread_mutex_unlock(&table_lock);
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

/* The node's file got a new inode (compaction): moves it in the table. */
void node_rekey(b2fs_node *n, dev_t dev, ino_t ino)
{
    pthread_mutex_lock(&table_lock);
    b2fs_node **pp = &buckets[bucket_of(n->dev, n->ino)];
    while (*pp && *pp != n)
        pp = &(*pp)->next;
    int listed = *pp != NULL;
    if (listed)
        *pp = n->next;
    n->dev = dev;
    n->ino = ino;
    if (listed) {
        size_t b = bucket_of(dev, ino);
        n->next = buckets[b];
        buckets[b] = n;
    }
    pthread_mutex_unlock(&table_lock);
}

static void copy_xattrs(int from, int to)
{
    char names[65536], val[65536];
    ssize_t len = flistxattr(from, names, sizeof names);
    for (ssize_t i = 0; len > 0 && i < len; i += (ssize_t)strlen(names + i) + 1) {
        ssize_t vl = fgetxattr(from, names + i, val, sizeof val);
        if (vl >= 0)
            fsetxattr(to, names + i, val, (size_t)vl, 0);
    }
}

/* The rename reaches the disk: a later fsync of the new file then survives a crash. */
static void sync_dir(int dirfd)
{
    int d = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
        fsync(d);
        close(d);
    }
}

int node_replace_with(b2fs_node *n, node_writer write, const char *what)
{
    node_commit_behind_end(n, 1);
    struct stat st;
    if (n->dirfd < 0 || fstatat(n->dirfd, n->name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        st.st_ino != n->ino || st.st_dev != n->dev)
        return -ESTALE;   /* deleted or replaced: nothing to rename over */
    static unsigned long counter;
    char tmp[64], err[200] = "";
    snprintf(tmp, sizeof tmp, ".b2fs-tmp-%d-r%lu", (int)getpid(),
             __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
    int fd = openat(n->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    st.st_mode & 07777);
    if (fd < 0) {
        int e = errno;
        b2fs_log(LOG_WARNING, "%s: %s: cannot create %s: %s", n->path, what, tmp, strerror(e));
        return -e;
    }
    /* says "in use" to other mounts' stale-temporary cleanup (paths.c); it becomes the
     * frame's commit lock after the rename, which the caller releases */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    fcntl(fd, F_OFD_SETLK, &fl);
    if (fchown(fd, st.st_uid, st.st_gid) < 0 && geteuid() == 0)
        b2fs_log(LOG_WARNING, "%s: %s: chown: %s", n->path, what, strerror(errno));
    copy_xattrs(n->fd, fd);
    /* tells other mounts with an older file of this line open where it went (share.c) */
    char from[64];
    node_lineage(n, from, sizeof from);
    fsetxattr(fd, B2FS_XATTR_FROM, from, strlen(from), 0);
    b2_frame *nf = NULL;
    int r = write(n->frame, fd, err, sizeof err);
    if (r == 0 && fdatasync(fd) < 0)
        r = -errno;
    if (r == 0)
        r = b2f_open(&nf, fd, B2F_RDWR, NULL, err, sizeof err);
    if (r == 0 && renameat(n->dirfd, tmp, n->dirfd, n->name) < 0)
        r = -errno;
    if (r < 0) {
        b2fs_log(LOG_WARNING, "%s: %s failed: %s%s%s", n->path, what, b2f_strerror(r),
                 err[0] ? ": " : "", err);
        if (nf)
            b2f_close(nf);
        unlinkat(n->dirfd, tmp, 0);
        close(fd);
        return b2fs_errno(r);
    }
    sync_dir(n->dirfd);
    b2f_close(n->frame);
    close(n->fd);
    n->frame = nf;
    n->fd = fd;
    struct stat nst;
    if (fstat(fd, &nst) == 0)
        node_rekey(n, nst.st_dev, nst.st_ino);
    return 0;
}

/* When more than half of the frame file is space no chunk uses: compaction. */
static void maybe_compact(b2fs_node *n)
{
    b2f_stat fs;
    b2f_stat_get(n->frame, &fs);
    int64_t dead = b2f_dead_bytes(n->frame);
    if (dead >= (1 << 20) && dead * 2 >= fs.file_len)
        node_replace_with(n, b2f_compact_into, "compaction");
}

/* Bytes committed since the heap was last trimmed. */
static size_t untrimmed;

void node_note_committed(size_t bytes)
{
    __atomic_add_fetch(&untrimmed, bytes, __ATOMIC_RELAXED);
}

static int commit(b2fs_node *n, int durable)
{
    if (!n->frame || !n->writable)
        return 0;
    /* one that failed left everything staged: this commit tries again, and says */
    node_commit_behind_end(n, 1);
    int r = node_flush_dirty(n);
    if (r < 0)
        return r;
    if (!n->changed) {
        if (durable && fdatasync(n->fd) < 0)
            return -errno;
        return 0;
    }
    char err[200] = "";
    size_t staged = n->staged;
    /* other b2fs mounts of the same backing directory: one commit at a time, each on
     * top of what the others committed (node_rebase_if_changed may switch n->fd to
     * the file that replaced ours; closing the old one releases its lock) */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    fcntl(n->fd, F_OFD_SETLKW, &fl);
    r = node_rebase_if_changed(n, 1);
    if (r == 0) {
        /* an empty frame with new vlmetalayers cannot be committed in place atomically */
        r = !b2f_commit_is_atomic(n->frame) &&
                    node_replace_with(n, b2f_compact_into, "rewriting the file") == 0
                ? 0
                : b2f_commit(n->frame, durable, err, sizeof err);
        if (r < 0) {
            b2fs_log(LOG_ERR, "%s: commit failed: %s%s%s", n->path, b2f_strerror(r),
                     err[0] ? ": " : "", err);
            r = b2fs_errno(r);
        } else {
            n->changed = 0;
            n->staged = 0;
            node_forget_changes(n);
            node_account(n);
            maybe_compact(n);
            node_stamp(n);
        }
    }
    fl.l_type = F_UNLCK;
    fcntl(n->fd, F_OFD_SETLK, &fl);
    if (r == 0)
        node_note_committed(staged);
    return r;
}

int node_commit(b2fs_node *n, int durable)
{
    int r = commit(n, durable);
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

int node_commit_while_writing(b2fs_node *n)
{
    return commit(n, 0);
}

void node_put(b2fs_node *n)
{
    b2fs_node *evict = NULL;
    pthread_mutex_lock(&table_lock);
    if (--n->refs == 0) {
        /* an idle node keeps its frame, not its compression contexts (about 1.4 MiB
         * each) nor the chunk layouts reads cached (0.25 MiB a GiB read): with up to
         * MAX_IDLE nodes kept, writing or reading many files grew the daemon */
        node_drop_cctx(n);
        if (n->frame)
            b2f_forget_layouts(n->frame);
        idle_push(n);
        struct stat st;
        /* a file deleted (or replaced by another mount's compaction) is not kept open */
        if (fstat(n->fd, &st) == 0 && st.st_nlink == 0) {
            evict = n;
        } else if (nidle > MAX_IDLE) {
            evict = idle_tail;
        }
        if (evict) {
            idle_unlink(evict);
            b2fs_node **pp = &buckets[bucket_of(evict->dev, evict->ino)];
            while (*pp != evict)
                pp = &(*pp)->next;
            *pp = evict->next;
        }
    }
    pthread_mutex_unlock(&table_lock);
    if (evict) {
        if (evict->ndirty || evict->njobs || evict->changed) {
            if (node_commit(evict, 0) < 0)
                b2fs_log(LOG_ERR, "%s: uncommitted changes lost", evict->path);
        }
        node_free(evict);
    }
}

void node_commit_all(void)
{
    /* take references under the table lock, commit without it (commit may compact,
     * which moves the node in the table) */
    b2fs_node **all = NULL;
    size_t count = 0, cap = 0;
    pthread_mutex_lock(&table_lock);
    for (size_t b = 0; b < NBUCKETS; b++) {
        for (b2fs_node *n = buckets[b]; n; n = n->next) {
            if (count == cap) {
                cap = cap ? cap * 2 : 64;
                b2fs_node **na = realloc(all, cap * sizeof *na);
                if (!na)
                    break;
                all = na;
            }
            if (count < cap) {
                if (n->refs++ == 0)
                    idle_unlink(n);
                all[count++] = n;
            }
        }
    }
    pthread_mutex_unlock(&table_lock);
    for (size_t i = 0; i < count; i++) {
        b2fs_node *n = all[i];
        pthread_rwlock_wrlock(&n->lock);
        if (n->ndirty || n->njobs || n->changed)
            node_commit(n, 1);
        pthread_rwlock_unlock(&n->lock);
        node_put(n);
    }
    free(all);
}

void node_fill_stat(b2fs_node *n, struct stat *st)
{
    fstat(n->fd, st);
    st->st_size = (off_t)n->size;
    if (n->kind == B2FS_BLP || !n->writable)
        st->st_mode &= ~(mode_t)0222;
}
