/* The delta filter as C-Blosc2 applies it: every block is XORed against the chunk's
 * first block (dref), and that first block against itself shifted by one word. The word
 * is the typesize when it is 1, 2, 4 or 8, 8 for other multiples of 8, else 1 byte;
 * since XOR works bytewise this only decides which bytes are whole words (coded) and
 * which are the tail (len % word bytes, copied as they are). */
#include <string.h>

#include "shuffle/kernels.h"
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

void b2_delta_encode(const uint8_t *dref, size_t offset, size_t len, size_t typesize,
                     const uint8_t *src, uint8_t *dst)
{
    b2k_xor_fn xor_bytes = b2k_active()->xor_bytes;
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

static void delta_decode(const b2_kernels *k, const uint8_t *dref, size_t offset, size_t len,
                         size_t typesize, uint8_t *buf)
{
    b2k_xor_fn xor_bytes = k->xor_bytes;
    size_t w = word_size(typesize), coded = len - len % w;
    if (coded == 0)
        return;
    if (offset != 0) {
        xor_bytes(buf, buf, dref, coded);
    } else if (dref != buf) {
        xor_bytes(buf + w, buf + w, dref, coded - w);
    } else {
        k->prefix_xor(w, buf, coded);   /* block 0: each word against the decoded one before */
    }
}

void b2_delta_decode(const uint8_t *dref, size_t offset, size_t len, size_t typesize,
                     uint8_t *buf)
{
    delta_decode(b2k_active(), dref, offset, len, typesize, buf);
}

/* Any block but the first is XORed with dref as a whole, which the unshuffle's stores
 * can do on the way; the first needs its own output word by word. */
void b2k_unshuffle_delta_block(const b2_kernels *k, size_t typesize, size_t len,
                               const uint8_t *src, uint8_t *dst, const uint8_t *dref,
                               size_t offset, size_t delta_typesize)
{
    if (offset == 0) {
        b2k_unshuffle_block(k, typesize, len, src, dst);
        delta_decode(k, dst, 0, len, delta_typesize, dst);
    } else {
        size_t w = word_size(delta_typesize);
        b2k_unshuffle_xor_block(k, typesize, len, src, dst, dref, len - len % w);
    }
}

void b2_unshuffle_delta(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst,
                        const uint8_t *dref, size_t offset, size_t delta_typesize)
{
    b2k_unshuffle_delta_block(b2k_active(), typesize, len, src, dst, dref, offset,
                              delta_typesize);
}
