/* Tests for GPT-2's forward pass (src/core/arch_gpt2.c on src/core/runtime.c): a naive double-precision
 * forward written here from Hugging Face's modeling_gpt2 (its own loops,
 * layer norm, activations, softmax) on random weights made in memory, large
 * enough that attention is peaked (a uniform map hides a swapped Q and K);
 * shapes with a head count that is not a power of two, sizes that are not
 * multiples of a vector, each activation and scaling flag, each kernel set
 * the CPU runs. Then: incremental forwards after scripted edits equal a
 * full forward bit for bit, cancelled forwards leave a state the next one
 * completes, the layer callback, the next token's top k, the errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gpt2.h"
#include "../src/core/lm_kernels.h"
#include "../src/core/ops.h"

#include "test_rand.h"

/* ---- a model made in memory -------------------------------------------------- */
typedef struct TestModel {
    Gpt2Config cfg;
    Gpt2Weights w;
    Gpt2Layer *layers;
    float *blocks[16 + 8]; /* every array, freed at the end */
    int n_blocks;
} TestModel;

static float *arr(TestModel *m, size_t n, double centre, double spread)
{
    float *a = malloc(n * sizeof(float) + 1);
    assert_non_null(a);
    for (size_t i = 0; i < n; i++)
        a[i] = (float)(centre + urand(-spread, spread));
    if (m->n_blocks < (int)(sizeof m->blocks / sizeof m->blocks[0]))
        m->blocks[m->n_blocks++] = a;
    return a;
}

/* Uniform weights of spread s (standard deviation s/√3) for the matrices;
 * layer norm gains near 1; lm_head its own matrix or wte (tied). Each layer
 * gets its arrays from one draw of the generator, in a fixed order. */
static TestModel *model_make(const Gpt2Config *cfg, uint64_t seed, double s, int tied)
{
    TestModel *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->cfg = *cfg;
    rng_seed(seed);
    size_t C = (size_t)cfg->n_embd, I = (size_t)cfg->n_inner;
    m->layers = calloc((size_t)cfg->n_layer, sizeof *m->layers);
    assert_non_null(m->layers);
    /* one array per kind for all layers: blocks stay under the cap */
    size_t L = (size_t)cfg->n_layer;
    float *ln = arr(m, L * 4 * C, 1.0, 0.5), *lb = arr(m, L * 4 * C, 0.0, 0.5);
    float *aw = arr(m, L * C * 3 * C, 0.0, s), *ab = arr(m, L * 3 * C, 0.0, 0.5);
    float *pw = arr(m, L * C * C, 0.0, s), *pb = arr(m, L * C, 0.0, 0.5);
    float *fw = arr(m, L * C * I, 0.0, s), *fb = arr(m, L * I, 0.0, 0.5);
    float *mw = arr(m, L * I * C, 0.0, s), *mb = arr(m, L * C, 0.0, 0.5);
    for (size_t l = 0; l < L; l++) {
        Gpt2Layer *y = &m->layers[l];
        y->ln1_w = ln + l * 4 * C, y->ln2_w = ln + l * 4 * C + C;
        y->ln1_b = lb + l * 4 * C, y->ln2_b = lb + l * 4 * C + C;
        y->attn_w = aw + l * C * 3 * C, y->attn_b = ab + l * 3 * C;
        y->proj_w = pw + l * C * C, y->proj_b = pb + l * C;
        y->fc_w = fw + l * C * I, y->fc_b = fb + l * I;
        y->mproj_w = mw + l * I * C, y->mproj_b = mb + l * C;
    }
    m->w.layers = m->layers;
    m->w.wte = arr(m, (size_t)cfg->n_vocab * C, 0.0, 1.0);
    m->w.wpe = arr(m, (size_t)cfg->n_positions * C, 0.0, 0.5);
    m->w.lnf_w = arr(m, C, 1.0, 0.5);
    m->w.lnf_b = arr(m, C, 0.0, 0.5);
    m->w.lm_head = tied ? m->w.wte : arr(m, (size_t)cfg->n_vocab * C, 0.0, 0.5);
    return m;
}

static void model_free(TestModel *m)
{
    for (int k = 0; k < m->n_blocks; k++)
        free(m->blocks[k]);
    free(m->layers);
    free(m);
}

/* ---- the reference: naive loops in double ---------------------------------- */
static void ref_layernorm(double *out, const double *x, const float *w, const float *b, int C,
                          double eps)
{
    double mean = 0, var = 0;
    for (int c = 0; c < C; c++)
        mean += x[c];
    mean /= C;
    for (int c = 0; c < C; c++)
        var += (x[c] - mean) * (x[c] - mean);
    var /= C;
    for (int c = 0; c < C; c++)
        out[c] = (x[c] - mean) / sqrt(var + eps) * w[c] + b[c];
}

/* out[m] = in[k] · W (k × m, [in, out]) + bias */
static void ref_conv1d(double *out, const double *in, const float *W, const float *bias, int k,
                       int m)
{
    for (int j = 0; j < m; j++) {
        double s = bias[j];
        for (int p = 0; p < k; p++)
            s += in[p] * W[(size_t)p * m + j];
        out[j] = s;
    }
}

static double ref_act(double x, Gpt2Act act)
{
    if (act == GPT2_ACT_GELU_TANH)
        return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    if (act == GPT2_ACT_GELU_ERF)
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    return x > 0 ? x : 0;
}

/* The maps (L × H × T × T, zeros above the diagonal), every position's
 * logits (T × V) and each layer's Q | K | V rows (L × T × 3C). */
typedef struct Ref {
    double *maps, *logits, *qkv;
} Ref;

static void ref_attention(const Gpt2Config *c, int l, const double *qkv, int T, double *maps,
                          double *z)
{
    int C = c->n_embd, H = c->n_head, dh = C / H;
    double *s = malloc(sizeof(double) * T);
    assert_non_null(s);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < T; i++) {
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j <= i; j++) {
                double d = 0;
                for (int e = 0; e < dh; e++)
                    d += qkv[(size_t)i * 3 * C + h * dh + e] * qkv[(size_t)j * 3 * C + C + h * dh + e];
                if (c->scale_attn_weights)
                    d /= sqrt((double)dh);
                if (c->scale_by_inverse_layer_idx)
                    d /= l + 1;
                s[j] = d;
                mx = d > mx ? d : mx;
            }
            for (int j = 0; j <= i; j++)
                sum += (s[j] = exp(s[j] - mx));
            double *row = maps + (((size_t)l * H + h) * T + i) * T;
            for (int j = 0; j < T; j++)
                row[j] = j <= i ? s[j] / sum : 0.0;
            for (int e = 0; e < dh; e++) {
                double acc = 0;
                for (int j = 0; j <= i; j++)
                    acc += row[j] * qkv[(size_t)j * 3 * C + 2 * C + h * dh + e];
                z[(size_t)i * C + h * dh + e] = acc;
            }
        }
    free(s);
}

static Ref ref_forward(const TestModel *m, const int *ids, int T)
{
    const Gpt2Config *c = &m->cfg;
    const Gpt2Weights *w = &m->w;
    int L = c->n_layer, H = c->n_head, C = c->n_embd, I = c->n_inner, V = c->n_vocab;
    Ref r;
    r.maps = calloc((size_t)L * H * T * T + 1, sizeof(double));
    r.logits = calloc((size_t)T * V + 1, sizeof(double));
    r.qkv = calloc((size_t)L * T * 3 * C + 1, sizeof(double));
    double *x = calloc((size_t)T * C + 1, sizeof(double)), *a = malloc(sizeof(double) * (C + I));
    double *z = calloc((size_t)T * C + 1, sizeof(double)), *o = malloc(sizeof(double) * (C + I));
    assert_true(r.maps && r.logits && r.qkv && x && a && z && o);
    for (int i = 0; i < T; i++)
        for (int k = 0; k < C; k++)
            x[(size_t)i * C + k] = (double)w->wte[(size_t)ids[i] * C + k] + w->wpe[(size_t)i * C + k];
    for (int l = 0; l < L; l++) {
        const Gpt2Layer *y = &w->layers[l];
        double *qkv = r.qkv + (size_t)l * T * 3 * C;
        for (int i = 0; i < T; i++) {
            ref_layernorm(a, x + (size_t)i * C, y->ln1_w, y->ln1_b, C, c->ln_eps);
            ref_conv1d(qkv + (size_t)i * 3 * C, a, y->attn_w, y->attn_b, C, 3 * C);
        }
        ref_attention(c, l, qkv, T, r.maps, z);
        for (int i = 0; i < T; i++) {
            double *xi = x + (size_t)i * C;
            ref_conv1d(o, z + (size_t)i * C, y->proj_w, y->proj_b, C, C);
            for (int k = 0; k < C; k++)
                xi[k] += o[k];
            ref_layernorm(a, xi, y->ln2_w, y->ln2_b, C, c->ln_eps);
            ref_conv1d(o, a, y->fc_w, y->fc_b, C, I);
            for (int k = 0; k < I; k++)
                o[k] = ref_act(o[k], c->act);
            ref_conv1d(a, o, y->mproj_w, y->mproj_b, I, C);
            for (int k = 0; k < C; k++)
                xi[k] += a[k];
        }
    }
    for (int i = 0; i < T; i++) {
        ref_layernorm(a, x + (size_t)i * C, w->lnf_w, w->lnf_b, C, c->ln_eps);
        for (int v = 0; v < V; v++) {
            double s = 0;
            for (int k = 0; k < C; k++)
                s += a[k] * w->lm_head[(size_t)v * C + k];
            r.logits[(size_t)i * V + v] = s;
        }
    }
    free(x), free(a), free(z), free(o);
    return r;
}

static void ref_free(Ref *r)
{
    free(r->maps), free(r->logits), free(r->qkv);
}

/* ---- the shapes ---------------------------------------------------------------- */
static Gpt2Config shape(int L, int H, int C, int I, int P, int V, Gpt2Act act, float eps,
                        int scale, int inv)
{
    Gpt2Config c = {.n_layer = L, .n_head = H, .n_embd = C, .n_positions = P, .n_inner = I,
                    .n_vocab = V, .ln_eps = eps, .act = act, .scale_attn_weights = scale,
                    .scale_by_inverse_layer_idx = inv, .bos_id = -1, .eos_id = -1};
    return c;
}

typedef struct Case {
    Gpt2Config cfg;
    int T, tied;
    double spread;
} Case;

/* several shapes: heads 3, 5, 6 (not powers of two), 1 and 4; d_head 12,
 * 8, 16, 20; C and n_inner not multiples of 16; T past 64 keys (the score
 * kernel's four-vector blocks) and past the threads' split; each activation,
 * with and without each scaling; eps from GPT-2's 1e-5 to 0.1 */
static const Case *cases(int *n)
{
    static Case c[6];
    c[0] = (Case){shape(2, 3, 36, 144, 24, 50, GPT2_ACT_GELU_TANH, 1e-5f, 1, 0), 20, 1, 0.6};
    c[1] = (Case){shape(3, 5, 40, 70, 16, 31, GPT2_ACT_GELU_ERF, 1e-3f, 1, 1), 13, 0, 0.65};
    c[2] = (Case){shape(2, 4, 64, 256, 12, 40, GPT2_ACT_RELU, 0.1f, 0, 0), 12, 1, 0.3};
    c[3] = (Case){shape(1, 1, 20, 52, 9, 7, GPT2_ACT_GELU_TANH, 0.05f, 1, 1), 9, 0, 0.8};
    c[4] = (Case){shape(3, 6, 96, 384, 80, 67, GPT2_ACT_GELU_TANH, 1e-2f, 1, 0), 70, 0, 0.35};
    c[5] = (Case){shape(2, 3, 48, 100, 20, 29, GPT2_ACT_GELU_TANH, 0.1f, 0, 1), 17, 1, 0.4};
    *n = (int)(sizeof c / sizeof c[0]);
    return c;
}

static int *rand_ids(int T, int V)
{
    int *ids = malloc(sizeof(int) * (size_t)(T + 1));
    assert_non_null(ids);
    for (int i = 0; i < T; i++)
        ids[i] = (int)(rng_next() % (uint64_t)V);
    return ids;
}

/* The state's maps against the reference's: every weight within tol;
 * the largest difference returned. */
static double maps_diff(const Rt *s, const Ref *r)
{
    const Gpt2Config *c = s->cfg;
    int T = s->T;
    size_t n = (size_t)c->n_layer * c->n_head * T * T;
    float *got = malloc(n * sizeof(float) + 1);
    assert_non_null(got);
    rt_maps_copy(s, got);
    double worst = 0;
    for (size_t k = 0; k < n; k++) {
        double d = fabs(got[k] - r->maps[k]);
        worst = d > worst ? d : worst;
    }
    free(got);
    return worst;
}

/* The maps, queries and keys, logits and top 10 of one case against the
 * reference, with the kernel set in use. */
static void check_case(const Case *k, uint64_t seed)
{
    TestModel *m = model_make(&k->cfg, seed, k->spread, k->tied);
    int *ids = rand_ids(k->T, k->cfg.n_vocab);
    Ref r = ref_forward(m, ids, k->T);
    Rt *s;
    AttnErr err = {0};
    assert_int_equal(rt_create(&s, &arch_gpt2, &k->cfg, &err), 0);
    assert_int_equal(rt_forward(s, &m->w, ids, k->T, NULL, &err), 0);
    assert_int_equal(s->T, k->T);
    assert_int_equal(s->n_done, k->T);
    double md = maps_diff(s, &r);
    if (md > 1e-5)
        fprintf(stderr, "case L%d H%d C%d (%s): maps differ by %g\n", k->cfg.n_layer,
                k->cfg.n_head, k->cfg.n_embd, lm_kernels(), md);
    assert_true(md <= 1e-5);
    /* peaked: the rows' largest weight is above 0.5 on average (uniform
     * maps hide Q/K mistakes) */
    const Gpt2Config *c = &k->cfg;
    double sum_max = 0;
    int rows = 0;
    for (int m = 0; m < c->n_layer * c->n_head; m++)
        for (int i = 1; i < k->T; i++, rows++) {
            double top = 0;
            for (int j = 0; j <= i; j++) {
                double v = r.maps[((size_t)m * k->T + i) * k->T + j];
                top = v > top ? v : top;
            }
            sum_max += top;
        }
    assert_true(sum_max / rows > 0.5);
    /* queries and keys: the reference's Q and K of every layer, head, position */
    int C = c->n_embd, dh = C / c->n_head;
    for (int l = 0; l < c->n_layer; l++)
        for (int h = 0; h < c->n_head; h++)
            for (int i = 0; i < k->T; i++) {
                const double *q = r.qkv + ((size_t)l * k->T + i) * 3 * C + h * dh;
                const float *gq = rt_query(s, l, h, i), *gk = rt_key(s, l, h, i);
                for (int e = 0; e < dh; e++) {
                    assert_true(fabs(gq[e] - q[e]) <= 1e-4 * (1 + fabs(q[e])));
                    assert_true(fabs(gk[e] - q[C + e]) <= 1e-4 * (1 + fabs(q[C + e])));
                }
            }
    /* logits at every position; the top 10 (or all) with probabilities */
    int V = c->n_vocab, K = V < LM_TOP_K ? V : LM_TOP_K;
    float *lg = malloc(sizeof(float) * V);
    assert_non_null(lg);
    for (int i = 0; i < k->T; i++) {
        const double *want = r.logits + (size_t)i * V;
        assert_int_equal(rt_logits(s, &m->w, i, lg, &err), 0);
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++) {
            assert_true(fabs(lg[v] - want[v]) <= 1e-4 * (1 + fabs(want[v])));
            mx = want[v] > mx ? want[v] : mx;
        }
        for (int v = 0; v < V; v++)
            sum += exp(want[v] - mx);
        int top_ids[LM_TOP_K];
        float probs[LM_TOP_K];
        assert_int_equal(rt_top_k(s, &m->w, i, K, top_ids, probs, i % 2 ? lg : NULL, &err), 0);
        for (int t = 0; t < K; t++) {
            double p = exp(want[top_ids[t]] - mx) / sum;
            assert_true(fabs(probs[t] - p) <= 1e-5);
            if (t > 0)
                assert_true(probs[t] <= probs[t - 1]);
            int above = 0; /* tokens clearly more likely than this one: only those before it */
            for (int v = 0; v < V; v++)
                above += exp(want[v] - mx) / sum > p + 1e-5;
            assert_true(above <= t);
        }
    }
    free(lg);
    rt_destroy(s);
    ref_free(&r);
    free(ids);
    model_free(m);
}

static void test_against_reference(void **state)
{
    (void)state;
    static const char *const sets[] = {"base", "avx2", "avx512"};
    const char *first = lm_kernels();
    int n, ran = 0;
    const Case *c = cases(&n);
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        if (lm_use_kernels(sets[k]) < 0)
            continue;
        ran++;
        for (int i = 0; i < n; i++)
            check_case(&c[i], 100 + (uint64_t)i);
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(first), 0);
}

/* ---- the linear layer's paths ---------------------------------------------------- */

/* ops_linear gives every row the same floats whichever path computes it
 * (the tiles for many rows, in chunks of W's rows when k is large; W's
 * halves on two threads for up to four rows), with every kernel set; the
 * sums within float rounding of a double one. */
static void test_linear_paths(void **state)
{
    (void)state;
    static const char *const sets[] = {"base", "avx2", "avx512"};
    static const int shapes[][2] = {{1, 3}, {5, 17}, {40, 100}, {1700, 40}, {3100, 70}};
    const char *first = lm_kernels();
    int ran = 0;
    enum { N = 9 };
    for (size_t set = 0; set < sizeof sets / sizeof sets[0]; set++) {
        if (lm_use_kernels(sets[set]) < 0)
            continue;
        ran++;
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
            int k = shapes[sh][0], m = shapes[sh][1];
            float *A = rand_matrix(N, k, -1, 1), *W = rand_matrix(k, m, -1, 1);
            float *b = rand_matrix(1, m, -1, 1);
            float *all = malloc(sizeof(float) * N * m), *few = malloc(sizeof(float) * 5 * m);
            assert_true(all && few);
            ops_linear(all, m, A, k, W, b, N, k, m);
            for (int i = 0; i < N; i++) {
                double worst = 0;
                for (int j = 0; j < m; j++) {
                    double want = b[j];
                    for (int p = 0; p < k; p++)
                        want += (double)A[(size_t)i * k + p] * W[(size_t)p * m + j];
                    double d = fabs(all[(size_t)i * m + j] - want);
                    worst = d > worst ? d : worst;
                }
                assert_true(worst <= 1e-5 * sqrt((double)k) + 1e-6);
                /* one to five rows from this one (the few-row path and past it) */
                for (int r = 1; r <= 5 && i + r <= N; r++) {
                    ops_linear(few, m, A + (size_t)i * k, k, W, b, r, k, m);
                    assert_memory_equal(few, all + (size_t)i * m, sizeof(float) * r * m);
                }
            }
            free(A), free(W), free(b), free(all), free(few);
        }
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(first), 0);
}

/* Past one panel in every direction (lm_kernels.inc's linear_panels):
 * rows in two groups (more than LM_MC), W's rows in three blocks per chain
 * (more than LM_KC), whole strips and left-over columns; W read in place
 * for fewer rows (61) or short chains (600 rows: two of 300); and k = 1
 * (no first chain). Each row as the one-row path gives it, bit for bit, and
 * within float rounding of a double sum. */
static void test_linear_panels(void **state)
{
    (void)state;
    static const char *const sets[] = {"base", "avx2", "avx512"};
    static const int shapes[][3] = {{300, 1100, 130}, {70, 600, 130}, {13, 1, 70}, {61, 1100, 64}};
    const char *first = lm_kernels();
    int ran = 0;
    for (size_t set = 0; set < sizeof sets / sizeof sets[0]; set++) {
        if (lm_use_kernels(sets[set]) < 0)
            continue;
        ran++;
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
            int n = shapes[sh][0], k = shapes[sh][1], m = shapes[sh][2], ldo = m + 3;
            float *A = rand_matrix(n, k, -1, 1), *W = rand_matrix(k, m, -1, 1);
            float *b = rand_matrix(1, m, -1, 1), *one = malloc(sizeof(float) * m);
            float *all = malloc(sizeof(float) * n * ldo);
            assert_true(all && one);
            ops_linear(all, ldo, A, k, W, b, n, k, m);
            for (int i = 0; i < n; i++) {
                ops_linear(one, m, A + (size_t)i * k, k, W, b, 1, k, m);
                assert_memory_equal(one, all + (size_t)i * ldo, sizeof(float) * m);
                for (int j = 0; j < m; j++) {
                    double want = b[j];
                    for (int p = 0; p < k; p++)
                        want += (double)A[(size_t)i * k + p] * W[(size_t)p * m + j];
                    assert_true(fabs(all[(size_t)i * ldo + j] - want) <= 1e-5 * sqrt((double)k) + 1e-6);
                }
            }
            free(A), free(W), free(b), free(all), free(one);
        }
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(first), 0);
}

/* The four-row attention kernels give each row the floats the one-row
 * kernels give it (every set; keys and head sizes past a vector's and a
 * tile's multiples, so every path of each runs), and the scores are dot
 * products to float rounding. */
static void test_four_rows(void **state)
{
    (void)state;
    static const char *const sets[] = {"base", "avx2", "avx512"};
    static const int shapes[][2] = {{131, 64}, {7, 19}, {70, 37}};
    const char *first = lm_kernels();
    int ran = 0;
    for (size_t set = 0; set < sizeof sets / sizeof sets[0]; set++) {
        if (lm_use_kernels(sets[set]) < 0)
            continue;
        ran++;
        const LmKernels *K = lm_kernel_set();
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
            int n = shapes[sh][0], dh = shapes[sh][1], ldk = n + 5, ldq = dh + 3, ldv = dh + 2;
            float *q = rand_matrix(4, ldq, -1, 1), *kt = rand_matrix(dh, ldk, -1, 1);
            float *w = rand_matrix(4, n + 1, 0, 1), *v = rand_matrix(n, ldv, -1, 1);
            float *s4 = malloc(sizeof(float) * 4 * (n + 1)), *s1 = malloc(sizeof(float) * n);
            float *z4 = malloc(sizeof(float) * 4 * (dh + 1)), *z1 = malloc(sizeof(float) * dh);
            assert_true(s4 && s1 && z4 && z1);
            K->scores4(s4, n + 1, q, ldq, kt, ldk, dh, n);
            K->context4(z4, dh + 1, w, n + 1, v, ldv, n, dh);
            for (int r = 0; r < 4; r++) {
                K->scores(s1, q + (size_t)r * ldq, kt, ldk, dh, n);
                assert_memory_equal(s1, s4 + (size_t)r * (n + 1), sizeof(float) * n);
                K->context(z1, w + (size_t)r * (n + 1), v, ldv, n, dh);
                assert_memory_equal(z1, z4 + (size_t)r * (dh + 1), sizeof(float) * dh);
                for (int j = 0; j < n; j++) {
                    double want = 0;
                    for (int c = 0; c < dh; c++)
                        want += (double)q[(size_t)r * ldq + c] * kt[(size_t)c * ldk + j];
                    assert_true(fabs(s1[j] - want) <= 1e-5 * sqrt((double)dh));
                }
            }
            free(q), free(kt), free(w), free(v), free(s4), free(s1), free(z4), free(z1);
        }
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(first), 0);
}

/* ---- incremental == full, bit for bit ------------------------------------------ */

/* a (incremental) and b (one full forward) hold the same floats: maps,
 * queries, keys and values, the residual stream, the logits. */
static void assert_same(const Rt *a, const Rt *b, const Gpt2Weights *w)
{
    const Gpt2Config *c = a->cfg;
    assert_int_equal(a->T, b->T);
    assert_int_equal(a->n_done, a->T);
    assert_int_equal(b->n_done, b->T);
    int T = a->T, C = c->n_embd;
    if (T == 0)
        return;
    size_t n = (size_t)c->n_layer * c->n_head * T * T;
    float *ma = malloc(n * sizeof(float)), *mb = malloc(n * sizeof(float));
    assert_true(ma && mb);
    rt_maps_copy(a, ma);
    rt_maps_copy(b, mb);
    assert_memory_equal(ma, mb, n * sizeof(float));
    free(ma), free(mb);
    for (int l = 0; l < c->n_layer; l++)
        assert_memory_equal(a->qkv + (size_t)l * a->cap * 3 * C, b->qkv + (size_t)l * b->cap * 3 * C,
                            (size_t)T * 3 * C * sizeof(float));
    assert_memory_equal(a->x, b->x, (size_t)T * C * sizeof(float));
    float *la = malloc(sizeof(float) * c->n_vocab), *lb = malloc(sizeof(float) * c->n_vocab);
    assert_true(la && lb);
    for (int i = 0; i < T; i += (T + 2) / 3) {
        assert_int_equal(rt_logits((Rt *)a, w, i, la, NULL), 0);
        assert_int_equal(rt_logits((Rt *)b, w, i, lb, NULL), 0);
        assert_memory_equal(la, lb, sizeof(float) * c->n_vocab);
    }
    free(la), free(lb);
}

/* A fresh state's full forward of ids, compared with s. */
static void assert_full(const Rt *s, const TestModel *m, const int *ids, int T)
{
    Rt *f;
    assert_int_equal(rt_create(&f, &arch_gpt2, &m->cfg, NULL), 0);
    assert_int_equal(rt_forward(f, &m->w, ids, T, NULL, NULL), 0);
    assert_same(s, f, &m->w);
    rt_destroy(f);
}

/* Every kernel set: a keystroke's one or two positions go through
 * linear_few, a full forward through linear's tiles. */
static void test_incremental_equals_full(void **state)
{
    (void)state;
    static const char *const sets[] = {"base", "avx2", "avx512"};
    const char *first = lm_kernels();
    int n, ran = 0;
    const Case *all = cases(&n);
    const Case *pick[] = {&all[4], &all[1]};
    for (size_t set = 0; set < sizeof sets / sizeof sets[0]; set++)
    for (size_t p = 0; p < sizeof pick / sizeof pick[0] && lm_use_kernels(sets[set]) == 0; p++) {
        ran += p == 0;
        const Gpt2Config *c = &pick[p]->cfg;
        TestModel *m = model_make(c, 7 + p, pick[p]->spread, 0);
        int P = c->n_positions, V = c->n_vocab;
        int *ids = rand_ids(P, V);
        Rt *s;
        assert_int_equal(rt_create(&s, &arch_gpt2, c, NULL), 0);
        /* T, then what changes: -1 nothing, else a position that gets a new id */
        const int script[][2] = {
            {P / 2, -1},      /* first text */
            {P / 2 + 1, -1},  /* append a token */
            {P / 2 + 1, P / 2}, /* replace the last ("statio" → "station") */
            {P / 2 + 1, P / 2 - 1}, /* the last two ("the sta" → "the station") */
            {P / 2 + 1, P / 4}, /* change one in the middle */
            {P / 2 + 1, -1},  /* the same ids again */
            {P / 3, -1},      /* shorten */
            {0, -1},          /* empty */
            {P / 2 + 2, 0},   /* from empty, the first token changed */
            {P - 3, -1},      /* append many (the state grows) */
            {P, P - 4},       /* to n_positions, a change near the end */
            {P, 0},           /* the first token */
            {1, -1},
        };
        for (size_t k = 0; k < sizeof script / sizeof script[0]; k++) {
            int T = script[k][0], at = script[k][1];
            if (at >= 0)
                ids[at] = (ids[at] + 1 + (int)(rng_next() % (uint64_t)(V - 1))) % V;
            assert_int_equal(rt_forward(s, &m->w, ids, T, NULL, NULL), 0);
            assert_full(s, m, ids, T);
        }
        rt_destroy(s);
        free(ids);
        model_free(m);
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(first), 0);
}

/* ---- cancelling, the layer callback --------------------------------------------- */
typedef struct Hook {
    int stop_at;   /* cancel before this layer (-1: never) */
    int calls;     /* cancel checks so far */
    int done[16];  /* layers reported, in order */
    int n_done;
    float *copy;   /* the maps of each reported layer, at the callback */
    const Rt *s; /* the state the forward computes */
} Hook;

static int hook_cancel(void *user)
{
    Hook *h = user;
    return h->calls++ == h->stop_at;
}

static void hook_layer(void *user, int layer)
{
    Hook *h = user;
    const Rt *s = h->s;
    assert_int_equal(layer, h->n_done);
    h->done[h->n_done++] = layer;
    if (h->copy) /* the maps of layer as the hook sees them (T × T each) */
        for (int hd = 0; hd < s->sh.n_head; hd++)
            rt_map(s, layer, hd, h->copy + ((size_t)layer * s->sh.n_head + hd) * s->T * s->T,
                   (size_t)s->T);
}

static void test_cancel(void **state)
{
    (void)state;
    int n;
    const Case *c = &cases(&n)[1]; /* 3 layers */
    TestModel *m = model_make(&c->cfg, 11, c->spread, 0);
    int P = c->cfg.n_positions, V = c->cfg.n_vocab, L = c->cfg.n_layer;
    int *ids = rand_ids(P, V);
    Rt *s;
    AttnErr err = {0};
    assert_int_equal(rt_create(&s, &arch_gpt2, &c->cfg, NULL), 0);
    Hook h = {.stop_at = -1, .s = s};
    ForwardHooks hooks = {hook_cancel, hook_layer, &h, NULL};
    assert_int_equal(rt_forward(s, &m->w, ids, 10, &hooks, NULL), 0);
    assert_int_equal(h.n_done, L);
    assert_int_equal(h.calls, L);

    for (int stop = 0; stop < L; stop++) {
        /* an edit at 6, cancelled before layer stop: the ids are kept, 6 done */
        ids[6] = (ids[6] + 1) % V;
        h = (Hook){.stop_at = stop, .s = s};
        assert_int_equal(rt_forward(s, &m->w, ids, 12, &hooks, &err), -ATTN_E_CANCELLED);
        assert_int_equal(err.code, ATTN_E_CANCELLED);
        assert_int_equal(h.n_done, stop);
        assert_int_equal(s->T, 12);
        assert_int_equal(s->n_done, 6);
        assert_int_equal(rt_logits(s, &m->w, 6, s->xf, NULL), -ATTN_E_RANGE);
        if (stop == 1) { /* cancelled twice in a row, the second edit earlier */
            ids[3] = (ids[3] + 1) % V;
            h = (Hook){.stop_at = 2, .s = s};
            assert_int_equal(rt_forward(s, &m->w, ids, 11, &hooks, NULL), -ATTN_E_CANCELLED);
            assert_int_equal(s->n_done, 3);
        }
        if (stop == 2) { /* the next forward is of other ids */
            ids[8] = (ids[8] + 1) % V;
            ids[9] = (ids[9] + 1) % V;
        }
        assert_int_equal(rt_forward(s, &m->w, ids, 12, NULL, NULL), 0);
        assert_full(s, m, ids, 12);
    }
    /* the maps of a reported layer are final when reported */
    h = (Hook){.stop_at = -1, .s = s};
    h.copy = calloc((size_t)L * c->cfg.n_head * 12 * 12, sizeof(float));
    float *now = calloc((size_t)L * c->cfg.n_head * 12 * 12, sizeof(float));
    assert_true(h.copy && now);
    ids[2] = (ids[2] + 1) % V;
    assert_int_equal(rt_forward(s, &m->w, ids, 12, &hooks, NULL), 0);
    rt_maps_copy(s, now);
    assert_memory_equal(h.copy, now, sizeof(float) * L * c->cfg.n_head * 12 * 12);
    free(h.copy);
    free(now);
    rt_destroy(s);
    free(ids);
    model_free(m);
}

/* ---- rows as they are made --------------------------------------------------------- */

typedef struct Rows {
    int L, H, T;
    float *maps;        /* L × H × T × T: each row as the hook got it, the rest 0 */
    unsigned char *got; /* L × H × T: how often each row came */
} Rows;

static void on_row(void *user, int layer, int head, int i, const float *w, int n)
{
    Rows *r = user;
    size_t m = (size_t)layer * r->H + head;
    assert_true(n >= 1 && n <= r->T);
    memcpy(r->maps + (m * r->T + i) * r->T, w, sizeof(float) * n);
    r->got[m * r->T + i]++;
}

/* The hook's rows are the maps' rows (rt_maps_copy's floats), each once;
 * an edit at position 5 hands over rows 5.. only. */
static void test_row_hook(void **state)
{
    (void)state;
    int n;
    const Case *c = &cases(&n)[1];
    TestModel *m = model_make(&c->cfg, 5, c->spread, 0);
    int L = c->cfg.n_layer, H = c->cfg.n_head, T = 9;
    int *ids = rand_ids(T, c->cfg.n_vocab);
    Rt *s;
    assert_int_equal(rt_create(&s, &arch_gpt2, &c->cfg, NULL), 0);
    size_t all = (size_t)L * H * T * T;
    Rows r = {L, H, T, calloc(all, sizeof(float)), calloc((size_t)L * H * T, 1)};
    float *want = malloc(sizeof(float) * all);
    assert_true(r.maps && r.got && want);
    ForwardHooks hooks = {NULL, NULL, &r, on_row};
    assert_int_equal(rt_forward(s, &m->w, ids, T, &hooks, NULL), 0);
    rt_maps_copy(s, want);
    assert_memory_equal(r.maps, want, sizeof(float) * all);
    for (size_t k = 0; k < (size_t)L * H * T; k++)
        assert_int_equal(r.got[k], 1);
    memset(r.got, 0, (size_t)L * H * T);
    ids[5] = (ids[5] + 1) % c->cfg.n_vocab;
    assert_int_equal(rt_forward(s, &m->w, ids, T, &hooks, NULL), 0);
    rt_maps_copy(s, want);
    assert_memory_equal(r.maps, want, sizeof(float) * all);
    for (size_t k = 0; k < (size_t)L * H * T; k++)
        assert_int_equal(r.got[k], k % T >= 5);
    free(r.maps), free(r.got), free(want), free(ids);
    rt_destroy(s);
    model_free(m);
}

/* ---- errors ---------------------------------------------------------------------- */
static void test_errors(void **state)
{
    (void)state;
    int n;
    const Case *c = &cases(&n)[0];
    TestModel *m = model_make(&c->cfg, 3, c->spread, 1);
    int P = c->cfg.n_positions, V = c->cfg.n_vocab;
    int *ids = rand_ids(P + 1, V);
    Rt *s;
    AttnErr err = {0};
    assert_int_equal(rt_create(&s, &arch_gpt2, &c->cfg, &err), 0);
    assert_int_equal(rt_forward(s, &m->w, ids, 5, NULL, &err), 0);
    /* too many tokens, an id past the vocabulary or negative: s unchanged */
    assert_int_equal(rt_forward(s, &m->w, ids, P + 1, NULL, &err), -ATTN_E_TOO_MANY_TOKENS);
    assert_int_equal(err.code, ATTN_E_TOO_MANY_TOKENS);
    assert_non_null(strstr(err.msg, "24"));
    int keep = ids[3];
    ids[3] = V;
    assert_int_equal(rt_forward(s, &m->w, ids, 5, NULL, &err), -ATTN_E_RANGE);
    ids[3] = -1;
    assert_int_equal(rt_forward(s, &m->w, ids, 5, NULL, &err), -ATTN_E_RANGE);
    ids[3] = keep;
    assert_int_equal(s->T, 5);
    assert_int_equal(s->n_done, 5);
    assert_full(s, m, ids, 5);
    /* positions past what was computed */
    float *lg = malloc(sizeof(float) * V);
    int top[LM_TOP_K];
    float pr[LM_TOP_K];
    assert_int_equal(rt_logits(s, &m->w, 5, lg, &err), -ATTN_E_RANGE);
    assert_int_equal(rt_logits(s, &m->w, -1, lg, &err), -ATTN_E_RANGE);
    assert_int_equal(rt_top_k(s, &m->w, 5, LM_TOP_K, top, pr, lg, &err), -ATTN_E_RANGE);
    assert_int_equal(rt_top_k(s, &m->w, 0, V + 1, top, pr, lg, &err), -ATTN_E_RANGE);
    /* the empty text */
    assert_int_equal(rt_forward(s, &m->w, ids, 0, NULL, &err), 0);
    assert_int_equal(s->T, 0);
    assert_int_equal(rt_logits(s, &m->w, 0, lg, &err), -ATTN_E_RANGE);
    /* reset: the next forward computes everything, the same floats */
    assert_int_equal(rt_forward(s, &m->w, ids, 7, NULL, &err), 0);
    rt_reset(s);
    assert_int_equal(s->n_done, 0);
    assert_int_equal(rt_forward(s, &m->w, ids, 7, NULL, &err), 0);
    assert_full(s, m, ids, 7);
    free(lg);
    rt_destroy(s);
    rt_destroy(NULL);
    /* configs the forward refuses */
    Gpt2Config bad = c->cfg;
    bad.n_head = 5;
    assert_int_equal(rt_create(&s, &arch_gpt2, &bad, &err), -ATTN_E_HEADS);
    assert_null(s);
    bad = c->cfg;
    bad.n_inner = 0;
    assert_int_equal(gpt2_config_check(&bad, &err), -ATTN_E_SHAPE);
    bad = c->cfg;
    bad.act = (Gpt2Act)7;
    assert_int_equal(gpt2_config_check(&bad, &err), -ATTN_E_UNSUPPORTED);
    bad = c->cfg;
    bad.ln_eps = NAN;
    assert_int_equal(gpt2_config_check(&bad, &err), -ATTN_E_RANGE);
    assert_string_equal(attn_strerror(-ATTN_E_CANCELLED), "cancelled");
    free(ids);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_linear_paths),
        cmocka_unit_test(test_linear_panels),
        cmocka_unit_test(test_four_rows),
        cmocka_unit_test(test_incremental_equals_full),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_row_hook),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
