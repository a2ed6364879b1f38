/* frame/: a commit written while the frame goes on changing (b2f_pending_*).
 *
 * b2f_pending_begin lays out what b2f_commit would write for the staged state at that
 * moment: the staged chunks after the end of the committed frame, the index, the
 * trailer and the header, all bytes and positions fixed there. b2f_pending_write then
 * needs nothing of the frame, so another thread can write it while the owner stages
 * more changes. The staged chunks it writes stay in the frame, pinned: reads still find
 * them in memory, and a change that replaces one leaves its buffer to the pending
 * commit. b2f_pending_end makes the chunks it wrote committed ones (those not replaced
 * meanwhile) and the header it wrote the committed header. b2f_commit of a frame with
 * chunks is the same layout and writes, done at once (commit.c).
 *
 * Calls: fio.c, read.c, tail.c, sums.c. */
#include <string.h>

#include "frame/frame_int.h"

typedef struct pending_chunk {
    uint8_t *data;
    int32_t cbytes;
    int64_t off;            /* index entry: relative to the header start */
    int settled;            /* the frame still had it at the end: kept or freed there */
} pending_chunk;

struct b2f_pending {
    int fd;
    b2f_io io;
    uint64_t changes;       /* the frame's count when this was laid out */
    int64_t header_len;
    size_t hlen;            /* header bytes to write: all when metalayer values changed */
    int written;            /* the header is written: the new frame is in place */
    pending_chunk *put;     /* staged chunks, sorted by data address (for _end) */
    int64_t nput;
    b2f_tail t;
};

static void pending_free(b2f_pending *p)
{
    if (!p)
        return;
    free(p->put);
    b2f_tail_free(&p->t);
    free(p);
}

static int cmp_data(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const pending_chunk *)a)->data;
    uintptr_t y = (uintptr_t)((const pending_chunk *)b)->data;
    return x < y ? -1 : x > y;
}

int b2f_pending_layout(b2_frame *f, b2f_pending **out)
{
    *out = NULL;
    b2f_window_drop(f);   /* the file changes from now on */
    b2f_pending *p = calloc(1, sizeof *p);
    int64_t *offs = malloc((size_t)(f->nchunks + 1) * sizeof *offs);
    int64_t nput = 0;
    for (int64_t i = 0; i < f->nchunks; i++)
        nput += f->chunks[i].data != NULL;
    if (p)
        p->put = malloc((size_t)(nput + 1) * sizeof *p->put);
    if (!p || !offs || !p->put) {
        pending_free(p);
        free(offs);
        return B2E_NOMEM;
    }
    p->fd = f->fd;
    p->io = f->io;
    p->changes = f->changes;
    p->header_len = f->h.header_len;
    /* every field a commit changes lies in the first 87 bytes, one disk sector: unless
     * metalayer values changed, only those are written */
    p->hlen = f->meta_dirty ? (size_t)p->header_len : B2F_HEADER_MINLEN;
    uint64_t pos = (uint64_t)f->h.frame_len;
    for (int64_t i = 0; i < f->nchunks; i++) {
        const b2f_chunk *c = &f->chunks[i];
        offs[i] = c->off;
        if (!c->data)
            continue;
        offs[i] = (int64_t)pos - p->header_len;
        p->put[p->nput++] = (pending_chunk){c->data, c->cbytes, offs[i], 0};
        pos += (uint64_t)c->cbytes;
    }
    int rc = b2f_tail_build(f, offs, pos, &p->t);
    free(offs);
    if (rc < 0) {
        pending_free(p);
        return rc;
    }
    for (int64_t i = 0; i < f->nchunks; i++)
        if (f->chunks[i].data)
            f->chunks[i].pinned = 1;
    qsort(p->put, (size_t)p->nput, sizeof *p->put, cmp_data);
    *out = p;
    return 0;
}

int b2f_pending_begin(b2_frame *f, b2f_pending **out)
{
    *out = NULL;
    if (f->kind != B2F_KIND_FRAME || !f->writable)
        return B2F_ERDONLY;
    /* what only b2f_commit does: header metalayers rewritten whole, a new trailer, an
     * empty frame (whose trailer C-Blosc2 reads right after the header) */
    if (!f->dirty || f->nbytes == 0 || f->meta_dirty || f->vlmeta_dirty)
        return 0;
    return b2f_pending_layout(f, out);
}

int b2f_pending_write_all(b2f_pending *p, int durable, char *err, size_t errlen)
{
    for (int64_t i = 0; i < p->nput; i++) {
        uint64_t at = (uint64_t)(p->header_len + p->put[i].off);
        int rc = b2f_io_pwrite(&p->io, p->fd, p->put[i].data, (size_t)p->put[i].cbytes, at);
        if (rc < 0)
            return b2f_fail(err, errlen, rc, "cannot write chunks at %llu: %s",
                            (unsigned long long)at, b2f_strerror(rc));
    }
    int rc = b2f_tail_write(&p->io, p->fd, &p->t);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "cannot write the index and trailer: %s",
                        b2f_strerror(rc));
    return b2f_write_header(&p->io, p->fd, p->t.img, p->hlen, p->t.end, durable, &p->written,
                            err, errlen);
}

int b2f_pending_write(b2f_pending *p, char *err, size_t errlen)
{
    int rc = b2f_pending_write_all(p, 0, err, errlen);
    /* once the header is written the new frame is in place: a file it could not cut
     * keeps dead bytes past its end, which the next commit cuts */
    return p->written ? 0 : rc;
}

static pending_chunk *find(b2f_pending *p, const uint8_t *data)
{
    pending_chunk key = {(uint8_t *)data, 0, 0, 0};
    return bsearch(&key, p->put, (size_t)p->nput, sizeof *p->put, cmp_data);
}

void b2f_pending_end(b2_frame *f, b2f_pending *p)
{
    if (!p)
        return;
    int committed = p->written;
    for (int64_t i = 0; i < f->nchunks; i++) {
        b2f_chunk *c = &f->chunks[i];
        if (!c->pinned)
            continue;
        pending_chunk *pc = find(p, c->data);
        c->pinned = 0;
        if (!pc)
            continue;   /* cannot be: only this commit pins */
        if (committed) {
            b2f_lay_drop(f, i);   /* its cached layout points at the staged copy */
            free(c->data);
            c->data = NULL;
            free(c->data_sums);
            c->data_sums = NULL;
            c->off = pc->off;
        }
        pc->settled = 1;
    }
    /* the buffers of chunks replaced or dropped since begin */
    for (int64_t i = 0; i < p->nput; i++)
        if (!p->put[i].settled)
            free(p->put[i].data);
    if (committed) {
        f->h = p->t.h;
        memcpy(f->hdr, p->t.img, (size_t)p->header_len);
        f->trailer_len = (uint32_t)p->t.trailer_len;
        f->file_size = (int64_t)p->t.end;
        /* the chunks it wrote (and kept) are checked against the table it wrote */
        f->sealed = !p->t.sums ? 0 : p->t.whole ? B2F_SEALED_WHOLE : B2F_SEALED;
        b2f_sums_install(f, p->t.sums, p->t.sums_len, 1);
        p->t.sums = NULL;
        if (f->changes == p->changes)   /* nothing staged since it was laid out */
            f->dirty = f->meta_dirty = f->vlmeta_dirty = 0;
    }
    pending_free(p);
}
