/* A model opened in the window on a thread of its own (model_opening.c):
 * Ctrl+O's app_open_path returns before the model's maps exist, the
 * window's loop goes on handling events and drawing while the worker reads
 * the files and runs the first forward (slowed by
 * ATTNVIZ_TEST_SLOW_LAYERS_MS), text typed meanwhile is in the bar and
 * computed once the model is shown (its maps equal a fresh forward of that
 * text, made here on the test's thread); a folder that fails to open on
 * the worker leaves the source shown and says why; of two opens in a row
 * the second is shown and the first never; a session naming a model gets
 * its layer and head once the model arrives; a text longer than the
 * model's positions opens it on the first ones, said; the app freed during an open
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
#include "../src/app/platform.h"

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

/* A text longer than the model's 128 positions in the bar (200 tokens of
 * shakespeare-tiny: "the" and 199 " the"), the model opened twice (issue
 * 39: the browser's page crashed at the second drop): each time it opens,
 * as typing such a text does it keeps the first 128 tokens and the status
 * bar says so, naming the limit; the bar keeps the whole text. */
static void test_long_text_opens_cut(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char text[1024] = "the", first[1024] = "the";
    for (int i = 1; i < 200; i++)
        strcat(text, " the");
    for (int i = 1; i < 128; i++)
        strcat(first, " the");
    app_set_sentence(a, text);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(open_now(a, TINY), 0);
        assert_ptr_equal(a->kind, &source_model);
        assert_int_equal(a->kind->maps(a)->imp->Tq, 128);
        assert_int_equal(a->status_err, 1);
        assert_non_null(strstr(a->status, "200 tokens: shakespeare-tiny takes 128 (n_positions); the first 128"));
        assert_string_equal(a->text, text);
        assert_true(wait_maps(f));
        assert_maps_of(f, TINY, first);
    }
}

/* The line diagram follows the query: a model's query on the text's end
 * stays there as words are typed past the rows the diagram shows, and the
 * diagram scrolls with it (it stayed on the first rows, the query's lines
 * drawn from the edge row over its names). */
static void test_lines_follow_query(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    app_set_sentence(a, "the");
    assert_int_equal(open_now(a, TINY), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    for (int i = 0; i < 60; i++)
        type(f, " the");
    assert_true(wait_maps(f));
    int T = a->kind->maps(a)->imp->Tq, vis = a->layout.lines_vis, first = a->vs.lines_scroll;
    assert_int_equal(T, 61);
    assert_int_equal(a->vs.query, T - 1);
    if (!(vis > 0 && vis < T))
        fail_msg("the diagram shows %d of %d rows: all or none", vis, T);
    if (a->vs.query < first || a->vs.query >= first + vis)
        fail_msg("the query's row %d is not among the diagram's rows %d to %d", a->vs.query, first, first + vis - 1);
}

/* ---- an open asked for inside an event's step, run by the loop after it ---- */

/* The desktop's loop (platform_desktop.c's platform_run_loop) over the
 * app, as window.c gives it its steps, recording where the open ran. */
typedef struct PromptLoop {
    Fix *f;
    int in_events;      /* inside the events step now */
    int opened_inside;  /* an open began inside it (app_opening became 1, or
                           another source was shown) */
    int opens;          /* opens the loop handed over (PlatformLoop.open) */
    int frames_before;  /* frames drawn before the first open */
    char path[1024];    /* the path it handed over */
    double until;       /* give up then (ms) */
} PromptLoop;

static int pl_frame(void *ctx)
{
    PromptLoop *pl = ctx;
    int wait_ms;
    if (!pl->opens)
        pl->frames_before++;
    app_tick(pl->f->a, SDL_GetTicks(), &wait_ms);
    app_draw(pl->f->a, pl->f->r);
    return 10;
}

static void pl_events(void *ctx, SDL_Event *first)
{
    PromptLoop *pl = ctx;
    AppState *a = pl->f->a;
    SDL_Event e = *first;
    pl->in_events = 1;
    do {
        const SourceKind *before = a->kind;
        int was = app_opening(a);
        if (!app_wake_is(&e))
            app_handle_event(a, &e);
        if ((!was && app_opening(a)) || a->kind != before)
            pl->opened_inside = 1;
    } while (SDL_PollEvent(&e));
    pl->in_events = 0;
}

static int pl_done(void *ctx)
{
    PromptLoop *pl = ctx;
    AppState *a = pl->f->a;
    return (pl->opens && !app_opening(a)) || now_ms() > pl->until;
}

static void pl_suspend(void *ctx)
{
    (void)ctx;
}

static void pl_open(void *ctx, const char *path)
{
    PromptLoop *pl = ctx;
    if (pl->in_events)
        pl->opened_inside = 1;
    pl->opens++;
    snprintf(pl->path, sizeof pl->path, "%s", path);
    app_open_path(pl->f->a, path);
}

static int pl_asked(void *ctx, char *path, size_t n)
{
    return app_open_asked(((PromptLoop *)ctx)->f->a, path, n);
}

static void push(SDL_Event *e)
{
    assert_int_equal(SDL_PushEvent(e), 1);
}

/* A path typed into Ctrl+O's prompt and Enter: the events' step does not
 * open it (on the one-thread page an open begun there cannot be broken
 * into slices and freezes the page); the loop opens it after the step
 * (PlatformLoop.asked), and the model is shown with the maps of the bar's
 * text, as a forward made here has them. */
static void test_prompt_opens_after_the_step(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    const SourceKind *before = a->kind;
    app_set_sentence(a, "To be");
    /* the step alone: Enter leaves the path for the loop, nothing opens */
    key(f, SDLK_o, KMOD_LCTRL);
    type(f, NANO);
    key(f, SDLK_RETURN, 0);
    assert_int_equal(a->prompt, PROMPT_NONE);
    assert_false(app_opening(a));
    assert_ptr_equal(a->kind, before);
    /* a newer path asked before the loop took the first replaces it */
    key(f, SDLK_o, KMOD_LCTRL);
    type(f, TINY);
    key(f, SDLK_RETURN, 0);
    char asked[1024];
    assert_int_equal(app_open_asked(a, asked, sizeof asked), 1);
    assert_string_equal(asked, TINY);
    assert_int_equal(app_open_asked(a, asked, sizeof asked), 0); /* taken once */
    assert_ptr_equal(a->kind, before);

    /* through the desktop's loop: the same keys as events in SDL's queue */
    SDL_FlushEvents(SDL_FIRSTEVENT, SDL_LASTEVENT);
    SDL_Event e;
    key_ev(&e, SDLK_o, KMOD_LCTRL);
    push(&e);
    for (const char *c = TINY; *c; c++) {
        memset(&e, 0, sizeof e);
        e.type = SDL_TEXTINPUT;
        e.text.text[0] = *c;
        push(&e);
    }
    key_ev(&e, SDLK_RETURN, 0);
    push(&e);
    PromptLoop pl = {f, 0, 0, 0, 0, "", now_ms() + 30000};
    platform_run_loop(&(PlatformLoop){&pl, pl_frame, pl_events, pl_done, pl_suspend, pl_open, pl_asked});
    assert_int_equal(pl.opened_inside, 0);
    assert_int_equal(pl.opens, 1);
    assert_true(pl.frames_before >= 1); /* the frame before the events, then the open */
    assert_string_equal(pl.path, TINY);
    assert_int_equal(a->open_rc, 0);
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, "To be"); /* the bar's text, not the prompt's */
    assert_true(wait_maps(f));
    assert_maps_of(f, TINY, "To be");
}

/* A path the prompt asks for that is not there: opened by the loop, the
 * status bar says why, the source shown stays. */
static void test_prompt_open_fails(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    const SourceKind *before = a->kind;
    key(f, SDLK_o, KMOD_LCTRL);
    type(f, "assets/models/no-such-model");
    key(f, SDLK_RETURN, 0);
    char asked[1024];
    assert_int_equal(app_open_asked(a, asked, sizeof asked), 1);
    if (app_open_path(a, asked) == 0)
        app_open_wait(a);
    assert_ptr_equal(a->kind, before);
    assert_true(a->status_err);
    assert_non_null(strstr(a->status, "no-such-model"));
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
        cmocka_unit_test_setup_teardown(test_long_text_opens_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lines_follow_query, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_during_open, setup, teardown_unset),
        cmocka_unit_test_setup_teardown(test_prompt_opens_after_the_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prompt_open_fails, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
