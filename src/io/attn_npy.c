/* .npy attention files: numpy's format (magic, version 1.0/2.0/3.0, a
 * Python dict literal header in any key order), parsed in place: the AttnFile
 * points into the bytes, nothing is copied. The header parser is shared with
 * the .npz reader (attn_npy.h). */
#include "attn_npy.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnio.h"

/* A cursor over the header dict's text. */
typedef struct Lex {
    const char *p, *end;
} Lex;

static void skip_ws(Lex *x)
{
    while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r'))
        x->p++;
}

static int eat(Lex *x, char c)
{
    skip_ws(x);
    if (x->p < x->end && *x->p == c) {
        x->p++;
        return 1;
    }
    return 0;
}

/* A quoted string ('...' or "...", no escapes) into buf; 0 or -1. */
static int lex_string(Lex *x, char *buf, size_t n)
{
    skip_ws(x);
    if (x->p >= x->end || (*x->p != '\'' && *x->p != '"'))
        return -1;
    char q = *x->p++;
    size_t k = 0;
    while (x->p < x->end && *x->p != q) {
        if (*x->p == '\\' || k + 1 >= n)
            return -1;
        buf[k++] = *x->p++;
    }
    if (x->p >= x->end)
        return -1;
    x->p++;
    buf[k] = '\0';
    return 0;
}

/* A shape tuple "(a, b, )" into h; 0 or -1. */
static int lex_shape(Lex *x, NpyHeader *h)
{
    if (!eat(x, '('))
        return -1;
    h->ndim = 0;
    for (;;) {
        skip_ws(x);
        if (eat(x, ')'))
            return 0;
        if (x->p >= x->end || *x->p < '0' || *x->p > '9' || h->ndim >= NPY_MAX_DIMS)
            return -1;
        uint64_t v = 0;
        while (x->p < x->end && *x->p >= '0' && *x->p <= '9') {
            if (v > ((uint64_t)1 << 48))
                return -1;
            v = v * 10 + (uint64_t)(*x->p++ - '0');
        }
        if (x->p < x->end && *x->p == 'L') /* Python 2's long */
            x->p++;
        h->shape[h->ndim++] = v;
        if (!eat(x, ',')) {
            skip_ws(x);
            return eat(x, ')') ? 0 : -1;
        }
    }
}

static int lex_word(Lex *x, const char *w)
{
    size_t n = strlen(w);
    skip_ws(x);
    if ((size_t)(x->end - x->p) >= n && memcmp(x->p, w, n) == 0) {
        x->p += n;
        return 1;
    }
    return 0;
}

/* The dict {'descr': ..., 'fortran_order': ..., 'shape': (...)}; a short
 * reason on error. */
static const char *parse_dict(Lex *x, NpyHeader *h)
{
    int seen = 0;
    char key[32];
    if (!eat(x, '{'))
        return "does not start with '{'";
    for (;;) {
        if (eat(x, '}'))
            break;
        if (lex_string(x, key, sizeof key) < 0)
            return "expected a quoted key";
        if (!eat(x, ':'))
            return "expected ':' after a key";
        int bit = !strcmp(key, "descr") ? 1 : !strcmp(key, "fortran_order") ? 2
                : !strcmp(key, "shape") ? 4 : 0;
        if (!bit)
            return "has a key other than descr, fortran_order and shape";
        if (seen & bit)
            return "has a key twice";
        seen |= bit;
        if (bit == 1 && lex_string(x, h->descr, sizeof h->descr) < 0)
            return "descr is not a short quoted string";
        if (bit == 2) {
            if (lex_word(x, "True"))
                h->fortran = 1;
            else if (lex_word(x, "False"))
                h->fortran = 0;
            else
                return "fortran_order is neither True nor False";
        }
        if (bit == 4 && lex_shape(x, h) < 0)
            return "shape is not a tuple of at most 8 sizes";
        if (!eat(x, ',')) {
            if (!eat(x, '}'))
                return "expected ',' or '}'";
            break;
        }
    }
    if (seen != 7)
        return !(seen & 1) ? "has no descr" : !(seen & 2) ? "has no fortran_order" : "has no shape";
    skip_ws(x);
    while (x->p < x->end && *x->p == '\0') /* lenient: NUL padding */
        x->p++;
    if (x->p != x->end)
        return "has text after the closing '}'";
    return NULL;
}

/* "member: " before a message about an npz member, "" for a .npy file. */
static const char *lead(const char *what, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", what ? what : "", what ? ": " : "");
    return buf;
}

int attn_npy_header(NpyHeader *h, const void *data, size_t len, const char *what,
                    const char *name, AttnErr *err)
{
    char lb[80];
    const unsigned char *p = data;
    memset(h, 0, sizeof *h);
    if (len < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "%snot a .npy array (no \\x93NUMPY magic)",
                            lead(what, lb, sizeof lb));
    size_t hlen, start;
    if (p[6] == 1) {
        hlen = (size_t)p[8] | (size_t)p[9] << 8;
        start = 10;
    } else if (p[6] == 2 || p[6] == 3) {
        if (len < 12)
            return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                "%sthe header length runs past the end",
                                lead(what, lb, sizeof lb));
        hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
        start = 12;
    } else {
        return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0, "%sunsupported .npy version %d.%d",
                            lead(what, lb, sizeof lb), p[6], p[7]);
    }
    if (hlen > len - start)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "%sheader length %zu runs past the end (%zu bytes)",
                            lead(what, lb, sizeof lb), hlen, len);
    Lex x = {(const char *)p + start, (const char *)p + start + hlen};
    const char *why = parse_dict(&x, h);
    if (why)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "%sbad .npy header: the dict %s",
                            lead(what, lb, sizeof lb), why);
    h->data_off = start + hlen;
    h->data_len = len - h->data_off;
    return 0;
}

const char *attn_npy_shape_str(const NpyHeader *h, char *buf, size_t n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < h->ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRIu64, i ? ", " : "", h->shape[i]);
    if (k < n)
        snprintf(buf + k, n - k, h->ndim == 1 ? ",)" : ")");
    return buf;
}

int attn_npy_float_dtype(const NpyHeader *h, AttnDtype *dt, int *big_endian, const char *what,
                         const char *name, AttnErr *err)
{
    char lb[80];
    const char *d = h->descr;
    if (strlen(d) == 3 && (d[0] == '<' || d[0] == '>' || d[0] == '=') && d[1] == 'f') {
        *big_endian = d[0] == '>';
        if (d[2] == '2' || d[2] == '4' || d[2] == '8') {
            *dt = d[2] == '2' ? ATTN_DT_F16 : d[2] == '4' ? ATTN_DT_F32 : ATTN_DT_F64;
            return 0;
        }
    }
    return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                        "%sunknown dtype %s (float16, float32 or float64 expected)",
                        lead(what, lb, sizeof lb), d);
}

/* The shape as (L, H, Tq, Tk), or a reason. */
static const char *shape4(const NpyHeader *h, int layer_only, uint64_t d[4])
{
    const uint64_t *s = h->shape;
    int n = h->ndim;
    if (layer_only && !(n == 3 || (n == 4 && s[0] == 1)))
        return "a layer must be H×T×T or 1×H×T×T";
    if (n == 2) {
        d[0] = 1; d[1] = 1; d[2] = s[0]; d[3] = s[1];
    } else if (n == 3) {
        d[0] = 1; d[1] = s[0]; d[2] = s[1]; d[3] = s[2];
    } else if (n == 4) {
        d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = s[3];
    } else if (n == 5 && s[1] == 1) {
        d[0] = s[0]; d[1] = s[2]; d[2] = s[3]; d[3] = s[4];
    } else if (n == 5) {
        return "the batch (second size) must be 1";
    } else {
        return "attention must be T×T, H×T×T, L×H×T×T or L×1×H×T×T";
    }
    if (d[0] < 1 || d[1] < 1 || d[2] < 1 || d[3] < 1)
        return "a size is 0";
    if (d[0] > ATTN_FILE_MAX_LAYERS)
        return "more than 256 layers";
    if (d[1] > ATTN_FILE_MAX_HEADS)
        return "more than 256 heads";
    if (d[2] > ATTN_FILE_MAX_TOKENS || d[3] > ATTN_FILE_MAX_TOKENS)
        return "more than 8192 tokens";
    return NULL;
}

int attn_npy_part(AttnPart *part, const NpyHeader *h, const void *p, int layer_only,
                  const char *what, const char *name, AttnErr *err)
{
    char lb[80];
    char sh[128];
    uint64_t d[4];
    memset(part, 0, sizeof *part);
    int rc = attn_npy_float_dtype(h, &part->dtype, &part->big_endian, what, name, err);
    if (rc < 0)
        return rc;
    const char *why = shape4(h, layer_only, d);
    if (why)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0, "%sshape %s: %s",
                            lead(what, lb, sizeof lb), attn_npy_shape_str(h, sh, sizeof sh), why);
    /* each factor is at most 8192, so the product (at most 2^45) cannot
     * overflow 64 bits; a 32-bit size_t (wasm32) would wrap it */
    uint64_t esize = (uint64_t)(h->descr[2] - '0');
    uint64_t need = d[0] * d[1] * d[2] * d[3] * esize;
    if ((uint64_t)h->data_len < need)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "%struncated: shape %s of %s needs %" PRIu64 " bytes of data, found %zu",
                            lead(what, lb, sizeof lb), attn_npy_shape_str(h, sh, sizeof sh),
                            h->descr, need, h->data_len);
    part->data = (const unsigned char *)p + h->data_off;
    part->fortran = h->fortran;
    part->L = (int)d[0];
    part->H = (int)d[1];
    part->Tq = (int)d[2];
    part->Tk = (int)d[3];
    return 0;
}

int attn_npy_parse(AttnFile *f, const void *data, size_t len, const char *name, AttnErr *err)
{
    NpyHeader h;
    memset(f, 0, sizeof *f);
    int rc = attn_npy_header(&h, data, len, NULL, name, err);
    if (rc == 0)
        rc = attn_npy_part(&f->parts[0], &h, data, 0, NULL, name, err);
    if (rc < 0) {
        memset(f, 0, sizeof *f);
        return rc;
    }
    f->n_parts = 1;
    f->L = f->parts[0].L;
    f->H = f->parts[0].H;
    f->Tq = f->parts[0].Tq;
    f->Tk = f->parts[0].Tk;
    f->cross = f->Tq != f->Tk;
    snprintf(f->name, sizeof f->name, "%s", name ? name : "");
    return 0;
}

/* Length of the well-formed UTF-8 sequence at s (Unicode table 3-7), or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (c >= 0x01 && c <= 0x7F)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) { n = 3; lo = 0xA0; }
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) n = 3;
    else if (c == 0xED) { n = 3; hi = 0x9F; }
    else if (c == 0xF0) { n = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) { n = 4; hi = 0x8F; }
    else return 0;
    if (n > avail || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

char *attn_utf8_clean_dup(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n > SIZE_MAX / 3 - 1)
        return NULL;
    char *out = malloc(n * 3 + 1), *o = out; /* U+FFFD is 3 bytes for 1 */
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(u + i, n - i);
        if (k == 0) {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else {
            memcpy(o, u + i, k);
            o += k;
            i += k;
        }
    }
    *o = '\0';
    return out;
}
