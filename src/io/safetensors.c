/* A .safetensors file's header as a table of tensors (name, dtype, shape,
 * bytes) pointing into the file's bytes: every offset, size and overlap
 * checked, nothing copied (safetensors_to_f32 converts one tensor on
 * request). For model weights (model_file.c); the
 * attention files have their own reader (attn_safetensors.c). */
#include "attnviz/model_file.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnfile.h"

#define MAX_WHOLE 9007199254740992.0 /* 2^53: every whole double below is exact */

static const struct {
    const char *name;
    int size;
} dtypes[SAFE_DTYPE_COUNT] = {
    [SAFE_BOOL] = {"BOOL", 1},       [SAFE_U8] = {"U8", 1},
    [SAFE_I8] = {"I8", 1},           [SAFE_F8_E5M2] = {"F8_E5M2", 1},
    [SAFE_F8_E4M3] = {"F8_E4M3", 1}, [SAFE_I16] = {"I16", 2},
    [SAFE_U16] = {"U16", 2},         [SAFE_F16] = {"F16", 2},
    [SAFE_BF16] = {"BF16", 2},       [SAFE_I32] = {"I32", 4},
    [SAFE_U32] = {"U32", 4},         [SAFE_F32] = {"F32", 4},
    [SAFE_F64] = {"F64", 8},         [SAFE_I64] = {"I64", 8},
    [SAFE_U64] = {"U64", 8},
};

const char *safetensors_dtype_name(SafeDtype t)
{
    return (unsigned)t < SAFE_DTYPE_COUNT ? dtypes[t].name : "?";
}

int safetensors_dtype_size(SafeDtype t)
{
    return (unsigned)t < SAFE_DTYPE_COUNT ? dtypes[t].size : 0;
}

/* What one header entry is checked against. */
typedef struct Ctx {
    const unsigned char *data; /* the byte after the header */
    size_t len;                /* bytes of data */
    const char *file;
    AttnErr *err;
} Ctx;

/* A whole number in [0, 2^53] from a JSON number. */
static int whole(const cJSON *v, double *out)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double x = v->valuedouble;
    if (!(x >= 0 && x <= MAX_WHOLE) || x != (double)(uint64_t)x)
        return 0;
    *out = x;
    return 1;
}

static int parse_dtype(SafeTensor *t, const cJSON *e, const Ctx *c)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    if (!cJSON_IsString(dt) || !dt->valuestring)
        return attn_err_set(c->err, ATTN_E_PARSE, c->file, 0,
                            "tensor %.200s has no \"dtype\" string", t->name);
    for (int k = 0; k < SAFE_DTYPE_COUNT; k++)
        if (strcmp(dt->valuestring, dtypes[k].name) == 0) {
            t->dtype = (SafeDtype)k;
            return 0;
        }
    return attn_err_set(c->err, ATTN_E_UNSUPPORTED, c->file, 0,
                        "tensor %.200s: unknown dtype \"%.40s\"", t->name, dt->valuestring);
}

/* shape → t->ndim, t->shape, t->count (the product, which must fit the data). */
static int parse_shape(SafeTensor *t, const cJSON *e, const Ctx *c)
{
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    if (!cJSON_IsArray(sh))
        return attn_err_set(c->err, ATTN_E_PARSE, c->file, 0,
                            "tensor %.200s has no \"shape\" list", t->name);
    int nd = cJSON_GetArraySize(sh);
    if (nd > SAFE_MAX_DIMS)
        return attn_err_set(c->err, ATTN_E_UNSUPPORTED, c->file, 0,
                            "tensor %.200s has %d dimensions, at most %d", t->name, nd,
                            SAFE_MAX_DIMS);
    size_t count = 1;
    int big = 0, k = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, sh) {
        double x;
        if (!whole(v, &x))
            return attn_err_set(c->err, ATTN_E_PARSE, c->file, 0,
                                "tensor %.200s: shape[%d] is not a whole number", t->name, k);
        /* clamped: a size past a 32-bit size_t (wasm32) must not wrap */
        size_t d = x < (double)SIZE_MAX ? (size_t)x : SIZE_MAX;
        t->shape[k++] = (long long)x;
        if (d && count > SIZE_MAX / d)
            big = 1; /* more elements than memory: refused by the size check below */
        else
            count *= d;
    }
    t->ndim = nd;
    t->count = big ? SIZE_MAX : count;
    for (k = 0; k < nd; k++)
        if (t->shape[k] == 0)
            t->count = 0;
    return 0;
}

/* One entry of the header → t, its bytes inside the data and exactly its
 * shape's size. */
static int parse_tensor(SafeTensor *t, const cJSON *e, const Ctx *c)
{
    if (!cJSON_IsObject(e))
        return attn_err_set(c->err, ATTN_E_PARSE, c->file, 0, "tensor %.200s is not an object",
                            t->name);
    int rc = parse_dtype(t, e, c);
    if (rc == 0)
        rc = parse_shape(t, e, c);
    if (rc < 0)
        return rc;
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    double b, en;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !whole(off->child, &b) ||
        !whole(off->child->next, &en) || b > en)
        return attn_err_set(c->err, ATTN_E_PARSE, c->file, 0,
                            "tensor %.200s: \"data_offsets\" must be [begin, end], whole "
                            "numbers with begin <= end", t->name);
    uint64_t ub = (uint64_t)b, ue = (uint64_t)en;
    if (ue > (uint64_t)c->len)
        return attn_err_set(c->err, ATTN_E_RANGE, c->file, 0,
                            "tensor %.200s: data_offsets [%llu, %llu] go past the %zu bytes of "
                            "data (the file is truncated, or the offsets are wrong)", t->name,
                            (unsigned long long)ub, (unsigned long long)ue, c->len);
    size_t size = (size_t)dtypes[t->dtype].size;
    if (t->count > (ue - ub) / size || t->count * size != ue - ub)
        return attn_err_set(c->err, ATTN_E_SHAPE, c->file, 0,
                            "tensor %.200s: data_offsets [%llu, %llu] hold %llu bytes, but %d "
                            "dimensions of %s need %s%zu", t->name, (unsigned long long)ub,
                            (unsigned long long)ue, (unsigned long long)(ue - ub), t->ndim,
                            dtypes[t->dtype].name, t->count == SIZE_MAX ? "more than " : "",
                            t->count == SIZE_MAX ? SIZE_MAX : t->count * size);
    t->data = c->data + ub;
    t->nbytes = (size_t)(ue - ub);
    t->qtype = -1;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const SafeTensor *)a)->name, ((const SafeTensor *)b)->name);
}

static int by_offset(const void *a, const void *b)
{
    const SafeTensor *x = *(const SafeTensor *const *)a, *y = *(const SafeTensor *const *)b;
    return x->data < y->data ? -1 : x->data > y->data;
}

/* No two tensors (with bytes) share a byte; no name twice. */
static int check_layout(SafeTensors *st, const Ctx *c)
{
    qsort(st->t, (size_t)st->n, sizeof *st->t, by_name);
    for (int i = 1; i < st->n; i++)
        if (strcmp(st->t[i - 1].name, st->t[i].name) == 0)
            return attn_err_set(c->err, ATTN_E_DUPLICATE, c->file, 0,
                                "tensor %.200s is in the header twice", st->t[i].name);
    const SafeTensor **o = malloc((size_t)(st->n ? st->n : 1) * sizeof *o);
    if (!o)
        return attn_err_set(c->err, ATTN_E_NOMEM, c->file, 0, "out of memory");
    int n = 0, rc = 0;
    for (int i = 0; i < st->n; i++)
        if (st->t[i].nbytes)
            o[n++] = &st->t[i];
    qsort(o, (size_t)n, sizeof *o, by_offset);
    for (int i = 1; i < n && rc == 0; i++)
        if (o[i]->data < o[i - 1]->data + o[i - 1]->nbytes)
            rc = attn_err_set(c->err, ATTN_E_RANGE, c->file, 0,
                              "tensors %.150s [%zu, %zu] and %.150s [%zu, %zu] overlap",
                              o[i - 1]->name, (size_t)(o[i - 1]->data - c->data),
                              (size_t)(o[i - 1]->data - c->data) + o[i - 1]->nbytes, o[i]->name,
                              (size_t)(o[i]->data - c->data),
                              (size_t)(o[i]->data - c->data) + o[i]->nbytes);
    free(o);
    return rc;
}

/* Every entry but __metadata__ into st (names copied into one buffer). */
static int parse_entries(SafeTensors *st, const cJSON *root, const Ctx *c)
{
    size_t names = 0;
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, root) {
        if (strcmp(e->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(e))
                return attn_err_set(c->err, ATTN_E_PARSE, c->file, 0,
                                    "__metadata__ is not an object");
            continue;
        }
        names += strlen(e->string) + 1;
        n++;
    }
    st->t = calloc((size_t)(n ? n : 1), sizeof *st->t);
    st->names = malloc(names ? names : 1);
    if (!st->t || !st->names)
        return attn_err_set(c->err, ATTN_E_NOMEM, c->file, 0, "out of memory");
    char *p = st->names;
    cJSON_ArrayForEach(e, root) {
        if (strcmp(e->string, "__metadata__") == 0)
            continue;
        size_t l = strlen(e->string) + 1;
        memcpy(p, e->string, l);
        SafeTensor *t = &st->t[st->n++];
        t->name = p;
        p += l;
        int rc = parse_tensor(t, e, c);
        if (rc < 0)
            return rc;
    }
    return check_layout(st, c);
}

int safetensors_parse(SafeTensors *st, const void *bytes, size_t len, const char *name,
                      AttnErr *err)
{
    const unsigned char *b = bytes;
    memset(st, 0, sizeof *st);
    if (!name)
        name = "";
    if (!b || len < 8)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "%zu bytes: shorter than the 8-byte header size (truncated?)",
                            b ? len : 0);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | b[i];
    if (n > SAFE_MAX_HEADER)
        return attn_err_set(err, ATTN_E_TOO_LARGE, name, 0,
                            "a header of %llu bytes; at most %zu (not a safetensors file?)",
                            (unsigned long long)n, SAFE_MAX_HEADER);
    if (n > len - 8)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "the file ends inside its %llu-byte header (%zu bytes after the "
                            "size): truncated", (unsigned long long)n, len - 8);
    const char *hdr = (const char *)b + 8, *end = NULL;
    cJSON *root = n && hdr[0] == '{' ? cJSON_ParseWithLengthOpts(hdr, (size_t)n, &end, 0) : NULL;
    while (root && end && end < hdr + n && *end == ' ')
        end++;
    if (!root || !cJSON_IsObject(root) || (end && end < hdr + n)) {
        cJSON_Delete(root);
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "the %llu-byte header is not one JSON object (padded with spaces)",
                            (unsigned long long)n);
    }
    Ctx c = {b + 8 + n, len - 8 - (size_t)n, name, err};
    int rc = parse_entries(st, root, &c);
    cJSON_Delete(root);
    if (rc < 0)
        safetensors_free(st);
    return rc;
}

const SafeTensor *safetensors_find(const SafeTensors *st, const char *name)
{
    if (!st || !st->n || !name)
        return NULL;
    SafeTensor key = {.name = name};
    return bsearch(&key, st->t, (size_t)st->n, sizeof key, by_name);
}

void safetensors_free(SafeTensors *st)
{
    if (!st)
        return;
    free(st->t);
    free(st->names);
    memset(st, 0, sizeof *st);
}

void safetensors_to_f32(float *out, const SafeTensor *t)
{
    const unsigned char *p = t->data;
    for (size_t i = 0; i < t->count; i++) {
        if (t->dtype == SAFE_F32) {
            uint32_t u = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                         (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
            memcpy(&out[i], &u, sizeof u);
        } else {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            out[i] = t->dtype == SAFE_F16 ? attn_f16_to_float(h) : attn_bf16_to_float(h);
        }
    }
}
