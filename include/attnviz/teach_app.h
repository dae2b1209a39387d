/* Teach mode in the application (issue 15): the command line's --teach
 * (a target from a preset or a CSV file, the steps, the loss after each),
 * and what the window builds on it. */
#ifndef ATTNVIZ_TEACH_APP_H
#define ATTNVIZ_TEACH_APP_H

#include "attnviz/error.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/teach_model.h"

/* The target o->teach names for m (computed): a preset (self, previous,
 * next, first) or a CSV file in the --print csv format, into a new Tq×Tk
 * array (*out, the caller frees). Errors name the file, line and value, or
 * say the name is neither a file nor a preset. */
int teach_target_from(const Model *m, const char *spec, float **out, AttnErr *err);

/* --teach: the target, o->steps steps of o->optimizer at o->lr on o->train
 * for o->head (MODEL_HEAD_AVG: the heads' mean), then the loss after the
 * last; m is left computed with the trained weights, t with the history
 * (teacher_free it). A target with mass on masked keys is used without it,
 * with a note on stderr. */
int teach_run(Model *m, const Options *o, Teacher *t, AttnErr *err);

#endif
