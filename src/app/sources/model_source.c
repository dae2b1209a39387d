#define _DEFAULT_SOURCE
/* The model source (issues 25, 27): a language model computed here, of any
 * architecture lm.h knows (GPT-2, ...), from a Hugging Face folder or its
 * cache, its text tokenized by its BPE (core/bpe.c) and run on a
 * worker thread (background.h): every layer × head map follows the text as
 * it is typed, the key/value cache of the unchanged prefix kept. Its maps
 * are shown as layers × heads (maps_shown.c); its own panel says what comes
 * next (the 10 most likely tokens after the selected position) and what
 * happens inside the shown head for the selected query → key. */
#include "attnviz/app_state.h"
#include "attnviz/attn_write.h"
#include "attnviz/attnio.h"
#include "attnviz/background.h"
#include "attnviz/bpe.h"
#include "attnviz/bpe_files.h"
#include "attnviz/generate.h"
#include "attnviz/model_file.h"
#include "attnviz/lm.h"
#include "attnviz/import.h"
#include "attnviz/io.h"
#include "attnviz/maps_shown.h"
#include "attnviz/paths.h"
#include "attnviz/probe.h"
#include "attnviz/source.h"
#include "attnviz/wake.h"
#include "attnviz/model_source.h"
#include "../app_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model_internal.h"
#include "model_window.h"

/* ---- in the window --------------------------------------------------------------------- */

static void request_free(void *p)
{
    Request *r = p;
    if (r) {
        free(r->ids);
        free(r->tgt);
        free(r->ablated);
    }
    free(r);
}

static void result_free(void *p)
{
    Result *r = p;
    if (!r)
        return;
    free(r->ids);
    free(r->tgt);
    rt_maps_free(r->maps);
    free(r->thumbs);
    free(r->scores);
    free(r->q);
    free(r->k);
    free(r->attn);
    free(r->lens_ids);
    free(r->lens_p);
    free(r);
}

static Result *new_result(ModelOpened *g, const Request *q, int maps)
{
    Result *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->T = q->T;
    r->L = g->lm.info.n_layer;
    r->H = g->lm.info.n_head;
    r->C = g->lm.info.n_head * g->lm.info.d_head;
    r->gen_id = -1;
    r->lens_pos = -1;
    r->abl_serial = q->abl_serial;
    r->ids = malloc(sizeof(int) * (size_t)(q->T ? q->T : 1));
    AttnErr err = {0};
    if (maps) { /* R's norms beside the weights (a keystroke: its position's); an
                   architecture that records no W_O has none, its weights still shown */
        if (!g->lm.info.encdec || q->group == GROUP_ENCODER) {
            lm_value_norms(&g->lm, &err);
            r->maps = lm_maps_take(&g->lm);
        } else { /* the decoder's own state: its self-attention, or its cross-attention */
            r->maps = q->group == GROUP_CROSS ? rt_maps_take_cross(g->lm.rt) : rt_maps_take(g->lm.rt);
        }
    }
    r->group = q->group;
    r->Tt = q->Tt;
    if (q->Tt > 0 && (r->tgt = malloc(sizeof(int) * (size_t)q->Tt)))
        memcpy(r->tgt, q->tgt, sizeof(int) * (size_t)q->Tt);
    if (!r->ids || (maps && !r->maps) || (q->Tt > 0 && !r->tgt)) {
        result_free(r);
        return NULL;
    }
    memcpy(r->ids, q->ids, sizeof(int) * (size_t)q->T);
    return r;
}

/* The largest copy of queries and keys a partial result may hold (bytes). */
#define PARTIAL_COPY_MAX (128.0 * 1024 * 1024)

typedef struct Hook {
    BgJob *job;
    double t0, posted;   /* the forward's start, the last partial result's */
    int slow_ms;         /* the source's slow_ms */
    ModelOpened *g;
    const Request *q;
    ModelSummaries sum;
    int summarised;      /* layers the summaries hold (an encoder-decoder's encoder on an
                            unchanged source runs none: the window makes them) */
} Hook;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int hook_cancel(void *user)
{
    return bg_stale(((Hook *)user)->job);
}

/* r's copies of the summaries so far (none when memory is short). */
static void summaries_give(const ModelSummaries *m, Result *r)
{
    r->thumbs = model_summaries_copy(m, &r->scores);
    r->thumb_side = m->side;
    r->thumb_norms = m->norms;
}

/* The vectors and predictions of a finished forward into r: the query
 * and key of the group asked for (an encoder-decoder's decoder or cross
 * group: its own state's). */
static void finish_result(ModelOpened *g, const Request *q, Result *r)
{
    const Lm *lm = &g->lm;
    int L, H, dh, Tq, Tk;
    encwin_shape(lm, q->group, r->T, &L, &H, &dh, &Tq, &Tk);
    int C = H * dh;
    r->vL = L;
    r->vH = H;
    r->C = C;
    r->sel_i = q->sel_i;
    r->sel_j = q->sel_j;
    if (q->sel_i >= 0 && q->sel_i < Tq && q->sel_j >= 0 && q->sel_j < Tk && (r->q = malloc(sizeof(float) * L * C)) &&
        (r->k = malloc(sizeof(float) * L * C)) && (r->attn = malloc(sizeof *r->attn * L)))
        for (int l = 0; l < L; l++) {
            r->attn[l] = *encwin_attn(lm, q->group, l);
            for (int h = 0; h < H; h++) {
                memcpy(r->q + (size_t)l * C + h * dh, encwin_query(lm, q->group, l, h, q->sel_i), sizeof(float) * dh);
                memcpy(r->k + (size_t)l * C + h * dh, encwin_key(lm, q->group, l, h, q->sel_j), sizeof(float) * dh);
            }
        }
    r->pred_pos = q->pred_pos;
    r->tgt_last = q->Tt > 0 ? q->tgt[q->Tt - 1] : -1;
    if (q->Tt > 0 && q->pred_pos >= 0) { /* an encoder-decoder: after the decoder's last position */
        AttnErr err = {0};
        int k = g->lm.info.n_vocab < LM_TOP_K ? g->lm.info.n_vocab : LM_TOP_K;
        if (lm_top_k(&g->lm, q->Tt - 1, k, r->pred_ids, r->pred_p, &err) == 0)
            r->n_pred = k;
    } else if (q->pred_pos >= 0 && q->pred_pos < r->T) {
        AttnErr err = {0};
        int k = g->lm.info.n_vocab < LM_TOP_K ? g->lm.info.n_vocab : LM_TOP_K;
        if (lm_top_k(&g->lm, q->pred_pos, k, r->pred_ids, r->pred_p, &err) == 0)
            r->n_pred = k;
    }
}

/* A slow forward shows its layers as they finish: after a layer, once the
 * forward has run for a tenth of a second, the maps so far (the layers not
 * yet done keep the last text's numbers; the window draws them dimmed). */
static void hook_layer(void *user, int layer)
{
    Hook *h = user;
    if (h->slow_ms > 0)
        SDL_Delay((Uint32)h->slow_ms);
    if (h->q->group != GROUP_ENCODER && h->g->lm.info.encdec)
        return; /* the layers are the encoder's: the decoder's and cross maps come whole */
    if (h->q->want_maps) {
        model_summaries_layer(&h->sum, &h->g->lm, layer);
        h->summarised++;
    }
    /* a partial result at most every half second, and only while a copy of
     * the queries and keys is small: each holds one, beside the shown
     * maps' and the state (Llama-3.2-1B's heads at 4096 tokens: 671 MB a
     * copy; those maps stay dimmed until the forward ends) */
    const LmInfo *c = &h->g->lm.info;
    double t = now_s(), copy = 4.0 * c->n_layer * h->q->T * (c->n_head + c->n_kv_head) * c->d_head;
    if (!h->q->want_maps || layer + 1 >= c->n_layer || t - h->t0 < 0.1 || t - h->posted < 0.5 ||
        copy > PARTIAL_COPY_MAX)
        return; /* (a request for the panel's numbers alone posts no maps) */
    h->posted = t;
    Result *r = new_result(h->g, h->q, 1);
    if (!r)
        return;
    summaries_give(&h->sum, r);
    r->layers_done = layer + 1;
    r->pred_pos = -1;
    bg_post(h->job, r, result_free, 0);
}

/* On the worker: the forward of the request, then its result (with the
 * next token picked, the logit lens, the predictions without the ablation
 * when asked). */
static void run(void *ctx, void *request, BgJob *job)
{
    ModelSource *src = ctx;
    ModelOpened *g = src->g;
    Request *q = request;
    Hook h = {job, now_s(), 0.0, src->slow_ms, g, q, {0}, 0};
    LmHooks hooks = {hook_cancel, hook_layer, &h, NULL}, cancel_only = {hook_cancel, NULL, &h, NULL};
    AttnErr err = {0};
    int own = !g->lm.info.encdec || q->group == GROUP_ENCODER; /* the layer hook's maps are the shown ones */
    if (own && q->want_maps && model_summaries_init(&h.sum, &g->lm.info, q->ids, q->T) == 0) /* without memory: */
        h.sum.norms = q->norms;                                                       /* the window makes them */
    int rc = explore_sync_ablation(&g->lm, q, &err);
    if (rc == 0)
        rc = lm_forward_target(&g->lm, q->ids, q->T, q->tgt, q->Tt, &hooks, &err);
    Result *r = rc == -ATTN_E_CANCELLED ? NULL : new_result(g, q, rc == 0 && q->want_maps);
    if (r && r->maps && own && h.summarised >= g->lm.info.n_layer)
        summaries_give(&h.sum, r);
    model_summaries_free(&h.sum);
    if (!r)
        return;
    r->rc = rc;
    snprintf(r->msg, sizeof r->msg, "%s", err.msg);
    r->layers_done = rc == 0 ? r->L : 0;
    if (rc == 0) {
        finish_result(g, q, r);
        explore_worker(&g->lm, &src->plain, q, r, &cancel_only);
    }
    bg_post(job, r, result_free, 1);
}

/* The text's position of the shown map's row (keys = 0) or column i: the
 * same unless tokens are hidden (E), whose rows and columns the map leaves
 * out; -1 for none. */
static int text_pos(const ModelSource *s, int i, int keys)
{
    const Imported *im = s->ms.imp;
    const unsigned char *drop = im ? (keys ? im->k_drop : im->q_drop) : NULL;
    int n = im ? (keys ? im->f.Tk : im->f.Tq) : 0;
    if (i < 0 || !drop)
        return i;
    for (int p = 0; p < n; p++)
        if (!drop[p] && i-- == 0)
            return p;
    return -1;
}

/* The shown row of the text's position p (E hides special tokens' rows);
 * -1 for a hidden one. */
static int shown_row(const ModelSource *s, int p)
{
    const Imported *im = s->ms.imp;
    if (p < 0 || !im || !im->q_drop)
        return p;
    if (p >= im->f.Tq || im->q_drop[p])
        return -1;
    int row = 0;
    for (int k = 0; k < p; k++)
        row += !im->q_drop[k];
    return row;
}

/* The row the window follows as the text is typed, of ids[0..T) shown in
 * `shown` rows: an encoder's first blank (its mask token: what fills it),
 * else the last row (what comes next). */
static int follow_target(const ModelSource *s, const int *ids, int T, int shown)
{
    int blank = shown_row(s, model_mask_pos(s->g, ids, T));
    return blank >= 0 && blank < shown ? blank : shown - 1;
}

/* The position whose next tokens the panel shows: the selected row's, or
 * the last (an encoder's first blank). */
static int pred_pos(const AppState *a, const ModelSource *s)
{
    if (s->follow_end && a->vs.query == s->follow_row) {
        int blank = model_mask_pos(s->g, s->ids.id, s->ids.n);
        return blank >= 0 ? blank : s->ids.n - 1;
    }
    int p = text_pos(s, a->vs.query, 0);
    return p >= 0 && p < s->ids.n ? p : s->ids.n - 1;
}

/* Ask the worker for the text's maps (and the panel's numbers). */
void lmsrc_submit(AppState *a)
{
    ModelSource *s = a->src;
    int T = s->ids.n;
    if (T == 0)
        return;
    Request *q = calloc(1, sizeof *q);
    if (!q || !(q->ids = malloc(sizeof(int) * (size_t)T))) {
        free(q);
        app_status(a, 1, "out of memory");
        return;
    }
    memcpy(q->ids, s->ids.id, sizeof(int) * (size_t)T);
    q->T = T;
    if (s->g->lm.info.encdec && s->tgt.n > 0) { /* the decoder's ids, the target bar's */
        if (!(q->tgt = malloc(sizeof(int) * (size_t)s->tgt.n))) {
            request_free(q);
            app_status(a, 1, "out of memory");
            return;
        }
        memcpy(q->tgt, s->tgt.id, sizeof(int) * (size_t)s->tgt.n);
        q->Tt = s->tgt.n;
    }
    q->norms = s->ms.imp && s->ms.imp->matrix == MODEL_NORMS;
    /* a new selection on the maps shown: the predictions and vectors only (a
     * forward of unchanged ids computes nothing; the maps are not copied) */
    q->group = s->group;
    q->want_maps = !(s->last && s->last->layers_done == s->last->L && s->last->T == T && s->T_maps == T &&
                     s->last->abl_serial == s->abl_serial &&
                     memcmp(s->last->ids, q->ids, sizeof(int) * (size_t)T) == 0 && !encwin_group_stale(s, s->last));
    q->gen = s->gen_left > 0; /* a generation waiting for its token asks again */
    q->gs = s->gs;
    q->prng = s->prng;
    q->lens = s->lens_shown;
    q->ablate_mean = s->ablate_mean;
    q->abl_serial = s->abl_serial;
    size_t LH = (size_t)s->g->lm.info.n_layer * s->g->lm.info.n_head;
    if (s->n_ablated && (q->ablated = malloc(LH)))
        memcpy(q->ablated, s->ablated, LH);
    else if (s->n_ablated) {
        request_free(q);
        app_status(a, 1, "out of memory");
        return;
    }
    q->pred_pos = pred_pos(a, s);
    q->sel_i = q->pred_pos;
    int key = text_pos(s, a->vs.key, 1);
    q->sel_j = key >= 0 && key < T ? key : q->sel_i;
    if (s->g->lm.info.encdec && s->group != GROUP_ENCODER) /* a target row, a target or source key */
        encwin_pair(a, s, &q->sel_i, &q->sel_j);
    s->asked_pred = q->pred_pos;
    s->asked_i = q->sel_i;
    s->asked_j = q->sel_j;
    bg_submit(s->bg, q, request_free);
}

void bar_said_clear(AppState *a, ModelSource *s, int b)
{
    if (s->bar_said[b] && a->status_err) {
        a->status_err = 0;
        a->status[0] = '\0';
        a->dirty = 1;
    }
    s->bar_said[b] = 0;
}

/* The bar's text changed: its tokens, then the worker. */
static void lmsrc_set_text(AppState *a)
{
    ModelSource *s = a->src;
    ModelOpened *g = s->g;
    int shown = s->ms.imp ? s->ms.imp->Tq : 0;
    if (!(s->follow_end && a->vs.query == s->follow_row)) /* not already following */
        s->follow_end = shown > 0 && (a->vs.query == shown - 1 ||
                                      (s->last && a->vs.query == follow_target(s, s->last->ids,
                                                                               s->last->T, shown)));
    s->follow_row = a->vs.query;
    s->gen_left = 0; /* typing stops a generation; its tokens are the text's now */
    s->gen_start = s->gen_end = s->gen_view = -1;
    /* a text the tokenizer refuses is said; the maps of the last it took stay */
    BpeIds ids = {0};
    AttnErr err = {0};
    if (model_encode(g, a->text, a->text_len, &ids, &err) < 0) {
        bpe_ids_free(&ids);
        app_status(a, 1, "%s", err.msg);
        s->bar_said[0] = 1;
        return;
    }
    bpe_ids_free(&s->ids);
    s->ids = ids;
    bar_said_clear(a, s, 0);
    /* characters the vocabulary lacks are said, not dropped silently */
    char left[1000];
    int n_left = model_left_out_say(g, a->text, a->text_len, &s->ids, left, sizeof left);
    int max = g->lm.info.n_positions;
    if (s->ids.n > max) {
        app_status(a, 1, "%d tokens: %s takes %d (n_positions); the first %d are shown", s->ids.n, g->name, max,
                   max);
        s->bar_said[0] = 1;
        s->ids.n = max;
    } else if (n_left > 0 && s->ids.n > 0) {
        app_status(a, 0, "%s", left);
    } else if (!a->status_err) {
        a->status[0] = '\0';
    }
    for (int i = 0; i < s->ids.n; i++)
        if (s->ids.id[i] >= g->lm.info.n_vocab) {
            app_status(a, 1, "token id %d is not a row of %s (%d rows)", s->ids.id[i], g->lm.info.embed_name,
                       g->lm.info.n_vocab);
            s->ids.n = i;
            break;
        }
    s->stale = s->ids.n != s->T_maps || memcmp(s->ids.id, s->last ? s->last->ids : s->ids.id,
                                               sizeof(int) * (size_t)s->ids.n) != 0;
    char list[600];
    if (s->ids.n == 0 && a->text_len > 0 && model_left_out(g, a->text, a->text_len, &s->ids, list, sizeof list) > 0)
        app_status(a, 0, "no tokens: %s's vocabulary has no token for %s (the maps are the last text's)", g->name,
                   list);
    else if (s->ids.n == 0)
        app_status(a, 0, "type some text: the maps are the last text's");
    lmsrc_submit(a);
    a->dirty = 1;
}

/* Another position for the predictions or the step asked for: cheap, the
 * maps are kept (an encoder-decoder's decoder or cross group: the pair
 * encwin_pair picks, which new maps may move). */
static void ask_moved(AppState *a, ModelSource *s)
{
    int pair_i = -1, pair_j = -1, pair = s->g->lm.info.encdec && s->group != GROUP_ENCODER;
    if (pair)
        encwin_pair(a, s, &pair_i, &pair_j);
    if (s->ids.n > 0 && (pair ? s->asked_i != pair_i || s->asked_j != pair_j
                              : s->asked_pred != pred_pos(a, s) ||
                                    (a->vs.key >= 0 && s->asked_j != text_pos(s, a->vs.key, 1))))
        lmsrc_submit(a);
}

/* The newest result: its maps shown (the picks kept), its numbers kept. */
static int lmsrc_tick(AppState *a, Uint32 now_ms, int *wait_ms)
{
    ModelSource *s = a->src;
    BgResult br;
    (void)now_ms;
    (void)wait_ms;
    ask_moved(a, s);
    if (!bg_take(s->bg, &br))
        return 0;
    Result *r = br.data;
    if (r->rc < 0) {
        app_status(a, 1, "%s: %s", s->g->name, r->msg[0] ? r->msg : attn_strerror(r->rc));
        result_free(r);
        return 1;
    }
    int same = r->T == s->T_maps && s->last && s->last->layers_done == r->layers_done &&
               s->last->abl_serial == r->abl_serial && memcmp(r->ids, s->last->ids, sizeof(int) * (size_t)r->T) == 0 &&
               encwin_same_group(r, s->last);
    if (!same && r->maps) {
        AttnErr err = {0};
        RtMaps *maps = r->maps;
        r->maps = NULL;
        Imported *im = encwin_imported(s, r, maps, &err);
        if (im) /* generated tokens marked in the labels */
            explore_mark_generated(s, im, r);
        if (im) { /* the worker's thumbnails and scores: nothing to make here */
            im->pre_thumbs = r->thumbs;
            im->pre_side = r->thumb_side;
            im->pre_norms = r->thumb_norms;
            im->pre_scores = r->scores;
            r->thumbs = NULL;
            r->scores = NULL;
        }
        encwin_restore(a, r, 1);
        if (!im || maps_shown_replace(a, im) < 0) {
            app_status(a, 1, "%s", im || !err.msg[0] ? "out of memory" : err.msg);
            result_free(r);
            return 1;
        }
        s->T_maps = r->T;
        s->group_shown = r->group;
        if (a->vs.query >= s->ms.imp->Tq) /* another group: its own rows and columns */
            a->vs.query = s->ms.imp->Tq - 1;
        if (a->vs.key >= s->ms.imp->Tk)
            a->vs.key = s->ms.imp->Tk - 1;
        if (s->follow_end && a->vs.query == s->follow_row && s->ms.imp->Tq > 0) {
            a->vs.query = s->follow_row = follow_target(s, r->ids, r->T, s->ms.imp->Tq);
            s->follow_end = !(br.last && r->T == s->ids.n);
        }
        encwin_restore(a, r, 0);
    }
    if (s->follow_end && a->vs.query != s->follow_row)
        s->follow_end = 0; /* the user picked another row */
    result_free(s->last);
    s->last = r;
    s->stale = s->ids.n != r->T || memcmp(s->ids.id, r->ids, sizeof(int) * (size_t)r->T) != 0 ||
               r->layers_done < r->L || r->abl_serial != s->abl_serial || encwin_group_stale(s, r);
    if (!br.last) /* a partial result: the predictions and vectors are the last whole one's */
        r->n_pred = 0;
    a->dirty = 1;
    if (br.last && r->gen_id >= 0 && s->gen_left > 0 && !s->stale)
        explore_gen_append(a, s, r);
    else if (s->g->lm.info.encdec && s->group != GROUP_ENCODER)
        ask_moved(a, s); /* the group's own rows and columns now: its pair */
    return 1;
}

/* What comes next after the selected position (an encoder's: what fills
 * it), and inside the shown head. */
static void panel_text(AppState *a)
{
    ModelSource *s = a->src;
    const Result *r = s->last;
    char *p = s->panel;
    size_t n = sizeof s->panel, u = 0;
#define PUT(...) (u += (size_t)snprintf(p + u, u < n ? n - u : 0, __VA_ARGS__), u = u < n ? u : n)
    int fills = s->g->lm.info.masked_lm;
    if (!r || r->pred_pos < 0 || r->n_pred == 0) {
        PUT(fills ? "What fills the blank: computing\xE2\x80\xA6" : "What comes next: computing\xE2\x80\xA6");
    } else if (s->lens_shown) {
        u = explore_lens_text(s, r, p, n);
    } else {
        u = explore_predictions_text(s, r, p, n);
    }
#undef PUT
    encwin_inside_text(s); /* inside the shown head: beside the vectors' bars, or under the text */
}

static MapsShown *lmsrc_maps(const AppState *a)
{
    ModelSource *s = a->src;
    return &s->ms;
}

static void lmsrc_present(AppState *a)
{
    ModelSource *s = a->src;
    panel_text(a);
    const LmInfo *info = &s->g->lm.info;
    if (info->n_kv_head > 0 && info->n_kv_head < info->n_head) /* grouped-query heads: bracketed in G */
        snprintf(s->what, sizeof s->what, "of %.200s (%d heads share %d key-value head%s)", s->g->name,
                 info->n_head, info->n_kv_head, info->n_kv_head == 1 ? "" : "s");
    else if (info->encdec) /* the group shown */
        encwin_what(a, s->what, sizeof s->what);
    else
        snprintf(s->what, sizeof s->what, "of %s", s->g->name);
    maps_shown_present(a, s->panel, s->what);
    a->vs.bar_label = "Text";
    if (info->encdec) { /* the source (the encoder's text) and the target (the decoder's) */
        a->vs.bar_label = "Source";
        a->vs.keys_bar = 1;
        a->vs.keys_label = "Target";
        a->vs.keys_placeholder = "the target, the decoder's text: cross-attention shown once typed "
                                 "\xE2\x80\x94 Tab or Shift+Enter";
    }
    a->vs.step_label = s->lens_shown ? "Logit lens" : "Next token";
    a->vs.ablated = s->n_ablated ? s->ablated : NULL;
    if (s->n_ablated) { /* the title and the status bar say which heads are off */
        char list[300];
        explore_ablated_list(s, list, sizeof list);
        size_t k = strlen(a->vs.title);
        snprintf(a->vs.title + k, sizeof a->vs.title - k, " with %s %s", list,
                 s->ablate_mean ? "mean-ablated" : "switched off");
        snprintf(a->vs.status_facts, sizeof a->vs.status_facts, "%.300s", a->vs.title);
    }
    a->vs.sentence = a->text;
    a->vs.stale = s->stale;
    a->vs.inside_caption = s->inside[0] && !s->lens_shown ? s->inside : NULL; /* the lens: the whole panel */
    a->vs.kv_group = info->n_kv_head > 0 && info->n_kv_head < info->n_head ? info->n_head / info->n_kv_head : 0;
    /* inside the shown head: the vectors as bars beside the text */
    if (!s->lens_shown && encwin_inside_vectors(s, &a->vs.inside_q, &a->vs.inside_k, &a->vs.inside_d) < 0)
        a->vs.inside_q = a->vs.inside_k = NULL;
}

static void lmsrc_shown_size(const AppState *a, int *Tq, int *Tk)
{
    maps_shown_size(lmsrc_maps(a), Tq, Tk);
}

static const char *lmsrc_title(const AppState *a)
{
    return a->text;
}

static int lmsrc_save(AppState *a, const char *path)
{
    ModelSource *s = a->src;
    return maps_shown_save(a, s->g->dir, a->text, path);
}

static int lmsrc_takes(AppActionKind k)
{
    return maps_shown_takes(k) || k == ACT_COMPARE || k == ACT_FOCUS_SENTENCE || k == ACT_GENERATE ||
           k == ACT_GEN_STEP || k == ACT_ABLATE || k == ACT_LOGIT_LENS || k == ACT_ENCDEC_GROUP;
}

static int lmsrc_apply(AppState *a, const AppAction *act)
{
    if (act->kind == ACT_ENCDEC_GROUP) {
        encwin_group_step(a, act->i);
        return 0;
    }
    if (explore_apply(a, act))
        return 0;
    if (maps_shown_apply(a, act) == 0)
        return 0;
    if (act->kind == ACT_FOCUS_SENTENCE ||
        (act->kind == ACT_FOCUS_KEYS && ((ModelSource *)a->src)->g->lm.info.encdec))
        return -1; /* the bars are the app's (an encoder-decoder's second: its target) */
    if (!source_owns(act->kind) || act->kind == ACT_COMPARE)
        return -1;
    if (act->kind != ACT_DRAG_END)
        app_status(a, 0, "%s's weights are its own: type in the bar, L, H, O, G pick what to show",
                   ((ModelSource *)a->src)->g->name);
    return 0;
}

static void lmsrc_close(AppState *a)
{
    ModelSource *s = a->src;
    if (!s)
        return;
    bg_destroy(s->bg); /* joins: the states are the worker's until then */
    lm_close(s->plain);
    free(s->plain);
    maps_shown_free(&s->ms);
    model_opened_free(s->g);
    bpe_ids_free(&s->ids);
    bpe_ids_free(&s->tgt);
    result_free(s->last);
    free(s->ablated);
    free(s->gen_text);
    free(s);
    a->src = NULL;
}

extern const SourceKind source_model;

/* Show what the command line (or open) computed: its maps now, the worker
 * for the text as it changes. */
static int lmsrc_show(AppState *a, void *opened)
{
    ModelOpened *g = opened;
    ModelSource *s = calloc(1, sizeof *s);
    Imported *im = g->im;
    g->im = NULL;
    if (!s || !im || maps_shown_init(&s->ms, im) < 0) {
        free(s);
        model_opened_free(g);
        app_status(a, 1, "out of memory");
        return -ATTN_E_NOMEM;
    }
    s->g = g;
    const char *slow = getenv("ATTNVIZ_TEST_SLOW_LAYERS_MS");
    s->slow_ms = slow ? atoi(slow) : 0; /* read here, before the worker starts */
    s->bg = bg_create(run, s, app_wake, NULL);
    if (!s->bg) {
        maps_shown_free(&s->ms);
        free(s);
        model_opened_free(g);
        app_status(a, 1, "cannot start the worker thread");
        return -ATTN_E_NOMEM;
    }
    s->T_maps = im->f.Tq;
    s->asked_pred = s->asked_i = s->asked_j = -2;
    explore_init(s, a->opt);
    /* the maps shown are these ids': the worker's first run makes the
     * predictions and vectors alone */
    Request now = {.ids = g->ids.id, .T = g->ids.n, .pred_pos = -1, .sel_i = -1, .sel_j = -1,
                   .group = GROUP_ENCODER}; /* an encoder-decoder's maps now: lm_forward's, its encoder's */
    s->group = s->group_shown = GROUP_ENCODER;
    s->pending.group = -1;
    if ((s->last = new_result(g, &now, 0)))
        s->last->layers_done = s->last->L, s->last->pred_pos = -1;
    app_show_source(a, &source_model, s);
    maps_shown_start(a, g->name);
    if (g->lm.info.encdec) { /* the second bar: the target (--target's), the decoder's text */
        const char *target = a->opt && a->opt->target ? a->opt->target : "";
        s->group_auto = !(a->opt && a->opt->group_set); /* cross-attention once there is a target */
        if (!s->group_auto) /* --group: those maps asked for at once */
            s->group = a->opt->group;
        if (app_keys_store(a, target) == 0)
            encwin_set_keys(a);
    }
    app_set_sentence(a, g->text ? g->text : ""); /* the bar; its tokens go to the worker */
    /* what comes after the text; an encoder's first blank */
    a->vs.query = s->ids.n > 0 ? follow_target(s, s->ids.id, s->ids.n, s->ids.n) : 0;
    return 0;
}

/* A model folder (config.json beside model.safetensors or pytorch_model.bin),
 * or a GGUF file. */
static int lmsrc_accepts(const char *path)
{
    char buf[4200];
    struct stat st;
    if (model_is_gguf(path))
        return 1;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    snprintf(buf, sizeof buf, "%s/config.json", path);
    return stat(buf, &st) == 0;
}

/* Ctrl+O or a dropped folder: the model on the bar's text. Where there
 * are threads it opens on its own (model_opening.c: the window stays
 * usable, the tick shows it); on the one-thread page here, the read and
 * the first forward giving the page its thread back now and then
 * (bg_breathe). */
static int lmsrc_open(AppState *a, const char *path)
{
    ModelOpened *g;
    AttnErr err = {0};
    char buf[1200];
    if (bg_threaded())
        return model_opening_start(a, path, a->text ? a->text : "", a->text ? a->text_len : 0);
    if (model_open_window(path, a->text, a->text ? a->text_len : 0, NULL, &g, &err) < 0) {
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "cannot open: %s", buf);
        return -1;
    }
    return lmsrc_show(a, g);
}

/* ---- the induction probe (issue 26): random tokens twice, not a text ------------------------- */

static void lmsrc_probe_setup(const AppState *a, int *bos_id, int *vocab, int *max_T)
{
    const ModelSource *s = a->src;
    *bos_id = s->g->lm.info.bos_id;
    *vocab = s->g->lm.info.n_vocab;
    *max_T = s->g->lm.info.n_positions;
}

/* ids into *to (grown as needed). */
static int ids_set(BpeIds *to, const int *ids, int T)
{
    if (to->cap < T) {
        int *p = realloc(to->id, sizeof *p * (size_t)T);
        if (!p)
            return -ATTN_E_NOMEM;
        to->id = p;
        to->cap = T;
    }
    memcpy(to->id, ids, sizeof *ids * (size_t)T);
    to->n = T;
    return 0;
}

/* The worker runs the probe's ids in place of the text's; the bar shows
 * what they decode to (without being encoded again: random tokens need
 * not come back the same). */
static int lmsrc_probe(AppState *a, const int *ids, int T)
{
    ModelSource *s = a->src;
    char *text = NULL;
    size_t len = 0;
    if (T < 1 || T > s->g->lm.info.n_positions || ids_set(&s->ids, ids, T) < 0)
        return -ATTN_E_RANGE;
    if (bpe_decode(s->g->bpe, ids, T, 0, &text, &len) == 0 && app_text_reserve(a, len) == 0) {
        memcpy(a->text, text, len + 1);
        a->text_len = len;
        a->vs.cursor = (int)len;
    }
    free(text);
    s->stale = 1;
    lmsrc_submit(a);
    a->dirty = 1;
    return 0;
}

/* The command line's probe: the model on o's probe tokens, picked as
 * lmsrc_cli_open picks (g->ids the tokens, g->text what they decode to). */
static int lmsrc_cli_probe(const Options *o, const char *path, void **opened, AttnErr *err)
{
    ModelOpened *g;
    int ids[PROBE_MAX_TOKENS];
    *opened = NULL;
    int rc = model_open_path(path, 0, &g, err);
    if (rc == 0 && (rc = model_apply_ablation(g, o, err)) < 0)
        model_opened_free(g);
    if (rc < 0)
        return rc;
    const LmInfo *c = &g->lm.info;
    int T = probe_induction_tokens(ids, o->probe_n, c->bos_id, c->n_vocab, o->has_seed ? o->seed : 0);
    size_t len = 0;
    if (T < 1 || T > c->n_positions)
        rc = attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, path, 0,
                          "the induction probe's %d tokens (%d twice%s) are more than %s takes (n_positions "
                          "%d): --probe induction:N with N at most %d", T, o->probe_n,
                          c->bos_id >= 0 ? ", after the bos token" : "", g->name, c->n_positions,
                          (c->n_positions - (c->bos_id >= 0)) / 2);
    else if (ids_set(&g->ids, ids, T) < 0 || bpe_decode(g->bpe, ids, T, 0, &g->text, &len) < 0)
        rc = attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    if (rc == 0 && o->print != PRINT_TOKENS)
        rc = lm_forward(&g->lm, g->ids.id, T, NULL, err);
    int norms = o->matrix == MODEL_NORMS; /* --matrix norms: the probe's norms (its head scores, exports) */
    AttnErr nerr = {0}; /* the window's R: without them (no W_O recorded) the weights alone */
    if (rc == 0 && o->print != PRINT_TOKENS && (norms || !options_headless(o)) &&
        lm_value_norms(&g->lm, &nerr) < 0 && norms)
        rc = attn_err_set(err, nerr.code, path, 0, "%s", nerr.msg);
    if (rc == 0 && o->print != PRINT_TOKENS) {
        RtMaps *maps = lm_maps_take(&g->lm);
        g->im = maps ? model_maps_imported(g->bpe, g->name, maps, g->ids.id, T, c->n_layer, c->n_head, err) : NULL;
        rc = g->im ? 0 : maps ? -err->code : attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
        if (g->im)
            g->im->matrix = norms ? MODEL_NORMS : 0;
    }
    if (rc == 0)
        model_title_ablation(g, o);
    if (rc == 0 && g->im && o->query >= T)
        rc = attn_err_set(err, ATTN_E_RANGE, path, 0, "--query %d: the probe has %d tokens", o->query + 1, T);
    else if (rc == 0 && g->im && import_pick(g->im, o->layer, o->head, o->rollout, o->drop, err) < 0)
        rc = -err->code;
    if (rc < 0) {
        model_opened_free(g);
        return rc;
    }
    *opened = g;
    return 0;
}

const SourceKind source_model = {
    .name = "language model",
    .caps = SOURCE_TEXT | SOURCE_LAYERS,
    .takes = lmsrc_takes,
    .accepts = lmsrc_accepts,
    .open = lmsrc_open,
    .close = lmsrc_close,
    .set_text = lmsrc_set_text,
    .set_keys = encwin_set_keys,
    .apply = lmsrc_apply,
    .tick = lmsrc_tick,
    .present = lmsrc_present,
    .controls = encwin_controls,
    .shown_size = lmsrc_shown_size,
    .save = lmsrc_save,
    .title = lmsrc_title,
    .maps = lmsrc_maps,
    .snap = maps_shown_snap,
    .snap_free = maps_shown_snap_free,
    .snap_diff = maps_shown_snap_diff,
    .compare_hint = "the text, layer or head",
    .cli_open = lmsrc_cli_open,
    .cli_write = lmsrc_cli_write,
    .show = lmsrc_show,
    .cli_free = lmsrc_cli_free,
    .probe_setup = lmsrc_probe_setup,
    .probe = lmsrc_probe,
    .cli_probe = lmsrc_cli_probe,
    .session_out = encwin_session_out,
    .session_in = encwin_session_in,
};
