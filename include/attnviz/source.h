/* Sources: every kind of input the window and the command line show (a
 * sentence through the toy model, an attention file, next a real model)
 * behind one interface, as SQLite's virtual tables: a SourceKind is a
 * table of functions, registered in one list; opening a path picks the
 * kind whose test accepts it. An operation a kind cannot do is a NULL
 * pointer, and that is the capability: no code outside a kind's own files
 * asks which kind is shown.
 *
 * The shown source's state is AppState.src (the kind's own struct); the
 * kind presents its maps, labels, title, facts line and controls into
 * AppState.vs, and the app does the rest (selection, hover, zoom, colour,
 * the compare view, exports, help) on those maps alone. */
#ifndef ATTNVIZ_SOURCE_H
#define ATTNVIZ_SOURCE_H

#include <SDL.h>

#include "attnviz/action.h"
#include "attnviz/error.h"
#include "attnviz/options.h"
#include "attnviz/view.h"

struct AppState;
struct AttnSession;
struct Model;
struct SourceDiffs;
struct MapsShown;

/* What a kind offers beyond showing maps (its help pages, its overlays). */
enum {
    SOURCE_TEXT = 1 << 0,     /* takes text from the sentence bar */
    SOURCE_LAYERS = 1 << 1    /* layers × heads: L, G and the model view */
};

typedef struct SourceKind {
    const char *name;   /* "sentence", "attention file": for messages */
    unsigned caps;      /* SOURCE_ bits */
    /* 1 when path is this kind's to open (NULL: never by path) */
    int (*accepts)(const char *path);
    /* 1 for each action of those sources own (source_owns) that its apply
     * carries out: its keys in the help. */
    int (*takes)(AppActionKind k);
    /* Open path in the window: on success the old source is closed and
     * this one shown (a->src, a->kind); on error what is shown stays and
     * the status bar says why. 0 or -1. A source whose open is long (a
     * model) may return 0 having only started it (app_opening: the tick
     * shows it, or says why not, later). */
    int (*open)(struct AppState *a, const char *path);
    /* Free the kind's state (a->src); a->src is NULL after. */
    void (*close)(struct AppState *a);
    /* The sentence bar's text (a->text) changed, or the second bar's
     * (a->keys): compute again. NULL: the kind takes no text (no second
     * text). */
    void (*set_text)(struct AppState *a);
    void (*set_keys)(struct AppState *a);
    /* The kind's own actions: 0 when it took act, -1 when the app should
     * (selection, colour, zoom, exports … act on the presented maps). */
    int (*apply)(struct AppState *a, const AppAction *act);
    /* Time passing (background work's results, teach mode's steps): 1
     * when something visible changed; lowers *wait_ms when it needs
     * another turn of the loop sooner. NULL: nothing in the background. */
    int (*tick)(struct AppState *a, Uint32 now_ms, int *wait_ms);
    /* Fill a->vs for a frame: the maps (map, weights, scores, logits),
     * labels, title, facts, bar label and text, the controls strip (then
     * the app adds those every source has). */
    void (*present)(struct AppState *a);
    /* The kind's own controls at the start of a->vs's strip (a->ctl_act:
     * what each does), after present and the overlays of the frame. */
    void (*controls)(struct AppState *a);
    /* Rows and columns of the shown map (for hit tests before a frame). */
    void (*shown_size)(const struct AppState *a, int *Tq, int *Tk);
    /* Save what is shown as a session file at path; the status bar says
     * how it went. 0 or -1. NULL: no sessions. */
    int (*save)(struct AppState *a, const char *path);
    /* The window's title (the sentence, the file's name). */
    const char *(*title)(const struct AppState *a);
    /* The heatmap's PNG export as the command line writes it, for s;
     * NULL: the view's heatmap panel of s. */
    SDL_Surface *(*export_heatmap)(struct AppState *a, const ViewState *s, const ViewFonts *fonts,
                                   AttnErr *err);
    /* Its layers × heads of maps, shown as maps_shown.h shows them (NULL:
     * none; sessions of such maps name the source's path). */
    struct MapsShown *(*maps)(const struct AppState *a);
    /* The weights teach mode trains (NULL: no teach mode). */
    struct Model *(*learnable)(struct AppState *a);
    /* The compare view (NULL snap: nothing to compare). snap: what made
     * the shown map, the kind's own copy (snap_free frees it); snap_diff:
     * what differs between ref and what is shown now (map) in words, and
     * base, the reference's label when nothing differs ("weights, head 1");
     * compare_hint: what to change to see a difference. */
    void *(*snap)(const struct AppState *a);
    void (*snap_free)(void *snap);
    void (*snap_diff)(const struct AppState *a, const void *ref, const AttnMap *map,
                      struct SourceDiffs *d, char *base, size_t n);
    const char *compare_hint;

    /* The command line: open path with o's flags (--layer, --head, --drop …)
     * into *opened without a window (NULL: the kind opens nothing from the
     * command line; the sentence's path is NULL: its -f and --session are
     * flags); write --print and every --export of it; show it in the
     * window (which owns it from then on, also on error; the sentence has
     * no show: the window takes it as its default, source_sentence_parts);
     * free it. */
    int (*cli_open)(const Options *o, const char *path, void **opened, AttnErr *err);
    int (*cli_write)(void *opened, const Options *o, AttnErr *err);
    int (*show)(struct AppState *a, void *opened);
    void (*cli_free)(void *opened);

    /* The induction probe (issue 26), for a model (NULL: none). probe_setup:
     * its bos token id (-1: none), vocabulary size and most tokens; probe:
     * run it on ids (T of them) in place of the text, its maps shown as the
     * text's are; cli_probe: as cli_open, on o's probe (--probe, --seed:
     * probe.h's tokens) instead of a text. */
    void (*probe_setup)(const struct AppState *a, int *bos_id, int *vocab, int *max_T);
    int (*probe)(struct AppState *a, const int *ids, int T);
    int (*cli_probe)(const Options *o, const char *path, void **opened, AttnErr *err);

    /* What a source of layers × heads keeps in its session beside the
     * maps' (NULL: nothing): session_out fills its part of sn as
     * maps_shown_save writes it; session_in takes it back after a session
     * opened it (a model: the heads switched off, the logit lens shown). */
    void (*session_out)(const struct AppState *a, struct AttnSession *sn);
    void (*session_in)(struct AppState *a, const struct AttnSession *sn);
} SourceKind;

extern const SourceKind source_sentence; /* src/app/sources/sentence_source.c */
extern const SourceKind source_file;     /* src/app/sources/file_source.c */
extern const SourceKind source_model;     /* src/app/sources/model_source.c */

/* The kinds that open paths, in the order their tests are tried; a test
 * build may add one (source_register). NULL-terminated. */
const SourceKind *source_for_path(const char *path);
/* Add a kind to the list (tests: a source made from a formula); 0 or -1
 * when the list is full. */
int source_register(const SourceKind *k);

/* What differs between a pinned map's snapshot and what is shown: the
 * changes in words ("head 1 vs head 2, mask off vs on"), and each side
 * alone for the two maps' labels. */
typedef struct SourceDiffs {
    char what[500], ref[280], cur[280];
    int n;
} SourceDiffs;
void source_diff_add(SourceDiffs *d, const char *what, const char *ref, const char *cur);
/* "ref vs cur" */
void source_diff_vs(SourceDiffs *d, const char *ref, const char *cur);
/* "name off vs on" */
void source_diff_switch(SourceDiffs *d, const char *name, int ref, int cur);
/* "head 2", "average of heads" (head < 0) */
void source_head_word(int head, char *buf, size_t n);

/* The actions that belong to sources (settings, weights, text, layers,
 * teach mode): the help lists them for a source that takes them. */
int source_owns(AppActionKind k);

/* Head and layer cycling, the same for every kind: 0, 1, …, n − 1, then
 * the average (−1), and round; dir 1 or −1. */
int source_cycle(int pos, int n, int dir);

/* ---- the controls strip -------------------------------------------------------- */

/* Append a control to s's strip: the action a click gives (acts[k], when
 * acts is not NULL), lit when on, greyed when off, its label from fmt and a
 * shorter one for narrow windows (compact, "" for none). */
void source_ctl_add(ViewState *s, AppAction *acts, AppAction act, int on, int off,
                    const char *compact, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;
/* The controls every source has, after its own: colour map, all queries,
 * compare (when can), teach (when teach), export, help. */
void source_ctl_common(ViewState *s, AppAction *acts, int compare, int teach);
/* What source_sentence.cli_open opened, as the window takes it (its
 * default source, also beside a file or a model): the Model, the sentences
 * PageUp/PageDown walk, the view of --session (NULL: none). The opener
 * keeps them (source_sentence.cli_free). */
struct SentenceList;
struct SessionView;
void source_sentence_parts(void *opened, struct Model **m, struct SentenceList **sl,
                           const struct SessionView **sv);
/* The sentence's whole strip for s (view_state_set_model's settings): for
 * views drawn without the app (tests) as in the window. */
void source_sentence_controls(ViewState *s, AppAction *acts);

#endif
