/* Placeholder until the BloscLZ codec lands: refuses everything. */
#include "codec/blosclz.h"

int blosclz_compress(int clevel, const void *src, int srclen, void *dst, int dstcap)
{
    (void)clevel; (void)src; (void)srclen; (void)dst; (void)dstcap;
    return 0;
}

int blosclz_decompress(const void *src, int srclen, void *dst, int dstcap)
{
    (void)src; (void)srclen; (void)dst; (void)dstcap;
    return -1;
}
