/* The language models' kernels alone (src/core/lm_kernels.inc) against
 * references computed here in double with libm: GELU's erf form over many
 * inputs (each set the CPU runs, the vector lanes and the one-at-a-time
 * tail), tails, signed zeros, NaN and infinities; several products of the
 * same rows as one job (ops_linear_batch) against each alone and against
 * sums in double. The other products and the attention kernels are
 * checked through the forwards (test_gpt2.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/runtime.h"
#include "../src/core/lm_kernels.h"
#include "../src/core/ops.h"

#include "test_rand.h"

static const char *const SETS[] = {"base", "avx2", "avx512"};
enum { N_SETS = sizeof SETS / sizeof SETS[0] };

/* GELU's erf form as float code computes it (transformers' and torch's
 * 0.5·x·(1 + erf(x·√½)) in float), erf taken as libm's double erf rounded
 * to float, or |nudge| floats above it (nudge > 0) or below. */
static float gelu_ref(float x, int nudge)
{
    float z = x * 0.7071067811865476f;
    float e = (float)erf((double)z);
    for (int i = 0; i < abs(nudge); i++)
        e = nextafterf(e, nudge > 0 ? INFINITY : -INFINITY);
    return 0.5f * x * (1.0f + e);
}

static int same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* The inputs: special values, the two sides of the kernel's branch points
 * (z = 0.921875 between its two forms, z = 3.92 where erf becomes 1 in
 * float, z = 4 where the argument is clamped),
 * uniform draws over [-12, 12] and log-uniform magnitudes 1e-40 … 1e38,
 * each sign. */
static float *inputs(int *n_out)
{
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f,
                                    1.17549435e-38f, -1.17549435e-38f, 3.4028235e38f,
                                    -3.4028235e38f, 1.0f, -1.0f};
    int n_special = (int)(sizeof special / sizeof special[0]);
    int n = n_special + 3 * 2 * 64 + 400000 + 200000;
    float *x = malloc(sizeof(float) * (size_t)n);
    assert_non_null(x);
    int k = 0;
    for (int i = 0; i < n_special; i++)
        x[k++] = special[i];
    static const float edges[] = {1.3037281f, 5.5437171f, 5.6568542f}; /* x = z·√2 */
    for (int e = 0; e < 3; e++)
        for (int s = 0; s < 2; s++) {
            float v = s ? -edges[e] : edges[e];
            for (int i = 0; i < 32; i++)
                v = nextafterf(v, 0.0f);
            for (int i = 0; i < 64; i++, v = nextafterf(v, s ? -INFINITY : INFINITY))
                x[k++] = v;
        }
    rng_seed(0x5eed);
    for (int i = 0; i < 400000; i++)
        x[k++] = (float)urand(-12, 12);
    for (int i = 0; i < 200000; i++) {
        float m = (float)pow(10.0, urand(-40, 38.5));
        x[k++] = i & 1 ? -m : m;
    }
    assert_int_equal(k, n);
    *n_out = n;
    return x;
}

/* Each set's gelu_erf gives the reference formula's float with erf within
 * an ulp of libm's double erf rounded to float (two in the base set, which
 * rounds its products apart), and GELU in double within an ulp and
 * |x|·2⁻²² (the roundings of x·√½ and 1 + erf, erf's ulps: each at most
 * |x|·2⁻²⁴); the same floats in the sets with FMA, in the vector lanes
 * and in the tail. Most of erf's floats are the rounded ones. */
static void test_gelu_erf(void **state)
{
    (void)state;
    int n;
    float *x = inputs(&n);
    float *first = malloc(sizeof(float) * (size_t)n), *h = malloc(sizeof(float) * (size_t)n);
    assert_true(first && h);
    const char *was = lm_kernels();
    int ran = 0, fused = 0;
    for (int s = 0; s < N_SETS; s++) {
        if (lm_use_kernels(SETS[s]) < 0)
            continue;
        memcpy(h, x, sizeof(float) * (size_t)n);
        lm_kernel_set()->gelu_erf(h, n);
        int off = 0, most = s == 0 ? 2 : 1;
        for (int i = 0; i < n; i++) {
            int d = 0;
            while (d <= most && !same_float(h[i], gelu_ref(x[i], d)) &&
                   !same_float(h[i], gelu_ref(x[i], -d)))
                d++;
            if (d > most)
                fail_msg("%s: gelu(%a) = %a, the formula with erf rounded gives %a (%d ulp "
                         "of erf allowed)", SETS[s], (double)x[i], (double)h[i],
                         (double)gelu_ref(x[i], 0), most);
            off += d > 0;
            double g = 0.5 * x[i] * erfc(-(double)x[i] * 0.7071067811865476);
            if (isfinite(g)) {
                double ulp = nextafterf(fabsf((float)g), INFINITY) - fabsf((float)g);
                if (fabs(h[i] - g) > ulp + fabs(x[i]) * 0x1p-22)
                    fail_msg("%s: gelu(%a) = %a, GELU in double %a", SETS[s], (double)x[i],
                             (double)h[i], g);
            }
        }
        if (off > n / 25)
            fail_msg("%s: %d of %d inputs away from erf rounded to float", SETS[s], off, n);
        /* the sets with FMA: the same floats */
        if (s > 0 && fused++ == 0)
            memcpy(first, h, sizeof(float) * (size_t)n);
        else if (s > 0)
            assert_memory_equal(first, h, sizeof(float) * (size_t)n);
        ran++;
        /* lanes and tail: every start and length below two vectors */
        for (int start = 0; start < 17; start++)
            for (int len = 0; len < 19; len++) {
                float part[40];
                memcpy(part, x + start, sizeof(float) * (size_t)len);
                lm_kernel_set()->gelu_erf(part, len);
                assert_memory_equal(part, h + start, sizeof(float) * (size_t)len);
            }
        printf("  %s: %d inputs, %d on an erf an ulp or two away\n", SETS[s], n, off);
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(was), 0);
    free(x), free(first), free(h);
}

/* bfloat16 bits of f, rounded to nearest even (f finite) */
static uint16_t bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

/* Three float32 products and a bfloat16 one of the same rows as one job
 * give each float its own call gives (ops_linear, ops_linear_mat: the
 * keystroke's few rows, a tile's and a forward's many; widths past a
 * tile's multiples), within float rounding of the sums in double. */
static void test_linear_batch(void **state)
{
    (void)state;
    static const int rows[] = {1, 4, 5, 130};
    enum { K = 70, NP = 4 };
    static const int widths[NP] = {77, 64, 13, 150};
    const char *was = lm_kernels();
    rng_seed(0xba7c4);
    float *A = rand_matrix(130, K + 3, -1, 1);
    float *W[NP], *b[NP], *one[NP], *all[NP];
    uint16_t *h = malloc(sizeof(uint16_t) * widths[3] * K);
    assert_non_null(h);
    for (int p = 0; p < NP; p++) {
        W[p] = rand_matrix(K, widths[p], -1, 1);
        b[p] = rand_matrix(1, widths[p], -1, 1);
        one[p] = malloc(sizeof(float) * 130 * (widths[p] + 2));
        all[p] = malloc(sizeof(float) * 130 * (widths[p] + 2));
        assert_true(one[p] && all[p]);
    }
    /* the fourth as the file stores it: [out, in], bfloat16 (its floats: W[3]'s rounded) */
    for (int j = 0; j < widths[3]; j++)
        for (int c = 0; c < K; c++) {
            h[(size_t)j * K + c] = bf16(W[3][(size_t)c * widths[3] + j]);
            uint32_t u = (uint32_t)h[(size_t)j * K + c] << 16;
            memcpy(&W[3][(size_t)c * widths[3] + j], &u, sizeof u);
        }
    RtMat m = {RT_MAT_BF16, h, (size_t)K * 2, NULL};
    int ran = 0;
    for (int s = 0; s < N_SETS; s++) {
        if (lm_use_kernels(SETS[s]) < 0)
            continue;
        ran++;
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            int n = rows[r];
            RtProj pr[NP];
            for (int p = 0; p < NP; p++) {
                int ldo = widths[p] + 2;
                pr[p] = (RtProj){all[p], ldo, p < 3 ? W[p] : NULL, p < 3 ? NULL : &m, b[p],
                                 widths[p]};
                if (p < 3)
                    ops_linear(one[p], ldo, A, K + 3, W[p], b[p], n, K, widths[p]);
                else
                    ops_linear_mat(one[p], ldo, A, K + 3, &m, b[p], n, K, widths[p]);
            }
            ops_linear_batch(pr, NP, A, K + 3, n, K);
            for (int p = 0; p < NP; p++)
                for (int i = 0; i < n; i++) {
                    const float *got = all[p] + (size_t)i * (widths[p] + 2);
                    assert_memory_equal(got, one[p] + (size_t)i * (widths[p] + 2),
                                        sizeof(float) * widths[p]);
                    for (int j = 0; j < widths[p]; j++) {
                        double want = b[p][j];
                        for (int c = 0; c < K; c++)
                            want += (double)A[(size_t)i * (K + 3) + c] * W[p][(size_t)c * widths[p] + j];
                        if (fabs(got[j] - want) > 1e-5 * K)
                            fail_msg("%s: product %d, %d rows: [%d, %d] is %g, in double %g",
                                     SETS[s], p, n, i, j, (double)got[j], want);
                    }
                }
        }
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(was), 0);
    for (int p = 0; p < NP; p++)
        free(W[p]), free(b[p]), free(one[p]), free(all[p]);
    free(A), free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gelu_erf),
        cmocka_unit_test(test_linear_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
