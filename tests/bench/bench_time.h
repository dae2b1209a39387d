/* The benches' clock and median (family_bench, gguf_bench, llama_bench,
 * gpt2_bench, quant_bench): a monotonic millisecond clock, the process's
 * CPU time, and the median of n times (sorted in place). */
#ifndef ATTNVIZ_BENCH_TIME_H
#define ATTNVIZ_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* The process's CPU time (every thread's, a worker's spin included) in
 * ms: a figure other work on the machine moves less than the clock's. */
static inline double cpu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#endif
