/* The BPE tokenizer's fuzz checks, shared by tests/fuzz/fuzz_bpe.c,
 * tests/fuzz/fuzz_bpe_files.c, tests/test_fuzz_regress.c and tests/test_bpe.c
 * (as harness.h's: NULL when every invariant held, else what failed).
 *
 * fuzz_check_bpe: the input is text for two tokenizers built here (every
 * byte, a few dozen merges, <|endoftext|>; the second with a prefix space
 * and added tokens that strip white space or want whole words).
 * fuzz_check_bpe_files: the input is a tokenizer.json (first byte even) or
 * a vocab.json and a merges.txt (first byte odd; the two split at the
 * first NUL byte); a tokenizer read (any normalizer, pre-tokenizer,
 * template of tests/fixtures/hftok/'s kinds) encodes samples, with and
 * without the template, the same twice, to its own ids, the template's
 * ids first.
 * The pattern split is checked against PCRE2 running GPT-2's pattern itself,
 * on texts whose every character PCRE2 (Unicode 14 in Debian 12) and
 * utf8proc class alike. */
#ifndef ATTNVIZ_FUZZ_HARNESS_BPE_H
#define ATTNVIZ_FUZZ_HARNESS_BPE_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "attnviz/bpe.h"
#include "attnviz/bpe_files.h"
#include "attnviz/tokenizer.h"
#include "../../src/core/bpe_unicode.h"

#define FUZZ_BPE_MAX (1u << 16)
#define FUZZ_BPE_FILES_MAX (1u << 16)

#define FUZZ_GPT2_PATTERN \
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

/* Merges of the built-in tokenizer, in byte-level characters, rank order. */
static const char *const fuzz_bpe_merges[] = {
    "Ġ t", "h e", "Ġt he", "i n", "Ġ a", "e r", "o n", "Ġ s", "r e", "a t", "Ġ ĠĠ", "Ġ Ġ",
    "ĠĠ Ġ", "Ċ Ċ", "č Ċ", "ĉ ĉ", "' s", "' t", "i ng", "n g", "Ġs t", "Ġst at", "Ġstat i",
    "Ġstati on", "1 2", "12 3", "Ġ 1", "ð Ł", "ðŁ ĺ", "ðŁĺ Ģ", "ä ½", "ä½ ł", "å ¥", "å¥ ½",
    "Ã ©", "Ġ <", "< |", "Ġ ðŁ", "â Ģ", "âĢ ĭ", "ï ¿", "ï¿ ½", "Ġ ï¿½", "e e", "ee ee", "eeee eeee",
};

static inline int fuzz_bpe_add(Bpe *b, const char *text, size_t len, int *next)
{
    if (bpe_token_id(b, text, len) >= 0)
        return 0;
    return bpe_add_token(b, text, len, (*next)++, NULL);
}

/* The built-in tokenizer: every byte's token (ids in reverse byte order, so
 * an id is not its byte), the merges' tokens, then the added tokens. */
static inline Bpe *fuzz_bpe_tiny(int with_options)
{
    BpeOptions o = {.add_prefix_space = with_options};
    Bpe *b = bpe_create(&o);
    int next = 0, ok = b != NULL;
    for (int i = 255; ok && i >= 0; i--) {
        char c[2];
        int n = bpe_byte_char((unsigned char)i, c);
        ok = fuzz_bpe_add(b, c, (size_t)n, &next) == 0;
    }
    size_t n_merges = sizeof fuzz_bpe_merges / sizeof fuzz_bpe_merges[0];
    for (size_t i = 0; ok && i < n_merges; i++) {
        char join[64];
        const char *m = fuzz_bpe_merges[i], *sp = strchr(m, ' ');
        size_t l = (size_t)(sp - m), r = strlen(sp + 1);
        memcpy(join, m, l);
        memcpy(join + l, sp + 1, r);
        ok = fuzz_bpe_add(b, join, l + r, &next) == 0;
    }
    for (size_t i = 0; ok && i < n_merges; i++) {
        const char *m = fuzz_bpe_merges[i], *sp = strchr(m, ' ');
        ok = bpe_add_merge(b, m, (size_t)(sp - m), sp + 1, strlen(sp + 1), NULL) == 0;
    }
    if (ok)
        ok = bpe_add_token(b, "<|endoftext|>", 13, next, NULL) == 0 &&
             bpe_add_special(b, "<|endoftext|>", 13, next, BPE_ADDED_SPECIAL, NULL) == 0;
    if (ok && with_options)
        ok = bpe_add_special(b, "<mask>", 6, next + 1, BPE_ADDED_LSTRIP | BPE_ADDED_SPECIAL,
                             NULL) == 0 &&
             bpe_add_special(b, "[R]", 3, next + 2, BPE_ADDED_RSTRIP, NULL) == 0 &&
             bpe_add_special(b, "<w>", 3, next + 3, BPE_ADDED_SINGLE_WORD, NULL) == 0 &&
             bpe_add_special(b, "<mask><w>", 9, next + 4, BPE_ADDED_NORMALIZED, NULL) == 0;
    if (!ok) {
        bpe_destroy(b);
        return NULL;
    }
    return b;
}

/* The class of code point cp as the split has it (0 other, 1 letter,
 * 2 number, 3 space): bpe_ucat's categories, Hugging Face's Unicode 16.0,
 * which PCRE2 10.42 (Unicode 14.0) does not know in full. */
static inline int fuzz_class_split(unsigned cp)
{
    if (bpe_is_space(cp))
        return 3;
    utf8proc_category_t c = (utf8proc_category_t)bpe_ucat(cp);
    if (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO)
        return 1;
    return c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO ? 2 : 0;
}

static inline pcre2_code *fuzz_pcre2(const char *pattern)
{
    int e;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &e, &off, NULL);
    if (re)
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}

/* The same class by PCRE2's \\p{L}, \\p{N} and \\s; -1 when it cannot be
 * asked. */
static inline int fuzz_class_pcre2(const char *s, size_t n)
{
    static pcre2_code *cls;
    static pcre2_match_data *md;
    if (!cls) {
        cls = fuzz_pcre2("^(?:(\\p{L})|(\\p{N})|(\\s))$");
        md = cls ? pcre2_match_data_create_from_pattern(cls, NULL) : NULL;
    }
    if (!cls || !md)
        return -1;
    int rc = pcre2_match(cls, (PCRE2_SPTR)s, n, 0, 0, md, NULL);
    return rc < 0 ? 0 : rc - 1;
}

/* bpe_split_next's pieces of valid UTF-8 text against PCRE2's matches of
 * GPT-2's pattern. NULL when they agree or cannot be compared. */
static inline const char *fuzz_bpe_split_check(const char *text, size_t len)
{
    static pcre2_code *re;
    static pcre2_match_data *md;
    if (!re) {
        re = fuzz_pcre2(FUZZ_GPT2_PATTERN);
        md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
    }
    if (!re || !md)
        return "PCRE2 cannot compile GPT-2's pattern";
    for (size_t i = 0; i < len;) {
        unsigned cp;
        int n = tok_utf8_decode((const unsigned char *)text + i, len - i, &cp);
        if (n <= 0)
            return "the text given to the split check is not UTF-8";
        if (fuzz_class_pcre2(text + i, (size_t)n) != fuzz_class_split(cp))
            return NULL; /* PCRE2's Unicode is older here: no oracle */
        i += (size_t)n;
    }
    for (size_t pos = 0; pos < len;) {
        size_t end = bpe_split_next(text, len, pos);
        int rc = pcre2_match(re, (PCRE2_SPTR)text, len, pos, PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK,
                             md, NULL);
        if (rc < 0)
            return "PCRE2 finds no piece where bpe_split_next finds one";
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] != end || end <= pos)
            return "bpe_split_next's piece ends elsewhere than PCRE2's match";
        pos = end;
    }
    return NULL;
}

/* ids are tokens of b, their display texts UTF-8 of the length returned. */
static inline const char *fuzz_bpe_ids_ok(const Bpe *b, const BpeIds *ids)
{
    for (int i = 0; i < ids->n; i++) {
        size_t len;
        if (ids->id[i] < 0 || ids->id[i] >= bpe_n_vocab(b) || !bpe_token_bytes(b, ids->id[i], &len))
            return "an id that is no token";
        char text[512];
        size_t need = bpe_token_text(b, ids->id[i], i % 2 ? "\xE2\x90\xA3" : NULL, text, sizeof text);
        if (need < sizeof text) {
            if (strlen(text) != need)
                return "bpe_token_text's length is not the text's";
            for (size_t k = 0; k < need;) {
                int n = tok_utf8_len((const unsigned char *)text + k, need - k);
                if (!n)
                    return "a display text that is not UTF-8";
                k += (size_t)n;
            }
        }
    }
    return NULL;
}

static inline const char *fuzz_check_bpe(const uint8_t *data, size_t size)
{
    if (size > FUZZ_BPE_MAX)
        return NULL;
    const char *bad = NULL;
    char *text = malloc(size ? size : 1), *clean = malloc(3 * size + 1), *back = NULL;
    static Bpe *plain, *opt; /* built once: encoding only reads them */
    if (!plain)
        plain = fuzz_bpe_tiny(0);
    if (!opt)
        opt = fuzz_bpe_tiny(1);
    BpeIds ids = {0}, again = {0};
    size_t n_clean = 0, n_back = 0;
    if (!text || !clean || !plain || !opt) {
        bad = "out of memory";
        goto done;
    }
    memcpy(text, data, size); /* exactly size bytes: ASan sees over-reads */
    n_clean = bpe_utf8_clean(clean, text, size);
    if (bpe_encode(plain, text, size, &ids) != 0 || bpe_encode(plain, text, size, &again) != 0)
        bad = "bpe_encode failed";
    else if ((bad = fuzz_bpe_ids_ok(plain, &ids)) != NULL)
        ;
    else if (ids.n != again.n || (ids.n && memcmp(ids.id, again.id, sizeof(int) * (size_t)ids.n)))
        bad = "two encodings of one text differ";
    else if (bpe_decode(plain, ids.id, ids.n, 0, &back, &n_back) != 0)
        bad = "bpe_decode failed";
    else if (n_back != n_clean || memcmp(back, clean, n_clean) != 0)
        bad = "the decoded ids are not the text (invalid UTF-8 as U+FFFD)";
    else if ((bad = fuzz_bpe_split_check(clean, n_clean)) != NULL)
        ;
    else {
        bpe_ids_free(&ids);
        if (bpe_encode(opt, text, size, &ids) != 0)
            bad = "bpe_encode failed (options)";
        else
            bad = fuzz_bpe_ids_ok(opt, &ids);
    }
done:
    bpe_ids_free(&ids);
    bpe_ids_free(&again);
    free(back);
    free(text);
    free(clean);
    return bad;
}

/* bpe_encode_template gives the template's ids, then bpe_encode's, then
 * the template's after; twice the same; every id a token. */
static inline const char *fuzz_bpe_template_ok(const Bpe *b, const char *text, size_t len)
{
    BpeIds plain = {0}, full = {0}, again = {0};
    int nb, na;
    const int *before = bpe_template_before(b, &nb), *after = bpe_template_after(b, &na);
    const char *bad = NULL;
    char *back = NULL;
    size_t n_back;
    if (bpe_encode(b, text, len, &plain) || bpe_encode_template(b, text, len, &full) ||
        bpe_encode_template(b, text, len, &again))
        bad = "bpe_encode_template failed";
    else if (full.n != nb + plain.n + na || again.n != full.n ||
             (full.n && memcmp(full.id, again.id, sizeof(int) * (size_t)full.n)))
        bad = "bpe_encode_template's ids are not the template's and the text's, or differ";
    else if ((nb && memcmp(full.id, before, sizeof(int) * (size_t)nb)) ||
             (plain.n && memcmp(full.id + nb, plain.id, sizeof(int) * (size_t)plain.n)) ||
             (na && memcmp(full.id + nb + plain.n, after, sizeof(int) * (size_t)na)))
        bad = "bpe_encode_template's ids are not in the template's order";
    else if ((bad = fuzz_bpe_ids_ok(b, &plain)) != NULL)
        ;
    else if (bpe_decode(b, full.id, full.n, 1, &back, &n_back) != 0)
        bad = "bpe_decode failed";
    bpe_ids_free(&plain);
    bpe_ids_free(&full);
    bpe_ids_free(&again);
    free(back);
    return bad;
}

static inline const char *fuzz_check_bpe_files(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_BPE_FILES_MAX)
        return NULL;
    static const char sample[] = "Hello <|endoftext|> w\xC3\xB6rld's 123 \xF0\x9F\x98\x80\r\n\xFF";
    static const char sample2[] = "<s> e\xCC\x81 \xE2\x96\x81x  <|begin_of_text|>12345 \xE9\xBE\x8D<0x41>\t";
    int json = data[0] % 2 == 0;
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    const uint8_t *nul = json ? NULL : memchr(body, 0, n);
    size_t n1 = nul ? (size_t)(nul - body) : n, n2 = nul ? n - n1 - 1 : 0;
    char *a = malloc(n1 ? n1 : 1), *b = malloc(n2 ? n2 : 1);
    const char *bad = NULL;
    Bpe *bpe = (Bpe *)&bad; /* must become NULL on error */
    AttnErr err = {0};
    BpeIds ids = {0};
    if (!a || !b) {
        free(a);
        free(b);
        return "out of memory";
    }
    memcpy(a, body, n1);
    if (n2)
        memcpy(b, nul + 1, n2);
    int rc = json ? bpe_parse_tokenizer_json(&bpe, a, n1, "tokenizer.json", &err)
                  : bpe_parse_vocab_merges(&bpe, a, n1, "vocab.json", b, n2, "merges.txt", &err);
    if (rc < 0) {
        if (err.code != -rc || !err.msg[0])
            bad = "an error without its code or message";
        else if (strcmp(err.file, "tokenizer.json") && strcmp(err.file, "vocab.json") &&
                 strcmp(err.file, "merges.txt"))
            bad = "an error that names no file";
        else if (bpe)
            bad = "a tokenizer left after an error";
    } else if (rc != 0 || !bpe) {
        bad = "success without a tokenizer";
    } else if (bpe_encode(bpe, sample, sizeof sample - 1, &ids) != 0) {
        bad = "bpe_encode failed";
    } else if ((bad = fuzz_bpe_ids_ok(bpe, &ids)) == NULL) {
        bad = fuzz_bpe_template_ok(bpe, sample2, sizeof sample2 - 1);
    }
    if (rc == 0)
        bpe_destroy(bpe);
    bpe_ids_free(&ids);
    free(a);
    free(b);
    return bad;
}

#endif
