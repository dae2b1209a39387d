/* The standalone panels of the PNG export: the sentence and a line of facts
 * as the title, then the heatmap (labels, colour bar), the line diagram, or
 * both side by side, sized to the matrix rather than to a window. */
#include "view_internal.h"

#include <stdio.h>
#include <string.h>

/* The facts line: mode, head, scaling, mask, τ. */
static void facts(const ViewState *s, char *buf, size_t n)
{
    const AttnConfig *c = &s->m->cfg;
    char hb[40];
    head_label(s, hb, sizeof hb);
    snprintf(buf, n, "%s \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 \xCF\x84 = %.2f",
             c->mode == ATTN_MODE_BASIC ? "basic" : "learned", hb,
             matrix_name(s->matrix), c->scale ? "scaled 1/\xE2\x88\x9A" "dk" : "unscaled",
             c->causal ? "causal mask" : "no mask", (double)c->temperature);
}

/* Cell size of an exported heatmap: 40 px for a classroom sentence, down to
 * one pixel per cell (at scale 1) so a 1024-token matrix stays a sane image. */
static float export_cell(const ViewState *s)
{
    int T = shown_T(s);
    float c = T ? floorf(640.0f / T) : 40.0f;
    if (c > 40.0f)
        c = 40.0f;
    if (c < 1.0f)
        c = 1.0f;
    return c * s->scale;
}

/* Sizes of the export layout parts, in pixels. */
typedef struct ExportGeom {
    int w, h;
    SDL_Rect title, heat, lines;
} ExportGeom;

static void export_geometry(View *v, const ViewState *s, ViewPanel p, ExportGeom *e)
{
    int T = shown_T(s);
    float cell = export_cell(s);
    int pad = S(s, 16);
    int lp = S(s, 14);
    int lw = T ? max_label_width(v, s, lp, T) : 0;
    if (lw > S(s, 140))
        lw = S(s, 140);
    int lh = text_line_height(v->text, lp);
    int grid = (int)lroundf(cell * T);
    int rotate = lw + S(s, 4) > cell;
    int top = rotate ? (int)(lw * 0.72f) + lh : lh + S(s, 4);
    int heat_w = lw + S(s, 10) + grid + S(s, 10) + S(s, 4) + S(s, 14) + tick_width(v, s);
    int heat_h = top + (grid > S(s, 60) ? grid : S(s, 60)) + S(s, 4) +
                 text_line_height(v->text, S(s, 12)) / 2 + 1; /* see heat_geometry */
    int title_h = 2 * text_line_height(v->text, S(s, 14)) + S(s, 8);
    int lines_w = 2 * lw + S(s, 220);
    int lines_h = T * S(s, 30) + S(s, 16);
    if (lines_h > S(s, 1600))
        lines_h = S(s, 1600);
    if (lines_h < heat_h && p == PANEL_BOTH)
        lines_h = heat_h;
    memset(e, 0, sizeof *e);
    int content_w = p == PANEL_HEATMAP ? heat_w : p == PANEL_LINES ? lines_w : heat_w + pad + lines_w;
    int content_h = p == PANEL_HEATMAP ? heat_h : p == PANEL_LINES ? lines_h : (heat_h > lines_h ? heat_h : lines_h);
    e->w = content_w + 2 * pad;
    int min_w = S(s, 360);
    if (e->w < min_w)
        e->w = min_w;
    e->h = pad + title_h + content_h + pad;
    e->title = (SDL_Rect){pad, pad, e->w - 2 * pad, title_h};
    int y = pad + title_h;
    if (p != PANEL_LINES)
        e->heat = (SDL_Rect){pad, y, heat_w, heat_h};
    if (p != PANEL_HEATMAP)
        e->lines = (SDL_Rect){p == PANEL_BOTH ? pad + heat_w + pad : pad, y, lines_w, lines_h};
}

void view_panel_size(View *v, const ViewState *s, ViewPanel p, int *w, int *h)
{
    ExportGeom e;
    export_geometry(v, s, p, &e);
    *w = e.w;
    *h = e.h;
}

void view_draw_panel(View *v, SDL_Renderer *r, const ViewState *s, ViewPanel p)
{
    const Theme *th = theme(s);
    ExportGeom e;
    export_geometry(v, s, p, &e);
    set_color(r, th->bg);
    SDL_RenderClear(r);
    if (!s->m)
        return;
    char f[300];
    facts(s, f, sizeof f);
    int tp = S(s, 14), tlh = text_line_height(v->text, tp);
    SDL_RenderSetClipRect(r, &e.title);
    draw_text_fit(v, tp, th->text, s->m->text ? s->m->text : "", e.title.x, e.title.y, e.title.w);
    text_draw(v->text, S(s, 12), th->dim, f, e.title.x, e.title.y + tlh + S(s, 2), 0, 0);
    SDL_RenderSetClipRect(r, NULL);
    if (e.heat.w) {
        HeatGeom g;
        ViewState fit = *s;
        fit.zoom = 1.0f;
        fit.pan_row = fit.pan_col = 0;
        heat_geometry(v, &fit, e.heat, export_cell(s), &g);
        draw_heatmap(v, r, &fit, &g);
    }
    if (e.lines.w) {
        LinesGeom lg;
        ViewState all = *s;
        all.lines_scroll = 0;
        lines_geometry(v, &all, e.lines, &lg);
        draw_lines(v, r, &all, &lg);
    }
}
