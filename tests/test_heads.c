/* Changing the number of heads keeps the weights (issue 16, item 6): the
 * heads' Wq, Wk, Wv side by side are the same d×d matrices before and after,
 * so every position's Q, K and V are the same floats; Wo and v are kept; and
 * splitting back gives the first weights bit for bit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "attnviz/model.h"

/* Q (h × T × dk) as T rows of d: head k's columns at k·dk. */
static void concat_rows(const float *Q, int h, int T, int d, float *out)
{
    int dk = d / h;
    for (int k = 0; k < h; k++)
        for (int i = 0; i < T; i++)
            memcpy(out + (size_t)i * d + k * dk, Q + ((size_t)k * T + i) * dk, (size_t)dk * sizeof(float));
}

static void test_split_keeps_projections(void **state)
{
    (void)state;
    AttnErr err = {0};
    EmbedTable *table;
    assert_int_equal(embed_load(&table, "assets/embeddings.txt", &err, NULL), 0);
    AttnConfig cfg = attn_config_default();
    cfg.heads = 2;
    Model m;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    model_set_seed(&m, 21);
    m.params.Wq[5] = 3.25f; /* an edit, in head 1 */
    m.params.Wk[m.d * m.d - 1] = -2.0f; /* and one in the last head */
    m.params.v[m.d - 1] = 0.75f;
    AttnParams first;
    memset(&first, 0, sizeof first);
    assert_int_equal(attn_params_copy(&first, &m.params), 0);
    const char *s = "the train left the station on time";
    assert_int_equal(model_set_text(&m, s, strlen(s)), 0);
    assert_int_equal(model_compute(&m), 0);
    int T = m.T, d = m.d;
    float *q2 = malloc(sizeof(float) * T * d), *k2 = malloc(sizeof(float) * T * d);
    float *v2 = malloc(sizeof(float) * T * d), *q = malloc(sizeof(float) * T * d);
    concat_rows(m.res.Q, 2, T, d, q2);
    concat_rows(m.res.K, 2, T, d, k2);
    concat_rows(m.res.V, 2, T, d, v2);
    static const int hs[] = {4, 1, 8, 16, 2};
    for (size_t n = 0; n < sizeof hs / sizeof hs[0]; n++) {
        assert_int_equal(model_split_heads(&m, hs[n]), 0);
        assert_int_equal(m.cfg.heads, hs[n]);
        assert_int_equal(model_compute(&m), 0);
        assert_int_equal(m.res.h, hs[n]);
        concat_rows(m.res.Q, hs[n], T, d, q);
        assert_memory_equal(q, q2, sizeof(float) * T * d);
        concat_rows(m.res.K, hs[n], T, d, q);
        assert_memory_equal(q, k2, sizeof(float) * T * d);
        concat_rows(m.res.V, hs[n], T, d, q);
        assert_memory_equal(q, v2, sizeof(float) * T * d);
        assert_memory_equal(m.params.Wo, first.Wo, sizeof(float) * d * d);
        assert_memory_equal(m.params.v, first.v, sizeof(float) * d);
    }
    /* back at 2 heads: the very weights of the start */
    assert_true(attn_params_equal(&m.params, &first));
    assert_int_equal(model_split_heads(&m, 3), -ATTN_E_HEADS);
    assert_true(attn_params_equal(&m.params, &first));
    free(q2), free(k2), free(v2), free(q);
    attn_params_destroy(&first);
    model_destroy(&m);
    embed_destroy(table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_keeps_projections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
