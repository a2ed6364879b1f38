/* fs/layout: where a file's bytes are in its frame's chunks.
 *
 * Every read, write and seek on a frame file goes through here to turn a range of the
 * file as the mount shows it into pieces of chunks. Two mappings:
 * - the identity: byte i of the file is byte i of the frame's contents, chunk
 *   i / chunksize (or, with variable chunk sizes, the chunk whose span holds it);
 * - the .npy view of an array frame (STEM.b2nd with a b2nd metalayer): the file is the
 *   .npy header NumPy would write, then the items in C order; a run of items along the
 *   array lies in one block of one chunk (frame/ b2f_ndmap).
 *
 * Owns: the view of a node (n->view, set with the frame by fs/node, under n->lock
 * (write); read under n->lock). Otherwise pure functions of the node; callers hold
 * n->lock (read or write). Calls: frame/, fs/paths (naming rules). */
#ifndef B2FS_LAYOUT_H
#define B2FS_LAYOUT_H

#include <stdint.h>

#include "fs/node.h"

/* The .npy view of an array frame. */
typedef struct b2fs_view {
    b2f_ndinfo nd;
    b2f_ndmap map;
    uint64_t size;          /* the file: header and items */
    int header_len;
    char header[1024];
} b2fs_view;

/* One piece of a file range that lies in one chunk, or in a view's header (chunk
 * LAYOUT_HEADER, within: the offset in the header). */
#define LAYOUT_HEADER (-2)
typedef struct layout_piece {
    int64_t chunk;
    uint64_t chunk_start;   /* file offset of the chunk's first byte (identity only) */
    uint32_t chunk_len;     /* the chunk's length (chunksize for fixed chunks) */
    uint32_t within;        /* offset of the piece in the chunk */
    uint32_t len;           /* bytes of the piece */
} layout_piece;

/* The piece of [pos, end) that starts at pos (pos < end). Returns 0, or a frame code
 * (B2F_ERANGE and the like: the index does not cover pos; p->chunk then names the chunk
 * found, or -1). For fixed-size chunks, pos
 * may lie past the frame's end (a chunk that exists only as dirty data or as a hole). */
int layout_piece_at(const b2fs_node *n, uint64_t pos, uint64_t end, layout_piece *p);

/* The view of the node's frame when its backing name ends in .b2nd and the frame is an
 * array with a NumPy dtype whose chunks are laid out as its metalayer says; NULL (the
 * contents show as they are) otherwise, or without memory. free() it. */
b2fs_view *layout_view_make(const b2fs_node *n);
/* The file offset just past the last byte of block b of chunk c, which spans [bstart,
 * bstart + blen) of the chunk (a view's block holds items from many places; b < 0: the
 * whole chunk); 0 for a block of a view's padding only. */
uint64_t layout_block_end(const b2fs_node *n, int64_t c, int32_t b, uint32_t bstart,
                          uint32_t blen);
/* The size of the file as the mount shows it. */
uint64_t layout_size(const b2fs_node *n);

#endif
