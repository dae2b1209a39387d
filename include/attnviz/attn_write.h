/* Writing attention files (what --export-attention writes and attnio.h's
 * readers open again unchanged): one float32 tensor L×H×Tq×Tk, C order,
 * little-endian, and the query tokens' texts. The format is the path's
 * extension (case-insensitive):
 *   .npy          numpy's format 1.0, the array alone (tokens not written);
 *   .npz          a zip (stored, as np.savez) of attention.npy and
 *                 tokens.npy, a numpy unicode array '<UN' of Tq texts
 *                 (np.load with allow_pickle=False reads it);
 *   .safetensors  the tensor "attention" (F32) with __metadata__["tokens"],
 *                 a JSON array of the Tq texts serialised into a string.
 * Tokens are UTF-8; every byte that is not part of well-formed UTF-8 is
 * written as U+FFFD (as the readers clean what they read). Written
 * atomically (io_write_atomic): on any failure nothing is left behind and
 * an old file of that name is unchanged. No SDL. */
#ifndef ATTNVIZ_ATTN_WRITE_H
#define ATTNVIZ_ATTN_WRITE_H

#include "attnviz/error.h"

/* v: L×H×Tq×Tk floats, C order (v[((l·H + h)·Tq + i)·Tk + j]), each of
 * L, H, Tq, Tk at least 1. tokens: Tq texts, or NULL (no token list; a
 * .npy never has one). A token list is one list for rows and columns, so
 * it needs Tq = Tk (otherwise -ATTN_E_SHAPE). An extension other than the
 * three: -ATTN_E_PARSE naming it and them. Returns 0 or -ATTN_E_*; err
 * names the path. */
int attn_write_attention(const char *path, const float *v, int L, int H, int Tq, int Tk,
                         const char *const *tokens, AttnErr *err);

#endif
