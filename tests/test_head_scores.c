/* Tests for the head scores (src/core/head_scores.c, and import.c's
 * import_head_scores on files and a GPT-2's maps): each score against a
 * naive double computation written here from the definitions, on
 * maps with known answers (a previous-token map, a uniform causal map with
 * its exact values, repeated tokens), one token, cross-attention's nones,
 * masked cells; files of several layouts, a dropped token, a file with
 * repeated tokens; a model's maps. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/attnfile.h"
#include "attnviz/model_source.h"
#include "attnviz/head_scores.h"
#include "attnviz/import.h"

enum { PREV, SELF, FIRST, DUP, IND, ENT, DIST };

/* The reference: each definition written out on its own, in double. NaN: none. */
static void naive(const float *Af, int Tq, int Tk, const int *t, int cross, double out[7])
{
    double *A = malloc(sizeof *A * (size_t)Tq * Tk);
    for (int e = 0; e < Tq * Tk; e++)
        A[e] = isfinite(Af[e]) ? (double)Af[e] : 0.0; /* a masked cell adds nothing */
#define AT(i, j) A[(size_t)(i) * Tk + (j)]
    cross = cross || Tq != Tk;
    for (int k = 0; k < 7; k++)
        out[k] = NAN;
    /* first: queries i >= 1 */
    if (Tq > 1) {
        double s = 0;
        for (int i = 1; i < Tq; i++)
            s += AT(i, 0);
        out[FIRST] = s / (Tq - 1);
    }
    /* entropy: every query */
    double e = 0;
    for (int i = 0; i < Tq; i++)
        for (int j = 0; j < Tk; j++)
            if (AT(i, j) > 0)
                e += -AT(i, j) * log(AT(i, j));
    out[ENT] = e / Tq;
    if (!cross) {
        int T = Tq;
        double p = 0, s = 0, d = 0;
        for (int i = 0; i < T; i++) {
            s += AT(i, i);
            if (i >= 1)
                p += AT(i, i - 1);
            for (int j = 0; j < T; j++)
                d += AT(i, j) * abs(i - j);
        }
        if (T > 1)
            out[PREV] = p / (T - 1);
        out[SELF] = s / T;
        out[DIST] = d / T;
        /* duplicate and induction: first which queries qualify, then their sums */
        double sd = 0, si = 0;
        int nd = 0, ni = 0;
        for (int i = 0; t && i < T; i++) {
            int qd = 0, qi = 0;
            for (int j = 0; j < i; j++) {
                qd |= t[j] == t[i];
                qi |= t[j] == t[i] && j < i - 1;
            }
            if (qd) {
                nd++;
                for (int j = 0; j < i; j++)
                    if (t[j] == t[i])
                        sd += AT(i, j);
            }
            if (qi) {
                ni++;
                for (int j = 0; j < i - 1; j++)
                    if (t[j] == t[i])
                        si += AT(i, j + 1);
            }
        }
        if (nd)
            out[DUP] = sd / nd;
        if (ni)
            out[IND] = si / ni;
    }
#undef AT
    free(A);
}

static void expect(const HeadScores *got, const double want[7], double tol)
{
    for (int k = 0; k < 7; k++) {
        if (isnan(want[k])) {
            if (!isnan(got->s[k]))
                fail_msg("%s: %g, want none", head_score_name((HeadScoreId)k), got->s[k]);
        } else if (!(fabs(got->s[k] - want[k]) <= tol * (1 + fabs(want[k])))) {
            fail_msg("%s: %.10g, want %.10g", head_score_name((HeadScoreId)k), got->s[k], want[k]);
        }
    }
}

static void check_naive(const float *A, int Tq, int Tk, const int *t, int cross)
{
    double want[7];
    HeadScores got;
    naive(A, Tq, Tk, t, cross, want);
    head_scores(A, Tq, Tk, t, cross, &got);
    expect(&got, want, 1e-9);
}

static void test_names(void **state)
{
    (void)state;
    const char *names[] = {"previous", "self", "first", "duplicate", "induction", "entropy", "distance"};
    for (int k = 0; k < HEAD_SCORE_COUNT; k++) {
        assert_string_equal(head_score_name((HeadScoreId)k), names[k]);
        assert_int_equal(head_score_from_name(names[k]), k);
    }
    assert_int_equal(head_score_from_name("Induction"), -1);
    assert_int_equal(head_score_from_name(""), -1);
    assert_null(head_score_name(HEAD_SCORE_COUNT));
    assert_true(head_score_unit(HEAD_SCORE_INDUCTION) && !head_score_unit(HEAD_SCORE_ENTROPY) &&
                !head_score_unit(HEAD_SCORE_DISTANCE));
}

/* Every query on the token before it (the first on itself). */
static void test_previous_map(void **state)
{
    (void)state;
    enum { T = 6 };
    float A[T * T] = {0};
    A[0] = 1;
    for (int i = 1; i < T; i++)
        A[i * T + i - 1] = 1;
    HeadScores s;
    head_scores(A, T, T, NULL, 0, &s);
    double want[7] = {1, 1.0 / T, 1.0 / (T - 1), NAN, NAN, 0, (T - 1.0) / T};
    expect(&s, want, 1e-12);
    check_naive(A, T, T, NULL, 0);
}

/* A[i, j] = 1/(i + 1) for j <= i: previous = self = mean 1/(i+1) (over i >= 1
 * for previous), entropy of row i = log(i + 1), distance of row i = i/2. */
static void test_uniform_causal(void **state)
{
    (void)state;
    enum { T = 5 };
    float A[T * T] = {0};
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++)
            A[i * T + j] = 1.0f / (float)(i + 1);
    HeadScores s;
    head_scores(A, T, T, NULL, 0, &s);
    /* previous and first: (1/2 + 1/3 + 1/4 + 1/5) / 4; self: (1 + that·4) / 5 */
    double p = (1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 4;
    double self = (1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5) / 5;
    double ent = (log(1) + log(2) + log(3) + log(4) + log(5)) / 5;
    double dist = (0 + 0.5 + 1 + 1.5 + 2) / 5;
    double want[7] = {p, self, p, NAN, NAN, ent, dist};
    expect(&s, want, 1e-6);
    /* tokens a b c a b: duplicate queries 3 (a at 0) and 4 (b at 1): (1/4 + 1/5) / 2;
     * induction: 3 (a at 0 < 2: A[3, 1]) and 4 (b at 1 < 3: A[4, 2]): the same */
    int ids[T] = {7, 8, 9, 7, 8};
    head_scores(A, T, T, ids, 0, &s);
    want[DUP] = want[IND] = (0.25 + 0.2) / 2;
    expect(&s, want, 1e-6);
    check_naive(A, T, T, ids, 0);
}

/* An induction head on a b c a b c: each repeated query on the token after
 * its earlier copy scores 1; a duplicate-token head scores 1 on its own. */
static void test_repeats(void **state)
{
    (void)state;
    enum { T = 6 };
    int ids[T] = {1, 2, 3, 1, 2, 3};
    float ind[T * T] = {0}, dup[T * T] = {0};
    for (int i = 0; i < T; i++) {
        ind[i * T + (i >= 3 ? i - 2 : 0)] = 1; /* a(3) → b(1), b(4) → c(2), c(5) → a(3) */
        dup[i * T + (i >= 3 ? i - 3 : i)] = 1;
    }
    HeadScores s;
    head_scores(ind, T, T, ids, 0, &s);
    assert_true(fabs(s.s[HEAD_SCORE_INDUCTION] - 1) < 1e-12);
    assert_true(fabs(s.s[HEAD_SCORE_DUPLICATE]) < 1e-12);
    check_naive(ind, T, T, ids, 0);
    head_scores(dup, T, T, ids, 0, &s);
    assert_true(fabs(s.s[HEAD_SCORE_DUPLICATE] - 1) < 1e-12);
    assert_true(fabs(s.s[HEAD_SCORE_INDUCTION]) < 1e-12);
    check_naive(dup, T, T, ids, 0);
    /* a token repeated only right after itself (a a): duplicate, no induction query */
    int twice[2] = {5, 5};
    float A2[4] = {1, 0, 0.25f, 0.75f};
    head_scores(A2, 2, 2, twice, 0, &s);
    assert_true(fabs(s.s[HEAD_SCORE_DUPLICATE] - 0.25) < 1e-12);
    assert_true(isnan(s.s[HEAD_SCORE_INDUCTION]));
}

static void test_one_token(void **state)
{
    (void)state;
    float A[1] = {1};
    int id = 3;
    HeadScores s;
    head_scores(A, 1, 1, &id, 0, &s);
    double want[7] = {NAN, 1, NAN, NAN, NAN, 0, 0};
    expect(&s, want, 0);
}

/* Queries and keys from different texts: only first and entropy. */
static void test_cross(void **state)
{
    (void)state;
    float A[2 * 3] = {0.5f, 0.25f, 0.25f, 0.125f, 0.375f, 0.5f};
    HeadScores s;
    head_scores(A, 2, 3, NULL, 0, &s);
    double h0 = -(0.5 * log(0.5) + 2 * 0.25 * log(0.25));
    double h1 = -(0.125 * log(0.125) + 0.375 * log(0.375) + 0.5 * log(0.5));
    double want[7] = {NAN, NAN, 0.125, NAN, NAN, (h0 + h1) / 2, NAN};
    expect(&s, want, 1e-9);
    /* square but cross: the same nones */
    float B[4] = {0.5f, 0.5f, 0.25f, 0.75f};
    int ids[2] = {1, 1};
    head_scores(B, 2, 2, ids, 1, &s);
    assert_true(isnan(s.s[HEAD_SCORE_PREVIOUS]) && isnan(s.s[HEAD_SCORE_SELF]) &&
                isnan(s.s[HEAD_SCORE_DUPLICATE]) && isnan(s.s[HEAD_SCORE_INDUCTION]) &&
                isnan(s.s[HEAD_SCORE_DISTANCE]));
    assert_true(fabs(s.s[HEAD_SCORE_FIRST] - 0.25) < 1e-12);
    check_naive(B, 2, 2, ids, 1);
    /* head_score_of_cross: exactly the scores a cross map is not none of
     * (what the model view offers there) */
    for (int k = 0; k < HEAD_SCORE_COUNT; k++)
        assert_int_equal(head_score_of_cross((HeadScoreId)k), !isnan(s.s[k]));
}

/* −inf cells (masked) count as nothing; random maps against the reference,
 * one head and every head at once. */
static void test_masked_and_random(void **state)
{
    (void)state;
    enum { L = 2, H = 3, T = 9 };
    float *att = malloc(sizeof *att * L * H * T * T);
    int ids[T] = {4, 1, 4, 2, 1, 4, 3, 2, 4};
    uint32_t x = 12345;
    for (int m = 0; m < L * H; m++)
        for (int i = 0; i < T; i++) {
            float *row = att + ((size_t)m * T + i) * T;
            double sum = 0;
            for (int j = 0; j < T; j++) {
                x = x * 1664525u + 1013904223u;
                row[j] = j <= i ? (float)((x >> 8) & 0xFFFF) + 1.0f : 0.0f;
                sum += row[j];
            }
            for (int j = 0; j < T; j++)
                row[j] = m % 2 && j > i ? -INFINITY : (float)(row[j] / sum);
        }
    HeadScores all[L * H];
    head_scores_all(att, L, H, T, T, ids, 0, all);
    for (int m = 0; m < L * H; m++) {
        double want[7];
        naive(att + (size_t)m * T * T, T, T, ids, 0, want);
        expect(&all[m], want, 1e-9);
        for (int k = 0; k < 7; k++)
            assert_false(isnan(want[k]));
    }
    /* the masked heads score as the zeroed ones do */
    for (int k = 0; k < 7; k++)
        assert_true(isfinite(all[1].s[k]));
    free(att);
}

/* import_head_scores against the reference on every head of a file, its
 * tokens' identities by stored string. */
static void check_file(const char *path, const char *drop)
{
    Imported im;
    AttnErr err = {0};
    if (import_open(&im, path, NULL, NULL, &err) < 0)
        fail_msg("%s: %s", path, err.msg);
    assert_int_equal(import_pick(&im, 0, 0, 0, drop, &err), 0);
    const AttnFile *f = &im.f;
    HeadScores *got = malloc(sizeof *got * (size_t)f->L * f->H);
    assert_int_equal(import_head_scores(&im, got, &err), 0);
    float *map = malloc(sizeof *map * (size_t)f->Tq * f->Tk);
    int *ids = malloc(sizeof *ids * (size_t)f->Tq);
    for (int l = 0; l < f->L; l++)
        for (int h = 0; h < f->H; h++) {
            assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD, l, h, map), 0);
            /* the kept tokens, rows renormalised (by hand, in double) */
            int Tq = 0, Tk = 0;
            float *kept = malloc(sizeof *kept * (size_t)f->Tq * f->Tk);
            for (int i = 0; i < f->Tq; i++) {
                if (drop && im.q_drop[i])
                    continue;
                double sum = 0;
                Tk = 0;
                for (int j = 0; j < f->Tk; j++)
                    if (!(drop && im.k_drop[j]))
                        sum += map[(size_t)i * f->Tk + j], Tk++;
                int c = 0;
                for (int j = 0; j < f->Tk; j++)
                    if (!(drop && im.k_drop[j]))
                        kept[Tq * Tk + c++] = drop ? (float)(map[(size_t)i * f->Tk + j] / sum)
                                                   : map[(size_t)i * f->Tk + j];
                ids[Tq++] = i;
            }
            for (int a = 0; f->q_tokens && a < Tq; a++) /* the first equal stored string */
                for (int b = 0; b < a; b++)
                    if (strcmp(f->q_tokens[ids[b]], f->q_tokens[ids[a]]) == 0) {
                        ids[a] = ids[b];
                        break;
                    }
            double want[7];
            naive(kept, Tq, Tk, f->q_tokens ? ids : NULL, f->cross, want);
            expect(&got[(size_t)l * f->H + h], want, 1e-5);
            free(kept);
        }
    free(map), free(ids), free(got);
    import_close(&im);
}

static void test_files(void **state)
{
    (void)state;
    const char *files[] = {
        "tests/fixtures/attention/json_lhtt.json",       "tests/fixtures/attention/json_tt.json",
        "tests/fixtures/attention/json_notokens.json",   "tests/fixtures/attention/st_bf16_lhtt.safetensors",
        "tests/fixtures/attention/st_f16_htt.safetensors", "tests/fixtures/attention/fortran.npy",
        "tests/fixtures/attention/f32_be.npy",           "tests/fixtures/attention/layers.npz",
        "tests/fixtures/attention/cross_tokens.npz",     "tests/fixtures/attention/torch_layers.npz",
    };
    for (size_t k = 0; k < sizeof files / sizeof *files; k++)
        check_file(files[k], NULL);
    check_file("tests/fixtures/attention/json_lhtt.json", "<s>");
}

/* A file with repeated tokens: "The" and "ĠThe" differ, "a" and "a" do not;
 * dropping the first token counts positions on what remains. */
static void test_file_repeats(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/attnviz-hs-%ld.json", (long)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"tokens\": [\"<s>\", \"a\", \"The\", \"a\", \"\\u0120The\", \"The\"],\n"
          " \"attention\": [[1,0,0,0,0,0], [0.5,0.5,0,0,0,0], [0.25,0.25,0.5,0,0,0],"
          " [0.1,0.2,0.3,0.4,0,0], [0.2,0.2,0.2,0.2,0.2,0], [0.1,0.1,0.1,0.5,0.1,0.1]]}\n", f);
    fclose(f);
    check_file(path, NULL);
    check_file(path, "<s>");
    Imported im;
    AttnErr err = {0};
    assert_int_equal(import_open(&im, path, NULL, NULL, &err), 0);
    assert_int_equal(import_pick(&im, 0, 0, 0, NULL, &err), 0);
    HeadScores s;
    assert_int_equal(import_head_scores(&im, &s, &err), 0);
    /* duplicate: query 3 (a at 1): 0.2; query 5 (The at 2): 0.1 → 0.15;
     * induction: query 3 (a at 1 < 2: A[3, 2] = 0.3), query 5 (The at 2 < 4: A[5, 3] = 0.5) → 0.4 */
    assert_true(fabs(s.s[HEAD_SCORE_DUPLICATE] - 0.15) < 1e-6);
    assert_true(fabs(s.s[HEAD_SCORE_INDUCTION] - 0.4) < 1e-6);
    import_close(&im);
    unlink(path);
}

/* A GPT-2's maps: tokens the same when their ids are. */
static void test_model(void **state)
{
    (void)state;
    ModelOpened *g;
    AttnErr err = {0};
    if (model_open_path("tests/fixtures/gpt2/f32-h3", 0, &g, &err) < 0)
        fail_msg("%s", err.msg);
    const char *text = "ABCABCAB";
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    g->im->ids = g->ids.id;
    const AttnFile *f = &g->im->f;
    int T = g->ids.n;
    assert_int_equal(T, 8);
    HeadScores *got = malloc(sizeof *got * (size_t)f->L * f->H);
    assert_int_equal(import_head_scores(g->im, got, &err), 0);
    float *map = malloc(sizeof *map * (size_t)T * T);
    for (int l = 0; l < f->L; l++)
        for (int h = 0; h < f->H; h++) {
            double want[7];
            assert_int_equal(attn_file_map(f, ATTN_PICK_HEAD, l, h, map), 0);
            naive(map, T, T, g->ids.id, 0, want);
            for (int k = 0; k < 7; k++)
                assert_false(isnan(want[k]));
            expect(&got[(size_t)l * f->H + h], want, 1e-9);
        }
    free(map), free(got);
    model_opened_free(g);
}

int main(void)
{
    setenv("ATTNVIZ_DATADIR", "assets", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_previous_map),
        cmocka_unit_test(test_uniform_causal),
        cmocka_unit_test(test_repeats),
        cmocka_unit_test(test_one_token),
        cmocka_unit_test(test_cross),
        cmocka_unit_test(test_masked_and_random),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_file_repeats),
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
