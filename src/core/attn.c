/* The attention forward pass, positional encoding and weight set-up.
 * Plain C and libm; kernels never allocate (attn_forward grows the result's
 * buffers first, then runs the passes). */
#include "attnviz/attn.h"
#include "attnviz/prng.h"

#include <math.h>
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

/* Rare path for rows with NaN or infinite logits (weights near 1e38):
 * +inf entries share the weight, NaN counts as -inf, and a row with nothing
 * usable becomes uniform, so no NaN ever leaves the softmax. */
static void softmax_nonfinite(float *row, int n_valid)
{
    int n_inf = 0, n_ok = 0;
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
    /* stable softmax: subtract the row max so exp never overflows */
    float mx = -INFINITY;
    for (int j = 0; j < n_valid; j++)
        mx = row[j] > mx ? row[j] : mx;
    if (!isfinite(mx)) {
        softmax_nonfinite(row, n_valid);
    } else {
        float sum = 0.0f;
        for (int j = 0; j < n_valid; j++) {
            float e = expf(row[j] - mx); /* NaN logits give NaN here */
            row[j] = e == e ? e : 0.0f;
            sum += row[j];
        }
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
        if (grow(&r->scores, hqk) || grow(&r->logits, hqk) ||
            grow(&r->weights, hqk) || grow(&r->avg, qk))
            return -ATTN_E_NOMEM;
        r->cap_qk = hqk;
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

/* One head, one block of query rows [i0, i1): passes 2-5. */
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
        /* pass 2: scores[i][j] = q_i · k_j, over the transposed keys */
        memset(sc, 0, (size_t)Tk * sizeof(float));
        for (int c = 0; c < dk; c++) {
            float qc = q[c];
            const float *kc = Kt + (size_t)c * Tk;
            for (int j = 0; j < Tk; j++)
                sc[j] += qc * kc[j];
        }
        /* pass 3: logits = scores · s / τ, softmax over the unmasked keys */
        for (int j = 0; j < Tk; j++)
            lg[j] = w[j] = sc[j] * mult;
        attn_softmax_row(w, Tk, r->causal ? i + 1 : Tk);
        /* pass 4: z_i = Σ_j α_ij v_j */
        float *z = r->Z + (size_t)head * Tq * dk + (size_t)i * dk;
        memset(z, 0, (size_t)dk * sizeof(float));
        for (int j = 0; j < Tk; j++) {
            float a = w[j];
            if (a == 0.0f)
                continue;
            const float *v = V + (size_t)j * dk;
            for (int c = 0; c < dk; c++)
                z[c] += a * v[c];
        }
    }
}

int attn_forward(AttnResult *r, const float *Xq, int Tq, const float *Xkv,
                 int Tk, int d, const AttnParams *p, const AttnConfig *cfg)
{
    int learned = cfg->mode == ATTN_MODE_LEARNED;
    int h = learned ? p->h : 1;
    if (Tq < 0 || Tk < 0 || d < 1)
        return -ATTN_E_SHAPE;
    if (learned && (!p || p->d != d))
        return -ATTN_E_SHAPE;
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

    /* passes 2-4 per head: scores, softmax, context vectors */
    for (int k = 0; k < h; k++)
        head_rows(r, k, mult, 0, Tq);

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
    for (size_t e = 0; e < qk; e++) {
        float s = 0.0f;
        for (int k = 0; k < h; k++)
            s += r->weights[(size_t)k * qk + e];
        r->avg[e] = s * inv_h;
    }
    return 0;
}
