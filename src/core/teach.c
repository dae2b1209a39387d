/* Teach mode's maths: target presets and preparation, the cross-entropy of
 * one head's (or the heads' mean) attention weights against a target, its
 * backward pass, and SGD / Adam. Each block of the backward names the line
 * of the forward it inverts (teach.h has the forward). */
#include "attnviz/teach.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- targets ------------------------------------------------------------ */

static const char *const preset_names[TEACH_PRESET_COUNT] = {"self", "previous", "next", "first"};

const char *teach_preset_name(int preset)
{
    return preset >= 0 && preset < TEACH_PRESET_COUNT ? preset_names[preset] : "?";
}

int teach_preset_parse(const char *name)
{
    for (int k = 0; k < TEACH_PRESET_COUNT; k++)
        if (name && strcmp(name, preset_names[k]) == 0)
            return k;
    return -1;
}

void teach_preset(int preset, int Tq, int Tk, float *t)
{
    memset(t, 0, (size_t)Tq * Tk * sizeof(float));
    for (int i = 0; i < Tq && Tk > 0; i++) {
        int j = preset == TEACH_PREVIOUS ? (i > 0 ? i - 1 : 0)
                : preset == TEACH_NEXT   ? i + 1 < Tq ? i + 1 : i
                : preset == TEACH_FIRST  ? 0
                                         : i;
        t[(size_t)i * Tk + (j < Tk ? j : Tk - 1)] = 1.0f;
    }
}

int teach_target_prepare(float *t, int Tq, int Tk, int causal, int *dropped, int *bad_i,
                         int *bad_j)
{
    int rows = 0;
    *dropped = 0;
    for (int i = 0; i < Tq; i++)
        for (int j = 0; j < Tk; j++) {
            float x = t[(size_t)i * Tk + j];
            if (!isfinite(x) || x < 0.0f) {
                *bad_i = i, *bad_j = j;
                return -ATTN_E_RANGE;
            }
        }
    for (int i = 0; i < Tq; i++) {
        float *row = t + (size_t)i * Tk;
        int nv = attn_causal_row_len(causal, i, Tk);
        double sum = 0.0;
        for (int j = 0; j < Tk; j++) {
            if (j >= nv && row[j] > 0.0f) {
                (*dropped)++;
                row[j] = 0.0f;
            }
            sum += row[j];
        }
        if (sum <= 0.0)
            continue;
        rows++;
        for (int j = 0; j < nv; j++)
            row[j] = (float)(row[j] / sum);
    }
    return rows;
}

/* ---- scratch -------------------------------------------------------------- */

void teach_grad_init(TeachGrad *g)
{
    memset(g, 0, sizeof *g);
}

void teach_grad_free(TeachGrad *g)
{
    free(g->dWq), free(g->dWk), free(g->dv), free(g->dvb), free(g->dXq), free(g->dXk);
    free(g->Q), free(g->K), free(g->dQ), free(g->dK), free(g->S), free(g->G);
    free(g->Xtq), free(g->Xtk);
    memset(g, 0, sizeof *g);
}

/* Grow a and b to n floats each; *cap says how many both hold. */
static int grow2(float **a, float **b, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    float *pa = realloc(*a, n * sizeof(float));
    if (pa)
        *a = pa;
    float *pb = b ? realloc(*b, n * sizeof(float)) : NULL;
    if (pb)
        *b = pb;
    if (!pa || (b && !pb))
        return -1;
    *cap = n;
    return 0;
}

/* Room for hu heads' Q, K, log α and their gradients, and with with_grad
 * for the gradients themselves. */
static int reserve(TeachGrad *g, const TeachInput *in, int h, int hu, int dk, int with_grad)
{
    size_t q = (size_t)hu * in->Tq * dk, k = (size_t)hu * in->Tk * dk;
    size_t s = (size_t)hu * in->Tq * in->Tk, w = (size_t)h * in->d * dk;
    if (grow2(&g->Q, &g->dQ, &g->cap_q, q) || grow2(&g->K, &g->dK, &g->cap_k, k) ||
        grow2(&g->S, &g->G, &g->cap_s, s))
        return -ATTN_E_NOMEM;
    size_t xt = (size_t)(in->Tq > in->Tk ? in->Tq : in->Tk) * in->d;
    if (with_grad && (grow2(&g->dWq, &g->dWk, &g->cap_w, w) ||
                      grow2(&g->Xtq, &g->Xtk, &g->cap_xt, xt) ||
                      grow2(&g->dv, &g->dvb, &g->cap_h, (size_t)in->d) ||
                      grow2(&g->dXq, NULL, &g->cap_xq, (size_t)in->Tq * in->d) ||
                      grow2(&g->dXk, NULL, &g->cap_xk, (size_t)in->Tk * in->d)))
        return -ATTN_E_NOMEM;
    return 0;
}

/* out (cols×rows) = in (rows×cols)ᵀ. */
static void transpose(float *out, const float *in, int rows, int cols)
{
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < cols; c++)
            out[(size_t)c * rows + i] = in[(size_t)i * cols + c];
}

/* ---- the loss and its gradients ----------------------------------------- */

/* e^x, 0 far below (libm's underflow path is slow, and α that small is 0). */
static inline float exp_or_0(float x)
{
    return x < -87.0f ? 0.0f : expf(x);
}

typedef struct Shape {
    int Tq, Tk, d, h, dk, hu, h0; /* hu heads from h0 are in the loss */
    int learned;
    float mult;
} Shape;

/* Forward: Q, K, s, l = s·c, log α = l − LSE(l) for each head in the loss. */
static void forward(const TeachInput *in, const Shape *sh, TeachGrad *g)
{
    int Tq = sh->Tq, Tk = sh->Tk, d = sh->d, dk = sh->dk;
    for (int u = 0; u < sh->hu; u++) {
        int hh = sh->h0 + u;
        float *Q = g->Q + (size_t)u * Tq * dk, *K = g->K + (size_t)u * Tk * dk;
        if (sh->learned) { /* Q = Xq·Wq_h, K = Xk·Wk_h */
            attn_matmul(Q, in->Xq, d, in->p->Wq + (size_t)hh * d * dk, Tq, d, dk);
            attn_matmul(K, in->Xk, d, in->p->Wk + (size_t)hh * d * dk, Tk, d, dk);
        } else { /* Q = Xq, K = Xk */
            memcpy(Q, in->Xq, (size_t)Tq * d * sizeof(float));
            memcpy(K, in->Xk, (size_t)Tk * d * sizeof(float));
        }
        const float *va = !sh->learned ? in->p->vb : in->p->v + (size_t)hh * dk;
        float *S = g->S + (size_t)u * Tq * Tk;
        float *Kt = g->dK + (size_t)u * Tk * dk; /* dK's room, free until the backward */
        if (in->cfg.score == ATTN_SCORE_DOT)
            for (int j = 0; j < Tk; j++)
                for (int c = 0; c < dk; c++)
                    Kt[(size_t)c * Tk + j] = K[(size_t)j * dk + c];
        for (int i = 0; i < Tq; i++) {
            float *row = S + (size_t)i * Tk;
            int nv = attn_causal_row_len(in->cfg.causal, i, Tk);
            if (in->cfg.score == ATTN_SCORE_DOT) { /* s_ij = q_i·k_j, a row at a time */
                const float *q = Q + (size_t)i * dk;
                memset(row, 0, (size_t)nv * sizeof(float));
                for (int c = 0; c < dk; c++)
                    for (int j = 0; j < nv; j++)
                        row[j] += q[c] * Kt[(size_t)c * Tk + j];
            } else {
                for (int j = 0; j < nv; j++)
                    row[j] = attn_score_one(in->cfg.score, Q + (size_t)i * dk,
                                            K + (size_t)j * dk, va, dk);
            }
            float mx = -INFINITY, sum = 0.0f;
            for (int j = 0; j < nv; j++) { /* l = s·c */
                row[j] *= sh->mult;
                mx = row[j] > mx ? row[j] : mx;
            }
            for (int j = 0; j < nv; j++)
                sum += exp_or_0(row[j] - mx);
            float lse = mx + logf(sum);
            for (int j = 0; j < nv; j++) /* log α = l − LSE */
                row[j] -= lse;
            for (int j = nv; j < Tk; j++)
                row[j] = -INFINITY;
        }
    }
}

/* The loss from log α, and G = ∂loss/∂l for each head in the loss. */
static double loss_and_dlogits(const TeachInput *in, const Shape *sh, TeachGrad *g)
{
    int Tq = sh->Tq, Tk = sh->Tk, hu = sh->hu;
    size_t qk = (size_t)Tq * Tk;
    int rows = 0;
    for (int i = 0; i < Tq; i++) {
        double s = 0;
        for (int j = 0; j < Tk; j++)
            s += in->target[(size_t)i * Tk + j];
        rows += s > 0;
    }
    memset(g->G, 0, (size_t)hu * qk * sizeof(float));
    if (rows == 0)
        return 0.0;
    double loss = 0.0, invR = 1.0 / rows, logH = log((double)hu);
    for (int i = 0; i < Tq; i++) {
        int nv = attn_causal_row_len(in->cfg.causal, i, Tk);
        const float *t = in->target + (size_t)i * Tk;
        for (int u = 0; u < hu; u++) {
            const float *la = g->S + u * qk + (size_t)i * Tk;
            float *G = g->G + u * qk + (size_t)i * Tk;
            double c = 0.0; /* Σ_k t_ik r_ik: the row's share of this head */
            for (int j = 0; j < nv; j++) {
                if (t[j] == 0.0f)
                    continue;
                /* log ᾱ_ij = LSE_h log α^h_ij − log H; r = α^h / (H ᾱ) */
                double mx = -INFINITY, sum = 0.0;
                for (int v = 0; v < hu; v++)
                    mx = fmax(mx, g->S[v * qk + (size_t)i * Tk + j]);
                for (int v = 0; v < hu; v++)
                    sum += exp(g->S[v * qk + (size_t)i * Tk + j] - mx);
                double lse = mx + log(sum), r = exp(la[j] - lse);
                if (u == 0) /* loss −Σ t log ᾱ, once per entry */
                    loss -= t[j] * (lse - logH) * invR;
                G[j] = (float)(-t[j] * r * invR);
                c += t[j] * r;
            }
            /* ∂/∂l of the softmax: α (g − Σ α g) with α g = −t r / R */
            float cr = (float)(c * invR);
            for (int j = 0; j < nv; j++)
                G[j] += exp_or_0(la[j]) * cr;
        }
    }
    return loss;
}

/* ∂loss/∂s → ∂loss/∂q_i, ∂loss/∂k_j (and ∂/∂v) through the score function. */
static void score_backward(const TeachInput *in, const Shape *sh, TeachGrad *g, int u)
{
    int Tq = sh->Tq, Tk = sh->Tk, dk = sh->dk, hh = sh->h0 + u;
    const float *Q = g->Q + (size_t)u * Tq * dk, *K = g->K + (size_t)u * Tk * dk;
    float *dQ = g->dQ + (size_t)u * Tq * dk, *dK = g->dK + (size_t)u * Tk * dk;
    const float *G = g->G + (size_t)u * Tq * Tk;
    const float *va = !sh->learned ? in->p->vb : in->p->v + (size_t)hh * dk;
    float *dv = !sh->learned ? g->dvb : g->dv + (size_t)hh * dk;
    memset(dQ, 0, (size_t)Tq * dk * sizeof(float));
    memset(dK, 0, (size_t)Tk * dk * sizeof(float));
    for (int i = 0; i < Tq; i++) {
        const float *q = Q + (size_t)i * dk;
        float *dq = dQ + (size_t)i * dk;
        float nq = 0.0f;
        if (in->cfg.score == ATTN_SCORE_COSINE) {
            for (int c = 0; c < dk; c++)
                nq += q[c] * q[c];
            nq = sqrtf(nq);
        }
        for (int j = 0; j < Tk; j++) {
            float a = G[(size_t)i * Tk + j] * sh->mult; /* l = s·c */
            if (a == 0.0f)
                continue;
            const float *k = K + (size_t)j * dk;
            float *dkj = dK + (size_t)j * dk;
            if (in->cfg.score == ATTN_SCORE_DOT) { /* s = q·k */
                for (int c = 0; c < dk; c++) {
                    dq[c] += a * k[c];
                    dkj[c] += a * q[c];
                }
            } else if (in->cfg.score == ATTN_SCORE_COSINE) { /* s = q·k / (‖q‖‖k‖) */
                float nk = 0.0f, dot = 0.0f;
                for (int c = 0; c < dk; c++)
                    nk += k[c] * k[c], dot += q[c] * k[c];
                nk = sqrtf(nk);
                if (nq == 0.0f || nk == 0.0f)
                    continue; /* s = 0 there, whatever q and k */
                float inv = 1.0f / (nq * nk), s = dot * inv;
                for (int c = 0; c < dk; c++) {
                    dq[c] += a * (k[c] * inv - s * q[c] / (nq * nq));
                    dkj[c] += a * (q[c] * inv - s * k[c] / (nk * nk));
                }
            } else { /* s = Σ v tanh(q + k) */
                for (int c = 0; c < dk; c++) {
                    float th = tanhf(q[c] + k[c]), e = a * va[c] * (1.0f - th * th);
                    dq[c] += e;
                    dkj[c] += e;
                    dv[c] += a * th;
                }
            }
        }
    }
}

/* ∂loss/∂Q, ∂loss/∂K → Wq, Wk and the inputs (Q = Xq·Wq, K = Xk·Wk). */
static void projection_backward(const TeachInput *in, const Shape *sh, TeachGrad *g, int u)
{
    int want = in->want ? in->want : TEACH_WQ | TEACH_WK | TEACH_X | TEACH_V;
    int Tq = sh->Tq, Tk = sh->Tk, d = sh->d, dk = sh->dk, hh = sh->h0 + u;
    const float *dQ = g->dQ + (size_t)u * Tq * dk, *dK = g->dK + (size_t)u * Tk * dk;
    int self = in->Xq == in->Xk;
    float *dXk = self ? g->dXq : g->dXk;
    if (!sh->learned && (want & TEACH_X)) { /* Q = Xq, K = Xk */
        for (size_t e = 0; e < (size_t)Tq * d; e++)
            g->dXq[e] += dQ[e];
        for (size_t e = 0; e < (size_t)Tk * d; e++)
            dXk[e] += dK[e];
    }
    if (!sh->learned)
        return;
    size_t sl = (size_t)hh * d * dk;
    const float *Wq = in->p->Wq + sl, *Wk = in->p->Wk + sl;
    for (int pass = 0; pass < 2; pass++) {
        const float *dP = pass ? dK : dQ, *W = pass ? Wk : Wq;
        float *dW = (pass ? g->dWk : g->dWq) + sl, *dX = pass ? dXk : g->dXq;
        int T = pass ? Tk : Tq;
        if (want & (pass ? TEACH_WK : TEACH_WQ)) /* dW = Xᵀ·dP */
            attn_matmul(dW, pass ? g->Xtk : g->Xtq, T, dP, d, T, dk);
        for (int i = 0; (want & TEACH_X) && i < T; i++) {
            const float *dp = dP + (size_t)i * dk;
            float *dx = dX + (size_t)i * d;
            for (int r = 0; r < d; r++) { /* dX = dP·Wᵀ */
                const float *w = W + (size_t)r * dk;
                float acc = 0.0f;
                for (int c = 0; c < dk; c++)
                    acc += dp[c] * w[c];
                dx[r] += acc;
            }
        }
    }
}

int teach_loss(const TeachInput *in, TeachGrad *g, double *loss)
{
    TeachGrad scratch;
    Shape sh = {in->Tq, in->Tk, in->d, 1, in->d, 1, 0, in->cfg.mode == ATTN_MODE_LEARNED, 0.0f};
    if (sh.learned) {
        if (!in->p || in->p->d != in->d || in->p->h < 1 || in->d % in->p->h)
            return -ATTN_E_SHAPE;
        sh.h = in->p->h;
        sh.dk = in->d / sh.h;
    }
    if (in->Tq < 1 || in->Tk < 1 || in->head >= sh.h || in->head < -1)
        return -ATTN_E_SHAPE;
    sh.hu = in->head < 0 ? sh.h : 1;
    sh.h0 = in->head < 0 ? 0 : in->head;
    sh.mult = attn_logit_scale(&in->cfg, sh.dk);
    TeachGrad *w = g;
    if (!w) {
        teach_grad_init(&scratch);
        w = &scratch;
    }
    int rc = reserve(w, in, sh.h, sh.hu, sh.dk, g != NULL);
    if (rc == 0) {
        forward(in, &sh, w);
        *loss = loss_and_dlogits(in, &sh, w);
    }
    if (rc == 0 && g) {
        size_t wn = (size_t)sh.h * in->d * sh.dk;
        memset(g->dWq, 0, wn * sizeof(float));
        memset(g->dWk, 0, wn * sizeof(float));
        memset(g->dv, 0, (size_t)in->d * sizeof(float));
        memset(g->dvb, 0, (size_t)in->d * sizeof(float));
        memset(g->dXq, 0, (size_t)in->Tq * in->d * sizeof(float));
        memset(g->dXk, 0, (size_t)in->Tk * in->d * sizeof(float));
        transpose(g->Xtq, in->Xq, in->Tq, in->d);
        transpose(g->Xtk, in->Xk, in->Tk, in->d);
        for (int u = 0; u < sh.hu; u++) {
            score_backward(in, &sh, g, u);
            projection_backward(in, &sh, g, u);
        }
    }
    if (!g)
        teach_grad_free(&scratch);
    return rc;
}

/* ---- optimisers ----------------------------------------------------------- */

static const char *const opt_names[2] = {"sgd", "adam"};

const char *teach_opt_name(int kind)
{
    return kind == TEACH_OPT_SGD || kind == TEACH_OPT_ADAM ? opt_names[kind] : "?";
}

int teach_opt_parse(const char *name)
{
    for (int k = 0; k < 2; k++)
        if (name && strcmp(name, opt_names[k]) == 0)
            return k;
    return -1;
}

int teach_opt_init(TeachOpt *o, int kind, float lr, size_t n)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->lr = lr;
    o->beta1 = 0.9f;
    o->beta2 = 0.999f;
    o->eps = 1e-8f;
    o->n = n;
    o->m = calloc(n ? n : 1, sizeof(float));
    o->v = calloc(n ? n : 1, sizeof(float));
    if (!o->m || !o->v) {
        teach_opt_free(o);
        return -ATTN_E_NOMEM;
    }
    return 0;
}

void teach_opt_free(TeachOpt *o)
{
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
    o->n = 0;
}

void teach_opt_reset(TeachOpt *o)
{
    o->t = 0;
    memset(o->m, 0, o->n * sizeof(float));
    memset(o->v, 0, o->n * sizeof(float));
}

void teach_opt_begin(TeachOpt *o)
{
    o->t++;
}

void teach_opt_update(TeachOpt *o, size_t off, float *w, const float *g, size_t n)
{
    if (o->kind == TEACH_OPT_SGD) {
        for (size_t e = 0; e < n; e++)
            w[e] -= o->lr * g[e];
        return;
    }
    float *m = o->m + off, *v = o->v + off;
    /* torch: step = lr / (1 − β1^t), denominator √v / √(1 − β2^t) + ε */
    double bc1 = 1.0 - pow(o->beta1, (double)o->t), bc2 = 1.0 - pow(o->beta2, (double)o->t);
    float step = (float)(o->lr / bc1), root_bc2 = (float)sqrt(bc2);
    for (size_t e = 0; e < n; e++) {
        m[e] = o->beta1 * m[e] + (1.0f - o->beta1) * g[e];
        v[e] = o->beta2 * v[e] + (1.0f - o->beta2) * g[e] * g[e];
        w[e] -= step * m[e] / (sqrtf(v[e]) / root_bc2 + o->eps);
    }
}
