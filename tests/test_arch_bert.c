/* Tests for the BERT family's description (src/core/arch_bert.c: bert,
 * roberta, xlm-roberta, distilbert) through the generic readers
 * (src/io/model_config.c, model_file.c) and the adapter (lm.h), on the
 * folders of tests/fixtures/families/bert/: config.json's defaults
 * (BertConfig's, RobertaConfig's, DistilBertConfig's) as the shape and
 * facts show them (bidirectional; RoBERTa's positions after the pad id);
 * what is not computed refused by name (position_embedding_type other than
 * absolute, is_decoder, add_cross_attention, an activation), each with its
 * code and a message naming config.json and the family; a folder without
 * the masked-LM head, a size the file contradicts, and more tokens than
 * the positions refused. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

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

extern const ArchDesc desc_bert;

#define FIX "tests/fixtures/families/bert/"
#define SIZES "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, " \
              "\"intermediate_size\": 96, \"vocab_size\": 100"
#define BERT "\"model_type\": \"bert\", " SIZES
#define ROBERTA "\"model_type\": \"roberta\", " SIZES

/* ---- config.json ----------------------------------------------------------------- */
static void test_config_defaults(void **state)
{
    (void)state;
    RtShape sh;
    ArchFacts f;
    /* only the sizes: BertConfig's defaults (512 positions, no bos / eos) */
    arch_parse_ok(&desc_bert, "{" BERT "}", &sh, &f);
    assert_int_equal(sh.n_layer, 2);
    assert_int_equal(sh.n_head, 4);
    assert_int_equal(sh.n_kv_head, 4);
    assert_int_equal(sh.d_head, 16);
    assert_int_equal(sh.n_vocab, 100);
    assert_int_equal(sh.n_positions, 512);
    assert_int_equal(sh.bidirectional, 1);
    assert_int_equal(sh.rope.kind, ROPE_NONE);
    assert_int_equal(f.bos_id, -1);
    assert_int_equal(f.eos_id, -1);
    assert_int_equal(f.scale_attn, 1);
    /* RobertaConfig's: pad 1, so 512 − 2 positions a text may use; bos 0, eos 2 */
    arch_parse_ok(&desc_bert, "{" ROBERTA "}", &sh, &f);
    assert_int_equal(sh.n_positions, 510);
    assert_int_equal(sh.bidirectional, 1);
    assert_int_equal(f.bos_id, 0);
    assert_int_equal(f.eos_id, 2);
    arch_parse_ok(&desc_bert, "{\"model_type\": \"xlm-roberta\", " SIZES ", \"max_position_embeddings\": 514}",
             &sh, &f);
    assert_int_equal(sh.n_positions, 512);
    /* pad_token_id moves where positions start */
    arch_parse_ok(&desc_bert, "{" ROBERTA ", \"max_position_embeddings\": 40, \"pad_token_id\": 9}", &sh, &f);
    assert_int_equal(sh.n_positions, 30);
    /* a bert's pad_token_id does not */
    arch_parse_ok(&desc_bert, "{" BERT ", \"max_position_embeddings\": 40, \"pad_token_id\": 9}", &sh, &f);
    assert_int_equal(sh.n_positions, 40);
    /* DistilBertConfig's: model_type alone gives distilbert-base's sizes */
    arch_parse_ok(&desc_bert, "{\"model_type\": \"distilbert\"}", &sh, &f);
    assert_int_equal(sh.n_layer, 6);
    assert_int_equal(sh.n_head, 12);
    assert_int_equal(sh.hidden, 768);
    assert_int_equal(sh.n_vocab, 30522);
    assert_int_equal(sh.n_positions, 512);
    assert_int_equal(sh.bidirectional, 1);
    /* its attribute_map's names read when its own are absent */
    arch_parse_ok(&desc_bert, "{\"model_type\": \"distilbert\", " SIZES "}", &sh, &f);
    assert_int_equal(sh.n_layer, 2);
    assert_int_equal(sh.n_head, 4);
    assert_int_equal(sh.hidden, 64);
    /* position_embedding_type absolute and false flags are what is computed */
    arch_parse_ok(&desc_bert, "{" BERT ", \"position_embedding_type\": \"absolute\", \"is_decoder\": false, "
             "\"add_cross_attention\": false}", &sh, &f);
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *piece; /* besides "bert" (or BERT), which every message names */
    } bad[] = {
        {"{\"model_type\": \"t5\"}", ATTN_E_UNSUPPORTED, "model_type \"t5\""},
        {"{\"model_type\": \"bart\", " SIZES "}", ATTN_E_UNSUPPORTED, "bert, roberta"},
        {"{" SIZES "}", ATTN_E_PARSE, "no \"model_type\""},
        {"{" BERT ", \"position_embedding_type\": \"relative_key\"}", ATTN_E_UNSUPPORTED,
         "position_embedding_type \"relative_key\""},
        {"{" ROBERTA ", \"position_embedding_type\": \"relative_key_query\"}",
         ATTN_E_UNSUPPORTED, "position_embedding_type \"relative_key_query\""},
        {"{" BERT ", \"is_decoder\": true}", ATTN_E_UNSUPPORTED, "\"is_decoder\" true"},
        {"{" ROBERTA ", \"add_cross_attention\": true}", ATTN_E_UNSUPPORTED,
         "\"add_cross_attention\" true"},
        {"{" BERT ", \"is_decoder\": \"no\"}", ATTN_E_PARSE, "\"is_decoder\" must be true or false"},
        {"{" BERT ", \"hidden_act\": \"silu\"}", ATTN_E_UNSUPPORTED, "hidden_act \"silu\""},
        {"{\"model_type\": \"distilbert\", \"activation\": \"swish\"}", ATTN_E_UNSUPPORTED,
         "activation \"swish\""},
        {"{" BERT ", \"layer_norm_eps\": 0}", ATTN_E_RANGE, "\"layer_norm_eps\""},
        {"{" BERT ", \"layer_norm_eps\": \"1e-12\"}", ATTN_E_RANGE, "\"layer_norm_eps\""},
        {"{\"model_type\": \"bert\", \"hidden_size\": 66, \"num_attention_heads\": 4}",
         ATTN_E_HEADS, "66 is not divisible by the 4 heads"},
        {"{\"model_type\": \"bert\", \"num_hidden_layers\": 0}", ATTN_E_RANGE,
         "\"num_hidden_layers\""},
        {"{\"model_type\": \"distilbert\", \"n_heads\": 2.5}", ATTN_E_RANGE, "\"n_heads\""},
        {"{" ROBERTA ", \"max_position_embeddings\": 20, \"pad_token_id\": 19}", ATTN_E_RANGE,
         "pad_token_id 19 leaves no position of the 20"},
        {"{" ROBERTA ", \"pad_token_id\": \"<pad>\"}", ATTN_E_RANGE, "\"pad_token_id\""},
    };
    void *cfg = arch_cfg_new(&desc_bert);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        AttnErr err;
        int rc = arch_parse(&desc_bert, cfg, bad[i].text, &err);
        if (rc != -bad[i].code || !strstr(err.msg, bad[i].piece) ||
            !(strstr(err.msg, "bert") || strstr(err.msg, "BERT")) ||
            strcmp(err.file, "config.json"))
            fail_msg("case %zu: rc %d \"%s\" (%s); expected %d with \"%s\" and the family", i,
                     rc, err.msg, err.file, bad[i].code, bad[i].piece);
    }
    free(cfg);
}

static char *copy_fixture(const char *fixture)
{
    return fixture_copy(FIX, fixture);
}

/* The tensor name removed from dir's model.safetensors. */
static void drop_tensor(const char *dir, const char *name)
{
    char p[1024];
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(st.header, name));
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, name);
    fs_st_write(p, &st);
}

static void test_bad_folders(void **state)
{
    (void)state;
    AttnErr err;
    /* BertModel's weights alone: the masked-LM head named */
    char *dir = copy_fixture("bert-f32-pretraining");
    drop_tensor(dir, "cls.predictions.transform.dense.weight");
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor cls.predictions.transform.dense.weight: attnviz computes BERT with its "
               "masked-LM head", "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
    /* a size the file contradicts: the tensor and the config named */
    dir = copy_fixture("roberta-bf16-pad");
    set_config(dir, "intermediate_size", cJSON_CreateNumber(60));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor roberta.encoder.layer.0.intermediate.dense.weight: [60, 32] expected, "
               "[64, 32] found", "model.safetensors");
    assert_non_null(strstr(err.msg, "roberta config.json"));
    set_config(dir, "intermediate_size", cJSON_CreateNumber(64));
    /* config.json's refusals reach lm_open's caller naming config.json */
    set_config(dir, "position_embedding_type", cJSON_CreateString("relative_key"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "position_embedding_type \"relative_key\"", "config.json");
    set_config(dir, "position_embedding_type", NULL);
    /* RoBERTa: max_position_embeddings 20 − pad 1 − 1 = 18 tokens at most */
    Lm lm;
    memset(&lm, 0, sizeof lm);
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    int ids[19] = {0};
    assert_int_equal(lm_forward(&lm, ids, 18, NULL, &err), 0);
    assert_int_equal(lm_forward(&lm, ids, 19, NULL, &err), -ATTN_E_TOO_MANY_TOKENS);
    assert_non_null(strstr(err.msg, "at most 18"));
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);
    /* DistilBERT without its head */
    dir = copy_fixture("distilbert-f32-sinusoidal");
    drop_tensor(dir, "vocab_transform.weight");
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "no tensor vocab_transform.weight",
               "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
}

/* bert-base-uncased's file: its LayerNorms as .gamma and .beta (the names
 * of its TensorFlow days) compute what .weight and .bias do, bit for bit. */
static void test_gamma_beta(void **state)
{
    (void)state;
    char p[1024];
    char *dir = copy_fixture("bert-f32-pretraining");
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    int renamed = 0;
    for (cJSON *t = st.header->child; t; t = t->next) {
        size_t n = strlen(t->string);
        const char *w = "LayerNorm.weight", *b = "LayerNorm.bias";
        char name[256];
        if (n > strlen(w) && strcmp(t->string + n - strlen(w), w) == 0)
            snprintf(name, sizeof name, "%.*sLayerNorm.gamma", (int)(n - strlen(w)), t->string);
        else if (n > strlen(b) && strcmp(t->string + n - strlen(b), b) == 0)
            snprintf(name, sizeof name, "%.*sLayerNorm.beta", (int)(n - strlen(b)), t->string);
        else
            continue;
        free(t->string);
        t->string = strdup(name);
        renamed++;
    }
    assert_int_equal(renamed, 2 * (1 + 2 * 2 + 1)); /* embeddings, 2 per layer, the head's */
    fs_st_write(p, &st);
    static const int ids[] = {3, 17, 42, 5, 5, 29, 11, 58, 0, 33};
    float *lg[2];
    for (int k = 0; k < 2; k++) {
        Lm lm;
        AttnErr err = {0};
        memset(&lm, 0, sizeof lm);
        if (lm_open(&lm, k ? dir : FIX "bert-f32-pretraining", &err) != 0)
            fail_msg("%s", err.msg);
        assert_int_equal(lm_forward(&lm, ids, 10, NULL, &err), 0);
        lg[k] = malloc(sizeof(float) * (size_t)lm.info.n_vocab);
        assert_non_null(lg[k]);
        assert_int_equal(rt_logits(lm.rt, lm.model->weights, 4, lg[k], &err), 0);
        lm_close(&lm);
    }
    assert_memory_equal(lg[0], lg[1], sizeof(float) * 60);
    free(lg[0]), free(lg[1]);
    fs_rm_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_bad_folders),
        cmocka_unit_test(test_gamma_beta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
