/* Attention files in the application (issue 13): an opened file with its
 * tokens, the map picked from it (a layer and head, a layer's or all
 * layers' average, or the rollout; tokens dropped and rows renormalised),
 * its labels, title and facts line; and the headless path: --print and
 * --export of the picked map, --view grid of every layer and head. The
 * numbers come from attnfile.h (core) and attnio.h (io). */
#ifndef ATTNVIZ_IMPORT_H
#define ATTNVIZ_IMPORT_H

#include <stdio.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnmap.h"
#include "attnviz/colormap.h"
#include "attnviz/error.h"
#include "attnviz/figure.h"
#include "attnviz/head_scores.h"
#include "attnviz/options.h"

typedef struct Imported {
    AttnFile f;
    AttnFile sf;                /* the file's "scores" beside "attention", when it has them */
    int has_scores;
    AttnFile nf;                /* a model's norms maps (import_set_norms), made when asked */
    int has_norms;
    int matrix;                 /* what is picked (ModelMatrix's numbers): 0 the attention,
                                   1 the scores (has_scores), 3 the norms (has_norms) */
    char **q_shown, **k_shown;  /* every token as shown (BPE markers dropped;
                                   positions when the file has none) */
    char **q_name, **k_name;    /* every token as stored (or its position) */
    float *v;                   /* the picked map: Tq×Tk after any drop */
    unsigned char *mask;        /* Tq×Tk: 1 where the value is −inf */
    int Tq, Tk;
    const char **q_lab, **k_lab;/* the picked rows' and columns' labels as shown */
    const char **q_tok, **k_tok;/* … and as stored (CSV, text, JSON) */
    unsigned char *q_special, *k_special; /* which of them are special tokens */
    unsigned char *q_drop, *k_drop; /* f.Tq and f.Tk flags: 1 = dropped (--drop) */
    const int *ids;             /* f.Tq token ids (a model's; borrowed) for the
                                   head scores, or NULL: the stored strings */
    int causal;                 /* 1: a causal model's maps (its source sets it): the keys
                                   after the query are masked, not 0, in every map picked */
    int *windows;               /* f.L sliding windows of a model's layers (0: none; owned),
                                   or NULL: keys j <= i - window masked too (not 0) */
    const char *text;           /* the text a source computed the maps of (borrowed), or NULL:
                                   the exported figures' title quotes it */
    int n_special;              /* special tokens in the file (rows and columns) */
    char specials[400];         /* their names, comma-separated, for --drop */
    AttnMapKind kind;           /* weights, or scores when a value is negative */
    int layer, head, rollout;   /* what was picked (−1: average) */
    /* made where the maps were (a model's worker), freed with im: every
     * map's thumbnail of side pre_side (import_thumbs' numbers) and every
     * map's scores with no token dropped (import_head_scores'); NULL: none */
    float *pre_thumbs;
    int pre_side;
    int pre_norms;              /* 1: pre_thumbs and pre_scores are of the norms maps */
    HeadScores *pre_scores;
    char title[300];            /* the file's name */
    char facts[400];            /* layer, head, kind, dtype, tokens */
    char note[300];             /* "rows do not sum to 1 …", or "" */
} Imported;

/* Open path (an attention file), with --tokens and --key-tokens when not
 * NULL; refuses a NaN anywhere (naming its place). im is zeroed first. */
/* The same for an encoder-decoder's .npz (--export-attention's): group
 * "encoder", "decoder" or "cross" picks its maps and token lists (NULL:
 * attention.npy, or the cross maps of a file that has no other); a group
 * named for a file that is not a .npz: -ATTN_E_USAGE. */
int import_open_group(Imported *im, const char *path, const char *group, const char *tokens,
                      const char *key_tokens, AttnErr *err);
int import_open(Imported *im, const char *path, const char *tokens, const char *key_tokens,
                AttnErr *err);
/* The same for maps a source made in memory: v holds L×H×Tq×Tk floats
 * (C order; im owns it from now on, malloc'd), q_tokens and k_tokens the
 * rows' and columns' tokens (NULL-terminated arrays of malloc'd strings,
 * owned as v; k_tokens NULL: the rows'), name what messages and the title
 * call it. Refuses a NaN; on error everything given is freed. */
int import_from_buffer(Imported *im, const char *name, float *v, int L, int H, int Tq, int Tk, char **q_tokens,
                       char **k_tokens, AttnErr *err);
/* The same for maps made when asked (a model's, recomputed from its
 * queries and keys): map(user, l, h, out) writes map (l, h), Tq × Tk
 * floats; each (NULL: none) makes every map once on the two threads
 * (attnfile.h's computed_each: the thumbnails and head scores use it);
 * user (owned from now on) is released by user_free (NULL: borrowed) when
 * im is closed, also on error. A NaN is searched for (as in a file: every
 * map made) only when maps->may_nan says one may be there. */
typedef struct ImportMaps {
    void (*map)(const void *user, int l, int h, float *out);
    int (*each)(const void *user, void (*fn)(void *, int, int, const float *), void *fn_user);
    void *user;
    void (*user_free)(void *user);
    int may_nan;
} ImportMaps;
int import_from_maps(Imported *im, const char *name, const ImportMaps *maps, int L, int H, int Tq, int Tk,
                     char **q_tokens, char **k_tokens, AttnErr *err);
/* A model's value-weighted maps beside its weights (R shows them, --matrix
 * norms picks them; the model view and head scores then work on them):
 * maps's user is borrowed (user_free ignored: the weights' file releases
 * it). L, H, Tq, Tk those of im->f. */
void import_set_norms(Imported *im, const ImportMaps *maps);
/* The file of what im->matrix shows: the norms' or the scores' when im has
 * them, else the attention. */
const AttnFile *import_shown_file(const Imported *im);
/* Pick the map: layer and head 0-based or −1 for the average; rollout
 * through layer (the last one when layer is −1); drop: comma-separated
 * tokens to remove (as stored or as shown), or NULL. */
int import_pick(Imported *im, int layer, int head, int rollout, const char *drop, AttnErr *err);
/* The picked map, its labels as shown (shown = 1) or as stored. */
AttnMap import_map(const Imported *im, int shown);
/* Every layer and head, each block-averaged to at most side × side cells,
 * as one (L, H, tq, tk) array in *out (caller frees) for a grid figure. */
int import_thumbs(const Imported *im, int side, float **out, int *tq, int *tk, AttnErr *err);
/* One Tq × Tk map block-averaged as import_thumbs does, into t (tq × tk of
 * import_thumb_size). */
void import_thumb_size(int Tq, int Tk, int side, int *tq, int *tk);
void import_thumb_map(const float *map, int Tq, int Tk, int side, float *t);
void import_close(Imported *im);

/* Every layer and head's scores (head_scores.h) into out[l·H + h] (f.L ×
 * f.H of them), on the weights as shown: the dropped tokens' rows and
 * columns removed, rows renormalised. Tokens are the same when their ids
 * are equal (im->ids) or else their stored strings (a file without tokens:
 * every token distinct). */
int import_head_scores(const Imported *im, HeadScores *out, AttnErr *err);
/* Every head of layer (−1: each head's mean over the layers) as picked:
 * the dropped tokens' rows and columns removed, rows renormalised, into
 * out (H × Tq × Tk of the pick); from the attention, not its scores. */
int import_layer_heads(const Imported *im, int layer, float *out, AttnErr *err);

/* The score overview as a map: L rows ("layer i") × H columns ("head j")
 * of score k from s (NULL: computed here); a none is a masked cell; with
 * its title and facts. import_score_overview_free frees it (and zeroes). */
typedef struct ScoreOverview {
    AttnMap m;
    float *v;
    unsigned char *mask;
    char **labels;   /* L row labels, then H column labels */
    char title[400], facts[200];
    char caption[96]; /* its colour bar's (import_score_scale) */
} ScoreOverview;
int import_score_overview(ScoreOverview *ov, const Imported *im, const HeadScores *s, HeadScoreId k,
                          AttnErr *err);
void import_score_overview_free(ScoreOverview *ov);
/* How the overview of score k is coloured: a score in [0, 1] as asked
 * (fixed 0–1 unless Shift+C or --color-scale says otherwise: 0.08 is dim
 * on every model), entropy and distance 0 to their largest; caption gets
 * what its colour bar says ("induction, fixed 0–1"). */
ColorScaleMode import_score_scale(HeadScoreId k, ColorScaleMode asked, char *caption, size_t n);

/* The command line's output of the picked map: --print text|csv|json to
 * stdout, then each --export by its extension (.png and .svg of the map,
 * or with --view grid of every layer and head; .csv and .json of the map).
 * Returns 0 or an error with err filled (main prints it, exit 1). */
int import_write(const Imported *im, const Options *o, AttnErr *err);
/* The picked map as CSV into path, the bytes --print csv writes (the
 * window's Ctrl+E beside its PNG). 0 or an error. */
int import_write_csv(const Imported *im, const char *path, AttnErr *err);

/* --print head-scores (import_scores.c): the CSV header
 * layer,head,previous,self,first,duplicate,induction,entropy,distance and
 * one line per layer and head (1-based; a none an empty field; %.6g). */
int import_print_head_scores(FILE *f, const Imported *im, AttnErr *err);
/* --view heads: the overview of o->head_score, an L × H heatmap (rows
 * layers, columns heads) as .png or .svg at path. */
int import_export_heads(const Imported *im, const Options *o, ColormapId cmap, const char *path, AttnErr *err);
/* How an overview is drawn: its score, the colour scale asked for (a score
 * in [0, 1] only: import_score_scale), the colour map, the scale (1 =
 * 100 %), the theme and the font (NULL: the default). */
typedef struct OverviewLook {
    HeadScoreId score;
    ColorScaleMode cscale;
    ColormapId cmap;
    float scale;
    int dark;
    const char *font;
} OverviewLook;
/* The overview ov (of look->score) as .png or .svg at path: --view heads'
 * figure, and Ctrl+E's of the window's overview. */
int import_write_overview(ScoreOverview *ov, const OverviewLook *look, const char *path, AttnErr *err);
/* The figure options of every layer and head as one grid (--view grid, and
 * Ctrl+E in the model view): the export's natural size at scale, the
 * title of im, its facts written into facts (n bytes, which the options
 * point to), the colours. */
FigureOptions import_grid_options(const Imported *im, AttnMapKind kind, float scale, ColormapId cmap,
                                  ColorScaleMode cscale, char *facts, size_t n);

#endif
