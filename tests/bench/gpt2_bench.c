/* GPT-2 small in `make bench` (issue 25, "Speed"): run.sh builds this with
 * the core and io objects and drives it, one mode a process, one line of
 * "key=value" results a mode, as bench.c.
 *
 *   gpt2_bench forward [reps]   full forwards T = 64 and T = 256 and the
 *                               keystroke at T = 64, on random weights made
 *                               in memory (GPT-2 small's shapes), with the
 *                               floor of the keystroke (a read-sum over its
 *                               weights) just before and after it
 *   gpt2_bench key [reps]       the keystroke alone
 *   gpt2_bench full T [reps]    a full forward of T tokens alone
 *   gpt2_bench peak [runs]      the float peak: an FMA loop on one and on two
 *                               threads, the best of runs
 *   gpt2_bench stream [runs]    the read bandwidth: a sum over 256 MB on one
 *                               and on two threads, the best of runs
 *   gpt2_bench open DIR         a model folder opened to a one-token forward
 *                               (the proxy for "open to its first frame")
 *   gpt2_bench rss DIR [reps]   that model: the keystroke at T = 64 on its
 *                               mapped weights, then a T = 1024 forward and
 *                               the process's memory after it
 *   gpt2_bench maps DIR T FILE  that model's L × H × T × T maps of the bench's
 *                               ids, raw float32, into FILE (torch_gpt2.py
 *                               --check compares its own with them)
 *   gpt2_bench linear [reps]    the float32 products alone (ops_linear) on
 *                               bert-base's and GPT-2 small's shapes: 128
 *                               rows × 768 in × 768, 2304, 3072 out and 3072
 *                               in × 768 out, twelve layers' matrices each
 *                               (340 MB: read from memory, as a forward
 *                               reads them), GFLOP/s per shape and all (and
 *                               per CPU second of both threads: the spin
 *                               while one waits counts), the last shape on
 *                               one thread by its CPU time; and one row (a
 *                               keystroke's linear_few) in ms
 *
 * A full forward is rt_reset + rt_forward on a GPT-2 state that already
 * held that many tokens (the window's case: its state lives with the model;
 * no allocation is timed), every map handed over row by row as the forward makes it (the maps the peer returns). The
 * keystroke replaces the last of 64 tokens (alternating two ids): the
 * incremental forward computes that one position through every layer and
 * writes the last row of all 144 maps. Times are medians of reps, in ms. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "attnviz/gpt2.h"
#include "attnviz/gpt2.h"
#include "attnviz/model_file.h"

#define CFG(m) ((const Gpt2Config *)(m)->cfg)
#define WTS(m) ((const Gpt2Weights *)(m)->weights)

#include "maps_out.h"
#include "bench_time.h"
#include "../../src/core/lm_kernels.h"
#include "../../src/core/ops.h"

static void die(const char *what, const AttnErr *err)
{
    fprintf(stderr, "gpt2_bench: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    exit(1);
}

/* GPT-2 small (Hugging Face's gpt2 config.json) */
static const Gpt2Config SMALL = {.n_layer = 12, .n_head = 12, .n_embd = 768,
                                 .n_positions = 1024, .n_inner = 3072, .n_vocab = 50257,
                                 .ln_eps = 1e-5f, .act = GPT2_ACT_GELU_TANH,
                                 .scale_attn_weights = 1, .bos_id = 50256, .eos_id = 50256};

/* The floats of one block's tensors: ln_1, c_attn, c_proj, ln_2, c_fc,
 * mlp.c_proj, weights and biases: what a forward of one position reads. */
static double block_floats(const Gpt2Config *c)
{
    double C = c->n_embd, I = c->n_inner;
    return 2 * C + (C * 3 * C + 3 * C) + (C * C + C) + 2 * C + (C * I + I) + (I * C + C);
}

/* The float operations of a full forward of T tokens, counted as multiply-adds
 * × 2 (layer norms, softmax, GELU and the residual adds left out: a few per
 * number, under 1 % here):
 *   the matmuls   2 · T · L · (C·3C + C·C + C·I + I·C)     (every weight once a token)
 *   attention     2 · L · H · d_head · T(T+1)/2 · 2        (Q·Kᵀ and weights·V over
 *                                                           the causal triangle only)
 *               = 2 · L · C · T(T+1)
 * GPT-2 small, T = 256: 43.5 + 1.2 GFLOP. */
static double forward_flops(const Gpt2Config *c, int T)
{
    double C = c->n_embd, I = c->n_inner, L = c->n_layer;
    return 2.0 * T * L * (4 * C * C + 2 * C * I) + 2.0 * L * C * T * (T + 1.0);
}

/* ---- random weights in memory ------------------------------------------------- */

static uint64_t rng = 88172645463325252ULL;
static float frand(void) /* uniform in [-1, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)(rng >> 40) / (float)(1 << 23) - 1.0f;
}

/* n floats centre ± a uniform spread of standard deviation std */
static float *fill(size_t n, float centre, float std)
{
    float *a = malloc(n * sizeof *a);
    if (!a)
        die("out of memory", NULL);
    float s = std * 1.7320508f; /* uniform on [-s, s): std s/√3 */
    for (size_t i = 0; i < n; i++)
        a[i] = centre + s * frand();
    return a;
}

static Gpt2Layer layers[12];

/* GPT-2's initialisation, roughly: weights std 0.02, biases 0-ish, layer
 * norms 1-ish (the numbers do not change the time) */
static Gpt2Weights random_weights(const Gpt2Config *c)
{
    size_t C = (size_t)c->n_embd, I = (size_t)c->n_inner;
    for (int l = 0; l < c->n_layer; l++)
        layers[l] = (Gpt2Layer){fill(C, 1, 0.02f), fill(C, 0, 0.02f),
                                fill(C * 3 * C, 0, 0.02f), fill(3 * C, 0, 0.02f),
                                fill(C * C, 0, 0.02f), fill(C, 0, 0.02f),
                                fill(C, 1, 0.02f), fill(C, 0, 0.02f),
                                fill(C * I, 0, 0.02f), fill(I, 0, 0.02f),
                                fill(I * C, 0, 0.02f), fill(C, 0, 0.02f)};
    Gpt2Weights w = {fill((size_t)c->n_vocab * C, 0, 0.02f),
                     fill((size_t)c->n_positions * C, 0, 0.01f), layers,
                     fill(C, 1, 0.02f), fill(C, 0, 0.02f), NULL};
    w.lm_head = w.wte;
    return w;
}

static void make_ids(int *ids, int n, int vocab)
{
    for (int i = 0; i < n; i++)
        ids[i] = (int)((unsigned)(i * 7919 + 13) % (unsigned)vocab);
}

/* ---- the timings ------------------------------------------------------------------ */

/* Median of reps full forwards of T tokens (reset, forward) on a state that
 * already held T tokens. */
static double time_full(const Gpt2Config *c, const Gpt2Weights *w, const int *ids, int T,
                        int reps)
{
    Rt *s;
    AttnErr err = {0};
    if (rt_create(&s, &arch_gpt2, c, &err) < 0 || rt_forward(s, w, ids, T, NULL, &err) < 0)
        die("forward", &err);
    double *t = malloc(sizeof(double) * (size_t)reps);
    /* every map made, as the peer returns them (no map is kept by the forward) */
    MapsOut o = {malloc(sizeof(float) * c->n_layer * c->n_head * T * T), c->n_head, T};
    ForwardHooks rows = {NULL, NULL, &o, map_row};
    if (!t || !o.maps)
        die("out of memory", NULL);
    for (int r = 0; r < reps; r++) {
        rt_reset(s);
        double t0 = now_ms();
        if (rt_forward(s, w, ids, T, &rows, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - t0;
    }
    free(o.maps);
    double m = median(t, reps);
    free(t);
    rt_destroy(s);
    return m;
}

/* Median of reps keystrokes at the end of T tokens: the last id replaced
 * (two ids alternating), one position recomputed in every layer. */
static double time_keystroke(Rt *s, const Gpt2Weights *w, int *ids, int T, int reps)
{
    AttnErr err = {0};
    if (rt_forward(s, w, ids, T, NULL, &err) < 0)
        die("forward", &err);
    double *t = malloc(sizeof(double) * (size_t)reps);
    int a = ids[T - 1], b = (a + 1) % s->sh.n_vocab;
    for (int r = 0; r < reps + 1; r++) {
        ids[T - 1] = r % 2 ? a : b;
        double t0 = now_ms();
        if (rt_forward(s, w, ids, T, NULL, &err) < 0)
            die("forward", &err);
        if (r > 0) /* the first: a warm-up */
            t[r - 1] = now_ms() - t0;
    }
    ids[T - 1] = a;
    double m = median(t, reps);
    free(t);
    return m;
}

/* The keystroke alone (developers' A/B runs of the step's kernels). */
static int mode_key(int reps)
{
    const Gpt2Config *c = &SMALL;
    Gpt2Weights w = random_weights(c);
    int ids[64];
    make_ids(ids, 64, c->n_vocab);
    Rt *s;
    AttnErr err = {0};
    if (rt_create(&s, &arch_gpt2, c, &err) < 0)
        die("state", &err);
    printf("gpt2key kernels=%s key64_ms=%.3f reps=%d\n", lm_kernels(), time_keystroke(s, &w, ids, 64, reps),
           reps);
    rt_destroy(s);
    return 0;
}

static double weights_read_ms(const Gpt2Config *c, const Gpt2Weights *w, int runs);

/* A full forward alone (developers' A/B runs and profiles). */
static int mode_full(int T, int reps)
{
    const Gpt2Config *c = &SMALL;
    if (T < 1 || T > c->n_positions)
        T = 64;
    Gpt2Weights w = random_weights(c);
    int ids[1024];
    make_ids(ids, T, c->n_vocab);
    printf("gpt2full kernels=%s T=%d full_ms=%.3f reps=%d\n", lm_kernels(), T,
           time_full(c, &w, ids, T, reps), reps);
    return 0;
}

static int mode_forward(int reps)
{
    const Gpt2Config *c = &SMALL;
    Gpt2Weights w = random_weights(c);
    int ids[1024];
    make_ids(ids, 1024, c->n_vocab);
    double f64 = time_full(c, &w, ids, 64, reps);
    double f256 = time_full(c, &w, ids, 256, reps);
    Rt *s;
    AttnErr err = {0};
    if (rt_create(&s, &arch_gpt2, c, &err) < 0)
        die("state", &err);
    /* the floor: every block's weight read once, by the read-sum of the
     * stream mode over those very arrays (where they lie in memory sets
     * the bandwidth: a buffer of its own read from 28 to 50 GB/s), the
     * best of runs just before and just after the keystrokes */
    double floor_ms = weights_read_ms(c, &w, 3);
    double key = time_keystroke(s, &w, ids, 64, 3 * reps);
    double f2 = weights_read_ms(c, &w, 3);
    floor_ms = f2 < floor_ms ? f2 : floor_ms;
    rt_destroy(s);
    double wbytes = block_floats(c) * c->n_layer * sizeof(float);
    printf("gpt2 kernels=%s fwd64_ms=%.3f fwd256_ms=%.3f key64_ms=%.3f flops64=%.6g "
           "flops256=%.6g gflops256=%.2f block_weight_MB=%.2f key_floor_ms=%.3f reps=%d\n",
           lm_kernels(), f64, f256, key, forward_flops(c, 64), forward_flops(c, 256),
           forward_flops(c, 256) / (f256 * 1e6), wbytes / 1e6, floor_ms, reps);
    return 0;
}

/* ---- the float peak ------------------------------------------------------------ */

/* Twelve independent chains of fused multiply-adds, 8 lanes (AVX2) or 16
 * (AVX-512): the most float operations a core can do. Returns the FLOPs done. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static double fma_avx2(long iters)
{
    __m256 acc[12], a = _mm256_set1_ps(1.0000001f), b = _mm256_set1_ps(1e-8f);
    for (int k = 0; k < 12; k++)
        acc[k] = _mm256_set1_ps((float)k);
    for (long n = 0; n < iters; n++)
#pragma GCC unroll 12
        for (int k = 0; k < 12; k++)
            acc[k] = _mm256_fmadd_ps(acc[k], a, b);
    volatile float sink = 0;
    for (int k = 0; k < 12; k++)
        sink += _mm256_cvtss_f32(acc[k]);
    (void)sink;
    return 12.0 * 8 * 2 * (double)iters;
}

__attribute__((target("avx512f"))) static double fma_avx512(long iters)
{
    __m512 acc[12], a = _mm512_set1_ps(1.0000001f), b = _mm512_set1_ps(1e-8f);
    for (int k = 0; k < 12; k++)
        acc[k] = _mm512_set1_ps((float)k);
    for (long n = 0; n < iters; n++)
#pragma GCC unroll 12
        for (int k = 0; k < 12; k++)
            acc[k] = _mm512_fmadd_ps(acc[k], a, b);
    volatile float sink = 0;
    for (int k = 0; k < 12; k++)
        sink += _mm512_cvtss_f32(acc[k]);
    (void)sink;
    return 12.0 * 16 * 2 * (double)iters;
}
#endif

typedef struct Job {
    int isa; /* 0 AVX2, 1 AVX-512 */
    int kind; /* 0 peak, 1 read a, 2 read every block's weight of w */
    const float *a;
    size_t n;
    const Gpt2Config *c; /* kind 2: this part of parts of every tensor */
    const Gpt2Weights *w;
    int part, parts;
    double work; /* FLOPs or bytes */
    double sink;
    pthread_barrier_t *go;
} Job;

static double read_sum(const float *a, size_t n)
{
    typedef float v8 __attribute__((vector_size(32)));
    v8 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    for (size_t i = 0; i + 32 <= n; i += 32) {
        v8 x0, x1, x2, x3;
        memcpy(&x0, a + i, 32), memcpy(&x1, a + i + 8, 32);
        memcpy(&x2, a + i + 16, 32), memcpy(&x3, a + i + 24, 32);
        s0 += x0, s1 += x1, s2 += x2, s3 += x3;
    }
    v8 s = s0 + s1 + s2 + s3;
    return (double)(s[0] + s[7]);
}

static void *job_run(void *arg)
{
    Job *j = arg;
    if (j->go)
        pthread_barrier_wait(j->go);
    if (j->kind == 1) {
        j->sink = read_sum(j->a, j->n);
        j->work = (double)j->n * sizeof(float);
        return NULL;
    }
    if (j->kind == 2) {
        size_t C = (size_t)j->c->n_embd, I = (size_t)j->c->n_inner;
        j->work = 0;
        for (int l = 0; l < j->c->n_layer; l++) {
            const Gpt2Layer *y = &j->w->layers[l];
            const float *t[12] = {y->ln1_w, y->ln1_b, y->attn_w, y->attn_b, y->proj_w, y->proj_b,
                                  y->ln2_w, y->ln2_b, y->fc_w,   y->fc_b,   y->mproj_w, y->mproj_b};
            size_t n[12] = {C, C, C * 3 * C, 3 * C, C * C, C, C, C, C * I, I, I * C, C};
            for (int k = 0; k < 12; k++) {
                size_t a = n[k] * j->part / j->parts, b = n[k] * (j->part + 1) / j->parts;
                j->sink += read_sum(t[k] + a, b - a);
                for (size_t r = a + (b - a) / 32 * 32; r < b; r++) /* read_sum's tail */
                    j->sink += t[k][r];
                j->work += (double)(b - a) * sizeof(float);
            }
        }
        return NULL;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    j->work = j->isa ? fma_avx512(30000000L) : fma_avx2(60000000L);
#else
    j->work = 0;
#endif
    return NULL;
}

/* The rate of one job, or of two on two threads started together (their
 * work over the wall time until both are done), per ms. */
static double rate(Job *proto, int threads)
{
    Job j[2] = {*proto, *proto};
    pthread_barrier_t go;
    pthread_t t;
    if (threads == 2) {
        j[0].n = j[1].n = proto->n / 2;
        j[1].a = proto->a + proto->n / 2;
        j[0].parts = j[1].parts = 2;
        j[1].part = 1;
        pthread_barrier_init(&go, NULL, 2);
        j[0].go = j[1].go = &go;
        if (pthread_create(&t, NULL, job_run, &j[1]) != 0)
            die("pthread_create failed", NULL);
    }
    double t0 = now_ms();
    job_run(&j[0]);
    double work = j[0].work;
    if (threads == 2) {
        pthread_join(t, NULL);
        pthread_barrier_destroy(&go);
        work += j[1].work;
    }
    double dt = now_ms() - t0;
    if (j[0].sink == 12345.0)
        printf("#");
    return work / dt;
}

static int mode_peak(int runs)
{
    int isas = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    isas = __builtin_cpu_supports("fma") ? (__builtin_cpu_supports("avx512f") ? 2 : 1) : 0;
#endif
    if (!isas) {
        printf("gpt2peak one_core_gflops=nan two_cores_gflops=nan isa=none\n");
        return 0;
    }
    double best[2][2] = {{0}}; /* [isa][threads - 1], GFLOP/s */
    for (int r = 0; r < runs; r++)
        for (int isa = 0; isa < isas; isa++)
            for (int th = 1; th <= 2; th++) {
                Job j = {.isa = isa};
                double g = rate(&j, th) * 1e-6;
                best[isa][th - 1] = g > best[isa][th - 1] ? g : best[isa][th - 1];
            }
    int top = isas == 2 && best[1][1] > best[0][1] ? 1 : 0;
    printf("gpt2peak one_core_gflops=%.1f two_cores_gflops=%.1f isa=%s avx2_1=%.1f avx2_2=%.1f "
           "avx512_1=%.1f avx512_2=%.1f runs=%d\n",
           best[top][0] > best[1 - top][0] ? best[top][0] : best[1 - top][0], best[top][1],
           top ? "avx512" : "avx2", best[0][0], best[0][1], best[1][0], best[1][1], runs);
    return 0;
}

/* ---- the read bandwidth ---------------------------------------------------------- */

/* Reading every block's weight once (ms): each tensor's halves summed on
 * the two threads (or all on one), the best of runs and of 1 and 2
 * threads. */
static double weights_read_ms(const Gpt2Config *c, const Gpt2Weights *w, int runs)
{
    double best = 0; /* bytes per ms */
    for (int r = 0; r < runs; r++)
        for (int th = 1; th <= 2; th++) {
            Job j = {.kind = 2, .c = c, .w = w, .part = 0, .parts = 1};
            double g = rate(&j, th);
            best = g > best ? g : best;
        }
    return block_floats(c) * c->n_layer * sizeof(float) / best;
}

static int mode_stream(int runs)
{
    size_t n = (size_t)64 << 20; /* 256 MB of floats: far more than any cache here */
    float *a = malloc(n * sizeof *a);
    if (!a)
        die("out of memory", NULL);
    for (size_t i = 0; i < n; i++)
        a[i] = (float)(i & 1023);
    double best[2] = {0}; /* GB/s */
    for (int r = 0; r < runs; r++)
        for (int th = 1; th <= 2; th++) {
            Job j = {.kind = 1, .a = a, .n = n};
            double g = rate(&j, th) * 1e-6;
            best[th - 1] = g > best[th - 1] ? g : best[th - 1];
        }
    printf("gpt2stream read_1_GBps=%.2f read_2_GBps=%.2f read_GBps=%.2f buffer_MB=%.0f runs=%d\n",
           best[0], best[1], best[0] > best[1] ? best[0] : best[1], (double)n * 4 / 1e6, runs);
    free(a);
    return 0;
}

/* ---- a model file: open, memory ------------------------------------------------ */

static int mode_open(const char *dir)
{
    AttnErr err = {0};
    ModelFile *m;
    Rt *s;
    double t0 = now_ms();
    if (model_file_open(dir, &desc_gpt2, &m, &err) < 0)
        die("open", &err);
    double t1 = now_ms();
    if (rt_create(&s, &arch_gpt2, CFG(m), &err) < 0)
        die("state", &err);
    double t2 = now_ms();
    int id = CFG(m)->bos_id >= 0 ? CFG(m)->bos_id : 0;
    if (rt_forward(s, WTS(m), &id, 1, NULL, &err) < 0)
        die("forward", &err);
    double t3 = now_ms();
    printf("gpt2open open_ms=%.2f file_ms=%.2f state_ms=%.3f forward1_ms=%.2f converted=%d "
           "converted_MB=%.2f shards=%d tied=%d\n",
           t3 - t0, t1 - t0, t2 - t1, t3 - t2, m->n_converted, (double)m->converted_bytes / 1e6,
           m->n_shards, m->tied);
    rt_destroy(s);
    model_file_close(m);
    return 0;
}

/* kB of a "Name:   N kB" line of /proc/self/status, or -1 */
static double status_kb(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = -1;
    size_t k = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, k) == 0 && line[k] == ':')
            v = atof(line + k + 1);
    if (f)
        fclose(f);
    return v;
}

static int mode_rss(const char *dir, int reps)
{
    AttnErr err = {0};
    ModelFile *m;
    Rt *s;
    if (model_file_open(dir, &desc_gpt2, &m, &err) < 0)
        die("open", &err);
    double anon_open = status_kb("RssAnon");
    const Gpt2Config *c = CFG(m);
    if (rt_create(&s, &arch_gpt2, c, &err) < 0)
        die("state", &err);
    int *ids = malloc(sizeof(int) * (size_t)c->n_positions);
    make_ids(ids, c->n_positions, c->n_vocab);
    double key = time_keystroke(s, WTS(m), ids, 64, reps);
    int T = c->n_positions;
    double t0 = now_ms();
    if (rt_forward(s, WTS(m), ids, T, NULL, &err) < 0)
        die("forward", &err);
    double tT = now_ms() - t0;
    /* what the state holds at cap positions between forwards (runtime.h):
     * no map (maps are made when asked: issue 33), the cache (queries, keys
     * and values, the keys transposed) and the residual stream; the
     * forward's scratch is freed when it returns */
    double L = c->n_layer, C = c->n_embd, cap = s->cap;
    double maps = 0;
    double cache = (L * cap * 3 * C + L * C * cap + cap * C) * 4;
    double scratch = C * 4 + c->n_positions * sizeof(int);
    printf("gpt2rss T=%d cap=%d anon_MB=%.1f rss_MB=%.1f file_MB=%.1f hwm_MB=%.1f "
           "anon_open_MB=%.1f maps_MB=%.1f cache_MB=%.1f scratch_MB=%.1f converted_MB=%.2f "
           "forward_ms=%.1f key64_mapped_ms=%.3f\n",
           T, s->cap, status_kb("RssAnon") * 1024 / 1e6, status_kb("VmRSS") * 1024 / 1e6,
           status_kb("RssFile") * 1024 / 1e6, status_kb("VmHWM") * 1024 / 1e6,
           anon_open * 1024 / 1e6, maps / 1e6, cache / 1e6, scratch / 1e6,
           (double)m->converted_bytes / 1e6, tT, key);
    free(ids);
    rt_destroy(s);
    model_file_close(m);
    return 0;
}

static int mode_maps(const char *dir, int T, const char *path)
{
    AttnErr err = {0};
    ModelFile *m;
    Rt *s;
    if (model_file_open(dir, &desc_gpt2, &m, &err) < 0)
        die("open", &err);
    const Gpt2Config *c = CFG(m);
    if (T < 1 || T > c->n_positions)
        die("T outside 1 … n_positions", NULL);
    int *ids = malloc(sizeof(int) * (size_t)T);
    make_ids(ids, T, c->n_vocab);
    if (rt_create(&s, &arch_gpt2, c, &err) < 0 || rt_forward(s, WTS(m), ids, T, NULL, &err) < 0)
        die("forward", &err);
    size_t n = (size_t)c->n_layer * c->n_head * T * T;
    float *maps = malloc(n * sizeof *maps);
    FILE *f = fopen(path, "wb");
    if (!maps || !f)
        die("cannot write the maps", NULL);
    rt_maps_copy(s, maps);
    if (fwrite(maps, sizeof *maps, n, f) != n || fclose(f) != 0)
        die("cannot write the maps", NULL);
    free(maps);
    free(ids);
    rt_destroy(s);
    model_file_close(m);
    return 0;
}

/* ---- the products alone --------------------------------------------------------- */

static float *rand_floats(size_t n, uint64_t *seed)
{
    float *a = malloc(n * sizeof *a);
    if (!a)
        die("out of memory", NULL);
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        a[i] = (float)((int)(*seed >> 41) - (1 << 22)) / (float)(1 << 24);
    }
    return a;
}

/* Twelve layers' matrices of each shape, the layers' products in turn (each
 * matrix read from memory, as in a forward), the best of reps rounds. */
static int mode_linear(int reps)
{
    enum { L = 12, N = 128, S = 4 };
    static const int shape[S][2] = {{768, 768}, {768, 2304}, {768, 3072}, {3072, 768}};
    uint64_t seed = 7;
    float *A = rand_floats((size_t)N * 3072, &seed), *out = rand_floats((size_t)N * 3072, &seed);
    float *bias = rand_floats(3072, &seed), *W[S][L];
    for (int s = 0; s < S; s++)
        for (int l = 0; l < L; l++)
            W[s][l] = rand_floats((size_t)shape[s][0] * shape[s][1], &seed);
    double best[S], all = 1e30, few = 1e30, one = 1e30;
    for (int s = 0; s < S; s++)
        best[s] = 1e30;
    double cpu = 1e30; /* both threads' CPU time for the products, ms */
    for (int r = 0; r < reps; r++) {
        double sum = 0;
        struct timespec p0, p1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p0);
        for (int s = 0; s < S; s++) {
            int k = shape[s][0], m = shape[s][1];
            double a = now_ms();
            for (int l = 0; l < L; l++)
                ops_linear(out, m, A, k, W[s][l], bias, N, k, m);
            double t = now_ms() - a;
            best[s] = t < best[s] ? t : best[s];
            sum += t;
        }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
        double c = (p1.tv_sec - p0.tv_sec) * 1e3 + (p1.tv_nsec - p0.tv_nsec) * 1e-6;
        cpu = c < cpu ? c : cpu;
        all = sum < all ? sum : all;
        double a = now_ms();
        for (int s = 0; s < S; s++)
            for (int l = 0; l < L; l++)
                ops_linear(out, shape[s][1], A, shape[s][0], W[s][l], bias, 1, shape[s][0],
                           shape[s][1]);
        double t = now_ms() - a;
        few = t < few ? t : few;
        /* one thread: the kernel on every column, timed by this thread's CPU
           time (another process on the core does not count) */
        struct timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        for (int l = 0; l < L; l++)
            lm_kernel_set()->linear(out, 3072, A, 3072, W[3][l], bias, N, 3072, 768, 0, 768);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        t = (c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) * 1e-6;
        one = t < one ? t : one;
    }
    double flops[S], total = 0;
    for (int s = 0; s < S; s++) {
        flops[s] = 2.0 * N * shape[s][0] * shape[s][1] * L;
        total += flops[s];
    }
    printf("gpt2linear kernels=%s rows=%d gflops=%.1f ms=%.2f cpu_gflops_per_core=%.1f", lm_kernels(),
           N, total / all * 1e-6, all, total / cpu * 1e-6);
    for (int s = 0; s < S; s++)
        printf(" k%d_m%d_gflops=%.1f", shape[s][0], shape[s][1], flops[s] / best[s] * 1e-6);
    printf(" one_thread_cpu_k3072_m768_gflops=%.1f one_row_ms=%.2f reps=%d\n", flops[3] / one * 1e-6,
           few, reps);
    for (int s = 0; s < S; s++)
        for (int l = 0; l < L; l++)
            free(W[s][l]);
    free(A), free(out), free(bias);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(mode, "forward") == 0)
        return mode_forward(n > 0 ? n : 5);
    if (strcmp(mode, "key") == 0)
        return mode_key(n > 0 ? n : 15);
    if (strcmp(mode, "full") == 0 && argc > 2)
        return mode_full(n, argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 15);
    if (strcmp(mode, "peak") == 0)
        return mode_peak(n > 0 ? n : 5);
    if (strcmp(mode, "stream") == 0)
        return mode_stream(n > 0 ? n : 5);
    if (strcmp(mode, "open") == 0 && argc > 2)
        return mode_open(argv[2]);
    if (strcmp(mode, "rss") == 0 && argc > 2)
        return mode_rss(argv[2], argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 9);
    if (strcmp(mode, "linear") == 0)
        return mode_linear(n > 0 ? n : 5);
    if (strcmp(mode, "maps") == 0 && argc > 4)
        return mode_maps(argv[2], atoi(argv[3]), argv[4]);
    fprintf(stderr, "usage: gpt2_bench forward [reps] | key [reps] | full T [reps] | peak [runs] | stream [runs] | "
                    "open DIR | rss DIR [reps] | maps DIR T FILE | linear [reps]\n");
    return 2;
}
