#define _DEFAULT_SOURCE
/* An attention file in the window (issue 13): the head view of one map
 * (L / H pick the layer and head, O the rollout), the model view of every
 * layer and head (G; arrows move, Enter opens), and what the sentence's
 * actions do while a file is shown (nothing that needs weights). */
#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/import.h"
#include "app_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char NO_MODEL[] =
    "An attention file from a model: no weights to edit and no steps to show here "
    "(the numbers are the file's).";

void app_import_free(AppState *a)
{
    if (a->imp) {
        import_close(a->imp);
        free(a->imp);
    }
    free(a->thumbs);
    free(a->thumb_labels);
    a->imp = NULL;
    a->thumbs = NULL;
    a->thumb_labels = NULL;
    a->grid = 0;
}

/* Every map, small, for the model view. */
static int make_thumbs(AppState *a)
{
    Imported *im = a->imp;
    AttnErr err = {0};
    int tq, tk;
    /* small enough that every layer fits the window's height (12 layers:
     * 32 cells a side), never over 64 */
    int most = im->f.L > im->f.H / 2 ? im->f.L : im->f.H / 2;
    int side = 384 / (most > 0 ? most : 1);
    side = side > 64 ? 64 : side < 4 ? 4 : side;
    if (import_thumbs(im, side, &a->thumbs, &tq, &tk, &err) < 0)
        return -ATTN_E_NOMEM;
    int n = tq > tk ? tq : tk;
    a->thumb_labels = calloc((size_t)n + 1, sizeof *a->thumb_labels);
    if (!a->thumb_labels)
        return -ATTN_E_NOMEM;
    for (int i = 0; i < n; i++)
        a->thumb_labels[i] = (char *)"";
    a->thumb_maps = (AttnMaps){a->thumbs, im->f.L, im->f.H, tq, tk,
                               (const char *const *)a->thumb_labels,
                               (const char *const *)a->thumb_labels, im->kind, 0, NULL};
    return 0;
}

static void say_pick(AppState *a)
{
    Imported *im = a->imp;
    if (im->note[0])
        app_status(a, 0, "%s: %s", im->facts, im->note);
    else
        app_status(a, 0, "%s", im->facts);
}

int app_import_set(AppState *a, Imported *im)
{
    app_import_free(a);
    a->imp = im;
    a->imp_layer = im->layer;
    a->imp_head = im->head;
    a->imp_rollout = im->rollout;
    a->imp_hide_special = 0;
    a->session_path[0] = '\0'; /* Ctrl+S asks where this file's session goes */
    a->grid_layer = im->layer >= 0 ? im->layer : 0;
    a->grid_head = im->head >= 0 ? im->head : 0;
    a->imp_gen++;
    a->vs.query = im->Tq > 1 ? 1 : 0;
    a->vs.key = -1;
    a->vs.hover_i = a->vs.hover_j = -1;
    a->vs.sentence_focus = 0;
    a->vs.edit_focus = 0;
    if (make_thumbs(a) < 0) {
        app_import_free(a);
        app_status(a, 1, "out of memory");
        return -ATTN_E_NOMEM;
    }
    app_status(a, 0, "%s: %d layer%s \xC3\x97 %d head%s, %d\xC3\x97%d \xC2\xB7 L, H: layer, head \xC2\xB7 "
               "G: every layer and head \xC2\xB7 O: rollout \xC2\xB7 E: special tokens%s%s", im->title, im->f.L,
               im->f.L == 1 ? "" : "s", im->f.H, im->f.H == 1 ? "" : "s", im->f.Tq, im->f.Tk,
               im->note[0] ? " \xC2\xB7 " : "", im->note);
    a->dirty = 1;
    return 0;
}

/* Pick the file's map again for the layer, head and rollout asked for. */
static void repick(AppState *a, int layer, int head, int rollout)
{
    AttnErr err = {0};
    const char *drop = a->imp_hide_special && a->imp->n_special ? a->imp->specials : NULL;
    if (import_pick(a->imp, layer, head, rollout, drop, &err) < 0) {
        app_status(a, 1, "%s", err.msg);
        return;
    }
    a->imp_layer = a->imp->layer;
    a->imp_head = a->imp->head;
    a->imp_rollout = rollout;
    a->imp_gen++;
    if (a->vs.query >= a->imp->Tq)
        a->vs.query = a->imp->Tq - 1;
    if (a->vs.key >= a->imp->Tk)
        a->vs.key = a->imp->Tk - 1;
    say_pick(a);
    a->dirty = 1;
}

/* 0, 1, …, n − 1, then the average (−1), and round. */
static int cycle(int pos, int n, int dir)
{
    int k = pos < 0 ? n : pos;
    k = ((k + dir) % (n + 1) + n + 1) % (n + 1);
    return k == n ? -1 : k;
}

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Selection and hovering in the head view: bounded by the file's map. */
static int select_action(AppState *a, const AppAction *act)
{
    int Tq = a->imp->Tq, Tk = a->imp->Tk;
    ViewState *s = &a->vs;
    switch (act->kind) {
    case ACT_SELECT_QUERY: s->query = clamp(act->i, 0, Tq - 1); break;
    case ACT_MOVE_QUERY: s->query = clamp(s->query + act->i, 0, Tq - 1); break;
    case ACT_FOCUS_KEY: s->key = act->i < 0 ? -1 : clamp(act->i, 0, Tk - 1); break;
    case ACT_MOVE_KEY: s->key = clamp((s->key < 0 ? 0 : s->key) + act->i, 0, Tk - 1); break;
    case ACT_SELECT_CELL:
        s->query = clamp(act->i, 0, Tq - 1);
        s->key = clamp(act->j, 0, Tk - 1);
        break;
    case ACT_HOVER:
        s->hover_i = act->i >= 0 && act->i < Tq && act->j >= 0 && act->j < Tk ? act->i : -1;
        s->hover_j = s->hover_i >= 0 ? act->j : -1;
        break;
    default: return -1;
    }
    a->dirty = 1;
    return 0;
}

static int grid_action(AppState *a, const AppAction *act)
{
    const AttnFile *f = &a->imp->f;
    switch (act->kind) {
    case ACT_TOGGLE_GRID:
        a->grid = !a->grid;
        a->vs.hover_i = a->vs.hover_j = -1;
        a->grid_layer = a->imp_layer >= 0 ? a->imp_layer : a->grid_layer;
        a->grid_head = a->imp_head >= 0 ? a->imp_head : a->grid_head;
        app_status(a, 0, a->grid ? "every layer (rows) and head (columns): arrows move, Enter opens, G goes back"
                                 : "%s", a->imp->facts);
        break;
    case ACT_GRID_MOVE:
        a->grid = 1;
        a->grid_layer = clamp(a->grid_layer + act->i, 0, f->L - 1);
        a->grid_head = clamp(a->grid_head + act->j, 0, f->H - 1);
        app_status(a, 0, "layer %d of %d, head %d of %d (Enter opens it)", a->grid_layer + 1, f->L,
                   a->grid_head + 1, f->H);
        break;
    case ACT_GRID_OPEN:
        if (act->i >= 0 && act->j >= 0) {
            a->grid_layer = clamp(act->i, 0, f->L - 1);
            a->grid_head = clamp(act->j, 0, f->H - 1);
        }
        a->grid = 0;
        a->vs.hover_i = a->vs.hover_j = -1;
        repick(a, a->grid_layer, a->grid_head, 0);
        break;
    default:
        return -1;
    }
    a->dirty = 1;
    return 0;
}

/* Tokens first … last of the file's rows or columns, for the status bar. */
static void token_span(char **names, int first, int last, char *buf, size_t n)
{
    if (first == last)
        snprintf(buf, n, "\xE2\x80\x9C%.60s\xE2\x80\x9D", names[first]);
    else
        snprintf(buf, n, "%d\xE2\x80\x93%d (\xE2\x80\x9C%.30s\xE2\x80\x9D \xE2\x80\xA6 \xE2\x80\x9C%.30s\xE2\x80\x9D)",
                 first + 1, last + 1, names[first], names[last]);
}

/* The pointer over a cell (i, j) of a small map of the model view: that
 * row and column are marked in every map, their tokens named. */
static void grid_hover(AppState *a, int i, int j)
{
    const AttnMaps *t = &a->thumb_maps;
    if (i < 0 || j < 0 || i >= t->Tq || j >= t->Tk) {
        a->vs.hover_i = a->vs.hover_j = -1;
        a->dirty = 1;
        return;
    }
    if (i == a->vs.hover_i && j == a->vs.hover_j)
        return;
    a->vs.hover_i = i;
    a->vs.hover_j = j;
    const AttnFile *f = &a->imp->f;
    int bq = (f->Tq + t->Tq - 1) / t->Tq, bk = (f->Tk + t->Tk - 1) / t->Tk;
    int q1 = (i + 1) * bq - 1, k1 = (j + 1) * bk - 1;
    char qs[160], ks[160];
    token_span(a->imp->q_shown, i * bq, q1 < f->Tq ? q1 : f->Tq - 1, qs, sizeof qs);
    token_span(a->imp->k_shown, j * bk, k1 < f->Tk ? k1 : f->Tk - 1, ks, sizeof ks);
    app_status(a, 0, "query %s \xE2\x86\x92 key %s, marked in every layer and head", qs, ks);
    a->dirty = 1;
}

/* The sentence's actions that need a Model: refused, saying why. */
static int model_only(AppActionKind k)
{
    switch (k) {
    case ACT_TOGGLE_SCALE: case ACT_TOGGLE_MASK: case ACT_TOGGLE_POSENC: case ACT_TOGGLE_MODE:
    case ACT_STEP_HEADS: case ACT_TEMPERATURE: case ACT_STEP_REVEAL:
    case ACT_SENTENCE_STEP: case ACT_EDIT_TARGET: case ACT_EDIT_MOVE: case ACT_EDIT_CELL:
    case ACT_EDIT_FOCUS: case ACT_EDIT_TYPE: case ACT_NUDGE_CELL: case ACT_SET_CELL:
    case ACT_EDITOR_BUTTON: case ACT_DRAG_BEGIN: case ACT_DRAG: case ACT_UNDO: case ACT_REDO:
    case ACT_FOCUS_SENTENCE: case ACT_FOCUS_KEYS: case ACT_CYCLE_SCORE:
        return 1;
    default:
        return 0;
    }
}

int app_import_apply(AppState *a, const AppAction *act)
{
    int file_action = act->kind == ACT_CYCLE_LAYER || act->kind == ACT_TOGGLE_GRID ||
                      act->kind == ACT_TOGGLE_ROLLOUT || act->kind == ACT_GRID_MOVE ||
                      act->kind == ACT_GRID_OPEN || act->kind == ACT_TOGGLE_SPECIAL;
    if (!a->imp) {
        if (!file_action)
            return -1;
        app_status(a, 0, "no attention file is open (attnviz FILE.npz, Ctrl+O, or drop one)");
        return 0;
    }
    const AttnFile *f = &a->imp->f;
    switch (act->kind) {
    case ACT_CYCLE_LAYER:
        repick(a, cycle(a->imp_layer, f->L, act->i < 0 ? -1 : 1), a->imp_rollout ? -1 : a->imp_head,
               a->imp_rollout);
        return 0;
    case ACT_CYCLE_HEAD:
        if (a->imp_rollout) {
            app_status(a, 0, "the rollout averages the heads (O turns it off)");
            return 0;
        }
        repick(a, a->imp_layer, cycle(a->imp_head, f->H, act->i < 0 ? -1 : 1), 0);
        return 0;
    case ACT_TOGGLE_ROLLOUT:
        repick(a, a->imp_layer, a->imp_rollout ? 0 : -1, !a->imp_rollout);
        return 0;
    case ACT_CYCLE_MATRIX:
        if (!a->imp->has_scores) {
            app_status(a, 0, "this file holds one array (weights): no scores beside it");
            return 0;
        }
        a->imp->matrix = !a->imp->matrix;
        repick(a, a->imp_layer, a->imp_head, a->imp_rollout);
        return 0;
    case ACT_TOGGLE_SPECIAL:
        if (!a->imp->n_special) {
            app_status(a, 0, "no special tokens ([CLS], <s> \xE2\x80\xA6) in this file");
            return 0;
        }
        a->imp_hide_special = !a->imp_hide_special;
        repick(a, a->imp_layer, a->imp_head, a->imp_rollout);
        return 0;
    default:
        break;
    }
    if (act->kind == ACT_HOVER && a->grid) {
        grid_hover(a, act->i, act->j);
        return 0;
    }
    if (grid_action(a, act) == 0 || select_action(a, act) == 0)
        return 0;
    if (model_only(act->kind)) {
        if (act->kind != ACT_DRAG_END)
            app_status(a, 0, "an attention file has no sentence, weights or settings to change "
                             "(L, H, O, G pick what to show)");
        return 0;
    }
    return -1;
}

/* The controls strip for a file: layer, head, rollout, special tokens,
 * model view, and the controls that do not need a model. */
static void import_controls(AppState *a)
{
    const Imported *im = a->imp;
    char hb[48];
    for (int c = 0; c < CTL_COUNT; c++)
        a->imp_ctl_label[c] = NULL;
#define CTL(c, on, ...) (snprintf(a->imp_ctl[c], sizeof a->imp_ctl[c], __VA_ARGS__), \
                         a->imp_ctl_label[c] = a->imp_ctl[c], a->imp_ctl_on[c] = (unsigned char)(on))
    if (a->imp_layer < 0)
        CTL(CTL_MODE, 1, "[L] all %d layers", im->f.L);
    else
        CTL(CTL_MODE, 1, "[L] layer %d of %d", a->imp_layer + 1, im->f.L);
    attn_head_label(a->imp_rollout ? -1 : a->imp_head, im->f.H, hb, sizeof hb);
    CTL(CTL_HEAD, !a->imp_rollout, "[H] %s", hb);
    CTL(CTL_SCALE, a->imp_rollout, "[O] rollout");
    CTL(CTL_MASK, a->imp_hide_special, "[E] hide special tokens");
    CTL(CTL_POSENC, a->grid, "[G] every layer and head");
    if (im->has_scores)
        CTL(CTL_MATRIX, 1, "[R] %s", im->matrix ? "scores" : "weights");
    CTL(CTL_CMAP, 1, "[C] %s", colormap_name(a->vs.cmap));
    CTL(CTL_ALL, a->vs.all_lines, "[A] all queries");
    CTL(CTL_EXPORT, 0, "[^E] export PNG");
    CTL(CTL_HELP, a->vs.help, "[?] help");
#undef CTL
}

void app_import_view(AppState *a)
{
    Imported *im = a->imp;
    ViewState *s = &a->vs;
    view_state_set_model(s, NULL);
    s->map = s->weights = import_map(im, 1);
    s->maps_gen = a->imp_gen;
    s->heads = im->f.H;
    snprintf(s->title, sizeof s->title, "%s", im->title);
    snprintf(s->facts, sizeof s->facts, "%s", im->facts);
    s->q_special = im->q_special;
    s->k_special = im->k_special;
    s->grid = a->grid ? &a->thumb_maps : NULL;
    s->overview = a->grid ? NULL : &a->thumb_maps;
    /* the model view's selection, or in the overview the map shown */
    s->grid_layer = a->grid || a->imp_layer < 0 ? a->grid_layer : a->imp_layer;
    s->grid_head = a->grid || a->imp_head < 0 ? a->grid_head : a->imp_head;
    s->no_model = NO_MODEL;
    import_controls(a);
    s->ctl_labels = a->imp_ctl_label;
    s->ctl_on = a->imp_ctl_on;
}

void app_shown_size(const AppState *a, int *Tq, int *Tk)
{
    *Tq = a->imp ? a->imp->Tq : a->m->T;
    *Tk = a->imp ? a->imp->Tk : a->m->Tk; /* the second sentence's keys with two */
}

int app_import_save(AppState *a, const char *path)
{
    AttnSession sn;
    AttnErr err = {0};
    memset(&sn, 0, sizeof sn);
    if (!realpath(a->imp->f.name, sn.file))
        snprintf(sn.file, sizeof sn.file, "%s", a->imp->f.name);
    sn.layer = a->imp_layer;
    sn.head = a->imp_head;
    sn.rollout = a->imp_rollout;
    sn.hide_special = a->imp_hide_special;
    sn.grid = a->grid;
    sn.grid_layer = a->grid_layer;
    sn.grid_head = a->grid_head;
    sn.query = a->vs.query;
    sn.key = a->vs.key;
    if (attn_session_save(path, &sn, &err) < 0) {
        char buf[1200];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "not saved: %s (the old file is unchanged)", buf);
        return -1;
    }
    app_status(a, 0, "saved %s (the file %s, layer, head and view)", path, a->imp->title);
    return 0;
}

int app_import_open_session(AppState *a, const char *path)
{
    AttnSession sn;
    AttnErr err = {0};
    char buf[1200];
    Imported *im = malloc(sizeof *im);
    int rc = attn_session_load(&sn, path, &err);
    if (rc == 0 && im && import_open(im, sn.file, NULL, NULL, &err) == 0) {
        if (import_pick(im, sn.layer, sn.head, sn.rollout, sn.hide_special && im->n_special ? im->specials : NULL,
                         &err) < 0) {
            import_close(im);
            rc = -1;
        }
    } else {
        rc = -1;
    }
    if (rc < 0 || !im) {
        free(im);
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "cannot open: %s", buf);
        return -1;
    }
    if (app_import_set(a, im) < 0)
        return -1;
    a->imp_hide_special = sn.hide_special && im->n_special;
    a->grid = sn.grid;
    a->grid_layer = sn.grid_layer >= 0 && sn.grid_layer < im->f.L ? sn.grid_layer : 0;
    a->grid_head = sn.grid_head >= 0 && sn.grid_head < im->f.H ? sn.grid_head : 0;
    a->vs.query = sn.query >= 0 && sn.query < im->Tq ? sn.query : a->vs.query;
    a->vs.key = sn.key >= 0 && sn.key < im->Tk ? sn.key : -1;
    snprintf(a->session_path, sizeof a->session_path, "%s", path);
    app_status(a, 0, "opened %s: %s", path, im->facts);
    return 0;
}
