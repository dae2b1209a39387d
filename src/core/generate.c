/* The next token of a generation (generate.h): the argmax of the logits,
 * or a draw from the renormalised softmax of the K most likely at
 * temperature tau. No model here: the caller runs the forward. */
#include "attnviz/generate.h"

#include <math.h>

double gen_uniform(Prng *r)
{
    return (double)(prng_next(r) >> 11) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

/* 1 when id a ranks before id b: a larger logit, or the same and a lower id. */
static int before(const float *logits, int a, int b)
{
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
}

/* Heap h[0..n) restored below i: each parent ranks after its children,
 * so the root is the worst of those kept. */
static void sift_down(const float *logits, int *h, int n, int i)
{
    for (;;) {
        int w = i, l = 2 * i + 1, r = l + 1;
        if (l < n && before(logits, h[w], h[l]))
            w = l;
        if (r < n && before(logits, h[w], h[r]))
            w = r;
        if (w == i)
            return;
        int t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

/* A partial heap sort: n log k, whole when k = n. */
void gen_rank(const float *logits, int n, int k, int *order)
{
    if (k <= 0)
        return;
    /* pass 1: a heap of the k best seen so far, its root the worst of them */
    for (int i = 0; i < k; i++)
        order[i] = i;
    for (int i = k / 2 - 1; i >= 0; i--)
        sift_down(logits, order, k, i);
    for (int id = k; id < n; id++)
        if (before(logits, id, order[0])) {
            order[0] = id;
            sift_down(logits, order, k, 0);
        }
    /* pass 2: the heap taken apart from its worst: the best first */
    for (int m = k - 1; m > 0; m--) {
        int t = order[0];
        order[0] = order[m];
        order[m] = t;
        sift_down(logits, order, m, 0);
    }
}

int gen_pick(const float *logits, int n, const GenSettings *s, Prng *r, int *order, double *p)
{
    if (!s->sample) { /* greedy: the argmax, the lowest id of equal ones */
        int best = 0;
        for (int id = 1; id < n; id++)
            if (logits[id] > logits[best])
                best = id;
        return best;
    }
    int k = s->top_k > 0 && s->top_k < n ? s->top_k : n;
    gen_rank(logits, n, k, order);
    /* pass 1: p = softmax(logits / tau) over the k, in double */
    double top = logits[order[0]], sum = 0.0;
    for (int i = 0; i < k; i++)
        sum += p[i] = exp(((double)logits[order[i]] - top) / s->temperature);
    for (int i = 0; i < k; i++)
        p[i] /= sum;
    /* pass 2: the first whose cumulative probability exceeds u, the last if none does */
    double u = gen_uniform(r), cum = 0.0;
    for (int i = 0; i < k; i++)
        if ((cum += p[i]) > u)
            return order[i];
    return order[k - 1];
}
