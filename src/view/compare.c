/* The compare view (issue 14): the pinned reference, the current map and
 * their difference (current − reference: the diverging colours centred on
 * 0, scaled to ± the largest |difference|, as colormap_scale_for_map gives
 * any ATTN_MAP_DIFF) side by side, each a figure (figure.c) with its
 * label; in the window's heatmap panel (fitted, one cell size for the
 * three, the middle one answering the hit tests) and as one PNG (each
 * figure at its export size, reference | current | difference). The maps
 * and labels are the app's (ViewState.cmp_*); nothing here knows a Model. */
#include "compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP_DIFF_TITLE "difference: current \xE2\x88\x92 reference"

/* "weights · head 1 of 2": what a map is, under its label. */
static void map_desc(const AttnMap *m, char *buf, size_t n)
{
    char hb[48];
    attn_head_label(m->head, m->n_heads, hb, sizeof hb);
    snprintf(buf, n, "%s \xC2\xB7 %s", attn_map_kind_name(m->kind), hb);
}

/* Over the same tokens the rows line up: the reference's row labels serve
 * the three, and the other two give their room to the cells. */
static const char *const *no_labels(void)
{
    static const char *blank[ATTN_MAX_TOKENS];
    if (!blank[0])
        for (int k = 0; k < ATTN_MAX_TOKENS; k++)
            blank[k] = "";
    return blank;
}

/* Whether the current map's rows are the reference's tokens in the same
 * order (a permuted sentence's difference is aligned by token: in the
 * current map's order, so its rows need their own labels). */
static int rows_line_up(const ViewState *s)
{
    const AttnMap *r = s->cmp_ref, *c = &s->map;
    if (r->Tq != c->Tq || !r->q_labels || !c->q_labels)
        return r->Tq == c->Tq && !r->q_labels && !c->q_labels;
    for (int i = 0; i < r->Tq; i++)
        if (strcmp(r->q_labels[i] ? r->q_labels[i] : "", c->q_labels[i] ? c->q_labels[i] : "") != 0)
            return 0;
    return 1;
}

/* The reference's row of the current map's row i: the app's alignment
 * (by token or by position) when it gives one, the same row over the same
 * rows, else the same token (its k-th occurrence for the current row's
 * k-th), or -1. */
static int ref_row(const ViewState *s, int i)
{
    const AttnMap *r = s->cmp_ref, *c = &s->map;
    if (i >= 0 && i < c->Tq && s->cmp_rows)
        return s->cmp_rows[i];
    if (i < 0 || i >= c->Tq || rows_line_up(s))
        return i;
    if (!r->q_labels || !c->q_labels || !c->q_labels[i])
        return -1;
    int before = 0;
    for (int k = 0; k < i; k++)
        before += c->q_labels[k] && strcmp(c->q_labels[k], c->q_labels[i]) == 0;
    for (int k = 0; k < r->Tq; k++)
        if (r->q_labels[k] && strcmp(r->q_labels[k], c->q_labels[i]) == 0 && before-- == 0)
            return k;
    return -1;
}

/* The map figure k draws: 0 the reference, 1 the current map, 2 the
 * difference. The difference's rows are the current map's, beside it: it
 * borrows their labels; the current map borrows the reference's when its
 * rows are the reference's too. */
static AttnMap shown_map(const ViewState *s, int k)
{
    static const AttnMap none;
    AttnMap m = k == 0 ? *s->cmp_ref : k == 1 ? s->map : s->cmp_diff ? *s->cmp_diff : none;
    if (k > 0 && s->cmp_diff && m.Tq <= ATTN_MAX_TOKENS && (k == 2 || rows_line_up(s)))
        m.q_labels = no_labels();
    return m;
}

/* One colour scale for the reference and the current map when both are
 * of a kind (weights with weights): the same colour is the same number in
 * both, so a paler current map means smaller weights. Fixed 0–1 is shared
 * by itself; per row, each row of each map has its own (as the mode says). */
static ColorScale pair_scale(const ViewState *s, int k)
{
    ColorScale a = colormap_scale_mode(s->cmp_ref, s->cmap, s->cscale);
    ColorScale b = colormap_scale_mode(&s->map, s->cmap, s->cscale);
    if (a.id != b.id)
        return k == 0 ? a : b;
    a.lo = a.lo < b.lo ? a.lo : b.lo;
    a.hi = a.hi > b.hi ? a.hi : b.hi;
    return a;
}

/* Figure k (0 reference, 1 current, 2 difference) fitted into area. */
static void lay_one(View *v, const ViewState *s, int k, SDL_Rect area, float max_cell, Figure *f)
{
    AttnMap shown = shown_map(s, k);
    const AttnMap *map = &shown;
    char desc[160], facts[600];
    const char *title = k == 0 ? s->cmp_ref_label : k == 1 ? s->cmp_cur_label : CMP_DIFF_TITLE;
    map_desc(map, desc, sizeof desc); /* what differs is said whole above the three */
    TextMeasure tm = figure_measure_text(v->text);
    figure_fit_text(&tm, S(s, 12), desc, area.w, facts, sizeof facts);
    FigureOptions o;
    window_figure_options(s, area, max_cell, &o);
    o.title = title ? title : "";
    o.facts = facts;
    o.values_fit = 1;
    /* the pair shares one scale (pair_scale): the current map's bar serves both */
    o.no_colorbar = k == 0 && pair_scale(s, 0).id == pair_scale(s, 1).id && !pair_scale(s, 0).per_row;
    ColorScale cs = k < 2 ? pair_scale(s, k) : colormap_scale_for_map(map, s->cmap);
    o.cs = &cs;
    figure_layout(f, map, &o, &tm);
}

#define CMP_WHAT_LINES 6 /* (chrome.c's wrap_lines: a longer text ends in "…") */

/* The height of what differs, wrapped over the panel's width (never cut). */
static int what_height(View *v, const ViewState *s, int w)
{
    char lines[CMP_WHAT_LINES][400];
    int n = wrap_lines(v, S(s, 13), s->cmp_what ? s->cmp_what : "", w, lines, CMP_WHAT_LINES);
    return n ? n * text_line_height(v->text, S(s, 13)) + S(s, 8) : 0;
}

void compare_layout(View *v, const ViewState *s, SDL_Rect area, ViewLayout *l)
{
    /* what differs first, whole, over the figures' width */
    int band = what_height(v, s, area.w);
    area.y += band;
    area.h -= band;
    /* without a difference (another number of tokens) the two maps share the room */
    int nf = s->cmp_diff ? 3 : 2;
    int gap = S(s, 14), w3 = (area.w - (nf - 1) * gap) / nf;
    float max_cell = (float)S(s, 90);
    memset(&l->cmp[2], 0, sizeof l->cmp[2]);
    /* the figures need different room beside their grids (the reference
     * its row labels, not always a colour bar): measured at a third each,
     * the widths then given so that the three grids can be as wide */
    int width[3] = {w3, w3, w3}, beside[3], sum = 0, grids = 1;
    for (int k = 0; k < nf; k++) {
        lay_one(v, s, k, (SDL_Rect){area.x, area.y, w3 > 1 ? w3 : 1, area.h}, max_cell, &l->cmp[k]);
        beside[k] = w3 - l->cmp[k].grid.w;
        sum += beside[k];
        grids = grids && l->cmp[k].grid.w > 0;
    }
    int g = (area.w - (nf - 1) * gap - sum) / nf;
    if (g > 0 && grids)
        for (int k = 0; k < nf; k++)
            width[k] = g + beside[k];
    /* three times at most: again with the smallest cell of the three, and
     * each moved down to the lowest grid's top (longer key labels above
     * it: "tired→warm"), so the rows line up across the figures */
    int drop[3] = {0, 0, 0};
    for (int pass = 0; pass < 3; pass++) {
        float smallest = max_cell;
        int top = area.y, moved = 0;
        for (int k = 0, x = area.x; k < nf; x += width[k] + gap, k++) {
            SDL_Rect a = {x, area.y + drop[k], width[k] > 1 ? width[k] : 1, area.h - drop[k]};
            lay_one(v, s, k, a, max_cell, &l->cmp[k]);
            if (l->cmp[k].Tq && l->cmp[k].Tk && l->cmp[k].cell < smallest)
                smallest = l->cmp[k].cell;
            top = l->cmp[k].grid.y > top ? l->cmp[k].grid.y : top;
        }
        for (int k = 0; k < nf; k++)
            if (l->cmp[k].Tq && l->cmp[k].Tk && l->cmp[k].grid.y < top) {
                drop[k] += top - l->cmp[k].grid.y;
                moved = 1;
            }
        if (!(smallest < max_cell) && !moved)
            break;
        max_cell = smallest;
    }
    for (int k = 0; k < nf; k++) { /* the titles stay on one line */
        FigTitles *t = &l->cmp[k].t;
        t->title_box.y -= drop[k];
        for (int j = 0; j < t->n_facts; j++)
            t->facts_box[j].y -= drop[k];
    }
    l->heat = l->cmp[1];
}

/* A figure of a map the view keeps no texture for: one made and dropped. */
static void draw_other(View *v, SDL_Renderer *r, const ViewState *s, const Figure *f,
                       const AttnMap *map, int background)
{
    const AttnTheme *th = theme_get(s->dark);
    SDL_Texture *heat = f->Tq && f->Tk ? figure_heat_texture(r, f, map, th) : NULL;
    FigureDraw d = {r, v->text, heat, bar_texture(v, f->cb.cs.id), th, s->scale, s->query, s->key,
                    s->hover_i, s->hover_j, background, NULL, NULL, 0};
    figure_draw(&d, f, map);
    if (heat)
        SDL_DestroyTexture(heat);
}

void compare_draw_window(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    draw_panel_title(v, r, s, l->heatmap, "Compare: reference, current, difference   (V unpins)");
    SDL_RenderSetClipRect(r, &l->heatmap);
    /* what differs, whole, under the title (compare_layout left its room) */
    char lines[CMP_WHAT_LINES][400];
    int px = S(s, 13), lh = text_line_height(v->text, px), top = l->heatmap.y + S(s, 20);
    int n = wrap_lines(v, px, s->cmp_what ? s->cmp_what : "", l->heatmap.w, lines, CMP_WHAT_LINES);
    for (int k = 0; k < n; k++)
        text_draw(v->text, px, theme(s)->text, lines[k], l->heatmap.x, top + k * lh, 0, 0);
    ViewState rs = *s; /* the reference outlines the selected query's token */
    rs.query = ref_row(s, s->query);
    draw_other(v, r, &rs, &l->cmp[0], s->cmp_ref, 0);
    AttnMap cur = shown_map(s, 1); /* drawn in the pair's colours, not the heatmap's own */
    draw_other(v, r, s, &l->cmp[1], &cur, 0);
    if (s->cmp_diff) {
        AttnMap dm = shown_map(s, 2);
        draw_other(v, r, s, &l->cmp[2], &dm, 0);
    }
    SDL_RenderSetClipRect(r, NULL);
}

/* ---- the export ------------------------------------------------------------------ */

void view_compare_export_layout(const ViewState *s, const char *ref_facts, Figure f[3], int x[3])
{
    const AttnMap *pair[2] = {s->cmp_ref, &s->map};
    const char *titles[2] = {s->cmp_ref_label, s->cmp_cur_label}, *facts[2] = {ref_facts, s->facts};
    for (int k = 0; k < 2; k++) {
        FigureOptions o = figure_options_export(s->scale, titles[k], facts[k]);
        ColorScale cs = pair_scale(s, k);
        o.cmap = s->cmap;
        o.cscale = s->cscale;
        o.query = k == 0 ? ref_row(s, s->query) : s->query;
        o.cs = &cs;
        figure_layout(&f[k], pair[k], &o, &figure_measure_dejavu);
    }
    memset(&f[2], 0, sizeof f[2]);
    if (s->cmp_diff) /* without one (different tokens) the two maps alone */
        figure_layout_export(&f[2], s->cmp_diff, s->scale, CMP_DIFF_TITLE, s->cmp_what, s->cmap,
                             s->cscale, s->query);
    x[0] = 0;
    x[1] = f[0].w;
    x[2] = f[0].w + f[1].w;
}

SDL_Surface *view_render_compare(const ViewFonts *fonts, const ViewState *s, const char *ref_facts,
                                 AttnErr *err)
{
    Figure *f = malloc(3 * sizeof *f);
    int x[3];
    if (!f || !s->cmp_ref || !s->map.v) {
        free(f);
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "nothing to compare");
        return NULL;
    }
    view_compare_export_layout(s, ref_facts, f, x);
    int w = x[2] + f[2].w, h = f[0].h > f[1].h ? f[0].h : f[1].h;
    h = f[2].h > h ? f[2].h : h;
    SDL_Surface *out = NULL;
    SDL_Renderer *r = NULL;
    View *v = NULL;
    if (w < 1 || h < 1 || w > 16384 || h > 16384) {
        attn_err_set(err, ATTN_E_TOO_LARGE, NULL, 0, "image of %d×%d pixels is too large", w, h);
        goto done;
    }
    out = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB888);
    r = out ? SDL_CreateSoftwareRenderer(out) : NULL;
    v = r ? view_create(r, fonts, err) : NULL;
    if (!v) {
        if (!r)
            attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create a %d×%d image: %s", w, h,
                         SDL_GetError());
        SDL_FreeSurface(out);
        out = NULL;
        goto done;
    }
    set_color(r, theme(s)->bg);
    SDL_RenderClear(r);
    ViewState e = *s;
    e.key = e.hover_i = e.hover_j = -1;
    const AttnMap *maps[3] = {s->cmp_ref, &s->map, s->cmp_diff};
    for (int k = 0; k < 3; k++) {
        if (!f[k].w)
            continue;
        SDL_Rect vp = {x[k], 0, f[k].w, f[k].h};
        SDL_RenderSetViewport(r, &vp);
        e.query = k == 0 ? ref_row(s, s->query) : s->query;
        draw_other(v, r, &e, &f[k], maps[k], 1);
    }
    SDL_RenderSetViewport(r, NULL);
    SDL_RenderPresent(r);
done:
    view_destroy(v);
    if (r)
        SDL_DestroyRenderer(r);
    free(f);
    return out;
}
