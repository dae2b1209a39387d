#define _DEFAULT_SOURCE
/* The attention-file source (issue 13): a real model's maps read from a
 * file, the head view of one map (L / H pick the layer and head, O the
 * rollout, E hides the special tokens), the model view of every layer and
 * head (G; arrows move, Enter opens), its sessions, its --print and
 * --export. No weights, no text. */
#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/file_source.h"
#include "attnviz/import.h"
#include "attnviz/source.h"
#include "../app_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char NO_MODEL[] =
    "An attention file from a model: no weights to edit and no steps to show here "
    "(the numbers are the file's).";

FileSource *file_source_of(const AppState *a)
{
    return a->kind == &source_file ? a->src : NULL;
}

static void fs_free(FileSource *fs)
{
    if (!fs)
        return;
    if (fs->imp) {
        import_close(fs->imp);
        free(fs->imp);
    }
    free(fs->thumbs);
    free(fs->thumb_labels);
    free(fs);
}

static void file_close(AppState *a)
{
    fs_free(a->src);
    a->src = NULL;
}

/* Every map, small, for the model view. */
static int make_thumbs(FileSource *fs)
{
    Imported *im = fs->imp;
    AttnErr err = {0};
    int tq, tk;
    /* small enough that every layer fits the window's height (12 layers:
     * 32 cells a side), never over 64 */
    int most = im->f.L > im->f.H / 2 ? im->f.L : im->f.H / 2;
    int side = 384 / (most > 0 ? most : 1);
    side = side > 64 ? 64 : side < 4 ? 4 : side;
    if (import_thumbs(im, side, &fs->thumbs, &tq, &tk, &err) < 0)
        return -ATTN_E_NOMEM;
    int n = tq > tk ? tq : tk;
    fs->thumb_labels = calloc((size_t)n + 1, sizeof *fs->thumb_labels);
    if (!fs->thumb_labels)
        return -ATTN_E_NOMEM;
    static char empty[] = "";
    for (int i = 0; i < n; i++)
        fs->thumb_labels[i] = empty;
    fs->thumb_maps = (AttnMaps){fs->thumbs, im->f.L, im->f.H, tq, tk,
                                (const char *const *)fs->thumb_labels,
                                (const char *const *)fs->thumb_labels, im->kind, 0, NULL};
    return 0;
}

static void say_pick(AppState *a)
{
    Imported *im = ((FileSource *)a->src)->imp;
    if (im->note[0])
        app_status(a, 0, "%s: %s", im->facts, im->note);
    else
        app_status(a, 0, "%s", im->facts);
}

int file_source_show(AppState *a, Imported *im)
{
    FileSource *fs = calloc(1, sizeof *fs);
    if (!fs) {
        import_close(im);
        free(im);
        app_status(a, 1, "out of memory");
        return -ATTN_E_NOMEM;
    }
    fs->imp = im;
    if (make_thumbs(fs) < 0) {
        fs_free(fs);
        app_status(a, 1, "out of memory");
        return -ATTN_E_NOMEM;
    }
    app_show_source(a, &source_file, fs);
    fs->layer = im->layer;
    fs->head = im->head;
    fs->rollout = im->rollout;
    fs->grid_layer = im->layer >= 0 ? im->layer : 0;
    fs->grid_head = im->head >= 0 ? im->head : 0;
    a->session_path[0] = '\0'; /* Ctrl+S asks where this file's session goes */
    a->vs.query = im->Tq > 1 ? 1 : 0;
    a->vs.key = -1;
    a->vs.hover_i = a->vs.hover_j = -1;
    a->vs.sentence_focus = 0;
    a->vs.edit_focus = 0;
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
    FileSource *fs = a->src;
    AttnErr err = {0};
    const char *drop = fs->hide_special && fs->imp->n_special ? fs->imp->specials : NULL;
    if (import_pick(fs->imp, layer, head, rollout, drop, &err) < 0) {
        app_status(a, 1, "%s", err.msg);
        return;
    }
    fs->layer = fs->imp->layer;
    fs->head = fs->imp->head;
    fs->rollout = rollout;
    fs->gen++;
    if (a->vs.query >= fs->imp->Tq)
        a->vs.query = fs->imp->Tq - 1;
    if (a->vs.key >= fs->imp->Tk)
        a->vs.key = fs->imp->Tk - 1;
    say_pick(a);
    a->dirty = 1;
}

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int grid_action(AppState *a, const AppAction *act)
{
    FileSource *fs = a->src;
    const AttnFile *f = &fs->imp->f;
    switch (act->kind) {
    case ACT_TOGGLE_GRID:
        fs->grid = !fs->grid;
        a->vs.hover_i = a->vs.hover_j = -1;
        fs->grid_layer = fs->layer >= 0 ? fs->layer : fs->grid_layer;
        fs->grid_head = fs->head >= 0 ? fs->head : fs->grid_head;
        app_status(a, 0, fs->grid ? "every layer (rows) and head (columns): arrows move, Enter opens, G goes back"
                                 : "%s", fs->imp->facts);
        break;
    case ACT_GRID_MOVE:
        fs->grid = 1;
        fs->grid_layer = clamp(fs->grid_layer + act->i, 0, f->L - 1);
        fs->grid_head = clamp(fs->grid_head + act->j, 0, f->H - 1);
        app_status(a, 0, "layer %d of %d, head %d of %d (Enter opens it)", fs->grid_layer + 1, f->L,
                   fs->grid_head + 1, f->H);
        break;
    case ACT_GRID_OPEN:
        if (act->i >= 0 && act->j >= 0) {
            fs->grid_layer = clamp(act->i, 0, f->L - 1);
            fs->grid_head = clamp(act->j, 0, f->H - 1);
        }
        fs->grid = 0;
        a->vs.hover_i = a->vs.hover_j = -1;
        repick(a, fs->grid_layer, fs->grid_head, 0);
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
    FileSource *fs = a->src;
    const AttnMaps *t = &fs->thumb_maps;
    if (i < 0 || j < 0 || i >= t->Tq || j >= t->Tk) {
        a->vs.hover_i = a->vs.hover_j = -1;
        a->dirty = 1;
        return;
    }
    if (i == a->vs.hover_i && j == a->vs.hover_j)
        return;
    a->vs.hover_i = i;
    a->vs.hover_j = j;
    const AttnFile *f = &fs->imp->f;
    int bq = (f->Tq + t->Tq - 1) / t->Tq, bk = (f->Tk + t->Tk - 1) / t->Tk;
    int q1 = (i + 1) * bq - 1, k1 = (j + 1) * bk - 1;
    char qs[160], ks[160];
    token_span(fs->imp->q_shown, i * bq, q1 < f->Tq ? q1 : f->Tq - 1, qs, sizeof qs);
    token_span(fs->imp->k_shown, j * bk, k1 < f->Tk ? k1 : f->Tk - 1, ks, sizeof ks);
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

static int file_apply(AppState *a, const AppAction *act)
{
    FileSource *fs = a->src;
    const AttnFile *f = &fs->imp->f;
    switch (act->kind) {
    case ACT_CYCLE_LAYER:
        repick(a, source_cycle(fs->layer, f->L, act->i < 0 ? -1 : 1), fs->rollout ? -1 : fs->head,
               fs->rollout);
        return 0;
    case ACT_CYCLE_HEAD:
        if (fs->rollout) {
            app_status(a, 0, "the rollout averages the heads (O turns it off)");
            return 0;
        }
        repick(a, fs->layer, source_cycle(fs->head, f->H, act->i < 0 ? -1 : 1), 0);
        return 0;
    case ACT_TOGGLE_ROLLOUT:
        repick(a, fs->layer, fs->rollout ? 0 : -1, !fs->rollout);
        return 0;
    case ACT_CYCLE_MATRIX:
        if (!fs->imp->has_scores) {
            app_status(a, 0, "this file holds one array (weights): no scores beside it");
            return 0;
        }
        fs->imp->matrix = !fs->imp->matrix;
        repick(a, fs->layer, fs->head, fs->rollout);
        return 0;
    case ACT_TOGGLE_SPECIAL:
        if (!fs->imp->n_special) {
            app_status(a, 0, "no special tokens ([CLS], <s> \xE2\x80\xA6) in this file");
            return 0;
        }
        fs->hide_special = !fs->hide_special;
        repick(a, fs->layer, fs->head, fs->rollout);
        return 0;
    default:
        break;
    }
    if (act->kind == ACT_HOVER && fs->grid) {
        grid_hover(a, act->i, act->j);
        return 0;
    }
    if (grid_action(a, act) == 0)
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
 * model view (the app adds those every source has). */
static void file_controls(AppState *a)
{
    FileSource *fs = a->src;
    const Imported *im = fs->imp;
    ViewState *s = &a->vs;
    AppAction *acts = a->ctl_act;
    char hb[48];
    s->n_ctl = 0;
    if (fs->layer < 0)
        source_ctl_add(s, acts, (AppAction){ACT_CYCLE_LAYER, 1, 0, 0.0f}, 1, 0, "", "[L] all %d layers", im->f.L);
    else
        source_ctl_add(s, acts, (AppAction){ACT_CYCLE_LAYER, 1, 0, 0.0f}, 1, 0, "", "[L] layer %d of %d",
                       fs->layer + 1, im->f.L);
    source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_ROLLOUT, 0, 0, 0.0f}, fs->rollout, 0, "", "[O] rollout");
    source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_SPECIAL, 0, 0, 0.0f}, fs->hide_special, 0, "",
                   "[E] hide special tokens");
    source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_GRID, 0, 0, 0.0f}, fs->grid, 0, "",
                   "[G] every layer and head");
    attn_head_label(fs->rollout ? -1 : fs->head, im->f.H, hb, sizeof hb);
    source_ctl_add(s, acts, (AppAction){ACT_CYCLE_HEAD, 1, 0, 0.0f}, !fs->rollout, 0, "", "[H] %s", hb);
    if (im->has_scores)
        source_ctl_add(s, acts, (AppAction){ACT_CYCLE_MATRIX, 1, 0, 0.0f}, 1, 0, "", "[R] %s",
                       im->matrix ? "scores" : "weights");
}

static void file_present(AppState *a)
{
    FileSource *fs = a->src;
    Imported *im = fs->imp;
    ViewState *s = &a->vs;
    view_state_set_model(s, NULL);
    s->map = s->weights = import_map(im, 1);
    s->maps_gen = fs->gen;
    s->heads = im->f.H;
    snprintf(s->title, sizeof s->title, "%s", im->title);
    snprintf(s->facts, sizeof s->facts, "%s", im->facts);
    s->q_special = im->q_special;
    s->k_special = im->k_special;
    s->grid = fs->grid ? &fs->thumb_maps : NULL;
    s->overview = fs->grid ? NULL : &fs->thumb_maps;
    /* the model view's selection, or in the overview the map shown */
    s->grid_layer = fs->grid || fs->layer < 0 ? fs->grid_layer : fs->layer;
    s->grid_head = fs->grid || fs->head < 0 ? fs->grid_head : fs->head;
    s->no_model = NO_MODEL;
    s->bar_label = "File";
    s->sentence = im->title;
    s->panel_title = s->map.kind == ATTN_MAP_WEIGHTS
                         ? "Attention weights from the file"
                         : "Values from the file (not softmax rows)   colours centred on 0";
    snprintf(s->status_facts, sizeof s->status_facts, "%.300s", s->title);
}

static void file_shown_size(const AppState *a, int *Tq, int *Tk)
{
    const FileSource *fs = a->src;
    *Tq = fs->imp->Tq;
    *Tk = fs->imp->Tk;
}

static const char *file_title(const AppState *a)
{
    const FileSource *fs = a->src;
    return fs->imp->title;
}

static int file_save(AppState *a, const char *path)
{
    FileSource *fs = a->src;
    AttnSession sn;
    AttnErr err = {0};
    memset(&sn, 0, sizeof sn);
    if (!realpath(fs->imp->f.name, sn.file))
        snprintf(sn.file, sizeof sn.file, "%s", fs->imp->f.name);
    sn.layer = fs->layer;
    sn.head = fs->head;
    sn.rollout = fs->rollout;
    sn.hide_special = fs->hide_special;
    sn.grid = fs->grid;
    sn.grid_layer = fs->grid_layer;
    sn.grid_head = fs->grid_head;
    sn.query = a->vs.query;
    sn.key = a->vs.key;
    if (attn_session_save(path, &sn, &err) < 0) {
        char buf[1200];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "not saved: %s (the old file is unchanged)", buf);
        return -1;
    }
    app_status(a, 0, "saved %s (the file %s, layer, head and view)", path, fs->imp->title);
    return 0;
}

/* A session of an attention file: the file, its map and view again. */
static int open_session(AppState *a, const char *path)
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
    if (file_source_show(a, im) < 0)
        return -1;
    FileSource *fs = a->src;
    fs->hide_special = sn.hide_special && im->n_special;
    fs->grid = sn.grid;
    fs->grid_layer = sn.grid_layer >= 0 && sn.grid_layer < im->f.L ? sn.grid_layer : 0;
    fs->grid_head = sn.grid_head >= 0 && sn.grid_head < im->f.H ? sn.grid_head : 0;
    a->vs.query = sn.query >= 0 && sn.query < im->Tq ? sn.query : a->vs.query;
    a->vs.key = sn.key >= 0 && sn.key < im->Tk ? sn.key : -1;
    snprintf(a->session_path, sizeof a->session_path, "%s", path);
    app_status(a, 0, "opened %s: %s", path, im->facts);
    return 0;
}

/* An attention file in the window; what is shown stays on error. */
static int open_attention(AppState *a, const char *path)
{
    AttnErr err = {0};
    char buf[1200];
    Imported *im = malloc(sizeof *im);
    if (!im || import_open(im, path, NULL, NULL, &err) < 0 || import_pick(im, 0, 0, 0, NULL, &err) < 0) {
        if (im && im->f.n_parts)
            import_close(im);
        free(im);
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "cannot open: %s", buf);
        return -1;
    }
    return file_source_show(a, im) < 0 ? -1 : 0;
}

static int file_accepts(const char *path)
{
    AttnPathKind k = attn_path_kind(path);
    return k == ATTN_PATH_SESSION || k == ATTN_PATH_FILE;
}

static int file_open(AppState *a, const char *path)
{
    return attn_path_kind(path) == ATTN_PATH_SESSION ? open_session(a, path) : open_attention(a, path);
}

/* The command line: the file with --tokens and --key-tokens, the map that
 * --layer, --head, --rollout, --matrix and --drop pick. */
static int file_cli_open(const Options *o, const char *path, void **opened, AttnErr *err)
{
    Imported *im = malloc(sizeof *im);
    *opened = NULL;
    if (!im)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    if (import_open(im, path, o->tokens, o->key_tokens, err) < 0) {
        free(im);
        return -err->code;
    }
    /* the rollout goes through the last layer unless --layer says */
    int layer = o->rollout && !o->layer_set ? -1 : o->layer, rc = 0;
    if (o->matrix_set && o->matrix != 0) { /* --matrix scores: the file's own scores */
        if (o->matrix != 1 || !im->has_scores)
            rc = attn_err_set(err, ATTN_E_RANGE, path, 0, o->matrix != 1
                              ? "an attention file has weights (and maybe scores), no logits"
                              : "no scores beside the attention (scores.npy in an .npz, the tensor "
                                "\"scores\" in a .safetensors)");
        im->matrix = 1;
    }
    if (rc == 0)
        rc = import_pick(im, layer, o->head, o->rollout, o->drop, err);
    if (rc == 0 && im->note[0])
        fprintf(stderr, "attnviz: note: %s: %s\n", im->title, im->note);
    if (rc < 0) {
        import_close(im);
        free(im);
        return rc;
    }
    *opened = im;
    return 0;
}

static int file_cli_write(void *opened, const Options *o, AttnErr *err)
{
    return import_write(opened, o, err);
}

static int file_show(AppState *a, void *opened)
{
    return file_source_show(a, opened);
}

static void file_cli_free(void *opened)
{
    if (opened) {
        import_close(opened);
        free(opened);
    }
}

const SourceKind source_file = {
    .name = "attention file",
    .caps = SOURCE_LAYERS | SOURCE_HELP_FILE,
    .accepts = file_accepts,
    .open = file_open,
    .close = file_close,
    .apply = file_apply,
    .present = file_present,
    .controls = file_controls,
    .shown_size = file_shown_size,
    .save = file_save,
    .title = file_title,
    .cli_open = file_cli_open,
    .cli_write = file_cli_write,
    .show = file_show,
    .cli_free = file_cli_free,
};
