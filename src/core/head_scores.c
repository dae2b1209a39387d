/* The seven head scores of issue 26 on one head's weights, or on every head
 * of a tensor (see head_scores.h). Sums in double; nothing allocated. */
#include "attnviz/head_scores.h"

#include <stddef.h>
#include <string.h>

static const char *const NAMES[HEAD_SCORE_COUNT] = {
    "previous", "self", "first", "duplicate", "induction", "entropy", "distance",
};

const char *head_score_name(HeadScoreId k)
{
    return (int)k >= 0 && k < HEAD_SCORE_COUNT ? NAMES[k] : NULL;
}

int head_score_from_name(const char *name)
{
    for (int k = 0; name && k < HEAD_SCORE_COUNT; k++)
        if (strcmp(name, NAMES[k]) == 0)
            return k;
    return -1;
}

int head_score_unit(HeadScoreId k)
{
    return k != HEAD_SCORE_ENTROPY && k != HEAD_SCORE_DISTANCE;
}

int head_score_of_cross(HeadScoreId k)
{
    return k == HEAD_SCORE_FIRST || k == HEAD_SCORE_ENTROPY;
}

/* A cell's weight: a cell that is not finite (masked) counts as nothing. */
static inline double cell(const float *row, int j)
{
    float x = row[j];
    return isfinite(x) ? (double)x : 0.0;
}

static double mean_or_none(double sum, long n)
{
    return n > 0 ? sum / (double)n : HEAD_SCORE_NONE;
}

/* Duplicate and induction: the queries with an earlier copy of their token. */
static void repeats(const float *A, int T, const int *ids, double *dup, double *ind)
{
    double sd = 0, si = 0;
    long nd = 0, ni = 0;
    for (int i = 1; ids && i < T; i++) {
        const float *row = A + (size_t)i * T;
        double d = 0, u = 0;
        int any_d = 0, any_i = 0;
        for (int j = 0; j < i; j++)
            if (ids[j] == ids[i]) {
                d += cell(row, j);
                any_d = 1;
                if (j < i - 1) {
                    u += cell(row, j + 1);
                    any_i = 1;
                }
            }
        if (any_d)
            sd += d, nd++;
        if (any_i)
            si += u, ni++;
    }
    *dup = mean_or_none(sd, nd);
    *ind = mean_or_none(si, ni);
}

void head_scores(const float *A, int Tq, int Tk, const int *ids, int cross, HeadScores *out)
{
    for (int k = 0; k < HEAD_SCORE_COUNT; k++)
        out->s[k] = HEAD_SCORE_NONE;
    if (Tq <= 0 || Tk <= 0)
        return;
    cross = cross || Tq != Tk;
    double prev = 0, self = 0, first = 0, ent = 0, dist = 0;
    for (int i = 0; i < Tq; i++) {
        const float *row = A + (size_t)i * Tk;
        double h = 0, d = 0;
        for (int j = 0; j < Tk; j++) {
            double a = cell(row, j);
            if (a > 0)
                h -= a * log(a);
            d += a * (double)(i > j ? i - j : j - i);
        }
        ent += h;
        dist += d;
        if (i >= 1)
            first += cell(row, 0);
        if (!cross) {
            self += cell(row, i);
            if (i >= 1)
                prev += cell(row, i - 1);
        }
    }
    out->s[HEAD_SCORE_FIRST] = mean_or_none(first, Tq - 1);
    out->s[HEAD_SCORE_ENTROPY] = ent / Tq;
    if (cross)
        return;
    out->s[HEAD_SCORE_PREVIOUS] = mean_or_none(prev, Tq - 1);
    out->s[HEAD_SCORE_SELF] = self / Tq;
    out->s[HEAD_SCORE_DISTANCE] = dist / Tq;
    repeats(A, Tq, ids, &out->s[HEAD_SCORE_DUPLICATE], &out->s[HEAD_SCORE_INDUCTION]);
}

void head_scores_all(const float *att, int L, int H, int Tq, int Tk, const int *ids, int cross,
                     HeadScores *out)
{
    size_t one = (size_t)Tq * (size_t)Tk;
    for (int m = 0; m < L * H; m++)
        head_scores(att + (size_t)m * one, Tq, Tk, ids, cross, &out[m]);
}
