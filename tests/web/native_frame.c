/* The native program's frame of a state, for the browser test
 * (tests/web/page_test.mjs): the window's default (the toy lesson on the
 * default sentence, as `attnviz` with no argument opens it), then keys and
 * typed text handed over as the window's loop hands them, drawn offscreen
 * at 1280×800 by the software renderer (as tests/test_app_util.h draws)
 * and written as a PNG. The page's canvas is compared against it.
 *
 * usage: native_frame OUT.png STEP...
 *   STEP: key:NAME (SDL_GetKeyFromName's names: "/", "Return", "D";
 *         "Ctrl+" before one holds Ctrl)
 *         text:TEXT (each character a key press and its typed text, as a
 *         keyboard gives them; one no key makes, its text alone)
 *         export:DIR (Ctrl+E's export, app_export, written into DIR)
 *         open:PATH (a dropped file or folder: app_open_path, as the
 *         page's drop opens it)
 *         dpi:RATIO (the browser zoomed: RATIO device pixels per CSS
 *         pixel, the frame still 1280×800 pixels: the interface RATIO
 *         times the size, as window.c's update_dpi sets it)
 *         note:TEXT (the platform's message for the status bar,
 *         platform_note: as window.c's frame shows it, an error)
 * After each step the background work a source started (a model's
 * forward on its worker) is waited for: app_tick until nothing has changed
 * for 300 ms. */
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

static Uint32 clock_ms = 10000; /* event timestamps, a second apart */

/* An event handed over, then the open it asked for (Enter in Ctrl+O's
 * prompt) opened as the window's loop opens it after the event
 * (PlatformLoop.asked): waited for. */
static void hand_over(AppState *a, SDL_Event *e)
{
    char path[4096];
    e->common.timestamp = clock_ms += 1000;
    app_handle_event(a, e);
    if (app_open_asked(a, path, sizeof path) && app_open_path(a, path) == 0)
        app_open_wait(a);
}

static void press(AppState *a, SDL_Keycode sym, Uint16 mod)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym;
    e.key.keysym.mod = mod;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    hand_over(a, &e);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    hand_over(a, &e);
}

/* A character typed: its key (the browser sends it too), then its text
 * when text input is on (a text field has focus), as SDL does. */
static void type_char(AppState *a, char c)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = (SDL_Keycode)(unsigned char)c;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(e.key.keysym.sym);
    hand_over(a, &e);
    if (SDL_IsTextInputActive()) {
        memset(&e, 0, sizeof e);
        e.type = SDL_TEXTINPUT;
        e.text.text[0] = c;
        hand_over(a, &e);
    }
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    e.key.keysym.sym = (SDL_Keycode)(unsigned char)c;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(e.key.keysym.sym);
    hand_over(a, &e);
}

/* A character no key makes (Chinese, a symbol: the n bytes of its UTF-8
 * at c): its text alone, as a browser's keypress gives it to SDL (the
 * page test sends such characters as text without a key). */
static void type_other(AppState *a, const char *c, size_t n)
{
    SDL_Event e;
    if (!SDL_IsTextInputActive() || n >= sizeof e.text.text)
        return;
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    memcpy(e.text.text, c, n);
    hand_over(a, &e);
}

static int step(AppState *a, const char *s)
{
    if (strncmp(s, "key:", 4) == 0) {
        int ctrl = strncmp(s + 4, "Ctrl+", 5) == 0;
        const char *name = s + 4 + (ctrl ? 5 : 0);
        SDL_Keycode k = SDL_GetKeyFromName(name);
        if (k == SDLK_UNKNOWN) {
            fprintf(stderr, "native_frame: unknown key name \"%s\" in %s\n", name, s);
            return -1;
        }
        press(a, k, ctrl ? KMOD_LCTRL : 0);
        return 0;
    }
    if (strncmp(s, "text:", 5) == 0) {
        for (const char *c = s + 5; *c;) {
            size_t n = 1;
            while ((c[n] & 0xC0) == 0x80)
                n++;
            if (n == 1)
                type_char(a, *c);
            else
                type_other(a, c, n);
            c += n;
        }
        return 0;
    }
    if (strncmp(s, "open:", 5) == 0) { /* a model opens on its own thread: waited for */
        if (app_open_path(a, s + 5) == 0)
            app_open_wait(a);
        return 0;
    }
    if (strncmp(s, "dpi:", 4) == 0) { /* the page zoomed: pixels per point, as window.c's update_dpi */
        a->dpi_scale = (float)atof(s + 4);
        a->vs.scale = a->ui_scale * a->dpi_scale;
        a->dirty = 1;
        return a->dpi_scale >= 0.5f && a->dpi_scale <= 4.0f ? 0 : -1;
    }
    if (strncmp(s, "note:", 5) == 0) { /* the page's platform_note, as window.c's frame shows it */
        app_status(a, 1, "%s", s + 5);
        a->dirty = 1;
        return 0;
    }
    if (strncmp(s, "export:", 7) == 0) {
        a->export_dir = s + 7;
        return app_export(a, 0) < 0 ? -1 : 0;
    }
    fprintf(stderr, "native_frame: step %s is not key:NAME, text:TEXT, export:DIR, open:PATH, dpi:RATIO or note:TEXT\n", s);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: native_frame OUT.png [key:NAME | text:TEXT]...\n");
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
        fprintf(stderr, "native_frame: cannot start: %s %s\n", err.msg, SDL_GetError());
        return 1;
    }
    source_sentence_parts(opened, &m, &sl, &sv);
    SDL_StopTextInput(); /* as the window starts */
    AppState *a = calloc(1, sizeof *a);
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    if (!a || !r || app_init(a, m, &o, sl) < 0 || fonts_open(&fonts, NULL, &err) < 0 ||
        !(a->view = view_create(r, &fonts.view, &err))) {
        fprintf(stderr, "native_frame: cannot draw: %s %s\n", err.msg, SDL_GetError());
        return 1;
    }
    a->dpi_scale = 1.0f;
    a->vs.scale = a->ui_scale;
    app_draw(a, r);
    for (int i = 2; i < argc; i++) {
        if (step(a, argv[i]) < 0)
            return 2;
        /* the worker's results, taken by app_tick as the window's loop takes
         * them, until 300 ms pass without one (at most 20 s) */
        Uint32 start = SDL_GetTicks(), quiet_since = start;
        while (SDL_GetTicks() - quiet_since < 300 && SDL_GetTicks() - start < 20000) {
            int wait;
            if (app_tick(a, clock_ms, &wait))
                quiet_since = SDL_GetTicks();
            SDL_Delay(2);
        }
        app_draw(a, r);
    }
    SDL_RenderPresent(r);
    if (export_save_png(surf, argv[1], &err) < 0) {
        fprintf(stderr, "native_frame: %s\n", err.msg);
        return 1;
    }
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
