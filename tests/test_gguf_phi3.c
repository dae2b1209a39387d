/* Phi-3 GGUF files (general.architecture phi3) beyond the model fixtures'
 * check (test_gguf_models.c): tests/fixtures/gguf_checks/phi3-*.gguf, tiny
 * F32 files that make_gguf_phi3.py writes with only the keys llama.cpp's
 * converter writes:
 *   - phi3.attention.sliding_window shorter than the text and
 *     rope.dimension_count half the head: the maps are make_phi3.py's
 *     float64 ones on the same numbers (1e-5), every key the window hides
 *     exactly 0, the rotary dimensions the file's;
 *   - a longrope file with one of its two rope_factors tensors refused
 *     naming both, and rope.dimension_count beyond the head refused naming
 *     the key (longrope files themselves: test_gguf_models's
 *     phi3-longrope-* folders);
 *   - phi3-q-mix's sliding_window 0 read as none (no key masked).
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
#include "attnviz/runtime.h"
#include "test_gpt2_fs.h"
#include "test_fixtures.h"

#define CHECKS "tests/fixtures/gguf_checks/"

static void open_ok(Lm *lm, const char *path)
{
    AttnErr err = {0};
    if (lm_open_gguf(lm, path, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
}

/* lm_open_gguf on path fails with a message holding each of the words. */
static void refused(const char *path, const char *const *words)
{
    Lm lm;
    AttnErr err = {0};
    int rc = lm_open_gguf(&lm, path, &err);
    if (rc == 0) {
        lm_close(&lm);
        fail_msg("%s: opened, a refusal expected", path);
    }
    for (; *words; words++)
        if (!strstr(err.msg, *words))
            fail_msg("%s: \"%s\" does not say \"%s\"", path, err.msg, *words);
}

static void window_and_rotary(void **state)
{
    (void)state;
    cJSON *ref = read_json(CHECKS "phi3-window.json");
    const cJSON *jids = cJSON_GetObjectItemCaseSensitive(ref, "ids");
    int T = cJSON_GetArraySize(jids), ids[64];
    int window = cJSON_GetObjectItemCaseSensitive(ref, "window")->valueint;
    assert_true(T <= 64 && window > 0 && window < T);
    for (int i = 0; i < T; i++)
        ids[i] = cJSON_GetArrayItem(jids, i)->valueint;
    Lm lm;
    AttnErr err = {0};
    open_ok(&lm, CHECKS "phi3-window.gguf");
    assert_int_equal(lm.rt->sh.rope.dims,
                     cJSON_GetObjectItemCaseSensitive(ref, "rotary_dims")->valueint);
    assert_int_equal(lm_forward(&lm, ids, T, NULL, &err), 0);
    AttnFile maps;
    AttnErr ferr = {0};
    if (attn_file_open(&maps, CHECKS "phi3-window.npy", &ferr) != 0)
        fail_msg("%s", ferr.msg);
    float m[64 * 64];
    double worst = 0;
    for (int l = 0; l < lm.info.n_layer; l++)
        for (int h = 0; h < lm.info.n_head; h++) {
            rt_map(lm.rt, l, h, m, (size_t)T);
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double d = fabs(m[i * T + j] - attn_file_at(&maps, l, h, i, j));
                    worst = d > worst ? d : worst;
                    if (j <= i - window && m[i * T + j] != 0.0f)
                        fail_msg("layer %d head %d: query %d sees key %d through a window of %d",
                                 l, h, i, j, window);
                }
        }
    if (worst > 1e-5)
        fail_msg("phi3-window: maps off by %.3g (1e-5 allowed)", worst);
    attn_file_close(&maps);
    lm_close(&lm);
    cJSON_Delete(ref);
}

static void window_zero_is_none(void **state)
{
    (void)state;
    const char *dir = "tests/fixtures/gguf_models/phi3-q-mix";
    int T;
    int *ids = fixture_ref_ids(dir, &T);
    Lm lm;
    AttnErr err = {0};
    open_ok(&lm, "tests/fixtures/gguf_models/phi3-q-mix/model.gguf");
    assert_int_equal(lm_forward(&lm, ids, T, NULL, &err), 0);
    float m[64 * 64];
    assert_true(T <= 64);
    rt_map(lm.rt, 0, 0, m, (size_t)T);
    assert_true(m[(T - 1) * T] > 0.0f); /* the last query sees the first key */
    lm_close(&lm);
    free(ids);
}

static void refusals(void **state)
{
    (void)state;
    refused(CHECKS "phi3-longrope-half.gguf",
            (const char *const[]){"rope_factors_long.weight without rope_factors_short.weight",
                                  "phi3", NULL});
    refused(CHECKS "phi3-rot-too-big.gguf",
            (const char *const[]){"rope.dimension_count 32", "16", "phi3", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(window_and_rotary),
        cmocka_unit_test(window_zero_is_none),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
