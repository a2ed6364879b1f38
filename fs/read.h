/* fs/read: the read path. A read of a frame file decodes only the blocks it touches,
 * through the block cache; bytes newer than the frame come from the node's dirty images.
 * Sequential readers get the next chunks decoded ahead of them on the workers.
 *
 * Owns: the readers' fields of struct b2fs_node (ra_*, under n->ra_lock; bad_logged and
 * the decode counters, atomic), the per-thread decode contexts, the count of read-ahead
 * tasks queued (atomic). Callers hold n->lock (read is enough); read-ahead tasks take it
 * with a try (never waiting: a writer may be waiting for jobs queued behind them) and hold
 * a reference. Damage is logged once per chunk and gives -EIO. Calls: frame/, fs/layout,
 * fs/dirty (lookups only), fs/bcache, fs/wpool, fs/scratch, fs/node, fs/push (offers
 * only), fs/log. */
#ifndef B2FS_READ_H
#define B2FS_READ_H

#include <stdint.h>
#include <sys/types.h>

#include "fs/node.h"

/* Reads [off, off + len) of the contents (short at the end of the file). */
ssize_t read_range(b2fs_node *n, char *buf, size_t len, uint64_t off);

/* What read_chunk_part leaves in the block cache: every block it decoded (KEEP); for a
 * sequential reader that will not come back, none that it read to their end (STREAM);
 * for read-ahead, none that the sequential reader already went past (AHEAD). RANDOM is
 * KEEP for a reader that is not streaming: a block it reads part of is also offered to
 * the kernel's page cache whole (fs/push). */
enum { READ_KEEP, READ_STREAM, READ_AHEAD, READ_RANDOM };
/* Fills [off, off + len) of chunk c of the frame into dst through the block cache (a
 * NULL dst only fills the cache). 0 or a negative code (damage: -EIO, logged). */
int read_chunk_part(b2fs_node *n, int64_t c, uint32_t off, uint32_t len, uint8_t *dst,
                    int mode);
/* SEEK_DATA / SEEK_HOLE over the contents: holes are chunks without storage (zero or
 * uninitialised special chunks, or past the frame's end) that hold no dirty data. */
off_t read_seek(b2fs_node *n, off_t off, int whence);
/* Forgets the sequential reader (the chunks were renumbered). */
void read_reset(b2fs_node *n);

#endif
