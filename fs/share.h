/* fs/share: several b2fs mounts over one backing directory (on one host, or on hosts of a
 * cluster file system). A commit happens under the commit lock (fs/backing); before it,
 * the committing node checks whether another mount has committed (the file changed size
 * or time) or replaced the file (compaction renames a new inode into place). If so it
 * opens the current file and puts the chunks it changed since its last commit (and its
 * size and vlmetalayers, when it changed them) on top: chunks it did not touch keep the
 * other mount's contents, and its own chunks go after the current end of the file, never
 * over live bytes.
 *
 * Owns: the line of a file (B2FS_XATTR_FROM). Callers hold n->lock (write), except
 * share_check, which takes it. Calls: frame/, fs/backing, fs/dirty, fs/node, fs/log. */
#ifndef B2FS_SHARE_H
#define B2FS_SHARE_H

#include <stddef.h>

#include "fs/backing.h"
#include "fs/node.h"

/* Takes the commit lock on n->fd (waiting for other mounts' commits) and releases it;
 * a failure is logged. 0 or -errno. */
int share_lock(b2fs_node *n);
void share_unlock(b2fs_node *n);
/* On a file made by compaction: "dev:ino" of the first file of its line (the file that
 * was compacted first; kept through later compactions). */
#define B2FS_XATTR_FROM B2FS_OWN_PREFIX "from"
/* The line the node's file belongs to: its user.b2fs.from, or its own "dev:ino". */
void share_lineage(b2fs_node *n, char *out, size_t cap);
/* When another mount committed the file since this node read it, or replaced it
 * (compaction), re-reads it and applies this node's changes on top. With committing (the
 * commit lock on n->fd is held), a replacing file gets locked too. 0, or -errno / a frame
 * code (logged). */
int share_rebase_if_changed(b2fs_node *n, int committing);
/* For readers (at most once a second): picks up other mounts' commits when this node has
 * no changes of its own. Call without locks. */
void share_check(b2fs_node *n);

#endif
