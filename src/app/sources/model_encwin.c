/* An encoder-decoder in the window (issue 36; model_window.h): the second
 * bar is the target (the decoder's text), its ids going to the worker with
 * the source's; Ctrl+X's three groups of maps (the encoder's, the
 * decoder's, cross-attention), each a copy of queries and keys the worker
 * hands over, cross-attention shown once there is a target until a group
 * is chosen; their part of sessions and of the control bar; inside a head
 * of any group (also a decoder-only model's: its one group). The worker
 * and the panels are model_source.c's. */
#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/lm.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "../app_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"
#include "model_window.h"

/* An encoder-decoder's groups (OptGroup's order), as the title and the
 * status bar name them. */
const char *const encwin_group_names[] = {"cross-attention (the target's queries \xC3\x97 the source's keys)",
                                          "the encoder's self-attention (the source)",
                                          "the decoder's self-attention (the target, causal)"};

/* Do a's and b's maps hold the same group of the same target? (An
 * encoder's are the source's alone.) */
int encwin_same_group(const Result *a, const Result *b)
{
    return a->group == b->group &&
           (a->group == GROUP_ENCODER ||
            (a->Tt == b->Tt && (!a->Tt || memcmp(a->tgt, b->tgt, sizeof(int) * (size_t)a->Tt) == 0)));
}

/* Are r's maps of another group than the one shown, or of another target
 * than the bar's (an encoder-decoder's decoder and cross groups)? */
int encwin_group_stale(const ModelSource *s, const Result *r)
{
    if (!s->g->lm.info.encdec)
        return 0;
    if (r->group != s->group)
        return 1;
    return s->group != GROUP_ENCODER &&
           (r->Tt != s->tgt.n || (r->Tt && memcmp(r->tgt, s->tgt.id, sizeof(int) * (size_t)r->Tt) != 0));
}

/* The Imported of r's maps (owned from now on): an encoder-decoder's
 * group labelled by its tokens, rows the target's for the decoder and
 * cross-attention, columns the source's for cross-attention. */
Imported *encwin_imported(const ModelSource *s, const Result *r, RtMaps *maps, AttnErr *err)
{
    const ModelOpened *g = s->g;
    if (!g->lm.info.encdec || r->group == GROUP_ENCODER)
        return model_maps_imported(g->bpe, g->name, maps, r->ids, r->T, r->L, r->H, err);
    const RtShape *d = &g->lm.rt->sh; /* the decoder's layers and heads */
    if (r->group == GROUP_DECODER)
        return model_maps_imported(g->bpe, g->name, maps, r->tgt, r->Tt, d->n_layer, d->n_head, err);
    return model_maps_imported_qk(g->bpe, g->name, maps, r->tgt, r->Tt, r->ids, r->T, d->n_layer, d->n_head, err);
}

/* An encoder-decoder's second bar (the target) changed: the decoder's ids,
 * then the worker (the decoder recomputed from its first changed token;
 * the source's encoder and cross keys kept). */
void encwin_set_keys(AppState *a)
{
    ModelSource *s = a->src;
    ModelOpened *g = s->g;
    if (!g->lm.info.encdec)
        return;
    AttnErr err = {0};
    if (model_decoder_ids(g, a->keys, a->keys ? a->keys_len : 0, &s->tgt, &err) < 0) {
        app_status(a, 1, "the target: %s", err.msg);
        s->bar_said[1] = 1;
        return;
    }
    bar_said_clear(a, s, 1);
    int follow = a->keys && a->keys_len > 0 ? GROUP_CROSS : GROUP_ENCODER;
    if (s->group_auto && s->group != follow) { /* as the command line's default once there is a target */
        s->group = follow;
        s->stale = 1;
        app_status(a, 0, follow == GROUP_CROSS
                         ? "%s (with a target; Ctrl+X: the encoder's, the decoder's)"
                         : "%s (no target: type one in the Target bar for cross-attention)",
                   encwin_group_names[follow]);
    }
    int max = g->lm.info.n_positions;
    if (s->tgt.n > max) {
        app_status(a, 1, "the target: %d tokens: %s takes %d (n_positions); the first %d are used", s->tgt.n,
                   g->name, max, max);
        s->bar_said[1] = 1;
        s->tgt.n = max;
    }
    for (int i = 0; i < s->tgt.n; i++)
        if (s->tgt.id[i] >= g->lm.info.n_vocab) {
            app_status(a, 1, "the target's token id %d is not a row of %s (%d rows)", s->tgt.id[i],
                        g->lm.info.embed_name, g->lm.info.n_vocab);
            s->tgt.n = i > 0 ? i : 1;
            break;
        }
    lmsrc_submit(a);
    a->dirty = 1;
}

void encwin_what(const AppState *a, char *out, size_t n)
{
    const ModelSource *s = a->src;
    int none = s->group_shown == GROUP_ENCODER && !(a->keys && a->keys_len > 0);
    snprintf(out, n, "of %.200s: %s", s->g->name,
             none ? "the encoder's self-attention (no target yet)" : encwin_group_names[s->group_shown]);
}

/* A session's part: explore's (heads off, the lens), an encoder-decoder's
 * target and group. */
void encwin_session_out(const AppState *a, AttnSession *sn)
{
    const ModelSource *s = a->src;
    explore_session_out(a, sn);
    sn->group = -1;
    if (!s->g->lm.info.encdec)
        return;
    sn->has_target = 1;
    snprintf(sn->target, sizeof sn->target, "%s", a->keys ? a->keys : "");
    sn->group = s->group;
}

void encwin_session_in(AppState *a, const AttnSession *sn)
{
    ModelSource *s = a->src;
    if (s->g->lm.info.encdec && sn->has_target && app_keys_store(a, sn->target) == 0)
        encwin_set_keys(a);
    if (s->g->lm.info.encdec && sn->group >= 0) {
        s->group = sn->group;
        s->group_auto = 0;
        if (sn->group != s->group_shown) /* its layer, head and rows when its maps come */
            s->pending.group = sn->group, s->pending.layer = sn->layer, s->pending.head = sn->head,
            s->pending.rollout = sn->rollout, s->pending.grid_layer = sn->grid_layer,
            s->pending.grid_head = sn->grid_head, s->pending.query = sn->query, s->pending.key = sn->key;
    }
    explore_session_in(a, sn); /* (asks the worker: the target's, the group's maps) */
}

void encwin_restore(AppState *a, const Result *r, int before)
{
    ModelSource *s = a->src;
    if (s->pending.group < 0 || r->group != s->pending.group || r->layers_done < r->L)
        return;
    if (before) { /* what maps_shown_replace keeps, clamped to the new maps */
        s->ms.layer = s->pending.layer;
        s->ms.head = s->pending.head;
        s->ms.rollout = s->pending.rollout;
        s->ms.grid_layer = s->pending.grid_layer >= 0 ? s->pending.grid_layer : 0;
        s->ms.grid_head = s->pending.grid_head >= 0 ? s->pending.grid_head : 0;
        return;
    }
    const Imported *im = s->ms.imp;
    if (s->pending.query >= 0 && s->pending.query < im->Tq) {
        a->vs.query = s->pending.query;
        s->follow_end = 0; /* the session's row, not the last */
    }
    a->vs.key = s->pending.key >= 0 && s->pending.key < im->Tk ? s->pending.key : -1;
    s->pending.group = -1;
}

/* The maps' controls; an encoder-decoder's group beside them (Ctrl+X). */
void encwin_controls(AppState *a)
{
    ModelSource *s = a->src;
    maps_shown_controls(a);
    if (!s->g->lm.info.encdec)
        return;
    static const char *const shortn[] = {"cross-attention", "encoder", "decoder"};
    source_ctl_add(&a->vs, a->ctl_act, (AppAction){ACT_ENCDEC_GROUP, 1, 0, 0.0f}, 1, 0, "", "[^X] %s",
                   shortn[s->group]);
}

/* Ctrl+X / Ctrl+Shift+X: an encoder-decoder's next / previous group of
 * maps, the worker asked for them (the decoder's state copied, not run
 * again). */
void encwin_group_step(AppState *a, int dir)
{
    ModelSource *s = a->src;
    if (!s->g->lm.info.encdec) {
        app_status(a, 0, "%s is not an encoder-decoder: its maps are one group (Ctrl+X switches a T5's or "
                   "BART's encoder, decoder and cross-attention)", s->g->name);
        return;
    }
    static const int order[3] = {GROUP_ENCODER, GROUP_DECODER, GROUP_CROSS};
    int k = 0;
    while (k < 3 && order[k] != s->group)
        k++;
    s->group = order[((k + (dir < 0 ? -1 : 1)) % 3 + 3) % 3];
    s->group_auto = 0; /* chosen: a target typed no longer switches to cross-attention */
    s->pending.group = -1; /* another group than a session's: its picks are not for it */
    s->stale = 1;
    app_status(a, 0, "%s (Ctrl+X: the next group)", encwin_group_names[s->group]);
    lmsrc_submit(a);
    a->dirty = 1;
}


/* ---- inside a head: the group's query and key --------------------------------------------- */

void encwin_shape(const Lm *lm, int group, int T, int *L, int *H, int *dh, int *Tq, int *Tk)
{
    const Rt *rt = lm->rt;
    *dh = lm->info.d_head;
    if (!lm->info.encdec || group == GROUP_ENCODER) {
        *L = lm->info.n_layer;
        *H = lm->info.n_head;
        *Tq = *Tk = T;
        return;
    }
    *L = rt->sh.n_layer;
    *H = rt->sh.n_head;
    *dh = rt->sh.d_head;
    *Tq = rt->n_done;
    *Tk = group == GROUP_CROSS ? rt->Ts : rt->n_done;
}

const float *encwin_query(const Lm *lm, int group, int l, int h, int i)
{
    if (!lm->info.encdec || group == GROUP_ENCODER)
        return lm_query(lm, l, h, i);
    if (group == GROUP_DECODER)
        return rt_query(lm->rt, l, h, i);
    return rt_cross_q(lm->rt, l, i) + (size_t)h * lm->rt->sh.d_head;
}

const float *encwin_key(const Lm *lm, int group, int l, int h, int j)
{
    if (!lm->info.encdec || group == GROUP_ENCODER)
        return lm_key(lm, l, h, j);
    if (group == GROUP_DECODER)
        return rt_key(lm->rt, l, h, j);
    return rt_cross_kv(lm->rt, l, j) + (size_t)rt_kv_head(lm->rt, h) * lm->rt->sh.d_head;
}

const RtAttn *encwin_attn(const Lm *lm, int group, int l)
{
    if (!lm->info.encdec || group == GROUP_ENCODER)
        return lm_layer_attn(lm, l);
    return group == GROUP_DECODER ? rt_layer_attn(lm->rt, l) : &lm->rt->xattn[l];
}

/* The text's position of the shown map's row (keys = 0) or column c (E
 * hides special tokens' rows and columns); -1 for none. */
static int file_pos(const Imported *im, int c, int keys)
{
    const unsigned char *drop = im ? (keys ? im->k_drop : im->q_drop) : NULL;
    int n = im ? (keys ? im->f.Tk : im->f.Tq) : 0;
    if (c < 0 || !drop)
        return c;
    for (int p = 0; p < n; p++)
        if (!drop[p] && c-- == 0)
            return p;
    return -1;
}

void encwin_pair(const AppState *a, const ModelSource *s, int *i, int *j)
{
    const Imported *im = s->ms.imp;
    int group = s->g->lm.info.encdec ? s->group : GROUP_ENCODER;
    int Tq = group == GROUP_ENCODER ? s->ids.n : s->tgt.n, Tk = group == GROUP_DECODER ? s->tgt.n : s->ids.n;
    int same = s->group_shown == group; /* the rows and columns shown are this group's */
    *i = same ? file_pos(im, a->vs.query, 0) : a->vs.query;
    *i = *i < 0 ? 0 : *i >= Tq ? Tq - 1 : *i;
    *j = same ? file_pos(im, a->vs.key, 1) : -1;
    if (*j >= 0 && *j < Tk)
        return;
    *j = *i < Tk ? *i : Tk - 1; /* self-attention's own position */
    if (group != GROUP_CROSS || !same || !im || a->vs.query < 0 || a->vs.query >= im->Tq)
        return;
    AttnMap m = import_map(im, 1); /* cross-attention: the shown row's strongest key */
    int best = 0;
    for (int c = 1; c < m.Tk; c++)
        if (attn_map_at(&m, a->vs.query, c) > attn_map_at(&m, a->vs.query, best))
            best = c;
    int p = file_pos(im, best, 1);
    *j = p >= 0 && p < Tk ? p : 0;
}

/* The last result's query and key of the shown layer and head: 0, or -1
 * when it has none for the maps shown (another group's, the rollout). */
static int inside_of(const ModelSource *s, const float **q, const float **k, int *dh)
{
    const Result *r = s->last;
    int layer = s->ms.layer, head = s->ms.head;
    int group = s->g->lm.info.encdec ? s->group_shown : GROUP_ENCODER;
    if (!r || !r->q || !r->k || !r->attn || layer < 0 || head < 0 || s->ms.rollout || layer >= r->vL ||
        head >= r->vH || (s->g->lm.info.encdec && r->group != group))
        return -1;
    *dh = r->C / r->vH;
    *q = r->q + (size_t)layer * r->C + (size_t)head * *dh;
    *k = r->k + (size_t)layer * r->C + (size_t)head * *dh;
    return 0;
}

int encwin_inside_vectors(const ModelSource *s, const float **q, const float **k, int *d)
{
    return inside_of(s, q, k, d);
}

/* The shown row or column of text position p (E hides special tokens'
 * rows and columns); -1 for a hidden one. */
static int shown_index(const unsigned char *drop, int p)
{
    if (!drop)
        return p;
    if (drop[p])
        return -1;
    int c = 0;
    for (int k = 0; k < p; k++)
        c += !drop[k];
    return c;
}

/* The weight of the query → key pair (text positions i, j) in the shown
 * map: its cell, the softmax the heatmap shows (the rows renormalised
 * when E hides tokens); NAN when the map shows something else (norms) or
 * hides one of them. */
static double shown_weight(const Imported *im, int i, int j)
{
    if (!im || im->matrix != 0 || i < 0 || j < 0 || i >= im->f.Tq || j >= im->f.Tk)
        return NAN;
    int row = shown_index(im->q_drop, i), col = shown_index(im->k_drop, j);
    if (row < 0 || col < 0 || row >= im->Tq || col >= im->Tk)
        return NAN;
    AttnMap m = import_map(im, 1);
    return attn_map_at(&m, row, col);
}

void encwin_inside_text(ModelSource *s)
{
    const Result *r = s->last;
    const Imported *im = s->ms.imp;
    char *p = s->inside;
    size_t n = sizeof s->inside, u = 0;
    s->inside[0] = '\0';
#define PUT(...) (u += (size_t)snprintf(p + u, u < n ? n - u : 0, __VA_ARGS__), u = u < n ? u : n)
    const float *q, *k;
    int dh, layer = s->ms.layer, head = s->ms.head;
    if (inside_of(s, &q, &k, &dh) < 0) {
        if (r)
            PUT("Inside a head: pick one layer and head (L, H) and a query \xE2\x86\x92 key cell.");
        return;
    }
    double dot = 0.0;
    int top[4] = {-1, -1, -1, -1};
    for (int d = 0; d < dh; d++) {
        double t = (double)q[d] * k[d];
        dot += t;
        for (int m = 0; m < 4; m++)
            if (top[m] < 0 || fabs(t) > fabs((double)q[top[m]] * k[top[m]])) {
                memmove(top + m + 1, top + m, sizeof(int) * (size_t)(3 - m));
                top[m] = d;
                break;
            }
    }
    const RtAttn *at = &r->attn[layer];
    char how[120];
    double scaled = rt_attn_score_at(at, dot, head, r->sel_i, r->sel_j);
    rt_attn_describe(at, dh, how, sizeof how);
    int cross = s->g->lm.info.encdec && r->group == GROUP_CROSS;
    PUT("Inside layer %d, head %d: query \xE2\x80\x9C%s\xE2\x80\x9D \xE2\x86\x92 key \xE2\x80\x9C%s\xE2\x80\x9D%s\n",
        layer + 1, head + 1, im && r->sel_i < im->f.Tq ? im->q_shown[r->sel_i] : "?",
        im && r->sel_j < im->f.Tk ? im->k_shown[r->sel_j] : "?",
        !s->g->lm.info.encdec || r->group == GROUP_ENCODER ? ""
        : cross ? " (the decoder's query, the encoder's output as key and value)" : " (the decoder's)");
    PUT("q \xC2\xB7 k = \xCE\xA3 q_d k_d over %d dims = %.3f; the score %.3f%s%s%s\n", dh, dot, scaled,
        how[0] ? " (" : "", how, how[0] ? ")" : "");
    double w = shown_weight(im, r->sel_i, r->sel_j);
    if (at->causal && r->sel_j > r->sel_i)
        PUT("masked: a key after the query, weight 0\n");
    else if (!isnan(w))
        PUT("softmax over the row's %d keys: weight %.4f\n", im->Tk, w);
    PUT("largest terms q_d \xC3\x97 k_d:");
    for (int m = 0; m < 3 && top[m] >= 0; m++)
        PUT("%s d%d %.2f", m ? "," : "", top[m], (double)q[top[m]] * k[top[m]]);
    PUT("\n");
#undef PUT
}
