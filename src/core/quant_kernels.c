/* ggml's weight types' kernel sets: quant_kernels.inc built for the baseline
 * (SSE2, NEON or plain C), AVX2 with FMA and AVX-512, as lm_kernels.c builds
 * its own, and the set matching lm_kernels' choice. The dequantization gives
 * ggml's floats in every set; the products' sums are fused in avx2 and
 * avx512 (the same floats) and rounded apart in base. */
#include "quant_kernels.h"
#include "attnviz/quant.h"
#include "attnviz/runtime.h"

#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* ggml's dequantization rounds products and sums apart */
#endif

#define VLD(p) ((VF) * (const VFU *)(p))
#define VST(p, v) (*(VFU *)(p) = (VF)(v))

/* block_q3_K's sixteen 6-bit scales (before ggml's − 32) from its 12 bytes:
 * scale s takes the low 4 bits from scales[s % 8]'s nibble s / 8 and the
 * high 2 from scales[8 + s % 4]'s pair s / 4; four at a time, as ggml's
 * kmask shuffle of little-endian words does it. Integer work only. */
static inline void q3_scales(const uint8_t *in, uint8_t sc[16])
{
    uint32_t a[3];
    for (int w = 0; w < 3; w++)
        a[w] = (uint32_t)in[4 * w] | (uint32_t)in[4 * w + 1] << 8 | (uint32_t)in[4 * w + 2] << 16 |
               (uint32_t)in[4 * w + 3] << 24;
    uint32_t out[4] = {(a[0] & 0x0F0F0F0Fu) | ((a[2] >> 0) & 0x03030303u) << 4,
                       (a[1] & 0x0F0F0F0Fu) | ((a[2] >> 2) & 0x03030303u) << 4,
                       ((a[0] >> 4) & 0x0F0F0F0Fu) | ((a[2] >> 4) & 0x03030303u) << 4,
                       ((a[1] >> 4) & 0x0F0F0F0Fu) | ((a[2] >> 6) & 0x03030303u) << 4};
    for (int w = 0; w < 4; w++)
        for (int k = 0; k < 4; k++)
            sc[4 * w + k] = (uint8_t)(out[w] >> (8 * k));
}

#define KN(name) name##_base
#define KTARGET
#define VW 4
#define NA 4
#define QACC 8
typedef float qf4 __attribute__((vector_size(16)));
typedef float qf4u __attribute__((vector_size(16), aligned(4), may_alias));
typedef int32_t qi4 __attribute__((vector_size(16)));
typedef uint32_t qu4 __attribute__((vector_size(16)));
#ifdef __SSE2__
#include <emmintrin.h>
/* 4 bytes → 4 int32 with SSE2's unpacks (the sign: moved to the top, shifted back) */
static inline qi4 ub_sse2(const uint8_t *p)
{
    int32_t u;
    memcpy(&u, p, 4);
    __m128i z = _mm_setzero_si128(), v = _mm_cvtsi32_si128(u);
    return (qi4)_mm_unpacklo_epi16(_mm_unpacklo_epi8(v, z), z);
}
static inline qi4 sb_sse2(const uint8_t *p)
{
    int32_t u;
    memcpy(&u, p, 4);
    __m128i v = _mm_cvtsi32_si128(u);
    v = _mm_unpacklo_epi16(_mm_unpacklo_epi8(v, v), _mm_unpacklo_epi8(v, v));
    return (qi4)_mm_srai_epi32(v, 24);
}
static inline qi4 uh_sse2(const uint8_t *p)
{
    return (qi4)_mm_unpacklo_epi16(_mm_loadl_epi64((const __m128i *)p), _mm_setzero_si128());
}
#define UB(p) ub_sse2(p)
#define SB(p) sb_sse2(p)
#define UH(p) uh_sse2(p)
#else
typedef uint8_t qb4u __attribute__((vector_size(4), aligned(1), may_alias));
typedef int8_t qs4u __attribute__((vector_size(4), aligned(1), may_alias));
typedef uint16_t qh4u __attribute__((vector_size(8), aligned(1), may_alias));
#define UB(p) __builtin_convertvector(*(const qb4u *)(p), qi4)
#define SB(p) __builtin_convertvector(*(const qs4u *)(p), qi4)
#define UH(p) __builtin_convertvector(*(const qh4u *)(p), qi4)
#endif
#define VF qf4
#define VFU qf4u
#define VI qi4
#define VU qu4
#define VFMA(a, b, c) ((a) * (b) + (c))
#define SFMA(a, b, c) ((a) * (b) + (c))
#include "quant_kernels.inc"
#undef KN
#undef KTARGET
#undef VW
#undef NA
#undef QACC
#undef VF
#undef VFU
#undef VI
#undef VU
#undef UB
#undef SB
#undef UH
#undef VFMA
#undef SFMA

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QUANT_HAVE_AVX2 1
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi" /* the vectors never cross a call boundary */
#endif
#define SFMA(a, b, c) __builtin_fmaf((a), (b), (c))

#define KN(name) name##_avx2
#define KTARGET __attribute__((target("avx2,fma")))
#define VW 8
#define NA 2
#define QACC 8
typedef float qf8 __attribute__((vector_size(32)));
typedef float qf8u __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t qi8 __attribute__((vector_size(32)));
typedef uint32_t qu8 __attribute__((vector_size(32)));
#define UB(p) ((qi8)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p))))
#define SB(p) ((qi8)_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(p))))
#define UH(p) ((qi8)_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))))
#define VF qf8
#define VFU qf8u
#define VI qi8
#define VU qu8
#define VFMA(a, b, c) ((qf8)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#include "quant_kernels.inc"
#undef KN
#undef KTARGET
#undef VW
#undef NA
#undef QACC
#undef VF
#undef VFU
#undef VI
#undef VU
#undef UB
#undef SB
#undef UH
#undef VFMA

#define KN(name) name##_avx512
#define KTARGET __attribute__((target("avx512f,fma")))
#define VW 16
#define NA 1
#define QACC 16
typedef float qf16 __attribute__((vector_size(64)));
typedef float qf16u __attribute__((vector_size(64), aligned(4), may_alias));
typedef int32_t qi16 __attribute__((vector_size(64)));
typedef uint32_t qu16 __attribute__((vector_size(64)));
#define UB(p) ((qi16)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p))))
#define SB(p) ((qi16)_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(p))))
#define UH(p) ((qi16)_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))))
#define VF qf16
#define VFU qf16u
#define VI qi16
#define VU qu16
#define VFMA(a, b, c) ((qf16)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define QPERM(idx, table) ((qf16)_mm512_permutexvar_ps((__m512i)(idx), (__m512)(table)))
#include "quant_kernels.inc"
#endif

#define SET(s)                                                                                     \
    {                                                                                              \
        #s,                                                                                        \
            {[QT_F32] = deq_f32_##s, [QT_F16] = deq_f16_##s, [QT_Q4_0] = deq_Q4_0_##s,             \
             [QT_Q4_1] = deq_Q4_1_##s, [QT_Q5_0] = deq_Q5_0_##s, [QT_Q5_1] = deq_Q5_1_##s,         \
             [QT_Q8_0] = deq_Q8_0_##s, [QT_Q2_K] = deq_Q2_K_##s, [QT_Q3_K] = deq_Q3_K_##s,         \
             [QT_Q4_K] = deq_Q4_K_##s, [QT_Q5_K] = deq_Q5_K_##s, [QT_Q6_K] = deq_Q6_K_##s,         \
             [QT_BF16] = deq_bf16_##s},                                                            \
            {[QT_Q4_0] = dot_Q4_0_##s, [QT_Q4_1] = dot_Q4_1_##s, [QT_Q5_0] = dot_Q5_0_##s,         \
             [QT_Q5_1] = dot_Q5_1_##s, [QT_Q8_0] = dot_Q8_0_##s, [QT_Q2_K] = dot_Q2_K_##s,         \
             [QT_Q3_K] = dot_Q3_K_##s, [QT_Q4_K] = dot_Q4_K_##s, [QT_Q5_K] = dot_Q5_K_##s,         \
             [QT_Q6_K] = dot_Q6_K_##s},                                                            \
            linear_##s                                                                             \
    }

static const QuantKernels sets[] = {
    SET(base),
#ifdef QUANT_HAVE_AVX2
    SET(avx2),
    SET(avx512),
#endif
};
enum { N_SETS = sizeof sets / sizeof sets[0] };

const QuantKernels *quant_kernel_set(void)
{
    const char *name = lm_kernels(); /* one of these names: lm_kernels.c's sets */
    for (int s = N_SETS - 1; s > 0; s--)
        if (strcmp(sets[s].name, name) == 0)
            return &sets[s];
    return &sets[0];
}
