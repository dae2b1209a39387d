/* The native side of make web-bench's window measurements (the page's
 * side: tests/web/page_bench.mjs): the window's default state, as
 * native_frame sets it up (the toy lesson on the default sentence, drawn
 * by SDL's software renderer at 1280×800, as the native tests and make
 * bench draw it), timed in-process through the app's own steps
 * (app_handle_event, app_tick, app_draw and a present, as window.c's loop
 * runs them):
 *   frame      the pointer moved between two heatmap cells (the hover
 *              changes, so the frame is drawn again): its event and frame;
 *   toy_key    in the sentence bar, "x" typed, then Backspace: one key's
 *              events (key down, its text, key up), the forward they
 *              cause and the frame;
 *   nano_key   a nano-sort session opened (the model's worker computes
 *              its maps), "A" typed into the bar, then Backspace: from the
 *              key to the end of the last frame it caused (the worker's
 *              result taken by app_tick, polled every 0.1 ms), as
 *              tests/bench/window_bench.c times a key.
 * Prints the medians, and the two cells' centres for the page to point
 * at the same places:
 *   native_bench frame_ms=… toy_key_ms=… nano_key_ms=… cell_a=X,Y cell_b=X,Y
 *
 * usage: native_bench SESSION.json [N]   (a nano-sort session; N presses
 * of each, 40 by default). ATTNVIZ_DATADIR as for the program. */
#define _DEFAULT_SOURCE
#include "attnviz/app.h"
#include "attnviz/app_state.h"
#include "attnviz/fonts.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "attnviz/view.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static Uint32 clock_ticks = 10000; /* event timestamps, a second apart */

static void hand_over(AppState *a, SDL_Event *e)
{
    e->common.timestamp = clock_ticks += 1000;
    app_handle_event(a, e);
}

static void key(AppState *a, SDL_Keycode sym, const char *text)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    hand_over(a, &e);
    if (text && SDL_IsTextInputActive()) {
        memset(&e, 0, sizeof e);
        e.type = SDL_TEXTINPUT;
        snprintf(e.text.text, sizeof e.text.text, "%s", text);
        hand_over(a, &e);
    }
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    e.key.keysym.sym = sym;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    hand_over(a, &e);
}

static void draw(AppState *a, SDL_Renderer *r)
{
    app_draw(a, r);
    SDL_RenderPresent(r);
}

/* app_tick polled until nothing changed for quiet ms (at most 20 s), a
 * frame drawn after each change; the end of the last frame, or 0. */
static double settle(AppState *a, SDL_Renderer *r, double quiet)
{
    double start = now_ms(), last_change = start, last_frame = 0;
    while (now_ms() - last_change < quiet && now_ms() - start < 20000) {
        int wait;
        if (app_tick(a, clock_ticks, &wait)) {
            draw(a, r);
            last_frame = last_change = now_ms();
        }
        usleep(100);
    }
    return last_frame;
}

static void motion(AppState *a, int x, int y)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.x = x;
    e.motion.y = y;
    hand_over(a, &e);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: native_bench SESSION.json [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 40;
    if (n < 3 || n > 10000) {
        fprintf(stderr, "native_bench: N %s: 3 to 10000\n", argv[2]);
        return 2;
    }
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    Options o;
    AttnErr err = {0};
    char *args[] = {"attnviz", NULL};
    void *opened = NULL;
    Model *m;
    SentenceList *sl;
    const SessionView *sv;
    AppFonts fonts = {0};
    if (SDL_Init(SDL_INIT_VIDEO) != 0 || options_parse(&o, 1, args, &err) != 0 ||
        source_sentence.cli_open(&o, NULL, &opened, &err) < 0 || !opened) {
        fprintf(stderr, "native_bench: cannot start: %s %s\n", err.msg, SDL_GetError());
        return 1;
    }
    source_sentence_parts(opened, &m, &sl, &sv);
    SDL_StopTextInput(); /* as the window starts */
    AppState *a = calloc(1, sizeof *a);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!a || !r || app_init(a, m, &o, sl) < 0 || fonts_open(&fonts, NULL, &err) < 0 ||
        !(a->view = view_create(r, &fonts.view, &err))) {
        fprintf(stderr, "native_bench: cannot draw: %s %s\n", err.msg, SDL_GetError());
        return 1;
    }
    a->dpi_scale = 1.0f;
    a->vs.scale = a->ui_scale;
    draw(a, r);
    double *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return 1;

    /* the centres of the grid's first two cells of its second row */
    SDL_Rect g = a->layout.grid;
    int c = (int)a->layout.cell;
    int ax = g.x + c / 2, ay = g.y + c + c / 2, bx = ax + c, by = ay;
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        motion(a, i % 2 ? bx : ax, i % 2 ? by : ay);
        draw(a, r);
        t[i] = now_ms() - t0;
    }
    double frame = median(t, n);

    key(a, SDLK_SLASH, NULL);
    settle(a, r, 50);
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (i % 2)
            key(a, SDLK_BACKSPACE, NULL);
        else
            key(a, SDLK_x, "x");
        draw(a, r);
        t[i] = now_ms() - t0;
    }
    double toy = median(t, n);
    key(a, SDLK_ESCAPE, NULL);

    app_open_path(a, argv[1]);
    settle(a, r, 300);
    key(a, SDLK_SLASH, NULL);
    settle(a, r, 300);
    int got = 0;
    for (int i = 0; i < n; i++) {
        double t0 = now_ms();
        if (i % 2)
            key(a, SDLK_BACKSPACE, NULL);
        else
            key(a, SDLK_a, "A");
        draw(a, r);
        double end = settle(a, r, 100);
        if (end > 0)
            t[got++] = end - t0;
    }
    if (got < 3) {
        fprintf(stderr, "native_bench: the nano-sort session %s computed nothing after a key "
                        "(%d of %d keys)\n", argv[1], got, n);
        return 1;
    }
    double nano = median(t, got);
    printf("native_bench frame_ms=%.3f toy_key_ms=%.3f nano_key_ms=%.3f cell_a=%d,%d cell_b=%d,%d\n",
           frame, toy, nano, ax, ay, bx, by);
    free(t);
    view_destroy(a->view);
    app_free(a);
    free(a);
    fonts_close(&fonts);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    source_sentence.cli_free(opened);
    options_free(&o);
    SDL_Quit();
    return 0;
}
