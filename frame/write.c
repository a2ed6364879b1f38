/* frame/: staged changes to a frame's chunks (on disk at b2f_commit), and the
 * parameters of chunks written from now on.
 * Calls: codec/; encode.c, read.c, open.c. */
#include <string.h>

#include "frame/frame_int.h"

static int check_writable(const b2_frame *f)
{
    return f->kind == B2F_KIND_FRAME && f->writable ? 0 : B2F_ERDONLY;
}

/* Room for need chunks in chunks and starts. */
static int grow(b2_frame *f, int64_t need)
{
    if (need <= f->cap)
        return 0;
    if (need > B2F_MAX_NCHUNKS)
        return B2F_ETOOBIG;
    int64_t cap = f->cap < 16 ? 16 : f->cap * 2;
    if (cap < need)
        cap = need;
    b2f_chunk *c = realloc(f->chunks, (size_t)cap * sizeof *c);
    if (!c)
        return B2E_NOMEM;
    f->chunks = c;
    if (f->variable) {
        uint64_t *st = realloc(f->starts, (size_t)(cap + 1) * sizeof *st);
        if (!st)
            return B2E_NOMEM;
        f->starts = st;
    }
    f->cap = cap;
    b2f_rebuild_starts(f);
    return 0;
}

static int check_size(const b2_frame *f, int64_t n, int32_t nbytes, int insert)
{
    if (nbytes <= 0)
        return B2F_ERANGE;
    if (f->variable)
        return 0;
    int32_t cs = f->wp.chunksize;
    if (nbytes > cs)
        return B2F_ERANGE;
    int last = insert ? n == f->nchunks : n >= f->nchunks - 1;
    if (!last && nbytes != cs)
        return B2F_ERANGE;
    /* appending after a short last chunk would leave a hole */
    if (n == f->nchunks && n > 0 && f->chunks[n - 1].nbytes != cs)
        return B2F_ERANGE;
    return 0;
}

/* Puts chunk (owned from now on) into slot n. Specials C-Blosc2 keeps in the index
 * (zeros, NaN, uninit) go there when chunks have a fixed size. */
static void set_entry(b2_frame *f, int64_t n, uint8_t *chunk, const b2_chunk_info *ci)
{
    b2f_chunk *c = &f->chunks[n];
    b2f_lay_drop(f, n);
    memset(c, 0, sizeof *c);
    c->nbytes = ci->nbytes;
    c->special = (uint8_t)ci->special;
    /* C-Blosc2 remakes an indexed special with the frame's typesize: it must fit */
    int ts = f->wp.cp.typesize;
    int indexable = ci->special == B2_SPECIAL_ZERO || ci->special == B2_SPECIAL_UNINIT ||
                    (ci->special == B2_SPECIAL_NAN && ci->typesize == ts);
    if (!f->variable && indexable && ci->nbytes % ts == 0) {
        c->off = B2F_OFF_SPECIAL(ci->special);
        free(chunk);
    } else {
        c->data = chunk;
        c->cbytes = ci->cbytes;
    }
    b2f_mark_dirty(f);
}

static int parse_owned(const uint8_t *chunk, int32_t cbytes, b2_chunk_info *ci)
{
    int rc = b2_chunk_parse_header(chunk, (size_t)cbytes, ci);
    if (rc == 0 && ci->cbytes != cbytes)
        rc = B2E_TRUNCATED;
    return rc;
}

static int put_encoded(b2_frame *f, int64_t n, uint8_t *chunk, int32_t cbytes, int insert)
{
    int rc = check_writable(f);
    if (rc < 0)
        return rc;
    if (n < 0 || n > f->nchunks)
        return B2F_ERANGE;
    b2_chunk_info ci;
    if ((rc = parse_owned(chunk, cbytes, &ci)) < 0)
        return rc;
    if ((rc = check_size(f, n, ci.nbytes, insert)) < 0)
        return rc;
    if (n == f->nchunks || insert) {
        if ((rc = grow(f, f->nchunks + 1)) < 0)
            return rc;
        memmove(f->chunks + n + 1, f->chunks + n, (size_t)(f->nchunks - n) * sizeof *f->chunks);
        memset(f->chunks + n, 0, sizeof *f->chunks);
        b2f_lays_drop(f, n);   /* cached by chunk number: the later ones move */
        f->nchunks++;
    } else {
        f->nbytes -= f->chunks[n].nbytes;
        b2f_chunk_drop_data(&f->chunks[n]);
    }
    set_entry(f, n, chunk, &ci);
    f->nbytes += ci.nbytes;
    b2f_rebuild_starts(f);
    return 0;
}

int b2f_update_encoded(b2_frame *f, int64_t n, uint8_t *chunk, int32_t cbytes)
{
    return put_encoded(f, n, chunk, cbytes, 0);
}

int b2f_update_stored(b2_frame *f, int64_t n, uint8_t *buf, size_t nbytes)
{
    int rc = check_writable(f);
    if (rc < 0)
        return rc;
    if (n < 0 || n > f->nchunks || nbytes == 0 || nbytes > (size_t)B2_MAX_NBYTES)
        return B2F_ERANGE;
    if ((rc = check_size(f, n, (int32_t)nbytes, 0)) < 0)
        return rc;
    uint8_t zero[B2_MAX_OVERHEAD];
    rc = b2f_encode_zero(f->wp.cp.typesize, buf + B2_HEADER_LEN, nbytes, zero, sizeof zero);
    if (rc > 0) {
        uint8_t *z = malloc((size_t)rc);
        if (!z)
            return B2E_NOMEM;
        memcpy(z, zero, (size_t)rc);
        int put = put_encoded(f, n, z, rc, 0);
        if (put < 0)
            free(z);
        return put < 0 ? put : 1;
    }
    if (rc < 0 || (rc = b2_chunk_store_in_place(&f->wp.cp, buf, nbytes)) < 0)
        return rc;
    int cbytes = rc;
    if ((rc = put_encoded(f, n, buf, cbytes, 0)) < 0)
        return rc;
    /* its checksums now, while its bytes are in the cache, not at the commit */
    b2f_chunk *c = &f->chunks[n];
    uint64_t *sums;
    int nsums;
    if (f->sums_write && c->data == buf && b2f_chunk_sums(buf, cbytes, &sums, &nsums) == 0) {
        c->data_sums = sums;
        c->ndata_sums = nsums;
    }
    return 0;
}

/* Encodes data with cctx (or the frame's parameters); all zeros become a zero special. */
static int encode(b2_frame *f, b2_cctx *cctx, const void *data, size_t nbytes, uint8_t **out,
                  int32_t *cbytes)
{
    if (nbytes == 0 || nbytes > (size_t)B2_MAX_NBYTES)
        return B2F_ERANGE;
    b2_cctx *own = cctx ? NULL : b2_cctx_new(&f->wp.cp);
    uint8_t *buf = malloc(nbytes + B2_MAX_OVERHEAD);
    int rc = buf ? b2f_encode_chunk(cctx ? cctx : own, f->wp.cp.typesize, data, nbytes, buf,
                                    nbytes + B2_MAX_OVERHEAD)
                 : B2E_NOMEM;
    b2_cctx_free(own);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    uint8_t *fit = realloc(buf, (size_t)rc); /* staged until the commit: keep what it needs */
    *out = fit ? fit : buf;
    *cbytes = rc;
    return 0;
}

static int put_data(b2_frame *f, b2_cctx *cctx, int64_t n, const void *data, size_t nbytes,
                    int insert)
{
    int rc = check_writable(f);
    if (rc < 0)
        return rc;
    if (n < 0 || n > f->nchunks || nbytes > (size_t)B2_MAX_NBYTES)
        return B2F_ERANGE;
    if ((rc = check_size(f, n, (int32_t)nbytes, insert)) < 0)
        return rc;
    uint8_t *chunk;
    int32_t cb;
    if ((rc = encode(f, cctx, data, nbytes, &chunk, &cb)) < 0)
        return rc;
    rc = put_encoded(f, n, chunk, cb, insert);
    if (rc < 0)
        free(chunk);
    return rc;
}

int b2f_update_chunk(b2_frame *f, b2_cctx *cctx, int64_t n, const void *data, size_t nbytes)
{
    return put_data(f, cctx, n, data, nbytes, 0);
}

int b2f_insert_chunk(b2_frame *f, b2_cctx *cctx, int64_t n, const void *data, size_t nbytes)
{
    return put_data(f, cctx, n, data, nbytes, 1);
}

int b2f_delete_chunk(b2_frame *f, int64_t n)
{
    int rc = check_writable(f);
    if (rc < 0)
        return rc;
    if (n < 0 || n >= f->nchunks)
        return B2F_ERANGE;
    f->nbytes -= f->chunks[n].nbytes;
    b2f_chunk_drop_data(&f->chunks[n]);
    b2f_lays_drop(f, n);
    memmove(f->chunks + n, f->chunks + n + 1, (size_t)(f->nchunks - n - 1) * sizeof *f->chunks);
    f->nchunks--;
    b2f_mark_dirty(f);
    b2f_rebuild_starts(f);
    return 0;
}

/* Rewrites chunk n with its first keep bytes followed by zeros up to size bytes. */
static int rewrite_prefix(b2_frame *f, b2_cctx *cctx, int64_t n, int32_t keep, int32_t size)
{
    int32_t old = f->chunks[n].nbytes;
    uint8_t *buf = calloc(1, (size_t)(old > size ? old : size));
    b2_dctx *d = b2_dctx_new();
    int rc = buf && d ? b2f_read_chunk(f, d, n, buf, (size_t)old) : B2E_NOMEM;
    b2_dctx_free(d);
    if (rc >= 0) {
        memset(buf + keep, 0, (size_t)((old > size ? old : size) - keep));
        uint8_t *chunk;
        int32_t cb;
        rc = encode(f, cctx, buf, (size_t)size, &chunk, &cb);
        if (rc == 0) {
            /* the size check does not apply: the chunk keeps its place */
            b2_chunk_info ci;
            rc = parse_owned(chunk, cb, &ci);
            if (rc == 0) {
                f->nbytes += ci.nbytes - f->chunks[n].nbytes;
                b2f_chunk_drop_data(&f->chunks[n]);
                set_entry(f, n, chunk, &ci);
                b2f_rebuild_starts(f);
            } else {
                free(chunk);
            }
        }
    }
    free(buf);
    return rc < 0 ? rc : 0;
}

uint64_t b2f_max_nbytes(int32_t chunksize)
{
    return chunksize > 0 ? (uint64_t)B2F_MAX_NCHUNKS * (uint64_t)chunksize : 0;
}

int b2f_resize(b2_frame *f, b2_cctx *cctx, uint64_t nbytes)
{
    int rc = check_writable(f);
    if (rc < 0)
        return rc;
    if (nbytes > b2f_max_nbytes(f->wp.chunksize))
        return B2F_ETOOBIG;
    if (nbytes < (uint64_t)f->nbytes) {
        while (f->nchunks > 0) {
            uint64_t start;
            int32_t cn;
            b2f_chunk_span(f, f->nchunks - 1, &start, &cn);
            if (start < nbytes) {
                if (start + (uint64_t)cn > nbytes)
                    return rewrite_prefix(f, cctx, f->nchunks - 1, (int32_t)(nbytes - start),
                                          (int32_t)(nbytes - start));
                return 0;
            }
            if ((rc = b2f_delete_chunk(f, f->nchunks - 1)) < 0)
                return rc;
        }
        return 0;
    }
    int32_t cs = f->wp.chunksize;
    if (!f->variable && f->nchunks > 0 && f->chunks[f->nchunks - 1].nbytes < cs) {
        int32_t old = f->chunks[f->nchunks - 1].nbytes;
        uint64_t want = (uint64_t)old + (nbytes - (uint64_t)f->nbytes);
        rc = rewrite_prefix(f, cctx, f->nchunks - 1, old, want < (uint64_t)cs ? (int32_t)want : cs);
        if (rc < 0)
            return rc;
    }
    /* every whole chunk of the hole encodes to the same bytes: encoded once, then copied
     * (a hole of a TiB is a million chunks) */
    uint8_t *zeros = NULL, *whole = NULL;
    int32_t whole_len = 0;
    while (rc >= 0 && (uint64_t)f->nbytes < nbytes) {
        uint64_t left = nbytes - (uint64_t)f->nbytes;
        int32_t n = left < (uint64_t)cs ? (int32_t)left : cs;
        if (!zeros && !(zeros = calloc(1, (size_t)cs))) {
            rc = B2E_NOMEM;
            break;
        }
        if (n < cs) {
            rc = put_data(f, cctx, f->nchunks, zeros, (size_t)n, 0);
            continue;
        }
        if (!whole && (rc = encode(f, cctx, zeros, (size_t)cs, &whole, &whole_len)) < 0)
            break;
        uint8_t *copy = malloc((size_t)whole_len);
        if (!copy) {
            rc = B2E_NOMEM;
            break;
        }
        memcpy(copy, whole, (size_t)whole_len);
        if ((rc = put_encoded(f, f->nchunks, copy, whole_len, 0)) < 0)
            free(copy);
    }
    free(whole);
    free(zeros);
    return rc < 0 ? rc : 0;
}

int b2f_set_params(b2_frame *f, const b2f_params *p)
{
    int rc = check_writable(f);
    if (rc < 0)
        return rc;
    if (f->nchunks > 0 && (p->cp.typesize != f->wp.cp.typesize ||
                           (p->chunksize != f->wp.chunksize && !f->variable)))
        return B2F_ERANGE;
    if (p->chunksize <= 0 || p->chunksize > B2_MAX_NBYTES)
        return B2F_ERANGE;
    b2_cctx *c = b2_cctx_new(&p->cp);
    if (!c)
        return B2E_PARAM;
    b2_cctx_free(c);
    int32_t keep = f->wp.chunksize;
    f->wp = *p;
    if (f->nchunks > 0 && f->variable)
        f->wp.chunksize = keep;
    b2f_mark_dirty(f);
    return 0;
}

void b2f_set_choose(b2_frame *f, int filters, int typesize)
{
    f->wp.cp.choose = filters != 0;
    f->wp.cp.choose_typesize = filters && typesize;
}

int b2f_pick_typesize(b2_frame *f, b2_cctx *cctx, const void *data, size_t nbytes)
{
    if (check_writable(f) < 0 || f->nchunks > 0 || !f->wp.cp.choose ||
        !f->wp.cp.choose_typesize)
        return 0;
    int ts = b2_cctx_choose_typesize(cctx, data, nbytes);
    if (ts < 0)
        return ts;
    if (ts == f->wp.cp.typesize)
        return 0;
    b2f_params p = f->wp;
    p.cp.typesize = ts;
    b2_cctx *probe = b2_cctx_new(&p.cp);   /* a blocksize set for the old one may not suit */
    if (!probe)
        return 0;
    b2_cctx_free(probe);
    f->wp.cp.typesize = ts;
    b2f_mark_dirty(f);
    return 1;
}

int b2f_compresses(b2_cctx *cctx, const void *data, size_t nbytes, size_t margin)
{
    return b2_cctx_compresses(cctx, data, nbytes, margin);
}

b2_cctx *b2f_cctx_new(b2_frame *f)
{
    return b2_cctx_new(&f->wp.cp);
}

b2_cctx *b2f_cctx_new_level(b2_frame *f, int clevel, int auto_blocksize, int nthreads)
{
    b2_cparams cp = f->wp.cp;
    cp.clevel = clevel;
    if (auto_blocksize)
        cp.blocksize = 0;
    b2_cctx *c = b2_cctx_new(&cp);
    if (c && nthreads > 1)
        b2_cctx_set_nthreads(c, nthreads);   /* (one thread left when it fails: still usable) */
    return c;
}
