/* Tests for GPT-NeoX's description (src/core/arch_gpt_neox.c) through the
 * generic readers (src/io/model_config.c, model_file.c) and the adapter
 * (lm.h), on the folders of tests/fixtures/families/gpt_neox/:
 * config.json's defaults (GPTNeoXConfig's) as the shape, facts and forward
 * show them; every option's value read (rotary_pct, rotary_emb_base,
 * rope_scaling linear, max_position_embeddings, token ids); an explicit
 * default computing what the default does and each other value something
 * else (hidden_act, use_parallel_residual, layer_norm_eps, attention_bias);
 * every bad input refused with its code and a message naming the file, the
 * field or value and the family; tensors of the wrong shape or missing named
 * with the safetensors file; bfloat16 matrices used in place and Pythia's
 * extra tensors ignored. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnviz/arch.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "attnviz/runtime.h"

#include "test_gpt2_fs.h"
#include "test_arch_util.h"

extern const ArchDesc desc_gpt_neox;

#define FIX "tests/fixtures/families/gpt_neox/"

/* ---- config.json ----------------------------------------------------------------- */
#define BASE "\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2, " \
             "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100"

static void test_config_defaults(void **state)
{
    (void)state;
    RtShape sh;
    ArchFacts f;
    /* only the sizes: GPTNeoXConfig's defaults */
    arch_parse_ok(&desc_gpt_neox, "{" BASE "}", &sh, &f);
    assert_int_equal(sh.n_layer, 2);
    assert_int_equal(sh.n_head, 4);
    assert_int_equal(sh.n_kv_head, 4);
    assert_int_equal(sh.d_head, 16);
    assert_int_equal(sh.hidden, 64);
    assert_int_equal(sh.n_vocab, 100);
    assert_int_equal(sh.n_positions, 2048);
    assert_false(sh.bidirectional);
    assert_int_equal(sh.rope.kind, ROPE_HALF);
    assert_int_equal(sh.rope.dims, 4); /* int(16 · 0.25) */
    assert_true(sh.rope.theta == 10000.0);
    assert_int_equal(sh.rope.scaling, ROPE_SCALE_NONE);
    assert_int_equal(sh.rope2.kind, ROPE_NONE);
    assert_int_equal(f.bos_id, 0);
    assert_int_equal(f.scale_attn, 1);
    assert_int_equal(f.scale_by_layer, 0);

    /* each value read */
    arch_parse_ok(&desc_gpt_neox, "{" BASE ", \"rotary_pct\": 1.0, \"rotary_emb_base\": 500, "
             "\"max_position_embeddings\": 64, \"bos_token_id\": 7, \"rope_scaling\": null}",
             &sh, &f);
    assert_int_equal(sh.rope.dims, 16);
    assert_true(sh.rope.theta == 500.0);
    assert_int_equal(sh.rope.scaling, ROPE_SCALE_NONE);
    assert_int_equal(sh.n_positions, 64);
    assert_int_equal(f.bos_id, 7);
    arch_parse_ok(&desc_gpt_neox, "{" BASE ", \"rotary_pct\": 0.5, \"rope_scaling\": {\"type\": \"linear\", "
             "\"factor\": 4.0}, \"bos_token_id\": 100}", &sh, &f);
    assert_int_equal(sh.rope.dims, 8);
    assert_int_equal(sh.rope.scaling, ROPE_SCALE_LINEAR);
    assert_true(sh.rope.factor == 4.0);
    assert_int_equal(f.bos_id, -1); /* outside the vocabulary: none */
    arch_parse_ok(&desc_gpt_neox, "{" BASE ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2}}", &sh, &f);
    assert_int_equal(sh.rope.scaling, ROPE_SCALE_LINEAR);
    assert_true(sh.rope.factor == 2.0);
    arch_parse_ok(&desc_gpt_neox, "{" BASE ", \"rope_scaling\": {\"rope_type\": \"default\"}}", &sh, &f);
    assert_int_equal(sh.rope.scaling, ROPE_SCALE_NONE);
    /* int(16 · 0.3) = 4; every accepted activation; fields transformers
     * keeps but never computes with */
    arch_parse_ok(&desc_gpt_neox, "{" BASE ", \"rotary_pct\": 0.3, \"hidden_act\": \"gelu_pytorch_tanh\", "
             "\"eos_token_id\": [3, 4], \"bos_token_id\": null, \"initializer_range\": 0.02, "
             "\"hidden_dropout\": 0.1, \"use_cache\": false}", &sh, &f);
    assert_int_equal(sh.rope.dims, 4);
    assert_int_equal(f.bos_id, -1);
    static const char *const acts[] = {"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh"};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "{" BASE ", \"hidden_act\": \"%s\"}", acts[i]);
        arch_parse_ok(&desc_gpt_neox, text, &sh, &f);
    }
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *piece; /* besides "gpt_neox" (or GPT-NeoX), which every message names */
    } bad[] = {
        /* required, each */
        {"{\"model_type\": \"gpt_neox\", \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE, "no \"hidden_size\""},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"num_hidden_layers\""},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"num_attention_heads\""},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"intermediate_size\""},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96}", ATTN_E_PARSE,
         "no \"vocab_size\""},
        {"{\"hidden_size\": 64}", ATTN_E_PARSE, "no \"model_type\""},
        {"{\"model_type\": \"gpt_neo\", \"hidden_size\": 64}", ATTN_E_UNSUPPORTED,
         "model_type is \"gpt_neo\""},
        /* sizes: wrong types and values */
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": \"64\", \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "\"hidden_size\" must be a whole number"},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2.5, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "\"num_hidden_layers\" must be a whole number"},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 0, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "\"num_attention_heads\" must be a whole number"},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": -96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "\"intermediate_size\" must be a whole number"},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 1e9}",
         ATTN_E_RANGE, "\"vocab_size\" must be a whole number from 1 to 16777216"},
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 66, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_HEADS, "hidden_size 66 is not divisible by num_attention_heads 4"},
        {"{" BASE ", \"max_position_embeddings\": 0}", ATTN_E_RANGE,
         "\"max_position_embeddings\""},
        {"{" BASE ", \"max_position_embeddings\": null}", ATTN_E_RANGE,
         "\"max_position_embeddings\""},
        /* the rotary embedding */
        {"{" BASE ", \"rotary_pct\": 0}", ATTN_E_RANGE, "\"rotary_pct\" 0 is outside (0, 1]"},
        {"{" BASE ", \"rotary_pct\": -0.25}", ATTN_E_RANGE, "\"rotary_pct\" -0.25 is outside"},
        {"{" BASE ", \"rotary_pct\": 1.5}", ATTN_E_RANGE, "\"rotary_pct\" 1.5 is outside"},
        {"{" BASE ", \"rotary_pct\": \"0.25\"}", ATTN_E_RANGE, "\"rotary_pct\" must be a number"},
        {"{" BASE ", \"rotary_pct\": null}", ATTN_E_RANGE, "\"rotary_pct\" must be a number"},
        {"{" BASE ", \"rotary_pct\": 0.1}", ATTN_E_UNSUPPORTED, "rotates 1 dimensions"},
        {"{" BASE ", \"rotary_pct\": 0.05}", ATTN_E_UNSUPPORTED, "rotates 0 dimensions"},
        {"{" BASE ", \"rotary_emb_base\": 0}", ATTN_E_RANGE, "\"rotary_emb_base\""},
        {"{" BASE ", \"rotary_emb_base\": \"big\"}", ATTN_E_RANGE, "\"rotary_emb_base\""},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}}",
         ATTN_E_UNSUPPORTED, "rope_scaling type \"dynamic\" is not computed"},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 2.0}}",
         ATTN_E_UNSUPPORTED, "rope_scaling type \"yarn\""},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}}",
         ATTN_E_UNSUPPORTED, "rope_scaling type \"llama3\""},
        {"{" BASE ", \"rope_scaling\": {\"factor\": 2.0}}", ATTN_E_PARSE,
         "rope_scaling has no \"rope_type\" (or \"type\")"},
        {"{" BASE ", \"rope_scaling\": {\"type\": 1}}", ATTN_E_PARSE, "rope_scaling has no"},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"linear\"}}", ATTN_E_PARSE,
         "rope_scaling of type linear has no \"factor\""},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 0}}", ATTN_E_RANGE,
         "rope_scaling's \"factor\" must be a positive number"},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": \"2\"}}", ATTN_E_RANGE,
         "rope_scaling's \"factor\""},
        {"{" BASE ", \"rope_scaling\": 2}", ATTN_E_PARSE,
         "\"rope_scaling\" must be null or an object"},
        {"{" BASE ", \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 10000}}",
         ATTN_E_UNSUPPORTED, "\"rope_parameters\" (transformers 5's layout, type \"default\")"},
        {"{" BASE ", \"rope_parameters\": {\"rope_theta\": 10000}}", ATTN_E_PARSE,
         "\"rope_parameters\" (transformers 5's layout) is not read"},
        /* the activation, the norms, the choices */
        {"{" BASE ", \"hidden_act\": \"relu\"}", ATTN_E_UNSUPPORTED,
         "hidden_act \"relu\" is not computed"},
        {"{" BASE ", \"hidden_act\": \"silu\"}", ATTN_E_UNSUPPORTED, "hidden_act \"silu\""},
        {"{" BASE ", \"hidden_act\": 3}", ATTN_E_PARSE, "\"hidden_act\" must be a string"},
        {"{" BASE ", \"hidden_act\": null}", ATTN_E_PARSE, "\"hidden_act\" must be a string"},
        {"{" BASE ", \"layer_norm_eps\": -1e-5}", ATTN_E_RANGE, "\"layer_norm_eps\""},
        {"{" BASE ", \"layer_norm_eps\": 2}", ATTN_E_RANGE, "\"layer_norm_eps\""},
        {"{" BASE ", \"layer_norm_eps\": \"1e-5\"}", ATTN_E_RANGE, "\"layer_norm_eps\""},
        {"{" BASE ", \"use_parallel_residual\": \"yes\"}", ATTN_E_PARSE,
         "\"use_parallel_residual\" must be true or false"},
        {"{" BASE ", \"attention_bias\": 1}", ATTN_E_PARSE,
         "\"attention_bias\" must be true or false"},
        {"{" BASE ", \"tie_word_embeddings\": null}", ATTN_E_PARSE,
         "\"tie_word_embeddings\" must be true or false"},
        {"{" BASE ", \"bos_token_id\": -1}", ATTN_E_RANGE, "\"bos_token_id\" must be null"},
        {"{" BASE ", \"eos_token_id\": \"</s>\"}", ATTN_E_RANGE, "\"eos_token_id\" must be null"},
    };
    void *cfg = arch_cfg_new(&desc_gpt_neox);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        AttnErr err;
        int rc = arch_parse(&desc_gpt_neox, cfg, bad[i].text, &err);
        if (rc != -bad[i].code || !strstr(err.msg, bad[i].piece) ||
            !(strstr(err.msg, "gpt_neox") || strstr(err.msg, "GPT-NeoX")) ||
            strcmp(err.file, "config.json"))
            fail_msg("case %zu: rc %d \"%s\" (%s); expected %d with \"%s\" and the family", i,
                     rc, err.msg, err.file, bad[i].code, bad[i].piece);
        /* refused configs leave nothing behind */
        for (size_t k = 0; k < desc_gpt_neox.rt->cfg_size; k++)
            assert_int_equal(((unsigned char *)cfg)[k], 0);
    }
    free(cfg);
}

/* ---- folders --------------------------------------------------------------------- */

static char *copy_fixture(const char *fixture)
{
    return fixture_copy(FIX, fixture);
}

static void open_ok(Lm *lm, const char *dir)
{
    AttnErr err = {0};
    memset(lm, 0, sizeof *lm);
    if (lm_open(lm, dir, &err) != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
}

#define N_IDS 10
static const int ids[N_IDS] = {3, 17, 42, 5, 5, 29, 11, 58, 0, 33};

/* The last position's logits of dir's model on ids (V floats, malloc'd). */
static float *logits_of(const char *dir, int *V)
{
    Lm lm;
    AttnErr err = {0};
    open_ok(&lm, dir);
    assert_int_equal(lm_forward(&lm, ids, N_IDS, NULL, &err), 0);
    *V = lm.info.n_vocab;
    float *lg = malloc(sizeof(float) * (size_t)*V);
    assert_non_null(lg);
    assert_int_equal(rt_logits(lm.rt, lm.model->weights, N_IDS - 1, lg, &err), 0);
    lm_close(&lm);
    return lg;
}

static int same(const float *a, const float *b, int V)
{
    return memcmp(a, b, sizeof(float) * (size_t)V) == 0;
}

/* The defaults the minimal fixture leaves out compute what the same values
 * given explicitly do; every other value computes something else. */
static void test_defaults_computed(void **state)
{
    (void)state;
    Lm lm;
    char *dir = copy_fixture("neox-f32-parallel");
    open_ok(&lm, dir);
    assert_string_equal(lm.info.arch, "gpt_neox");
    assert_int_equal(lm.info.n_positions, 2048);
    assert_int_equal(lm.info.bos_id, 0);
    assert_int_equal(lm.info.d_head, 16);
    assert_int_equal(lm.rt->sh.rope.dims, 4);
    assert_false(lm.model->tied);
    assert_string_equal(lm.model->prefix, "gpt_neox.");
    assert_string_equal(lm.info.embed_name, "embed_in");
    lm_close(&lm);

    int V, V2;
    float *base = logits_of(dir, &V);
    static const struct {
        const char *key, *json;
        int changes;
    } cases[] = {
        {"hidden_act", "\"gelu\"", 0},
        {"hidden_act", "\"gelu_new\"", 1},
        {"hidden_act", "\"gelu_fast\"", 1},
        {"use_parallel_residual", "true", 0},
        {"use_parallel_residual", "false", 1},
        {"layer_norm_eps", "1e-5", 0},
        {"layer_norm_eps", "0.01", 1},
        {"rotary_pct", "0.25", 0},
        {"rotary_pct", "0.5", 1},
        {"rotary_emb_base", "10000", 0},
        {"rotary_emb_base", "100", 1},
        {"rope_scaling", "null", 0},
        {"rope_scaling", "{\"type\": \"linear\", \"factor\": 3}", 1},
        {"attention_bias", "true", 0},
        {"attention_bias", "false", 1}, /* the stored biases left unread */
        {"tie_word_embeddings", "false", 0},
        {"tie_word_embeddings", "true", 1}, /* embed_in as the output */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        set_config(dir, cases[i].key, cJSON_Parse(cases[i].json));
        float *lg = logits_of(dir, &V2);
        assert_int_equal(V2, V);
        if (same(lg, base, V) == cases[i].changes)
            fail_msg("%s = %s: the logits %s", cases[i].key, cases[i].json,
                     cases[i].changes ? "did not change" : "changed");
        free(lg);
        set_config(dir, cases[i].key, NULL);
    }
    free(base);
    fs_rm_tree(dir);
    free(dir);
}

/* BF16: the four matrices of each layer and both tables used in place, the
 * vectors converted; Pythia's attention.bias, masked_bias and
 * rotary_emb.inv_freq in the file and never read. */
static void test_bf16_in_place(void **state)
{
    (void)state;
    Lm lm;
    StParts st = fs_st_read(FIX "neox-bf16-sequential/model.safetensors");
    assert_non_null(cJSON_GetObjectItemCaseSensitive(st.header, "gpt_neox.layers.0.attention.bias"));
    assert_non_null(
        cJSON_GetObjectItemCaseSensitive(st.header, "gpt_neox.layers.2.attention.masked_bias"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(
        st.header, "gpt_neox.layers.1.attention.rotary_emb.inv_freq"));
    cJSON_Delete(st.header);
    free(st.data);
    open_ok(&lm, FIX "neox-bf16-sequential");
    int L = lm.info.n_layer;
    assert_int_equal(L, 3);
    assert_int_equal(lm.model->n_bf16, 4 * L + 2);
    assert_int_equal(lm.model->n_converted, 8 * L + 2);
    assert_false(lm.model->tied);
    assert_int_equal(lm.rt->sh.rope.dims, 4);
    lm_close(&lm);
    /* tied F32: no embed_out read, the matrices converted */
    open_ok(&lm, FIX "neox-f32-linear-tied");
    assert_true(lm.model->tied);
    assert_int_equal(lm.model->n_bf16, 0);
    assert_int_equal(lm.model->n_converted, 4 * lm.info.n_layer);
    assert_int_equal(lm.rt->sh.rope.scaling, ROPE_SCALE_LINEAR);
    lm_close(&lm);
}

static void test_bad_folders(void **state)
{
    (void)state;
    AttnErr err;
    char p[1024];
    /* a size config.json changes: the first tensor it shapes named, with the file */
    char *dir = copy_fixture("neox-f32-parallel");
    set_config(dir, "intermediate_size", cJSON_CreateNumber(100));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor gpt_neox.layers.0.mlp.dense_h_to_4h.weight: [100, 64] expected, "
               "[96, 64] found", "model.safetensors");
    assert_non_null(strstr(err.msg, "gpt_neox config.json"));
    set_config(dir, "intermediate_size", cJSON_CreateNumber(96));
    set_config(dir, "vocab_size", cJSON_CreateNumber(61));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor gpt_neox.embed_in.weight: [61, 64] expected, [60, 64] found",
               "model.safetensors");
    set_config(dir, "vocab_size", cJSON_CreateNumber(60));
    /* the fused matrix stored [in, out]: both shapes named */
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON *t = cJSON_GetObjectItemCaseSensitive(st.header,
                                                "gpt_neox.layers.1.attention.query_key_value.weight");
    cJSON *shape = cJSON_GetObjectItemCaseSensitive(t, "shape");
    assert_int_equal(cJSON_GetArrayItem(shape, 0)->valueint, 192);
    cJSON_ReplaceItemInArray(shape, 0, cJSON_CreateNumber(64));
    cJSON_ReplaceItemInArray(shape, 1, cJSON_CreateNumber(192));
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "gpt_neox.layers.1.attention.query_key_value.weight: [192, 64] expected, "
               "[64, 192] found", "model.safetensors");
    fs_copy(FIX "neox-f32-parallel/model.safetensors", p);
    /* more layers than the file has */
    set_config(dir, "num_hidden_layers", cJSON_CreateNumber(3));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "num_hidden_layers 3 but the file has 2 layers", "model.safetensors");
    set_config(dir, "num_hidden_layers", cJSON_CreateNumber(2));
    /* config.json's refusals reach lm_open's caller naming config.json */
    set_config(dir, "rotary_pct", cJSON_CreateNumber(2));
    expect_err(open_err(dir, &err), err, ATTN_E_RANGE, "gpt_neox: \"rotary_pct\" 2 is outside",
               "config.json");
    set_config(dir, "rotary_pct", NULL);
    set_config(dir, "hidden_act", cJSON_CreateString("quick_gelu"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED, "hidden_act \"quick_gelu\"",
               "config.json");
    fs_rm_tree(dir);
    free(dir);

    /* untied without embed_out; biases asked for and not stored */
    dir = copy_fixture("neox-f32-linear-tied");
    set_config(dir, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "no tensor embed_out.weight",
               "model.safetensors");
    assert_non_null(strstr(err.msg, "gpt_neox"));
    set_config(dir, "tie_word_embeddings", cJSON_CreateTrue());
    set_config(dir, "attention_bias", cJSON_CreateTrue());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor gpt_neox.layers.0.attention.query_key_value.bias", "model.safetensors");
    set_config(dir, "attention_bias", cJSON_CreateFalse());
    /* weights of another family */
    st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON *e = cJSON_DetachItemFromObjectCaseSensitive(st.header, "gpt_neox.embed_in.weight");
    cJSON_AddItemToObject(st.header, "model.embed_tokens.weight", e);
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor gpt_neox.embed_in.weight (nor embed_in.weight)", "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_defaults_computed),
        cmocka_unit_test(test_bf16_in_place),
        cmocka_unit_test(test_bad_folders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
