/* Teach mode's maths (issue 15): a target pattern for one head's attention
 * (or for the heads' mean), the cross-entropy loss of the weights against
 * it, its gradients to Wq, Wk, the inputs and additive attention's v, and
 * the optimisers SGD and Adam as PyTorch defines them. Plain C on plain
 * arrays: the Model layer (teach_model.h) decides what the arrays are.
 *
 * The forward, for head h (row-vector convention, as attn.h):
 *   Q = Xq·Wq_h, K = Xk·Wk_h          (basic mode: Q = Xq, K = Xk)
 *   s_ij = score(q_i, k_j)             (dot, cosine or additive, attn.h)
 *   l_ij = s_ij · c                    (c = attn_logit_scale)
 *   log α_ij = l_ij − LSE_j l_ij       (over the unmasked keys)
 * and for the heads' mean ᾱ = (1/H) Σ_h α^h, log ᾱ by a log-sum-exp over
 * the heads. The loss is the mean over the rows with a target of
 *   −Σ_j t_ij log α_ij                 (never the log of a rounded 0). */
#ifndef ATTNVIZ_TEACH_H
#define ATTNVIZ_TEACH_H

#include <stddef.h>

#include "attnviz/attn.h"
#include "attnviz/error.h"

/* Position presets: each query to itself, to the token before (the first
 * to itself), to the token after (the last to itself), to the first token.
 * With two sentences they align by position, clamped to the last key. */
typedef enum TeachPreset {
    TEACH_SELF = 0, TEACH_PREVIOUS, TEACH_NEXT, TEACH_FIRST, TEACH_PRESET_COUNT
} TeachPreset;

const char *teach_preset_name(int preset);
/* The preset's number, or -1 for another name. */
int teach_preset_parse(const char *name);
/* Write preset's one-hot Tq×Tk target into t. */
void teach_preset(int preset, int Tq, int Tk, float *t);

/* Make a painted or read target usable, in place: every value must be
 * finite and >= 0 (else -ATTN_E_RANGE, with the entry in *bad_i, *bad_j);
 * mass on a masked entry (causal: key j > query i) is dropped, counted in
 * *dropped (entries); each row is scaled to sum to 1, and a row of zeros
 * stays zeros (no target for that query). Returns the rows with a target
 * (0: nothing to learn). */
int teach_target_prepare(float *t, int Tq, int Tk, int causal, int *dropped, int *bad_i,
                         int *bad_j);

/* What one teaching step changes (bits, combinable). */
enum { TEACH_WQ = 1, TEACH_WK = 2, TEACH_X = 4, TEACH_V = 8 };

typedef struct TeachInput {
    int Tq, Tk, d;
    const float *Xq, *Xk;    /* Tq×d and Tk×d: the attention's inputs
                                (self-attention: the same pointer) */
    const AttnParams *p;     /* learned weights (mode learned); v/vb */
    AttnConfig cfg;          /* mode, scale, τ, score; causal as applied */
    int head;                /* 0 … h−1, or -1: the heads' mean */
    const float *target;     /* Tq×Tk, prepared (teach_target_prepare) */
    int want;                /* TEACH_* bits: the gradients to compute
                                (TEACH_X: dXq, dXk); 0: all of them */
} TeachInput;

/* Gradients of the loss, shaped as what they differentiate. */
typedef struct TeachGrad {
    float *dWq, *dWk;        /* h × d × dk (head-major, as AttnParams) */
    float *dv;               /* h × dk; learned mode, additive score */
    float *dvb;              /* d; basic mode, additive score */
    float *dXq;              /* Tq × d; for self-attention the whole
                                gradient to X (as queries and as keys) */
    float *dXk;              /* Tk × d; cross-attention only */
    /* scratch */
    float *Q, *K, *dQ, *dK, *S, *G, *Xtq, *Xtk;
    size_t cap_q, cap_k, cap_s, cap_w, cap_h, cap_xq, cap_xk, cap_xt;
} TeachGrad;

void teach_grad_init(TeachGrad *g);
void teach_grad_free(TeachGrad *g);

/* The loss of in (into *loss) and, with g non-NULL, the gradients in->want
 * asks for (zero where in does not depend on them: dv without the additive
 * score; those not asked for are left as they are).
 * -ATTN_E_SHAPE for shapes that do not fit, -ATTN_E_NOMEM; 0 otherwise.
 * A row with a target all on masked keys cannot happen (prepared). */
int teach_loss(const TeachInput *in, TeachGrad *g, double *loss);

/* The optimisers, as torch.optim.SGD (no momentum) and torch.optim.Adam
 * (β1 = 0.9, β2 = 0.999, ε = 1e-8, bias corrected, no weight decay):
 *   SGD   w ← w − lr·g
 *   Adam  m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²;
 *         w ← w − lr · (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε)
 * over one flat vector of parameters, which callers address by offset. */
typedef enum TeachOptKind { TEACH_OPT_SGD = 0, TEACH_OPT_ADAM = 1 } TeachOptKind;

const char *teach_opt_name(int kind);
int teach_opt_parse(const char *name);

typedef struct TeachOpt {
    int kind;
    float lr, beta1, beta2, eps;
    long t;                  /* steps begun */
    float *m, *v;            /* Adam's moments, n each */
    size_t n;
} TeachOpt;

/* Moments for n parameters, all 0, t = 0. */
int teach_opt_init(TeachOpt *o, int kind, float lr, size_t n);
void teach_opt_free(TeachOpt *o);
/* Zero the moments and t (a fresh optimiser, same settings). */
void teach_opt_reset(TeachOpt *o);
/* Count one step (t += 1); then update each slice of parameters. */
void teach_opt_begin(TeachOpt *o);
/* w[0 … n) ← its update from g, the parameters [off, off + n) of o. */
void teach_opt_update(TeachOpt *o, size_t off, float *w, const float *g, size_t n);

#endif
