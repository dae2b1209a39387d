/* The model: one sentence's whole computation, from text to attention.
 * text → tokens → E (table, edited or OOV vectors) → X = E (+PE) → attention.
 * The command line, the window, the exports and the tests all read their
 * numbers from a Model, so they agree. Plain C: no SDL here. */
#ifndef ATTNVIZ_MODEL_H
#define ATTNVIZ_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/attn.h"
#include "attnviz/attnmap.h"
#include "attnviz/embed.h"
#include "attnviz/error.h"
#include "attnviz/session_data.h"
#include "attnviz/tokenizer.h"

/* Which matrix a view shows. */
typedef enum ModelMatrix {
    MODEL_WEIGHTS = 0,
    MODEL_SCORES = 1,
    MODEL_LOGITS = 2,
    MODEL_NORMS = 3   /* value-weighted attention: α[i, j] · ‖v_j W_O,h‖ */
} ModelMatrix;

#define MODEL_HEAD_AVG (-1)

typedef struct Model {
    const EmbedTable *table;  /* borrowed; outlives the model */
    int d;
    AttnConfig cfg;
    AttnParams params;        /* learned weights for cfg.heads heads */
    int has_seed;             /* params came from --seed */
    uint64_t seed;

    char *text;               /* the sentence as given */
    TokenList toks;
    const char *labels[ATTN_MAX_TOKENS]; /* token i's text: the maps' labels */
    int T;                    /* tokens in use (<= ATTN_MAX_TOKENS) */
    float *E;                 /* T×d embeddings */
    float *X;                 /* T×d attention input: E (+ PE) */
    unsigned char *oov;       /* T flags: word not in the table */
    unsigned char *edited;    /* T flags: vector edited this session */
    int cap_T;

    /* Cross-attention (issue 14): a second sentence gives the keys and
     * values. keys_text "" (or a text without tokens) means self-attention,
     * and then Tk = T, klabels = labels, Ek = E, Xk = X, koov = oov,
     * kedited = edited (the same arrays). Each sentence's positional
     * encoding starts at position 0. A word has one vector in both. */
    char *keys_text;          /* the second sentence as given, never NULL */
    TokenList ktoks;
    int cross;                /* 1: the second sentence has tokens */
    int Tk;                   /* keys in use (<= ATTN_MAX_TOKENS) */
    const char *klabels[ATTN_MAX_TOKENS];
    float *Ek, *Xk;           /* Tk×d */
    unsigned char *koov, *kedited;
    float *own_Ek, *own_Xk;   /* the second sentence's own arrays */
    unsigned char *own_koov, *own_kedited;
    int cap_Tk;

    int n_over;               /* edited word vectors, by word */
    char **over_word;
    float *over_vec;          /* n_over × d */
    int cap_over;

    AttnResult res;
    unsigned long generation; /* changes with every model_compute (unique
                                 across models): lets a view skip work */
    int keep_window_matrices; /* keep what only the window shows: the
                                 heads' mean of scores and logits (exports
                                 and prints do not need them) */
    float *avg_scores;        /* T×T mean of the heads' scores, if kept */
    float *avg_logits;        /* T×T mean of the heads' logits, if kept */
    size_t cap_avg;
    /* Every head's logits (h × T × T, scores · s/τ bit for bit: the forward
     * pass keeps none): made from the scores by model_prepare, once per
     * compute, for generation logits_gen. */
    float *logits;
    size_t cap_logits;
    unsigned long logits_gen;
    /* Value-weighted attention (MODEL_NORMS): every head's α[i, j] ·
     * ‖v_j Wo_h‖ (Wo_h: the dk rows of Wo that read head h; basic mode has
     * no Wo: ‖v_j‖), then their mean over the heads, (h + 1) × Tq × Tk,
     * made by model_prepare likewise. */
    float *norms;
    size_t cap_norms;
    unsigned long norms_gen;
    /* The heads' mean of the weights (T × T, attn_heads_mean: the forward
     * pass keeps none either), made likewise by model_prepare. */
    float *avg;
    size_t cap_avg_w;
    unsigned long avg_gen;
    float logit_mult;         /* s/τ of the last compute (attn_logit_scale) */
    int last_keep;            /* keep_window_matrices at the last compute */

    float *pe;                /* positional encoding of positions 0 … n_pe−1 */
    int n_pe;
    /* What the last forward saw, so that the next one recomputes only the
     * rows of X that changed (typing in a long sentence changes one or two):
     * its X, weights and configuration (its T and whether it kept the
     * window matrices are in res). last_ok = 0 forces a whole forward. */
    float *last_X;
    int last_ok;
    size_t cap_last;
    float *last_Xk;           /* with two sentences: the keys' X as well */
    size_t cap_lastk;
    int last_cross;           /* the last forward had two sentences */
    int last_klo, last_khi;   /* key rows it recomputed (two sentences) */
    AttnParams last_params;
    AttnConfig last_cfg;
    int last_lo, last_hi;     /* rows the last model_compute recomputed
                                 (for tests and the bench): [0, T) for a
                                 whole forward, lo = hi = T for none */
} Model;

/* cfg is copied; heads must divide the table's d. */
int model_init(Model *m, const EmbedTable *table, const AttnConfig *cfg);
void model_destroy(Model *m);

/* Tokenize and embed text; keeps the first ATTN_MAX_TOKENS tokens
 * (m->toks.n_total tells how many there were). Does not recompute. */
int model_set_text(Model *m, const char *text, size_t len);

/* The second sentence (cross-attention): queries from the text, keys and
 * values from this one. len 0, or a text without tokens: self-attention.
 * Keeps the first ATTN_MAX_TOKENS tokens (m->ktoks.n_total tells how many
 * there were). The causal mask applies to self-attention only: with two
 * sentences the forward runs without it (m->cfg.causal keeps the setting
 * for when the second sentence is cleared; model_causal tells what is
 * applied). Does not recompute. */
int model_set_keys(Model *m, const char *text, size_t len);
/* The mask in effect: cfg.causal, and 0 with two sentences. */
int model_causal(const Model *m);

/* Change the number of heads: new identity weights, or Xavier from the
 * model's seed when it has one. Returns -ATTN_E_HEADS if h does not divide d. */
int model_set_heads(Model *m, int h);
/* Change the number of heads keeping the weights: the heads' Wq, Wk, Wv
 * slices side by side are d×d matrices (column k·dk + c is head k's column
 * c), and they stay as they are, split into h heads; Wo, v (d numbers in
 * all) and vb stay too. So Q, K, V and the output of every position are
 * unchanged; only which columns form a head changes. -ATTN_E_HEADS if h
 * does not divide d, -ATTN_E_NOMEM (m unchanged on error). */
int model_split_heads(Model *m, int h);
/* Fresh weights: identity (has_seed = 0) or Xavier from seed. */
void model_reset_params(Model *m);
void model_set_seed(Model *m, uint64_t seed);

/* Learned weights read from a file (weights_parse): copies w->params (the
 * heads change to w's), has_seed and seed. Returns -ATTN_E_SHAPE when w is
 * not for m's d, -ATTN_E_NOMEM; on error m is unchanged. */
int model_set_weights(Model *m, const ParsedWeights *w);

/* A session read from a file (session_parse): its weights when it has
 * them, its settings, its edited vectors (the others are forgotten) and
 * its sentence. Does not recompute. Returns -ATTN_E_SHAPE (s not for m's d;
 * m unchanged) or -ATTN_E_NOMEM (m may hold part of the session). */
int model_apply_session(Model *m, const Session *s);

/* Edit the vector of the word of token i (every occurrence follows). */
int model_set_word_vector(Model *m, const char *word, const float *vec);
/* Forget all edited vectors: back to the table's. */
void model_clear_word_vectors(Model *m);
/* Re-derive E from the table, edits and OOV vectors (after edits). */
void model_embed(Model *m);

/* X = E (+PE), then the forward pass. When only some rows of X changed
 * since the last model_compute, with the same weights and settings, only
 * what depends on them is recomputed (attn_forward_update: the same floats
 * as a whole forward); when nothing changed, nothing is, and the generation
 * stays. */
int model_compute(Model *m);

/* A generation number no model and no other caller has had (1, 2, …; from
 * any thread). The window's map sources number their maps' changes with
 * these too, so a view cache keyed by the number never takes one source's
 * map for another's (each source once counted from 0). */
unsigned long model_next_generation(void);

/* Make what model_matrix(m, which, head) returns when the forward pass
 * keeps none of it: every head's logits (MODEL_LOGITS of a head), the
 * heads' mean of the weights (MODEL_WEIGHTS, MODEL_HEAD_AVG), every head's
 * norms and their mean (MODEL_NORMS, any head). Made once per
 * compute (a second call costs nothing), from the scores and weights the
 * forward pass keeps; for the other matrices nothing. Call it after
 * model_compute and before reading: readers of a const Model only read.
 * 0, or -ATTN_E_NOMEM (model_matrix then gives NULL). */
int model_prepare(Model *m, ModelMatrix which, int head);

/* Tq×Tk matrix of one head, or with MODEL_HEAD_AVG the mean over heads
 * (a model with one head: head 0). Reads only: each head's logits and the
 * heads' mean of the weights are there when model_prepare made them for
 * this compute, else NULL; the heads' means of scores and logits only with
 * keep_window_matrices, else NULL. */
const float *model_matrix(const Model *m, ModelMatrix which, int head);

/* The model's attention as maps (attnmap.h) over its tokens: one head's
 * (or with MODEL_HEAD_AVG the heads' mean) Tq×Tk matrix, or all heads as
 * one layer of H maps. They borrow the model's arrays: valid until the
 * next model_set_text or model_compute. A model whose text changed since
 * its last compute gives an empty map (Tq = Tk = 0); a matrix the model
 * does not keep (model_matrix NULL) a map with v NULL. */
AttnMap model_map(const Model *m, ModelMatrix which, int head);
AttnMaps model_maps(const Model *m, ModelMatrix which);

/* The facts line of a figure or printout: mode, head label, d and dk,
 * score function (when not dot), scaling, mask, posenc, τ, separated by
 * ", " in ASCII (ascii = 1: "scaled 1/sqrt(dk)", "tau=1") or by " · " in
 * UTF-8 ("scaled 1/√dk", "τ=1"); "cross-attention" with two sentences. */
void model_facts(const Model *m, int head, int ascii, char *buf, size_t n);
/* Where the weights come from: the defaults (identity), random (--seed,
 * the editor's N) as drawn, or edited (in the window, by teach mode, or
 * loaded from a weights or session file that differs from both); edited
 * word vectors count as edited too. MODEL_WEIGHTS_DEFAULT when out of memory. */
typedef enum ModelWeightsOrigin {
    MODEL_WEIGHTS_DEFAULT, MODEL_WEIGHTS_RANDOM, MODEL_WEIGHTS_EDITED
} ModelWeightsOrigin;
ModelWeightsOrigin model_weights_origin(const Model *m);
/* A figure's title (the sentence in quotes, its first 1000 bytes; with two
 * sentences “queries” → “keys”, each cut to fit) and facts line
 * ("attention weights · learned · …"; "learned (edited)" or "learned
 * (random, seed N)" when the weights are not the defaults,
 * model_weights_origin) for matrix which of head. */
void model_figure_text(const Model *m, ModelMatrix which, int head, char *title, size_t tn,
                       char *facts, size_t fn);

/* The step view's numbers for query i and key j of one head, as the seeds
 * teach them: q_i, k_j, v_j; score = q·k; logit = score·s/τ; the softmax's
 * e^(logit − max) and its row sum; α_ij; z_i. Pointers point into m->res,
 * so the step view shows exactly what the heatmap and --print json show. */
typedef struct ModelStep {
    int i, j, head, dk;
    const float *q, *k, *v;   /* dk values each */
    const float *z;           /* z_i, dk values */
    float score;              /* raw q·k */
    float scale;              /* s = 1/√dk, or 1 when scaling is off */
    float temperature;        /* τ */
    float logit;              /* score·s/τ */
    float row_max;            /* largest unmasked logit of row i */
    double exp_ij;            /* e^(logit − row_max), 0 when masked */
    double exp_sum;           /* Σ over unmasked keys of e^(logit − row_max) */
    float weight;             /* α_ij */
    int masked;
    int score_fn;             /* AttnScore of the forward */
    float dot;                /* q·k (every function: the dot product) */
    float qnorm, knorm;       /* ‖q‖, ‖k‖ (cosine's denominators) */
    const float *va;          /* additive: v of the head (dk values; d in
                                 basic mode), else NULL; term c of the sum
                                 is attn_additive_term(q[c], k[c], va[c]) */
} ModelStep;

/* Fill out for head (MODEL_HEAD_AVG counts as head 0); -ATTN_E_RANGE when
 * i, j or head is out of range. */
int model_step(const Model *m, int head, int i, int j, ModelStep *out);

/* Number of OOV tokens in use. */
int model_count_oov(const Model *m);

#endif
