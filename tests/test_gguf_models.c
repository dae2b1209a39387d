/* GGUF models (issue 35): every folder of tests/fixtures/gguf_models
 * (make_gguf_<family>.py: small Llama, Qwen2, Qwen3, Gemma 2 and 3, Phi-3,
 * OLMo 2, GPT-NeoX and GPT-2 models written as llama.cpp's converter
 * writes them, quantized by ggml's own quantizer into F32, F16, BF16, Q8_0,
 * Q4_0, Q4_1, Q5_0, Q5_1 and the k-quants) opened with lm_open_gguf and
 * computed:
 *   - every map within 1e-5 and every position's probabilities within 1e-5
 *     of the float64 reference on the numbers the file holds;
 *   - against llama.cpp itself (llamacpp.json, its own forward on the same
 *     file): a file of F32 weights within 1e-3 in every probability; a
 *     quantized one (llama.cpp rounds the activations there) the same top
 *     token wherever llama.cpp's top two differ by more than 0.05;
 *   - the model's sizes and each tensor used as stored;
 *   - each key's value norm ‖v_j W_O,h‖ (issue 37) from the matrices as
 *     stored, after the whole text and after a keystroke.
 * Run from the repository root. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "attnviz/quant.h"
#include "attnviz/runtime.h"
#include "test_gpt2_fs.h"
#include "test_fixtures.h"

#define DIR_GLOB "tests/fixtures/gguf_models/*/model.gguf"

static int json_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("ref.json: no number \"%s\"", key);
    return v->valueint;
}

/* The softmax of position i's logits, in double. */
static void probs_of(Lm *lm, int i, double *p, float *lg)
{
    AttnErr err = {0};
    int V = lm->info.n_vocab;
    assert_int_equal(lm_logits(lm, i, lg, &err), 0);
    double mx = -INFINITY, sum = 0.0;
    for (int v = 0; v < V; v++)
        mx = lg[v] > mx ? lg[v] : mx;
    for (int v = 0; v < V; v++)
        sum += exp((double)lg[v] - mx);
    for (int v = 0; v < V; v++)
        p[v] = exp((double)lg[v] - mx) / sum;
}

/* 1 when every tensor of ref.json's "types" is F32. */
static int all_f32(const cJSON *ref)
{
    const cJSON *t, *types = cJSON_GetObjectItemCaseSensitive(ref, "types");
    cJSON_ArrayForEach(t, types)
        if (strcmp(t->valuestring, "F32") != 0)
            return 0;
    return 1;
}

/* Each key's ‖v_j W_O,h‖ against a double product with W_O's rows as
 * ggml dequantizes them. */
static void check_norms(Lm *lm, int T, const char *dir)
{
    AttnErr err = {0};
    int L = lm->info.n_layer, H = lm->info.n_head;
    assert_int_equal(lm_value_norms(lm, &err), 0);
    int C = lm->rt->sh.hidden, qd = lm->rt->qdim, dh = lm->info.d_head;
    float *row = malloc(sizeof(float) * (size_t)qd);
    double *f = malloc(sizeof(double) * (size_t)H * T * C), worst_n = 0, top_n = 0;
    assert_true(row && f);
    for (int l = 0; l < L; l++) {
        const RtMat *wo = lm->rt->wom[l];
        const float *wf = lm->rt->wo[l]; /* converted at load (GPT-2's): [qdim, C] */
        assert_true(wo || wf);
        memset(f, 0, sizeof(double) * (size_t)H * T * C);
        for (int c = 0; c < C; c++) {
            if (wo)
                qtype_to_f32(wo->type, (const unsigned char *)wo->data + (size_t)c * wo->row_bytes,
                             row, qd);
            else
                for (int k = 0; k < qd; k++)
                    row[k] = wf[(size_t)k * C + c];
            for (int h = 0; h < H; h++)
                for (int j = 0; j < T; j++) {
                    const float *v = rt_qkv(lm->rt, l, j) + lm->rt->qdim + lm->rt->kvdim +
                                     rt_kv_head(lm->rt, h) * dh;
                    for (int d = 0; d < dh; d++)
                        f[((size_t)h * T + j) * C + c] += (double)v[d] * row[h * dh + d];
                }
        }
        for (int h = 0; h < H; h++) {
            const float *got = rt_norms_of(lm->rt, l, h);
            assert_non_null(got);
            for (int j = 0; j < T; j++) {
                double sq = 0;
                for (int c = 0; c < C; c++)
                    sq += f[((size_t)h * T + j) * C + c] * f[((size_t)h * T + j) * C + c];
                worst_n = fabs(sqrt(sq) - got[j]) > worst_n ? fabs(sqrt(sq) - got[j]) : worst_n;
                top_n = sqrt(sq) > top_n ? sqrt(sq) : top_n;
            }
        }
    }
    if (worst_n > 1e-5 * top_n)
        fail_msg("%s: value norms off by %.3g (largest %.3g)", dir, worst_n, top_n);
    free(row);
    free(f);

}

static void check_folder(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/ref.json", dir);
    cJSON *ref = read_json(path);
    int T;
    int *ids = fixture_ref_ids(dir, &T);
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    Lm lm;
    AttnErr err = {0};
    if (lm_open_gguf(&lm, path, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
    int L = lm.info.n_layer, H = lm.info.n_head, V = lm.info.n_vocab;
    assert_string_equal(lm.info.arch, cJSON_GetObjectItemCaseSensitive(ref, "arch")->valuestring);
    assert_int_equal(L, json_int(ref, "n_layer"));
    assert_int_equal(H, json_int(ref, "n_head"));
    assert_int_equal(lm.info.n_kv_head, json_int(ref, "n_kv_head"));
    assert_int_equal(lm.info.d_head, json_int(ref, "head_dim"));
    assert_int_equal(V, json_int(ref, "vocab_size"));
    assert_int_equal(lm.info.n_positions, json_int(ref, "n_positions"));
    /* every matrix used as stored (mats_per_layer a layer), and the
     * embedding table and output layer unless float32 (then in place as
     * floats) */
    int tied = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "tied"));
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(ref, "types");
    int tables = 0;
    for (const char *const *n = (const char *const[]){"token_embd.weight", "output.weight", NULL};
         *n; n++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(types, *n);
        tables += t && strcmp(t->valuestring, "F32") != 0;
    }
    /* ref.json's n_quant when the family converts some (GPT-2's [in, out]
     * matrices and tables are dequantized once) */
    const cJSON *nq = cJSON_GetObjectItemCaseSensitive(ref, "n_quant");
    assert_int_equal(lm.model->n_quant, nq ? json_int(ref, "n_quant")
                                           : json_int(ref, "mats_per_layer") * L + tables);
    assert_int_equal(lm.model->tied, tied);

    if (lm_forward(&lm, ids, T, NULL, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    AttnFile maps, probs;
    fixture_open_npy(&maps, dir, "maps.npy");
    fixture_open_npy(&probs, dir, "probs.npy");
    assert_int_equal(maps.L, L);
    assert_int_equal(probs.Tk, V);
    float *m = malloc(sizeof(float) * T * T), *lg = malloc(sizeof(float) * V);
    double *p = malloc(sizeof(double) * V);
    assert_true(m && lg && p);
    double worst = 0, worst_p = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            rt_map(lm.rt, l, h, m, (size_t)T);
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double d = fabs(m[i * T + j] - attn_file_at(&maps, l, h, i, j));
                    worst = d > worst ? d : worst;
                }
        }
    for (int i = 0; i < T; i++) {
        probs_of(&lm, i, p, lg);
        for (int v = 0; v < V; v++) {
            double d = fabs(p[v] - attn_file_at(&probs, 0, 0, i, v));
            worst_p = d > worst_p ? d : worst_p;
        }
    }
    if (worst > 1e-5 || worst_p > 1e-5)
        fail_msg("%s: maps off by %.3g (1e-5 allowed), probabilities by %.3g (1e-5 allowed)",
                 dir, worst, worst_p);

    /* value-weighted attention (issue 37) on the matrices as stored: after
     * the whole text (the many keys' path), then after a keystroke (the
     * last token changed: the few keys' path) */
    check_norms(&lm, T, dir);
    ids[T - 1] = (ids[T - 1] + 1) % V;
    if (lm_forward(&lm, ids, T, NULL, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    check_norms(&lm, T, dir);
    ids[T - 1] = (ids[T - 1] + V - 1) % V;
    if (lm_forward(&lm, ids, T, NULL, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);

    /* llama.cpp's own forward on the same file, after the last position */
    snprintf(path, sizeof path, "%s/llamacpp.json", dir);
    cJSON *lc = read_json(path);
    const cJSON *lp = cJSON_GetObjectItemCaseSensitive(lc, "probs");
    assert_int_equal(cJSON_GetArraySize(lp), V);
    probs_of(&lm, T - 1, p, lg);
    int f32 = all_f32(ref), top = 0, lc1 = 0, lc2 = -1;
    double worst_lc = 0;
    for (int v = 0; v < V; v++) {
        double q = cJSON_GetArrayItem(lp, v)->valuedouble;
        worst_lc = fabs(q - p[v]) > worst_lc ? fabs(q - p[v]) : worst_lc;
        top = p[v] > p[top] ? v : top;
        if (q > cJSON_GetArrayItem(lp, lc1)->valuedouble) {
            lc2 = lc1;
            lc1 = v;
        } else if (v != lc1 && (lc2 < 0 || q > cJSON_GetArrayItem(lp, lc2)->valuedouble)) {
            lc2 = v;
        }
    }
    double gap = cJSON_GetArrayItem(lp, lc1)->valuedouble - cJSON_GetArrayItem(lp, lc2)->valuedouble;
    if (f32 && worst_lc > 1e-3)
        fail_msg("%s: an F32 file's probabilities are off llama.cpp's by %.3g (1e-3 allowed)",
                 dir, worst_lc);
    if (!f32 && gap > 0.05 && top != lc1)
        fail_msg("%s: the most likely next token is %d, llama.cpp's %d (ahead by %.3f)", dir, top,
                 lc1, gap);
    print_message("%s: maps %.2g, probabilities %.2g off the reference; %.2g off llama.cpp%s\n",
                  dir, worst, worst_p, worst_lc, f32 ? "" : " (quantized: top token checked)");
    cJSON_Delete(lc);
    attn_file_close(&maps);
    attn_file_close(&probs);
    free(m);
    free(lg);
    free(p);
    free(ids);
    lm_close(&lm);
    cJSON_Delete(ref);
}

static void test_every_fixture(void **state)
{
    (void)state;
    glob_t gl;
    assert_int_equal(glob(DIR_GLOB, 0, NULL, &gl), 0);
    assert_true(gl.gl_pathc >= 3);
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        char dir[600];
        snprintf(dir, sizeof dir, "%s", gl.gl_pathv[i]);
        *strrchr(dir, '/') = '\0';
        check_folder(dir);
    }
    globfree(&gl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
