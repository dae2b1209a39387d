/* What a weights or session file holds, as plain data with no I/O: io's
 * parsers fill it, model_set_weights / model_apply_session (model.h, core)
 * put it into a Model, so the core never sees a parser. */
#ifndef ATTNVIZ_SESSION_DATA_H
#define ATTNVIZ_SESSION_DATA_H

#include <stdint.h>

#include "attnviz/attn.h"

/* The view settings a session keeps. */
typedef struct SessionView {
    int query, key, head;   /* head: 0.. or MODEL_HEAD_AVG */
    int matrix;             /* ModelMatrix */
    int cmap;               /* ColormapId */
    int cscale;             /* ColorScaleMode: 0 fixed 0–1 (a session
                               without one), 1 the map's max, 2 per row */
    int all_lines;
    int dark;               /* window theme: 1 dark, 0 light */
    float ui_scale;
    int sentence_index;
    int edit_target;
    /* teach mode (issue 15): on, the target (teach_Tq × teach_Tk, rows
     * summing to 1 or 0; NULL: none) and the settings. A parsed session's
     * target belongs to the SessionView: session_view_free. */
    int teach_on;
    float *teach_target;
    int teach_Tq, teach_Tk;
    int teach_head;         /* 0.. or MODEL_HEAD_AVG */
    int teach_train;        /* TEACH_* bits */
    int teach_opt;          /* TeachOptKind */
    float teach_lr;
} SessionView;

/* Query 1, no key, head 0, weights, viridis on 0–1, dark, scale 1; teach mode
 * off, no target, Wq and Wk by Adam at lr 0.1. */
void session_view_default(SessionView *sv);
/* Free the teach target a parsed session gave sv (NULL after). */
void session_view_free(SessionView *sv);

/* Learned weights read from a file: params.h heads over params.d
 * dimensions, and the seed they came from when the file names one. */
typedef struct ParsedWeights {
    AttnParams params;      /* v and vb: the file's, or the defaults
                               (attn_params_default_v) when it has none */
    int has_seed;           /* config.seed was a whole number 0 … 2^53 */
    uint64_t seed;
} ParsedWeights;

/* Frees the weights; accepts a zeroed struct. */
void parsed_weights_free(ParsedWeights *w);

/* Everything a session file sets. */
typedef struct Session {
    char *sentence;         /* the sentence as saved, NUL-terminated */
    char *keys;             /* the second sentence (cross-attention), or
                               NULL: self-attention */
    AttnConfig cfg;         /* the settings (those the file left out: the
                               ones the parser was given); cfg.heads is
                               weights.params.h, or the base's when the file
                               has no weights */
    int has_weights;        /* weights holds the file's learned weights */
    ParsedWeights weights;
    int d;                  /* the vectors' length (the model's d) */
    int n_vectors;          /* edited word vectors, in file order */
    char **words;           /* n_vectors words */
    float *vectors;         /* n_vectors × d */
    SessionView view;
} Session;

/* Frees everything s owns and zeroes it; accepts a zeroed struct. */
void session_free(Session *s);

#endif
