/* The SSE2 kernel set: 16-byte vectors (see simd_kernels.h). */
#include <string.h>

#include "shuffle/kernels.h"

#ifdef B2K_HAVE_X86
#include <emmintrin.h>

typedef __m128i V;
typedef __m128i H;
#define VBYTES 16
#define B2K_TARGET __attribute__((target("sse2")))
#define SIMD(name) sse2_##name
#define V_LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define V_STOREU(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define V_ZERO() _mm_setzero_si128()
#define V_AND _mm_and_si128
#define V_ADD8 _mm_add_epi8
#define V_SUB8 _mm_sub_epi8
#define V_XOR _mm_xor_si128
#define V_OR _mm_or_si128
#define V_SHUF32 _mm_shuffle_epi32
#define V_SHUFHI16 _mm_shufflehi_epi16
#define V_BSLLI _mm_slli_si128
#define V_LANE1_BOTH(v) (v)
#define V_SET1_64 _mm_set1_epi64x
#define V_SRLI64 _mm_srli_epi64
#define V_SLLI64 _mm_slli_epi64
#define V_UNPACKLO8 _mm_unpacklo_epi8
#define V_UNPACKHI8 _mm_unpackhi_epi8
#define V_LOAD_LANES(p, q) V_LOADU(p)
#define LOAD128 V_LOADU
#define STORE128 V_STOREU
#define H_XOR V_XOR
#define V_LANE0(v) (v)

#include "shuffle/simd_kernels.h"

const b2_kernels b2k_sse2 = {
    .name = "sse2",
    .shuffle = sse2_shuffle,
    .unshuffle = sse2_unshuffle,
    .unshuffle_xor = sse2_unshuffle_xor,
    .bit_transpose = sse2_bit_transpose,
    .xor_bytes = sse2_xor,
    .prefix_xor = sse2_prefix_xor,
    .byte_differences = sse2_byte_differences,
    .byte_sums = sse2_byte_sums,
};
#endif
