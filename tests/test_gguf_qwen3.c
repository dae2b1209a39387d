/* Qwen3's GGUF files (issue 35) beyond tests/test_gguf_models.c's: the
 * keys a file may lack read as llama.cpp reads them, and what attnviz does
 * not compute refused naming it. The files are tests/fixtures/gguf_small's
 * qwen3-*.gguf (make_gguf_qwen3.py's SMALL: one layer, hidden 32, 2 heads,
 * F32, no tokenizer). Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "attnviz/arch.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "attnviz/runtime.h"
#include "test_gpt2_fs.h"

#define SMALL "tests/fixtures/gguf_small/"

/* No head_count_kv and no key_length: as many key-value heads as heads and
 * head_dim hidden / heads (32 / 2), llama.cpp's defaults, not
 * Qwen3Config's 32 and 128. */
static void test_defaults(void **state)
{
    (void)state;
    ModelFile *m = NULL;
    AttnErr err = {0};
    if (model_file_open_gguf(SMALL "qwen3-defaults.gguf", lm_arch, &m, &err) != 0)
        fail_msg("%s: %s", err.file, err.msg);
    RtShape sh;
    m->arch->rt->shape(m->cfg, &sh);
    assert_string_equal(m->model_type, "qwen3");
    assert_int_equal(sh.n_head, 2);
    assert_int_equal(sh.n_kv_head, 2);
    assert_int_equal(sh.d_head, 16);
    assert_int_equal(sh.rope.dims, 16);
    assert_int_equal(sh.hidden, 32);
    assert_int_equal(m->tied, 0);
    model_file_close(m);
}

/* Refused by name: a tensor llama.cpp's converter writes for what attnviz's
 * Qwen3 does not compute, a rope scaling it does not compute, and a bad
 * head_count_kv (named as the file names it, not head_count, the fallback
 * read first). */
static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *file, *piece;
        int code;
    } cases[] = {
        {"qwen3-bias.gguf", "tensor blk.0.attn_q.bias is not read", ATTN_E_UNSUPPORTED},
        {"qwen3-rope-freqs.gguf", "tensor rope_freqs.weight is not read", ATTN_E_UNSUPPORTED},
        {"qwen3-yarn.gguf", "rope_scaling type \"yarn\" is not computed", ATTN_E_UNSUPPORTED},
        {"qwen3-kv0.gguf", "qwen3.attention.head_count_kv must be null or a whole number",
         ATTN_E_RANGE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[200];
        snprintf(path, sizeof path, SMALL "%s", cases[i].file);
        ModelFile *m = NULL;
        AttnErr err = {0};
        int rc = model_file_open_gguf(path, lm_arch, &m, &err);
        expect_err(rc, err, cases[i].code, cases[i].piece, cases[i].file);
        assert_null(m);
        assert_non_null(strstr(err.msg, "qwen3") ? err.msg : strstr(err.msg, "Qwen3"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
