/* The forward pass's kernel sets (attn_kernels.c), internal to the core:
 * one per instruction set, each giving the same floats. */
#ifndef ATTN_KERNELS_H
#define ATTN_KERNELS_H

#define RB 4 /* query rows per block: they share every key and value load */

typedef struct Kernels {
    const char *name;
    void (*matmul)(float *restrict, const float *restrict, int, const float *restrict, int,
                   int, int);
    void (*softmax_row)(float *, int, int);
    void (*scores_rows)(const float *, int, int, const float *, int, int, int, float, float *,
                        float *, float *, int);
    void (*context_rows)(const float *, int, const int *, int, const float *, int, float *);
} Kernels;

/* The set in use: the best this CPU runs (see attn_kernels, attn.h). */
const Kernels *attn_kernel_set(void);

#endif
