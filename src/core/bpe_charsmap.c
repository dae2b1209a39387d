/* tokenizer.json's Precompiled normalizer: SentencePiece's compiled
 * character map (a Darts double-array trie over UTF-8 bytes and its
 * normalized strings), run as Hugging Face's tokenizers runs it
 * (spm_precompiled's transform, normalizers/precompiled.rs), which is not
 * SentencePiece's own longest match over the text: the unit is the
 * extended grapheme cluster, and the key taken is the first (shortest) one
 * on the way. Not the base64 of tokenizer.json (src/io/bpe_files.c). */
#include "bpe_charsmap.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "attnviz/tokenizer.h"

int bpe_charsmap_parse(BpeCharsmap *m, const void *blob, size_t len, AttnErr *err)
{
    const unsigned char *p = blob;
    memset(m, 0, sizeof *m);
    if (len < 4)
        return attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                            "precompiled_charsmap is %zu bytes: shorter than its 4-byte trie size",
                            len);
    uint32_t size = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                    (uint32_t)p[3] << 24;
    size_t n_unit = size / 4;
    if (n_unit > (len - 4) / 4)
        return attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                            "precompiled_charsmap: its trie size %u is past its end (%zu bytes "
                            "after the size)", size, len - 4);
    if (n_unit == 0)
        return attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                            "precompiled_charsmap: the trie is empty (size %u)", size);
    const unsigned char *norm = p + 4 + 4 * n_unit;
    size_t n_norm = len - 4 - 4 * n_unit;
    for (size_t i = 0; i < n_norm;) {
        int k = tok_utf8_len(norm + i, n_norm - i);
        if (k <= 0)
            return attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                                "precompiled_charsmap: the normalized strings are not UTF-8 "
                                "(byte %zu of them)", i);
        i += (size_t)k;
    }
    m->unit = malloc(n_unit * sizeof *m->unit);
    m->norm = malloc(n_norm + 1);
    if (!m->unit || !m->norm) {
        bpe_charsmap_free(m);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    }
    for (size_t i = 0; i < n_unit; i++) {
        const unsigned char *u = p + 4 + 4 * i;
        m->unit[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 |
                     (uint32_t)u[3] << 24;
    }
    if (n_norm)
        memcpy(m->norm, norm, n_norm);
    m->norm[n_norm] = '\0';
    m->n_unit = n_unit;
    m->n_norm = n_norm;
    return 0;
}

void bpe_charsmap_free(BpeCharsmap *m)
{
    free(m->unit);
    free(m->norm);
    memset(m, 0, sizeof *m);
}

/* A Darts unit's parts (SentencePiece's darts.h). */
static size_t unit_offset(uint32_t u)
{
    return (size_t)(u >> 10) << ((u & (1u << 9)) >> 6);
}

static uint32_t unit_label(uint32_t u)
{
    return u & ((1u << 31) | 0xFF);
}

const char *bpe_charsmap_match(const BpeCharsmap *m, const char *s, size_t n, size_t *len)
{
    *len = 0;
    if (!m->n_unit)
        return NULL;
    size_t node = unit_offset(m->unit[0]);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0)
            break;
        node ^= c;
        if (node >= m->n_unit || unit_label(m->unit[node]) != c)
            return NULL;
        uint32_t u = m->unit[node];
        node ^= unit_offset(u);
        if ((u >> 8) & 1) { /* a key ends here: its value is the next unit's */
            if (node >= m->n_unit)
                return NULL;
            size_t at = m->unit[node] & ((1u << 31) - 1);
            /* tokenizers would panic past the strings or inside a character */
            if (at >= m->n_norm || ((unsigned char)m->norm[at] & 0xC0) == 0x80)
                return NULL;
            *len = strlen(m->norm + at); /* m->norm ends with a NUL */
            return m->norm + at;
        }
    }
    return NULL;
}

typedef struct Out {
    char *s;
    size_t n, cap;
    int failed;
} Out;

static void put(Out *o, const char *p, size_t n)
{
    if (o->failed)
        return;
    if (o->cap - o->n < n + 1) {
        size_t cap = o->cap ? o->cap : 64;
        while (cap - o->n < n + 1)
            cap *= 2;
        char *s = realloc(o->s, cap);
        if (!s) {
            o->failed = 1;
            return;
        }
        o->s = s;
        o->cap = cap;
    }
    if (n)
        memcpy(o->s + o->n, p, n);
    o->n += n;
    o->s[o->n] = '\0';
}

static int char_at(const char *t, size_t n, size_t i, unsigned *cp)
{
    int k = tok_utf8_decode((const unsigned char *)t + i, n - i, cp);
    return k > 0 ? k : 1;
}

int bpe_charsmap_normalize(const BpeCharsmap *m, const char *text, size_t len, char **out,
                           size_t *out_len)
{
    Out o = {0};
    utf8proc_int32_t state = 0;
    unsigned cp = 0, next;
    int k = len ? char_at(text, len, 0, &cp) : 0;
    put(&o, "", 0);
    for (size_t i = 0; i < len;) {
        /* the grapheme cluster [i, j): one state across the text, as
         * unicode-segmentation walks it */
        size_t j = i + (size_t)k;
        while (j < len) {
            k = char_at(text, len, j, &next);
            int brk = utf8proc_grapheme_break_stateful((utf8proc_int32_t)cp,
                                                       (utf8proc_int32_t)next, &state);
            cp = next;
            if (brk)
                break;
            j += (size_t)k;
        }
        size_t rn;
        const char *r = j - i < 6 ? bpe_charsmap_match(m, text + i, j - i, &rn) : NULL;
        if (r) {
            put(&o, r, rn);
        } else {
            for (size_t c = i; c < j;) {
                unsigned unused;
                size_t ck = (size_t)char_at(text, j, c, &unused);
                r = bpe_charsmap_match(m, text + c, ck, &rn);
                put(&o, r ? r : text + c, r ? rn : ck);
                c += ck;
            }
        }
        i = j;
    }
    if (o.failed) {
        free(o.s);
        return -ATTN_E_NOMEM;
    }
    *out = o.s;
    *out_len = o.n;
    return 0;
}
