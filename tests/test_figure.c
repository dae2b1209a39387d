/* Tests for attention maps as plain data and the figure layout
 * (src/core/attnmap.c, src/view/figure.c, figure_draw.c, figure_render.c,
 * svg.c, src/io/print.c): a 3×5 map with two different label lists, not
 * square and not symmetric (a transpose fails), through the window's
 * heatmap and line diagram, the PNG, the SVG and the CSV writers; a 2×3 grid of small maps from a plain array; no
 * Model anywhere. Run with SDL_VIDEODRIVER=dummy from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <SDL_image.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/app.h"
#include "attnviz/attnmap.h"
#include "attnviz/figure.h"
#include "attnviz/io.h"
#include "attnviz/svg.h"
#include "attnviz/theme.h"
#include "attnviz/view.h"

#include "test_util.h"

/* fontconfig's own leak in FcInit (see test_view.c) */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:FcInitLoadConfigAndFonts\nleak:libfontconfig.so\n";
}

static const char *const Q[3] = {"alpha", "beta", "gamma"};
static const char *const K[5] = {"one", "two", "three", "four", "five"};
static float V[3][5];

static int group_setup(void **state)
{
    (void)state;
    /* every entry different, row i peaking at key 2i mod 5: neither the
     * transpose nor a row or column swap looks the same */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            V[i][j] = (float)(i * 5 + j + 1) / 40.0f + (j == (2 * i) % 5 ? 0.5f : 0.0f);
    return test_sdl_dummy();
}

static int group_teardown(void **state)
{
    (void)state;
    SDL_Quit();
    return 0;
}

static AttnMap map_3x5(void)
{
    return attn_map_make(&V[0][0], 3, 5, Q, K, ATTN_MAP_WEIGHTS);
}

static Rgb pixel(SDL_Surface *s, int x, int y)
{
    Rgb o = {0, 0, 0};
    const uint8_t *p = (const uint8_t *)s->pixels + (size_t)y * s->pitch +
                       (size_t)x * s->format->BytesPerPixel;
    Uint32 v = 0;
    Uint8 a;
    memcpy(&v, p, s->format->BytesPerPixel);
    SDL_GetRGBA(v, s->format, &o.r, &o.g, &o.b, &a);
    return o;
}

static int rgb_eq(Rgb a, Rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

/* Every cell of the figure's grid, sampled off its centre (the number),
 * has the colour of its entry. */
static int check_cells(SDL_Surface *s, const Figure *f, const AttnMap *m)
{
    int bad = 0;
    for (int i = 0; i < m->Tq; i++)
        for (int j = 0; j < m->Tk; j++) {
            int in = (int)(f->cell / 5), x = figure_cell_x(f, j) + in, y = figure_cell_y(f, i) + in;
            Rgb want = colormap_scale_rgb(&f->cb.cs, attn_map_at(m, i, j)), got = pixel(s, x, y);
            if (!rgb_eq(got, want)) {
                print_message("cell (%d,%d) at (%d,%d): %d,%d,%d, want %d,%d,%d\n", i, j, x, y, got.r,
                              got.g, got.b, want.r, want.g, want.b);
                bad++;
            }
        }
    return bad;
}

static char *read_stream(FILE *f, char **buf)
{
    fflush(f);
    fclose(f);
    return *buf;
}

/* The DejaVu table's widths and two pixels more: a font whose hinting draws
 * a little wider than the layout measured. */
static int wider(void *ctx, int px, const char *s)
{
    (void)ctx;
    return figure_measure_dejavu.width(figure_measure_dejavu.ctx, px, s) + 2;
}

/* A label the layout made room for is drawn whole though the font's
 * hinting makes it two pixels wider ("[CLS]" was drawn "[CL…" beside a
 * whole "[SEP]", issue 38); one that does not fit is still cut. */
static void test_label_fit(void **state)
{
    (void)state;
    TextMeasure font = {wider, figure_measure_dejavu.line_height, NULL};
    char out[64];
    int w = figure_measure_dejavu.width(figure_measure_dejavu.ctx, 14, "[CLS]");
    figure_fit_text(&font, 14, "[CLS]", w, out, sizeof out);
    assert_string_not_equal(out, "[CLS]"); /* cut, without the slack */
    figure_fit_label(&font, 14, "[CLS]", w, out, sizeof out);
    assert_string_equal(out, "[CLS]");
    figure_fit_label(&font, 14, "[CLS] and more", w, out, sizeof out);
    assert_non_null(strstr(out, "\xE2\x80\xA6"));
    assert_int_equal(strncmp(out, "[CLS]", 3), 0);
}

static void test_map_basics(void **state)
{
    (void)state;
    AttnMap m = map_3x5();
    assert_int_equal(m.stride, 5);
    assert_float_equal(attn_map_at(&m, 2, 4), V[2][4], 0.0f);
    assert_false(attn_map_masked(&m, 0, 4));
    m.causal = 1;
    assert_true(attn_map_masked(&m, 0, 1));
    assert_false(attn_map_masked(&m, 1, 1));
    assert_int_equal(attn_causal_row_len(1, 0, 5), 1);
    assert_int_equal(attn_causal_row_len(1, 9, 5), 5);
    assert_int_equal(attn_causal_row_len(0, 0, 5), 5);
    unsigned char mask[15] = {0};
    mask[1 * 5 + 3] = 1;
    m.causal = 0;
    m.mask = mask;
    assert_true(attn_map_masked(&m, 1, 3));
    assert_false(attn_map_masked(&m, 3 - 2, 2));
    /* the colour scale leaves masked entries out */
    float big[2][2] = {{0.2f, 9.0f}, {0.3f, 0.4f}};
    unsigned char mk[4] = {0, 1, 0, 0};
    AttnMap b = attn_map_make(&big[0][0], 2, 2, Q, K, ATTN_MAP_WEIGHTS);
    assert_float_equal(colormap_scale_for_map(&b, CMAP_VIRIDIS).hi, 9.0f, 0.0f);
    b.mask = mk;
    assert_float_equal(colormap_scale_for_map(&b, CMAP_VIRIDIS).hi, 0.4f, 0.0f);
    char hb[48];
    attn_head_label(1, 4, hb, sizeof hb);
    assert_string_equal(hb, "head 2 of 4");
    attn_head_label(ATTN_MAP_AVG, 4, hb, sizeof hb);
    assert_string_equal(hb, "average of 4 heads");
    attn_head_label(0, 1, hb, sizeof hb);
    assert_string_equal(hb, "1 head");
}

static void test_3x5_layout(void **state)
{
    (void)state;
    AttnMap m = map_3x5();
    FigureOptions o = figure_options_export(1.0f, "a title", "some facts");
    Figure f;
    figure_layout(&f, &m, &o, &figure_measure_dejavu);
    assert_int_equal(f.Tq, 3);
    assert_int_equal(f.Tk, 5);
    assert_int_equal(f.rows, 3);
    assert_int_equal(f.cols, 5);
    /* five columns across, three rows down */
    assert_int_equal(f.grid.w, (int)lroundf(5 * f.cell));
    assert_int_equal(f.grid.h, (int)lroundf(3 * f.cell));
    assert_true(f.grid.x + f.grid.w < f.cb.bar.x && f.cb.bar.x + f.cb.bar.w < f.w);
    assert_true(f.grid.y + f.grid.h <= f.h);
    int i, j;
    assert_int_equal(figure_hit_cell(&f, figure_cell_x(&f, 4) + 1, figure_cell_y(&f, 2) + 1, &i, &j), 1);
    assert_int_equal(i, 2);
    assert_int_equal(j, 4);
    assert_int_equal(figure_hit_cell(&f, f.grid.x - 1, f.grid.y, &i, &j), 0);
    /* scale 2 doubles the cells */
    Figure f2;
    o.scale = 2.0f;
    figure_layout(&f2, &m, &o, &figure_measure_dejavu);
    assert_float_equal(f2.cell, 2 * f.cell, 0.0f);
}

static void test_3x5_png(void **state)
{
    (void)state;
    AttnMap m = map_3x5();
    FigureOptions o = figure_options_export(2.0f, "three by five", "weights");
    Figure f;
    figure_layout(&f, &m, &o, &figure_measure_dejavu);
    AttnErr err = {0};
    SDL_Surface *s = view_render_figure(test_fonts(), &f, &m, 0, 1, &err);
    if (!s)
        print_message("view_render_figure: %s\n", err.msg);
    assert_non_null(s);
    assert_int_equal(s->w, f.w);
    assert_int_equal(s->h, f.h);
    assert_int_equal(check_cells(s, &f, &m), 0);
    /* the same pixels back from the PNG file */
    char path[64];
    snprintf(path, sizeof path, "/tmp/attnviz-test-figure-%d.png", (int)getpid());
    assert_int_equal(export_save_png(s, path, &err), 0);
    SDL_Surface *img = IMG_Load(path);
    assert_non_null(img);
    SDL_Surface *rgb = SDL_ConvertSurfaceFormat(img, SDL_PIXELFORMAT_RGB888, 0);
    assert_non_null(rgb);
    assert_int_equal(check_cells(rgb, &f, &m), 0);
    /* the selected query row's label in the accent colour: "beta" */
    const AttnTheme *th = theme_get(0);
    int found = 0;
    for (int x = f.grid.x - f.label_w - 8; x < f.grid.x && !found; x++)
        for (int y = figure_cell_y(&f, 1); y < figure_cell_y(&f, 2) && !found; y++)
            found = rgb_eq(pixel(rgb, x, y), th->accent);
    assert_true(found);
    if (getenv("ATTNVIZ_TEST_DUMP"))
        IMG_SavePNG(rgb, "build/test-out/figure_3x5.png");
    SDL_FreeSurface(rgb);
    SDL_FreeSurface(img);
    SDL_FreeSurface(s);
    unlink(path);
}

static void test_3x5_svg(void **state)
{
    (void)state;
    AttnMap m = map_3x5();
    FigureOptions o = figure_options_export(1.0f, "three by five", "weights");
    Figure f;
    figure_layout(&f, &m, &o, &figure_measure_dejavu);
    char *buf = NULL;
    size_t len = 0;
    FILE *fs = open_memstream(&buf, &len);
    assert_non_null(fs);
    assert_int_equal(svg_write_figure(fs, &f, &m, 0, -1, -1), 0);
    char *doc = read_stream(fs, &buf);
    int seen[3][5] = {{0}}, n = 0;
    for (const char *p = strstr(doc, "<rect class=\"cell"); p; p = strstr(p + 1, "<rect class=\"cell")) {
        int i, j, x, y, w, h;
        double v;
        const char *q = strstr(p, "data-i=");
        assert_int_equal(sscanf(q, "data-i=\"%d\" data-j=\"%d\" data-value=\"%lf\" x=\"%d\" y=\"%d\" "
                                   "width=\"%d\" height=\"%d\"", &i, &j, &v, &x, &y, &w, &h), 7);
        assert_true(i >= 0 && i < 3 && j >= 0 && j < 5);
        seen[i][j]++;
        assert_float_equal(v, V[i][j], 1e-7);
        assert_int_equal(x, figure_cell_x(&f, j));
        assert_int_equal(y, figure_cell_y(&f, i));
        assert_int_equal(w, figure_cell_x(&f, j + 1) - x);
        n++;
    }
    assert_int_equal(n, 15);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            assert_int_equal(seen[i][j], 1);
    /* the row labels are the queries, the column labels the keys */
    const char *rows = strstr(doc, "<g class=\"row-labels\">"), *keys = strstr(doc, "<g class=\"key-labels\">");
    assert_non_null(rows);
    assert_non_null(keys);
    assert_true(strstr(rows, ">gamma</text>") < keys);
    assert_true(strstr(keys, ">five</text>") != NULL);
    assert_null(strstr(keys, ">alpha</text>"));
    free(doc);
}

static void test_3x5_csv_and_text(void **state)
{
    (void)state;
    AttnMap m = map_3x5();
    char *buf = NULL, want[1024];
    size_t len = 0, w = 0;
    FILE *fs = open_memstream(&buf, &len);
    assert_int_equal(print_map_csv(fs, &m), 0);
    char *csv = read_stream(fs, &buf);
    w += (size_t)snprintf(want + w, sizeof want - w, "query");
    for (int j = 0; j < 5; j++)
        w += (size_t)snprintf(want + w, sizeof want - w, ",%s", K[j]);
    w += (size_t)snprintf(want + w, sizeof want - w, "\n");
    for (int i = 0; i < 3; i++) {
        w += (size_t)snprintf(want + w, sizeof want - w, "%s", Q[i]);
        for (int j = 0; j < 5; j++)
            w += (size_t)snprintf(want + w, sizeof want - w, ",%.9g", (double)V[i][j]);
        w += (size_t)snprintf(want + w, sizeof want - w, "\n");
    }
    assert_string_equal(csv, want);
    free(csv);
    buf = NULL;
    fs = open_memstream(&buf, &len);
    m.causal = 1;
    assert_int_equal(print_map_text(fs, &m, "title"), 0);
    char *txt = read_stream(fs, &buf);
    /* gamma's row: three numbers, two masked */
    const char *g = strstr(txt, "\ngamma");
    assert_non_null(g);
    char n3[16];
    snprintf(n3, sizeof n3, "%.3f", (double)V[2][2]);
    assert_non_null(strstr(g, n3));
    assert_non_null(strstr(g, "-"));
    assert_non_null(strstr(txt, "  one"));
    free(txt);
}

/* The window's heatmap and line diagram draw a map that no Model made:
 * cells in their colours (three rows, five columns), the query's curves
 * thickest to its heaviest key, the tooltip's labels from the map. */
static int accent_run(SDL_Surface *s, int x, int y0, int y1, Rgb accent)
{
    int best = 0, run = 0;
    for (int y = y0; y < y1; y++) {
        Rgb p = pixel(s, x, y);
        /* the accent blended over the panel: red well above blue */
        int hit = p.r > 120 && p.r > p.b + 60 && abs(p.r - accent.r) < 140;
        run = hit ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best;
}

static void test_3x5_window(void **state)
{
    (void)state;
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 24, SDL_PIXELFORMAT_RGB888);
    assert_non_null(surf);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    assert_non_null(r);
    AttnErr err = {0};
    View *v = view_create(r, test_fonts(), &err);
    assert_non_null(v);
    ViewState *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->map = s->weights = map_3x5();
    s->heads = 1;
    s->query = 1;
    s->key = -1;
    s->hover_i = 2;
    s->hover_j = 4;
    s->scale = 1.0f;
    s->zoom = 1.0f;
    s->dark = 1;
    ViewLayout *l = calloc(1, sizeof *l);
    assert_non_null(l);
    view_layout(v, s, 1280, 800, l);
    s->mouse_x = figure_cell_x(&l->heat, 4) + 2;
    s->mouse_y = figure_cell_y(&l->heat, 2) + 2;
    view_draw_window(v, r, s, l);
    SDL_RenderPresent(r);
    if (getenv("ATTNVIZ_TEST_DUMP"))
        IMG_SavePNG(surf, "build/test-out/figure_3x5_window.png");
    /* the heatmap: 3 rows × 5 columns in the map's colours */
    assert_int_equal(l->heat.Tq, 3);
    assert_int_equal(l->heat.Tk, 5);
    assert_int_equal(l->rows_vis, 3);
    assert_int_equal(l->cols_vis, 5);
    AttnMap m = map_3x5();
    int bad = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            if (i == 2 && j == 4)
                continue; /* under the tooltip */
            int x = figure_cell_x(&l->heat, j) + 6, y = figure_cell_y(&l->heat, i) + 6;
            bad += !rgb_eq(pixel(surf, x, y), colormap_scale_rgb(&l->heat.cb.cs, attn_map_at(&m, i, j)));
        }
    assert_int_equal(bad, 0);
    int hi, hj;
    assert_int_equal(view_hit_cell(l, figure_cell_x(&l->heat, 3) + 1, figure_cell_y(&l->heat, 2) + 1, &hi, &hj), 1);
    assert_int_equal(hi, 2);
    assert_int_equal(hj, 3);
    /* the line diagram: five rows (the keys); beta's thickest curve ends at
     * "three" (0.70), its thinnest at "one" */
    assert_int_equal(l->lines_vis, 5);
    float used = l->lines_vis * l->line_step;
    int x = l->lines_right.x - 6, thick[5];
    for (int j = 0; j < 5; j++) {
        int yc = (int)(l->lines_right.y + (l->lines_right.h - used) / 2 + (j + 0.5f) * l->line_step);
        thick[j] = accent_run(surf, x, yc - (int)l->line_step / 2, yc + (int)l->line_step / 2,
                              theme_get(1)->accent);
    }
    for (int j = 0; j < 5; j++)
        if (j != 2)
            assert_true(thick[2] > thick[j]);
    assert_true(thick[0] < thick[4] || thick[0] < thick[3]);
    /* a query row is a label on the left only: "gamma" is drawn, "five" on
     * the right; no fourth query label */
    assert_true(l->lines_left.w > 0 && l->lines_right.w > 0);
    view_destroy(v);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    free(s);
    free(l);
}

/* 2 layers × 3 heads of 4×4 maps from one plain array: map (l, h) puts its
 * weight on key (l·3 + h) mod 4 (and half of it on key 0) */
static void test_grid_2x3(void **state)
{
    (void)state;
    enum { L = 2, H = 3, T = 4 };
    static float data[L][H][T][T];
    static const char *const toks[T] = {"w", "x", "y", "z"};
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++)
                    data[l][h][i][j] = j == (l * 3 + h + i) % T ? 0.7f : j == 0 ? 0.2f : 0.05f * (float)(l + 1);
    AttnMaps ms = {&data[0][0][0][0], L, H, T, T, toks, toks, ATTN_MAP_WEIGHTS, 0, NULL};
    AttnMap one = attn_maps_get(&ms, 1, 2);
    assert_ptr_equal(one.v, &data[1][2][0][0]);
    assert_null(attn_maps_get(&ms, 2, 0).v);
    FigureOptions o = figure_options_export(1.0f, "two layers, three heads", NULL);
    o.query = 1;
    o.key = 2;
    FigureGrid g;
    figure_grid_layout(&g, &ms, &o, &figure_measure_dejavu);
    assert_float_equal(g.cb.cs.hi, 1.0f, 0.0f); /* by default weights run 0 to 1 */
    o.cscale = CSCALE_MAX;
    figure_grid_layout(&g, &ms, &o, &figure_measure_dejavu);
    assert_int_equal(g.L, L);
    assert_int_equal(g.H, H);
    /* three maps across, two down */
    FigRect a = figure_grid_map_rect(&g, 0, 0), b = figure_grid_map_rect(&g, 1, 2);
    assert_true(b.x > a.x + 2 * a.w && b.y > a.y + a.h && b.y < a.y + 2 * a.h + 3 * g.gap);
    int hl, hh;
    assert_int_equal(figure_grid_hit(&g, b.x + 1, b.y + 1, &hl, &hh), 1);
    assert_int_equal(hl, 1);
    assert_int_equal(hh, 2);
    AttnErr err = {0};
    SDL_Surface *s = view_render_grid(test_fonts(), &g, &ms, 1, &err);
    assert_non_null(s);
    int bad = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    Rgb want = colormap_scale_rgb(&g.cb.cs, data[l][h][i][j]);
                    Rgb got = pixel(s, figure_grid_cell_x(&g, h, j) + 1, figure_grid_cell_y(&g, l, i) + 1);
                    bad += !rgb_eq(got, want);
                }
    if (bad || getenv("ATTNVIZ_TEST_DUMP"))
        IMG_SavePNG(s, "build/test-out/figure_grid.png");
    assert_int_equal(bad, 0);
    /* one colour scale over all maps: its top is the largest weight */
    assert_float_equal(g.cb.cs.hi, 0.7f, 1e-6);
    SDL_FreeSurface(s);
    /* the SVG: six maps of sixteen cells with their own numbers */
    char *buf = NULL;
    size_t len = 0;
    FILE *fs = open_memstream(&buf, &len);
    assert_int_equal(svg_write_grid(fs, &g, &ms, 0), 0);
    char *doc = read_stream(fs, &buf);
    int maps = 0, cells = 0;
    for (const char *p = strstr(doc, "<g class=\"map\""); p; p = strstr(p + 1, "<g class=\"map\"")) {
        int l, h;
        assert_int_equal(sscanf(p, "<g class=\"map\" data-layer=\"%d\" data-head=\"%d\"", &l, &h), 2);
        const char *end = strstr(p, "</g>");
        for (const char *c = strstr(p, "<rect class=\"cell"); c && c < end; c = strstr(c + 1, "<rect class=\"cell")) {
            int i, j;
            double v;
            assert_int_equal(sscanf(strstr(c, "data-i="), "data-i=\"%d\" data-j=\"%d\" data-value=\"%lf\"", &i, &j, &v), 3);
            assert_float_equal(v, data[l][h][i][j], 1e-7);
            cells++;
        }
        maps++;
    }
    assert_int_equal(maps, L * H);
    assert_int_equal(cells, L * H * T * T);
    assert_non_null(strstr(doc, "class=\"selected\""));
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_fit),
        cmocka_unit_test(test_map_basics),
        cmocka_unit_test(test_3x5_layout),
        cmocka_unit_test(test_3x5_png),
        cmocka_unit_test(test_3x5_svg),
        cmocka_unit_test(test_3x5_csv_and_text),
        cmocka_unit_test(test_3x5_window),
        cmocka_unit_test(test_grid_2x3),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
