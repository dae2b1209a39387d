/* What the desktop and the browser do differently, behind one small
 * interface: platform_desktop.c (fontconfig, X11, a blocking event loop)
 * now, platform_web.c (embedded fonts, emscripten's main loop) for the
 * browser build. Everything else in src/app is the same for both; no
 * #ifdef outside these files. */
#ifndef ATTNVIZ_APP_PLATFORM_H
#define ATTNVIZ_APP_PLATFORM_H

#include <SDL.h>
#include <stddef.h>

/* ---- fonts ----------------------------------------------------------------- */

/* The path of the main font (DejaVu Sans, or any sans font) into out; 0,
 * or -1 when there is none or it does not fit in n bytes. Looked up once a
 * process (fonts_find_default's comment says where). */
int platform_font_default(char *out, size_t n);
/* The file (and face index) of a font that has the character cp, for the
 * characters the main font lacks; 0 or -1. *state is the platform's own
 * (NULL at first, loaded at the first call and kept); a load that failed
 * sets *failed and is not tried again. */
int platform_font_fallback(void **state, int *failed, unsigned cp, char *out, size_t n,
                           long *index);
/* Free what platform_font_fallback kept in state; NULL does nothing. */
void platform_font_fallback_free(void *state);
/* Nonzero once after a fallback font became available since the last
 * call: characters drawn as boxes before should be looked up again. The
 * desktop's fonts are all there from the start (0); a page fetches its
 * fallbacks the first time a character needs one. */
int platform_fonts_changed(void);

/* ---- the window ------------------------------------------------------------ */

/* Called after SDL_Init, before the window is made: the locale and the
 * hints the platform's windows need. */
void platform_window_setup(void);
/* Show title (UTF-8) in the window's title bar, as every tool there can
 * read it. */
void platform_window_title(SDL_Window *w, const char *title);

/* The event loop's three steps, given by the window (window.c). */
typedef struct PlatformLoop {
    void *ctx;
    /* Draw if something changed; returns how long the loop may wait for
     * the next event in ms (-1: until one comes). */
    int (*frame)(void *ctx);
    /* Hand over a batch of events beginning with *first (the step takes
     * the rest of the queue itself). */
    void (*events)(void *ctx, SDL_Event *first);
    /* Nonzero when the user has quit. */
    int (*done)(void *ctx);
    /* Save what quitting saves (the autosave): a page is hidden or closed
     * without its loop ending. The desktop's loop ends instead. */
    void (*suspend)(void *ctx);
    /* Open path now, as a file dropped on the window opens, outside the
     * event queue: the browser's drop (platform_web.c), whose open its
     * one-thread page can suspend between steps. The desktop's drops come
     * as events. */
    void (*open)(void *ctx, const char *path);
    /* An open the events or the start asked for (the path typed into
     * Ctrl+O's prompt, the autosave's session of what was shown): 1 and
     * its path in path (n bytes), taken, else 0. It is never run inside
     * the step that asked for it: the loop hands it to open after the
     * step, the desktop at once (before its next frame: at the start
     * before the first), the browser from a call of its own after the
     * frame, which its one-thread page can suspend between the open's
     * slices as it does a drop's. */
    int (*asked)(void *ctx, char *path, size_t n);
} PlatformLoop;

/* Run the loop until loop->done: on the desktop frame, then block until an
 * event or frame's timeout (0% CPU when idle), then events; in the browser
 * one frame and the queued events each animation frame. Returns when done
 * (the desktop's; a page's loop runs until the tab closes). */
void platform_run_loop(const PlatformLoop *loop);

/* ---- the help ------------------------------------------------------------------ */

/* The help's lines for Ctrl+S and Ctrl+O (input.c's key table): what
 * saving and opening do differ (a page keeps its sessions in the browser
 * and opens the user's files through the browser's picker). */
extern const char platform_help_save[];
extern const char platform_help_open[];

/* ---- files ----------------------------------------------------------------- */

/* A file the user asked for (an export) was written at path: the desktop
 * has nothing more to do, the browser offers it as a download. */
void platform_file_written(const char *path);
/* A session the user saved (Ctrl+S) was written at path: the desktop has
 * nothing more to do (the file is kept where it was written); the browser
 * offers it as a download and keeps it in its own storage (IndexedDB),
 * where the page's Ctrl+O offers it again after a reload. */
void platform_session_written(const char *path);
/* A message for the status bar that the platform has had since the last
 * call (the browser: a session or the autosave its storage would not keep,
 * which it learns only after the save's own message): 1 and the text in
 * out (n bytes), else 0. The desktop has none. */
int platform_note(char *out, size_t n);

#endif
