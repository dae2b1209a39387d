/* Scaled dot-product self-attention as the lecture notes teach it, with the
 * row-vector convention: X is T×d, Q = X·Wq with Wq d×dk.
 *
 *   scores  = Q·Kᵀ                       (raw dot products, Tq×Tk per head)
 *   logits  = scores · s / τ              s = 1/√dk when scaling is on, else 1
 *   weights = softmax over each row       (masked entries exactly 0)
 *   Z_h     = weights · V_h               (context vectors, Tq×dk)
 *   output  = concat(Z_1..Z_h) · Wo       (learned mode), Z (basic mode)
 *
 * Queries and keys may come from different sequences (Tq need not equal Tk),
 * and every intermediate is kept so a view can show it and a backward pass
 * can use it. All matrices are flat row-major float arrays; shapes are in the
 * comments. The result struct owns its buffers and grows them only when the
 * size grows, so recomputing on every keystroke does not allocate. */
#ifndef ATTNVIZ_ATTN_H
#define ATTNVIZ_ATTN_H

#include <stdint.h>

#include "attnviz/attnmap.h"
#include "attnviz/error.h"

#define ATTN_MAX_HEADS 64

typedef enum AttnMode { ATTN_MODE_BASIC = 0, ATTN_MODE_LEARNED = 1 } AttnMode;

/* How a query and a key make a score (the seeds: the dot product, its
 * cosine, and Bahdanau's additive attention):
 *   dot       score = q·k                      logit = score · s / τ
 *   cosine    score = q·k / (‖q‖ ‖k‖)          logit = score / τ
 *             (0 when either norm is 0)
 *   additive  score = vᵀ tanh(q + k)           logit = score / τ
 *             (v: dk numbers per head, AttnParams.v; d in basic mode, .vb)
 * The √dk switch (s) applies to dot only. */
typedef enum AttnScore {
    ATTN_SCORE_DOT = 0, ATTN_SCORE_COSINE = 1, ATTN_SCORE_ADDITIVE = 2, ATTN_SCORE_COUNT
} AttnScore;

/* "dot", "cosine", "additive"; attn_score_parse gives -1 for another name. */
const char *attn_score_name(int score);
int attn_score_parse(const char *name);
/* The formula a figure's title shows, e.g. "softmax(q·k / √dk / τ)",
 * "softmax(cos(q, k) / τ)", "softmax(vᵀ tanh(q + k) / τ)" (UTF-8), or in
 * ASCII with ascii = 1 ("softmax(q.k / sqrt(dk) / tau)"). */
const char *attn_score_formula(int score, int scale, int ascii);

typedef struct AttnConfig {
    AttnMode mode;
    int heads;          /* h in learned mode (must divide d); basic uses 1 */
    int scale;          /* 1: divide by √dk */
    int causal;         /* 1: key j > query i is masked */
    int posenc;         /* 1: X = E + sinusoidal PE */
    float temperature;  /* τ > 0 */
    int score;          /* AttnScore */
} AttnConfig;

/* Defaults: learned, 1 head, scaled, no mask, no posenc, τ = 1, dot. */
AttnConfig attn_config_default(void);

/* The learnable weights of one multi-head attention layer. */
typedef struct AttnParams {
    int d, h, dk;
    float *Wq, *Wk, *Wv; /* h × d × dk each, head-major */
    float *Wo;           /* d × d */
    float *v;            /* h × dk: additive attention's vector, per head */
    float *vb;           /* d: additive attention's vector in basic mode */
} AttnParams;

/* Allocate for d and h (h must divide d) and set the identity slices
 * (and v, vb to their defaults). */
int attn_params_create(AttnParams *p, int d, int h);
void attn_params_destroy(AttnParams *p);
int attn_params_copy(AttnParams *dst, const AttnParams *src);
/* 1 when a and b have the same shape and the same bits in every weight. */
int attn_params_equal(const AttnParams *a, const AttnParams *b);
/* Head k's Wq = Wk = Wv = columns k·dk … (k+1)·dk−1 of I_d; Wo = I_d;
 * every entry of v 1/√dk and of vb 1/√d (attn_params_default_v). */
void attn_params_identity(AttnParams *p);
/* v = 1/√dk, vb = 1/√d: the additive score's default vectors. */
void attn_params_default_v(AttnParams *p);
/* Xavier-uniform from seed: Wq, Wk, Wv of head 0, head 1, ..., then Wo,
 * then v (head 0, 1, …, each a dk × 1 matrix) and vb (d × 1): the draws
 * of the weights before v are those of a seed before v existed. */
void attn_params_xavier(AttnParams *p, uint64_t seed);
/* One matrix by index: 0 Wq, 1 Wk, 2 Wv of head, 3 Wo (head ignored),
 * 4 v of head (1 × dk), 5 vb (1 × d, head ignored). */
float *attn_params_matrix(const AttnParams *p, int which, int head,
                          int *rows, int *cols);

typedef struct AttnResult {
    int Tq, Tk, d, h, dk;
    int causal;
    float *Q;        /* h × Tq × dk */
    float *K;        /* h × Tk × dk */
    float *V;        /* h × Tk × dk */
    float *scores;   /* h × Tq × Tk, cfg->score's scores (raw Q·Kᵀ for dot) */
    float *logits;   /* h × Tq × Tk, scores · attn_logit_scale (also where
                        masked); NULL when skip_logits was set for the
                        last forward */
    int skip_logits; /* set by the caller: do not keep the logits (they
                        are scores · attn_logit_scale, bit for bit) */
    float *weights;  /* h × Tq × Tk, softmax; masked = 0 */
    float *avg;      /* Tq × Tk, mean of the heads' weights (attn_heads_mean);
                        NULL when skip_avg was set for the last forward */
    int skip_avg;    /* set by the caller: do not keep the heads' mean */
    float *avg_part; /* Tq × Tk scratch: with two threads splitting the
                        heads, one half's sum for the other's rows */
    float *Z;        /* h × Tq × dk */
    float *concat;   /* Tq × d, heads' Z side by side */
    float *output;   /* Tq × d */
    float *Kt;       /* each head's keys transposed: dk rows of Tk, row
                        stride attn_kt_stride(Tk) (padded: rows 4 KiB apart
                        would share one set of the L1 cache) */
    size_t cap_qk, cap_lg, cap_avg, cap_part, cap_q, cap_k, cap_kt; /* capacities in floats */
} AttnResult;

/* The heads' mean of r's weights into out (Tq × Tk): heads [0, h/2) summed
 * in order, heads [h/2, h) likewise, the two sums added, then divided by
 * h; the floats the forward pass keeps in avg. */
void attn_heads_mean(const AttnResult *r, float *out);

/* The row stride of AttnResult.Kt for Tk keys. */
int attn_kt_stride(int Tk);

void attn_result_init(AttnResult *r);
void attn_result_destroy(AttnResult *r);

/* The factor from scores to logits: s/τ with s = 1/√dk when scaling is on
 * and the score is dot, else 1/τ. logits = scores · this, one float
 * multiplication, as the forward pass does. */
float attn_logit_scale(const AttnConfig *cfg, int dk);

/* The forward pass. Xq is Tq×d (queries), Xkv is Tk×d (keys and values; pass
 * Xq again for self-attention). In basic mode only p->vb is read (the
 * additive score), and p may be NULL (then vb is 1/√d). */
int attn_forward(AttnResult *r, const float *Xq, int Tq, const float *Xkv,
                 int Tk, int d, const AttnParams *p, const AttnConfig *cfg);

/* The forward pass again after a change confined to the query rows
 * [q_lo, q_hi) of Xq and the key/value rows [k_lo, k_hi) of Xkv: r must
 * hold the last forward of the same shapes, p and cfg, whose other rows were
 * these. Recomputes only what depends on the changed rows (their
 * projections, their scores, the softmax of rows that see a changed key,
 * the context vectors and output rows that changed) and gives the same
 * floats as attn_forward, bit for bit (a NaN score, from infinite inputs,
 * may differ in its sign bit). Falls back to the whole pass when
 * the shapes, the mask or skip_logits differ from the last forward. */
int attn_forward_update(AttnResult *r, const float *Xq, int Tq, const float *Xkv, int Tk,
                        int d, const AttnParams *p, const AttnConfig *cfg, int q_lo,
                        int q_hi, int k_lo, int k_hi);

/* The forward pass again after the inputs grew or shrank (a word typed or
 * deleted): the first keep_q rows of Xq and keep_k rows of Xkv are the last
 * forward's first rows, the rest is new. r's arrays are moved to the new
 * shapes in place and only what depends on the new rows is recomputed; the
 * same floats as attn_forward (NaN signs aside). Falls back to the whole
 * pass when Tq grows while Tk shrinks (or the reverse), or as
 * attn_forward_update does. */
int attn_forward_resize(AttnResult *r, const float *Xq, int Tq, const float *Xkv, int Tk,
                        int d, const AttnParams *p, const AttnConfig *cfg, int keep_q, int keep_k);

static inline int attn_masked(const AttnResult *r, int i, int j)
{
    return j >= attn_causal_row_len(r->causal, i, r->Tk);
}
/* Head head's Tq×Tk part of an h × Tq × Tk array of r's shape (scores,
 * logits, weights): read-only, or (attn_head_matrix_mut) to write. */
static inline const float *attn_head_matrix(const float *m, const AttnResult *r, int head)
{
    return m + (size_t)head * r->Tq * r->Tk;
}
static inline float *attn_head_matrix_mut(float *m, const AttnResult *r, int head)
{
    return m + (size_t)head * r->Tq * r->Tk;
}

/* Add the sinusoidal positional encoding of "Attention is all you need" to
 * X (T×d), positions from 0: PE[p][2i] = sin(p/10000^(2i/d)),
 * PE[p][2i+1] = cos(p/10000^(2i/d)). */
void attn_posenc_add(float *X, int T, int d);
/* PE value for one position and dimension. */
float attn_posenc(int pos, int k, int d);

/* The instruction set the kernels run with: "avx512" where the CPU has
 * AVX-512F, else "avx2" where it has AVX2, else "base" (SSE2, NEON or plain
 * C). All give the same floats. "avx2-w16" (the AVX-512 set's 16-lane code
 * built for AVX2) runs only when asked for, so that tests check that code
 * on CPUs without AVX-512. The environment variable ATTNVIZ_KERNELS=name
 * picks a set; attn_use_kernels switches (for tests), -1 if the set cannot
 * run here. */
const char *attn_kernels(void);
int attn_use_kernels(const char *name);

/* One query-key score of cfg's function over n numbers (q, k: the
 * projected query and key; v: the additive vector, ignored otherwise, NULL
 * for the default 1/√n in every entry), the same float the forward pass
 * stores in scores (cosine is computed in double and rounded once; it is
 * clamped to [−1, 1] and exactly 0 when q or k is all zeros; NaN or
 * infinite inputs may give NaN, which the softmax treats as −∞). Partial
 * updates (attn_forward_update, _resize) hold for every function: a score
 * depends only on its own query and key. The step view's numbers:
 * attn_additive_term(q[c], k[c], v[c]) = v[c] · tanh(q[c] + k[c]) is term c
 * of the additive sum, the sum taken in the order c = 0, 1, … as here. */
float attn_score_one(int score, const float *q, const float *k, const float *v, int n);
float attn_additive_term(float q, float k, float v);

/* out (n×m) = A (n×k, row stride lda) · B (k×m) with the kernels the
 * forward pass uses (each output summed over k in order). */
void attn_matmul(float *out, const float *A, int lda, const float *B, int n, int k, int m);

/* Row softmax in place, numerically stable (subtract the max). Entries at
 * j >= n_valid (the causal mask) become exactly 0; n_valid = 0 gives all 0. */
void attn_softmax_row(float *row, int n, int n_valid);

#endif
