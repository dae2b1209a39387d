/* Tests for the window's side of cross-attention and the score functions
 * (issue 14): the second sentence bar (typing through SDL events, Tab, Esc,
 * clicks, clearing it), the F key and the controls that stop applying, the
 * v tab of the weight editor with undo, the X tab with both sentences,
 * PageDown through pairs, and a render of a non-square map. Weights are
 * checked against a naive double-precision forward pass written here.
 * Same fixture as test_app.c (offscreen, SDL dummy driver). */
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
#include "attnviz/input.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/view.h"

#include "test_util.h"
#include "test_app_util.h"

#define KEYS "i am happy"

/* ---- a naive reference ------------------------------------------------------------- */

/* Row i of the weights of one head whose Wq = Wk are the identity (the
 * default, h = 1, so q = x and k = x'): score by function fn over the rows
 * Xq[i] and Xk[j] of d numbers, then softmax in double. */
static void ref_row(const float *Xq, const float *Xk, int Tk, int d, int i, int fn, int scale,
                    double tau, const float *v, double *out)
{
    double mx = -INFINITY, sum = 0.0;
    for (int j = 0; j < Tk; j++) {
        double dot = 0.0, qq = 0.0, kk = 0.0;
        for (int c = 0; c < d; c++) {
            double q = Xq[(size_t)i * d + c], k = Xk[(size_t)j * d + c];
            dot += q * k;
            qq += q * q;
            kk += k * k;
        }
        double sc = dot;
        if (fn == ATTN_SCORE_ADDITIVE) { /* vᵀ tanh(q + k) */
            sc = 0.0;
            for (int c = 0; c < d; c++)
                sc += v[c] * tanh((double)Xq[(size_t)i * d + c] + Xk[(size_t)j * d + c]);
        } else if (fn == ATTN_SCORE_COSINE)
            sc = qq > 0 && kk > 0 ? dot / (sqrt(qq) * sqrt(kk)) : 0.0;
        else if (scale)
            sc /= sqrt((double)d);
        out[j] = sc / tau;
        mx = out[j] > mx ? out[j] : mx;
    }
    for (int j = 0; j < Tk; j++)
        sum += out[j] = exp(out[j] - mx);
    for (int j = 0; j < Tk; j++)
        out[j] /= sum;
}

/* The shown weights (vs.weights) against the reference, every cell. */
static void assert_cross_weights(Fix *f, int fn)
{
    const Model *m = &f->m;
    const AttnMap *w = &f->a->vs.weights;
    assert_int_equal(w->Tq, m->T);
    assert_int_equal(w->Tk, m->Tk);
    double row[ATTN_MAX_TOKENS];
    for (int i = 0; i < m->T; i++) {
        const float *v = m->cfg.mode == ATTN_MODE_BASIC ? m->params.vb : m->params.v; /* head 1's */
        ref_row(m->X, m->Xk, m->Tk, m->d, i, fn, m->cfg.scale, m->cfg.temperature, v, row);
        for (int j = 0; j < m->Tk; j++)
            assert_true(fabs(attn_map_at(w, i, j) - row[j]) < 1e-5);
    }
}

/* Shift+Enter, then KEYS typed one character at a time. */
static void type_keys(Fix *f)
{
    key(f, SDLK_RETURN, KMOD_LSHIFT);
    assert_int_equal(f->a->vs.keys_focus, 1);
    assert_int_equal(f->a->vs.sentence_focus, 1);
    type(f, KEYS);
}

/* ---- tests ------------------------------------------------------------------------- */

/* The first bar's label: "Sentence" alone, "Queries…" once a second
 * sentence gives the keys (issue 28, item 2), "Sentence" again without. */
static void test_first_bar_says_queries(void **state)
{
    Fix *f = *state;
    app_draw(f->a, f->r);
    assert_string_equal(f->a->vs.bar_label, "Sentence");
    type_keys(f);
    app_draw(f->a, f->r);
    assert_true(f->a->m->cross);
    assert_true(strncmp(f->a->vs.bar_label, "Queries", 7) == 0);
    app_set_keys(f->a, "");
    app_draw(f->a, f->r);
    assert_string_equal(f->a->vs.bar_label, "Sentence");
}

/* Typing into the second bar: live cross-attention, Tq × Tk, the labels
 * the right way round, the text cursor after the text. */
static void test_type_second_bar(void **state)
{
    Fix *f = *state;
    assert_int_equal(f->m.cross, 0);
    type_keys(f);
    assert_string_equal(f->a->keys, KEYS);
    assert_string_equal(f->a->vs.keys_sentence, KEYS);
    assert_int_equal(f->a->vs.keys_cursor, (int)strlen(KEYS));
    assert_string_equal(f->a->text, SENTENCE); /* the first bar untouched */
    assert_int_equal(f->m.cross, 1);
    assert_int_equal(f->m.T, 7);
    assert_int_equal(f->m.Tk, 3);
    const AttnMap *w = &f->a->vs.map;
    assert_int_equal(w->Tq, 7);
    assert_int_equal(w->Tk, 3);
    assert_string_equal(w->q_labels[6], "time");
    assert_string_equal(w->k_labels[0], "i");
    assert_string_equal(w->k_labels[2], "happy");
    assert_cross_weights(f, ATTN_SCORE_DOT);
    /* Backspace edits the second bar, live: "happ" is another word */
    key(f, SDLK_BACKSPACE, 0);
    assert_string_equal(f->a->keys, "i am happ");
    assert_int_equal(f->m.Tk, 3);
    assert_string_equal(f->a->vs.map.k_labels[2], "happ");
    assert_cross_weights(f, ATTN_SCORE_DOT);
    /* a multi-byte character (one text event) and the cursor moving over it whole */
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    snprintf(e.text.text, sizeof e.text.text, "%s", "\xC3\xA9");
    send(f, &e);
    assert_string_equal(f->a->vs.map.k_labels[2], "happ\xC3\xA9");
    key(f, SDLK_LEFT, 0);
    assert_int_equal(f->a->vs.keys_cursor, (int)strlen("i am happ"));
    /* an input method's composition is shown in the bar that has the keyboard */
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTEDITING;
    snprintf(e.edit.text, sizeof e.edit.text, "%s", "ka");
    send(f, &e);
    assert_string_equal(f->a->preedit, "ka");
    assert_string_equal(f->a->keys, "i am happ\xC3\xA9"); /* not committed yet */
}

/* Tab: first bar → second bar → the heatmap; Esc leaves either. */
static void test_tab_cycle(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    key(f, SDLK_RETURN, 0);
    assert_int_equal(a->vs.sentence_focus, 1);
    assert_int_equal(a->vs.keys_focus, 0);
    key(f, SDLK_TAB, 0);
    assert_int_equal(a->vs.sentence_focus, 1);
    assert_int_equal(a->vs.keys_focus, 1);
    type(f, "x");
    assert_string_equal(a->keys, "x");
    assert_string_equal(a->text, SENTENCE);
    key(f, SDLK_TAB, 0);
    assert_int_equal(a->vs.sentence_focus, 0);
    assert_int_equal(a->vs.keys_focus, 0);
    /* the keys act as shortcuts again: Down moves the query */
    int q = a->vs.query;
    key(f, SDLK_DOWN, 0);
    assert_int_equal(a->vs.query, q + 1);
    key(f, SDLK_RETURN, KMOD_LSHIFT);
    assert_int_equal(a->vs.keys_focus, 1);
    key(f, SDLK_ESCAPE, 0);
    assert_int_equal(a->vs.sentence_focus, 0);
    assert_int_equal(a->vs.keys_focus, 0);
    /* a click in the second bar gives it the keyboard; one in the first takes it */
    click(f, a->layout.keys_bar.x + a->layout.keys_bar.w / 2, a->layout.keys_bar.y + a->layout.keys_bar.h / 2);
    assert_int_equal(a->vs.keys_focus, 1);
    click(f, a->layout.sentence.x + a->layout.sentence.w / 2, a->layout.sentence.y + a->layout.sentence.h / 2);
    assert_int_equal(a->vs.sentence_focus, 1);
    assert_int_equal(a->vs.keys_focus, 0);
}

/* Clearing the second bar: self-attention again, the same floats as before. */
static void test_clear_returns_to_self(void **state)
{
    Fix *f = *state;
    float *before = copy_weights(f);
    int T = f->m.T;
    type_keys(f);
    assert_int_equal(f->m.cross, 1);
    key(f, SDLK_u, KMOD_LCTRL);
    assert_string_equal(f->a->keys, "");
    assert_int_equal(f->m.cross, 0);
    assert_int_equal(f->m.Tk, T);
    assert_int_equal(f->a->vs.map.Tk, T);
    assert_memory_equal(before, weights(f), (size_t)T * T * sizeof(float));
    free(before);
    /* with self-attention the mask works again */
    key(f, SDLK_ESCAPE, 0);
    key(f, SDLK_m, 0);
    assert_int_equal(model_causal(&f->m), 1);
}

/* The mask with two sentences: off, and the status bar says why. */
static void test_mask_with_two_sentences(void **state)
{
    Fix *f = *state;
    type_keys(f);
    key(f, SDLK_TAB, 0);
    key(f, SDLK_m, 0);
    assert_int_equal(f->m.cfg.causal, 0);
    assert_int_equal(model_causal(&f->m), 0);
    assert_non_null(strstr(f->a->status, "self-attention only"));
    assert_cross_weights(f, ATTN_SCORE_DOT);
}

/* F cycles dot → cosine → additive → dot, Shift+F backwards; cosine
 * suggests a small τ, S says the scaling is dot's. */
static void test_score_cycle(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    type_keys(f);
    key(f, SDLK_TAB, 0);
    key(f, SDLK_f, 0);
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_COSINE);
    assert_non_null(strstr(a->status, "try \xCF\x84 \xE2\x89\x88 0.1"));
    assert_cross_weights(f, ATTN_SCORE_COSINE);
    int scale = f->m.cfg.scale;
    key(f, SDLK_s, 0);
    assert_int_equal(f->m.cfg.scale, scale);
    assert_non_null(strstr(a->status, "dot score only"));
    key(f, SDLK_f, 0);
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_ADDITIVE);
    assert_non_null(strstr(a->status, "tanh"));
    key(f, SDLK_f, 0);
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_DOT);
    key(f, SDLK_f, KMOD_LSHIFT);
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_ADDITIVE);
    key(f, SDLK_f, KMOD_LSHIFT);
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_COSINE);
    /* the [F] control cycles too */
    click_rect(f, ctl_rect(f, ACT_CYCLE_SCORE, 1));
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_ADDITIVE);
    /* back to dot: S works again */
    key(f, SDLK_f, 0);
    key(f, SDLK_s, 0);
    assert_int_equal(f->m.cfg.scale, !scale);
    assert_cross_weights(f, ATTN_SCORE_DOT);
}

/* The v tab: nudging v changes the additive weights, Ctrl+Z puts back
 * every bit; in basic mode the tab edits vb (1 × d). */
static void test_edit_v_and_undo(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    key(f, SDLK_f, 0);
    key(f, SDLK_f, 0);
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_ADDITIVE);
    key(f, SDLK_6, 0);
    assert_int_equal(a->vs.edit_target, EDIT_V);
    int dk = f->m.params.dk;
    assert_int_equal(a->layout.edit_rows, 1);
    assert_int_equal(a->layout.edit_cols, dk);
    float v0 = f->m.params.v[0];
    assert_true(fabsf(v0 - 1.0f / sqrtf((float)dk)) < 1e-6f);
    float *before = copy_weights(f);
    assert_cross_weights(f, ATTN_SCORE_ADDITIVE);
    /* the wheel over the cell (0, 0) nudges v's "noun" entry (nouns differ
     * between keys, so the weights change) */
    SDL_Point p = edit_cell_centre(f, 0, 0);
    motion(f, p.x, p.y, 0);
    wheel(f, 1);
    assert_true(fabsf(f->m.params.v[0] - (v0 + 0.1f)) < 1e-6f);
    assert_true(weights_differ(f, before));
    assert_up_to_date(f);
    assert_cross_weights(f, ATTN_SCORE_ADDITIVE);
    key(f, SDLK_z, KMOD_LCTRL);
    assert_true(f->m.params.v[0] == v0);
    assert_memory_equal(before, weights(f), (size_t)f->m.T * f->m.T * sizeof(float));
    free(before);
    /* basic mode: the tab shows vb, d numbers */
    key(f, SDLK_b, 0);
    assert_int_equal(a->layout.edit_cols, f->m.d);
    {
        AppAction act = {ACT_NUDGE_CELL, 0, 1, -0.5f};
        float b0 = f->m.params.vb[1];
        app_apply(a, &act);
        app_draw(a, f->r);
        assert_true(fabsf(f->m.params.vb[1] - (b0 - 0.5f)) < 1e-6f);
        assert_cross_weights(f, ATTN_SCORE_ADDITIVE); /* basic: q = k = x, vb */
        key(f, SDLK_z, KMOD_LCTRL);
        assert_true(f->m.params.vb[1] == b0);
    }
    /* not additive: the tab still opens, and says what v is for */
    key(f, SDLK_f, 0);
    key(f, SDLK_6, 0);
    assert_non_null(strstr(a->status, "additive"));
}

/* The X tab with two sentences: the second sentence's rows after the
 * first's; a word in both has one vector, edited from either row. */
static void test_x_tab_two_sentences(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    key(f, SDLK_RETURN, KMOD_LSHIFT);
    type(f, "the river");
    key(f, SDLK_TAB, 0);
    key(f, SDLK_5, 0);
    assert_int_equal(a->vs.edit_target, EDIT_X);
    int T = f->m.T, d = f->m.d;
    assert_int_equal(f->m.Tk, 2);
    assert_int_equal(a->layout.edit_rows, T + 2);
    /* row T is "the" of the second sentence; "the" is token 0 and 3 of the first */
    AppAction act = {ACT_SET_CELL, T, 4, 2.5f};
    app_apply(a, &act);
    app_draw(a, f->r);
    assert_true(f->m.Ek[4] == 2.5f);
    assert_true(f->m.E[4] == 2.5f);
    assert_true(f->m.E[(size_t)3 * d + 4] == 2.5f);
    assert_true(f->m.E[(size_t)1 * d + 4] != 2.5f); /* "train" is another word */
    assert_int_equal(a->undo_n, 1);
    assert_cross_weights(f, ATTN_SCORE_DOT);
    key(f, SDLK_z, KMOD_LCTRL);
    assert_true(f->m.Ek[4] != 2.5f);
    assert_true(f->m.E[4] != 2.5f);
}

/* PageDown through a list of pairs: a pair's second sentence fills the
 * second bar, a plain line clears it. */
static void test_pages_through_pairs(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    static char *text[] = {"je suis heureux", "the red car", "the bank of the river"};
    static char *keys[] = {"i am happy", "la voiture rouge", ""};
    static long line[] = {1, 2, 3};
    SentenceList pairs = {3, text, keys, line, NULL};
    SentenceList *own = a->sentences;
    a->sentences = &pairs;
    a->sentence_idx = 2;
    key(f, SDLK_PAGEDOWN, 0);
    assert_string_equal(a->text, "je suis heureux");
    assert_string_equal(a->keys, "i am happy");
    assert_int_equal(f->m.cross, 1);
    assert_int_equal(a->vs.map.Tq, 3);
    assert_int_equal(a->vs.map.Tk, 3);
    assert_string_equal(a->vs.map.k_labels[2], "happy");
    key(f, SDLK_PAGEDOWN, 0);
    assert_string_equal(a->keys, "la voiture rouge");
    assert_string_equal(a->vs.map.q_labels[1], "red");
    assert_string_equal(a->vs.map.k_labels[1], "voiture");
    key(f, SDLK_PAGEDOWN, 0);
    assert_string_equal(a->keys, "");
    assert_int_equal(f->m.cross, 0);
    assert_int_equal(a->vs.map.Tk, 5);
    a->sentences = own;
}

/* After a load sets the model's second sentence (a session does this
 * through model_apply_session), app_set_sentence shows it in the bar. */
static void test_bar_follows_model(void **state)
{
    Fix *f = *state;
    assert_int_equal(model_set_keys(&f->m, "la voiture", 10), 0);
    app_set_sentence(f->a, "the red car");
    app_draw(f->a, f->r);
    assert_string_equal(f->a->keys, "la voiture");
    assert_string_equal(f->a->vs.keys_sentence, "la voiture");
    assert_int_equal(f->a->vs.map.Tk, 2);
    assert_cross_weights(f, ATTN_SCORE_DOT);
}

/* A session keeps the second sentence: saved with it, the bar cleared,
 * the session opened again: the bar and the model have it back. */
static void test_session_round_trip(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    const char *path = "build/test-out/cross-session.json";
    type_keys(f);
    key(f, SDLK_TAB, 0);
    key(f, SDLK_f, 0); /* cosine, saved too */
    assert_int_equal(app_save_session(a, path), 0);
    app_set_keys(a, "");
    key(f, SDLK_f, 0);
    assert_int_equal(f->m.cross, 0);
    assert_int_equal(open_now(a, path), 0);
    app_draw(a, f->r);
    assert_string_equal(a->keys, KEYS);
    assert_string_equal(a->vs.keys_sentence, KEYS);
    assert_int_equal(f->m.cross, 1);
    assert_int_equal(f->m.cfg.score, ATTN_SCORE_COSINE);
    assert_cross_weights(f, ATTN_SCORE_COSINE);
    remove(path);
}

/* The window's heatmap and line diagram of a 7 × 3 map: 7 rows of cells
 * and 3 columns (a transposed drawing has 3 rows), the hit tests agree,
 * the key cursor stops at Tk, the line diagram's right column has 3
 * tokens and its left 7. */
static void test_render_non_square(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    type_keys(f);
    key(f, SDLK_TAB, 0);
    const ViewLayout *l = &a->layout;
    assert_int_equal(l->rows_vis, 7);
    assert_int_equal(l->cols_vis, 3);
    assert_true(l->grid.h > 2 * l->grid.w); /* 7 rows, 3 columns of square cells */
    int i, j;
    assert_true(view_hit_cell(l, l->grid.x + l->grid.w - 2, l->grid.y + l->grid.h - 2, &i, &j));
    assert_int_equal(i, 6);
    assert_int_equal(j, 2);
    /* a click there selects query 6 ("time") and key 2 ("happy") */
    click(f, l->grid.x + l->grid.w - 2, l->grid.y + l->grid.h - 2);
    assert_int_equal(a->vs.query, 6);
    assert_int_equal(a->vs.key, 2);
    key(f, SDLK_RIGHT, 0);
    assert_int_equal(a->vs.key, 2); /* no key 3 */
    key(f, SDLK_DOWN, 0);
    assert_int_equal(a->vs.query, 6);
    /* the line diagram: 7 rows; the right side names keys 0..2 only */
    assert_int_equal(l->lines_vis, 7);
    float y0 = l->lines_left.y + (l->lines_left.h - l->lines_vis * l->line_step) / 2;
    int side, k;
    int xr = l->lines_right.x + l->lines_right.w / 2, xl = l->lines_left.x + l->lines_left.w / 2;
    assert_true(view_hit_line_token(l, xr, (int)(y0 + 1.5f * l->line_step), &k, &side));
    assert_int_equal(side, 1);
    click(f, xr, (int)(y0 + 1.5f * l->line_step));
    assert_int_equal(a->vs.key, 1);
    click(f, xr, (int)(y0 + 5.5f * l->line_step)); /* no key token there */
    assert_int_equal(a->vs.key, 1);
    click(f, xl, (int)(y0 + 5.5f * l->line_step));
    assert_int_equal(a->vs.query, 5);
    /* pixels: the heatmap's cells fill 3 columns, not 7: the row of cells
     * stops at the grid's right edge, right of it the panel shows no cell
     * colours (the colour bar is further right, after a gap) */
    SDL_Surface *s = f->surf;
    int y = l->grid.y + l->grid.h - (int)(l->cell / 2);
    Uint32 *row = (Uint32 *)((Uint8 *)s->pixels + (size_t)y * s->pitch);
    Uint32 inside = row[l->grid.x + l->grid.w - (int)(l->cell / 2)];
    Uint32 bg = row[l->heatmap.x + 1];
    assert_true(inside != bg);
    assert_true(row[l->grid.x + l->grid.w + 3] == bg);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_type_second_bar),
        T(test_first_bar_says_queries),
        T(test_tab_cycle),
        T(test_clear_returns_to_self),
        T(test_mask_with_two_sentences),
        T(test_score_cycle),
        T(test_edit_v_and_undo),
        T(test_x_tab_two_sentences),
        T(test_pages_through_pairs),
        T(test_bar_follows_model),
        T(test_session_round_trip),
        T(test_render_non_square),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
