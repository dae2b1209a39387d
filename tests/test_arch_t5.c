/* Tests for T5 (src/core/arch_t5.c) through the loader and the adapter
 * (lm.h), on tests/fixtures/families/t5/ (make_t5.py; its maps and
 * probabilities are test_encdec.c's):
 *   - rt_rel_bucket equal to transformers' _relative_position_bucket (run
 *     in torch: buckets.json) for every distance in [-300, 300];
 *   - the window's score of a query and key (rt_attn_score_at) with the
 *     relative position bias: softmaxed, the maps' rows;
 *   - bad input: the relative bias table or an untied lm_head missing, a
 *     config that mixes families, an unknown feed_forward_proj, no source,
 *     rt_forward on an encoder-decoder. Run from the repository root. */
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
#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "attnviz/runtime.h"

#include "test_gpt2_fs.h"
#include "test_arch_util.h"
#include "test_fixtures.h"

#define FIX "tests/fixtures/families/t5/"

/* ---- the buckets ------------------------------------------------------------------ */
static void test_buckets(void **state)
{
    (void)state;
    cJSON *j = read_json(FIX "buckets.json");
    int from = cJSON_GetObjectItemCaseSensitive(j, "from")->valueint, n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j, "cases"))
    {
        int nb = cJSON_GetObjectItemCaseSensitive(c, "buckets")->valueint;
        int md = cJSON_GetObjectItemCaseSensitive(c, "max_distance")->valueint;
        int bi = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "bidirectional"));
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "bucket");
        for (int k = 0; k < cJSON_GetArraySize(b); k++, n++) {
            int want = cJSON_GetArrayItem(b, k)->valueint, got = rt_rel_bucket(from + k, bi, nb, md);
            if (got != want)
                fail_msg("bucket of %d (buckets %d, max %d, %s): %d, transformers %d", from + k,
                         nb, md, bi ? "both ways" : "past", got, want);
        }
    }
    assert_true(n > 3000);
    cJSON_Delete(j);
}

/* ---- bad input -------------------------------------------------------------------- */
static char *copy_fixture(const char *fixture)
{
    return fixture_copy(FIX, fixture);
}

static void drop_tensor(const char *dir, const char *name)
{
    char p[1024];
    StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(st.header, name));
    cJSON_DeleteItemFromObjectCaseSensitive(st.header, name);
    fs_st_write(p, &st);
}

static void test_bad_input(void **state)
{
    (void)state;
    AttnErr err;
    char *dir = copy_fixture("t5-relu-tied");
    /* config.json: a config that mixes families, an activation not computed */
    set_config(dir, "architectures", cJSON_CreateStringArray((const char *[]){"BartModel"}, 1));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "architectures names BartModel, not a T5 model: a config that mixes families",
               "config.json");
    set_config(dir, "architectures", NULL);
    set_config(dir, "encoder_layers", cJSON_CreateNumber(2));
    expect_err(open_err(dir, &err), err, ATTN_E_PARSE,
               "\"encoder_layers\" is BART's key, not T5's (num_layers)", "config.json");
    set_config(dir, "encoder_layers", NULL);
    set_config(dir, "feed_forward_proj", cJSON_CreateString("gated-swish"));
    expect_err(open_err(dir, &err), err, ATTN_E_UNSUPPORTED,
               "feed_forward_proj \"gated-swish\" is not computed", "config.json");
    set_config(dir, "feed_forward_proj", cJSON_CreateString("relu"));
    /* a size the file contradicts: the tensor and the config named */
    set_config(dir, "d_kv", cJSON_CreateNumber(6));
    expect_err(open_err(dir, &err), err, ATTN_E_SHAPE,
               "tensor encoder.block.0.layer.0.SelfAttention.q.weight: [24, 24] expected, [32, 24] "
               "found", "model.safetensors");
    assert_non_null(strstr(err.msg, "num_heads 4 × d_kv 6"));
    set_config(dir, "d_kv", cJSON_CreateNumber(8));
    /* rt_forward and no source, on a model that opens */
    Lm lm;
    memset(&lm, 0, sizeof lm);
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s", err.msg);
    int ids[4] = {0, 5, 6, 7};
    assert_int_equal(rt_forward(lm.rt, lm.model->weights, ids, 4, NULL, &err), -ATTN_E_RANGE);
    assert_non_null(strstr(err.msg, "encoder-decoder"));
    assert_int_equal(rt_forward_encdec(lm.rt, lm.model->weights, ids, 0, ids, 4, NULL, NULL, &err),
                     -ATTN_E_RANGE);
    assert_non_null(strstr(err.msg, "no source tokens"));
    lm_close(&lm);
    /* the relative bias table missing */
    drop_tensor(dir, "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight: "
               "T5's relative position bias", "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
    /* an untied config without its lm_head; an encoder layer missing */
    dir = copy_fixture("flan-t5-gated-untied");
    drop_tensor(dir, "lm_head.weight");
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor lm_head.weight: config.json's tie_word_embeddings is false",
               "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
    dir = copy_fixture("flan-t5-gated-untied");
    set_config(dir, "num_layers", cJSON_CreateNumber(3));
    expect_err(open_err(dir, &err), err, ATTN_E_NOT_FOUND,
               "no tensor encoder.block.2.layer.0.SelfAttention.q.weight", "model.safetensors");
    fs_rm_tree(dir);
    free(dir);
}

/* ---- the panel's score ----------------------------------------------------------- */

/* Row i of layer l, head h of rt, from rt_attn_score_at on each query ·
 * key in double (the window's "the score"), softmaxed over the keys the
 * query sees, against rt_map's row: the bias enters both. */
static double score_row_off(const Rt *rt, int l, int h, int i, float *map)
{
    const RtAttn *a = rt_layer_attn(rt, l);
    int T = rt->T, dh = rt->sh.d_head, n = a->causal ? i + 1 : T;
    double s[64], mx = -1e300, sum = 0, worst = 0;
    assert_true(T <= 64);
    rt_map(rt, l, h, map, (size_t)T);
    for (int j = 0; j < n; j++) {
        const float *q = rt_query(rt, l, h, i), *k = rt_key(rt, l, h, j);
        double dot = 0;
        for (int d = 0; d < dh; d++)
            dot += (double)q[d] * k[d];
        s[j] = rt_attn_score_at(a, dot, h, i, j);
        mx = s[j] > mx ? s[j] : mx;
    }
    for (int j = 0; j < n; j++)
        sum += exp(s[j] - mx);
    for (int j = 0; j < n; j++) {
        double d = fabs(exp(s[j] - mx) / sum - map[(size_t)i * T + j]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

static void test_panel_score(void **state)
{
    (void)state;
    Lm lm;
    AttnErr err = {0};
    memset(&lm, 0, sizeof lm);
    if (lm_open(&lm, FIX "t5-relu-tied", &err) != 0)
        fail_msg("%s", err.msg);
    int src[12] = {5, 9, 13, 22, 31, 7, 8, 40, 41, 42, 17, 1}, tgt[9] = {0, 5, 6, 7, 8, 9, 10, 11, 12};
    assert_int_equal(rt_forward_encdec(lm.rt, lm.model->weights, src, 12, tgt, 9, NULL, NULL, &err), 0);
    float map[64 * 64];
    double worst = 0;
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 4; h++)
            for (int i = 0; i < 12; i++) {
                double e = score_row_off(lm.rt->enc, l, h, i, map);
                double d = i < 9 ? score_row_off(lm.rt, l, h, i, map) : 0;
                worst = e > worst ? e : worst;
                worst = d > worst ? d : worst;
            }
    if (worst > 1e-5)
        fail_msg("the scores with their bias give maps off by %g", worst);
    /* without the bias they do not: the bias is what the score adds */
    RtAttn plain = *rt_layer_attn(lm.rt->enc, 0);
    const float *q = rt_query(lm.rt->enc, 0, 0, 2), *k = rt_key(lm.rt->enc, 0, 0, 9);
    double dot = 0;
    for (int d = 0; d < lm.rt->sh.d_head; d++)
        dot += (double)q[d] * k[d];
    double with = rt_attn_score_at(&plain, dot, 0, 2, 9);
    plain.rel = NULL;
    assert_true(fabs(with - rt_attn_score_at(&plain, dot, 0, 2, 9)) > 1e-3);
    char how[120];
    rt_attn_describe(rt_layer_attn(lm.rt->enc, 0), 8, how, sizeof how);
    assert_string_equal(how, "+ the relative position bias of j \xE2\x88\x92 i");
    lm_close(&lm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_panel_score),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
