/* GPT-2 GGUF files (general.architecture gpt2) beyond the model fixtures'
 * check (test_gguf_models.c), on tests/fixtures/gguf_checks/gpt2-*.gguf
 * (make_gguf_gpt2.py checks):
 *   - an output.weight makes the head untied, its absence tied (the model
 *     fixtures), the MLP's width feed_forward_length;
 *   - a context_length shorter than position_embd's rows refused naming
 *     the tensor and both sizes, the metadata's in its own keys.
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

static void untied_and_sizes(void **state)
{
    (void)state;
    Lm lm;
    AttnErr err = {0};
    if (lm_open_gguf(&lm, "tests/fixtures/gguf_checks/gpt2-untied.gguf", &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(lm.info.arch, "gpt2");
    assert_int_equal(lm.model->tied, 0);
    assert_int_equal(lm.info.n_positions, 24);
    assert_int_equal(lm.rt->sh.row_w[0], 4 * 32);
    assert_int_equal(lm.info.scale_attn, 1);
    assert_int_equal(lm.info.scale_by_layer, 0);
    lm_close(&lm);
    if (lm_open_gguf(&lm, "tests/fixtures/gguf_models/gpt2-f32/model.gguf", &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(lm.model->tied, 1);
    lm_close(&lm);
}

static void short_context_refused(void **state)
{
    (void)state;
    Lm lm;
    AttnErr err = {0};
    const char *path = "tests/fixtures/gguf_checks/gpt2-short-context.gguf";
    if (lm_open_gguf(&lm, path, &err) == 0) {
        lm_close(&lm);
        fail_msg("%s: opened, a refusal expected", path);
    }
    static const char *const words[] = {"position_embd.weight", "[24, 32]", "gpt2.context_length 16",
                                        NULL};
    for (const char *const *w = words; *w; w++)
        if (!strstr(err.msg, *w))
            fail_msg("%s: \"%s\" does not say \"%s\"", path, err.msg, *w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(untied_and_sizes),
        cmocka_unit_test(short_context_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
