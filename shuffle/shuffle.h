/* shuffle/: the filters Blosc applies to a block before and after the codec.
 *
 * Every function works on one block of `len` bytes, exactly as C-Blosc/C-Blosc2 do,
 * so the bytes match theirs. src and dst never overlap. None of them allocate or print.
 * The kernels behind b2_shuffle, b2_unshuffle, b2_bitshuffle and b2_bitunshuffle are
 * chosen once (generic, SSE2 or AVX2, by CPU features, or forced by the environment
 * variable B2FS_SIMD=generic|sse2|avx2); every choice gives the same bytes.
 */
#ifndef B2FS_SHUFFLE_H
#define B2FS_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/* Byte shuffle: byte j of item i goes to dst[j * (len / typesize) + i]; the
 * len % typesize tail bytes are copied unchanged to the end. typesize 1..255; a
 * typesize outside that range copies the block unchanged (here and in the bitshuffle). */
void b2_shuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst);
void b2_unshuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst);

/* Bitshuffle (the bitshuffle library's bit-plane transpose) of the largest whole
 * multiple of 8 items; the rest is copied unchanged. When `blosc1_layout` is set
 * (chunk format version 2, what c-blosc 1.x writes) a block whose item count is not a
 * multiple of 8 is copied unchanged as a whole instead. typesize 1..255. */
void b2_bitshuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst,
                   int blosc1_layout);
void b2_bitunshuffle(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst,
                     int blosc1_layout);

/* Delta filter. `dref` is the chunk's first block (original bytes on encode, already
 * decoded bytes on decode) and `offset` is this block's offset in the chunk: block 0
 * is coded against itself, the others against dref. Decode works in place; for block
 * 0 dref is buf itself (as C-Blosc2 calls it), otherwise dref must not overlap buf.
 * Bytes past the last whole word (typesize 2, 4, 8, or 8 for other multiples of 8,
 * else 1 byte) are left as they are. */
void b2_delta_encode(const uint8_t *dref, size_t offset, size_t len, size_t typesize,
                     const uint8_t *src, uint8_t *dst);
void b2_delta_decode(const uint8_t *dref, size_t offset, size_t len, size_t typesize,
                     uint8_t *buf);

/* b2_unshuffle(typesize, len, src, dst) followed by b2_delta_decode(dref, offset, len,
 * delta_typesize, dst), mostly in one pass. Block 0 (offset 0) is its own reference
 * and dref is not read; otherwise dref overlaps neither src nor dst. */
void b2_unshuffle_delta(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst,
                        const uint8_t *dref, size_t offset, size_t delta_typesize);

/* Truncate precision (lossy, encode only; decoding is the identity): keeps `prec_bits`
 * mantissa bits of each float32 (typesize 4) or float64 (typesize 8), zeroing the rest;
 * a negative value removes that many bits instead, as C-Blosc2 reads filters_meta
 * (pass the meta byte as (int8_t)meta). Tail bytes that are not a whole item are copied.
 * Returns 0, or -1 for an unsupported typesize or a bit count out of range. */
int b2_trunc_prec(int prec_bits, size_t typesize, size_t len, const uint8_t *src,
                  uint8_t *dst);

/* int_trunc (C-Blosc2's filter 36; lossy, encode only): keeps `prec_bits` high bits of
 * each unsigned integer of typesize 1, 2, 4 or 8 bytes (a negative value removes that
 * many low bits instead), never zeroing all of them; tail bytes are copied. Returns 0,
 * or -1 for another typesize or a bit count out of range. */
int b2_int_trunc(int prec_bits, size_t typesize, size_t len, const uint8_t *src,
                 uint8_t *dst);

/* Bytedelta (C-Blosc2's filter 35): the block as typesize streams of len / typesize
 * bytes, each byte stored as its difference to the one before it in its stream (the
 * first as it is); the len % typesize tail bytes are copied. Decode may work in place
 * (src == dst). typesize 0 copies the block. */
void b2_bytedelta_encode(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst);
void b2_bytedelta_decode(size_t typesize, size_t len, const uint8_t *src, uint8_t *dst);

/* Name of the kernel set in use: "generic", "sse2" or "avx2". */
const char *b2_shuffle_impl(void);

#endif
