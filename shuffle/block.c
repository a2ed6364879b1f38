/* Blosc's rules for one block, on top of any kernel set: what happens to the bytes
 * past the last whole item, and how bitshuffle is built from the primitives. */
#include <string.h>

#include "shuffle/kernels.h"

/* Typesizes a Blosc header can hold; anything else is left as it is. */
static int typesize_ok(size_t typesize)
{
    return typesize >= 1 && typesize <= 255;
}

/* Copies bytes [from, len) unchanged (memcpy must not see NULL, even for 0 bytes). */
static void copy_rest(size_t from, size_t len, const uint8_t *src, uint8_t *dst)
{
    if (len > from)
        memcpy(dst + from, src + from, len - from);
}

/* Byte shuffle (or its inverse) of the whole items; a shorter block or typesize 1 is
 * a plain copy, and the bytes past the last whole item stay where they are. */
static void byte_transpose(const b2_kernels *k, size_t typesize, size_t len,
                           const uint8_t *src, uint8_t *dst, int inverse)
{
    size_t n = typesize_ok(typesize) && typesize > 1 ? len / typesize : 0;
    if (n > 0 && inverse)
        k->unshuffle(typesize, n, src, n, dst);
    else if (n > 0)
        k->shuffle(typesize, n, src, dst, n);
    copy_rest(n * typesize, len, src, dst);
}

void b2k_shuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                       const uint8_t *src, uint8_t *dst)
{
    byte_transpose(k, typesize, len, src, dst, 0);
}

void b2k_unshuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                         const uint8_t *src, uint8_t *dst)
{
    byte_transpose(k, typesize, len, src, dst, 1);
}

void b2k_unshuffle_xor_block(const b2_kernels *k, size_t typesize, size_t len,
                             const uint8_t *src, uint8_t *dst, const uint8_t *ref,
                             size_t nxor)
{
    size_t n = typesize_ok(typesize) && typesize > 1 ? len / typesize : 0;
    size_t fused = n > 0 && nxor / typesize < n ? nxor / typesize : n;
    if (fused > 0)
        k->unshuffle_xor(typesize, fused, src, n, dst, ref);
    if (n > fused)
        k->unshuffle(typesize, n - fused, src + fused, n, dst + fused * typesize);
    copy_rest(n * typesize, len, src, dst);
    size_t rest = fused * typesize;
    if (nxor > rest)
        k->xor_bytes(dst + rest, dst + rest, ref + rest, nxor - rest);
}

/* Bitshuffle of n items (n a multiple of 8) is, in bits: bit b of byte j of item i goes
 * to bit (i % 8) of byte (8 * j + b) * (n / 8) + i / 8. It is done a tile of items at a
 * time in a buffer that stays in L1 cache:
 *   1. byte shuffle the tile: row j holds byte j of each item;
 *   2. transpose each 8-byte word of the rows as an 8x8 bit matrix: byte b of word p of
 *      row j now holds bit b of byte j of items 8p..8p+7;
 *   3. byte shuffle each row as 8-byte items, straight into the 8 output bit rows. */
enum { TILE_BYTES = 16384 };

static size_t tile_items(size_t typesize)
{
    return (TILE_BYTES / typesize) & ~(size_t)7;
}

static void bitshuffle_items(const b2_kernels *k, size_t ts, size_t n, const uint8_t *src,
                             uint8_t *dst)
{
    _Alignas(64) uint8_t tile[TILE_BYTES];
    size_t rowlen = n / 8, step = tile_items(ts);
    for (size_t i0 = 0; i0 < n; i0 += step) {
        size_t m = n - i0 < step ? n - i0 : step;
        const uint8_t *s = src + i0 * ts;
        if (ts == 1) {
            k->bit_transpose(m / 8, s, tile);
        } else {
            k->shuffle(ts, m, s, tile, m);
            k->bit_transpose(ts * m / 8, tile, tile);
        }
        for (size_t j = 0; j < ts; j++)
            k->shuffle(8, m / 8, tile + j * m, dst + 8 * j * rowlen + i0 / 8, rowlen);
    }
}

static void bitunshuffle_items(const b2_kernels *k, size_t ts, size_t n,
                               const uint8_t *src, uint8_t *dst)
{
    _Alignas(64) uint8_t tile[TILE_BYTES];
    size_t rowlen = n / 8, step = tile_items(ts);
    for (size_t i0 = 0; i0 < n; i0 += step) {
        size_t m = n - i0 < step ? n - i0 : step;
        for (size_t j = 0; j < ts; j++)
            k->unshuffle(8, m / 8, src + 8 * j * rowlen + i0 / 8, rowlen, tile + j * m);
        if (ts == 1) {
            k->bit_transpose(m / 8, tile, dst + i0);
        } else {
            k->bit_transpose(ts * m / 8, tile, tile);
            k->unshuffle(ts, m, tile, m, dst + i0 * ts);
        }
    }
}

/* How many items get transposed; 0 means the whole block is copied. */
static size_t bit_items(size_t typesize, size_t len, int blosc1_layout)
{
    if (!typesize_ok(typesize))
        return 0;
    size_t n = len / typesize;
    if (blosc1_layout && n % 8 != 0)
        return 0;
    return n - n % 8;
}

void b2k_bitshuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                          const uint8_t *src, uint8_t *dst, int blosc1_layout)
{
    size_t n = bit_items(typesize, len, blosc1_layout);
    if (n > 0)
        bitshuffle_items(k, typesize, n, src, dst);
    copy_rest(n * typesize, len, src, dst);
}

void b2k_bitunshuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                            const uint8_t *src, uint8_t *dst, int blosc1_layout)
{
    size_t n = bit_items(typesize, len, blosc1_layout);
    if (n > 0)
        bitunshuffle_items(k, typesize, n, src, dst);
    copy_rest(n * typesize, len, src, dst);
}
