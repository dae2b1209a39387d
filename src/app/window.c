#define _DEFAULT_SOURCE
/* The window: SDL set-up, the event loop's steps (app_tick, redraw only when
 * something changed, then a batch of events; the platform's loop, platform.h,
 * runs them) and the window's own exports. */
#include "attnviz/app.h"
#include "attnviz/app_state.h"
#include "attnviz/source.h"
#include "attnviz/maps_shown.h"
#include "attnviz/import.h"
#include "attnviz/fonts.h"
#include "attnviz/wake.h"
#include "app_internal.h"
#include "platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The model view's export (maps_heads_export): path less its ".png" is the
 * stem; the status bar says what was written, or why not. */
static int export_model_view(AppState *a, const ViewState *s, char *path)
{
    AttnErr err = {0};
    char said[1300];
    path[strlen(path) - 4] = '\0';
    if (maps_heads_export(a, s, path, said, sizeof said, &err) < 0) {
        char buf[1200];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "export failed: %s", buf);
        return -1;
    }
    char full[4096];
    if (strstr(said, ".svg")) {
        strcat(path, ".svg");
        platform_file_written(path);
        path[strlen(path) - 4] = '\0';
    }
    strcat(path, ".png");
    platform_file_written(path);
    if (!realpath(path, full))
        snprintf(full, sizeof full, "%s", path);
    snprintf(a->last_export, sizeof a->last_export, "%s", full);
    a->export_count++;
    app_status(a, 0, "wrote %s%s", full, strstr(said, ".svg") ? " and .svg" : "");
    return 0;
}

/* Export what (0 heatmap, 1 lines, 2 window) into the export folder under a
 * new name: attnviz-heatmap-YYYYMMDD-HHMMSS[-N].png. The heatmap's key in
 * the model view exports what it shows: attnviz-model-view-….png and
 * .svg (the maps with their marks) or attnviz-score-overview-….png and
 * .svg. */
int app_export(AppState *a, int what)
{
    static const char *const kinds[3] = {"heatmap", "lines", "window"};
    struct stat st;
    if (stat(a->export_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        app_status(a, 1, "cannot export: folder %s does not exist", a->export_dir);
        return -1;
    }
    app_present(a); /* the maps of now, not of the last frame */
    int model_view = what == 0 && a->vs.grid && a->kind->maps && !a->vs.cmp_ref;
    const char *kind = !model_view ? kinds[what] : a->vs.score_map ? "score-overview" : "model-view";
    char stamp[32], path[1200];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(path, sizeof path, "%s/attnviz-%s-%s.png", a->export_dir, kind, stamp);
    for (int k = 2; stat(path, &st) == 0 && k < 1000; k++)
        snprintf(path, sizeof path, "%s/attnviz-%s-%s-%d.png", a->export_dir, kind, stamp, k);

    ViewState s = a->vs;
    s.hover_i = s.hover_j = -1;
    s.key = -1;
    s.help = 0;
    s.dark = a->opt ? a->opt->theme_dark : 0;
    s.scale = 2.0f * a->ui_scale * a->dpi_scale;
    if (what == 0 && a->vs.cmp_ref) /* a comparison: its three panels and the CSV */
        return compare_export(a, &s, path);
    if (model_view)
        return export_model_view(a, &s, path);
    AttnErr err = {0};
    SDL_Surface *surf = NULL;
    AppFonts fonts;
    int have_fonts = fonts_open(&fonts, a->opt ? a->opt->font : NULL, &err) == 0;
    if (have_fonts && what == 2) {
        s.dark = 1;
        s.sentence_focus = 0;
        surf = view_render_window(&fonts.view, &s, a->layout.w * 2, a->layout.h * 2, &err);
    } else if (have_fonts) {
        surf = what == 0 && a->kind->export_heatmap
                   ? a->kind->export_heatmap(a, &s, &fonts.view, &err) /* as the command line draws it */
                   : view_render_panel(&fonts.view, &s, what == 0 ? PANEL_HEATMAP : PANEL_LINES, &err);
    }
    fonts_close(&fonts);
    if (!surf || export_save_png(surf, path, &err) < 0) {
        char buf[1200];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "export failed: %s", buf);
        SDL_FreeSurface(surf);
        return -1;
    }
    SDL_FreeSurface(surf);
    platform_file_written(path);
    char full[4096], csv[1200] = "";
    if (what == 0 && a->kind->maps) { /* a model's or a file's map: its numbers beside it */
        size_t n = strlen(path);
        snprintf(csv, sizeof csv, "%.*s.csv", (int)(n - 4), path);
        if (import_write_csv(a->kind->maps(a)->imp, csv, &err) < 0) {
            char buf[1200];
            attn_err_format(&err, buf, sizeof buf);
            app_status(a, 1, "wrote %s, but not its CSV: %s", path, buf);
            return -1;
        }
        platform_file_written(csv);
    }
    if (!realpath(path, full))
        snprintf(full, sizeof full, "%s", path);
    snprintf(a->last_export, sizeof a->last_export, "%s", full);
    a->export_count++;
    app_status(a, 0, "wrote %s%s", full, csv[0] ? " and its numbers as .csv" : "");
    return 0;
}

static void set_title(SDL_Window *w, const char *text)
{
    char title[512];
    snprintf(title, sizeof title, "attnviz \xE2\x80\x94 %s", text && *text ? text : "(empty)");
    platform_window_title(w, title);
}

/* High-DPI: events come in window points, drawing is in pixels. */
static void scale_event(SDL_Event *e, float k)
{
    if (k == 1.0f)
        return;
    if (e->type == SDL_MOUSEMOTION) {
        e->motion.x = (int)(e->motion.x * k);
        e->motion.y = (int)(e->motion.y * k);
    } else if (e->type == SDL_MOUSEBUTTONDOWN || e->type == SDL_MOUSEBUTTONUP) {
        e->button.x = (int)(e->button.x * k);
        e->button.y = (int)(e->button.y * k);
    }
}

/* The loop's state between its steps. */
typedef struct Loop {
    AppState *a;
    SDL_Window *win;
    SDL_Renderer *r;
    char *shown_title;
    int fullscreen;
    /* the autosave's session of what was shown (shown.json), restored at
     * the start through the loop (autosave_setup): RESTORE_DUE until the
     * loop asks, RESTORE_ASKED until its open comes (loop_open) */
    enum { RESTORE_NONE, RESTORE_DUE, RESTORE_ASKED } restore;
} Loop;

/* app_tick, and the frame drawn when something changed; returns how long
 * to wait for events (-1: until one comes; else an autosave is due). */
static int loop_frame(void *ctx)
{
    Loop *l = ctx;
    AppState *a = l->a;
    int wait_ms;
    if (app_tick(a, SDL_GetTicks(), &wait_ms))
        a->dirty = 1;
    if (platform_fonts_changed()) { /* a page's fallback font arrived: its characters, not boxes */
        view_fonts_changed(a->view);
        a->dirty = 1;
    }
    char note[512];
    if (platform_note(note, sizeof note)) { /* a page's storage refused a session */
        app_status(a, 1, "%s", note);
        a->dirty = 1;
    }
    if (a->dirty) {
        const char *title = app_title(a); /* (a model opening: its name first) */
        if (!l->shown_title || strcmp(l->shown_title, title) != 0) {
            free(l->shown_title);
            l->shown_title = strdup(title);
            set_title(l->win, title);
        }
        if (a->fullscreen != l->fullscreen) {
            l->fullscreen = a->fullscreen;
            SDL_SetWindowFullscreen(l->win, l->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        }
        app_draw(a, l->r);
        SDL_RenderPresent(l->r);
        a->dirty = 0;
    }
    return wait_ms;
}

/* Pixels per window point: more than 1 on a HiDPI screen, and in a page
 * at the browser's device pixel ratio, which its zoom changes while the
 * page runs (SDL then sends a resize): read again at each window event. */
static void update_dpi(AppState *a, SDL_Window *win, SDL_Renderer *r)
{
    int ww, wh, pw, ph;
    SDL_GetWindowSize(win, &ww, &wh);
    if (SDL_GetRendererOutputSize(r, &pw, &ph) != 0)
        return;
    a->dpi_scale = ww > 0 && pw > ww ? (float)pw / ww : 1.0f;
    a->vs.scale = a->ui_scale * a->dpi_scale;
}

/* A batch of events, e and the rest of the queue, handed over. Background
 * work's wake event (wake.h) only wakes the loop: app_tick takes its
 * results, and the frame is drawn again. */
static void loop_events(void *ctx, SDL_Event *first)
{
    Loop *l = ctx;
    AppState *a = l->a;
    SDL_Event e = *first;
    int changed = 0;
    do {
        if (app_wake_is(&e)) { /* a result ready: app_tick takes it */
            changed = 1;
            continue;
        }
        /* of a run of queued motion events only the last counts (a weight
         * drag depends on the pointer's position, not on its path) */
        SDL_Event next;
        if (e.type == SDL_MOUSEMOTION &&
            SDL_PeepEvents(&next, 1, SDL_PEEKEVENT, SDL_FIRSTEVENT, SDL_LASTEVENT) == 1 &&
            next.type == SDL_MOUSEMOTION)
            continue;
        if (e.type == SDL_WINDOWEVENT)
            update_dpi(a, l->win, l->r);
        scale_event(&e, a->dpi_scale);
        changed |= app_handle_event(a, &e);
    } while (!a->quit && SDL_PollEvent(&e));
    a->dirty = changed;
}

static int loop_done(void *ctx)
{
    return ((Loop *)ctx)->a->quit;
}

/* What app_run saves after the loop, for a page that is hidden or closed
 * while its loop goes on. */
static void loop_suspend(void *ctx)
{
    app_autosave(((Loop *)ctx)->a, 1);
}

/* A path opened outside the event queue (PlatformLoop.open): a drop, or
 * what loop_asked handed over; a drop's as the queue's SDL_DROPFILE would
 * be. The restore's token is the autosave's path (loop_asked): any other
 * open coming first (a drop) drops the restore, as a newer open drops an
 * older. Redrawn at the next frame. */
static void loop_open(void *ctx, const char *path)
{
    Loop *l = ctx;
    AppState *a = l->a;
    int dirty = a->dirty;
    if (l->restore == RESTORE_ASKED && strcmp(path, a->autosave_path) == 0) {
        l->restore = RESTORE_NONE;
        app_restore_shown(a); /* (its message, the command line's flags over it) */
        a->dirty = 1;
        return;
    }
    l->restore = RESTORE_NONE;
    SDL_Event e;
    SDL_zero(e);
    e.type = SDL_DROPFILE;
    e.drop.file = (char *)path; /* borrowed: app_handle_event only reads it */
    a->dirty = app_handle_event(a, &e) || dirty;
}

/* The open asked for (PlatformLoop.asked): the start's restore first,
 * then the path an event left (app_open_later: Ctrl+O's prompt). */
static int loop_asked(void *ctx, char *path, size_t n)
{
    Loop *l = ctx;
    AppState *a = l->a;
    if (l->restore == RESTORE_DUE && strlen(a->autosave_path) < n) {
        l->restore = RESTORE_ASKED;
        memcpy(path, a->autosave_path, strlen(a->autosave_path) + 1);
        return 1;
    }
    return app_open_asked(a, path, n);
}

/* Until the user quits: the platform's loop (platform_run_loop) runs
 * loop_frame and loop_events, and the opens they ask for (loop_asked);
 * restore: the autosave's session of what was shown is to be opened. */
static void run_loop(AppState *a, SDL_Window *win, SDL_Renderer *r, int restore)
{
    Loop l = {a, win, r, NULL, 0, restore ? RESTORE_DUE : RESTORE_NONE};
    a->autosave_at = SDL_GetTicks();
    a->dirty = 1;
    platform_run_loop(
        &(PlatformLoop){&l, loop_frame, loop_events, loop_done, loop_suspend, loop_open, loop_asked});
    free(l.shown_title);
}

/* The sentence's state from the autosave. */
static void autosave_sentence(AppState *a, const Options *o)
{
    struct stat st;
    if (stat(a->autosave_path, &st) != 0)
        return;
    SessionView asv;
    AttnErr err = {0};
    if (app_load_session(a->m, &asv, a->autosave_path, &err) < 0) {
        app_status(a, 1, "autosave %s not restored (damaged?); starting fresh", a->autosave_path);
        return;
    }
    if (app_cli_overrides(a->m, &asv, o, &err) < 0) /* flags given now win */
        app_status(a, 1, "%s", err.msg);
    app_set_sentence(a, a->m->text ? a->m->text : "");
    app_apply_session_view(a, &asv);
    session_view_free(&asv);
    a->unsaved = 0;
    char from[1024];
    if (app_autosave_from(a, from, sizeof from) && stat(from, &st) == 0) {
        /* the same state as that file: Ctrl+S goes on writing it */
        snprintf(a->session_path, sizeof a->session_path, "%s", from);
        app_status(a, 0, "restored %s as you last saved it (--fresh starts clean)", from);
    } else {
        app_status(a, 0, "restored your unsaved work from %s (--fresh starts clean)", a->autosave_path);
    }
}

/* The autosave file in SDL's per-user folder; restore it at start (the
 * sentence's state, then what was shown over it: a model, an attention
 * file) unless the command line named a sentence, a file, a model or a
 * session (restore 0), or --fresh. The sentence's state is restored here;
 * what was shown over it by the loop (1 returned: run_loop's restore),
 * which opens it before the desktop's first frame and after the page's,
 * a model then opened on the one-thread page in slices between frames
 * (platform.h's PlatformLoop.asked). */
static int autosave_setup(AppState *a, const Options *o, const SessionView *sv, int restore)
{
    char *dir = SDL_GetPrefPath("attnviz", "attnviz");
    if (!dir)
        return 0;
    snprintf(a->autosave_path, sizeof a->autosave_path, "%sautosave.json", dir);
    SDL_free(dir);
    if (!restore || sv || o->fresh || o->sentence || o->sentence_file || o->session)
        return 0;
    autosave_sentence(a, o);
    return 1;
}

int app_run(const Options *o, void *sentence, const SourceKind *kind, void *opened, AttnErr *err)
{
    Model *m;
    SentenceList *sentences;
    const SessionView *sv;
    source_sentence_parts(sentence, &m, &sentences, &sv);
    SDL_Window *win = NULL;
    SDL_Renderer *r = NULL;
    AppState *a = NULL;
    AppFonts fonts = {0}; /* the view's: closed after it */
    int rc = 0, taken = 0; /* opened given to the app (which closes it) */
    const char *asked = getenv("SDL_VIDEODRIVER");
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return attn_err_set(err, ATTN_E_IO, NULL, 0,
                            "cannot open a window (%s); use --print or --export", SDL_GetError());
    platform_window_setup(); /* the locale, the platform's hints */
    app_wake_event(); /* registered here, before any thread pushes it */
    const char *drv = SDL_GetCurrentVideoDriver();
    if ((!asked || !*asked) && drv && (strcmp(drv, "offscreen") == 0 || strcmp(drv, "dummy") == 0)) {
        rc = attn_err_set(err, ATTN_E_IO, NULL, 0,
                          "cannot open a window (no display: DISPLAY/WAYLAND_DISPLAY not set); "
                          "use --print or --export");
        goto cleanup;
    }
    /* 1280×800, or the whole screen when it is smaller (an 800×600 projector) */
    int ww0 = 1280, wh0 = 800;
    SDL_Rect usable;
    if (SDL_GetDisplayUsableBounds(0, &usable) == 0 && usable.w > 0 && usable.h > 0) {
        ww0 = usable.w < ww0 ? usable.w : ww0;
        wh0 = usable.h < wh0 ? usable.h : wh0;
    }
    win = SDL_CreateWindow("attnviz", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, ww0, wh0,
                           SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!win) {
        rc = attn_err_set(err, ATTN_E_IO, NULL, 0, "cannot open a window (%s); use --print or --export",
                          SDL_GetError());
        goto cleanup;
    }
    /* text input only while a text field has focus: otherwise the key
     * that focuses the sentence bar ("/") would also type itself */
    SDL_StopTextInput();
    r = SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!r)
        r = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    if (!r) {
        rc = attn_err_set(err, ATTN_E_IO, NULL, 0, "cannot create a renderer (%s)", SDL_GetError());
        goto cleanup;
    }
    a = calloc(1, sizeof *a);
    if (!a) {
        rc = attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        goto cleanup;
    }
    if ((rc = app_init(a, m, o, sentences)) < 0) {
        attn_err_set(err, -rc, NULL, 0, "cannot start");
        goto cleanup;
    }
    if (sv) {
        app_apply_session_view(a, sv);
        a->unsaved = 0;
    }
    if (kind) {
        taken = 1;
        if ((rc = kind->show(a, opened)) < 0) {
            attn_err_set(err, -rc, NULL, 0, "cannot show the %s", kind->name);
            goto cleanup;
        }
        if (o->probe && kind->probe) /* the window runs it again: its worker, its bar */
            maps_probe_run(a, o->probe_n, o->has_seed ? o->seed : 0);
    }
    /* written whatever is shown; restored when the command line named nothing */
    int restore = autosave_setup(a, o, sv, !kind && !o->window_session);
    if (o->window_session) { /* a session of a model or an attention file: as Ctrl+O opens it, but
                                waited for (a failure ends the start, the flags apply over it) */
        if (app_open_path(a, o->window_session) < 0 || app_open_wait(a) < 0) {
            rc = attn_err_set(err, ATTN_E_IO, NULL, 0, "%s", a->status);
            goto cleanup;
        }
        maps_session_flags(a, o); /* flags given now win */
        a->unsaved = 0;
    }
    if ((rc = fonts_open(&fonts, o->font, err)) < 0)
        goto cleanup;
    a->view = view_create(r, &fonts.view, err);
    if (!a->view) {
        rc = -ATTN_E_IO;
        goto cleanup;
    }
    update_dpi(a, win, r);
    run_loop(a, win, r, restore);
    app_autosave(a, 1);
cleanup:
    if (kind && !taken)
        kind->cli_free(opened);
    if (a) {
        view_destroy(a->view);
        app_free(a);
        free(a);
    }
    fonts_close(&fonts);
    if (r)
        SDL_DestroyRenderer(r);
    if (win)
        SDL_DestroyWindow(win);
    SDL_Quit();
    return rc < 0 ? rc : 0;
}
