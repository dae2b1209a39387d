/* What the map panels show, as plain data: view_state_set_model turns a
 * Model into the ViewState's maps (the shown matrix, the weights, the
 * tooltip's scores and logits), the figure's title and facts, and the
 * settings the controls and the status bar name. The panels then draw the
 * maps without reading the Model. */
#include "view_internal.h"

#include <stdio.h>
#include <string.h>

/* The status bar's facts of a sentence: mode, heads, sizes, score, mask, τ, T. */
static void status_facts(ViewState *s)
{
    const AttnConfig *c = &s->cfg;
    const AttnMap *m = &s->map;
    int heads = s->heads > 0 ? s->heads : 1;
    char tn[48];
    if (s->cross)
        snprintf(tn, sizeof tn, "Tq=%d \xC3\x97 Tk=%d", m->Tq, m->Tk);
    else
        snprintf(tn, sizeof tn, "T=%d", m->Tq);
    snprintf(s->status_facts, sizeof s->status_facts,
             "%s \xC2\xB7 %d head%s \xC2\xB7 d=%d \xC2\xB7 dk=%d \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 \xCF\x84=%.2f \xC2\xB7 %s",
             c->mode == ATTN_MODE_BASIC ? "basic" : "learned", heads, heads == 1 ? "" : "s", s->d,
             s->dk, c->score != ATTN_SCORE_DOT ? attn_score_name(c->score) : c->scale ? "scaled" : "unscaled",
             s->cross ? "cross-attention" : c->causal ? "causal mask" : "no mask",
             (double)c->temperature, tn);
}

void view_state_set_model(ViewState *s, Model *m)
{
    static const AttnMap none;
    s->m = m;
    s->map = s->weights = s->scores = s->logits = none;
    s->q_unknown = s->q_special = s->k_special = NULL;
    s->grid = s->overview = NULL; /* another mode's (an attention file's) parts */
    s->no_model = NULL;
    s->inside_q = s->inside_k = NULL;
    s->inside_caption = NULL;
    s->inside_d = s->kv_group = 0;
    s->toks = s->ktoks = NULL;
    s->k_unknown = NULL;
    s->keys_bar = s->cross = s->stale = 0;
    s->bar_label = s->panel_title = s->step_label = NULL;
    s->keys_label = s->keys_placeholder = NULL;
    s->status_facts[0] = '\0';
    s->title[0] = s->facts[0] = '\0';
    s->d = s->dk = s->heads = s->n_unknown = 0;
    if (!m)
        return;
    model_prepare(m, s->matrix, s->head); /* NULL maps without memory */
    model_prepare(m, MODEL_WEIGHTS, s->head);
    s->map = model_map(m, s->matrix, s->head);
    if (!s->map.v) /* a matrix the model does not keep: its weights */
        s->map = model_map(m, MODEL_WEIGHTS, s->head);
    s->weights = model_map(m, MODEL_WEIGHTS, s->head);
    /* the tooltip shows one head's numbers when the heads' mean of the
     * scores is not kept */
    int head = model_matrix(m, MODEL_SCORES, s->head) ? s->head : 0;
    s->scores = model_map(m, MODEL_SCORES, head);
    /* each head's logits are made when asked for after a compute: for the
     * tooltip, only while a cell is hovered */
    if (s->hover_i >= 0 && s->hover_j >= 0) {
        model_prepare(m, MODEL_LOGITS, head);
        s->logits = model_map(m, MODEL_LOGITS, head);
    }
    s->maps_gen = m->generation;
    s->q_unknown = m->oov;
    s->toks = &m->toks;
    model_figure_text(m, (ModelMatrix)s->map.kind, s->head, s->title, sizeof s->title, s->facts,
                      sizeof s->facts);
    s->cfg = m->cfg;
    s->d = m->d;
    s->heads = m->res.h;
    s->dk = m->res.dk ? m->res.dk : m->d;
    s->n_unknown = model_count_oov(m);
    s->cross = m->cross;
    s->ktoks = m->cross ? &m->ktoks : NULL;
    s->k_unknown = m->cross ? m->koov : NULL;
    s->keys_bar = 1;
    s->bar_label = m->cross ? "Queries" : "Sentence"; /* with keys from the second bar */
    status_facts(s);
}
