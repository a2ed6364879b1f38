/* Per-thread codec state and scratch buffers, and the pool that runs them. Idle workers
 * (codec state and buffers) of freed contexts are kept for the next contexts made, as a
 * daemon makes one context per file written. The list of idle ones is process-wide, under
 * its own mutex. (zstd's contexts are not a worker's: codec/stream_codecs.c lends them for
 * each call.) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_private.h"
#include "codec/pool.h"

int b2_grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (*cap >= need)
        return B2E_OK;
    uint8_t *p = realloc(*buf, need);
    if (p == NULL)
        return B2E_NOMEM;
    *buf = p;
    *cap = need;
    return B2E_OK;
}

#define IDLE_MAX 4

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static b2_worker idle[IDLE_MAX];   /* idle_lock */
static int nidle;                  /* idle_lock */

static void worker_free(b2_worker *w)
{
    b2_codec_state_release(&w->cs);
    free(w->scratch);
    free(w->cbuf);
    memset(w, 0, sizeof *w);
}

/* w (zeroed) becomes an idle worker, if there is one. */
static void worker_take_idle(b2_worker *w)
{
    pthread_mutex_lock(&idle_lock);
    if (nidle > 0)
        *w = idle[--nidle];
    pthread_mutex_unlock(&idle_lock);
}

/* Keeps w for a later context (its dictionary state dropped), or frees it. */
static void worker_put_idle(b2_worker *w)
{
    if (w->cs.zstd_ddict || w->cs.dict_copy) {
        worker_free(w);
        return;
    }
    w->cs.dict = NULL;
    w->cs.dict_len = 0;
    pthread_mutex_lock(&idle_lock);
    int kept = nidle < IDLE_MAX;
    if (kept)
        idle[nidle++] = *w;
    pthread_mutex_unlock(&idle_lock);
    if (kept)
        memset(w, 0, sizeof *w);
    else
        worker_free(w);
}

void b2_workers_release(b2_workers *ws)
{
    b2_pool_free(ws->pool);
    for (int i = 0; i < ws->n; i++)
        worker_put_idle(&ws->w[i]);
    free(ws->w);
    memset(ws, 0, sizeof *ws);
}

int b2_workers_set(b2_workers *ws, int nthreads)
{
    if (nthreads < 1 || nthreads > B2_MAX_THREADS)
        return B2E_PARAM;
    if (nthreads == ws->n)
        return B2E_OK;
    b2_workers_release(ws);
    ws->w = calloc((size_t)nthreads, sizeof *ws->w);
    if (ws->w == NULL) {
        if (nthreads > 1)
            b2_workers_set(ws, 1);   /* keep a usable context */
        return B2E_NOMEM;
    }
    for (int i = 0; i < nthreads; i++)
        worker_take_idle(&ws->w[i]);
    ws->n = nthreads;
    return B2E_OK;
}

b2_pool *b2_workers_pool(b2_workers *ws, int64_t bytes, int32_t blocksize)
{
    /* a last block of a few bytes is not worth a thread: a file of 19,286 bytes in items of
     * 8 is a block and one of 6 bytes */
    if (ws->n < 2 || bytes - blocksize < blocksize / 4)
        return NULL;
    if (ws->pool == NULL)
        ws->pool = b2_pool_new(ws->n - 1);
    return ws->pool;
}
