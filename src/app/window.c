#include "attnviz/app.h"
int app_run(Model *m, const Options *o, SentenceList *s, AttnErr *err)
{
    (void)m; (void)o; (void)s;
    return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0, "window not built yet");
}
