/* Cross-attention in the Model (issue 14): queries from one sentence, keys
 * and values from a second. Every number against an independent double
 * computation from the embedding table (each sentence's positional encoding
 * from position 0), for Tq != Tk, Tq = 1, Tk = 1, several heads, basic mode,
 * each score function; the incremental recompute against a fresh model, bit
 * for bit; one vector per word across both sentences; the mask's rule. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/model.h"

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

/* x = table vector (or the OOV vector) + sin/cos position p, in double. */
static void ref_input(const TokenList *tl, int n, int d, int posenc, double *X)
{
    float tmp[512];
    for (int i = 0; i < n; i++) {
        const char *w = tok_text(tl, i);
        int k = embed_find(table, w);
        if (k >= 0)
            memcpy(tmp, embed_vector(table, k), (size_t)d * sizeof(float));
        else
            embed_oov_vector(w, d, tmp);
        for (int c = 0; c < d; c++) {
            double pe = 0.0;
            if (posenc) {
                double ang = i / pow(10000.0, (double)(c - c % 2) / d);
                pe = c % 2 ? cos(ang) : sin(ang);
            }
            X[(size_t)i * d + c] = tmp[c] + pe;
        }
    }
}

/* rows × dk = X (rows × d) · W (d × dk), or X's columns [h·dk, …) in basic mode. */
static void ref_project(const double *X, int rows, int d, const float *W, int dk, double *out)
{
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < dk; c++) {
            double s = 0;
            for (int r = 0; r < d; r++)
                s += X[(size_t)i * d + r] * (W ? W[(size_t)r * dk + c] : (r == c));
            out[(size_t)i * dk + c] = s;
        }
}

static double ref_score(int fn, const double *q, const double *k, const float *v, int dk)
{
    double dot = 0, qq = 0, kk = 0, add = 0;
    for (int c = 0; c < dk; c++) {
        dot += q[c] * k[c];
        qq += q[c] * q[c];
        kk += k[c] * k[c];
        if (v)
            add += v[c] * tanh(q[c] + k[c]);
    }
    if (fn == ATTN_SCORE_COSINE)
        return qq > 0 && kk > 0 ? dot / (sqrt(qq) * sqrt(kk)) : 0.0;
    return fn == ATTN_SCORE_ADDITIVE ? add : dot;
}

/* The model's weights, scores and output against the reference. */
static void check_model(const Model *m)
{
    int Tq = m->T, Tk = m->Tk, d = m->d, learned = m->cfg.mode == ATTN_MODE_LEARNED;
    int h = learned ? m->params.h : 1, dk = d / h;
    assert_int_equal(m->res.Tq, Tq);
    assert_int_equal(m->res.Tk, Tk);
    double *Xq = calloc((size_t)Tq * d, sizeof(double)), *Xk = calloc((size_t)Tk * d, sizeof(double));
    double *Q = calloc((size_t)Tq * dk, sizeof(double)), *K = calloc((size_t)Tk * dk, sizeof(double));
    double *V = calloc((size_t)Tk * dk, sizeof(double)), *Z = calloc((size_t)Tq * d, sizeof(double));
    double *row = calloc((size_t)Tk, sizeof(double));
    ref_input(&m->toks, Tq, d, m->cfg.posenc, Xq);
    ref_input(m->cross ? &m->ktoks : &m->toks, Tk, d, m->cfg.posenc, Xk);
    for (int hd = 0; hd < h; hd++) {
        size_t sl = (size_t)hd * d * dk;
        ref_project(Xq, Tq, d, learned ? m->params.Wq + sl : NULL, dk, Q);
        ref_project(Xk, Tk, d, learned ? m->params.Wk + sl : NULL, dk, K);
        ref_project(Xk, Tk, d, learned ? m->params.Wv + sl : NULL, dk, V);
        const float *va = m->cfg.score != ATTN_SCORE_ADDITIVE ? NULL
                          : learned ? m->params.v + (size_t)hd * dk : m->params.vb;
        double mult = 1.0 / m->cfg.temperature;
        if (m->cfg.score == ATTN_SCORE_DOT && m->cfg.scale)
            mult /= sqrt((double)dk);
        for (int i = 0; i < Tq; i++) {
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < Tk; j++) {
                double s = ref_score(m->cfg.score, Q + (size_t)i * dk, K + (size_t)j * dk, va, dk);
                float got = m->res.scores[((size_t)hd * Tq + i) * Tk + j];
                assert_true(fabs(got - s) < 1e-4 * (1 + fabs(s)));
                row[j] = s * mult;
                mx = row[j] > mx ? row[j] : mx;
            }
            for (int j = 0; j < Tk; j++)
                sum += row[j] = exp(row[j] - mx);
            for (int j = 0; j < Tk; j++) {
                float got = m->res.weights[((size_t)hd * Tq + i) * Tk + j];
                assert_true(fabs(got - row[j] / sum) < 1e-5);
            }
            for (int c = 0; c < dk; c++) {
                double z = 0;
                for (int j = 0; j < Tk; j++)
                    z += row[j] / sum * V[(size_t)j * dk + c];
                Z[(size_t)i * d + hd * dk + c] = z;
                assert_true(fabs(m->res.Z[((size_t)hd * Tq + i) * dk + c] - z) < 1e-4 * (1 + fabs(z)));
            }
        }
    }
    for (int i = 0; i < Tq; i++)
        for (int c = 0; c < d; c++) {
            double o = 0;
            for (int r = 0; r < d; r++)
                o += Z[(size_t)i * d + r] * (learned ? m->params.Wo[(size_t)r * d + c] : (r == c));
            assert_true(fabs(m->res.output[(size_t)i * d + c] - o) < 1e-4 * (1 + fabs(o)));
        }
    free(Xq), free(Xk), free(Q), free(K), free(V), free(Z), free(row);
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

static void test_cross_against_reference(void **state)
{
    (void)state;
    static const struct {
        const char *q, *k;
        int heads, basic, posenc, score;
        uint64_t seed;
        float tau;
    } cases[] = {
        {"je suis heureux", "i am very happy today", 1, 0, 0, ATTN_SCORE_DOT, 0, 1.0f},
        {"je suis heureux", "i am very happy today", 4, 0, 1, ATTN_SCORE_DOT, 7, 0.5f},
        {"happy", "the train left the station on time", 2, 0, 1, ATTN_SCORE_DOT, 3, 1.0f},
        {"the train left the station on time", "station", 1, 1, 1, ATTN_SCORE_DOT, 0, 1.0f},
        {"the check was cashed", "at the bank", 1, 1, 0, ATTN_SCORE_COSINE, 0, 0.1f},
        {"the check was cashed", "at the bank", 2, 0, 1, ATTN_SCORE_COSINE, 11, 0.25f},
        {"the check was cashed", "at the bank zzqx", 4, 0, 0, ATTN_SCORE_ADDITIVE, 5, 1.0f},
        {"river bank", "the bank of the river", 1, 1, 1, ATTN_SCORE_ADDITIVE, 0, 2.0f},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        AttnConfig cfg = attn_config_default();
        cfg.heads = cases[c].heads;
        cfg.mode = cases[c].basic ? ATTN_MODE_BASIC : ATTN_MODE_LEARNED;
        cfg.posenc = cases[c].posenc;
        cfg.score = cases[c].score;
        cfg.temperature = cases[c].tau;
        Model m;
        make(&m, cfg, cases[c].seed, cases[c].q, cases[c].k);
        assert_true(m.cross);
        assert_int_not_equal(m.T, 0);
        check_model(&m);
        /* the map: queries down the side, keys across */
        AttnMap map = model_map(&m, MODEL_WEIGHTS, 0);
        assert_int_equal(map.Tq, m.T);
        assert_int_equal(map.Tk, m.Tk);
        assert_string_equal(map.k_labels[m.Tk - 1], tok_text(&m.ktoks, m.Tk - 1));
        assert_string_equal(map.q_labels[0], tok_text(&m.toks, 0));
        model_destroy(&m);
    }
}

/* Editing either sentence recomputes only what changed: the same floats
 * as a model that computed the new pair from scratch. */
static void test_cross_incremental(void **state)
{
    (void)state;
    static const char *const keys[] = {
        "i am happy", "i am very happy", "you are very happy", "you are very sad", "", "bank",
        "i am happy",
    };
    static const char *const queries[] = {
        "je suis heureux", "je suis heureux", "je suis", "tu es triste", "tu es triste", "the bank",
        "je suis heureux",
    };
    AttnConfig cfg = attn_config_default();
    cfg.heads = 2;
    cfg.posenc = 1;
    Model a;
    assert_int_equal(model_init(&a, table, &cfg), 0);
    a.keep_window_matrices = 1;
    model_set_seed(&a, 9);
    for (size_t s = 0; s < sizeof keys / sizeof keys[0]; s++) {
        assert_int_equal(model_set_keys(&a, keys[s], strlen(keys[s])), 0);
        assert_int_equal(model_set_text(&a, queries[s], strlen(queries[s])), 0);
        assert_int_equal(model_compute(&a), 0);
        Model b;
        assert_int_equal(model_init(&b, table, &cfg), 0);
        b.keep_window_matrices = 1;
        model_set_seed(&b, 9);
        assert_int_equal(model_set_text(&b, queries[s], strlen(queries[s])), 0);
        assert_int_equal(model_set_keys(&b, keys[s], strlen(keys[s])), 0);
        assert_int_equal(model_compute(&b), 0);
        assert_int_equal(a.cross, keys[s][0] != '\0');
        assert_int_equal(a.Tk, b.Tk);
        size_t qk = (size_t)2 * a.T * a.Tk;
        assert_memory_equal(a.res.weights, b.res.weights, qk * sizeof(float));
        assert_int_equal(model_prepare(&a, MODEL_LOGITS, 0), 0);
        assert_int_equal(model_prepare(&b, MODEL_LOGITS, 0), 0);
        assert_memory_equal(model_matrix(&a, MODEL_LOGITS, 0), model_matrix(&b, MODEL_LOGITS, 0),
                            qk * sizeof(float));
        assert_memory_equal(a.res.output, b.res.output, (size_t)a.T * a.d * sizeof(float));
        assert_memory_equal(a.avg_scores, b.avg_scores, qk / 2 * sizeof(float));
        check_model(&a);
        model_destroy(&b);
    }
    model_destroy(&a);
}

/* One vector per word: editing "bank" changes it in both sentences. */
static void test_cross_shared_vector(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    Model m;
    make(&m, cfg, 0, "the bank", "a bank of the river");
    float v[512] = {0};
    v[0] = 2.5f;
    assert_int_equal(model_set_word_vector(&m, "bank", v), 0);
    assert_int_equal(model_compute(&m), 0);
    assert_true(m.edited[1] && m.kedited[1] && !m.kedited[0]);
    assert_memory_equal(m.E + m.d, v, (size_t)m.d * sizeof(float));
    assert_memory_equal(m.Ek + m.d, v, (size_t)m.d * sizeof(float));
    assert_memory_equal(m.Xk + m.d, v, (size_t)m.d * sizeof(float));
    model_destroy(&m);
}

/* The mask is for self-attention: with two sentences it is not applied,
 * and it comes back when the second sentence is cleared. */
static void test_cross_mask(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    cfg.causal = 1;
    Model m;
    make(&m, cfg, 0, "the train left", "the station on time");
    assert_int_equal(model_causal(&m), 0);
    assert_int_equal(m.res.causal, 0);
    assert_true(m.res.weights[3] > 0.0f); /* query 0 sees key 3 */
    char facts[300];
    model_facts(&m, 0, 1, facts, sizeof facts);
    assert_non_null(strstr(facts, "cross-attention"));
    assert_null(strstr(facts, "mask"));
    assert_int_equal(model_set_keys(&m, "   ", 3), 0); /* no tokens: self */
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(m.cross, 0);
    assert_int_equal(model_causal(&m), 1);
    assert_int_equal(m.Tk, m.T);
    assert_true(m.res.weights[1] == 0.0f);
    model_destroy(&m);
}

/* A session brings its second sentence; the title names both. */
static void test_cross_session_and_title(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    Model m;
    make(&m, cfg, 0, "x", "");
    Session s = {0};
    s.cfg = cfg;
    s.d = m.d;
    s.sentence = "je suis heureux";
    s.keys = "i am happy";
    assert_int_equal(model_apply_session(&m, &s), 0);
    assert_int_equal(model_compute(&m), 0);
    assert_true(m.cross);
    assert_int_equal(m.Tk, 3);
    char title[1100], facts[400];
    model_figure_text(&m, MODEL_WEIGHTS, 0, title, sizeof title, facts, sizeof facts);
    assert_non_null(strstr(title, "je suis heureux"));
    assert_non_null(strstr(title, "i am happy"));
    s.keys = NULL; /* an older session: self-attention */
    assert_int_equal(model_apply_session(&m, &s), 0);
    assert_int_equal(m.cross, 0);
    model_destroy(&m);
}

/* The default model's weights map of text over keys (row-major Tq × Tk). */
static void default_map(const char *text, const char *keys, float *out, int *Tq, int *Tk)
{
    AttnConfig cfg = attn_config_default();
    Model m;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    if (keys)
        assert_int_equal(model_set_keys(&m, keys, strlen(keys)), 0);
    assert_int_equal(model_set_text(&m, text, strlen(text)), 0);
    assert_int_equal(model_compute(&m), 0);
    *Tq = m.T;
    *Tk = m.Tk;
    memcpy(out, model_matrix(&m, MODEL_WEIGHTS, 0), sizeof(float) * (size_t)m.T * m.Tk);
    model_destroy(&m);
}

/* Cross-attention is its own map (issue 28, item 2): "je suis heureux"
 * over "i am happy" with the default weights puts each row's maximum on
 * the translation by 0.02 or more, and differs by 0.01 or more somewhere
 * from self-attention on either sentence (the French words have their own
 * vectors, close to the English ones, not copies). */
static void test_translation_has_own_map(void **state)
{
    (void)state;
    float cross[9], fr[9], en[9];
    int Tq, Tk, tq, tk;
    default_map("je suis heureux", "i am happy", cross, &Tq, &Tk);
    assert_int_equal(Tq, 3);
    assert_int_equal(Tk, 3);
    for (int i = 0; i < 3; i++) /* je→i, suis→am, heureux→happy */
        for (int j = 0; j < 3; j++)
            if (j != i && cross[i * 3 + i] < cross[i * 3 + j] + 0.02f)
                fail_msg("row %d: %.4f at its translation, %.4f at key %d: margin under 0.02", i,
                         (double)cross[i * 3 + i], (double)cross[i * 3 + j], j);
    default_map("je suis heureux", NULL, fr, &tq, &tk);
    default_map("i am happy", NULL, en, &tq, &tk);
    float dfr = 0.0f, den = 0.0f;
    for (int k = 0; k < 9; k++) {
        dfr = fmaxf(dfr, fabsf(cross[k] - fr[k]));
        den = fmaxf(den, fabsf(cross[k] - en[k]));
    }
    if (dfr < 0.01f || den < 0.01f)
        fail_msg("the cross map differs from self-attention by at most %.4f (French), %.4f (English)",
                 (double)dfr, (double)den);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross_against_reference),
        cmocka_unit_test(test_translation_has_own_map),
        cmocka_unit_test(test_cross_incremental),
        cmocka_unit_test(test_cross_shared_vector),
        cmocka_unit_test(test_cross_mask),
        cmocka_unit_test(test_cross_session_and_title),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
