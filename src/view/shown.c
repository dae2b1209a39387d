/* What the map panels show, as plain data: view_state_set_model turns a
 * Model into the ViewState's maps (the shown matrix, the weights, the
 * tooltip's scores and logits), the figure's title and facts, and the
 * settings the controls and the status bar name. The panels then draw the
 * maps without reading the Model. */
#include "view_internal.h"

#include <string.h>

void view_state_set_model(ViewState *s, const Model *m)
{
    static const AttnMap none;
    s->m = m;
    s->map = s->weights = s->scores = s->logits = none;
    s->q_unknown = s->q_special = s->k_special = NULL;
    s->grid = s->overview = NULL; /* another mode's (an attention file's) parts */
    s->no_model = NULL;
    s->ctl_labels = NULL;
    s->ctl_on = NULL;
    s->toks = NULL;
    s->title[0] = s->facts[0] = '\0';
    s->d = s->dk = s->heads = s->n_unknown = 0;
    if (!m)
        return;
    s->map = model_map(m, s->matrix, s->head);
    if (!s->map.v) /* a matrix the model does not keep: its weights */
        s->map = model_map(m, MODEL_WEIGHTS, s->head);
    s->weights = model_map(m, MODEL_WEIGHTS, s->head);
    /* the tooltip shows one head's numbers when the heads' mean of the
     * scores is not kept */
    int head = model_matrix(m, MODEL_SCORES, s->head) ? s->head : 0;
    s->scores = model_map(m, MODEL_SCORES, head);
    /* each head's logits are made when first asked for after a compute:
     * for the tooltip, only while a cell is hovered */
    if (s->hover_i >= 0 && s->hover_j >= 0)
        s->logits = model_map(m, MODEL_LOGITS, head);
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
}
