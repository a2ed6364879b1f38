/* The portable kernel set: plain C, any CPU, any byte order. */
#include <string.h>

#include "shuffle/kernels.h"

/* Fixed typesizes get their own loop so the compiler can unroll the inner one. Items
 * go 64 at a time, so that each row is written (or read) 64 bytes in a row while the
 * items themselves stay in L1. */
#define B2K_INLINE static inline __attribute__((always_inline))
enum { RUN = 64 };

B2K_INLINE void shuffle_items(size_t ts, size_t n, const uint8_t *src, uint8_t *dst,
                              size_t stride)
{
    for (size_t i0 = 0; i0 < n; i0 += RUN) {
        size_t end = n - i0 < RUN ? n : i0 + RUN;
        for (size_t j = 0; j < ts; j++)
            for (size_t i = i0; i < end; i++)
                dst[j * stride + i] = src[i * ts + j];
    }
}

B2K_INLINE void unshuffle_items(size_t ts, size_t n, const uint8_t *src, size_t stride,
                                uint8_t *dst)
{
    for (size_t i0 = 0; i0 < n; i0 += RUN) {
        size_t end = n - i0 < RUN ? n : i0 + RUN;
        for (size_t j = 0; j < ts; j++)
            for (size_t i = i0; i < end; i++)
                dst[i * ts + j] = src[j * stride + i];
    }
}

void b2k_generic_shuffle(size_t typesize, size_t nitems, const uint8_t *src, uint8_t *dst,
                         size_t dst_stride)
{
    switch (typesize) {
    case 2: shuffle_items(2, nitems, src, dst, dst_stride); break;
    case 4: shuffle_items(4, nitems, src, dst, dst_stride); break;
    case 8: shuffle_items(8, nitems, src, dst, dst_stride); break;
    case 16: shuffle_items(16, nitems, src, dst, dst_stride); break;
    default: shuffle_items(typesize, nitems, src, dst, dst_stride); break;
    }
}

void b2k_generic_unshuffle(size_t typesize, size_t nitems, const uint8_t *src,
                           size_t src_stride, uint8_t *dst)
{
    switch (typesize) {
    case 2: unshuffle_items(2, nitems, src, src_stride, dst); break;
    case 4: unshuffle_items(4, nitems, src, src_stride, dst); break;
    case 8: unshuffle_items(8, nitems, src, src_stride, dst); break;
    case 16: unshuffle_items(16, nitems, src, src_stride, dst); break;
    default: unshuffle_items(typesize, nitems, src, src_stride, dst); break;
    }
}

void b2k_generic_xor(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        x ^= y;
        memcpy(dst + i, &x, 8);
    }
    for (; i < n; i++)
        dst[i] = a[i] ^ b[i];
}

#define RUNNING_XOR(T)                                       \
    do {                                                     \
        T prev, cur;                                         \
        memcpy(&prev, buf, sizeof prev);                     \
        for (size_t b = sizeof prev; b < n; b += sizeof cur) { \
            memcpy(&cur, buf + b, sizeof cur);               \
            cur ^= prev;                                     \
            memcpy(buf + b, &cur, sizeof cur);               \
            prev = cur;                                      \
        }                                                    \
    } while (0)

void b2k_generic_prefix_xor(size_t w, uint8_t *buf, size_t n)
{
    if (n < w)
        return;
    switch (w) {
    case 1: RUNNING_XOR(uint8_t); break;
    case 2: RUNNING_XOR(uint16_t); break;
    case 4: RUNNING_XOR(uint32_t); break;
    default: RUNNING_XOR(uint64_t); break;
    }
}

void b2k_generic_byte_differences(const uint8_t *src, uint8_t *dst, size_t n)
{
    for (size_t i = n; i-- > 1;)
        dst[i] = (uint8_t)(src[i] - src[i - 1]);
    if (n > 0)
        dst[0] = src[0];
}

void b2k_generic_byte_sums(const uint8_t *src, uint8_t *dst, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        dst[i] = acc = (uint8_t)(acc + src[i]);
}

void b2k_generic_unshuffle_xor(size_t typesize, size_t nitems, const uint8_t *src,
                               size_t src_stride, uint8_t *dst, const uint8_t *ref)
{
    b2k_generic_unshuffle(typesize, nitems, src, src_stride, dst);
    b2k_generic_xor(dst, dst, ref, typesize * nitems);
}

/* Byte r of the word is bit-matrix row r whatever the host byte order. */
static uint64_t load_rows(const uint8_t *p)
{
    uint64_t x = 0;
    for (unsigned r = 0; r < 8; r++)
        x |= (uint64_t)p[r] << (8 * r);
    return x;
}

static void store_rows(uint8_t *p, uint64_t x)
{
    for (unsigned r = 0; r < 8; r++)
        p[r] = (uint8_t)(x >> (8 * r));
}

void b2k_generic_bit_transpose(size_t nwords, const uint8_t *src, uint8_t *dst)
{
    for (size_t w = 0; w < nwords; w++)
        store_rows(dst + 8 * w, b2k_transpose8x8(load_rows(src + 8 * w)));
}

const b2_kernels b2k_generic = {
    .name = "generic",
    .shuffle = b2k_generic_shuffle,
    .unshuffle = b2k_generic_unshuffle,
    .unshuffle_xor = b2k_generic_unshuffle_xor,
    .bit_transpose = b2k_generic_bit_transpose,
    .xor_bytes = b2k_generic_xor,
    .prefix_xor = b2k_generic_prefix_xor,
    .byte_differences = b2k_generic_byte_differences,
    .byte_sums = b2k_generic_byte_sums,
};
