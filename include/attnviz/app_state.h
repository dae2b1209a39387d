/* The application state; app_apply (an action on it), app_handle_event (an
 * SDL event), app_tick (time passing). Plain data: tests build one, push
 * events or actions through and check the result without a window. */
#ifndef ATTNVIZ_APP_STATE_H
#define ATTNVIZ_APP_STATE_H

#include <SDL.h>

#include "attnviz/action.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/session.h"
#include "attnviz/view.h"

#define APP_UNDO_MAX 256
#define APP_TEXT_MAX (1 << 20)
#define APP_AUTOSAVE_MS 30000  /* unsaved edits are autosaved this often */
#define APP_HELP_MAX 72        /* help overlay lines */

/* What an undo step restores: the weights and the edited word vectors. */
typedef struct AppSnapshot {
    AttnParams params;
    int n_over;
    char **over_word;
    float *over_vec;
} AppSnapshot;

typedef enum AppPrompt { PROMPT_NONE = 0, PROMPT_SAVE, PROMPT_OPEN } AppPrompt;

typedef struct AppState {
    Model *m;
    ViewState vs;
    ViewLayout layout;
    View *view;                /* NULL in tests without fonts */
    const Options *opt;
    SentenceList *sentences;
    int sentence_idx;

    char *text;                /* sentence bar contents */
    size_t text_len, text_cap;
    char *keys;                /* the second bar's (cross-attention's keys
                                  and values; "" = self-attention) */
    size_t keys_len, keys_cap;
    AppPrompt prompt;
    char prompt_buf[1024];
    int prompt_cursor;

    char preedit[256];         /* input method's composition (SDL_TEXTEDITING) */
    int bar_all;               /* Ctrl+A: the focused bar's whole text is selected
                                  (typing or pasting replaces it, Backspace clears) */
    SDL_Rect caret;            /* last text cursor told to the input method */
    /* The query selected when the sentence bar took the keyboard (or
     * since): its row, its token and which occurrence of that token it is.
     * While the sentence is typed the selection follows that token. */
    int anchor_row, anchor_nth;
    char anchor_tok[128];      /* "" when the token did not fit */
    char status[4400];
    int status_err;
    unsigned status_serial;    /* app_status calls so far: a new message is drawn */
    int quit, dirty, fullscreen;
    int win_w, win_h;
    int query_drawn; /* the query of the last frame drawn (app_draw keeps a moved one in view) */
    float ui_scale;            /* Ctrl+Plus/Minus */
    float dpi_scale;           /* drawable / window size */

    /* weight editor */
    int dragging, drag_y0, drag_moved;
    float drag_v0;
    char edit_buf[64];
    int editing_value;
    int edit_fresh;            /* the next typed character replaces the value */
    Uint32 last_click_time;
    int last_click_row, last_click_col;
    uint64_t next_seed;

    /* undo / redo */
    AppSnapshot undo[APP_UNDO_MAX];
    int undo_n, undo_pos;      /* entries, current position */

    char session_path[1024];   /* Ctrl+S writes here; "" asks for a name */
    char autosave_path[1024];  /* "" = no autosave */
    int unsaved;               /* edits since the last save or autosave */
    Uint32 autosave_at;        /* SDL_GetTicks() of the last autosave */
    const char *export_dir;
    int export_count;          /* for tests: files written */
    char last_export[4096];

    /* what is shown: a source (source.h) and its own state */
    const struct SourceKind *kind;
    void *src;
    AppAction ctl_act[VIEW_CTL_MAX]; /* what each control of vs.ctl does */

    /* the compare view (issue 14): the pinned reference and what made it
     * (src/app/compare.c), or NULL */
    struct AppCompare *cmp;
    /* teach mode (issue 15, src/app/teach_app.c), or NULL: never used */
    struct AppTeach *teach;
    /* a model opening on its own thread (model_opening.c), NULL before the
     * first; what to do once it is shown or has failed (a session's layer,
     * head and view: maps_shown.c), with its context, or NULL */
    struct ModelOpening *opening;
    void (*open_then)(struct AppState *a, void *ctx, int rc);
    void *open_then_ctx;
    int open_rc;               /* the last open's outcome: 0 shown, -1 failed */
    char open_asked[1024];     /* a path an event asked to open, for the loop
                                  (app_open_later); "" none */
    char title[600];           /* app_title's, while a model opens */

    ViewHelpLine help[APP_HELP_MAX]; /* the help overlay, from the key table */
    char help_text[5120];      /* its keys texts */
    AppAction last_action;     /* for tests: the last action applied ... */
    unsigned long n_actions;   /* ... and how many so far */
} AppState;

/* Set up around an existing model (not owned). sentences may be NULL. */
int app_init(AppState *a, Model *m, const Options *o, SentenceList *sentences);
void app_free(AppState *a);
/* Apply one action (action.h): the state changes, the model is recomputed,
 * an edit of weights or vectors is an undo step. Returns 1 when something
 * visible changed. */
int app_apply(AppState *a, const AppAction *act);
/* Apply one SDL event (through app_translate, input.h). Returns 1 when
 * something visible changed. */
int app_handle_event(AppState *a, const SDL_Event *e);
/* Time passing: the window's loop calls it on every turn, with SDL_GetTicks().
 * Does what is due (the autosave of unsaved edits); sets *wait_ms to how long
 * the loop may wait for an event (-1: until one comes). Returns 1 when
 * something visible changed. */
int app_tick(AppState *a, Uint32 now_ms, int *wait_ms);
/* The view state of what is shown now (a->vs): the source's maps and
 * controls, the compare view's and teach mode's parts. */
void app_present(AppState *a);
/* Recompute the layout for the window size and draw. */
void app_draw(AppState *a, SDL_Renderer *r);
/* Replace the sentence and recompute (keeps the first 1024 tokens); the
 * second bar then shows the model's second sentence (m->keys_text), so a
 * session load followed by this shows both. The heatmap fits again. */
void app_set_sentence(AppState *a, const char *text);
/* The heatmap unzoomed and unpanned: the whole map fitted (a new sentence). */
void app_fit_map(AppState *a);
/* Replace the second sentence ("" = self-attention) and recompute. */
void app_set_keys(AppState *a, const char *text);
/* Set the status-bar message. */
void app_status(AppState *a, int error, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Save a session to path (atomic); status bar says how it went. */
int app_save_session(AppState *a, const char *path);
/* Open a session (.json) or a sentences file; the old state stays on error.
 * A model (its folder or GGUF file, or a session naming one) opens on a
 * thread of its own where there are threads: 0 then means started
 * (app_opening), the tick shows it or says why not. A newer open drops one
 * still running. */
int app_open_path(AppState *a, const char *path);
/* Ask for path to be opened once the event being handled is done (Enter
 * in Ctrl+O's prompt): the open is not run inside the event's step, as
 * the one-thread page cannot suspend an open begun there (it would freeze
 * the page for the whole open); the window's loop takes it
 * (app_open_asked) and opens it after the step (platform.h's
 * PlatformLoop.asked). A newer ask replaces one not yet taken. */
void app_open_later(AppState *a, const char *path);
/* Take the path app_open_later asked for: 1 and the path in path (n
 * bytes), else 0 (none, or it does not fit: the status bar says so). */
int app_open_asked(AppState *a, char *path, size_t n);
/* 1 while an open started by app_open_path is running. */
int app_opening(const AppState *a);
/* The window's title: the shown source's, and while a model opens, its
 * name before it (the taskbar, a browser's tab: "opening NAME… — …"). */
const char *app_title(AppState *a);
/* Wait for the open running, taking its result as the tick does (the
 * command line's session and the autosave's restore at start: their flags
 * apply over what it shows, and a failure ends the start): 0 shown (or
 * none running), -1 failed (the status bar says why). */
int app_open_wait(AppState *a);
/* Once the open running is shown (rc 0), has failed (-1) or was dropped
 * for a newer one (-2), then(a, ctx, rc) runs, once; it owns ctx. */
void app_open_then(AppState *a, void (*then)(AppState *a, void *ctx, int rc), void *ctx);
/* The open running ended (rc as app_open_then's): its then run. */
void app_open_done(AppState *a, int rc);
/* Apply a session's view settings. */
void app_apply_session_view(AppState *a, const SessionView *sv);
/* Write the autosave file when there are unsaved edits (or always): the
 * sentence's state, or, while a source of layers × heads is shown (a
 * model, an attention file), its session in "shown.json" beside it. */
int app_autosave(AppState *a, int always);
/* At a plain start, after the sentence's autosave: what was shown over it
 * (shown.json), opened as Ctrl+O opens a session; Ctrl+S goes on writing
 * the file autosave.json.from names when that file holds the same state;
 * the command line's flags (a->opt) over it. Waited for, except where
 * bg_may_wait says no (the threaded page's main thread): there it ends
 * after its open, in the window's loop (app_open_then). 0 (also when there
 * is none, or it has not ended), or -1 (the status bar says why; the
 * sentence stays shown). */
int app_restore_shown(AppState *a);
/* The session file (full path) that holds the autosave's state, written
 * by the last Ctrl+S with nothing changed since: 1 and buf, or 0. */
int app_autosave_from(const AppState *a, char *buf, size_t n);

/* Show src of kind k in place of what is shown (whose kind closes its
 * state first); the selection, hover and pan start again. */
void app_show_source(AppState *a, const struct SourceKind *k, void *src);

/* Export the heatmap (0), lines (1) or window (2) to the export folder. */
int app_export(AppState *a, int what);

#endif
