/* Head roles in the window (issue 26): the model view's marks (each map's
 * score as a bar of its height), I cycling the score, Y sorting the grid
 * (the maps where the order puts them, a click opening the map it shows),
 * U's score overview (its cells the scores, a click opening that head),
 * and Q's every head of the layer in the line diagram (each head's maps,
 * its colour's pixels there only while it is on; swatches and Shift+digit
 * switching). On the test's formula source (formula_source.h), an
 * attention file and the GPT-2 source on nano-sort. Offscreen, 1280×800.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attnviz/attn_write.h"
#include "attnviz/model_source.h"
#include "attnviz/head_scores.h"
#include "attnviz/maps_shown.h"
#include "attnviz/probe.h"
#include "attnviz/source.h"
#include "attnviz/theme.h"
#include "attnviz/wake.h"
#include "test_app_util.h"
#include "formula_source.h"
#include "../src/view/text.h"

#include <SDL_image.h>
#include <dirent.h>
#include <unistd.h>

#define FORMULA "formula:3,4,6"

static Rgb pixel(const Fix *f, int x, int y)
{
    const Uint32 *row = (const Uint32 *)((const Uint8 *)f->surf->pixels + (size_t)y * f->surf->pitch);
    Uint32 p = row[x];
    return (Rgb){(Uint8)(p >> 16), (Uint8)(p >> 8), (Uint8)p};
}

static int same(Rgb a, Rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

/* The previous-token score of the formula's map (l, h), in double precision. */
static double formula_previous(int l, int h)
{
    double sum = 0.0;
    for (int i = 1; i < 6; i++)
        sum += formula_weight(l, h, i, i - 1);
    return sum / 5.0;
}

static void press_score(Fix *f, const char *name)
{
    for (int k = 0; k < HEAD_SCORE_COUNT + 1; k++) {
        app_draw(f->a, f->r);
        if (f->a->vs.grid_score_name && strcmp(f->a->vs.grid_score_name, name) == 0)
            return;
        key(f, SDLK_i, 0);
    }
    fail_msg("no score %s", name);
}

/* Accent pixels in the bar beside map (l, h). */
static int bar_fill(Fix *f, int l, int h)
{
    const FigureGrid *g = &f->a->layout.grid_fig;
    FigRect m = figure_grid_map_rect(g, l, h);
    Rgb acc = theme_get(f->a->vs.dark)->accent;
    int n = 0;
    for (int y = m.y; y < m.y + m.h; y++)
        n += same(pixel(f, m.x + m.w + 4, y), acc);
    return n;
}

static void test_marks_and_sort(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, FORMULA), 0);
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    /* marked from the start with the induction score: every token distinct,
       so every map's is none (no bar) */
    assert_non_null(a->vs.grid_score);
    assert_string_equal(a->vs.grid_score_name, "induction");
    assert_true(isnan(a->vs.grid_score[0]));
    assert_int_equal(bar_fill(f, 0, 1), 0);
    press_score(f, "previous");
    for (int l = 0; l < 3; l++)
        for (int h = 0; h < 4; h++) {
            double want = formula_previous(l, h);
            assert_true(fabs(a->vs.grid_score[l * 4 + h] - want) < 1e-6);
            /* the bar as tall as the score's share of the map's height */
            FigRect m = figure_grid_map_rect(&a->layout.grid_fig, l, h);
            int fh = bar_fill(f, l, h);
            assert_true(abs(fh - (int)lround(want * m.h)) <= 1);
        }
    /* Y: sorted, highest first; the map of each slot where the order says */
    key(f, SDLK_y, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid_order);
    const FigureGrid *g = &a->layout.grid_fig;
    for (int p = 0; p < 12; p++) {
        int m = a->vs.grid_order[p];
        if (p > 0)
            assert_true(formula_previous(a->vs.grid_order[p - 1] / 4, a->vs.grid_order[p - 1] % 4) >=
                        formula_previous(m / 4, m % 4));
        FigRect r = figure_grid_map_rect(g, m / 4, m % 4);
        FigRect slot0 = figure_grid_map_rect(g, a->vs.grid_order[0] / 4, a->vs.grid_order[0] % 4);
        assert_int_equal(r.x, slot0.x + (p % 4) * (r.w + g->mark_w + g->gap));
        assert_int_equal(r.y, slot0.y + (p / 4) * (r.h + g->label_h + g->gap));
    }
    assert_true(g->label_h > 0); /* each map labelled: its layer and head */
    /* the best previous-token head: one token back (head 1), sharpest (layer 0) */
    assert_int_equal(a->vs.grid_order[0], 0 * 4 + 1);
    /* arrows move through the slots as drawn: from the first slot, Right is
       the second map, Down the fifth */
    for (int k = 0; k < 4; k++) {
        key(f, SDLK_UP, 0);
        key(f, SDLK_LEFT, 0);
    }
    app_draw(a, f->r);
    assert_int_equal(a->vs.grid_layer * 4 + a->vs.grid_head, a->vs.grid_order[0]);
    key(f, SDLK_DOWN, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.grid_layer * 4 + a->vs.grid_head, a->vs.grid_order[4]);
    key(f, SDLK_UP, 0);
    key(f, SDLK_RIGHT, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.grid_layer * 4 + a->vs.grid_head, a->vs.grid_order[1]);
    /* a click on the last slot opens the map drawn there */
    int last = a->vs.grid_order[11];
    FigRect r = figure_grid_map_rect(g, last / 4, last % 4);
    click(f, r.x + r.w / 2, r.y + r.h / 2);
    app_draw(a, f->r);
    assert_null(a->vs.grid);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            assert_true(fabs(attn_map_at(&a->vs.map, i, j) - formula_weight(last / 4, last % 4, i, j)) < 1e-6);
    /* back: still sorted; Y again: layer order, no labels */
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid_order);
    key(f, SDLK_y, 0);
    app_draw(a, f->r);
    assert_null(a->vs.grid_order);
    assert_int_equal(a->layout.grid_fig.label_h, 0);
}

/* 32 heads (Llama 3.2 1B's) in 1280 pixels: each mark is its bar alone,
 * the number left out, so the maps keep the room (12 heads keep numbers). */
static void test_many_heads_marks(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    enum { L = 2, H = 32, T = 4 };
    static float v[L * H * T * T];
    for (int m = 0; m < L * H; m++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++)
                v[(m * T + i) * T + j] = 1.0f / (float)(i + 1);
    char dir[] = "/tmp/attnviz-test-heads-many-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/many.npy", dir);
    AttnErr err = {0};
    assert_int_equal(attn_write_attention(path, v, L, H, T, T, NULL, &err), 0);
    assert_int_equal(open_now(a, path), 0);
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid_score);
    const FigureGrid *g = &a->layout.grid_fig;
    int bar_only = g->mark_w;
    assert_true(bar_only <= 8);
    FigRect m = figure_grid_map_rect(g, 0, 0);
    assert_true(m.w >= 2 * bar_only);
    assert_true(bar_fill(f, 0, 0) == 0); /* induction: none (no repeated tokens), an empty track */
    unlink(path);
    rmdir(dir);
    assert_int_equal(open_now(a, FORMULA), 0); /* 4 heads: the numbers beside the bars */
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    assert_true(a->layout.grid_fig.mark_w > 2 * bar_only);
}

static void test_overview_click(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, FORMULA), 0);
    key(f, SDLK_u, 0);
    app_draw(a, f->r);
    press_score(f, "previous");
    const AttnMap *sm = a->vs.score_map;
    assert_non_null(sm);
    assert_int_equal(sm->Tq, 3);
    assert_int_equal(sm->Tk, 4);
    for (int l = 0; l < 3; l++)
        for (int h = 0; h < 4; h++)
            assert_true(fabs(attn_map_at(sm, l, h) - formula_previous(l, h)) < 1e-6);
    assert_string_equal(sm->q_labels[2], "layer 3");
    assert_string_equal(sm->k_labels[3], "head 4");
    /* the cell's colour is the score's on the colour bar's scale */
    const Figure *fig = &a->layout.score_fig;
    int x = figure_cell_x(fig, 3) + 2, y = figure_cell_y(fig, 2) + 2;
    assert_true(same(pixel(f, x, y), colormap_scale_rgb(&fig->cb.cs, attn_map_at(sm, 2, 3))));
    /* a click on layer 3, head 4 opens that head */
    click(f, figure_cell_x(fig, 3) + (int)fig->cell / 2, figure_cell_y(fig, 2) + (int)fig->cell / 2);
    app_draw(a, f->r);
    assert_null(a->vs.grid);
    assert_null(a->vs.score_map);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            assert_true(fabs(attn_map_at(&a->vs.map, i, j) - formula_weight(2, 3, i, j)) < 1e-6);
    /* U again: the overview; U once more: the marked maps */
    key(f, SDLK_u, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.score_map);
    key(f, SDLK_u, 0);
    app_draw(a, f->r);
    assert_null(a->vs.score_map);
    assert_non_null(a->vs.grid_score);
}

/* Whether a drawn text holds needle (the text record of one frame). */
static int drawn(Fix *f, const char *needle)
{
    static TextBox boxes[2048];
    int n = 0, found = 0;
    text_record(boxes, 2048, &n);
    app_draw(f->a, f->r);
    text_record(NULL, 0, NULL);
    for (int k = 0; k < n && k < 2048; k++)
        found |= strstr(boxes[k].text, needle) != NULL;
    return found;
}

/* The overview read from the back of the room (issue 38, items 10, 11,
 * 13): its cells take at least 45 % of the window's height or 60 % of its
 * width (100 % and 132 %); a score in [0, 1] coloured on a fixed 0–1 scale
 * (the colour bar says so), Shift+C its other scales and back; entropy to
 * its largest always; the title says Enter opens, and Enter does. */
static void test_overview_readable(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, FORMULA), 0);
    key(f, SDLK_u, 0);
    press_score(f, "previous");
    for (int zoom = 0; zoom < 2; zoom++) {
        app_draw(a, f->r);
        const Figure *fig = &a->layout.score_fig;
        assert_true(fig->grid.h >= a->layout.h * 45 / 100 || fig->grid.w >= a->layout.w * 60 / 100);
        key(f, SDLK_PLUS, KMOD_LCTRL);
        key(f, SDLK_PLUS, KMOD_LCTRL);
    }
    key(f, SDLK_0, KMOD_LCTRL);
    app_draw(a, f->r);
    const Figure *fig = &a->layout.score_fig;
    double most = 0.0;
    for (int c = 0; c < 12; c++)
        most = fmax(most, formula_previous(c / 4, c % 4));
    assert_true(most < 0.9); /* so that 0–1 and 0 to the largest differ */
    /* fixed 0–1 by default, whatever the maps' scale (0 to their max) */
    assert_int_equal(a->vs.cscale, CSCALE_MAX);
    assert_float_equal(fig->cb.cs.lo, 0.0f, 1e-6f);
    assert_float_equal(fig->cb.cs.hi, 1.0f, 1e-6f);
    assert_non_null(strstr(fig->cb.caption, "previous, fixed 0\xE2\x80\x93" "1"));
    assert_true(drawn(f, "fixed 0\xE2\x80\x93" "1"));
    int x = figure_cell_x(fig, 3) + 2, y = figure_cell_y(fig, 2) + 2;
    assert_true(same(pixel(f, x, y), colormap_scale_rgb(&fig->cb.cs, attn_map_at(a->vs.score_map, 2, 3))));
    /* Shift+C: 0 to the largest, each layer to its own, fixed again; the
       maps' colour scale untouched */
    key(f, SDLK_c, KMOD_LSHIFT);
    app_draw(a, f->r);
    assert_float_equal(fig->cb.cs.hi, (float)most, 1e-5f);
    assert_non_null(strstr(fig->cb.caption, "0 to the largest"));
    key(f, SDLK_c, KMOD_LSHIFT);
    app_draw(a, f->r);
    assert_true(fig->cb.cs.per_row);
    key(f, SDLK_c, KMOD_LSHIFT);
    app_draw(a, f->r);
    assert_float_equal(fig->cb.cs.hi, 1.0f, 1e-6f);
    assert_int_equal(a->vs.cscale, CSCALE_MAX);
    /* entropy is no score in [0, 1]: 0 to its largest, Shift+C says so */
    press_score(f, "entropy");
    app_draw(a, f->r);
    assert_false(fig->cb.cs.per_row);
    assert_true(fig->cb.cs.hi > 1.0f);
    assert_non_null(strstr(fig->cb.caption, "entropy, 0 to the largest"));
    key(f, SDLK_c, KMOD_LSHIFT);
    assert_non_null(strstr(a->status, "not a score in [0, 1]"));
    /* the title says Enter opens; Down, Right, Enter open layer 2, head 2 */
    assert_true(drawn(f, "Enter or click: open"));
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_RIGHT, 0);
    key(f, SDLK_RETURN, 0);
    app_draw(a, f->r);
    assert_null(a->vs.grid);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            assert_true(fabs(attn_map_at(&a->vs.map, i, j) - formula_weight(1, 1, i, j)) < 1e-6);
}

/* Pixels of colour c in the PNG at path (its width and height too). */
static int png_pixels(const char *path, Rgb c, int *w, int *h)
{
    SDL_Surface *raw = IMG_Load(path);
    assert_non_null(raw);
    SDL_Surface *s = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_RGB888, 0);
    SDL_FreeSurface(raw);
    assert_non_null(s);
    int n = 0;
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
            Uint32 p = ((const Uint32 *)((const Uint8 *)s->pixels + (size_t)y * s->pitch))[x];
            n += same((Rgb){(Uint8)(p >> 16), (Uint8)(p >> 8), (Uint8)p}, c);
        }
    *w = s->w;
    *h = s->h;
    SDL_FreeSurface(s);
    return n;
}

/* Whether the file at path holds needle. */
static int file_has(const char *path, const char *needle)
{
    FILE *fp = fopen(path, "rb");
    static char buf[1 << 20];
    size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
    if (fp)
        fclose(fp);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

/* Ctrl+E exports what the model view shows (issue 38, item 2): G, Y, then
 * Ctrl+E writes every layer and head sorted, with their marks (the bars
 * in the light theme's accent), not the head view's heatmap; U, then
 * Ctrl+E the score overview as PNG and SVG (its colour bar fixed 0–1). */
static void test_model_view_export(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-heads-export-XXXXXX";
    assert_non_null(mkdtemp(dir));
    a->export_dir = dir;
    assert_int_equal(open_now(a, FORMULA), 0);
    key(f, SDLK_g, 0);
    press_score(f, "previous");
    key(f, SDLK_y, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid_order);
    int n0 = a->export_count, w, h;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(a->export_count, n0 + 1);
    assert_non_null(strstr(a->last_export, "/attnviz-model-view-"));
    const AttnTheme *light = theme_get(0);
    assert_true(png_pixels(a->last_export, light->accent, &w, &h) > 100); /* the bars */
    int bg = png_pixels(a->last_export, light->bg, &w, &h); /* (w and h set before they are read) */
    assert_true(bg > w * h / 4);
    assert_true(w > 600 && h > 400); /* 3 × 4 maps, not one 6 × 6 heatmap */
    /* and the same figure as SVG: the maps, each one's mark (its bar, its
       number) and its "L2 H2" */
    assert_non_null(strstr(a->status, " and .svg"));
    char svg[4200];
    size_t n = strlen(a->last_export);
    snprintf(svg, sizeof svg, "%.*s.svg", (int)(n - 4), a->last_export);
    assert_true(file_has(svg, "<g class=\"map\" data-layer=\"2\" data-head=\"3\""));
    assert_true(file_has(svg, "<g class=\"mark\" data-layer=\"2\" data-head=\"3\""));
    assert_true(file_has(svg, "<rect class=\"bar\""));
    assert_true(file_has(svg, ">L3<") && file_has(svg, ">H4<"));
    assert_true(file_has(svg, "by previous score, highest first"));
    assert_false(file_has(svg, ">head 4<")); /* sorted: no column headers */
    /* the overview: PNG and SVG */
    key(f, SDLK_u, 0);
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(a->export_count, n0 + 2);
    assert_non_null(strstr(a->last_export, "/attnviz-score-overview-"));
    assert_non_null(strstr(a->status, " and .svg"));
    bg = png_pixels(a->last_export, light->bg, &w, &h);
    assert_true(bg > w * h / 4);
    n = strlen(a->last_export);
    snprintf(svg, sizeof svg, "%.*s.svg", (int)(n - 4), a->last_export);
    assert_true(file_has(svg, ">previous, fixed 0\xE2\x80\x93" "1<"));
    assert_true(file_has(svg, ">layer 3<") && file_has(svg, ">head 4<"));
    /* no heatmap written; the folder cleaned */
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        assert_null(strstr(e->d_name, "heatmap"));
        char p[4300];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
        files++;
    }
    closedir(d);
    assert_int_equal(files, 4);
    rmdir(dir);
}

/* Pixels of the line diagram (between its two columns of tokens) near c. */
static int line_pixels(Fix *f, SDL_Color c)
{
    const ViewLayout *l = &f->a->layout;
    int x0 = l->lines_left.x + l->lines_left.w + 2, x1 = l->lines_right.x - 2, n = 0;
    for (int y = l->lines_left.y; y < l->lines_left.y + l->lines_left.h; y++)
        for (int x = x0; x < x1; x++) {
            Rgb p = pixel(f, x, y);
            n += abs(p.r - c.r) + abs(p.g - c.g) + abs(p.b - c.b) < 60;
        }
    return n;
}

/* Every head of the shown layer: Q, the maps, the colours, the switches. */
static void check_every_head(Fix *f, int H, int layer)
{
    AppState *a = f->a;
    key(f, SDLK_q, 0);
    app_draw(a, f->r);
    const AttnMaps *hm = a->vs.line_heads;
    assert_non_null(hm);
    assert_int_equal(hm->H, H);
    /* each head's map is the one H shows in the head view */
    int T = a->vs.map.Tq, Tk = a->vs.map.Tk;
    float *copy = malloc(sizeof *copy * (size_t)H * T * Tk);
    memcpy(copy, hm->v, sizeof *copy * (size_t)H * T * Tk);
    MapsShown *ms = a->kind->maps(a);
    for (int h = 0; h < H; h++) {
        while (ms->head != h)
            key(f, SDLK_h, 0);
        app_draw(a, f->r);
        assert_int_equal(ms->layer, layer);
        assert_memory_equal(a->vs.weights.v, copy + (size_t)h * T * Tk, sizeof *copy * (size_t)T * Tk);
    }
    free(copy);
    /* only head 3 on (two by keys, the rest by their swatches): its colour
       is in the diagram, head 1's is not; then head 1 alone */
    key(f, SDLK_1, KMOD_LSHIFT);
    key(f, SDLK_2, KMOD_LSHIFT);
    for (int h = 3; h < H; h++) {
        app_draw(a, f->r);
        click_rect(f, a->layout.head_swatch[h]);
    }
    app_draw(a, f->r);
    for (int h = 0; h < H; h++)
        assert_int_equal(a->vs.head_on[h], h == 2);
    SDL_Color c1 = view_head_color(0, a->vs.dark), c3 = view_head_color(2, a->vs.dark);
    assert_true(line_pixels(f, c3) > 30);
    assert_int_equal(line_pixels(f, c1), 0);
    app_draw(a, f->r);
    click_rect(f, a->layout.head_swatch[0]);
    key(f, SDLK_3, KMOD_LSHIFT);
    app_draw(a, f->r);
    assert_true(line_pixels(f, c1) > 30);
    assert_int_equal(line_pixels(f, c3), 0);
    /* Q again: one head's lines */
    key(f, SDLK_q, 0);
    app_draw(a, f->r);
    assert_null(a->vs.line_heads);
}

static void test_every_head_formula(void **state)
{
    Fix *f = *state;
    assert_int_equal(open_now(f->a, FORMULA), 0);
    key(f, SDLK_l, 0);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    check_every_head(f, 4, 1);
}

static void test_every_head_file(void **state)
{
    Fix *f = *state;
    assert_int_equal(open_now(f->a, "tests/fixtures/attention/torch_layers.npz"), 0);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    check_every_head(f, 4, 0);
}

static void test_every_head_gpt2(void **state)
{
    Fix *f = *state;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "CBABBCAB", 8, &err), 0);
    assert_int_equal(source_model.show(f->a, g), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0);
    check_every_head(f, 3, 1);
    /* the model view's marks on a model: duplicate and induction defined */
    key(f, SDLK_g, 0);
    app_draw(f->a, f->r);
    assert_false(isnan(f->a->vs.grid_score[0]));
}

/* The probe's tokens shown and kept (the shown source's MapsShown). */
static void assert_probe(Fix *f, uint64_t seed, int n)
{
    int want[PROBE_MAX_TOKENS];
    int T = probe_induction_tokens(want, n, -1, 3, seed); /* nano-sort: no bos, A B C */
    MapsShown *ms = f->a->kind->maps(f->a);
    assert_true(wait_maps(f));
    assert_int_equal(ms->probe_T, T);
    assert_memory_equal(ms->probe_ids, want, sizeof(int) * (size_t)T);
    assert_int_equal(f->a->vs.map.Tq, T);
    /* the maps are the probe's: its tokens in the labels */
    for (int i = 0; i < T; i++)
        assert_int_equal(f->a->vs.map.q_labels[i][0], "ABC"[want[i]]);
}

static void test_probe_window(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    char dir[] = "/tmp/attnviz-test-probe-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/probe.json", dir);
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "CBABBC", 6, &err), 0);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    /* Ctrl+P: seed 0 (no --seed), N 25 clamped to nano-sort's 11 positions: 5 */
    key(f, SDLK_p, KMOD_LCTRL);
    assert_probe(f, 0, 5);
    assert_non_null(a->vs.score_map);
    assert_string_equal(a->vs.grid_score_name, "induction");
    assert_non_null(strstr(a->status, "seed 0"));
    assert_non_null(strstr(a->vs.status_facts, "induction probe, seed 0")); /* shown while it is */
    /* the scores shown are the probe's maps' */
    MapsShown *ms = a->kind->maps(a);
    HeadScores hs[9];
    assert_int_equal(import_head_scores(ms->imp, hs, &err), 0);
    for (int m = 0; m < 9; m++)
        assert_true(fabs(attn_map_at(a->vs.score_map, m / 3, m % 3) - hs[m].s[HEAD_SCORE_INDUCTION]) < 1e-6);
    /* again: the next seed */
    key(f, SDLK_p, KMOD_LCTRL);
    assert_probe(f, 1, 5);
    /* saved, something else shown, opened: the same tokens run again */
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    assert_int_equal(open_now(a, path), 0);
    assert_ptr_equal(a->kind, &source_model);
    assert_probe(f, 1, 5);
    /* typing: the text again, the probe gone */
    key(f, SDLK_SLASH, 0); /* Enter opens a head in the model view */
    type(f, "A");
    key(f, SDLK_ESCAPE, 0);
    assert_true(wait_maps(f));
    assert_int_equal(a->kind->maps(a)->probe_T, 0);
    unlink(path);
    rmdir(dir);
}

static int setup_heads(void **state)
{
    setenv("ATTNVIZ_DATADIR", "assets", 1); /* nano-sort */
    return group_setup(state) < 0 || source_register(&source_formula) < 0 ? -1 : 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_marks_and_sort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_heads_marks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overview_click, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overview_readable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_view_export, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_head_formula, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_head_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_head_gpt2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_window, setup, teardown),
    };
    return cmocka_run_group_tests(tests, setup_heads, group_teardown);
}
