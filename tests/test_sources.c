/* The sources' interface (issue 24) with a third kind that exists in this
 * test alone (formula_source.h, registered by one line): shown in the
 * window's head view and model view, compared, saved and restored as a
 * session, exported as PNG, SVG and CSV, with numbers checked against the
 * formula in double precision. Nothing in src/app or src/view knows it.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "test_app_util.h"
#include "formula_source.h"

#define FORMULA "formula:3,4,6"

/* The shown map equals the formula's (layer, head). */
static void assert_formula_map(Fix *f, int layer, int head)
{
    AppState *a = f->a;
    app_draw(a, f->r);
    const AttnMap *m = &a->vs.map;
    assert_int_equal(m->Tq, 6);
    assert_int_equal(m->Tk, 6);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            assert_true(fabs(attn_map_at(m, i, j) - formula_weight(layer, head, i, j)) < 1e-6);
}

static void test_head_and_model_view(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, FORMULA), 0);
    assert_ptr_equal(a->kind, &source_formula);
    assert_formula_map(f, 0, 0);
    assert_string_equal(a->vs.bar_label, "Formula");
    assert_string_equal(a->vs.map.q_labels[2], "t2");
    assert_null(a->vs.m); /* no weights, no steps */
    key(f, SDLK_h, 0);
    key(f, SDLK_h, 0);
    assert_formula_map(f, 0, 2);
    key(f, SDLK_l, 0);
    assert_formula_map(f, 1, 2);
    /* the controls strip is the source's and the common ones */
    assert_true(ctl_rect(f, ACT_CYCLE_LAYER, 1).w > 0);
    assert_true(ctl_rect(f, ACT_COMPARE, 0).w > 0);
    assert_int_equal(ctl_rect(f, ACT_TEACH, 0).w, 0);
    click_rect(f, ctl_rect(f, ACT_CYCLE_HEAD, 1));
    assert_formula_map(f, 1, 3);
    /* the model view: every layer and head, arrows and Enter open one */
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid);
    assert_int_equal(a->vs.grid->L, 3);
    assert_int_equal(a->vs.grid->H, 4);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_LEFT, 0);
    key(f, SDLK_RETURN, 0);
    app_draw(a, f->r);
    assert_null(a->vs.grid);
    assert_formula_map(f, 2, 2);
    /* the selection is bounded by the shown map */
    for (int k = 0; k < 10; k++)
        key(f, SDLK_DOWN, 0);
    assert_int_equal(a->vs.query, 5);
    /* the help lists the source's keys, not the sentence's */
    key(f, SDLK_F1, 0);
    int layer_row = 0;
    for (int k = 0; k < a->vs.n_help_lines; k++) {
        assert_null(strstr(a->vs.help_lines[k].what, "temperature"));
        assert_null(strstr(a->vs.help_lines[k].what, "weight editor"));
        layer_row |= strstr(a->vs.help_lines[k].what, "next / previous layer") != NULL;
    }
    assert_true(layer_row);
    /* the sentence's keys are not its own: nothing happens to the sentence */
    float tau = f->m.cfg.temperature;
    key(f, SDLK_F1, 0);
    key(f, SDLK_t, 0);
    assert_float_equal(f->m.cfg.temperature, tau, 0.0f);
}

static void test_compare(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-sources-XXXXXX";
    assert_non_null(mkdtemp(dir));
    a->export_dir = dir;
    assert_int_equal(open_now(a, FORMULA), 0);
    key(f, SDLK_v, 0);
    key(f, SDLK_h, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.cmp_ref);
    assert_non_null(a->vs.cmp_diff);
    assert_non_null(strstr(a->vs.cmp_what, "head 1 vs head 2"));
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            assert_true(fabs(attn_map_at(a->vs.cmp_diff, i, j) -
                             (formula_weight(0, 1, i, j) - formula_weight(0, 0, i, j))) < 1e-6);
    int n0 = a->export_count;
    key(f, SDLK_e, KMOD_LCTRL); /* the three panels and the difference's CSV */
    assert_int_equal(a->export_count, n0 + 2);
    assert_int_equal(a->status_err, 0);
    key(f, SDLK_v, 0);
    assert_null(a->cmp);
}

static void test_session(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-sources-session-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/formula.json", dir);
    assert_int_equal(open_now(a, FORMULA), 0);
    key(f, SDLK_l, 0);
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(a->status_err, 0);
    /* something else, then the session again */
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    assert_ptr_not_equal(a->kind, &source_formula);
    assert_int_equal(open_now(a, path), 0);
    assert_ptr_equal(a->kind, &source_formula);
    assert_int_equal(a->vs.query, 3);
    assert_formula_map(f, 2, 1);
    unlink(path);
    rmdir(dir);
}

/* Lines of a --print csv file: its numbers after the label column. */
static int csv_numbers(const char *path, double *v, int n)
{
    FILE *fp = fopen(path, "r");
    char line[4096];
    int k = 0;
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof line, fp));
    while (fgets(line, sizeof line, fp))
        for (char *p = strchr(line, ','); p && k < n; p = strchr(p + 1, ','))
            v[k++] = strtod(p + 1, NULL);
    fclose(fp);
    return k;
}

/* The command line's way: open with --layer and --head, write PNG, SVG, CSV. */
static void test_exports(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-test-sources-exp-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char png[200], svg[200], csv[200];
    snprintf(png, sizeof png, "%s/f.png", dir);
    snprintf(svg, sizeof svg, "%s/f.svg", dir);
    snprintf(csv, sizeof csv, "%s/f.csv", dir);
    char *argv[] = {"attnviz", "--attention", FORMULA, "--layer", "2", "--head", "3", "--export", png,
                    "--export", svg, "--export", csv, NULL};
    Options o;
    AttnErr err = {0};
    int rc = options_parse(&o, 13, argv, &err);
    if (rc != 0)
        fprintf(stderr, "options: %s\n", err.msg);
    assert_int_equal(rc, 0);
    const SourceKind *k = source_for_path(FORMULA);
    assert_ptr_equal(k, &source_formula);
    void *opened = NULL;
    assert_int_equal(k->cli_open(&o, FORMULA, &opened, &err), 0);
    assert_int_equal(k->cli_write(opened, &o, &err), 0);
    k->cli_free(opened);
    struct stat st;
    assert_int_equal(stat(png, &st), 0);
    assert_true(st.st_size > 1000);
    assert_int_equal(stat(svg, &st), 0);
    assert_true(st.st_size > 1000);
    double got[36];
    assert_int_equal(csv_numbers(csv, got, 36), 36);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            assert_true(fabs(got[i * 6 + j] - formula_weight(1, 2, i, j)) < 1e-6);
    options_free(&o);
    unlink(png);
    unlink(svg);
    unlink(csv);
    rmdir(dir);
}

static int setup_sources(void **state)
{
    return group_setup(state) < 0 || source_register(&source_formula) < 0 ? -1 : 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_head_and_model_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session, setup, teardown),
        cmocka_unit_test(test_exports),
    };
    return cmocka_run_group_tests(tests, setup_sources, group_teardown);
}
