/* The induction probe's tokens (issue 26, core/probe.c): the bos token,
 * n random ids below the vocabulary's size, the same n again; the same
 * seed the same tokens, another seed others; every id of a small
 * vocabulary about equally often (no modulo bias); arguments out of range
 * refused; and one run pinned, so a change of the generator shows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "attnviz/probe.h"

static void test_shape(void **state)
{
    (void)state;
    int t[PROBE_MAX_TOKENS];
    assert_int_equal(probe_induction_tokens(t, 25, 50256, 50257, 7), 51);
    assert_int_equal(t[0], 50256);
    for (int i = 0; i < 25; i++) {
        assert_int_equal(t[1 + i], t[26 + i]);
        assert_true(t[1 + i] >= 0 && t[1 + i] < 50257);
    }
    /* no bos: 2n tokens, the halves equal */
    assert_int_equal(probe_induction_tokens(t, 5, -1, 3, 7), 10);
    for (int i = 0; i < 5; i++)
        assert_int_equal(t[i], t[5 + i]);
    /* the largest and the refused */
    assert_int_equal(probe_induction_tokens(t, 511, 0, 10, 1), 1023);
    assert_int_equal(probe_induction_tokens(t, 512, 0, 10, 1), -1);
    assert_int_equal(probe_induction_tokens(t, 0, 0, 10, 1), -1);
    assert_int_equal(probe_induction_tokens(t, 5, 0, 0, 1), -1);
}

static void test_seeds(void **state)
{
    (void)state;
    int a[PROBE_MAX_TOKENS], b[PROBE_MAX_TOKENS];
    assert_int_equal(probe_induction_tokens(a, 25, 50256, 50257, 42), 51);
    assert_int_equal(probe_induction_tokens(b, 25, 50256, 50257, 42), 51);
    assert_memory_equal(a, b, sizeof(int) * 51);
    assert_int_equal(probe_induction_tokens(b, 25, 50256, 50257, 43), 51);
    assert_memory_not_equal(a + 1, b + 1, sizeof(int) * 25);
    /* pinned: splitmix64 from seed 0, by rejection below 50257 */
    int pin[PROBE_MAX_TOKENS];
    assert_int_equal(probe_induction_tokens(pin, 4, -1, 50257, 0), 8);
    static const int want[4] = {38793, 16794, 30050, 7480};
    assert_memory_equal(pin, want, sizeof want);
}

static void test_uniform(void **state)
{
    (void)state;
    int t[PROBE_MAX_TOKENS], count[3] = {0, 0, 0};
    for (uint64_t seed = 0; seed < 20; seed++) {
        assert_int_equal(probe_induction_tokens(t, 500, -1, 3, seed), 1000);
        for (int i = 0; i < 500; i++)
            count[t[i]]++;
    }
    /* 10000 draws: each id 3333 ± 4.5 standard deviations (47) */
    for (int k = 0; k < 3; k++)
        assert_true(count[k] > 3333 - 215 && count[k] < 3333 + 215);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_seeds),
        cmocka_unit_test(test_uniform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
