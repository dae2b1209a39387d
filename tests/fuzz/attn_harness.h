/* Fuzz logic of the attention-file readers (.npy, .npz), shared like
 * harness.h's by the libFuzzer targets fuzz_npy.c / fuzz_npz.c and by
 * tests/test_fuzz_regress.c. Each returns NULL when every invariant held. */
#ifndef ATTNVIZ_FUZZ_ATTN_HARNESS_H
#define ATTNVIZ_FUZZ_ATTN_HARNESS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnio.h"
#include "harness.h"

#define FUZZ_NPY_MAX (1u << 16)
#define FUZZ_NPZ_MAX (1u << 16)

/* Every part inside [lo, lo + n) with its whole extent; every byte read. */
static inline const char *fuzz_attn_parts(const AttnFile *f, const unsigned char *lo, size_t n)
{
    int L = 0;
    if (f->n_parts < 1 || f->n_parts > ATTN_FILE_MAX_LAYERS)
        return "n_parts out of range";
    for (int p = 0; p < f->n_parts; p++) {
        const AttnPart *pt = &f->parts[p];
        if (pt->L < 1 || pt->H != f->H || pt->Tq != f->Tq || pt->Tk != f->Tk)
            return "a part's shape differs from the file's";
        if (pt->L > ATTN_FILE_MAX_LAYERS || pt->H < 1 || pt->H > ATTN_FILE_MAX_HEADS ||
            pt->Tq < 1 || pt->Tq > ATTN_FILE_MAX_TOKENS || pt->Tk < 1 ||
            pt->Tk > ATTN_FILE_MAX_TOKENS)
            return "a size out of its range";
        if (pt->dtype != ATTN_DT_F16 && pt->dtype != ATTN_DT_F32 && pt->dtype != ATTN_DT_F64)
            return "a dtype npy cannot hold";
        size_t es = pt->dtype == ATTN_DT_F16 ? 2 : pt->dtype == ATTN_DT_F32 ? 4 : 8;
        size_t bytes = (size_t)pt->L * pt->H * pt->Tq * pt->Tk * es;
        const unsigned char *d = pt->data;
        if (!d || d < lo || (size_t)(d - lo) > n || bytes > n - (size_t)(d - lo))
            return "a part's data is outside its buffer";
        volatile unsigned sum = 0;
        for (size_t k = 0; k < bytes; k++)
            sum += d[k];
        (void)sum;
        L += pt->L;
    }
    if (L != f->L)
        return "L is not the sum of the parts' layers";
    if (f->Tq != f->Tk && !f->cross)
        return "Tq != Tk but not cross";
    return NULL;
}

static inline const char *fuzz_attn_tokens(char **t, int n)
{
    if (!t)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!t[i] || !fuzz_valid_utf8(t[i], strlen(t[i])))
            return "a token missing or not valid UTF-8";
    return t[n] ? "token list not NULL-terminated after its count" : NULL;
}

/* Parse (npz or npy) a copy of exactly size bytes; check the error contract
 * or the result; close. */
static inline const char *fuzz_check_attn(const uint8_t *data, size_t size, int npz)
{
    if (size > (npz ? FUZZ_NPZ_MAX : FUZZ_NPY_MAX))
        return NULL;
    unsigned char *copy = malloc(size ? size : 1);
    AttnFile *f = malloc(sizeof *f);
    AttnErr err;
    const char *bad = NULL;
    if (!copy || !f)
        goto out;
    if (size)
        memcpy(copy, data, size);
    memset(&err, 0, sizeof err);
    memset(f, 0x5A, sizeof *f);
    int rc = npz ? attn_npz_parse(f, copy, size, "fuzz", &err)
                 : attn_npy_parse(f, copy, size, "fuzz", &err);
    if (rc != 0) {
        bad = fuzz_check_err(rc, &err);
        if (!bad && (f->buf || f->map || f->q_tokens || f->k_tokens || f->n_parts))
            bad = "an error left something in the file";
        goto out;
    }
    if (npz && (!f->buf || f->map))
        bad = "npz: members not in an owned buffer";
    if (!npz && (f->buf || f->map))
        bad = "npy: made a buffer";
    if (!bad)
        bad = npz ? fuzz_attn_parts(f, f->buf, f->buf_len) : fuzz_attn_parts(f, copy, size);
    if (!bad && (f->q_tokens == NULL) != (f->k_tokens == NULL))
        bad = "one token list without the other";
    if (!bad)
        bad = fuzz_attn_tokens(f->q_tokens, f->Tq);
    if (!bad)
        bad = fuzz_attn_tokens(f->k_tokens, f->Tk);
    attn_file_close(f);
out:
    free(f);
    free(copy);
    return bad;
}

static inline const char *fuzz_check_npy(const uint8_t *data, size_t size)
{
    return fuzz_check_attn(data, size, 0);
}

static inline const char *fuzz_check_npz(const uint8_t *data, size_t size)
{
    return fuzz_check_attn(data, size, 1);
}

#endif
