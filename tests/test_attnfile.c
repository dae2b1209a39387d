/* Tests for attention files' core (src/core/attnfile.c): AttnFiles built by
 * hand over buffers written here (no file): every dtype, both byte orders
 * (bytes written by shifts here), C and Fortran order (storage positions
 * counted by the test's own loops), one part or a part per layer, unaligned
 * data; f16 and bf16 against decoders written here; averages and the rollout
 * against a naive double-precision reference; dropping tokens; labels; NaN. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnfile.h"

/* ---- the test's own random numbers (splitmix64) --------------------------- */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double urand(void)
{
    return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* k/256 for k in [0, 256): exact in every dtype */
static double exact_rand(void)
{
    return (double)(rng_next() % 256) / 256.0;
}

/* ---- reference decoders ---------------------------------------------------- */

static double ref_f16(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

static double ref_bf16(uint16_t b)
{
    int s = b >> 15, e = (b >> 7) & 255, m = b & 127;
    double v;
    if (e == 0)
        v = ldexp(m, -133);
    else if (e == 255)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(128 + m, e - 134);
    return s ? -v : v;
}

/* The f16 bits of a value f16 holds exactly (checked). */
static uint16_t f16_encode(double v)
{
    uint16_t s = v < 0 ? 0x8000 : 0;
    double a = fabs(v);
    if (a == 0)
        return s;
    int e;
    double m = frexp(a, &e); /* a = m·2^e, m in [0.5, 1) */
    int E = e - 1 + 15;
    uint16_t bits;
    if (E <= 0)
        bits = (uint16_t)(s | (uint16_t)ldexp(a, 24));
    else
        bits = (uint16_t)(s | (E << 10) | (uint16_t)((2 * m - 1) * 1024));
    assert_true(ref_f16(bits) == v);
    return bits;
}

/* ---- AttnFiles by hand ------------------------------------------------------ */

/* v as a dtype's bits, written most or least significant byte first. */
static void put(unsigned char *p, AttnDtype t, double v, int be)
{
    uint64_t u = 0;
    int n = attn_dtype_size(t);
    if (t == ATTN_DT_F16) {
        u = f16_encode(v);
    } else if (t == ATTN_DT_BF16) {
        float x = (float)v;
        uint32_t b;
        memcpy(&b, &x, 4);
        assert_true((b & 0xffff) == 0); /* exact in bfloat16 */
        u = b >> 16;
    } else if (t == ATTN_DT_F32) {
        float x = (float)v;
        uint32_t b;
        memcpy(&b, &x, 4);
        u = b;
    } else {
        memcpy(&u, &v, 8);
    }
    for (int k = 0; k < n; k++)
        p[k] = (unsigned char)(u >> (8 * (be ? n - 1 - k : k)));
}

/* ref is (L, H, Tq, Tk) in C order. The file: one part of L layers, or L
 * parts of one (per_layer); each part's data at an odd address; f->buf holds
 * the storage (free f->buf, then f). */
static AttnFile *build(const double *ref, int L, int H, int Tq, int Tk, AttnDtype t, int be,
                       int fortran, int per_layer)
{
    AttnFile *f = calloc(1, sizeof *f);
    assert_non_null(f);
    const int es = attn_dtype_size(t), n_parts = per_layer ? L : 1, PL = per_layer ? 1 : L;
    const size_t part_bytes = (size_t)PL * H * Tq * Tk * es + 8;
    unsigned char *mem = malloc(part_bytes * n_parts);
    assert_non_null(mem);
    f->buf = mem;
    f->n_parts = n_parts;
    f->L = L, f->H = H, f->Tq = Tq, f->Tk = Tk;
    for (int k = 0; k < n_parts; k++) {
        unsigned char *d = mem + part_bytes * k + 1 + 2 * (k % 3);
        AttnPart *p = &f->parts[k];
        p->data = d;
        p->dtype = t, p->big_endian = be, p->fortran = fortran;
        p->L = PL, p->H = H, p->Tq = Tq, p->Tk = Tk;
        size_t pos = 0; /* the storage position, counted in storage order */
        if (!fortran) {
            for (int l = 0; l < PL; l++)
                for (int h = 0; h < H; h++)
                    for (int i = 0; i < Tq; i++)
                        for (int j = 0; j < Tk; j++)
                            put(d + es * pos++, t,
                                ref[(((size_t)(k * PL + l) * H + h) * Tq + i) * Tk + j], be);
        } else {
            for (int j = 0; j < Tk; j++)
                for (int i = 0; i < Tq; i++)
                    for (int h = 0; h < H; h++)
                        for (int l = 0; l < PL; l++)
                            put(d + es * pos++, t,
                                ref[(((size_t)(k * PL + l) * H + h) * Tq + i) * Tk + j], be);
        }
    }
    return f;
}

static void destroy(AttnFile *f)
{
    free(f->buf);
    free(f);
}

static double *ref_values(int n, int exact)
{
    double *r = malloc(sizeof(double) * n);
    assert_non_null(r);
    for (int k = 0; k < n; k++)
        r[k] = exact ? exact_rand() : urand();
    return r;
}

/* ---- dtypes ------------------------------------------------------------------- */

static void test_dtypes(void **state)
{
    (void)state;
    assert_int_equal(attn_dtype_size(ATTN_DT_F16), 2);
    assert_int_equal(attn_dtype_size(ATTN_DT_BF16), 2);
    assert_int_equal(attn_dtype_size(ATTN_DT_F32), 4);
    assert_int_equal(attn_dtype_size(ATTN_DT_F64), 8);
    assert_string_equal(attn_dtype_name(ATTN_DT_F16), "float16");
    assert_string_equal(attn_dtype_name(ATTN_DT_BF16), "bfloat16");
    assert_string_equal(attn_dtype_name(ATTN_DT_F32), "float32");
    assert_string_equal(attn_dtype_name(ATTN_DT_F64), "float64");
}

static void test_f16_every_value(void **state)
{
    (void)state;
    int bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        double want = ref_f16((uint16_t)b);
        float got = attn_f16_to_float((uint16_t)b);
        int ok = isnan(want) ? isnan(got) : (got == want && !signbit(got) == !signbit(want));
        if (!ok && bad++ < 5)
            fprintf(stderr, "f16 %04x: got %.9g, want %.9g\n", b, got, want);
    }
    assert_int_equal(bad, 0);
    assert_true(attn_f16_to_float(0x3c00) == 1.0f);
    assert_true(attn_f16_to_float(0x0001) == 0x1p-24f);
    assert_true(attn_f16_to_float(0xfc00) == -INFINITY);
}

static void test_bf16_every_value(void **state)
{
    (void)state;
    int bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        double want = ref_bf16((uint16_t)b);
        float got = attn_bf16_to_float((uint16_t)b);
        int ok = isnan(want) ? isnan(got) : (got == want && !signbit(got) == !signbit(want));
        if (!ok && bad++ < 5)
            fprintf(stderr, "bf16 %04x: got %.9g, want %.9g\n", b, got, want);
    }
    assert_int_equal(bad, 0);
    assert_true(attn_bf16_to_float(0x3f80) == 1.0f);
    assert_true(attn_bf16_to_float(0xc040) == -3.0f);
}

/* ---- elements and maps in every layout ---------------------------------------- */

/* want (Tq×Tk) = the map the test computes from ref for pick. */
static void ref_map(const double *ref, int L, int H, int Tq, int Tk, AttnPick pick, int layer,
                    int head, double *want)
{
    const size_t n = (size_t)Tq * Tk;
    int cnt = 0;
    memset(want, 0, sizeof(double) * n);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            int use = pick == ATTN_PICK_HEAD           ? l == layer && h == head
                      : pick == ATTN_PICK_LAYER_AVG    ? l == layer
                      : pick == ATTN_PICK_HEAD_ALL_AVG ? h == head
                                                       : 1;
            if (!use)
                continue;
            cnt++;
            for (size_t k = 0; k < n; k++)
                want[k] += ref[((size_t)l * H + h) * n + k];
        }
    for (size_t k = 0; k < n; k++)
        want[k] /= cnt;
}

static void check_layout(AttnDtype t, int be, int fortran, int per_layer)
{
    enum { L = 3, H = 2, Tq = 4, Tk = 5 };
    double *ref = ref_values(L * H * Tq * Tk, 1);
    AttnFile *f = build(ref, L, H, Tq, Tk, t, be, fortran, per_layer);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Tq; i++)
                for (int j = 0; j < Tk; j++)
                    assert_true(attn_file_at(f, l, h, i, j) ==
                                (float)ref[((l * H + h) * Tq + i) * Tk + j]);
    float out[Tq * Tk];
    double want[Tq * Tk];
    for (AttnPick pick = ATTN_PICK_HEAD; pick <= ATTN_PICK_ALL_AVG; pick++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                assert_int_equal(attn_file_map(f, pick, l, h, out), 0);
                ref_map(ref, L, H, Tq, Tk, pick, l, h, want);
                for (int k = 0; k < Tq * Tk; k++)
                    assert_true(fabs(out[k] - want[k]) < 1e-6);
            }
    destroy(f);
    free(ref);
}

static void test_layouts(void **state)
{
    (void)state;
    rng_state = 11;
    for (AttnDtype t = 0; t < ATTN_DT_COUNT; t++)
        for (int be = 0; be < 2; be++)
            for (int fortran = 0; fortran < 2; fortran++)
                for (int per_layer = 0; per_layer < 2; per_layer++)
                    check_layout(t, be, fortran, per_layer);
}

/* Averages are computed in double from float64 values as stored: maps
 * (0,0) = 1e8 + x and (0,1) = y − 1e8 average to (x + y + …)/n, which a
 * float sum (or a float conversion first) would lose. */
static void test_averages_double(void **state)
{
    (void)state;
    enum { L = 4, H = 3, T = 6 };
    rng_state = 5;
    double *ref = ref_values(L * H * T * T, 0);
    for (int k = 0; k < T * T; k++) {
        ref[k] += 1e8;
        ref[T * T + k] -= 1e8;
    }
    AttnFile *f = build(ref, L, H, T, T, ATTN_DT_F64, 0, 0, 0);
    float out[T * T];
    double want[T * T];
    const AttnPick picks[2] = {ATTN_PICK_ALL_AVG, ATTN_PICK_LAYER_AVG};
    for (int p = 0; p < 2; p++) {
        assert_int_equal(attn_file_map(f, picks[p], 0, 0, out), 0);
        ref_map(ref, L, H, T, T, picks[p], 0, 0, want);
        for (int k = 0; k < T * T; k++)
            assert_true(fabs(out[k] - want[k]) < 1e-6);
    }
    destroy(f);
    free(ref);
}

static void test_out_of_range(void **state)
{
    (void)state;
    enum { L = 2, H = 2, Tq = 3, Tk = 4 };
    rng_state = 3;
    double *ref = ref_values(L * H * Tq * Tk, 1);
    AttnFile *f = build(ref, L, H, Tq, Tk, ATTN_DT_F32, 0, 0, 1);
    float out[Tq * Tk];
    assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD, L, 0, out), -ATTN_E_RANGE);
    assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD, -1, 0, out), -ATTN_E_RANGE);
    assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD, 0, H, out), -ATTN_E_RANGE);
    assert_int_equal(attn_file_map(f, ATTN_PICK_LAYER_AVG, L, 0, out), -ATTN_E_RANGE);
    assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD_ALL_AVG, 0, -1, out), -ATTN_E_RANGE);
    assert_int_equal(attn_file_map(f, (AttnPick)99, 0, 0, out), -ATTN_E_RANGE);
    /* a rollout of a non-square map is an error */
    assert_int_equal(attn_file_map(f, ATTN_PICK_ROLLOUT, 0, 0, out), -ATTN_E_SHAPE);
    /* what the pick does not use is not checked */
    assert_int_equal(attn_file_map(f, ATTN_PICK_ALL_AVG, 99, 99, out), 0);
    assert_int_equal(attn_file_map(f, ATTN_PICK_LAYER_AVG, 1, 99, out), 0);
    assert_true(isnan(attn_file_at(f, L, 0, 0, 0)));
    assert_true(isnan(attn_file_at(f, -1, 0, 0, 0)));
    assert_true(isnan(attn_file_at(f, 0, -1, 0, 0)));
    assert_true(isnan(attn_file_at(f, 0, 0, Tq, 0)));
    assert_true(isnan(attn_file_at(f, 0, 0, 0, Tk)));
    /* parts holding fewer layers than the file says */
    f->L = L + 1;
    assert_int_equal(attn_file_map(f, ATTN_PICK_ALL_AVG, 0, 0, out), -ATTN_E_SHAPE);
    f->L = L;
    f->parts[1].fortran = 1;
    f->L = L + 1;
    assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD_ALL_AVG, 0, 0, out), -ATTN_E_SHAPE);
    f->L = L;
    /* a part whose maps are not the file's size */
    f->parts[1].Tk = Tk - 1;
    assert_int_equal(attn_file_map(f, ATTN_PICK_ALL_AVG, 0, 0, out), -ATTN_E_SHAPE);
    assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD, 1, 0, out), -ATTN_E_SHAPE);
    assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD, 0, 0, out), 0);
    destroy(f);
    free(ref);
}

/* ---- the rollout --------------------------------------------------------------- */

/* R through layer, naively: Ā_l = ½·mean_h A + ½·I, rows renormalised;
 * R = Ā_layer · … · Ā_0. */
static void ref_rollout(const double *ref, int L, int H, int T, int layer, double *R)
{
    (void)L;
    double *A = malloc(sizeof(double) * T * T), *N = malloc(sizeof(double) * T * T);
    assert_non_null(A);
    assert_non_null(N);
    for (int l = 0; l <= layer; l++) {
        for (int i = 0; i < T; i++) {
            double s = 0;
            for (int j = 0; j < T; j++) {
                double m = 0;
                for (int h = 0; h < H; h++)
                    m += ref[(((size_t)l * H + h) * T + i) * T + j];
                A[i * T + j] = 0.5 * m / H + (i == j ? 0.5 : 0);
                s += A[i * T + j];
            }
            for (int j = 0; j < T; j++)
                A[i * T + j] /= s;
        }
        if (l == 0) {
            memcpy(R, A, sizeof(double) * T * T);
            continue;
        }
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                double s = 0;
                for (int k = 0; k < T; k++)
                    s += A[i * T + k] * R[k * T + j];
                N[i * T + j] = s;
            }
        memcpy(R, N, sizeof(double) * T * T);
    }
    free(A);
    free(N);
}

static void check_rollout(int L, int H, int T, AttnDtype t, int fortran, int per_layer)
{
    double *ref = malloc(sizeof(double) * L * H * T * T);
    assert_non_null(ref);
    for (int k = 0; k < L * H * T; k++) { /* rows of attention, not symmetric */
        double *row = ref + (size_t)k * T, s = 0;
        for (int j = 0; j < T; j++)
            s += row[j] = (t == ATTN_DT_F64 ? urand() : exact_rand()) + 1.0 / 256;
        for (int j = 0; t == ATTN_DT_F64 && j < T; j++)
            row[j] /= s; /* float64: rows summing to 1 */
    }
    AttnFile *f = build(ref, L, H, T, T, t, 0, fortran, per_layer);
    float *out = malloc(sizeof(float) * T * T);
    double *want = malloc(sizeof(double) * T * T);
    assert_non_null(out);
    assert_non_null(want);
    for (int layer = 0; layer < L; layer++) {
        assert_int_equal(attn_file_map(f, ATTN_PICK_ROLLOUT, layer, 0, out), 0);
        ref_rollout(ref, L, H, T, layer, want);
        for (int k = 0; k < T * T; k++)
            if (fabs(out[k] - want[k]) >= 1e-6)
                fail_msg("rollout layer %d, cell %d: %.9g, want %.9g", layer, k, out[k],
                         want[k]);
    }
    free(out);
    free(want);
    destroy(f);
    free(ref);
}

static void test_rollout(void **state)
{
    (void)state;
    rng_state = 2020;
    check_rollout(3, 2, 5, ATTN_DT_F64, 0, 0);
    check_rollout(3, 4, 5, ATTN_DT_F32, 1, 1);
    check_rollout(3, 3, 5, ATTN_DT_F16, 0, 1);
    check_rollout(4, 2, 11, ATTN_DT_F64, 0, 0);
    check_rollout(3, 2, 5, ATTN_DT_BF16, 1, 0);
    /* large enough for the product's two threads, rows left over in each half */
    check_rollout(3, 2, 103, ATTN_DT_F32, 0, 0);
}

/* A rollout differs from its reverse product: the order is checked. */
static void test_rollout_order(void **state)
{
    (void)state;
    enum { L = 2, H = 1, T = 3 };
    /* Ā_0 and Ā_1 from A_0, A_1: ones that do not commute */
    const double ref[L * H * T * T] = {1, 0, 0, 1, 0, 0, 1, 0, 0,  /* A_0: all to token 0 */
                                       0, 0, 1, 0, 0, 1, 0, 0, 1}; /* A_1: all to token 2 */
    AttnFile *f = build(ref, L, H, T, T, ATTN_DT_F64, 0, 0, 0);
    float out[T * T];
    double want[T * T];
    assert_int_equal(attn_file_map(f, ATTN_PICK_ROLLOUT, 1, 0, out), 0);
    ref_rollout(ref, L, H, T, 1, want);
    /* row 0 of Ā_1·Ā_0: Ā_1 row 0 = (½, 0, ½); Ā_0 rows (1,0,0), (½,½,0), (½,0,½) */
    assert_true(fabs(want[0] - 0.75) < 1e-12 && fabs(want[2] - 0.25) < 1e-12);
    for (int k = 0; k < T * T; k++)
        assert_true(fabs(out[k] - want[k]) < 1e-6);
    destroy(f);
}

/* ---- dropping tokens ------------------------------------------------------------ */

static void test_drop(void **state)
{
    (void)state;
    enum { Tq = 4, Tk = 5 };
    float v[Tq * Tk], orig[Tq * Tk];
    for (int k = 0; k < Tq * Tk; k++)
        orig[k] = v[k] = (float)(k + 1);
    for (int j = 0; j < Tk; j++) /* row 2 is zero where kept */
        orig[2 * Tk + j] = v[2 * Tk + j] = (j == 0 || j == 3) ? 5.0f : 0.0f;
    const unsigned char dq[Tq] = {0, 1, 0, 0}, dk[Tk] = {1, 0, 0, 1, 0};
    int q = Tq, k = Tk;
    attn_map_drop(v, &q, &k, dq, dk);
    assert_int_equal(q, 3);
    assert_int_equal(k, 3);
    const int rows[3] = {0, 2, 3}, cols[3] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        double s = 0, rs = 0;
        for (int j = 0; j < 3; j++) {
            s += v[i * 3 + j];
            rs += orig[rows[i] * Tk + cols[j]];
        }
        for (int j = 0; j < 3; j++) {
            double want = rs ? orig[rows[i] * Tk + cols[j]] / rs : 0;
            assert_true(fabs(v[i * 3 + j] - want) < 1e-6);
        }
        assert_true(rows[i] == 2 ? s == 0 : fabs(s - 1) < 1e-6);
    }
    /* nothing dropped: rows renormalised only */
    float w[6] = {1, 3, 0, 2, 2, 4};
    q = 2, k = 3;
    attn_map_drop(w, &q, &k, NULL, NULL);
    assert_int_equal(q, 2);
    assert_int_equal(k, 3);
    assert_true(fabsf(w[0] - 0.25f) < 1e-7f && fabsf(w[1] - 0.75f) < 1e-7f && w[2] == 0);
    assert_true(fabsf(w[3] - 0.25f) < 1e-7f && fabsf(w[5] - 0.5f) < 1e-7f);
}

/* ---- tokens ----------------------------------------------------------------------- */

static void test_tokens(void **state)
{
    (void)state;
    const char *special[] = {"[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]", "<s>",
                             "</s>",  "<pad>", "<unk>", "<mask>", "<|endoftext|>",
                             "<|begin_of_text|>", "<|im_start|>", "<|reserved_special_token_0|>"};
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
        assert_int_equal(attn_token_special(special[k]), 1);
    const char *plain[] = {"[cls]", "CLS", "<s", "<s> ", " <s>", "", "the", "[CLS]x", "<PAD>",
                           "<||>", "<|a b|>", "<|a|b|>", "x<|a|>", "<|a|>x", "<|>"};
    for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++)
        assert_int_equal(attn_token_special(plain[k]), 0);
    assert_int_equal(attn_token_special(NULL), 0);

    char buf[32];
    assert_string_equal(attn_token_shown("\xC4\xA0the", buf, sizeof buf), "the");
    assert_string_equal(attn_token_shown("\xE2\x96\x81the", buf, sizeof buf), "the");
    assert_string_equal(attn_token_shown("the", buf, sizeof buf), "the");
    assert_string_equal(attn_token_shown("[CLS]", buf, sizeof buf), "[CLS]");
    /* one marker only, only at the start */
    assert_string_equal(attn_token_shown("\xC4\xA0\xC4\xA0x", buf, sizeof buf), "\xC4\xA0x");
    assert_string_equal(attn_token_shown("x\xC4\xA0", buf, sizeof buf), "x\xC4\xA0");
    assert_string_equal(attn_token_shown("\xC4\xA1x", buf, sizeof buf), "\xC4\xA1x");
    assert_string_equal(attn_token_shown("\xE2\x96\x80x", buf, sizeof buf), "\xE2\x96\x80x");
    /* a token that is only the marker keeps it */
    assert_string_equal(attn_token_shown("\xE2\x96\x81", buf, sizeof buf), "\xE2\x96\x81");
    /* a short buffer never cuts a character */
    char small[4];
    assert_string_equal(attn_token_shown("h\xC3\xA9llo", small, 3), "h");
    assert_string_equal(attn_token_shown("h\xC3\xA9llo", small, 4), "h\xC3\xA9");
    assert_string_equal(attn_token_shown("\xE2\x96\x81\xE2\x82\xAC\xE2\x82\xAC", small, 4),
                        "\xE2\x82\xAC");
    assert_string_equal(attn_token_shown("abcdef", small, 4), "abc");
}

/* ---- NaN ---------------------------------------------------------------------------- */

static void check_nan(AttnDtype t, int be, int fortran, int per_layer, const int (*at)[4],
                      int n_at, const int want[4])
{
    enum { L = 3, H = 2, T = 3 };
    double ref[L * H * T * T];
    for (int k = 0; k < L * H * T * T; k++)
        ref[k] = 0.25;
    AttnFile *f = build(ref, L, H, T, T, t, be, fortran, per_layer);
    int pos[4] = {-1, -1, -1, -1};
    assert_int_equal(attn_file_find_nan(f, pos), 0);
    destroy(f);
    for (int k = 0; k < n_at; k++) /* NaN written after building: f16_encode checks */
        ref[((at[k][0] * H + at[k][1]) * T + at[k][2]) * T + at[k][3]] = 0.5;
    f = build(ref, L, H, T, T, t, be, fortran, per_layer);
    /* the 0.5s become NaNs: find their storage and overwrite it */
    int es = attn_dtype_size(t), nan_set = 0;
    for (int p = 0; p < f->n_parts; p++) {
        unsigned char *d = (unsigned char *)f->parts[p].data;
        size_t n = (size_t)f->parts[p].L * H * T * T;
        for (size_t x = 0; x < n; x++) {
            unsigned char half[8];
            put(half, t, 0.5, be);
            if (memcmp(d + x * es, half, es) == 0) {
                for (int b = 0; b < es; b++) /* all ones: a NaN in every dtype */
                    d[x * es + b] = 0xff;
                nan_set++;
            }
        }
    }
    assert_int_equal(nan_set, n_at);
    assert_int_equal(attn_file_find_nan(f, pos), 1);
    assert_memory_equal(pos, want, sizeof pos);
    for (int k = 0; k < n_at; k++)
        assert_true(isnan(attn_file_at(f, at[k][0], at[k][1], at[k][2], at[k][3])));
    destroy(f);
}

static void test_find_nan(void **state)
{
    (void)state;
    /* first in C order: (1,0,0,2); in Fortran order (l fastest, j slowest): (1,1,1,0) */
    const int two[2][4] = {{1, 0, 0, 2}, {1, 1, 1, 0}};
    const int c_first[4] = {1, 0, 0, 2}, f_first[4] = {1, 1, 1, 0};
    for (AttnDtype t = 0; t < ATTN_DT_COUNT; t++)
        for (int be = 0; be < 2; be++) {
            check_nan(t, be, 0, 0, two, 2, c_first);
            check_nan(t, be, 1, 0, two, 2, f_first);
            check_nan(t, be, 1, 1, two, 2, f_first);
        }
    /* across parts: the earlier part first, whatever the order within */
    const int across[2][4] = {{2, 0, 0, 0}, {1, 1, 2, 2}}, want[4] = {1, 1, 2, 2};
    check_nan(ATTN_DT_F32, 0, 0, 1, across, 2, want);
    /* Fortran within one part of 3 layers: l varies fastest */
    const int layers[2][4] = {{2, 0, 0, 0}, {0, 1, 0, 0}}, lw[4] = {2, 0, 0, 0};
    check_nan(ATTN_DT_F64, 1, 1, 0, layers, 2, lw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_f16_every_value),
        cmocka_unit_test(test_bf16_every_value),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_averages_double),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_rollout),
        cmocka_unit_test(test_rollout_order),
        cmocka_unit_test(test_drop),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_find_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
