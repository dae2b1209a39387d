/* Tests for the attention maths (src/core/attn.c, model_compute in
 * src/core/model.c): an independent double-precision reference implemented
 * here (its own loops, softmax and positional encoding from the paper)
 * compared with attn_forward and model_compute over modes, heads, scaling,
 * masking, positional encoding, temperatures, seeds and sizes; a worked
 * example checked to 1e-6; and properties (rows sum to 1, exact zeros under
 * the mask, permutation equivariance, overflow safety, weight set-up). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnviz/attn.h"
#include "attnviz/workers.h"
#include "attnviz/embed.h"
#include "attnviz/model.h"

#include "test_rand.h"

static double *to_double(const float *a, size_t n)
{
    double *o = malloc(n * sizeof(double) + 1);
    assert_non_null(o);
    for (size_t i = 0; i < n; i++)
        o[i] = a[i];
    return o;
}

/* ---- the reference: naive loops in double ------------------------------- */
typedef struct Ref {
    int Tq, Tk, d, h, dk;
    double *Q, *K, *V;     /* h × T × dk */
    double *S, *L, *W;     /* h × Tq × Tk: scores, logits, weights */
    double *A;             /* Tq × Tk mean of the heads' weights */
    double *AS, *AL;       /* Tq × Tk mean of scores / logits */
    double *Z;             /* h × Tq × dk */
    double *C, *O;         /* Tq × d concat, output */
} Ref;

static void ref_free(Ref *R)
{
    free(R->Q); free(R->K); free(R->V); free(R->S); free(R->L); free(R->W);
    free(R->A); free(R->AS); free(R->AL); free(R->Z); free(R->C); free(R->O);
    memset(R, 0, sizeof *R);
}

/* Weight matrix element: head k, row r (0..d-1), column c (0..dk-1), stored
 * head-major as h × d × dk (attn.h). */
static double wel(const float *W, int d, int dk, int k, int r, int c)
{
    return W[(size_t)k * d * dk + (size_t)r * dk + c];
}

static void ref_run(Ref *R, const double *Xq, int Tq, const double *Xkv, int Tk,
                    int d, const AttnParams *p, int learned, int scale,
                    int causal, double tau)
{
    int h = learned ? p->h : 1, dk = d / h;
    memset(R, 0, sizeof *R);
    R->Tq = Tq; R->Tk = Tk; R->d = d; R->h = h; R->dk = dk;
    size_t nq = (size_t)h * Tq * dk + 1, nk = (size_t)h * Tk * dk + 1,
           nqk = (size_t)h * Tq * Tk + 1;
    R->Q = calloc(nq, sizeof(double));
    R->K = calloc(nk, sizeof(double));
    R->V = calloc(nk, sizeof(double));
    R->S = calloc(nqk, sizeof(double));
    R->L = calloc(nqk, sizeof(double));
    R->W = calloc(nqk, sizeof(double));
    R->A = calloc((size_t)Tq * Tk + 1, sizeof(double));
    R->AS = calloc((size_t)Tq * Tk + 1, sizeof(double));
    R->AL = calloc((size_t)Tq * Tk + 1, sizeof(double));
    R->Z = calloc(nq, sizeof(double));
    R->C = calloc((size_t)Tq * d + 1, sizeof(double));
    R->O = calloc((size_t)Tq * d + 1, sizeof(double));
    assert_true(R->Q && R->K && R->V && R->S && R->L && R->W && R->A && R->AS &&
                R->AL && R->Z && R->C && R->O);
    double mult = (scale ? 1.0 / sqrt((double)dk) : 1.0) / tau;
    for (int k = 0; k < h; k++) {
        double *Q = R->Q + (size_t)k * Tq * dk;
        double *K = R->K + (size_t)k * Tk * dk;
        double *V = R->V + (size_t)k * Tk * dk;
        for (int i = 0; i < Tq; i++)
            for (int c = 0; c < dk; c++) {
                double s = 0;
                if (learned)
                    for (int r = 0; r < d; r++)
                        s += Xq[(size_t)i * d + r] * wel(p->Wq, d, dk, k, r, c);
                else
                    s = Xq[(size_t)i * d + c];
                Q[(size_t)i * dk + c] = s;
            }
        for (int j = 0; j < Tk; j++)
            for (int c = 0; c < dk; c++) {
                double sk = 0, sv = 0;
                if (learned) {
                    for (int r = 0; r < d; r++) {
                        sk += Xkv[(size_t)j * d + r] * wel(p->Wk, d, dk, k, r, c);
                        sv += Xkv[(size_t)j * d + r] * wel(p->Wv, d, dk, k, r, c);
                    }
                } else {
                    sk = sv = Xkv[(size_t)j * d + c];
                }
                K[(size_t)j * dk + c] = sk;
                V[(size_t)j * dk + c] = sv;
            }
        double *S = R->S + (size_t)k * Tq * Tk;
        double *L = R->L + (size_t)k * Tq * Tk;
        double *W = R->W + (size_t)k * Tq * Tk;
        for (int i = 0; i < Tq; i++) {
            for (int j = 0; j < Tk; j++) {
                double s = 0;
                for (int c = 0; c < dk; c++)
                    s += Q[(size_t)i * dk + c] * K[(size_t)j * dk + c];
                S[(size_t)i * Tk + j] = s;
                L[(size_t)i * Tk + j] = s * mult;
            }
            /* own softmax over the keys j <= i (causal) or all keys */
            int nv = causal ? (i + 1 < Tk ? i + 1 : Tk) : Tk;
            double mx = -HUGE_VAL, sum = 0;
            for (int j = 0; j < nv; j++)
                if (L[(size_t)i * Tk + j] > mx)
                    mx = L[(size_t)i * Tk + j];
            for (int j = 0; j < nv; j++)
                sum += exp(L[(size_t)i * Tk + j] - mx);
            for (int j = 0; j < Tk; j++)
                W[(size_t)i * Tk + j] =
                    j < nv ? exp(L[(size_t)i * Tk + j] - mx) / sum : 0.0;
        }
        double *Z = R->Z + (size_t)k * Tq * dk;
        for (int i = 0; i < Tq; i++)
            for (int c = 0; c < dk; c++) {
                double s = 0;
                for (int j = 0; j < Tk; j++)
                    s += W[(size_t)i * Tk + j] * V[(size_t)j * dk + c];
                Z[(size_t)i * dk + c] = s;
                R->C[(size_t)i * d + k * dk + c] = s;
            }
    }
    for (int i = 0; i < Tq; i++)
        for (int c = 0; c < d; c++) {
            double s = 0;
            if (learned)
                for (int r = 0; r < d; r++)
                    s += R->C[(size_t)i * d + r] * p->Wo[(size_t)r * d + c];
            else
                s = R->C[(size_t)i * d + c];
            R->O[(size_t)i * d + c] = s;
        }
    for (size_t e = 0; e < (size_t)Tq * Tk; e++) {
        double a = 0, s = 0, l = 0;
        for (int k = 0; k < h; k++) {
            a += R->W[(size_t)k * Tq * Tk + e];
            s += R->S[(size_t)k * Tq * Tk + e];
            l += R->L[(size_t)k * Tq * Tk + e];
        }
        R->A[e] = a / h;
        R->AS[e] = s / h;
        R->AL[e] = l / h;
    }
}

/* The paper's formula, written out: PE[p][2i] = sin(p / 10000^(2i/d)),
 * PE[p][2i+1] = cos(p / 10000^(2i/d)). */
static double ref_pe(int p, int k, int d)
{
    int i = k / 2;
    double angle = (double)p / pow(10000.0, (2.0 * i) / (double)d);
    return (k % 2 == 0) ? sin(angle) : cos(angle);
}

/* Max error, absolute for |want| <= 1 and relative above; NaN is infinite. */
static int close_arr(const char *what, const char *ctx, const float *got,
                     const double *want, size_t n, double tol)
{
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        double e = fabs(g - w) / fmax(1.0, fabs(w));
        if (isnan(e))
            e = INFINITY;
        if (e > worst) {
            worst = e;
            at = i;
        }
    }
    if (!(worst < tol)) {
        print_error("%s [%s]: max error %g at %zu (got %.9g, want %.9g)\n", what,
                    ctx, worst, at, (double)got[at], want[at]);
        return 0;
    }
    return 1;
}

static int check_result(const AttnResult *r, const Ref *R, const char *ctx)
{
    size_t q = (size_t)R->h * R->Tq * R->dk, k = (size_t)R->h * R->Tk * R->dk,
           qk = (size_t)R->h * R->Tq * R->Tk;
    int ok = 1;
    if (r->Tq != R->Tq || r->Tk != R->Tk || r->h != R->h || r->dk != R->dk ||
        r->d != R->d) {
        print_error("shape [%s]: got Tq %d Tk %d h %d dk %d d %d\n", ctx, r->Tq,
                    r->Tk, r->h, r->dk, r->d);
        return 0;
    }
    ok &= close_arr("Q", ctx, r->Q, R->Q, q, 1e-5);
    ok &= close_arr("K", ctx, r->K, R->K, k, 1e-5);
    ok &= close_arr("V", ctx, r->V, R->V, k, 1e-5);
    ok &= close_arr("scores", ctx, r->scores, R->S, qk, 1e-5);
    if (!r->skip_logits) /* a Model's forward keeps none: model_matrix makes them */
        ok &= close_arr("logits", ctx, r->logits, R->L, qk, 1e-5);
    ok &= close_arr("weights", ctx, r->weights, R->W, qk, 1e-5);
    if (!r->skip_avg) /* nor the heads' mean: model_matrix makes it */
        ok &= close_arr("avg", ctx, r->avg, R->A, (size_t)R->Tq * R->Tk, 1e-5);
    ok &= close_arr("Z", ctx, r->Z, R->Z, q, 1e-5);
    ok &= close_arr("concat", ctx, r->concat, R->C, (size_t)R->Tq * R->d, 1e-5);
    ok &= close_arr("output", ctx, r->output, R->O, (size_t)R->Tq * R->d, 1e-5);
    return ok;
}

static const char *cfg_str(char *buf, size_t n, const AttnConfig *c, int heads,
                           int Tq, int Tk, int d, uint64_t seed, int posenc)
{
    snprintf(buf, n, "%s h=%d scale=%d causal=%d posenc=%d tau=%g Tq=%d Tk=%d d=%d seed=%llu",
             c->mode == ATTN_MODE_BASIC ? "basic" : "learned", heads, c->scale,
             c->causal, posenc, (double)c->temperature, Tq, Tk, d,
             (unsigned long long)seed);
    return buf;
}

/* ---- attn_forward against the reference ---------------------------------- */

/* One attn_forward run (fresh result) against the reference. */
static int forward_case(int learned, int h, int scale, int causal, float tau,
                        int Tq, int Tk, int d, uint64_t seed, int cross)
{
    AttnParams p;
    assert_int_equal(attn_params_create(&p, d, learned ? h : 1), 0);
    if (seed)
        attn_params_xavier(&p, seed);
    rng_seed(seed * 7919 + (uint64_t)Tq * 31 + (uint64_t)Tk);
    float *Xq = rand_matrix(Tq, d, -1.0, 1.0);
    float *Xkv = cross ? rand_matrix(Tk, d, -1.5, 1.5) : Xq;
    AttnConfig cfg = attn_config_default();
    cfg.mode = learned ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
    cfg.heads = h;
    cfg.scale = scale;
    cfg.causal = causal;
    cfg.temperature = tau;
    AttnResult r;
    attn_result_init(&r);
    assert_int_equal(attn_forward(&r, Xq, Tq, Xkv, Tk, d, &p, &cfg), 0);
    double *dq = to_double(Xq, (size_t)Tq * d), *dkv = to_double(Xkv, (size_t)Tk * d);
    Ref R;
    ref_run(&R, dq, Tq, dkv, Tk, d, &p, learned, scale, causal, (double)tau);
    char ctx[200];
    cfg_str(ctx, sizeof ctx, &cfg, learned ? h : 1, Tq, Tk, d, seed, 0);
    int ok = check_result(&r, &R, ctx);
    ref_free(&R);
    free(dq);
    free(dkv);
    if (cross)
        free(Xkv);
    free(Xq);
    attn_result_destroy(&r);
    attn_params_destroy(&p);
    return ok;
}

static void test_forward_vs_reference_self(void **state)
{
    (void)state;
    /* 16: one full block of keys; 150: h·T·T·dk is large enough for the
     * forward pass to split the rows between two threads */
    static const int sizes[] = {1, 7, 16, 33, 100, 150};
    static const int ds[] = {16, 12};
    static const float taus[] = {1.0f, 0.5f, 2.3f};
    static const uint64_t seeds[] = {0, 1, 42, 20240601};
    int fails = 0, runs = 0;
    for (size_t di = 0; di < 2; di++)
        for (size_t si = 0; si < 6; si++)
            for (int learned = 0; learned <= 1; learned++)
                for (int h = 1; h <= 4; h *= 2) {
                    if (!learned && h > 1)
                        continue;
                    for (int scale = 0; scale <= 1; scale++)
                        for (int causal = 0; causal <= 1; causal++)
                            for (size_t ti = 0; ti < 3; ti++)
                                for (size_t ki = 0; ki < (learned ? 4u : 1u); ki++) {
                                    /* T >= 100 only with a couple of seeds */
                                    if (sizes[si] >= 100 && ki > 1)
                                        continue;
                                    runs++;
                                    fails += !forward_case(learned, h, scale, causal,
                                                           taus[ti], sizes[si], sizes[si],
                                                           ds[di], seeds[ki], 0);
                                }
                }
    assert_true(runs > 300);
    assert_int_equal(fails, 0);
}

/* The heads' mean is defined as (Σ first h/2 heads + Σ the others) / h,
 * each half summed in order: the same floats whether one thread sums all
 * heads, two threads split the query rows, or two threads split the heads
 * and each sums its own half (the shapes below take each of those paths,
 * and partial updates of them). Checked bit for bit against that formula
 * computed here from the forward's own weights. */
static void check_average_formula(const AttnResult *r, const char *ctx)
{
    size_t qk = (size_t)r->Tq * r->Tk;
    int hl = r->h / 2;
    for (size_t e = 0; e < qk; e++) {
        float left = 0.0f, right = r->weights[(size_t)hl * qk + e];
        for (int k = 0; k < hl; k++)
            left = k == 0 ? r->weights[e] : left + r->weights[(size_t)k * qk + e];
        for (int k = hl + 1; k < r->h; k++)
            right += r->weights[(size_t)k * qk + e];
        float want = (hl ? left + right : right) * (1.0f / (float)r->h);
        if (memcmp(&want, &r->avg[e], sizeof want) != 0)
            fail_msg("%s: avg[%zu] = %.9g, the halves' formula gives %.9g", ctx, e,
                     (double)r->avg[e], (double)want);
    }
}

static void test_average_halves(void **state)
{
    (void)state;
    static const int Ts[] = {5, 40, 64, 101}; /* one thread; heads split; rows split */
    rng_seed(77);
    for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++)
        for (int h = 1; h <= 5; h++) {
            int T = Ts[ti], d = 60;
            AttnConfig cfg = attn_config_default();
            cfg.mode = ATTN_MODE_LEARNED;
            cfg.causal = h == 3;
            AttnParams p;
            assert_int_equal(attn_params_create(&p, d, h), 0);
            attn_params_xavier(&p, 31 + (uint64_t)h);
            float *X = rand_matrix(T, d, -2, 2);
            AttnResult r;
            attn_result_init(&r);
            assert_int_equal(attn_forward(&r, X, T, X, T, d, &p, &cfg), 0);
            char ctx[64];
            snprintf(ctx, sizeof ctx, "T=%d h=%d", T, h);
            check_average_formula(&r, ctx);
            /* a partial update: the rows from T/2 on change (the heads
             * split's halves then start at that row) */
            for (int i = T / 2 * d; i < T * d; i++)
                X[i] = (float)urand(-2, 2);
            assert_int_equal(attn_forward_update(&r, X, T, X, T, d, &p, &cfg, T / 2, T, T / 2, T), 0);
            snprintf(ctx, sizeof ctx, "T=%d h=%d, rows from %d updated", T, h, T / 2);
            check_average_formula(&r, ctx);
            attn_result_destroy(&r);
            attn_params_destroy(&p);
            free(X);
        }
}

/* The worker thread: both halves run, the call returns only when the
 * worker's half is done (its result visible at once), in bursts and after
 * the worker fell asleep. */
typedef struct Half {
    int in;
    long out;
} Half;

static void half_job(void *arg)
{
    Half *h = arg;
    long s = 0;
    for (int k = 0; k <= h->in; k++)
        s += k;
    h->out = s;
}

static void test_workers_run2(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        for (int n = 0; n < 2000; n++) {
            Half a = {n, -1}, b = {n * 3 + 1, -1};
            assert_int_equal(workers_run2(half_job, &a, &b), 0);
            assert_true(a.out == (long)n * (n + 1) / 2);
            assert_true(b.out == (long)b.in * (b.in + 1) / 2);
        }
        if (round == 1) { /* let it fall asleep: the next call wakes it */
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

/* The bench's configuration (d_model 64, 4 heads) at its sizes, plus odd
 * sizes around the kernels' 16-wide blocks, the two-thread split and the
 * padded stride of the transposed keys (1023, 1024: rows padded; 1008
 * not); main runs it under every kernel set this CPU has. */
static void test_forward_bench_sizes(void **state)
{
    (void)state;
    static const int sizes[] = {1, 7, 8, 15, 17, 63, 64, 65, 257, 1008, 1023, 1024};
    int fails = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int causal = 0; causal <= 1; causal++)
            fails += !forward_case(1, 4, 1, causal, 1.0f, sizes[si], sizes[si], 64, 7, 0);
    assert_int_equal(fails, 0);
    /* the stride of the transposed keys: at least Tk, never rows a multiple
     * of 256 bytes apart (they would share the L1 cache's sets) */
    for (int tk = 1; tk <= 4100; tk++) {
        int ld = attn_kt_stride(tk);
        assert_true(ld >= tk && ld < tk + 32 && ld % 64 != 0);
    }
}

static void test_forward_vs_reference_cross(void **state)
{
    (void)state;
    /* cross attention: Xq 5×d, Xkv 9×d (and the other way round); the last
     * two are large enough for the two-thread split (odd Tq) */
    static const int shapes[][2] = {{5, 9}, {9, 5}, {1, 9}, {5, 1}, {301, 64}, {17, 1200}};
    int fails = 0;
    for (size_t s = 0; s < 6; s++)
        for (int learned = 0; learned <= 1; learned++)
            for (int h = 1; h <= 4; h *= 2) {
                if (!learned && h > 1)
                    continue;
                for (int scale = 0; scale <= 1; scale++)
                    for (int causal = 0; causal <= 1; causal++)
                        for (int t = 0; t < 2; t++)
                            fails += !forward_case(learned, h, scale, causal,
                                                   t ? 2.3f : 0.5f, shapes[s][0],
                                                   shapes[s][1], 16,
                                                   learned ? 5u + (uint64_t)h : 0, 1);
            }
    assert_int_equal(fails, 0);
}

/* ---- model_compute against the reference (adds posenc and the table) ------ */

/* A table of words w0..w(n-1) with random d-dimensional vectors. */
static EmbedTable *make_table(int n, int d, uint64_t seed)
{
    size_t cap = (size_t)n * (d * 20 + 16) + 64, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    rng_seed(seed);
    for (int w = 0; w < n; w++) {
        len += (size_t)snprintf(buf + len, cap - len, "w%d", w);
        for (int k = 0; k < d; k++)
            len += (size_t)snprintf(buf + len, cap - len, " %.9g",
                                    (double)(float)urand(-1.0, 1.0));
        buf[len++] = '\n';
    }
    EmbedTable *t = NULL;
    AttnErr err = {0};
    int rc = embed_parse(&t, buf, len, "generated", &err, NULL);
    if (rc < 0)
        print_error("embed_parse: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(t->n, n);
    assert_int_equal(t->d, d);
    free(buf);
    return t;
}

/* Sentence of T random words; fills idx[T] with the table rows. */
static char *make_sentence(const EmbedTable *t, int T, int *idx, uint64_t seed)
{
    char *s = malloc((size_t)T * 8 + 1);
    assert_non_null(s);
    size_t len = 0;
    rng_seed(seed);
    for (int i = 0; i < T; i++) {
        int w = (int)(rng_next() % (uint64_t)t->n);
        char word[16];
        snprintf(word, sizeof word, "w%d", w);
        idx[i] = embed_find(t, word);
        assert_int_equal(idx[i] >= 0, 1);
        len += (size_t)sprintf(s + len, "%s%s", i ? " " : "", word);
    }
    s[len] = '\0';
    return s;
}

static void test_model_compute_vs_reference(void **state)
{
    (void)state;
    const int d = 16;
    EmbedTable *t = make_table(120, d, 99);
    static const int sizes[] = {1, 7, 33, 100, 150};
    static const float taus[] = {0.5f, 2.3f};
    static const uint64_t seeds[] = {0, 7, 1234567};
    int fails = 0, runs = 0;
    for (size_t si = 0; si < 5; si++) {
        int T = sizes[si];
        int *idx = malloc((size_t)T * sizeof(int));
        char *text = make_sentence(t, T, idx, 1000 + (uint64_t)T);
        for (int learned = 0; learned <= 1; learned++)
            for (int h = 1; h <= 4; h *= 2) {
                if (!learned && h > 1)
                    continue;
                for (int scale = 0; scale <= 1; scale++)
                    for (int causal = 0; causal <= 1; causal++)
                        for (int posenc = 0; posenc <= 1; posenc++)
                            for (size_t ti = 0; ti < 2; ti++)
                                for (size_t ki = 0; ki < (learned ? (T > 100 ? 2u : 3u) : 1u); ki++) {
                                    AttnConfig cfg = attn_config_default();
                                    cfg.mode = learned ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
                                    cfg.heads = h;
                                    cfg.scale = scale;
                                    cfg.causal = causal;
                                    cfg.posenc = posenc;
                                    cfg.temperature = taus[ti];
                                    Model m;
                                    assert_int_equal(model_init(&m, t, &cfg), 0);
                                    m.keep_window_matrices = 1; /* the window's setting */
                                    if (seeds[ki])
                                        model_set_seed(&m, seeds[ki]);
                                    assert_int_equal(model_set_text(&m, text, strlen(text)), 0);
                                    assert_int_equal(m.T, T);
                                    assert_int_equal(model_compute(&m), 0);
                                    /* X = E (+ PE), from the table and the formula */
                                    double *X = malloc((size_t)T * d * sizeof(double));
                                    for (int i = 0; i < T; i++)
                                        for (int k = 0; k < d; k++)
                                            X[(size_t)i * d + k] =
                                                embed_vector(t, idx[i])[k] +
                                                (posenc ? ref_pe(i, k, d) : 0.0);
                                    char ctx[200];
                                    cfg_str(ctx, sizeof ctx, &cfg, learned ? h : 1, T, T, d,
                                            seeds[ki], posenc);
                                    int ok = close_arr("X", ctx, m.X, X, (size_t)T * d, 1e-6);
                                    Ref R;
                                    ref_run(&R, X, T, X, T, d, &m.params, learned, scale,
                                            causal, (double)cfg.temperature);
                                    ok &= check_result(&m.res, &R, ctx);
                                    /* model_matrix: every head, and the average */
                                    assert_int_equal(model_prepare(&m, MODEL_LOGITS, 0), 0);
                                    assert_int_equal(model_prepare(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG), 0);
                                    for (int k = 0; k < R.h; k++) {
                                        ok &= close_arr("model_matrix weights", ctx,
                                                        model_matrix(&m, MODEL_WEIGHTS, k),
                                                        R.W + (size_t)k * T * T,
                                                        (size_t)T * T, 1e-5);
                                        ok &= close_arr("model_matrix scores", ctx,
                                                        model_matrix(&m, MODEL_SCORES, k),
                                                        R.S + (size_t)k * T * T,
                                                        (size_t)T * T, 1e-5);
                                        ok &= close_arr("model_matrix logits", ctx,
                                                        model_matrix(&m, MODEL_LOGITS, k),
                                                        R.L + (size_t)k * T * T,
                                                        (size_t)T * T, 1e-5);
                                    }
                                    ok &= close_arr("avg weights", ctx,
                                                    model_matrix(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG),
                                                    R.A, (size_t)T * T, 1e-5);
                                    ok &= close_arr("avg scores", ctx,
                                                    model_matrix(&m, MODEL_SCORES, MODEL_HEAD_AVG),
                                                    R.AS, (size_t)T * T, 1e-5);
                                    ok &= close_arr("avg logits", ctx,
                                                    model_matrix(&m, MODEL_LOGITS, MODEL_HEAD_AVG),
                                                    R.AL, (size_t)T * T, 1e-5);
                                    fails += !ok;
                                    runs++;
                                    ref_free(&R);
                                    free(X);
                                    model_destroy(&m);
                                }
            }
        free(text);
        free(idx);
    }
    assert_true(runs >= 4 * 80);
    assert_int_equal(fails, 0);
    embed_destroy(t);
}

/* ---- a worked example ------------------------------------------------------ */

/* Basic mode, d = 2, three tokens, X = [[1,0],[0,2],[1,1]].
 * scores = X·Xᵀ:
 *   row 0: x0·x0 = 1, x0·x1 = 0, x0·x2 = 1
 *   row 1: x1·x0 = 0, x1·x1 = 4, x1·x2 = 2
 *   row 2: x2·x0 = 1, x2·x1 = 2, x2·x2 = 2
 * No scaling, tau = 1, so logits = scores. With e = 2.718281828459045:
 *   row 0: [e, 1, e] / (2e + 1) = [e/6.43656, 1/6.43656, e/6.43656]
 *          = [0.422318798, 0.155362403, 0.422318798]
 *   row 1: [1, e^4, e^2] / (1 + e^4 + e^2), 1 + 54.59815 + 7.389056 = 62.987206
 *          = [0.015876240, 0.866813332, 0.117310428]
 *   row 2: [e, e^2, e^2] / (e + 2e^2) = [1, e, e] / (1 + 2e) = [1, e, e] / 6.43656
 *          = [0.155362403, 0.422318798, 0.422318798]
 * The weights are not symmetric (w[0][2] = 0.4223, w[2][0] = 0.1554).
 * Z = weights · X:
 *   z0 = 0.422319·[1,0] + 0.155362·[0,2] + 0.422319·[1,1] = [0.844637597, 0.733043605]
 *   z1 = 0.015876·[1,0] + 0.866813·[0,2] + 0.117310·[1,1] = [0.133186668, 1.850937092]
 *   z2 = 0.155362·[1,0] + 0.422319·[0,2] + 0.422319·[1,1] = [0.577681202, 1.266956395]
 * (checked with numpy in double precision). */
static void test_hand_example_basic(void **state)
{
    (void)state;
    const float X[6] = {1, 0, 0, 2, 1, 1};
    const double S[9] = {1, 0, 1, 0, 4, 2, 1, 2, 2};
    const double e = 2.718281828459045;
    const double W[9] = {
        e / (2 * e + 1), 1 / (2 * e + 1), e / (2 * e + 1),
        1 / (1 + e * e * e * e + e * e), e * e * e * e / (1 + e * e * e * e + e * e),
        e * e / (1 + e * e * e * e + e * e),
        1 / (1 + 2 * e), e / (1 + 2 * e), e / (1 + 2 * e)};
    const double Wnum[9] = {0.422318798, 0.155362403, 0.422318798,
                            0.015876240, 0.866813332, 0.117310428,
                            0.155362403, 0.422318798, 0.422318798};
    const double Z[6] = {0.844637597, 0.733043605, 0.133186668,
                         1.850937092, 0.577681202, 1.266956395};
    for (int i = 0; i < 9; i++)
        assert_true(fabs(W[i] - Wnum[i]) < 1e-8); /* the comment's arithmetic */
    AttnConfig cfg = attn_config_default();
    cfg.mode = ATTN_MODE_BASIC;
    cfg.scale = 0;
    AttnResult r;
    attn_result_init(&r);
    assert_int_equal(attn_forward(&r, X, 3, X, 3, 2, NULL, &cfg), 0);
    assert_int_equal(r.h, 1);
    assert_int_equal(r.dk, 2);
    for (int i = 0; i < 9; i++) {
        assert_true(fabs(r.scores[i] - S[i]) < 1e-6);
        assert_true(fabs(r.logits[i] - S[i]) < 1e-6);
        if (fabs(r.weights[i] - W[i]) >= 1e-6)
            print_error("weights[%d] = %.9g, want %.9g\n", i, (double)r.weights[i], W[i]);
        assert_true(fabs(r.weights[i] - W[i]) < 1e-6);
    }
    for (int i = 0; i < 6; i++) {
        assert_true(fabs(r.Z[i] - Z[i]) < 1e-6);
        assert_true(fabs(r.output[i] - Z[i]) < 1e-6);
    }
    /* a transposed matrix would fail */
    assert_true(fabs(r.weights[0 * 3 + 2] - r.weights[2 * 3 + 0]) > 0.2);
    attn_result_destroy(&r);
}

/* Same X, scaled (dk = 2: s = 1/sqrt 2) and tau = 2: mult = 1/(2 sqrt 2) =
 * 0.353553391. logits = scores · 0.353553391:
 *   row 0: [0.353553, 0, 0.353553], row 1: [0, 1.414214, 0.707107],
 *   row 2: [0.353553, 0.707107, 0.707107]
 * row 0: a = e^0.353553 = 1.424119; [a, 1, a] / (2a + 1) = [a, 1, a]/3.848238
 *        = [0.370070408, 0.259859185, 0.370070408]
 * row 1: [1, e^1.414214, e^0.707107] / (1 + 4.113250 + 2.028115) = [1, 4.113250, 2.028115]/7.141365
 *        = [0.140029245, 0.575975345, 0.283995410]
 * row 2: [a, a^2, a^2] / (a + 2a^2) = [1, a, a] / (1 + 2a) = [1, 1.424119, 1.424119]/3.848238
 *        = [0.259859185, 0.370070408, 0.370070408]
 * Z = weights · X = [0.740140815, 0.889788777], [0.424024655, 1.435946100],
 *                   [0.629929592, 1.110211223]. */
static void test_hand_example_scaled_tau2(void **state)
{
    (void)state;
    const float X[6] = {1, 0, 0, 2, 1, 1};
    const double mult = 1.0 / (2.0 * sqrt(2.0));
    const double S[9] = {1, 0, 1, 0, 4, 2, 1, 2, 2};
    const double W[9] = {0.370070408, 0.259859185, 0.370070408,
                         0.140029245, 0.575975345, 0.283995410,
                         0.259859185, 0.370070408, 0.370070408};
    const double Z[6] = {0.740140815, 0.889788777, 0.424024655,
                         1.435946100, 0.629929592, 1.110211223};
    AttnConfig cfg = attn_config_default();
    cfg.mode = ATTN_MODE_BASIC;
    cfg.scale = 1;
    cfg.temperature = 2.0f;
    AttnResult r;
    attn_result_init(&r);
    assert_int_equal(attn_forward(&r, X, 3, X, 3, 2, NULL, &cfg), 0);
    for (int i = 0; i < 9; i++) {
        assert_true(fabs(r.scores[i] - S[i]) < 1e-6);
        assert_true(fabs(r.logits[i] - S[i] * mult) < 1e-6);
        assert_true(fabs(r.weights[i] - W[i]) < 1e-6);
    }
    for (int i = 0; i < 6; i++)
        assert_true(fabs(r.Z[i] - Z[i]) < 1e-6);
    /* causal: row 0 is [1, 0, 0]; row 1 is softmax([0, 1.414214]) =
     * [1, 4.113250]/5.113250 = [0.195571, 0.804429], then 0 */
    cfg.causal = 1;
    assert_int_equal(attn_forward(&r, X, 3, X, 3, 2, NULL, &cfg), 0);
    assert_true(fabs(r.weights[0] - 1.0) < 1e-7);
    assert_true(r.weights[1] == 0.0f && r.weights[2] == 0.0f && r.weights[5] == 0.0f);
    assert_true(fabs(r.weights[3] - 1.0 / (1.0 + exp(sqrt(2.0)))) < 1e-6);
    assert_true(fabs(r.weights[3] - 0.195571) < 1e-6);
    assert_true(fabs(r.weights[4] - 0.804429) < 1e-6);
    for (int i = 6; i < 9; i++)
        assert_true(fabs(r.weights[i] - W[i]) < 1e-6);
    attn_result_destroy(&r);
}

/* ---- properties ------------------------------------------------------------ */

static void check_rows(const AttnResult *r, const char *ctx)
{
    for (int k = 0; k < r->h; k++)
        for (int i = 0; i < r->Tq; i++) {
            const float *w = r->weights + ((size_t)k * r->Tq + i) * r->Tk;
            double s = 0;
            for (int j = 0; j < r->Tk; j++) {
                if (!(isfinite(w[j]) && w[j] >= 0.0f && w[j] <= 1.0f)) {
                    print_error("[%s] head %d weight[%d][%d] = %g\n", ctx, k, i, j,
                                (double)w[j]);
                    fail();
                }
                if (r->causal && j > i && w[j] != 0.0f) {
                    print_error("[%s] masked weight[%d][%d] = %g, not 0\n", ctx, i, j,
                                (double)w[j]);
                    fail();
                }
                s += w[j];
            }
            if (r->Tk > 0 && !(fabs(s - 1.0) < 1e-6)) {
                print_error("[%s] head %d row %d sums to %.9g\n", ctx, k, i, s);
                fail();
            }
        }
}

static void test_rows_sum_to_one(void **state)
{
    (void)state;
    AttnParams p;
    for (int T = 1; T <= 60; T += 7)
        for (int h = 1; h <= 4; h *= 2)
            for (int causal = 0; causal <= 1; causal++) {
                assert_int_equal(attn_params_create(&p, 16, h), 0);
                attn_params_xavier(&p, (uint64_t)T * 10 + h);
                rng_seed((uint64_t)T);
                float *X = rand_matrix(T, 16, -3, 3);
                AttnConfig cfg = attn_config_default();
                cfg.causal = causal;
                cfg.temperature = 0.3f;
                AttnResult r;
                attn_result_init(&r);
                assert_int_equal(attn_forward(&r, X, T, X, T, 16, &p, &cfg), 0);
                check_rows(&r, "random");
                /* the average of the heads sums to 1 as well */
                for (int i = 0; i < T; i++) {
                    double s = 0;
                    for (int j = 0; j < T; j++)
                        s += r.avg[(size_t)i * T + j];
                    assert_true(fabs(s - 1.0) < 1e-6);
                }
                attn_result_destroy(&r);
                attn_params_destroy(&p);
                free(X);
            }
}

static void test_causal_upper_triangle_zero(void **state)
{
    (void)state;
    AttnParams p;
    assert_int_equal(attn_params_create(&p, 8, 2), 0);
    attn_params_xavier(&p, 3);
    rng_seed(17);
    int T = 12;
    float *X = rand_matrix(T, 8, -2, 2);
    AttnConfig cfg = attn_config_default();
    cfg.heads = 2;
    cfg.causal = 1;
    for (int mode = 0; mode <= 1; mode++) {
        cfg.mode = mode ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
        AttnResult r;
        attn_result_init(&r);
        assert_int_equal(attn_forward(&r, X, T, X, T, 8, &p, &cfg), 0);
        for (int k = 0; k < r.h; k++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    float w = r.weights[((size_t)k * T + i) * T + j];
                    assert_int_equal(attn_masked(&r, i, j), j > i);
                    if (j > i)
                        assert_true(w == 0.0f && !signbit(w));
                    else
                        assert_true(w > 0.0f);
                }
        /* the first query sees only itself */
        for (int k = 0; k < r.h; k++)
            assert_true(fabs(r.weights[(size_t)k * T * T] - 1.0f) < 1e-7);
        /* and its context vector is its own value vector */
        for (int k = 0; k < r.h; k++)
            for (int c = 0; c < r.dk; c++)
                assert_true(fabs(r.Z[(size_t)k * T * r.dk + c] -
                                 r.V[(size_t)k * T * r.dk + c]) < 1e-6);
        attn_result_destroy(&r);
    }
    /* without the mask, the same entries are not 0 */
    cfg.causal = 0;
    cfg.mode = ATTN_MODE_LEARNED;
    AttnResult r;
    attn_result_init(&r);
    assert_int_equal(attn_forward(&r, X, T, X, T, 8, &p, &cfg), 0);
    assert_true(r.weights[1] > 0.0f);
    assert_int_equal(attn_masked(&r, 0, 1), 0);
    attn_result_destroy(&r);
    attn_params_destroy(&p);
    free(X);
}

static void test_permutation_equivariance(void **state)
{
    (void)state;
    const int T = 9, d = 8;
    static const int perm[9] = {4, 0, 8, 2, 7, 1, 3, 6, 5};
    rng_seed(2024);
    float *X = rand_matrix(T, d, -1.5, 1.5);
    float *Xp = malloc((size_t)T * d * sizeof(float));
    for (int i = 0; i < T; i++)
        memcpy(Xp + (size_t)i * d, X + (size_t)perm[i] * d, (size_t)d * sizeof(float));
    for (int mode = 0; mode <= 1; mode++) {
        AttnParams p;
        assert_int_equal(attn_params_create(&p, d, mode ? 2 : 1), 0);
        attn_params_xavier(&p, 77);
        AttnConfig cfg = attn_config_default();
        cfg.mode = mode ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
        cfg.heads = p.h;
        AttnResult a, b;
        attn_result_init(&a);
        attn_result_init(&b);
        assert_int_equal(attn_forward(&a, X, T, X, T, d, &p, &cfg), 0);
        assert_int_equal(attn_forward(&b, Xp, T, Xp, T, d, &p, &cfg), 0);
        for (int k = 0; k < a.h; k++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    float wb = b.weights[((size_t)k * T + i) * T + j];
                    float wa = a.weights[((size_t)k * T + perm[i]) * T + perm[j]];
                    assert_true(fabs(wa - wb) < 1e-6);
                }
        for (int i = 0; i < T; i++)
            for (int c = 0; c < d; c++)
                assert_true(fabs(b.output[(size_t)i * d + c] -
                                 a.output[(size_t)perm[i] * d + c]) < 1e-5);
        /* the setup is not symmetric: the unpermuted matrix differs */
        int differs = 0;
        for (int i = 0; i < T * T; i++)
            differs |= fabs(a.weights[i] - b.weights[i]) > 1e-3;
        assert_true(differs);
        int asym = 0;
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                asym |= fabs(a.weights[i * T + j] - a.weights[j * T + i]) > 1e-3;
        assert_true(asym);
        attn_result_destroy(&a);
        attn_result_destroy(&b);
        attn_params_destroy(&p);
    }
    free(X);
    free(Xp);
}

static void test_identity_learned_equals_basic(void **state)
{
    (void)state;
    for (int T = 1; T <= 20; T += 19) {
        rng_seed(5 + (uint64_t)T);
        float *X = rand_matrix(T, 16, -2, 2);
        AttnParams p;
        assert_int_equal(attn_params_create(&p, 16, 1), 0); /* identity */
        for (int causal = 0; causal <= 1; causal++) {
            AttnConfig cfg = attn_config_default();
            cfg.causal = causal;
            cfg.temperature = 0.7f;
            AttnResult a, b;
            attn_result_init(&a);
            attn_result_init(&b);
            cfg.mode = ATTN_MODE_LEARNED;
            assert_int_equal(attn_forward(&a, X, T, X, T, 16, &p, &cfg), 0);
            cfg.mode = ATTN_MODE_BASIC;
            assert_int_equal(attn_forward(&b, X, T, X, T, 16, &p, &cfg), 0);
            assert_int_equal(a.h, 1);
            assert_int_equal(b.h, 1);
            assert_int_equal(a.dk, b.dk);
            for (int i = 0; i < T * T; i++) {
                assert_true(fabs(a.scores[i] - b.scores[i]) < 1e-6);
                assert_true(fabs(a.weights[i] - b.weights[i]) < 1e-6);
            }
            for (int i = 0; i < T * 16; i++) {
                assert_true(fabs(a.Q[i] - X[i]) < 1e-6);
                assert_true(fabs(a.Z[i] - b.Z[i]) < 1e-6);
                assert_true(fabs(a.output[i] - b.output[i]) < 1e-6);
            }
            attn_result_destroy(&a);
            attn_result_destroy(&b);
        }
        attn_params_destroy(&p);
        free(X);
    }
}

static void test_large_logits_finite(void **state)
{
    (void)state;
    static const double scales[] = {3e2, 1e3, 3e3};
    for (size_t s = 0; s < 3; s++)
        for (int mode = 0; mode <= 1; mode++)
            for (int causal = 0; causal <= 1; causal++) {
                const int T = 10, d = 16;
                rng_seed(31 + s);
                float *X = rand_matrix(T, d, -scales[s], scales[s]);
                AttnParams p;
                assert_int_equal(attn_params_create(&p, d, 2), 0);
                AttnConfig cfg = attn_config_default();
                cfg.mode = mode ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
                cfg.causal = causal;
                AttnResult r;
                attn_result_init(&r);
                assert_int_equal(attn_forward(&r, X, T, X, T, d, &p, &cfg), 0);
                /* the logits really are large */
                float big = 0;
                for (size_t i = 0; i < (size_t)r.h * T * T; i++)
                    big = fmaxf(big, fabsf(r.logits[i]));
                assert_true(big >= 1e4f);
                check_rows(&r, "large logits");
                /* each row puts (almost) all its weight on its largest logit */
                for (int k = 0; k < r.h; k++)
                    for (int i = 0; i < T; i++) {
                        const float *lg = r.logits + ((size_t)k * T + i) * T;
                        const float *w = r.weights + ((size_t)k * T + i) * T;
                        int nv = causal ? i + 1 : T, am = 0;
                        for (int j = 1; j < nv; j++)
                            if (lg[j] > lg[am])
                                am = j;
                        assert_true(w[am] >= 0.5f);
                    }
                for (size_t i = 0; i < (size_t)T * d; i++)
                    assert_true(isfinite(r.Z[i]) && isfinite(r.output[i]));
                attn_result_destroy(&r);
                attn_params_destroy(&p);
                free(X);
            }
}

static int has_nan(const float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(a[i]))
            return 1;
    return 0;
}

static void test_overflow_1e30(void **state)
{
    (void)state;
    const int T = 6, d = 4;
    /* 1e30 · 1e30 overflows float to inf; mixed signs make inf - inf = NaN */
    float X[6 * 4] = {1e30f, 0, 0, 0,
                      -1e30f, 1e30f, 0, 0,
                      1e30f, 1e30f, 0.5f, 0,
                      0.1f, 0.2f, 0.3f, 0.4f,
                      1e30f, -1e30f, 1e30f, -1e30f,
                      0, 0, 0, 1e30f};
    for (int mode = 0; mode <= 1; mode++)
        for (int causal = 0; causal <= 1; causal++)
            for (int scale = 0; scale <= 1; scale++)
                for (int seed = 0; seed <= 1; seed++) {
                    AttnParams p;
                    assert_int_equal(attn_params_create(&p, d, mode ? 2 : 1), 0);
                    if (seed)
                        attn_params_xavier(&p, 9);
                    AttnConfig cfg = attn_config_default();
                    cfg.mode = mode ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
                    cfg.causal = causal;
                    cfg.scale = scale;
                    AttnResult r;
                    attn_result_init(&r);
                    assert_int_equal(attn_forward(&r, X, T, X, T, d, &p, &cfg), 0);
                    /* the scores did overflow */
                    int nonfinite = 0;
                    for (size_t i = 0; i < (size_t)r.h * T * T; i++)
                        nonfinite |= !isfinite(r.scores[i]);
                    assert_true(nonfinite);
                    check_rows(&r, "1e30");
                    assert_false(has_nan(r.weights, (size_t)r.h * T * T));
                    assert_false(has_nan(r.avg, (size_t)T * T));
                    attn_result_destroy(&r);
                    attn_params_destroy(&p);
                }
}

static void check_softmax_row(const float *in, int n, int n_valid)
{
    float row[16];
    memcpy(row, in, (size_t)n * sizeof(float));
    attn_softmax_row(row, n, n_valid);
    int nv = n_valid < n ? n_valid : n;
    double s = 0;
    for (int j = 0; j < n; j++) {
        if (isnan(row[j]) || !(row[j] >= 0.0f && row[j] <= 1.0f)) {
            print_error("softmax n=%d n_valid=%d: out[%d] = %g\n", n, n_valid, j,
                        (double)row[j]);
            fail();
        }
        if (j >= nv)
            assert_true(row[j] == 0.0f);
        s += row[j];
    }
    if (nv > 0)
        assert_true(fabs(s - 1.0) < 1e-6);
    else
        assert_true(s == 0.0);
}

static void test_softmax_nonfinite(void **state)
{
    (void)state;
    const float N = NAN, I = INFINITY;
    const float rows[][4] = {
        {N, N, N, N}, {N, 1, 2, 3}, {1, N, 2, N}, {I, 1, 2, 3}, {I, I, 0, N},
        {-I, -I, -I, -I}, {-I, 0, -I, 1}, {I, -I, N, 0}, {N, -I, I, I},
        {-I, N, -I, N}, {3e38f, -3e38f, 3e38f, 1}, {-3e38f, -3e38f, -3e38f, -3e38f},
        {0, 0, 0, 0}, {I, N, N, N},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (int nv = 0; nv <= 5; nv++)
            check_softmax_row(rows[r], 4, nv);
    /* specific outcomes: a single +inf takes all the weight */
    float a[3] = {1, I, 2};
    attn_softmax_row(a, 3, 3);
    assert_true(a[0] == 0.0f && a[1] == 1.0f && a[2] == 0.0f);
    /* two +inf share it */
    float b[4] = {I, 0, I, 5};
    attn_softmax_row(b, 4, 4);
    assert_true(fabs(b[0] - 0.5) < 1e-7 && fabs(b[2] - 0.5) < 1e-7 && b[1] == 0.0f);
    /* a NaN next to finite values gets no weight, the rest is a softmax */
    float c[3] = {N, 0, logf(3.0f)};
    attn_softmax_row(c, 3, 3);
    assert_true(c[0] == 0.0f);
    assert_true(fabs(c[1] - 0.25) < 1e-6 && fabs(c[2] - 0.75) < 1e-6);
}

static void test_softmax_finite(void **state)
{
    (void)state;
    float r[5] = {1, 2, 3, 100, -7};
    attn_softmax_row(r, 5, 3);
    double s = exp(1.0) + exp(2.0) + exp(3.0);
    assert_true(fabs(r[0] - exp(1.0) / s) < 1e-6);
    assert_true(fabs(r[1] - exp(2.0) / s) < 1e-6);
    assert_true(fabs(r[2] - exp(3.0) / s) < 1e-6);
    assert_true(r[3] == 0.0f && r[4] == 0.0f);
    /* shift invariance with huge offsets: stable */
    float big[3] = {1e4f + 1, 1e4f + 2, 1e4f + 3};
    attn_softmax_row(big, 3, 3);
    assert_true(fabs(big[2] - exp(3.0) / s) < 1e-5);
    /* n_valid > n is clamped; n_valid 0 gives zeros */
    float c[2] = {0, 0};
    attn_softmax_row(c, 2, 7);
    assert_true(fabs(c[0] - 0.5) < 1e-7 && fabs(c[1] - 0.5) < 1e-7);
    float z[3] = {1, 2, 3};
    attn_softmax_row(z, 3, 0);
    assert_true(z[0] == 0.0f && z[1] == 0.0f && z[2] == 0.0f);
    /* underflow: exp(-200) is 0 in float, weights stay exact */
    float u[2] = {0, -200};
    attn_softmax_row(u, 2, 2);
    assert_true(u[0] == 1.0f && u[1] == 0.0f);
}

static void test_params_identity(void **state)
{
    (void)state;
    static const int cfgs[][2] = {{16, 1}, {16, 2}, {16, 4}, {16, 16}, {12, 3}, {5, 5}, {1, 1}};
    for (size_t t = 0; t < sizeof cfgs / sizeof cfgs[0]; t++) {
        int d = cfgs[t][0], h = cfgs[t][1];
        AttnParams p;
        assert_int_equal(attn_params_create(&p, d, h), 0);
        assert_int_equal(p.d, d);
        assert_int_equal(p.h, h);
        assert_int_equal(p.dk, d / h);
        int dk = p.dk;
        /* scribble, then reset */
        for (int i = 0; i < d * d; i++)
            p.Wq[i] = p.Wk[i] = p.Wv[i] = p.Wo[i] = 0.25f;
        attn_params_identity(&p);
        for (int k = 0; k < h; k++)
            for (int r = 0; r < d; r++)
                for (int c = 0; c < dk; c++) {
                    /* head k: column c is column k·dk + c of I_d */
                    float want = r == k * dk + c ? 1.0f : 0.0f;
                    assert_true(wel(p.Wq, d, dk, k, r, c) == want);
                    assert_true(wel(p.Wk, d, dk, k, r, c) == want);
                    assert_true(wel(p.Wv, d, dk, k, r, c) == want);
                    int rows, cols;
                    float *M = attn_params_matrix(&p, 0, k, &rows, &cols);
                    assert_int_equal(rows, d);
                    assert_int_equal(cols, dk);
                    assert_true(M[(size_t)r * cols + c] == want);
                    M = attn_params_matrix(&p, 2, k, &rows, &cols);
                    assert_true(M[(size_t)r * cols + c] == want);
                }
        for (int r = 0; r < d; r++)
            for (int c = 0; c < d; c++)
                assert_true(p.Wo[(size_t)r * d + c] == (r == c ? 1.0f : 0.0f));
        int rows, cols;
        assert_ptr_equal(attn_params_matrix(&p, 3, 0, &rows, &cols), p.Wo);
        assert_int_equal(rows, d);
        assert_int_equal(cols, d);
        if (h > 1)
            assert_ptr_equal(attn_params_matrix(&p, 1, 1, &rows, &cols),
                             p.Wk + (size_t)d * dk);
        attn_params_destroy(&p);
        assert_null(p.Wq);
    }
}

/* Expected Xavier numbers from this file's own splitmix64:
 * W = (2u - 1) · sqrt(6 / (rows + cols)), u = (next >> 40) / 2^24, in the
 * order Wq, Wk, Wv of head 0, head 1, ..., then Wo. */
static void test_params_xavier(void **state)
{
    (void)state;
    static const int cfgs[][2] = {{16, 1}, {16, 4}, {12, 3}, {8, 2}};
    static const uint64_t seeds[] = {0, 1, 7, 0xDEADBEEFULL, 1ULL << 53};
    for (size_t t = 0; t < 4; t++)
        for (size_t s = 0; s < 5; s++) {
            int d = cfgs[t][0], h = cfgs[t][1];
            AttnParams a, b, c;
            assert_int_equal(attn_params_create(&a, d, h), 0);
            assert_int_equal(attn_params_create(&b, d, h), 0);
            assert_int_equal(attn_params_create(&c, d, h), 0);
            attn_params_xavier(&a, seeds[s]);
            attn_params_xavier(&b, seeds[s]);
            attn_params_xavier(&c, seeds[s] + 1);
            size_t n = (size_t)d * d;
            assert_memory_equal(a.Wq, b.Wq, n * sizeof(float));
            assert_memory_equal(a.Wk, b.Wk, n * sizeof(float));
            assert_memory_equal(a.Wv, b.Wv, n * sizeof(float));
            assert_memory_equal(a.Wo, b.Wo, n * sizeof(float));
            assert_memory_not_equal(a.Wq, c.Wq, n * sizeof(float));
            assert_memory_not_equal(a.Wo, c.Wo, n * sizeof(float));
            int dk = d / h;
            double lim = sqrt(6.0 / (d + dk)), limo = sqrt(6.0 / (d + d));
            rng_seed(seeds[s]);
            for (int k = 0; k < h; k++)
                for (int m = 0; m < 3; m++) {
                    const float *W = (m == 0 ? a.Wq : m == 1 ? a.Wk : a.Wv) + (size_t)k * d * dk;
                    for (int i = 0; i < d * dk; i++) {
                        double u = (double)(rng_next() >> 40) / 16777216.0;
                        double want = (2 * u - 1) * lim;
                        assert_true(fabs(W[i]) <= lim * (1 + 1e-6));
                        if (fabs(W[i] - want) > 1e-6) {
                            print_error("xavier d=%d h=%d seed=%llu head %d matrix %d [%d]: %.9g want %.9g\n",
                                        d, h, (unsigned long long)seeds[s], k, m, i,
                                        (double)W[i], want);
                            fail();
                        }
                    }
                }
            for (size_t i = 0; i < n; i++) {
                double u = (double)(rng_next() >> 40) / 16777216.0;
                assert_true(fabs(a.Wo[i] - (2 * u - 1) * limo) < 1e-6);
                assert_true(fabs(a.Wo[i]) <= limo * (1 + 1e-6));
            }
            /* not degenerate: values spread over the range */
            float mx = 0;
            for (size_t i = 0; i < n; i++)
                mx = fmaxf(mx, fabsf(a.Wq[i]));
            assert_true(mx > 0.5 * lim);
            attn_params_destroy(&a);
            attn_params_destroy(&b);
            attn_params_destroy(&c);
        }
}

static void test_params_copy(void **state)
{
    (void)state;
    AttnParams a, b = {0};
    assert_int_equal(attn_params_create(&a, 12, 3), 0);
    attn_params_xavier(&a, 5);
    assert_int_equal(attn_params_create(&b, 4, 1), 0);
    assert_int_equal(attn_params_copy(&b, &a), 0);
    assert_int_equal(b.d, 12);
    assert_int_equal(b.h, 3);
    assert_int_equal(b.dk, 4);
    assert_memory_equal(a.Wq, b.Wq, 144 * sizeof(float));
    assert_memory_equal(a.Wk, b.Wk, 144 * sizeof(float));
    assert_memory_equal(a.Wv, b.Wv, 144 * sizeof(float));
    assert_memory_equal(a.Wo, b.Wo, 144 * sizeof(float));
    assert_ptr_not_equal(a.Wq, b.Wq);
    b.Wq[0] += 1.0f;
    assert_true(a.Wq[0] != b.Wq[0]);
    attn_params_destroy(&a);
    attn_params_destroy(&b);
}

static void test_posenc(void **state)
{
    (void)state;
    static const int ds[] = {1, 2, 4, 7, 16, 64, 512};
    for (size_t t = 0; t < sizeof ds / sizeof ds[0]; t++) {
        int d = ds[t];
        for (int pos = 0; pos < 200; pos += (pos < 10 ? 1 : 17))
            for (int k = 0; k < d; k++) {
                double want = ref_pe(pos, k, d);
                float got = attn_posenc(pos, k, d);
                if (!(fabs(got - want) < 1e-6)) {
                    print_error("posenc(%d, %d, %d) = %.9g, want %.9g\n", pos, k, d,
                                (double)got, want);
                    fail();
                }
            }
    }
    /* a few values by hand: position 0 is [0, 1, 0, 1, ...]; position 1,
     * d = 4: [sin 1, cos 1, sin(1/100), cos(1/100)] */
    assert_true(attn_posenc(0, 0, 4) == 0.0f);
    assert_true(attn_posenc(0, 1, 4) == 1.0f);
    assert_true(fabs(attn_posenc(1, 0, 4) - 0.841470985) < 1e-7);
    assert_true(fabs(attn_posenc(1, 1, 4) - 0.540302306) < 1e-7);
    assert_true(fabs(attn_posenc(1, 2, 4) - 0.009999833) < 1e-7);
    assert_true(fabs(attn_posenc(1, 3, 4) - 0.999950000) < 1e-7);
    /* attn_posenc_add adds to X row by row */
    const int T = 5, d = 6;
    float X[5 * 6];
    for (int i = 0; i < T * d; i++)
        X[i] = (float)i * 0.5f;
    attn_posenc_add(X, T, d);
    for (int p = 0; p < T; p++)
        for (int k = 0; k < d; k++)
            assert_true(fabs(X[p * d + k] - ((p * d + k) * 0.5 + ref_pe(p, k, d))) < 1e-5);
}

static void test_params_create_rejects(void **state)
{
    (void)state;
    static const int bad[][2] = {{16, 3}, {16, 5}, {16, 0}, {16, -2}, {0, 1},
                                 {-4, 2}, {16, 32}, {12, 8}, {128, 128}, {7, 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        AttnParams p;
        memset(&p, 0x5A, sizeof p);
        assert_int_equal(attn_params_create(&p, bad[i][0], bad[i][1]), -ATTN_E_HEADS);
        assert_null(p.Wq);
        assert_null(p.Wo);
        attn_params_destroy(&p); /* safe on a rejected struct */
    }
    static const int good[][2] = {{16, 1}, {16, 2}, {16, 8}, {16, 16}, {12, 6}, {64, 64}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        AttnParams p;
        assert_int_equal(attn_params_create(&p, good[i][0], good[i][1]), 0);
        assert_int_equal(p.dk * p.h, p.d);
        attn_params_destroy(&p);
    }
}

static void test_forward_rejects(void **state)
{
    (void)state;
    float X[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    AttnParams p;
    assert_int_equal(attn_params_create(&p, 4, 2), 0);
    AttnResult r;
    attn_result_init(&r);
    AttnConfig cfg = attn_config_default();
    const float bad_tau[] = {0.0f, -0.0f, -1.0f, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_tau / sizeof bad_tau[0]; i++) {
        cfg.temperature = bad_tau[i];
        assert_int_equal(attn_forward(&r, X, 2, X, 2, 4, &p, &cfg), -ATTN_E_RANGE);
    }
    cfg.temperature = 1.0f;
    /* params for another d */
    assert_int_equal(attn_forward(&r, X, 1, X, 1, 8, &p, &cfg), -ATTN_E_SHAPE);
    assert_int_equal(attn_forward(&r, X, -1, X, 2, 4, &p, &cfg), -ATTN_E_SHAPE);
    assert_int_equal(attn_forward(&r, X, 2, X, 2, 0, &p, &cfg), -ATTN_E_SHAPE);
    /* basic mode ignores p: NULL is fine */
    cfg.mode = ATTN_MODE_BASIC;
    assert_int_equal(attn_forward(&r, X, 2, X, 2, 4, NULL, &cfg), 0);
    assert_int_equal(r.h, 1);
    assert_int_equal(r.dk, 4);
    attn_result_destroy(&r);
    attn_params_destroy(&p);
}

/* ---- checks run in a child process (a crash must not take the suite) ----- */

/* Every buffer of r is at least as large as its shape needs (glibc's
 * malloc_usable_size; ASan reports the requested size). */
static int buffers_ok(const AttnResult *r)
{
    size_t q = (size_t)r->h * r->Tq * r->dk, k = (size_t)r->h * r->Tk * r->dk,
           qk = (size_t)r->h * r->Tq * r->Tk, aq = (size_t)r->Tq * r->Tk,
           cd = (size_t)r->Tq * r->d;
    struct { const float *p; size_t n; const char *name; } b[] = {
        {r->Q, q, "Q"}, {r->Z, q, "Z"}, {r->K, k, "K"}, {r->V, k, "V"},
        /* logits only when the caller keeps them (skip_logits unset) */
        {r->Kt, k, "Kt"}, {r->scores, qk, "scores"}, {r->logits, r->skip_logits ? 0 : qk, "logits"},
        {r->weights, qk, "weights"}, {r->avg, r->skip_avg ? 0 : aq, "avg"}, {r->concat, cd, "concat"},
        {r->output, cd, "output"},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
        if (b[i].n && (!b[i].p || malloc_usable_size((void *)b[i].p) < b[i].n * sizeof(float))) {
            fprintf(stderr, "buffer %s: usable size %zu bytes, needs %zu (Tq %d Tk %d h %d; 0 = overrun chunk)\n",
                    b[i].name, b[i].p ? malloc_usable_size((void *)b[i].p) : 0,
                    b[i].n * sizeof(float), r->Tq, r->Tk, r->h);
            ok = 0;
        }
    return ok;
}

static int run_in_child(int (*fn)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0 && errno == ENOSYS) { /* wasm (make test-web-io): no processes */
        fprintf(stderr, "skipped: no fork() on this platform to run the check in a child\n");
        skip();
    }
    assert_true(pid >= 0);
    if (pid == 0) {
        /* cmocka catches crashes with signal handlers and would go on running
         * the remaining tests in the child: restore the defaults */
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        _exit(fn());
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

static int child_learned_null_params(void)
{
    float X[4] = {1, 2, 3, 4};
    AttnConfig cfg = attn_config_default(); /* learned */
    AttnResult r;
    attn_result_init(&r);
    int rc = attn_forward(&r, X, 1, X, 1, 4, NULL, &cfg);
    attn_result_destroy(&r);
    return rc == -ATTN_E_SHAPE ? 0 : 3;
}

/* attn_forward in learned mode without params must refuse (-ATTN_E_SHAPE),
 * not dereference NULL. */
static void test_forward_learned_null_params(void **state)
{
    (void)state;
    int st = run_in_child(child_learned_null_params);
    if (st)
        print_error("learned mode with p = NULL: child status %d (128+11 = SIGSEGV)\n", st);
    assert_int_equal(st, 0);
}

/* One result reused for a sequence of shapes, heads and modes: every run
 * must match the reference and stay inside the buffers (the result "grows
 * them only when the size grows"). */
static int child_result_reuse(void)
{
    static const struct { int learned, h, Tq, Tk; } seq[] = {
        {1, 4, 10, 10}, {1, 1, 20, 20}, {1, 2, 3, 3},  {0, 1, 25, 25},
        {1, 4, 6, 30},  {1, 1, 31, 31}, {1, 2, 40, 2}, {0, 1, 1, 1},
        {1, 4, 12, 12}, {1, 1, 24, 24},
    };
    const int d = 16;
    AttnResult r;
    attn_result_init(&r);
    int bad = 0;
    for (size_t s = 0; s < sizeof seq / sizeof seq[0]; s++) {
        AttnParams p;
        if (attn_params_create(&p, d, seq[s].h) < 0)
            return 10;
        attn_params_xavier(&p, 100 + s);
        rng_seed(200 + s);
        float *Xq = malloc((size_t)seq[s].Tq * d * sizeof(float));
        float *Xk = malloc((size_t)seq[s].Tk * d * sizeof(float));
        for (int i = 0; i < seq[s].Tq * d; i++)
            Xq[i] = (float)urand(-1, 1);
        for (int i = 0; i < seq[s].Tk * d; i++)
            Xk[i] = (float)urand(-1, 1);
        AttnConfig cfg = attn_config_default();
        cfg.mode = seq[s].learned ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
        cfg.causal = (int)(s & 1);
        if (attn_forward(&r, Xq, seq[s].Tq, Xk, seq[s].Tk, d, &p, &cfg) != 0)
            return 11;
        if (!buffers_ok(&r))
            return 2;
        double *dq = malloc((size_t)seq[s].Tq * d * sizeof(double));
        double *dk = malloc((size_t)seq[s].Tk * d * sizeof(double));
        for (int i = 0; i < seq[s].Tq * d; i++)
            dq[i] = Xq[i];
        for (int i = 0; i < seq[s].Tk * d; i++)
            dk[i] = Xk[i];
        Ref R;
        ref_run(&R, dq, seq[s].Tq, dk, seq[s].Tk, d, &p, seq[s].learned, 1,
                cfg.causal, 1.0);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "reuse step %zu", s);
        bad += !check_result(&r, &R, ctx);
        ref_free(&R);
        free(dq);
        free(dk);
        free(Xq);
        free(Xk);
        attn_params_destroy(&p);
    }
    attn_result_destroy(&r);
    return bad ? 1 : 0;
}

static void test_result_reuse_across_shapes(void **state)
{
    (void)state;
    int st = run_in_child(child_result_reuse);
    if (st)
        print_error("reusing one AttnResult across heads/sizes: child status %d "
                    "(e.g. 4 heads at T=10, then 1 head at T=20 must still fit r->avg)\n", st);
    assert_int_equal(st, 0);
}

/* The same through the model: 4 heads on a short sentence, then 1 head on a
 * longer one (what the window does when the user changes heads and types). */
static int child_model_heads_then_longer(void)
{
    EmbedTable *t = NULL;
    const char *tab = "a 1 0 0 0\nb 0 1 0 0\nc 0 0 1 0\nd 0 0 0 1\n";
    if (embed_parse(&t, tab, strlen(tab), "tab", NULL, NULL) < 0)
        return 10;
    AttnConfig cfg = attn_config_default();
    cfg.heads = 4;
    Model m;
    if (model_init(&m, t, &cfg) < 0)
        return 11;
    const char *s1 = "a b c d a b c d a b";
    model_set_text(&m, s1, strlen(s1));
    if (model_compute(&m) < 0)
        return 12;
    if (!buffers_ok(&m.res))
        return 2;
    if (model_set_heads(&m, 1) < 0)
        return 13;
    const char *s2 = "a b c d a b c d a b c d a b c d a b c d";
    model_set_text(&m, s2, strlen(s2));
    if (model_compute(&m) < 0)
        return 14;
    if (!buffers_ok(&m.res))
        return 2;
    int bad = 0;
    if (model_prepare(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG) < 0)
        return 15;
    const float *w = model_matrix(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG);
    const float *w0 = model_matrix(&m, MODEL_WEIGHTS, 0);
    for (int i = 0; i < 400; i++)
        bad |= fabsf(w[i] - w0[i]) > 1e-7f;
    model_destroy(&m);
    embed_destroy(t);
    return bad;
}

/* A Model's forward keeps no logits and no heads' mean; model_prepare makes
 * them (model_matrix only reads: NULL before): the same floats as a forward
 * that keeps them, and made again after the next compute (τ changed here). */
static void test_model_logits_on_demand(void **state)
{
    (void)state;
    EmbedTable *t = make_table(40, 16, 5);
    AttnConfig cfg = attn_config_default();
    cfg.mode = ATTN_MODE_LEARNED;
    cfg.heads = 4;
    Model m;
    assert_int_equal(model_init(&m, t, &cfg), 0);
    m.keep_window_matrices = 1;
    const char *text = "w1 w7 w3 w9 w12 w5 w30 w2 w8";
    assert_int_equal(model_set_text(&m, text, strlen(text)), 0);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            m.cfg.temperature = 0.6f;
        assert_int_equal(model_compute(&m), 0);
        assert_null(m.res.logits);
        assert_null(m.res.avg);
        AttnConfig c = m.cfg;
        c.causal = model_causal(&m);
        AttnResult r;
        attn_result_init(&r);
        assert_int_equal(attn_forward(&r, m.X, m.T, m.X, m.T, m.d, &m.params, &c), 0);
        size_t qk = (size_t)m.T * m.T;
        assert_null(model_matrix(&m, MODEL_LOGITS, 1));
        assert_null(model_matrix(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG));
        assert_int_equal(model_prepare(&m, MODEL_LOGITS, 2), 0);
        assert_int_equal(model_prepare(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG), 0);
        for (int k = 0; k < 4; k++)
            assert_memory_equal(model_matrix(&m, MODEL_LOGITS, k), r.logits + k * qk,
                                qk * sizeof(float));
        assert_memory_equal(model_matrix(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG), r.avg,
                            qk * sizeof(float));
        attn_result_destroy(&r);
    }
    model_destroy(&m);
    embed_destroy(t);
}

static void test_model_heads_then_longer_sentence(void **state)
{
    (void)state;
    int st = run_in_child(child_model_heads_then_longer);
    if (st)
        print_error("model: 4 heads T=10, then 1 head T=20: child status %d\n", st);
    assert_int_equal(st, 0);
}

/* Bitwise equality of two results' arrays (the partial update promises the
 * same floats as a whole forward, not merely close ones). */
static int same_result(const AttnResult *a, const AttnResult *b, const char *ctx)
{
    if (a->Tq != b->Tq || a->Tk != b->Tk || a->h != b->h || a->dk != b->dk) {
        print_error("%s: shapes differ\n", ctx);
        return 0;
    }
    size_t hqk = (size_t)a->h * a->Tq * a->Tk, q = (size_t)a->Tq * a->d, k = (size_t)a->Tk * a->d;
    struct { const char *name; const float *x, *y; size_t n; } arr[] = {
        {"Q", a->Q, b->Q, q},           {"K", a->K, b->K, k},
        {"V", a->V, b->V, k},           {"scores", a->scores, b->scores, hqk},
        {"weights", a->weights, b->weights, hqk},
        {"avg", a->avg, b->avg, a->avg && b->avg ? (size_t)a->Tq * a->Tk : 0},
        {"Z", a->Z, b->Z, q},           {"concat", a->concat, b->concat, q},
        {"output", a->output, b->output, q},
        {"logits", a->logits, b->logits, a->logits && b->logits ? hqk : 0},
    };
    if (!a->logits != !b->logits || !a->avg != !b->avg) {
        print_error("%s: logits or the heads' mean kept by one only\n", ctx);
        return 0;
    }
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++)
        for (size_t e = 0; e < arr[i].n; e++)
            if (memcmp(&arr[i].x[e], &arr[i].y[e], sizeof(float)) != 0) {
                print_error("%s: %s[%zu] = %.9g after the update, %.9g from a whole forward\n",
                            ctx, arr[i].name, e, (double)arr[i].x[e], (double)arr[i].y[e]);
                return 0;
            }
    return 1;
}

/* attn_forward_update after changing some rows gives exactly what a whole
 * forward of the new input gives: self- and cross-attention, both modes,
 * 1/2/4 heads, causal or not, logits kept or not, odd sizes, T = 1, changes
 * at the start, middle and end, several updates in a row, empty changes,
 * and a change of shape (which must fall back to the whole pass). */
static void test_forward_update_matches_full(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {5, 5}, {8, 8}, {13, 13}, {37, 37},
                                   {70, 70}, {9, 23}, {40, 6}};
    const int d = 16;
    int cases = 0;
    rng_seed(4242);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int variant = 0; variant < 12; variant++) {
            int Tq = sizes[si][0], Tk = sizes[si][1], self = Tq == Tk;
            int h = variant % 3 == 0 ? 1 : variant % 3 == 1 ? 2 : 4;
            AttnConfig cfg = attn_config_default();
            cfg.mode = variant == 5 ? ATTN_MODE_BASIC : ATTN_MODE_LEARNED;
            cfg.causal = variant / 3 % 2;
            cfg.scale = variant != 7;
            cfg.temperature = variant == 8 ? 0.5f : 1.0f;
            AttnParams p;
            assert_int_equal(attn_params_create(&p, d, h), 0);
            attn_params_xavier(&p, 31 + (uint64_t)variant);
            float *Xq = rand_matrix(Tq, d, -2, 2);
            float *Xk = self ? Xq : rand_matrix(Tk, d, -2, 2);
            AttnResult inc, full;
            attn_result_init(&inc);
            attn_result_init(&full);
            inc.skip_logits = full.skip_logits = variant >= 9;
            assert_int_equal(attn_forward(&inc, Xq, Tq, Xk, Tk, d, &p, &cfg), 0);
            for (int step = 0; step < 6; step++) {
                int ql = (int)(rng_next() % (uint64_t)(Tq + 1));
                int qh = ql + (int)(rng_next() % (uint64_t)(Tq - ql + 1));
                int kl = self ? ql : (int)(rng_next() % (uint64_t)(Tk + 1));
                int kh = self ? qh : kl + (int)(rng_next() % (uint64_t)(Tk - kl + 1));
                if (step == 1) /* the last row only: typing at the end */
                    ql = kl = Tq - 1, qh = Tq, kh = Tk;
                if (step == 2) /* nothing changed */
                    ql = qh = kl = kh = 0;
                for (int i = ql; i < qh; i++)
                    for (int c = 0; c < d; c++)
                        Xq[(size_t)i * d + c] = (float)urand(-2, 2);
                if (!self)
                    for (int i = kl; i < kh; i++)
                        for (int c = 0; c < d; c++)
                            Xk[(size_t)i * d + c] = (float)urand(-2, 2);
                assert_int_equal(attn_forward_update(&inc, Xq, Tq, Xk, Tk, d, &p, &cfg,
                                                     ql, qh, kl, kh), 0);
                assert_int_equal(attn_forward(&full, Xq, Tq, Xk, Tk, d, &p, &cfg), 0);
                char ctx[160];
                snprintf(ctx, sizeof ctx, "Tq=%d Tk=%d variant %d step %d, rows q[%d,%d) k[%d,%d)",
                         Tq, Tk, variant, step, ql, qh, kl, kh);
                if (!same_result(&inc, &full, ctx))
                    fail_msg("%s: the update differs from a whole forward", ctx);
                cases++;
            }
            /* a different shape with a stale range: the whole pass */
            if (Tq > 1 && self) {
                assert_int_equal(attn_forward_update(&inc, Xq, Tq - 1, Xq, Tq - 1, d, &p, &cfg,
                                                     Tq - 2, Tq - 1, Tq - 2, Tq - 1), 0);
                assert_int_equal(attn_forward(&full, Xq, Tq - 1, Xq, Tq - 1, d, &p, &cfg), 0);
                if (!same_result(&inc, &full, "shape change"))
                    fail_msg("Tq=%d variant %d: shape change not recomputed", Tq, variant);
            }
            attn_result_destroy(&inc);
            attn_result_destroy(&full);
            if (!self)
                free(Xk);
            free(Xq);
            attn_params_destroy(&p);
        }
    assert_true(cases == 8 * 12 * 6);
}

/* The update reuses what did not change: after changing the last row of a
 * causal self-attention, the earlier rows' scores and context vectors are
 * not written again (a planted value survives), and the last row is. */
static void test_forward_update_reuses(void **state)
{
    (void)state;
    const int T = 40, d = 16;
    AttnParams p;
    assert_int_equal(attn_params_create(&p, d, 2), 0);
    attn_params_xavier(&p, 5);
    rng_seed(77);
    float *X = rand_matrix(T, d, -1, 1);
    AttnConfig cfg = attn_config_default();
    cfg.causal = 1;
    AttnResult r;
    attn_result_init(&r);
    assert_int_equal(attn_forward(&r, X, T, X, T, d, &p, &cfg), 0);
    r.scores[3 * T + 2] = 1234.5f; /* row 3, key 2: neither changes */
    r.Z[5 * r.dk] = -99.0f;        /* head 0, row 5 */
    r.scores[(size_t)(T - 1) * T] = 1234.5f; /* the changed row */
    X[(size_t)(T - 1) * d] += 0.5f;
    assert_int_equal(attn_forward_update(&r, X, T, X, T, d, &p, &cfg, T - 1, T, T - 1, T), 0);
    assert_true(r.scores[3 * T + 2] == 1234.5f);
    assert_true(r.Z[5 * r.dk] == -99.0f);
    assert_true(r.scores[(size_t)(T - 1) * T] != 1234.5f);
    attn_result_destroy(&r);
    free(X);
    attn_params_destroy(&p);
}

/* A model recomputed after each of 400 random edits (a word replaced,
 * appended, removed; the same text again; posenc, mask, scaling, τ, heads,
 * the window matrices toggled; a weight or a word vector edited) holds
 * exactly what a fresh model of the same state computes, and the edits
 * confined to a few rows were recomputed as such (last_lo/last_hi). */
static void test_model_incremental_matches_fresh(void **state)
{
    (void)state;
    const int d = 16, nwords = 40;
    EmbedTable *t = make_table(nwords, d, 99);
    AttnConfig cfg = attn_config_default();
    cfg.heads = 2;
    Model a;
    assert_int_equal(model_init(&a, t, &cfg), 0);
    model_set_seed(&a, 3);
    a.keep_window_matrices = 1;
    int words[80], T = 30, partial = 0, none = 0, whole = 0;
    rng_seed(1001);
    for (int i = 0; i < T; i++)
        words[i] = (int)(rng_next() % nwords);
    for (int step = 0; step < 400; step++) {
        uint64_t r = rng_next() % 100;
        if (r < 40) {                       /* replace one word */
            words[rng_next() % (uint64_t)T] = (int)(rng_next() % nwords);
        } else if (r < 48 && T < 80) {      /* append */
            words[T++] = (int)(rng_next() % nwords);
        } else if (r < 54 && T > 1) {       /* remove the last */
            T--;
        } else if (r < 62) {                /* nothing */
        } else if (r < 66) {
            a.cfg.posenc = !a.cfg.posenc;
        } else if (r < 70) {
            a.cfg.causal = !a.cfg.causal;
        } else if (r < 72) {
            a.cfg.scale = !a.cfg.scale;
        } else if (r < 74) {
            a.cfg.temperature = a.cfg.temperature == 1.0f ? 0.7f : 1.0f;
        } else if (r < 76) {
            assert_int_equal(model_set_heads(&a, a.cfg.heads == 2 ? 4 : a.cfg.heads == 4 ? 1 : 2), 0);
        } else if (r < 79) {
            a.keep_window_matrices = !a.keep_window_matrices;
        } else if (r < 90) {                /* one weight */
            int rows, cols;
            float *W = attn_params_matrix(&a.params, (int)(rng_next() % 4), 0, &rows, &cols);
            W[rng_next() % (uint64_t)(rows * cols)] += 0.25f;
        } else {                            /* one word's vector */
            float v[16];
            for (int k = 0; k < d; k++)
                v[k] = (float)urand(-1, 1);
            char w[16];
            snprintf(w, sizeof w, "w%d", words[rng_next() % (uint64_t)T]);
            assert_int_equal(model_set_word_vector(&a, w, v), 0);
        }
        char text[80 * 8] = "";
        size_t len = 0;
        for (int i = 0; i < T; i++)
            len += (size_t)sprintf(text + len, "%sw%d", i ? " " : "", words[i]);
        assert_int_equal(model_set_text(&a, text, len), 0);
        assert_int_equal(model_compute(&a), 0);
        if (a.last_lo == T)
            none++;
        else if (a.last_lo > 0 || a.last_hi < T)
            partial++;
        else
            whole++;

        Model b;
        assert_int_equal(model_init(&b, t, &a.cfg), 0);
        assert_int_equal(attn_params_copy(&b.params, &a.params), 0);
        for (int o = 0; o < a.n_over; o++)
            assert_int_equal(model_set_word_vector(&b, a.over_word[o], a.over_vec + (size_t)o * d), 0);
        b.keep_window_matrices = a.keep_window_matrices;
        assert_int_equal(model_set_text(&b, text, len), 0);
        assert_int_equal(model_compute(&b), 0);
        char ctx[96];
        snprintf(ctx, sizeof ctx, "step %d (T=%d, rows [%d,%d) recomputed)", step, T,
                 a.last_lo, a.last_hi);
        if (!same_result(&a.res, &b.res, ctx))
            fail_msg("%s: incremental model differs from a fresh one", ctx);
        for (int k = 0; k < 3; k++) {
            model_prepare(&a, (ModelMatrix)k, MODEL_HEAD_AVG);
            model_prepare(&b, (ModelMatrix)k, MODEL_HEAD_AVG);
            const float *x = model_matrix(&a, (ModelMatrix)k, MODEL_HEAD_AVG);
            const float *y = model_matrix(&b, (ModelMatrix)k, MODEL_HEAD_AVG);
            assert_true(!x == !y);
            if (x && memcmp(x, y, (size_t)T * T * sizeof(float)) != 0)
                fail_msg("%s: mean of the heads' matrix %d differs", ctx, k);
        }
        model_destroy(&b);
    }
    /* all three kinds happened, often enough to mean something */
    assert_true(partial > 60);
    assert_true(none > 20);
    assert_true(whole > 60);
    model_destroy(&a);
    embed_destroy(t);
}

/* The kernel sets give the same floats: every array of a forward, for
 * shapes around each set's block sizes (4, 8, 16, 32 lanes and keys), both
 * modes, masks and heads, each set this CPU runs against the baseline. */
static const char *const kernel_set_names[] = {"base", "avx2-w16", "avx2", "avx512"};
enum { N_SETS = sizeof kernel_set_names / sizeof kernel_set_names[0] };

static void test_kernel_sets_agree(void **state)
{
    (void)state;
    const char *mine = attn_kernels();
    int compared = 0;
    for (int set = 1; set < N_SETS; set++) {
        const char *name = kernel_set_names[set];
        if (attn_use_kernels(name) < 0) {
            print_message("kernels %s: not run by this CPU, not compared\n", name);
            continue;
        }
        static const int sizes[][2] = {{1, 1},   {3, 3},   {4, 4},   {7, 7},   {8, 8},
                                       {9, 9},   {15, 15}, {16, 16}, {17, 17}, {31, 31},
                                       {33, 33}, {48, 48}, {64, 64}, {70, 70}, {5, 19}};
        enum { N_SIZES = sizeof sizes / sizeof sizes[0] };
        const int ds[] = {16, 12, 64, 6, 48, 40};
        rng_seed(555);
        int n = 0;
        for (size_t si = 0; si < N_SIZES; si++)
            for (int v = 0; v < 12; v++) {
                int Tq = sizes[si][0], Tk = sizes[si][1], d = ds[v % 6], h = v % 2 ? 2 : 1;
                AttnConfig cfg = attn_config_default();
                cfg.mode = v == 6 ? ATTN_MODE_BASIC : ATTN_MODE_LEARNED;
                cfg.causal = v / 2 % 2;
                AttnParams p;
                assert_int_equal(attn_params_create(&p, d, h), 0);
                attn_params_xavier(&p, 9 + (uint64_t)v);
                float *Xq = rand_matrix(Tq, d, -3, 3), *Xk = rand_matrix(Tk, d, -3, 3);
                AttnResult a, b;
                attn_result_init(&a);
                attn_result_init(&b);
                assert_int_equal(attn_use_kernels(name), 0);
                assert_int_equal(attn_forward(&a, Xq, Tq, Tq == Tk ? Xq : Xk, Tk, d, &p, &cfg), 0);
                assert_int_equal(attn_use_kernels("base"), 0);
                assert_int_equal(attn_forward(&b, Xq, Tq, Tq == Tk ? Xq : Xk, Tk, d, &p, &cfg), 0);
                char ctx[96];
                snprintf(ctx, sizeof ctx, "Tq=%d Tk=%d d=%d h=%d variant %d", Tq, Tk, d, h, v);
                if (!same_result(&a, &b, ctx))
                    fail_msg("%s: %s and base kernels differ", ctx, name);
                attn_result_destroy(&a);
                attn_result_destroy(&b);
                free(Xq);
                free(Xk);
                attn_params_destroy(&p);
                n++;
            }
        assert_true(n == N_SIZES * 12);
        /* the softmax alone, on rows of every length up to 160 (blocks of
         * 32 and 8 keys and their tails), values within 30 of each other
         * and spread so far that some underflow to exactly 0, and the
         * matmul at widths around every block */
        for (int spread = 30; spread <= 150; spread += 120)
            for (int len = 1; len <= 160; len++) {
                float x[160], y[160];
                for (int j = 0; j < len; j++)
                    x[j] = y[j] = (float)urand(-spread, spread);
                assert_int_equal(attn_use_kernels(name), 0);
                attn_softmax_row(x, len, len - len / 3);
                assert_int_equal(attn_use_kernels("base"), 0);
                attn_softmax_row(y, len, len - len / 3);
                assert_memory_equal(x, y, (size_t)len * sizeof(float));
            }
        for (int m = 1; m <= 70; m += 3) {
            int rows = 1 + m % 9, k = 1 + m % 13;
            float *A = rand_matrix(rows, k, -2, 2), *B = rand_matrix(k, m, -2, 2);
            float *o1 = malloc(sizeof(float) * rows * m), *o2 = malloc(sizeof(float) * rows * m);
            assert_non_null(o1);
            assert_non_null(o2);
            assert_int_equal(attn_use_kernels(name), 0);
            attn_matmul(o1, A, k, B, rows, k, m);
            assert_int_equal(attn_use_kernels("base"), 0);
            attn_matmul(o2, A, k, B, rows, k, m);
            assert_memory_equal(o1, o2, sizeof(float) * rows * m);
            free(A);
            free(B);
            free(o1);
            free(o2);
        }
        compared++;
    }
    assert_int_equal(attn_use_kernels(mine), 0);
    if (!compared) {
        print_message("only the baseline kernels run on this CPU: nothing to compare\n");
        assert_string_equal(attn_kernels(), "base");
    }
}

/* attn_forward_resize after words were typed or deleted (the inputs grow or
 * shrink, their first rows kept): the same floats as a whole forward of the
 * new inputs. Self- and cross-attention, growing, shrinking, mixed (the
 * whole pass), keeping everything or nothing, causal or not, logits kept or
 * not, many steps in a row. */
static void test_forward_resize_matches_full(void **state)
{
    (void)state;
    const int d = 16, MAXT = 80;
    int cases = 0;
    rng_seed(777);
    for (int variant = 0; variant < 16; variant++) {
        int self = variant % 4 != 3, h = variant % 3 == 0 ? 1 : variant % 3 == 1 ? 2 : 4;
        AttnConfig cfg = attn_config_default();
        cfg.causal = variant / 4 % 2;
        cfg.mode = variant == 5 ? ATTN_MODE_BASIC : ATTN_MODE_LEARNED;
        AttnParams p;
        assert_int_equal(attn_params_create(&p, d, h), 0);
        attn_params_xavier(&p, 50 + (uint64_t)variant);
        float *Xq = rand_matrix(MAXT, d, -2, 2), *Xk = rand_matrix(MAXT, d, -2, 2);
        int Tq = 1 + (int)(rng_next() % 30), Tk = self ? Tq : 1 + (int)(rng_next() % 30);
        AttnResult inc, full;
        attn_result_init(&inc);
        attn_result_init(&full);
        inc.skip_logits = full.skip_logits = variant >= 12;
        assert_int_equal(attn_forward(&inc, Xq, Tq, self ? Xq : Xk, Tk, d, &p, &cfg), 0);
        for (int step = 0; step < 12; step++) {
            int nq = Tq + (int)(rng_next() % 9) - 4;
            nq = nq < 1 ? 1 : nq > MAXT ? MAXT : nq;
            int nk = self ? nq : Tk + (int)(rng_next() % 9) - 4;
            nk = nk < 1 ? 1 : nk > MAXT ? MAXT : nk;
            int mq = nq < Tq ? nq : Tq, mk = nk < Tk ? nk : Tk;
            int kq = (int)(rng_next() % (uint64_t)(mq + 1)), kk = self ? kq : (int)(rng_next() % (uint64_t)(mk + 1));
            if (step == 3) /* a word typed at the end: everything kept */
                kq = mq, kk = self ? kq : mk;
            for (int i = kq; i < nq; i++)
                for (int c = 0; c < d; c++)
                    Xq[(size_t)i * d + c] = (float)urand(-2, 2);
            for (int i = kk; !self && i < nk; i++)
                for (int c = 0; c < d; c++)
                    Xk[(size_t)i * d + c] = (float)urand(-2, 2);
            const float *xk = self ? Xq : Xk;
            assert_int_equal(attn_forward_resize(&inc, Xq, nq, xk, nk, d, &p, &cfg, kq, kk), 0);
            assert_int_equal(attn_forward(&full, Xq, nq, xk, nk, d, &p, &cfg), 0);
            char ctx[160];
            snprintf(ctx, sizeof ctx, "variant %d step %d: Tq %d->%d Tk %d->%d, kept %d and %d rows",
                     variant, step, Tq, nq, Tk, nk, kq, kk);
            if (!same_result(&inc, &full, ctx))
                fail_msg("%s: the resize differs from a whole forward", ctx);
            Tq = nq;
            Tk = nk;
            cases++;
        }
        attn_result_destroy(&inc);
        attn_result_destroy(&full);
        free(Xq);
        free(Xk);
        attn_params_destroy(&p);
    }
    assert_true(cases == 16 * 12);

    /* causal cross-attention whose keys shrink below kept query rows: row 20
     * saw keys 0…20, now only 0…6 (found by fuzz_forward) */
    AttnConfig cfg = attn_config_default();
    cfg.causal = 1;
    AttnParams p;
    assert_int_equal(attn_params_create(&p, d, 2), 0);
    attn_params_xavier(&p, 8);
    float *Xq = rand_matrix(28, d, -2, 2), *Xk = rand_matrix(28, d, -2, 2);
    AttnResult inc, full;
    attn_result_init(&inc);
    attn_result_init(&full);
    assert_int_equal(attn_forward(&inc, Xq, 28, Xk, 28, d, &p, &cfg), 0);
    for (int i = 17; i < 22; i++)
        Xq[(size_t)i * d] += 1.0f;
    assert_int_equal(attn_forward_resize(&inc, Xq, 22, Xk, 7, d, &p, &cfg, 17, 7), 0);
    assert_int_equal(attn_forward(&full, Xq, 22, Xk, 7, d, &p, &cfg), 0);
    if (!same_result(&inc, &full, "causal cross, keys 28 -> 7"))
        fail_msg("causal cross-attention: the resize differs from a whole forward");
    attn_result_destroy(&inc);
    attn_result_destroy(&full);
    free(Xq);
    free(Xk);
    attn_params_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_example_basic),
        cmocka_unit_test(test_forward_update_matches_full),
        cmocka_unit_test(test_forward_update_reuses),
        cmocka_unit_test(test_forward_resize_matches_full),
        cmocka_unit_test(test_model_incremental_matches_fresh),
        cmocka_unit_test(test_hand_example_scaled_tau2),
        cmocka_unit_test(test_forward_vs_reference_self),
        cmocka_unit_test(test_forward_vs_reference_cross),
        cmocka_unit_test(test_forward_bench_sizes),
        cmocka_unit_test(test_model_compute_vs_reference),
        cmocka_unit_test(test_rows_sum_to_one),
        cmocka_unit_test(test_causal_upper_triangle_zero),
        cmocka_unit_test(test_permutation_equivariance),
        cmocka_unit_test(test_identity_learned_equals_basic),
        cmocka_unit_test(test_large_logits_finite),
        cmocka_unit_test(test_overflow_1e30),
        cmocka_unit_test(test_softmax_nonfinite),
        cmocka_unit_test(test_softmax_finite),
        cmocka_unit_test(test_params_identity),
        cmocka_unit_test(test_params_xavier),
        cmocka_unit_test(test_params_copy),
        cmocka_unit_test(test_posenc),
        cmocka_unit_test(test_params_create_rejects),
        cmocka_unit_test(test_forward_rejects),
        cmocka_unit_test(test_forward_learned_null_params),
        cmocka_unit_test(test_result_reuse_across_shapes),
        cmocka_unit_test(test_model_heads_then_longer_sentence),
        cmocka_unit_test(test_average_halves),
        cmocka_unit_test(test_model_logits_on_demand),
    };
    /* every test once per kernel set this CPU runs, then the sets compared;
     * with ATTNVIZ_TEST_ONE_SET=1 (make test TSAN=1: the threads are the
     * same for every set) once, with the set chosen at start-up */
    const char *const *sets = kernel_set_names;
    const struct CMUnitTest agree[] = {cmocka_unit_test(test_kernel_sets_agree),
                                       cmocka_unit_test(test_workers_run2)};
    const char *one = getenv("ATTNVIZ_TEST_ONE_SET"), *startup = attn_kernels();
    int failed = 0;
    for (size_t k = 0; k < N_SETS; k++) {
        if (one && strcmp(one, "1") == 0 && strcmp(sets[k], startup) != 0) {
            printf("kernels %s: skipped (ATTNVIZ_TEST_ONE_SET=1)\n", sets[k]);
            continue;
        }
        if (attn_use_kernels(sets[k]) < 0) {
            printf("kernels %s: not run by this CPU, skipped\n", sets[k]);
            continue;
        }
        printf("kernels %s\n", attn_kernels());
        failed += cmocka_run_group_tests_name(sets[k], tests, NULL, NULL);
    }
    failed += cmocka_run_group_tests_name("kernel sets agree", agree, NULL, NULL);
    return failed ? 1 : 0;
}
