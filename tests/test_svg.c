/* Tests for the SVG back end of the figure layout (src/view/svg.c,
 * src/view/figure.c) on a model's map: well-formed XML
 * (xmllint), one cell rect per matrix entry whose data-value is the model's
 * number and whose fill is the colour scale's colour, masked cells, escaping,
 * sanitizing, sizes from T = 1 to 200, themes, the query outline and the
 * colour bar. Run from the repository root (needs assets/embeddings.txt and
 * xmllint from libxml2-utils). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/colormap.h"
#include "attnviz/embed.h"
#include "attnviz/model.h"
#include "attnviz/app.h"
#include "attnviz/svg.h"
#include "attnviz/theme.h"
#include "attnviz/tokenizer.h"

#include "test_util.h"

static EmbedTable *table;

static int group_setup(void **state)
{
    (void)state;
    return test_load_embeddings(&table);
}

static int group_teardown(void **state)
{
    (void)state;
    embed_destroy(table);
    return 0;
}

/* ---- helpers --------------------------------------------------------------- */

static void make_model(Model *m, const char *text, int causal, int heads)
{
    AttnConfig cfg = attn_config_default();
    cfg.causal = causal;
    cfg.heads = heads;
    assert_int_equal(model_init(m, table, &cfg), 0);
    m->keep_window_matrices = 1; /* these tests draw logits and heads' means too */
    assert_int_equal(model_set_text(m, text, strlen(text)), 0);
    assert_int_equal(model_compute(m), 0);
    assert_true(m->T > 0);
}

/* What an export asks of the SVG (the command line's --head, --matrix,
 * --colormap, --theme, --query). */
typedef struct SvgOptions {
    int head;
    ModelMatrix matrix;
    ColormapId cmap;
    int dark;
    int query;
    ColorScaleMode cscale;
} SvgOptions;

/* The model's figure at scale 1, as export_file lays it out (with the
 * matrices it makes). */
static ModelFigure *figure_of(Model *m, const SvgOptions *o)
{
    ModelFigure *mf = malloc(sizeof *mf);
    assert_non_null(mf);
    assert_int_equal(model_prepare(m, MODEL_WEIGHTS, o->head), 0);
    assert_int_equal(model_prepare(m, o->matrix, o->head), 0);
    export_model_figure(mf, m, o->matrix, o->head, 1.0f, o->cmap, o->cscale,
                        o->query < m->T ? o->query : -1);
    return mf;
}

static int svg_write_heatmap(FILE *f, Model *m, const SvgOptions *o)
{
    ModelFigure *mf = figure_of(m, o);
    int q = o->query < mf->map.Tq ? o->query : -1;
    int rc = svg_write_figure(f, &mf->fig, &mf->map, o->dark, q, -1);
    free(mf);
    return rc;
}

static SvgOptions opts(ModelMatrix which)
{
    /* 0 to the largest weight: the scale check_cells computes */
    SvgOptions o = {MODEL_HEAD_AVG, which, CMAP_VIRIDIS, 0, -1, CSCALE_MAX};
    return o;
}

typedef struct Doc {
    char path[64];
    char *data;
    size_t len;
} Doc;

/* Write the SVG to a temp file and read it back. */
static void write_doc(Doc *d, Model *m, const SvgOptions *o)
{
    snprintf(d->path, sizeof d->path, "/tmp/attnviz-test-svg-XXXXXX");
    int fd = mkstemp(d->path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w+");
    assert_non_null(f);
    assert_int_equal(svg_write_heatmap(f, m, o), 0);
    assert_int_equal(fflush(f), 0);
    d->data = test_read_back(f, &d->len);
    assert_true(d->len > 0);
    fclose(f);
}

static void free_doc(Doc *d)
{
    unlink(d->path);
    free(d->data);
    d->data = NULL;
}

static int xmllint_ok(const char *path)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", path);
    return system(cmd) == 0;
}

/* Output of an xmllint --xpath expression (the expression has no '). */
static void xpath(const char *path, const char *expr, char *out, size_t n)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --xpath '%s' '%s' 2>/dev/null", expr,
             path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t k = fread(out, 1, n - 1, p);
    out[k] = '\0';
    if (k && out[k - 1] == '\n')
        out[k - 1] = '\0'; /* xmllint ends string() with a newline */
    pclose(p);
}

/* strstr without the C library's: ASan's strstr measures the whole
 * haystack on every call, which turns a scan of a 2 MB SVG into minutes. */
static const char *find(const char *hay, const char *needle)
{
    size_t k = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (*p == needle[0] && strncmp(p, needle, k) == 0)
            return p;
    return NULL;
}

/* Value of attribute name in the element starting at el (up to its '>'). */
static int attr(const char *el, const char *name, char *out, size_t n)
{
    char elem[1024];
    size_t len = 0;
    while (el[len] && el[len] != '>' && len < sizeof elem - 1)
        len++;
    if (el[len] != '>')
        return 0;
    memcpy(elem, el, len);
    elem[len] = '\0';
    el = elem;
    const char *end = el + len;
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(el, key);
    if (!a || a > end)
        return 0;
    a += strlen(key);
    const char *q = strchr(a, '"');
    if (!q || (size_t)(q - a) >= n)
        return 0;
    memcpy(out, a, (size_t)(q - a));
    out[q - a] = '\0';
    return 1;
}

static long attr_long(const char *el, const char *name)
{
    char b[64];
    assert_true(attr(el, name, b, sizeof b));
    return strtol(b, NULL, 10);
}

static double attr_double(const char *el, const char *name)
{
    char b[64];
    assert_true(attr(el, name, b, sizeof b));
    return strtod(b, NULL);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = find(hay, needle); p; p = find(p + 1, needle))
        n++;
    return n;
}

static void hex(Rgb c, char *out)
{
    snprintf(out, 8, "#%02x%02x%02x", c.r, c.g, c.b);
}

/* Check every cell against the model: T×T rects, each (i, j) once, the value
 * and the fill (colour-map colour, or the hatch pattern when masked). */
static void check_cells(const Doc *d, Model *m, const SvgOptions *o)
{
    int T = m->T;
    const float *M = model_matrix(m, o->matrix, o->head);
    ColorScale sc = colormap_scale_for(M, T, T, m->res.causal,
                                       o->matrix != MODEL_WEIGHTS, o->cmap);
    unsigned char *seen = calloc((size_t)T * T, 1);
    assert_non_null(seen);
    int n = 0, n_masked = 0;
    ModelFigure *mf = figure_of(m, o);
    char mask_hex[8];
    hex(theme_get(o->dark)->mask, mask_hex);
    for (const char *p = find(d->data, "<rect class=\"cell"); p;
         p = find(p + 1, "<rect class=\"cell")) {
        char cls[64], fill[64];
        assert_true(attr(p, "class", cls, sizeof cls));
        assert_true(attr(p, "fill", fill, sizeof fill));
        long i = attr_long(p, "data-i"), j = attr_long(p, "data-j");
        assert_true(i >= 0 && i < T && j >= 0 && j < T);
        assert_int_equal(seen[i * T + j], 0);
        seen[i * T + j] = 1;
        float v = M[(size_t)i * T + j];
        double got = attr_double(p, "data-value");
        assert_true(fabs(got - (double)v) <= 1e-6);
        const Figure *fg = &mf->fig;
        assert_int_equal(attr_long(p, "x"), figure_cell_x(fg, (int)j));
        assert_int_equal(attr_long(p, "y"), figure_cell_y(fg, (int)i));
        assert_int_equal(attr_long(p, "width"), figure_cell_x(fg, (int)j + 1) - figure_cell_x(fg, (int)j));
        assert_int_equal(attr_long(p, "height"), figure_cell_y(fg, (int)i + 1) - figure_cell_y(fg, (int)i));
        if (attn_masked(&m->res, (int)i, (int)j)) {
            assert_string_equal(cls, "cell masked");
            assert_string_equal(fill, mask_hex); /* no colour-map colour */
            n_masked++;
        } else {
            char want[8];
            hex(colormap_scale_rgb(&sc, v), want);
            assert_string_equal(cls, "cell");
            assert_string_equal(fill, want);
        }
        n++;
    }
    assert_int_equal(n, T * T);
    assert_int_equal(n_masked, m->res.causal ? T * (T - 1) / 2 : 0);
    free(seen);
    free(mf);
}

static int xpath_cell_count(const char *path)
{
    char out[64];
    xpath(path,
          "count(//*[local-name()=\"rect\"][contains(@class,\"cell\")])", out,
          sizeof out);
    return atoi(out);
}

/* Every cell lies inside the document, whose viewBox is its own size. */
static void check_bounds(const Doc *d, int T)
{
    char b[128];
    const char *svg = strstr(d->data, "<svg ");
    assert_non_null(svg);
    double W = attr_double(svg, "width"), H = attr_double(svg, "height");
    assert_true(attr(svg, "viewBox", b, sizeof b));
    char want[128];
    snprintf(want, sizeof want, "0 0 %g %g", W, H);
    assert_string_equal(b, want);
    int n = 0;
    for (const char *p = find(d->data, "<rect class=\"cell"); p; p = find(p + 1, "<rect class=\"cell")) {
        long x = attr_long(p, "x"), y = attr_long(p, "y");
        assert_true(x > 0 && y > 0);
        assert_true(x + attr_long(p, "width") <= W && y + attr_long(p, "height") <= H);
        n++;
    }
    assert_int_equal(n, T * T);
}

/* ---- tests ------------------------------------------------------------------ */

/* An export's cells: 40 px for a classroom sentence, shrinking with T so
 * the matrix stays near 640 px, never under 1 px. */
static void test_cell_size(void **state)
{
    (void)state;
    float last = 1e9f;
    static const char *const w[] = {"a", "b", "c"};
    const char *labels[ATTN_MAX_TOKENS];
    for (int k = 0; k < ATTN_MAX_TOKENS; k++)
        labels[k] = w[k % 3];
    float *v = calloc((size_t)ATTN_MAX_TOKENS * ATTN_MAX_TOKENS, sizeof(float));
    assert_non_null(v);
    for (int T = 1; T <= ATTN_MAX_TOKENS; T += T < 40 ? 1 : 97) {
        AttnMap map = attn_map_make(v, T, T, labels, labels, ATTN_MAP_WEIGHTS);
        FigureOptions fo = figure_options_export(1.0f, NULL, NULL);
        Figure *f = malloc(sizeof *f);
        assert_non_null(f);
        figure_layout(f, &map, &fo, &figure_measure_dejavu);
        if (T <= 16)
            assert_float_equal(f->cell, 40.0f, 0.0f);
        assert_true(f->cell >= 1.0f && f->cell <= last);
        assert_true(T <= 16 || f->cell <= 1.0f || f->cell * T <= 640.0f);
        last = f->cell;
        free(f);
    }
    free(v);
}

static void test_weights(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "the cat sat on the mat because it was warm .", 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    Doc d;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    assert_int_equal(xpath_cell_count(d.path), m.T * m.T);
    check_cells(&d, &m, &o);
    check_bounds(&d, m.T);
    assert_non_null(strstr(d.data, "font-family=\"DejaVu Sans, Verdana, sans-serif\""));
    /* title: the sentence and the facts of print.c's title */
    assert_non_null(strstr(d.data, "the cat sat on the mat because it was warm ."));
    assert_non_null(strstr(d.data, "learned"));
    assert_non_null(strstr(d.data, "1 head"));
    assert_non_null(strstr(d.data, "d=16, dk=16"));
    assert_non_null(strstr(d.data, "scaled 1/"));
    assert_non_null(strstr(d.data, "no mask"));
    assert_non_null(strstr(d.data, "\xCF\x84=1")); /* τ=1 */
    /* big cells: every value printed with 2 decimals in a readable colour */
    assert_non_null(strstr(d.data, "<g class=\"values\""));
    const float *W = model_matrix(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG);
    ColorScale sc = colormap_scale_for(W, m.T, m.T, 0, 0, CMAP_VIRIDIS);
    char want[128], col[8];
    hex(colormap_text_on(colormap_scale_rgb(&sc, W[1])), col);
    snprintf(want, sizeof want, "fill=\"%s\" text-anchor=\"middle\">%.2f</text>", col, (double)W[1]);
    assert_non_null(strstr(d.data, want));
    const char *vals = strstr(d.data, "<g class=\"values\"");
    const char *vend = strstr(vals, "</g>");
    int n_text = 0;
    for (const char *p = strstr(vals, "<text"); p && p < vend;
         p = strstr(p + 1, "<text"))
        n_text++;
    assert_int_equal(n_text, m.T * m.T);
    /* no query outline unless asked for */
    assert_null(strstr(d.data, "class=\"query\""));
    free_doc(&d);
    model_destroy(&m);
}

static void test_other_colormap_and_head(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "a dog chased the ball across the park", 0, 4);
    for (int head = -1; head < 4; head++) {
        SvgOptions o = opts(MODEL_WEIGHTS);
        o.head = head;
        o.cmap = CMAP_MAGMA;
        Doc d;
        write_doc(&d, &m, &o);
        assert_true(xmllint_ok(d.path));
        check_cells(&d, &m, &o);
        char want[64];
        if (head < 0)
            snprintf(want, sizeof want, "average of 4 heads");
        else
            snprintf(want, sizeof want, "head %d of 4", head + 1);
        assert_non_null(strstr(d.data, want));
        assert_non_null(strstr(d.data, "dk=4"));
        free_doc(&d);
    }
    model_destroy(&m);
}

static void test_scores_and_logits_diverging(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "the king spoke to the queen", 0, 1);
    ModelMatrix which[2] = {MODEL_SCORES, MODEL_LOGITS};
    for (int k = 0; k < 2; k++) {
        SvgOptions o = opts(which[k]);
        Doc d;
        write_doc(&d, &m, &o);
        assert_true(xmllint_ok(d.path));
        check_cells(&d, &m, &o);
        /* the colour bar runs through the diverging map */
        char first[80], last[80], a[8], b[8];
        hex(colormap_rgb(CMAP_DIVERGING, 0.0f), a);
        hex(colormap_rgb(CMAP_DIVERGING, 1.0f), b);
        snprintf(first, sizeof first, "<stop offset=\"0\" stop-color=\"%s\"/>", a);
        snprintf(last, sizeof last, "<stop offset=\"1\" stop-color=\"%s\"/>", b);
        assert_non_null(strstr(d.data, first));
        assert_non_null(strstr(d.data, last));
        free_doc(&d);
    }
    model_destroy(&m);
}

static void test_causal_masked(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "she gave him the book yesterday", 1, 1);
    ModelMatrix which[3] = {MODEL_WEIGHTS, MODEL_SCORES, MODEL_LOGITS};
    for (int k = 0; k < 3; k++) {
        SvgOptions o = opts(which[k]);
        Doc d;
        write_doc(&d, &m, &o);
        assert_true(xmllint_ok(d.path));
        assert_int_equal(xpath_cell_count(d.path), m.T * m.T);
        check_cells(&d, &m, &o);
        assert_int_equal(count(d.data, "class=\"cell masked\""),
                         m.T * (m.T - 1) / 2);
        assert_non_null(strstr(d.data, "<g class=\"hatch\""));
        assert_non_null(strstr(d.data, "causal mask"));
        assert_non_null(strstr(d.data, ">masked</text>"));
        /* no number printed on a masked cell: T(T+1)/2 values */
        const char *vals = strstr(d.data, "<g class=\"values\"");
        assert_non_null(vals);
        const char *vend = strstr(vals, "</g>");
        int n_text = 0;
        for (const char *p = strstr(vals, "<text"); p && p < vend;
             p = strstr(p + 1, "<text"))
            n_text++;
        assert_int_equal(n_text, m.T * (m.T + 1) / 2);
        free_doc(&d);
    }
    model_destroy(&m);
}

static void test_colorbar(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "birds fly south in winter", 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    o.cmap = CMAP_CIVIDIS;
    Doc d;
    write_doc(&d, &m, &o);
    const char *g = strstr(d.data, "<linearGradient id=\"attnviz-bar\"");
    assert_non_null(g);
    const char *gend = strstr(g, "</linearGradient>");
    int n_stops = 0;
    for (const char *p = strstr(g, "<stop "); p && p < gend;
         p = strstr(p + 1, "<stop ")) {
        char off[32], col[32], want[8];
        assert_true(attr(p, "offset", off, sizeof off));
        assert_true(attr(p, "stop-color", col, sizeof col));
        hex(colormap_rgb(CMAP_CIVIDIS, (float)strtod(off, NULL)), want);
        assert_string_equal(col, want);
        n_stops++;
    }
    assert_true(n_stops >= 9);
    /* ticks on round numbers from 0 to the largest weight: one of the
     * sets colormap_ticks gives for the bar's room, every label in it */
    const char *bar = strstr(d.data, "<g class=\"colorbar\"");
    assert_non_null(bar);
    const float *W = model_matrix(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG);
    ColorScale sc = colormap_scale_for(W, m.T, m.T, 0, 0, CMAP_CIVIDIS);
    int n_lines = count(bar, "<line "), found = 0;
    for (int max_n = 5; max_n <= COLORMAP_MAX_TICKS && !found; max_n++) {
        double v[COLORMAP_MAX_TICKS];
        int dec, n = colormap_ticks(sc.lo, sc.hi, max_n, v, &dec), all = n == n_lines;
        for (int k = 0; k < n && all; k++) {
            char tick[64], label[32];
            colormap_tick_label(v[k], dec, label, sizeof label);
            snprintf(tick, sizeof tick, ">%s</text>", label);
            all = strstr(bar, tick) != NULL;
        }
        found = all;
    }
    assert_true(found);
    assert_true(n_lines >= 2);
    free_doc(&d);
    model_destroy(&m);
}

static void test_escaping(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "tom&jerry <b> say \"hi\" it's x>y", 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    o.query = 1;
    Doc d;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    assert_int_equal(xpath_cell_count(d.path), m.T * m.T);
    check_cells(&d, &m, &o);
    assert_non_null(strstr(d.data, "tom&amp;jerry"));
    assert_non_null(strstr(d.data, "&lt;b&gt;"));
    assert_non_null(strstr(d.data, "&quot;"));
    assert_non_null(strstr(d.data, "it&apos;s"));
    assert_non_null(strstr(d.data, "x&gt;y"));
    assert_null(strstr(d.data, "<b>"));
    /* the labels read back as the tokens */
    for (int i = 0; i < m.T; i++) {
        char expr[256], out[256];
        snprintf(expr, sizeof expr,
                 "string(//*[local-name()=\"g\"][@class=\"row-labels\"]"
                 "/*[local-name()=\"text\"][%d])", i + 1);
        xpath(d.path, expr, out, sizeof out);
        assert_string_equal(out, tok_text(&m.toks, i));
        snprintf(expr, sizeof expr,
                 "string(//*[local-name()=\"g\"][@class=\"key-labels\"]"
                 "/*[local-name()=\"text\"][%d])", i + 1);
        xpath(d.path, expr, out, sizeof out);
        assert_string_equal(out, tok_text(&m.toks, i));
    }
    free_doc(&d);
    model_destroy(&m);
}

/* The whole file is valid UTF-8 and has no control character but '\n'. */
static void check_clean_bytes(const Doc *d)
{
    const unsigned char *u = (const unsigned char *)d->data;
    for (size_t i = 0; i < d->len;) {
        assert_true(u[i] >= 0x20 || u[i] == '\n');
        assert_true(u[i] != 0x7F);
        int k = tok_utf8_len(u + i, d->len - i);
        assert_true(k > 0);
        i += (size_t)k;
    }
}

static void test_controls_and_bad_utf8(void **state)
{
    (void)state;
    Model m;
    /* control characters inside words, a lone continuation byte, a
     * truncated sequence, an overlong '/', a C1 control, U+FFFF */
    static const char text[] = "ab\x01" "cd e\x1b[0mf g\x80h i\xe2\x82 "
                               "\xc0\xaf j\xc2\x85k l\xef\xbf\xbfm tab\there";
    make_model(&m, text, 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    Doc d;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    check_clean_bytes(&d);
    check_cells(&d, &m, &o);
    assert_non_null(strstr(d.data, "abcd"));         /* \x01 dropped */
    assert_non_null(strstr(d.data, "\xEF\xBF\xBD")); /* U+FFFD */
    assert_non_null(strstr(d.data, "tab here"));     /* title: tab → space */
    free_doc(&d);
    model_destroy(&m);
}

/* Random bytes as the sentence: always well-formed, clean UTF-8. */
static void test_random_bytes(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int round = 0; round < 25; round++) {
        char text[160];
        size_t n = 0;
        for (; n < sizeof text - 1; n++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned char b = (unsigned char)(x >> 24);
            if (b == 0)
                b = ' ';
            /* mostly ASCII words with spaces, some high and control bytes */
            text[n] = (char)((x >> 40) % 4 == 0 ? b : (x >> 44) % 6 == 0 ? ' '
                             : 'a' + (char)(b % 26));
        }
        text[n] = '\0';
        Model m;
        make_model(&m, text, (int)(round & 1), 1);
        SvgOptions o = opts((ModelMatrix)(round % 3));
        o.query = round % 5;
        Doc d;
        write_doc(&d, &m, &o);
        assert_true(xmllint_ok(d.path));
        check_clean_bytes(&d);
        check_cells(&d, &m, &o);
        free_doc(&d);
        model_destroy(&m);
    }
}

/* No tokens, or a result that no longer matches the tokens: a valid
 * document without cells. */
static void test_empty_and_stale(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    Model m;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    assert_int_equal(m.T, 0);
    SvgOptions o = opts(MODEL_WEIGHTS);
    Doc d;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    assert_int_equal(xpath_cell_count(d.path), 0);
    free_doc(&d);

    const char *a = "one two three", *b = "one two three four five";
    assert_int_equal(model_set_text(&m, a, strlen(a)), 0);
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(model_set_text(&m, b, strlen(b)), 0); /* not recomputed */
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    assert_int_equal(xpath_cell_count(d.path), 0);
    free_doc(&d);
    model_destroy(&m);
}

static void test_one_token(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "hello", 0, 1);
    assert_int_equal(m.T, 1);
    for (int dark = 0; dark < 2; dark++) {
        SvgOptions o = opts(MODEL_WEIGHTS);
        o.dark = dark;
        o.query = 0;
        Doc d;
        write_doc(&d, &m, &o);
        assert_true(xmllint_ok(d.path));
        assert_int_equal(xpath_cell_count(d.path), 1);
        check_cells(&d, &m, &o);
        check_bounds(&d, 1);
        assert_non_null(strstr(d.data, ">1.00</text>"));
        free_doc(&d);
    }
    model_destroy(&m);
}

static void test_200_tokens(void **state)
{
    (void)state;
    static const char *const words[] = {"the", "cat", "sat", "on", "mat",
                                        "and", "dog", "ran", "to", "park"};
    char text[2048] = "";
    for (int i = 0; i < 200; i++) {
        strcat(text, words[(i * 7) % 10]);
        strcat(text, " ");
    }
    Model m;
    make_model(&m, text, 1, 1);
    assert_int_equal(m.T, 200);
    SvgOptions o = opts(MODEL_WEIGHTS);
    o.query = 117;
    Doc d;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    assert_int_equal(xpath_cell_count(d.path), 200 * 200);
    check_cells(&d, &m, &o);
    check_bounds(&d, 200);
    /* small cells: no numbers, thinned labels, a sane size */
    assert_null(strstr(d.data, "<g class=\"values\""));
    const char *rl = strstr(d.data, "<g class=\"row-labels\"");
    assert_non_null(rl);
    int n_labels = 0;
    for (const char *p = strstr(rl, "<text"); p && p < strstr(rl, "</g>");
         p = strstr(p + 1, "<text"))
        n_labels++;
    assert_true(n_labels > 20 && n_labels < 200);
    assert_non_null(strstr(d.data, "class=\"query\" data-i=\"117\""));
    const char *svg = strstr(d.data, "<svg ");
    assert_true(attr_double(svg, "width") < 1400);
    assert_true(d.len < 8u << 20);
    free_doc(&d);
    model_destroy(&m);
}

static void test_themes(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "light and dark", 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    Doc d;
    write_doc(&d, &m, &o);
    char el[128];
    const char *bg = strstr(d.data, "<rect class=\"background\"");
    assert_non_null(bg);
    assert_true(attr(bg, "fill", el, sizeof el));
    assert_string_equal(el, "#ffffff");
    const char *title = strstr(d.data, "<text class=\"title\"");
    assert_non_null(title);
    assert_true(attr(title, "fill", el, sizeof el));
    assert_string_equal(el, "#1a1a1a");
    free_doc(&d);

    o.dark = 1;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    bg = strstr(d.data, "<rect class=\"background\"");
    assert_non_null(bg);
    assert_true(attr(bg, "fill", el, sizeof el));
    assert_string_equal(el, "#14161a");
    title = strstr(d.data, "<text class=\"title\"");
    assert_true(attr(title, "fill", el, sizeof el));
    char want_fg[8];
    hex(theme_get(1)->text, want_fg);
    assert_string_equal(el, want_fg);
    check_cells(&d, &m, &o); /* cell colours do not depend on the theme */
    free_doc(&d);
    model_destroy(&m);
}

static void test_query_outline(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "which word does it attend to", 0, 1);
    int cases[4] = {-1, 0, 2, 99};
    for (int k = 0; k < 4; k++) {
        SvgOptions o = opts(MODEL_WEIGHTS);
        o.query = cases[k];
        Doc d;
        write_doc(&d, &m, &o);
        assert_true(xmllint_ok(d.path));
        if (cases[k] >= 0 && cases[k] < m.T) {
            char want[64];
            snprintf(want, sizeof want, "class=\"query\" data-i=\"%d\"", cases[k]);
            const char *q = strstr(d.data, want);
            assert_non_null(q);
            /* the outline runs along the row's edges */
            ModelFigure *mf = figure_of(&m, &o);
            double y = attr_double(q, "y"), sw = attr_double(q, "stroke-width");
            assert_true(fabs(y - figure_cell_y(&mf->fig, cases[k])) <= sw);
            free(mf);
            /* its label in the accent colour, the only one */
            char ac[16], want_l[64];
            hex(theme_get(0)->accent, ac);
            snprintf(want_l, sizeof want_l, "fill=\"%s\"", ac);
            assert_int_equal(count(strstr(d.data, "<g class=\"row-labels\""), want_l), 1);
        } else {
            assert_null(strstr(d.data, "class=\"query\""));
        }
        free_doc(&d);
    }
    model_destroy(&m);
}

static void test_long_sentence_title(void **state)
{
    (void)state;
    char text[8192] = "";
    for (int i = 0; i < 600; i++)
        strcat(text, "word ");
    Model m;
    make_model(&m, text, 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    Doc d;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    const char *t = strstr(d.data, "<text class=\"title\"");
    assert_non_null(t);
    const char *end = strstr(t, "</text>");
    assert_true(end - t < 2000);
    assert_non_null(strstr(t, "\xE2\x80\xA6")); /* cut with an ellipsis */
    free_doc(&d);
    model_destroy(&m);
}

/* Emoji (issue 28, item 14): every text with 🚂 names the fallback font
 * the window draws it with (Symbola, after DejaVu Sans), every other text
 * keeps the document's font: the same sentence without 🚂 gives the same
 * lines but for the token, none of them naming Symbola. A 2000-character
 * word's turned key label is cut to the room made for it. */
static void test_emoji_font(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "the \xF0\x9F\x9A\x82 left", 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    Doc d;
    write_doc(&d, &m, &o);
    assert_true(xmllint_ok(d.path));
    int with = 0;
    for (const char *t = strstr(d.data, "<text"); t; t = strstr(t + 1, "<text")) {
        const char *end = strstr(t, "</text>");
        assert_non_null(end);
        const char *train = strstr(t, "\xF0\x9F\x9A\x82");
        const char *font = strstr(t, "font-family=\"DejaVu Sans, Symbola, ");
        int has = train && train < end, names = font && font < strchr(t, '>');
        assert_int_equal(has, names);
        with += has;
    }
    assert_true(with >= 3); /* the title, the row and the key label */
    free_doc(&d);
    model_destroy(&m);

    make_model(&m, "the train left", 0, 1);
    write_doc(&d, &m, &o);
    assert_null(strstr(d.data, "Symbola"));
    free_doc(&d);
    model_destroy(&m);

    char text[2100] = "the ";
    memset(text + 4, 'x', 2000);
    snprintf(text + 2004, sizeof text - 2004, " left");
    make_model(&m, text, 0, 1);
    write_doc(&d, &m, &o);
    /* the row label is cut to the labels' room (capped); the turned key
     * label to the same width, not half as long again */
    const char *row = strstr(d.data, "text-anchor=\"end\">xxx");
    assert_non_null(row);
    int row_x = (int)strspn(strchr(row, '>') + 1, "x"), turned = 0, key_x = 0;
    for (const char *t = strstr(d.data, "transform=\"rotate(-45"); t; t = strstr(t + 1, "transform=\"rotate(-45")) {
        const char *body = strchr(t, '>') + 1;
        int n = (int)strspn(body, "x");
        key_x = n > key_x ? n : key_x;
        turned++;
    }
    assert_int_equal(turned, 3);
    print_message("row label %d x, turned key label %d x\n", row_x, key_x);
    assert_true(row_x > 10 && row_x < 100);
    assert_true(key_x > 10 && key_x <= row_x);
    free_doc(&d);
    model_destroy(&m);
}

static void test_write_error(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "nowhere to write", 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    FILE *f = fopen("/dev/null", "r");
    assert_non_null(f);
    assert_int_equal(svg_write_heatmap(f, &m, &o), -ATTN_E_IO);
    fclose(f);
    model_destroy(&m);
}

/* The heatmap texture's fast path (colormap_scale_texels, colormap_index)
 * against the plain definitions: lroundf of t·1024, colormap_scale_rgb per
 * value, and a max over the unmasked finite entries, on values that probe
 * the rounding edges, NaN and infinities. */
static void test_colormap_fast_paths(void **state)
{
    (void)state;
    for (int k = 0; k <= 4 * COLORMAP_STEPS; k++) {
        float y = (float)k / 4.0f; /* every half-way point */
        float t = y / COLORMAP_STEPS;
        assert_int_equal(colormap_index(t), (int)lroundf(t * COLORMAP_STEPS));
        float below = nextafterf(t, 0.0f), above = nextafterf(t, 2.0f);
        assert_int_equal(colormap_index(below), (int)lroundf(fminf(below, 1.0f) * COLORMAP_STEPS));
        assert_int_equal(colormap_index(above), (int)lroundf(fminf(above, 1.0f) * COLORMAP_STEPS));
    }
    assert_int_equal(colormap_index(NAN), 0);
    assert_int_equal(colormap_index(-3.0f), 0);
    assert_int_equal(colormap_index(INFINITY), COLORMAP_STEPS);

    enum { N = 3000 };
    static float v[N];
    unsigned x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        v[i] = ((float)(x >> 8) / 16777216.0f) * 2.4f - 1.2f;
    }
    for (int k = 0; k < COLORMAP_STEPS; k++) /* exact half-way points of [0, 1] */
        v[100 + k] = ((float)k + 0.5f) / COLORMAP_STEPS;
    v[7] = NAN;
    v[8] = INFINITY;
    v[9] = -INFINITY;
    v[10] = 1.0f;
    v[11] = -1.0f;
    v[12] = 0.0f;
    for (int id = 0; id <= CMAP_DIVERGING; id++) {
        ColorScale cs = {(ColormapId)id, id == CMAP_DIVERGING ? -1.0f : 0.0f, 1.0f, 0};
        static uint32_t lut[COLORMAP_STEPS + 1], out[N];
        for (int k = 0; k <= COLORMAP_STEPS; k++) {
            Rgb c = colormap_rgb(cs.id, (float)k / COLORMAP_STEPS);
            lut[k] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
        }
        colormap_scale_texels(&cs, v, N, lut, out);
        for (int i = 0; i < N; i++) {
            Rgb c = colormap_scale_rgb(&cs, v[i]);
            assert_int_equal(out[i], (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b);
        }
    }

    /* the scale: 50×60, causal and not, diverging and not */
    for (int causal = 0; causal < 2; causal++)
        for (int div = 0; div < 2; div++) {
            float want = 0.0f;
            for (int i = 0; i < 50; i++)
                for (int j = 0; j < 60; j++) {
                    float e = v[i * 60 + j];
                    if ((causal && j > i) || !isfinite(e))
                        continue;
                    if ((div ? fabsf(e) : e) > want)
                        want = div ? fabsf(e) : e;
                }
            ColorScale cs = colormap_scale_for(v, 50, 60, causal, div, CMAP_MAGMA);
            assert_true(cs.hi == want);
            assert_true(cs.lo == (div ? -want : 0.0f));
            assert_int_equal(cs.id, div ? CMAP_DIVERGING : CMAP_MAGMA);
        }
    float zeros[4] = {0};
    ColorScale z = colormap_scale_for(zeros, 2, 2, 0, 0, CMAP_VIRIDIS);
    assert_true(z.hi == 1.0f);
}

/* Tick labels: round numbers with the step's decimals, never "-0". */
static void test_tick_labels(void **state)
{
    (void)state;
    static const struct { double v; int d; const char *want; } cases[] = {
        {0.0, 2, "0"}, {0.05, 2, "0.05"}, {1.0, 1, "1.0"}, {-0.0, 1, "0"},
        {-2.0, 0, "-2"}, {0.0005, 4, "0.0005"}, {-1e-12, 2, "0"}, {20.0, 0, "20"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char buf[32];
        colormap_tick_label(cases[c].v, cases[c].d, buf, sizeof buf);
        assert_string_equal(buf, cases[c].want);
    }
}

/* Numbers in cells: two decimals for weights; scores and logits as their
 * range allows; no "-0". */
static void test_cell_labels(void **state)
{
    (void)state;
    static const struct { ColormapId id; float a, v; const char *want; } cases[] = {
        {CMAP_VIRIDIS, 1.0f, 0.5f, "0.50"},     {CMAP_MAGMA, 0.2f, 0.004f, "0.00"},
        {CMAP_DIVERGING, 0.4f, -0.123f, "-0.12"}, {CMAP_DIVERGING, 0.4f, -0.004f, "0.00"},
        {CMAP_DIVERGING, 5.0f, -3.24f, "-3.2"},  {CMAP_DIVERGING, 5.0f, -0.04f, "0.0"},
        {CMAP_DIVERGING, 250.0f, -123.4f, "-123"}, {CMAP_DIVERGING, 250.0f, -0.3f, "0"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ColorScale sc = {cases[c].id, cases[c].id == CMAP_DIVERGING ? -cases[c].a : 0.0f, cases[c].a, 0};
        char buf[32];
        colormap_cell_label(&sc, cases[c].v, buf, sizeof buf);
        assert_string_equal(buf, cases[c].want);
    }
}

/* The facts line says where the weights come from (issue 28, item 9):
 * nothing for the defaults, "(edited)" for weights that differ from them
 * (edited here or loaded), "(random, seed N)" for --seed's, "(edited)"
 * again once those are edited; in basic mode the weights are not used. */
static void test_weights_origin(void **state)
{
    (void)state;
    Model m;
    make_model(&m, "the train left the station on time", 0, 1);
    SvgOptions o = opts(MODEL_WEIGHTS);
    Doc d;
    write_doc(&d, &m, &o);
    assert_null(strstr(d.data, "edited"));
    assert_null(strstr(d.data, "random"));
    free_doc(&d);
    m.params.Wq[3] += 0.1f; /* an edit, as the editor's + does */
    assert_int_equal(model_compute(&m), 0);
    write_doc(&d, &m, &o);
    assert_non_null(strstr(d.data, "learned (edited)"));
    free_doc(&d);
    m.cfg.mode = ATTN_MODE_BASIC; /* Q = K = V = X: no weights in use */
    assert_int_equal(model_compute(&m), 0);
    write_doc(&d, &m, &o);
    assert_null(strstr(d.data, "edited"));
    free_doc(&d);
    m.cfg.mode = ATTN_MODE_LEARNED;
    /* the same weights loaded (as from a session) are the defaults again */
    ParsedWeights w;
    memset(&w, 0, sizeof w);
    assert_int_equal(attn_params_create(&w.params, m.d, 1), 0);
    assert_int_equal(model_set_weights(&m, &w), 0);
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(model_weights_origin(&m), MODEL_WEIGHTS_DEFAULT);
    w.params.Wo[5] = 0.5f; /* a session's edited weights */
    assert_int_equal(model_set_weights(&m, &w), 0);
    assert_int_equal(model_compute(&m), 0);
    write_doc(&d, &m, &o);
    assert_non_null(strstr(d.data, "learned (edited)"));
    free_doc(&d);
    attn_params_destroy(&w.params);
    /* --seed: random, named so */
    model_set_seed(&m, 7);
    assert_int_equal(model_compute(&m), 0);
    write_doc(&d, &m, &o);
    assert_non_null(strstr(d.data, "learned (random, seed 7)"));
    assert_null(strstr(d.data, "edited"));
    free_doc(&d);
    m.params.Wk[0] -= 0.25f;
    assert_int_equal(model_compute(&m), 0);
    write_doc(&d, &m, &o);
    assert_non_null(strstr(d.data, "learned (edited)"));
    assert_null(strstr(d.data, "random"));
    free_doc(&d);
    model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cell_size),
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_other_colormap_and_head),
        cmocka_unit_test(test_scores_and_logits_diverging),
        cmocka_unit_test(test_causal_masked),
        cmocka_unit_test(test_colorbar),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_controls_and_bad_utf8),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_empty_and_stale),
        cmocka_unit_test(test_one_token),
        cmocka_unit_test(test_200_tokens),
        cmocka_unit_test(test_themes),
        cmocka_unit_test(test_query_outline),
        cmocka_unit_test(test_long_sentence_title),
        cmocka_unit_test(test_emoji_font),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_colormap_fast_paths),
        cmocka_unit_test(test_tick_labels),
        cmocka_unit_test(test_cell_labels),
        cmocka_unit_test(test_weights_origin),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
