/* fs/dirty: a node's uncommitted state, as data: chunk images newer than the frame,
 * compression jobs in flight, the chunks changed since the last commit, and the
 * uncommitted bytes of all nodes together.
 *
 * Owns: the fields of struct b2fs_node under "uncommitted state" and "what changed since
 * the last commit" (all under n->lock, write; dirty_image_of needs only the read lock),
 * the pool of idle chunk images (its own leaf mutex) and the total of uncommitted bytes
 * (atomic). Policy (when to compress, stage or commit) is fs/write's and fs/commit's.
 * Calls: frame/ (growing the frame with zero chunks), fs/node. */
#ifndef B2FS_DIRTY_H
#define B2FS_DIRTY_H

#include <stddef.h>
#include <stdint.h>

#include "fs/node.h"

/* The bytes of chunk c that are newer than the frame's (a dirty image, or the image of
 * a job in flight), or NULL; *valid: those from it on are zeros (not in the image). */
const uint8_t *dirty_image_of(b2fs_node *n, int64_t c, uint32_t *valid);
b2fs_dirty *dirty_find(b2fs_node *n, int64_t c);
b2fs_job *dirty_job_find(b2fs_node *n, int64_t c);
/* Makes img (chunksize bytes, owned from now on, the first valid of them set) the dirty
 * image of chunk c; a job in flight for c is superseded. 0 or -ENOMEM (img is then given
 * back). */
int dirty_add(b2fs_node *n, int64_t c, uint8_t *img, uint32_t valid, b2fs_dirty **out);
/* Clears d's image up to byte upto (the zeros it stands for become real). */
void dirty_clear_to(b2fs_dirty *d, uint32_t upto);
void dirty_drop(b2fs_node *n, b2fs_dirty *d);
size_t dirty_bytes(const b2fs_node *n);

/* Chunk images, recycled: a writer streaming through a file would otherwise fault in
 * (and zero) fresh memory for every chunk. The contents of a new one are undefined. */
uint8_t *dirty_img_get(size_t len);
void dirty_img_put(uint8_t *p, size_t len);

/* Notes a change to the contents: its time (n->written), and that the kernel's cached
 * pages of the file are to be dropped at its next open. */
void dirty_note_written(b2fs_node *n);
/* Notes that chunk c changed since the last commit. */
void dirty_touch(b2fs_node *n, int64_t c);
/* After a commit: nothing has changed since. */
void dirty_forget_changes(b2fs_node *n);
/* After chunk c ([start, start + len) of the contents) was handed to the frame. */
void dirty_note_staged(b2fs_node *n, int64_t c, uint64_t start, size_t len);
/* Grows the frame with zero chunks up to nbytes. 0 or a frame code. */
int dirty_grow_frame(b2fs_node *n, uint64_t nbytes);

/* Brings the node's share of the uncommitted-bytes total (dirty images, chunks in
 * flight, staged chunks) up to date; returns the new total of all nodes. */
size_t dirty_account(b2fs_node *n);

#endif
