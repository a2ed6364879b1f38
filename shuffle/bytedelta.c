/* Bytedelta, C-Blosc2's filter 35 (a plugin it registers by default): a block is taken
 * as typesize streams of len / typesize bytes, one after another (the byte planes a
 * shuffle before it leaves), and each byte of a stream is stored as its difference to
 * the byte before it in the same stream, the first byte as it is. The len % typesize
 * bytes after the last stream are copied. */
#include <string.h>

#include "shuffle/shuffle.h"

void b2_bytedelta_encode(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst)
{
    size_t n = typesize > 0 ? len / typesize : 0, streams = n > 0 ? typesize : 0;
    for (size_t s = 0; s < streams; s++) {
        const uint8_t *in = src + s * n;
        uint8_t *out = dst + s * n;
        out[0] = in[0];
        for (size_t i = 1; i < n; i++)
            out[i] = (uint8_t)(in[i] - in[i - 1]);
    }
    memcpy(dst + streams * n, src + streams * n, len - streams * n);
}

void b2_bytedelta_decode(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst)
{
    size_t n = typesize > 0 ? len / typesize : 0, streams = n > 0 ? typesize : 0;
    for (size_t s = 0; s < streams; s++) {
        const uint8_t *in = src + s * n;
        uint8_t *out = dst + s * n;
        uint8_t acc = 0;
        for (size_t i = 0; i < n; i++)
            out[i] = acc = (uint8_t)(acc + in[i]);
    }
    if (dst != src)
        memcpy(dst + streams * n, src + streams * n, len - streams * n);
}
