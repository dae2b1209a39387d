/* What the model source's window files share (model_source.c: the text
 * on the worker, the maps and panels; model_explore.c: generation, head
 * ablation and the logit lens, issue 37): the worker's requests and
 * results, the source's state, the calls between the two. */
#ifndef ATTNVIZ_MODEL_WINDOW_H
#define ATTNVIZ_MODEL_WINDOW_H

#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/background.h"
#include "attnviz/generate.h"
#include "attnviz/lm.h"
#include "attnviz/maps_shown.h"
#include "attnviz/model_source.h"
#include "attnviz/options.h"

/* What the worker is asked: the text's tokens, and the position whose next
 * tokens and the query → key whose vectors the panel shows. */
typedef struct Request {
    int *ids;
    int T;
    int *tgt;            /* an encoder-decoder's decoder ids (its start token first), */
    int Tt;              /* the target bar's; NULL and 0 otherwise */
    int group;           /* an encoder-decoder's maps asked for (OptGroup) */
    int want_maps;       /* 0: the maps shown are these ids' already (a new selection) */
    int norms;           /* the norms are shown (R): the summaries are theirs */
    int pred_pos;
    int sel_i, sel_j;
    int gen;             /* 1: the token after the last position picked (Ctrl+G) */
    GenSettings gs;      /* how */
    Prng prng;           /* the sampling's draws: the UI's state, given back advanced */
    int lens;            /* 1: the logit lens of pred_pos */
    unsigned char *ablated; /* L × H: the heads switched off (NULL: none) */
    int ablate_mean;     /* their outputs replaced by the mean, not zeroed */
    unsigned abl_serial; /* the UI's count of ablation changes when asked */
} Request;

/* What it gives back (on the UI thread through bg_take). */
typedef struct Result {
    int T, L, H, C, layers_done; /* C: q's and k's floats a layer (vH heads) */
    int *ids;
    RtMaps *maps;        /* what the maps are made from: taken by the Imported; NULL when not asked */
    float *thumbs;       /* with maps: every map's thumbnail (side thumb_side) and scores, */
    int thumb_side;      /* made on the worker (taken by the Imported) */
    int thumb_norms;     /* 1: of the norms maps */
    HeadScores *scores;
    float *q, *k;        /* vL × C: the query of sel_i and the key of sel_j, of the group
                            asked for (an encoder-decoder's decoder or cross: its layers) */
    RtAttn *attn;        /* vL: each layer's scalings (the panel's score), with q and k */
    int vL, vH;          /* q's and k's layers and heads */
    int sel_i, sel_j;
    int pred_pos, n_pred;
    int Tt, tgt_last;    /* an encoder-decoder's: the decoder's positions and its last id
                            (the predictions are the next token after it); 0, -1 otherwise */
    int *tgt;            /* the decoder's ids (Tt), NULL otherwise */
    int group;           /* an encoder-decoder's: the group maps holds (OptGroup) */
    int pred_ids[LM_TOP_K];
    float pred_p[LM_TOP_K];
    int gen_id;          /* the token picked after the last position, or -1 */
    float gen_p;         /* its probability (softmax of the logits, tau 1) */
    Prng prng;           /* the draws after that pick */
    int lens_pos;        /* the logit lens's position, or -1 */
    int *lens_ids;       /* (L + 1) × LENS_TOP_K: layer 0 the embeddings' */
    float *lens_p;
    unsigned abl_serial; /* the ablation the numbers are computed with */
    int n_ablated;
    int has_base;        /* with heads off: the predictions without the ablation */
    float base_p[LM_TOP_K]; /* pred_ids' probabilities with every head on */
    int base_top;        /* the most likely token with every head on */
    float base_top_p, base_top_p_abl; /* its probability then, and with the heads off */
    long long computed;       /* the state's rt->n_computed after this request's forwards */
    long long computed_plain; /* the plain state's (heads off), or -1: none */
    int rc;
    char msg[sizeof((AttnErr *)0)->msg];
} Result;

typedef struct ModelSource {
    MapsShown ms;
    ModelOpened *g;       /* the model; its state g->lm is the worker's while it runs */
    Background *bg;
    BpeIds ids;          /* the text's tokens now (an encoder-decoder's: the source's) */
    BpeIds tgt;          /* an encoder-decoder's decoder ids: its start token, then the
                            second bar's (the target's) tokens but the last */
    int group;           /* an encoder-decoder's maps asked for (OptGroup; Ctrl+X) */
    int group_auto;      /* 1 until a group is chosen (--group, Ctrl+X, a session's): the
                            group follows the target, cross-attention once there is one,
                            the encoder's before (encwin_set_keys) */
    struct {             /* a session's picks waiting for its group's maps (the encoder's
                            are shown when it opens: fewer layers, other rows) */
        int group;       /* -1: none waiting */
        int layer, head, rollout, grid_layer, grid_head, query, key;
    } pending;
    int group_shown;     /* the group of the maps shown (the worker's answer may be on its way) */
    int T_maps;          /* tokens of the maps shown */
    int stale;           /* the maps are older than the text */
    int bar_said[2];     /* the status bar's error is the source's (0) or target's (1) bar's
                            own (its text refused or cut): gone once that bar's text is
                            taken whole (bar_said_clear) */
    int asked_pred, asked_i, asked_j;
    int follow_end;      /* the query was the last row when the text changed: it stays
                            the last as the new maps come (what comes next follows typing) */
    int follow_row;      /* the query row it was then (another: the user moved it) */
    Result *last;        /* the newest result taken: vectors, predictions */
    Lm *plain;           /* the worker's: while heads are off, a second state (lm_twin of
                            g->lm) with every head on (model_explore.c) */
    int slow_ms;         /* ATTNVIZ_TEST_SLOW_LAYERS_MS when shown: each layer made that much
                            slower (the tests of the partial maps, on a model too small to need them) */
    unsigned char *ablated; /* L × H: the heads switched off (Ctrl+K, --ablate) */
    int n_ablated, ablate_mean;
    unsigned abl_serial; /* one more with each change: a result's own tells if it is current */
    int lens_shown;      /* the panel shows the logit lens (Ctrl+R) */
    GenSettings gs;      /* Ctrl+G: greedy, or the command line's --sample settings */
    Prng prng;           /* the sampling's draws so far */
    int gen_left;        /* tokens still to generate (Ctrl+Shift+G: ten) */
    int gen_start, gen_end; /* ids[gen_start, gen_end) were generated (-1: none) */
    char *gen_text;      /* the bar's text when generation started */
    int gen_view;        /* the generated token stepped to (Ctrl+Left/Right), or -1 */
    char panel[12000];   /* what comes next, or the logit lens (a row a layer) */
    char inside[800];    /* inside the shown head: the query → key's dot product */
    char what[300];
} ModelSource;

/* ---- model_source.c ---- */

/* Bar b's text was taken whole: its refusal or cut no longer stands, so
 * the status bar's error goes if it was that bar's. */
void bar_said_clear(AppState *a, ModelSource *s, int b);

/* Ask the worker for the text's maps and the panel's numbers (and the next
 * token while a generation waits for one). */
void lmsrc_submit(AppState *a);

/* ---- model_encwin.c: an encoder-decoder (issue 36) ---- */

/* Its groups' names (OptGroup's order) as the title and status bar say them. */
extern const char *const encwin_group_names[3];
/* Do a's and b's maps hold the same group of the same target? */
int encwin_same_group(const Result *a, const Result *b);
/* Are r's maps of another group or target than s asks for now? (0 for a
 * model that is not an encoder-decoder.) */
int encwin_group_stale(const ModelSource *s, const Result *r);
/* The Imported of r's maps (owned from now on), its group's labels: rows
 * the target's for the decoder and cross-attention, columns the source's
 * for cross-attention. NULL on error (err set). */
Imported *encwin_imported(const ModelSource *s, const Result *r, RtMaps *maps, AttnErr *err);
/* The query → key the panel looks inside for the group asked for: the
 * positions (the query's in the rows' side, the key's in the columns')
 * of the selected row and focused column, or with no column focused the
 * query itself (self-attention) or the row's strongest key (cross). */
void encwin_pair(const AppState *a, const ModelSource *s, int *i, int *j);
/* On the worker, after a forward: the shape of group's queries and keys
 * (layers, heads, head size; the queries' and keys' positions), the query
 * of position i and the key of position j of layer l, head h (d_head
 * floats in the state), the attention layer l's scores had: a model's
 * (lm_query's: an encoder-decoder's encoder) for GROUP_ENCODER, its
 * decoder's self-attention for GROUP_DECODER, for GROUP_CROSS the cross
 * queries of the target and the cross keys of the source (rt_cross_map's
 * floats). */
void encwin_shape(const Lm *lm, int group, int T, int *L, int *H, int *dh, int *Tq, int *Tk);
const float *encwin_query(const Lm *lm, int group, int l, int h, int i);
const float *encwin_key(const Lm *lm, int group, int l, int h, int j);
const RtAttn *encwin_attn(const Lm *lm, int group, int l);
/* Inside the shown head for the panel (s->inside): the selected query →
 * key's q · k, its score (the layer's scalings, T5's bias), its weight
 * (the shown map's cell: the softmax of the row), the largest terms; or
 * what to pick. */
void encwin_inside_text(ModelSource *s);
/* The shown head's query and key (d floats each) of the last result, for
 * the bars: 0, or -1 when there are none for what is shown. */
int encwin_inside_vectors(const ModelSource *s, const float **q, const float **k, int *d);
/* The second bar (the target) changed: the decoder's ids (the group
 * following it while none is chosen), then the worker. */
void encwin_set_keys(AppState *a);
/* The heatmap title's source: the model and the group shown (without a
 * target, why it is the encoder's) into out (n bytes). */
void encwin_what(const AppState *a, char *out, size_t n);
/* Ctrl+X (dir +1) / Ctrl+Shift+X (-1): the next / previous group. */
void encwin_group_step(AppState *a, int dir);
/* The control bar: the maps' controls and the group's button. */
void encwin_controls(AppState *a);
/* r's maps about to replace the shown (before = 1), or just shown (0): a
 * session's layer, head and selection applied once its group's arrive. */
void encwin_restore(AppState *a, const Result *r, int before);
/* Sessions: explore's part, then the target and the group. */
void encwin_session_out(const AppState *a, AttnSession *sn);
void encwin_session_in(AppState *a, const AttnSession *sn);

/* ---- model_explore.c ---- */

/* The source's generation settings (--sample's), draws (--seed's) and
 * heads switched off (--ablate's, already in g's model) at its start. */
void explore_init(ModelSource *s, const Options *o);
/* On the worker: the request's heads switched off in lm (a change resets
 * its state). 0 or an error. */
int explore_sync_ablation(Lm *lm, const Request *q, AttnErr *err);
/* On the worker, after the request's forward and predictions: the next
 * token picked (q->gen), the logit lens (q->lens), with heads off the
 * predictions with every head on (the forward of *plain, a second state
 * made here while heads are off and freed here when none are; cancellable
 * by hooks). */
void explore_worker(Lm *lm, Lm **plain, const Request *q, Result *r, const LmHooks *hooks);
/* The generated tokens' labels in im marked, before its maps are picked. */
void explore_mark_generated(const ModelSource *s, Imported *im, const Result *r);
/* The token r picked appended to the text; the next asked for, or why it stops said. */
void explore_gen_append(AppState *a, ModelSource *s, const Result *r);
/* The panel's predictions / logit lens into p (n bytes); the bytes written. */
size_t explore_predictions_text(const ModelSource *s, const Result *r, char *p, size_t n);
size_t explore_lens_text(const ModelSource *s, const Result *r, char *p, size_t n);
/* "L1 H4, L2 H1": the heads switched off. */
void explore_ablated_list(const ModelSource *s, char *out, size_t cap);
/* Ctrl+G, Esc, Ctrl+Left/Right, Ctrl+K, Ctrl+R: 1 when act was one of them. */
int explore_apply(AppState *a, const AppAction *act);
/* The session's part: the heads switched off, how, the lens shown. */
void explore_session_out(const AppState *a, AttnSession *sn);
void explore_session_in(AppState *a, const AttnSession *sn);

#endif
