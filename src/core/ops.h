/* The operations a transformer's layer is written with (ops.c), each once,
 * for every architecture (src/core/arch_*.c): products on the two threads
 * (the linear layers, float32 [in, out] or bfloat16 [out, in] as a file
 * stores it), norms, activations, gated MLPs, the logits' dot products and
 * their top k. Internal to the core; the kernels under them are
 * lm_kernels.h's, each float a fixed order of multiply-adds, so a result
 * never depends on which thread computed it. */
#ifndef ATTNVIZ_OPS_H
#define ATTNVIZ_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/runtime.h"

/* The pieces of a job (piece(job, k) for k < pieces) on this thread and the
 * forward's worker when the work (multiply-adds) is worth handing over. */
void ops_share(void (*piece)(const void *, int), const void *job, int pieces, double work);

/* Activations (in place). The numbering is GPT-2's config's (Gpt2Act). */
typedef enum OpsAct {
    OPS_GELU_TANH = 0, /* gelu_new, gelu_pytorch_tanh */
    OPS_GELU_ERF,      /* gelu */
    OPS_RELU,
    OPS_SILU,
    OPS_NO_ACT = -1
} OpsAct;

/* out (n × m, row stride ldo) = A (n × k, row stride lda) · W (k × m, [in,
 * out]) + bias (n_a vector of m; never NULL), then act (OPS_NO_ACT: none)
 * on the pieces: in pieces of columns, or for a keystroke's few rows W's
 * two halves on the two threads. */
void ops_linear_act(float *out, int ldo, const float *A, int lda, const float *W,
                    const float *bias, int n, int k, int m, OpsAct act);
void ops_linear(float *out, int ldo, const float *A, int lda, const float *W,
                const float *bias, int n, int k, int m);
/* out (n × m) = A (n × k) · Wᵀ + bias (NULL: none), W [m, k] as the file
 * stores it (runtime.h's RtMat). */
void ops_linear_mat(float *out, int ldo, const float *A, int lda, const RtMat *W,
                    const float *bias, int n, int k, int m);
/* Products of the same rows A (n × k) as one job (runtime.h's RtProj:
 * each its out, W or wm, bias (never NULL for a float32 W) and m; at most
 * OPS_BATCH_MAX): one handoff to the worker, the threads' ends evened
 * out over all of them; each float as ops_linear or ops_linear_mat gives
 * it alone. */
enum { OPS_BATCH_MAX = 4 };
void ops_linear_batch(const RtProj *p, int np, const float *A, int lda, int n, int k);
/* Row r of W (k numbers) as float32 into dst. */
void ops_mat_row(float *dst, const RtMat *W, int r, int k);
/* out[v] = x · rows[v] for v < V (rows of C floats: the logits) */
void ops_dots(float *out, const float *x, const float *rows, int C, int V);
/* The k best of V logits, most likely first (ties: the smaller id), with
 * their softmax probabilities (the denominator in double; NaN counts as
 * -inf; fewer than k numbers: id -1, probability 0). */
void ops_top_k_of(const float *logits, int V, int k, int *ids, float *probs);

/* act on columns j0 … j1 of n rows (row stride ld). */
void ops_activate(float *h, int ld, int n, int j0, int j1, OpsAct act);
/* gate[k] = act(gate[k]) · up[k], k < n: a gated MLP's hidden layer (SwiGLU
 * with OPS_SILU, GeGLU with a GELU). */
void ops_glu(float *gate, const float *up, size_t n, OpsAct act);

/* A norm over a row of C: LayerNorm (mean and biased variance summed in
 * double, eps inside the root, · w + b), RMSNorm (x · rsqrt(mean(x²) +
 * eps) · w, the squares summed in double), or RMSNorm times (1 + w)
 * (Gemma's). The sums: four partial ones over c mod 4, added pairwise.
 * Each output rounded to float once. */
typedef enum OpsNormKind { OPS_NORM_LAYER = 0, OPS_NORM_RMS, OPS_NORM_RMS_1P } OpsNormKind;
typedef struct OpsNorm {
    OpsNormKind kind;
    const float *w, *b; /* b: LayerNorm's bias (NULL: none) */
    float eps;
} OpsNorm;
void ops_norm(float *out, const float *x, const OpsNorm *nm, int n, int C);
/* x += add (NULL: nothing), then xn = norm(x) (nm NULL: none), rows shared
 * by the two threads: the residual stream's step. */
void ops_add_norm(float *x, const float *add, float *xn, const OpsNorm *nm, int n, int C);

#endif
