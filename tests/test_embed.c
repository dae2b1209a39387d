/* Tests for the embedding reader (src/io/embed_file.c): formats, every error
 * with its code and line, duplicates, lookup, OOV vectors, the float parser
 * against strtof, and out-of-memory handling. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/embed.h"

#define FIXTURES "tests/fixtures/embed/"

/* ---- malloc failure injection (glibc, not under ASan) ------------------- */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBED_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define EMBED_TEST_ASAN 1
#endif
#if defined(__GLIBC__) && !defined(EMBED_TEST_ASAN)
#define EMBED_TEST_NOMEM 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static int inj_armed;   /* count and fail only while set */
static long inj_calls;  /* allocations seen while armed */
static long inj_fail_at; /* fail the allocation with this number (1-based) */
static long inj_live;   /* allocations minus frees while armed */

static int inj_should_fail(void)
{
    return inj_armed && ++inj_calls == inj_fail_at;
}
void *malloc(size_t n)
{
    if (inj_should_fail())
        return NULL;
    void *p = __libc_malloc(n);
    if (p && inj_armed)
        inj_live++;
    return p;
}
void *calloc(size_t a, size_t b)
{
    if (inj_should_fail())
        return NULL;
    void *p = __libc_calloc(a, b);
    if (p && inj_armed)
        inj_live++;
    return p;
}
void *realloc(void *q, size_t n)
{
    if (inj_should_fail())
        return NULL;
    void *p = __libc_realloc(q, n);
    if (inj_armed) {
        if (!q && p)
            inj_live++;
        else if (q && n == 0)
            inj_live--;
    }
    return p;
}
void free(void *p)
{
    if (p && inj_armed)
        inj_live--;
    __libc_free(p);
}
#endif

/* ---- helpers ---------------------------------------------------------- */

static EmbedTable *parse_ok(const char *s, AttnErr *warn)
{
    EmbedTable *t = NULL;
    AttnErr err = {0};
    int rc = embed_parse(&t, s, strlen(s), "t.txt", &err, warn);
    if (rc != 0)
        print_error("unexpected error %d at line %ld: %s\n", err.code, err.line,
                    err.msg);
    assert_int_equal(rc, 0);
    assert_non_null(t);
    return t;
}

/* Parse n bytes expecting error code on line, with msg containing sub. */
static void expect_err_n(const char *s, size_t n, int code, long line,
                         const char *sub)
{
    EmbedTable *t = (EmbedTable *)1;
    AttnErr err = {0};
    int rc = embed_parse(&t, s, n, "t.txt", &err, NULL);
    if (rc != -code || err.line != line || (sub && !strstr(err.msg, sub)))
        print_error("got rc %d line %ld msg \"%s\"\n", rc, err.line, err.msg);
    assert_int_equal(rc, -code);
    assert_int_equal(err.code, code);
    assert_int_equal(err.line, line);
    assert_string_equal(err.file, "t.txt");
    assert_null(t);
    if (sub)
        assert_non_null(strstr(err.msg, sub));
}

static void expect_err(const char *s, int code, long line, const char *sub)
{
    expect_err_n(s, strlen(s), code, line, sub);
}

static void assert_vec(const EmbedTable *t, int i, const float *want)
{
    const float *v = embed_vector(t, i);
    for (int k = 0; k < t->d; k++)
        assert_true(v[k] == want[k]);
}

static int is_pow2(size_t x)
{
    return x && (x & (x - 1)) == 0;
}

/* Write len bytes to a new temp file; the path goes into path[64]. */
static void write_temp(char *path, const char *data, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, 64, "%s/embedXXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

/* ---- formats ---------------------------------------------------------- */

static void test_glove_basic(void **state)
{
    (void)state;
    AttnErr warn = {.code = 99};
    EmbedTable *t = parse_ok("the 0.1 0.2 0.3\nof -1 -2 -3\nbank 1e-3 3.5E+2 -0.12345\n",
                             &warn);
    assert_int_equal(t->n, 3);
    assert_int_equal(t->d, 3);
    assert_int_equal(t->n_duplicates, 0);
    assert_int_equal(t->has_dim_names, 0);
    assert_int_equal(warn.code, 0);
    assert_string_equal(embed_word(t, 0), "the");
    assert_string_equal(embed_word(t, 2), "bank");
    assert_vec(t, 0, (float[]){0.1f, 0.2f, 0.3f});
    assert_vec(t, 1, (float[]){-1.0f, -2.0f, -3.0f});
    assert_vec(t, 2, (float[]){1e-3f, 350.0f, -0.12345f});
    assert_string_equal(embed_dim_name(t, 0), "d0");
    assert_string_equal(embed_dim_name(t, 2), "d2");
    assert_true(is_pow2(t->n_slots));
    assert_true(t->n_slots >= 2 * (size_t)t->n);
    embed_destroy(t);
}

static void test_word2vec_header(void **state)
{
    (void)state;
    EmbedTable *t = parse_ok("# comment first\n3 2\na 1 2\nb 3 4\nc 5 6\n", NULL);
    assert_int_equal(t->n, 3);
    assert_int_equal(t->d, 2);
    assert_int_equal(embed_find(t, "c"), 2);
    assert_int_equal(embed_find(t, "3"), -1);
    assert_vec(t, 2, (float[]){5.0f, 6.0f});
    embed_destroy(t);

    AttnErr err;
    assert_int_equal(embed_load(&t, FIXTURES "word2vec_small.txt", &err, NULL), 0);
    assert_int_equal(t->n, 4);
    assert_int_equal(t->d, 3);
    assert_string_equal(embed_word(t, 3), "and");
    assert_vec(t, 2, (float[]){1.5f, 2.5f, 3.5f});
    embed_destroy(t);
}

static void test_word2vec_header_lies(void **state)
{
    (void)state;
    /* N too large, N too small, N right but D wrong on the first row */
    expect_err("3 2\na 1 2\nb 3 4\n", ATTN_E_SHAPE, 1, "header says 3 words, the file has 2");
    expect_err("# x\n\n1 2\na 1 2\nb 3 4\n", ATTN_E_SHAPE, 3, "header says 1 words");
    expect_err("2 3\na 1 2\nb 3 4\n", ATTN_E_SHAPE, 2, "expected 3 numbers (header at line 1), found 2");
    expect_err("2 0\na 1\n", ATTN_E_RANGE, 1, "header dimension 0");
    expect_err("2 1025\na 1\n", ATTN_E_RANGE, 1, "header dimension 1025");
    expect_err("99999999999 2\na 1 2\n", ATTN_E_TOO_LARGE, 1, "header word count");
    /* 2^32 + 2 words and 2^32 + 1 dimensions: a 32-bit long (wasm32) would
     * wrap them to 2 and 1, which this file matches or nearly */
    expect_err("4294967298 2\na 1 2\nb 3 4\n", ATTN_E_TOO_LARGE, 1,
               "header word count is larger than 2147483647");
    expect_err("1 4294967297\na 1\n", ATTN_E_RANGE, 1, "header dimension");
    expect_err("0 2\n", ATTN_E_EMPTY, 1, "no words");

    AttnErr err;
    EmbedTable *t = (EmbedTable *)1;
    assert_int_equal(embed_load(&t, FIXTURES "word2vec_bad_n.txt", &err, NULL),
                     -ATTN_E_SHAPE);
    assert_null(t);
    assert_int_equal(err.line, 1);
    assert_string_equal(err.file, FIXTURES "word2vec_bad_n.txt");
}

static void test_dims_line(void **state)
{
    (void)state;
    EmbedTable *t = parse_ok("#dims: noun verb\n# other comment\na 1 2\nb 3 4\n", NULL);
    assert_int_equal(t->has_dim_names, 1);
    assert_string_equal(embed_dim_name(t, 0), "noun");
    assert_string_equal(embed_dim_name(t, 1), "verb");
    embed_destroy(t);

    /* after the data and after a header is fine too */
    t = parse_ok("a 1 2\n# dims:  x\ty \n", NULL);
    assert_string_equal(embed_dim_name(t, 1), "y");
    embed_destroy(t);
    t = parse_ok("1 2\n# dims: p q\na 1 2\n", NULL);
    assert_string_equal(embed_dim_name(t, 0), "p");
    embed_destroy(t);

    /* mismatches name the dims line */
    expect_err("# x\n# dims: a b c\na 1 2\n", ATTN_E_SHAPE, 2,
               "names 3 dimensions but the vectors have 2");
    expect_err("a 1 2\nb 1 2\n# dims: one\n", ATTN_E_SHAPE, 3, "names 1 dimensions");
    expect_err("1 2\n# dims:\na 1 2\n", ATTN_E_SHAPE, 2, "names 0 dimensions");
    expect_err("# dims: a b\n# dims: a b\nw 1 2\n", ATTN_E_PARSE, 2,
               "second \"# dims:\" line (first at line 1)");
}

static void test_crlf_bom_no_newline(void **state)
{
    (void)state;
    EmbedTable *t = parse_ok("\xEF\xBB\xBF" "a 1 2\r\n\r\nb 3 4\r\nc 5 6", NULL);
    assert_int_equal(t->n, 3);
    assert_string_equal(embed_word(t, 0), "a");
    assert_string_equal(embed_word(t, 2), "c");
    assert_vec(t, 1, (float[]){3.0f, 4.0f});
    assert_vec(t, 2, (float[]){5.0f, 6.0f});
    embed_destroy(t);

    /* BOM before a header, tabs and trailing blanks, CR-only blank line */
    t = parse_ok("\xEF\xBB\xBF" "1 2\r\n\tx\t7 \t8 \r\n \r\n", NULL);
    assert_int_equal(t->n, 1);
    assert_string_equal(embed_word(t, 0), "x");
    assert_vec(t, 0, (float[]){7.0f, 8.0f});
    embed_destroy(t);

    /* the on-disk fixture: BOM, CRLF, dims, a duplicate, no final newline */
    AttnErr err, warn;
    assert_int_equal(embed_load(&t, FIXTURES "glove_crlf_bom_dims.txt", &err, &warn), 0);
    assert_int_equal(t->n, 4);
    assert_int_equal(t->d, 3);
    assert_string_equal(embed_dim_name(t, 2), "z");
    assert_int_equal(embed_find(t, "river"), 3);
    assert_vec(t, 3, (float[]){-350.0f, 0.0f, 0.5f});
    assert_vec(t, 2, (float[]){1.0f, 2.0f, 3.0f});
    assert_int_equal(t->n_duplicates, 1);
    assert_int_equal(warn.code, ATTN_E_DUPLICATE);
    assert_int_equal(warn.line, 7);
    assert_string_equal(warn.msg, "duplicate word \"bank\" (first at line 6) ignored");
    embed_destroy(t);
}

static void test_duplicates(void **state)
{
    (void)state;
    const char *s = "2 2\n# c\n\nbank 1 2\nriver 3 4\nbank 5 6\nriver 7 8\n";
    AttnErr warn;
    /* the header counts rows, duplicates included */
    expect_err(s, ATTN_E_SHAPE, 1, "header says 2 words, the file has 4");
    s += 4;
    EmbedTable *t = parse_ok(s, &warn);
    assert_int_equal(t->n, 2);
    assert_int_equal(t->n_duplicates, 2);
    assert_vec(t, 0, (float[]){1.0f, 2.0f}); /* the first one wins */
    assert_vec(t, 1, (float[]){3.0f, 4.0f});
    assert_int_equal(warn.code, ATTN_E_DUPLICATE);
    assert_int_equal(warn.line, 5);
    assert_string_equal(warn.file, "t.txt");
    assert_string_equal(warn.msg, "duplicate word \"bank\" (first at line 3) ignored");
    embed_destroy(t);

    /* warn may be NULL; a header line is not counted as a row */
    t = parse_ok("4 1\nx 1\ny 2\nx 3\nx 4\n", NULL);
    assert_int_equal(t->n_duplicates, 2);
    embed_destroy(t);
    t = parse_ok("\xEF\xBB\xBF" "4 1\nx 1\n\ny 2\ny 3\nx 4\n", &warn);
    assert_int_equal(warn.line, 5);
    assert_string_equal(warn.msg, "duplicate word \"y\" (first at line 4) ignored");
    embed_destroy(t);

    /* a bad duplicate row is still an error */
    expect_err("x 1 2\nx 1\n", ATTN_E_SHAPE, 2, "expected 2 numbers, found 1");
}

static void test_load_real_asset(void **state)
{
    (void)state;
    EmbedTable *t;
    AttnErr err, warn;
    if (access("assets/embeddings.txt", R_OK) != 0)
        skip();
    int rc = embed_load(&t, "assets/embeddings.txt", &err, &warn);
    if (rc)
        print_error("%s:%ld: %s\n", err.file, err.line, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(t->d, 16);
    assert_int_equal(t->has_dim_names, 1);
    assert_string_equal(embed_dim_name(t, 0), "noun");
    assert_true(t->n > 100);
    for (int i = 0; i < t->n; i++)
        assert_int_equal(embed_find(t, embed_word(t, i)), i);
    embed_destroy(t);
}

/* ---- errors ----------------------------------------------------------- */

static void test_err_ragged(void **state)
{
    (void)state;
    char buf[4096];
    size_t n = 0;
    for (int i = 0; i < 11; i++) {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "w%d", i);
        for (int k = 0; k < (i == 10 ? 15 : 16); k++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, " %d.5", k);
        buf[n++] = '\n';
    }
    buf[n] = '\0';
    expect_err(buf, ATTN_E_SHAPE, 11, "expected 16 numbers, found 15");
    expect_err("a 1 2\n\nb 1 2 3\n", ATTN_E_SHAPE, 3, "expected 2 numbers, found 3");

    AttnErr err;
    EmbedTable *t;
    assert_int_equal(embed_load(&t, FIXTURES "ragged.txt", &err, NULL), -ATTN_E_SHAPE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.msg, "expected 3 numbers, found 2");
}

static void test_err_not_a_number(void **state)
{
    (void)state;
    expect_err("a 1 2\nb 1 x2\n", ATTN_E_PARSE, 2, "not a number: \"x2\"");
    expect_err("a 1 2,5\n", ATTN_E_PARSE, 1, "\"2,5\"");
    static const char *bad[] = {"1e", "1e+", ".", "-", "+", "1.2.3", "0x10",
                                "--1", "1e5x", "e5", "1..2", "nanx", "infx", "1-"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char s[64];
        snprintf(s, sizeof s, "w 0.5 %s\n", bad[i]);
        expect_err(s, ATTN_E_PARSE, 1, bad[i]);
    }
    /* long tokens are shortened in the message */
    char s[300];
    memset(s, 'z', sizeof s);
    memcpy(s, "w 1 ", 4);
    s[sizeof s - 1] = '\0';
    expect_err(s, ATTN_E_PARSE, 1, "zzz...\"");
}

static void test_err_nonfinite(void **state)
{
    (void)state;
    static const char *bad[] = {"nan", "NaN", "-nan", "inf", "-Inf", "+INF",
                                "infinity", "-Infinity", "1e39", "-4e38",
                                "3.40282357e38", "1e400000000000"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char s[64];
        snprintf(s, sizeof s, "ok 1 2\n\nw 0.5 %s\n", bad[i]);
        expect_err(s, ATTN_E_NONFINITE, 3, bad[i]);
    }
    /* the largest float is fine */
    EmbedTable *t = parse_ok("w 3.4028234e38 -3.40282346e38 1e-400000000\n", NULL);
    assert_true(embed_vector(t, 0)[0] == FLT_MAX);
    assert_true(embed_vector(t, 0)[1] == -FLT_MAX);
    assert_true(embed_vector(t, 0)[2] == 0.0f);
    embed_destroy(t);
}

static void test_err_no_numbers(void **state)
{
    (void)state;
    expect_err("lonely\n", ATTN_E_PARSE, 1, "word \"lonely\" has no numbers");
    expect_err("a 1\n# c\nb \r\n", ATTN_E_PARSE, 3, "word \"b\" has no numbers");
    expect_err("2 3\nb\n", ATTN_E_PARSE, 2, "has no numbers");
}

static void test_err_empty(void **state)
{
    (void)state;
    expect_err_n("", 0, ATTN_E_EMPTY, 1, "no words");
    expect_err("# only\n# comments\n", ATTN_E_EMPTY, 2, NULL);
    expect_err("# dims: a b\n\n", ATTN_E_EMPTY, 2, NULL);
    expect_err("\n\n  \r\n\t\n", ATTN_E_EMPTY, 4, NULL);
    expect_err("\xEF\xBB\xBF", ATTN_E_EMPTY, 1, NULL);

    EmbedTable *t = (EmbedTable *)1;
    AttnErr err;
    assert_int_equal(embed_parse(&t, NULL, 0, NULL, &err, NULL), -ATTN_E_EMPTY);
    assert_string_equal(err.file, "<memory>");
    assert_null(t);
}

static void test_err_dimension_range(void **state)
{
    (void)state;
    size_t cap = 12 * 1030 + 64;
    char *s = malloc(cap);
    assert_non_null(s);
    for (int d = 1024; d <= 1025; d++) {
        size_t n = (size_t)snprintf(s, cap, "w");
        for (int k = 0; k < d; k++)
            n += (size_t)snprintf(s + n, cap - n, " %d", k);
        s[n++] = '\n';
        s[n] = '\0';
        if (d == 1024) {
            EmbedTable *t = parse_ok(s, NULL);
            assert_int_equal(t->d, 1024);
            assert_true(embed_vector(t, 0)[1023] == 1023.0f);
            assert_string_equal(embed_dim_name(t, 1023), "d1023");
            embed_destroy(t);
        } else {
            expect_err(s, ATTN_E_RANGE, 1, "1025 numbers in a row; at most 1024");
        }
    }
    free(s);
}

static void test_err_word_length(void **state)
{
    (void)state;
    char s[1100];
    for (int len = 1000; len <= 1001; len++) {
        memset(s, 'q', (size_t)len);
        strcpy(s + len, " 1 2\n");
        if (len == 1000) {
            EmbedTable *t = parse_ok(s, NULL);
            assert_int_equal(strlen(embed_word(t, 0)), 1000);
            s[len] = '\0';
            assert_int_equal(embed_find(t, s), 0);
            embed_destroy(t);
        } else {
            expect_err(s, ATTN_E_PARSE, 1, "is 1001 bytes long (at most 1000)");
        }
    }
    expect_err_n("ok 1\nnul\0x 1\n", 12, ATTN_E_PARSE, 2, "NUL byte");
    /* any other bytes are fine in words */
    EmbedTable *t = parse_ok("\xC3\xA9t\xC3\xA9 1\n\"<s>\" 2\nx#y 3\n\v 4\n", NULL);
    assert_int_equal(embed_find(t, "\xC3\xA9t\xC3\xA9"), 0);
    assert_int_equal(embed_find(t, "\"<s>\""), 1);
    assert_int_equal(embed_find(t, "x#y"), 2);
    assert_int_equal(embed_find(t, "\v"), 3);
    embed_destroy(t);
}

static void test_err_too_large(void **state)
{
    (void)state;
    /* embed_parse checks the length before it reads a byte */
    char one = 'x';
    EmbedTable *t = (EmbedTable *)1;
    AttnErr err;
    size_t huge = SIZE_MAX > ((uint64_t)8 << 30) ? (size_t)(((uint64_t)8 << 30) + 1) : 0;
    if (!huge)
        skip();
    assert_int_equal(embed_parse(&t, &one, huge, "big", &err, NULL), -ATTN_E_TOO_LARGE);
    assert_null(t);

    /* a sparse file of 8 GiB + 1 byte is refused before reading */
    char path[64];
    write_temp(path, "", 0);
    if (truncate(path, (off_t)(((uint64_t)8 << 30) + 1)) != 0) {
        unlink(path);
        skip();
    }
    t = (EmbedTable *)1;
    assert_int_equal(embed_load(&t, path, &err, NULL), -ATTN_E_TOO_LARGE);
    assert_null(t);
    assert_string_equal(err.file, path);
    unlink(path);
}

static void test_err_io(void **state)
{
    (void)state;
    EmbedTable *t = (EmbedTable *)1;
    AttnErr err;
    assert_int_equal(embed_load(&t, "/nonexistent/dir/emb.txt", &err, NULL), -ATTN_E_IO);
    assert_null(t);
    assert_int_equal(err.code, ATTN_E_IO);
    assert_string_equal(err.file, "/nonexistent/dir/emb.txt");
    assert_int_equal(embed_load(&t, "tests", &err, NULL), -ATTN_E_IO);
    assert_int_equal(embed_parse(NULL, "a 1", 3, "x", &err, NULL), -ATTN_E_RANGE);
    embed_destroy(NULL);
}

static void test_load_temp_file(void **state)
{
    (void)state;
    char path[64];
    const char *s = "# dims: a b\nhello 1 2\nworld 3 4";
    write_temp(path, s, strlen(s));
    EmbedTable *t;
    AttnErr err, warn;
    assert_int_equal(embed_load(&t, path, &err, &warn), 0);
    assert_int_equal(t->n, 2);
    assert_int_equal(embed_find(t, "world"), 1);
    assert_string_equal(embed_dim_name(t, 1), "b");
    embed_destroy(t);
    unlink(path);

    /* errors from a file carry its name and line */
    s = "a 1 2\nb 1 nan\n";
    write_temp(path, s, strlen(s));
    assert_int_equal(embed_load(&t, path, &err, NULL), -ATTN_E_NONFINITE);
    assert_string_equal(err.file, path);
    assert_int_equal(err.line, 2);
    unlink(path);
}

/* ---- lookup and OOV ---------------------------------------------------- */

static void test_lookup(void **state)
{
    (void)state;
    EmbedTable *t = parse_ok("bank 1\nbanks 2\nban 3\nBank 4\n", NULL);
    assert_int_equal(embed_find(t, "bank"), 0);
    assert_int_equal(embed_find(t, "banks"), 1);
    assert_int_equal(embed_find(t, "ban"), 2);
    assert_int_equal(embed_find(t, "Bank"), 3);
    assert_int_equal(embed_find(t, "ba"), -1);
    assert_int_equal(embed_find(t, "bankss"), -1);
    assert_int_equal(embed_find(t, ""), -1);
    assert_int_equal(embed_find(t, NULL), -1);
    assert_int_equal(embed_find(NULL, "bank"), -1);
    embed_destroy(t);
}

/* Many random words: the index grows several times and still finds all. */
static void test_lookup_many(void **state)
{
    (void)state;
    enum { N = 5000, D = 3 };
    size_t cap = (size_t)N * 80, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    uint64_t r = 42;
    for (int i = 0; i < N; i++) {
        n += (size_t)snprintf(s + n, cap - n, "%d_", i);
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int len = 1 + (int)((r >> 33) % 30);
        for (int k = 0; k < len; k++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            char c = (char)(33 + (r >> 33) % 200); /* printable and high bytes */
            s[n++] = c;
        }
        n += (size_t)snprintf(s + n, cap - n, " %d %d.25 -%d\n", i, i, i);
    }
    s[n] = '\0';
    EmbedTable *t = parse_ok(s, NULL);
    assert_int_equal(t->n, N);
    assert_true(t->n_slots >= 2 * (size_t)N && is_pow2(t->n_slots));
    for (int i = 0; i < N; i++) {
        assert_int_equal(embed_find(t, embed_word(t, i)), i);
        assert_true(embed_vector(t, i)[0] == (float)i);
        assert_true(embed_vector(t, i)[1] == (float)i + 0.25f);
        assert_true(embed_vector(t, i)[2] == -(float)i);
    }
    embed_destroy(t);
    free(s);
}

static void test_oov(void **state)
{
    (void)state;
    float a[64], b[64], c[64];
    embed_oov_vector("zyzzyva", 64, a);
    embed_oov_vector("zyzzyva", 64, b);
    embed_oov_vector("zyzzyvas", 64, c);
    assert_memory_equal(a, b, sizeof a);
    int differ = 0;
    for (int k = 0; k < 64; k++) {
        assert_true(a[k] >= -0.5f && a[k] < 0.5f);
        assert_true(c[k] >= -0.5f && c[k] < 0.5f);
        differ += a[k] != c[k];
    }
    assert_true(differ > 60);
    /* values from an independent Python implementation of the spec */
    assert_true(a[0] == 0.00956815481185913f);
    assert_true(a[1] == 0.47578346729278564f);
    assert_true(a[2] == 0.26697617769241333f);
    assert_true(a[3] == -0.15657609701156616f);
    embed_oov_vector("", 2, a);
    assert_true(a[0] == 0.26369452476501465f);
    assert_true(a[1] == -0.43730390071868896f);
    /* a prefix of the stream does not depend on d */
    embed_oov_vector("zyzzyva", 3, b);
    embed_oov_vector("zyzzyva", 64, c);
    assert_memory_equal(b, c, 3 * sizeof(float));
}

/* ---- the float parser against strtof ----------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_float_vs_strtof(void **state)
{
    (void)state;
    enum { ROWS = 4000, D = 25, TOK = 48 };
    size_t cap = (size_t)ROWS * (D * TOK + 16), n = 0;
    char *s = malloc(cap);
    float *want = malloc((size_t)ROWS * D * sizeof(float));
    assert_non_null(s);
    assert_non_null(want);
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < ROWS; i++) {
        n += (size_t)snprintf(s + n, cap - n, "w%d", i);
        for (int k = 0; k < D; k++) {
            char tok[TOK];
            double mant = (double)(rng_next(&r) >> 11) / 9007199254740992.0;
            int ex = (int)(rng_next(&r) % 61) - 30;
            double v = mant * pow(10.0, ex);
            if (rng_next(&r) & 1)
                v = -v;
            int prec = (int)(rng_next(&r) % 10);
            switch (rng_next(&r) % 7) {
            case 0: snprintf(tok, sizeof tok, "%.*g", prec + 1, v); break;
            case 1: snprintf(tok, sizeof tok, "%.*e", prec, v); break;
            case 2: snprintf(tok, sizeof tok, "%+.*E", prec, v); break;
            case 3: snprintf(tok, sizeof tok, "%.*f", prec, fmod(v, 1e6)); break;
            case 4: snprintf(tok, sizeof tok, "%.9g", v); break;
            case 5: snprintf(tok, sizeof tok, "%.17g", v); break;
            default: snprintf(tok, sizeof tok, "%.5f", mant * 2 - 1); break;
            }
            want[(size_t)i * D + (size_t)k] = strtof(tok, NULL);
            n += (size_t)snprintf(s + n, cap - n, " %s", tok);
        }
        s[n++] = '\n';
    }
    s[n] = '\0';

    EmbedTable *t = parse_ok(s, NULL);
    assert_int_equal(t->n, ROWS);
    long exact = 0, total = (long)ROWS * D;
    for (long i = 0; i < total; i++) {
        float got = t->vectors[i], w = want[i];
        if (got == w) {
            exact++;
            continue;
        }
        int32_t gi, wi;
        memcpy(&gi, &got, 4);
        memcpy(&wi, &w, 4);
        double rel = fabs((double)got - (double)w) / fabs((double)w);
        if (labs((long)gi - (long)wi) > 1 || rel >= 1e-6)
            print_error("value %ld: got %.9g want %.9g\n", i, got, w);
        assert_true(labs((long)gi - (long)wi) <= 1);
        assert_true(rel < 1e-6);
    }
    print_message("float parser: %ld of %ld values bit-identical to strtof\n",
                  exact, total);
    /* almost all are bit-identical; the rest are 1 ulp off */
    assert_true(exact >= total - total / 10000);
    embed_destroy(t);
    free(s);
    free(want);
}

static void test_float_special_forms(void **state)
{
    (void)state;
    static const char *tok[] = {
        "-0.12345", "1e-3", "3.5E+2", ".5", "5.", "-.5", "+1", "0", "-0",
        "0.0", "00012.50", "1e-40", "1.17549435e-38", "1.4e-45", "3.4028234e38",
        "123456789012345678901234567890",
        "0.000000000000000000000000000001234",
        "1234567890.12345678901234567890e-15", "7e+0", "1E5", "9.999999e37",
        "0.1000000000000000000000000000001"};
    enum { N = sizeof tok / sizeof *tok };
    char s[1024];
    size_t n = (size_t)snprintf(s, sizeof s, "w");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(s + n, sizeof s - n, " %s", tok[i]);
    EmbedTable *t = parse_ok(s, NULL);
    assert_int_equal(t->d, N);
    for (int i = 0; i < N; i++) {
        float w = strtof(tok[i], NULL), got = embed_vector(t, 0)[i];
        if (got != w)
            print_error("%s: got %.9g want %.9g\n", tok[i], got, w);
        assert_true(got == w);
        assert_int_equal(signbit(got) != 0, signbit(w) != 0);
    }
    embed_destroy(t);
}

/* ---- out of memory ---------------------------------------------------- */

static void test_nomem(void **state)
{
    (void)state;
#ifdef EMBED_TEST_NOMEM
    /* A long first row makes the size guess too small, so every array grows. */
    enum { N = 300 };
    char *s = malloc(N * 24 + 2048);
    assert_non_null(s);
    size_t n = 0;
    n += (size_t)snprintf(s + n, 64, "# dims: a b\n");
    memset(s + n, 'L', 900);
    n += 900;
    n += (size_t)snprintf(s + n, 64, " 1 2\n");
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(s + n, 64, "w%d %d 2\n", i % 250, i);
    int failures = 0, ok = 0;
    for (long k = 1; k < 1000 && !ok; k++) {
        EmbedTable *t = (EmbedTable *)1;
        AttnErr err = {0}, warn;
        inj_calls = 0;
        inj_fail_at = k;
        inj_live = 0;
        inj_armed = 1;
        int rc = embed_parse(&t, s, n, "t.txt", &err, &warn);
        if (rc == 0) {
            assert_non_null(t);
            assert_int_equal(t->n, 251);
            assert_int_equal(t->n_duplicates, N - 250);
            assert_int_equal(embed_find(t, "w249"), 250);
            embed_destroy(t);
            ok = inj_calls < k; /* nothing was failed: done */
        } else {
            assert_int_equal(rc, -ATTN_E_NOMEM);
            assert_int_equal(err.code, ATTN_E_NOMEM);
            assert_null(t);
            failures++;
        }
        inj_armed = 0;
        assert_int_equal(inj_live, 0); /* nothing leaked */
    }
    print_message("nomem: %d injected failures, all clean\n", failures);
    assert_true(ok);
    assert_true(failures >= 8);
    free(s);
#else
    skip();
#endif
}

/* ---- fuzz regressions -------------------------------------------------- */

static void test_fuzz_regressions(void **state)
{
    (void)state;
    /* inputs without a final newline that end inside a token */
    expect_err_n("a 1e", 4, ATTN_E_PARSE, 1, "\"1e\"");
    expect_err_n("a 1.5e-", 7, ATTN_E_PARSE, 1, "\"1.5e-\"");
    expect_err_n("a in", 4, ATTN_E_PARSE, 1, "\"in\"");
    expect_err_n("a -", 3, ATTN_E_PARSE, 1, "\"-\"");
    expect_err_n("# dims:", 7, ATTN_E_EMPTY, 1, NULL);
    expect_err_n("1 1", 3, ATTN_E_EMPTY, 1, NULL);
    EmbedTable *t = NULL;
    AttnErr err;
    assert_int_equal(embed_parse(&t, "a 7", 3, "t", &err, NULL), 0);
    assert_true(embed_vector(t, 0)[0] == 7.0f);
    embed_destroy(t);
}

static uint64_t test_fnv1a64(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

/* Fuzz find: the index compared a probe of n bytes with memcmp against a
 * shorter stored word at the very end of the words buffer (read overflow).
 * Force that collision: a long word landing in the slot of "a". */
static void test_fuzz_probe_past_short_word(void **state)
{
    (void)state;
    EmbedTable *t = parse_ok("a 1\n", NULL);
    size_t mask = t->n_slots - 1, want = test_fnv1a64("a") & mask;
    char probe[80];
    int found = 0;
    for (int i = 0; i < 100000 && !found; i++) {
        snprintf(probe, sizeof probe, "a-long-probe-word-that-collides-%d", i);
        found = (test_fnv1a64(probe) & mask) == want;
    }
    assert_true(found);
    assert_int_equal(embed_find(t, probe), -1);
    assert_int_equal(embed_find(t, "a"), 0);
    embed_destroy(t);

    /* the original fuzz input: must not crash, whatever it returns */
    AttnErr err;
    int rc = embed_load(&t, FIXTURES "fuzz_short_word_at_end.bin", &err, NULL);
    if (rc == 0)
        embed_destroy(t);
    else
        assert_true(err.line >= 1);
}

int main(void)
{
    const struct CMUnitTest formats[] = {
        cmocka_unit_test(test_glove_basic),
        cmocka_unit_test(test_word2vec_header),
        cmocka_unit_test(test_word2vec_header_lies),
        cmocka_unit_test(test_dims_line),
        cmocka_unit_test(test_crlf_bom_no_newline),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_load_real_asset),
        cmocka_unit_test(test_load_temp_file),
    };
    const struct CMUnitTest errors[] = {
        cmocka_unit_test(test_err_ragged),
        cmocka_unit_test(test_err_not_a_number),
        cmocka_unit_test(test_err_nonfinite),
        cmocka_unit_test(test_err_no_numbers),
        cmocka_unit_test(test_err_empty),
        cmocka_unit_test(test_err_dimension_range),
        cmocka_unit_test(test_err_word_length),
        cmocka_unit_test(test_err_too_large),
        cmocka_unit_test(test_err_io),
        cmocka_unit_test(test_nomem),
        cmocka_unit_test(test_fuzz_regressions),
        cmocka_unit_test(test_fuzz_probe_past_short_word),
    };
    const struct CMUnitTest lookup[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_lookup_many),
        cmocka_unit_test(test_oov),
    };
    const struct CMUnitTest floats[] = {
        cmocka_unit_test(test_float_vs_strtof),
        cmocka_unit_test(test_float_special_forms),
    };
    int fails = 0;
    fails += cmocka_run_group_tests_name("embed_formats", formats, NULL, NULL);
    fails += cmocka_run_group_tests_name("embed_errors", errors, NULL, NULL);
    fails += cmocka_run_group_tests_name("embed_lookup", lookup, NULL, NULL);
    fails += cmocka_run_group_tests_name("embed_floats", floats, NULL, NULL);
    return fails ? 1 : 0;
}
