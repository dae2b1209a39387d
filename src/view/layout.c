/* The window's geometry: where the two sentence bars, the controls, the heatmap,
 * the line diagram, the weight editor, the step view and the status bar go
 * for a window size and interface scale, and hit testing of a point against
 * that layout (cells, row labels, line tokens, controls, editor). */
#include "view_internal.h"
#include "compare.h"

#include <string.h>

/* ---- layout ------------------------------------------------------------------ */

/* Controls: full labels, or compact ones, wrapped onto a second row when
 * even those do not fit (a narrow window or a large interface scale); the
 * strip's top at y. */
static void layout_controls(View *v, const ViewState *s, ViewLayout *l, int pad, int y)
{
    int w = l->w;
    int px = ctl_px(s), gap = S(s, 6), bpad = S(s, 8), row_h = S(s, 32);
    int right = pad + (w - 2 * pad), rows = 1;
    memset(l->ctl, 0, sizeof l->ctl);
    for (int compact = 0; compact < 2; compact++) {
        int x = pad;
        rows = 1;
        l->controls_compact = compact;
        for (int c = 0; c < s->n_ctl; c++) {
            int tw;
            text_size(v->text, px, control_label(s, c, compact), &tw, NULL);
            int bw = tw + 2 * bpad;
            if (x > pad && x + bw > right) {
                if (!compact)
                    break; /* try the compact labels first */
                x = pad;
                rows++;
            }
            l->ctl[c] = (SDL_Rect){x, y + (rows - 1) * row_h + S(s, 2), bw, row_h - S(s, 4)};
            x += bw + gap;
            if (!compact && c == s->n_ctl - 1)
                compact = 2; /* everything fitted in full */
        }
    }
    l->controls = (SDL_Rect){pad, y, w - 2 * pad, rows * row_h};
}

/* Does panel p (a SidePanel) have something to show in this mode? The line
 * diagram's room (in the compare view: the three figures' room); the
 * editor's room holds the weight editor, an attention file's overview or
 * what would be there; the step view (or teach mode's loss curve). */
static int side_exists(const ViewState *s, int p)
{
    if (p == SIDE_LINES)
        return 1;
    if (p == SIDE_EDITOR)
        return s->m || s->overview || s->no_model;
    return s->m || s->no_model;
}

const char *side_tab_label(const ViewState *s, int p)
{
    if (p == SIDE_LINES)
        return s->cmp_ref && s->map.v ? "Compare" : "Lines";
    if (p == SIDE_EDITOR)
        return s->overview ? "Every map" : "Weights";
    return s->teach ? "Loss" : s->step_label ? s->step_label : "Step view";
}

/* The panels that share one area (bit p set for a SidePanel p) become its
 * tabs: a strip of them on top, the shown one below (s->side when it is
 * one of them, else the first), the others no room at all. */
static void layout_side_tabs(View *v, const ViewState *s, ViewLayout *l, SDL_Rect area, int tabs)
{
    SDL_Rect *panel[SIDE_COUNT] = {&l->lines, &l->editor, &l->step};
    int shown = -1, n = 0;
    for (int p = 0; p < SIDE_COUNT; p++)
        if (tabs & (1 << p)) {
            n++;
            if (shown < 0 || (int)s->side == p)
                shown = p;
        }
    if (n == 1) { /* one panel: the area is its own */
        *panel[shown] = area;
        return;
    }
    int strip = S(s, 30), x = area.x, px = ctl_px(s);
    for (int p = 0; p < SIDE_COUNT; p++) {
        if (!(tabs & (1 << p)))
            continue;
        int tw;
        text_size(v->text, px, side_tab_label(s, p), &tw, NULL);
        l->side_tab[p] = (SDL_Rect){x, area.y, tw + 2 * S(s, 12), strip - S(s, 4)};
        x += l->side_tab[p].w + S(s, 4);
        *panel[p] = (SDL_Rect){0, 0, 0, 0};
    }
    l->side_shown = shown;
    *panel[shown] = (SDL_Rect){area.x, area.y + strip, area.w, area.h - strip};
}

/* The panels below the controls (from y): status bar at the bottom, the
 * step view above it when the window is tall enough, and between them the
 * heatmap, the line diagram and, when the window is wide enough, the
 * editor. What has no room of its own becomes a tab of the last area
 * (a projector's large interface scale, a small window). */
static void layout_panels(View *v, const ViewState *s, ViewLayout *l, int pad, int y)
{
    int w = l->w, h = l->h;
    l->side_shown = -1;
    l->status = (SDL_Rect){0, h - S(s, 26), w, S(s, 26)};
    int bottom = l->status.y - S(s, 6);
    int wide = w >= S(s, 1000), step_below = h >= S(s, 640) || !side_exists(s, SIDE_STEP);
    int step_h = step_below ? S(s, 150) : 0;
    if (step_h)
        l->step = (SDL_Rect){pad, bottom - step_h, w - 2 * pad, step_h};
    int mid_bottom = step_h ? l->step.y - S(s, 8) : bottom;
    int mid_h = mid_bottom - y;
    if (mid_h < 1)
        mid_h = 1;
    int avail = w - 2 * pad, gap = S(s, 10);
    int hw = wide ? avail * 46 / 100 : avail * 58 / 100;
    l->heatmap = (SDL_Rect){pad, y, hw, mid_h};
    int tabs = step_below ? 0 : 1 << SIDE_STEP;
    if (s->grid) { /* the model view: every map in the room of all three */
        l->lines = (SDL_Rect){pad + hw + gap, y, avail - hw - gap, mid_h};
        return;
    }
    if (wide) {
        int lw = avail * 24 / 100;
        l->lines = (SDL_Rect){pad + hw + gap, y, lw, mid_h};
        int ex = l->lines.x + lw + gap;
        SDL_Rect area = {ex, y, w - pad - ex, mid_h};
        l->editor = area;
        if (tabs && side_exists(s, SIDE_EDITOR))
            layout_side_tabs(v, s, l, area, tabs | 1 << SIDE_EDITOR);
        else if (tabs)
            layout_side_tabs(v, s, l, area, tabs);
    } else {
        SDL_Rect area = {pad + hw + gap, y, avail - hw - gap, mid_h};
        for (int p = SIDE_LINES; p <= SIDE_EDITOR; p++)
            if (side_exists(s, p))
                tabs |= 1 << p;
        if (tabs)
            layout_side_tabs(v, s, l, area, tabs);
    }
    if (s->cmp_ref && s->map.v) { /* the compare view's three figures take the lines' room */
        if (wide) {
            l->heatmap.w = l->lines.x + l->lines.w - pad;
        } else if (l->lines.w > 0) { /* its tab is shown: the whole width, under the tabs */
            l->heatmap = (SDL_Rect){pad, l->lines.y, l->lines.x + l->lines.w - pad, l->lines.h};
        }
        l->lines = (SDL_Rect){0, 0, 0, 0};
    }
}

/* The heatmap's cells and the line diagram's token columns, under their
 * titles, for hit testing (the same geometry view_draw_window draws). */
static void layout_heat_lines(View *v, const ViewState *s, ViewLayout *l)
{
    int th = S(s, 20);
    SDL_Rect area = {l->heatmap.x, l->heatmap.y + th, l->heatmap.w, l->heatmap.h - th};
    Figure *g = &l->heat;
    heat_figure(v, s, area, (float)S(s, 90), g);
    if (s->cmp_ref) /* the compare view: l->heat becomes its middle figure */
        compare_layout(v, s, area, l);
    l->grid = (SDL_Rect){g->grid.x, g->grid.y, g->grid.w, g->grid.h};
    l->colorbar = (SDL_Rect){g->cb.bar.x, g->cb.bar.y, g->cb.bar.w, g->cb.bar.h};
    l->cell = g->cell;
    l->rows_vis = g->rows;
    l->cols_vis = g->cols;
    l->row0 = g->row0;
    l->col0 = g->col0;
    SDL_Rect la = lines_area(v, s, l->lines, l->head_swatch);
    LinesGeom lg;
    lines_geometry(v, s, la, &lg);
    l->lines_left = (SDL_Rect){la.x, la.y, lg.xl - la.x + S(s, 4), la.h};
    l->lines_right = (SDL_Rect){lg.xr - S(s, 4), la.y, la.x + la.w - lg.xr + S(s, 4), la.h};
    l->line_step = lg.step;
    l->lines0 = lg.first;
    l->lines_vis = lg.count;
    if (l->lines.w <= 0) { /* not shown: nothing to hit */
        memset(l->head_swatch, 0, sizeof l->head_swatch);
        l->lines_left = l->lines_right = (SDL_Rect){0, 0, 0, 0};
        l->lines_vis = 0;
    }
}

/* The model view: every map of s->grid in the heatmap's and the line
 * diagram's room together, under a title line. */
static void layout_grid(View *v, const ViewState *s, ViewLayout *l)
{
    int th = S(s, 20);
    FigureOptions o;
    memset(&o, 0, sizeof o);
    o.scale = s->scale;
    o.area_x = l->heatmap.x;
    o.area_y = l->heatmap.y + th;
    /* the editor's room too: a file has no weights to edit */
    SDL_Rect last = l->editor.w ? l->editor : l->lines;
    o.area_w = last.x + last.w - l->heatmap.x;
    o.area_h = l->heatmap.h - th - S(s, 8); /* the colour bar's "0" whole below its end */
    o.max_cell = (float)S(s, 24);
    o.query = s->grid_layer;
    o.key = s->grid_head;
    o.cmap = s->cmap;
    o.cscale = s->cscale;
    if (s->score_map) { /* the score overview in the maps' place */
        layout_score_map(v, s, (SDL_Rect){o.area_x, o.area_y, o.area_w, o.area_h}, &l->score_fig);
        return;
    }
    heads_grid_options(v, s, &o);
    TextMeasure tm = figure_measure_text(v->text);
    figure_grid_layout(&l->grid_fig, s->grid, &o, &tm);
}

/* Every map, small, in the editor's room (an attention file's head view). */
static void layout_overview(View *v, const ViewState *s, ViewLayout *l)
{
    int th = S(s, 22);
    FigureOptions o;
    memset(&o, 0, sizeof o);
    o.scale = s->scale;
    o.area_x = l->editor.x + S(s, 6);
    o.area_y = l->editor.y + th;
    o.area_w = l->editor.w - S(s, 12);
    o.area_h = l->editor.h - th - S(s, 10); /* the colour bar's "0" whole below its end */
    o.max_cell = (float)S(s, 12);
    o.query = s->grid_layer;
    o.key = s->grid_head;
    o.cmap = s->cmap;
    o.cscale = s->cscale;
    o.grid_tight = 1;
    TextMeasure tm = figure_measure_text(v->text);
    figure_grid_layout(&l->grid_fig, s->overview, &o, &tm);
    /* the layers and heads whose maps lie whole in the panel (too many
     * heads for it even so: the title names those shown) */
    const FigureGrid *g = &l->grid_fig;
    l->overview_layers = l->overview_heads = 0;
    for (int h = 0; h < g->H; h++)
        if (figure_grid_map_rect(g, 0, h).x + g->map_w <= o.area_x + o.area_w)
            l->overview_heads = h + 1;
    for (int k = 0; k < g->L; k++)
        if (figure_grid_map_rect(g, k, 0).y + g->map_h <= o.area_y + o.area_h)
            l->overview_layers = k + 1;
}

/* The weight editor: tabs (short labels, then a second row, where they do
 * not fit), the line under them, the grid of the edited matrix (cells at
 * most 64×40 pixels) with its labels at the readable size (every row's
 * when the rows are a line high, less a pixel: before the column labels,
 * which stand upright, or give way), and the buttons under it, wrapped onto as
 * many rows as the panel's width needs. */
static void layout_editor(View *v, const ViewState *s, ViewLayout *l)
{
    int px = ctl_px(s), bpad = S(s, 8), lp = EDIT_TEXT_PX(s), llh = text_line_height(v->text, lp);
    SDL_Rect e = l->editor;
    int tx = e.x + S(s, 6), ty = e.y + S(s, 4);
    /* the tabs: narrower when they do not fit, then short, then on a
     * second row */
    int tws[EDIT_COUNT], total = 0;
    for (int t = 0; t < EDIT_COUNT; t++) {
        text_size(v->text, px, edit_tab_label[t], &tws[t], NULL);
        total += tws[t] + 2 * bpad + S(s, 4);
    }
    if (total > e.w - S(s, 12)) {
        bpad = S(s, 4);
        total = 0;
        for (int t = 0; t < EDIT_COUNT; t++)
            total += tws[t] + 2 * bpad + S(s, 4);
    }
    if (total > e.w - S(s, 12))
        for (int t = 0; t < EDIT_COUNT; t++)
            text_size(v->text, px, edit_tab_short[t], &tws[t], NULL);
    for (int t = 0; t < EDIT_COUNT; t++) {
        if (tx > e.x + S(s, 6) && tx + tws[t] + 2 * bpad > e.x + e.w - S(s, 6)) {
            tx = e.x + S(s, 6);
            ty += S(s, 30);
        }
        l->edit_tab[t] = (SDL_Rect){tx, ty, tws[t] + 2 * bpad, S(s, 26)};
        tx += l->edit_tab[t].w + S(s, 4);
    }
    int rows, cols;
    edit_matrix(s, &rows, &cols);
    int bh = S(s, 22);
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
    int gw = e.x + e.w - left - S(s, 8);
    l->edit_rows = rows;
    l->edit_cols = cols;
    l->edit_cell_w = cols ? (float)gw / cols : 0;
    if (l->edit_cell_w > S(s, 64))
        l->edit_cell_w = (float)S(s, 64);
    /* the column labels: flat when each fits its column, else upright when
     * a line does */
    int widest = 0;
    for (int j = 0; j < cols; j++) {
        char buf[32];
        int w;
        edit_col_name(s, j, buf, sizeof buf);
        text_size(v->text, lp, buf, &w, NULL);
        widest = w > widest ? w : widest;
    }
    l->edit_col_labels = widest + S(s, 3) <= l->edit_cell_w ? 1 : l->edit_cell_w >= llh - 1 ? 2 : 0;
    int below_tabs = ty + S(s, 26) + S(s, 4) + llh + S(s, 6); /* the line under the tabs */
    int bottom = e.y + e.h - n_rows * (bh + S(s, 4)) - S(s, 4); /* the buttons' room under it */
    int top;
    for (;;) {
        int col_h = l->edit_col_labels == 1 ? llh + S(s, 2) : l->edit_col_labels == 2 ? widest + S(s, 4) : 0;
        top = below_tabs + col_h;
        l->edit_cell_h = rows ? fminf((float)(bottom - top) / rows, (float)S(s, 40)) : 0;
        /* rows a label high come first */
        if (l->edit_col_labels != 2 || l->edit_cell_h >= llh - 1)
            break;
        l->edit_col_labels = 0;
    }
    if (rows && l->edit_cell_h < llh - 1 && l->edit_cell_h >= S(s, 9)) {
        /* rows thinned: room above them for the note that says so, clear
         * of the first name (which stands out of its short row) */
        int col_h = l->edit_col_labels == 1 ? llh + S(s, 2) : l->edit_col_labels == 2 ? widest + S(s, 4) : 0;
        top = below_tabs + (col_h > llh + S(s, 2) ? col_h : llh + S(s, 2)) + llh / 2;
        l->edit_cell_h = fminf((float)(bottom - top) / rows, (float)S(s, 40));
    }
    if (l->edit_cell_h < 0)
        l->edit_cell_h = 0;
    l->edit_grid = (SDL_Rect){left, top, (int)(l->edit_cell_w * cols), (int)(l->edit_cell_h * rows)};
    int by = l->edit_grid.y + l->edit_grid.h + S(s, 4);
    for (int b = 0; b < EBTN_COUNT; b++)
        l->edit_btn[b] = (SDL_Rect){bxs[b], by + brow[b] * (bh + S(s, 4)), bw[b], bh};
}

/* The step view's text and bar groups: beside each other in the wide strip
 * under the heatmap (the text as wide as it needs up to about half), one
 * above the other in a tall panel (a tab of the side area). */
static void layout_step(const ViewState *s, ViewLayout *l)
{
    SDL_Rect p = l->step;
    if (!p.w || !p.h)
        return;
    int in = S(s, 12);
    if (p.h * 2 > p.w) { /* tall */
        int bars_h = p.h * 45 / 100;
        if (bars_h > S(s, 220))
            bars_h = S(s, 220);
        int top = p.y + S(s, 8), bars_y = p.y + p.h - bars_h - S(s, 8);
        l->step_text = (SDL_Rect){p.x + in, top, p.w - 2 * in, bars_y - S(s, 8) - top};
        l->step_bars = (SDL_Rect){p.x + in, bars_y, p.w - 2 * in, bars_h};
        return;
    }
    int tw = S(s, 560);
    if (tw < p.w * 40 / 100)
        tw = p.w * 40 / 100;
    if (tw > p.w * 55 / 100)
        tw = p.w * 55 / 100;
    l->step_text = (SDL_Rect){p.x + in, p.y + S(s, 8), tw - in - S(s, 8), p.h - S(s, 16)};
    l->step_bars = (SDL_Rect){p.x + tw, p.y + S(s, 8), p.w - tw - in, p.h - S(s, 18)};
}

void view_layout(View *v, const ViewState *s, int w, int h, ViewLayout *l)
{
    memset(l, 0, sizeof *l);
    l->w = w;
    l->h = h;
    int pad = S(s, 8);
    int y = pad;
    l->sentence = (SDL_Rect){pad, y, w - 2 * pad, S(s, 44)};
    y += l->sentence.h + S(s, 6);
    if (s->keys_bar) { /* the second sentence (cross-attention's keys) */
        l->keys_bar = (SDL_Rect){pad, y - S(s, 2), w - 2 * pad, S(s, 36)};
        y += l->keys_bar.h + S(s, 4);
    }
    layout_controls(v, s, l, pad, y);
    y += l->controls.h + S(s, 6);
    layout_panels(v, s, l, pad, y);
    if (s->grid) {
        layout_grid(v, s, l);
    } else {
        if (s->map.v && s->map.Tq && s->map.Tk)
            layout_heat_lines(v, s, l);
        if (s->overview && l->editor.w)
            layout_overview(v, s, l);
    }
    if (l->editor.w && s->m)
        layout_editor(v, s, l);
    layout_step(s, l);
    teach_layout(v, s, l);
    if (s->help)
        help_layout(v, s, l);
}

/* ---- hit testing ------------------------------------------------------------- */

int view_hit_score_map(const ViewLayout *l, int x, int y, int *layer, int *head)
{
    return l->score_fig.cell > 0 && figure_hit_cell(&l->score_fig, x, y, layer, head);
}

int view_hit_head_swatch(const ViewLayout *l, int x, int y)
{
    for (int h = 0; h < VIEW_HEADS_MAX; h++)
        if (l->head_swatch[h].w > 0 && x >= l->head_swatch[h].x && y >= l->head_swatch[h].y &&
            x < l->head_swatch[h].x + l->head_swatch[h].w && y < l->head_swatch[h].y + l->head_swatch[h].h)
            return h;
    return -1;
}

int view_hit_grid(const ViewLayout *l, int x, int y, int *layer, int *head)
{
    return l->grid_fig.L > 0 && figure_grid_hit(&l->grid_fig, x, y, layer, head);
}

static int point_in(SDL_Rect rc, int x, int y)
{
    return x >= rc.x && y >= rc.y && x < rc.x + rc.w && y < rc.y + rc.h;
}

int view_hit_cell(const ViewLayout *l, int x, int y, int *i, int *j)
{
    return l->cell > 0 && figure_hit_cell(&l->heat, x, y, i, j);
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

int view_hit_side_tab(const ViewLayout *l, int x, int y)
{
    for (int p = 0; p < SIDE_COUNT; p++)
        if (l->side_tab[p].w > 0 && point_in(l->side_tab[p], x, y))
            return p;
    return -1;
}

int view_hit_teach_button(const ViewLayout *l, int x, int y)
{
    for (int b = 0; b < TBTN_COUNT; b++)
        if (l->teach_btn[b].w > 0 && point_in(l->teach_btn[b], x, y))
            return b;
    return -1;
}

int view_hit_control(const ViewLayout *l, int x, int y)
{
    for (int c = 0; c < VIEW_CTL_MAX; c++)
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
