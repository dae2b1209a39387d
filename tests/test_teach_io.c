/* Teach mode's files (issue 15): what --print csv writes reads back as a
 * target to the same floats (tokens with commas and quotes included), CRLF
 * and blank lines at the end are fine, every mismatch or bad value is
 * refused with the line and column named; --train lists; the "teach" JSON
 * object read back by cJSON. */
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

#include <cjson/cJSON.h>

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

static void test_train_lists(void **state)
{
    (void)state;
    assert_int_equal(teach_train_parse("wq,wk"), TEACH_WQ | TEACH_WK);
    assert_int_equal(teach_train_parse("v,x,wq"), TEACH_V | TEACH_X | TEACH_WQ);
    assert_int_equal(teach_train_parse("wk"), TEACH_WK);
    assert_int_equal(teach_train_parse(""), -1);
    assert_int_equal(teach_train_parse("wq,"), -1);
    assert_int_equal(teach_train_parse("wq,wq"), -1);
    assert_int_equal(teach_train_parse("wo"), -1);
    assert_int_equal(teach_train_parse("WQ"), -1);
    char buf[32];
    teach_train_names(TEACH_V | TEACH_WK | TEACH_X, buf, sizeof buf);
    assert_string_equal(buf, "wk,x,v");
}

static void test_teach_json(void **state)
{
    (void)state;
    float target[6] = {0, 1, 0, 0.5f, 0.5f, 0};
    double loss[3] = {1.5, 0.75, 0.25};
    Teacher t = {0};
    t.Tq = 2, t.Tk = 3, t.target = target, t.head = -1, t.train = TEACH_WQ | TEACH_X;
    t.opt.kind = TEACH_OPT_SGD, t.opt.lr = 0.5f, t.steps = 2, t.loss = loss, t.n_loss = 3;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(teach_print_json(f, &t), 0);
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "head")->valuestring, "avg");
    assert_string_equal(cJSON_GetObjectItem(j, "optimizer")->valuestring, "sgd");
    assert_true(cJSON_GetObjectItem(j, "lr")->valuedouble == 0.5);
    assert_int_equal(cJSON_GetObjectItem(j, "steps")->valueint, 2);
    cJSON *tr = cJSON_GetObjectItem(j, "train");
    assert_int_equal(cJSON_GetArraySize(tr), 2);
    assert_string_equal(cJSON_GetArrayItem(tr, 1)->valuestring, "x");
    cJSON *l = cJSON_GetObjectItem(j, "loss");
    assert_int_equal(cJSON_GetArraySize(l), 3);
    assert_true(cJSON_GetArrayItem(l, 2)->valuedouble == 0.25);
    cJSON *tg = cJSON_GetObjectItem(j, "target");
    assert_int_equal(cJSON_GetArraySize(tg), 2);
    assert_true(cJSON_GetArrayItem(cJSON_GetArrayItem(tg, 1), 1)->valuedouble == 0.5);
    cJSON_Delete(j);
    free(buf);
    t.head = 1;
    buf = NULL;
    f = open_memstream(&buf, &len);
    teach_print_json(f, &t);
    fclose(f);
    j = cJSON_Parse(buf);
    assert_int_equal(cJSON_GetObjectItem(j, "head")->valueint, 2);
    cJSON_Delete(j);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_lists),
        cmocka_unit_test(test_teach_json),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_crlf_and_blank_end),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
