/* Checksums of chunks as stored (frame/sums.c): the spans of a chunk's sums cover it
 * whole, one after the other, and a bit flipped anywhere changes the sum of its span and
 * no other, for compressed chunks of every codec, stored (memcpyed) chunks and special
 * chunks; the table reads back what was put and refuses every truncation and a count
 * larger than it holds; the fingerprint is the hash of the parts one after the other and
 * changes with any byte. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "frame/frame_int.h"
#include "tests/lib/testutil.h"

static uint8_t *encode(int codec, int clevel, const uint8_t *data, size_t n, int32_t *cbytes)
{
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = codec;
    p.clevel = clevel;
    p.typesize = 4;
    p.blocksize = 16384;
    b2_cctx *c = b2_cctx_new(&p);
    ck_assert_ptr_nonnull(c);
    uint8_t *out = malloc(n + B2_MAX_OVERHEAD);
    int r = b2_chunk_encode(c, data, n, out, n + B2_MAX_OVERHEAD);
    b2_cctx_free(c);
    ck_assert_int_gt(r, 0);
    *cbytes = r;
    return out;
}

/* The spans of chunk's sums, in order: they must tile [0, cbytes). */
static int spans_of(const uint8_t *chunk, int32_t cbytes, uint32_t *start, uint32_t *end, int cap)
{
    b2_chunk_src src = {.mem = chunk, .mem_len = (size_t)cbytes};
    b2_chunk_layout lay;
    ck_assert_int_eq(b2_chunk_layout_load(&lay, &src), 0);
    int n = b2f_sum_spans(&lay, cbytes, start, end, cap);
    ck_assert_int_eq(n, b2f_sum_count(&lay));
    b2_chunk_layout_free(&lay);
    return n;
}

static void check_chunk(uint8_t *chunk, int32_t cbytes, int min_sums)
{
    uint32_t start[256], end[256];
    int n = spans_of(chunk, cbytes, start, end, 256);
    ck_assert_int_ge(n, min_sums);
    /* tiled: each span starts where one ends, the first at 0, the last ends at cbytes
     * (blocks' streams may come in any order) */
    uint32_t covered = 0;
    for (int k = 0; k < n; k++) {
        ck_assert_uint_le(start[k], end[k]);
        covered += end[k] - start[k];
    }
    ck_assert_uint_eq(covered, (uint32_t)cbytes);
    ck_assert_uint_eq(start[0], 0);
    uint64_t *sums, *after;
    int ns, na;
    ck_assert_int_eq(b2f_chunk_sums(chunk, cbytes, &sums, &ns), 0);
    ck_assert_int_eq(ns, n);
    for (int k = 1; k < n; k++) {   /* (flips in the head change the layout itself) */
        if (end[k] == start[k])
            continue;
        uint32_t at = start[k] + (end[k] - start[k]) / 2;
        chunk[at] ^= 0x10;
        ck_assert_int_eq(b2f_chunk_sums(chunk, cbytes, &after, &na), 0);
        for (int j = 0; j < n; j++)
            ck_assert_msg((after[j] != sums[j]) == (j == k), "flip in span %d changed sum %d", k, j);
        free(after);
        chunk[at] ^= 0x10;
    }
    free(sums);
}

START_TEST(chunk_spans)
{
    size_t n = 200000;
    uint8_t *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)((i / 4) * 7 + (i % 4 == 0 ? i / 1000 : 0));
    static const int codecs[] = {B2_BLOSCLZ, B2_LZ4, B2_LZ4HC, B2_ZLIB, B2_ZSTD};
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        int32_t cb;
        uint8_t *chunk = encode(codecs[c], 5, data, n, &cb);
        check_chunk(chunk, cb, 1 + (int)(n / 16384));
        free(chunk);
    }
    /* stored as it is: clevel 0 */
    int32_t cb;
    uint8_t *chunk = encode(B2_ZSTD, 0, data, n, &cb);
    check_chunk(chunk, cb, 1 + (int)((n + B2F_SUM_STORED_SPAN - 1) / B2F_SUM_STORED_SPAN));
    free(chunk);
    /* all zeros: a special chunk, one sum over its bytes */
    memset(data, 0, n);
    chunk = encode(B2_ZSTD, 5, data, n, &cb);
    check_chunk(chunk, cb, 1);
    free(chunk);
    free(data);
}
END_TEST

START_TEST(table)
{
    b2f_sums_buf b;
    ck_assert_int_eq(b2f_sums_begin(&b, 0), 0);
    uint64_t s1[3] = {1, 2, 0xffffffffffffffffull}, s2[1] = {42};
    ck_assert_int_eq(b2f_sums_put(&b, 0, 100, 5000, s1, 3), 0);
    ck_assert_int_eq(b2f_sums_put(&b, 7, 5100, 33, s2, 1), 0);
    b2f_sums_iter it;
    b2f_sums_entry e;
    ck_assert_int_eq(b2f_sums_open(&it, b.p, b.len), 0);
    ck_assert_int_eq(b2f_sums_next(&it, &e), 1);
    ck_assert(e.chunk == 0 && e.off == 100 && e.cbytes == 5000 && e.nsums == 3);
    ck_assert(b2f_sums_entry_get(&e, 2) == 0xffffffffffffffffull);
    ck_assert_int_eq(b2f_sums_next(&it, &e), 1);
    ck_assert(e.chunk == 7 && e.off == 5100 && e.cbytes == 33 && b2f_sums_entry_get(&e, 0) == 42);
    ck_assert_int_eq(b2f_sums_next(&it, &e), 0);
    /* every truncation is refused, by open or by a later next */
    for (size_t len = 0; len < b.len; len++) {
        int r = b2f_sums_open(&it, b.p, len);
        while (r >= 0 && (r = b2f_sums_next(&it, &e)) == 1)
            ;
        ck_assert_msg(r < 0, "a table cut to %zu bytes read", len);
    }
    /* a count larger than the entries it holds */
    uint8_t *bad = malloc(b.len);
    memcpy(bad, b.p, b.len);
    bad[4] = 3;   /* the count: "b2S", version, then u32 entries */
    int r = b2f_sums_open(&it, bad, b.len);
    while (r >= 0 && (r = b2f_sums_next(&it, &e)) == 1)
        ;
    ck_assert_int_lt(r, 0);
    /* another version */
    memcpy(bad, b.p, b.len);
    bad[3] = 2;   /* the version */
    ck_assert_int_eq(b2f_sums_open(&it, bad, b.len), B2F_ETRAILER);
    free(bad);
    b2f_sums_free(&b);
}
END_TEST

START_TEST(fingerprint)
{
    uint8_t a[100], bb[50], whole[150], f1[16], f2[16];
    for (int i = 0; i < 100; i++)
        a[i] = (uint8_t)i;
    for (int i = 0; i < 50; i++)
        bb[i] = (uint8_t)(200 - i);
    memcpy(whole, a, 100);
    memcpy(whole + 100, bb, 50);
    const uint8_t *parts[2] = {a, bb};
    size_t lens[2] = {100, 50};
    ck_assert_int_eq(b2f_fingerprint(parts, lens, 2, f1), 0);
    const uint8_t *one[1] = {whole};
    size_t wl[1] = {150};
    ck_assert_int_eq(b2f_fingerprint(one, wl, 1, f2), 0);
    ck_assert_mem_eq(f1, f2, 16);
    for (int i = 0; i < 150; i += 7) {
        whole[i] ^= 1;
        ck_assert_int_eq(b2f_fingerprint(one, wl, 1, f2), 0);
        ck_assert(memcmp(f1, f2, 16) != 0);
        whole[i] ^= 1;
    }
}
END_TEST

/* The whole-frame fingerprint: any byte of the header's fixed part (but the thread counts
 * and the format version), index, trailer or table changes its hash, the table's sum of
 * the metalayers among them; that sum is kept beside it. */
START_TEST(fingerprint_whole)
{
    uint8_t hdr[B2F_HEADER_MINLEN], index[40], trailer[60], fp[16], fp2[16];
    for (size_t i = 0; i < sizeof hdr; i++)
        hdr[i] = (uint8_t)(i * 3);
    memset(index, 7, sizeof index);
    memset(trailer, 9, sizeof trailer);
    b2f_sums_buf b;
    ck_assert_int_eq(b2f_sums_begin(&b, 0x1122334455667788ULL), 0);
    uint64_t sums[2] = {1, 2};
    ck_assert_int_eq(b2f_sums_put(&b, 0, 0, 500, sums, 2), 0);
    ck_assert_int_eq(b2f_sums_count(b.p, b.len), 1);
    ck_assert_int_eq(b2f_frame_fingerprint_whole(hdr, index, sizeof index, trailer,
                                                 sizeof trailer, b.p, b.len, fp), 0);
    ck_assert_uint_eq(b2f_fingerprint_meta_sum(fp), 0x1122334455667788ULL);
    uint8_t *parts[4] = {hdr, index, trailer, b.p};
    size_t lens[4] = {sizeof hdr, sizeof index, sizeof trailer - 16, b.len};
    for (int p = 0; p < 4; p++)
        for (size_t i = 0; i < lens[p]; i++) {
            if (p == 0 && (i == HP_FLAGS || (i >= HP_NTHREADS_C && i < HP_NTHREADS_C + 2) ||
                           (i >= HP_NTHREADS_D && i < HP_NTHREADS_D + 2)))
                continue;
            parts[p][i] ^= 0x40;
            ck_assert_int_eq(b2f_frame_fingerprint_whole(hdr, index, sizeof index, trailer,
                                                         sizeof trailer, b.p, b.len, fp2), 0);
            ck_assert_msg(memcmp(fp, fp2, 8) != 0, "part %d byte %zu left out", p, i);
            parts[p][i] ^= 0x40;
        }
    b2f_sums_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chunk checksums");
    TCase *tc = tcase_create("sums");
    tcase_add_test(tc, chunk_spans);
    tcase_add_test(tc, table);
    tcase_add_test(tc, fingerprint);
    tcase_add_test(tc, fingerprint_whole);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
