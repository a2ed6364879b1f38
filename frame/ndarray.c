/* frame/: array frames built from items in C order (a .npy file's data), and the runs of
 * items that make up each chunk (frame.h).
 *
 * A new array frame is written with the ordinary write path (b2f_create with the b2nd
 * metalayer, b2f_update_chunk, b2f_commit), one chunk at a time gathered from the source,
 * committed every few chunks so that memory stays bounded.
 *
 * Calls: codec/; fio.c, b2nd.c, npy.c, meta.c, read.c, open.c, write.c, commit.c. */
#include <string.h>
#include <sys/stat.h>

#include "frame/frame_int.h"

#define ARRAY_COMMIT_BYTES ((int64_t)64 << 20)

int b2f_ndmap_chunk_runs(const b2f_ndmap *m, int64_t c, b2f_nd_run_fn fn, void *ctx)
{
    if (c < 0 || c >= m->nchunks)
        return B2F_ERANGE;
    if (m->ndim == 0)
        return fn(ctx, 0, 0, 1);
    int64_t lo[B2F_ND_MAX], hi[B2F_ND_MAX], x[B2F_ND_MAX];
    b2f_ndmap_chunk_region(m, c, lo, hi);
    memcpy(x, lo, sizeof x);
    int last = m->ndim - 1;
    for (;;) {
        /* the chunk's part of one row along the last dimension */
        uint64_t item = 0;
        for (int i = 0; i < m->ndim; i++)
            item += (uint64_t)x[i] * m->item_stride[i];
        uint64_t end = item + (uint64_t)(hi[last] - lo[last]);
        while (item < end) {
            int64_t chunk;
            uint32_t off;
            uint64_t run;
            b2f_ndmap_locate(m, item, &chunk, &off, &run);
            if (run > end - item)
                run = end - item;
            int r = fn(ctx, item, off, run);
            if (r < 0)
                return r;
            item += run;
        }
        int i = last - 1;
        while (i >= 0 && ++x[i] == hi[i]) {
            x[i] = lo[i];
            i--;
        }
        if (i < 0)
            return 0;
    }
}

typedef struct gather {
    uint8_t *buf;
    int itemsize;
    b2f_item_reader read;
    void *ctx;
} gather;

static int gather_run(void *ctx, uint64_t item, uint32_t off, uint64_t n)
{
    gather *g = ctx;
    return g->read(g->ctx, g->buf + off, (size_t)n * (size_t)g->itemsize,
                   item * (uint64_t)g->itemsize);
}

int b2f_array_write(int out_fd, const b2f_params *base, const b2f_ndinfo *nd, int itemsize,
                    b2f_item_reader read, void *ctx, b2_frame *vlmeta_from, char *err,
                    size_t errlen)
{
    b2f_ndmap m;
    if (b2f_ndmap_init(&m, nd, itemsize) < 0)
        return b2f_fail(err, errlen, B2F_EMETA, "chunks of %d-byte items too large", itemsize);
    uint8_t meta[1024];
    int mlen = b2f_nd_serialize(nd, meta, sizeof meta);
    if (mlen < 0)
        return b2f_fail(err, errlen, mlen, "b2nd metalayer too large");
    b2f_params p = *base;
    /* Blosc2 types are at most 255 bytes: larger items are shuffled as bytes */
    p.cp.typesize = itemsize <= 255 ? itemsize : 1;
    p.chunksize = m.chunk_bytes;
    p.cp.blocksize = (int32_t)(m.block_items * (uint64_t)itemsize);
    const char *names[1] = {"b2nd"};
    const void *values[1] = {meta};
    size_t lens[1] = {(size_t)mlen};
    b2_frame *f;
    int rc = b2f_create(&f, out_fd, &p, 1, names, values, lens,
                        vlmeta_from ? &vlmeta_from->io : NULL, err, errlen);
    if (rc < 0)
        return rc;
    gather g = {malloc(m.chunk_bytes ? (size_t)m.chunk_bytes : 1), itemsize, read, ctx};
    b2_cctx *c = b2f_cctx_new(f);
    rc = g.buf && c ? 0 : B2E_NOMEM;
    int64_t staged = 0;
    for (int64_t n = 0; rc == 0 && n < m.nchunks; n++) {
        memset(g.buf, 0, (size_t)m.chunk_bytes);
        if ((rc = b2f_ndmap_chunk_runs(&m, n, gather_run, &g)) < 0)
            b2f_fail(err, errlen, rc, "chunk %lld: cannot read its items: %s", (long long)n,
                     b2f_strerror(rc));
        else if ((rc = b2f_update_chunk(f, c, n, g.buf, (size_t)m.chunk_bytes)) < 0)
            b2f_fail(err, errlen, rc, "chunk %lld: %s", (long long)n, b2f_strerror(rc));
        else if ((staged += m.chunk_bytes) >= ARRAY_COMMIT_BYTES) {
            staged = 0;
            rc = b2f_commit(f, 0, err, errlen);
        }
    }
    if (rc == 0 && vlmeta_from && (rc = b2f_vlmeta_copy(vlmeta_from, f)) < 0)
        b2f_fail(err, errlen, rc, "cannot copy the vlmetalayers: %s", b2f_strerror(rc));
    if (rc == 0)
        rc = b2f_commit(f, 0, err, errlen);
    b2_cctx_free(c);
    free(g.buf);
    b2f_close(f);
    return rc;
}

/* The items of a .npy file held in a frame's contents. */
typedef struct npy_source {
    b2_frame *f;
    b2_dctx *d;
    uint64_t data;
} npy_source;

static int read_npy_items(void *ctx, void *buf, size_t len, uint64_t off)
{
    npy_source *s = ctx;
    ssize_t got = b2f_pread(s->f, s->d, buf, len, s->data + off);
    return got == (ssize_t)len ? 0 : got < 0 ? (int)got : B2F_ERANGE;
}

int b2f_npy_check(const uint8_t *head, size_t len, uint64_t size, b2f_npyinfo *npy,
                  b2f_ndinfo *nd, int *itemsize, char *err, size_t errlen)
{
    int rc = b2f_npy_parse(head, len, npy, err, errlen);
    if (rc < 0)
        return rc;
    if (npy->fortran_order)
        return b2f_fail(err, errlen, B2F_EMETA, "Fortran order");
    uint64_t data = size - npy->header_len;
    int is = npy->itemsize;
    if (!is && npy->items && data % npy->items == 0 && data / npy->items < (1u << 20))
        is = (int)(data / npy->items);
    if (!is && !npy->items)
        is = 1;
    if (is <= 0 || (npy->items && data / npy->items != (uint64_t)is) ||
        data != npy->items * (uint64_t)is)
        return b2f_fail(err, errlen, B2F_EMETA, "%llu data bytes for %llu items of %d bytes",
                        (unsigned long long)data, (unsigned long long)npy->items, is);
    memset(nd, 0, sizeof *nd);
    nd->ndim = npy->ndim;
    memcpy(nd->shape, npy->shape, sizeof nd->shape);
    nd->items = npy->items;
    nd->dtype_format = 0;
    memcpy(nd->dtype, npy->dtype, sizeof nd->dtype);
    b2f_nd_choose_shapes(nd, is);
    *itemsize = is;
    return 0;
}

int b2f_array_from_npy_into(b2_frame *f, int out_fd, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    if (f->kind != B2F_KIND_FRAME)
        return b2f_fail(err, errlen, B2F_ERDONLY, "not a contiguous frame");
    uint64_t size = (uint64_t)f->nbytes;
    size_t cap = B2F_NPY_MAX_HEADER + 12;
    size_t hl = size < cap ? (size_t)size : cap;
    uint8_t *head = malloc(hl ? hl : 1);
    npy_source s = {f, b2_dctx_new(), 0};
    if (!s.d || !head) {
        free(head);
        b2_dctx_free(s.d);
        return B2E_NOMEM;
    }
    ssize_t got = b2f_pread(f, s.d, head, hl, 0);
    b2f_npyinfo npy;
    b2f_ndinfo nd;
    int itemsize, rc = got == (ssize_t)hl ? 0 : got < 0 ? (int)got : B2F_ERANGE;
    if (rc == 0)
        rc = b2f_npy_check(head, hl, size, &npy, &nd, &itemsize, err, errlen);
    if (rc == 0) {
        b2f_params p = {.cp = f->wp.cp};
        s.data = npy.header_len;
        rc = b2f_array_write(out_fd, &p, &nd, itemsize, read_npy_items, &s, f, err, errlen);
    }
    free(head);
    b2_dctx_free(s.d);
    return rc;
}

int b2f_array_clear_into(b2_frame *f, int out_fd, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = 0;
    b2f_params p;
    b2f_params_default(&p);
    int32_t chunksize = p.chunksize;
    p = f->wp;
    p.cp.blocksize = 0;
    p.chunksize = chunksize;
    b2_frame *nf;
    int rc = b2f_create(&nf, out_fd, &p, 0, NULL, NULL, NULL, &f->io, err, errlen);
    if (rc < 0)
        return rc;
    if ((rc = b2f_vlmeta_copy(f, nf)) < 0)
        b2f_fail(err, errlen, rc, "cannot copy the vlmetalayers: %s", b2f_strerror(rc));
    if (rc == 0)
        rc = b2f_commit(nf, 0, err, errlen);
    b2f_close(nf);
    return rc;
}

int b2f_nd_view(b2_frame *f, b2f_ndinfo *nd, b2f_ndmap *m, char *header, size_t cap)
{
    b2f_stat fs;
    b2f_stat_get(f, &fs);
    int r = b2f_nd_of(f, nd, NULL, 0);
    if (r < 0)
        return r;
    if (nd->dtype_format > 0 || fs.chunksize < 0 || fs.kind != B2F_KIND_FRAME)
        return B2F_EMETA;
    /* the item size: a chunk holds the items of the chunk shape padded to whole blocks
     * (the frame's typesize may be another: items over 255 bytes, older writers) */
    b2f_ndmap probe;
    if ((r = b2f_ndmap_init(&probe, nd, 1)) < 0)
        return r;
    int itemsize = fs.typesize;
    if (probe.chunk_bytes > 0 && fs.chunksize > 0) {
        if (fs.chunksize % probe.chunk_bytes)
            return B2F_EMETA;
        itemsize = fs.chunksize / probe.chunk_bytes;
    }
    if ((r = b2f_ndmap_init(m, nd, itemsize)) < 0)
        return r;
    if (m->nchunks && (fs.chunksize != m->chunk_bytes || fs.nchunks != m->nchunks ||
                       (uint64_t)fs.nbytes != (uint64_t)fs.nchunks * (uint64_t)fs.chunksize))
        return B2F_EMETA;
    return b2f_npy_header(nd, itemsize, header, cap);
}
