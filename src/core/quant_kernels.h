/* ggml's weight types' kernel sets (quant_kernels.c), internal to the core:
 * each block's dequantization and the product with a matrix of blocks, per
 * instruction set, the set picked as lm_kernels picks its own (the same
 * name: base, avx2, avx512). */
#ifndef QUANT_KERNELS_H
#define QUANT_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* nb blocks at b (nb numbers for the float types) into y, as ggml's to_float */
typedef void (*QuantDeq)(const uint8_t *b, float *y, long long nb);

/* R ≤ 4 rows × C columns of one chunk's sums (quant.h's order) straight from
 * the blocks: nblk blocks from rows[c] against A (stride lda), into s[r][c];
 * C is 1 or the set's columns for R; the same blocks of next[c] (NULL: none)
 * fetched into the cache meanwhile */
typedef void (*QuantDot)(int R, int C, float s[4][4], const float *A, int lda,
                         const uint8_t *const *rows, const uint8_t *const *next, int nblk);

enum { QUANT_NTYPES = 31 }; /* type ids below this (BF16 = 30 the last read) */

typedef struct QuantKernels {
    const char *name;
    QuantDeq deq[QUANT_NTYPES]; /* by ggml type id; NULL where not read */
    QuantDot dot[QUANT_NTYPES]; /* the same; NULL for F32, F16 and BF16 too */
    /* quant.h's quant_linear_cols with the type's deq, dot, block and block bytes */
    void (*linear)(float *out, int ldo, const float *A, int lda, QuantDeq deq, QuantDot dot,
                   int block, size_t block_bytes, const uint8_t *data, size_t row_bytes,
                   const int32_t *perm, const float *bias, int n, int k, int j0, int j1);
} QuantKernels;

/* The set whose name lm_kernels() gives (runtime.h). */
const QuantKernels *quant_kernel_set(void);

/* The float16 at p (little-endian) as float, exactly as ggml's
 * GGML_FP16_TO_FP32: zeros, subnormals, normals and infinities are exact;
 * a NaN keeps its sign and payload and is made quiet (ggml's product by
 * 2^-112 quiets it). */
static inline float quant_half(const uint8_t *p)
{
    uint32_t h = (uint32_t)p[0] | (uint32_t)p[1] << 8;
    uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu, bits;
    if (e == 0) {
        float f = (float)m * 0x1p-24f; /* exact: m < 2^10 */
        memcpy(&bits, &f, sizeof bits);
    } else if (e == 31) {
        bits = 0x7F800000u | m << 13 | (m ? 0x400000u : 0);
    } else {
        bits = (e + 112) << 23 | m << 13;
    }
    bits |= sign;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#endif
