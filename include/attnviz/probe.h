/* The induction probe's tokens (issue 26): a model's bos token (none when
 * it has none), then n random token ids below the vocabulary's size, then
 * the same n again: 2n + 1 tokens (2n without a bos). An induction head
 * attends, in the second half, to the token after the earlier copy of the
 * query's token. A pure function of its arguments over prng.h (splitmix64):
 * the same seed gives the same tokens on every machine. */
#ifndef ATTNVIZ_PROBE_H
#define ATTNVIZ_PROBE_H

#include <stdint.h>

#define PROBE_DEFAULT_N 25
#define PROBE_MAX_TOKENS 1024 /* bos + 2n at most (n ≤ 511) */

/* out: room for PROBE_MAX_TOKENS ids; bos_id < 0: none; vocab ≥ 1, 1 ≤ n
 * ≤ 511. Returns the number of tokens, or -1 for arguments out of range. */
int probe_induction_tokens(int *out, int n, int bos_id, int vocab, uint64_t seed);

#endif
