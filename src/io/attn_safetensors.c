/* .safetensors attention files: an 8-byte little-endian header size, a JSON
 * header naming each tensor's dtype, shape and byte range, then the data.
 * The tensor "attention" (or layer_0, layer_1, …) becomes AttnParts that
 * point into the bytes (nothing is copied); tokens come from __metadata__. */
#include "attnviz/attnio.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_parse.h"

/* the header's cap, as the safetensors library's own */
#define ST_MAX_HEADER ((uint64_t)100 << 20)
#define ST_MAX_OFFSET 9007199254740992.0 /* 2^53: every whole double below is exact */

static const struct {
    const char *name;
    AttnDtype t;
    int size;
} st_dtypes[] = {
    {"F16", ATTN_DT_F16, 2},
    {"BF16", ATTN_DT_BF16, 2},
    {"F32", ATTN_DT_F32, 4},
    {"F64", ATTN_DT_F64, 8},
};

/* Where the tensors' bytes are. */
typedef struct StData {
    const unsigned char *base; /* the byte after the header */
    size_t len;
    const char *name; /* the file's */
    AttnErr *err;
} StData;

/* dtype → p->dtype and the element size, or an error. */
static int st_dtype(AttnPart *p, int *size, const cJSON *t, const char *tname, const StData *d)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    if (!cJSON_IsString(dt) || !dt->valuestring)
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0,
                            "tensor %s has no \"dtype\" string", tname);
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (strcmp(dt->valuestring, st_dtypes[i].name) == 0) {
            p->dtype = st_dtypes[i].t;
            *size = st_dtypes[i].size;
            return 0;
        }
    return attn_err_set(d->err, ATTN_E_UNSUPPORTED, d->name, 0,
                        "tensor %s: unknown dtype \"%.40s\" (expected F16, BF16, F32 or F64)",
                        tname, dt->valuestring);
}

/* A whole number in [0, 2^53] from a JSON number. */
static int st_whole(const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double x = v->valuedouble;
    if (!(x >= 0 && x <= ST_MAX_OFFSET) || x != (double)(uint64_t)x)
        return 0;
    *out = x;
    return 1;
}

/* shape → p->L, H, Tq, Tk. */
static int st_shape(AttnPart *p, const cJSON *t, const char *tname, const StData *d)
{
    char what[96];
    snprintf(what, sizeof what, "tensor %s", tname);
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "shape");
    if (!cJSON_IsArray(sh))
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0, "%s has no \"shape\" list", what);
    int nd = cJSON_GetArraySize(sh);
    if (nd < 2 || nd > 5)
        return attn_parse_shape(NULL, nd, (int[4]){0}, what, d->name, d->err);
    double dims[5];
    int k = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, sh) {
        if (!cJSON_IsNumber(v))
            return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0,
                                "%s: shape[%d] is not a number", what, k);
        dims[k++] = v->valuedouble;
    }
    int d4[4];
    int rc = attn_parse_shape(dims, nd, d4, what, d->name, d->err);
    if (rc < 0)
        return rc;
    p->L = d4[0];
    p->H = d4[1];
    p->Tq = d4[2];
    p->Tk = d4[3];
    return 0;
}

/* One tensor's entry → p, its bytes checked to lie inside the data and to
 * be exactly what its shape and dtype need. */
static int st_tensor(AttnPart *p, const cJSON *t, const char *tname, const StData *d)
{
    memset(p, 0, sizeof *p);
    if (!cJSON_IsObject(t))
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0, "tensor %s is not an object",
                            tname);
    int size = 0, rc = st_dtype(p, &size, t, tname, d);
    if (rc == 0)
        rc = st_shape(p, t, tname, d);
    if (rc < 0)
        return rc;
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
    double b, e;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !st_whole(off->child, &b) ||
        !st_whole(off->child->next, &e) || b > e)
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0,
                            "tensor %s: \"data_offsets\" must be [begin, end], whole numbers "
                            "with begin <= end", tname);
    uint64_t ub = (uint64_t)b, ue = (uint64_t)e;
    if (ue > (uint64_t)d->len)
        return attn_err_set(d->err, ATTN_E_RANGE, d->name, 0,
                            "tensor %s: data_offsets [%llu, %llu] outside the %zu bytes of data",
                            tname, (unsigned long long)ub, (unsigned long long)ue, d->len);
    /* each size is at most 8192 (attn_parse_shape): the product fits */
    uint64_t need = (uint64_t)p->L * (uint64_t)p->H * (uint64_t)p->Tq * (uint64_t)p->Tk *
                    (uint64_t)size;
    if (ue - ub != need)
        return attn_err_set(d->err, ATTN_E_SHAPE, d->name, 0,
                            "tensor %s: data_offsets [%llu, %llu] hold %llu bytes, its shape "
                            "%d×%d×%d×%d of %d-byte numbers needs %llu", tname,
                            (unsigned long long)ub, (unsigned long long)ue,
                            (unsigned long long)(ue - ub), p->L, p->H, p->Tq, p->Tk, size,
                            (unsigned long long)need);
    p->data = d->base + ub;
    p->big_endian = 0;
    p->fortran = 0;
    return 0;
}

/* 1 when key is layer_ followed by decimal digits only. */
static int st_is_layer_key(const char *key)
{
    if (!key || strncmp(key, "layer_", 6) != 0 || !key[6])
        return 0;
    for (const char *c = key + 6; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    return 1;
}

/* The tensor "attention" (one part), else layer_0, layer_1, … (a part each,
 * of one layer, all of the same heads and sizes). */
static int st_parts(AttnFile *f, const cJSON *root, const StData *d, const char *tensor)
{
    const cJSON *att = cJSON_GetObjectItemCaseSensitive(root, tensor);
    if (!att && strcmp(tensor, "attention") != 0)
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0, "no tensor \"%s\"", tensor);
    if (att) {
        int rc = st_tensor(&f->parts[0], att, tensor, d);
        if (rc < 0)
            return rc;
        f->n_parts = 1;
        f->L = f->parts[0].L;
        f->H = f->parts[0].H;
        f->Tq = f->parts[0].Tq;
        f->Tk = f->parts[0].Tk;
        return 0;
    }
    int n_keys = 0, n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, root)
        n_keys += st_is_layer_key(t->string);
    if (n_keys == 0)
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0,
                            "no tensor \"attention\" or \"layer_0\"");
    for (;; n++) {
        char key[32];
        snprintf(key, sizeof key, "layer_%d", n);
        t = cJSON_GetObjectItemCaseSensitive(root, key);
        if (!t)
            break;
        if (n == ATTN_FILE_MAX_LAYERS)
            return attn_err_set(d->err, ATTN_E_TOO_LARGE, d->name, 0,
                                "more than %d layer_N tensors", ATTN_FILE_MAX_LAYERS);
        AttnPart *p = &f->parts[n];
        int rc = st_tensor(p, t, key, d);
        if (rc < 0)
            return rc;
        if (p->L != 1)
            return attn_err_set(d->err, ATTN_E_SHAPE, d->name, 0,
                                "tensor %s has %d layers: a layer_N tensor must be H×T×T or "
                                "1×H×T×T", key, p->L);
        if (n > 0 && (p->H != f->H || p->Tq != f->Tq || p->Tk != f->Tk))
            return attn_err_set(d->err, ATTN_E_SHAPE, d->name, 0,
                                "tensor %s is %d×%d×%d but layer_0 is %d×%d×%d", key, p->H,
                                p->Tq, p->Tk, f->H, f->Tq, f->Tk);
        f->H = p->H;
        f->Tq = p->Tq;
        f->Tk = p->Tk;
    }
    if (n != n_keys)
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0,
                            "layer_%d is missing: the %d layer_N tensors must be layer_0 to "
                            "layer_%d", n, n_keys, n_keys - 1);
    f->n_parts = n;
    f->L = n;
    return 0;
}

/* __metadata__[key]: absent (*out NULL), or a string holding a JSON array,
 * parsed into *out (freed by the caller). */
static int st_meta_list(cJSON **out, const cJSON *meta, const char *key, const StData *d)
{
    *out = NULL;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (!s)
        return 0;
    const char *end = NULL;
    cJSON *a = NULL;
    if (cJSON_IsString(s) && s->valuestring) {
        a = cJSON_ParseWithOpts(s->valuestring, &end, 0);
        while (a && end && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
            end++;
    }
    if (!a || !cJSON_IsArray(a) || (end && *end)) {
        cJSON_Delete(a);
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0,
                            "__metadata__.%s is not a JSON array in a string "
                            "(like \"[\\\"a\\\", \\\"b\\\"]\")", key);
    }
    *out = a;
    return 0;
}

static int st_tokens(AttnFile *f, const cJSON *root, const StData *d)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    if (!meta)
        return 0;
    if (!cJSON_IsObject(meta))
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, 0,
                            "__metadata__ is not an object of strings");
    cJSON *tok = NULL, *q = NULL, *k = NULL;
    int rc = st_meta_list(&tok, meta, "tokens", d);
    if (rc == 0)
        rc = st_meta_list(&q, meta, "query_tokens", d);
    if (rc == 0)
        rc = st_meta_list(&k, meta, "key_tokens", d);
    if (rc == 0)
        rc = attn_parse_tokens(f, tok, q, k, "__metadata__.", d->name, d->err);
    cJSON_Delete(tok);
    cJSON_Delete(q);
    cJSON_Delete(k);
    return rc;
}

int attn_safetensors_parse(AttnFile *f, const void *data, size_t len, const char *name,
                           AttnErr *err)
{
    return attn_safetensors_parse_tensor(f, data, len, name, "attention", err);
}

int attn_safetensors_parse_tensor(AttnFile *f, const void *data, size_t len, const char *name,
                                  const char *tensor, AttnErr *err)
{
    const unsigned char *bytes = data;
    memset(f, 0, sizeof *f);
    if (!name)
        name = "";
    if (!data || len < 8)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "%zu bytes: shorter than the 8-byte header size", data ? len : 0);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | bytes[i];
    if (n > (uint64_t)(len - 8))
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "header size %llu points past the end of the file (%zu bytes)",
                            (unsigned long long)n, len);
    if (n > ST_MAX_HEADER)
        return attn_err_set(err, ATTN_E_TOO_LARGE, name, 0,
                            "header of %llu bytes, at most %llu", (unsigned long long)n,
                            (unsigned long long)ST_MAX_HEADER);
    const char *hdr = (const char *)bytes + 8, *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(hdr, (size_t)n, &end, 0);
    while (root && end && end < hdr + n && (*end == ' ' || *end == '\n' || *end == '\r' ||
                                            *end == '\t' || *end == '\0'))
        end++;
    if (!root || !cJSON_IsObject(root) || (end && end < hdr + n)) {
        cJSON_Delete(root);
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "the %llu-byte header is not one JSON object",
                            (unsigned long long)n);
    }
    StData d = {bytes + 8 + n, len - 8 - (size_t)n, name, err};
    int rc = st_parts(f, root, &d, tensor);
    if (rc == 0) {
        f->cross = f->Tq != f->Tk;
        rc = st_tokens(f, root, &d);
    }
    cJSON_Delete(root);
    if (rc < 0) {
        attn_parse_release(f);
        return rc;
    }
    snprintf(f->name, sizeof f->name, "%s", name);
    return 0;
}
