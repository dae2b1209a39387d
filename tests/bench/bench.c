/* The C side of `make bench` (tests/bench/run.sh builds and drives it).
 * One mode per run, one result line per figure on stdout ("key=value ..."),
 * so run.sh can alternate it with the Python side and take medians.
 *
 *   bench forward T [seconds]        attn_forward, d 64, 4 heads, learned
 *   bench type T [keys]              keystroke → recompute → redraw
 *   bench type-words T [keys]        the same, a new word every other key
 *   bench frame T [frames]           app_draw + present, 1280×800 software
 *   bench edit T [edits]             one Wq value → model_compute → redraw
 *   bench frame-parts T [frames]     layout / draw / present separately
 *   bench import FILE [frames]       attention file: open → model view, frames, memory
 *   bench load FILE [reps]           embed_load throughput
 *   bench head-scores L H T [reps]   head_scores_all on L × H causal maps of T tokens
 *   bench alt N A... :: B...         wall time of two commands, alternated
 *   bench startup N HOOK.so -- CMD...  launch → first present / visible window
 */
#include "attnviz/app_state.h"
#include "attnviz/attn.h"
#include "attnviz/embed.h"
#include "attnviz/file_source.h"
#include "attnviz/fonts.h"
#include "attnviz/head_scores.h"
#include "attnviz/import.h"
#include "attnviz/model.h"
#include "attnviz/teach_model.h"
#include "attnviz/prng.h"
#include "attnviz/view.h"

#include <SDL.h>
#include <SDL_image.h>

#include <fcntl.h>
#include <pthread.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* BENCH_CPUTIME=1: process CPU time instead of wall time (for comparing
 * single-threaded kernels on a busy machine; not what run.sh reports) */
static double now_s(void)
{
    static int cpu = -1;
    if (cpu < 0)
        cpu = getenv("BENCH_CPUTIME") && *getenv("BENCH_CPUTIME") == '1';
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double maxof(const double *v, int n)
{
    double m = -INFINITY;
    for (int i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static void die(const char *what, const AttnErr *err)
{
    char buf[1200] = "";
    if (err)
        attn_err_format(err, buf, sizeof buf);
    fprintf(stderr, "bench: %s%s%s\n", what, err ? ": " : "", buf);
    exit(1);
}

/* ---- forward ------------------------------------------------------------------ */

enum { FWD_D = 64, FWD_H = 4 };

static double forward_flops(int T)
{
    double d = FWD_D;
    /* Q, K, V and Wo projections: 4 · 2·T·d²; scores and weighted sum: 2 · 2·T²·d */
    return 8.0 * T * d * d + 4.0 * (double)T * T * d;
}

typedef struct Fwd {
    int T;
    AttnParams p;
    AttnConfig cfg;
    float *X;
    AttnResult r;
} Fwd;

static void fwd_setup(Fwd *f, int T)
{
    f->T = T;
    if (attn_params_create(&f->p, FWD_D, FWD_H) < 0)
        die("attn_params_create failed", NULL);
    attn_params_xavier(&f->p, 42);
    f->cfg = attn_config_default();
    f->cfg.mode = ATTN_MODE_LEARNED;
    f->cfg.heads = FWD_H;
    f->cfg.causal = 0;
    f->X = malloc((size_t)T * FWD_D * sizeof(float));
    if (!f->X)
        die("out of memory", NULL);
    Prng rng;
    prng_seed(&rng, 7);
    for (int i = 0; i < T * FWD_D; i++)
        f->X[i] = 2.0f * prng_uniform(&rng) - 1.0f;
    attn_result_init(&f->r);
    /* as the window's Model runs it: the logits and the heads' mean are
     * made when shown (model_prepare) */
    f->r.skip_logits = f->r.skip_avg = 1;
}

static void fwd_run(Fwd *f)
{
    if (attn_forward(&f->r, f->X, f->T, f->X, f->T, FWD_D, &f->p, &f->cfg) < 0)
        die("attn_forward failed", NULL);
}

static void fwd_free(Fwd *f)
{
    attn_result_destroy(&f->r);
    attn_params_destroy(&f->p);
    free(f->X);
}

/* Batches of k forwards (k so that a batch takes >= 2 ms), as many batches
 * as fit in the budget (at least 15): the median time per forward. */
static int mode_forward(int T, double budget)
{
    Fwd f;
    fwd_setup(&f, T);
    for (int w = 0; w < 3; w++)
        fwd_run(&f);
    double t0 = now_s();
    fwd_run(&f);
    double one = now_s() - t0;
    int k = one > 0 ? (int)ceil(2e-3 / one) : 1000;
    if (k < 1)
        k = 1;
    enum { MAXB = 2000 };
    static double per[MAXB];
    int nb = 0;
    double start = now_s();
    while (nb < MAXB && (nb < 15 || now_s() - start < budget)) {
        double a = now_s();
        for (int i = 0; i < k; i++)
            fwd_run(&f);
        per[nb++] = (now_s() - a) / k;
    }
    double med = median(per, nb);
    /* a checksum so the work cannot be optimized away and sides can be compared */
    double sum = 0;
    for (int i = 0; i < T * FWD_D; i++)
        sum += f.r.output[i];
    printf("forward T=%d median_us=%.3f gflops=%.3f batches=%d per_batch=%d checksum=%.6g "
           "kernels=%s\n",
           T, med * 1e6, forward_flops(T) / med * 1e-9, nb, k, sum, attn_kernels());
    fwd_free(&f);
    return 0;
}

/* ---- teach mode: gradient steps per second ---------------------------------------- */

/* A table of T words w0 … w(T−1) with random d-dimensional vectors, the
 * sentence of all of them, h heads (seed 42), the "previous" preset for
 * head 0 (h = 1) or the heads' mean, Adam, Wq and Wk: the median rate of
 * batches of steps over budget seconds. */
static int mode_teach(int T, int d, int h, double budget)
{
    size_t cap = (size_t)T * (12 + 12 * d) + 1, len = 0;
    char *text = malloc(cap), *sent = malloc((size_t)T * 8 + 1);
    if (!text || !sent)
        die("out of memory", NULL);
    Prng rng;
    prng_seed(&rng, 11);
    size_t sl = 0;
    for (int i = 0; i < T; i++) {
        len += (size_t)snprintf(text + len, cap - len, "w%d", i);
        for (int k = 0; k < d; k++)
            len += (size_t)snprintf(text + len, cap - len, " %.4f", 2.0f * prng_uniform(&rng) - 1.0f);
        text[len++] = '\n';
        sl += (size_t)sprintf(sent + sl, "%sw%d", i ? " " : "", i);
    }
    AttnErr err = {0}, warn = {0};
    EmbedTable *tab;
    if (embed_parse(&tab, text, len, "teach-bench", &err, &warn) < 0)
        die("embed_parse failed", &err);
    AttnConfig cfg = attn_config_default();
    cfg.heads = h;
    Model m;
    if (model_init(&m, tab, &cfg) < 0)
        die("model_init failed", NULL);
    model_set_seed(&m, 42);
    if (model_set_text(&m, sent, sl) < 0 || model_compute(&m) < 0)
        die("model_compute failed", NULL);
    float *target = malloc((size_t)T * T * sizeof(float));
    teach_preset(TEACH_PREVIOUS, T, T, target);
    Teacher t;
    if (teacher_start(&t, &m, target, h == 1 ? 0 : MODEL_HEAD_AVG, TEACH_WQ | TEACH_WK,
                      TEACH_OPT_ADAM, 0.1f, &err) < 0)
        die("teacher_start failed", &err);
    enum { MAXB = 4000, K = 20 };
    static double per[MAXB];
    int nb = 0;
    double start = now_s();
    while (nb < MAXB && (nb < 15 || now_s() - start < budget)) {
        double a = now_s();
        for (int k = 0; k < K; k++)
            if (teacher_step(&t, &m) < 0)
                die("teacher_step failed", NULL);
        per[nb++] = (now_s() - a) / K;
    }
    double med = median(per, nb), loss;
    teacher_loss_now(&t, &m, &loss);
    printf("teach T=%d d=%d heads=%d steps_per_s=%.0f median_us=%.2f steps=%ld loss0=%.4f loss=%.4f\n",
           T, d, h, 1.0 / med, med * 1e6, t.steps, t.loss[0], loss);
    teacher_free(&t);
    model_destroy(&m);
    embed_destroy(tab);
    free(target), free(text), free(sent);
    return 0;
}

/* ---- the machine's memory bandwidth: a stream copy on both cores --------------------- */

typedef struct Stream {
    float *a, *b;
    size_t n;
    int reps;
    double s;
} Stream;

static void *stream_thread(void *arg)
{
    Stream *st = arg;
    double t0 = now_s();
    for (int r = 0; r < st->reps; r++) {
        memcpy(st->b, st->a, st->n * sizeof(float));
        st->a[r % st->n] += 1.0f; /* each copy reads what the last wrote */
    }
    st->s = now_s() - t0;
    return NULL;
}

/* Each core copies its own 64 MB array into another 8 times: bytes read and
 * written over the slower core's time, GB/s. */
static int mode_stream(void)
{
    Stream st[2];
    size_t n = (size_t)16 << 20; /* 64 MB of floats */
    for (int k = 0; k < 2; k++) {
        st[k].n = n;
        st[k].reps = 8;
        st[k].a = malloc(n * sizeof(float));
        st[k].b = malloc(n * sizeof(float));
        if (!st[k].a || !st[k].b)
            die("out of memory", NULL);
        memset(st[k].a, 1, n * sizeof(float));
        memset(st[k].b, 0, n * sizeof(float)); /* pages in before the clock */
    }
    pthread_t t;
    if (pthread_create(&t, NULL, stream_thread, &st[1]) != 0)
        die("pthread_create failed", NULL);
    stream_thread(&st[0]);
    pthread_join(t, NULL);
    double s = st[0].s > st[1].s ? st[0].s : st[1].s;
    double bytes = 2.0 * 2.0 * 8 * (double)n * sizeof(float); /* 2 cores, read + write */
    printf("stream two_cores_GBps=%.2f\n", bytes / s * 1e-9);
    for (int k = 0; k < 2; k++)
        free(st[k].a), free(st[k].b);
    return 0;
}

/* ---- the window: frames and edits ---------------------------------------------------- */

typedef struct Win {
    EmbedTable *table;
    Model m;
    AppState *a;
    SDL_Surface *surf;
    SDL_Renderer *ren;
    AppFonts fonts;
    char *text;
} Win;

/* T words drawn (seeded) from the table's words, skipping punctuation-only
 * entries so the tokenizer gives exactly T tokens. */
static char *random_sentence(const EmbedTable *t, int T, uint64_t seed)
{
    Prng rng;
    prng_seed(&rng, seed);
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    if (!s)
        die("out of memory", NULL);
    s[0] = '\0';
    for (int i = 0; i < T; i++) {
        const char *w;
        for (;;) {
            w = embed_word(t, (int)(prng_next(&rng) % (uint64_t)t->n));
            int ok = 1;
            for (const char *c = w; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '\'' ||
                      *c == '-'))
                    ok = 0;
            if (ok && *w)
                break;
        }
        size_t n = strlen(w);
        while (len + n + 2 > cap)
            cap *= 2;
        char *p = realloc(s, cap);
        if (!p)
            die("out of memory", NULL);
        s = p;
        if (len)
            s[len++] = ' ';
        memcpy(s + len, w, n + 1);
        len += n;
    }
    return s;
}

/* The window's size and interface scale for the frame figures: 1280×800 at
 * 100 %, or (mode frame4k) 3840×2160 at 200 %. */
static int frame_w = 1280, frame_h = 800;
static float frame_ui = 1.0f;

static void win_setup(Win *w, int T, const char *emb)
{
    AttnErr err = {0}, warn = {0};
    memset(w, 0, sizeof *w);
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        die(SDL_GetError(), NULL);
    if (embed_load(&w->table, emb, &err, &warn) < 0)
        die("embed_load", &err);
    AttnConfig cfg = attn_config_default();
    if (model_init(&w->m, w->table, &cfg) < 0)
        die("model_init failed", NULL);
    w->text = random_sentence(w->table, T, 1234 + (uint64_t)T);
    if (model_set_text(&w->m, w->text, strlen(w->text)) < 0)
        die("model_set_text failed", NULL);
    w->a = calloc(1, sizeof *w->a);
    if (!w->a || app_init(w->a, &w->m, NULL, NULL) < 0)
        die("app_init failed", NULL);
    if (w->m.T != T) {
        fprintf(stderr, "bench: sentence has %d tokens, wanted %d\n", w->m.T, T);
        exit(1);
    }
    w->a->ui_scale = frame_ui;
    w->surf = SDL_CreateRGBSurfaceWithFormat(0, frame_w, frame_h, 24, SDL_PIXELFORMAT_RGB888);
    w->ren = w->surf ? SDL_CreateSoftwareRenderer(w->surf) : NULL;
    if (!w->ren)
        die(SDL_GetError(), NULL);
    if (fonts_open(&w->fonts, NULL, &err) < 0)
        die("fonts_open", &err);
    w->a->view = view_create(w->ren, &w->fonts.view, &err);
    if (!w->a->view)
        die("view_create", &err);
}

static void win_free(Win *w)
{
    view_destroy(w->a->view);
    fonts_close(&w->fonts);
    app_free(w->a);
    free(w->a);
    SDL_DestroyRenderer(w->ren);
    SDL_FreeSurface(w->surf);
    model_destroy(&w->m);
    embed_destroy(w->table);
    free(w->text);
    SDL_Quit();
}

static void win_frame(Win *w)
{
    app_draw(w->a, w->ren);
    SDL_RenderPresent(w->ren); /* flushes the software renderer's batch */
}

/* checksum of the surface so a run can be compared with another */
static unsigned long surf_sum(SDL_Surface *s)
{
    unsigned long h = 0;
    SDL_LockSurface(s);
    for (int y = 0; y < s->h; y += 7) {
        const unsigned char *row = (const unsigned char *)s->pixels + (size_t)y * s->pitch;
        for (int x = 0; x < s->pitch; x += 5)
            h = h * 31 + row[x];
    }
    SDL_UnlockSurface(s);
    return h;
}

static int mode_frame(int T, int frames, int edit, const char *emb)
{
    Win w;
    win_setup(&w, T, emb);
    double *t = calloc((size_t)frames, sizeof *t), *tc = calloc((size_t)frames, sizeof *tc);
    for (int i = 0; i < 3; i++)
        win_frame(&w);
    int rows, cols;
    float *Wq = attn_params_matrix(&w.m.params, 0, 0, &rows, &cols);
    int idx = (rows / 2) * cols + cols / 3;
    float base = Wq[idx];
    for (int i = 0; i < frames; i++) {
        double a = now_s(), b = a;
        if (edit) {
            Wq[idx] = base + 0.25f * (float)((i % 9) - 4); /* one weight edit */
            if (model_compute(&w.m) < 0)
                die("model_compute failed", NULL);
            b = now_s();
        }
        win_frame(&w);
        t[i] = (now_s() - a) * 1e3;
        tc[i] = (b - a) * 1e3;
    }
    double worst = maxof(t, frames);
    double med = median(t, frames);
    printf("%s T=%d size=%dx%d ui=%.0f%% frames=%d median_ms=%.3f worst_ms=%.3f",
           edit ? "edit" : "frame", T, frame_w, frame_h, frame_ui * 100, frames, med, worst);
    if (edit)
        printf(" compute_median_ms=%.3f", median(tc, frames));
    printf(" pixels=%lx\n", surf_sum(w.surf));
    if (getenv("BENCH_SAVE_PNG")) /* to look at the frame that was timed */
        IMG_SavePNG(w.surf, getenv("BENCH_SAVE_PNG"));
    free(t);
    free(tc);
    win_free(&w);
    return 0;
}

/* Where a frame's time goes: layout, the draw calls (queued by the software
 * renderer) and the present (the batch rasterized). */
/* Resident anonymous memory (RssAnon of /proc/self/status) in MB. */
static double rss_anon_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024 / 1e6;
}

/* An attention file: open it to the first frame of the model view (G), a
 * model-view frame, a frame after moving the selection, and the anonymous
 * memory while it is shown. */
static int mode_import(const char *path, int frames, const char *emb)
{
    Win w;
    win_setup(&w, 1, emb);
    AppState *a = w.a;
    double t0 = now_s();
    Imported *im = malloc(sizeof *im);
    AttnErr err = {0};
    if (!im || import_open(im, path, NULL, NULL, &err) < 0 || import_pick(im, 0, 0, 0, NULL, &err) < 0)
        die("import_open", &err);
    if (file_source_show(a, im) < 0)
        die("file_source_show failed", NULL);
    AppAction g = {ACT_TOGGLE_GRID, 0, 0, 0.0f};
    app_apply(a, &g);
    win_frame(&w);
    double open_ms = (now_s() - t0) * 1e3;
    double *t = calloc((size_t)frames, sizeof *t), *tm = calloc((size_t)frames, sizeof *tm);
    for (int i = 0; i < frames; i++) {
        double t1 = now_s();
        win_frame(&w);
        t[i] = (now_s() - t1) * 1e3;
        AppAction mv = {ACT_GRID_MOVE, (i % 4) < 2 ? 1 : -1, (i % 2) ? 1 : -1, 0.0f};
        double t2 = now_s();
        app_apply(a, &mv);
        win_frame(&w);
        tm[i] = (now_s() - t2) * 1e3;
    }
    printf("import L=%d H=%d Tq=%d Tk=%d open_ms=%.1f frame_median_ms=%.3f frame_worst_ms=%.3f "
           "move_median_ms=%.3f move_worst_ms=%.3f anon_MB=%.1f\n", im->f.L, im->f.H, im->f.Tq, im->f.Tk,
           open_ms, median(t, frames), maxof(t, frames), median(tm, frames), maxof(tm, frames),
           rss_anon_mb());
    free(t);
    free(tm);
    win_free(&w);
    return 0;
}

static int mode_frame_parts(int T, int frames, const char *emb)
{
    Win w;
    win_setup(&w, T, emb);
    for (int i = 0; i < 3; i++)
        win_frame(&w);
    double *tl = calloc((size_t)frames, sizeof *tl), *td = calloc((size_t)frames, sizeof *td),
           *tp = calloc((size_t)frames, sizeof *tp), *tm = calloc((size_t)frames, sizeof *tm);
    AppState *a = w.a;
    for (int i = 0; i < frames; i++) {
        double t0 = now_s();
        w.m.last_ok = 0; /* the whole forward, not "nothing changed" */
        if (model_compute(&w.m) < 0)
            die("model_compute failed", NULL);
        double t1 = now_s();
        view_state_set_model(&a->vs, a->m);
        a->vs.sentence = a->text;
        a->vs.status = a->status[0] ? a->status : NULL;
        a->vs.scale = a->ui_scale * a->dpi_scale;
        view_layout(a->view, &a->vs, 1280, 800, &a->layout);
        double t2 = now_s();
        view_draw_window(a->view, w.ren, &a->vs, &a->layout);
        double t3 = now_s();
        SDL_RenderPresent(w.ren);
        double t4 = now_s();
        tm[i] = (t1 - t0) * 1e3;
        tl[i] = (t2 - t1) * 1e3;
        td[i] = (t3 - t2) * 1e3;
        tp[i] = (t4 - t3) * 1e3;
    }
    printf("frame-parts T=%d model_compute_ms=%.3f layout_ms=%.3f draw_calls_ms=%.3f present_ms=%.3f\n",
           T, median(tm, frames), median(tl, frames), median(td, frames), median(tp, frames));
    free(tl);
    free(td);
    free(tp);
    free(tm);
    win_free(&w);
    return 0;
}


/* Typing in a long sentence: one SDL_TEXTINPUT or Backspace at the end of a
 * T-token sentence → retokenize, embed, recompute, full redraw. Reports the
 * median and worst keystroke, and how much of it the event (model) took. */
static int mode_type(int T, int keys, int words, const char *emb)
{
    Win w;
    win_setup(&w, T, emb);
    AppState *a = w.a;
    a->vs.sentence_focus = 1;
    a->vs.cursor = (int)a->text_len;
    for (int i = 0; i < 3; i++)
        win_frame(&w);
    double *t = calloc((size_t)keys, sizeof *t), *te = calloc((size_t)keys, sizeof *te);
    for (int i = 0; i < keys; i++) {
        SDL_Event e;
        memset(&e, 0, sizeof e);
        if (words) { /* "x " again and again: a new token every other key */
            e.type = SDL_TEXTINPUT;
            e.text.text[0] = i % 2 ? ' ' : (char)('a' + i % 26);
        } else if (i % 4 == 3) { /* a Backspace now and then: the sentence stays near T */
            e.type = SDL_KEYDOWN;
            e.key.keysym.sym = SDLK_BACKSPACE;
            e.key.keysym.scancode = SDL_SCANCODE_BACKSPACE;
        } else {
            e.type = SDL_TEXTINPUT;
            e.text.text[0] = i % 4 == 2 ? ' ' : (char)('a' + i % 26);
        }
        double t0 = now_s();
        app_handle_event(a, &e);
        double t1 = now_s();
        win_frame(&w);
        t[i] = (now_s() - t0) * 1e3;
        te[i] = (t1 - t0) * 1e3;
    }
    printf("%s T=%d keys=%d median_ms=%.3f worst_ms=%.3f event_median_ms=%.3f tokens_after=%d\n",
           words ? "type-words" : "type", T, keys, median(t, keys), maxof(t, keys), median(te, keys), w.m.T);
    free(t);
    free(te);
    win_free(&w);
    return 0;
}

/* ---- embedding load --------------------------------------------------------------------- */

static int mode_load(const char *path, int reps)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    double *t = calloc((size_t)reps, sizeof *t);
    int n = 0, d = 0;
    for (int i = -1; i < reps; i++) { /* run -1 warms the page cache */
        EmbedTable *tab = NULL;
        AttnErr err = {0}, warn = {0};
        double a = now_s();
        if (embed_load(&tab, path, &err, &warn) < 0)
            die("embed_load", &err);
        double b = now_s();
        n = tab->n;
        d = tab->d;
        embed_destroy(tab);
        if (i >= 0)
            t[i] = b - a;
    }
    double med = median(t, reps);
    double mb = (double)st.st_size / 1e6;
    printf("load words=%d d=%d size_MB=%.1f median_s=%.4f MBps=%.1f reps=%d\n", n, d, mb, med,
           mb / med, reps);
    free(t);
    return 0;
}

/* ---- processes ------------------------------------------------------------------------------ */

/* Where a quiet child's stderr goes (NULL: /dev/null), to explain failures. */
static const char *child_err;

static pid_t spawn(char **argv, int quiet)
{
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);
            int fe = child_err ? open(child_err, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fe >= 0 ? fe : fd, 2);
            }
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Wall time of one run of argv, in ms; exits on failure. */
static double run_once(char **argv)
{
    double a = now_s();
    pid_t pid = spawn(argv, 1);
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench: '%s' failed (status %d)\n", argv[0], st);
        exit(1);
    }
    return (now_s() - a) * 1e3;
}

static int mode_alt(int rounds, int argc, char **argv)
{
    int split = -1;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "::") == 0)
            split = i;
    if (split < 1 || split == argc - 1) {
        fprintf(stderr, "bench alt: N A... :: B...\n");
        return 2;
    }
    argv[split] = NULL;
    char **A = argv, **B = argv + split + 1;
    double *ta = calloc((size_t)rounds, sizeof *ta), *tb = calloc((size_t)rounds, sizeof *tb);
    run_once(A); /* warm-up: page cache, font caches */
    run_once(B);
    for (int r = 0; r < rounds; r++) {
        ta[r] = run_once(A);
        tb[r] = run_once(B);
        printf("alt round=%d a_ms=%.2f b_ms=%.2f\n", r + 1, ta[r], tb[r]);
    }
    double ma = median(ta, rounds), mb = median(tb, rounds);
    printf("alt a_median_ms=%.2f b_median_ms=%.2f ratio_b_over_a=%.2f\n", ma, mb, mb / ma);
    free(ta);
    free(tb);
    return 0;
}

static void show_child_err(void)
{
    FILE *f = child_err ? fopen(child_err, "r") : NULL;
    char line[512];
    while (f && fgets(line, sizeof line, f))
        fprintf(stderr, "  attnviz: %s", line);
    if (f)
        fclose(f);
}

/* Launch → first SDL_RenderPresent: the LD_PRELOAD hook writes the
 * CLOCK_MONOTONIC time of its return and ends the process. ms, or -1. */
static double startup_first_frame(char **argv, const char *hook, const char *stamp)
{
    unlink(stamp);
    setenv("ATTNVIZ_BENCH_STAMP", stamp, 1);
    setenv("LD_PRELOAD", hook, 1);
    double a = now_s();
    pid_t pid = spawn(argv, 1);
    unsetenv("LD_PRELOAD");
    unsetenv("ATTNVIZ_BENCH_STAMP");
    int st;
    waitpid(pid, &st, 0);
    FILE *f = fopen(stamp, "r");
    double t = 0;
    int ok = f && fscanf(f, "%lf", &t) == 1;
    if (f)
        fclose(f);
    if (!ok) {
        fprintf(stderr, "bench startup: no first frame (exit status %d)\n", st);
        return -1;
    }
    return (t - a) * 1e3;
}

/* Launch → window visible (xdotool search --onlyvisible, polled every 5 ms);
 * the process is then ended. ms, or -1. */
static double startup_visible(char **argv)
{
    char *xdo[] = {"xdotool", "search", "--onlyvisible", "--name", "^attnviz", NULL};
    double a = now_s(), found = -1;
    pid_t pid = spawn(argv, 1);
    int st;
    while (now_s() - a < 20.0) {
        pid_t q = spawn(xdo, 1);
        int qs;
        waitpid(q, &qs, 0);
        if (WIFEXITED(qs) && WEXITSTATUS(qs) == 0) {
            found = now_s();
            break;
        }
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "bench startup: attnviz exited (status %d)\n", st);
            return -1;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGTERM);
    waitpid(pid, &st, 0);
    if (found < 0)
        fprintf(stderr, "bench startup: the window never became visible\n");
    return found < 0 ? -1 : (found - a) * 1e3;
}

/* Both, alternated, N rounds after a warm-up; a failed round is retried
 * (up to 3 failures in all) with attnviz's messages shown. */
static int mode_startup(int rounds, const char *hook, const char *stamp, int argc, char **argv)
{
    if (argc < 1 || rounds < 1)
        return 2;
    double *tf = calloc((size_t)rounds, sizeof *tf), *tv = calloc((size_t)rounds, sizeof *tv);
    char errlog[4200];
    snprintf(errlog, sizeof errlog, "%s.err", stamp);
    child_err = errlog;
    int fails = 0;
    for (int r = -1; r < rounds;) { /* round -1: warm-up */
        unlink(errlog);
        double f = startup_first_frame(argv, hook, stamp);
        double v = f < 0 ? -1 : startup_visible(argv);
        if (f < 0 || v < 0) {
            show_child_err();
            if (++fails >= 3)
                return 1;
            continue;
        }
        if (r >= 0) {
            tf[r] = f;
            tv[r] = v;
            printf("startup round=%d first_frame_ms=%.1f visible_ms=%.1f\n", r + 1, f, v);
        }
        r++;
    }
    printf("startup first_frame_median_ms=%.1f visible_median_ms=%.1f rounds=%d retries=%d\n",
           median(tf, rounds), median(tv, rounds), rounds, fails);
    free(tf);
    free(tv);
    return 0;
}

/* Every head's seven scores (head_scores_all) on L × H causal maps of T
 * tokens, rows softmax-like, token ids from 50 values (so duplicate and
 * induction have queries): the median time of reps runs. */
static int mode_head_scores(int L, int H, int T, int reps)
{
    if (L < 1 || H < 1 || T < 1 || reps < 1)
        return 2;
    size_t one = (size_t)T * T;
    float *att = malloc(sizeof *att * (size_t)L * H * one);
    int *ids = malloc(sizeof *ids * (size_t)T);
    HeadScores *out = malloc(sizeof *out * (size_t)L * H);
    double *t = malloc(sizeof *t * (size_t)reps);
    if (!att || !ids || !out || !t)
        return 1;
    uint32_t x = 7;
    for (int i = 0; i < T; i++) {
        x = x * 1664525u + 1013904223u;
        ids[i] = (int)(x >> 16) % 50;
    }
    for (size_t m = 0; m < (size_t)L * H; m++)
        for (int i = 0; i < T; i++) {
            float *row = att + m * one + (size_t)i * T;
            double sum = 0;
            for (int j = 0; j < T; j++) {
                x = x * 1664525u + 1013904223u;
                row[j] = j <= i ? expf((float)(x >> 8) / 16777216.0f * 4.0f) : 0.0f;
                sum += row[j];
            }
            for (int j = 0; j <= i; j++)
                row[j] = (float)(row[j] / sum);
        }
    double check = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        head_scores_all(att, L, H, T, T, ids, 0, out);
        t[r] = (now_s() - t0) * 1e3;
        check += out[r % (L * H)].s[HEAD_SCORE_INDUCTION];
    }
    printf("head-scores L=%d H=%d T=%d reps=%d median_ms=%.3f worst_ms=%.3f checksum=%.6g\n", L, H, T, reps,
           median(t, reps), maxof(t, reps), check);
    free(att), free(ids), free(out), free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench forward|teach|stream|frame|frame4k|edit|frame-parts|import|load|head-scores|alt|startup ...\n");
        return 2;
    }
    const char *mode = argv[1];
    const char *emb = getenv("BENCH_EMBEDDINGS") ? getenv("BENCH_EMBEDDINGS") : "assets/embeddings.txt";
    if (strcmp(mode, "forward") == 0 && argc >= 3)
        return mode_forward(atoi(argv[2]), argc > 3 ? atof(argv[3]) : 0.4);
    if (strcmp(mode, "stream") == 0)
        return mode_stream();
    if (strcmp(mode, "frame4k") == 0 && argc >= 3) {
        frame_w = 3840, frame_h = 2160, frame_ui = 2.0f;
        return mode_frame(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 30, 0, emb);
    }
    if (strcmp(mode, "frame") == 0 && argc >= 3)
        return mode_frame(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 50, 0, emb);
    if (strcmp(mode, "edit") == 0 && argc >= 3)
        return mode_frame(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 50, 1, emb);
    if (strcmp(mode, "frame-parts") == 0 && argc >= 3)
        return mode_frame_parts(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 30, emb);
    if (strcmp(mode, "import") == 0 && argc >= 3)
        return mode_import(argv[2], argc > 3 ? atoi(argv[3]) : 30, emb);
    if (strcmp(mode, "teach") == 0 && argc >= 5)
        return mode_teach(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc > 5 ? atof(argv[5]) : 0.5);
    if (strcmp(mode, "type") == 0 && argc >= 3)
        return mode_type(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 60, 0, emb);
    if (strcmp(mode, "type-words") == 0 && argc >= 3)
        return mode_type(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 60, 1, emb);
    if (strcmp(mode, "load") == 0 && argc >= 3)
        return mode_load(argv[2], argc > 3 ? atoi(argv[3]) : 5);
    if (strcmp(mode, "head-scores") == 0 && argc >= 5)
        return mode_head_scores(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc > 5 ? atoi(argv[5]) : 15);
    if (strcmp(mode, "alt") == 0 && argc >= 6)
        return mode_alt(atoi(argv[2]), argc - 3, argv + 3);
    if (strcmp(mode, "startup") == 0 && argc >= 7 && strcmp(argv[5], "--") == 0)
        return mode_startup(atoi(argv[2]), argv[3], argv[4], argc - 6, argv + 6);
    fprintf(stderr, "bench: bad arguments for %s\n", mode);
    return 2;
}
