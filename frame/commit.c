/* frame/: writing frames to disk: commit, create, compaction (and the dead bytes it
 * would reclaim).
 *
 * A commit appends the new chunks after the end of the committed frame, then the index
 * chunk and the trailer, and rewrites the header last. C-Blosc2 finds the trailer from
 * the header's frame length and the index at header_len + cbytes, so until the header
 * is rewritten the file still holds the old frame (the appended bytes lie past its
 * end); afterwards the old index and trailer are dead space inside the chunks region.
 *
 * Calls: codec/; fio.c, params.c, header.c, trailer.c, index.c, read.c, open.c,
 * tail.c, pending.c, sums.c. */
#include <stdio.h>
#include <string.h>

#include "frame/frame_int.h"

static int write_index(const b2_frame *f, int fd, const int64_t *offs, int64_t n, uint64_t pos,
                       uint64_t *next)
{
    uint8_t *idx;
    int32_t icb;
    int rc = b2f_index_encode(offs, n, &idx, &icb);
    if (rc < 0)
        return rc;
    rc = b2f_io_pwrite(&f->io, fd, idx, (size_t)icb, pos);
    free(idx);
    *next = pos + (uint64_t)icb;
    return rc;
}

/* The header of a frame without chunks (its trailer of tl bytes right after it), then
 * its in-memory state. */
static int write_header(b2_frame *f, int durable, const b2f_hdr *h, const uint8_t *img,
                        size_t tl, char *err, size_t errlen)
{
    size_t hlen = f->meta_dirty ? (size_t)h->header_len : B2F_HEADER_MINLEN;
    uint64_t end = (uint64_t)h->header_len + tl;
    int written;
    int rc = b2f_write_header(&f->io, f->fd, img, hlen, end, durable, &written, err, errlen);
    if (written) {
        f->h = *h;
        memcpy(f->hdr, img, (size_t)h->header_len);
        f->trailer_len = (uint32_t)tl;
        f->dirty = f->meta_dirty = f->vlmeta_dirty = 0;
    }
    if (rc == 0)
        f->file_size = (int64_t)end;
    return rc;
}

/* The staged chunks after the frame, then index, trailer and header: the layout and
 * writes of a pending commit, done here and now. */
static int commit_regular(b2_frame *f, int durable, char *err, size_t errlen)
{
    b2f_pending *p;
    int rc = b2f_pending_layout(f, &p);
    if (rc < 0)
        return rc;
    rc = b2f_pending_write_all(p, durable, err, errlen);
    b2f_pending_end(f, p);
    return rc;
}

/* First step of committing an empty frame, whose trailer C-Blosc2 reads right after the
 * header: commit the old contents again with every chunk that lies in the first `need`
 * bytes after the header copied to the end, so that the next step overwrites only dead
 * space. */
static int clear_front(b2_frame *f, uint64_t need, int durable, char *err, size_t errlen)
{
    int64_t *offs, n;
    int64_t at = (int64_t)f->h.header_len + f->h.cbytes;
    int rc = b2f_index_read(f, at, f->h.frame_len - f->trailer_len - at, -1, &offs, &n, err,
                            errlen);
    if (rc < 0)
        return rc;
    uint64_t hl = (uint64_t)f->h.header_len;
    uint64_t pos = (uint64_t)f->h.frame_len > hl + need ? (uint64_t)f->h.frame_len : hl + need;
    uint8_t *buf = NULL;
    for (int64_t i = 0; i < n && rc >= 0; i++) {
        if (offs[i] < 0 || (uint64_t)offs[i] >= need)
            continue;
        uint8_t hb[B2_HEADER_LEN];
        b2_chunk_info ci;
        rc = b2f_io_pread(&f->io, f->fd, hb, sizeof hb, hl + (uint64_t)offs[i]);
        if (rc == 0)
            rc = b2_chunk_parse_header(hb, sizeof hb, &ci);
        if (rc == 0) {
            free(buf);
            buf = malloc((size_t)ci.cbytes);
            rc = buf ? b2f_io_pread(&f->io, f->fd, buf, (size_t)ci.cbytes, hl + (uint64_t)offs[i])
                     : B2E_NOMEM;
        }
        if (rc == 0)
            rc = b2f_io_pwrite(&f->io, f->fd, buf, (size_t)ci.cbytes, pos);
        offs[i] = (int64_t)(pos - hl);
        pos += rc == 0 ? (uint64_t)ci.cbytes : 0;
    }
    free(buf);
    uint64_t index_off = pos, end = 0;
    uint8_t *tr = NULL, *img = NULL;
    if (rc == 0)
        rc = write_index(f, f->fd, offs, n, pos, &pos);
    if (rc == 0) {   /* the committed trailer, unchanged */
        tr = malloc(f->trailer_len);
        img = malloc(hl);
        rc = tr && img ? b2f_io_pread(&f->io, f->fd, tr, f->trailer_len,
                                      (uint64_t)f->h.frame_len - f->trailer_len) : B2E_NOMEM;
    }
    if (rc == 0) {
        /* chunks moved and the header changes: the fingerprint no longer holds */
        tr[f->trailer_len - 17] = 0;
        memset(tr + f->trailer_len - 16, 0, 16);
        rc = b2f_io_pwrite(&f->io, f->fd, tr, f->trailer_len, pos);
    }
    if (rc == 0)
        rc = b2f_io_pread(&f->io, f->fd, img, hl, 0);
    int written = 0;
    if (rc == 0) {
        end = pos + f->trailer_len;
        b2f_be_put(img + HP_FRAME_LEN, end, 8);
        b2f_be_put(img + HP_CBYTES, index_off - hl, 8);
        rc = b2f_write_header(&f->io, f->fd, img, hl, end, durable, &written, err, errlen);
    }
    if (written) {
        f->h.frame_len = (int64_t)end;
        f->h.cbytes = (int64_t)(index_off - hl);
        f->file_size = rc == 0 || f->file_size < (int64_t)end ? (int64_t)end : f->file_size;
    }
    free(tr);
    free(img);
    free(offs);
    if (rc < 0 && !written)
        b2f_fail(err, errlen, rc, "cannot move chunks away from the header: %s",
                 b2f_strerror(rc));
    return rc;
}

/* C-Blosc2 reads the trailer of a frame without data right after the header. */
static int commit_empty(b2_frame *f, int durable, char *err, size_t errlen)
{
    uint8_t *tr, *img = NULL;
    size_t tl;
    int rc = b2f_trailer_build(f->vlmeta, f->nvlmeta, &tr, &tl);
    if (rc < 0)
        return rc;
    uint64_t hl = (uint64_t)f->h.header_len;
    int write_trailer = 1;
    if (f->h.nbytes > 0)
        rc = clear_front(f, tl, durable, err, errlen);
    else if (!f->vlmeta_dirty) {   /* the trailer on disk stays as it is */
        write_trailer = 0;
        tl = f->trailer_len;
    }
    /* An empty frame whose trailer changes is rewritten in place: there is nowhere else
     * C-Blosc2 would look for it (see b2f_commit_is_atomic). */
    if (rc == 0 && write_trailer && (rc = b2f_io_pwrite(&f->io, f->fd, tr, tl, hl)) < 0)
        rc = b2f_fail(err, errlen, rc, "cannot write the trailer: %s", b2f_strerror(rc));
    b2f_hdr h;
    if (rc == 0 && (rc = b2f_header_image(f, (int64_t)(hl + tl), 0, 0, &img, &h)) == 0)
        rc = write_header(f, durable, &h, img, tl, err, errlen);
    free(img);
    free(tr);
    return rc;
}

int b2f_commit(b2_frame *f, int durable, char *err, size_t errlen)
{
    if (f->kind != B2F_KIND_FRAME || !f->writable)
        return B2F_ERDONLY;
    if (!f->dirty)
        return 0;
    b2f_window_drop(f);
    return f->nbytes > 0 ? commit_regular(f, durable, err, errlen)
                         : commit_empty(f, durable, err, errlen);
}

int b2f_seal(b2_frame *f, int64_t *summed)
{
    *summed = 0;
    if (f->kind != B2F_KIND_FRAME || !f->writable)
        return B2F_ERDONLY;
    b2f_sums_buf b;
    int rc = b2f_sums_begin(&b, b2f_meta_sum(f->hdr, (size_t)f->h.header_len));
    if (rc == 0)
        rc = b2f_sums_of_chunks(f, &b, summed, NULL, 0);
    if (rc < 0) {
        b2f_sums_free(&b);
        return rc;
    }
    b2f_sums_install(f, b.p, b.len, 1);   /* the frame takes the table */
    b2f_mark_dirty(f);                    /* a new trailer and fingerprint, whatever else */
    return 0;
}

int b2f_is_dirty(const b2_frame *f)
{
    return f->dirty;
}

int b2f_commit_is_atomic(b2_frame *f)
{
    return !(f->kind == B2F_KIND_FRAME && f->dirty && f->nbytes == 0 && f->h.nbytes == 0 &&
             f->vlmeta_dirty);
}

/* Copies the frame's chunks (staged ones included) into fd at the offsets offs gives
 * (relative to the header start; specials keep their index entry), then writes the tail
 * t laid out for them and the header last, cutting the file at the tail's end. Every
 * byte written before the header lies where the frame in fd (if any) keeps nothing. */
static int write_compacted(b2_frame *f, int fd, const int64_t *offs, b2f_tail *t, int durable,
                           int *written, char *err, size_t errlen)
{
    *written = 0;
    int64_t total = 0;
    for (int64_t i = 0; f->progress && i < f->nchunks; i++)
        if (f->chunks[i].data || f->chunks[i].off >= 0)
            total += f->chunks[i].cbytes;
    int rc = 0;
    for (int64_t i = 0; i < f->nchunks && rc == 0; i++) {
        const b2f_chunk *c = &f->chunks[i];
        if (!c->data && c->off < 0)
            continue;
        uint8_t *raw;
        int32_t cb;
        if ((rc = b2f_read_raw_chunk(f, i, &raw, &cb)) < 0)
            return b2f_fail(err, errlen, rc, "chunk %lld: cannot read it: %s", (long long)i,
                            b2f_strerror(rc));
        if (cb != c->cbytes)
            rc = B2F_EINDEX;   /* the layout planned from cbytes would not hold */
        else
            rc = b2f_io_pwrite(&f->io, fd, raw, (size_t)cb,
                               (uint64_t)(f->h.header_len + offs[i]));
        free(raw);
        if (f->progress)
            f->progress(f->progress_ctx, offs[i] + cb, total);
    }
    if (rc == 0)
        rc = b2f_tail_write(&f->io, fd, t);
    if (rc == 0)
        rc = b2f_write_header(&f->io, fd, t->img, (size_t)t->h.header_len, t->end, durable,
                              written, err, errlen);
    if (rc < 0 && err && errlen && !err[0])
        b2f_fail(err, errlen, rc, "cannot write the compacted frame: %s", b2f_strerror(rc));
    return rc;
}

/* Lays out the compacted frame: each chunk with data right after the one before it,
 * from file offset start on (the end of the header, or of the frame for a move), into offs
 * (nchunks entries, malloc'ed), and its tail. */
static int plan_compacted(b2_frame *f, uint64_t start, int64_t **offs, b2f_tail *t, char *err,
                          size_t errlen)
{
    *offs = malloc((size_t)(f->nchunks + 1) * sizeof **offs);
    if (!*offs)
        return b2f_fail(err, errlen, B2E_NOMEM, "cannot lay out the compacted frame");
    uint64_t pos = start;
    for (int64_t i = 0; i < f->nchunks; i++) {
        const b2f_chunk *c = &f->chunks[i];
        (*offs)[i] = c->off;
        if (!c->data && c->off < 0)
            continue;
        (*offs)[i] = (int64_t)pos - f->h.header_len;
        pos += (uint64_t)c->cbytes;
    }
    int rc = b2f_tail_build(f, *offs, pos, t);
    if (rc < 0) {
        free(*offs);
        *offs = NULL;
        return b2f_fail(err, errlen, rc, "cannot lay out the compacted frame: %s",
                        b2f_strerror(rc));
    }
    return 0;
}

int b2f_compact_into(b2_frame *f, int out_fd, char *err, size_t errlen)
{
    if (f->kind != B2F_KIND_FRAME)
        return b2f_fail(err, errlen, B2F_ERDONLY, "only contiguous frames can be compacted");
    int64_t *offs;
    b2f_tail t;
    int rc = plan_compacted(f, (uint64_t)f->h.header_len, &offs, &t, err, errlen);
    if (rc < 0)
        return rc;
    int written;
    rc = write_compacted(f, out_fd, offs, &t, 0, &written, err, errlen);
    b2f_tail_free(&t);
    free(offs);
    return rc;
}

/* Whether f may be rewritten in its own file: a writable contiguous frame, nothing
 * staged. */
static int own_file_rewritable(const b2_frame *f)
{
    return f->kind == B2F_KIND_FRAME && f->writable && !f->dirty && !f->meta_dirty &&
           !f->vlmeta_dirty;
}

/* Writes the frame compacted into its own file from offset start on, if it ends by limit
 * and its chunks, index and trailer take at most max_bytes; then reads it again. With
 * durable, a write inside the frame as it is (start before its end) first syncs the file:
 * what is dead now may be live to the header on the disk, if the commit that made it dead
 * was not durable. 1 when done, 0 when it does not fit (nothing written), or an error. */
static int rewrite_own_file(b2_frame *f, uint64_t start, uint64_t limit, int64_t max_bytes,
                            int durable, char *err, size_t errlen)
{
    int64_t *offs;
    b2f_tail t;
    int rc = plan_compacted(f, start, &offs, &t, err, errlen);
    if (rc < 0)
        return rc;
    int fits = t.h.header_len == f->h.header_len && t.end <= limit &&
               t.end - start <= (uint64_t)max_bytes;
    int written = 0;
    if (fits && durable && start < (uint64_t)f->h.frame_len && f->io.fdatasync(f->fd) != 0) {
        rc = b2f_sys_error();
        b2f_fail(err, errlen, rc, "cannot sync the frame before compacting it: %s",
                 b2f_strerror(rc));
    } else if (fits) {
        rc = write_compacted(f, f->fd, offs, &t, durable, &written, err, errlen);
    }
    b2f_tail_free(&t);
    free(offs);
    if (!written)
        return rc;
    /* the rewritten frame is the file's, even when cutting the file after it failed */
    char rerr[200] = "";
    int rr = b2f_refresh(f, rerr, sizeof rerr);
    if (rr < 0 && rc == 0) {
        rc = rr;
        if (err && errlen)
            snprintf(err, errlen, "%s", rerr);
    }
    return rc < 0 ? rc : 1;
}

int b2f_compact_in_place(b2_frame *f, int64_t max_bytes, int durable, char *err, size_t errlen)
{
    if (!own_file_rewritable(f))
        return 0;
    /* the first byte the frame uses after its header: a chunk's, or the index's */
    int64_t live = f->h.header_len + f->h.cbytes;
    for (int64_t i = 0; i < f->nchunks; i++) {
        const b2f_chunk *c = &f->chunks[i];
        if (c->data)
            return 0;
        if (c->off >= 0 && f->h.header_len + c->off < live)
            live = f->h.header_len + c->off;
    }
    return rewrite_own_file(f, (uint64_t)f->h.header_len, (uint64_t)live, max_bytes, durable,
                            err, errlen);
}

int b2f_move_past_end(b2_frame *f, int64_t max_bytes, int durable, char *err, size_t errlen)
{
    if (!own_file_rewritable(f))
        return 0;
    return rewrite_own_file(f, (uint64_t)f->h.frame_len, UINT64_MAX, max_bytes, durable, err,
                            errlen);
}

void b2f_set_progress(b2_frame *f, b2f_progress_fn fn, void *ctx)
{
    f->progress = fn;
    f->progress_ctx = ctx;
}

typedef struct span { int64_t a, b; } span;

static int cmp_span(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

int64_t b2f_dead_bytes(b2_frame *f)
{
    if (f->kind != B2F_KIND_FRAME || f->h.nbytes == 0)
        return 0;
    span *s = malloc((size_t)(f->nchunks + 1) * sizeof *s);
    if (!s)
        return B2E_NOMEM;
    int64_t n = 0;
    for (int64_t i = 0; i < f->nchunks; i++)
        if (!f->chunks[i].data && f->chunks[i].off >= 0)
            s[n++] = (span){f->chunks[i].off, f->chunks[i].off + f->chunks[i].cbytes};
    qsort(s, (size_t)n, sizeof *s, cmp_span);
    int64_t live = 0, reach = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = s[i].a > reach ? s[i].a : reach;
        if (s[i].b > a)
            live += s[i].b - a;
        if (s[i].b > reach)
            reach = s[i].b;
    }
    free(s);
    return f->h.cbytes - live;
}

static int check_params(const b2f_params *p)
{
    if (p->chunksize <= 0 || p->chunksize > B2_MAX_NBYTES || p->cp.typesize < 1 ||
        p->cp.typesize > 255)
        return B2E_PARAM;
    b2_cctx *c = b2_cctx_new(&p->cp);
    if (!c)
        return B2E_PARAM;
    b2_cctx_free(c);
    return 0;
}

int b2f_create(b2_frame **out, int fd, const b2f_params *p, int nmeta, const char *const *names,
               const void *const *values, const size_t *lens, const b2f_io *io, char *err,
               size_t errlen)
{
    *out = NULL;
    if (check_params(p) < 0)
        return b2f_fail(err, errlen, B2E_PARAM, "bad frame parameters");
    if (nmeta < 0 || nmeta > B2F_MAX_META)
        return b2f_fail(err, errlen, B2F_EMETA, "%d metalayers, at most %d", nmeta, B2F_MAX_META);
    uint32_t l32[B2F_MAX_META];
    for (int i = 0; i < nmeta; i++) {
        size_t nl = strlen(names[i]);
        if (nl == 0 || nl > B2F_META_NAME_MAX || lens[i] > (size_t)B2F_MAX_HEADER_LEN)
            return b2f_fail(err, errlen, B2F_EMETA, "metalayer '%s': name or value size out of "
                            "bounds", names[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return b2f_fail(err, errlen, B2F_EMETA, "metalayer '%s' given twice", names[i]);
        l32[i] = (uint32_t)lens[i];
    }
    b2f_hdr h;
    memset(&h, 0, sizeof h);
    h.gflags = 0x10 | B2F_FORMAT_VERSION;   /* 64-bit offsets */
    h.nthreads_c = h.nthreads_d = 1;
    b2f_cparams_to_hdr(p, &h);
    h.chunksize = p->chunksize;
    uint8_t *hdr, *tr;
    size_t hl, tl;
    int rc = b2f_hdr_build(&h, nmeta, names, values, l32, &hdr, &hl);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "cannot build the header: %s", b2f_strerror(rc));
    if ((rc = b2f_trailer_build(NULL, 0, &tr, &tl)) < 0) {
        free(hdr);
        return rc;
    }
    h.header_len = (int32_t)hl;
    h.frame_len = (int64_t)(hl + tl);
    b2f_hdr_patch(hdr, &h);
    uint8_t *img = malloc(hl + tl);
    b2f_io fio;
    b2f_io_init(&fio, io);
    if (img) {
        memcpy(img, hdr, hl);
        memcpy(img + hl, tr, tl);
        rc = b2f_io_pwrite(&fio, fd, img, hl + tl, 0);
    } else {
        rc = B2E_NOMEM;
    }
    free(img);
    free(hdr);
    free(tr);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "cannot write the new frame: %s", b2f_strerror(rc));
    b2_frame *f;
    if ((rc = b2f_open(&f, fd, B2F_RDWR, io, err, errlen)) < 0)
        return rc;
    f->wp = *p;
    *out = f;
    return 0;
}
