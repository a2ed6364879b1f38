/* fs/ll: the mount's side of the kernel protocol (libfuse's low-level API).
 *
 * Each request names files by inode id; fs/inode turns ids into mount paths and records
 * the ids handed out at lookups, fs/ops does the work, and the reply goes back here
 * with entry and attribute timeouts of one second. Hard links are one inode to the
 * kernel (fs/inode), so a change through one name shows through all at once.
 * Directories are listed into a snapshot at opendir (and again when a listing starts
 * over at offset 0), served by offset.
 *
 * Owns: the directory handles (one per opendir, used by one call at a time), and the
 * session notifications go to (set once before the first request). Calls: fs/inode,
 * fs/ops, fs/xattr, fs/paths (listing), fs/backing (read-ahead of the frames a listing
 * with attributes opens), fs/prefetch (listings and lookups; its thread started and
 * stopped here), fs/push (after a read's reply), fs/options, fs/log, libfuse. */
#ifndef B2FS_LL_H
#define B2FS_LL_H

#include <fuse_lowlevel.h>

extern const struct fuse_lowlevel_ops b2fs_ll_ops;
/* The session the ops serve, for the notifications they send; before serving. */
void ll_bind(struct fuse_session *se);

#endif
