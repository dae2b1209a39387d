/* Tests for the Llama family's forward pass (src/core/arch_llama.c on src/core/runtime.c): a naive
 * double-precision forward written here from Hugging Face's modeling_llama
 * (its own RMSNorm, rotary embedding with rotate_half, grouped-query heads,
 * SwiGLU, llama3 rope scaling) on random weights made in memory, large
 * enough that attention is peaked; key-value heads 1, 2 and all, head_dim
 * given apart from hidden / heads, biases (Qwen2's q, k, v; Llama's
 * attention_bias on o too), tied and untied outputs, eps large enough that
 * its place matters, each kernel set the CPU runs. Then: incremental
 * forwards after scripted edits equal a full one bit for bit, cancelling,
 * the layer callback, the errors (the sliding window refused). */
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
#include "attnviz/llama.h"

#include "test_rand.h"

/* ---- a model made in memory -------------------------------------------------- */
typedef struct TestModel {
    LlamaConfig cfg;
    LlamaWeights w;      /* what the forward gets */
    LlamaWeights ref;    /* the same numbers as float32 [in, out]: the reference's */
    LlamaLayer *layers, *ref_layers;
    float *blocks[32];
    uint16_t *b16[16];   /* bfloat16 copies, [out, in] */
    RtMat mats[7 * 64 + 2]; /* the forward's handles on them */
    int n_blocks, n_b16, n_mats;
} TestModel;

static float *arr(TestModel *m, size_t n, double centre, double spread)
{
    float *a = malloc(n * sizeof(float) + 1);
    assert_non_null(a);
    for (size_t i = 0; i < n; i++)
        a[i] = (float)(centre + urand(-spread, spread));
    assert_true(m->n_blocks < (int)(sizeof m->blocks / sizeof m->blocks[0]));
    m->blocks[m->n_blocks++] = a;
    return a;
}

/* n floats rounded to bfloat16 in place (to nearest, ties to even). */
static void round_bf16(float *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &a[i], sizeof u);
        u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
        memcpy(&a[i], &u, sizeof u);
    }
}

/* L matrices of [rows, cols] floats (rounded to bfloat16 first) as L
 * bfloat16 [cols, rows] ones: a file's [out, in] of [in, out] ones; or rows
 * of a table (transpose 0) as they are. */
static uint16_t *to_bf16(TestModel *m, float *a, size_t L, size_t rows, size_t cols, int transpose)
{
    round_bf16(a, L * rows * cols);
    uint16_t *b = malloc(L * rows * cols * sizeof *b + 2);
    assert_non_null(b);
    assert_true(m->n_b16 < (int)(sizeof m->b16 / sizeof m->b16[0]));
    m->b16[m->n_b16++] = b;
    for (size_t l = 0; l < L; l++)
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++) {
                uint32_t u;
                memcpy(&u, &a[(l * rows + r) * cols + c], sizeof u);
                size_t at = transpose ? (l * cols + c) * rows + r : (l * rows + r) * cols + c;
                b[at] = (uint16_t)(u >> 16);
            }
    return b;
}

/* A handle on a bfloat16 matrix of rows of cols numbers. */
static const RtMat *mat16(TestModel *m, const uint16_t *b, size_t cols)
{
    assert_true(m->n_mats < (int)(sizeof m->mats / sizeof m->mats[0]));
    m->mats[m->n_mats] = (RtMat){RT_MAT_BF16, b, cols * 2, NULL};
    return &m->mats[m->n_mats++];
}

/* The forward's weights in bfloat16 where the file would have them: every
 * matrix [out, in] and the embeddings (and an untied output layer), the
 * float ones rounded the same for the reference. */
static void make_bf16(TestModel *m)
{
    const LlamaConfig *c = &m->cfg;
    size_t C = (size_t)c->hidden, I = (size_t)c->n_inner, L = (size_t)c->n_layer;
    size_t qd = (size_t)c->n_head * c->head_dim, kvd = (size_t)c->n_kv_head * c->head_dim;
    LlamaLayer *r = m->ref_layers;
    uint16_t *q = to_bf16(m, (float *)r[0].wq, L, C, qd, 1);
    uint16_t *k = to_bf16(m, (float *)r[0].wk, L, C, kvd, 1);
    uint16_t *v = to_bf16(m, (float *)r[0].wv, L, C, kvd, 1);
    uint16_t *o = to_bf16(m, (float *)r[0].wo, L, qd, C, 1);
    uint16_t *g = to_bf16(m, (float *)r[0].w_gate, L, C, I, 1);
    uint16_t *u = to_bf16(m, (float *)r[0].w_up, L, C, I, 1);
    uint16_t *d = to_bf16(m, (float *)r[0].w_down, L, I, C, 1);
    m->layers = calloc(L, sizeof *m->layers);
    assert_non_null(m->layers);
    for (size_t l = 0; l < L; l++) {
        LlamaLayer *y = &m->layers[l];
        *y = r[l];
        y->wq = y->wk = y->wv = y->wo = y->w_gate = y->w_up = y->w_down = NULL;
        y->wq_m = mat16(m, q + l * C * qd, C), y->wk_m = mat16(m, k + l * C * kvd, C);
        y->wv_m = mat16(m, v + l * C * kvd, C), y->wo_m = mat16(m, o + l * qd * C, qd);
        y->gate_m = mat16(m, g + l * C * I, C), y->up_m = mat16(m, u + l * C * I, C);
        y->down_m = mat16(m, d + l * I * C, I);
    }
    m->w.layers = m->layers;
    m->w.embed_m = mat16(m, to_bf16(m, (float *)m->ref.embed, 1, (size_t)c->n_vocab, C, 0), C);
    m->w.lm_head_m = c->tied ? m->w.embed_m
                             : mat16(m, to_bf16(m, (float *)m->ref.lm_head, 1,
                                                (size_t)c->n_vocab, C, 0), C);
    m->w.embed = m->w.lm_head = NULL;
}

/* Matrices of spread s; norm gains near 1; embeddings small (spread 0.3)
 * so that eps is not negligible beside mean(x²) in the first layer; bf16:
 * the forward's matrices and tables in bfloat16 (make_bf16). */
static TestModel *model_make(const LlamaConfig *cfg, uint64_t seed, double s, int bf16)
{
    TestModel *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->cfg = *cfg;
    rng_seed(seed);
    size_t C = (size_t)cfg->hidden, I = (size_t)cfg->n_inner, L = (size_t)cfg->n_layer;
    size_t qd = (size_t)cfg->n_head * cfg->head_dim, kvd = (size_t)cfg->n_kv_head * cfg->head_dim;
    m->layers = calloc(L, sizeof *m->layers);
    assert_non_null(m->layers);
    float *nw = arr(m, L * 2 * C, 1.0, 0.5);
    float *wq = arr(m, L * C * qd, 0.0, s), *wk = arr(m, L * C * kvd, 0.0, s);
    float *wv = arr(m, L * C * kvd, 0.0, s), *wo = arr(m, L * qd * C, 0.0, s);
    float *bq = arr(m, L * qd, 0.0, 0.5), *bk = arr(m, L * kvd, 0.0, 0.5);
    float *bv = arr(m, L * kvd, 0.0, 0.5), *bo = arr(m, L * C, 0.0, 0.5);
    float *wg = arr(m, L * C * I, 0.0, s), *wu = arr(m, L * C * I, 0.0, s);
    float *wd = arr(m, L * I * C, 0.0, s);
    for (size_t l = 0; l < L; l++) {
        LlamaLayer *y = &m->layers[l];
        y->attn_norm = nw + l * 2 * C, y->mlp_norm = nw + l * 2 * C + C;
        y->wq = wq + l * C * qd, y->wk = wk + l * C * kvd, y->wv = wv + l * C * kvd;
        y->wo = wo + l * qd * C;
        if (cfg->qkv_bias)
            y->bq = bq + l * qd, y->bk = bk + l * kvd, y->bv = bv + l * kvd;
        if (cfg->o_bias)
            y->bo = bo + l * C;
        y->w_gate = wg + l * C * I, y->w_up = wu + l * C * I, y->w_down = wd + l * I * C;
    }
    m->w.layers = m->layers;
    m->w.embed = arr(m, (size_t)cfg->n_vocab * C, 0.0, 0.3);
    m->w.norm = arr(m, C, 1.0, 0.5);
    m->w.lm_head = cfg->tied ? m->w.embed : arr(m, (size_t)cfg->n_vocab * C, 0.0, 0.5);
    m->ref = m->w;
    m->ref_layers = m->layers;
    if (bf16)
        make_bf16(m);
    return m;
}

static void model_free(TestModel *m)
{
    for (int k = 0; k < m->n_blocks; k++)
        free(m->blocks[k]);
    for (int k = 0; k < m->n_b16; k++)
        free(m->b16[k]);
    if (m->layers != m->ref_layers)
        free(m->layers);
    free(m->ref_layers);
    free(m);
}

/* ---- the reference: naive loops in double ---------------------------------- */
static void ref_rmsnorm(double *out, const double *x, const float *w, int C, double eps)
{
    double ss = 0;
    for (int c = 0; c < C; c++)
        ss += x[c] * x[c];
    double r = 1.0 / sqrt(ss / C + eps);
    for (int c = 0; c < C; c++)
        out[c] = x[c] * r * w[c];
}

/* out[m] = in[k] · W (k × m, [in, out]) + bias (NULL: none) */
static void ref_linear(double *out, const double *in, const float *W, const float *bias, int k,
                       int m)
{
    for (int j = 0; j < m; j++) {
        double s = bias ? bias[j] : 0.0;
        for (int p = 0; p < k; p++)
            s += in[p] * W[(size_t)p * m + j];
        out[j] = s;
    }
}

/* Hugging Face's inverse frequencies and _compute_llama3_parameters. */
static void ref_inv_freq(double *f, const LlamaConfig *c)
{
    int d = c->head_dim;
    for (int e = 0; e < d / 2; e++) {
        f[e] = 1.0 / pow(c->rope_theta, (double)(2 * e) / d);
        if (!c->rope_llama3)
            continue;
        double wl = 2 * 3.14159265358979323846 / f[e];
        double lo = c->rope_orig_max / c->rope_low_freq, hi = c->rope_orig_max / c->rope_high_freq;
        double scaled = wl > lo ? f[e] / c->rope_factor : f[e];
        double sm = (c->rope_orig_max / wl - c->rope_low_freq) / (c->rope_high_freq - c->rope_low_freq);
        double smoothed = (1 - sm) * scaled / c->rope_factor + sm * scaled;
        f[e] = !(wl < hi) && !(wl > lo) ? smoothed : scaled;
    }
}

/* q·cos + rotate_half(q)·sin over n heads of d at position pos */
static void ref_rope(double *v, int n, int d, int pos, const double *inv)
{
    for (int h = 0; h < n; h++, v += d)
        for (int e = 0; e < d / 2; e++) {
            double a = v[e], b = v[e + d / 2], co = cos(pos * inv[e]), si = sin(pos * inv[e]);
            v[e] = a * co - b * si;
            v[e + d / 2] = b * co + a * si;
        }
}

/* The maps (L × H × T × T, zeros above the diagonal), every position's
 * logits (T × V), each layer's rotated q and k (L × T × (qd + kvd)). */
typedef struct Ref {
    double *maps, *logits, *qk;
} Ref;

static Ref ref_forward(const TestModel *m, const int *ids, int T)
{
    const LlamaConfig *c = &m->cfg;
    const LlamaWeights *w = &m->ref;
    int L = c->n_layer, H = c->n_head, KV = c->n_kv_head, dh = c->head_dim, C = c->hidden;
    int I = c->n_inner, V = c->n_vocab, qd = H * dh, kvd = KV * dh, QK = qd + kvd;
    Ref r;
    r.maps = calloc((size_t)L * H * T * T + 1, sizeof(double));
    r.logits = calloc((size_t)T * V + 1, sizeof(double));
    r.qk = calloc((size_t)L * T * QK + 1, sizeof(double));
    double *x = calloc((size_t)T * C + 1, sizeof(double)), *a = malloc(sizeof(double) * (C + 1));
    double *v = calloc((size_t)T * kvd + 1, sizeof(double)), *z = calloc((size_t)qd + 1, sizeof(double));
    double *g = malloc(sizeof(double) * (I + 1)), *u = malloc(sizeof(double) * (I + 1));
    double *o = malloc(sizeof(double) * (C + 1)), *sc = malloc(sizeof(double) * (T + 1));
    double inv[512];
    assert_true(r.maps && r.logits && r.qk && x && a && v && z && g && u && o && sc);
    assert_true(dh / 2 <= 512);
    ref_inv_freq(inv, c);
    for (int i = 0; i < T; i++)
        for (int k = 0; k < C; k++)
            x[(size_t)i * C + k] = w->embed[(size_t)ids[i] * C + k];
    for (int l = 0; l < L; l++) {
        const LlamaLayer *y = &w->layers[l];
        double *qk = r.qk + (size_t)l * T * QK;
        for (int i = 0; i < T; i++) {
            ref_rmsnorm(a, x + (size_t)i * C, y->attn_norm, C, c->rms_eps);
            ref_linear(qk + (size_t)i * QK, a, y->wq, y->bq, C, qd);
            ref_linear(qk + (size_t)i * QK + qd, a, y->wk, y->bk, C, kvd);
            ref_linear(v + (size_t)i * kvd, a, y->wv, y->bv, C, kvd);
            ref_rope(qk + (size_t)i * QK, H, dh, i, inv);
            ref_rope(qk + (size_t)i * QK + qd, KV, dh, i, inv);
        }
        double *xnew = calloc((size_t)T * C + 1, sizeof(double));
        assert_non_null(xnew);
        for (int i = 0; i < T; i++) {
            for (int h = 0; h < H; h++) {
                int kh = h / (H / KV);
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= i; j++) {
                    double d = 0;
                    for (int e = 0; e < dh; e++)
                        d += qk[(size_t)i * QK + h * dh + e] * qk[(size_t)j * QK + qd + kh * dh + e];
                    sc[j] = d / sqrt((double)dh);
                    mx = sc[j] > mx ? sc[j] : mx;
                }
                for (int j = 0; j <= i; j++)
                    sum += (sc[j] = exp(sc[j] - mx));
                double *row = r.maps + (((size_t)l * H + h) * T + i) * T;
                for (int j = 0; j <= i; j++)
                    row[j] = sc[j] / sum;
                for (int e = 0; e < dh; e++) {
                    double acc = 0;
                    for (int j = 0; j <= i; j++)
                        acc += row[j] * v[(size_t)j * kvd + kh * dh + e];
                    z[h * dh + e] = acc;
                }
            }
            double *xi = xnew + (size_t)i * C;
            ref_linear(o, z, y->wo, y->bo, qd, C);
            for (int k = 0; k < C; k++)
                xi[k] = x[(size_t)i * C + k] + o[k];
            ref_rmsnorm(a, xi, y->mlp_norm, C, c->rms_eps);
            ref_linear(g, a, y->w_gate, NULL, C, I);
            ref_linear(u, a, y->w_up, NULL, C, I);
            for (int k = 0; k < I; k++)
                g[k] = g[k] / (1.0 + exp(-g[k])) * u[k];
            ref_linear(o, g, y->w_down, NULL, I, C);
            for (int k = 0; k < C; k++)
                xi[k] += o[k];
        }
        memcpy(x, xnew, sizeof(double) * T * C);
        free(xnew);
    }
    for (int i = 0; i < T; i++) {
        ref_rmsnorm(a, x + (size_t)i * C, w->norm, C, c->rms_eps);
        for (int t = 0; t < V; t++) {
            double s = 0;
            for (int k = 0; k < C; k++)
                s += a[k] * w->lm_head[(size_t)t * C + k];
            r.logits[(size_t)i * V + t] = s;
        }
    }
    free(x), free(a), free(v), free(z), free(g), free(u), free(o), free(sc);
    return r;
}

static void ref_free(Ref *r)
{
    free(r->maps), free(r->logits), free(r->qk);
}

/* ---- the shapes ---------------------------------------------------------------- */
typedef struct Case {
    LlamaConfig cfg;
    int T;
    double spread;
    int bf16; /* the matrices and tables in bfloat16, [out, in] */
} Case;

static LlamaConfig shape(int L, int H, int KV, int dh, int C, int I, int P, int V, float eps)
{
    LlamaConfig c = {.arch = LLAMA_ARCH_LLAMA, .n_layer = L, .n_head = H, .n_kv_head = KV,
                     .head_dim = dh, .hidden = C, .n_inner = I, .n_positions = P,
                     .n_vocab = V, .rms_eps = eps, .rope_theta = 10000.0, .bos_id = -1,
                     .eos_id = -1};
    return c;
}

/* one key-value head for 4 queries, 2 for 6 (head_dim 10 with hidden 40),
 * all 3 (T past 64 keys, llama3 scaling), Qwen2's biases with 2 for 4 */
static const Case *cases(int *n)
{
    static Case c[6];
    c[0] = (Case){shape(2, 4, 1, 8, 32, 48, 24, 50, 0.1f), 20, 0.7, 0};
    c[0].cfg.tied = 1;
    c[1] = (Case){shape(3, 6, 2, 10, 40, 70, 16, 31, 0.05f), 13, 0.6, 0};
    c[1].cfg.qkv_bias = c[1].cfg.o_bias = 1;
    c[2] = (Case){shape(2, 3, 3, 12, 36, 100, 80, 67, 0.02f), 70, 0.75, 0};
    c[2].cfg.rope_theta = 500.0;
    c[2].cfg.rope_llama3 = 1;
    c[2].cfg.rope_factor = 8.0, c[2].cfg.rope_low_freq = 1.0, c[2].cfg.rope_high_freq = 4.0;
    c[2].cfg.rope_orig_max = 8;
    c[3] = (Case){shape(2, 4, 2, 16, 48, 56, 20, 40, 0.1f), 17, 0.65, 0};
    c[3].cfg.arch = LLAMA_ARCH_QWEN2;
    c[3].cfg.qkv_bias = 1;
    c[3].cfg.tied = 1;
    /* bfloat16: untied with biases, 2 for 6; tied, 2 for 4, hidden 72 and I
     * 136 (past the widest kernel's 64-number blocks) */
    c[4] = c[1];
    c[4].bf16 = 1;
    c[5] = (Case){shape(2, 4, 2, 16, 72, 136, 32, 45, 0.05f), 30, 0.45, 1};
    c[5].cfg.tied = 1;
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

static void check_case(const Case *k, uint64_t seed)
{
    const LlamaConfig *c = &k->cfg;
    TestModel *m = model_make(c, seed, k->spread, k->bf16);
    int *ids = rand_ids(k->T, c->n_vocab), T = k->T;
    Ref r = ref_forward(m, ids, T);
    Rt *s;
    AttnErr err = {0};
    assert_int_equal(rt_create(&s, &arch_llama, c, &err), 0);
    assert_int_equal(rt_forward(s, &m->w, ids, T, NULL, &err), 0);
    assert_int_equal(s->n_done, T);
    size_t n = (size_t)c->n_layer * c->n_head * T * T;
    float *got = malloc(n * sizeof(float));
    assert_non_null(got);
    rt_maps_copy(s, got);
    double worst = 0, sum_max = 0;
    for (size_t q = 0; q < n; q++) {
        double d = fabs(got[q] - r.maps[q]);
        worst = d > worst ? d : worst;
    }
    int rows = 0;
    for (int mm = 0; mm < c->n_layer * c->n_head; mm++)
        for (int i = 1; i < T; i++, rows++) {
            double top = 0;
            for (int j = 0; j <= i; j++) {
                double v = r.maps[((size_t)mm * T + i) * T + j];
                top = v > top ? v : top;
            }
            sum_max += top;
        }
    if (getenv("LLAMA_TEST_VERBOSE") || worst > 1e-5 || sum_max / rows <= 0.5)
        fprintf(stderr, "case L%d H%d KV%d%s (%s): maps differ by %g, peak %.2f\n", c->n_layer,
                c->n_head, c->n_kv_head, k->bf16 ? " bf16" : "", lm_kernels(), worst,
                sum_max / rows);
    assert_true(worst <= 1e-5);
    assert_true(sum_max / rows > 0.5); /* peaked: uniform maps hide mistakes */
    free(got);
    /* rotated queries and keys, the key-value head of each query head */
    int qd = c->n_head * c->head_dim, QK = qd + c->n_kv_head * c->head_dim, dh = c->head_dim;
    for (int l = 0; l < c->n_layer; l++)
        for (int h = 0; h < c->n_head; h++)
            for (int i = 0; i < T; i++) {
                const double *q = r.qk + ((size_t)l * T + i) * QK + h * dh;
                const double *kk = r.qk + ((size_t)l * T + i) * QK + qd +
                                   (h / (c->n_head / c->n_kv_head)) * dh;
                const float *gq = rt_query(s, l, h, i), *gk = rt_key(s, l, h, i);
                for (int e = 0; e < dh; e++) {
                    assert_true(fabs(gq[e] - q[e]) <= 1e-4 * (1 + fabs(q[e])));
                    assert_true(fabs(gk[e] - kk[e]) <= 1e-4 * (1 + fabs(kk[e])));
                }
            }
    /* logits everywhere; the top 10 with probabilities */
    int V = c->n_vocab, K = V < LM_TOP_K ? V : LM_TOP_K;
    float *lg = malloc(sizeof(float) * V);
    assert_non_null(lg);
    for (int i = 0; i < T; i++) {
        const double *want = r.logits + (size_t)i * V;
        assert_int_equal(rt_logits(s, &m->w, i, lg, &err), 0);
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++) {
            assert_true(fabs(lg[v] - want[v]) <= 1e-4 * (1 + fabs(want[v])));
            mx = want[v] > mx ? want[v] : mx;
        }
        for (int v = 0; v < V; v++)
            sum += exp(want[v] - mx);
        int top[LM_TOP_K];
        float probs[LM_TOP_K];
        assert_int_equal(rt_top_k(s, &m->w, i, K, top, probs, i % 2 ? lg : NULL, &err), 0);
        for (int t = 0; t < K; t++) {
            double p = exp(want[top[t]] - mx) / sum;
            assert_true(fabs(probs[t] - p) <= 1e-5);
            int above = 0;
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
            check_case(&c[i], 200 + (uint64_t)i);
    }
    assert_true(ran >= 1);
    assert_int_equal(lm_use_kernels(first), 0);
}

/* ---- incremental == full, bit for bit ------------------------------------------ */
static void assert_same(const Rt *a, const Rt *b, const LlamaWeights *w)
{
    const LlamaConfig *c = a->cfg;
    assert_int_equal(a->T, b->T);
    assert_int_equal(a->n_done, a->T);
    assert_int_equal(b->n_done, b->T);
    int T = a->T, C = c->hidden, W = a->qdim + 2 * a->kvdim;
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
        assert_memory_equal(a->qkv + (size_t)l * a->cap * W, b->qkv + (size_t)l * b->cap * W,
                            (size_t)T * W * sizeof(float));
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

static void assert_full(const Rt *s, const TestModel *m, const int *ids, int T)
{
    Rt *f;
    assert_int_equal(rt_create(&f, &arch_llama, &m->cfg, NULL), 0);
    assert_int_equal(rt_forward(f, &m->w, ids, T, NULL, NULL), 0);
    assert_same(s, f, &m->w);
    rt_destroy(f);
}

static void test_incremental_equals_full(void **state)
{
    (void)state;
    int n;
    const Case *all = cases(&n);
    const Case *pick[] = {&all[2], &all[1], &all[4], &all[5]};
    for (size_t p = 0; p < sizeof pick / sizeof pick[0]; p++) {
        const LlamaConfig *c = &pick[p]->cfg;
        TestModel *m = model_make(c, 7 + p, pick[p]->spread, pick[p]->bf16);
        int P = c->n_positions, V = c->n_vocab;
        int *ids = rand_ids(P, V);
        Rt *s;
        assert_int_equal(rt_create(&s, &arch_llama, c, NULL), 0);
        /* T, then what changes: -1 nothing, else a position that gets a new id */
        const int script[][2] = {
            {P / 2, -1}, {P / 2 + 1, -1}, {P / 2 + 1, P / 2}, {P / 2 + 1, P / 4},
            {P / 2 + 1, -1}, {P / 3, -1}, {0, -1}, {P / 2 + 2, 0}, {P - 3, -1},
            {P, P - 4}, {P, 0}, {1, -1},
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
}

/* ---- cancelling, the layer callback --------------------------------------------- */
typedef struct Hook {
    int stop_at, calls, n_done;
} Hook;

static int hook_cancel(void *user)
{
    Hook *h = user;
    return h->calls++ == h->stop_at;
}

static void hook_layer(void *user, int layer)
{
    Hook *h = user;
    assert_int_equal(layer, h->n_done);
    h->n_done++;
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
    assert_int_equal(rt_create(&s, &arch_llama, &c->cfg, NULL), 0);
    Hook h = {.stop_at = -1};
    ForwardHooks hooks = {hook_cancel, hook_layer, &h, NULL};
    assert_int_equal(rt_forward(s, &m->w, ids, 10, &hooks, NULL), 0);
    assert_int_equal(h.n_done, L);
    for (int stop = 0; stop < L; stop++) {
        ids[6] = (ids[6] + 1) % V;
        h = (Hook){.stop_at = stop};
        assert_int_equal(rt_forward(s, &m->w, ids, 12, &hooks, &err), -ATTN_E_CANCELLED);
        assert_int_equal(h.n_done, stop);
        assert_int_equal(s->T, 12);
        assert_int_equal(s->n_done, 6);
        assert_int_equal(rt_logits(s, &m->w, 6, s->xf, NULL), -ATTN_E_RANGE);
        if (stop == 1) {
            ids[3] = (ids[3] + 1) % V;
            h = (Hook){.stop_at = 2};
            assert_int_equal(rt_forward(s, &m->w, ids, 11, &hooks, NULL), -ATTN_E_CANCELLED);
            assert_int_equal(s->n_done, 3);
        }
        assert_int_equal(rt_forward(s, &m->w, ids, 12, NULL, NULL), 0);
        assert_full(s, m, ids, 12);
    }
    rt_destroy(s);
    free(ids);
    model_free(m);
}

/* ---- errors ---------------------------------------------------------------------- */
static void test_errors(void **state)
{
    (void)state;
    int n;
    const Case *c = &cases(&n)[0];
    TestModel *m = model_make(&c->cfg, 3, c->spread, 0);
    int P = c->cfg.n_positions, V = c->cfg.n_vocab;
    int *ids = rand_ids(P + 1, V);
    Rt *s;
    AttnErr err = {0};
    assert_int_equal(rt_create(&s, &arch_llama, &c->cfg, &err), 0);
    assert_int_equal(rt_forward(s, &m->w, ids, 5, NULL, &err), 0);
    assert_int_equal(rt_forward(s, &m->w, ids, P + 1, NULL, &err), -ATTN_E_TOO_MANY_TOKENS);
    int keep = ids[3];
    ids[3] = V;
    assert_int_equal(rt_forward(s, &m->w, ids, 5, NULL, &err), -ATTN_E_RANGE);
    ids[3] = -1;
    assert_int_equal(rt_forward(s, &m->w, ids, 5, NULL, &err), -ATTN_E_RANGE);
    ids[3] = keep;
    assert_int_equal(s->n_done, 5);
    assert_full(s, m, ids, 5);
    float *lg = malloc(sizeof(float) * V);
    int top[LM_TOP_K];
    float pr[LM_TOP_K];
    assert_int_equal(rt_logits(s, &m->w, 5, lg, &err), -ATTN_E_RANGE);
    assert_int_equal(rt_top_k(s, &m->w, 0, V + 1, top, pr, lg, &err), -ATTN_E_RANGE);
    assert_int_equal(rt_forward(s, &m->w, ids, 0, NULL, &err), 0);
    assert_int_equal(rt_logits(s, &m->w, 0, lg, &err), -ATTN_E_RANGE);
    free(lg);
    rt_destroy(s);
    rt_destroy(NULL);
    /* the sliding window applied (mistral: every layer): keys j ≤ i − 6
     * exactly 0, the rest a softmax; the first 6 rows as without it */
    LlamaConfig sw = c->cfg;
    sw.arch = LLAMA_ARCH_MISTRAL;
    sw.sliding_window = 6;
    int ids9[9] = {3, 1, 4, 1, 5, 9, 2, 6, 5};
    Rt *full;
    assert_int_equal(rt_create(&s, &arch_llama, &sw, &err), 0);
    assert_int_equal(rt_create(&full, &arch_llama, &c->cfg, &err), 0);
    assert_int_equal(rt_forward(s, &m->w, ids9, 9, NULL, &err), 0);
    assert_int_equal(rt_forward(full, &m->w, ids9, 9, NULL, &err), 0);
    float wm[81], fm[81];
    for (int l = 0; l < c->cfg.n_layer; l++)
        for (int h = 0; h < c->cfg.n_head; h++) {
            rt_map(s, l, h, wm, 9);
            rt_map(full, l, h, fm, 9);
            for (int i = 0; i < 9; i++) {
                double sum = 0;
                for (int j = 0; j < 9; j++) {
                    if (j <= i - 6 || j > i)
                        assert_true(wm[i * 9 + j] == 0.0f);
                    else
                        assert_true(wm[i * 9 + j] > 0.0f);
                    sum += wm[i * 9 + j];
                }
                assert_true(fabs(sum - 1.0) < 1e-5);
                if (l == 0 && i < 6)
                    assert_memory_equal(&wm[i * 9], &fm[i * 9], 9 * sizeof(float));
            }
        }
    rt_destroy(s);
    rt_destroy(full);
    /* configs refused */
    LlamaConfig bad = c->cfg;
    bad.n_kv_head = 3;
    assert_int_equal(rt_create(&s, &arch_llama, &bad, &err), -ATTN_E_HEADS);
    assert_null(s);
    assert_non_null(strstr(err.msg, "num_attention_heads 4 is not divisible by num_key_value_heads 3"));
    bad = c->cfg;
    bad.head_dim = 7;
    assert_int_equal(llama_config_check(&bad, &err), -ATTN_E_SHAPE);
    bad = c->cfg;
    bad.rms_eps = NAN;
    assert_int_equal(llama_config_check(&bad, &err), -ATTN_E_RANGE);
    bad = c->cfg;
    bad.rope_llama3 = 1;
    assert_int_equal(llama_config_check(&bad, &err), -ATTN_E_RANGE);
    free(ids);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_incremental_equals_full),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
