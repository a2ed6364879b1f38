/* Private to shuffle/ (and its tests): the kernel sets behind the one dispatch point.
 *
 * A kernel set supplies three primitives; the block rules (tails, the Blosc1 bitshuffle
 * layout, tiling) are written once in block.c on top of them, so every set gives the
 * same bytes by construction of the primitives alone.
 */
#ifndef B2FS_SHUFFLE_KERNELS_H
#define B2FS_SHUFFLE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Byte j of item i (of nitems) goes to dst[j * dst_stride + i]. */
typedef void (*b2k_shuffle_fn)(size_t typesize, size_t nitems, const uint8_t *src,
                               uint8_t *dst, size_t dst_stride);
/* Inverse: dst[i * typesize + j] = src[j * src_stride + i]. */
typedef void (*b2k_unshuffle_fn)(size_t typesize, size_t nitems, const uint8_t *src,
                                 size_t src_stride, uint8_t *dst);
/* The inverse with the delta filter's XOR folded in:
 * dst[i * typesize + j] = src[j * src_stride + i] ^ ref[i * typesize + j]. */
typedef void (*b2k_unshuffle_xor_fn)(size_t typesize, size_t nitems, const uint8_t *src,
                                     size_t src_stride, uint8_t *dst, const uint8_t *ref);
/* Transposes each 8-byte word as an 8x8 bit matrix: bit c of byte r goes to bit r of
 * byte c. src may equal dst. */
typedef void (*b2k_bit_transpose_fn)(size_t nwords, const uint8_t *src, uint8_t *dst);
/* dst = a ^ b over n bytes; dst may be a or b but must not otherwise overlap them. */
typedef void (*b2k_xor_fn)(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
/* In place, each w-byte word (w = 1, 2, 4 or 8) after the first XORed with the word
 * before it as already changed (a running XOR); n is a multiple of w. */
typedef void (*b2k_prefix_xor_fn)(size_t w, uint8_t *buf, size_t n);
/* Bytedelta on one stream: dst[i] = src[i] - src[i - 1] (dst[0] = src[0]), and its
 * inverse, the running byte sum dst[i] = dst[i - 1] + src[i]. src may equal dst for
 * the sum, not for the differences. */
typedef void (*b2k_bytes_fn)(const uint8_t *src, uint8_t *dst, size_t n);

typedef struct b2_kernels {
    const char *name;
    b2k_shuffle_fn shuffle;
    b2k_unshuffle_fn unshuffle;
    b2k_unshuffle_xor_fn unshuffle_xor;
    b2k_bit_transpose_fn bit_transpose;
    b2k_xor_fn xor_bytes;
    b2k_prefix_xor_fn prefix_xor;
    b2k_bytes_fn byte_differences, byte_sums;
} b2_kernels;

extern const b2_kernels b2k_generic;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define B2K_HAVE_X86 1
extern const b2_kernels b2k_sse2;
extern const b2_kernels b2k_avx2;
#endif

/* The generic primitives, also used by the SIMD sets for what their vectors leave over. */
void b2k_generic_shuffle(size_t typesize, size_t nitems, const uint8_t *src, uint8_t *dst,
                         size_t dst_stride);
void b2k_generic_unshuffle(size_t typesize, size_t nitems, const uint8_t *src,
                           size_t src_stride, uint8_t *dst);
void b2k_generic_unshuffle_xor(size_t typesize, size_t nitems, const uint8_t *src,
                               size_t src_stride, uint8_t *dst, const uint8_t *ref);
void b2k_generic_bit_transpose(size_t nwords, const uint8_t *src, uint8_t *dst);
void b2k_generic_xor(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n);
void b2k_generic_prefix_xor(size_t w, uint8_t *buf, size_t n);
void b2k_generic_byte_differences(const uint8_t *src, uint8_t *dst, size_t n);
void b2k_generic_byte_sums(const uint8_t *src, uint8_t *dst, size_t n);

/* The set named "generic", "sse2" or "avx2" if it is built in and this CPU runs it,
 * else NULL. */
const b2_kernels *b2k_by_name(const char *name);
/* The set the public functions use (chosen once, thread-safe). */
const b2_kernels *b2k_active(void);

/* One block through a given set, with the semantics of the public functions of the
 * same name in shuffle.h. */
void b2k_shuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                       const uint8_t *src, uint8_t *dst);
void b2k_unshuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                         const uint8_t *src, uint8_t *dst);
/* b2k_unshuffle_block, then the first nxor bytes (at most len) of dst XORed with ref
 * (which overlaps neither src nor dst), in one pass over most of the block. */
void b2k_unshuffle_xor_block(const b2_kernels *k, size_t typesize, size_t len,
                             const uint8_t *src, uint8_t *dst, const uint8_t *ref,
                             size_t nxor);
/* b2_unshuffle_delta of shuffle.h through a given set. */
void b2k_unshuffle_delta_block(const b2_kernels *k, size_t typesize, size_t len,
                               const uint8_t *src, uint8_t *dst, const uint8_t *dref,
                               size_t offset, size_t delta_typesize);
void b2k_bitshuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                          const uint8_t *src, uint8_t *dst, int blosc1_layout);
void b2k_bitunshuffle_block(const b2_kernels *k, size_t typesize, size_t len,
                            const uint8_t *src, uint8_t *dst, int blosc1_layout);

/* 8x8 bit-matrix transpose of one word (byte r = row r, bit c = column c), done as
 * three exchanges: single bits inside 2x2 blocks, then 2x2 blocks inside 4x4 blocks,
 * then 4x4 blocks. Each exchange swaps the bits under `mask` with those `shift` above. */
static inline uint64_t b2k_swap_bits(uint64_t x, uint64_t mask, unsigned shift)
{
    uint64_t t = (x ^ (x >> shift)) & mask;
    return x ^ t ^ (t << shift);
}

static inline uint64_t b2k_transpose8x8(uint64_t x)
{
    x = b2k_swap_bits(x, 0x00AA00AA00AA00AAull, 7);
    x = b2k_swap_bits(x, 0x0000CCCC0000CCCCull, 14);
    x = b2k_swap_bits(x, 0x00000000F0F0F0F0ull, 28);
    return x;
}

#endif
