/* The next token of a generation (--generate), chosen from one position's
 * logits: greedy (the argmax; ties: the lowest id) or sampled (softmax of
 * logits / tau over the K most likely, renormalised, one uniform draw of
 * prng.h's splitmix64 per token: the same tokens on every machine for a
 * seed). Pure arithmetic on what it is given: no model, no allocation (the
 * caller's scratch). */
#ifndef ATTNVIZ_GENERATE_H
#define ATTNVIZ_GENERATE_H

#include "attnviz/prng.h"

typedef struct GenSettings {
    int sample;          /* 0: greedy; 1: sampled */
    double temperature;  /* tau > 0 (sampling) */
    int top_k;           /* K: the most likely tokens sampled from; 0: all */
} GenSettings;

/* The uniform number of a draw: (splitmix64 output >> 11) · 2^-53, in [0, 1). */
double gen_uniform(Prng *r);

/* ids 0..n-1 ordered by logit, largest first (ties: the lower id first);
 * only the first k are placed (k ≤ n; k = n: all) into order. */
void gen_rank(const float *logits, int n, int k, int *order);

/* The token after logits (n floats, one position's): greedy, or sampled
 * with s and one draw from r. order (n ints) and p (n doubles) are scratch;
 * after a sampled pick order[0..k) and p[0..k) hold the ranking and its
 * renormalised probabilities (k = K, or n when K is 0 or more than n). */
int gen_pick(const float *logits, int n, const GenSettings *s, Prng *r, int *order, double *p);

#endif
