/* fs/file: the operations on a frame file that the FUSE callbacks call, each taking the
 * node's lock it needs, and the commit policy: when a writer's data is committed behind
 * it, when it waits, when a call commits before it returns.
 *
 * Owns: no state. Every function takes n->lock itself (callers hold no node lock) and
 * works on a node the caller holds a reference to. Returns 0 or a count, or a negative
 * code (-errno, or a frame/codec code that the callback maps). Calls: fs/commit,
 * fs/rechunk, fs/plain, fs/write, fs/read, fs/share, fs/dirty, fs/backing, fs/node,
 * fs/options, fs/log, frame/. */
#ifndef B2FS_FILE_H
#define B2FS_FILE_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fs/node.h"
#include "fs/write.h"

/* Creates a new, empty frame file for the mount name loc->mname (loc from loc_resolve,
 * kind NONE) with parameters p, mode and owner uid:gid (-1: as the daemon makes it),
 * stored as NAME.b2frame (STEM.npy as STEM.b2nd, an array once a .npy file is written
 * in it): written under a temporary name and renamed into place. path is the mount path
 * (for logs). The node comes with a reference. */
int file_create(const b2fs_loc *loc, const char *path, const b2f_params *p, mode_t mode,
                uid_t uid, gid_t gid, b2fs_node **out);
/* Checks an open for flags (O_ACCMODE, O_TRUNC) and applies O_TRUNC (an array's view
 * becomes an empty ordinary frame); *keep_cache says
 * whether the kernel may keep what it cached of the file. */
int file_open(b2fs_node *n, int flags, int *keep_cache);
void file_stat(b2fs_node *n, struct stat *st);
ssize_t file_read(b2fs_node *n, char *buf, size_t len, uint64_t off);
/* off FILE_AT_END: at the end of the contents as they are when the write runs (O_APPEND). */
#define FILE_AT_END UINT64_MAX
ssize_t file_write(b2fs_node *n, size_t len, uint64_t off, write_fill fill, void *ctx);
/* With commit_now (no open handle will flush it), the change is committed before return. */
int file_truncate(b2fs_node *n, uint64_t size, int commit_now);
int file_fallocate(b2fs_node *n, int mode, uint64_t off, uint64_t len, int commit_now);
off_t file_seek(b2fs_node *n, off_t off, int whence);
/* Commits what is staged (flush, fsync); durable: fsync. */
int file_commit(b2fs_node *n, int durable);
/* Commits at a close of a handle (flush, and release for writes through a mapping after
 * it); after a handle that wrote, a .npy file written as STEM.b2nd becomes the array
 * frame it holds (fs/rechunk). With plain_fd (the close of a writer that is the node's
 * only user), a small file its frame does not make smaller becomes a plain file
 * (fs/plain): 1 with the plain file open in *plain_fd. Else 0 or a negative code. */
int file_close(b2fs_node *n, int wrote, int *plain_fd);
/* Sets the times after committing (a later commit would overwrite them: cp -p, tar). */
int file_utimens(b2fs_node *n, const struct timespec tv[2]);
int file_chmod(b2fs_node *n, mode_t mode);
/* What a write by a caller without CAP_FSETID does to the mode of the file written (the
 * kernel does it itself unless it leaves writes to the daemon, fs/ops): set-user-ID goes,
 * and set-group-ID where group execute is set. 1 when it changed the mode, else 0 or
 * -errno. file_drop_setid_fd does it to a plain file's descriptor. */
int file_drop_setid(b2fs_node *n);
int file_drop_setid_fd(int fd);
int file_chown(b2fs_node *n, uid_t uid, gid_t gid);

#endif
