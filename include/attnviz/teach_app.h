/* Teach mode in the application (issue 15): the command line's --teach
 * (a target from a preset or a CSV file, the steps, the loss after each),
 * and what the window builds on it. */
#ifndef ATTNVIZ_TEACH_APP_H
#define ATTNVIZ_TEACH_APP_H

#include <stdint.h>

#include "attnviz/action.h"
#include "attnviz/error.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/teach_model.h"

/* The target o->teach names for m (computed): a preset (self, previous,
 * next, first) or a CSV file in the --print csv format, into a new Tq×Tk
 * array (*out, the caller frees). Errors name the file, line and value, or
 * say the name is neither a file nor a preset. */
int teach_target_from(const Model *m, const char *spec, float **out, AttnErr *err);

/* --teach: the target, o->steps steps of o->optimizer at o->lr on o->train
 * for o->head (MODEL_HEAD_AVG: the heads' mean), then the loss after the
 * last; m is left computed with the trained weights, t with the history
 * (teacher_free it). A target with mass on masked keys is used without it,
 * with a note on stderr. */
int teach_run(Model *m, const Options *o, Teacher *t, AttnErr *err);

/* ---- the window (src/app/teach_app.c) ------------------------------------
 * Teach mode (W): the heatmap becomes a paint surface for the target, and
 * gradient descent runs a few milliseconds of steps per frame (app_tick),
 * the maps, lines, editor and loss curve following. Everything goes
 * through actions (ACT_TEACH_*), so tests apply them directly. */

struct AppState;
struct AppSnapshot;

#define TEACH_TICK_MS 8        /* stepping per frame: the window stays responsive */
/* The pace a class can follow: slow at first, when each step changes the
 * map most, then faster (the loss curve is on a log scale): TEACH_PACE_START
 * steps a second, doubling every TEACH_PACE_DOUBLING_MS. At the default, a
 * pattern learned in 6 steps takes 2 s and a plateau after 1800 steps 17 s.
 * Faster and slower multiply it by the TEACH_PACES (0: as fast as it goes). */
#define TEACH_PACE_START 1.5
#define TEACH_PACE_DOUBLING_MS 2000
#define TEACH_PACES {0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 0.0}
#define TEACH_PACE_COUNT 8
#define TEACH_PACE_DEFAULT 2
#define TEACH_PLATEAU_WINDOW 200
#define TEACH_PLATEAU_TOL 1e-4
#define TEACH_LOSS_MIN 1e-4    /* below this the pattern is learned */
#define TEACH_HIST_MAX 100000  /* loss points kept for the curve */

typedef struct AppTeach {
    int on;                    /* teach mode: clicks on the heatmap paint */
    int Tq, Tk;                /* the target's size (the sentences it is for) */
    float *target;             /* Tq×Tk, rows summing to 1 or all 0 */
    int paint;                 /* a drag paints: 1 adds, 0 erases, -1 none */
    int last_i, last_j;        /* the drag's last cell */
    int head;                  /* the head the target is for (MODEL_HEAD_AVG) */
    int train;                 /* TEACH_* bits */
    int opt;                   /* TeachOptKind */
    float lr;
    int running;
    Teacher t;                 /* started: t.target != NULL */
    unsigned long gen;         /* the model's generation the teacher matches */
    struct AppSnapshot *before;/* the weights before the first step, or NULL */
    double *hist;              /* the loss curve: before, then after each step */
    long n_hist, cap_hist;
    long steps;                /* steps taken since teach mode started */
    int max_steps_tick;        /* > 0: at most this many steps a tick (tests) */
    int pace;                  /* index into TEACH_PACES */
    int clock_on;              /* the run's clock started: clock_ms, clock_steps */
    uint32_t clock_ms;         /* app_tick's time when the run (or pace) started */
    long clock_steps;          /* the steps taken by then */
    char info[200];            /* the settings line the loss panel shows */
} AppTeach;

/* A teach action (ACT_TEACH_*; the end of a paint drag; undo and redo
 * pause): 1 when it was one of teach's own, else 0 (app_apply goes on). */
int app_teach_apply(struct AppState *a, const AppAction *act);
/* Teach mode on or off (the target, settings and curve stay). */
void app_teach_toggle(struct AppState *a);
/* Paint (on = 1), erase (on = 0) or flip (on = -1) the target cell (i, j),
 * or the query row and focused key when i < 0. A row's painted cells share
 * its mass equally; painting into a soft row (a copied map) starts it anew. */
void app_teach_paint(struct AppState *a, int i, int j, int on);
/* A preset (TeachPreset), -1 the current map as the target, -2 clear it. */
void app_teach_preset(struct AppState *a, int preset);
/* Run (1), pause (0) or flip (-1); one step; reset to the weights from
 * before teaching. */
void app_teach_run(struct AppState *a, int run);
void app_teach_step(struct AppState *a);
void app_teach_reset(struct AppState *a);
/* The learning rate ×2 (dir > 0) or ÷2; SGD / Adam; what trains (cycles). */
void app_teach_lr(struct AppState *a, int dir);
void app_teach_opt(struct AppState *a);
void app_teach_train(struct AppState *a);
/* After any other action: the target dropped when the sentences changed
 * size, the teacher restarted (the loss recomputed) when the model did. */
void app_teach_sync(struct AppState *a);
/* The pace one step faster (dir > 0) or slower. */
void app_teach_pace(struct AppState *a, int dir);
/* The multiplier of pace index p (0: as fast as it goes). */
double teach_pace_factor(int p);
/* The steps due dt_ms after a run started at pace p, the first aside (it
 * is taken at once); a large number at full speed. */
long teach_pace_steps(int p, uint32_t dt_ms);
/* Stepping while running, at the pace: the steps due by now_ms (app_tick's
 * clock, so tests inject time), at most TEACH_TICK_MS of them, then the
 * maps; stops on a plateau with a status message. Returns 1 when
 * something changed; *wait_ms until the next step is due while running. */
int app_teach_tick(struct AppState *a, uint32_t now_ms, int *wait_ms);
/* The view's teach fields from the state (app_draw). */
void app_teach_view(struct AppState *a);
void app_teach_free(struct AppState *a);
/* Sessions: teach mode's state into sv (the target borrowed), and back
 * from a session's sv (the target copied; one for other sentences is
 * dropped with a message). */
struct SessionView;
void app_teach_session_of(const struct AppState *a, struct SessionView *sv);
void app_teach_session_apply(struct AppState *a, const struct SessionView *sv);
/* The current loss (NaN when none). */
double app_teach_loss(const struct AppState *a);

#endif
