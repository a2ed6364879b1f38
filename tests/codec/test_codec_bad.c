/* Hostile chunks: every malformed header field, block start and stream size gives an
 * error code, never a read or write out of bounds (these run under ASan and UBSan).
 * Buffers are allocated at their exact size so that any over-read is caught. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"
#include "tests/codec/codec_helpers.h"
#include "tests/lib/testutil.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint8_t *dup_exact(const uint8_t *src, size_t len)
{
    uint8_t *p = malloc(len > 0 ? len : 1);
    memcpy(p, src, len);
    return p;
}

/* A valid chunk to spoil: codec, typesize, filters, blocksize, size. */
static uint8_t *make_chunk(int codec, int ts, const char *filters, int32_t bs, size_t n,
                           int blosc1, int *cbytes, uint8_t **orig)
{
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = codec;
    p.clevel = 5;
    p.typesize = ts;
    p.blocksize = bs;
    p.blosc1_format = blosc1;
    p.splitmode = B2_SPLIT_ALWAYS;
    ck_assert_int_eq(b2_filters_parse(filters, ',', p.filters, p.filters_meta), 0);
    uint8_t *in = malloc(n);
    tu_fill_float_series(in, n, 11);
    memset(in + n / 3, 0, n / 10);
    memset(in + n / 2, 0x33, n / 10);
    b2_cctx *c = b2_cctx_new(&p);
    uint8_t *out = malloc(n + B2_MAX_OVERHEAD);
    *cbytes = b2_chunk_encode(c, in, n, out, n + B2_MAX_OVERHEAD);
    ck_assert_int_gt(*cbytes, 0);
    b2_cctx_free(c);
    if (orig != NULL)
        *orig = in;
    else
        free(in);
    return out;
}

/* Decodes a (possibly spoiled) chunk every way: whole, and by blocks through memory and
 * a reader. Returns the whole decode's result. Anything but success or a B2E_* code,
 * or a memory error, fails the test. */
static int try_all(const uint8_t *chunk, size_t len, size_t out_len)
{
    uint8_t *c = dup_exact(chunk, len);
    uint8_t *out = malloc(out_len > 0 ? out_len : 1);
    b2_dctx *d = b2_dctx_new();
    int rc = b2_chunk_decode(d, c, len, out, out_len);
    ck_assert(rc >= 0 || is_codec_error(rc));
    ck_assert(rc <= (int)out_len);

    rec_reader rr;
    b2_chunk_src srcs[2] = {mem_src(c, len), rec_src(&rr, c, len)};
    for (int s = 0; s < 2; s++) {
        b2_chunk_layout lay;
        int lrc = b2_chunk_layout_load(&lay, &srcs[s]);
        ck_assert(lrc == 0 || is_codec_error(lrc));
        if (lrc < 0)
            continue;
        int32_t bs = lay.info.blocksize;
        int32_t nb = bs > 0 ? (int32_t)(((int64_t)lay.info.nbytes + bs - 1) / bs) : 0;
        for (int32_t b = 0; b < nb && b < 64; b++) {
            int r = b2_chunk_decode_blocks(d, &lay, &srcs[s], b, 1, out, out_len);
            ck_assert((r >= 0 || is_codec_error(r)) && r <= (int)out_len);
        }
        if (nb > 0)
            b2_chunk_decode_blocks(d, &lay, &srcs[s], 0, nb, out, out_len);
        b2_chunk_layout_free(&lay);
    }
    b2_dctx_free(d);
    free(out);
    free(c);
    return rc;
}

static void set32(uint8_t *p, int32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int32_t get32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

START_TEST(test_truncated)
{
    int cb;
    uint8_t *chunks[3];
    int lens[3];
    chunks[0] = make_chunk(B2_LZ4, 4, "shuffle", 1024, 5000, 0, &lens[0], NULL);
    chunks[1] = make_chunk(B2_ZSTD, 8, "bitshuffle", 0, 3000, 1, &lens[1], NULL);
    chunks[2] = make_chunk(B2_ZLIB, 2, "delta,shuffle", 512, 4001, 0, &lens[2], NULL);
    for (int k = 0; k < 3; k++) {
        cb = lens[k];
        ck_assert_int_eq(try_all(chunks[k], (size_t)cb, 8000), get32(chunks[k] + 4));
        for (int len = 0; len < cb; len += len < 64 ? 1 : 7) {
            int rc = try_all(chunks[k], (size_t)len, 8000);
            ck_assert_msg(rc < 0, "a chunk cut to %d of %d bytes decoded", len, cb);
        }
        free(chunks[k]);
    }
}
END_TEST

START_TEST(test_header_fields)
{
    int cb;
    uint8_t *good = make_chunk(B2_LZ4, 4, "shuffle", 1024, 5000, 0, &cb, NULL);
    uint8_t *c = malloc((size_t)cb);
    struct { int off; int32_t v; int width; int want; } cases[] = {
        {12, 0, 4, 0},                 /* cbytes larger than the buffer (set below) */
        {12, 31, 4, B2E_HEADER},       /* cbytes smaller than the header */
        {12, -5, 4, B2E_HEADER},
        {4, -1, 4, B2E_HEADER},        /* nbytes */
        {4, INT32_MAX, 4, B2E_HEADER},
        {4, B2_MAX_NBYTES + 1, 4, B2E_HEADER},
        {8, 0, 4, B2E_HEADER},         /* blocksize */
        {8, -1, 4, B2E_HEADER},
        {8, 5001, 4, B2E_HEADER},
        {8, 600000000, 4, B2E_HEADER},
        {8, 1, 4, B2E_HEADER},         /* 5000 block starts do not fit */
        {3, 0, 1, B2E_HEADER},         /* typesize 0 */
        {0, 0, 1, B2E_VERSION},        /* version 0 */
        {30, 2, 1, B2E_VERSION},       /* unknown bit in the second flags byte */
        {30, 1, 1, B2E_HEADER},        /* variable-length blocks: 1024 block starts */
        {31, 0x08, 1, B2E_VERSION},    /* lazy chunk */
        {31, 0x50, 1, B2E_HEADER},     /* special id 5 */
        {31, 0x70, 1, B2E_HEADER},
        {16, 5, 1, B2E_FILTER},        /* unknown filter ids */
        {21, 200, 1, B2E_FILTER},
        {18, 255, 1, B2E_FILTER},
    };
    for (size_t i = 0; i < N(cases); i++) {
        memcpy(c, good, (size_t)cb);
        int want = cases[i].want;
        if (i == 0) {
            set32(c + 12, cb + 1);
            want = B2E_TRUNCATED;
        } else if (cases[i].width == 4) {
            set32(c + cases[i].off, cases[i].v);
        } else {
            c[cases[i].off] = (uint8_t)cases[i].v;
        }
        int rc = try_all(c, (size_t)cb, 8000);
        ck_assert_msg(rc == want, "case %zu: got %d (%s), want %d", i, rc, b2_strerror(rc), want);
        b2_chunk_info info;
        int prc = b2_chunk_parse_header(c, (size_t)cb, &info);
        if (i > 0)
            ck_assert_int_eq(prc, want);
    }
    /* Codec codes nobody can decode: snappy (2), lizard (5), user-defined (6), 7. */
    for (int code = 2; code < 8; code++) {
        if (code == 3 || code == 4)
            continue;
        memcpy(c, good, (size_t)cb);
        c[2] = (uint8_t)((c[2] & 0x1f) | code << 5);
        ck_assert_int_eq(try_all(c, (size_t)cb, 8000), B2E_CODEC);
    }
    /* Output too small. */
    ck_assert_int_eq(try_all(good, (size_t)cb, 4999), B2E_DST_SMALL);
    free(c);
    free(good);
}
END_TEST

START_TEST(test_bstarts_and_streams)
{
    int cb;
    uint8_t *good = make_chunk(B2_ZSTD, 4, "shuffle", 1024, 5000, 0, &cb, NULL);
    int32_t nb = 5;
    uint8_t *c = malloc((size_t)cb);
    int32_t bad_starts[] = {0, -1, 31, 32 + 4 * 5 - 1, INT32_MAX, INT32_MIN};
    for (int32_t b = 0; b < nb; b++) {
        for (size_t k = 0; k < N(bad_starts) + 1; k++) {
            memcpy(c, good, (size_t)cb);
            set32(c + 32 + 4 * b, k < N(bad_starts) ? bad_starts[k] : cb);
            ck_assert_int_eq(try_all(c, (size_t)cb, 5000), B2E_BSTARTS);
        }
        /* Two blocks starting at the same place: inside the chunk, so a whole decode
         * may read the same streams twice, but a layout refuses it. */
        memcpy(c, good, (size_t)cb);
        set32(c + 32 + 4 * b, get32(c + 32 + 4 * ((b + 1) % nb)));
        try_all(c, (size_t)cb, 5000);
        b2_chunk_src src = mem_src(c, (size_t)cb);
        b2_chunk_layout lay;
        ck_assert_int_eq(b2_chunk_layout_load(&lay, &src), B2E_BSTARTS);
    }
    /* Stream sizes: past the chunk, huge, a run below -255, a token without its bit. */
    int32_t s0 = get32(good + 32);
    int32_t bad_sizes[] = {cb, INT32_MAX, -256, INT32_MIN};
    for (size_t k = 0; k < N(bad_sizes); k++) {
        memcpy(c, good, (size_t)cb);
        set32(c + s0, bad_sizes[k]);
        ck_assert_int_eq(try_all(c, (size_t)cb, 5000), B2E_STREAM);
    }
    memcpy(c, good, (size_t)cb);
    set32(c + s0, -7);
    c[s0 + 4] = 0x02;
    ck_assert_int_eq(try_all(c, (size_t)cb, 5000), B2E_STREAM);
    /* A compressed stream that lies about its length or contents. */
    memcpy(c, good, (size_t)cb);
    int32_t cs = get32(c + s0);
    if (cs > 8) {
        set32(c + s0, cs - 3);
        ck_assert_int_lt(try_all(c, (size_t)cb, 5000), 0);
    }
    free(c);
    free(good);
}
END_TEST

/* A bad start of the last block is refused before any block is decoded: the output
 * stays untouched (a fuzz input used to spend seconds decoding block 0 first). */
START_TEST(test_bstarts_checked_first)
{
    int cb;
    uint8_t *c = make_chunk(B2_ZSTD, 4, "shuffle", 1024, 5000, 0, &cb, NULL);
    set32(c + 32 + 4 * 4, cb + 100);
    uint8_t out[5000];
    memset(out, 0xAA, sizeof out);
    b2_dctx *d = b2_dctx_new();
    ck_assert_int_eq(b2_chunk_decode(d, c, (size_t)cb, out, sizeof out), B2E_BSTARTS);
    for (size_t i = 0; i < sizeof out; i++)
        ck_assert_int_eq(out[i], 0xAA);
    b2_dctx_free(d);
    free(c);
}
END_TEST

START_TEST(test_special_and_memcpy_headers)
{
    uint8_t c[40];
    ck_assert_int_eq(b2_chunk_make_special(B2_SPECIAL_VALUE, 4, 4096, "abcd", c, sizeof c), 36);
    /* A value size (cbytes - 32) that does not divide nbytes. */
    set32(c + 12, 35);
    ck_assert_int_eq(try_all(c, 35, 4096), B2E_HEADER);
    set32(c + 12, 32);
    ck_assert_int_eq(try_all(c, 32, 4096), B2E_HEADER);
    set32(c + 12, 36);
    set32(c + 4, 4098);
    ck_assert_int_eq(try_all(c, 36, 8192), B2E_HEADER);
    /* NaN needs typesize 4 or 8. */
    ck_assert_int_eq(b2_chunk_make_special(B2_SPECIAL_NAN, 4, 4096, NULL, c, sizeof c), 32);
    c[3] = 3;
    ck_assert_int_eq(try_all(c, 32, 4096), B2E_HEADER);
    /* A memcpyed chunk whose cbytes is not nbytes + header. */
    uint8_t m[16 + 100];
    memset(m, 0, sizeof m);
    m[0] = 2;
    m[1] = 1;
    m[2] = 0x02;
    m[3] = 1;
    set32(m + 4, 100);
    set32(m + 8, 100);
    set32(m + 12, 116);
    ck_assert_int_eq(try_all(m, sizeof m, 100), 100);
    set32(m + 12, 115);
    ck_assert_int_eq(try_all(m, sizeof m, 100), B2E_HEADER);
    set32(m + 12, 116);
    set32(m + 4, 101);
    ck_assert_int_eq(try_all(m, sizeof m, 200), B2E_HEADER);
}
END_TEST

START_TEST(test_dictionary_section)
{
    int cb;
    uint8_t *good = make_chunk(B2_ZSTD, 4, "shuffle", 1024, 5000, 0, &cb, NULL);
    uint8_t *c = malloc((size_t)cb);
    int32_t sizes[] = {0, -1, 32769, INT32_MAX, 100000};
    for (size_t k = 0; k < N(sizes); k++) {
        memcpy(c, good, (size_t)cb);
        c[31] |= 0x01;                    /* claims a dictionary after the block starts */
        set32(c + 32 + 4 * 5, sizes[k]);
        ck_assert_int_eq(try_all(c, (size_t)cb, 5000), B2E_DICT);
    }
    /* A plausible dictionary size: the block starts now point into it. */
    memcpy(c, good, (size_t)cb);
    c[31] |= 0x01;
    set32(c + 32 + 4 * 5, 16);
    ck_assert_int_lt(try_all(c, (size_t)cb, 5000), 0);
    /* Dictionaries only for zstd and lz4. */
    uint8_t *z = make_chunk(B2_ZLIB, 4, "shuffle", 1024, 5000, 0, &cb, NULL);
    z[31] |= 0x01;
    ck_assert_int_eq(try_all(z, (size_t)cb, 5000), B2E_DICT);
    free(z);
    free(c);
    free(good);
}
END_TEST

START_TEST(test_reader_failures)
{
    int cb;
    uint8_t *good = make_chunk(B2_LZ4, 4, "delta,shuffle", 1024, 5000, 0, &cb, NULL);
    uint8_t out[5000];
    b2_dctx *d = b2_dctx_new();
    for (int fail_after = 0; fail_after < 6; fail_after++) {
        rec_reader rr;
        b2_chunk_src src = rec_src(&rr, good, (size_t)cb);
        rr.fail_after = fail_after;
        b2_chunk_layout lay;
        int rc = b2_chunk_layout_load(&lay, &src);
        if (rc < 0) {
            ck_assert_int_eq(rc, B2E_IO);
            continue;
        }
        rc = b2_chunk_decode_blocks(d, &lay, &src, 3, 2, out, sizeof out);
        ck_assert_int_eq(rc, B2E_IO);
        b2_chunk_layout_free(&lay);
    }
    /* Ranges outside the chunk and bad arguments. */
    b2_chunk_src src = mem_src(good, (size_t)cb);
    b2_chunk_layout lay;
    ck_assert_int_eq(b2_chunk_layout_load(&lay, &src), 0);
    ck_assert_int_eq(b2_chunk_decode_blocks(d, &lay, &src, 4, 2, out, sizeof out), B2E_PARAM);
    ck_assert_int_eq(b2_chunk_decode_blocks(d, &lay, &src, -1, 1, out, sizeof out), B2E_PARAM);
    ck_assert_int_eq(b2_chunk_decode_blocks(d, &lay, &src, 0, -1, out, sizeof out), B2E_PARAM);
    ck_assert_int_eq(b2_chunk_decode_blocks(d, &lay, &src, 0, 2, out, 2047), B2E_DST_SMALL);
    ck_assert_int_eq(b2_chunk_decode_blocks(d, &lay, &src, 4, 1, out, 904), 904);
    b2_chunk_layout_free(&lay);
    b2_chunk_src none = {NULL, 0, NULL, NULL};
    ck_assert_int_eq(b2_chunk_layout_load(&lay, &none), B2E_PARAM);
    /* A memory source shorter than cbytes. */
    b2_chunk_src shorter = mem_src(good, (size_t)cb - 1);
    ck_assert_int_eq(b2_chunk_layout_load(&lay, &shorter), B2E_TRUNCATED);
    b2_dctx_free(d);
    free(good);
}
END_TEST

/* Random byte changes in valid chunks of every kind: never a crash. */
/* Chunk 0 of a C-Blosc2 frame of variable-length-block chunks (tests/data/vlblocks),
 * found by the frame header's length field; the caller frees *file. */
static const uint8_t *vl_chunk(const char *name, uint8_t **file, int *cbytes)
{
    char path[256];
    snprintf(path, sizeof path, "vlblocks/%s", name);
    size_t len;
    *file = tu_read_file(tu_data_path(path), &len);
    ck_assert_msg(*file != NULL && len > 64, "%s missing", path);
    const uint8_t *f = *file;
    uint32_t hl = (uint32_t)f[11] << 24 | (uint32_t)f[12] << 16 | (uint32_t)f[13] << 8 | f[14];
    ck_assert(hl + 32 < len);
    *cbytes = get32(f + hl + 12);
    ck_assert(*cbytes > 32 && hl + (size_t)*cbytes <= len);
    return f + hl;
}

/* A reader that notes the most bytes asked for at once. */
static size_t most_asked;
static int asking_read(void *opaque, uint64_t off, size_t len, void *out)
{
    if (len > most_asked)
        most_asked = len;
    return rec_read(opaque, off, len, out);
}

/* Variable-length-block chunks: read whole, by their one geometric block, and every
 * field that can lie about the blocks refused. */
START_TEST(test_vlblocks)
{
    const char *names[] = {"vl-zstd5-shuffle-t4.b2frame", "vl-zstd3-none-t1-dict.b2frame",
                           "vl-lz45-bitshuffle-t8.b2frame"};
    for (size_t k = 0; k < N(names); k++) {
        uint8_t *file;
        int cb;
        const uint8_t *good = vl_chunk(names[k], &file, &cb);
        b2_chunk_info in;
        ck_assert_int_eq(b2_chunk_parse_header(good, (size_t)cb, &in), 0);
        ck_assert(in.vlblocks && in.version == 6 && in.nblocks > 1 && in.blocksize == in.nbytes);
        int32_t nb = in.nbytes;
        ck_assert_int_eq(try_all(good, (size_t)cb, (size_t)nb), nb);
        ck_assert_int_eq(try_all(good, (size_t)cb, (size_t)nb - 1), B2E_DST_SMALL);
        ck_assert_int_eq(try_all(good, (size_t)cb - 1, (size_t)nb), B2E_TRUNCATED);
        /* the same bytes whole and through a layout */
        uint8_t *whole = malloc((size_t)nb), *part = malloc((size_t)nb);
        b2_dctx *d = b2_dctx_new();
        ck_assert_int_eq(b2_chunk_decode(d, good, (size_t)cb, whole, (size_t)nb), nb);
        b2_chunk_src src = mem_src(good, (size_t)cb);
        b2_chunk_layout lay;
        ck_assert_int_eq(b2_chunk_layout_load(&lay, &src), 0);
        ck_assert_int_eq(b2_chunk_decode_blocks(d, &lay, &src, 0, 1, part, (size_t)nb), nb);
        ck_assert(memcmp(whole, part, (size_t)nb) == 0);
        ck_assert_int_eq(b2_chunk_decode_blocks(d, &lay, &src, 1, 1, part, (size_t)nb), B2E_PARAM);
        b2_chunk_layout_free(&lay);
        b2_dctx_free(d);
        free(whole);
        free(part);

        uint8_t *c = malloc((size_t)cb);
        int32_t b0 = get32(good + 32), b1 = get32(good + 36);
        struct { int off; int32_t v; int width; int want; } cases[] = {
            {30, 3, 1, B2E_VERSION},       /* another flags2 bit */
            {2, good[2] | 0x02, 1, B2E_HEADER},   /* memcpyed */
            {31, good[31] | 0x10, 1, B2E_HEADER}, /* a zero special chunk */
            {8, 0, 4, B2E_HEADER},         /* no blocks */
            {8, nb + 1, 4, B2E_HEADER},    /* more blocks than bytes */
            {32, b1, 4, B2E_BSTARTS},      /* blocks out of order */
            {36, b0, 4, B2E_BSTARTS},
            {32, 8, 4, B2E_BSTARTS},       /* block 0 inside the header */
            {32, cb, 4, B2E_BSTARTS},      /* past the end */
            {b0, 0, 4, B2E_STREAM},        /* block 0's size */
            {b0, -1, 4, B2E_STREAM},
            {b0, nb + 1, 4, B2E_STREAM},
        };
        for (size_t i = 0; i < N(cases); i++) {
            memcpy(c, good, (size_t)cb);
            if (cases[i].width == 4)
                set32(c + cases[i].off, cases[i].v);
            else
                c[cases[i].off] = (uint8_t)cases[i].v;
            int rc = try_all(c, (size_t)cb, (size_t)nb);
            ck_assert_msg(rc == cases[i].want, "%s case %zu: got %d (%s), want %d", names[k], i,
                          rc, b2_strerror(rc), cases[i].want);
        }
        /* block 0 said to be shorter or longer by a little: the blocks no longer add up
         * to nbytes, or a stream does not decode to the size given */
        for (int delta = -3; delta <= 3; delta++) {
            if (delta == 0)
                continue;
            memcpy(c, good, (size_t)cb);
            set32(c + b0, get32(good + b0) + delta);
            int rc = try_all(c, (size_t)cb, (size_t)nb);
            ck_assert_msg(rc < 0, "%s: block 0 size %+d read as %d", names[k], delta, rc);
        }
        /* random damage: errors only (and no stray access under the sanitizers) */
        uint64_t seed = 5 + k;
        for (int iter = 0; iter < 300; iter++) {
            memcpy(c, good, (size_t)cb);
            for (int f = 0; f < 1 + iter % 4; f++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                size_t at = (size_t)(seed >> 33) % (size_t)cb;
                if (iter % 2 == 0)
                    at %= (size_t)(cb < 200 ? cb : 200);
                c[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
            }
            try_all(c, (size_t)cb, (size_t)nb);
        }
        /* a header claiming many more stored bytes than the blocks take (the last
         * block's extent runs to cbytes): a reader is never asked for more than a block
         * can hold (the fuzzer's 1.8 GB buffer, 2026-11-22) */
        memcpy(c, good, (size_t)cb);
        set32(c + 12, cb + 100000);
        rec_reader rr;
        b2_chunk_src lying = rec_src(&rr, c, (size_t)cb);
        lying.read = asking_read;
        ck_assert_int_eq(b2_chunk_layout_load(&lay, &lying), 0);
        uint8_t *out = malloc((size_t)nb);
        d = b2_dctx_new();
        most_asked = 0;
        ck_assert_int_lt(b2_chunk_decode_blocks(d, &lay, &lying, 0, 1, out, (size_t)nb), 0);
        ck_assert_msg(most_asked <= (size_t)nb + 5 * ((size_t)in.typesize + 1),
                      "%s: asked for %zu bytes at once", names[k], most_asked);
        b2_dctx_free(d);
        b2_chunk_layout_free(&lay);
        free(out);
        free(c);
        free(file);
    }
}
END_TEST

START_TEST(test_random_corruption)
{
    struct { int codec, ts; const char *f; int32_t bs; size_t n; int b1; } kinds[] = {
        {B2_LZ4, 4, "shuffle", 512, 3000, 0},
        {B2_LZ4HC, 8, "bitshuffle", 1024, 4000, 1},
        {B2_ZLIB, 2, "delta,shuffle", 256, 2001, 0},
        {B2_ZSTD, 3, "shuffle", 300, 2500, 0},
        {B2_BLOSCLZ, 8, "trunc:15,shuffle", 512, 3000, 0},
        {B2_BLOSCLZ, 1, "none", 256, 2000, 1},
    };
    uint64_t seed = 1;
    for (size_t k = 0; k < N(kinds); k++) {
        int cb;
        uint8_t *good = make_chunk(kinds[k].codec, kinds[k].ts, kinds[k].f, kinds[k].bs,
                                   kinds[k].n, kinds[k].b1, &cb, NULL);
        uint8_t *c = malloc((size_t)cb);
        for (int iter = 0; iter < 300; iter++) {
            memcpy(c, good, (size_t)cb);
            int flips = 1 + iter % 4;
            for (int f = 0; f < flips; f++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                size_t at = (size_t)(seed >> 33) % (size_t)cb;
                /* Half the changes hit the header and block starts. */
                if (iter % 2 == 0)
                    at %= (size_t)(cb < 64 ? cb : 64);
                c[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
            }
            try_all(c, (size_t)cb, kinds[k].n);
        }
        free(c);
        free(good);
    }
}
END_TEST

/* The codec's codes lie below the -errno space, each its own and described. */
START_TEST(test_error_codes)
{
    static const int codes[] = {B2E_ALL_CODES};
    check_own_codes(codes, N(codes), b2_strerror);
    ck_assert(b2_is_errno(-EPERM) && b2_is_errno(-B2_ERRNO_MAX));
    ck_assert(!b2_is_errno(0) && !b2_is_errno(-B2_ERRNO_MAX - 1) && !b2_is_errno(EPERM));
    ck_assert_str_eq(b2_strerror(-ENOSPC), strerror(ENOSPC));
    ck_assert_str_eq(b2_strerror(B2E_OK), "success");
    ck_assert_str_eq(b2_strerror(-5000), "unknown error");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec-bad-input");
    TCase *tc = tcase_create("bad");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_header_fields);
    tcase_add_test(tc, test_bstarts_and_streams);
    tcase_add_test(tc, test_bstarts_checked_first);
    tcase_add_test(tc, test_special_and_memcpy_headers);
    tcase_add_test(tc, test_dictionary_section);
    tcase_add_test(tc, test_reader_failures);
    tcase_add_test(tc, test_vlblocks);
    tcase_add_test(tc, test_random_corruption);
    tcase_add_test(tc, test_error_codes);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
