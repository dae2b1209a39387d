/* The kernel sets: the kernels of attn_kernels.inc built once per
 * instruction set, and the choice among them at start-up (attn.h:
 * attn_kernels, attn_use_kernels). */
#include "attn_kernels.h"
#include "attnviz/attn.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
/* no fused multiply-add where a set's target has it (AVX-512): every set
 * rounds each product and each sum (GCC's C11 mode contracts nothing) */
#pragma STDC FP_CONTRACT OFF
#endif

/* exp(x) for x <= 0 (the softmax after subtracting the row max), written so
 * the compiler can vectorise it: x = n·ln2 + r with |r| <= ln2/2, e^r by a
 * degree-6 polynomial (relative error below 2e-7), 2^n through the exponent
 * bits. Below -87 (where float exp underflows) the result is 0. */
static inline float exp_neg(float x0)
{
    float x = x0 < -87.0f ? -87.0f : x0;
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* round */
    float r = x - n * 0.693145751953125f - n * 1.428606765330187e-06f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 +
              r * (1.0f / 120 + r * (1.0f / 720))))));
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return x0 < -87.0f ? 0.0f : p * scale; /* underflow is exactly 0 */
}

/* Rare path for rows with NaN or infinite logits (weights near 1e38):
 * +inf entries share the weight, NaN counts as -inf, and a row with nothing
 * usable becomes uniform, so no NaN ever leaves the softmax. */
static void softmax_nonfinite(float *row, int n_valid)
{
    int n_inf = 0, n_ok = 0; /* NaN entries count as -inf below */
    for (int j = 0; j < n_valid; j++) {
        n_inf += row[j] == INFINITY;
        n_ok += isfinite(row[j]);
    }
    if (n_inf) {
        for (int j = 0; j < n_valid; j++)
            row[j] = row[j] == INFINITY ? 1.0f / (float)n_inf : 0.0f;
        return;
    }
    if (!n_ok) {
        for (int j = 0; j < n_valid; j++)
            row[j] = 1.0f / (float)n_valid;
        return;
    }
    for (int j = 0; j < n_valid; j++)
        if (!isfinite(row[j]))
            row[j] = -INFINITY;
    attn_softmax_row(row, n_valid, n_valid);
}

/* The kernels for each instruction set (attn_kernels.inc), and the set in
 * use: AVX-512 where the CPU has it, else AVX2 (x86-64 since about 2015),
 * else the baseline one (SSE2 on x86-64, NEON on arm64). A 32-byte vector
 * in an SSE2 build would live in memory; each set gets vectors of its own
 * width: VF, and VFU the same vector unaligned, for VLD and VST. */
#define VLD(p) ((VF) * (const VFU *)(p))
#define VST(p, v) (*(VFU *)(p) = (VFU)(v))

#define KN(name) name##_base
#define KTARGET
#define VW 4
typedef float vf4 __attribute__((vector_size(16)));
typedef int32_t vi4 __attribute__((vector_size(16)));
typedef float vf4u __attribute__((vector_size(16), aligned(4), may_alias)); /* unaligned */
#define VF vf4
#define VFU vf4u
#define VI vi4
#define VSPLAT(x) ((vf4){(x), (x), (x), (x)})
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VSTREAM 1
#define VSTNT(p, v) _mm_stream_ps((p), (__m128)(v))
#define VFENCE() _mm_sfence()
#else
#define VSTREAM 0
#define VSTNT(p, v) VST(p, v)
#define VFENCE() ((void)0)
#endif
#include "attn_kernels.inc"
#undef KN
#undef KTARGET
#undef VW
#undef VF
#undef VFU
#undef VI
#undef VSPLAT
#undef VSTREAM
#undef VSTNT
#undef VFENCE

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ATTN_HAVE_AVX2 1
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi" /* vf8, vf16 never cross a call boundary */
#endif
#define KN(name) name##_avx2
#define KTARGET __attribute__((target("avx2")))
#define VW 8
typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef float vf8u __attribute__((vector_size(32), aligned(4), may_alias));
#define VF vf8
#define VFU vf8u
#define VI vi8
#define VSPLAT(x) ((vf8){(x), (x), (x), (x), (x), (x), (x), (x)})
#define VSTREAM 1
#define VSTNT(p, v) _mm256_stream_ps((p), (__m256)(v))
#define VFENCE() _mm_sfence()
#include "attn_kernels.inc"
#undef KN
#undef KTARGET
#undef VW
#undef VF
#undef VFU
#undef VI
#undef VSPLAT
#undef VSTNT

/* 16 lanes: the AVX-512 set, and the same code built for AVX2
 * ("avx2-w16": each vector two 32-byte halves), which the tests run where
 * the CPU has no AVX-512 so that the 16-lane paths (blocks of 16 and 32,
 * their tails, the streamed stores' alignment) are checked on every x86-64
 * machine with AVX2; it is never picked by itself. Both keep the AVX2
 * softmax's eight partial sums (VF8: half a vector here). */
typedef float vf16 __attribute__((vector_size(64)));
typedef int32_t vi16 __attribute__((vector_size(64)));
typedef float vf16u __attribute__((vector_size(64), aligned(4), may_alias));
#define VW 16
#define VF vf16
#define VFU vf16u
#define VI vi16
#define VF8 vf8
#define VSPLAT(x) ((vf16){(x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x)})
#define KN(name) name##_w16
#define KTARGET __attribute__((target("avx2")))
typedef union {
    vf16 v;
    __m256 h[2];
} Halves16;
#define VSTNT(p, v)                                                                        \
    do {                                                                                   \
        Halves16 hv_ = {(v)};                                                              \
        _mm256_stream_ps((p), hv_.h[0]);                                                   \
        _mm256_stream_ps((p) + 8, hv_.h[1]);                                               \
    } while (0)
#include "attn_kernels.inc"
#undef KN
#undef KTARGET
#undef VSTNT
#define KN(name) name##_avx512
#define KTARGET __attribute__((target("avx512f")))
#define VSTNT(p, v) _mm512_stream_ps((p), (__m512)(v))
#include "attn_kernels.inc"
#endif


static const Kernels kernel_sets[] = {
    {"base", matmul_base, softmax_row_base, scores_rows_base, context_rows_base},
#ifdef ATTN_HAVE_AVX2
    {"avx2-w16", matmul_w16, softmax_row_w16, scores_rows_w16, context_rows_w16},
    {"avx2", matmul_avx2, softmax_row_avx2, scores_rows_avx2, context_rows_avx2},
    {"avx512", matmul_avx512, softmax_row_avx512, scores_rows_avx512, context_rows_avx512},
#endif
};
enum { N_KERNEL_SETS = sizeof kernel_sets / sizeof kernel_sets[0] };

/* Whether set k runs on this CPU (auto: as the best set; avx2-w16 only
 * when asked for by name). */
static int kernel_ok(int k, int automatic)
{
#ifdef ATTN_HAVE_AVX2
    const char *name = kernel_sets[k].name;
    if (strcmp(name, "avx2-w16") == 0)
        return !automatic && __builtin_cpu_supports("avx2");
    if (strcmp(name, "avx2") == 0)
        return __builtin_cpu_supports("avx2");
    if (strcmp(name, "avx512") == 0)
        return __builtin_cpu_supports("avx512f");
#endif
    (void)automatic;
    return k >= 0 && k < N_KERNEL_SETS;
}

static const Kernels *kern; /* set under kern_once, or by attn_use_kernels between forwards */
static pthread_once_t kern_once = PTHREAD_ONCE_INIT;

/* The best set this CPU runs; ATTNVIZ_KERNELS=base forces the baseline. */
static void kern_pick(void)
{
    const char *want = getenv("ATTNVIZ_KERNELS");
    kern = &kernel_sets[0];
    for (int k = N_KERNEL_SETS - 1; k > 0; k--)
        if (kernel_ok(k, !want) && (!want || strcmp(want, kernel_sets[k].name) == 0)) {
            kern = &kernel_sets[k];
            break;
        }
}

const Kernels *attn_kernel_set(void)
{
    pthread_once(&kern_once, kern_pick);
    return kern;
}

const char *attn_kernels(void)
{
    return attn_kernel_set()->name;
}

int attn_use_kernels(const char *name)
{
    attn_kernel_set();
    for (int k = 0; k < N_KERNEL_SETS; k++)
        if (strcmp(kernel_sets[k].name, name) == 0 && kernel_ok(k, 0)) {
            kern = &kernel_sets[k];
            return 0;
        }
    return -1;
}

void attn_matmul(float *out, const float *A, int lda, const float *B, int n, int k, int m)
{
    attn_kernel_set()->matmul(out, A, lda, B, n, k, m);
}

void attn_softmax_row(float *row, int n, int n_valid)
{
    attn_kernel_set()->softmax_row(row, n, n_valid);
}
