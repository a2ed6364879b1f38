/* frame/: the parameters of a frame's chunks (b2f_params): their defaults, and where a
 * frame header records them.
 * Calls: codec/ only. */
#include <string.h>

#include "frame/frame_int.h"

void b2f_params_default(b2f_params *p)
{
    memset(p, 0, sizeof *p);
    b2_cparams_default(&p->cp);
    p->chunksize = 1 << 20;
}

void b2f_hdr_to_cparams(const b2f_hdr *h, b2f_params *p)
{
    b2f_params_default(p);
    int codec = h->codec_flags & 0x0f;
    if (codec == 6)
        codec = h->udcodec;
    p->cp.codec = codec;
    p->cp.clevel = h->codec_flags >> 4;
    p->cp.typesize = h->typesize;
    memcpy(p->cp.filters, h->filters, B2_MAX_FILTERS);
    memcpy(p->cp.filters_meta, h->filters_meta, B2_MAX_FILTERS);
    p->cp.blocksize = h->blocksize;
    p->cp.splitmode = (h->other_flags & 3) + 1;
    p->chunksize = h->chunksize;
}

void b2f_cparams_to_hdr(const b2f_params *p, b2f_hdr *h)
{
    h->codec_flags = (uint8_t)((p->cp.codec & 0x0f) | (p->cp.clevel << 4));
    h->udcodec = (uint8_t)p->cp.codec;
    h->typesize = p->cp.typesize;
    memcpy(h->filters, p->cp.filters, B2_MAX_FILTERS);
    memcpy(h->filters_meta, p->cp.filters_meta, B2_MAX_FILTERS);
    h->nfilters = B2_MAX_FILTERS;
    h->blocksize = p->cp.blocksize;
    int split = p->cp.splitmode ? p->cp.splitmode : B2_SPLIT_FORWARD_COMPAT;
    h->other_flags = (uint8_t)((h->other_flags & ~3) | ((split - 1) & 3));
}
