/* Tests for the phi3 description (src/core/arch_phi3.c) read by the generic
 * loader (src/io/model_config.c, model_file.c) and opened through lm.h, on
 * the folders of tests/fixtures/families/phi3/make_phi3.py (their maps and
 * probabilities against the float64 reference are test_families.c's):
 * config.json's defaults as transformers' Phi3Config has them (seen through
 * the description's shape and facts, LmInfo, the forward's windows and, for
 * rms_norm_eps, its logits; the config struct being private), longrope's
 * lists and attention factor, the rotary dimensions of
 * partial_rotary_factor; every bad input refused with
 * its code and a message naming the file, the field or value and phi3:
 * required fields missing, wrong types, options not computed, values out of
 * range, factor lists of the wrong length, a tensor whose shape the config
 * does not give (named with its .safetensors file), lm_head missing when
 * untied. Run from the repository root. */
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

extern const ArchDesc desc_phi3;

#define FIX "tests/fixtures/families/phi3/"

/* ---- config.json ----------------------------------------------------------------- */
#define BASE "\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, " \
             "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100"

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fabs(b);
}

static void test_config(void **state)
{
    (void)state;
    RtShape s;
    ArchFacts f;
    /* defaults: KV = H, head_dim = hidden / H, 4096 positions, θ 10000, all
     * dimensions rotated, no scaling, bos 1, scores / √head_dim */
    arch_parse_ok(&desc_phi3, "{" BASE "}", &s, &f);
    assert_true(s.n_layer == 2 && s.n_head == 4 && s.n_kv_head == 4 && s.d_head == 16);
    assert_true(s.hidden == 64 && s.n_vocab == 100 && s.n_positions == 4096);
    assert_true(s.n_rows == 1 && s.row_w[0] == 2 * 96);
    assert_int_equal(s.rope.kind, ROPE_HALF);
    assert_int_equal(s.rope.dims, 16);
    assert_true(s.rope.theta == 10000.0);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
    assert_int_equal(s.rope2.kind, ROPE_NONE);
    assert_false(s.bidirectional);
    assert_true(f.bos_id == 1 && f.scale_attn == 1 && f.scale_by_layer == 0);
    /* head_dim given; hidden / H floored as transformers does; KV; θ; bos */
    arch_parse_ok(&desc_phi3, "{\"model_type\": \"phi3\", \"hidden_size\": 26, \"num_hidden_layers\": 1, "
             "\"num_attention_heads\": 4, \"intermediate_size\": 8, \"vocab_size\": 10, "
             "\"bos_token_id\": 10, \"rope_theta\": 250000.0}", &s, &f);
    assert_true(s.d_head == 6 && s.rope.dims == 6 && s.rope.theta == 250000.0);
    assert_int_equal(f.bos_id, -1); /* outside the vocabulary: none */
    arch_parse_ok(&desc_phi3, "{" BASE ", \"head_dim\": 24, \"num_key_value_heads\": 2, \"bos_token_id\": null, "
             "\"max_position_embeddings\": 131072}", &s, &f);
    assert_true(s.d_head == 24 && s.n_kv_head == 2 && s.rope.dims == 24);
    assert_true(s.n_positions == 131072 && f.bos_id == -1);
    /* partial_rotary_factor: int(head_dim · factor) rotated (Phi-4-mini's 0.75 of 128) */
    arch_parse_ok(&desc_phi3, "{\"model_type\": \"phi3\", \"hidden_size\": 3072, \"num_hidden_layers\": 32, "
             "\"num_attention_heads\": 24, \"num_key_value_heads\": 8, \"intermediate_size\": "
             "8192, \"vocab_size\": 200064, \"partial_rotary_factor\": 0.75, "
             "\"tie_word_embeddings\": true}", &s, &f);
    assert_true(s.d_head == 128 && s.rope.dims == 96 && s.n_kv_head == 8);
    arch_parse_ok(&desc_phi3, "{" BASE ", \"partial_rotary_factor\": 0.3}", &s, &f); /* int(4.8) = 4 */
    assert_int_equal(s.rope.dims, 4);
    /* longrope: the lists (rotary dims / 2 each), original max default 4096,
     * the attention factor √(1 + ln(max / orig) / ln(orig)) */
    arch_parse_ok(&desc_phi3, "{" BASE ", \"partial_rotary_factor\": 0.5, \"max_position_embeddings\": 131072, "
             "\"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1, 1.5, 2, 3], "
             "\"long_factor\": [4, 5, 6.5, 7]}}", &s, &f);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_LONGROPE);
    assert_true(s.rope.dims == 8 && s.rope.orig_max == 4096);
    assert_true(s.rope.short_f[1] == 1.5 && s.rope.short_f[3] == 3.0);
    assert_true(s.rope.long_f[0] == 4.0 && s.rope.long_f[2] == 6.5);
    assert_true(near(s.rope.attn_factor, sqrt(1.0 + log(32.0) / log(4096.0))));
    /* rope_type, a given attention_factor, a given original max */
    arch_parse_ok(&desc_phi3, "{" BASE ", \"original_max_position_embeddings\": 2048, \"rope_scaling\": "
             "{\"rope_type\": \"longrope\", \"short_factor\": [1, 1, 1, 1, 1, 1, 1, 2], "
             "\"long_factor\": [1, 1, 1, 1, 1, 1, 1, 3], \"attention_factor\": 1.25}}", &s, &f);
    assert_true(s.rope.scaling == ROPE_SCALE_LONGROPE && s.rope.orig_max == 2048);
    assert_true(s.rope.attn_factor == 1.25 && s.rope.long_f[7] == 3.0);
    /* max ≤ original: factor 1; the older names su and yarn are longrope */
    arch_parse_ok(&desc_phi3, "{" BASE ", \"max_position_embeddings\": 4096, \"rope_scaling\": {\"type\": \"su\", "
             "\"short_factor\": [1, 1, 1, 1, 1, 1, 1, 1], \"long_factor\": [2, 2, 2, 2, 2, 2, 2, "
             "2]}}", &s, &f);
    assert_true(s.rope.scaling == ROPE_SCALE_LONGROPE && s.rope.attn_factor == 1.0);
    arch_parse_ok(&desc_phi3, "{" BASE ", \"rope_scaling\": {\"type\": \"yarn\", \"short_factor\": [1, 1, 1, 1, "
             "1, 1, 1, 1], \"long_factor\": [2, 2, 2, 2, 2, 2, 2, 2]}}", &s, &f);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_LONGROPE);
    /* default and null: none */
    arch_parse_ok(&desc_phi3, "{" BASE ", \"rope_scaling\": {\"rope_type\": \"default\"}}", &s, &f);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
    arch_parse_ok(&desc_phi3, "{" BASE ", \"rope_scaling\": null, \"sliding_window\": null, \"head_dim\": null, "
             "\"num_key_value_heads\": null, \"hidden_act\": \"silu\"}", &s, &f);
    assert_true(s.rope.scaling == ROPE_SCALE_NONE && s.d_head == 16 && s.n_kv_head == 4);
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *piece;
        int names_phi3; /* 0: the loader's own message (no family in it) */
    } bad[] = {
        /* required fields */
        {"{\"model_type\": \"phi3\", \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"hidden_size\": a phi3 config.json gives it", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"num_hidden_layers\"", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"intermediate_size\"", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_PARSE,
         "no \"num_attention_heads\"", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96}", ATTN_E_PARSE,
         "no \"vocab_size\"", 1},
        {"{\"hidden_size\": 64}", ATTN_E_PARSE, "no \"model_type\" string (phi3)", 1},
        {"{\"model_type\": \"phi\", \"hidden_size\": 64}", ATTN_E_UNSUPPORTED,
         "model_type \"phi\" is not phi3", 1},
        /* wrong types and values */
        {"{\"model_type\": \"phi3\", \"hidden_size\": \"64\", \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}", ATTN_E_RANGE,
         "phi3: \"hidden_size\" must be a whole number from 1 to 131072", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2.5, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "phi3: \"num_hidden_layers\"", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 0}",
         ATTN_E_RANGE, "phi3: \"vocab_size\"", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": [4], \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_RANGE, "phi3: \"num_attention_heads\"", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": null, \"vocab_size\": 100}",
         ATTN_E_RANGE, "phi3: \"intermediate_size\" must be a whole number", 1},
        {"{" BASE ", \"max_position_embeddings\": -4}", ATTN_E_RANGE,
         "\"max_position_embeddings\"", 1},
        {"{" BASE ", \"original_max_position_embeddings\": 0}", ATTN_E_RANGE,
         "\"original_max_position_embeddings\"", 1},
        {"{" BASE ", \"num_key_value_heads\": 3}", ATTN_E_HEADS,
         "phi3: num_attention_heads 4 is not divisible by num_key_value_heads 3", 1},
        {"{\"model_type\": \"phi3\", \"hidden_size\": 3, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 96, \"vocab_size\": 100}",
         ATTN_E_HEADS, "hidden_size 3 has no dimension", 1},
        {"{" BASE ", \"rms_norm_eps\": -1}", ATTN_E_RANGE, "phi3: \"rms_norm_eps\"", 1},
        {"{" BASE ", \"rms_norm_eps\": \"small\"}", ATTN_E_RANGE, "phi3: \"rms_norm_eps\"", 1},
        {"{" BASE ", \"rope_theta\": 0}", ATTN_E_RANGE, "phi3: \"rope_theta\"", 1},
        {"{" BASE ", \"sliding_window\": 0}", ATTN_E_RANGE, "phi3: \"sliding_window\"", 1},
        {"{" BASE ", \"sliding_window\": \"all\"}", ATTN_E_RANGE, "phi3: \"sliding_window\"", 1},
        {"{" BASE ", \"tie_word_embeddings\": 1}", ATTN_E_PARSE, "\"tie_word_embeddings\"", 0},
        {"{" BASE ", \"bos_token_id\": -3}", ATTN_E_RANGE, "\"bos_token_id\"", 0},
        /* partial_rotary_factor outside (0, 1], or rotating an odd count */
        {"{" BASE ", \"partial_rotary_factor\": 1.5}", ATTN_E_RANGE,
         "phi3: partial_rotary_factor 1.5 is outside (0, 1]", 1},
        {"{" BASE ", \"partial_rotary_factor\": 0}", ATTN_E_RANGE,
         "phi3: \"partial_rotary_factor\" must be a number in (0, 1]", 1},
        {"{" BASE ", \"partial_rotary_factor\": -0.5}", ATTN_E_RANGE,
         "\"partial_rotary_factor\"", 1},
        {"{" BASE ", \"partial_rotary_factor\": \"half\"}", ATTN_E_RANGE,
         "\"partial_rotary_factor\"", 1},
        {"{" BASE ", \"partial_rotary_factor\": 0.2}", ATTN_E_SHAPE,
         "phi3: partial_rotary_factor 0.2 of head_dim 16 gives 3 rotary dimensions", 1},
        {"{" BASE ", \"partial_rotary_factor\": 0.1}", ATTN_E_SHAPE, "gives 1 rotary", 1},
        /* options not computed */
        {"{" BASE ", \"hidden_act\": \"gelu\"}", ATTN_E_UNSUPPORTED,
         "phi3: hidden_act \"gelu\" is not computed", 1},
        {"{" BASE ", \"hidden_act\": 3}", ATTN_E_PARSE, "phi3: \"hidden_act\" must be a string", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2}}",
         ATTN_E_UNSUPPORTED, "phi3: rope_scaling type \"dynamic\" is not computed", 1},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2}}",
         ATTN_E_UNSUPPORTED, "phi3: rope_scaling type \"linear\"", 1},
        {"{" BASE ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8}}",
         ATTN_E_UNSUPPORTED, "\"llama3\"", 1},
        {"{" BASE ", \"rope_scaling\": {\"short_factor\": [1]}}", ATTN_E_PARSE,
         "phi3: rope_scaling has no \"rope_type\" (or \"type\") string", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": 1}}", ATTN_E_PARSE,
         "phi3: rope_scaling has no \"rope_type\"", 1},
        {"{" BASE ", \"rope_scaling\": 5}", ATTN_E_PARSE, "\"rope_scaling\" must be null or an "
         "object", 0},
        /* longrope's lists: present, numbers, rotary dims / 2 each */
        {"{" BASE ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1, 1, 1, 1, "
         "1, 1, 1, 1]}}", ATTN_E_PARSE,
         "phi3: rope_scaling of type longrope has no \"long_factor\" list", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"longrope\", \"long_factor\": [1, 1, 1, 1, "
         "1, 1, 1, 1]}}", ATTN_E_PARSE, "no \"short_factor\" list", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1, 1, 1], "
         "\"long_factor\": [2, 2, 2]}}", ATTN_E_SHAPE,
         "phi3: rope_scaling's short_factor has 3 numbers and long_factor 3: longrope wants "
         "rotary dimensions / 2 = 8 each", 1},
        {"{" BASE ", \"partial_rotary_factor\": 0.5, \"rope_scaling\": {\"type\": \"longrope\", "
         "\"short_factor\": [1, 1, 1, 1], \"long_factor\": [2, 2, 2, 2, 2, 2, 2, 2]}}",
         ATTN_E_SHAPE, "long_factor 8: longrope wants rotary dimensions / 2 = 4 each", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": 1, "
         "\"long_factor\": [2]}}", ATTN_E_PARSE,
         "phi3: rope_scaling's \"short_factor\" must be a list", 1},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1, 1, 1, 1, "
         "1, 1, 1, -1], \"long_factor\": [2, 2, 2, 2, 2, 2, 2, 2]}}", ATTN_E_RANGE,
         "\"short_factor\"'s element 8 must be a number above 0", 0},
        {"{" BASE ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1, 1, 1, 1, "
         "1, 1, 1, 1], \"long_factor\": [2, 2, 2, 2, 2, 2, 2, 2], \"attention_factor\": -1}}",
         ATTN_E_RANGE, "phi3: rope_scaling's \"attention_factor\" must be a positive number", 1},
        {"{" BASE ", \"original_max_position_embeddings\": 1, \"rope_scaling\": {\"type\": "
         "\"longrope\", \"short_factor\": [1, 1, 1, 1, 1, 1, 1, 1], \"long_factor\": [2, 2, 2, "
         "2, 2, 2, 2, 2]}}", ATTN_E_RANGE,
         "phi3: original_max_position_embeddings 1 leaves longrope's attention factor", 1},
        {"{" BASE ",}", ATTN_E_PARSE, "not valid JSON", 0},
        {"[1]", ATTN_E_PARSE, "not a JSON object", 0},
    };
    void *cfg = arch_cfg_new(&desc_phi3);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        AttnErr err;
        int rc = arch_parse(&desc_phi3, cfg, bad[i].text, &err);
        if (rc != -bad[i].code || err.code != bad[i].code || !strstr(err.msg, bad[i].piece) ||
            strcmp(err.file, "config.json") || (bad[i].names_phi3 && !strstr(err.msg, "phi3")))
            fail_msg("case %zu: rc %d \"%s\" (%s); expected %d with \"%s\"%s", i, rc, err.msg,
                     err.file, bad[i].code, bad[i].piece,
                     bad[i].names_phi3 ? " naming phi3" : "");
        /* refused: the buffer zeroed */
        RtShape s;
        desc_phi3.rt->shape(cfg, &s);
        assert_int_equal(s.n_layer, 0);
    }
    free(cfg);
}

/* ---- folders through lm_open ----------------------------------------------------- */

/* A copy of fixture's config.json and model.safetensors in a new temp folder. */
static char *copy_fixture(const char *fixture)
{
    return fixture_copy(FIX, fixture);
}

static void open_ok(Lm *lm, const char *dir)
{
    AttnErr err = {0};
    if (lm_open(lm, dir, &err) != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
}

/* Every layer's window after a forward of T tokens. */
static void expect_windows(Lm *lm, int window)
{
    static const int ids[6] = {3, 1, 4, 1, 5, 9};
    AttnErr err = {0};
    assert_int_equal(lm_forward(lm, ids, 6, NULL, &err), 0);
    for (int l = 0; l < lm->info.n_layer; l++) {
        assert_int_equal(lm->rt->attn[l].window, window);
        assert_int_equal(lm->rt->attn[l].causal, 1);
        assert_true(lm->rt->attn[l].mul == (float)(1.0 / sqrt((double)lm->info.d_head)));
    }
}

/* The logits of dir's last position after a forward of its first 8 tokens
 * (ids 0..7) into out (n_vocab floats). */
static void logits_of(const char *dir, float *out, int V)
{
    static const int ids[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    Lm lm;
    AttnErr err = {0};
    open_ok(&lm, dir);
    assert_int_equal(lm.info.n_vocab, V);
    assert_int_equal(lm_forward(&lm, ids, 8, NULL, &err), 0);
    assert_int_equal(rt_logits(lm.rt, lm.model->weights, 7, out, &err), 0);
    lm_close(&lm);
}

/* rms_norm_eps left out is 1e-5: the same floats as given 1e-5, others than 1e-6 */
static void test_eps_default(void **state)
{
    (void)state;
    float a[50], b[50];
    char *dir = copy_fixture("phi3-window-f32");
    logits_of(dir, a, 50);
    set_config(dir, "rms_norm_eps", cJSON_CreateNumber(1e-5));
    logits_of(dir, b, 50);
    assert_memory_equal(a, b, sizeof a);
    set_config(dir, "rms_norm_eps", cJSON_CreateNumber(1e-6));
    logits_of(dir, b, 50);
    assert_memory_not_equal(a, b, sizeof a);
    fs_rm_tree(dir);
    free(dir);
}

static void test_folders(void **state)
{
    (void)state;
    Lm lm;
    /* the window on every layer; LmInfo; F32 matrices converted, none in place */
    open_ok(&lm, FIX "phi3-window-f32");
    assert_string_equal(lm.info.arch, "phi3");
    assert_true(lm.info.n_layer == 3 && lm.info.n_head == 4 && lm.info.n_kv_head == 4);
    assert_true(lm.info.d_head == 12 && lm.info.n_positions == 32 && lm.info.n_vocab == 50);
    assert_true(lm.info.bos_id == 1 && lm.info.scale_attn == 1);
    assert_string_equal(lm.info.embed_name, "embed_tokens");
    assert_int_equal(lm.model->n_bf16, 0);
    assert_int_equal(lm.model->n_converted, 4 * 3);
    assert_int_equal(lm.model->tied, 0);
    expect_windows(&lm, 4);
    lm_close(&lm);
    /* BF16 tied (Phi-4-mini's layout): every matrix and the table in place,
     * lm_head the embeddings; no window */
    open_ok(&lm, FIX "phi3-longrope-short-tied-bf16");
    assert_int_equal(lm.model->n_bf16, 4 * 2 + 1);
    assert_int_equal(lm.model->n_converted, 2 * 2 + 1);
    assert_int_equal(lm.model->tied, 1);
    assert_int_equal(lm.rt->sh.rope.scaling, ROPE_SCALE_LONGROPE);
    assert_true(lm.rt->sh.rope.dims == 12 && lm.rt->sh.rope.attn_factor == 1.3);
    expect_windows(&lm, 0);
    lm_close(&lm);

    AttnErr err;
    char p[1024];
    /* sliding_window null: none; the default is untied, so a folder without
     * lm_head is refused naming it */
    char *dir = copy_fixture("phi3-window-f32");
    set_config(dir, "sliding_window", cJSON_CreateNull());
    open_ok(&lm, dir);
    expect_windows(&lm, 0);
    lm_close(&lm);
    set_config(dir, "sliding_window", cJSON_CreateNumber(2));
    open_ok(&lm, dir);
    expect_windows(&lm, 2);
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);
    dir = copy_fixture("phi3-longrope-short-tied-bf16");
    set_config(dir, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "phi3: no tensor lm_head.weight",
               NULL);
    cJSON *cfg = read_json(fs_join(p, dir, "config.json"));
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, "tie_word_embeddings");
    char *text = cJSON_Print(cfg);
    fs_write_text(p, text);
    free(text);
    cJSON_Delete(cfg);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "tie_word_embeddings false", NULL);
    /* config.json's refusals reach lm_open's caller naming config.json */
    set_config(dir, "tie_word_embeddings", cJSON_CreateTrue());
    set_config(dir, "partial_rotary_factor", cJSON_CreateNumber(1.25));
    expect_err(open_err(dir, &err), err, ATTN_E_RANGE,
               "phi3: partial_rotary_factor 1.25 is outside (0, 1]", "config.json");
    set_config(dir, "partial_rotary_factor", cJSON_CreateNumber(0.5));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE, "longrope wants rotary dimensions / 2 = 4",
               "config.json");
    fs_rm_tree(dir);
    free(dir);

    /* a tensor of the wrong shape: the config's sizes changed under the file */
    dir = copy_fixture("phi3-longrope-long-f32");
    set_config(dir, "num_key_value_heads", cJSON_CreateNumber(4));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "phi3 tensor model.layers.0.self_attn.qkv_proj.weight: [144, 48] expected, "
               "[96, 48] found", "model.safetensors");
    set_config(dir, "num_key_value_heads", cJSON_CreateNumber(2));
    set_config(dir, "intermediate_size", cJSON_CreateNumber(80));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "phi3 tensor model.layers.0.mlp.gate_up_proj.weight: [160, 48] expected, "
               "[128, 48] found", "model.safetensors");
    set_config(dir, "intermediate_size", cJSON_CreateNumber(64));
    set_config(dir, "vocab_size", cJSON_CreateNumber(65));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "phi3 tensor model.embed_tokens.weight: [65, 48] expected, [64, 48] found",
               "model.safetensors");
    set_config(dir, "vocab_size", cJSON_CreateNumber(64));
    /* a tensor missing */
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, "model.layers.1.mlp.gate_up_proj.weight");
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor model.layers.1.mlp.gate_up_proj.weight", "model.safetensors");
    /* the unchanged copy opens (the refusals above were the changes') */
    fs_copy(FIX "phi3-longrope-long-f32/model.safetensors", p);
    open_ok(&lm, dir);
    assert_int_equal(lm.rt->sh.rope.dims, 6);
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_folders),
        cmocka_unit_test(test_eps_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
