/* The SVG heatmap writer. Layout, top to bottom: the sentence, a line of
 * facts (matrix, mode, heads, d/dk, scaling, mask, posenc, tau), the key
 * axis title and key labels, then the matrix with the query labels on its
 * left and the colour bar on its right. SVG cannot measure text, so label
 * widths are estimated from DejaVu Sans advance widths; every string is
 * sanitized (valid UTF-8, no control characters) and XML-escaped.
 * Colours come from colormap_scale_for / colormap_scale_rgb, as in the PNG. */
#include "attnviz/svg.h"

#include <math.h>
#include <string.h>

#include "attnviz/tokenizer.h"

#define MARGIN 24.0
#define CELL_MAX 40
#define CELL_MIN 4
#define MATRIX_TARGET 720   /* px: the matrix side cells shrink towards */
#define NUMBERS_MIN_CELL 28 /* print values in cells this size and up */
#define LABEL_MAX_PX 140.0  /* longest token label before it is cut */
#define TITLE_PX 16.0
#define BOLD 1.14 /* DejaVu Sans Bold is this much wider */
#define FACTS_PX 12.0
#define AXIS_PX 11.0
#define TICK_PX 11.0
#define BAR_W 14.0
#define BAR_MIN_H 150.0
#define FONT "DejaVu Sans, Verdana, sans-serif"
#define SQRT_HALF 0.70710678118654752
#define R1(v) (round((double)(v) * 10.0) / 10.0)

typedef struct Theme {
    const char *bg, *fg, *muted, *frame, *mask_bg, *mask_line;
} Theme;

static const Theme light = {"#ffffff", "#1a1a1a", "#5f6368", "#9aa0a6",
                            "#ececec", "#c2c2c2"};
static const Theme dark = {"#14161a", "#e8eaed", "#9aa0a6", "#5f6368",
                           "#3b3f46", "#5d626b"};

int svg_cell_size(int T)
{
    if (T < 1)
        return CELL_MAX;
    int c = MATRIX_TARGET / T;
    return c > CELL_MAX ? CELL_MAX : c < CELL_MIN ? CELL_MIN : c;
}

/* ---- text: widths, sanitizing, escaping ---------------------------------- */

/* DejaVu Sans advance widths of ' '..'~' in thousandths of an em. */
static const unsigned short ascii_w[95] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318,
    337, 636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838,
    838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557,
    863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390,
    337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278,
    579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,
    525, 636, 337, 636, 838};

/* Estimated advance of one code point, in em. */
static double cp_em(unsigned cp)
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

/* Estimated width in px of a valid UTF-8 string at font size px. */
static double text_w(const char *s, double px)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    double em = 0.0;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        int k = tok_utf8_decode(u + i, n - i, &cp);
        em += cp_em(cp);
        i += (size_t)(k ? k : 1);
    }
    return em * px;
}

/* Copy s (len bytes) into out (cap bytes) as valid UTF-8 that XML accepts:
 * invalid sequences and U+FFFE/U+FFFF become U+FFFD, C0/C1 controls and DEL
 * are dropped (with spaces, white space becomes one space). Cut with "…" so
 * the estimated width at font size px stays within max_px. Returns out. */
static char *sanitize(const char *s, size_t len, int spaces, double px,
                      double max_px, char *out, size_t cap)
{
    static const char fffd[] = "\xEF\xBF\xBD", ell[] = "\xE2\x80\xA6";
    const unsigned char *u = (const unsigned char *)s;
    double w = 0.0, ell_w = cp_em(0x2026) * px;
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
            if (w + cp_em(' ') * px > max_px || o + 1 + 3 >= cap)
                goto truncated;
            out[o++] = ' ';
            w += cp_em(' ') * px;
            if (w <= max_px - ell_w)
                cut = o;
        }
        double cw = cp_em(cp) * px;
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

/* ---- the document --------------------------------------------------------- */

typedef struct Layout {
    int T, c;            /* tokens, cell side */
    int step;            /* label every step-th token */
    double lab_px;       /* label font size */
    double num_px;       /* value font size, 0 = no values */
    int rotate;          /* key labels at -45 degrees */
    double ox, oy;       /* matrix top left */
    double side;         /* T*c */
    double bar_x, bar_h; /* colour bar */
    double W, H;
} Layout;

static const char *matrix_name(ModelMatrix w)
{
    return w == MODEL_SCORES ? "raw scores Q\xC2\xB7K\xE1\xB5\x80"
           : w == MODEL_LOGITS ? "logits" : "attention weights";
}

static const char *bar_caption(ModelMatrix w)
{
    return w == MODEL_SCORES ? "score" : w == MODEL_LOGITS ? "logit" : "weight";
}

/* The facts line: the same facts as print.c's matrix title. */
static void facts(const Model *m, const SvgOptions *o, int head, char *buf,
                  size_t n)
{
    const AttnConfig *c = &m->cfg;
    int h = m->res.h > 0 ? m->res.h : 1;
    char hb[48];
    if (h == 1)
        snprintf(hb, sizeof hb, "1 head");
    else if (head < 0)
        snprintf(hb, sizeof hb, "average of %d heads", h);
    else
        snprintf(hb, sizeof hb, "head %d of %d", head + 1, h);
    /* "·" U+00B7, "√" U+221A, "τ" U+03C4 */
    snprintf(buf, n,
             "%s \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 d=%d, dk=%d \xC2\xB7 %s "
             "\xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 \xCF\x84=%g",
             matrix_name(o->matrix),
             c->mode == ATTN_MODE_BASIC ? "basic" : "learned", hb, m->d,
             m->res.dk, c->scale ? "scaled 1/\xE2\x88\x9A" "dk" : "unscaled",
             c->causal ? "causal mask" : "no mask",
             c->posenc ? "posenc" : "no posenc", (double)c->temperature);
}

int svg_write_heatmap(FILE *f, const Model *m, const SvgOptions *o)
{
    if (!f || !m || !o)
        return -ATTN_E_IO;
    const Theme *th = o->dark ? &dark : &light;
    /* a model whose result is stale (text set, not recomputed) has nothing
     * consistent to draw */
    int T = m->T > 0 && m->res.Tq == m->T && m->res.Tk == m->T ? m->T : 0;
    int h = m->res.h > 0 ? m->res.h : 1;
    int head = o->head >= 0 && o->head < h ? o->head : MODEL_HEAD_AVG;
    const float *M = T ? model_matrix(m, o->matrix, head) : NULL;
    if (!M)
        T = 0;
    int causal = m->res.causal;
    int diverging = o->matrix != MODEL_WEIGHTS;
    ColorScale sc = colormap_scale_for(M, T, T, causal, diverging, o->cmap);
    int query = o->query >= 0 && o->query < T ? o->query : -1;

    /* ---- layout -------------------------------------------------------- */
    Layout L;
    memset(&L, 0, sizeof L);
    L.T = T;
    L.c = svg_cell_size(T);
    int c = L.c;
    L.step = c >= 11 ? 1 : (int)ceil(11.0 / c);
    L.lab_px = L.step > 1 ? 9.0 : fmin(13.0, fmax(8.0, c * 0.75));
    L.side = (double)T * c;

    char lab[256];
    double row_w = 0.0, key_w = 0.0;
    for (int i = 0; i < T; i += L.step) {
        const char *t = tok_text(&m->toks, i);
        double w = text_w(sanitize(t, strlen(t), 0, L.lab_px, LABEL_MAX_PX, lab,
                                   sizeof lab), L.lab_px);
        if (w > row_w)
            row_w = w;
    }
    key_w = row_w;
    L.rotate = key_w > L.step * c - 4.0;

    /* values printed in the cells: size for the longest one */
    if (c >= NUMBERS_MIN_CELL && T) {
        size_t longest = 1;
        for (size_t k = 0; k < (size_t)T * T; k++) {
            int i = (int)(k / T), j = (int)(k % T);
            if (attn_masked(&m->res, i, j))
                continue;
            char v[32];
            snprintf(v, sizeof v, "%.2f", (double)M[k]);
            if (strlen(v) > longest)
                longest = strlen(v);
        }
        double px = fmin(c * 0.3, (c - 5.0) / (0.64 * (double)longest));
        L.num_px = px >= 6.0 ? R1(px) : 0.0;
    }

    double title_base = MARGIN + TITLE_PX * 0.8;
    double facts_base = title_base + FACTS_PX + 9.0;
    double key_axis_base = facts_base + 14.0 + AXIS_PX;
    double key_h = L.rotate ? (key_w + L.lab_px) * SQRT_HALF + 10.0
                            : L.lab_px + 8.0;
    /* whole pixels, so cell edges fall on the pixel grid */
    L.oy = ceil(key_axis_base + 6.0 + key_h);
    L.ox = ceil(MARGIN + AXIS_PX + 10.0 + row_w + 8.0);

    /* right edge: the matrix, rotated key labels, the colour bar */
    double right = L.ox + L.side;
    if (L.rotate && T)
        right = fmax(right, L.ox + (T - 1) * c + c / 2.0 +
                                (key_w + L.lab_px) * SQRT_HALF);
    else if (T)
        right = fmax(right, L.ox + (T - 1) * c + c / 2.0 + key_w / 2.0);
    L.bar_x = L.ox + L.side + 22.0;
    L.bar_h = fmax(L.side, BAR_MIN_H);
    char ticks[5][32];
    double tick_w = 0.0;
    for (int k = 0; k < 5; k++) {
        colormap_tick_label(sc.lo, sc.hi, k, 4, ticks[k], sizeof ticks[k]);
        tick_w = fmax(tick_w, text_w(ticks[k], TICK_PX));
    }
    double tick_x = L.bar_x + BAR_W + 7.0;
    double cap_x = tick_x + tick_w + 8.0 + AXIS_PX * 0.8;
    right = fmax(right, cap_x);
    double bottom = L.oy + fmax(L.side, L.bar_h);
    if (causal && T)
        bottom = fmax(bottom, L.oy + L.bar_h + 34.0);
    if (T == 0)
        bottom = L.oy + 30.0;

    char fact[320];
    facts(m, o, head, fact, sizeof fact);
    double content_w = right + MARGIN;
    double facts_w = text_w(fact, FACTS_PX) + 2 * MARGIN;
    const char *text = m->text ? m->text : "";
    double sent_full_w = BOLD * text_w("\xE2\x80\x9C\xE2\x80\x9D", TITLE_PX);
    {
        /* estimate the full title without copying a long sentence twice */
        char probe[1024];
        sanitize(text, strlen(text), 1, TITLE_PX * BOLD, 4000.0, probe,
                 sizeof probe);
        sent_full_w += text_w(probe, TITLE_PX * BOLD);
    }
    L.W = fmax(fmax(content_w, facts_w), 320.0);
    L.W = fmax(L.W, fmin(sent_full_w + 2 * MARGIN, fmax(L.W, 720.0)));
    L.W = ceil(L.W);
    L.H = ceil(bottom + MARGIN);

    char sentence[4096];
    sanitize(text, strlen(text), 1, TITLE_PX * BOLD,
             L.W - 2 * MARGIN - BOLD * text_w("\xE2\x80\x9C\xE2\x80\x9D", TITLE_PX),
             sentence, sizeof sentence);

    /* ---- header, definitions, background, title ------------------------ */
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
            "width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
            "font-family=\"" FONT "\">\n",
            L.W, L.H, L.W, L.H);
    fputs("<title>", f);
    put_esc(f, sentence);
    fprintf(f, " \xE2\x80\x94 %s</title>\n", matrix_name(o->matrix));
    fputs("<defs>\n", f);
    fprintf(f,
            "<pattern id=\"attnviz-hatch\" patternUnits=\"userSpaceOnUse\" "
            "width=\"6\" height=\"6\" patternTransform=\"rotate(45)\">"
            "<rect width=\"6\" height=\"6\" fill=\"%s\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"%s\" "
            "stroke-width=\"2\"/></pattern>\n",
            th->mask_bg, th->mask_line);
    fputs("<linearGradient id=\"attnviz-bar\" x1=\"0\" y1=\"1\" x2=\"0\" "
          "y2=\"0\">\n",
          f);
    for (int k = 0; k <= 32; k++) {
        Rgb col = colormap_rgb(sc.id, k / 32.0f);
        fprintf(f, "<stop offset=\"%g\" stop-color=\"#%02x%02x%02x\"/>\n",
                k / 32.0, col.r, col.g, col.b);
    }
    fputs("</linearGradient>\n</defs>\n", f);
    fprintf(f, "<rect class=\"background\" width=\"100%%\" height=\"100%%\" "
               "fill=\"%s\"/>\n",
            th->bg);
    fprintf(f,
            "<text class=\"title\" x=\"%g\" y=\"%g\" font-size=\"%g\" "
            "font-weight=\"bold\" fill=\"%s\">\xE2\x80\x9C",
            MARGIN, R1(title_base), TITLE_PX, th->fg);
    put_esc(f, sentence);
    fputs("\xE2\x80\x9D</text>\n", f);
    fprintf(f,
            "<text class=\"facts\" x=\"%g\" y=\"%g\" font-size=\"%g\" "
            "fill=\"%s\">",
            MARGIN, R1(facts_base), FACTS_PX, th->muted);
    put_esc(f, fact);
    fputs("</text>\n", f);

    if (T == 0) {
        fprintf(f,
                "<text x=\"%g\" y=\"%g\" font-size=\"%g\" fill=\"%s\">"
                "no tokens</text>\n</svg>\n",
                MARGIN, R1(L.oy), FACTS_PX, th->muted);
        return ferror(f) ? -ATTN_E_IO : 0;
    }

    /* ---- axis titles and labels ----------------------------------------- */
    fprintf(f,
            "<g class=\"axis-titles\" font-size=\"%g\" fill=\"%s\" "
            "text-anchor=\"middle\">\n"
            "<text x=\"%g\" y=\"%g\">keys</text>\n"
            "<text x=\"%g\" y=\"%g\" transform=\"rotate(-90 %g %g)\">"
            "queries</text>\n</g>\n",
            AXIS_PX, th->muted, R1(L.ox + L.side / 2.0), R1(key_axis_base),
            R1(MARGIN + AXIS_PX * 0.8), R1(L.oy + L.side / 2.0),
            R1(MARGIN + AXIS_PX * 0.8), R1(L.oy + L.side / 2.0));

    fprintf(f,
            "<g class=\"row-labels\" font-size=\"%g\" fill=\"%s\" "
            "text-anchor=\"end\">\n",
            L.lab_px, th->fg);
    for (int i = 0; i < T; i += L.step) {
        const char *t = tok_text(&m->toks, i);
        sanitize(t, strlen(t), 0, L.lab_px, LABEL_MAX_PX, lab, sizeof lab);
        fprintf(f, "<text x=\"%g\" y=\"%g\"%s>", R1(L.ox - 8.0),
                R1(L.oy + i * c + c / 2.0 + L.lab_px * 0.35),
                i == query ? " font-weight=\"bold\"" : "");
        put_esc(f, lab);
        fputs("</text>\n", f);
    }
    if (query >= 0 && query % L.step != 0) {
        /* the highlighted row keeps its label when labels are thinned */
        const char *t = tok_text(&m->toks, query);
        sanitize(t, strlen(t), 0, L.lab_px, LABEL_MAX_PX, lab, sizeof lab);
        fprintf(f, "<text x=\"%g\" y=\"%g\" font-weight=\"bold\">",
                R1(L.ox - 8.0), R1(L.oy + query * c + c / 2.0 + L.lab_px * 0.35));
        put_esc(f, lab);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);

    fprintf(f,
            "<g class=\"key-labels\" font-size=\"%g\" fill=\"%s\" "
            "text-anchor=\"%s\">\n",
            L.lab_px, th->fg, L.rotate ? "start" : "middle");
    for (int j = 0; j < T; j += L.step) {
        const char *t = tok_text(&m->toks, j);
        sanitize(t, strlen(t), 0, L.lab_px, LABEL_MAX_PX, lab, sizeof lab);
        double x = L.ox + j * c + c / 2.0, y = L.oy - 7.0;
        if (L.rotate) {
            /* baseline from the column centre up and to the right; shift so
             * the glyphs, not the baseline, sit over the column */
            x += L.lab_px * 0.25;
            fprintf(f, "<text x=\"%g\" y=\"%g\" transform=\"rotate(-45 %g %g)\">",
                    R1(x), R1(y), R1(x), R1(y));
        } else {
            fprintf(f, "<text x=\"%g\" y=\"%g\">", R1(x), R1(y));
        }
        put_esc(f, lab);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);

    /* ---- the cells ------------------------------------------------------- */
    fprintf(f, "<g class=\"matrix\" transform=\"translate(%g %g)\">\n", R1(L.ox),
            R1(L.oy));
    /* thin gaps in the background colour between big cells */
    if (c >= 20)
        fprintf(f, "<g stroke=\"%s\" stroke-width=\"1\">\n", th->bg);
    else if (c >= 10)
        fprintf(f, "<g stroke=\"%s\" stroke-width=\"0.5\">\n", th->bg);
    else
        fputs("<g shape-rendering=\"crispEdges\">\n", f);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            float v = M[(size_t)i * T + j];
            if (attn_masked(&m->res, i, j)) {
                fprintf(f,
                        "<rect class=\"cell masked\" data-i=\"%d\" data-j=\"%d\" "
                        "data-value=\"%.9g\" x=\"%d\" y=\"%d\" width=\"%d\" "
                        "height=\"%d\" fill=\"url(#attnviz-hatch)\"/>\n",
                        i, j, (double)v, j * c, i * c, c, c);
            } else {
                Rgb col = colormap_scale_rgb(&sc, v);
                fprintf(f,
                        "<rect class=\"cell\" data-i=\"%d\" data-j=\"%d\" "
                        "data-value=\"%.9g\" x=\"%d\" y=\"%d\" width=\"%d\" "
                        "height=\"%d\" fill=\"#%02x%02x%02x\"/>\n",
                        i, j, (double)v, j * c, i * c, c, c, col.r, col.g,
                        col.b);
            }
        }
    fputs("</g>\n", f);
    if (L.num_px > 0.0) {
        fprintf(f,
                "<g class=\"values\" font-size=\"%g\" text-anchor=\"middle\">\n",
                L.num_px);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                if (attn_masked(&m->res, i, j))
                    continue;
                float v = M[(size_t)i * T + j];
                Rgb tc = colormap_text_on(colormap_scale_rgb(&sc, v));
                char num[32];
                colormap_cell_label(&sc, v, num, sizeof num);
                fprintf(f,
                        "<text x=\"%g\" y=\"%g\" fill=\"#%02x%02x%02x\">%s"
                        "</text>\n",
                        R1(j * c + c / 2.0), R1(i * c + c / 2.0 + L.num_px * 0.36),
                        tc.r, tc.g, tc.b, num);
            }
        fputs("</g>\n", f);
    }
    fprintf(f,
            "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"%g\" height=\"%g\" "
            "fill=\"none\" stroke=\"%s\" stroke-width=\"0.75\"/>\n",
            L.side, L.side, th->frame);
    if (query >= 0) {
        double sw = c >= 16 ? 2.0 : 1.5;
        fprintf(f,
                "<g class=\"query\" data-i=\"%d\" fill=\"none\">"
                "<rect x=\"0\" y=\"%d\" width=\"%g\" height=\"%d\" stroke=\"%s\" "
                "stroke-width=\"%g\"/>"
                "<rect x=\"0\" y=\"%d\" width=\"%g\" height=\"%d\" stroke=\"%s\" "
                "stroke-width=\"%g\"/></g>\n",
                query, query * c, L.side, c, th->bg, sw + 2.0, query * c, L.side,
                c, th->fg, sw);
    }
    fputs("</g>\n", f);

    /* ---- colour bar ----------------------------------------------------- */
    fprintf(f,
            "<g class=\"colorbar\" font-size=\"%g\" fill=\"%s\">\n"
            "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
            "fill=\"url(#attnviz-bar)\" stroke=\"%s\" stroke-width=\"0.75\"/>\n",
            TICK_PX, th->fg, R1(L.bar_x), R1(L.oy), BAR_W, R1(L.bar_h),
            th->frame);
    for (int k = 0; k < 5; k++) {
        double y = L.oy + L.bar_h - L.bar_h * k / 4.0;
        fprintf(f,
                "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" "
                "stroke-width=\"0.75\"/>"
                "<text x=\"%g\" y=\"%g\">%s</text>\n",
                R1(L.bar_x + BAR_W), R1(y), R1(L.bar_x + BAR_W + 4.0), R1(y),
                th->frame, R1(tick_x), R1(y + TICK_PX * 0.35), ticks[k]);
    }
    fprintf(f,
            "<text x=\"%g\" y=\"%g\" fill=\"%s\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 %g %g)\">%s</text>\n",
            R1(cap_x), R1(L.oy + L.bar_h / 2.0), th->muted, R1(cap_x),
            R1(L.oy + L.bar_h / 2.0), bar_caption(o->matrix));
    if (causal) {
        double y = L.oy + L.bar_h + 14.0;
        fprintf(f,
                "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
                "fill=\"url(#attnviz-hatch)\" stroke=\"%s\" "
                "stroke-width=\"0.75\"/>"
                "<text x=\"%g\" y=\"%g\" fill=\"%s\">masked</text>\n",
                R1(L.bar_x), R1(y), BAR_W, BAR_W, th->frame, R1(tick_x),
                R1(y + BAR_W / 2.0 + TICK_PX * 0.35), th->muted);
    }
    fputs("</g>\n</svg>\n", f);
    return ferror(f) ? -ATTN_E_IO : 0;
}
