/* frame/: the end of a frame being written (a commit, a compacted copy): the index
 * chunk, the trailer (with the table of checksums, or for a small frame none: its
 * fingerprint covers the chunks' sums) and the header image that gives their place, and the
 * fingerprint of all three in the trailer; writing them, the header last
 * between its fdatasyncs.
 * Calls: fio.c, params.c, header.c, trailer.c, index.c, sums.c. */
#include <string.h>
#include <sys/stat.h>

#include "frame/frame_int.h"

int b2f_header_image(const b2_frame *f, int64_t frame_len, int64_t cbytes, int with_sums,
                     uint8_t **out, b2f_hdr *h)
{
    *h = f->h;
    b2f_cparams_to_hdr(&f->wp, h);
    h->frame_len = frame_len;
    h->nbytes = f->nbytes;
    h->cbytes = cbytes;
    h->chunksize = f->variable ? 0 : f->wp.chunksize;
    h->has_vlmeta = f->nvlmeta > 0 || with_sums;   /* the table is one, as C-Blosc2 counts */
    uint8_t *img = malloc((size_t)f->h.header_len);
    if (!img)
        return B2E_NOMEM;
    memcpy(img, f->hdr, (size_t)f->h.header_len);
    b2f_hdr_patch(img, h);
    *out = img;
    return 0;
}

/* The trailer of f with the table of checksums t->sums as one more vlmetalayer. */
static int trailer_with_sums(const b2_frame *f, b2f_tail *t)
{
    b2f_vlmeta *vl = malloc(((size_t)f->nvlmeta + 1) * sizeof *vl);
    if (!vl)
        return B2E_NOMEM;
    if (f->nvlmeta > 0)
        memcpy(vl, f->vlmeta, (size_t)f->nvlmeta * sizeof *vl);
    b2f_vlmeta *s = &vl[f->nvlmeta];
    memset(s, 0, sizeof *s);
    memcpy(s->name, B2F_SUMS_VLMETA, sizeof B2F_SUMS_VLMETA);
    /* checksums do not compress: stored as they are, no codec context made per commit */
    int rc = b2f_vlmeta_store(t->sums, t->sums_len, &s->data, &s->len);
    if (rc == 0)
        rc = b2f_trailer_build(vl, f->nvlmeta + 1, &t->trailer, &t->trailer_len);
    free(s->data);
    free(vl);
    return rc;
}

/* Chunks with stored bytes at offs (the rest are kept in the index). */
static int64_t stored_chunks(const b2_frame *f, const int64_t *offs)
{
    int64_t n = 0;
    for (int64_t i = 0; i < f->nchunks; i++)
        n += offs[i] >= 0;
    return n;
}

int b2f_tail_build(b2_frame *f, const int64_t *offs, uint64_t pos, b2f_tail *t)
{
    memset(t, 0, sizeof *t);
    t->index_off = pos;
    int rc = 0;
    /* C-Blosc2 looks for no index in a frame without data */
    if (f->nbytes > 0)
        rc = b2f_index_encode(offs, f->nchunks, &t->index, &t->index_len);
    /* checksums for a frame with data (an empty one has nothing to serve wrong) */
    int sums = f->nbytes > 0 && f->sums_write;
    if (rc == 0 && sums && (rc = b2f_sums_table(f, offs, &t->sums, &t->sums_len)) == 0 &&
        t->sums_len > B2F_MAX_SUMS_TABLE) {
        free(t->sums);   /* a frame of tens of millions of blocks: left unverified */
        t->sums = NULL;
        sums = 0;
    }
    /* a small frame whose every chunk has sums keeps no table: its fingerprint covers them */
    int whole = 0;
    if (rc == 0 && sums && b2f_sums_count(t->sums, t->sums_len) == stored_chunks(f, offs)) {
        rc = b2f_trailer_build(f->vlmeta, f->nvlmeta, &t->trailer, &t->trailer_len);
        whole = rc == 0 &&
                t->index_off + (uint64_t)t->index_len + t->trailer_len <= B2F_WHOLE_MAX &&
                b2f_committed_sums_hold(f);
        if (rc == 0 && !whole) {
            free(t->trailer);
            t->trailer = NULL;
        }
    }
    if (rc == 0 && sums && !whole)
        rc = trailer_with_sums(f, t);
    else if (rc == 0 && !whole)
        rc = b2f_trailer_build(f->vlmeta, f->nvlmeta, &t->trailer, &t->trailer_len);
    if (rc == 0) {
        t->trailer_off = t->index_off + (uint64_t)t->index_len;
        t->end = t->trailer_off + t->trailer_len;
        rc = b2f_header_image(f, (int64_t)t->end, (int64_t)t->index_off - f->h.header_len,
                              sums && !whole, &t->img, &t->h);
    }
    uint8_t *fp = rc == 0 && sums ? t->trailer + t->trailer_len - 16 : NULL;
    t->whole = whole;
    if (fp && whole) {
        fp[-1] = B2F_FP_XXH3_WHOLE;
        rc = b2f_frame_fingerprint_whole(t->img, t->index, (size_t)t->index_len, t->trailer,
                                         t->trailer_len, t->sums, t->sums_len, fp);
    } else if (fp) {
        fp[-1] = B2F_FP_XXH3_128;
        rc = b2f_frame_fingerprint(t->img, t->index, (size_t)t->index_len, t->trailer,
                                   t->trailer_len, fp);
    }
    if (rc < 0)
        b2f_tail_free(t);
    return rc;
}

int b2f_tail_write(const b2f_io *io, int fd, const b2f_tail *t)
{
    int rc = 0;
    if (t->index_len > 0)
        rc = b2f_io_pwrite(io, fd, t->index, (size_t)t->index_len, t->index_off);
    if (rc == 0)
        rc = b2f_io_pwrite(io, fd, t->trailer, t->trailer_len, t->trailer_off);
    return rc;
}

void b2f_tail_free(b2f_tail *t)
{
    free(t->index);
    free(t->trailer);
    free(t->img);
    free(t->sums);
    memset(t, 0, sizeof *t);
}

static int sync_if(const b2f_io *io, int fd, int durable)
{
    return durable && io->fdatasync(fd) != 0 ? b2f_sys_error() : 0;
}

int b2f_write_header(const b2f_io *io, int fd, const uint8_t *img, size_t hlen, uint64_t end,
                     int durable, int *written, char *err, size_t errlen)
{
    *written = 0;
    int rc = sync_if(io, fd, durable);
    if (rc < 0)
        return b2f_fail(err, errlen, rc, "fdatasync before the header failed");
    if ((rc = b2f_io_pwrite(io, fd, img, hlen, 0)) < 0)
        return b2f_fail(err, errlen, rc, "cannot write the header: %s", b2f_strerror(rc));
    *written = 1;
    if ((rc = sync_if(io, fd, durable)) < 0)
        return b2f_fail(err, errlen, rc, "fdatasync after the header failed");
    /* bytes past the frame: from this commit's predecessors that failed before their header */
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > (off_t)end && io->ftruncate(fd, (off_t)end) != 0)
        return b2f_fail(err, errlen, b2f_sys_error(),
                        "cannot truncate the file to the frame end %llu", (unsigned long long)end);
    return 0;
}
