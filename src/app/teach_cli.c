/* --teach on the command line: the target, the steps, the loss after each,
 * as scripts and tests use it (--print json adds the "teach" object). */
#include "attnviz/teach_app.h"
#include "attnviz/teach_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int teach_target_from(const Model *m, const char *spec, float **out, AttnErr *err)
{
    size_t n = (size_t)m->T * m->Tk;
    float *t = malloc((n ? n : 1) * sizeof(float));
    if (!t)
        return -ATTN_E_NOMEM;
    int preset = teach_preset_parse(spec), rc = 0;
    struct stat st;
    if (preset >= 0 && stat(spec, &st) != 0) {
        teach_preset(preset, m->T, m->Tk, t);
    } else if (stat(spec, &st) == 0) {
        rc = target_csv_load(spec, m->labels, m->T, m->klabels, m->Tk, t, err);
    } else {
        rc = attn_err_set(err, ATTN_E_IO, spec, 0,
                          "no such file, and not a preset (self, previous, next, first)");
    }
    if (rc < 0) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int teach_run(Model *m, const Options *o, Teacher *t, AttnErr *err)
{
    float *target = NULL;
    int rc = model_compute(m);
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "attention failed");
    if ((rc = teach_target_from(m, o->teach, &target, err)) < 0)
        return rc;
    int head = o->head_set ? o->head : 0;
    rc = teacher_start(t, m, target, head, o->train, o->optimizer, o->lr, err);
    free(target);
    if (rc < 0) {
        if (!err->file[0])
            snprintf(err->file, sizeof err->file, "%s", o->teach);
        return rc;
    }
    if (t->dropped)
        fprintf(stderr, "attnviz: note: %s: %d target entr%s on keys the causal mask hides "
                        "dropped, the rows renormalised\n", o->teach, t->dropped,
                t->dropped == 1 ? "y" : "ies");
    for (long s = 0; s < o->steps && rc == 0; s++)
        rc = teacher_step(t, m);
    double loss;
    if (rc == 0)
        rc = teacher_loss_now(t, m, &loss);
    if (rc == 0)
        rc = model_compute(m);
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "teaching failed");
    return 0;
}
