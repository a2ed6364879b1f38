/* Chunk encoding: format version 5 with the 32-byte header, or the Blosc1 form. */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_private.h"
#include "codec/pool.h"

struct b2_cctx {
    b2_cparams p;
    const b2_stream_codec *codec;
    b2_workers ws;
    uint8_t *dref;          /* block 0 as delta's reference, when a filter precedes delta */
    size_t dref_cap;
    uint8_t *slots;         /* with threads: each block's streams, before they are joined */
    size_t slots_cap;
    int32_t *slot_len;      /* bytes in each slot, 0 when it did not fit, or a B2E_* code */
    uint8_t *slot_zero;     /* whether each block was zero runs only */
    size_t nslots;
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
    if (b2_cctx_set_nthreads(ctx, 1) < 0) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

int b2_cctx_set_nthreads(b2_cctx *ctx, int nthreads)
{
    return ctx != NULL ? b2_workers_set(&ctx->ws, nthreads) : B2E_PARAM;
}

void b2_cctx_free(b2_cctx *ctx)
{
    if (ctx == NULL)
        return;
    b2_workers_release(&ctx->ws);
    free(ctx->dref);
    free(ctx->slots);
    free(ctx->slot_len);
    free(ctx->slot_zero);
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
 * not against the input, so that decoding gives exactly the truncated input. */
static const uint8_t *delta_reference(b2_cctx *ctx, const b2_cparams *p, const uint8_t *src,
                                      int32_t len0)
{
    uint8_t before[B2_MAX_FILTERS] = {0};
    int i, any = 0;
    for (i = 0; i < B2_MAX_FILTERS && p->filters[i] != B2_DELTA; i++) {
        before[i] = p->filters[i];
        any |= before[i] != B2_NOFILTER;
    }
    if (i == B2_MAX_FILTERS || !any)
        return src;
    b2_worker *w = &ctx->ws.w[0];
    size_t half = w->scratch_cap / 2;
    const uint8_t *r = b2_pipeline_forward(before, p->filters_meta, p->typesize,
                                           p->blosc1_format, src, 0, (size_t)len0, NULL,
                                           w->scratch, w->scratch + half);
    if (r == NULL || b2_grow(&ctx->dref, &ctx->dref_cap, (size_t)len0) < 0)
        return NULL;
    memcpy(ctx->dref, r, (size_t)len0);
    return ctx->dref;
}

/* The parameters and geometry of one chunk being encoded. */
typedef struct cjob {
    b2_cctx *ctx;
    const b2_cparams *p;
    const uint8_t *src;
    int32_t nbytes, bs;
    int split;
    const uint8_t *dref;
    size_t slot_size;
} cjob;

/* Filters and compresses block b into out (room bytes). Returns the bytes written, 0
 * when they do not fit, or a B2E_* code; *all_zero says whether every stream was a run
 * of zeros. */
static int encode_block(const cjob *j, b2_worker *w, int32_t b, uint8_t *out, size_t room,
                        int *all_zero)
{
    const b2_cparams *p = j->p;
    size_t off = (size_t)b * j->bs;
    int32_t bsize = j->nbytes - (int32_t)off < j->bs ? j->nbytes - (int32_t)off : j->bs;
    int leftover = bsize < j->bs;
    if (b2_grow(&w->scratch, &w->scratch_cap, 2 * (size_t)j->bs) < 0)
        return B2E_NOMEM;
    const uint8_t *blk = b2_pipeline_forward(p->filters, p->filters_meta, p->typesize,
                                             p->blosc1_format, j->src, off, (size_t)bsize,
                                             j->dref, w->scratch, w->scratch + j->bs);
    if (blk == NULL)
        return B2E_FILTER;
    int32_t nstreams = j->split && !leftover ? p->typesize : 1;
    int32_t neblock = bsize / nstreams;
    size_t pos = 0;
    *all_zero = 1;
    for (int32_t s = 0; s < nstreams; s++) {
        const uint8_t *in = blk + (size_t)s * neblock;
        if (room - pos < 4)
            return 0;
        /* Runs of one byte (Blosc2 form only: c-blosc 1.x cannot read them). */
        if (!p->blosc1_format && all_same(in, (size_t)neblock)) {
            if (in[0] == 0) {
                wr32(out + pos, 0);
                pos += 4;
                continue;
            }
            if (room - pos < 5)
                return 0;
            wr32(out + pos, -(int32_t)in[0]);
            out[pos + 4] = 0x01;
            pos += 5;
            *all_zero = 0;
            continue;
        }
        *all_zero = 0;
        size_t left = room - pos - 4;
        int32_t cap = left < (size_t)neblock ? (int32_t)left : neblock;
        int rc = cap > 0 ? j->ctx->codec->compress(&w->cs, p->clevel, in, neblock,
                                                    out + pos + 4, cap)
                         : 0;
        if (rc < 0)
            return rc;
        if (rc == 0 || rc >= neblock) {
            if (left < (size_t)neblock)
                return 0;
            memcpy(out + pos + 4, in, (size_t)neblock);
            rc = neblock;
        }
        wr32(out + pos, rc);
        pos += 4 + (size_t)rc;
    }
    return (int)pos;
}

static void encode_item(void *arg, int worker, int32_t b)
{
    const cjob *j = arg;
    b2_cctx *ctx = j->ctx;
    int zero;
    ctx->slot_len[b] = encode_block(j, &ctx->ws.w[worker], b, ctx->slots + (size_t)b * j->slot_size,
                                    j->slot_size, &zero);
    ctx->slot_zero[b] = (uint8_t)zero;
}

/* Compresses the blocks after the header and block starts. Returns the chunk size,
 * 0 when it would not be smaller than `limit` (store memcpyed), or a B2E_* code.
 * *all_zero tells whether every stream was a run of zeros. With threads, each block
 * goes to its own slot first and the slots are joined in order: the same bytes. */
static int encode_blocks(b2_cctx *ctx, const b2_cparams *p, const uint8_t *src, int32_t nbytes,
                         int32_t bs, int split, uint8_t *dst, size_t limit, int *all_zero)
{
    int hl = p->blosc1_format ? B2_HEADER_LEN_V1 : B2_HEADER_LEN;
    int32_t nblocks = nbytes / bs + (nbytes % bs != 0);
    size_t pos = (size_t)hl + 4 * (size_t)nblocks;
    if (pos > limit)
        return 0;
    if (b2_grow(&ctx->ws.w[0].scratch, &ctx->ws.w[0].scratch_cap, 2 * (size_t)bs) < 0)
        return B2E_NOMEM;
    cjob j = {ctx, p, src, nbytes, bs, split, NULL, (size_t)bs + 5 * (size_t)p->typesize + 8};
    j.dref = delta_reference(ctx, p, src, nbytes < bs ? nbytes : bs);
    if (j.dref == NULL)
        return B2E_FILTER;
    *all_zero = 1;

    struct b2_pool *pool = b2_workers_pool(&ctx->ws, nbytes, bs);
    if (pool == NULL) {
        for (int32_t b = 0; b < nblocks; b++) {
            wr32(dst + hl + 4 * b, (int32_t)pos);
            int zero;
            int n = encode_block(&j, &ctx->ws.w[0], b, dst + pos, limit - pos, &zero);
            if (n <= 0)
                return n;
            *all_zero &= zero;
            pos += (size_t)n;
        }
        return (int)pos;
    }

    if ((size_t)nblocks > ctx->nslots) {
        free(ctx->slot_len);
        free(ctx->slot_zero);
        ctx->slot_len = malloc((size_t)nblocks * sizeof *ctx->slot_len);
        ctx->slot_zero = malloc((size_t)nblocks);
        ctx->nslots = ctx->slot_len != NULL && ctx->slot_zero != NULL ? (size_t)nblocks : 0;
        if (ctx->nslots == 0)
            return B2E_NOMEM;
    }
    if (b2_grow(&ctx->slots, &ctx->slots_cap, (size_t)nblocks * j.slot_size) < 0)
        return B2E_NOMEM;
    b2_pool_run(pool, nblocks, encode_item, &j);
    for (int32_t b = 0; b < nblocks; b++) {
        int32_t n = ctx->slot_len[b];
        if (n < 0)
            return n;
        if (n == 0 || (size_t)n > limit - pos)
            return 0;
        wr32(dst + hl + 4 * b, (int32_t)pos);
        memcpy(dst + pos, ctx->slots + (size_t)b * j.slot_size, (size_t)n);
        *all_zero &= ctx->slot_zero[b];
        pos += (size_t)n;
    }
    return (int)pos;
}

/* C-Blosc2 2.x leaves the bytes of a block after its last whole bytedelta stream
 * unset, both ways: a chunk with such a block is written without bytedelta (each chunk
 * says its own filters). */
static const b2_cparams *chunk_params(const b2_cparams *p, int32_t n, int32_t bs,
                                      b2_cparams *tmp)
{
    const b2_cparams *use = p;
    for (int i = 0; i < B2_MAX_FILTERS; i++) {
        int32_t k = (int32_t)b2_filter_streams(p->filters_meta[i], p->typesize);
        if (p->filters[i] != B2_BYTEDELTA || (bs % k == 0 && n % k == 0))
            continue;
        if (use == p)
            *tmp = *p;
        use = tmp;
        tmp->filters[i] = B2_NOFILTER;
        tmp->filters_meta[i] = 0;
    }
    return use;
}

/* The memcpyed form: the header, then the bytes as they are. */
static int store(const b2_cparams *p, const void *src, int32_t n, int32_t bs, int split,
                 uint8_t *d, size_t dst_cap)
{
    int hl = p->blosc1_format ? B2_HEADER_LEN_V1 : B2_HEADER_LEN;
    if ((size_t)n + (size_t)hl > dst_cap)
        return B2E_DST_SMALL;
    write_header(p, d, header_flags(p, 1, split), n, bs, n + hl);
    if (n > 0 && src != d + hl)   /* (b2_chunk_store_in_place: already there) */
        memcpy(d + hl, src, (size_t)n);
    return n + hl;
}

int b2_chunk_encode(b2_cctx *ctx, const void *src, size_t nbytes, void *dst, size_t dst_cap)
{
    if (ctx == NULL || (src == NULL && nbytes > 0) || dst == NULL || nbytes > B2_MAX_NBYTES)
        return B2E_PARAM;
    int hl = ctx->p.blosc1_format ? B2_HEADER_LEN_V1 : B2_HEADER_LEN;
    if (dst_cap < (size_t)hl)
        return B2E_DST_SMALL;
    int32_t n = (int32_t)nbytes;
    const b2_cparams *base = &ctx->p;
    b2_cparams chosen;
    if (ctx->p.choose && !ctx->p.blosc1_format && ctx->p.clevel > 0 && n >= B2_MIN_BUFFERSIZE) {
        int plain = b2_choose_params(&ctx->p, src, n, &ctx->ws.w[0].cs, &chosen, NULL);
        if (plain < 0)
            return plain;
        base = &chosen;
        if (plain) {   /* does not compress: no codec pass */
            int32_t bs = b2_auto_blocksize(base, n);
            return store(base, src, n, bs, b2_split_wanted(base, bs), dst, dst_cap);
        }
    }
    int32_t bs = b2_auto_blocksize(base, n);
    b2_cparams tmp;
    const b2_cparams *p = chunk_params(base, n, bs, &tmp);
    int split = b2_split_wanted(p, bs);
    uint8_t *d = dst;

    if (p->clevel > 0 && n >= B2_MIN_BUFFERSIZE) {
        /* Anything not smaller than the memcpyed form is stored memcpyed. */
        size_t limit = (size_t)n + (size_t)hl - 1;
        if (limit > dst_cap)
            limit = dst_cap;
        int all_zero;
        int cbytes = encode_blocks(ctx, p, src, n, bs, split, d, limit, &all_zero);
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
    return store(p, src, n, bs, split, d, dst_cap);
}

int b2_cctx_choose_typesize(b2_cctx *ctx, const void *src, size_t nbytes)
{
    if (ctx == NULL || src == NULL || nbytes > B2_MAX_NBYTES)
        return B2E_PARAM;
    if (!ctx->p.choose || ctx->p.blosc1_format || ctx->p.clevel == 0)
        return ctx->p.typesize;
    return b2_choose_typesize_with(&ctx->p, src, (int32_t)nbytes, &ctx->ws.w[0].cs);
}

int b2_cctx_compresses(b2_cctx *ctx, const void *src, size_t nbytes, size_t margin)
{
    if (ctx == NULL || src == NULL || nbytes > B2_MAX_NBYTES)
        return B2E_PARAM;
    if (ctx->p.clevel == 0)
        return B2_SAVES_NOTHING;
    if (ctx->p.blosc1_format)
        return B2_SAVES_LITTLE;
    /* (the trial is the one that chooses filters: with a fixed pipeline it tells how
     * well the data compresses too) */
    b2_cparams chosen;
    int64_t estimate;
    int rc = b2_choose_params(&ctx->p, src, (int32_t)nbytes, &ctx->ws.w[0].cs, &chosen,
                              &estimate);
    if (rc < 0)
        return rc;
    if (rc == 1)   /* (a fixed pipeline goes through the codec all the same) */
        return ctx->p.choose ? B2_SAVES_NOTHING : B2_SAVES_LITTLE;
    return nbytes < margin || (estimate >= 0 && (int64_t)nbytes - estimate < (int64_t)margin)
               ? B2_SAVES_LITTLE
               : B2_SAVES_MARGIN;
}

int b2_chunk_store(const b2_cparams *params, const void *src, size_t nbytes, void *dst,
                   size_t dst_cap)
{
    if (params == NULL || (src == NULL && nbytes > 0) || dst == NULL || nbytes > B2_MAX_NBYTES ||
        params->typesize < 1 || params->typesize > 255 ||
        b2_stream_codec_by_id(params->codec) == NULL)
        return B2E_PARAM;
    int32_t n = (int32_t)nbytes;
    int32_t bs = b2_auto_blocksize(params, n);
    b2_cparams tmp;
    const b2_cparams *p = chunk_params(params, n, bs, &tmp);
    return store(p, src, n, bs, b2_split_wanted(p, bs), dst, dst_cap);
}

int b2_chunk_store_in_place(const b2_cparams *params, void *buf, size_t nbytes)
{
    if (params == NULL || params->blosc1_format)
        return B2E_PARAM;
    return b2_chunk_store(params, (uint8_t *)buf + B2_HEADER_LEN, nbytes, buf,
                          nbytes + B2_HEADER_LEN);
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
