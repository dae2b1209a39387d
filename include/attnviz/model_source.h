/* The model source's opening and headless computing (src/app/sources/
 * model_source.c), for the command line and the tests: a model folder or
 * name opened with its tokenizer and a forward state, a text's tokens and
 * maps computed on the calling thread. */
#ifndef ATTNVIZ_MODEL_SOURCE_H
#define ATTNVIZ_MODEL_SOURCE_H

#include <stdio.h>

#include "attnviz/bpe.h"
#include "attnviz/error.h"
#include "attnviz/generate.h"
#include "attnviz/import.h"
#include "attnviz/lm.h"

/* What watches a model's first forward (model_compute_ids) when it runs on
 * another thread than the UI's (model_opening.c): between layers cancel
 * (1: stop, the forward returns -ATTN_E_CANCELLED), after each layer done
 * (layer 0 … n_layer − 1). NULL where the UI thread computes it (bg_breathe
 * between layers instead). */
typedef struct ModelWatch {
    int (*cancel)(void *user);
    void (*read)(void *user, int n_layer); /* the files read, the forward next (model_open_window) */
    void (*layer)(void *user, int layer, int n_layer);
    void *user;
} ModelWatch;

typedef struct ModelOpened {
    Lm lm;              /* the model: weights and the forward's state (key/value cache) */
    Bpe *bpe;           /* its tokenizer */
    BpeIds ids;         /* the text's tokens (the bos token first with prepend_bos),
                           then those generated */
    int n_given;        /* the text's tokens: those from here on were generated */
    char *text;
    Imported *im;       /* the maps of the text, picked; NULL before a compute */
    int prepend_bos;
    int for_window;     /* model_compute_text also makes every map's thumbnail and
                           scores (the window's model view) as the forward goes */
    int want_norms;     /* model_compute_text also makes the value norms (g->im's
                           norms maps: --matrix norms, the window's R) */
    char path[4096];    /* as given: a folder or a name */
    char dir[4096];     /* the folder it was found in (what a session names) */
    char name[256];     /* for titles: the last part of path */
    /* an encoder-decoder's (lm.info.encdec): ids are the source's, tgt the
     * decoder's (its start token first); im holds the maps of group */
    BpeIds tgt;
    int group;          /* OptGroup */
    const ModelWatch *watch; /* the first forward's watcher (borrowed), or NULL */
} ModelOpened;

/* Open path (a folder, an installed model such as nano-sort, or a name in
 * the Hugging Face cache) into *out. 0, or an error naming the file or
 * tensor and what is wrong (*out NULL). */
int model_open_path(const char *path, int prepend_bos, ModelOpened **out, AttnErr *err);
/* The window's open (model_opening.c): path opened and the first forward of
 * text (len bytes; none: "The") computed with every map's thumbnail, watched
 * by watch (or NULL: on the UI thread); of a text longer than the model's
 * n_positions tokens the first n_positions (the window's show says so, as
 * typing does). 0 and *out, or the error (*out NULL). */
int model_open_window(const char *path, const char *text, size_t len, const ModelWatch *watch, ModelOpened **out,
                      AttnErr *err);
/* 1 when path is a regular file starting with GGUF's magic. */
int model_is_gguf(const char *path);
/* A folder that holds no config.json: the error that says what a model
 * folder needs (-ATTN_E_IO naming dir); 0 when it has one. */
int model_folder_check(const char *dir, AttnErr *err);
/* The text's tokens and every map (into g->im, picked at layer 1, head 1).
 * An empty text and more tokens than n_positions are errors. */
int model_compute_text(ModelOpened *g, const char *text, size_t len, AttnErr *err);
/* The same for the tokens g->ids as they are (with generated ones: not
 * the text tokenized again); g->text is the figures' title. */
int model_compute_ids(ModelOpened *g, AttnErr *err);
/* --print predictions: the 10 most likely next tokens after position pos,
 * a line each: id, a tab, the probability, a tab, the text as JSON. */
int model_print_predictions(FILE *f, ModelOpened *g, int pos, AttnErr *err);
/* --print logit-lens: the logit lens of position pos (lm.h's lm_logit_lens,
 * a forward of the text from pos on) as CSV, the header layer,rank,id,token,prob,
 * then layers 0 (the embeddings) to L, ranks 1 to LENS_TOP_K, the token as
 * a JSON string, the probability %.6g. */
#define LENS_TOP_K 5
int model_print_logit_lens(FILE *f, ModelOpened *g, int pos, AttnErr *err);
/* Generation (model_generate.c): n tokens after g->ids, each chosen from
 * one incremental forward's last logits by s (r: the sampling's draws),
 * appended to g->ids as chosen; it stops after the model's eos token and
 * at n_positions (the caller says when T + n is too many). 0 or an error. */
int model_generate(ModelOpened *g, int n, const GenSettings *s, Prng *r, AttnErr *err);
/* The generated ids (those from g->n_given on) as the tokenizer's decoder
 * joins them, special tokens kept (Hugging Face's decode): *out malloc'd,
 * NUL-terminated. 0 or -ATTN_E_NOMEM. */
int model_generated_text(const ModelOpened *g, char **out, size_t *len);
/* g->text = text with the generated tokens' text after it. 0 or an error. */
int model_generated_join(ModelOpened *g, const char *text, AttnErr *err);
/* text with what ids[given..n) add to ids[0..given)'s decoded text after it
 * (the window's generation: the bar's text and its continuation so far).
 * Malloc'd; NULL when memory is short. */
char *model_continued_text(const Bpe *b, const int *ids, int n, int given, const char *text);

void model_opened_free(ModelOpened *g);

/* The window's open of a model on a thread of its own (model_opening.c):
 * the folder or GGUF file read, the tokenizer, the first forward of the
 * bar's text, while the window keeps drawing and taking keys; the app's
 * tick installs what it made. One per AppState (a->opening). */
typedef struct ModelOpening ModelOpening;
struct AppState;
/* Start opening path on text (len bytes; an empty text: "The"), the status
 * bar saying so; a newer open replaces one still running (its result,
 * whenever it comes, freed unseen). 0, or -1 said in the status bar. */
int model_opening_start(struct AppState *a, const char *path, const char *text, size_t len);
/* The app's tick: the open's progress in the status bar, or its model
 * shown (on the bar's text as it is now: typed during the open, it is
 * computed as any edit is), or its error said (the source shown stays).
 * 1 when the window should be drawn again. */
int model_opening_tick(struct AppState *a);
/* 1 while an open started is not yet shown or said. */
int model_opening_busy(const ModelOpening *o);
/* What it opens (the last part of its path), for the title. */
const char *model_opening_name(const ModelOpening *o);
/* The open running no longer wanted (a newer open of another kind): its
 * result freed unseen. NULL: nothing. */
void model_opening_cancel(ModelOpening *o);
/* Stop (the forward at its next layer, a read when it returns), join and
 * free. NULL: nothing. */
void model_opening_free(ModelOpening *o);

/* What the window's model source shows now (issue 37), for the tests that
 * drive it: the tokens (those generated: [gen_start, gen_end), -1 none),
 * the heads switched off, the predictions of the newest whole result (with
 * heads off: each one's probability with every head on, the former most
 * likely token's both ways), the logit lens's rows. Pointers valid until
 * the next tick. */
typedef struct ModelShown {
    int T;
    const int *ids;
    int gen_start, gen_end, gen_left;
    int n_ablated;
    const unsigned char *ablated; /* L × H */
    int stale;                    /* the numbers are older than the text or ablation */
    int pred_pos, n_pred;
    const int *pred_ids;
    const float *pred_p;
    int has_base;
    const float *base_p;
    int base_top;
    float base_top_p, base_top_p_abl;
    long long computed;           /* positions × layers the window's forwards computed so far, */
    long long computed_plain;     /* and with heads off its second state's (-1: none) */
    int lens_pos, lens_k;         /* -1: none; lens_k per layer */
    const int *lens_ids;          /* (L + 1) × lens_k */
    const float *lens_p;
} ModelShown;
struct AppState;
/* 0, or -1 when a shows no language model. */
int model_source_shown(const struct AppState *a, ModelShown *out);

#endif
