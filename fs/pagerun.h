/* Contiguous runs of fixed-size pages in one region, for the block cache: a decoded
 * block is written straight into its run and read back with one copy. Free runs merge
 * with free neighbours (a length tag at both ends of every run), so the pages a block
 * needs turn up once enough of the cache is freed around them. Pages never handed out
 * (the fresh part at the top) are used only when no freed run fits, so the part of the
 * region ever touched grows only as far as the cache fills. Not thread-safe: the cache's
 * lock covers it. */
#ifndef B2FS_PAGERUN_H
#define B2FS_PAGERUN_H

#include <stddef.h>
#include <stdint.h>

#define PAGERUN_NONE UINT32_MAX
#define PAGERUN_CLASSES 64 /* runs of 1..63 pages have a list each; longer ones share one */

typedef struct pagerun_pool {
    uint32_t npages;
    uint32_t fresh; /* pages [fresh, npages) have never been handed out */
    uint32_t nfree; /* free pages, fresh ones included */
    uint32_t *tag;  /* at both ends of each run: length << 1 | free */
    uint32_t *next, *prev; /* free-list links, at the first page of each free run */
    uint32_t head[PAGERUN_CLASSES + 1];
    uint64_t nonempty; /* bit c: list c (1..63) is not empty */
} pagerun_pool;

/* Bytes of bookkeeping a pool of npages needs (the meta argument of pagerun_init). */
size_t pagerun_meta_bytes(uint32_t npages);
/* meta: pagerun_meta_bytes(npages) bytes, or NULL with npages 0 (a pool with no pages). */
void pagerun_init(pagerun_pool *p, uint32_t npages, void *meta);
/* First page of a run of n free pages, now in use, or PAGERUN_NONE. */
uint32_t pagerun_alloc(pagerun_pool *p, uint32_t n);
void pagerun_free(pagerun_pool *p, uint32_t first, uint32_t n);

#endif
