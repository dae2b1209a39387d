/* The heatmap: its geometry (cells, labels and colour bar fitted into an
 * area, zoomed and panned), the matrix as a texture of one texel per cell,
 * and the drawing of cells, the causal mask's hatch, values, token labels and
 * the outlines of the selected row, focused column and hovered cell. The
 * window and the export panels draw it through the same functions. */
#include "view_internal.h"

#include <stdlib.h>
#include <string.h>

/* The colour scale for the shown matrix: a scan of its T² values. */
static ColorScale shown_scale(const ViewState *s)
{
    int T = shown_T(s);
    return colormap_scale_for(shown_matrix(s), T, T, s->m->res.causal,
                              shown_kind(s) != MODEL_WEIGHTS, s->cmap);
}

/* The shown matrix's colour scale, scanned once per matrix (layout, the
 * texture and the colour bar all ask for it every frame). */
ColorScale heat_scale(View *v, const ViewState *s)
{
    unsigned long key[6] = {s->m->generation, (unsigned long)shown_T(s), (unsigned long)shown_kind(s),
                            (unsigned long)(long)s->head, (unsigned long)s->cmap, 1};
    if (memcmp(key, v->scale_key, sizeof key) != 0) {
        v->heat_scale = shown_scale(s);
        for (int k = 0; k <= 4; k++)
            colormap_tick_label(v->heat_scale.lo, v->heat_scale.hi, k, 4, v->ticks[k],
                                sizeof v->ticks[k]);
        memcpy(v->scale_key, key, sizeof key);
    }
    return v->heat_scale;
}

/* Fit the heatmap with its labels and colour bar into area. */
void heat_geometry(View *v, const ViewState *s, SDL_Rect area, float max_cell, HeatGeom *g)
{
    int T = shown_T(s);
    memset(g, 0, sizeof *g);
    /* room under the grid for half of the colour bar's lowest tick label */
    area.h -= text_line_height(v->text, S(s, 12)) / 2 + 1;
    g->label_px = S(s, 14);
    int lh = text_line_height(v->text, g->label_px);
    int bar_w = S(s, 14), tick_w = tick_width(v, s), gap = S(s, 10);
    int label_w = T ? max_label_width(v, s, g->label_px, T) : 0;
    if (label_w > S(s, 140))
        label_w = S(s, 140);
    int avail_w = area.w - label_w - gap - gap - S(s, 4) - bar_w - tick_w;
    int top_rot = (int)(label_w * 0.72f) + lh;
    int avail_h = area.h - top_rot;
    float zoom = s->zoom >= 1.0f ? s->zoom : 1.0f;
    float fit = T ? fminf((float)avail_w / T, (float)avail_h / T) : 0.0f;
    float cell = fminf(fit * zoom, max_cell);
    if (cell < 1.0f)
        cell = 1.0f;
    /* flat key labels when every token fits in a cell */
    g->rotate = label_w + S(s, 4) > cell;
    int top = g->rotate ? top_rot : lh + S(s, 4);
    if (!g->rotate && zoom <= 1.0f) {
        avail_h = area.h - top;
        fit = T ? fminf((float)avail_w / T, (float)avail_h / T) : 0.0f;
        cell = fminf(fit, max_cell);
        g->rotate = label_w + S(s, 4) > cell;
        if (g->rotate) {
            top = top_rot;
            cell = fminf(T ? fminf((float)avail_w / T, (float)(area.h - top) / T) : 0, max_cell);
        }
    }
    if (cell < 1.0f)
        cell = 1.0f;
    g->cell = cell;
    /* (a cell of avail_w / T gives T columns, not T − 1 by rounding) */
    int vis_c = (int)(avail_w / cell + 1e-3f), vis_r = (int)((area.h - top) / cell + 1e-3f);
    if (vis_c > T) vis_c = T;
    if (vis_r > T) vis_r = T;
    if (vis_c < 1) vis_c = T ? 1 : 0;
    if (vis_r < 1) vis_r = T ? 1 : 0;
    g->row0 = s->pan_row < 0 ? 0 : s->pan_row > T - vis_r ? T - vis_r : s->pan_row;
    g->col0 = s->pan_col < 0 ? 0 : s->pan_col > T - vis_c ? T - vis_c : s->pan_col;
    if (g->row0 < 0) g->row0 = 0;
    if (g->col0 < 0) g->col0 = 0;
    g->rows = vis_r;
    g->cols = vis_c;
    g->grid.x = area.x + label_w + gap;
    g->grid.y = area.y + top;
    g->grid.w = (int)lroundf(vis_c * cell);
    g->grid.h = (int)lroundf(vis_r * cell);
    g->colorbar.x = g->grid.x + g->grid.w + gap + S(s, 4);
    g->colorbar.y = g->grid.y;
    g->colorbar.w = bar_w;
    g->colorbar.h = g->grid.h > S(s, 60) ? g->grid.h : S(s, 60);
    g->value_px = cell >= S(s, 34) ? (cell >= S(s, 56) ? S(s, 14) : S(s, 12)) : 0;
}

static int cell_x(const HeatGeom *g, int j)
{
    return g->grid.x + (int)lroundf((j - g->col0) * g->cell);
}

static int cell_y(const HeatGeom *g, int i)
{
    return g->grid.y + (int)lroundf((i - g->row0) * g->cell);
}

static void update_heat_texture(View *v, const ViewState *s)
{
    int T = shown_T(s);
    /* a hover or a selection redraws the frame, not the matrix */
    unsigned long key[6] = {s->m->generation, (unsigned long)T, (unsigned long)shown_kind(s),
                            (unsigned long)(long)s->head, (unsigned long)s->cmap, (unsigned long)s->dark};
    if (v->heat && v->heat_side >= T && memcmp(key, v->heat_key, sizeof key) == 0)
        return;
    memcpy(v->heat_key, key, sizeof key);
    ColorScale cs = heat_scale(v, s);
    if (!v->heat || v->heat_side < T) {
        if (v->heat)
            SDL_DestroyTexture(v->heat);
        v->heat = SDL_CreateTexture(v->r, SDL_PIXELFORMAT_RGB888,
                                    SDL_TEXTUREACCESS_STREAMING, T, T);
        v->heat_side = T;
        if (!v->heat)
            return;
        SDL_SetTextureScaleMode(v->heat, SDL_ScaleModeNearest);
    }
    void *pixels;
    int pitch;
    SDL_Rect rc = {0, 0, T, T};
    if (SDL_LockTexture(v->heat, &rc, &pixels, &pitch) != 0) {
        memset(v->heat_key, 0, sizeof v->heat_key);
        return;
    }
    const float *M = shown_matrix(s);
    SDL_Color mk = theme(s)->mask;
    uint32_t mask = (uint32_t)mk.r << 16 | (uint32_t)mk.g << 8 | mk.b;
    /* the colour map's table as texels: the same colours colormap_scale_rgb
     * gives (it looks up t on COLORMAP_STEPS + 1 entries too) */
    if (v->heat_lut_id != (int)cs.id) {
        for (int k = 0; k <= COLORMAP_STEPS; k++) {
            Rgb c = colormap_rgb(cs.id, (float)k / COLORMAP_STEPS);
            v->heat_lut[k] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
        }
        v->heat_lut_id = (int)cs.id;
    }
    for (int i = 0; i < T; i++) {
        uint32_t *row = (uint32_t *)((uint8_t *)pixels + (size_t)i * pitch);
        int nv = s->m->res.causal && i + 1 < T ? i + 1 : T;
        colormap_scale_texels(&cs, M + (size_t)i * T, nv, v->heat_lut, row);
        for (int j = nv; j < T; j++)
            row[j] = mask;
    }
    SDL_UnlockTexture(v->heat);
}

/* The causal mask's hidden cells: a hatch line across each, when cells are
 * large enough. */
static void draw_hatch(SDL_Renderer *r, const ViewState *s, const HeatGeom *g)
{
    if (!s->m->res.causal || g->cell < S(s, 12))
        return;
    SDL_Color hc = theme(s)->border;
    for (int i = g->row0; i < g->row0 + g->rows; i++)
        for (int j = i + 1 > g->col0 ? i + 1 : g->col0; j < g->col0 + g->cols; j++) {
            float x0 = (float)cell_x(g, j), y0 = (float)cell_y(g, i);
            float c = g->cell, in = c * 0.22f;
            vec2 pts[2] = {{x0 + in, y0 + c - in}, {x0 + c - in, y0 + in}};
            thick_polyline(r, pts, 2, fmaxf(1.0f, s->scale * 1.5f), hc);
        }
}

/* The values in the cells, when the geometry gives them a font size. */
static void draw_values(View *v, const ViewState *s, const HeatGeom *g)
{
    if (!g->value_px)
        return;
    int T = shown_T(s);
    const float *M = shown_matrix(s);
    ColorScale cs = heat_scale(v, s);
    int lh = text_line_height(v->text, g->value_px);
    for (int i = g->row0; i < g->row0 + g->rows; i++)
        for (int j = g->col0; j < g->col0 + g->cols; j++) {
            if (attn_masked(&s->m->res, i, j))
                continue;
            float val = M[(size_t)i * T + j];
            char buf[32];
            colormap_cell_label(&cs, val, buf, sizeof buf);
            SDL_Color tc = rgb_color(colormap_text_on(colormap_scale_rgb(&cs, val)));
            text_draw(v->text, g->value_px, tc, buf,
                      cell_x(g, j) + (int)(g->cell / 2),
                      cell_y(g, i) + (int)(g->cell / 2) - lh / 2, 1, 0);
        }
}

/* Query labels left of the rows, key labels above the columns (flat or at
 * -45°): thinned out when cells are smaller than a line. */
static void draw_labels(View *v, const ViewState *s, const HeatGeom *g)
{
    const Theme *th = theme(s);
    int lh = text_line_height(v->text, g->label_px);
    int every = (int)ceilf((lh * 0.9f) / g->cell);
    if (every < 1)
        every = 1;
    /* labels at -45° stand cell·every·sin 45° apart, not cell·every */
    int every_c = g->rotate ? (int)ceilf((lh * 0.9f) / (g->cell * 0.7071f)) : every;
    if (every_c < 1)
        every_c = 1;
    /* thinned labels give way to the selected row's and column's */
    for (int i = g->row0; i < g->row0 + g->rows; i++) {
        if (i != s->query && ((i % every) || (s->query >= 0 && abs(i - s->query) < every)))
            continue;
        SDL_Color c = i == s->query ? th->accent : th->text;
        text_draw(v->text, g->label_px, c, tok_text(&s->m->toks, i), g->grid.x - S(s, 8),
                  cell_y(g, i) + (int)(g->cell / 2) - lh / 2, 2, 0);
    }
    for (int j = g->col0; j < g->col0 + g->cols; j++) {
        if (j != s->key && ((j % every_c) || (s->key >= 0 && abs(j - s->key) < every_c)))
            continue;
        SDL_Color c = j == s->key ? th->accent : th->text;
        const char *t = tok_text(&s->m->toks, j);
        int cx = cell_x(g, j) + (int)(g->cell / 2);
        if (g->rotate) {
            /* rotated -45° about the label's start, just above the column */
            int x = cx - lh / 3, y = g->grid.y - S(s, 6) - lh;
            text_draw(v->text, g->label_px, c, t, x, y, 0, -45.0);
        } else {
            text_draw(v->text, g->label_px, c, t, cx, g->grid.y - lh - S(s, 2), 1, 0);
        }
    }
}

/* Outlines of the selected row, the focused cell and the hovered cell. */
static void draw_marks(SDL_Renderer *r, const ViewState *s, const HeatGeom *g)
{
    const Theme *th = theme(s);
    if (s->query >= g->row0 && s->query < g->row0 + g->rows) {
        SDL_Rect rc = {g->grid.x - S(s, 1), cell_y(g, s->query) - S(s, 1),
                       g->grid.w + S(s, 2), (int)lroundf(g->cell) + S(s, 2)};
        outline(r, rc, th->accent, S(s, 3) > 1 ? S(s, 3) : 1);
    }
    if (s->key >= g->col0 && s->key < g->col0 + g->cols && s->query >= 0 &&
        s->query >= g->row0 && s->query < g->row0 + g->rows) {
        SDL_Rect rc = {cell_x(g, s->key), cell_y(g, s->query), (int)lroundf(g->cell),
                       (int)lroundf(g->cell)};
        outline(r, rc, th->text, S(s, 2) > 1 ? S(s, 2) : 1);
    }
    if (s->hover_i >= g->row0 && s->hover_i < g->row0 + g->rows &&
        s->hover_j >= g->col0 && s->hover_j < g->col0 + g->cols) {
        SDL_Rect rc = {cell_x(g, s->hover_j), cell_y(g, s->hover_i),
                       (int)lroundf(g->cell), (int)lroundf(g->cell)};
        SDL_Color hc = th->text;
        hc.a = 160;
        outline(r, rc, hc, 1);
    }
}

void draw_heatmap(View *v, SDL_Renderer *r, const ViewState *s, const HeatGeom *g)
{
    if (shown_T(s) == 0)
        return;
    update_heat_texture(v, s);
    SDL_Rect src = {g->col0, g->row0, g->cols, g->rows};
    if (v->heat)
        SDL_RenderCopy(r, v->heat, &src, &g->grid);
    draw_hatch(r, s, g);
    draw_values(v, s, g);
    draw_labels(v, s, g);
    draw_marks(r, s, g);
    draw_colorbar(v, r, s, g->colorbar);
}
