/* File offsets to chunk pieces: the identity mapping (layout.h). */
#include "fs/layout.h"

int layout_piece_at(const b2fs_node *n, uint64_t pos, uint64_t end, layout_piece *p)
{
    if (n->chunksize > 0) {
        uint64_t cs = (uint64_t)n->chunksize;
        p->chunk = (int64_t)(pos / cs);
        p->chunk_start = (uint64_t)p->chunk * cs;
        p->chunk_len = (uint32_t)cs;
    } else {
        int64_t c = b2f_chunk_at(n->frame, pos);
        p->chunk = c < 0 ? -1 : c;   /* what a caller logs when the lookup fails */
        if (c < 0)
            return (int)c;
        int32_t nb;
        int r = b2f_chunk_span(n->frame, c, &p->chunk_start, &nb);
        if (r < 0)
            return r;
        if (pos < p->chunk_start || nb <= 0 || pos - p->chunk_start >= (uint64_t)nb)
            return B2F_ERANGE;
        p->chunk = c;
        p->chunk_len = (uint32_t)nb;
    }
    p->within = (uint32_t)(pos - p->chunk_start);
    uint64_t rest = p->chunk_len - p->within;
    p->len = (uint32_t)(end - pos < rest ? end - pos : rest);
    return 0;
}
