/* An encoder in the window (issue 36), key by key through the window's
 * event path: tests/fixtures/families/bert/bert-wordpiece-mask (a random
 * BERT with a real WordPiece tokenizer) on "The capital of France is
 * [MASK].": the heatmap a full square (not causal: a key after its query
 * has weight), the window opening on the [MASK] row, whose panel says what
 * fills the blank with the float64 reference's top token and probability
 * (ref.json's top_at), and a word typed before the blank recomputes every
 * position (the [CLS] row changes too: nothing reused) while the selection
 * follows the blank. Waits for conditions, never a fixed time
 * alone. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attnviz/model_source.h"
#include "attnviz/source.h"
#include "attnviz/wake.h"
#include "test_app_util.h"

#define DIR "tests/fixtures/families/bert/bert-wordpiece-mask"
#define TEXT "The capital of France is [MASK]."

/* The [CLS] row of the heatmap shown (Tk floats, malloc'd). */
static float *first_row(const Fix *f)
{
    const AttnMap *m = &f->a->vs.map;
    float *r = malloc(sizeof(float) * (size_t)m->Tk);
    assert_non_null(r);
    for (int j = 0; j < m->Tk; j++)
        r[j] = attn_map_at(m, 0, j);
    return r;
}

static void test_blank(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path(DIR, 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, TEXT, strlen(TEXT), &err), 0);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    /* [CLS] the ca ##p ##it ##a ##l of fr ##an ##ce is [MASK] . [SEP] */
    assert_int_equal(a->vs.map.Tq, 15);
    assert_int_equal(a->vs.map.causal, 0);
    double after = 0;
    for (int j = 1; j < a->vs.map.Tk; j++)
        after += attn_map_at(&a->vs.map, 0, j);
    assert_true(after > 0.01); /* the first query's keys after it weigh */
    /* the window opens on the blank: the [MASK] row (13) selected */
    assert_int_equal(a->vs.query, 12);
    /* (not "What fills the blank: computing…") */
    if (!wait_panel(f, "What fills the blank (\xE2\x80\x9C[MASK]\xE2\x80\x9D, position 13)"))
        fail_msg("panel: %s", a->vs.no_model ? a->vs.no_model : "(none)");
    /* the reference's first: "##ø" at 23.6 % (ref.json's top_at) */
    const char *p = strstr(a->vs.no_model, "What fills the blank");
    const char *first = strstr(p, " 1. "), *second = strstr(p, " 2. ");
    assert_non_null(first);
    assert_non_null(second);
    const char *top = strstr(first, "23.6%");
    const char *tok = strstr(first, "##\xC3\xB8");
    assert_true(top && top < second);
    assert_true(tok && tok < second);
    /* a word typed before the blank: every position recomputed, [CLS]'s too */
    float *before = first_row(f);
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_u, KMOD_LCTRL);
    type(f, "The old capital of France is [MASK].");
    key(f, SDLK_ESCAPE, 0);
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.map.Tq, 16);
    /* the selection followed the blank, now row 14 */
    assert_int_equal(a->vs.query, 13);
    if (!wait_panel(f, "What fills the blank (\xE2\x80\x9C[MASK]\xE2\x80\x9D, position 14)"))
        fail_msg("panel: %s", a->vs.no_model ? a->vs.no_model : "(none)");
    float *now = first_row(f);
    int changed = 0;
    for (int j = 0; j < 15; j++)
        changed |= before[j] != now[j];
    assert_true(changed);
    free(before);
    free(now);
}

static int setup_enc(void **state)
{
    setenv("ATTNVIZ_DATADIR", "assets", 1);
    return group_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_blank, setup, teardown),
    };
    return cmocka_run_group_tests(tests, setup_enc, group_teardown);
}
