/* Chunk decoding: whole chunks in memory, and ranges of blocks through a layout
 * (header, block starts and dictionary loaded once, streams read on demand). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_private.h"
#include "codec/pool.h"

struct b2_dctx {
    b2_workers ws;
    uint8_t *dref;         /* decoded block 0 for delta in range decodes */
    size_t dref_cap;
};

int b2_dctx_set_nthreads(b2_dctx *ctx, int nthreads)
{
    return ctx != NULL ? b2_workers_set(&ctx->ws, nthreads) : B2E_PARAM;
}

b2_dctx *b2_dctx_new(void)
{
    b2_dctx *ctx = calloc(1, sizeof(b2_dctx));
    if (ctx != NULL && b2_dctx_set_nthreads(ctx, 1) < 0) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

void b2_dctx_free(b2_dctx *ctx)
{
    if (ctx == NULL)
        return;
    b2_workers_release(&ctx->ws);
    free(ctx->dref);
    free(ctx);
}

static int32_t block_len(const b2_chunk_info *in, int32_t nb)
{
    int64_t start = (int64_t)nb * in->blocksize;
    int64_t left = in->nbytes - start;
    return (int32_t)(left < in->blocksize ? left : in->blocksize);
}

/* Blocks of special and memcpyed chunks (which have no block starts) follow the same
 * geometry, so that range reads work on every chunk. */
static int32_t geometry_nblocks(const b2_chunk_info *in)
{
    if (in->nbytes == 0 || in->blocksize <= 0)
        return 0;
    return in->nbytes / in->blocksize + (in->nbytes % in->blocksize != 0);
}

/* Most bytes a block's streams can take: each stream is either raw (csize + bytes) or a
 * run (csize + token), plus the tail stream of a split block that is not whole items.
 * It also bounds a variable-length block (blocksize is then nbytes): its size and one
 * stream no longer than the block. */
static size_t max_block_extent(const b2_chunk_info *in)
{
    return (size_t)in->blocksize + 5 * ((size_t)in->typesize + 1);
}

static int has_filters(const b2_chunk_info *in)
{
    int filtered = 0;
    for (int i = 0; i < B2_MAX_FILTERS; i++)
        filtered |= b2_filter_undone(in->filters[i]);
    return filtered;
}

/* Decodes block nb from its streams in ext (ext_len bytes, all of them inside the
 * chunk) into out. */
static int decode_block(b2_worker *ctx, const b2_chunk_info *in, const b2_stream_codec *codec,
                        int32_t nb, const uint8_t *ext, size_t ext_len, const uint8_t *dref,
                        uint8_t *out)
{
    int32_t bsize = block_len(in, nb);
    int leftover = nb == in->nblocks - 1 && in->nbytes % in->blocksize != 0;
    int split = !in->dont_split && !leftover;
    int32_t nbase = split ? in->typesize : 1;
    int32_t neblock = bsize / nbase;
    if (neblock == 0)
        return B2E_HEADER;
    /* C-Blosc2 3.3 writes one more stream for the tail of a split block that is not
     * whole items (FIXTURES.md): read it as the rest of the block. */
    int32_t nstreams = nbase + (bsize % nbase != 0);

    int filtered = has_filters(in);
    uint8_t *stage = out;
    if (filtered) {
        int rc = b2_grow(&ctx->scratch, &ctx->scratch_cap, 2 * (size_t)in->blocksize);
        if (rc < 0)
            return rc;
        stage = ctx->scratch;
    }

    size_t pos = 0;
    int32_t done = 0;
    for (int32_t j = 0; j < nstreams; j++) {
        int32_t want = j < nbase ? neblock : bsize - done;
        if (ext_len - pos < 4)
            return B2E_STREAM;
        int32_t csize = rd32(ext + pos);
        pos += 4;
        uint8_t *dst = stage + done;
        if (csize == 0) {
            memset(dst, 0, (size_t)want);
        } else if (csize < 0) {
            if (ext_len - pos < 1 || !(ext[pos] & 0x01) || csize < -255)
                return B2E_STREAM;
            pos += 1;
            memset(dst, -csize, (size_t)want);
        } else {
            if ((size_t)csize > ext_len - pos)
                return B2E_STREAM;
            if (csize == want) {
                memcpy(dst, ext + pos, (size_t)want);
            } else {
                int n = codec->decompress(&ctx->cs, ext + pos, csize, dst, want);
                if (n < 0)
                    return n;
                if (n != want)
                    return B2E_CORRUPT;
            }
            pos += (size_t)csize;
        }
        done += want;
    }
    if (done != bsize)
        return B2E_STREAM;
    if (!filtered)
        return B2E_OK;
    uint8_t *spare = ctx->scratch + in->blocksize;
    return b2_pipeline_backward(in, (size_t)nb * in->blocksize, (size_t)bsize, stage, spare,
                                dref, out);
}

/* Decodes one variable-length block, whose extent ext (ext_len bytes, up to the next
 * block) is its size and then one stream: the block raw when it is as long, else the
 * codec's bytes. At most room bytes are written to out. Returns the block's size. Delta
 * takes each block as its own reference, as C-Blosc2 codes them. */
static int decode_vl_block(b2_worker *w, const b2_chunk_info *in, const b2_stream_codec *codec,
                           const uint8_t *ext, size_t ext_len, uint8_t *out, size_t room)
{
    if (ext_len <= 4)
        return B2E_STREAM;
    int32_t bsize = rd32(ext);
    if (bsize <= 0 || (size_t)bsize > room)
        return B2E_STREAM;
    const uint8_t *p = ext + 4;
    size_t plen = ext_len - 4;
    int filtered = has_filters(in);
    uint8_t *stage = out;
    if (filtered) {
        int rc = b2_grow(&w->scratch, &w->scratch_cap, 2 * (size_t)bsize);
        if (rc < 0)
            return rc;
        stage = w->scratch;
    }
    if (plen == (size_t)bsize) {
        memcpy(stage, p, plen);
    } else {
        int n = codec->decompress(&w->cs, p, (int32_t)plen, stage, bsize);
        if (n < 0)
            return n;
        if (n != bsize)
            return B2E_CORRUPT;
    }
    if (filtered) {
        int rc = b2_pipeline_backward(in, 0, (size_t)bsize, stage, w->scratch + bsize, out, out);
        if (rc < 0)
            return rc;
    }
    return bsize;
}

/* Fills len bytes at chunk offset start of a special-value chunk. */
static void fill_special(const b2_chunk_info *in, const uint8_t *value, size_t start,
                         size_t len, uint8_t *out)
{
    static const uint8_t nan4[4] = {0x00, 0x00, 0xc0, 0x7f};
    static const uint8_t nan8[8] = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
    size_t vsize;
    switch (in->special) {
    case B2_SPECIAL_VALUE:
        vsize = (size_t)(in->cbytes - B2_HEADER_LEN);
        break;
    case B2_SPECIAL_NAN:
        value = in->typesize == 4 ? nan4 : nan8;
        vsize = in->typesize;
        break;
    default:   /* zeros; uninitialised chunks read as zeros too */
        memset(out, 0, len);
        return;
    }
    for (size_t i = 0; i < len; i++)
        out[i] = value[(start + i) % vsize];
}

/* A view of the chunk bytes from either kind of source. */
static int fetch(const b2_chunk_src *src, uint64_t off, size_t len, uint8_t **buf, size_t *cap,
                 const uint8_t **out)
{
    if (src->mem != NULL) {
        if (off > src->mem_len || len > src->mem_len - off)
            return B2E_TRUNCATED;
        *out = src->mem + off;
        return B2E_OK;
    }
    if (src->read == NULL)
        return B2E_PARAM;
    int rc = b2_grow(buf, cap, len > 0 ? len : 1);
    if (rc < 0)
        return rc;
    if (len > 0 && src->read(src->opaque, off, len, *buf) != 0)
        return B2E_IO;
    *out = *buf;
    return B2E_OK;
}

/* Reads block nb's stored bytes (through w's buffer when src is a reader); *ext is their
 * length, never more than a block can take: the last block runs to the header's cbytes,
 * which may lie. */
static int fetch_block(b2_worker *w, const b2_chunk_layout *lay, const b2_chunk_src *src,
                       int32_t nb, const uint8_t **p, size_t *ext)
{
    *ext = (size_t)(lay->bends[nb] - lay->bstarts[nb]);
    if (*ext > max_block_extent(&lay->info))
        *ext = max_block_extent(&lay->info);
    return fetch(src, (uint64_t)lay->bstarts[nb], *ext, &w->cbuf, &w->cbuf_cap, p);
}

/* All blocks of a variable-length-block chunk, one after another on one thread (their
 * places in dst are known only once the blocks before them are decoded). */
static int decode_vl_chunk(b2_dctx *ctx, const b2_chunk_layout *lay, const b2_chunk_src *src,
                           uint8_t *dst, size_t dst_len)
{
    const b2_chunk_info *in = &lay->info;
    if ((size_t)in->nbytes > dst_len)
        return B2E_DST_SMALL;
    const b2_stream_codec *codec = b2_stream_codec_by_id(in->codec);
    if (codec == NULL)
        return B2E_CODEC;
    b2_worker *w = &ctx->ws.w[0];
    int rc = b2_codec_state_use_dict(&w->cs, in->codec, lay->dict, lay->dict_len);
    size_t done = 0;
    for (int32_t i = 0; i < in->nblocks && rc >= 0; i++) {
        const uint8_t *p;
        size_t ext;
        rc = fetch_block(w, lay, src, i, &p, &ext);
        if (rc >= 0)
            rc = decode_vl_block(w, in, codec, p, ext, dst + done, (size_t)in->nbytes - done);
        if (rc >= 0)
            done += (size_t)rc;
    }
    if (rc >= 0 && done != (size_t)in->nbytes)
        rc = B2E_STREAM;
    return rc < 0 ? rc : in->nbytes;
}

static int load_and_decode(b2_worker *w, const b2_chunk_layout *lay, const b2_chunk_src *src,
                           const b2_stream_codec *codec, int32_t nb, const uint8_t *dref,
                           uint8_t *out);

/* Blocks [first, first + count) of one chunk, decoded by one or more threads. The
 * streams come from the chunk in memory (chunk != NULL: block starts checked here) or
 * through a layout and a source. */
typedef struct djob {
    b2_dctx *ctx;
    const b2_chunk_info *in;
    const b2_stream_codec *codec;
    const uint8_t *chunk;
    int32_t data_start;
    const b2_chunk_layout *lay;
    const b2_chunk_src *src;
    int32_t first;
    uint8_t *dst;          /* where block `first` goes */
    const uint8_t *dref;
    atomic_int rc;         /* the first error */
} djob;

static void decode_item(void *arg, int worker, int32_t item)
{
    djob *j = arg;
    if (atomic_load(&j->rc) < 0)
        return;
    b2_worker *w = &j->ctx->ws.w[worker];
    int32_t nb = j->first + item;
    uint8_t *out = j->dst + (size_t)item * j->in->blocksize;
    int rc;
    if (j->chunk != NULL) {
        /* b2_chunk_decode checked every block start before the first block */
        int32_t bs = rd32(j->chunk + j->in->header_len + 4 * (size_t)nb);
        rc = decode_block(w, j->in, j->codec, nb, j->chunk + bs, (size_t)(j->in->cbytes - bs),
                          j->dref, out);
    } else {
        rc = load_and_decode(w, j->lay, j->src, j->codec, nb, j->dref, out);
    }
    if (rc < 0) {
        int none = 0;
        atomic_compare_exchange_strong(&j->rc, &none, rc);
    }
}

/* Decodes `count` blocks from item 0: block 0 alone first when the others need it
 * as their delta reference. */
static int run_blocks(djob *j, int32_t count, const uint8_t *dict, int32_t dict_len)
{
    b2_dctx *ctx = j->ctx;
    int nthreads = count > 1 ? ctx->ws.n : 1;
    for (int i = 0; i < nthreads; i++) {
        int rc = b2_codec_state_use_dict(&ctx->ws.w[i].cs, j->in->codec, dict, dict_len);
        if (rc < 0)
            return rc;
    }
    atomic_init(&j->rc, 0);
    int32_t start = 0;
    if (j->first == 0 && count > 1 && b2_pipeline_uses_delta(j->in->filters)) {
        decode_item(j, 0, 0);
        start = 1;
    }
    /* the blocks' bytes: whole blocks, then the last, which may be shorter */
    int64_t bytes = count > start ? (int64_t)(count - start - 1) * j->in->blocksize +
                                        block_len(j->in, j->first + count - 1)
                                  : 0;
    struct b2_pool *pool = b2_workers_pool(&ctx->ws, bytes, j->in->blocksize);
    if (pool == NULL) {
        for (int32_t i = start; i < count && atomic_load(&j->rc) == 0; i++)
            decode_item(j, 0, i);
    } else {
        /* Items are numbered from `start`: shift the job. */
        j->first += start;
        j->dst += (size_t)start * j->in->blocksize;
        b2_pool_run(pool, count - start, decode_item, j);
    }
    return atomic_load(&j->rc);
}

int b2_chunk_decode(b2_dctx *ctx, const void *chunk, size_t chunk_len, void *dst, size_t dst_len)
{
    if (ctx == NULL || chunk == NULL || (dst == NULL && dst_len > 0))
        return B2E_PARAM;
    b2_chunk_info in;
    int rc = b2_chunk_parse_header(chunk, chunk_len, &in);
    if (rc < 0)
        return rc;
    const uint8_t *c = chunk;
    uint8_t *d = dst;
    if ((size_t)in.cbytes > chunk_len)
        return B2E_TRUNCATED;
    if ((size_t)in.nbytes > dst_len)
        return B2E_DST_SMALL;
    if (in.special != B2_SPECIAL_NONE) {
        fill_special(&in, c + B2_HEADER_LEN, 0, (size_t)in.nbytes, d);
        return in.nbytes;
    }
    if (in.memcpyed) {
        memcpy(d, c + in.header_len, (size_t)in.nbytes);
        return in.nbytes;
    }
    if (in.nblocks == 0)
        return 0;
    if (in.vlblocks) {
        b2_chunk_src src = {.mem = c, .mem_len = (size_t)in.cbytes};
        b2_chunk_layout lay;
        if ((rc = b2_chunk_layout_load(&lay, &src)) < 0)
            return rc;
        rc = decode_vl_chunk(ctx, &lay, &src, d, dst_len);
        b2_chunk_layout_free(&lay);
        return rc;
    }

    int32_t data_start = in.header_len + 4 * in.nblocks;
    const uint8_t *dict = NULL;
    int32_t dict_len = 0;
    if (in.has_dict) {
        if (in.cbytes - data_start < 4)
            return B2E_DICT;
        dict_len = rd32(c + data_start);
        if (dict_len <= 0 || dict_len > B2_MAX_DICT || dict_len > in.cbytes - data_start - 4)
            return B2E_DICT;
        dict = c + data_start + 4;
        data_start += 4 + dict_len;
    }
    /* All block starts are checked before any block is decoded: a chunk that lies about
     * a late block is refused at once, not after decoding the blocks before it. */
    for (int32_t i = 0; i < in.nblocks; i++) {
        int32_t bs = rd32(c + in.header_len + 4 * (size_t)i);
        if (bs < data_start || bs >= in.cbytes)
            return B2E_BSTARTS;
    }
    djob j = {.ctx = ctx, .in = &in, .codec = b2_stream_codec_by_id(in.codec), .chunk = c,
              .data_start = data_start, .first = 0, .dst = d, .dref = d};
    rc = run_blocks(&j, in.nblocks, dict, dict_len);
    return rc < 0 ? rc : in.nbytes;
}

typedef struct start_idx {
    int32_t start, idx;
} start_idx;

static int by_start(const void *a, const void *b)
{
    const start_idx *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Block i's streams end where the next block (in file order) starts. The blocks of a
 * variable-length-block chunk must lie in their order: C-Blosc2 refuses them otherwise. */
static int compute_bends(b2_chunk_layout *lay, int32_t data_start)
{
    int32_t n = lay->info.nblocks;
    for (int32_t i = 1; lay->info.vlblocks && i < n; i++)
        if (lay->bstarts[i] <= lay->bstarts[i - 1])
            return B2E_BSTARTS;
    start_idx *s = malloc((size_t)n * sizeof *s);
    if (s == NULL)
        return B2E_NOMEM;
    for (int32_t i = 0; i < n; i++) {
        if (lay->bstarts[i] < data_start || lay->bstarts[i] >= lay->info.cbytes) {
            free(s);
            return B2E_BSTARTS;
        }
        s[i].start = lay->bstarts[i];
        s[i].idx = i;
    }
    qsort(s, (size_t)n, sizeof *s, by_start);
    for (int32_t k = 0; k < n; k++) {
        int32_t end = k + 1 < n ? s[k + 1].start : lay->info.cbytes;
        if (end <= s[k].start) {
            free(s);
            return B2E_BSTARTS;
        }
        lay->bends[s[k].idx] = end;
    }
    free(s);
    return B2E_OK;
}

int b2_chunk_layout_load(b2_chunk_layout *lay, const b2_chunk_src *src)
{
    if (lay == NULL || src == NULL || (src->mem == NULL && src->read == NULL))
        return B2E_PARAM;
    memset(lay, 0, sizeof *lay);
    uint8_t hdr[B2_HEADER_LEN];
    uint8_t *buf = NULL;
    size_t cap = 0;
    const uint8_t *p;
    int rc;
    /* A Blosc1 chunk may be shorter than 32 bytes: read 16 first. */
    if ((rc = fetch(src, 0, B2_HEADER_LEN_V1, &buf, &cap, &p)) < 0)
        goto out;
    memcpy(hdr, p, B2_HEADER_LEN_V1);
    size_t have = B2_HEADER_LEN_V1;
    if ((hdr[HDR_FLAGS] & FLAG_EXTENDED) == FLAG_EXTENDED) {
        if ((rc = fetch(src, 0, B2_HEADER_LEN, &buf, &cap, &p)) < 0)
            goto out;
        memcpy(hdr, p, B2_HEADER_LEN);
        have = B2_HEADER_LEN;
    }
    b2_chunk_info *in = &lay->info;
    if ((rc = b2_chunk_parse_header(hdr, have, in)) < 0)
        goto out;
    if (src->mem != NULL && (size_t)in->cbytes > src->mem_len) {
        rc = B2E_TRUNCATED;
        goto out;
    }
    if (in->special != B2_SPECIAL_NONE || in->memcpyed || in->nblocks == 0)
        goto out;

    lay->bstarts = malloc((size_t)in->nblocks * sizeof(int32_t));
    lay->bends = malloc((size_t)in->nblocks * sizeof(int32_t));
    if (lay->bstarts == NULL || lay->bends == NULL) {
        rc = B2E_NOMEM;
        goto out;
    }
    if ((rc = fetch(src, (uint64_t)in->header_len, 4 * (size_t)in->nblocks, &buf, &cap, &p)) < 0)
        goto out;
    for (int32_t i = 0; i < in->nblocks; i++)
        lay->bstarts[i] = rd32(p + 4 * (size_t)i);
    int32_t data_start = in->header_len + 4 * in->nblocks;
    if (in->has_dict) {
        rc = B2E_DICT;
        if (in->cbytes - data_start < 4 || fetch(src, (uint64_t)data_start, 4, &buf, &cap, &p) < 0)
            goto out;
        int32_t dlen = rd32(p);
        if (dlen <= 0 || dlen > B2_MAX_DICT || dlen > in->cbytes - data_start - 4)
            goto out;
        lay->dict = malloc((size_t)dlen);
        if (lay->dict == NULL) {
            rc = B2E_NOMEM;
            goto out;
        }
        if ((rc = fetch(src, (uint64_t)data_start + 4, (size_t)dlen, &buf, &cap, &p)) < 0)
            goto out;
        memcpy(lay->dict, p, (size_t)dlen);
        lay->dict_len = dlen;
        data_start += 4 + dlen;
    }
    rc = compute_bends(lay, data_start);
out:
    free(buf);
    if (rc < 0)
        b2_chunk_layout_free(lay);
    return rc < 0 ? rc : B2E_OK;
}

void b2_chunk_layout_free(b2_chunk_layout *lay)
{
    if (lay == NULL)
        return;
    free(lay->bstarts);
    free(lay->bends);
    free(lay->dict);
    memset(lay, 0, sizeof *lay);
}

/* Reads block nb's streams and decodes them into out. */
static int load_and_decode(b2_worker *ctx, const b2_chunk_layout *lay, const b2_chunk_src *src,
                           const b2_stream_codec *codec, int32_t nb, const uint8_t *dref,
                           uint8_t *out)
{
    const uint8_t *p;
    size_t ext;
    int rc = fetch_block(ctx, lay, src, nb, &p, &ext);
    if (rc < 0)
        return rc;
    return decode_block(ctx, &lay->info, codec, nb, p, ext, dref, out);
}

int b2_chunk_decode_blocks(b2_dctx *ctx, const b2_chunk_layout *lay, const b2_chunk_src *src,
                           int32_t first, int32_t count, void *dst, size_t dst_len)
{
    if (ctx == NULL || lay == NULL || src == NULL || first < 0 || count < 0)
        return B2E_PARAM;
    const b2_chunk_info *in = &lay->info;
    int32_t total = geometry_nblocks(in);
    if (first > total || count > total - first)
        return B2E_PARAM;
    if (count == 0)
        return 0;
    size_t start = (size_t)first * in->blocksize;
    size_t end = (size_t)(first + count) * in->blocksize;
    if (end > (size_t)in->nbytes)
        end = (size_t)in->nbytes;
    if (end - start > dst_len)
        return B2E_DST_SMALL;
    uint8_t *d = dst;
    const uint8_t *p = NULL;
    int rc;

    b2_worker *w0 = &ctx->ws.w[0];
    if (in->special != B2_SPECIAL_NONE) {
        if (in->special == B2_SPECIAL_VALUE &&
            (rc = fetch(src, B2_HEADER_LEN, (size_t)(in->cbytes - B2_HEADER_LEN), &w0->cbuf,
                        &w0->cbuf_cap, &p)) < 0)
            return rc;
        fill_special(in, p, start, end - start, d);
        return (int)(end - start);
    }
    if (in->memcpyed) {
        if ((rc = fetch(src, (uint64_t)in->header_len + start, end - start, &w0->cbuf,
                        &w0->cbuf_cap, &p)) < 0)
            return rc;
        memcpy(d, p, end - start);
        return (int)(end - start);
    }
    if (lay->bstarts == NULL || lay->bends == NULL)
        return B2E_PARAM;
    if (in->vlblocks)   /* one block in the geometry: the whole chunk */
        return decode_vl_chunk(ctx, lay, src, d, dst_len);
    const b2_stream_codec *codec = b2_stream_codec_by_id(in->codec);
    if (codec == NULL)
        return B2E_CODEC;

    /* Delta codes every block against the decoded first block. */
    const uint8_t *dref = d;
    if (first > 0 && b2_pipeline_uses_delta(in->filters)) {
        if ((rc = b2_grow(&ctx->dref, &ctx->dref_cap, (size_t)in->blocksize)) < 0)
            return rc;
        if ((rc = b2_codec_state_use_dict(&w0->cs, in->codec, lay->dict, lay->dict_len)) < 0)
            return rc;
        if ((rc = load_and_decode(w0, lay, src, codec, 0, NULL, ctx->dref)) < 0)
            return rc;
        dref = ctx->dref;
    }
    djob j = {.ctx = ctx, .in = in, .codec = codec, .lay = lay, .src = src, .first = first,
              .dst = d, .dref = dref};
    rc = run_blocks(&j, count, lay->dict, lay->dict_len);
    return rc < 0 ? rc : (int)(end - start);
}
