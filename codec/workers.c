/* Per-thread codec state and scratch buffers, and the pool that runs them. */
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

void b2_workers_release(b2_workers *ws)
{
    b2_pool_free(ws->pool);
    for (int i = 0; i < ws->n; i++) {
        b2_codec_state_release(&ws->w[i].cs);
        free(ws->w[i].scratch);
        free(ws->w[i].cbuf);
    }
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
    if (ws->w == NULL)
        return B2E_NOMEM;
    ws->n = nthreads;
    if (nthreads > 1 && (ws->pool = b2_pool_new(nthreads - 1)) == NULL) {
        b2_workers_set(ws, 1);   /* keep a usable context */
        return B2E_NOMEM;
    }
    return B2E_OK;
}
