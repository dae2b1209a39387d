/* Opening a weights or session file on a Model: io reads the file into
 * plain data (weights_load, session_load), the core puts it into the model
 * (model_set_weights, model_apply_session). */
#include "attnviz/app.h"

int app_load_weights(Model *m, const char *path, AttnErr *err)
{
    ParsedWeights w;
    int rc = weights_load(&w, m->d, path, err);
    if (rc < 0)
        return rc;
    rc = model_set_weights(m, &w);
    parsed_weights_free(&w);
    if (rc < 0)
        return attn_err_set(err, -rc, path, 0, "cannot use these weights");
    return 0;
}

int app_load_session(Model *m, SessionView *sv, const char *path, AttnErr *err)
{
    Session s;
    int rc = session_load(&s, m->d, &m->cfg, path, err);
    if (rc < 0)
        return rc;
    rc = model_apply_session(m, &s);
    if (rc == 0) {
        *sv = s.view;
        s.view.teach_target = NULL; /* sv's now */
    }
    session_free(&s);
    if (rc < 0)
        return attn_err_set(err, -rc, path, 0, "cannot set the session's sentence");
    return 0;
}
