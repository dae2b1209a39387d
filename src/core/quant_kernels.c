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

/* block_q3_K's scale s (0 … 15): 6 bits, the low 4 from scales[s % 8]'s
 * nibble s / 8, the high 2 from scales[8 + s % 4]'s pair s / 4, less 32
 * (ggml's kmask shuffle of the 12 bytes, one scale at a time) */
static inline int q3_scale(const uint8_t *sc, int s)
{
    int lo = (sc[s % 8] >> (4 * (s / 8))) & 15, hi = (sc[8 + s % 4] >> (2 * (s / 4))) & 3;
    return (lo | hi << 4) - 32;
}

/* ggml's get_scale_min_k4: scale and min j (0 … 7) of a q4_K / q5_K block's
 * 12 bytes, 6 bits each */
static inline void k4_scale_min(const uint8_t *q, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 15) | (q[j - 4] >> 6) << 4;
        *m = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
    }
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
typedef uint8_t qb4u __attribute__((vector_size(4), aligned(1), may_alias));
typedef int8_t qs4u __attribute__((vector_size(4), aligned(1), may_alias));
typedef uint16_t qh4u __attribute__((vector_size(8), aligned(1), may_alias));
#define VF qf4
#define VFU qf4u
#define VI qi4
#define VU qu4
#define VBU qb4u
#define VBS qs4u
#define VHU qh4u
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
#undef VBU
#undef VBS
#undef VHU
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
typedef uint8_t qb8u __attribute__((vector_size(8), aligned(1), may_alias));
typedef int8_t qs8u __attribute__((vector_size(8), aligned(1), may_alias));
typedef uint16_t qh8u __attribute__((vector_size(16), aligned(1), may_alias));
#define VF qf8
#define VFU qf8u
#define VI qi8
#define VU qu8
#define VBU qb8u
#define VBS qs8u
#define VHU qh8u
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
#undef VBU
#undef VBS
#undef VHU
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
typedef uint8_t qb16u __attribute__((vector_size(16), aligned(1), may_alias));
typedef int8_t qs16u __attribute__((vector_size(16), aligned(1), may_alias));
typedef uint16_t qh16u __attribute__((vector_size(32), aligned(1), may_alias));
#define VF qf16
#define VFU qf16u
#define VI qi16
#define VU qu16
#define VBU qb16u
#define VBS qs16u
#define VHU qh16u
#define VFMA(a, b, c) ((qf16)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#include "quant_kernels.inc"
#endif

#define SET(s)                                                                                     \
    {                                                                                              \
        #s,                                                                                        \
            {[QT_F32] = deq_f32_##s, [QT_F16] = deq_f16_##s, [QT_Q4_0] = deq_q4_0_##s,             \
             [QT_Q4_1] = deq_q4_1_##s, [QT_Q5_0] = deq_q5_0_##s, [QT_Q5_1] = deq_q5_1_##s,         \
             [QT_Q8_0] = deq_q8_0_##s, [QT_Q2_K] = deq_q2_K_##s, [QT_Q3_K] = deq_q3_K_##s,         \
             [QT_Q4_K] = deq_q4_K_##s, [QT_Q5_K] = deq_q5_K_##s, [QT_Q6_K] = deq_q6_K_##s,         \
             [QT_BF16] = deq_bf16_##s},                                                            \
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
