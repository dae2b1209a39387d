/* The language models' kernel sets: lm_kernels.inc built for the baseline (SSE2, NEON
 * or plain C: a product and a sum rounded apart), AVX2 with FMA and AVX-512
 * (fused, one rounding: these two give the same floats), and the choice
 * among them at start-up (runtime.h: lm_kernels, lm_use_kernels). */
#include "lm_kernels.h"
#include "attnviz/runtime.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* the base set rounds products and sums apart */
#endif

#define PF 8
#define KC 768 /* rows of W a pass of linear's tiles read in place takes (see linear) */
#define LM_KC 256 /* rows of W in a packed panel (see linear_panels): 64 KB at 16 lanes */
/* W read in place with fewer rows than this, or chains of at most
 * LM_INPLACE_K rows (see linear; bert-base's shapes at 128 rows, one
 * thread, W from memory: k = 768 in place 204–220 GFLOP/s, packed 196;
 * k = 3072 in place 153–157, packed 187–199) */
#define LM_PANEL_ROWS 64
#define LM_INPLACE_K 384
#define LM_MC 256 /* rows of A a panel is used for before the next is packed */
#define VLD(p) ((VF) * (const VFU *)(p))
#define VST(p, v) (*(VFU *)(p) = (VF)(v))

#define KN(name) name##_base
#define KTARGET
#define VW 4
#define NV 2
typedef float vf4 __attribute__((vector_size(16)));
typedef float vf4u __attribute__((vector_size(16), aligned(4), may_alias));
typedef int32_t vi4 __attribute__((vector_size(16)));
typedef uint32_t vu4 __attribute__((vector_size(16)));
typedef uint16_t vh4u __attribute__((vector_size(8), aligned(2), may_alias));
#define VI vi4
#define VU vu4
#define VHU vh4u
#define VF vf4
#define VFU vf4u
#define VSPLAT(x) ((vf4){(x), (x), (x), (x)})
#define VFMA(a, b, c) ((a) * (b) + (c))
#define SFMA(a, b, c) ((a) * (b) + (c))
#include "lm_kernels.inc"
#undef KN
#undef KTARGET
#undef VW
#undef NV
#undef VF
#undef VI
#undef VU
#undef VHU
#undef VFU
#undef VSPLAT
#undef VFMA
#undef SFMA

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LM_HAVE_AVX2 1
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi" /* the vectors never cross a call boundary */
#endif
#define SFMA(a, b, c) __builtin_fmaf((a), (b), (c))

#define KN(name) name##_avx2
#define KTARGET __attribute__((target("avx2,fma")))
#define VW 8
#define NV 2
typedef float vf8 __attribute__((vector_size(32)));
typedef float vf8u __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef uint32_t vu8 __attribute__((vector_size(32)));
typedef uint16_t vh8u __attribute__((vector_size(16), aligned(2), may_alias));
#define VI vi8
#define VU vu8
#define VHU vh8u
#define VF vf8
#define VFU vf8u
#define VSPLAT(x) ((vf8){(x), (x), (x), (x), (x), (x), (x), (x)})
#define VFMA(a, b, c) ((vf8)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#include "lm_kernels.inc"
#undef KN
#undef KTARGET
#undef VW
#undef NV
#undef VF
#undef VI
#undef VU
#undef VHU
#undef VFU
#undef VSPLAT
#undef VFMA

#define KN(name) name##_avx512
#define KTARGET __attribute__((target("avx512f,fma")))
#define VW 16
#define NV 4
typedef float vf16 __attribute__((vector_size(64)));
typedef float vf16u __attribute__((vector_size(64), aligned(4), may_alias));
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef uint32_t vu16 __attribute__((vector_size(64)));
typedef uint16_t vh16u __attribute__((vector_size(32), aligned(2), may_alias));
#define VI vi16
#define VU vu16
#define VHU vh16u
#define VF vf16
#define VFU vf16u
#define VSPLAT(x) ((vf16){(x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x)})
#define VFMA(a, b, c) ((vf16)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#include "lm_kernels.inc"
#endif

static const LmKernels sets[] = {
    {"base", linear_base, linear_few_base, scores_base, scores4_base, context_base, context4_base,
     dots_base, gelu_tanh_base, gelu_erf_base, linear_bf16_base, 2 * 4},
#ifdef LM_HAVE_AVX2
    {"avx2", linear_avx2, linear_few_avx2, scores_avx2, scores4_avx2, context_avx2, context4_avx2,
     dots_avx2, gelu_tanh_avx2, gelu_erf_avx2, linear_bf16_avx2, 2 * 8},
    {"avx512", linear_avx512, linear_few_avx512, scores_avx512, scores4_avx512, context_avx512,
     context4_avx512, dots_avx512, gelu_tanh_avx512, gelu_erf_avx512, linear_bf16_avx512, 4 * 16},
#endif
};
enum { N_SETS = sizeof sets / sizeof sets[0] };

static int set_ok(int k)
{
#ifdef LM_HAVE_AVX2
    if (strcmp(sets[k].name, "avx2") == 0)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(sets[k].name, "avx512") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
    return k >= 0 && k < N_SETS;
}

static const LmKernels *kern; /* set under kern_once, or by lm_use_kernels between forwards */
static pthread_once_t kern_once = PTHREAD_ONCE_INIT;

/* The best set this CPU runs, or the one ATTNVIZ_LM_KERNELS names. */
static void kern_pick(void)
{
    const char *want = getenv("ATTNVIZ_LM_KERNELS");
    kern = &sets[0];
    for (int k = N_SETS - 1; k > 0; k--)
        if (set_ok(k) && (!want || strcmp(want, sets[k].name) == 0)) {
            kern = &sets[k];
            break;
        }
}

const LmKernels *lm_kernel_set(void)
{
    pthread_once(&kern_once, kern_pick);
    return kern;
}

const char *lm_kernels(void)
{
    return lm_kernel_set()->name;
}

int lm_use_kernels(const char *name)
{
    lm_kernel_set();
    for (int k = 0; k < N_SETS; k++)
        if (strcmp(sets[k].name, name) == 0 && set_ok(k)) {
            kern = &sets[k];
            return 0;
        }
    return -1;
}
