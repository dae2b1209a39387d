/* Input: SDL events become actions here and nowhere else. Keys and the wheel
 * through one table (which also writes the help overlay, so the help cannot
 * list a key that does nothing); clicks and motion through the view's hits. */
#include "attnviz/input.h"
#include "attnviz/source.h"
#include "app_internal.h"
#include "attnviz/teach.h"
#include "attnviz/teach_app.h"
#include "platform.h"

#include <stdio.h>
#include <string.h>

/* Help texts that several rows share (one help line each). */
static const char H_SENTENCE[] = "edit the sentence (Esc leaves; Ctrl+A selects all, Ctrl+U clears, Ctrl+V pastes)";
static const char H_QUERY[] = "select the query row";
static const char H_ENDS[] = "the last / first query row (a model's last: what comes after the text)";
static const char H_KEY[] = "focus a key column";
static const char H_HEAD[] = "next / previous head (then the average)";
static const char H_HEADS[] = "fewer / more heads";
static const char H_TEMP[] = "temperature \xCF\x84 up / down / back to 1";
static const char H_MATRIX[] = "weights / raw scores / logits / norms";
static const char H_LOOK[] = "next colour map / light or dark theme";
static const char H_PAGES[] = "previous / next sentence";
static const char H_FOCUS[] = "the keyboard to the next / previous panel (outlined): sentence, keys, heatmap, editor";
static const char H_TARGET[] = "weight editor: Wq, Wk, Wv, Wo, X, v (additive score)";
static const char H_KEYS[] = "second sentence: keys and values (cross-attention; Tab moves on, empty = self)";
static const char H_SCORE[] = "score function: dot / cosine / additive";
static const char H_EDIT_KEYS[] = "after a click in the editor: move the cell, type a value";
static const char H_NUDGE[] = "nudge the editor's cell by 0.1 (Alt: by 0.01)";
static const char H_NUDGE_WHEEL[] = "wheel over an editor cell: nudge it by 0.1 (Shift: by 0.01)";
static const char H_BUTTONS[] = "identity, zero, random, swap Wq\xE2\x86\x94Wk, reset";
static const char H_STEP[] = "step view: reveal next / previous step";
static const char H_ZOOM[] = "zoom / pan / scroll a large heatmap (and the lines)";
static const char H_UNDO[] = "undo / redo";
static const char H_EXPORT[] = "export heatmap / lines / whole window (PNG; a model's or a file's map with its CSV)";
static const char H_UI[] = "interface size (projector)";
static const char H_HELP[] = "this help";
static const char H_LAYER[] = "a model or an attention file: next / previous layer (then the average)";
static const char H_HEAD_SCORE[] = "head score shown on the model view's maps: next / previous (induction, entropy, distance, previous, self, first, duplicate)";
static const char H_HEAD_SWITCH[] = "every head's lines: Shift+1 \xE2\x80\xA6 Shift+0 switch heads 1\xE2\x80\x93" "10 on / off, "
                                    "Alt+1 \xE2\x80\xA6 Alt+6 heads 11\xE2\x80\x93" "16 (or click a head's colour)";
static const char H_GRID[] = "model view: move the selection, open it in the head view";
static const char H_TEACH_PRESET[] = "teach: target self / previous / next / first; the current map; none";
static const char H_SIDE[] = "next / previous panel where panels share one area (a large interface, a small window)";
static const char H_TEACH_PACE[] = "teach: faster / slower (steps a second)";
static const char H_GENERATE[] = "a language model: append the token it picks next / ten (greedy, or --sample's settings)";
static const char H_GEN_STEP[] = "a language model: previous / next generated token (its row, the predictions it was chosen from)";
static const char H_ABLATE[] = "a language model: switch the shown head off / on (ablation) / every head on again";
static const char H_ABLATE_MODE[] = "a language model: a head switched off gives zeros / its mean over the text (mean ablation)";
static const char H_ENCDEC_GROUP[] = "an encoder-decoder (T5, BART) or its .npz: next / previous maps: encoder, decoder, cross-attention "
                                     "(target \xC3\x97 source)";
static const char H_TEACH_LR[] = "teach: learning rate \xC3\x97" "2 / \xC3\xB7" "2";

#define CTRL KEYMOD_CTRL
#define SHIFT KEYMOD_SHIFT
#define NOSHIFT KEYMOD_NO_SHIFT
#define ALT KEYMOD_ALT
#define ROW(key, mods, ctx, kind, i, j, v, what) {key, mods, KEYCTX_##ctx, {kind, i, j, v}, what}
#define K(key, mods, ctx, kind, i, what) ROW(key, mods, ctx, kind, i, 0, 0.0f, what)

/* Search order: by context (ANY, then HELP, EDITOR, GRID, MAIN, see input.h), then
 * by row; rows here are in the help's order. */
static const AppKey key_table[] = {
    /* no text field has the keyboard */
    K(SDLK_RETURN, SHIFT, MAIN, ACT_FOCUS_KEYS, -1, H_KEYS),
    K(SDLK_KP_ENTER, SHIFT, MAIN, ACT_FOCUS_KEYS, -1, NULL),
    K(SDLK_RETURN, 0, MAIN, ACT_FOCUS_SENTENCE, -1, H_SENTENCE),
    K(SDLK_KP_ENTER, 0, MAIN, ACT_FOCUS_SENTENCE, -1, NULL),
    K(SDLK_SLASH, NOSHIFT, MAIN, ACT_FOCUS_SENTENCE, -1, H_SENTENCE),
    K(SDLK_SLASH, SHIFT, MAIN, ACT_HELP, 0, NULL), /* "?" on many keyboards */
    K(SDLK_UP, 0, MAIN, ACT_MOVE_QUERY, -1, H_QUERY),
    K(SDLK_DOWN, 0, MAIN, ACT_MOVE_QUERY, 1, H_QUERY),
    K(SDLK_j, 0, MAIN, ACT_MOVE_QUERY, 1, H_QUERY),
    K(SDLK_k, 0, MAIN, ACT_MOVE_QUERY, -1, H_QUERY),
    K(SDLK_END, 0, MAIN, ACT_MOVE_QUERY, 1 << 20, H_ENDS),
    K(SDLK_HOME, 0, MAIN, ACT_MOVE_QUERY, -(1 << 20), H_ENDS),
    K(SDLK_LEFT, 0, MAIN, ACT_MOVE_KEY, -1, H_KEY),
    K(SDLK_RIGHT, 0, MAIN, ACT_MOVE_KEY, 1, H_KEY),
    K(SDLK_s, 0, MAIN, ACT_TOGGLE_SCALE, 0, "scaling 1/\xE2\x88\x9A" "dk on/off"),
    K(SDLK_m, 0, MAIN, ACT_TOGGLE_MASK, 0, "causal mask on/off"),
    K(SDLK_p, 0, MAIN, ACT_TOGGLE_POSENC, 0, "positional encoding on/off"),
    K(SDLK_b, 0, MAIN, ACT_TOGGLE_MODE, 0, "basic / learned attention"),
    K(SDLK_h, NOSHIFT, MAIN, ACT_CYCLE_HEAD, 1, H_HEAD),
    K(SDLK_h, SHIFT, MAIN, ACT_CYCLE_HEAD, -1, H_HEAD),
    K(SDLK_LEFTBRACKET, 0, MAIN, ACT_STEP_HEADS, -1, H_HEADS),
    K(SDLK_RIGHTBRACKET, 0, MAIN, ACT_STEP_HEADS, 1, H_HEADS),
    K(SDLK_t, NOSHIFT, MAIN, ACT_TEMPERATURE, 1, H_TEMP),
    K(SDLK_t, SHIFT, MAIN, ACT_TEMPERATURE, -1, H_TEMP),
    K(SDLK_t, CTRL, MAIN, ACT_TEMPERATURE, 0, H_TEMP),
    K(SDLK_f, NOSHIFT, MAIN, ACT_CYCLE_SCORE, 1, H_SCORE),
    K(SDLK_f, SHIFT, MAIN, ACT_CYCLE_SCORE, -1, H_SCORE),
    K(SDLK_r, NOSHIFT, MAIN, ACT_CYCLE_MATRIX, 1, H_MATRIX),
    K(SDLK_r, SHIFT, MAIN, ACT_CYCLE_MATRIX, -1, H_MATRIX),
    K(SDLK_c, NOSHIFT, MAIN, ACT_CYCLE_CMAP, 0, H_LOOK),
    K(SDLK_c, SHIFT, MAIN, ACT_CYCLE_CSCALE, 0,
      "colour scale of weights: fixed 0\xE2\x80\x93" "1 / the map's max / each row's max (or click the colour bar)"),
    K(SDLK_d, 0, MAIN, ACT_TOGGLE_THEME, 0, H_LOOK),
    K(SDLK_a, 0, MAIN, ACT_TOGGLE_ALL_LINES, 0, "all queries' lines"),
    K(SDLK_COMMA, 0, MAIN, ACT_LINES_TOP, -1, "fewer / more lines: each query's strongest"),
    K(SDLK_PERIOD, 0, MAIN, ACT_LINES_TOP, 1, "fewer / more lines: each query's strongest"),
    K(SDLK_w, 0, MAIN, ACT_TEACH, 0, "teach mode: paint a pattern on the heatmap, the weights learn it"),
    K(SDLK_v, 0, MAIN, ACT_COMPARE, 0, "compare: pin what is shown as the reference / unpin"),
    K(SDLK_PAGEUP, 0, MAIN, ACT_SENTENCE_STEP, -1, H_PAGES),
    K(SDLK_PAGEDOWN, 0, MAIN, ACT_SENTENCE_STEP, 1, H_PAGES),
    K(SDLK_l, NOSHIFT, MAIN, ACT_CYCLE_LAYER, 1, H_LAYER),
    K(SDLK_l, SHIFT, MAIN, ACT_CYCLE_LAYER, -1, H_LAYER),
    K(SDLK_g, 0, MAIN, ACT_TOGGLE_GRID, 0, "a model or an attention file: model view (every layer and head) / head view"),
    K(SDLK_o, 0, MAIN, ACT_TOGGLE_ROLLOUT, 0, "a model or an attention file: rollout through the layer on / off"),
    K(SDLK_e, 0, MAIN, ACT_TOGGLE_SPECIAL, 0, "a model or an attention file: hide / show the special tokens ([CLS], <s> \xE2\x80\xA6)"),
    K(SDLK_i, NOSHIFT, MAIN, ACT_HEAD_SCORE, 1, H_HEAD_SCORE),
    K(SDLK_i, SHIFT, MAIN, ACT_HEAD_SCORE, -1, H_HEAD_SCORE),
    K(SDLK_y, 0, MAIN, ACT_GRID_SORT, 0, "model view: sorted by the head score, highest first / layer order"),
    K(SDLK_u, 0, MAIN, ACT_SCORE_VIEW, 0, "model view: the score overview (layers \xC3\x97 heads; arrows select, Enter or a click opens one) / the maps"),
    K(SDLK_p, CTRL, MAIN, ACT_PROBE, 0, "a model: the induction probe (its bos token, 25 random tokens twice; the next seed each time)"),
    K(SDLK_g, CTRL | NOSHIFT, ANY, ACT_GENERATE, 1, H_GENERATE),
    K(SDLK_g, CTRL | SHIFT, ANY, ACT_GENERATE, 10, H_GENERATE),
    K(SDLK_ESCAPE, 0, MAIN, ACT_GENERATE, 0, "a language model: stop generating"),
    K(SDLK_LEFT, CTRL, MAIN, ACT_GEN_STEP, -1, H_GEN_STEP),
    K(SDLK_RIGHT, CTRL, MAIN, ACT_GEN_STEP, 1, H_GEN_STEP),
    K(SDLK_k, CTRL | NOSHIFT, MAIN, ACT_ABLATE, 1, H_ABLATE),
    K(SDLK_k, CTRL | SHIFT, MAIN, ACT_ABLATE, 0, H_ABLATE),
    K(SDLK_k, ALT, MAIN, ACT_ABLATE, 2, H_ABLATE_MODE),
    K(SDLK_r, CTRL, MAIN, ACT_LOGIT_LENS, 0,
      "a language model: the logit lens of the selected position (each layer's top 5) / what comes next"),
    K(SDLK_x, CTRL | NOSHIFT, MAIN, ACT_ENCDEC_GROUP, 1, H_ENCDEC_GROUP),
    K(SDLK_x, CTRL | SHIFT, MAIN, ACT_ENCDEC_GROUP, -1, H_ENCDEC_GROUP),
    K(SDLK_q, NOSHIFT, MAIN, ACT_LINES_HEADS, 0, "line diagram: every head of the layer, each its own colour / one head"),
    K(SDLK_1, SHIFT, MAIN, ACT_HEAD_SWITCH, 0, H_HEAD_SWITCH),
    K(SDLK_2, SHIFT, MAIN, ACT_HEAD_SWITCH, 1, NULL),
    K(SDLK_3, SHIFT, MAIN, ACT_HEAD_SWITCH, 2, NULL),
    K(SDLK_4, SHIFT, MAIN, ACT_HEAD_SWITCH, 3, NULL),
    K(SDLK_5, SHIFT, MAIN, ACT_HEAD_SWITCH, 4, NULL),
    K(SDLK_6, SHIFT, MAIN, ACT_HEAD_SWITCH, 5, NULL),
    K(SDLK_7, SHIFT, MAIN, ACT_HEAD_SWITCH, 6, NULL),
    K(SDLK_8, SHIFT, MAIN, ACT_HEAD_SWITCH, 7, NULL),
    K(SDLK_9, SHIFT, MAIN, ACT_HEAD_SWITCH, 8, NULL),
    K(SDLK_0, SHIFT, MAIN, ACT_HEAD_SWITCH, 9, NULL),
    K(SDLK_1, ALT, MAIN, ACT_HEAD_SWITCH, 10, H_HEAD_SWITCH),
    K(SDLK_2, ALT, MAIN, ACT_HEAD_SWITCH, 11, NULL),
    K(SDLK_3, ALT, MAIN, ACT_HEAD_SWITCH, 12, NULL),
    K(SDLK_4, ALT, MAIN, ACT_HEAD_SWITCH, 13, NULL),
    K(SDLK_5, ALT, MAIN, ACT_HEAD_SWITCH, 14, NULL),
    K(SDLK_6, ALT, MAIN, ACT_HEAD_SWITCH, 15, NULL),
    /* the model view is shown */
    ROW(SDLK_UP, 0, GRID, ACT_GRID_MOVE, -1, 0, 0.0f, H_GRID),
    ROW(SDLK_DOWN, 0, GRID, ACT_GRID_MOVE, 1, 0, 0.0f, H_GRID),
    ROW(SDLK_LEFT, 0, GRID, ACT_GRID_MOVE, 0, -1, 0.0f, H_GRID),
    ROW(SDLK_RIGHT, 0, GRID, ACT_GRID_MOVE, 0, 1, 0.0f, H_GRID),
    ROW(SDLK_RETURN, 0, GRID, ACT_GRID_OPEN, -1, -1, 0.0f, H_GRID),
    ROW(SDLK_KP_ENTER, 0, GRID, ACT_GRID_OPEN, -1, -1, 0.0f, NULL),
    /* teach mode is on (W): the heatmap paints the target */
    K(SDLK_SPACE, NOSHIFT, TEACH, ACT_TEACH_RUN, -1, "teach: run / pause gradient descent"),
    K(SDLK_PERIOD, NOSHIFT, TEACH, ACT_TEACH_STEP, 0, "teach: one step"),
    K(SDLK_PERIOD, SHIFT, TEACH, ACT_TEACH_PACE, 1, H_TEACH_PACE),
    K(SDLK_COMMA, SHIFT, TEACH, ACT_TEACH_PACE, -1, H_TEACH_PACE),
    K(SDLK_GREATER, 0, TEACH, ACT_TEACH_PACE, 1, NULL), /* a key of its own on some layouts */
    K(SDLK_LESS, 0, TEACH, ACT_TEACH_PACE, -1, NULL),
    K(SDLK_BACKSPACE, 0, TEACH, ACT_TEACH_RESET, 0, "teach: back to the weights from before teaching"),
    ROW(SDLK_RETURN, 0, TEACH, ACT_TEACH_PAINT, -1, -1, -1.0f,
        "teach: paint / erase the query row's cell at the focused key (or click, drag)"),
    K(SDLK_1, 0, TEACH, ACT_TEACH_PRESET, TEACH_SELF, H_TEACH_PRESET),
    K(SDLK_2, 0, TEACH, ACT_TEACH_PRESET, TEACH_PREVIOUS, H_TEACH_PRESET),
    K(SDLK_3, 0, TEACH, ACT_TEACH_PRESET, TEACH_NEXT, H_TEACH_PRESET),
    K(SDLK_4, 0, TEACH, ACT_TEACH_PRESET, TEACH_FIRST, H_TEACH_PRESET),
    K(SDLK_5, 0, TEACH, ACT_TEACH_PRESET, -1, H_TEACH_PRESET),
    K(SDLK_0, 0, TEACH, ACT_TEACH_PRESET, -2, H_TEACH_PRESET),
    K(SDLK_l, NOSHIFT, TEACH, ACT_TEACH_LR, 1, H_TEACH_LR),
    K(SDLK_l, SHIFT, TEACH, ACT_TEACH_LR, -1, H_TEACH_LR),
    K(SDLK_o, 0, TEACH, ACT_TEACH_OPT, 0, "teach: optimiser SGD / Adam"),
    K(SDLK_u, 0, TEACH, ACT_TEACH_TRAIN, 0, "teach: what trains (Wq,Wk \xE2\x86\x92 + x \xE2\x86\x92 + v \xE2\x86\x92 x)"),
    ROW(SDLK_1, 0, MAIN, ACT_EDIT_TARGET, EDIT_WQ, 1, 0.0f, H_TARGET),
    ROW(SDLK_2, 0, MAIN, ACT_EDIT_TARGET, EDIT_WK, 1, 0.0f, H_TARGET),
    ROW(SDLK_3, 0, MAIN, ACT_EDIT_TARGET, EDIT_WV, 1, 0.0f, H_TARGET),
    ROW(SDLK_4, 0, MAIN, ACT_EDIT_TARGET, EDIT_WO, 1, 0.0f, H_TARGET),
    ROW(SDLK_5, 0, MAIN, ACT_EDIT_TARGET, EDIT_X, 1, 0.0f, H_TARGET),
    ROW(SDLK_6, 0, MAIN, ACT_EDIT_TARGET, EDIT_V, 1, 0.0f, H_TARGET),
    /* the keyboard from panel to panel: sentence, second sentence, heatmap,
     * editor (the bars handle Tab themselves while typing) */
    K(SDLK_TAB, NOSHIFT, MAIN, ACT_EDIT_FOCUS, 1, H_FOCUS),
    K(SDLK_TAB, SHIFT, MAIN, ACT_FOCUS_KEYS, -1, H_FOCUS),
    K(SDLK_TAB, NOSHIFT, EDITOR, ACT_FOCUS_SENTENCE, -1, NULL),
    K(SDLK_TAB, SHIFT, EDITOR, ACT_EDIT_FOCUS, 0, NULL),
    /* the weight editor has the keyboard (after a click on it) */
    K(SDLK_ESCAPE, 0, EDITOR, ACT_EDIT_FOCUS, 0, NULL),
    ROW(SDLK_UP, 0, EDITOR, ACT_EDIT_MOVE, -1, 0, 0.0f, H_EDIT_KEYS),
    ROW(SDLK_DOWN, 0, EDITOR, ACT_EDIT_MOVE, 1, 0, 0.0f, H_EDIT_KEYS),
    ROW(SDLK_LEFT, 0, EDITOR, ACT_EDIT_MOVE, 0, -1, 0.0f, H_EDIT_KEYS),
    ROW(SDLK_RIGHT, 0, EDITOR, ACT_EDIT_MOVE, 0, 1, 0.0f, H_EDIT_KEYS),
    K(SDLK_RETURN, 0, EDITOR, ACT_EDIT_TYPE, 0, H_EDIT_KEYS),
    K(SDLK_KP_ENTER, 0, EDITOR, ACT_EDIT_TYPE, 0, NULL),
    /* + and − are mirror images: Shift (which makes + on a US keyboard)
     * changes nothing; Alt is the fine step */
    ROW(SDLK_PLUS, 0, EDITOR, ACT_NUDGE_CELL, -1, -1, 0.1f, H_NUDGE),
    ROW(SDLK_EQUALS, 0, EDITOR, ACT_NUDGE_CELL, -1, -1, 0.1f, NULL),
    ROW(SDLK_KP_PLUS, 0, EDITOR, ACT_NUDGE_CELL, -1, -1, 0.1f, NULL),
    ROW(SDLK_MINUS, 0, EDITOR, ACT_NUDGE_CELL, -1, -1, -0.1f, H_NUDGE),
    ROW(SDLK_KP_MINUS, 0, EDITOR, ACT_NUDGE_CELL, -1, -1, -0.1f, NULL),
    ROW(SDLK_PLUS, ALT, EDITOR, ACT_NUDGE_CELL, -1, -1, 0.01f, H_NUDGE),
    ROW(SDLK_EQUALS, ALT, EDITOR, ACT_NUDGE_CELL, -1, -1, 0.01f, NULL),
    ROW(SDLK_KP_PLUS, ALT, EDITOR, ACT_NUDGE_CELL, -1, -1, 0.01f, NULL),
    ROW(SDLK_MINUS, ALT, EDITOR, ACT_NUDGE_CELL, -1, -1, -0.01f, H_NUDGE),
    ROW(SDLK_KP_MINUS, ALT, EDITOR, ACT_NUDGE_CELL, -1, -1, -0.01f, NULL),
    /* the wheel over an editor cell (i, j: that cell) */
    ROW(APP_KEY_WHEEL, NOSHIFT, EDIT_CELL, ACT_NUDGE_CELL, 0, 0, 0.1f, H_NUDGE_WHEEL),
    ROW(APP_KEY_WHEEL, SHIFT, EDIT_CELL, ACT_NUDGE_CELL, 0, 0, 0.01f, NULL),
    K(SDLK_0, 0, MAIN, ACT_EDITOR_BUTTON, EBTN_IDENTITY, H_BUTTONS),
    K(SDLK_z, 0, MAIN, ACT_EDITOR_BUTTON, EBTN_ZERO, H_BUTTONS),
    K(SDLK_n, 0, MAIN, ACT_EDITOR_BUTTON, EBTN_RANDOM, H_BUTTONS),
    K(SDLK_x, 0, MAIN, ACT_EDITOR_BUTTON, EBTN_SWAP, H_BUTTONS),
    K(SDLK_DELETE, 0, MAIN, ACT_EDITOR_BUTTON, EBTN_RESET, H_BUTTONS),
    K(SDLK_SPACE, NOSHIFT, MAIN, ACT_STEP_REVEAL, 1, H_STEP),
    K(SDLK_SPACE, SHIFT, MAIN, ACT_STEP_REVEAL, -1, H_STEP),
    K(SDLK_PLUS, 0, MAIN, ACT_ZOOM, 1, H_ZOOM),
    K(SDLK_EQUALS, 0, MAIN, ACT_ZOOM, 1, NULL),
    K(SDLK_KP_PLUS, 0, MAIN, ACT_ZOOM, 1, NULL),
    K(SDLK_MINUS, 0, MAIN, ACT_ZOOM, -1, H_ZOOM),
    K(SDLK_KP_MINUS, 0, MAIN, ACT_ZOOM, -1, NULL),
    /* the wheel over the heatmap and the line diagram */
    K(APP_KEY_WHEEL, CTRL, HEATMAP, ACT_ZOOM, 1, H_ZOOM),
    ROW(APP_KEY_WHEEL, SHIFT, HEATMAP, ACT_PAN, 0, -3, 0.0f, H_ZOOM),
    ROW(APP_KEY_WHEEL, 0, HEATMAP, ACT_PAN, -3, 0, 0.0f, H_ZOOM),
    K(APP_KEY_WHEEL, 0, LINES, ACT_SCROLL_LINES, -3, H_ZOOM),
    /* always, even while typing */
    K(SDLK_z, CTRL | NOSHIFT, ANY, ACT_UNDO, 0, H_UNDO),
    K(SDLK_y, CTRL, ANY, ACT_REDO, 0, H_UNDO),
    K(SDLK_z, CTRL | SHIFT, ANY, ACT_REDO, 0, H_UNDO),
    K(SDLK_s, CTRL | NOSHIFT, ANY, ACT_SAVE, 0, platform_help_save),
    K(SDLK_s, CTRL | SHIFT, ANY, ACT_SAVE, 1, platform_help_save),
    K(SDLK_o, CTRL, ANY, ACT_OPEN_PROMPT, 0, platform_help_open),
    K(SDLK_e, CTRL | NOSHIFT, ANY, ACT_EXPORT, 0, H_EXPORT),
    K(SDLK_l, CTRL, ANY, ACT_EXPORT, 1, H_EXPORT),
    K(SDLK_e, CTRL | SHIFT, ANY, ACT_EXPORT, 2, H_EXPORT),
    K(SDLK_PLUS, CTRL, ANY, ACT_UI_SCALE, 1, H_UI),
    K(SDLK_EQUALS, CTRL, ANY, ACT_UI_SCALE, 1, NULL),
    K(SDLK_KP_PLUS, CTRL, ANY, ACT_UI_SCALE, 1, NULL),
    K(SDLK_MINUS, CTRL, ANY, ACT_UI_SCALE, -1, H_UI),
    K(SDLK_KP_MINUS, CTRL, ANY, ACT_UI_SCALE, -1, NULL),
    K(SDLK_0, CTRL, ANY, ACT_UI_SCALE, 0, H_UI),
    K(SDLK_KP_0, CTRL, ANY, ACT_UI_SCALE, 0, NULL),
    K(SDLK_TAB, CTRL | NOSHIFT, ANY, ACT_SIDE_TAB, 1, H_SIDE),
    K(SDLK_TAB, CTRL | SHIFT, ANY, ACT_SIDE_TAB, -1, H_SIDE),
    K(SDLK_F11, 0, ANY, ACT_FULLSCREEN, 0, "fullscreen"),
    K(SDLK_F1, 0, ANY, ACT_HELP, 0, H_HELP),
    K(SDLK_QUESTION, 0, MAIN, ACT_HELP, 0, H_HELP),
    K(SDLK_q, CTRL, ANY, ACT_QUIT, 0, "quit"),
    /* the help is shown: these close it */
    K(SDLK_ESCAPE, 0, HELP, ACT_HELP, -1, NULL),
    K(SDLK_PAGEDOWN, 0, HELP, ACT_HELP, 2, NULL),
    K(SDLK_DOWN, 0, HELP, ACT_HELP, 2, NULL),
    K(SDLK_PAGEUP, 0, HELP, ACT_HELP, -2, NULL),
    K(SDLK_UP, 0, HELP, ACT_HELP, -2, NULL),
    K(SDLK_QUESTION, 0, HELP, ACT_HELP, -1, NULL),
    K(SDLK_SLASH, 0, HELP, ACT_HELP, -1, NULL),
};

#undef K
#undef ROW
#undef CTRL
#undef SHIFT
#undef NOSHIFT
#undef ALT

const AppKey *app_key_table(int *n)
{
    *n = (int)(sizeof key_table / sizeof key_table[0]);
    return key_table;
}

/* ---- labels and the help ------------------------------------------------------------ */

static const struct {
    SDL_Keycode key;
    const char *name;
} key_names[] = {
    {APP_KEY_WHEEL, "wheel"}, {SDLK_RETURN, "Enter"}, {SDLK_KP_ENTER, "Keypad Enter"},
    {SDLK_ESCAPE, "Esc"}, {SDLK_PLUS, "Plus"}, {SDLK_MINUS, "Minus"},
    {SDLK_KP_PLUS, "Keypad Plus"}, {SDLK_KP_MINUS, "Keypad Minus"}, {SDLK_DELETE, "Del"},
    {SDLK_COMMA, "Comma"}, {SDLK_PERIOD, "Period"},
};

char *app_key_label(const AppKey *k, char *buf, size_t size)
{
    const char *name = NULL;
    for (size_t n = 0; n < sizeof key_names / sizeof key_names[0]; n++)
        if (key_names[n].key == k->key)
            name = key_names[n].name;
    if (!name)
        name = SDL_GetKeyName(k->key); /* "A", "PageUp", "[" ... */
    snprintf(buf, size, "%s%s%s%s", k->mods & KEYMOD_CTRL ? "Ctrl+" : "",
             k->mods & KEYMOD_ALT ? "Alt+" : "", k->mods & KEYMOD_SHIFT ? "Shift+" : "", name);
    return buf;
}

/* Is label one of the ", "-separated keys of keys? */
static int has_label(const char *keys, const char *label)
{
    size_t n = strlen(label);
    for (const char *p = keys; *p;) {
        const char *end = strstr(p, ", ");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, label, n) == 0)
            return 1;
        p += len + (end ? 2 : 0);
    }
    return 0;
}

/* Does row k belong to what the help leaves out of show, or to what the
 * shown source does not take? */
static int help_hides(const AppKey *k, int (*takes)(AppActionKind), unsigned show)
{
    AppActionKind a = k->act.kind;
    if (k->ctx == KEYCTX_TEACH)
        return !(show & APP_HELP_TEACH);
    if (a == ACT_PROBE && !(show & APP_HELP_PROBE))
        return 1;
    if (takes)
        return source_owns(a) && !takes(a);
    int file = k->ctx == KEYCTX_GRID || a == ACT_CYCLE_LAYER || a == ACT_TOGGLE_GRID ||
               a == ACT_TOGGLE_ROLLOUT || a == ACT_TOGGLE_SPECIAL || a == ACT_HEAD_SCORE ||
               a == ACT_GRID_SORT || a == ACT_SCORE_VIEW || a == ACT_LINES_HEADS || a == ACT_HEAD_SWITCH || a == ACT_PROBE ||
               a == ACT_GENERATE || a == ACT_GEN_STEP || a == ACT_ABLATE || a == ACT_LOGIT_LENS ||
               a == ACT_ENCDEC_GROUP;
    return (file && !(show & APP_HELP_FILE)) || (k->ctx == KEYCTX_TEACH && !(show & APP_HELP_TEACH));
}

int app_help_build(ViewHelpLine *lines, int max, char *text, size_t size, unsigned show)
{
    return app_help_build_for(lines, max, text, size, NULL, show);
}

int app_help_build_for(ViewHelpLine *lines, int max, char *text, size_t size,
                       int (*takes)(AppActionKind), unsigned show)
{
    int n_rows, n = 0;
    const AppKey *t = app_key_table(&n_rows);
    size_t used = 0;
    for (int r = 0; r < n_rows && n < max; r++) {
        int seen = !t[r].what || help_hides(&t[r], takes, show);
        for (int k = 0; k < n && !seen; k++)
            seen = strcmp(lines[k].what, t[r].what) == 0;
        if (seen)
            continue;
        /* a new line: the keys of every row with this text, in table order */
        char *keys = text + used;
        size_t len = 0;
        keys[0] = '\0';
        for (int s = r; s < n_rows; s++) {
            char label[64];
            if (!t[s].what || strcmp(t[s].what, t[r].what) != 0 || help_hides(&t[s], takes, show) ||
                has_label(keys, app_key_label(&t[s], label, sizeof label)))
                continue;
            int w = snprintf(keys + len, size - used - len, "%s%s", len ? ", " : "", label);
            if (w < 0 || (size_t)w >= size - used - len)
                return n; /* out of room: the lines so far */
            len += (size_t)w;
        }
        lines[n].keys = keys;
        lines[n].what = t[r].what;
        n++;
        used += len + 1;
    }
    return n;
}

/* ---- keys and the wheel ------------------------------------------------------------- */

/* A row fits the held modifiers when it asks for what is held: a chord
 * with Ctrl does only what a Ctrl row binds (Ctrl+C is not C). */
static int mods_fit(int need, Uint16 mod)
{
    if (!(need & KEYMOD_CTRL) != !(mod & KMOD_CTRL) || !(need & KEYMOD_ALT) != !(mod & KMOD_ALT))
        return 0;
    if ((need & KEYMOD_SHIFT) && !(mod & KMOD_SHIFT))
        return 0;
    if ((need & KEYMOD_NO_SHIFT) && (mod & KMOD_SHIFT))
        return 0;
    return 1;
}

static const AppKey *key_find(SDL_Keycode key, Uint16 mod, KeyContext ctx)
{
    for (size_t r = 0; r < sizeof key_table / sizeof key_table[0]; r++)
        if (key_table[r].key == key && key_table[r].ctx == ctx && mods_fit(key_table[r].mods, mod))
            return &key_table[r];
    return NULL;
}

/* Teach mode is on (for a source with weights to learn). */
static int teaching(const AppState *a)
{
    return a->teach && a->teach->on && a->kind->learnable;
}

static int translate_key(AppState *a, const SDL_KeyboardEvent *ke, AppAction *out)
{
    SDL_Keycode k = ke->keysym.sym;
    Uint16 mod = ke->keysym.mod;
    const AppKey *row = key_find(k, mod, KEYCTX_ANY);
    if (!row && (a->editing_value || a->vs.sentence_focus))
        return -1; /* typing */
    if (!row && a->vs.help)
        row = key_find(k, mod, KEYCTX_HELP);
    if (!row && a->vs.edit_focus)
        row = key_find(k, mod, KEYCTX_EDITOR);
    if (!row && a->vs.grid)
        row = key_find(k, mod, KEYCTX_GRID);
    if (!row && teaching(a))
        row = key_find(k, mod, KEYCTX_TEACH);
    if (!row)
        row = key_find(k, mod, KEYCTX_MAIN);
    if (!row)
        return 0;
    *out = row->act;
    return 1;
}

/* The wheel: its row by the part under the pointer; the row's arguments
 * times the steps turned. */
static int translate_wheel(AppState *a, const SDL_MouseWheelEvent *w, AppAction *out)
{
    const ViewLayout *l = &a->layout;
    int mx = a->vs.mouse_x, my = a->vs.mouse_y, i, j, row, col;
    SDL_Point p = {mx, my};
    KeyContext ctx;
    if (w->which == SDL_TOUCH_MOUSEID)
        return 0;
    if (view_hit_editor(l, mx, my, &row, &col) == 1)
        ctx = KEYCTX_EDIT_CELL;
    else if (SDL_PointInRect(&p, &l->heatmap) || view_hit_cell(l, mx, my, &i, &j))
        ctx = KEYCTX_HEATMAP;
    else if (SDL_PointInRect(&p, &l->lines))
        ctx = KEYCTX_LINES;
    else
        return 0;
    const AppKey *r = key_find(APP_KEY_WHEEL, (Uint16)SDL_GetModState(), ctx);
    if (!r)
        return 0;
    *out = r->act;
    out->i *= w->y;
    out->j *= w->y;
    out->value *= (float)w->y;
    if (ctx == KEYCTX_EDIT_CELL) {
        out->i = row;
        out->j = col;
    }
    return 1;
}

/* ---- clicks and motion ---------------------------------------------------------------- */

/* What teach mode's buttons do: the same as their keys. */
static const AppAction teach_button_actions[TBTN_COUNT] = {
    [TBTN_SELF] = {ACT_TEACH_PRESET, TEACH_SELF, 0, 0.0f},
    [TBTN_PREVIOUS] = {ACT_TEACH_PRESET, TEACH_PREVIOUS, 0, 0.0f},
    [TBTN_NEXT] = {ACT_TEACH_PRESET, TEACH_NEXT, 0, 0.0f},
    [TBTN_FIRST] = {ACT_TEACH_PRESET, TEACH_FIRST, 0, 0.0f},
    [TBTN_CURRENT] = {ACT_TEACH_PRESET, -1, 0, 0.0f},
    [TBTN_CLEAR] = {ACT_TEACH_PRESET, -2, 0, 0.0f},
    [TBTN_RUN] = {ACT_TEACH_RUN, -1, 0, 0.0f},
    [TBTN_STEP] = {ACT_TEACH_STEP, 0, 0, 0.0f},
    [TBTN_RESET] = {ACT_TEACH_RESET, 0, 0, 0.0f},
};


/* A press on a weight-editor cell: the cursor goes there; a double click
 * types a value, a single one starts scrubbing. */
static int press_editor_cell(AppState *a, const SDL_MouseButtonEvent *b, int row, int col,
                             AppAction *out)
{
    int rows, cols;
    Uint32 now = b->timestamp;
    int dbl = b->clicks >= 2 || (now - a->last_click_time < 400 && a->last_click_row == row &&
                                 a->last_click_col == col);
    a->last_click_time = now;
    a->last_click_row = row;
    a->last_click_col = col;
    /* the layout may predate the last change of T (events come in batches
     * between frames): cells are checked against the model */
    if (!editor_cell(a, row, col, &rows, &cols))
        return 0;
    out[0] = (AppAction){ACT_EDIT_CELL, row, col, 0.0f};
    out[1] = dbl ? (AppAction){ACT_EDIT_TYPE, 0, 0, 0.0f} : (AppAction){ACT_DRAG_BEGIN, b->y, 0, 0.0f};
    return 2;
}

/* Over a colour bar or its tick labels (the heatmap's, or the model
 * view's): a click there cycles the colour scale. */
static int on_colorbar(const AppState *a, int x, int y)
{
    const FigColorbar *bars[2] = {a->vs.grid ? NULL : &a->layout.heat.cb,
                                  a->vs.grid || a->vs.overview ? &a->layout.grid_fig.cb : NULL};
    for (int k = 0; k < 2; k++) {
        const FigRect *b = bars[k] ? &bars[k]->bar : NULL;
        if (b && b->w > 0 && b->h > 0 && x >= b->x && x < bars[k]->caption_x && y >= b->y &&
            y < b->y + b->h)
            return 1;
    }
    return 0;
}

/* What a left press hits, the sentence bar aside: a control, a cell, a label,
 * a token of the line diagram or a part of the editor (two actions for a
 * cell of it). Returns how many actions. */
static int press(AppState *a, const SDL_MouseButtonEvent *b, AppAction *out)
{
    const ViewLayout *l = &a->layout;
    int x = b->x, y = b->y, i, j, side, row, col, Tq, Tk;
    a->kind->shown_size(a, &Tq, &Tk);
    int c = view_hit_control(l, x, y);
    if (c >= 0 && c < a->vs.n_ctl) {
        *out = a->ctl_act[c];
        return 1;
    }
    int st = view_hit_side_tab(l, x, y);
    if (st >= 0) {
        *out = (AppAction){ACT_SIDE_TAB, 0, st, 0.0f};
        return 1;
    }
    int tb = teaching(a) ? view_hit_teach_button(l, x, y) : -1;
    if (tb >= 0) {
        *out = teach_button_actions[tb];
        return 1;
    }
    if (on_colorbar(a, x, y)) {
        *out = (AppAction){ACT_CYCLE_CSCALE, 0, 0, 0.0f};
        return 1;
    }
    if (a->vs.grid && a->vs.score_map && view_hit_score_map(l, x, y, &i, &j)) { /* the score overview */
        *out = (AppAction){ACT_GRID_OPEN, i, j, 0.0f};
        return 1;
    }
    int sw = a->vs.line_heads ? view_hit_head_swatch(l, x, y) : -1;
    if (sw >= 0) { /* a head's colour in the line diagram */
        *out = (AppAction){ACT_HEAD_SWITCH, sw, 0, 0.0f};
        return 1;
    }
    if ((a->vs.grid || a->vs.overview) && view_hit_grid(l, x, y, &i, &j)) { /* the model view or the overview */
        *out = (AppAction){ACT_GRID_OPEN, i, j, 0.0f};
        return 1;
    }
    /* hits are checked against the model, not the layout (see above) */
    if (teaching(a) && view_hit_cell(l, x, y, &i, &j) && i < Tq && j < Tk) {
        int erase = b->button == SDL_BUTTON_RIGHT || (SDL_GetModState() & KMOD_SHIFT);
        out[0] = (AppAction){ACT_TEACH_PAINT, i, j, erase ? 0.0f : 1.0f};
        out[1] = (AppAction){ACT_SELECT_CELL, i, j, 0.0f};
        return 2;
    }
    if (view_hit_cell(l, x, y, &i, &j) && i < Tq && j < Tk) {
        *out = (AppAction){ACT_SELECT_CELL, i, j, 0.0f};
        return 1;
    }
    if (view_hit_row_label(l, x, y, &i) && i < Tq) {
        *out = (AppAction){ACT_SELECT_QUERY, i, 0, 0.0f};
        return 1;
    }
    if (view_hit_line_token(l, x, y, &i, &side) && i < (side ? Tk : Tq)) {
        *out = (AppAction){side ? ACT_FOCUS_KEY : ACT_SELECT_QUERY, i, 0, 0.0f};
        return 1;
    }
    switch (view_hit_editor(l, x, y, &row, &col)) {
    case 1: return press_editor_cell(a, b, row, col, out);
    case 2: *out = (AppAction){ACT_EDIT_TARGET, row, 1, 0.0f}; return 1;
    case 3: *out = (AppAction){ACT_EDITOR_BUTTON, row, 0, 0.0f}; return 1;
    default: return 0;
    }
}

static int translate_press(AppState *a, const SDL_MouseButtonEvent *b, AppAction *out)
{
    int teach_erase = b->button == SDL_BUTTON_RIGHT && teaching(a) && !a->vs.help;
    if (b->button != SDL_BUTTON_LEFT && !teach_erase)
        return 0;
    if (a->vs.help) { /* a click closes the help and does nothing else */
        *out = (AppAction){ACT_HELP, -1, 0, 0.0f};
        return 1;
    }
    if (SDL_PointInRect(&(SDL_Point){b->x, b->y}, &a->layout.sentence)) {
        int cursor = a->view && !a->prompt ? view_sentence_offset(a->view, &a->vs, &a->layout, b->x) : -1;
        *out = (AppAction){ACT_FOCUS_SENTENCE, cursor, 0, 0.0f};
        return 1;
    }
    if (a->vs.keys_bar && SDL_PointInRect(&(SDL_Point){b->x, b->y}, &a->layout.keys_bar)) {
        int cursor = a->view && !a->prompt ? view_keys_offset(a->view, &a->vs, &a->layout, b->x) : -1;
        *out = (AppAction){ACT_FOCUS_KEYS, cursor, 0, 0.0f};
        return 1;
    }
    int n = 0;
    if (a->vs.sentence_focus && !a->prompt) /* a click elsewhere leaves the bar */
        out[n++] = (AppAction){ACT_LEAVE_SENTENCE, 0, 0, 0.0f};
    return n + press(a, b, out + n);
}

static int translate_motion(AppState *a, const SDL_MouseMotionEvent *mm, AppAction *out)
{
    int i, j;
    out[0] = (AppAction){ACT_POINTER, mm->x, mm->y, 0.0f};
    if (a->dragging) {
        int fine = (SDL_GetModState() & KMOD_SHIFT) || (mm->state & SDL_BUTTON_RMASK);
        out[1] = (AppAction){ACT_DRAG, mm->y, 0, fine ? 0.002f : 0.02f};
        return 2;
    }
    int Tq, Tk, l, h;
    a->kind->shown_size(a, &Tq, &Tk);
    if (a->vs.grid) { /* the model view: the cell of the small map under the pointer */
        const FigureGrid *g = &a->layout.grid_fig;
        i = j = -1;
        if (view_hit_grid(&a->layout, mm->x, mm->y, &l, &h) && g->cell > 0) {
            FigRect r = figure_grid_map_rect(g, l, h);
            i = (int)((mm->y - r.y) / g->cell);
            j = (int)((mm->x - r.x) / g->cell);
        }
        out[1] = (AppAction){ACT_HOVER, i, j, 0.0f};
        return 2;
    }
    if (!view_hit_cell(&a->layout, mm->x, mm->y, &i, &j) || i >= Tq || j >= Tk)
        i = j = -1;
    out[1] = (AppAction){ACT_HOVER, i, j, 0.0f};
    const AppTeach *t = a->teach;
    if (t && t->on && t->paint >= 0 && i >= 0 && (i != t->last_i || j != t->last_j)) {
        out[2] = (AppAction){ACT_TEACH_PAINT, i, j, (float)t->paint}; /* a paint drag */
        return 3;
    }
    return 2;
}

int app_translate(AppState *a, const SDL_Event *e, AppAction *out, int max)
{
    AppAction act[4];
    int n = 0;
    switch (e->type) {
    case SDL_QUIT: act[n++] = (AppAction){ACT_QUIT, 0, 0, 0.0f}; break;
    case SDL_KEYDOWN: n = translate_key(a, &e->key, act); break;
    case SDL_TEXTINPUT: return a->editing_value || a->vs.sentence_focus ? -1 : 0;
    case SDL_TEXTEDITING: return a->vs.sentence_focus && !a->editing_value ? -1 : 0;
    case SDL_DROPFILE: return e->drop.file ? -1 : 0;
    case SDL_MOUSEBUTTONDOWN: n = translate_press(a, &e->button, act); break;
    case SDL_MOUSEBUTTONUP: act[n++] = (AppAction){ACT_DRAG_END, 0, 0, 0.0f}; break;
    case SDL_MOUSEMOTION: n = translate_motion(a, &e->motion, act); break;
    case SDL_MOUSEWHEEL: n = translate_wheel(a, &e->wheel, act); break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED || e->window.event == SDL_WINDOWEVENT_RESIZED)
            act[n++] = (AppAction){ACT_WINDOW_SIZE, e->window.data1, e->window.data2, 0.0f};
        else
            act[n++] = (AppAction){ACT_REDRAW, 0, 0, 0.0f};
        break;
    default: break;
    }
    if (n < 0)
        return n;
    if (n > max)
        n = max;
    memcpy(out, act, (size_t)n * sizeof *act);
    return n;
}
