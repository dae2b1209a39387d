/* Tests for the score functions of src/core/attn.c (issue 14): dot, cosine
 * and additive. An independent double-precision reference forward written
 * here (its own loops, cosine and tanh sums; it never calls attn_score_one)
 * against attn_forward over modes, heads, scaling, τ, the causal mask,
 * cross-attention, Tq = 1 and Tk = 1; cosine with zero vectors; additive
 * with saturated tanh and a v that is not the default; partial updates and
 * resizes bit for bit against a whole forward; the weights' set-up (v and vb
 * allocated, copied, compared, drawn after the older weights by a seed); the
 * formulas and the logit scale. Every test runs under each kernel set. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attn.h"
#include "attnviz/prng.h"

#include "test_rand.h"

/* ---- the reference: naive loops in double -------------------------------- */
typedef struct Ref {
    int Tq, Tk, d, h, dk;
    double *Q, *K, *V;  /* h × T × dk */
    double *S, *L, *W;  /* h × Tq × Tk */
    double *A;          /* Tq × Tk, mean of the heads' weights */
    double *Z;          /* h × Tq × dk */
    double *O;          /* Tq × d */
} Ref;

typedef struct Case {
    int score, learned, h, scale, causal;
    double tau;
    int Tq, Tk, d;
} Case;

static void ref_free(Ref *R)
{
    free(R->Q); free(R->K); free(R->V); free(R->S); free(R->L); free(R->W);
    free(R->A); free(R->Z); free(R->O);
    memset(R, 0, sizeof *R);
}

/* Project X (T×d) through head k's W (h × d × dk), or copy it (basic). */
static void ref_project(double *out, const float *X, int T, int d, int dk, const float *W,
                        int k, int learned)
{
    for (int i = 0; i < T; i++)
        for (int c = 0; c < dk; c++) {
            double s = 0;
            if (learned)
                for (int r = 0; r < d; r++)
                    s += (double)X[(size_t)i * d + r] * W[(size_t)k * d * dk + (size_t)r * dk + c];
            else
                s = X[(size_t)i * d + c];
            out[(size_t)i * dk + c] = s;
        }
}

/* The score of one pair, from the definitions. v: dk numbers. */
static double ref_score(int score, const double *q, const double *k, const double *v, int dk)
{
    double dot = 0, qq = 0, kk = 0, add = 0;
    for (int c = 0; c < dk; c++) {
        dot += q[c] * k[c];
        qq += q[c] * q[c];
        kk += k[c] * k[c];
        add += v[c] * tanh(q[c] + k[c]);
    }
    if (score == ATTN_SCORE_DOT)
        return dot;
    if (score == ATTN_SCORE_ADDITIVE)
        return add;
    return qq == 0 || kk == 0 ? 0.0 : dot / (sqrt(qq) * sqrt(kk));
}

/* The additive vector of head k: p->v (learned), p->vb (basic) or, in basic
 * mode without weights, 1/√d. */
static void ref_v(double *v, const AttnParams *p, const Case *c, int k, int dk)
{
    for (int i = 0; i < dk; i++)
        v[i] = c->learned ? p->v[(size_t)k * dk + i] : p ? p->vb[i] : 1.0 / sqrt((double)c->d);
}

static void ref_softmax(double *L, double *W, int Tk, int nv)
{
    double mx = -HUGE_VAL, sum = 0;
    for (int j = 0; j < nv; j++)
        mx = L[j] > mx ? L[j] : mx;
    for (int j = 0; j < nv; j++)
        sum += exp(L[j] - mx);
    for (int j = 0; j < Tk; j++)
        W[j] = j < nv ? exp(L[j] - mx) / sum : 0.0;
}

static void ref_run(Ref *R, const Case *c, const float *Xq, const float *Xkv, const AttnParams *p)
{
    int h = c->learned ? c->h : 1, d = c->d, dk = d / h, Tq = c->Tq, Tk = c->Tk;
    *R = (Ref){Tq, Tk, d, h, dk, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t nq = (size_t)h * Tq * dk + 1, nk = (size_t)h * Tk * dk + 1, nqk = (size_t)h * Tq * Tk + 1;
    R->Q = calloc(nq, sizeof(double));
    R->K = calloc(nk, sizeof(double));
    R->V = calloc(nk, sizeof(double));
    R->S = calloc(nqk, sizeof(double));
    R->L = calloc(nqk, sizeof(double));
    R->W = calloc(nqk, sizeof(double));
    R->A = calloc((size_t)Tq * Tk + 1, sizeof(double));
    R->Z = calloc(nq, sizeof(double));
    R->O = calloc((size_t)Tq * d + 1, sizeof(double));
    double *cat = calloc((size_t)Tq * d + 1, sizeof(double)), *v = calloc((size_t)dk, sizeof(double));
    assert_true(R->Q && R->K && R->V && R->S && R->L && R->W && R->A && R->Z && R->O && cat && v);
    double mult = (c->score == ATTN_SCORE_DOT && c->scale ? 1.0 / sqrt((double)dk) : 1.0) / c->tau;
    for (int k = 0; k < h; k++) {
        double *Q = R->Q + (size_t)k * Tq * dk, *K = R->K + (size_t)k * Tk * dk,
               *V = R->V + (size_t)k * Tk * dk, *Z = R->Z + (size_t)k * Tq * dk;
        ref_project(Q, Xq, Tq, d, dk, c->learned ? p->Wq : NULL, k, c->learned);
        ref_project(K, Xkv, Tk, d, dk, c->learned ? p->Wk : NULL, k, c->learned);
        ref_project(V, Xkv, Tk, d, dk, c->learned ? p->Wv : NULL, k, c->learned);
        ref_v(v, p, c, k, dk);
        for (int i = 0; i < Tq; i++) {
            size_t o = ((size_t)k * Tq + i) * Tk;
            for (int j = 0; j < Tk; j++) {
                R->S[o + j] = ref_score(c->score, Q + (size_t)i * dk, K + (size_t)j * dk, v, dk);
                R->L[o + j] = R->S[o + j] * mult;
            }
            int nv = c->causal ? (i + 1 < Tk ? i + 1 : Tk) : Tk;
            ref_softmax(R->L + o, R->W + o, Tk, nv);
            for (int e = 0; e < dk; e++) {
                double s = 0;
                for (int j = 0; j < Tk; j++)
                    s += R->W[o + j] * V[(size_t)j * dk + e];
                Z[(size_t)i * dk + e] = s;
                cat[(size_t)i * d + k * dk + e] = s;
            }
            for (int j = 0; j < Tk; j++)
                R->A[(size_t)i * Tk + j] += R->W[o + j] / h;
        }
    }
    for (int i = 0; i < Tq; i++)
        for (int e = 0; e < d; e++) {
            double s = 0;
            if (c->learned)
                for (int r = 0; r < d; r++)
                    s += cat[(size_t)i * d + r] * p->Wo[(size_t)r * d + e];
            else
                s = cat[(size_t)i * d + e];
            R->O[(size_t)i * d + e] = s;
        }
    free(cat);
    free(v);
}

/* Max error, absolute for |want| <= 1 and relative above; NaN fails. */
static int close_arr(const char *what, const char *ctx, const float *got, const double *want,
                     size_t n, double tol)
{
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / fmax(1.0, fabs(want[i]));
        if (isnan(e))
            e = INFINITY;
        if (e > worst)
            worst = e, at = i;
    }
    if (!(worst < tol)) {
        print_error("%s [%s]: max error %g at %zu (got %.9g, want %.9g)\n", what, ctx, worst, at,
                    (double)got[at], want[at]);
        return 0;
    }
    return 1;
}

static const char *case_str(char *buf, size_t n, const Case *c)
{
    snprintf(buf, n, "%s %s h=%d scale=%d causal=%d tau=%g Tq=%d Tk=%d d=%d",
             attn_score_name(c->score), c->learned ? "learned" : "basic", c->h, c->scale,
             c->causal, c->tau, c->Tq, c->Tk, c->d);
    return buf;
}

static AttnConfig case_cfg(const Case *c)
{
    AttnConfig cfg = attn_config_default();
    cfg.mode = c->learned ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
    cfg.heads = c->learned ? c->h : 1;
    cfg.scale = c->scale;
    cfg.causal = c->causal;
    cfg.temperature = (float)c->tau;
    cfg.score = c->score;
    return cfg;
}

/* The forward's arrays against the reference; the stored scores also equal
 * attn_score_one of the stored Q and K rows bit for bit (the step view's
 * numbers), and the logits scores · attn_logit_scale. */
static int check_forward(const AttnResult *r, const Ref *R, const Case *c, const AttnParams *p)
{
    char ctx[160];
    case_str(ctx, sizeof ctx, c);
    size_t q = (size_t)R->h * R->Tq * R->dk, k = (size_t)R->h * R->Tk * R->dk,
           qk = (size_t)R->h * R->Tq * R->Tk;
    assert_int_equal(r->Tq, R->Tq);
    assert_int_equal(r->Tk, R->Tk);
    assert_int_equal(r->h, R->h);
    double tol = 2e-5 / fmin(1.0, c->tau), vmax = 1.0;
    for (size_t e = 0; e < k; e++) /* Z and the output: error relative to V's scale */
        vmax = fmax(vmax, fabs(R->V[e]));
    int ok = close_arr("Q", ctx, r->Q, R->Q, q, 1e-5) & close_arr("K", ctx, r->K, R->K, k, 1e-5) &
             close_arr("V", ctx, r->V, R->V, k, 1e-5) &
             close_arr("scores", ctx, r->scores, R->S, qk, 2e-5) &
             close_arr("logits", ctx, r->logits, R->L, qk, tol) &
             close_arr("weights", ctx, r->weights, R->W, qk, tol) &
             close_arr("avg", ctx, r->avg, R->A, (size_t)R->Tq * R->Tk, tol) &
             close_arr("Z", ctx, r->Z, R->Z, q, tol * vmax) &
             close_arr("output", ctx, r->output, R->O, (size_t)R->Tq * R->d, tol * vmax);
    AttnConfig cfg = case_cfg(c);
    float mult = attn_logit_scale(&cfg, r->dk);
    for (int h = 0; h < r->h; h++) {
        const float *v = c->learned ? p->v + (size_t)h * r->dk : p ? p->vb : NULL;
        for (int i = 0; i < r->Tq; i++)
            for (int j = 0; j < r->Tk; j++) {
                size_t o = ((size_t)h * r->Tq + i) * r->Tk + j;
                float s = attn_score_one(c->score, r->Q + ((size_t)h * r->Tq + i) * r->dk,
                                         r->K + ((size_t)h * r->Tk + j) * r->dk, v, r->dk);
                float l = r->scores[o] * mult;
                if (memcmp(&s, &r->scores[o], sizeof s) != 0 || memcmp(&l, &r->logits[o], sizeof l)) {
                    print_error("%s: head %d (%d, %d): stored score %.9g logit %.9g, "
                                "attn_score_one %.9g\n", ctx, h, i, j, (double)r->scores[o],
                                (double)r->logits[o], (double)s);
                    return 0;
                }
            }
    }
    return ok;
}

/* One case: fresh weights (seeded, so v is not the default), inputs in
 * [-lo, lo] (cross-attention when Xq and Xkv differ), forward, compare. */
static int run_case(const Case *c, uint64_t seed, double amp, int with_params)
{
    AttnParams p;
    assert_int_equal(attn_params_create(&p, c->d, c->learned ? c->h : 1), 0);
    attn_params_xavier(&p, seed);
    rng_state = seed * 977 + (uint64_t)c->Tq * 31 + (uint64_t)c->Tk;
    float *Xq = rand_matrix(c->Tq, c->d, -amp, amp);
    float *Xk = c->Tq == c->Tk && seed % 2 ? Xq : rand_matrix(c->Tk, c->d, -amp, amp);
    AttnConfig cfg = case_cfg(c);
    AttnResult r;
    attn_result_init(&r);
    const AttnParams *pp = with_params ? &p : NULL;
    assert_int_equal(attn_forward(&r, Xq, c->Tq, Xk, c->Tk, c->d, pp, &cfg), 0);
    Ref R;
    ref_run(&R, c, Xq, Xk, pp);
    int ok = check_forward(&r, &R, c, pp);
    ref_free(&R);
    attn_result_destroy(&r);
    if (Xk != Xq)
        free(Xk);
    free(Xq);
    attn_params_destroy(&p);
    return ok;
}

/* ---- forward against the reference -------------------------------------- */

static void test_forward_vs_reference(void **state)
{
    (void)state;
    static const int shapes[][2] = {{1, 1}, {1, 7}, {6, 1}, {5, 5}, {9, 13}, {17, 17}, {12, 4}};
    static const double taus[] = {1.0, 0.25, 3.0};
    int n = 0;
    for (int score = 0; score < ATTN_SCORE_COUNT; score++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int v = 0; v < 12; v++) {
                Case c = {score, v % 4 != 3, v % 3 == 0 ? 1 : v % 3 == 1 ? 2 : 4, v % 2,
                          v / 2 % 2, taus[v % 3], shapes[s][0], shapes[s][1], v % 5 == 4 ? 12 : 16};
                int ok = run_case(&c, 100 + (uint64_t)v + 17 * s, 1.5, 1);
                if (!ok)
                    fail_msg("%s: the forward differs from the reference", attn_score_name(score));
                n++;
            }
    assert_int_equal(n, 3 * 7 * 12);
}

/* Large enough for the two-thread split (h·Tq·Tk·dk >= 2^22). */
static void test_forward_two_threads(void **state)
{
    (void)state;
    for (int score = 0; score < ATTN_SCORE_COUNT; score++) {
        Case c = {score, 1, 2, 1, score == 1, 0.5, 130, 140, 128};
        if (!run_case(&c, 7, 1.0, 1))
            fail_msg("%s: a large forward differs from the reference", attn_score_name(score));
    }
}

/* Basic mode: q = k = x; additive uses vb, or 1/√d when p is NULL. */
static void test_basic_mode(void **state)
{
    (void)state;
    for (int score = 0; score < ATTN_SCORE_COUNT; score++)
        for (int w = 0; w < 2; w++)
            for (int causal = 0; causal < 2; causal++) {
                Case c = {score, 0, 1, 1, causal, 0.5, 7, 9, 10};
                if (!run_case(&c, 3 + (uint64_t)w, 1.0, w))
                    fail_msg("%s basic, params %d: differs from the reference",
                             attn_score_name(score), w);
            }
}

/* The √dk switch applies to dot only: cosine and additive give the same
 * floats either way, dot does not. */
static void test_scale_switch(void **state)
{
    (void)state;
    const int T = 6, d = 16;
    AttnParams p;
    assert_int_equal(attn_params_create(&p, d, 2), 0);
    attn_params_xavier(&p, 11);
    rng_state = 5;
    float *X = rand_matrix(T, d, -2, 2);
    for (int score = 0; score < ATTN_SCORE_COUNT; score++) {
        AttnConfig cfg = attn_config_default();
        cfg.score = score;
        cfg.temperature = 0.7f;
        AttnResult a, b;
        attn_result_init(&a);
        attn_result_init(&b);
        assert_int_equal(attn_forward(&a, X, T, X, T, d, &p, &cfg), 0);
        cfg.scale = 0;
        assert_int_equal(attn_forward(&b, X, T, X, T, d, &p, &cfg), 0);
        size_t n = (size_t)2 * T * T;
        int same = memcmp(a.weights, b.weights, n * sizeof(float)) == 0 &&
                   memcmp(a.logits, b.logits, n * sizeof(float)) == 0 &&
                   memcmp(a.output, b.output, (size_t)T * d * sizeof(float)) == 0;
        assert_memory_equal(a.scores, b.scores, n * sizeof(float));
        if (same != (score != ATTN_SCORE_DOT))
            fail_msg("%s: the scale switch %s", attn_score_name(score),
                     same ? "changed nothing" : "changed the weights");
        attn_result_destroy(&a);
        attn_result_destroy(&b);
    }
    free(X);
    attn_params_destroy(&p);
}

/* Cosine with a zero query and a zero key (x rows of 0, so q and k are 0):
 * their scores are exactly 0, the weights finite and rows sum to 1. */
static void test_cosine_zero_vectors(void **state)
{
    (void)state;
    const int T = 5, d = 8;
    for (int learned = 0; learned < 2; learned++) {
        AttnParams p;
        assert_int_equal(attn_params_create(&p, d, learned ? 2 : 1), 0);
        attn_params_xavier(&p, 21);
        rng_state = 9;
        float *Xq = rand_matrix(T, d, -1, 1), *Xk = rand_matrix(T + 1, d, -1, 1);
        memset(Xq + 2 * d, 0, d * sizeof(float)); /* query 2 */
        memset(Xk + 4 * d, 0, d * sizeof(float)); /* key 4 */
        AttnConfig cfg = attn_config_default();
        cfg.mode = learned ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
        cfg.score = ATTN_SCORE_COSINE;
        cfg.temperature = 0.1f;
        AttnResult r;
        attn_result_init(&r);
        assert_int_equal(attn_forward(&r, Xq, T, Xk, T + 1, d, &p, &cfg), 0);
        for (int h = 0; h < r.h; h++)
            for (int i = 0; i < T; i++) {
                double sum = 0;
                for (int j = 0; j < T + 1; j++) {
                    size_t o = ((size_t)h * T + i) * (T + 1) + j;
                    if (i == 2 || j == 4)
                        assert_true(r.scores[o] == 0.0f);
                    assert_true(isfinite(r.weights[o]));
                    assert_true(r.scores[o] >= -1.0f && r.scores[o] <= 1.0f);
                    sum += r.weights[o];
                }
                assert_true(fabs(sum - 1.0) < 1e-5);
            }
        Case c = {ATTN_SCORE_COSINE, learned, learned ? 2 : 1, 1, 0, 0.1, T, T + 1, d};
        Ref R;
        ref_run(&R, &c, Xq, Xk, &p);
        assert_true(check_forward(&r, &R, &c, &p));
        ref_free(&R);
        float z[8] = {0}, one[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        assert_true(attn_score_one(ATTN_SCORE_COSINE, z, one, NULL, 8) == 0.0f);
        assert_true(attn_score_one(ATTN_SCORE_COSINE, one, z, NULL, 8) == 0.0f);
        assert_true(attn_score_one(ATTN_SCORE_COSINE, z, z, NULL, 8) == 0.0f);
        assert_true(attn_score_one(ATTN_SCORE_COSINE, one, one, NULL, 8) == 1.0f);
        attn_result_destroy(&r);
        free(Xq);
        free(Xk);
        attn_params_destroy(&p);
    }
}

/* Additive with inputs of ±50 (tanh saturated at ±1) and a v that is not
 * the default, learned and basic, against the reference. */
static void test_additive_saturated(void **state)
{
    (void)state;
    const int T = 6, d = 8;
    for (int learned = 0; learned < 2; learned++) {
        AttnParams p;
        assert_int_equal(attn_params_create(&p, d, 2), 0);
        attn_params_xavier(&p, 4);
        for (int c = 0; c < d; c++) {
            p.v[c] = (float)(c % 3) - 1.25f;
            p.vb[c] = 0.5f - (float)c * 0.3f;
        }
        if (!learned) {
            attn_params_destroy(&p);
            assert_int_equal(attn_params_create(&p, d, 1), 0);
            for (int c = 0; c < d; c++)
                p.vb[c] = 0.5f - (float)c * 0.3f;
        }
        rng_state = 33;
        float *X = malloc((size_t)T * d * sizeof(float));
        assert_non_null(X);
        for (int i = 0; i < T * d; i++)
            X[i] = rng_next() % 2 ? 50.0f : -50.0f;
        AttnConfig cfg = attn_config_default();
        cfg.mode = learned ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
        cfg.score = ATTN_SCORE_ADDITIVE;
        cfg.causal = 1;
        AttnResult r;
        attn_result_init(&r);
        assert_int_equal(attn_forward(&r, X, T, X, T, d, &p, &cfg), 0);
        Case c = {ATTN_SCORE_ADDITIVE, learned, learned ? 2 : 1, 1, 1, 1.0, T, T, d};
        Ref R;
        ref_run(&R, &c, X, X, &p);
        assert_true(check_forward(&r, &R, &c, &p));
        for (size_t e = 0; e < (size_t)r.h * T * T; e++)
            assert_true(isfinite(r.weights[e]));
        if (!learned) /* q + k is ±100 or 0: each term is ±vb[c] or 0 */
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double s = 0;
                    for (int e = 0; e < d; e++) {
                        float a = X[i * d + e], b = X[j * d + e];
                        s += a == b ? (a > 0 ? p.vb[e] : -p.vb[e]) : 0.0;
                    }
                    assert_true(fabs(r.scores[i * T + j] - s) < 1e-5);
                }
        ref_free(&R);
        attn_result_destroy(&r);
        free(X);
        attn_params_destroy(&p);
    }
}

/* ---- partial updates ------------------------------------------------------ */

static int same_result(const AttnResult *a, const AttnResult *b, const char *ctx)
{
    if (a->Tq != b->Tq || a->Tk != b->Tk || a->h != b->h || a->dk != b->dk)
        return 0;
    size_t hqk = (size_t)a->h * a->Tq * a->Tk, q = (size_t)a->Tq * a->d, k = (size_t)a->Tk * a->d;
    struct { const char *name; const float *x, *y; size_t n; } arr[] = {
        {"Q", a->Q, b->Q, q}, {"K", a->K, b->K, k}, {"V", a->V, b->V, k},
        {"scores", a->scores, b->scores, hqk}, {"weights", a->weights, b->weights, hqk},
        {"avg", a->avg, b->avg, a->avg && b->avg ? (size_t)a->Tq * a->Tk : 0}, {"Z", a->Z, b->Z, q},
        {"output", a->output, b->output, q},
        {"logits", a->logits, b->logits, a->logits && b->logits ? hqk : 0},
    };
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++)
        if (arr[i].n && memcmp(arr[i].x, arr[i].y, arr[i].n * sizeof(float)) != 0) {
            print_error("%s: %s differs from a whole forward\n", ctx, arr[i].name);
            return 0;
        }
    return 1;
}

/* attn_forward_update after changing rows: the same floats as a whole
 * forward, for every function, self and cross, causal or not. */
static void test_update_matches_full(void **state)
{
    (void)state;
    const int d = 16;
    static const int sizes[][2] = {{1, 1}, {7, 7}, {13, 13}, {9, 23}, {30, 6}};
    rng_state = 4242;
    for (int score = 0; score < ATTN_SCORE_COUNT; score++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int variant = 0; variant < 4; variant++) {
                int Tq = sizes[si][0], Tk = sizes[si][1], self = Tq == Tk;
                AttnConfig cfg = attn_config_default();
                cfg.score = score;
                cfg.mode = variant == 3 ? ATTN_MODE_BASIC : ATTN_MODE_LEARNED;
                cfg.causal = variant % 2;
                cfg.temperature = 0.5f;
                AttnParams p;
                assert_int_equal(attn_params_create(&p, d, variant == 3 ? 1 : 2), 0);
                attn_params_xavier(&p, 60 + (uint64_t)variant);
                float *Xq = rand_matrix(Tq, d, -2, 2), *Xk = self ? Xq : rand_matrix(Tk, d, -2, 2);
                AttnResult inc, full;
                attn_result_init(&inc);
                attn_result_init(&full);
                inc.skip_logits = full.skip_logits = variant == 2;
                assert_int_equal(attn_forward(&inc, Xq, Tq, Xk, Tk, d, &p, &cfg), 0);
                for (int step = 0; step < 5; step++) {
                    int ql = (int)(rng_next() % (uint64_t)Tq), qh = ql + 1;
                    int kl = self ? ql : (int)(rng_next() % (uint64_t)Tk), kh = self ? qh : kl + 1;
                    if (step == 1 && !self) /* a key row only */
                        ql = qh = 0;
                    for (int c = 0; c < d; c++) {
                        if (qh > ql)
                            Xq[(size_t)ql * d + c] = (float)urand(-2, 2);
                        if (!self)
                            Xk[(size_t)kl * d + c] = (float)urand(-2, 2);
                    }
                    assert_int_equal(attn_forward_update(&inc, Xq, Tq, Xk, Tk, d, &p, &cfg, ql, qh,
                                                         kl, kh), 0);
                    assert_int_equal(attn_forward(&full, Xq, Tq, Xk, Tk, d, &p, &cfg), 0);
                    char ctx[128];
                    snprintf(ctx, sizeof ctx, "%s Tq=%d Tk=%d variant %d step %d",
                             attn_score_name(score), Tq, Tk, variant, step);
                    if (!same_result(&inc, &full, ctx))
                        fail_msg("%s: the update differs from a whole forward", ctx);
                }
                attn_result_destroy(&inc);
                attn_result_destroy(&full);
                if (!self)
                    free(Xk);
                free(Xq);
                attn_params_destroy(&p);
            }
}

/* attn_forward_resize (words typed or deleted): the same floats as a whole
 * forward of the new inputs, for every function. */
static void test_resize_matches_full(void **state)
{
    (void)state;
    const int d = 16, MAXT = 40;
    rng_state = 777;
    for (int score = 0; score < ATTN_SCORE_COUNT; score++)
        for (int variant = 0; variant < 4; variant++) {
            int self = variant != 3;
            AttnConfig cfg = attn_config_default();
            cfg.score = score;
            cfg.causal = variant % 2;
            cfg.mode = variant == 2 ? ATTN_MODE_BASIC : ATTN_MODE_LEARNED;
            AttnParams p;
            assert_int_equal(attn_params_create(&p, d, variant == 2 ? 1 : 4), 0);
            attn_params_xavier(&p, 80 + (uint64_t)variant);
            float *Xq = rand_matrix(MAXT, d, -2, 2), *Xk = rand_matrix(MAXT, d, -2, 2);
            int Tq = 1 + (int)(rng_next() % 20), Tk = self ? Tq : 1 + (int)(rng_next() % 20);
            const float *xk = self ? Xq : Xk;
            AttnResult inc, full;
            attn_result_init(&inc);
            attn_result_init(&full);
            assert_int_equal(attn_forward(&inc, Xq, Tq, xk, Tk, d, &p, &cfg), 0);
            for (int step = 0; step < 10; step++) {
                int grow = step % 2 == 0, dq = 1 + (int)(rng_next() % 3);
                int nq = grow ? Tq + dq : Tq - dq, nk = self ? nq : grow ? Tk + 2 : Tk - 1;
                nq = nq < 1 ? 1 : nq > MAXT ? MAXT : nq;
                nk = self ? nq : nk < 1 ? 1 : nk > MAXT ? MAXT : nk;
                int kq = nq < Tq ? nq : Tq, kk = self ? kq : nk < Tk ? nk : Tk;
                for (int i = kq; i < nq; i++)
                    for (int c = 0; c < d; c++)
                        Xq[(size_t)i * d + c] = (float)urand(-2, 2);
                for (int i = kk; !self && i < nk; i++)
                    for (int c = 0; c < d; c++)
                        Xk[(size_t)i * d + c] = (float)urand(-2, 2);
                assert_int_equal(attn_forward_resize(&inc, Xq, nq, xk, nk, d, &p, &cfg, kq, kk), 0);
                assert_int_equal(attn_forward(&full, Xq, nq, xk, nk, d, &p, &cfg), 0);
                char ctx[128];
                snprintf(ctx, sizeof ctx, "%s variant %d step %d: Tq %d->%d Tk %d->%d",
                         attn_score_name(score), variant, step, Tq, nq, Tk, nk);
                if (!same_result(&inc, &full, ctx))
                    fail_msg("%s: the resize differs from a whole forward", ctx);
                Tq = nq;
                Tk = nk;
            }
            attn_result_destroy(&inc);
            attn_result_destroy(&full);
            free(Xq);
            free(Xk);
            attn_params_destroy(&p);
        }
}

/* ---- the weights ---------------------------------------------------------- */

/* Xavier from prng.h in the order before v existed (Wq, Wk, Wv of each head,
 * then Wo), then v head by head and vb: a v drawn earlier would shift every
 * weight after it and fail here. */
static void xavier_expect(float *W, int rows, int cols, Prng *g)
{
    float lim = sqrtf(6.0f / (float)(rows + cols));
    for (int i = 0; i < rows * cols; i++)
        W[i] = (2.0f * prng_uniform(g) - 1.0f) * lim;
}

static void test_xavier_order(void **state)
{
    (void)state;
    static const int cfgs[][2] = {{16, 1}, {16, 4}, {12, 3}};
    for (size_t t = 0; t < 3; t++)
        for (uint64_t seed = 1; seed < 4; seed++) {
            int d = cfgs[t][0], h = cfgs[t][1], dk = d / h;
            AttnParams a;
            assert_int_equal(attn_params_create(&a, d, h), 0);
            attn_params_xavier(&a, seed);
            size_t n = (size_t)d * d, sl = (size_t)d * dk;
            float *w = malloc(n * sizeof(float)), *v = malloc((size_t)d * sizeof(float));
            assert_true(w && v);
            Prng g;
            prng_seed(&g, seed);
            for (int k = 0; k < h; k++) {
                const float *mine[3] = {a.Wq, a.Wk, a.Wv};
                for (int m = 0; m < 3; m++) {
                    xavier_expect(w, d, dk, &g);
                    assert_memory_equal(w, mine[m] + k * sl, sl * sizeof(float));
                }
            }
            xavier_expect(w, d, d, &g);
            assert_memory_equal(w, a.Wo, n * sizeof(float));
            for (int k = 0; k < h; k++) {
                xavier_expect(v, dk, 1, &g);
                assert_memory_equal(v, a.v + (size_t)k * dk, (size_t)dk * sizeof(float));
                for (int c = 0; c < dk; c++) /* Xavier bound of a dk × 1 matrix */
                    assert_true(fabs(a.v[k * dk + c]) <= sqrt(6.0 / (dk + 1)) * (1 + 1e-6));
            }
            xavier_expect(v, d, 1, &g);
            assert_memory_equal(v, a.vb, (size_t)d * sizeof(float));
            free(w);
            free(v);
            attn_params_destroy(&a);
        }
}

static void test_params_v(void **state)
{
    (void)state;
    const int d = 12, h = 3, dk = 4;
    AttnParams a, b;
    memset(&b, 0, sizeof b);
    assert_int_equal(attn_params_create(&a, d, h), 0);
    assert_non_null(a.v);
    assert_non_null(a.vb);
    for (int c = 0; c < d; c++) {
        assert_true(fabs(a.v[c] - 1.0 / sqrt(dk)) < 1e-7);
        assert_true(fabs(a.vb[c] - 1.0 / sqrt(d)) < 1e-7);
    }
    attn_params_xavier(&a, 5);
    assert_int_equal(attn_params_copy(&b, &a), 0);
    assert_true(attn_params_equal(&a, &b));
    assert_memory_equal(a.v, b.v, d * sizeof(float));
    assert_memory_equal(a.vb, b.vb, d * sizeof(float));
    b.v[7] += 0.25f;
    assert_false(attn_params_equal(&a, &b));
    b.v[7] = a.v[7];
    assert_true(attn_params_equal(&a, &b));
    b.vb[11] = -b.vb[11];
    assert_false(attn_params_equal(&a, &b));
    attn_params_default_v(&b);
    for (int c = 0; c < d; c++) {
        assert_true(b.v[c] == 1.0f / sqrtf((float)dk));
        assert_true(b.vb[c] == 1.0f / sqrtf((float)d));
    }
    attn_params_xavier(&b, 6);
    attn_params_identity(&b);
    for (int c = 0; c < d; c++)
        assert_true(b.v[c] == 1.0f / sqrtf((float)dk) && b.vb[c] == 1.0f / sqrtf((float)d));
    int rows, cols;
    assert_ptr_equal(attn_params_matrix(&a, 4, 2, &rows, &cols), a.v + 2 * dk);
    assert_int_equal(rows, 1);
    assert_int_equal(cols, dk);
    assert_ptr_equal(attn_params_matrix(&a, 5, 1, &rows, &cols), a.vb);
    assert_int_equal(rows, 1);
    assert_int_equal(cols, d);
    assert_ptr_equal(attn_params_matrix(&a, 3, 0, &rows, &cols), a.Wo);
    assert_true(rows == d && cols == d);
    assert_ptr_equal(attn_params_matrix(&a, 1, 2, &rows, &cols), a.Wk + 2 * d * dk);
    assert_true(rows == d && cols == dk);
    attn_params_destroy(&a);
    attn_params_destroy(&b);
}

/* ---- formulas, logit scale, the scalar definitions, bad input ------------ */

static void test_formula_and_scale(void **state)
{
    (void)state;
    assert_string_equal(attn_score_formula(ATTN_SCORE_DOT, 1, 0), "softmax(q·k / √dk / τ)");
    assert_string_equal(attn_score_formula(ATTN_SCORE_DOT, 1, 1), "softmax(q.k / sqrt(dk) / tau)");
    assert_string_equal(attn_score_formula(ATTN_SCORE_DOT, 0, 0), "softmax(q·k / τ)");
    assert_string_equal(attn_score_formula(ATTN_SCORE_DOT, 0, 1), "softmax(q.k / tau)");
    for (int scale = 0; scale < 2; scale++) {
        assert_string_equal(attn_score_formula(ATTN_SCORE_COSINE, scale, 0), "softmax(cos(q, k) / τ)");
        assert_string_equal(attn_score_formula(ATTN_SCORE_COSINE, scale, 1), "softmax(cos(q, k) / tau)");
        assert_string_equal(attn_score_formula(ATTN_SCORE_ADDITIVE, scale, 0),
                            "softmax(vᵀ tanh(q + k) / τ)");
        assert_string_equal(attn_score_formula(ATTN_SCORE_ADDITIVE, scale, 1),
                            "softmax(v^T tanh(q + k) / tau)");
    }
    assert_non_null(attn_score_formula(9, 1, 0));
    AttnConfig cfg = attn_config_default();
    cfg.temperature = 2.0f;
    assert_true(fabs(attn_logit_scale(&cfg, 16) - 0.125) < 1e-7);
    cfg.scale = 0;
    assert_true(attn_logit_scale(&cfg, 16) == 0.5f);
    for (int scale = 0; scale < 2; scale++) {
        cfg.scale = scale;
        cfg.score = ATTN_SCORE_COSINE;
        assert_true(attn_logit_scale(&cfg, 16) == 0.5f);
        cfg.score = ATTN_SCORE_ADDITIVE;
        assert_true(attn_logit_scale(&cfg, 16) == 0.5f);
    }
}

/* attn_score_one against double definitions, and the additive sum in the
 * order c = 0, 1, … of attn_additive_term (bit for bit). */
static void test_score_one(void **state)
{
    (void)state;
    rng_state = 99;
    for (int t = 0; t < 200; t++) {
        int n = 1 + (int)(rng_next() % 40);
        float q[40], k[40], v[40];
        double dq[40], dk[40], dv[40];
        for (int c = 0; c < n; c++) {
            dq[c] = q[c] = (float)urand(-3, 3);
            dk[c] = k[c] = (float)urand(-3, 3);
            dv[c] = v[c] = (float)urand(-1, 1);
        }
        for (int score = 0; score < ATTN_SCORE_COUNT; score++) {
            double want = ref_score(score, dq, dk, dv, n);
            float got = attn_score_one(score, q, k, v, n);
            assert_true(fabs(got - want) < 1e-5 * fmax(1.0, fabs(want)));
        }
        float s = 0.0f;
        for (int c = 0; c < n; c++)
            s += attn_additive_term(q[c], k[c], v[c]);
        float got = attn_score_one(ATTN_SCORE_ADDITIVE, q, k, v, n);
        assert_memory_equal(&s, &got, sizeof s);
        float t1 = attn_additive_term(q[0], k[0], v[0]);
        assert_true(fabs(t1 - dv[0] * tanh(dq[0] + dk[0])) < 1e-6);
        /* v NULL: the default 1/√n */
        for (int c = 0; c < n; c++)
            dv[c] = 1.0 / sqrt((double)n);
        double want = ref_score(ATTN_SCORE_ADDITIVE, dq, dk, dv, n);
        assert_true(fabs(attn_score_one(ATTN_SCORE_ADDITIVE, q, k, NULL, n) - want) < 1e-5 * fmax(1.0, fabs(want)));
    }
    assert_true(attn_additive_term(50.0f, 50.0f, 0.5f) == 0.5f);
    assert_true(attn_additive_term(-50.0f, -50.0f, 0.5f) == -0.5f);
}

static void test_rejects(void **state)
{
    (void)state;
    float X[16] = {0};
    AttnParams p;
    assert_int_equal(attn_params_create(&p, 4, 1), 0);
    AttnConfig cfg = attn_config_default();
    AttnResult r;
    attn_result_init(&r);
    cfg.score = ATTN_SCORE_COUNT;
    assert_int_equal(attn_forward(&r, X, 2, X, 2, 4, &p, &cfg), -ATTN_E_RANGE);
    cfg.score = -1;
    assert_int_equal(attn_forward(&r, X, 2, X, 2, 4, &p, &cfg), -ATTN_E_RANGE);
    /* basic additive: vb must have d numbers */
    cfg.score = ATTN_SCORE_ADDITIVE;
    cfg.mode = ATTN_MODE_BASIC;
    assert_int_equal(attn_forward(&r, X, 2, X, 2, 8, &p, &cfg), -ATTN_E_SHAPE);
    assert_int_equal(attn_forward(&r, X, 2, X, 2, 8, NULL, &cfg), 0);
    attn_result_destroy(&r);
    attn_params_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_vs_reference),
        cmocka_unit_test(test_forward_two_threads),
        cmocka_unit_test(test_basic_mode),
        cmocka_unit_test(test_scale_switch),
        cmocka_unit_test(test_cosine_zero_vectors),
        cmocka_unit_test(test_additive_saturated),
        cmocka_unit_test(test_update_matches_full),
        cmocka_unit_test(test_resize_matches_full),
        cmocka_unit_test(test_xavier_order),
        cmocka_unit_test(test_params_v),
        cmocka_unit_test(test_formula_and_scale),
        cmocka_unit_test(test_score_one),
        cmocka_unit_test(test_rejects),
    };
    static const char *const sets[] = {"base", "avx2"};
    int failed = 0;
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        if (attn_use_kernels(sets[k]) < 0) {
            printf("kernels %s: not run by this CPU, skipped\n", sets[k]);
            continue;
        }
        printf("kernels %s\n", attn_kernels());
        failed += cmocka_run_group_tests_name(sets[k], tests, NULL, NULL);
    }
    return failed ? 1 : 0;
}
