/* Reading attention files (attnfile.h): .npy (numpy's format 1.0/2.0/3.0,
 * any header key order, C or Fortran order, little- or big-endian), .npz
 * (np.savez / np.savez_compressed: a zip of .npy members, stored or
 * deflated, ZIP64; read with libzip), .safetensors (the tensor "attention"
 * or "layer_0", …; tokens in __metadata__) and .json ({"tokens": [...],
 * "attention": nested lists}). The numbers are not converted: npy and
 * safetensors files are memory-mapped, an npz member is inflated once (into
 * memory), a JSON file's numbers are read into one float64 buffer. Every
 * error names the file and what is wrong; nothing reads past the end. No
 * SDL. */
#ifndef ATTNVIZ_ATTNIO_H
#define ATTNVIZ_ATTNIO_H

#include <stddef.h>

#include "attnviz/attnfile.h"
#include "attnviz/error.h"

/* 1 when path ends in .npy, .npz or .safetensors (case-insensitive): an
 * attention file by its name. A .json is one when attn_json_is_attention
 * says so of its content. */
int attn_path_is_attention(const char *path);
/* 1 when the JSON text is an object with an "attention" key (an attention
 * file, not a session). */
int attn_json_is_attention(const char *data, size_t len);

/* Open path by its extension into f (zeroed first). On error f holds
 * nothing to free and err names the file and the problem. */
int attn_file_open(AttnFile *f, const char *path, AttnErr *err);
/* Release what f holds (mapping, buffer, tokens); f is zeroed. */
void attn_file_close(AttnFile *f);

/* The parsers on bytes in memory (what attn_file_open maps or reads; the
 * fuzzers call them). data must stay alive as long as f: f borrows it
 * (f->map and f->buf stay NULL unless the parser made a buffer). name is
 * used in messages. */
int attn_npy_parse(AttnFile *f, const void *data, size_t len, const char *name, AttnErr *err);
int attn_npz_parse(AttnFile *f, const void *data, size_t len, const char *name, AttnErr *err);
int attn_safetensors_parse(AttnFile *f, const void *data, size_t len, const char *name,
                           AttnErr *err);
int attn_json_parse(AttnFile *f, const char *data, size_t len, const char *name, AttnErr *err);

/* Another tensor of the same file beside "attention": "scores" (the
 * pre-softmax numbers of the same shape, in .npz as scores.npy and in
 * .safetensors as the tensor "scores"). A .npy or .json holds one array:
 * -ATTN_E_UNSUPPORTED. */
int attn_file_open_tensor(AttnFile *f, const char *path, const char *tensor, AttnErr *err);
int attn_npz_parse_tensor(AttnFile *f, const void *data, size_t len, const char *name,
                          const char *tensor, AttnErr *err);
int attn_safetensors_parse_tensor(AttnFile *f, const void *data, size_t len, const char *name,
                                  const char *tensor, AttnErr *err);

/* Tokens from a text file, one per line (UTF-8, "\n" or "\r\n"; the last
 * line may lack its newline; an empty line is an empty token). *out is a
 * NULL-terminated array of n strings, freed with attn_tokens_free. */
int attn_tokens_load(char ***out, int *n, const char *path, AttnErr *err);
void attn_tokens_free(char **t);
/* Give f tokens from --tokens (q) and --key-tokens (k; NULL: self
 * attention uses q for both), taking ownership; they win over the file's.
 * A list whose length is not the map's side, or --tokens alone for a
 * non-square map, is an error naming the list and both lengths. */
int attn_file_set_tokens(AttnFile *f, char **q, int nq, char **k, int nk, AttnErr *err);

/* A session of an attention file: the file (its full path) and what was
 * shown of it. A JSON object with "attention_file", told from a sentence's
 * session and from an attention JSON file by that key. */
typedef struct AttnSession {
    char file[4096];
    int layer, head;            /* −1: the average */
    int rollout, hide_special, grid;
    int grid_layer, grid_head;  /* the model view's selection */
    int query, key;             /* −1: none */
    int has_text;               /* a source that takes text (a model): its text */
    char text[32768];
    /* a model's induction probe (issue 26) shown instead of its text:
     * "probe": {"seed": S, "n": N, "tokens": [ids]}; n_probe 0: none */
    int n_probe;
    int probe[1024];
    int probe_n;
    double probe_seed;          /* a whole number from 0 to 2^53 */
    /* the scores or the weights (R, a file that has both) */
    int matrix;             /* 0 weights, 1 the file's scores, 3 a model's norms ("norms": true) */
    /* the model view's head roles (issue 26): the score shown (I, a
     * HeadScoreId: "score": "induction"), sorted by it (Y), its overview
     * (U), every head's lines (Q) and the heads switched off there */
    int score, sorted, score_view, every_head;
    int score_cscale;           /* the overview's colours (Shift+C there, a
                                   ColorScaleMode): "score_color_scale":
                                   "fixed" (absent), "max" or "row" */
    int n_heads_off;
    int heads_off[256];         /* 0-based; "heads_off": [2, 5] counts from 1 */
    /* a language model's heads switched off (issue 37, Ctrl+K): "ablated":
     * [[1, 4], [2, 1]] (1-based layer, head), "ablate_mean": true for their
     * mean; "logit_lens": true when the panel shows the logit lens */
    int n_ablated;
    int ablated[256][2];        /* 0-based layer, head */
    int ablate_mean, logit_lens;
    /* an encoder-decoder's (issue 36): "target" the second bar's text (the
     * decoder's), "group" the maps shown: "encoder", "decoder" or "cross"
     * (group: OptGroup's numbers, GROUP_CROSS 0, -1 when none is said) */
    int has_target;
    char target[4096];
    int group;
    /* the window's view, as a sentence's session keeps it ("view": {...});
     * has_view 0: a session without one (the view stays as it is) */
    int has_view;
    int cmap, cscale;           /* ColormapId, ColorScaleMode */
    int all_lines, dark;
    int lines_top;              /* each query's strongest lines (0: every line) */
    int side;                   /* the side area's tab shown (a SidePanel) */
    float ui_scale;
} AttnSession;

int attn_session_save(const char *path, const AttnSession *s, AttnErr *err);
int attn_session_is(const char *data, size_t len);
/* Fills s; on error s is zeroed and err names the file. */
int attn_session_parse(AttnSession *s, const char *data, size_t len, const char *name, AttnErr *err);
int attn_session_load(AttnSession *s, const char *path, AttnErr *err);

/* What a path is to open: an attention file (by its name, or a .json by its
 * content), a session of one (.json), or something else (a sentence's
 * session, a sentences file, a missing file). Reads a .json once. */
typedef enum AttnPathKind { ATTN_PATH_OTHER = 0, ATTN_PATH_FILE, ATTN_PATH_SESSION } AttnPathKind;
AttnPathKind attn_path_kind(const char *path);

#endif
