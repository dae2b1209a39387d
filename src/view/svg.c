/* The SVG back end of the figure layout (figure.h): the same title, facts,
 * axis titles, labels, cells, values, colour bar, ticks and legend as the
 * PNG, at the same places (the document's width and height are the PNG's
 * pixels; the viewBox is in the same units). Each cell is a <rect
 * class="cell"> with data-i, data-j and data-value (%.9g); masked cells are
 * "cell masked". Every string is sanitized (valid UTF-8, no control
 * characters) and XML-escaped. Plain C, no SDL. */
#include "attnviz/svg.h"

#include <math.h>
#include <string.h>

#include "attnviz/theme.h"
#include "attnviz/tokenizer.h"

#define FONT "DejaVu Sans, Verdana, sans-serif"
/* A text with emoji or pictographs (U+1F000 on, which DejaVu Sans lacks)
 * names the fallback the window draws them with (Debian's fonts-symbola);
 * texts without keep the document's font, byte for byte as before. */
#define FONT_SYMBOLS "DejaVu Sans, Symbola, Verdana, sans-serif"

/* Copy s (len bytes) into out (cap bytes) as valid UTF-8 that XML accepts:
 * invalid sequences and U+FFFE/U+FFFF become U+FFFD, C0/C1 controls and DEL
 * are dropped (with spaces, white space becomes one space). Cut with "…" so
 * the estimated width at font size px stays within max_px. Returns out. */
static char *sanitize(const char *s, size_t len, int spaces, double px,
                      double max_px, char *out, size_t cap)
{
    static const char fffd[] = "\xEF\xBF\xBD", ell[] = "\xE2\x80\xA6";
    const unsigned char *u = (const unsigned char *)s;
    double w = 0.0, ell_w = figure_dejavu_em(0x2026) * px;
    size_t o = 0, cut = 0;
    int space = 0;
    if (cap < 8) {
        if (cap)
            out[0] = '\0';
        return out;
    }
    for (size_t i = 0; i < len;) {
        unsigned cp;
        int k = tok_utf8_decode(u + i, len - i, &cp);
        const char *bytes = s + i;
        if (k == 0) {
            bytes = fffd;
            i += 1;
            k = 3;
        } else {
            i += (size_t)k;
            if (cp == 0xFFFE || cp == 0xFFFF) {
                cp = 0xFFFD;
                bytes = fffd;
                k = 3;
            }
        }
        if (spaces && (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r')) {
            space = o > 0;
            continue;
        }
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
            continue;
        if (space) {
            space = 0;
            if (w + figure_dejavu_em(' ') * px > max_px || o + 1 + 3 >= cap)
                goto truncated;
            out[o++] = ' ';
            w += figure_dejavu_em(' ') * px;
            if (w <= max_px - ell_w)
                cut = o;
        }
        double cw = figure_dejavu_em(cp) * px;
        if (w + cw > max_px || o + (size_t)k + 3 >= cap)
            goto truncated;
        memcpy(out + o, bytes, (size_t)k);
        o += (size_t)k;
        w += cw;
        if (w <= max_px - ell_w)
            cut = o;
    }
    out[o] = '\0';
    return out;
truncated:
    while (cut > 0 && out[cut - 1] == ' ')
        cut--;
    memcpy(out + cut, ell, 3);
    out[cut + 3] = '\0';
    return out;
}

/* Write an already sanitized string with & < > " ' escaped. */
static void put_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void hexc(Rgb c, char *out)
{
    snprintf(out, 8, "#%02x%02x%02x", c.r, c.g, c.b);
}

/* The attribute that names the symbols' font for s (sanitized), or "". */
static const char *font_for(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned cp;
        int k = tok_utf8_decode(u + i, n - i, &cp);
        if (k && cp >= 0x1F000 && cp <= 0x1FFFF)
            return " font-family=\"" FONT_SYMBOLS "\"";
        i += (size_t)(k ? k : 1);
    }
    return "";
}

/* Text with its top-left (anchor "start"), centre ("middle") or right edge
 * ("end") at x and its top at y, like the SDL back end's text_draw. */
static void text_at(FILE *f, const char *cls, int px, const char *fill, const char *anchor,
                    double x, double top, const char *s, size_t max_bytes, double max_px)
{
    char buf[1024];
    sanitize(s, strlen(s) < max_bytes ? strlen(s) : max_bytes, 1, px, max_px, buf, sizeof buf);
    fprintf(f, "<text%s%s%s x=\"%g\" y=\"%g\" font-size=\"%d\"%s fill=\"%s\" text-anchor=\"%s\">",
            cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "", x, top + figure_ascent(px), px,
            font_for(buf), fill, anchor);
    put_esc(f, buf);
    fputs("</text>\n", f);
}

/* Text turned by angle degrees (negative: counter-clockwise) about its
 * top-left corner (x, top). */
static void text_turned(FILE *f, int px, const char *fill, double x, double top, double angle,
                        const char *s, double max_px)
{
    char buf[512];
    sanitize(s, strlen(s), 0, px, max_px, buf, sizeof buf);
    fprintf(f, "<text x=\"%g\" y=\"%g\" font-size=\"%d\"%s fill=\"%s\" "
               "transform=\"rotate(%g %g %g)\">", x, top + figure_ascent(px), px, font_for(buf), fill, angle,
            x, top);
    put_esc(f, buf);
    fputs("</text>\n", f);
}

static void header(FILE *f, int W, int H, const FigTitles *t, const ColorScale *cs, AttnMapKind kind,
                   const AttnTheme *th)
{
    char bg[8];
    hexc(th->bg, bg);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"" FONT "\">\n",
            W, H, W, H);
    char title[600];
    sanitize(t->title, strlen(t->title), 1, 16, 1e9, title, sizeof title);
    fputs("<title>", f);
    put_esc(f, title);
    fprintf(f, "%s%s</title>\n", title[0] ? " \xE2\x80\x94 " : "", attn_map_kind_name(kind));
    fputs("<defs><linearGradient id=\"attnviz-bar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n", f);
    for (int k = 0; k <= 32; k++) {
        char c[8];
        hexc(colormap_rgb(cs->id, k / 32.0f), c);
        fprintf(f, "<stop offset=\"%g\" stop-color=\"%s\"/>\n", k / 32.0, c);
    }
    fputs("</linearGradient></defs>\n", f);
    fprintf(f, "<rect class=\"background\" width=\"100%%\" height=\"100%%\" fill=\"%s\"/>\n", bg);
}

static void titles(FILE *f, const FigTitles *t, const AttnTheme *th)
{
    char fg[8], dim[8];
    hexc(th->text, fg);
    hexc(th->dim, dim);
    if (t->title_box.h)
        text_at(f, "title", t->title_px, fg, "start", t->title_box.x, t->title_box.y, t->title,
                sizeof t->title, 1e9);
    for (int k = 0; k < t->n_facts; k++)
        text_at(f, "facts", t->facts_px, dim, "start", t->facts_box[k].x, t->facts_box[k].y, t->facts[k],
                sizeof t->facts[k], 1e9);
}

static void axis_titles(FILE *f, const Figure *fig, const AttnTheme *th)
{
    char dim[8];
    hexc(th->dim, dim);
    if (fig->axis_px && fig->Tq && fig->Tk) {
        fputs("<g class=\"axis-titles\">\n", f);
        text_at(f, NULL, fig->axis_px, dim, "middle", fig->keys_cx, fig->keys_y, "keys", 8, 1e9);
        /* "queries" turned 90° counter-clockwise, centred on the rows */
        double w = figure_measure_dejavu.width(NULL, fig->axis_px, "queries");
        text_turned(f, fig->axis_px, dim, fig->queries_x, fig->queries_cy + w / 2, -90, "queries", 1e9);
        fputs("</g>\n", f);
    }
}

static void labels(FILE *f, const Figure *fig, const AttnMap *map, const AttnTheme *th, int query,
                   int key)
{
    char fg[8], ac[8];
    hexc(th->text, fg);
    hexc(th->accent, ac);
    int px = fig->label_px, lh = fig->label_lh;
    fputs("<g class=\"row-labels\">\n", f);
    for (int i = fig->row0; i < fig->row0 + fig->rows; i++)
        if (figure_row_label_shown(fig, i, query))
            text_at(f, NULL, px, i == query ? ac : fg, "end", fig->grid.x - px / 2.0,
                    figure_cell_y(fig, i) + (int)(fig->cell / 2) - lh / 2, map->q_labels[i], 4096,
                    fig->label_w);
    fputs("</g>\n<g class=\"key-labels\">\n", f);
    for (int j = fig->col0; j < fig->col0 + fig->cols; j++) {
        if (!figure_col_label_shown(fig, j, key))
            continue;
        int cx = figure_cell_x(fig, j) + (int)(fig->cell / 2);
        if (fig->rotate == 2)
            text_turned(f, px, j == key ? ac : fg, cx - lh / 2.0, fig->grid.y - px / 3.0, -90,
                        map->k_labels[j], fig->key_w);
        else if (fig->rotate)
            text_turned(f, px, j == key ? ac : fg, cx - lh / 3, fig->grid.y - px / 2.0 - lh, -45,
                        map->k_labels[j],
                        fig->label_w && fig->label_w * 1.5 < fig->key_w ? fig->label_w * 1.5 : fig->key_w);
        else
            text_at(f, NULL, px, j == key ? ac : fg, "middle", cx, fig->grid.y - lh - px / 7.0,
                    map->k_labels[j], 4096, fig->cell);
    }
    fputs("</g>\n", f);
}

static void cells(FILE *f, const Figure *fig, const AttnMap *map, const AttnTheme *th)
{
    char mask[8], line[8];
    hexc(th->mask, mask);
    hexc(th->border, line);
    fputs("<g class=\"matrix\" shape-rendering=\"crispEdges\">\n", f);
    for (int i = fig->row0; i < fig->row0 + fig->rows; i++) {
        int y = figure_cell_y(fig, i), h = figure_cell_y(fig, i + 1) - y;
        ColorScale rs = colormap_row_scale(&fig->cb.cs, map, i);
        for (int j = fig->col0; j < fig->col0 + fig->cols; j++) {
            int x = figure_cell_x(fig, j), w = figure_cell_x(fig, j + 1) - x;
            float v = attn_map_at(map, i, j);
            int masked = attn_map_masked(map, i, j);
            char c[8];
            hexc(colormap_scale_rgb(&rs, v), c);
            fprintf(f, "<rect class=\"cell%s\" data-i=\"%d\" data-j=\"%d\" data-value=\"%.9g\" "
                       "x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
                    masked ? " masked" : "", i, j, (double)v, x, y, w, h, masked ? mask : c);
        }
    }
    fputs("</g>\n", f);
    /* masked cells: a hatch line across each, when cells are large enough */
    if (fig->cell >= 12 * (fig->label_px / 14.0)) {
        double in = fig->cell * 0.22, sw = fmax(1.0, fig->label_px / 14.0 * 1.5);
        fprintf(f, "<g class=\"hatch\" stroke=\"%s\" stroke-width=\"%g\">\n", line, sw);
        for (int i = fig->row0; i < fig->row0 + fig->rows; i++)
            for (int j = fig->col0; j < fig->col0 + fig->cols; j++)
                if (attn_map_masked(map, i, j)) {
                    double x0 = figure_cell_x(fig, j), y0 = figure_cell_y(fig, i), c = fig->cell;
                    fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>\n", x0 + in,
                            y0 + c - in, x0 + c - in, y0 + in);
                }
        fputs("</g>\n", f);
    }
}

static void values(FILE *f, const Figure *fig, const AttnMap *map)
{
    if (!fig->value_px)
        return;
    int lh = figure_measure_dejavu.line_height(NULL, fig->value_px);
    fputs("<g class=\"values\">\n", f);
    for (int i = fig->row0; i < fig->row0 + fig->rows; i++) {
        ColorScale rs = colormap_row_scale(&fig->cb.cs, map, i);
        for (int j = fig->col0; j < fig->col0 + fig->cols; j++) {
            if (attn_map_masked(map, i, j))
                continue;
            float v = attn_map_at(map, i, j);
            char num[32], c[8];
            colormap_cell_label(&fig->cb.cs, v, num, sizeof num);
            hexc(colormap_text_on(colormap_scale_rgb(&rs, v)), c);
            text_at(f, NULL, fig->value_px, c, "middle", figure_cell_x(fig, j) + (int)(fig->cell / 2),
                    figure_cell_y(fig, i) + (int)(fig->cell / 2) - lh / 2, num, 32, 1e9);
        }
    }
    fputs("</g>\n", f);
}

static void outlines(FILE *f, const Figure *fig, const AttnTheme *th, int query, int key)
{
    char ac[8], fg[8];
    hexc(th->accent, ac);
    hexc(th->text, fg);
    int s1 = fig->line_w / 3 > 0 ? fig->line_w / 3 : 1;
    if (query >= fig->row0 && query < fig->row0 + fig->rows) {
        double t = fig->line_w;
        double x = fig->grid.x - s1, y = figure_cell_y(fig, query) - s1;
        double w = fig->grid.w + 2 * s1, h = (int)lroundf(fig->cell) + 2 * s1;
        fprintf(f, "<rect class=\"query\" data-i=\"%d\" x=\"%g\" y=\"%g\" width=\"%g\" "
                   "height=\"%g\" fill=\"none\" stroke=\"%s\" stroke-width=\"%g\"/>\n",
                query, x + t / 2, y + t / 2, w - t, h - t, ac, t);
        if (key >= fig->col0 && key < fig->col0 + fig->cols) {
            double k = 2 * s1, c = (int)lroundf(fig->cell);
            fprintf(f, "<rect class=\"key\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
                       "fill=\"none\" stroke=\"%s\" stroke-width=\"%g\"/>\n",
                    figure_cell_x(fig, key) + k / 2, figure_cell_y(fig, query) + k / 2, c - k, c - k,
                    fg, k);
        }
    }
}

static void colorbar(FILE *f, const FigColorbar *cb, const AttnTheme *th)
{
    char dim[8], border[8], mask[8];
    hexc(th->dim, dim);
    hexc(th->border, border);
    hexc(th->mask, mask);
    const FigRect *b = &cb->bar;
    int s1 = cb->line_w;
    fprintf(f, "<g class=\"colorbar\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
               "fill=\"url(#attnviz-bar)\" stroke=\"%s\" stroke-width=\"1\"/>\n",
            b->x, b->y, b->w, b->h, border);
    int tlh = figure_measure_dejavu.line_height(NULL, cb->tick_px);
    for (int k = 0; k < cb->n_ticks; k++) {
        int y = cb->tick_y[k];
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%d\"/>\n",
                b->x + b->w, y, b->x + b->w + 4 * s1, y, dim, s1);
        text_at(f, NULL, cb->tick_px, dim, "start", cb->tick_x, y - tlh / 2, cb->ticks[k], 32, 1e9);
    }
    double cw = figure_measure_dejavu.width(NULL, cb->tick_px, cb->caption);
    text_turned(f, cb->tick_px, dim, cb->caption_x, cb->caption_cy + cw / 2, -90, cb->caption, 1e9);
    if (cb->legend.w) {
        const FigRect *l = &cb->legend;
        fprintf(f, "<rect class=\"legend masked\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "fill=\"%s\" stroke=\"%s\" stroke-width=\"1\"/>\n",
                l->x, l->y, l->w, l->h, mask, border);
        text_at(f, NULL, cb->tick_px, dim, "start", cb->tick_x, l->y + l->h / 2 - tlh / 2, "masked", 8, 1e9);
    }
    fputs("</g>\n", f);
}

int svg_write_figure(FILE *f, const Figure *fig, const AttnMap *map, int dark, int query, int key)
{
    if (!f || !fig || !map)
        return -ATTN_E_IO;
    const AttnTheme *th = theme_get(dark);
    header(f, fig->w, fig->h, &fig->t, &fig->cb.cs, map->kind, th);
    titles(f, &fig->t, th);
    if (fig->Tq && fig->Tk && map->v) {
        axis_titles(f, fig, th);
        labels(f, fig, map, th, query, key);
        cells(f, fig, map, th);
        values(f, fig, map);
        outlines(f, fig, th, query, key);
        colorbar(f, &fig->cb, th);
    } else {
        char dim[8];
        hexc(th->dim, dim);
        text_at(f, NULL, fig->t.facts_px ? fig->t.facts_px : 12, dim, "start", fig->grid.x, fig->grid.y,
                "no tokens", 16, 1e9);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -ATTN_E_IO : 0;
}

/* One map of a grid: a <g class="map"> of its cells. */
static void grid_map(FILE *f, const FigureGrid *g, const AttnMap *m, int l, int h, const char *mask)
{
    fprintf(f, "<g class=\"map\" data-layer=\"%d\" data-head=\"%d\" shape-rendering=\"crispEdges\">\n",
            l, h);
    for (int i = 0; i < m->Tq; i++) {
        int y = figure_grid_cell_y(g, l, i), y1 = figure_grid_cell_y(g, l, i + 1);
        ColorScale rs = colormap_row_scale(&g->cb.cs, m, i);
        for (int j = 0; j < m->Tk; j++) {
            int x = figure_grid_cell_x(g, h, j), x1 = figure_grid_cell_x(g, h, j + 1);
            float v = attn_map_at(m, i, j);
            int masked = attn_map_masked(m, i, j);
            char c[8];
            hexc(colormap_scale_rgb(&rs, v), c);
            fprintf(f, "<rect class=\"cell%s\" data-i=\"%d\" data-j=\"%d\" data-value=\"%.9g\" "
                       "x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
                    masked ? " masked" : "", i, j, (double)v, x, y, x1 - x, y1 - y, masked ? mask : c);
        }
    }
    fputs("</g>\n", f);
}

static void rect(FILE *f, const char *cls, int x, int y, int w, int h, const char *fill)
{
    if (w > 0 && h > 0)
        fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", cls, x, y,
                w, h, fill);
}

/* The key-value brackets (g->kv_group), as heads.c's draw_kv_groups. */
static void kv_brackets(FILE *f, const FigureGrid *g, const AttnTheme *th)
{
    char fg[8];
    hexc(th->text, fg);
    FigKvBracket b;
    for (int k = 0; figure_grid_kv_bracket(g, k, &figure_measure_dejavu, &b); k++) {
        fprintf(f, "<g class=\"kv\" data-kv=\"%d\">\n", k);
        rect(f, "kv-line", b.x0, b.y, b.gap_x0 - b.x0, b.t, fg);
        rect(f, "kv-line", b.gap_x1, b.y, b.x1 - b.gap_x1, b.t, fg);
        rect(f, "kv-tick", b.x0, b.y, b.t, b.tick_h + b.t, fg);
        rect(f, "kv-tick", b.x1 - b.t, b.y, b.t, b.tick_h + b.t, fg);
        if (b.label[0])
            text_at(f, "kv-label", g->mark_px, fg, "middle", b.label_cx, b.label_y, b.label, 16, 1e9);
        fputs("</g>\n", f);
    }
}

/* Each map's mark (a bar filled to its score, the number beside it when
 * g->numbers) and a sorted grid's "L2 H2", as heads.c's draw_grid_marks. */
static void grid_marks(FILE *f, const FigureGrid *g, const SvgGridMarks *mk, const AttnTheme *th, int dark)
{
    char track[8], ac[8], fg[8], dim[8];
    hexc(th->panel2, track);
    hexc(th->accent, ac);
    hexc(th->text, fg);
    hexc(th->dim, dim);
    int lh = figure_measure_dejavu.line_height(NULL, g->mark_px);
    double full = mk->full > 0 ? mk->full : 1.0;
    fputs("<g class=\"marks\">\n", f);
    for (int l = 0; l < g->L; l++)
        for (int h = 0; h < g->H; h++) {
            FigRect m = figure_grid_map_rect(g, l, h);
            double x = mk->score[l * g->H + h];
            int tx = m.x + m.w + g->bar_x;
            fprintf(f, "<g class=\"mark\" data-layer=\"%d\" data-head=\"%d\" data-score=\"%.9g\">\n", l, h,
                    isnan(x) ? 0.0 : x);
            rect(f, "track", tx, m.y, g->bar_w, m.h, track);
            if (!isnan(x)) {
                double fr = x / full;
                fr = fr < 0 ? 0 : fr > 1 ? 1 : fr;
                int fh = (int)lround(fr * m.h);
                rect(f, "bar", tx, m.y + m.h - fh, g->bar_w, fh, ac);
            }
            if (g->numbers) {
                char buf[32];
                if (isnan(x))
                    snprintf(buf, sizeof buf, "\xE2\x80\x93");
                else
                    snprintf(buf, sizeof buf, fabs(x) >= 9.95 ? "%.1f" : "%.2f", x);
                int ty = m.h >= lh ? m.y + m.h - lh : m.y + m.h / 2 - lh / 2;
                text_at(f, "score", g->mark_px, isnan(x) ? dim : fg, "start", tx + g->bar_w + g->bar_w / 2, ty,
                        buf, 32, 1e9);
            }
            if (g->sorted) { /* its layer and head, the head in its colour */
                char lb[24], hb[16], hc[8];
                snprintf(lb, sizeof lb, "L%d ", l + 1);
                snprintf(hb, sizeof hb, "H%d", h + 1);
                hexc(theme_head_color(h, dark), hc);
                int y = m.y - g->label_h - (g->gap / 3 > 1 ? g->gap / 3 : 1);
                text_at(f, "sorted", g->mark_px, dim, "start", m.x, y, lb, 24, 1e9);
                text_at(f, "sorted", g->mark_px, hc, "start",
                        m.x + figure_measure_dejavu.width(NULL, g->mark_px, lb), y, hb, 16, 1e9);
            }
            fputs("</g>\n", f);
        }
    fputs("</g>\n", f);
}

int svg_write_grid(FILE *f, const FigureGrid *g, const AttnMaps *ms, int dark)
{
    return svg_write_grid_marked(f, g, ms, dark, NULL);
}

int svg_write_grid_marked(FILE *f, const FigureGrid *g, const AttnMaps *ms, int dark, const SvgGridMarks *mk)
{
    if (!f || !g || !ms)
        return -ATTN_E_IO;
    const AttnTheme *th = theme_get(dark);
    int marked = mk && mk->score;
    char dim[8], ac[8], mask[8];
    hexc(th->dim, dim);
    hexc(th->accent, ac);
    hexc(th->mask, mask);
    header(f, g->w, g->h, &g->t, &g->cb.cs, ms->kind, th);
    titles(f, &g->t, th);
    kv_brackets(f, g, th);
    int lh = figure_measure_dejavu.line_height(NULL, g->layer_px);
    fputs("<g class=\"headers\">\n", f);
    for (int h = 0; h < g->H && !g->sorted; h++) { /* sorted: each map has its own label */
        char buf[32], hc[8];
        snprintf(buf, sizeof buf, g->map_w >= 6 * g->head_px ? "head %d" : "%d", h + 1);
        FigRect r = figure_grid_map_rect(g, 0, h);
        if (marked) /* the line diagram's colour of the head */
            hexc(theme_head_color(h, dark), hc);
        text_at(f, NULL, g->head_px, marked ? hc : h == g->sel_h ? ac : dim, "middle", r.x + r.w / 2,
                r.y - g->label_h - lh - g->gap / 2, buf, 32, 1e9);
    }
    for (int l = 0; l < g->L && g->L > 1 && !g->sorted; l++) {
        char buf[32];
        snprintf(buf, sizeof buf, "layer %d", l + 1);
        FigRect r = figure_grid_map_rect(g, l, 0);
        text_at(f, NULL, g->layer_px, l == g->sel_l ? ac : dim, "end", r.x - g->gap, r.y + r.h / 2 - lh / 2,
                buf, 32, 1e9);
    }
    fputs("</g>\n", f);
    for (int l = 0; l < g->L; l++)
        for (int h = 0; h < g->H; h++) {
            AttnMap m = attn_maps_get(ms, l, h);
            grid_map(f, g, &m, l, h, mask);
        }
    if (g->sel_l >= 0 && g->sel_l < g->L && g->sel_h >= 0 && g->sel_h < g->H) {
        FigRect r = figure_grid_map_rect(g, g->sel_l, g->sel_h);
        int t = g->gap / 3 > 1 ? g->gap / 3 : 1;
        fprintf(f, "<rect class=\"selected\" x=\"%g\" y=\"%g\" width=\"%d\" height=\"%d\" fill=\"none\" "
                   "stroke=\"%s\" stroke-width=\"%d\"/>\n", r.x - t / 2.0, r.y - t / 2.0, r.w + t, r.h + t, ac, t);
    }
    if (marked)
        grid_marks(f, g, mk, th, dark);
    colorbar(f, &g->cb, th);
    fputs("</svg>\n", f);
    return ferror(f) ? -ATTN_E_IO : 0;
}
