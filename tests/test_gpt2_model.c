/* GPT-2 end to end (issue 25): every fixture of tests/fixtures/gpt2 opened
 * from its Hugging Face folder (F32, F16, BF16, both name prefixes, the
 * buffers, tied and untied output layers, each activation and scaling),
 * run by the forward pass on the reference's ids, and compared with the
 * float64 reference of Hugging Face's modeling_gpt2: every map to 1e-5,
 * every next-token probability to 1e-5. The shipped trained model
 * (assets/models/nano-sort) against llm-viz's own activations, and it sorts.
 * The GPT-2 source's headless path (--print tokens, predictions, the maps)
 * through model_open_path. Run from the repository root. */
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
#include <unistd.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/gpt2.h"
#include "attnviz/model_source.h"
#include "attnviz/gpt2.h"
#include "attnviz/model_file.h"
#include "attnviz/io.h"

#define CFG(m) ((const Gpt2Config *)(m)->cfg)
#define WTS(m) ((const Gpt2Weights *)(m)->weights)

#define FIX "tests/fixtures/gpt2"

static const char *const folders[] = {"f32-h3", "f32-bare-h4", "f16-h5", "bf16-h6",
                                      "f32-h1-noscale", "f32-h2-erf", "f32-h2-relu"};

/* ref.json's "ids" (or batch_ids[row]) into ids; how many. */
static int ref_ids(const char *dir, int row, int *ids, int max)
{
    char path[512];
    char *data;
    size_t n;
    AttnErr err = {0};
    snprintf(path, sizeof path, "%s/ref.json", dir);
    assert_int_equal(io_read_file(path, 1 << 20, &data, &n, &err), 0);
    cJSON *root = cJSON_ParseWithLength(data, n);
    assert_non_null(root);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, row < 0 ? "ids" : "batch_ids");
    if (row >= 0)
        list = cJSON_GetArrayItem(list, row);
    assert_true(cJSON_IsArray(list));
    int T = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        assert_true(T < max);
        ids[T++] = it->valueint;
    }
    cJSON_Delete(root);
    free(data);
    return T;
}

/* An .npy of the reference (float64) opened as an attention file: its
 * element (a, b, c, d) of shape (L, H, Tq, Tk). */
static void open_npy(AttnFile *f, const char *dir, const char *name)
{
    char path[512];
    AttnErr err = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = attn_file_open(f, path, &err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", path, err.msg);
    assert_int_equal(rc, 0);
}

/* The forward on the reference's ids: maps and probabilities at 1e-5. */
static void check_folder(const char *name)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", FIX, name);
    ModelFile *m = NULL;
    AttnErr err = {0};
    int rc = model_file_open(dir, &desc_gpt2, &m, &err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", dir, err.msg);
    assert_int_equal(rc, 0);
    int ids[64], T = ref_ids(dir, -1, ids, 64);
    Rt *st = NULL;
    assert_int_equal(rt_create(&st, &arch_gpt2, CFG(m), &err), 0);
    assert_int_equal(rt_forward(st, WTS(m), ids, T, NULL, &err), 0);
    AttnFile maps, probs;
    open_npy(&maps, dir, "maps.npy");
    open_npy(&probs, dir, "probs.npy");
    int L = CFG(m)->n_layer, H = CFG(m)->n_head, V = CFG(m)->n_vocab;
    assert_int_equal(maps.L, L);
    assert_int_equal(maps.H, H);
    assert_int_equal(maps.Tq, T);
    double worst = 0.0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            float *got = malloc(sizeof(float) * T * T);
            assert_non_null(got);
            rt_map(st, l, h, got, (size_t)T);
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double d = fabs((double)got[(size_t)i * T + j] - attn_file_at(&maps, l, h, i, j));
                    worst = d > worst ? d : worst;
                }
            free(got);
        }
    assert_true(worst < 1e-5);
    /* probs.npy is (T, V): seen as (1, 1, T, V) */
    float *logits = malloc(sizeof(float) * (size_t)V);
    assert_non_null(logits);
    double pworst = 0.0;
    for (int pos = 0; pos < T; pos++) {
        int top[LM_TOP_K];
        float p[LM_TOP_K];
        int k = V < LM_TOP_K ? V : LM_TOP_K;
        assert_int_equal(rt_top_k(st, WTS(m), pos, k, top, p, logits, &err), 0);
        for (int r = 0; r < k; r++) {
            double d = fabs((double)p[r] - attn_file_at(&probs, 0, 0, pos, top[r]));
            pworst = d > pworst ? d : pworst;
            if (r) /* most likely first */
                assert_true(p[r] <= p[r - 1]);
        }
    }
    assert_true(pworst < 1e-5);
    printf("%-16s L %d H %d T %2d: maps within %.1e, probabilities within %.1e\n", name, L, H, T, worst, pworst);
    free(logits);
    attn_file_close(&maps);
    attn_file_close(&probs);
    rt_destroy(st);
    model_file_close(m);
}

static void test_fixtures(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof folders / sizeof folders[0]; k++)
        check_folder(folders[k]);
}

/* The trained sorter from the installed assets: layer 0's maps and the
 * logits of llm-viz's three sequences, as llm-viz computed them (float32). */
static void test_nano_sort_llmviz(void **state)
{
    (void)state;
    ModelFile *m = NULL;
    AttnErr err = {0};
    assert_int_equal(model_file_open("assets/models/nano-sort", &desc_gpt2, &m, &err), 0);
    assert_int_equal(CFG(m)->n_layer, 3);
    assert_int_equal(CFG(m)->n_head, 3);
    assert_int_equal(CFG(m)->n_embd, 48);
    AttnFile attn0, logits;
    open_npy(&attn0, FIX "/nano-sort", "llmviz_attn0.npy");
    open_npy(&logits, FIX "/nano-sort", "llmviz_logits.npy");
    float lg[3];
    for (int b = 0; b < 3; b++) {
        int ids[16], T = ref_ids(FIX "/nano-sort", b, ids, 16);
        Rt *st = NULL;
        assert_int_equal(rt_create(&st, &arch_gpt2, CFG(m), &err), 0);
        assert_int_equal(rt_forward(st, WTS(m), ids, T, NULL, &err), 0);
        /* attn0 is (3, 3, 11, 11): sequence, head, i, j */
        float map[16 * 16];
        for (int h = 0; h < 3; h++) {
            rt_map(st, 0, h, map, (size_t)T);
            for (int i = 0; i < T; i++)
                for (int j = 0; j <= i; j++)
                    assert_true(fabs(map[(size_t)i * T + j] - attn_file_at(&attn0, b, h, i, j)) < 1e-5);
        }
        /* logits is (3, 11, 3) */
        for (int i = 0; i < T; i++) {
            assert_int_equal(rt_logits(st, WTS(m), i, lg, &err), 0);
            for (int v = 0; v < 3; v++)
                assert_true(fabs(lg[v] - attn_file_at(&logits, 0, b, i, v)) < 1e-4);
        }
        rt_destroy(st);
    }
    attn_file_close(&attn0);
    attn_file_close(&logits);
    model_file_close(m);
}

/* The headless path: the model found by name among the installed ones, the
 * text tokenized (A, B, C are the vocabulary), the maps picked, and the
 * sorter continuing six letters with the smallest. */
static void test_nano_sort_sorts(void **state)
{
    (void)state;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    const char *text = "CBABBC";
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    assert_int_equal(g->ids.n, 6);
    int want[6] = {2, 1, 0, 1, 1, 2};
    for (int i = 0; i < 6; i++)
        assert_int_equal(g->ids.id[i], want[i]);
    assert_non_null(g->im);
    assert_int_equal(g->im->f.L, 3);
    assert_int_equal(g->im->f.H, 3);
    assert_string_equal(g->im->f.q_tokens[2], "A");
    /* the sorted letters come out one after the other: A, B, B, B, C, C */
    static const char sorted[] = "ABBBCC";
    char buf[32];
    snprintf(buf, sizeof buf, "%s", text);
    for (int k = 0; k < 5; k++) {
        int rc = model_compute_text(g, buf, strlen(buf), &err);
        if (rc < 0)
            fprintf(stderr, "%s: %s\n", buf, err.msg);
        assert_int_equal(rc, 0);
        int top[1];
        float p[1];
        assert_int_equal(lm_top_k(&g->lm, g->ids.n - 1, 1, top, p, &err), 0);
        assert_int_equal(top[0], sorted[k] - 'A');
        assert_true(p[0] > 0.5f);
        size_t n = strlen(buf);
        buf[n] = sorted[k];
        buf[n + 1] = '\0';
    }
    /* more tokens than n_positions (11): refused, saying the limit */
    assert_int_equal(model_compute_text(g, "ABCABCABCABC", 12, &err), -ATTN_E_TOO_MANY_TOKENS);
    assert_non_null(strstr(err.msg, "11"));
    /* an empty text: no maps */
    assert_true(model_compute_text(g, "", 0, &err) < 0);
    model_opened_free(g);
}

/* Bad folders: a message naming what is wrong, nothing left open. */
static void test_bad_models(void **state)
{
    (void)state;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_true(model_open_path("no-such-model-here", 0, &g, &err) < 0);
    assert_null(g);
    assert_non_null(strstr(err.msg, "huggingface-cli download"));
    assert_non_null(strstr(err.msg, "models--no-such-model-here"));
    memset(&err, 0, sizeof err);
    assert_true(model_open_path("/nonexistent/model", 0, &g, &err) < 0);
    assert_null(g);
    char said[1200];
    attn_err_format(&err, said, sizeof said);
    assert_non_null(strstr(said, "/nonexistent/model"));
    memset(&err, 0, sizeof err);
    assert_true(model_open_path("tests/fixtures/attention", 0, &g, &err) < 0);
    assert_null(g);
    assert_true(err.msg[0] != '\0');
}

/* lm.h picks the architecture by config.json's model_type: one it does not
 * compute is named with those it does; a config without one is named. */
static void test_model_types(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-lmtype-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/config.json", dir);
    static const struct {
        const char *json, *said[2];
    } cases[] = {
        {"{\"model_type\": \"mamba\", \"n_layer\": 1}", {"model_type is \"mamba\"", "gpt2"}},
        {"{\"n_layer\": 1}", {"no \"model_type\"", "config.json"}},
        {"{\"model_type\": [1]}", {"must be a string", "config.json"}},
        {"{\"model_type\": \"gpt2\",", {"not valid JSON", "config.json"}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(cases[c].json, f);
        fclose(f);
        ModelOpened *g = NULL;
        AttnErr err = {0};
        char said[1200];
        assert_true(model_open_path(dir, 0, &g, &err) < 0);
        assert_null(g);
        attn_err_format(&err, said, sizeof said);
        for (int k = 0; k < 2; k++)
            if (!strstr(said, cases[c].said[k]))
                fail_msg("%s: \"%s\" lacks \"%s\"", cases[c].json, said, cases[c].said[k]);
    }
    remove(path);
    rmdir(dir);
}

int main(void)
{
    setenv("ATTNVIZ_DATADIR", "assets", 1); /* the installed models: the tree's */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_nano_sort_llmviz),
        cmocka_unit_test(test_nano_sort_sorts),
        cmocka_unit_test(test_bad_models),
        cmocka_unit_test(test_model_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
