/* The project's own PRNG (splitmix64): the same numbers on every machine,
 * for --seed weights, OOV vectors and the tests. */
#ifndef ATTNVIZ_PRNG_H
#define ATTNVIZ_PRNG_H

#include <stdint.h>

typedef struct Prng {
    uint64_t state;
} Prng;

static inline void prng_seed(Prng *r, uint64_t seed)
{
    r->state = seed;
}

static inline uint64_t prng_next(Prng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform float in [0, 1) with 24 random bits. */
static inline float prng_uniform(Prng *r)
{
    return (float)(prng_next(r) >> 40) * (1.0f / 16777216.0f);
}

#endif
