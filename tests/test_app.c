/* Tests for the application's event handler (src/app/app.c): hand-built SDL
 * events go through app_handle_event exactly as the window's loop hands
 * them over, and the state (model, view state, undo) is checked after each.
 * The app draws into an offscreen 1280×800 surface with the software
 * renderer after every change, as the window does, so clicks land on the
 * real layout. Run from the repository root with SDL_VIDEODRIVER=dummy. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnviz/app_state.h"
#include "attnviz/attn.h"
#include "attnviz/embed.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/view.h"

#include "test_util.h"
#include "test_app_util.h"

/* ---- tests: start, sentence bar ----------------------------------------------------- */

static void test_init(void **state)
{
    Fix *f = *state;
    assert_string_equal(f->a->text, SENTENCE);
    assert_int_equal(f->m.T, 7);
    assert_int_equal(f->a->vs.query, 1);
    assert_int_equal(f->a->vs.head, 0);
    assert_int_equal(f->a->vs.dark, 1);
    assert_int_equal(f->a->status_err, 0);
    assert_true(f->a->layout.cell > 0);
    assert_int_equal(f->a->layout.w, 1280);
    assert_rows_sum_to_one(&f->m);
    assert_up_to_date(f);
}

static void test_sentence_bar_typing(void **state)
{
    Fix *f = *state;
    /* text typed without focus goes nowhere */
    type(f, "x");
    assert_string_equal(f->a->text, SENTENCE);

    key(f, SDLK_RETURN, 0);
    assert_int_equal(f->a->vs.sentence_focus, 1);
    assert_int_equal(f->a->vs.cursor, (int)strlen(SENTENCE));
    type(f, " again");
    assert_string_equal(f->a->text, SENTENCE " again");
    assert_string_equal(f->m.text, SENTENCE " again");
    assert_int_equal(f->m.T, 8);
    assert_string_equal(tok_text(&f->m.toks, 7), "again");
    assert_int_equal(f->m.oov[7], 0);
    assert_int_equal(model_count_oov(&f->m), 0);
    assert_rows_sum_to_one(&f->m);
    assert_up_to_date(f);

    /* an unknown word: marked, and the status bar says so */
    type(f, " qwzx");
    assert_int_equal(f->m.T, 9);
    assert_int_equal(f->m.oov[8], 1);
    assert_int_equal(model_count_oov(&f->m), 1);
    assert_non_null(strstr(f->a->status, "not in the embedding table"));
    assert_int_equal(f->a->status_err, 0);
    assert_rows_sum_to_one(&f->m);

    /* a multi-character event (an input method, a paste) */
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    strcpy(e.text.text, " caf\xC3\xA9");
    send(f, &e);
    assert_int_equal(f->m.T, 10);
    assert_string_equal(tok_text(&f->m.toks, 9), "caf\xC3\xA9");

    /* Backspace removes whole UTF-8 characters, then the OOV words */
    for (int k = 0; k < 5 + 5; k++) /* " café" and " qwzx": five characters each */
        key(f, SDLK_BACKSPACE, 0);
    assert_string_equal(f->a->text, SENTENCE " again");
    assert_int_equal(f->m.T, 8);
    assert_int_equal(model_count_oov(&f->m), 0);
    assert_up_to_date(f);

    /* Esc leaves the bar; keys are shortcuts again */
    key(f, SDLK_ESCAPE, 0);
    assert_int_equal(f->a->vs.sentence_focus, 0);
    int scale = f->m.cfg.scale;
    key(f, SDLK_s, 0);
    assert_int_equal(f->m.cfg.scale, !scale);
    assert_string_equal(f->a->text, SENTENCE " again");

    /* while typing, letters are text, not shortcuts */
    key(f, SDLK_SLASH, 0);
    assert_int_equal(f->a->vs.sentence_focus, 1);
    key(f, SDLK_s, 0);
    type(f, "s");
    assert_int_equal(f->m.cfg.scale, !scale);
    assert_string_equal(f->a->text, SENTENCE " agains");
    /* Ctrl+U clears; Enter leaves */
    key(f, SDLK_u, KMOD_LCTRL);
    assert_string_equal(f->a->text, "");
    assert_int_equal(f->m.T, 0);
    app_draw(f->a, f->r);
    type(f, "the bank of the river");
    key(f, SDLK_RETURN, 0);
    assert_int_equal(f->a->vs.sentence_focus, 0);
    assert_int_equal(f->m.T, 5);
    assert_up_to_date(f);
}

static void test_click_sentence_bar(void **state)
{
    Fix *f = *state;
    SDL_Rect bar = f->a->layout.sentence;
    assert_true(bar.w > 0);
    click(f, bar.x + bar.w - 5, bar.y + bar.h / 2);
    assert_int_equal(f->a->vs.sentence_focus, 1);
    /* clicking the heatmap leaves the bar */
    const ViewLayout *l = &f->a->layout;
    click(f, l->grid.x + 3, l->grid.y + 3);
    assert_int_equal(f->a->vs.sentence_focus, 0);
}

static void test_long_sentence(void **state)
{
    Fix *f = *state;
    size_t n = 5000 * 5;
    char *s = malloc(n + 1);
    assert_non_null(s);
    for (int k = 0; k < 5000; k++)
        memcpy(s + 5 * k, k % 2 ? "bank " : "the  ", 5);
    s[n - 1] = '\0';
    app_set_sentence(f->a, s);
    assert_int_equal(f->m.toks.n_total, 5000);
    assert_int_equal(f->m.T, ATTN_MAX_TOKENS);
    assert_int_equal(f->m.res.Tq, ATTN_MAX_TOKENS);
    assert_non_null(strstr(f->a->status, "1024"));
    assert_int_equal(f->a->status_err, 1);
    app_draw(f->a, f->r);
    assert_true(f->a->layout.rows_vis >= 1 && f->a->layout.rows_vis <= ATTN_MAX_TOKENS);
    /* the bottom row can be reached and shown */
    for (int k = 0; k < ATTN_MAX_TOKENS + 5; k++)
        key_fast(f, SDLK_DOWN, 0);
    assert_int_equal(f->a->vs.query, ATTN_MAX_TOKENS - 1);
    app_draw(f->a, f->r);
    const ViewLayout *l = &f->a->layout;
    assert_true(l->row0 <= ATTN_MAX_TOKENS - 1 && ATTN_MAX_TOKENS - 1 < l->row0 + l->rows_vis);
    free(s);
    /* back to a short sentence: the selection follows */
    app_set_sentence(f->a, "i am happy");
    assert_int_equal(f->m.T, 3);
    assert_int_equal(f->a->vs.query, 2);
    assert_int_equal(f->a->status_err, 0);
    app_draw(f->a, f->r);
}

/* ---- tests: toggles and selection ------------------------------------------------ */

static void test_toggle_scale(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->m.cfg.scale, 1);
    float *w0 = copy_weights(f);
    key(f, SDLK_s, 0);
    assert_int_equal(f->m.cfg.scale, 0);
    assert_true(weights_differ(f, w0));
    /* unscaled logits are the raw scores: sharper rows */
    assert_int_equal(model_prepare(&f->m, MODEL_LOGITS, 0), 0);
    const float *S = model_matrix(&f->m, MODEL_SCORES, 0), *L = model_matrix(&f->m, MODEL_LOGITS, 0);
    assert_float_equal(L[8], S[8], 1e-6f);
    assert_up_to_date(f);
    key(f, SDLK_s, 0);
    assert_int_equal(f->m.cfg.scale, 1);
    assert_memory_equal(w0, f->m.res.weights, sizeof(float) * 49);
    free(w0);
}

static void test_toggle_mask(void **state)
{
    Fix *f = *state;
    key(f, SDLK_m, 0);
    assert_int_equal(f->m.cfg.causal, 1);
    const float *W = weights(f);
    for (int i = 0; i < 7; i++)
        for (int j = i + 1; j < 7; j++)
            assert_true(W[i * 7 + j] == 0.0f);
    assert_float_equal(W[0], 1.0f, 1e-6f);
    assert_rows_sum_to_one(&f->m);
    key(f, SDLK_m, 0);
    assert_int_equal(f->m.cfg.causal, 0);
    assert_true(weights(f)[1] > 0.0f);
}

static void test_other_toggles(void **state)
{
    Fix *f = *state;
    key(f, SDLK_p, 0);
    assert_int_equal(f->m.cfg.posenc, 1);
    key(f, SDLK_b, 0);
    assert_int_equal(f->m.cfg.mode, ATTN_MODE_BASIC);
    assert_rows_sum_to_one(&f->m);
    key(f, SDLK_b, 0);
    assert_int_equal(f->m.cfg.mode, ATTN_MODE_LEARNED);
    key(f, SDLK_a, 0);
    assert_int_equal(f->a->vs.all_lines, 1);
    key(f, SDLK_F1, 0);
    assert_int_equal(f->a->vs.help, 1);
    key(f, SDLK_ESCAPE, 0);
    assert_int_equal(f->a->vs.help, 0);
    /* Space steps through the step view */
    int r0 = f->a->vs.step_reveal;
    key(f, SDLK_SPACE, 0);
    assert_int_not_equal(f->a->vs.step_reveal, r0);
    assert_up_to_date(f);
}

static void test_click_cell_and_row_label(void **state)
{
    Fix *f = *state;
    const ViewLayout *l = &f->a->layout;
    int x = l->grid.x + (int)(2.5f * l->cell), y = l->grid.y + (int)(4.5f * l->cell);
    click(f, x, y);
    assert_int_equal(f->a->vs.query, 4);
    assert_int_equal(f->a->vs.key, 2);
    /* a row label (left of the grid) selects its row */
    click(f, l->grid.x - 12, l->grid.y + (int)(5.5f * l->cell));
    assert_int_equal(f->a->vs.query, 5);
    /* hovering a cell sets the tooltip's cell; leaving clears it */
    motion(f, l->grid.x + (int)(6.5f * l->cell), l->grid.y + (int)(0.5f * l->cell), 0);
    assert_int_equal(f->a->vs.hover_i, 0);
    assert_int_equal(f->a->vs.hover_j, 6);
    motion(f, 2, 2, 0);
    assert_int_equal(f->a->vs.hover_i, -1);
    /* a right click does not select */
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEBUTTONDOWN;
    e.button.button = SDL_BUTTON_RIGHT;
    e.button.x = x;
    e.button.y = l->grid.y + (int)(0.5f * l->cell);
    send(f, &e);
    assert_int_equal(f->a->vs.query, 5);
}

/* With no key focused, the first Left focuses the key left of the query
 * (the previous token), not the first column (issue 38, item 13); at the
 * first query, the query's own column. */
static void test_first_left(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->a->vs.key, -1);
    for (int k = 0; k < 3; k++)
        key(f, SDLK_DOWN, 0);
    assert_int_equal(f->a->vs.query, 4);
    key(f, SDLK_LEFT, 0);
    assert_int_equal(f->a->vs.key, 3);
    key(f, SDLK_LEFT, 0);
    assert_int_equal(f->a->vs.key, 2);
}

static void test_query_keys(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->a->vs.query, 1);
    key(f, SDLK_DOWN, 0);
    assert_int_equal(f->a->vs.query, 2);
    key(f, SDLK_j, 0);
    assert_int_equal(f->a->vs.query, 3);
    key(f, SDLK_UP, 0);
    assert_int_equal(f->a->vs.query, 2);
    key(f, SDLK_k, 0);
    assert_int_equal(f->a->vs.query, 1);
    for (int k = 0; k < 10; k++)
        key(f, SDLK_DOWN, 0);
    assert_int_equal(f->a->vs.query, 6);
    for (int k = 0; k < 10; k++)
        key(f, SDLK_k, 0);
    assert_int_equal(f->a->vs.query, 0);
    key(f, SDLK_RIGHT, 0);
    key(f, SDLK_RIGHT, 0);
    assert_int_equal(f->a->vs.key, 1);
    key(f, SDLK_LEFT, 0);
    assert_int_equal(f->a->vs.key, 0);
}

static void test_heads(void **state)
{
    Fix *f = *state;
    /* one head: H has nothing to cycle */
    key(f, SDLK_h, 0);
    assert_int_equal(f->a->vs.head, 0);
    key(f, SDLK_RIGHTBRACKET, 0);
    assert_int_equal(f->m.params.h, 2);
    assert_int_equal(f->m.res.h, 2);
    assert_int_equal(f->m.params.dk, 8);
    assert_int_equal(f->a->vs.head, 0);
    assert_rows_sum_to_one(&f->m);
    /* 0, 1, average, 0 */
    key(f, SDLK_h, 0);
    assert_int_equal(f->a->vs.head, 1);
    key(f, SDLK_h, 0);
    assert_int_equal(f->a->vs.head, MODEL_HEAD_AVG);
    key(f, SDLK_h, 0);
    assert_int_equal(f->a->vs.head, 0);
    key(f, SDLK_h, KMOD_LSHIFT);
    assert_int_equal(f->a->vs.head, MODEL_HEAD_AVG);
    /* the average is the mean of the heads */
    assert_int_equal(model_prepare(&f->m, MODEL_WEIGHTS, MODEL_HEAD_AVG), 0);
    const float *avg = model_matrix(&f->m, MODEL_WEIGHTS, MODEL_HEAD_AVG);
    const float *h0 = model_matrix(&f->m, MODEL_WEIGHTS, 0), *h1 = model_matrix(&f->m, MODEL_WEIGHTS, 1);
    for (int k = 0; k < 49; k++)
        assert_float_equal(avg[k], (h0[k] + h1[k]) / 2, 1e-6f);
    key(f, SDLK_LEFTBRACKET, 0);
    assert_int_equal(f->m.params.h, 1);
    assert_int_equal(f->a->vs.head, 0);
    /* d = 16: 1, 2, 4, 8, 16 heads, then no more */
    for (int k = 0; k < 6; k++)
        key(f, SDLK_RIGHTBRACKET, 0);
    assert_int_equal(f->m.params.h, 16);
    assert_int_equal(f->m.params.dk, 1);
    assert_int_equal(f->a->status_err, 0);
    key(f, SDLK_h, KMOD_LSHIFT);
    assert_int_equal(f->a->vs.head, MODEL_HEAD_AVG);
    key(f, SDLK_h, KMOD_LSHIFT);
    assert_int_equal(f->a->vs.head, 15);
    assert_rows_sum_to_one(&f->m);
    assert_up_to_date(f);
    for (int k = 0; k < 6; k++)
        key(f, SDLK_LEFTBRACKET, 0);
    assert_int_equal(f->m.params.h, 1);
    assert_int_equal(f->a->vs.head, 0);
}

static void test_temperature(void **state)
{
    Fix *f = *state;
    float *w0 = copy_weights(f);
    key(f, SDLK_t, 0);
    assert_float_equal(f->m.cfg.temperature, 1.25f, 1e-6f);
    assert_true(weights_differ(f, w0));
    assert_up_to_date(f);
    key(f, SDLK_t, KMOD_LSHIFT);
    assert_float_equal(f->m.cfg.temperature, 1.0f, 1e-6f);
    assert_memory_equal(w0, f->m.res.weights, sizeof(float) * 49);
    for (int k = 0; k < 40; k++)
        key_fast(f, SDLK_t, 0);
    assert_float_equal(f->m.cfg.temperature, 20.0f, 1e-6f);
    for (int k = 0; k < 80; k++)
        key_fast(f, SDLK_t, KMOD_RSHIFT);
    assert_float_equal(f->m.cfg.temperature, 0.05f, 1e-6f);
    assert_rows_sum_to_one(&f->m);
    free(w0);
}

static void test_matrix_and_colormap(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->a->vs.matrix, MODEL_WEIGHTS);
    key(f, SDLK_r, 0);
    assert_int_equal(f->a->vs.matrix, MODEL_SCORES);
    key(f, SDLK_r, 0);
    assert_int_equal(f->a->vs.matrix, MODEL_LOGITS);
    key(f, SDLK_r, 0); /* value-weighted (issue 37) */
    assert_int_equal(f->a->vs.matrix, MODEL_NORMS);
    assert_int_equal(f->a->vs.map.kind, ATTN_MAP_NORMS);
    key(f, SDLK_r, 0);
    assert_int_equal(f->a->vs.matrix, MODEL_WEIGHTS);
    key(f, SDLK_r, KMOD_LSHIFT);
    assert_int_equal(f->a->vs.matrix, MODEL_NORMS);
    key(f, SDLK_r, KMOD_LSHIFT);
    assert_int_equal(f->a->vs.matrix, MODEL_LOGITS);

    assert_int_equal(f->a->vs.cmap, CMAP_VIRIDIS);
    key(f, SDLK_c, 0);
    assert_int_equal(f->a->vs.cmap, CMAP_CIVIDIS);
    key(f, SDLK_c, 0);
    assert_int_equal(f->a->vs.cmap, CMAP_MAGMA);
    key(f, SDLK_c, 0);
    assert_int_equal(f->a->vs.cmap, CMAP_GREYS);
    key(f, SDLK_c, 0);
    assert_int_equal(f->a->vs.cmap, CMAP_VIRIDIS);
}

static void test_sentences_pages(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->sl.n, 3);
    key(f, SDLK_PAGEDOWN, 0);
    assert_string_equal(f->a->text, "the bank of the river");
    assert_string_equal(f->m.text, "the bank of the river");
    assert_int_equal(f->m.T, 5);
    assert_non_null(strstr(f->a->status, "2 of 3"));
    assert_up_to_date(f);
    key(f, SDLK_PAGEDOWN, 0);
    assert_string_equal(f->a->text, "i am happy");
    key(f, SDLK_PAGEDOWN, 0);
    assert_string_equal(f->a->text, SENTENCE);
    key(f, SDLK_PAGEUP, 0);
    assert_string_equal(f->a->text, "i am happy");
    assert_int_equal(f->m.T, 3);
    assert_true(f->a->vs.query < 3);
}

static void test_quit(void **state)
{
    Fix *f = *state;
    key(f, SDLK_q, 0);
    assert_int_equal(f->a->quit, 0);
    key(f, SDLK_q, KMOD_LCTRL);
    assert_int_equal(f->a->quit, 1);
    f->a->quit = 0;
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_QUIT;
    send(f, &e);
    assert_int_equal(f->a->quit, 1);
}

static void test_control_buttons(void **state)
{
    Fix *f = *state;
    click_rect(f, ctl_rect(f, ACT_TOGGLE_MASK, 0));
    assert_int_equal(f->m.cfg.causal, 1);
    assert_true(weights(f)[1] == 0.0f);
    click_rect(f, ctl_rect(f, ACT_TOGGLE_MASK, 0));
    assert_int_equal(f->m.cfg.causal, 0);
    click_rect(f, ctl_rect(f, ACT_TOGGLE_SCALE, 0));
    assert_int_equal(f->m.cfg.scale, 0);
    click_rect(f, ctl_rect(f, ACT_STEP_HEADS, 1));
    assert_int_equal(f->m.params.h, 2);
    click_rect(f, ctl_rect(f, ACT_CYCLE_HEAD, 1));
    assert_int_equal(f->a->vs.head, 1);
    click_rect(f, ctl_rect(f, ACT_STEP_HEADS, -1));
    assert_int_equal(f->m.params.h, 1);
    click_rect(f, ctl_rect(f, ACT_CYCLE_MATRIX, 1));
    assert_int_equal(f->a->vs.matrix, MODEL_SCORES);
    click_rect(f, ctl_rect(f, ACT_CYCLE_CMAP, 0));
    assert_int_equal(f->a->vs.cmap, CMAP_CIVIDIS);
    click_rect(f, ctl_rect(f, ACT_TEMPERATURE, 1));
    assert_float_equal(f->m.cfg.temperature, 1.25f, 1e-6f);
    click_rect(f, ctl_rect(f, ACT_HELP, 0));
    assert_int_equal(f->a->vs.help, 1);
    /* with help shown, a click closes it and does nothing else */
    click_rect(f, ctl_rect(f, ACT_TOGGLE_MASK, 0));
    assert_int_equal(f->a->vs.help, 0);
    assert_int_equal(f->m.cfg.causal, 0);
    assert_up_to_date(f);
}

/* ---- tests: the weight editor (issue 4) ---------------------------------------------- */

static void test_editor_drag(void **state)
{
    Fix *f = *state;
    /* Wq row 0 (noun) column 3: Q[:,3] += delta * X[:,0], against the keys'
     * "func" dimension ("the"): the weights move */
    focus_wq_cell(f, 0, 3);
    float v0 = *wq(f, 0, 3);
    SDL_Point p = edit_cell_centre(f, 0, 3);
    button(f, SDL_MOUSEBUTTONDOWN, p.x, p.y, 1);
    assert_int_equal(f->a->dragging, 1);
    assert_true(f->a->drag_v0 == v0);
    float *w0 = copy_weights(f);
    int undo0 = f->a->undo_n;
    motion(f, p.x, p.y - 10, SDL_BUTTON_LMASK);
    assert_true(*wq(f, 0, 3) == v0 + 10 * 0.02f);
    assert_true(weights_differ(f, w0));
    assert_up_to_date(f);
    motion(f, p.x + 7, p.y - 25, SDL_BUTTON_LMASK);
    float v1 = v0 + 25 * 0.02f;
    assert_true(*wq(f, 0, 3) == v1);
    motion(f, p.x, p.y + 5, SDL_BUTTON_LMASK);
    assert_true(*wq(f, 0, 3) == v0 + -5 * 0.02f);
    motion(f, p.x, p.y - 25, SDL_BUTTON_LMASK);
    button(f, SDL_MOUSEBUTTONUP, p.x, p.y - 25, 1);
    assert_int_equal(f->a->dragging, 0);
    assert_true(*wq(f, 0, 3) == v1);
    assert_non_null(strstr(f->a->status, "Ctrl+Z"));
    /* the whole drag is one undo step */
    assert_int_equal(f->a->undo_n, undo0 + 1);
    key(f, SDLK_z, KMOD_LCTRL);
    assert_true(*wq(f, 0, 3) == v0);
    assert_memory_equal(w0, f->m.res.weights, sizeof(float) * 49);
    key(f, SDLK_y, KMOD_LCTRL);
    assert_true(*wq(f, 0, 3) == v1);
    assert_up_to_date(f);
    key(f, SDLK_z, KMOD_LCTRL | KMOD_LSHIFT); /* nothing more to redo */
    assert_true(*wq(f, 0, 3) == v1);
    key(f, SDLK_z, KMOD_LCTRL);
    assert_true(*wq(f, 0, 3) == v0);
    key(f, SDLK_z, KMOD_LCTRL | KMOD_LSHIFT);
    assert_true(*wq(f, 0, 3) == v1);
    free(w0);

    /* motion without the button pressed moves nothing */
    motion(f, p.x, p.y - 40, 0);
    assert_true(*wq(f, 0, 3) == v1);
}

static void test_editor_wheel_and_keys(void **state)
{
    Fix *f = *state;
    focus_wq_cell(f, 5, 5);
    float v = *wq(f, 5, 5);
    assert_true(v == 1.0f); /* identity */
    SDL_Point p = edit_cell_centre(f, 4, 6);
    motion(f, p.x, p.y, 0);
    float u = *wq(f, 4, 6);
    wheel(f, 1);
    assert_int_equal(f->a->vs.edit_row, 4);
    assert_int_equal(f->a->vs.edit_col, 6);
    assert_true(*wq(f, 4, 6) == u + 0.1f);
    wheel(f, -2);
    assert_true(*wq(f, 4, 6) == (u + 0.1f) + -2 * 0.1f);
    assert_up_to_date(f);

    /* keyboard nudges on the editor's cursor */
    focus_wq_cell(f, 5, 5);
    key(f, SDLK_EQUALS, 0);
    assert_true(*wq(f, 5, 5) == v + 0.1f);
    key(f, SDLK_MINUS, 0);
    assert_true(*wq(f, 5, 5) == (v + 0.1f) + -0.1f);
    float w = *wq(f, 5, 5);
    key(f, SDLK_PLUS, KMOD_LALT); /* Alt: the fine step (Shift changes nothing) */
    assert_true(*wq(f, 5, 5) == w + 0.01f);
    key(f, SDLK_KP_PLUS, 0);
    assert_true(*wq(f, 5, 5) == (w + 0.01f) + 0.1f);
    /* arrows move the editor's cursor, not the query */
    int q = f->a->vs.query;
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_RIGHT, 0);
    assert_int_equal(f->a->vs.edit_row, 6);
    assert_int_equal(f->a->vs.edit_col, 6);
    assert_int_equal(f->a->vs.query, q);
    for (int k = 0; k < 20; k++)
        key(f, SDLK_RIGHT, 0);
    assert_int_equal(f->a->vs.edit_col, f->m.params.dk - 1);
    /* Esc gives the keyboard back: + zooms the heatmap, Down moves the query */
    key(f, SDLK_ESCAPE, 0);
    assert_int_equal(f->a->vs.edit_focus, 0);
    float before = *wq(f, 6, 15);
    key(f, SDLK_EQUALS, 0);
    assert_true(*wq(f, 6, 15) == before);
    key(f, SDLK_DOWN, 0);
    assert_int_equal(f->a->vs.query, q + 1);
}

/* Enter types an exact value: the box starts with the current value, which
 * Backspace clears. */
static void test_editor_type_value(void **state)
{
    Fix *f = *state;
    focus_wq_cell(f, 3, 0); /* func -> noun: the weights move */
    float *w0 = copy_weights(f);
    key(f, SDLK_RETURN, 0);
    assert_int_equal(f->a->editing_value, 1);
    assert_non_null(f->a->vs.edit_text);
    assert_string_equal(f->a->vs.edit_text, "0");
    app_draw(f->a, f->r);
    for (int k = 0; k < 8; k++)
        key(f, SDLK_BACKSPACE, 0);
    assert_string_equal(f->a->edit_buf, "");
    type(f, "0.5");
    /* typing does not reach the shortcuts or the sentence */
    assert_int_equal(f->m.cfg.scale, 1);
    assert_string_equal(f->a->text, SENTENCE);
    key(f, SDLK_RETURN, 0);
    assert_int_equal(f->a->editing_value, 0);
    assert_null(f->a->vs.edit_text);
    assert_true(*wq(f, 3, 0) == 0.5f);
    assert_int_equal(f->a->status_err, 0);
    assert_true(weights_differ(f, w0));
    assert_up_to_date(f);

    /* not a number: refused, the value and the box stay */
    key(f, SDLK_RETURN, 0);
    for (int k = 0; k < 8; k++)
        key(f, SDLK_BACKSPACE, 0);
    type(f, "abc");
    key(f, SDLK_RETURN, 0);
    assert_int_equal(f->a->status_err, 1);
    assert_true(*wq(f, 3, 0) == 0.5f);
    assert_int_equal(f->a->editing_value, 1);
    static const char *const bad[] = {"", "1e9", "nan", "inf", "0.5x", "--1"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        for (int b = 0; b < 12; b++)
            key(f, SDLK_BACKSPACE, 0);
        type(f, bad[k]);
        f->a->status_err = 0;
        key(f, SDLK_RETURN, 0);
        assert_int_equal(f->a->status_err, 1);
        assert_true(*wq(f, 3, 0) == 0.5f);
    }
    /* Esc cancels */
    key(f, SDLK_ESCAPE, 0);
    assert_int_equal(f->a->editing_value, 0);
    assert_true(*wq(f, 3, 0) == 0.5f);
    /* undo restores the typed-over value exactly */
    key(f, SDLK_z, KMOD_LCTRL);
    assert_true(*wq(f, 3, 0) == 0.0f);
    assert_memory_equal(w0, f->m.res.weights, sizeof(float) * 49);

    /* a double click opens the box too; negative numbers and spaces are fine */
    SDL_Point p = edit_cell_centre(f, 7, 1);
    button(f, SDL_MOUSEBUTTONDOWN, p.x, p.y, 2);
    button(f, SDL_MOUSEBUTTONUP, p.x, p.y, 2);
    assert_int_equal(f->a->editing_value, 1);
    for (int b = 0; b < 12; b++)
        key(f, SDLK_BACKSPACE, 0);
    type(f, "-2.25 ");
    key(f, SDLK_KP_ENTER, 0);
    assert_true(*wq(f, 7, 1) == -2.25f);
    free(w0);
}

/* Enter on a cell holding 1 (the identity's diagonal), type 0.5, Enter: the
 * value is 0.5. The box starts with the old value; typing should replace it
 * rather than append to it ("10.5"). */
static void test_editor_typing_replaces_value(void **state)
{
    Fix *f = *state;
    focus_wq_cell(f, 0, 0);
    assert_true(*wq(f, 0, 0) == 1.0f);
    key(f, SDLK_RETURN, 0);
    assert_int_equal(f->a->editing_value, 1);
    type(f, "0.5");
    key(f, SDLK_RETURN, 0);
    if (*wq(f, 0, 0) != 0.5f)
        print_message("typed 0.5 into a cell holding 1: got %g (box held '%s')\n",
                      (double)*wq(f, 0, 0), f->a->edit_buf);
    assert_true(*wq(f, 0, 0) == 0.5f);
    assert_int_equal(f->a->editing_value, 0);
}

static int is_identity(const AttnParams *p)
{
    AttnParams id;
    if (attn_params_create(&id, p->d, p->h) != 0)
        return 0;
    attn_params_identity(&id);
    size_t n = (size_t)p->d * p->d * sizeof(float);
    int same = !memcmp(id.Wq, p->Wq, n) && !memcmp(id.Wk, p->Wk, n) && !memcmp(id.Wv, p->Wv, n) &&
               !memcmp(id.Wo, p->Wo, n);
    attn_params_destroy(&id);
    return same;
}

static void test_editor_buttons(void **state)
{
    Fix *f = *state;
    const ViewLayout *l = &f->a->layout;
    size_t n = (size_t)f->m.d * f->m.d;
    assert_true(is_identity(&f->m.params));
    focus_wq_cell(f, 0, 0);

    /* random: Xavier weights from a seed the status bar names */
    click_rect(f, l->edit_btn[EBTN_RANDOM]);
    assert_int_equal(f->m.has_seed, 1);
    assert_int_equal(f->a->vs.has_seed_shown, 1);
    assert_true(f->a->vs.seed_shown == f->m.seed);
    char seed[32];
    snprintf(seed, sizeof seed, "seed %llu", (unsigned long long)f->m.seed);
    assert_non_null(strstr(f->a->status, seed));
    AttnParams x;
    assert_int_equal(attn_params_create(&x, f->m.d, 1), 0);
    attn_params_xavier(&x, f->m.seed);
    assert_memory_equal(x.Wq, f->m.params.Wq, n * sizeof(float));
    assert_memory_equal(x.Wk, f->m.params.Wk, n * sizeof(float));
    attn_params_destroy(&x);
    assert_up_to_date(f);

    /* swap Wq and Wk: the scores matrix is transposed */
    float *q0 = malloc(n * sizeof(float)), *k0 = malloc(n * sizeof(float));
    float *s0 = malloc(49 * sizeof(float));
    assert_true(q0 && k0 && s0);
    memcpy(q0, f->m.params.Wq, n * sizeof(float));
    memcpy(k0, f->m.params.Wk, n * sizeof(float));
    memcpy(s0, model_matrix(&f->m, MODEL_SCORES, 0), 49 * sizeof(float));
    /* the seed comes from the clock (app.c): a fixed pair of cells is as
     * good as symmetric for about one seed in 800, the most unequal never */
    float asym = 0.0f;
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < i; j++)
            asym = fmaxf(asym, fabsf(s0[i * 7 + j] - s0[j * 7 + i]));
    assert_true(asym > 1e-3f);
    click_rect(f, l->edit_btn[EBTN_SWAP]);
    assert_memory_equal(f->m.params.Wq, k0, n * sizeof(float));
    assert_memory_equal(f->m.params.Wk, q0, n * sizeof(float));
    const float *s1 = model_matrix(&f->m, MODEL_SCORES, 0);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++)
            assert_float_equal(s1[i * 7 + j], s0[j * 7 + i], 1e-5f);
    assert_up_to_date(f);
    /* undo swaps back */
    key(f, SDLK_z, KMOD_LCTRL);
    assert_memory_equal(f->m.params.Wq, q0, n * sizeof(float));
    assert_memory_equal(f->m.params.Wk, k0, n * sizeof(float));

    /* zero: the selected matrix of the head; equal scores, uniform weights */
    click_rect(f, l->edit_btn[EBTN_ZERO]);
    for (size_t k = 0; k < n; k++)
        assert_true(f->m.params.Wq[k] == 0.0f);
    assert_memory_equal(f->m.params.Wk, k0, n * sizeof(float));
    const float *W = weights(f);
    for (int k = 0; k < 49; k++)
        assert_float_equal(W[k], 1.0f / 7, 1e-6f);

    /* identity: the default weights */
    click_rect(f, l->edit_btn[EBTN_IDENTITY]);
    assert_true(is_identity(&f->m.params));
    assert_int_equal(f->m.has_seed, 0);
    assert_up_to_date(f);

    /* the keys do the same: N random, Z zero, X swap, Del reset all */
    key(f, SDLK_n, 0);
    assert_int_equal(f->m.has_seed, 1);
    assert_false(is_identity(&f->m.params));
    key(f, SDLK_DELETE, 0);
    assert_true(is_identity(&f->m.params));
    free(q0);
    free(k0);
    free(s0);
}

/* Every editor button the hit test answers to is drawn inside the editor. */
static void test_editor_buttons_visible(void **state)
{
    Fix *f = *state;
    const ViewLayout *l = &f->a->layout;
    for (int b = 0; b < EBTN_COUNT; b++) {
        SDL_Rect r = l->edit_btn[b];
        if (r.x + r.w > l->editor.x + l->editor.w)
            print_message("editor button %d at x %d..%d: outside the editor (ends at %d), "
                          "not drawn, yet clickable\n", b, r.x, r.x + r.w,
                          l->editor.x + l->editor.w);
        assert_true(r.x + r.w <= l->editor.x + l->editor.w);
    }
}

static void test_undo_depth(void **state)
{
    Fix *f = *state;
    focus_wq_cell(f, 1, 1);
    enum { N = 250 };
    float v[N + 1];
    v[0] = *wq(f, 1, 1);
    for (int k = 1; k <= N; k++) {
        key_fast(f, SDLK_EQUALS, 0);
        v[k] = *wq(f, 1, 1);
        assert_true(v[k] == v[k - 1] + 0.1f);
    }
    for (int k = 1; k <= 200; k++) {
        key_fast(f, SDLK_z, KMOD_LCTRL);
        assert_true(*wq(f, 1, 1) == v[N - k]);
    }
    assert_true(*wq(f, 1, 1) == v[50]);
    for (int k = 0; k < 50; k++)
        key_fast(f, SDLK_z, KMOD_LCTRL);
    assert_true(*wq(f, 1, 1) == v[0]);
    assert_true(is_identity(&f->m.params));
    key(f, SDLK_z, KMOD_LCTRL);
    assert_true(*wq(f, 1, 1) == v[0]);
    assert_non_null(strstr(f->a->status, "nothing to undo"));
    /* and all the way forward again */
    for (int k = 1; k <= N; k++) {
        key_fast(f, SDLK_y, KMOD_LCTRL);
        assert_true(*wq(f, 1, 1) == v[k]);
    }
    key(f, SDLK_y, KMOD_LCTRL);
    assert_true(*wq(f, 1, 1) == v[N]);
    assert_non_null(strstr(f->a->status, "nothing to redo"));
    assert_up_to_date(f);
    /* a new edit after undo drops the redo branch */
    key_fast(f, SDLK_z, KMOD_LCTRL);
    key_fast(f, SDLK_MINUS, 0);
    float w = *wq(f, 1, 1);
    assert_true(w == v[N - 1] + -0.1f);
    key(f, SDLK_y, KMOD_LCTRL);
    assert_true(*wq(f, 1, 1) == w);
}

/* More edits than the history holds: the oldest go, at least 200 stay. */
static void test_undo_overflow(void **state)
{
    Fix *f = *state;
    focus_wq_cell(f, 0, 2);
    enum { N = 300 };
    float v[N + 1];
    v[0] = *wq(f, 0, 2);
    for (int k = 1; k <= N; k++) {
        key_fast(f, SDLK_EQUALS, 0);
        v[k] = *wq(f, 0, 2);
    }
    int undone = 0;
    for (; undone < N + 10; undone++) {
        key_fast(f, SDLK_z, KMOD_LCTRL);
        if (strstr(f->a->status, "nothing to undo"))
            break;
        assert_true(*wq(f, 0, 2) == v[N - 1 - undone]);
    }
    assert_true(undone >= 200);
    assert_true(undone < N);
    assert_true(*wq(f, 0, 2) == v[N - undone]);
    assert_up_to_date(f);
}

/* Heads changes are undone too, with the weights they replaced. */
static void test_undo_heads(void **state)
{
    Fix *f = *state;
    key(f, SDLK_n, 0);
    AttnParams before;
    memset(&before, 0, sizeof before);
    assert_int_equal(attn_params_copy(&before, &f->m.params), 0);
    key(f, SDLK_RIGHTBRACKET, 0);
    assert_int_equal(f->m.params.h, 2);
    key(f, SDLK_h, 0);
    assert_int_equal(f->a->vs.head, 1);
    key(f, SDLK_z, KMOD_LCTRL);
    assert_int_equal(f->m.params.h, 1);
    assert_int_equal(f->m.res.h, 1);
    assert_int_equal(f->a->vs.head, 0);
    size_t n = (size_t)f->m.d * f->m.d * sizeof(float);
    assert_memory_equal(before.Wq, f->m.params.Wq, n);
    assert_memory_equal(before.Wo, f->m.params.Wo, n);
    assert_up_to_date(f);
    key(f, SDLK_y, KMOD_LCTRL);
    assert_int_equal(f->m.params.h, 2);
    assert_up_to_date(f);
    attn_params_destroy(&before);
}

/* Editing X changes the word's vector: every occurrence of the word follows. */
static void test_editor_x(void **state)
{
    Fix *f = *state;
    key(f, SDLK_5, 0);
    assert_int_equal(f->a->vs.edit_target, EDIT_X);
    assert_int_equal(f->a->layout.edit_rows, 7);
    assert_int_equal(f->a->layout.edit_cols, f->m.d);
    SDL_Point p = edit_cell_centre(f, 0, 3); /* "the", dimension 3 */
    click(f, p.x, p.y);
    float v = f->m.E[0 * f->m.d + 3];
    key(f, SDLK_EQUALS, 0);
    assert_true(f->m.E[0 * f->m.d + 3] == v + 0.1f);
    assert_true(f->m.E[3 * f->m.d + 3] == v + 0.1f); /* the other "the" */
    assert_int_equal(f->m.edited[0], 1);
    assert_int_equal(f->m.edited[3], 1);
    assert_int_equal(f->m.edited[1], 0);
    assert_up_to_date(f);
    key(f, SDLK_z, KMOD_LCTRL);
    assert_true(f->m.E[3 * f->m.d + 3] == v);
    assert_int_equal(f->m.edited[0], 0);
    /* the edit survives a change of sentence */
    key(f, SDLK_EQUALS, 0);
    app_set_sentence(f->a, "the bank of the river");
    assert_true(f->m.E[0 * f->m.d + 3] == v + 0.1f);
    assert_int_equal(f->m.edited[0], 1);
    assert_int_equal(f->m.edited[1], 0);
}

/* ---- tests: window size --------------------------------------------------------------- */

static void window_event(Fix *f, Uint8 ev, int w, int h)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_WINDOWEVENT;
    e.window.event = ev;
    e.window.data1 = w;
    e.window.data2 = h;
    send(f, &e);
}

static void test_resize(void **state)
{
    Fix *f = *state;
    /* a real (dummy-driver) window whose size the renderer follows */
    SDL_Window *win = SDL_CreateWindow("attnviz test", 0, 0, 1280, 800, SDL_WINDOW_RESIZABLE);
    assert_non_null(win);
    SDL_Renderer *r = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    assert_non_null(r);
    AttnErr err;
    memset(&err, 0, sizeof err);
    View *v = view_create(r, test_fonts(), &err);
    assert_non_null(v);
    View *old = f->a->view;
    f->a->view = v;
    static const int sizes[][2] = {{1, 1}, {1280, 800}, {1, 800}, {1280, 1}, {300, 200},
                                   {999, 639}, {1000, 640}, {2560, 1440}, {1280, 800}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        SDL_SetWindowSize(win, sizes[k][0], sizes[k][1]);
        SDL_Event e;
        while (SDL_PollEvent(&e))
            app_handle_event(f->a, &e);
        window_event(f, SDL_WINDOWEVENT_SIZE_CHANGED, sizes[k][0], sizes[k][1]);
        app_draw(f->a, r);
        SDL_RenderPresent(r);
        int w, h;
        SDL_GetRendererOutputSize(r, &w, &h);
        assert_int_equal(f->a->layout.w, w);
        assert_int_equal(f->a->layout.h, h);
        /* events at the new size */
        click(f, w / 2, h / 2);
        motion(f, w - 1, h - 1, 0);
        wheel(f, 1);
        key(f, SDLK_DOWN, 0);
        app_draw(f->a, r);
    }
    assert_int_equal(f->a->layout.w, 1280);
    /* a size event of 0×0 is taken as 1×1 */
    window_event(f, SDL_WINDOWEVENT_RESIZED, 0, 0);
    assert_int_equal(f->a->win_w, 1);
    assert_int_equal(f->a->win_h, 1);
    f->a->view = old;
    view_destroy(v);
    SDL_DestroyRenderer(r);
    SDL_DestroyWindow(win);
    app_draw(f->a, f->r);
}

/* Interface size (Ctrl+Plus/Minus/0) scales the layout. */
static void test_ui_scale(void **state)
{
    Fix *f = *state;
    float cell = f->a->layout.cell;
    int bar_h = f->a->layout.sentence.h;
    key(f, SDLK_EQUALS, KMOD_LCTRL);
    assert_float_equal(f->a->ui_scale, 1.15f, 1e-5f);
    assert_true(f->a->layout.sentence.h > bar_h);
    for (int k = 0; k < 20; k++)
        key(f, SDLK_EQUALS, KMOD_LCTRL);
    assert_float_equal(f->a->ui_scale, 3.0f, 1e-5f);
    for (int k = 0; k < 20; k++)
        key(f, SDLK_MINUS, KMOD_LCTRL);
    assert_float_equal(f->a->ui_scale, 0.5f, 1e-5f);
    key(f, SDLK_0, KMOD_LCTRL);
    assert_float_equal(f->a->ui_scale, 1.0f, 1e-6f);
    assert_int_equal(f->a->layout.sentence.h, bar_h);
    assert_float_equal(f->a->layout.cell, cell, 1e-4f);
}

/* An input method's composition (SDL_TEXTEDITING): drawn at the cursor but
 * not in the sentence, the candidate window placed after it, replaced by
 * the committed text, and dropped when the bar loses the keyboard. */
static void test_ime_preedit(void **state)
{
    Fix *f = *state;
    SDL_Event e;
    /* without focus a composition goes nowhere */
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTEDITING;
    snprintf(e.edit.text, sizeof e.edit.text, "%s", "nihao");
    send(f, &e);
    assert_string_equal(f->a->preedit, "");

    key(f, SDLK_RETURN, 0);
    assert_int_equal(f->a->vs.sentence_focus, 1);
    app_draw(f->a, f->r);
    SDL_Rect before = f->a->caret;
    assert_true(before.w > 0 && before.h > 0);
    SDL_Surface *snap = SDL_ConvertSurface(f->surf, f->surf->format, 0);
    assert_non_null(snap);

    /* pinyin being composed: shown after the cursor, not in the text */
    send(f, &e);
    assert_string_equal(f->a->preedit, "nihao");
    assert_string_equal(f->a->text, SENTENCE);
    assert_string_equal(f->m.text, SENTENCE);
    SDL_Rect during = f->a->caret;
    assert_true(during.x > before.x + 20); /* the caret (and candidates) moved on */
    int changed = 0;
    SDL_LockSurface(f->surf);
    for (int y = before.y; y < before.y + before.h; y++)
        for (int x = before.x + 2; x < during.x; x++) {
            const uint8_t *p = (const uint8_t *)f->surf->pixels + (size_t)y * f->surf->pitch + x * 4;
            const uint8_t *q = (const uint8_t *)snap->pixels + (size_t)y * snap->pitch + x * 4;
            changed += memcmp(p, q, 3) != 0;
        }
    SDL_UnlockSurface(f->surf);
    SDL_FreeSurface(snap);
    assert_true(changed > 40); /* the letters and their underline */

    /* the input method commits "你好": in the sentence, composition gone */
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    snprintf(e.text.text, sizeof e.text.text, "%s", "\xE4\xBD\xA0\xE5\xA5\xBD");
    send(f, &e);
    assert_string_equal(f->a->preedit, "");
    assert_string_equal(f->a->text, SENTENCE "\xE4\xBD\xA0\xE5\xA5\xBD");

    /* a composition left open when the bar loses the keyboard is dropped */
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTEDITING;
    snprintf(e.edit.text, sizeof e.edit.text, "%s", "zai");
    send(f, &e);
    assert_string_equal(f->a->preedit, "zai");
    key(f, SDLK_ESCAPE, 0);
    assert_int_equal(f->a->vs.sentence_focus, 0);
    app_draw(f->a, f->r);
    assert_string_equal(f->a->preedit, "");
    assert_null(f->a->vs.preedit);
    assert_string_equal(f->a->text, SENTENCE "\xE4\xBD\xA0\xE5\xA5\xBD");
}

/* D: light theme for a bright room and back; the background follows, the
 * status bar says so, and a session keeps the choice. */
static void test_theme_toggle(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->a->vs.dark, 1);
    SDL_LockSurface(f->surf);
    uint32_t dark_bg = *(const uint32_t *)f->surf->pixels & 0xFFFFFF;
    SDL_UnlockSurface(f->surf);
    key(f, SDLK_d, 0);
    assert_int_equal(f->a->vs.dark, 0);
    assert_non_null(strstr(f->a->status, "light theme"));
    SDL_LockSurface(f->surf);
    uint32_t light_bg = *(const uint32_t *)f->surf->pixels & 0xFFFFFF;
    SDL_UnlockSurface(f->surf);
    assert_true(light_bg != dark_bg);
    assert_true((light_bg & 0xFF) > 200 && (dark_bg & 0xFF) < 60); /* blue channel */
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    const char *path = "build/test-out/theme-session.json";
    assert_int_equal(app_save_session(f->a, path), 0);
    key(f, SDLK_d, 0);
    assert_int_equal(f->a->vs.dark, 1);
    assert_int_equal(open_now(f->a, path), 0);
    assert_int_equal(f->a->vs.dark, 0);
    remove(path);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_init),
        T(test_sentence_bar_typing),
        T(test_click_sentence_bar),
        T(test_ime_preedit),
        T(test_theme_toggle),
        T(test_long_sentence),
        T(test_toggle_scale),
        T(test_toggle_mask),
        T(test_other_toggles),
        T(test_click_cell_and_row_label),
        T(test_first_left),
        T(test_query_keys),
        T(test_heads),
        T(test_temperature),
        T(test_matrix_and_colormap),
        T(test_sentences_pages),
        T(test_quit),
        T(test_control_buttons),
        T(test_editor_drag),
        T(test_editor_wheel_and_keys),
        T(test_editor_type_value),
        T(test_editor_typing_replaces_value),
        T(test_editor_buttons),
        T(test_editor_buttons_visible),
        T(test_undo_depth),
        T(test_undo_overflow),
        T(test_undo_heads),
        T(test_editor_x),
        T(test_resize),
        T(test_ui_scale),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
