/* Fuzz harness logic for the GPT-2 model reader's parsers (safetensors_parse
 * on a model file's bytes, model_config_parse(&desc_gpt2) on config.json), shared by the
 * libFuzzer targets fuzz_st_model.c and fuzz_gpt2_config.c and by
 * tests/test_fuzz_regress.c: NULL when every invariant held, else what did
 * not. Inputs above the cap are ignored. */
#ifndef ATTNVIZ_FUZZ_HARNESS_GPT2_H
#define ATTNVIZ_FUZZ_HARNESS_GPT2_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gpt2.h"
#include "attnviz/model_file.h"

#define FUZZ_ST_MODEL_MAX    (1u << 16)
#define FUZZ_GPT2_CONFIG_MAX (1u << 16)

static inline const char *fuzz_gpt2_error(int rc, const AttnErr *err)
{
    if (rc >= 0)
        return "error check on a success";
    if (err->code != -rc || err->code <= 0 || err->code >= ATTN_E_COUNT_)
        return "err.code is not -rc";
    if (!memchr(err->msg, '\0', sizeof err->msg) || err->msg[0] == '\0')
        return "error without a message";
    if (strcmp(err->file, "fuzz") != 0)
        return "error does not name the file";
    return NULL;
}

static inline int fuzz_st_by_data(const void *a, const void *b)
{
    const SafeTensor *x = *(const SafeTensor *const *)a, *y = *(const SafeTensor *const *)b;
    return x->data < y->data ? -1 : x->data > y->data;
}

/* A parsed table: names sorted and unique, each found by name, its dtype
 * and shape consistent with its bytes, which lie inside [lo, lo + len) (both
 * ends touched for ASan) and overlap no other tensor's. */
static inline const char *fuzz_st_table(const SafeTensors *st, const unsigned char *lo,
                                        size_t len)
{
    if (st->n < 0 || (st->n > 0 && !st->t))
        return "a bad tensor count";
    const SafeTensor **by = malloc((size_t)(st->n ? st->n : 1) * sizeof *by);
    if (!by)
        return NULL;
    const char *bad = NULL;
    int nb = 0;
    for (int i = 0; i < st->n && !bad; i++) {
        const SafeTensor *t = &st->t[i];
        if (i > 0 && strcmp(st->t[i - 1].name, t->name) >= 0)
            bad = "names not sorted or not unique";
        else if (safetensors_find(st, t->name) != t)
            bad = "safetensors_find does not find a tensor by its name";
        else if ((unsigned)t->dtype >= SAFE_DTYPE_COUNT || t->ndim < 0 || t->ndim > SAFE_MAX_DIMS)
            bad = "dtype or ndim out of range";
        if (bad)
            break;
        size_t count = 1;
        for (int k = 0; k < t->ndim; k++) {
            if (t->shape[k] < 0)
                bad = "a negative dimension";
            count *= (size_t)t->shape[k]; /* fits: nbytes fit the input */
        }
        if (!bad && (count != t->count ||
                     t->nbytes != count * (size_t)safetensors_dtype_size(t->dtype)))
            bad = "count or nbytes disagree with the shape";
        if (!bad && (t->data < lo || t->data > lo + len || t->nbytes > (size_t)(lo + len - t->data)))
            bad = "a tensor's bytes outside the input";
        if (!bad && t->nbytes) {
            volatile unsigned char touch = t->data[0] ^ t->data[t->nbytes - 1];
            (void)touch;
            by[nb++] = t;
        }
    }
    if (!bad) {
        qsort(by, (size_t)nb, sizeof *by, fuzz_st_by_data);
        for (int i = 1; i < nb && !bad; i++)
            if (by[i]->data < by[i - 1]->data + by[i - 1]->nbytes)
                bad = "two tensors overlap";
    }
    free(by);
    return bad;
}

static inline const char *fuzz_check_st_model(const uint8_t *data, size_t size)
{
    static const SafeTensors zero;
    if (size > FUZZ_ST_MODEL_MAX)
        return NULL;
    unsigned char *copy = malloc(size ? size : 1); /* exactly size bytes for ASan */
    if (!copy)
        return NULL;
    if (size)
        memcpy(copy, data, size);
    SafeTensors st;
    memset(&st, 0x5a, sizeof st);
    AttnErr err;
    memset(&err, 0, sizeof err);
    const char *bad = NULL;
    int rc = safetensors_parse(&st, copy, size, "fuzz", &err);
    if (rc == -ATTN_E_NOMEM) {
        free(copy);
        return NULL;
    }
    if (rc != 0) {
        bad = fuzz_gpt2_error(rc, &err);
        if (!bad && memcmp(&st, &zero, sizeof st) != 0)
            bad = "the parser left something in st on error";
        free(copy);
        return bad;
    }
    bad = fuzz_st_table(&st, copy, size);
    safetensors_free(&st);
    if (!bad && memcmp(&st, &zero, sizeof st) != 0)
        bad = "safetensors_free did not reset st";
    free(copy);
    return bad;
}

static inline const char *fuzz_check_gpt2_config(const uint8_t *data, size_t size)
{
    static const Gpt2Config zero;
    if (size > FUZZ_GPT2_CONFIG_MAX)
        return NULL;
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return NULL;
    if (size)
        memcpy(copy, data, size);
    Gpt2Config c;
    memset(&c, 0x5a, sizeof c);
    AttnErr err;
    memset(&err, 0, sizeof err);
    const char *bad = NULL;
    int rc = model_config_parse(&desc_gpt2, &c, copy, size, "fuzz", &err);
    free(copy);
    if (rc == -ATTN_E_NOMEM)
        return NULL;
    if (rc != 0) {
        bad = fuzz_gpt2_error(rc, &err);
        if (!bad && memcmp(&c, &zero, sizeof c) != 0)
            bad = "the config is not zeroed on error";
        return bad;
    }
    if (c.n_layer < 1 || c.n_head < 1 || c.n_embd < 1 || c.n_positions < 1 || c.n_vocab < 1 ||
        c.n_inner < 1)
        return "a size below 1";
    if (c.n_embd % c.n_head != 0)
        return "n_embd does not divide by n_head";
    if (!(c.ln_eps > 0.0f && c.ln_eps < 1.0f))
        return "layer_norm_epsilon out of (0, 1)";
    if ((unsigned)c.act > GPT2_ACT_RELU)
        return "activation out of range";
    if ((c.scale_attn_weights != 0 && c.scale_attn_weights != 1) ||
        (c.scale_by_inverse_layer_idx != 0 && c.scale_by_inverse_layer_idx != 1))
        return "a flag not 0 or 1";
    if (c.bos_id < -1 || c.bos_id >= c.n_vocab || c.eos_id < -1 || c.eos_id >= c.n_vocab)
        return "bos or eos outside -1 .. n_vocab - 1";
    return NULL;
}

#endif
