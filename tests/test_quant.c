/* Tests for ggml's weight types (src/core/quant.c, quant_kernels.*):
 *
 *   names and sizes of every type id against ggml.h's enum and ggml-common.h's
 *   block structs as written out here (the unsupported ones: 0, a name);
 *
 *   qtype_to_f32 of every supported type bit for bit against ggml's own
 *   to_float (tests/fixtures/quant: llama.cpp's libggml-base through
 *   make_quant.py, on blocks ggml quantized and on random bytes), in every
 *   kernel set this CPU runs, from an unaligned address too; every float16
 *   against the format's definition computed here; quant_row with a perm;
 *
 *   quant_linear_cols against a double sum over the dequantized rows
 *   (within 1e-6 of Σ|a·w|), one-hot rows giving the weights exactly, the
 *   same floats however the columns are split and whatever n (the few-rows
 *   and many-rows paths), perm equal to the rows moved, the bias, strides,
 *   avx2 and avx512 equal. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/quant.h"
#include "attnviz/runtime.h"

#include "test_rand.h"

static const char *const SETS[] = {"base", "avx2", "avx512"};
enum { N_SETS = 3 };

/* the supported types: id, ggml's file name (make_quant.py's), GGUF's name,
 * numbers and bytes a block (ggml-common.h's static_asserts) */
static const struct {
    int id;
    const char *file, *name;
    int block;
    size_t bytes;
} TYPES[] = {
    {0, NULL, "F32", 1, 4},
    {1, "f16", "F16", 1, 2},
    {2, "q4_0", "Q4_0", 32, 2 + 32 / 2},
    {3, "q4_1", "Q4_1", 32, 2 * 2 + 32 / 2},
    {6, "q5_0", "Q5_0", 32, 2 + 4 + 32 / 2},
    {7, "q5_1", "Q5_1", 32, 2 * 2 + 4 + 32 / 2},
    {8, "q8_0", "Q8_0", 32, 2 + 32},
    {10, "q2_K", "Q2_K", 256, 2 * 2 + 256 / 16 + 256 / 4},
    {11, "q3_K", "Q3_K", 256, 2 + 256 / 4 + 256 / 8 + 12},
    {12, "q4_K", "Q4_K", 256, 2 * 2 + 12 + 256 / 2},
    {13, "q5_K", "Q5_K", 256, 2 * 2 + 12 + 256 / 2 + 256 / 8},
    {14, "q6_K", "Q6_K", 256, 2 + 256 / 16 + 3 * 256 / 4},
    {30, "bf16", "BF16", 1, 2},
};
enum { N_TYPES = sizeof TYPES / sizeof TYPES[0] };

/* where a block's float16 fields lie (the random blocks keep them finite) */
static const struct {
    int id, at[2];
} HALVES[] = {{2, {0, -1}},  {3, {0, 2}},    {6, {0, -1}},  {7, {0, 2}},   {8, {0, -1}},
              {10, {80, 82}}, {11, {108, -1}}, {12, {0, 2}}, {13, {0, 2}}, {14, {208, -1}}};

static const char *start_set; /* the set in use when main started */

static int use_set(const char *name)
{
    return lm_use_kernels(name) == 0;
}

/* after each test: the set main started with */
static int restore_set(void **state)
{
    (void)state;
    return lm_use_kernels(start_set);
}

static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s (run from the repository's top folder)", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return p;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* ---- names and sizes ---------------------------------------------------------- */

static void test_names_sizes(void **state)
{
    (void)state;
    for (int t = 0; t < N_TYPES; t++) {
        int id = TYPES[t].id;
        assert_string_equal(qtype_name(id), TYPES[t].name);
        assert_int_equal(qtype_supported(id), 1);
        assert_int_equal(qtype_block(id), TYPES[t].block);
        assert_int_equal(qtype_block_bytes(id), TYPES[t].bytes);
        assert_int_equal(qtype_row_bytes(id, 512), 512 / TYPES[t].block * TYPES[t].bytes);
        assert_int_equal(qtype_row_bytes(id, 0), 0);
        assert_int_equal(qtype_row_bytes(id, -256), 0);
        if (TYPES[t].block > 1)
            assert_int_equal(qtype_row_bytes(id, 512 + 16), 0);
    }
    assert_int_equal(qtype_row_bytes(QT_F16, 3), 6);
    assert_int_equal(qtype_row_bytes(QT_Q6_K, 8192), 32 * 210);
    /* ggml's other types: a name, nothing else */
    static const struct {
        int id;
        const char *name;
    } other[] = {{9, "Q8_1"},   {15, "Q8_K"},  {16, "IQ2_XXS"}, {17, "IQ2_XS"}, {18, "IQ3_XXS"},
                 {19, "IQ1_S"}, {20, "IQ4_NL"}, {21, "IQ3_S"},  {22, "IQ2_S"},  {23, "IQ4_XS"},
                 {24, "I8"},    {25, "I16"},   {26, "I32"},     {27, "I64"},    {28, "F64"},
                 {29, "IQ1_M"}, {34, "TQ1_0"}, {35, "TQ2_0"},   {39, "MXFP4"},  {40, "NVFP4"},
                 {41, "Q1_0"},  {42, "Q2_0"}};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        assert_string_equal(qtype_name(other[i].id), other[i].name);
        assert_int_equal(qtype_supported(other[i].id), 0);
        assert_int_equal(qtype_block(other[i].id), 0);
        assert_int_equal(qtype_block_bytes(other[i].id), 0);
        assert_int_equal(qtype_row_bytes(other[i].id, 256), 0);
    }
    /* nothing written for an unsupported type or a part of a block */
    uint8_t blk[210] = {0};
    float dst[256], A[256] = {0};
    for (int i = 0; i < 256; i++)
        dst[i] = 7.0f;
    qtype_to_f32(QT_Q6_K, blk, dst, 128);
    qtype_to_f32(16 /* IQ2_XXS */, blk, dst, 256);
    quant_linear_cols(dst, 1, A, 256, QT_Q6_K, blk, 210, NULL, NULL, 1, 128, 0, 1);
    quant_linear_cols(dst, 1, A, 256, 16, blk, 66, NULL, NULL, 1, 256, 0, 1);
    for (int i = 0; i < 256; i++)
        assert_true(dst[i] == 7.0f);
    qtype_to_f32(QT_Q6_K, blk, dst, 256); /* zeros: d = 0 */
    assert_true(dst[0] == 0.0f && dst[255] == 0.0f);
    /* removed from ggml, or never there */
    static const int none[] = {-1, 4, 5, 31, 32, 33, 36, 37, 38, 43, 1000};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        assert_null(qtype_name(none[i]));
        assert_int_equal(qtype_supported(none[i]), 0);
        assert_int_equal(qtype_block(none[i]), 0);
    }
}

/* ---- blocks to floats against ggml ---------------------------------------- */

/* n floats against ggml's, bit for bit; the first difference named */
static void expect_bits(const float *got, const float *want, long long n, const char *what,
                        const char *set)
{
    for (long long i = 0; i < n; i++)
        if (bits(got[i]) != bits(want[i]))
            fail_msg("%s (%s): number %lld is %.9g (0x%08x), ggml's %.9g (0x%08x)", what, set, i,
                     (double)got[i], (unsigned)bits(got[i]), (double)want[i],
                     (unsigned)bits(want[i]));
}

static void test_to_f32_ggml(void **state)
{
    (void)state;
    for (int s = 0; s < N_SETS; s++) {
        if (!use_set(SETS[s]))
            continue;
        for (int t = 0; t < N_TYPES; t++) {
            if (!TYPES[t].file)
                continue;
            char path[256];
            size_t nb, nf;
            snprintf(path, sizeof path, "tests/fixtures/quant/%s.blocks", TYPES[t].file);
            uint8_t *blocks = read_file(path, &nb);
            snprintf(path, sizeof path, "tests/fixtures/quant/%s.f32", TYPES[t].file);
            float *want = read_file(path, &nf);
            long long n = (long long)(nf / 4);
            assert_int_equal(qtype_row_bytes(TYPES[t].id, n), nb);
            float *got = malloc(nf);
            uint8_t *odd = malloc(nb + 1);
            assert_non_null(got);
            assert_non_null(odd);
            qtype_to_f32(TYPES[t].id, blocks, got, n);
            expect_bits(got, want, n, TYPES[t].name, SETS[s]);
            /* from an odd address */
            memcpy(odd + 1, blocks, nb);
            memset(got, 0, nf);
            qtype_to_f32(TYPES[t].id, odd + 1, got, n);
            expect_bits(got, want, n, TYPES[t].name, SETS[s]);
            /* row by row through a perm (8 rows of 512, make_quant.py's) */
            const int rows = 8, k = (int)(n / rows);
            const int32_t perm[8] = {5, 2, 7, 0, 1, 6, 3, 4};
            size_t rb = qtype_row_bytes(TYPES[t].id, k);
            for (int r = 0; r < rows; r++) {
                float row[4096];
                assert_true(k <= 4096);
                quant_row(row, TYPES[t].id, blocks, rb, perm, r, k);
                expect_bits(row, want + (size_t)perm[r] * k, k, TYPES[t].name, SETS[s]);
            }
            free(odd);
            free(got);
            free(want);
            free(blocks);
        }
    }
}

/* every float16 against the format: (−1)^s · 2^(e−15) · (1 + m/1024), the
 * subnormals 2^−14 · m/1024, Inf, and NaN as ggml makes it (sign and payload
 * kept, quiet) */
static void test_f16_all(void **state)
{
    (void)state;
    enum { N = 65536 };
    uint8_t *h = malloc(2 * N);
    float *got = malloc(sizeof(float) * N);
    assert_non_null(h);
    assert_non_null(got);
    for (int i = 0; i < N; i++) {
        h[2 * i] = (uint8_t)(i & 255);
        h[2 * i + 1] = (uint8_t)(i >> 8);
    }
    for (int s = 0; s < N_SETS; s++) {
        if (!use_set(SETS[s]))
            continue;
        qtype_to_f32(QT_F16, h, got, N);
        for (int i = 0; i < N; i++) {
            int sign = i >> 15, e = (i >> 10) & 31, m = i & 1023;
            if (e == 31 && m) {
                uint32_t want = (uint32_t)sign << 31 | 0x7FC00000u | (uint32_t)m << 13;
                if (bits(got[i]) != want)
                    fail_msg("f16 0x%04x (%s): 0x%08x, not 0x%08x", i, SETS[s],
                             (unsigned)bits(got[i]), (unsigned)want);
                continue;
            }
            double v = e == 31 ? INFINITY : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
            float want = (float)(sign ? -v : v);
            if (bits(got[i]) != bits(want))
                fail_msg("f16 0x%04x (%s): %.9g, not %.9g", i, SETS[s], (double)got[i],
                         (double)want);
        }
    }
    /* F32: the bits as they are (a signalling NaN too) */
    uint32_t in[5] = {0x7F800001u, 0xFFBFFFFFu, 0x80000000u, 0x00000001u, 0x3F800000u};
    float out[5];
    qtype_to_f32(QT_F32, in, out, 5);
    assert_memory_equal(in, out, sizeof in);
    free(got);
    free(h);
}

/* ---- the product -------------------------------------------------------------- */

/* rows × k numbers of type id: random bytes with finite float16 scales for
 * the blocks, random numbers in [−2, 2) for the float types */
static uint8_t *random_matrix(int id, int rows, int k, size_t *row_bytes)
{
    size_t rb = qtype_row_bytes(id, k), bb = qtype_block_bytes(id);
    uint8_t *w = malloc(rb * rows);
    assert_non_null(w);
    for (size_t i = 0; i < rb * rows; i++)
        w[i] = (uint8_t)rng_next();
    if (id == QT_F32 || id == QT_F16 || id == QT_BF16)
        for (long long i = 0; i < (long long)rows * k; i++) {
            float f = (float)urand(-2, 2);
            uint32_t u = bits(f);
            if (id == QT_F32)
                memcpy(w + 4 * i, &f, 4);
            else if (id == QT_BF16) {
                w[2 * i] = (uint8_t)(u >> 16);
                w[2 * i + 1] = (uint8_t)(u >> 24);
            } else if (w[2 * i + 1] & 0x40) /* F16: random bits, exponent below 16 */
                w[2 * i + 1] &= 0xBF;
        }
    for (size_t t = 0; t < sizeof HALVES / sizeof HALVES[0]; t++)
        if (HALVES[t].id == id)
            for (size_t b = 0; b < rb * rows / bb; b++)
                for (int f = 0; f < 2; f++)
                    if (HALVES[t].at[f] >= 0) {
                        uint8_t *hi = w + b * bb + HALVES[t].at[f] + 1;
                        if ((*hi & 0x7C) == 0x7C)
                            *hi &= 0xBF; /* exponent 31 → 15: finite */
                    }
    *row_bytes = rb;
    return w;
}

typedef struct Case {
    int id, n, m, k, lda, ldo;
    uint8_t *w;
    size_t rb;
    float *deq; /* m × k: the rows as qtype_to_f32 gives them */
    float *A, *bias;
} Case;

static void case_make(Case *c, int id, int n, int m, int k)
{
    c->id = id;
    c->n = n;
    c->m = m;
    c->k = k;
    c->lda = k + 3;
    c->ldo = m + 5;
    c->w = random_matrix(id, m, k, &c->rb);
    c->deq = malloc(sizeof(float) * (size_t)m * k);
    c->A = rand_matrix(n, c->lda, -1, 1);
    c->bias = rand_matrix(1, m, -1, 1);
    assert_non_null(c->deq);
    for (int j = 0; j < m; j++)
        qtype_to_f32(id, c->w + (size_t)j * c->rb, c->deq + (size_t)j * k, k);
}

static void case_free(Case *c)
{
    free(c->w);
    free(c->deq);
    free(c->A);
    free(c->bias);
}

/* n × ldo floats, the padding NaN (a kernel writing there shows) */
static float *out_make(const Case *c)
{
    float *o = malloc(sizeof(float) * (size_t)c->n * c->ldo);
    assert_non_null(o);
    for (int i = 0; i < c->n * c->ldo; i++)
        o[i] = NAN;
    return o;
}

static void run(const Case *c, float *out, const int32_t *perm, const uint8_t *w, int bias,
                int j0, int j1)
{
    quant_linear_cols(out, c->ldo, c->A, c->lda, c->id, w ? w : c->w, c->rb, perm,
                      bias ? c->bias : NULL, c->n, c->k, j0, j1);
}

/* out against Σ_c a·w in double over the dequantized rows, within 1e-6 of
 * Σ|a·w| (+ |bias|); the padding untouched */
static void expect_close(const Case *c, const float *out, int bias, const char *set)
{
    for (int i = 0; i < c->n; i++) {
        for (int j = 0; j < c->m; j++) {
            const float *a = c->A + (size_t)i * c->lda, *w = c->deq + (size_t)j * c->k;
            double s = bias ? c->bias[j] : 0.0, mag = bias ? fabs(c->bias[j]) : 0.0;
            for (int p = 0; p < c->k; p++) {
                s += (double)a[p] * w[p];
                mag += fabs((double)a[p] * w[p]);
            }
            double got = out[(size_t)i * c->ldo + j];
            if (!(fabs(got - s) <= 1e-6 * mag))
                fail_msg("%s (%s) n=%d k=%d: out[%d][%d] = %.9g, double sum %.9g (Σ|a·w| %.3g)",
                         qtype_name(c->id), set, c->n, c->k, i, j, got, s, mag);
        }
        for (int j = c->m; j < c->ldo; j++)
            assert_true(isnan(out[(size_t)i * c->ldo + j]));
    }
}

static void test_linear_sum(void **state)
{
    (void)state;
    static const int ns[] = {1, 2, 3, 4, 5, 67};
    rng_seed(35);
    for (int s = 0; s < N_SETS; s++) {
        if (!use_set(SETS[s]))
            continue;
        for (int t = 0; t < N_TYPES; t++)
            for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
                /* k: 2.5 chunks; the float types also a k no block divides */
                int k = 2560 + (TYPES[t].block == 1 ? 7 : 0);
                Case c;
                case_make(&c, TYPES[t].id, ns[q], 37, k);
                float *out = out_make(&c);
                run(&c, out, NULL, NULL, 1, 0, c.m);
                expect_close(&c, out, 1, SETS[s]);
                run(&c, out, NULL, NULL, 0, 0, c.m);
                expect_close(&c, out, 0, SETS[s]);
                free(out);
                case_free(&c);
            }
    }
}

/* rows of A one-hot at scattered positions: each output is exactly the
 * dequantized weight there (the product path dequantizes as qtype_to_f32),
 * for the few-rows path (n = 4) and the many-rows one (n = 70) */
static void test_linear_one_hot(void **state)
{
    (void)state;
    rng_seed(36);
    for (int s = 0; s < N_SETS; s++) {
        if (!use_set(SETS[s]))
            continue;
        for (int t = 0; t < N_TYPES; t++)
            for (int n = 4; n <= 70; n += 66) {
                Case c;
                case_make(&c, TYPES[t].id, n, 23, 2304);
                memset(c.A, 0, sizeof(float) * (size_t)n * c.lda);
                for (int i = 0; i < n; i++)
                    c.A[(size_t)i * c.lda + (i * 997 + 13) % c.k] = 1.0f;
                float *out = out_make(&c);
                run(&c, out, NULL, NULL, 0, 0, c.m);
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < c.m; j++) {
                        float want = c.deq[(size_t)j * c.k + (i * 997 + 13) % c.k];
                        float got = out[(size_t)i * c.ldo + j];
                        if (!(got == want || (isnan(got) && isnan(want))))
                            fail_msg("%s (%s) one-hot n=%d: out[%d][%d] = %.9g, weight %.9g",
                                     qtype_name(c.id), SETS[s], n, i, j, (double)got,
                                     (double)want);
                    }
                free(out);
                case_free(&c);
            }
    }
}

/* the same floats: the columns in pieces, a row alone or among many, the rows
 * of W moved instead of a perm, avx2 and avx512 */
static void test_linear_same_floats(void **state)
{
    (void)state;
    rng_seed(37);
    static const int cuts[] = {0, 1, 6, 7, 20, 21, 22, 37};
    float *first[N_TYPES] = {0};
    for (int s = 0; s < N_SETS; s++) {
        if (!use_set(SETS[s]))
            continue;
        rng_seed(37);
        for (int t = 0; t < N_TYPES; t++) {
            Case c;
            case_make(&c, TYPES[t].id, 67, 37, 2048 + 1024);
            float *whole = out_make(&c), *split = out_make(&c), *one = out_make(&c);
            run(&c, whole, NULL, NULL, 1, 0, c.m);
            for (size_t q = 0; q + 1 < sizeof cuts / sizeof cuts[0]; q++)
                run(&c, split, NULL, NULL, 1, cuts[q], cuts[q + 1]);
            assert_memory_equal(whole, split, sizeof(float) * (size_t)c.n * c.ldo);
            /* rows 0, 3, 64 and 66 alone, and 1 … 4 as a few */
            static const int alone[] = {0, 3, 64, 66};
            Case c1 = c;
            for (size_t q = 0; q < 4; q++) {
                c1.n = 1;
                c1.A = c.A + (size_t)alone[q] * c.lda;
                run(&c1, one, NULL, NULL, 1, 0, c.m);
                assert_memory_equal(one, whole + (size_t)alone[q] * c.ldo, sizeof(float) * c.m);
            }
            c1.n = 4;
            c1.A = c.A + (size_t)1 * c.lda;
            run(&c1, one, NULL, NULL, 1, 3, 30);
            for (int i = 0; i < 4; i++)
                assert_memory_equal(one + (size_t)i * c.ldo + 3,
                                    whole + (size_t)(1 + i) * c.ldo + 3, sizeof(float) * 27);
            /* avx512 the same as avx2 */
            if (strcmp(SETS[s], "avx2") == 0) {
                first[t] = malloc(sizeof(float) * (size_t)c.n * c.ldo);
                assert_non_null(first[t]);
                memcpy(first[t], whole, sizeof(float) * (size_t)c.n * c.ldo);
            } else if (strcmp(SETS[s], "avx512") == 0 && first[t] &&
                       memcmp(first[t], whole, sizeof(float) * (size_t)c.n * c.ldo) != 0)
                fail_msg("%s: avx512's floats differ from avx2's", qtype_name(c.id));
            /* a perm against the rows moved */
            int32_t perm[37];
            uint8_t *moved = malloc(c.rb * c.m);
            assert_non_null(moved);
            for (int j = 0; j < c.m; j++) {
                perm[j] = (j * 5 + 3) % c.m;
                memcpy(moved + (size_t)j * c.rb, c.w + (size_t)perm[j] * c.rb, c.rb);
            }
            run(&c, whole, perm, NULL, 1, 0, c.m);
            run(&c, split, NULL, moved, 1, 0, c.m);
            assert_memory_equal(whole, split, sizeof(float) * (size_t)c.n * c.ldo);
            free(moved);
            free(whole);
            free(split);
            free(one);
            case_free(&c);
        }
    }
    for (int t = 0; t < N_TYPES; t++)
        free(first[t]);
}

/* a matrix of the fixtures' ggml blocks (8 rows, used through a perm as 19
 * columns): the sum against the double reference of ggml's floats */
static void test_linear_ggml_blocks(void **state)
{
    (void)state;
    rng_seed(38);
    for (int t = 0; t < N_TYPES; t++) {
        if (!TYPES[t].file)
            continue;
        char path[256];
        size_t nb, nf;
        snprintf(path, sizeof path, "tests/fixtures/quant/%s.blocks", TYPES[t].file);
        uint8_t *blocks = read_file(path, &nb);
        snprintf(path, sizeof path, "tests/fixtures/quant/%s.f32", TYPES[t].file);
        float *want = read_file(path, &nf);
        const int k = 512, m = 19, n = 3;
        size_t rb = qtype_row_bytes(TYPES[t].id, k);
        int32_t perm[19];
        for (int j = 0; j < m; j++)
            perm[j] = (j * 3 + 1) % 8;
        float *A = rand_matrix(n, k, -1, 1), out[3 * 19];
        quant_linear_cols(out, m, A, k, TYPES[t].id, blocks, rb, perm, NULL, n, k, 0, m);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++) {
                double s = 0, mag = 0;
                for (int p = 0; p < k; p++) {
                    double v = (double)A[i * k + p] * want[(size_t)perm[j] * k + p];
                    s += v;
                    mag += fabs(v);
                }
                if (isnan(s))
                    assert_true(isnan(out[i * m + j]));
                else if (!(fabs(out[i * m + j] - s) <= 1e-6 * mag))
                    fail_msg("%s: out[%d][%d] = %.9g, ggml's floats give %.9g", TYPES[t].name, i,
                             j, (double)out[i * m + j], s);
            }
        free(A);
        free(want);
        free(blocks);
    }
}

int main(void)
{
    start_set = lm_kernels();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_names_sizes, restore_set),
        cmocka_unit_test_teardown(test_to_f32_ggml, restore_set),
        cmocka_unit_test_teardown(test_f16_all, restore_set),
        cmocka_unit_test_teardown(test_linear_sum, restore_set),
        cmocka_unit_test_teardown(test_linear_one_hot, restore_set),
        cmocka_unit_test_teardown(test_linear_same_floats, restore_set),
        cmocka_unit_test_teardown(test_linear_ggml_blocks, restore_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
