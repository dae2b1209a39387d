/* Tests for the Gemma description (src/core/arch_gemma.c: gemma2,
 * gemma3_text and a gemma3 folder's language model) read by the generic
 * loader (src/io/model_config.c, model_file.c) and opened through lm_open:
 *   - config.json's defaults: Gemma2Config's and Gemma3TextConfig's (a gemma3
 *     folder's text_config as gemma-3-4b-it ships it, without heads, kv heads,
 *     head_dim, query_pre_attn_scalar, rope_theta, rope_local_base_freq,
 *     sliding_window_pattern), seen through the forward's shape and each
 *     layer's attention (window, scaling, soft cap) after a forward;
 *     Gemma 2's soft caps absent (50, 30) and null (none); the final cap on
 *     the logits;
 *   - the newer tensor names (model.language_model.*, model.vision_tower.*)
 *     give the released names' floats; a gemma3 folder's logits uncapped;
 *   - every bad input refused with its code and a message naming the file,
 *     the key or value and the family: required keys, types, values out of
 *     range, options not computed, a tensor of the wrong shape (naming the
 *     .safetensors file and the tensor), a missing one, untied without
 *     lm_head, weights of no Gemma naming.
 * The fixtures are tests/fixtures/families/gemma/ (make_gemma.py). Run from
 * the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/arch.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"

#include "test_gpt2_fs.h"

extern const ArchDesc desc_gemma;

#define FIX "tests/fixtures/families/gemma/"

/* msg names the family: "gemma" in any case. */
static int names_family(const char *msg)
{
    char low[1024];
    size_t i = 0;
    for (; msg[i] && i + 1 < sizeof low; i++)
        low[i] = (char)tolower((unsigned char)msg[i]);
    low[i] = '\0';
    return strstr(low, "gemma") != NULL;
}

/* ---- config.json through the description ----------------------------------------- */
static unsigned char cfg_buf[1 << 16];

static int parse(const char *text, AttnErr *err)
{
    assert_true(desc_gemma.rt->cfg_size <= sizeof cfg_buf);
    memset(err, 0, sizeof *err);
    return model_config_parse(&desc_gemma, cfg_buf, text, strlen(text), "cfg.json", err);
}

/* The forward's shape of text (parsed: 0 expected). */
static RtShape shape_of(const char *text)
{
    AttnErr err;
    int rc = parse(text, &err);
    if (rc != 0)
        fail_msg("\"%s\": %s", text, err.msg);
    RtShape sh;
    desc_gemma.rt->shape(cfg_buf, &sh);
    return sh;
}

#define SIZES "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"intermediate_size\": 96"

static void test_config_defaults(void **state)
{
    (void)state;
    /* Gemma2Config's */
    RtShape s = shape_of("{\"model_type\": \"gemma2\", " SIZES "}");
    assert_int_equal(s.n_layer, 2);
    assert_int_equal(s.hidden, 64);
    assert_int_equal(s.n_head, 8);
    assert_int_equal(s.n_kv_head, 4);
    assert_int_equal(s.d_head, 256);
    assert_int_equal(s.n_vocab, 256000);
    assert_int_equal(s.n_positions, 8192);
    assert_int_equal(s.row_w[0], 96);
    assert_int_equal(s.rope.kind, ROPE_HALF);
    assert_int_equal(s.rope.dims, 256);
    assert_true(s.rope.theta == 10000.0);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
    assert_int_equal(s.rope2.kind, ROPE_NONE); /* one rotary embedding */
    assert_false(s.bidirectional);
    /* Gemma3TextConfig's: two rotary embeddings */
    s = shape_of("{\"model_type\": \"gemma3_text\", " SIZES "}");
    assert_int_equal(s.n_vocab, 262208);
    assert_int_equal(s.n_positions, 131072);
    assert_true(s.n_head == 8 && s.n_kv_head == 4 && s.d_head == 256);
    assert_true(s.rope.theta == 1000000.0);
    assert_int_equal(s.rope2.kind, ROPE_HALF);
    assert_true(s.rope2.theta == 10000.0);
    assert_int_equal(s.rope2.scaling, ROPE_SCALE_NONE);
    /* a gemma3 folder: text_config read with Gemma3TextConfig's defaults,
     * the top level's sizes not */
    s = shape_of("{\"model_type\": \"gemma3\", \"hidden_size\": 7, \"text_config\": {" SIZES
                 ", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 8.0}, "
                 "\"sliding_window\": 1024}, \"vision_config\": {\"hidden_size\": 1152}}");
    assert_int_equal(s.hidden, 64);
    assert_true(s.n_head == 8 && s.n_kv_head == 4 && s.d_head == 256 && s.n_vocab == 262208);
    assert_int_equal(s.rope.scaling, ROPE_SCALE_LINEAR);
    assert_true(s.rope.factor == 8.0 && s.rope.theta == 1000000.0);
    assert_true(s.rope2.theta == 10000.0 && s.rope2.scaling == ROPE_SCALE_NONE);
    /* given values; the older "type"; "default" is none */
    s = shape_of("{\"model_type\": \"gemma3_text\", " SIZES ", \"num_attention_heads\": 4, "
                 "\"num_key_value_heads\": 1, \"head_dim\": 32, \"vocab_size\": 100, "
                 "\"rope_theta\": 5e5, \"rope_local_base_freq\": 2e4, \"rope_scaling\": "
                 "{\"type\": \"linear\", \"factor\": 2}}");
    assert_true(s.n_head == 4 && s.n_kv_head == 1 && s.d_head == 32 && s.n_vocab == 100);
    assert_true(s.rope.theta == 5e5 && s.rope2.theta == 2e4 && s.rope.factor == 2.0);
    s = shape_of("{\"model_type\": \"gemma2\", " SIZES ", \"rope_scaling\": {\"rope_type\": "
                 "\"default\"}, \"attn_logit_softcapping\": null, \"final_logit_softcapping\": "
                 "null, \"hidden_activation\": \"gelu_new\", \"hidden_act\": \"whatever\"}");
    assert_int_equal(s.rope.scaling, ROPE_SCALE_NONE);
}

static void test_config_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int code;
        const char *piece;
        int family; /* the message names the family */
    } bad[] = {
        {"{\"model_type\": \"gemma2\", \"num_hidden_layers\": 2, \"intermediate_size\": 96}",
         ATTN_E_PARSE, "no \"hidden_size\"", 1},
        {"{\"model_type\": \"gemma2\", \"hidden_size\": 64, \"intermediate_size\": 96}",
         ATTN_E_PARSE, "no \"num_hidden_layers\"", 1},
        {"{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, \"num_hidden_layers\": 2}",
         ATTN_E_PARSE, "no \"intermediate_size\"", 1},
        {"{\"model_type\": \"gemma3\", " SIZES "}", ATTN_E_PARSE, "no \"text_config\" object", 1},
        {"{\"model_type\": \"gemma3\", \"text_config\": 3}", ATTN_E_PARSE,
         "no \"text_config\" object", 1},
        {"{\"model_type\": \"gemma3\", \"text_config\": {\"hidden_size\": 64}}", ATTN_E_PARSE,
         "no \"num_hidden_layers\"", 1},
        {"{\"model_type\": \"gemma\", " SIZES "}", ATTN_E_UNSUPPORTED, "model_type \"gemma\"", 1},
        {"{" SIZES "}", ATTN_E_PARSE, "model_type", 1},
        {"{\"model_type\": \"gemma2\", \"hidden_size\": \"64\", \"num_hidden_layers\": 2, "
         "\"intermediate_size\": 96}", ATTN_E_RANGE, "\"hidden_size\" must be a whole number", 1},
        {"{\"model_type\": \"gemma2\", \"hidden_size\": 0, \"num_hidden_layers\": 2, "
         "\"intermediate_size\": 96}", ATTN_E_RANGE, "\"hidden_size\"", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"num_attention_heads\": 2.5}", ATTN_E_RANGE,
         "\"num_attention_heads\"", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"num_key_value_heads\": 3}", ATTN_E_HEADS,
         "num_attention_heads 8 is not divisible by num_key_value_heads 3", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"head_dim\": 7}", ATTN_E_SHAPE, "head_dim 7",
         1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"vocab_size\": -5}", ATTN_E_RANGE,
         "\"vocab_size\"", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"rms_norm_eps\": 2}", ATTN_E_RANGE,
         "\"rms_norm_eps\"", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"rope_theta\": \"big\"}", ATTN_E_RANGE,
         "\"rope_theta\"", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"rope_local_base_freq\": 0}",
         ATTN_E_RANGE, "\"rope_local_base_freq\"", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"rope_scaling\": {\"rope_type\": "
         "\"yarn\", \"factor\": 4.0}}", ATTN_E_UNSUPPORTED, "rope_scaling type \"yarn\"", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"rope_scaling\": {\"rope_type\": "
         "\"llama3\", \"factor\": 4.0}}", ATTN_E_UNSUPPORTED, "\"llama3\" is not computed", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"rope_scaling\": {\"rope_type\": "
         "\"linear\"}}", ATTN_E_PARSE, "no \"factor\"", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"rope_scaling\": {\"rope_type\": "
         "\"linear\", \"factor\": -8}}", ATTN_E_RANGE, "\"factor\" must be a positive number", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"rope_scaling\": {\"factor\": 8}}",
         ATTN_E_PARSE, "rope_type", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"rope_scaling\": 8}", ATTN_E_PARSE,
         "\"rope_scaling\" must be null or an object", 0},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"hidden_activation\": \"silu\"}",
         ATTN_E_UNSUPPORTED, "hidden_activation \"silu\" is not computed", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"hidden_activation\": 3}", ATTN_E_PARSE,
         "\"hidden_activation\" must be a string", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"query_pre_attn_scalar\": 0}", ATTN_E_RANGE,
         "\"query_pre_attn_scalar\"", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"attn_logit_softcapping\": -50}",
         ATTN_E_RANGE, "\"attn_logit_softcapping\" must be null (no soft cap) or a positive", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"final_logit_softcapping\": \"30\"}",
         ATTN_E_RANGE, "\"final_logit_softcapping\"", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"sliding_window\": 0}", ATTN_E_RANGE,
         "\"sliding_window\"", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"sliding_window\": null}", ATTN_E_RANGE,
         "\"sliding_window\"", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"sliding_window_pattern\": 0}",
         ATTN_E_RANGE, "\"sliding_window_pattern\"", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"layer_types\": [\"full_attention\"]}",
         ATTN_E_SHAPE, "layer_types has 1 entries for num_hidden_layers 2", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"layer_types\": [\"full_attention\", "
         "\"chunked_attention\"]}", ATTN_E_UNSUPPORTED,
         "layer_types \"chunked_attention\" is not computed", 1},
        {"{\"model_type\": \"gemma3_text\", " SIZES ", \"use_bidirectional_attention\": true}",
         ATTN_E_UNSUPPORTED, "use_bidirectional_attention true", 1},
        {"{\"model_type\": \"gemma2\", " SIZES ", \"tie_word_embeddings\": 1}", ATTN_E_PARSE,
         "\"tie_word_embeddings\" must be true or false", 0},
        {"{\"model_type\": \"gemma2\", \"hidden_size\": 64, \"num_hidden_layers\": 5000, "
         "\"intermediate_size\": 96}", ATTN_E_RANGE, "\"num_hidden_layers\"", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        AttnErr err;
        int rc = parse(bad[i].text, &err);
        if (rc != -bad[i].code || err.code != bad[i].code || !strstr(err.msg, bad[i].piece) ||
            strcmp(err.file, "cfg.json") || (bad[i].family && !names_family(err.msg)))
            fail_msg("case %zu: rc %d \"%s\" (%s); expected %d with \"%s\"%s", i, rc, err.msg,
                     err.file, bad[i].code, bad[i].piece, bad[i].family ? " naming Gemma" : "");
        for (size_t k = 0; k < desc_gemma.rt->cfg_size; k++)
            if (cfg_buf[k])
                fail_msg("case %zu: the config is not zeroed after the error", i);
    }
}

/* ---- folders --------------------------------------------------------------------- */

/* A copy of fixture's files into a new temp folder. */
static char *copy_fixture(const char *fixture)
{
    static const char *const files[] = {"config.json", "model.safetensors", "ref.json"};
    char *dir = fs_tmpdir();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, FIX "%s/%s", fixture, files[i]);
        fs_copy(a, fs_join(b, dir, files[i]));
    }
    return dir;
}

/* config.json's key (inside the object `in` when given) set to value, or
 * removed (value NULL). */
static void set_config(const char *dir, const char *in, const char *key, cJSON *value)
{
    char p[1024];
    cJSON *cfg = read_json(fs_join(p, dir, "config.json"));
    cJSON *o = in ? cJSON_GetObjectItemCaseSensitive(cfg, in) : cfg;
    assert_non_null(o);
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    if (value)
        cJSON_AddItemToObject(o, key, value);
    char *text = cJSON_Print(cfg);
    fs_write_text(p, text);
    free(text);
    cJSON_Delete(cfg);
}

/* The ids of the folder's ref.json into ids (at most 64): T. */
static int ref_ids(const char *dir, int *ids)
{
    char p[1024];
    cJSON *ref = read_json(fs_join(p, dir, "ref.json"));
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(ref, "ids");
    int T = cJSON_GetArraySize(j);
    assert_true(T > 0 && T <= 64);
    for (int i = 0; i < T; i++)
        ids[i] = cJSON_GetArrayItem(j, i)->valueint;
    cJSON_Delete(ref);
    return T;
}

/* dir opened and run on its reference ids. */
static void open_run(Lm *lm, const char *dir)
{
    AttnErr err = {0};
    int ids[64], T = ref_ids(dir, ids);
    if (lm_open(lm, dir, &err) != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
    if (lm_forward(lm, ids, T, NULL, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
}

static int open_err(const char *dir, AttnErr *err)
{
    Lm lm;
    memset(err, 0, sizeof *err);
    int rc = lm_open(&lm, dir, err);
    assert_null(lm.rt);
    return rc;
}

/* Every layer's attention: window w[l], scale mul, soft cap cap. */
static void expect_attn(const Lm *lm, const int *w, float mul, float cap)
{
    for (int l = 0; l < lm->info.n_layer; l++) {
        const RtAttn *a = &lm->rt->attn[l];
        if (a->window != w[l] || a->mul != mul || a->softcap != cap || !a->causal)
            fail_msg("layer %d: window %d, mul %g, softcap %g; expected %d, %g, %g", l,
                     a->window, a->mul, a->softcap, w[l], mul, cap);
    }
}

static void test_fixture_defaults(void **state)
{
    (void)state;
    Lm lm;
    /* gemma2: even layers slide; caps as given */
    open_run(&lm, FIX "gemma2-f32");
    assert_string_equal(lm.info.arch, "gemma2");
    assert_int_equal(lm.info.bos_id, 2);
    expect_attn(&lm, (const int[]){4, 0, 4}, (float)(1.0 / sqrt(24.0)), 8.0f);
    lm_close(&lm);
    /* a gemma3 folder: text_config's defaults (heads 8, kv 4, scalar 256,
     * θ 1e6 and 1e4, pattern 6: layer 5 full); the vision tower ignored */
    open_run(&lm, FIX "gemma3-multimodal");
    assert_string_equal(lm.info.arch, "gemma3");
    assert_true(lm.info.n_head == 8 && lm.info.n_kv_head == 4 && lm.info.d_head == 8);
    assert_int_equal(lm.info.n_vocab, 60);
    expect_attn(&lm, (const int[]){5, 5, 5, 5, 5, 0}, (float)(1.0 / 16.0), 0.0f);
    assert_true(lm.rt->sh.rope.theta == 1e6 && lm.rt->sh.rope2.theta == 1e4);
    assert_true(lm.rt->sh.rope.scaling == ROPE_SCALE_LINEAR && lm.rt->sh.rope.factor == 8.0);
    assert_true(strcmp(lm.model->prefix, "language_model.model.") == 0);
    lm_close(&lm);
    /* layer_types decides; Gemma 3's attention soft cap is not applied */
    open_run(&lm, FIX "gemma3-layer-types");
    expect_attn(&lm, (const int[]){0, 3}, (float)(1.0 / sqrt(12.0)), 0.0f);
    lm_close(&lm);
    /* gemma3_text without sliding_window_pattern: 6, so 3 layers all slide;
     * without query_pre_attn_scalar: 256 */
    char *dir = copy_fixture("gemma3-text-bf16");
    open_run(&lm, dir);
    expect_attn(&lm, (const int[]){3, 0, 3}, (float)(1.0 / sqrt(8.0)), 0.0f);
    lm_close(&lm);
    set_config(dir, NULL, "sliding_window_pattern", NULL);
    set_config(dir, NULL, "query_pre_attn_scalar", NULL);
    open_run(&lm, dir);
    expect_attn(&lm, (const int[]){3, 3, 3}, 1.0f / 16.0f, 0.0f);
    lm_close(&lm);
    fs_rm_tree(dir);
    free(dir);
}

/* Gemma 2's soft caps: absent 50 and 30, null none; the final one on the
 * logits: capped = 30 · tanh(uncapped / 30). */
static void test_gemma2_caps(void **state)
{
    (void)state;
    AttnErr err = {0};
    char *absent = copy_fixture("gemma2-f32"), *none = copy_fixture("gemma2-f32");
    set_config(absent, NULL, "attn_logit_softcapping", NULL);
    set_config(absent, NULL, "final_logit_softcapping", NULL);
    set_config(none, NULL, "attn_logit_softcapping", cJSON_CreateNull());
    set_config(none, NULL, "final_logit_softcapping", cJSON_CreateNull());
    Lm a, n;
    open_run(&a, absent);
    open_run(&n, none);
    float mul = (float)(1.0 / sqrt(24.0));
    expect_attn(&a, (const int[]){4, 0, 4}, mul, 50.0f);
    expect_attn(&n, (const int[]){4, 0, 4}, mul, 0.0f);
    /* the same last layer's input only where no cap differs: compare the
     * first position's logits of two forwards of one token */
    int id = 7, V = a.info.n_vocab;
    assert_int_equal(lm_forward(&a, &id, 1, NULL, &err), 0);
    assert_int_equal(lm_forward(&n, &id, 1, NULL, &err), 0);
    float *la = malloc(sizeof(float) * V), *ln = malloc(sizeof(float) * V);
    assert_true(la && ln);
    assert_int_equal(rt_logits(a.rt, a.model->weights, 0, la, &err), 0);
    assert_int_equal(rt_logits(n.rt, n.model->weights, 0, ln, &err), 0);
    double big = 0;
    for (int v = 0; v < V; v++) {
        double want = 30.0 * tanh(ln[v] / 30.0);
        if (fabs(la[v] - want) > 1e-5 * (1 + fabs(want)))
            fail_msg("logit %d: %g, expected 30 tanh(%g / 30) = %g", v, la[v], ln[v], want);
        big = fabs(ln[v]) > big ? fabs(ln[v]) : big;
    }
    assert_true(big > 3.0); /* large enough that the cap shows */
    free(la), free(ln);
    lm_close(&a);
    lm_close(&n);
    fs_rm_tree(absent);
    fs_rm_tree(none);
    free(absent), free(none);
}

/* The header's keys starting with from renamed to start with to. */
static void rename_prefix(cJSON *header, const char *from, const char *to)
{
    for (cJSON *e = header->child; e; e = e->next) {
        if (strncmp(e->string, from, strlen(from)))
            continue;
        char name[512];
        snprintf(name, sizeof name, "%s%s", to, e->string + strlen(from));
        char *s = strdup(name);
        assert_non_null(s);
        free(e->string);
        e->string = s;
    }
}

/* transformers ≥ 4.52's names for a gemma3 folder (model.language_model.*,
 * model.vision_tower.*) read as the released ones, the same floats. */
static void test_gemma3_new_names(void **state)
{
    (void)state;
    char p[1024];
    AttnErr err = {0};
    char *dir = copy_fixture("gemma3-multimodal");
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    rename_prefix(st.header, "language_model.model.", "model.language_model.");
    rename_prefix(st.header, "vision_tower.", "model.vision_tower.");
    rename_prefix(st.header, "multi_modal_projector.", "model.multi_modal_projector.");
    assert_non_null(cJSON_GetObjectItemCaseSensitive(st.header,
                                                     "model.language_model.norm.weight"));
    fs_st_write(p, &st);
    Lm a, b;
    open_run(&a, FIX "gemma3-multimodal");
    open_run(&b, dir);
    assert_string_equal(b.model->prefix, "model.language_model.");
    lm_close(&b);
    /* Gemma3ForConditionalGeneration caps no logits: a final cap in its
     * text_config changes nothing (Gemma3ForCausalLM's would) */
    set_config(dir, "text_config", "final_logit_softcapping", cJSON_CreateNumber(0.5));
    open_run(&b, dir);
    int T = a.rt->T, V = a.info.n_vocab;
    float *la = malloc(sizeof(float) * V), *lb = malloc(sizeof(float) * V);
    assert_true(la && lb);
    for (int i = 0; i < T; i++) {
        assert_int_equal(rt_logits(a.rt, a.model->weights, i, la, &err), 0);
        assert_int_equal(rt_logits(b.rt, b.model->weights, i, lb, &err), 0);
        assert_memory_equal(la, lb, sizeof(float) * V);
    }
    free(la), free(lb);
    lm_close(&a);
    lm_close(&b);
    fs_rm_tree(dir);
    free(dir);
}

static void test_bad_folders(void **state)
{
    (void)state;
    AttnErr err;
    char p[1024];
    /* a size the tensors do not have: the .safetensors file and the tensor */
    char *dir = copy_fixture("gemma2-f32");
    set_config(dir, NULL, "intermediate_size", cJSON_CreateNumber(40));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor model.layers.0.mlp.gate_proj.weight: [40, 32] expected, [48, 32] found",
               "model.safetensors");
    assert_true(names_family(err.msg));
    set_config(dir, NULL, "intermediate_size", cJSON_CreateNumber(48));
    set_config(dir, NULL, "head_dim", cJSON_CreateNumber(8));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor model.layers.0.self_attn.q_proj.weight: [32, 32] expected, [64, 32] found",
               "model.safetensors");
    set_config(dir, NULL, "head_dim", cJSON_CreateNumber(16));
    /* untied without lm_head.weight: named, never the embeddings instead */
    set_config(dir, NULL, "tie_word_embeddings", cJSON_CreateFalse());
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "no tensor lm_head.weight",
               "model.safetensors");
    assert_true(names_family(err.msg));
    set_config(dir, NULL, "tie_word_embeddings", cJSON_CreateTrue());
    /* attention_bias true needs the biases; config.json's refusals name it */
    set_config(dir, NULL, "num_key_value_heads", cJSON_CreateNumber(3));
    expect_err(open_err(dir, &err), err, ATTN_E_HEADS, "not divisible by num_key_value_heads 3",
               "config.json");
    set_config(dir, NULL, "num_key_value_heads", cJSON_CreateNumber(2));
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, "model.layers.2.self_attn.o_proj.bias");
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor model.layers.2.self_attn.o_proj.bias", "model.safetensors");
    /* weights under no Gemma prefix */
    fs_copy(FIX "gemma2-f32/model.safetensors", p);
    st = fs_st_read(p);
    rename_prefix(st.header, "model.", "transformer.");
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND, "not a Gemma checkpoint",
               "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
    /* a gemma3 folder: text_config's size against language_model.model.*;
     * q_norm missing; text_config missing */
    dir = copy_fixture("gemma3-multimodal");
    set_config(dir, "text_config", "hidden_size", cJSON_CreateNumber(16));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor language_model.model.embed_tokens.weight: [60, 16] expected, [60, 32] "
               "found", "model.safetensors");
    assert_true(names_family(err.msg));
    set_config(dir, "text_config", "hidden_size", cJSON_CreateNumber(32));
    st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    cJSON_DeleteItemFromObjectCaseSensitive(st.header,
                                            "language_model.model.layers.3.self_attn.k_norm.weight");
    fs_st_write(p, &st);
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor language_model.model.layers.3.self_attn.k_norm.weight",
               "model.safetensors");
    fs_copy(FIX "gemma3-multimodal/model.safetensors", p);
    set_config(dir, "text_config", "num_hidden_layers", cJSON_CreateNumber(7));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "config.json says num_hidden_layers 7 but the file has 6 layers",
               "model.safetensors");
    set_config(dir, NULL, "text_config", NULL);
    expect_err(open_err(dir, &err), err, ATTN_E_PARSE, "gemma3: no \"text_config\" object",
               "config.json");
    fs_rm_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_fixture_defaults),
        cmocka_unit_test(test_gemma2_caps),
        cmocka_unit_test(test_gemma3_new_names),
        cmocka_unit_test(test_bad_folders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
