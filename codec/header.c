/* Chunk header: parse and validate (Blosc1 16-byte and Blosc2 32-byte forms). */
#include <string.h>

#include "codec/codec_private.h"

/* Blosc1 headers carry filters as flag bits: C-Blosc2 puts shuffle or bitshuffle in
 * the last slot and delta in the one before it. */
static void flags_to_filters(uint8_t flags, uint8_t filters[B2_MAX_FILTERS])
{
    memset(filters, 0, B2_MAX_FILTERS);
    if (flags & FLAG_SHUFFLE)
        filters[B2_MAX_FILTERS - 1] = B2_SHUFFLE;
    if (flags & FLAG_BITSHUFFLE)
        filters[B2_MAX_FILTERS - 1] = B2_BITSHUFFLE;
    if (flags & FLAG_DELTA)
        filters[B2_MAX_FILTERS - 2] = B2_DELTA;
}

static int codec_from_format(int format)
{
    const b2_stream_codec *c = b2_stream_codec_by_format(format);
    return c != NULL ? c->id : B2E_CODEC;
}

static int check_special(b2_chunk_info *in)
{
    if (in->special > B2_SPECIAL_UNINIT)
        return B2E_HEADER;
    if (in->special == B2_SPECIAL_VALUE) {
        int32_t vsize = in->cbytes - B2_HEADER_LEN;
        if (vsize <= 0 || vsize > in->nbytes || in->nbytes % vsize != 0)
            return B2E_HEADER;
    } else if (in->special == B2_SPECIAL_NAN) {
        if ((in->typesize != 4 && in->typesize != 8) || in->nbytes % in->typesize != 0)
            return B2E_HEADER;
    } else if (in->special == B2_SPECIAL_UNINIT) {
        if (in->nbytes % in->typesize != 0)
            return B2E_HEADER;
    }
    return B2E_OK;
}

int b2_chunk_parse_header(const void *src, size_t len, b2_chunk_info *in)
{
    const uint8_t *h = src;
    if (h == NULL || in == NULL)
        return B2E_PARAM;
    memset(in, 0, sizeof *in);
    if (len < B2_HEADER_LEN_V1)
        return B2E_TRUNCATED;
    in->version = h[HDR_VERSION];
    in->versionlz = h[HDR_VERSIONLZ];
    in->flags = h[HDR_FLAGS];
    in->typesize = h[HDR_TYPESIZE];
    in->nbytes = rd32(h + HDR_NBYTES);
    in->blocksize = rd32(h + HDR_BLOCKSIZE);
    in->cbytes = rd32(h + HDR_CBYTES);
    if (in->version == 0)
        return B2E_VERSION;

    int extended = (in->flags & FLAG_EXTENDED) == FLAG_EXTENDED;
    in->header_len = extended ? B2_HEADER_LEN : B2_HEADER_LEN_V1;
    if (extended && len < B2_HEADER_LEN)
        return B2E_TRUNCATED;
    if (in->cbytes < in->header_len || in->nbytes < 0 || in->nbytes > B2_MAX_NBYTES ||
        in->typesize == 0 || in->blocksize < 0 || in->blocksize > B2_MAX_BLOCKSIZE)
        return B2E_HEADER;

    if (extended) {
        memcpy(in->filters, h + HDR_FILTERS, B2_MAX_FILTERS);
        memcpy(in->filters_meta, h + HDR_FILTERS_META, B2_MAX_FILTERS);
        in->udcodec = h[HDR_UDCODEC];
        in->compcode_meta = h[HDR_COMPCODE_META];
        in->blosc2_flags = h[HDR_BLOSC2_FLAGS];
        if (h[HDR_FLAGS2] & ~FLAGS2_VL_BLOCKS)
            return B2E_VERSION;
        in->vlblocks = h[HDR_FLAGS2] == FLAGS2_VL_BLOCKS;
        /* Lazy chunks are an in-memory form of C-Blosc2, never found in a file. */
        if (in->blosc2_flags & B2FLAG_LAZY)
            return B2E_VERSION;
        /* The alpha format left the last slot uninitialised. */
        if (in->version == 3) {
            in->filters[B2_MAX_FILTERS - 1] = 0;
            in->filters_meta[B2_MAX_FILTERS - 1] = 0;
        }
        in->special = (in->blosc2_flags >> 4) & 0x07;
        in->has_dict = (in->blosc2_flags & B2FLAG_DICT) != 0;
    } else {
        flags_to_filters(in->flags, in->filters);
    }
    in->memcpyed = (in->flags & FLAG_MEMCPYED) != 0;
    in->dont_split = (in->flags & FLAG_DONT_SPLIT) != 0;
    for (int i = 0; i < B2_MAX_FILTERS; i++)
        if (!b2_filter_known(in->filters[i]))
            return B2E_FILTER;

    if (in->vlblocks) {
        /* The blocksize field counts the blocks; each has at least one byte. */
        if (in->special != B2_SPECIAL_NONE || in->memcpyed || in->blocksize == 0 ||
            in->blocksize > in->nbytes)
            return B2E_HEADER;
        in->nblocks = in->blocksize;
        in->blocksize = in->nbytes;
    }
    if (in->special != B2_SPECIAL_NONE)
        return check_special(in);
    if (in->memcpyed) {
        if (in->cbytes != in->nbytes + in->header_len)
            return B2E_HEADER;
        if (in->nbytes > 0 && (in->blocksize == 0 || in->blocksize > in->nbytes))
            in->blocksize = in->nbytes;
    } else if (in->nbytes > 0) {
        if (in->blocksize == 0 || in->blocksize > in->nbytes)
            return B2E_HEADER;
    }
    if (in->nbytes > 0 && in->blocksize > 0 && !in->vlblocks)
        in->nblocks = in->nbytes / in->blocksize + (in->nbytes % in->blocksize != 0);
    if (in->memcpyed) {
        in->nblocks = 0;
        in->codec = codec_from_format(in->flags >> 5);
        return B2E_OK;
    }

    int format = in->flags >> 5;
    in->codec = codec_from_format(format);
    if (in->nbytes == 0)
        return in->cbytes == in->header_len ? B2E_OK : B2E_HEADER;
    if (in->codec < 0)
        return B2E_CODEC;
    /* The block starts must fit in the chunk. */
    if ((int64_t)in->header_len + 4 * (int64_t)in->nblocks > in->cbytes)
        return B2E_HEADER;
    if (in->has_dict && in->codec != B2_ZSTD && in->codec != B2_LZ4)
        return B2E_DICT;
    return b2_pipeline_check(in->filters, in->filters_meta, in->typesize, 0);
}
