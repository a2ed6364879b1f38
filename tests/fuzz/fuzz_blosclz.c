/* libFuzzer target for the BloscLZ decoder alone.
 * Input: 2 bytes output capacity (little endian, times 4), 1 byte clevel, then a stream.
 * The stream is decoded into a heap buffer of exactly that capacity (so AddressSanitizer
 * sees any write past it) and must give what the plain oracle decoder gives, or fail
 * where it fails. The stream bytes are also compressed and decoded back as a round trip
 * of the encoder. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/blosclz.h"
#include "tests/codec/blosclz_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > (1u << 20))
        return 0;
    size_t cap = ((size_t)data[0] | (size_t)data[1] << 8) * 4;
    int clevel = 1 + data[2] % 9;
    const uint8_t *s = data + 3;
    size_t n = size - 3;

    uint8_t *got = malloc(cap ? cap : 1), *want = malloc(cap ? cap : 1);
    if (!got || !want)
        abort();
    int r = blosclz_decompress(s, (int)n, got, (int)cap);
    long w = blosclz_oracle_decode(s, n, want, cap);
    if ((r < 0) != (w < 0) || (r >= 0 && (r != w || memcmp(got, want, (size_t)r) != 0)))
        abort();
    free(got);
    free(want);

    size_t ccap = n + n / 16 + 66;
    uint8_t *c = malloc(ccap), *back = malloc(n ? n : 1);
    if (!c || !back)
        abort();
    int m = blosclz_compress(clevel, s, (int)n, c, (int)ccap);
    if (m < 0 || (size_t)m > ccap)
        abort();
    if (m > 0 && (blosclz_decompress(c, m, back, (int)n) != (int)n || memcmp(back, s, n) != 0))
        abort();
    free(c);
    free(back);
    return 0;
}
