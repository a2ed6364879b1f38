/* The AVX2 kernel set: 32-byte vectors (see simd_kernels.h). Only these functions use
 * AVX2 instructions, so the library still runs where the CPU lacks them. */
#include <string.h>

#include "shuffle/kernels.h"

#ifdef B2K_HAVE_X86
#include <immintrin.h>

typedef __m256i V;
typedef __m128i H;
#define VBYTES 32
#define B2K_TARGET __attribute__((target("avx2")))
#define SIMD(name) avx2_##name
#define V_LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define V_STOREU(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define V_ZERO() _mm256_setzero_si256()
#define V_AND _mm256_and_si256
#define V_ADD8 _mm256_add_epi8
#define V_SUB8 _mm256_sub_epi8
#define V_XOR _mm256_xor_si256
#define V_SET1_64 _mm256_set1_epi64x
#define V_SRLI64 _mm256_srli_epi64
#define V_SLLI64 _mm256_slli_epi64
#define V_UNPACKLO8 _mm256_unpacklo_epi8
#define V_UNPACKHI8 _mm256_unpackhi_epi8
#define LOAD128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define STORE128(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define V_LOAD_LANES(p, q) \
    _mm256_inserti128_si256(_mm256_castsi128_si256(LOAD128(p)), LOAD128(q), 1)
#define H_XOR _mm_xor_si128
#define V_LANE0(v) _mm256_castsi256_si128(v)
#define V_LANE1(v) _mm256_extracti128_si256((v), 1)
#define V_OR _mm256_or_si256
#define V_SHUF32 _mm256_shuffle_epi32
#define V_SHUFHI16 _mm256_shufflehi_epi16
#define V_BSLLI _mm256_slli_si256
#define V_LANE1_BOTH(v) _mm256_permute2x128_si256((v), (v), 0x11)
#define V_LANE0_UP(v) _mm256_permute2x128_si256((v), (v), 0x08)
#define V_PICK_BYTES(v, t) _mm256_shuffle_epi8((v), _mm256_broadcastsi128_si256(LOAD128(t)))
#define V_JOIN_LANES(a, b, L) _mm256_permute2x128_si256((a), (b), (L) ? 0x31 : 0x20)

#include "shuffle/simd_kernels.h"

const b2_kernels b2k_avx2 = {
    .name = "avx2",
    .shuffle = avx2_shuffle,
    .unshuffle = avx2_unshuffle,
    .unshuffle_xor = avx2_unshuffle_xor,
    .bit_transpose = avx2_bit_transpose,
    .xor_bytes = avx2_xor,
    .prefix_xor = avx2_prefix_xor,
    .byte_differences = avx2_byte_differences,
    .byte_sums = avx2_byte_sums,
};
#endif
