/* fs/rechunk: a frame rewritten whole in another layout, through fs/replace (a crash
 * leaves the old or the new file whole):
 * - frames whose chunks have variable sizes or variable-length blocks (C-Blosc2 writes
 *   them) become writable by being rewritten with fixed-size chunks before the first
 *   write, on all the worker threads (the file's writer and readers wait for it);
 * - a .npy file written through the mount as STEM.b2nd becomes the array frame it holds
 *   when it is closed; an array truncated to nothing (O_TRUNC: cp, np.save over it)
 *   becomes an empty ordinary frame, to be written as a .npy file again.
 *
 * Owns: nothing. Caller holds n->lock (write). Calls: frame/, fs/backing, fs/share,
 * fs/replace, fs/write, fs/dirty, fs/read, fs/node, fs/options, fs/log. */
#ifndef B2FS_RECHUNK_H
#define B2FS_RECHUNK_H

#include "fs/node.h"

/* 0 (also when the chunks were fixed already), or a negative code; -EOPNOTSUPP when the
 * file is no longer at its name (it stays read only). */
int rechunk_make_fixed(b2fs_node *n);
/* When n is an ordinary frame named STEM.b2nd whose contents are a .npy file that b2fs
 * stores as an array, rewrites it as that array (the mount then shows its .npy view).
 * 0 also when it stays as it is (logged once at level info, with the reason); a negative
 * code when the rewrite failed (logged; the file is unchanged). Nothing may be staged. */
int rechunk_npy_to_array(b2fs_node *n);
/* Makes the array frame n an empty ordinary frame with the same codec parameters and
 * vlmetalayers. 0 or a negative code (logged). */
int rechunk_array_clear(b2fs_node *n);

#endif
