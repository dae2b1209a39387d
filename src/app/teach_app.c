/* Teach mode in the window (issue 15): the target the class paints on the
 * heatmap, and a Teacher (teach_model.h) stepping the model's weights a few
 * milliseconds per frame. The maths is the command line's: only the
 * painting, the settings, the loss curve and the stopping live here. */
#include "attnviz/source.h"
#include "attnviz/teach_app.h"
#include "app_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/teach_io.h"

static AppTeach *teach_get(AppState *a)
{
    if (!a->teach) {
        a->teach = calloc(1, sizeof *a->teach);
        if (!a->teach)
            return NULL;
        a->teach->paint = -1;
        a->teach->head = 0;
        a->teach->train = TEACH_WQ | TEACH_WK;
        a->teach->opt = TEACH_OPT_ADAM;
        a->teach->lr = 0.1f;
        a->teach->pace = TEACH_PACE_DEFAULT;
    }
    return a->teach;
}

/* "pace ×2", or "full speed" (names the pace). */
static const char *pace_name(int p)
{
    static char buf[40];
    double f = teach_pace_factor(p);
    if (f <= 0.0)
        return "full speed";
    snprintf(buf, sizeof buf, "pace \xC3\x97%g", f);
    return buf;
}

/* ---- the loss curve ------------------------------------------------------------- */

static void hist_clear(AppTeach *t)
{
    t->n_hist = 0;
    t->steps = 0;
}

static void hist_push(AppTeach *t, double loss)
{
    if (t->n_hist == t->cap_hist) {
        long cap = t->cap_hist ? t->cap_hist * 2 : 1024;
        if (cap > TEACH_HIST_MAX)
            cap = TEACH_HIST_MAX;
        if (t->n_hist >= cap) { /* full: the oldest half goes (the curve keeps its end) */
            long keep = t->n_hist / 2;
            memmove(t->hist, t->hist + t->n_hist - keep, (size_t)keep * sizeof *t->hist);
            t->n_hist = keep;
        } else {
            double *p = realloc(t->hist, (size_t)cap * sizeof *p);
            if (!p)
                return;
            t->hist = p;
            t->cap_hist = cap;
        }
    }
    t->hist[t->n_hist++] = loss;
}

double app_teach_loss(const AppState *a)
{
    const AppTeach *t = a->teach;
    if (!t || !t->t.target || t->t.n_loss <= t->t.steps)
        return NAN;
    return t->t.loss[t->t.steps];
}

/* ---- the teacher ----------------------------------------------------------------- */

static void teacher_stop(AppTeach *t)
{
    teacher_free(&t->t);
    memset(&t->t, 0, sizeof t->t);
}

static int target_rows(const AppTeach *t)
{
    int rows = 0;
    for (int i = 0; t->target && i < t->Tq; i++)
        for (int j = 0; j < t->Tk; j++)
            if (t->target[(size_t)i * t->Tk + j] > 0.0f) {
                rows++;
                break;
            }
    return rows;
}

/* (Re)start the teacher on the model as it is: the optimiser fresh, the
 * loss at the present weights as the curve's next point. quiet: no
 * message when there is nothing to learn yet (while painting). */
static int teacher_restart(AppState *a, int quiet)
{
    AppTeach *t = a->teach;
    teacher_stop(t);
    t->gen = a->m->generation;
    if (!t->target || target_rows(t) == 0) {
        if (!quiet)
            app_status(a, 1, "teach: paint a target first (click cells, or 1-4 for a preset, 5: the current map)");
        return -1;
    }
    if (t->Tq != a->m->T || t->Tk != a->m->Tk) { /* the text's length changed since it was painted */
        if (!quiet)
            app_status(a, 1, "teach: the target was painted for %d\xC3\x97%d tokens and the text now has "
                       "%d\xC3\x97%d: paint it again (1-4 for a preset, 5: the current map)",
                       t->Tq, t->Tk, a->m->T, a->m->Tk);
        return -1;
    }
    AttnErr err;
    memset(&err, 0, sizeof err);
    t->head = a->vs.head;
    int rc = teacher_start(&t->t, a->m, t->target, t->head, t->train, t->opt, t->lr, &err);
    double loss;
    if (rc == 0)
        rc = teacher_loss_now(&t->t, a->m, &loss);
    if (rc < 0) {
        teacher_stop(t);
        t->running = 0;
        if (!quiet)
            app_status(a, 1, "teach: %s%s", err.msg[0] ? err.msg : attn_strerror(rc),
                       a->m->cfg.mode == ATTN_MODE_BASIC ? " (B: learned attention, or U: train x)" : "");
        return -1;
    }
    if (t->t.dropped && !quiet)
        app_status(a, 0, "teach: %d target cell%s on keys the causal mask hides dropped", t->t.dropped,
                   t->t.dropped == 1 ? "" : "s");
    hist_push(t, loss);
    return 0;
}

/* The teacher fits the model and the shown head, else it restarts. */
static int teacher_ready(AppState *a, int quiet)
{
    AppTeach *t = a->teach;
    if (t->t.target && t->gen == a->m->generation && t->head == a->vs.head)
        return 0;
    return teacher_restart(a, quiet);
}

/* The target changed: a new curve, the loss at once when there is one. */
static void target_changed(AppState *a)
{
    AppTeach *t = a->teach;
    hist_clear(t);
    teacher_stop(t);
    teacher_restart(a, 1);
    a->dirty = 1;
    a->unsaved = 1;
}

/* Room for a target of the model's size (zeros when it is new). */
static float *target_for_model(AppState *a)
{
    AppTeach *t = a->teach;
    int Tq = a->m->T, Tk = a->m->Tk;
    if (t->target && t->Tq == Tq && t->Tk == Tk)
        return t->target;
    free(t->target);
    t->target = calloc((size_t)(Tq > 0 ? Tq : 1) * (Tk > 0 ? Tk : 1), sizeof(float));
    t->Tq = t->target ? Tq : 0;
    t->Tk = t->target ? Tk : 0;
    return t->target;
}

/* ---- actions ------------------------------------------------------------------------ */

void app_teach_toggle(AppState *a)
{
    if (!a->kind->learnable) {
        app_status(a, 1, "teach mode trains the sentence's weights: not for an %s", a->kind->name);
        return;
    }
    AppTeach *t = teach_get(a);
    if (!t)
        return;
    t->on = !t->on;
    t->paint = -1;
    if (!t->on) {
        t->running = 0;
        app_status(a, 0, "teach mode off (W: back; the target is kept)");
    } else {
        app_status(a, 0, "teach mode: click cells to paint the target (right button: erase), 1-4 presets, "
                         "5 the current map; Space runs");
        teacher_ready(a, 1);
    }
    a->dirty = 1;
}

/* Painting into a row: its painted cells share the mass equally; a soft
 * row (from a copied map) starts anew with the cell. */
static void paint_row(float *row, int Tk, int j, int on)
{
    int n = 0, soft = 0;
    float first = 0.0f;
    for (int k = 0; k < Tk; k++)
        if (row[k] > 0.0f) {
            if (n++ == 0)
                first = row[k];
            else if (fabsf(row[k] - first) > 1e-6f * first)
                soft = 1;
        }
    int was = row[j] > 0.0f;
    if (on < 0)
        on = !was;
    if (soft && on) {
        memset(row, 0, (size_t)Tk * sizeof *row);
        n = 0;
        was = 0;
    }
    for (int k = 0; k < Tk; k++)
        if (row[k] > 0.0f)
            row[k] = 1.0f;
    row[j] = on ? 1.0f : 0.0f;
    n += (on && !was) - (!on && was);
    for (int k = 0; k < Tk; k++)
        if (row[k] > 0.0f)
            row[k] = 1.0f / (float)n;
}

void app_teach_paint(AppState *a, int i, int j, int on)
{
    AppTeach *t = teach_get(a);
    if (!t || !a->kind->learnable)
        return;
    if (i < 0) {
        i = a->vs.query;
        j = a->vs.key;
        if (j < 0) {
            app_status(a, 0, "teach: pick a key with \xE2\x86\x90 / \xE2\x86\x92, then Enter paints the cell");
            return;
        }
    }
    float *tg = target_for_model(a);
    if (!tg || i >= t->Tq || j < 0 || j >= t->Tk)
        return;
    float *row = tg + (size_t)i * t->Tk;
    int was = row[j] > 0.0f;
    paint_row(row, t->Tk, j, on);
    if ((row[j] > 0.0f) != was)
        target_changed(a);
}

void app_teach_preset(AppState *a, int preset)
{
    AppTeach *t = teach_get(a);
    if (!t || !a->kind->learnable)
        return;
    float *tg = target_for_model(a);
    if (!tg)
        return;
    size_t n = (size_t)t->Tq * t->Tk;
    if (preset >= 0 && preset < TEACH_PRESET_COUNT) {
        teach_preset(preset, t->Tq, t->Tk, tg);
        app_status(a, 0, "teach: target \xE2\x80\x9C%s\xE2\x80\x9D (Space runs)", teach_preset_name(preset));
    } else if (preset == -1) {
        model_prepare(a->m, MODEL_WEIGHTS, a->vs.head);
        AttnMap mp = model_map(a->m, MODEL_WEIGHTS, a->vs.head);
        for (int i = 0; i < t->Tq; i++)
            for (int j = 0; j < t->Tk; j++)
                tg[(size_t)i * t->Tk + j] = mp.v && i < mp.Tq && j < mp.Tk ? mp.v[(size_t)i * mp.stride + j] : 0.0f;
        app_status(a, 0, "teach: the current map is the target (change a setting, then Space learns it back)");
    } else {
        memset(tg, 0, n * sizeof *tg);
        app_status(a, 0, "teach: target cleared");
    }
    target_changed(a);
}

/* Record the weights before the first step: the reset's and one undo step. */
static void keep_before(AppState *a)
{
    AppTeach *t = a->teach;
    if (t->before)
        return;
    t->before = calloc(1, sizeof *t->before);
    if (!t->before)
        return;
    if (app_snap_take(t->before, a->m) < 0) {
        free(t->before);
        t->before = NULL;
        return;
    }
    undo_push(a);
}

/* k steps (or until the time budget, when budget_ticks > 0), then the maps. */
static int steps(AppState *a, long k, Uint64 budget_ticks)
{
    AppTeach *t = a->teach;
    if (teacher_ready(a, 0) < 0)
        return -1;
    keep_before(a);
    Uint64 start = SDL_GetPerformanceCounter();
    int rc = 0;
    long done = 0;
    for (; done < k && rc == 0; done++) {
        rc = teacher_step(&t->t, a->m);
        if (budget_ticks && SDL_GetPerformanceCounter() - start >= budget_ticks) {
            done++;
            break;
        }
    }
    double loss = NAN;
    if (rc == 0)
        rc = teacher_loss_now(&t->t, a->m, &loss);
    for (long s = t->t.steps - done + 1; s <= t->t.steps && s >= 1 && s < t->t.n_loss; s++)
        hist_push(t, t->t.loss[s]);
    t->steps += done;
    app_recompute(a);
    t->gen = a->m->generation;
    if (rc < 0) {
        t->running = 0;
        app_status(a, 1, "teach: a step failed: %s", attn_strerror(rc));
    }
    return rc;
}

/* Does a word occur twice among the n labels (one vector for both)? */
static int repeated(const char *const *l, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (l[i] && l[j] && strcmp(l[i], l[j]) == 0)
                return 1;
    return 0;
}

/* Two queries or two keys with the same word have the same vector without
 * positions: rows or columns the weights cannot tell apart. */
static int repeated_words(const Model *m)
{
    return repeated(m->labels, m->T) || repeated(m->cross ? m->klabels : m->labels, m->Tk);
}

/* Stop when learned or on a plateau, and say which. */
static void check_stop(AppState *a)
{
    AppTeach *t = a->teach;
    double loss = app_teach_loss(a);
    if (isfinite(loss) && loss < TEACH_LOSS_MIN) {
        t->running = 0;
        app_status(a, 0, "learned: the loss is %.2g after %ld steps (Backspace: the weights before)", loss,
                   t->steps);
    } else if (teacher_plateau(&t->t, TEACH_PLATEAU_WINDOW, TEACH_PLATEAU_TOL)) {
        t->running = 0;
        int hint = loss > 0.05 && repeated_words(a->m) && !a->m->cfg.posenc;
        app_status(a, 0, "stopped after %ld steps: the loss stopped improving (%.3f)%s", t->steps, loss,
                   hint ? " \xE2\x80\x94 a word twice has one vector: try posenc (P)" : "");
    }
}

void app_teach_run(AppState *a, int run)
{
    AppTeach *t = teach_get(a);
    if (!t || !a->kind->learnable)
        return;
    t->running = run < 0 ? !t->running : run;
    t->clock_on = 0;
    if (t->running && teacher_ready(a, 0) < 0)
        t->running = 0;
    else if (t->running)
        app_status(a, 0, "teaching at %s: Space pauses, > faster, < slower", pace_name(t->pace));
    else
        app_status(a, 0, "paused after %ld steps (loss %.4g)", t->steps, app_teach_loss(a));
    a->dirty = 1;
}

void app_teach_step(AppState *a)
{
    AppTeach *t = teach_get(a);
    if (!t || !a->kind->learnable)
        return;
    t->running = 0;
    if (steps(a, 1, 0) == 0)
        app_status(a, 0, "step %ld: loss %.4g", t->steps, app_teach_loss(a));
}

void app_teach_reset(AppState *a)
{
    AppTeach *t = teach_get(a);
    if (!t)
        return;
    t->running = 0;
    if (!t->before) {
        app_status(a, 0, "teach: nothing to reset (no step taken)");
        return;
    }
    app_snap_restore(t->before, a->m);
    app_snap_free(t->before);
    free(t->before);
    t->before = NULL;
    app_recompute(a);
    hist_clear(t);
    teacher_restart(a, 1);
    app_status(a, 0, "teach: the weights from before teaching are back");
}

static void settings_changed(AppState *a)
{
    AppTeach *t = a->teach;
    char names[40];
    teach_train_names(t->train, names, sizeof names);
    app_status(a, 0, "teach: %s, lr %g, training %s", teach_opt_name(t->opt), (double)t->lr, names);
    if (t->t.target) /* the optimiser starts afresh with the new settings */
        teacher_restart(a, 1);
    a->dirty = 1;
    a->unsaved = 1;
}

void app_teach_lr(AppState *a, int dir)
{
    AppTeach *t = teach_get(a);
    if (!t)
        return;
    float lr = dir > 0 ? t->lr * 2.0f : t->lr / 2.0f;
    if (lr >= 1e-6f && lr <= 1e3f)
        t->lr = lr;
    settings_changed(a);
}

static const double paces[TEACH_PACE_COUNT] = TEACH_PACES;

double teach_pace_factor(int p)
{
    return paces[p < 0 ? 0 : p >= TEACH_PACE_COUNT ? TEACH_PACE_COUNT - 1 : p];
}

/* steps(t) = r0 · h / ln 2 · (2^(t/h) − 1): the integral of a rate r0
 * doubling every h. */
long teach_pace_steps(int p, uint32_t dt_ms)
{
    double f = teach_pace_factor(p);
    if (f <= 0.0)
        return 1000000000L;
    double h = TEACH_PACE_DOUBLING_MS;
    double c = TEACH_PACE_START * f * (h / 1000.0) / log(2.0);
    double n = c * (exp2((double)dt_ms / h) - 1.0);
    return n < 1e9 ? (long)n : 1000000000L;
}

void app_teach_pace(AppState *a, int dir)
{
    AppTeach *t = teach_get(a);
    if (!t)
        return;
    int p = t->pace + (dir > 0 ? 1 : -1);
    if (p >= 0 && p < TEACH_PACE_COUNT)
        t->pace = p;
    t->clock_on = 0; /* the new pace counts from the next tick */
    app_status(a, 0, "teach: %s (> faster, < slower)%s", pace_name(t->pace),
               p < 0 ? ": the slowest" : p >= TEACH_PACE_COUNT ? ": the fastest" : "");
    a->dirty = 1;
}

void app_teach_opt(AppState *a)
{
    AppTeach *t = teach_get(a);
    if (!t)
        return;
    t->opt = t->opt == TEACH_OPT_ADAM ? TEACH_OPT_SGD : TEACH_OPT_ADAM;
    settings_changed(a);
}

void app_teach_train(AppState *a)
{
    AppTeach *t = teach_get(a);
    if (!t)
        return;
    /* wq,wk → + x → + v (additive only) → x alone (basic mode) → wq,wk */
    const int cycle[] = {TEACH_WQ | TEACH_WK, TEACH_WQ | TEACH_WK | TEACH_X,
                         TEACH_WQ | TEACH_WK | TEACH_X | TEACH_V, TEACH_X};
    int n = 4, k = 0;
    while (k < n && cycle[k] != t->train)
        k++;
    do
        k = (k + 1) % n;
    while ((cycle[k] & TEACH_V) && a->m->cfg.score != ATTN_SCORE_ADDITIVE);
    t->train = cycle[k];
    settings_changed(a);
}

/* ---- time, other actions, the view ------------------------------------------------------ */

void app_teach_sync(AppState *a)
{
    AppTeach *t = a->teach;
    if (!t || !t->target)
        return;
    if (t->Tq != a->m->T || t->Tk != a->m->Tk) {
        app_status(a, 0, "teach: the target was for %d\xC3\x97%d tokens, the sentence has %d\xC3\x97%d: target dropped",
                   t->Tq, t->Tk, a->m->T, a->m->Tk);
        free(t->target);
        t->target = NULL;
        t->Tq = t->Tk = 0;
        t->running = 0;
        teacher_stop(t);
        hist_clear(t);
        return;
    }
    if (t->t.target && (t->gen != a->m->generation || t->head != a->vs.head))
        teacher_restart(a, 1); /* the model changed under the teacher: the loss again */
}

/* The steps the pace has due by now_ms since the run's clock started: the
 * first at once, then the pace's. */
static long steps_due(const AppTeach *t, uint32_t now_ms)
{
    return t->clock_steps + 1 + teach_pace_steps(t->pace, now_ms - t->clock_ms);
}

/* Milliseconds from now_ms until the next step is due (t's pace not full
 * speed): the least dt with teach_pace_steps(dt) >= the steps taken. */
static int wait_next(const AppTeach *t, uint32_t now_ms)
{
    long n = t->steps - t->clock_steps; /* due when the pace's count reaches n */
    double h = TEACH_PACE_DOUBLING_MS;
    double c = TEACH_PACE_START * teach_pace_factor(t->pace) * (h / 1000.0) / log(2.0);
    double at = ceil(h * log2((double)n / c + 1.0));
    uint32_t dt = now_ms - t->clock_ms;
    while (at > dt && teach_pace_steps(t->pace, (uint32_t)at - 1) >= n)
        at--; /* rounding: never later than due */
    return at > dt ? (int)(at - dt < 1000 ? at - dt : 1000) : 0;
}

static void wait_at_most(int *wait_ms, int ms)
{
    if (*wait_ms < 0 || ms < *wait_ms)
        *wait_ms = ms;
}

int app_teach_tick(AppState *a, uint32_t now_ms, int *wait_ms)
{
    AppTeach *t = a->teach;
    if (!t || !t->running || !t->on)
        return 0;
    int full = teach_pace_factor(t->pace) <= 0.0;
    if (!t->clock_on) { /* the run (or the pace) starts now */
        t->clock_on = 1;
        t->clock_ms = now_ms;
        t->clock_steps = t->steps;
    }
    long k = full ? 1000000 : steps_due(t, now_ms) - t->steps;
    if (k <= 0) { /* not yet: nothing changes, come back when a step is due */
        wait_at_most(wait_ms, wait_next(t, now_ms));
        return 0;
    }
    if (k > 1000000)
        k = 1000000;
    if (t->max_steps_tick > 0 && k > t->max_steps_tick)
        k = t->max_steps_tick;
    Uint64 budget = SDL_GetPerformanceFrequency() * TEACH_TICK_MS / 1000;
    if (steps(a, k, t->max_steps_tick > 0 ? 0 : budget) == 0)
        check_stop(a);
    if (t->running)
        wait_at_most(wait_ms, full || t->steps < steps_due(t, now_ms) ? 0 : wait_next(t, now_ms));
    return 1;
}

void app_teach_view(AppState *a)
{
    AppTeach *t = a->teach;
    ViewState *s = &a->vs;
    s->teach = t && t->on && a->kind->learnable;
    if (!s->teach) {
        s->teach_target = NULL;
        return;
    }
    int ok = t->target && t->Tq == s->map.Tq && t->Tk == s->map.Tk;
    s->teach_target = ok ? t->target : NULL;
    s->teach_Tq = t->Tq;
    s->teach_Tk = t->Tk;
    s->teach_loss = t->hist;
    s->n_teach_loss = t->n_hist;
    s->teach_steps = t->steps;
    s->teach_running = t->running;
    s->teach_pace = teach_pace_factor(t->pace);
    char names[40];
    teach_train_names(t->train, names, sizeof names);
    snprintf(t->info, sizeof t->info, "%s \xC2\xB7 lr %g \xC2\xB7 training %s \xC2\xB7 %s", teach_opt_name(t->opt),
             (double)t->lr, names, t->head < 0 ? "the heads' mean" : "the shown head");
    s->teach_info = t->info;
}

void app_teach_free(AppState *a)
{
    AppTeach *t = a->teach;
    if (!t)
        return;
    teacher_stop(t);
    if (t->before) {
        app_snap_free(t->before);
        free(t->before);
    }
    free(t->target);
    free(t->hist);
    free(t);
    a->teach = NULL;
}

int app_teach_apply(AppState *a, const AppAction *c)
{
    AppTeach *t = a->teach;
    switch (c->kind) {
    case ACT_TEACH: app_teach_toggle(a); return 1;
    case ACT_TEACH_PAINT:
        if (teach_get(a) && c->i >= 0 && c->value >= 0.0f) { /* a press: the drag goes on so */
            a->teach->paint = c->value > 0.5f;
            a->teach->last_i = c->i;
            a->teach->last_j = c->j;
        }
        app_teach_paint(a, c->i, c->j, c->value > 0.5f ? 1 : c->value < 0.0f ? -1 : 0);
        return 1;
    case ACT_TEACH_PRESET: app_teach_preset(a, c->i); return 1;
    case ACT_TEACH_RUN: app_teach_run(a, c->i); return 1;
    case ACT_TEACH_STEP: app_teach_step(a); return 1;
    case ACT_TEACH_RESET: app_teach_reset(a); return 1;
    case ACT_TEACH_LR: app_teach_lr(a, c->i); return 1;
    case ACT_TEACH_OPT: app_teach_opt(a); return 1;
    case ACT_TEACH_TRAIN: app_teach_train(a); return 1;
    case ACT_TEACH_PACE: app_teach_pace(a, c->i); return 1;
    case ACT_DRAG_END:
        if (t)
            t->paint = -1;
        return 0;
    case ACT_UNDO:
    case ACT_REDO:
        if (t && t->running) {
            t->running = 0;
            a->dirty = 1;
        }
        if (t && t->before) { /* the next run is an undo step of its own */
            app_snap_free(t->before);
            free(t->before);
            t->before = NULL;
        }
        return 0;
    default: return 0;
    }
}

/* ---- sessions ---------------------------------------------------------------------------- */

void app_teach_session_of(const AppState *a, SessionView *sv)
{
    const AppTeach *t = a->teach;
    if (!t)
        return; /* the defaults (session_view_default) */
    sv->teach_on = t->on;
    sv->teach_target = t->target;
    sv->teach_Tq = t->target ? t->Tq : 0;
    sv->teach_Tk = t->target ? t->Tk : 0;
    sv->teach_head = t->head;
    sv->teach_train = t->train;
    sv->teach_opt = t->opt;
    sv->teach_lr = t->lr;
}

void app_teach_session_apply(AppState *a, const SessionView *sv)
{
    if (!a->teach && !sv->teach_on && !sv->teach_target)
        return;
    AppTeach *t = teach_get(a);
    if (!t)
        return;
    t->running = 0;
    t->on = sv->teach_on;
    t->head = sv->teach_head;
    t->train = sv->teach_train;
    t->opt = sv->teach_opt;
    t->lr = sv->teach_lr;
    teacher_stop(t);
    hist_clear(t);
    free(t->target);
    t->target = NULL;
    t->Tq = t->Tk = 0;
    if (!sv->teach_target)
        return;
    if (sv->teach_Tq != a->m->T || sv->teach_Tk != a->m->Tk) {
        app_status(a, 1, "the session's teach target is %d\xC3\x97%d, the sentence %d\xC3\x97%d: target dropped",
                   sv->teach_Tq, sv->teach_Tk, a->m->T, a->m->Tk);
        return;
    }
    float *tg = target_for_model(a);
    if (!tg)
        return;
    memcpy(tg, sv->teach_target, (size_t)t->Tq * t->Tk * sizeof *tg);
    /* rows as painting keeps them: summing to 1 (a hand-edited file may not) */
    for (int i = 0; i < t->Tq; i++) {
        double sum = 0.0;
        for (int j = 0; j < t->Tk; j++)
            sum += tg[(size_t)i * t->Tk + j];
        for (int j = 0; sum > 0.0 && j < t->Tk; j++)
            tg[(size_t)i * t->Tk + j] = (float)(tg[(size_t)i * t->Tk + j] / sum);
    }
    teacher_restart(a, 1);
}
