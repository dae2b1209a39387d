/* Attention files in JSON: {"tokens": [...], "attention": nested lists} (or
 * "query_tokens"/"key_tokens" for cross-attention) → one float64 buffer and
 * one AttnPart; plus what the JSON and safetensors readers share (attn_parse.h). */
#include "attnviz/attnio.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_parse.h"

#define MAX_DEPTH 5

/* ---- shared with attn_safetensors.c --------------------------------------- */

int attn_parse_host_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char b[2];
    memcpy(b, &one, sizeof b);
    return b[0] == 0;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

void attn_parse_release(AttnFile *f)
{
    if (f->k_tokens != f->q_tokens)
        strv_free(f->k_tokens);
    strv_free(f->q_tokens);
    free(f->buf);
    memset(f, 0, sizeof *f);
}

int attn_parse_shape(const double *dims, int nd, int dims4[4], const char *what,
                     const char *name, AttnErr *err)
{
    static const char *const side[4] = {"layers", "heads", "query tokens", "key tokens"};
    static const int cap[4] = {ATTN_FILE_MAX_LAYERS, ATTN_FILE_MAX_HEADS, ATTN_FILE_MAX_TOKENS,
                               ATTN_FILE_MAX_TOKENS};
    if (nd < 2 || nd > 5)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                            "%s has %d dimensions: expected T×T, H×T×T, L×H×T×T or L×1×H×T×T",
                            what, nd);
    if (nd == 5 && dims[1] != 1)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                            "%s: a 5-dimensional shape must be L×1×H×T×T (a batch of one), "
                            "its second size is %.0f", what, dims[1]);
    double d4[4] = {1, 1, 1, 1};
    for (int k = 0; k < 2; k++)
        d4[3 - k] = dims[nd - 1 - k];
    if (nd >= 3)
        d4[1] = dims[nd - 3];
    if (nd >= 4)
        d4[0] = dims[0];
    for (int k = 0; k < 4; k++) {
        if (!(d4[k] >= 1) || d4[k] != floor(d4[k]))
            return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                                "%s: %g %s (expected a whole number of at least 1)", what,
                                d4[k], side[k]);
        if (d4[k] > cap[k])
            return attn_err_set(err, ATTN_E_TOO_LARGE, name, 0,
                                "%s: %.0f %s, at most %d", what, d4[k], side[k], cap[k]);
        dims4[k] = (int)d4[k];
    }
    return 0;
}

/* A JSON array of exactly expect strings → a NULL-terminated copy. */
static int strv_from_json(char ***out, const cJSON *a, int expect, const char *where,
                          const char *key, const char *sidename, const char *name,
                          AttnErr *err)
{
    *out = NULL;
    if (!cJSON_IsArray(a))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "%s%s is not a list of strings",
                            where, key);
    int n = cJSON_GetArraySize(a);
    if (n != expect)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                            "%s%s has %d tokens but the attention has %d %s", where, key, n,
                            expect, sidename);
    char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "%s%s: %d tokens", where, key, n);
    int i = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, a) {
        if (!cJSON_IsString(s) || !s->valuestring) {
            strv_free(v);
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "%s%s[%d] is not a string", where,
                                key, i);
        }
        v[i] = strdup(s->valuestring);
        if (!v[i]) {
            strv_free(v);
            return attn_err_set(err, ATTN_E_NOMEM, name, 0, "%s%s[%d]", where, key, i);
        }
        i++;
    }
    *out = v;
    return 0;
}

int attn_parse_tokens(AttnFile *f, const cJSON *tok, const cJSON *qtok, const cJSON *ktok,
                      const char *where, const char *name, AttnErr *err)
{
    char **q = NULL, **k = NULL;
    int rc;
    if (qtok || ktok) {
        if (!qtok || !ktok)
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "%s%s without %s%s", where,
                                qtok ? "query_tokens" : "key_tokens", where,
                                qtok ? "key_tokens" : "query_tokens");
        rc = strv_from_json(&q, qtok, f->Tq, where, "query_tokens", "query rows", name, err);
        if (rc < 0)
            return rc;
        rc = strv_from_json(&k, ktok, f->Tk, where, "key_tokens", "key columns", name, err);
        if (rc < 0) {
            strv_free(q);
            return rc;
        }
        f->q_tokens = q;
        f->k_tokens = k;
        f->cross = 1;
        return 0;
    }
    if (!tok)
        return 0;
    if (f->Tq != f->Tk)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                            "%stokens has %d tokens for a %d×%d (cross-attention) map: give "
                            "%squery_tokens and %skey_tokens", where,
                            cJSON_IsArray(tok) ? cJSON_GetArraySize(tok) : 0, f->Tq, f->Tk,
                            where, where);
    rc = strv_from_json(&q, tok, f->Tq, where, "tokens", "rows and columns", name, err);
    if (rc < 0)
        return rc;
    f->q_tokens = f->k_tokens = q;
    return 0;
}

/* ---- is it an attention file? --------------------------------------------- */

/* White space as cJSON skips it (every byte up to 32), so that what the
 * parser reads this check reads the same way. */
static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (unsigned char)*p <= 32)
        p++;
    return p;
}

/* p at a '"': the byte after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* One value (not checked): the byte after it, or NULL. */
static const char *skip_value(const char *p, const char *end)
{
    int depth = 0;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            p = skip_string(p, end);
            if (!p)
                return NULL;
            if (depth == 0)
                return p;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (c == ',' && depth == 0) {
            return p;
        }
        p++;
    }
    return depth == 0 ? p : NULL;
}

/* Walks the top-level object's keys (without parsing the values, so cheap
 * on a large file); a key spelled with escapes does not count. */
int attn_json_is_attention(const char *data, size_t len)
{
    static const char key[] = "attention";
    if (!data)
        return 0;
    const char *end = data + len, *p = data;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return 0;
    p++;
    for (;;) {
        p = skip_ws(p, end);
        if (p >= end || *p != '"')
            return 0;
        const char *k = p;
        p = skip_string(p, end);
        if (!p)
            return 0;
        /* a key with a raw NUL byte is cut there, as cJSON reads it */
        const char *nul = memchr(k + 1, '\0', (size_t)(p - 1 - (k + 1)));
        size_t klen = (size_t)((nul ? nul : p - 1) - (k + 1));
        if (klen == sizeof key - 1 && memcmp(k + 1, key, sizeof key - 1) == 0)
            return 1;
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            return 0;
        p = skip_value(skip_ws(p + 1, end), end);
        if (!p)
            return 0;
        p = skip_ws(p, end);
        if (p >= end || *p != ',')
            return 0;
        p++;
    }
}

/* ---- the attention lists --------------------------------------------------- */

typedef struct Walk {
    int nd;
    int dims[MAX_DEPTH];
    int idx[MAX_DEPTH];
    double *out; /* NULL: only check the shape */
    size_t at;
    const char *name;
    AttnErr *err;
} Walk;

/* "attention[2][0]" for the first level indices of w->idx. */
static const char *path_of(const Walk *w, int level, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "attention");
    for (int k = 0; k < level && used < n; k++)
        used += (size_t)snprintf(buf + used, n - used, "[%d]", w->idx[k]);
    return buf;
}

static const char *json_kind(const cJSON *v)
{
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsObject(v))
        return "an object";
    if (cJSON_IsArray(v))
        return "a list";
    if (cJSON_IsNumber(v))
        return "a number";
    return "not a number";
}

static int walk(Walk *w, const cJSON *a, int level)
{
    char path[128];
    if (level == w->nd) {
        if (!cJSON_IsNumber(a))
            return attn_err_set(w->err, ATTN_E_PARSE, w->name, 0, "%s is %s, expected a number",
                                path_of(w, level, path, sizeof path), json_kind(a));
        if (!isfinite(a->valuedouble))
            return attn_err_set(w->err, ATTN_E_RANGE, w->name, 0, "%s is out of range",
                                path_of(w, level, path, sizeof path));
        if (w->out)
            w->out[w->at] = a->valuedouble;
        w->at++;
        return 0;
    }
    if (!cJSON_IsArray(a))
        return attn_err_set(w->err, ATTN_E_SHAPE, w->name, 0,
                            "%s is %s, expected a list (the attention is nested %d deep)",
                            path_of(w, level, path, sizeof path), json_kind(a), w->nd);
    int n = cJSON_GetArraySize(a);
    if (n != w->dims[level])
        return attn_err_set(w->err, ATTN_E_SHAPE, w->name, 0, "%s length %d, expected %d",
                            path_of(w, level, path, sizeof path), n, w->dims[level]);
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a) {
        w->idx[level] = i++;
        int rc = walk(w, v, level + 1);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The nesting depth and sizes from the first element at each level, then
 * every list checked against them; then the numbers into f->buf. */
static int read_attention(AttnFile *f, const cJSON *att, const char *name, AttnErr *err)
{
    Walk w = {.name = name, .err = err};
    double dd[MAX_DEPTH + 1];
    const cJSON *a = att;
    int nd = 0;
    while (cJSON_IsArray(a) && nd <= MAX_DEPTH) {
        dd[nd++] = cJSON_GetArraySize(a);
        a = a->child;
    }
    if (nd > MAX_DEPTH || nd < 2)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                            "attention is nested %s%d deep: expected lists of lists, 2 to 5 deep "
                            "(T×T, H×T×T, L×H×T×T or L×1×H×T×T)", nd > MAX_DEPTH ? "over " : "",
                            nd > MAX_DEPTH ? MAX_DEPTH : nd);
    int d4[4];
    int rc = attn_parse_shape(dd, nd, d4, "attention", name, err);
    if (rc < 0)
        return rc;
    w.nd = nd;
    for (int k = 0; k < nd; k++)
        w.dims[k] = (int)dd[k];
    rc = walk(&w, att, 0);
    if (rc < 0)
        return rc;
    size_t count = w.at;
    double *buf = malloc(count * sizeof *buf);
    if (!buf)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "%zu numbers", count);
    w.out = buf;
    w.at = 0;
    walk(&w, att, 0); /* cannot fail: the same tree was just checked */
    f->buf = buf;
    f->buf_len = count * sizeof *buf;
    f->L = d4[0];
    f->H = d4[1];
    f->Tq = d4[2];
    f->Tk = d4[3];
    AttnPart *p = &f->parts[0];
    p->data = buf;
    p->dtype = ATTN_DT_F64;
    p->big_endian = attn_parse_host_big_endian();
    p->fortran = 0;
    p->L = f->L;
    p->H = f->H;
    p->Tq = f->Tq;
    p->Tk = f->Tk;
    f->n_parts = 1;
    f->cross = f->Tq != f->Tk;
    return 0;
}

static long line_of(const char *data, size_t len, const char *at)
{
    if (!at || at < data || at > data + len)
        return 0;
    long line = 1;
    for (const char *p = data; p < at; p++)
        line += *p == '\n';
    return line;
}

/* The document into *out: one JSON object with nothing but white space
 * after it. */
static int parse_object(cJSON **out, const char *data, size_t len, const char *name,
                        AttnErr *err)
{
    const char *end = NULL;
    *out = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (!root)
        return attn_err_set(err, ATTN_E_PARSE, name, line_of(data, len, cJSON_GetErrorPtr()),
                            "not valid JSON");
    while (end && end < data + len &&
           (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t' || *end == '\0'))
        end++;
    int rc = 0;
    if (end && end < data + len)
        rc = attn_err_set(err, ATTN_E_PARSE, name, line_of(data, len, end),
                          "text after the end of the JSON document");
    else if (!cJSON_IsObject(root))
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "expected a JSON object");
    if (rc < 0)
        cJSON_Delete(root);
    else
        *out = root;
    return rc;
}

int attn_json_parse(AttnFile *f, const char *data, size_t len, const char *name, AttnErr *err)
{
    memset(f, 0, sizeof *f);
    if (!name)
        name = "";
    if (!data || len == 0)
        return attn_err_set(err, ATTN_E_EMPTY, name, 0, "empty file");
    cJSON *root;
    int rc = parse_object(&root, data, len, name, err);
    if (rc < 0)
        return rc;
    const cJSON *att = cJSON_GetObjectItemCaseSensitive(root, "attention");
    if (!att) {
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "no \"attention\" key");
        goto out;
    }
    rc = read_attention(f, att, name, err);
    if (rc < 0)
        goto out;
    rc = attn_parse_tokens(f, cJSON_GetObjectItemCaseSensitive(root, "tokens"),
                           cJSON_GetObjectItemCaseSensitive(root, "query_tokens"),
                           cJSON_GetObjectItemCaseSensitive(root, "key_tokens"), "", name, err);
    if (rc < 0)
        goto out;
    snprintf(f->name, sizeof f->name, "%s", name);
out:
    cJSON_Delete(root);
    if (rc < 0)
        attn_parse_release(f);
    return rc;
}
