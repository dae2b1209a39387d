/* Exports by extension: .csv and .json through io (the same bytes as
 * --print), .png through the view on a software renderer, .svg as vectors.
 * Every file is written atomically. */
#include "attnviz/app.h"
#include "attnviz/fonts.h"
#include "attnviz/png.h"
#include "attnviz/svg.h"
#include "attnviz/view.h"

#include <SDL.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const Model *m;
    const Options *o;
    ColormapId cmap;
} ExportCtx;

static int write_csv(FILE *f, void *ctx)
{
    ExportCtx *c = ctx;
    return print_csv(f, c->m, (ModelMatrix)c->o->matrix, c->o->head);
}

static int write_json(FILE *f, void *ctx)
{
    ExportCtx *c = ctx;
    return print_json(f, c->m, NULL);
}

void export_model_figure(ModelFigure *mf, const Model *m, ModelMatrix which, int head,
                         float scale, ColormapId cmap, ColorScaleMode cscale, int query)
{
    mf->map = model_map(m, which, head);
    if (!mf->map.v) /* a matrix the model does not keep: its weights */
        mf->map = model_map(m, MODEL_WEIGHTS, head);
    model_figure_text(m, (ModelMatrix)mf->map.kind, head, mf->title, sizeof mf->title, mf->facts,
                      sizeof mf->facts);
    figure_layout_export(&mf->fig, &mf->map, scale, mf->title, mf->facts, cmap, cscale, query);
}

static int write_svg(FILE *f, void *ctx)
{
    ExportCtx *c = ctx;
    ModelFigure *mf = malloc(sizeof *mf);
    if (!mf)
        return -ATTN_E_NOMEM;
    int q = c->o->query < c->m->T ? c->o->query : -1;
    export_model_figure(mf, c->m, (ModelMatrix)c->o->matrix, c->o->head, (float)c->o->scale, c->cmap,
                        (ColorScaleMode)c->o->color_scale, q);
    int rc = svg_write_figure(f, &mf->fig, &mf->map, c->o->theme_dark, q, -1);
    free(mf);
    return rc;
}

static const char *extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot : "";
}

SDL_Surface *export_heatmap_surface(Model *m, const ViewState *s, const ViewFonts *fonts,
                                    AttnErr *err)
{
    ViewState fig = *s;
    view_state_set_model(&fig, m);
    return view_render_panel(fonts, &fig, PANEL_HEATMAP, err);
}

int export_save_png(SDL_Surface *surf, const char *path, AttnErr *err)
{
    if (surf->format->format != SDL_PIXELFORMAT_RGB888)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0, "PNG export needs an RGB888 image");
    return png_write(path, surf->w, surf->h, surf->pixels, surf->pitch, err);
}

/* The PNG: the same view state a window export would use, drawn by the
 * software renderer. */
static int export_png(Model *m, const Options *o, ColormapId cmap, const char *path,
                      AttnErr *err)
{
    ViewState s;
    view_state_init(&s, m);
    s.query = o->query;
    s.head = o->head;
    s.dark = o->theme_dark;
    s.matrix = (ModelMatrix)o->matrix;
    s.scale = (float)o->scale;
    s.cmap = cmap;
    s.cscale = (ColorScaleMode)o->color_scale;
    if (o->view != VIEW_HEATMAP && s.query < 0)
        s.all_lines = 1;
    view_state_set_model(&s, m); /* for this head and matrix */
    ViewPanel p = o->view == VIEW_LINES ? PANEL_LINES : o->view == VIEW_BOTH ? PANEL_BOTH : PANEL_HEATMAP;
    if (!SDL_WasInit(SDL_INIT_VIDEO)) {
        /* text and the software renderer need no display */
        SDL_SetHint(SDL_HINT_VIDEODRIVER, "dummy");
    }
    AppFonts fonts;
    int rc = fonts_open(&fonts, o->font, err);
    if (rc < 0)
        return rc;
    SDL_Surface *surf = view_render_panel(&fonts.view, &s, p, err);
    fonts_close(&fonts);
    if (!surf)
        return -ATTN_E_IO;
    rc = export_save_png(surf, path, err);
    SDL_FreeSurface(surf);
    return rc;
}

int export_file(Model *m, const Options *o, const char *path, AttnErr *err)
{
    ExportCtx ctx = {m, o, CMAP_VIRIDIS};
    model_prepare(m, MODEL_WEIGHTS, o->head); /* the CSV's, the figure's when not kept */
    model_prepare(m, (ModelMatrix)o->matrix, o->head);
    const char *ext = extension(path);
    if (strcasecmp(ext, ".csv") == 0)
        return io_write_atomic(path, write_csv, &ctx, err);
    if (strcasecmp(ext, ".json") == 0)
        return io_write_atomic(path, write_json, &ctx, err);
    int picture = strcasecmp(ext, ".svg") == 0 || strcasecmp(ext, ".png") == 0;
    if (picture && o->colormap) {
        int c = colormap_from_name(o->colormap);
        if (c < 0)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "--colormap %s: use viridis, cividis, magma or greys", o->colormap);
        ctx.cmap = (ColormapId)c;
    }
    if (strcasecmp(ext, ".svg") == 0)
        return io_write_atomic(path, write_svg, &ctx, err);
    if (strcasecmp(ext, ".png") == 0)
        return export_png(m, o, ctx.cmap, path, err);
    return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                        "unknown export format '%s' (use .png, .svg, .csv or .json)",
                        *ext ? ext : "(none)");
}
