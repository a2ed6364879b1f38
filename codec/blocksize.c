/* Automatic blocksize and split choice, following C-Blosc2's rules so that b2fs
 * chunks look like the ones C-Blosc2 writes with the same parameters. */
#include "codec/codec_private.h"

#define L1_SIZE (32 * 1024)
/* b2_small_blocksize: split blocks no larger than this unless the level asks for more anyway */
#define SMALL_SPLIT_MAX (64 * 1024)

static int has_filter(const b2_cparams *p, int id)
{
    for (int i = 0; i < B2_MAX_FILTERS; i++)
        if (p->filters[i] == id)
            return 1;
    return 0;
}

/* Whether blocks of bsize bytes are split into typesize streams. */
int b2_split_wanted(const b2_cparams *p, int32_t bsize)
{
    int split;
    switch (p->splitmode) {
    case B2_SPLIT_ALWAYS: split = 1; break;
    case B2_SPLIT_NEVER: split = 0; break;
    default:
        if (p->blosc1_format)   /* c-blosc 1.x: every codec but zstd */
            split = p->codec != B2_ZSTD;
        else                    /* fast codecs after a byte shuffle */
            split = (p->codec == B2_BLOSCLZ || p->codec == B2_LZ4 ||
                     (p->codec == B2_ZSTD && p->clevel <= 5)) && has_filter(p, B2_SHUFFLE);
        split = split && p->typesize <= B2_MAX_SPLIT_STREAMS &&
                bsize / p->typesize >= B2_MIN_BUFFERSIZE;
    }
    /* Only whole items split: C-Blosc2 cannot read anything else back. */
    return split && bsize >= p->typesize && bsize % p->typesize == 0;
}

/* High-compression codecs get bigger blocks. */
static int is_hcr(int codec)
{
    return codec == B2_LZ4HC || codec == B2_ZLIB || codec == B2_ZSTD;
}

/* C-Blosc2's choice before its enlargement for split blocks: L1-sized, more for higher
 * levels and for the high-compression codecs. */
static int32_t base_blocksize(const b2_cparams *p, int32_t nbytes)
{
    static const int factor_x4[10] = {1, 2, 4, 8, 16, 16, 32, 32, 32, 32};
    if (nbytes < L1_SIZE)
        return nbytes;
    int32_t bs = L1_SIZE * (is_hcr(p->codec) ? 2 : 1);
    bs = bs / 4 * factor_x4[p->clevel];
    if (p->clevel == 9 && is_hcr(p->codec))
        bs *= 2;
    return bs;
}

/* Blocks that will be split get C-Blosc2's stream size times typesize. */
static int32_t split_blocksize(const b2_cparams *p, int32_t nbytes, int32_t bs)
{
    if (p->clevel == 0 || !b2_split_wanted(p, nbytes / p->typesize * p->typesize))
        return bs;
    static const int32_t split_kb[10] = {0, 32, 32, 32, 64, 64, 64, 128, 256, 512};
    int64_t s = (int64_t)split_kb[p->clevel] * 1024 * p->typesize;
    if (s > 4 * 1024 * 1024)
        s = 4 * 1024 * 1024;
    if (s < 32 * 1024)
        s = 32 * 1024;
    return (int32_t)s;
}

static int32_t fit(const b2_cparams *p, int32_t nbytes, int32_t bs)
{
    if (bs > nbytes)
        bs = nbytes;
    if (bs > p->typesize)
        bs = bs / p->typesize * p->typesize;
    return bs;
}

int32_t b2_auto_blocksize(const b2_cparams *p, int32_t nbytes)
{
    if (nbytes <= p->typesize)
        return nbytes > 0 ? nbytes : 1;
    if (p->blocksize > 0)
        return fit(p, nbytes, p->blocksize);
    return fit(p, nbytes, split_blocksize(p, nbytes, base_blocksize(p, nbytes)));
}

int32_t b2_small_blocksize(const b2_cparams *p, int32_t nbytes)
{
    if (nbytes <= p->typesize)
        return nbytes > 0 ? nbytes : 1;
    int32_t bs = base_blocksize(p, nbytes);
    int32_t split = split_blocksize(p, nbytes, bs);
    if (split > bs)
        bs = split < SMALL_SPLIT_MAX ? split : bs > SMALL_SPLIT_MAX ? bs : SMALL_SPLIT_MAX;
    return fit(p, nbytes, bs);
}
