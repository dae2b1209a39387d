/* Teach mode's maths (issue 15): every gradient of teach_loss against
 * central finite differences of an independent double-precision loss, in
 * every setting (scaling, τ, mask, one head or the heads' mean, basic and
 * learned, cross-attention, each score function, each trainable array);
 * the loss itself; SGD and Adam against steps computed by hand; targets. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/prng.h"
#include "attnviz/teach.h"

/* ---- the reference: the loss in double, from scratch -------------------- */

typedef struct Ref {
    int Tq, Tk, d, h, learned, self, head, causal, scale, score;
    double tau;
    double *Wq, *Wk, *v, *vb, *Xq, *Xk; /* copies in double, perturbed */
    const float *t;
} Ref;

static double ref_score(const Ref *r, const double *q, const double *k, const double *v, int n)
{
    double dot = 0, qq = 0, kk = 0, add = 0;
    for (int c = 0; c < n; c++) {
        dot += q[c] * k[c], qq += q[c] * q[c], kk += k[c] * k[c];
        add += v[c] * tanh(q[c] + k[c]);
    }
    if (r->score == ATTN_SCORE_COSINE)
        return qq > 0 && kk > 0 ? dot / sqrt(qq * kk) : 0.0;
    return r->score == ATTN_SCORE_ADDITIVE ? add : dot;
}

/* α of head hh, row i, into a (Tk). */
static void ref_alpha(const Ref *r, int hh, int i, double *a)
{
    int d = r->d, dk = d / r->h, Tk = r->Tk;
    const double *Xk = r->self ? r->Xq : r->Xk;
    double q[64], k[64];
    for (int c = 0; c < dk; c++) {
        q[c] = 0;
        for (int x = 0; x < d; x++)
            q[c] += r->Xq[i * d + x] * (r->learned ? r->Wq[(hh * d + x) * dk + c] : (x == c));
    }
    int nv = r->causal ? i + 1 : Tk;
    double mult = 1.0 / r->tau, mx = -INFINITY, sum = 0;
    if (r->score == ATTN_SCORE_DOT && r->scale)
        mult /= sqrt((double)dk);
    for (int j = 0; j < Tk; j++) {
        if (j >= nv) {
            a[j] = -INFINITY;
            continue;
        }
        for (int c = 0; c < dk; c++) {
            k[c] = 0;
            for (int x = 0; x < d; x++)
                k[c] += Xk[j * d + x] * (r->learned ? r->Wk[(hh * d + x) * dk + c] : (x == c));
        }
        a[j] = ref_score(r, q, k, r->learned ? r->v + hh * dk : r->vb, dk) * mult;
        mx = fmax(mx, a[j]);
    }
    for (int j = 0; j < Tk; j++)
        sum += a[j] = j < nv ? exp(a[j] - mx) : 0.0;
    for (int j = 0; j < Tk; j++)
        a[j] /= sum;
}

static double ref_loss(const Ref *r)
{
    double loss = 0, a[64], mean[64];
    int rows = 0, h = r->learned ? r->h : 1;
    for (int i = 0; i < r->Tq; i++) {
        double ts = 0;
        for (int j = 0; j < r->Tk; j++)
            ts += r->t[i * r->Tk + j];
        if (ts == 0)
            continue;
        rows++;
        memset(mean, 0, sizeof mean);
        int h0 = r->head < 0 ? 0 : r->head, h1 = r->head < 0 ? h : r->head + 1;
        for (int hh = h0; hh < h1; hh++) {
            ref_alpha(r, hh, i, a);
            for (int j = 0; j < r->Tk; j++)
                mean[j] += a[j] / (h1 - h0);
        }
        for (int j = 0; j < r->Tk; j++)
            if (r->t[i * r->Tk + j] > 0)
                loss -= r->t[i * r->Tk + j] * log(mean[j]);
    }
    return rows ? loss / rows : 0.0;
}

/* ---- set-up -------------------------------------------------------------- */

typedef struct Case {
    int Tq, Tk, d, h, learned, self, head, causal, scale, score;
    float tau;
} Case;

static double *to_double(const float *a, size_t n)
{
    double *o = malloc((n ? n : 1) * sizeof(double));
    for (size_t e = 0; e < n; e++)
        o[e] = a[e];
    return o;
}

/* Central difference of the reference loss along element e of x. */
static double fd(Ref *r, double *x, size_t e)
{
    double eps = 1e-5 * fmax(1.0, fabs(x[e])), x0 = x[e];
    x[e] = x0 + eps;
    double up = ref_loss(r);
    x[e] = x0 - eps;
    double down = ref_loss(r);
    x[e] = x0;
    return (up - down) / (2 * eps);
}

static void expect_grad(Ref *r, double *x, const float *g, size_t n, const char *what,
                        const Case *c)
{
    for (size_t e = 0; e < n; e++) {
        double want = fd(r, x, e);
        if (fabs(g[e] - want) > 2e-4 + 2e-3 * fabs(want))
            fail_msg("%s[%zu] = %.7g, finite differences %.7g (Tq %d Tk %d h %d head %d "
                     "learned %d self %d causal %d scale %d score %d tau %g)",
                     what, e, (double)g[e], want, c->Tq, c->Tk, c->h, c->head, c->learned,
                     c->self, c->causal, c->scale, c->score, (double)c->tau);
    }
}

static void fill(float *a, size_t n, Prng *rng, float amp)
{
    for (size_t e = 0; e < n; e++)
        a[e] = amp * (2.0f * (float)prng_uniform(rng) - 1.0f);
}

static void check_case(const Case *c, uint64_t seed)
{
    Prng rng;
    prng_seed(&rng, seed);
    AttnParams p;
    assert_int_equal(attn_params_create(&p, c->d, c->learned ? c->h : 1), 0);
    int h = p.h, dk = c->d / h;
    size_t wn = (size_t)h * c->d * dk;
    fill(p.Wq, wn, &rng, 0.8f);
    fill(p.Wk, wn, &rng, 0.8f);
    fill(p.v, (size_t)c->d, &rng, 1.0f);
    fill(p.vb, (size_t)c->d, &rng, 1.0f);
    float *Xq = malloc((size_t)c->Tq * c->d * sizeof(float));
    float *Xk = malloc((size_t)c->Tk * c->d * sizeof(float));
    float *t = calloc((size_t)c->Tq * c->Tk, sizeof(float));
    fill(Xq, (size_t)c->Tq * c->d, &rng, 1.0f);
    fill(Xk, (size_t)c->Tk * c->d, &rng, 1.0f);
    fill(t, (size_t)c->Tq * c->Tk, &rng, 1.0f);
    for (size_t e = 0; e < (size_t)c->Tq * c->Tk; e++)
        t[e] = t[e] < 0 ? 0 : t[e]; /* some zeros, some rows partly empty */
    memset(t, 0, (size_t)c->Tk * sizeof(float)); /* row 0: no target */
    if (c->Tq > 1)
        t[(size_t)c->Tk + c->Tk - 1] = 1.0f;
    int dropped, bi, bj;
    assert_true(teach_target_prepare(t, c->Tq, c->Tk, c->causal, &dropped, &bi, &bj) >= 0);

    TeachInput in = {c->Tq, c->Tk, c->d, Xq, c->self ? Xq : Xk, &p, attn_config_default(),
                     c->head, t, 0};
    in.cfg.mode = c->learned ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
    in.cfg.scale = c->scale;
    in.cfg.causal = c->causal;
    in.cfg.score = c->score;
    in.cfg.temperature = c->tau;
    TeachGrad g;
    teach_grad_init(&g);
    double loss = -1;
    assert_int_equal(teach_loss(&in, &g, &loss), 0);

    Ref r = {c->Tq, c->Tk, c->d, h, c->learned, c->self, c->head, c->causal, c->scale, c->score,
             c->tau, to_double(p.Wq, wn), to_double(p.Wk, wn), to_double(p.v, (size_t)c->d),
             to_double(p.vb, (size_t)c->d), to_double(Xq, (size_t)c->Tq * c->d),
             to_double(Xk, (size_t)c->Tk * c->d), t};
    double want = ref_loss(&r);
    assert_true(fabs(loss - want) < 1e-5 * (1 + fabs(want)));
    double loss_only = -1;
    assert_int_equal(teach_loss(&in, NULL, &loss_only), 0);
    assert_true(loss_only == loss);
    if (c->learned) {
        expect_grad(&r, r.Wq, g.dWq, wn, "dWq", c);
        expect_grad(&r, r.Wk, g.dWk, wn, "dWk", c);
        expect_grad(&r, r.v, g.dv, (size_t)c->d, "dv", c);
    } else {
        expect_grad(&r, r.vb, g.dvb, (size_t)c->d, "dvb", c);
    }
    expect_grad(&r, r.Xq, g.dXq, (size_t)c->Tq * c->d, "dXq", c);
    if (!c->self)
        expect_grad(&r, r.Xk, g.dXk, (size_t)c->Tk * c->d, "dXk", c);
    free(r.Wq), free(r.Wk), free(r.v), free(r.vb), free(r.Xq), free(r.Xk);
    teach_grad_free(&g);
    attn_params_destroy(&p);
    free(Xq), free(Xk), free(t);
}

static void test_gradients(void **state)
{
    (void)state;
    static const Case cases[] = {
        /* Tq Tk d h learned self head causal scale score tau */
        {5, 5, 8, 1, 1, 1, 0, 0, 1, ATTN_SCORE_DOT, 1.0f},
        {5, 5, 8, 1, 1, 1, 0, 0, 0, ATTN_SCORE_DOT, 0.5f},
        {5, 5, 8, 2, 1, 1, 1, 1, 1, ATTN_SCORE_DOT, 2.0f},
        {6, 6, 8, 4, 1, 1, -1, 0, 1, ATTN_SCORE_DOT, 1.0f},
        {6, 6, 8, 2, 1, 1, -1, 1, 1, ATTN_SCORE_DOT, 0.7f},
        {4, 7, 8, 2, 1, 0, 0, 0, 1, ATTN_SCORE_DOT, 1.0f},
        {1, 3, 4, 1, 1, 0, 0, 0, 1, ATTN_SCORE_DOT, 1.0f},
        {3, 1, 4, 1, 1, 0, 0, 0, 1, ATTN_SCORE_DOT, 1.0f},
        {5, 5, 6, 1, 0, 1, 0, 0, 1, ATTN_SCORE_DOT, 1.0f},
        {5, 5, 6, 1, 0, 1, 0, 1, 0, ATTN_SCORE_DOT, 0.5f},
        {5, 5, 8, 1, 1, 1, 0, 0, 1, ATTN_SCORE_COSINE, 0.2f},
        {5, 6, 8, 2, 1, 0, -1, 0, 1, ATTN_SCORE_COSINE, 0.5f},
        {5, 5, 6, 1, 0, 1, 0, 1, 1, ATTN_SCORE_COSINE, 0.3f},
        {5, 5, 8, 1, 1, 1, 0, 0, 1, ATTN_SCORE_ADDITIVE, 1.0f},
        {4, 6, 8, 2, 1, 0, -1, 1, 0, ATTN_SCORE_ADDITIVE, 0.5f},
        {5, 5, 6, 1, 0, 1, 0, 0, 1, ATTN_SCORE_ADDITIVE, 1.0f},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_case(&cases[k], 100 + k);
}

/* Cosine of a zero vector: the score is 0 and no gradient flows through it. */
static void test_cosine_zero_vector(void **state)
{
    (void)state;
    Case c = {3, 3, 4, 1, 0, 1, 0, 0, 1, ATTN_SCORE_COSINE, 0.5f};
    AttnParams p;
    assert_int_equal(attn_params_create(&p, 4, 1), 0);
    float X[12] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0}, t[9] = {0, 1, 0, 1, 0, 0, 0, 0, 1};
    TeachInput in = {3, 3, 4, X, X, &p, attn_config_default(), 0, t, 0};
    in.cfg.mode = ATTN_MODE_BASIC;
    in.cfg.score = ATTN_SCORE_COSINE;
    in.cfg.temperature = c.tau;
    TeachGrad g;
    teach_grad_init(&g);
    double loss;
    assert_int_equal(teach_loss(&in, &g, &loss), 0);
    assert_true(isfinite(loss));
    for (int e = 4; e < 8; e++) /* the zero vector's row */
        assert_true(g.dXq[e] == 0.0f);
    for (int e = 0; e < 12; e++)
        assert_true(isfinite(g.dXq[e]));
    teach_grad_free(&g);
    attn_params_destroy(&p);
}

/* ---- optimisers -------------------------------------------------------- */

static void test_sgd_and_adam_by_hand(void **state)
{
    (void)state;
    TeachOpt o;
    float w[2] = {1.0f, -2.0f}, g1[2] = {0.5f, -0.25f}, g2[2] = {-1.0f, 0.0f};
    assert_int_equal(teach_opt_init(&o, TEACH_OPT_SGD, 0.1f, 2), 0);
    teach_opt_begin(&o);
    teach_opt_update(&o, 0, w, g1, 2);
    assert_float_equal(w[0], 0.95f, 1e-7);
    assert_float_equal(w[1], -1.975f, 1e-7);
    teach_opt_free(&o);

    /* Adam, two steps, written out: m = 0.1 g1, v = 0.001 g1², m̂ = g1,
     * v̂ = g1² → w −= lr · g1 / (|g1| + ε); then with g2 */
    double W[2] = {1.0, -2.0}, m[2] = {0, 0}, v[2] = {0, 0};
    const float *gs[2] = {g1, g2};
    w[0] = 1.0f, w[1] = -2.0f;
    assert_int_equal(teach_opt_init(&o, TEACH_OPT_ADAM, 0.1f, 4), 0);
    for (int t = 1; t <= 2; t++) {
        for (int e = 0; e < 2; e++) {
            double gg = gs[t - 1][e];
            m[e] = 0.9 * m[e] + 0.1 * gg;
            v[e] = 0.999 * v[e] + 0.001 * gg * gg;
            double mh = m[e] / (1 - pow(0.9, t)), vh = v[e] / (1 - pow(0.999, t));
            W[e] -= 0.1 * mh / (sqrt(vh) + 1e-8);
        }
        teach_opt_begin(&o);
        teach_opt_update(&o, 2, w, gs[t - 1], 2); /* slots 2, 3 of the optimiser */
        assert_float_equal(w[0], W[0], 1e-6);
        assert_float_equal(w[1], W[1], 1e-6);
    }
    assert_float_equal(w[0], 0.9 + 0.1 * 0.055 / 0.19 / (sqrt(0.00124975 / 0.001999) + 1e-8), 1e-5);
    assert_true(o.m[0] == 0.0f && o.m[1] == 0.0f); /* slots 0, 1 untouched */
    teach_opt_reset(&o);
    assert_int_equal(o.t, 0);
    assert_true(o.m[2] == 0.0f && o.v[3] == 0.0f);
    teach_opt_free(&o);
    assert_int_equal(teach_opt_parse("adam"), TEACH_OPT_ADAM);
    assert_int_equal(teach_opt_parse("Adam"), -1);
}

/* ---- targets ----------------------------------------------------------- */

static void test_presets(void **state)
{
    (void)state;
    float t[4 * 3];
    teach_preset(TEACH_PREVIOUS, 4, 3, t); /* 4 queries, 3 keys: clamped */
    static const float prev[12] = {1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    assert_memory_equal(t, prev, sizeof prev);
    teach_preset(TEACH_NEXT, 4, 3, t);
    static const float next[12] = {0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    assert_memory_equal(t, next, sizeof next);
    teach_preset(TEACH_SELF, 4, 3, t);
    static const float self[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1};
    assert_memory_equal(t, self, sizeof self);
    teach_preset(TEACH_FIRST, 4, 3, t);
    for (int i = 0; i < 4; i++)
        assert_true(t[i * 3] == 1.0f && t[i * 3 + 1] == 0.0f);
    assert_int_equal(teach_preset_parse("previous"), TEACH_PREVIOUS);
    assert_int_equal(teach_preset_parse("prev"), -1);
}

static void test_target_prepare(void **state)
{
    (void)state;
    /* row 0: mass on masked keys dropped; row 1 empty; row 2 scaled */
    float t[9] = {1, 2, 0, 0, 0, 0, 1, 1, 2};
    int dropped, bi = -1, bj = -1;
    assert_int_equal(teach_target_prepare(t, 3, 3, 1, &dropped, &bi, &bj), 2);
    assert_int_equal(dropped, 1);
    assert_float_equal(t[0], 1.0f, 0);
    assert_float_equal(t[1], 0.0f, 0);
    assert_float_equal(t[6], 0.25f, 1e-7);
    assert_float_equal(t[8], 0.5f, 1e-7);
    float only_masked[4] = {0, 3, 0, 0};
    assert_int_equal(teach_target_prepare(only_masked, 2, 2, 1, &dropped, &bi, &bj), 0);
    float neg[4] = {1, 0, 0, -0.5f};
    assert_int_equal(teach_target_prepare(neg, 2, 2, 0, &dropped, &bi, &bj), -ATTN_E_RANGE);
    assert_int_equal(bi, 1);
    assert_int_equal(bj, 1);
    float nan_t[2] = {NAN, 1};
    assert_int_equal(teach_target_prepare(nan_t, 1, 2, 0, &dropped, &bi, &bj), -ATTN_E_RANGE);
    assert_int_equal(bj, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients),
        cmocka_unit_test(test_cosine_zero_vector),
        cmocka_unit_test(test_sgd_and_adam_by_hand),
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_target_prepare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
