/* The lesson on the shipped language model shakespeare-tiny (issue 38), key
 * by key through the window's event path: opened by its short name with no
 * Hugging Face cache, a line typed into the bar, what comes next (the name
 * said before, copied), the model view (G: 2 layers × 4 heads), the score
 * overview (U): a previous-token head (0.5 or more) and an induction head
 * (0.4 or more on the line's one repeat), and Ctrl+P's induction probe
 * finding an induction head at 0.5 or more. Waits for
 * conditions (the maps, the panel), never for a fixed time alone. Run from
 * the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attnviz/head_scores.h"
#include "attnviz/model_source.h"
#include "attnviz/maps_shown.h"
#include "attnviz/source.h"
#include "attnviz/wake.h"
#include "test_app_util.h"

#include <unistd.h>

#define LINE "KING RICHARD II: Good uncle, tell me. KING"

/* I until the model view's score is name. */
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

/* The largest cell of the score overview shown. */
static double best_head(const AttnMap *sm)
{
    double best = 0.0;
    for (int l = 0; l < sm->Tq; l++)
        for (int h = 0; h < sm->Tk; h++)
            if (attn_map_at(sm, l, h) > best)
                best = attn_map_at(sm, l, h);
    return best;
}

static void test_lesson(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    /* the command line's entry: --model shakespeare-tiny "KING" */
    assert_int_equal(model_open_path("shakespeare-tiny", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "KING", 4, &err), 0);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    /* Enter, Ctrl+U, the line typed, Escape */
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_u, KMOD_LCTRL);
    type(f, LINE);
    key(f, SDLK_ESCAPE, 0);
    assert_true(wait_maps(f));
    assert_string_equal(a->text, LINE);
    key(f, SDLK_END, 0);
    /* what comes next after the second KING: the name said after the first */
    assert_true(wait_panel(f, "What comes next"));
    const char *next = strstr(a->vs.no_model, "What comes next");
    const char *first = strstr(next, " 1. "), *second = strstr(next, " 2. ");
    const char *richard = strstr(next, "RICHARD");
    assert_non_null(first);
    assert_non_null(second);
    /* the first of the ten */
    assert_true(richard && richard > first && richard < second);
    /* G: every layer and head */
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid);
    assert_int_equal(a->vs.grid->L, 2);
    assert_int_equal(a->vs.grid->H, 4);
    /* U: the overview; a previous-token head and an induction head */
    key(f, SDLK_u, 0);
    app_draw(a, f->r);
    press_score(f, "previous");
    assert_non_null(a->vs.score_map);
    assert_true(best_head(a->vs.score_map) >= 0.5);
    /* the line has one repeat (the second KING): layer 2's induction head
     * gives the first RICHARD about half of that query's attention */
    press_score(f, "induction");
    assert_true(best_head(a->vs.score_map) >= 0.4);
    /* Ctrl+P: the probe on random tokens finds an induction head too */
    key(f, SDLK_p, KMOD_LCTRL);
    assert_true(wait_maps(f));
    app_draw(a, f->r);
    assert_int_equal(a->kind->maps(a)->probe_T, 51);
    assert_non_null(a->vs.score_map);
    assert_string_equal(a->vs.grid_score_name, "induction");
    assert_true(best_head(a->vs.score_map) >= 0.5);
}

static int setup_lm(void **state)
{
    static char hf[] = "/tmp/attnviz-test-no-hf-XXXXXX";
    if (!mkdtemp(hf))
        return -1;
    /* the shipped models only: every Hugging Face cache an empty folder */
    setenv("ATTNVIZ_DATADIR", "assets", 1);
    setenv("HF_HUB_CACHE", hf, 1);
    setenv("HF_HOME", hf, 1);
    return group_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lesson, setup, teardown),
    };
    return cmocka_run_group_tests(tests, setup_lm, group_teardown);
}
