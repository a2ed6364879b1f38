/* The FUSE callbacks (high-level path API). Paths are mapped by paths.c; frame files
 * go through nodes (node.c, io.c), everything else is passed through to BACKING. */
#include "fs/b2fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <unistd.h>

#include "fs/ops.h"

typedef struct handle {
    int kind;          /* B2FS_PLAIN: fd; else node */
    int fd;
    b2fs_node *node;
} handle;

static handle *fh_of(struct fuse_file_info *fi)
{
    return fi ? (handle *)(uintptr_t)fi->fh : NULL;
}

/* Resolves path and fails with ENOENT when nothing is visible there. */
static int resolve_existing(const char *path, b2fs_loc *loc)
{
    if (!path)
        return -ENOENT;
    int r = loc_resolve(path, loc);
    if (r == 0 && loc->kind == B2FS_NONE) {
        loc_done(loc);
        r = -ENOENT;
    }
    return r;
}

/* Stat of a frame file. st_blksize is the FUSE request size, so that cp, cat and
 * friends move 1 MiB per call instead of 128 KiB (fewer requests, whole chunks). */
static void frame_stat(b2fs_node *n, struct stat *st)
{
    pthread_rwlock_rdlock(&n->lock);
    node_fill_stat(n, st);
    pthread_rwlock_unlock(&n->lock);
    st->st_blksize = B2FS_IO_SIZE;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h) {
        if (h->kind == B2FS_PLAIN)
            return fstat(h->fd, st) < 0 ? -errno : 0;
        frame_stat(h->node, st);
        return 0;
    }
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    if (loc.kind == B2FS_PLAIN) {
        *st = loc.st;
    } else {
        b2fs_node *n;
        r = node_get(path, &loc, &n);
        if (r == 0) {
            frame_stat(n, st);
            node_put(n);
        }
    }
    loc_done(&loc);
    return r;
}

static int op_readlink(const char *path, char *buf, size_t size)
{
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    ssize_t len = readlinkat(loc.dirfd, loc.name, buf, size - 1);
    r = len < 0 ? -errno : 0;
    if (len >= 0)
        buf[len] = 0;
    loc_done(&loc);
    return r;
}

static void own(int dirfd, const char *name)
{
    struct fuse_context *cx = fuse_get_context();
    if (cx && geteuid() == 0)
        if (fchownat(dirfd, name, cx->uid, cx->gid, AT_SYMLINK_NOFOLLOW) < 0)
            b2fs_log(LOG_WARNING, "chown of new %s: %s", name, strerror(errno));
}

/* For calls that make a new name: the parent exists, the name does not. */
static int resolve_new(const char *path, b2fs_loc *loc)
{
    int r = loc_resolve(path, loc);
    if (r)
        return r;
    if (loc->kind != B2FS_NONE || name_is_temp(loc->mname) || !strcmp(loc->mname, ".") ||
        !strcmp(loc->mname, "..")) {
        loc_done(loc);
        return -EEXIST;
    }
    return 0;
}

static int op_mkdir(const char *path, mode_t mode)
{
    b2fs_loc loc;
    int r = resolve_new(path, &loc);
    if (r)
        return r;
    r = mkdirat(loc.dirfd, loc.mname, mode) < 0 ? -errno : 0;
    if (!r)
        own(loc.dirfd, loc.mname);
    loc_done(&loc);
    return r;
}

static int op_symlink(const char *target, const char *path)
{
    b2fs_loc loc;
    int r = resolve_new(path, &loc);
    if (r)
        return r;
    r = symlinkat(target, loc.dirfd, loc.mname) < 0 ? -errno : 0;
    if (!r)
        own(loc.dirfd, loc.mname);
    loc_done(&loc);
    return r;
}

static int op_unlink(const char *path)
{
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    if (S_ISDIR(loc.st.st_mode))
        r = -EISDIR;
    else
        r = unlinkat(loc.dirfd, loc.name, 0) < 0 ? -errno : 0;
    loc_done(&loc);
    return r;
}

static int op_rmdir(const char *path)
{
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    r = unlinkat(loc.dirfd, loc.name, AT_REMOVEDIR) < 0 ? -errno : 0;
    loc_done(&loc);
    return r;
}

/* After a rename to `to`, nothing but the renamed entry may show under that name:
 * entries that would shadow it (a frame over a plain file) are removed. */
static void unshadow(const char *to, const char *kept)
{
    for (int i = 0; i < 5; i++) {
        b2fs_loc loc;
        if (loc_resolve(to, &loc))
            return;
        int done = loc.kind == B2FS_NONE || !strcmp(loc.name, kept) || !S_ISREG(loc.st.st_mode) ||
                   unlinkat(loc.dirfd, loc.name, 0) < 0;
        loc_done(&loc);
        if (done)
            return;
    }
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
    if (flags & RENAME_EXCHANGE)
        return -EINVAL;
    b2fs_loc src, dst;
    int r = resolve_existing(from, &src);
    if (r)
        return r;
    r = loc_resolve(to, &dst);
    if (r) {
        loc_done(&src);
        return r;
    }
    char newname[300];
    if (dst.kind != B2FS_NONE && (flags & RENAME_NOREPLACE))
        r = -EEXIST;
    else if (dst.kind != B2FS_NONE && S_ISDIR(dst.st.st_mode) && !S_ISDIR(src.st.st_mode))
        r = -EISDIR;
    else if (dst.kind != B2FS_NONE && !S_ISDIR(dst.st.st_mode) && S_ISDIR(src.st.st_mode))
        r = -ENOTDIR;
    else if (name_is_temp(dst.mname))
        r = -EINVAL;
    else
        r = name_with_suffix(newname, sizeof newname, dst.mname,
                             src.kind == B2FS_PLAIN ? "" : kind_suffix(src.name));
    if (!r && renameat(src.dirfd, src.name, dst.dirfd, newname) < 0)
        r = -errno;
    if (!r) {
        if (dst.kind != B2FS_NONE && strcmp(dst.name, newname) && S_ISREG(dst.st.st_mode))
            unlinkat(dst.dirfd, dst.name, 0);
        unshadow(to, newname);
        if (src.kind == B2FS_FRAME)
            node_moved(src.st.st_dev, src.st.st_ino, dst.dirfd, newname);
    }
    loc_done(&src);
    loc_done(&dst);
    return r;
}

static int op_link(const char *from, const char *to)
{
    b2fs_loc src, dst;
    int r = resolve_existing(from, &src);
    if (r)
        return r;
    r = resolve_new(to, &dst);
    if (r) {
        loc_done(&src);
        return r;
    }
    char newname[300];
    r = name_with_suffix(newname, sizeof newname, dst.mname,
                         src.kind == B2FS_PLAIN ? "" : kind_suffix(src.name));
    if (!r && linkat(src.dirfd, src.name, dst.dirfd, newname, 0) < 0)
        r = -errno;
    loc_done(&src);
    loc_done(&dst);
    return r;
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h) {
        int fd = h->kind == B2FS_PLAIN ? h->fd : h->node->fd;
        return fchmod(fd, mode) < 0 ? -errno : 0;
    }
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    /* fchmodat cannot refuse to follow a symlink: open the entry itself instead */
    int fd = openat(loc.dirfd, loc.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        r = errno == ELOOP ? -EOPNOTSUPP : -errno;
    } else {
        r = fchmod(fd, mode) < 0 ? -errno : 0;
        close(fd);
    }
    loc_done(&loc);
    return r;
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h) {
        int fd = h->kind == B2FS_PLAIN ? h->fd : h->node->fd;
        return fchown(fd, uid, gid) < 0 ? -errno : 0;
    }
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    r = fchownat(loc.dirfd, loc.name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
    loc_done(&loc);
    return r;
}

/* Runs fn on the node of a frame: from the open handle, or looked up by path. */
static int with_node(const char *path, struct fuse_file_info *fi, int write,
                     int (*fn)(b2fs_node *n, void *arg), void *arg,
                     int (*plain)(int dirfd, const char *name, int fd, void *arg))
{
    handle *h = fh_of(fi);
    b2fs_node *n = NULL;
    b2fs_loc loc = {.dirfd = -1};
    int r;
    if (h) {
        if (h->kind == B2FS_PLAIN)
            return plain(-1, NULL, h->fd, arg);
        n = h->node;
        node_ref(n);
    } else {
        r = resolve_existing(path, &loc);
        if (r)
            return r;
        if (loc.kind == B2FS_PLAIN) {
            r = plain(loc.dirfd, loc.name, -1, arg);
            loc_done(&loc);
            return r;
        }
        r = node_get(path, &loc, &n);
        if (r) {
            loc_done(&loc);
            return r;
        }
    }
    if (write)
        pthread_rwlock_wrlock(&n->lock);
    else
        pthread_rwlock_rdlock(&n->lock);
    r = fn(n, arg);
    /* without an open handle nobody will flush: commit now */
    if (write && !h && r >= 0)
        r = node_commit(n, 0);
    pthread_rwlock_unlock(&n->lock);
    node_put(n);
    loc_done(&loc);
    return r;
}

static int truncate_node(b2fs_node *n, void *arg)
{
    return node_truncate(n, *(uint64_t *)arg);
}

static int truncate_plain(int dirfd, const char *name, int fd, void *arg)
{
    off_t size = (off_t)*(uint64_t *)arg;
    if (fd >= 0)
        return ftruncate(fd, size) < 0 ? -errno : 0;
    fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int r = ftruncate(fd, size) < 0 ? -errno : 0;
    close(fd);
    return r;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (size < 0)
        return -EINVAL;
    uint64_t s = (uint64_t)size;
    return with_node(path, fi, 1, truncate_node, &s, truncate_plain);
}

static int commit_node(b2fs_node *n, void *arg)
{
    return node_commit(n, 0);
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    /* commit first, or the commit would overwrite the times being set (cp -p, tar) */
    handle *h = fh_of(fi);
    if (h && h->kind != B2FS_PLAIN) {
        pthread_rwlock_wrlock(&h->node->lock);
        int r = node_commit(h->node, 0);
        if (!r && futimens(h->node->fd, tv) < 0)
            r = -errno;
        pthread_rwlock_unlock(&h->node->lock);
        return r;
    }
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    if (loc.kind != B2FS_PLAIN) {
        b2fs_node *n = node_find(loc.st.st_dev, loc.st.st_ino);
        if (n) {
            pthread_rwlock_wrlock(&n->lock);
            commit_node(n, NULL);
            pthread_rwlock_unlock(&n->lock);
            node_put(n);
        }
    }
    r = utimensat(loc.dirfd, loc.name, tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
    loc_done(&loc);
    return r;
}

static int open_node(const char *path, b2fs_loc *loc, struct fuse_file_info *fi, b2fs_node *n)
{
    int acc = fi->flags & O_ACCMODE;
    pthread_rwlock_wrlock(&n->lock);
    int r = 0;
    if (!n->frame)
        r = -EIO; /* did not open: logged once with the reason */
    else if (acc != O_RDONLY && !n->writable)
        r = -EROFS;
    else if ((fi->flags & O_TRUNC) && acc != O_RDONLY)
        r = node_truncate(n, 0);
    fi->keep_cache = n->cached_ok;
    n->cached_ok = 1;
    pthread_rwlock_unlock(&n->lock);
    if (r)
        return r;
    handle *h = calloc(1, sizeof *h);
    if (!h)
        return -ENOMEM;
    h->kind = n->kind;
    h->fd = -1;
    h->node = n;
    fi->fh = (uint64_t)(uintptr_t)h;
    return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    if (loc.kind == B2FS_PLAIN) {
        int fd = openat(loc.dirfd, loc.name,
                        (fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY)) | O_NOFOLLOW | O_CLOEXEC);
        loc_done(&loc);
        if (fd < 0)
            return errno == ELOOP ? -EACCES : -errno;
        handle *h = calloc(1, sizeof *h);
        if (!h) {
            close(fd);
            return -ENOMEM;
        }
        h->kind = B2FS_PLAIN;
        h->fd = fd;
        fi->fh = (uint64_t)(uintptr_t)h;
        return 0;
    }
    b2fs_node *n;
    r = node_get(path, &loc, &n);
    if (r == 0) {
        r = open_node(path, &loc, fi, n);
        if (r)
            node_put(n);
    }
    loc_done(&loc);
    return r;
}

static unsigned long temp_counter;

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    b2fs_loc loc;
    int r = loc_resolve(path, &loc);
    if (r)
        return r;
    if (loc.kind != B2FS_NONE) {
        loc_done(&loc);
        if (fi->flags & O_EXCL)
            return -EEXIST;
        return op_open(path, fi);
    }
    if (name_is_temp(loc.mname)) {
        loc_done(&loc);
        return -EINVAL;
    }
    char name[300], tmp[64];
    r = name_with_suffix(name, sizeof name, loc.mname, ".b2frame");
    if (r) {
        loc_done(&loc);
        return r;
    }
    b2f_params p;
    b2fs_params_for_new(path, &p);
    snprintf(tmp, sizeof tmp, ".b2fs-tmp-%d-%lu", (int)getpid(),
             __atomic_add_fetch(&temp_counter, 1, __ATOMIC_RELAXED));
    int fd = openat(loc.dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
    if (fd < 0) {
        r = -errno;
        loc_done(&loc);
        return r;
    }
    own(loc.dirfd, tmp);
    b2_frame *f;
    char err[200] = "";
    r = b2f_create(&f, fd, &p, 0, NULL, NULL, NULL, NULL, err, sizeof err);
    if (r < 0) {
        b2fs_log(LOG_ERR, "%s: cannot create frame: %s%s%s", path, b2f_strerror(r),
                 err[0] ? ": " : "", err);
        r = b2fs_errno(r);
    } else if (renameat(loc.dirfd, tmp, loc.dirfd, name) < 0) {
        r = -errno;
        b2f_close(f);
    }
    if (r < 0) {
        unlinkat(loc.dirfd, tmp, 0);
        close(fd);
        loc_done(&loc);
        return r;
    }
    b2fs_node *n;
    char bpath[600];
    snprintf(bpath, sizeof bpath, "%s%.*s/%s", b2fs_cfg.backing,
             (int)(strrchr(path, '/') - path), path, name);
    r = node_adopt(fd, f, bpath, loc.dirfd, name, &n);
    loc_done(&loc);
    if (r)
        return r;
    fi->flags &= ~O_TRUNC;
    r = open_node(path, NULL, fi, n);
    if (r)
        node_put(n);
    return r;
}

static int op_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h->kind == B2FS_PLAIN) {
        ssize_t r = pread(h->fd, buf, size, off);
        return r < 0 ? -errno : (int)r;
    }
    node_check_shared(h->node);
    pthread_rwlock_rdlock(&h->node->lock);
    ssize_t r = node_read(h->node, buf, size, (uint64_t)off);
    pthread_rwlock_unlock(&h->node->lock);
    return (int)r;
}

/* Copies the next len bytes of a request's data (memory, or a pipe when the kernel
 * spliced the request) into dst. */
static int fill_from_bufvec(void *ctx, void *dst, size_t len)
{
    struct fuse_bufvec out = FUSE_BUFVEC_INIT(len);
    out.buf[0].mem = dst;
    ssize_t r = fuse_buf_copy(&out, ctx, 0);
    return r < 0 ? (int)r : (size_t)r == len ? 0 : -EIO;
}

static int op_write_buf(const char *path, struct fuse_bufvec *buf, off_t off,
                        struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    size_t size = fuse_buf_size(buf);
    if (h->kind == B2FS_PLAIN) {
        struct fuse_bufvec out = FUSE_BUFVEC_INIT(size);
        out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
        out.buf[0].fd = h->fd;
        out.buf[0].pos = off;
        return (int)fuse_buf_copy(&out, buf, 0);
    }
    pthread_rwlock_wrlock(&h->node->lock);
    ssize_t r = node_write_with(h->node, size, (uint64_t)off, fill_from_bufvec, buf);
    pthread_rwlock_unlock(&h->node->lock);
    return (int)r;
}

static int op_statfs(const char *path, struct statvfs *sv)
{
    return fstatvfs(b2fs_cfg.rootfd, sv) < 0 ? -errno : 0;
}

static int op_flush(const char *path, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h->kind == B2FS_PLAIN)
        return 0;
    pthread_rwlock_wrlock(&h->node->lock);
    int r = node_commit(h->node, 0);
    pthread_rwlock_unlock(&h->node->lock);
    return r;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h->kind == B2FS_PLAIN) {
        close(h->fd);
    } else {
        pthread_rwlock_wrlock(&h->node->lock);
        node_commit(h->node, 0);
        pthread_rwlock_unlock(&h->node->lock);
        node_put(h->node);
    }
    free(h);
    return 0;
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h->kind == B2FS_PLAIN)
        return (datasync ? fdatasync(h->fd) : fsync(h->fd)) < 0 ? -errno : 0;
    pthread_rwlock_wrlock(&h->node->lock);
    int r = node_commit(h->node, 1);
    pthread_rwlock_unlock(&h->node->lock);
    return r;
}

static int op_opendir(const char *path, struct fuse_file_info *fi)
{
    int fd = loc_open_dir(path);
    if (fd < 0)
        return fd;
    fi->fh = (uint64_t)fd;
    return 0;
}

struct fill_ctx {
    void *buf;
    fuse_fill_dir_t filler;
};

static int fill_one(void *p, const char *name)
{
    struct fill_ctx *fc = p;
    return fc->filler(fc->buf, name, NULL, 0, 0);
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    int fd = dup((int)fi->fh);
    if (fd < 0)
        return -errno;
    lseek(fd, 0, SEEK_SET);
    filler(buf, ".", NULL, 0, 0);
    filler(buf, "..", NULL, 0, 0);
    struct fill_ctx fc = {buf, filler};
    return dir_list(fd, fill_one, &fc);
}

static int op_releasedir(const char *path, struct fuse_file_info *fi)
{
    close((int)fi->fh);
    return 0;
}

static int op_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    return fsync((int)fi->fh) < 0 ? -errno : 0;
}

struct falloc {
    int mode;
    off_t off, len;
};

static int falloc_node(b2fs_node *n, void *arg)
{
    struct falloc *a = arg;
    uint64_t end = (uint64_t)a->off + (uint64_t)a->len;
    if (a->mode == 0)
        return end > n->size ? node_truncate(n, end) : 0;
    if (a->mode == FALLOC_FL_KEEP_SIZE)
        return 0;
    if (a->mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
        static const char zeros[65536];
        if (end > n->size)
            end = n->size;
        for (uint64_t pos = (uint64_t)a->off; pos < end;) {
            size_t take = end - pos < sizeof zeros ? (size_t)(end - pos) : sizeof zeros;
            ssize_t w = node_write(n, zeros, take, pos);
            if (w < 0)
                return (int)w;
            pos += (uint64_t)w;
        }
        return 0;
    }
    return -EOPNOTSUPP;
}

static int falloc_plain(int dirfd, const char *name, int fd, void *arg)
{
    struct falloc *a = arg;
    return fallocate(fd, a->mode, a->off, a->len) < 0 ? -errno : 0;
}

static int op_fallocate(const char *path, int mode, off_t off, off_t len,
                        struct fuse_file_info *fi)
{
    if (off < 0 || len <= 0)
        return -EINVAL;
    struct falloc a = {mode, off, len};
    return with_node(path, fi, 1, falloc_node, &a, falloc_plain);
}

static off_t op_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (!h)
        return -EBADF;
    if (h->kind == B2FS_PLAIN) {
        off_t r = lseek(h->fd, off, whence);
        return r < 0 ? -errno : r;
    }
    if (whence != SEEK_DATA && whence != SEEK_HOLE)
        return -EINVAL;
    pthread_rwlock_rdlock(&h->node->lock);
    off_t r = node_seek(h->node, off, whence);
    pthread_rwlock_unlock(&h->node->lock);
    return r;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    cfg->nullpath_ok = 1;
    cfg->hard_remove = 1;
    cfg->use_ino = 0;
    cfg->entry_timeout = 1;
    cfg->attr_timeout = 1;
    cfg->negative_timeout = 0;
    if (conn->max_write < B2FS_IO_SIZE)
        conn->max_write = B2FS_IO_SIZE;
    conn->max_readahead = B2FS_IO_SIZE;
    if (!b2fs_cfg.foreground)
        b2fs_log_to_syslog();
    bcache_init(b2fs_cfg.cache_size);
    wpool_init(b2fs_cfg.nthreads);
    b2fs_log(LOG_INFO, "mounted %s", b2fs_cfg.backing);
    return NULL;
}

static void op_destroy(void *data)
{
    node_commit_all();
    wpool_shutdown();
    bcache_shutdown();
    b2fs_log(LOG_INFO, "unmounted %s", b2fs_cfg.backing);
}

const struct fuse_operations b2fs_ops = {
    .getattr = op_getattr,
    .readlink = op_readlink,
    .mkdir = op_mkdir,
    .unlink = op_unlink,
    .rmdir = op_rmdir,
    .symlink = op_symlink,
    .rename = op_rename,
    .link = op_link,
    .chmod = op_chmod,
    .chown = op_chown,
    .truncate = op_truncate,
    .open = op_open,
    .read = op_read,
    .write_buf = op_write_buf,
    .statfs = op_statfs,
    .flush = op_flush,
    .release = op_release,
    .fsync = op_fsync,
    .setxattr = b2fs_setxattr,
    .getxattr = b2fs_getxattr,
    .listxattr = b2fs_listxattr,
    .removexattr = b2fs_removexattr,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .fsyncdir = op_fsyncdir,
    .init = op_init,
    .destroy = op_destroy,
    .create = op_create,
    .utimens = op_utimens,
    .fallocate = op_fallocate,
    .lseek = op_lseek,
};
