/* OLMo 2's GGUF files (issue 35) beyond tests/test_gguf_models.c's: the
 * keys and tensors a file may lack read as llama.cpp's converter meant
 * them, and what attnviz does not compute refused naming it. The files are
 * tests/fixtures/gguf_small's olmo2-*.gguf (make_gguf_olmo2.py's SMALL: one
 * layer, hidden 32, 4 heads, F32, no tokenizer). Run from the repository
 * root. */
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

/* No head_count_kv, no key_length: as many key-value heads as heads, head_dim
 * hidden / heads (32 / 4); no output.weight: the output layer is the
 * embeddings (llama.cpp's olmo2 would refuse the file; the Hugging Face
 * model it came from was tied). */
static void test_defaults(void **state)
{
    (void)state;
    ModelFile *m = NULL;
    AttnErr err = {0};
    if (model_file_open_gguf(SMALL "olmo2-defaults.gguf", lm_arch, &m, &err) != 0)
        fail_msg("%s: %s", err.file, err.msg);
    RtShape sh;
    m->arch->rt->shape(m->cfg, &sh);
    assert_string_equal(m->model_type, "olmo2");
    assert_int_equal(sh.n_head, 4);
    assert_int_equal(sh.n_kv_head, 4);
    assert_int_equal(sh.d_head, 8);
    assert_int_equal(sh.hidden, 32);
    assert_int_equal(sh.n_vocab, 8);
    assert_int_equal(m->tied, 1);
    model_file_close(m);
}

/* Refused by name: OLMo 3's sliding window, biases (llama.cpp's olmo2
 * never adds them), a rope scaling attnviz does not compute. */
static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *file, *piece;
        int code;
    } cases[] = {
        {"olmo2-window.gguf", "olmo2.attention.sliding_window (OLMo 3's sliding windows) is not computed",
         ATTN_E_RANGE},
        {"olmo2-bias.gguf", "tensor blk.0.attn_k.bias is not read", ATTN_E_UNSUPPORTED},
        {"olmo2-yarn.gguf", "rope_scaling type \"yarn\" is not computed", ATTN_E_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[200];
        snprintf(path, sizeof path, SMALL "%s", cases[i].file);
        ModelFile *m = NULL;
        AttnErr err = {0};
        int rc = model_file_open_gguf(path, lm_arch, &m, &err);
        expect_err(rc, err, cases[i].code, cases[i].piece, cases[i].file);
        assert_null(m);
        assert_non_null(strstr(err.msg, "olmo2") ? err.msg : strstr(err.msg, "OLMo 2"));
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
