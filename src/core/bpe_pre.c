/* tokenizer.json's normalizer steps compiled (their runs are bpe_norm.c's)
 * and pre-tokenizers (Split by a
 * PCRE2 regex or a literal with its five behaviours, Digits, ByteLevel's
 * prefix space and GPT-2 split, Metaspace, BertPreTokenizer, Whitespace,
 * WhitespaceSplit), as Hugging Face's tokenizers run them. Not the added
 * tokens or the merges (bpe.c). */
#include "bpe_pre.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "attnviz/tokenizer.h"
#include "bpe_bert.h"
#include "bpe_unicode.h"

/* A piece of a piece: [start, end), a match of the pattern or not. */
typedef struct BpeSpan {
    size_t start, end;
    int match;
} BpeSpan;

/* ---- a growing byte string ---------------------------------------------------- */

void bpe_str_put(BpeStr *s, const char *p, size_t n)
{
    if (s->failed)
        return;
    if (s->cap - s->n < n + 1) {
        size_t cap = s->cap ? s->cap : 64;
        while (cap - s->n < n + 1)
            cap *= 2;
        char *m = realloc(s->s, cap);
        if (!m) {
            s->failed = 1;
            return;
        }
        s->s = m;
        s->cap = cap;
    }
    if (n)
        memcpy(s->s + s->n, p, n);
    s->n += n;
    s->s[s->n] = '\0';
}

/* ---- compiling ---------------------------------------------------------------- */

/* Oniguruma's \s (Hugging Face's regex engine): tab to CR, NEL and the
 * characters of categories Zs, Zl and Zp. PCRE2's also has U+180E. */
#define ONIG_SPACE \
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}" \
    "\\x{205F}\\x{3000}"

/* The characters of the reference's categories mask that Unicode 14.0
 * (PCRE2 10.42's) has in none of them (add), or has in them and the
 * reference not (!add), as class items; how many. */
static int put_fix(BpeStr *o, uint32_t mask, int add)
{
    size_t n, k = 0;
    const BpeCatFix *f = bpe_cat_fixes(&n);
    for (size_t i = 0; i < n; i++) {
        int in_new = (int)(mask >> f[i].cat & 1), in_old = (int)(mask >> f[i].old & 1);
        if (add ? !(in_new && !in_old) : !(in_old && !in_new))
            continue;
        char item[40];
        int len = f[i].lo == f[i].hi
                      ? snprintf(item, sizeof item, "\\x{%X}", (unsigned)f[i].lo)
                      : snprintf(item, sizeof item, "\\x{%X}-\\x{%X}", (unsigned)f[i].lo,
                                 (unsigned)f[i].hi);
        if (o)
            bpe_str_put(o, item, (size_t)len);
        k++;
    }
    return (int)k;
}

/* Oniguruma's \w as class items: letters, marks, Nd, Pc as the reference
 * has them, and the rest of its Word characters. */
static void put_word(BpeStr *o)
{
    static const char base[] = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";
    bpe_str_put(o, base, strlen(base));
    put_fix(o, bpe_prop_cats("L", 1) | bpe_prop_cats("M", 1) | bpe_prop_cats("Nd", 2) |
                   bpe_prop_cats("Pc", 2), 1);
    size_t n;
    const BpeRange *r = bpe_word_extra(&n);
    for (size_t i = 0; i < n; i++) {
        char item[40];
        int len = snprintf(item, sizeof item, "\\x{%X}-\\x{%X}", (unsigned)r[i].lo,
                           (unsigned)r[i].hi);
        bpe_str_put(o, item, (size_t)len);
    }
}

/* A category \p{name} (neg: \P{name}, \p{^name}) as the reference matches
 * it: the characters its newer Unicode added to the class, those it moved
 * out taken away (outside a class only; inside, a negated one stays). */
static void put_prop(BpeStr *o, const char *name, size_t n, uint32_t mask, int neg, int in_class)
{
    int add = put_fix(NULL, mask, 1), rem = put_fix(NULL, mask, 0);
    if (in_class && neg) {
        bpe_str_put(o, "\\P{", 3);
    } else if (!in_class && !neg) {
        if (rem) {
            bpe_str_put(o, "(?:(?![", 7);
            put_fix(o, mask, 0);
            bpe_str_put(o, "])", 2);
        }
        bpe_str_put(o, "[\\p{", 4);
    } else if (!in_class) {
        bpe_str_put(o, "(?:", 3);
        if (rem) {
            bpe_str_put(o, "[", 1);
            put_fix(o, mask, 0);
            bpe_str_put(o, "]|", 2);
        }
        bpe_str_put(o, "[^\\p{", 5);
    } else {
        bpe_str_put(o, "\\p{", 3);
    }
    bpe_str_put(o, name, n);
    bpe_str_put(o, "}", 1);
    if (!(in_class && neg) && add)
        put_fix(o, mask, 1);
    if (!in_class)
        bpe_str_put(o, neg ? "])" : rem ? "])" : "]", neg || rem ? 2 : 1);
}

/* pattern with the classes spelled as the reference (Oniguruma, Unicode
 * 16.0) has them, so PCRE2 (Unicode 14.0) splits where Hugging Face does:
 * every \s (and \S outside a class) as Oniguruma's set; \p{..}, \P{..} of a
 * category and \d, \D with the characters of newer Unicode versions;
 * \w, \W (outside a class) as Oniguruma's words. */
static void onig_classes(BpeStr *o, const char *p, size_t n)
{
    int in_class = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] == '\\' && i + 1 < n) {
            char c = p[i + 1];
            const char *close = c == 'p' || c == 'P' ? memchr(p + i, '}', n - i) : NULL;
            if (c == 's') {
                bpe_str_put(o, in_class ? ONIG_SPACE : "[" ONIG_SPACE "]",
                        strlen(ONIG_SPACE) + (in_class ? 0 : 2));
            } else if (c == 'S' && !in_class) {
                bpe_str_put(o, "[^" ONIG_SPACE "]", strlen(ONIG_SPACE) + 3);
            } else if ((c == 'd' || c == 'D') && !(in_class && c == 'D')) {
                put_prop(o, "Nd", 2, bpe_prop_cats("Nd", 2), c == 'D', in_class);
            } else if (c == 'w' || (c == 'W' && !in_class)) {
                bpe_str_put(o, in_class ? "" : c == 'W' ? "[^" : "[", in_class ? 0 : c == 'W' ? 2 : 1);
                put_word(o);
                bpe_str_put(o, "]", !in_class);
            } else if (close && i + 2 < n && p[i + 2] == '{') {
                const char *name = p + i + 3;
                int neg = c == 'P';
                if (name < close && *name == '^') {
                    neg = !neg;
                    name++;
                }
                size_t len = (size_t)(close - name);
                uint32_t mask = bpe_prop_cats(name, len);
                if (mask)
                    put_prop(o, name, len, mask, neg, in_class);
                else
                    bpe_str_put(o, p + i, (size_t)(close - (p + i)) + 1);
                i = (size_t)(close - p) + 1;
                continue;
            } else {
                bpe_str_put(o, p + i, 2);
            }
            i += 2;
        } else if (!in_class && p[i] == '[') {
            size_t k = i + 1;
            k += k < n && p[k] == '^';
            k += k < n && p[k] == ']'; /* a first ']' is a character */
            bpe_str_put(o, p + i, k - i);
            in_class = 1;
            i = k;
        } else if (in_class && p[i] == '[' && i + 1 < n && p[i + 1] == ':') {
            const char *end = strstr(p + i, ":]");
            size_t k = end && (size_t)(end - p) < n ? (size_t)(end - p) + 2 : i + 1;
            bpe_str_put(o, p + i, k - i);
            i = k;
        } else {
            in_class &= p[i] != ']';
            bpe_str_put(o, p + i, 1);
            i++;
        }
    }
}

static pcre2_code *compile(const char *pattern, size_t len, int literal, AttnErr *err, int *rc)
{
    int code;
    PCRE2_SIZE at;
    uint32_t opts = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
    BpeStr o = {0};
    if (!literal) {
        onig_classes(&o, pattern, len);
        if (o.failed) {
            free(o.s);
            *rc = attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
            return NULL;
        }
    }
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)(literal ? pattern : o.s), literal ? len : o.n,
                                   opts, &code, &at, NULL);
    free(o.s);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        *rc = attn_err_set(err, ATTN_E_PARSE, NULL, 0, "regex \"%.200s\": %s at offset %zu",
                           pattern, (const char *)msg, (size_t)at);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* slower without, same matches */
    *rc = 0;
    return re;
}

/* Copies of two byte strings in one allocation (each NUL-terminated). */
static char *own2(const char **a, size_t alen, const char **c, size_t clen)
{
    char *own = malloc(alen + clen + 2);
    if (!own)
        return NULL;
    if (alen)
        memcpy(own, *a, alen);
    own[alen] = '\0';
    if (clen)
        memcpy(own + alen + 1, *c, clen);
    own[alen + 1 + clen] = '\0';
    *a = own;
    *c = own + alen + 1;
    return own;
}

int bpe_norm_compile(BpeNorm *dst, const BpeNormalizer *src, AttnErr *err)
{
    memset(dst, 0, sizeof *dst);
    dst->n = *src;
    if (!src->pattern)
        dst->n.pattern_len = 0;
    if (!src->content)
        dst->n.content_len = 0;
    dst->own = own2(&dst->n.pattern, dst->n.pattern_len, &dst->n.content, dst->n.content_len);
    if (!dst->own)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    int rc = 0;
    if (src->kind == BPE_NORM_CUSTOM && !src->fn)
        rc = attn_err_set(err, ATTN_E_PARSE, NULL, 0, "a custom normalizer without its function");
    if (src->kind == BPE_NORM_REPLACE && dst->n.pattern_len)
        dst->re = compile(dst->n.pattern, dst->n.pattern_len, !src->regex, err, &rc);
    if (src->kind == BPE_NORM_PRECOMPILED)
        rc = bpe_charsmap_parse(&dst->map, src->charsmap, src->charsmap ? src->charsmap_len : 0,
                                err);
    dst->n.charsmap = NULL; /* the map holds what the step needs */
    if (rc < 0)
        bpe_norm_free(dst);
    return rc;
}

void bpe_norm_free(BpeNorm *n)
{
    free(n->own);
    pcre2_code_free(n->re);
    bpe_charsmap_free(&n->map);
    memset(n, 0, sizeof *n);
}

int bpe_pre_compile(BpePre *dst, const BpePreTokenizer *src, AttnErr *err)
{
    memset(dst, 0, sizeof *dst);
    dst->p = *src;
    if (!src->pattern)
        dst->p.pattern_len = 0;
    if (!src->replacement) {
        dst->p.replacement = "\xE2\x96\x81"; /* ▁ */
        dst->p.replacement_len = 3;
    }
    dst->own = own2(&dst->p.pattern, dst->p.pattern_len, &dst->p.replacement,
                    dst->p.replacement_len);
    if (!dst->own)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    int rc = 0;
    if (src->kind == BPE_PRE_METASPACE) {
        int n = tok_utf8_decode((const unsigned char *)dst->p.replacement, dst->p.replacement_len,
                                &dst->repl_cp);
        if (n <= 0 || (size_t)n != dst->p.replacement_len)
            rc = attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                              "Metaspace replacement \"%.40s\" is not one character",
                              dst->p.replacement);
    } else if (src->kind == BPE_PRE_CUSTOM) {
        if (!src->next)
            rc = attn_err_set(err, ATTN_E_PARSE, NULL, 0, "a custom split without its function");
    } else if (src->kind == BPE_PRE_SPLIT) {
        if (!dst->p.pattern_len)
            rc = attn_err_set(err, ATTN_E_PARSE, NULL, 0, "Split pattern is empty");
        else
            dst->re = compile(dst->p.pattern, dst->p.pattern_len, !src->regex, err, &rc);
    }
    if (rc < 0)
        bpe_pre_free(dst);
    return rc;
}

void bpe_pre_free(BpePre *p)
{
    free(p->own);
    pcre2_code_free(p->re);
    memset(p, 0, sizeof *p);
}

#define BERT_IS(table, cp) bpe_bert_is(BPE_BERT_##table, cp)

/* ---- pieces ------------------------------------------------------------------------ */

static void pieces_clear(BpePieces *p)
{
    p->n = 0;
    p->n_buf = 0;
}

static void pieces_free(BpePieces *p)
{
    free(p->buf);
    free(p->off);
    free(p->len);
    free(p->first);
    memset(p, 0, sizeof *p);
}

/* Appends a piece made of two texts (a prefix, then the text); empty
 * pieces are left out, as Hugging Face leaves them. */
static void piece_add2(BpePreWork *w, BpePieces *p, const char *pre, size_t pn, const char *s,
                       size_t n, int first)
{
    if (w->failed || pn + n == 0)
        return;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        size_t *off = realloc(p->off, (size_t)cap * sizeof *off);
        if (off)
            p->off = off;
        size_t *len = realloc(p->len, (size_t)cap * sizeof *len);
        if (len)
            p->len = len;
        int *f = realloc(p->first, (size_t)cap * sizeof *f);
        if (f)
            p->first = f;
        if (!off || !len || !f) {
            w->failed = 1;
            return;
        }
        p->cap = cap;
    }
    if (p->cap_buf - p->n_buf < pn + n) {
        size_t cap = p->cap_buf ? p->cap_buf : 256;
        while (cap - p->n_buf < pn + n)
            cap *= 2;
        char *b = realloc(p->buf, cap);
        if (!b) {
            w->failed = 1;
            return;
        }
        p->buf = b;
        p->cap_buf = cap;
    }
    if (pn)
        memcpy(p->buf + p->n_buf, pre, pn);
    memcpy(p->buf + p->n_buf + pn, s, n);
    p->off[p->n] = p->n_buf;
    p->len[p->n] = pn + n;
    p->first[p->n] = first;
    p->n_buf += pn + n;
    p->n++;
}

static BpeSpan *span_at(BpePreWork *w, size_t i)
{
    if (i >= w->cap_span) {
        size_t cap = w->cap_span ? 2 * w->cap_span : 64;
        while (cap <= i)
            cap *= 2;
        BpeSpan *s = realloc(w->span, cap * sizeof *s);
        if (!s) {
            w->failed = 1;
            return NULL;
        }
        w->span = s;
        w->cap_span = cap;
    }
    return &w->span[i];
}

static void span_push(BpePreWork *w, size_t *ns, size_t start, size_t end, int match)
{
    BpeSpan *s = span_at(w, *ns);
    if (s) {
        *s = (BpeSpan){start, end, match};
        (*ns)++;
    }
}

/* The spans of s (n bytes) as Hugging Face's Pattern::find_matches gives
 * them for a regex: the matches and the text between them. */
static size_t regex_spans(BpePreWork *w, const pcre2_code *re, const char *s, size_t n)
{
    size_t ns = 0, prev = 0, pos = 0;
    while (pos <= n && !w->failed) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK, w->md, w->mc);
        if (rc < 0)
            break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(w->md);
        if (ov[0] != prev)
            span_push(w, &ns, prev, ov[0], 0);
        span_push(w, &ns, ov[0], ov[1], 1);
        prev = ov[1];
        if (ov[1] > ov[0]) {
            pos = ov[1];
        } else {
            if (ov[0] >= n)
                break;
            int k = tok_utf8_len((const unsigned char *)s + ov[0], n - ov[0]);
            pos = ov[0] + (size_t)(k > 0 ? k : 1);
        }
    }
    if (prev != n)
        span_push(w, &ns, prev, n, 0);
    return ns;
}

/* The spans for a character predicate: each character for which it holds
 * a match alone, the runs between them not. */
static size_t char_spans(BpePreWork *w, const char *s, size_t n, int (*pred)(unsigned, unsigned),
                         unsigned arg)
{
    size_t ns = 0, last = 0;
    for (size_t i = 0; i < n && !w->failed;) {
        unsigned cp = 0;
        int k = tok_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k <= 0)
            k = 1;
        if (pred(cp, arg)) {
            if (last < i)
                span_push(w, &ns, last, i, 0);
            span_push(w, &ns, i, i + (size_t)k, 1);
            last = i + (size_t)k;
        }
        i += (size_t)k;
    }
    if (last < n)
        span_push(w, &ns, last, n, 0);
    return ns;
}

static int is_numeric(unsigned cp, unsigned unused)
{
    (void)unused;
    if (cp < 128)
        return cp >= '0' && cp <= '9';
    if (cp > 0x10FFFF)
        return 0;
    utf8proc_category_t c = (utf8proc_category_t)bpe_ucat(cp);
    return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

static int is_char(unsigned cp, unsigned want)
{
    return cp == want;
}

/* The spans[0..ns) of s turned into pieces by behaviour (Hugging Face's
 * SplitDelimiterBehavior), appended to out; the first keeps first. */
static void emit(BpePreWork *w, BpePieces *out, const char *s, size_t ns, int behavior, int invert,
                 int first)
{
    BpeSpan *sp = w->span;
    size_t k = 0; /* spans merged in place: sp[0..k) */
    if (invert)
        for (size_t i = 0; i < ns; i++)
            sp[i].match = !sp[i].match;
    if (behavior == BPE_SPLIT_MERGED_WITH_NEXT) {
        /* from the end: a match joins the piece after it */
        int prev_match = 0;
        size_t j = ns;
        for (size_t i = ns; i-- > 0;) {
            if (sp[i].match && !prev_match && j < ns)
                sp[j].start = sp[i].start;
            else
                sp[--j] = sp[i];
            prev_match = sp[i].match;
        }
        memmove(sp, sp + j, (ns - j) * sizeof *sp);
        k = ns - j;
    } else {
        int prev_match = 0;
        for (size_t i = 0; i < ns; i++) {
            int m = sp[i].match;
            if (behavior == BPE_SPLIT_REMOVED) {
                if (!m)
                    sp[k++] = sp[i];
            } else if (behavior == BPE_SPLIT_MERGED_WITH_PREVIOUS && m && !prev_match && k) {
                sp[k - 1].end = sp[i].end;
            } else if (behavior == BPE_SPLIT_CONTIGUOUS && m == prev_match && k) {
                sp[k - 1].end = sp[i].end;
            } else {
                sp[k++] = sp[i];
            }
            prev_match = m;
        }
    }
    for (size_t i = 0; i < k; i++)
        piece_add2(w, out, NULL, 0, s + sp[i].start, sp[i].end - sp[i].start,
                   first && sp[i].start == 0);
}

/* BertPreTokenizer (punct: each punctuation character a piece) or
 * WhitespaceSplit: the runs between white space (dropped), as pieces. */
static void bert_split(BpePreWork *w, BpePieces *out, const char *s, size_t n, int first,
                       int punct)
{
    size_t from = 0;
    for (size_t i = 0; i < n && !w->failed;) {
        unsigned cp = 0;
        int k = tok_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k <= 0)
            k = 1;
        /* is_whitespace; is_bert_punc: ASCII punctuation ($ + < = ^ ` | ~ too) or the
           reference's punctuation categories */
        int sp = BERT_IS(SPACE, cp);
        int pu = !sp && punct && BERT_IS(PUNCT, cp);
        if (sp || pu) {
            if (from < i)
                piece_add2(w, out, NULL, 0, s + from, i - from, first && from == 0);
            if (pu)
                piece_add2(w, out, NULL, 0, s + i, (size_t)k, first && i == 0);
            from = i + (size_t)k;
        }
        i += (size_t)k;
    }
    if (from < n)
        piece_add2(w, out, NULL, 0, s + from, n - from, first && from == 0);
}

/* Whitespace: the runs of its word characters and the runs of the others
 * (neither word nor white space) as pieces, white space dropped. */
static void whitespace_split(BpePreWork *w, BpePieces *out, const char *s, size_t n, int first)
{
    size_t from = 0;
    int run = -1; /* the run's class: 1 word, 0 other, -1 none */
    for (size_t i = 0; i <= n && !w->failed;) {
        unsigned cp = 0;
        int k = 1, cls = -1;
        if (i < n) {
            k = tok_utf8_decode((const unsigned char *)s + i, n - i, &cp);
            if (k <= 0)
                k = 1;
            cls = BERT_IS(WS_SPACE, cp) ? -1
                  : BERT_IS(WS_WORD, cp) ? 1 : 0;
        }
        if (cls != run || i == n) {
            if (run >= 0 && from < i)
                piece_add2(w, out, NULL, 0, s + from, i - from, first && from == 0);
            from = i;
            run = cls;
        }
        i += (size_t)k;
    }
}

/* One step over piece s (n bytes), its pieces appended to out. */
static void pre_step(BpePreWork *w, const BpePre *st, const char *s, size_t n, int first,
                     BpePieces *out)
{
    const BpePreTokenizer *p = &st->p;
    size_t ns;
    switch (p->kind) {
    case BPE_PRE_SPLIT:
        ns = regex_spans(w, st->re, s, n);
        emit(w, out, s, ns, p->behavior, p->invert, first);
        break;
    case BPE_PRE_WHITESPACE:
        whitespace_split(w, out, s, n, first);
        break;
    case BPE_PRE_BERT:
    case BPE_PRE_WHITESPACE_SPLIT:
        bert_split(w, out, s, n, first, p->kind == BPE_PRE_BERT);
        break;
    case BPE_PRE_DIGITS:
        ns = char_spans(w, s, n, is_numeric, 0);
        emit(w, out, s, ns, p->individual_digits ? BPE_SPLIT_ISOLATED : BPE_SPLIT_CONTIGUOUS, 0,
             first);
        break;
    case BPE_PRE_BYTE_LEVEL: {
        BpeStr t = {0};
        if (p->add_prefix_space && s[0] != ' ') {
            bpe_str_put(&t, " ", 1);
            bpe_str_put(&t, s, n);
            if (t.failed) {
                w->failed = 1;
                return;
            }
            s = t.s;
            n = t.n;
        }
        if (p->no_regex)
            piece_add2(w, out, NULL, 0, s, n, first);
        for (size_t pos = 0; !p->no_regex && pos < n;) {
            size_t end = bpe_split_next(s, n, pos);
            piece_add2(w, out, NULL, 0, s + pos, end - pos, first && pos == 0);
            pos = end;
        }
        free(t.s);
        break;
    }
    case BPE_PRE_CUSTOM:
        for (size_t pos = 0; pos < n && !w->failed;) {
            size_t end = p->next(p->next_ctx, s, n, pos);
            if (end <= pos || end > n)
                end = n; /* a split that does not advance ends the piece */
            piece_add2(w, out, NULL, 0, s + pos, end - pos, first && pos == 0);
            pos = end;
        }
        break;
    case BPE_PRE_METASPACE: {
        BpeStr t = {0};
        const char *r = p->replacement;
        size_t rn = p->replacement_len;
        int starts = s[0] == ' ' || (n >= rn && memcmp(s, r, rn) == 0);
        if (!starts && (p->prepend_scheme == BPE_PREPEND_ALWAYS ||
                        (p->prepend_scheme == BPE_PREPEND_FIRST && first)))
            bpe_str_put(&t, r, rn);
        size_t from = 0;
        for (size_t i = 0; i < n; i++)
            if (s[i] == ' ') {
                bpe_str_put(&t, s + from, i - from);
                bpe_str_put(&t, r, rn);
                from = i + 1;
            }
        bpe_str_put(&t, s + from, n - from);
        if (t.failed) {
            w->failed = 1;
            free(t.s);
            return;
        }
        if (p->split) {
            ns = char_spans(w, t.s, t.n, is_char, st->repl_cp);
            emit(w, out, t.s, ns, BPE_SPLIT_MERGED_WITH_NEXT, 0, first);
        } else {
            piece_add2(w, out, NULL, 0, t.s, t.n, first);
        }
        free(t.s);
        break;
    }
    default:
        piece_add2(w, out, NULL, 0, s, n, first);
    }
}

const BpePieces *bpe_pre_run(BpePreWork *w, const BpePre *steps, int n, const char *text,
                             size_t len, int at_start)
{
    if (!w->md && !(w->md = pcre2_match_data_create(1, NULL)))
        return NULL;
    if (!w->mc) {
        if (!(w->mc = pcre2_match_context_create(NULL)))
            return NULL;
        pcre2_set_match_limit(w->mc, BPE_MATCH_LIMIT);
    }
    BpePieces *in = &w->a, *out = &w->b;
    pieces_clear(in);
    piece_add2(w, in, NULL, 0, text, len, at_start);
    for (int i = 0; i < n && !w->failed; i++) {
        pieces_clear(out);
        for (int k = 0; k < in->n && !w->failed; k++)
            pre_step(w, &steps[i], in->buf + in->off[k], in->len[k], in->first[k], out);
        BpePieces *t = in;
        in = out;
        out = t;
    }
    return w->failed ? NULL : in;
}

void bpe_pre_work_free(BpePreWork *w)
{
    pieces_free(&w->a);
    pieces_free(&w->b);
    free(w->span);
    pcre2_match_data_free(w->md);
    pcre2_match_context_free(w->mc);
    memset(w, 0, sizeof *w);
}
