/* nthreads: encoding and decoding with several threads gives the same bytes as one. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"
#include "tests/lib/testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(test_encode_same_bytes)
{
    static const struct { int codec, ts; const char *f; int32_t bs; int b1; } cases[] = {
        {B2_LZ4, 4, "shuffle", 4096, 0},
        {B2_ZSTD, 8, "delta,shuffle", 2048, 0},
        {B2_ZLIB, 2, "bitshuffle", 1000, 0},
        {B2_BLOSCLZ, 8, "trunc:20,delta,shuffle", 4096, 0},
        {B2_LZ4HC, 3, "shuffle", 777, 1},
        {B2_ZSTD, 1, "none", 0, 0},
        {B2_LZ4, 16, "bitshuffle", 1024, 1},
    };
    size_t len = 200003;
    uint8_t *in = malloc(len);
    tu_fill_float_series(in, len, 3);
    memset(in + 50000, 0, 20000);
    memset(in + 90000, 9, 20000);
    tu_fill_random(in + 150000, 10000, 4);
    uint8_t *one = malloc(len + B2_MAX_OVERHEAD), *many = malloc(len + B2_MAX_OVERHEAD);
    uint8_t *out1 = malloc(len), *outn = malloc(len);
    b2_dctx *d1 = b2_dctx_new(), *dn = b2_dctx_new();
    ck_assert_int_eq(b2_dctx_set_nthreads(dn, 4), 0);
    for (size_t c = 0; c < N(cases); c++) {
        b2_cparams p;
        b2_cparams_default(&p);
        p.codec = cases[c].codec;
        p.clevel = 5;
        p.typesize = cases[c].ts;
        p.blocksize = cases[c].bs;
        p.blosc1_format = cases[c].b1;
        ck_assert_int_eq(b2_filters_parse(cases[c].f, ',', p.filters, p.filters_meta), 0);
        b2_cctx *c1 = b2_cctx_new(&p), *cn = b2_cctx_new(&p);
        ck_assert_int_eq(b2_cctx_set_nthreads(cn, 3), 0);
        for (size_t sz = 1000; sz <= len; sz = sz * 4 + 3) {
            int n1 = b2_chunk_encode(c1, in, sz, one, len + B2_MAX_OVERHEAD);
            int nn = b2_chunk_encode(cn, in, sz, many, len + B2_MAX_OVERHEAD);
            ck_assert_int_gt(n1, 0);
            ck_assert_int_eq(n1, nn);
            ck_assert_msg(memcmp(one, many, (size_t)n1) == 0, "case %zu size %zu differs", c, sz);
            ck_assert_int_eq(b2_chunk_decode(d1, one, (size_t)n1, out1, sz), (int)sz);
            ck_assert_int_eq(b2_chunk_decode(dn, one, (size_t)n1, outn, sz), (int)sz);
            ck_assert(memcmp(out1, outn, sz) == 0);
        }
        /* Incompressible data falls back to memcpy the same way. */
        int n1 = b2_chunk_encode(c1, in + 150000, 10000, one, len);
        ck_assert_int_eq(n1, b2_chunk_encode(cn, in + 150000, 10000, many, len));
        ck_assert(memcmp(one, many, (size_t)n1) == 0);
        b2_cctx_free(c1);
        b2_cctx_free(cn);
    }
    b2_dctx_free(d1);
    b2_dctx_free(dn);
    free(in);
    free(one);
    free(many);
    free(out1);
    free(outn);
}
END_TEST

/* A reader that is safe to call from several threads (it records nothing). */
typedef struct span {
    const uint8_t *buf;
    size_t len;
} span;

static int span_read(void *opaque, uint64_t off, size_t len, void *out)
{
    const span *s = opaque;
    if (off > s->len || len > s->len - off)
        return B2E_IO;
    memcpy(out, s->buf + off, len);
    return 0;
}

/* Block ranges with threads through a reader, delta included. */
START_TEST(test_ranges_threads)
{
    size_t len = 64 * 1024 + 5;
    uint8_t *in = malloc(len);
    tu_fill_float_series(in, len, 8);
    b2_cparams p;
    b2_cparams_default(&p);
    p.typesize = 4;
    p.blocksize = 2048;
    ck_assert_int_eq(b2_filters_parse("delta,shuffle", ',', p.filters, p.filters_meta), 0);
    b2_cctx *c = b2_cctx_new(&p);
    uint8_t *chunk = malloc(len + B2_MAX_OVERHEAD);
    int cb = b2_chunk_encode(c, in, len, chunk, len + B2_MAX_OVERHEAD);
    ck_assert_int_gt(cb, 0);
    b2_dctx *d = b2_dctx_new();
    for (int t = 1; t <= 5; t += 2) {
        ck_assert_int_eq(b2_dctx_set_nthreads(d, t), 0);
        span sp = {chunk, (size_t)cb};
        b2_chunk_src src = {NULL, 0, span_read, &sp};
        b2_chunk_layout lay;
        ck_assert_int_eq(b2_chunk_layout_load(&lay, &src), 0);
        uint8_t *out = malloc(len);
        for (int32_t first = 0; first < lay.info.nblocks; first += 3) {
            int32_t count = lay.info.nblocks - first;
            size_t start = (size_t)first * 2048;
            int got = b2_chunk_decode_blocks(d, &lay, &src, first, count, out, len);
            ck_assert_int_eq(got, (int)(len - start));
            ck_assert(memcmp(out, in + start, len - start) == 0);
        }
        free(out);
        b2_chunk_layout_free(&lay);
    }
    /* A broken block in the middle is reported with threads too. */
    ck_assert_int_eq(b2_dctx_set_nthreads(d, 4), 0);
    b2_chunk_info info;
    ck_assert_int_eq(b2_chunk_parse_header(chunk, (size_t)cb, &info), 0);
    uint8_t *bad = malloc((size_t)cb);
    memcpy(bad, chunk, (size_t)cb);
    int32_t s10;
    memcpy(&s10, bad + 32 + 4 * 10, 4);
    memset(bad + 32 + 4 * 10, 0xff, 4);
    uint8_t *out = malloc(len);
    ck_assert_int_eq(b2_chunk_decode(d, bad, (size_t)cb, out, len), B2E_BSTARTS);
    memcpy(bad + 32 + 4 * 10, &s10, 4);
    memset(bad + s10, 0x7f, 4);
    ck_assert_int_eq(b2_chunk_decode(d, bad, (size_t)cb, out, len), B2E_STREAM);
    free(out);
    free(bad);
    b2_dctx_free(d);
    b2_cctx_free(c);
    free(chunk);
    free(in);
}
END_TEST

/* The reference chunks decode the same with threads. */
START_TEST(test_fixtures_threads)
{
    const char *dirs[] = {"blosc1", "codec"};
    b2_dctx *d = b2_dctx_new();
    ck_assert_int_eq(b2_dctx_set_nthreads(d, 4), 0);
    for (size_t k = 0; k < N(dirs); k++) {
        tu_manifest *m = tu_manifest_load(dirs[k]);
        ck_assert_ptr_nonnull(m);
        for (int r = 0; r < m->nrows; r++) {
            if (strcmp(tu_manifest_get(m, r, "note"), "codec-not-in-blosc2") == 0)
                continue;
            char name[300], hex[65];
            snprintf(name, sizeof name, "%s/%s", dirs[k], tu_manifest_get(m, r, "file"));
            size_t len;
            uint8_t *chunk = tu_read_file(tu_data_path(name), &len);
            long nbytes = atol(tu_manifest_get(m, r, "nbytes"));
            uint8_t *out = malloc((size_t)nbytes);
            ck_assert_int_eq(b2_chunk_decode(d, chunk, len, out, (size_t)nbytes), nbytes);
            tu_sha256_hex(out, (size_t)nbytes, hex);
            ck_assert_msg(strcmp(hex, tu_manifest_get(m, r, "sha256")) == 0, "%s", name);
            free(out);
            free(chunk);
        }
        tu_manifest_free(m);
    }
    b2_dctx_free(d);
}
END_TEST

START_TEST(test_bad_nthreads)
{
    b2_dctx *d = b2_dctx_new();
    ck_assert_int_eq(b2_dctx_set_nthreads(d, 0), B2E_PARAM);
    ck_assert_int_eq(b2_dctx_set_nthreads(d, B2_MAX_THREADS + 1), B2E_PARAM);
    ck_assert_int_eq(b2_dctx_set_nthreads(NULL, 2), B2E_PARAM);
    ck_assert_int_eq(b2_dctx_set_nthreads(d, 2), 0);
    ck_assert_int_eq(b2_dctx_set_nthreads(d, 1), 0);
    b2_dctx_free(d);
    b2_cparams p;
    b2_cparams_default(&p);
    b2_cctx *c = b2_cctx_new(&p);
    ck_assert_int_eq(b2_cctx_set_nthreads(c, -1), B2E_PARAM);
    ck_assert_int_eq(b2_cctx_set_nthreads(c, 8), 0);
    b2_cctx_free(c);
}
END_TEST

/* Threads of this process (tasks in /proc/self/task). */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A context made for several threads starts them only when a chunk has blocks for them:
 * one that only sees chunks of one block and a few bytes more (most small files) starts
 * none. (At least 3 more threads once they start: a sanitizer may start one of its own
 * with the first.) */
START_TEST(test_threads_started_on_need)
{
    size_t len = 4 << 16;
    uint8_t *in = malloc(len), *chunk = malloc(len + B2_MAX_OVERHEAD),
            *small = malloc(len + B2_MAX_OVERHEAD), *out = malloc(len);
    tu_fill_float_series(in, len, 5);
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = B2_LZ4;
    p.typesize = 4;
    p.blocksize = 1 << 16;
    b2_cctx *c = b2_cctx_new(&p);
    ck_assert_int_eq(b2_cctx_set_nthreads(c, 4), 0);
    int before = thread_count();
    const int32_t small_len = (1 << 16) + 6;   /* a block, and a block of 6 bytes */
    int n1 = b2_chunk_encode(c, in, small_len, small, len + B2_MAX_OVERHEAD);
    ck_assert_int_gt(n1, 0);
    b2_chunk_info si;
    ck_assert_int_eq(b2_chunk_parse_header(small, (size_t)n1, &si), 0);
    ck_assert_int_eq(si.blocksize, 1 << 16);
    ck_assert_int_eq(thread_count(), before);
    int n4 = b2_chunk_encode(c, in, len, chunk, len + B2_MAX_OVERHEAD);
    ck_assert_int_gt(n4, 0);
    int encoding = thread_count();
    ck_assert_int_ge(encoding, before + 3);
    b2_dctx *d = b2_dctx_new();
    ck_assert_int_eq(b2_dctx_set_nthreads(d, 4), 0);
    ck_assert_int_eq(b2_chunk_decode(d, small, (size_t)n1, out, len), small_len);
    ck_assert(memcmp(out, in, (size_t)small_len) == 0);
    ck_assert_int_eq(thread_count(), encoding);
    ck_assert_int_eq(b2_chunk_decode(d, chunk, (size_t)n4, out, len), (int)len);
    ck_assert_int_ge(thread_count(), encoding + 3);
    ck_assert(memcmp(out, in, len) == 0);
    b2_dctx_free(d);
    b2_cctx_free(c);
    free(in);
    free(chunk);
    free(small);
    free(out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec-threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_encode_same_bytes);
    tcase_add_test(tc, test_ranges_threads);
    tcase_add_test(tc, test_fixtures_threads);
    tcase_add_test(tc, test_bad_nthreads);
    tcase_add_test(tc, test_threads_started_on_need);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
