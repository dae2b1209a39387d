/* Teach targets from CSV (issue 15): what --print csv writes reads back to
 * the same floats (tokens with commas and quotes included), CRLF and blank
 * lines at the end are fine, and every mismatch or bad value is refused
 * with the line and column named. */
#define _GNU_SOURCE /* open_memstream */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/io.h"
#include "attnviz/teach_io.h"

static void test_round_trip(void **state)
{
    (void)state;
    static const char *const q[] = {"say", "\"", "a,b", "x y"};
    static const char *const k[] = {"\"hi\"", ",", "there"};
    float v[12];
    for (int e = 0; e < 12; e++)
        v[e] = (float)(e + 1) / 7.0f;
    AttnMap map = attn_map_make(v, 4, 3, q, k, ATTN_MAP_WEIGHTS);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(print_map_csv(f, &map), 0);
    fclose(f);
    float out[12] = {0};
    AttnErr err = {0};
    assert_int_equal(target_csv_parse(buf, len, "t.csv", q, 4, k, 3, out, &err), 0);
    assert_memory_equal(out, v, sizeof v);
    free(buf);
}

static void test_crlf_and_blank_end(void **state)
{
    (void)state;
    static const char *const t[] = {"a", "b"};
    const char *csv = "query,a,b\r\na,1,0\r\nb,0.25,0.75\r\n\r\n\n";
    float out[4];
    AttnErr err = {0};
    assert_int_equal(target_csv_parse(csv, strlen(csv), "t.csv", t, 2, t, 2, out, &err), 0);
    assert_true(out[0] == 1.0f && out[1] == 0.0f && out[2] == 0.25f && out[3] == 0.75f);
    const char *no_newline = "query,a,b\na,1,0\nb,0,1";
    assert_int_equal(target_csv_parse(no_newline, strlen(no_newline), "t.csv", t, 2, t, 2, out, &err), 0);
    assert_true(out[3] == 1.0f);
}

static void expect_error(const char *csv, int code, long line, const char *words)
{
    static const char *const q[] = {"the", "train"};
    static const char *const k[] = {"the", "train", "left"};
    float out[6] = {42, 42, 42, 42, 42, 42};
    AttnErr err = {0};
    int rc = target_csv_parse(csv, strlen(csv), "t.csv", q, 2, k, 3, out, &err);
    if (rc != -code || err.line != line || !strstr(err.msg, words))
        fail_msg("%s: rc %d line %ld \"%s\" (wanted %d, line %ld, \"%s\")", csv, rc, err.line,
                 err.msg, -code, line, words);
    assert_string_equal(err.file, "t.csv");
    assert_true(out[0] == 42.0f); /* untouched */
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("", ATTN_E_PARSE, 1, "query");
    expect_error("key,the,train,left\n", ATTN_E_PARSE, 1, "query");
    expect_error("query,the,train\nthe,1,0\ntrain,0,1\n", ATTN_E_SHAPE, 1, "2 key tokens");
    expect_error("query,the,train,left,x\n", ATTN_E_SHAPE, 1, "more than");
    expect_error("query,the,station,left\n", ATTN_E_SHAPE, 1, "column 3 is \"station\"");
    expect_error("query,the,train,left\nthe,1,0,0\n", ATTN_E_SHAPE, 3, "1 rows");
    expect_error("query,the,train,left\nthe,1,0,0\nleft,0,1,0\n", ATTN_E_SHAPE, 3,
                 "row 2 is for \"left\"");
    expect_error("query,the,train,left\nthe,1,0\n", ATTN_E_SHAPE, 2, "2 numbers");
    expect_error("query,the,train,left\nthe,1,0,0,0\n", ATTN_E_SHAPE, 2, "more than");
    expect_error("query,the,train,left\nthe,1,0,zero\ntrain,0,1,0\n", ATTN_E_PARSE, 2,
                 "\"zero\" is not a number");
    expect_error("query,the,train,left\nthe,1,-0.5,0\ntrain,0,1,0\n", ATTN_E_RANGE, 2, "column 3");
    expect_error("query,the,train,left\nthe,1,nan,0\ntrain,0,1,0\n", ATTN_E_RANGE, 2, "finite");
    expect_error("query,the,train,left\nthe,1,0,inf\ntrain,0,1,0\n", ATTN_E_RANGE, 2, "finite");
    expect_error("query,the,train,left\nthe,1,0,0\ntrain,0,1,0\nmore,1,1,1\n", ATTN_E_SHAPE, 4,
                 "more rows");
    expect_error("query,\"the,train,left\n", ATTN_E_PARSE, 2, "quote");
    expect_error("query,the,train,left\nthe,1,\"0\"x,0\n", ATTN_E_PARSE, 2, "quote");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_crlf_and_blank_end),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
