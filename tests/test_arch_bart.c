/* Tests for BART (src/core/arch_bart.c) through the loader and the adapter
 * (lm.h), on tests/fixtures/families/bart/ (make_bart.py; its maps and
 * probabilities are test_encdec.c's): bad input, each with its code and a
 * message naming the file and the field: a config that mixes families, an
 * activation not computed, heads that do not divide d_model, a position
 * table of the wrong size (max_position_embeddings + 2 rows), a source
 * longer than the positions, an untied config without lm_head, a decoder
 * layer missing; Marian's (test_marian_bad_input); a config whose
 * architectures name another family, for every family (test_mixed_families);
 * the word embeddings stored under the encoder's or decoder's names
 * (test_embed_layouts). Run from the repository root. */
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
#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/bpe_files.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "attnviz/runtime.h"

#include "test_gpt2_fs.h"
#include "test_arch_util.h"
#include "test_fixtures.h"

#define FIX "tests/fixtures/families/bart/"

/* ---- bad input -------------------------------------------------------------------- */
static char *copy_fixture(const char *fixture)
{
    return fixture_copy(FIX, fixture);
}

static void test_bad_input(void **state)
{
    (void)state;
    AttnErr err;
    char *dir = copy_fixture("bart-gelu-tied");
    /* config.json: a config that mixes families, an activation not computed */
    set_config(dir, "architectures",
               cJSON_CreateStringArray((const char *[]){"T5ForConditionalGeneration"}, 1));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "architectures names T5ForConditionalGeneration, not a BART model: a config that "
               "mixes families (model_type \"bart\"; T5ForConditionalGeneration is T5's class, "
               "model_type \"t5\")", "config.json");
    /* a class of no family attnviz knows is not judged: BART's own heads */
    set_config(dir, "architectures",
               cJSON_CreateStringArray((const char *[]){"BartForSequenceClassification"}, 1));
    Lm ok;
    memset(&ok, 0, sizeof ok);
    if (lm_open(&ok, dir, &err) != 0)
        fail_msg("%s", err.msg);
    lm_close(&ok);
    set_config(dir, "architectures", cJSON_CreateString("BartModel"));
    expect_err(open_err(dir, &err), err, ATTN_E_PARSE,
               "\"architectures\" must be a list of class names (model_type bart)", "config.json");
    set_config(dir, "architectures", NULL);
    set_config(dir, "num_layers", cJSON_CreateNumber(2));
    expect_err(open_err(dir, &err), err, ATTN_E_PARSE,
               "\"num_layers\" is T5's key, not BART's or Marian's (encoder_layers): a config "
               "that mixes families (model_type bart)", "config.json");
    set_config(dir, "num_layers", NULL);
    set_config(dir, "activation_function", cJSON_CreateString("tanh"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "activation_function \"tanh\" is not computed (gelu, gelu_new, relu or silu) "
               "(model_type bart)", "config.json");
    set_config(dir, "activation_function", cJSON_CreateString("gelu"));
    set_config(dir, "decoder_attention_heads", cJSON_CreateNumber(5));
    expect_err(open_err(dir, &err), err, ATTN_E_HEADS,
               "d_model 32 is not divisible by the heads (4 encoder, 5 decoder)", "config.json");
    set_config(dir, "decoder_attention_heads", cJSON_CreateNumber(2));
    /* the position table has max_position_embeddings + 2 rows */
    set_config(dir, "max_position_embeddings", cJSON_CreateNumber(42));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor model.encoder.embed_positions.weight: [44, 32] expected, [42, 32] found "
               "(as stored, [out, in]; bart config.json: d_model 32, encoder_ffn_dim 48, "
               "decoder_ffn_dim 40, vocab_size 60, max_position_embeddings 42 + 2)",
               "model.safetensors");
    set_config(dir, "max_position_embeddings", cJSON_CreateNumber(40));
    /* a source longer than the positions */
    Lm lm;
    memset(&lm, 0, sizeof lm);
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s", err.msg);
    int ids[41] = {0};
    assert_int_equal(rt_forward_encdec(lm.rt, lm.model->weights, ids, 41, ids, 3, NULL, NULL, &err),
                     -ATTN_E_TOO_MANY_TOKENS);
    assert_non_null(strstr(err.msg, "at most 40"));
    assert_int_equal(rt_forward_encdec(lm.rt, lm.model->weights, ids, 40, ids, 3, NULL, NULL, &err), 0);
    lm_close(&lm);
    /* untied without its lm_head */
    set_config(dir, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor lm_head.weight: config.json's tie_word_embeddings is false",
               "model.safetensors");
    set_config(dir, "tie_word_embeddings", cJSON_CreateTrue());
    /* a decoder layer missing */
    set_config(dir, "decoder_layers", cJSON_CreateNumber(4));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "config.json says decoder_layers 4 but the file has 3 layers", "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
}

/* Marian's (model_type marian, the same file): MarianConfig's defaults (the
 * decoder starts with the pad token 58100: above a small vocabulary), a
 * separate decoder vocabulary refused by name, a folder whose tokenizer is
 * only SentencePiece's .spm files refused naming them, a source longer than
 * the sinusoid's max_position_embeddings (no offset), and 40 taken. Its
 * maps and probabilities are test_encdec's. */
static void test_marian_bad_input(void **state)
{
    (void)state;
    AttnErr err;
    char *dir = fs_tmpdir(), p[1024];
    static const char *const files[] = {"config.json", "model.safetensors"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[1024];
        snprintf(a, sizeof a, "tests/fixtures/families/marian/marian-swish-tied/%s", files[i]);
        fs_copy(a, fs_join(p, dir, files[i]));
    }
    /* Marian's refusals name Marian, never BART's file: each bad value
     * (key, JSON) with the piece its message must hold */
    static const char *const bad[][3] = {
        {"architectures", "[\"BartForConditionalGeneration\"]",
         "architectures names BartForConditionalGeneration, not a Marian model: a config that "
         "mixes families (model_type \"marian\"; BartForConditionalGeneration is BART's class, "
         "model_type \"bart\")"},
        {"d_model", "-1", "\"d_model\" must be a whole number from 1 to 131072 (model_type marian)"},
        {"max_position_embeddings", "\"x\"",
         "\"max_position_embeddings\" must be a whole number from 1 to 4194304 (model_type marian)"},
        {"pad_token_id", "\"x\"",
         "\"pad_token_id\" must be null, a whole number from 0 or a list of them (model_type "
         "marian)"},
        {"scale_embedding", "1", "\"scale_embedding\" must be true or false (model_type marian)"},
        {"activation_function", "\"tanh\"",
         "activation_function \"tanh\" is not computed (gelu, gelu_new, relu or silu) "
         "(model_type marian)"},
        {"num_layers", "2", "\"num_layers\" is T5's key, not BART's or Marian's (encoder_layers): "
         "a config that mixes families (model_type marian)"},
        {"decoder_attention_heads", "5",
         "marian config.json: d_model 32 is not divisible by the heads (4 encoder, 5 decoder)"},
        {"d_model", "64",
         "tensor model.shared.weight: [60, 64] expected, [60, 32] found (as stored, [out, in]; "
         "marian config.json: d_model 64, encoder_ffn_dim 48, decoder_ffn_dim 40, vocab_size 60)"},
    };
    char keep[1024];
    fs_join(keep, dir, "config.json");
    cJSON *json = read_json(keep);
    char *orig = cJSON_Print(json);
    cJSON_Delete(json);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set_config(dir, bad[i][0], cJSON_Parse(bad[i][1]));
        assert_true(open_err(dir, &err) < 0);
        if (!strstr(err.msg, bad[i][2]) || strstr(err.msg, "bart ") || strstr(err.msg, "bart:"))
            fail_msg("%s %s: \"%s\", expected \"%s\"", bad[i][0], bad[i][1], err.msg, bad[i][2]);
        fs_write_text(keep, orig);
    }
    free(orig);
    set_config(dir, "decoder_start_token_id", NULL);
    expect_err(open_err(dir, &err), err, ATTN_E_RANGE,
               "marian config.json: decoder_start_token_id 58100 is not below vocab_size 60",
               "config.json");
    set_config(dir, "decoder_start_token_id", cJSON_CreateNumber(2));
    set_config(dir, "share_encoder_decoder_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "a separate decoder vocabulary (share_encoder_decoder_embeddings false, "
               "decoder_vocab_size 60, vocab_size 60) is not computed", "config.json");
    set_config(dir, "share_encoder_decoder_embeddings", NULL);
    set_config(dir, "decoder_vocab_size", cJSON_CreateNumber(50));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "a separate decoder vocabulary (share_encoder_decoder_embeddings true, "
               "decoder_vocab_size 50, vocab_size 60)", "config.json");
    set_config(dir, "decoder_vocab_size", cJSON_CreateNull());
    /* opus-mt as Helsinki-NLP ships it: SentencePiece's files and a vocab.json,
     * no tokenizer.json: the tokenizer's loader names the .spm files */
    Bpe *bpe = NULL;
    fs_write_text(fs_join(p, dir, "vocab.json"), "{}");
    expect_err(bpe_load_dir(&bpe, dir, &err), err, ATTN_E_IO, "(merges.txt is missing)", dir);
    fs_write_text(fs_join(p, dir, "source.spm"), "");
    expect_err(bpe_load_dir(&bpe, dir, &err), err, ATTN_E_UNSUPPORTED,
               "no tokenizer.json: the tokenizer is SentencePiece's source.spm only", dir);
    assert_null(bpe);
    remove(p);
    remove(fs_join(p, dir, "vocab.json"));
    /* the stand-in tokenizer.json: opens; positions up to max_position_embeddings */
    fs_copy("tests/fixtures/families/marian/marian-swish-tied/tokenizer.json",
            fs_join(p, dir, "tokenizer.json"));
    Lm lm;
    memset(&lm, 0, sizeof lm);
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s", err.msg);
    int ids[41] = {0};
    assert_int_equal(rt_forward_encdec(lm.rt, lm.model->weights, ids, 41, ids, 3, NULL, NULL, &err),
                     -ATTN_E_TOO_MANY_TOKENS);
    assert_non_null(strstr(err.msg, "at most 40"));
    assert_int_equal(rt_forward_encdec(lm.rt, lm.model->weights, ids, 40, ids, 40, NULL, NULL, &err),
                     0);
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);
}

/* The word embeddings under another name than shared.weight (make_bart.py's
 * bart-split-embeds: the encoder's and decoder's embed_tokens and lm_head;
 * test_encdec computes it): shared and a copy of the same numbers open; two
 * copies that differ are refused naming both (transformers ties them to
 * one parameter); a tied lm_head alone opens, an untied one is no
 * embedding; none of the names refused naming them. */
static void test_embed_layouts(void **state)
{
    (void)state;
    AttnErr err;
    char *dir = fs_tmpdir(), p[1024], a[1024];
    static const char *const files[] = {"config.json", "model.safetensors", "tokenizer.json"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(a, sizeof a, FIX "bart-split-embeds/%s", files[k]);
        fs_copy(a, fs_join(p, dir, files[k]));
    }
    fs_join(p, dir, "model.safetensors");
    /* shared.weight beside the decoder's copy: the older files' layout */
    StParts st = fs_st_read(p);
    cJSON *enc = cJSON_DetachItemFromObjectCaseSensitive(st.header,
                                                         "model.encoder.embed_tokens.weight");
    assert_non_null(enc);
    cJSON_AddItemToObject(st.header, "model.shared.weight", enc);
    fs_st_write(p, &st);
    Lm lm;
    memset(&lm, 0, sizeof lm);
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s", err.msg);
    lm_close(&lm);
    /* one number of the decoder's copy changed */
    st = fs_st_read(p);
    cJSON *dec = cJSON_GetObjectItemCaseSensitive(st.header, "model.decoder.embed_tokens.weight");
    int at = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(dec, "data_offsets"), 0)->valueint;
    st.data[at + 5] ^= 0x40;
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "tensors model.shared.weight and model.decoder.embed_tokens.weight differ: "
               "transformers ties them to one parameter", "model.safetensors");
    /* the tied lm_head alone: opens (make_marian.py's marian-lmhead-embeds
     * is computed in test_encdec); untied, it is no embedding */
    st = fs_st_read(p);
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, "model.shared.weight");
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, "model.decoder.embed_tokens.weight");
    fs_st_write(p, &st);
    memset(&lm, 0, sizeof lm);
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s", err.msg);
    lm_close(&lm);
    set_config(dir, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor model.shared.weight, nor model.encoder.embed_tokens.weight or "
               "model.decoder.embed_tokens.weight (the same numbers under another name)",
               "model.safetensors");
    set_config(dir, "tie_word_embeddings", cJSON_CreateTrue());
    /* none of the names: the layers give the prefix, the row names them */
    st = fs_st_read(p);
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, "lm_head.weight");
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor model.shared.weight, nor model.encoder.embed_tokens.weight, "
               "model.decoder.embed_tokens.weight or lm_head.weight (the same numbers under "
               "another name)", "model.safetensors");
    /* nor any layer: not these models' weights */
    st = fs_st_read(p);
    cJSON *e, *next;
    for (e = st.header->child; e; e = next) {
        next = e->next;
        if (strstr(e->string, "layers."))
            cJSON_Delete(cJSON_DetachItemViaPointer(st.header, e));
    }
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor shared.weight, encoder.embed_tokens.weight or "
               "decoder.embed_tokens.weight (under model. or none): not a BART or Marian model's "
               "weights", "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
}

/* The same check on every family (the config reader's, not BART's): a
 * BERT config naming T5's class, a Qwen3 config naming Llama's, each
 * refused naming both; a Gemma 3 class under either of its model_types and
 * an mT5 class under t5 are one family's. */
static void test_mixed_families(void **state)
{
    (void)state;
    static const char *const cases[][4] = {
        {"tests/fixtures/families/bert/bert-f32-pretraining", "T5ForConditionalGeneration",
         "architectures names T5ForConditionalGeneration, not a BERT model: a config that mixes "
         "families (model_type \"bert\"; T5ForConditionalGeneration is T5's class, model_type \"t5\")"},
        {"tests/fixtures/families/qwen3/qwen3-f32-tied", "LlamaForCausalLM",
         "architectures names LlamaForCausalLM, not a Qwen3 model: a config that mixes families "
         "(model_type \"qwen3\"; LlamaForCausalLM is Llama's class, model_type \"llama\")"},
        {"tests/fixtures/families/bert/xlmr-f32-untied", "RobertaForMaskedLM",
         "architectures names RobertaForMaskedLM, not an XLM-RoBERTa model: a config that "
         "mixes families (model_type \"xlm-roberta\"; RobertaForMaskedLM is RoBERTa's class, "
         "model_type \"roberta\")"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        AttnErr err;
        char *dir = fs_tmpdir(), p[1024], a[1024];
        static const char *const files[] = {"config.json", "model.safetensors"};
        for (size_t k = 0; k < 2; k++) {
            snprintf(a, sizeof a, "%s/%s", cases[i][0], files[k]);
            fs_copy(a, fs_join(p, dir, files[k]));
        }
        set_config(dir, "architectures", cJSON_CreateStringArray(&cases[i][1], 1));
        expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED, cases[i][2], "config.json");
        fs_rm_tree(dir);
        free(dir);
    }
    /* one family's classes: the reader's verdict on a config naming each */
    static const char *const same[][2] = {
        {"t5", "MT5ForConditionalGeneration"}, {"mt5", "T5ForConditionalGeneration"},
        {"gemma3_text", "Gemma3ForConditionalGeneration"}, {"marian", "MarianMTModel"},
        {"bart", "BartModel"}, {"qwen2", "Qwen2MoeForCausalLM"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"model_type\": \"%s\", \"architectures\": [\"%s\"]}",
                 same[i][0], same[i][1]);
        for (const ArchDesc *const *a = arch_builtin; *a; a++) {
            AttnErr err = {0};
            void *cfg = malloc((*a)->rt->cfg_size);
            assert_non_null(cfg);
            model_config_parse(*a, cfg, text, strlen(text), "config.json", &err);
            free(cfg);
            if (strstr(err.msg, "mixes families"))
                fail_msg("%s with %s: %s", same[i][0], same[i][1], err.msg);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_marian_bad_input),
        cmocka_unit_test(test_mixed_families),
        cmocka_unit_test(test_embed_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
