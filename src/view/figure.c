/* The figure layout (see figure.h): where the title, the axis titles, the
 * labels, the cells, the colour bar and its ticks go, for a map of Tq×Tk
 * numbers, in pixels. Pure geometry: text is measured through the
 * TextMeasure it is given, nothing is drawn. */
#include "attnviz/figure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/tokenizer.h"

/* ---- DejaVu Sans metrics ------------------------------------------------- */

/* DejaVu Sans advance widths of ' '..'~' in thousandths of an em. */
static const unsigned short ascii_w[95] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318,
    337, 636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838,
    838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557,
    863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390,
    337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278,
    579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,
    525, 636, 337, 636, 838};

double figure_dejavu_em(unsigned cp)
{
    if (cp >= 0x20 && cp < 0x7F)
        return ascii_w[cp - 0x20] / 1000.0;
    if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) ||
        (cp >= 0xFE00 && cp <= 0xFE0F))
        return 0.0; /* combining marks, zero-width characters */
    if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
        (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
        (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1FAFF) ||
        cp >= 0x20000)
        return 1.0; /* CJK, Hangul, full-width forms, emoji */
    return 0.62;
}

static int dejavu_width(void *ctx, int px, const char *s)
{
    (void)ctx;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    double em = 0.0;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        int k = tok_utf8_decode(u + i, n - i, &cp);
        em += figure_dejavu_em(cp);
        i += (size_t)(k ? k : 1);
    }
    return (int)ceil(em * px);
}

/* (ascender 1901 + descender 483) / 2048 units per em, as FreeType's
 * line skip for DejaVu Sans */
static int dejavu_line_height(void *ctx, int px)
{
    (void)ctx;
    return (int)ceil(px * 1.164);
}

const TextMeasure figure_measure_dejavu = {dejavu_width, dejavu_line_height, NULL};

double figure_ascent(int px)
{
    return ceil(px * 0.928);
}

/* ---- layout -------------------------------------------------------------- */

typedef struct Ctx {
    const TextMeasure *tm;
    float scale;
} Ctx;

static int S(const Ctx *c, float v)
{
    return (int)lroundf(v * c->scale);
}

static int tw(const Ctx *c, int px, const char *s)
{
    return c->tm->width(c->tm->ctx, px, s);
}

static int lh(const Ctx *c, int px)
{
    return c->tm->line_height(c->tm->ctx, px);
}

FigureOptions figure_options_export(float scale, const char *title, const char *facts)
{
    FigureOptions o;
    memset(&o, 0, sizeof o);
    o.scale = scale;
    o.title = title;
    o.facts = facts;
    o.axis_titles = 1;
    o.zoom = 1.0f;
    o.query = o.key = -1;
    return o;
}

void figure_layout_export(Figure *f, const AttnMap *map, float scale, const char *title,
                          const char *facts, ColormapId cmap, ColorScaleMode cscale, int query)
{
    FigureOptions o = figure_options_export(scale, title, facts);
    o.cmap = cmap;
    o.cscale = cscale;
    o.query = query;
    figure_layout(f, map, &o, &figure_measure_dejavu);
}

void figure_fit_text(const TextMeasure *tm, int px, const char *t, int max_w, char *out, size_t n)
{
    size_t len = strlen(t);
    if (len < n && tm->width(tm->ctx, px, t) <= max_w) {
        memcpy(out, t, len + 1);
        return;
    }
    /* the longest prefix (whole characters) that fits with the ellipsis */
    size_t lo = 0, hi = len < n - 8 ? len : n - 8;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        while (mid > lo && ((unsigned char)t[mid] & 0xC0) == 0x80)
            mid--;
        if (mid == lo)
            break;
        memcpy(out, t, mid);
        memcpy(out + mid, "\xE2\x80\xA6", 4);
        if (tm->width(tm->ctx, px, out) <= max_w)
            lo = mid;
        else
            hi = mid - 1;
    }
    memcpy(out, t, lo);
    memcpy(out + lo, "\xE2\x80\xA6", 4);
}

void figure_fit_label(const TextMeasure *tm, int px, const char *t, int max_w, char *out, size_t n)
{
    figure_fit_text(tm, px, t, max_w + px / 4 + 1, out, n);
}

static int widest(const Ctx *c, int px, const char *const *labels, int n, int cap)
{
    int w = 0;
    for (int i = 0; i < n && w < cap; i++) {
        int x = tw(c, px, labels[i]);
        w = x > w ? x : w;
    }
    return w < cap ? w : cap;
}

static int any_masked(const AttnMap *m)
{
    if (m->Tq == 0 || m->Tk == 0)
        return 0;
    if (m->causal && m->Tk > 1)
        return 1;
    for (size_t e = 0; m->mask && e < (size_t)m->Tq * m->Tk; e++)
        if (m->mask[e])
            return 1;
    return 0;
}

/* The cell side and the visible rows/columns: fitted into avail_w × avail_h
 * (the window, with zoom), or from the map's size (an export). */
static void cells(Figure *f, const Ctx *c, const FigureOptions *o, int avail_w, int avail_h,
                  int key_w)
{
    int Tq = f->Tq, Tk = f->Tk, n = Tq > Tk ? Tq : Tk;
    int top_rot = (int)(key_w * 0.72f) + f->label_lh + S(c, 4), top_flat = f->label_lh + S(c, 4);
    int top_up = key_w + f->label_lh / 2 + S(c, 4);
    float cell;
    if (!o->area_w) {
        cell = n ? floorf(640.0f / n) : 40.0f;
        cell = (cell > 40.0f ? 40.0f : cell < 1.0f ? 1.0f : cell) * c->scale;
        f->rotate = key_w + S(c, 4) > cell;
    } else {
        float zoom = o->zoom >= 1.0f ? o->zoom : 1.0f, cap = o->max_cell > 0 ? o->max_cell : 1e9f;
        /* flat key labels when every token fits in a cell */
        float fit = fminf((float)avail_w / Tk, (float)(avail_h - top_flat) / Tq);
        f->rotate = key_w + S(c, 4) > fminf(fit, cap) || zoom > 1.0f;
        if (f->rotate)
            fit = fminf((float)avail_w / Tk, (float)(avail_h - top_rot) / Tq);
        cell = fminf(fit * zoom, cap);
        if (zoom > 1.0f && key_w + S(c, 4) <= cell) {
            f->rotate = 0;
        }
        /* labels at -45° too close for each to be shown (labels_thinning)
         * stand upright, a cell apart, when that shows them all */
        float need = f->label_lh * 0.9f;
        if (f->rotate && need > cell * 0.7071f) {
            float up = fminf(fminf((float)avail_w / Tk, (float)(avail_h - top_up) / Tq) * zoom, cap);
            if (up >= need) {
                f->rotate = 2;
                cell = up;
            }
        }
    }
    if (cell < 1.0f)
        cell = 1.0f;
    f->cell = cell;
    int top = f->rotate == 2 ? top_up : f->rotate ? top_rot : top_flat;
    f->grid.y += top;
    int vis_c = Tk, vis_r = Tq;
    if (o->area_w) {
        /* (a cell of avail_w / Tk gives Tk columns, not Tk − 1 by rounding) */
        vis_c = (int)(avail_w / cell + 1e-3f);
        vis_r = (int)((avail_h - top) / cell + 1e-3f);
        vis_c = vis_c > Tk ? Tk : vis_c < 1 ? 1 : vis_c;
        vis_r = vis_r > Tq ? Tq : vis_r < 1 ? 1 : vis_r;
    }
    f->row0 = o->pan_row < 0 ? 0 : o->pan_row > Tq - vis_r ? Tq - vis_r : o->pan_row;
    f->col0 = o->pan_col < 0 ? 0 : o->pan_col > Tk - vis_c ? Tk - vis_c : o->pan_col;
    f->rows = vis_r;
    f->cols = vis_c;
    f->grid.w = (int)lroundf(vis_c * cell);
    f->grid.h = (int)lroundf(vis_r * cell);
}

#define PER_ROW_CAPTION "each row: 0 to its max"

/* The ticks of cb->cs, at most max_n of them: values (0 … 1 of the bar in
 * t), labels, count. */
static void make_ticks(FigColorbar *cb, int max_n, double t[FIGURE_TICKS])
{
    if (cb->cs.per_row) { /* each row has its own top */
        cb->n_ticks = 2;
        t[0] = 0.0;
        t[1] = 1.0;
        snprintf(cb->ticks[0], sizeof cb->ticks[0], "0");
        snprintf(cb->ticks[1], sizeof cb->ticks[1], "max");
        return;
    }
    double v[FIGURE_TICKS];
    int d, lo_hi = cb->cs.hi > cb->cs.lo;
    cb->n_ticks = colormap_ticks(cb->cs.lo, cb->cs.hi, max_n, v, &d);
    for (int k = 0; k < cb->n_ticks; k++) {
        colormap_tick_label(v[k], d, cb->ticks[k], sizeof cb->ticks[k]);
        t[k] = lo_hi ? (v[k] - cb->cs.lo) / ((double)cb->cs.hi - cb->cs.lo) : 0.0;
    }
}

/* The colour bar's ticks for cb->cs at most (the bar's height is not known
 * yet): the widest label. */
static int tick_labels(FigColorbar *cb, const Ctx *c)
{
    cb->tick_px = S(c, 12);
    int w = S(c, 28);
    double t[FIGURE_TICKS];
    for (int n = 5; n <= FIGURE_TICKS; n++) { /* finer steps have longer labels */
        make_ticks(cb, n, t);
        for (int k = 0; k < cb->n_ticks; k++) {
            int x = tw(c, cb->tick_px, cb->ticks[k]);
            w = x > w ? x : w;
        }
    }
    return w;
}

/* The width a colour bar with its ticks and caption takes right of a grid. */
static int colorbar_room(const Ctx *c, int tick_w)
{
    return S(c, 10) + S(c, 4) + S(c, 14) + S(c, 6) + tick_w + S(c, 4) + lh(c, S(c, 12));
}

/* Colour bar, ticks, caption and the masked legend at x, from y down for
 * h pixels (at least 60, and the caption's length); returns the right edge
 * of what they take. Ticks stand at least 1.5 lines apart. */
static int colorbar(FigColorbar *cb, const Ctx *c, int x, int y, int h, AttnMapKind kind,
                    int masked, int tick_w, const char *caption)
{
    cb->caption = caption ? caption : cb->cs.per_row ? PER_ROW_CAPTION : attn_map_kind_unit(kind);
    int min_h = S(c, 60);
    if ((cb->cs.per_row || caption) && tw(c, cb->tick_px, cb->caption) + S(c, 8) > min_h)
        min_h = tw(c, cb->tick_px, cb->caption) + S(c, 8);
    cb->bar = (FigRect){x, y, S(c, 14), h > min_h ? h : min_h};
    cb->line_w = S(c, 1) > 0 ? S(c, 1) : 1;
    cb->tick_x = cb->bar.x + cb->bar.w + S(c, 6);
    double t[FIGURE_TICKS];
    int room = (int)(cb->bar.h / (1.5 * lh(c, cb->tick_px))) + 1;
    make_ticks(cb, room > 5 ? room : 5, t); /* 5: colormap_ticks gives 2 at least */
    for (int k = 0; k < cb->n_ticks; k++)
        cb->tick_y[k] = cb->bar.y + cb->bar.h - (int)lround(cb->bar.h * t[k]);
    cb->caption_x = cb->tick_x + tick_w + S(c, 4);
    cb->caption_cy = cb->bar.y + cb->bar.h / 2;
    int right = cb->caption_x + lh(c, cb->tick_px);
    if (masked) {
        cb->legend = (FigRect){cb->bar.x, cb->bar.y + cb->bar.h + S(c, 12), cb->bar.w, cb->bar.w};
        int lw = cb->tick_x + tw(c, cb->tick_px, "masked");
        right = lw > right ? lw : right;
    }
    return right;
}

static int colorbar_bottom(const FigColorbar *cb)
{
    int b = cb->bar.y + cb->bar.h;
    return cb->legend.w && cb->legend.y + cb->legend.h > b ? cb->legend.y + cb->legend.h : b;
}

static void labels_thinning(Figure *f)
{
    f->every_r = (int)ceilf((f->label_lh * 0.9f) / f->cell);
    /* labels at -45° stand cell·every·sin 45° apart, not cell·every */
    f->every_c = f->rotate == 1 ? (int)ceilf((f->label_lh * 0.9f) / (f->cell * 0.7071f)) : f->every_r;
    f->every_r = f->every_r < 1 ? 1 : f->every_r;
    f->every_c = f->every_c < 1 ? 1 : f->every_c;
}

/* The title and facts lines at the top (the facts on one line for now);
 * returns their height. */
static int title_lines(FigTitles *t, const Ctx *c, const FigureOptions *o, int x, int y)
{
    int h = 0;
    t->title_px = S(c, 14);
    t->facts_px = S(c, 12);
    if (o->title) {
        t->title_box = (FigRect){x, y, 0, lh(c, t->title_px)};
        h += t->title_box.h + S(c, 2);
    }
    if (o->facts) {
        snprintf(t->facts[0], sizeof t->facts[0], "%s", o->facts);
        t->n_facts = 1;
        t->facts_box[0] = (FigRect){x, y + h, tw(c, t->facts_px, t->facts[0]), lh(c, t->facts_px)};
        h += t->facts_box[0].h + S(c, 10);
    }
    return h;
}

/* Wrap the facts line at its " · " separators into lines of at most max_w
 * pixels (at least one part a line, at most FIGURE_FACT_LINES lines);
 * returns how many pixels the extra lines take. */
static int wrap_facts(FigTitles *t, const Ctx *c, int max_w)
{
    static const char sep[] = " \xC2\xB7 ";
    if (t->n_facts != 1 || t->facts_box[0].w <= max_w)
        return 0;
    char all[320];
    snprintf(all, sizeof all, "%s", t->facts[0]);
    int n = 0;
    char *p = all;
    t->facts[0][0] = '\0';
    while (p && *p) {
        char *next = strstr(p, sep), part[320];
        snprintf(part, sizeof part, "%.*s", next ? (int)(next - p) : (int)strlen(p), p);
        char *line = t->facts[n];
        char trial[640];
        snprintf(trial, sizeof trial, "%s%s%s", line, line[0] ? sep : "", part);
        if (line[0] && tw(c, t->facts_px, trial) > max_w && n + 1 < FIGURE_FACT_LINES) {
            n++;
            snprintf(t->facts[n], sizeof t->facts[n], "%s", part);
        } else {
            memcpy(line, trial, strlen(trial) < sizeof t->facts[n] ? strlen(trial) + 1 : 0);
        }
        p = next ? next + strlen(sep) : NULL;
    }
    t->n_facts = n + 1;
    int line_h = t->facts_box[0].h;
    for (int k = 0; k < t->n_facts; k++)
        t->facts_box[k] = (FigRect){t->facts_box[0].x, t->facts_box[0].y + k * line_h,
                                    tw(c, t->facts_px, t->facts[k]), line_h};
    return n * line_h;
}

/* Everything under the titles moves down by dy (the facts wrapped). */
static void shift_down(Figure *f, int dy)
{
    f->keys_y += dy;
    f->queries_cy += dy;
    f->grid.y += dy;
    f->cb.bar.y += dy;
    for (int k = 0; k < f->cb.n_ticks; k++)
        f->cb.tick_y[k] += dy;
    f->cb.caption_cy += dy;
    f->cb.legend.y += dy;
}

/* The width of an export: its content, the facts (wrapped to the content
 * when wider), at least 360 px, and wider for a long title (up to 720
 * px); then the title cut to it. */
static int finish_titles(FigTitles *t, const Ctx *c, const FigureOptions *o, int content_right,
                         int pad)
{
    int w = content_right + pad, min_w = S(c, 360);
    if (!o->area_w) {
        w = min_w > w ? min_w : w;
        int fw = 0;
        for (int k = 0; k < t->n_facts; k++)
            fw = t->facts_box[k].w + 2 * pad > fw ? t->facts_box[k].w + 2 * pad : fw;
        w = fw > w ? fw : w;
        if (o->title) {
            int want = tw(c, t->title_px, o->title) + 2 * pad, most = S(c, 720);
            most = w > most ? w : most;
            want = want < most ? want : most;
            w = want > w ? want : w;
        }
    } else {
        w = o->area_x + o->area_w;
    }
    if (o->title) {
        t->title_box.w = o->area_w ? o->area_w : w - 2 * pad;
        figure_fit_text(c->tm, t->title_px, o->title, t->title_box.w, t->title, sizeof t->title);
    }
    return w;
}

/* The widest number a cell of scale cs shows, at px. */
static int widest_value(const Ctx *c, const ColorScale *cs, int px)
{
    float a = fmaxf(fabsf(cs->lo), fabsf(cs->hi));
    const float probe[] = {cs->lo, cs->hi, cs->lo < 0.0f ? -a : a, 0.0f};
    int most = 0;
    for (int k = 0; k < 4; k++) {
        char buf[32];
        colormap_cell_label(cs, probe[k], buf, sizeof buf);
        int w = tw(c, px, buf);
        most = w > most ? w : most;
    }
    return most;
}

void figure_layout(Figure *f, const AttnMap *map, const FigureOptions *o, const TextMeasure *tm)
{
    Ctx c = {tm, o->scale > 0 ? o->scale : 1.0f};
    memset(f, 0, sizeof *f);
    f->Tq = map->v ? map->Tq : 0;
    f->Tk = map->v ? map->Tk : 0;
    int pad = o->area_w ? 0 : S(&c, 16);
    int ax = o->area_w ? o->area_x : pad, ay = o->area_w ? o->area_y : pad;
    int x0 = ax, y0 = ay + title_lines(&f->t, &c, o, ax, ay);
    f->line_w = S(&c, 3) > 1 ? S(&c, 3) : 1;
    if (o->axis_titles) {
        f->axis_px = S(&c, 12);
        f->keys_y = y0;
        y0 += lh(&c, f->axis_px) + S(&c, 2);
        f->queries_x = x0;
        x0 += lh(&c, f->axis_px) + S(&c, 6);
    }
    f->label_px = S(&c, 14);
    f->label_lh = lh(&c, f->label_px);
    int cap = S(&c, 140);
    f->label_w = widest(&c, f->label_px, map->q_labels, f->Tq, cap);
    int key_w = widest(&c, f->label_px, map->k_labels, f->Tk, cap);
    f->key_w = key_w;
    f->cb.cs = o->cs ? *o->cs : colormap_scale_mode(map, o->cmap, o->cscale);
    int tick_w = tick_labels(&f->cb, &c);
    f->grid.x = x0 + f->label_w + S(&c, 10);
    f->grid.y = y0;
    if (f->Tq && f->Tk) {
        /* room under the grid for half of the lowest tick label */
        int avail_w = ax + o->area_w - f->grid.x - (o->no_colorbar ? S(&c, 4) : colorbar_room(&c, tick_w));
        int avail_h = ay + o->area_h - y0 - lh(&c, f->cb.tick_px) / 2 - 1;
        cells(f, &c, o, avail_w, avail_h, key_w);
        labels_thinning(f);
        f->value_px = f->cell >= S(&c, 34) ? (f->cell >= S(&c, 56) ? S(&c, 14) : S(&c, 12)) : 0;
        if (o->values_fit) { /* labels a whole line apart; numbers wherever they fit */
            f->every_r = f->every_r * f->cell < f->label_lh - 1 ? f->every_r + 1 : f->every_r;
            if (!f->value_px && f->cell >= lh(&c, S(&c, 12)) &&
                widest_value(&c, &f->cb.cs, S(&c, 12)) + S(&c, 4) <= f->cell)
                f->value_px = S(&c, 12);
        }
    }
    int right = colorbar(&f->cb, &c, f->grid.x + f->grid.w + S(&c, 14), f->grid.y, f->grid.h,
                         map->kind, any_masked(map), tick_w, o->caption);
    if (o->no_colorbar) { /* its scale kept for the numbers; nothing drawn */
        right = f->grid.x + f->grid.w;
        f->cb.bar = (FigRect){right, f->grid.y, 0, f->grid.h};
        f->cb.tick_x = f->cb.caption_x = right;
        f->cb.n_ticks = 0;
        f->cb.legend.w = 0;
    }
    if (f->Tk && f->rotate == 1) {
        int r = figure_cell_x(f, f->col0 + f->cols - 1) + (int)(f->cell / 2) +
                (int)(key_w * 0.72f) + f->label_lh;
        right = r > right ? r : right;
    }
    f->keys_cx = f->grid.x + f->grid.w / 2;
    f->queries_cy = f->grid.y + f->grid.h / 2;
    if (!o->area_w) {
        int room = right - pad > S(&c, 360) - 2 * pad ? right - pad : S(&c, 360) - 2 * pad;
        shift_down(f, wrap_facts(&f->t, &c, room));
    }
    int bottom = colorbar_bottom(&f->cb);
    bottom = f->grid.y + f->grid.h > bottom ? f->grid.y + f->grid.h : bottom;
    bottom += lh(&c, f->cb.tick_px) / 2 + 1;
    f->w = finish_titles(&f->t, &c, o, right, pad);
    f->h = o->area_w ? o->area_y + o->area_h : bottom + pad;
}

/* ---- a grid of maps -------------------------------------------------------- */

static int maps_masked(const AttnMaps *ms)
{
    AttnMap m = attn_maps_get(ms, 0, 0);
    return any_masked(&m);
}

/* One colour scale over every map of the collection (per row: each row of
 * each map its own). */
static ColorScale maps_scale(const AttnMaps *ms, ColormapId cmap, ColorScaleMode mode)
{
    AttnMap first = attn_maps_get(ms, 0, 0);
    ColorScale s = {attn_map_kind_diverging(ms->kind) ? CMAP_DIVERGING : cmap, 0.0f, 1.0f,
                    colormap_per_row(&first, mode)};
    float hi = 0.0f;
    for (int l = 0; l < ms->L; l++)
        for (int h = 0; h < ms->H; h++) {
            AttnMap m = attn_maps_get(ms, l, h);
            ColorScale one = colormap_scale_mode(&m, cmap, mode);
            hi = one.hi > hi ? one.hi : hi;
        }
    s.hi = hi > 0.0f ? hi : 1.0f;
    s.lo = s.id == CMAP_DIVERGING ? -s.hi : 0.0f;
    return s;
}

void figure_grid_layout(FigureGrid *g, const AttnMaps *ms, const FigureOptions *o,
                        const TextMeasure *tm)
{
    Ctx c = {tm, o->scale > 0 ? o->scale : 1.0f};
    memset(g, 0, sizeof *g);
    int ok = ms->v && ms->L > 0 && ms->H > 0 && ms->Tq > 0 && ms->Tk > 0;
    g->L = ok ? ms->L : 0;
    g->H = ok ? ms->H : 0;
    g->Tq = ok ? ms->Tq : 0;
    g->Tk = ok ? ms->Tk : 0;
    g->sel_l = o->query;
    g->sel_h = o->key;
    g->mark_w = o->grid_mark_w;
    g->label_h = o->grid_label_h;
    if (o->grid_order && g->L * g->H <= FIGURE_GRID_SLOTS) {
        g->sorted = 1;
        for (int p = 0; p < g->L * g->H; p++)
            g->slot[o->grid_order[p] >= 0 && o->grid_order[p] < g->L * g->H ? o->grid_order[p] : p] = p;
    }
    int pad = o->area_w ? 0 : S(&c, 16);
    int ax = o->area_w ? o->area_x : pad, ay = o->area_w ? o->area_y : pad;
    int y0 = ay + title_lines(&g->t, &c, o, ax, ay);
    g->mark_px = o->grid_mark_px > 0 ? o->grid_mark_px : S(&c, 13);
    g->bar_x = S(&c, 3);
    g->bar_w = S(&c, 4);
    g->numbers = o->grid_numbers;
    if (o->grid_kv_group > 1 && !g->sorted && g->H > 0) { /* the brackets' band */
        g->kv_group = o->grid_kv_group;
        g->kv_y = y0;
        g->kv_h = lh(&c, g->mark_px) + S(&c, 6);
        y0 += g->kv_h;
    }
    g->head_px = g->layer_px = S(&c, 12);
    char buf[32];
    snprintf(buf, sizeof buf, "layer %d", g->L);
    g->x0 = ax + (g->L > 1 ? tw(&c, g->layer_px, buf) + S(&c, 8) : 0);
    g->y0 = y0 + lh(&c, g->head_px) + S(&c, 4);
    g->gap = S(&c, 8);
    g->cb.cs = maps_scale(ms, o->cmap, o->cscale);
    int tick_w = tick_labels(&g->cb, &c), n = g->Tq > g->Tk ? g->Tq : g->Tk;
    if (n) {
        float cell;
        if (!o->area_w) { /* about 120 px a map, whole pixels a cell */
            cell = floorf(120.0f / n);
            cell = (cell > 16.0f ? 16.0f : cell < 1.0f ? 1.0f : cell) * c.scale;
        } else {
            float aw = (float)(ax + o->area_w - g->x0 - colorbar_room(&c, tick_w) - (g->H - 1) * g->gap -
                               g->H * g->mark_w);
            float ah = (float)(ay + o->area_h - g->y0 - (g->L - 1) * g->gap - g->L * g->label_h);
            cell = fminf(aw / ((float)g->H * g->Tk), ah / ((float)g->L * g->Tq));
            if (o->grid_tight && cell < 1.0f && g->gap > S(&c, 3)) { /* narrower gaps first */
                aw += (float)((g->H - 1) * (g->gap - S(&c, 3)));
                ah += (float)((g->L - 1) * (g->gap - S(&c, 3)));
                g->gap = S(&c, 3);
                cell = fminf(aw / ((float)g->H * g->Tk), ah / ((float)g->L * g->Tq));
            }
            /* with marks and labels beside the maps, or in a small panel,
               cells may go under a pixel (the maps are drawn scaled from
               their texture) */
            float least = g->mark_w || g->label_h || o->grid_tight ? 0.25f : 1.0f;
            cell = cell < least ? least : o->max_cell > 0 && cell > o->max_cell ? o->max_cell : cell;
        }
        g->cell = cell;
        g->map_w = (int)lroundf(cell * g->Tk);
        g->map_h = (int)lroundf(cell * g->Tq);
    }
    int grid_w = g->H * (g->map_w + g->mark_w) + (g->H > 0 ? (g->H - 1) * g->gap : 0);
    int grid_h = g->L * (g->map_h + g->label_h) + (g->L > 0 ? (g->L - 1) * g->gap : 0);
    int right = colorbar(&g->cb, &c, g->x0 + grid_w + S(&c, 14), g->y0, grid_h, ms->kind,
                         ok && maps_masked(ms), tick_w, o->caption);
    if (!o->area_w) {
        int room = right - pad > S(&c, 360) - 2 * pad ? right - pad : S(&c, 360) - 2 * pad;
        int dy = wrap_facts(&g->t, &c, room);
        g->y0 += dy;
        g->cb.bar.y += dy;
        for (int k = 0; k < g->cb.n_ticks; k++)
            g->cb.tick_y[k] += dy;
        g->cb.caption_cy += dy;
        g->cb.legend.y += dy;
        g->kv_y += g->kv_h ? dy : 0;
    }
    int bottom = colorbar_bottom(&g->cb);
    bottom = g->y0 + grid_h > bottom ? g->y0 + grid_h : bottom;
    g->w = finish_titles(&g->t, &c, o, right, pad);
    g->h = o->area_w ? o->area_y + o->area_h : bottom + lh(&c, g->cb.tick_px) / 2 + 1 + pad;
}

FigRect figure_grid_map_rect(const FigureGrid *g, int l, int h)
{
    if (g->sorted && l >= 0 && h >= 0 && l < g->L && h < g->H) { /* the map's slot */
        int p = g->slot[l * g->H + h];
        l = p / g->H;
        h = p % g->H;
    }
    FigRect r = {g->x0 + h * (g->map_w + g->mark_w + g->gap),
                 g->y0 + g->label_h + l * (g->map_h + g->label_h + g->gap), g->map_w, g->map_h};
    return r;
}

int figure_grid_kv_bracket(const FigureGrid *g, int k, const TextMeasure *tm, FigKvBracket *b)
{
    int G = g->kv_group;
    if (G < 2 || !g->kv_h || k < 0 || k * G >= g->H)
        return 0;
    int h0 = k * G, h1 = h0 + G - 1 < g->H ? h0 + G - 1 : g->H - 1;
    FigRect a = figure_grid_map_rect(g, 0, h0), e = figure_grid_map_rect(g, 0, h1);
    int px = g->mark_px, line_h = tm->line_height(tm->ctx, px);
    memset(b, 0, sizeof *b);
    b->t = px / 4 > 2 ? px / 4 : 2; /* a line read from the back of the room */
    b->x0 = a.x;
    b->x1 = e.x + e.w;
    b->y = g->kv_y + line_h / 2 - b->t / 2;
    b->tick_h = g->kv_y + g->kv_h - b->t - b->y;
    b->label_cx = (b->x0 + b->x1) / 2;
    b->label_y = g->kv_y;
    b->gap_x0 = b->gap_x1 = b->label_cx;
    /* "KV 3" where it fits between the ticks with some line each side,
       else "3", else the bracket alone */
    int pad = px / 2, room = b->x1 - b->x0 - 4 * b->t;
    snprintf(b->label, sizeof b->label, "KV %d", k + 1);
    int w = tm->width(tm->ctx, px, b->label);
    if (w + 2 * pad > room) {
        snprintf(b->label, sizeof b->label, "%d", k + 1);
        w = tm->width(tm->ctx, px, b->label);
    }
    if (w + 2 * pad > room) {
        b->label[0] = '\0';
        return 1;
    }
    b->gap_x0 = b->label_cx - w / 2 - pad;
    b->gap_x1 = b->label_cx + (w + 1) / 2 + pad;
    return 1;
}

int figure_grid_hit(const FigureGrid *g, int x, int y, int *l, int *h)
{
    for (int a = 0; a < g->L; a++)
        for (int b = 0; b < g->H; b++) {
            FigRect r = figure_grid_map_rect(g, a, b);
            if (x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h) {
                *l = a;
                *h = b;
                return 1;
            }
        }
    return 0;
}

int figure_grid_cell_x(const FigureGrid *g, int h, int j)
{
    return figure_grid_map_rect(g, 0, h).x + (int)lroundf(j * g->cell);
}

int figure_grid_cell_y(const FigureGrid *g, int l, int i)
{
    return figure_grid_map_rect(g, l, 0).y + (int)lroundf(i * g->cell);
}

int figure_cell_x(const Figure *f, int j)
{
    return f->grid.x + (int)lroundf((j - f->col0) * f->cell);
}

int figure_cell_y(const Figure *f, int i)
{
    return f->grid.y + (int)lroundf((i - f->row0) * f->cell);
}

/* Thinned labels give way to the selected one: those closer to it than one
 * and a half label spacings are left out. */
int figure_row_label_shown(const Figure *f, int i, int query)
{
    int gap = f->every_r + f->every_r / 2;
    return i == query || (!(i % f->every_r) && (query < 0 || abs(i - query) >= gap));
}

int figure_col_label_shown(const Figure *f, int j, int key)
{
    int gap = f->every_c + f->every_c / 2;
    return j == key || (!(j % f->every_c) && (key < 0 || abs(j - key) >= gap));
}

int figure_hit_cell(const Figure *f, int x, int y, int *i, int *j)
{
    if (f->cell <= 0 || x < f->grid.x || y < f->grid.y || x >= f->grid.x + f->grid.w ||
        y >= f->grid.y + f->grid.h)
        return 0;
    int jj = f->col0 + (int)((x - f->grid.x) / f->cell);
    int ii = f->row0 + (int)((y - f->grid.y) / f->cell);
    if (ii >= f->row0 + f->rows || jj >= f->col0 + f->cols)
        return 0;
    *i = ii;
    *j = jj;
    return 1;
}
