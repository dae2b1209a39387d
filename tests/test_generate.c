/* Generation (issue 37, item 1): core/generate.c's choice by hand (ties,
 * ranking, the draw), a greedy step from every prefix of each GPT-2
 * fixture's reference ids equal to the argmax of the float64 reference's
 * probabilities, longer greedy and sampled continuations replayed step by
 * step against the rule on a full recompute's logits (a second model, no
 * prefix reused), the same tokens for the same seed, and the stop at the
 * eos token. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/generate.h"
#include "attnviz/io.h"
#include "attnviz/model_source.h"

#define FIX "tests/fixtures/gpt2"

static const char *const folders[] = {"f32-h3", "f32-bare-h4", "f16-h5", "bf16-h6",
                                      "f32-h1-noscale", "f32-h2-erf", "f32-h2-relu"};

/* ---- the choice by hand ------------------------------------------------------------ */

static void test_greedy_ties(void **state)
{
    (void)state;
    float logits[6] = {0.5f, 2.0f, -1.0f, 2.0f, 1.9f, 2.0f};
    int order[6];
    double p[6];
    GenSettings greedy = {0, 1.0, 0};
    assert_int_equal(gen_pick(logits, 6, &greedy, NULL, order, p), 1); /* 1, 3, 5 tie: the lowest */
    gen_rank(logits, 6, 6, order);
    int want[6] = {1, 3, 5, 4, 0, 2};
    for (int i = 0; i < 6; i++)
        assert_int_equal(order[i], want[i]);
    gen_rank(logits, 6, 2, order); /* the first k only, in the same order */
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 3);
}

/* The draw: (splitmix64 >> 11) · 2^-53 of the seed's generator. */
static void test_uniform(void **state)
{
    (void)state;
    Prng a, b;
    prng_seed(&a, 42);
    prng_seed(&b, 42);
    for (int i = 0; i < 100; i++) {
        double u = gen_uniform(&a);
        assert_true(u == ldexp((double)(prng_next(&b) >> 11), -53));
        assert_true(u >= 0.0 && u < 1.0);
    }
}

/* Top-k 2 of three at tau 1: p = (e^1, e^0) / (e^1 + 1), the first chosen
 * when u < its probability, the second otherwise. */
static void test_sample_by_hand(void **state)
{
    (void)state;
    float logits[3] = {0.0f, 1.0f, -5.0f};
    int order[3];
    double p[3];
    GenSettings s = {1, 1.0, 2};
    double p1 = exp(1.0) / (exp(1.0) + 1.0);
    int seen[3] = {0};
    for (uint64_t seed = 0; seed < 200; seed++) {
        Prng r, u;
        prng_seed(&r, seed);
        prng_seed(&u, seed);
        int id = gen_pick(logits, 3, &s, &r, order, p);
        assert_int_equal(id, gen_uniform(&u) < p1 ? 1 : 0);
        assert_true(fabs(p[0] - p1) < 1e-15);
        seen[id]++;
    }
    assert_int_equal(seen[2], 0); /* outside the top 2: never */
    assert_true(seen[0] > 0 && seen[1] > seen[0]);
}

/* ---- on the fixtures -------------------------------------------------------------- */

/* ref.json's "ids" into ids; how many. */
static int ref_ids(const char *dir, int *ids, int max)
{
    char path[512];
    char *data;
    size_t n;
    AttnErr err = {0};
    snprintf(path, sizeof path, "%s/ref.json", dir);
    assert_int_equal(io_read_file(path, 1 << 20, &data, &n, &err), 0);
    cJSON *root = cJSON_ParseWithLength(data, n);
    assert_non_null(root);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "ids"), *it;
    int T = 0;
    cJSON_ArrayForEach(it, list)
    {
        assert_true(T < max);
        ids[T++] = it->valueint;
    }
    cJSON_Delete(root);
    free(data);
    return T;
}

static ModelOpened *open_model(const char *dir)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    int rc = model_open_path(dir, 0, &g, &err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", dir, err.msg);
    assert_int_equal(rc, 0);
    return g;
}

/* g's tokens = ids[0..n), all given. */
static void set_ids(ModelOpened *g, const int *ids, int n)
{
    if (g->ids.cap < n + 64) {
        g->ids.id = realloc(g->ids.id, sizeof *g->ids.id * (size_t)(n + 64));
        assert_non_null(g->ids.id);
        g->ids.cap = n + 64;
    }
    memcpy(g->ids.id, ids, sizeof *ids * (size_t)n);
    g->ids.n = g->n_given = n;
}

/* From every prefix ids[0..k) of the reference's ids, one greedy step
 * gives the argmax of the reference's probabilities at k - 1 (where its
 * best two are apart by more than float32's rounding of them). */
static void test_greedy_reference(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++) {
        char dir[256], path[300];
        snprintf(dir, sizeof dir, "%s/%s", FIX, folders[f]);
        int ids[64], T = ref_ids(dir, ids, 64);
        AttnFile probs;
        AttnErr err = {0};
        snprintf(path, sizeof path, "%s/probs.npy", dir);
        assert_int_equal(attn_file_open(&probs, path, &err), 0);
        ModelOpened *g = open_model(dir);
        int V = g->lm.info.n_vocab;
        assert_int_equal(probs.Tk, V);
        GenSettings greedy = {0, 1.0, 0};
        for (int k = 1; k < T && k < g->lm.info.n_positions; k++) {
            int best = 0, second = -1;
            for (int v = 1; v < V; v++) {
                float pv = attn_file_at(&probs, 0, 0, k - 1, v);
                if (pv > attn_file_at(&probs, 0, 0, k - 1, best)) {
                    second = best;
                    best = v;
                } else if (second < 0 || pv > attn_file_at(&probs, 0, 0, k - 1, second)) {
                    second = v;
                }
            }
            if (attn_file_at(&probs, 0, 0, k - 1, best) - attn_file_at(&probs, 0, 0, k - 1, second) < 1e-6f)
                continue;
            set_ids(g, ids, k);
            assert_int_equal(model_generate(g, 1, &greedy, NULL, &err), 0);
            assert_int_equal(g->ids.n, k + 1);
            if (g->ids.id[k] != best)
                fprintf(stderr, "%s: after %d tokens: %d, the reference's argmax %d\n", folders[f], k,
                        g->ids.id[k], best);
            assert_int_equal(g->ids.id[k], best);
            checked++;
        }
        attn_file_close(&probs);
        model_opened_free(g);
    }
    printf("greedy steps equal to the float64 reference's argmax: %d\n", checked);
    assert_true(checked > 40);
}

/* The rule applied by hand, in double: the ranking by logit then id, the
 * softmax of logits / tau over the first K renormalised, u from the seed's
 * generator, the first whose cumulative probability exceeds u. */
typedef struct Ranked {
    float logit;
    int id;
} Ranked;

static int by_rank(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->logit != y->logit)
        return x->logit > y->logit ? -1 : 1;
    return x->id - y->id;
}

static int rule(const float *logits, int V, const GenSettings *s, Prng *r)
{
    Ranked *rk = malloc(sizeof *rk * (size_t)V);
    assert_non_null(rk);
    for (int v = 0; v < V; v++)
        rk[v] = (Ranked){logits[v], v};
    qsort(rk, (size_t)V, sizeof *rk, by_rank);
    if (!s->sample) {
        int id = rk[0].id;
        free(rk);
        return id;
    }
    int K = s->top_k > 0 && s->top_k < V ? s->top_k : V;
    double sum = 0.0, cum = 0.0;
    for (int i = 0; i < K; i++)
        sum += exp(((double)rk[i].logit - rk[0].logit) / s->temperature);
    double u = ldexp((double)(prng_next(r) >> 11), -53);
    int id = rk[K - 1].id;
    for (int i = 0; i < K; i++)
        if ((cum += exp(((double)rk[i].logit - rk[0].logit) / s->temperature) / sum) > u) {
            id = rk[i].id;
            break;
        }
    free(rk);
    return id;
}

/* Generate from the first 2 reference ids to the last position with s and
 * seed; then each step replayed on a second model that recomputes every
 * prefix whole: the token the rule picks from its logits. */
static int replay(const char *folder, const GenSettings *s, uint64_t seed, int *out)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", FIX, folder);
    int ids[64];
    ref_ids(dir, ids, 64);
    ModelOpened *g = open_model(dir), *full = open_model(dir);
    AttnErr err = {0};
    int P = g->lm.info.n_positions, V = g->lm.info.n_vocab, eos = g->lm.info.eos_id;
    set_ids(g, ids, 2);
    Prng r, mine;
    prng_seed(&r, seed);
    prng_seed(&mine, seed);
    assert_int_equal(model_generate(g, P - 2, s, &r, &err), 0);
    int n = g->ids.n;
    assert_true(n <= P);
    assert_true(n == P || g->ids.id[n - 1] == eos); /* all N, or stopped at the eos token */
    float *logits = malloc(sizeof *logits * (size_t)V);
    assert_non_null(logits);
    for (int t = 2; t < n; t++) {
        lm_close(&full->lm); /* nothing reused */
        assert_int_equal(lm_open(&full->lm, full->dir, &err), 0);
        assert_int_equal(lm_forward(&full->lm, g->ids.id, t, NULL, &err), 0);
        assert_int_equal(lm_logits(&full->lm, t - 1, logits, &err), 0);
        assert_int_equal(g->ids.id[t], rule(logits, V, s, &mine));
        assert_true(t == n - 1 || g->ids.id[t] != eos);
    }
    memcpy(out, g->ids.id, sizeof *out * (size_t)n);
    free(logits);
    model_opened_free(g);
    model_opened_free(full);
    return n;
}

static void test_greedy_long(void **state)
{
    (void)state;
    GenSettings greedy = {0, 1.0, 0};
    int a[64];
    for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++)
        replay(folders[f], &greedy, 0, a);
}

/* Sampling follows the rule and gives the same tokens for the same seed;
 * another seed gives others (somewhere among a few). */
static void test_sample_replay(void **state)
{
    (void)state;
    const GenSettings cases[] = {{1, 1.0, 0}, {1, 2.5, 0}, {1, 0.7, 5}, {1, 3.0, 1}, {1, 1e-6, 0}};
    int differs = 0;
    for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int a[64], b[64], o[64];
            int n = replay(folders[f], &cases[c], 7 + f, a);
            assert_int_equal(replay(folders[f], &cases[c], 7 + f, b), n);
            assert_memory_equal(a, b, sizeof *a * (size_t)n);
            int m = replay(folders[f], &cases[c], 1000 + f, o);
            differs += m != n || memcmp(a, o, sizeof *a * (size_t)n) != 0;
        }
    assert_true(differs > 5);
}

/* The eos token ends a generation early and is kept; the continuation's
 * text is the decoder's (the special token's text kept), the text's the
 * given one with it after. */
static void test_eos_stop(void **state)
{
    (void)state;
    AttnErr err = {0};
    ModelOpened *g = open_model(FIX "/f32-h3");
    int eos = g->lm.info.eos_id, stopped = 0;
    assert_int_equal(eos, 63);
    GenSettings s = {1, 2.0, 0};
    for (uint64_t seed = 0; seed < 40 && !stopped; seed++) {
        assert_int_equal(model_compute_text(g, "AB1", 3, &err), 0);
        assert_int_equal(g->n_given, 3);
        Prng r;
        prng_seed(&r, seed);
        assert_int_equal(model_generate(g, 13, &s, &r, &err), 0);
        if (g->ids.n < 16) {
            assert_int_equal(g->ids.id[g->ids.n - 1], eos);
            for (int i = 3; i < g->ids.n - 1; i++)
                assert_int_not_equal(g->ids.id[i], eos);
            char *t = NULL;
            size_t n = 0;
            assert_int_equal(model_generated_text(g, &t, &n), 0);
            assert_true(n >= 13 && strcmp(t + n - 13, "<|endoftext|>") == 0);
            assert_int_equal(model_generated_join(g, "AB1", &err), 0);
            assert_true(strncmp(g->text, "AB1", 3) == 0 && strstr(g->text, "<|endoftext|>") == NULL);
            free(t);
            stopped = 1;
        }
    }
    assert_true(stopped);
    model_opened_free(g);
}

int main(void)
{
    setenv("ATTNVIZ_DATADIR", "assets", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greedy_ties),
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_sample_by_hand),
        cmocka_unit_test(test_greedy_reference),
        cmocka_unit_test(test_greedy_long),
        cmocka_unit_test(test_sample_replay),
        cmocka_unit_test(test_eos_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
