/* The SDL back end of the figure layout: draws a Figure of an AttnMap
 * through a renderer (the window's heatmap panel, the PNG export). The SVG
 * back end (svg.c) draws the same Figure with the same colours. */
#include "figure_draw.h"
#include "attnviz/view.h"

#include <cglm/cglm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int measure_width(void *ctx, int px, const char *s)
{
    int w = 0;
    text_size(ctx, px, s, &w, NULL);
    return w;
}

static int measure_line(void *ctx, int px)
{
    return text_line_height(ctx, px);
}

TextMeasure figure_measure_text(TextCache *t)
{
    TextMeasure m = {measure_width, measure_line, t};
    return m;
}

SDL_Texture *figure_bar_texture(SDL_Renderer *r, ColormapId id)
{
    SDL_Texture *t = SDL_CreateTexture(r, SDL_PIXELFORMAT_RGB888, SDL_TEXTUREACCESS_STATIC, 1, 256);
    if (!t)
        return NULL;
    uint32_t px[256];
    for (int k = 0; k < 256; k++) {
        Rgb c = colormap_rgb(id, 1.0f - k / 255.0f); /* top = high */
        px[k] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
    }
    SDL_UpdateTexture(t, NULL, px, 4);
    SDL_SetTextureScaleMode(t, SDL_ScaleModeNearest); /* 256 steps: no visible bands */
    return t;
}

static SDL_Color col(Rgb c)
{
    SDL_Color o = {c.r, c.g, c.b, 255};
    return o;
}

static void fill(SDL_Renderer *r, SDL_Rect rc, Rgb c)
{
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, 255);
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
    SDL_RenderFillRect(r, &rc);
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
}

static void outline(SDL_Renderer *r, SDL_Rect rc, SDL_Color c, int t)
{
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, c.a);
    for (int k = 0; k < t; k++) {
        SDL_Rect o = {rc.x + k, rc.y + k, rc.w - 2 * k, rc.h - 2 * k};
        if (o.w <= 0 || o.h <= 0)
            break;
        SDL_RenderDrawRect(r, &o);
    }
}

/* An anti-aliased line: a core quad and two feathered edges. */
static void aa_line(SDL_Renderer *r, float x0, float y0, float x1, float y1, float w, SDL_Color c)
{
    vec2 dir = {x1 - x0, y1 - y0};
    glm_vec2_normalize(dir);
    float nx = -dir[1], ny = dir[0], off[4] = {-(w / 2 + 1), -w / 2, w / 2, w / 2 + 1};
    SDL_Vertex v[8];
    for (int e = 0; e < 4; e++)
        for (int k = 0; k < 2; k++) {
            SDL_Vertex *p = &v[k * 4 + e];
            p->position.x = (k ? x1 : x0) + nx * off[e];
            p->position.y = (k ? y1 : y0) + ny * off[e];
            p->color = c;
            p->color.a = e == 0 || e == 3 ? 0 : c.a;
            p->tex_coord.x = p->tex_coord.y = 0;
        }
    int idx[18], n = 0;
    for (int e = 0; e < 3; e++) {
        int a = e, b = e + 1, c2 = e + 4, d = e + 5;
        idx[n++] = a; idx[n++] = b; idx[n++] = c2;
        idx[n++] = b; idx[n++] = d; idx[n++] = c2;
    }
    SDL_RenderGeometry(r, NULL, v, 8, idx, n);
}

/* A label cut to max_w with "…" (figure_fit_label: not for the font's
 * hinting), aligned left (0), centred (1) or right (2). */
static void text_fit(TextCache *t, int px, SDL_Color c, const char *s, int x, int y, int align,
                     double angle, int max_w)
{
    char buf[264];
    TextMeasure tm = figure_measure_text(t);
    figure_fit_label(&tm, px, s, max_w, buf, sizeof buf);
    text_draw(t, px, c, buf, x, y, align, angle);
}

static void titles(const FigureDraw *d, const FigTitles *t)
{
    if (t->title_box.h)
        text_draw(d->text, t->title_px, col(d->th->text), t->title, t->title_box.x, t->title_box.y, 0, 0);
    for (int k = 0; k < t->n_facts; k++)
        text_draw(d->text, t->facts_px, col(d->th->dim), t->facts[k], t->facts_box[k].x,
                  t->facts_box[k].y, 0, 0);
}

static void axis_titles(const FigureDraw *d, const Figure *f)
{
    if (f->axis_px && f->Tq && f->Tk) {
        int w;
        text_size(d->text, f->axis_px, "queries", &w, NULL);
        text_draw(d->text, f->axis_px, col(d->th->dim), "keys", f->keys_cx, f->keys_y, 1, 0);
        text_draw(d->text, f->axis_px, col(d->th->dim), "queries", f->queries_x,
                  f->queries_cy + w / 2, 0, -90.0);
    }
}

/* The cells: the texture when there is one, else one rectangle each. */
static void cells(const FigureDraw *d, const Figure *f, const AttnMap *map)
{
    if (d->heat) {
        SDL_Rect src = {f->col0, f->row0, f->cols, f->rows};
        SDL_Rect dst = {f->grid.x, f->grid.y, f->grid.w, f->grid.h};
        SDL_RenderCopy(d->r, d->heat, &src, &dst);
    } else {
        for (int i = f->row0; i < f->row0 + f->rows; i++) {
            ColorScale rs = colormap_row_scale(&f->cb.cs, map, i);
            for (int j = f->col0; j < f->col0 + f->cols; j++) {
                int x = figure_cell_x(f, j), y = figure_cell_y(f, i);
                SDL_Rect rc = {x, y, figure_cell_x(f, j + 1) - x, figure_cell_y(f, i + 1) - y};
                fill(d->r, rc, attn_map_masked(map, i, j) ? d->th->mask
                                                          : colormap_scale_rgb(&rs, attn_map_at(map, i, j)));
            }
        }
    }
    /* masked cells: a hatch line across each, when cells are large enough */
    if (f->cell >= 12 * d->scale) {
        float w = fmaxf(1.0f, d->scale * 1.5f), c = f->cell, in = c * 0.22f;
        for (int i = f->row0; i < f->row0 + f->rows; i++)
            for (int j = f->col0; j < f->col0 + f->cols; j++)
                if (attn_map_masked(map, i, j)) {
                    float x0 = (float)figure_cell_x(f, j), y0 = (float)figure_cell_y(f, i);
                    aa_line(d->r, x0 + in, y0 + c - in, x0 + c - in, y0 + in, w, col(d->th->border));
                }
    }
    if (!f->value_px)
        return;
    int lh = text_line_height(d->text, f->value_px);
    for (int i = f->row0; i < f->row0 + f->rows; i++) {
        ColorScale rs = colormap_row_scale(&f->cb.cs, map, i);
        for (int j = f->col0; j < f->col0 + f->cols; j++) {
            if (attn_map_masked(map, i, j))
                continue;
            float v = attn_map_at(map, i, j); /* the weight itself, whatever the scale */
            char buf[32];
            colormap_cell_label(&f->cb.cs, v, buf, sizeof buf);
            text_draw(d->text, f->value_px, col(colormap_text_on(colormap_scale_rgb(&rs, v))), buf,
                      figure_cell_x(f, j) + (int)(f->cell / 2),
                      figure_cell_y(f, i) + (int)(f->cell / 2) - lh / 2, 1, 0);
        }
    }
}

static void labels(const FigureDraw *d, const Figure *f, const AttnMap *map)
{
    int px = f->label_px, lh = f->label_lh;
    for (int i = f->row0; i < f->row0 + f->rows; i++)
        if (figure_row_label_shown(f, i, d->query))
            text_fit(d->text, px, col(i == d->query ? d->th->accent : d->q_special && d->q_special[i] ? d->th->pos : d->th->text), map->q_labels[i],
                     f->grid.x - px / 2, figure_cell_y(f, i) + (int)(f->cell / 2) - lh / 2, 2, 0,
                     f->label_w);
    for (int j = f->col0; j < f->col0 + f->cols; j++) {
        if (!figure_col_label_shown(f, j, d->key))
            continue;
        SDL_Color c = col(j == d->key ? d->th->accent : d->k_special && d->k_special[j] ? d->th->pos : d->th->text);
        int cx = figure_cell_x(f, j) + (int)(f->cell / 2);
        if (f->rotate == 2) /* upright, reading upwards, centred on the column */
            text_fit(d->text, px, c, map->k_labels[j], cx - lh / 2, f->grid.y - px / 3, 0, -90.0, f->key_w);
        else if (f->rotate) /* -45° about the label's start, just above the column; no
                          longer than the widest the layout made room for (key_w) */
            text_fit(d->text, px, c, map->k_labels[j], cx - lh / 3, f->grid.y - px / 2 - lh, 0, -45.0,
                     f->label_w && f->label_w * 3 / 2 < f->key_w ? f->label_w * 3 / 2 : f->key_w);
        else
            text_draw(d->text, px, c, map->k_labels[j], cx, f->grid.y - lh - px / 7, 1, 0);
    }
}

/* The selected row, the focused cell and the hovered cell. */
static void outlines(const FigureDraw *d, const Figure *f)
{
    int s1 = f->line_w / 3 > 0 ? f->line_w / 3 : 1, c = (int)lroundf(f->cell);
    int q = d->query, k = d->key;
    if (q >= f->row0 && q < f->row0 + f->rows) {
        SDL_Rect rc = {f->grid.x - s1, figure_cell_y(f, q) - s1, f->grid.w + 2 * s1, c + 2 * s1};
        outline(d->r, rc, col(d->th->accent), f->line_w);
        if (k >= f->col0 && k < f->col0 + f->cols) {
            SDL_Rect kc = {figure_cell_x(f, k), figure_cell_y(f, q), c, c};
            outline(d->r, kc, col(d->th->text), 2 * s1);
        }
    }
    int hi = d->hover_i, hj = d->hover_j;
    if (hi >= f->row0 && hi < f->row0 + f->rows && hj >= f->col0 && hj < f->col0 + f->cols) {
        SDL_Rect rc = {figure_cell_x(f, hj), figure_cell_y(f, hi), c, c};
        SDL_Color hc = col(d->th->text);
        hc.a = 160;
        outline(d->r, rc, hc, 1);
    }
}

static void colorbar(const FigureDraw *d, const FigColorbar *cb)
{
    if (cb->bar.w <= 0) /* none: another figure's bar serves this one */
        return;
    SDL_Rect b = {cb->bar.x, cb->bar.y, cb->bar.w, cb->bar.h};
    if (d->bar)
        SDL_RenderCopy(d->r, d->bar, NULL, &b);
    outline(d->r, b, col(d->th->border), 1);
    int s1 = cb->line_w, tlh = text_line_height(d->text, cb->tick_px);
    SDL_Color dim = col(d->th->dim);
    for (int k = 0; k < cb->n_ticks; k++) {
        SDL_Rect tick = {b.x + b.w, cb->tick_y[k] - s1 / 2, 4 * s1, s1};
        fill(d->r, tick, d->th->dim);
        text_draw(d->text, cb->tick_px, dim, cb->ticks[k], cb->tick_x, cb->tick_y[k] - tlh / 2, 0, 0);
    }
    int cw;
    text_size(d->text, cb->tick_px, cb->caption, &cw, NULL);
    text_draw(d->text, cb->tick_px, dim, cb->caption, cb->caption_x, cb->caption_cy + cw / 2, 0, -90.0);
    if (cb->legend.w) {
        SDL_Rect l = {cb->legend.x, cb->legend.y, cb->legend.w, cb->legend.h};
        fill(d->r, l, d->th->mask);
        outline(d->r, l, col(d->th->border), 1);
        text_draw(d->text, cb->tick_px, dim, "masked", cb->tick_x, l.y + l.h / 2 - tlh / 2, 0, 0);
    }
}

void figure_draw(const FigureDraw *d, const Figure *f, const AttnMap *map)
{
    if (d->background)
        fill(d->r, (SDL_Rect){0, 0, f->w, f->h}, d->th->bg);
    titles(d, &f->t);
    if (!f->Tq || !f->Tk || !map->v) {
        text_draw(d->text, f->t.facts_px ? f->t.facts_px : 12, col(d->th->dim), "no tokens",
                  f->grid.x, f->grid.y, 0, 0);
        return;
    }
    axis_titles(d, f);
    cells(d, f, map);
    labels(d, f, map);
    outlines(d, f);
    colorbar(d, &f->cb);
}

SDL_Texture *figure_grid_texture(SDL_Renderer *r, const FigureGrid *g, const AttnMaps *ms,
                                 const AttnTheme *th)
{
    int w = g->H * g->Tk, h = g->L * g->Tq;
    if (w < 1 || h < 1)
        return NULL;
    uint32_t *px = malloc((size_t)w * h * sizeof *px), *lut = malloc((COLORMAP_STEPS + 1) * sizeof *lut);
    SDL_Texture *t = NULL;
    if (px && lut) {
        colormap_lut(g->cb.cs.id, lut);
        for (int l = 0; l < g->L; l++)
            for (int k = 0; k < g->H; k++) {
                AttnMap m = attn_maps_get(ms, l, k);
                colormap_map_texels(&g->cb.cs, &m, lut, th->mask,
                                    px + (size_t)l * g->Tq * w + (size_t)k * g->Tk, w);
            }
        t = SDL_CreateTexture(r, SDL_PIXELFORMAT_RGB888, SDL_TEXTUREACCESS_STATIC, w, h);
        if (t) {
            SDL_UpdateTexture(t, NULL, px, w * 4);
            SDL_SetTextureScaleMode(t, SDL_ScaleModeNearest);
        }
    }
    free(px);
    free(lut);
    return t;
}

/* One map of a grid: its cells one rectangle each, or scaled from the
 * texels of its rows when cells are smaller than 3 pixels. */
static void grid_map(const FigureDraw *d, const FigureGrid *g, const AttnMap *m, int l, int h)
{
    if (d->heat) { /* the grid's texture: map (l, h) at (h·Tk, l·Tq) */
        FigRect r = figure_grid_map_rect(g, l, h);
        SDL_Rect src = {h * g->Tk, l * g->Tq, g->Tk, g->Tq}, dst = {r.x, r.y, r.w, r.h};
        SDL_RenderCopy(d->r, d->heat, &src, &dst);
        return;
    }
    FigRect r = figure_grid_map_rect(g, l, h);
    for (int i = 0; i < m->Tq; i++) {
        int y = r.y + (int)lroundf(i * g->cell), y1 = r.y + (int)lroundf((i + 1) * g->cell);
        ColorScale rs = colormap_row_scale(&g->cb.cs, m, i);
        for (int j = 0; j < m->Tk; j++) {
            int x = r.x + (int)lroundf(j * g->cell), x1 = r.x + (int)lroundf((j + 1) * g->cell);
            Rgb c = attn_map_masked(m, i, j) ? d->th->mask : colormap_scale_rgb(&rs, attn_map_at(m, i, j));
            fill(d->r, (SDL_Rect){x, y, x1 - x, y1 - y}, c);
        }
    }
}

void figure_draw_grid(const FigureDraw *d, const FigureGrid *g, const AttnMaps *ms)
{
    if (d->background)
        fill(d->r, (SDL_Rect){0, 0, g->w, g->h}, d->th->bg);
    titles(d, &g->t);
    SDL_Color dim = col(d->th->dim);
    int lh = text_line_height(d->text, g->layer_px);
    /* maps closer than their labels (a small panel): every k-th labelled,
     * and the selected one, none running into another */
    char widest[32];
    int lw;
    snprintf(widest, sizeof widest, "%d", g->H);
    text_size(d->text, g->head_px, widest, &lw, NULL);
    int pitch_x = g->map_w + g->mark_w + g->gap, pitch_y = g->map_h + g->label_h + g->gap;
    int every_h = pitch_x > 0 ? (lw + lh / 3 + pitch_x - 1) / pitch_x : 1;
    int every_l = pitch_y > 0 ? (lh + pitch_y - 1) / pitch_y : 1;
    every_h = every_h < 1 ? 1 : every_h;
    every_l = every_l < 1 ? 1 : every_l;
    for (int h = 0; h < g->H && !g->sorted; h++) { /* sorted: each map has its own label */
        int near_sel = g->sel_h >= 0 && h != g->sel_h && abs(h - g->sel_h) < every_h;
        if (every_h > 1 && (h % every_h != 0 || near_sel) && h != g->sel_h)
            continue;
        char buf[32];
        snprintf(buf, sizeof buf, g->map_w >= 6 * g->head_px ? "head %d" : "%d", h + 1);
        FigRect r = figure_grid_map_rect(g, 0, h);
        SDL_Color c = h == g->sel_h ? col(d->th->accent) : dim;
        if (d->head_colors) /* the line diagram's colour of the head */
            c = view_head_color(h, d->th == theme_get(1));
        text_draw(d->text, g->head_px, c, buf, r.x + r.w / 2, r.y - g->label_h - lh - g->gap / 2, 1, 0);
        if (d->head_colors && h == g->sel_h) /* the selected head underlined */
            fill(d->r, (SDL_Rect){r.x + r.w / 4, r.y - g->label_h - g->gap / 2 - 1, r.w / 2, 2},
                 (Rgb){c.r, c.g, c.b});
    }
    for (int l = 0; l < g->L && g->L > 1 && !g->sorted; l++) {
        int near_sel = g->sel_l >= 0 && l != g->sel_l && abs(l - g->sel_l) < every_l;
        if (every_l > 1 && (l % every_l != 0 || near_sel) && l != g->sel_l)
            continue;
        char buf[32];
        snprintf(buf, sizeof buf, "layer %d", l + 1);
        FigRect r = figure_grid_map_rect(g, l, 0);
        text_draw(d->text, g->layer_px, l == g->sel_l ? col(d->th->accent) : dim, buf,
                  r.x - g->gap, r.y + r.h / 2 - lh / 2, 2, 0);
    }
    for (int l = 0; l < g->L; l++)
        for (int h = 0; h < g->H; h++) {
            AttnMap m = attn_maps_get(ms, l, h);
            grid_map(d, g, &m, l, h);
        }
    if (g->sel_l >= 0 && g->sel_l < g->L && g->sel_h >= 0 && g->sel_h < g->H) {
        FigRect r = figure_grid_map_rect(g, g->sel_l, g->sel_h);
        int t = g->gap / 3 > 1 ? g->gap / 3 : 1;
        outline(d->r, (SDL_Rect){r.x - t, r.y - t, r.w + 2 * t, r.h + 2 * t}, col(d->th->accent), t);
    }
    colorbar(d, &g->cb);
}
