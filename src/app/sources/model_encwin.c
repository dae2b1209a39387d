/* An encoder-decoder in the window (issue 36; model_window.h): the second
 * bar is the target (the decoder's text), its ids going to the worker with
 * the source's; Ctrl+X's three groups of maps (the encoder's, the
 * decoder's, cross-attention), each a copy of queries and keys the worker
 * hands over; their part of sessions and of the control bar. The worker
 * and the panels are model_source.c's. */
#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/lm.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "../app_internal.h"

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
        return;
    }
    int max = g->lm.info.n_positions;
    if (s->tgt.n > max) {
        app_status(a, 1, "the target: %d tokens: %s takes %d (n_positions); the first %d are used", s->tgt.n,
                   g->name, max, max);
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
    if (s->g->lm.info.encdec && sn->group >= 0)
        s->group = sn->group;
    explore_session_in(a, sn); /* (asks the worker: the target's, the group's maps) */
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
    s->stale = 1;
    app_status(a, 0, "%s (Ctrl+X: the next group)", encwin_group_names[s->group]);
    lmsrc_submit(a);
    a->dirty = 1;
}

