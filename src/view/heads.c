/* Head roles in the window (issue 26): the model view's marks (each small
 * map's score as a number and a bar beside it, and in a sorted grid its
 * layer and head above it), the score overview (one L × H heatmap of the
 * chosen score) in the model view's room. Drawn from the plain numbers the
 * app gives (ViewState.grid_score, grid_order, score_map); not the scores'
 * maths. */
#include "view_internal.h"

#include <stdio.h>
#include <string.h>

/* The number a mark shows: two decimals for the scores in [0, 1] and the
 * entropy, one for a mean distance of 10 or more; a dash for none. */
static void mark_text(double x, char *buf, size_t n)
{
    if (isnan(x))
        snprintf(buf, n, "\xE2\x80\x93");
    else
        snprintf(buf, n, fabs(x) >= 9.95 ? "%.1f" : "%.2f", x);
}

/* The marks' numbers and the sorted maps' "L2 H2": read from the back of
 * a room, as large as the status bar's text. */
static int mark_px(const ViewState *s)
{
    return S(s, 13);
}

/* A mark's width with its number (the bar alone is S(3) + S(4)), the
 * number half a bar's width right of the bar. */
static int mark_full_w(View *v, const ViewState *s)
{
    int w;
    text_size(v->text, mark_px(s), "0.00", &w, NULL);
    return S(s, 3) + S(s, 4) + S(s, 4) / 2 + w;
}

void heads_grid_options(View *v, const ViewState *s, FigureOptions *o)
{
    o->grid_kv_group = s->kv_group;
    o->grid_mark_px = mark_px(s);
    if (!s->grid_score)
        return;
    int full = mark_full_w(v, s), H = s->grid ? s->grid->H : 1;
    /* many heads (Llama 3.2 1B's 32): the maps would be narrower than their
     * numbers; the bars alone then, the numbers in the overview (U) and the
     * tooltip */
    int per = H > 0 ? (o->area_w - S(s, 60)) / H : o->area_w;
    if (!o->area_w) /* an export's natural size: room for the numbers */
        per = 3 * full;
    o->grid_numbers = per - full >= 2 * (full - S(s, 7));
    o->grid_mark_w = o->grid_numbers ? full : S(s, 3) + S(s, 4);
    o->grid_label_h = s->grid_order ? text_line_height(v->text, mark_px(s)) : 0;
    o->grid_order = s->grid_order;
}

void draw_grid_marks(View *v, SDL_Renderer *r, const ViewState *s, const FigureGrid *g)
{
    if (!s->grid_score || g->L < 1 || g->H < 1)
        return;
    const Theme *th = theme(s);
    int px = g->mark_px, lh = text_line_height(v->text, px), bw = g->bar_w;
    double full = s->grid_score_full > 0 ? s->grid_score_full : 1.0;
    for (int l = 0; l < g->L; l++)
        for (int h = 0; h < g->H; h++) {
            FigRect m = figure_grid_map_rect(g, l, h);
            double x = s->grid_score[l * g->H + h];
            /* the bar: a track as tall as the map, filled from the bottom */
            SDL_Rect track = {m.x + m.w + g->bar_x, m.y, bw, m.h};
            fill(r, track, th->panel2);
            if (!isnan(x)) {
                double f = x / full;
                f = f < 0 ? 0 : f > 1 ? 1 : f;
                int fh = (int)lround(f * m.h);
                fill(r, (SDL_Rect){track.x, m.y + m.h - fh, bw, fh}, th->accent);
            }
            char buf[32];
            mark_text(x, buf, sizeof buf);
            int ty = m.h >= lh ? m.y + m.h - lh : m.y + m.h / 2 - lh / 2;
            if (g->numbers) /* else the bars alone (many heads) */
                text_draw(v->text, px, isnan(x) ? th->dim : th->text, buf, track.x + bw + bw / 2, ty, 0, 0);
            if (g->sorted) { /* its layer and head, the head in its colour */
                char lb[24], hb[16];
                snprintf(lb, sizeof lb, "L%d ", l + 1);
                snprintf(hb, sizeof hb, "H%d", h + 1);
                int y = m.y - g->label_h - (g->gap / 3 > 1 ? g->gap / 3 : 1); /* clear of the selection's outline */
                int w = text_draw(v->text, px, th->dim, lb, m.x, y, 0, 0);
                text_draw(v->text, px, view_head_color(h, s->dark), hb, m.x + w, y, 0, 0);
            }
        }
}

void draw_kv_groups(View *v, SDL_Renderer *r, const ViewState *s, const FigureGrid *g)
{
    /* in the text's colour, thick and labelled: read from the back of the
       room, and not taken for the selection (accent) or a head (its colour) */
    SDL_Color c = theme(s)->text;
    TextMeasure tm = figure_measure_text(v->text);
    FigKvBracket b;
    for (int k = 0; figure_grid_kv_bracket(g, k, &tm, &b); k++) {
        fill(r, (SDL_Rect){b.x0, b.y, b.gap_x0 - b.x0, b.t}, c);
        fill(r, (SDL_Rect){b.gap_x1, b.y, b.x1 - b.gap_x1, b.t}, c);
        fill(r, (SDL_Rect){b.x0, b.y, b.t, b.tick_h + b.t}, c);
        fill(r, (SDL_Rect){b.x1 - b.t, b.y, b.t, b.tick_h + b.t}, c);
        if (b.label[0])
            text_draw(v->text, g->mark_px, c, b.label, b.label_cx, b.label_y, 1, 0);
    }
}

void layout_score_map(View *v, const ViewState *s, SDL_Rect area, Figure *f)
{
    FigureOptions o;
    memset(&o, 0, sizeof o);
    o.scale = s->scale;
    o.area_x = area.x;
    o.area_y = area.y;
    o.area_w = area.w;
    o.area_h = area.h;
    /* big enough to read from the back of the room: a few layers and
       heads fill the room's height or width, not 80-pixel cells */
    o.max_cell = (float)S(s, 240);
    o.zoom = 1.0f;
    o.query = s->grid_layer;
    o.key = s->grid_head;
    o.cmap = s->cmap;
    o.cscale = s->score_cscale; /* the app's: a score in [0, 1] fixed 0–1 unless Shift+C */
    o.caption = s->score_caption;
    TextMeasure tm = figure_measure_text(v->text);
    figure_layout(f, s->score_map, &o, &tm);
}

void draw_score_map(View *v, SDL_Renderer *r, const ViewState *s, const Figure *f)
{
    FigureDraw d = {r, v->text, NULL, bar_texture(v, f->cb.cs.id), theme_get(s->dark), s->scale,
                    s->grid_layer, s->grid_head, s->hover_i, s->hover_j, 0, NULL, NULL, 0};
    figure_draw(&d, f, s->score_map);
    /* the heads' labels over the columns in their colours */
    for (int h = 0; h < f->Tk && s->score_map->n_heads == f->Tk; h++) {
        if (f->col0 > h || h >= f->col0 + f->cols)
            continue;
        int x0 = figure_cell_x(f, h), x1 = figure_cell_x(f, h + 1);
        fill(r, (SDL_Rect){x0 + 1, f->grid.y - S(s, 4), x1 - x0 - 2, S(s, 3)}, view_head_color(h, s->dark));
    }
}

/* Heads switched off (issue 37, Ctrl+K): each such map crossed out in the
 * error colour, thick enough to see from the back of the room, and "off"
 * in its corner when the map has room for the word. */
void draw_ablated(View *v, SDL_Renderer *r, const ViewState *s, const FigureGrid *g)
{
    if (!s->ablated || g->L < 1 || g->H < 1)
        return;
    SDL_Color c = theme(s)->error;
    float w = (float)S(s, 3);
    int stride = s->heads > g->H ? s->heads : g->H; /* the overview may show fewer heads than there are */
    for (int l = 0; l < g->L; l++)
        for (int h = 0; h < g->H; h++) {
            if (!s->ablated[l * stride + h])
                continue;
            FigRect m = figure_grid_map_rect(g, l, h);
            vec2 a[2] = {{(float)m.x, (float)m.y}, {(float)(m.x + m.w), (float)(m.y + m.h)}};
            vec2 b[2] = {{(float)(m.x + m.w), (float)m.y}, {(float)m.x, (float)(m.y + m.h)}};
            thick_polyline(r, a, 2, w, c);
            thick_polyline(r, b, 2, w, c);
            outline(r, (SDL_Rect){m.x, m.y, m.w, m.h}, c, S(s, 2));
            int px = g->mark_px > 0 ? g->mark_px : S(s, 12), tw;
            text_size(v->text, px, "off", &tw, NULL);
            if (m.w >= tw + S(s, 8) && m.h >= 2 * text_line_height(v->text, px)) {
                int lh = text_line_height(v->text, px);
                fill(r, (SDL_Rect){m.x + S(s, 2), m.y + S(s, 2), tw + S(s, 6), lh}, theme(s)->bg);
                text_draw(v->text, px, c, "off", m.x + S(s, 5), m.y + S(s, 2), 0, 0);
            }
        }
}
