/* GPT-NeoX GGUF files (general.architecture gptneox) beyond the model
 * fixtures' check (test_gguf_models.c):
 *   - the rotary dimensions are the file's rope.dimension_count (the
 *     fixtures rotate a quarter, half and all of the head), the residual
 *     use_parallel_residual's;
 *   - a yarn rope scaling refused by name, and a split attn_q (the
 *     converter writes the fused attn_qkv) refused naming the tensor
 *     (tests/fixtures/gguf_checks, make_gguf_gpt_neox.py checks).
 * Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "attnviz/runtime.h"
#include "test_gpt2_fs.h"

static void refused(const char *path, const char *const *words)
{
    Lm lm;
    AttnErr err = {0};
    if (lm_open_gguf(&lm, path, &err) == 0) {
        lm_close(&lm);
        fail_msg("%s: opened, a refusal expected", path);
    }
    for (; *words; words++)
        if (!strstr(err.msg, *words))
            fail_msg("%s: \"%s\" does not say \"%s\"", path, err.msg, *words);
}

static void rotary_dims_from_the_file(void **state)
{
    (void)state;
    static const char *const dirs[] = {"neox-f32", "neox-q-mix", "neox-kquants"};
    for (int i = 0; i < 3; i++) {
        char path[200];
        snprintf(path, sizeof path, "tests/fixtures/gguf_models/%s/ref.json", dirs[i]);
        cJSON *ref = read_json(path);
        snprintf(path, sizeof path, "tests/fixtures/gguf_models/%s/model.gguf", dirs[i]);
        Lm lm;
        AttnErr err = {0};
        if (lm_open_gguf(&lm, path, &err) != 0)
            fail_msg("%s: %s", path, err.msg);
        assert_string_equal(lm.info.arch, "gpt_neox");
        assert_int_equal(lm.rt->sh.rope.dims,
                         cJSON_GetObjectItemCaseSensitive(ref, "rotary_dims")->valueint);
        assert_int_equal(lm.model->tied, 0);
        lm_close(&lm);
        cJSON_Delete(ref);
    }
}

static void refusals(void **state)
{
    (void)state;
    refused("tests/fixtures/gguf_checks/neox-yarn.gguf",
            (const char *const[]){"rope_scaling type \"yarn\" is not computed", "gpt_neox",
                                  NULL});
    refused("tests/fixtures/gguf_checks/neox-split-q.gguf",
            (const char *const[]){"tensor blk.0.attn_q.weight", "gptneox", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rotary_dims_from_the_file),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
