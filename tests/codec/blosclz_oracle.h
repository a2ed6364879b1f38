/* A deliberately plain BloscLZ decoder for tests: one byte at a time, every check
 * spelled out, no speed tricks. The real decoder must agree with it on every input:
 * the same bytes, or both failing. Returns the bytes written or -1. */
#ifndef B2FS_TESTS_BLOSCLZ_ORACLE_H
#define B2FS_TESTS_BLOSCLZ_ORACLE_H

#include <stddef.h>
#include <stdint.h>

static inline long blosclz_oracle_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    size_t i = 0, o = 0;
    if (n == 0)
        return 0;
    unsigned c = in[i++] & 31u;
    for (;;) {
        if (c < 32) {
            for (unsigned k = 0; k <= c; k++) {
                if (i >= n || o >= cap)
                    return -1;
                out[o++] = in[i++];
            }
        } else {
            unsigned long long len = c >> 5;
            if (len == 7) {
                unsigned b;
                do {
                    if (i >= n)
                        return -1;
                    b = in[i++];
                    len += b;
                    if (len > cap)
                        return -1;
                } while (b == 255);
            }
            len += 2;
            if (i >= n)
                return -1;
            unsigned lo = in[i++];
            size_t dist;
            if (lo == 255 && (c & 31u) == 31) {
                if (n - i < 2)
                    return -1;
                dist = (size_t)in[i] * 256 + in[i + 1] + 8192;
                i += 2;
            } else {
                dist = (size_t)(c & 31u) * 256 + lo + 1;
            }
            if (dist > o || len > cap - o)
                return -1;
            for (unsigned long long k = 0; k < len; k++, o++)
                out[o] = out[o - dist];
        }
        if (i >= n)
            return (long)o;
        c = in[i++];
    }
}

#endif
