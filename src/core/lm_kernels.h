/* The language models' kernel sets (lm_kernels.c), internal to the core: the same
 * kernels per instruction set; the sets with fused multiply-add give the
 * same floats, the base set others. Each kernel's comment in
 * lm_kernels.inc gives the order of its sums. */
#ifndef LM_KERNELS_H
#define LM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct LmKernels {
    const char *name;
    void (*linear)(float *out, int ldo, const float *A, int lda, const float *W,
                   const float *bias, int n, int k, int m, int j0, int j1);
    /* one of linear's two chains for a few rows, from bias (NULL: 0), W
     * read in whole rows (a keystroke) */
    void (*linear_few)(float *out, int ldo, const float *A, int lda, const float *W,
                       const float *bias, int n, int k, int m, int j0, int j1);
    void (*scores)(float *s, const float *q, const float *kt, int ldk, int dh, int n);
    /* scores of four queries (rows ldq apart) into four rows of s (lds apart) */
    void (*scores4)(float *s, int lds, const float *q, int ldq, const float *kt, int ldk, int dh,
                    int n);
    void (*context)(float *z, const float *w, const float *v, int ldv, int n, int dh);
    /* context of four rows of weights (ldw apart) over the same keys into
       four rows of z (ldz apart) */
    void (*context4)(float *z, int ldz, const float *w, int ldw, const float *v, int ldv, int n,
                     int dh);
    void (*dots)(float *out, const float *x, const float *rows, int C, int v0, int v1);
    void (*gelu_tanh)(float *h, int n);
    void (*gelu_erf)(float *h, int n);
    /* out = A · Wᵀ + bias with W bfloat16 [m, k] (the Llama family's weights
     * as stored, [out, in]); bias may be NULL */
    void (*linear_bf16)(float *out, int ldo, const float *A, int lda, const uint16_t *W,
                        const float *bias, int n, int k, int j0, int j1);
    int lin_cols; /* the linear kernel's tile width: split columns at multiples */
} LmKernels;

/* Where linear's second chain starts (see lm_kernels.inc's linear). */
static inline int lm_half(int k)
{
    return k / 2;
}

/* The set in use (see lm_kernels, runtime.h). */
const LmKernels *lm_kernel_set(void);

#endif
