/* BloscLZ stream decoder.
 *
 * A stream is a sequence of instructions; the first byte's top three bits are a format
 * marker and its low five bits always start a literal run.
 *   byte < 0x20          literal run: the next (byte + 1) bytes are copied as they are
 *   byte >= 0x20         match: length code L = byte >> 5 (7 means "more length bytes
 *                        follow, each added, until one is not 255"), distance high
 *                        bits H = byte & 31, then one distance low byte D.
 *                        The match copies L + 2 bytes from (H * 256 + D + 1) back;
 *                        H = 31 and D = 255 instead means two big-endian bytes E
 *                        follow and the distance is E + 8192.
 * Every length and distance is checked against what is left of the input and output,
 * so a hostile stream can only make the call fail. Copies go in wide fixed-size steps
 * while there is slack in both buffers, byte by byte near their ends.
 */
#include "codec/blosclz.h"
#include "codec/blosclz_format.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Fixed-size moves the compiler turns into single loads and stores. */
static inline void move16(uint8_t *d, const uint8_t *s) { memcpy(d, s, 16); }
static inline void move32(uint8_t *d, const uint8_t *s) { memcpy(d, s, 32); }

/* Copies len bytes from op - dist to op with wide steps, where the regions may overlap
 * (dist < len repeats the last dist bytes). The steps may write up to 31 bytes past
 * op + len: the caller makes sure that much room is there. */
static inline void copy_match_wide(uint8_t *op, size_t dist, size_t len)
{
    const uint8_t *ref = op - dist;
    uint8_t *end = op + len;

    if (dist >= 32) {
        do {
            move32(op, ref);
            op += 32;
            ref += 32;
        } while (op < end);
        return;
    }
    if (dist >= 16) {
        do {
            move16(op, ref);
            op += 16;
            ref += 16;
        } while (op < end);
        return;
    }
    if (dist == 1) {
        memset(op, *ref, len);
        return;
    }
    /* Short period: the repeating bytes go into one 16-byte pattern, stored again and
     * again, each time advanced by the largest multiple of dist that fits in 16. Reading
     * the pattern once keeps the loop free of loads from bytes just stored. */
    uint8_t pat[16];
    memcpy(pat, ref, dist);
    for (size_t i = dist; i < 16; i++)
        pat[i] = pat[i - dist];
    size_t step = 16 / dist * dist;
    do {
        move16(op, pat);
        op += step;
    } while (op < end);
}

/* Copies a match of len bytes from dist back, with room bytes writable at op
 * (room >= len): wide steps while they stay clear of the end, then byte by byte. */
static inline void copy_match(uint8_t *op, size_t dist, size_t len, size_t room)
{
    size_t wide = room >= len + 32 ? len : room > 32 ? room - 32 : 0;
    if (wide > 0) {
        copy_match_wide(op, dist, wide);
        op += wide;
        len -= wide;
    }
    const uint8_t *ref = op - dist;
    for (size_t i = 0; i < len; i++)
        op[i] = ref[i];
}

int blosclz_decompress(const void *src, int srclen, void *dst, int dstcap)
{
    if (srclen < 0 || dstcap < 0 || (srclen > 0 && !src) || (dstcap > 0 && !dst))
        return BLZ_ERR_PARAM;
    if (srclen == 0)
        return 0;
    if (dstcap == 0)   /* a stream always starts with at least one literal byte */
        return BLZ_ERR_OVERFLOW;

    const uint8_t *ip = src;
    const uint8_t *const ip_end = ip + srclen;
    uint8_t *const obase = dst;
    uint8_t *op = obase;
    uint8_t *const op_end = op + dstcap;
    unsigned ctrl = *ip++ & 31u;

    for (;;) {
        if (ctrl < 32) {
            size_t n = ctrl + 1;
            if ((size_t)(ip_end - ip) < n)
                return BLZ_ERR_TRUNCATED;
            if ((size_t)(op_end - op) < n)
                return BLZ_ERR_OVERFLOW;
            if (ip_end - ip >= 32 && op_end - op >= 32)
                move32(op, ip);
            else
                memcpy(op, ip, n);
            op += n;
            ip += n;
        } else {
            size_t len = ctrl >> 5;
            size_t room = (size_t)(op_end - op);
            if (len == 7) {
                unsigned b;
                do {
                    if (ip >= ip_end)
                        return BLZ_ERR_TRUNCATED;
                    b = *ip++;
                    len += b;
                    if (len > room)
                        return BLZ_ERR_OVERFLOW;
                } while (b == 255);
            }
            len += 2;
            if (ip >= ip_end)
                return BLZ_ERR_TRUNCATED;
            unsigned lo = *ip++;
            size_t dist;
            if (lo == 255 && (ctrl & 31u) == 31) {
                if (ip_end - ip < 2)
                    return BLZ_ERR_TRUNCATED;
                dist = ((size_t)ip[0] << 8 | ip[1]) + BLZ_FAR_BASE;
                ip += 2;
            } else {
                dist = ((size_t)(ctrl & 31u) << 8 | lo) + 1;
            }
            if (len > room)
                return BLZ_ERR_OVERFLOW;
            if (dist > (size_t)(op - obase))
                return BLZ_ERR_DISTANCE;
            copy_match(op, dist, len, room);
            op += len;
        }
        if (ip >= ip_end)
            break;
        ctrl = *ip++;
    }
    return (int)(op - obase);
}
