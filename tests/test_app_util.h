/* The fixture the application's tests share (test_app.c, test_actions.c): an
 * AppState drawing into an offscreen 1280x800 software renderer, events handed
 * over as the window's loop does, checks of the model. Include after cmocka.h. */
#ifndef ATTNVIZ_TEST_APP_UTIL_H
#define ATTNVIZ_TEST_APP_UTIL_H

#include <SDL.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/app_state.h"
#include "attnviz/attnfile.h"
#include "attnviz/embed.h"
#include "attnviz/io.h"
#include "attnviz/options.h"
#include "attnviz/view.h"
#include "attnviz/wake.h"

#include "test_util.h"

#define SENTENCE "the train left the station on time"
#define SENTENCES_FILE "# two sentences\nthe train left the station on time\nthe bank of the river\ni am happy\n"

static EmbedTable *table;

/* Under ASan: fontconfig 2.14 leaks 288 bytes while loading its configuration
 * in FcInit (fonts_find_default) unless FcFini is called at exit; that is the
 * library's, not attnviz's. Unused in normal builds. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:FcInitLoadConfigAndFonts\nleak:libfontconfig.so\n";
}

typedef struct Fix {
    Options o;
    Model m;
    SentenceList sl;
    SDL_Surface *surf;
    SDL_Renderer *r;
    AppState *a;
    Uint32 t; /* event timestamps, ms */
} Fix;

/* ---- fixtures ------------------------------------------------------------------- */

static inline int group_setup(void **state)
{
    (void)state;
    return test_sdl_dummy() < 0 || test_load_embeddings(&table) < 0 ? -1 : 0;
}

static inline int group_teardown(void **state)
{
    (void)state;
    embed_destroy(table);
    SDL_Quit();
    return 0;
}

static inline int setup(void **state)
{
    Fix *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    AttnErr err;
    memset(&err, 0, sizeof err);
    char *argv[] = {"attnviz", NULL};
    if (options_parse(&f->o, 1, argv, &err) != 0)
        return -1;
    if (model_init(&f->m, table, &f->o.cfg) != 0 ||
        model_set_text(&f->m, SENTENCE, strlen(SENTENCE)) != 0)
        return -1;
    if (sentences_parse(&f->sl, SENTENCES_FILE, strlen(SENTENCES_FILE), "test", &err) != 0)
        return -1;
    f->a = calloc(1, sizeof *f->a);
    if (!f->a || app_init(f->a, &f->m, &f->o, &f->sl) != 0)
        return -1;
    f->surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 24, SDL_PIXELFORMAT_RGB888);
    f->r = f->surf ? SDL_CreateSoftwareRenderer(f->surf) : NULL;
    if (!f->r)
        return -1;
    f->a->view = view_create(f->r, test_fonts(), &err);
    if (!f->a->view) {
        fprintf(stderr, "view_create: %s\n", err.msg);
        return -1;
    }
    app_draw(f->a, f->r);
    f->t = 10000;
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    Fix *f = *state;
    if (!f)
        return 0;
    if (f->a) {
        view_destroy(f->a->view);
        app_free(f->a);
        free(f->a);
    }
    if (f->r)
        SDL_DestroyRenderer(f->r);
    SDL_FreeSurface(f->surf);
    sentences_free(&f->sl);
    model_destroy(&f->m);
    options_free(&f->o);
    free(f);
    return 0;
}

/* The rectangle of the control whose click gives act (kind and i). */
static inline SDL_Rect ctl_rect(const Fix *f, AppActionKind kind, int i)
{
    const AppState *a = f->a;
    for (int c = 0; c < a->vs.n_ctl; c++)
        if (a->ctl_act[c].kind == kind && a->ctl_act[c].i == i)
            return a->layout.ctl[c];
    return (SDL_Rect){0, 0, 0, 0};
}

/* ---- events ------------------------------------------------------------------------ */

/* Hand the event over and redraw when something changed, as the loop does. */
static inline int send(Fix *f, SDL_Event *e)
{
    f->t += 1000;
    e->common.timestamp = f->t;
    int changed = app_handle_event(f->a, e);
    if (changed)
        app_draw(f->a, f->r);
    return changed;
}

static inline void key_ev(SDL_Event *e, SDL_Keycode sym, Uint16 mod)
{
    memset(e, 0, sizeof *e);
    e->type = SDL_KEYDOWN;
    e->key.state = SDL_PRESSED;
    e->key.keysym.sym = sym;
    e->key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    e->key.keysym.mod = mod;
}

static inline void key(Fix *f, SDL_Keycode sym, Uint16 mod)
{
    SDL_Event e;
    key_ev(&e, sym, mod);
    send(f, &e);
}

/* Without redrawing: for long runs of events. */
static inline void key_fast(Fix *f, SDL_Keycode sym, Uint16 mod)
{
    SDL_Event e;
    key_ev(&e, sym, mod);
    app_handle_event(f->a, &e);
}

/* Type text one character per SDL_TEXTINPUT event, as a keyboard does. */
static inline void type(Fix *f, const char *s)
{
    for (; *s; s++) {
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = SDL_TEXTINPUT;
        e.text.text[0] = *s;
        send(f, &e);
    }
}

static inline void button(Fix *f, Uint32 type, int x, int y, Uint8 clicks)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = type;
    e.button.button = SDL_BUTTON_LEFT;
    e.button.state = type == SDL_MOUSEBUTTONDOWN ? SDL_PRESSED : SDL_RELEASED;
    e.button.clicks = clicks;
    e.button.x = x;
    e.button.y = y;
    send(f, &e);
}

static inline void click(Fix *f, int x, int y)
{
    button(f, SDL_MOUSEBUTTONDOWN, x, y, 1);
    button(f, SDL_MOUSEBUTTONUP, x, y, 1);
}

static inline void click_rect(Fix *f, SDL_Rect r)
{
    click(f, r.x + r.w / 2, r.y + r.h / 2);
}

static inline void motion(Fix *f, int x, int y, Uint32 state)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.state = state;
    e.motion.x = x;
    e.motion.y = y;
    send(f, &e);
}

/* One turn of the window's loop: an event (waiting up to ms for it; the
 * wake event is the loop's own), the tick, a frame. */
static inline void loop_turn(Fix *f, int ms)
{
    SDL_Event e;
    int wait_ms;
    if (SDL_WaitEventTimeout(&e, ms) && !app_wake_is(&e))
        app_handle_event(f->a, &e);
    app_tick(f->a, SDL_GetTicks(), &wait_ms);
    app_draw(f->a, f->r);
}

/* Until a model's maps shown are those of the bar's text (its worker's);
 * 1, or 0 after 20 s without. */
static inline int wait_maps(Fix *f)
{
    for (int k = 0; k < 400; k++) {
        loop_turn(f, 50);
        if (!f->a->vs.stale && f->a->vs.map.v)
            return 1;
    }
    return 0;
}

/* app_open_path, then its model (which opens on a thread of its own)
 * waited for: 0 shown, -1 refused or failed (the status bar says why). */
static inline int open_now(AppState *a, const char *path)
{
    int rc = app_open_path(a, path);
    return rc < 0 ? rc : app_open_wait(a);
}

/* Until the step view's panel text holds want; 1, or 0 after 8 s. */
static inline int wait_panel(Fix *f, const char *want)
{
    for (int k = 0; k < 400; k++) {
        loop_turn(f, 20);
        if (f->a->vs.no_model && strstr(f->a->vs.no_model, want))
            return 1;
    }
    return 0;
}

static inline void wheel(Fix *f, int dy)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEWHEEL;
    e.wheel.y = dy;
    e.wheel.direction = SDL_MOUSEWHEEL_NORMAL;
    send(f, &e);
}

/* ---- model checks ------------------------------------------------------------------ */

static inline const float *weights(const Fix *f)
{
    return model_matrix(&f->m, MODEL_WEIGHTS, f->a->vs.head < 0 ? 0 : f->a->vs.head);
}

static inline void assert_rows_sum_to_one(const Model *m)
{
    int T = m->res.Tq;
    for (int k = 0; k < m->res.h; k++) {
        const float *W = model_matrix(m, MODEL_WEIGHTS, k);
        for (int i = 0; i < T; i++) {
            double s = 0;
            for (int j = 0; j < T; j++) {
                assert_true(W[(size_t)i * T + j] >= 0.0f);
                s += W[(size_t)i * T + j];
            }
            assert_true(fabs(s - 1.0) < 1e-5);
        }
    }
}

/* The weights on show were computed from the current parameters and text:
 * computing again gives the same numbers. */
static inline void assert_up_to_date(Fix *f)
{
    Model *m = &f->m;
    int T = m->T, h = m->res.h;
    assert_int_equal(m->res.Tq, T);
    size_t n = (size_t)h * T * T;
    float *before = malloc(n * sizeof(float) + 1);
    assert_non_null(before);
    memcpy(before, m->res.weights, n * sizeof(float));
    assert_int_equal(model_compute(m), 0);
    assert_memory_equal(before, m->res.weights, n * sizeof(float));
    free(before);
}

static inline float *copy_weights(const Fix *f)
{
    size_t n = (size_t)f->m.res.h * f->m.T * f->m.T;
    float *w = malloc(n * sizeof(float));
    assert_non_null(w);
    memcpy(w, f->m.res.weights, n * sizeof(float));
    return w;
}

static inline int weights_differ(const Fix *f, const float *old)
{
    size_t n = (size_t)f->m.res.h * f->m.T * f->m.T;
    for (size_t k = 0; k < n; k++)
        if (fabsf(old[k] - f->m.res.weights[k]) > 1e-6f)
            return 1;
    return 0;
}

/* ---- editor helpers -------------------------------------------------------------- */

static inline float *wq(Fix *f, int row, int col)
{
    int rows, cols;
    float *W = attn_params_matrix(&f->m.params, 0, 0, &rows, &cols);
    assert_true(row < rows && col < cols);
    return W + (size_t)row * cols + col;
}

static inline SDL_Point edit_cell_centre(const Fix *f, int row, int col)
{
    const ViewLayout *l = &f->a->layout;
    SDL_Point p = {l->edit_grid.x + (int)((col + 0.5f) * l->edit_cell_w),
                   l->edit_grid.y + (int)((row + 0.5f) * l->edit_cell_h)};
    return p;
}

/* The first `layers` layers' maps of a and b (stored or made when asked)
 * are the same floats. */
static inline void assert_maps_equal(const AttnFile *a, const AttnFile *b, int layers)
{
    assert_int_equal(a->H, b->H);
    assert_int_equal(a->Tq, b->Tq);
    assert_int_equal(a->Tk, b->Tk);
    size_t n = (size_t)a->Tq * a->Tk;
    float *ma = malloc(sizeof(float) * n), *mb = malloc(sizeof(float) * n);
    assert_true(ma && mb);
    for (int l = 0; l < layers; l++)
        for (int h = 0; h < a->H; h++) {
            assert_int_equal(attn_file_map(a, ATTN_PICK_HEAD, l, h, ma), 0);
            assert_int_equal(attn_file_map(b, ATTN_PICK_HEAD, l, h, mb), 0);
            assert_memory_equal(ma, mb, sizeof(float) * n);
        }
    free(ma);
    free(mb);
}

/* Key 1 (Wq), then a click on editor cell (row, col): it has the keyboard. */
static inline void focus_wq_cell(Fix *f, int row, int col)
{
    key(f, SDLK_1, 0);
    assert_int_equal(f->a->vs.edit_target, EDIT_WQ);
    assert_true(f->a->layout.edit_rows == f->m.d && f->a->layout.edit_cols == f->m.params.dk);
    SDL_Point p = edit_cell_centre(f, row, col);
    click(f, p.x, p.y);
    assert_int_equal(f->a->vs.edit_row, row);
    assert_int_equal(f->a->vs.edit_col, col);
    assert_int_equal(f->a->vs.edit_focus, 1);
    assert_int_equal(f->a->dragging, 0);
    assert_int_equal(f->a->editing_value, 0);
}

#endif
