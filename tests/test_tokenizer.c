/* Tests for the tokenizer (src/core/tokenizer.c): ASCII-only lower-casing,
 * punctuation tokens, apostrophes and hyphens inside words, UTF-8 kept whole,
 * invalid bytes replaced by U+FFFD and counted, NUL as space, the token cap,
 * the map back to the source bytes, CJK characters one token each, and
 * seeded random byte strings. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/tokenizer.h"

static TokenList *new_list(void)
{
    TokenList *tl = malloc(sizeof *tl);
    assert_non_null(tl);
    tok_init(tl);
    return tl;
}

static void free_list(TokenList *tl)
{
    tok_free(tl);
    free(tl);
}

/* Split s (strlen) and compare with the NULL-terminated expected tokens. */
static void expect_tokens_n(const char *s, size_t len, const char *const *want)
{
    TokenList *tl = new_list();
    assert_int_equal(tok_split(tl, s, len), 0);
    int n = 0;
    while (want[n])
        n++;
    if (tl->n != n) {
        print_error("\"%s\": %d tokens, want %d:", s, tl->n, n);
        for (int i = 0; i < tl->n; i++)
            print_error(" [%s]", tok_text(tl, i));
        print_error("\n");
    }
    assert_int_equal(tl->n, n);
    assert_int_equal(tl->n_total, n);
    for (int i = 0; i < n; i++)
        assert_string_equal(tok_text(tl, i), want[i]);
    free_list(tl);
}

#define EXPECT(s, ...)                                          \
    do {                                                        \
        static const char *const w_[] = {__VA_ARGS__, NULL};    \
        expect_tokens_n((s), strlen(s), w_);                    \
    } while (0)

/* ---- an independent UTF-8 check: the well-formed byte sequences of the
 * Unicode standard, table 3-7 ---------------------------------------------- */
static int in(unsigned char c, unsigned lo, unsigned hi)
{
    return c >= lo && c <= hi;
}

/* Length of the well-formed sequence at s, or 0. */
static int wf_len(const unsigned char *s, size_t n)
{
    if (n >= 1 && s[0] <= 0x7F)
        return 1;
    if (n >= 2 && in(s[0], 0xC2, 0xDF) && in(s[1], 0x80, 0xBF))
        return 2;
    if (n >= 3 && in(s[2], 0x80, 0xBF)) {
        if (s[0] == 0xE0 && in(s[1], 0xA0, 0xBF)) return 3;
        if (in(s[0], 0xE1, 0xEC) && in(s[1], 0x80, 0xBF)) return 3;
        if (s[0] == 0xED && in(s[1], 0x80, 0x9F)) return 3;
        if (in(s[0], 0xEE, 0xEF) && in(s[1], 0x80, 0xBF)) return 3;
    }
    if (n >= 4 && in(s[2], 0x80, 0xBF) && in(s[3], 0x80, 0xBF)) {
        if (s[0] == 0xF0 && in(s[1], 0x90, 0xBF)) return 4;
        if (in(s[0], 0xF1, 0xF3) && in(s[1], 0x80, 0xBF)) return 4;
        if (s[0] == 0xF4 && in(s[1], 0x80, 0x8F)) return 4;
    }
    return 0;
}

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        int l = wf_len(p + i, n - i);
        if (!l)
            return 0;
        i += (size_t)l;
    }
    return 1;
}

/* What a token's source bytes should become: ASCII upper → lower, a byte
 * that starts no well-formed sequence → EF BF BD. Returns the byte count and
 * the number of replaced bytes in *nrep. */
static size_t transform(const unsigned char *s, size_t n, char *out, int *nrep)
{
    size_t o = 0;
    *nrep = 0;
    for (size_t i = 0; i < n;) {
        int l = wf_len(s + i, n - i);
        if (!l) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            ++*nrep;
            i++;
        } else if (l == 1) {
            unsigned char c = s[i];
            out[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            i++;
        } else {
            memcpy(out + o, s + i, (size_t)l);
            o += (size_t)l;
            i += (size_t)l;
        }
    }
    out[o] = '\0';
    return o;
}

/* Invariants of any split of (s, len): valid UTF-8 tokens, ordered
 * non-overlapping source ranges whose transform is the token, gaps with no
 * visible ASCII and no invalid bytes, n_replaced = replaced bytes inside the
 * kept tokens when nothing was cut. */
static void check_invariants(const TokenList *tl, const unsigned char *s, size_t len)
{
    char *buf = malloc(len * 3 + 1);
    assert_non_null(buf);
    assert_true(tl->n >= 0 && tl->n <= ATTN_MAX_TOKENS);
    assert_true(tl->n_total >= tl->n);
    if (tl->n_total <= ATTN_MAX_TOKENS)
        assert_int_equal(tl->n, tl->n_total);
    else
        assert_int_equal(tl->n, ATTN_MAX_TOKENS);
    size_t prev_end = 0;
    int rep = 0;
    for (int i = 0; i < tl->n; i++) {
        const char *t = tok_text(tl, i);
        assert_true(strlen(t) > 0);
        if (!valid_utf8(t)) {
            print_error("token %d is not valid UTF-8\n", i);
            fail();
        }
        size_t a = tl->src_start[i], l = tl->src_len[i];
        assert_true(l > 0);
        assert_true(a >= prev_end);
        assert_true(a + l <= len);
        /* the gap before the token: white space only */
        for (size_t g = prev_end; g < a;) {
            int wl = wf_len(s + g, a - g);
            assert_true(wl > 0);
            if (wl == 1)
                assert_true(s[g] == 0 || s[g] == ' ' || (s[g] >= 9 && s[g] <= 13));
            g += (size_t)wl;
        }
        int r;
        transform(s + a, l, buf, &r);
        rep += r;
        if (strcmp(buf, t) != 0) {
            print_error("token %d [%s] does not match its source bytes [%s]\n", i, t, buf);
            fail();
        }
        /* an ASCII punctuation mark is a token of its own */
        if (strpbrk(t, ".,;:!?\"()[]{}"))
            assert_int_equal(strlen(t), 1);
        prev_end = a + l;
    }
    if (tl->n_total == tl->n) {
        /* the tail after the last token is white space too */
        for (size_t g = prev_end; g < len;) {
            int wl = wf_len(s + g, len - g);
            assert_true(wl > 0);
            if (wl == 1)
                assert_true(s[g] == 0 || s[g] == ' ' || (s[g] >= 9 && s[g] <= 13));
            g += (size_t)wl;
        }
        assert_int_equal(tl->n_replaced, rep);
    }
    free(buf);
}

/* The characters that are tokens of their own (written from BERT's
 * _is_chinese_char ranges plus kana and Hangul syllables), decoded here
 * without the tokenizer's decoder. */
static int cjk_ref(const unsigned char *s, int l)
{
    unsigned long cp;
    if (l == 3)
        cp = (s[0] & 0x0Ful) << 12 | (s[1] & 0x3Ful) << 6 | (s[2] & 0x3Ful);
    else if (l == 4)
        cp = (s[0] & 0x07ul) << 18 | (s[1] & 0x3Ful) << 12 | (s[2] & 0x3Ful) << 6 |
             (s[3] & 0x3Ful);
    else
        return 0;
    static const unsigned long r[][2] = {
        {0x4E00, 0x9FFF}, {0x3400, 0x4DBF}, {0x20000, 0x2A6DF}, {0x2A700, 0x2B73F},
        {0x2B740, 0x2B81F}, {0x2B820, 0x2CEAF}, {0xF900, 0xFAFF}, {0x2F800, 0x2FA1F},
        {0x3040, 0x309F}, {0x30A0, 0x30FF}, {0xFF66, 0xFF9F}, {0xAC00, 0xD7A3},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (cp >= r[i][0] && cp <= r[i][1])
            return 1;
    return 0;
}

/* Every CJK character in the text is a token of one character. */
static void check_cjk_alone(const TokenList *tl)
{
    for (int i = 0; i < tl->n; i++) {
        const unsigned char *t = (const unsigned char *)tok_text(tl, i);
        size_t n = strlen((const char *)t);
        for (size_t k = 0; k < n;) {
            int l = wf_len(t + k, n - k);
            assert_true(l > 0);
            if (cjk_ref(t + k, l) && (size_t)l != n) {
                print_error("token %d [%s] holds a CJK character and more\n", i, t);
                fail();
            }
            k += (size_t)l;
        }
    }
}

/* ---- tests ------------------------------------------------------------------ */

static void test_lowercase_ascii_only(void **state)
{
    (void)state;
    EXPECT("Hello WORLD MiXeD", "hello", "world", "mixed");
    /* É (C3 89) stays É; the ASCII letters after it are lowered */
    EXPECT("\xC3\x89" "COLE \xC3\x89t\xC3\xA9", "\xC3\x89" "cole", "\xC3\x89t\xC3\xA9");
    /* Greek capitals and the Kelvin sign K (E2 84 AA) are not ASCII */
    EXPECT("\xCE\x91\xCE\x92\xCE\x93 \xE2\x84\xAA", "\xCE\x91\xCE\x92\xCE\x93", "\xE2\x84\xAA");
    /* digits and other ASCII are kept as they are */
    EXPECT("ABC123 @Z_z~", "abc123", "@z_z~");
}

static void test_punctuation_split(void **state)
{
    (void)state;
    static const char *const punct[] = {
        ".", ",", ";", ":", "!", "?", "\"", "(", ")", "[", "]", "{", "}",
        "\xE2\x80\x9C" /* “ */, "\xE2\x80\x9D" /* ” */, "\xE2\x80\xA6" /* … */,
    };
    for (size_t i = 0; i < sizeof punct / sizeof punct[0]; i++) {
        char s[64];
        /* glued to words on both sides */
        snprintf(s, sizeof s, "Ab%scd", punct[i]);
        const char *const w1[] = {"ab", punct[i], "cd", NULL};
        expect_tokens_n(s, strlen(s), w1);
        /* doubled: two tokens */
        snprintf(s, sizeof s, "%s%s", punct[i], punct[i]);
        const char *const w2[] = {punct[i], punct[i], NULL};
        expect_tokens_n(s, strlen(s), w2);
        /* alone, with spaces around */
        snprintf(s, sizeof s, "  %s  ", punct[i]);
        const char *const w3[] = {punct[i], NULL};
        expect_tokens_n(s, strlen(s), w3);
    }
    EXPECT("\"Are you hungry?\" she asked.", "\"", "are", "you", "hungry", "?", "\"",
           "she", "asked", ".");
    EXPECT("f(x)=[1,2];{a:b}!", "f", "(", "x", ")", "=", "[", "1", ",", "2", "]", ";",
           "{", "a", ":", "b", "}", "!");
    EXPECT("\xE2\x80\x9CQuote\xE2\x80\x9D and so\xE2\x80\xA6", "\xE2\x80\x9C", "quote",
           "\xE2\x80\x9D", "and", "so", "\xE2\x80\xA6");
}

static void test_apostrophes_hyphens(void **state)
{
    (void)state;
    EXPECT("I didn't know", "i", "didn't", "know");
    EXPECT("a well-known fact", "a", "well-known", "fact");
    EXPECT("Rock'n'Roll, state-of-the-art.", "rock'n'roll", ",", "state-of-the-art", ".");
    EXPECT("it\xE2\x80\x99s", "it\xE2\x80\x99s"); /* ’ stays inside */
    EXPECT("'quoted' -dash-", "'quoted'", "-dash-");
}

static void test_multibyte_never_cut(void **state)
{
    (void)state;
    const char *s = "caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E "
                    "\xF0\x9F\x98\x80\xF0\x9F\x98\x81 \xD0\x9C\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0"
                    ", \xE2\x82\xAC" "5";
    /* 日本語: three ideographs, three tokens (test_cjk) */
    EXPECT(s, "caf\xC3\xA9", "na\xC3\xAFve", "\xE6\x97\xA5", "\xE6\x9C\xAC", "\xE8\xAA\x9E",
           "\xF0\x9F\x98\x80\xF0\x9F\x98\x81", "\xD0\x9C\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0",
           ",", "\xE2\x82\xAC" "5");
    TokenList *tl = new_list();
    assert_int_equal(tok_split(tl, s, strlen(s)), 0);
    for (int i = 0; i < tl->n; i++)
        assert_true(valid_utf8(tok_text(tl, i)));
    check_invariants(tl, (const unsigned char *)s, strlen(s));
    assert_int_equal(tl->n_replaced, 0);
    free_list(tl);
}

static void test_invalid_bytes_replaced(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        int n_replaced;
        const char *first; /* first token */
    } cases[] = {
        {"a\xFF" "b", 3, 1, "a\xEF\xBF\xBD" "b"},
        {"\x80", 1, 1, "\xEF\xBF\xBD"},                          /* lone continuation */
        {"x\xC3", 2, 1, "x\xEF\xBF\xBD"},                        /* truncated 2-byte */
        {"\xC0\xAF", 2, 2, "\xEF\xBF\xBD\xEF\xBF\xBD"},          /* overlong '/' */
        {"\xE0\x80\xAF", 3, 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* overlong */
        {"\xED\xA0\x80", 3, 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* surrogate */
        {"\xF4\x90\x80\x80", 4, 4,
         "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},    /* > U+10FFFF */
        {"\xF5" "A", 2, 1, "\xEF\xBF\xBD" "a"},
        {"\xE2\x82" "A", 3, 2, "\xEF\xBF\xBD\xEF\xBF\xBD" "a"},  /* cut € then A */
        {"ok \xFE", 4, 1, "ok"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TokenList *tl = new_list();
        assert_int_equal(tok_split(tl, cases[i].in, cases[i].len), 0);
        if (tl->n_replaced != cases[i].n_replaced)
            print_error("case %zu: n_replaced %d, want %d\n", i, tl->n_replaced,
                        cases[i].n_replaced);
        assert_int_equal(tl->n_replaced, cases[i].n_replaced);
        assert_true(tl->n >= 1);
        assert_string_equal(tok_text(tl, 0), cases[i].first);
        for (int k = 0; k < tl->n; k++)
            assert_true(valid_utf8(tok_text(tl, k)));
        check_invariants(tl, (const unsigned char *)cases[i].in, cases[i].len);
        free_list(tl);
    }
    /* the count restarts on every split */
    TokenList *tl = new_list();
    assert_int_equal(tok_split(tl, "\xFF\xFF", 2), 0);
    assert_int_equal(tl->n_replaced, 2);
    assert_int_equal(tok_split(tl, "fine", 4), 0);
    assert_int_equal(tl->n_replaced, 0);
    assert_int_equal(tl->n, 1);
    free_list(tl);
}

static void test_utf8_len(void **state)
{
    (void)state;
    const unsigned char a[] = "A", e2[] = "\xC3\xA9", e3[] = "\xE2\x82\xAC",
                        e4[] = "\xF0\x9F\x98\x80", sur[] = "\xED\xA0\x80",
                        over[] = "\xE0\x9F\xBF", max[] = "\xF4\x8F\xBF\xBF",
                        big[] = "\xF4\x90\x80\x80", c1[] = "\xC1\xBF";
    assert_int_equal(tok_utf8_len(a, 1), 1);
    assert_int_equal(tok_utf8_len(e2, 2), 2);
    assert_int_equal(tok_utf8_len(e2, 1), 0);
    assert_int_equal(tok_utf8_len(e3, 3), 3);
    assert_int_equal(tok_utf8_len(e3, 2), 0);
    assert_int_equal(tok_utf8_len(e4, 4), 4);
    assert_int_equal(tok_utf8_len(e4, 3), 0);
    assert_int_equal(tok_utf8_len(sur, 3), 0);
    assert_int_equal(tok_utf8_len(over, 3), 0);
    assert_int_equal(tok_utf8_len(max, 4), 4);
    assert_int_equal(tok_utf8_len(big, 4), 0);
    assert_int_equal(tok_utf8_len(c1, 2), 0);
    /* every 1..3 byte prefix agrees with the table of well-formed sequences */
    unsigned char b[4];
    for (unsigned x = 0; x < 256; x++)
        for (unsigned y = 0; y < 256; y++)
            for (size_t zi = 0; zi < 4; zi++) {
                static const unsigned char zs[4] = {0x7F, 0x80, 0xBF, 0xC0};
                unsigned z = zs[zi];
                b[0] = (unsigned char)x;
                b[1] = (unsigned char)y;
                b[2] = (unsigned char)z;
                b[3] = 0x80;
                for (size_t n = 1; n <= 4; n++) {
                    int want = wf_len(b, n), got = tok_utf8_len(b, n);
                    if (want != got) {
                        print_error("tok_utf8_len(%02X %02X %02X %02X, %zu) = %d, want %d\n",
                                    x, y, z, 0x80, n, got, want);
                        fail();
                    }
                }
            }
}

static void test_nul_is_space(void **state)
{
    (void)state;
    const char s[] = "ab\0cd\0\0Ef";
    const char *const want[] = {"ab", "cd", "ef", NULL};
    expect_tokens_n(s, sizeof s - 1, want);
    const char z[] = "\0\0\0";
    const char *const none[] = {NULL};
    expect_tokens_n(z, 3, none);
    /* the length decides, not a NUL: bytes after the length are not read */
    const char *const one[] = {"ab", NULL};
    expect_tokens_n("abcdef", 2, one);
}

static void test_empty_and_whitespace(void **state)
{
    (void)state;
    static const char *const blank[] = {
        "", " ", "     ", "\t\n\r\v\f", " \n \n ",
        "\xC2\xA0",      /* no-break space */
        "\xE3\x80\x80",  /* ideographic space */
        "\xE2\x80\x83 \xE2\x80\xA8",
    };
    for (size_t i = 0; i < sizeof blank / sizeof blank[0]; i++) {
        TokenList *tl = new_list();
        assert_int_equal(tok_split(tl, blank[i], strlen(blank[i])), 0);
        if (tl->n != 0)
            print_error("blank case %zu gave %d tokens\n", i, tl->n);
        assert_int_equal(tl->n, 0);
        assert_int_equal(tl->n_total, 0);
        assert_int_equal(tl->n_replaced, 0);
        free_list(tl);
    }
    /* a list that held tokens is emptied by an empty split */
    TokenList *tl = new_list();
    assert_int_equal(tok_split(tl, "a b c", 5), 0);
    assert_int_equal(tl->n, 3);
    assert_int_equal(tok_split(tl, "", 0), 0);
    assert_int_equal(tl->n, 0);
    assert_int_equal(tl->n_total, 0);
    free_list(tl);
    /* a fresh list, never split, has nothing */
    tl = new_list();
    assert_int_equal(tl->n, 0);
    free_list(tl);
}

static void test_token_cap(void **state)
{
    (void)state;
    /* 5000 words: w0 w1 ... w4999 */
    size_t cap = 5000 * 7 + 1, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    for (int i = 0; i < 5000; i++)
        len += (size_t)snprintf(s + len, cap - len, "%sW%d", i ? " " : "", i);
    TokenList *tl = new_list();
    assert_int_equal(tok_split(tl, s, len), 0);
    assert_int_equal(tl->n, ATTN_MAX_TOKENS);
    assert_int_equal(tl->n_total, 5000);
    for (int i = 0; i < tl->n; i++) {
        char want[16];
        snprintf(want, sizeof want, "w%d", i);
        assert_string_equal(tok_text(tl, i), want);
    }
    check_invariants(tl, (const unsigned char *)s, len);
    /* punctuation counts too: 2500 × "a." is 5000 tokens */
    len = 0;
    for (int i = 0; i < 2500; i++)
        len += (size_t)snprintf(s + len, cap - len, "a.");
    assert_int_equal(tok_split(tl, s, len), 0);
    assert_int_equal(tl->n, ATTN_MAX_TOKENS);
    assert_int_equal(tl->n_total, 5000);
    assert_string_equal(tok_text(tl, 1022), "a");
    assert_string_equal(tok_text(tl, 1023), ".");
    assert_int_equal(tl->src_start[1023], 1023);
    assert_int_equal(tl->src_start[1022], 1022);
    /* exactly 1024 is not cut; 1025 is */
    len = 0;
    for (int i = 0; i < 1024; i++)
        len += (size_t)snprintf(s + len, cap - len, "x ");
    assert_int_equal(tok_split(tl, s, len), 0);
    assert_int_equal(tl->n, 1024);
    assert_int_equal(tl->n_total, 1024);
    len += (size_t)snprintf(s + len, cap - len, "Y");
    assert_int_equal(tok_split(tl, s, len), 0);
    assert_int_equal(tl->n, 1024);
    assert_int_equal(tl->n_total, 1025);
    /* back to a short text: the list is reusable */
    assert_int_equal(tok_split(tl, "one two", 7), 0);
    assert_int_equal(tl->n, 2);
    assert_int_equal(tl->n_total, 2);
    assert_string_equal(tok_text(tl, 1), "two");
    free_list(tl);
    free(s);
}

static void test_source_map(void **state)
{
    (void)state;
    const char *s = "  Hello, w\xC3\xB6rld!\t(x)\xE2\x80\xA6" "a\xFF" "b";
    /* byte offsets:   0 1 H=2..6 ,=7 8 w=9..14 (ö is 2 bytes) !=15 \t=16
     *                 (=17 x=18 )=19 …=20..22 a=23 FF=24 b=25 */
    static const struct { const char *text; size_t start, len; } want[] = {
        {"hello", 2, 5}, {",", 7, 1}, {"w\xC3\xB6rld", 9, 6}, {"!", 15, 1},
        {"(", 17, 1}, {"x", 18, 1}, {")", 19, 1}, {"\xE2\x80\xA6", 20, 3},
        {"a\xEF\xBF\xBD" "b", 23, 3},
    };
    TokenList *tl = new_list();
    size_t len = strlen(s);
    assert_int_equal(len, 26);
    assert_int_equal(tok_split(tl, s, len), 0);
    assert_int_equal(tl->n, 9);
    for (int i = 0; i < 9; i++) {
        assert_string_equal(tok_text(tl, i), want[i].text);
        assert_int_equal(tl->src_start[i], want[i].start);
        assert_int_equal(tl->src_len[i], want[i].len);
    }
    assert_int_equal(tl->n_replaced, 1);
    check_invariants(tl, (const unsigned char *)s, len);
    free_list(tl);
}

/* Random byte strings from a seeded generator: never crash, tokens are valid
 * UTF-8 and map back to their bytes. The bytes are drawn from a mix that
 * makes spaces, punctuation, ASCII letters, lead and continuation bytes and
 * whole multi-byte characters likely. */
static uint64_t rs;
static uint64_t rnext(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static void test_random_bytes(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        " ", ".", ",", "\"", "(", "A", "z", "-", "'", "\0", "\t", "\xC3\xA9",
        "\xE2\x80\x9C", "\xE2\x80\xA6", "\xF0\x9F\x98\x80", "\xC2\xA0", "\xE3\x80\x80",
        "\xC3", "\xE2\x82", "\xF0\x9F", "\x80", "\xBF", "\xFF", "\xED\xA0\x80",
        "\xE6\x88\x91" /* 我 */, "\xF0\xA0\x80\x80" /* U+20000 */, "\xE3\x81\x82" /* あ */,
        "\xEA\xB0\x80" /* 가 */, "\xE4\xB8\x80" /* U+4E00 */, "\xE9\xBF\xBF" /* U+9FFF */,
        "\xE3\x80\x8C" /* 「 */, "\xEF\xBC\x8C" /* ， */, "\xE4\xB8" /* 我 cut short */,
    };
    static const size_t plen[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 3, 4, 2, 3,
                                  1, 2, 2, 1, 1, 1, 3, 3, 4, 3, 3, 3, 3, 3, 3, 2};
    rs = 0x2545F4914F6CDD1DULL;
    TokenList *tl = new_list();
    unsigned char *buf = malloc(4096);
    assert_non_null(buf);
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = 0, want = rnext() % 600;
        int mode = (int)(rnext() % 3);
        while (len < want) {
            if (mode == 0) {
                buf[len++] = (unsigned char)rnext(); /* any byte */
            } else {
                size_t k = rnext() % (sizeof plen / sizeof plen[0]);
                memcpy(buf + len, pieces[k], plen[k]);
                len += plen[k];
            }
        }
        /* exact-size copy so a read past len is caught under ASan */
        unsigned char *exact = malloc(len ? len : 1);
        assert_non_null(exact);
        memcpy(exact, buf, len);
        assert_int_equal(tok_split(tl, (const char *)exact, len), 0);
        check_invariants(tl, exact, len);
        check_cjk_alone(tl);
        free(exact);
    }
    free(buf);
    free_list(tl);
}

/* CJK text: one token per character, Latin words kept whole, the source
 * byte ranges right (the sentence bar draws from them). */
static void test_cjk(void **state)
{
    (void)state;
    /* 我很高兴 */
    EXPECT("\xE6\x88\x91\xE5\xBE\x88\xE9\xAB\x98\xE5\x85\xB4", "\xE6\x88\x91",
           "\xE5\xBE\x88", "\xE9\xAB\x98", "\xE5\x85\xB4");
    /* I am 高兴 */
    EXPECT("I am \xE9\xAB\x98\xE5\x85\xB4", "i", "am", "\xE9\xAB\x98", "\xE5\x85\xB4");
    /* glued to Latin on both sides; a word continues after the ideograph */
    EXPECT("abc\xE9\xAB\x98" "Def", "abc", "\xE9\xAB\x98", "def");
    /* CJK punctuation: 我，你。「好」！ */
    EXPECT("\xE6\x88\x91\xEF\xBC\x8C\xE4\xBD\xA0\xE3\x80\x82\xE3\x80\x8C\xE5\xA5\xBD"
           "\xE3\x80\x8D\xEF\xBC\x81",
           "\xE6\x88\x91", "\xEF\xBC\x8C", "\xE4\xBD\xA0", "\xE3\x80\x82", "\xE3\x80\x8C",
           "\xE5\xA5\xBD", "\xE3\x80\x8D", "\xEF\xBC\x81");
    /* kana and Hangul: こんにちは → five, 한국 → two */
    EXPECT("\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF",
           "\xE3\x81\x93", "\xE3\x82\x93", "\xE3\x81\xAB", "\xE3\x81\xA1", "\xE3\x81\xAF");
    EXPECT("\xED\x95\x9C\xEA\xB5\xAD", "\xED\x95\x9C", "\xEA\xB5\xAD");
    /* the range ends: U+4E00, U+9FFF, U+20000, U+2FA1F each alone; U+A000
     * (Yi, outside) and U+2FA20 stay in their word */
    EXPECT("\xE4\xB8\x80\xE9\xBF\xBF\xF0\xA0\x80\x80\xF0\xAF\xA8\x9F",
           "\xE4\xB8\x80", "\xE9\xBF\xBF", "\xF0\xA0\x80\x80", "\xF0\xAF\xA8\x9F");
    EXPECT("x\xEA\x80\x80\xF0\xAF\xA8\xA0y", "x\xEA\x80\x80\xF0\xAF\xA8\xA0y");

    /* byte ranges of "I am 高兴!": I=0 am=2..3 高=5..7 兴=8..10 !=11 */
    const char *s = "I am \xE9\xAB\x98\xE5\x85\xB4!";
    static const size_t start[] = {0, 2, 5, 8, 11}, len[] = {1, 2, 3, 3, 1};
    TokenList *tl = new_list();
    assert_int_equal(tok_split(tl, s, strlen(s)), 0);
    assert_int_equal(tl->n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tl->src_start[i], start[i]);
        assert_int_equal(tl->src_len[i], len[i]);
    }
    assert_true(tok_is_punct(tl, 4));
    assert_false(tok_is_punct(tl, 2));
    check_invariants(tl, (const unsigned char *)s, strlen(s));
    check_cjk_alone(tl);
    free_list(tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lowercase_ascii_only),
        cmocka_unit_test(test_punctuation_split),
        cmocka_unit_test(test_apostrophes_hyphens),
        cmocka_unit_test(test_multibyte_never_cut),
        cmocka_unit_test(test_invalid_bytes_replaced),
        cmocka_unit_test(test_utf8_len),
        cmocka_unit_test(test_nul_is_space),
        cmocka_unit_test(test_empty_and_whitespace),
        cmocka_unit_test(test_token_cap),
        cmocka_unit_test(test_source_map),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_cjk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
