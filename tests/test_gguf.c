/* Tests for the GGUF reader (src/io/gguf.c) on the files that
 * tests/fixtures/gguf/make_gguf.py writes, against what that script says
 * each holds (expected.json: its own offsets, block table and values):
 * every metadata value type, arrays of arrays, versions 2 and 3, alignment
 * 32, 64 and 16, tensors of every listed ggml type and two unknown ones;
 * a file written by llama.cpp's own writer against llama.cpp's own reader
 * and the block table against ggml's (ggml_oracle.py, expected_ggml.json,
 * ggml_types.tsv);
 * the typed getters and array conversions; every broken file refused with
 * its code, the file's name and the field in the message; every prefix of
 * every good file refused (never a crash; under SAN=1 each prefix sits in a
 * buffer of exactly its size). Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gguf.h"

#include "test_gpt2_fs.h"

#define FIX "tests/fixtures/gguf/"

static cJSON *expected;

static int setup(void **state)
{
    (void)state;
    expected = read_json(FIX "expected.json");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cJSON_Delete(expected);
    return 0;
}

/* The fixture's bytes (malloc'd, exactly its size). */
static unsigned char *fixture(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, FIX "%s", name);
    unsigned char *b = (unsigned char *)test_slurp(path, len);
    if (!b)
        fail_msg("%s: cannot read (run from the repository root)", path);
    return b;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v))
        fail_msg("expected.json: no string \"%s\"", key);
    return v->valuestring;
}

static long long jint(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("expected.json: no number \"%s\"", key);
    return (long long)v->valuedouble;
}

static int is_zero(const Gguf *g)
{
    static const Gguf zero;
    return memcmp(g, &zero, sizeof zero) == 0;
}

/* hex (of expected.json) equals the len bytes at s. */
static void assert_hex(const char *hex, const char *s, size_t len, const char *what)
{
    size_t n = strlen(hex) / 2;
    if (n != len)
        fail_msg("%s: %zu bytes, expected %zu", what, len, n);
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        sscanf(hex + 2 * i, "%2x", &b);
        if ((unsigned char)s[i] != b)
            fail_msg("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, (unsigned char)s[i], b);
    }
}

static int is_signed_type(int t)
{
    return t == GGUF_I8 || t == GGUF_I16 || t == GGUF_I32 || t == GGUF_I64;
}

/* A scalar's expected value (v) against kv's. */
static void check_scalar(const GgufKV *kv, const cJSON *e, const char *what)
{
    const char *v = jstr(e, "v");
    if (kv->type == GGUF_F32 || kv->type == GGUF_F64) {
        double want = strtod(v, NULL);
        if (kv->v.f != want)
            fail_msg("%s: %.17g, expected %.17g", what, kv->v.f, want);
    } else if (is_signed_type(kv->type)) {
        long long want = strtoll(v, NULL, 10);
        if (kv->v.i != want)
            fail_msg("%s: %lld, expected %lld", what, (long long)kv->v.i, want);
    } else {
        unsigned long long want = strtoull(v, NULL, 10);
        if (kv->v.u != want)
            fail_msg("%s: %llu, expected %llu", what, (unsigned long long)kv->v.u, want);
    }
}

/* An array kv (or a nested one) against e: its type, count, elements through
 * the conversions that apply. */
static void check_array(const GgufKV *kv, const cJSON *e, const char *what)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(e, "items");
    int n = cJSON_GetArraySize(items);
    if ((long long)kv->arr_type != jint(e, "elem") || kv->arr_n != (uint64_t)n)
        fail_msg("%s: array of %d × %llu, expected %lld × %d", what, kv->arr_type,
                 (unsigned long long)kv->arr_n, jint(e, "elem"), n);
    size_t cap = n ? (size_t)n : 1;
    if (kv->arr_type == GGUF_STRING) {
        GgufStr *s = calloc(cap, sizeof *s);
        assert_int_equal(gguf_array_strings(kv, s), 0);
        for (int i = 0; i < n; i++)
            assert_hex(jstr(cJSON_GetArrayItem(items, i), "hex"), s[i].s, s[i].len, what);
        assert_int_equal(gguf_array_f32(kv, (float *)s), -ATTN_E_PARSE);
        free(s);
        return;
    }
    if (kv->arr_type == GGUF_ARRAY) {
        GgufKV *sub = calloc(cap, sizeof *sub);
        assert_int_equal(gguf_array_arrays(kv, sub), 0);
        for (int i = 0; i < n; i++) {
            char inner[300];
            snprintf(inner, sizeof inner, "%s[%d]", what, i);
            assert_int_equal(sub[i].type, GGUF_ARRAY);
            check_array(&sub[i], cJSON_GetArrayItem(items, i), inner);
        }
        /* the nested arrays' bytes tile the outer array's */
        if (n > 0)
            assert_true(sub[n - 1].arr_data + sub[n - 1].arr_bytes == kv->arr_data + kv->arr_bytes);
        free(sub);
        return;
    }
    float *f = calloc(cap, sizeof *f);
    int32_t *i32 = calloc(cap, sizeof *i32);
    assert_int_equal(gguf_array_f32(kv, f), 0);
    int rc = gguf_array_i32(kv, i32);
    int any_big = 0;
    for (int i = 0; i < n; i++) {
        const char *v = jstr(cJSON_GetArrayItem(items, i), "v");
        int is_float = kv->arr_type == GGUF_F32 || kv->arr_type == GGUF_F64;
        double want = is_float ? strtod(v, NULL) : 0;
        if (is_float) {
            if (f[i] != (float)want)
                fail_msg("%s[%d]: %.9g, expected %.9g", what, i, f[i], (float)want);
            continue;
        }
        long double w = strtold(v, NULL); /* integers up to 2^64 */
        if (f[i] != (float)w)
            fail_msg("%s[%d]: as f32 %.9g, expected %.9g", what, i, f[i], (float)w);
        if (w < INT32_MIN || w > INT32_MAX)
            any_big = 1;
        else if (rc == 0 && i32[i] != (int32_t)w)
            fail_msg("%s[%d]: as i32 %d, expected %s", what, i, i32[i], v);
    }
    int is_float = kv->arr_type == GGUF_F32 || kv->arr_type == GGUF_F64;
    assert_int_equal(rc, is_float ? -ATTN_E_PARSE : any_big ? -ATTN_E_RANGE : 0);
    free(f);
    free(i32);
}

static void check_kv(const Gguf *g, int i, const cJSON *e, const char *file)
{
    const char *key = jstr(e, "key");
    char what[300];
    snprintf(what, sizeof what, "%s: %s", file, key);
    const GgufKV *kv = gguf_find(g, key);
    if (kv != &g->kv[i])
        fail_msg("%s: gguf_find gives %p, key %d is at %p", what, (void *)kv, i, (void *)&g->kv[i]);
    assert_string_equal(kv->key, key);
    assert_int_equal(kv->type, jint(e, "type"));
    if (kv->type == GGUF_STRING)
        assert_hex(jstr(e, "hex"), kv->v.str.s, kv->v.str.len, what);
    else if (kv->type == GGUF_ARRAY)
        check_array(kv, e, what);
    else
        check_scalar(kv, e, what);
}

static void check_tensor(const Gguf *g, int i, const cJSON *e, const unsigned char *bytes,
                         const char *file)
{
    const char *name = jstr(e, "name");
    const GgufTensor *t = gguf_tensor(g, name);
    if (t != &g->t[i])
        fail_msg("%s: tensor %s not found as tensor %d", file, name, i);
    assert_string_equal(t->name, name);
    assert_int_equal(t->type, jint(e, "type"));
    const cJSON *ne = cJSON_GetObjectItemCaseSensitive(e, "ne");
    assert_int_equal(t->ndim, cJSON_GetArraySize(ne));
    for (int k = 0; k < 4; k++)
        assert_int_equal(t->ne[k], k < t->ndim ? (int64_t)cJSON_GetArrayItem(ne, k)->valuedouble : 1);
    if ((long long)t->nbytes != jint(e, "nbytes"))
        fail_msg("%s: tensor %s: %zu bytes, expected %lld", file, name, t->nbytes, jint(e, "nbytes"));
    assert_int_equal(t->data - bytes, jint(e, "offset"));
    assert_int_equal(t->data[0], jint(e, "first"));
    if (t->nbytes)
        assert_int_equal(t->data[t->nbytes - 1], jint(e, "last"));
    assert_int_equal(gguf_type_name(t->type) != NULL, t->nbytes != 0);
}

/* Every file of good (expected.json's form) holds what it says; the count. */
static int check_good(const cJSON *good)
{
    const cJSON *f;
    int files = 0;
    cJSON_ArrayForEach(f, good) {
        size_t len;
        unsigned char *b = fixture(f->string, &len);
        assert_int_equal(len, jint(f, "size"));
        Gguf g;
        AttnErr err = {0};
        int rc = gguf_parse(&g, b, len, f->string, &err);
        if (rc != 0)
            fail_msg("%s: %s", f->string, err.msg);
        assert_int_equal(g.version, jint(f, "version"));
        assert_int_equal(g.alignment, jint(f, "alignment"));
        assert_int_equal(g.data_offset, jint(f, "data_offset"));
        const cJSON *kvs = cJSON_GetObjectItemCaseSensitive(f, "kv");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(f, "tensors");
        assert_int_equal(g.n_kv, cJSON_GetArraySize(kvs));
        assert_int_equal(g.n_tensors, cJSON_GetArraySize(ts));
        for (int i = 0; i < g.n_kv; i++)
            check_kv(&g, i, cJSON_GetArrayItem(kvs, i), f->string);
        for (int i = 0; i < g.n_tensors; i++)
            check_tensor(&g, i, cJSON_GetArrayItem(ts, i), b, f->string);
        assert_null(gguf_find(&g, "no.such.key"));
        assert_null(gguf_find(&g, ""));
        assert_null(gguf_tensor(&g, "no_such.weight"));
        gguf_free(&g);
        assert_true(is_zero(&g));
        free(b);
        files++;
    }
    return files;
}

/* Every good file holds what the generator wrote. */
static void good_files(void **state)
{
    (void)state;
    assert_int_equal(check_good(cJSON_GetObjectItemCaseSensitive(expected, "good")), 4);
}

/* A file written by llama.cpp's own writer holds what llama.cpp's own
 * reader says (ggml_oracle.py wrote both through libggml-base.so). */
static void ggml_written(void **state)
{
    (void)state;
    cJSON *e = read_json(FIX "expected_ggml.json");
    assert_int_equal(check_good(cJSON_GetObjectItemCaseSensitive(e, "good")), 1);
    cJSON_Delete(e);
}

/* The block table is ggml's own (ggml_types.tsv: ggml_type_name,
 * ggml_blck_size, ggml_type_size of every type it knows), and the numbers
 * it does not know are unknown here too. */
static void type_table_ggml(void **state)
{
    (void)state;
    FILE *f = fopen(FIX "ggml_types.tsv", "r");
    if (!f)
        fail_msg(FIX "ggml_types.tsv: cannot read (run from the repository root)");
    char line[256];
    int known[64] = {0}, rows = 0;
    while (fgets(line, sizeof line, f)) {
        int t, block;
        size_t bytes;
        char name[64];
        if (line[0] == '#')
            continue;
        assert_int_equal(sscanf(line, "%d\t%63s\t%d\t%zu", &t, name, &block, &bytes), 4);
        assert_true(t >= 0 && t < 64);
        known[t] = 1;
        rows++;
        if (!gguf_type_name(t))
            fail_msg("ggml type %d (%s) unknown here", t, name);
        assert_string_equal(gguf_type_name(t), name);
        assert_int_equal(gguf_type_block(t), block);
        assert_int_equal(gguf_type_bytes(t), bytes);
    }
    fclose(f);
    assert_true(rows >= 33);
    for (int t = 0; t < 64; t++)
        if (!known[t] && gguf_type_name(t))
            fail_msg("type %d (%s) is known here, not to ggml", t, gguf_type_name(t));
}

/* The typed getters: conversions, absent keys, wrong types and ranges named. */
static void getters(void **state)
{
    (void)state;
    size_t len;
    unsigned char *b = fixture("every_type_v3.gguf", &len);
    Gguf g;
    AttnErr err = {0};
    assert_int_equal(gguf_parse(&g, b, len, "m.gguf", &err), 0);
    int64_t i;
    double d;
    GgufStr s;
    const GgufKV *kv;
    assert_int_equal(gguf_get_int(&g, "t.u8", &i, "m.gguf", &err), 0);
    assert_int_equal(i, 250);
    assert_int_equal(gguf_get_int(&g, "t.i8", &i, "m.gguf", &err), 0);
    assert_int_equal(i, -120);
    assert_int_equal(gguf_get_int(&g, "t.u32", &i, "m.gguf", &err), 0);
    assert_int_equal(i, 4000000000LL);
    assert_int_equal(gguf_get_int(&g, "t.i64", &i, "m.gguf", &err), 0);
    assert_true(i == INT64_MIN);
    assert_int_equal(gguf_get_int(&g, "t.bool", &i, "m.gguf", &err), 0);
    assert_int_equal(i, 1);
    assert_int_equal(gguf_get_int(&g, "t.u64small", &i, "m.gguf", &err), 0);
    assert_int_equal(i, 123456789012LL);
    assert_int_equal(gguf_get_int(&g, "absent", &i, "m.gguf", &err), 1);
    int rc = gguf_get_int(&g, "t.u64", &i, "m.gguf", &err);
    expect_err(rc, err, ATTN_E_RANGE, "\"t.u64\": 18446744073709551615 is out of range", "m.gguf");
    rc = gguf_get_int(&g, "general.name", &i, "m.gguf", &err);
    expect_err(rc, err, ATTN_E_PARSE, "\"general.name\" is a string, not an integer", "m.gguf");
    rc = gguf_get_int(&g, "t.f32", &i, "m.gguf", &err);
    expect_err(rc, err, ATTN_E_PARSE, "\"t.f32\" is a f32, not an integer", "m.gguf");

    assert_int_equal(gguf_get_float(&g, "t.f32", &d, "m.gguf", &err), 0);
    assert_true(d == (double)0.1f);
    assert_int_equal(gguf_get_float(&g, "t.f64", &d, "m.gguf", &err), 0);
    assert_true(d == -1.0 / 3.0);
    assert_int_equal(gguf_get_float(&g, "t.i16", &d, "m.gguf", &err), 0);
    assert_true(d == -32000.0);
    assert_int_equal(gguf_get_float(&g, "t.u32", &d, "m.gguf", &err), 0);
    assert_true(d == 4000000000.0);
    assert_int_equal(gguf_get_float(&g, "absent", &d, "m.gguf", &err), 1);
    rc = gguf_get_float(&g, "a.f32", &d, "m.gguf", &err);
    expect_err(rc, err, ATTN_E_PARSE, "\"a.f32\" is an array of f32, not a number", "m.gguf");

    assert_int_equal(gguf_get_str(&g, "general.architecture", &s, "m.gguf", &err), 0);
    assert_int_equal(s.len, 5);
    assert_memory_equal(s.s, "llama", 5);
    assert_int_equal(gguf_get_str(&g, "t.empty", &s, "m.gguf", &err), 0);
    assert_int_equal(s.len, 0);
    rc = gguf_get_str(&g, "t.i32", &s, "m.gguf", &err);
    expect_err(rc, err, ATTN_E_PARSE, "\"t.i32\" is an i32, not a string", "m.gguf");

    assert_int_equal(gguf_get_array(&g, "a.str", GGUF_STRING, &kv, "m.gguf", &err), 0);
    assert_int_equal(kv->arr_n, 4);
    assert_int_equal(gguf_get_array(&g, "a.nested", GGUF_ARRAY, &kv, "m.gguf", &err), 0);
    assert_int_equal(gguf_get_array(&g, "a.i32", GGUF_ARRAY, &kv, "m.gguf", &err), 0);
    assert_int_equal(gguf_get_array(&g, "absent", GGUF_I32, &kv, "m.gguf", &err), 1);
    rc = gguf_get_array(&g, "a.i32", GGUF_STRING, &kv, "m.gguf", &err);
    expect_err(rc, err, ATTN_E_PARSE, "\"a.i32\" is an array of i32, not an array of string",
               "m.gguf");
    rc = gguf_get_array(&g, "t.u8", GGUF_U8, &kv, "m.gguf", &err);
    expect_err(rc, err, ATTN_E_PARSE, "\"t.u8\" is a u8, not an array of u8", "m.gguf");
    assert_int_equal(gguf_array_strings(gguf_find(&g, "t.u8"), &s), -ATTN_E_PARSE);
    gguf_free(&g);
    free(b);
}

/* ggml's type table: names of what the issue lists, the unknown ones NULL. */
static void type_table(void **state)
{
    (void)state;
    static const struct {
        int t;
        const char *name;
        int block;
        size_t bytes;
    } want[] = {
        {0, "F32", 1, 4},        {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},  {3, "Q4_1", 32, 20},
        {6, "Q5_0", 32, 22},     {7, "Q5_1", 32, 24},    {8, "Q8_0", 32, 34},  {10, "Q2_K", 256, 84},
        {11, "Q3_K", 256, 110},  {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
        {14, "Q6_K", 256, 210},  {16, "IQ2_XXS", 256, 66}, {30, "BF16", 1, 2},
        {4, NULL, 0, 0},         {5, NULL, 0, 0},        {31, NULL, 0, 0},     {-1, NULL, 0, 0},
        {1000, NULL, 0, 0},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const char *n = gguf_type_name(want[k].t);
        if (want[k].name)
            assert_string_equal(n, want[k].name);
        else
            assert_null(n);
        assert_int_equal(gguf_type_block(want[k].t), want[k].block);
        assert_int_equal(gguf_type_bytes(want[k].t), want[k].bytes);
    }
    assert_string_equal(gguf_value_type_name(GGUF_STRING), "string");
    assert_null(gguf_value_type_name(GGUF_TYPE_COUNT));
}

/* Every broken file: its code, the file's name, the field in the message,
 * nothing left in g. */
static void bad_files(void **state)
{
    (void)state;
    const cJSON *bad = cJSON_GetObjectItemCaseSensitive(expected, "bad"), *e;
    static const struct {
        const char *name;
        int code;
    } codes[] = {{"PARSE", ATTN_E_PARSE},       {"RANGE", ATTN_E_RANGE},
                 {"SHAPE", ATTN_E_SHAPE},       {"DUPLICATE", ATTN_E_DUPLICATE},
                 {"UNSUPPORTED", ATTN_E_UNSUPPORTED}, {"TOO_LARGE", ATTN_E_TOO_LARGE}};
    int n = 0;
    cJSON_ArrayForEach(e, bad) {
        const char *file = jstr(e, "file"), *code = jstr(e, "code");
        int want = 0;
        for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++)
            if (!strcmp(codes[k].name, code))
                want = codes[k].code;
        assert_true(want > 0);
        size_t len;
        unsigned char *b = fixture(file, &len);
        Gguf g;
        AttnErr err = {0};
        int rc = gguf_parse(&g, b, len, file, &err);
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(e, "pieces"))
            expect_err(rc, err, want, p->valuestring, file);
        assert_string_equal(err.file, file);
        assert_true(is_zero(&g));
        char line[1200];
        attn_err_format(&err, line, sizeof line);
        print_message("%s\n", line);
        free(b);
        n++;
    }
    assert_true(n >= 30);
}

/* Every prefix of every good file that ends before its last tensor's last
 * byte is refused as past the end (or too short for a header), from a
 * buffer of exactly the prefix's size; the longer ones (cutting only the
 * padding after it) are read. */
static void prefixes(const cJSON *good)
{
    const cJSON *f, *t;
    cJSON_ArrayForEach(f, good) {
        size_t len, end = 0;
        unsigned char *b = fixture(f->string, &len);
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(f, "tensors"))
            if ((size_t)(jint(t, "offset") + jint(t, "nbytes")) > end)
                end = (size_t)(jint(t, "offset") + jint(t, "nbytes"));
        assert_true(end > 0 && end <= len);
        for (size_t n = end; n < len; n++) {
            Gguf g;
            AttnErr err = {0};
            if (gguf_parse(&g, b, n, "cut.gguf", &err) != 0)
                fail_msg("%s cut to %zu bytes (its tensors end at %zu): %s", f->string, n, end,
                         err.msg);
            gguf_free(&g);
        }
        for (size_t n = 0; n < end; n++) {
            unsigned char *cut = malloc(n ? n : 1);
            memcpy(cut, b, n);
            Gguf g;
            AttnErr err = {0};
            int rc = gguf_parse(&g, cut, n, "cut.gguf", &err);
            if (rc >= 0 || err.code != -rc || strcmp(err.file, "cut.gguf") != 0 ||
                !(strstr(err.msg, "past the end of the file") || strstr(err.msg, "too short")) ||
                !is_zero(&g))
                fail_msg("%s cut to %zu bytes: rc %d, \"%s\"", f->string, n, rc, err.msg);
            free(cut);
        }
        free(b);
    }
}

static void every_prefix(void **state)
{
    (void)state;
    prefixes(cJSON_GetObjectItemCaseSensitive(expected, "good"));
    cJSON *e = read_json(FIX "expected_ggml.json");
    prefixes(cJSON_GetObjectItemCaseSensitive(e, "good"));
    cJSON_Delete(e);
}

/* A big-endian v2 file, the other byte order of v3's, and v1's message in
 * full as the issue writes it. */
static void versions_named(void **state)
{
    (void)state;
    unsigned char b[24] = {'G', 'G', 'U', 'F', 0, 0, 0, 2};
    Gguf g;
    AttnErr err = {0};
    int rc = gguf_parse(&g, b, sizeof b, "model.gguf", &err);
    expect_err(rc, err, ATTN_E_UNSUPPORTED, "a big-endian GGUF file is not read", "model.gguf");
    b[7] = 0;
    b[4] = 1;
    rc = gguf_parse(&g, b, sizeof b, "model.gguf", &err);
    char line[1200];
    attn_err_format(&err, line, sizeof line);
    assert_string_equal(line, "model.gguf: GGUF version 1 is not read (versions 2 and 3)");
    b[4] = 0;
    rc = gguf_parse(&g, b, sizeof b, "model.gguf", &err);
    expect_err(rc, err, ATTN_E_UNSUPPORTED, "GGUF version 0 is not read", "model.gguf");
    /* an empty v3 file: no keys, no tensors */
    b[4] = 3;
    assert_int_equal(gguf_parse(&g, b, sizeof b, "model.gguf", &err), 0);
    assert_int_equal(g.n_kv, 0);
    assert_int_equal(g.n_tensors, 0);
    assert_int_equal(g.alignment, 32);
    assert_null(gguf_find(&g, "general.architecture"));
    gguf_free(&g);
    gguf_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_files),   cmocka_unit_test(ggml_written),
        cmocka_unit_test(type_table_ggml), cmocka_unit_test(getters),
        cmocka_unit_test(type_table),   cmocka_unit_test(bad_files),
        cmocka_unit_test(every_prefix), cmocka_unit_test(versions_named),
    };
    return cmocka_run_group_tests_name("gguf", tests, setup, teardown);
}
