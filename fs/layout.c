/* File offsets to chunk pieces: the identity and the .npy view (layout.h). */
#include "fs/layout.h"

#include <stdlib.h>

static int view_piece_at(const b2fs_view *v, uint64_t pos, uint64_t end, layout_piece *p)
{
    p->chunk_start = UINT64_MAX;
    p->chunk_len = (uint32_t)v->map.chunk_bytes;
    if (pos < (uint64_t)v->header_len) {
        p->chunk = LAYOUT_HEADER;
        p->within = (uint32_t)pos;
        p->len = (uint32_t)((end < (uint64_t)v->header_len ? end : (uint64_t)v->header_len) - pos);
        return 0;
    }
    uint64_t isz = (uint64_t)v->map.itemsize, at = pos - (uint64_t)v->header_len;
    uint32_t off;
    uint64_t run;
    b2f_ndmap_locate(&v->map, at / isz, &p->chunk, &off, &run);
    uint64_t bytes = run * isz - at % isz;
    p->within = off + (uint32_t)(at % isz);
    p->len = (uint32_t)(end - pos < bytes ? end - pos : bytes);
    return 0;
}

int layout_piece_at(const b2fs_node *n, uint64_t pos, uint64_t end, layout_piece *p)
{
    if (n->view)
        return view_piece_at(n->view, pos, end, p);
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

uint64_t layout_block_end(const b2fs_node *n, int64_t c, int32_t b, uint32_t bstart,
                          uint32_t blen)
{
    if (!n->view) {
        uint64_t cs = (uint64_t)(n->chunksize > 0 ? n->chunksize : 0);
        return (uint64_t)c * cs + bstart + blen;
    }
    uint64_t item;
    if (b2f_ndmap_block_last(&n->view->map, c, b, &item) < 0)
        return 0;
    return (uint64_t)n->view->header_len + (item + 1) * (uint64_t)n->view->map.itemsize;
}

uint64_t layout_size(const b2fs_node *n)
{
    return n->view ? n->view->size : n->size;
}

b2fs_view *layout_view_make(const b2fs_node *n)
{
    if (!n->frame || !n->name || !name_is_array(n->name))
        return NULL;
    b2fs_view *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    int h = b2f_nd_view(n->frame, &v->nd, &v->map, v->header, sizeof v->header);
    if (h < 0) {
        free(v);
        return NULL;
    }
    v->header_len = h;
    v->size = (uint64_t)h + v->map.items * (uint64_t)v->map.itemsize;
    return v;
}
