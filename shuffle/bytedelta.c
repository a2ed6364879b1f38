/* Bytedelta, C-Blosc2's filter 35 (a plugin it registers by default): a block is taken
 * as typesize streams of len / typesize bytes, one after another (the byte planes a
 * shuffle before it leaves), and each byte of a stream is stored as its difference to
 * the byte before it in the same stream, the first byte as it is. The len % typesize
 * bytes after the last stream are copied. */
#include <string.h>

#include "shuffle/kernels.h"
#include "shuffle/shuffle.h"

void b2_bytedelta_encode(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst)
{
    size_t n = typesize > 0 ? len / typesize : 0, streams = n > 0 ? typesize : 0;
    b2k_bytes_fn differences = b2k_active()->byte_differences;
    for (size_t s = 0; s < streams; s++)
        differences(src + s * n, dst + s * n, n);
    memcpy(dst + streams * n, src + streams * n, len - streams * n);
}

void b2_bytedelta_decode(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst)
{
    size_t n = typesize > 0 ? len / typesize : 0, streams = n > 0 ? typesize : 0;
    b2k_bytes_fn sums = b2k_active()->byte_sums;
    for (size_t s = 0; s < streams; s++)
        sums(src + s * n, dst + s * n, n);
    if (dst != src)
        memcpy(dst + streams * n, src + streams * n, len - streams * n);
}
