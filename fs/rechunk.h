/* fs/rechunk: frames whose chunks have variable sizes or variable-length blocks (C-Blosc2
 * writes them) become writable by being rewritten with fixed-size chunks before the first
 * write, through fs/replace (a crash leaves the old or the new file whole), on all the
 * worker threads (the file's writer and readers wait for it).
 *
 * Owns: nothing. Caller holds n->lock (write). Calls: frame/, fs/backing, fs/share,
 * fs/replace, fs/write, fs/dirty, fs/read, fs/node, fs/options, fs/log. */
#ifndef B2FS_RECHUNK_H
#define B2FS_RECHUNK_H

#include "fs/node.h"

/* 0 (also when the chunks were fixed already), or a negative code; -EOPNOTSUPP when the
 * file is no longer at its name (it stays read only). */
int rechunk_make_fixed(b2fs_node *n);

#endif
