/* Frames whose chunks have variable sizes (C-Blosc2 writes them) become writable by
 * being rewritten with fixed-size chunks before the first write. The rewrite goes to a
 * temporary name next to the file and is renamed into place, like compaction, so a
 * crash at any point leaves either the old or the new file whole. */
#include "fs/b2fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/xattr.h>
#include <unistd.h>

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

static int rechunk_default(b2_frame *f, int fd, char *err, size_t errlen)
{
    return b2f_rechunk_into(f, fd, 0, err, errlen);
}

/* The node now reads a frame whose chunks are numbered differently. */
static void after_rechunk(b2fs_node *n)
{
    int writable = n->writable;
    node_load_sizes(n);
    n->writable = writable;
    /* the contexts carried the old header's parameters (its blocksize may be tiny) */
    node_drop_cctx(n);
    if (n->cctx)
        b2_cctx_free(n->cctx);
    n->cctx = b2f_cctx_new(n->frame);
    /* staged vlmetalayers are in the new file */
    n->changed = 0;
    n->staged = 0;
    node_forget_changes(n);
    node_account(n);
    n->ra_done = -1;
    n->bad_logged = -1;
    node_new_gen(n);   /* cached blocks are keyed by chunk number */
    node_stamp(n);
}

int node_make_fixed(b2fs_node *n)
{
    if (n->chunksize > 0)
        return 0;
    /* one rewrite or commit at a time among mounts of the backing directory; another
     * mount may already have rewritten the file (then the rebase picks that up) */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    fcntl(n->fd, F_OFD_SETLKW, &fl);
    int r = node_rebase_if_changed(n, 1);
    if (r == 0 && n->chunksize <= 0 &&
        (r = node_replace_with(n, rechunk_default, "rewriting with fixed-size chunks")) == 0) {
        after_rechunk(n);
        b2fs_log(LOG_INFO, "%s: rewritten with fixed-size chunks of %ld bytes (its chunks had "
                 "variable sizes) so that it can be written", n->path, (long)n->chunksize);
    } else if (r == -ESTALE) {
        b2fs_log(LOG_WARNING, "%s: has chunks of variable sizes and is no longer at its name: "
                 "stays read only", n->path);
        r = -EOPNOTSUPP;
    }
    fl.l_type = F_UNLCK;
    fcntl(n->fd, F_OFD_SETLK, &fl);
    return r;
}
