/* Tests for GPT-2's byte-level BPE in memory (src/core/bpe.c, bpe_split.c):
 * the byte↔unicode table, U+FFFD for invalid UTF-8 (maximal subparts), the
 * pattern's pieces worked by hand and against PCRE2 running the pattern,
 * merges by rank (leftmost among equals), added tokens (leftmost-longest,
 * lstrip, rstrip, single_word, the normalized pass), the options, display
 * texts, the round trip through bpe_decode and the builders' errors.
 * The ids of a whole vocabulary against Hugging Face's are test_bpe_files.c's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/bpe.h"
#include "fuzz/harness_bpe.h"
#include "test_rand.h"

static uint32_t rand_u32(void)
{
    return (uint32_t)(rng_next() >> 32);
}

/* ---- helpers ---------------------------------------------------------------- */

/* A tokenizer of every byte (ids 0..255 in byte order) and the merges given
 * as "left right" strings of byte-level characters (their joins get the
 * next ids). */
static Bpe *make_bpe(const BpeOptions *o, const char *const *merges, int n)
{
    Bpe *b = bpe_create(o);
    assert_non_null(b);
    int next = 256;
    for (int i = 0; i < 256; i++) {
        char c[2];
        int len = bpe_byte_char((unsigned char)i, c);
        assert_int_equal(bpe_add_token(b, c, (size_t)len, i, NULL), 0);
    }
    for (int i = 0; i < n; i++) {
        char join[64];
        const char *sp = strchr(merges[i], ' ');
        size_t l = (size_t)(sp - merges[i]);
        snprintf(join, sizeof join, "%.*s%s", (int)l, merges[i], sp + 1);
        if (bpe_token_id(b, join, strlen(join)) < 0)
            assert_int_equal(bpe_add_token(b, join, strlen(join), next++, NULL), 0);
    }
    for (int i = 0; i < n; i++) {
        const char *sp = strchr(merges[i], ' ');
        assert_int_equal(bpe_add_merge(b, merges[i], (size_t)(sp - merges[i]), sp + 1,
                                       strlen(sp + 1), NULL), 0);
    }
    return b;
}

/* The tokens of text as their byte-level texts joined by '|'. */
static char *pieces_of(const Bpe *b, const char *text, size_t len)
{
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, text, len, &ids), 0);
    char *out = calloc(1, 4096);
    assert_non_null(out);
    for (int i = 0; i < ids.n; i++) {
        size_t n;
        const char *s = bpe_token_bytes(b, ids.id[i], &n);
        assert_non_null(s);
        strcat(out, i ? "|" : "");
        strncat(out, s, n);
    }
    bpe_ids_free(&ids);
    return out;
}

static void expect_pieces(const Bpe *b, const char *text, const char *want)
{
    char *got = pieces_of(b, text, strlen(text));
    if (strcmp(got, want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", text, got, want);
    free(got);
}

/* The pattern's pieces of text joined by '|'. */
static void expect_split(const char *text, const char *want)
{
    char got[512] = "";
    size_t len = strlen(text);
    for (size_t pos = 0; pos < len;) {
        size_t end = bpe_split_next(text, len, pos);
        assert_true(end > pos && end <= len);
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%.*s", pos ? "|" : "",
                 (int)(end - pos), text + pos);
        pos = end;
    }
    if (strcmp(got, want) != 0)
        fail_msg("split \"%s\": got \"%s\", want \"%s\"", text, got, want);
    assert_null(fuzz_bpe_split_check(text, len));
}

/* ---- the table and UTF-8 ------------------------------------------------------- */

static void byte_table(void **state)
{
    (void)state;
    int seen[400] = {0};
    for (int i = 0; i < 256; i++) {
        char c[2];
        int n = bpe_byte_char((unsigned char)i, c);
        unsigned cp;
        assert_int_equal(tok_utf8_decode((const unsigned char *)c, (size_t)n, &cp), n);
        assert_true(cp < 400 && !seen[cp]);
        seen[cp] = 1;
        assert_int_equal(bpe_char_byte(cp), i);
    }
    char c[2];
    assert_int_equal(bpe_byte_char(' ', c), 2);
    assert_memory_equal(c, "\xC4\xA0", 2); /* Ġ */
    assert_int_equal(bpe_byte_char('\n', c), 2);
    assert_memory_equal(c, "\xC4\x8A", 2); /* Ċ */
    assert_int_equal(bpe_byte_char(0xAD, c), 2);
    assert_memory_equal(c, "\xC5\x83", 2); /* Ń */
    assert_int_equal(bpe_byte_char('A', c), 1);
    assert_int_equal(c[0], 'A');
    assert_int_equal(bpe_char_byte(0x144), -1);
    assert_int_equal(bpe_char_byte(0xAD), -1);
}

static void expect_clean_n(const char *in, size_t n, const char *want, size_t want_len)
{
    char out[64];
    size_t got = bpe_utf8_clean(out, in, n);
    assert_int_equal(got, want_len);
    assert_memory_equal(out, want, got);
}

static void expect_clean(const char *in, size_t n, const char *want)
{
    expect_clean_n(in, n, want, strlen(want));
}

#define FFFD "\xEF\xBF\xBD"

static void utf8_clean(void **state)
{
    (void)state;
    expect_clean("ok \xC3\xA9", 5, "ok \xC3\xA9");
    expect_clean("a\xFF" "b", 3, "a" FFFD "b");
    expect_clean("\xF0\x9F\x98 x", 5, FFFD " x");      /* one maximal subpart */
    expect_clean("\xE6\x97", 2, FFFD);                 /* truncated at the end */
    expect_clean("\xC0\xAF", 2, FFFD FFFD);            /* overlong: two */
    expect_clean("\xED\xA0\x80", 3, FFFD FFFD FFFD);   /* a surrogate: three */
    expect_clean("\xF4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD);
    expect_clean("\x80\x80", 2, FFFD FFFD);
    expect_clean_n("\0\x01", 2, "\0\x01", 2);
}

/* ---- the pattern ------------------------------------------------------------------ */

static void split_by_hand(void **state)
{
    (void)state;
    expect_split("don't stop", "don|'t| stop");
    expect_split("I'm we'll they're I've she'd", "I|'m| we|'ll| they|'re| I|'ve| she|'d");
    expect_split("IT'S 'S", "IT|'|S| '|S");
    expect_split("'''s", "'''|s");
    expect_split("a  b", "a| | b");
    expect_split("a   b", "a|  | b");
    expect_split("   lead", "  | lead");
    expect_split("trail   ", "trail|   ");
    expect_split("\t\tfoo", "\t|\t|foo");
    expect_split("a\r\n\r\nb", "a|\r\n\r|\n|b");
    expect_split("a \n b", "a| \n| b");
    expect_split("x\n", "x|\n");
    expect_split("123 4567 x1", "123| 4567| x|1");
    expect_split("hi!!! ?", "hi|!!!| ?");
    expect_split("\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C", "\xE4\xBD\xA0\xE5\xA5\xBD|\xEF\xBC\x8C");
    expect_split("a\xC2\x85" "b", "a|\xC2\x85|b");                  /* NEL is white space */
    expect_split("a\x1C\x1C" "b", "a|\x1C\x1C|b");                  /* U+001C is not */
    expect_split("a\xC2\xA0" "b", "a|\xC2\xA0|b");                  /* NBSP */
    expect_split(" \xF0\x9F\x98\x80!", " \xF0\x9F\x98\x80!");
    /* Unicode 15 letters (utf8proc knows them; Debian 12's PCRE2 does not) */
    assert_int_equal(bpe_split_next("a\xF0\xB1\x8D\x90" "b", 6, 0), 6);
}

/* Random texts from a pool of tricky characters: the hand-written split
 * against PCRE2's. */
static void split_against_pcre2(void **state)
{
    (void)state;
    static const char *const pool[] = {
        "a", "Z", "e\xCC\x81", "1", "\xD9\xA3", "\xC2\xBD", " ", "  ", "\t", "\n", "\r\n",
        "\xC2\xA0", "\xE3\x80\x80", "\xC2\x85", "\x1C", "\x0B", "'", "'s", "'t", "'re", "'ll",
        "'d", "'m", "'ve", "!", "?", ".", "\xE4\xBD\xA0", "\xED\x95\x9C", "\xF0\x9F\x98\x80",
        "\xE2\x80\x8D", "_", "<|endoftext|>", "\xC3\xA9", "\xD0\xB4", "\0",
    };
    rng_seed(7);
    for (int t = 0; t < 3000; t++) {
        char text[512];
        size_t len = 0;
        int n = 1 + (int)(rand_u32() % 30);
        for (int i = 0; i < n; i++) {
            const char *p = pool[rand_u32() % (sizeof pool / sizeof pool[0])];
            size_t pl = p[0] ? strlen(p) : 1;
            memcpy(text + len, p, pl);
            len += pl;
        }
        const char *bad = fuzz_bpe_split_check(text, len);
        if (bad)
            fail_msg("text %d: %s", t, bad);
    }
}

/* ---- merges ---------------------------------------------------------------------------- */

static void merges_by_rank(void **state)
{
    (void)state;
    static const char *const bc_first[] = {"b c", "a b", "a bc", "ab c"};
    static const char *const ab_first[] = {"a b", "b c", "a bc", "ab c"};
    Bpe *b = make_bpe(NULL, bc_first, 4);
    expect_pieces(b, "abc", "abc");
    expect_pieces(b, "abcbc", "abc|bc");
    bpe_destroy(b);
    static const char *const no_join[] = {"a b", "b c"};
    b = make_bpe(NULL, no_join, 2);
    expect_pieces(b, "abc", "ab|c");
    bpe_destroy(b);
    static const char *const bc_only[] = {"b c", "a b"};
    b = make_bpe(NULL, bc_only, 2);
    expect_pieces(b, "abc", "a|bc");
    bpe_destroy(b);
    b = make_bpe(NULL, ab_first, 4);
    expect_pieces(b, "abc", "abc");
    bpe_destroy(b);
    /* equal ranks: leftmost first; merged pairs merge again */
    static const char *const aa[] = {"a a", "aa aa"};
    b = make_bpe(NULL, aa, 2);
    expect_pieces(b, "aaa", "aa|a");
    expect_pieces(b, "aaaaa", "aaaa|a");
    expect_pieces(b, "aaaaaaaa", "aaaa|aaaa");
    bpe_destroy(b);
    /* a pair merged twice keeps the later rank: "b c" now after "a b" */
    static const char *const twice[] = {"b c", "a b", "b c"};
    b = make_bpe(NULL, twice, 3);
    assert_int_equal(bpe_n_merges(b), 3);
    expect_pieces(b, "abc", "ab|c");
    bpe_destroy(b);
    /* pieces never merge across the pattern's boundaries */
    static const char *const space[] = {"Ġ t", "Ġt he", "h e", "e Ġ"};
    b = make_bpe(NULL, space, 4);
    expect_pieces(b, "the the", "t|he| the");
    bpe_destroy(b);
}

/* A long piece (64 KiB of one letter) merges in n log n, not n². */
static void long_piece(void **state)
{
    (void)state;
    static const char *const aa[] = {"a a", "aa aa", "aaaa aaaa"};
    Bpe *b = make_bpe(NULL, aa, 3);
    size_t n = 1 << 16;
    char *text = malloc(n + 1);
    assert_non_null(text);
    memset(text, 'a', n);
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, text, n, &ids), 0);
    assert_int_equal(ids.n, (int)(n / 8));
    int aaaa = bpe_token_id(b, "aaaaaaaa", 8);
    for (int i = 0; i < ids.n; i++)
        assert_int_equal(ids.id[i], aaaa);
    bpe_ids_free(&ids);
    free(text);
    bpe_destroy(b);
}

/* ---- added tokens and options --------------------------------------------------------- */

static void added_tokens(void **state)
{
    (void)state;
    static const char *const m[] = {"Ġ b"};
    Bpe *b = make_bpe(NULL, m, 1);
    assert_int_equal(bpe_add_special(b, "<s>", 3, 300, BPE_ADDED_SPECIAL, NULL), 0);
    assert_int_equal(bpe_add_special(b, "<s><t>", 6, 301, 0, NULL), 0);
    assert_int_equal(bpe_add_special(b, "<m>", 3, 302, BPE_ADDED_LSTRIP | BPE_ADDED_RSTRIP, NULL), 0);
    assert_int_equal(bpe_add_special(b, "<w>", 3, 303, BPE_ADDED_SINGLE_WORD, NULL), 0);
    assert_int_equal(bpe_add_special(b, "<", 1, 304, BPE_ADDED_NORMALIZED, NULL), 0);
    assert_int_equal(bpe_n_vocab(b), 305);
    expect_pieces(b, "a<s>b", "a|<s>|b");
    expect_pieces(b, "<s><t><s>", "<s><t>|<s>"); /* longest at the leftmost place */
    expect_pieces(b, "a \t<m>  b", "a|<m>|b");  /* white space taken on both sides */
    expect_pieces(b, "x<w> <w>", "x|<|w|>| |<w>"); /* not after a word character */
    expect_pieces(b, "<w>_", "<|w|>|_");
    expect_pieces(b, "(<w>)", "(|<w>|)");
    expect_pieces(b, "<x <s", "<|x| |<|s");   /* "<" in the second pass */
    assert_true(bpe_is_special(b, 300));
    assert_false(bpe_is_special(b, 301));
    assert_false(bpe_is_special(b, 'a'));
    assert_int_equal(bpe_token_id(b, "<s><t>", 6), 301);
    assert_int_equal(bpe_token_id(b, "\xC4\xA0" "b", 3), 256);
    assert_int_equal(bpe_token_id(b, "nope", 4), -1);
    /* ids between the vocabulary and the added tokens are no token */
    size_t len;
    assert_null(bpe_token_bytes(b, 280, &len));
    assert_int_equal(len, 0);
    char buf[8];
    assert_int_equal(bpe_token_text(b, 280, NULL, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    bpe_destroy(b);
}

static void options(void **state)
{
    (void)state;
    static const char *const m[] = {"Ġ a", "Ġa b", "a b"};
    BpeOptions o = {.add_prefix_space = 1};
    Bpe *b = make_bpe(&o, m, 3);
    assert_int_equal(bpe_add_special(b, "<s>", 3, 300, BPE_ADDED_SPECIAL, NULL), 0);
    expect_pieces(b, "ab", " ab");
    expect_pieces(b, " ab", " ab");
    expect_pieces(b, "ab<s>ab", " ab|<s>| ab");
    expect_pieces(b, "", "");
    o = (BpeOptions){.no_regex = 1};
    bpe_set_options(b, &o);
    expect_pieces(b, "ab ab", "ab| ab"); /* one piece: "b Ġ" has no merge */
    expect_pieces(b, "x's", "x|'|s");
    /* ignore_merges: a piece that is a token is that token */
    static const char *const m2[] = {"a b", "ab c", "b c"};
    o = (BpeOptions){.ignore_merges = 1};
    Bpe *c = make_bpe(&o, m2, 3);
    assert_int_equal(bpe_add_token(c, "bcd", 3, 400, NULL), 0);
    expect_pieces(c, "bcd", "bcd");
    o.ignore_merges = 0;
    bpe_set_options(c, &o);
    expect_pieces(c, "bcd", "bc|d");
    bpe_destroy(c);
    bpe_destroy(b);
}

/* Bytes without a token: dropped, or unk (consecutive ones fused). */
static void unknown_bytes(void **state)
{
    (void)state;
    Bpe *b = bpe_create(NULL);
    assert_non_null(b);
    assert_int_equal(bpe_add_token(b, "a", 1, 0, NULL), 0);
    assert_int_equal(bpe_add_token(b, "<unk>", 5, 1, NULL), 0);
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, "axxa", 4, &ids), 0);
    assert_int_equal(ids.n, 2);
    BpeOptions o = {.has_unk = 1, .unk_id = 1};
    bpe_set_options(b, &o);
    ids.n = 0;
    assert_int_equal(bpe_encode(b, "axxa", 4, &ids), 0);
    assert_int_equal(ids.n, 4);
    assert_int_equal(ids.id[1], 1);
    o.fuse_unk = 1;
    bpe_set_options(b, &o);
    ids.n = 0;
    assert_int_equal(bpe_encode(b, "axxa", 4, &ids), 0);
    assert_int_equal(ids.n, 3);
    assert_int_equal(ids.id[1], 1);
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

/* ---- display and decode ------------------------------------------------------------------ */

static void display_text(void **state)
{
    (void)state;
    static const char *const m[] = {"ð Ł", "Ġ ðŁ", "ĺ Ģ", "ðŁ ĺ", "Ã ©", "Ġ c", "Ġc af", "a f",
                                    "Ġcaf Ã©"};
    Bpe *b = make_bpe(NULL, m, 9);
    char out[64];
    int id = bpe_token_id(b, "\xC3\xB0\xC5\x81", 4); /* ðŁ: F0 9F */
    assert_true(id >= 0);
    assert_int_equal(bpe_token_text(b, id, NULL, out, sizeof out), 20);
    assert_string_equal(out, "\xE2\x80\xB9" "0xF0" "\xE2\x80\xBA" "\xE2\x80\xB9" "0x9F" "\xE2\x80\xBA");
    id = bpe_token_id(b, "\xC4\xA0" "caf\xC3\x83\xC2\xA9", 9); /* " café" */
    assert_true(id >= 0);
    assert_int_equal(bpe_token_text(b, id, NULL, out, sizeof out), 6);
    assert_string_equal(out, " caf\xC3\xA9");
    assert_int_equal(bpe_token_text(b, id, "\xE2\x90\xA3", out, sizeof out), 8);
    assert_string_equal(out, "\xE2\x90\xA3" "caf\xC3\xA9");
    /* cut to the room given, the length still the whole text's */
    assert_int_equal(bpe_token_text(b, id, NULL, out, 4), 6);
    assert_string_equal(out, " ca");
    assert_int_equal(bpe_token_text(b, 0, NULL, out, sizeof out), 10); /* NUL */
    assert_string_equal(out, "\xE2\x80\xB9" "0x00" "\xE2\x80\xBA");
    assert_int_equal(bpe_token_text(b, '\n', NULL, out, sizeof out), 1);
    assert_string_equal(out, "\n");
    /* the emoji split in two tokens: each shows its own bytes */
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, " \xF0\x9F\x98\x80", 5, &ids), 0);
    assert_int_equal(ids.n, 2);
    bpe_token_text(b, ids.id[0], NULL, out, sizeof out);
    assert_string_equal(out, " \xE2\x80\xB9" "0xF0" "\xE2\x80\xBA" "\xE2\x80\xB9" "0x9F" "\xE2\x80\xBA");
    bpe_token_text(b, ids.id[1], NULL, out, sizeof out);
    assert_string_equal(out, "\xE2\x80\xB9" "0x98" "\xE2\x80\xBA" "\xE2\x80\xB9" "0x80" "\xE2\x80\xBA");
    char *text;
    size_t len;
    assert_int_equal(bpe_decode(b, ids.id, ids.n, 0, &text, &len), 0);
    assert_int_equal(len, 5);
    assert_string_equal(text, " \xF0\x9F\x98\x80");
    free(text);
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

static void decode_round_trip(void **state)
{
    (void)state;
    Bpe *b = fuzz_bpe_tiny(0);
    assert_non_null(b);
    rng_seed(11);
    for (int t = 0; t < 500; t++) {
        uint8_t text[64];
        size_t n = rand_u32() % sizeof text;
        for (size_t i = 0; i < n; i++)
            text[i] = t % 2 ? (uint8_t)rand_u32()
                            : (uint8_t)"the \xE4\xBD\xA0\xF0\x9F's1\n\xFF<|"[rand_u32() % 16];
        const char *bad = fuzz_check_bpe(text, n);
        if (bad)
            fail_msg("text %d: %s", t, bad);
    }
    int eot = bpe_token_id(b, "<|endoftext|>", 13);
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, "a<|endoftext|>b", 15, &ids), 0);
    assert_int_equal(ids.n, 3);
    assert_int_equal(ids.id[1], eot);
    char *text;
    size_t len;
    assert_int_equal(bpe_decode(b, ids.id, ids.n, 1, &text, &len), 0);
    assert_string_equal(text, "ab");
    free(text);
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

/* ---- building errors -------------------------------------------------------------------------- */

static void build_errors(void **state)
{
    (void)state;
    AttnErr err = {0};
    Bpe *b = bpe_create(NULL);
    assert_non_null(b);
    assert_int_equal(bpe_add_token(b, "a", 1, 5, &err), 0);
    assert_int_equal(bpe_add_token(b, "b", 1, 6, &err), 0);
    assert_int_equal(bpe_add_token(b, "a", 1, 7, &err), -ATTN_E_DUPLICATE);
    assert_non_null(strstr(err.msg, "\"a\" appears twice"));
    assert_int_equal(bpe_add_token(b, "c", 1, 5, &err), -ATTN_E_DUPLICATE);
    assert_non_null(strstr(err.msg, "id 5"));
    assert_int_equal(bpe_add_token(b, "c", 1, -1, &err), -ATTN_E_RANGE);
    assert_int_equal(bpe_add_token(b, "c", 1, BPE_MAX_VOCAB, &err), -ATTN_E_RANGE);
    static char big[BPE_MAX_TOKEN_BYTES + 1];
    memset(big, 'x', sizeof big);
    assert_int_equal(bpe_add_token(b, big, sizeof big, 9, &err), -ATTN_E_TOO_LARGE);
    assert_int_equal(bpe_add_merge(b, "a", 1, "c", 1, &err), -ATTN_E_RANGE);
    assert_string_equal(err.msg, "merge \"a c\": \"c\" is not in the vocabulary");
    assert_int_equal(bpe_add_merge(b, "a", 1, "b", 1, &err), -ATTN_E_RANGE);
    assert_string_equal(err.msg, "merge \"a b\": their join \"ab\" is not in the vocabulary");
    assert_int_equal(bpe_add_token(b, "ab", 2, 0, &err), 0);
    assert_int_equal(bpe_add_merge(b, "a", 1, "b", 1, &err), 0);
    assert_int_equal(bpe_add_special(b, "", 0, 9, 0, &err), -ATTN_E_PARSE);
    assert_int_equal(bpe_add_special(b, "\xFF", 1, 9, 0, &err), -ATTN_E_PARSE);
    assert_int_equal(bpe_add_special(b, "<s>", 3, -2, 0, &err), -ATTN_E_RANGE);
    assert_int_equal(bpe_add_special(b, "<s>", 3, 9, 0, &err), 0);
    assert_int_equal(bpe_add_special(b, "<t>", 3, 9, 0, &err), -ATTN_E_DUPLICATE);
    assert_int_equal(bpe_n_vocab(b), 10);
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, "ab<s>", 5, &ids), 0);
    assert_int_equal(ids.n, 2);
    assert_int_equal(ids.id[0], 0);
    assert_int_equal(ids.id[1], 9);
    bpe_ids_free(&ids);
    bpe_destroy(b);
    bpe_destroy(NULL);
    bpe_ids_free(NULL);
    /* an empty token, the first one (found by fuzz_bpe_files) */
    b = bpe_create(NULL);
    assert_non_null(b);
    assert_int_equal(bpe_add_token(b, "", 0, 3, &err), 0);
    assert_int_equal(bpe_token_id(b, "", 0), 3);
    char out[4];
    assert_int_equal(bpe_token_text(b, 3, NULL, out, sizeof out), 0);
    assert_string_equal(out, "");
    bpe_destroy(b);
}

/* ---- the pipeline around the model (by hand; tests/test_bpe_hf.c has Hugging Face's ids) ---- */

/* The display texts of text's tokens, joined by '|' ('▁' and spaces as '_'). */
static void labels_of(const Bpe *b, const char *text, char *out, size_t cap)
{
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, text, strlen(text), &ids), 0);
    out[0] = '\0';
    for (int i = 0; i < ids.n; i++) {
        char t[64];
        bpe_token_text(b, ids.id[i], "_", t, sizeof t);
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? "|" : "", t);
    }
    bpe_ids_free(&ids);
}

/* Every byte's token, no merges, a few whole pieces (ignore_merges: a
 * piece in the vocabulary is one token, any other its bytes), with one
 * pre-tokenizer step. */
static Bpe *byte_tokens(const BpePreTokenizer *step)
{
    BpeOptions o = {.ignore_merges = 1};
    Bpe *b = bpe_create(&o);
    assert_non_null(b);
    int id = 0;
    for (int i = 0; i < 256; i++) {
        char c[2];
        int n = bpe_byte_char((unsigned char)i, c);
        assert_int_equal(bpe_add_token(b, c, (size_t)n, id++, NULL), 0);
    }
    static const char *const whole[] = {"ab", "-ab", "ab-", "--", "12"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        assert_int_equal(bpe_add_token(b, whole[i], strlen(whole[i]), id++, NULL), 0);
    AttnErr err = {0};
    if (step)
        assert_int_equal(bpe_add_pre_tokenizer(b, step, &err), 0);
    return b;
}

static void split_behaviours_by_hand(void **state)
{
    (void)state;
    static const struct {
        int behavior, invert;
        const char *want;
    } t[] = {
        {BPE_SPLIT_REMOVED, 0, "ab|ab|ab"},
        {BPE_SPLIT_ISOLATED, 0, "ab|-|ab|-|-|ab"},
        {BPE_SPLIT_MERGED_WITH_PREVIOUS, 0, "ab-|ab-|-|ab"},
        {BPE_SPLIT_MERGED_WITH_NEXT, 0, "ab|-ab|-|-ab"},
        {BPE_SPLIT_CONTIGUOUS, 0, "ab|-|ab|--|ab"},
        {BPE_SPLIT_REMOVED, 1, "-|-|-"},
        {BPE_SPLIT_MERGED_WITH_PREVIOUS, 1, "ab|-ab|-|-ab"},
    };
    char got[256];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        BpePreTokenizer st = {.kind = BPE_PRE_SPLIT, .pattern = "-", .pattern_len = 1,
                              .behavior = t[i].behavior, .invert = t[i].invert};
        Bpe *b = byte_tokens(&st);
        labels_of(b, "ab-ab--ab", got, sizeof got);
        if (strcmp(got, t[i].want) != 0)
            fail_msg("behaviour %d invert %d: %s, want %s", t[i].behavior, t[i].invert, got,
                     t[i].want);
        bpe_destroy(b);
    }
    /* Contiguous joins runs of matches: a regex, two digits per match */
    BpePreTokenizer st = {.kind = BPE_PRE_SPLIT, .pattern = "\\d", .pattern_len = 2, .regex = 1,
                          .behavior = BPE_SPLIT_CONTIGUOUS};
    Bpe *b = byte_tokens(&st);
    labels_of(b, "ab12ab", got, sizeof got);
    assert_string_equal(got, "ab|12|ab");
    bpe_destroy(b);
    /* Digits, one at a time or in runs */
    BpePreTokenizer dg = {.kind = BPE_PRE_DIGITS, .individual_digits = 1};
    b = byte_tokens(&dg);
    labels_of(b, "ab12", got, sizeof got);
    assert_string_equal(got, "ab|1|2");
    bpe_destroy(b);
    dg.individual_digits = 0;
    b = byte_tokens(&dg);
    labels_of(b, "ab12", got, sizeof got);
    assert_string_equal(got, "ab|12");
    bpe_destroy(b);
    /* a regex that does not compile, a Metaspace replacement of two characters */
    AttnErr err = {0};
    b = byte_tokens(NULL);
    st = (BpePreTokenizer){.kind = BPE_PRE_SPLIT, .pattern = "(a", .pattern_len = 2, .regex = 1};
    assert_int_equal(bpe_add_pre_tokenizer(b, &st, &err), -ATTN_E_PARSE);
    assert_non_null(strstr(err.msg, "regex \"(a\""));
    st = (BpePreTokenizer){.kind = BPE_PRE_METASPACE, .replacement = "ab", .replacement_len = 2};
    assert_int_equal(bpe_add_pre_tokenizer(b, &st, &err), -ATTN_E_RANGE);
    BpeNormalizer nm = {.kind = BPE_NORM_REPLACE, .pattern = "[", .pattern_len = 1, .regex = 1};
    assert_int_equal(bpe_add_normalizer(b, &nm, &err), -ATTN_E_PARSE);
    bpe_destroy(b);
}

/* SentencePiece style by hand: Prepend + Replace, characters as tokens,
 * a character without one as its <0xNN> bytes, else <unk> (fused); the
 * template's <s>; '▁' shown as a space. */
static void char_level_by_hand(void **state)
{
    (void)state;
    BpeOptions o = {.char_level = 1, .byte_fallback = 1, .has_unk = 1, .unk_id = 0,
                    .fuse_unk = 1, .decode_strip = 1};
    Bpe *b = bpe_create(&o);
    assert_non_null(b);
    AttnErr err = {0};
    BpeNormalizer pre = {.kind = BPE_NORM_PREPEND, .content = "\xE2\x96\x81", .content_len = 3};
    BpeNormalizer rep = {.kind = BPE_NORM_REPLACE, .pattern = " ", .pattern_len = 1,
                         .content = "\xE2\x96\x81", .content_len = 3};
    assert_int_equal(bpe_add_normalizer(b, &pre, &err), 0);
    assert_int_equal(bpe_add_normalizer(b, &rep, &err), 0);
    static const char *const vocab[] = {"<unk>", "<s>", "\xE2\x96\x81", "h", "i", "\xE2\x96\x81h",
                                        "\xE2\x96\x81hi", "<0xC3>", "<0xA9>"};
    for (int i = 0; i < 9; i++)
        assert_int_equal(bpe_add_token(b, vocab[i], strlen(vocab[i]), i, &err), 0);
    assert_int_equal(bpe_add_merge(b, "\xE2\x96\x81", 3, "h", 1, &err), 0);
    assert_int_equal(bpe_add_merge(b, "\xE2\x96\x81h", 4, "i", 1, &err), 0);
    assert_int_equal(bpe_add_special(b, "<s>", 3, 1, BPE_ADDED_SPECIAL, &err), 0);
    int bos = 1;
    assert_int_equal(bpe_set_template(b, &bos, 1, NULL, 0, &err), 0);
    BpeIds ids = {0};
    /* "hi hé" → ▁hi ▁h <0xC3> <0xA9>; "xyz" → one <unk> (fused) */
    assert_int_equal(bpe_encode_template(b, "hi h\xC3\xA9 xyz", 10, &ids), 0);
    static const int want[] = {1, 6, 5, 7, 8, 2, 0};
    assert_int_equal(ids.n, 7);
    assert_memory_equal(ids.id, want, sizeof want);
    char *dec = NULL;
    size_t n = 0;
    assert_int_equal(bpe_decode(b, ids.id + 1, ids.n - 1, 1, &dec, &n), 0);
    assert_string_equal(dec, "hi h\xC3\xA9 <unk>"); /* the leading space stripped */
    free(dec);
    char t[32];
    bpe_token_text(b, 6, "\xC4\xA0", t, sizeof t);
    assert_string_equal(t, "\xC4\xA0hi");
    bpe_token_text(b, 7, NULL, t, sizeof t);
    assert_string_equal(t, "\xE2\x80\xB9" "0xC3" "\xE2\x80\xBA");
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(byte_table),
        cmocka_unit_test(utf8_clean),
        cmocka_unit_test(split_by_hand),
        cmocka_unit_test(split_against_pcre2),
        cmocka_unit_test(merges_by_rank),
        cmocka_unit_test(long_piece),
        cmocka_unit_test(added_tokens),
        cmocka_unit_test(options),
        cmocka_unit_test(unknown_bytes),
        cmocka_unit_test(display_text),
        cmocka_unit_test(decode_round_trip),
        cmocka_unit_test(build_errors),
        cmocka_unit_test(split_behaviours_by_hand),
        cmocka_unit_test(char_level_by_hand),
    };
    return cmocka_run_group_tests_name("bpe", tests, NULL, NULL);
}
