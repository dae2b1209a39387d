/* Tests for Qwen3's description (src/core/arch_qwen3.c): its fixtures
 * (tests/fixtures/families/qwen3/) opened through lm_open with the sizes,
 * windows and bfloat16-in-place their ref.json says; config.json's
 * defaults as transformers' Qwen3Config has them, read through the
 * description and seen through the runtime's shape (the config struct is
 * the file's own); every bad config.json refused with its code and a
 * message naming the file, the key or value and qwen3; tensors of the wrong
 * shape, a missing lm_head when untied and missing biases refused naming
 * the .safetensors file and the tensor. The maps and probabilities against
 * the float64 reference are tests/test_families.c's. Run from the
 * repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/arch.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"

#include "test_gpt2_fs.h"
#include "test_arch_util.h"

extern const ArchDesc desc_qwen3;

#define FIX "tests/fixtures/families/qwen3/"

static int json_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valueint;
}

/* ---- the fixtures ---------------------------------------------------------------- */
static void check_fixture(const char *name, int bos, int n_positions)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, FIX "%s", name);
    snprintf(path, sizeof path, "%s/ref.json", dir);
    cJSON *ref = read_json(path);
    Lm lm;
    AttnErr err = {0};
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
    assert_string_equal(lm.info.arch, "qwen3");
    assert_ptr_equal(lm.arch, &desc_qwen3);
    int L = lm.info.n_layer;
    assert_int_equal(L, json_int(ref, "n_layer"));
    assert_int_equal(lm.info.n_head, json_int(ref, "n_head"));
    assert_int_equal(lm.info.n_kv_head, json_int(ref, "n_kv_head"));
    assert_int_equal(lm.info.d_head, json_int(ref, "head_dim"));
    assert_int_equal(lm.info.n_vocab, json_int(ref, "vocab_size"));
    assert_int_equal(lm.info.n_positions, n_positions);
    assert_int_equal(lm.info.bos_id, bos);
    assert_int_equal(lm.info.scale_attn, 1);
    assert_string_equal(lm.info.embed_name, "embed_tokens");
    /* BF16: the 7 matrices a layer and the tables in place, the vectors
     * (2 norms, q_norm, k_norm a layer; the final norm) converted */
    const char *dtype = cJSON_GetObjectItemCaseSensitive(ref, "dtype")->valuestring;
    int tied = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "tied"));
    if (!strcmp(dtype, "BF16")) {
        assert_int_equal(lm.model->n_bf16, 7 * L + 1 + !tied);
        assert_int_equal(lm.model->n_converted, 4 * L + 1);
    } else {
        assert_int_equal(lm.model->n_bf16, 0);
    }
    /* each layer's window as the reference's */
    int ids[64], T = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ref, "ids")) ids[T++] = it->valueint;
    assert_int_equal(lm_forward(&lm, ids, T, NULL, &err), 0);
    const cJSON *win = cJSON_GetObjectItemCaseSensitive(ref, "windows");
    assert_int_equal(cJSON_GetArraySize(win), L);
    for (int l = 0; l < L; l++) {
        assert_int_equal(lm.rt->attn[l].window, cJSON_GetArrayItem(win, l)->valueint);
        assert_int_equal(lm.rt->attn[l].causal, 1);
        assert_true(fabsf(lm.rt->attn[l].mul - 1.0f / sqrtf((float)lm.info.d_head)) < 1e-7f);
    }
    int top[LM_TOP_K];
    float p[LM_TOP_K];
    assert_int_equal(lm_top_k(&lm, T - 1, LM_TOP_K, top, p, &err), 0);
    assert_true(p[0] >= p[1] && p[1] > 0.0f);
    lm_close(&lm);
    cJSON_Delete(ref);
}

static void test_fixtures(void **state)
{
    (void)state;
    check_fixture("qwen3-f32-tied", 1, 64);
    check_fixture("qwen3-bf16-window", 1, 32);
    check_fixture("qwen3-f16-bias-llama3", 1, 64);
}

/* ---- config.json ----------------------------------------------------------------- */
#define BASE "\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, " \
             "\"intermediate_size\": 96, \"vocab_size\": 100"
#define H4 BASE ", \"num_attention_heads\": 4, \"num_key_value_heads\": 2"

static unsigned char cfg_buf[1 << 16];

static int parse(const char *text, AttnErr *err)
{
    assert_true(desc_qwen3.rt->cfg_size <= sizeof cfg_buf);
    memset(err, 0, sizeof *err);
    return model_config_parse(&desc_qwen3, cfg_buf, text, strlen(text), "config.json", err);
}

static RtShape shape_of(const char *text)
{
    AttnErr err;
    RtShape s;
    if (parse(text, &err) != 0)
        fail_msg("%s: %s", text, err.msg);
    desc_qwen3.rt->shape(cfg_buf, &s);
    return s;
}

static int bos_of(void)
{
    ArchFacts f;
    desc_qwen3.facts(cfg_buf, &f);
    return f.bos_id;
}

static void test_config(void **state)
{
    (void)state;
    /* Qwen3Config's defaults: 32 key-value heads, head_dim 128 (not 64 /
     * heads), 32768 positions, θ 10000, no scaling, no bos */
    RtShape s = shape_of("{" BASE ", \"num_attention_heads\": 32}");
    assert_int_equal(s.n_layer, 2);
    assert_int_equal(s.n_head, 32);
    assert_int_equal(s.n_kv_head, 32);
    assert_int_equal(s.d_head, 128);
    assert_int_equal(s.hidden, 64);
    assert_int_equal(s.n_positions, 32768);
    assert_int_equal(s.n_vocab, 100);
    assert_int_equal(s.n_rows, 2);
    assert_int_equal(s.row_w[0], 96);
    assert_int_equal(s.rope.kind, ROPE_HALF);
    assert_int_equal(s.rope.dims, 128);
    assert_true(s.rope.theta == 10000.0);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
    assert_int_equal(s.rope2.kind, ROPE_NONE);
    assert_int_equal(bos_of(), -1);
    /* num_key_value_heads null: the heads; head_dim given; the rest given */
    s = shape_of("{" BASE ", \"num_attention_heads\": 8, \"num_key_value_heads\": null, "
                 "\"head_dim\": 24, \"max_position_embeddings\": 40960, \"rope_theta\": "
                 "1000000.0, \"rope_scaling\": null, \"bos_token_id\": 7, \"hidden_act\": "
                 "\"silu\", \"sliding_window\": null, \"use_sliding_window\": false, "
                 "\"rms_norm_eps\": 1e-6, \"tie_word_embeddings\": true, \"attention_bias\": "
                 "false, \"attention_dropout\": 0.0}");
    assert_true(s.n_kv_head == 8 && s.d_head == 24 && s.rope.dims == 24);
    assert_true(s.n_positions == 40960 && s.rope.theta == 1000000.0);
    assert_int_equal(bos_of(), 7);
    /* a bos id outside the vocabulary: none; a list: its first */
    shape_of("{" H4 ", \"bos_token_id\": 100}");
    assert_int_equal(bos_of(), -1);
    shape_of("{" H4 ", \"bos_token_id\": [5, 6]}");
    assert_int_equal(bos_of(), 5);
    /* rope_scaling: linear (by rope_type or the older type), llama3, default */
    s = shape_of("{" H4 ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 4.0}}");
    assert_true(s.rope.scaling == ROPE_SCALE_LINEAR && s.rope.factor == 4.0);
    s = shape_of("{" H4 ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}}");
    assert_true(s.rope.scaling == ROPE_SCALE_LINEAR && s.rope.factor == 2.0);
    s = shape_of("{" H4 ", \"rope_theta\": 500000.0, \"rope_scaling\": {\"rope_type\": "
                 "\"llama3\", \"factor\": 32.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": "
                 "4.0, \"original_max_position_embeddings\": 8192}}");
    assert_true(s.rope.scaling == ROPE_SCALE_LLAMA3 && s.rope.factor == 32.0 &&
                s.rope.low_freq == 1.0 && s.rope.high_freq == 4.0 && s.rope.orig_max == 8192 &&
                s.rope.theta == 500000.0);
    s = shape_of("{" H4 ", \"rope_scaling\": {\"rope_type\": \"default\", \"factor\": 9.0}}");
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
    /* windows read only with use_sliding_window: a bad one otherwise unread */
    shape_of("{" H4 ", \"sliding_window\": 0, \"max_window_layers\": 0}");
    shape_of("{" H4 ", \"use_sliding_window\": true, \"sliding_window\": null, "
             "\"layer_types\": [\"full_attention\", \"full_attention\"]}");
    shape_of("{" H4 ", \"use_sliding_window\": true, \"layer_types\": [\"full_attention\", "
             "\"sliding_attention\"]}");
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *piece;
    } bad[] = {
        /* required sizes, each named */
        {"{\"model_type\": \"qwen3\", \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 9, \"vocab_size\": 10}", ATTN_E_PARSE,
         "no \"hidden_size\": a qwen3 config.json gives it"},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 9, \"vocab_size\": 10}", ATTN_E_PARSE,
         "no \"num_hidden_layers\": a qwen3"},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"intermediate_size\": 9, \"vocab_size\": 10}", ATTN_E_PARSE,
         "no \"num_attention_heads\": a qwen3"},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"vocab_size\": 10}", ATTN_E_PARSE,
         "no \"intermediate_size\": a qwen3"},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 9}", ATTN_E_PARSE,
         "no \"vocab_size\": a qwen3"},
        {"{\"hidden_size\": 64}", ATTN_E_PARSE, "no \"model_type\" string (qwen3)"},
        {"{\"model_type\": \"qwen2\", \"hidden_size\": 64}", ATTN_E_UNSUPPORTED,
         "model_type \"qwen2\" is not qwen3"},
        /* wrong types and values */
        {"{\"model_type\": \"qwen3\", \"hidden_size\": \"64\", \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 9, \"vocab_size\": 10}", ATTN_E_RANGE,
         "qwen3: \"hidden_size\" must be a whole number from 1 to 131072"},
        {"{" BASE ", \"num_attention_heads\": 4.5}", ATTN_E_RANGE,
         "qwen3: \"num_attention_heads\" must be a whole number"},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_hidden_layers\": 0, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 9, \"vocab_size\": 10}", ATTN_E_RANGE,
         "qwen3: \"num_hidden_layers\""},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 9, \"vocab_size\": 16777217}",
         ATTN_E_RANGE, "qwen3: \"vocab_size\" must be a whole number from 1 to 16777216"},
        {"{" BASE ", \"num_attention_heads\": 4, \"num_key_value_heads\": 3}", ATTN_E_HEADS,
         "qwen3: num_attention_heads 4 is not divisible by num_key_value_heads 3"},
        {"{" BASE ", \"num_attention_heads\": 4}", ATTN_E_HEADS,
         "qwen3: num_attention_heads 4 is not divisible by num_key_value_heads 32 (32 is "
         "Qwen3Config's default when absent)"},
        {"{" BASE ", \"num_attention_heads\": 4, \"num_key_value_heads\": 0}", ATTN_E_RANGE,
         "qwen3: \"num_key_value_heads\" must be null or a whole number from 1"},
        {"{" H4 ", \"head_dim\": 7}", ATTN_E_SHAPE, "qwen3: head_dim 7 is odd"},
        {"{" H4 ", \"head_dim\": null}", ATTN_E_RANGE, "qwen3: \"head_dim\" must be a whole"},
        {"{" H4 ", \"max_position_embeddings\": -5}", ATTN_E_RANGE,
         "qwen3: \"max_position_embeddings\""},
        {"{" H4 ", \"rms_norm_eps\": -1}", ATTN_E_RANGE, "qwen3: \"rms_norm_eps\""},
        {"{" H4 ", \"rms_norm_eps\": \"small\"}", ATTN_E_RANGE, "qwen3: \"rms_norm_eps\""},
        {"{" H4 ", \"rope_theta\": 0}", ATTN_E_RANGE, "qwen3: \"rope_theta\""},
        /* rope_scaling: only none, default, linear and llama3 */
        {"{" H4 ", \"rope_scaling\": 3}", ATTN_E_PARSE,
         "qwen3: \"rope_scaling\" must be null or an object"},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0, "
         "\"original_max_position_embeddings\": 32768}}", ATTN_E_UNSUPPORTED,
         "qwen3: rope_scaling type \"yarn\" is not computed"},
        {"{" H4 ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}}",
         ATTN_E_UNSUPPORTED, "rope_scaling type \"dynamic\""},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": \"longrope\"}}", ATTN_E_UNSUPPORTED,
         "rope_scaling type \"longrope\""},
        {"{" H4 ", \"rope_scaling\": {\"factor\": 8}}", ATTN_E_PARSE,
         "qwen3: rope_scaling has no \"rope_type\" (or \"type\") string"},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": 1}}", ATTN_E_PARSE,
         "qwen3: rope_scaling has no \"rope_type\""},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": \"linear\"}}", ATTN_E_PARSE,
         "qwen3: rope_scaling of type linear or llama3 has no \"factor\""},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": -2}}", ATTN_E_RANGE,
         "qwen3: rope_scaling's \"factor\" must be a positive number"},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
         "\"low_freq_factor\": 1, \"original_max_position_embeddings\": 8192}}", ATTN_E_PARSE,
         "qwen3: rope_scaling of type llama3 has no \"high_freq_factor\""},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
         "\"low_freq_factor\": 4, \"high_freq_factor\": 1, "
         "\"original_max_position_embeddings\": 8192}}", ATTN_E_RANGE,
         "qwen3: rope_scaling's high_freq_factor 1 must be above its low_freq_factor 4"},
        {"{" H4 ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
         "\"low_freq_factor\": 1, \"high_freq_factor\": 4, "
         "\"original_max_position_embeddings\": 81.5}}", ATTN_E_RANGE,
         "qwen3: rope_scaling's \"original_max_position_embeddings\" must be a whole number"},
        /* the activation, the booleans */
        {"{" H4 ", \"hidden_act\": \"gelu\"}", ATTN_E_UNSUPPORTED,
         "qwen3: hidden_act \"gelu\" is not computed"},
        {"{" H4 ", \"hidden_act\": 3}", ATTN_E_PARSE, "qwen3: \"hidden_act\" must be a string"},
        {"{" H4 ", \"tie_word_embeddings\": 1}", ATTN_E_PARSE,
         "qwen3: \"tie_word_embeddings\" must be true or false"},
        {"{" H4 ", \"attention_bias\": \"yes\"}", ATTN_E_PARSE,
         "qwen3: \"attention_bias\" must be true or false"},
        {"{" H4 ", \"use_sliding_window\": null}", ATTN_E_PARSE,
         "qwen3: \"use_sliding_window\" must be true or false"},
        /* windows */
        {"{" H4 ", \"use_sliding_window\": true, \"sliding_window\": 0}", ATTN_E_RANGE,
         "qwen3: \"sliding_window\" must be null or a whole number from 1"},
        {"{" H4 ", \"use_sliding_window\": true, \"sliding_window\": \"wide\"}", ATTN_E_RANGE,
         "qwen3: \"sliding_window\""},
        {"{" H4 ", \"max_window_layers\": -1}", ATTN_E_RANGE,
         "qwen3: \"max_window_layers\" must be a whole number from 0"},
        {"{" H4 ", \"layer_types\": [\"full_attention\"]}", ATTN_E_SHAPE,
         "qwen3: layer_types has 1 entries for num_hidden_layers 2"},
        {"{" H4 ", \"layer_types\": [\"full_attention\", \"chunked_attention\"]}",
         ATTN_E_UNSUPPORTED, "qwen3: layer_types \"chunked_attention\" is not computed"},
        {"{" H4 ", \"layer_types\": 3}", ATTN_E_PARSE,
         "qwen3: \"layer_types\" must be a list of at most 4096 strings"},
        {"{" H4 ", \"layer_types\": [\"full_attention\", \"sliding_attention\"]}",
         ATTN_E_UNSUPPORTED, "qwen3: layer_types makes layer 1 \"sliding_attention\" but there "
         "is no window"},
        {"{" H4 ", \"use_sliding_window\": true, \"sliding_window\": null, \"layer_types\": "
         "[\"sliding_attention\", \"full_attention\"]}", ATTN_E_UNSUPPORTED,
         "qwen3: layer_types makes layer 0"},
        /* token ids */
        {"{" H4 ", \"bos_token_id\": -3}", ATTN_E_RANGE, "qwen3: \"bos_token_id\" must be null"},
        {"{" H4 ", \"eos_token_id\": [\"</s>\"]}", ATTN_E_RANGE, "qwen3: \"eos_token_id\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        AttnErr err;
        int rc = parse(bad[i].text, &err);
        if (rc != -bad[i].code || err.code != bad[i].code || !strstr(err.msg, bad[i].piece) ||
            !strstr(err.msg, "qwen3") || strcmp(err.file, "config.json"))
            fail_msg("case %zu: rc %d \"%s\" (%s); expected %d with \"%s\"", i, rc, err.msg,
                     err.file, bad[i].code, bad[i].piece);
        for (size_t k = 0; k < desc_qwen3.rt->cfg_size; k++)
            if (cfg_buf[k])
                fail_msg("case %zu: the config is not zeroed after a refusal", i);
    }
}

static char *copy_fixture(const char *fixture)
{
    return fixture_copy(FIX, fixture);
}

static void test_bad_folders(void **state)
{
    (void)state;
    AttnErr err;
    char *dir = copy_fixture("qwen3-f32-tied");
    /* head_dim taken as hidden / heads (8, not the 16 stored) */
    set_config(dir, "head_dim", cJSON_CreateNumber(8));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "qwen3 tensor model.layers.0.self_attn.q_proj.weight: [32, 32] expected, "
               "[64, 32] found", "model.safetensors");
    assert_non_null(strstr(err.msg, "head_dim 8"));
    /* head_dim absent: 128 */
    set_config(dir, "head_dim", NULL);
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "qwen3 tensor model.layers.0.self_attn.q_proj.weight: [512, 32] expected",
               "model.safetensors");
    set_config(dir, "head_dim", cJSON_CreateNumber(16));
    /* another intermediate size: the MLP's first matrix named */
    set_config(dir, "intermediate_size", cJSON_CreateNumber(40));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "qwen3 tensor model.layers.0.mlp.gate_proj.weight: [40, 32] expected, [48, 32] "
               "found", "model.safetensors");
    set_config(dir, "intermediate_size", cJSON_CreateNumber(48));
    /* biases said but not stored; untied without lm_head */
    set_config(dir, "attention_bias", cJSON_CreateTrue());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "model.layers.0.self_attn.q_proj.bias", "model.safetensors");
    set_config(dir, "attention_bias", cJSON_CreateFalse());
    set_config(dir, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "qwen3: no tensor lm_head.weight, and config.json says tie_word_embeddings false",
               NULL);
    set_config(dir, "tie_word_embeddings", cJSON_CreateTrue());
    /* config.json's refusals reach lm_open naming config.json */
    set_config(dir, "num_key_value_heads", cJSON_CreateNumber(3));
    expect_err(open_err(dir, &err), err, ATTN_E_HEADS,
               "qwen3: num_attention_heads 4 is not divisible by num_key_value_heads 3",
               "config.json");
    set_config(dir, "num_key_value_heads", cJSON_CreateNumber(2));
    set_config(dir, "rope_scaling", cJSON_Parse("{\"rope_type\": \"yarn\", \"factor\": 4}"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED, "qwen3: rope_scaling type \"yarn\"",
               "config.json");
    set_config(dir, "rope_scaling", cJSON_CreateNull());
    /* the folder opens again once put back */
    Lm lm;
    assert_int_equal(lm_open(&lm, dir, &err), 0);
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);

    /* a k_norm stored as [2, 64] for [128]: named with both shapes */
    dir = copy_fixture("qwen3-bf16-window");
    char p[1024];
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON *t = cJSON_GetObjectItemCaseSensitive(st.header, "model.layers.2.self_attn.k_norm.weight");
    assert_non_null(t);
    cJSON_ReplaceItemInObject(t, "shape", cJSON_Parse("[2, 64]"));
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "qwen3 tensor model.layers.2.self_attn.k_norm.weight: [128] expected, [2, 64] "
               "found", "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
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
