/* Tests for the colour scales of weights (issue 16, items 7 and 8): round
 * colour bar ticks (colormap_ticks) against hand-worked ranges and a
 * property; the colour of each cell under fixed 0–1, the map's max and per
 * row against a naive double-precision computation, in the PNG figure, the
 * SVG and the window; Shift+C and a click on the colour bar; sessions.
 * Run from the repository root, SDL dummy driver. */
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

#include "attnviz/app_state.h"
#include "attnviz/colormap.h"
#include "attnviz/figure.h"
#include "attnviz/input.h"
#include "attnviz/session.h"
#include "attnviz/svg.h"
#include "attnviz/view.h"

#include "test_util.h"
#include "test_app_util.h"

/* ---- ticks ------------------------------------------------------------------------ */

static void check_ticks(double lo, double hi, int max_n, int n_want, const double *want, int dec)
{
    double v[COLORMAP_MAX_TICKS];
    int d = -1, n = colormap_ticks(lo, hi, max_n, v, &d);
    assert_int_equal(n, n_want);
    assert_int_equal(d, dec);
    for (int k = 0; k < n; k++)
        assert_float_equal(v[k], want[k], 1e-12);
}

/* Worked by hand: the finest of 1, 2, 5 × 10^k with at most max_n ticks. */
static void test_ticks_by_hand(void **state)
{
    (void)state;
    /* 0 … 0.244: 0.02 gives 13, 0.05 gives 5 */
    check_ticks(0, 0.244, 8, 5, (double[]){0, 0.05, 0.1, 0.15, 0.2}, 2);
    /* fixed 0 … 1: 0.1 gives 11, 0.2 gives 6 */
    check_ticks(0, 1, 8, 6, (double[]){0, 0.2, 0.4, 0.6, 0.8, 1.0}, 1);
    /* with room for 5 only: 0.2 gives 6, 0.5 gives 3 */
    check_ticks(0, 1, 5, 3, (double[]){0, 0.5, 1.0}, 1);
    check_ticks(0, 0.4, 8, 5, (double[]){0, 0.1, 0.2, 0.3, 0.4}, 1);
    check_ticks(0, 0.8, 8, 5, (double[]){0, 0.2, 0.4, 0.6, 0.8}, 1);
    /* scores ± 3.4: 0.5 gives 13, 1 gives 7 */
    check_ticks(-3.4, 3.4, 8, 7, (double[]){-3, -2, -1, 0, 1, 2, 3}, 0);
    /* a long sentence's small weights: 0.0002 gives 7 */
    check_ticks(0, 0.00137, 8, 7, (double[]){0, 0.0002, 0.0004, 0.0006, 0.0008, 0.001, 0.0012}, 4);
    check_ticks(0, 30, 8, 7, (double[]){0, 5, 10, 15, 20, 25, 30}, 0);
    check_ticks(-40, 40, 5, 5, (double[]){-40, -20, 0, 20, 40}, 0);
    /* nothing to tick */
    double v[COLORMAP_MAX_TICKS];
    int d;
    assert_int_equal(colormap_ticks(1, 1, 8, v, &d), 0);
    assert_int_equal(colormap_ticks(1, 0, 8, v, &d), 0);
    assert_int_equal(colormap_ticks(0, INFINITY, 8, v, &d), 0);
    assert_int_equal(colormap_ticks(NAN, 1, 8, v, &d), 0);
    /* never 0.061: the old ticks of 0 … 0.244 */
    char buf[32];
    int n = colormap_ticks(0, 0.244, 5, v, &d);
    for (int k = 0; k < n; k++) {
        colormap_tick_label(v[k], d, buf, sizeof buf);
        assert_string_not_equal(buf, "0.061");
    }
}

/* Is x a whole multiple of step (relative to step)? */
static int multiple_of(double x, double step)
{
    double q = x / step;
    return fabs(q - round(q)) < 1e-6;
}

/* Every tick a multiple of one 1/2/5 × 10^k step, evenly spaced by it, in
 * range, between 2 and max_n of them, over ranges of every size. */
static void test_ticks_property(void **state)
{
    (void)state;
    srand(16);
    for (int trial = 0; trial < 20000; trial++) {
        double mag = pow(10.0, (rand() % 16) - 8);
        double lo = ((double)rand() / RAND_MAX - 0.5) * 4 * mag;
        double w = ((double)rand() / RAND_MAX + 1e-3) * 3 * mag;
        if (trial % 3 == 0)
            lo = 0.0; /* weights start at 0 */
        if (trial % 5 == 0)
            lo = -w / 2; /* scores are symmetric */
        double hi = lo + w;
        int max_n = 5 + rand() % (COLORMAP_MAX_TICKS - 4);
        double v[COLORMAP_MAX_TICKS];
        int d, n = colormap_ticks(lo, hi, max_n, v, &d);
        if (n < 2)
            fprintf(stderr, "ticks of [%.17g, %.17g] (at most %d): %d\n", lo, hi, max_n, n);
        assert_true(n >= 2);
        assert_true(n <= max_n);
        double step = v[1] - v[0], e = pow(10.0, floor(log10(step) + 1e-9)), m = step / e;
        assert_true(fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6);
        for (int k = 0; k < n; k++) {
            assert_true(v[k] >= lo - 1e-6 * step && v[k] <= hi + 1e-6 * step);
            assert_true(multiple_of(v[k], step));
            if (k)
                assert_true(fabs(v[k] - v[k - 1] - step) < 1e-6 * step);
        }
        /* the decimals show the step: its label is not 0 */
        char buf[32];
        colormap_tick_label(step, d, buf, sizeof buf);
        assert_true(fabs(strtod(buf, NULL) - step) < 1e-6 * step);
    }
}

/* ---- the colour of a cell in each mode ---------------------------------------------- */

enum { TQ = 4, TK = 5 };
/* not symmetric, not square: rows of different spread, a swap of rows and
 * columns reads outside */
static const float W[TQ][TK] = {
    {0.60f, 0.20f, 0.10f, 0.05f, 0.05f},
    {0.10f, 0.15f, 0.30f, 0.25f, 0.20f},
    {0.22f, 0.18f, 0.20f, 0.21f, 0.19f},
    {0.02f, 0.03f, 0.05f, 0.40f, 0.50f},
};
static const char *const QL[TQ] = {"q0", "q1", "q2", "q3"};
static const char *const KL[TK] = {"k0", "k1", "k2", "k3", "k4"};

/* t of cell (i, j), computed on its own in double: fixed w, max w / max W,
 * per row w / max of row i. */
static double naive_t(ColorScaleMode mode, int i, int j)
{
    double big = 0, row = 0;
    for (int a = 0; a < TQ; a++)
        for (int b = 0; b < TK; b++)
            big = W[a][b] > big ? W[a][b] : big;
    for (int b = 0; b < TK; b++)
        row = W[i][b] > row ? W[i][b] : row;
    return mode == CSCALE_FIXED ? W[i][j] : mode == CSCALE_MAX ? W[i][j] / big : W[i][j] / row;
}

/* Colours within one step of the 1024-step table (float vs double t). */
static int near(Rgb a, ColormapId id, double t)
{
    Rgb lo = colormap_rgb(id, (float)(t - 1.0 / 1024)), hi = colormap_rgb(id, (float)(t + 1.0 / 1024));
    Rgb c = colormap_rgb(id, (float)t);
    return (a.r == c.r && a.g == c.g && a.b == c.b) || (a.r == lo.r && a.g == lo.g && a.b == lo.b) ||
           (a.r == hi.r && a.g == hi.g && a.b == hi.b);
}

static Rgb pixel(SDL_Surface *s, int x, int y)
{
    uint32_t p = ((uint32_t *)((uint8_t *)s->pixels + y * s->pitch))[x];
    Rgb c = {(uint8_t)(p >> 16), (uint8_t)(p >> 8), (uint8_t)p};
    return c;
}

static void test_figure_cells_each_mode(void **state)
{
    (void)state;
    AttnMap m = attn_map_make(&W[0][0], TQ, TK, QL, KL, ATTN_MAP_WEIGHTS);
    for (int mode = 0; mode < CSCALE_COUNT; mode++) {
        Figure f;
        figure_layout_export(&f, &m, 1.0f, "t", NULL, CMAP_MAGMA, (ColorScaleMode)mode, -1);
        AttnErr err = {0};
        SDL_Surface *s = view_render_figure(test_fonts(), &f, &m, 0, -1, &err);
        assert_non_null(s);
        int bad = 0, swapped = 0;
        for (int i = 0; i < TQ; i++)
            for (int j = 0; j < TK; j++) {
                Rgb got = pixel(s, figure_cell_x(&f, j) + 2, figure_cell_y(&f, i) + 2);
                bad += !near(got, CMAP_MAGMA, naive_t((ColorScaleMode)mode, i, j));
                /* the same check with rows for columns fails somewhere */
                if (i < TK && j < TQ)
                    swapped += !near(got, CMAP_MAGMA, naive_t((ColorScaleMode)mode, j, i));
            }
        if (bad)
            IMG_SavePNG(s, "build/test-out/cscale-figure.png");
        assert_int_equal(bad, 0);
        assert_true(swapped > 0);
        /* the colour bar: fixed 0 … 1 with ticks 0 … 1.0; max runs to the
         * largest weight; per row says so */
        if (mode == CSCALE_FIXED) {
            assert_float_equal(f.cb.cs.hi, 1.0f, 0.0f);
            assert_string_equal(f.cb.ticks[f.cb.n_ticks - 1], "1.0");
        } else if (mode == CSCALE_MAX) {
            assert_float_equal(f.cb.cs.hi, 0.6f, 0.0f);
        } else {
            assert_int_equal(f.cb.n_ticks, 2);
            assert_string_equal(f.cb.ticks[1], "max");
            assert_non_null(strstr(f.cb.caption, "each row"));
        }
        SDL_FreeSurface(s);
    }
}

/* The SVG's cells under per row: fill = the map at w / row max. */
static void test_svg_per_row(void **state)
{
    (void)state;
    AttnMap m = attn_map_make(&W[0][0], TQ, TK, QL, KL, ATTN_MAP_WEIGHTS);
    Figure f;
    figure_layout_export(&f, &m, 1.0f, "t", NULL, CMAP_VIRIDIS, CSCALE_ROW, -1);
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(svg_write_figure(fp, &f, &m, 0, -1, -1), 0);
    size_t len;
    char *doc = test_read_back(fp, &len);
    fclose(fp);
    assert_non_null(doc);
    int seen = 0;
    for (int i = 0; i < TQ; i++)
        for (int j = 0; j < TK; j++) {
            char key[64];
            snprintf(key, sizeof key, "data-i=\"%d\" data-j=\"%d\"", i, j);
            const char *p = strstr(doc, key), *fill = p ? strstr(p, "fill=\"#") : NULL;
            assert_non_null(fill);
            unsigned r, g, b;
            assert_int_equal(sscanf(fill, "fill=\"#%2x%2x%2x", &r, &g, &b), 3);
            Rgb c = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
            assert_true(near(c, CMAP_VIRIDIS, naive_t(CSCALE_ROW, i, j)));
            seen++;
        }
    assert_int_equal(seen, TQ * TK);
    assert_non_null(strstr(doc, ">max</text>"));
    free(doc);
}

/* Scores keep their diverging ± scale in every mode. */
static void test_scores_ignore_mode(void **state)
{
    (void)state;
    static const float S[2][3] = {{-2.0f, 0.5f, 1.0f}, {3.0f, -1.0f, 0.0f}};
    AttnMap m = attn_map_make(&S[0][0], 2, 3, QL, KL, ATTN_MAP_SCORES);
    for (int mode = 0; mode < CSCALE_COUNT; mode++) {
        ColorScale cs = colormap_scale_mode(&m, CMAP_VIRIDIS, (ColorScaleMode)mode);
        assert_int_equal(cs.id, CMAP_DIVERGING);
        assert_float_equal(cs.lo, -3.0f, 0.0f);
        assert_float_equal(cs.hi, 3.0f, 0.0f);
        assert_int_equal(colormap_per_row(&m, (ColorScaleMode)mode), 0);
    }
    /* weights above 1 (not probabilities): fixed runs to the largest */
    static const float big[2][2] = {{0.5f, 2.5f}, {1.0f, 0.0f}};
    AttnMap b = attn_map_make(&big[0][0], 2, 2, QL, KL, ATTN_MAP_WEIGHTS);
    assert_float_equal(colormap_scale_mode(&b, CMAP_VIRIDIS, CSCALE_FIXED).hi, 2.5f, 0.0f);
}

/* ---- the window ---------------------------------------------------------------------- */

static const float *weights_of(Fix *f)
{
    return model_matrix(&f->m, MODEL_WEIGHTS, f->a->vs.head < 0 ? MODEL_HEAD_AVG : f->a->vs.head);
}

/* Shift+C cycles fixed → max → per row → fixed, saying which, from the
 * default: the map's max (issue 28, item 1); C still changes the colour
 * map; the heatmap's cells follow each mode. */
static void test_window_shift_c(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->a->vs.cscale, CSCALE_MAX);
    ColormapId cmap = f->a->vs.cmap;
    static const ColorScaleMode order[3] = {CSCALE_ROW, CSCALE_FIXED, CSCALE_MAX};
    static const char *const says[3] = {"each row 0 to its own max",
                                        "same colour = same weight on every slide", "0 to this map's max"};
    for (int k = 0; k < 3; k++) {
        key(f, SDLK_c, KMOD_LSHIFT);
        assert_int_equal(f->a->vs.cscale, order[k]);
        assert_int_equal(f->a->vs.cmap, cmap);
        assert_non_null(strstr(f->a->status, says[k]));
        const Figure *h = &f->a->layout.heat;
        const float *w = weights_of(f);
        int T = f->m.T, bad = 0;
        for (int i = 0; i < T; i++) {
            if (i == f->a->vs.query)
                continue; /* its outline */
            double row = 0, big = 0;
            for (int j = 0; j < T; j++) {
                row = w[i * T + j] > row ? w[i * T + j] : row;
                for (int a = 0; a < T; a++)
                    big = w[a * T + j] > big ? w[a * T + j] : big;
            }
            for (int j = 0; j < T; j++) {
                double v = w[i * T + j];
                double t = order[k] == CSCALE_FIXED ? v : order[k] == CSCALE_MAX ? v / big : v / row;
                bad += !near(pixel(f->surf, figure_cell_x(h, j) + 3, figure_cell_y(h, i) + 3), cmap, t);
            }
        }
        assert_int_equal(bad, 0);
    }
    key(f, SDLK_c, 0);
    assert_int_equal(f->a->vs.cmap, (cmap + 1) % CMAP_SEQUENTIAL_COUNT);
    assert_int_equal(f->a->vs.cscale, CSCALE_MAX);
    /* a view setting, like C and D: no undo step */
    assert_int_equal(f->a->undo_n, 0);
}

/* With the scores shown the mode still changes, and the message says it
 * is for weights; a click on the colour bar cycles too. */
static void test_window_scores_and_click(void **state)
{
    Fix *f = *state;
    key(f, SDLK_r, 0); /* raw scores */
    assert_int_equal(f->a->vs.map.kind, ATTN_MAP_SCORES);
    key(f, SDLK_c, KMOD_RSHIFT);
    assert_int_equal(f->a->vs.cscale, CSCALE_ROW);
    assert_non_null(strstr(f->a->status, "for weights only"));
    key(f, SDLK_r, KMOD_LSHIFT); /* back to weights */
    const FigRect *b = &f->a->layout.heat.cb.bar;
    assert_true(b->w > 0 && b->h > 0);
    click(f, b->x + b->w / 2, b->y + b->h / 2);
    assert_int_equal(f->a->vs.cscale, CSCALE_FIXED);
    assert_non_null(strstr(f->a->status, "same colour"));
    /* the help lists Shift+C */
    int found = 0;
    for (int k = 0; k < f->a->vs.n_help_lines; k++)
        found |= strstr(f->a->vs.help_lines[k].keys, "Shift+C") != NULL &&
                 strstr(f->a->vs.help_lines[k].what, "colour scale") != NULL;
    assert_true(found);
}

/* ---- sessions -------------------------------------------------------------------------- */

static void test_session_round_trip(void **state)
{
    Fix *f = *state;
    const char *path = "build/test-out/cscale-session.json";
    for (int mode = 0; mode < CSCALE_COUNT; mode++) {
        SessionView sv;
        session_view_default(&sv);
        sv.cscale = mode;
        AttnErr err = {0};
        assert_int_equal(session_save(path, &f->m, &sv, &err), 0);
        Session s;
        assert_int_equal(session_load(&s, f->m.d, NULL, path, &err), 0);
        assert_int_equal(s.view.cscale, mode);
        session_free(&s);
    }
    /* a session from before: no color_scale, the default */
    static const char old[] = "{\"session\": {\"version\": 1, \"sentence\": \"a b\", "
                              "\"view\": {\"query\": 1, \"colormap\": 2}}}";
    Session s;
    AttnErr err = {0};
    assert_int_equal(session_parse(&s, f->m.d, NULL, old, strlen(old), "old.json", &err), 0);
    assert_int_equal(s.view.cscale, CSCALE_FIXED);
    assert_int_equal(s.view.cmap, 2);
    session_free(&s);
    /* a wrong name: an error naming it */
    static const char bad[] = "{\"session\": {\"version\": 1, \"sentence\": \"a b\", "
                              "\"view\": {\"color_scale\": \"log\"}}}";
    assert_true(session_parse(&s, f->m.d, NULL, bad, strlen(bad), "bad.json", &err) < 0);
    assert_non_null(strstr(err.msg, "color_scale"));
    assert_non_null(strstr(err.msg, "log"));
    /* the window puts a session's mode back */
    SessionView sv;
    session_view_default(&sv);
    sv.cscale = CSCALE_ROW;
    app_apply_session_view(f->a, &sv);
    assert_int_equal(f->a->vs.cscale, CSCALE_ROW);
}

/* --color-scale: the three names, anything else a usage error naming it. */
static void test_option(void **state)
{
    (void)state;
    static const char *const names[3] = {"fixed", "max", "row"};
    for (int k = 0; k < 3; k++) {
        Options o;
        AttnErr err = {0};
        char *argv[] = {"attnviz", "--color-scale", (char *)names[k], "a", NULL};
        assert_int_equal(options_parse(&o, 4, argv, &err), 0);
        assert_int_equal(o.color_scale, k);
        assert_int_equal(colormap_mode_from_name(names[k]), k);
        options_free(&o);
    }
    Options o;
    AttnErr err = {0};
    char *argv[] = {"attnviz", "--color-scale", "rows", "a", NULL};
    assert_int_equal(options_parse(&o, 4, argv, &err), -ATTN_E_PARSE);
    assert_non_null(strstr(err.msg, "'rows'"));
    options_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticks_by_hand),
        cmocka_unit_test(test_ticks_property),
        cmocka_unit_test(test_figure_cells_each_mode),
        cmocka_unit_test(test_svg_per_row),
        cmocka_unit_test(test_scores_ignore_mode),
        cmocka_unit_test_setup_teardown(test_window_shift_c, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_scores_and_click, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_round_trip, setup, teardown),
        cmocka_unit_test(test_option),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
