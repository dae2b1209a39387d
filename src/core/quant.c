/* ggml's weight types (quant.h): their names and sizes, blocks to floats and
 * the product with a matrix of blocks, through the kernel set of
 * quant_kernels.c. No file is read here: the GGUF reader hands the bytes. */
#include "attnviz/quant.h"
#include "quant_kernels.h"

/* ggml.h's enum ggml_type (v0.5.0), as GGUF tools name them; the ids ggml
 * removed (Q4_2, Q4_3, the repacked Q4_0_4_4 … IQ4_NL_8_8) have no name */
static const char *const NAMES[] = {
    [0] = "F32",      [1] = "F16",      [2] = "Q4_0",    [3] = "Q4_1",     [6] = "Q5_0",
    [7] = "Q5_1",     [8] = "Q8_0",     [9] = "Q8_1",    [10] = "Q2_K",    [11] = "Q3_K",
    [12] = "Q4_K",    [13] = "Q5_K",    [14] = "Q6_K",   [15] = "Q8_K",    [16] = "IQ2_XXS",
    [17] = "IQ2_XS",  [18] = "IQ3_XXS", [19] = "IQ1_S",  [20] = "IQ4_NL",  [21] = "IQ3_S",
    [22] = "IQ2_S",   [23] = "IQ4_XS",  [24] = "I8",     [25] = "I16",     [26] = "I32",
    [27] = "I64",     [28] = "F64",     [29] = "IQ1_M",  [30] = "BF16",    [34] = "TQ1_0",
    [35] = "TQ2_0",   [39] = "MXFP4",   [40] = "NVFP4",  [41] = "Q1_0",    [42] = "Q2_0",
};

/* numbers and bytes per block of the types read here (ggml-common.h's
 * block structs) */
static const struct {
    int block, bytes;
} SIZES[QUANT_NTYPES] = {
    [QT_F32] = {1, 4},      [QT_F16] = {1, 2},      [QT_Q4_0] = {32, 18},  [QT_Q4_1] = {32, 20},
    [QT_Q5_0] = {32, 22},   [QT_Q5_1] = {32, 24},   [QT_Q8_0] = {32, 34},  [QT_Q2_K] = {256, 84},
    [QT_Q3_K] = {256, 110}, [QT_Q4_K] = {256, 144}, [QT_Q5_K] = {256, 176}, [QT_Q6_K] = {256, 210},
    [QT_BF16] = {1, 2},
};

const char *qtype_name(int type)
{
    if (type < 0 || type >= (int)(sizeof NAMES / sizeof NAMES[0]))
        return NULL;
    return NAMES[type];
}

int qtype_supported(int type)
{
    return type >= 0 && type < QUANT_NTYPES && SIZES[type].block > 0;
}

int qtype_block(int type)
{
    return qtype_supported(type) ? SIZES[type].block : 0;
}

size_t qtype_block_bytes(int type)
{
    return qtype_supported(type) ? (size_t)SIZES[type].bytes : 0;
}

size_t qtype_row_bytes(int type, long long n)
{
    if (!qtype_supported(type) || n <= 0 || n % SIZES[type].block)
        return 0;
    return (size_t)(n / SIZES[type].block) * (size_t)SIZES[type].bytes;
}

void qtype_to_f32(int type, const void *src, float *dst, long long n)
{
    if (!qtype_supported(type) || n <= 0 || n % SIZES[type].block)
        return;
    quant_kernel_set()->deq[type](src, dst, n / SIZES[type].block);
}

void quant_row(float *dst, int t, const void *data, size_t row_bytes, const int32_t *perm, int r,
               int k)
{
    const uint8_t *row = (const uint8_t *)data + (size_t)(perm ? perm[r] : r) * row_bytes;
    qtype_to_f32(t, row, dst, k);
}

void quant_linear_cols(float *out, int ldo, const float *A, int lda, int t, const void *data,
                       size_t row_bytes, const int32_t *perm, const float *bias, int n, int k,
                       int j0, int j1)
{
    if (!qtype_supported(t) || n <= 0 || k <= 0 || k % SIZES[t].block || j1 <= j0)
        return; /* nothing sensible to compute: the caller checked the shapes */
    const QuantKernels *ks = quant_kernel_set();
    ks->linear(out, ldo, A, lda, ks->deq[t], ks->dot[t], SIZES[t].block, (size_t)SIZES[t].bytes,
               data, row_bytes, perm, bias, n, k, j0, j1);
}
