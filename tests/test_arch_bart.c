/* Tests for BART (src/core/arch_bart.c) through the loader and the adapter
 * (lm.h), on tests/fixtures/families/bart/ (make_bart.py; its maps and
 * probabilities are test_encdec.c's): bad input, each with its code and a
 * message naming the file and the field: a config that mixes families, an
 * activation not computed, heads that do not divide d_model, a position
 * table of the wrong size (max_position_embeddings + 2 rows), a source
 * longer than the positions, an untied config without lm_head, a decoder
 * layer missing; Marian's (test_marian_bad_input). Run from the repository root. */
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
#include "test_fixtures.h"

#define FIX "tests/fixtures/families/bart/"

/* ---- bad input -------------------------------------------------------------------- */
static char *copy_fixture(const char *fixture)
{
    static const char *const files[] = {"config.json", "model.safetensors"};
    char *dir = fs_tmpdir();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, FIX "%s/%s", fixture, files[i]);
        fs_copy(a, fs_join(b, dir, files[i]));
    }
    return dir;
}

static void set_config(const char *dir, const char *key, cJSON *value)
{
    char p[1024];
    cJSON *cfg = read_json(fs_join(p, dir, "config.json"));
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, key);
    if (value)
        cJSON_AddItemToObject(cfg, key, value);
    char *text = cJSON_Print(cfg);
    fs_write_text(p, text);
    free(text);
    cJSON_Delete(cfg);
}

static int open_err(const char *dir, AttnErr *err)
{
    Lm lm;
    memset(err, 0, sizeof *err);
    int rc = lm_open(&lm, dir, err);
    assert_null(lm.model);
    assert_null(lm.rt);
    return rc;
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
               "mixes families", "config.json");
    set_config(dir, "architectures", NULL);
    set_config(dir, "num_layers", cJSON_CreateNumber(2));
    expect_err(open_err(dir, &err), err, ATTN_E_PARSE,
               "\"num_layers\" is T5's key, not BART's (encoder_layers)", "config.json");
    set_config(dir, "num_layers", NULL);
    set_config(dir, "activation_function", cJSON_CreateString("tanh"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "activation_function \"tanh\" is not computed", "config.json");
    set_config(dir, "activation_function", cJSON_CreateString("gelu"));
    set_config(dir, "decoder_attention_heads", cJSON_CreateNumber(5));
    expect_err(open_err(dir, &err), err, ATTN_E_HEADS,
               "d_model 32 is not divisible by the heads (4 encoder, 5 decoder)", "config.json");
    set_config(dir, "decoder_attention_heads", cJSON_CreateNumber(2));
    /* the position table has max_position_embeddings + 2 rows */
    set_config(dir, "max_position_embeddings", cJSON_CreateNumber(42));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor model.encoder.embed_positions.weight: [44, 32] expected, [42, 32] found",
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_marian_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
