/* frame/: the end of a frame being written (a commit, a compacted copy): the index
 * chunk, the trailer and the header image that gives their place. */
#include <string.h>

#include "frame/frame_int.h"

int b2f_tail_build(const b2_frame *f, const int64_t *offs, uint64_t pos, b2f_tail *t)
{
    memset(t, 0, sizeof *t);
    t->index_off = pos;
    int rc = 0;
    /* C-Blosc2 looks for no index in a frame without data */
    if (f->nbytes > 0)
        rc = b2f_index_encode(offs, f->nchunks, &t->index, &t->index_len);
    if (rc == 0) {
        t->trailer_off = t->index_off + (uint64_t)t->index_len;
        rc = b2f_trailer_build(f->vlmeta, f->nvlmeta, &t->trailer, &t->trailer_len);
    }
    if (rc == 0) {
        t->end = t->trailer_off + t->trailer_len;
        rc = b2f_header_image(f, (int64_t)t->end, (int64_t)t->index_off - f->h.header_len,
                              &t->img, &t->h);
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
    memset(t, 0, sizeof *t);
}
