/* Tokenizer: splits UTF-8 text into lower-cased words, punctuation and CJK
 * characters.
 * Pure C, no allocation per token: one growing buffer holds every text. */
#include "attnviz/tokenizer.h"
#include "attnviz/error.h"

#include <stdlib.h>
#include <string.h>

void tok_init(TokenList *tl)
{
    memset(tl, 0, sizeof *tl);
}

void tok_free(TokenList *tl)
{
    free(tl->buf);
    tok_init(tl);
}

int tok_utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n;
    unsigned min;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; min = 0x10000; }
    else return 0;
    if ((size_t)n > avail)
        return 0;
    unsigned cp = c & (0xFF >> (n + 1));
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static unsigned decode(const unsigned char *s, int n)
{
    if (n == 1)
        return s[0];
    unsigned cp = s[0] & (0xFF >> (n + 1));
    for (int i = 1; i < n; i++)
        cp = (cp << 6) | (s[i] & 0x3F);
    return cp;
}

static int is_space(unsigned cp)
{
    return cp == 0 || cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0xA0 ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x3000 ||
           (cp >= 0x2000 && cp <= 0x200A);
}

static int is_punct(unsigned cp)
{
    switch (cp) {
    case '.': case ',': case ';': case ':': case '!': case '?': case '"':
    case '(': case ')': case '[': case ']': case '{': case '}':
    case 0x00A1: case 0x00BF:                 /* ¡ ¿ */
    case 0x00AB: case 0x00BB:                 /* « » */
    case 0x201C: case 0x201D: case 0x201E:    /* “ ” „ */
    case 0x2026: case 0x2014: case 0x2013:    /* … — – */
    case 0x3001: case 0x3002: case 0x30FB:    /* 、 。 ・ */
    case 0xFF01: case 0xFF08: case 0xFF09:    /* fullwidth ! ( ) */
    case 0xFF0C: case 0xFF0E: case 0xFF1A:    /* fullwidth , . : */
    case 0xFF1B: case 0xFF1F:                 /* fullwidth ; ? */
    case 0xFF3B: case 0xFF3D: case 0xFF5B: case 0xFF5D: /* fullwidth [ ] { } */
        return 1;
    default:
        /* CJK brackets: 〈 〉 《 》 「 」 『 』 【 】 and 〔 … 〛 */
        return (cp >= 0x3008 && cp <= 0x3011) || (cp >= 0x3014 && cp <= 0x301B);
    }
}

/* Characters that are words on their own. BERT's BasicTokenizer puts spaces
 * around CJK ideographs (its _is_chinese_char ranges, the first eight below)
 * because Chinese is written without spaces; kana and Hangul syllables are
 * split the same way here so that Japanese and Korean text is never one
 * long token either: one token per character. */
static int is_cjk(unsigned cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F) ||
           (cp >= 0x3040 && cp <= 0x30FF) ||   /* hiragana, katakana */
           (cp >= 0xFF66 && cp <= 0xFF9F) ||   /* halfwidth katakana */
           (cp >= 0xAC00 && cp <= 0xD7A3);     /* Hangul syllables */
}

static int reserve(TokenList *tl, size_t need)
{
    if (need <= tl->cap)
        return 0;
    size_t cap = tl->cap ? tl->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(tl->buf, cap);
    if (!p)
        return -ATTN_E_NOMEM;
    tl->buf = p;
    tl->cap = cap;
    return 0;
}

/* Token assembly state while scanning. */
typedef struct {
    TokenList *tl;
    size_t used;   /* bytes written to tl->buf */
    int open;      /* a token is being written */
    int keep;      /* ... and it is under the cap */
    int failed;    /* out of memory */
} Scan;

static void token_begin(Scan *sc, size_t src)
{
    TokenList *tl = sc->tl;
    sc->open = 1;
    sc->keep = tl->n_total < ATTN_MAX_TOKENS;
    tl->n_total++;
    if (sc->keep) {
        tl->off[tl->n] = sc->used;
        tl->src_start[tl->n] = src;
        tl->src_len[tl->n] = 0;
    }
}

static void token_end(Scan *sc)
{
    if (sc->open && sc->keep && !sc->failed) {
        sc->tl->buf[sc->used++] = '\0';
        sc->tl->n++;
    }
    sc->open = sc->keep = 0;
}

static void token_put(Scan *sc, const void *bytes, size_t n, size_t src_end)
{
    if (!sc->keep)
        return;
    /* room for these bytes and the NUL; kept tokens only, so a huge text
     * past the 1024th token costs nothing */
    if (reserve(sc->tl, sc->used + n + 1) < 0) {
        sc->failed = 1;
        return;
    }
    memcpy(sc->tl->buf + sc->used, bytes, n);
    sc->used += n;
    sc->tl->src_len[sc->tl->n] = src_end - sc->tl->src_start[sc->tl->n];
}

int tok_split(TokenList *tl, const char *text, size_t len)
{
    static const unsigned char fffd[3] = {0xEF, 0xBF, 0xBD};
    const unsigned char *s = (const unsigned char *)text;
    Scan sc = {tl, 0, 0, 0, 0};

    tl->n = tl->n_total = tl->n_replaced = 0;
    if (reserve(tl, 1) < 0)
        return -ATTN_E_NOMEM;

    for (size_t i = 0; i < len;) {
        int n = tok_utf8_len(s + i, len - i);
        unsigned cp;
        char lower;
        const void *bytes = s + i;
        size_t nbytes = (size_t)(n ? n : 1);
        if (n == 0) {
            cp = 0xFFFD;
            bytes = fffd;
            nbytes = 3;
            tl->n_replaced++;
            n = 1;
        } else {
            cp = decode(s + i, n);
        }
        if (cp >= 'A' && cp <= 'Z') {
            lower = (char)(cp - 'A' + 'a');
            bytes = &lower;
        }
        if (is_space(cp)) {
            token_end(&sc);
        } else if (is_punct(cp) || is_cjk(cp)) {
            token_end(&sc);
            token_begin(&sc, i);
            token_put(&sc, bytes, nbytes, i + (size_t)n);
            token_end(&sc);
        } else {
            if (!sc.open)
                token_begin(&sc, i);
            token_put(&sc, bytes, nbytes, i + (size_t)n);
        }
        i += (size_t)n;
    }
    token_end(&sc);
    if (sc.failed) {
        tl->n = 0;
        return -ATTN_E_NOMEM;
    }
    return 0;
}

int tok_is_punct(const TokenList *tl, int i)
{
    const unsigned char *t = (const unsigned char *)tok_text(tl, i);
    size_t len = strlen((const char *)t);
    int n = tok_utf8_len(t, len);
    return n > 0 && (size_t)n == len && is_punct(decode(t, n));
}

int tok_utf8_decode(const unsigned char *s, size_t avail, unsigned *cp)
{
    int n = tok_utf8_len(s, avail);
    *cp = n ? decode(s, n) : 0xFFFD;
    return n;
}
