/* Rewriting a node's whole file (replace.h). */
#include "fs/replace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/backing.h"
#include "fs/log.h"
#include "fs/share.h"

int replace_file(b2fs_node *n, replace_writer write, const char *what)
{
    struct stat st;
    if (n->dirfd < 0 || fstatat(n->dirfd, n->name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        st.st_ino != n->ino || st.st_dev != n->dev)
        return -ESTALE;   /* deleted or replaced: nothing to rename over */
    if (st.st_nlink > 1)
        return -EMLINK;   /* a new inode under one name would split it from its hard links */
    char tmp[64], err[200] = "";
    int fd = backing_create_temp(n->dirfd, st.st_mode, tmp, sizeof tmp);
    if (fd < 0) {
        b2fs_log(LOG_WARNING, "%s: %s: cannot create a temporary file: %s", n->path, what,
                 strerror(-fd));
        return fd;
    }
    int r = backing_copy_attrs(n->fd, fd, st.st_uid, st.st_gid);
    if (r < 0)
        b2fs_log(LOG_WARNING, "%s: %s: cannot give the new file its owner: %s", n->path, what,
                 strerror(-r));
    char from[64];
    share_lineage(n, from, sizeof from);
    fsetxattr(fd, B2FS_XATTR_FROM, from, strlen(from), 0);
    b2_frame *nf = NULL;
    r = write(n->frame, fd, err, sizeof err);
    if (r == 0)
        r = b2f_open(&nf, fd, B2F_RDWR, NULL, err, sizeof err);
    if (r == 0 && fdatasync(fd) < 0)
        r = -errno;
    if (r == 0)
        r = node_rename_over(n, n->dirfd, tmp, n->name, fd);
    if (r < 0)
        unlinkat(n->dirfd, tmp, 0);
    else
        backing_sync_dir(n->dirfd);
    if (r < 0) {
        b2fs_log(LOG_WARNING, "%s: %s failed: %s%s%s", n->path, what, b2f_strerror(r),
                 err[0] ? ": " : "", err);
        if (nf)
            b2f_close(nf);
        close(fd);
        return r;
    }
    /* the contents are the same: so are the times the file shows */
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    futimens(fd, times);
    b2f_close(n->frame);
    close(n->fd);
    n->frame = nf;
    n->fd = fd;
    node_apply_policy(n);
    return 0;
}
