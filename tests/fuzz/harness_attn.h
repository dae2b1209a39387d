/* Fuzz harness logic for the attention readers (attn_safetensors_parse,
 * attn_json_parse, attn_json_is_attention), shared by the libFuzzer targets
 * fuzz_safetensors.c and fuzz_attn_json.c and by tests/test_fuzz_regress.c,
 * as harness.h is for the others: NULL when every invariant held, else what
 * did not. Inputs above the cap are ignored. */
#ifndef ATTNVIZ_FUZZ_HARNESS_ATTN_H
#define ATTNVIZ_FUZZ_HARNESS_ATTN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnio.h"

#define FUZZ_SAFETENSORS_MAX (1u << 16)
#define FUZZ_ATTN_JSON_MAX   (1u << 16)

/* What a parser made (attn_file_close is not used: it unmaps too). */
static inline void fuzz_attn_release(AttnFile *f)
{
    char **lists[2] = {f->q_tokens, f->k_tokens != f->q_tokens ? f->k_tokens : NULL};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; lists[k] && lists[k][i]; i++)
            free(lists[k][i]);
        free(lists[k]);
    }
    free(f->buf);
    memset(f, 0, sizeof *f);
}

static inline const char *fuzz_st_tokens(char **t, int n)
{
    if (!t)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!t[i])
            return "fewer tokens than the map's side";
    return t[n] ? "more tokens than the map's side" : NULL;
}

/* A successful parse: sizes in range, parts consistent and inside
 * [lo, lo + len) (or the parser's buffer), tokens of the right counts. */
static inline const char *fuzz_attn_file(const AttnFile *f, const void *lo, size_t len)
{
    static const size_t size[ATTN_DT_COUNT] = {2, 2, 4, 8};
    if (f->n_parts < 1 || f->n_parts > ATTN_FILE_MAX_LAYERS || f->L < 1 ||
        f->L > ATTN_FILE_MAX_LAYERS || f->H < 1 || f->H > ATTN_FILE_MAX_HEADS || f->Tq < 1 ||
        f->Tq > ATTN_FILE_MAX_TOKENS || f->Tk < 1 || f->Tk > ATTN_FILE_MAX_TOKENS)
        return "sizes out of range";
    if (f->map)
        return "a parser set map";
    int L = 0;
    const unsigned char *a = f->buf ? f->buf : lo, *b = a + (f->buf ? f->buf_len : len);
    for (int k = 0; k < f->n_parts; k++) {
        const AttnPart *p = &f->parts[k];
        if ((int)p->dtype < 0 || p->dtype >= ATTN_DT_COUNT || p->fortran || p->L < 1 ||
            p->H != f->H || p->Tq != f->Tq || p->Tk != f->Tk)
            return "a part inconsistent with the file";
        size_t bytes = (size_t)p->L * p->H * p->Tq * p->Tk * size[p->dtype];
        const unsigned char *d = p->data;
        if (!d || d < a || d > b || bytes > (size_t)(b - d))
            return "a part's numbers outside the bytes";
        volatile unsigned char touch = d[0] ^ d[bytes - 1]; /* ASan: both ends */
        (void)touch;
        L += p->L;
    }
    if (L != f->L)
        return "the parts' layers do not add up to L";
    const char *bad = fuzz_st_tokens(f->q_tokens, f->Tq);
    if (!bad)
        bad = fuzz_st_tokens(f->k_tokens, f->Tk);
    if (!bad && (!f->q_tokens) != (!f->k_tokens))
        bad = "query tokens without key tokens";
    if (!bad && f->cross != (f->Tq != f->Tk || f->q_tokens != f->k_tokens))
        bad = "cross is not (Tq != Tk or separate token lists)";
    return bad;
}

static inline const char *fuzz_attn_error(int rc, const AttnErr *err, const AttnFile *f)
{
    static const AttnFile zero;
    if (rc >= 0)
        return "error check on a success";
    if (err->code != -rc || err->code <= 0 || err->code >= ATTN_E_COUNT_)
        return "err.code is not -rc";
    if (!memchr(err->msg, '\0', sizeof err->msg) || err->msg[0] == '\0')
        return "error without a message";
    if (strcmp(err->file, "fuzz") != 0)
        return "error does not name the file";
    if (memcmp(f, &zero, sizeof zero) != 0)
        return "the parser left something in f on error";
    return NULL;
}

static inline const char *fuzz_check_safetensors(const uint8_t *data, size_t size)
{
    if (size > FUZZ_SAFETENSORS_MAX)
        return NULL;
    unsigned char *copy = malloc(size ? size : 1); /* exactly size bytes for ASan */
    AttnFile *f = malloc(sizeof *f);
    const char *bad = NULL;
    if (!copy || !f)
        goto out;
    if (size)
        memcpy(copy, data, size);
    memset(f, 0x5a, sizeof *f);
    AttnErr err;
    memset(&err, 0, sizeof err);
    int rc = attn_safetensors_parse(f, copy, size, "fuzz", &err);
    if (rc == -ATTN_E_NOMEM)
        goto out;
    if (rc != 0) {
        bad = fuzz_attn_error(rc, &err, f);
        memset(f, 0, sizeof *f); /* not freed: a bug here must not crash */
        goto out;
    }
    bad = fuzz_attn_file(f, copy, size);
    if (!bad && (f->buf || f->buf_len))
        bad = "safetensors made a buffer";
    for (int k = 0; !bad && k < f->n_parts; k++)
        if (f->parts[k].big_endian)
            bad = "a safetensors part is not little-endian";
out:
    if (f)
        fuzz_attn_release(f);
    free(f);
    free(copy);
    return bad;
}

static inline const char *fuzz_check_attn_json(const uint8_t *data, size_t size)
{
    if (size > FUZZ_ATTN_JSON_MAX)
        return NULL;
    char *copy = malloc(size ? size : 1);
    AttnFile *f = malloc(sizeof *f);
    const char *bad = NULL;
    if (!copy || !f)
        goto out;
    if (size)
        memcpy(copy, data, size);
    int is_att = attn_json_is_attention(copy, size);
    memset(f, 0x5a, sizeof *f);
    AttnErr err;
    memset(&err, 0, sizeof err);
    int rc = attn_json_parse(f, copy, size, "fuzz", &err);
    if (rc == -ATTN_E_NOMEM)
        goto out;
    if (rc != 0) {
        bad = fuzz_attn_error(rc, &err, f);
        memset(f, 0, sizeof *f);
        goto out;
    }
    /* without escapes the "attention" key is spelled as the check looks for it */
    if (!is_att && !memchr(copy, '\\', size))
        bad = "attn_json_is_attention says no to an attention file";
    if (!bad)
        bad = fuzz_attn_file(f, NULL, 0);
    if (!bad && (f->n_parts != 1 || !f->buf || f->parts[0].data != f->buf ||
                 f->parts[0].dtype != ATTN_DT_F64 ||
                 f->buf_len != (size_t)f->L * f->H * f->Tq * f->Tk * sizeof(double)))
        bad = "not one float64 buffer of L×H×Tq×Tk";
    for (size_t e = 0; !bad && e < f->buf_len / sizeof(double); e++)
        if (!isfinite(((const double *)f->buf)[e]))
            bad = "a number that is not finite";
out:
    if (f)
        fuzz_attn_release(f);
    free(f);
    free(copy);
    return bad;
}

/* attn_session_parse: on error err names the file and s is all zero; on
 * success the file is a non-empty string and the picks are in range;
 * attn_session_is agrees with a successful parse. */
static inline const char *fuzz_check_attn_session(const uint8_t *data, size_t size)
{
    if (size > FUZZ_ATTN_JSON_MAX)
        return NULL;
    char *copy = malloc(size ? size : 1);
    AttnSession *s = malloc(sizeof *s);
    const char *bad = NULL;
    if (!copy || !s)
        goto out;
    if (size)
        memcpy(copy, data, size);
    memset(s, 0x5a, sizeof *s);
    AttnErr err;
    memset(&err, 0, sizeof err);
    int rc = attn_session_parse(s, copy, size, "fuzz", &err);
    if (rc == -ATTN_E_NOMEM)
        goto out;
    if (rc != 0) {
        static const AttnSession zero;
        if (rc != -ATTN_E_PARSE || strcmp(err.file, "fuzz") != 0 || !err.msg[0])
            bad = "error without its code, file or message";
        else if (memcmp(s, &zero, sizeof zero) != 0)
            bad = "session not zeroed on error";
        goto out;
    }
    if (!s->file[0] || memchr(s->file, 0, sizeof s->file) == NULL)
        bad = "empty or unterminated file";
    else if (s->layer < -1 || s->head < -1 || s->query < -1 || s->key < -1 ||
             s->layer > ATTN_FILE_MAX_TOKENS || s->head > ATTN_FILE_MAX_TOKENS)
        bad = "pick out of range";
    else if (s->n_probe < 0 || s->n_probe > 1024 || (s->n_probe && (s->probe_n < 1 || s->probe_n > 511)))
        bad = "probe out of range";
    else if (!attn_session_is(copy, size))
        bad = "attn_session_is says no to a session that parses";
out:
    free(copy);
    free(s);
    return bad;
}

#endif
