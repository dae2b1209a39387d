/* memcmp as the program links it: glibc's natively, tools/web/memcmp.c's
 * (16 bytes at a time with WebAssembly SIMD) in the wasm build, where make
 * test-web-core runs this suite under node. Against a byte loop written
 * here: every length from 0 to 100 at every alignment of both sides, equal
 * buffers, a difference at each position (the sign of the first one, as
 * unsigned char: 0x80 above 0x7F), and a later difference that must not
 * count. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

/* the reference: the first differing bytes, as unsigned char */
static int ref_cmp(const unsigned char *a, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* memcmp called through a pointer the compiler cannot see through, so it
 * is the linked one, not a builtin folded at compile time */
static int (*volatile cmp)(const void *, const void *, size_t) = memcmp;

static void test_equal_every_length_and_alignment(void **state)
{
    (void)state;
    static unsigned char a[160], b[160];
    for (int i = 0; i < 160; i++)
        a[i] = b[i] = (unsigned char)(i * 37 + 11);
    for (size_t oa = 0; oa < 16; oa++)
        for (size_t n = 0; n <= 100; n++) {
            memmove(b + (oa + 3) % 16, a + oa, n);
            assert_int_equal(cmp(a + oa, b + (oa + 3) % 16, n), 0);
            memmove(b, a, sizeof b);
        }
}

static void test_first_difference_decides(void **state)
{
    (void)state;
    static unsigned char a[160], b[160];
    for (size_t n = 1; n <= 100; n++)
        for (size_t at = 0; at < n; at++)
            for (int k = 0; k < 2; k++) {
                size_t oa = (n + at) % 16, ob = (at * 7) % 16;
                for (size_t i = 0; i < n; i++)
                    a[oa + i] = b[ob + i] = (unsigned char)(i * 13 + 5);
                /* 0x7F against 0x80: signed chars would order them the other way */
                a[oa + at] = k ? 0x80 : 0x7F;
                b[ob + at] = k ? 0x7F : 0x80;
                if (at + 1 < n) /* a later difference the other way */
                    a[oa + n - 1] = (unsigned char)(b[ob + n - 1] + (k ? -1 : 1));
                int want = ref_cmp(a + oa, b + ob, n);
                assert_int_equal(want, k ? 1 : -1);
                assert_int_equal(sign(cmp(a + oa, b + ob, n)), want);
                assert_int_equal(sign(cmp(b + ob, a + oa, n)), -want);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_every_length_and_alignment),
        cmocka_unit_test(test_first_difference_decides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
