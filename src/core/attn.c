/* The attention forward pass, positional encoding and weight set-up.
 * Plain C and libm; kernels never allocate (attn_forward grows the result's
 * buffers first, then runs the passes). */
#include "attnviz/attn.h"
#include "attnviz/prng.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

AttnConfig attn_config_default(void)
{
    AttnConfig c = {ATTN_MODE_LEARNED, 1, 1, 0, 0, 1.0f};
    return c;
}

/* ---- weights ------------------------------------------------------------ */

int attn_params_create(AttnParams *p, int d, int h)
{
    memset(p, 0, sizeof *p);
    if (d < 1 || h < 1 || h > ATTN_MAX_HEADS || d % h != 0)
        return -ATTN_E_HEADS;
    size_t n = (size_t)d * (size_t)d; /* h × d × dk = d × d */
    p->d = d;
    p->h = h;
    p->dk = d / h;
    p->Wq = calloc(n, sizeof(float));
    p->Wk = calloc(n, sizeof(float));
    p->Wv = calloc(n, sizeof(float));
    p->Wo = calloc(n, sizeof(float));
    if (!p->Wq || !p->Wk || !p->Wv || !p->Wo) {
        attn_params_destroy(p);
        return -ATTN_E_NOMEM;
    }
    attn_params_identity(p);
    return 0;
}

void attn_params_destroy(AttnParams *p)
{
    if (!p)
        return;
    free(p->Wq);
    free(p->Wk);
    free(p->Wv);
    free(p->Wo);
    memset(p, 0, sizeof *p);
}

int attn_params_copy(AttnParams *dst, const AttnParams *src)
{
    AttnParams tmp;
    int rc = attn_params_create(&tmp, src->d, src->h);
    if (rc < 0)
        return rc;
    size_t bytes = (size_t)src->d * (size_t)src->d * sizeof(float);
    memcpy(tmp.Wq, src->Wq, bytes);
    memcpy(tmp.Wk, src->Wk, bytes);
    memcpy(tmp.Wv, src->Wv, bytes);
    memcpy(tmp.Wo, src->Wo, bytes);
    attn_params_destroy(dst);
    *dst = tmp;
    return 0;
}

void attn_params_identity(AttnParams *p)
{
    int d = p->d, dk = p->dk;
    for (int m = 0; m < 3; m++) {
        float *W = m == 0 ? p->Wq : m == 1 ? p->Wk : p->Wv;
        memset(W, 0, (size_t)d * d * sizeof(float));
        for (int k = 0; k < p->h; k++)
            for (int c = 0; c < dk; c++)
                W[(size_t)k * d * dk + (size_t)(k * dk + c) * dk + c] = 1.0f;
    }
    memset(p->Wo, 0, (size_t)d * d * sizeof(float));
    for (int r = 0; r < d; r++)
        p->Wo[(size_t)r * d + r] = 1.0f;
}

static void xavier_fill(float *W, int rows, int cols, Prng *rng)
{
    float limit = sqrtf(6.0f / (float)(rows + cols));
    for (int i = 0; i < rows * cols; i++)
        W[i] = (2.0f * prng_uniform(rng) - 1.0f) * limit;
}

void attn_params_xavier(AttnParams *p, uint64_t seed)
{
    Prng rng;
    prng_seed(&rng, seed);
    size_t slice = (size_t)p->d * p->dk;
    for (int k = 0; k < p->h; k++) {
        xavier_fill(p->Wq + k * slice, p->d, p->dk, &rng);
        xavier_fill(p->Wk + k * slice, p->d, p->dk, &rng);
        xavier_fill(p->Wv + k * slice, p->d, p->dk, &rng);
    }
    xavier_fill(p->Wo, p->d, p->d, &rng);
}

float *attn_params_matrix(const AttnParams *p, int which, int head, int *rows,
                          int *cols)
{
    size_t slice = (size_t)p->d * p->dk;
    *rows = p->d;
    *cols = which == 3 ? p->d : p->dk;
    switch (which) {
    case 0: return p->Wq + head * slice;
    case 1: return p->Wk + head * slice;
    case 2: return p->Wv + head * slice;
    default: return p->Wo;
    }
}

/* ---- positional encoding ------------------------------------------------ */

float attn_posenc(int pos, int k, int d)
{
    int i2 = k & ~1; /* 2i */
    double angle = pos / pow(10000.0, (double)i2 / d);
    return (float)((k & 1) ? cos(angle) : sin(angle));
}

void attn_posenc_add(float *X, int T, int d)
{
    for (int p = 0; p < T; p++)
        for (int k = 0; k < d; k++)
            X[(size_t)p * d + k] += attn_posenc(p, k, d);
}

/* ---- kernels ------------------------------------------------------------ */

/* out (n×m) = A (n×k, row stride lda) · B (k×m). */
static void matmul(float *restrict out, const float *restrict A, int lda,
                   const float *restrict B, int n, int k, int m)
{
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)i * m;
        const float *a = A + (size_t)i * lda;
        memset(o, 0, (size_t)m * sizeof(float));
        for (int p = 0; p < k; p++) {
            float av = a[p];
            if (av == 0.0f)
                continue;
            const float *b = B + (size_t)p * m;
            for (int j = 0; j < m; j++)
                o[j] += av * b[j];
        }
    }
}

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

void attn_softmax_row(float *row, int n, int n_valid)
{
    if (n_valid > n)
        n_valid = n;
    if (n_valid <= 0) {
        memset(row, 0, (size_t)n * sizeof(float));
        return;
    }
    /* stable softmax: subtract the row max so exp never overflows; eight
     * partial maxima (and NaN counts) so the loop vectorises */
    float m8[8], nan8[8];
    for (int u = 0; u < 8; u++) {
        m8[u] = -INFINITY;
        nan8[u] = 0.0f;
    }
    int jb = 0;
    for (; jb + 8 <= n_valid; jb += 8)
        for (int u = 0; u < 8; u++) {
            float x = row[jb + u];
            m8[u] = x > m8[u] ? x : m8[u];
            nan8[u] += x != x ? 1.0f : 0.0f;
        }
    float mx = -INFINITY, nans = 0.0f;
    for (; jb < n_valid; jb++) {
        mx = row[jb] > mx ? row[jb] : mx;
        nans += row[jb] != row[jb];
    }
    for (int u = 0; u < 8; u++) {
        mx = m8[u] > mx ? m8[u] : mx;
        nans += nan8[u];
    }
    if (!isfinite(mx) || nans > 0.0f) {
        softmax_nonfinite(row, n_valid);
    } else {
        for (int j = 0; j < n_valid; j++)
            row[j] = exp_neg(row[j] - mx);
        /* eight partial sums: vectorisable without reassociation flags */
        float part[8] = {0};
        int j = 0;
        for (; j + 8 <= n_valid; j += 8)
            for (int u = 0; u < 8; u++)
                part[u] += row[j + u];
        float sum = 0.0f;
        for (; j < n_valid; j++)
            sum += row[j];
        for (int u = 0; u < 8; u++)
            sum += part[u];
        float inv = 1.0f / sum; /* sum >= 1: the max contributes exp(0) */
        for (int j = 0; j < n_valid; j++)
            row[j] *= inv;
    }
    for (int j = n_valid; j < n; j++)
        row[j] = 0.0f;
}

/* ---- buffers ------------------------------------------------------------ */

void attn_result_init(AttnResult *r)
{
    memset(r, 0, sizeof *r);
}

void attn_result_destroy(AttnResult *r)
{
    if (!r)
        return;
    free(r->Q); free(r->K); free(r->V);
    free(r->scores); free(r->logits); free(r->weights); free(r->avg);
    free(r->Z); free(r->concat); free(r->output); free(r->Kt);
    attn_result_init(r);
}

static int grow(float **buf, size_t n)
{
    float *p = realloc(*buf, (n ? n : 1) * sizeof(float));
    if (!p)
        return -1;
    *buf = p;
    return 0;
}

/* Grow the buffers to hold h heads of Tq×Tk and Tq/Tk rows of d floats. */
static int reserve(AttnResult *r, int Tq, int Tk, int d, int h)
{
    size_t qk = (size_t)Tq * Tk, hqk = qk * h, q = (size_t)Tq * d,
           k = (size_t)Tk * d;
    if (hqk > r->cap_qk) {
        if (grow(&r->scores, hqk) || grow(&r->logits, hqk) || grow(&r->weights, hqk))
            return -ATTN_E_NOMEM;
        r->cap_qk = hqk;
    }
    if (qk > r->cap_avg) {
        if (grow(&r->avg, qk))
            return -ATTN_E_NOMEM;
        r->cap_avg = qk;
    }
    if (q > r->cap_q) {
        if (grow(&r->Q, q) || grow(&r->Z, q) || grow(&r->concat, q) ||
            grow(&r->output, q))
            return -ATTN_E_NOMEM;
        r->cap_q = q;
    }
    if (k > r->cap_k) {
        if (grow(&r->K, k) || grow(&r->V, k) || grow(&r->Kt, k))
            return -ATTN_E_NOMEM;
        r->cap_k = k;
    }
    return 0;
}

/* ---- the forward pass --------------------------------------------------- */

#define BLK 16 /* register block: 16 floats = four SSE or two AVX registers */

/* One head, one block of query rows [i0, i1): passes 2-4. */
static void head_rows(AttnResult *r, int head, float mult, int i0, int i1)
{
    int Tq = r->Tq, Tk = r->Tk, dk = r->dk;
    const float *Q = r->Q + (size_t)head * Tq * dk;
    const float *V = r->V + (size_t)head * Tk * dk;
    const float *Kt = r->Kt + (size_t)head * Tk * dk;
    size_t base = (size_t)head * Tq * Tk;
    for (int i = i0; i < i1; i++) {
        float *sc = r->scores + base + (size_t)i * Tk;
        float *lg = r->logits + base + (size_t)i * Tk;
        float *w = r->weights + base + (size_t)i * Tk;
        const float *q = Q + (size_t)i * dk;
        /* pass 2: scores[i][j] = q_i · k_j, over the transposed keys, in
         * blocks of BLK keys whose sums stay in registers */
        int j0 = 0;
        for (; j0 + BLK <= Tk; j0 += BLK) {
            float acc[BLK] = {0};
            for (int c = 0; c < dk; c++) {
                float qc = q[c];
                const float *kc = Kt + (size_t)c * Tk + j0;
                for (int u = 0; u < BLK; u++)
                    acc[u] += qc * kc[u];
            }
            memcpy(sc + j0, acc, sizeof acc);
        }
        for (int j = j0; j < Tk; j++) {
            float s = 0.0f;
            for (int c = 0; c < dk; c++)
                s += q[c] * Kt[(size_t)c * Tk + j];
            sc[j] = s;
        }
        /* pass 3: logits = scores · s / τ, softmax over the unmasked keys */
        for (int j = 0; j < Tk; j++)
            lg[j] = w[j] = sc[j] * mult;
        attn_softmax_row(w, Tk, r->causal ? i + 1 : Tk);
        /* pass 4: z_i = Σ_j α_ij v_j, BLK dimensions at a time in registers */
        float *z = r->Z + (size_t)head * Tq * dk + (size_t)i * dk;
        int nv = r->causal && i + 1 < Tk ? i + 1 : Tk; /* masked keys weigh 0 */
        int c0 = 0;
        for (; c0 + BLK <= dk; c0 += BLK) {
            float acc[BLK] = {0};
            for (int j = 0; j < nv; j++) {
                float a = w[j];
                const float *v = V + (size_t)j * dk + c0;
                for (int u = 0; u < BLK; u++)
                    acc[u] += a * v[u];
            }
            memcpy(z + c0, acc, sizeof acc);
        }
        for (int c = c0; c < dk; c++) {
            float s = 0.0f;
            for (int j = 0; j < nv; j++)
                s += w[j] * V[(size_t)j * dk + c];
            z[c] = s;
        }
    }
}

typedef struct {
    AttnResult *r;
    float mult;
    int i0, i1;
} RowJob;

static void *row_job(void *arg)
{
    RowJob *j = arg;
    for (int k = 0; k < j->r->h; k++)
        head_rows(j->r, k, j->mult, j->i0, j->i1);
    return NULL;
}

#define ATTN_THREAD_MIN_WORK (1L << 18) /* h·Tq·Tk·dk below this: one thread */

static void run_heads(AttnResult *r, float mult)
{
    long work = (long)r->h * r->Tq * r->Tk * r->dk;
    int half = r->Tq / 2;
    RowJob a = {r, mult, 0, half}, b = {r, mult, half, r->Tq};
    pthread_t t;
    if (work >= ATTN_THREAD_MIN_WORK && half > 0 &&
        pthread_create(&t, NULL, row_job, &b) == 0) {
        row_job(&a);
        pthread_join(t, NULL);
        return;
    }
    a.i1 = r->Tq;
    row_job(&a);
}

int attn_forward(AttnResult *r, const float *Xq, int Tq, const float *Xkv,
                 int Tk, int d, const AttnParams *p, const AttnConfig *cfg)
{
    int learned = cfg->mode == ATTN_MODE_LEARNED;
    if (Tq < 0 || Tk < 0 || d < 1)
        return -ATTN_E_SHAPE;
    if (learned && (!p || p->d != d || p->h < 1 || d % p->h != 0))
        return -ATTN_E_SHAPE;
    int h = learned ? p->h : 1;
    if (!(cfg->temperature > 0.0f) || !isfinite(cfg->temperature))
        return -ATTN_E_RANGE;
    int dk = d / h;
    int rc = reserve(r, Tq, Tk, d, h);
    if (rc < 0)
        return rc;
    r->Tq = Tq;
    r->Tk = Tk;
    r->d = d;
    r->h = h;
    r->dk = dk;
    r->causal = cfg->causal;
    float mult = (cfg->scale ? 1.0f / sqrtf((float)dk) : 1.0f) /
                 cfg->temperature;

    /* pass 1: projections Q = Xq·Wq, K = Xkv·Wk, V = Xkv·Wv per head;
     * in basic mode Q = K = V = X */
    size_t slice = (size_t)d * dk;
    for (int k = 0; k < h; k++) {
        float *Q = r->Q + (size_t)k * Tq * dk;
        float *K = r->K + (size_t)k * Tk * dk;
        float *V = r->V + (size_t)k * Tk * dk;
        if (learned) {
            matmul(Q, Xq, d, p->Wq + k * slice, Tq, d, dk);
            matmul(K, Xkv, d, p->Wk + k * slice, Tk, d, dk);
            matmul(V, Xkv, d, p->Wv + k * slice, Tk, d, dk);
        } else {
            memcpy(Q, Xq, (size_t)Tq * d * sizeof(float));
            memcpy(K, Xkv, (size_t)Tk * d * sizeof(float));
            memcpy(V, Xkv, (size_t)Tk * d * sizeof(float));
        }
        float *Kt = r->Kt + (size_t)k * Tk * dk;
        for (int j = 0; j < Tk; j++)
            for (int c = 0; c < dk; c++)
                Kt[(size_t)c * Tk + j] = K[(size_t)j * dk + c];
    }

    /* passes 2-4 per head: scores, softmax, context vectors; large inputs
     * split the query rows between two threads */
    run_heads(r, mult);

    /* pass 5: concatenate the heads' Z, then output = concat·Wo */
    for (int i = 0; i < Tq; i++)
        for (int k = 0; k < h; k++)
            memcpy(r->concat + (size_t)i * d + k * dk,
                   r->Z + (size_t)k * Tq * dk + (size_t)i * dk,
                   (size_t)dk * sizeof(float));
    if (learned)
        matmul(r->output, r->concat, d, p->Wo, Tq, d, d);
    else
        memcpy(r->output, r->concat, (size_t)Tq * d * sizeof(float));

    /* the heads' average, for the "all heads" view */
    size_t qk = (size_t)Tq * Tk;
    float inv_h = 1.0f / (float)h;
    memcpy(r->avg, r->weights, qk * sizeof(float));
    for (int k = 1; k < h; k++) {
        const float *w = r->weights + (size_t)k * qk;
        for (size_t e = 0; e < qk; e++)
            r->avg[e] += w[e];
    }
    for (size_t e = 0; e < qk; e++)
        r->avg[e] *= inv_h;
    return 0;
}
