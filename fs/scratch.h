/* fs/scratch: one reusable buffer per thread, for an encoded chunk (a compression job)
 * or a decoded block a read needs only part of: reused pages instead of fresh ones for
 * every chunk or block.
 *
 * Owns: the per-thread buffers (thread-local: no lock). Buffers over SCRATCH_KEEP are
 * not kept: scratch_done frees them. Calls: libc only. */
#ifndef B2FS_SCRATCH_H
#define B2FS_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#define SCRATCH_KEEP ((size_t)4 << 20)

/* len bytes for this thread until its next scratch_get, or NULL. */
uint8_t *scratch_get(size_t len);
void scratch_done(uint8_t *p, size_t len);

#endif
