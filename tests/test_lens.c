/* The logit lens (issue 37, lm.h's lm_logit_lens, runtime.h's rt_lens)
 * against the float64 reference the fixture scripts write (lens.npy:
 * (L + 1) × T × V, each layer's residual stream through the final norm,
 * output layer and soft cap, softmaxed), for every fixture folder that has
 * one: the GPT-2s, the Llama family and every family of
 * tests/fixtures/families. At every position, every layer:
 *   - each of the top 5 probabilities within 2e-6 of the reference's at that
 *     id, and the ids the reference's top 5 (each rank's reference
 *     probability within 2e-6 of the reference's rank r: ties may swap);
 *   - layer L exactly lm_top_k's after a forward (what --print predictions
 *     prints).
 * The positions are asked one after another on the same state, so a lens
 * that reused the unchanged prefix (and copied nothing) fails. Then the
 * CLI's --print logit-lens (its CSV against the adapter), and its bad
 * input. Run from the repository root. */
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

#include <cjson/cJSON.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/lm.h"

#include "test_gpt2_fs.h"
#include "test_fixtures.h"

#define K 5
#define TOL 2e-6

static int desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The reference lens of layer l, position i (lens.npy read as H × Tq × Tk:
 * layers as heads), sorted most likely first into sorted. */
static void ref_row(const AttnFile *f, int l, int i, double *row, double *sorted, int V)
{
    for (int v = 0; v < V; v++)
        row[v] = sorted[v] = attn_file_at(f, 0, l, i, v);
    qsort(sorted, (size_t)V, sizeof *sorted, desc);
}

/* One folder: every position's lens; the worst difference into *worst. */
static void check_folder(const char *dir, double *worst)
{
    char path[700];
    AttnErr err = {0};
    int T;
    int *ids = fixture_ref_ids(dir, &T);
    Lm lm;
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    int L1 = lm.info.n_layer + 1, V = lm.info.n_vocab, k = V < K ? V : K;
    AttnFile ref;
    snprintf(path, sizeof path, "%s/lens.npy", dir);
    if (attn_file_open(&ref, path, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
    if (ref.H != L1 || ref.Tq != T || ref.Tk != V)
        fail_msg("%s: %d x %d x %d, the model %d x %d x %d", path, ref.H, ref.Tq, ref.Tk, L1, T, V);
    int *top = malloc(sizeof(int) * (size_t)(L1 * k)), last_ids[K];
    float *probs = malloc(sizeof(float) * (size_t)(L1 * k)), last_p[K];
    double *row = malloc(sizeof(double) * (size_t)V), *sorted = malloc(sizeof(double) * (size_t)V);
    assert_true(top && probs && row && sorted);
    for (int i = 0; i < T; i++) {
        if (lm_logit_lens(&lm, ids, T, i, k, top, probs, &err) != 0)
            fail_msg("%s: position %d: %s", dir, i, err.msg);
        for (int l = 0; l < L1; l++) {
            ref_row(&ref, l, i, row, sorted, V);
            for (int r = 0; r < k; r++) {
                int id = top[l * k + r];
                assert_true(id >= 0 && id < V);
                double d = fabs(probs[l * k + r] - row[id]);
                double rank = fabs(row[id] - sorted[r]);
                *worst = d > *worst ? d : *worst;
                if (d > TOL || rank > TOL)
                    fail_msg("%s: position %d, layer %d, rank %d: id %d, %.9g (the reference "
                             "%.9g there, its rank-%d %.9g)", dir, i, l, r + 1, id,
                             (double)probs[l * k + r], row[id], r + 1, sorted[r]);
            }
        }
        /* the last layer is what the predictions show, bit for bit */
        assert_int_equal(lm_top_k(&lm, i, k, last_ids, last_p, &err), 0);
        for (int r = 0; r < k; r++) {
            assert_int_equal(last_ids[r], top[(L1 - 1) * k + r]);
            assert_true(last_p[r] == probs[(L1 - 1) * k + r]);
        }
    }
    /* a position past the text */
    assert_int_equal(lm_logit_lens(&lm, ids, T, T, k, top, probs, &err), -ATTN_E_RANGE);
    attn_file_close(&ref);
    lm_close(&lm);
    free(top), free(probs), free(row), free(sorted), free(ids);
}

static void lens_folder(const char *dir, void *user)
{
    (void)user;
    double worst = 0;
    check_folder(dir, &worst);
    printf("  %s: the lens within %.2g\n", dir, worst);
}

static void test_every_fixture(void **state)
{
    (void)state;
    int fams, n = fixture_each("lens.npy", 0, lens_folder, NULL, &fams);
    /* every root has its fixtures (a script that stopped writing lens.npy fails) */
    assert_int_equal(fams, fixture_roots());
    assert_true(n >= 30);
}

/* --print logit-lens of the program: the CSV's rows are the adapter's. */
static void test_cli(void **state)
{
    (void)state;
    const char *bin = getenv("ATTNVIZ_BIN") ? getenv("ATTNVIZ_BIN") : "build/attnviz";
    const char *dir = "tests/fixtures/gpt2/f32-h3";
    char cmd[1200], line[400];
    AttnErr err = {0};
    Lm lm;
    assert_int_equal(lm_open(&lm, dir, &err), 0);
    /* the text: three byte tokens that no merge joins: ids 0, 2, 3 */
    snprintf(cmd, sizeof cmd, "%s --model %s --print logit-lens --query 2 '!#$' 2>&1", bin, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int ids[3] = {0, 2, 3}, L1 = lm.info.n_layer + 1, top[64 * K], rows = 0;
    float probs[64 * K];
    assert_true(L1 <= 64);
    assert_int_equal(lm_logit_lens(&lm, ids, 3, 1, K, top, probs, &err), 0);
    assert_non_null(fgets(line, sizeof line, p));
    assert_string_equal(line, "layer,rank,id,token,prob\n");
    while (fgets(line, sizeof line, p)) {
        int l, r, id, at = 0;
        char want[64];
        if (sscanf(line, "%d,%d,%d,%n", &l, &r, &id, &at) != 3 || line[at] != '"')
            fail_msg("not a row: %s", line);
        const char *q = line + at + 1; /* the token's JSON string: to its closing quote */
        while (*q && *q != '"')
            q += *q == '\\' && q[1] ? 2 : 1;
        assert_int_equal(q[0], '"');
        assert_int_equal(q[1], ',');
        double pr = strtod(q + 2, NULL);
        assert_int_equal(l, rows / K);
        assert_int_equal(r, rows % K + 1);
        assert_int_equal(id, top[rows]);
        snprintf(want, sizeof want, "%.6g", (double)probs[rows]);
        assert_true(fabs(pr - strtod(want, NULL)) == 0);
        rows++;
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(rows, L1 * K);
    lm_close(&lm);

    /* past the text: exit 1 naming the number; without --model: usage, exit 2 */
    snprintf(cmd, sizeof cmd, "%s --model %s --print logit-lens --query 4 '!#$' 2>&1", bin, dir);
    p = popen(cmd, "r");
    assert_non_null(p);
    int named = 0;
    while (fgets(line, sizeof line, p))
        named |= strstr(line, "--query 4") != NULL && strstr(line, "3 tokens") != NULL;
    int st = pclose(p);
    assert_true(named);
    assert_int_equal(WEXITSTATUS(st), 1);
    snprintf(cmd, sizeof cmd, "%s --print logit-lens 'a b' >/dev/null 2>&1", bin);
    st = system(cmd);
    assert_int_equal(WEXITSTATUS(st), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
