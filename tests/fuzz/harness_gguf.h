/* The GGUF reader's fuzz check (gguf_parse), shared by the libFuzzer target
 * fuzz_gguf.c and by tests/test_fuzz_regress.c: NULL when every invariant
 * held, else what did not. Inputs above the cap are ignored. */
#ifndef ATTNVIZ_FUZZ_HARNESS_GGUF_H
#define ATTNVIZ_FUZZ_HARNESS_GGUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gguf.h"

#define FUZZ_GGUF_MAX (1u << 16)

/* [p, p + n) inside [lo, lo + len), both ends touched (ASan checks them). */
static inline int fuzz_gguf_inside(const unsigned char *p, size_t n, const unsigned char *lo,
                                   size_t len)
{
    if (p < lo || p > lo + len || n > (size_t)(lo + len - p))
        return 0;
    if (n) {
        volatile unsigned char touch = p[0] ^ p[n - 1];
        (void)touch;
    }
    return 1;
}

/* An array's elements, through the conversions that apply to its type. */
static inline const char *fuzz_gguf_array(const GgufKV *kv, const unsigned char *lo, size_t len,
                                          int depth)
{
    if (depth > GGUF_MAX_ARRAY_DEPTH)
        return "arrays nested deeper than the cap";
    if ((unsigned)kv->arr_type >= GGUF_TYPE_COUNT)
        return "an array of an unknown element type";
    if (!fuzz_gguf_inside(kv->arr_data, kv->arr_bytes, lo, len))
        return "an array's bytes outside the input";
    if (kv->arr_n > len)
        return "more elements than bytes";
    size_t n = kv->arr_n ? (size_t)kv->arr_n : 1;
    const char *bad = NULL;
    if (kv->arr_type == GGUF_STRING) {
        GgufStr *s = malloc(n * sizeof *s);
        if (!s)
            return NULL;
        if (gguf_array_strings(kv, s) != 0)
            bad = "gguf_array_strings refused a string array";
        size_t total = 0;
        for (uint64_t i = 0; !bad && i < kv->arr_n; i++) {
            if (!fuzz_gguf_inside((const unsigned char *)s[i].s, s[i].len, kv->arr_data,
                                  kv->arr_bytes))
                bad = "a string element outside its array";
            total += 8 + s[i].len;
        }
        if (!bad && total != kv->arr_bytes)
            bad = "the string elements do not tile the array";
        free(s);
    } else if (kv->arr_type == GGUF_ARRAY) {
        GgufKV *sub = malloc(n * sizeof *sub);
        if (!sub)
            return NULL;
        if (gguf_array_arrays(kv, sub) != 0)
            bad = "gguf_array_arrays refused an array of arrays";
        size_t total = 0;
        for (uint64_t i = 0; !bad && i < kv->arr_n; i++) {
            bad = fuzz_gguf_array(&sub[i], kv->arr_data, kv->arr_bytes, depth + 1);
            total += 12 + sub[i].arr_bytes;
        }
        if (!bad && total != kv->arr_bytes)
            bad = "the nested arrays do not tile the array";
        free(sub);
    } else {
        float *f = malloc(n * sizeof *f);
        int32_t *i32 = malloc(n * sizeof *i32);
        if (f && i32) {
            if (gguf_array_f32(kv, f) != 0)
                bad = "gguf_array_f32 refused an array of numbers";
            int rc = gguf_array_i32(kv, i32);
            int fl = kv->arr_type == GGUF_F32 || kv->arr_type == GGUF_F64;
            if (!bad && (fl ? rc != -ATTN_E_PARSE : rc != 0 && rc != -ATTN_E_RANGE))
                bad = "gguf_array_i32 gave an unexpected code";
        }
        free(f);
        free(i32);
    }
    return bad;
}

static inline int fuzz_gguf_by_data(const void *a, const void *b)
{
    const GgufTensor *x = *(const GgufTensor *const *)a, *y = *(const GgufTensor *const *)b;
    return x->data < y->data ? -1 : x->data > y->data;
}

/* A parsed file: keys and names unique and found, every value and tensor
 * inside the input, shapes and sizes consistent, no two tensors overlap. */
static inline const char *fuzz_gguf_table(const Gguf *g, const unsigned char *lo, size_t len)
{
    if (g->version != 2 && g->version != 3)
        return "a version other than 2 and 3";
    if (!g->alignment || (g->alignment & (g->alignment - 1)))
        return "an alignment that is not a power of two";
    if (g->n_kv < 0 || g->n_tensors < 0)
        return "a negative count";
    for (int i = 0; i < g->n_kv; i++) {
        const GgufKV *kv = &g->kv[i];
        if (!kv->key || !kv->key[0])
            return "an empty key";
        if (gguf_find(g, kv->key) != kv)
            return "gguf_find does not find a key (or finds another)";
        if ((unsigned)kv->type >= GGUF_TYPE_COUNT)
            return "an unknown value type";
        if (kv->type == GGUF_STRING && !fuzz_gguf_inside((const unsigned char *)kv->v.str.s,
                                                         kv->v.str.len, lo, len))
            return "a string outside the input";
        if (kv->type == GGUF_BOOL && kv->v.u > 1)
            return "a bool other than 0 and 1";
        if (kv->type == GGUF_ARRAY) {
            const char *bad = fuzz_gguf_array(kv, lo, len, 0);
            if (bad)
                return bad;
        }
    }
    const GgufTensor **by = malloc((size_t)(g->n_tensors ? g->n_tensors : 1) * sizeof *by);
    if (!by)
        return NULL;
    const char *bad = NULL;
    int nb = 0;
    for (int i = 0; i < g->n_tensors && !bad; i++) {
        const GgufTensor *t = &g->t[i];
        if (!t->name || !t->name[0] || gguf_tensor(g, t->name) != t)
            bad = "a tensor not found by its name";
        else if (t->ndim < 1 || t->ndim > GGUF_MAX_DIMS)
            bad = "ndim out of 1..4";
        if (bad)
            break;
        int64_t count = 1;
        for (int k = 0; k < GGUF_MAX_DIMS && !bad; k++) {
            if (t->ne[k] < 1 || (k >= t->ndim && t->ne[k] != 1))
                bad = "a dimension below 1, or not 1 past ndim";
            else if (count > INT64_MAX / t->ne[k])
                bad = "an element count that overflows";
            else
                count *= t->ne[k];
        }
        if (bad)
            break;
        int block = gguf_type_block(t->type);
        size_t want = block ? (size_t)(count / block) * gguf_type_bytes(t->type) : 0;
        if (block && t->ne[0] % block)
            bad = "ne[0] not a whole number of blocks";
        else if (t->nbytes != want)
            bad = "nbytes disagrees with the type and shape";
        else if (!fuzz_gguf_inside(t->data, t->nbytes, lo, len))
            bad = "a tensor's bytes outside the input";
        else if ((size_t)(t->data - lo) < g->data_offset ||
                 (size_t)(t->data - lo - g->data_offset) % g->alignment)
            bad = "a tensor before the data or off the alignment";
        else if (t->nbytes)
            by[nb++] = t;
    }
    if (!bad) {
        qsort(by, (size_t)nb, sizeof *by, fuzz_gguf_by_data);
        for (int i = 1; i < nb && !bad; i++)
            if (by[i]->data < by[i - 1]->data + by[i - 1]->nbytes)
                bad = "two tensors overlap";
    }
    free(by);
    return bad;
}

static inline const char *fuzz_check_gguf(const uint8_t *data, size_t size)
{
    static const Gguf zero;
    if (size > FUZZ_GGUF_MAX)
        return NULL;
    unsigned char *copy = malloc(size ? size : 1); /* exactly size bytes for ASan */
    if (!copy)
        return NULL;
    if (size)
        memcpy(copy, data, size);
    Gguf g;
    memset(&g, 0x5a, sizeof g);
    AttnErr err;
    memset(&err, 0, sizeof err);
    const char *bad = NULL;
    int rc = gguf_parse(&g, copy, size, "fuzz", &err);
    if (rc == -ATTN_E_NOMEM) {
        free(copy);
        return NULL;
    }
    if (rc != 0) {
        if (rc > 0 || err.code != -rc || err.code >= ATTN_E_COUNT_)
            bad = "err.code is not -rc";
        else if (!memchr(err.msg, '\0', sizeof err.msg) || !err.msg[0])
            bad = "error without a message";
        else if (strcmp(err.file, "fuzz") != 0)
            bad = "error does not name the file";
        else if (memcmp(&g, &zero, sizeof g) != 0)
            bad = "the parser left something in g on error";
        free(copy);
        return bad;
    }
    bad = fuzz_gguf_table(&g, copy, size);
    gguf_free(&g);
    if (!bad && memcmp(&g, &zero, sizeof g) != 0)
        bad = "gguf_free did not reset g";
    free(copy);
    return bad;
}

#endif
