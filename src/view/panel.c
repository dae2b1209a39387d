/* The standalone panels of the PNG export: the heatmap figure (figure.c:
 * title, facts, axis titles, labels, cells, colour bar, laid out with
 * DejaVu Sans metrics so the SVG export has the same layout), the line
 * diagram under the same title and facts, or both side by side; sized to
 * the map rather than to a window. */
#include "view_internal.h"

#include <stdlib.h>
#include <string.h>

static void export_figure(const ViewState *s, Figure *f)
{
    figure_layout_export(f, &s->map, s->scale, s->title, s->facts, s->cmap, s->cscale, s->query);
}

/* Sizes of the export layout parts, in pixels. */
typedef struct ExportGeom {
    int w, h;
    Figure fig;          /* the heatmap (with the title), when shown */
    SDL_Rect title, lines;
} ExportGeom;

static void export_geometry(View *v, const ViewState *s, ViewPanel p, ExportGeom *e)
{
    const AttnMap *m = &s->weights;
    int n = m->v ? (m->Tq > m->Tk ? m->Tq : m->Tk) : 0, pad = S(s, 16), lp = S(s, 15);
    int lw = m->v ? max_label_width(v, m->q_labels, m->Tq, lp) : 0;
    int kw = m->v ? max_label_width(v, m->k_labels, m->Tk, lp) : 0;
    lw = (lw > kw ? lw : kw) > S(s, 140) ? S(s, 140) : (lw > kw ? lw : kw);
    int lines_w = 2 * lw + S(s, 220);
    int lines_h = n * S(s, 30) + S(s, 16);
    if (lines_h > S(s, 1600))
        lines_h = S(s, 1600);
    memset(e, 0, sizeof *e);
    if (p != PANEL_LINES) {
        export_figure(s, &e->fig);
        e->w = e->fig.w;
        e->h = e->fig.h;
        if (p == PANEL_BOTH) {
            int h = e->fig.grid.h > lines_h ? e->fig.grid.h : lines_h;
            e->lines = (SDL_Rect){e->fig.w, e->fig.grid.y, lines_w, h};
            e->w += lines_w + pad;
            e->h = e->lines.y + h + pad > e->h ? e->lines.y + h + pad : e->h;
        }
        return;
    }
    int title_h = text_line_height(v->text, S(s, 16)) + S(s, 2) +
                  text_line_height(v->text, S(s, 12)) + S(s, 10);
    e->w = lines_w + 2 * pad > S(s, 360) ? lines_w + 2 * pad : S(s, 360);
    e->h = pad + title_h + lines_h + pad;
    e->title = (SDL_Rect){pad, pad, e->w - 2 * pad, title_h};
    e->lines = (SDL_Rect){pad, pad + title_h, lines_w, lines_h};
}

void view_panel_size(View *v, const ViewState *s, ViewPanel p, int *w, int *h)
{
    ExportGeom *e = malloc(sizeof *e);
    if (!e) {
        *w = *h = 0;
        return;
    }
    export_geometry(v, s, p, e);
    *w = e->w;
    *h = e->h;
    free(e);
}

void view_draw_panel(View *v, SDL_Renderer *r, const ViewState *s, ViewPanel p)
{
    const Theme *th = theme(s);
    ExportGeom *e = malloc(sizeof *e);
    set_color(r, th->bg);
    SDL_RenderClear(r);
    if (!e || !s->map.v) {
        free(e);
        return;
    }
    export_geometry(v, s, p, e);
    if (p != PANEL_LINES) {
        ViewState fig = *s;
        fig.key = fig.hover_i = fig.hover_j = -1;
        fig.zoom = 1.0f;
        draw_heatmap(v, r, &fig, &e->fig); /* with its title and facts */
        if (s->teach) /* teach mode's slide shows the target the class painted */
            draw_teach_target(r, s, &e->fig);
    } else {
        int tp = S(s, 16), tlh = text_line_height(v->text, tp);
        SDL_RenderSetClipRect(r, &e->title);
        draw_text_fit(v, tp, th->text, s->title, e->title.x, e->title.y, e->title.w);
        text_draw(v->text, S(s, 12), th->dim, s->facts, e->title.x, e->title.y + tlh + S(s, 2), 0, 0);
        SDL_RenderSetClipRect(r, NULL);
    }
    if (e->lines.w) {
        LinesGeom lg;
        ViewState all = *s;
        all.lines_scroll = 0;
        lines_geometry(v, &all, e->lines, &lg);
        draw_lines(v, r, &all, &lg);
    }
    free(e);
}
