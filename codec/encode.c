/* Chunk encoding: format version 5 with the 32-byte header, or the Blosc1 form. */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_private.h"

struct b2_cctx {
    b2_cparams p;
    const b2_stream_codec *codec;
    b2_codec_state cs;
    uint8_t *scratch;       /* three block-sized buffers: two for the filters, one */
    size_t scratch_cap;     /* for the delta reference */
};

void b2_cparams_default(b2_cparams *p)
{
    memset(p, 0, sizeof *p);
    p->codec = B2_ZSTD;
    p->clevel = 1;
    p->typesize = 8;
    p->filters[B2_MAX_FILTERS - 1] = B2_SHUFFLE;
    p->blocksize = 0;
    p->splitmode = B2_SPLIT_FORWARD_COMPAT;
}

/* The Blosc1 form stores filters as flag bits: c-blosc 1.x knows shuffle or bitshuffle
 * only (it refuses the delta bit). Moves that filter to the slot a reader derives from
 * the flags. */
static int blosc1_filters(b2_cparams *p)
{
    uint8_t shuf = B2_NOFILTER;
    for (int i = 0; i < B2_MAX_FILTERS; i++) {
        uint8_t f = p->filters[i];
        if (f == B2_NOFILTER)
            continue;
        if ((f != B2_SHUFFLE && f != B2_BITSHUFFLE) || shuf != B2_NOFILTER ||
            p->filters_meta[i] != 0)
            return B2E_FILTER;
        shuf = f;
    }
    memset(p->filters, 0, B2_MAX_FILTERS);
    memset(p->filters_meta, 0, B2_MAX_FILTERS);
    p->filters[B2_MAX_FILTERS - 1] = shuf;
    return B2E_OK;
}

b2_cctx *b2_cctx_new(const b2_cparams *params)
{
    if (params == NULL)
        return NULL;
    b2_cparams p = *params;
    if (p.splitmode == 0)
        p.splitmode = B2_SPLIT_FORWARD_COMPAT;
    const b2_stream_codec *codec = b2_stream_codec_by_id(p.codec);
    if (codec == NULL || p.clevel < 0 || p.clevel > 9 || p.typesize < 1 || p.typesize > 255 ||
        p.blocksize < 0 || p.blocksize > B2_MAX_BLOCKSIZE || p.splitmode < B2_SPLIT_ALWAYS ||
        p.splitmode > B2_SPLIT_FORWARD_COMPAT)
        return NULL;
    if (b2_pipeline_check(p.filters, p.filters_meta, p.typesize, 1) < 0)
        return NULL;
    if (p.blosc1_format && blosc1_filters(&p) < 0)
        return NULL;
    b2_cctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    ctx->p = p;
    ctx->codec = codec;
    return ctx;
}

void b2_cctx_free(b2_cctx *ctx)
{
    if (ctx == NULL)
        return;
    b2_codec_state_release(&ctx->cs);
    free(ctx->scratch);
    free(ctx);
}

static int header_flags(const b2_cparams *p, int memcpyed, int split)
{
    int flags = memcpyed ? FLAG_MEMCPYED : 0;
    if (!split)
        flags |= FLAG_DONT_SPLIT;
    /* A memcpyed chunk says no filters: c-blosc 1.21 refuses one with the delta bit. */
    for (int i = 0; !memcpyed && i < B2_MAX_FILTERS; i++) {
        if (p->filters[i] == B2_SHUFFLE)
            flags |= FLAG_SHUFFLE;
        else if (p->filters[i] == B2_BITSHUFFLE)
            flags |= FLAG_BITSHUFFLE;
        else if (p->filters[i] == B2_DELTA)
            flags |= FLAG_DELTA;
    }
    if (!p->blosc1_format)
        flags |= FLAG_EXTENDED;
    return flags | b2_stream_codec_by_id(p->codec)->format << 5;
}

static void write_header(const b2_cparams *p, uint8_t *dst, int flags, int32_t nbytes,
                         int32_t blocksize, int32_t cbytes)
{
    int hl = p->blosc1_format ? B2_HEADER_LEN_V1 : B2_HEADER_LEN;
    memset(dst, 0, (size_t)hl);
    dst[HDR_VERSION] = p->blosc1_format ? 2 : 5;
    dst[HDR_VERSIONLZ] = 1;
    dst[HDR_FLAGS] = (uint8_t)flags;
    dst[HDR_TYPESIZE] = (uint8_t)p->typesize;
    wr32(dst + HDR_NBYTES, nbytes);
    wr32(dst + HDR_BLOCKSIZE, blocksize);
    wr32(dst + HDR_CBYTES, cbytes);
    if (!p->blosc1_format) {
        memcpy(dst + HDR_FILTERS, p->filters, B2_MAX_FILTERS);
        memcpy(dst + HDR_FILTERS_META, p->filters_meta, B2_MAX_FILTERS);
        dst[HDR_UDCODEC] = (uint8_t)p->codec;
    }
}

static int all_same(const uint8_t *p, size_t n)
{
    return n == 0 || memcmp(p, p + 1, n - 1) == 0;
}

/* Decoders undo delta on blocks other than block 0 against the fully decoded block 0,
 * which still carries the (lossy) filters applied before delta: code against that,
 * not against the input, so that decoding gives exactly the truncated input. Uses the
 * third scratch buffer when a filter precedes delta. */
static const uint8_t *delta_reference(b2_cctx *ctx, const uint8_t *src, int32_t len0)
{
    const b2_cparams *p = &ctx->p;
    uint8_t before[B2_MAX_FILTERS] = {0};
    int i, any = 0;
    for (i = 0; i < B2_MAX_FILTERS && p->filters[i] != B2_DELTA; i++) {
        before[i] = p->filters[i];
        any |= before[i] != B2_NOFILTER;
    }
    if (i == B2_MAX_FILTERS || !any)
        return src;
    size_t bs = ctx->scratch_cap / 3;
    const uint8_t *r = b2_pipeline_forward(before, p->filters_meta, p->typesize,
                                           p->blosc1_format, src, 0, (size_t)len0, NULL,
                                           ctx->scratch, ctx->scratch + bs);
    if (r == NULL)
        return NULL;
    memcpy(ctx->scratch + 2 * bs, r, (size_t)len0);
    return ctx->scratch + 2 * bs;
}

/* Compresses the blocks after the header and block starts. Returns the chunk size,
 * 0 when it would not be smaller than `limit` (store memcpyed), or a B2E_* code.
 * *all_zero tells whether every stream was a run of zeros. */
static int encode_blocks(b2_cctx *ctx, const uint8_t *src, int32_t nbytes, int32_t bs,
                         int split, uint8_t *dst, size_t limit, int *all_zero)
{
    const b2_cparams *p = &ctx->p;
    int hl = p->blosc1_format ? B2_HEADER_LEN_V1 : B2_HEADER_LEN;
    int32_t nblocks = nbytes / bs + (nbytes % bs != 0);
    size_t pos = (size_t)hl + 4 * (size_t)nblocks;
    if (pos > limit)
        return 0;
    int rc = B2E_OK;
    if (ctx->scratch_cap < 3 * (size_t)bs) {
        uint8_t *s = realloc(ctx->scratch, 3 * (size_t)bs);
        if (s == NULL)
            return B2E_NOMEM;
        ctx->scratch = s;
        ctx->scratch_cap = 3 * (size_t)bs;
    }
    const uint8_t *dref = delta_reference(ctx, src, nbytes < bs ? nbytes : bs);
    if (dref == NULL)
        return B2E_FILTER;
    *all_zero = 1;
    for (int32_t b = 0; b < nblocks; b++) {
        wr32(dst + hl + 4 * b, (int32_t)pos);
        size_t off = (size_t)b * bs;
        int32_t bsize = nbytes - (int32_t)off < bs ? nbytes - (int32_t)off : bs;
        int leftover = bsize < bs;
        const uint8_t *blk = b2_pipeline_forward(p->filters, p->filters_meta, p->typesize,
                                                 p->blosc1_format, src, off, (size_t)bsize,
                                                 dref, ctx->scratch, ctx->scratch + bs);
        if (blk == NULL)
            return B2E_FILTER;
        int32_t nstreams = split && !leftover ? p->typesize : 1;
        int32_t neblock = bsize / nstreams;
        for (int32_t j = 0; j < nstreams; j++) {
            const uint8_t *s = blk + (size_t)j * neblock;
            if (limit - pos < 4)
                return 0;
            /* Runs of one byte (Blosc2 form only: c-blosc 1.x cannot read them). */
            if (!p->blosc1_format && all_same(s, (size_t)neblock)) {
                if (s[0] == 0) {
                    wr32(dst + pos, 0);
                    pos += 4;
                    continue;
                }
                if (limit - pos < 5)
                    return 0;
                wr32(dst + pos, -(int32_t)s[0]);
                dst[pos + 4] = 0x01;
                pos += 5;
                *all_zero = 0;
                continue;
            }
            *all_zero = 0;
            size_t room = limit - pos - 4;
            int32_t cap = room < (size_t)neblock ? (int32_t)room : neblock;
            rc = cap > 0 ? ctx->codec->compress(&ctx->cs, p->clevel, s, neblock, dst + pos + 4,
                                                cap)
                         : 0;
            if (rc < 0)
                return rc;
            if (rc == 0 || rc >= neblock) {
                if (room < (size_t)neblock)
                    return 0;
                memcpy(dst + pos + 4, s, (size_t)neblock);
                rc = neblock;
            }
            wr32(dst + pos, rc);
            pos += 4 + (size_t)rc;
        }
    }
    return (int)pos;
}

int b2_chunk_encode(b2_cctx *ctx, const void *src, size_t nbytes, void *dst, size_t dst_cap)
{
    if (ctx == NULL || (src == NULL && nbytes > 0) || dst == NULL || nbytes > B2_MAX_NBYTES)
        return B2E_PARAM;
    const b2_cparams *p = &ctx->p;
    int hl = p->blosc1_format ? B2_HEADER_LEN_V1 : B2_HEADER_LEN;
    if (dst_cap < (size_t)hl)
        return B2E_DST_SMALL;
    int32_t n = (int32_t)nbytes;
    int32_t bs = b2_auto_blocksize(p, n);
    int split = b2_split_wanted(p, bs);
    uint8_t *d = dst;

    if (p->clevel > 0 && n >= B2_MIN_BUFFERSIZE) {
        /* Anything not smaller than the memcpyed form is stored memcpyed. */
        size_t limit = (size_t)n + (size_t)hl - 1;
        if (limit > dst_cap)
            limit = dst_cap;
        int all_zero;
        int cbytes = encode_blocks(ctx, src, n, bs, split, d, limit, &all_zero);
        if (cbytes < 0)
            return cbytes;
        if (cbytes > 0) {
            int flags = header_flags(p, 0, split);
            /* C-Blosc2 2.x reads a special chunk only when it is whole items. */
            if (all_zero && !p->blosc1_format && n % p->typesize == 0) {
                write_header(p, d, flags, n, bs, B2_HEADER_LEN);
                d[HDR_BLOSC2_FLAGS] = B2_SPECIAL_ZERO << 4;
                return B2_HEADER_LEN;
            }
            write_header(p, d, flags, n, bs, cbytes);
            return cbytes;
        }
    }
    if ((size_t)n + (size_t)hl > dst_cap)
        return B2E_DST_SMALL;
    write_header(p, d, header_flags(p, 1, split), n, bs, n + hl);
    if (n > 0)
        memcpy(d + hl, src, (size_t)n);
    return n + hl;
}

int b2_chunk_make_special(int special, int typesize, int32_t nbytes, const void *value,
                          void *dst, size_t dst_cap)
{
    if (typesize < 1 || typesize > 255 || nbytes < 0 || nbytes > B2_MAX_NBYTES || dst == NULL ||
        special < B2_SPECIAL_ZERO || special > B2_SPECIAL_UNINIT)
        return B2E_PARAM;
    if (nbytes % typesize != 0 || (special == B2_SPECIAL_NAN && typesize != 4 && typesize != 8))
        return B2E_PARAM;
    if (special == B2_SPECIAL_VALUE && (value == NULL || nbytes == 0))
        return B2E_PARAM;
    int32_t cbytes = B2_HEADER_LEN + (special == B2_SPECIAL_VALUE ? typesize : 0);
    if (dst_cap < (size_t)cbytes)
        return B2E_DST_SMALL;
    b2_cparams p;
    b2_cparams_default(&p);
    p.typesize = typesize;
    uint8_t *d = dst;
    write_header(&p, d, FLAG_EXTENDED, nbytes, b2_auto_blocksize(&p, nbytes), cbytes);
    memset(d + HDR_FILTERS, 0, B2_MAX_FILTERS);
    d[HDR_UDCODEC] = 0;
    d[HDR_BLOSC2_FLAGS] = (uint8_t)(special << 4);
    if (special == B2_SPECIAL_VALUE)
        memcpy(d + B2_HEADER_LEN, value, (size_t)typesize);
    return cbytes;
}
