/* Shared by the codec test programs: a chunk source that records what it reads. */
#ifndef B2FS_TEST_CODEC_HELPERS_H
#define B2FS_TEST_CODEC_HELPERS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"

#define RECORDED_MAX 4096

/* A reader over a buffer that logs every (offset, length) read and can fail. */
typedef struct rec_reader {
    const uint8_t *buf;
    size_t len;
    int nreads;
    uint64_t off[RECORDED_MAX];
    size_t n[RECORDED_MAX];
    int fail_after;    /* < 0: never fail */
} rec_reader;

static inline int rec_read(void *opaque, uint64_t off, size_t len, void *out)
{
    rec_reader *r = opaque;
    if (r->fail_after >= 0 && r->nreads >= r->fail_after)
        return B2E_IO;
    if (off > r->len || len > r->len - off)
        return B2E_IO;
    if (r->nreads < RECORDED_MAX) {
        r->off[r->nreads] = off;
        r->n[r->nreads] = len;
    }
    r->nreads++;
    memcpy(out, r->buf + off, len);
    return 0;
}

static inline b2_chunk_src rec_src(rec_reader *r, const uint8_t *buf, size_t len)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->fail_after = -1;
    b2_chunk_src s = {NULL, 0, rec_read, r};
    return s;
}

static inline b2_chunk_src mem_src(const uint8_t *buf, size_t len)
{
    b2_chunk_src s = {buf, len, NULL, NULL};
    return s;
}

#endif
