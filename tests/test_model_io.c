/* Tests for the model with the real embedding table (src/core/model.c) and
 * the file formats (src/io/print.c, weights_json.c, sentences.c, file.c):
 * the classroom properties, edited and unknown words, heads, the JSON
 * printout (keys, shapes, exact numbers), the weights round trip, every
 * weights error, CSV, sentences files and atomic writes.
 * Run from the repository root (reads assets/embeddings.txt). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnviz/embed.h"
#include "attnviz/io.h"
#include "attnviz/model.h"

#include "test_util.h"


static EmbedTable *table;

static int setup_table(void **state)
{
    (void)state;
    return test_load_embeddings(&table);
}

static int teardown_table(void **state)
{
    (void)state;
    embed_destroy(table);
    table = NULL;
    return 0;
}

/* A model on the real table with the sentence set and computed. */
static void model_open(Model *m, AttnMode mode, int heads, const char *text)
{
    AttnConfig cfg = attn_config_default();
    cfg.mode = mode;
    cfg.heads = heads;
    assert_int_equal(model_init(m, table, &cfg), 0);
    assert_int_equal(model_set_text(m, text, strlen(text)), 0);
    assert_int_equal(model_compute(m), 0);
}

/* weights_parse for m's d, then model_set_weights, as app_load_weights does
 * for a file: on error the parser must leave its output zeroed (nothing to
 * free) and m is not touched. */
static int weights_into(Model *m, const char *data, size_t len, const char *name, AttnErr *err)
{
    ParsedWeights w, zero;
    memset(&w, 0x5a, sizeof w);
    memset(&zero, 0, sizeof zero);
    int rc = weights_parse(&w, m->d, data, len, name, err);
    if (rc < 0) {
        assert_memory_equal(&w, &zero, sizeof w);
        return rc;
    }
    rc = model_set_weights(m, &w);
    parsed_weights_free(&w);
    return rc;
}

static int tok_index(const Model *m, const char *word, int nth)
{
    for (int i = 0; i < m->T; i++)
        if (strcmp(tok_text(&m->toks, i), word) == 0 && nth-- == 0)
            return i;
    return -1;
}

static char *read_stream(FILE *f, size_t *len)
{
    assert_int_equal(fflush(f), 0);
    return test_read_back(f, len);
}

static char *json_of(const Model *m, const char *session, size_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(print_json(f, m, session), 0);
    char *s = read_stream(f, len);
    fclose(f);
    return s;
}

static char *csv_of(const Model *m, int head, size_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(print_csv(f, m, MODEL_WEIGHTS, head), 0);
    char *s = read_stream(f, len);
    fclose(f);
    return s;
}

/* ---- the classroom properties (basic mode, real table) ------------------- */

static void test_seed_train_station(void **state)
{
    (void)state;
    Model m;
    model_open(&m, ATTN_MODE_BASIC, 1, "the train left the station on time");
    assert_int_equal(m.T, 7);
    assert_int_equal(model_count_oov(&m), 0);
    const float *W = model_matrix(&m, MODEL_WEIGHTS, 0);
    int train = tok_index(&m, "train", 0), station = tok_index(&m, "station", 0);
    assert_int_equal(train, 1);
    assert_int_equal(station, 4);
    const float *row = W + (size_t)train * m.T;
    for (int j = 0; j < m.T; j++)
        if (j != train && j != station)
            assert_true(row[station] > row[j]);
    int small[3] = {tok_index(&m, "the", 0), tok_index(&m, "the", 1), tok_index(&m, "on", 0)};
    for (int k = 0; k < 3; k++) {
        assert_true(small[k] >= 0);
        assert_true(row[small[k]] < row[station]);
        assert_true(row[small[k]] < 1.0f / (float)m.T);
    }
    /* and the other way round: station attends to train more than to
     * anything but itself */
    const float *srow = W + (size_t)station * m.T;
    for (int j = 0; j < m.T; j++)
        if (j != train && j != station)
            assert_true(srow[train] > srow[j]);
    model_destroy(&m);
}

static void test_seed_check_bank(void **state)
{
    (void)state;
    Model m;
    model_open(&m, ATTN_MODE_BASIC, 1, "the check was cashed at the bank");
    assert_int_equal(m.T, 7);
    const float *W = model_matrix(&m, MODEL_WEIGHTS, 0);
    int check = tok_index(&m, "check", 0), cashed = tok_index(&m, "cashed", 0),
        bank = tok_index(&m, "bank", 0);
    assert_true(check >= 0 && cashed >= 0 && bank >= 0);
    const float *row = W + (size_t)check * m.T;
    for (int j = 0; j < m.T; j++) {
        if (j == check || j == cashed || j == bank)
            continue;
        assert_true(row[cashed] > row[j]);
        assert_true(row[bank] > row[j]);
    }
    model_destroy(&m);
}

/* ---- edited words, unknown words, heads ------------------------------------ */

static void test_set_word_vector_and_clear(void **state)
{
    (void)state;
    Model m;
    model_open(&m, ATTN_MODE_LEARNED, 1, "the train left the station");
    int d = m.d, T = m.T;
    float *E0 = malloc((size_t)T * d * sizeof(float));
    float *W0 = malloc((size_t)T * T * sizeof(float));
    memcpy(E0, m.E, (size_t)T * d * sizeof(float));
    memcpy(W0, m.res.weights, (size_t)T * T * sizeof(float));
    float v[16];
    assert_int_equal(d, 16);
    for (int k = 0; k < d; k++)
        v[k] = 0.1f * (float)(k + 1);
    assert_int_equal(model_set_word_vector(&m, "the", v), 0);
    for (int i = 0; i < T; i++) {
        int is_the = strcmp(tok_text(&m.toks, i), "the") == 0;
        assert_int_equal(m.edited[i], is_the);
        if (is_the)
            assert_memory_equal(m.E + (size_t)i * d, v, sizeof v);
        else
            assert_memory_equal(m.E + (size_t)i * d, E0 + (size_t)i * d, sizeof v);
    }
    assert_memory_equal(m.E + 0, m.E + 3 * d, sizeof v); /* both "the" */
    assert_int_equal(model_compute(&m), 0);
    int changed = 0;
    for (int i = 0; i < T * T; i++)
        changed |= m.res.weights[i] != W0[i];
    assert_true(changed);
    /* editing the same word again replaces its vector */
    v[0] = -2.0f;
    assert_int_equal(model_set_word_vector(&m, "the", v), 0);
    assert_int_equal(m.n_over, 1);
    assert_true(m.E[0] == -2.0f && m.E[3 * d] == -2.0f);
    /* an edit survives a new sentence with the word */
    const char *s2 = "on the train";
    assert_int_equal(model_set_text(&m, s2, strlen(s2)), 0);
    assert_true(m.E[1 * d] == -2.0f);
    assert_int_equal(m.edited[1], 1);
    assert_int_equal(m.edited[0], 0);
    /* clear: back to the table's vectors */
    model_clear_word_vectors(&m);
    assert_int_equal(m.n_over, 0);
    assert_memory_equal(m.E + d, embed_vector(table, embed_find(table, "the")), sizeof v);
    assert_int_equal(model_set_text(&m, "the train left the station",
                                    strlen("the train left the station")), 0);
    assert_memory_equal(m.E, E0, (size_t)T * d * sizeof(float));
    for (int i = 0; i < T; i++)
        assert_int_equal(m.edited[i], 0);
    assert_int_equal(model_compute(&m), 0);
    assert_memory_equal(m.res.weights, W0, (size_t)T * T * sizeof(float));
    /* many edited words (the list grows) */
    char word[16];
    for (int k = 0; k < 40; k++) {
        snprintf(word, sizeof word, "w%d", k);
        v[0] = (float)k;
        assert_int_equal(model_set_word_vector(&m, word, v), 0);
    }
    assert_int_equal(model_set_text(&m, "w0 w39 w7", 9), 0);
    assert_true(m.E[0] == 0.0f && m.E[d] == 39.0f && m.E[2 * d] == 7.0f);
    model_clear_word_vectors(&m);
    free(E0);
    free(W0);
    model_destroy(&m);
}

/* The documented OOV vector (embed.h): FNV-1a 64 of the bytes seeds
 * splitmix64; component = (next >> 40) / 2^24 - 0.5. */
static void ref_oov(const char *w, int d, float *out)
{
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)w; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    for (int k = 0; k < d; k++) {
        uint64_t z = (h += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        out[k] = (float)((double)(z >> 40) / 16777216.0 - 0.5);
    }
}

static void test_oov_words(void **state)
{
    (void)state;
    Model m;
    model_open(&m, ATTN_MODE_BASIC, 1, "the zzyzx train qwfpgj zzyzx");
    assert_int_equal(m.T, 5);
    static const unsigned char want[5] = {0, 1, 0, 1, 1};
    for (int i = 0; i < 5; i++)
        assert_int_equal(m.oov[i], want[i]);
    assert_int_equal(model_count_oov(&m), 3);
    float a[16], b[16], r[16];
    embed_oov_vector("zzyzx", 16, a);
    embed_oov_vector("zzyzx", 16, b);
    assert_memory_equal(a, b, sizeof a);
    ref_oov("zzyzx", 16, r);
    for (int k = 0; k < 16; k++) {
        assert_true(a[k] >= -0.5f && a[k] < 0.5f);
        assert_true(fabsf(a[k] - r[k]) < 1e-7f);
    }
    assert_memory_equal(m.E + 16, a, sizeof a);
    assert_memory_equal(m.E + 4 * 16, a, sizeof a);
    embed_oov_vector("qwfpgj", 16, b);
    assert_memory_not_equal(a, b, sizeof a);
    assert_memory_equal(m.E + 3 * 16, b, sizeof b);
    /* the weights are finite and the rows still sum to 1 */
    const float *W = model_matrix(&m, MODEL_WEIGHTS, 0);
    for (int i = 0; i < 5; i++) {
        double s = 0;
        for (int j = 0; j < 5; j++)
            s += W[i * 5 + j];
        assert_true(fabs(s - 1.0) < 1e-6);
    }
    /* a known word is not marked */
    assert_int_equal(model_set_text(&m, "train", 5), 0);
    assert_int_equal(model_count_oov(&m), 0);
    model_destroy(&m);
}

static void test_set_heads(void **state)
{
    (void)state;
    Model m;
    model_open(&m, ATTN_MODE_LEARNED, 2, "the train left");
    model_set_seed(&m, 11);
    size_t n = 16 * 16 * sizeof(float);
    float *q = malloc(n), *o = malloc(n);
    memcpy(q, m.params.Wq, n);
    memcpy(o, m.params.Wo, n);
    static const int bad[] = {3, 0, -1, 5, 7, 32, 65, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(model_set_heads(&m, bad[i]), -ATTN_E_HEADS);
        assert_int_equal(m.cfg.heads, 2);
        assert_int_equal(m.params.h, 2);
        assert_int_equal(m.params.dk, 8);
        assert_memory_equal(m.params.Wq, q, n);
        assert_memory_equal(m.params.Wo, o, n);
    }
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(m.res.h, 2);
    /* a valid change: Xavier from the model's seed */
    assert_int_equal(model_set_heads(&m, 4), 0);
    assert_int_equal(m.cfg.heads, 4);
    assert_int_equal(m.params.dk, 4);
    AttnParams p;
    assert_int_equal(attn_params_create(&p, 16, 4), 0);
    attn_params_xavier(&p, 11);
    assert_memory_equal(m.params.Wq, p.Wq, n);
    assert_memory_equal(m.params.Wo, p.Wo, n);
    attn_params_destroy(&p);
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(m.res.h, 4);
    /* without a seed: identity */
    Model m2;
    model_open(&m2, ATTN_MODE_LEARNED, 1, "the train");
    assert_int_equal(model_set_heads(&m2, 16), 0);
    assert_int_equal(m2.params.dk, 1);
    for (int k = 0; k < 16; k++)
        assert_true(m2.params.Wq[(size_t)k * 16 + k] == 1.0f);
    model_destroy(&m2);
    free(q);
    free(o);
    model_destroy(&m);
}

/* ---- JSON printout ---------------------------------------------------------- */

static int has_exact_keys(const cJSON *obj, const char *const *keys, int n)
{
    if (!cJSON_IsObject(obj))
        return 0;
    if (cJSON_GetArraySize(obj) != n) {
        const cJSON *c;
        print_error("object has %d keys, want %d:", cJSON_GetArraySize(obj), n);
        cJSON_ArrayForEach(c, obj) print_error(" %s", c->string);
        print_error("\n");
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!cJSON_GetObjectItemCaseSensitive(obj, keys[i])) {
            print_error("missing key %s\n", keys[i]);
            return 0;
        }
    return 1;
}

/* a is a rows×cols array of arrays of numbers equal to M (row stride ld). */
static void check_matrix(const cJSON *a, const float *M, int rows, int cols, int ld,
                         const char *what)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != rows) {
        print_error("%s: expected %d rows\n", what, rows);
        fail();
    }
    int i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, a) {
        assert_true(cJSON_IsArray(row));
        if (cJSON_GetArraySize(row) != cols) {
            print_error("%s row %d: %d numbers, want %d\n", what, i,
                        cJSON_GetArraySize(row), cols);
            fail();
        }
        int j = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, row) {
            assert_true(cJSON_IsNumber(v));
            float want = M[(size_t)i * ld + j];
            if ((float)v->valuedouble != want) {
                print_error("%s[%d][%d] = %.17g, model has %.9g\n", what, i, j,
                            v->valuedouble, (double)want);
                fail();
            }
            j++;
        }
        i++;
    }
}

/* name (and oov_name) hold the n labels and oov flags */
static void check_json_tokens(const cJSON *root, const char *name, const char *oov_name,
                              const char *const *labels, const unsigned char *flags, int n)
{
    const cJSON *toks = cJSON_GetObjectItemCaseSensitive(root, name);
    const cJSON *oov = cJSON_GetObjectItemCaseSensitive(root, oov_name);
    assert_int_equal(cJSON_GetArraySize(toks), n);
    assert_int_equal(cJSON_GetArraySize(oov), n);
    for (int i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetArrayItem(toks, i), *o = cJSON_GetArrayItem(oov, i);
        assert_true(cJSON_IsString(t));
        assert_string_equal(t->valuestring, labels[i]);
        assert_true(cJSON_IsBool(o));
        assert_int_equal(cJSON_IsTrue(o), flags[i]);
    }
}

/* a is an array of n numbers equal to v */
static void check_vector(const cJSON *a, const float *v, int n, const char *what)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) {
        print_error("%s: expected %d numbers\n", what, n);
        fail();
    }
    for (int j = 0; j < n; j++)
        assert_true((float)cJSON_GetArrayItem(a, j)->valuedouble == v[j]);
}

/* Head k of the document: weights (null in basic mode), v (learned: its dk
 * numbers of params.v; basic: vb, d numbers), Q and Z Tq rows, K and V Tk
 * rows, scores and weights Tq × Tk. */
static void check_json_head(const Model *m, const cJSON *ho, int k, int dk)
{
    static const char *const hk[] = {"Wq", "Wk", "Wv", "Q", "K", "V", "scores", "weights", "Z", "v"};
    const AttnResult *r = &m->res;
    int d = m->d, Tq = m->T, Tk = m->Tk, learned = m->cfg.mode == ATTN_MODE_LEARNED;
    assert_true(has_exact_keys(ho, hk, 10));
    const float *W[3] = {m->params.Wq, m->params.Wk, m->params.Wv};
    const float *R[3] = {r->Q + (size_t)k * Tq * dk, r->K + (size_t)k * Tk * dk,
                         r->V + (size_t)k * Tk * dk};
    int rows[3] = {Tq, Tk, Tk};
    for (int w = 0; w < 3; w++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(ho, hk[w]);
        if (learned)
            check_matrix(a, W[w] + (size_t)k * d * dk, d, dk, dk, hk[w]);
        else
            assert_true(cJSON_IsNull(a));
        check_matrix(cJSON_GetObjectItemCaseSensitive(ho, hk[3 + w]), R[w], rows[w], dk, dk,
                     hk[3 + w]);
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ho, "v");
    if (learned)
        check_vector(v, m->params.v + (size_t)k * dk, dk, "v");
    else
        check_vector(v, m->params.vb, d, "v (vb)");
    check_matrix(cJSON_GetObjectItemCaseSensitive(ho, "scores"),
                 r->scores + (size_t)k * Tq * Tk, Tq, Tk, Tk, "scores");
    check_matrix(cJSON_GetObjectItemCaseSensitive(ho, "weights"),
                 r->weights + (size_t)k * Tq * Tk, Tq, Tk, Tk, "weights");
    check_matrix(cJSON_GetObjectItemCaseSensitive(ho, "Z"),
                 r->Z + (size_t)k * Tq * dk, Tq, dk, dk, "Z");
}

static void check_json_document(const Model *m, const char *text, int with_session)
{
    cJSON *root = cJSON_Parse(text);
    if (!root)
        print_error("print_json output does not parse near: %.40s\n", cJSON_GetErrorPtr());
    assert_non_null(root);
    static const char *const top[] = {"tokens", "oov", "config", "X", "heads", "Wo",
                                      "output", "session"};
    static const char *const top_cross[] = {"tokens", "oov", "key_tokens", "key_oov", "config",
                                            "X", "X_keys", "heads", "Wo", "output", "session"};
    if (m->cross)
        assert_true(has_exact_keys(root, top_cross, with_session ? 11 : 10));
    else
        assert_true(has_exact_keys(root, top, with_session ? 8 : 7));
    int T = m->T, d = m->d, learned = m->cfg.mode == ATTN_MODE_LEARNED;
    int h = learned ? m->params.h : 1, dk = d / h;
    /* tokens and oov */
    check_json_tokens(root, "tokens", "oov", m->labels, m->oov, T);
    if (m->cross) {
        check_json_tokens(root, "key_tokens", "key_oov", m->klabels, m->koov, m->Tk);
        check_matrix(cJSON_GetObjectItemCaseSensitive(root, "X_keys"), m->Xk, m->Tk, d, d,
                     "X_keys");
    }
    /* config */
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "config");
    static const char *const ck[] = {"mode", "heads", "d_model", "d_k", "scale", "causal",
                                     "posenc", "temperature", "seed", "dims", "score"};
    assert_true(has_exact_keys(c, ck, 11));
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(c, "mode");
    assert_true(cJSON_IsString(it));
    assert_string_equal(it->valuestring, learned ? "learned" : "basic");
    it = cJSON_GetObjectItemCaseSensitive(c, "score");
    assert_true(cJSON_IsString(it));
    assert_string_equal(it->valuestring, attn_score_name(m->cfg.score));
    it = cJSON_GetObjectItemCaseSensitive(c, "heads");
    assert_true(cJSON_IsNumber(it) && it->valuedouble == h);
    it = cJSON_GetObjectItemCaseSensitive(c, "d_model");
    assert_true(cJSON_IsNumber(it) && it->valuedouble == d);
    it = cJSON_GetObjectItemCaseSensitive(c, "d_k");
    assert_true(cJSON_IsNumber(it) && it->valuedouble == dk);
    it = cJSON_GetObjectItemCaseSensitive(c, "scale");
    assert_true(cJSON_IsBool(it) && cJSON_IsTrue(it) == !!m->cfg.scale);
    /* the mask in effect: none with two sentences */
    it = cJSON_GetObjectItemCaseSensitive(c, "causal");
    assert_true(cJSON_IsBool(it) && cJSON_IsTrue(it) == (m->cfg.causal && !m->cross));
    it = cJSON_GetObjectItemCaseSensitive(c, "posenc");
    assert_true(cJSON_IsBool(it) && cJSON_IsTrue(it) == !!m->cfg.posenc);
    it = cJSON_GetObjectItemCaseSensitive(c, "temperature");
    assert_true(cJSON_IsNumber(it) && (float)it->valuedouble == m->cfg.temperature);
    it = cJSON_GetObjectItemCaseSensitive(c, "seed");
    if (m->has_seed)
        assert_true(cJSON_IsNumber(it) && it->valuedouble == (double)m->seed);
    else
        assert_true(cJSON_IsNull(it));
    it = cJSON_GetObjectItemCaseSensitive(c, "dims");
    assert_true(cJSON_IsArray(it) && cJSON_GetArraySize(it) == d);
    for (int k = 0; k < d; k++)
        assert_string_equal(cJSON_GetArrayItem(it, k)->valuestring, embed_dim_name(table, k));
    /* matrices */
    check_matrix(cJSON_GetObjectItemCaseSensitive(root, "X"), m->X, T, d, d, "X");
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(root, "heads");
    assert_true(cJSON_IsArray(hs));
    assert_int_equal(cJSON_GetArraySize(hs), h);
    for (int k = 0; k < h; k++)
        check_json_head(m, cJSON_GetArrayItem(hs, k), k, dk);
    const cJSON *wo = cJSON_GetObjectItemCaseSensitive(root, "Wo");
    if (learned)
        check_matrix(wo, m->params.Wo, d, d, d, "Wo");
    else
        assert_true(cJSON_IsNull(wo));
    check_matrix(cJSON_GetObjectItemCaseSensitive(root, "output"), m->res.output, T, d, d,
                 "output");
    if (with_session) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "session");
        assert_true(cJSON_IsObject(s));
        assert_true(cJSON_GetObjectItemCaseSensitive(s, "query") != NULL);
    }
    cJSON_Delete(root);
}

static void test_print_json_document(void **state)
{
    (void)state;
    static const struct {
        AttnMode mode; int heads, causal, posenc, scale; float tau; uint64_t seed;
        int score; const char *keys;
    } cases[] = {
            {ATTN_MODE_LEARNED, 1, 0, 0, 1, 1.0f, 0, ATTN_SCORE_DOT, ""},
            {ATTN_MODE_LEARNED, 2, 1, 1, 1, 0.7f, 7, ATTN_SCORE_DOT, ""},
            {ATTN_MODE_LEARNED, 4, 0, 1, 0, 2.3f, 123456789, ATTN_SCORE_DOT, ""},
            {ATTN_MODE_BASIC, 1, 1, 0, 1, 1.0f, 0, ATTN_SCORE_DOT, ""},
            {ATTN_MODE_BASIC, 2, 0, 1, 0, 0.5f, 3, ATTN_SCORE_DOT, ""},
            /* issue 14: the score functions and a second sentence */
            {ATTN_MODE_LEARNED, 4, 0, 0, 1, 1.0f, 5, ATTN_SCORE_ADDITIVE, ""},
            {ATTN_MODE_LEARNED, 2, 1, 1, 1, 0.3f, 9, ATTN_SCORE_COSINE, "je suis heureux , Zyx"},
            {ATTN_MODE_LEARNED, 1, 0, 1, 1, 1.0f, 0, ATTN_SCORE_ADDITIVE, "a"},
            {ATTN_MODE_BASIC, 1, 0, 1, 1, 1.0f, 11, ATTN_SCORE_ADDITIVE, "the bank of a river"},
        };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        AttnConfig cfg = attn_config_default();
        cfg.mode = cases[t].mode;
        cfg.heads = cases[t].heads;
        cfg.causal = cases[t].causal;
        cfg.posenc = cases[t].posenc;
        cfg.scale = cases[t].scale;
        cfg.temperature = cases[t].tau;
        cfg.score = cases[t].score;
        Model m;
        assert_int_equal(model_init(&m, table, &cfg), 0);
        if (cases[t].seed)
            model_set_seed(&m, cases[t].seed);
        const char *s = "The train (the one from Zzyzx) left, \"on time\"!";
        assert_int_equal(model_set_text(&m, s, strlen(s)), 0);
        assert_int_equal(model_set_keys(&m, cases[t].keys, strlen(cases[t].keys)), 0);
        assert_int_equal(m.cross, cases[t].keys[0] != '\0');
        if (m.cross)
            assert_int_not_equal(m.Tk, m.T); /* a transposed shape would fail */
        assert_int_equal(model_compute(&m), 0);
        size_t len;
        char *js = json_of(&m, NULL, &len);
        assert_true(len > 0 && js[len - 1] == '\n');
        check_json_document(&m, js, 0);
        free(js);
        js = json_of(&m, "{\"query\": 2, \"note\": \"x\"}", &len);
        check_json_document(&m, js, 1);
        free(js);
        model_destroy(&m);
    }
}

static void test_print_json_escapes(void **state)
{
    (void)state;
    Model m;
    /* tokens with a quote, a backslash, a tab-free control byte and UTF-8 */
    const char s[] = "\" back\\slash ctl\x01x caf\xC3\xA9 \x7F";
    model_open(&m, ATTN_MODE_LEARNED, 1, s);
    assert_int_equal(m.T, 5);
    size_t len;
    char *js = json_of(&m, NULL, &len);
    cJSON *root = cJSON_Parse(js);
    assert_non_null(root);
    const cJSON *toks = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    assert_string_equal(cJSON_GetArrayItem(toks, 0)->valuestring, "\"");
    assert_string_equal(cJSON_GetArrayItem(toks, 1)->valuestring, "back\\slash");
    assert_string_equal(cJSON_GetArrayItem(toks, 2)->valuestring, "ctl\x01x");
    assert_string_equal(cJSON_GetArrayItem(toks, 3)->valuestring, "caf\xC3\xA9");
    assert_string_equal(cJSON_GetArrayItem(toks, 4)->valuestring, "\x7F");
    cJSON_Delete(root);
    /* python's json (strict) accepts it too: no raw control characters */
    for (size_t i = 0; i < len; i++)
        assert_true((unsigned char)js[i] >= 0x20 || js[i] == '\n');
    free(js);
    model_destroy(&m);
}

/* ---- weights round trip ------------------------------------------------------ */

static void assert_params_equal(const AttnParams *a, const AttnParams *b)
{
    assert_int_equal(a->d, b->d);
    assert_int_equal(a->h, b->h);
    assert_int_equal(a->dk, b->dk);
    size_t n = (size_t)a->d * a->d * sizeof(float);
    assert_memory_equal(a->Wq, b->Wq, n);
    assert_memory_equal(a->Wk, b->Wk, n);
    assert_memory_equal(a->Wv, b->Wv, n);
    assert_memory_equal(a->Wo, b->Wo, n);
}

static void test_weights_round_trip(void **state)
{
    (void)state;
    static const struct { AttnMode mode; int heads; uint64_t seed; int posenc, causal; }
        cases[] = {
            {ATTN_MODE_LEARNED, 4, 7, 0, 0},
            {ATTN_MODE_LEARNED, 2, 9007199254740992ULL, 1, 1}, /* 2^53 */
            {ATTN_MODE_LEARNED, 16, 1, 0, 1},
            {ATTN_MODE_LEARNED, 1, 0, 0, 0},
            {ATTN_MODE_BASIC, 1, 0, 1, 0},
        };
    const char *s = "the check was cashed at the bank";
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        AttnConfig cfg = attn_config_default();
        cfg.mode = cases[t].mode;
        cfg.heads = cases[t].heads;
        cfg.posenc = cases[t].posenc;
        cfg.causal = cases[t].causal;
        cfg.temperature = 0.7f;
        Model a, b;
        assert_int_equal(model_init(&a, table, &cfg), 0);
        if (cases[t].seed)
            model_set_seed(&a, cases[t].seed);
        assert_int_equal(model_set_text(&a, s, strlen(s)), 0);
        assert_int_equal(model_compute(&a), 0);
        size_t len;
        char *js = json_of(&a, NULL, &len);
        /* a fresh model: one head, identity, no seed */
        cfg.heads = 1;
        assert_int_equal(model_init(&b, table, &cfg), 0);
        AttnErr err = {0};
        int rc = weights_into(&b, js, len, "a.json", &err);
        if (rc)
            print_error("weights_parse: %s\n", err.msg);
        assert_int_equal(rc, 0);
        if (cases[t].mode == ATTN_MODE_LEARNED) {
            assert_params_equal(&a.params, &b.params);
            assert_int_equal(b.cfg.heads, cases[t].heads);
        }
        assert_int_equal(b.has_seed, a.has_seed);
        if (a.has_seed)
            assert_true(b.seed == a.seed);
        assert_int_equal(model_set_text(&b, s, strlen(s)), 0);
        assert_int_equal(model_compute(&b), 0);
        size_t len2;
        char *js2 = json_of(&b, NULL, &len2);
        if (len != len2 || memcmp(js, js2, len) != 0)
            print_error("case %zu: second print_json differs\n", t);
        assert_int_equal(len, len2);
        assert_memory_equal(js, js2, len);
        free(js);
        free(js2);
        model_destroy(&a);
        model_destroy(&b);
    }
}

/* ---- weights errors ----------------------------------------------------------- */

/* A valid weights document for d = 16 and h heads, Xavier from seed; fields
 * can be tampered with before printing. */
static cJSON *make_doc(int h, uint64_t seed)
{
    AttnParams p;
    assert_int_equal(attn_params_create(&p, 16, h), 0);
    attn_params_xavier(&p, seed);
    cJSON *root = cJSON_CreateObject();
    cJSON *cfg = cJSON_AddObjectToObject(root, "config");
    cJSON_AddNumberToObject(cfg, "heads", h);
    cJSON_AddNumberToObject(cfg, "d_model", 16);
    cJSON *hs = cJSON_AddArrayToObject(root, "heads");
    static const char *const wn[3] = {"Wq", "Wk", "Wv"};
    for (int k = 0; k < h; k++) {
        cJSON *ho = cJSON_CreateObject();
        const float *W[3] = {p.Wq, p.Wk, p.Wv};
        for (int w = 0; w < 3; w++) {
            cJSON *m = cJSON_AddArrayToObject(ho, wn[w]);
            for (int r = 0; r < 16; r++) {
                cJSON *row = cJSON_CreateArray();
                for (int c = 0; c < p.dk; c++)
                    cJSON_AddItemToArray(row, cJSON_CreateNumber(
                        W[w][(size_t)k * 16 * p.dk + (size_t)r * p.dk + c]));
                cJSON_AddItemToArray(m, row);
            }
        }
        cJSON_AddItemToArray(hs, ho);
    }
    cJSON *wo = cJSON_AddArrayToObject(root, "Wo");
    for (int r = 0; r < 16; r++) {
        cJSON *row = cJSON_CreateArray();
        for (int c = 0; c < 16; c++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber(p.Wo[r * 16 + c]));
        cJSON_AddItemToArray(wo, row);
    }
    attn_params_destroy(&p);
    return root;
}

/* Parse text into a model with seeded params; on failure the model must be
 * unchanged. Returns the rc; err filled. */
static int parse_keeps_model(const char *text, size_t len, AttnErr *err)
{
    Model m;
    model_open(&m, ATTN_MODE_LEARNED, 2, "the train");
    model_set_seed(&m, 5);
    AttnParams before = {0};
    assert_int_equal(attn_params_copy(&before, &m.params), 0);
    memset(err, 0, sizeof *err);
    char *exact = malloc(len ? len : 1); /* exact size: over-reads show under ASan */
    assert_non_null(exact);
    memcpy(exact, text, len);
    int rc = weights_into(&m, exact, len, "w.json", err);
    free(exact);
    if (rc < 0) {
        assert_params_equal(&before, &m.params);
        assert_int_equal(m.cfg.heads, 2);
        assert_int_equal(m.has_seed, 1);
        assert_true(m.seed == 5);
        assert_true(err->code > 0);
        assert_true(err->msg[0] != '\0');
        assert_string_equal(err->file, "w.json");
    }
    attn_params_destroy(&before);
    model_destroy(&m);
    return rc;
}

static int parse_doc(cJSON *doc, AttnErr *err)
{
    char *s = cJSON_PrintUnformatted(doc);
    assert_non_null(s);
    int rc = parse_keeps_model(s, strlen(s), err);
    cJSON_free(s);
    cJSON_Delete(doc);
    return rc;
}

/* Issue 14: each head's "v" (dk numbers) and a top-level "vb" (d numbers)
 * are read; in a basic-mode document heads[0].v is vb; a file without
 * them gives the defaults 1/sqrt(dk) and 1/sqrt(d) (computed here in
 * double, not by the program); a wrong length is refused naming the head. */
static void test_weights_v(void **state)
{
    (void)state;
    AttnErr err = {0};
    ParsedWeights w;
    /* no v, no vb: the defaults */
    cJSON *doc = make_doc(4, 3);
    char *txt = cJSON_PrintUnformatted(doc);
    assert_int_equal(weights_parse(&w, 16, txt, strlen(txt), "w.json", &err), 0);
    for (int j = 0; j < 16; j++) {
        assert_true(fabs(w.params.v[j] - 1.0 / sqrt(4.0)) < 1e-7);
        assert_true(fabs(w.params.vb[j] - 1.0 / sqrt(16.0)) < 1e-7);
    }
    parsed_weights_free(&w);
    cJSON_free(txt);
    /* each head's own v, and vb */
    cJSON *hs = cJSON_GetObjectItem(doc, "heads");
    for (int k = 0; k < 4; k++) {
        float v[4];
        for (int j = 0; j < 4; j++)
            v[j] = 0.25f * (float)(k * 4 + j) - 1.5f;
        cJSON_AddItemToObject(cJSON_GetArrayItem(hs, k), "v", cJSON_CreateFloatArray(v, 4));
    }
    float vb[16];
    for (int j = 0; j < 16; j++)
        vb[j] = -0.125f * (float)j;
    cJSON_AddItemToObject(doc, "vb", cJSON_CreateFloatArray(vb, 16));
    txt = cJSON_PrintUnformatted(doc);
    assert_int_equal(weights_parse(&w, 16, txt, strlen(txt), "w.json", &err), 0);
    for (int j = 0; j < 16; j++) {
        assert_true(w.params.v[j] == 0.25f * (float)j - 1.5f);
        assert_true(w.params.vb[j] == -0.125f * (float)j);
    }
    parsed_weights_free(&w);
    cJSON_free(txt);
    /* heads[1].v of 3 numbers: refused, naming the file and the head */
    cJSON *d2 = cJSON_Duplicate(doc, 1);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d2, "heads"), 1), "v"), 0);
    txt = cJSON_PrintUnformatted(d2);
    cJSON_Delete(d2);
    assert_int_equal(weights_parse(&w, 16, txt, strlen(txt), "w.json", &err), -ATTN_E_SHAPE);
    char msg[1200];
    attn_err_format(&err, msg, sizeof msg);
    assert_string_equal(msg, "w.json: heads[1].v: expected 4 numbers, found 3");
    cJSON_free(txt);
    /* a string inside v, v not an array, vb of 15: refused, the model kept */
    static const char *const bad_v[] = {"[1, 2, \"x\", 4]", "7", "[1, 2, 3, 1e9]"};
    for (size_t i = 0; i < 3; i++) {
        d2 = cJSON_Duplicate(doc, 1);
        cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(d2, "heads"), 2), "v",
                                  cJSON_Parse(bad_v[i]));
        assert_true(parse_doc(d2, &err) < 0);
        assert_non_null(strstr(err.msg, "heads[2].v"));
    }
    d2 = cJSON_Duplicate(doc, 1);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(d2, "vb"), 15);
    assert_int_equal(parse_doc(d2, &err), -ATTN_E_SHAPE);
    assert_non_null(strstr(err.msg, "vb: expected 16 numbers, found 15"));
    /* basic mode: heads[0].v is vb (d numbers) */
    d2 = make_doc(1, 3);
    cJSON_AddStringToObject(cJSON_GetObjectItem(d2, "config"), "mode", "basic");
    cJSON_AddItemToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(d2, "heads"), 0), "v",
                          cJSON_CreateFloatArray(vb, 16));
    txt = cJSON_PrintUnformatted(d2);
    assert_int_equal(weights_parse(&w, 16, txt, strlen(txt), "b.json", &err), 0);
    for (int j = 0; j < 16; j++) {
        assert_true(w.params.vb[j] == vb[j]);
        assert_true(fabs(w.params.v[j] - 0.25) < 1e-7); /* 1/sqrt(16), h = 1 */
    }
    parsed_weights_free(&w);
    cJSON_free(txt);
    cJSON_Delete(d2);
    cJSON_Delete(doc);
}

static void test_weights_errors_syntax(void **state)
{
    (void)state;
    AttnErr err;
    const char *bad = "{\n  \"config\": {\n    \"heads\": 1,,\n  }\n}\n";
    assert_int_equal(parse_keeps_model(bad, strlen(bad), &err), -ATTN_E_PARSE);
    assert_int_equal(err.line, 3);
    const char *bad5 = "{\"config\": {\"heads\": 1},\n\n\n\n \"heads\": [}";
    assert_int_equal(parse_keeps_model(bad5, strlen(bad5), &err), -ATTN_E_PARSE);
    assert_int_equal(err.line, 5);
    static const char *const junk[] = {"", "   ", "hello", "{", "[1, 2]", "null", "42",
                                       "\"config\"", "{\"config\": 1} trailing"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        assert_true(parse_keeps_model(junk[i], strlen(junk[i]), &err) < 0);
    /* a NUL inside the text */
    const char nul[] = "{\"config\": {\"heads\": 1}\0}";
    assert_true(parse_keeps_model(nul, sizeof nul - 1, &err) < 0);
}

static void test_weights_errors_shapes(void **state)
{
    (void)state;
    AttnErr err;
    /* the unmodified document is fine */
    assert_int_equal(parse_doc(make_doc(2, 1), &err), 0);
    assert_int_equal(parse_doc(make_doc(4, 1), &err), 0);

    /* Wq with 15 rows */
    cJSON *d = make_doc(2, 1);
    cJSON *wq = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 1), "Wq");
    cJSON_DeleteItemFromArray(wq, 15);
    assert_int_equal(parse_doc(d, &err), -ATTN_E_SHAPE);
    /* a row of Wv with 7 numbers */
    d = make_doc(2, 1);
    cJSON *wv = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 0), "Wv");
    cJSON_DeleteItemFromArray(cJSON_GetArrayItem(wv, 3), 0);
    assert_int_equal(parse_doc(d, &err), -ATTN_E_SHAPE);
    /* a row with 9 numbers */
    d = make_doc(2, 1);
    wv = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 0), "Wk");
    cJSON_AddItemToArray(cJSON_GetArrayItem(wv, 0), cJSON_CreateNumber(0));
    assert_int_equal(parse_doc(d, &err), -ATTN_E_SHAPE);
    /* Wo 16×15 */
    d = make_doc(1, 1);
    cJSON_DeleteItemFromArray(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "Wo"), 15), 15);
    assert_int_equal(parse_doc(d, &err), -ATTN_E_SHAPE);
    /* Wo as a flat array */
    d = make_doc(1, 1);
    cJSON_ReplaceItemInObject(d, "Wo", cJSON_CreateArray());
    assert_true(parse_doc(d, &err) < 0);
    /* Wo a number */
    d = make_doc(1, 1);
    cJSON_ReplaceItemInObject(d, "Wo", cJSON_CreateNumber(1));
    assert_true(parse_doc(d, &err) < 0);
    /* three head objects for heads = 2 */
    d = make_doc(2, 1);
    cJSON_AddItemToArray(cJSON_GetObjectItem(d, "heads"),
                         cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 0), 1));
    assert_int_equal(parse_doc(d, &err), -ATTN_E_SHAPE);
    /* heads 4 in config but matrices for 2 heads (16×8) */
    d = make_doc(2, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "config"), "heads", cJSON_CreateNumber(4));
    cJSON_AddItemToArray(cJSON_GetObjectItem(d, "heads"),
                         cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 0), 1));
    cJSON_AddItemToArray(cJSON_GetObjectItem(d, "heads"),
                         cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 0), 1));
    assert_int_equal(parse_doc(d, &err), -ATTN_E_SHAPE);
    /* a head that is not an object */
    d = make_doc(1, 1);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(d, "heads"), 0, cJSON_CreateNumber(1));
    assert_true(parse_doc(d, &err) < 0);
    /* d_model for another table */
    d = make_doc(1, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "config"), "d_model", cJSON_CreateNumber(8));
    assert_int_equal(parse_doc(d, &err), -ATTN_E_SHAPE);
}

static void test_weights_errors_values(void **state)
{
    (void)state;
    AttnErr err;
    /* a string for a number */
    cJSON *d = make_doc(2, 1);
    cJSON *wq = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 0), "Wq");
    cJSON_ReplaceItemInArray(cJSON_GetArrayItem(wq, 2), 1, cJSON_CreateString("0.5"));
    assert_true(parse_doc(d, &err) < 0);
    assert_non_null(strstr(err.msg, "Wq"));
    /* true, null and an array in place of a number */
    static const int kinds[] = {0, 1, 2};
    for (size_t k = 0; k < 3; k++) {
        d = make_doc(1, 1);
        cJSON *wo = cJSON_GetObjectItem(d, "Wo");
        cJSON *v = kinds[k] == 0 ? cJSON_CreateTrue()
                   : kinds[k] == 1 ? cJSON_CreateNull() : cJSON_CreateArray();
        cJSON_ReplaceItemInArray(cJSON_GetArrayItem(wo, 5), 5, v);
        assert_true(parse_doc(d, &err) < 0);
    }
    /* huge values: 1e38 fits a float but is refused; 1e39 and 1e300 overflow */
    static const double huge[] = {1e38, -1e38, 1e39, 1e300, -3.4e38};
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
        d = make_doc(2, 1);
        wq = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 1), "Wv");
        cJSON_ReplaceItemInArray(cJSON_GetArrayItem(wq, 0), 0, cJSON_CreateNumber(huge[k]));
        assert_int_equal(parse_doc(d, &err), -ATTN_E_RANGE);
        d = make_doc(1, 1);
        cJSON_ReplaceItemInArray(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "Wo"), 15), 15,
                                 cJSON_CreateNumber(huge[k]));
        assert_int_equal(parse_doc(d, &err), -ATTN_E_RANGE);
    }
    const char *text = "{\"config\": {\"heads\": 1}, \"heads\": [{\"Wq\": null, \"Wk\": null, "
                       "\"Wv\": null}], \"Wo\": [[1e38]]}";
    assert_true(parse_keeps_model(text, strlen(text), &err) < 0);
}

static void test_weights_errors_missing(void **state)
{
    (void)state;
    AttnErr err;
    static const char *const head_keys[] = {"Wq", "Wk", "Wv"};
    for (int k = 0; k < 3; k++) {
        cJSON *d = make_doc(2, 1);
        cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "heads"), 1),
                                   head_keys[k]);
        assert_true(parse_doc(d, &err) < 0);
        assert_non_null(strstr(err.msg, head_keys[k]));
    }
    cJSON *d = make_doc(2, 1);
    cJSON_DeleteItemFromObject(d, "Wo");
    assert_true(parse_doc(d, &err) < 0);
    assert_non_null(strstr(err.msg, "Wo"));
    d = make_doc(2, 1);
    cJSON_DeleteItemFromObject(d, "heads");
    assert_true(parse_doc(d, &err) < 0);
    d = make_doc(2, 1);
    cJSON_DeleteItemFromObject(d, "config");
    assert_true(parse_doc(d, &err) < 0);
    d = make_doc(2, 1);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(d, "config"), "heads");
    assert_true(parse_doc(d, &err) < 0);
    /* config.heads as a string */
    d = make_doc(1, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "config"), "heads", cJSON_CreateString("1"));
    assert_true(parse_doc(d, &err) < 0);
}

static void test_weights_errors_heads(void **state)
{
    (void)state;
    AttnErr err;
    static const double bad[] = {3, 5, 0, -2, 1.5, 32, 65, 1e9, -1e300};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *d = make_doc(1, 1);
        cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "config"), "heads",
                                  cJSON_CreateNumber(bad[i]));
        int rc = parse_doc(d, &err);
        if (rc != -ATTN_E_HEADS)
            print_error("heads = %g: rc %d\n", bad[i], rc);
        assert_int_equal(rc, -ATTN_E_HEADS);
    }
}

/* The seed a file gives must be kept as it is, or not used at all: a value
 * that is no whole number in the --seed range must not turn into another
 * seed. */
static void test_weights_seed_values(void **state)
{
    (void)state;
    /* written as text: cJSON's own printer rounds 2^53 to 15 digits */
    static const char *const seeds[] = {"0", "42", "9007199254740992", "-1", "1.5",
                                        "1e30", "18446744073709551616"};
    int bad = 0;
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        cJSON *d = make_doc(1, 1);
        char *body = cJSON_PrintUnformatted(d);
        cJSON_Delete(d);
        const char *pre = "{\"config\":{";
        assert_true(strncmp(body, pre, strlen(pre)) == 0);
        size_t n = strlen(body) + 64;
        char *s = malloc(n);
        snprintf(s, n, "%s\"seed\":%s,%s", pre, seeds[i], body + strlen(pre));
        cJSON_free(body);
        double want = strtod(seeds[i], NULL);
        Model m;
        model_open(&m, ATTN_MODE_LEARNED, 1, "the");
        AttnErr err = {0};
        int rc = weights_into(&m, s, strlen(s), "seed.json", &err);
        free(s);
        if (rc == 0 && m.has_seed && (double)m.seed != want) {
            print_error("config.seed %s was loaded as seed %llu\n", seeds[i],
                        (unsigned long long)m.seed);
            bad++;
        }
        if (want >= 0 && want <= 9007199254740992.0 && want == floor(want)) {
            assert_int_equal(rc, 0);
            assert_int_equal(m.has_seed, 1);
            assert_true((double)m.seed == want);
        }
        model_destroy(&m);
    }
    assert_int_equal(bad, 0);
}

static void test_weights_deep_nesting(void **state)
{
    (void)state;
    AttnErr err;
    size_t n = 10000;
    char *s = malloc(2 * n + 64);
    assert_non_null(s);
    memset(s, '[', n);
    assert_true(parse_keeps_model(s, n, &err) < 0);
    memset(s + n, ']', n);
    assert_true(parse_keeps_model(s, 2 * n, &err) < 0);
    /* objects nested 3900 deep inside "config" */
    size_t len = 0;
    len += (size_t)sprintf(s + len, "{\"config\":");
    for (size_t i = 0; i < 3900; i++)
        len += (size_t)sprintf(s + len, "{\"a\":");
    assert_true(parse_keeps_model(s, len, &err) < 0);
    free(s);
}

static void test_weights_truncated(void **state)
{
    (void)state;
    AttnConfig cfg = attn_config_default();
    cfg.heads = 2;
    Model a;
    assert_int_equal(model_init(&a, table, &cfg), 0);
    model_set_seed(&a, 3);
    assert_int_equal(model_set_text(&a, "the cat", 7), 0);
    assert_int_equal(model_compute(&a), 0);
    size_t len;
    char *js = json_of(&a, NULL, &len);
    Model b;
    cfg.heads = 1;
    assert_int_equal(model_init(&b, table, &cfg), 0);
    AttnParams id;
    assert_int_equal(attn_params_create(&id, 16, 1), 0);
    int successes = 0;
    for (size_t cut = 0; cut <= len; cut++) {
        char *part = malloc(cut ? cut : 1);
        assert_non_null(part);
        memcpy(part, js, cut);
        AttnErr err = {0};
        int rc = weights_into(&b, part, cut, "cut.json", &err);
        free(part);
        if (rc == 0) {
            /* only the whole document (less its final newline) may load, and
             * then with exactly the original weights */
            assert_true(cut >= len - 1);
            assert_params_equal(&a.params, &b.params);
            successes++;
            model_destroy(&b);
            assert_int_equal(model_init(&b, table, &cfg), 0);
        } else {
            assert_true(err.code > 0);
            assert_params_equal(&id, &b.params);
            assert_int_equal(b.has_seed, 0);
        }
    }
    assert_true(successes >= 1);
    attn_params_destroy(&id);
    free(js);
    model_destroy(&a);
    model_destroy(&b);
}

static void test_weights_load_file(void **state)
{
    (void)state;
    ParsedWeights w;
    AttnErr err = {0};
    assert_int_equal(weights_load(&w, 16, "/nonexistent/attnviz/w.json", &err), -ATTN_E_IO);
    assert_string_equal(err.file, "/nonexistent/attnviz/w.json");
    assert_null(w.params.Wq);
    assert_true(weights_load(&w, 16, "tests", &err) < 0); /* a directory */
    assert_null(w.params.Wq);

    /* a --print json file of a seeded 2-head model gives its weights as
     * data, with no model to load them into */
    Model a, b;
    model_open(&a, ATTN_MODE_LEARNED, 2, "the train");
    model_set_seed(&a, 77);
    assert_int_equal(model_compute(&a), 0);
    char path[] = "/tmp/attnviz-weights-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(print_json(f, &a, NULL), 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(weights_load(&w, 16, path, &err), 0);
    assert_int_equal(w.params.d, 16);
    assert_int_equal(w.params.h, 2);
    assert_int_equal(w.has_seed, 1);
    assert_true(w.seed == 77);
    assert_params_equal(&w.params, &a.params);
    /* the same file for a table of d = 8 is refused */
    ParsedWeights w8;
    memset(&err, 0, sizeof err);
    assert_int_equal(weights_load(&w8, 8, path, &err), -ATTN_E_SHAPE);
    assert_null(w8.params.Wq);
    assert_non_null(strstr(err.msg, "d_model"));
    unlink(path);

    /* model_set_weights refuses weights of another d, the model unchanged */
    model_open(&b, ATTN_MODE_LEARNED, 1, "the");
    AttnParams before = {0};
    assert_int_equal(attn_params_copy(&before, &b.params), 0);
    ParsedWeights other = w;
    other.params.d = 8;
    assert_int_equal(model_set_weights(&b, &other), -ATTN_E_SHAPE);
    assert_params_equal(&before, &b.params);
    assert_int_equal(b.cfg.heads, 1);
    assert_int_equal(b.has_seed, 0);
    /* and takes these: heads, weights and seed */
    assert_int_equal(model_set_weights(&b, &w), 0);
    assert_int_equal(b.cfg.heads, 2);
    assert_params_equal(&b.params, &a.params);
    assert_int_equal(b.has_seed, 1);
    assert_true(b.seed == 77);
    parsed_weights_free(&w);
    assert_null(w.params.Wq);
    assert_int_equal(model_compute(&b), 0);
    assert_int_equal(b.res.h, 2);
    attn_params_destroy(&before);
    model_destroy(&a);
    model_destroy(&b);
}

/* ---- CSV ------------------------------------------------------------------------ */

static void test_print_csv(void **state)
{
    (void)state;
    Model m;
    model_open(&m, ATTN_MODE_LEARNED, 2, "the train left the station on time");
    model_set_seed(&m, 4);
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(model_prepare(&m, MODEL_WEIGHTS, MODEL_HEAD_AVG), 0); /* as main.c does */
    for (int head = -1; head < 2; head++) {
        size_t len;
        char *csv = csv_of(&m, head, &len);
        const float *W = model_matrix(&m, MODEL_WEIGHTS, head);
        char *save = NULL, *line = strtok_r(csv, "\n", &save);
        assert_string_equal(line, "query,the,train,left,the,station,on,time");
        int rows = 0;
        while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
            assert_true(rows < m.T);
            char *fs = NULL, *f = strtok_r(line, ",", &fs);
            assert_string_equal(f, tok_text(&m.toks, rows));
            int j = 0;
            double sum = 0;
            while ((f = strtok_r(NULL, ",", &fs)) != NULL) {
                assert_true(j < m.T);
                char *end;
                float v = strtof(f, &end);
                assert_true(*end == '\0');
                assert_true(v == W[(size_t)rows * m.T + j]); /* %.9g round-trips */
                sum += v;
                j++;
            }
            assert_int_equal(j, m.T);
            assert_true(fabs(sum - 1.0) < 1e-6);
            rows++;
        }
        assert_int_equal(rows, m.T);
        free(csv);
    }
    /* the head and the average differ (so the head argument is used) */
    size_t l0, la;
    char *c0 = csv_of(&m, 0, &l0), *ca = csv_of(&m, MODEL_HEAD_AVG, &la);
    assert_true(l0 != la || memcmp(c0, ca, l0) != 0);
    free(c0);
    free(ca);
    model_destroy(&m);
}

static void test_print_csv_quoting(void **state)
{
    (void)state;
    Model m;
    model_open(&m, ATTN_MODE_BASIC, 1, "a, \"b\"");
    assert_int_equal(m.T, 5);
    size_t len;
    char *csv = csv_of(&m, 0, &len);
    /* tokens: a , " b " */
    const char *hdr = "query,a,\",\",\"\"\"\",b,\"\"\"\"\n";
    assert_true(strncmp(csv, hdr, strlen(hdr)) == 0);
    /* the row labels are quoted the same way */
    assert_non_null(strstr(csv, "\n\",\","));
    assert_non_null(strstr(csv, "\n\"\"\"\","));
    /* 1 header + 5 rows */
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += csv[i] == '\n';
    assert_int_equal(lines, 6);
    free(csv);
    model_destroy(&m);
}

static void test_print_text(void **state)
{
    (void)state;
    Model m;
    AttnConfig cfg = attn_config_default();
    cfg.causal = 1;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    assert_int_equal(model_set_text(&m, "the zzyzx train", 15), 0);
    assert_int_equal(model_compute(&m), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(print_text(f, &m, MODEL_WEIGHTS, 0), 0);
    size_t len;
    char *s = read_stream(f, &len);
    fclose(f);
    assert_non_null(strstr(s, "causal mask"));
    assert_non_null(strstr(s, "zzyzx"));
    assert_non_null(strstr(s, "not in the embedding table"));
    /* row "the" (first query under the mask): 1.000 then two "-" */
    const char *row = strstr(s, "\nthe ");
    assert_non_null(row);
    assert_non_null(strstr(row, "1.000"));
    free(s);
    model_destroy(&m);
}

/* ---- sentences files ------------------------------------------------------------- */

/* '|||' pairs: both sides trimmed, keys "" for plain lines, an empty side
 * an error naming the file and line; the first '|||' splits. */
static void test_sentences_pairs(void **state)
{
    (void)state;
    const char data[] = "# pairs\n je suis heureux ||| i am happy \nplain line\n"
                        "a|||b\n\tx ||| y ||| z\r\n";
    SentenceList s = {0};
    AttnErr err = {0};
    assert_int_equal(sentences_parse(&s, data, sizeof data - 1, "t.txt", &err), 0);
    assert_int_equal(s.n, 4);
    static const char *const q[] = {"je suis heureux", "plain line", "a", "x"};
    static const char *const k[] = {"i am happy", "", "b", "y ||| z"};
    static const long line[] = {2, 3, 4, 5};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(s.text[i], q[i]);
        assert_string_equal(s.keys[i], k[i]);
        assert_int_equal(s.line[i], line[i]);
    }
    sentences_free(&s);
    assert_null(s.keys);
    static const struct { const char *text, *msg; } bad[] = {
        {"ok\nfine ||| good\nfirst |||   \n", "translation.txt:3: empty key sentence after '|||'"},
        {"ok\n|||keys\n", "translation.txt:2: empty query sentence before '|||'"},
        {"  |||  \n", "translation.txt:1: empty query sentence before '|||'"},
        {"q |||\r\n", "translation.txt:1: empty key sentence after '|||'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[1200];
        memset(&err, 0, sizeof err);
        assert_int_equal(sentences_parse(&s, bad[i].text, strlen(bad[i].text), "translation.txt",
                                         &err), -ATTN_E_PARSE);
        attn_err_format(&err, msg, sizeof msg);
        assert_string_equal(msg, bad[i].msg);
        assert_int_equal(s.n, 0);
    }
    /* the shipped file: every line a pair */
    assert_int_equal(sentences_load(&s, "sentences/translation.txt", &err), 0);
    assert_true(s.n >= 5);
    for (int i = 0; i < s.n; i++)
        assert_true(s.text[i][0] && s.keys[i][0]);
    assert_string_equal(s.keys[0], "i am happy");
    sentences_free(&s);
}

static void test_sentences_parse(void **state)
{
    (void)state;
    const char data[] = "\xEF\xBB\xBF# a comment\n\n  first one  \r\n\tsecond\r\n   # indented comment\n"
                        "\r\n   \nthird line";
    SentenceList s = {0};
    AttnErr err = {0};
    assert_int_equal(sentences_parse(&s, data, sizeof data - 1, "s.txt", &err), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.text[0], "first one");
    assert_string_equal(s.text[1], "second");
    assert_string_equal(s.text[2], "third line");
    assert_int_equal(s.line[0], 3);
    assert_int_equal(s.line[1], 4);
    assert_int_equal(s.line[2], 8);
    sentences_free(&s);
    assert_int_equal(s.n, 0);

    /* NUL: an error naming the line */
    const char nul[] = "ok\nfine\nbin\0ary\nmore\n";
    memset(&err, 0, sizeof err);
    assert_int_equal(sentences_parse(&s, nul, sizeof nul - 1, "bin.txt", &err), -ATTN_E_PARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.file, "bin.txt");
    assert_int_equal(s.n, 0);

    /* empty: nothing, blanks, comments only */
    static const char *const empty[] = {"", "\n\n", "# only\n  # comments\r\n", "   \t  "};
    for (size_t i = 0; i < 4; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(sentences_parse(&s, empty[i], strlen(empty[i]), "e.txt", &err),
                         -ATTN_E_EMPTY);
        assert_true(err.msg[0] != '\0');
    }
    /* data need not end in NUL */
    char *exact = malloc(5);
    memcpy(exact, "ab\ncd", 5);
    assert_int_equal(sentences_parse(&s, exact, 5, "x", &err), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.text[1], "cd");
    sentences_free(&s);
    free(exact);
    /* the classroom file: sentence 3 */
    assert_int_equal(sentences_load(&s, "sentences/classroom.txt", &err), 0);
    assert_true(s.n > 10);
    assert_string_equal(s.text[2], "the bank approved the loan for the new house");
    sentences_free(&s);
    /* a directory */
    memset(&err, 0, sizeof err);
    assert_true(sentences_load(&s, "sentences", &err) < 0);
    assert_true(err.msg[0] != '\0');
}

/* ---- atomic writes --------------------------------------------------------------- */

static int write_text(FILE *f, void *ctx)
{
    return fputs((const char *)ctx, f) < 0 ? -ATTN_E_IO : 0;
}

static int write_then_fail(FILE *f, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < 10000; i++)
        fputs("partial data ", f);
    return -ATTN_E_IO;
}

static int write_model_json(FILE *f, void *ctx)
{
    return print_json(f, (const Model *)ctx, NULL);
}

static void test_io_write_atomic(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], sub[256];
    snprintf(path, sizeof path, "%s/out.json", dir);
    AttnErr err = {0};
    /* create */
    assert_int_equal(io_write_atomic(path, write_text, "first version\n", &err), 0);
    size_t len;
    char *got = test_slurp(path, &len);
    assert_non_null(got);
    assert_string_equal(got, "first version\n");
    free(got);
    /* replace */
    assert_int_equal(io_write_atomic(path, write_text, "second\n", &err), 0);
    got = test_slurp(path, &len);
    assert_string_equal(got, "second\n");
    free(got);
    assert_int_equal(test_count_entries(dir), 1);
    /* a failing writer: the old file stays byte for byte, no temp file */
    memset(&err, 0, sizeof err);
    assert_true(io_write_atomic(path, write_then_fail, NULL, &err) < 0);
    assert_true(err.msg[0] != '\0');
    got = test_slurp(path, &len);
    assert_int_equal(len, 7);
    assert_memory_equal(got, "second\n", 7);
    free(got);
    assert_int_equal(test_count_entries(dir), 1);
    /* a failing writer where no file was: still nothing */
    snprintf(sub, sizeof sub, "%s/new.csv", dir);
    assert_true(io_write_atomic(sub, write_then_fail, NULL, &err) < 0);
    assert_int_equal(access(sub, F_OK), -1);
    assert_int_equal(test_count_entries(dir), 1);
    /* a missing folder */
    snprintf(sub, sizeof sub, "%s/missing/x.csv", dir);
    memset(&err, 0, sizeof err);
    assert_true(io_write_atomic(sub, write_text, "x", &err) < 0);
    assert_int_equal(err.code, ATTN_E_IO);
    assert_true(err.msg[0] != '\0');
    char msg[1200];
    attn_err_format(&err, msg, sizeof msg);
    assert_non_null(strstr(msg, "missing/x.csv"));
    /* a directory as the target */
    memset(&err, 0, sizeof err);
    assert_true(io_write_atomic(dir, write_text, "x", &err) < 0);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    /* print_json through the atomic writer gives the same bytes */
    Model m;
    model_open(&m, ATTN_MODE_LEARNED, 1, "the train");
    assert_int_equal(io_write_atomic(path, write_model_json, &m, &err), 0);
    size_t jl;
    char *js = json_of(&m, NULL, &jl);
    got = test_slurp(path, &len);
    assert_int_equal(len, jl);
    assert_memory_equal(got, js, jl);
    free(got);
    free(js);
    assert_int_equal(test_count_entries(dir), 1);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_train_station),
        cmocka_unit_test(test_seed_check_bank),
        cmocka_unit_test(test_set_word_vector_and_clear),
        cmocka_unit_test(test_oov_words),
        cmocka_unit_test(test_set_heads),
        cmocka_unit_test(test_print_json_document),
        cmocka_unit_test(test_print_json_escapes),
        cmocka_unit_test(test_weights_round_trip),
        cmocka_unit_test(test_weights_errors_syntax),
        cmocka_unit_test(test_weights_errors_shapes),
        cmocka_unit_test(test_weights_errors_values),
        cmocka_unit_test(test_weights_errors_missing),
        cmocka_unit_test(test_weights_errors_heads),
        cmocka_unit_test(test_weights_seed_values),
        cmocka_unit_test(test_weights_deep_nesting),
        cmocka_unit_test(test_weights_truncated),
        cmocka_unit_test(test_weights_load_file),
        cmocka_unit_test(test_print_csv),
        cmocka_unit_test(test_print_csv_quoting),
        cmocka_unit_test(test_print_text),
        cmocka_unit_test(test_sentences_parse),
        cmocka_unit_test(test_sentences_pairs),
        cmocka_unit_test(test_weights_v),
        cmocka_unit_test(test_io_write_atomic),
    };
    return cmocka_run_group_tests(tests, setup_table, teardown_table);
}
