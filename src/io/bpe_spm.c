/* What tokenizer.json's SentencePiece parts need read exactly as Hugging
 * Face's tokenizers reads them: the Precompiled normalizer's base64 and the
 * Unigram scores' numbers as serde_json parses them. No JSON here
 * (bpe_files.c). */
#include "bpe_spm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Standard base64 with its padding, as tokenizers' Precompiled reads it
 * (base64's STANDARD engine: no white space, no bits left over) into
 * *out (malloc'ed, *len bytes); -1 when it is not that or out of memory. */
int bpe_base64_decode(const char *s, unsigned char **out, size_t *len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), pad = 0;
    *out = NULL;
    *len = 0;
    if (n % 4)
        return -1;
    while (pad < 2 && pad < n && s[n - 1 - pad] == '=')
        pad++;
    unsigned char *o = malloc(n / 4 * 3 + 1);
    if (!o)
        return -1;
    size_t k = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < n - pad; i++) {
        const char *c = s[i] ? strchr(abc, s[i]) : NULL;
        if (!c) {
            free(o);
            return -1;
        }
        acc = acc << 6 | (uint32_t)(c - abc);
        if (i % 4 == 3) {
            o[k++] = (unsigned char)(acc >> 16);
            o[k++] = (unsigned char)(acc >> 8);
            o[k++] = (unsigned char)acc;
            acc = 0;
        }
    }
    if ((pad == 1 && (acc & 3)) || (pad == 2 && (acc & 15))) { /* bits left over */
        free(o);
        return -1;
    }
    if (pad == 1) {
        o[k++] = (unsigned char)(acc >> 10);
        o[k++] = (unsigned char)(acc >> 2);
    } else if (pad == 2) {
        o[k++] = (unsigned char)(acc >> 4);
    }
    *out = o;
    *len = k;
    return 0;
}

void bpe_pow10(double pow10[309])
{
    char tmp[16];
    for (int i = 0; i < 309; i++) { /* strtod rounds correctly, as Rust's literals */
        snprintf(tmp, sizeof tmp, "1e%d", i);
        pow10[i] = strtod(tmp, NULL);
    }
}

/* serde_json's f64_from_parts (without float_roundtrip, as tokenizers
 * builds it): the digits as a u64 rounded to a double, then one multiply or
 * divide by a power of ten, two roundings where strtod has one. A score
 * 1 ULP away from strtod's moves Viterbi's near-ties, so the ids follow
 * tokenizers only with its own reading. -1 when out of range. */
static int f64_from_parts(int neg, uint64_t sig, long exp, const double *pow10, double *out)
{
    double f = (double)sig;
    for (;;) {
        long a = exp < 0 ? -exp : exp;
        if (a <= 308) {
            if (exp >= 0) {
                f *= pow10[a];
                if (isinf(f))
                    return -1;
            } else {
                f /= pow10[a];
            }
            break;
        }
        if (f == 0.0)
            break;
        if (exp >= 0)
            return -1;
        f /= 1e308;
        exp += 308;
    }
    *out = neg ? -f : f;
    return 0;
}

static int is_digit(const char *p, const char *e)
{
    return p < e && *p >= '0' && *p <= '9';
}

/* The JSON number at p as serde_json parses it (its parse_integer,
 * parse_long_integer, parse_decimal, parse_exponent): digits past what a
 * u64 holds are dropped (the integer's counted in the exponent). 0 or -1. */
int bpe_serde_number(const char *p, const char *e, const double *pow10, double *out)
{
    const uint64_t top = UINT64_MAX / 10, last = UINT64_MAX % 10;
#define OVERFLOWS(s, dg) ((s) >= top && ((s) > top || (uint64_t)(dg) > last))
    int neg = p < e && *p == '-', full = 0;
    uint64_t sig = 0;
    long exp = 0;
    p += neg;
    if (!is_digit(p, e))
        return -1;
    if (*p == '0') {
        if (is_digit(++p, e))
            return -1;
    }
    for (; is_digit(p, e); p++) {
        int dg = *p - '0';
        if (full || OVERFLOWS(sig, dg))
            full = 1, exp++;
        else
            sig = sig * 10 + (uint64_t)dg;
    }
    if (p < e && *p == '.') {
        int any = 0;
        full = 0;
        for (p++; is_digit(p, e); p++, any = 1) {
            int dg = *p - '0';
            if (full || OVERFLOWS(sig, dg)) {
                full = 1;
                continue;
            }
            sig = sig * 10 + (uint64_t)dg;
            exp--;
        }
        if (!any)
            return -1;
    }
#undef OVERFLOWS
    if (p < e && (*p == 'e' || *p == 'E')) {
        int pos = 1;
        long x = 0;
        if (++p < e && (*p == '+' || *p == '-'))
            pos = *p++ == '+';
        if (!is_digit(p, e))
            return -1;
        for (; is_digit(p, e); p++) {
            if (x > (INT32_MAX - (*p - '0')) / 10) { /* serde: 0, or out of range */
                if (sig != 0 && pos)
                    return -1;
                *out = neg ? -0.0 : 0.0;
                return 0;
            }
            x = x * 10 + (*p - '0');
        }
        exp = pos ? exp + x : exp - x;
    }
    return f64_from_parts(neg, sig, exp, pow10, out);
}
