/* Teach mode on a Model (issue 15): the loss goes down on every preset
 * (one head and the heads' mean, self- and cross-attention, each score
 * function), a word's gradient is the sum over its occurrences in both
 * sentences through X = E + PE (against finite differences of an
 * independent double loss), an unreachable target ends on a plateau and
 * not in NaN, and bad settings are refused with a message. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/teach_model.h"

#include "test_util.h"

static EmbedTable *table;

static int setup(void **state)
{
    (void)state;
    return test_load_embeddings(&table);
}

static int teardown(void **state)
{
    (void)state;
    embed_destroy(table);
    return 0;
}

static void make(Model *m, AttnConfig cfg, uint64_t seed, const char *q, const char *k)
{
    assert_int_equal(model_init(m, table, &cfg), 0);
    if (seed)
        model_set_seed(m, seed);
    assert_int_equal(model_set_text(m, q, strlen(q)), 0);
    assert_int_equal(model_set_keys(m, k, strlen(k)), 0);
    assert_int_equal(model_compute(m), 0);
}

/* Run n steps and return the loss after them; every loss finite. */
static double run(Teacher *t, Model *m, int n)
{
    for (int s = 0; s < n; s++)
        assert_int_equal(teacher_step(t, m), 0);
    double loss;
    assert_int_equal(teacher_loss_now(t, m, &loss), 0);
    assert_int_equal(t->n_loss, n + 1);
    for (long k = 0; k < t->n_loss; k++)
        assert_true(isfinite(t->loss[k]));
    return loss;
}

static void test_presets_learn(void **state)
{
    (void)state;
    static const struct {
        const char *q, *k;
        int heads, head, score, train;
        float tau;
    } cases[] = {
        {"the train left the station on time", "", 1, 0, ATTN_SCORE_DOT, TEACH_WQ | TEACH_WK, 1},
        {"the train left the station on time", "", 2, MODEL_HEAD_AVG, ATTN_SCORE_DOT,
         TEACH_WQ | TEACH_WK, 1},
        {"the check was cashed at the bank", "", 2, 1, ATTN_SCORE_COSINE,
         TEACH_WQ | TEACH_WK | TEACH_X, 0.2f},
        {"je suis heureux", "i am happy", 1, 0, ATTN_SCORE_ADDITIVE,
         TEACH_WQ | TEACH_WK | TEACH_V, 1},
        {"je suis heureux", "i am very happy", 2, 0, ATTN_SCORE_DOT, TEACH_X, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int preset = 0; preset < TEACH_PRESET_COUNT; preset++) {
            AttnConfig cfg = attn_config_default();
            cfg.heads = cases[c].heads;
            cfg.score = cases[c].score;
            cfg.temperature = cases[c].tau;
            cfg.posenc = 1;
            Model m;
            make(&m, cfg, 42, cases[c].q, cases[c].k);
            float *target = malloc((size_t)m.T * m.Tk * sizeof(float));
            teach_preset(preset, m.T, m.Tk, target);
            Teacher t;
            AttnErr err = {0};
            assert_int_equal(teacher_start(&t, &m, target, cases[c].head, cases[c].train,
                                           TEACH_OPT_ADAM, 0.1f, &err), 0);
            double after = run(&t, &m, 60);
            if (!(after < 0.7 * t.loss[0]))
                fail_msg("case %zu preset %s: loss %g -> %g", c, teach_preset_name(preset),
                         t.loss[0], after);
            teacher_free(&t);
            free(target);
            model_destroy(&m);
        }
}

/* A word's gradient: the sum over its tokens in both sentences, through
 * X = E + PE, against central differences of a double loss over E. */
static double ref_loss(const Model *m, const double *Eq, const double *Ek, const float *t)
{
    int d = m->d, Tq = m->T, Tk = m->Tk, dk = m->d;
    double loss = 0;
    int rows = 0;
    for (int i = 0; i < Tq; i++) {
        double q[64], l[64], mx = -INFINITY, sum = 0, ts = 0;
        for (int c = 0; c < dk; c++) {
            q[c] = 0;
            for (int x = 0; x < d; x++)
                q[c] += (Eq[i * d + x] + attn_posenc(i, x, d)) * m->params.Wq[x * dk + c];
        }
        for (int j = 0; j < Tk; j++) {
            l[j] = 0;
            for (int c = 0; c < dk; c++) {
                double k = 0;
                for (int x = 0; x < d; x++)
                    k += (Ek[j * d + x] + attn_posenc(j, x, d)) * m->params.Wk[x * dk + c];
                l[j] += q[c] * k;
            }
            l[j] /= sqrt((double)dk);
            mx = fmax(mx, l[j]);
        }
        for (int j = 0; j < Tk; j++)
            sum += exp(l[j] - mx);
        for (int j = 0; j < Tk; j++) {
            ts += t[i * Tk + j];
            if (t[i * Tk + j] > 0)
                loss -= t[i * Tk + j] * (l[j] - mx - log(sum));
        }
        rows += ts > 0;
    }
    return loss / rows;
}

static void test_word_gradient_sums_occurrences(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    cfg.posenc = 1;
    Model m; /* "bank" twice in the queries and once in the keys */
    make(&m, cfg, 5, "bank river bank", "the bank");
    int d = m.d;
    float target[6] = {0, 1, 1, 0, 0, 1};
    Teacher t;
    AttnErr err = {0};
    assert_int_equal(teacher_start(&t, &m, target, 0, TEACH_X, TEACH_OPT_SGD, 1e-9f, &err), 0);
    assert_int_equal(t.n_words, 3 + 0); /* bank, river, the */
    double *Eq = malloc(sizeof(double) * 3 * d), *Ek = malloc(sizeof(double) * 2 * d);
    for (int e = 0; e < 3 * d; e++)
        Eq[e] = m.E[e];
    for (int e = 0; e < 2 * d; e++)
        Ek[e] = m.Ek[e];
    assert_int_equal(teacher_step(&t, &m), 0);
    int bank = t.qword[0];
    assert_int_equal(t.qword[2], bank);
    assert_int_equal(t.kword[1], bank);
    for (int c = 0; c < d; c++) {
        double eps = 1e-5, save[3] = {Eq[c], Eq[2 * d + c], Ek[d + c]};
        Eq[c] += eps, Eq[2 * d + c] += eps, Ek[d + c] += eps;
        double up = ref_loss(&m, Eq, Ek, t.target);
        Eq[c] = save[0] - eps, Eq[2 * d + c] = save[1] - eps, Ek[d + c] = save[2] - eps;
        double down = ref_loss(&m, Eq, Ek, t.target);
        Eq[c] = save[0], Eq[2 * d + c] = save[1], Ek[d + c] = save[2];
        double want = (up - down) / (2 * eps), got = t.gvec[(size_t)bank * d + c];
        if (fabs(got - want) > 1e-4 + 1e-3 * fabs(want))
            fail_msg("d loss / d bank[%d] = %g, finite differences %g", c, got, want);
    }
    /* the vector moved by −lr·g, in both sentences */
    assert_true(m.edited[0] && m.edited[2] && m.kedited[1]);
    free(Eq), free(Ek);
    teacher_free(&t);
    model_destroy(&m);
}

/* Identical queries cannot attend differently: the best loss is above
 * 2·ln 2 / 3; the run ends on a plateau, every loss finite. */
static void test_unreachable_plateau(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    Model m;
    make(&m, cfg, 3, "the cat the", "");
    float target[9] = {0, 1, 0, 0, 1, 0, 1, 0, 0};
    Teacher t;
    AttnErr err = {0};
    assert_int_equal(teacher_start(&t, &m, target, 0, TEACH_WQ | TEACH_WK, TEACH_OPT_ADAM, 0.1f,
                                   &err), 0);
    int steps = 0;
    while (!teacher_plateau(&t, 100, 1e-4) && steps < 5000) {
        assert_int_equal(teacher_step(&t, &m), 0);
        steps++;
    }
    double loss;
    assert_int_equal(teacher_loss_now(&t, &m, &loss), 0);
    assert_true(steps < 5000);
    assert_true(isfinite(loss));
    assert_true(loss > 2.0 * log(2.0) / 3.0 - 1e-4);
    assert_true(loss < t.loss[0]);
    teacher_free(&t);
    model_destroy(&m);
}

static void test_bad_settings(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    cfg.heads = 2;
    cfg.causal = 1;
    Model m;
    make(&m, cfg, 0, "the train left", "");
    float t9[9];
    teach_preset(TEACH_SELF, 3, 3, t9);
    Teacher t;
    AttnErr err = {0};
    assert_int_equal(teacher_start(&t, &m, t9, 2, TEACH_WQ, TEACH_OPT_ADAM, 0.1f, &err), -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "2 heads"));
    assert_int_equal(teacher_start(&t, &m, t9, 0, TEACH_V, TEACH_OPT_ADAM, 0.1f, &err), -ATTN_E_RANGE);
    assert_non_null(strstr(err.msg, "additive"));
    assert_int_equal(teacher_start(&t, &m, t9, 0, TEACH_WQ, TEACH_OPT_ADAM, 0.0f, &err), -ATTN_E_RANGE);
    assert_non_null(strstr(err.msg, "learning rate"));
    t9[4] = -1.0f;
    assert_int_equal(teacher_start(&t, &m, t9, 0, TEACH_WQ, TEACH_OPT_ADAM, 0.1f, &err), -ATTN_E_RANGE);
    assert_non_null(strstr(err.msg, "row 2 (\"train\")"));
    /* all mass on masked keys (the mask is on): nothing to learn */
    float upper[9] = {0, 1, 1, 0, 0, 1, 0, 0, 0};
    assert_int_equal(teacher_start(&t, &m, upper, 0, TEACH_WQ, TEACH_OPT_ADAM, 0.1f, &err), -ATTN_E_RANGE);
    teacher_free(&t);
    /* masked mass is dropped with a count the caller warns about */
    float prev[9];
    teach_preset(TEACH_NEXT, 3, 3, prev);
    assert_int_equal(teacher_start(&t, &m, prev, 0, TEACH_WQ, TEACH_OPT_ADAM, 0.1f, &err), 0);
    assert_int_equal(t.dropped, 2);
    assert_int_equal(t.rows, 1);
    teacher_free(&t);
    model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_learn),
        cmocka_unit_test(test_word_gradient_sums_occurrences),
        cmocka_unit_test(test_unreachable_plateau),
        cmocka_unit_test(test_bad_settings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
