/* Check tests of shuffle/: every kernel set against plain reference loops written here,
 * hand-made known answers, and blocks filtered by c-blosc 1.21 (tests/data/shuffle). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shuffle/kernels.h"
#include "shuffle/shuffle.h"
#include "tests/lib/testutil.h"

/* ---- reference implementations: obviously correct, slow ---- */

static void ref_shuffle(size_t ts, size_t len, const uint8_t *src, uint8_t *dst)
{
    size_t n = len / ts;
    memcpy(dst, src, len);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < ts; j++)
            dst[j * n + i] = src[i * ts + j];
}

static int get_bit(const uint8_t *p, size_t bit)
{
    return (p[bit / 8] >> (bit % 8)) & 1;
}

static void put_bit(uint8_t *p, size_t bit, int v)
{
    if (v)
        p[bit / 8] |= (uint8_t)(1u << (bit % 8));
    else
        p[bit / 8] &= (uint8_t)~(1u << (bit % 8));
}

/* Bit b of byte j of item i goes to bit number (8j + b) * n8 + i of the output. */
static void ref_bitshuffle(size_t ts, size_t len, const uint8_t *src, uint8_t *dst,
                           int blosc1)
{
    size_t n = len / ts, n8 = n - n % 8;
    memcpy(dst, src, len);
    if (blosc1 && n % 8)
        return;
    for (size_t i = 0; i < n8; i++)
        for (size_t j = 0; j < ts; j++)
            for (size_t b = 0; b < 8; b++)
                put_bit(dst, (8 * j + b) * n8 + i, get_bit(src, 8 * (i * ts + j) + b));
}

/* Delta with the reference's word size rule, item by item. */
static size_t ref_word(size_t ts)
{
    if (ts == 1 || ts == 2 || ts == 4 || ts == 8)
        return ts;
    return ts % 8 == 0 ? 8 : 1;
}

static void ref_delta_encode(const uint8_t *dref, size_t offset, size_t len, size_t ts,
                             const uint8_t *src, uint8_t *dst)
{
    size_t w = ref_word(ts), nw = len / w;
    memcpy(dst, src, len);
    for (size_t k = 0; k < nw; k++)
        for (size_t b = 0; b < w; b++) {
            if (offset == 0)
                dst[k * w + b] = k == 0 ? dref[b] : src[k * w + b] ^ dref[(k - 1) * w + b];
            else
                dst[k * w + b] = src[k * w + b] ^ dref[k * w + b];
        }
}

/* Decoding in place word by word: block 0 against its own previous decoded word. */
static void ref_delta_decode(const uint8_t *dref, size_t offset, size_t len, size_t ts,
                             uint8_t *buf)
{
    size_t w = ref_word(ts), nw = len / w;
    for (size_t k = offset == 0 ? 1 : 0; k < nw; k++)
        for (size_t b = 0; b < w; b++)
            buf[k * w + b] ^= offset == 0 ? buf[(k - 1) * w + b] : dref[k * w + b];
}

static void ref_unshuffle(size_t ts, size_t len, const uint8_t *src, uint8_t *dst)
{
    size_t n = len / ts;
    memcpy(dst, src, len);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < ts; j++)
            dst[i * ts + j] = src[j * n + i];
}

/* ---- helpers ---- */

static uint8_t *rnd(size_t len, uint64_t seed)
{
    uint8_t *p = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(p);
    tu_fill_random(p, len, seed);
    return p;
}

static uint8_t *filled(size_t len, int byte)
{
    uint8_t *p = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(p);
    memset(p, byte, len);
    return p;
}

static int first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i])
            return (int)i;
    return -1;
}

#define ASSERT_SAME(a, b, len, fmt, ...)                                              \
    do {                                                                              \
        int d_ = first_diff((a), (b), (len));                                         \
        ck_assert_msg(d_ < 0, "differs at byte %d of %zu: " fmt, d_, (size_t)(len),   \
                      __VA_ARGS__);                                                   \
    } while (0)

static const char *const set_names[] = { "generic", "sse2", "avx2" };

/* ---- known answers by hand ---- */

START_TEST(shuffle_known_answer)
{
    uint8_t in[18], out[18];
    const uint8_t want[18] = { 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 16, 17 };
    for (int i = 0; i < 18; i++)
        in[i] = (uint8_t)i;
    b2_shuffle(4, 18, in, out);
    ck_assert_mem_eq(out, want, 18);
    b2_unshuffle(4, 18, want, out);
    ck_assert_mem_eq(out, in, 18);
    /* typesize 1, and blocks shorter than one item, are copied */
    b2_shuffle(1, 18, in, out);
    ck_assert_mem_eq(out, in, 18);
    b2_shuffle(32, 18, in, out);
    ck_assert_mem_eq(out, in, 18);
}
END_TEST

START_TEST(bitshuffle_known_answer)
{
    /* 8 items of 1 byte: item 0 = 0xff sets bit 0 of every bit row. */
    uint8_t in[40] = { 0xff }, out[40];
    b2_bitshuffle(1, 8, in, out, 0);
    const uint8_t rows1[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    ck_assert_mem_eq(out, rows1, 8);

    /* 8 items of 2 bytes: bit 0 of item 0 -> row 0 bit 0; bit 15 of item 7 -> row 15
     * bit 7; bit 9 (byte 1, bit 1) of item 3 -> row 9 bit 3. */
    memset(in, 0, sizeof in);
    in[0] = 0x01;
    in[15] = 0x80;
    in[7] = 0x02;
    b2_bitshuffle(2, 16, in, out, 0);
    uint8_t rows2[16] = { 0 };
    rows2[0] = 0x01;
    rows2[15] = 0x80;
    rows2[9] = 0x08;
    ck_assert_mem_eq(out, rows2, 16);
    b2_bitunshuffle(2, 16, rows2, out, 0);
    ck_assert_mem_eq(out, in, 16);

    /* 16 items of 4 bytes (rows of 2 bytes): bit 3 of byte 2 of item 9 -> row 19,
     * byte 1 of the row, bit 1: output byte 39 = 0x02. 3 tail bytes are copied. */
    memset(in, 0, sizeof in);
    uint8_t big[67] = { 0 }, bigout[67], bigwant[67] = { 0 };
    big[9 * 4 + 2] = 0x08;
    big[64] = 0xa1, big[65] = 0xa2, big[66] = 0xa3;
    bigwant[39] = 0x02;
    bigwant[64] = 0xa1, bigwant[65] = 0xa2, bigwant[66] = 0xa3;
    b2_bitshuffle(4, 67, big, bigout, 0);
    ck_assert_mem_eq(bigout, bigwant, 67);

    /* 12 items: the first 8 are transposed and 4 copied, or (Blosc1) all copied. */
    uint8_t twelve[12] = { 0xff, 0, 0, 0, 0, 0, 0, 0, 9, 8, 7, 6 }, out12[12];
    const uint8_t want12[12] = { 1, 1, 1, 1, 1, 1, 1, 1, 9, 8, 7, 6 };
    b2_bitshuffle(1, 12, twelve, out12, 0);
    ck_assert_mem_eq(out12, want12, 12);
    b2_bitshuffle(1, 12, twelve, out12, 1);
    ck_assert_mem_eq(out12, twelve, 12);
    b2_bitunshuffle(1, 12, want12, out12, 0);
    ck_assert_mem_eq(out12, twelve, 12);
    b2_bitunshuffle(1, 12, want12, out12, 1);
    ck_assert_mem_eq(out12, want12, 12);
}
END_TEST

/* ---- every kernel set against the references ---- */

/* Lengths around the vector widths (32 items), the bitshuffle groups (8 items), the
 * tile of the bitshuffle (16 KiB) and the prefetch distance, plus odd tails. */
static size_t make_lengths(size_t ts, size_t *lens)
{
    static const size_t extra_items[] = { 0, 1, 7, 8, 9, 15, 16, 17, 31 };
    size_t k = 0;
    for (size_t blocks = 0; blocks <= 4; blocks++)
        for (size_t e = 0; e < sizeof extra_items / sizeof extra_items[0]; e++) {
            size_t items = blocks * 32 + extra_items[e];
            lens[k++] = items * ts;
            lens[k++] = items * ts + (ts > 1 ? ts - 1 : 0);
            lens[k++] = items * ts + (ts > 2 ? 1 : 0);
        }
    lens[k++] = 16384 * 3 + 8 * ts * 5 + 3;  /* several bitshuffle tiles and a tail */
    lens[k++] = 262144 / ts * ts;            /* a typical Blosc block */
    /* the SIMD loops prefetch 8 KiB ahead, up to the end of the block: ends just
     * around that distance */
    for (size_t d = 8192 - 64 * ts; d <= 8192 + 64 * ts; d += 32 * ts)
        lens[k++] = d / ts * ts + (ts > 1 ? 1 : 0);
    return k;
}

static void check_set(const b2_kernels *k, size_t ts)
{
    size_t lens[200];
    size_t nl = make_lengths(ts, lens);
    for (size_t l = 0; l < nl; l++) {
        size_t len = lens[l];
        uint8_t *src = rnd(len, 1000 * ts + l), *want = filled(len, 0);
        uint8_t *got = filled(len, 0x5a), *back = filled(len, 0xa5);

        ref_shuffle(ts, len, src, want);
        b2k_shuffle_block(k, ts, len, src, got);
        ASSERT_SAME(got, want, len, "%s shuffle ts %zu", k->name, ts);
        b2k_unshuffle_block(k, ts, len, got, back);
        ASSERT_SAME(back, src, len, "%s unshuffle ts %zu", k->name, ts);

        for (int blosc1 = 0; blosc1 <= 1; blosc1++) {
            memset(got, 0x5a, len);
            memset(back, 0xa5, len);
            ref_bitshuffle(ts, len, src, want, blosc1);
            b2k_bitshuffle_block(k, ts, len, src, got, blosc1);
            ASSERT_SAME(got, want, len, "%s bitshuffle ts %zu blosc1 %d", k->name, ts,
                        blosc1);
            b2k_bitunshuffle_block(k, ts, len, got, back, blosc1);
            ASSERT_SAME(back, src, len, "%s bitunshuffle ts %zu blosc1 %d", k->name, ts,
                        blosc1);
        }
        free(src), free(want), free(got), free(back);
    }
}

START_TEST(kernel_sets_match_reference)
{
    const char *name = set_names[_i / 32];
    size_t ts = (size_t)(_i % 32) + 1;
    const b2_kernels *k = b2k_by_name(name);
    if (k == NULL) {
        /* Not built in or not runnable here: say so, once. */
        if (ts == 1)
            fprintf(stderr, "kernel set %s not available on this machine\n", name);
        return;
    }
    check_set(k, ts);
}
END_TEST

/* Each SIMD set against the portable one, byte for byte, on blocks of 0 to 4 x 64 KiB
 * plus odd tails, through all four operations in both bitshuffle layouts. */
START_TEST(simd_sets_match_generic)
{
    const char *name = set_names[1 + _i / 32];
    size_t ts = (size_t)(_i % 32) + 1;
    const b2_kernels *k = b2k_by_name(name), *g = b2k_by_name("generic");
    if (k == NULL)
        return;
    for (size_t blocks = 0; blocks <= 4; blocks++)
        for (int odd = 0; odd <= 1; odd++) {
            size_t len = blocks * 65536 + (odd ? 8 * ts + ts / 2 + 1 : 0);
            uint8_t *src = rnd(len, 77 * ts + blocks), *want = filled(len, 0);
            uint8_t *got = filled(len, 1);
            for (int op = 0; op < 6; op++) {
                const b2_kernels *set[2] = { g, k };
                uint8_t *out[2] = { want, got };
                for (int w = 0; w < 2; w++) {
                    switch (op) {
                    case 0: b2k_shuffle_block(set[w], ts, len, src, out[w]); break;
                    case 1: b2k_unshuffle_block(set[w], ts, len, src, out[w]); break;
                    default:
                        if (op % 2 == 0)
                            b2k_bitshuffle_block(set[w], ts, len, src, out[w], op >= 4);
                        else
                            b2k_bitunshuffle_block(set[w], ts, len, src, out[w], op >= 4);
                    }
                }
                ASSERT_SAME(got, want, len, "%s op %d ts %zu len %zu", name, op, ts, len);
            }
            free(src), free(want), free(got);
        }
}
END_TEST

/* The unshuffle with the delta folded in, per set, against the two reference steps:
 * shuffle typesizes 1..32 with delta typesizes that give every word size, lengths
 * around the vector loops' ends (which the reference XOR must meet exactly). */
START_TEST(unshuffle_delta_matches_reference)
{
    const char *name = set_names[_i / 32];
    size_t ts = (size_t)(_i % 32) + 1;
    const b2_kernels *k = b2k_by_name(name);
    if (k == NULL)
        return;
    static const size_t delta_ts[] = { 1, 2, 3, 4, 8, 12, 16 };
    size_t lens[200];
    size_t nl = make_lengths(ts, lens);
    for (size_t l = 0; l < nl; l++)
        for (size_t d = 0; d < sizeof delta_ts / sizeof delta_ts[0]; d++) {
            size_t len = lens[l], dts = d == 0 ? ts : delta_ts[d];
            uint8_t *src = rnd(len, 31 * ts + l), *dref = rnd(len, 7 * ts + l + 1);
            uint8_t *want = filled(len, 0), *got = filled(len, 0x3c);
            for (size_t offset = 0; offset <= len; offset += len > 0 ? len : 1) {
                ref_unshuffle(ts, len, src, want);
                ref_delta_decode(dref, offset, len, dts, want);
                b2k_unshuffle_delta_block(k, ts, len, src, got, dref, offset, dts);
                ASSERT_SAME(got, want, len, "%s unshuffle ts %zu delta ts %zu offset %zu",
                            name, ts, dts, offset);
            }
            free(src), free(dref), free(want), free(got);
        }
}
END_TEST

/* The XOR primitive of every set: all lengths across its vector steps, in place on
 * either operand and out of place. */
START_TEST(xor_matches_reference)
{
    const b2_kernels *k = b2k_by_name(set_names[_i]);
    if (k == NULL)
        return;
    for (size_t len = 0; len <= 300; len++)
        for (int where = 0; where < 3; where++) {
            uint8_t *a = rnd(len, len), *b = rnd(len, len + 1000), *want = filled(len, 0);
            uint8_t *out = filled(len, 0x77);
            for (size_t i = 0; i < len; i++)
                want[i] = a[i] ^ b[i];
            uint8_t *dst = where == 0 ? out : where == 1 ? a : b;
            k->xor_bytes(dst, a, b, len);
            ASSERT_SAME(dst, want, len, "%s xor len %zu where %d", k->name, len, where);
            free(a), free(b), free(want), free(out);
        }
}
END_TEST

/* The running XOR of every set, for each word size, on lengths across its vector steps. */
START_TEST(prefix_xor_matches_reference)
{
    const b2_kernels *k = b2k_by_name(set_names[_i]);
    if (k == NULL)
        return;
    for (size_t w = 1; w <= 8; w *= 2)
        for (size_t words = 0; words <= 300 / w; words++) {
            size_t len = words * w;
            uint8_t *want = rnd(len, 5 * len + w), *got = malloc(len ? len : 1);
            ck_assert_ptr_nonnull(got);
            memcpy(got, want, len);
            ref_delta_decode(want, 0, len, w, want);
            k->prefix_xor(w, got, len);
            ASSERT_SAME(got, want, len, "%s prefix xor w %zu", k->name, w);
            free(want), free(got);
        }
}
END_TEST

/* Bytedelta's differences and running sums of every set against their definition, on
 * lengths across the vector steps, the sums also in place. */
START_TEST(byte_kernels_match_reference)
{
    const b2_kernels *k = b2k_by_name(set_names[_i]);
    if (k == NULL)
        return;
    for (size_t len = 0; len <= 300; len++) {
        uint8_t *src = rnd(len, 7 * len + 1), *diff = filled(len, 0x55), *sum = filled(len, 0x55);
        uint8_t *want = filled(len, 0);
        for (size_t i = 0; i < len; i++)
            want[i] = i == 0 ? src[0] : (uint8_t)(src[i] - src[i - 1]);
        k->byte_differences(src, diff, len);
        ASSERT_SAME(diff, want, len, "%s byte differences len %zu", k->name, len);
        k->byte_sums(diff, sum, len);
        ASSERT_SAME(sum, src, len, "%s byte sums len %zu", k->name, len);
        k->byte_sums(diff, diff, len);
        ASSERT_SAME(diff, src, len, "%s byte sums in place len %zu", k->name, len);
        free(src), free(diff), free(sum), free(want);
    }
}
END_TEST

/* Other typesizes up to 255 through the public functions (whatever set is active). */
START_TEST(large_typesizes)
{
    static const size_t sizes[] = { 33, 48, 63, 64, 100, 127, 128, 200, 255 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t ts = sizes[s], len = ts * 77 + 5;
        uint8_t *src = rnd(len, ts), *want = filled(len, 0), *got = filled(len, 1);
        uint8_t *back = filled(len, 2);
        ref_shuffle(ts, len, src, want);
        b2_shuffle(ts, len, src, got);
        ASSERT_SAME(got, want, len, "shuffle ts %zu", ts);
        b2_unshuffle(ts, len, got, back);
        ASSERT_SAME(back, src, len, "unshuffle ts %zu", ts);
        ref_bitshuffle(ts, len, src, want, 0);
        b2_bitshuffle(ts, len, src, got, 0);
        ASSERT_SAME(got, want, len, "bitshuffle ts %zu", ts);
        b2_bitunshuffle(ts, len, got, back, 0);
        ASSERT_SAME(back, src, len, "bitunshuffle ts %zu", ts);
        free(src), free(want), free(got), free(back);
    }
}
END_TEST

/* ---- blocks filtered by c-blosc 1.21 ---- */

static const struct {
    const char *name;
    size_t typesize, blocksize;
    int bit;
} vectors[] = {
    { "shuffle-t4-n4099-b4096", 4, 4096, 0 },
    { "shuffle-t3-n3001-b3000", 3, 3000, 0 },
    { "shuffle-t8-n4096-b4096", 8, 4096, 0 },
    { "bitshuffle-t4-n4099-b4096", 4, 4096, 1 },
    { "bitshuffle-t8-n8192-b8192", 8, 8192, 1 },
    { "bitshuffle-t2-n4000-b4000", 2, 4000, 1 },
    { "bitshuffle-t3-n3024-b3024", 3, 3024, 1 },
    { "bitshuffle-t1-n1000-b1000", 1, 1000, 1 },
    { "bitshuffle-t4-n4012-b4012", 4, 4012, 1 },
    { "bitshuffle-t16-n4096-b4096", 16, 4096, 1 },
};

static uint8_t *read_vector(const char *name, const char *ext, size_t *len)
{
    char rel[128];
    snprintf(rel, sizeof rel, "shuffle/%s.%s", name, ext);
    uint8_t *p = tu_read_file(tu_data_path(rel), len);
    ck_assert_msg(p != NULL, "cannot read %s", tu_data_path(rel));
    return p;
}

START_TEST(matches_c_blosc1)
{
    size_t nin, nout;
    uint8_t *in = read_vector(vectors[_i].name, "in", &nin);
    uint8_t *want = read_vector(vectors[_i].name, "out", &nout);
    ck_assert_uint_eq(nin, nout);
    uint8_t *got = filled(nin, 0), *back = filled(nin, 0);
    size_t ts = vectors[_i].typesize, bs = vectors[_i].blocksize;
    for (size_t off = 0; off < nin; off += bs) {
        size_t len = nin - off < bs ? nin - off : bs;
        if (vectors[_i].bit) {
            b2_bitshuffle(ts, len, in + off, got + off, 1);
            b2_bitunshuffle(ts, len, want + off, back + off, 1);
        } else {
            b2_shuffle(ts, len, in + off, got + off);
            b2_unshuffle(ts, len, want + off, back + off);
        }
    }
    ASSERT_SAME(got, want, nin, "%s forward", vectors[_i].name);
    ASSERT_SAME(back, in, nin, "%s backward", vectors[_i].name);
    free(in), free(want), free(got), free(back);
}
END_TEST

/* ---- delta ---- */

START_TEST(delta_known_answer)
{
    /* typesize 4 (word 4): block 0 against itself, block 1 against block 0 */
    const uint8_t blk0[10] = { 1, 2, 3, 4, 1, 2, 3, 5, 0xee, 0xff };
    const uint8_t blk1[8] = { 1, 2, 3, 4, 0, 0, 0, 0 };
    const uint8_t want0[10] = { 1, 2, 3, 4, 0, 0, 0, 1, 0xee, 0xff };
    const uint8_t want1[8] = { 0, 0, 0, 0, 1, 2, 3, 5 };
    uint8_t out[10];
    b2_delta_encode(blk0, 0, 10, 4, blk0, out);
    ck_assert_mem_eq(out, want0, 10);
    b2_delta_encode(blk0, 10, 8, 4, blk1, out);
    ck_assert_mem_eq(out, want1, 8);
    /* typesize 3 works bytewise: each byte against the previous one */
    const uint8_t want3[10] = { 1, 3, 1, 7, 5, 3, 1, 6, 0xeb, 0x11 };
    b2_delta_encode(blk0, 0, 10, 3, blk0, out);
    ck_assert_mem_eq(out, want3, 10);
    /* decode in place, with dref the buffer itself for block 0 */
    memcpy(out, want0, 10);
    b2_delta_decode(out, 0, 10, 4, out);
    ck_assert_mem_eq(out, blk0, 10);
}
END_TEST

START_TEST(delta_round_trips)
{
    static const size_t tss[] = { 1, 2, 3, 4, 5, 8, 12, 16, 24, 255 };
    for (size_t t = 0; t < sizeof tss / sizeof tss[0]; t++) {
        size_t ts = tss[t], bs = 4096 + 8, len = 3 * bs + 13;
        uint8_t *src = rnd(len, ts), *enc = filled(len, 0), *want = filled(len, 0);
        uint8_t *dec = filled(len, 0);
        for (size_t off = 0; off < len; off += bs) {
            size_t n = len - off < bs ? len - off : bs;
            b2_delta_encode(src, off, n, ts, src + off, enc + off);
            ref_delta_encode(src, off, n, ts, src + off, want + off);
        }
        ASSERT_SAME(enc, want, len, "delta encode ts %zu", ts);
        /* decoding as Blosc does: in place, block 0 first, all against the output */
        memcpy(dec, enc, len);
        for (size_t off = 0; off < len; off += bs) {
            size_t n = len - off < bs ? len - off : bs;
            b2_delta_decode(dec, off, n, ts, dec + off);
        }
        ASSERT_SAME(dec, src, len, "delta decode ts %zu", ts);
        free(src), free(enc), free(want), free(dec);
    }
    /* blocks too short for one word are left as they are */
    uint8_t two[2] = { 7, 9 }, out2[2];
    b2_delta_encode(two, 0, 2, 8, two, out2);
    ck_assert_mem_eq(out2, two, 2);
    b2_delta_decode(out2, 0, 2, 8, out2);
    ck_assert_mem_eq(out2, two, 2);
}
END_TEST

/* ---- bytedelta ---- */

START_TEST(bytedelta_known_answer)
{
    /* typesize 3 over 8 bytes: streams {10, 12}, {200, 100}, {1, 255}, tail {7, 8} */
    const uint8_t src[8] = { 10, 12, 200, 100, 1, 255, 7, 8 };
    const uint8_t want[8] = { 10, 2, 200, 156, 1, 254, 7, 8 };
    uint8_t out[8];
    b2_bytedelta_encode(3, 8, src, out);
    ck_assert_mem_eq(out, want, 8);
    b2_bytedelta_decode(3, 8, out, out);   /* in place */
    ck_assert_mem_eq(out, src, 8);
    /* typesize 0 and fewer bytes than streams: copied */
    b2_bytedelta_encode(0, 8, src, out);
    ck_assert_mem_eq(out, src, 8);
    b2_bytedelta_encode(9, 8, src, out);
    ck_assert_mem_eq(out, src, 8);
}
END_TEST

/* Against the definition (each stream's byte minus the one before it), every typesize
 * 1..17 and a few large ones, lengths with and without a tail; decode both ways. */
START_TEST(bytedelta_round_trips)
{
    static const size_t lens[] = { 0, 1, 2, 15, 16, 17, 255, 4096, 4099, 65536 + 7 };
    for (size_t ts = 1; ts <= 20; ts++) {
        size_t t = ts <= 17 ? ts : ts == 18 ? 32 : ts == 19 ? 100 : 255;
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            size_t len = lens[l], n = len / t;
            uint8_t *src = rnd(len, t), *enc = filled(len, 0), *want = filled(len, 0);
            uint8_t *dec = filled(len, 0);
            for (size_t i = 0; i < len; i++)
                want[i] = i >= n * t || i % n == 0 ? src[i] : (uint8_t)(src[i] - src[i - 1]);
            b2_bytedelta_encode(t, len, src, enc);
            ASSERT_SAME(enc, want, len, "bytedelta encode ts %zu len %zu", t, len);
            b2_bytedelta_decode(t, len, enc, dec);
            ASSERT_SAME(dec, src, len, "bytedelta decode ts %zu len %zu", t, len);
            b2_bytedelta_decode(t, len, enc, enc);
            ASSERT_SAME(enc, src, len, "bytedelta decode in place ts %zu len %zu", t, len);
            free(src), free(enc), free(want), free(dec);
        }
    }
}
END_TEST

/* ---- truncate precision ---- */

START_TEST(trunc_prec_known_answer)
{
    float f[3] = { 1.0f + 1.0f / 3.0f, -3.14159265f, 1e30f }, g[3];
    uint32_t u[3], v[3];
    memcpy(u, f, sizeof u);
    /* keep 10 mantissa bits = remove 13 */
    ck_assert_int_eq(b2_trunc_prec(10, 4, sizeof f, (uint8_t *)f, (uint8_t *)g), 0);
    memcpy(v, g, sizeof v);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(v[i], u[i] & 0xFFFFE000u);
    ck_assert_int_eq(b2_trunc_prec(-13, 4, sizeof f, (uint8_t *)f, (uint8_t *)g), 0);
    memcpy(v, g, sizeof v);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(v[i], u[i] & 0xFFFFE000u);
    /* 1 + 1/3 = 0x3FAAAAAA; 1 mantissa bit kept -> 0x3F800000 (1.0) */
    ck_assert_uint_eq(u[0], 0x3FAAAAABu);
    ck_assert_int_eq(b2_trunc_prec(1, 4, 4, (uint8_t *)f, (uint8_t *)g), 0);
    memcpy(v, g, 4);
    ck_assert_uint_eq(v[0], 0x3F800000u);

    double d[2] = { 1.0 / 3.0, 2.5e-300 }, e[2];
    uint64_t a[2], b[2];
    memcpy(a, d, sizeof a);
    ck_assert_int_eq(b2_trunc_prec(20, 8, sizeof d, (uint8_t *)d, (uint8_t *)e), 0);
    memcpy(b, e, sizeof b);
    for (int i = 0; i < 2; i++)
        ck_assert(b[i] == (a[i] & ~((UINT64_C(1) << 32) - 1)));
    /* a tail that is not a whole item is copied */
    uint8_t t6[6] = { 0xff, 0xff, 0xff, 0xff, 0x12, 0x34 }, o6[6];
    ck_assert_int_eq(b2_trunc_prec(0 - 8, 4, 6, t6, o6), 0);
    const uint8_t w6[6] = { 0x00, 0xff, 0xff, 0xff, 0x12, 0x34 };
    ck_assert_mem_eq(o6, w6, 6);
    /* full precision is a copy */
    ck_assert_int_eq(b2_trunc_prec(23, 4, 6, t6, o6), 0);
    ck_assert_mem_eq(o6, t6, 6);
}
END_TEST

START_TEST(int_trunc_known_answer)
{
    /* typesize 2: keep 4 high bits of 0xabcd -> 0xa000; remove 3 bits of 0x1237 -> 0x1230;
     * the odd byte at the end is copied */
    const uint8_t in[5] = {0xcd, 0xab, 0x37, 0x12, 0x99};
    uint8_t out[5];
    ck_assert_int_eq(b2_int_trunc(4, 2, 5, in, out), 0);
    const uint8_t want4[5] = {0x00, 0xa0, 0x00, 0x10, 0x99};
    ck_assert_mem_eq(out, want4, 5);
    ck_assert_int_eq(b2_int_trunc(-3, 2, 5, in, out), 0);
    const uint8_t want3[5] = {0xc8, 0xab, 0x30, 0x12, 0x99};
    ck_assert_mem_eq(out, want3, 5);
    ck_assert_int_eq(b2_int_trunc(16, 2, 5, in, out), 0);   /* keep all */
    ck_assert_mem_eq(out, in, 5);
    uint64_t v = 0xffffffffffffffffull, w;
    ck_assert_int_eq(b2_int_trunc(1, 8, 8, (uint8_t *)&v, (uint8_t *)&w), 0);
    ck_assert(w == 0x8000000000000000ull);
    /* refused: no bit kept, more bits than there are, typesizes without an integer */
    ck_assert_int_eq(b2_int_trunc(0, 2, 5, in, out), -1);
    ck_assert_int_eq(b2_int_trunc(-16, 2, 5, in, out), -1);
    ck_assert_int_eq(b2_int_trunc(17, 2, 5, in, out), -1);
    ck_assert_int_eq(b2_int_trunc(3, 3, 5, in, out), -1);
    ck_assert_int_eq(b2_int_trunc(3, 16, 5, in, out), -1);
}
END_TEST

START_TEST(trunc_prec_refuses)
{
    uint8_t buf[16] = { 0 }, out[16];
    ck_assert_int_eq(b2_trunc_prec(10, 2, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(10, 16, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(24, 4, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(0, 4, 16, buf, out), -1);    /* would zero all 23 */
    ck_assert_int_eq(b2_trunc_prec(-23, 4, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(-24, 4, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(53, 8, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(0, 8, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(-52, 8, 16, buf, out), -1);
    ck_assert_int_eq(b2_trunc_prec(-51, 8, 16, buf, out), 0);
    ck_assert_int_eq(b2_trunc_prec(52, 8, 16, buf, out), 0);
}
END_TEST

/* ---- dispatch ---- */

START_TEST(dispatch_follows_environment)
{
    const char *impl = b2_shuffle_impl();
    const b2_kernels *k = b2k_active();
    ck_assert_str_eq(impl, k->name);
    ck_assert_ptr_eq(b2k_by_name(impl), k);
    const char *forced = getenv("B2FS_SIMD");
    if (forced != NULL && b2k_by_name(forced) != NULL)
        ck_assert_str_eq(impl, forced);
    ck_assert_ptr_nonnull(b2k_by_name("generic"));
    ck_assert_ptr_null(b2k_by_name("altivec"));
    fprintf(stderr, "shuffle kernels in use: %s (B2FS_SIMD=%s)\n", impl,
            forced ? forced : "unset");
}
END_TEST

static Suite *shuffle_suite(void)
{
    Suite *s = suite_create("shuffle");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, shuffle_known_answer);
    tcase_add_test(tc, bitshuffle_known_answer);
    tcase_add_loop_test(tc, kernel_sets_match_reference, 0,
                        (int)(sizeof set_names / sizeof set_names[0]) * 32);
    tcase_add_loop_test(tc, simd_sets_match_generic, 0, 2 * 32);
    tcase_add_test(tc, large_typesizes);
    tcase_add_loop_test(tc, unshuffle_delta_matches_reference, 0,
                        (int)(sizeof set_names / sizeof set_names[0]) * 32);
    tcase_add_loop_test(tc, xor_matches_reference, 0,
                        (int)(sizeof set_names / sizeof set_names[0]));
    tcase_add_loop_test(tc, byte_kernels_match_reference, 0,
                        (int)(sizeof set_names / sizeof set_names[0]));
    tcase_add_loop_test(tc, prefix_xor_matches_reference, 0,
                        (int)(sizeof set_names / sizeof set_names[0]));
    tcase_add_loop_test(tc, matches_c_blosc1, 0, sizeof vectors / sizeof vectors[0]);
    tcase_add_test(tc, delta_known_answer);
    tcase_add_test(tc, delta_round_trips);
    tcase_add_test(tc, bytedelta_known_answer);
    tcase_add_test(tc, bytedelta_round_trips);
    tcase_add_test(tc, trunc_prec_known_answer);
    tcase_add_test(tc, int_trunc_known_answer);
    tcase_add_test(tc, trunc_prec_refuses);
    tcase_add_test(tc, dispatch_follows_environment);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(shuffle_suite());
}
