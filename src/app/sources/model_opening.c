#define _DEFAULT_SOURCE
/* A model's first forward, and the window's open of a model on a thread of
 * its own (model_source.h's ModelOpening): the folder or GGUF file read,
 * the tokenizer and the first forward run on a worker (background.h) while
 * the window keeps drawing and taking keys; the app's tick shows the
 * model it made. Where there is no thread (the browser's one-thread page:
 * bg_threaded) the open stays on the UI thread, broken up by bg_breathe
 * (model_source.c's lmsrc_open). Not the text's later forwards: those are
 * model_source.c's worker's. */
#include "attnviz/app_state.h"
#include "attnviz/background.h"
#include "attnviz/import.h"
#include "attnviz/lm.h"
#include "attnviz/model_source.h"
#include "attnviz/source.h"
#include "attnviz/wake.h"
#include "model_internal.h"
#include "model_window.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the first forward ------------------------------------------------------------ */

typedef struct ComputeHook {
    ModelSummaries sum;
    const Lm *lm;
    const ModelWatch *watch; /* the worker's open's, or NULL */
} ComputeHook;

static void compute_layer(void *user, int layer)
{
    ComputeHook *h = user;
    model_summaries_layer(&h->sum, h->lm, layer);
    if (h->watch && h->watch->layer)
        h->watch->layer(h->watch->user, layer, h->lm->info.n_layer);
}

/* Between two layers of the forward: on a worker, its watcher's cancel (a
 * newer open came); on the UI thread the browser's one-thread page draws
 * a frame now and then (bg_breathe), never cancelled. */
static int compute_breathe(void *user)
{
    ComputeHook *h = user;
    if (h->watch)
        return h->watch->cancel ? h->watch->cancel(h->watch->user) : 0;
    bg_breathe();
    return 0;
}

/* g->ids checked for a forward: some tokens (else what the vocabulary
 * lacks of text, len bytes), at most n_positions, each a row of the
 * embedding. */
int model_check_ids(ModelOpened *g, const char *text, size_t len, AttnErr *err)
{
    int T = g->ids.n;
    char left[600];
    if (T == 0 && model_left_out(g, text, len, &g->ids, left, sizeof left) > 0)
        return attn_err_set(err, ATTN_E_RANGE, g->path, 0, "no tokens, no maps: the vocabulary has no token for %s",
                            left);
    if (T == 0)
        return attn_err_set(err, ATTN_E_RANGE, g->path, 0, "the text is empty: no tokens, no maps");
    if (T > g->lm.info.n_positions)
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, g->path, 0,
                            "%d tokens: %s takes at most %d (n_positions)", T, g->name, g->lm.info.n_positions);
    for (int i = 0; i < T; i++)
        if (g->ids.id[i] >= g->lm.info.n_vocab)
            return attn_err_set(err, ATTN_E_RANGE, g->path, 0, "token id %d is not a row of %s (%d rows)",
                                g->ids.id[i], g->lm.info.embed_name, g->lm.info.n_vocab);
    return 0;
}

/* g->text = text (len bytes) and g->ids its tokens. */
int model_opened_set_text(ModelOpened *g, const char *text, size_t len, AttnErr *err)
{
    free(g->text);
    g->text = malloc(len + 1);
    if (!g->text)
        return attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
    memcpy(g->text, text, len);
    g->text[len] = '\0';
    int rc = model_encode(g, text, len, &g->ids, err);
    if (rc < 0)
        return rc;
    g->n_given = g->ids.n;
    return 0;
}

int model_compute_text(ModelOpened *g, const char *text, size_t len, AttnErr *err)
{
    int rc = model_opened_set_text(g, text, len, err);
    if (rc == 0)
        rc = model_check_ids(g, text, len, err);
    return rc < 0 ? rc : model_compute_ids(g, err);
}

int model_compute_ids(ModelOpened *g, AttnErr *err)
{
    int T = g->ids.n, L = g->lm.info.n_layer, H = g->lm.info.n_head;
    int rc = model_check_ids(g, g->text, strlen(g->text), err);
    if (rc < 0)
        return rc;
    /* for the window, every map's thumbnail and scores as the forward goes */
    ComputeHook hook = {{0}, &g->lm, g->watch};
    LmHooks hooks = {compute_breathe, compute_layer, &hook, NULL};
    if (g->for_window)
        model_summaries_init(&hook.sum, &g->lm.info, g->ids.id, T); /* (without: compute_layer does nothing) */
    rc = lm_forward(&g->lm, g->ids.id, T, &hooks, err);
    AttnErr nerr = {0}; /* the window's R: without them (no W_O recorded) the weights alone */
    if (rc == 0 && (g->want_norms || g->for_window) && lm_value_norms(&g->lm, &nerr) < 0 && g->want_norms)
        rc = attn_err_set(err, nerr.code, g->path, 0, "%s", nerr.msg);
    RtMaps *maps = rc == 0 ? lm_maps_take(&g->lm) : NULL;
    if (rc == 0 && !maps)
        rc = attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
    if (rc < 0) {
        model_summaries_free(&hook.sum);
        return rc;
    }
    if (g->im) {
        import_close(g->im);
        free(g->im);
    }
    g->im = model_maps_imported(g->bpe, g->name, maps, g->ids.id, T, L, H, err);
    if (g->im && hook.sum.thumbs) { /* handed over whole (the weights') */
        g->im->pre_thumbs = hook.sum.thumbs;
        g->im->pre_side = hook.sum.side;
        g->im->pre_scores = hook.sum.scores;
        hook.sum.thumbs = NULL;
        hook.sum.scores = NULL;
    }
    model_summaries_free(&hook.sum);
    if (!g->im)
        return -err->code;
    return import_pick(g->im, 0, 0, 0, NULL, err) < 0 ? -err->code : 0; /* layer 1, head 1 */
}


/* ---- the window's open on a worker --------------------------------------------------- */

struct ModelOpening {
    Background *bg;      /* one worker for every open: a newer request makes the running stale */
    int busy;            /* an open submitted, not yet shown or said */
    char name[256];      /* the last part of its path, for the status bar */
    char *asked;         /* the bar's text when it started: typed over since, the bar's text wins */
};

/* What the worker is asked: a path and a text (copies), how slow to make
 * each layer (the tests' ATTNVIZ_TEST_SLOW_LAYERS_MS, read on the UI
 * thread). */
typedef struct OpenDone OpenDone;
typedef struct OpenAsk {
    char *path;
    char *text;
    size_t len;
    int slow_ms;
    OpenDone *done;      /* its result, made here so that one always comes: the worker's */
} OpenAsk;

/* What it hands over: a step (layer done of L: the status bar's progress),
 * or at the end the model made, or the error that stopped it. */
struct OpenDone {
    ModelOpened *g;      /* the last's, when rc is 0 */
    int rc;
    int layer, L;        /* a step's: layers done of L */
    char msg[1200];
};

typedef struct OpenWatch {
    BgJob *job;
    int slow_ms;
    Uint32 said;         /* when the last step was posted (SDL_GetTicks) */
} OpenWatch;

/* Steps posted at most this often (ms): each redraws the window, which on
 * a page drawn by the CPU (no GPU) takes from the open's cores. */
#define STEP_MS 100

static void done_free(void *p)
{
    OpenDone *r = p;
    if (r)
        model_opened_free(r->g); /* a result never shown (a newer open came): its model too */
    free(r);
}

static void ask_free(void *p)
{
    OpenAsk *q = p;
    if (q) {
        free(q->path);
        free(q->text);
        done_free(q->done);
    }
    free(q);
}

static int watch_cancel(void *user)
{
    return bg_stale(((OpenWatch *)user)->job);
}

/* After each layer of the first forward: how far it is, for the status bar. */
static void watch_layer(void *user, int layer, int n_layer)
{
    OpenWatch *w = user;
    if (w->slow_ms > 0)
        SDL_Delay((Uint32)w->slow_ms);
    Uint32 now = SDL_GetTicks();
    if (w->said && now - w->said < STEP_MS)
        return;
    w->said = now;
    OpenDone *r = calloc(1, sizeof *r);
    if (!r)
        return; /* the progress is not said: the open goes on */
    r->layer = layer + 1;
    r->L = n_layer;
    bg_post(w->job, r, done_free, 0);
}

/* The files read: the status bar's "the first forward: layer 0 of L". */
static void watch_read(void *user, int n_layer)
{
    OpenWatch *w = user;
    OpenDone *step = calloc(1, sizeof *step);
    if (step) {
        step->L = n_layer;
        bg_post(w->job, step, done_free, 0);
    }
}

/* On the worker: open, then the first forward of the text (cancelled
 * between layers when a newer open came). */
static void open_run(void *ctx, void *request, BgJob *job)
{
    (void)ctx;
    OpenAsk *q = request;
    OpenDone *r = q->done;
    AttnErr err = {0};
    q->done = NULL; /* posted below */
    OpenWatch w = {job, q->slow_ms, 0};
    ModelWatch watch = {watch_cancel, watch_read, watch_layer, &w};
    ModelOpened *g = NULL;
    int rc = model_open_window(q->path, q->text, q->len, &watch, &g, &err);
    if (rc < 0)
        attn_err_format(&err, r->msg, sizeof r->msg);
    r->g = g;
    r->rc = rc;
    bg_post(job, r, done_free, 1); /* stale (a newer open): freed there, never shown */
}

int model_open_window(const char *path, const char *text, size_t len, const ModelWatch *watch, ModelOpened **out,
                      AttnErr *err)
{
    ModelOpened *g = NULL;
    int rc = model_open_path(path, 0, &g, err);
    if (rc == 0 && watch && watch->read)
        watch->read(watch->user, g->lm.info.n_layer);
    if (rc == 0) {
        g->for_window = 1;
        g->watch = watch;
        rc = len ? model_opened_set_text(g, text, len, err) : model_opened_set_text(g, "The", 3, err);
        /* the window keeps the first n_positions tokens of a longer text, as
         * typing does (the bar's text set when it is shown says so) */
        if (rc == 0 && g->ids.n > g->lm.info.n_positions)
            g->ids.n = g->lm.info.n_positions;
        if (rc == 0)
            rc = model_compute_ids(g, err);
        g->watch = NULL;
    }
    if (rc < 0) {
        model_opened_free(g);
        g = NULL;
    }
    *out = g;
    return rc;
}

int model_opening_busy(const ModelOpening *o)
{
    return o && o->busy;
}

const char *model_opening_name(const ModelOpening *o)
{
    return o ? o->name : "";
}

void model_opening_cancel(ModelOpening *o)
{
    if (!o || !o->busy)
        return;
    bg_cancel(o->bg);
    o->busy = 0;
}

void model_opening_free(ModelOpening *o)
{
    if (!o)
        return;
    bg_destroy(o->bg);
    free(o->asked);
    free(o);
}

int model_opening_start(AppState *a, const char *path, const char *text, size_t len)
{
    ModelOpening *o = a->opening;
    if (!o && (o = calloc(1, sizeof *o)) && !(o->bg = bg_create(open_run, NULL, app_wake, NULL))) {
        free(o);
        o = NULL;
    }
    if (!o) {
        app_status(a, 1, "cannot open %s: cannot start the worker thread", path);
        return -1;
    }
    a->opening = o;
    OpenAsk *q = calloc(1, sizeof *q);
    char *asked = malloc(len + 1);
    if (q && (q->path = strdup(path)) && (q->text = malloc(len + 1)) && (q->done = calloc(1, sizeof *q->done)) &&
        asked) {
        memcpy(q->text, text, len);
        q->text[len] = '\0';
        q->len = len;
        const char *slow = getenv("ATTNVIZ_TEST_SLOW_LAYERS_MS"); /* read here: the worker never reads it */
        q->slow_ms = slow ? atoi(slow) : 0;
    } else {
        ask_free(q);
        free(asked);
        app_status(a, 1, "cannot open %s: out of memory", path);
        return -1;
    }
    memcpy(asked, text, len);
    asked[len] = '\0';
    free(o->asked);
    o->asked = asked;
    size_t end = strlen(path), start;
    while (end > 1 && path[end - 1] == '/') /* "dir/": its name, not "" */
        end--;
    for (start = end; start > 0 && path[start - 1] != '/'; start--)
        ;
    snprintf(o->name, sizeof o->name, "%.*s", (int)(end - start), path + start);
    bg_submit(o->bg, q, ask_free);
    o->busy = 1;
    app_status(a, 0, "opening %s\xE2\x80\xA6 reading its files and tokenizer (the window stays usable)", o->name);
    return 0;
}

/* The model made: shown on the bar's text as it is now. */
static int opening_show(AppState *a, ModelOpening *o, ModelOpened *g)
{
    const char *now = a->text ? a->text : "";
    int typed = strcmp(now, o->asked) != 0;
    if (typed) { /* typed over during the open: the new text, computed as an edit */
        char *t = strdup(now);
        if (!t) {
            model_opened_free(g);
            app_status(a, 1, "cannot open %s: out of memory", o->name);
            return -1;
        }
        free(g->text);
        g->text = t;
    }
    /* typing (or a prompt) goes on where it was: the bar keeps the keyboard */
    int cursor = a->vs.cursor, focus = a->vs.sentence_focus, keys = a->vs.keys_focus && g->lm.info.encdec;
    if (source_model.show(a, g) < 0) /* (g is the source's now, or freed) */
        return -1;
    if (typed) { /* the maps shown are the old text's: the query follows the end as the new ones come */
        ModelSource *m = a->src;
        m->follow_end = 1;
        m->follow_row = a->vs.query;
    }
    a->vs.sentence_focus = focus;
    a->vs.keys_focus = keys; /* (a model without a second bar: the first) */
    if (focus && cursor >= 0 && (size_t)cursor <= a->text_len)
        a->vs.cursor = cursor;
    return 0;
}

int model_opening_tick(AppState *a)
{
    ModelOpening *o = a->opening;
    BgResult br;
    if (!o || !o->busy || !bg_take(o->bg, &br))
        return 0;
    OpenDone *r = br.data;
    if (!br.last && r->layer == 0) {
        app_status(a, 0, "opening %s\xE2\x80\xA6 read; the first forward of its %d layers (the window stays usable)",
                   o->name, r->L);
        done_free(r);
        return 1;
    }
    if (!br.last) {
        app_status(a, 0, "opening %s\xE2\x80\xA6 the first forward: layer %d of %d (the window stays usable)", o->name,
                   r->layer, r->L);
        done_free(r);
        return 1;
    }
    o->busy = 0;
    ModelOpened *g = r->g;
    r->g = NULL;
    if (r->rc < 0) {
        app_status(a, 1, "cannot open: %s", r->msg);
        done_free(r);
        app_open_done(a, -1);
        return 1;
    }
    done_free(r);
    app_open_done(a, opening_show(a, o, g) < 0 ? -1 : 0);
    return 1;
}
