/* app_apply: any action (action.h) carried out on the AppState, with the
 * recompute, undo step and status message it needs; arguments out of range
 * are ignored or clamped. The editor's cells are in editor.c. */
#include "app_internal.h"
#include "attnviz/attnfile.h"
#include "attnviz/input.h"
#include "attnviz/teach_app.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const action_names[ACT_COUNT] = {
    [ACT_NONE] = "none",
    [ACT_SELECT_QUERY] = "select_query",
    [ACT_MOVE_QUERY] = "move_query",
    [ACT_FOCUS_KEY] = "focus_key",
    [ACT_MOVE_KEY] = "move_key",
    [ACT_SELECT_CELL] = "select_cell",
    [ACT_HOVER] = "hover",
    [ACT_POINTER] = "pointer",
    [ACT_TOGGLE_SCALE] = "toggle_scale",
    [ACT_TOGGLE_MASK] = "toggle_mask",
    [ACT_TOGGLE_POSENC] = "toggle_posenc",
    [ACT_TOGGLE_MODE] = "toggle_mode",
    [ACT_CYCLE_HEAD] = "cycle_head",
    [ACT_STEP_HEADS] = "step_heads",
    [ACT_TEMPERATURE] = "temperature",
    [ACT_CYCLE_SCORE] = "cycle_score",
    [ACT_CYCLE_MATRIX] = "cycle_matrix",
    [ACT_CYCLE_CMAP] = "cycle_cmap",
    [ACT_CYCLE_CSCALE] = "cycle_cscale",
    [ACT_TOGGLE_THEME] = "toggle_theme",
    [ACT_TOGGLE_ALL_LINES] = "toggle_all_lines",
    [ACT_LINES_TOP] = "lines_top",
    [ACT_STEP_REVEAL] = "step_reveal",
    [ACT_ZOOM] = "zoom",
    [ACT_PAN] = "pan",
    [ACT_SCROLL_LINES] = "scroll_lines",
    [ACT_SENTENCE_STEP] = "sentence_step",
    [ACT_EDIT_TARGET] = "edit_target",
    [ACT_EDIT_MOVE] = "edit_move",
    [ACT_EDIT_CELL] = "edit_cell",
    [ACT_EDIT_FOCUS] = "edit_focus",
    [ACT_EDIT_TYPE] = "edit_type",
    [ACT_NUDGE_CELL] = "nudge_cell",
    [ACT_SET_CELL] = "set_cell",
    [ACT_EDITOR_BUTTON] = "editor_button",
    [ACT_DRAG_BEGIN] = "drag_begin",
    [ACT_DRAG] = "drag",
    [ACT_DRAG_END] = "drag_end",
    [ACT_UNDO] = "undo",
    [ACT_REDO] = "redo",
    [ACT_EXPORT] = "export",
    [ACT_SAVE] = "save",
    [ACT_OPEN_PROMPT] = "open_prompt",
    [ACT_FOCUS_SENTENCE] = "focus_sentence",
    [ACT_LEAVE_SENTENCE] = "leave_sentence",
    [ACT_FOCUS_KEYS] = "focus_keys",
    [ACT_COMPARE] = "compare",
    [ACT_UI_SCALE] = "ui_scale",
    [ACT_WINDOW_SIZE] = "window_size",
    [ACT_REDRAW] = "redraw",
    [ACT_FULLSCREEN] = "fullscreen",
    [ACT_HELP] = "help",
    [ACT_SIDE_TAB] = "side_tab",
    [ACT_QUIT] = "quit",
    [ACT_TEACH] = "teach",
    [ACT_TEACH_PAINT] = "teach_paint",
    [ACT_TEACH_PRESET] = "teach_preset",
    [ACT_TEACH_RUN] = "teach_run",
    [ACT_TEACH_STEP] = "teach_step",
    [ACT_TEACH_RESET] = "teach_reset",
    [ACT_TEACH_LR] = "teach_lr",
    [ACT_TEACH_OPT] = "teach_opt",
    [ACT_TEACH_TRAIN] = "teach_train",
    [ACT_CYCLE_LAYER] = "cycle_layer",
    [ACT_TOGGLE_GRID] = "toggle_grid",
    [ACT_TOGGLE_ROLLOUT] = "toggle_rollout",
    [ACT_GRID_MOVE] = "grid_move",
    [ACT_GRID_OPEN] = "grid_open",
    [ACT_TOGGLE_SPECIAL] = "toggle_special",
};

const char *app_action_name(AppActionKind kind)
{
    int k = (int)kind;
    return k >= 0 && k < ACT_COUNT && action_names[k] ? action_names[k] : "?";
}

#define APP_COORD_MAX (1 << 20) /* pixels */

/* ---- helpers ------------------------------------------------------------------ */

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

/* v + d kept in lo..hi, without overflow. */
static int add_clamped(int v, int d, int lo, int hi)
{
    long long x = (long long)v + d;
    return x < lo ? lo : x > hi ? hi : (int)x;
}

static void keep_query_visible(AppState *a)
{
    ViewLayout *l = &a->layout;
    int q = a->vs.query;
    if (l->lines_vis > 0) {
        if (q < a->vs.lines_scroll)
            a->vs.lines_scroll = q;
        else if (q >= a->vs.lines_scroll + l->lines_vis)
            a->vs.lines_scroll = q - l->lines_vis + 1;
    }
    if (l->rows_vis > 0 && l->rows_vis < a->m->T) {
        if (q < a->vs.pan_row)
            a->vs.pan_row = q;
        else if (q >= a->vs.pan_row + l->rows_vis)
            a->vs.pan_row = q - l->rows_vis + 1;
    }
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

/* ---- selection ------------------------------------------------------------------ */

static void select_cell(AppState *a, int i, int j)
{
    int T = a->m->T;
    if (i < 0 || i >= T || j < 0 || j >= a->m->Tk)
        return;
    a->vs.query = i;
    a->vs.key = j;
    a->vs.edit_focus = 0;
    keep_query_visible(a);
    a->dirty = 1;
}

static void move_query(AppState *a, int d)
{
    int T = a->m->T;
    if (T)
        a->vs.query = add_clamped(a->vs.query, d, 0, T - 1);
    keep_query_visible(a);
    a->dirty = 1;
}

/* The key cursor moves from the key shown: with none focused yet, Right
 * starts at the first visible column (zoomed in, not at column 0), Left at
 * the last; a zoomed heatmap pans to keep the cursor's column in view. */
static void move_key(AppState *a, int d)
{
    int Tk = a->m->Tk; /* the second sentence's keys with two */
    const ViewLayout *l = &a->layout;
    int zoomed = l->cols_vis > 0 && l->cols_vis < Tk;
    if (Tk && a->vs.key < 0 && zoomed) /* (the layout may be a shorter sentence's) */
        a->vs.key = add_clamped(d > 0 ? l->col0 : l->col0 + l->cols_vis - 1, 0, 0, Tk - 1);
    else if (Tk)
        a->vs.key = add_clamped(a->vs.key, d, 0, Tk - 1);
    if (zoomed && a->vs.key >= 0) {
        if (a->vs.key < a->vs.pan_col)
            a->vs.pan_col = a->vs.key;
        else if (a->vs.key >= a->vs.pan_col + l->cols_vis)
            a->vs.pan_col = a->vs.key - l->cols_vis + 1;
    }
    a->dirty = 1;
}

static void hover(AppState *a, int i, int j)
{
    int T = a->m->T, oi = a->vs.hover_i, oj = a->vs.hover_j;
    if (i < 0 || i >= T || j < 0 || j >= a->m->Tk)
        i = j = -1;
    a->vs.hover_i = i;
    a->vs.hover_j = j;
    if (oi != i || oj != j || i >= 0)
        a->dirty = 1;
}

/* ---- settings ------------------------------------------------------------------- */

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
    /* order: 0, 1, ..., h-1, avg */
    int pos = a->vs.head < 0 ? h : a->vs.head;
    pos = (pos + dir + h + 1) % (h + 1);
    a->vs.head = pos == h ? MODEL_HEAD_AVG : pos;
    a->dirty = 1;
}

static void set_temperature(AppState *a, float t)
{
    if (t < 0.05f)
        t = 0.05f;
    if (t > 20.0f)
        t = 20.0f;
    a->m->cfg.temperature = roundf(t * 100.0f) / 100.0f;
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

/* ---- what is shown ---------------------------------------------------------------- */

/* The line diagram's strongest lines per query: 1, 2, 3, 5, 8, 13, 21 or
 * every line (0), one step up (more) or down (fewer). */
static void lines_top(AppState *a, int dir)
{
    static const int steps[] = {1, 2, 3, 5, 8, 13, 21, 0};
    int n = (int)(sizeof steps / sizeof steps[0]), k = n - 1;
    for (int t = 0; t < n; t++)
        if (steps[t] == a->vs.lines_top)
            k = t;
    k = k + (dir > 0 ? 1 : -1);
    k = k < 0 ? 0 : k >= n ? n - 1 : k;
    a->vs.lines_top = steps[k];
    if (steps[k])
        app_status(a, 0, "line diagram: each query's %d strongest line%s (, and . change it)", steps[k],
                   steps[k] == 1 ? "" : "s");
    else
        app_status(a, 0, "line diagram: every line (, and . change it)");
}

static void step_reveal(AppState *a, int dir)
{
    int r = a->vs.step_reveal;
    a->vs.step_reveal = dir > 0 ? (r >= 4 ? 1 : r + 1) : (r > 1 ? r - 1 : 1);
    a->dirty = 1;
}

/* The next colour scale for weights, said in full: which one, and that
 * scores keep theirs when they are shown. */
static void cycle_cscale(AppState *a)
{
    a->vs.cscale = (ColorScaleMode)((a->vs.cscale + 1) % CSCALE_COUNT);
    const AttnMap *m = &a->vs.map;
    int weights = m->v && !attn_map_kind_diverging(m->kind);
    char what[120];
    if (a->vs.cscale == CSCALE_FIXED)
        snprintf(what, sizeof what, "fixed 0\xE2\x80\x93" "1 (same colour = same weight on every slide)");
    else if (a->vs.cscale == CSCALE_ROW)
        snprintf(what, sizeof what, "each row 0 to its own max (the numbers stay the weights)");
    else if (weights)
        snprintf(what, sizeof what, "0 to this map's max (%.3g)",
                 (double)colormap_scale_mode(m, a->vs.cmap, CSCALE_MAX).hi);
    else
        snprintf(what, sizeof what, "0 to the map's max");
    app_status(a, 0, "colour scale: %s%s", what,
               weights || !m->v ? "" : "; for weights only: the scores shown keep their \xC2\xB1 scale");
    a->dirty = 1;
}

static void toggle_theme(AppState *a)
{
    a->vs.dark = !a->vs.dark;
    app_status(a, 0, "%s (D switches back)", a->vs.dark ? "dark theme" : "light theme, for a bright room");
    a->dirty = 1;
}

static void set_ui_scale(AppState *a, float s)
{
    if (s < 0.5f)
        s = 0.5f;
    if (s > 3.0f)
        s = 3.0f;
    a->ui_scale = s;
    a->vs.scale = a->ui_scale * a->dpi_scale;
    app_status(a, 0, "interface %d%%", (int)lroundf(s * 100));
    a->dirty = 1;
}

static void ui_scale(AppState *a, int dir)
{
    set_ui_scale(a, dir > 0 ? a->ui_scale * 1.15f : dir < 0 ? a->ui_scale / 1.15f : 1.0f);
}

/* ---- the sentence bar, files, the window --------------------------------------------- */

static void focus_sentence(AppState *a, int cursor)
{
    a->bar_all = 0;
    a->vs.sentence_focus = 1;
    a->vs.keys_focus = 0;
    a->vs.edit_focus = 0; /* one panel has the keyboard */
    if (!a->prompt) { /* a click in the prompt keeps its own cursor */
        int len = (int)a->text_len;
        cursor = cursor < 0 || cursor > len ? len : cursor;
        while (cursor > 0 && ((unsigned char)a->text[cursor] & 0xC0) == 0x80)
            cursor--; /* not inside a UTF-8 character */
        a->vs.cursor = cursor;
    }
    SDL_StartTextInput();
    a->dirty = 1;
}

/* The second bar (the cross-attention's keys): it has the keyboard while
 * vs.sentence_focus and vs.keys_focus are both set (text.c types into it). */
static void focus_keys(AppState *a, int cursor)
{
    if (a->prompt)
        return; /* a file name is being asked for in the first bar */
    a->bar_all = 0;
    a->vs.sentence_focus = 1;
    a->vs.keys_focus = 1;
    a->vs.edit_focus = 0;
    int len = (int)a->keys_len;
    cursor = cursor < 0 || cursor > len ? len : cursor;
    while (cursor > 0 && ((unsigned char)a->keys[cursor] & 0xC0) == 0x80)
        cursor--; /* not inside a UTF-8 character */
    a->vs.keys_cursor = cursor;
    SDL_StartTextInput();
    a->dirty = 1;
}

static void leave_sentence(AppState *a)
{
    a->prompt = PROMPT_NONE;
    a->vs.prompt = NULL;
    a->vs.sentence_focus = 0;
    a->vs.keys_focus = 0;
    SDL_StopTextInput();
    a->dirty = 1;
}

static void save(AppState *a, int as)
{
    if (!as && a->session_path[0])
        app_save_session(a, a->session_path);
    else
        text_prompt_start(a, PROMPT_SAVE, "Save session as:",
                          a->session_path[0] ? a->session_path : "attnviz-session.json");
}

static void window_size(AppState *a, int w, int h)
{
    a->win_w = w > 1 ? w : 1;
    a->win_h = h > 1 ? h : 1;
    a->dirty = 1;
}

/* The help shows the keys of what is on screen: a file's, teach mode's. */
static void help(AppState *a, int how)
{
    if (how == 2 || how == -2) { /* its pages (the view clamps to those there are) */
        a->vs.help_page += how / 2;
        a->vs.help_page = a->vs.help_page < 0 ? 0 : a->vs.help_page > 8 ? 8 : a->vs.help_page;
        a->dirty = 1;
        return;
    }
    a->vs.help = how == 0 ? !a->vs.help : how > 0;
    a->vs.help_page = 0;
    unsigned show = (a->imp ? APP_HELP_FILE : 0) | (a->teach && a->teach->on ? APP_HELP_TEACH : 0);
    a->vs.n_help_lines = app_help_build(a->help, APP_HELP_MAX, a->help_text, sizeof a->help_text, show);
    a->dirty = 1;
}

/* ---- the weight editor ------------------------------------------------------------- */

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
        focus_sentence(a, -1);
        return;
    }
    if (a->vs.edit_focus != !!on) {
        a->vs.edit_focus = !!on;
        a->dirty = 1;
    }
}

/* The side area's tabs (when panels share it): the next or previous one,
 * or panel. The editor's tab takes the keyboard, the others give it back
 * to the heatmap. */
static void side_tab(AppState *a, int dir, int panel)
{
    const ViewLayout *l = &a->layout;
    if (l->side_shown < 0) {
        app_status(a, 0, "every panel has its own place at this size: no tabs to switch");
        return;
    }
    int p = dir ? l->side_shown : panel;
    for (int k = 0; dir && k < SIDE_COUNT; k++) { /* the next one that is a tab */
        p = (p + (dir > 0 ? 1 : SIDE_COUNT - 1)) % SIDE_COUNT;
        if (l->side_tab[p].w > 0)
            break;
    }
    if (p < 0 || p >= SIDE_COUNT || l->side_tab[p].w <= 0)
        return;
    a->vs.side = (SidePanel)p;
    if (p == SIDE_EDITOR && a->m && !a->imp)
        a->vs.edit_focus = 1;
    else
        a->vs.edit_focus = 0;
    a->dirty = 1;
}

static void press_button(AppState *a, int b)
{
    if (b >= 0 && b < EBTN_COUNT && editor_shown(a))
        editor_button(a, b);
}

/* ---- app_apply ---------------------------------------------------------------------- */

static void apply(AppState *a, const AppAction *c)
{
    AttnConfig *cfg = &a->m->cfg;
    int T = a->m->T;
    switch (c->kind) {
    case ACT_SELECT_QUERY: if (c->i >= 0 && c->i < T) { a->vs.query = c->i; a->dirty = 1; } break;
    case ACT_MOVE_QUERY: move_query(a, c->i); break;
    case ACT_FOCUS_KEY: if (c->i >= -1 && c->i < a->m->Tk) { a->vs.key = c->i; a->dirty = 1; } break;
    case ACT_MOVE_KEY: move_key(a, c->i); break;
    case ACT_SELECT_CELL: select_cell(a, c->i, c->j); break;
    case ACT_HOVER: hover(a, c->i, c->j); break;
    case ACT_POINTER: /* kept in a range the hit tests can add to */
        a->vs.mouse_x = SDL_clamp(c->i, -APP_COORD_MAX, APP_COORD_MAX);
        a->vs.mouse_y = SDL_clamp(c->j, -APP_COORD_MAX, APP_COORD_MAX);
        break;
    case ACT_TOGGLE_SCALE: toggle_scale(a); break;
    case ACT_TOGGLE_MASK: toggle_mask(a); break;
    case ACT_TOGGLE_POSENC: toggle(a, &cfg->posenc); break;
    case ACT_TOGGLE_MODE: toggle_mode(a); break;
    case ACT_CYCLE_HEAD: if (c->i) cycle_head(a, sign(c->i)); break;
    case ACT_STEP_HEADS: if (c->i) step_heads(a, sign(c->i)); break;
    case ACT_TEMPERATURE:
        if (c->i)
            set_temperature(a, c->i > 0 ? cfg->temperature * 1.25f : cfg->temperature / 1.25f);
        break;
    case ACT_CYCLE_SCORE: if (c->i) cycle_score(a, c->i); break;
    case ACT_CYCLE_MATRIX:
        a->vs.matrix = (ModelMatrix)((a->vs.matrix + (c->i < 0 ? 2 : 1)) % 3);
        a->dirty = 1;
        break;
    case ACT_CYCLE_CMAP:
        a->vs.cmap = (ColormapId)((a->vs.cmap + 1) % CMAP_SEQUENTIAL_COUNT);
        a->dirty = 1;
        break;
    case ACT_CYCLE_CSCALE: cycle_cscale(a); break;
    case ACT_TOGGLE_THEME: toggle_theme(a); break;
    case ACT_TOGGLE_ALL_LINES: a->vs.all_lines = !a->vs.all_lines; a->dirty = 1; break;
    case ACT_LINES_TOP: lines_top(a, c->i); break;
    case ACT_STEP_REVEAL: if (c->i) step_reveal(a, c->i); break;
    case ACT_ZOOM:
        a->vs.zoom = c->i > 0 ? fminf(a->vs.zoom * 1.25f, 64.0f) : fmaxf(a->vs.zoom / 1.25f, 1.0f);
        a->dirty = 1;
        break;
    case ACT_PAN: /* past the end is drawn as the end; bounded, for sums */
        if (c->i)
            a->vs.pan_row = add_clamped(a->vs.pan_row, c->i, 0, ATTN_FILE_MAX_TOKENS);
        if (c->j)
            a->vs.pan_col = add_clamped(a->vs.pan_col, c->j, 0, ATTN_FILE_MAX_TOKENS);
        a->dirty = 1;
        break;
    case ACT_SCROLL_LINES:
        a->vs.lines_scroll = add_clamped(a->vs.lines_scroll, c->i, 0, ATTN_FILE_MAX_TOKENS);
        a->dirty = 1;
        break;
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
    case ACT_EXPORT: if (c->i >= 0 && c->i <= 2) app_export(a, c->i); break;
    case ACT_COMPARE: compare_toggle(a); break;
    case ACT_SAVE: save(a, c->i); break;
    case ACT_OPEN_PROMPT: text_prompt_start(a, PROMPT_OPEN, "Open (session .json or sentences):", ""); break;
    case ACT_FOCUS_SENTENCE: focus_sentence(a, c->i); break;
    case ACT_LEAVE_SENTENCE: leave_sentence(a); break;
    case ACT_FOCUS_KEYS: focus_keys(a, c->i); break;
    case ACT_UI_SCALE: ui_scale(a, c->i); break;
    case ACT_WINDOW_SIZE: window_size(a, c->i, c->j); break;
    case ACT_REDRAW: a->dirty = 1; break;
    case ACT_FULLSCREEN: a->fullscreen = !a->fullscreen; a->dirty = 1; break;
    case ACT_HELP: help(a, c->i); break;
    case ACT_SIDE_TAB: side_tab(a, c->i, c->j); break;
    case ACT_QUIT: a->quit = 1; break;
    case ACT_NONE:
    case ACT_COUNT:
    default: break;
    }
}

int app_apply(AppState *a, const AppAction *act)
{
    int before = a->dirty;
    unsigned said = a->status_serial;
    a->dirty = 0;
    a->last_action = *act;
    a->n_actions++;
    if (app_import_apply(a, act) < 0 && !app_teach_apply(a, act)) /* not a file's, not teach's */
        apply(a, act);
    if (act->kind < ACT_TEACH || act->kind > ACT_TEACH_TRAIN)
        app_teach_sync(a); /* the target or the loss after a change of sentence or model */
    int changed = a->dirty || a->status_serial != said; /* a message is drawn too */
    a->dirty = before | changed;
    return changed;
}
