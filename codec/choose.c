/* Choosing a chunk's filter pipeline, and a file's typesize, from their content
 * (b2_cparams.choose and .choose_typesize).
 *
 * Every Blosc2 chunk names its own filters, and C-Blosc2 reads each chunk as it says, so
 * they can differ chunk by chunk. The typesize cannot: C-Blosc2 2.x's partial reads
 * (blosc2_schunk_get_slice_buffer, python-blosc2's slicing) count items in the frame's
 * typesize, so every chunk of a frame has the frame's. It is chosen once, from a file's
 * first chunk (b2_cctx_choose_typesize), and kept.
 *
 * A trial on a sample decides: up to two pieces of the chunk (its start and its middle,
 * 8 KiB each) go through each candidate and a codec, and the candidate with the fewest
 * bytes wins, counting what each costs to undo (handicaps below). The filters first, with
 * LZ4 (fast: a few percent of compressing the chunk with zstd): none, shuffle, bitshuffle.
 * When a shuffle wins and the chunk's codec has an entropy stage (zstd, zlib), the winner
 * is tried against shuffle + bytedelta with that codec: bytedelta turns slowly changing
 * bytes into small repeated values, which an entropy stage packs and LZ4 does not. The
 * candidates are what C-Blosc2 2.x and 3.x read without plugins of their own. A sample
 * that no candidate shrinks below 97 % says the chunk does not compress: it is stored as
 * it is, without a codec pass. Text (no control bytes but tab, newline, carriage return and
 * form feed in the sample) skips the trial: no shuffle helps it, and it compresses; a
 * file that starts with text gets typesize 1.
 * Calls: pipeline.c, stream_codecs.c. */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_private.h"

#define PIECE 8192
#define NPIECES 2

/* A candidate pipeline and how much smaller than the others it must make the sample
 * to be worth its decoding time (percent). */
typedef struct candidate {
    uint8_t filter;     /* B2_NOFILTER, B2_SHUFFLE or B2_BITSHUFFLE */
    int bytedelta;      /* then bytedelta over the shuffled items */
    int handicap_pct;
} candidate;

static const candidate plain = {B2_NOFILTER, 0, 0};
static const candidate shuffled = {B2_SHUFFLE, 0, 1};
static const candidate bitshuffled = {B2_BITSHUFFLE, 0, 5};
static const candidate bytedelta = {B2_SHUFFLE, 1, 2};

/* The pieces of a chunk a trial compresses, and the buffers it works in. */
typedef struct sample {
    const uint8_t *src;
    size_t off[NPIECES];
    size_t piece;
    int npieces;
    uint8_t *buf;   /* 3 * piece: two for the filters, one for the codec */
    b2_codec_state *cs;
} sample;

/* 1 when the sample is ready, 0 when n is too little to tell. Its buffers come with the
 * first trial (sample_buffers). */
static int sample_open(sample *s, const uint8_t *src, int32_t n, b2_codec_state *cs)
{
    int whole = (size_t)n < (size_t)NPIECES * PIECE;   /* one piece: all of it */
    s->src = src;
    s->piece = whole ? (size_t)n : PIECE;
    s->off[0] = 0;
    s->off[1] = (size_t)n / 2 / 16 * 16;   /* whole items of every typesize tried */
    s->npieces = whole ? 1 : NPIECES;
    s->cs = cs;
    s->buf = NULL;
    return s->piece >= 64;   /* else too little to tell */
}

static int sample_buffers(sample *s)
{
    if (!s->buf)
        s->buf = malloc(3 * s->piece);
    return s->buf ? 0 : B2E_NOMEM;
}

/* Whether the sample looks like text: UTF-8 or another ASCII superset, no NUL and no other
 * control bytes than \t \n \v \f \r and escape (one in a thousand forgiven), in the
 * first TEXT_LOOK bytes of each piece. */
#define TEXT_LOOK 2048
static int looks_like_text(const sample *s)
{
    static const uint8_t odd_byte[256] = {
        [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
        [0x07] = 1, [0x08] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1,
        [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1,
        [0x1a] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, [0x7f] = 1};
    size_t odd = 0, total = 0, look = s->piece < TEXT_LOOK ? s->piece : TEXT_LOOK;
    for (int i = 0; i < s->npieces; i++) {
        const uint8_t *p = s->src + s->off[i];
        for (size_t k = 0; k < look; k++)
            odd += odd_byte[p[k]];
        total += look;
    }
    return odd * 1000 <= total;
}

/* Whether bytes, what a candidate made of the sample, is small enough to be worth a codec
 * pass: below 97 % of the sample. */
static int compresses(const sample *s, int64_t bytes)
{
    return bytes * 100 < (int64_t)s->npieces * (int64_t)s->piece * 97;
}

static void pipeline_of(const candidate *c, int ts, uint8_t filters[B2_MAX_FILTERS],
                        uint8_t meta[B2_MAX_FILTERS])
{
    memset(filters, 0, B2_MAX_FILTERS);
    memset(meta, 0, B2_MAX_FILTERS);
    int last = B2_MAX_FILTERS - 1;
    if (c->bytedelta) {
        filters[last - 1] = c->filter;
        filters[last] = B2_BYTEDELTA;
        meta[last] = (uint8_t)ts;   /* C-Blosc2 reads a bytedelta of meta 0 only in a frame */
    } else {
        filters[last] = c->filter;
    }
}

/* The bytes the sample takes through candidate c (items of ts bytes) and codec. */
static int64_t trial(const sample *s, const candidate *c, int ts, int codec, int clevel)
{
    uint8_t filters[B2_MAX_FILTERS], meta[B2_MAX_FILTERS];
    pipeline_of(c, ts, filters, meta);
    const b2_stream_codec *sc = b2_stream_codec_by_id(codec);
    uint8_t *s1 = s->buf, *s2 = s->buf + s->piece, *out = s->buf + 2 * s->piece;
    int64_t total = 0;
    for (int i = 0; i < s->npieces; i++) {
        size_t len = s->piece;
        const uint8_t *p = s->src + s->off[i];
        if (c->filter != B2_NOFILTER) {
            len -= len % (size_t)ts;   /* the filters work on whole items */
            p = b2_pipeline_forward(filters, meta, ts, 0, s->src, s->off[i], len, NULL, s1, s2);
        }
        int n = p ? sc->compress(s->cs, clevel, p, (int32_t)len, out, (int32_t)len) : 0;
        total += n > 0 ? n : (int64_t)len;
    }
    return total;
}

static int64_t weighed(int64_t bytes, const candidate *c)
{
    return bytes + bytes * c->handicap_pct / 100;
}

/* Of the filters alone (LZ4 judging), the best for items of ts bytes; *bytes is what
 * its sample took. */
static const candidate *best_filter(const sample *s, int ts, int64_t *bytes)
{
    const candidate *all[] = {&plain, &shuffled, &bitshuffled};
    const candidate *best = NULL;
    int64_t best_w = 0;
    for (int k = 0; k < (ts > 1 ? 3 : 1); k++) {   /* items of one byte: a shuffle changes nothing */
        int64_t b = trial(s, all[k], ts, B2_LZ4, 9);
        if (best == NULL || weighed(b, all[k]) < best_w) {
            best = all[k];
            best_w = weighed(b, all[k]);
            *bytes = b;
        }
    }
    return best;
}

static int entropy_coded(int codec)
{
    return codec == B2_ZSTD || codec == B2_ZLIB;
}

int b2_choose_params(const b2_cparams *base, const uint8_t *src, int32_t n, b2_codec_state *cs,
                     b2_cparams *out, int64_t *estimate)
{
    if (estimate)
        *estimate = -1;
    *out = *base;
    out->choose = 0;
    sample s;
    if (!sample_open(&s, src, n, cs))
        return 0;   /* too little to tell: the base parameters */
    int ts = base->typesize;
    if (looks_like_text(&s)) {
        pipeline_of(&plain, ts, out->filters, out->filters_meta);
        return 0;
    }
    int rc = sample_buffers(&s);
    if (rc < 0)
        return rc;
    int64_t bytes = 0;
    const candidate *best = best_filter(&s, ts, &bytes);
    int stored = !compresses(&s, bytes);
    if (estimate)
        *estimate = bytes * n / ((int64_t)s.npieces * (int64_t)s.piece);
    if (!stored && best != &plain && entropy_coded(base->codec) &&
        weighed(trial(&s, &bytedelta, ts, base->codec, base->clevel), &bytedelta) <
            weighed(trial(&s, best, ts, base->codec, base->clevel), best))
        best = &bytedelta;
    free(s.buf);
    pipeline_of(best, ts, out->filters, out->filters_meta);
    return stored;   /* 1: store it as it is */
}

int b2_choose_typesize_with(const b2_cparams *base, const uint8_t *src, int32_t n,
                            b2_codec_state *cs)
{
    sample s;
    if (!sample_open(&s, src, n, cs))
        return base->typesize;
    /* text has no items: typesize 1, so that its blocks are not cut to whole items of
     * another size (a file of 19,286 bytes in items of 8 is a block and a 6-byte block) */
    if (looks_like_text(&s))
        return 1;
    /* a file too small for two pieces has its filters tried on all of it anyway; data that
     * no shuffle helps (programs, compressed) has no items to find */
    if (s.npieces < NPIECES)
        return base->typesize;
    int rc = sample_buffers(&s);
    if (rc < 0)
        return rc;
    int64_t bytes = 0;
    int best_ts = base->typesize;
    if (base->typesize > 1 && best_filter(&s, base->typesize, &bytes) != &plain &&
        compresses(&s, bytes)) {
        static const int sizes[] = {2, 4, 8, 16};
        const candidate *all[] = {&shuffled, &bitshuffled, &bytedelta};
        int64_t best_w = -1;
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int k = 0; k < 3; k++) {
                int64_t w = weighed(trial(&s, all[k], sizes[i], base->codec, base->clevel), all[k]);
                /* a bigger item must win by 1 % (float64 data: 8, not 16 by a hair) */
                int better = sizes[i] == best_ts ? w < best_w : w * 100 < best_w * 99;
                if (best_w < 0 || better) {
                    best_w = w;
                    best_ts = sizes[i];
                }
            }
    }
    free(s.buf);
    return best_ts;
}
