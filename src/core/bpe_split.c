/* GPT-2's pre-tokenizer by hand: invalid UTF-8 to U+FFFD, the characters'
 * classes as Hugging Face's Oniguruma has them (utf8proc's tables and
 * bpe_unicode.c's Unicode 16.0 differences), and the pattern
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * one piece at a time. Not the merges (bpe.c). */
#include "bpe_split.h"

#include "attnviz/bpe.h"
#include "bpe_unicode.h"

#include <string.h>
#include <utf8proc.h>

enum { C_OTHER, C_LETTER, C_NUMBER, C_SPACE };

/* ASCII's classes: the pattern's \p{L}, \p{N}, \s (tab to CR and space) */
static const unsigned char ascii_class[128] = {
    ['\t'] = C_SPACE, ['\n'] = C_SPACE, ['\v'] = C_SPACE, ['\f'] = C_SPACE,
    ['\r'] = C_SPACE, [' '] = C_SPACE,
    ['0'] = C_NUMBER, ['1'] = C_NUMBER, ['2'] = C_NUMBER, ['3'] = C_NUMBER,
    ['4'] = C_NUMBER, ['5'] = C_NUMBER, ['6'] = C_NUMBER, ['7'] = C_NUMBER,
    ['8'] = C_NUMBER, ['9'] = C_NUMBER,
    ['A'] = C_LETTER, ['B'] = C_LETTER, ['C'] = C_LETTER, ['D'] = C_LETTER,
    ['E'] = C_LETTER, ['F'] = C_LETTER, ['G'] = C_LETTER, ['H'] = C_LETTER,
    ['I'] = C_LETTER, ['J'] = C_LETTER, ['K'] = C_LETTER, ['L'] = C_LETTER,
    ['M'] = C_LETTER, ['N'] = C_LETTER, ['O'] = C_LETTER, ['P'] = C_LETTER,
    ['Q'] = C_LETTER, ['R'] = C_LETTER, ['S'] = C_LETTER, ['T'] = C_LETTER,
    ['U'] = C_LETTER, ['V'] = C_LETTER, ['W'] = C_LETTER, ['X'] = C_LETTER,
    ['Y'] = C_LETTER, ['Z'] = C_LETTER,
    ['a'] = C_LETTER, ['b'] = C_LETTER, ['c'] = C_LETTER, ['d'] = C_LETTER,
    ['e'] = C_LETTER, ['f'] = C_LETTER, ['g'] = C_LETTER, ['h'] = C_LETTER,
    ['i'] = C_LETTER, ['j'] = C_LETTER, ['k'] = C_LETTER, ['l'] = C_LETTER,
    ['m'] = C_LETTER, ['n'] = C_LETTER, ['o'] = C_LETTER, ['p'] = C_LETTER,
    ['q'] = C_LETTER, ['r'] = C_LETTER, ['s'] = C_LETTER, ['t'] = C_LETTER,
    ['u'] = C_LETTER, ['v'] = C_LETTER, ['w'] = C_LETTER, ['x'] = C_LETTER,
    ['y'] = C_LETTER, ['z'] = C_LETTER,
};

int bpe_is_space(unsigned cp)
{
    if (cp < 128)
        return ascii_class[cp] == C_SPACE;
    if (cp == 0x85)
        return 1;
    utf8proc_category_t c = (utf8proc_category_t)bpe_ucat(cp);
    return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

static int char_class(unsigned cp)
{
    if (cp < 128)
        return ascii_class[cp];
    if (cp > 0x10FFFF)
        return C_OTHER;
    switch ((utf8proc_category_t)bpe_ucat(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
        return C_LETTER;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return C_NUMBER;
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
        return C_SPACE;
    default:
        return cp == 0x85 ? C_SPACE : C_OTHER;
    }
}

/* The regex crate's \w, which single_word added tokens check beside them:
 * letters, marks, decimal and letter numbers, connector punctuation, ZWNJ
 * and ZWJ. */
int bpe_is_word_char(unsigned cp)
{
    if (cp < 128)
        return ascii_class[cp] == C_LETTER || ascii_class[cp] == C_NUMBER || cp == '_';
    if (cp == 0x200C || cp == 0x200D)
        return 1;
    if (cp > 0x10FFFF)
        return 0;
    utf8proc_category_t c = (utf8proc_category_t)bpe_ucat(cp);
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_ND) ||
           c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_PC;
}

/* ---- UTF-8 ------------------------------------------------------------- */

/* Length of the well-formed sequence at s (Unicode's table 3-7) or, when
 * there is none, minus the length of its maximal subpart (at least 1). */
static int utf8_seq(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    unsigned lo = 0x80, hi = 0xBF;
    int n;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) { n = 3; lo = 0xA0; }
    else if (c == 0xED) { n = 3; hi = 0x9F; }
    else if (c >= 0xE1 && c <= 0xEF) n = 3;
    else if (c == 0xF0) { n = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) { n = 4; hi = 0x8F; }
    else return -1;
    if (avail < 2 || s[1] < lo || s[1] > hi)
        return -1;
    for (int i = 2; i < n; i++)
        if ((size_t)i >= avail || (s[i] & 0xC0) != 0x80)
            return -i;
    return n;
}

/* The code point at s (a sequence utf8_seq found well-formed, n bytes). */
static unsigned utf8_cp(const unsigned char *s, int n)
{
    if (n == 1)
        return s[0];
    unsigned cp = s[0] & (0xFFu >> (n + 1));
    for (int i = 1; i < n; i++)
        cp = (cp << 6) | (s[i] & 0x3Fu);
    return cp;
}

size_t bpe_utf8_clean(char *out, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0, i = 0;
    while (i < len) {
        size_t run = i; /* copy the valid run at once */
        int n;
        while (i < len && (n = utf8_seq(s + i, len - i)) > 0)
            i += (size_t)n;
        memcpy(out + o, text + run, i - run);
        o += i - run;
        if (i < len) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += (size_t)-utf8_seq(s + i, len - i);
        }
    }
    return o;
}

/* The code point at text[pos] and its class; *n its bytes (a byte that is
 * not well-formed UTF-8 counts as one character of class C_OTHER). */
static int class_at(const char *text, size_t len, size_t pos, int *n)
{
    const unsigned char *s = (const unsigned char *)text + pos;
    if (s[0] < 0x80) {
        *n = 1;
        return ascii_class[s[0]];
    }
    int k = utf8_seq(s, len - pos);
    if (k < 0) {
        *n = 1;
        return C_OTHER;
    }
    *n = k;
    return char_class(utf8_cp(s, k));
}

/* Whether the code point ending just before pos (or starting at pos) is a
 * \w character, for single_word added tokens. */
int bpe_word_before(const char *text, size_t pos)
{
    if (pos == 0)
        return 0;
    const unsigned char *s = (const unsigned char *)text;
    size_t start = pos - 1;
    while (start > 0 && pos - start < 4 && (s[start] & 0xC0) == 0x80)
        start--;
    int n = utf8_seq(s + start, pos - start);
    if (n <= 0 || start + (size_t)n != pos)
        return 0;
    return bpe_is_word_char(utf8_cp(s + start, n));
}

int bpe_word_after(const char *text, size_t len, size_t pos)
{
    if (pos >= len)
        return 0;
    const unsigned char *s = (const unsigned char *)text + pos;
    int n = utf8_seq(s, len - pos);
    return n > 0 && bpe_is_word_char(utf8_cp(s, n));
}

/* The white space (White_Space characters) ending at pos starts at the
 * result; the white space starting at pos ends at bpe_space_after's. */
size_t bpe_space_before(const char *text, size_t from, size_t pos)
{
    const unsigned char *s = (const unsigned char *)text;
    while (pos > from) {
        size_t start = pos - 1;
        while (start > from && pos - start < 4 && (s[start] & 0xC0) == 0x80)
            start--;
        int n = utf8_seq(s + start, pos - start);
        if (n <= 0 || start + (size_t)n != pos || !bpe_is_space(utf8_cp(s + start, n)))
            break;
        pos = start;
    }
    return pos;
}

size_t bpe_space_after(const char *text, size_t len, size_t pos)
{
    int n;
    while (pos < len && class_at(text, len, pos, &n) == C_SPACE)
        pos += (size_t)n;
    return pos;
}

/* ---- the pattern ----------------------------------------------------------- */

size_t bpe_split_next(const char *text, size_t len, size_t pos)
{
    const char *s = text;
    int n;
    /* 's 't 're 've 'm 'll 'd (lower case only, as GPT-2's pattern) */
    if (s[pos] == '\'' && pos + 1 < len) {
        char c = s[pos + 1];
        if (c == 's' || c == 't' || c == 'm' || c == 'd')
            return pos + 2;
        if (pos + 2 < len && ((c == 'r' && s[pos + 2] == 'e') || (c == 'v' && s[pos + 2] == 'e') ||
                              (c == 'l' && s[pos + 2] == 'l')))
            return pos + 3;
    }
    /* ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a
     * run of one class */
    size_t p = pos;
    int cls = class_at(s, len, p, &n);
    if (s[p] == ' ' && p + 1 < len) {
        int m;
        int next = class_at(s, len, p + 1, &m);
        if (next != C_SPACE) {
            p++;
            cls = next;
            n = m;
        }
    }
    if (cls != C_SPACE) {
        p += (size_t)n;
        while (p < len && class_at(s, len, p, &n) == cls)
            p += (size_t)n;
        return p;
    }
    /* `\s+(?!\S)`: a run of white space, less its last character when a
     * non-space follows; `\s+`: that last character alone */
    size_t last = p;
    p += (size_t)n;
    while (p < len && class_at(s, len, p, &n) == C_SPACE) {
        last = p;
        p += (size_t)n;
    }
    if (p == len || last == pos)
        return p;
    return last;
}
