/* Tests for actions (src/app/actions.c, input.c): app_apply on its own, the
 * key table (every key acts, the help overlay is made from it), app_tick.
 * Same fixture as test_app.c. Run from the repository root, SDL dummy driver. */
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
#include <unistd.h>

#include "attnviz/app_state.h"
#include "attnviz/attn.h"
#include "attnviz/embed.h"
#include "attnviz/input.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/teach_app.h"
#include "attnviz/view.h"

#include "test_util.h"
#include "test_app_util.h"

/* ---- tests: actions applied directly ----------------------------------------------- */

static int apply(Fix *f, AppActionKind kind, int i, int j, float value)
{
    AppAction act = {kind, i, j, value};
    int changed = app_apply(f->a, &act);
    if (changed)
        app_draw(f->a, f->r);
    return changed;
}

static void test_apply_toggle_mask(void **state)
{
    Fix *f = *state;
    unsigned long n0 = f->a->n_actions;
    assert_int_equal(apply(f, ACT_TOGGLE_MASK, 0, 0, 0.0f), 1);
    assert_int_equal(f->m.cfg.causal, 1);
    const float *W = weights(f);
    for (int i = 0; i < 7; i++)
        for (int j = i + 1; j < 7; j++)
            assert_true(W[i * 7 + j] == 0.0f);
    assert_rows_sum_to_one(&f->m);
    assert_up_to_date(f);
    assert_int_equal(f->a->unsaved, 1);
    assert_int_equal(f->a->n_actions, n0 + 1);
    assert_int_equal(f->a->last_action.kind, ACT_TOGGLE_MASK);
    assert_int_equal(apply(f, ACT_TOGGLE_MASK, 0, 0, 0.0f), 1);
    assert_int_equal(f->m.cfg.causal, 0);
    assert_true(weights(f)[1] > 0.0f);
    /* a toggle of the settings is not an undo step */
    assert_int_equal(f->a->undo_n, 0);
}

static void test_apply_select_query(void **state)
{
    Fix *f = *state;
    assert_int_equal(apply(f, ACT_SELECT_QUERY, 4, 0, 0.0f), 1);
    assert_int_equal(f->a->vs.query, 4);
    /* out of range: ignored, nothing to draw */
    assert_int_equal(apply(f, ACT_SELECT_QUERY, 7, 0, 0.0f), 0);
    assert_int_equal(apply(f, ACT_SELECT_QUERY, -1, 0, 0.0f), 0);
    assert_int_equal(f->a->vs.query, 4);
    /* moves are clamped to the sentence */
    apply(f, ACT_MOVE_QUERY, 100, 0, 0.0f);
    assert_int_equal(f->a->vs.query, 6);
    apply(f, ACT_MOVE_QUERY, -2, 0, 0.0f);
    assert_int_equal(f->a->vs.query, 4);
    apply(f, ACT_MOVE_QUERY, -100, 0, 0.0f);
    assert_int_equal(f->a->vs.query, 0);
    /* a cell: query and key; the editor gives the keyboard back */
    f->a->vs.edit_focus = 1;
    assert_int_equal(apply(f, ACT_SELECT_CELL, 3, 5, 0.0f), 1);
    assert_int_equal(f->a->vs.query, 3);
    assert_int_equal(f->a->vs.key, 5);
    assert_int_equal(f->a->vs.edit_focus, 0);
    assert_int_equal(apply(f, ACT_SELECT_CELL, 3, 7, 0.0f), 0);
    assert_int_equal(f->a->vs.key, 5);
}

/* Nudge a weight by action, undo and redo it; a drag by actions is one
 * undo step however many moves it has. */
static void test_apply_nudge_and_undo(void **state)
{
    Fix *f = *state;
    float v0 = *wq(f, 0, 3);
    float *w0 = copy_weights(f);
    assert_int_equal(apply(f, ACT_NUDGE_CELL, 0, 3, 0.5f), 1);
    assert_true(*wq(f, 0, 3) == v0 + 0.5f);
    assert_int_equal(f->a->vs.edit_row, 0); /* the cursor went there */
    assert_int_equal(f->a->vs.edit_col, 3);
    assert_true(weights_differ(f, w0));
    assert_up_to_date(f);
    assert_int_equal(f->a->undo_n, 1);
    /* a cell outside the matrix: nothing, not even an undo step */
    assert_int_equal(apply(f, ACT_NUDGE_CELL, f->m.d, 0, 0.5f), 0);
    assert_int_equal(apply(f, ACT_NUDGE_CELL, 0, -2, 0.5f), 0);
    assert_int_equal(f->a->undo_n, 1);
    /* the cursor's cell (i < 0) */
    apply(f, ACT_NUDGE_CELL, -1, -1, -0.25f);
    assert_true(*wq(f, 0, 3) == (v0 + 0.5f) + -0.25f);
    apply(f, ACT_UNDO, 0, 0, 0.0f);
    assert_true(*wq(f, 0, 3) == v0 + 0.5f);
    apply(f, ACT_UNDO, 0, 0, 0.0f);
    assert_true(*wq(f, 0, 3) == v0);
    assert_memory_equal(w0, f->m.res.weights, sizeof(float) * 49);
    apply(f, ACT_REDO, 0, 0, 0.0f);
    assert_true(*wq(f, 0, 3) == v0 + 0.5f);
    assert_up_to_date(f);
    apply(f, ACT_UNDO, 0, 0, 0.0f);

    int steps = f->a->undo_pos;
    apply(f, ACT_SET_CELL, 1, 1, 2.0f);
    assert_true(*wq(f, 1, 1) == 2.0f);
    apply(f, ACT_DRAG_BEGIN, 400, 0, 0.0f);
    assert_int_equal(f->a->dragging, 1);
    assert_int_equal(apply(f, ACT_DRAG, 400, 0, 0.02f), 0); /* not moved yet */
    apply(f, ACT_DRAG, 390, 0, 0.02f);
    apply(f, ACT_DRAG, 380, 0, 0.02f);
    apply(f, ACT_DRAG_END, 0, 0, 0.0f);
    assert_int_equal(f->a->dragging, 0);
    assert_true(*wq(f, 1, 1) == 2.0f + 20 * 0.02f);
    assert_int_equal(f->a->undo_pos, steps + 2); /* the value, then the drag */
    apply(f, ACT_UNDO, 0, 0, 0.0f);
    assert_true(*wq(f, 1, 1) == 2.0f);
    apply(f, ACT_UNDO, 0, 0, 0.0f);
    assert_true(*wq(f, 1, 1) == 1.0f);
    assert_memory_equal(w0, f->m.res.weights, sizeof(float) * 49);
    free(w0);
}

/* A message in the status bar is something to draw: an action that only
 * says something (nothing to undo, one head, saved) asks for a redraw. */
static void test_status_is_drawn(void **state)
{
    Fix *f = *state;
    SDL_Event e;
    assert_int_equal(apply(f, ACT_UNDO, 0, 0, 0.0f), 1);
    assert_non_null(strstr(f->a->status, "nothing to undo"));
    key_ev(&e, SDLK_h, 0);
    assert_int_equal(app_handle_event(f->a, &e), 1);
    assert_non_null(strstr(f->a->status, "one head"));
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    const char *path = "build/test-out/status-session.json";
    snprintf(f->a->session_path, sizeof f->a->session_path, "%s", path);
    key_ev(&e, SDLK_s, KMOD_LCTRL);
    assert_int_equal(app_handle_event(f->a, &e), 1);
    assert_non_null(strstr(f->a->status, "saved"));
    remove(path);
}

/* ---- tests: the key table and the help made from it -------------------------------- */

/* The key a help label names, found without the app's own label code. */
static SDL_Keycode key_named(const char *name)
{
    static const struct {
        const char *name;
        SDL_Keycode key;
    } own[] = {{"Enter", SDLK_RETURN}, {"Esc", SDLK_ESCAPE}, {"Plus", SDLK_PLUS},
               {"Minus", SDLK_MINUS}, {"Del", SDLK_DELETE}, {"wheel", APP_KEY_WHEEL},
               {"Comma", SDLK_COMMA}, {"Period", SDLK_PERIOD}};
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
        if (strcmp(own[k].name, name) == 0)
            return own[k].key;
    return SDL_GetKeyFromName(name);
}

/* Does the window's help have a line starting with what? */
static int help_has(const ViewState *vs, const char *what)
{
    for (int l = 0; l < vs->n_help_lines; l++)
        if (strncmp(vs->help_lines[l].what, what, strlen(what)) == 0)
            return 1;
    return 0;
}

/* The help shows what is on screen: with a sentence no attention-file
 * lines; teach mode's lines once it is on (its key always). */
static void test_help_follows_the_mode(void **state)
{
    Fix *f = *state;
    const ViewState *vs = &f->a->vs;
    app_apply(f->a, &(AppAction){ACT_HELP, 0, 0, 0.0f});
    assert_true(vs->help);
    assert_false(help_has(vs, "attention file:"));
    assert_false(help_has(vs, "model view:"));
    assert_false(help_has(vs, "teach: one step"));
    assert_true(help_has(vs, "teach mode"));
    int n_sentence = vs->n_help_lines;
    app_apply(f->a, &(AppAction){ACT_HELP, -1, 0, 0.0f});
    app_apply(f->a, &(AppAction){ACT_TEACH, 0, 0, 0.0f});
    app_apply(f->a, &(AppAction){ACT_HELP, 0, 0, 0.0f});
    assert_true(help_has(vs, "teach: one step"));
    assert_true(vs->n_help_lines > n_sentence);
    assert_false(help_has(vs, "attention file:"));
}

/* The score overview's row (U) says Enter opens a head, not only a click
 * (issue 38). */
static void test_help_overview_enter(void **state)
{
    (void)state;
    static ViewHelpLine lines[APP_HELP_MAX];
    static char text[8192];
    int n = app_help_build(lines, APP_HELP_MAX, text, sizeof text, APP_HELP_FILE), found = 0;
    for (int l = 0; l < n; l++)
        if (strstr(lines[l].what, "the score overview")) {
            found++;
            if (!strstr(lines[l].what, "Enter or a click opens"))
                fail_msg("U's help: %s", lines[l].what);
        }
    assert_int_equal(found, 1);
}

/* Every key a help line shows is a row of the key table with that help text
 * (so it does what the line says), and every row with a help text is shown. */
static void test_help_from_key_table(void **state)
{
    Fix *f = *state;
    static ViewHelpLine all[APP_HELP_MAX];
    static char all_text[8192];
    ViewState every = f->a->vs, *vs = &every; /* the help with every part shown */
    every.help_lines = all;
    every.n_help_lines = app_help_build(all, APP_HELP_MAX, all_text, sizeof all_text,
                                        APP_HELP_FILE | APP_HELP_TEACH | APP_HELP_PROBE);
    int n_rows;
    const AppKey *t = app_key_table(&n_rows);
    assert_non_null(f->a->vs.help_lines);
    assert_true(vs->n_help_lines >= 20);
    char *shown = calloc((size_t)n_rows, 1);
    assert_non_null(shown);
    for (int l = 0; l < vs->n_help_lines; l++) {
        const ViewHelpLine *h = &vs->help_lines[l];
        assert_true(h->keys[0] && h->what[0]);
        for (int k = 0; k < l; k++)
            assert_string_not_equal(vs->help_lines[k].what, h->what);
        char keys[256];
        snprintf(keys, sizeof keys, "%s", h->keys);
        for (char *tok = keys, *next; tok; tok = next) {
            next = strstr(tok, ", ");
            if (next) {
                *next = '\0';
                next += 2;
            }
            int mods = 0;
            const char *name = tok;
            if (strncmp(name, "Ctrl+", 5) == 0 && name[5]) {
                mods |= KEYMOD_CTRL;
                name += 5;
            }
            if (strncmp(name, "Alt+", 4) == 0 && name[4]) {
                mods |= KEYMOD_ALT;
                name += 4;
            }
            if (strncmp(name, "Shift+", 6) == 0 && name[6]) {
                mods |= KEYMOD_SHIFT;
                name += 6;
            }
            SDL_Keycode key = key_named(name);
            int found = 0;
            for (int r = 0; r < n_rows; r++)
                if (t[r].what && strcmp(t[r].what, h->what) == 0 && t[r].key == key &&
                    (t[r].mods & (KEYMOD_CTRL | KEYMOD_ALT | KEYMOD_SHIFT)) == mods)
                    found = shown[r] = 1;
            if (!found)
                fail_msg("help line '%s  %s': key '%s' is not in the key table with that help",
                         h->keys, h->what, tok);
        }
    }
    for (int r = 0; r < n_rows; r++) {
        char label[64];
        if (t[r].what && !shown[r])
            fail_msg("key table row %d (%s, %s) is not in the help", r,
                     app_key_label(&t[r], label, sizeof label), t[r].what);
    }
    free(shown);
}

static void reset_focus(AppState *a)
{
    a->vs.help = 0;
    a->vs.edit_focus = 0;
    a->vs.sentence_focus = 0;
    a->prompt = PROMPT_NONE;
    a->vs.prompt = NULL;
    a->editing_value = 0;
    a->vs.edit_text = NULL;
    a->dragging = 0;
    a->quit = 0;
}

static void assert_action(const AppAction *got, const AppAction *want, const char *what)
{
    if (got->kind != want->kind || got->i != want->i || got->j != want->j || got->value != want->value)
        fail_msg("%s: got %s(%d, %d, %g), want %s(%d, %d, %g)", what, app_action_name(got->kind),
                 got->i, got->j, (double)got->value, app_action_name(want->kind), want->i, want->j,
                 (double)want->value);
}

/* The wheel over the part a wheel row is for, with its modifiers. */
static void wheel_row(Fix *f, const AppKey *r, AppAction *want)
{
    const ViewLayout *l = &f->a->layout;
    SDL_Point p;
    int repin = 0;
    *want = r->act;
    if (r->ctx == KEYCTX_EDIT_CELL) {
        /* a tab with a cell (1, 2): the v tab (key 6, pressed earlier) has one row */
        f->a->vs.edit_target = EDIT_WQ;
        app_draw(f->a, f->r);
        p = edit_cell_centre(f, 1, 2);
        want->i = 1;
        want->j = 2;
    } else if (r->ctx == KEYCTX_HEATMAP) {
        p = (SDL_Point){l->grid.x + l->grid.w / 2, l->grid.y + l->grid.h / 2};
    } else {
        assert_int_equal(r->ctx, KEYCTX_LINES);
        if ((repin = f->a->vs.cmp_ref != NULL)) { /* a comparison hides the lines: unpin */
            app_apply(f->a, &(AppAction){ACT_COMPARE, 0, 0, 0.0f});
            app_draw(f->a, f->r);
        }
        p = (SDL_Point){l->lines.x + l->lines.w / 2, l->lines.y + l->lines.h / 2};
    }
    motion(f, p.x, p.y, 0);
    SDL_SetModState((r->mods & KEYMOD_CTRL ? KMOD_LCTRL : 0) | (r->mods & KEYMOD_ALT ? KMOD_LALT : 0) |
                    (r->mods & KEYMOD_SHIFT ? KMOD_LSHIFT : 0));
    wheel(f, 1);
    SDL_SetModState(KMOD_NONE);
    if (repin) { /* pinned again, as the keys before left it */
        AppAction got = f->a->last_action;
        app_apply(f->a, &(AppAction){ACT_COMPARE, 0, 0, 0.0f});
        f->a->last_action = got;
    }
}

/* Pressing each key of the table (in the context its row is for) applies
 * the row's action; the rows that work anywhere also work while typing. */
/* Stands for the model view's maps: the key context of its keys. */
static const AttnMaps some_maps;

static void test_every_key_acts(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    int n_rows;
    const AppKey *t = app_key_table(&n_rows);
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    mkdir("build/test-out/keys", 0755);
    DIR *old = opendir("build/test-out/keys"); /* a failed run's files would count */
    for (struct dirent *e; old && (e = readdir(old));)
        if (e->d_name[0] != '.') {
            char path[512];
            snprintf(path, sizeof path, "build/test-out/keys/%s", e->d_name);
            unlink(path);
        }
    if (old)
        closedir(old);
    a->export_dir = "build/test-out/keys";
    int exports = a->export_count;
    for (int r = 0; r < n_rows; r++) {
        char label[64], what[160];
        AppAction want = t[r].act;
        app_key_label(&t[r], label, sizeof label);
        snprintf(what, sizeof what, "row %d (%s, context %d)", r, label, (int)t[r].ctx);
        for (int typing = 0; typing < 2; typing++) {
            reset_focus(a);
            unsigned long n0 = a->n_actions;
            if (t[r].key == APP_KEY_WHEEL) {
                if (typing)
                    break;
                wheel_row(f, &t[r], &want);
            } else {
                if (typing && t[r].ctx != KEYCTX_ANY)
                    break;
                a->vs.help = t[r].ctx == KEYCTX_HELP;
                a->vs.edit_focus = t[r].ctx == KEYCTX_EDITOR;
                a->vs.grid = t[r].ctx == KEYCTX_GRID ? &some_maps : NULL; /* the model view's keys */
                a->vs.sentence_focus = typing;
                /* teach mode's keys with teach mode on, the others with it off */
                if (t[r].ctx == KEYCTX_TEACH && !(a->teach && a->teach->on))
                    app_apply(a, &(AppAction){ACT_TEACH, 0, 0, 0.0f});
                else if (t[r].ctx != KEYCTX_TEACH && a->teach)
                    a->teach->on = a->teach->running = 0;
                Uint16 mod = (t[r].mods & KEYMOD_CTRL ? KMOD_LCTRL : 0) |
                             (t[r].mods & KEYMOD_ALT ? KMOD_LALT : 0) |
                             (t[r].mods & KEYMOD_SHIFT ? KMOD_LSHIFT : 0);
                key(f, t[r].key, mod);
            }
            if (a->n_actions == n0)
                fail_msg("%s: no action", what);
            assert_action(&a->last_action, &want, what);
        }
    }
    reset_focus(a);
    a->vs.grid = NULL;
    /* Ctrl+E, L, Shift+E, twice; V has pinned a reference by then, so each
     * Ctrl+E also writes the comparison's difference as CSV */
    assert_int_equal(a->export_count, exports + 8);
    assert_int_equal(test_count_entries("build/test-out/keys"), 8);
    DIR *d = opendir("build/test-out/keys");
    struct dirent *e;
    char path[600];
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "build/test-out/keys/%s", e->d_name);
            remove(path);
        }
    closedir(d);
}

/* app_tick: unsaved edits are written to the autosave file APP_AUTOSAVE_MS
 * after the last autosave and not before; with nothing due the loop may
 * block (wait -1), else it is told how long it may wait. */
static void test_tick_autosave(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    struct stat st;
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    const char *path = "build/test-out/tick-autosave.json";
    remove(path);
    snprintf(a->autosave_path, sizeof a->autosave_path, "%s", path);
    a->unsaved = 0;
    a->autosave_at = 1000;
    int wait = 0;
    assert_int_equal(app_tick(a, 2000, &wait), 0);
    assert_int_equal(wait, -1);
    key(f, SDLK_m, 0); /* an edit */
    assert_int_equal(a->unsaved, 1);
    app_tick(a, 2000, &wait);
    assert_int_equal(wait, APP_AUTOSAVE_MS - 1000 + 1);
    app_tick(a, 1000 + APP_AUTOSAVE_MS - 1, &wait);
    assert_int_equal(wait, 2);
    assert_int_not_equal(stat(path, &st), 0); /* not yet */
    assert_int_equal(a->unsaved, 1);
    app_tick(a, 1000 + APP_AUTOSAVE_MS, &wait);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(a->unsaved, 0);
    assert_int_equal(wait, -1);
    assert_true(a->autosave_at == 1000 + APP_AUTOSAVE_MS);
    remove(path);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_apply_toggle_mask),
        T(test_apply_select_query),
        T(test_apply_nudge_and_undo),
        T(test_status_is_drawn),
        T(test_help_from_key_table),
        T(test_help_overview_enter),
        T(test_help_follows_the_mode),
        T(test_every_key_acts),
        T(test_tick_autosave),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
