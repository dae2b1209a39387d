/* The command line's output of an attention file's map (see import.h):
 * --print text|csv|json, and --export of the map (.png through the export
 * panels, .svg through the figure layout, .csv, .json) or of every layer
 * and head as a grid (--view grid). Files are written atomically. */
#include "attnviz/import.h"

#include <SDL.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attnviz/app.h"
#include "attnviz/figure.h"
#include "attnviz/fonts.h"
#include "attnviz/io.h"
#include "attnviz/svg.h"
#include "attnviz/view.h"

typedef struct Out {
    const Imported *im;
    const Options *o;
    ColormapId cmap;
} Out;

/* The JSON members naming what was picked: file, layer, head, rollout. */
static void json_fields(const Imported *im, char *buf, size_t n)
{
    char name[600];
    size_t k = 0;
    for (const char *p = im->title; *p && k + 7 < sizeof name; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            name[k++] = '\\', name[k++] = (char)c;
        else if (c < 0x20)
            k += (size_t)snprintf(name + k, sizeof name - k, "\\u%04x", c);
        else
            name[k++] = (char)c;
    }
    name[k] = '\0';
    char layer[16], head[16];
    snprintf(layer, sizeof layer, im->layer < 0 ? "\"avg\"" : "%d", im->layer + 1);
    snprintf(head, sizeof head, im->head < 0 ? "\"avg\"" : "%d", im->head + 1);
    snprintf(buf, n, "\"file\": \"%s\", \"layers\": %d, \"heads\": %d, \"layer\": %s, \"head\": %s, "
             "\"rollout\": %s", name, im->f.L, im->f.H, layer, head, im->rollout ? "true" : "false");
}

static int write_text(FILE *f, const Imported *im)
{
    char title[800];
    AttnMap m = import_map(im, 0);
    snprintf(title, sizeof title, "%s: %s", im->title, im->facts);
    return print_map_text(f, &m, title);
}

static int write_csv(FILE *f, void *ctx)
{
    AttnMap m = import_map(((Out *)ctx)->im, 0);
    return print_map_csv(f, &m);
}

static int write_json(FILE *f, void *ctx)
{
    char fields[900];
    AttnMap m = import_map(((Out *)ctx)->im, 0);
    json_fields(((Out *)ctx)->im, fields, sizeof fields);
    return print_map_json(f, &m, fields);
}

/* A figure's title: the file's name, and the text a source computed the
 * maps of, quoted (its first line, cut at 60 characters). */
static void figure_title(const Imported *im, char *buf, size_t n)
{
    if (!im->text || !im->text[0]) {
        snprintf(buf, n, "%s", im->title);
        return;
    }
    char line[256];
    size_t k = 0, chars = 0;
    const char *p = im->text;
    for (; *p && *p != '\n' && *p != '\r' && k + 4 < sizeof line; p++) {
        if (((unsigned char)*p & 0xC0) != 0x80 && ++chars > 60)
            break;
        line[k++] = *p == '\t' ? ' ' : *p;
    }
    line[k] = '\0';
    snprintf(buf, n, "%s: \xE2\x80\x9C%s%s\xE2\x80\x9D", im->title, line, *p ? "\xE2\x80\xA6" : "");
}

/* Every layer and head as small maps of at most 64 × 64 cells. */
static int grid_maps(const Imported *im, AttnMaps *ms, float **thumbs, char ***labels, AttnErr *err)
{
    int tq, tk;
    if (import_thumbs(im, 64, thumbs, &tq, &tk, err) < 0)
        return -err->code;
    int n = tq > tk ? tq : tk;
    *labels = calloc((size_t)n + 1, sizeof **labels);
    for (int i = 0; *labels && i < n; i++)
        (*labels)[i] = (char *)"";
    if (!*labels)
        return attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory");
    *ms = (AttnMaps){*thumbs, im->f.L, im->f.H, tq, tk, (const char *const *)*labels,
                     (const char *const *)*labels, im->kind, 0, NULL};
    return 0;
}

FigureOptions import_grid_options(const Imported *im, AttnMapKind kind, float scale, ColormapId cmap,
                                  ColorScaleMode cscale, char *facts, size_t n)
{
    FigureOptions fo = figure_options_export(scale, im->title, NULL);
    snprintf(facts, n, "%d layers \xC3\x97 %d heads \xC2\xB7 %s \xC2\xB7 %d\xC3\x97%d", im->f.L, im->f.H,
             attn_map_kind_name(kind), im->f.Tq, im->f.Tk);
    fo.facts = facts;
    fo.cmap = cmap;
    fo.cscale = cscale;
    return fo;
}

static void grid_layout(const Out *c, const AttnMaps *ms, FigureGrid *g)
{
    char facts[160];
    FigureOptions fo = import_grid_options(c->im, ms->kind, (float)c->o->scale, c->cmap,
                                           (ColorScaleMode)c->o->color_scale, facts, sizeof facts);
    figure_grid_layout(g, ms, &fo, &figure_measure_dejavu);
}

static int write_svg(FILE *f, void *ctx)
{
    Out *c = ctx;
    AttnErr err = {0};
    int rc;
    if (c->o->view == VIEW_GRID) {
        AttnMaps ms;
        float *thumbs = NULL;
        char **labels = NULL;
        FigureGrid *g = malloc(sizeof *g);
        rc = !g ? -ATTN_E_NOMEM : grid_maps(c->im, &ms, &thumbs, &labels, &err);
        if (rc == 0) {
            grid_layout(c, &ms, g);
            rc = svg_write_grid(f, g, &ms, c->o->theme_dark);
        }
        free(g), free(thumbs), free(labels);
        return rc;
    }
    AttnMap m = import_map(c->im, 1);
    int query = c->o->query < m.Tq ? c->o->query : -1;
    Figure *fig = malloc(sizeof *fig);
    if (!fig)
        return -ATTN_E_NOMEM;
    char title[400];
    figure_title(c->im, title, sizeof title);
    figure_layout_export(fig, &m, (float)c->o->scale, title, c->im->facts, c->cmap,
                         (ColorScaleMode)c->o->color_scale, query);
    rc = svg_write_figure(f, fig, &m, c->o->theme_dark, query, -1);
    free(fig);
    return rc;
}

/* The PNG: the export panels on a ViewState of the map (no Model), or the grid. */
static int write_png(const Out *c, const char *path, AttnErr *err)
{
    const Options *o = c->o;
    SDL_Surface *surf = NULL;
    if (!SDL_WasInit(SDL_INIT_VIDEO))
        SDL_SetHint(SDL_HINT_VIDEODRIVER, "dummy"); /* text and the software renderer need no display */
    AppFonts fonts;
    int rc = fonts_open(&fonts, o->font, err);
    if (rc < 0)
        return rc;
    if (o->view == VIEW_GRID) {
        AttnMaps ms;
        float *thumbs = NULL;
        char **labels = NULL;
        FigureGrid *g = malloc(sizeof *g);
        if (g && grid_maps(c->im, &ms, &thumbs, &labels, err) == 0) {
            grid_layout(c, &ms, g);
            surf = view_render_grid(&fonts.view, g, &ms, o->theme_dark, err);
        }
        free(g), free(thumbs), free(labels);
    } else {
        ViewState *s = malloc(sizeof *s);
        if (s) {
            view_state_init(s, NULL);
            s->map = s->weights = import_map(c->im, 1);
            s->q_special = c->im->q_special;
            s->k_special = c->im->k_special;
            s->heads = c->im->f.H;
            figure_title(c->im, s->title, sizeof s->title);
            snprintf(s->facts, sizeof s->facts, "%s", c->im->facts);
            s->query = o->query < c->im->Tq ? o->query : -1;
            s->all_lines = o->view != VIEW_HEATMAP && s->query < 0;
            s->dark = o->theme_dark;
            s->scale = (float)o->scale;
            s->cmap = c->cmap;
            s->cscale = (ColorScaleMode)o->color_scale;
            ViewPanel p = o->view == VIEW_LINES ? PANEL_LINES : o->view == VIEW_BOTH ? PANEL_BOTH : PANEL_HEATMAP;
            surf = view_render_panel(&fonts.view, s, p, err);
            free(s);
        }
    }
    fonts_close(&fonts);
    if (!surf)
        return err->code ? -err->code : attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    rc = export_save_png(surf, path, err);
    SDL_FreeSurface(surf);
    return rc;
}

static int export_one(const Out *c, const char *path, AttnErr *err)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    const char *ext = dot && (!slash || dot > slash) ? dot : "";
    if (strcasecmp(ext, ".csv") == 0)
        return io_write_atomic(path, write_csv, (void *)c, err);
    if (strcasecmp(ext, ".json") == 0)
        return io_write_atomic(path, write_json, (void *)c, err);
    if (strcasecmp(ext, ".svg") == 0)
        return io_write_atomic(path, write_svg, (void *)c, err);
    if (strcasecmp(ext, ".png") == 0)
        return write_png(c, path, err);
    return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                        "unknown export format '%s' (use .png, .svg, .csv or .json)", *ext ? ext : "(none)");
}

int import_write_csv(const Imported *im, const char *path, AttnErr *err)
{
    Out c = {im, NULL, CMAP_VIRIDIS};
    return io_write_atomic(path, write_csv, &c, err);
}

int import_write(const Imported *im, const Options *o, AttnErr *err)
{
    Out c = {im, o, CMAP_VIRIDIS};
    if (o->colormap) {
        int k = colormap_from_name(o->colormap);
        if (k < 0)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "--colormap %s: use viridis, cividis, magma or greys", o->colormap);
        c.cmap = (ColormapId)k;
    }
    if (o->query >= im->Tq)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "--query %d is out of range: the map has %d rows",
                            o->query + 1, im->Tq);
    int rc = 0;
    if (o->print == PRINT_TEXT)
        rc = write_text(stdout, im);
    else if (o->print == PRINT_CSV)
        rc = write_csv(stdout, &c);
    else if (o->print == PRINT_JSON)
        rc = write_json(stdout, &c);
    else if (o->print == PRINT_HEAD_SCORES && (rc = import_print_head_scores(stdout, im, err)) < 0)
        return rc;
    if (rc < 0 || fflush(stdout) != 0)
        return attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed");
    for (int k = 0; k < o->n_exports; k++)
        if ((rc = o->view == VIEW_HEADS ? import_export_heads(im, o, c.cmap, o->exports[k], err)
                                        : export_one(&c, o->exports[k], err)) < 0)
            return rc;
    return 0;
}
