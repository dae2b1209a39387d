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
 * an old file of that name is unchanged. The numbers come from an array
 * in memory (attn_write_attention) or a map at a time from a source
 * (attn_write_attention_maps: the same bytes, without the whole tensor
 * ever in memory). No SDL. */
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

/* The map (l, h) as Tq × Tk float32, row stride Tk, into out: 0, or a
 * negative ATTN_E_* code (the write stops, nothing is left behind). */
typedef int (*AttnMapSource)(void *user, int l, int h, float *out);

/* attn_write_attention's file, byte for byte, from maps computed on
 * demand: map(user, l, h, out) is called once for each map, in order
 * (0, 0), (0, 1), …, (0, H-1), (1, 0), …, (L-1, H-1), each time with the
 * same out (Tq·Tk floats, the only map the writer holds; each map is
 * written out before the next is asked for), and only once the arguments
 * are checked and the file is being written. A source's error stops the
 * write: that code is returned (any other nonzero value counts as
 * -ATTN_E_IO), err names the path and the map, nothing is left behind.
 * map NULL: -ATTN_E_SHAPE. Otherwise as attn_write_attention. */
int attn_write_attention_maps(const char *path, AttnMapSource map, void *user, int L, int H,
                              int Tq, int Tk, const char *const *tokens, AttnErr *err);

/* An encoder-decoder's maps (issue 36): one group each, NAME.npy in the
 * .npz, L×H×Tq×Tk float32 made a map at a time by map(user, l, h, out). */
typedef struct AttnWriteGroup {
    const char *name;   /* "encoder", "decoder", "cross" */
    AttnMapSource map;
    void *user;
    int L, H, Tq, Tk;
} AttnWriteGroup;
/* A .npz of the n groups (each NAME.npy, in order) and the token lists
 * source_tokens.npy (Ts texts) and target_tokens.npy (Tt), '<UN' arrays as
 * tokens.npy is. Only .npz (another extension: -ATTN_E_PARSE naming it);
 * atomic; errors as attn_write_attention_maps'. */
int attn_write_groups_npz(const char *path, const AttnWriteGroup *groups, int n,
                          const char *const *source_tokens, int Ts,
                          const char *const *target_tokens, int Tt, AttnErr *err);

#endif
