/* ggml's weight types in `make bench` (issue 35, "Speed"): quant_linear_cols
 * (src/core/quant.c) on a matrix of Llama-3.2-1B's MLP shapes, one line of
 * "key=value" results a case. run.sh builds this with the core objects.
 *
 *   quant_bench linear [reps]   for Q4_K, Q6_K and Q8_0 and both shapes
 *                               (8192 rows of 2048: the up and gate
 *                               projections; 2048 of 8192: down), times 1 and
 *                               64 rows of A, on one thread and on two (the
 *                               columns halved, as ops.c shares them): ms and
 *                               GB/s of weight bytes read
 *   quant_bench read [reps]     the same bytes summed as 64-bit words on one
 *                               and two threads: what memory gives here
 *   quant_bench hot [reps]      one row of A against 256 rows of 2048 read
 *                               again and again (in the cache): the
 *                               arithmetic's own time, ns per weight, to set
 *                               against linear's (arithmetic and memory)
 *
 * The weights are random blocks with finite scales, in copies filling 256 MB
 * that the repetitions take in turn, so every product reads its weights from
 * memory as a model's would, not from the cache. Medians of reps. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz/quant.h"
#include "attnviz/runtime.h"
#include "bench_time.h"

enum { POOL_MB = 256 };

static uint64_t rng = 35;
static uint64_t next(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* where a block's float16 scales lie (kept finite and small: exponent ≤ 14) */
static void tame(int t, uint8_t *w, size_t bytes)
{
    size_t bb = qtype_block_bytes(t);
    int at[2] = {-1, -1};
    if (t == QT_Q4_K || t == QT_Q5_K)
        at[0] = 0, at[1] = 2;
    else if (t == QT_Q6_K)
        at[0] = 208;
    else if (t == QT_Q8_0)
        at[0] = 0;
    for (size_t b = 0; b < bytes / bb; b++)
        for (int f = 0; f < 2; f++)
            if (at[f] >= 0)
                w[b * bb + at[f] + 1] &= 0x3B; /* sign kept, exponent < 15 */
}

typedef struct Job {
    float *out;
    const float *A;
    const uint8_t *w;
    size_t rb;
    int t, n, k, m, j0, j1;
} Job;

static void *job_run(void *arg)
{
    Job *j = arg;
    quant_linear_cols(j->out, j->m, j->A, j->k, j->t, j->w, j->rb, NULL, NULL, j->n, j->k, j->j0,
                      j->j1);
    return NULL;
}

/* one product on `threads` threads (the columns halved) */
static void product(Job base, int threads)
{
    if (threads == 1) {
        job_run(&base);
        return;
    }
    Job a = base, b = base;
    a.j1 = base.m / 2;
    b.j0 = base.m / 2;
    pthread_t th;
    if (pthread_create(&th, NULL, job_run, &b) != 0) {
        job_run(&b);
        job_run(&a);
        return;
    }
    job_run(&a);
    pthread_join(th, NULL);
}

static void linear(int reps)
{
    static const int types[] = {QT_Q4_K, QT_Q6_K, QT_Q8_0};
    static const int shapes[][2] = {{8192, 2048}, {2048, 8192}}; /* m rows of k */
    for (size_t ti = 0; ti < 3; ti++)
        for (size_t si = 0; si < 2; si++) {
            int t = types[ti], m = shapes[si][0], k = shapes[si][1];
            size_t rb = qtype_row_bytes(t, k), bytes = rb * m;
            int copies = (int)((size_t)POOL_MB * 1024 * 1024 / bytes) + 1;
            uint8_t *pool = malloc(bytes * copies);
            float *A = malloc(sizeof(float) * 64 * k), *out = malloc(sizeof(float) * 64 * m);
            double *ms = malloc(sizeof(double) * reps);
            if (!pool || !A || !out || !ms) {
                fprintf(stderr, "quant_bench: out of memory\n");
                exit(1);
            }
            for (size_t i = 0; i < bytes * copies; i += 8) {
                uint64_t r = next();
                memcpy(pool + i, &r, bytes * copies - i < 8 ? bytes * copies - i : 8);
            }
            tame(t, pool, bytes * copies);
            for (int i = 0; i < 64 * k; i++)
                A[i] = (float)((double)(next() >> 11) / 9007199254740992.0 - 0.5);
            for (int n = 1; n <= 64; n += 63)
                for (int threads = 1; threads <= 2; threads++) {
                    Job j = {out, A, pool, rb, t, n, k, m, 0, m};
                    product(j, threads); /* warm: page faults, the kernel set */
                    for (int r = 0; r < reps; r++) {
                        j.w = pool + (size_t)((r + 1) % copies) * bytes;
                        double t0 = now_ms();
                        product(j, threads);
                        ms[r] = now_ms() - t0;
                    }
                    double med = median(ms, reps);
                    printf("quant type=%s m=%d k=%d n=%d threads=%d ms=%.3f GBps=%.2f "
                           "gflops=%.2f kernels=%s\n",
                           qtype_name(t), m, k, n, threads, med, (double)bytes / (med * 1e6),
                           2.0 * n * (double)m * k / (med * 1e6), lm_kernels());
                    fflush(stdout);
                }
            free(ms);
            free(out);
            free(A);
            free(pool);
        }
}

/* linear's n = 1 on one thread with the weights in the cache: the fastest
 * of reps runs of 10 products (the arithmetic's time, the least disturbed) */
static void hot(int reps)
{
    static const int types[] = {QT_Q4_K, QT_Q6_K, QT_Q8_0};
    enum { M = 256, K = 2048 };
    static float A[K], out[M];
    for (int i = 0; i < K; i++)
        A[i] = (float)((double)(next() >> 11) / 9007199254740992.0 - 0.5);
    for (size_t ti = 0; ti < 3; ti++) {
        int t = types[ti];
        size_t rb = qtype_row_bytes(t, K), bytes = rb * M;
        uint8_t *w = malloc(bytes);
        if (!w) {
            fprintf(stderr, "quant_bench: out of memory\n");
            exit(1);
        }
        for (size_t i = 0; i < bytes; i++)
            w[i] = (uint8_t)(next() >> 56);
        tame(t, w, bytes);
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now_ms();
            for (int z = 0; z < 10; z++)
                quant_linear_cols(out, M, A, K, t, w, rb, NULL, NULL, 1, K, 0, M);
            double ms = (now_ms() - t0) / 10;
            best = ms < best ? ms : best;
        }
        printf("hot type=%s m=%d k=%d n=1 threads=1 us=%.2f ns_per_weight=%.4f kernels=%s\n",
               qtype_name(t), M, K, best * 1e3, best * 1e6 / ((double)M * K), lm_kernels());
        fflush(stdout);
        free(w);
    }
}

typedef struct Read {
    const uint64_t *p;
    size_t n;
    uint64_t sum;
} Read;

static void *read_run(void *arg)
{
    Read *r = arg;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 4 <= r->n; i += 4) {
        s0 += r->p[i];
        s1 += r->p[i + 1];
        s2 += r->p[i + 2];
        s3 += r->p[i + 3];
    }
    r->sum = s0 + s1 + s2 + s3;
    return NULL;
}

static void readbw(int reps)
{
    size_t bytes = (size_t)9437184; /* a 2048 × 8192 Q4_K matrix */
    int copies = POOL_MB * 1024 * 1024 / (int)bytes + 1;
    uint64_t *pool = malloc(bytes * copies);
    double *ms = malloc(sizeof(double) * reps);
    if (!pool || !ms) {
        fprintf(stderr, "quant_bench: out of memory\n");
        exit(1);
    }
    memset(pool, 1, bytes * copies);
    uint64_t keep = 0;
    for (int threads = 1; threads <= 2; threads++) {
        for (int r = 0; r < reps; r++) {
            const uint64_t *p = pool + (size_t)((r + 1) % copies) * (bytes / 8);
            Read a = {p, bytes / 16, 0}, b = {p + bytes / 16, bytes / 16, 0};
            double t0 = now_ms();
            if (threads == 2) {
                pthread_t th;
                pthread_create(&th, NULL, read_run, &b);
                read_run(&a);
                pthread_join(th, NULL);
            } else {
                a.n = bytes / 8;
                read_run(&a);
            }
            ms[r] = now_ms() - t0;
            keep += a.sum + b.sum;
        }
        double med = median(ms, reps);
        printf("read bytes=%zu threads=%d ms=%.3f GBps=%.2f check=%llu\n", bytes, threads, med,
               (double)bytes / (med * 1e6), (unsigned long long)(keep & 1));
    }
    free(ms);
    free(pool);
}

int main(int argc, char **argv)
{
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    if (argc < 2 || reps < 1 ||
        (strcmp(argv[1], "linear") && strcmp(argv[1], "read") && strcmp(argv[1], "hot"))) {
        fprintf(stderr, "usage: quant_bench linear|read|hot [reps]\n");
        return 2;
    }
    if (strcmp(argv[1], "linear") == 0)
        linear(reps);
    else if (strcmp(argv[1], "hot") == 0)
        hot(reps);
    else
        readbw(reps);
    return 0;
}
