/* The window's keystroke with a head switched off (issue 37's "at most one
 * extra forward"): a text of about T tokens on a model, Ctrl+K on layer 1,
 * head 4 (or every head on), then keystrokes at the text's end through the
 * window's event path (a letter, a Backspace: T stays), each timed from the
 * event until the window's numbers are the new text's (the worker's result
 * taken by app_tick, waiting a millisecond at a time; no frame drawn, so
 * the worker's forwards are what is timed), and the process's CPU time a
 * keystroke (the worker's work: the loop mostly sleeps; steadier than the
 * wall time on a busy machine). Not part of `make test`: built and run by hand, for A/B runs of
 * two builds:
 *   make -j2 && cc -O2 -Iinclude -Itests $(pkg-config --cflags sdl2) \
 *     tests/bench/ablate_key.c $(find build/obj/src -name '[a-z]*.o' ! -name main.o) \
 *     -o /tmp/ablate_key -lSDL2_ttf -lSDL2_image -lSDL2 -lcglm -lcjson -lfontconfig \
 *     -lfreetype -lz -lzip -lutf8proc -lpcre2-8 -lcmocka -lm -lpthread
 *   SDL_VIDEODRIVER=dummy ./ablate_key MODEL on|off T KEYS
 * prints "ablate_key heads=off T=64 keys=200 median_ms=… mean_ms=… cpu_ms_per_key=…";
 *   ./ablate_key MODEL lm T KEYS
 * the worker's forwards alone, as before the second state and as now. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attnviz/model_source.h"
#include "attnviz/source.h"
#include "../test_app_util.h"

#include <sys/resource.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* Until the worker's numbers are the text's: 1, or 0 after 20 s. */
static int current(Fix *f)
{
    for (double t0 = now_ms(); now_ms() - t0 < 20000;) {
        SDL_Event e;
        int wait_ms;
        if (SDL_WaitEventTimeout(&e, 1) && !app_wake_is(&e))
            app_handle_event(f->a, &e);
        app_tick(f->a, SDL_GetTicks(), &wait_ms);
        ModelShown m;
        if (model_source_shown(f->a, &m) == 0 && !m.stale && m.pred_pos >= 0)
            return 1;
    }
    return 0;
}

/* The process's CPU time so far (every thread's), ms. */
static double cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The worker's forwards alone, both ways, on g's first T ids with layer 1,
 * head 4 off, the last id changed at each keystroke (two ids in turn):
 * "one" as the window computed before the second state (one state, the
 * ablation set and cleared around the second forward: each resets the
 * cache), "twin" as it computes now (lm_twin: each state its own prefix).
 * Each keystroke: both forwards and the logits of the last position. */
static void lm_modes(ModelOpened *g, int T, int keys)
{
    Lm *lm = &g->lm, twin;
    AttnErr err = {0};
    int V = lm->info.n_vocab, *ids = g->ids.id;
    float *z = malloc(sizeof *z * (size_t)V);
    double *t = calloc((size_t)keys, sizeof *t);
    if (!z || !t || lm_twin(&twin, lm, &err) < 0)
        exit(1);
    for (int mode = 0; mode < 2; mode++) {
        lm_ablate(lm, 0, 3, 1, &err);
        lm_forward(lm, ids, T, NULL, &err);
        lm_forward(&twin, ids, T, NULL, &err);
        long long c0 = lm->rt->n_computed + twin.rt->n_computed;
        for (int i = 0; i < keys; i++) {
            ids[T - 1] = i % 2 ? 17 : 42;
            double t0 = now_ms();
            if (mode == 0) {
                lm_ablate(lm, 0, 3, 1, &err);
                lm_forward(lm, ids, T, NULL, &err);
                lm_logits(lm, T - 1, z, &err);
                lm_ablate(lm, 0, 3, 0, &err);
                lm_forward(lm, ids, T, NULL, &err);
                lm_logits(lm, T - 1, z, &err);
            } else {
                lm_forward(lm, ids, T, NULL, &err);
                lm_logits(lm, T - 1, z, &err);
                lm_forward(&twin, ids, T, NULL, &err);
                lm_logits(&twin, T - 1, z, &err);
            }
            t[i] = now_ms() - t0;
        }
        long long c1 = lm->rt->n_computed + twin.rt->n_computed;
        qsort(t, (size_t)keys, sizeof *t, cmp);
        printf("ablate_key forwards=%s T=%d keys=%d median_ms=%.4f layer_positions_per_key=%.1f\n",
               mode ? "twin" : "one", T, keys, t[keys / 2], (double)(c1 - c0) / keys);
    }
    lm_close(&twin);
    free(z);
    free(t);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: ablate_key MODEL on|off|lm T KEYS\n");
        return 2;
    }
    const char *model = argv[1];
    int off = strcmp(argv[2], "off") == 0, T = atoi(argv[3]), keys = atoi(argv[4]);
    void *st = NULL;
    if (group_setup(&st) < 0 || setup(&st) < 0)
        return 1;
    Fix *f = st;
    /* a text of T tokens: the line again and again, cut at T */
    static const char line[] = "KING RICHARD II: Good uncle, tell me. ";
    char text[8192] = "";
    ModelOpened *g = NULL;
    AttnErr err = {0};
    if (model_open_path(model, 0, &g, &err) < 0) {
        fprintf(stderr, "%s: %s\n", model, err.msg);
        return 1;
    }
    size_t n = 0;
    while (n + 1 < sizeof text) {
        text[n] = line[n % (sizeof line - 1)];
        text[++n] = '\0';
        if (model_compute_text(g, text, n, &err) < 0)
            return 1;
        if (g->ids.n >= T)
            break;
    }
    if (strcmp(argv[2], "lm") == 0) {
        lm_modes(g, T, keys);
        model_opened_free(g);
        return 0;
    }
    g->for_window = 1;
    if (model_compute_text(g, text, n, &err) < 0 || source_model.show(f->a, g) < 0 || !current(f))
        return 1;
    if (off) {
        for (int k = 0; k < 3; k++)
            key(f, SDLK_h, 0);
        key(f, SDLK_k, KMOD_LCTRL);
        if (!current(f))
            return 1;
    }
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    double *t = calloc((size_t)keys, sizeof *t), sum = 0.0, cpu0 = cpu_ms();
    for (int i = 0; i < keys; i++) {
        SDL_Event e;
        memset(&e, 0, sizeof e);
        if (i % 2) {
            key_ev(&e, SDLK_BACKSPACE, 0);
        } else {
            e.type = SDL_TEXTINPUT;
            e.text.text[0] = (char)('a' + i % 26);
        }
        double t0 = now_ms();
        app_handle_event(f->a, &e);
        if (!current(f))
            return 1;
        sum += t[i] = now_ms() - t0;
    }
    double cpu = (cpu_ms() - cpu0) / keys;
    ModelShown m;
    model_source_shown(f->a, &m);
    qsort(t, (size_t)keys, sizeof *t, cmp);
    printf("ablate_key heads=%s T=%d keys=%d median_ms=%.4f mean_ms=%.4f cpu_ms_per_key=%.4f\n", off ? "off" : "on",
           m.T, keys, t[keys / 2], sum / keys, cpu);
    free(t);
    teardown(&st);
    group_teardown(&st);
    return 0;
}
