/* The weight editor's edits: the cell under the cursor (Wq, Wk, Wv, Wo or
 * the additive v of the shown head, or X, the word vectors of both sentences), nudges, exact values, scrubbing by
 * drag, and the buttons (identity, zero, random, swap, reset). */
#include "app_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* attn_params_matrix's index of the edited weights: the v tab's is the
 * head's v (4), or vb (5) in basic mode. */
static int edit_which(const AppState *a)
{
    if (a->vs.edit_target == EDIT_V)
        return a->m->cfg.mode == ATTN_MODE_BASIC ? 5 : 4;
    return (int)a->vs.edit_target;
}

float *editor_cell(AppState *a, int row, int col, int *rows, int *cols)
{
    Model *m = a->m;
    if (a->vs.edit_target == EDIT_X) { /* the second sentence's rows after the first's */
        *rows = m->T + (m->cross ? m->Tk : 0);
        *cols = m->d;
        if (row < 0 || col < 0 || row >= *rows || col >= m->d)
            return NULL;
        if (row >= m->T)
            return m->Ek + (size_t)(row - m->T) * m->d + col;
        return m->E + (size_t)row * m->d + col;
    }
    int head = a->vs.head < 0 ? 0 : a->vs.head;
    float *W = attn_params_matrix(&m->params, edit_which(a), head, rows, cols);
    if (row < 0 || col < 0 || row >= *rows || col >= *cols)
        return NULL;
    return W + (size_t)row * *cols + col;
}

void editor_set(AppState *a, int row, int col, float v)
{
    int rows, cols;
    float *p = editor_cell(a, row, col, &rows, &cols);
    if (!p)
        return;
    if (!isfinite(v))
        return;
    if (v > 1e4f) v = 1e4f;
    if (v < -1e4f) v = -1e4f;
    if (a->vs.edit_target == EDIT_X) {
        /* one vector per word: a word in both sentences changes in both */
        Model *m = a->m;
        float vec[ATTN_MAX_DIM];
        memcpy(vec, p - col, (size_t)m->d * sizeof(float));
        vec[col] = v;
        const char *word = row < m->T ? tok_text(&m->toks, row) : tok_text(&m->ktoks, row - m->T);
        model_set_word_vector(m, word, vec);
    } else {
        *p = v;
    }
    app_recompute(a);
}

float editor_get(AppState *a, int row, int col)
{
    int rows, cols;
    float *p = editor_cell(a, row, col, &rows, &cols);
    return p ? *p : 0.0f;
}

void editor_button(AppState *a, int b)
{
    Model *m = a->m;
    undo_push(a);
    switch (b) {
    case EBTN_IDENTITY:
        if (a->vs.edit_target == EDIT_X) {
            model_clear_word_vectors(m);
            app_status(a, 0, "embeddings back to the table's vectors");
        } else {
            attn_params_identity(&m->params);
            m->has_seed = 0;
            app_status(a, 0, "identity slices (the default weights)");
        }
        break;
    case EBTN_ZERO: {
        int rows, cols, head = a->vs.head < 0 ? 0 : a->vs.head;
        if (a->vs.edit_target == EDIT_X) {
            app_status(a, 1, "zero applies to weight matrices; use reset for X");
            return;
        }
        float *W = attn_params_matrix(&m->params, edit_which(a), head, &rows, &cols);
        memset(W, 0, (size_t)rows * cols * sizeof(float));
        app_status(a, 0, "matrix set to zero");
        break;
    }
    case EBTN_RANDOM: {
        uint64_t seed = ++a->next_seed;
        model_set_seed(m, seed);
        a->vs.seed_shown = seed;
        a->vs.has_seed_shown = 1;
        app_status(a, 0, "random Xavier weights, seed %llu (--seed %llu gives them again)",
                   (unsigned long long)seed, (unsigned long long)seed);
        break;
    }
    case EBTN_SWAP: {
        float *t = m->params.Wq;
        m->params.Wq = m->params.Wk;
        m->params.Wk = t;
        app_status(a, 0, "Wq and Wk swapped: the matrix is transposed");
        break;
    }
    case EBTN_RESET:
        model_clear_word_vectors(m);
        m->has_seed = 0;
        attn_params_identity(&m->params);
        app_status(a, 0, "all weights and embeddings reset");
        break;
    default:
        break;
    }
    app_recompute(a);
}

/* Move the cursor by (dr, dc), kept inside the matrix (the layout's size
 * when drawn, else the model's). */
void editor_move(AppState *a, int dr, int dc)
{
    int rows = a->layout.edit_rows, cols = a->layout.edit_cols;
    if (!rows || !cols) {
        int r2, c2;
        editor_cell(a, 0, 0, &r2, &c2);
        rows = r2;
        cols = c2;
    }
    long long r = (long long)a->vs.edit_row + dr, c = (long long)a->vs.edit_col + dc;
    a->vs.edit_row = (int)SDL_clamp(r, 0, rows > 0 ? rows - 1 : 0);
    a->vs.edit_col = (int)SDL_clamp(c, 0, cols > 0 ? cols - 1 : 0);
    a->dirty = 1;
}

/* The cell an action names: (row, col), where the cursor then goes, or the
 * cursor's when row < 0. 0 when (row, col) is outside the matrix. */
static int pick_cell(AppState *a, int row, int col)
{
    int rows, cols;
    if (row < 0)
        return 1;
    if (!editor_cell(a, row, col, &rows, &cols))
        return 0;
    a->vs.edit_row = row;
    a->vs.edit_col = col;
    return 1;
}

void editor_nudge(AppState *a, int row, int col, float step)
{
    if (!pick_cell(a, row, col))
        return;
    undo_push(a);
    editor_set(a, a->vs.edit_row, a->vs.edit_col,
               editor_get(a, a->vs.edit_row, a->vs.edit_col) + step);
}

void editor_set_value(AppState *a, int row, int col, float v)
{
    if (!pick_cell(a, row, col))
        return;
    undo_push(a);
    editor_set(a, a->vs.edit_row, a->vs.edit_col, v);
}

/* A box over the cursor's cell takes the exact value (text.c types into it). */
void editor_begin_typing(AppState *a)
{
    a->editing_value = 1;
    snprintf(a->edit_buf, sizeof a->edit_buf, "%.4g",
             (double)editor_get(a, a->vs.edit_row, a->vs.edit_col));
    a->vs.edit_text = a->edit_buf;
    a->edit_fresh = 1;
    SDL_StartTextInput();
    a->dirty = 1;
}

/* Scrubbing: the pointer's height above y0 sets the cursor's cell. */
void editor_drag_begin(AppState *a, int y)
{
    a->dragging = 1;
    a->drag_moved = 0;
    a->drag_y0 = y;
    a->drag_v0 = editor_get(a, a->vs.edit_row, a->vs.edit_col);
    a->dirty = 1;
}

void editor_drag(AppState *a, int y, float step)
{
    if (!a->dragging)
        return;
    long long dy = (long long)a->drag_y0 - y;
    if (dy == 0 && !a->drag_moved)
        return;
    if (!a->drag_moved) {
        undo_push(a); /* the whole drag is one undo step */
        a->drag_moved = 1;
    }
    editor_set(a, a->vs.edit_row, a->vs.edit_col, a->drag_v0 + (float)dy * step);
}

void editor_drag_end(AppState *a)
{
    if (a->dragging && a->drag_moved)
        app_status(a, 0, "value %.3f (Ctrl+Z undoes)",
                   (double)editor_get(a, a->vs.edit_row, a->vs.edit_col));
    a->dragging = 0;
    a->dirty = 1;
}
