/* GGUF files in `make bench` (issue 35, "Speed"): run.sh builds this with
 * every object but main.o and drives it, one line of "key=value" results a
 * run.
 *
 *   gguf_bench FILE [reps]   opens the GGUF file as the program does
 *                            (lm_open_gguf: the file mapped, its matrices
 *                            used as stored), then times
 *     fwd256_ms   a full forward of T = 256 (the state reset), every map's
 *                 rows handed to the row hook as the forward makes them
 *                 (streamed: summed, not kept);
 *     key64_ms    the keystroke at T = 64: the last of 64 tokens replaced
 *                 (two ids alternating): one position through every layer;
 *     key64_top_ms  the same with the top 10 predictions there;
 *     rss_anon_mb   RssAnon after the forward of 256 (the weights are the
 *                 file's mapping, not counted).
 * Medians of reps, in ms. The ids are (7919 i + 13) mod V, as the peer's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "bench_time.h"

static void die(const char *what, const AttnErr *err)
{
    fprintf(stderr, "gguf_bench: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    exit(1);
}

/* The rows streamed: summed (so the hook reads each one). */
static void sum_row(void *user, int layer, int head, int i, const float *w, int n)
{
    (void)layer, (void)head, (void)i;
    double *s = user;
    for (int j = 0; j < n; j++)
        *s += w[j];
}

static double rss_anon_mb(void)
{
    char line[256];
    double kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %lf", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb / 1024.0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gguf_bench FILE [reps]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    Lm lm = {0};
    AttnErr err = {0};
    double t0 = now_ms();
    if (lm_open_gguf(&lm, argv[1], &err) < 0)
        die(argv[1], &err);
    double open_ms = now_ms() - t0;
    int V = lm.info.n_vocab, ids[256];
    for (int i = 0; i < 256; i++)
        ids[i] = (int)((7919LL * i + 13) % V);

    double sum = 0, t[64];
    ForwardHooks rows = {NULL, NULL, &sum, sum_row};
    if (lm_forward(&lm, ids, 256, NULL, &err) < 0) /* warm: the pages of the weights */
        die("forward", &err);
    for (int r = 0; r < reps; r++) {
        rt_reset(lm.rt);
        double a = now_ms();
        if (lm_forward(&lm, ids, 256, &rows, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    double fwd = median(t, reps), rss = rss_anon_mb();

    int k[64], top[LM_TOP_K];
    float pr[LM_TOP_K];
    memcpy(k, ids, sizeof k);
    rt_reset(lm.rt);
    if (lm_forward(&lm, k, 64, NULL, &err) < 0)
        die("forward", &err);
    for (int r = 0; r < reps; r++) {
        k[63] = ids[r % 2 ? 63 : 62];
        double a = now_ms();
        if (lm_forward(&lm, k, 64, NULL, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    double key = median(t, reps);
    for (int r = 0; r < reps; r++) {
        k[63] = ids[r % 2 ? 61 : 60];
        double a = now_ms();
        if (lm_forward(&lm, k, 64, NULL, &err) < 0 || lm_top_k(&lm, 63, LM_TOP_K, top, pr, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    double key_top = median(t, reps);
    printf("gguf arch=%s L=%d H=%d KV=%d d=%d V=%d kernels=%s open_ms=%.1f fwd256_ms=%.3f "
           "key64_ms=%.3f key64_top_ms=%.3f rss_anon_mb=%.1f rows_sum=%.3g\n", lm.info.arch,
           lm.info.n_layer, lm.info.n_head, lm.info.n_kv_head, lm.info.d_head, V, lm_kernels(),
           open_ms, fwd, key, key_top, rss, sum);
    lm_close(&lm);
    return 0;
}
