/* Command-line options: parsed into a plain struct where zero means
 * "default" (resolved by options_parse). No SDL, no I/O besides messages in
 * the error detail, so the fuzzer can drive it. */
#ifndef ATTNVIZ_OPTIONS_H
#define ATTNVIZ_OPTIONS_H

#include <stdint.h>

#include "attnviz/attn.h"
#include "attnviz/error.h"

#define OPT_MAX_EXPORTS 16

typedef enum PrintFormat {
    PRINT_NONE = 0, PRINT_TEXT, PRINT_CSV, PRINT_JSON,
    PRINT_TOKENS,     /* a model's tokens: id, tab, the text as a JSON string */
    PRINT_PREDICTIONS, /* a model's 10 most likely next tokens */
    PRINT_HEAD_SCORES, /* every layer and head's scores as CSV (issue 26) */
    PRINT_LOGIT_LENS   /* a model's logit lens at one position as CSV (issue 37) */
} PrintFormat;
/* VIEW_HEADS: the score overview, an L × H heatmap of one head score */
typedef enum ViewKind { VIEW_HEATMAP = 0, VIEW_LINES, VIEW_BOTH, VIEW_GRID, VIEW_HEADS } ViewKind;

/* An encoder-decoder's three groups of maps (--group). */
typedef enum OptGroup { GROUP_CROSS = 0, GROUP_ENCODER, GROUP_DECODER } OptGroup;

typedef struct Options {
    const char *sentence;       /* -s, or the words after the options */
    char *sentence_buf;         /* owned join of the positional words */
    const char *sentence_file;  /* -f */
    const char *keys;           /* --keys TEXT: the second sentence (keys and
                                   values, cross-attention); NULL: self */
    long line;                  /* --line N (1-based sentence number), 0 = first */
    const char *embeddings;     /* -e */
    const char *weights;        /* -w */
    const char *session;        /* --session, or a lone existing .json argument */
    const char *font;           /* --font */
    const char *export_dir;     /* --export-dir */
    const char *exports[OPT_MAX_EXPORTS];
    int n_exports;
    AttnConfig cfg;
    int heads_set, mode_set, scale_set, causal_set, posenc_set, temp_set;
    int score_set;              /* --score given (cfg.score) */
    int head_set, matrix_set;   /* --head, --matrix given */
    int has_seed;
    uint64_t seed;              /* a sentence's random weights; a model's
                                   probe tokens (--probe) */
    int probe;                  /* --probe induction[:N]: 1 */
    int probe_n;                /* its N (default PROBE_DEFAULT_N) */
    int head;                   /* --head: 0-based, or -1 = avg */
    PrintFormat print;
    ViewKind view;
    int head_score;             /* --head-score NAME: HeadScoreId (default induction) */
    int head_score_set;
    int scale;                  /* --scale N for PNG export, default 2 */
    int query;                  /* --query I (0-based), -1 = default */
    int matrix;                 /* --matrix: 0 weights, 1 raw scores, 2 logits
                                   (ModelMatrix) for PNG, SVG and the window */
    const char *colormap;       /* --colormap NAME */
    int color_scale;            /* --color-scale: ColorScaleMode (0 fixed
                                   0–1, 1 max: the default, 2 per row) for
                                   weights */
    int color_scale_set;
    int theme_dark;             /* --theme dark */
    int theme_set;
    int all_lines;              /* --all-lines */
    int fresh;                  /* --fresh: ignore the autosave */
    /* an attention file (issue 13): --attention FILE, or a lone argument
     * ending in .npy, .npz or .safetensors (a .json one is told from a
     * session by its content, in main) */
    const char *attention;
    const char *tokens;         /* --tokens FILE: one token a line */
    const char *key_tokens;     /* --key-tokens FILE (cross-attention) */
    int layer, layer_set;       /* --layer: 0-based, or -1 = avg */
    int rollout;                /* --rollout */
    const char *drop;           /* --drop TOKENS, comma-separated */
    /* teach mode (issue 15): --teach TARGET, a CSV file in the --print csv
     * format or a preset (self, previous, next, first); --head picks the
     * head the target is for */
    const char *teach;
    long steps;                 /* --steps N (default 200) */
    float lr;                   /* --lr X (default 0.1) */
    int optimizer;              /* --optimizer sgd|adam (TeachOptKind; adam) */
    int train;                  /* --train wq,wk[,x][,v] (TEACH_* bits) */
    int teach_set;              /* --steps, --lr, --optimizer or --train given */
    /* a language model computed natively (issue 25): --model DIR|NAME, a
     * Hugging Face folder or a name in its cache; the text is the sentence */
    const char *model;
    int prepend_bos;            /* --prepend-bos: the config's bos token first */
    const char *export_attention; /* --export-attention F.npy|F.npz|F.safetensors */
    /* generation (issue 37): --generate N tokens after the text, greedy, or
     * --sample: tau from --temperature (cfg.temperature when temp_set, else
     * 1), --top-k K (0: all), the draws from --seed (0 when absent) */
    int generate_set;
    int generate;               /* N (a number past any model's positions: 1 << 30) */
    const char *generate_arg;   /* N as given, for messages */
    int sample;
    int top_k;
    int top_k_set;
    /* head ablation (issue 37): --ablate L.H[,L.H…], 0-based here (the
     * flag's are 1-based), zeroed or with --ablate-mean replaced by their
     * mean over the text's positions; checked against the model when it opens */
#define OPT_MAX_ABLATE 256
    int n_ablate;
    int ablate_layer[OPT_MAX_ABLATE], ablate_head[OPT_MAX_ABLATE];
    int ablate_mean;
    /* a session of a model or an attention file for the window (main.c:
     * SESSION.json or --session): opened as Ctrl+O opens it, then the
     * flags given (--layer, --head, --query, --theme …) applied over it */
    const char *window_session;
    /* an encoder-decoder's (issue 36): --target TEXT (the decoder's text; the
     * sentence is the source) and --group, the maps --print and --export show */
    const char *target;
    int group;                  /* OptGroup */
    int group_set;
    int help, version;
} Options;

/* Returns 0, or -ATTN_E_PARSE for a usage error (exit 2) or -ATTN_E_RANGE
 * for a bad value (exit 1); err->msg says which. */
int options_parse(Options *o, int argc, char **argv, AttnErr *err);
/* 1 when the command line prints or writes something (no window). */
int options_headless(const Options *o);
void options_free(Options *o);
extern const char options_usage[];

#endif
