/* fs/replace: rewriting a node's whole file (compaction, rechunking, a commit that cannot
 * be made in place) through a temporary file renamed over it, so that a crash leaves one
 * whole file or the other.
 *
 * The new file keeps the mode, owner, xattrs, access and modification times of the old one
 * and its line
 * (B2FS_XATTR_FROM, so that other mounts with the old file open follow it); the node
 * then reads the new file, whose commit lock it holds (the caller releases it). Caller
 * holds n->lock (write) and no commit is running behind the writer. Calls: frame/,
 * fs/backing, fs/share (the line), fs/node, fs/log. */
#ifndef B2FS_REPLACE_H
#define B2FS_REPLACE_H

#include <stddef.h>

#include "fs/node.h"

/* Writes the new version of the file into fd (b2f_compact_into, b2f_rechunk_into ...). */
typedef int (*replace_writer)(b2_frame *f, int fd, char *err, size_t errlen);
/* what names the operation in logs. 0, or a negative code (logged; nothing changed);
 * not logged: -ESTALE, the file is no longer at the node's name; -EMLINK, it has other
 * hard links (which a new inode would leave behind). */
int replace_file(b2fs_node *n, replace_writer write, const char *what);

#endif
