/* Every model family's fixtures (tests/fixtures/families/<family>/<folder>/,
 * written by that family's make_<family>.py with a float64 transcription of
 * its transformers modeling file) opened through the one adapter (lm.h) as
 * the program opens a folder, and run on the reference's ids:
 *   - every map within 1e-5 of the reference, and its masked cells (causal
 *     or outside a sliding window: the reference's exact zeros) exactly 0;
 *   - every position's next-token probabilities within 2e-6;
 *   - typing: the text grown a token at a time and a token changed in the
 *     middle give a fresh full forward's maps and logits bit for bit;
 *   - the sizes ref.json names (layers, heads, key-value heads, head size).
 * A family is found by its folder: adding one needs no line here. Run from
 * the repository root. */
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
#include "attnviz/model_file.h"

#include "test_gpt2_fs.h"
#include "test_fixtures.h"


static int json_int(const cJSON *o, const char *key, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valueint : dflt;
}

static void open_lm(Lm *lm, const char *dir)
{
    AttnErr err = {0};
    memset(lm, 0, sizeof *lm);
    if (lm_open(lm, dir, &err) != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
}

/* Position pos's next-token probabilities, in double. */
static void probs_of(Lm *lm, int pos, double *p, float *lg)
{
    AttnErr err = {0};
    int V = lm->info.n_vocab;
    assert_int_equal(rt_logits(lm->rt, lm->model->weights, pos, lg, &err), 0);
    double mx = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++)
        mx = lg[v] > mx ? lg[v] : mx;
    for (int v = 0; v < V; v++)
        sum += (p[v] = exp((double)lg[v] - mx));
    for (int v = 0; v < V; v++)
        p[v] /= sum;
}

/* a's and b's last forwards hold the same floats: maps and logits. */
static void assert_same(Lm *a, Lm *b, const char *what)
{
    int T = a->rt->T, L = a->info.n_layer, H = a->info.n_head, V = a->info.n_vocab;
    assert_int_equal(T, b->rt->T);
    float *ma = malloc(sizeof(float) * T * T), *mb = malloc(sizeof(float) * T * T);
    float *la = malloc(sizeof(float) * V), *lb = malloc(sizeof(float) * V);
    AttnErr err = {0};
    assert_true(ma && mb && la && lb);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            rt_map(a->rt, l, h, ma, (size_t)T);
            rt_map(b->rt, l, h, mb, (size_t)T);
            if (memcmp(ma, mb, sizeof(float) * T * T))
                fail_msg("%s: layer %d head %d differs from a full forward", what, l + 1, h + 1);
        }
    for (int i = 0; i < T; i++) {
        assert_int_equal(rt_logits(a->rt, a->model->weights, i, la, &err), 0);
        assert_int_equal(rt_logits(b->rt, b->model->weights, i, lb, &err), 0);
        if (memcmp(la, lb, sizeof(float) * V))
            fail_msg("%s: the logits of position %d differ from a full forward", what, i);
    }
    free(ma), free(mb), free(la), free(lb);
}

static void check_folder(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/ref.json", dir);
    cJSON *ref = read_json(path);
    const cJSON *jids = cJSON_GetObjectItemCaseSensitive(ref, "ids");
    int T = cJSON_GetArraySize(jids);
    int *ids = malloc(sizeof(int) * (size_t)T);
    assert_non_null(ids);
    for (int i = 0; i < T; i++)
        ids[i] = cJSON_GetArrayItem(jids, i)->valueint;

    Lm lm;
    open_lm(&lm, dir);
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(ref, "arch");
    if (cJSON_IsString(arch) && strcmp(arch->valuestring, lm.info.arch))
        fail_msg("%s: opened as %s, ref.json says %s", dir, lm.info.arch, arch->valuestring);
    int L = lm.info.n_layer, H = lm.info.n_head, V = lm.info.n_vocab;
    assert_int_equal(L, json_int(ref, "n_layer", -1));
    assert_int_equal(H, json_int(ref, "n_head", -1));
    assert_int_equal(V, json_int(ref, "vocab_size", -1));
    assert_int_equal(lm.info.n_kv_head, json_int(ref, "n_kv_head", lm.info.n_kv_head));
    assert_int_equal(lm.info.d_head, json_int(ref, "head_dim", lm.info.d_head));

    AttnErr err = {0};
    if (lm_forward(&lm, ids, T, NULL, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    AttnFile maps, probs;
    fixture_open_npy(&maps, dir, "maps.npy");
    fixture_open_npy(&probs, dir, "probs.npy");
    assert_int_equal(maps.L, L);
    assert_int_equal(maps.H, H);
    assert_int_equal(maps.Tq, T);
    assert_int_equal(probs.Tk, V);
    float *m = malloc(sizeof(float) * T * T), *lg = malloc(sizeof(float) * V);
    double *p = malloc(sizeof(double) * V);
    assert_true(m && lg && p);
    double worst = 0, worst_p = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            rt_map(lm.rt, l, h, m, (size_t)T);
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double got = m[i * T + j], w = attn_file_at(&maps, l, h, i, j);
                    if (w == 0.0 && got != 0.0)
                        fail_msg("%s: layer %d head %d [%d, %d] is %g where the reference masks "
                                 "it (exactly 0)", dir, l + 1, h + 1, i, j, got);
                    worst = fabs(got - w) > worst ? fabs(got - w) : worst;
                }
        }
    for (int i = 0; i < T; i++) {
        probs_of(&lm, i, p, lg);
        for (int v = 0; v < V; v++) {
            double d = fabs(p[v] - attn_file_at(&probs, 0, 0, i, v));
            worst_p = d > worst_p ? d : worst_p;
        }
    }
    if (worst > 1e-5 || worst_p > 2e-6)
        fail_msg("%s: maps off by %.3g (1e-5 allowed), probabilities by %.3g (2e-6 allowed)", dir,
                 worst, worst_p);

    /* typing: a token at a time, then one changed in the middle */
    Lm typed, full;
    open_lm(&typed, dir);
    open_lm(&full, dir);
    for (int t = 1; t <= T; t++)
        assert_int_equal(lm_forward(&typed, ids, t, NULL, &err), 0);
    assert_int_equal(lm_forward(&full, ids, T, NULL, &err), 0);
    assert_same(&typed, &full, dir);
    ids[T / 2] = (ids[T / 2] + 1) % V;
    assert_int_equal(lm_forward(&typed, ids, T, NULL, &err), 0);
    lm_close(&full);
    open_lm(&full, dir);
    assert_int_equal(lm_forward(&full, ids, T, NULL, &err), 0);
    assert_same(&typed, &full, dir);
    printf("  %s: maps within %.2g, probabilities within %.2g; typing = full\n", dir, worst,
           worst_p);

    lm_close(&typed);
    lm_close(&full);
    lm_close(&lm);
    attn_file_close(&maps);
    attn_file_close(&probs);
    free(m), free(lg), free(p), free(ids);
    cJSON_Delete(ref);
}

static void family_folder(const char *dir, void *user)
{
    (void)user;
    check_folder(dir);
}

/* Every folder with a ref.json under tests/fixtures/families/<family>, in name order. */
static void test_every_family(void **state)
{
    (void)state;
    int n = fixture_each("ref.json", 1, family_folder, NULL, NULL);
    printf("  %d folders\n", n);
    assert_true(n >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
