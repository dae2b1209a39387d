/* The view: window layout and hit testing, and drawing of every panel
 * (sentence bar, controls, heatmap, line diagram, weight editor, step view,
 * status bar, help, tooltip) from a ViewState. The same heatmap and line
 * drawing serve the window and the PNG export. */
#include "view_internal.h"

#include <cglm/cglm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int point_in(SDL_Rect rc, int x, int y)
{
    return x >= rc.x && y >= rc.y && x < rc.x + rc.w && y < rc.y + rc.h;
}

/* ---- create / destroy ------------------------------------------------------ */

View *view_create(SDL_Renderer *r, const char *font_path, AttnErr *err)
{
    View *v = calloc(1, sizeof *v);
    if (!v) {
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        return NULL;
    }
    v->r = r;
    v->heat_lut_id = -1;
    v->text = text_create(r, font_path, err);
    if (!v->text) {
        free(v);
        return NULL;
    }
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    return v;
}

void view_destroy(View *v)
{
    if (!v)
        return;
    if (v->heat)
        SDL_DestroyTexture(v->heat);
    if (v->edit_tex)
        SDL_DestroyTexture(v->edit_tex);
    for (int i = 0; i <= CMAP_DIVERGING; i++)
        if (v->bar[i])
            SDL_DestroyTexture(v->bar[i]);
    text_destroy(v->text);
    free(v);
}

void view_set_renderer(View *v, SDL_Renderer *r)
{
    if (v->heat)
        SDL_DestroyTexture(v->heat);
    v->heat = NULL;
    v->heat_side = 0;
    if (v->edit_tex)
        SDL_DestroyTexture(v->edit_tex);
    v->edit_tex = NULL;
    v->edit_tw = v->edit_th = 0;
    for (int i = 0; i <= CMAP_DIVERGING; i++) {
        if (v->bar[i])
            SDL_DestroyTexture(v->bar[i]);
        v->bar[i] = NULL;
    }
    text_set_renderer(v->text, r);
    v->r = r;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
}

/* ---- window layout ------------------------------------------------------- */

void view_layout(View *v, const ViewState *s, int w, int h, ViewLayout *l)
{
    memset(l, 0, sizeof *l);
    l->w = w;
    l->h = h;
    int pad = S(s, 8);
    int y = pad;
    l->sentence = (SDL_Rect){pad, y, w - 2 * pad, S(s, 44)};
    y += l->sentence.h + S(s, 6);
    /* controls: full labels, or compact ones, wrapped onto a second row when
     * even those do not fit (a narrow window or a large interface scale) */
    int px = ctl_px(s), gap = S(s, 6), bpad = S(s, 8), row_h = S(s, 32);
    int right = pad + (w - 2 * pad), rows = 1;
    for (int compact = 0; compact < 2; compact++) {
        int x = pad;
        rows = 1;
        l->controls_compact = compact;
        for (int c = 0; c < CTL_COUNT; c++) {
            char buf[64];
            int tw;
            text_size(v->text, px, control_label(s, c, compact, buf, sizeof buf), &tw, NULL);
            int bw = tw + 2 * bpad;
            if (x > pad && x + bw > right) {
                if (!compact)
                    break; /* try the compact labels first */
                x = pad;
                rows++;
            }
            l->ctl[c] = (SDL_Rect){x, y + (rows - 1) * row_h + S(s, 2), bw, row_h - S(s, 4)};
            x += bw + gap;
            if (!compact && c == CTL_COUNT - 1)
                compact = 2; /* everything fitted in full */
        }
    }
    l->controls = (SDL_Rect){pad, y, w - 2 * pad, rows * row_h};
    y += l->controls.h + S(s, 6);
    l->status = (SDL_Rect){0, h - S(s, 26), w, S(s, 26)};
    int bottom = l->status.y - S(s, 6);
    int step_h = h >= S(s, 640) ? S(s, 150) : 0;
    if (step_h)
        l->step = (SDL_Rect){pad, bottom - step_h, w - 2 * pad, step_h};
    int mid_bottom = step_h ? l->step.y - S(s, 8) : bottom;
    int mid_h = mid_bottom - y;
    if (mid_h < 1)
        mid_h = 1;
    int avail = w - 2 * pad;
    int show_editor = w >= S(s, 1000);
    int hw = show_editor ? avail * 46 / 100 : avail * 60 / 100;
    int lw = show_editor ? avail * 24 / 100 : avail - hw - S(s, 10);
    l->heatmap = (SDL_Rect){pad, y, hw, mid_h};
    l->lines = (SDL_Rect){pad + hw + S(s, 10), y, lw, mid_h};
    if (show_editor) {
        int ex = l->lines.x + lw + S(s, 10);
        l->editor = (SDL_Rect){ex, y, w - pad - ex, mid_h};
    }

    if (s->m && s->m->T) {
        int th = S(s, 20);
        SDL_Rect area = {l->heatmap.x, l->heatmap.y + th, l->heatmap.w, l->heatmap.h - th};
        HeatGeom g;
        heat_geometry(v, s, area, (float)S(s, 90), &g);
        l->grid = g.grid;
        l->colorbar = g.colorbar;
        l->cell = g.cell;
        l->rows_vis = g.rows;
        l->cols_vis = g.cols;
        l->row0 = g.row0;
        l->col0 = g.col0;
        SDL_Rect la = {l->lines.x, l->lines.y + th, l->lines.w, l->lines.h - th};
        LinesGeom lg;
        lines_geometry(v, s, la, &lg);
        l->lines_left = (SDL_Rect){la.x, la.y, lg.xl - la.x + S(s, 4), la.h};
        l->lines_right = (SDL_Rect){lg.xr - S(s, 4), la.y, la.x + la.w - lg.xr + S(s, 4), la.h};
        l->line_step = lg.step;
        l->lines0 = lg.first;
        l->lines_vis = lg.count;
    }

    /* weight editor */
    if (show_editor && s->m) {
        SDL_Rect e = l->editor;
        int tx = e.x + S(s, 6), ty = e.y + S(s, 4);
        for (int t = 0; t < EDIT_COUNT; t++) {
            int tw;
            text_size(v->text, px, edit_tab_label[t], &tw, NULL);
            l->edit_tab[t] = (SDL_Rect){tx, ty, tw + 2 * bpad, S(s, 26)};
            tx += l->edit_tab[t].w + S(s, 4);
        }
        int rows, cols;
        if (s->edit_target == EDIT_X) {
            rows = s->m->T;
            cols = s->m->d;
        } else {
            rows = s->m->d;
            cols = s->edit_target == EDIT_WO ? s->m->d : s->m->params.dk;
        }
        int bh = S(s, 26);
        int top = ty + S(s, 26) + S(s, 8) + text_line_height(v->text, S(s, 11)) +
                  text_line_height(v->text, S(s, 10)) + S(s, 6);
        /* buttons first: as many rows as the panel's width needs */
        int bw[EBTN_COUNT], brow[EBTN_COUNT], bxs[EBTN_COUNT], n_rows = 1;
        int bx = e.x + S(s, 6);
        for (int b = 0; b < EBTN_COUNT; b++) {
            int tw;
            text_size(v->text, S(s, 12), edit_button_label[b], &tw, NULL);
            bw[b] = tw + S(s, 10);
            if (bx > e.x + S(s, 6) && bx + bw[b] > e.x + e.w - S(s, 6)) {
                bx = e.x + S(s, 6);
                n_rows++;
            }
            brow[b] = n_rows - 1;
            bxs[b] = bx;
            bx += bw[b] + S(s, 4);
        }
        int left = e.x + S(s, 70);
        int gh = e.y + e.h - top - n_rows * (bh + S(s, 4)) - S(s, 12);
        int gw = e.x + e.w - left - S(s, 8);
        l->edit_rows = rows;
        l->edit_cols = cols;
        l->edit_cell_w = cols ? (float)gw / cols : 0;
        l->edit_cell_h = rows ? fminf((float)gh / rows, (float)S(s, 40)) : 0;
        if (l->edit_cell_w > S(s, 64))
            l->edit_cell_w = (float)S(s, 64);
        l->edit_grid = (SDL_Rect){left, top, (int)(l->edit_cell_w * cols), (int)(l->edit_cell_h * rows)};
        int by = l->edit_grid.y + l->edit_grid.h + S(s, 8);
        for (int b = 0; b < EBTN_COUNT; b++)
            l->edit_btn[b] = (SDL_Rect){bxs[b], by + brow[b] * (bh + S(s, 4)), bw[b], bh};
    }
}

int view_hit_cell(const ViewLayout *l, int x, int y, int *i, int *j)
{
    if (!l->cell || !point_in(l->grid, x, y))
        return 0;
    int jj = l->col0 + (int)((x - l->grid.x) / l->cell);
    int ii = l->row0 + (int)((y - l->grid.y) / l->cell);
    if (ii >= l->row0 + l->rows_vis || jj >= l->col0 + l->cols_vis)
        return 0;
    *i = ii;
    *j = jj;
    return 1;
}

int view_hit_row_label(const ViewLayout *l, int x, int y, int *i)
{
    if (!l->cell || x >= l->grid.x || x < l->heatmap.x || y < l->grid.y ||
        y >= l->grid.y + l->grid.h)
        return 0;
    *i = l->row0 + (int)((y - l->grid.y) / l->cell);
    return 1;
}

int view_hit_line_token(const ViewLayout *l, int x, int y, int *i, int *side)
{
    if (l->line_step <= 0)
        return 0;
    int left = point_in(l->lines_left, x, y), right = point_in(l->lines_right, x, y);
    if (!left && !right)
        return 0;
    float used = l->lines_vis * l->line_step;
    float y0 = l->lines_left.y + (l->lines_left.h - used) / 2;
    int k = (int)floorf((y - y0) / l->line_step);
    if (k < 0 || k >= l->lines_vis)
        return 0;
    *i = l->lines0 + k;
    *side = right;
    return 1;
}

int view_hit_control(const ViewLayout *l, int x, int y)
{
    for (int c = 0; c < CTL_COUNT; c++)
        if (point_in(l->ctl[c], x, y))
            return c;
    return -1;
}

int view_hit_editor(const ViewLayout *l, int x, int y, int *row, int *col)
{
    if (!l->editor.w)
        return 0;
    for (int t = 0; t < EDIT_COUNT; t++)
        if (point_in(l->edit_tab[t], x, y)) {
            *row = t;
            return 2;
        }
    for (int b = 0; b < EBTN_COUNT; b++)
        if (point_in(l->edit_btn[b], x, y)) {
            *row = b;
            return 3;
        }
    if (!point_in(l->edit_grid, x, y) || l->edit_cell_w <= 0 || l->edit_cell_h <= 0)
        return 0;
    int c = (int)((x - l->edit_grid.x) / l->edit_cell_w);
    int r = (int)((y - l->edit_grid.y) / l->edit_cell_h);
    if (r >= l->edit_rows || c >= l->edit_cols)
        return 0;
    *row = r;
    *col = c;
    return 1;
}

void view_draw_window(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    set_color(r, th->bg);
    SDL_RenderClear(r);
    if (!s->m)
        return;
    draw_sentence_bar(v, r, s, l);
    draw_controls(v, r, s, l);
    char title[200];
    const AttnConfig *c = &s->m->cfg;
    if (shown_kind(s) == MODEL_WEIGHTS)
        snprintf(title, sizeof title, "Attention weights  \xCE\xB1 = softmax(QK\xE1\xB5\x80%s%s)   rows: queries \xC2\xB7 columns: keys",
                 c->scale ? "/\xE2\x88\x9A" "dk" : "", c->temperature != 1.0f ? "/\xCF\x84" : "");
    else
        snprintf(title, sizeof title, "%s   rows: queries \xC2\xB7 columns: keys \xC2\xB7 colours centred on 0",
                 s->matrix == MODEL_SCORES ? "Raw scores  QK\xE1\xB5\x80" : "Logits  QK\xE1\xB5\x80\xC2\xB7s/\xCF\x84");
    draw_panel_title(v, r, s, l->heatmap, title);
    if (s->m->T) {
        SDL_Rect area = {l->heatmap.x, l->heatmap.y + S(s, 20), l->heatmap.w, l->heatmap.h - S(s, 20)};
        HeatGeom g;
        heat_geometry(v, s, area, (float)S(s, 90), &g);
        SDL_RenderSetClipRect(r, &l->heatmap);
        draw_heatmap(v, r, s, &g);
        SDL_RenderSetClipRect(r, NULL);
        fill(r, l->lines, th->panel);
        char hb[40], lt[80];
        head_label(s, hb, sizeof hb);
        snprintf(lt, sizeof lt, "query \xE2\x86\x92 key (%s)", hb);
        draw_panel_title(v, r, s, l->lines, lt);
        SDL_Rect la = {l->lines.x, l->lines.y + S(s, 20), l->lines.w, l->lines.h - S(s, 20)};
        LinesGeom lg;
        lines_geometry(v, s, la, &lg);
        SDL_RenderSetClipRect(r, &l->lines);
        draw_lines(v, r, s, &lg);
        SDL_RenderSetClipRect(r, NULL);
    } else {
        text_draw(v->text, S(s, 18), th->dim, "Type a sentence to see its attention.",
                  l->heatmap.x + S(s, 20), l->heatmap.y + S(s, 60), 0, 0);
    }
    draw_editor(v, r, s, l);
    draw_step(v, r, s, l);
    draw_status(v, r, s, l);
    if (!s->help)
        draw_tooltip(v, r, s, l);
    else
        draw_help(v, r, s, l);
}

void view_state_init(ViewState *s, const Model *m)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->head = 0;
    s->matrix = MODEL_WEIGHTS;
    s->cmap = CMAP_VIRIDIS;
    s->query = m && m->T > 1 ? 1 : 0;
    s->key = -1;
    s->hover_i = s->hover_j = -1;
    s->scale = 1.0f;
    s->zoom = 1.0f;
    s->step_reveal = 4;
}
