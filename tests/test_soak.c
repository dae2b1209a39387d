/* Soak: a seeded stream of random but valid SDL events (keys, text, clicks,
 * drags, wheel, resizes, file drops) through the real event handler and the
 * real renderer (dummy video driver, software renderer), and among them
 * random actions (any kind, arguments in and out of range) through app_apply.
 * After every step the invariants must hold: every weight row sums to 1 (or
 * is fully masked), the selection is in range, no NaN anywhere the screen
 * reads. ATTNVIZ_SOAK_N steps (default 3000), ATTNVIZ_SOAK_SEED (default 1). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/app_state.h"
#include "attnviz/prng.h"

#include "test_util.h"

/* Under ASan: fontconfig 2.14 leaks 288 bytes while loading its
 * configuration (app/fonts.c starts it for the window's fonts); the
 * library's, not attnviz's. Unused in normal builds. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:FcInitLoadConfigAndFonts\nleak:libfontconfig.so\n";
}

static const SDL_Keycode keys[] = {
    SDLK_s, SDLK_m, SDLK_p, SDLK_b, SDLK_h, SDLK_LEFTBRACKET, SDLK_RIGHTBRACKET,
    SDLK_t, SDLK_r, SDLK_c, SDLK_a, SDLK_j, SDLK_k, SDLK_UP, SDLK_DOWN, SDLK_LEFT,
    SDLK_RIGHT, SDLK_PAGEUP, SDLK_PAGEDOWN, SDLK_1, SDLK_2, SDLK_3, SDLK_4, SDLK_5,
    SDLK_0, SDLK_z, SDLK_n, SDLK_x, SDLK_DELETE, SDLK_SPACE, SDLK_RETURN,
    SDLK_ESCAPE, SDLK_SLASH, SDLK_F1, SDLK_BACKSPACE, SDLK_HOME, SDLK_END,
    SDLK_PLUS, SDLK_MINUS, SDLK_EQUALS, SDLK_q, SDLK_u, SDLK_v, SDLK_y, SDLK_l,
};

static const char *const words[] = {
    "the", " ", "train", "bank", "river", " it", "zzqx", "é", "日本", ".", ",",
    "didn't", "\xF0\x9F\x98\x80", "money", "0.5", "-3", "1e3", "abc", "station ",
};

typedef struct {
    Prng rng;
    int pressed;   /* left button held (a drag in progress) */
} Monkey;

static int rnd(Monkey *k, int n)
{
    return (int)(prng_next(&k->rng) % (uint64_t)n);
}

static void make_event(Monkey *k, AppState *a, SDL_Event *e, const char *drop_files[], int n_drop)
{
    memset(e, 0, sizeof *e);
    int w = a->layout.w > 0 ? a->layout.w : 1280, h = a->layout.h > 0 ? a->layout.h : 800;
    int kind = rnd(k, 100);
    if (k->pressed && kind < 60) {
        if (kind < 50) {
            e->type = SDL_MOUSEMOTION;
            e->motion.x = rnd(k, w);
            e->motion.y = rnd(k, h);
            e->motion.state = SDL_BUTTON_LMASK;
        } else {
            e->type = SDL_MOUSEBUTTONUP;
            e->button.button = SDL_BUTTON_LEFT;
            e->button.x = rnd(k, w);
            e->button.y = rnd(k, h);
            k->pressed = 0;
        }
        return;
    }
    if (kind < 40) {
        e->type = SDL_KEYDOWN;
        e->key.keysym.sym = keys[rnd(k, (int)(sizeof keys / sizeof keys[0]))];
        int m = rnd(k, 10);
        e->key.keysym.mod = m == 0 ? KMOD_LSHIFT : m == 1 ? KMOD_LCTRL
                            : m == 2 ? (KMOD_LCTRL | KMOD_LSHIFT) : KMOD_NONE;
        /* Ctrl+S / Ctrl+O prompts would write or read files named by noise */
        if ((e->key.keysym.mod & KMOD_CTRL) &&
            (e->key.keysym.sym == SDLK_s || e->key.keysym.sym == SDLK_o))
            e->key.keysym.mod = KMOD_NONE;
    } else if (kind < 55) {
        e->type = SDL_TEXTINPUT;
        snprintf(e->text.text, sizeof e->text.text, "%s", words[rnd(k, (int)(sizeof words / sizeof words[0]))]);
    } else if (kind < 70) {
        e->type = SDL_MOUSEBUTTONDOWN;
        e->button.button = SDL_BUTTON_LEFT;
        e->button.clicks = (Uint8)(1 + rnd(k, 2));
        e->button.x = rnd(k, w);
        e->button.y = rnd(k, h);
        k->pressed = 1;
    } else if (kind < 85) {
        e->type = SDL_MOUSEMOTION;
        e->motion.x = rnd(k, w);
        e->motion.y = rnd(k, h);
    } else if (kind < 93) {
        e->type = SDL_MOUSEWHEEL;
        e->wheel.y = rnd(k, 2) ? 1 : -1;
    } else if (kind < 98) {
        static const int sizes[][2] = {{1280, 800}, {800, 600}, {1, 1}, {1920, 1080}, {640, 2000}, {300, 200}};
        int s = rnd(k, 6);
        e->type = SDL_WINDOWEVENT;
        e->window.event = SDL_WINDOWEVENT_SIZE_CHANGED;
        e->window.data1 = sizes[s][0];
        e->window.data2 = sizes[s][1];
    } else {
        e->type = SDL_DROPFILE;
        e->drop.file = SDL_strdup(drop_files[rnd(k, n_drop)]);
    }
}

/* A random action: any kind but those that would write or read files named
 * by noise (save, open) or take long (export); integers mostly around the
 * sentence's size, sometimes far outside any range; a value in -2..2, or
 * now and then not a number. */
static void make_action(Monkey *k, const AppState *a, AppAction *act)
{
    AppActionKind kind;
    do
        kind = (AppActionKind)(1 + rnd(k, ACT_COUNT - 1));
    while (kind == ACT_SAVE || kind == ACT_OPEN_PROMPT || kind == ACT_EXPORT);
    int span = a->m->T + 8;
    act->kind = kind;
    act->i = rnd(k, span) - 4;
    act->j = rnd(k, span) - 4;
    act->value = (float)(rnd(k, 2001) - 1000) / 500.0f;
    if (kind == ACT_POINTER || kind == ACT_DRAG || kind == ACT_DRAG_BEGIN) {
        act->i = rnd(k, 1400) - 60; /* pixels */
        act->j = rnd(k, 900) - 50;
    }
    int wild = rnd(k, 40);
    if (wild == 0)
        act->i = rnd(k, 2) ? INT_MAX : INT_MIN;
    else if (wild == 1)
        act->j = rnd(k, 2) ? INT_MAX : INT_MIN;
    else if (wild == 2)
        act->value = rnd(k, 2) ? NAN : INFINITY;
}

static void soak_action(Monkey *k, AppState *a, long step, long trace)
{
    AppAction act;
    make_action(k, a, &act);
    if (trace && step >= trace)
        fprintf(stderr, "step %ld: action %s(%d, %d, %g) T=%d q=%d k=%d\n", step,
                app_action_name(act.kind), act.i, act.j, (double)act.value, a->m->T, a->vs.query,
                a->vs.key);
    app_apply(a, &act);
}

static void check_invariants(const AppState *a, long step)
{
    Model *m = a->m; /* the checks make the heads' mean and the logits */
    int T = m->T, Tk = m->Tk; /* Tk: the second sentence's keys (cross-attention), else T */
    if (T > 0) {
        if (a->vs.query < 0 || a->vs.query >= T)
            fail_msg("step %ld: query %d out of range (T=%d)", step, a->vs.query, T);
    }
    if (a->vs.key < -1 || a->vs.key >= (Tk > 0 ? Tk : 1))
        fail_msg("step %ld: key %d out of range (Tk=%d)", step, a->vs.key, Tk);
    if (m->res.Tk != Tk)
        fail_msg("step %ld: result has Tk=%d but Tk=%d", step, m->res.Tk, Tk);
    if (m->res.Tq != T)
        fail_msg("step %ld: result has Tq=%d but T=%d", step, m->res.Tq, T);
    if (model_prepare(m, MODEL_WEIGHTS, MODEL_HEAD_AVG) < 0 || model_prepare(m, MODEL_LOGITS, 0) < 0)
        fail_msg("step %ld: no memory for the heads' mean or the logits", step);
    for (int head = -1; head < m->res.h; head++) {
        const float *W = model_matrix(m, MODEL_WEIGHTS, head);
        for (int i = 0; i < T; i++) {
            double s = 0;
            for (int j = 0; j < Tk; j++) {
                float w = W[(size_t)i * Tk + j];
                if (!isfinite(w) || w < 0.0f || w > 1.0f + 1e-6f)
                    fail_msg("step %ld: weight[%d][%d] = %g (head %d)", step, i, j, (double)w, head);
                if (attn_masked(&m->res, i, j) && w != 0.0f)
                    fail_msg("step %ld: masked weight[%d][%d] = %g", step, i, j, (double)w);
                s += w;
            }
            if (fabs(s - 1.0) > 1e-4)
                fail_msg("step %ld: row %d sums to %.7f (head %d)", step, i, s, head);
        }
    }
    const float *L = model_matrix(m, MODEL_LOGITS, a->vs.head);
    for (size_t e = 0; e < (size_t)T * Tk; e++)
        if (isnan(L[e]))
            fail_msg("step %ld: NaN logit", step);
}

/* Resident memory now (not the peak), in KB. */
static long rss_kb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void test_soak(void **state)
{
    (void)state;
    long n = getenv("ATTNVIZ_SOAK_N") ? atol(getenv("ATTNVIZ_SOAK_N")) : 3000;
    uint64_t seed = getenv("ATTNVIZ_SOAK_SEED") ? strtoull(getenv("ATTNVIZ_SOAK_SEED"), NULL, 10) : 1;
    char dir[] = "/tmp/attnviz-soak-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char bad[600], sess[600], sent[600];
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    snprintf(sess, sizeof sess, "%s/s.json", dir);
    snprintf(sent, sizeof sent, "%s/s.txt", dir);
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"session\": {\"sentence\": 3}, \"config\": {\"heads\": 3}", f);
    fclose(f);
    f = fopen(sent, "w");
    assert_non_null(f);
    fputs("# soak\nthe cat sat on the mat\nshe sat on the river bank\n", f);
    fclose(f);
    const char *drops[] = {bad, sess, sent, "sentences/classroom.txt", "/nonexistent/x.txt", dir};

    EmbedTable *t = NULL;
    AttnErr err = {0};
    assert_int_equal(embed_load(&t, "assets/embeddings.txt", &err, NULL), 0);
    Model m;
    AttnConfig cfg = attn_config_default();
    assert_int_equal(model_init(&m, t, &cfg), 0);
    model_set_text(&m, "the train left the station on time", 35);
    Options o;
    char *argv[] = {"attnviz", "--export-dir", dir, NULL};
    assert_int_equal(options_parse(&o, 3, argv, &err), 0);
    SentenceList sl;
    assert_int_equal(sentences_load(&sl, "sentences/default.txt", &err), 0);
    AppState *a = calloc(1, sizeof *a);
    assert_non_null(a);
    assert_int_equal(app_init(a, &m, &o, &sl), 0);
    assert_int_equal(app_save_session(a, sess), 0);

    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 24, SDL_PIXELFORMAT_RGB888);
    assert_non_null(surf);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    assert_non_null(r);
    a->view = view_create(r, test_fonts(), &err);
    assert_non_null(a->view);
    app_draw(a, r);

    Monkey k = {{seed}, 0};
    long trace = getenv("ATTNVIZ_SOAK_TRACE") ? atol(getenv("ATTNVIZ_SOAK_TRACE")) : 0;
    long rss_start = 0;
    long n_actions = 0;
    for (long step = 0; step < n; step++) {
        int resized = 0;
        if (rnd(&k, 5) == 0) {
            soak_action(&k, a, step, trace);
            n_actions++;
        } else {
            SDL_Event e;
            make_event(&k, a, &e, drops, (int)(sizeof drops / sizeof drops[0]));
            if (e.type == SDL_WINDOWEVENT) {
                /* a resize: a new target of that size, as the window would have */
                view_destroy(a->view);
                SDL_DestroyRenderer(r);
                SDL_FreeSurface(surf);
                surf = SDL_CreateRGBSurfaceWithFormat(0, e.window.data1, e.window.data2, 24, SDL_PIXELFORMAT_RGB888);
                assert_non_null(surf);
                r = SDL_CreateSoftwareRenderer(surf);
                assert_non_null(r);
                a->view = view_create(r, test_fonts(), &err);
                assert_non_null(a->view);
                resized = 1;
            }
            if (trace && step >= trace)
                fprintf(stderr, "step %ld: type %#x key %d mod %#x text '%s' xy %d,%d T=%d q=%d k=%d\n", step,
                        e.type, e.key.keysym.sym, e.key.keysym.mod,
                        e.type == SDL_TEXTINPUT ? e.text.text : "", e.button.x, e.button.y, a->m->T,
                        a->vs.query, a->vs.key);
            app_handle_event(a, &e);
            if (e.type == SDL_DROPFILE)
                SDL_free(e.drop.file);
        }
        a->quit = 0;
        check_invariants(a, step);
        if (step % 8 == 0 || resized)
            app_draw(a, r);
        if (n >= 10 && (step + 1) % (n / 10) == 0) {
            long now = rss_kb();
            if (!rss_start)
                rss_start = now;
            fprintf(stderr, "soak: %ld%% (%ld steps): RSS %ld KB\n", (step + 1) * 100 / n, step + 1, now);
        }
    }
    long rss_end = rss_kb();
    fprintf(stderr, "soak: %ld steps (%ld of them actions), seed %llu, RSS %ld KB at 10%%, %ld KB at the end\n",
            n, n_actions, (unsigned long long)seed, rss_start, rss_end);
    assert_true(n < 100 || n_actions > n / 10);

    view_destroy(a->view);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    app_free(a);
    free(a);
    model_destroy(&m);
    sentences_free(&sl);
    options_free(&o);
    embed_destroy(t);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    SDL_SetHint(SDL_HINT_VIDEODRIVER, "dummy");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "SDL_Init: %s\n", SDL_GetError());
        return 1;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_soak)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    SDL_Quit();
    return rc;
}
