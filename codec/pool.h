/* A small thread pool: runs one job's items on the calling thread and N workers.
 * Private to codec/. */
#ifndef B2FS_CODEC_POOL_H
#define B2FS_CODEC_POOL_H

#include <stdint.h>

typedef struct b2_pool b2_pool;

/* Called once per item; worker is 0 for the calling thread, 1..nworkers otherwise. */
typedef void (*b2_pool_fn)(void *arg, int worker, int32_t item);

/* nworkers extra threads (>= 1). NULL when threads cannot be started. */
b2_pool *b2_pool_new(int nworkers);
void b2_pool_free(b2_pool *p);
/* Runs fn for items 0..n-1, spread over all threads; returns when all are done. */
void b2_pool_run(b2_pool *p, int32_t n, b2_pool_fn fn, void *arg);

#endif
