/* The kernel protocol: requests by inode id to calls by mount path (ll.h). */
#include "fs/ll.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/inode.h"
#include "fs/log.h"
#include "fs/ops.h"
#include "fs/options.h"
#include "fs/paths.h"
#include "fs/prefetch.h"
#include "fs/push.h"
#include "fs/xattr.h"

/* Seconds the kernel may keep a name's inode and an inode's attributes. */
#define TIMEOUT 1.0
/* Seconds it may remember that a name does not exist: a program that looks a name up, then
 * opens it with O_CREAT, sends no second lookup (with O_EXCL, as `cp` opens, the kernel
 * asks again anyway). Short, since a file another mount makes stays hidden that long. */
#define NEGATIVE_TIMEOUT 0.2

/* where notifications go: set by ll_bind before the first request, only read after */
static struct fuse_session *session;

void ll_bind(struct fuse_session *se)
{
    session = se;
}

static void reply_result(fuse_req_t req, int r)
{
    fuse_reply_err(req, r < 0 ? -r : 0);
}

static b2fs_caller caller_of(fuse_req_t req)
{
    const struct fuse_ctx *cx = fuse_req_ctx(req);
    b2fs_caller who = {cx->uid, cx->gid};
    return who;
}

/* The entry at path (name in parent) as a lookup gives it: its attributes, and its inode
 * with one more lookup counted (e->ino 0 when there was no memory for it). */
static int look_up(fuse_ino_t parent, const char *name, const char *path,
                   struct fuse_file_info *fi, struct fuse_entry_param *e)
{
    memset(e, 0, sizeof *e);
    int r = ops_getattr(path, &e->attr, fi);
    if (r)
        return r;
    e->ino = inode_remember(parent, name, &e->attr);
    e->attr_timeout = e->entry_timeout = TIMEOUT;
    return 0;
}

/* Answers a lookup (or a call that made name in parent) with the entry at path; a lookup
 * of a name that does not exist with a negative entry. */
static void reply_entry(fuse_req_t req, fuse_ino_t parent, const char *name, const char *path,
                        struct fuse_file_info *fi, int lookup)
{
    struct fuse_entry_param e;
    int r = look_up(parent, name, path, fi, &e);
    if (r == -ENOENT && lookup) {
        e.entry_timeout = NEGATIVE_TIMEOUT;   /* ino 0: the kernel keeps "no such name" */
        fuse_reply_entry(req, &e);
        return;
    }
    if (r) {
        reply_result(req, r);
        return;
    }
    if (e.ino && fi && inode_open_add(e.ino, fi->fh) != 0) {
        inode_forget(e.ino, 1);
        e.ino = 0;
    }
    if (!e.ino) {
        if (fi)
            ops_release(fi);
        fuse_reply_err(req, ENOMEM);
        return;
    }
    int sent = fi ? fuse_reply_create(req, &e, fi) : fuse_reply_entry(req, &e);
    if (sent < 0) { /* interrupted: the kernel did not take the reference */
        if (fi) {
            inode_open_remove(e.ino, fi->fh);
            ops_release(fi);
        }
        inode_forget(e.ino, 1);
    }
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    inode_table_init();
    ops_mount(conn, inode_rekey);
    int r = b2fs_cfg.prefetch ? prefetch_start() : 0;
    if (r < 0)
        b2fs_log(LOG_WARNING, "no thread for reading ahead across files (%s)", strerror(-r));
}

static void ll_destroy(void *userdata)
{
    (void)userdata;
    prefetch_stop();
    ops_unmount();
    inode_table_free();
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    char *path;
    int r = inode_path(parent, name, &path);
    if (r) {
        reply_result(req, r);
        return;
    }
    if (b2fs_cfg.prefetch)
        prefetch_looked_up(path);
    reply_entry(req, parent, name, path, NULL, 1);
    free(path);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    inode_forget(ino, nlookup);
    fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    for (size_t i = 0; i < count; i++)
        inode_forget(forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

/* What a call on ino works on: its path, and the caller's open handle if any. A file
 * with no name left (unlinked or replaced while open) is reached through an open
 * handle: the caller's, or one borrowed from the inode. With open_first, an open
 * file's borrowed handle is taken before its name: the kernel sends fchmod, fchown,
 * futimens and fstat of an open file without its handle (tar x: three SETATTRs and a
 * GETATTR a file), and the handle spares the search of its directory for its name. */
typedef struct call_target {
    char *path;
    struct fuse_file_info *fi;
    struct fuse_file_info borrowed;
    int has_borrowed;
} call_target;

static int borrow(fuse_ino_t ino, call_target *t)
{
    uint64_t fh;
    if (inode_open_borrow(ino, ops_handle_hold, &fh) != 0)
        return -ENOENT;
    t->borrowed.fh = fh;
    t->fi = &t->borrowed;
    t->has_borrowed = 1;
    return 0;
}

static int target_get(fuse_ino_t ino, struct fuse_file_info *fi, call_target *t, int open_first)
{
    memset(t, 0, sizeof *t);
    t->fi = fi;
    if (!fi && open_first && borrow(ino, t) == 0) {
        inode_path(ino, NULL, &t->path);   /* (none when it has no name left) */
        return 0;
    }
    int r = inode_path(ino, NULL, &t->path);
    if (r == 0 || fi)
        return 0;
    return borrow(ino, t) == 0 ? 0 : r;
}

static void target_put(call_target *t)
{
    free(t->path);
    if (t->has_borrowed)
        ops_handle_drop(t->borrowed.fh);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    call_target t;
    struct stat st;
    int r = target_get(ino, fi, &t, 1);
    if (!r)
        r = ops_getattr(t.path, &st, t.fi);
    target_put(&t);
    if (r)
        reply_result(req, r);
    else
        fuse_reply_attr(req, &st, TIMEOUT);
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
    call_target t;
    /* (a size is set through the handle only when it is the caller's: a borrowed one may
     * be read only) */
    int r = target_get(ino, fi, &t, !(to_set & FUSE_SET_ATTR_SIZE));
    const char *path = t.path;
    fi = t.fi;
    if (!r && (to_set & FUSE_SET_ATTR_MODE))
        r = ops_chmod(path, attr->st_mode, fi);
    if (!r && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
        r = ops_chown(path, to_set & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1,
                      to_set & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1, fi);
    if (!r && (to_set & FUSE_SET_ATTR_SIZE))
        r = ops_truncate(path, attr->st_size, fi);
    if (!r && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
        struct timespec tv[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
        if (to_set & FUSE_SET_ATTR_ATIME_NOW)
            tv[0].tv_nsec = UTIME_NOW;
        else if (to_set & FUSE_SET_ATTR_ATIME)
            tv[0] = attr->st_atim;
        if (to_set & FUSE_SET_ATTR_MTIME_NOW)
            tv[1].tv_nsec = UTIME_NOW;
        else if (to_set & FUSE_SET_ATTR_MTIME)
            tv[1] = attr->st_mtim;
        r = ops_utimens(path, tv, fi);
    }
    struct stat st;
    if (!r)
        r = ops_getattr(path, &st, fi);
    target_put(&t);
    if (r)
        reply_result(req, r);
    else
        fuse_reply_attr(req, &st, TIMEOUT);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
    char *path, buf[PATH_MAX + 1];
    int r = inode_path(ino, NULL, &path);
    if (!r)
        r = ops_readlink(path, buf, sizeof buf);
    free(path);
    if (r)
        reply_result(req, r);
    else
        fuse_reply_readlink(req, buf);
}

/* What mknod, mkdir and symlink share: make the entry, then answer as a lookup. */
enum make_kind { MAKE_NODE, MAKE_DIR, MAKE_SYMLINK };

static void make_entry(fuse_req_t req, fuse_ino_t parent, const char *name, enum make_kind kind,
                       mode_t mode, dev_t rdev, const char *target)
{
    char *path;
    int r = inode_path(parent, name, &path);
    if (r) {
        reply_result(req, r);
        return;
    }
    b2fs_caller who = caller_of(req);
    if (kind == MAKE_NODE)
        r = ops_mknod(path, mode, rdev, &who);
    else if (kind == MAKE_DIR)
        r = ops_mkdir(path, mode, &who);
    else
        r = ops_symlink(target, path, &who);
    if (r)
        reply_result(req, r);
    else
        reply_entry(req, parent, name, path, NULL, 0);
    free(path);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                     dev_t rdev)
{
    make_entry(req, parent, name, MAKE_NODE, mode, rdev, NULL);
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    make_entry(req, parent, name, MAKE_DIR, mode, 0, NULL);
}

static void ll_symlink(fuse_req_t req, const char *target, fuse_ino_t parent, const char *name)
{
    make_entry(req, parent, name, MAKE_SYMLINK, 0, 0, target);
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name, int dir)
{
    char *path;
    int r = inode_path(parent, name, &path);
    if (!r)
        r = dir ? ops_rmdir(path) : ops_unlink(path);
    free(path);
    if (!r)
        inode_name_gone(parent, name);
    reply_result(req, r);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    remove_entry(req, parent, name, 0);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    remove_entry(req, parent, name, 1);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags)
{
    char *from = NULL, *to = NULL;
    int r = inode_path(parent, name, &from);
    if (!r)
        r = inode_path(newparent, newname, &to);
    if (!r)
        r = ops_rename(from, to, flags);
    free(from);
    free(to);
    if (!r)
        inode_renamed(parent, name, newparent, newname);
    reply_result(req, r);
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    char *from = NULL, *to = NULL;
    int r = inode_path(ino, NULL, &from);
    if (!r)
        r = inode_path(newparent, newname, &to);
    if (!r)
        r = ops_link(from, to);
    if (r)
        reply_result(req, r);
    else
        reply_entry(req, newparent, newname, to, NULL, 0);
    free(from);
    free(to);
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    char *path;
    int r = inode_path(ino, NULL, &path);
    if (!r) {
        r = ops_open(path, fi);
        if (!r && b2fs_cfg.prefetch)
            prefetch_looked_up(path);   /* (its name may have come with a listing) */
    }
    free(path);
    if (!r && (r = inode_open_add(ino, fi->fh)) != 0)
        ops_release(fi);
    if (r) {
        reply_result(req, r);
    } else if (fuse_reply_open(req, fi) < 0) {
        inode_open_remove(ino, fi->fh);
        ops_release(fi);
    }
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi)
{
    char *path;
    int r = inode_path(parent, name, &path);
    b2fs_caller who = caller_of(req);
    if (!r)
        r = ops_create(path, mode, &who, fi);
    if (r)
        reply_result(req, r);
    else
        reply_entry(req, parent, name, path, fi, 0);
    free(path);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    char *buf = malloc(size ? size : 1);
    push_begin();
    int r = buf ? ops_read(fi, buf, size, off) : -ENOMEM;
    if (r < 0)
        reply_result(req, r);
    else
        r = fuse_reply_buf(req, buf, (size_t)r);
    push_send(ino, r >= 0);   /* the rest of a block it decoded, now the reply is out */
    free(buf);
}

static void ll_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
                         struct fuse_file_info *fi)
{
    b2fs_caller who = caller_of(req);
    int mode_changed;
    ssize_t r = ops_write_buf(fi, bufv, off, &who, &mode_changed);
    if (mode_changed)   /* before the reply: the writer's next stat asks again */
        fuse_lowlevel_notify_inval_inode(session, ino, -1, 0);
    if (r < 0)
        reply_result(req, (int)r);
    else
        fuse_reply_write(req, (size_t)r);
}

static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    reply_result(req, ops_flush(fi));
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    inode_open_remove(ino, fi->fh);
    reply_result(req, ops_release(fi));
}

static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)ino;
    reply_result(req, ops_fsync(fi, datasync));
}

static void ll_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
    call_target t;
    int r = target_get(ino, fi, &t, 0);
    if (!r)
        r = ops_fallocate(t.path, mode, off, len, t.fi);
    target_put(&t);
    reply_result(req, r);
}

static void ll_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
                     struct fuse_file_info *fi)
{
    (void)ino;
    off_t r = ops_lseek(fi, off, whence);
    if (r < 0)
        reply_result(req, (int)r);
    else
        fuse_reply_lseek(req, r);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct statvfs sv;
    int r = ops_statfs(&sv);
    if (r)
        reply_result(req, r);
    else
        fuse_reply_statfs(req, &sv);
}

/* A directory's entries as the mount shows them, taken when a listing starts. */
typedef struct dir_entry {
    ino_t ino;
    unsigned char type;
    char *name;
    char *frame;            /* the backing name when it is a frame's, else NULL */
} dir_entry;

typedef struct dir_handle {
    int fd;                 /* the backing directory, O_RDONLY */
    dir_entry *entries;
    size_t count, cap;
} dir_handle;

static dir_handle *dir_of(struct fuse_file_info *fi)
{
    return (dir_handle *)(uintptr_t)fi->fh;
}

static void dir_clear(dir_handle *d)
{
    for (size_t i = 0; i < d->count; i++) {
        free(d->entries[i].name);
        free(d->entries[i].frame);
    }
    d->count = 0;
}

static int dir_add(void *ctx, const char *name, const char *backing, ino_t ino,
                   unsigned char type)
{
    dir_handle *d = ctx;
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        dir_entry *e = realloc(d->entries, cap * sizeof *e);
        if (!e)
            return -ENOMEM;
        d->entries = e;
        d->cap = cap;
    }
    int framed = backing && strcmp(backing, name);
    char *copy = strdup(name), *frame = framed ? strdup(backing) : NULL;
    if (!copy || (framed && !frame)) {
        free(copy);
        free(frame);
        return -ENOMEM;
    }
    d->entries[d->count++] = (dir_entry){ino, type, copy, frame};
    return 0;
}

static int dir_snapshot(dir_handle *d)
{
    dir_clear(d);
    int fd = dup(d->fd);
    if (fd < 0)
        return -errno;
    lseek(fd, 0, SEEK_SET);
    /* (an entry with inode number 0 is skipped by readdir(3)) */
    struct stat self, up;
    if (fstat(fd, &self) < 0)
        self.st_ino = 1;
    if (fstatat(fd, "..", &up, 0) < 0)
        up.st_ino = 1;
    int r = dir_add(d, ".", NULL, self.st_ino, DT_DIR);
    if (!r)
        r = dir_add(d, "..", NULL, up.st_ino, DT_DIR);
    if (!r)
        r = dir_list(fd, dir_add, d);
    else
        close(fd);
    return r;
}

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    char *path;
    int r = inode_path(ino, NULL, &path);
    dir_handle *d = NULL;
    if (!r)
        r = loc_open_dir(path);
    free(path);
    if (r >= 0 && !(d = calloc(1, sizeof *d))) {
        close(r);
        r = -ENOMEM;
    }
    if (r < 0) {
        reply_result(req, r);
        return;
    }
    d->fd = r;
    fi->fh = (uint64_t)(uintptr_t)d;
    if (fuse_reply_open(req, fi) < 0) {
        close(d->fd);
        free(d);
    }
}

/* The listing goes to fs/prefetch too (without "." and ".."). */
static void keep_for_prefetch(fuse_ino_t ino, const dir_handle *d)
{
    char *dir;
    if (!b2fs_cfg.prefetch || inode_path(ino, NULL, &dir) != 0)
        return;
    size_t n = d->count > 2 ? d->count - 2 : 0;
    prefetch_entry *e = prefetch_wants(n) ? malloc((n ? n : 1) * sizeof *e) : NULL;
    for (size_t i = 0; e && i < n; i++) {
        const dir_entry *de = &d->entries[i + 2];
        e[i] = (prefetch_entry){de->name, de->frame ? de->frame : de->name, de->type == DT_REG};
    }
    prefetch_listed(dir, d->fd, e, e ? n : 0);   /* (none: dir's last one is dropped) */
    free(e);
    free(dir);
}

/* The frames among the entries a READDIRPLUS reply of size bytes from off will carry:
 * each is opened for its attributes, one after another, and read ahead here first, so
 * that, read cold, their disk reads overlap instead of each waiting for the last. (The
 * first one found in the page cache ends it: the rest most likely are too.) */
static void read_ahead_frames(fuse_req_t req, dir_handle *d, off_t off, size_t size)
{
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    size_t used = 0;
    for (size_t i = off < 0 ? d->count : (size_t)off; i < d->count; i++) {
        dir_entry *de = &d->entries[i];
        used += fuse_add_direntry_plus(req, NULL, 0, de->name, &e, (off_t)i + 1);
        if (used > size)
            break;
        if (de->frame && backing_read_ahead(d->fd, de->frame))
            break;
    }
}

/* Fills a READDIR (plus: READDIRPLUS) reply from entry off on. With plus, each entry but
 * "." and ".." carries its attributes and counts as a lookup of it, as LOOKUP would; an
 * entry gone since the listing is sent without them. */
static void reply_listing(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                          struct fuse_file_info *fi, int plus)
{
    dir_handle *d = dir_of(fi);
    int r = off == 0 ? dir_snapshot(d) : 0;
    if (off == 0 && r == 0)
        keep_for_prefetch(ino, d);
    char *buf = r ? NULL : malloc(size ? size : 1);
    uint64_t *looked = NULL;   /* the lookups this reply makes, undone if it is not taken */
    size_t nlooked = 0;
    if (!r && (!buf || (plus && !(looked = malloc(d->count * sizeof *looked + 1)))))
        r = -ENOMEM;
    if (r) {
        free(buf);
        reply_result(req, r);
        return;
    }
    if (plus && b2fs_cfg.prefetch)
        read_ahead_frames(req, d, off, size);
    size_t used = 0;
    for (size_t i = off < 0 ? d->count : (size_t)off; i < d->count; i++) {
        dir_entry *de = &d->entries[i];
        struct fuse_entry_param e;
        memset(&e, 0, sizeof e);
        e.attr.st_ino = de->ino;
        e.attr.st_mode = de->type == DT_UNKNOWN ? 0 : DTTOIF(de->type);
        size_t room = size - used, len;
        if (!plus) {
            len = fuse_add_direntry(req, buf + used, room, de->name, &e.attr, (off_t)i + 1);
        } else {
            if (fuse_add_direntry_plus(req, NULL, 0, de->name, &e, (off_t)i + 1) > room)
                break;
            char *path;
            struct fuse_entry_param found;
            int dot = !strcmp(de->name, ".") || !strcmp(de->name, "..");
            if (!dot && inode_path(ino, de->name, &path) == 0) {
                if (look_up(ino, de->name, path, NULL, &found) == 0 && found.ino) {
                    e = found;
                    looked[nlooked++] = e.ino;
                }
                free(path);
            }
            len = fuse_add_direntry_plus(req, buf + used, room, de->name, &e, (off_t)i + 1);
        }
        if (len > room)
            break;
        used += len;
    }
    if (fuse_reply_buf(req, buf, used) < 0)   /* not taken: nor are its lookups */
        for (size_t i = 0; i < nlooked; i++)
            inode_forget(looked[i], 1);
    free(looked);
    free(buf);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    reply_listing(req, ino, size, off, fi, 0);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                           struct fuse_file_info *fi)
{
    reply_listing(req, ino, size, off, fi, 1);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    dir_handle *d = dir_of(fi);
    dir_clear(d);
    free(d->entries);
    close(d->fd);
    free(d);
    fuse_reply_err(req, 0);
}

static void ll_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)ino;
    (void)datasync;
    reply_result(req, fsync(dir_of(fi)->fd) < 0 ? -errno : 0);
}

static void ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                        size_t size, int flags)
{
    char *path;
    int r = inode_path(ino, NULL, &path);
    if (!r)
        r = b2fs_setxattr(path, name, value, size, flags);
    free(path);
    reply_result(req, r);
}

/* getxattr and listxattr: size 0 asks for the size, else for the value. */
static void reply_sized(fuse_req_t req, int r, const char *buf, size_t size)
{
    if (r < 0)
        reply_result(req, r);
    else if (!size)
        fuse_reply_xattr(req, (size_t)r);
    else
        fuse_reply_buf(req, buf, (size_t)r);
}

/* getxattr (name) and listxattr (name NULL). */
static void read_xattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    char *path, *buf = NULL;
    int r = inode_path(ino, NULL, &path);
    if (!r && size && !(buf = malloc(size)))
        r = -ENOMEM;
    if (!r && name && b2fs_xattr_of_frame(name))
        ops_frame_now(path);   /* (a new file still plain: its frame first) */
    if (!r)
        r = name ? b2fs_getxattr(path, name, buf, size) : b2fs_listxattr(path, buf, size);
    free(path);
    reply_sized(req, r, buf, size);
    free(buf);
}

static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    read_xattr(req, ino, name, size);
}

static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    read_xattr(req, ino, NULL, size);
}

static void ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
    char *path;
    int r = inode_path(ino, NULL, &path);
    if (!r)
        r = b2fs_removexattr(path, name);
    free(path);
    reply_result(req, r);
}

const struct fuse_lowlevel_ops b2fs_ll_ops = {
    .init = ll_init,
    .destroy = ll_destroy,
    .lookup = ll_lookup,
    .forget = ll_forget,
    .forget_multi = ll_forget_multi,
    .getattr = ll_getattr,
    .setattr = ll_setattr,
    .readlink = ll_readlink,
    .mknod = ll_mknod,
    .mkdir = ll_mkdir,
    .symlink = ll_symlink,
    .unlink = ll_unlink,
    .rmdir = ll_rmdir,
    .rename = ll_rename,
    .link = ll_link,
    .open = ll_open,
    .create = ll_create,
    .read = ll_read,
    .write_buf = ll_write_buf,
    .flush = ll_flush,
    .release = ll_release,
    .fsync = ll_fsync,
    .fallocate = ll_fallocate,
    .lseek = ll_lseek,
    .statfs = ll_statfs,
    .opendir = ll_opendir,
    .readdir = ll_readdir,
    .readdirplus = ll_readdirplus,
    .releasedir = ll_releasedir,
    .fsyncdir = ll_fsyncdir,
    .setxattr = ll_setxattr,
    .getxattr = ll_getxattr,
    .listxattr = ll_listxattr,
    .removexattr = ll_removexattr,
};
