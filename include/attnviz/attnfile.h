/* Attention read from a file (a real model's L layers × H heads of Tq×Tk
 * maps, issue 13), as plain data: where the numbers are, how they are
 * stored, and the tokens. The io parsers (npy, npz, safetensors, json) fill
 * an AttnFile without converting anything: the numbers stay where they are
 * (a memory mapping of the file, or one buffer for an inflated npz member
 * or a JSON file) and are converted to float only for what is shown
 * (attn_file_map: one Tq×Tk map at a time). The core functions here read no
 * file: they convert, average, roll out and drop tokens on those numbers.
 *
 * Shapes as stored: T×T, H×T×T, L×H×T×T, L×1×H×T×T (a batch of one), or the
 * same with Tq×Tk (cross-attention); every shape is seen as (L, H, Tq, Tk).
 * A file of per-layer arrays (npz/safetensors layer_0, layer_1, …) has one
 * AttnPart per layer, each (1, H, Tq, Tk); else one part of (L, H, Tq, Tk). */
#ifndef ATTNVIZ_ATTNFILE_H
#define ATTNVIZ_ATTNFILE_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/attnmap.h"
#include "attnviz/error.h"

typedef enum AttnDtype {
    ATTN_DT_F16 = 0,  /* IEEE half */
    ATTN_DT_BF16,     /* bfloat16 (safetensors) */
    ATTN_DT_F32,
    ATTN_DT_F64,
    ATTN_DT_COUNT
} AttnDtype;

#define ATTN_FILE_MAX_LAYERS 256
#define ATTN_FILE_MAX_HEADS 256
#define ATTN_FILE_MAX_TOKENS 8192

/* One stored array of shape (L, H, Tq, Tk) in C order, or in Fortran
 * (column-major) order when fortran is set: element (l, h, i, j) is at
 * index ((l·H + h)·Tq + i)·Tk + j in C order, l + L·(h + H·(i + Tq·j)) in
 * Fortran order. */
typedef struct AttnPart {
    const void *data;   /* the first element; borrowed from the AttnFile */
    AttnDtype dtype;
    int big_endian;     /* bytes stored most significant first */
    int fortran;
    int L, H, Tq, Tk;
} AttnPart;

typedef struct AttnFile {
    int n_parts;
    AttnPart parts[ATTN_FILE_MAX_LAYERS];
    int L, H, Tq, Tk;           /* the whole tensor: layers over all parts */
    char **q_tokens;            /* Tq tokens (rows), NULL when the file has none */
    char **k_tokens;            /* Tk tokens (columns); = q_tokens when self-attention */
    int cross;                  /* Tq ≠ Tk, or separate query/key token lists */
    /* what holds the numbers, released by attn_file_close (io): */
    void *map;                  /* a read-only mapping of the file, or NULL */
    size_t map_len;
    void *buf;                  /* an owned buffer (inflated member, JSON), or NULL */
    size_t buf_len;
    /* or no numbers stored at all (n_parts 0): maps made when asked, a
     * model's recomputed from its queries and keys. computed(user, l, h,
     * out) writes map (l, h) as Tq × Tk floats, row stride Tk; user is
     * released by computed_free (NULL: borrowed) when the file is closed. */
    void (*computed)(const void *user, int l, int h, float *out);
    /* and, when it can, every map made once on the two threads: fn(fn_user,
     * l, h, map) for each (called from both, each map once); 0 or -ATTN_E_NOMEM */
    int (*computed_each)(const void *user, void (*fn)(void *, int, int, const float *), void *fn_user);
    void *computed_user;
    void (*computed_free)(void *user);
    char name[1024];            /* the file's name, for messages */
} AttnFile;

/* Bytes of one element. */
int attn_dtype_size(AttnDtype t);
const char *attn_dtype_name(AttnDtype t);
/* IEEE half and bfloat16 bits to float (every value, subnormals, ±inf, NaN). */
float attn_f16_to_float(uint16_t h);
float attn_bf16_to_float(uint16_t b);

/* Element (l, h, i, j) of the whole tensor as a float; l is over all parts. */
float attn_file_at(const AttnFile *f, int l, int h, int i, int j);

/* What a map of the file is: one layer and head, a layer's heads averaged,
 * every layer's heads averaged, or the rollout through a layer. */
typedef enum AttnPick {
    ATTN_PICK_HEAD = 0,     /* layer, head */
    ATTN_PICK_LAYER_AVG,    /* layer, mean over heads */
    ATTN_PICK_HEAD_ALL_AVG, /* head, mean over layers */
    ATTN_PICK_ALL_AVG,      /* mean of every map */
    ATTN_PICK_ROLLOUT       /* Abnar & Zuidema: through layer */
} AttnPick;

/* One Tq×Tk map of the file as floats into out (Tq·Tk floats), computed in
 * double precision for averages and the rollout:
 *   rollout: Ā_l = ½·(mean over heads of layer l) + ½·I, rows renormalised
 *   to sum to 1; R = Ā_layer · Ā_(layer−1) · … · Ā_0 (square maps only).
 * Returns 0, -ATTN_E_RANGE (layer or head out of range), -ATTN_E_SHAPE
 * (rollout of a non-square map) or -ATTN_E_NOMEM. */
int attn_file_map(const AttnFile *f, AttnPick pick, int layer, int head, float *out);

/* Remove the rows and columns of the tokens whose drop[] flag is set
 * (query tokens for rows, key tokens for columns: dropq has Tq flags,
 * dropk Tk) from a Tq×Tk map in place and renormalise each remaining row to
 * sum to 1 (a row summing to 0 stays 0). *Tq and *Tk become the kept sizes. */
void attn_map_drop(float *v, int *Tq, int *Tk, const unsigned char *dropq,
                   const unsigned char *dropk);

/* 1 when the token is a special token ([CLS], [SEP], <s>, </s>, <pad>,
 * [PAD], [MASK], [UNK], <unk>, <mask>, and any <|name|> without spaces:
 * <|endoftext|>, Llama 3's <|begin_of_text|>, Qwen2's <|im_start|>). */
int attn_token_special(const char *tok);
/* The token as shown: BPE's word-start markers Ġ (U+0120) and ▁ (U+2581)
 * dropped from its start; copied into buf. */
const char *attn_token_shown(const char *tok, char *buf, size_t n);

/* The first NaN of the tensor, as (l, h, i, j): 1 and the position, or 0
 * (maps made when asked are made, each in turn, to be searched). */
int attn_file_find_nan(const AttnFile *f, int pos[4]);

#endif
