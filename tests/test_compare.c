/* Tests for the compare view (src/app/compare.c, src/view/compare.c): the
 * difference matrix against two separate Model computations in double, the
 * line saying what differs, unpinning, another sentence (no difference), the
 * export (one PNG of three panels, the difference as CSV) and the window's
 * three figures at two sizes. Same fixture as test_app.c; SDL dummy driver. */
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

#include "attnviz/app_state.h"
#include "attnviz/colormap.h"
#include "attnviz/model.h"
#include "attnviz/view.h"

#include "test_util.h"
#include "test_app_util.h"

static int apply(Fix *f, AppActionKind kind, int i, int j, float value)
{
    AppAction act = {kind, i, j, value};
    int changed = app_apply(f->a, &act);
    if (changed)
        app_draw(f->a, f->r);
    return changed;
}

/* The weights of head 0 of a fresh model with the fixture's weights and
 * sentence, cfg's settings (scale, causal) as given: double precision. */
static double *weights_with(Fix *f, int scale, int causal)
{
    Model m;
    AttnConfig cfg = f->m.cfg;
    cfg.scale = scale;
    cfg.causal = causal;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    assert_int_equal(attn_params_copy(&m.params, &f->m.params), 0);
    assert_int_equal(model_set_text(&m, f->m.text, strlen(f->m.text)), 0);
    assert_int_equal(model_compute(&m), 0);
    int T = m.T;
    const float *W = model_matrix(&m, MODEL_WEIGHTS, 0);
    double *out = malloc((size_t)T * T * sizeof *out);
    assert_non_null(out);
    for (int k = 0; k < T * T; k++)
        out[k] = W[k];
    model_destroy(&m);
    return out;
}

/* current − reference, from the two separate computations */
static double *expected_diff(Fix *f, int ref_scale, int cur_scale, int causal)
{
    double *r = weights_with(f, ref_scale, causal), *c = weights_with(f, cur_scale, causal);
    int T = f->m.T;
    for (int k = 0; k < T * T; k++)
        c[k] -= r[k];
    free(r);
    return c;
}

static void test_pin_scale_difference(void **state)
{
    Fix *f = *state;
    assert_null(f->a->vs.cmp_ref);
    assert_int_equal(apply(f, ACT_COMPARE, 0, 0, 0.0f), 1);
    assert_non_null(f->a->vs.cmp_ref);
    assert_string_equal(f->a->vs.cmp_what, "no difference");
    assert_int_equal(apply(f, ACT_TOGGLE_SCALE, 0, 0, 0.0f), 1);
    const ViewState *s = &f->a->vs;
    assert_non_null(s->cmp_diff);
    assert_string_equal(s->cmp_what, "scaled vs unscaled");
    assert_non_null(strstr(s->cmp_ref_label, "reference: scaled"));
    assert_non_null(strstr(s->cmp_cur_label, "current: unscaled"));
    assert_int_equal(s->cmp_diff->kind, ATTN_MAP_DIFF);
    int T = f->m.T;
    assert_int_equal(s->cmp_diff->Tq, T);
    assert_int_equal(s->cmp_diff->Tk, T);
    double *want = expected_diff(f, 1, 0, 0);
    double *ref = weights_with(f, 1, 0);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            assert_true(fabs(attn_map_at(s->cmp_diff, i, j) - want[i * T + j]) < 1e-6);
            assert_true(fabs(attn_map_at(s->cmp_ref, i, j) - ref[i * T + j]) < 1e-6);
        }
    /* not all zero: the difference is there */
    double most = 0;
    for (int k = 0; k < T * T; k++)
        most = fabs(want[k]) > most ? fabs(want[k]) : most;
    assert_true(most > 1e-3);
    free(want);
    free(ref);
    /* unpin: the heatmap alone, laid out as before the pin */
    assert_int_equal(apply(f, ACT_COMPARE, 0, 0, 0.0f), 1);
    assert_null(f->a->vs.cmp_ref);
    assert_null(f->a->vs.cmp_diff);
    ViewLayout l;
    view_layout(f->a->view, &f->a->vs, 1280, 800, &l);
    assert_memory_equal(&l.heat.grid, &f->a->layout.heat.grid, sizeof l.heat.grid);
    assert_true(f->a->layout.heat.grid.w > f->a->layout.heatmap.w / 3);
}

static void test_head_and_wq(void **state)
{
    Fix *f = *state;
    apply(f, ACT_STEP_HEADS, 1, 0, 0.0f); /* 2 heads */
    assert_int_equal(f->m.res.h, 2);
    apply(f, ACT_COMPARE, 0, 0, 0.0f);
    apply(f, ACT_CYCLE_HEAD, 1, 0, 0.0f);
    assert_int_equal(f->a->vs.head, 1);
    assert_string_equal(f->a->vs.cmp_what, "head 1 vs head 2");
    /* the difference is head 2's weights − head 1's */
    int T = f->m.T;
    const float *w0 = model_matrix(&f->m, MODEL_WEIGHTS, 0), *w1 = model_matrix(&f->m, MODEL_WEIGHTS, 1);
    for (int k = 0; k < T * T; k++)
        assert_true(fabs(attn_map_at(f->a->vs.cmp_diff, k / T, k % T) - ((double)w1[k] - w0[k])) < 1e-6);
    apply(f, ACT_CYCLE_HEAD, -1, 0, 0.0f);
    assert_string_equal(f->a->vs.cmp_what, "no difference");
    /* an edit of Wq (head 1's, shown) */
    apply(f, ACT_EDIT_TARGET, EDIT_WQ, 0, 0.0f);
    apply(f, ACT_SET_CELL, 0, 1, 0.75f);
    assert_string_equal(f->a->vs.cmp_what, "edited Wq");
    assert_non_null(strstr(f->a->vs.cmp_cur_label, "edited Wq"));
    /* undone: nothing differs again */
    apply(f, ACT_UNDO, 0, 0, 0.0f);
    assert_string_equal(f->a->vs.cmp_what, "no difference");
    /* two at once */
    apply(f, ACT_TOGGLE_SCALE, 0, 0, 0.0f);
    apply(f, ACT_CYCLE_HEAD, 1, 0, 0.0f);
    assert_string_equal(f->a->vs.cmp_what, "scaled vs unscaled, head 1 vs head 2");
}

static void test_another_sentence(void **state)
{
    Fix *f = *state;
    apply(f, ACT_COMPARE, 0, 0, 0.0f);
    app_set_sentence(f->a, "i am happy");
    app_draw(f->a, f->r);
    const ViewState *s = &f->a->vs;
    assert_non_null(s->cmp_ref);
    assert_null(s->cmp_diff);
    assert_non_null(strstr(s->cmp_what, "another sentence"));
    assert_non_null(strstr(s->cmp_what, "a different number of tokens: no difference map"));
    assert_int_equal(s->cmp_ref->Tq, 7);
    assert_int_equal(s->map.Tq, 3);
    /* back to the pinned sentence: a difference again */
    app_set_sentence(f->a, SENTENCE);
    app_draw(f->a, f->r);
    assert_non_null(f->a->vs.cmp_diff);
    assert_string_equal(f->a->vs.cmp_what, "no difference");
}

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

/* the inner top-left corner of cell (i, j) of figure fg at x offset ox */
static Rgb cell_rgb(SDL_Surface *img, const Figure *fg, int ox, int i, int j)
{
    return pixel(img, ox + figure_cell_x(fg, j) + 5, figure_cell_y(fg, i) + 5);
}

static int same_rgb(Rgb a, Rgb b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b;
}

/* The CSV's numbers (after the header and each row's label) into v. */
static int read_csv(const char *path, double *v, int n)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    char line[8192];
    int k = 0;
    if (!fgets(line, sizeof line, fp) || strncmp(line, "query,", 6) != 0) {
        fclose(fp);
        return -1;
    }
    while (fgets(line, sizeof line, fp)) {
        char *p = strchr(line, ',');
        while (p && k < n) {
            v[k++] = strtod(p + 1, NULL);
            p = strchr(p + 1, ',');
        }
    }
    fclose(fp);
    return k;
}

static void test_export(void **state)
{
    Fix *f = *state;
    char dir[] = "/tmp/attnviz-test-compare-XXXXXX";
    assert_non_null(mkdtemp(dir));
    f->a->export_dir = dir;
    apply(f, ACT_TOGGLE_MASK, 0, 0, 0.0f); /* row 0: weight 1 on key 0, scaled or not */
    apply(f, ACT_COMPARE, 0, 0, 0.0f);
    apply(f, ACT_TOGGLE_SCALE, 0, 0, 0.0f);
    int n0 = f->a->export_count;
    assert_int_equal(apply(f, ACT_EXPORT, 0, 0, 0.0f), 1);
    assert_int_equal(f->a->export_count, n0 + 2);
    assert_int_equal(f->a->status_err, 0);
    char png[4200], csv[4200];
    snprintf(png, sizeof png, "%s", f->a->last_export);
    size_t n = strlen(png);
    assert_true(n > 4 && strcmp(png + n - 4, ".png") == 0);
    snprintf(csv, sizeof csv, "%.*s.csv", (int)(n - 4), png);
    assert_non_null(strstr(f->a->status, png));
    assert_non_null(strstr(f->a->status, csv));

    int T = f->m.T;
    double *want = expected_diff(f, 1, 0, 1);
    double *got = calloc((size_t)T * T, sizeof *got);
    assert_int_equal(read_csv(csv, got, T * T), T * T);
    for (int k = 0; k < T * T; k++)
        assert_true(fabs(got[k] - want[k]) < 1e-6);

    /* the PNG: three panels' width; the middle's cells in the current
     * weights' colours; the difference diverging (0: the centre colour) */
    SDL_Surface *raw = IMG_Load(png);
    assert_non_null(raw);
    SDL_Surface *img = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_RGB888, 0);
    SDL_FreeSurface(raw);
    ViewState s = f->a->vs;
    view_state_set_model(&s, &f->m);
    s.scale = 2.0f * f->a->ui_scale * f->a->dpi_scale;
    Figure fg[3];
    int x[3];
    view_compare_export_layout(&s, s.facts, fg, x);
    assert_int_equal(img->w, fg[0].w + fg[1].w + fg[2].w);
    assert_true(img->h >= fg[1].h && img->h >= fg[2].h);
    assert_int_equal(fg[1].Tq, T);
    assert_int_equal(fg[2].Tq, T);
    const float *W = model_matrix(&f->m, MODEL_WEIGHTS, 0);
    ColorScale cs = {s.cmap, 0.0f, 1.0f, 0}; /* weights: fixed 0 to 1 by default, shared */
    double most = 0;
    for (int k = 0; k < T * T; k++)
        most = fabs(want[k]) > most ? fabs(want[k]) : most;
    int bad = 0;
    for (int i = 0; i < T; i++) {
        if (i == s.query)
            continue; /* its outline */
        for (int j = 0; j <= i; j++) {
            Rgb c = cell_rgb(img, &fg[1], x[1], i, j);
            bad += !same_rgb(c, colormap_scale_rgb(&cs, W[i * T + j]));
            /* the difference: t = (d + max) / 2 max on the diverging map */
            Rgb dc = cell_rgb(img, &fg[2], x[2], i, j);
            Rgb dw = colormap_rgb(CMAP_DIVERGING, (float)((want[i * T + j] + most) / (2 * most)));
            bad += abs(dc.r - dw.r) + abs(dc.g - dw.g) + abs(dc.b - dw.b) > 6;
        }
    }
    assert_int_equal(bad, 0);
    assert_true(fabs(want[0]) == 0.0);
    assert_true(same_rgb(cell_rgb(img, &fg[2], x[2], 0, 0), colormap_rgb(CMAP_DIVERGING, 0.5f)));
    SDL_FreeSurface(img);
    free(want);
    free(got);
    remove(png);
    remove(csv);
    rmdir(dir);
}

/* The three figures side by side inside the heatmap panel, apart. */
static void check_figures(const ViewLayout *l)
{
    SDL_Rect hm = l->heatmap;
    print_message("heatmap %d wide: cells %.1f %.1f %.1f\n", hm.w, l->cmp[0].cell, l->cmp[1].cell,
                  l->cmp[2].cell);
    for (int k = 0; k < 3; k++) {
        const Figure *g = &l->cmp[k];
        assert_true(g->Tq > 0 && g->cell >= 1.0f);
        assert_true(g->grid.x >= hm.x && g->grid.y >= hm.y);
        assert_true(g->grid.y + g->grid.h <= hm.y + hm.h);
        int right = g->cb.tick_x + 1; /* the ticks' left edge; their text after */
        assert_true(g->cb.bar.x >= g->grid.x + g->grid.w);
        assert_true(right <= hm.x + hm.w);
        assert_true(g->t.title_box.x >= hm.x);
        assert_true(g->t.title_box.x + g->t.title_box.w <= hm.x + hm.w);
        if (k < 2) {
            const Figure *n = &l->cmp[k + 1];
            /* this one's colour bar caption ends before the next one's cells
             * and labels start; titles do not run into each other */
            int end = g->cb.bar.w ? g->cb.caption_x + g->cb.tick_px : g->grid.x + g->grid.w; /* a bar, or none */
            assert_true(end + 4 <= n->grid.x - n->label_w);
            assert_true(g->t.title_box.x + g->t.title_box.w <= n->t.title_box.x);
        }
    }
    /* the current map is the one the hit tests answer for */
    assert_memory_equal(&l->heat.grid, &l->cmp[1].grid, sizeof l->heat.grid);
    assert_true(l->heat.cell == l->cmp[1].cell);
    int i, j;
    const Figure *m = &l->cmp[1];
    assert_int_equal(view_hit_cell(l, figure_cell_x(m, m->col0), figure_cell_y(m, m->row0), &i, &j), 1);
    assert_int_equal(i, l->cmp[1].row0);
    assert_int_equal(j, l->cmp[1].col0);
}

static void test_render_sizes(void **state)
{
    Fix *f = *state;
    apply(f, ACT_COMPARE, 0, 0, 0.0f);
    apply(f, ACT_TOGGLE_SCALE, 0, 0, 0.0f);
    check_figures(&f->a->layout);
    ViewLayout l;
    view_layout(f->a->view, &f->a->vs, 1024, 768, &l);
    check_figures(&l);
    /* a click on the middle figure's cell selects it */
    const Figure *g = &f->a->layout.cmp[1];
    int cx = figure_cell_x(g, 2) + 2, cy = figure_cell_y(g, 3) + 2;
    click(f, cx, cy);
    assert_int_equal(f->a->vs.query, 3);
    /* drawn: the difference's colour bar is the diverging map's */
    SDL_Surface *surf = view_render_window(test_fonts(), &f->a->vs, 1280, 800, NULL);
    assert_non_null(surf);
    SDL_FreeSurface(surf);
    assert_int_equal(f->a->layout.cmp[2].cb.cs.id, CMAP_DIVERGING);
    assert_true(f->a->layout.cmp[2].cb.cs.lo == -f->a->layout.cmp[2].cb.cs.hi);
}


#define PERMUTED "time on station the left train the"

/* The column of token t in the labels (its first place), or -1. */
static int label_at(const char *const *l, int n, const char *t)
{
    for (int k = 0; k < n; k++)
        if (strcmp(l[k], t) == 0)
            return k;
    return -1;
}

/* Each cell of the difference against the two maps' cells of the same
 * query and key tokens (tokens that occur once; "the" twice: both of its
 * rows are checked through the others' columns); returns the largest
 * |difference|. */
static double check_aligned(const ViewState *s)
{
    const AttnMap *d = s->cmp_diff, *r = s->cmp_ref, *c = &s->map;
    double most = 0;
    assert_non_null(d);
    assert_int_equal(d->Tq, c->Tq);
    for (int i = 0; i < d->Tq; i++) {
        assert_string_equal(d->q_labels[i], c->q_labels[i]); /* the current order */
        int ri = label_at(r->q_labels, r->Tq, c->q_labels[i]);
        assert_true(ri >= 0);
        for (int j = 0; j < d->Tk; j++) {
            int rj = label_at(r->k_labels, r->Tk, c->k_labels[j]);
            double dv = attn_map_at(d, i, j);
            most = fabs(dv) > most ? fabs(dv) : most;
            if (strcmp(c->q_labels[i], "the") == 0 || strcmp(c->k_labels[j], "the") == 0)
                continue;
            assert_true(fabs(dv - (attn_map_at(c, i, j) - attn_map_at(r, ri, rj))) < 1e-6);
        }
    }
    return most;
}

/* Issue 28, item 10: a permuted sentence against the original. Without
 * positional encoding attention only sees which tokens there are: aligned
 * by token the difference is zero; with it, not. Ctrl+E writes it as CSV
 * labelled by the current sentence's tokens. */
static void test_permuted_sentence(void **state)
{
    Fix *f = *state;
    key(f, SDLK_v, KMOD_NONE); /* pin the original */
    assert_non_null(f->a->vs.cmp_ref);
    app_set_sentence(f->a, PERMUTED);
    app_draw(f->a, f->r);
    const ViewState *s = &f->a->vs;
    assert_non_null(s->cmp_diff);
    print_message("without P: %s\n", s->cmp_what);
    assert_non_null(strstr(s->cmp_what, "aligned by token"));
    assert_non_null(strstr(s->cmp_what, "no difference"));
    double zero = check_aligned(s);
    print_message("without P: largest |difference| %g\n", zero);
    assert_true(zero == 0.0); /* rounding (the softmax sums in another order) drawn as 0 */
    /* the window: three figures; the current map with its own row labels
     * (the difference beside it borrows them) */
    check_figures(&f->a->layout);
    assert_true(f->a->layout.cmp[1].label_w > 0);

    /* with P: pinned again over the original, then the same permutation */
    key(f, SDLK_v, KMOD_NONE);
    app_set_sentence(f->a, SENTENCE);
    key(f, SDLK_p, KMOD_NONE);
    assert_int_equal(f->m.cfg.posenc, 1);
    key(f, SDLK_v, KMOD_NONE);
    app_set_sentence(f->a, PERMUTED);
    app_draw(f->a, f->r);
    print_message("with P: %s\n", s->cmp_what);
    assert_non_null(strstr(s->cmp_what, "aligned by token"));
    assert_non_null(strstr(s->cmp_what, "they differ"));
    double most = check_aligned(s);
    assert_true(most > 1e-2);

    /* Ctrl+E: the PNG and beside it the difference, labelled by token */
    char dir[] = "/tmp/attnviz-test-permuted-XXXXXX";
    assert_non_null(mkdtemp(dir));
    f->a->export_dir = dir;
    int n0 = f->a->export_count;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(f->a->status_err, 0);
    assert_int_equal(f->a->export_count, n0 + 2);
    char csv[4200];
    size_t n = strlen(f->a->last_export);
    snprintf(csv, sizeof csv, "%.*s.csv", (int)(n - 4), f->a->last_export);
    FILE *fp = fopen(csv, "r");
    assert_non_null(fp);
    char line[4096];
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "query,time,on,station,the,left,train,the\n");
    int T = s->map.Tq, rows = 0;
    while (fgets(line, sizeof line, fp)) {
        char *p = strchr(line, ',');
        assert_non_null(p);
        assert_true(rows < T);
        assert_int_equal((int)(p - line), (int)strlen(s->map.q_labels[rows]));
        assert_memory_equal(line, s->map.q_labels[rows], (size_t)(p - line));
        for (int j = 0; j < T; j++) {
            assert_non_null(p);
            assert_true(fabs(strtod(p + 1, NULL) - attn_map_at(s->cmp_diff, rows, j)) < 1e-6);
            p = strchr(p + 1, ',');
        }
        rows++;
    }
    fclose(fp);
    assert_int_equal(rows, T);
    remove(csv);
    remove(f->a->last_export);
    rmdir(dir);
}

/* One word changed (issue 38, item 7): as many tokens, compared position
 * by position: the difference is current − reference at each place, the
 * difference's labels give both tokens where they differ, the subtitle
 * names the change; typed through the keys as a teacher does. */
static void test_changed_word(void **state)
{
    Fix *f = *state;
    key(f, SDLK_v, 0); /* pin "... on time" */
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    for (int k = 0; k < 4; k++)
        key(f, SDLK_BACKSPACE, 0);
    type(f, "soon");
    key(f, SDLK_ESCAPE, 0);
    app_draw(f->a, f->r);
    const ViewState *s = &f->a->vs;
    assert_non_null(s->cmp_diff);
    print_message("%s\n", s->cmp_what);
    assert_non_null(strstr(s->cmp_what, "position by position"));
    assert_non_null(strstr(s->cmp_what, "\xE2\x80\x9Ctime\xE2\x80\x9D \xE2\x86\x92 \xE2\x80\x9Csoon\xE2\x80\x9D"));
    int T = s->map.Tq;
    assert_int_equal(T, 7);
    assert_int_equal(s->cmp_ref->Tq, 7);
    double most = 0.0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            double want = (double)attn_map_at(&s->map, i, j) - (double)attn_map_at(s->cmp_ref, i, j);
            assert_true(fabs(attn_map_at(s->cmp_diff, i, j) - want) < 1e-6);
            most = fabs(want) > most ? fabs(want) : most;
        }
    assert_true(most > 1e-3);
    assert_string_equal(s->cmp_diff->q_labels[0], "the");
    assert_string_equal(s->cmp_diff->q_labels[6], "time\xE2\x86\x92soon");
    assert_string_equal(s->cmp_diff->k_labels[6], "time\xE2\x86\x92soon");
    /* the reference outlines the query's row by its place */
    key(f, SDLK_END, 0);
    assert_int_equal(s->query, 6);
    assert_non_null(s->cmp_rows);
    assert_int_equal(s->cmp_rows[6], 6);
    check_figures(&f->a->layout);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pin_scale_difference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_head_and_wq, setup, teardown),
        cmocka_unit_test_setup_teardown(test_another_sentence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export, setup, teardown),
        cmocka_unit_test_setup_teardown(test_render_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permuted_sentence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_word, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
