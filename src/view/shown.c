/* What the view shows: the matrix in the heatmap (the one asked for, or the
 * weights when the model does not keep it) and the names the panels give
 * matrices and heads. */
#include "view_internal.h"

#include <stdio.h>

/* The matrix drawn: the one asked for, or the weights when the model does
 * not keep it (the heads' mean of scores outside the window). */
ModelMatrix shown_kind(const ViewState *s)
{
    return model_matrix(s->m, s->matrix, s->head) ? s->matrix : MODEL_WEIGHTS;
}

const float *shown_matrix(const ViewState *s)
{
    return model_matrix(s->m, shown_kind(s), s->head);
}

const char *matrix_name(ModelMatrix m)
{
    return m == MODEL_WEIGHTS ? "weights" : m == MODEL_SCORES ? "raw scores" : "logits";
}

void head_label(const ViewState *s, char *buf, size_t n)
{
    int h = s->m->res.h;
    if (h <= 1)
        snprintf(buf, n, "head 1/1");
    else if (s->head < 0)
        snprintf(buf, n, "avg of %d heads", h);
    else
        snprintf(buf, n, "head %d/%d", s->head + 1, h);
}
