/* The step view's numbers (model_step) against an independent double
 * computation from X and the weights, for several (i, j) in all modes, and
 * against the matrices --print json prints (the same floats, exactly). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/model.h"

static EmbedTable *table;

static int setup(void **state)
{
    (void)state;
    AttnErr err = {0};
    return embed_load(&table, "assets/embeddings.txt", &err, NULL);
}

static int teardown(void **state)
{
    (void)state;
    embed_destroy(table);
    return 0;
}

/* x_i · W[:, c] in double, W d×dk row-major (learned) or the identity (basic). */
static double project(const Model *m, int which, int head, int i, int c)
{
    int d = m->d, dk = m->res.dk;
    const float *x = m->X + (size_t)i * d;
    if (m->cfg.mode == ATTN_MODE_BASIC)
        return x[c];
    const float *W = which == 0 ? m->params.Wq : which == 1 ? m->params.Wk : m->params.Wv;
    W += (size_t)head * d * dk;
    double s = 0;
    for (int r = 0; r < d; r++)
        s += (double)x[r] * W[(size_t)r * dk + c];
    return s;
}

static void check_pair(const Model *m, int head, int i, int j)
{
    ModelStep st;
    int T = m->T, dk = m->res.dk;
    assert_int_equal(model_step(m, head, i, j, &st), 0);
    /* step 1: q, k, v */
    for (int c = 0; c < dk; c++) {
        assert_true(fabs(st.q[c] - project(m, 0, head, i, c)) < 1e-5);
        assert_true(fabs(st.k[c] - project(m, 1, head, j, c)) < 1e-5);
        assert_true(fabs(st.v[c] - project(m, 2, head, j, c)) < 1e-5);
    }
    /* step 2: the products sum to the score; ÷√dk ÷τ gives the logit */
    double score = 0;
    for (int c = 0; c < dk; c++)
        score += project(m, 0, head, i, c) * project(m, 1, head, j, c);
    assert_true(fabs(st.score - score) < 1e-4 * fmax(1.0, fabs(score)));
    double s = m->cfg.scale ? 1.0 / sqrt((double)dk) : 1.0;
    assert_true(fabs(st.scale - s) < 1e-7);
    assert_true(st.temperature == m->cfg.temperature);
    assert_true(fabs(st.logit - score * s / m->cfg.temperature) < 1e-4 * fmax(1.0, fabs(score)));
    /* step 3: α = e^logit / Σ e^logit over the unmasked keys */
    int nv = m->cfg.causal ? i + 1 : T;
    double den = 0, num = 0;
    for (int c = 0; c < nv; c++) {
        double sc = 0;
        for (int u = 0; u < dk; u++)
            sc += project(m, 0, head, i, u) * project(m, 1, head, c, u);
        double e = exp(sc * s / m->cfg.temperature);
        den += e;
        if (c == j)
            num = e;
    }
    double alpha = (m->cfg.causal && j > i) ? 0.0 : num / den;
    assert_int_equal(st.masked, m->cfg.causal && j > i);
    assert_true(fabs(st.weight - alpha) < 1e-5);
    assert_true(fabs(st.exp_ij / st.exp_sum - alpha) < 1e-5);
    /* the same floats as the matrices the heatmap and --print json show */
    const float *W = model_matrix(m, MODEL_WEIGHTS, head);
    const float *S = model_matrix(m, MODEL_SCORES, head);
    assert_true(st.weight == W[(size_t)i * T + j]);
    assert_true(st.score == S[(size_t)i * T + j]);
    /* step 4: z_i = Σ_j α_ij v_j */
    for (int c = 0; c < dk; c++) {
        double z = 0;
        for (int jj = 0; jj < nv; jj++) {
            double sc = 0;
            for (int u = 0; u < dk; u++)
                sc += project(m, 0, head, i, u) * project(m, 1, head, jj, u);
            z += exp(sc * s / m->cfg.temperature) / den * project(m, 2, head, jj, c);
        }
        assert_true(fabs(st.z[c] - z) < 1e-5);
    }
}

static void run_config(AttnMode mode, int heads, int scale, int causal, int posenc, float tau,
                       int seeded)
{
    AttnConfig cfg = attn_config_default();
    cfg.mode = mode;
    cfg.heads = heads;
    cfg.scale = scale;
    cfg.causal = causal;
    cfg.posenc = posenc;
    cfg.temperature = tau;
    Model m;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    if (seeded)
        model_set_seed(&m, 42);
    const char *text = "the check was cashed at the bank on monday";
    assert_int_equal(model_set_text(&m, text, strlen(text)), 0);
    assert_int_equal(model_compute(&m), 0);
    int pairs[][2] = {{0, 0}, {1, 6}, {6, 1}, {3, 5}, {8, 2}, {2, 8}};
    for (int h = 0; h < m.res.h; h++)
        for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
            check_pair(&m, h, pairs[k][0], pairs[k][1]);
    /* out of range is refused, not read */
    ModelStep st;
    assert_int_equal(model_step(&m, 0, m.T, 0, &st), -ATTN_E_RANGE);
    assert_int_equal(model_step(&m, 0, 0, -1, &st), -ATTN_E_RANGE);
    assert_int_equal(model_step(&m, m.res.h, 0, 0, &st), -ATTN_E_RANGE);
    model_destroy(&m);
}

static void test_basic(void **state)
{
    (void)state;
    run_config(ATTN_MODE_BASIC, 1, 1, 0, 0, 1.0f, 0);
    run_config(ATTN_MODE_BASIC, 1, 0, 1, 1, 0.6f, 0);
}

static void test_learned_identity(void **state)
{
    (void)state;
    run_config(ATTN_MODE_LEARNED, 1, 1, 0, 0, 1.0f, 0);
    run_config(ATTN_MODE_LEARNED, 4, 1, 1, 0, 1.0f, 0);
}

static void test_learned_random(void **state)
{
    (void)state;
    run_config(ATTN_MODE_LEARNED, 2, 1, 0, 1, 2.3f, 1);
    run_config(ATTN_MODE_LEARNED, 4, 0, 1, 0, 0.8f, 1);
}

/* Cosine and additive: the step's dot, norms and v against double sums;
 * the additive terms summed in order give the score bit for bit; with two
 * sentences the key comes from the second. */
static void check_other_scores(int score, AttnMode mode, int heads, const char *keys)
{
    AttnConfig cfg = attn_config_default();
    cfg.mode = mode;
    cfg.heads = heads;
    cfg.score = score;
    cfg.temperature = 0.5f;
    Model m;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    model_set_seed(&m, 17);
    const char *text = "the check was cashed at the bank";
    assert_int_equal(model_set_text(&m, text, strlen(text)), 0);
    assert_int_equal(model_set_keys(&m, keys, strlen(keys)), 0);
    assert_int_equal(model_compute(&m), 0);
    for (int h = 0; h < m.res.h; h++)
        for (int i = 0; i < m.T; i += 2)
            for (int j = 0; j < m.Tk; j += 3) {
                ModelStep st;
                assert_int_equal(model_step(&m, h, i, j, &st), 0);
                assert_int_equal(st.score_fn, score);
                assert_true(st.scale == 1.0f); /* √dk is for dot only */
                double dot = 0, qq = 0, kk = 0, add = 0;
                for (int c = 0; c < st.dk; c++) {
                    dot += (double)st.q[c] * st.k[c];
                    qq += (double)st.q[c] * st.q[c];
                    kk += (double)st.k[c] * st.k[c];
                }
                assert_true(fabs(st.dot - dot) < 1e-5 * (1 + fabs(dot)));
                assert_true(fabs(st.qnorm - sqrt(qq)) < 1e-5 * (1 + sqrt(qq)));
                assert_true(fabs(st.knorm - sqrt(kk)) < 1e-5 * (1 + sqrt(kk)));
                if (score == ATTN_SCORE_COSINE) {
                    assert_null(st.va);
                    assert_true(fabs(st.score - dot / sqrt(qq * kk)) < 1e-5);
                } else {
                    const float *v = mode == ATTN_MODE_BASIC ? m.params.vb : m.params.v + h * st.dk;
                    assert_ptr_equal(st.va, v);
                    float sum = 0.0f;
                    for (int c = 0; c < st.dk; c++) {
                        sum += attn_additive_term(st.q[c], st.k[c], st.va[c]);
                        add += v[c] * tanh((double)st.q[c] + st.k[c]);
                    }
                    assert_true(sum == st.score);
                    assert_true(fabs(st.score - add) < 1e-4 * (1 + fabs(add)));
                }
                assert_true(fabs(st.logit - st.score / 0.5) < 1e-5 * (1 + fabs(st.score)));
                if (m.cross) /* the key vector is the second sentence's */
                    assert_ptr_equal(st.k, m.res.K + ((size_t)h * m.Tk + j) * st.dk);
            }
    model_destroy(&m);
}

static void test_cosine_and_additive(void **state)
{
    (void)state;
    check_other_scores(ATTN_SCORE_COSINE, ATTN_MODE_LEARNED, 2, "");
    check_other_scores(ATTN_SCORE_COSINE, ATTN_MODE_BASIC, 1, "the bank of the river");
    check_other_scores(ATTN_SCORE_ADDITIVE, ATTN_MODE_LEARNED, 4, "money at the bank");
    check_other_scores(ATTN_SCORE_ADDITIVE, ATTN_MODE_BASIC, 1, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cosine_and_additive),
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_learned_identity),
        cmocka_unit_test(test_learned_random),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
