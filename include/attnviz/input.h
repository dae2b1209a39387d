/* Input: the one place where SDL events become actions. Keys and the wheel
 * through one table, which also writes the help overlay; clicks and motion
 * through the view's hit tests. Typing is not in the table (see text.c). */
#ifndef ATTNVIZ_INPUT_H
#define ATTNVIZ_INPUT_H

#include <SDL.h>

#include "attnviz/action.h"
#include "attnviz/app_state.h"

/* The wheel, as a key of the table: its rows' i, j and value are multiplied
 * by the wheel's steps (up positive). Not a key SDL sends. */
#define APP_KEY_WHEEL ((SDL_Keycode)(SDLK_SCANCODE_MASK | 0xFFFF))

/* Modifiers a row asks for (none: any Shift, no Ctrl, no Alt). */
enum {
    KEYMOD_CTRL = 1,     /* a Ctrl key held */
    KEYMOD_SHIFT = 2,    /* a Shift key held */
    KEYMOD_NO_SHIFT = 4, /* no Shift key held */
    KEYMOD_ALT = 8       /* an Alt key held (rows without it do not fit
                            while Alt is held, as for Ctrl) */
};

/* When a row applies. Keys: the table is searched for KEYCTX_ANY, then (when
 * no text field has the keyboard) KEYCTX_HELP, KEYCTX_EDITOR, KEYCTX_GRID, KEYCTX_TEACH,
 * KEYCTX_MAIN;
 * the first row that fits wins. The wheel: the part under the pointer. */
typedef enum KeyContext {
    KEYCTX_ANY = 0,   /* always, even while typing (Ctrl shortcuts, F1, F11) */
    KEYCTX_HELP,      /* the help overlay is shown */
    KEYCTX_EDITOR,    /* the weight editor has the keyboard */
    KEYCTX_GRID,      /* the model view of an attention file is shown */
    KEYCTX_TEACH,     /* teach mode is on (before MAIN: Space runs, 1-5 presets) */
    KEYCTX_MAIN,      /* no text field has the keyboard */
    KEYCTX_EDIT_CELL, /* wheel over a cell of the weight editor */
    KEYCTX_HEATMAP,   /* wheel over the heatmap */
    KEYCTX_LINES      /* wheel over the line diagram */
} KeyContext;

typedef struct AppKey {
    SDL_Keycode key;     /* SDLK_..., or APP_KEY_WHEEL */
    int mods;            /* KEYMOD_... */
    KeyContext ctx;
    AppAction act;
    const char *what;    /* help text; rows with the same text share a help
                            line; NULL: not in the help (a second key for
                            the same thing) */
} AppKey;

/* The table, in search order. */
const AppKey *app_key_table(int *n);
/* "Ctrl+Shift+E", "PageUp", "Plus", "wheel": a row's keys as the help shows
 * them. Returns buf. */
char *app_key_label(const AppKey *k, char *buf, size_t size);

/* What the help shows beside the keys that always apply: an attention
 * file's keys (layers, model view, rollout, special tokens) and teach mode's
 * (once it is on; the key that turns it on is always there). */
enum { APP_HELP_FILE = 1, APP_HELP_TEACH = 2, APP_HELP_PROBE = 4 /* a model's probe (Ctrl+P) */ };

/* Build the help lines from the table (one line per help text, its keys
 * joined with ", ") into lines (max entries), their keys text in text;
 * rows of a file or of teach mode only with those bits in show.
 * Returns the number of lines. */
int app_help_build(ViewHelpLine *lines, int max, char *text, size_t size, unsigned show);
/* The same for the shown source: of the actions sources own
 * (source_owns), only the rows whose action takes says it takes. */
int app_help_build_for(ViewHelpLine *lines, int max, char *text, size_t size,
                       int (*takes)(AppActionKind), unsigned show);

/* The actions one event stands for, into out (at most max; 4 is enough).
 * Returns how many (0: the event does nothing), or -1 when the event is
 * typing into a text field (a key or text for the sentence bar, a file-name
 * prompt or a typed value, an input method's composition) or a dropped file.
 * Reads the state (what has the keyboard, the layout for hit tests) and keeps
 * the last click, for double-clicks. */
int app_translate(AppState *a, const SDL_Event *e, AppAction *out, int max);

#endif
