/* Tests for OLMo 2's description (src/core/arch_olmo2.c): config.json's
 * defaults as transformers' Olmo2Config gives them (seen through the
 * description's own shape and facts functions, and as the same bytes as
 * the defaults written out), its choices (rope_scaling none, default,
 * linear, llama3; "type" for "rope_type"; head_dim given), and every bad
 * input refused with its code and a message naming the file, the field or
 * value and the family: required fields missing, wrong types, options not
 * computed (hidden_act, rope types), values out of range; then folders
 * (copies of tests/fixtures/families/olmo2/) opened through lm_open: the
 * sizes it reports, a config.json whose sizes the tensors do not have, a
 * tensor of the wrong shape, missing tensors (a norm, a bias attention_bias
 * asks for, lm_head when untied), a config error named in config.json.
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

#include "attnviz/arch.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"

#include "test_gpt2_fs.h"
#include "test_arch_util.h"

extern const ArchDesc desc_olmo2;

#define FIX "tests/fixtures/families/olmo2/"

/* ---- config.json ----------------------------------------------------------------- */
#define BASE "\"model_type\": \"olmo2\", \"hidden_size\": 64, \"num_hidden_layers\": 2, " \
             "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100"

static unsigned char cfg_a[4096], cfg_b[4096];

static int parse(void *buf, const char *text, AttnErr *err)
{
    assert_true(desc_olmo2.rt->cfg_size <= sizeof cfg_a);
    memset(err, 0, sizeof *err);
    return model_config_parse(&desc_olmo2, buf, text, strlen(text), "config.json", err);
}

/* text parsed (it must be) and its shape and facts by the description. */
static void parse_shape(const char *text, RtShape *s, ArchFacts *f)
{
    AttnErr err;
    if (parse(cfg_a, text, &err) != 0)
        fail_msg("%s: %s", text, err.msg);
    desc_olmo2.rt->shape(cfg_a, s);
    desc_olmo2.facts(cfg_a, f);
}

static void test_config_defaults(void **state)
{
    (void)state;
    RtShape s;
    ArchFacts f;
    AttnErr err;
    parse_shape("{" BASE "}", &s, &f);
    assert_int_equal(s.n_layer, 2);
    assert_int_equal(s.n_head, 4);
    assert_int_equal(s.n_kv_head, 4);   /* num_key_value_heads: the heads */
    assert_int_equal(s.d_head, 16);     /* hidden / heads */
    assert_int_equal(s.hidden, 64);
    assert_int_equal(s.n_positions, 2048);
    assert_int_equal(s.n_vocab, 100);
    assert_int_equal(s.bidirectional, 0);
    assert_int_equal(s.n_rows, 2);
    assert_int_equal(s.row_w[0], 96);
    assert_int_equal(s.row_w[1], 96);
    assert_int_equal(s.rope.kind, ROPE_HALF);
    assert_int_equal(s.rope.dims, 16);
    assert_true(s.rope.theta == 10000.0);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
    assert_int_equal(s.rope2.kind, ROPE_NONE);
    assert_int_equal(f.bos_id, -1);    /* bos_token_id: None */
    assert_int_equal(f.scale_attn, 1);
    assert_int_equal(f.scale_by_layer, 0);

    /* every default written out gives the same config, byte for byte; one
     * of them changed does not */
    static const char *const explicit_ =
        "{" BASE ", \"num_key_value_heads\": 4, \"max_position_embeddings\": 2048, "
        "\"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"rope_scaling\": null, "
        "\"hidden_act\": \"silu\", \"tie_word_embeddings\": false, \"attention_bias\": false, "
        "\"bos_token_id\": null, \"eos_token_id\": 50279, \"pad_token_id\": 1, "
        "\"attention_dropout\": 0.0, \"head_dim\": null}";
    assert_int_equal(parse(cfg_a, "{" BASE "}", &err), 0);
    assert_int_equal(parse(cfg_b, explicit_, &err), 0);
    assert_memory_equal(cfg_a, cfg_b, desc_olmo2.rt->cfg_size);
    static const char *const changed[] = {
        "{" BASE ", \"rms_norm_eps\": 1e-06}",
        "{" BASE ", \"tie_word_embeddings\": true}",
        "{" BASE ", \"attention_bias\": true}",
        "{" BASE ", \"eos_token_id\": 2}",
        "{" BASE ", \"max_position_embeddings\": 4096}",
        "{" BASE ", \"num_key_value_heads\": 2}",
        "{" BASE ", \"rope_theta\": 500000.0}",
    };
    for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
        assert_int_equal(parse(cfg_b, changed[i], &err), 0);
        if (!memcmp(cfg_a, cfg_b, desc_olmo2.rt->cfg_size))
            fail_msg("%s reads as the defaults", changed[i]);
    }
    /* eos_token_id 50279 is outside this vocabulary: none, as 100 and a
     * list's first are */
    assert_int_equal(parse(cfg_b, "{" BASE ", \"eos_token_id\": [100, 3]}", &err), 0);
    assert_memory_equal(cfg_a, cfg_b, desc_olmo2.rt->cfg_size);

    /* the choices */
    parse_shape("{" BASE ", \"num_key_value_heads\": 1, \"head_dim\": 12, "
                "\"max_position_embeddings\": 64, \"bos_token_id\": 7, \"hidden_act\": \"swish\"}",
                &s, &f);
    assert_int_equal(s.n_kv_head, 1);
    assert_int_equal(s.d_head, 12);
    assert_int_equal(s.rope.dims, 12);
    assert_int_equal(s.n_positions, 64);
    assert_int_equal(f.bos_id, 7);
    parse_shape("{" BASE ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}}", &s, &f);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_LINEAR);
    assert_true(s.rope.factor == 2.0);
    parse_shape("{" BASE ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 4}}", &s, &f);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_LINEAR);
    assert_true(s.rope.factor == 4.0);
    parse_shape("{" BASE ", \"rope_theta\": 500000.0, \"rope_scaling\": {\"rope_type\": "
                "\"llama3\", \"factor\": 32.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": "
                "4.0, \"original_max_position_embeddings\": 8192}}", &s, &f);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_LLAMA3);
    assert_true(s.rope.factor == 32.0 && s.rope.low_freq == 1.0 && s.rope.high_freq == 4.0);
    assert_int_equal(s.rope.orig_max, 8192);
    assert_true(s.rope.theta == 500000.0);
    parse_shape("{" BASE ", \"rope_scaling\": {\"rope_type\": \"default\"}}", &s, &f);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *piece;
        int family; /* the message names olmo2 (the loader's own type errors do not) */
    } bad[] = {
        /* required fields */
        {"{\"model_type\": \"olmo2\", \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE, "no \"hidden_size\"", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"num_hidden_layers\"", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"num_attention_heads\"", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"intermediate_size\"", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96}", ATTN_E_PARSE,
         "no \"vocab_size\"", 1},
        {"{\"hidden_size\": 64}", ATTN_E_PARSE, "no \"model_type\" string (olmo2)", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": null, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "\"hidden_size\" must be a whole number", 1},
        /* wrong types */
        {"{" BASE ", \"num_key_value_heads\": \"2\"}", ATTN_E_RANGE,
         "olmo2: \"num_key_value_heads\" must be a whole number from 1 to 4096", 1},
        {"{" BASE ", \"rms_norm_eps\": \"1e-5\"}", ATTN_E_RANGE,
         "olmo2: \"rms_norm_eps\" must be a number above 0 and below 1", 1},
        {"{" BASE ", \"rope_theta\": true}", ATTN_E_RANGE, "olmo2: \"rope_theta\" must be", 1},
        {"{" BASE ", \"hidden_act\": 3}", ATTN_E_PARSE, "olmo2: \"hidden_act\" must be a string",
         1},
        {"{" BASE ", \"tie_word_embeddings\": 1}", ATTN_E_PARSE,
         "\"tie_word_embeddings\" must be true or false", 0},
        {"{" BASE ", \"attention_bias\": \"yes\"}", ATTN_E_PARSE,
         "\"attention_bias\" must be true or false", 0},
        {"{" BASE ", \"rope_scaling\": \"linear\"}", ATTN_E_PARSE,
         "\"rope_scaling\" must be null or an object", 0},
        {"{" BASE ", \"rope_scaling\": {\"type\": 2, \"factor\": 2.0}}", ATTN_E_PARSE,
         "olmo2: rope_scaling has no \"rope_type\" (or \"type\") string", 1},
        {"{" BASE ", \"bos_token_id\": \"<s>\"}", ATTN_E_RANGE, "\"bos_token_id\" must be", 0},
        {"{\"model_type\": 2, \"hidden_size\": 64}", ATTN_E_PARSE,
         "no \"model_type\" string (olmo2)", 1},
        /* options not computed, by name */
        {"{\"model_type\": \"llama\", \"hidden_size\": 64}", ATTN_E_UNSUPPORTED,
         "model_type \"llama\" is not an OLMo 2 model (olmo2)", 0},
        {"{" BASE ", \"hidden_act\": \"gelu\"}", ATTN_E_UNSUPPORTED,
         "olmo2: hidden_act \"gelu\" is not computed", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}}",
         ATTN_E_UNSUPPORTED, "olmo2: rope_scaling type \"dynamic\" is not computed", 1},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}}",
         ATTN_E_UNSUPPORTED, "rope_scaling type \"yarn\"", 1},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"longrope\", \"short_factor\": [1]}}",
         ATTN_E_UNSUPPORTED, "rope_scaling type \"longrope\"", 1},
        /* out of range */
        {"{" BASE ", \"num_key_value_heads\": 3}", ATTN_E_HEADS,
         "olmo2: num_attention_heads 4 is not divisible by num_key_value_heads 3", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 66, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 9, \"vocab_size\": 10}",
         ATTN_E_HEADS, "olmo2: hidden_size 66 is not divisible by num_attention_heads 4", 1},
        {"{" BASE ", \"head_dim\": 7}", ATTN_E_SHAPE, "olmo2: head_dim 7 is odd", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 0, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "olmo2: \"hidden_size\" must be a whole number from 1 to 131072", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 64, \"num_hidden_layers\": 2.5, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "olmo2: \"num_hidden_layers\" must be a whole number from 1 to 4096", 1},
        {"{\"model_type\": \"olmo2\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 99999999}",
         ATTN_E_RANGE, "olmo2: \"vocab_size\" must be a whole number from 1 to 16777216", 1},
        {"{" BASE ", \"max_position_embeddings\": -1}", ATTN_E_RANGE,
         "olmo2: \"max_position_embeddings\" must be", 1},
        {"{" BASE ", \"rms_norm_eps\": -1}", ATTN_E_RANGE, "olmo2: \"rms_norm_eps\" must be", 1},
        {"{" BASE ", \"rms_norm_eps\": 0}", ATTN_E_RANGE, "olmo2: \"rms_norm_eps\" must be", 1},
        {"{" BASE ", \"rope_theta\": 0}", ATTN_E_RANGE, "olmo2: \"rope_theta\" must be", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"linear\"}}", ATTN_E_PARSE,
         "olmo2: rope_scaling of this type has no \"factor\"", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 0}}", ATTN_E_RANGE,
         "olmo2: rope_scaling's \"factor\" must be a positive number", 1},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
         "\"low_freq_factor\": 4, \"high_freq_factor\": 1, "
         "\"original_max_position_embeddings\": 8192}}", ATTN_E_RANGE,
         "olmo2: rope_scaling's high_freq_factor 1 must be above its low_freq_factor 4", 1},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
         "\"low_freq_factor\": 1, \"high_freq_factor\": 4}}", ATTN_E_PARSE,
         "olmo2: rope_scaling of this type has no \"original_max_position_embeddings\"", 1},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
         "\"low_freq_factor\": 1, \"high_freq_factor\": 4, "
         "\"original_max_position_embeddings\": 0.5}}", ATTN_E_RANGE,
         "olmo2: rope_scaling's \"original_max_position_embeddings\" must be a whole number", 1},
        {"{" BASE ", \"eos_token_id\": -3}", ATTN_E_RANGE, "\"eos_token_id\" must be", 0},
        {"{" BASE ",}", ATTN_E_PARSE, "not valid JSON", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        AttnErr err;
        memset(cfg_a, 0xab, sizeof cfg_a);
        int rc = parse(cfg_a, bad[i].text, &err);
        if (rc != -bad[i].code || err.code != bad[i].code || !strstr(err.msg, bad[i].piece) ||
            strcmp(err.file, "config.json") || (bad[i].family && !strstr(err.msg, "olmo2")))
            fail_msg("case %zu: rc %d \"%s\" (%s); expected %d with \"%s\"", i, rc, err.msg,
                     err.file, bad[i].code, bad[i].piece);
        for (size_t k = 0; k < desc_olmo2.rt->cfg_size; k++)
            if (cfg_a[k])
                fail_msg("case %zu: the config is not zeroed after the refusal", i);
    }
    /* the forward's own check refuses what a caller might build by hand */
    AttnErr err = {0};
    assert_int_equal(parse(cfg_a, "{" BASE "}", &err), 0);
    assert_int_equal(desc_olmo2.rt->check(cfg_a, &err), 0);
    memset(cfg_b, 0, sizeof cfg_b);
    expect_err(desc_olmo2.rt->check(cfg_b, &err), err, ATTN_E_SHAPE,
               "olmo2: sizes must be positive", NULL);
}

/* ---- folders --------------------------------------------------------------------- */

static char *copy_fixture(const char *fixture)
{
    return fixture_copy(FIX, fixture);
}

static void test_folders(void **state)
{
    (void)state;
    AttnErr err = {0};
    char p[1024];
    Lm lm;
    /* opened as olmo2 with the sizes of its config */
    if (lm_open(&lm, FIX "olmo2-f32", &err) != 0)
        fail_msg("%s (%s)", err.msg, err.file);
    assert_string_equal(lm.info.arch, "olmo2");
    assert_ptr_equal(lm.arch, &desc_olmo2);
    assert_int_equal(lm.info.n_layer, 2);
    assert_int_equal(lm.info.n_head, 4);
    assert_int_equal(lm.info.n_kv_head, 2);
    assert_int_equal(lm.info.d_head, 8);
    assert_int_equal(lm.info.n_positions, 64);
    assert_int_equal(lm.info.n_vocab, 64);
    assert_int_equal(lm.info.bos_id, -1);
    assert_string_equal(lm.info.embed_name, "embed_tokens");
    /* F32: the 7 matrices of each layer transposed, the rest in place */
    assert_int_equal(lm.model->n_bf16, 0);
    assert_int_equal(lm.model->n_converted, 7 * 2);
    lm_close(&lm);
    if (lm_open(&lm, FIX "olmo2-mqa-hd12-f16", &err) != 0)
        fail_msg("%s (%s)", err.msg, err.file);
    assert_int_equal(lm.info.n_kv_head, 1);
    assert_int_equal(lm.info.d_head, 12);
    assert_int_equal(lm.info.n_layer, 3);
    /* F16: everything converted: 7 matrices and 4 norms a layer, the final
     * norm, the embeddings and lm_head */
    assert_int_equal(lm.model->n_bf16, 0);
    assert_int_equal(lm.model->n_converted, (7 + 4) * 3 + 1 + 2);
    lm_close(&lm);
    /* BF16 and tied: the matrices and the embeddings (lm_head the same)
     * used in place, only the norms converted */
    if (lm_open(&lm, FIX "olmo2-bf16-tied", &err) != 0)
        fail_msg("%s (%s)", err.msg, err.file);
    assert_int_equal(lm.model->n_bf16, 7 * 2 + 1);
    assert_int_equal(lm.model->n_converted, 4 * 2 + 1);
    lm_close(&lm);

    /* config.json's sizes not the tensors': the file and the tensor named,
     * both shapes as stored */
    char *dir = copy_fixture("olmo2-f32");
    set_config(dir, "intermediate_size", cJSON_CreateNumber(40));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "olmo2: tensor model.layers.0.mlp.gate_proj.weight: [40, 32] expected, [48, 32] "
               "found", "model.safetensors");
    set_config(dir, "intermediate_size", cJSON_CreateNumber(48));
    set_config(dir, "num_key_value_heads", cJSON_CreateNumber(4));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "olmo2: tensor model.layers.0.self_attn.k_proj.weight: [32, 32] expected, [16, 32] "
               "found", "model.safetensors");
    set_config(dir, "num_key_value_heads", cJSON_CreateNumber(2));
    set_config(dir, "vocab_size", cJSON_CreateNumber(65));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor model.embed_tokens.weight: [65, 32] expected, [64, 32] found",
               "model.safetensors");
    set_config(dir, "vocab_size", cJSON_CreateNumber(64));
    /* k_norm stored [2, 8] instead of [16] (as many numbers) */
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON *t = cJSON_GetObjectItemCaseSensitive(st.header, "model.layers.1.self_attn.k_norm.weight");
    assert_non_null(t);
    cJSON *shape = cJSON_CreateArray();
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(2));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(8));
    cJSON_ReplaceItemInObject(t, "shape", shape);
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "olmo2: tensor model.layers.1.self_attn.k_norm.weight: [16] expected, [2, 8] found",
               "model.safetensors");
    /* the post-MLP norm missing */
    fs_copy(FIX "olmo2-f32/model.safetensors", p);
    st = fs_st_read(p);
    cJSON_DeleteItemFromObjectCaseSensitive(st.header,
                                            "model.layers.1.post_feedforward_layernorm.weight");
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "model.layers.1.post_feedforward_layernorm.weight", "model.safetensors");
    fs_copy(FIX "olmo2-f32/model.safetensors", p);
    /* a config error reaches lm_open's caller naming config.json */
    set_config(dir, "rope_scaling", cJSON_Parse("{\"rope_type\": \"yarn\", \"factor\": 4.0}"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "olmo2: rope_scaling type \"yarn\" is not computed", "config.json");
    set_config(dir, "rope_scaling", cJSON_CreateNull());
    set_config(dir, "hidden_act", cJSON_CreateString("relu"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "olmo2: hidden_act \"relu\" is not computed", "config.json");
    set_config(dir, "hidden_act", cJSON_CreateString("silu"));
    /* tied: lm_head.weight in the file is not read; the copy opens */
    set_config(dir, "tie_word_embeddings", cJSON_CreateTrue());
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s (%s)", err.msg, err.file);
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);

    /* the tied fixture made untied: no lm_head, named; made biased: no bias */
    dir = copy_fixture("olmo2-bf16-tied");
    set_config(dir, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "olmo2: no tensor lm_head.weight, and config.json says tie_word_embeddings false",
               "model.safetensors");
    set_config(dir, "tie_word_embeddings", cJSON_CreateTrue());
    set_config(dir, "attention_bias", cJSON_CreateTrue());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "model.layers.0.self_attn.q_proj.bias",
               "model.safetensors");
    set_config(dir, "attention_bias", cJSON_CreateFalse());
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s (%s)", err.msg, err.file);
    assert_int_equal(lm.info.n_kv_head, 4);
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_folders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
