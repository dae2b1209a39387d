/* Layers × heads of maps in the window (src/app/maps_shown.c), for every
 * source that has them (an attention file, a model computed natively, a
 * test's formula): what is picked (layer, head, rollout, special tokens
 * hidden, the model view) and the small maps of the model view. A source
 * keeps one MapsShown in its state and hands it out through
 * SourceKind.maps; the functions below find it there. */
#ifndef ATTNVIZ_MAPS_SHOWN_H
#define ATTNVIZ_MAPS_SHOWN_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/action.h"
#include "attnviz/attnmap.h"
#include "attnviz/import.h"

struct ViewState;

struct AppState;
struct SourceDiffs;

struct MapsShown {
    Imported *imp;             /* the maps and the picked one (owned) */
    int grid;                  /* 1: the model view (every layer and head) */
    int layer, head;           /* the head view's map (-1: average) */
    int rollout;
    int hide_special;          /* the special tokens dropped, rows renormalised */
    int grid_layer, grid_head; /* the model view's selection */
    float *thumbs;             /* every map, small, for the model view */
    AttnMaps thumb_maps;
    char **thumb_labels;
    unsigned long gen;         /* changes when the picked map changes: a
                                  model_next_generation, no other source's */
    char panel_title[200];
    /* head roles (issue 26, src/app/maps_heads.c) */
    int score;                 /* the HeadScoreId the model view shows (cross-attention's:
                                  one it has, entropy unless I picked first) */
    int score_self;            /* the score chosen for self-attention while cross maps
                                  show entropy in its place (-1: none): back with them */
    int sorted;                /* the model view in that score's order */
    int score_view;            /* the score overview in the maps' place */
    int every_head;            /* the line diagram: every head of the layer */
    unsigned char *head_on;    /* f.H flags: that head's lines drawn */
    HeadScores *scores;        /* f.L × f.H, or NULL: not made for these maps */
    int scores_hidden;         /* hide_special when they were made */
    double *score_v;           /* the shown score of each map */
    int *order;                /* the maps by it, highest first, nones last */
    ScoreOverview ov;          /* the overview's map (ov.v NULL: none) ... */
    int ov_score;              /* ... of this score */
    int ov_cscale;             /* its colours (ColorScaleMode; 0, the
                                  default: fixed 0–1; Shift+C cycles it) */
    float *heads_v;            /* every head of the picked layer, as picked */
    AttnMaps heads_maps;
    unsigned long heads_gen;   /* gen when heads_v was made (0: never) */
    /* the induction probe shown (a model's, issue 26): its tokens (probe_T
     * of them; 0: the text's are shown), seed and N; the next run's seed */
    int *probe_ids;
    int probe_T, probe_n;
    uint64_t probe_seed, probe_next;
    int probe_started;         /* probe_next is set */
};
typedef struct MapsShown MapsShown;

/* Take im (opened and picked; owned from now on, freed on error) into ms
 * and make the model view's small maps. 0 or -ATTN_E_NOMEM. */
int maps_shown_init(MapsShown *ms, Imported *im);
void maps_shown_free(MapsShown *ms);
/* New maps for the shown source (its text changed): im (opened, owned
 * from now on) replaces its maps; the layer, head, rollout, hidden special
 * tokens and the model view are kept (clamped to im's sizes), and so is the
 * selection (clamped). 0 or -ATTN_E_NOMEM (im freed, the old maps kept). */
int maps_shown_replace(struct AppState *a, Imported *im);
/* Once the source is shown: the selection on the first token after the
 * first, the status bar naming the maps (name) and the keys. */
void maps_shown_start(struct AppState *a, const char *name);
/* The actions on layers and heads (L, H, O, R, E, G, the model view's
 * arrows, Enter and hover): 0 when taken, -1 for the rest. */
int maps_shown_apply(struct AppState *a, const AppAction *act);
/* 1 for the actions maps_shown_apply takes (a source's help rows). */
int maps_shown_takes(AppActionKind k);
/* a->vs from the picked map: the maps, title, facts, the model view or the
 * overview; no_panels: what the editor's and step view's room says; what:
 * the heatmap title's source ("from the file"). */
void maps_shown_present(struct AppState *a, const char *no_panels, const char *what);
/* The controls strip: layer, rollout, special tokens, model view, head, R. */
void maps_shown_controls(struct AppState *a);
void maps_shown_size(const MapsShown *ms, int *Tq, int *Tk);
/* The side of the model view's thumbnails of L × H maps (import_thumbs'). */
int maps_thumb_side(int L, int H);
/* Head roles (maps_heads.c): the actions on scores, the sorted grid, the
 * score overview and every head's lines: 0 when taken, -1 for the rest;
 * a->vs's parts of them (after maps_shown_present's); what the maps'
 * replacement keeps (from old into now); freeing them. */
int maps_heads_apply(struct AppState *a, const AppAction *act);
int maps_heads_takes(AppActionKind k);
void maps_heads_present(struct AppState *a);
void maps_heads_keep(MapsShown *now, MapsShown *old);
/* The score fitted to the maps: cross-attention's entropy in place of one
 * it has not (the self-attention's choice kept, back with such maps). */
void maps_heads_fit_score(MapsShown *ms);
/* The induction probe of the shown model (source.h's probe): bos, n random
 * tokens from seed, the same n again (n clamped to the model's positions),
 * then its induction scores shown (the score overview). 0, or -1 (the
 * status bar says why: no model). */
int maps_probe_run(struct AppState *a, int n, uint64_t seed);
/* Run the probe's tokens ids (T; made from n and seed) and keep them (a
 * session's). 0 or -1. */
int maps_probe_show(struct AppState *a, const int *ids, int T, int n, uint64_t seed);
/* The text shown again, not the probe's tokens. */
void maps_probe_clear(MapsShown *ms);
void maps_heads_free(MapsShown *ms);
/* The head scores made again when next asked (the maps shown changed kind). */
void maps_heads_forget_scores(MapsShown *ms);
/* Ctrl+E in the model view (s: the view state as exported: its theme and
 * scale): what is shown, by the command line's figure code: the score
 * overview as stem.png and stem.svg (--view heads'), else every layer and
 * head as stem.png (--view grid's) with the marks and sort labels shown.
 * said gets what was written; 0, or an error in err. */
int maps_heads_export(struct AppState *a, const struct ViewState *s, const char *stem, char *said, size_t n,
                      AttnErr *err);
/* The head roles into a session (the score, sorted, overview, every head's
 * lines, the heads switched off) and from one (clamped to the maps). */
struct AttnSession;
void maps_heads_session_of(const MapsShown *ms, struct AttnSession *sn);
void maps_heads_session_apply(MapsShown *ms, const struct AttnSession *sn);
/* The scores of every map, made now when they are not (NULL: out of memory). */
const HeadScores *maps_heads_scores(MapsShown *ms);

/* Save what is shown as a session naming source_path (what the source's
 * open takes again) and text (a source's text, or NULL); the status bar says
 * how it went. 0 or -1. */
int maps_shown_save(struct AppState *a, const char *source_path, const char *text, const char *path);
/* Open such a session: the source its path names (through the sources'
 * list), then its picks and view. 0 or -1 (status bar). */
int maps_session_open(struct AppState *a, const char *path);
/* The flags of the command line over a session just opened (or the
 * autosave's): --layer, --head, --rollout, --query, --colormap,
 * --color-scale, --theme, --all-lines; nothing when no source of layers ×
 * heads is shown. */
struct Options;
void maps_session_flags(struct AppState *a, const struct Options *o);
/* The compare view's snapshot of what is picked, and what differs. */
void *maps_shown_snap(const struct AppState *a);
void maps_shown_snap_free(void *snap);
void maps_shown_snap_diff(const struct AppState *a, const void *ref, const AttnMap *map,
                          struct SourceDiffs *d, char *base, size_t n);

#endif
