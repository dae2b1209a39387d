/* GPT-2's kernel sets (gpt2_kernels.c), internal to the core: the same
 * kernels per instruction set; the sets with fused multiply-add give the
 * same floats, the base set others. Each kernel's comment in
 * gpt2_kernels.inc gives the order of its sums. */
#ifndef GPT2_KERNELS_H
#define GPT2_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct Gpt2Kernels {
    const char *name;
    void (*linear)(float *out, int ldo, const float *A, int lda, const float *W,
                   const float *bias, int n, int k, int m, int j0, int j1);
    /* one of linear's two chains for a few rows, from bias (NULL: 0), W
     * read in whole rows (a keystroke) */
    void (*linear_few)(float *out, int ldo, const float *A, int lda, const float *W,
                       const float *bias, int n, int k, int m, int j0, int j1);
    void (*scores)(float *s, const float *q, const float *kt, int ldk, int dh, int n);
    void (*context)(float *z, const float *w, const float *v, int ldv, int n, int dh);
    void (*dots)(float *out, const float *x, const float *rows, int C, int v0, int v1);
    void (*gelu_tanh)(float *h, int n);
    /* out = A · Wᵀ + bias with W bfloat16 [m, k] (the Llama family's weights
     * as stored, [out, in]); bias may be NULL */
    void (*linear_bf16)(float *out, int ldo, const float *A, int lda, const uint16_t *W,
                        const float *bias, int n, int k, int j0, int j1);
    int lin_cols; /* the linear kernel's tile width: split columns at multiples */
} Gpt2Kernels;

/* Where linear's second chain starts (see gpt2_kernels.inc's linear). */
static inline int gpt2_half(int k)
{
    return k / 2;
}

/* The set in use (see gpt2_kernels, gpt2_forward.h). */
const Gpt2Kernels *gpt2_kernel_set(void);

/* The forward's shared loops (gpt2.c), used by the Llama family's too
 * (llama.c): the pieces of a job on this thread and the worker when the
 * work (multiply-adds) is worth it; out (n × m, row stride ldo) = A (n × k,
 * row stride lda) · W (k × m, [in, out]) + bias in pieces of columns;
 * out[v] = x · rows[v] for v < V (rows of C floats: logits); the k best of
 * V logits with their softmax probabilities (gpt2_top_k's order and ties). */
void gpt2_share(void (*piece)(const void *, int), const void *job, int pieces, double work);
void gpt2_linear(float *out, int ldo, const float *A, int lda, const float *W,
                 const float *bias, int n, int k, int m);
void gpt2_dots(float *out, const float *x, const float *rows, int C, int V);
/* out (n × m, row stride ldo) = A (n × k) · Wᵀ + bias (NULL: none), W
 * bfloat16 [m, k] as a file stores it, in pieces of columns */
void gpt2_linear_bf16(float *out, int ldo, const float *A, int lda, const uint16_t *W,
                      const float *bias, int n, int k, int m);
void gpt2_top_k_of(const float *logits, int V, int k, int *ids, float *probs);
/* A forward state's growth (gpt2.c, llama.c): the positions to allocate
 * for T (half again cap, at least T, a multiple of 16, at most max). */
int gpt2_next_cap(int cap, int T, int max);

/* A state's arrays, blocked by position capacity: the maps (n_maps of
 * cap × cap, row i holding i + 1 weights), the queries, keys and values
 * (layers blocks of cap rows of qkv_w floats), the keys transposed
 * (kt_rows rows of cap) and per-position scratch (rows[k]: cap rows of
 * width[k] floats). */
typedef struct Gpt2Grow {
    size_t n_maps, layers, qkv_w, kt_rows;
    float **maps, **qkv, **kt;
    int n_rows;
    float **rows[8];
    size_t width[8];
} Gpt2Grow;

/* The arrays of g for nc positions (nc ≥ oc, the old capacity), their
 * first keep positions kept, the new maps zeroed elsewhere; 0, or
 * -ATTN_E_NOMEM with the blocked arrays as they were. */
int gpt2_grow(const Gpt2Grow *g, size_t oc, size_t nc, size_t keep);

#endif
