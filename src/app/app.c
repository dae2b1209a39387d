/* The application's state: set-up, recompute, the sentence's text, undo,
 * sessions; and the glue: app_handle_event (input.c's actions, applied by
 * actions.c), app_tick (time passing), app_draw (the view draws the state). */
#include "attnviz/app_state.h"
#include "attnviz/background.h"
#include "attnviz/attnio.h"
#include "attnviz/import.h"
#include "attnviz/app.h"
#include "attnviz/source.h"
#include "attnviz/teach_app.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app_internal.h"
#include "platform.h"
#include "attnviz/maps_shown.h"
#include "attnviz/model_source.h"
#include "attnviz/input.h"

/* ---- helpers ---------------------------------------------------------------- */

void app_status(AppState *a, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
    a->status_err = error;
    a->status_serial++;
}

void app_recompute(AppState *a)
{
    int rc = model_compute(a->m);
    if (rc < 0)
        app_status(a, 1, "cannot compute attention: %s", attn_strerror(rc));
    int T = a->m->T;
    if (a->vs.query >= T)
        a->vs.query = T - 1;
    if (a->vs.query < 0 && T > 0)
        a->vs.query = 0;
    if (a->vs.key >= a->m->Tk) /* keys: the second sentence's with two */
        a->vs.key = a->m->Tk - 1;
    if (a->vs.head >= a->m->res.h)
        a->vs.head = 0;
    int xrows = T + (a->m->cross ? a->m->Tk : 0); /* the X tab: both sentences' rows */
    if (a->vs.edit_target == EDIT_X && a->vs.edit_row >= xrows)
        a->vs.edit_row = xrows > 0 ? xrows - 1 : 0;
    /* the view's maps point into the model's arrays, which may have moved */
    view_state_set_model(&a->vs, a->m);
    a->dirty = 1;
    a->unsaved = 1;
}

int app_buf_reserve(char **buf, size_t *cap_io, size_t n)
{
    if (n + 1 <= *cap_io)
        return 0;
    size_t cap = *cap_io ? *cap_io : 256;
    while (cap < n + 1)
        cap *= 2;
    char *p = realloc(*buf, cap);
    if (!p)
        return -1;
    *buf = p;
    *cap_io = cap;
    return 0;
}

int app_text_reserve(AppState *a, size_t n)
{
    return app_buf_reserve(&a->text, &a->text_cap, n);
}

void app_sync_text(AppState *a)
{
    if (a->kind->maps && a->kind->set_text) /* the text, not a probe's tokens */
        maps_probe_clear(a->kind->maps(a));
    if (a->kind->set_text)
        a->kind->set_text(a);
}

void app_sync_keys(AppState *a)
{
    if (a->kind->set_keys)
        a->kind->set_keys(a);
}

int app_keys_store(AppState *a, const char *text)
{
    size_t n = strlen(text);
    if (n > APP_TEXT_MAX)
        n = APP_TEXT_MAX;
    if (app_buf_reserve(&a->keys, &a->keys_cap, n) < 0) {
        app_status(a, 1, "out of memory");
        return -1;
    }
    memmove(a->keys, text, n);
    a->keys[n] = '\0';
    a->keys_len = n;
    a->vs.keys_cursor = (int)n;
    return 0;
}

void app_set_keys(AppState *a, const char *text)
{
    if (app_keys_store(a, text) == 0)
        app_sync_keys(a);
}

void app_fit_map(AppState *a)
{
    a->vs.zoom = 1.0f;
    a->vs.pan_row = a->vs.pan_col = 0;
    a->dirty = 1;
}

void app_set_sentence(AppState *a, const char *text)
{
    size_t n = strlen(text);
    if (n > APP_TEXT_MAX)
        n = APP_TEXT_MAX;
    if (app_text_reserve(a, n) < 0) {
        app_status(a, 1, "out of memory");
        return;
    }
    memmove(a->text, text, n);
    a->text[n] = '\0';
    a->text_len = n;
    a->vs.cursor = (int)n;
    a->status_err = 0;
    app_fit_map(a); /* a new sentence: not a corner of its map */
    app_sync_text(a);
}

/* ---- undo --------------------------------------------------------------------- */

void app_snap_free(AppSnapshot *s)
{
    attn_params_destroy(&s->params);
    for (int i = 0; i < s->n_over; i++)
        free(s->over_word[i]);
    free(s->over_word);
    free(s->over_vec);
    memset(s, 0, sizeof *s);
}

int app_snap_take(AppSnapshot *s, const Model *m)
{
    memset(s, 0, sizeof *s);
    if (attn_params_copy(&s->params, &m->params) < 0)
        return -1;
    s->n_over = m->n_over;
    if (m->n_over) {
        s->over_word = calloc((size_t)m->n_over, sizeof *s->over_word);
        s->over_vec = malloc((size_t)m->n_over * m->d * sizeof(float));
        if (!s->over_word || !s->over_vec) {
            app_snap_free(s);
            return -1;
        }
        for (int i = 0; i < m->n_over; i++)
            s->over_word[i] = strdup(m->over_word[i]);
        memcpy(s->over_vec, m->over_vec, (size_t)m->n_over * m->d * sizeof(float));
    }
    return 0;
}

void app_snap_restore(const AppSnapshot *s, Model *m)
{
    attn_params_copy(&m->params, &s->params);
    m->cfg.heads = s->params.h;
    model_clear_word_vectors(m);
    for (int i = 0; i < s->n_over; i++)
        model_set_word_vector(m, s->over_word[i], s->over_vec + (size_t)i * m->d);
}

/* Record the state before an edit: entries after the current position are
 * dropped (no redo after a new edit). */
void undo_push(AppState *a)
{
    for (int i = a->undo_pos; i < a->undo_n; i++)
        app_snap_free(&a->undo[i]);
    a->undo_n = a->undo_pos;
    if (a->undo_n == APP_UNDO_MAX) {
        app_snap_free(&a->undo[0]);
        memmove(a->undo, a->undo + 1, (APP_UNDO_MAX - 1) * sizeof a->undo[0]);
        a->undo_n--;
    }
    if (app_snap_take(&a->undo[a->undo_n], a->m) == 0)
        a->undo_n++;
    a->undo_pos = a->undo_n;
}

/* Forget the step undo_push just recorded (the edit did not happen). */
void undo_drop_last(AppState *a)
{
    if (a->undo_n > 0 && a->undo_pos == a->undo_n) {
        app_snap_free(&a->undo[--a->undo_n]);
        a->undo_pos = a->undo_n;
    }
}

void app_undo(AppState *a)
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
    app_snap_restore(&a->undo[a->undo_pos], a->m);
    app_status(a, 0, "undone (%d more)", a->undo_pos);
    app_recompute(a);
}

void app_redo(AppState *a)
{
    if (a->undo_pos + 1 >= a->undo_n) {
        app_status(a, 0, "nothing to redo");
        return;
    }
    a->undo_pos++;
    app_snap_restore(&a->undo[a->undo_pos], a->m);
    if (a->undo_pos == a->undo_n - 1) {
        app_snap_free(&a->undo[a->undo_n - 1]);
        a->undo_n--;
    }
    app_status(a, 0, "redone");
    app_recompute(a);
}

/* ---- set-up -------------------------------------------------------------------- */

int app_init(AppState *a, Model *m, const Options *o, SentenceList *sentences)
{
    memset(a, 0, sizeof *a);
    a->kind = &source_sentence;
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
    a->vs.lines_top = 8; /* a long sentence's lines would be a solid wedge */
    a->vs.dark = o && o->theme_set ? o->theme_dark : 1;
    int cmap = o && o->colormap ? colormap_from_name(o->colormap) : -1;
    if (cmap >= 0)
        a->vs.cmap = (ColormapId)cmap;
    if (o)
        a->vs.matrix = (ModelMatrix)o->matrix;
    if (o)
        a->vs.cscale = (ColorScaleMode)o->color_scale;
    if (o && o->head)
        a->vs.head = o->head;
    if (o && o->session)
        snprintf(a->session_path, sizeof a->session_path, "%s", o->session);
    const char *t = m->text ? m->text : "";
    if (app_text_reserve(a, strlen(t)) < 0)
        return -ATTN_E_NOMEM;
    app_set_sentence(a, t);
    a->vs.query = o && o->query >= 0 && o->query < m->T ? o->query : (m->T > 1 ? 1 : 0);
    a->vs.help_lines = a->help;
    a->vs.n_help_lines = app_help_build_for(a->help, APP_HELP_MAX, a->help_text, sizeof a->help_text,
                                            a->kind->takes, 0);
    return 0;
}

void app_free(AppState *a)
{
    model_opening_free(a->opening); /* joins: a model still opening is freed unseen */
    a->opening = NULL;
    app_open_done(a, -2);
    compare_free(a);
    app_teach_free(a);
    if (a->kind && a->kind->close)
        a->kind->close(a);
    a->src = NULL;
    for (int i = 0; i < a->undo_n; i++)
        app_snap_free(&a->undo[i]);
    free(a->text);
    a->text = NULL;
    free(a->keys);
    a->keys = NULL;
}

/* ---- sessions ------------------------------------------------------------------ */

static void session_view_of(const AppState *a, SessionView *sv)
{
    session_view_default(sv);
    sv->query = a->vs.query;
    sv->key = a->vs.key;
    sv->head = a->vs.head;
    sv->matrix = (int)a->vs.matrix;
    sv->cmap = (int)a->vs.cmap;
    sv->cscale = (int)a->vs.cscale;
    sv->all_lines = a->vs.all_lines;
    sv->dark = a->vs.dark;
    sv->ui_scale = a->ui_scale;
    sv->sentence_index = a->sentence_idx;
    sv->edit_target = (int)a->vs.edit_target;
    app_teach_session_of(a, sv);
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
    if (o->score_set)
        m->cfg.score = o->cfg.score;
    if (o->keys) { /* --keys over a session's (or the autosave's) second sentence */
        int rc = model_set_keys(m, o->keys, strlen(o->keys));
        if (rc < 0)
            return attn_err_set(err, -rc, NULL, 0, "cannot set the second sentence");
    }
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
        if (o->color_scale_set)
            sv->cscale = o->color_scale;
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
    a->vs.cscale = sv->cscale >= 0 && sv->cscale < CSCALE_COUNT ? (ColorScaleMode)sv->cscale : CSCALE_FIXED;
    a->vs.all_lines = sv->all_lines;
    a->vs.dark = sv->dark;
    a->ui_scale = sv->ui_scale;
    a->vs.edit_target = (EditTarget)sv->edit_target;
    if (a->sentences && sv->sentence_index < a->sentences->n)
        a->sentence_idx = sv->sentence_index;
    app_teach_session_apply(a, sv);
    a->dirty = 1;
}

static int write_line(FILE *f, void *ctx)
{
    return fprintf(f, "%s\n", (const char *)ctx) < 0 ? -ATTN_E_IO : 0;
}

/* Beside the autosave, "autosave.json.from" names the session file that
 * holds the same state (written by Ctrl+S), or is removed when the
 * autosave is newer than any saved file. */
static void autosave_from_write(AppState *a, const char *path)
{
    char side[sizeof a->autosave_path + 8];
    snprintf(side, sizeof side, "%s.from", a->autosave_path);
    if (!path) {
        remove(side);
        return;
    }
    char full[4096], cwd[2048];
    const char *p = path;
    if (path[0] != '/' && getcwd(cwd, sizeof cwd)) { /* in full: it is said at the next start */
        snprintf(full, sizeof full, "%s/%s", cwd, path);
        p = full;
    }
    AttnErr err = {0};
    io_write_atomic(side, write_line, (void *)p, &err); /* best effort: the state is saved */
}

int app_autosave_from(const AppState *a, char *buf, size_t n)
{
    char side[sizeof a->autosave_path + 8];
    snprintf(side, sizeof side, "%s.from", a->autosave_path);
    FILE *f = fopen(side, "r");
    if (!f)
        return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok && buf[0];
}

/* Beside the autosave, "shown.json": the session of what is shown when
 * it is not the sentence (a model, an attention file: a source of layers
 * × heads), opened over the sentence's state at the next plain start; the
 * sentence's own state stays in the autosave. */
static void shown_path(const AppState *a, char *buf, size_t n)
{
    const char *slash = strrchr(a->autosave_path, '/');
    int dir = slash ? (int)(slash - a->autosave_path) + 1 : 0;
    snprintf(buf, n, "%.*sshown.json", dir, a->autosave_path);
}

/* 1 when the files at p and q hold the same bytes. */
static int same_bytes(const char *p, const char *q)
{
    char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    AttnErr err = {0};
    int same = io_read_file(p, ATTN_MAX_FILE_BYTES, &x, &nx, &err) == 0 &&
               io_read_file(q, ATTN_MAX_FILE_BYTES, &y, &ny, &err) == 0 && nx == ny && memcmp(x, y, nx) == 0;
    free(x);
    free(y);
    return same;
}

/* The shown source's session into shown.json, saying nothing in the status
 * bar; the file autosave.json.from names stays named only while it holds
 * the same state. 0 or -1. */
static int autosave_shown(AppState *a)
{
    char shown[sizeof a->autosave_path + 16], from[sizeof a->session_path], said[sizeof a->status];
    int said_err = a->status_err;
    unsigned serial = a->status_serial;
    shown_path(a, shown, sizeof shown);
    memcpy(said, a->status, sizeof said);
    int rc = a->kind->save(a, shown);
    memcpy(a->status, said, sizeof said);
    a->status_err = said_err;
    a->status_serial = serial;
    if (rc < 0)
        return -1;
    if (app_autosave_from(a, from, sizeof from) && !same_bytes(from, shown))
        autosave_from_write(a, NULL);
    a->unsaved = 0;
    return 0;
}

int app_save_session(AppState *a, const char *path)
{
    if (!a->kind->save) {
        app_status(a, 1, "not saved: a %s has no session", a->kind->name);
        return -1;
    }
    if (a->kind->save(a, path) < 0)
        return -1;
    platform_session_written(path); /* a page: downloaded, and kept in its storage */
    /* as the sentence's: the autosave follows, and names the file */
    if (a->kind->maps && a->autosave_path[0] && autosave_shown(a) == 0)
        autosave_from_write(a, path);
    a->unsaved = 0;
    return 0;
}

/* A restore whose model opens on its own thread, on a thread that must not
 * wait for it (the threaded page's main thread): the session's own
 * after-open step (inner, maps_session_open's), then the restore's. */
typedef struct RestoreWait {
    void (*inner)(AppState *a, void *ctx, int rc);
    void *inner_ctx;
    int saved;
    char from[sizeof ((AppState *)0)->session_path], shown[sizeof ((AppState *)0)->autosave_path + 16];
} RestoreWait;

/* The restore's messages once the session is shown (rc 0) or not, then
 * the command line's flags over it. */
static void restore_said(AppState *a, int rc, int saved, const char *from, const char *shown)
{
    if (rc < 0) {
        char why[sizeof a->status];
        snprintf(why, sizeof why, "%s", a->status);
        app_status(a, 1, "%s not restored (%s); the sentence is shown", shown, why);
        return;
    }
    snprintf(a->session_path, sizeof a->session_path, "%s", saved ? from : "");
    if (saved)
        app_status(a, 0, "restored %s as you last saved it (--fresh starts clean)", from);
    else
        app_status(a, 0, "restored your unsaved work from %s (--fresh starts clean)", shown);
    a->unsaved = 0;
    maps_session_flags(a, a->opt); /* flags given now win (their errors said last) */
}

static void restore_then(AppState *a, void *ctx, int rc)
{
    RestoreWait *w = ctx;
    if (w->inner)
        w->inner(a, w->inner_ctx, rc);
    if (rc != -2) /* -2: a newer open dropped it */
        restore_said(a, rc, w->saved, w->from, w->shown);
    free(w);
}

int app_restore_shown(AppState *a)
{
    char shown[sizeof a->autosave_path + 16], from[sizeof a->session_path];
    struct stat st;
    if (!a->autosave_path[0])
        return 0;
    shown_path(a, shown, sizeof shown);
    if (stat(shown, &st) != 0)
        return 0;
    int saved = app_autosave_from(a, from, sizeof from) && same_bytes(from, shown);
    int rc = maps_session_open(a, shown);
    RestoreWait *w = rc == 0 && app_opening(a) && !bg_may_wait() ? malloc(sizeof *w) : NULL;
    if (w) { /* the status bar's "restored" comes after the session's own message */
        *w = (RestoreWait){a->open_then, a->open_then_ctx, saved, "", ""};
        snprintf(w->from, sizeof w->from, "%s", from);
        snprintf(w->shown, sizeof w->shown, "%s", shown);
        a->open_then = restore_then; /* in the session's place, which it runs first */
        a->open_then_ctx = w;
        return 0;
    }
    if (rc == 0) /* waited for where waiting blocks nothing (the desktop) */
        rc = app_open_wait(a);
    restore_said(a, rc, saved, from, shown);
    return rc < 0 ? -1 : 0;
}

int app_save_sentence_session(AppState *a, const char *path)
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
    /* the autosave follows, so that a plain start comes back to this state
     * (and says which file holds it) even after a kill */
    if (a->autosave_path[0] && app_autosave(a, 1) == 0)
        autosave_from_write(a, path);
    app_status(a, 0, "saved %s", path);
    return 0;
}

int app_autosave(AppState *a, int always)
{
    if (!a->autosave_path[0] || (!always && !a->unsaved))
        return 0;
    if (a->kind->maps && a->kind->save)
        return autosave_shown(a);
    SessionView sv;
    AttnErr err = {0};
    session_view_of(a, &sv);
    if (session_save(a->autosave_path, a->m, &sv, &err) < 0)
        return -1;
    char shown[sizeof a->autosave_path + 16];
    shown_path(a, shown, sizeof shown);
    remove(shown); /* the sentence is shown: a plain start shows it */
    if (a->unsaved) /* edits after the last save: the autosave is newer than it */
        autosave_from_write(a, NULL);
    a->unsaved = 0;
    return 0;
}

int app_open_path(AppState *a, const char *path)
{
    const SourceKind *k = source_for_path(path);
    struct stat st;
    AttnErr err = {0};
    model_opening_cancel(a->opening); /* the newest open wins */
    app_open_done(a, -2);
    a->open_rc = 0;
    if (!k && stat(path, &st) == 0 && S_ISDIR(st.st_mode) && model_folder_check(path, &err) < 0) {
        char buf[1400];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "not opened: %s", buf);
        return -1;
    }
    /* the kind whose test accepts the path; the sentence opens the rest
     * (its sessions and sentences files) */
    return (k ? k : &source_sentence)->open(a, path);
}

void app_open_later(AppState *a, const char *path)
{
    if (snprintf(a->open_asked, sizeof a->open_asked, "%s", path) >= (int)sizeof a->open_asked) {
        app_status(a, 1, "not opened: the path is longer than %zu bytes", sizeof a->open_asked - 1);
        a->open_asked[0] = '\0';
    }
}

int app_open_asked(AppState *a, char *path, size_t n)
{
    if (!a->open_asked[0])
        return 0;
    int fits = snprintf(path, n, "%s", a->open_asked) < (int)n;
    if (!fits)
        app_status(a, 1, "not opened: the path %.200s\xE2\x80\xA6 is too long", a->open_asked);
    a->open_asked[0] = '\0';
    return fits;
}

int app_opening(const AppState *a)
{
    return model_opening_busy(a->opening);
}

const char *app_title(AppState *a)
{
    const char *t = a->kind->title(a);
    if (!app_opening(a))
        return t;
    snprintf(a->title, sizeof a->title, "opening %s\xE2\x80\xA6 \xE2\x80\x94 %.300s", model_opening_name(a->opening), t);
    return a->title;
}

int app_open_wait(AppState *a)
{
    while (app_opening(a)) {
        SDL_Delay(2);
        model_opening_tick(a);
    }
    return a->open_rc;
}

void app_open_then(AppState *a, void (*then)(AppState *a, void *ctx, int rc), void *ctx)
{
    app_open_done(a, -2); /* one at a time: an older one's open was dropped */
    a->open_then = then;
    a->open_then_ctx = ctx;
}

void app_open_done(AppState *a, int rc)
{
    void (*then)(AppState *, void *, int) = a->open_then;
    void *ctx = a->open_then_ctx;
    a->open_then = NULL; /* cleared first: then may open again */
    a->open_then_ctx = NULL;
    if (rc != -2)
        a->open_rc = rc;
    if (then)
        then(a, ctx, rc);
}

void app_show_source(AppState *a, const SourceKind *k, void *src)
{
    if (a->kind && a->kind->close)
        a->kind->close(a);
    a->kind = k;
    a->src = src;
    a->dirty = 1;
}

/* ---- events, time, drawing ------------------------------------------------------ */

int app_handle_event(AppState *a, const SDL_Event *e)
{
    AppAction act[4];
    unsigned said = a->status_serial;
    a->dirty = 0;
    int n = app_translate(a, e, act, 4);
    if (n < 0 && e->type == SDL_DROPFILE) {
        app_open_path(a, e->drop.file);
        a->dirty = 1;
    } else if (n < 0) {
        text_event(a, e); /* typing into the bar, a prompt or a value box */
    }
    for (int k = 0; k < n; k++)
        app_apply(a, &act[k]);
    if (a->status_serial != said)
        a->dirty = 1; /* e.g. "the sentence is too long" while typing */
    /* a key, a click or typing that changed what a source of layers × heads
     * shows: its session is autosaved (the sentence's edits mark their own) */
    if (a->dirty && a->kind->maps && e->type != SDL_MOUSEMOTION && e->type != SDL_WINDOWEVENT)
        a->unsaved = 1;
    return a->dirty;
}

int app_tick(AppState *a, Uint32 now_ms, int *wait_ms)
{
    if (a->unsaved && now_ms - a->autosave_at >= APP_AUTOSAVE_MS) {
        app_autosave(a, 0);
        a->autosave_at = now_ms;
    }
    *wait_ms = a->unsaved ? (int)(APP_AUTOSAVE_MS - (now_ms - a->autosave_at)) + 1 : -1;
    int changed = model_opening_tick(a); /* a model opening: its progress, or shown */
    changed |= a->kind->tick ? a->kind->tick(a, now_ms, wait_ms) : 0; /* background work */
    return app_teach_tick(a, now_ms, wait_ms) | changed; /* teaching: steps at its pace */
}

void app_present(AppState *a)
{
    a->kind->present(a);
    compare_view(a); /* the compare view's maps and labels, when pinned */
    app_teach_view(a);
    a->vs.n_ctl = 0;
    if (a->kind->controls)
        a->kind->controls(a);
    source_ctl_common(&a->vs, a->ctl_act, a->kind->snap != NULL, a->kind->learnable != NULL);
}

void app_draw(AppState *a, SDL_Renderer *r)
{
    int w, h;
    if (SDL_GetRendererOutputSize(r, &w, &h) != 0) {
        w = a->win_w;
        h = a->win_h;
    }
    app_present(a);
    if (a->prompt)
        a->vs.sentence = a->prompt_buf;
    a->vs.keys_sentence = a->keys ? a->keys : "";
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
    if (!a->vs.sentence_focus) {
        a->preedit[0] = '\0';
        a->bar_all = 0;
    }
    a->vs.sentence_all = a->bar_all;
    a->vs.preedit = a->preedit[0] ? a->preedit : NULL;
    view_layout(a->view, &a->vs, w, h, &a->layout);
    if (a->vs.query != a->query_drawn) {
        /* the query moved since the last frame (a key, a click, a source
         * following the text's end, an open): its row scrolled into view
         * in this frame's layout, however and whenever it moved */
        int scroll = a->vs.lines_scroll, pan = a->vs.pan_row;
        a->query_drawn = a->vs.query;
        app_keep_query_visible(a);
        if (a->vs.lines_scroll != scroll || a->vs.pan_row != pan)
            view_layout(a->view, &a->vs, w, h, &a->layout);
    }
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
