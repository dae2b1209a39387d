/* Tests for the model reader on the Llama family (src/io/model_config.c,
 * model_file.c with core/arch_llama.c's tables)
 * and its forward end to end, on the folders of
 * tests/fixtures/llama/make_llama_fixtures.py: each opened (F32, F16, BF16,
 * sharded with an index, tied and untied, biases, llama3 scaling, head_dim
 * given), run on the reference's ids and compared with its float64 forward
 * (every map and every next-token probability to 1e-5); config.json's
 * defaults and choices; and every bad input refused with its code and a
 * message naming the file, tensor, key or value: shapes with both shapes as
 * stored, lm_head missing when untied, an index that is not JSON, a missing
 * shard, heads not divisible, unknown model_type and rope types, a llama3
 * block missing a field; a BF16 file with one F16 matrix (all converted).
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/llama.h"
#include "attnviz/model_file.h"

#include "test_gpt2_fs.h"

#define CFG(m) ((const LlamaConfig *)(m)->cfg)
#define WTS(m) ((const LlamaWeights *)(m)->weights)

#define FIX "tests/fixtures/llama/"

static const char *const fixtures[] = {"llama-kv1-tied", "llama-kv2-bias-f16", "llama3-rope-mha",
                                       "qwen2-kv2-bf16", "mistral-sharded", "mistral-window",
                                       "qwen2-window", "qwen2-layer-types"};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

static int json_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valueint;
}

static ModelFile *open_ok(const char *dir)
{
    ModelFile *m = NULL;
    AttnErr err = {0};
    int rc = model_file_open(dir, &desc_llama, &m, &err);
    if (rc != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
    assert_non_null(m);
    return m;
}

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

/* ---- every fixture against its reference ----------------------------------------- */
static void check_fixture(const char *name)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, FIX "%s", name);
    snprintf(path, sizeof path, "%s/ref.json", dir);
    cJSON *ref = read_json(path);
    ModelFile *m = open_ok(dir);
    const LlamaConfig *c = CFG(m);
    assert_int_equal(c->n_layer, json_int(ref, "n_layer"));
    assert_int_equal(c->n_head, json_int(ref, "n_head"));
    assert_int_equal(c->n_kv_head, json_int(ref, "n_kv_head"));
    assert_int_equal(c->head_dim, json_int(ref, "head_dim"));
    assert_int_equal(c->hidden, json_int(ref, "hidden"));
    assert_int_equal(c->n_inner, json_int(ref, "n_inner"));
    assert_int_equal(c->n_vocab, json_int(ref, "vocab_size"));
    assert_int_equal(c->n_positions, json_int(ref, "n_positions"));
    assert_int_equal(c->bos_id, 1);
    assert_int_equal(c->eos_id, 2);
    assert_int_equal(m->n_shards, json_int(ref, "shards"));
    int tied = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "tied"));
    assert_int_equal(c->tied, tied);
    assert_true((WTS(m)->lm_head == WTS(m)->embed &&
                 WTS(m)->lm_head_m == WTS(m)->embed_m) == tied);
    const char *dtype = cJSON_GetObjectItemCaseSensitive(ref, "dtype")->valuestring;
    /* BF16: the matrices and tables used in place as bfloat16, the vectors
     * converted; else the matrices converted (transposed), F32 vectors and
     * tables in place, F16 all converted */
    int vecs = (2 + 3 * c->qkv_bias + c->o_bias) * c->n_layer + 1;
    int mats = 7 * c->n_layer, tables = 1 + !tied;
    if (!strcmp(dtype, "BF16")) {
        assert_int_equal(m->n_bf16, mats + tables);
        assert_int_equal(m->n_converted, vecs);
        assert_non_null(WTS(m)->layers[0].wq_m);
        assert_null(WTS(m)->layers[0].wq);
        assert_true(WTS(m)->lm_head_m == WTS(m)->embed_m || !tied);
    } else {
        assert_int_equal(m->n_bf16, 0);
        assert_int_equal(m->n_converted, strcmp(dtype, "F32") ? vecs + mats + tables : mats);
        assert_null(WTS(m)->layers[0].wq_m);
    }
    assert_null(m->tokenizer_path);

    int ids[64], T = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ref, "ids")) ids[T++] = it->valueint;
    Rt *s = NULL;
    AttnErr err = {0};
    assert_int_equal(rt_create(&s, &arch_llama, c, &err), 0);
    assert_int_equal(rt_forward(s, WTS(m), ids, T, NULL, &err), 0);
    AttnFile maps, probs;
    open_npy(&maps, dir, "maps.npy");
    open_npy(&probs, dir, "probs.npy");
    assert_int_equal(maps.L, c->n_layer);
    assert_int_equal(maps.H, c->n_head);
    assert_int_equal(maps.Tq, T);
    double worst = 0, pworst = 0;
    for (int l = 0; l < c->n_layer; l++)
        for (int h = 0; h < c->n_head; h++) {
            float *got = malloc(sizeof(float) * T * T);
            assert_non_null(got);
            rt_map(s, l, h, got, (size_t)T);
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double d = fabs(got[(size_t)i * T + j] - attn_file_at(&maps, l, h, i, j));
                    worst = d > worst ? d : worst;
                }
            free(got);
        }
    /* every output row's probability (padding rows included) */
    int V = c->n_vocab;
    float *lg = malloc(sizeof(float) * V);
    assert_non_null(lg);
    for (int pos = 0; pos < T; pos++) {
        assert_int_equal(rt_logits(s, WTS(m), pos, lg, &err), 0);
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++)
            mx = lg[v] > mx ? lg[v] : mx;
        for (int v = 0; v < V; v++)
            sum += exp(lg[v] - mx);
        for (int v = 0; v < V; v++) {
            double d = fabs(exp(lg[v] - mx) / sum - attn_file_at(&probs, 0, 0, pos, v));
            pworst = d > pworst ? d : pworst;
        }
        int top[LM_TOP_K];
        float p[LM_TOP_K];
        assert_int_equal(rt_top_k(s, WTS(m), pos, LM_TOP_K, top, p, lg, &err), 0);
        for (int r = 0; r < LM_TOP_K; r++)
            assert_true(fabs(p[r] - attn_file_at(&probs, 0, 0, pos, top[r])) < 1e-5);
    }
    printf("%-20s L %d H %d KV %d T %2d %-4s: maps within %.1e, probabilities within %.1e\n",
           name, c->n_layer, c->n_head, c->n_kv_head, T, dtype, worst, pworst);
    assert_true(worst < 1e-5);
    assert_true(pworst < 1e-5);
    free(lg);
    attn_file_close(&maps);
    attn_file_close(&probs);
    rt_destroy(s);
    model_file_close(m);
    cJSON_Delete(ref);
}

static void test_fixtures(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_FIXTURES; k++)
        check_fixture(fixtures[k]);
}

/* ---- config.json ----------------------------------------------------------------- */
#define BASE "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, " \
             "\"intermediate_size\": 96, \"vocab_size\": 100"

static int parse(LlamaConfig *c, const char *text, AttnErr *err)
{
    memset(err, 0, sizeof *err);
    return model_config_parse(&desc_llama, c, text, strlen(text), "cfg.json", err);
}

static void test_config(void **state)
{
    (void)state;
    LlamaConfig c;
    AttnErr err;
    /* defaults */
    assert_int_equal(parse(&c, "{\"model_type\": \"llama\", " BASE "}", &err), 0);
    assert_int_equal(c.arch, LLAMA_ARCH_LLAMA);
    assert_int_equal(c.n_kv_head, 4);
    assert_int_equal(c.head_dim, 16);
    assert_int_equal(c.n_positions, 2048);
    assert_true(fabsf(c.rms_eps - 1e-6f) < 1e-12f);
    assert_true(c.rope_theta == 10000.0);
    assert_false(c.rope_llama3 || c.tied || c.qkv_bias || c.o_bias || c.sliding_window);
    assert_int_equal(c.bos_id, -1);
    /* qwen2: q, k, v biases always; its window only with use_sliding_window */
    assert_int_equal(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"sliding_window\": 8, "
                               "\"attention_bias\": true}", &err), 0);
    assert_true(c.qkv_bias && !c.o_bias && c.sliding_window == 0 && c.n_positions == 32768);
    assert_int_equal(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"sliding_window\": 8, "
                               "\"use_sliding_window\": true}", &err), 0);
    assert_int_equal(c.sliding_window, 8);
    assert_true(c.max_window_layers == 28 && c.n_layer_types == 0);
    /* transformers 5's "rope_parameters" without "rope_theta": refused, not
     * silently replaced by the defaults; beside "rope_theta" it is not needed */
    expect_err(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"rope_parameters\": "
                         "{\"rope_theta\": 1000000.0, \"rope_type\": \"default\"}}", &err), err,
               ATTN_E_UNSUPPORTED, "\"rope_parameters\" (transformers 5's layout) is not read yet",
               "cfg.json");
    assert_int_equal(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"rope_theta\": 5.0, "
                               "\"rope_parameters\": {\"rope_theta\": 5.0}}", &err), 0);
    /* layer_types: one per layer, two names */
    assert_int_equal(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"use_sliding_window\": "
                               "true, \"sliding_window\": 8, \"max_window_layers\": 0, "
                               "\"layer_types\": [\"full_attention\", \"sliding_attention\"]}",
                           &err), 0);
    assert_true(c.n_layer_types == 2 && c.slides[0] == 0 && c.slides[1] == 1 &&
                c.max_window_layers == 0);
    expect_err(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"layer_types\": "
                         "[\"full_attention\"]}", &err), err, ATTN_E_SHAPE,
               "layer_types has 1 entries for num_hidden_layers 2", "cfg.json");
    expect_err(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"layer_types\": "
                         "[\"full_attention\", \"chunked_attention\"]}", &err), err,
               ATTN_E_UNSUPPORTED, "layer_types \"chunked_attention\" is not computed", "cfg.json");
    expect_err(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"layer_types\": [1, 2]}",
                     &err), err, ATTN_E_PARSE, "\"layer_types\"'s element 1 must be a string",
               "cfg.json");
    expect_err(parse(&c, "{\"model_type\": \"qwen2\", " BASE ", \"layer_types\": 3}", &err),
               err, ATTN_E_PARSE, "\"layer_types\" must be a list of at most 4096 strings",
               "cfg.json");
    /* mistral: its window (null: none); llama: attention_bias on q, k, v and o */
    assert_int_equal(parse(&c, "{\"model_type\": \"mistral\", " BASE ", \"sliding_window\": 4096}",
                           &err), 0);
    assert_true(c.arch == LLAMA_ARCH_MISTRAL && c.sliding_window == 4096 && !c.qkv_bias);
    assert_int_equal(parse(&c, "{\"model_type\": \"mistral\", " BASE ", \"sliding_window\": null}",
                           &err), 0);
    assert_int_equal(c.sliding_window, 0);
    assert_int_equal(parse(&c, "{\"model_type\": \"llama\", " BASE ", \"attention_bias\": true, "
                               "\"head_dim\": 32, \"num_key_value_heads\": 2, "
                               "\"eos_token_id\": [99, 3], \"bos_token_id\": 100}", &err), 0);
    assert_true(c.qkv_bias && c.o_bias && c.head_dim == 32 && c.n_kv_head == 2);
    assert_int_equal(c.eos_id, 99);
    assert_int_equal(c.bos_id, -1);
    /* rope_scaling: llama3 by rope_type or the older type; default is none */
    assert_int_equal(parse(&c, "{\"model_type\": \"llama\", " BASE ", \"rope_theta\": 500000.0, "
                               "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 32.0, "
                               "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
                               "\"original_max_position_embeddings\": 8192}}", &err), 0);
    assert_true(c.rope_llama3 && c.rope_factor == 32.0 && c.rope_orig_max == 8192);
    assert_true(c.rope_theta == 500000.0);
    assert_int_equal(parse(&c, "{\"model_type\": \"llama\", " BASE ", \"rope_scaling\": "
                               "{\"type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 1, "
                               "\"high_freq_factor\": 4, \"original_max_position_embeddings\": "
                               "8192}}", &err), 0);
    assert_true(c.rope_llama3 && c.rope_factor == 8.0);
    assert_int_equal(parse(&c, "{\"model_type\": \"llama\", " BASE ", \"rope_scaling\": "
                               "{\"rope_type\": \"default\"}}", &err), 0);
    assert_false(c.rope_llama3);
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *piece;
    } bad[] = {
        {"{\"model_type\": \"gemma\", " BASE "}", ATTN_E_UNSUPPORTED, "model_type \"gemma\""},
        {"{" BASE "}", ATTN_E_PARSE, "model_type"},
        {"{\"model_type\": \"llama\", " BASE ", \"num_key_value_heads\": 3}", ATTN_E_HEADS,
         "num_attention_heads 4 is not divisible by num_key_value_heads 3"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 66, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 9, \"vocab_size\": 10}",
         ATTN_E_HEADS, "hidden_size 66"},
        {"{\"model_type\": \"llama\", " BASE ", \"rope_scaling\": {\"rope_type\": \"yarn\", "
         "\"factor\": 4.0}}", ATTN_E_UNSUPPORTED, "\"yarn\""},
        {"{\"model_type\": \"llama\", " BASE ", \"rope_scaling\": {\"type\": \"linear\", "
         "\"factor\": 4.0}}", ATTN_E_UNSUPPORTED, "\"linear\""},
        {"{\"model_type\": \"llama\", " BASE ", \"rope_scaling\": {\"rope_type\": \"llama3\", "
         "\"factor\": 8, \"low_freq_factor\": 1, \"original_max_position_embeddings\": 8192}}",
         ATTN_E_PARSE, "high_freq_factor"},
        {"{\"model_type\": \"llama\", " BASE ", \"rope_scaling\": {\"rope_type\": \"llama3\", "
         "\"factor\": 8, \"low_freq_factor\": 1, \"high_freq_factor\": 4}}", ATTN_E_PARSE,
         "original_max_position_embeddings"},
        {"{\"model_type\": \"llama\", " BASE ", \"rope_scaling\": {\"factor\": 8}}", ATTN_E_PARSE,
         "rope_type"},
        {"{\"model_type\": \"llama\", " BASE ", \"hidden_act\": \"gelu\"}", ATTN_E_UNSUPPORTED,
         "hidden_act \"gelu\""},
        {"{\"model_type\": \"llama\", " BASE ", \"mlp_bias\": true}", ATTN_E_UNSUPPORTED,
         "mlp_bias"},
        {"{\"model_type\": \"llama\", " BASE ", \"rms_norm_eps\": -1}", ATTN_E_RANGE,
         "rms_norm_eps"},
        {"{\"model_type\": \"llama\", " BASE ", \"head_dim\": 7}", ATTN_E_SHAPE, "head_dim 7"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 64}", ATTN_E_PARSE, "num_hidden_layers"},
        {"{\"model_type\": \"llama\", " BASE ", \"tie_word_embeddings\": 1}", ATTN_E_PARSE,
         "tie_word_embeddings"},
        {"{\"model_type\": \"llama\",\n" BASE ",}", ATTN_E_PARSE, "not valid JSON"},
        {"[1]", ATTN_E_PARSE, "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        LlamaConfig c;
        AttnErr err;
        int rc = parse(&c, bad[i].text, &err);
        if (rc != -bad[i].code || !strstr(err.msg, bad[i].piece) || strcmp(err.file, "cfg.json"))
            fail_msg("case %zu: rc %d \"%s\" (%s); expected %d with \"%s\"", i, rc, err.msg,
                     err.file, bad[i].code, bad[i].piece);
        assert_int_equal(c.n_layer, 0); /* zeroed */
    }
}

/* ---- bad folders ----------------------------------------------------------------- */

/* A copy of fixture's files into a new temp folder. */
static char *copy_fixture(const char *fixture)
{
    static const char *const files[] = {"config.json", "model.safetensors",
                                        "model.safetensors.index.json",
                                        "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors"};
    char *dir = fs_tmpdir();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, FIX "%s/%s", fixture, files[i]);
        FILE *f = fopen(a, "rb");
        if (!f)
            continue;
        fclose(f);
        fs_copy(a, fs_join(b, dir, files[i]));
    }
    return dir;
}

static void set_config(const char *dir, const char *key, cJSON *value)
{
    char p[1024];
    cJSON *cfg = read_json(fs_join(p, dir, "config.json"));
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, key);
    cJSON_AddItemToObject(cfg, key, value);
    char *text = cJSON_Print(cfg);
    fs_write_text(p, text);
    free(text);
    cJSON_Delete(cfg);
}

static int open_err(const char *dir, AttnErr *err)
{
    ModelFile *m = (ModelFile *)1;
    memset(err, 0, sizeof *err);
    int rc = model_file_open(dir, &desc_llama, &m, err);
    assert_null(m);
    return rc;
}

static void test_bad_folders(void **state)
{
    (void)state;
    AttnErr err;
    char p[1024];
    /* k_proj stored [in, out] by mistake: both shapes named, as stored */
    char *dir = copy_fixture("llama-kv2-bias-f16");
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON *t = cJSON_GetObjectItemCaseSensitive(st.header, "model.layers.1.self_attn.k_proj.weight");
    cJSON *shape = cJSON_GetObjectItemCaseSensitive(t, "shape");
    assert_int_equal(cJSON_GetArrayItem(shape, 0)->valueint, 24);
    cJSON_ReplaceItemInArray(shape, 0, cJSON_CreateNumber(32));
    cJSON_ReplaceItemInArray(shape, 1, cJSON_CreateNumber(24));
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "model.layers.1.self_attn.k_proj.weight: [24, 32] expected, [32, 24] found",
               "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
    /* a tensor of another dtype; a missing tensor */
    dir = copy_fixture("llama-kv1-tied");
    st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, "model.layers.1.mlp.up_proj.weight");
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor model.layers.1.mlp.up_proj.weight", "model.safetensors");
    fs_copy(FIX "llama-kv1-tied/model.safetensors", p);
    st = fs_st_read(p);
    t = cJSON_GetObjectItemCaseSensitive(st.header, "model.norm.weight");
    cJSON_ReplaceItemInObject(t, "dtype", cJSON_CreateString("I32"));
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED, "model.norm.weight is I32", NULL);
    fs_copy(FIX "llama-kv1-tied/model.safetensors", p);
    /* untied without lm_head.weight: named, never the embeddings instead */
    set_config(dir, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "lm_head.weight", NULL);
    assert_non_null(strstr(err.msg, "tie_word_embeddings false"));
    /* config.json's refusals reach the folder's caller, naming config.json */
    set_config(dir, "num_key_value_heads", cJSON_CreateNumber(3));
    expect_err(open_err(dir, &err), err, ATTN_E_HEADS, "not divisible by num_key_value_heads 3",
               "config.json");
    set_config(dir, "model_type", cJSON_CreateString("phi3"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED, "\"phi3\"", "config.json");
    unlink(fs_join(p, dir, "config.json"));
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "no config.json", NULL);
    fs_rm_tree(dir);
    free(dir);
    /* BF16 but one matrix F16: every matrix converted (one kernel for all),
     * the BF16 table still in place; the forward runs on it */
    dir = copy_fixture("qwen2-kv2-bf16");
    st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    t = cJSON_GetObjectItemCaseSensitive(st.header, "model.layers.1.mlp.down_proj.weight");
    cJSON_ReplaceItemInObject(t, "dtype", cJSON_CreateString("F16"));
    fs_st_write(p, &st);
    ModelFile *mixed = open_ok(dir);
    assert_int_equal(mixed->n_bf16, 1);
    assert_non_null(WTS(mixed)->embed_m);
    assert_null(WTS(mixed)->layers[0].wq_m);
    assert_non_null(WTS(mixed)->layers[0].wq);
    assert_int_equal(mixed->n_converted, 7 * 2 + (2 + 3) * 2 + 1);
    Rt *ls = NULL;
    const int ids[3] = {1, 5, 9};
    assert_int_equal(rt_create(&ls, &arch_llama, CFG(mixed), &err), 0);
    assert_int_equal(rt_forward(ls, WTS(mixed), ids, 3, NULL, &err), 0);
    rt_destroy(ls);
    model_file_close(mixed);
    fs_rm_tree(dir);
    free(dir);
    /* shards: one the index lists missing, then an index that is not JSON */
    dir = copy_fixture("mistral-sharded");
    unlink(fs_join(p, dir, "model-00002-of-00002.safetensors"));
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "", "model-00002-of-00002.safetensors");
    fs_write_text(fs_join(p, dir, "model.safetensors.index.json"), "{\"weight_map\": ");
    expect_err(open_err(dir, &err), err, ATTN_E_PARSE, "not JSON", "model.safetensors.index.json");
    unlink(p);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "no model.safetensors", NULL);
    fs_rm_tree(dir);
    free(dir);
    expect_err(open_err("tests/fixtures/llama/no-such-folder", &err), err, ATTN_E_NOT_FOUND, "",
               "no-such-folder");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_bad_folders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
