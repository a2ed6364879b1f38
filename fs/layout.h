/* fs/layout: where a file's bytes are in its frame's chunks.
 *
 * Every read, write and seek on a frame file goes through here to turn a range of the
 * file as the mount shows it into pieces of chunks. Today the mapping is the identity:
 * byte i of the file is byte i of the frame's contents, chunk i / chunksize (or, with
 * variable chunk sizes, the chunk whose span holds it). A second mapping (an array frame
 * shown as a .npy file: a header, then the items in C order) goes here, beside it.
 *
 * Owns: nothing (pure functions of the node). Callers hold n->lock (read or write).
 * Calls: frame/ (chunk spans of variable-size chunks). */
#ifndef B2FS_LAYOUT_H
#define B2FS_LAYOUT_H

#include <stdint.h>

#include "fs/node.h"

/* One piece of a file range that lies in one chunk. */
typedef struct layout_piece {
    int64_t chunk;
    uint64_t chunk_start;   /* file offset of the chunk's first byte */
    uint32_t chunk_len;     /* the chunk's length (chunksize for fixed chunks) */
    uint32_t within;        /* offset of the piece in the chunk */
    uint32_t len;           /* bytes of the piece */
} layout_piece;

/* The piece of [pos, end) that starts at pos (pos < end). Returns 0, or a frame code
 * (B2F_ERANGE and the like: the index does not cover pos; p->chunk then names the chunk
 * found, or -1). For fixed-size chunks, pos
 * may lie past the frame's end (a chunk that exists only as dirty data or as a hole). */
int layout_piece_at(const b2fs_node *n, uint64_t pos, uint64_t end, layout_piece *p);

#endif
