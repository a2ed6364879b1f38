/* fs/ops: the FUSE callbacks (libfuse's high-level path API) and the op table.
 *
 * Mount paths are mapped by fs/paths; frame files go through nodes (fs/node) and the
 * operations of fs/file, everything else is passed through to the backing entry. This is
 * the FUSE boundary: every callback that can get a code from the layers below returns it
 * through b2fs_fuse_result (fs/errmap). Owns: the open-file handles (one per open, used
 * by one FUSE call at a time per handle as the kernel guarantees). Sets the node table's
 * retire hook and starts the cache and the workers at mount; commits everything and stops
 * them at unmount. Calls: fs/file, fs/xattr, fs/commit (at unmount), fs/node, fs/paths,
 * fs/backing, fs/bcache, fs/wpool, fs/options, fs/log, fs/errmap, libfuse. */
#ifndef B2FS_OPS_H
#define B2FS_OPS_H

#include <fuse.h>

extern const struct fuse_operations b2fs_ops;

#endif
