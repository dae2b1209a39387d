/* What the files of src/app share and nothing else uses: the recompute and
 * undo of app.c, the weight editor's cells (editor.c) and the text fields
 * (text.c). Not an API; see app_state.h, action.h and input.h for that. */
#ifndef ATTNVIZ_APP_INTERNAL_H
#define ATTNVIZ_APP_INTERNAL_H

#include "attnviz/app_state.h"

/* app.c: the model after a change of settings, weights or text (selection
 * kept in range, marked dirty and unsaved). */
void app_recompute(AppState *a);
/* The sentence bar's text changed: the shown source computes again. */
void app_sync_text(AppState *a);
/* The second bar's text changed: the same. */
void app_sync_keys(AppState *a);
/* actions.c: the query's row scrolled (lines) and panned (heatmap) into view */
void app_keep_query_visible(AppState *a);
/* Put text into the second bar's buffer (nothing computed); 0 or -1. */
int app_keys_store(AppState *a, const char *text);
/* Room for n bytes of text and its NUL; 0 or -1 (out of memory). */
int app_text_reserve(AppState *a, size_t n);
/* The same for a buffer and its capacity (the second bar's). */
int app_buf_reserve(char **buf, size_t *cap, size_t n);
/* Record the weights and vectors before an edit (drops the redo branch). */
void undo_push(AppState *a);
/* Forget the step undo_push just recorded (the edit did not happen). */
void undo_drop_last(AppState *a);
void app_undo(AppState *a);
/* An undo step's contents: taken from m (0 or -1), put back, freed. */
int app_snap_take(AppSnapshot *s, const Model *m);
void app_snap_restore(const AppSnapshot *s, Model *m);
void app_snap_free(AppSnapshot *s);
void app_redo(AppState *a);

/* editor.c: the cell (row, col) of the matrix the editor shows, or NULL
 * outside it; *rows, *cols its size. */
float *editor_cell(AppState *a, int row, int col, int *rows, int *cols);
float editor_get(AppState *a, int row, int col);
/* Store v (finite, clamped to ±10⁴) and recompute; an X cell becomes an
 * edited word vector. No undo step. */
void editor_set(AppState *a, int row, int col, float v);
/* Add step to (row, col), or to the cursor's cell when row < 0: one undo step. */
void editor_nudge(AppState *a, int row, int col, float step);
/* Set (row, col), or the cursor's cell when row < 0, to v: one undo step. */
void editor_set_value(AppState *a, int row, int col, float v);
void editor_button(AppState *a, int b);
void editor_move(AppState *a, int dr, int dc);
void editor_begin_typing(AppState *a);
void editor_drag_begin(AppState *a, int y);
void editor_drag(AppState *a, int y, float step);
void editor_drag_end(AppState *a);

/* text.c: a key, text or composition for the field that has the keyboard
 * (a typed value, the sentence bar or a file-name prompt). */
void text_event(AppState *a, const SDL_Event *e);
/* The bar asks for a file name (PROMPT_SAVE or PROMPT_OPEN). */
void text_prompt_start(AppState *a, AppPrompt p, const char *label, const char *initial);

/* actions.c: the sentence bar takes the keyboard, the cursor at byte
 * offset cursor (-1: the end). */
void app_focus_sentence(AppState *a, int cursor);
/* app.c: save the sentence's session (the model, the view) at path. */
int app_save_sentence_session(AppState *a, const char *path);

/* compare.c: V pins what the heatmap shows as the reference (the map and
 * the settings, weights, sentences and edited vectors that made it), V
 * again unpins; the status bar says which. */
void compare_toggle(AppState *a);
/* Fill a->vs's compare fields (cmp_ref, cmp_diff, the labels, what differs)
 * for the maps a->vs shows now: after view_state_set_model, every draw.
 * Unpinned, or showing an attention file: cmp_ref NULL. */
void compare_view(AppState *a);
/* The window's export of a comparison: the three panels as one PNG at
 * png_path (s: the export's view state, its maps set from the model) and
 * the difference matrix as CSV beside it (.csv); the status bar names
 * both. 0 or -1. */
int compare_export(AppState *a, ViewState *s, const char *png_path);
void compare_free(AppState *a);

#endif
