/* The application: SDL events become small actions on the AppState (toggle
 * scaling, pick a query, type a letter, scrub a weight ...), each followed by
 * a recompute of the model. Nothing here draws; app_draw hands the state to
 * the view. */
#include "attnviz/app_state.h"
#include "attnviz/app.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ---------------------------------------------------------------- */

void app_status(AppState *a, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_err = error;
}

static void recompute(AppState *a)
{
    int rc = model_compute(a->m);
    if (rc < 0)
        app_status(a, 1, "cannot compute attention: %s", attn_strerror(rc));
    int T = a->m->T;
    if (a->vs.query >= T)
        a->vs.query = T - 1;
    if (a->vs.query < 0 && T > 0)
        a->vs.query = 0;
    if (a->vs.key >= T)
        a->vs.key = T - 1;
    if (a->vs.head >= a->m->res.h)
        a->vs.head = 0;
    if (a->vs.edit_target == EDIT_X && a->vs.edit_row >= T)
        a->vs.edit_row = T > 0 ? T - 1 : 0;
    a->dirty = 1;
    a->unsaved = 1;
}

static int text_reserve(AppState *a, size_t n)
{
    if (n + 1 <= a->text_cap)
        return 0;
    size_t cap = a->text_cap ? a->text_cap : 256;
    while (cap < n + 1)
        cap *= 2;
    char *p = realloc(a->text, cap);
    if (!p)
        return -1;
    a->text = p;
    a->text_cap = cap;
    return 0;
}

static void sync_text(AppState *a)
{
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
    recompute(a);
}

void app_set_sentence(AppState *a, const char *text)
{
    size_t n = strlen(text);
    if (n > APP_TEXT_MAX)
        n = APP_TEXT_MAX;
    if (text_reserve(a, n) < 0) {
        app_status(a, 1, "out of memory");
        return;
    }
    memmove(a->text, text, n);
    a->text[n] = '\0';
    a->text_len = n;
    a->vs.cursor = (int)n;
    a->status_err = 0;
    sync_text(a);
}

/* ---- undo --------------------------------------------------------------------- */

static void snap_free(AppSnapshot *s)
{
    attn_params_destroy(&s->params);
    for (int i = 0; i < s->n_over; i++)
        free(s->over_word[i]);
    free(s->over_word);
    free(s->over_vec);
    memset(s, 0, sizeof *s);
}

static int snap_take(AppSnapshot *s, const Model *m)
{
    memset(s, 0, sizeof *s);
    if (attn_params_copy(&s->params, &m->params) < 0)
        return -1;
    s->n_over = m->n_over;
    if (m->n_over) {
        s->over_word = calloc((size_t)m->n_over, sizeof *s->over_word);
        s->over_vec = malloc((size_t)m->n_over * m->d * sizeof(float));
        if (!s->over_word || !s->over_vec) {
            snap_free(s);
            return -1;
        }
        for (int i = 0; i < m->n_over; i++)
            s->over_word[i] = strdup(m->over_word[i]);
        memcpy(s->over_vec, m->over_vec, (size_t)m->n_over * m->d * sizeof(float));
    }
    return 0;
}

static void snap_restore(const AppSnapshot *s, Model *m)
{
    attn_params_copy(&m->params, &s->params);
    m->cfg.heads = s->params.h;
    model_clear_word_vectors(m);
    for (int i = 0; i < s->n_over; i++)
        model_set_word_vector(m, s->over_word[i], s->over_vec + (size_t)i * m->d);
}

/* Record the state before an edit: entries after the current position are
 * dropped (no redo after a new edit). */
static void undo_push(AppState *a)
{
    for (int i = a->undo_pos; i < a->undo_n; i++)
        snap_free(&a->undo[i]);
    a->undo_n = a->undo_pos;
    if (a->undo_n == APP_UNDO_MAX) {
        snap_free(&a->undo[0]);
        memmove(a->undo, a->undo + 1, (APP_UNDO_MAX - 1) * sizeof a->undo[0]);
        a->undo_n--;
    }
    if (snap_take(&a->undo[a->undo_n], a->m) == 0)
        a->undo_n++;
    a->undo_pos = a->undo_n;
}

/* Forget the step undo_push just recorded (the edit did not happen). */
static void undo_drop_last(AppState *a)
{
    if (a->undo_n > 0 && a->undo_pos == a->undo_n) {
        snap_free(&a->undo[--a->undo_n]);
        a->undo_pos = a->undo_n;
    }
}

static void undo(AppState *a)
{
    if (a->undo_pos == 0) {
        app_status(a, 0, "nothing to undo");
        return;
    }
    /* keep the present for redo */
    if (a->undo_pos == a->undo_n) {
        undo_push(a);
        a->undo_pos--;
    }
    a->undo_pos--;
    snap_restore(&a->undo[a->undo_pos], a->m);
    app_status(a, 0, "undone (%d more)", a->undo_pos);
    recompute(a);
}

static void redo(AppState *a)
{
    if (a->undo_pos + 1 >= a->undo_n) {
        app_status(a, 0, "nothing to redo");
        return;
    }
    a->undo_pos++;
    snap_restore(&a->undo[a->undo_pos], a->m);
    if (a->undo_pos == a->undo_n - 1) {
        snap_free(&a->undo[a->undo_n - 1]);
        a->undo_n--;
    }
    app_status(a, 0, "redone");
    recompute(a);
}

/* ---- set-up -------------------------------------------------------------------- */

int app_init(AppState *a, Model *m, const Options *o, SentenceList *sentences)
{
    memset(a, 0, sizeof *a);
    a->m = m;
    m->keep_window_matrices = 1; /* R and H together show averaged scores */
    a->opt = o;
    a->sentences = sentences;
    a->ui_scale = 1.0f;
    a->dpi_scale = 1.0f;
    a->win_w = 1280;
    a->win_h = 800;
    a->next_seed = (uint64_t)time(NULL) % 100000;
    a->export_dir = o && o->export_dir ? o->export_dir : ".";
    a->last_click_row = a->last_click_col = -1;
    view_state_init(&a->vs, m);
    a->vs.dark = o && o->theme_set ? o->theme_dark : 1;
    int cmap = o && o->colormap ? colormap_from_name(o->colormap) : -1;
    if (cmap >= 0)
        a->vs.cmap = (ColormapId)cmap;
    if (o)
        a->vs.matrix = (ModelMatrix)o->matrix;
    if (o && o->head)
        a->vs.head = o->head;
    if (o && o->session)
        snprintf(a->session_path, sizeof a->session_path, "%s", o->session);
    const char *t = m->text ? m->text : "";
    if (text_reserve(a, strlen(t)) < 0)
        return -ATTN_E_NOMEM;
    app_set_sentence(a, t);
    a->vs.query = o && o->query >= 0 && o->query < m->T ? o->query : (m->T > 1 ? 1 : 0);
    return 0;
}

void app_free(AppState *a)
{
    for (int i = 0; i < a->undo_n; i++)
        snap_free(&a->undo[i]);
    free(a->text);
    a->text = NULL;
}

/* ---- actions --------------------------------------------------------------------- */

static void set_heads(AppState *a, int h)
{
    int d = a->m->d;
    if (h < 1 || h > d || h > ATTN_MAX_HEADS) {
        app_status(a, 1, "%d heads: must be between 1 and %d", h, d < ATTN_MAX_HEADS ? d : ATTN_MAX_HEADS);
        return;
    }
    undo_push(a);
    if (model_set_heads(a->m, h) < 0) {
        app_status(a, 1, "%d heads do not divide d = %d", h, d);
        return;
    }
    a->vs.head = 0;
    app_status(a, 0, "%d head%s, dk = %d", h, h == 1 ? "" : "s", d / h);
    recompute(a);
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
    recompute(a);
}

static void sentence_step(AppState *a, int dir)
{
    if (!a->sentences || a->sentences->n == 0) {
        app_status(a, 0, "no sentences file loaded");
        return;
    }
    int n = a->sentences->n;
    a->sentence_idx = ((a->sentence_idx + dir) % n + n) % n;
    app_set_sentence(a, a->sentences->text[a->sentence_idx]);
    app_status(a, 0, "sentence %d of %d", a->sentence_idx + 1, n);
}

static void control(AppState *a, int c)
{
    AttnConfig *cfg = &a->m->cfg;
    switch (c) {
    case CTL_MODE:
        cfg->mode = cfg->mode == ATTN_MODE_BASIC ? ATTN_MODE_LEARNED : ATTN_MODE_BASIC;
        app_status(a, 0, cfg->mode == ATTN_MODE_BASIC ? "basic self-attention: Q = K = V = X"
                                                      : "learned: Q = X\xC2\xB7Wq, K = X\xC2\xB7Wk, V = X\xC2\xB7Wv");
        break;
    case CTL_SCALE: cfg->scale = !cfg->scale; break;
    case CTL_MASK: cfg->causal = !cfg->causal; break;
    case CTL_POSENC: cfg->posenc = !cfg->posenc; break;
    case CTL_HEAD: cycle_head(a, 1); return;
    case CTL_HEADS_DOWN: step_heads(a, -1); return;
    case CTL_HEADS_UP: step_heads(a, 1); return;
    case CTL_TEMP: set_temperature(a, cfg->temperature * 1.25f); return;
    case CTL_MATRIX: a->vs.matrix = (ModelMatrix)((a->vs.matrix + 1) % 3); a->dirty = 1; return;
    case CTL_CMAP: a->vs.cmap = (ColormapId)((a->vs.cmap + 1) % CMAP_SEQUENTIAL_COUNT); a->dirty = 1; return;
    case CTL_ALL: a->vs.all_lines = !a->vs.all_lines; a->dirty = 1; return;
    case CTL_EXPORT: app_export(a, 0); return;
    case CTL_HELP: a->vs.help = !a->vs.help; a->dirty = 1; return;
    default: return;
    }
    recompute(a);
}

/* ---- weight editor ------------------------------------------------------------ */

static float *edit_cell(AppState *a, int row, int col, int *rows, int *cols)
{
    Model *m = a->m;
    if (a->vs.edit_target == EDIT_X) {
        *rows = m->T;
        *cols = m->d;
        if (row >= m->T || col >= m->d)
            return NULL;
        return m->E + (size_t)row * m->d + col;
    }
    int head = a->vs.head < 0 ? 0 : a->vs.head;
    float *W = attn_params_matrix(&m->params, (int)a->vs.edit_target, head, rows, cols);
    if (row >= *rows || col >= *cols)
        return NULL;
    return W + (size_t)row * *cols + col;
}

/* Store v in the editor cell (an X cell becomes an edited word vector). */
static void edit_set(AppState *a, int row, int col, float v)
{
    int rows, cols;
    float *p = edit_cell(a, row, col, &rows, &cols);
    if (!p)
        return;
    if (!isfinite(v))
        return;
    if (v > 1e4f) v = 1e4f;
    if (v < -1e4f) v = -1e4f;
    if (a->vs.edit_target == EDIT_X) {
        Model *m = a->m;
        float vec[ATTN_MAX_DIM];
        memcpy(vec, m->E + (size_t)row * m->d, (size_t)m->d * sizeof(float));
        vec[col] = v;
        model_set_word_vector(m, tok_text(&m->toks, row), vec);
    } else {
        *p = v;
    }
    recompute(a);
}

static float edit_get(AppState *a, int row, int col)
{
    int rows, cols;
    float *p = edit_cell(a, row, col, &rows, &cols);
    return p ? *p : 0.0f;
}

static void editor_button(AppState *a, int b)
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
        float *W = attn_params_matrix(&m->params, (int)a->vs.edit_target, head, &rows, &cols);
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
    recompute(a);
}

static void editor_move(AppState *a, int dr, int dc)
{
    int rows = a->layout.edit_rows, cols = a->layout.edit_cols;
    if (!rows || !cols) {
        int r2, c2;
        edit_cell(a, 0, 0, &r2, &c2);
        rows = r2;
        cols = c2;
    }
    a->vs.edit_row = SDL_clamp(a->vs.edit_row + dr, 0, rows > 0 ? rows - 1 : 0);
    a->vs.edit_col = SDL_clamp(a->vs.edit_col + dc, 0, cols > 0 ? cols - 1 : 0);
    a->dirty = 1;
}

static void nudge(AppState *a, float step)
{
    undo_push(a);
    edit_set(a, a->vs.edit_row, a->vs.edit_col,
             edit_get(a, a->vs.edit_row, a->vs.edit_col) + step);
}

static void begin_typing_value(AppState *a)
{
    a->editing_value = 1;
    snprintf(a->edit_buf, sizeof a->edit_buf, "%.4g",
             (double)edit_get(a, a->vs.edit_row, a->vs.edit_col));
    a->vs.edit_text = a->edit_buf;
    a->edit_fresh = 1;
    SDL_StartTextInput();
    a->dirty = 1;
}

static void commit_typed_value(AppState *a)
{
    char *end;
    double v = strtod(a->edit_buf, &end);
    while (*end == ' ')
        end++;
    if (!a->edit_buf[0] || *end || !isfinite(v) || fabs(v) > 1e4) {
        app_status(a, 1, "'%s' is not a number between -10000 and 10000: value kept", a->edit_buf);
        a->dirty = 1;
        return; /* stay in the box so the user can fix it */
    }
    undo_push(a);
    edit_set(a, a->vs.edit_row, a->vs.edit_col, (float)v);
    a->editing_value = 0;
    a->vs.edit_text = NULL;
    SDL_StopTextInput();
    app_status(a, 0, "value set to %g", v);
}

/* ---- keyboard --------------------------------------------------------------------- */

static void text_insert(AppState *a, const char *s)
{
    size_t n = strlen(s);
    if (a->prompt) {
        size_t l = strlen(a->prompt_buf);
        if (l + n < sizeof a->prompt_buf) {
            memmove(a->prompt_buf + a->prompt_cursor + n, a->prompt_buf + a->prompt_cursor,
                    l - (size_t)a->prompt_cursor + 1);
            memcpy(a->prompt_buf + a->prompt_cursor, s, n);
            a->prompt_cursor += (int)n;
        }
        a->dirty = 1;
        return;
    }
    if (a->text_len + n > APP_TEXT_MAX) {
        app_status(a, 1, "the sentence is too long (at most %d bytes)", APP_TEXT_MAX);
        return;
    }
    if (text_reserve(a, a->text_len + n) < 0)
        return;
    size_t c = (size_t)a->vs.cursor;
    memmove(a->text + c + n, a->text + c, a->text_len - c + 1);
    memcpy(a->text + c, s, n);
    a->text_len += n;
    a->vs.cursor += (int)n;
    sync_text(a);
}

static int utf8_prev(const char *s, int pos)
{
    if (pos <= 0)
        return 0;
    pos--;
    while (pos > 0 && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos--;
    return pos;
}

static int utf8_next(const char *s, int pos, int len)
{
    if (pos >= len)
        return len;
    pos++;
    while (pos < len && ((unsigned char)s[pos] & 0xC0) == 0x80)
        pos++;
    return pos;
}

static void bar_key(AppState *a, SDL_Keycode k, Uint16 mod)
{
    char *buf = a->prompt ? a->prompt_buf : a->text;
    int *cur = a->prompt ? &a->prompt_cursor : &a->vs.cursor;
    int len = (int)(a->prompt ? strlen(a->prompt_buf) : a->text_len);
    int ctrl = mod & KMOD_CTRL;
    switch (k) {
    case SDLK_BACKSPACE:
    case SDLK_DELETE: {
        int from = k == SDLK_BACKSPACE ? utf8_prev(buf, *cur) : *cur;
        int to = k == SDLK_BACKSPACE ? *cur : utf8_next(buf, *cur, len);
        if (from == to)
            return;
        memmove(buf + from, buf + to, (size_t)(len - to) + 1);
        *cur = from;
        if (a->prompt)
            a->dirty = 1;
        else {
            a->text_len -= (size_t)(to - from);
            sync_text(a);
        }
        return;
    }
    case SDLK_LEFT: *cur = utf8_prev(buf, *cur); a->dirty = 1; return;
    case SDLK_RIGHT: *cur = utf8_next(buf, *cur, len); a->dirty = 1; return;
    case SDLK_HOME: *cur = 0; a->dirty = 1; return;
    case SDLK_END: *cur = len; a->dirty = 1; return;
    case SDLK_v:
        if (ctrl) {
            char *clip = SDL_GetClipboardText();
            if (clip) {
                for (char *p = clip; *p; p++)
                    if (*p == '\n' || *p == '\r' || *p == '\t')
                        *p = ' ';
                text_insert(a, clip);
                SDL_free(clip);
            }
        }
        return;
    case SDLK_u:
        if (ctrl) {
            buf[0] = '\0';
            *cur = 0;
            if (!a->prompt) {
                a->text_len = 0;
                sync_text(a);
            }
            a->dirty = 1;
        }
        return;
    default:
        return;
    }
}

static void finish_prompt(AppState *a)
{
    AppPrompt p = a->prompt;
    a->prompt = PROMPT_NONE;
    a->vs.prompt = NULL;
    a->vs.sentence_focus = 0;
    a->dirty = 1;
    if (p == PROMPT_OPEN)
        app_open_path(a, a->prompt_buf);
    else if (p == PROMPT_SAVE && app_save_session(a, a->prompt_buf) == 0)
        snprintf(a->session_path, sizeof a->session_path, "%s", a->prompt_buf);
}

static void start_prompt(AppState *a, AppPrompt p, const char *label, const char *initial)
{
    a->prompt = p;
    a->vs.prompt = label;
    snprintf(a->prompt_buf, sizeof a->prompt_buf, "%s", initial);
    a->prompt_cursor = (int)strlen(a->prompt_buf);
    a->vs.sentence_focus = 1;
    SDL_StartTextInput();
    a->dirty = 1;
}

static void session_view_of(const AppState *a, SessionView *sv)
{
    session_view_default(sv);
    sv->query = a->vs.query;
    sv->key = a->vs.key;
    sv->head = a->vs.head;
    sv->matrix = (int)a->vs.matrix;
    sv->cmap = (int)a->vs.cmap;
    sv->all_lines = a->vs.all_lines;
    sv->dark = a->vs.dark;
    sv->ui_scale = a->ui_scale;
    sv->sentence_index = a->sentence_idx;
    sv->edit_target = (int)a->vs.edit_target;
}

int app_cli_overrides(Model *m, SessionView *sv, const Options *o, AttnErr *err)
{
    if (o->mode_set)
        m->cfg.mode = o->cfg.mode;
    if (o->causal_set)
        m->cfg.causal = o->cfg.causal;
    if (o->scale_set)
        m->cfg.scale = o->cfg.scale;
    if (o->posenc_set)
        m->cfg.posenc = o->cfg.posenc;
    if (o->temp_set)
        m->cfg.temperature = o->cfg.temperature;
    if (o->heads_set && o->cfg.heads != m->cfg.heads) {
        if (m->d % o->cfg.heads != 0)
            return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                                "--heads %d does not divide d = %d (the embedding size)",
                                o->cfg.heads, m->d);
        int rc = model_set_heads(m, o->cfg.heads);
        if (rc < 0)
            return attn_err_set(err, -rc, NULL, 0, "cannot change to %d heads", o->cfg.heads);
    }
    if (o->has_seed)
        model_set_seed(m, o->seed);
    if (o->weights && app_load_weights(m, o->weights, err) < 0)
        return -err->code;
    if (sv) {
        if (o->colormap && colormap_from_name(o->colormap) >= 0)
            sv->cmap = colormap_from_name(o->colormap);
        if (o->matrix_set)
            sv->matrix = o->matrix;
        if (o->head_set)
            sv->head = o->head;
        if (o->theme_set)
            sv->dark = o->theme_dark;
        if (o->query >= 0)
            sv->query = o->query;
    }
    return 0;
}

void app_apply_session_view(AppState *a, const SessionView *sv)
{
    int T = a->m->T;
    a->vs.query = sv->query >= 0 && sv->query < T ? sv->query : (T > 1 ? 1 : 0);
    a->vs.key = sv->key >= 0 && sv->key < T ? sv->key : -1;
    a->vs.head = sv->head < a->m->res.h ? sv->head : 0;
    a->vs.matrix = (ModelMatrix)sv->matrix;
    a->vs.cmap = (ColormapId)sv->cmap;
    a->vs.all_lines = sv->all_lines;
    a->vs.dark = sv->dark;
    a->ui_scale = sv->ui_scale;
    a->vs.edit_target = (EditTarget)sv->edit_target;
    if (a->sentences && sv->sentence_index < a->sentences->n)
        a->sentence_idx = sv->sentence_index;
    a->dirty = 1;
}

int app_save_session(AppState *a, const char *path)
{
    SessionView sv;
    AttnErr err = {0};
    session_view_of(a, &sv);
    if (session_save(path, a->m, &sv, &err) < 0) {
        char buf[1200];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "not saved: %s (the old file is unchanged)", buf);
        return -1;
    }
    a->unsaved = 0;
    app_status(a, 0, "saved %s", path);
    return 0;
}

int app_autosave(AppState *a, int always)
{
    if (!a->autosave_path[0] || (!always && !a->unsaved))
        return 0;
    SessionView sv;
    AttnErr err = {0};
    session_view_of(a, &sv);
    if (session_save(a->autosave_path, a->m, &sv, &err) < 0)
        return -1;
    a->unsaved = 0;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int app_open_path(AppState *a, const char *path)
{
    AttnErr err = {0};
    char buf[1200];
    if (ends_with(path, ".json")) {
        SessionView sv;
        undo_push(a);
        if (app_load_session(a->m, &sv, path, &err) < 0) {
            undo_drop_last(a); /* nothing changed */
            attn_err_format(&err, buf, sizeof buf);
            app_status(a, 1, "cannot open: %s", buf);
            return -1;
        }
        app_set_sentence(a, a->m->text ? a->m->text : "");
        app_apply_session_view(a, &sv);
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
    if (a->sentences) {
        sentences_free(a->sentences);
        *a->sentences = sl;
    } else {
        sentences_free(&sl);
        app_status(a, 1, "cannot open %s here", path);
        return -1;
    }
    a->sentence_idx = 0;
    app_set_sentence(a, a->sentences->text[0]);
    app_status(a, 0, "%s: %d sentence%s (PgUp/PgDn)", path, a->sentences->n,
               a->sentences->n == 1 ? "" : "s");
    return 0;
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

static void key_down(AppState *a, const SDL_KeyboardEvent *ke)
{
    SDL_Keycode k = ke->keysym.sym;
    Uint16 mod = ke->keysym.mod;
    int ctrl = mod & KMOD_CTRL, shift = mod & KMOD_SHIFT;
    int T = a->m->T;

    /* global shortcuts */
    if (ctrl) {
        switch (k) {
        case SDLK_q: a->quit = 1; return;
        case SDLK_z: if (shift) redo(a); else undo(a); return;
        case SDLK_y: redo(a); return;
        case SDLK_PLUS: case SDLK_EQUALS: case SDLK_KP_PLUS: set_ui_scale(a, a->ui_scale * 1.15f); return;
        case SDLK_MINUS: case SDLK_KP_MINUS: set_ui_scale(a, a->ui_scale / 1.15f); return;
        case SDLK_0: case SDLK_KP_0: set_ui_scale(a, 1.0f); return;
        case SDLK_e: app_export(a, shift ? 2 : 0); return;
        case SDLK_l: app_export(a, 1); return;
        case SDLK_o: start_prompt(a, PROMPT_OPEN, "Open (session .json or sentences):", ""); return;
        case SDLK_s:
            if (!shift && a->session_path[0])
                app_save_session(a, a->session_path);
            else
                start_prompt(a, PROMPT_SAVE, "Save session as:",
                             a->session_path[0] ? a->session_path : "attnviz-session.json");
            return;
        default: break;
        }
    }
    if (k == SDLK_F11) {
        a->fullscreen = !a->fullscreen;
        a->dirty = 1;
        return;
    }
    if (k == SDLK_F1) {
        a->vs.help = !a->vs.help;
        a->dirty = 1;
        return;
    }

    /* typing an exact weight value */
    if (a->editing_value) {
        if (k == SDLK_ESCAPE) {
            a->editing_value = 0;
            a->vs.edit_text = NULL;
            app_status(a, 0, "edit cancelled");
        } else if (k == SDLK_RETURN || k == SDLK_KP_ENTER) {
            commit_typed_value(a);
        } else if (k == SDLK_BACKSPACE) {
            size_t l = strlen(a->edit_buf);
            if (l)
                a->edit_buf[l - 1] = '\0';
            a->edit_fresh = 0;
        }
        if (!a->editing_value)
            SDL_StopTextInput();
        a->dirty = 1;
        return;
    }

    /* the sentence bar (or a file-name prompt) has the keyboard */
    if (a->vs.sentence_focus) {
        if (k == SDLK_ESCAPE || k == SDLK_RETURN || k == SDLK_KP_ENTER) {
            if (a->prompt && k != SDLK_ESCAPE) {
                finish_prompt(a);
                return;
            }
            a->prompt = PROMPT_NONE;
            a->vs.prompt = NULL;
            a->vs.sentence_focus = 0;
            SDL_StopTextInput();
            a->dirty = 1;
            return;
        }
        bar_key(a, k, mod);
        return;
    }

    if (a->vs.help && (k == SDLK_ESCAPE || k == SDLK_QUESTION || k == SDLK_SLASH)) {
        a->vs.help = 0;
        a->dirty = 1;
        return;
    }
    if (k == SDLK_ESCAPE) {
        if (a->vs.edit_focus) {
            a->vs.edit_focus = 0;
            a->dirty = 1;
        }
        return;
    }

    /* the weight editor has the keyboard */
    if (a->vs.edit_focus) {
        switch (k) {
        case SDLK_UP: editor_move(a, -1, 0); return;
        case SDLK_DOWN: editor_move(a, 1, 0); return;
        case SDLK_LEFT: editor_move(a, 0, -1); return;
        case SDLK_RIGHT: editor_move(a, 0, 1); return;
        case SDLK_PLUS: case SDLK_EQUALS: case SDLK_KP_PLUS: nudge(a, shift ? 0.01f : 0.1f); return;
        case SDLK_MINUS: case SDLK_KP_MINUS: nudge(a, shift ? -0.01f : -0.1f); return;
        case SDLK_RETURN: case SDLK_KP_ENTER: begin_typing_value(a); return;
        default: break;
        }
    }

    switch (k) {
    case SDLK_RETURN: case SDLK_KP_ENTER: case SDLK_SLASH:
        if (k == SDLK_SLASH && shift) {
            a->vs.help = !a->vs.help;
            a->dirty = 1;
            return;
        }
        a->vs.sentence_focus = 1;
        a->vs.cursor = (int)a->text_len;
        SDL_StartTextInput();
        a->dirty = 1;
        return;
    case SDLK_QUESTION: a->vs.help = !a->vs.help; a->dirty = 1; return;
    case SDLK_UP: case SDLK_k:
        if (T) a->vs.query = a->vs.query > 0 ? a->vs.query - 1 : 0;
        keep_query_visible(a);
        a->dirty = 1;
        return;
    case SDLK_DOWN: case SDLK_j:
        if (T) a->vs.query = a->vs.query < T - 1 ? a->vs.query + 1 : T - 1;
        keep_query_visible(a);
        a->dirty = 1;
        return;
    case SDLK_LEFT:
        if (T) a->vs.key = a->vs.key > 0 ? a->vs.key - 1 : 0;
        a->dirty = 1;
        return;
    case SDLK_RIGHT:
        if (T) a->vs.key = a->vs.key < T - 1 ? a->vs.key + 1 : T - 1;
        a->dirty = 1;
        return;
    case SDLK_s: control(a, CTL_SCALE); return;
    case SDLK_m: control(a, CTL_MASK); return;
    case SDLK_p: control(a, CTL_POSENC); return;
    case SDLK_b: control(a, CTL_MODE); return;
    case SDLK_h: cycle_head(a, shift ? -1 : 1); return;
    case SDLK_LEFTBRACKET: step_heads(a, -1); return;
    case SDLK_RIGHTBRACKET: step_heads(a, 1); return;
    case SDLK_t: set_temperature(a, shift ? a->m->cfg.temperature / 1.25f : a->m->cfg.temperature * 1.25f); return;
    case SDLK_r: a->vs.matrix = (ModelMatrix)((a->vs.matrix + (shift ? 2 : 1)) % 3); a->dirty = 1; return;
    case SDLK_c: control(a, CTL_CMAP); return;
    case SDLK_d:
        a->vs.dark = !a->vs.dark;
        app_status(a, 0, "%s (D switches back)", a->vs.dark ? "dark theme" : "light theme, for a bright room");
        a->dirty = 1;
        return;
    case SDLK_a: control(a, CTL_ALL); return;
    case SDLK_PAGEUP: sentence_step(a, -1); return;
    case SDLK_PAGEDOWN: sentence_step(a, 1); return;
    case SDLK_1: case SDLK_2: case SDLK_3: case SDLK_4: case SDLK_5:
    case SDLK_0: case SDLK_z: case SDLK_n: case SDLK_x: case SDLK_DELETE:
        if (a->view && a->layout.editor.w == 0) {
            /* no edits the class cannot see */
            app_status(a, 1, "the weight editor needs a wider window (Ctrl+Minus makes the interface smaller)");
            a->dirty = 1;
            return;
        }
        if (k >= SDLK_1 && k <= SDLK_5) {
            a->vs.edit_target = (EditTarget)(k - SDLK_1);
            editor_move(a, 0, 0);
            a->dirty = 1;
            return;
        }
        editor_button(a, k == SDLK_0 ? EBTN_IDENTITY : k == SDLK_z ? EBTN_ZERO : k == SDLK_n ? EBTN_RANDOM
                         : k == SDLK_x ? EBTN_SWAP : EBTN_RESET);
        return;
    case SDLK_SPACE:
        a->vs.step_reveal = shift ? (a->vs.step_reveal > 1 ? a->vs.step_reveal - 1 : 1)
                                  : (a->vs.step_reveal >= 4 ? 1 : a->vs.step_reveal + 1);
        a->dirty = 1;
        return;
    case SDLK_EQUALS: case SDLK_PLUS: case SDLK_KP_PLUS:
        a->vs.zoom = fminf(a->vs.zoom * 1.25f, 64.0f);
        a->dirty = 1;
        return;
    case SDLK_MINUS: case SDLK_KP_MINUS:
        a->vs.zoom = fmaxf(a->vs.zoom / 1.25f, 1.0f);
        a->dirty = 1;
        return;
    default:
        return;
    }
}

/* ---- mouse ------------------------------------------------------------------------ */

static void mouse_down(AppState *a, const SDL_MouseButtonEvent *b)
{
    ViewLayout *l = &a->layout;
    int x = b->x, y = b->y, i, j, side, row, col;
    if (b->button != SDL_BUTTON_LEFT)
        return;
    if (a->vs.help) {
        a->vs.help = 0;
        a->dirty = 1;
        return;
    }
    if (SDL_PointInRect(&(SDL_Point){x, y}, &l->sentence)) {
        a->vs.sentence_focus = 1;
        if (a->view && !a->prompt)
            a->vs.cursor = view_sentence_offset(a->view, &a->vs, l, x);
        SDL_StartTextInput();
        a->dirty = 1;
        return;
    }
    if (a->vs.sentence_focus && !a->prompt) {
        a->vs.sentence_focus = 0;
        SDL_StopTextInput();
        a->dirty = 1;
    }
    int c = view_hit_control(l, x, y);
    if (c >= 0) {
        control(a, c);
        return;
    }
    /* the layout may predate the last change of T (events come in batches
     * between frames): hits are checked against the model, not the layout */
    int T = a->m->T;
    if (view_hit_cell(l, x, y, &i, &j) && i < T && j < T) {
        a->vs.query = i;
        a->vs.key = j;
        a->vs.edit_focus = 0;
        keep_query_visible(a);
        a->dirty = 1;
        return;
    }
    if (view_hit_row_label(l, x, y, &i) && i < T) {
        a->vs.query = i;
        a->dirty = 1;
        return;
    }
    if (view_hit_line_token(l, x, y, &i, &side) && i < T) {
        if (side)
            a->vs.key = i;
        else
            a->vs.query = i;
        a->dirty = 1;
        return;
    }
    int hit = view_hit_editor(l, x, y, &row, &col);
    if (hit == 2) {
        a->vs.edit_target = (EditTarget)row;
        a->vs.edit_focus = 1;
        editor_move(a, 0, 0);
        return;
    }
    if (hit == 3) {
        editor_button(a, row);
        return;
    }
    if (hit == 1) {
        Uint32 now = b->timestamp;
        int dbl = b->clicks >= 2 || (now - a->last_click_time < 400 && a->last_click_row == row &&
                                     a->last_click_col == col);
        a->last_click_time = now;
        a->last_click_row = row;
        a->last_click_col = col;
        a->vs.edit_row = row;
        a->vs.edit_col = col;
        a->vs.edit_focus = 1;
        if (dbl) {
            begin_typing_value(a);
            return;
        }
        a->dragging = 1;
        a->drag_moved = 0;
        a->drag_y0 = y;
        a->drag_v0 = edit_get(a, row, col);
        a->dirty = 1;
    }
}

static void mouse_motion(AppState *a, const SDL_MouseMotionEvent *mm)
{
    int i, j;
    a->vs.mouse_x = mm->x;
    a->vs.mouse_y = mm->y;
    if (a->dragging) {
        int dy = a->drag_y0 - mm->y;
        if (dy == 0 && !a->drag_moved)
            return;
        if (!a->drag_moved) {
            undo_push(a); /* the whole drag is one undo step */
            a->drag_moved = 1;
        }
        float step = (SDL_GetModState() & KMOD_SHIFT) || (mm->state & SDL_BUTTON_RMASK) ? 0.002f : 0.02f;
        edit_set(a, a->vs.edit_row, a->vs.edit_col, a->drag_v0 + dy * step);
        return;
    }
    int oi = a->vs.hover_i, oj = a->vs.hover_j;
    if (view_hit_cell(&a->layout, mm->x, mm->y, &i, &j) && i < a->m->T && j < a->m->T) {
        a->vs.hover_i = i;
        a->vs.hover_j = j;
    } else {
        a->vs.hover_i = a->vs.hover_j = -1;
    }
    if (oi != a->vs.hover_i || oj != a->vs.hover_j || a->vs.hover_i >= 0)
        a->dirty = 1;
}

static void mouse_wheel(AppState *a, const SDL_MouseWheelEvent *w)
{
    int i, j, row, col;
    if (w->which == SDL_TOUCH_MOUSEID)
        return;
    int mx = a->vs.mouse_x, my = a->vs.mouse_y;
    int dy = w->y;
    SDL_Keymod mod = SDL_GetModState();
    if (view_hit_editor(&a->layout, mx, my, &row, &col) == 1) {
        a->vs.edit_row = row;
        a->vs.edit_col = col;
        undo_push(a);
        edit_set(a, row, col, edit_get(a, row, col) + dy * ((mod & KMOD_SHIFT) ? 0.01f : 0.1f));
        return;
    }
    SDL_Rect heat = a->layout.heatmap;
    if (SDL_PointInRect(&(SDL_Point){mx, my}, &heat) || view_hit_cell(&a->layout, mx, my, &i, &j)) {
        if (mod & KMOD_CTRL) {
            a->vs.zoom = dy > 0 ? fminf(a->vs.zoom * 1.25f, 64.0f) : fmaxf(a->vs.zoom / 1.25f, 1.0f);
        } else if (mod & KMOD_SHIFT) {
            a->vs.pan_col = SDL_max(0, a->vs.pan_col - dy * 3);
        } else {
            a->vs.pan_row = SDL_max(0, a->vs.pan_row - dy * 3);
        }
        a->dirty = 1;
        return;
    }
    if (SDL_PointInRect(&(SDL_Point){mx, my}, &a->layout.lines)) {
        a->vs.lines_scroll = SDL_max(0, a->vs.lines_scroll - dy * 3);
        a->dirty = 1;
    }
}

int app_handle_event(AppState *a, const SDL_Event *e)
{
    a->dirty = 0;
    switch (e->type) {
    case SDL_QUIT:
        a->quit = 1;
        break;
    case SDL_KEYDOWN:
        key_down(a, &e->key);
        break;
    case SDL_TEXTINPUT:
        if (a->editing_value) {
            if (a->edit_fresh) {
                /* the first key replaces the shown value, as in a spreadsheet */
                a->edit_buf[0] = '\0';
                a->edit_fresh = 0;
            }
            size_t l = strlen(a->edit_buf), n = strlen(e->text.text);
            if (l + n < sizeof a->edit_buf)
                memcpy(a->edit_buf + l, e->text.text, n + 1);
            a->dirty = 1;
        } else if (a->vs.sentence_focus) {
            a->preedit[0] = '\0'; /* the composition is committed */
            text_insert(a, e->text.text);
        }
        break;
    case SDL_TEXTEDITING:
        /* an input method composing (e.g. kana before kanji): shown at the
         * cursor until it sends the text */
        if (a->vs.sentence_focus && !a->editing_value) {
            snprintf(a->preedit, sizeof a->preedit, "%s", e->edit.text);
            a->dirty = 1;
        }
        break;
    case SDL_MOUSEBUTTONDOWN:
        mouse_down(a, &e->button);
        break;
    case SDL_MOUSEBUTTONUP:
        if (a->dragging && a->drag_moved)
            app_status(a, 0, "value %.3f (Ctrl+Z undoes)", (double)edit_get(a, a->vs.edit_row, a->vs.edit_col));
        a->dragging = 0;
        a->dirty = 1;
        break;
    case SDL_MOUSEMOTION:
        mouse_motion(a, &e->motion);
        break;
    case SDL_MOUSEWHEEL:
        mouse_wheel(a, &e->wheel);
        break;
    case SDL_DROPFILE:
        if (e->drop.file) {
            app_open_path(a, e->drop.file);
            a->dirty = 1;
        }
        break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED ||
            e->window.event == SDL_WINDOWEVENT_RESIZED) {
            a->win_w = e->window.data1 > 1 ? e->window.data1 : 1;
            a->win_h = e->window.data2 > 1 ? e->window.data2 : 1;
        }
        a->dirty = 1;
        break;
    default:
        break;
    }
    return a->dirty;
}

void app_draw(AppState *a, SDL_Renderer *r)
{
    int w, h;
    if (SDL_GetRendererOutputSize(r, &w, &h) != 0) {
        w = a->win_w;
        h = a->win_h;
    }
    view_state_set_model(&a->vs, a->m);
    a->vs.sentence = a->prompt ? a->prompt_buf : a->text;
    int text_cursor = a->vs.cursor;
    if (a->prompt)
        a->vs.cursor = a->prompt_cursor;
    a->vs.status = a->status[0] ? a->status : NULL;
    a->vs.status_error = a->status_err;
    a->vs.scale = a->ui_scale * a->dpi_scale;
    if (!a->view) {
        a->vs.cursor = text_cursor;
        return;
    }
    if (!a->vs.sentence_focus)
        a->preedit[0] = '\0';
    a->vs.preedit = a->preedit[0] ? a->preedit : NULL;
    view_layout(a->view, &a->vs, w, h, &a->layout);
    if (a->vs.sentence_focus) {
        /* the input method's candidate window goes next to the cursor */
        SDL_Rect c;
        view_sentence_caret(a->view, &a->vs, &a->layout, &c);
        if (!SDL_RectEquals(&c, &a->caret)) {
            a->caret = c;
            SDL_SetTextInputRect(&c);
        }
    }
    view_draw_window(a->view, r, &a->vs, &a->layout);
    a->vs.cursor = text_cursor;
}
