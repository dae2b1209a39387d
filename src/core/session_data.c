/* The plain data of weights and session files (see attnviz/session_data.h):
 * defaults and freeing. Reading the files is io/'s; applying them to a
 * Model is model_set_weights / model_apply_session. */
#include "attnviz/session_data.h"
#include "attnviz/teach.h"

#include <stdlib.h>
#include <string.h>

void session_view_default(SessionView *sv)
{
    memset(sv, 0, sizeof *sv);
    sv->query = 1;
    sv->key = -1;
    sv->dark = 1;
    sv->ui_scale = 1.0f;
    sv->teach_train = TEACH_WQ | TEACH_WK;
    sv->teach_opt = TEACH_OPT_ADAM;
    sv->teach_lr = 0.1f;
}

void session_view_free(SessionView *sv)
{
    free(sv->teach_target);
    sv->teach_target = NULL;
    sv->teach_Tq = sv->teach_Tk = 0;
}

void parsed_weights_free(ParsedWeights *w)
{
    if (!w)
        return;
    attn_params_destroy(&w->params);
    memset(w, 0, sizeof *w);
}

void session_free(Session *s)
{
    if (!s)
        return;
    free(s->sentence);
    free(s->keys);
    for (int i = 0; i < s->n_vectors && s->words; i++)
        free(s->words[i]);
    free(s->words);
    free(s->vectors);
    session_view_free(&s->view);
    parsed_weights_free(&s->weights);
    memset(s, 0, sizeof *s);
}
