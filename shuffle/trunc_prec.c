/* Truncate precision as C-Blosc2 does it: zero the low mantissa bits of each float32 or
 * float64, never all of them (that would turn NaN into infinity). */
#include <string.h>

#include "shuffle/shuffle.h"

/* Bits to zero for a mantissa of `mant` bits, or -1 when prec_bits is out of range. */
static int zeroed_bits(int prec_bits, int mant)
{
    if (prec_bits > mant || prec_bits < -mant)
        return -1;
    int z = prec_bits >= 0 ? mant - prec_bits : -prec_bits;
    return z < mant ? z : -1;
}

int b2_trunc_prec(int prec_bits, size_t typesize, size_t len, const uint8_t *src,
                  uint8_t *dst)
{
    size_t coded = len - (typesize ? len % typesize : 0);
    if (typesize == 4) {
        int z = zeroed_bits(prec_bits, 23);
        if (z < 0)
            return -1;
        uint32_t mask = ~(((uint32_t)1 << z) - 1), v;
        for (size_t b = 0; b < coded; b += 4) {
            memcpy(&v, src + b, 4);
            v &= mask;
            memcpy(dst + b, &v, 4);
        }
    } else if (typesize == 8) {
        int z = zeroed_bits(prec_bits, 52);
        if (z < 0)
            return -1;
        uint64_t mask = ~(((uint64_t)1 << z) - 1), v;
        for (size_t b = 0; b < coded; b += 8) {
            memcpy(&v, src + b, 8);
            v &= mask;
            memcpy(dst + b, &v, 8);
        }
    } else {
        return -1;
    }
    if (len > coded)
        memcpy(dst + coded, src + coded, len - coded);
    return 0;
}
