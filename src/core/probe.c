/* The induction probe's tokens (probe.h): bos, n random ids, the same n
 * again. Uniform ids by rejection (no modulo bias), from splitmix64. */
#include "attnviz/probe.h"
#include "attnviz/prng.h"

/* A uniform integer in [0, n). */
static int below(Prng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do
        x = prng_next(r);
    while (x >= limit);
    return (int)(x % n);
}

int probe_induction_tokens(int *out, int n, int bos_id, int vocab, uint64_t seed)
{
    if (n < 1 || 2 * n + 1 > PROBE_MAX_TOKENS || vocab < 1)
        return -1;
    Prng r;
    prng_seed(&r, seed);
    int T = 0;
    if (bos_id >= 0)
        out[T++] = bos_id;
    for (int i = 0; i < n; i++)
        out[T + i] = below(&r, (uint64_t)vocab);
    for (int i = 0; i < n; i++)
        out[T + n + i] = out[T + i];
    return T + 2 * n;
}
