/* fs/ops: what each file-system call does, given mount paths ("/a/b").
 *
 * Mount paths are mapped by fs/paths; frame files go through nodes (fs/node) and the
 * operations of fs/file, everything else is passed through to the backing entry. Every
 * function returns 0 (or a count) or -errno, with codes from the layers below mapped
 * once through b2fs_fuse_result (fs/errmap); fs/ll hands that errno to the kernel.
 * Functions taking fi use the open handle in it when there is one (then path may be
 * NULL: the file may have no name left).
 *
 * Owns: the open-file handles (fi->fh; one per open, used by one call at a time per
 * handle as the kernel guarantees). Sets the node table's hooks and starts the cache and
 * the workers at mount; commits everything and stops them at unmount. Calls: fs/file,
 * fs/xattr (directory defaults for new files), fs/commit, fs/node, fs/paths, fs/backing,
 * fs/bcache, fs/wpool, fs/push (holds, and its stop at unmount), fs/options, fs/log,
 * fs/errmap, libfuse (buffers). */
#ifndef B2FS_OPS_H
#define B2FS_OPS_H

#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include "fs/node.h"

/* Who made the call: owner of what it creates (when the daemon runs as root). */
typedef struct b2fs_caller {
    uid_t uid;
    gid_t gid;
} b2fs_caller;

int ops_getattr(const char *path, struct stat *st, struct fuse_file_info *fi);
int ops_readlink(const char *path, char *buf, size_t size);
int ops_mknod(const char *path, mode_t mode, dev_t rdev, const b2fs_caller *who);
int ops_mkdir(const char *path, mode_t mode, const b2fs_caller *who);
int ops_symlink(const char *target, const char *path, const b2fs_caller *who);
int ops_unlink(const char *path);
int ops_rmdir(const char *path);
int ops_rename(const char *from, const char *to, unsigned int flags);
int ops_link(const char *from, const char *to);
/* A new file still plain at path (fs/convert) is made a frame now, where it can be. */
void ops_frame_now(const char *path);
int ops_chmod(const char *path, mode_t mode, struct fuse_file_info *fi);
int ops_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi);
int ops_truncate(const char *path, off_t size, struct fuse_file_info *fi);
int ops_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi);
int ops_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi);
/* Open and create fill fi->fh (and fi->keep_cache); release frees it. */
int ops_open(const char *path, struct fuse_file_info *fi);
int ops_create(const char *path, mode_t mode, const b2fs_caller *who, struct fuse_file_info *fi);
int ops_read(struct fuse_file_info *fi, char *buf, size_t size, off_t off);
/* *mode_changed: the write dropped set-user-ID or set-group-ID (a handle written past the
 * page cache, ops_create), which the kernel has yet to learn. */
ssize_t ops_write_buf(struct fuse_file_info *fi, struct fuse_bufvec *buf, off_t off,
                      const b2fs_caller *who, int *mode_changed);
int ops_flush(struct fuse_file_info *fi);
int ops_fsync(struct fuse_file_info *fi, int datasync);
int ops_release(struct fuse_file_info *fi);
/* Another reference to an open handle, for a call made on a file with no name left
 * (fs/ll borrows one of the file's handles); ops_handle_drop gives it back. The handle
 * stays until its release and every borrower are done. */
void ops_handle_hold(uint64_t fh);
void ops_handle_drop(uint64_t fh);
off_t ops_lseek(struct fuse_file_info *fi, off_t off, int whence);
int ops_statfs(struct statvfs *sv);

/* At mount (rekeyed: told when a frame's backing file changes) and unmount. */
void ops_mount(struct fuse_conn_info *conn, node_rekey_fn rekeyed);
void ops_unmount(void);

#endif
