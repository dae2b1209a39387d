#define _DEFAULT_SOURCE
/* window_bench (issue 33): how long the window takes for H (the next head)
 * and L (the next layer) on a language model, measured in-process on the
 * real app (app_handle_event, app_tick, app_draw as window.c's run_loop
 * calls them), from the key event to the last frame the key caused.
 *
 *   window_bench MODEL_DIR TEXTFILE
 *
 * The model is opened on the file's text as the command line opens it for
 * the window (source_model.cli_open: the first forward, on this thread),
 * shown (source_model.show: the worker starts on the bar's text), and the
 * bench waits until the maps are shown and the worker is idle.
 * Then it presses H N times, then L N times. For each key:
 *   t0        the key event handed to app_handle_event (the map is picked
 *             there: import_pick),
 *   then the loop: app_tick, a frame (app_draw, SDL_RenderPresent) whenever
 *             the event or the tick changed something, events (the worker's
 *             wake) handed over, until nothing changed for GRACE ms, no
 *             event waits, the maps are not stale and no thread other than
 *             this one used CPU in that time (the worker and the forward's
 *             helper idle);
 *   ms        the end of the last frame drawn minus t0.
 * Lines: one per key (key=H rep=… ms=… handle_ms=… draw_ms=… frames=…
 * other_cpu_ms=…), then
 *   window_bench model=NAME T=… L=… H=… renderer=… window_key_H_ms=MEDIAN window_key_L_ms=MEDIAN
 *                other_load_cores=… (other processes' CPU during the presses, in cores)
 *
 * Env: WINDOW_BENCH_N (5) presses of each key; WINDOW_BENCH_GRACE_MS (1000);
 *      WINDOW_BENCH_WAIT_S (1200) the longest wait for the first maps;
 *      WINDOW_BENCH_X11=1: a real 1280×800 window and SDL's own renderer
 *      (as window.c: accelerated, else software; needs DISPLAY, e.g. Xvfb);
 *      else SDL_VIDEODRIVER=dummy and a software renderer on a 1280×800
 *      RGB888 surface (as the tests). ATTNVIZ_DATADIR as for the program (default:
 *      assets/ when run from the repository root).
 * Run from the repository root. Links as the tests do: every object under
 * build/obj/src but main.o (tests/bench/run.sh builds it). */
#include <SDL.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attnviz/app_state.h"
#include "attnviz/fonts.h"
#include "attnviz/maps_shown.h"
#include "attnviz/model_source.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "attnviz/view.h"
#include "attnviz/wake.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* CPU time (clock ticks) of every thread of this process but the main one. */
static long other_threads_ticks(void)
{
    DIR *d = opendir("/proc/self/task");
    long sum = 0;
    pid_t me = getpid(); /* the main thread's id is the process's */
    struct dirent *e;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == me)
            continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        unsigned long ut = 0, st = 0;
        /* after ") ": state, then fields 4 … 13, then utime (14), stime (15) */
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            sum += (long)(ut + st);
    }
    closedir(d);
    return sum;
}

/* CPU ticks the whole machine (/proc/stat) and this process used so far:
 * other work on the machine skews the figures, so the bench says how much
 * there was (as tests/bench/run.sh's other_cores). */
static void machine_ticks(double *all, double *self)
{
    unsigned long long v[8] = {0};
    unsigned long ut = 0, st = 0;
    char buf[1024];
    *all = *self = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (f && fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6,
                    v + 7) == 8)
        *all = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]); /* busy: not idle, not iowait */
    if (f)
        fclose(f);
    f = fopen("/proc/self/stat", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
        *self = (double)(ut + st);
}

static double ticks_ms(long t)
{
    return t * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

typedef struct Bench {
    AppState *a;
    SDL_Renderer *r;
    double draw_ms; /* the frames' time, summed since the last reset */
    int frames;
    double last;    /* the end of the last frame (ms) */
} Bench;

static void frame(Bench *b)
{
    double t = now_ms();
    app_draw(b->a, b->r);
    SDL_RenderPresent(b->r);
    b->last = now_ms();
    b->draw_ms += b->last - t;
    b->frames++;
    b->a->dirty = 0;
}

/* One turn of run_loop after an event: the tick, a frame when something
 * changed, then the events waiting (up to wait ms for the first). 1 when a
 * frame was drawn. */
static int turn(Bench *b, int changed, int wait)
{
    int w, drawn = 0;
    if (app_tick(b->a, SDL_GetTicks(), &w) || changed || b->a->dirty) {
        frame(b);
        drawn = 1;
    }
    SDL_Event e;
    int again = 0;
    if (SDL_WaitEventTimeout(&e, wait)) {
        do {
            if (app_wake_is(&e))
                again = 1;
            else
                again |= app_handle_event(b->a, &e); /* as run_loop: every other event */
        } while (SDL_PollEvent(&e));
    }
    b->a->dirty = again;
    return drawn;
}

/* Until the maps shown are the text's, nothing drawn for grace ms and no
 * other thread busy in that time; limit_ms at most. The end of the last
 * frame drawn since t0 (ms; t0 when none), or -1 past the limit. */
static double settle(Bench *b, double t0, double grace, double limit_ms)
{
    double since = now_ms();
    long cpu = other_threads_ticks();
    for (;;) {
        if (turn(b, 0, 10)) {
            since = now_ms();
            cpu = other_threads_ticks();
        }
        double t = now_ms();
        if (t - since >= grace) {
            long c = other_threads_ticks();
            if (c - cpu <= 1 && !b->a->vs.stale && b->a->vs.map.v && !b->a->dirty)
                return b->last > t0 ? b->last : t0;
            cpu = c; /* busy: another grace */
            since = t;
        }
        if (t - t0 > limit_ms)
            return -1;
    }
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

static int envi(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static void die(const char *what, const AttnErr *err)
{
    fprintf(stderr, "window_bench: %s: %s\n", what, err ? err->msg : SDL_GetError());
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: window_bench MODEL_DIR TEXTFILE\n");
        return 2;
    }
    int N = envi("WINDOW_BENCH_N", 5), x11 = envi("WINDOW_BENCH_X11", 0);
    double grace = envi("WINDOW_BENCH_GRACE_MS", 1000), wait_s = envi("WINDOW_BENCH_WAIT_S", 1200);
    char *text = slurp(argv[2]);
    if (!text)
        die(argv[2], &(AttnErr){.msg = "cannot read"});
    size_t len = strlen(text);
    while (len && (text[len - 1] == '\n')) /* a file's last newline is not the text's */
        text[--len] = '\0';
    if (!x11)
        setenv("SDL_VIDEODRIVER", "dummy", 1);
    if (access("assets/embeddings.txt", R_OK) == 0) /* the repository's, unless one was named */
        setenv("ATTNVIZ_DATADIR", "assets", 0);
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        die("SDL_Init", NULL);
    app_wake_event();

    Options o;
    AttnErr err = {0};
    char *args[] = {"attnviz", "--fresh", "--model", argv[1], text, NULL};
    if (options_parse(&o, 5, args, &err) != 0)
        die("options", &err);
    void *opened = NULL, *sentence = NULL;
    double t = now_ms();
    if (source_model.cli_open(&o, o.model, &opened, &err) < 0)
        die(argv[1], &err);
    double open_ms = now_ms() - t;
    if (source_sentence.cli_open(&o, NULL, &sentence, &err) < 0 || !sentence)
        die("the sentence (ATTNVIZ_DATADIR?)", &err);
    Model *m;
    SentenceList *sl;
    const SessionView *sv;
    source_sentence_parts(sentence, &m, &sl, &sv);

    SDL_Window *win = NULL;
    SDL_Surface *surf = NULL;
    SDL_Renderer *r = NULL;
    if (x11) {
        win = SDL_CreateWindow("attnviz window_bench", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, 1280, 800,
                               0);
        if (!win)
            die("SDL_CreateWindow", NULL);
        r = SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
        if (!r)
            r = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    } else {
        surf = SDL_CreateRGBSurfaceWithFormat(0, 1280, 800, 24, SDL_PIXELFORMAT_RGB888);
        r = surf ? SDL_CreateSoftwareRenderer(surf) : NULL;
    }
    if (!r)
        die("renderer", NULL);
    SDL_RendererInfo ri;
    SDL_GetRendererInfo(r, &ri);

    AppState *a = calloc(1, sizeof *a);
    if (!a || app_init(a, m, &o, sl) < 0)
        die("app_init", &err);
    t = now_ms();
    if (source_model.show(a, opened) < 0)
        die("show", &err);
    AppFonts fonts = {0};
    if (fonts_open(&fonts, NULL, &err) < 0)
        die("fonts", &err);
    a->view = view_create(r, &fonts.view, &err);
    if (!a->view)
        die("view_create", &err);
    Bench b = {a, r, 0.0, 0, 0.0};
    a->dirty = 1;
    frame(&b);
    const MapsShown *ms = a->kind->maps(a);
    int T = ms->imp->f.Tq, L = ms->imp->f.L, H = ms->imp->f.H;
    fprintf(stderr, "window_bench: %s T=%d L=%d H=%d renderer=%s video=%s: first forward %.0f ms; waiting for the "
            "worker\n", argv[1], T, L, H, ri.name, SDL_GetCurrentVideoDriver(), open_ms);
    double shown = settle(&b, t, grace, wait_s * 1000.0);
    if (shown < 0) {
        fprintf(stderr, "window_bench: the maps not settled within %.0f s\n", wait_s);
        return 1;
    }
    printf("window_bench: open_ms=%.0f settled_ms=%.0f (the command line's forward; show to the last frame "
           "before the worker was idle)\n",
           open_ms, shown - t);
    fflush(stdout);

    static const SDL_Keycode keys[2] = {SDLK_h, SDLK_l};
    static const char *const names[2] = {"H", "L"};
    double *ms_of[2] = {calloc((size_t)N, sizeof(double)), calloc((size_t)N, sizeof(double))};
    double all0, self0, all1, self1, k0 = now_ms();
    machine_ticks(&all0, &self0);
    for (int k = 0; k < 2; k++)
        for (int rep = 0; rep < N; rep++) {
            SDL_Event e;
            memset(&e, 0, sizeof e);
            e.type = SDL_KEYDOWN;
            e.key.state = SDL_PRESSED;
            e.key.keysym.sym = keys[k];
            e.key.keysym.scancode = SDL_GetScancodeFromKey(keys[k]);
            e.key.timestamp = SDL_GetTicks();
            b.draw_ms = 0.0;
            b.frames = 0;
            long cpu0 = other_threads_ticks();
            double t0 = now_ms();
            int changed = app_handle_event(a, &e);
            double handled = now_ms() - t0;
            turn(&b, changed, 0); /* as run_loop: the tick, the frame */
            double end = settle(&b, t0, grace, 600000.0);
            if (end < 0) {
                fprintf(stderr, "window_bench: %s did not settle within 600 s\n", names[k]);
                return 1;
            }
            ms = a->kind->maps(a);
            ms_of[k][rep] = end - t0;
            printf("key=%s rep=%d layer=%d head=%d ms=%.1f handle_ms=%.1f draw_ms=%.1f frames=%d "
                   "other_cpu_ms=%.0f\n",
                   names[k], rep + 1, ms->layer + 1, ms->head + 1, end - t0, handled, b.draw_ms, b.frames,
                   ticks_ms(other_threads_ticks() - cpu0));
            fflush(stdout);
        }
    machine_ticks(&all1, &self1);
    double other = (all1 - all0 - (self1 - self0)) / (double)sysconf(_SC_CLK_TCK) / ((now_ms() - k0) / 1e3);
    const char *name = strrchr(argv[1], '/');
    name = name && name[1] ? name + 1 : argv[1];
    printf("window_bench model=%s T=%d L=%d H=%d renderer=%s video=%s n=%d window_key_H_ms=%.1f "
           "window_key_L_ms=%.1f other_load_cores=%.2f\n",
           name, T, L, H, ri.name, SDL_GetCurrentVideoDriver(), N, median(ms_of[0], N), median(ms_of[1], N),
           other < 0 ? 0.0 : other);
    fflush(stdout);
    view_destroy(a->view);
    app_free(a);
    free(a);
    fonts_close(&fonts);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(surf);
    if (win)
        SDL_DestroyWindow(win);
    source_sentence.cli_free(sentence);
    options_free(&o);
    SDL_Quit();
    free(ms_of[0]);
    free(ms_of[1]);
    free(text);
    return 0;
}
