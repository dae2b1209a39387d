/* Tests for the .safetensors and .json attention readers (src/io/attn_safetensors.c,
 * src/io/attn_json.c) on the fixtures of tests/fixtures/attention/make_safetensors.py:
 * every shape and dtype read element by element against the script's float32
 * values (f16/bf16 converted here, independently of the core), tokens, parts
 * pointing into the bytes; every bad file refused with its code and a message
 * naming the problem, f left empty; truncated files; attn_json_is_attention.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnio.h"

#include "test_util.h"

#define FIX "tests/fixtures/attention/"

/* The whole file in a buffer of exactly its size (ASan sees any over-read). */
static unsigned char *load_exact(const char *path, size_t *len)
{
    char *s = test_slurp(path, len);
    if (!s)
        fail_msg("%s: cannot read (run from the repository root; fixtures by %s)", path,
                 FIX "make_safetensors.py");
    unsigned char *b = malloc(*len ? *len : 1);
    assert_non_null(b);
    memcpy(b, s, *len);
    free(s);
    return b;
}

/* What a parser made (attn_file_close is the other half of io, not here). */
static void release(AttnFile *f)
{
    if (f->k_tokens && f->k_tokens != f->q_tokens) {
        for (char **t = f->k_tokens; *t; t++)
            free(*t);
        free(f->k_tokens);
    }
    if (f->q_tokens) {
        for (char **t = f->q_tokens; *t; t++)
            free(*t);
        free(f->q_tokens);
    }
    free(f->buf);
    memset(f, 0, sizeof *f);
}

/* IEEE half → float, written from the definition (not the core's). */
static float half_to_float(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m | 0x400), e - 25);
    return sign ? -v : v;
}

static float bf16_to_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static int host_big_endian(void)
{
    union { uint32_t u; unsigned char c[4]; } x = {0x01020304u};
    return x.c[0] == 1;
}

/* Element (l, h, i, j) of a part in C order, read with memcpy (the data may
 * be unaligned), bytes swapped when the part's order is not the host's. */
static float part_at(const AttnPart *p, int l, int h, int i, int j)
{
    static const int size[] = {2, 2, 4, 8};
    assert_true(p->dtype >= 0 && p->dtype < 4);
    assert_int_equal(p->fortran, 0);
    size_t n = (size_t)size[p->dtype];
    size_t at = (((size_t)l * p->H + h) * p->Tq + i) * p->Tk + j;
    unsigned char b[8];
    memcpy(b, (const unsigned char *)p->data + at * n, n);
    if (p->big_endian != host_big_endian())
        for (size_t k = 0; k < n / 2; k++) {
            unsigned char t = b[k];
            b[k] = b[n - 1 - k];
            b[n - 1 - k] = t;
        }
    uint16_t u16;
    float f32;
    double f64;
    switch (p->dtype) {
    case ATTN_DT_F16: memcpy(&u16, b, 2); return half_to_float(u16);
    case ATTN_DT_BF16: memcpy(&u16, b, 2); return bf16_to_float(u16);
    case ATTN_DT_F32: memcpy(&f32, b, 4); return f32;
    default: memcpy(&f64, b, 8); return (float)f64;
    }
}

/* Every element against name.expect (little-endian float32, L×H×Tq×Tk). */
static void check_values(const AttnFile *f, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, FIX "%s.expect", name);
    size_t len;
    unsigned char *e = load_exact(path, &len);
    size_t per = (size_t)f->H * f->Tq * f->Tk;
    assert_int_equal(len, (size_t)f->L * per * 4);
    int bad = 0;
    for (int l = 0; l < f->L; l++) {
        const AttnPart *p = f->n_parts == 1 ? &f->parts[0] : &f->parts[l];
        int pl = f->n_parts == 1 ? l : 0;
        for (int h = 0; h < f->H; h++)
            for (int i = 0; i < f->Tq; i++)
                for (int j = 0; j < f->Tk; j++) {
                    size_t at = (size_t)l * per + ((size_t)h * f->Tq + i) * f->Tk + j;
                    uint32_t u = (uint32_t)e[4 * at] | (uint32_t)e[4 * at + 1] << 8 |
                                 (uint32_t)e[4 * at + 2] << 16 | (uint32_t)e[4 * at + 3] << 24;
                    float want, got = part_at(p, pl, h, i, j);
                    memcpy(&want, &u, 4);
                    if (memcmp(&want, &got, 4) != 0 && bad++ < 5)
                        print_error("%s (%d, %d, %d, %d): %.9g, expected %.9g\n", name, l, h,
                                    i, j, got, want);
                }
    }
    free(e);
    assert_int_equal(bad, 0);
}

typedef struct Good {
    const char *name; /* without extension */
    int L, H, Tq, Tk, n_parts, dtype, cross;
    const char *q0, *k0; /* first query and key token, NULL: no tokens */
} Good;

#define GT "\xC4\xA0the" /* Ġthe */

static const Good good_st[] = {
    {"st_f32_tt", 1, 1, 4, 4, 1, ATTN_DT_F32, 0, GT, GT},
    {"st_f16_htt", 1, 2, 3, 3, 1, ATTN_DT_F16, 0, GT, GT},
    {"st_bf16_lhtt", 2, 2, 3, 3, 1, ATTN_DT_BF16, 0, GT, GT},
    {"st_f64_l1htt", 2, 2, 3, 3, 1, ATTN_DT_F64, 0, GT, GT},
    {"st_cross_f32", 1, 2, 3, 5, 1, ATTN_DT_F32, 1, "q0", "k0"},
    {"st_layers", 3, 2, 4, 4, 3, -1, 0, "t0", "t0"},
    {"st_attention_wins", 1, 1, 3, 3, 1, ATTN_DT_F32, 0, NULL, NULL},
};

static const Good good_json[] = {
    {"json_tt", 1, 1, 4, 4, 1, ATTN_DT_F64, 0, "<s>", "<s>"},
    {"json_htt", 1, 2, 3, 3, 1, ATTN_DT_F64, 0, "<s>", "<s>"},
    {"json_lhtt", 2, 2, 3, 3, 1, ATTN_DT_F64, 0, "<s>", "<s>"},
    {"json_l1htt", 2, 2, 3, 3, 1, ATTN_DT_F64, 0, "<s>", "<s>"},
    {"json_cross", 1, 2, 3, 5, 1, ATTN_DT_F64, 1, "q0", "k0"},
    {"json_notokens", 1, 1, 2, 2, 1, ATTN_DT_F64, 0, NULL, NULL},
};

static int count_tokens(char **t)
{
    int n = 0;
    while (t && t[n])
        n++;
    return n;
}

/* Shape, parts, tokens and values of one good file. */
static void check_good(const Good *g, const AttnFile *f, const unsigned char *data, size_t len)
{
    assert_int_equal(f->L, g->L);
    assert_int_equal(f->H, g->H);
    assert_int_equal(f->Tq, g->Tq);
    assert_int_equal(f->Tk, g->Tk);
    assert_int_equal(f->n_parts, g->n_parts);
    assert_int_equal(f->cross, g->cross);
    assert_null(f->map);
    int Lsum = 0;
    for (int k = 0; k < f->n_parts; k++) {
        const AttnPart *p = &f->parts[k];
        if (g->dtype >= 0)
            assert_int_equal(p->dtype, g->dtype);
        assert_int_equal(p->H, f->H);
        assert_int_equal(p->Tq, f->Tq);
        assert_int_equal(p->Tk, f->Tk);
        Lsum += p->L;
        if (f->buf) { /* JSON: the part is the parser's buffer of doubles */
            assert_ptr_equal(p->data, f->buf);
            assert_int_equal(f->buf_len, (size_t)p->L * p->H * p->Tq * p->Tk * 8);
            assert_int_equal(p->big_endian, host_big_endian());
        } else { /* safetensors: inside the bytes, little-endian */
            const unsigned char *d = p->data;
            assert_true(d > data + 8 && d <= data + len);
            assert_int_equal(p->big_endian, 0);
        }
    }
    assert_int_equal(Lsum, f->L);
    if (!g->q0) {
        assert_null(f->q_tokens);
        assert_null(f->k_tokens);
    } else {
        assert_int_equal(count_tokens(f->q_tokens), f->Tq);
        assert_int_equal(count_tokens(f->k_tokens), f->Tk);
        assert_string_equal(f->q_tokens[0], g->q0);
        assert_string_equal(f->k_tokens[0], g->k0);
        if (g->cross)
            assert_ptr_not_equal(f->q_tokens, f->k_tokens);
        else
            assert_ptr_equal(f->q_tokens, f->k_tokens);
    }
    check_values(f, g->name);
}

static void reads_good_safetensors(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof good_st / sizeof good_st[0]; c++) {
        char path[256];
        snprintf(path, sizeof path, FIX "%s.safetensors", good_st[c].name);
        size_t len;
        unsigned char *data = load_exact(path, &len);
        AttnFile *f = calloc(1, sizeof *f);
        AttnErr err = {0};
        assert_non_null(f);
        int rc = attn_safetensors_parse(f, data, len, path, &err);
        if (rc != 0)
            fail_msg("%s: %s", path, err.msg);
        assert_null(f->buf);
        assert_string_equal(f->name, path);
        check_good(&good_st[c], f, data, len);
        if (good_st[c].q0 && !good_st[c].cross && good_st[c].q0[0] == '\xC4')
            assert_string_equal(f->q_tokens[1], "\xE2\x96\x81\xC3\xBC"); /* ▁ü */
        release(f);
        free(f);
        free(data);
    }
}

static void reads_good_json(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof good_json / sizeof good_json[0]; c++) {
        char path[256];
        snprintf(path, sizeof path, FIX "%s.json", good_json[c].name);
        size_t len;
        unsigned char *data = load_exact(path, &len);
        AttnFile *f = calloc(1, sizeof *f);
        AttnErr err = {0};
        assert_non_null(f);
        int rc = attn_json_parse(f, (const char *)data, len, path, &err);
        if (rc != 0)
            fail_msg("%s: %s", path, err.msg);
        free(data); /* the numbers are the parser's own */
        assert_non_null(f->buf);
        assert_string_equal(f->name, path);
        check_good(&good_json[c], f, NULL, 0);
        release(f);
        free(f);
    }
}

/* layer_0 F16 H×T×T, layer_1 BF16 1×H×T×T, layer_2 F32: a part each, in
 * order, in the right places; the I64 tensor beside them is ignored. */
static void layer_parts(void **state)
{
    (void)state;
    size_t len;
    unsigned char *data = load_exact(FIX "st_layers.safetensors", &len);
    AttnFile f;
    AttnErr err = {0};
    assert_int_equal(attn_safetensors_parse(&f, data, len, "layers", &err), 0);
    static const int dt[3] = {ATTN_DT_F16, ATTN_DT_BF16, ATTN_DT_F32};
    static const size_t bytes[3] = {64, 64, 128};
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | data[i];
    const unsigned char *at = data + 8 + n;
    for (int k = 0; k < 3; k++) {
        assert_int_equal(f.parts[k].dtype, dt[k]);
        assert_int_equal(f.parts[k].L, 1);
        assert_ptr_equal(f.parts[k].data, at);
        at += bytes[k];
    }
    release(&f);
    free(data);
}

typedef struct Bad {
    const char *file;
    int code;
    const char *msg; /* a piece of the message */
} Bad;

static const Bad bad_files[] = {
    {"bad_short.safetensors", ATTN_E_PARSE, "shorter than the 8-byte header size"},
    {"bad_header_past_end.safetensors", ATTN_E_PARSE, "points past the end"},
    {"bad_header_huge.safetensors", ATTN_E_PARSE, "header size 9223372036854775808 points past"},
    {"bad_header_json.safetensors", ATTN_E_PARSE, "header is not one JSON object"},
    {"bad_header_array.safetensors", ATTN_E_PARSE, "header is not one JSON object"},
    {"bad_offsets_outside.safetensors", ATTN_E_RANGE, "[4, 40] outside the 36 bytes"},
    {"bad_offsets_length.safetensors", ATTN_E_SHAPE, "[0, 32] hold 32 bytes"},
    {"bad_offsets_huge.safetensors", ATTN_E_SHAPE, "needs 536870912"},
    {"bad_offsets_2p64.safetensors", ATTN_E_PARSE, "\"data_offsets\" must be [begin, end]"},
    {"bad_offsets_reversed.safetensors", ATTN_E_PARSE, "begin <= end"},
    {"bad_dtype_i64.safetensors", ATTN_E_UNSUPPORTED, "unknown dtype \"I64\""},
    {"bad_dtype_u8.safetensors", ATTN_E_UNSUPPORTED, "unknown dtype \"U8\""},
    {"bad_shape_1d.safetensors", ATTN_E_SHAPE, "has 1 dimensions"},
    {"bad_shape_6d.safetensors", ATTN_E_SHAPE, "has 6 dimensions"},
    {"bad_shape_batch2.safetensors", ATTN_E_SHAPE, "must be L×1×H×T×T"},
    {"bad_shape_zero.safetensors", ATTN_E_SHAPE, "0 query tokens"},
    {"bad_shape_too_many_tokens.safetensors", ATTN_E_TOO_LARGE, "9000 key tokens, at most 8192"},
    {"bad_no_attention.safetensors", ATTN_E_PARSE, "no tensor \"attention\" or \"layer_0\""},
    {"bad_layers_gap.safetensors", ATTN_E_PARSE, "layer_1 is missing"},
    {"bad_layers_mismatch.safetensors", ATTN_E_SHAPE, "layer_1 is 1×1×9 but layer_0 is 1×3×3"},
    {"bad_layer_with_layers.safetensors", ATTN_E_SHAPE, "tensor layer_0 has 2 layers"},
    {"bad_tokens_not_json.safetensors", ATTN_E_PARSE,
     "__metadata__.tokens is not a JSON array in a string"},
    {"bad_tokens_object.safetensors", ATTN_E_PARSE,
     "__metadata__.tokens is not a JSON array in a string"},
    {"bad_tokens_numbers.safetensors", ATTN_E_PARSE, "__metadata__.tokens[0] is not a string"},
    {"bad_tokens_count.safetensors", ATTN_E_SHAPE,
     "__metadata__.tokens has 4 tokens but the attention has 3"},
    {"bad_tokens_cross.safetensors", ATTN_E_SHAPE, "__metadata__.tokens has 1 tokens for a 1×9"},
    {"bad_query_only.safetensors", ATTN_E_PARSE,
     "__metadata__.query_tokens without __metadata__.key_tokens"},
    {"bad_key_count.safetensors", ATTN_E_SHAPE,
     "__metadata__.key_tokens has 2 tokens but the attention has 9"},
    {"bad_metadata_array.safetensors", ATTN_E_PARSE, "__metadata__ is not an object"},
    {"bad_syntax.json", ATTN_E_PARSE, "not valid JSON"},
    {"bad_trailing.json", ATTN_E_PARSE, "text after the end"},
    {"bad_not_object.json", ATTN_E_PARSE, "expected a JSON object"},
    {"bad_no_attention.json", ATTN_E_PARSE, "no \"attention\" key"},
    {"bad_ragged.json", ATTN_E_SHAPE, "attention[2][0] length 6, expected 7"},
    {"bad_ragged_long.json", ATTN_E_SHAPE, "attention[1] length 3, expected 2"},
    {"bad_null.json", ATTN_E_PARSE, "attention[1][2][0] is null, expected a number"},
    {"bad_string.json", ATTN_E_PARSE, "attention[0][1] is a string, expected a number"},
    {"bad_bool.json", ATTN_E_PARSE, "attention[0][1] is a boolean"},
    {"bad_depth1.json", ATTN_E_SHAPE, "nested 1 deep"},
    {"bad_depth6.json", ATTN_E_SHAPE, "nested over 5 deep"},
    {"bad_batch2.json", ATTN_E_SHAPE, "must be L×1×H×T×T"},
    {"bad_list_for_number.json", ATTN_E_PARSE, "attention[1][1] is a list, expected a number"},
    {"bad_number_for_list.json", ATTN_E_SHAPE, "attention[1] is a number, expected a list"},
    {"bad_empty.json", ATTN_E_SHAPE, "0 key tokens"},
    {"bad_huge.json", ATTN_E_RANGE, "attention[0][0] is out of range"},
    {"bad_tokens_count.json", ATTN_E_SHAPE, "tokens has 3 tokens but the attention has 2"},
    {"bad_tokens_nonstring.json", ATTN_E_PARSE, "tokens[1] is not a string"},
    {"bad_tokens_cross.json", ATTN_E_SHAPE, "tokens has 1 tokens for a 1×2"},
    {"bad_key_only.json", ATTN_E_PARSE, "key_tokens without query_tokens"},
};

static int parse_any(AttnFile *f, const unsigned char *data, size_t len, const char *name,
                     AttnErr *err)
{
    size_t n = strlen(name);
    if (n > 5 && strcmp(name + n - 5, ".json") == 0)
        return attn_json_parse(f, (const char *)data, len, name, err);
    return attn_safetensors_parse(f, data, len, name, err);
}

/* Each bad file: its code, a message naming the problem and the file, and
 * nothing left in f (it is all zero). */
static void refuses_bad_files(void **state)
{
    (void)state;
    static const AttnFile zero;
    int failed = 0;
    for (size_t c = 0; c < sizeof bad_files / sizeof bad_files[0]; c++) {
        const Bad *b = &bad_files[c];
        char path[256];
        snprintf(path, sizeof path, FIX "%s", b->file);
        size_t len;
        unsigned char *data = load_exact(path, &len);
        AttnFile *f = malloc(sizeof *f);
        assert_non_null(f);
        memset(f, 0x5a, sizeof *f);
        AttnErr err = {0};
        int rc = parse_any(f, data, len, path, &err);
        if (rc != -b->code || err.code != b->code || !strstr(err.msg, b->msg) ||
            strcmp(err.file, path) != 0 || memcmp(f, &zero, sizeof zero) != 0) {
            print_error("%s: rc %d code %d \"%s\" (file \"%s\"), expected code %d with \"%s\"%s\n",
                        b->file, rc, err.code, err.msg, err.file, b->code, b->msg,
                        memcmp(f, &zero, sizeof zero) ? "; f not left empty" : "");
            failed++;
            if (rc == 0)
                release(f);
        }
        /* the same without an AttnErr: the code only */
        memset(f, 0, sizeof *f);
        if (parse_any(f, data, len, path, NULL) != -b->code) {
            print_error("%s: a different code without an AttnErr\n", b->file);
            failed++;
        }
        free(f);
        free(data);
    }
    assert_int_equal(failed, 0);
}

/* Every proper prefix of a good file is refused (the header size then
 * points past the end, or the data is short), without reading past it;
 * except where only what is not read is cut: st_layers's last 32 bytes are
 * its I64 tensor (ignored), and a JSON file's final newline. */
static void refuses_truncated_files(void **state)
{
    (void)state;
    static const char *const files[] = {FIX "st_f32_tt.safetensors",
                                        FIX "st_layers.safetensors", FIX "json_htt.json"};
    for (size_t c = 0; c < 3; c++) {
        size_t len;
        unsigned char *data = load_exact(files[c], &len);
        for (size_t n = 0; n < len; n++) {
            unsigned char *cut = malloc(n ? n : 1);
            assert_non_null(cut);
            memcpy(cut, data, n);
            AttnFile f;
            AttnErr err = {0};
            int rc = parse_any(&f, cut, n, files[c], &err);
            if (rc == 0) {
                if (c == 1)
                    assert_true(n >= len - 32);
                else {
                    assert_int_equal(c, 2);
                    for (size_t k = n; k < len; k++) /* only white space was cut */
                        assert_true(data[k] == ' ' || data[k] == '\n');
                }
                release(&f);
            } else {
                assert_true(err.msg[0] != '\0');
            }
            free(cut);
        }
        free(data);
    }
}

static void tells_attention_from_sessions(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {"{\"attention\": [[1]]}", 1},
        {"\xEF\xBB\xBF  {\n \"tokens\": [\"a\"],\n \"attention\": [[1]]}", 1},
        {"{\"tokens\": [\"pay\", \"attention\"], \"heads\": [{\"attention\": 1}], "
         "\"session\": {\"sentence\": \"\\\"attention\\\": here\"}}", 0},
        {"{\"a\": \"x\\\"attention\\\"\", \"b\": {\"attention\": 1}, \"attention\": [[1]]}", 1},
        {"{\"a\": [\"}\", {\"attention\": 2}], \"attention\": 0}", 1},
        {"[{\"attention\": [[1]]}]", 0},
        {"{\"attentions\": [[1]]}", 0},
        {"{\"attention\"", 1}, /* cheap: the key is enough */
        {"{\"x\": \"attention", 0},
        {"", 0},
        {"{", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = strlen(cases[c].text);
        char *t = malloc(n ? n : 1);
        assert_non_null(t);
        memcpy(t, cases[c].text, n);
        if (attn_json_is_attention(t, n) != cases[c].want)
            fail_msg("case %zu: %s: expected %d", c, cases[c].text, cases[c].want);
        free(t);
    }
    /* a --print json document and the JSON fixtures */
    size_t len;
    unsigned char *d = load_exact("tests/golden/basic.json", &len);
    assert_int_equal(attn_json_is_attention((const char *)d, len), 0);
    free(d);
    for (size_t c = 0; c < sizeof good_json / sizeof good_json[0]; c++) {
        char path[256];
        snprintf(path, sizeof path, FIX "%s.json", good_json[c].name);
        d = load_exact(path, &len);
        assert_int_equal(attn_json_is_attention((const char *)d, len), 1);
        free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_good_safetensors),
        cmocka_unit_test(reads_good_json),
        cmocka_unit_test(layer_parts),
        cmocka_unit_test(refuses_bad_files),
        cmocka_unit_test(refuses_truncated_files),
        cmocka_unit_test(tells_attention_from_sessions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
