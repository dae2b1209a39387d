/* The sentence source: text typed in the bar (and a second sentence for
 * cross-attention) through the toy model's embedding table and attention,
 * with weights to edit (undo, redo), steps to show, teach mode, sessions
 * and sentences files. Its state is the app's Model (AppState.m), the
 * bars' text and the undo list. */
#include "attnviz/app.h"
#include "attnviz/app_state.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/source.h"
#include "../app_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* sentence_compare.c: the compare view's snapshot of what made a map. */
void *sentence_snap(const AppState *a);
void sentence_snap_free(void *snap);
void sentence_snap_diff(const AppState *a, const void *ref, const AttnMap *map, SourceDiffs *d, char *base,
                        size_t n);
/* sentence_cli.c: the command line's sentence (opened: a SentenceCli). */
int sentence_cli_open(const Options *o, const char *path, void **opened, AttnErr *err);
int sentence_cli_write(void *opened, const Options *o, AttnErr *err);
void sentence_cli_free(void *opened);

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

/* No edits the class cannot see: the editor's keys need it on screen. */
static int editor_shown(AppState *a)
{
    if (a->view && a->layout.editor.w == 0 && a->layout.side_tab[SIDE_EDITOR].w > 0) {
        a->vs.side = SIDE_EDITOR; /* a tab of the side area: shown from the next frame */
        a->dirty = 1;
        return 1;
    }
    if (a->view && a->layout.editor.w == 0) {
        app_status(a, 1, "the weight editor needs a wider window (Ctrl+Minus makes the interface smaller)");
        a->dirty = 1;
        return 0;
    }
    return 1;
}

static void set_heads(AppState *a, int h)
{
    int d = a->m->d;
    if (h < 1 || h > d || h > ATTN_MAX_HEADS) {
        app_status(a, 1, "%d heads: must be between 1 and %d", h, d < ATTN_MAX_HEADS ? d : ATTN_MAX_HEADS);
        return;
    }
    undo_push(a);
    int h0 = a->m->params.h;
    if (model_split_heads(a->m, h) < 0) {
        app_status(a, 1, "%d heads do not divide d = %d", h, d);
        return;
    }
    a->vs.head = 0;
    app_status(a, 0, "%d head%s, dk = %d: the same Wq, Wk, Wv (d \xC3\x97 d) split into %d, Wo kept "
               "(Ctrl+Z: back to %d)", h, h == 1 ? "" : "s", d / h, h, h0);
    app_recompute(a);
}

/* Next (dir 1) or previous number of heads that divides d. */
static void step_heads(AppState *a, int dir)
{
    int d = a->m->d, h = a->m->params.h;
    for (int k = h + dir; k >= 1 && k <= d && k <= ATTN_MAX_HEADS; k += dir)
        if (d % k == 0) {
            set_heads(a, k);
            return;
        }
    app_status(a, 0, "already at %d head%s", h, h == 1 ? "" : "s");
}

static void cycle_head(AppState *a, int dir)
{
    int h = a->m->res.h;
    if (h <= 1) {
        app_status(a, 0, "one head: press ] for more heads");
        return;
    }
    a->vs.head = source_cycle(a->vs.head, h, dir); /* 0, 1, …, h − 1, the average */
    a->dirty = 1;
}

/* τ's steps: round numbers about ×1.25 apart, 1 among them, so that n steps
 * up and n down come back to exactly where they started. */
static const float TEMP_GRID[] = {0.05f, 0.06f, 0.08f, 0.1f, 0.12f, 0.15f, 0.2f, 0.25f, 0.3f,
                                  0.4f,  0.5f,  0.6f,  0.8f, 1.0f,  1.25f, 1.5f, 2.0f,  2.5f,
                                  3.0f,  4.0f,  5.0f,  6.0f, 8.0f,  10.0f, 12.0f, 15.0f, 20.0f};
#define N_TEMP ((int)(sizeof TEMP_GRID / sizeof TEMP_GRID[0]))

/* dir > 0: the next step of the grid above τ, dir < 0: below (a τ off the
 * grid, from --temperature or a session, goes to its neighbour); dir 0:
 * back to 1. */
static void step_temperature(AppState *a, int dir)
{
    float t = a->m->cfg.temperature, next = 1.0f;
    if (dir > 0) {
        next = TEMP_GRID[N_TEMP - 1];
        for (int k = N_TEMP - 1; k >= 0 && TEMP_GRID[k] > t; k--)
            next = TEMP_GRID[k];
    } else if (dir < 0) {
        next = TEMP_GRID[0];
        for (int k = 0; k < N_TEMP && TEMP_GRID[k] < t; k++)
            next = TEMP_GRID[k];
    }
    if (next == t)
        return;
    a->m->cfg.temperature = next;
    app_recompute(a);
}

static void toggle_mode(AppState *a)
{
    AttnConfig *cfg = &a->m->cfg;
    cfg->mode = cfg->mode == ATTN_MODE_BASIC ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
    app_status(a, 0, cfg->mode == ATTN_MODE_BASIC ? "basic self-attention: Q = K = V = X"
                                                  : "learned: Q = X\xC2\xB7Wq, K = X\xC2\xB7Wk, V = X\xC2\xB7Wv");
    app_recompute(a);
}

static void toggle(AppState *a, int *flag)
{
    *flag = !*flag;
    app_recompute(a);
}

/* M: the mask hides later keys of the same sentence; with two sentences
 * there is no "later", so it stays off and says why. */
static void toggle_mask(AppState *a)
{
    if (a->m->cross) {
        app_status(a, 0, "the causal mask applies to self-attention only: clear the second sentence "
                         "to use it");
        return;
    }
    toggle(a, &a->m->cfg.causal);
}

/* S: the 1/√dk factor belongs to the dot product (cosine lies in [−1, 1],
 * additive's size is v's). */
static void toggle_scale(AppState *a)
{
    if (a->m->cfg.score != ATTN_SCORE_DOT) {
        app_status(a, 0, "the 1/\xE2\x88\x9A" "dk scaling applies to the dot score only "
                         "(F: score function, now %s)", attn_score_name(a->m->cfg.score));
        return;
    }
    toggle(a, &a->m->cfg.scale);
}

/* F / Shift+F: dot → cosine → additive, with what each means. */
static void cycle_score(AppState *a, int dir)
{
    AttnConfig *cfg = &a->m->cfg;
    cfg->score = (cfg->score + (dir < 0 ? ATTN_SCORE_COUNT - 1 : 1)) % ATTN_SCORE_COUNT;
    switch (cfg->score) {
    case ATTN_SCORE_COSINE:
        app_status(a, 0, "cosine: q\xC2\xB7k / (\xE2\x80\x96q\xE2\x80\x96 \xE2\x80\x96k\xE2\x80\x96). "
                         "cosine scores lie in [\xE2\x88\x92" "1, 1]: try \xCF\x84 \xE2\x89\x88 0.1 (Shift+T)");
        break;
    case ATTN_SCORE_ADDITIVE:
        app_status(a, 0, "additive (Bahdanau): v\xE1\xB5\x80 tanh(q + k); v is editable in the "
                         "editor's tab 6");
        break;
    default: app_status(a, 0, "dot product: q\xC2\xB7k (S scales it by 1/\xE2\x88\x9A" "dk)"); break;
    }
    app_recompute(a);
}

static void sentence_step(AppState *a, int dir)
{
    if (!a->sentences || a->sentences->n == 0) {
        app_status(a, 0, "no sentences file loaded");
        return;
    }
    int n = a->sentences->n;
    a->sentence_idx = ((a->sentence_idx + dir) % n + n) % n;
    /* a pair's second sentence goes into the second bar ("" clears it) */
    const char *keys = a->sentences->keys ? a->sentences->keys[a->sentence_idx] : NULL;
    if (model_set_keys(a->m, keys ? keys : "", keys ? strlen(keys) : 0) < 0)
        app_status(a, 1, "out of memory");
    app_set_sentence(a, a->sentences->text[a->sentence_idx]);
    /* with the whole folder: the file, and the sentence's place in it */
    const SentenceList *sl = a->sentences;
    int k = a->sentence_idx, first = k, count = 0;
    while (sl->src && first > 0 && strcmp(sl->src[first - 1], sl->src[k]) == 0)
        first--;
    while (sl->src && first + count < n && strcmp(sl->src[first + count], sl->src[k]) == 0)
        count++;
    if (sl->src)
        app_status(a, 0, "%s: sentence %d of %d%s", sl->src[k], k - first + 1, count,
                   a->m->cross ? " (a pair: keys in the second bar)" : "");
    else
        app_status(a, 0, "sentence %d of %d%s", k + 1, n,
                   a->m->cross ? " (a pair: keys in the second bar)" : "");
}

static void step_reveal(AppState *a, int dir)
{
    int r = a->vs.step_reveal;
    a->vs.step_reveal = dir > 0 ? (r >= 4 ? 1 : r + 1) : (r > 1 ? r - 1 : 1);
    a->dirty = 1;
}

static void edit_target(AppState *a, int target, int focus)
{
    if (target < 0 || target >= EDIT_COUNT || !editor_shown(a))
        return;
    if (target == EDIT_V && a->m->cfg.score != ATTN_SCORE_ADDITIVE)
        app_status(a, 0, "v is used by the additive score only (F cycles the score function)");
    a->vs.edit_target = (EditTarget)target;
    if (focus)
        a->vs.edit_focus = 1;
    editor_move(a, 0, 0);
}

static void edit_cell(AppState *a, int row, int col)
{
    int rows, cols;
    if (!editor_cell(a, row, col, &rows, &cols))
        return;
    a->vs.edit_row = row;
    a->vs.edit_col = col;
    a->vs.edit_focus = 1;
    a->dirty = 1;
}

static void edit_focus(AppState *a, int on)
{
    if (on && !editor_shown(a)) { /* no editor to type into: the sentence is next */
        app_focus_sentence(a, -1);
        return;
    }
    if (a->vs.edit_focus != !!on) {
        a->vs.edit_focus = !!on;
        a->dirty = 1;
    }
}

static void press_button(AppState *a, int b)
{
    if (b >= 0 && b < EBTN_COUNT && editor_shown(a))
        editor_button(a, b);
}

/* The sentence's own controls (the app adds those every source has). */
static void own_controls(ViewState *s, AppAction *acts)
{
    const AttnConfig *cfg = &s->cfg;
    int dot = cfg->score == ATTN_SCORE_DOT;
    char hb[40];
    s->n_ctl = 0;
    source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_MODE, 0, 0, 0.0f}, cfg->mode == ATTN_MODE_LEARNED, 0,
                   "", "[B] %s", cfg->mode == ATTN_MODE_BASIC ? "basic" : "learned");
    /* the √dk factor is the dot product's */
    if (dot)
        source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_SCALE, 0, 0, 0.0f}, cfg->scale, 0,
                       "[S] 1/\xE2\x88\x9A" "dk", "[S] scale 1/\xE2\x88\x9A" "dk");
    else
        source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_SCALE, 0, 0, 0.0f}, cfg->scale, 1, "[S] dot only",
                       "[S] 1/\xE2\x88\x9A" "dk: dot only");
    if (s->cross) /* two sentences: no "later key" to hide */
        source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_MASK, 0, 0, 0.0f}, cfg->causal, 1, "[M] self only",
                       "[M] mask: self only");
    else
        source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_MASK, 0, 0, 0.0f}, cfg->causal, 0, "[M] mask",
                       "[M] causal mask");
    source_ctl_add(s, acts, (AppAction){ACT_TOGGLE_POSENC, 0, 0, 0.0f}, cfg->posenc, 0, "[P] pos",
                   "[P] pos. enc.");
    attn_head_label(s->head, s->heads, hb, sizeof hb);
    source_ctl_add(s, acts, (AppAction){ACT_CYCLE_HEAD, 1, 0, 0.0f}, 1, 0, "", "[H] %s", hb);
    source_ctl_add(s, acts, (AppAction){ACT_STEP_HEADS, -1, 0, 0.0f}, 0, 0, "", "[[] \xE2\x88\x92");
    source_ctl_add(s, acts, (AppAction){ACT_STEP_HEADS, 1, 0, 0.0f}, 0, 0, "", "[]] +");
    source_ctl_add(s, acts, (AppAction){ACT_TEMPERATURE, 1, 0, 0.0f}, 1, 0, "", "[T] \xCF\x84 = %.2f",
                   (double)cfg->temperature);
    source_ctl_add(s, acts, (AppAction){ACT_CYCLE_SCORE, 1, 0, 0.0f}, 1, 0, "", "[F] %s",
                   attn_score_name(cfg->score));
    source_ctl_add(s, acts, (AppAction){ACT_CYCLE_MATRIX, 1, 0, 0.0f}, 1, 0, "", "[R] %s",
                   attn_map_kind_name((AttnMapKind)s->matrix));
}

void source_sentence_controls(ViewState *s, AppAction *acts)
{
    own_controls(s, acts);
    source_ctl_common(s, acts, 1, 1);
}

/* The keys of an attention file, pressed while a sentence is shown. */
static int file_key(AppActionKind k)
{
    return k == ACT_CYCLE_LAYER || k == ACT_TOGGLE_GRID || k == ACT_TOGGLE_ROLLOUT ||
           k == ACT_GRID_MOVE || k == ACT_GRID_OPEN || k == ACT_TOGGLE_SPECIAL || k == ACT_HEAD_SCORE ||
           k == ACT_GRID_SORT || k == ACT_SCORE_VIEW || k == ACT_LINES_HEADS || k == ACT_HEAD_SWITCH ||
           k == ACT_PROBE || k == ACT_GENERATE || k == ACT_GEN_STEP || k == ACT_ABLATE || k == ACT_LOGIT_LENS;
}

/* While the sentence is typed, the selected query follows its token (the
 * same occurrence of it, or the last there is), else stays at its row,
 * clamped (AppState.anchor_row): an edit never sends it back to row 0. */
static void follow_query(AppState *a)
{
    const Model *m = a->m;
    if (!a->vs.sentence_focus || a->prompt || m->T == 0)
        return;
    int row = -1, seen = 0;
    if (a->anchor_tok[0])
        for (int i = 0; i < m->T && seen <= a->anchor_nth; i++)
            if (strcmp(m->labels[i], a->anchor_tok) == 0) {
                row = i;
                seen++;
            }
    if (row < 0)
        row = a->anchor_row < 0 ? 0 : a->anchor_row < m->T ? a->anchor_row : m->T - 1;
    a->vs.query = row;
}

/* The bar's text changed: tokenize it again, then recompute; the second
 * bar follows the model (a session or the command line set it). */
static void sentence_set_text(AppState *a)
{
    const char *mk = a->m->keys_text ? a->m->keys_text : "";
    if ((!a->keys || strcmp(a->keys, mk) != 0) && app_keys_store(a, mk) < 0)
        return;
    int n_oov;
    model_set_text(a->m, a->text, a->text_len);
    if (a->m->toks.n_total > ATTN_MAX_TOKENS)
        app_status(a, 1, "%d tokens: only the first %d are shown", a->m->toks.n_total,
                   ATTN_MAX_TOKENS);
    else if ((n_oov = model_count_oov(a->m)) > 0)
        app_status(a, 0, "%d word%s not in the embedding table (dotted): hashed vectors",
                   n_oov, n_oov == 1 ? "" : "s");
    else if (!a->status_err)
        a->status[0] = '\0';
    follow_query(a);
    app_recompute(a);
}

/* The second bar's text changed: model_set_keys, then recompute. */
static void sentence_set_keys(AppState *a)
{
    Model *m = a->m;
    if (model_set_keys(m, a->keys ? a->keys : "", a->keys_len) < 0) {
        app_status(a, 1, "out of memory");
        return;
    }
    if (m->cross && m->ktoks.n_total > ATTN_MAX_TOKENS)
        app_status(a, 1, "second sentence: %d tokens, only the first %d are used", m->ktoks.n_total,
                   ATTN_MAX_TOKENS);
    else if (!a->status_err)
        a->status[0] = '\0';
    follow_query(a);
    app_recompute(a);
}

static int sentence_apply(AppState *a, const AppAction *c)
{
    AttnConfig *cfg = &a->m->cfg;
    switch (c->kind) {
    case ACT_TOGGLE_SCALE: toggle_scale(a); break;
    case ACT_TOGGLE_MASK: toggle_mask(a); break;
    case ACT_TOGGLE_POSENC: toggle(a, &cfg->posenc); break;
    case ACT_TOGGLE_MODE: toggle_mode(a); break;
    case ACT_CYCLE_HEAD: if (c->i) cycle_head(a, sign(c->i)); break;
    case ACT_STEP_HEADS: if (c->i) step_heads(a, sign(c->i)); break;
    case ACT_TEMPERATURE:
        step_temperature(a, sign(c->i));
        break;
    case ACT_CYCLE_SCORE: if (c->i) cycle_score(a, c->i); break;
    case ACT_CYCLE_MATRIX:
        a->vs.matrix = (ModelMatrix)((a->vs.matrix + (c->i < 0 ? 3 : 1)) % 4); /* weights → scores → logits → norms */
        a->dirty = 1;
        break;
    case ACT_STEP_REVEAL: if (c->i) step_reveal(a, c->i); break;
    case ACT_SENTENCE_STEP: if (c->i) sentence_step(a, sign(c->i)); break;
    case ACT_EDIT_TARGET: edit_target(a, c->i, c->j); break;
    case ACT_EDIT_MOVE: editor_move(a, c->i, c->j); break;
    case ACT_EDIT_CELL: edit_cell(a, c->i, c->j); break;
    case ACT_EDIT_FOCUS: edit_focus(a, c->i); break;
    case ACT_EDIT_TYPE: editor_begin_typing(a); break;
    case ACT_NUDGE_CELL: editor_nudge(a, c->i, c->j, c->value); break;
    case ACT_SET_CELL: editor_set_value(a, c->i, c->j, c->value); break;
    case ACT_EDITOR_BUTTON: press_button(a, c->i); break;
    case ACT_DRAG_BEGIN: editor_drag_begin(a, c->i); break;
    case ACT_DRAG: editor_drag(a, c->i, c->value); break;
    case ACT_DRAG_END: editor_drag_end(a); break;
    case ACT_UNDO: app_undo(a); break;
    case ACT_REDO: app_redo(a); break;
    default:
        if (!file_key(c->kind))
            return -1;
        if (c->kind == ACT_GENERATE && c->i == 0)
            break; /* Esc: nothing is being generated */
        if (c->kind == ACT_PROBE)
            app_status(a, 0, "the induction probe runs a model (attnviz --model DIR|NAME, or open its folder)");
        else if (c->kind == ACT_GENERATE || c->kind == ACT_GEN_STEP || c->kind == ACT_ABLATE ||
                 c->kind == ACT_LOGIT_LENS)
            app_status(a, 0, "generation, switching heads off and the logit lens are a language model's "
                             "(attnviz --model DIR|NAME, or open its folder)");
        else
            app_status(a, 0, "no attention file is open (attnviz FILE.npz, Ctrl+O, or drop one)");
        break;
    }
    return 0;
}

/* Every action of a source but a file's layers' (the help's rows). */
static int sentence_takes(AppActionKind k)
{
    return !file_key(k);
}

static void sentence_present(AppState *a)
{
    view_state_set_model(&a->vs, a->m);
    a->vs.sentence = a->text;
}

static void sentence_controls(AppState *a)
{
    own_controls(&a->vs, a->ctl_act);
}

static void sentence_shown_size(const AppState *a, int *Tq, int *Tk)
{
    *Tq = a->m->T;
    *Tk = a->m->Tk; /* the second sentence's keys with two */
}

static const char *sentence_title(const AppState *a)
{
    return a->text;
}

static SDL_Surface *sentence_export_heatmap(AppState *a, const ViewState *s, const ViewFonts *fonts,
                                            AttnErr *err)
{
    return export_heatmap_surface(a->m, s, fonts, err);
}

static struct Model *sentence_learnable(AppState *a)
{
    return a->m;
}

/* A session (.json) or a sentences file in the window; on error what is
 * shown stays and the status bar says why. */
static int sentence_open(AppState *a, const char *path)
{
    AttnErr err = {0};
    char buf[1200];
    size_t n = strlen(path);
    if (n >= 5 && strcmp(path + n - 5, ".json") == 0) {
        SessionView sv;
        undo_push(a);
        if (app_load_session(a->m, &sv, path, &err) < 0) {
            undo_drop_last(a); /* nothing changed */
            attn_err_format(&err, buf, sizeof buf);
            app_status(a, 1, "cannot open: %s", buf);
            return -1;
        }
        app_show_source(a, &source_sentence, NULL);
        app_set_sentence(a, a->m->text ? a->m->text : "");
        app_apply_session_view(a, &sv);
        session_view_free(&sv);
        snprintf(a->session_path, sizeof a->session_path, "%s", path);
        app_status(a, 0, "opened session %s", path);
        a->unsaved = 0;
        return 0;
    }
    SentenceList sl;
    if (sentences_load(&sl, path, &err) < 0) {
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "cannot open: %s", buf);
        return -1;
    }
    if (!a->sentences) {
        sentences_free(&sl);
        app_status(a, 1, "cannot open %s here", path);
        return -1;
    }
    sentences_free(a->sentences);
    *a->sentences = sl;
    app_show_source(a, &source_sentence, NULL);
    a->sentence_idx = 0;
    app_set_sentence(a, a->sentences->text[0]);
    app_status(a, 0, "%s: %d sentence%s (PgUp/PgDn)", path, a->sentences->n,
               a->sentences->n == 1 ? "" : "s");
    return 0;
}

const SourceKind source_sentence = {
    .name = "sentence",
    .caps = SOURCE_TEXT,
    .takes = sentence_takes,
    .open = sentence_open,
    .set_text = sentence_set_text,
    .set_keys = sentence_set_keys,
    .apply = sentence_apply,
    .present = sentence_present,
    .controls = sentence_controls,
    .shown_size = sentence_shown_size,
    .save = app_save_sentence_session,
    .title = sentence_title,
    .export_heatmap = sentence_export_heatmap,
    .learnable = sentence_learnable,
    .snap = sentence_snap,
    .snap_free = sentence_snap_free,
    .snap_diff = sentence_snap_diff,
    .compare_hint = "a setting, head or weight",
    .cli_open = sentence_cli_open,
    .cli_write = sentence_cli_write,
    .cli_free = sentence_cli_free,
};
