/* The delta filter as C-Blosc2 applies it: every block is XORed against the chunk's
 * first block (dref), and that first block against itself shifted by one word. The word
 * is the typesize when it is 1, 2, 4 or 8, 8 for other multiples of 8, else 1 byte;
 * since XOR works bytewise this only decides which bytes are whole words (coded) and
 * which are the tail (len % word bytes, copied as they are). */
#include <string.h>

#include "shuffle/shuffle.h"

static size_t word_size(size_t typesize)
{
    switch (typesize) {
    case 2: case 4: case 8:
        return typesize;
    default:
        return typesize != 0 && typesize % 8 == 0 ? 8 : 1;
    }
}

/* dst = a ^ b over n bytes, 8 at a time; dst may be a. */
static void xor_bytes(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n)
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

void b2_delta_encode(const uint8_t *dref, size_t offset, size_t len, size_t typesize,
                     const uint8_t *src, uint8_t *dst)
{
    size_t w = word_size(typesize), coded = len - len % w;
    if (coded > 0 && offset == 0) {
        memcpy(dst, dref, w);
        xor_bytes(dst + w, src + w, dref, coded - w);
    } else {
        xor_bytes(dst, src, dref, coded);
    }
    if (len > coded)
        memcpy(dst + coded, src + coded, len - coded);
}

/* Block 0 decoded in place: each word XORed with the previous decoded one. */
#define RUNNING_XOR(T)                                              \
    do {                                                            \
        T prev, cur;                                                \
        memcpy(&prev, buf, sizeof prev);                            \
        for (size_t b = sizeof prev; b < coded; b += sizeof prev) { \
            memcpy(&cur, buf + b, sizeof cur);                      \
            cur ^= prev;                                            \
            memcpy(buf + b, &cur, sizeof cur);                      \
            prev = cur;                                             \
        }                                                           \
    } while (0)

void b2_delta_decode(const uint8_t *dref, size_t offset, size_t len, size_t typesize,
                     uint8_t *buf)
{
    size_t w = word_size(typesize), coded = len - len % w;
    if (coded == 0)
        return;
    if (offset != 0) {
        xor_bytes(buf, buf, dref, coded);
    } else if (dref != buf) {
        xor_bytes(buf + w, buf + w, dref, coded - w);
    } else if (w == 8) {
        RUNNING_XOR(uint64_t);
    } else if (w == 4) {
        RUNNING_XOR(uint32_t);
    } else if (w == 2) {
        RUNNING_XOR(uint16_t);
    } else {
        RUNNING_XOR(uint8_t);
    }
}
