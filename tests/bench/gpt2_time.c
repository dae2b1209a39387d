/* GPT-2 small's forward timed on random weights made in memory (L 12, H 12,
 * C 768, n_inner 3072, vocabulary 50257, 1024 positions): a full forward of
 * T = 16, 64, 256 tokens (a fresh state each time, maps kept), a keystroke
 * at the end of 64 tokens (the last token replaced: one position through
 * every layer), one token appended, the top 10 after the last position,
 * and the floor of reading every block's weights once (their bytes over a
 * read bandwidth measured here). Not a test, not part of make bench (yet):
 *
 *   make -j2 && cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iinclude
 *     tests/bench/gpt2_time.c build/obj/src/core/[a-z]*.o -lm -lpthread -o build/gpt2_time
 *   ./build/gpt2_time [rounds]
 *
 * Each figure is the best and the median of the rounds, in milliseconds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz/gpt2.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t rng = 88172645463325252ULL;
static float frand(float spread)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return ((float)(rng >> 40) / (float)(1 << 24) * 2.0f - 1.0f) * spread;
}

static float *fill(size_t n, float centre, float spread)
{
    float *a = malloc(n * sizeof *a);
    if (!a) {
        fprintf(stderr, "gpt2_time: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        a[i] = centre + frand(spread);
    return a;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%-34s best %8.2f ms   median %8.2f ms\n", name, t[0], t[n / 2]);
}

/* Read bandwidth: the best of a few sums over 512 MB, in bytes per ms. */
static double read_bandwidth(void)
{
    size_t n = (size_t)128 << 20;
    float *a = fill(n, 0.0f, 1.0f);
    double best = 1e30;
    volatile float sink = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now_ms();
        float s[16] = {0};
        for (size_t i = 0; i < n; i += 16)
            for (int k = 0; k < 16; k++)
                s[k] += a[i + k];
        double t = now_ms() - t0;
        sink += s[0] + s[15];
        best = t < best ? t : best;
    }
    free(a);
    (void)sink;
    return (double)n * sizeof(float) / best;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1 || rounds > 100)
        rounds = 7;
    Gpt2Config c = {.n_layer = 12, .n_head = 12, .n_embd = 768, .n_positions = 1024,
                    .n_inner = 3072, .n_vocab = 50257, .ln_eps = 1e-5f,
                    .act = GPT2_ACT_GELU_TANH, .scale_attn_weights = 1, .bos_id = 50256,
                    .eos_id = 50256};
    size_t C = 768, I = 3072;
    Gpt2Layer layers[12];
    for (int l = 0; l < 12; l++)
        layers[l] = (Gpt2Layer){fill(C, 1, 0.2f), fill(C, 0, 0.1f), fill(C * 3 * C, 0, 0.05f),
                                fill(3 * C, 0, 0.1f), fill(C * C, 0, 0.05f), fill(C, 0, 0.1f),
                                fill(C, 1, 0.2f), fill(C, 0, 0.1f), fill(C * I, 0, 0.05f),
                                fill(I, 0, 0.1f), fill(I * C, 0, 0.03f), fill(C, 0, 0.1f)};
    Gpt2Weights w = {fill((size_t)c.n_vocab * C, 0, 0.1f), fill(1024 * C, 0, 0.05f), layers,
                     fill(C, 1, 0.2f), fill(C, 0, 0.1f), NULL};
    w.lm_head = w.wte;
    int ids[1024];
    for (int i = 0; i < 1024; i++)
        ids[i] = (int)((unsigned)(i * 7919 + 13) % 50257u);
    printf("GPT-2 small's shapes, random weights; kernels %s; %d rounds\n", lm_kernels(),
           rounds);
    double *t = malloc(sizeof(double) * (size_t)rounds);
    static const int Ts[] = {16, 64, 256};
    for (size_t k = 0; k < sizeof Ts / sizeof Ts[0]; k++) {
        for (int r = 0; r < rounds; r++) {
            Rt *s;
            if (rt_create(&s, &arch_gpt2, &c, NULL) < 0)
                return 1;
            double t0 = now_ms();
            if (rt_forward(s, &w, ids, Ts[k], NULL, NULL) < 0)
                return 1;
            t[r] = now_ms() - t0;
            rt_destroy(s);
        }
        char name[64];
        snprintf(name, sizeof name, "full forward T=%d", Ts[k]);
        report(name, t, rounds);
    }
    Rt *s;
    if (rt_create(&s, &arch_gpt2, &c, NULL) < 0 || rt_forward(s, &w, ids, 64, NULL, NULL) < 0)
        return 1;
    for (int r = 0; r < rounds; r++) {
        ids[63] = (ids[63] + 1) % 50257;
        double t0 = now_ms();
        rt_forward(s, &w, ids, 64, NULL, NULL);
        t[r] = now_ms() - t0;
    }
    report("keystroke: last of 64 replaced", t, rounds);
    for (int r = 0; r < rounds; r++) {
        rt_forward(s, &w, ids, 63, NULL, NULL);
        double t0 = now_ms();
        rt_forward(s, &w, ids, 64, NULL, NULL);
        t[r] = now_ms() - t0;
    }
    report("a 64th token appended", t, rounds);
    int top[LM_TOP_K];
    float prob[LM_TOP_K], *logits = malloc(sizeof(float) * (size_t)c.n_vocab);
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ms();
        rt_top_k(s, &w, 63, LM_TOP_K, top, prob, logits, NULL);
        t[r] = now_ms() - t0;
    }
    report("top 10 after position 63", t, rounds);
    double bw = read_bandwidth();
    double bytes = 12.0 * (C * 3 * C + C * C + 2 * C * I) * sizeof(float);
    printf("read bandwidth %.1f GB/s: the blocks' %.0f MB once take %.2f ms (the step's floor)\n",
           bw / 1e6, bytes / 1e6, bytes / bw);
    rt_destroy(s);
    free(logits);
    free(t);
    return 0;
}
