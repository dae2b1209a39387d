/* tokenizer.json's normalizer steps run over a text (NFC and the other
 * Unicode forms by utf8proc, Prepend, Replace, Strip, Precompiled by
 * bpe_charsmap.c, BertNormalizer, Lowercase, Nmt), as Hugging Face's
 * tokenizers run them.
 * Not their compiling (bpe_pre.c) nor the pre-tokenizers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "attnviz/tokenizer.h"
#include "bpe_bert.h"
#include "bpe_pre.h"
#include "bpe_unicode.h"

/* ---- normalizers ------------------------------------------------------------------ */

static int norm_step(const BpeNorm *st, char **t, size_t *n, pcre2_match_data *md,
                     pcre2_match_context *mc);

/* ---- BertNormalizer (tokenizers' normalizers/bert.rs) ------------------------------- */

#define BERT_IS(table, cp) bpe_bert_is(BPE_BERT_##table, cp)

static void put_cp(BpeStr *o, unsigned cp)
{
    char u[4];
    utf8proc_ssize_t k = utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)u);
    bpe_str_put(o, u, (size_t)(k > 0 ? k : 0));
}

/* cp lower-cased into o: one character, or two where Unicode's lower case
 * of it is two (İ: i and a combining dot), by the table BertNormalizer and
 * Lowercase both read. */
static void put_lower(BpeStr *o, unsigned cp)
{
    unsigned lc[2] = {cp, 0};
    if (bpe_bert_lower(cp, lc) == 2)
        put_cp(o, lc[0]);
    put_cp(o, lc[lc[1] ? 1 : 0]);
}

/* out, a pass's output, as the text *t (n bytes) in place of the old one. */
static int take_text(BpeStr *out, char **t, size_t *n)
{
    bpe_str_put(out, "", 0); /* an empty text too */
    if (out->failed) {
        free(out->s);
        return -ATTN_E_NOMEM;
    }
    free(*t);
    *t = out->s;
    *n = out->n;
    return 0;
}

/* One character pass of text t (n bytes, valid UTF-8) into out by what,
 * one of: clean text and the CJK spaces (pass 0), nonspacing marks dropped
 * (1), lower case (2). */
static void bert_pass(BpeStr *out, const char *t, size_t n, unsigned flags, int pass)
{
    for (size_t i = 0; i < n;) {
        unsigned cp = 0;
        int k = tok_utf8_decode((const unsigned char *)t + i, n - i, &cp);
        if (k <= 0) {
            cp = (unsigned char)t[i];
            k = 1;
        }
        i += (size_t)k;
        if (pass == 0) {
            if ((flags & BPE_BERT_CLEAN) && BERT_IS(DROP, cp))
                continue;
            if ((flags & BPE_BERT_CLEAN) && BERT_IS(TO_SPACE, cp))
                cp = ' ';
            if ((flags & BPE_BERT_CHINESE) && bpe_bert_chinese(cp)) {
                bpe_str_put(out, " ", 1);
                put_cp(out, cp);
                bpe_str_put(out, " ", 1);
                continue;
            }
        } else if (pass == 1) {
            if (BERT_IS(MARK, cp))
                continue;
        } else {
            put_lower(out, cp);
            continue;
        }
        put_cp(out, cp);
    }
}

/* BertNormalizer's steps on *t in its order. */
static int bert_normalize(unsigned flags, char **t, size_t *n, pcre2_match_data *md,
                          pcre2_match_context *mc)
{
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1 && !(flags & BPE_BERT_STRIP_ACCENTS))
            continue;
        if (pass == 2 && !(flags & BPE_BERT_LOWERCASE))
            continue;
        if (pass == 1) { /* NFD first, as NormalizedString::nfd */
            BpeNorm nfd = {.n = {.kind = BPE_NORM_NFD}};
            int rc = norm_step(&nfd, t, n, md, mc);
            if (rc < 0)
                return rc;
        }
        BpeStr out = {0};
        bert_pass(&out, *t, *n, flags, pass);
        int rc = take_text(&out, t, n);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Nmt's filter (tokenizers' do_nmt, SentencePiece's nmt_nfkc rule without
 * its NFKC): the ASCII control characters but NUL, tab and the line ends,
 * DEL and two C1 ones go. */
static int nmt_keeps(unsigned cp)
{
    return !((cp >= 0x01 && cp <= 0x08) || cp == 0x0B || (cp >= 0x0E && cp <= 0x1F) ||
             cp == 0x7F || cp == 0x8F || cp == 0x9F);
}

/* Nmt's map: the code points SentencePiece counts as white space a space. */
static unsigned nmt_map(unsigned cp)
{
    switch (cp) {
    case 0x09: case 0x0A: case 0x0C: case 0x0D: case 0x1680: case 0x2028: case 0x2029:
    case 0x2581: case 0xFEFF: case 0xFFFD:
        return ' ';
    default:
        return cp >= 0x200B && cp <= 0x200F ? ' ' : cp;
    }
}

/* Lowercase (NormalizedString::lowercase: Rust's char::to_lowercase, one
 * character at a time, so no final sigma) or Nmt over *t. */
static int char_step(int kind, char **t, size_t *n)
{
    BpeStr out = {0};
    for (size_t i = 0; i < *n;) {
        unsigned cp = 0;
        int k = tok_utf8_decode((const unsigned char *)*t + i, *n - i, &cp);
        if (k <= 0) { /* not UTF-8: cannot happen for a cleaned text; kept as it is */
            bpe_str_put(&out, *t + i, 1);
            i++;
            continue;
        }
        i += (size_t)k;
        if (kind == BPE_NORM_NMT) {
            if (nmt_keeps(cp))
                put_cp(&out, nmt_map(cp));
            continue;
        }
        put_lower(&out, cp);
    }
    return take_text(&out, t, n);
}

/* Strip: Unicode white space off the left and the right of t (*n bytes,
 * NUL-terminated), in place. */
static void strip_step(const BpeNormalizer *nm, char *t, size_t *n)
{
    size_t from = 0, to = *n;
    unsigned cp;
    for (int k; nm->strip_left && from < to; from += (size_t)k)
        if ((k = tok_utf8_decode((const unsigned char *)t + from, to - from, &cp)) <= 0 ||
            !bpe_is_space(cp))
            break;
    while (nm->strip_right && to > from) {
        size_t c = to - 1;
        while (c > from && ((unsigned char)t[c] & 0xC0) == 0x80)
            c--;
        if (tok_utf8_decode((const unsigned char *)t + c, to - c, &cp) <= 0 || !bpe_is_space(cp))
            break;
        to = c;
    }
    memmove(t, t + from, to - from);
    *n = to - from;
    t[*n] = '\0';
}

/* Precompiled: *t through the charsmap (bpe_charsmap.c). */
static int precompiled_step(const BpeNorm *st, char **t, size_t *n)
{
    char *o = NULL;
    size_t on = 0;
    if (bpe_charsmap_normalize(&st->map, *t, *n, &o, &on) < 0)
        return -ATTN_E_NOMEM;
    free(*t);
    *t = o;
    *n = on;
    return 0;
}

/* One step: *t (malloc'ed, *n bytes) replaced by its normalized form. */
static int norm_step(const BpeNorm *st, char **t, size_t *n, pcre2_match_data *md,
                     pcre2_match_context *mc)
{
    BpeStr out = {0};
    const BpeNormalizer *nm = &st->n;
    if (nm->kind == BPE_NORM_BERT)
        return bert_normalize(nm->bert, t, n, md, mc);
    if (nm->kind == BPE_NORM_LOWERCASE || nm->kind == BPE_NORM_NMT)
        return char_step(nm->kind, t, n);
    if (nm->kind >= BPE_NORM_NFC && nm->kind <= BPE_NORM_NFKD) {
        static const int opts[] = {
            UTF8PROC_STABLE | UTF8PROC_COMPOSE, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE,
            UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT,
            UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT};
        /* the text between two characters the reference's (older) tables
         * do not know, each by utf8proc; those characters as they are */
        const char *s = *t;
        size_t from = 0;
        for (size_t i = 0; i <= *n;) {
            unsigned cp = 0;
            int k = 1;
            if (i < *n && (unsigned char)s[i] >= 0xC0) {
                k = tok_utf8_decode((const unsigned char *)s + i, *n - i, &cp);
                if (k <= 0)
                    k = 1;
            }
            if (i < *n && !bpe_norm_barrier(cp)) {
                i += (size_t)k;
                continue;
            }
            if (i > from) {
                utf8proc_uint8_t *m = NULL;
                utf8proc_ssize_t r =
                    utf8proc_map((const utf8proc_uint8_t *)s + from, (utf8proc_ssize_t)(i - from),
                                 &m, (utf8proc_option_t)opts[nm->kind - BPE_NORM_NFC]);
                if (r == UTF8PROC_ERROR_NOMEM) {
                    free(out.s);
                    return -ATTN_E_NOMEM;
                }
                if (r < 0) /* not UTF-8: cannot happen for a cleaned text; left as it is */
                    bpe_str_put(&out, s + from, i - from);
                else
                    bpe_str_put(&out, (const char *)m, (size_t)r);
                free(m);
            }
            if (i < *n)
                bpe_str_put(&out, s + i, (size_t)k);
            i += (size_t)k;
            from = i;
        }
        bpe_str_put(&out, "", 0); /* an empty text too */
    } else if (nm->kind == BPE_NORM_STRIP) {
        strip_step(nm, *t, n);
        return 0;
    } else if (nm->kind == BPE_NORM_PRECOMPILED) {
        return precompiled_step(st, t, n);
    } else if (nm->kind == BPE_NORM_CUSTOM) {
        char *o = NULL;
        size_t on = 0;
        int rc = nm->fn(nm->fn_ctx, *t, *n, &o, &on);
        if (rc < 0)
            return rc;
        free(*t);
        *t = o;
        *n = on;
        return 0;
    } else if (nm->kind == BPE_NORM_PREPEND) {
        if (!*n)
            return 0;
        bpe_str_put(&out, nm->content, nm->content_len);
        bpe_str_put(&out, *t, *n);
    } else if (nm->kind == BPE_NORM_REPLACE && st->re) {
        size_t pos = 0, from = 0;
        while (pos <= *n) {
            int rc = pcre2_match(st->re, (PCRE2_SPTR)*t, *n, pos, PCRE2_NO_UTF_CHECK, md, mc);
            if (rc < 0)
                break;
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            if (ov[1] == ov[0]) { /* an empty match replaces nothing */
                if (ov[0] >= *n)
                    break;
                int k = tok_utf8_len((const unsigned char *)*t + ov[0], *n - ov[0]);
                pos = ov[0] + (size_t)(k > 0 ? k : 1);
                continue;
            }
            bpe_str_put(&out, *t + from, ov[0] - from);
            bpe_str_put(&out, nm->content, nm->content_len);
            from = pos = ov[1];
        }
        bpe_str_put(&out, *t + from, *n - from);
    } else {
        return 0;
    }
    if (out.failed) {
        free(out.s);
        return -ATTN_E_NOMEM;
    }
    free(*t);
    *t = out.s;
    *n = out.n;
    return 0;
}

int bpe_normalize(const BpeNorm *steps, int n, const char *text, size_t len, char **out,
                  size_t *out_len)
{
    char *t = malloc(len + 1);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    int rc = t && md && mc ? 0 : -ATTN_E_NOMEM;
    if (mc)
        pcre2_set_match_limit(mc, BPE_MATCH_LIMIT);
    if (t) {
        memcpy(t, text, len);
        t[len] = '\0';
    }
    for (int i = 0; i < n && rc == 0; i++)
        rc = norm_step(&steps[i], &t, &len, md, mc);
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    if (rc < 0) {
        free(t);
        return rc;
    }
    *out = t;
    *out_len = len;
    return 0;
}

