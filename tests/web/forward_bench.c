/* The toy model's keystroke, timed the same way natively and as wasm
 * (make web-bench: node runs the wasm build, V8 as in Chromium): the
 * built-in embeddings, the window's default configuration (learned, one
 * head, d 16), a sentence set (tokens, vectors) and computed, alternating
 * between two sentences that differ in their last word so every call does
 * the work. Prints the median over batches, and a checksum of the weights
 * so the two builds can be seen to compute the same.
 *
 * usage: forward_bench EMBEDDINGS WORDS [seconds]
 *   WORDS: the sentence's length in words (7: the default sentence's) */
#include "attnviz/attn.h"
#include "attnviz/embed.h"
#include "attnviz/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* words of the default sentence, repeated to n, the last one w */
static void sentence(char *out, size_t size, int n, const char *w)
{
    static const char *const words[] = {"the", "train", "left", "the", "station", "on"};
    out[0] = '\0';
    for (int i = 0; i < n - 1; i++) {
        strncat(out, words[i % 6], size - strlen(out) - 1);
        strncat(out, " ", size - strlen(out) - 1);
    }
    strncat(out, w, size - strlen(out) - 1);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: forward_bench EMBEDDINGS WORDS [seconds]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    double budget = argc > 3 ? atof(argv[3]) : 2.0;
    EmbedTable *table;
    AttnErr err = {0};
    if (n < 1 || n > 500 || embed_load(&table, argv[1], &err, NULL) < 0) {
        fprintf(stderr, "forward_bench: %s (WORDS %s: 1 to 500)\n", err.msg, argv[2]);
        return 1;
    }
    Model m;
    AttnConfig cfg = attn_config_default();
    static char a[8192], b[8192];
    sentence(a, sizeof a, n, "time");
    sentence(b, sizeof b, n, "river");
    if (model_init(&m, table, &cfg) < 0)
        return 1;
    enum { BATCHES = 4000 };
    static double per[BATCHES];
    int nb = 0, k = 50;
    double start = now_s();
    while (nb < BATCHES && (nb < 15 || now_s() - start < budget)) {
        double t0 = now_s();
        for (int i = 0; i < k; i++) {
            const char *s = i % 2 ? b : a;
            if (model_set_text(&m, s, strlen(s)) < 0 || model_compute(&m) < 0) {
                fprintf(stderr, "forward_bench: model_compute failed\n");
                return 1;
            }
        }
        per[nb++] = (now_s() - t0) / k;
    }
    qsort(per, (size_t)nb, sizeof *per, cmp_double);
    model_set_text(&m, a, strlen(a));
    model_compute(&m);
    double sum = 0;
    for (int i = 0; i < m.T * m.T; i++)
        sum += m.res.weights[i];
    printf("keystroke T=%d median_us=%.3f batches=%d checksum=%.9g\n", m.T, per[nb / 2] * 1e6, nb, sum);
    model_destroy(&m);
    embed_destroy(table);
    return 0;
}
