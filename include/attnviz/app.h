/* The application: the window (app_run) and the exports (export_file).
 * Both draw with the view module from a Model; see view.h. */
#ifndef ATTNVIZ_APP_H
#define ATTNVIZ_APP_H

#include "attnviz/error.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/options.h"

/* Open the window on m (which the app owns from now on for editing).
 * sentences: the list PageUp/PageDown walks (may be empty). Returns 0 when
 * the user quits, or an error (e.g. no display) with err filled. */
int app_run(Model *m, const Options *o, SentenceList *sentences, AttnErr *err);

/* Write one export; the format follows the extension (.png .svg .csv .json).
 * Atomic: a failure leaves nothing behind. */
int export_file(const Model *m, const Options *o, const char *path, AttnErr *err);

#endif
