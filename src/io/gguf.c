/* A GGUF file's header, metadata and tensor infos read from its bytes in
 * place (gguf.h): every count and length checked against the bytes left
 * before anything is allocated, so a forged count cannot ask for gigabytes.
 * Not the tensors' numbers (quant.c dequantizes them) nor what a model
 * makes of the metadata. */
#include "attnviz/gguf.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ggml's tensor types: elements a block and bytes a block (ggml.c's
 * type_traits; the numbers left out were removed from ggml) ------------------ */
static const struct {
    const char *name;
    int block;
    int bytes;
} ggml_types[] = {
    [0] = {"F32", 1, 4},         [1] = {"F16", 1, 2},          [2] = {"Q4_0", 32, 18},
    [3] = {"Q4_1", 32, 20},      [6] = {"Q5_0", 32, 22},       [7] = {"Q5_1", 32, 24},
    [8] = {"Q8_0", 32, 34},      [9] = {"Q8_1", 32, 36},       [10] = {"Q2_K", 256, 84},
    [11] = {"Q3_K", 256, 110},   [12] = {"Q4_K", 256, 144},    [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210},   [15] = {"Q8_K", 256, 292},    [16] = {"IQ2_XXS", 256, 66},
    [17] = {"IQ2_XS", 256, 74},  [18] = {"IQ3_XXS", 256, 98},  [19] = {"IQ1_S", 256, 50},
    [20] = {"IQ4_NL", 32, 18},   [21] = {"IQ3_S", 256, 110},   [22] = {"IQ2_S", 256, 82},
    [23] = {"IQ4_XS", 256, 136}, [24] = {"I8", 1, 1},          [25] = {"I16", 1, 2},
    [26] = {"I32", 1, 4},        [27] = {"I64", 1, 8},         [28] = {"F64", 1, 8},
    [29] = {"IQ1_M", 256, 56},   [30] = {"BF16", 1, 2},        [34] = {"TQ1_0", 256, 54},
    [35] = {"TQ2_0", 256, 66},   [39] = {"MXFP4", 32, 17},     [40] = {"NVFP4", 64, 36},
};
#define N_GGML_TYPES ((int)(sizeof ggml_types / sizeof ggml_types[0]))

const char *gguf_type_name(int t)
{
    return t >= 0 && t < N_GGML_TYPES ? ggml_types[t].name : NULL;
}

int gguf_type_block(int t)
{
    return gguf_type_name(t) ? ggml_types[t].block : 0;
}

size_t gguf_type_bytes(int t)
{
    return gguf_type_name(t) ? (size_t)ggml_types[t].bytes : 0;
}

/* ---- metadata value types ------------------------------------------------------- */
static const char *const value_names[GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};
/* bytes of a fixed-size value; 0 for strings and arrays */
static const unsigned char value_size[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *gguf_value_type_name(int t)
{
    return t >= 0 && t < GGUF_TYPE_COUNT ? value_names[t] : NULL;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int is_signed(GgufType t)
{
    return t == GGUF_I8 || t == GGUF_I16 || t == GGUF_I32 || t == GGUF_I64;
}

static int is_unsigned(GgufType t)
{
    return t == GGUF_U8 || t == GGUF_U16 || t == GGUF_U32 || t == GGUF_U64 || t == GGUF_BOOL;
}

/* A fixed-size little-endian value at p as signed, unsigned or float. */
static int64_t as_signed(GgufType t, const unsigned char *p)
{
    uint64_t u = le(p, value_size[t]);
    int bits = 8 * value_size[t];
    if (bits < 64 && (u >> (bits - 1)) & 1)
        u |= ~(uint64_t)0 << bits; /* sign-extend */
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static double as_float(GgufType t, const unsigned char *p)
{
    if (t == GGUF_F32) {
        uint32_t u = (uint32_t)le(p, 4);
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    uint64_t u = le(p, 8);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* ---- the reader: a position in the bytes and what it is reading --------------- */
typedef struct Rd {
    const unsigned char *b;
    size_t len, pos;
    const char *file;
    AttnErr *err;
    char where[400];            /* "metadata key 7 (\"general.name\")", "tensor blk.0.attn_q.weight" */
    uint64_t elem[GGUF_MAX_ARRAY_DEPTH]; /* the element read in each array around, */
    int n_elem;                 /* named only when there is an error (no formatting a string) */
} Rd;

static size_t left(const Rd *r)
{
    return r->len - r->pos;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(Rd *r, int code, const char *fmt, ...)
{
    char detail[400], where[sizeof r->where + 40 * GGUF_MAX_ARRAY_DEPTH];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    size_t at = (size_t)snprintf(where, sizeof where, "%s", r->where);
    for (int i = 0; i < r->n_elem && at < sizeof where; i++)
        at += (size_t)snprintf(where + at, sizeof where - at, i ? "[%llu]" : ", element %llu",
                               (unsigned long long)r->elem[i]);
    if (where[0])
        return attn_err_set(r->err, code, r->file, 0, "%s: %s", where, detail);
    return attn_err_set(r->err, code, r->file, 0, "%s", detail);
}

/* n bytes of `what` must be in the file from here. */
static int need(Rd *r, uint64_t n, const char *what)
{
    if (n <= left(r))
        return 0;
    return fail(r, ATTN_E_PARSE, "%s (%llu bytes at byte %zu) is past the end of the file (%zu bytes)",
                what, (unsigned long long)n, r->pos, r->len);
}

static int rd_u32(Rd *r, uint32_t *v, const char *what)
{
    int rc = need(r, 4, what);
    if (rc == 0) {
        *v = (uint32_t)le(r->b + r->pos, 4);
        r->pos += 4;
    }
    return rc;
}

static int rd_u64(Rd *r, uint64_t *v, const char *what)
{
    int rc = need(r, 8, what);
    if (rc == 0) {
        *v = le(r->b + r->pos, 8);
        r->pos += 8;
    }
    return rc;
}

/* A length-prefixed string into *s (pointing into the bytes); what: "key",
 * "string", "tensor name". */
static int rd_str(Rd *r, GgufStr *s, const char *what)
{
    if (left(r) < 8)
        return fail(r, ATTN_E_PARSE, "the %s's length (8 bytes at byte %zu) is past the end of the "
                    "file (%zu bytes)", what, r->pos, r->len);
    uint64_t n = le(r->b + r->pos, 8);
    r->pos += 8;
    if (n > left(r))
        return fail(r, ATTN_E_PARSE, "%s length %llu is past the end of the file (%zu bytes left "
                    "of %zu)", what, (unsigned long long)n, left(r), r->len);
    s->s = (const char *)r->b + r->pos;
    s->len = (size_t)n;
    r->pos += (size_t)n;
    return 0;
}

/* A name (a key or a tensor's): not empty, no NUL byte in it, copied. */
static int rd_name(Rd *r, char **out, const char *what)
{
    GgufStr s;
    int rc = rd_str(r, &s, what);
    if (rc < 0)
        return rc;
    if (s.len == 0)
        return fail(r, ATTN_E_PARSE, "the %s is empty", what);
    if (memchr(s.s, '\0', s.len))
        return fail(r, ATTN_E_PARSE, "the %s has a NUL byte in it", what);
    *out = malloc(s.len + 1);
    if (!*out)
        return fail(r, ATTN_E_NOMEM, "out of memory");
    memcpy(*out, s.s, s.len);
    (*out)[s.len] = '\0';
    return 0;
}

static int rd_value_type(Rd *r, GgufType *t, const char *what)
{
    uint32_t v;
    int rc = rd_u32(r, &v, what);
    if (rc == 0 && v >= GGUF_TYPE_COUNT)
        rc = fail(r, ATTN_E_PARSE, "%s %u is not a GGUF value type (0 to %d)", what, v,
                  GGUF_TYPE_COUNT - 1);
    if (rc == 0)
        *t = (GgufType)v;
    return rc;
}

/* ---- metadata values ---------------------------------------------------------------- */
static int rd_array(Rd *r, int depth, GgufKV *kv);

/* n elements of type t from here, checked and stepped over. */
static int skip_elements(Rd *r, int depth, GgufType t, uint64_t n)
{
    /* the fewest bytes an element takes: a string its length, an array its
     * type and count; n of them must fit before any is read */
    uint64_t least = value_size[t] ? value_size[t] : t == GGUF_STRING ? 8 : 12;
    if (n > left(r) / least)
        return fail(r, ATTN_E_PARSE, "an array of %llu %s elements (%llu bytes at least) is past the "
                    "end of the file (%zu bytes left of %zu)", (unsigned long long)n, value_names[t],
                    n > UINT64_MAX / least ? UINT64_MAX : (unsigned long long)(n * least), left(r),
                    r->len);
    if (value_size[t]) {
        r->pos += (size_t)(n * value_size[t]);
        return 0;
    }
    int rc = 0, level = r->n_elem++; /* depth < GGUF_MAX_ARRAY_DEPTH: rd_array checked */
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        r->elem[level] = i;
        if (t == GGUF_STRING) {
            GgufStr s;
            rc = rd_str(r, &s, "string");
        } else {
            GgufKV inner;
            rc = rd_array(r, depth + 1, &inner);
        }
    }
    r->n_elem--;
    return rc;
}

/* An array value (element type, count, elements) into kv's arr_* fields;
 * depth counts the arrays around it. */
static int rd_array(Rd *r, int depth, GgufKV *kv)
{
    if (depth >= GGUF_MAX_ARRAY_DEPTH)
        return fail(r, ATTN_E_UNSUPPORTED, "arrays nested more than %d deep", GGUF_MAX_ARRAY_DEPTH);
    GgufType et;
    uint64_t n;
    int rc = rd_value_type(r, &et, "the array's element type");
    if (rc == 0)
        rc = rd_u64(r, &n, "the array's length");
    if (rc < 0)
        return rc;
    size_t start = r->pos;
    rc = skip_elements(r, depth, et, n);
    if (rc < 0)
        return rc;
    kv->arr_type = et;
    kv->arr_n = n;
    kv->arr_data = r->b + start;
    kv->arr_bytes = r->pos - start;
    return 0;
}

/* A value of type t into kv. */
static int rd_value(Rd *r, GgufType t, GgufKV *kv)
{
    kv->type = t;
    if (t == GGUF_STRING)
        return rd_str(r, &kv->v.str, "string");
    if (t == GGUF_ARRAY)
        return rd_array(r, 0, kv);
    int rc = need(r, value_size[t], "the value");
    if (rc < 0)
        return rc;
    const unsigned char *p = r->b + r->pos;
    if (t == GGUF_F32 || t == GGUF_F64)
        kv->v.f = as_float(t, p);
    else if (is_signed(t))
        kv->v.i = as_signed(t, p);
    else
        kv->v.u = t == GGUF_BOOL ? p[0] != 0 : le(p, value_size[t]);
    r->pos += value_size[t];
    return 0;
}

/* ---- lookups -------------------------------------------------------------------------- */
static int kv_cmp(const void *a, const void *b)
{
    return strcmp((*(const GgufKV *const *)a)->key, (*(const GgufKV *const *)b)->key);
}

static int t_cmp(const void *a, const void *b)
{
    return strcmp((*(const GgufTensor *const *)a)->name, (*(const GgufTensor *const *)b)->name);
}

const GgufKV *gguf_find(const Gguf *g, const char *key)
{
    if (!g || !key || !g->kv_by_key)
        return NULL;
    int lo = 0, hi = g->n_kv - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(g->kv_by_key[mid]->key, key);
        if (c == 0)
            return g->kv_by_key[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

const GgufTensor *gguf_tensor(const Gguf *g, const char *name)
{
    if (!g || !name || !g->t_by_name)
        return NULL;
    int lo = 0, hi = g->n_tensors - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const char *at = g->t_by_name[mid]->name;
        int c = strcmp(at, name);
        if (c == 0)
            return g->t_by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* ---- the parts of the file -------------------------------------------------------------- */
/* Magic, version, the two counts (each checked against the bytes left: a key
 * takes 14 bytes at least, a tensor info 33). */
static int rd_header(Rd *r, Gguf *g, uint64_t *n_tensors, uint64_t *n_kv)
{
    if (r->len < 4 || memcmp(r->b, "GGUF", 4) != 0) {
        if (r->len < 4 && (r->len == 0 || memcmp(r->b, "GGUF", r->len) == 0))
            return fail(r, ATTN_E_PARSE, "the file is %zu bytes, too short for a GGUF header "
                        "(24 bytes)", r->len);
        return fail(r, ATTN_E_PARSE, "not a GGUF file (it does not start with \"GGUF\")");
    }
    r->pos = 4;
    uint32_t version;
    int rc = rd_u32(r, &version, "the GGUF version");
    if (rc < 0)
        return rc;
    uint32_t swapped = (version >> 24) | ((version >> 8) & 0xff00) | ((version << 8) & 0xff0000) |
                       (version << 24);
    if (version != 2 && version != 3 && swapped >= 1 && swapped <= 3)
        return fail(r, ATTN_E_UNSUPPORTED, "a big-endian GGUF file is not read (its version "
                    "reads %u byte-swapped; convert it to little-endian)", swapped);
    if (version != 2 && version != 3)
        return fail(r, ATTN_E_UNSUPPORTED, "GGUF version %u is not read (versions 2 and 3)",
                    version);
    g->version = (int)version;
    rc = rd_u64(r, n_tensors, "the tensor count");
    if (rc == 0)
        rc = rd_u64(r, n_kv, "the metadata key count");
    if (rc < 0)
        return rc;
    if (*n_kv > left(r) / 14)
        return fail(r, ATTN_E_PARSE, "metadata key count %llu is past the end of the file (%zu "
                    "bytes left: 14 bytes a key at least)", (unsigned long long)*n_kv, left(r));
    if (*n_tensors > (left(r) - *n_kv * 14) / 33)
        return fail(r, ATTN_E_PARSE, "tensor count %llu is past the end of the file (%zu bytes "
                    "left after the keys: 33 bytes a tensor info at least)",
                    (unsigned long long)*n_tensors, (size_t)(left(r) - *n_kv * 14));
    return 0;
}

/* Every key-value pair into g->kv, then no key twice. */
static int rd_metadata(Rd *r, Gguf *g)
{
    for (int i = 0; i < g->n_kv; i++) {
        GgufKV *kv = &g->kv[i];
        snprintf(r->where, sizeof r->where, "metadata key %d", i);
        int rc = rd_name(r, &kv->key, "key");
        if (rc < 0)
            return rc;
        snprintf(r->where, sizeof r->where, "metadata key %d (\"%.200s\")", i, kv->key);
        GgufType t;
        rc = rd_value_type(r, &t, "value type");
        if (rc == 0)
            rc = rd_value(r, t, kv);
        if (rc < 0)
            return rc;
    }
    r->where[0] = '\0';
    g->kv_by_key = malloc((size_t)(g->n_kv ? g->n_kv : 1) * sizeof *g->kv_by_key);
    if (!g->kv_by_key)
        return fail(r, ATTN_E_NOMEM, "out of memory");
    for (int i = 0; i < g->n_kv; i++)
        g->kv_by_key[i] = &g->kv[i];
    qsort(g->kv_by_key, (size_t)g->n_kv, sizeof *g->kv_by_key, kv_cmp);
    for (int i = 1; i < g->n_kv; i++)
        if (strcmp(g->kv_by_key[i - 1]->key, g->kv_by_key[i]->key) == 0) {
            const GgufKV *a = g->kv_by_key[i - 1], *b = g->kv_by_key[i];
            if (a > b) {
                const GgufKV *tmp = a;
                a = b;
                b = tmp;
            }
            return fail(r, ATTN_E_DUPLICATE, "metadata key %d (\"%.200s\") is also metadata key %d",
                        (int)(b - g->kv), b->key, (int)(a - g->kv));
        }
    return 0;
}

/* general.alignment: a power of two (32 when absent). */
static int rd_alignment(Rd *r, Gguf *g)
{
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    const GgufKV *kv = gguf_find(g, "general.alignment");
    if (!kv)
        return 0;
    if (!is_unsigned(kv->type) || kv->type == GGUF_BOOL)
        return fail(r, ATTN_E_PARSE, "metadata key \"general.alignment\" is a %s, not an unsigned "
                    "integer", value_names[kv->type]);
    if (kv->v.u == 0 || kv->v.u > ((uint64_t)1 << 31) || (kv->v.u & (kv->v.u - 1)))
        return fail(r, ATTN_E_PARSE, "metadata key \"general.alignment\": %llu is not a power of "
                    "two (1 to 2^31)", (unsigned long long)kv->v.u);
    g->alignment = (size_t)kv->v.u;
    return 0;
}

/* One tensor info: name, dimensions, type, offset (relative to the data). */
static int rd_tensor_info(Rd *r, GgufTensor *t, int i, uint64_t *offset)
{
    snprintf(r->where, sizeof r->where, "tensor %d", i);
    int rc = rd_name(r, &t->name, "tensor name");
    if (rc < 0)
        return rc;
    snprintf(r->where, sizeof r->where, "tensor %.300s", t->name);
    uint32_t nd;
    if ((rc = rd_u32(r, &nd, "the dimension count")) < 0)
        return rc;
    if (nd < 1 || nd > GGUF_MAX_DIMS)
        return fail(r, ATTN_E_UNSUPPORTED, "%u dimensions (1 to %d)", nd, GGUF_MAX_DIMS);
    t->ndim = (int)nd;
    int64_t count = 1;
    for (int k = 0; k < GGUF_MAX_DIMS; k++) {
        uint64_t d = 1;
        if (k < t->ndim && (rc = rd_u64(r, &d, "a dimension")) < 0)
            return rc;
        if (d == 0 || d > (uint64_t)INT64_MAX)
            return fail(r, ATTN_E_SHAPE, "ne[%d] is %lld (dimensions are positive)", k,
                        (long long)(int64_t)d);
        t->ne[k] = (int64_t)d;
        if (count > INT64_MAX / t->ne[k])
            return fail(r, ATTN_E_TOO_LARGE, "its shape (%lld, %lld, %lld, %lld) has more elements "
                        "than a 64-bit count holds", (long long)t->ne[0],
                        (long long)(k > 0 ? t->ne[1] : 1), (long long)(k > 1 ? t->ne[2] : 1),
                        (long long)(k > 2 ? t->ne[3] : 1));
        count *= t->ne[k];
    }
    uint32_t type;
    if ((rc = rd_u32(r, &type, "the type")) < 0)
        return rc;
    if (type > INT_MAX)
        return fail(r, ATTN_E_UNSUPPORTED, "type %u is not a ggml type", type);
    t->type = (int)type;
    int block = gguf_type_block(t->type);
    if (block) {
        size_t bytes = gguf_type_bytes(t->type);
        if (t->ne[0] % block)
            return fail(r, ATTN_E_SHAPE, "ne[0] = %lld is not a whole number of %s blocks (%d "
                        "elements a block)", (long long)t->ne[0], gguf_type_name(t->type), block);
        if ((uint64_t)(count / block) > SIZE_MAX / bytes)
            return fail(r, ATTN_E_TOO_LARGE, "%lld elements of %s are more bytes than memory "
                        "holds", (long long)count, gguf_type_name(t->type));
        t->nbytes = (size_t)(count / block) * bytes;
    }
    return rd_u64(r, offset, "the data offset");
}

static int by_data(const void *a, const void *b)
{
    const GgufTensor *x = *(const GgufTensor *const *)a, *y = *(const GgufTensor *const *)b;
    return x->data < y->data ? -1 : x->data > y->data;
}

/* The tensor infos, then each tensor's bytes: aligned, inside the file, no
 * two overlapping, no name twice. */
static int rd_tensors(Rd *r, Gguf *g)
{
    uint64_t *offsets = malloc((size_t)(g->n_tensors ? g->n_tensors : 1) * sizeof *offsets);
    g->t_by_name = malloc((size_t)(g->n_tensors ? g->n_tensors : 1) * sizeof *g->t_by_name);
    if (!offsets || !g->t_by_name) {
        free(offsets);
        return fail(r, ATTN_E_NOMEM, "out of memory");
    }
    int rc = 0;
    for (int i = 0; i < g->n_tensors && rc == 0; i++)
        rc = rd_tensor_info(r, &g->t[i], i, &offsets[i]);
    /* the data starts at the next multiple of the alignment */
    size_t pad = (g->alignment - r->pos % g->alignment) % g->alignment;
    g->data_offset = r->pos + pad;
    if (rc == 0 && g->n_tensors > 0 && pad > left(r)) {
        r->where[0] = '\0';
        rc = fail(r, ATTN_E_PARSE, "the tensor data would start at byte %zu (the tensor infos end "
                  "at %zu, aligned to %zu), past the end of the file (%zu bytes)",
                  g->data_offset, r->pos, g->alignment, r->len);
    }
    size_t data_len = g->data_offset <= r->len ? r->len - g->data_offset : 0;
    for (int i = 0; i < g->n_tensors && rc == 0; i++) {
        GgufTensor *t = &g->t[i];
        snprintf(r->where, sizeof r->where, "tensor %.300s", t->name);
        if (offsets[i] % g->alignment)
            rc = fail(r, ATTN_E_PARSE, "data offset %llu is not a multiple of the alignment %zu",
                      (unsigned long long)offsets[i], g->alignment);
        else if (offsets[i] > data_len || t->nbytes > data_len - offsets[i])
            rc = fail(r, ATTN_E_RANGE, "offset %llu + %zu bytes (from the data's start at byte %zu) "
                      "is past the end of the file (%zu bytes)", (unsigned long long)offsets[i],
                      t->nbytes, g->data_offset, r->len);
        else
            t->data = r->b + g->data_offset + offsets[i];
        g->t_by_name[i] = t;
    }
    free(offsets);
    if (rc < 0)
        return rc;
    r->where[0] = '\0';
    qsort(g->t_by_name, (size_t)g->n_tensors, sizeof *g->t_by_name, t_cmp);
    for (int i = 1; i < g->n_tensors; i++)
        if (t_cmp(&g->t_by_name[i - 1], &g->t_by_name[i]) == 0)
            return fail(r, ATTN_E_DUPLICATE, "tensor %.300s is in the file twice",
                        g->t_by_name[i]->name);
    /* overlaps: sorted by where their bytes start, each must end before the next */
    const GgufTensor **o = malloc((size_t)(g->n_tensors ? g->n_tensors : 1) * sizeof *o);
    if (!o)
        return fail(r, ATTN_E_NOMEM, "out of memory");
    int n = 0;
    for (int i = 0; i < g->n_tensors; i++)
        if (g->t[i].nbytes)
            o[n++] = &g->t[i];
    qsort(o, (size_t)n, sizeof *o, by_data);
    for (int i = 1; i < n && rc == 0; i++)
        if (o[i]->data < o[i - 1]->data + o[i - 1]->nbytes) {
            size_t a = (size_t)(o[i - 1]->data - r->b - g->data_offset);
            size_t b = (size_t)(o[i]->data - r->b - g->data_offset);
            rc = fail(r, ATTN_E_RANGE, "tensors %.150s (offset %zu, %zu bytes) and %.150s (offset "
                      "%zu, %zu bytes) overlap", o[i - 1]->name, a, o[i - 1]->nbytes, o[i]->name,
                      b, o[i]->nbytes);
        }
    free(o);
    return rc;
}

int gguf_parse(Gguf *g, const void *bytes, size_t len, const char *name, AttnErr *err)
{
    memset(g, 0, sizeof *g);
    Rd r = {.b = bytes, .len = len, .file = name ? name : "", .err = err};
    Gguf tmp = {0};
    uint64_t n_tensors, n_kv;
    int rc = rd_header(&r, &tmp, &n_tensors, &n_kv);
    if (rc < 0)
        return rc;
    /* the counts fit the bytes left (checked above), so far below INT_MAX
     * for any file that fits memory; still, int is what the struct holds */
    if (n_kv > INT_MAX || n_tensors > INT_MAX)
        return fail(&r, ATTN_E_TOO_LARGE, "%llu keys and %llu tensors are more than attnviz reads",
                    (unsigned long long)n_kv, (unsigned long long)n_tensors);
    tmp.n_kv = (int)n_kv;
    tmp.n_tensors = (int)n_tensors;
    tmp.kv = calloc(n_kv ? (size_t)n_kv : 1, sizeof *tmp.kv);
    tmp.t = calloc(n_tensors ? (size_t)n_tensors : 1, sizeof *tmp.t);
    if (!tmp.kv || !tmp.t)
        rc = fail(&r, ATTN_E_NOMEM, "out of memory");
    if (rc == 0)
        rc = rd_metadata(&r, &tmp);
    if (rc == 0)
        rc = rd_alignment(&r, &tmp);
    if (rc == 0)
        rc = rd_tensors(&r, &tmp);
    if (rc < 0) {
        gguf_free(&tmp);
        return rc;
    }
    *g = tmp;
    return 0;
}

void gguf_free(Gguf *g)
{
    if (!g)
        return;
    for (int i = 0; g->kv && i < g->n_kv; i++)
        free(g->kv[i].key);
    for (int i = 0; g->t && i < g->n_tensors; i++)
        free(g->t[i].name);
    free(g->kv);
    free(g->t);
    free(g->kv_by_key);
    free(g->t_by_name);
    memset(g, 0, sizeof *g);
}

/* ---- typed getters ------------------------------------------------------------------------ */
static int wrong_type(const GgufKV *kv, const char *want, const char *file, AttnErr *err)
{
    if (kv->type == GGUF_ARRAY)
        return attn_err_set(err, ATTN_E_PARSE, file, 0, "metadata key \"%.200s\" is an array of "
                            "%s, not %s", kv->key, value_names[kv->arr_type], want);
    return attn_err_set(err, ATTN_E_PARSE, file, 0, "metadata key \"%.200s\" is a%s %s, not %s",
                        kv->key, kv->type == GGUF_I8 || kv->type == GGUF_I16 ||
                        kv->type == GGUF_I32 || kv->type == GGUF_I64 ? "n" : "",
                        value_names[kv->type], want);
}

int gguf_get_int(const Gguf *g, const char *key, int64_t *out, const char *file, AttnErr *err)
{
    const GgufKV *kv = gguf_find(g, key);
    if (!kv)
        return 1;
    if (is_signed(kv->type)) {
        *out = kv->v.i;
        return 0;
    }
    if (!is_unsigned(kv->type))
        return wrong_type(kv, "an integer", file, err);
    if (kv->v.u > (uint64_t)INT64_MAX)
        return attn_err_set(err, ATTN_E_RANGE, file, 0, "metadata key \"%.200s\": %llu is out of "
                            "range (at most %lld)", kv->key, (unsigned long long)kv->v.u,
                            (long long)INT64_MAX);
    *out = (int64_t)kv->v.u;
    return 0;
}

int gguf_get_float(const Gguf *g, const char *key, double *out, const char *file, AttnErr *err)
{
    const GgufKV *kv = gguf_find(g, key);
    if (!kv)
        return 1;
    if (kv->type == GGUF_F32 || kv->type == GGUF_F64)
        *out = kv->v.f;
    else if (is_signed(kv->type))
        *out = (double)kv->v.i;
    else if (is_unsigned(kv->type) && kv->type != GGUF_BOOL)
        *out = (double)kv->v.u;
    else
        return wrong_type(kv, "a number", file, err);
    return 0;
}

int gguf_get_str(const Gguf *g, const char *key, GgufStr *out, const char *file, AttnErr *err)
{
    const GgufKV *kv = gguf_find(g, key);
    if (!kv)
        return 1;
    if (kv->type != GGUF_STRING)
        return wrong_type(kv, "a string", file, err);
    *out = kv->v.str;
    return 0;
}

int gguf_get_array(const Gguf *g, const char *key, GgufType elem, const GgufKV **out,
                   const char *file, AttnErr *err)
{
    const GgufKV *kv = gguf_find(g, key);
    if (!kv)
        return 1;
    if (kv->type != GGUF_ARRAY || (elem != GGUF_ARRAY && kv->arr_type != elem)) {
        char want[64];
        if (elem == GGUF_ARRAY)
            snprintf(want, sizeof want, "an array");
        else
            snprintf(want, sizeof want, "an array of %s", gguf_value_type_name(elem) ?
                     gguf_value_type_name(elem) : "?");
        return wrong_type(kv, want, file, err);
    }
    *out = kv;
    return 0;
}

/* ---- an array's elements ------------------------------------------------------------------- */
/* Bytes of one element at p (already checked by the parse). */
static size_t element_span(GgufType t, const unsigned char *p)
{
    if (value_size[t])
        return value_size[t];
    if (t == GGUF_STRING)
        return 8 + (size_t)le(p, 8);
    GgufType et = (GgufType)le(p, 4);
    uint64_t n = le(p + 4, 8);
    size_t span = 12;
    if (value_size[et])
        return span + (size_t)n * value_size[et];
    for (uint64_t i = 0; i < n; i++)
        span += element_span(et, p + span);
    return span;
}

int gguf_array_strings(const GgufKV *kv, GgufStr *out)
{
    if (!kv || kv->type != GGUF_ARRAY || kv->arr_type != GGUF_STRING)
        return -ATTN_E_PARSE;
    const unsigned char *p = kv->arr_data;
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        out[i].len = (size_t)le(p, 8);
        out[i].s = (const char *)p + 8;
        p += 8 + out[i].len;
    }
    return 0;
}

int gguf_array_f32(const GgufKV *kv, float *out)
{
    if (!kv || kv->type != GGUF_ARRAY || !value_size[kv->arr_type])
        return -ATTN_E_PARSE;
    GgufType t = kv->arr_type;
    size_t w = value_size[t];
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        const unsigned char *p = kv->arr_data + i * w;
        if (t == GGUF_F32 || t == GGUF_F64)
            out[i] = (float)as_float(t, p);
        else if (is_signed(t))
            out[i] = (float)as_signed(t, p);
        else
            out[i] = t == GGUF_BOOL ? (float)(p[0] != 0) : (float)le(p, (int)w);
    }
    return 0;
}

int gguf_array_i32(const GgufKV *kv, int32_t *out)
{
    if (!kv || kv->type != GGUF_ARRAY || !(is_signed(kv->arr_type) || is_unsigned(kv->arr_type)))
        return -ATTN_E_PARSE;
    GgufType t = kv->arr_type;
    size_t w = value_size[t];
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        const unsigned char *p = kv->arr_data + i * w;
        if (is_signed(t)) {
            int64_t v = as_signed(t, p);
            if (v < INT32_MIN || v > INT32_MAX)
                return -ATTN_E_RANGE;
            out[i] = (int32_t)v;
        } else {
            uint64_t v = t == GGUF_BOOL ? p[0] != 0 : le(p, (int)w);
            if (v > INT32_MAX)
                return -ATTN_E_RANGE;
            out[i] = (int32_t)v;
        }
    }
    return 0;
}

int gguf_array_arrays(const GgufKV *kv, GgufKV *out)
{
    if (!kv || kv->type != GGUF_ARRAY || kv->arr_type != GGUF_ARRAY)
        return -ATTN_E_PARSE;
    const unsigned char *p = kv->arr_data;
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        size_t span = element_span(GGUF_ARRAY, p);
        out[i] = (GgufKV){.key = NULL, .type = GGUF_ARRAY, .arr_type = (GgufType)le(p, 4),
                          .arr_n = le(p + 4, 8), .arr_data = p + 12, .arr_bytes = span - 12};
        p += span;
    }
    return 0;
}
