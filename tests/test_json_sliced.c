/* Tests for the sliced JSON parse (src/io/json_sliced.c) and the large
 * tokenizer.json read through it (src/io/bpe_files.c): the tree is the one
 * cJSON's whole parse gives (every tokenizer fixture, and hand-made
 * documents), a document cJSON refuses is refused; a generated vocabulary
 * of 65 536 tokens reads into the tokenizer built from the same lists
 * (the same sizes and ids), errors inside its vocab and merges name the
 * line as the whole parse does, and the read breaks up (bg_breathe) with
 * bounded work between two breaks: cJSON's allocations counted between
 * them, and the loops over the vocabulary and the merges breaking too. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/io/json_sliced.h"
#include "attnviz/background.h"
#include "attnviz/bpe_files.h"
#include "test_util.h"

/* ---- the tree ------------------------------------------------------------------------------- */

/* Both parses of data: the same tree (printed), or both refuse it. */
static void same_tree(const char *data, size_t len, const char *what)
{
    const char *end = NULL;
    cJSON *whole = cJSON_ParseWithLengthOpts(data, len, &end, 0), *sliced = (cJSON *)&end;
    while (whole && end < data + len && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t' || !*end))
        end++;
    if (whole && end < data + len) {
        cJSON_Delete(whole);
        whole = NULL;
    }
    int rc = json_parse_sliced(&sliced, data, len);
    if (!whole) {
        if (rc != -1 || sliced)
            fail_msg("%s: cJSON refuses it, the sliced parse does not", what);
        return;
    }
    if (rc != 0)
        fail_msg("%s: cJSON takes it, the sliced parse refuses it", what);
    char *a = cJSON_PrintUnformatted(whole), *b = cJSON_PrintUnformatted(sliced);
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a, b) != 0)
        fail_msg("%s: the trees differ:\n  whole  %.300s\n  sliced %.300s", what, a, b);
    free(a);
    free(b);
    cJSON_Delete(whole);
    json_delete_sliced(sliced);
}

static void fixtures_same_tree(void **state)
{
    (void)state;
    static const char *const dirs[] = {"tests/fixtures/hftok/", "tests/fixtures/gpt2tok/"};
    int n = 0;
    for (int k = 0; k < 2; k++) {
        DIR *d = opendir(dirs[k]);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d));) {
            size_t nl = strlen(e->d_name), len;
            if (nl < 5 || strcmp(e->d_name + nl - 5, ".json") != 0)
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s%s", dirs[k], e->d_name);
            char *data = test_slurp(path, &len);
            assert_non_null(data);
            same_tree(data, len, path);
            free(data);
            n++;
        }
        closedir(d);
    }
    assert_true(n >= 28);
}

/* Documents with what the walk must do as cJSON does, and ones both refuse. */
static void documents_same_tree(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{}", "[]", " \n\t{ } ", "{\"a\": {}, \"b\": [], \"c\": {\"d\": [], \"e\": {}}}",
        "{\"a\": 1, \"a\": 2}", "{\"m\\u006fdel\": {\"v\": {\"x\\\"y\": -0, \"z\": 1e5}}}",
        "[[[[[1, [2]]]]], {\"k\": [true, false, null]}]", "\"top\"", "42", "null",
        "{\"a\": [1,2 , 3\r\n,4]}\n\n", "{\"deep\": {\"er\": {\"est\": {\"x\": [1]}}}}",
        "{\"s\": \"\\ud83e\\udd80 \\n\"}", "\xEF\xBB\xBF{\"bom\": 1}",
        /* refused by both */
        "", " ", "{", "{\"a\": 1,}", "[1,]", "{\"a\" 1}", "{\"a\": }", "{1: 2}", "[1 2]",
        "{\"a\": [1, 2}", "{\"a\": \"unterminated}", "{} x", "{}{}", "{\"a\": tru}",
        "{\"a\": {\"b\": [1, {\"c\": 2,}]}}", "[\xEF\xBB\xBF 1]",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        same_tree(docs[i], strlen(docs[i]), docs[i]);
    /* a NUL after the document, as parse_json allows; one inside, refused */
    same_tree("{\"a\": 1}\0\0", 10, "NULs after");
    same_tree("{\"a\": \0 1}", 10, "a NUL inside");
}

/* ---- a large tokenizer.json --------------------------------------------------------------------- */

#define N_TOKENS 65536
#define TOK_MAX 24

typedef struct Big {
    char *json;
    size_t len, cap;
    long lines;                 /* newlines written so far */
    long *vocab_line, *merge_line; /* the line of each vocab entry, merge */
    Bpe *ref;                   /* the same tokenizer, built from the lists */
    int n_merges;
} Big;

static void put(Big *g, const char *s, size_t n)
{
    if (g->len + n + 1 > g->cap) {
        g->cap = (g->len + n + 1) * 2;
        g->json = realloc(g->json, g->cap);
        assert_non_null(g->json);
    }
    memcpy(g->json + g->len, s, n);
    g->len += n;
    g->json[g->len] = '\0';
    for (size_t i = 0; i < n; i++)
        g->lines += s[i] == '\n';
}

static void puts_(Big *g, const char *s)
{
    put(g, s, strlen(s));
}

/* A token inside a JSON string: '"' and '\' escaped; with escape_u, Ā
 * (U+0100) as \u0100, to go through cJSON's escapes. */
static void put_bare(Big *g, const char *t, int escape_u)
{
    for (const char *c = t; *c; c++) {
        if (*c == '"' || *c == '\\') {
            put(g, "\\", 1);
            put(g, c, 1);
        } else if (escape_u && (unsigned char)c[0] == 0xC4 && (unsigned char)c[1] == 0x80) {
            puts_(g, "\\u0100");
            c++;
        } else {
            put(g, c, 1);
        }
    }
}

static void put_token(Big *g, const char *t, int escape_u)
{
    put(g, "\"", 1);
    put_bare(g, t, escape_u);
    put(g, "\"", 1);
}

/* GPT-2's byte-level character of byte b, as UTF-8. */
static void byte_char(int b, char *out)
{
    int printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174, m = 0;
    for (int i = 0; i < b; i++)
        m += !((i >= 33 && i <= 126) || (i >= 161 && i <= 172) || i >= 174);
    unsigned cp = printable ? (unsigned)b : 256u + (unsigned)m;
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = '\0';
    } else {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        out[2] = '\0';
    }
}

/* N_TOKENS tokens (the byte-level alphabet, then joins of two earlier
 * tokens, each one's merge, as "left right" or ["left", "right"]), the
 * last <|endoftext|> (an added token), written as Hugging Face writes
 * tokenizer.json; g->ref built from the same lists. */
static void make_big(Big *g)
{
    AttnErr err = {0};
    char (*tok)[TOK_MAX + 1] = calloc(N_TOKENS, sizeof *tok);
    int(*merge)[2] = calloc(N_TOKENS, sizeof *merge);
    memset(g, 0, sizeof *g);
    g->vocab_line = calloc(N_TOKENS, sizeof *g->vocab_line);
    g->merge_line = calloc(N_TOKENS, sizeof *g->merge_line);
    g->ref = bpe_create(NULL);
    assert_true(tok && merge && g->vocab_line && g->merge_line && g->ref);
    int n = 0;
    for (; n < 256; n++)
        byte_char(n, tok[n]);
    unsigned seed = 12345;
    while (n < N_TOKENS - 1) {
        seed = seed * 1103515245u + 12345u;
        int l = (int)((seed >> 8) % (unsigned)n);
        seed = seed * 1103515245u + 12345u;
        int r = (int)((seed >> 8) % (unsigned)(n < 2048 ? n : 2048));
        size_t ll = strlen(tok[l]), rl = strlen(tok[r]);
        if (ll + rl > TOK_MAX)
            continue;
        memcpy(tok[n], tok[l], ll);
        memcpy(tok[n] + ll, tok[r], rl + 1);
        if (bpe_token_id(g->ref, tok[n], ll + rl) >= 0)
            continue;
        assert_int_equal(bpe_add_token(g->ref, tok[n], ll + rl, n, &err), 0);
        merge[g->n_merges][0] = l;
        merge[g->n_merges++][1] = r;
        n++;
    }
    for (int i = 0; i < 256; i++)
        assert_int_equal(bpe_add_token(g->ref, tok[i], strlen(tok[i]), i, &err), 0);
    strcpy(tok[n], "<|endoftext|>");
    assert_int_equal(bpe_add_token(g->ref, tok[n], 13, n, &err), 0);
    for (int m = 0; m < g->n_merges; m++)
        assert_int_equal(bpe_add_merge(g->ref, tok[merge[m][0]], strlen(tok[merge[m][0]]), tok[merge[m][1]],
                                       strlen(tok[merge[m][1]]), &err), 0);
    assert_int_equal(bpe_add_special(g->ref, "<|endoftext|>", 13, n, BPE_ADDED_SPECIAL, &err), 0);
    char line[160];
    snprintf(line, sizeof line, "{\n  \"version\": \"1.0\",\n  \"added_tokens\": [\n    {\n      \"id\": %d,\n"
             "      \"content\": \"<|endoftext|>\",\n      \"special\": true,\n", n);
    puts_(g, line);
    puts_(g, "      \"normalized\": false\n    }\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": {\n"
             "    \"type\": \"ByteLevel\",\n    \"add_prefix_space\": false\n  },\n  \"model\": {\n"
             "    \"type\": \"BPE\",\n    \"vocab\": {\n");
    for (int i = 0; i < N_TOKENS; i++) {
        g->vocab_line[i] = g->lines + 1;
        puts_(g, "      ");
        put_token(g, tok[i], i % 7 == 0);
        snprintf(line, sizeof line, ": %d%s\n", i, i + 1 < N_TOKENS ? "," : "");
        puts_(g, line);
    }
    puts_(g, "    },\n    \"merges\": [\n");
    for (int m = 0; m < g->n_merges; m++) {
        g->merge_line[m] = g->lines + 1;
        if (m % 2) { /* "left right" */
            puts_(g, "      \"");
            put_bare(g, tok[merge[m][0]], 0);
            puts_(g, " ");
            put_bare(g, tok[merge[m][1]], 0);
            puts_(g, "\"");
        } else {
            puts_(g, "      [\n        ");
            put_token(g, tok[merge[m][0]], 0);
            puts_(g, ",\n        ");
            put_token(g, tok[merge[m][1]], 0);
            puts_(g, "\n      ]");
        }
        puts_(g, m + 1 < g->n_merges ? ",\n" : "\n");
    }
    puts_(g, "    ]\n  }\n}\n");
    free(tok);
    free(merge);
}

static void free_big(Big *g)
{
    free(g->json);
    free(g->vocab_line);
    free(g->merge_line);
    bpe_destroy(g->ref);
}

/* The same ids from both tokenizers for texts of every kind. */
static void same_ids(const Bpe *a, const Bpe *b)
{
    static const char *const texts[] = {
        "the cat sat on the mat", "To be, or not to be, that is the question:",
        "\"quoted\" \\ back\\slash <|endoftext|> after", "caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\xA6\x80",
        "   spaces\t\ttabs\n\nnewlines", "0123456789 +-*/ {}[]()",
    };
    char noise[2048];
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof noise; i++) {
        seed = seed * 1103515245u + 12345u;
        noise[i] = (char)(seed >> 16);
    }
    for (size_t i = 0; i <= sizeof texts / sizeof texts[0]; i++) {
        const char *t = i < sizeof texts / sizeof texts[0] ? texts[i] : noise;
        size_t n = t == noise ? sizeof noise : strlen(t);
        BpeIds x = {0}, y = {0};
        assert_int_equal(bpe_encode(a, t, n, &x), 0);
        assert_int_equal(bpe_encode(b, t, n, &y), 0);
        assert_int_equal(x.n, y.n);
        assert_memory_equal(x.id, y.id, (size_t)x.n * sizeof *x.id);
        assert_true(x.n > 0);
        bpe_ids_free(&x);
        bpe_ids_free(&y);
    }
}

static long cjson_events; /* cJSON's allocations and frees so far, on the test's thread */

static void *counted_malloc(size_t n)
{
    cjson_events++;
    return malloc(n);
}

static void counted_free(void *p)
{
    cjson_events++;
    free(p);
}

/* What bg_breathe saw: how many times, the most cJSON events between two
 * (or before the first, after the last), how many came after none (a loop
 * over values already parsed). */
typedef struct Breaths {
    long n, most, quiet, at;
} Breaths;

static void on_breathe(void *ctx)
{
    Breaths *b = ctx;
    long d = cjson_events - b->at;
    b->most = d > b->most ? d : b->most;
    b->quiet += d == 0;
    b->at = cjson_events;
    b->n++;
}

static void large_tokenizer_json(void **state)
{
    (void)state;
    Big g;
    make_big(&g);
    AttnErr err = {0};
    Bpe *b = NULL;
    Breaths seen = {0};
    cJSON_InitHooks(&(cJSON_Hooks){counted_malloc, counted_free});
    bg_watch_breathe(on_breathe, &seen);
    int rc = bpe_parse_tokenizer_json(&b, g.json, g.len, "big.json", &err);
    bg_watch_breathe(NULL, NULL);
    cJSON_InitHooks(NULL);
    if (rc < 0)
        fail_msg("%s:%ld: %s", err.file, err.line, err.msg);
    long last = cjson_events - seen.at, parts = 2L * N_TOKENS + g.n_merges;
    seen.most = last > seen.most ? last : seen.most;
    print_message("%zu bytes, %d merges: %ld breaks, %ld after no cJSON call, at most %ld of cJSON's "
                  "allocations and frees between two (%ld in all)\n",
                  g.len, g.n_merges, seen.n, seen.quiet, seen.most, cjson_events);
    assert_int_equal(bpe_n_vocab(b), N_TOKENS);
    assert_int_equal(bpe_n_merges(b), g.n_merges);
    assert_int_equal(bpe_n_vocab(g.ref), N_TOKENS);
    same_ids(b, g.ref);
    /* the parse (a break every JSON_BREATHE_EVERY values: keys, ids,
       merges), the loops over the vocabulary and the merges (counted, then
       read) and the tree freed: each breaks, with at most a few
       allocations a value between two breaks (a merge ["a", "b"] is five) */
    assert_true(seen.n >= 2 * parts / JSON_BREATHE_EVERY);
    assert_true(seen.quiet >= 2L * (N_TOKENS + g.n_merges) / JSON_BREATHE_EVERY - 4);
    assert_true(seen.most <= 6L * JSON_BREATHE_EVERY);
    bpe_destroy(b);
    free_big(&g);
}

/* The line cJSON's whole parse gives a document it refuses (the old reader's). */
static long whole_parse_line(const char *data, size_t len)
{
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    assert_null(j);
    const char *at = cJSON_GetErrorPtr();
    long line = 1;
    for (const char *p = data; p < at; p++)
        line += *p == '\n';
    return line;
}

/* Errors inside the large file's vocab and merges: the file, the line,
 * the message. */
static void large_tokenizer_errors(void **state)
{
    (void)state;
    Big g;
    make_big(&g);
    const int k = N_TOKENS / 2, m = g.n_merges * 3 / 4 & ~1; /* a token, an even merge (a pair) */
    char *doc = malloc(g.len + 64);
    assert_non_null(doc);
    struct {
        long line;        /* the entry's line in g.json (the change is on it) */
        const char *from; /* the first text from that line's start replaced ... */
        const char *to;   /* ... by this */
        int code;
        long want;        /* the line the error must name */
        const char *msg;
    } cases[] = {
        {g.vocab_line[k], ": ", "  ", ATTN_E_PARSE, g.vocab_line[k], "not valid JSON"},
        {g.vocab_line[k], ",\n", "\n", ATTN_E_PARSE, g.vocab_line[k + 1], "not valid JSON"},
        {g.vocab_line[k], ": ", ": 0.5, \"x\": ", ATTN_E_PARSE, g.vocab_line[k], "the id is not a whole number"},
        {g.vocab_line[k], ": ", ": 1, \"y\": ", ATTN_E_DUPLICATE, g.vocab_line[k] /* (k's id after) */, "id 1 is given"},
        {g.merge_line[m], "[\n", "[\n \"nope\",\n", ATTN_E_PARSE, g.merge_line[m], "expected \"left right\""},
        {g.merge_line[m], "[\n", "[\n \"\xC4\xA4\xC4\xA4\xC4\xA4\xC4\xA4\xC4\xA4\xC4\xA4\xC4\xA4\",\n \"x\"],\n [\n",
         ATTN_E_RANGE, g.merge_line[m], "is not in the vocabulary"},
        {g.merge_line[m], "[\n", "[\n \"a\" \"b\",\n", ATTN_E_PARSE, g.merge_line[m] + 1, "not valid JSON"},
        {g.merge_line[m], "[\n", "[\n \"unterminated,\n", ATTN_E_PARSE, 0, "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *at = g.json;
        for (long l = 1; l < cases[i].line; l++)
            at = strchr(at, '\n') + 1;
        at = strstr(at, cases[i].from);
        assert_non_null(at);
        size_t pre = (size_t)(at - g.json), fl = strlen(cases[i].from), tl = strlen(cases[i].to);
        memcpy(doc, g.json, pre);
        memcpy(doc + pre, cases[i].to, tl);
        memcpy(doc + pre + tl, at + fl, g.len - pre - fl);
        size_t len = g.len - fl + tl;
        long want = cases[i].want ? cases[i].want : whole_parse_line(doc, len);
        if (cases[i].code == ATTN_E_PARSE && strstr(cases[i].msg, "JSON"))
            assert_int_equal(whole_parse_line(doc, len), want);
        AttnErr err = {0};
        Bpe *b = (Bpe *)&err;
        int rc = bpe_parse_tokenizer_json(&b, doc, len, "big.json", &err);
        if (rc != -cases[i].code || strcmp(err.file, "big.json") != 0 || err.line != want ||
            !strstr(err.msg, cases[i].msg) || b)
            fail_msg("case %zu: rc %d, %s:%ld: %s (want %d, big.json:%ld: ...%s...)", i, rc, err.file,
                     err.line, err.msg, -cases[i].code, want, cases[i].msg);
    }
    /* cut anywhere in the large values: refused, never a crash */
    for (size_t cut = g.len / 3; cut < g.len; cut += g.len / 7) {
        AttnErr err = {0};
        Bpe *b = NULL;
        assert_int_equal(bpe_parse_tokenizer_json(&b, g.json, cut, "big.json", &err), -ATTN_E_PARSE);
        assert_int_equal(err.line, whole_parse_line(g.json, cut));
    }
    free(doc);
    free_big(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixtures_same_tree),
        cmocka_unit_test(documents_same_tree),
        cmocka_unit_test(large_tokenizer_json),
        cmocka_unit_test(large_tokenizer_errors),
    };
    return cmocka_run_group_tests_name("json_sliced", tests, NULL, NULL);
}
