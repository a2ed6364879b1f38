/* Shared by the codec test programs: a chunk source that records what it reads. */
#ifndef B2FS_TEST_CODEC_HELPERS_H
#define B2FS_TEST_CODEC_HELPERS_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"

#define RECORDED_MAX 4096

/* Every B2E_* error code of codec/chunk.h. */
#define B2E_ALL_CODES                                                                      \
    B2E_NOMEM, B2E_PARAM, B2E_TRUNCATED, B2E_HEADER, B2E_VERSION, B2E_CODEC, B2E_FILTER,   \
        B2E_BSTARTS, B2E_STREAM, B2E_CORRUPT, B2E_DST_SMALL, B2E_IO, B2E_DICT,              \
        B2E_BLOSCLZ_MISSING

static inline int is_codec_error(int code)
{
    static const int all[] = {B2E_ALL_CODES};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (code == all[i])
            return 1;
    return 0;
}

/* Error codes of b2fs's own: all below the -errno space, none shared, each with a text
 * of its own from describe. */
static inline void check_own_codes(const int *codes, size_t n, const char *(*describe)(int))
{
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_lt(codes[i], -B2_ERRNO_MAX);
        ck_assert(!b2_is_errno(codes[i]));
        ck_assert_str_ne(describe(codes[i]), "unknown error");
        for (size_t j = 0; j < i; j++) {
            ck_assert_int_ne(codes[i], codes[j]);
            ck_assert_str_ne(describe(codes[i]), describe(codes[j]));
        }
    }
}

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
