#define _DEFAULT_SOURCE
/* Layers × heads of maps shown as an attention file shows them, for any
 * source that has them (source.h's maps): the head view of one map (L / H
 * pick the layer and head, O the rollout, R the scores, E hides the special
 * tokens), the model view of every layer and head (G; arrows move, Enter
 * opens), their controls, their sessions and their compare snapshot. The
 * numbers are an Imported (import.h): a file's, or a source's own buffer. */
#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/import.h"
#include "attnviz/maps_shown.h"
#include "attnviz/model.h"
#include "attnviz/source.h"
#include "app_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small enough that every layer fits the window's height (12 layers: 32
 * cells a side), never over 64. */
int maps_thumb_side(int L, int H)
{
    int most = L > H / 2 ? L : H / 2;
    int side = 384 / (most > 0 ? most : 1);
    return side > 64 ? 64 : side < 4 ? 4 : side;
}

/* Every map, small, for the model view. */
static int make_thumbs(MapsShown *fs)
{
    Imported *im = fs->imp;
    AttnErr err = {0};
    int tq, tk;
    if (import_thumbs(im, maps_thumb_side(im->f.L, im->f.H), &fs->thumbs, &tq, &tk, &err) < 0)
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
                                (const char *const *)fs->thumb_labels,
                                import_shown_file(im) == &im->nf ? ATTN_MAP_NORMS : im->kind, 0, NULL};
    return 0;
}

int maps_shown_init(MapsShown *fs, Imported *im)
{
    memset(fs, 0, sizeof *fs);
    fs->imp = im;
    fs->gen = model_next_generation();
    if (make_thumbs(fs) < 0) {
        maps_shown_free(fs);
        return -ATTN_E_NOMEM;
    }
    fs->layer = im->layer;
    fs->head = im->head;
    fs->rollout = im->rollout;
    fs->grid_layer = im->layer >= 0 ? im->layer : 0;
    fs->grid_head = im->head >= 0 ? im->head : 0;
    fs->score = im->f.cross ? HEAD_SCORE_ENTROPY : HEAD_SCORE_INDUCTION; /* one the maps have */
    fs->score_self = -1;
    return 0;
}

void maps_shown_free(MapsShown *fs)
{
    if (fs->imp) {
        import_close(fs->imp);
        free(fs->imp);
    }
    free(fs->thumbs);
    free(fs->thumb_labels);
    maps_heads_free(fs);
    memset(fs, 0, sizeof *fs);
}

void maps_shown_start(AppState *a, const char *name)
{
    Imported *im = a->kind->maps(a)->imp;
    a->session_path[0] = '\0'; /* Ctrl+S asks where this session goes */
    a->vs.query = im->Tq > 1 ? 1 : 0;
    a->vs.key = -1;
    a->vs.hover_i = a->vs.hover_j = -1;
    a->vs.sentence_focus = 0;
    a->vs.edit_focus = 0;
    app_status(a, 0, "%s: %d layer%s \xC3\x97 %d head%s, %d\xC3\x97%d \xC2\xB7 L, H: layer, head \xC2\xB7 "
               "G: every layer and head \xC2\xB7 O: rollout \xC2\xB7 E: special tokens%s%s", name, im->f.L,
               im->f.L == 1 ? "" : "s", im->f.H, im->f.H == 1 ? "" : "s", im->f.Tq, im->f.Tk,
               im->note[0] ? " \xC2\xB7 " : "", im->note);
    a->dirty = 1;
}

void maps_shown_size(const MapsShown *fs, int *Tq, int *Tk)
{
    *Tq = fs->imp->Tq;
    *Tk = fs->imp->Tk;
}

static void say_pick(AppState *a)
{
    Imported *im = a->kind->maps(a)->imp;
    if (im->note[0])
        app_status(a, 0, "%s: %s", im->facts, im->note);
    else
        app_status(a, 0, "%s", im->facts);
}

/* Pick the map again for the layer, head and rollout asked for; the
 * status bar names it unless quiet (or says why it cannot). */
/* The file's token (index into q_shown) shown at row q, or -1. */
static int file_token(const Imported *im, int q)
{
    if (q < 0 || q >= im->Tq)
        return -1;
    for (int t = 0; t < im->f.Tq; t++)
        if (im->q_lab[q] == im->q_shown[t])
            return t;
    return -1;
}

/* The row that shows the file's token t, or the first kept after it (the
 * last row when none is): dropping tokens keeps the selection on its token. */
static int row_of_token(const Imported *im, int t)
{
    for (int q = 0; q < im->Tq; q++)
        if (file_token(im, q) >= t)
            return q;
    return im->Tq - 1;
}

static void pick(AppState *a, int layer, int head, int rollout, int quiet)
{
    MapsShown *fs = a->kind->maps(a);
    AttnErr err = {0};
    const char *drop = fs->hide_special && fs->imp->n_special ? fs->imp->specials : NULL;
    if (import_pick(fs->imp, layer, head, rollout, drop, &err) < 0) {
        app_status(a, 1, "%s", err.msg);
        return;
    }
    fs->layer = fs->imp->layer;
    fs->head = fs->imp->head;
    fs->rollout = rollout;
    fs->gen = model_next_generation();
    if (a->vs.query >= fs->imp->Tq)
        a->vs.query = fs->imp->Tq - 1;
    if (a->vs.key >= fs->imp->Tk)
        a->vs.key = fs->imp->Tk - 1;
    if (!quiet)
        say_pick(a);
    a->dirty = 1;
}

/* The same file picked again: the selected query stays on its token. */
static void repick(AppState *a, int layer, int head, int rollout)
{
    const Imported *im = a->kind->maps(a)->imp;
    int tok = file_token(im, a->vs.query);
    pick(a, layer, head, rollout, 0);
    if (tok >= 0)
        a->vs.query = row_of_token(im, tok);
}

/* What R shows after m's matrix (dir 1) or before it (-1): weights, the
 * scores (a file's), the norms (a model's), those im has. */
static int next_matrix(const Imported *im, int dir)
{
    static const int order[] = {0, 1, 3};
    int k = im->matrix == 1 ? 1 : im->matrix == 3 ? 2 : 0;
    for (int n = 0; n < 3; n++) {
        k = (k + 3 + dir) % 3;
        if (k == 0 || (k == 1 && im->has_scores) || (k == 2 && im->has_norms))
            return order[k];
    }
    return 0;
}

/* Show matrix: the map picked again, the model view's thumbnails and the
 * head scores made from it (the norms' are theirs, not the weights'). */
static void set_matrix(AppState *a, MapsShown *fs, int matrix)
{
    if (fs->imp->matrix == matrix)
        return;
    fs->imp->matrix = matrix;
    repick(a, fs->layer, fs->head, fs->rollout);
    free(fs->thumbs);
    free(fs->thumb_labels);
    fs->thumbs = NULL;
    fs->thumb_labels = NULL;
    if (make_thumbs(fs) < 0)
        app_status(a, 1, "out of memory");
    maps_heads_forget_scores(fs);
    fs->gen = model_next_generation();
    a->dirty = 1;
}

int maps_shown_replace(AppState *a, Imported *im)
{
    MapsShown *ms = a->kind->maps(a), now;
    if (ms->imp && ms->imp->matrix == 3 && im->has_norms) /* the norms stay shown */
        im->matrix = 3;
    if (maps_shown_init(&now, im) < 0)
        return -ATTN_E_NOMEM;
    int L = im->f.L, H = im->f.H;
    now.grid = ms->grid;
    now.hide_special = ms->hide_special;
    now.grid_layer = ms->grid_layer < L ? ms->grid_layer : L - 1;
    now.grid_head = ms->grid_head < H ? ms->grid_head : H - 1;
    now.gen = model_next_generation();
    maps_heads_keep(&now, ms);
    int layer = ms->layer < L ? ms->layer : L - 1, head = ms->head < H ? ms->head : H - 1, rollout = ms->rollout;
    maps_shown_free(ms);
    *ms = now;
    if (im->f.Tq > 0 && im->f.Tk > 0)
        pick(a, layer, head, rollout, 1);
    if (a->vs.query < 0 && im->Tq > 0)
        a->vs.query = 0;
    a->dirty = 1;
    return 0;
}

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int grid_action(AppState *a, const AppAction *act)
{
    MapsShown *fs = a->kind->maps(a);
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
    MapsShown *fs = a->kind->maps(a);
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

int maps_shown_takes(AppActionKind k)
{
    return k == ACT_CYCLE_LAYER || k == ACT_CYCLE_HEAD || k == ACT_TOGGLE_ROLLOUT || k == ACT_CYCLE_MATRIX ||
           k == ACT_TOGGLE_SPECIAL || k == ACT_TOGGLE_GRID || k == ACT_GRID_MOVE || k == ACT_GRID_OPEN ||
           maps_heads_takes(k);
}

int maps_shown_apply(AppState *a, const AppAction *act)
{
    MapsShown *fs = a->kind->maps(a);
    const AttnFile *f = &fs->imp->f;
    if (maps_heads_apply(a, act) == 0)
        return 0;
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
        if (!fs->imp->has_scores && !fs->imp->has_norms) {
            app_status(a, 0, "only weights here: no scores or norms beside them");
            return 0;
        }
        set_matrix(a, fs, next_matrix(fs->imp, act->i < 0 ? -1 : 1));
        say_pick(a);
        return 0;
    case ACT_TOGGLE_SPECIAL:
        if (!fs->imp->n_special) {
            app_status(a, 0, "no special tokens ([CLS], <s> \xE2\x80\xA6) here");
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
    return grid_action(a, act);
}


void maps_shown_controls(AppState *a)
{
    MapsShown *fs = a->kind->maps(a);
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
    if (im->has_scores || im->has_norms)
        source_ctl_add(s, acts, (AppAction){ACT_CYCLE_MATRIX, 1, 0, 0.0f}, 1, 0, "", "[R] %s",
                       im->matrix == 1 ? "scores" : im->matrix == 3 ? "norms" : "weights");
}

void maps_shown_present(AppState *a, const char *no_panels, const char *what)
{
    MapsShown *fs = a->kind->maps(a);
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
    s->no_model = no_panels;
    snprintf(fs->panel_title, sizeof fs->panel_title, s->map.kind == ATTN_MAP_WEIGHTS ? "Attention weights %s"
             : s->map.kind == ATTN_MAP_NORMS /* Kobayashi et al. 2020 */
                 ? "Norms %s  \xCE\xB1 \xC2\xB7 \xE2\x80\x96v W\xE2\x82\x92\xE2\x80\x96 (rows do not sum to 1)   colours 0 to the map's max"
                 : "Values %s (not softmax rows)   colours centred on 0", what);
    s->panel_title = fs->panel_title;
    snprintf(s->status_facts, sizeof s->status_facts, "%.300s", s->title);
    maps_heads_present(a);
}

int maps_shown_save(AppState *a, const char *source_path, const char *text, const char *path)
{
    MapsShown *fs = a->kind->maps(a);
    static AttnSession sn; /* 36 KB: not on the stack */
    AttnErr err = {0};
    memset(&sn, 0, sizeof sn);
    if (!realpath(source_path, sn.file))
        snprintf(sn.file, sizeof sn.file, "%s", source_path);
    sn.layer = fs->layer;
    sn.head = fs->head;
    sn.rollout = fs->rollout;
    sn.hide_special = fs->hide_special;
    sn.grid = fs->grid;
    sn.grid_layer = fs->grid_layer;
    sn.grid_head = fs->grid_head;
    sn.query = a->vs.query;
    sn.key = a->vs.key;
    if (text && strlen(text) < sizeof sn.text) {
        sn.has_text = 1;
        snprintf(sn.text, sizeof sn.text, "%s", text);
    }
    if (fs->probe_ids && fs->probe_T > 0 && fs->probe_T <= (int)(sizeof sn.probe / sizeof sn.probe[0])) {
        sn.n_probe = fs->probe_T; /* the probe's tokens: the same run again */
        memcpy(sn.probe, fs->probe_ids, sizeof *sn.probe * (size_t)fs->probe_T);
        sn.probe_n = fs->probe_n;
        sn.probe_seed = (double)fs->probe_seed;
    }
    sn.matrix = fs->imp->matrix;
    maps_heads_session_of(fs, &sn);
    if (a->kind->session_out)
        a->kind->session_out(a, &sn);
    sn.has_view = 1; /* the same screen again: colours, theme, size, lines */
    sn.cmap = (int)a->vs.cmap;
    sn.cscale = (int)a->vs.cscale;
    sn.all_lines = a->vs.all_lines;
    sn.dark = a->vs.dark;
    sn.ui_scale = a->ui_scale;
    sn.lines_top = a->vs.lines_top;
    sn.side = (int)a->vs.side;
    if (attn_session_save(path, &sn, &err) < 0) {
        char buf[1200];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "not saved: %s (the old file is unchanged)", buf);
        return -1;
    }
    app_status(a, 0, "saved %s (the file %s, layer, head and view)", path, fs->imp->title);
    return 0;
}

/* The window's view of a session (the colours, theme, interface size and
 * lines, the side area's tab), as a sentence's session gives them. */
static void session_view_apply(AppState *a, const AttnSession *sn)
{
    a->vs.cmap = sn->cmap >= 0 && sn->cmap < CMAP_SEQUENTIAL_COUNT ? (ColormapId)sn->cmap : CMAP_VIRIDIS;
    a->vs.cscale = sn->cscale >= 0 && sn->cscale < CSCALE_COUNT ? (ColorScaleMode)sn->cscale : CSCALE_FIXED;
    a->vs.all_lines = sn->all_lines;
    a->vs.dark = sn->dark;
    a->ui_scale = sn->ui_scale >= 0.5f && sn->ui_scale <= 3.0f ? sn->ui_scale : 1.0f;
    a->vs.lines_top = sn->lines_top;
    a->vs.side = sn->side >= 0 && sn->side < SIDE_COUNT ? (SidePanel)sn->side : a->vs.side;
}

/* The session's map and view on the source just shown (its file opened). */
static void session_apply(AppState *a, const AttnSession *sn, const char *path)
{
    MapsShown *fs = a->kind->maps(a);
    Imported *im = fs->imp;
    fs->hide_special = sn->hide_special && im->n_special;
    set_matrix(a, fs, sn->matrix == 1 && im->has_scores ? 1 : sn->matrix == 3 && im->has_norms ? 3 : 0);
    repick(a, sn->layer, sn->head, sn->rollout);
    maps_heads_session_apply(fs, sn);
    if (sn->has_view)
        session_view_apply(a, sn);
    fs->grid = sn->grid;
    fs->grid_layer = sn->grid_layer >= 0 && sn->grid_layer < im->f.L ? sn->grid_layer : 0;
    fs->grid_head = sn->grid_head >= 0 && sn->grid_head < im->f.H ? sn->grid_head : 0;
    a->vs.query = sn->query >= 0 && sn->query < im->Tq ? sn->query : a->vs.query;
    a->vs.key = sn->key >= 0 && sn->key < im->Tk ? sn->key : -1;
    snprintf(a->session_path, sizeof a->session_path, "%s", path);
    app_status(a, 0, "opened %s: %s", path, im->facts);
    if (a->kind->session_in)
        a->kind->session_in(a, sn);
    if (sn->n_probe > 0 && maps_probe_show(a, sn->probe, sn->n_probe, sn->probe_n, (uint64_t)sn->probe_seed) < 0)
        app_status(a, 1, "opened %s, but not its induction probe (%s has no probe of %d tokens)", path,
                   sn->file, sn->n_probe);
}

/* The bar's text back as it was before a session's text was put there
 * (before: NULL, nothing to do). */
static void text_back(AppState *a, const char *before)
{
    if (before && app_text_reserve(a, strlen(before)) == 0) {
        a->text_len = strlen(before);
        memcpy(a->text, before, a->text_len + 1);
        a->vs.cursor = (int)a->text_len;
    }
}

/* A session whose source opens on its own thread (a model: app_opening),
 * waiting for it. */
typedef struct SessionWait {
    AttnSession sn;
    char path[4096];
    char *before;        /* the bar's text before the session's, or NULL */
    char *text;          /* the session's text, as put in the bar */
} SessionWait;

static void session_wait_then(AppState *a, void *ctx, int rc)
{
    SessionWait *w = ctx;
    if (rc == 0 && a->kind->maps)
        session_apply(a, &w->sn, w->path);
    else if (rc == -1 && w->text && a->text && strcmp(a->text, w->text) == 0) /* not typed over */
        text_back(a, w->before);
    free(w->before);
    free(w->text);
    free(w);
}

/* A session of a source of layers × heads: the source its "file" names
 * (through the sources' list), then its map and view again (once it is
 * shown, when it opens on its own thread). */
int maps_session_open(AppState *a, const char *path)
{
    static AttnSession sn; /* 36 KB: not on the stack (the UI thread's alone) */
    AttnErr err = {0};
    char buf[1200];
    if (attn_session_load(&sn, path, &err) < 0) {
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "cannot open: %s", buf);
        return -1;
    }
    const SourceKind *k = source_for_path(sn.file);
    if (!k || !k->maps) {
        app_status(a, 1, "cannot open: %s: %s is not something attnviz opens", path, sn.file);
        return -1;
    }
    /* a source that takes text opens on the session's (the bar's own back
     * when it cannot open) */
    char *before = sn.has_text && k->set_text ? strdup(a->text ? a->text : "") : NULL;
    if (before) {
        size_t n = strlen(sn.text);
        if (app_text_reserve(a, n) == 0) {
            memcpy(a->text, sn.text, n + 1);
            a->text_len = n;
            a->vs.cursor = (int)n;
        }
    }
    if (k->open(a, sn.file) < 0) {
        text_back(a, before);
        free(before);
        return -1;
    }
    if (app_opening(a)) { /* the rest once it is shown */
        SessionWait *w = malloc(sizeof *w);
        if (!w || !(w->text = strdup(a->text ? a->text : ""))) {
            free(w);
            free(before);
            app_status(a, 1, "cannot open %s: out of memory", path);
            return -1;
        }
        w->sn = sn;
        snprintf(w->path, sizeof w->path, "%s", path);
        w->before = before;
        app_open_then(a, session_wait_then, w);
        return 0;
    }
    free(before);
    session_apply(a, &sn, path);
    return 0;
}


void maps_session_flags(AppState *a, const Options *o)
{
    if (!o || !a->kind->maps)
        return;
    MapsShown *fs = a->kind->maps(a);
    if (o->layer_set || o->head_set || o->rollout)
        repick(a, o->layer_set ? o->layer : fs->layer, o->head_set ? o->head : fs->head, o->rollout || fs->rollout);
    if (o->query >= fs->imp->Tq)
        app_status(a, 1, "--query %d: the text has %d tokens", o->query + 1, fs->imp->Tq);
    else if (o->query >= 0)
        a->vs.query = o->query;
    int cmap = o->colormap ? colormap_from_name(o->colormap) : -1;
    if (cmap >= 0)
        a->vs.cmap = (ColormapId)cmap;
    if (o->color_scale_set)
        a->vs.cscale = (ColorScaleMode)o->color_scale;
    if (o->theme_set)
        a->vs.dark = o->theme_dark;
    if (o->all_lines)
        a->vs.all_lines = 1;
    a->dirty = 1;
}

/* ---- the compare view -------------------------------------------------------------------- */

typedef struct MapsSnap {
    char title[300];
    int layer, head, rollout, hide_special;
    AttnMapKind kind;
} MapsSnap;

static void snap_now(const AppState *a, MapsSnap *c)
{
    const MapsShown *fs = a->kind->maps(a);
    memset(c, 0, sizeof *c);
    snprintf(c->title, sizeof c->title, "%s", fs->imp->title);
    c->layer = fs->layer;
    c->head = fs->rollout ? -1 : fs->head;
    c->rollout = fs->rollout;
    c->hide_special = fs->hide_special;
    c->kind = fs->imp->kind;
}

void *maps_shown_snap(const AppState *a)
{
    MapsSnap *c = malloc(sizeof *c);
    if (c)
        snap_now(a, c);
    return c;
}

void maps_shown_snap_free(void *snap)
{
    free(snap);
}

static void layer_word(int layer, char *buf, size_t n)
{
    if (layer < 0)
        snprintf(buf, n, "all layers");
    else
        snprintf(buf, n, "layer %d", layer + 1);
}

void maps_shown_snap_diff(const AppState *a, const void *ref, const AttnMap *map, SourceDiffs *d, char *base,
                          size_t n)
{
    const MapsSnap *r = ref;
    MapsSnap c;
    char x[80], y[80];
    (void)map;
    snap_now(a, &c);
    if (strcmp(r->title, c.title) != 0)
        source_diff_vs(d, r->title, c.title);
    if (r->kind != c.kind)
        source_diff_vs(d, attn_map_kind_name(r->kind), attn_map_kind_name(c.kind));
    if (r->layer != c.layer) {
        layer_word(r->layer, x, sizeof x);
        layer_word(c.layer, y, sizeof y);
        source_diff_vs(d, x, y);
    }
    if (r->rollout != c.rollout)
        source_diff_switch(d, "rollout", r->rollout, c.rollout);
    else if (r->head != c.head) {
        source_head_word(r->head, x, sizeof x);
        source_head_word(c.head, y, sizeof y);
        source_diff_vs(d, x, y);
    }
    if (r->hide_special != c.hide_special)
        source_diff_add(d, r->hide_special ? "special tokens hidden vs shown" : "special tokens shown vs hidden",
                        r->hide_special ? "special tokens hidden" : "special tokens shown",
                        c.hide_special ? "special tokens hidden" : "special tokens shown");
    layer_word(r->layer, x, sizeof x);
    source_head_word(r->head, y, sizeof y);
    if (r->rollout)
        snprintf(base, n, "rollout through %s", x);
    else
        snprintf(base, n, "%s, %s, %s", attn_map_kind_name(r->kind), x, y);
}
