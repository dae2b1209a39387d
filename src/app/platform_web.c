/* The browser's side of platform.h (the build of tools/web/web.mk):
 * the fonts embedded in the page's data (DejaVu Sans; no fallback font
 * yet, so a character DejaVu Sans lacks is drawn as its missing-glyph
 * box), the window filling the page's canvas, the loop run by the
 * browser's animation frames (emscripten_set_main_loop), files the
 * program writes (exports) handed to the browser as downloads, dropped
 * files handed to the app, and the autosave written when the page is
 * hidden (tools/web/pre.js keeps SDL's per-user folder in IndexedDB). Not
 * for the desktop build (platform_desktop.c). */
#include "platform.h"

#include <emscripten.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Where make web puts the font in the page's file system (--preload-file) */
#define WEB_FONT "/attnviz/fonts/DejaVuSans.ttf"

/* ---- fonts ----------------------------------------------------------------- */

int platform_font_default(char *out, size_t n)
{
    struct stat st;
    if (stat(WEB_FONT, &st) != 0 || strlen(WEB_FONT) >= n)
        return -1;
    memcpy(out, WEB_FONT, sizeof WEB_FONT);
    return 0;
}

/* No fallback font in the page yet (Noto CJK is 20 MB, too big to embed
 * whole): the view draws the main font's missing-glyph box. */
int platform_font_fallback(void **state, int *failed, unsigned cp, char *out, size_t n,
                           long *index)
{
    (void)state, (void)cp, (void)out, (void)n, (void)index;
    *failed = 1;
    return -1;
}

void platform_font_fallback_free(void *state)
{
    (void)state;
}

/* ---- the window ------------------------------------------------------------ */

/* emscripten 3.1.6 starts with a umask of 0777: io_write_atomic's new
 * files (0666 & ~umask) got mode 0, which its own FS then refused to open
 * again (an export could not be read back for its download). The usual
 * 022. SDL needs no hint: it takes the keys from the whole page (its
 * default without SDL_HINT_EMSCRIPTEN_KEYBOARD_ELEMENT), so typing works
 * without clicking the canvas first. */
void platform_window_setup(void)
{
    umask(022);
}

/* The tab's title: the page has no title bar of its own. */
void platform_window_title(SDL_Window *w, const char *title)
{
    SDL_SetWindowTitle(w, title);
}

/* The loop is kept here: the browser calls step once an animation frame,
 * after platform_run_loop has returned to it. */
static PlatformLoop web_loop;

/* The queued events, then a frame (drawn only if something changed, as on
 * the desktop). frame's wait is the browser's: the next animation frame
 * comes anyway, and an autosave due is seen by app_tick then. The steps
 * are counted in Module.attnvizSteps, and the first one's time kept in
 * Module.attnvizFirstFrame (performance.now()): the browser test waits on
 * them, and the loading message goes at the first. */
static void step(void)
{
    SDL_Event e;
    if (SDL_PollEvent(&e))
        web_loop.events(web_loop.ctx, &e);
    if (web_loop.done(web_loop.ctx)) {
        emscripten_cancel_main_loop();
        EM_ASM({ document.title = "attnviz (closed)"; });
        return;
    }
    web_loop.frame(web_loop.ctx);
    EM_ASM({
        if (!Module.attnvizSteps) {
            Module.attnvizFirstFrame = performance.now();
            var s = document.getElementById("status");
            if (s) s.style.display = "none";
        }
        Module.attnvizSteps = (Module.attnvizSteps | 0) + 1;
    });
}

/* emscripten_set_main_loop with simulate_infinite_loop set does not return:
 * it leaves main by an exception without unwinding the stack, so the
 * caller's locals (window.c's Loop, its fonts) stay valid for the page's
 * whole life, as they would in the desktop's endless loop. */
void platform_run_loop(const PlatformLoop *loop)
{
    web_loop = *loop;
    emscripten_set_main_loop(step, 0, 1);
}

/* ---- files ----------------------------------------------------------------- */

/* The file at path (just written in the page's memory) offered as a
 * download under its own name; the copy in memory stays, so the status
 * bar's path is still true. */
void platform_file_written(const char *path)
{
    EM_ASM({
        var path = UTF8ToString($0);
        var name = path.substring(path.lastIndexOf("/") + 1);
        var data = FS.readFile(path);
        var type = name.endsWith(".png") ? "image/png" : name.endsWith(".svg") ? "image/svg+xml"
                 : name.endsWith(".csv") ? "text/csv" : name.endsWith(".json") ? "application/json"
                 : "application/octet-stream";
        /* a copy: a Blob cannot be made of a view of shared memory */
        var blob = new Blob([new Uint8Array(data)], {type: type});
        var a = document.createElement("a");
        a.href = URL.createObjectURL(blob);
        a.download = name;
        document.body.appendChild(a);
        a.click();
        setTimeout(function() { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    }, path);
}

/* A file or folder dropped on the page, already copied into the page's
 * memory at path by tools/web/pre.js: handed to the app as the desktop's
 * drop is (SDL_DROPFILE: app_open_path, the status bar saying what opened
 * or why not). SDL's browser backend has no drop of its own. */
EMSCRIPTEN_KEEPALIVE void platform_web_dropped(const char *path)
{
    SDL_Event e;
    SDL_zero(e);
    e.type = SDL_DROPFILE;
    e.drop.file = SDL_strdup(path);
    if (e.drop.file && SDL_PushEvent(&e) != 1)
        SDL_free(e.drop.file);
}

/* The page is being hidden or closed (tools/web/pre.js): the autosave
 * written now, as the desktop writes it on quitting; pre.js then stores
 * the folder in IndexedDB. */
EMSCRIPTEN_KEEPALIVE void platform_web_suspend(void)
{
    if (web_loop.suspend)
        web_loop.suspend(web_loop.ctx);
}
