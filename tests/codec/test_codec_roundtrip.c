/* Encode -> decode round trips over codecs x filter pipelines x typesizes x sizes x
 * split modes, in both chunk forms, with block-range decodes through a memory source
 * and through a reader that records what it reads. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/chunk.h"
#include "shuffle/shuffle.h"
#include "tests/codec/codec_helpers.h"
#include "tests/lib/testutil.h"

static const int codecs[] = {B2_BLOSCLZ, B2_LZ4, B2_LZ4HC, B2_ZLIB, B2_ZSTD};
static const int typesizes[] = {1, 2, 3, 4, 8, 12, 16};
static const int splitmodes[] = {B2_SPLIT_ALWAYS, B2_SPLIT_NEVER, B2_SPLIT_AUTO};
static const char *pipelines[] = {"none", "shuffle", "bitshuffle", "delta,shuffle",
                                  "trunc:10,shuffle", "shuffle,bytedelta"};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Data with smooth numbers, zero runs, a repeated byte and noise, so that every kind
 * of stream (compressed, raw, zero run, byte run) occurs. */
static void fill(uint8_t *buf, size_t len, uint64_t seed)
{
    tu_fill_float_series(buf, len, seed);
    if (len > 3000) {
        memset(buf + len / 4, 0, len / 8);
        memset(buf + len / 2, 0xa5, len / 8);
        tu_fill_random(buf + len - len / 8, len / 8, seed + 1);
    }
}

/* What decoding must give: the input, or the input truncated when the pipeline is lossy
 * (a memcpyed chunk skips the filters, as in C-Blosc2). */
static void expected(const b2_cparams *p, int memcpyed, const uint8_t *in, size_t len,
                     uint8_t *out)
{
    memcpy(out, in, len);
    for (int i = 0; !memcpyed && i < B2_MAX_FILTERS; i++) {
        if (p->filters[i] == B2_TRUNC_PREC)
            ck_assert_int_eq(b2_trunc_prec((int8_t)p->filters_meta[i], (size_t)p->typesize,
                                           len, in, out), 0);
        if (p->filters[i] == B2_INT_TRUNC)
            ck_assert_int_eq(b2_int_trunc((int8_t)p->filters_meta[i], (size_t)p->typesize,
                                          len, in, out), 0);
    }
}

/* Checks that every block range decodes to the right bytes through both sources, and
 * that the reader is asked only for the requested blocks' streams (and block 0's for
 * delta). */
static void check_ranges(b2_dctx *dctx, const uint8_t *chunk, size_t clen, const uint8_t *want,
                         size_t nbytes)
{
    rec_reader rr;
    b2_chunk_src msrc = mem_src(chunk, clen);
    b2_chunk_src rsrc = rec_src(&rr, chunk, clen);
    b2_chunk_layout lay, rlay;
    ck_assert_int_eq(b2_chunk_layout_load(&lay, &msrc), 0);
    ck_assert_int_eq(b2_chunk_layout_load(&rlay, &rsrc), 0);
    /* Loading reads the header, the block starts and the dictionary only. */
    for (int k = 0; k < rr.nreads; k++)
        ck_assert_uint_le(rr.off[k] + rr.n[k], (uint64_t)lay.info.header_len +
                                                   4 * (uint64_t)lay.info.nblocks);
    int32_t bs = lay.info.blocksize;
    int32_t nb = lay.info.nblocks;
    int delta = memchr(lay.info.filters, B2_DELTA, B2_MAX_FILTERS) != NULL;
    uint8_t *out = malloc(nbytes + 1);
    for (int32_t first = 0; first < nb; first++) {
        for (int32_t count = 1; first + count <= nb; count++) {
            size_t start = (size_t)first * bs;
            size_t end = (size_t)(first + count) * bs;
            if (end > nbytes)
                end = nbytes;
            int got = b2_chunk_decode_blocks(dctx, &lay, &msrc, first, count, out, nbytes);
            ck_assert_int_eq(got, (int)(end - start));
            ck_assert(memcmp(out, want + start, end - start) == 0);

            rr.nreads = 0;
            got = b2_chunk_decode_blocks(dctx, &rlay, &rsrc, first, count, out, nbytes);
            ck_assert_int_eq(got, (int)(end - start));
            ck_assert(memcmp(out, want + start, end - start) == 0);
            for (int k = 0; k < rr.nreads; k++) {
                int ok = 0;
                for (int32_t b = 0; b < nb && !ok; b++) {
                    int needed = (b >= first && b < first + count) || (delta && b == 0);
                    ok = needed && rr.off[k] == (uint64_t)rlay.bstarts[b] &&
                         rr.off[k] + rr.n[k] <= (uint64_t)rlay.bends[b];
                }
                ck_assert_msg(ok, "read of %zu bytes at %llu not needed for blocks %d+%d",
                              rr.n[k], (unsigned long long)rr.off[k], first, count);
            }
            int expect_reads = count + (delta && first > 0);
            ck_assert_int_eq(rr.nreads, expect_reads);
        }
    }
    free(out);
    b2_chunk_layout_free(&lay);
    b2_chunk_layout_free(&rlay);
}

/* One encode/decode; returns cbytes. */
static int round_trip(const b2_cparams *p, const uint8_t *in, size_t len, int ranges)
{
    b2_cctx *cctx = b2_cctx_new(p);
    ck_assert_ptr_nonnull(cctx);
    size_t cap = len + B2_MAX_OVERHEAD;
    uint8_t *chunk = malloc(cap);
    int cbytes = b2_chunk_encode(cctx, in, len, chunk, cap);
    ck_assert_msg(cbytes > 0, "encode: %s (codec %d ts %d len %zu)", b2_strerror(cbytes),
                  p->codec, p->typesize, len);
    ck_assert_int_le(cbytes, (int)cap);

    b2_chunk_info info;
    ck_assert_int_eq(b2_chunk_parse_header(chunk, (size_t)cbytes, &info), 0);
    ck_assert_int_eq(info.cbytes, cbytes);
    ck_assert_int_eq(info.nbytes, (int32_t)len);
    ck_assert_int_eq(info.version, p->blosc1_format ? 2 : 5);
    ck_assert_int_eq(info.header_len, p->blosc1_format ? 16 : 32);
    if (!info.memcpyed && info.special == B2_SPECIAL_NONE && len > 0) {
        ck_assert_int_eq(info.blocksize % p->typesize == 0 || info.blocksize == (int32_t)len, 1);
        /* Never the quirky shape: a split block is whole items. */
        if (!info.dont_split)
            ck_assert_int_eq(info.blocksize % p->typesize, 0);
    }

    uint8_t *want = malloc(len + 1);
    expected(p, info.memcpyed, in, len, want);
    uint8_t *out = malloc(len + 1);
    b2_dctx *dctx = b2_dctx_new();
    int got = b2_chunk_decode(dctx, chunk, (size_t)cbytes, out, len);
    ck_assert_msg(got == (int)len, "decode: %d %s (codec %d ts %d len %zu)", got,
                  b2_strerror(got), p->codec, p->typesize, len);
    ck_assert_msg(memcmp(out, want, len) == 0, "bytes differ (codec %d ts %d len %zu)", p->codec,
                  p->typesize, len);
    if (ranges)
        check_ranges(dctx, chunk, (size_t)cbytes, want, len);
    b2_dctx_free(dctx);
    free(out);
    free(want);
    free(chunk);
    b2_cctx_free(cctx);
    return cbytes;
}

static void set_params(b2_cparams *p, int codec, int ts, const char *pipeline, int split,
                       int32_t blocksize, int blosc1)
{
    b2_cparams_default(p);
    p->codec = codec;
    p->clevel = 5;
    p->typesize = ts;
    p->splitmode = split;
    p->blocksize = blocksize;
    p->blosc1_format = blosc1;
    ck_assert_int_eq(b2_filters_parse(pipeline, ',', p->filters, p->filters_meta), 0);
}

static int lossy_ok(const char *pipeline, int ts)
{
    return strncmp(pipeline, "trunc", 5) != 0 || ts == 4 || ts == 8;
}

/* The whole matrix, one codec per test (_i is the codec index). */
START_TEST(test_matrix)
{
    int codec = codecs[_i];
    for (size_t ti = 0; ti < N(typesizes); ti++) {
        int ts = typesizes[ti];
        size_t sizes[] = {0, 1, 7, (size_t)ts * 13 + 5, (size_t)ts * 700,
                          (size_t)ts * 1500 + (ts > 1 ? 3 : 0)};
        size_t maxlen = sizes[N(sizes) - 1];
        uint8_t *in = malloc(maxlen);
        fill(in, maxlen, (uint64_t)ts * 7 + (uint64_t)codec);
        for (size_t pi = 0; pi < N(pipelines); pi++) {
            if (!lossy_ok(pipelines[pi], ts))
                continue;
            for (size_t si = 0; si < N(splitmodes); si++) {
                for (size_t zi = 0; zi < N(sizes); zi++) {
                    b2_cparams p;
                    /* The last size gets several blocks of about 2 KiB. */
                    int32_t bsz = zi == N(sizes) - 1 ? 2048 : 0;
                    set_params(&p, codec, ts, pipelines[pi], splitmodes[si], bsz, 0);
                    round_trip(&p, in, sizes[zi], 0);
                }
            }
        }
        free(in);
    }
}
END_TEST

/* The Blosc1 form: shuffle or bitshuffle as flags, no runs. */
START_TEST(test_matrix_blosc1)
{
    int codec = codecs[_i];
    static const char *b1[] = {"none", "shuffle", "bitshuffle"};
    for (size_t ti = 0; ti < N(typesizes); ti++) {
        int ts = typesizes[ti];
        size_t sizes[] = {0, 1, 7, (size_t)ts * 13 + 5, (size_t)ts * 1500 + 3};
        uint8_t *in = malloc(sizes[N(sizes) - 1]);
        fill(in, sizes[N(sizes) - 1], (uint64_t)ts);
        for (size_t pi = 0; pi < N(b1); pi++)
            for (size_t si = 0; si < N(splitmodes); si++)
                for (size_t zi = 0; zi < N(sizes); zi++) {
                    b2_cparams p;
                    set_params(&p, codec, ts, b1[pi], splitmodes[si],
                               zi == N(sizes) - 1 ? 4096 : 0, 1);
                    round_trip(&p, in, sizes[zi], 0);
                }
        free(in);
    }
}
END_TEST

/* Every sub-range of blocks of a few chunks, both sources. */
START_TEST(test_block_ranges)
{
    static const struct { int codec, ts; const char *pipe; int split, blosc1; } cases[] = {
        {B2_LZ4, 4, "shuffle", B2_SPLIT_ALWAYS, 0},
        {B2_ZSTD, 8, "delta,shuffle", B2_SPLIT_NEVER, 0},
        {B2_ZLIB, 3, "bitshuffle", B2_SPLIT_ALWAYS, 0},
        {B2_LZ4HC, 2, "bitshuffle", B2_SPLIT_AUTO, 1},
        {B2_BLOSCLZ, 8, "trunc:20,shuffle", B2_SPLIT_AUTO, 0},
        {B2_ZSTD, 8, "trunc:-3,delta,bitshuffle", B2_SPLIT_ALWAYS, 0},
        {B2_ZSTD, 12, "delta,shuffle", B2_SPLIT_ALWAYS, 0},
        {B2_LZ4, 4, "int_trunc:20,shuffle", B2_SPLIT_AUTO, 0},
        {B2_ZSTD, 2, "int_trunc:-3,delta,shuffle", B2_SPLIT_ALWAYS, 0},
        {B2_BLOSCLZ, 1, "int_trunc:5", B2_SPLIT_NEVER, 0},
    };
    size_t len = 9 * 1024 + 5;
    uint8_t *in = malloc(len);
    fill(in, len, 99);
    for (size_t c = 0; c < N(cases); c++) {
        b2_cparams p;
        set_params(&p, cases[c].codec, cases[c].ts, cases[c].pipe, cases[c].split, 1024,
                   cases[c].blosc1);
        round_trip(&p, in, len, 1);
    }
    free(in);
}
END_TEST

/* Larger buffers with the automatic blocksize: L2-friendly, whole items. */
START_TEST(test_auto_blocksize)
{
    size_t len = 3 * 1024 * 1024 + 24;
    uint8_t *in = malloc(len);
    fill(in, len, 5);
    for (size_t c = 0; c < N(codecs); c++) {
        b2_cparams p;
        set_params(&p, codecs[c], 8, "shuffle", B2_SPLIT_FORWARD_COMPAT, 0, 0);
        b2_cctx *cctx = b2_cctx_new(&p);
        uint8_t *chunk = malloc(len + B2_MAX_OVERHEAD);
        int cb = b2_chunk_encode(cctx, in, len, chunk, len + B2_MAX_OVERHEAD);
        ck_assert_int_gt(cb, 0);
        ck_assert_int_lt(cb, (int)len);
        b2_chunk_info info;
        ck_assert_int_eq(b2_chunk_parse_header(chunk, (size_t)cb, &info), 0);
        ck_assert_int_eq(info.blocksize % 8, 0);
        ck_assert_int_ge(info.blocksize, 16 * 1024);
        ck_assert_int_le(info.blocksize, 4 * 1024 * 1024);
        ck_assert_int_gt(info.nblocks, 1);
        free(chunk);
        b2_cctx_free(cctx);
        round_trip(&p, in, len, 0);
    }
    free(in);
}
END_TEST

/* C-Blosc2's automatic blocksize and b2fs's small variant, on the values they must give:
 * split blocks are 32 KiB a stream times typesize in C-Blosc2, at most
 * max(64 KiB, the unsplit size) in the small variant; unsplit blocks are the same. */
START_TEST(test_small_blocksize)
{
    static const struct {
        int codec, clevel, ts;
        const char *filters;
        int32_t blocksize, nbytes, want_auto, want_small;
    } cases[] = {
        {B2_ZSTD, 1, 4, "shuffle", 0, 1 << 20, 131072, 65536},
        {B2_LZ4, 1, 4, "shuffle", 0, 1 << 20, 131072, 65536},
        {B2_LZ4, 1, 2, "shuffle", 0, 1 << 20, 65536, 65536},
        {B2_BLOSCLZ, 5, 8, "shuffle", 0, 1 << 20, 524288, 131072},
        {B2_LZ4, 9, 4, "shuffle", 0, 4 << 20, 2097152, 262144},
        {B2_ZSTD, 1, 3, "shuffle", 0, 1 << 20, 98304, 65535},
        {B2_ZSTD, 1, 1, "none", 0, 1 << 20, 32768, 32768},
        {B2_ZSTD, 9, 1, "none", 0, 4 << 20, 1048576, 1048576},
        {B2_ZSTD, 9, 4, "shuffle", 0, 4 << 20, 1048576, 1048576},  /* zstd > 5: no split */
        {B2_LZ4, 1, 4, "shuffle", 0, 1000, 1000, 1000},
        {B2_ZSTD, 1, 4, "shuffle", 16384, 1 << 20, 16384, 65536},  /* small ignores it */
    };
    for (size_t i = 0; i < N(cases); i++) {
        b2_cparams p;
        set_params(&p, cases[i].codec, cases[i].ts, cases[i].filters, B2_SPLIT_FORWARD_COMPAT,
                   cases[i].blocksize, 0);
        p.clevel = cases[i].clevel;
        ck_assert_msg(b2_auto_blocksize(&p, cases[i].nbytes) == cases[i].want_auto,
                      "case %zu: auto %d", i, b2_auto_blocksize(&p, cases[i].nbytes));
        ck_assert_msg(b2_small_blocksize(&p, cases[i].nbytes) == cases[i].want_small,
                      "case %zu: small %d", i, b2_small_blocksize(&p, cases[i].nbytes));
    }
    /* a chunk encoded with the small choice has it, and still splits */
    size_t len = 1 << 20;
    uint8_t *in = malloc(len);
    fill(in, len, 9);
    b2_cparams p;
    set_params(&p, B2_ZSTD, 4, "shuffle", B2_SPLIT_FORWARD_COMPAT, 0, 0);
    p.clevel = 1;
    p.blocksize = b2_small_blocksize(&p, (int32_t)len);
    b2_cctx *cctx = b2_cctx_new(&p);
    uint8_t *chunk = malloc(len + B2_MAX_OVERHEAD);
    int cb = b2_chunk_encode(cctx, in, len, chunk, len + B2_MAX_OVERHEAD);
    ck_assert_int_gt(cb, 0);
    b2_chunk_info info;
    ck_assert_int_eq(b2_chunk_parse_header(chunk, (size_t)cb, &info), 0);
    ck_assert_int_eq(info.blocksize, 65536);
    ck_assert_int_eq(info.nblocks, 16);
    ck_assert_int_eq(info.dont_split, 0);
    free(chunk);
    b2_cctx_free(cctx);
    round_trip(&p, in, len, 0);
    free(in);
}
END_TEST

START_TEST(test_incompressible_memcpy)
{
    size_t len = 100000;
    uint8_t *in = malloc(len);
    tu_fill_random(in, len, 1);
    for (size_t c = 0; c < N(codecs); c++) {
        b2_cparams p;
        set_params(&p, codecs[c], 4, "shuffle", B2_SPLIT_AUTO, 0, 0);
        int cb = round_trip(&p, in, len, 0);
        ck_assert_int_eq(cb, (int)len + 32);
    }
    free(in);
}
END_TEST

/* b2_chunk_store: the same chunk b2_chunk_encode stores for incompressible data, without
 * a context, and it decodes to its input (an empty one too). */
START_TEST(test_store)
{
    size_t len = 5000;
    uint8_t *in = malloc(len), *a = malloc(len + 64), *b = malloc(len + 64), *out = malloc(len);
    tu_fill_random(in, len, 3);
    b2_cparams p;
    set_params(&p, B2_LZ4, 1, "none", B2_SPLIT_AUTO, 0, 0);
    b2_cctx *c = b2_cctx_new(&p);
    b2_dctx *d = b2_dctx_new();
    int ca = b2_chunk_encode(c, in, len, a, len + 64);
    int cb = b2_chunk_store(&p, in, len, b, len + 64);
    ck_assert_int_eq(cb, (int)len + 32);
    ck_assert_int_eq(ca, cb);
    ck_assert(memcmp(a, b, (size_t)cb) == 0);
    ck_assert_int_eq(b2_chunk_decode(d, b, (size_t)cb, out, len), (int)len);
    ck_assert(memcmp(in, out, len) == 0);
    ck_assert_int_eq(b2_chunk_store(&p, in, 0, b, 64), 32);
    ck_assert_int_eq(b2_chunk_decode(d, b, 32, out, len), 0);
    ck_assert_int_eq(b2_chunk_store(&p, in, len, b, len + 31), B2E_DST_SMALL);
    b2_cctx_free(c);
    b2_dctx_free(d);
    free(in);
    free(a);
    free(b);
    free(out);
}
END_TEST

/* choose: each chunk's filters from its content, at the typesize given; every codec
 * decodes the chunk to its input whatever was chosen. */
static b2_chunk_info chosen(int codec, int ts, const uint8_t *in, size_t len, uint8_t *chunk)
{
    b2_cparams p;
    set_params(&p, codec, ts, "shuffle", B2_SPLIT_AUTO, 0, 0);
    p.choose = 1;
    b2_cctx *c = b2_cctx_new(&p);
    b2_dctx *d = b2_dctx_new();
    int cb = b2_chunk_encode(c, in, len, chunk, len + B2_MAX_OVERHEAD);
    ck_assert_int_gt(cb, 0);
    b2_chunk_info info;
    ck_assert_int_eq(b2_chunk_parse_header(chunk, (size_t)cb, &info), 0);
    ck_assert_int_eq(info.typesize, ts);   /* C-Blosc2's partial reads count in it */
    uint8_t *out = malloc(len);
    ck_assert_int_eq(b2_chunk_decode(d, chunk, (size_t)cb, out, len), (int)len);
    ck_assert(memcmp(in, out, len) == 0);
    free(out);
    b2_cctx_free(c);
    b2_dctx_free(d);
    return info;
}

START_TEST(test_choose)
{
    size_t len = 256 << 10;
    uint8_t *in = malloc(len), *chunk = malloc(len + B2_MAX_OVERHEAD);
    for (size_t c = 0; c < N(codecs); c++) {
        for (int ts = 1; ts <= 8; ts *= 2) {
            tu_fill_text(in, len, 5);
            b2_chunk_info i = chosen(codecs[c], ts, in, len, chunk);
            ck_assert_msg(i.filters[B2_MAX_FILTERS - 1] == B2_NOFILTER, "text: filter %d",
                          i.filters[B2_MAX_FILTERS - 1]);
            tu_fill_random(in, len, 5);
            i = chosen(codecs[c], ts, in, len, chunk);
            ck_assert_msg(i.memcpyed, "random data is stored as it is");
        }
        tu_fill_float_series(in, len, 5);
        b2_chunk_info i = chosen(codecs[c], 4, in, len, chunk);
        ck_assert_msg(i.filters[B2_MAX_FILTERS - 1] != B2_NOFILTER, "float32: no filter");
        for (size_t k = 0; k < len / 2; k++) {   /* int16 image rows */
            int16_t v = (int16_t)(1000 + (k % 640) * 3 + (k / 640) % 7);
            memcpy(in + 2 * k, &v, 2);
        }
        i = chosen(codecs[c], 2, in, len, chunk);
        ck_assert_msg(i.filters[B2_MAX_FILTERS - 1] != B2_NOFILTER, "int16: no filter");
    }
    free(in);
    free(chunk);
}
END_TEST

/* The typesize a file's first chunk suggests: the item size of typed data, 1 for text,
 * the base one for data no shuffle helps; a chunk chosen at it decodes to its input. */
static int typesize_for(int codec, const uint8_t *in, size_t len, int with_choose)
{
    b2_cparams p;
    set_params(&p, codec, 8, "shuffle", B2_SPLIT_AUTO, 0, 0);
    p.choose = with_choose;
    p.choose_typesize = 1;
    b2_cctx *c = b2_cctx_new(&p);
    int ts = b2_cctx_choose_typesize(c, in, len);
    b2_cctx_free(c);
    return ts;
}

START_TEST(test_choose_typesize)
{
    size_t len = 256 << 10;
    uint8_t *in = malloc(len), *chunk = malloc(len + B2_MAX_OVERHEAD);
    for (size_t c = 0; c < N(codecs); c++) {
        tu_fill_float_series(in, len, 5);
        ck_assert_int_eq(typesize_for(codecs[c], in, len, 1), 4);
        ck_assert_int_eq(typesize_for(codecs[c], in, len, 0), 8);   /* not asked: the base */
        chosen(codecs[c], 4, in, len, chunk);
        for (size_t k = 0; k < len / 2; k++) {   /* int16 image rows with noise */
            int16_t v = (int16_t)(1000 + (k % 640) / 3 + (k / 640) % 7 + (int)((k * 2654435761u) >> 29));
            memcpy(in + 2 * k, &v, 2);
        }
        ck_assert_int_eq(typesize_for(codecs[c], in, len, 1), 2);
        b2_chunk_info i = chosen(codecs[c], 2, in, len, chunk);
        ck_assert_msg(i.filters[B2_MAX_FILTERS - 1] != B2_NOFILTER, "int16: no filter");
        tu_fill_text(in, len, 5);
        ck_assert_int_eq(typesize_for(codecs[c], in, len, 1), 1);   /* text has no items */
        ck_assert_int_eq(typesize_for(codecs[c], in, 5003, 1), 1);   /* a small file too */
        tu_fill_random(in, len, 5);
        ck_assert_int_eq(typesize_for(codecs[c], in, len, 1), 8);
        ck_assert_int_eq(typesize_for(codecs[c], in, 40, 1), 8);   /* too little to tell */
    }
    /* with zstd, slowly changing int16 values take bytedelta after the shuffle */
    for (size_t k = 0; k < len / 2; k++) {
        int16_t v = (int16_t)(3000 + 700 * ((k % 1024) < 512 ? (int)(k % 512) : 511 - (int)(k % 512)) / 512 +
                              (int)((k * 2654435761u) >> 30));
        memcpy(in + 2 * k, &v, 2);
    }
    b2_chunk_info i = chosen(B2_ZSTD, 2, in, len, chunk);
    ck_assert_msg(i.filters[B2_MAX_FILTERS - 1] == B2_BYTEDELTA &&
                  i.filters[B2_MAX_FILTERS - 2] == B2_SHUFFLE && i.filters_meta[B2_MAX_FILTERS - 1] == 2,
                  "smooth int16 with zstd: filters %d,%d", i.filters[B2_MAX_FILTERS - 2],
                  i.filters[B2_MAX_FILTERS - 1]);
    free(in);
    free(chunk);
}
END_TEST

/* What a chunk saves (b2_cctx_compresses): text and typed series a margin (with a fixed
 * pipeline too), random data nothing (with a fixed pipeline a little: its codec runs
 * anyway), data barely compressible and data of fewer bytes than the margin a little;
 * anything at clevel 0 nothing. */
static int saves_at(int codec, int clevel, const uint8_t *in, size_t len, size_t margin,
                    int with_choose)
{
    b2_cparams p;
    set_params(&p, codec, 4, "shuffle", B2_SPLIT_AUTO, 0, 0);
    p.clevel = clevel;
    p.choose = with_choose;
    b2_cctx *c = b2_cctx_new(&p);
    int r = b2_cctx_compresses(c, in, len, margin);
    b2_cctx_free(c);
    return r;
}

static int saves(int codec, const uint8_t *in, size_t len, size_t margin, int with_choose)
{
    return saves_at(codec, 5, in, len, margin, with_choose);
}

START_TEST(test_compresses)
{
    size_t len = 256 << 10;
    uint8_t *in = malloc(len);
    for (size_t c = 0; c < N(codecs); c++) {
        tu_fill_text(in, len, 5);
        ck_assert_int_eq(saves(codecs[c], in, len, 1024, 1), B2_SAVES_MARGIN);
        ck_assert_int_eq(saves(codecs[c], in, 1000, 1024, 1), B2_SAVES_LITTLE);
        ck_assert_int_eq(saves(codecs[c], in, 40, 1024, 1), B2_SAVES_LITTLE);   /* can't tell */
        ck_assert_int_eq(saves(codecs[c], in, len, 1024, 0), B2_SAVES_MARGIN);   /* fixed */
        tu_fill_float_series(in, len, 5);
        ck_assert_int_eq(saves(codecs[c], in, len, 1024, 1), B2_SAVES_MARGIN);
        tu_fill_random(in, len, 5);
        ck_assert_int_eq(saves(codecs[c], in, len, 1024, 1), B2_SAVES_NOTHING);
        ck_assert_int_eq(saves(codecs[c], in, 500, 1024, 1), B2_SAVES_NOTHING);
        ck_assert_int_eq(saves(codecs[c], in, len, 1024, 0), B2_SAVES_LITTLE);   /* fixed */
        /* random but for its first 900 bytes of zeros: 4000 bytes save less than 1024 */
        memset(in, 0, 900);
        ck_assert_int_eq(saves(codecs[c], in, 4000, 1024, 1), B2_SAVES_LITTLE);
        ck_assert_int_eq(saves(codecs[c], in, 4000, 100, 1), B2_SAVES_MARGIN);
        tu_fill_text(in, len, 6);
        ck_assert_int_eq(saves_at(codecs[c], 0, in, len, 1024, 1), B2_SAVES_NOTHING);
    }
    free(in);
}
END_TEST

START_TEST(test_zero_and_runs)
{
    size_t len = 200000;
    uint8_t *in = calloc(1, len);
    b2_cparams p;
    set_params(&p, B2_LZ4, 4, "shuffle", B2_SPLIT_ALWAYS, 0, 0);
    /* All zeros: a special zero chunk, nothing but the header. */
    ck_assert_int_eq(round_trip(&p, in, len, 0), 32);
    /* One repeated byte: runs, a few bytes per stream. */
    memset(in, 7, len);
    ck_assert_int_lt(round_trip(&p, in, len, 0), 1000);
    /* The Blosc1 form has no runs but still compresses. */
    p.blosc1_format = 1;
    int cb = round_trip(&p, in, len, 0);
    ck_assert_int_gt(cb, 32);
    ck_assert_int_lt(cb, (int)len / 10);
    free(in);
}
END_TEST

START_TEST(test_special_chunks)
{
    uint8_t chunk[64], out[4096];
    b2_dctx *d = b2_dctx_new();
    ck_assert_int_eq(b2_chunk_make_special(B2_SPECIAL_ZERO, 4, 4096, NULL, chunk, sizeof chunk), 32);
    memset(out, 1, sizeof out);
    ck_assert_int_eq(b2_chunk_decode(d, chunk, 32, out, sizeof out), 4096);
    for (int i = 0; i < 4096; i++)
        ck_assert_int_eq(out[i], 0);

    ck_assert_int_eq(b2_chunk_make_special(B2_SPECIAL_NAN, 8, 4096, NULL, chunk, sizeof chunk), 32);
    ck_assert_int_eq(b2_chunk_decode(d, chunk, 32, out, sizeof out), 4096);
    for (int i = 0; i < 4096; i += 8) {
        double v;
        memcpy(&v, out + i, 8);
        ck_assert(v != v);
    }
    ck_assert_int_eq(b2_chunk_make_special(B2_SPECIAL_NAN, 3, 4095, NULL, chunk, sizeof chunk),
                     B2E_PARAM);

    const uint8_t val[3] = {1, 2, 3};
    ck_assert_int_eq(b2_chunk_make_special(B2_SPECIAL_VALUE, 3, 4095, val, chunk, sizeof chunk), 35);
    ck_assert_int_eq(b2_chunk_decode(d, chunk, 35, out, sizeof out), 4095);
    for (int i = 0; i < 4095; i++)
        ck_assert_int_eq(out[i], val[i % 3]);
    /* Ranges of blocks of a special chunk, through a reader. */
    rec_reader rr;
    b2_chunk_src src = rec_src(&rr, chunk, 35);
    b2_chunk_layout lay;
    ck_assert_int_eq(b2_chunk_layout_load(&lay, &src), 0);
    ck_assert_int_eq(lay.info.special, B2_SPECIAL_VALUE);
    int32_t bs = lay.info.blocksize;
    ck_assert_int_gt(bs, 0);
    int32_t nb = (4095 + bs - 1) / bs;
    int got = b2_chunk_decode_blocks(d, &lay, &src, nb - 1, 1, out, sizeof out);
    ck_assert_int_eq(got, 4095 - (nb - 1) * bs);
    for (int i = 0; i < got; i++)
        ck_assert_int_eq(out[i], val[((nb - 1) * bs + i) % 3]);
    b2_chunk_layout_free(&lay);

    ck_assert_int_eq(b2_chunk_make_special(B2_SPECIAL_UNINIT, 2, 100, NULL, chunk, sizeof chunk), 32);
    ck_assert_int_eq(b2_chunk_decode(d, chunk, 32, out, sizeof out), 100);
    b2_dctx_free(d);
}
END_TEST

START_TEST(test_names)
{
    for (size_t c = 0; c < N(codecs); c++)
        ck_assert_int_eq(b2_codec_from_name(b2_codec_name(codecs[c])), codecs[c]);
    ck_assert_int_lt(b2_codec_from_name("snappy"), 0);
    ck_assert_ptr_null(b2_codec_name(3));
    ck_assert_str_eq(b2_strerror(B2E_CODEC), b2_strerror(B2E_CODEC));
    ck_assert_str_ne(b2_strerror(B2E_STREAM), b2_strerror(B2E_BSTARTS));

    uint8_t f[6], m[6];
    char out[80];
    ck_assert_int_eq(b2_filters_parse("delta+trunc:20+shuffle", '+', f, m), 0);
    ck_assert_int_eq(f[0], B2_DELTA);
    ck_assert_int_eq(f[1], B2_TRUNC_PREC);
    ck_assert_int_eq(m[1], 20);
    ck_assert_int_eq(f[2], B2_SHUFFLE);
    ck_assert_int_eq(b2_filters_format(f, m, ',', out, sizeof out), 0);
    ck_assert_str_eq(out, "delta,trunc:20,shuffle");
    ck_assert_int_eq(b2_filters_parse("none", ',', f, m), 0);
    ck_assert_int_eq(b2_filters_format(f, m, '+', out, sizeof out), 0);
    ck_assert_str_eq(out, "none");
    ck_assert_int_eq(b2_filters_parse("bitshuffle", ',', f, m), 0);
    ck_assert_int_eq(f[0], B2_BITSHUFFLE);
    ck_assert_int_eq(b2_filters_parse("trunc:-3", ',', f, m), 0);
    ck_assert_int_eq((int8_t)m[0], -3);
    ck_assert_int_eq(b2_filters_format(f, m, ',', out, sizeof out), 0);
    ck_assert_str_eq(out, "trunc:-3");
    ck_assert_int_eq(b2_filters_parse("shuffle,bytedelta", ',', f, m), 0);
    ck_assert(f[1] == B2_BYTEDELTA && m[1] == 0);
    ck_assert_int_eq(b2_filters_format(f, m, ',', out, sizeof out), 0);
    ck_assert_str_eq(out, "shuffle,bytedelta");
    ck_assert_int_eq(b2_filters_parse("bytedelta:200+bitshuffle", '+', f, m), 0);
    ck_assert(f[0] == B2_BYTEDELTA && m[0] == 200 && f[1] == B2_BITSHUFFLE);
    ck_assert_int_eq(b2_filters_format(f, m, '+', out, sizeof out), 0);
    ck_assert_str_eq(out, "bytedelta:200+bitshuffle");
    ck_assert_int_eq(b2_filters_parse("int_trunc:-7,shuffle", ',', f, m), 0);
    ck_assert(f[0] == B2_INT_TRUNC && (int8_t)m[0] == -7);
    ck_assert_int_eq(b2_filters_format(f, m, ',', out, sizeof out), 0);
    ck_assert_str_eq(out, "int_trunc:-7,shuffle");
    const char *bad[] = {"", "shuf", "shuffle,", ",shuffle", "trunc:", "trunc:x", "trunc:0",
                         "int_trunc", "int_trunc:", "int_trunc:0", "int_trunc:65",
                         "bytedelta:", "bytedelta:0", "bytedelta:256", "bytedelta:-1",
                         "bytedelta:3x",
                         "a,b,c,d,e,f,g", "shuffle,shuffle,shuffle,shuffle,shuffle,shuffle,shuffle",
                         "none,shuffle", "delta+shuffle"};
    for (size_t i = 0; i < N(bad); i++)
        ck_assert_msg(b2_filters_parse(bad[i], ',', f, m) == B2E_FILTER, "accepted '%s'", bad[i]);
    f[0] = 9;
    ck_assert_int_eq(b2_filters_format(f, m, ',', out, sizeof out), B2E_FILTER);
}
END_TEST

/* A chunk whose blocks are not all whole bytedelta streams is written without bytedelta
 * (C-Blosc2 2.x leaves such tail bytes unset); the others keep it. Both decode. */
START_TEST(test_bytedelta_whole_streams)
{
    struct { const char *f; int ts; int32_t bs; size_t n; int kept; } cases[] = {
        {"shuffle,bytedelta", 4, 4096, 40000, 1},
        {"shuffle,bytedelta", 4, 4096, 40001, 0},      /* last block not whole items */
        {"shuffle,bytedelta:3", 4, 4096, 36864, 0},    /* 3 does not divide the blocksize */
        {"shuffle,bytedelta:2", 4, 4096, 40000, 1},
    };
    for (size_t k = 0; k < N(cases); k++) {
        b2_cparams p;
        b2_cparams_default(&p);
        p.typesize = cases[k].ts;
        p.blocksize = cases[k].bs;
        ck_assert_int_eq(b2_filters_parse(cases[k].f, ',', p.filters, p.filters_meta), 0);
        size_t n = cases[k].n;
        uint8_t *in = malloc(n), *out = malloc(n + B2_MAX_OVERHEAD), *back = malloc(n);
        tu_fill_float_series(in, n, 3);
        b2_cctx *c = b2_cctx_new(&p);
        int cb = b2_chunk_encode(c, in, n, out, n + B2_MAX_OVERHEAD);
        ck_assert_int_gt(cb, 0);
        b2_chunk_info info;
        ck_assert_int_eq(b2_chunk_parse_header(out, (size_t)cb, &info), 0);
        ck_assert_msg(!info.memcpyed, "case %zu stored", k);
        int has = memchr(info.filters, B2_BYTEDELTA, B2_MAX_FILTERS) != NULL;
        ck_assert_msg(has == cases[k].kept, "case %zu: bytedelta %s", k, has ? "kept" : "dropped");
        ck_assert(memchr(info.filters, B2_SHUFFLE, B2_MAX_FILTERS) != NULL);
        b2_dctx *d = b2_dctx_new();
        ck_assert_int_eq(b2_chunk_decode(d, out, (size_t)cb, back, n), (int)n);
        ck_assert(memcmp(in, back, n) == 0);
        b2_dctx_free(d);
        b2_cctx_free(c);
        free(in), free(out), free(back);
    }
}
END_TEST

START_TEST(test_bad_params)
{
    b2_cparams p;
    b2_cparams_default(&p);
    ck_assert_int_eq(p.codec, B2_ZSTD);
    ck_assert_int_eq(p.clevel, 1);
    ck_assert_int_eq(p.typesize, 8);
    b2_cctx *c = b2_cctx_new(&p);
    ck_assert_ptr_nonnull(c);
    b2_cctx_free(c);
    b2_cparams q = p;
    q.codec = 3;
    ck_assert_ptr_null(b2_cctx_new(&q));
    q = p;
    q.clevel = 10;
    ck_assert_ptr_null(b2_cctx_new(&q));
    q = p;
    q.typesize = 0;
    ck_assert_ptr_null(b2_cctx_new(&q));
    q = p;
    q.filters[0] = 7;
    ck_assert_ptr_null(b2_cctx_new(&q));
    /* Delta after a shuffle (C-Blosc2 2.x and 3.x disagree on it) or twice. */
    q = p;
    ck_assert_int_eq(b2_filters_parse("shuffle,delta", ',', q.filters, q.filters_meta), 0);
    ck_assert_ptr_null(b2_cctx_new(&q));
    ck_assert_int_eq(b2_filters_parse("delta,delta", ',', q.filters, q.filters_meta), 0);
    ck_assert_ptr_null(b2_cctx_new(&q));
    q = p;
    q.typesize = 2;
    q.filters[0] = B2_TRUNC_PREC;
    q.filters_meta[0] = 10;
    ck_assert_ptr_null(b2_cctx_new(&q));
    /* The Blosc1 form says shuffle or bitshuffle only (c-blosc 1.x refuses delta). */
    q = p;
    q.blosc1_format = 1;
    ck_assert_int_eq(b2_filters_parse("trunc:10,shuffle", ',', q.filters, q.filters_meta), 0);
    ck_assert_ptr_null(b2_cctx_new(&q));
    ck_assert_int_eq(b2_filters_parse("delta,shuffle", ',', q.filters, q.filters_meta), 0);
    ck_assert_ptr_null(b2_cctx_new(&q));
    ck_assert_int_eq(b2_filters_parse("shuffle,bitshuffle", ',', q.filters, q.filters_meta), 0);
    ck_assert_ptr_null(b2_cctx_new(&q));
    ck_assert_int_eq(b2_filters_parse("bitshuffle", ',', q.filters, q.filters_meta), 0);
    c = b2_cctx_new(&q);
    ck_assert_ptr_nonnull(c);
    b2_cctx_free(c);
    /* Too small an output buffer. */
    c = b2_cctx_new(&p);
    uint8_t in[100] = {0}, out[40];
    tu_fill_random(in, sizeof in, 3);
    ck_assert_int_eq(b2_chunk_encode(c, in, sizeof in, out, sizeof out), B2E_DST_SMALL);
    b2_cctx_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec-roundtrip");
    TCase *tc = tcase_create("roundtrip");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_matrix, 0, (int)N(codecs));
    tcase_add_loop_test(tc, test_matrix_blosc1, 0, (int)N(codecs));
    tcase_add_test(tc, test_block_ranges);
    tcase_add_test(tc, test_auto_blocksize);
    tcase_add_test(tc, test_small_blocksize);
    tcase_add_test(tc, test_incompressible_memcpy);
    tcase_add_test(tc, test_store);
    tcase_add_test(tc, test_choose);
    tcase_add_test(tc, test_choose_typesize);
    tcase_add_test(tc, test_compresses);
    tcase_add_test(tc, test_zero_and_runs);
    tcase_add_test(tc, test_special_chunks);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_bytedelta_whole_streams);
    tcase_add_test(tc, test_bad_params);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
