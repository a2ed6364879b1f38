/* Truncation filters as C-Blosc2 applies them (lossy, encode only; decoding is the
 * identity). Truncate precision (filter 4) zeroes low mantissa bits of each float32 or
 * float64, never all of them (that would turn NaN into infinity); int_trunc (filter 36,
 * a plugin) zeroes low bits of each unsigned integer of 1, 2, 4 or 8 bytes. */
#include <string.h>

#include "shuffle/shuffle.h"

/* Bits to zero out of `bits` for prec_bits (kept when >= 0, removed when < 0), or -1
 * when prec_bits is out of range or would zero them all. */
static int zeroed_bits(int prec_bits, int bits)
{
    if (prec_bits > bits || prec_bits < -bits)
        return -1;
    int z = prec_bits >= 0 ? bits - prec_bits : -prec_bits;
    return z < bits ? z : -1;
}

#define MASK_ITEMS(T)                                  \
    for (size_t b = 0; b < coded; b += sizeof(T)) {    \
        T v;                                           \
        memcpy(&v, src + b, sizeof v);                 \
        v &= (T)mask;                                  \
        memcpy(dst + b, &v, sizeof v);                 \
    }

/* Each whole item (typesize 1, 2, 4 or 8) ANDed with the low bytes of mask; the bytes
 * after the last whole item are copied. */
static void mask_items(size_t typesize, uint64_t mask, size_t len, const uint8_t *src,
                       uint8_t *dst)
{
    size_t coded = len - len % typesize;
    switch (typesize) {
    case 1: MASK_ITEMS(uint8_t); break;
    case 2: MASK_ITEMS(uint16_t); break;
    case 4: MASK_ITEMS(uint32_t); break;
    default: MASK_ITEMS(uint64_t); break;
    }
    if (len > coded)
        memcpy(dst + coded, src + coded, len - coded);
}

int b2_trunc_prec(int prec_bits, size_t typesize, size_t len, const uint8_t *src,
                  uint8_t *dst)
{
    if (typesize != 4 && typesize != 8)
        return -1;
    int z = zeroed_bits(prec_bits, typesize == 4 ? 23 : 52);
    if (z < 0)
        return -1;
    mask_items(typesize, ~(((uint64_t)1 << z) - 1), len, src, dst);
    return 0;
}

int b2_int_trunc(int prec_bits, size_t typesize, size_t len, const uint8_t *src,
                 uint8_t *dst)
{
    if (typesize != 1 && typesize != 2 && typesize != 4 && typesize != 8)
        return -1;
    int z = zeroed_bits(prec_bits, 8 * (int)typesize);
    if (z < 0)
        return -1;
    mask_items(typesize, ~(((uint64_t)1 << z) - 1), len, src, dst);
    return 0;
}
