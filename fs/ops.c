/* What each call does, by mount path (ops.h). */
#include "fs/ops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/bcache.h"
#include "fs/commit.h"
#include "fs/convert.h"
#include "fs/dirnames.h"
#include "fs/errmap.h"
#include "fs/file.h"
#include "fs/idle.h"
#include "fs/log.h"
#include "fs/node.h"
#include "fs/options.h"
#include "fs/paths.h"
#include "fs/plain.h"
#include "fs/push.h"
#include "fs/wpool.h"
#include "fs/xattr.h"

typedef struct handle {
    int refs;          /* atomic: the open, and calls that borrowed it (ops_handle_hold) */
    int kind;          /* atomic: B2FS_PLAIN: fd; else node. A frame's handle becomes a
                        * plain file's at its writer's close (fs/plain): fd is set first */
    int fd;            /* or -1 */
    pthread_rwlock_t *io_lock; /* a plain file's reads and writes (fs/plain): set with fd */
    b2fs_node *node;   /* or NULL; kept while the handle lives once it is a plain file's */
    int sealed;        /* atomic: a plain file with its checksum: a change drops it */
    int append;        /* opened with O_APPEND: a frame's writes go to its end */
    int wrote;         /* atomic: a write went through this handle */
    int push_held;     /* writable: no decoded blocks pushed to the page cache (fs/push) */
    int direct;        /* writes come past the page cache (ops_create): the kernel leaves
                        * dropping set-user-ID and set-group-ID to the daemon */
} handle;

static handle *fh_of(struct fuse_file_info *fi)
{
    return fi ? (handle *)(uintptr_t)fi->fh : NULL;
}

static int is_plain(const handle *h)
{
    return __atomic_load_n(&h->kind, __ATOMIC_ACQUIRE) == B2FS_PLAIN;
}

/* h becomes a plain file's handle for fd (before its kind says so). */
static int set_plain_fd(handle *h, int fd, struct stat *st)
{
    if (fstat(fd, st) < 0)
        return -errno;
    h->fd = fd;
    h->io_lock = plain_io_lock(st->st_dev, st->st_ino);
    return 0;
}

/* A plain file is about to change through h: its checksum goes. */
static void unseal(handle *h)
{
    if (__atomic_exchange_n(&h->sealed, 0, __ATOMIC_RELAXED))
        plain_unseal(h->fd);
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

int ops_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h) {
        if (is_plain(h))
            return fstat(h->fd, st) < 0 ? -errno : 0;
        file_stat(h->node, st);
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
            file_stat(n, st);
            node_put(n);
        }
    }
    loc_done(&loc);
    return r;
}

int ops_readlink(const char *path, char *buf, size_t size)
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

/* The owner a caller's new entry of dirfd is given, as chown(2) takes it (-1: as the
 * daemon made it): the caller's user, and its group unless dirfd is set-group-ID, where
 * the entry keeps the directory's group, which the kernel gave it (as on any Linux file
 * system). Returns whether a chown is needed. */
static int new_owner(int dirfd, const b2fs_caller *who, uid_t *uid, gid_t *gid)
{
    struct stat st;
    *uid = who && who->uid != geteuid() ? who->uid : (uid_t)-1;
    *gid = who && who->gid != getegid() ? who->gid : (gid_t)-1;
    if (*gid != (gid_t)-1 && fstat(dirfd, &st) == 0 && (st.st_mode & S_ISGID))
        *gid = (gid_t)-1;
    return geteuid() == 0 && (*uid != (uid_t)-1 || *gid != (gid_t)-1);
}

static void own(int dirfd, const char *name, const b2fs_caller *who)
{
    uid_t uid;
    gid_t gid;
    if (new_owner(dirfd, who, &uid, &gid) &&
        fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
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

int ops_mkdir(const char *path, mode_t mode, const b2fs_caller *who)
{
    b2fs_loc loc;
    int r = resolve_new(path, &loc);
    if (r)
        return r;
    r = mkdirat(loc.dirfd, loc.mname, mode) < 0 ? -errno : 0;
    if (!r)
        own(loc.dirfd, loc.mname, who);
    loc_done(&loc);
    return r;
}

/* A new frame for path (loc from resolve_new), with the directory defaults and the caller
 * as owner. -ENAMETOOLONG when the name leaves no room for the .b2frame suffix. */
static int create_frame(const b2fs_loc *loc, const char *path, mode_t mode,
                        const b2fs_caller *who, b2fs_node **n)
{
    b2f_params p;
    b2fs_params_for_new(path, &p);
    uid_t uid;
    gid_t gid;
    new_owner(loc->dirfd, who, &uid, &gid);
    return file_create(loc, path, &p, mode, uid, gid, n);
}

/* FIFOs, sockets and character and block devices are entries of BACKING as themselves;
 * a regular file made by mknod(2) is a new frame, as with creat(2) (a plain file when its
 * name leaves no room for the .b2frame suffix). */
int ops_mknod(const char *path, mode_t mode, dev_t rdev, const b2fs_caller *who)
{
    b2fs_loc loc;
    int r = resolve_new(path, &loc);
    if (r)
        return r;
    b2fs_node *n;
    if (S_ISREG(mode) && (r = create_frame(&loc, path, mode, who, &n)) == 0)
        node_put(n);
    if (!S_ISREG(mode) || r == -ENAMETOOLONG) {
        r = mknodat(loc.dirfd, loc.mname, mode, rdev) < 0 ? -errno : 0;
        if (!r)
            own(loc.dirfd, loc.mname, who);
    }
    loc_done(&loc);
    return b2fs_fuse_result(r);
}

int ops_symlink(const char *target, const char *path, const b2fs_caller *who)
{
    b2fs_loc loc;
    int r = resolve_new(path, &loc);
    if (r)
        return r;
    r = symlinkat(target, loc.dirfd, loc.mname) < 0 ? -errno : 0;
    if (!r)
        own(loc.dirfd, loc.mname, who);
    loc_done(&loc);
    return r;
}

int ops_unlink(const char *path)
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

int ops_rmdir(const char *path)
{
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    r = unlinkat(loc.dirfd, loc.name, AT_REMOVEDIR) < 0 ? -errno : 0;
    if (r == 0)
        b2fs_params_moved();   /* (a directory made again at its path has no defaults) */
    loc_done(&loc);
    return r;
}

/* After a rename into dirfd under the shown name mname, the renamed entry (kept) is the
 * only one of that name: whatever it replaced, and entries it hides that would show again
 * once it moves away, go (directories excepted: renameat dealt with those). */
static void drop_aliases(int dirfd, const char *mname, const char *kept)
{
    char names[8][300];
    int n = name_aliases(mname, names, 8);
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(names[i], kept) && fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISDIR(st.st_mode))
            unlinkat(dirfd, names[i], 0);
    }
}

int ops_rename(const char *from, const char *to, unsigned int flags)
{
    /* as a passthrough: no atomic exchange, and no whiteouts (they are overlayfs's) */
    if (flags & (RENAME_EXCHANGE | RENAME_WHITEOUT))
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
        r = name_backing(newname, sizeof newname, dst.mname,
                         src.kind == B2FS_PLAIN ? NULL : src.name);
    if (!r && renameat(src.dirfd, src.name, dst.dirfd, newname) < 0)
        r = -errno;
    if (!r && S_ISDIR(src.st.st_mode))
        b2fs_params_moved();   /* the directories below it have other paths now */
    if (!r) {
        drop_aliases(dst.dirfd, dst.mname, newname);
        if (src.kind == B2FS_FRAME)
            node_moved(src.st.st_dev, src.st.st_ino, dst.dirfd, newname);
        else if (src.kind == B2FS_PLAIN)
            convert_renamed(from, to, &src.st);
    }
    loc_done(&src);
    loc_done(&dst);
    return r;
}

/* When loc is a new file still plain (fs/convert): done with loc, and made a frame where
 * it can be; returns 1 then (loc is done), else 0. */
static int frame_first(b2fs_loc *loc)
{
    if (loc->kind != B2FS_PLAIN || !S_ISREG(loc->st.st_mode) ||
        !convert_waiting(loc->st.st_dev, loc->st.st_ino))
        return 0;
    loc_done(loc);
    convert_now(loc->st.st_dev, loc->st.st_ino);
    return 1;
}

void ops_frame_now(const char *path)
{
    b2fs_loc loc;
    if (resolve_existing(path, &loc))
        return;
    /* (an empty one would stay plain: it waits for its contents) */
    if (loc.st.st_size == 0 || !frame_first(&loc))
        loc_done(&loc);
}

int ops_link(const char *from, const char *to)
{
    b2fs_loc src, dst;
    int r = resolve_existing(from, &src);
    if (r)
        return r;
    if (frame_first(&src) && (r = resolve_existing(from, &src)))
        return r;
    r = resolve_new(to, &dst);
    if (r) {
        loc_done(&src);
        return r;
    }
    char newname[300];
    r = name_backing(newname, sizeof newname, dst.mname, src.kind == B2FS_PLAIN ? NULL : src.name);
    if (!r && linkat(src.dirfd, src.name, dst.dirfd, newname, 0) < 0)
        r = -errno;
    loc_done(&src);
    loc_done(&dst);
    return r;
}

int ops_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h && !is_plain(h))
        return file_chmod(h->node, mode);
    if (h)
        return fchmod(h->fd, mode) < 0 ? -errno : 0;
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    /* glibc does this through an O_PATH descriptor: any file type, never through a
     * symlink (EOPNOTSUPP for one, as Linux has no symlink modes) */
    r = fchmodat(loc.dirfd, loc.name, mode, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
    loc_done(&loc);
    return r;
}

int ops_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (h && !is_plain(h))
        return file_chown(h->node, uid, gid);
    if (h)
        return fchown(h->fd, uid, gid) < 0 ? -errno : 0;
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    r = fchownat(loc.dirfd, loc.name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
    loc_done(&loc);
    return r;
}

/* Runs fn on the node of a frame, from the open handle or looked up by path; on a plain
 * file, plain(dirfd, name, fd, arg) with the handle's fd or the backing entry. fn gets
 * commit_now when no open handle will flush the change. */
static int with_node(const char *path, struct fuse_file_info *fi,
                     int (*fn)(b2fs_node *n, void *arg, int commit_now), void *arg,
                     int (*plain)(int dirfd, const char *name, int fd, void *arg))
{
    handle *h = fh_of(fi);
    if (h) {
        if (!is_plain(h)) {
            int r = fn(h->node, arg, 0);
            if (r != -ESTALE || !is_plain(h))
                return r;   /* (else it became a plain file meanwhile) */
        }
        unseal(h);
        return plain(-1, NULL, h->fd, arg);
    }
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    if (loc.kind == B2FS_PLAIN) {
        r = plain(loc.dirfd, loc.name, -1, arg);
    } else {
        b2fs_node *n;
        r = node_get(path, &loc, &n);
        if (r == 0) {
            r = fn(n, arg, 1);
            node_put(n);
        }
    }
    loc_done(&loc);
    return r;
}

static int truncate_node(b2fs_node *n, void *arg, int commit_now)
{
    if (!commit_now) /* through a handle: a writable one, which holds the pushes */
        return file_truncate(n, *(uint64_t *)arg, 0);
    push_hold(n);
    int r = file_truncate(n, *(uint64_t *)arg, 1);
    push_release(n);
    return r;
}

static int truncate_plain(int dirfd, const char *name, int fd, void *arg)
{
    off_t size = (off_t)*(uint64_t *)arg;
    if (fd >= 0) {
        int r = convert_fits(fd, (uint64_t)size);
        return r < 0 ? r : ftruncate(fd, size) < 0 ? -errno : 0;
    }
    fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int r = convert_fits(fd, (uint64_t)size);
    if (r == 0) {
        plain_unseal(fd);
        r = ftruncate(fd, size) < 0 ? -errno : 0;
    }
    close(fd);
    return r;
}

int ops_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    if (size < 0)
        return -EINVAL;
    uint64_t s = (uint64_t)size;
    return b2fs_fuse_result(with_node(path, fi, truncate_node, &s, truncate_plain));
}

int ops_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    /* commit first, or the commit would overwrite the times being set (cp -p, tar) */
    handle *h = fh_of(fi);
    if (h && !is_plain(h))
        return b2fs_fuse_result(file_utimens(h->node, tv));
    if (h)
        return futimens(h->fd, tv) < 0 ? -errno : 0;
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    /* (the kernel sends futimens(2) by path too) */
    b2fs_node *n = loc.kind != B2FS_PLAIN ? node_find(loc.st.st_dev, loc.st.st_ino) : NULL;
    if (n) {
        r = b2fs_fuse_result(file_utimens(n, tv));
        node_put(n);
    } else {
        r = utimensat(loc.dirfd, loc.name, tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
    }
    loc_done(&loc);
    return r;
}

static int open_node(b2fs_node *n, struct fuse_file_info *fi)
{
    int keep_cache = 0;
    int writable = (fi->flags & O_ACCMODE) != O_RDONLY;
    if (writable)
        push_hold(n);
    int r = file_open(n, fi->flags, &keep_cache);
    fi->keep_cache = keep_cache;
    handle *h = r ? NULL : calloc(1, sizeof *h);
    if (!h) {
        if (writable)
            push_release(n);
        return r ? r : -ENOMEM;
    }
    h->push_held = writable;
    h->refs = 1;
    h->kind = n->kind;
    h->fd = -1;
    h->node = n;
    h->append = (fi->flags & O_APPEND) != 0;
    fi->fh = (uint64_t)(uintptr_t)h;
    return 0;
}

/* Opens (with O_CREAT: creates) the plain backing file name in dirfd for a handle; one
 * with a checksum (fs/plain) is checked first. path names it in the log. note_new: a new
 * file to be made a frame once idle (fs/convert). */
static int open_plain(const char *path, const b2fs_loc *loc, const char *name, int flags,
                      mode_t mode, const b2fs_caller *who, int note_new,
                      struct fuse_file_info *fi)
{
    /* (not O_DIRECT: the daemon's buffers need not be aligned as the backing file system
     * wants them; the kernel keeps such a caller's bytes out of the mount's page cache) */
    int fd = openat(loc->dirfd, name, (flags & ~(O_NOCTTY | O_DIRECT)) | O_NOFOLLOW | O_CLOEXEC,
                    mode);
    if (fd < 0)
        return errno == ELOOP ? -EACCES : -errno;
    int sealed = 0;
    if (flags & O_CREAT) {
        own(loc->dirfd, name, who);
    } else if (flags & O_TRUNC) {
        plain_unseal(fd);
    } else if ((flags & O_ACCMODE) == O_WRONLY) {
        sealed = plain_sealed(fd);   /* (nothing to read it with: its reader checks it) */
    } else if ((sealed = plain_check(fd)) < 0) {
        char *bp = loc_backing_path(path, loc, NULL);
        b2fs_log(LOG_ERR, "%s: damaged: its contents do not match their checksum (%s)",
                 bp ? bp : path, B2F_PLAIN_SUM_XATTR);
        free(bp);
        close(fd);
        return b2fs_fuse_result(sealed);
    }
    /* one left plain by a daemon that died (a file with a checksum has no mark: one that
     * stays plain gets its checksum as it loses the mark) */
    if (!(flags & O_CREAT) && !sealed)
        convert_note_open(path, fd);
    handle *h = calloc(1, sizeof *h);
    struct stat st;
    int r = h ? set_plain_fd(h, fd, &st) : -ENOMEM;
    if (r < 0) {
        free(h);
        close(fd);
        return r;
    }
    h->refs = 1;
    h->kind = B2FS_PLAIN;
    h->sealed = sealed > 0 && (flags & O_ACCMODE) != O_RDONLY;
    fi->fh = (uint64_t)(uintptr_t)h;
    if (note_new)
        convert_note_new(path, fd, &st);
    return 0;
}

int ops_open(const char *path, struct fuse_file_info *fi)
{
    b2fs_loc loc;
    int r = resolve_existing(path, &loc);
    if (r)
        return r;
    if (loc.kind == B2FS_PLAIN) {
        r = open_plain(path, &loc, loc.name, fi->flags & ~(O_CREAT | O_EXCL), 0, NULL, 0, fi);
        loc_done(&loc);
        return r;
    }
    b2fs_node *n;
    r = node_get(path, &loc, &n);
    if (r == 0) {
        r = open_node(n, fi);
        if (r)
            node_put(n);
    }
    loc_done(&loc);
    return b2fs_fuse_result(r);
}

/* A new file opened write-only is written past the page cache (direct_io): nothing of it
 * is cached yet, its writer cannot read or map it, and the kernel then sends no request
 * for security.capability before each write(2), a round trip of every small file copied
 * in. It leaves set-user-ID and set-group-ID to the daemon (ops_write_buf). */
static void write_past_cache(struct fuse_file_info *fi)
{
    if ((fi->flags & O_ACCMODE) == O_WRONLY) {
        fi->direct_io = 1;
        fh_of(fi)->direct = 1;
    }
}

int ops_create(const char *path, mode_t mode, const b2fs_caller *who, struct fuse_file_info *fi)
{
    b2fs_loc loc;
    int r = loc_resolve(path, &loc);
    if (r)
        return r;
    if (loc.kind != B2FS_NONE) {
        loc_done(&loc);
        if (fi->flags & O_EXCL)
            return -EEXIST;
        return ops_open(path, fi);
    }
    if (name_is_temp(loc.mname)) {
        loc_done(&loc);
        return -EINVAL;
    }
    if (convert_wanted(loc.mname)) {
        /* a plain file now, a frame once idle (fs/convert) */
        r = open_plain(path, &loc, loc.mname, fi->flags | O_CREAT | O_EXCL, mode, who, 1, fi);
        loc_done(&loc);
        if (r == 0)
            write_past_cache(fi);
        return r;
    }
    b2fs_node *n;
    r = create_frame(&loc, path, mode, who, &n);
    if (r == -ENAMETOOLONG) {
        /* no room for the .b2frame suffix: a plain file, passed through uncompressed */
        r = open_plain(path, &loc, loc.mname, fi->flags | O_CREAT | O_EXCL, mode, who, 0, fi);
        loc_done(&loc);
        if (r == 0)
            write_past_cache(fi);
        return r;
    }
    loc_done(&loc);
    if (r == 0) {
        fi->flags &= ~O_TRUNC;
        r = open_node(n, fi);
        if (r)
            node_put(n);
    }
    if (r == 0)
        write_past_cache(fi);
    return b2fs_fuse_result(r);
}

int ops_read(struct fuse_file_info *fi, char *buf, size_t size, off_t off)
{
    handle *h = fh_of(fi);
    if (is_plain(h)) {
        pthread_rwlock_rdlock(h->io_lock);
        ssize_t r = pread(h->fd, buf, size, off);
        int e = errno;
        pthread_rwlock_unlock(h->io_lock);
        return r < 0 ? -e : (int)r;
    }
    return b2fs_fuse_result((int)file_read(h->node, buf, size, (uint64_t)off));
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

ssize_t ops_write_buf(struct fuse_file_info *fi, struct fuse_bufvec *buf, off_t off,
                      const b2fs_caller *who, int *mode_changed)
{
    handle *h = fh_of(fi);
    size_t size = fuse_buf_size(buf);
    *mode_changed = 0;
    /* (root stands for a caller with CAP_FSETID) */
    if (h->direct && who->uid != 0) {
        int r = is_plain(h) ? file_drop_setid_fd(h->fd) : file_drop_setid(h->node);
        if (r < 0)
            return r;
        *mode_changed = r;
    }
    if (!is_plain(h)) {
        __atomic_store_n(&h->wrote, 1, __ATOMIC_RELAXED);
        ssize_t r = file_write(h->node, size, h->append ? FILE_AT_END : (uint64_t)off,
                               fill_from_bufvec, buf);
        if (r != -ESTALE || !is_plain(h))
            return b2fs_fuse_result((int)r);
        /* (it became a plain file meanwhile) */
    }
    int r = convert_fits(h->fd, (uint64_t)off + size);
    if (r < 0)
        return r;
    unseal(h);
    struct fuse_bufvec out = FUSE_BUFVEC_INIT(size);
    out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
    out.buf[0].fd = h->fd;
    out.buf[0].pos = off;
    pthread_rwlock_wrlock(h->io_lock);
    ssize_t w = fuse_buf_copy(&out, buf, 0);
    pthread_rwlock_unlock(h->io_lock);
    return w;
}

int ops_statfs(struct statvfs *sv)
{
    return fstatvfs(b2fs_cfg.rootfd, sv) < 0 ? -errno : 0;
}

int ops_flush(struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (is_plain(h))
        return 0;
    /* close(2) waits for this, not for the release: an array stored at the close of its
     * writer is one when close returns, and so is a plain file, before the writer's next
     * call (a rename, as rsync makes) */
    int wrote = __atomic_load_n(&h->wrote, __ATOMIC_RELAXED), fd;
    int r = file_close(h->node, wrote, wrote ? &fd : NULL);
    struct stat st;
    int e = r == 1 ? set_plain_fd(h, fd, &st) : 0;
    if (e < 0) {
        close(fd);   /* (the file is plain now; this handle fails its calls) */
        r = e;
    }
    if (r == 1) {
        __atomic_store_n(&h->sealed, b2fs_cfg.checksums, __ATOMIC_RELAXED);
        __atomic_store_n(&h->kind, B2FS_PLAIN, __ATOMIC_RELEASE);
        r = 0;
    }
    return b2fs_fuse_result(r);
}

void ops_handle_hold(uint64_t fh)
{
    __atomic_add_fetch(&((handle *)(uintptr_t)fh)->refs, 1, __ATOMIC_RELAXED);
}

void ops_handle_drop(uint64_t fh)
{
    handle *h = (handle *)(uintptr_t)fh;
    if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL))
        return;
    if (h->fd >= 0)
        close(h->fd);
    if (h->node) {
        if (h->push_held)
            push_release(h->node);
        node_put(h->node);
    }
    free(h);
}

int ops_release(struct fuse_file_info *fi)
{
    handle *h = fh_of(fi);
    if (!is_plain(h)) /* (a failure was logged; close(2) has returned) */
        file_close(h->node, __atomic_load_n(&h->wrote, __ATOMIC_RELAXED), NULL);
    ops_handle_drop(fi->fh);
    return 0;
}

int ops_fsync(struct fuse_file_info *fi, int datasync)
{
    handle *h = fh_of(fi);
    if (is_plain(h)) {
        if ((datasync ? fdatasync(h->fd) : fsync(h->fd)) < 0)
            return -errno;
        convert_synced(h->fd);
        return 0;
    }
    return b2fs_fuse_result(file_commit(h->node, 1));
}

struct falloc {
    int mode;
    off_t off, len;
};

static int falloc_node(b2fs_node *n, void *arg, int commit_now)
{
    struct falloc *a = arg;
    return file_fallocate(n, a->mode, (uint64_t)a->off, (uint64_t)a->len, commit_now);
}

static int falloc_plain(int dirfd, const char *name, int fd, void *arg)
{
    struct falloc *a = arg;
    (void)dirfd, (void)name;   /* (fallocate(2) comes with a handle) */
    int r = a->mode & FALLOC_FL_KEEP_SIZE ? 0 : convert_fits(fd, (uint64_t)a->off + (uint64_t)a->len);
    return r < 0 ? r : fallocate(fd, a->mode, a->off, a->len) < 0 ? -errno : 0;
}

int ops_fallocate(const char *path, int mode, off_t off, off_t len,
                        struct fuse_file_info *fi)
{
    if (off < 0 || len <= 0)
        return -EINVAL;
    struct falloc a = {mode, off, len};
    return b2fs_fuse_result(with_node(path, fi, falloc_node, &a, falloc_plain));
}

off_t ops_lseek(struct fuse_file_info *fi, off_t off, int whence)
{
    handle *h = fh_of(fi);
    if (!h)
        return -EBADF;
    if (is_plain(h)) {
        off_t r = lseek(h->fd, off, whence);
        return r < 0 ? -errno : r;
    }
    if (whence != SEEK_DATA && whence != SEEK_HOLE)
        return -EINVAL;
    return file_seek(h->node, off, whence);
}

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

#ifndef UNDER_TSAN
/* Whether a pipe can hold len bytes. libfuse splices a request into a pipe, leaving a
 * write's data there for fill_from_bufvec to read once, straight into the chunk image, only
 * if its pipe holds the largest request (max_write and a page of header); else it reads
 * each request into its own buffer, and the data is copied twice. */
static int pipe_holds(size_t len)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return 0;
    int r = fcntl(p[0], F_SETPIPE_SZ, (int)len);
    close(p[0]);
    close(p[1]);
    return r >= 0 && (size_t)r >= len;
}
#endif

void ops_mount(struct fuse_conn_info *conn, node_rekey_fn rekeyed)
{
#ifdef UNDER_TSAN
    /* ThreadSanitizer sees the order the kernel gives requests through read(2) and
     * writev(2) on /dev/fuse, not through splice(2): a spliced request's handle would look
     * unordered with the call that made it. So under it requests are read, not spliced. */
    conn->want &= ~FUSE_CAP_SPLICE_READ;
    conn->max_write = B2FS_IO_SIZE;
#else
    /* a page short of B2FS_IO_SIZE where a pipe cannot grow past it (without
     * CAP_SYS_RESOURCE a pipe's largest is fs.pipe-max-size, 1 MiB by default) */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    conn->max_write = pipe_holds(B2FS_IO_SIZE + page) ? B2FS_IO_SIZE : B2FS_IO_SIZE - page;
#endif
    conn->max_readahead = B2FS_IO_SIZE;
    if (!b2fs_cfg.foreground)
        b2fs_log_to_syslog();
    node_table_init(commit_retire, rekeyed);
    dirnames_start();
    bcache_init(b2fs_cfg.cache_size);
    wpool_init(b2fs_cfg.nthreads);
    int r = b2fs_cfg.compress_idle > 0 ? idle_start() : 0;
    if (r < 0)
        b2fs_log(LOG_WARNING, "no thread for compression when idle (%s): chunks are compressed "
                 "as written", strerror(-r));
    /* (also without new_plain: files another mount left plain are made frames) */
    r = b2fs_cfg.compress_idle > 0 && !b2fs_cfg.ro ? convert_start(rekeyed) : 0;
    if (r < 0)
        b2fs_log(LOG_WARNING, "no thread to make new plain files frames (%s): new files are "
                 "made frames at once", strerror(-r));
    b2fs_log(LOG_INFO, "mounted %s", b2fs_cfg.backing);
}

void ops_unmount(void)
{
    convert_stop();   /* new plain files waiting are made frames */
    push_stop();   /* its blocks hold nodes */
    idle_stop();   /* compresses what waits: its queue holds nodes too */
    commit_all();
    wpool_shutdown();
    bcache_shutdown();
    dirnames_stop();
    b2fs_log(LOG_INFO, "unmounted %s", b2fs_cfg.backing);
}
