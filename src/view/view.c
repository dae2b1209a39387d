/* The view: creating and destroying one (fonts, text cache, textures), the
 * default ViewState, and the window's frame: which panel is drawn in which
 * order. Each panel is drawn in its own file (see view_internal.h); the same
 * heatmap and line drawing serve the window and the PNG export. */
#include "view_internal.h"
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- create / destroy ------------------------------------------------------ */

View *view_create(SDL_Renderer *r, const ViewFonts *fonts, AttnErr *err)
{
    View *v = calloc(1, sizeof *v);
    if (!v) {
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        return NULL;
    }
    v->r = r;
    v->heat_lut_id = -1;
    v->text = text_create(r, fonts, err);
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
    if (v->grid_tex)
        SDL_DestroyTexture(v->grid_tex);
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
    v->heat_w = v->heat_h = 0;
    if (v->edit_tex)
        SDL_DestroyTexture(v->edit_tex);
    v->edit_tex = NULL;
    v->edit_tw = v->edit_th = 0;
    if (v->grid_tex)
        SDL_DestroyTexture(v->grid_tex);
    v->grid_tex = NULL;
    for (int i = 0; i <= CMAP_DIVERGING; i++) {
        if (v->bar[i])
            SDL_DestroyTexture(v->bar[i]);
        v->bar[i] = NULL;
    }
    text_set_renderer(v->text, r);
    v->r = r;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
}

/* The cached textures go too (as for a new renderer): any may hold text. */
void view_fonts_changed(View *v)
{
    text_fonts_changed(v->text);
    view_set_renderer(v, v->r);
}

/* ---- the window's frame ------------------------------------------------------ */

/* The heatmap panel's title: the formula of the shown matrix. */
static void heatmap_title(const ViewState *s, char *buf, size_t n)
{
    const AttnConfig *c = &s->cfg;
    if (s->panel_title) { /* the source's own (a file's: the numbers are the file's) */
        snprintf(buf, n, "%s", s->panel_title);
        return;
    }
    /* the score function's own formula (attn_score_formula), and with two
     * sentences which way round the matrix is */
    static const char *const expr[ATTN_SCORE_COUNT] = {
        "q\xC2\xB7k", "cos(q, k)", "v\xE1\xB5\x80 tanh(q + k)"};
    int sf = c->score >= 0 && c->score < ATTN_SCORE_COUNT ? c->score : 0;
    const char *cross = s->cross ? "   queries \xE2\x86\x93 keys \xE2\x86\x92" : "";
    switch (s->map.kind) {
    case ATTN_MAP_WEIGHTS:
        snprintf(buf, n, "Attention weights  \xCE\xB1 = %s%s", attn_score_formula(sf, c->scale, 0), cross);
        break;
    case ATTN_MAP_SCORES:
        snprintf(buf, n, "Raw scores  %s   colours centred on 0%s", expr[sf], cross);
        break;
    case ATTN_MAP_LOGITS:
        snprintf(buf, n, "Logits  %s%s / \xCF\x84   colours centred on 0%s", expr[sf],
                 sf == ATTN_SCORE_DOT && c->scale ? " / \xE2\x88\x9A" "dk" : "", cross);
        break;
    case ATTN_MAP_NORMS: /* Kobayashi et al. 2020's ‖α f(x)‖ */
        snprintf(buf, n, "Norms  \xCE\xB1 \xC2\xB7 \xE2\x80\x96v W\xE2\x82\x92\xE2\x80\x96   colours 0 to the map's max%s", cross);
        break;
    default: snprintf(buf, n, "%s", attn_map_kind_name(s->map.kind)); break;
    }
}

/* Half the panel's colour over r: what is drawn there is out of date. */
static void dim(SDL_Renderer *r, const ViewState *s, SDL_Rect rect)
{
    SDL_Color c = theme(s)->bg;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, 128);
    SDL_RenderFillRect(r, &rect);
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
}

/* The heatmap's panel: its title, then the figure laid out by view_layout
 * clipped to the panel, or an invitation to type. */
static void window_heatmap(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    if (s->cmp_ref && s->map.v && s->map.Tq && s->map.Tk) { /* the compare view (compare.c) */
        compare_draw_window(v, r, s, l);
        return;
    }
    char title[200];
    heatmap_title(s, title, sizeof title);
    char note[80] = "";
    if (s->zoom > 1.001f) /* a corner of the map: say so, and how back */
        snprintf(note, sizeof note, "zoom %.1f\xC3\x97  \xE2\x88\x92 zooms out", (double)s->zoom);
    else if (s->cscale == CSCALE_FIXED && s->map.kind == ATTN_MAP_WEIGHTS &&
             colormap_scale_mode(&s->map, s->cmap, CSCALE_MAX).hi < 0.5f)
        /* every weight in the darker half of 0–1: the key that shows more */
        snprintf(note, sizeof note, "Shift+C: colours to the map's max");
    else if (l->heat.every_r > 1 || l->heat.every_c > 1) /* labels left out: say so, and how all */
        snprintf(note, sizeof note, "labels thinned  + zooms in");
    if (note[0]) {
        SDL_Rect p = l->heatmap;
        int px = S(s, 13), nw;
        text_size(v->text, px, note, &nw, NULL);
        SDL_RenderSetClipRect(r, &p);
        draw_text_fit(v, px, theme(s)->dim, title, p.x + S(s, 6), p.y + S(s, 2), p.w - nw - S(s, 24));
        text_draw(v->text, px, theme(s)->accent, note, p.x + p.w - S(s, 6), p.y + S(s, 2), 2, 0);
        SDL_RenderSetClipRect(r, NULL);
    } else {
        draw_panel_title(v, r, s, l->heatmap, title);
    }
    if (!s->map.v || !s->map.Tq || !s->map.Tk) {
        text_draw(v->text, S(s, 18), theme(s)->dim, "Type a sentence to see its attention.",
                  l->heatmap.x + S(s, 20), l->heatmap.y + S(s, 60), 0, 0);
        return;
    }
    SDL_RenderSetClipRect(r, &l->heatmap);
    draw_heatmap(v, r, s, &l->heat);
    if (s->teach)
        draw_teach_target(r, s, &l->heat);
    if (s->stale) /* older than the text: dimmed until the new maps come */
        dim(r, s, l->heatmap);
    SDL_RenderSetClipRect(r, NULL);
    if (!s->edit_focus && !s->sentence_focus && !s->prompt) /* the keys act here */
        outline(r, l->heatmap, theme(s)->accent, S(s, 1) > 0 ? S(s, 1) : 1);
}

/* The line diagram's panel: background, title (the head), the diagram
 * clipped to the panel. */
static void window_lines(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    if (!s->weights.v || !s->weights.Tq || l->lines.w <= 0) /* none beside a comparison */
        return;
    fill(r, l->lines, theme(s)->panel);
    char hb[48], lt[160];
    attn_head_label(s->weights.head, s->weights.n_heads, hb, sizeof hb);
    if (s->line_heads) /* every head of the layer, each its colour */
        snprintf(hb, sizeof hb, "every head%s", s->weights.layer >= 0 ? " of the layer" : ", layers' mean");
    snprintf(lt, sizeof lt, s->cross ? "query \xE2\x86\x92 key of the 2nd sentence (%s)"
                                                 : "query \xE2\x86\x92 key (%s)", hb);
    if (s->lines_top > 0 && s->lines_top < s->weights.Tk) /* say that some are left out */
        snprintf(lt + strlen(lt), sizeof lt - strlen(lt), " \xC2\xB7 top %d", s->lines_top);
    draw_panel_title(v, r, s, l->lines, lt);
    SDL_Rect la = lines_area(v, s, l->lines, NULL);
    LinesGeom lg;
    lines_geometry(v, s, la, &lg);
    SDL_RenderSetClipRect(r, &l->lines);
    if (s->line_heads)
        draw_head_swatches(v, r, s, l->head_swatch);
    draw_lines(v, r, s, &lg);
    SDL_RenderSetClipRect(r, NULL);
}

/* Every small map of the grid in area, from one texture, the hovered
 * cell's row and column (mi, mj in the small maps' cells) marked in each. */
static void draw_grid_maps(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l,
                           SDL_Rect area, const AttnMaps *ms, int mi, int mj);

/* The model view: every layer (rows) and head (columns) as small maps in
 * the heatmap's and the line diagram's room. */
static void window_grid(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    SDL_Rect last = l->editor.w ? l->editor : l->lines;
    SDL_Rect area = {l->heatmap.x, l->heatmap.y, last.x + last.w - l->heatmap.x, l->heatmap.h};
    fill(r, area, theme(s)->bg);
    char title[300];
    if (s->score_map) {
        snprintf(title, sizeof title, "The %s score of every layer and head   arrows: select "
                 "\xC2\xB7 Enter or click: open \xC2\xB7 I: another score \xC2\xB7 U: the maps",
                 s->grid_score_name ? s->grid_score_name : "");
        draw_panel_title(v, r, s, area, title);
        SDL_RenderSetClipRect(r, &area);
        draw_score_map(v, r, s, &l->score_fig);
        SDL_RenderSetClipRect(r, NULL);
    } else {
        if (s->grid_score && s->grid_order)
            snprintf(title, sizeof title, "Every layer and head, by %s score (highest first)   arrows: select \xC2\xB7 "
                     "Enter or click: open \xC2\xB7 Y: layer order \xC2\xB7 I: another score", s->grid_score_name);
        else if (s->grid_score)
            snprintf(title, sizeof title, "Every layer (rows) and head (columns), marked: %s   arrows: select \xC2\xB7 "
                     "Enter or click: open \xC2\xB7 I: another score \xC2\xB7 Y: sort \xC2\xB7 U: overview",
                     s->grid_score_name);
        else
            snprintf(title, sizeof title, "Every layer (rows) and head (columns)   arrows: select \xC2\xB7 "
                     "Enter or click: open \xC2\xB7 G: back to one head");
        draw_panel_title(v, r, s, area, title);
        draw_grid_maps(v, r, s, l, area, s->grid, s->hover_i, s->hover_j);
        SDL_RenderSetClipRect(r, &area);
        draw_kv_groups(v, r, s, &l->grid_fig);
        SDL_RenderSetClipRect(r, NULL);
        if (s->grid_score) {
            SDL_RenderSetClipRect(r, &area);
            draw_grid_marks(v, r, s, &l->grid_fig);
            SDL_RenderSetClipRect(r, NULL);
        }
    }
    if (s->stale)
        dim(r, s, area);
}

/* The head view's overview: every map, small, in the editor's room, the
 * row and column of the heatmap's hovered cell marked in each. */
static void window_overview(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    SDL_Rect area = l->editor;
    fill(r, area, theme(s)->panel);
    const FigureGrid *g = &l->grid_fig;
    /* the title: what a click and G do, or which maps are left out and
     * that G shows them; the longest that fits the panel */
    char part[2][80] = {"", ""}, t[4][200];
    if (l->overview_layers < g->L)
        snprintf(part[0], sizeof part[0], "layers 1\xE2\x80\x93%d of %d", l->overview_layers, g->L);
    if (l->overview_heads < g->H)
        snprintf(part[1], sizeof part[1], "heads 1\xE2\x80\x93%d of %d", l->overview_heads, g->H);
    if (part[0][0] || part[1][0]) {
        const char *sep = part[0][0] && part[1][0] ? ", " : "";
        snprintf(t[0], sizeof t[0], "Every layer and head: %s%s%s here (G shows all)", part[0], sep, part[1]);
        snprintf(t[1], sizeof t[1], "%s%s%s here (G: all)", part[0], sep, part[1]);
        snprintf(t[2], sizeof t[2], "%s%s%s (G: all)", part[0], sep, part[1]);
        snprintf(t[3], sizeof t[3], "%s%s%s", part[0], sep, part[1]);
    } else {
        snprintf(t[0], sizeof t[0], "Every layer and head (G; a click opens one)");
        snprintf(t[1], sizeof t[1], "Every layer and head (G: larger)");
        snprintf(t[2], sizeof t[2], "Every layer and head");
        snprintf(t[3], sizeof t[3], "Every map");
    }
    int k = 0, tw;
    for (; k < 3; k++) {
        text_size(v->text, S(s, 13), t[k], &tw, NULL);
        if (tw + S(s, 12) <= area.w)
            break;
    }
    draw_panel_title(v, r, s, area, t[k]);
    int mi = -1, mj = -1;
    if (s->hover_i >= 0 && s->hover_j >= 0 && s->map.Tq > 0 && s->map.Tk > 0) {
        mi = s->hover_i * g->Tq / s->map.Tq;
        mj = s->hover_j * g->Tk / s->map.Tk;
    }
    draw_grid_maps(v, r, s, l, area, s->overview, mi, mj);
}

static void draw_grid_maps(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l,
                           SDL_Rect area, const AttnMaps *ms, int mi, int mj)
{
    const FigureGrid *g = &l->grid_fig;
    /* the maps' texture, made again only when the maps or colours change */
    uint32_t hi;
    memcpy(&hi, &g->cb.cs.hi, sizeof hi);
    unsigned long key[6] = {(unsigned long)(uintptr_t)ms->v, s->maps_gen,
                            (unsigned long)g->cb.cs.id | (unsigned long)g->cb.cs.per_row << 8,
                            (unsigned long)s->dark, (unsigned long)(g->L * 65536 + g->H), hi};
    if (!v->grid_tex || memcmp(key, v->grid_key, sizeof key) != 0) {
        if (v->grid_tex)
            SDL_DestroyTexture(v->grid_tex);
        v->grid_tex = figure_grid_texture(r, g, ms, theme_get(s->dark));
        memcpy(v->grid_key, key, sizeof key);
    }
    FigureDraw d = {r, v->text, v->grid_tex, bar_texture(v, g->cb.cs.id), theme_get(s->dark), s->scale,
                    -1, -1, -1, -1, 0, NULL, NULL, s->line_heads != NULL || s->grid_score != NULL};
    SDL_RenderSetClipRect(r, &area);
    figure_draw_grid(&d, g, ms);
    draw_ablated(v, r, s, g);
    /* the hovered cell's row and column, marked in every map */
    if (mi >= 0 && mj >= 0 && mi < g->Tq && mj < g->Tk) {
        SDL_Color c = theme(s)->accent;
        for (int gl = 0; gl < g->L; gl++)
            for (int gh = 0; gh < g->H; gh++) {
                FigRect m = figure_grid_map_rect(g, gl, gh);
                int y0 = m.y + (int)lroundf(mi * g->cell), y1 = m.y + (int)lroundf((mi + 1) * g->cell);
                int x0 = m.x + (int)lroundf(mj * g->cell), x1 = m.x + (int)lroundf((mj + 1) * g->cell);
                outline(r, (SDL_Rect){m.x, y0, m.w, y1 - y0 > 0 ? y1 - y0 : 1}, c, 1);
                outline(r, (SDL_Rect){x0, m.y, x1 - x0 > 0 ? x1 - x0 : 1, m.h}, c, 1);
            }
    }
    SDL_RenderSetClipRect(r, NULL);
}

/* Inside a head (a source's vectors): q, k and q∘k as bars in area, their
 * names above, the sum of the product after its name. */
static void inside_bars(View *v, SDL_Renderer *r, const ViewState *s, SDL_Rect area)
{
    enum { MAXD = 1024 };
    const Theme *th = theme(s);
    int d = s->inside_d < MAXD ? s->inside_d : MAXD;
    float prod[MAXD], amax = 1e-6f, pmax = 1e-6f;
    double sum = 0.0;
    for (int c = 0; c < d; c++) {
        prod[c] = s->inside_q[c] * s->inside_k[c];
        sum += prod[c];
        amax = fmaxf(amax, fmaxf(fabsf(s->inside_q[c]), fabsf(s->inside_k[c])));
        pmax = fmaxf(pmax, fabsf(prod[c]));
    }
    int name_px = S(s, 12), name_h = text_line_height(v->text, name_px), gap = S(s, 10);
    int gw = (area.w - 2 * gap) / 3;
    if (gw < 3 * d / 2 && gw < 60)
        return; /* no room for bars to mean anything */
    char prod_name[80];
    snprintf(prod_name, sizeof prod_name, "q\xE2\x88\x98k  (\xCE\xA3 = %.3f)", sum);
    const char *names[3] = {"q (query)", "k (key)", prod_name};
    const float *vec[3] = {s->inside_q, s->inside_k, prod};
    for (int g = 0; g < 3; g++) {
        SDL_Rect a = {area.x + g * (gw + gap), area.y + name_h + S(s, 4), gw, area.h - name_h - S(s, 4)};
        text_draw(v->text, name_px, th->dim, names[g], a.x, area.y, 0, 0);
        set_color(r, th->border);
        SDL_RenderDrawLine(r, a.x, a.y + a.h / 2, a.x + a.w, a.y + a.h / 2);
        draw_bars(r, vec[g], d, a, g == 2 ? pmax : amax, g == 2 ? th->accent : th->pos, th->neg);
    }
}

/* text word-wrapped into panel p from y on; the y after its last line. */
static int wrapped_text(View *v, const ViewState *s, SDL_Rect p, const char *t, int y)
{
    int px = S(s, 13), lh = text_line_height(v->text, px);
    while (*t && y + lh <= p.y + p.h) {
        char line[400];
        size_t n = 0, fit = 0;
        while (t[n] && t[n] != '\n' && n < sizeof line - 1) {
            line[n] = t[n];
            line[++n] = '\0';
            int w;
            text_size(v->text, px, line, &w, NULL);
            if (w > p.w - S(s, 20))
                break;
            if (t[n] == ' ' || !t[n] || t[n] == '\n')
                fit = n;
        }
        fit = fit ? fit : n;
        snprintf(line, sizeof line, "%.*s", (int)fit, t);
        text_draw(v->text, px, theme(s)->dim, line, p.x + S(s, 10), y, 0, 0);
        t += fit;
        while (*t == ' ')
            t++;
        if (*t == '\n')
            t++;
        y += lh;
    }
    return y;
}

/* Width of t's first n bytes at px. */
static int prefix_width(View *v, int px, const char *t, size_t n)
{
    char line[400];
    int w = 0;
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), t);
    text_size(v->text, px, line, &w, NULL);
    return w;
}

/* Line t[0, n) drawn at x, y cut to w pixels (an ellipsis where cut, on a
 * character's boundary). */
static void clipped_line(View *v, const ViewState *s, const char *t, size_t n, int x, int y, int w)
{
    int px = S(s, 13);
    char line[420];
    size_t keep = n < 380 ? n : 380;
    if (prefix_width(v, px, t, keep) > w) {
        int ell;
        text_size(v->text, px, "\xE2\x80\xA6", &ell, NULL);
        /* the longest prefix that fits with the ellipsis, ending where a
         * character starts: found by halves over those ends (widths grow
         * with the prefix), not a measure for every byte in each frame */
        size_t ends[384];
        int n_ends = 0;
        for (size_t k = 0; k < keep; k++)
            if (((unsigned char)t[k] & 0xC0) != 0x80)
                ends[n_ends++] = k; /* the prefix t[0, k) ends before a character */
        int lo = 0, hi = n_ends - 1; /* ends[0] = 0 always fits */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (prefix_width(v, px, t, ends[mid]) + ell <= w)
                lo = mid;
            else
                hi = mid - 1;
        }
        keep = n_ends ? ends[lo] : 0;
        snprintf(line, sizeof line, "%.*s\xE2\x80\xA6", (int)keep, t);
    } else {
        snprintf(line, sizeof line, "%.*s", (int)keep, t);
    }
    text_draw(v->text, px, theme(s)->dim, line, x, y, 0, 0);
}

/* text into panel p from y on as wrapped_text draws it when it fits; when
 * its lines do not (a logit lens of 29 layers at 1024×768), its first line
 * wrapped across the panel and the others in as many columns as they need,
 * each line cut to its column: every row seen, its start the part that
 * says most. */
/* The lines t takes wrapped across panel p (about: each line's width over
 * the room, rounded up); its lines in *lines. */
static int wrapped_need(View *v, const ViewState *s, SDL_Rect p, const char *t, int *lines)
{
    int px = S(s, 13), room = p.w - S(s, 20), need = 0;
    *lines = 0;
    for (const char *a = t; *a; (*lines)++) {
        const char *e = strchr(a, '\n');
        size_t n = e ? (size_t)(e - a) : strlen(a);
        int w = prefix_width(v, px, a, n);
        need += room > 0 && w > room ? (w + room - 1) / room : 1;
        a += n + (e ? 1 : 0);
    }
    return need;
}

static int flowed_text(View *v, const ViewState *s, SDL_Rect p, const char *t, int y)
{
    int px = S(s, 13), lh = text_line_height(v->text, px), room = p.w - S(s, 20);
    int rows = (p.y + p.h - y) / lh, lines, need = wrapped_need(v, s, p, t, &lines);
    if (need <= rows || lines < 3 || room <= 0)
        return wrapped_text(v, s, p, t, y);
    const char *e = strchr(t, '\n');
    char first[400];
    snprintf(first, sizeof first, "%.*s", (int)(e - t), t);
    y = wrapped_text(v, s, p, first, y);
    rows = (p.y + p.h - y) / lh;
    if (rows < 1)
        return y;
    rows = rows < lines - 1 ? rows : lines - 1;
    int cols = (lines - 1 + rows - 1) / rows, gap = S(s, 16);
    int cw = (room - (cols - 1) * gap) / cols;
    const char *a = e + 1;
    for (int i = 0; *a && i < lines - 1; i++) {
        const char *f = strchr(a, '\n');
        size_t n = f ? (size_t)(f - a) : strlen(a);
        clipped_line(v, s, a, n, p.x + S(s, 10) + (i / rows) * (cw + gap), y + (i % rows) * lh, cw);
        a += n + (f ? 1 : 0);
    }
    return y + rows * lh;
}

/* The editor's and step view's room when there is no Model: what they
 * would show and why not; inside a head, its vectors as bars beside the
 * text under their caption in a wide panel, or under the text and caption
 * in a tall or narrow one (a tab of the side area on a projector). */
static void no_model_panels(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const SDL_Rect *panels[2] = {&l->editor, &l->step};
    for (int k = s->grid || s->overview ? 1 : 0; k < 2; k++) { /* the maps take the editor's room */
        SDL_Rect p = *panels[k];
        if (!p.w || !p.h || !s->no_model)
            continue;
        fill(r, p, theme(s)->panel);
        const char *caption = k == 1 ? s->inside_caption : NULL;
        int bars = k == 1 && s->inside_d > 0 && s->inside_q && s->inside_k;
        if (bars && p.w > S(s, 500) && p.h * 2 <= p.w) {
            int tw = p.w * 9 / 20; /* the text left, the caption and bars right */
            SDL_Rect right = {p.x + tw, p.y, p.w - tw, p.h};
            int y = p.y + S(s, 10);
            if (caption) {
                SDL_RenderSetClipRect(r, &right);
                right.x -= S(s, 10); /* wrapped_text's margin: the bars' left edge */
                y = wrapped_text(v, s, right, caption, y) + S(s, 4);
                SDL_RenderSetClipRect(r, NULL);
            }
            inside_bars(v, r, s, (SDL_Rect){p.x + tw, y, p.w - tw - S(s, 10), p.y + p.h - S(s, 10) - y});
            p.w = tw;
            caption = NULL;
        } else if (bars) { /* the text and caption above, the bars below in what is left */
            int bars_h = p.h * 45 / 100 < S(s, 220) ? p.h * 45 / 100 : S(s, 220);
            SDL_Rect top = {p.x, p.y, p.w, p.h - bars_h - S(s, 10)};
            SDL_RenderSetClipRect(r, &top);
            int y = wrapped_text(v, s, top, s->no_model, p.y + S(s, 10));
            if (caption)
                y = wrapped_text(v, s, top, caption, y + S(s, 6));
            SDL_RenderSetClipRect(r, NULL);
            y += S(s, 10);
            inside_bars(v, r, s, (SDL_Rect){p.x + S(s, 10), y, p.w - S(s, 20), p.y + p.h - S(s, 10) - y});
            continue;
        }
        SDL_RenderSetClipRect(r, &p);
        if (caption) { /* the caption's lines kept under the text, which flows above them */
            int lines, lh = text_line_height(v->text, S(s, 13));
            SDL_Rect top = p;
            top.h -= wrapped_need(v, s, p, caption, &lines) * lh + S(s, 6);
            if (top.h < 4 * lh)
                top = p;
            int y = flowed_text(v, s, top, s->no_model, p.y + S(s, 10));
            wrapped_text(v, s, p, caption, y + S(s, 6));
        } else {
            flowed_text(v, s, p, s->no_model, p.y + S(s, 10));
        }
        SDL_RenderSetClipRect(r, NULL);
    }
}

void view_draw_window(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    set_color(r, theme(s)->bg);
    SDL_RenderClear(r);
    draw_sentence_bar(v, r, s, l);
    draw_controls(v, r, s, l);
    if (s->grid) {
        window_grid(v, r, s, l);
    } else {
        window_heatmap(v, r, s, l);
        window_lines(v, r, s, l);
        if (s->overview && l->editor.w)
            window_overview(v, r, s, l);
    }
    if (s->m) { /* the panels of a model's weights and steps */
        draw_editor(v, r, s, l);
        if (s->teach)
            draw_teach_panel(v, r, s, l);
        else
            draw_step(v, r, s, l);
    } else {
        no_model_panels(v, r, s, l);
    }
    draw_side_tabs(v, r, s, l);
    draw_status(v, r, s, l);
    if (s->help)
        draw_help(v, r, s, l);
    else if (!s->grid) /* the model view names its hovered tokens in the status bar */
        draw_tooltip(v, r, s, l);
}

/* ---- state ---------------------------------------------------------------------- */

void view_state_init(ViewState *s, Model *m)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->head = 0;
    s->matrix = MODEL_WEIGHTS;
    s->cmap = CMAP_VIRIDIS;
    s->cscale = CSCALE_FIXED;
    s->query = m && m->T > 1 ? 1 : 0;
    s->key = -1;
    s->hover_i = s->hover_j = -1;
    s->scale = 1.0f;
    s->zoom = 1.0f;
    s->step_reveal = 4;
    view_state_set_model(s, m);
}
