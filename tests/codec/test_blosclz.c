/* BloscLZ codec: reference streams, hostile streams, encoder round trips. */
#include "codec/blosclz.h"
#include "codec/chunk.h"
#include "shuffle/shuffle.h"
#include "tests/codec/blosclz_oracle.h"
#include "tests/lib/testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Decodes into a buffer of exactly cap bytes followed by a guard zone, and checks the
 * guard is untouched whatever the outcome. */
static int decode_guarded(const uint8_t *src, int srclen, uint8_t *out, int cap)
{
    uint8_t *buf = malloc((size_t)cap + 64);
    ck_assert_ptr_nonnull(buf);
    memset(buf, 0xA5, (size_t)cap + 64);
    int r = blosclz_decompress(src, srclen, buf, cap);
    for (int i = 0; i < 64; i++)
        ck_assert_uint_eq(buf[cap + i], 0xA5);
    if (r > 0 && out)
        memcpy(out, buf, (size_t)r);
    free(buf);
    return r;
}

/* ---- every blosclz stream of the c-blosc 1.21 fixtures ---- */

/* Walks a Blosc1 chunk made by c-blosc 1.21 (blosclz, format version 2): decodes each
 * stream, re-encodes it and requires the very bytes c-blosc wrote, and rebuilds the
 * chunk's contents (unshuffled) into out. Returns the number of streams. */
static int walk_blosc1_chunk(const char *name, const uint8_t *c, size_t clen, uint8_t *out,
                             int clevel)
{
    ck_assert_uint_ge(clen, 16);
    uint8_t flags = c[2];
    size_t ts = c[3];
    uint32_t nbytes = rd32(c + 4), bs = rd32(c + 8), cbytes = rd32(c + 12);
    ck_assert_uint_eq(c[0], 2);
    ck_assert_uint_eq(flags >> 5, 0);      /* codec 0: blosclz */
    ck_assert_uint_eq(cbytes, clen);
    ck_assert_uint_eq(flags & 2, 0);        /* fixtures are not memcpyed */
    uint32_t nblocks = (nbytes + bs - 1) / bs;
    int split = !(flags & 0x10);
    uint8_t *tmp = malloc(bs), *re = malloc(bs);
    int nstreams = 0;

    for (uint32_t b = 0; b < nblocks; b++) {
        uint32_t start = rd32(c + 16 + 4 * b);
        uint32_t bsize = (b == nblocks - 1 && nbytes % bs) ? nbytes % bs : bs;
        int leftover = bsize != bs;
        uint32_t ns = split && !leftover ? (uint32_t)ts : 1;
        uint32_t neb = bsize / ns;
        size_t pos = start;
        for (uint32_t s = 0; s < ns; s++) {
            ck_assert_uint_le(pos + 4, clen);
            int32_t cs = (int32_t)rd32(c + pos);
            pos += 4;
            ck_assert_int_gt(cs, 0);
            ck_assert_uint_le(pos + (size_t)cs, clen);
            uint8_t *part = tmp + (size_t)s * neb;
            if ((uint32_t)cs == neb) {
                memcpy(part, c + pos, neb);     /* stored raw: the encoder must refuse it */
                int m = split ? blosclz_compress(clevel, part, (int)neb, re, (int)neb)
                              : blosclz_compress_unsplit(clevel, part, (int)neb, re, (int)neb);
                ck_assert_msg(m == 0 || m >= (int)neb, "%s block %u: compressed raw stream", name, b);
            } else {
                int r = decode_guarded(c + pos, cs, part, (int)neb);
                ck_assert_msg(r == (int)neb, "%s block %u stream %u: got %d", name, b, s, r);
                int m = split ? blosclz_compress(clevel, part, (int)neb, re, (int)neb)
                              : blosclz_compress_unsplit(clevel, part, (int)neb, re, (int)neb);
                ck_assert_msg(m == cs && memcmp(re, c + pos, (size_t)cs) == 0,
                              "%s block %u stream %u: re-encoded to %d bytes, c-blosc wrote %d",
                              name, b, s, m, cs);
            }
            pos += (size_t)cs;
            nstreams++;
        }
        uint8_t *dst = out + (size_t)b * bs;
        if ((flags & 1) && ts > 1)
            b2_unshuffle(ts, bsize, tmp, dst);
        else if ((flags & 4) && bsize >= ts)
            b2_bitunshuffle(ts, bsize, tmp, dst, 1);
        else
            memcpy(dst, tmp, bsize);
    }
    free(tmp);
    free(re);
    return nstreams;
}

START_TEST(test_blosc1_fixtures)
{
    tu_manifest *m = tu_manifest_load("blosc1");
    ck_assert_ptr_nonnull(m);
    int files = 0;
    for (int r = 0; r < m->nrows; r++) {
        if (strcmp(tu_manifest_get(m, r, "codec"), "blosclz") != 0)
            continue;
        const char *name = tu_manifest_get(m, r, "file");
        char path[512];
        snprintf(path, sizeof path, "blosc1/%s", name);
        size_t len;
        uint8_t *c = tu_read_file(tu_data_path(path), &len);
        ck_assert_msg(c != NULL, "cannot read %s", path);
        size_t nbytes = strtoul(tu_manifest_get(m, r, "nbytes"), NULL, 10);
        uint8_t *out = malloc(nbytes);
        int n = walk_blosc1_chunk(name, c, len, out, atoi(tu_manifest_get(m, r, "clevel")));
        ck_assert_int_gt(n, 0);
        char hex[65];
        tu_sha256_hex(out, nbytes, hex);
        ck_assert_msg(strcmp(hex, tu_manifest_get(m, r, "sha256")) == 0, "%s: sha256 differs", name);
        /* and through the chunk codec */
        memset(out, 0, nbytes);
        b2_dctx *ctx = b2_dctx_new();
        ck_assert_int_eq(b2_chunk_decode(ctx, c, len, out, nbytes), (int)nbytes);
        b2_dctx_free(ctx);
        tu_sha256_hex(out, nbytes, hex);
        ck_assert_msg(strcmp(hex, tu_manifest_get(m, r, "sha256")) == 0,
                      "%s: sha256 differs through b2_chunk_decode", name);
        free(out);
        free(c);
        files++;
    }
    ck_assert_int_ge(files, 9);
    tu_manifest_free(m);
}
END_TEST

/* ---- hand-made streams, one per failure mode ---- */

static void expect_fail(const uint8_t *s, int n, int cap)
{
    uint8_t out[1024];
    int r = decode_guarded(s, n, out, cap);
    ck_assert_int_lt(r, 0);
    ck_assert_int_lt(blosclz_oracle_decode(s, (size_t)n, out, (size_t)cap), 0);
}

START_TEST(test_crafted_ok)
{
    /* 4 literals "abcd", match len 6 at distance 4, literal "z" */
    static const uint8_t s[] = { 0x23, 'a', 'b', 'c', 'd', 4 << 5 | 0, 3, 0, 'z' };
    uint8_t out[64];
    ck_assert_int_eq(decode_guarded(s, sizeof s, out, 11), 11);
    ck_assert_int_eq(memcmp(out, "abcdabcdabz", 11), 0);
    /* the marker bits of the first byte are not part of the count */
    static const uint8_t m[] = { 0xE0, 'q' };
    ck_assert_int_eq(decode_guarded(m, 2, out, 1), 1);
    ck_assert_int_eq(out[0], 'q');
    ck_assert_int_eq(blosclz_decompress(s, 0, out, 10), 0);
}
END_TEST

START_TEST(test_crafted_failures)
{
    /* literal run longer than the stream */
    static const uint8_t lit_trunc[] = { 0x25, 'a', 'b', 'c' };
    expect_fail(lit_trunc, sizeof lit_trunc, 100);
    /* literal run longer than the output */
    static const uint8_t lit_over[] = { 0x23, 'a', 'b', 'c', 'd' };
    expect_fail(lit_over, sizeof lit_over, 3);
    /* match reaching one byte before the output start */
    static const uint8_t before[] = { 0x21, 'a', 'b', 1 << 5, 2, 0, 'z' };
    expect_fail(before, sizeof before, 100);
    /* far match (16-bit distance) before the start */
    static const uint8_t far_before[] = { 0x20, 'a', 1 << 5 | 31, 255, 0, 0, 0, 'z' };
    expect_fail(far_before, sizeof far_before, 100);
    /* largest near distance, 8191, with only 1 byte of output */
    static const uint8_t near_max[] = { 0x20, 'a', 1 << 5 | 31, 254, 0, 'z' };
    expect_fail(near_max, sizeof near_max, 100);
    /* match longer than the output room */
    static const uint8_t len_over[] = { 0x20, 'a', 6 << 5, 0, 0, 'z' };
    expect_fail(len_over, sizeof len_over, 8);
    /* long match whose extra length bytes run past the stream */
    static const uint8_t ext_trunc[] = { 0x20, 'a', 7 << 5, 255, 255 };
    expect_fail(ext_trunc, sizeof ext_trunc, 1000);
    /* match without its distance byte */
    static const uint8_t no_dist[] = { 0x20, 'a', 2 << 5 };
    expect_fail(no_dist, sizeof no_dist, 100);
    /* far match missing one of its two distance bytes */
    static const uint8_t far_trunc[] = { 0x20, 'a', 2 << 5 | 31, 255, 0 };
    expect_fail(far_trunc, sizeof far_trunc, 100);
    /* length extension that would overflow a 32-bit count: stops at the output room */
    size_t n = 3 + 20000000;
    uint8_t *huge = malloc(n + 2);
    huge[0] = 0x20;
    huge[1] = 'a';
    huge[2] = 7 << 5;
    memset(huge + 3, 255, n - 3);
    huge[n] = 0;
    huge[n + 1] = 0;
    expect_fail(huge, (int)n + 2, 1000);
    free(huge);
    /* bad arguments */
    uint8_t out[4];
    ck_assert_int_lt(blosclz_decompress(lit_over, -1, out, 4), 0);
    ck_assert_int_lt(blosclz_decompress(lit_over, 5, out, -1), 0);
    ck_assert_int_lt(blosclz_decompress(NULL, 5, out, 4), 0);
    ck_assert_int_lt(blosclz_decompress(lit_over, 5, NULL, 0), 0);
    ck_assert_int_eq(blosclz_decompress(NULL, 0, NULL, 0), 0);
}
END_TEST

/* Distances 1..70 (every copy strategy) and many lengths, with an exactly sized output (slow paths) and
 * a roomy one (wide copies). */
START_TEST(test_overlapping_matches)
{
    uint8_t s[128], want[4096], got[4096];
    for (int dist = 1; dist <= 70; dist += (dist < 34 ? 1 : 9)) {
        for (int len = 3; len <= 700; len += (len < 40 ? 1 : 37)) {
            size_t k = 0;
            for (int i = 0; i < dist; i++) {
                if (i % 32 == 0) {
                    int piece = dist - i < 32 ? dist - i : 32;
                    s[k++] = (uint8_t)((i == 0 ? 0x20 : 0) | (piece - 1));
                }
                s[k++] = (uint8_t)('A' + i % 26 + (i / 26));
            }
            size_t code = (size_t)len - 2;
            if (code < 7) {
                s[k++] = (uint8_t)(code << 5);
            } else {
                s[k++] = 7 << 5;
                size_t rest = code - 7;
                for (; rest >= 255; rest -= 255)
                    s[k++] = 255;
                s[k++] = (uint8_t)rest;
            }
            s[k++] = (uint8_t)(dist - 1);
            s[k++] = 0;
            s[k++] = '!';
            int total = dist + len + 1;
            long w = blosclz_oracle_decode(s, k, want, sizeof want);
            ck_assert_int_eq(w, total);
            ck_assert_int_eq(decode_guarded(s, (int)k, got, total), total);
            ck_assert_int_eq(memcmp(got, want, (size_t)total), 0);
            ck_assert_int_eq(decode_guarded(s, (int)k, got, 4096), total);
            ck_assert_int_eq(memcmp(got, want, (size_t)total), 0);
            ck_assert_int_lt(decode_guarded(s, (int)k, got, total - 1), 0);
        }
    }
}
END_TEST

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Builds a random well-formed stream producing about `target` bytes (near and far
 * matches, runs, long lengths). Returns its size. */
static size_t random_stream(uint64_t *rs, uint8_t *s, size_t cap, size_t target)
{
    size_t k = 0, produced = 0;
    int first = 1;
    while (produced < target && k + 600 < cap) {
        uint64_t r = rng_next(rs);
        if (first || produced == 0 || r % 3 == 0) {
            size_t n = 1 + (r >> 8) % 32;
            s[k++] = (uint8_t)((n - 1) | (first ? 0x20 : 0));
            for (size_t i = 0; i < n; i++)
                s[k++] = (uint8_t)rng_next(rs);
            produced += n;
            first = 0;
            continue;
        }
        size_t dist = 1 + (r >> 8) % (produced < 80000 ? produced : 80000);
        if ((r >> 40) % 4 == 0)
            dist = 1 + (r >> 44) % (produced < 16 ? produced : 16);
        size_t len = 3 + (r >> 30) % ((r >> 50) % 8 == 0 ? 2000 : 20);
        size_t code = len - 2;
        size_t biased = dist - 1;
        int far = biased >= 8191;
        unsigned high = far ? 31 : (unsigned)(biased >> 8);
        if (far && biased - 8191 > 65535)
            continue;
        if (code < 7) {
            s[k++] = (uint8_t)(code << 5 | high);
        } else {
            s[k++] = (uint8_t)(7 << 5 | high);
            size_t rest = code - 7;
            for (; rest >= 255; rest -= 255)
                s[k++] = 255;
            s[k++] = (uint8_t)rest;
        }
        if (far) {
            s[k++] = 255;
            s[k++] = (uint8_t)((biased - 8191) >> 8);
            s[k++] = (uint8_t)(biased - 8191);
        } else {
            s[k++] = (uint8_t)biased;
        }
        produced += len;
    }
    return k;
}

START_TEST(test_random_streams_match_oracle)
{
    enum { SCAP = 1 << 18, OCAP = 1 << 19 };
    uint8_t *s = malloc(SCAP), *want = malloc(OCAP), *got = malloc(OCAP);
    uint64_t rs = 0x1234567ull;
    for (int iter = 0; iter < 300; iter++) {
        size_t target = 1 + rng_next(&rs) % (iter < 200 ? 3000 : 200000);
        size_t k = random_stream(&rs, s, SCAP, target);
        long w = blosclz_oracle_decode(s, k, want, OCAP);
        ck_assert_int_gt(w, 0);
        ck_assert_int_eq(decode_guarded(s, (int)k, got, (int)w), w);
        ck_assert_int_eq(memcmp(got, want, (size_t)w), 0);
        /* one byte short of room: must fail, not write past */
        ck_assert_int_lt(decode_guarded(s, (int)k, got, (int)w - 1), 0);
        /* truncations and single-byte corruptions: same verdict as the oracle */
        for (int t = 0; t < 20; t++) {
            size_t cut = rng_next(&rs) % k;
            long wo = blosclz_oracle_decode(s, cut, want, OCAP);
            int r = decode_guarded(s, (int)cut, got, OCAP);
            ck_assert_int_eq(r < 0, wo < 0);
            if (r >= 0) {
                ck_assert_int_eq(r, wo);
                ck_assert_int_eq(memcmp(got, want, (size_t)r), 0);
            }
        }
        for (int t = 0; t < 20; t++) {
            size_t at = rng_next(&rs) % k;
            uint8_t keep = s[at];
            s[at] = (uint8_t)rng_next(&rs);
            long wo = blosclz_oracle_decode(s, k, want, (size_t)w);
            int r = decode_guarded(s, (int)k, got, (int)w);
            ck_assert_int_eq(r < 0, wo < 0);
            if (r >= 0) {
                ck_assert_int_eq(r, wo);
                ck_assert_int_eq(memcmp(got, want, (size_t)r), 0);
            }
            s[at] = keep;
        }
    }
    free(s);
    free(want);
    free(got);
}
END_TEST

START_TEST(test_garbage_matches_oracle)
{
    uint8_t s[512], want[2048], got[2048];
    uint64_t rs = 99;
    for (int iter = 0; iter < 20000; iter++) {
        size_t k = 1 + rng_next(&rs) % sizeof s;
        for (size_t i = 0; i < k; i++)
            s[i] = (uint8_t)rng_next(&rs);
        size_t cap = rng_next(&rs) % sizeof want;
        long wo = blosclz_oracle_decode(s, k, want, cap);
        int r = decode_guarded(s, (int)k, got, (int)cap);
        ck_assert_int_eq(r < 0, wo < 0);
        if (r >= 0) {
            ck_assert_int_eq(r, wo);
            ck_assert_int_eq(memcmp(got, want, (size_t)r), 0);
        }
    }
}
END_TEST

/* ---- encoder ---- */

enum { KIND_ZERO, KIND_RANDOM, KIND_TEXT, KIND_FLOAT, KIND_PATTERN, KIND_COUNT };

static void fill_kind(int kind, uint8_t *buf, size_t n, uint64_t seed)
{
    switch (kind) {
    case KIND_ZERO: memset(buf, 0, n); break;
    case KIND_RANDOM: tu_fill_random(buf, n, seed); break;
    case KIND_TEXT: tu_fill_text(buf, n, seed); break;
    case KIND_FLOAT: {  /* byte-shuffled, as Blosc hands floats to the codec */
        uint8_t *tmp = malloc(n);
        tu_fill_float_series(tmp, n, seed);
        b2_shuffle(4, n, tmp, buf);
        free(tmp);
        break;
    }
    default:
        for (size_t i = 0; i < n; i++)
            buf[i] = i % 40 < 30 ? (uint8_t)('a' + i % 40 % 7) : (uint8_t)(i / 40 * 37 + seed);
        break;
    }
}

static void roundtrip(const uint8_t *in, int n, int clevel, int unsplit, int cap)
{
    uint8_t *c = malloc((size_t)cap + 1), *back = malloc((size_t)n + 1);
    int m = unsplit ? blosclz_compress_unsplit(clevel, in, n, c, cap)
                    : blosclz_compress(clevel, in, n, c, cap);
    ck_assert_int_ge(m, 0);
    ck_assert_int_le(m, cap);
    if (m > 0) {
        ck_assert_uint_eq(c[0] & 0xE0, 0x20);
        ck_assert_int_eq(decode_guarded(c, m, back, n), n);
        ck_assert_int_eq(memcmp(back, in, (size_t)n), 0);
    }
    free(c);
    free(back);
}

START_TEST(test_encoder_roundtrip)
{
    static const int sizes[] = { 16, 17, 31, 64, 100, 1000, 4099, 65536, 262147 };
    int kind = _i;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int n = sizes[si];
        uint8_t *in = malloc((size_t)n);
        fill_kind(kind, in, (size_t)n, (uint64_t)si + 1);
        for (int cl = 1; cl <= 9; cl++) {
            roundtrip(in, n, cl, 0, n + n / 16 + 100);
            roundtrip(in, n, cl, 1, n);
        }
        free(in);
    }
}
END_TEST

/* Output capacities around the compressed size: fits exactly or refuses, never more. */
START_TEST(test_encoder_tight_capacity)
{
    int n = 50000;
    uint8_t *in = malloc((size_t)n), *c = malloc((size_t)n * 2);
    for (int kind = KIND_ZERO; kind < KIND_COUNT; kind++) {
        if (kind == KIND_RANDOM)
            continue;
        fill_kind(kind, in, (size_t)n, 7);
        int full = blosclz_compress(5, in, n, c, n * 2);
        ck_assert_msg(full > 0, "kind %d did not compress", kind);
        for (int cap = full + 2; cap >= 66 && cap >= full - 40; cap--)
            roundtrip(in, n, 5, 0, cap);
    }
    free(in);
    free(c);
}
END_TEST

START_TEST(test_encoder_refuses)
{
    uint8_t in[4096], out[8192];
    memset(in, 'x', sizeof in);
    ck_assert_int_eq(blosclz_compress(0, in, sizeof in, out, sizeof out), 0);
    ck_assert_int_eq(blosclz_compress(10, in, sizeof in, out, sizeof out), 0);
    ck_assert_int_eq(blosclz_compress(5, in, 15, out, sizeof out), 0);
    ck_assert_int_eq(blosclz_compress(5, in, sizeof in, out, 65), 0);
    ck_assert_int_eq(blosclz_compress(5, in, -3, out, sizeof out), 0);
    /* random data does not pass the entropy probe */
    tu_fill_random(in, sizeof in, 3);
    for (int cl = 1; cl <= 9; cl++)
        ck_assert_int_eq(blosclz_compress(cl, in, sizeof in, out, sizeof out), 0);
    /* repetitive data does, and shrinks */
    memset(in, 'x', sizeof in);
    int m = blosclz_compress(1, in, sizeof in, out, sizeof out);
    ck_assert_int_gt(m, 0);
    ck_assert_int_lt(m, 64);
}
END_TEST

static Suite *blosclz_suite(void)
{
    Suite *s = suite_create("blosclz");
    TCase *dec = tcase_create("decoder");
    tcase_set_timeout(dec, 120);
    tcase_add_test(dec, test_blosc1_fixtures);
    tcase_add_test(dec, test_crafted_ok);
    tcase_add_test(dec, test_crafted_failures);
    tcase_add_test(dec, test_overlapping_matches);
    tcase_add_test(dec, test_random_streams_match_oracle);
    tcase_add_test(dec, test_garbage_matches_oracle);
    suite_add_tcase(s, dec);
    TCase *enc = tcase_create("encoder");
    tcase_set_timeout(enc, 120);
    tcase_add_loop_test(enc, test_encoder_roundtrip, KIND_ZERO, KIND_COUNT);
    tcase_add_test(enc, test_encoder_tight_capacity);
    tcase_add_test(enc, test_encoder_refuses);
    suite_add_tcase(s, enc);
    return s;
}

int main(void)
{
    return tu_run_suite(blosclz_suite());
}
