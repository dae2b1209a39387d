/* The tests' own random numbers (splitmix64, written out here so a test
 * never depends on the program's generator): a seed, uniform doubles and
 * matrices of floats. Include after cmocka.h. */
#ifndef ATTNVIZ_TEST_RAND_H
#define ATTNVIZ_TEST_RAND_H

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state;

static inline void rng_seed(uint64_t s)
{
    rng_state = s;
}

static inline uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi) */
static inline double urand(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next() >> 11) * (1.0 / 9007199254740992.0));
}

static inline float *rand_matrix(int rows, int cols, double lo, double hi)
{
    float *a = malloc((size_t)rows * cols * sizeof(float) + 1);
    assert_non_null(a);
    for (int i = 0; i < rows * cols; i++)
        a[i] = (float)urand(lo, hi);
    return a;
}

#endif
