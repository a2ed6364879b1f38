/* fs/bcache: decoded blocks shared by all open files, bounded by -o cache_size (LRU).
 *
 * Owns: the cache region (pages mapped once at mount, runs of pages per block:
 * fs/pagerun) and its entries. Everything is guarded by the cache's one mutex, a leaf
 * lock (nothing else is taken under it; callers may hold node locks). A key is (node
 * generation, chunk, block): when a node's contents change it takes a new generation
 * and its old blocks age out. Calls: fs/pagerun, fs/log (once, when the region cannot be
 * mapped). */
#ifndef B2FS_BCACHE_H
#define B2FS_BCACHE_H

#include <stddef.h>
#include <stdint.h>

/* Leaves the cache off when the region cannot be mapped. A second init needs a
 * bcache_shutdown first. */
void bcache_init(size_t bytes);
void bcache_shutdown(void);
/* Whether the cache is on (a region is mapped). */
int bcache_enabled(void);
/* Copies [off, off + len) of block `block` of chunk c of node generation gen into dst
 * if cached (len 0: only asks whether it is). */
int bcache_get(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len);
/* bcache_get for a reader streaming through the file: when the copy reaches the block's
 * end the block leaves the cache (the kernel's page cache has it now), so a long
 * sequential read recycles a few pages instead of pushing out every other file's
 * blocks. */
int bcache_take(uint64_t gen, int64_t c, int32_t block, size_t off, void *dst, size_t len);
void bcache_put(uint64_t gen, int64_t c, int32_t block, const void *src, size_t len);
/* Room for a block of len bytes in the cache, contiguous, for a decoder to write the block
 * into: NULL when the cache is off or has no such room (other threads hold the rest, or
 * evicting a few blocks did not free a long enough run). The caller then either
 * publishes it under its key, which makes it a cached block (unless another thread put
 * that key first: then the room is given back), or cancels it. */
typedef struct bcache_entry bcache_entry;
uint8_t *bcache_reserve(size_t len, bcache_entry **slot);
void bcache_publish(bcache_entry *slot, uint64_t gen, int64_t c, int32_t block);
void bcache_cancel(bcache_entry *slot);
/* Bytes of cache pages holding blocks now (<= cache_size), and bytes of pages ever
 * used (what the cache adds to the daemon's resident memory; <= cache_size too). */
size_t bcache_used(void);
size_t bcache_touched(void);

#endif
