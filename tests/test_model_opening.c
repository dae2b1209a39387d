/* A model opened in the window on a thread of its own (model_opening.c):
 * Ctrl+O's app_open_path returns before the model's maps exist, the
 * window's loop goes on handling events and drawing while the worker reads
 * the files and runs the first forward (slowed by
 * ATTNVIZ_TEST_SLOW_LAYERS_MS), text typed meanwhile is in the bar and
 * computed once the model is shown (its maps equal a fresh forward of that
 * text, made here on the test's thread); a folder that fails to open on
 * the worker leaves the source shown and says why; of two opens in a row
 * the second is shown and the first never; a session naming a model gets
 * its layer and head once the model arrives; the app freed during an open
 * leaks nothing (the sanitizer builds). Every wait is for a condition.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attnviz/maps_shown.h"
#include "attnviz/model_source.h"
#include "attnviz/source.h"
#include "test_app_util.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TINY "assets/models/shakespeare-tiny" /* 2 layers */
#define NANO "assets/models/nano-sort"        /* 3 layers, the letters A, B, C */
#define SLOW_MS 250                            /* each layer of a forward, slowed */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* The layers of the maps shown (0: no source of layers). */
static int layers_shown(const Fix *f)
{
    const AppState *a = f->a;
    return a->kind->maps && a->kind->maps((AppState *)a)->imp ? a->kind->maps((AppState *)a)->imp->f.L : 0;
}

/* The maps shown (every layer and head) equal a forward of text by model
 * dir, opened and computed here. */
static void assert_maps_of(Fix *f, const char *dir, const char *text)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path(dir, 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    const MapsShown *ms = f->a->kind->maps(f->a);
    const AttnFile *now = &ms->imp->f, *want = &g->im->f;
    assert_int_equal(now->Tq, want->Tq);
    assert_int_equal(now->L, want->L);
    assert_maps_equal(now, want, now->L);
    model_opened_free(g);
}

/* Turns of the loop while the open runs: how many, the longest (ms), and
 * whether the status bar showed the first forward's progress. 1 when the
 * open ended within 30 s. */
typedef struct Turns {
    int n;
    double longest;
    int progress;
} Turns;

static int turn_while_opening(Fix *f, Turns *t)
{
    for (int k = 0; k < 3000 && app_opening(f->a); k++) {
        double t0 = now_ms();
        loop_turn(f, 10);
        double dt = now_ms() - t0;
        t->n++;
        t->longest = dt > t->longest ? dt : t->longest;
        if (strstr(f->a->status, "the first forward: layer"))
            t->progress = 1;
    }
    return !app_opening(f->a);
}

/* Ctrl+O of a model with slow layers: the call returns at once, the old
 * source stays shown and usable (a key acts on it, typing lands in the
 * bar), the window keeps turning; once shown, the maps are those of the
 * text typed during the open. */
static void test_open_in_background(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    const SourceKind *before = a->kind;
    setenv("ATTNVIZ_TEST_SLOW_LAYERS_MS", "250", 1);
    app_set_sentence(a, "To be");
    double t0 = now_ms();
    assert_int_equal(app_open_path(a, TINY), 0);
    double took = now_ms() - t0;
    /* the first forward alone takes 2 × SLOW_MS: the call returned before it */
    if (took >= SLOW_MS)
        fail_msg("app_open_path took %.0f ms: the open ran on the UI thread", took);
    assert_true(app_opening(a));
    assert_ptr_equal(a->kind, before); /* nothing of the model yet */
    assert_non_null(strstr(a->status, "opening shakespeare-tiny"));
    assert_non_null(strstr(app_title(a), "opening shakespeare-tiny")); /* the taskbar's, a tab's */
    /* meanwhile: a key of the shown source, and typing in the bar */
    int cmap = (int)a->vs.cmap;
    key(f, SDLK_c, 0); /* the next colour map */
    assert_int_not_equal((int)a->vs.cmap, cmap);
    key(f, SDLK_SLASH, 0);
    key(f, SDLK_END, 0);
    type(f, " or not");
    assert_true(app_opening(a)); /* all of it while the worker still worked */
    assert_string_equal(a->text, "To be or not");
    Turns t = {0};
    assert_true(turn_while_opening(f, &t));
    unsetenv("ATTNVIZ_TEST_SLOW_LAYERS_MS");
    fprintf(stderr, "open: returned in %.1f ms; %d turns of the loop during it, the longest %.1f ms\n", took, t.n,
            t.longest);
    assert_true(t.n >= 5);      /* the loop went on (2 × SLOW_MS of layers at most 10 ms a turn) */
    assert_true(t.longest < SLOW_MS); /* no turn waited for a layer */
    assert_true(t.progress);    /* "layer k of 2" was said */
    assert_int_equal(a->open_rc, 0);
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, "To be or not"); /* the text typed, not the one the open started on */
    assert_string_equal(app_title(a), "To be or not");
    type(f, " to"); /* the bar kept the keyboard */
    assert_string_equal(a->text, "To be or not to");
    assert_true(wait_maps(f));
    assert_maps_of(f, TINY, "To be or not to");
    assert_int_equal(a->vs.query, a->kind->maps(a)->imp->Tq - 1); /* the query followed the text's end */
    key(f, SDLK_BACKSPACE, 0);
    key(f, SDLK_BACKSPACE, 0);
    key(f, SDLK_BACKSPACE, 0);
    assert_true(wait_maps(f));
    assert_maps_of(f, TINY, "To be or not");
}

/* A folder with a config.json that does not open (an unknown model_type):
 * refused on the worker; the model shown stays, its text too, and the
 * status bar names the file and what is wrong. */
static void test_open_fails(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-opening-XXXXXX", cfg[200];
    assert_non_null(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    FILE *c = fopen(cfg, "w");
    assert_non_null(c);
    fputs("{\"model_type\": \"no-such-family\"}\n", c);
    fclose(c);
    app_set_sentence(a, "ABCA");
    assert_int_equal(open_now(a, NANO), 0);
    assert_int_equal(layers_shown(f), 3);
    assert_true(wait_maps(f));
    assert_int_equal(app_open_path(a, dir), 0); /* a config.json: the worker finds out */
    Turns t = {0};
    assert_true(turn_while_opening(f, &t));
    assert_int_equal(a->open_rc, -1);
    assert_int_equal(a->status_err, 1);
    assert_non_null(strstr(a->status, "cannot open"));
    assert_non_null(strstr(a->status, "no-such-family"));
    assert_ptr_equal(a->kind, &source_model);
    assert_int_equal(layers_shown(f), 3);
    assert_string_equal(a->text, "ABCA");
    assert_maps_of(f, NANO, "ABCA");
    unlink(cfg);
    rmdir(dir);
}

/* Two opens in a row, the first slow: the second is shown, the first never
 * (its result freed when it comes). */
static void test_newest_open_wins(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    setenv("ATTNVIZ_TEST_SLOW_LAYERS_MS", "250", 1);
    app_set_sentence(a, "ABBA");
    assert_int_equal(app_open_path(a, NANO), 0);
    assert_int_equal(app_open_path(a, TINY), 0);
    int saw_first = 0;
    for (int k = 0; k < 3000 && app_opening(a); k++) {
        loop_turn(f, 10);
        saw_first |= layers_shown(f) == 3;
    }
    unsetenv("ATTNVIZ_TEST_SLOW_LAYERS_MS");
    assert_false(app_opening(a));
    assert_int_equal(a->open_rc, 0);
    assert_ptr_equal(a->kind, &source_model);
    assert_int_equal(layers_shown(f), 2); /* shakespeare-tiny */
    assert_false(saw_first);
    for (int k = 0; k < 20; k++) /* the first's result, stale, never comes later either */
        loop_turn(f, 10);
    assert_int_equal(layers_shown(f), 2);
    assert_true(wait_maps(f));
    assert_maps_of(f, TINY, "ABBA");
}

/* A session naming a model: opened in the background, then its text,
 * layer and head applied once the model is shown. */
static void test_session_waits(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-opening-s-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.json", dir);
    app_set_sentence(a, "ACBBA");
    assert_int_equal(open_now(a, NANO), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0);
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    setenv("ATTNVIZ_TEST_SLOW_LAYERS_MS", "100", 1);
    assert_int_equal(app_open_path(a, path), 0);
    assert_true(app_opening(a));
    assert_ptr_not_equal(a->kind, &source_model);
    Turns t = {0};
    assert_true(turn_while_opening(f, &t));
    unsetenv("ATTNVIZ_TEST_SLOW_LAYERS_MS");
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, "ACBBA");
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->layer, 2);
    assert_int_equal(ms->head, 1);
    assert_non_null(strstr(a->status, "opened"));
    assert_true(wait_maps(f));
    assert_maps_of(f, NANO, "ACBBA");
    unlink(path);
    rmdir(dir);
}

/* The window closed while a model opens: the app freed at once after the
 * open started (teardown joins the worker; the sanitizer builds find a
 * leak or a race if there is one). */
static void test_close_during_open(void **state)
{
    Fix *f = *state;
    setenv("ATTNVIZ_TEST_SLOW_LAYERS_MS", "100", 1);
    app_set_sentence(f->a, "ABC");
    assert_int_equal(app_open_path(f->a, NANO), 0);
    assert_true(app_opening(f->a));
    loop_turn(f, 10);
}

/* teardown, then the slow layers' variable unset: not while the worker
 * may still read the environment */
static int teardown_unset(void **state)
{
    int rc = teardown(state);
    unsetenv("ATTNVIZ_TEST_SLOW_LAYERS_MS");
    return rc;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_in_background, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newest_open_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_during_open, setup, teardown_unset),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
