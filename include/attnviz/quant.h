/* ggml's weight types (what a GGUF file's tensors hold), in the core: no
 * file is read here, the caller hands the bytes (a mapping).
 *
 *   qtype_name, qtype_supported, qtype_block, qtype_block_bytes,
 *   qtype_row_bytes  — what a type id is and how many bytes its numbers take
 *   qtype_to_f32     — blocks to floats, bit for bit as ggml's to_float
 *                      (ggml-quants.c, v0.5.0 of node-llama-cpp's llama.cpp)
 *   quant_linear_cols — out = A · Wᵀ + bias with W's rows in their blocks, each
 *                      block dequantized as qtype_to_f32 gives it, read in
 *                      place
 *   quant_row        — one row of such a matrix as floats (an embedding)
 *
 * Conventions: a row of k numbers is k / qtype_block(t) blocks one after
 * another; the block layouts are ggml-common.h's, little-endian. The products
 * use the kernel set lm_kernels() names (runtime.h): avx2 and avx512 give the
 * same floats, base others. */
#ifndef ATTNVIZ_QUANT_H
#define ATTNVIZ_QUANT_H

#include <stddef.h>
#include <stdint.h>

/* ggml's type numbers (ggml.h's enum ggml_type) of the types read here */
typedef enum QType {
    QT_F32 = 0, QT_F16 = 1, QT_Q4_0 = 2, QT_Q4_1 = 3, QT_Q5_0 = 6, QT_Q5_1 = 7, QT_Q8_0 = 8,
    QT_Q2_K = 10, QT_Q3_K = 11, QT_Q4_K = 12, QT_Q5_K = 13, QT_Q6_K = 14, QT_BF16 = 30
} QType;

/* ggml's name for every ggml type id ("Q4_K", "IQ2_XXS", "TQ1_0", ...; upper
 * case as GGUF tools print them); NULL for an id ggml does not have (never
 * had, or removed: 4, 5, 31-33, 36-38). */
const char *qtype_name(int type);
/* 1 for the 13 types of QType, else 0 */
int qtype_supported(int type);
/* numbers per block (1, 32 or 256); 0 when not supported */
int qtype_block(int type);
/* bytes per block; 0 when not supported */
size_t qtype_block_bytes(int type);
/* bytes of n numbers; 0 when unsupported, n < 0 or n not a whole number of
 * blocks (n = 0: 0 too) */
size_t qtype_row_bytes(int type, long long n);

/* n numbers (a whole number of blocks) of type from src into dst as ggml's own
 * to_float gives them, bit for bit (F16's NaN quieted as ggml does, BF16's and
 * F32's bits kept). src needs no alignment. An unsupported type or an n that
 * is not a whole number of blocks writes nothing. */
void qtype_to_f32(int type, const void *src, float *dst, long long n);

/* The product with a matrix stored as GGUF stores it: rows of k numbers of
 * type t, row r at data + (perm ? perm[r] : r) · row_bytes.
 * out[i·ldo + j] = bias[j] (NULL: 0) + Σ_c A[i·lda + c] · W_j[c] for rows i < n
 * and the columns j in [j0, j1), W_j row j dequantized as qtype_to_f32 gives
 * it. Each output's sum in one fixed order that depends only on k: chunks of
 * QUANT_KC numbers in order, each chunk's products summed in 16 lanes (number
 * c into lane c mod 16, in order, from 0: a fused multiply-add in avx2 and
 * avx512, a product and a sum rounded apart in base), the lanes added in
 * halves (lane l + 8 into lane l, then + 4, + 2, + 1), any last numbers short
 * of 16 (float types only) added one by one; the chunks' sums added in order
 * (the first as it is), the bias last. So a result never depends on n, j0,
 * j1, the thread or how the columns were split between threads. k a whole
 * number of blocks of t (else nothing is written); out must not overlap A.
 * A's rows need no alignment; neither do the blocks. */
void quant_linear_cols(float *out, int ldo, const float *A, int lda, int t, const void *data,
                       size_t row_bytes, const int32_t *perm, const float *bias, int n, int k,
                       int j0, int j1);

/* Row r of such a matrix as floats (an embedding lookup): k numbers into dst. */
void quant_row(float *dst, int t, const void *data, size_t row_bytes, const int32_t *perm, int r,
               int k);

/* numbers per chunk of quant_linear_cols' sums (a multiple of 256) */
#define QUANT_KC 1024

#endif
