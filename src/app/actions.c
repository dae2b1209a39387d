/* app_apply: any action (action.h) carried out on the AppState, with the
 * recompute, undo step and status message it needs; arguments out of range
 * are ignored or clamped. The editor's cells are in editor.c. */
#include "app_internal.h"
#include "attnviz/attnfile.h"
#include "attnviz/input.h"
#include "attnviz/source.h"
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
    [ACT_TEACH_PACE] = "teach_pace",
    [ACT_CYCLE_LAYER] = "cycle_layer",
    [ACT_TOGGLE_GRID] = "toggle_grid",
    [ACT_HEAD_SCORE] = "head_score",
    [ACT_GRID_SORT] = "grid_sort",
    [ACT_SCORE_VIEW] = "score_view",
    [ACT_LINES_HEADS] = "lines_heads",
    [ACT_HEAD_SWITCH] = "head_switch",
    [ACT_PROBE] = "probe",
    [ACT_GENERATE] = "generate",
    [ACT_GEN_STEP] = "gen_step",
    [ACT_ABLATE] = "ablate",
    [ACT_LOGIT_LENS] = "logit_lens",
    [ACT_ENCDEC_GROUP] = "encdec_group",
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

/* v + d kept in lo..hi, without overflow. */
static int add_clamped(int v, int d, int lo, int hi)
{
    long long x = (long long)v + d;
    return x < lo ? lo : x > hi ? hi : (int)x;
}

/* The query's row in view: the line diagram scrolled, a zoomed heatmap
 * panned, to it. */
void app_keep_query_visible(AppState *a)
{
    ViewLayout *l = &a->layout;
    int q = a->vs.query;
    if (l->lines_vis > 0) {
        if (q < a->vs.lines_scroll)
            a->vs.lines_scroll = q;
        else if (q >= a->vs.lines_scroll + l->lines_vis)
            a->vs.lines_scroll = q - l->lines_vis + 1;
    }
    int Tq, Tk;
    a->kind->shown_size(a, &Tq, &Tk);
    if (l->rows_vis > 0 && l->rows_vis < Tq) {
        if (q < a->vs.pan_row)
            a->vs.pan_row = q;
        else if (q >= a->vs.pan_row + l->rows_vis)
            a->vs.pan_row = q - l->rows_vis + 1;
    }
}


/* ---- selection: in the shown map, whatever its source ----------------------------- */

/* Remember the selected query (row, token, which occurrence of the token)
 * for the sentence's edits to keep it (AppState.anchor_row). */
static void anchor_query(AppState *a)
{
    const AttnMap *m = &a->vs.map;
    int q = a->vs.query;
    a->anchor_row = q;
    a->anchor_nth = 0;
    a->anchor_tok[0] = '\0';
    if (q < 0 || q >= m->Tq || !m->q_labels || strlen(m->q_labels[q]) >= sizeof a->anchor_tok)
        return;
    snprintf(a->anchor_tok, sizeof a->anchor_tok, "%s", m->q_labels[q]);
    for (int i = 0; i < q; i++)
        a->anchor_nth += strcmp(m->q_labels[i], a->anchor_tok) == 0;
}

static void select_cell(AppState *a, int i, int j)
{
    int T, Tk;
    a->kind->shown_size(a, &T, &Tk);
    if (i < 0 || i >= T || j < 0 || j >= Tk)
        return;
    a->vs.query = i;
    a->vs.key = j;
    a->vs.edit_focus = 0;
    anchor_query(a);
    app_keep_query_visible(a);
    a->dirty = 1;
}

static void move_query(AppState *a, int d)
{
    int T, Tk;
    a->kind->shown_size(a, &T, &Tk);
    if (T)
        a->vs.query = add_clamped(a->vs.query, d, 0, T - 1);
    anchor_query(a);
    app_keep_query_visible(a);
    a->dirty = 1;
}

/* The key cursor moves from the key shown: with none focused yet, Right
 * starts at the first visible column (zoomed in, not at column 0), Left at
 * the key left of the query (the previous token: what a query looks back
 * at), zoomed in at the last visible column; a zoomed heatmap pans to keep
 * the cursor's column in view. */
static void move_key(AppState *a, int d)
{
    int Tq, Tk;
    a->kind->shown_size(a, &Tq, &Tk);
    const ViewLayout *l = &a->layout;
    int zoomed = l->cols_vis > 0 && l->cols_vis < Tk;
    if (Tk && a->vs.key < 0 && zoomed) /* (the layout may be a shorter sentence's) */
        a->vs.key = add_clamped(d > 0 ? l->col0 : l->col0 + l->cols_vis - 1, 0, 0, Tk - 1);
    else if (Tk && a->vs.key < 0 && d < 0)
        a->vs.key = add_clamped(a->vs.query, -1, 0, Tk - 1);
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
    int T, Tk, oi = a->vs.hover_i, oj = a->vs.hover_j;
    a->kind->shown_size(a, &T, &Tk);
    if (i < 0 || i >= T || j < 0 || j >= Tk)
        i = j = -1;
    a->vs.hover_i = i;
    a->vs.hover_j = j;
    if (oi != i || oj != j || i >= 0)
        a->dirty = 1;
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

void app_focus_sentence(AppState *a, int cursor)
{
    a->bar_all = 0;
    a->vs.sentence_focus = 1;
    a->vs.keys_focus = 0;
    a->vs.edit_focus = 0; /* one panel has the keyboard */
    anchor_query(a);
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
    if (how == 2 || how == -2) { /* its pages, as many as the view last laid out */
        int last = a->layout.help_pages > 0 ? a->layout.help_pages - 1 : 8;
        a->vs.help_page += how / 2;
        a->vs.help_page = a->vs.help_page < 0 ? 0 : a->vs.help_page > last ? last : a->vs.help_page;
        a->dirty = 1;
        return;
    }
    a->vs.help = how == 0 ? !a->vs.help : how > 0;
    a->vs.help_page = 0;
    unsigned show = a->teach && a->teach->on && a->kind->learnable ? APP_HELP_TEACH : 0;
    show |= a->kind->probe ? APP_HELP_PROBE : 0;
    a->vs.n_help_lines = app_help_build_for(a->help, APP_HELP_MAX, a->help_text, sizeof a->help_text,
                                            a->kind->takes, show);
    a->dirty = 1;
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
    if (p == SIDE_EDITOR && a->vs.m) /* the weight editor is there */
        a->vs.edit_focus = 1;
    else
        a->vs.edit_focus = 0;
    a->dirty = 1;
}


/* ---- app_apply ---------------------------------------------------------------------- */

static void apply(AppState *a, const AppAction *c)
{
    int Tq, Tk;
    a->kind->shown_size(a, &Tq, &Tk);
    switch (c->kind) {
    case ACT_SELECT_QUERY:
        if (c->i >= 0 && c->i < Tq) {
            a->vs.query = c->i;
            anchor_query(a);
            a->dirty = 1;
        }
        break;
    case ACT_MOVE_QUERY: move_query(a, c->i); break;
    case ACT_FOCUS_KEY: if (c->i >= -1 && c->i < Tk) { a->vs.key = c->i; a->dirty = 1; } break;
    case ACT_MOVE_KEY: move_key(a, c->i); break;
    case ACT_SELECT_CELL: select_cell(a, c->i, c->j); break;
    case ACT_HOVER: hover(a, c->i, c->j); break;
    case ACT_POINTER: /* kept in a range the hit tests can add to */
        a->vs.mouse_x = SDL_clamp(c->i, -APP_COORD_MAX, APP_COORD_MAX);
        a->vs.mouse_y = SDL_clamp(c->j, -APP_COORD_MAX, APP_COORD_MAX);
        break;
    case ACT_CYCLE_CMAP:
        a->vs.cmap = (ColormapId)((a->vs.cmap + 1) % CMAP_SEQUENTIAL_COUNT);
        a->dirty = 1;
        break;
    case ACT_CYCLE_CSCALE: cycle_cscale(a); break;
    case ACT_TOGGLE_THEME: toggle_theme(a); break;
    case ACT_TOGGLE_ALL_LINES: a->vs.all_lines = !a->vs.all_lines; a->dirty = 1; break;
    case ACT_LINES_TOP: lines_top(a, c->i); break;
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
    case ACT_EXPORT: if (c->i >= 0 && c->i <= 2) app_export(a, c->i); break;
    case ACT_COMPARE: compare_toggle(a); break;
    case ACT_SAVE: save(a, c->i); break;
    case ACT_OPEN_PROMPT: text_prompt_start(a, PROMPT_OPEN, "Open (session, sentences, .npy .npz .safetensors, model folder):", ""); break;
    case ACT_FOCUS_SENTENCE: app_focus_sentence(a, c->i); break;
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
    /* teach mode's, then the source's own actions, then what acts on any map */
    if (!app_teach_apply(a, act) && a->kind->apply(a, act) < 0)
        apply(a, act);
    if (act->kind < ACT_TEACH || act->kind > ACT_TEACH_PACE)
        app_teach_sync(a); /* the target or the loss after a change of sentence or model */
    int changed = a->dirty || a->status_serial != said; /* a message is drawn too */
    a->dirty = before | changed;
    return changed;
}
