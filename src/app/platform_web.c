/* The browser's side of platform.h (the build of tools/web/web.mk):
 * the main font embedded in the page's data (DejaVu Sans), the fallback
 * fonts fetched the first time a character needs one, the window filling
 * the page's canvas, the loop run by the browser's animation frames
 * (emscripten_set_main_loop), files the program writes for the user
 * (exports, sessions) handed to the browser as downloads (sessions also
 * kept in its IndexedDB, listed again by the page's Ctrl+O), dropped
 * files handed to the app, and the autosave written when the page is
 * hidden (tools/web/pre.js keeps SDL's per-user folder in IndexedDB). Not
 * for the desktop build (platform_desktop.c). */
#define _DEFAULT_SOURCE /* realpath */
#include "platform.h"

#include "attnviz/background.h"
#include "attnviz/wake.h"

#include <emscripten.h>
#include <emscripten/threading.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The fallback fonts: those the desktop's fontconfig picks on Debian for
 * the characters DejaVu Sans lacks (Noto Sans CJK, fonts-noto-cjk, for
 * Chinese, Japanese and Korean; Symbola, fonts-symbola, for the other
 * symbols: emoji, arrows and shapes DejaVu has not). make web copies them
 * into build/web/fonts as they are (the CJK collection is 19 MB, the
 * symbols 3 MB: too big for the page's data, which every visit loads), and
 * the page fetches one the first time a character needs it: until it has
 * arrived the character is drawn as the main font's box, then
 * platform_fonts_changed tells the window to look the characters up
 * again. Which file (and face) a character needs is decided by its block,
 * before the file is here (the CJK collection for the CJK blocks, Symbola
 * for the rest; a character neither has stays a box, as on the desktop).
 * Process-wide (an export's fonts share what the window's fetched). */
typedef struct WebFallback {
    const char *name; /* under build/web/fonts/, and /attnviz/fallback/ in the page */
    int state;        /* 0 not asked for, 1 being fetched, 2 here, -1 failed */
} WebFallback;

enum { FALLBACK_CJK, FALLBACK_SYMBOLS };
static WebFallback web_fallbacks[] = {
    [FALLBACK_CJK] = {"NotoSansCJK-Regular.ttc", 0},
    [FALLBACK_SYMBOLS] = {"Symbola_hint.ttf", 0},
};
static int web_fonts_arrived; /* a fallback arrived since platform_fonts_changed */

/* The face of Noto Sans CJK the desktop's fontconfig picks for cp (it asks
 * with the language of cp's script: platform_desktop.c's cjk_lang): JP (0)
 * for kana, KR (1) for Hangul, SC (2) for the ideographs, JP (its first
 * face) for the rest of the CJK blocks (symbols and punctuation, Bopomofo,
 * the enclosed forms); -1 for a character outside them (Symbola's). */
static long cjk_face(unsigned cp)
{
    if ((cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0xFF66 && cp <= 0xFF9F))
        return 0;
    if ((cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0x1100 && cp <= 0x11FF) ||
        (cp >= 0x3130 && cp <= 0x318F))
        return 1;
    if ((cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0xFF00 && cp <= 0xFF65) || (cp >= 0x20000 && cp <= 0x3FFFF))
        return 2;
    static const unsigned other[][2] = {
        {0x2FF0, 0x303F}, {0x3100, 0x33FF}, {0xA960, 0xA97F}, {0xD7B0, 0xD7FF},
        {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF}, {0x1F200, 0x1F2FF},
    };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        if (cp >= other[i][0] && cp <= other[i][1])
            return 0;
    return -1;
}

/* The fetch of web_fallbacks[k] begun (on the browser's main thread, which
 * owns the page's files); platform_web_font_arrived says how it ended.
 * Module.attnvizFonts[name] is "loading", then "here" or "failed" (the
 * browser test waits on it). */
static void fetch_fallback(int k)
{
    MAIN_THREAD_ASYNC_EM_ASM({
        var k = $0; /* no comma outside brackets: the macro would split there */
        var name = UTF8ToString($1);
        var url = new URL("fonts/" + name, document.baseURI).href;
        Module.attnvizFonts = Module.attnvizFonts || {};
        Module.attnvizFonts[name] = "loading";
        fetch(url).then(function(r) {
            if (!r.ok) throw new Error("HTTP " + r.status);
            return r.arrayBuffer();
        }).then(function(buf) {
            FS.mkdirTree("/attnviz/fallback");
            FS.writeFile("/attnviz/fallback/" + name, new Uint8Array(buf));
            Module.attnvizFonts[name] = "here";
            ccall("platform_web_font_arrived", null, ["number", "number"], [k, 1]);
        }).catch(function(e) {
            console.error("attnviz: the fallback font " + url + " could not be fetched (" + e.message +
                          "): its characters stay boxes");
            Module.attnvizFonts[name] = "failed";
            ccall("platform_web_font_arrived", null, ["number", "number"], [k, 0]);
        });
    }, k, web_fallbacks[k].name);
}

EMSCRIPTEN_KEEPALIVE void platform_web_font_arrived(int k, int ok)
{
    web_fallbacks[k].state = ok ? 2 : -1;
    web_fonts_arrived |= ok;
}

int platform_font_fallback(void **state, int *failed, unsigned cp, char *out, size_t n,
                           long *index)
{
    (void)state, (void)failed;
    long face = cjk_face(cp);
    int k = face >= 0 ? FALLBACK_CJK : FALLBACK_SYMBOLS;
    WebFallback *f = &web_fallbacks[k];
    if (f->state == 0) {
        f->state = 1;
        fetch_fallback(k);
    }
    if (f->state != 2 || snprintf(out, n, "/attnviz/fallback/%s", f->name) >= (int)n)
        return -1;
    *index = face >= 0 ? face : 0;
    return 0;
}

void platform_font_fallback_free(void *state)
{
    (void)state;
}

int platform_fonts_changed(void)
{
    int arrived = web_fonts_arrived;
    web_fonts_arrived = 0;
    return arrived;
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
    /* the browser's main thread: a join here blocks the page (a PNG's or
     * a rollout's second half is done here instead: bg_may_wait) */
    bg_set_may_wait(0);
}

/* The tab's title: the page has no title bar of its own. Setting
 * document.title costs the browser about a millisecond (a profile of the
 * toy lesson's keystrokes: 1.1 of the 5 ms a key took), and the title
 * holds the sentence, so it changed at every key: a title is set at most
 * every TITLE_MS, the last one asked for set by the step once due. */
#define TITLE_MS 250
static SDL_Window *title_win;
static char title_pending[512];
static double title_set_at = -1e9;

static void title_flush(void)
{
    if (!title_pending[0] || emscripten_get_now() - title_set_at < TITLE_MS)
        return;
    SDL_SetWindowTitle(title_win, title_pending);
    title_pending[0] = '\0';
    title_set_at = emscripten_get_now();
}

void platform_window_title(SDL_Window *w, const char *title)
{
    title_win = w;
    snprintf(title_pending, sizeof title_pending, "%s", title);
    title_flush();
}

/* The loop is kept here: the browser calls step once an animation frame,
 * after platform_run_loop has returned to it. */
static PlatformLoop web_loop;

/* An open waiting for a call of its own (open_soon): since when (ms,
 * emscripten_get_now; 0 none). The status bar's note from the page waits
 * for it too (platform_note): the open's own message (the start's
 * restore that failed) would hide it. */
static double web_open_since;

/* path opened by a call of its own, as a drop is: platform_web_dropped
 * called from a fresh browser task, with nothing of the program on the
 * stack below it, so that the one-thread page can suspend the open
 * between its slices (bg_breathe), which it cannot inside the main loop's
 * step (the browser calls that; ASYNCIFY cannot suspend it) nor while
 * something else is suspended (it keeps one stack). After a timer when
 * nothing is suspended, else after the next animation frame (and again
 * while it is: platform_web_dropped calls this again). One waits at a
 * time: a newer one replaces it, as a newer open replaces an older
 * (Module.attnvizAsked: {path, due}; due while a call is on its way). */
static void open_soon(const char *path)
{
    if (!web_open_since)
        web_open_since = emscripten_get_now();
    EM_ASM({
        var q = Module.attnvizAsked || (Module.attnvizAsked = {path: null, due: false});
        q.path = UTF8ToString($0);
        if (q.due) return;
        q.due = true;
        var go = function() {
            q.due = false;
            var p = q.path;
            q.path = null;
            if (p !== null) ccall("platform_web_dropped", null, ["string"], [p]);
        };
        var s = Module.attnvizBg;
        if (s && (s.breathing || (typeof Asyncify === "object" && Asyncify.currData)))
            requestAnimationFrame(function() { setTimeout(go, 0); });
        else
            setTimeout(go, 0);
    }, path);
}

/* The queued events, then a frame (drawn only if something changed, as on
 * the desktop). frame's wait is the browser's: the next animation frame
 * comes anyway, and an autosave due is seen by app_tick then. The loop's
 * steps (animation is set) are counted in Module.attnvizSteps, and the
 * first one's time kept in Module.attnvizFirstFrame (performance.now()):
 * the browser test waits on them, and the loading message goes at the
 * first. While
 * Module.attnvizTimes is an array (make web-bench's tests/web/page_bench.mjs
 * sets it) each step is added to it: [its start, whether it had events,
 * the events' ms, the frame's ms, Module.attnvizDraws (the bench counts
 * WebGL's draw calls there, so a frame that drew can be told)]. */
static void step_body(int animation)
{
    double t0 = emscripten_get_now();
    SDL_Event e;
    int had = SDL_PollEvent(&e);
    if (had)
        web_loop.events(web_loop.ctx, &e);
    if (web_loop.done(web_loop.ctx)) {
        emscripten_cancel_main_loop();
        EM_ASM({ document.title = "attnviz (closed)"; });
        return;
    }
    char asked[4096];
    if (web_loop.asked && web_loop.asked(web_loop.ctx, asked, sizeof asked))
        open_soon(asked); /* after this step (a note the frame would show waits for it) */
    double t1 = emscripten_get_now();
    web_loop.frame(web_loop.ctx);
    title_flush();
    double t2 = emscripten_get_now();
    EM_ASM({
        if ($4 && !Module.attnvizSteps) {
            Module.attnvizFirstFrame = performance.now();
            var s = document.getElementById("status");
            if (s) s.style.display = "none";
        }
        if ($4) Module.attnvizSteps = (Module.attnvizSteps | 0) + 1;
        if (Module.attnvizTimes) Module.attnvizTimes.push([$0, $1, $2, $3, Module.attnvizDraws | 0]);
    }, t0, had, t1 - t0, t2 - t1, animation);
}

/* One step at a time. The browser's main thread, waiting on a lock the
 * worker holds (the background's, malloc's), runs the calls queued for it
 * meanwhile (emscripten's futex wait), wake_step's among them: a step
 * inside a step, changing the app's state under the outer one (typing fast
 * into an open model: a memory access out of bounds in lmsrc_present, a
 * hang, or a texture updated past its end). The inner one runs once the
 * outer has ended, from the event loop (one queued at a time);
 * Module.attnvizStepsDeferred counts them. */
static int step_running, step_queued;

static void step_queued_run(void *arg);

static void step_run(int animation)
{
    if (step_running) {
        if (!step_queued) {
            step_queued = 1;
            emscripten_async_call(step_queued_run, NULL, 0);
        }
        EM_ASM({ Module.attnvizStepsDeferred = (Module.attnvizStepsDeferred | 0) + 1; });
        return;
    }
    step_running = 1;
    step_body(animation);
    step_running = 0;
}

static void step_queued_run(void *arg)
{
    (void)arg;
    step_queued = 0;
    if (!web_loop.done(web_loop.ctx))
        step_run(0);
}

/* The loop's step, once an animation frame (and at a worker's result). */
static void step(void)
{
    step_run(1);
}

/* A step between animation frames (a key, a drop): not counted in
 * Module.attnvizSteps, which says the page has had a frame since
 * (background_single.c's runs wait for one). */
static void step_now(void)
{
    step_run(0);
}

/* Background work's result drawn as soon as the main thread is free, not
 * at the next animation frame: the worker's wake event (wake.h) also
 * queues a step on the browser's event loop. nano-sort's keystroke in the
 * page took 17 ms from the key to the frame with its maps (1.3 ms of work:
 * the maps, ready about 2 ms after the key, waited for the animation frame
 * after the key's); the browser shows the frame at its next paint either
 * way, now the one after the maps are ready. One queued at a time. */
/* The one-thread build (no __EMSCRIPTEN_PTHREADS__) pushes every event on
 * the main thread, and has no call into another thread to link. */
#ifdef __EMSCRIPTEN_PTHREADS__
static atomic_int wake_step_due;

static void wake_step(void)
{
    atomic_store(&wake_step_due, 0);
    if (!web_loop.done(web_loop.ctx))
        step();
}
#endif

/* SDL calls it in the thread that pushes an event, before queueing it. */
static int wake_watch(void *ctx, SDL_Event *e)
{
    (void)ctx;
#ifdef __EMSCRIPTEN_PTHREADS__
    if (e->type == app_wake_event() && !emscripten_is_main_runtime_thread() &&
        !atomic_exchange(&wake_step_due, 1))
        emscripten_async_run_in_main_runtime_thread(EM_FUNC_SIG_V, wake_step);
#else
    (void)e;
#endif
    return 1;
}

/* Whether an open is suspended (the one-thread page's bg_breathe,
 * background_single.c): the app's state is the open's until it ends, so
 * no step runs meanwhile; events wait in SDL's queue for the main loop. */
static int web_open_suspended(void)
{
    return EM_ASM_INT({ return Module.attnvizBg && Module.attnvizBg.breathing ? 1 : 0; });
}

/* A key went down, or its character came (keypress), after SDL's own
 * listener has queued it: its events handled now, not at the next
 * animation frame, as the desktop has its key's event before the next key
 * comes. SDL's page backend turns a key into text only while text input is
 * on, which the app turns on when it handles the key that starts typing
 * ("/"): keys typed after "/" before the next frame were otherwise lost.
 * The text itself comes with the keypress, after the keydown: handled at
 * once too, so a model's maps of the typed text are asked for then, not a
 * frame later (nano-sort's keystroke took 13–14 ms to its maps in the
 * page, a Backspace 2–7). Not while an open is suspended
 * (web_open_suspended: they wait for the main loop then). */
EMSCRIPTEN_KEEPALIVE void platform_web_key(void)
{
    if (web_loop.events && !web_open_suspended() && !web_loop.done(web_loop.ctx) &&
        SDL_HasEvents(SDL_FIRSTEVENT, SDL_LASTEVENT))
        step_now();
}

/* emscripten_set_main_loop with simulate_infinite_loop set does not return:
 * it leaves main by an exception without unwinding the stack, so the
 * caller's locals (window.c's Loop, its fonts) stay valid for the page's
 * whole life, as they would in the desktop's endless loop. */
void platform_run_loop(const PlatformLoop *loop)
{
    web_loop = *loop;
    SDL_AddEventWatch(wake_watch, NULL);
    /* after SDL's keydown and keypress listeners (added with the window,
     * on the same target and phase): the key, or its text, is in the
     * queue when these run */
    EM_ASM({
        window.addEventListener("keydown", function() { _platform_web_key(); });
        window.addEventListener("keypress", function() { _platform_web_key(); });
    });
    emscripten_set_main_loop(step, 0, 1);
}

/* ---- the help ------------------------------------------------------------------ */

const char platform_help_save[] = "save session / save as (downloaded, and kept in this browser)";
const char platform_help_open[] = "open a session kept in this browser, or a file from this computer: session, "
                                  "sentences, attention file, model (Ctrl+Shift+O: a model folder; or drop one)";

/* ---- files ----------------------------------------------------------------- */

/* The file at path (just written in the page's memory) offered as a
 * download under its own name; the copy in memory stays, so the status
 * bar's path is still true. */
void platform_file_written(const char *path)
{
    EM_ASM({
        var path = UTF8ToString($0);
        attnvizDownload(path.substring(path.lastIndexOf("/") + 1), FS.readFile(path));
    }, path);
}

/* A session saved (Ctrl+S): downloaded as an export is, then kept in the
 * browser's IndexedDB under its absolute path in the page (the prompt's
 * default name is relative: "/attnviz-session.json"), where the page's
 * Ctrl+O lists it after a reload (attnvizKeep in tools/web/pre.js; the
 * storing ends after this returns, and a refusal comes back through
 * platform_web_note). */
void platform_session_written(const char *path)
{
    char *full = realpath(path, NULL);
    const char *kept = full ? full : path;
    platform_file_written(kept);
    EM_ASM({ attnvizKeep(UTF8ToString($0)); }, kept);
    free(full);
}

/* The browser's last word for the status bar (tools/web/pre.js: a session
 * or the autosave its storage refused, a kept session it could not read
 * back), taken by the window's next frame (platform_note). Written and
 * read on the page's main thread. */
static char web_note[512];

EMSCRIPTEN_KEEPALIVE void platform_web_note(const char *text)
{
    snprintf(web_note, sizeof web_note, "%s", text);
}

int platform_note(char *out, size_t n)
{
    if (!web_note[0] || web_open_since) /* after the open waiting (open_soon) */
        return 0;
    snprintf(out, n, "%s", web_note);
    web_note[0] = '\0';
    return 1;
}

/* How long an open waits for a model's run that is suspended (its
 * worker's slice, bg_stale) to end before it opens in one call, as it
 * did before it waited (the run dropped if the open closes its model): a
 * run resumes after the next animation frame, and a forward of the
 * shipped models ends within a few; a browser that holds the page's
 * messages back must not hold the open back for ever. */
#define RUN_WAIT_MS 1000.0

/* What keeps an open from being suspended now (asyncify keeps one
 * suspended stack; the one-thread page's, background_single.c): 1 an
 * open suspended (web_open_suspended), 2 a model's run suspended, 0
 * nothing (always on the threaded page, which has no ASYNCIFY). */
static int web_suspended(void)
{
    if (web_open_suspended())
        return 1;
    return EM_ASM_INT({ return typeof Asyncify === "object" && Asyncify.currData ? 2 : 0; });
}

/* A file or folder dropped on the page, already copied into the page's
 * memory at path by tools/web/pre.js, or an open the loop was asked for
 * (open_soon): opened as the desktop opens a dropped path (app_open_path,
 * the status bar saying what opened or why not), at once, after the
 * events queued before it. Opened from here (PlatformLoop.open), with
 * this function at the bottom of the stack and Module.attnvizOpening set,
 * the one-thread page can suspend the open between its steps
 * (bg_breathe; web.mk's ASYNCIFY list names the functions from here to
 * there), which it cannot from the main loop's step. While something
 * else is suspended (another open, a model's run) the path waits for a
 * call of its own (open_soon), at most RUN_WAIT_MS for a run. SDL's
 * browser backend has no drop of its own. */
EMSCRIPTEN_KEEPALIVE void platform_web_dropped(const char *path)
{
    if (web_loop.done && web_loop.done(web_loop.ctx))
        return;
    int busy = web_loop.open ? web_suspended() : 1;
    if (busy == 2 && web_open_since && emscripten_get_now() - web_open_since >= RUN_WAIT_MS)
        busy = 0;
    if (busy) {
        open_soon(path);
        return;
    }
    if (SDL_HasEvents(SDL_FIRSTEVENT, SDL_LASTEVENT))
        step_now();
    /* this one is the newest: one still waiting (asked before it, also by
     * the events just handled) is dropped, as a newer open drops an older */
    web_open_since = 0;
    EM_ASM({ if (Module.attnvizAsked) Module.attnvizAsked.path = null; });
    EM_ASM({ Module.attnvizOpening = true; });
    web_loop.open(web_loop.ctx, path);
    EM_ASM({ Module.attnvizOpening = false; });
}

/* A character typed that SDL's page backend cannot make text of (beyond
 * U+FFFF: tools/web/pre.js), as SDL hands typed text over: only while
 * text input is on (a text field has focus). */
EMSCRIPTEN_KEEPALIVE void platform_web_text(const char *utf8)
{
    SDL_Event e;
    if (!SDL_IsTextInputActive() || strlen(utf8) >= sizeof e.text.text)
        return;
    SDL_zero(e);
    e.type = SDL_TEXTINPUT;
    e.text.windowID = SDL_GetKeyboardFocus() ? SDL_GetWindowID(SDL_GetKeyboardFocus()) : 0;
    memcpy(e.text.text, utf8, strlen(utf8) + 1);
    SDL_PushEvent(&e);
}

/* An input method's composition so far (tools/web/pre.js), as SDL hands
 * it over on the desktop (SDL_TEXTEDITING: drawn at the cursor until its
 * text comes; "" when it ended), cut to what the event holds at a
 * character's start. */
EMSCRIPTEN_KEEPALIVE void platform_web_compose(const char *utf8)
{
    SDL_Event e;
    if (!SDL_IsTextInputActive())
        return;
    SDL_zero(e);
    e.type = SDL_TEXTEDITING;
    e.edit.windowID = SDL_GetKeyboardFocus() ? SDL_GetWindowID(SDL_GetKeyboardFocus()) : 0;
    size_t n = strlen(utf8);
    if (n >= sizeof e.edit.text)
        for (n = sizeof e.edit.text - 1; n > 0 && ((unsigned char)utf8[n] & 0xC0) == 0x80; n--)
            ;
    memcpy(e.edit.text, utf8, n);
    SDL_PushEvent(&e);
}

/* The page is being hidden or closed (tools/web/pre.js): the autosave
 * written now, as the desktop writes it on quitting; pre.js then stores
 * the folder in IndexedDB. */
EMSCRIPTEN_KEEPALIVE void platform_web_suspend(void)
{
    if (web_loop.suspend && !web_open_suspended()) /* (not half-way through an open: the last autosave stays) */
        web_loop.suspend(web_loop.ctx);
}
