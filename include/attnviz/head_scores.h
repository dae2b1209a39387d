/* What a head does, as seven numbers (issue 26): the scores of one head's
 * weights A (Tq × Tk, rows as shown: after any dropped tokens and the rows'
 * renormalisation) with the tokens' identities, and of every head of an
 * L × H × Tq × Tk tensor at once. Plain C and libm: no files, no screen.
 *
 *   previous   mean over queries i ≥ 1 of A[i, i−1]
 *   self       mean over queries i of A[i, i]
 *   first      mean over queries i ≥ 1 of A[i, 0] (the attention sink)
 *   duplicate  over queries i whose token occurred earlier (t[j] = t[i],
 *              j < i): the mean of Σ_{such j} A[i, j]
 *   induction  over queries i whose token occurred earlier at j < i − 1:
 *              the mean of Σ_{such j} A[i, j + 1]
 *   entropy    mean over queries of −Σ_j A[i, j]·log A[i, j] (nats; a
 *              weight ≤ 0 adds nothing: 0·log 0 = 0)
 *   distance   mean over queries of Σ_j A[i, j]·|i − j|
 *
 * A cell that is not finite (−inf: a masked cell in a file) is left out of
 * every sum. A score no query qualifies for is none: NaN (HEAD_SCORE_NONE),
 * never 0. Cross-attention (cross set, or Tq ≠ Tk): previous, self,
 * duplicate, induction and distance are none; first and entropy are
 * defined. ids NULL: every token distinct (duplicate and induction none). */
#ifndef ATTNVIZ_HEAD_SCORES_H
#define ATTNVIZ_HEAD_SCORES_H

#include <math.h>

typedef enum HeadScoreId {
    HEAD_SCORE_PREVIOUS = 0,
    HEAD_SCORE_SELF,
    HEAD_SCORE_FIRST,
    HEAD_SCORE_DUPLICATE,
    HEAD_SCORE_INDUCTION,
    HEAD_SCORE_ENTROPY,
    HEAD_SCORE_DISTANCE,
    HEAD_SCORE_COUNT
} HeadScoreId;

#define HEAD_SCORE_NONE ((double)NAN)

/* One head's scores; s[k] is NaN where the score is none. */
typedef struct HeadScores {
    double s[HEAD_SCORE_COUNT];
} HeadScores;

/* The scores of one head's map A (Tq rows of Tk floats, row stride Tk);
 * ids: Tq token ids (the queries' = the keys' in self-attention) or NULL. */
void head_scores(const float *A, int Tq, int Tk, const int *ids, int cross, HeadScores *out);

/* Every head of att (L × H × Tq × Tk, C order) into out[l·H + h]. */
void head_scores_all(const float *att, int L, int H, int Tq, int Tk, const int *ids, int cross,
                     HeadScores *out);

/* The score's column name: "previous", "self", "first", "duplicate",
 * "induction", "entropy", "distance"; NULL out of range. */
const char *head_score_name(HeadScoreId k);
/* The id of a column name, or -1. */
int head_score_from_name(const char *name);
/* 1 for the scores in [0, 1] (all but entropy and distance). */
int head_score_unit(HeadScoreId k);
/* 1 for the scores cross-attention has (first, entropy): the others are
 * none on it. */
int head_score_of_cross(HeadScoreId k);

#endif
