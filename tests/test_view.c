/* Render tests for the view (src/view/view.c, render.c) and the PNG exports
 * (src/app/export.c, window.c): the window is drawn offscreen by the software
 * renderer into a fixed 1280×800 RGB888 surface and its pixels are checked
 * against the model's numbers through the colour scale; the panel export is
 * decoded back from PNG and its colours inverted to weights. Cells are
 * sampled away from the printed values and outlines, so the comparisons of
 * filled areas are exact. On failure the image goes to build/test-out/
 * (always, with ATTNVIZ_TEST_DUMP=1).
 * Run from the repository root with SDL_VIDEODRIVER=dummy. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "attnviz/app.h"
#include "attnviz/app_state.h"
#include "attnviz/colormap.h"
#include "attnviz/embed.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "attnviz/view.h"

#include "test_util.h"
#include "../src/view/text.h"

#define SENTENCE "the train left the station on time"
#define WIN_W 1280
#define WIN_H 800

static EmbedTable *table;

/* Under ASan: fontconfig 2.14 leaks 288 bytes while loading its configuration
 * in FcInit (fonts_find_default) unless FcFini is called at exit; that is the
 * library's, not attnviz's. Unused in normal builds. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:FcInitLoadConfigAndFonts\nleak:libfontconfig.so\n";
}

/* The dark theme's accent and mask colours (view.c, dark_theme). */
static const Rgb ACCENT_DARK = {255, 179, 0};
static const Rgb MASK_DARK = {74, 76, 86};
static const Rgb BG_DARK = {20, 22, 26};

/* ---- fixtures ---------------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    return test_sdl_dummy() < 0 || test_load_embeddings(&table) < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    embed_destroy(table);
    SDL_Quit();
    return 0;
}

static void make_model(Model *m, const char *text, int causal, int heads)
{
    AttnConfig cfg = attn_config_default();
    cfg.causal = causal;
    cfg.heads = heads;
    assert_int_equal(model_init(m, table, &cfg), 0);
    assert_int_equal(model_set_text(m, text, strlen(text)), 0);
    assert_int_equal(model_compute(m), 0);
    assert_int_equal(m->T, 7);
}

/* An offscreen 1280×800 window: surface, software renderer, view. */
typedef struct Canvas {
    SDL_Surface *surf;
    SDL_Renderer *r;
    View *v;
} Canvas;

static void canvas_open(Canvas *c, int w, int h)
{
    AttnErr err;
    memset(&err, 0, sizeof err);
    c->surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB888);
    assert_non_null(c->surf);
    c->r = SDL_CreateSoftwareRenderer(c->surf);
    assert_non_null(c->r);
    c->v = view_create(c->r, test_fonts(), &err);
    if (!c->v)
        fprintf(stderr, "view_create: %s\n", err.msg);
    assert_non_null(c->v);
}

static void canvas_close(Canvas *c)
{
    view_destroy(c->v);
    SDL_DestroyRenderer(c->r);
    SDL_FreeSurface(c->surf);
    memset(c, 0, sizeof *c);
}

static void window_state(ViewState *s, Model *m)
{
    view_state_init(s, m);
    s->dark = 1;
    s->sentence = m->text;
    s->cursor = (int)strlen(m->text);
}

/* As the app draws a frame: the maps of s's head and matrix (of m, s's
 * model), layout, draw. */
static void draw_window(Canvas *c, Model *m, ViewState *s, ViewLayout *l)
{
    view_state_set_model(s, m);
    source_sentence_controls(s, NULL);
    view_layout(c->v, s, c->surf->w, c->surf->h, l);
    view_draw_window(c->v, c->r, s, l);
    SDL_RenderPresent(c->r);
}

/* ---- pixels -------------------------------------------------------------------- */

static Rgb pixel(SDL_Surface *s, int x, int y)
{
    Rgb o = {0, 0, 0};
    if (x < 0 || y < 0 || x >= s->w || y >= s->h)
        return o;
    const uint8_t *p = (const uint8_t *)s->pixels + (size_t)y * s->pitch +
                       (size_t)x * s->format->BytesPerPixel;
    Uint32 v = 0;
    memcpy(&v, p, s->format->BytesPerPixel);
    Uint8 a;
    SDL_GetRGBA(v, s->format, &o.r, &o.g, &o.b, &a);
    return o;
}

static int rgb_eq(Rgb a, Rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

/* Write the surface to build/test-out/NAME.png to look at. */
static void dump(SDL_Surface *s, const char *name)
{
    char path[256];
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    snprintf(path, sizeof path, "build/test-out/%s.png", name);
    if (IMG_SavePNG(s, path) == 0)
        fprintf(stderr, "  wrote %s\n", path);
}

/* Top-left pixel of heatmap cell (i, j) in the window layout (view.c cell_x/y). */
static int cell_px(const ViewLayout *l, int j)
{
    return l->grid.x + (int)lroundf((j - l->col0) * l->cell);
}

static int cell_py(const ViewLayout *l, int i)
{
    return l->grid.y + (int)lroundf((i - l->row0) * l->cell);
}

/* The default scale of weights: fixed 0 to 1, so a weight w is the colour
 * map at t = w itself, whatever the matrix's largest weight. */
static ColorScale weights_scale(const Model *m, int head, ColormapId cmap)
{
    (void)m;
    (void)head;
    ColorScale cs = {cmap, 0.0f, 1.0f, 0};
    return cs;
}

/* Expected colour of cell (i, j) of the weights. */
static Rgb weight_rgb(const Model *m, int head, ColormapId cmap, int i, int j)
{
    ColorScale cs = weights_scale(m, head, cmap);
    return colormap_scale_rgb(&cs, model_matrix(m, MODEL_WEIGHTS, head)[(size_t)i * m->T + j]);
}

/* Check the two inner corners of a cell (inset px from its edges: away from
 * the outlines and from the value printed in the middle). */
static int check_cell(SDL_Surface *s, const ViewLayout *l, int i, int j, Rgb want,
                      const char *what)
{
    int x0 = cell_px(l, j), y0 = cell_py(l, i);
    int x1 = cell_px(l, j + 1), y1 = cell_py(l, i + 1);
    int inset = 5;
    int pts[2][2] = {{x0 + inset, y0 + inset}, {x1 - 1 - inset, y1 - 1 - inset}};
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        Rgb got = pixel(s, pts[k][0], pts[k][1]);
        if (!rgb_eq(got, want)) {
            print_message("%s cell (%d,%d) at (%d,%d): got %d,%d,%d, want %d,%d,%d\n", what, i,
                          j, pts[k][0], pts[k][1], got.r, got.g, got.b, want.r, want.g, want.b);
            bad++;
        }
    }
    return bad;
}

/* ---- the window ------------------------------------------------------------------ */

static void test_layout_geometry(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 0, 1);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    ViewLayout l;
    source_sentence_controls(&s, NULL);
    view_layout(c.v, &s, WIN_W, WIN_H, &l);
    assert_int_equal(l.w, WIN_W);
    assert_int_equal(l.h, WIN_H);
    /* every token fits: no panning, square cells of a readable size */
    assert_int_equal(l.rows_vis, 7);
    assert_int_equal(l.cols_vis, 7);
    assert_int_equal(l.row0, 0);
    assert_int_equal(l.col0, 0);
    assert_true(l.cell >= 30.0f && l.cell <= 90.0f);
    assert_int_equal(l.grid.w, (int)lroundf(7 * l.cell));
    assert_int_equal(l.grid.h, (int)lroundf(7 * l.cell));
    /* the grid sits inside the heatmap panel, the colour bar to its right */
    assert_true(l.grid.x >= l.heatmap.x && l.grid.x + l.grid.w <= l.heatmap.x + l.heatmap.w);
    assert_true(l.grid.y >= l.heatmap.y && l.grid.y + l.grid.h <= l.heatmap.y + l.heatmap.h);
    assert_true(l.colorbar.x >= l.grid.x + l.grid.w);
    /* hit testing agrees with the drawing geometry, for every cell */
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++) {
            int hi = -1, hj = -1;
            int x = cell_px(&l, j) + (int)(l.cell / 2), y = cell_py(&l, i) + (int)(l.cell / 2);
            assert_int_equal(view_hit_cell(&l, x, y, &hi, &hj), 1);
            assert_int_equal(hi, i);
            assert_int_equal(hj, j);
        }
    int i = -1;
    assert_int_equal(view_hit_row_label(&l, l.grid.x - 10, cell_py(&l, 4) + 5, &i), 1);
    assert_int_equal(i, 4);
    int hi, hj;
    assert_int_equal(view_hit_cell(&l, l.grid.x - 1, l.grid.y + 5, &hi, &hj), 0);
    assert_int_equal(view_hit_cell(&l, l.grid.x + l.grid.w, l.grid.y + 5, &hi, &hj), 0);
    /* the control strip: buttons in order, inside the strip */
    assert_true(s.n_ctl >= 16);
    for (int k = 0; k < s.n_ctl; k++) {
        SDL_Rect b = l.ctl[k];
        assert_true(b.w > 0 && b.h > 0);
        assert_true(b.x + b.w <= l.controls.x + l.controls.w);
        assert_int_equal(view_hit_control(&l, b.x + b.w / 2, b.y + b.h / 2), k);
        if (k)
            assert_true(b.x > l.ctl[k - 1].x);
    }
    canvas_close(&c);
    model_destroy(&m);
}

static void test_window_cells_match_colour_scale(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 0, 1);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    ViewLayout l;
    draw_window(&c, &m, &s, &l);
    int bad = 0;
    for (int i = 0; i < m.T; i++)
        for (int j = 0; j < m.T; j++)
            bad += check_cell(c.surf, &l, i, j, weight_rgb(&m, 0, CMAP_VIRIDIS, i, j), "weights");
    /* the background is the dark theme's */
    Rgb bg = pixel(c.surf, 2, 2);
    if (!rgb_eq(bg, BG_DARK)) {
        print_message("background %d,%d,%d\n", bg.r, bg.g, bg.b);
        bad++;
    }
    if (bad || getenv("ATTNVIZ_TEST_DUMP"))
        dump(c.surf, "view_window_cells");
    assert_int_equal(bad, 0);

    /* another colour map and raw scores (diverging, centred on 0) */
    s.cmap = CMAP_MAGMA;
    s.matrix = MODEL_SCORES;
    draw_window(&c, &m, &s, &l);
    const float *S = model_matrix(&m, MODEL_SCORES, 0);
    ColorScale cs = colormap_scale_for(S, m.T, m.T, 0, 1, CMAP_MAGMA);
    assert_int_equal(cs.id, CMAP_DIVERGING);
    for (int i = 0; i < m.T; i++)
        for (int j = 0; j < m.T; j++)
            bad += check_cell(c.surf, &l, i, j, colormap_scale_rgb(&cs, S[i * m.T + j]), "scores");
    if (bad)
        dump(c.surf, "view_window_scores");
    assert_int_equal(bad, 0);
    canvas_close(&c);
    model_destroy(&m);
}

/* Cells (i, j) and (j, i) hold different weights and the drawing keeps them
 * apart: with random weights Wq != Wk the scores are not symmetric either. */
static int check_pair(Canvas *c, const ViewLayout *l, const Model *m, int i, int j)
{
    const float *W = model_matrix(m, MODEL_WEIGHTS, 0);
    assert_true(fabsf(W[i * m->T + j] - W[j * m->T + i]) > 0.01f);
    Rgb cij = weight_rgb(m, 0, CMAP_VIRIDIS, i, j), cji = weight_rgb(m, 0, CMAP_VIRIDIS, j, i);
    assert_false(rgb_eq(cij, cji));
    return check_cell(c->surf, l, i, j, cij, "pair") + check_cell(c->surf, l, j, i, cji, "pair");
}

static void test_window_not_transposed(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 0, 1);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    s.query = 6; /* keep the outline off the rows checked */
    ViewLayout l;
    /* identity weights: rows are normalised, columns are not */
    draw_window(&c, &m, &s, &l);
    int bad = check_pair(&c, &l, &m, 1, 0);
    /* random weights: (1,4) "train"->"station" differs from (4,1) */
    model_set_seed(&m, 1);
    assert_int_equal(model_compute(&m), 0);
    draw_window(&c, &m, &s, &l);
    bad += check_pair(&c, &l, &m, 1, 4);
    if (bad)
        dump(c.surf, "view_not_transposed");
    assert_int_equal(bad, 0);
    canvas_close(&c);
    model_destroy(&m);
}

/* Accent on the selected row's border: its top and bottom edges and the left
 * edge beside the grid; another row's border is plain cell colour. */
static int row_outlined(SDL_Surface *s, const ViewLayout *l, int i)
{
    int y0 = cell_py(l, i), y1 = cell_py(l, i + 1);
    int xm = cell_px(l, 3) + 7;
    return rgb_eq(pixel(s, xm, y0), ACCENT_DARK) && rgb_eq(pixel(s, xm, y0 + 1), ACCENT_DARK) &&
           rgb_eq(pixel(s, xm, y1 - 1), ACCENT_DARK) &&
           rgb_eq(pixel(s, l->grid.x - 1, (y0 + y1) / 2), ACCENT_DARK) &&
           rgb_eq(pixel(s, l->grid.x + l->grid.w, (y0 + y1) / 2), ACCENT_DARK);
}

static int row_has_accent(SDL_Surface *s, const ViewLayout *l, int i)
{
    int y0 = cell_py(l, i), y1 = cell_py(l, i + 1);
    for (int x = l->grid.x - 1; x <= l->grid.x + l->grid.w; x += 3) {
        if (rgb_eq(pixel(s, x, y0 + 3), ACCENT_DARK) || rgb_eq(pixel(s, x, y1 - 4), ACCENT_DARK))
            return 1;
    }
    return rgb_eq(pixel(s, l->grid.x - 1, (y0 + y1) / 2), ACCENT_DARK);
}

static void test_window_selected_row(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 0, 1);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    ViewLayout l;
    int bad = 0;
    for (int q = 0; q < m.T; q += 3) {
        s.query = q;
        draw_window(&c, &m, &s, &l);
        if (!row_outlined(c.surf, &l, q)) {
            print_message("query %d: row not outlined in the accent colour\n", q);
            bad++;
        }
        for (int i = 0; i < m.T; i++)
            if (i != q && row_has_accent(c.surf, &l, i)) {
                print_message("query %d: row %d has accent pixels\n", q, i);
                bad++;
            }
        if (bad) {
            dump(c.surf, "view_selected_row");
            break;
        }
    }
    assert_int_equal(bad, 0);
    /* no selection: no outline anywhere */
    s.query = -1;
    draw_window(&c, &m, &s, &l);
    for (int i = 0; i < m.T; i++)
        bad += row_has_accent(c.surf, &l, i);
    if (bad)
        dump(c.surf, "view_no_selection");
    assert_int_equal(bad, 0);
    canvas_close(&c);
    model_destroy(&m);
}

static void test_window_causal_mask(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 1, 1);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    s.query = 6;
    ViewLayout l;
    draw_window(&c, &m, &s, &l);
    /* the mask colour is not a colour of the map */
    Rgb near = colormap_rgb(CMAP_VIRIDIS, colormap_invert(CMAP_VIRIDIS, MASK_DARK));
    assert_false(rgb_eq(near, MASK_DARK));
    int bad = 0;
    for (int i = 0; i < m.T; i++)
        for (int j = 0; j < m.T; j++) {
            if (j > i) {
                /* top-left corner: the hatch runs bottom-left to top-right */
                Rgb got = pixel(c.surf, cell_px(&l, j) + 5, cell_py(&l, i) + 5);
                if (!rgb_eq(got, MASK_DARK)) {
                    print_message("masked (%d,%d): got %d,%d,%d\n", i, j, got.r, got.g, got.b);
                    bad++;
                }
            } else {
                bad += check_cell(c.surf, &l, i, j, weight_rgb(&m, 0, CMAP_VIRIDIS, i, j), "causal");
            }
        }
    /* row 0 attends only to itself: weight 1, the top of the map */
    assert_float_equal(model_matrix(&m, MODEL_WEIGHTS, 0)[0], 1.0f, 1e-6f);
    Rgb top = colormap_rgb(CMAP_VIRIDIS, 1.0f);
    bad += check_cell(c.surf, &l, 0, 0, top, "row 0");
    if (bad || getenv("ATTNVIZ_TEST_DUMP"))
        dump(c.surf, "view_causal");
    assert_int_equal(bad, 0);
    canvas_close(&c);
    model_destroy(&m);
}

static void test_window_heads_average(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 0, 2);
    model_set_seed(&m, 7);
    assert_int_equal(model_compute(&m), 0);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    s.query = 6;
    ViewLayout l;
    int bad = 0;
    int heads[3] = {0, 1, MODEL_HEAD_AVG};
    for (int k = 0; k < 3; k++) {
        s.head = heads[k];
        draw_window(&c, &m, &s, &l);
        for (int i = 0; i < m.T; i += 2)
            for (int j = 0; j < m.T; j++)
                bad += check_cell(c.surf, &l, i, j, weight_rgb(&m, heads[k], CMAP_VIRIDIS, i, j),
                                  "head");
        if (bad) {
            dump(c.surf, "view_heads");
            break;
        }
    }
    assert_int_equal(bad, 0);
    canvas_close(&c);
    model_destroy(&m);
}

/* Odd window sizes and states draw without crashing (ASan checks the rest). */
static void test_window_odd_sizes(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {2, 800}, {1280, 1}, {320, 200}, {999, 639},
                                   {1000, 640}, {3000, 300}, {640, 2000}};
    Model m;
    make_model(&m, SENTENCE, 1, 1);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        Canvas c;
        canvas_open(&c, sizes[k][0], sizes[k][1]);
        ViewState s;
        window_state(&s, &m);
        s.hover_i = 2;
        s.hover_j = 5;
        s.key = 3;
        s.help = k % 2;
        s.zoom = k % 3 ? 1.0f : 5.0f;
        s.pan_row = 3;
        s.pan_col = 100;
        s.edit_target = (EditTarget)(k % EDIT_COUNT);
        s.status = "a status message";
        ViewLayout l;
        draw_window(&c, &m, &s, &l);
        int i, j;
        view_hit_cell(&l, sizes[k][0] / 2, sizes[k][1] / 2, &i, &j);
        canvas_close(&c);
    }
    /* an empty sentence */
    assert_int_equal(model_set_text(&m, "", 0), 0);
    assert_int_equal(model_compute(&m), 0);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    s.query = -1;
    ViewLayout l;
    draw_window(&c, &m, &s, &l);
    canvas_close(&c);
    model_destroy(&m);
}

/* ---- PNG panel export ------------------------------------------------------------ */

/* Find the grid in an exported heatmap: the top-left pixel of cell (0, 0),
 * then the run of row 0's colours to the right gives the grid width. */
static int find_grid(SDL_Surface *s, const Model *m, int *gx, int *gy, float *cell)
{
    int T = m->T;
    Rgb row0[64];
    for (int j = 0; j < T; j++)
        row0[j] = weight_rgb(m, 0, CMAP_VIRIDIS, 0, j);
    for (int y = 0; y + 3 < s->h; y++)
        for (int x = 0; x + 3 < s->w; x++) {
            if (!rgb_eq(pixel(s, x, y), row0[0]) || !rgb_eq(pixel(s, x + 3, y + 3), row0[0]) ||
                !rgb_eq(pixel(s, x + 3, y), row0[0]) || !rgb_eq(pixel(s, x, y + 3), row0[0]))
                continue;
            int x1 = x;
            for (;;) {
                Rgb p = pixel(s, x1, y + 2);
                int in = 0;
                for (int j = 0; j < T; j++)
                    in |= rgb_eq(p, row0[j]);
                if (!in || x1 >= s->w)
                    break;
                x1++;
            }
            *gx = x;
            *gy = y;
            *cell = (float)(x1 - x) / T;
            return 1;
        }
    return 0;
}

static SDL_Surface *load_rgb(const char *path)
{
    SDL_Surface *img = IMG_Load(path);
    if (!img)
        return NULL;
    SDL_Surface *rgb = SDL_ConvertSurfaceFormat(img, SDL_PIXELFORMAT_RGB888, 0);
    SDL_FreeSurface(img);
    return rgb;
}

static void test_panel_png_scales(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 0, 1);
    ViewState s;
    view_state_init(&s, &m);
    s.dark = 0;
    char dir[] = "/tmp/attnviz-test-view-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int w[3] = {0}, h[3] = {0};
    float cells[3] = {0};
    for (int sc = 1; sc <= 2; sc++) {
        AttnErr err;
        memset(&err, 0, sizeof err);
        s.scale = (float)sc;
        SDL_Surface *surf = view_render_panel(test_fonts(), &s, PANEL_HEATMAP, &err);
        if (!surf)
            fprintf(stderr, "view_render_panel: %s\n", err.msg);
        assert_non_null(surf);
        assert_int_equal(surf->format->format, SDL_PIXELFORMAT_RGB888);
        w[sc] = surf->w;
        h[sc] = surf->h;
        char path[256];
        snprintf(path, sizeof path, "%s/heat-%d.png", dir, sc);
        assert_int_equal(export_save_png(surf, path, &err), 0);
        SDL_Surface *img = load_rgb(path);
        assert_non_null(img);
        assert_int_equal(img->w, surf->w);
        assert_int_equal(img->h, surf->h);

        int gx, gy, bad = 0;
        float cell;
        if (!find_grid(img, &m, &gx, &gy, &cell)) {
            print_message("scale %d: grid not found\n", sc);
            bad++;
        } else {
            cells[sc] = cell;
            ColorScale cs = weights_scale(&m, 0, CMAP_VIRIDIS);
            const float *W = model_matrix(&m, MODEL_WEIGHTS, 0);
            for (int i = 0; i < m.T; i++)
                for (int j = 0; j < m.T; j++) {
                    /* centre column, above the printed value */
                    int x = gx + (int)lroundf((j + 0.5f) * cell);
                    int y = gy + (int)lroundf(i * cell + cell / 6);
                    Rgb got = pixel(img, x, y);
                    float t = colormap_invert(CMAP_VIRIDIS, got);
                    float want = W[i * m.T + j] / cs.hi;
                    Rgb exact = colormap_scale_rgb(&cs, W[i * m.T + j]);
                    if (fabsf(t - want) > 0.01f || !rgb_eq(got, exact)) {
                        print_message("scale %d cell (%d,%d) at (%d,%d): %d,%d,%d -> %.4f, want %.4f\n",
                                      sc, i, j, x, y, got.r, got.g, got.b, (double)t, (double)want);
                        bad++;
                    }
                }
        }
        if (bad || getenv("ATTNVIZ_TEST_DUMP")) {
            char name[64];
            snprintf(name, sizeof name, "view_panel_scale%d", sc);
            dump(img, name);
        }
        SDL_FreeSurface(img);
        SDL_FreeSurface(surf);
        unlink(path);
        assert_int_equal(bad, 0);
    }
    rmdir(dir);
    /* everything doubles, within a few pixels of rounding */
    assert_true(abs(w[2] - 2 * w[1]) <= 4);
    assert_true(abs(h[2] - 2 * h[1]) <= 4);
    assert_true(fabsf(cells[2] - 2 * cells[1]) <= 1.0f);
    /* T = 7: cells are the export's 40 px at scale 1 */
    assert_float_equal(cells[1], 40.0f, 0.5f);
    model_destroy(&m);
}

static int read_all(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    *data = malloc((size_t)n + 1);
    *len = fread(*data, 1, (size_t)n, f);
    fclose(f);
    return *len == (size_t)n ? 0 : -1;
}

static int same_pixels(SDL_Surface *a, SDL_Surface *b)
{
    if (a->w != b->w || a->h != b->h)
        return 0;
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++)
            if (!rgb_eq(pixel(a, x, y), pixel(b, x, y)))
                return 0;
    return 1;
}

/* The window's Ctrl+E and the command line's --export write the same file
 * for the same state. */
static void test_export_file_matches_app_export(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-test-export-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *argv[] = {"attnviz", "--query", "2", "--export-dir", dir, NULL};
    Options o;
    AttnErr err;
    memset(&err, 0, sizeof err);
    assert_int_equal(options_parse(&o, 5, argv, &err), 0);
    assert_int_equal(o.query, 1);
    Model m;
    make_model(&m, SENTENCE, 0, 1);

    char cli[300];
    snprintf(cli, sizeof cli, "%s/x.png", dir);
    assert_int_equal(export_file(&m, &o, cli, &err), 0);

    AppState *a = calloc(1, sizeof *a);
    assert_non_null(a);
    assert_int_equal(app_init(a, &m, &o, NULL), 0);
    assert_int_equal(a->vs.query, 1);
    assert_int_equal(app_export(a, 0), 0);
    assert_int_equal(a->export_count, 1);
    assert_non_null(strstr(a->last_export, "attnviz-heatmap-"));
    assert_non_null(strstr(a->status, "wrote"));
    assert_int_equal(a->status_err, 0);

    SDL_Surface *p1 = load_rgb(cli), *p2 = load_rgb(a->last_export);
    assert_non_null(p1);
    assert_non_null(p2);
    int same = same_pixels(p1, p2);
    if (!same) {
        dump(p1, "export_cli");
        dump(p2, "export_window");
    }
    assert_true(same);
    unsigned char *d1, *d2;
    size_t n1, n2;
    assert_int_equal(read_all(cli, &d1, &n1), 0);
    assert_int_equal(read_all(a->last_export, &d2, &n2), 0);
    assert_int_equal(n1, n2);
    assert_memory_equal(d1, d2, n1);
    free(d1);
    free(d2);

    /* the PNG is the model's figure drawn by the software renderer (scale
     * 2, light theme) */
    ViewState s;
    view_state_init(&s, &m);
    s.query = 1;
    s.scale = 2.0f;
    s.cscale = (ColorScaleMode)o.color_scale; /* the options' (the map's max by default) */
    SDL_Surface *direct = export_heatmap_surface(&m, &s, test_fonts(), &err);
    assert_non_null(direct);
    assert_true(same_pixels(direct, p1));
    SDL_FreeSurface(direct);

    /* a second export in the same second gets a new name */
    char first[4096];
    snprintf(first, sizeof first, "%s", a->last_export);
    assert_int_equal(app_export(a, 0), 0);
    assert_string_not_equal(first, a->last_export);
    unlink(a->last_export);

    /* a missing folder is an error in the status bar, nothing written */
    char missing[400];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    a->export_dir = missing;
    assert_int_equal(app_export(a, 0), -1);
    assert_int_equal(a->status_err, 1);
    assert_non_null(strstr(a->status, "does not exist"));

    SDL_FreeSurface(p1);
    SDL_FreeSurface(p2);
    unlink(cli);
    unlink(first);
    rmdir(dir);
    app_free(a);
    free(a);
    options_free(&o);
    model_destroy(&m);
}

static void test_panel_lines_and_both(void **state)
{
    (void)state;
    Model m;
    make_model(&m, SENTENCE, 1, 1);
    ViewState s;
    view_state_init(&s, &m);
    AttnErr err;
    memset(&err, 0, sizeof err);
    SDL_Surface *heat = view_render_panel(test_fonts(), &s, PANEL_HEATMAP, &err);
    SDL_Surface *lines = view_render_panel(test_fonts(), &s, PANEL_LINES, &err);
    SDL_Surface *both = view_render_panel(test_fonts(), &s, PANEL_BOTH, &err);
    assert_non_null(heat);
    assert_non_null(lines);
    assert_non_null(both);
    /* side by side: as wide as both parts, at least as tall as each */
    assert_true(both->w > heat->w && both->w > lines->w);
    assert_true(both->h >= heat->h);
    /* the light theme's white background, fully opaque pixels */
    Rgb corner = pixel(heat, 1, 1);
    assert_true(corner.r == 255 && corner.g == 255 && corner.b == 255);
    SDL_FreeSurface(heat);
    SDL_FreeSurface(lines);
    SDL_FreeSurface(both);
    model_destroy(&m);
}

/* A 300-token sentence: the bar's text stops short of the right-hand note
 * (T = 300 · …: the same pixels as with a one-word sentence), and the
 * thinned row labels near the selected query give way to its label (no
 * text-coloured pixel next to it). */
static void test_long_sentence_bar_and_labels(void **state)
{
    (void)state;
    char *text = malloc(300 * 24);
    assert_non_null(text);
    size_t len = 0;
    for (int k = 0; k < 300; k++)
        len += (size_t)sprintf(text + len, "%s%s", k ? " " : "", embed_word(table, (k * 37) % table->n));
    Model m;
    AttnConfig cfg = attn_config_default();
    assert_int_equal(model_init(&m, table, &cfg), 0);
    assert_int_equal(model_set_text(&m, text, len), 0);
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(m.T, 300);
    Canvas c;
    canvas_open(&c, WIN_W, WIN_H);
    ViewState s;
    window_state(&s, &m);
    s.cursor = 0;
    s.query = 101;
    ViewLayout l;

    /* the bar with one word: find where the note starts */
    s.sentence = "x";
    draw_window(&c, &m, &s, &l);
    SDL_Rect bar = l.sentence;
    int w = bar.w, mid = bar.y + bar.h / 2;
    Rgb *ref = malloc(sizeof(Rgb) * (size_t)w * bar.h);
    assert_non_null(ref);
    for (int y = 0; y < bar.h; y++)
        for (int x = 0; x < w; x++)
            ref[(size_t)y * w + x] = pixel(c.surf, bar.x + x, bar.y + y);
    Rgb panel = pixel(c.surf, bar.x + w - 3, mid);
    int note_x = -1;
    for (int x = w / 2; x < w && note_x < 0; x++)
        for (int y = 0; y < bar.h; y++)
            if (!rgb_eq(ref[(size_t)y * w + x], panel)) {
                note_x = x;
                break;
            }
    assert_true(note_x > w / 2);

    /* the long sentence: nothing of it from 8 px before the note on */
    s.sentence = text;
    draw_window(&c, &m, &s, &l);
    int bad = 0;
    for (int y = 0; y < bar.h; y++)
        for (int x = note_x - 8; x < w; x++)
            bad += !rgb_eq(pixel(c.surf, bar.x + x, bar.y + y), ref[(size_t)y * w + x]);
    if (bad)
        dump(c.surf, "view_long_bar");
    assert_int_equal(bad, 0);
    free(ref);

    /* row labels: thinned (cells of about a pixel), the selected one alone */
    assert_true(l.cell < 4.0f);
    int yq = cell_py(&l, s.query), white = 0;
    for (int y = yq - 14; y <= yq + 14; y++)
        for (int x = l.grid.x - 140; x < l.grid.x - 4; x++) {
            Rgb p = pixel(c.surf, x, y);
            /* text colour 230,230,230 (anti-aliased: bright and grey);
             * the accent 255,179,0 is never grey */
            white += p.r > 150 && p.g > 150 && p.b > 150 && abs(p.r - p.b) < 40;
        }
    if (white)
        dump(c.surf, "view_long_labels");
    assert_int_equal(white, 0);
    /* and the selected label is drawn */
    int accent = 0;
    for (int y = yq - 10; y <= yq + 10; y++)
        for (int x = l.grid.x - 140; x < l.grid.x - 4; x++) {
            Rgb p = pixel(c.surf, x, y);
            accent += p.r > 200 && p.g > 120 && p.g < 200 && p.b < 60;
        }
    assert_true(accent > 10);

    /* the query below the line diagram's rows: its lines leave from the
     * edge row's top ("↓ 277", the keys beyond named under the lines' ends),
     * none runs through the edge row over those names (none orange there) */
    s.query = 290;
    s.lines_scroll = 0;
    draw_window(&c, &m, &s, &l);
    assert_true(l.lines_vis > 0 && l.lines_vis < 290);
    float top = l.lines_left.y + (l.lines_left.h - l.lines_vis * l.line_step) / 2 + l.lines_vis * l.line_step;
    int orange = 0, lit = 0;
    for (int y = (int)top + 6; y < (int)(top + l.line_step); y++)
        for (int x = l.lines_left.x + l.lines_left.w; x < l.lines_right.x; x++) {
            Rgb p = pixel(c.surf, x, y);
            orange += p.r > 80 && p.b * 3 < p.r && p.g * 2 > p.r && p.g * 6 < p.r * 5;
        }
    for (int y = (int)(top - 4 * l.line_step); y < (int)top; y++) /* its lines do leave from above it */
        for (int x = l.lines_left.x + l.lines_left.w; x < l.lines_right.x; x++) {
            Rgb p = pixel(c.surf, x, y);
            lit += p.r > 80 && p.b * 3 < p.r && p.g * 2 > p.r && p.g * 6 < p.r * 5;
        }
    if (orange || lit < 20) {
        dump(c.surf, "view_long_lines_edge");
        fail_msg("%d orange pixels in the edge row below the diagram, %d in the rows above it", orange, lit);
    }
    canvas_close(&c);
    model_destroy(&m);
    free(text);
}

/* A panel text of more lines than the panel holds (a logit lens of many
 * layers at 1024×768): every line is drawn, the first across the panel,
 * the others in columns, each cut to its column with an ellipsis; a text
 * that fits is drawn as it is. */
static void test_panel_text_flows_into_columns(void **state)
{
    (void)state;
    Canvas c;
    canvas_open(&c, 1024, 768);
    Model m;
    make_model(&m, SENTENCE, 1, 1);
    ViewState s;
    ViewLayout l;
    window_state(&s, &m);
    view_state_set_model(&s, &m);
    s.m = NULL; /* a file's or a language model's maps: the panel is text */
    static char text[8000];
    size_t u = (size_t)snprintf(text, sizeof text, "Logit lens after the last token: each layer's top 5\n");
    for (int k = 0; k <= 28; k++)
        u += (size_t)snprintf(text + u, sizeof text - u, "row%02d: \xE2\x80\x9C" "station\xE2\x80\x9D 12.5%% "
                              "\xC2\xB7 \xE2\x80\x9C" "train\xE2\x80\x9D 3.1%% \xC2\xB7 \xE2\x80\x9C" "time\xE2\x80\x9D 1.0%%\n", k);
    s.no_model = text;
    view_layout(c.v, &s, 1024, 768, &l);
    static TextBox boxes[4096];
    int n = 0;
    text_record(boxes, 4096, &n);
    view_draw_window(c.v, c.r, &s, &l);
    text_record(NULL, 0, NULL);
    int seen[29] = {0}, cut = 0, xs = 0, last_x = -1;
    for (int k = 0; k < n && k < 4096; k++) {
        int row;
        SDL_Rect b = boxes[k].box;
        /* the step view's panel, under the maps (the editor's room beside
         * them shows the text too, without a model's weights to edit) */
        if (sscanf(boxes[k].text, "row%d:", &row) != 1 || row < 0 || row > 28 || b.y < l.step.y)
            continue;
        seen[row]++;
        cut += strstr(boxes[k].text, "\xE2\x80\xA6") != NULL;
        assert_true(b.x >= l.step.x && b.x + b.w <= l.step.x + l.step.w);
        assert_true(b.y + b.h <= l.step.y + l.step.h);
        xs += b.x != last_x;
        last_x = b.x;
    }
    for (int k = 0; k <= 28; k++)
        if (seen[k] != 1)
            fail_msg("row %d drawn %d times", k, seen[k]);
    assert_true(cut > 0);
    assert_true(xs >= 3); /* in columns */
    /* with a caption under it (the step view's "inside a head" line): the
     * rows flow above it, every one drawn, and the caption too */
    s.inside_caption = "Inside a head: the caption under the text";
    n = 0;
    text_record(boxes, 4096, &n);
    view_draw_window(c.v, c.r, &s, &l);
    text_record(NULL, 0, NULL);
    int rows_seen = 0, caption_y = -1, last_row_y = -1;
    for (int k = 0; k < n && k < 4096; k++) {
        int row;
        SDL_Rect b = boxes[k].box;
        if (b.y < l.step.y)
            continue;
        if (sscanf(boxes[k].text, "row%d:", &row) == 1) {
            rows_seen++;
            last_row_y = b.y > last_row_y ? b.y : last_row_y;
        } else if (strstr(boxes[k].text, "Inside a head")) {
            caption_y = b.y;
            assert_true(b.y + b.h <= l.step.y + l.step.h);
        }
    }
    assert_int_equal(rows_seen, 29);
    assert_true(caption_y > last_row_y);
    s.inside_caption = NULL;
    /* five lines fit: drawn whole, one under the other */
    text[0] = '\0';
    u = (size_t)snprintf(text, sizeof text, "What comes next\n");
    for (int k = 0; k < 4; k++)
        u += (size_t)snprintf(text + u, sizeof text - u, "row%02d: \xE2\x80\x9C" "station\xE2\x80\x9D\n", k);
    n = 0;
    text_record(boxes, 4096, &n);
    view_draw_window(c.v, c.r, &s, &l);
    text_record(NULL, 0, NULL);
    int whole = 0, x0 = -1;
    for (int k = 0; k < n && k < 4096; k++) {
        if (strncmp(boxes[k].text, "row", 3) != 0 || boxes[k].box.y < l.step.y)
            continue;
        assert_null(strstr(boxes[k].text, "\xE2\x80\xA6"));
        x0 = x0 < 0 ? boxes[k].box.x : x0;
        assert_int_equal(boxes[k].box.x, x0); /* one column */
        whole++;
    }
    assert_int_equal(whole, 4);
    model_destroy(&m);
    canvas_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_sentence_bar_and_labels),
        cmocka_unit_test(test_layout_geometry),
        cmocka_unit_test(test_window_cells_match_colour_scale),
        cmocka_unit_test(test_window_not_transposed),
        cmocka_unit_test(test_window_selected_row),
        cmocka_unit_test(test_window_causal_mask),
        cmocka_unit_test(test_window_heads_average),
        cmocka_unit_test(test_window_odd_sizes),
        cmocka_unit_test(test_panel_png_scales),
        cmocka_unit_test(test_export_file_matches_app_export),
        cmocka_unit_test(test_panel_lines_and_both),
        cmocka_unit_test(test_panel_text_flows_into_columns),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
