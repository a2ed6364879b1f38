/* Choosing a chunk's filter pipeline from its content (b2_cparams.choose).
 *
 * Every Blosc2 chunk names its own filters, and C-Blosc2 reads each chunk as it says, so
 * they can differ chunk by chunk. The typesize cannot: C-Blosc2's partial reads
 * (blosc2_schunk_get_slice_buffer, python-blosc2's slicing) count items in the frame's
 * typesize, so every chunk keeps it (and a shuffle grouping bytes other than the typesize,
 * which C-Blosc2 reads only from 2.23 on, is not used). A trial on a sample decides: up to
 * two pieces of the chunk (its start and its middle, 8 KiB each) go through each candidate
 * and LZ4 (fast: the trial costs a few percent of compressing the chunk with zstd), and the
 * candidate with the fewest bytes wins, counting what each costs to undo: a shuffle must
 * save 1 % over none, a bitshuffle 5 % over both (it decodes several times slower).
 * The candidates are what C-Blosc2 2.x and 3.x read without plugins: none, shuffle and
 * bitshuffle. A sample that no candidate shrinks below 97 % says the chunk does not
 * compress: it is stored as it is, without a codec pass.
 * Calls: pipeline.c, stream_codecs.c. */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_private.h"

#define PIECE 8192
#define NPIECES 2

static const uint8_t candidates[] = {B2_NOFILTER, B2_SHUFFLE, B2_BITSHUFFLE};
static const int handicap_pct[] = {0, 1, 5};
#define NCAND ((int)(sizeof candidates / sizeof candidates[0]))

/* The bytes piece [off, off + len) of src takes after candidate k and LZ4. */
static int32_t trial(int k, int ts, const uint8_t *src, size_t off, size_t len, uint8_t *s1,
                     uint8_t *s2, uint8_t *out, b2_codec_state *cs)
{
    uint8_t filters[B2_MAX_FILTERS] = {0}, meta[B2_MAX_FILTERS] = {0};
    filters[B2_MAX_FILTERS - 1] = candidates[k];
    const uint8_t *p = src + off;
    if (candidates[k] != B2_NOFILTER) {
        /* the filters work on whole items: a piece is cut to them */
        len -= len % (size_t)ts;
        p = b2_pipeline_forward(filters, meta, ts, 0, src, off, len, NULL, s1, s2);
        if (p == NULL)
            return (int32_t)len;
    }
    const b2_stream_codec *lz4 = b2_stream_codec_by_id(B2_LZ4);
    int n = lz4->compress(cs, 9, p, (int32_t)len, out, (int32_t)len);
    return n > 0 ? n : (int32_t)len;
}

int b2_choose_params(const b2_cparams *base, const uint8_t *src, int32_t n, b2_codec_state *cs,
                     b2_cparams *out)
{
    *out = *base;
    out->choose = 0;
    int whole = (size_t)n < (size_t)NPIECES * PIECE;   /* one piece: all of it */
    size_t piece = whole ? (size_t)n : PIECE;
    size_t offs[NPIECES] = {0, (size_t)n / 2 / 16 * 16};
    int npieces = whole ? 1 : NPIECES;
    if (piece < 64)
        return 0;   /* too little to tell: the base parameters */
    uint8_t *buf = malloc(3 * piece);
    if (buf == NULL)
        return B2E_NOMEM;
    int64_t best = -1, best_raw = 0, sample = (int64_t)npieces * (int64_t)piece;
    int best_k = 0;
    /* with items of one byte, a shuffle changes nothing */
    for (int k = 0; k < (base->typesize > 1 ? NCAND : 1); k++) {
        int64_t total = 0;
        for (int i = 0; i < npieces; i++)
            total += trial(k, base->typesize, src, offs[i], piece, buf, buf + piece,
                           buf + 2 * piece, cs);
        int64_t weighed = total + total * handicap_pct[k] / 100;
        if (best < 0 || weighed < best) {
            best = weighed;
            best_raw = total;
            best_k = k;
        }
    }
    free(buf);
    memset(out->filters, 0, sizeof out->filters);
    memset(out->filters_meta, 0, sizeof out->filters_meta);
    out->filters[B2_MAX_FILTERS - 1] = candidates[best_k];
    return best_raw * 100 >= sample * 97;   /* 1: store it as it is */
}
