/* The weight editor: tabs for Wq, Wk, Wv, Wo, X (both sentences' rows with
 * two) and v (the additive score's), a hint with the cursor
 * cell's exact value, the matrix as diverging colours (cell by cell with
 * values, or one texel per cell when they are tiny), row and column labels,
 * the cursor with the value being typed, and the action buttons. */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const edit_tab_label[EDIT_COUNT] = {"[1] Wq", "[2] Wk", "[3] Wv", "[4] Wo", "[5] X", "[6] v"};
const char *const edit_tab_short[EDIT_COUNT] = {"1 Wq", "2 Wk", "3 Wv", "4 Wo", "5 X", "6 v"};
const char *const edit_button_label[EBTN_COUNT] = {"[0] identity", "[Z] zero", "[N] random",
                                                   "[X] swap q\xE2\x86\x94k", "[Del] reset all"};

const float *edit_matrix(const ViewState *s, int *rows, int *cols)
{
    const Model *m = s->m;
    if (s->edit_target == EDIT_X) { /* both sentences' rows with two (edit_value) */
        *rows = m->T + (m->cross ? m->Tk : 0);
        *cols = m->d;
        return m->E;
    }
    int which = (int)s->edit_target; /* the v tab: the head's v, or vb in basic mode */
    if (s->edit_target == EDIT_V)
        which = m->cfg.mode == ATTN_MODE_BASIC ? 5 : 4;
    return attn_params_matrix(&m->params, which, s->head < 0 ? 0 : s->head, rows, cols);
}

/* The edited matrix's value at (row, col): X, or the shown head's slice of a
 * weight matrix (head 1's for the average). */
static float edit_value(const ViewState *s, int row, int col)
{
    int rows, cols;
    const float *W = edit_matrix(s, &rows, &cols);
    const Model *m = s->m;
    if (s->edit_target == EDIT_X && row >= m->T) /* the second sentence's rows */
        return m->Ek[(size_t)(row - m->T) * m->d + col];
    return W[(size_t)row * cols + col];
}

/* Row r's name: a token for X (the second sentence's after the first's),
 * "v" for the v tab, else a dimension of the embedding. */
static const char *edit_row_name(const ViewState *s, int r)
{
    const Model *m = s->m;
    if (s->edit_target == EDIT_X)
        return r < m->T ? tok_text(&m->toks, r) : tok_text(&m->ktoks, r - m->T);
    if (s->edit_target == EDIT_V)
        return m->cfg.mode == ATTN_MODE_BASIC ? "v_b" : "v";
    return embed_dim_name(m->table, r);
}

void edit_col_name(const ViewState *s, int j, char *buf, size_t n)
{
    EditTarget t = s->edit_target;
    if (t == EDIT_X || t == EDIT_WO || (t == EDIT_V && s->m->cfg.mode == ATTN_MODE_BASIC))
        snprintf(buf, n, "%.4s", embed_dim_name(s->m->table, j));
    else
        snprintf(buf, n, "%c%d", t < 3 ? "qkv"[t] : 'k', j);
}

/* name abbreviated to max_w pixels at px: its longest start that fits, 3
 * letters at least (a whole name when it fits). */
static void abbreviate(View *v, int px, const char *name, int max_w, char *out, size_t n)
{
    snprintf(out, n, "%s", name);
    int w, letters = 0;
    text_size(v->text, px, out, &w, NULL);
    size_t len = strlen(out);
    for (size_t k = 0; k < len; k++)
        letters += ((unsigned char)out[k] & 0xC0) != 0x80;
    while (w > max_w && letters > 3) {
        while (len > 0 && ((unsigned char)out[len - 1] & 0xC0) == 0x80)
            len--; /* back to the last character's first byte */
        out[--len] = '\0';
        letters--;
        text_size(v->text, px, out, &w, NULL);
    }
}

/* The editor's colours: diverging, symmetric, at least ±1. */
static ColorScale edit_scale(const ViewState *s, int rows, int cols)
{
    float amax = 1.0f;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            amax = fmaxf(amax, fabsf(edit_value(s, i, j)));
    return (ColorScale){CMAP_DIVERGING, -amax, amax, 0};
}

/* Tiny editor cells (a 300-dimensional table gives 90,000 of them): one
 * texel each, uploaded when the values change, drawn scaled like the
 * heatmap. Returns 0 when drawn, -1 to draw cell by cell instead. */
static int draw_editor_texture(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    int R = l->edit_rows, C = l->edit_cols;
    unsigned long key[5] = {s->m->generation, (unsigned long)s->edit_target,
                            (unsigned long)(long)s->head, (unsigned long)R, (unsigned long)C};
    if (!v->edit_tex || v->edit_tw < C || v->edit_th < R) {
        if (v->edit_tex)
            SDL_DestroyTexture(v->edit_tex);
        v->edit_tex = SDL_CreateTexture(r, SDL_PIXELFORMAT_RGB888, SDL_TEXTUREACCESS_STREAMING, C, R);
        v->edit_tw = v->edit_tex ? C : 0;
        v->edit_th = v->edit_tex ? R : 0;
        memset(v->edit_key, 0, sizeof v->edit_key);
        if (!v->edit_tex)
            return -1;
        SDL_SetTextureScaleMode(v->edit_tex, SDL_ScaleModeNearest);
    }
    if (memcmp(key, v->edit_key, sizeof key) != 0) {
        ColorScale cs = edit_scale(s, R, C);
        void *pixels;
        int pitch;
        SDL_Rect rc = {0, 0, C, R};
        if (SDL_LockTexture(v->edit_tex, &rc, &pixels, &pitch) != 0)
            return -1;
        for (int i = 0; i < R; i++) {
            uint32_t *row = (uint32_t *)((uint8_t *)pixels + (size_t)i * pitch);
            for (int j = 0; j < C; j++) {
                Rgb c = colormap_scale_rgb(&cs, edit_value(s, i, j));
                row[j] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
            }
        }
        SDL_UnlockTexture(v->edit_tex);
        memcpy(v->edit_key, key, sizeof key);
    }
    SDL_Rect src = {0, 0, C, R};
    SDL_Rect dst = {l->edit_grid.x, l->edit_grid.y, (int)(C * l->edit_cell_w), (int)(R * l->edit_cell_h)};
    SDL_RenderCopy(r, v->edit_tex, &src, &dst);
    return 0;
}

/* Do the cells have room for their values? */
static int values_fit(const ViewState *s, const ViewLayout *l)
{
    return l->edit_cell_h >= S(s, 16) && l->edit_cell_w >= S(s, 36);
}

/* The 1-pixel gaps between cells drawn from one texture, as the cells
 * drawn one by one leave them. */
static void draw_editor_gaps(SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    set_color(r, theme(s)->panel);
    SDL_Rect g = l->edit_grid;
    for (int j = 1; j <= l->edit_cols; j++) {
        int x = g.x + (int)(j * l->edit_cell_w) - 1;
        SDL_RenderDrawLine(r, x, g.y, x, g.y + g.h - 1);
    }
    for (int i = 1; i <= l->edit_rows; i++) {
        int y = g.y + (int)(i * l->edit_cell_h) - 1;
        SDL_RenderDrawLine(r, g.x, y, g.x + g.w - 1, y);
    }
}

/* The editor's cells one by one (paint: their colours too), with their
 * values when there is room. */
static void draw_editor_cells(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l, int paint)
{
    ColorScale cs = edit_scale(s, l->edit_rows, l->edit_cols);
    int vpx = values_fit(s, l) ? EDIT_TEXT_PX(s) : 0;
    int vlh = vpx ? text_line_height(v->text, vpx) : 0;
    for (int i = 0; i < l->edit_rows; i++) {
        int y = l->edit_grid.y + (int)(i * l->edit_cell_h);
        int y1 = l->edit_grid.y + (int)((i + 1) * l->edit_cell_h);
        for (int j = 0; j < l->edit_cols; j++) {
            int x = l->edit_grid.x + (int)(j * l->edit_cell_w);
            int x1 = l->edit_grid.x + (int)((j + 1) * l->edit_cell_w);
            float val = edit_value(s, i, j);
            Rgb c = colormap_scale_rgb(&cs, val);
            SDL_Rect rc = {x, y, x1 - x - 1, y1 - y - 1};
            if (paint)
                fill(r, rc, rgb_color(c));
            if (vpx && !(s->edit_text && i == s->edit_row && j == s->edit_col)) {
                char buf[24];
                snprintf(buf, sizeof buf, fabsf(val) < 10 ? "%.2f" : "%.1f", (double)val);
                if (val == 0.0f)
                    buf[0] = '\0';
                text_draw(v->text, vpx, rgb_color(colormap_text_on(c)), buf, x + (x1 - x) / 2,
                          y + (y1 - y - vlh) / 2, 1, 0);
            }
        }
    }
}

/* The tabs: the edited matrix's highlighted; v greyed unless the score
 * is additive (the hint says why). */
static void draw_editor_tabs(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    int px = ctl_px(s), lh = text_line_height(v->text, px);
    for (int t = 0; t < EDIT_COUNT; t++) {
        int on = t == (int)s->edit_target;
        SDL_Rect b = l->edit_tab[t];
        SDL_Color tc = on ? th->accent : th->dim;
        if (t == EDIT_V && s->m->cfg.score != ATTN_SCORE_ADDITIVE)
            tc.a = 120;
        fill(r, b, on ? th->panel2 : th->panel);
        outline(r, b, on ? th->accent : th->border, 1);
        int tw;
        text_size(v->text, px, edit_tab_label[t], &tw, NULL);
        text_draw(v->text, px, tc, tw <= b.w - S(s, 4) ? edit_tab_label[t] : edit_tab_short[t], b.x + b.w / 2,
                  b.y + (b.h - lh) / 2, 1, 0);
    }
}

/* X with two sentences: a line between the sentence's rows and the keys'
 * rows, and "keys" at its left end. */
static void draw_editor_separator(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Model *m = s->m;
    if (s->edit_target != EDIT_X || !m->cross || m->T >= l->edit_rows)
        return;
    const Theme *th = theme(s);
    int y = l->edit_grid.y + (int)(m->T * l->edit_cell_h) - 1;
    fill(r, (SDL_Rect){l->editor.x + S(s, 4), y - S(s, 1), l->edit_grid.x + l->edit_grid.w - l->editor.x - S(s, 4),
                       S(s, 2) > 1 ? S(s, 2) : 1}, th->pos);
    int lp = EDIT_TEXT_PX(s);
    if (l->edit_cell_h < S(s, 9)) /* no row labels: say it once */
        text_draw(v->text, lp, th->pos, "keys \xE2\x86\x93", l->editor.x + S(s, 6), y + S(s, 2), 0, 0);
}

/* The line under the tabs: which matrix, its shape, and the cursor cell's
 * exact value (small cells cannot print it). */
static void editor_hint(const ViewState *s, char *hint, size_t n)
{
    const Model *m = s->m;
    EditTarget t = s->edit_target;
    int basic = m->cfg.mode == ATTN_MODE_BASIC && t != EDIT_X && t != EDIT_V;
    char cell[96] = "";
    int head = s->head < 0 ? 0 : s->head;
    int rows0, cols0;
    edit_matrix(s, &rows0, &cols0);
    if (s->edit_row < rows0 && s->edit_col < cols0) {
        char colname[32];
        if (t == EDIT_X || t == EDIT_WO || (t == EDIT_V && m->cfg.mode == ATTN_MODE_BASIC))
            snprintf(colname, sizeof colname, "%s", embed_dim_name(m->table, s->edit_col));
        else
            snprintf(colname, sizeof colname, "%c%d", t < 3 ? "qkv"[t] : 'k', s->edit_col);
        snprintf(cell, sizeof cell, "[%s, %s] = %.3f", edit_row_name(s, s->edit_row), colname,
                 (double)edit_value(s, s->edit_row, s->edit_col));
    }
    if (t == EDIT_X && m->cross)
        snprintf(hint, n, "X: sentence (%d rows), then keys (%d) \xC2\xB7 %s", m->T, m->Tk, cell);
    else if (t == EDIT_X)
        snprintf(hint, n, "X (tokens \xC3\x97 d) \xC2\xB7 %s", cell);
    else if (t == EDIT_V)
        snprintf(hint, n, "%s%s \xC2\xB7 %s", m->cfg.mode == ATTN_MODE_BASIC ? "v (1\xC3\x97" "d, basic)"
                                                                             : "v of the head (1\xC3\x97" "dk)",
                 m->cfg.score == ATTN_SCORE_ADDITIVE ? ", v\xE1\xB5\x80 tanh(q + k)"
                                                      : ": used by the additive score (F)", cell);
    else if (t == EDIT_WO)
        snprintf(hint, n, "W_o (d\xC3\x97" "d)%s \xC2\xB7 %s", basic ? ", unused in basic mode" : "", cell);
    else
        snprintf(hint, n, "W_%c head %d (d\xC3\x97" "dk)%s \xC2\xB7 %s", "qkv"[t], head + 1,
                 basic ? ", unused in basic mode" : "", cell);
}

/* Row labels (dimension names, or tokens for X) and column labels, when
 * the cells leave room for them. */
static void draw_editor_labels(View *v, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    const Model *m = s->m;
    int rp = EDIT_TEXT_PX(s), rlh = text_line_height(v->text, rp);
    /* rows a line high (less a pixel) name each row; smaller ones (X of a
     * long text) every every-th row's, and the cursor's */
    float need = (float)(rlh - 1);
    int every = l->edit_cell_h >= need || l->edit_cell_h <= 0 ? 1 : (int)ceilf(need / l->edit_cell_h);
    int room = l->edit_grid.x - S(s, 4) - (l->editor.x + S(s, 4));
    if (l->edit_cell_h >= S(s, 9) && every > 1) { /* said, above the names */
        char note[32];
        snprintf(note, sizeof note, "every %d%s", every, every == 2 ? "nd" : every == 3 ? "rd" : "th");
        int over = (rlh - (int)l->edit_cell_h) / 2; /* the first name above its row */
        text_draw(v->text, rp, th->dim, note, l->edit_grid.x - S(s, 4), l->edit_grid.y - over - rlh - S(s, 1), 2,
                  0);
    }
    if (l->edit_cell_h >= S(s, 9))
        for (int i = 0; i < l->edit_rows; i++) {
            int near_cursor = i != s->edit_row && abs(i - s->edit_row) < every;
            if (i != s->edit_row && (i % every || near_cursor))
                continue;
            int y = l->edit_grid.y + (int)(i * l->edit_cell_h);
            char lab[200];
            abbreviate(v, rp, edit_row_name(s, i), room, lab, sizeof lab);
            int key_row = s->edit_target == EDIT_X && i >= m->T; /* the second sentence's */
            text_draw(v->text, rp, i == s->edit_row ? th->accent : key_row ? th->pos : th->dim, lab,
                      l->edit_grid.x - S(s, 4), y + ((int)l->edit_cell_h - rlh) / 2, 2, 0);
        }
    /* the columns: every one's label, flat or upright (layout_editor), or
     * none (the line under the tabs names the cursor's) */
    for (int j = 0; l->edit_col_labels && j < l->edit_cols; j++) {
        char buf[32];
        edit_col_name(s, j, buf, sizeof buf);
        int cx = l->edit_grid.x + (int)((j + 0.5f) * l->edit_cell_w);
        SDL_Color c = j == s->edit_col ? th->accent : th->dim;
        if (l->edit_col_labels == 2)
            text_draw(v->text, rp, c, buf, cx - rlh / 2, l->edit_grid.y - S(s, 2), 0, -90.0);
        else
            text_draw(v->text, rp, c, buf, cx, l->edit_grid.y - rlh - S(s, 1), 1, 0);
    }
}

/* The cursor cell's outline and the value being typed over it. */
static void draw_editor_cursor(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    if (s->edit_row >= l->edit_rows || s->edit_col >= l->edit_cols)
        return;
    SDL_Rect rc = {l->edit_grid.x + (int)(s->edit_col * l->edit_cell_w),
                   l->edit_grid.y + (int)(s->edit_row * l->edit_cell_h),
                   (int)l->edit_cell_w, (int)l->edit_cell_h};
    outline(r, rc, s->edit_focus ? th->accent : th->dim, S(s, 2) > 1 ? S(s, 2) : 1);
    if (s->edit_text) {
        SDL_Rect box = {rc.x - S(s, 10), rc.y - S(s, 4), rc.w + S(s, 40), rc.h + S(s, 8)};
        fill(r, box, th->bg);
        outline(r, box, th->accent, 2);
        char buf[80];
        snprintf(buf, sizeof buf, "%s|", s->edit_text);
        int ep = S(s, 13), elh = text_line_height(v->text, ep);
        text_draw(v->text, ep, th->text, buf, box.x + S(s, 4), box.y + (box.h - elh) / 2, 0, 0);
    }
}

/* The action buttons, and the last random seed right of them. */
static void draw_editor_buttons(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    for (int b = 0; b < EBTN_COUNT; b++) {
        SDL_Rect rc = l->edit_btn[b];
        fill(r, rc, th->panel2);
        outline(r, rc, th->border, 1);
        int bp = S(s, 12), blh = text_line_height(v->text, bp);
        text_draw(v->text, bp, th->dim, edit_button_label[b], rc.x + rc.w / 2,
                  rc.y + (rc.h - blh) / 2, 1, 0);
    }
    if (s->has_seed_shown) {
        char buf[64];
        snprintf(buf, sizeof buf, "seed %llu", (unsigned long long)s->seed_shown);
        SDL_Rect last = l->edit_btn[EBTN_COUNT - 1];
        text_draw(v->text, S(s, 12), th->dim, buf, l->editor.x + l->editor.w - S(s, 8),
                  last.y + (last.h - text_line_height(v->text, S(s, 12))) / 2, 2, 0);
    }
}

void draw_editor(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    if (!l->editor.w)
        return;
    fill(r, l->editor, th->panel);
    if (s->edit_focus) /* the keys act here (Esc: back to the heatmap) */
        outline(r, l->editor, th->accent, S(s, 1) > 0 ? S(s, 1) : 1);
    draw_editor_tabs(v, r, s, l);
    char hint[200];
    editor_hint(s, hint, sizeof hint);
    draw_text_fit(v, EDIT_TEXT_PX(s), s->edit_focus ? th->accent : th->dim, hint, l->editor.x + S(s, 6),
                  l->edit_tab[EDIT_COUNT - 1].y + l->edit_tab[EDIT_COUNT - 1].h + S(s, 4), l->editor.w - S(s, 12));
    if (!l->edit_rows || !l->edit_cols)
        return;
    /* the colours from one texture: the software renderer takes about
     * 30 µs a cell filled one by one at 4K (8 of a frame's 24 ms) */
    int tiny = l->edit_cell_w < S(s, 6) || l->edit_cell_h < S(s, 6);
    int painted = draw_editor_texture(v, r, s, l) == 0;
    if (painted && !tiny)
        draw_editor_gaps(r, s, l);
    if (!painted || values_fit(s, l))
        draw_editor_cells(v, r, s, l, !painted);
    draw_editor_labels(v, s, l);
    draw_editor_separator(v, r, s, l);
    draw_editor_cursor(v, r, s, l);
    draw_editor_buttons(v, r, s, l);
}
