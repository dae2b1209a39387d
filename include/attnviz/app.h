/* The application: the window (app_run) and the exports (export_file).
 * Both draw with the view module from a Model; see view.h. */
#ifndef ATTNVIZ_APP_H
#define ATTNVIZ_APP_H

#include "attnviz/error.h"
#include "attnviz/figure.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/session.h"

/* Open the window on the sentence source_sentence.cli_open opened (its
 * Model, which the app edits from now on, its sentences for PageUp/PageDown,
 * the view of its --session; the caller frees it after); kind and opened:
 * what another source opened on the command line (its cli_open), shown
 * instead (the app owns opened from then on), or NULL. Returns 0 when the
 * user quits, or an error (e.g. no display) with err filled. */
struct SourceKind;
int app_run(const Options *o, void *sentence, const struct SourceKind *kind, void *opened,
            AttnErr *err);

/* After a session or the autosave was loaded into m and sv: the settings
 * given on the command line win over the file's (mode, heads, mask,
 * scaling, posenc, τ, --seed, --weights; colour map, matrix, head, query).
 * Returns 0, or an error (bad --weights file, heads not dividing d). */
int app_cli_overrides(Model *m, SessionView *sv, const Options *o, AttnErr *err);

/* The heatmap figure of a model as the exports draw it: the map of matrix
 * which (its weights when the model does not keep that one) of head, the
 * sentence in quotes as the title, the matrix and the model's facts as the
 * facts line, laid out at scale with DejaVu Sans metrics (the PNG and the
 * SVG share it). The map borrows the model's arrays. */
typedef struct ModelFigure {
    AttnMap map;
    char title[1100];
    char facts[400];
    Figure fig;
} ModelFigure;
void export_model_figure(ModelFigure *mf, const Model *m, ModelMatrix which, int head,
                         float scale, ColormapId cmap, ColorScaleMode cscale, int query);

/* The heatmap PNG's pixels for the view state s (matrix, head, colour map,
 * theme, scale, query) of m: the export panel (the same figure as
 * export_model_figure's) drawn by the software renderer. Both the command
 * line and the window export through it. */
struct ViewState;
struct ViewFonts;
struct SDL_Surface *export_heatmap_surface(Model *m, const struct ViewState *s,
                                           const struct ViewFonts *fonts, AttnErr *err);

/* Write an RGB888 surface (what the view's offscreen renders give) to path
 * as PNG, atomically (png.h). */
int export_save_png(struct SDL_Surface *surf, const char *path, AttnErr *err);

/* Read a weights file (a --print json or session file) into m: heads,
 * weights and seed; on error m is unchanged. */
int app_load_weights(Model *m, const char *path, AttnErr *err);

/* Read a session file into m (sentence, settings, weights, edited vectors;
 * recompute it) and its view into *sv. On a file error m and sv are
 * unchanged. */
int app_load_session(Model *m, SessionView *sv, const char *path, AttnErr *err);

/* Write one export; the format follows the extension (.png .svg .csv .json).
 * Atomic: a failure leaves nothing behind. Makes the matrices o asks for
 * that the forward pass keeps none of (model_prepare). */
int export_file(Model *m, const Options *o, const char *path, AttnErr *err);

#endif
