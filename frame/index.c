/* frame/: the chunk index (a Blosc chunk of little-endian int64 offsets) and the check
 * of every chunk it points at; the encoding of a vlmetalayer's content.
 * Calls: codec/; fio.c. */
#include <stdlib.h>
#include <string.h>

#include "frame/frame_int.h"

typedef struct extent { int64_t off; int64_t end; int64_t n; } extent;

static int cmp_extent(const void *a, const void *b)
{
    const extent *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

static int64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return (int64_t)v;
}

/* Chunks must not overlap each other (the same chunk listed twice is allowed). */
static int check_overlaps(b2_frame *f, char *err, size_t errlen)
{
    int64_t n = 0;
    for (int64_t i = 0; i < f->nchunks; i++)
        n += f->chunks[i].off >= 0;
    if (n < 2)
        return 0;
    extent *e = malloc((size_t)n * sizeof *e);
    if (!e)
        return B2E_NOMEM;
    n = 0;
    for (int64_t i = 0; i < f->nchunks; i++)
        if (f->chunks[i].off >= 0)
            e[n++] = (extent){f->chunks[i].off, f->chunks[i].off + f->chunks[i].cbytes, i};
    qsort(e, (size_t)n, sizeof *e, cmp_extent);
    int rc = 0;
    for (int64_t i = 1; i < n; i++) {
        if (e[i].off == e[i - 1].off && e[i].end == e[i - 1].end)
            continue;
        if (e[i].off < e[i - 1].end) {
            rc = b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld at offset %lld overlaps chunk %lld "
                          "(%lld..%lld)", (long long)e[i].n, (long long)e[i].off,
                          (long long)e[i - 1].n, (long long)e[i - 1].off, (long long)e[i - 1].end);
            break;
        }
    }
    free(e);
    return rc;
}

/* Checks chunk i's index entry v and the chunk header it points at. */
static int load_entry(b2_frame *f, int64_t i, int64_t v, uint64_t *sum, char *err, size_t errlen)
{
    b2f_chunk *c = &f->chunks[i];
    memset(c, 0, sizeof *c);
    c->off = v;
    int32_t want = 0;
    if (!f->variable) {
        int64_t start = i * (int64_t)f->h.chunksize;
        int64_t left = f->h.nbytes - start;
        want = left < f->h.chunksize ? (int32_t)left : f->h.chunksize;
    }
    if (v < 0) {
        int kind = (int)(((uint64_t)v >> 56) & 0x7f);
        if (kind != B2_SPECIAL_ZERO && kind != B2_SPECIAL_NAN && kind != B2_SPECIAL_UNINIT)
            return b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld: index entry 0x%016llx is not a "
                            "known special value", (long long)i, (unsigned long long)v);
        if (f->variable)
            return b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld: special value in a frame of "
                            "variable-size chunks (size unknown)", (long long)i);
        c->special = (uint8_t)kind;
        c->nbytes = want;
        return 0;
    }
    int64_t region = f->h.cbytes;
    if (v > region - B2_HEADER_LEN)
        return b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld: offset %lld past the end of the "
                        "chunks region (%lld bytes after the %d-byte header)", (long long)i,
                        (long long)v, (long long)region, f->h.header_len);
    uint8_t hb[B2_HEADER_LEN];
    int rc = b2f_file_read(f, hb, sizeof hb, (uint64_t)f->h.header_len + (uint64_t)v);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "chunk %lld: cannot read its header at file offset %lld: %s",
                        (long long)i, (long long)(f->h.header_len + v), b2f_strerror(rc));
    b2_chunk_info ci;
    rc = b2_chunk_parse_header(hb, sizeof hb, &ci);
    if (rc < 0)
        return b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld: bad chunk header at file offset "
                        "%lld: %s", (long long)i, (long long)(f->h.header_len + v), b2_strerror(rc));
    if (ci.cbytes > region - v)
        return b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld: %d bytes at offset %lld run past the "
                        "chunks region (%lld bytes)", (long long)i, ci.cbytes, (long long)v,
                        (long long)region);
    if (f->variable) {
        if (ci.nbytes <= 0)
            return b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld: holds no data", (long long)i);
    } else if (ci.nbytes != want) {
        return b2f_fail(err, errlen, B2F_EINDEX, "chunk %lld: holds %d bytes, the header's sizes "
                        "say %d", (long long)i, ci.nbytes, want);
    }
    c->cbytes = ci.cbytes;
    c->nbytes = ci.nbytes;
    c->special = (uint8_t)ci.special;
    *sum += (uint64_t)ci.nbytes;
    return 0;
}

int b2f_index_read(b2_frame *f, int64_t at, int64_t len, int64_t want, int64_t **out, int64_t *n,
                   char *err, size_t errlen)
{
    if (len < B2_HEADER_LEN || len > B2_MAX_NBYTES)
        return b2f_fail(err, errlen, B2F_EINDEX, "index chunk of %lld bytes at file offset %lld",
                        (long long)len, (long long)at);
    uint8_t *ib = malloc((size_t)len);
    if (!ib)
        return B2E_NOMEM;
    int rc = b2f_file_read(f, ib, (size_t)len, (uint64_t)at);
    if (rc < 0) {
        free(ib);
        return b2f_fail(err, errlen, rc, "cannot read the index chunk: %s", b2f_strerror(rc));
    }
    b2_chunk_info ci;
    rc = b2_chunk_parse_header(ib, (size_t)len, &ci);
    if (rc == 0 && ci.cbytes > len)
        rc = B2E_TRUNCATED;
    if (rc < 0) {
        free(ib);
        return b2f_fail(err, errlen, B2F_EINDEX, "index chunk at file offset %lld: %s",
                        (long long)at, b2_strerror(rc));
    }
    if (ci.nbytes % 8 != 0 || (want >= 0 && ci.nbytes / 8 != want)) {
        free(ib);
        return b2f_fail(err, errlen, B2F_EINDEX, "index chunk holds %d bytes of offsets, the "
                        "header's sizes say %lld chunks", ci.nbytes, (long long)want);
    }
    if (ci.nbytes / 8 > B2F_MAX_NCHUNKS) {
        free(ib);
        return b2f_fail(err, errlen, B2F_ETOOBIG, "index of %d chunks, more than the %lld accepted",
                        ci.nbytes / 8, (long long)B2F_MAX_NCHUNKS);
    }
    int64_t count = ci.nbytes / 8;
    uint8_t *raw = malloc((size_t)ci.nbytes + 1);
    int64_t *offs = malloc((size_t)count * sizeof *offs + 1);
    b2_dctx *ctx = b2_dctx_new();
    rc = raw && offs && ctx ? b2_chunk_decode(ctx, ib, (size_t)len, raw, (size_t)ci.nbytes)
                            : B2E_NOMEM;
    b2_dctx_free(ctx);
    free(ib);
    if (rc == ci.nbytes)
        for (int64_t i = 0; i < count; i++)
            offs[i] = le64(raw + i * 8);
    free(raw);
    if (rc != ci.nbytes) {
        free(offs);
        return rc == B2E_NOMEM ? rc : b2f_fail(err, errlen, B2F_EINDEX, "index chunk does not "
                                               "decode: %s", b2_strerror(rc < 0 ? rc : B2E_CORRUPT));
    }
    *out = offs;
    *n = count;
    return 0;
}

int b2f_index_load(b2_frame *f, int64_t index_off, int64_t index_len, char *err, size_t errlen)
{
    int64_t nchunks = -1;
    if (!f->variable) {
        nchunks = f->h.nbytes / f->h.chunksize + (f->h.nbytes % f->h.chunksize != 0);
        if (nchunks > B2F_MAX_NCHUNKS)
            return b2f_fail(err, errlen, B2F_ETOOBIG, "%lld chunks (%lld bytes in chunks of %d): "
                            "more than the %lld accepted", (long long)nchunks,
                            (long long)f->h.nbytes, f->h.chunksize, (long long)B2F_MAX_NCHUNKS);
    }
    int64_t *offs;
    int rc = b2f_index_read(f, index_off, index_len, nchunks, &offs, &nchunks, err, errlen);
    if (rc < 0)
        return rc;
    /* each stored chunk needs a header's worth of the chunks region: this bounds the
     * header reads below by the file size */
    int64_t stored = 0;
    for (int64_t i = 0; i < nchunks; i++)
        stored += offs[i] >= 0;
    if (stored > f->h.cbytes / B2_HEADER_LEN) {
        free(offs);
        return b2f_fail(err, errlen, B2F_EINDEX, "%lld stored chunks cannot fit in a chunks region "
                        "of %lld bytes", (long long)stored, (long long)f->h.cbytes);
    }
    f->chunks = calloc((size_t)nchunks + 1, sizeof *f->chunks);
    if (f->variable)   /* cap + 1 entries, as grow() keeps them */
        f->starts = calloc((size_t)nchunks + 2, sizeof *f->starts);
    if (!f->chunks || (f->variable && !f->starts)) {
        free(offs);
        return B2E_NOMEM;
    }
    f->cap = nchunks + 1;
    f->nchunks = nchunks;
    uint64_t sum = 0;
    for (int64_t i = 0; i < nchunks && rc >= 0; i++) {
        if (f->variable)
            f->starts[i] = sum;
        rc = load_entry(f, i, offs[i], &sum, err, errlen);
    }
    free(offs);
    if (rc < 0)
        return rc;
    if (f->variable) {
        f->starts[nchunks] = sum;
        if (sum != (uint64_t)f->h.nbytes)
            return b2f_fail(err, errlen, B2F_EHEADER, "chunks hold %llu bytes, the header says %lld",
                            (unsigned long long)sum, (long long)f->h.nbytes);
    }
    return check_overlaps(f, err, errlen);
}

static int encode_with(const b2_cparams *p, const void *src, size_t len, uint8_t **out,
                       int32_t *cbytes)
{
    b2_cctx *cc = b2_cctx_new(p);
    uint8_t *buf = malloc(len + B2_MAX_OVERHEAD);
    int rc = cc && buf ? b2_chunk_encode(cc, src, len, buf, len + B2_MAX_OVERHEAD) : B2E_NOMEM;
    b2_cctx_free(cc);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *cbytes = rc;
    return 0;
}

int b2f_index_encode(const int64_t *offs, int64_t n, uint8_t **out, int32_t *cbytes)
{
    size_t len = (size_t)n * 8;
    uint8_t *raw = malloc(len + 1);
    if (!raw)
        return B2E_NOMEM;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)offs[i];
        for (int b = 0; b < 8; b++)
            raw[i * 8 + b] = (uint8_t)(v >> (8 * b));
    }
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = B2_LZ4;
    p.clevel = 5;
    p.typesize = 8;
    memset(p.filters, 0, sizeof p.filters);
    p.filters[B2_MAX_FILTERS - 1] = B2_SHUFFLE;
    p.splitmode = B2_SPLIT_NEVER;
    int rc = encode_with(&p, raw, len, out, cbytes);
    free(raw);
    return rc;
}

int b2f_vlmeta_encode(const void *val, size_t len, uint8_t **out, uint32_t *cbytes)
{
    if (len > (size_t)B2_MAX_NBYTES)
        return B2F_ETOOBIG;
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = B2_LZ4;
    p.clevel = 5;
    p.typesize = 1;
    memset(p.filters, 0, sizeof p.filters);
    int32_t cb;
    int rc = encode_with(&p, val, len, out, &cb);
    if (rc == 0)
        *cbytes = (uint32_t)cb;
    return rc;
}

int b2f_vlmeta_store(const void *val, size_t len, uint8_t **out, uint32_t *cbytes)
{
    if (len > (size_t)B2_MAX_NBYTES - B2_HEADER_LEN)
        return B2F_ETOOBIG;
    b2_cparams p;
    b2_cparams_default(&p);
    p.codec = B2_LZ4;
    p.typesize = 1;
    memset(p.filters, 0, sizeof p.filters);
    uint8_t *buf = malloc(len + B2_HEADER_LEN);
    int rc = buf ? b2_chunk_store(&p, val, len, buf, len + B2_HEADER_LEN) : B2E_NOMEM;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *cbytes = (uint32_t)rc;
    return 0;
}

int b2f_vlmeta_decode(const uint8_t *data, uint32_t dlen, uint8_t **val, size_t *len)
{
    b2_chunk_info ci;
    int rc = b2_chunk_parse_header(data, dlen, &ci);
    if (rc < 0 || (uint32_t)ci.cbytes != dlen)
        return B2F_EMETA;
    if (ci.nbytes > B2F_MAX_VLMETA_NBYTES)
        return B2F_ETOOBIG;
    uint8_t *out = malloc(ci.nbytes ? (size_t)ci.nbytes : 1);
    if (out && ci.memcpyed && ci.special == B2_SPECIAL_NONE &&
        (int64_t)ci.header_len + ci.nbytes == ci.cbytes) {   /* stored: no decoder needed */
        memcpy(out, data + ci.header_len, (size_t)ci.nbytes);
        *val = out;
        *len = (size_t)ci.nbytes;
        return 0;
    }
    b2_dctx *d = b2_dctx_new();
    rc = out && d ? b2_chunk_decode(d, data, dlen, out, (size_t)ci.nbytes) : B2E_NOMEM;
    b2_dctx_free(d);
    if (rc < 0 || rc != ci.nbytes) {
        free(out);
        return rc < 0 ? rc : B2F_EMETA;
    }
    *val = out;
    *len = (size_t)ci.nbytes;
    return 0;
}
