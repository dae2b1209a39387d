/* Shared fuzz harness logic: one function per target, used by the libFuzzer
 * targets (tests/fuzz/fuzz_*.c, which abort() when a check fails) and by the
 * regression test tests/test_fuzz_regress.c (which replays the corpora and
 * tests/fuzz/crashes/ through the very same functions).
 *
 * Each fuzz_check_* takes raw bytes and returns NULL when every invariant
 * held, or a short description of the first one that did not. Inputs above
 * the target's cap are ignored (returns NULL), as in stb's fuzzers.
 * fuzz_embed.c keeps its own logic (the regression test includes it). */
#ifndef ATTNVIZ_FUZZ_HARNESS_H
#define ATTNVIZ_FUZZ_HARNESS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attn.h"
#include "attnviz/embed.h"
#include "attnviz/error.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/tokenizer.h"

#define FUZZ_TOKENIZER_MAX (1u << 16)
#define FUZZ_SENTENCES_MAX (1u << 16)
#define FUZZ_WEIGHTS_MAX   (1u << 16)
#define FUZZ_OPTIONS_MAX   (1u << 12)
#define FUZZ_OPTIONS_ARGS  64 /* argv[0] = "attnviz" plus at most 63 pieces */

/* ---- helpers ----------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s (Unicode table 3-7), or 0.
 * Written independently of tok_utf8_len so the two can be compared. */
static inline int fuzz_utf8_len(const unsigned char *s, size_t avail)
{
    if (avail == 0)
        return 0;
    unsigned c = s[0];
    if (c <= 0x7F)
        return 1;
    unsigned lo = 0x80, hi = 0xBF;
    int n;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) { n = 3; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) n = 3;
    else if (c == 0xED) { n = 3; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) n = 3;
    else if (c == 0xF0) { n = 4; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) { n = 4; hi = 0x8F; }
    else return 0;
    if ((size_t)n > avail)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

static inline int fuzz_valid_utf8(const char *p, size_t len)
{
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0; i < len;) {
        int n = fuzz_utf8_len(s + i, len - i);
        if (n == 0)
            return 0;
        i += (size_t)n;
    }
    return 1;
}

/* An error return must match its AttnErr. */
static inline const char *fuzz_check_err(int rc, const AttnErr *err)
{
    if (rc >= 0)
        return "error check on a success";
    if (err->code != -rc)
        return "err.code != -rc";
    if (err->code <= 0 || err->code >= ATTN_E_COUNT_)
        return "err.code out of range";
    if (memchr(err->msg, '\0', sizeof err->msg) == NULL ||
        memchr(err->file, '\0', sizeof err->file) == NULL)
        return "err strings not NUL-terminated";
    if (err->msg[0] == '\0')
        return "error without a message";
    return NULL;
}

/* ---- tokenizer ----------------------------------------------------------- */

static inline const char *fuzz_tokenizer_list(const TokenList *tl,
                                              const uint8_t *data, size_t size)
{
    if (tl->n < 0 || tl->n > ATTN_MAX_TOKENS)
        return "n out of 0..ATTN_MAX_TOKENS";
    if (tl->n_total < tl->n)
        return "n_total < n";
    if (tl->n != (tl->n_total < ATTN_MAX_TOKENS ? tl->n_total : ATTN_MAX_TOKENS))
        return "n != min(n_total, ATTN_MAX_TOKENS)";
    if (tl->n_replaced < 0 || (size_t)tl->n_replaced > size)
        return "n_replaced out of range";
    if ((size_t)tl->n_total > size)
        return "more tokens than bytes";
    size_t prev_end = 0;
    for (int i = 0; i < tl->n; i++) {
        if (tl->off[i] >= tl->cap)
            return "token offset outside buf";
        const char *t = tok_text(tl, i);
        const char *nul = memchr(t, '\0', tl->cap - tl->off[i]);
        if (!nul)
            return "token not NUL-terminated inside buf";
        size_t tlen = (size_t)(nul - t);
        if (tlen == 0)
            return "empty token";
        if (!fuzz_valid_utf8(t, tlen))
            return "token is not valid UTF-8";
        for (size_t k = 0; k < tlen; k++) {
            unsigned char c = (unsigned char)t[k];
            if ((c >= 'A' && c <= 'Z') || c == ' ' || (c >= 0x09 && c <= 0x0D))
                return "token has an upper-case ASCII letter or ASCII space";
        }
        size_t st = tl->src_start[i], sl = tl->src_len[i];
        if (sl == 0)
            return "empty source range";
        if (st > size || sl > size - st)
            return "source range outside the input";
        if (st < prev_end)
            return "source ranges overlap or go backwards";
        prev_end = st + sl;
        if (tlen < sl)
            return "token shorter than its source";
        if (tl->n_replaced == 0) {
            /* No replacement: the token is its source, ASCII lower-cased. */
            if (tlen != sl)
                return "token length != source length without replacements";
            for (size_t k = 0; k < sl; k++) {
                unsigned char c = data[st + k];
                if (c >= 'A' && c <= 'Z')
                    c = (unsigned char)(c - 'A' + 'a');
                if ((unsigned char)t[k] != c)
                    return "token text != lower-cased source";
            }
        }
    }
    return NULL;
}

static inline const char *fuzz_check_tokenizer(const uint8_t *data, size_t size)
{
    if (size > FUZZ_TOKENIZER_MAX)
        return NULL;
    /* tok_utf8_len must agree with an independent decoder at every byte. */
    for (size_t i = 0; i < size; i++)
        if (tok_utf8_len(data + i, size - i) != fuzz_utf8_len(data + i, size - i))
            return "tok_utf8_len disagrees with the reference decoder";
    /* A copy of exactly size bytes, so ASan sees any over-read. */
    char *text = malloc(size ? size : 1);
    TokenList *tl = malloc(sizeof *tl);
    if (!text || !tl) {
        free(text);
        free(tl);
        return NULL;
    }
    if (size)
        memcpy(text, data, size);
    else
        text[0] = '\0'; /* not read: len is 0 */
    tok_init(tl);
    const char *bad = NULL;
    int rc = tok_split(tl, text, size);
    if (rc == -ATTN_E_NOMEM)
        goto out;
    if (rc != 0) {
        bad = "tok_split returned neither 0 nor -ATTN_E_NOMEM";
        goto out;
    }
    bad = fuzz_tokenizer_list(tl, data, size);
    if (bad)
        goto out;
    /* Reusing the list gives the same tokens. */
    int n = tl->n, n_total = tl->n_total, n_rep = tl->n_replaced;
    rc = tok_split(tl, text, size);
    if (rc == 0 && (tl->n != n || tl->n_total != n_total || tl->n_replaced != n_rep))
        bad = "second tok_split on the same list differs";
    else if (rc == 0)
        bad = fuzz_tokenizer_list(tl, data, size);
out:
    tok_free(tl);
    free(tl);
    free(text);
    return bad;
}

/* ---- sentences ------------------------------------------------------------ */

static inline const char *fuzz_check_sentences(const uint8_t *data, size_t size)
{
    if (size > FUZZ_SENTENCES_MAX)
        return NULL;
    char *text = malloc(size ? size : 1);
    if (!text)
        return NULL;
    if (size)
        memcpy(text, data, size);
    else
        text[0] = '\0'; /* not read: len is 0 */
    SentenceList s;
    memset(&s, 0, sizeof s);
    AttnErr err;
    memset(&err, 0, sizeof err);
    const char *bad = NULL;
    int rc = sentences_parse(&s, text, size, "fuzz", &err);
    if (rc != 0) {
        bad = fuzz_check_err(rc, &err);
        if (!bad && (s.n != 0 || s.text || s.keys || s.line))
            bad = "output changed on error";
        if (!bad && err.code != ATTN_E_NOMEM && err.code != ATTN_E_EMPTY &&
            err.code != ATTN_E_PARSE)
            bad = "unexpected error code";
        if (!bad && err.code == ATTN_E_PARSE && err.line < 1)
            bad = "parse error without a line";
        free(text);
        return bad;
    }
    /* Oracle: sentence i is line s.line[i] of the input (after a BOM),
     * trimmed of blanks; lines in between are blank or comments. */
    size_t pos = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    long line = 0;
    int next = 0;
    const char *blank = " \t\r\f\v";
    if (s.n < 1 || !s.text || !s.line)
        bad = "success without sentences";
    while (!bad && pos < size) {
        size_t st = pos, en = pos;
        while (en < size && data[en] != '\n')
            en++;
        pos = en < size ? en + 1 : en;
        line++;
        while (st < en && data[st] && strchr(blank, data[st]))
            st++;
        while (en > st && data[en - 1] && strchr(blank, data[en - 1]))
            en--;
        int is_sentence = st < en && data[st] != '#';
        if (!is_sentence)
            continue;
        if (next >= s.n) {
            bad = "a sentence line is missing from the list";
            break;
        }
        const char *t = s.text[next], *k = s.keys ? s.keys[next] : NULL;
        if (!t || !k || s.line[next] != line) {
            bad = "sentence has the wrong line number (or no keys)";
            break;
        }
        /* a pair: split at the first "|||", each side trimmed (issue 14) */
        size_t qe = en, ks = en;
        for (size_t i = st; i + 3 <= en; i++)
            if (memcmp(data + i, "|||", 3) == 0) {
                qe = i;
                ks = i + 3;
                break;
            }
        while (qe > st && strchr(blank, data[qe - 1]))
            qe--;
        while (ks < en && strchr(blank, data[ks]))
            ks++;
        if (strlen(t) != qe - st || memcmp(t, data + st, qe - st) != 0 || !*t) {
            bad = "sentence text is not its trimmed line (or the side before '|||')";
            break;
        }
        if (strlen(k) != en - ks || memcmp(k, data + ks, en - ks) != 0 ||
            (qe != en && !*k)) {
            bad = "keys are not the trimmed side after '|||'";
            break;
        }
        next++;
    }
    if (!bad && next != s.n)
        bad = "more sentences than sentence lines";
    sentences_free(&s);
    if (!bad && (s.n != 0 || s.text || s.keys || s.line))
        bad = "sentences_free did not reset the list";
    free(text);
    return bad;
}

/* ---- weights ---------------------------------------------------------------- */

/* The tiny table the weights target loads into (GloVe text, d = 4). */
static const char fuzz_tiny_table[] =
    "# dims: noun verb func feeling\n"
    "the 0 0 0.5 0\n"
    "cat 1 0 0 0.2\n"
    "sat 0 1 0 0\n"
    "on 0 0 0.6 0\n"
    "mat 0.9 0 0 0\n"
    "happy 0 0 0 1.3\n"
    ". 0 0 0.2 0\n";
/* Every token but "zebra" is in the table. */
static const char fuzz_tiny_sentence[] = "The cat sat on the mat . Happy zebra";

static inline const char *fuzz_check_rows(Model *m, int head)
{
    if (model_prepare(m, MODEL_WEIGHTS, head) == -ATTN_E_NOMEM)
        return NULL;
    const float *W = model_matrix(m, MODEL_WEIGHTS, head);
    int T = m->res.Tq;
    if (!W || T != m->T || m->res.Tk != T)
        return "attention shape differs from the tokens";
    for (int i = 0; i < T; i++) {
        double sum = 0.0;
        for (int j = 0; j < T; j++) {
            float w = W[(size_t)i * T + j];
            if (isnan(w))
                return "NaN attention weight";
            if (!(w >= 0.0f && w <= 1.0f + 1e-5f))
                return "attention weight outside [0, 1]";
            if (m->cfg.causal && j > i && w != 0.0f)
                return "masked attention weight is not 0";
            sum += w;
        }
        if (fabs(sum - 1.0) > 1e-3)
            return "attention row does not sum to 1";
    }
    return NULL;
}

static inline const char *fuzz_check_model(Model *m)
{
    int rc = model_set_text(m, fuzz_tiny_sentence, sizeof fuzz_tiny_sentence - 1);
    if (rc == -ATTN_E_NOMEM)
        return NULL;
    if (rc != 0)
        return "model_set_text failed";
    if (m->T != 9)
        return "the fixed sentence does not give 9 tokens";
    rc = model_compute(m);
    if (rc == -ATTN_E_NOMEM)
        return NULL;
    if (rc != 0)
        return "model_compute failed after weights_parse succeeded";
    if (m->res.h != m->cfg.heads)
        return "result heads != cfg.heads";
    for (int k = 0; k < m->res.h; k++) {
        const char *bad = fuzz_check_rows(m, k);
        if (bad)
            return bad;
    }
    return fuzz_check_rows(m, MODEL_HEAD_AVG);
}

static inline const char *fuzz_check_weights(const uint8_t *data, size_t size)
{
    if (size > FUZZ_WEIGHTS_MAX)
        return NULL;
    EmbedTable *table = NULL;
    AttnErr err, warn;
    memset(&err, 0, sizeof err);
    memset(&warn, 0, sizeof warn);
    if (embed_parse(&table, fuzz_tiny_table, sizeof fuzz_tiny_table - 1, "tiny",
                    &err, &warn) != 0)
        return NULL; /* out of memory (the table itself is checked in tests) */
    if (table->d != 4) {
        embed_destroy(table);
        return "the tiny table is not d = 4";
    }
    Model *m = calloc(1, sizeof *m);
    char *text = malloc(size ? size : 1);
    const char *bad = NULL;
    AttnConfig cfg = attn_config_default();
    ParsedWeights w;
    memset(&w, 0, sizeof w);
    if (!m || !text)
        goto out_nomodel;
    if (model_init(m, table, &cfg) != 0)
        goto out; /* out of memory */
    if (size)
        memcpy(text, data, size);
    else
        text[0] = '\0'; /* not read: len is 0 */

    /* On error the parser must give nothing back (nothing to free). */
    int d = m->d;
    memset(&w, 0x5a, sizeof w);
    memset(&err, 0, sizeof err);
    int rc = weights_parse(&w, d, text, size, "fuzz", &err);
    if (rc != 0) {
        bad = fuzz_check_err(rc, &err);
        if (!bad && (w.params.Wq || w.params.Wk || w.params.Wv || w.params.Wo ||
                     w.params.h || w.has_seed))
            bad = "weights_parse left data behind on error";
        memset(&w, 0, sizeof w); /* not freed: a bug here must not crash */
        goto out;
    }
    /* Success: a consistent set of finite, bounded weights. */
    int h = w.params.h;
    size_t nqkv = (size_t)d * (size_t)d;
    if (h < 1 || h > ATTN_MAX_HEADS || d % h != 0 || w.params.d != d ||
        w.params.dk != d / h) {
        bad = "inconsistent heads from weights_parse";
        goto out;
    }
    const float *mats[4] = {w.params.Wq, w.params.Wk, w.params.Wv, w.params.Wo};
    for (int k = 0; k < 4; k++)
        for (size_t e = 0; e < nqkv; e++)
            if (!isfinite(mats[k][e]) || fabsf(mats[k][e]) > 1e6f) {
                bad = "non-finite or huge weight accepted";
                goto out;
            }
    /* ... which the model takes as they are */
    rc = model_set_weights(m, &w);
    if (rc == -ATTN_E_NOMEM)
        goto out;
    if (rc != 0) {
        bad = "model_set_weights refused what weights_parse gave";
        goto out;
    }
    if (m->cfg.heads != h || !attn_params_equal(&m->params, &w.params) ||
        m->has_seed != w.has_seed) {
        bad = "model_set_weights did not take the weights";
        goto out;
    }
    bad = fuzz_check_model(m);
    if (bad)
        goto out;
    /* The same weights with the mask, positional encoding and a sharp
     * temperature. */
    m->cfg.causal = 1;
    m->cfg.posenc = 1;
    m->cfg.temperature = 1e-3f;
    bad = fuzz_check_model(m);
out:
    model_destroy(m);
out_nomodel:
    parsed_weights_free(&w);
    free(m);
    free(text);
    embed_destroy(table);
    return bad;
}

/* ---- options --------------------------------------------------------------- */

/* p is NULL, inside [lo, hi), or the sentence buffer. */
static inline int fuzz_ptr_ok(const char *p, const char *lo, const char *hi,
                              const char *own)
{
    return !p || p == own || (p >= lo && p < hi);
}

static inline const char *fuzz_check_options(const uint8_t *data, size_t size)
{
    if (size > FUZZ_OPTIONS_MAX)
        return NULL;
    char *buf = malloc(size + 1);
    if (!buf)
        return NULL;
    if (size)
        memcpy(buf, data, size);
    buf[size] = '\0';
    static char prog[] = "attnviz";
    char *argv[FUZZ_OPTIONS_ARGS + 1];
    int argc = 0;
    argv[argc++] = prog;
    /* Pieces between NUL bytes; an input with no bytes gives no arguments. */
    if (size) {
        char *p = buf, *end = buf + size;
        while (argc < FUZZ_OPTIONS_ARGS) {
            argv[argc++] = p;
            char *nul = memchr(p, '\0', (size_t)(end - p) + 1);
            if (nul >= end)
                break;
            p = nul + 1;
        }
    }
    argv[argc] = NULL;

    Options o;
    AttnErr err;
    memset(&err, 0, sizeof err);
    const char *bad = NULL;
    int rc = options_parse(&o, argc, argv, &err);
    if (rc != 0) {
        bad = fuzz_check_err(rc, &err);
        if (!bad && rc != -ATTN_E_PARSE && rc != -ATTN_E_RANGE && rc != -ATTN_E_NOMEM)
            bad = "options_parse returned an unexpected code";
        options_free(&o);
        free(buf);
        return bad;
    }
    const char *lo = buf, *hi = buf + size + 1, *own = o.sentence_buf;
    const char *ptrs[] = {o.sentence, o.sentence_file, o.embeddings, o.weights,
                          o.session, o.font, o.export_dir, o.colormap};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (!fuzz_ptr_ok(ptrs[i], lo, hi, own) || (ptrs[i] && ptrs[i] == own && i != 0))
            bad = "an option points outside argv";
    if (o.n_exports < 0 || o.n_exports > OPT_MAX_EXPORTS)
        bad = "n_exports out of range";
    for (int i = 0; !bad && i < o.n_exports; i++)
        if (!o.exports[i] || !fuzz_ptr_ok(o.exports[i], lo, hi, NULL))
            bad = "an export points outside argv";
    if (!bad && o.sentence_buf && o.sentence != o.sentence_buf)
        bad = "sentence_buf owned but not used";
    if (!bad && o.sentence && strlen(o.sentence) > size)
        bad = "sentence longer than the input";
    if (!bad && (o.cfg.heads < 1 || o.cfg.heads > ATTN_MAX_HEADS))
        bad = "heads out of range";
    if (!bad && (int)o.cfg.mode != ATTN_MODE_BASIC && (int)o.cfg.mode != ATTN_MODE_LEARNED)
        bad = "mode out of range";
    if (!bad && !(o.cfg.temperature >= 1e-6f && o.cfg.temperature <= 1e6f))
        bad = "temperature out of range";
    /* --head and --layer also pick an attention file's (up to 10^6; the
     * file's own count is checked when it is open) */
    if (!bad && (o.head < -1 || o.head >= 1000000))
        bad = "head out of range";
    if (!bad && (o.layer < -1 || o.layer >= 1000000))
        bad = "layer out of range";
    if (!bad && (o.scale < 1 || o.scale > 8))
        bad = "scale out of range";
    if (!bad && (o.query < -1 || o.query >= 1000000))
        bad = "query out of range";
    if (!bad && (o.line < 0 || o.line > 1000000000L))
        bad = "line out of range";
    if (!bad && o.has_seed && o.seed > (1ULL << 53))
        bad = "seed above 2^53";
    if (!bad && ((int)o.print < (int)PRINT_NONE || (int)o.print > (int)PRINT_LOGIT_LENS ||
                 (int)o.view < (int)VIEW_HEATMAP || (int)o.view > (int)VIEW_HEADS))
        bad = "print or view out of range";
    if (!bad && o.probe && (o.probe_n < 1 || o.probe_n > 511 || !o.model || o.sentence))
        bad = "--probe accepted out of range, without --model or with a sentence";
    if (!bad && o.sentence && o.sentence_file)
        bad = "both a sentence and a sentence file";
    if (!bad && ((o.line && !o.sentence_file) ||
                 (o.all_lines && (!o.sentence_file || !o.n_exports))))
        bad = "--line/--all-lines accepted without what they need";
    options_free(&o);
    if (!bad && o.sentence_buf)
        bad = "options_free did not reset sentence_buf";
    free(buf);
    return bad;
}

/* ---- forward: the partial update and the kernel sets against a whole forward ---- */

#define FUZZ_FORWARD_MAX (1u << 14)

/* A byte cursor that wraps around (short inputs still fill every value). */
typedef struct FuzzBytes {
    const uint8_t *p;
    size_t n, at;
} FuzzBytes;

static inline uint8_t fuzz_byte(FuzzBytes *b)
{
    return b->n ? b->p[b->at++ % b->n] : 0;
}

/* A float from one byte: mostly small values, sometimes 0, huge, inf or NaN. */
static inline float fuzz_float(FuzzBytes *b)
{
    uint8_t v = fuzz_byte(b);
    switch (v) {
    case 0xFF: return NAN;
    case 0xFE: return INFINITY;
    case 0xFD: return -INFINITY;
    case 0xFC: return 1e30f;
    case 0xFB: return -1e30f;
    case 0xFA: return 0.0f;
    default: return ((float)v - 125.0f) / 32.0f;
    }
}

/* The same floats bit for bit, except that any two NaNs count as equal: the
 * sign of a NaN made from two NaNs depends on which operand the compiler put
 * first, which differs between the vector and the scalar tail of a kernel. */
static inline const char *fuzz_same(const float *a, const float *b, size_t n)
{
    if ((a == NULL) != (b == NULL))
        return "one result kept an array the other did not";
    for (size_t e = 0; a && e < n; e++)
        if (memcmp(&a[e], &b[e], sizeof(float)) != 0 && !(isnan(a[e]) && isnan(b[e])))
            return "different floats";
    return NULL;
}

static inline const char *fuzz_same_result(const AttnResult *a, const AttnResult *b)
{
    if (a->Tq != b->Tq || a->Tk != b->Tk || a->h != b->h || a->d != b->d)
        return "shapes differ";
    size_t hqk = (size_t)a->h * a->Tq * a->Tk, q = (size_t)a->Tq * a->d, k = (size_t)a->Tk * a->d;
    const char *bad = NULL;
    if (!bad) bad = fuzz_same(a->Q, b->Q, q);
    if (!bad) bad = fuzz_same(a->K, b->K, k);
    if (!bad) bad = fuzz_same(a->V, b->V, k);
    if (!bad) bad = fuzz_same(a->scores, b->scores, hqk);
    if (!bad) bad = fuzz_same(a->logits, b->logits, hqk);
    if (!bad) bad = fuzz_same(a->weights, b->weights, hqk);
    if (!bad) bad = fuzz_same(a->avg, b->avg, (size_t)a->Tq * a->Tk);
    if (!bad) bad = fuzz_same(a->Z, b->Z, q);
    if (!bad) bad = fuzz_same(a->output, b->output, q);
    return bad;
}

/* Shapes, settings, weights and inputs from the bytes; then up to eight
 * changes of some query/key rows, each followed by attn_forward_update on
 * one result and a whole attn_forward on another: the two must hold the same
 * floats, weights must stay in [0, 1] without NaN, and the baseline kernels
 * must agree with the fastest set. */
static inline const char *fuzz_check_forward(const uint8_t *data, size_t size)
{
    static const int dims[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
    if (size > FUZZ_FORWARD_MAX || size < 5)
        return NULL;
    FuzzBytes b = {data, size, 0};
    int d = dims[fuzz_byte(&b) % 10];
    int divs[32], nd = 0;
    for (int h = 1; h <= d; h++)
        if (d % h == 0)
            divs[nd++] = h;
    int h = divs[fuzz_byte(&b) % nd];
    int Tq = 1 + fuzz_byte(&b) % 40;
    uint8_t t = fuzz_byte(&b);
    int self = t & 0x80, Tk = self ? Tq : 1 + t % 40;
    uint8_t fl = fuzz_byte(&b);
    AttnConfig cfg = attn_config_default();
    cfg.causal = fl & 1;
    cfg.scale = (fl >> 1) & 1;
    cfg.mode = fl & 4 ? ATTN_MODE_BASIC : ATTN_MODE_LEARNED;
    static const float taus[] = {1.0f, 0.5f, 2.0f, 1e-3f};
    cfg.temperature = taus[(fl >> 4) & 3];
    cfg.score = (fl >> 6) % ATTN_SCORE_COUNT; /* dot, cosine, additive (and dot) */
    AttnParams p;
    if (attn_params_create(&p, d, h) < 0)
        return NULL;
    size_t dd = (size_t)d * d;
    for (size_t e = 0; e < dd; e++) {
        p.Wq[e] = fuzz_float(&b);
        p.Wk[e] = fuzz_float(&b);
        p.Wv[e] = fuzz_float(&b);
        p.Wo[e] = fuzz_float(&b);
    }
    for (int e = 0; cfg.score == ATTN_SCORE_ADDITIVE && e < d; e++) {
        p.v[e] = fuzz_float(&b);
        p.vb[e] = fuzz_float(&b);
    }
    float *Xq = malloc((size_t)40 * d * sizeof(float));
    float *Xk = self ? Xq : malloc((size_t)40 * d * sizeof(float));
    AttnResult inc, full, base;
    attn_result_init(&inc);
    attn_result_init(&full);
    attn_result_init(&base);
    inc.skip_logits = full.skip_logits = base.skip_logits = (fl >> 3) & 1;
    inc.skip_avg = full.skip_avg = base.skip_avg = ((fl >> 3) ^ (fl >> 4)) & 1;
    const char *bad = NULL;
    const char *fast = attn_kernels();
    if (!Xq || !Xk)
        goto out;
    for (size_t e = 0; e < (size_t)Tq * d; e++)
        Xq[e] = fuzz_float(&b);
    for (size_t e = 0; !self && e < (size_t)Tk * d; e++)
        Xk[e] = fuzz_float(&b);
    if (attn_forward(&inc, Xq, Tq, Xk, Tk, d, &p, &cfg) != 0)
        goto out; /* out of memory only */
    int steps = b.n > b.at ? 1 + (int)((b.n - b.at) % 8) : 1;
    for (int s = 0; s < steps && !bad; s++) {
        uint8_t kind = fuzz_byte(&b);
        int rc;
        if (kind & 1) { /* new shapes, the first rows kept (words typed or deleted) */
            int nq = 1 + fuzz_byte(&b) % 40, nk = self ? nq : 1 + fuzz_byte(&b) % 40;
            int mq = nq < Tq ? nq : Tq, mk = nk < Tk ? nk : Tk;
            int kq = fuzz_byte(&b) % (mq + 1), kk = self ? kq : fuzz_byte(&b) % (mk + 1);
            for (int i = kq; i < nq; i++)
                for (int c = 0; c < d; c++)
                    Xq[(size_t)i * d + c] = fuzz_float(&b);
            for (int i = kk; !self && i < nk; i++)
                for (int c = 0; c < d; c++)
                    Xk[(size_t)i * d + c] = fuzz_float(&b);
            Tq = nq;
            Tk = nk;
            rc = attn_forward_resize(&inc, Xq, Tq, Xk, Tk, d, &p, &cfg, kq, kk);
        } else {
            int ql = fuzz_byte(&b) % (Tq + 1), qh = ql + fuzz_byte(&b) % (Tq - ql + 1);
            int kl = self ? ql : fuzz_byte(&b) % (Tk + 1);
            int kh = self ? qh : kl + fuzz_byte(&b) % (Tk - kl + 1);
            for (int i = ql; i < qh; i++)
                for (int c = 0; c < d; c++)
                    Xq[(size_t)i * d + c] = fuzz_float(&b);
            for (int i = kl; !self && i < kh; i++)
                for (int c = 0; c < d; c++)
                    Xk[(size_t)i * d + c] = fuzz_float(&b);
            rc = attn_forward_update(&inc, Xq, Tq, Xk, Tk, d, &p, &cfg, ql, qh, kl, kh);
        }
        if (rc != 0 || attn_forward(&full, Xq, Tq, Xk, Tk, d, &p, &cfg) != 0)
            goto out;
        bad = fuzz_same_result(&inc, &full);
        if (bad)
            bad = kind & 1 ? "attn_forward_resize differs from attn_forward"
                           : "attn_forward_update differs from attn_forward";
        for (size_t e = 0; !bad && e < (size_t)full.h * Tq * Tk; e++)
            if (!(full.weights[e] >= 0.0f && full.weights[e] <= 1.0f + 1e-5f))
                bad = "attention weight NaN or outside [0, 1]";
    }
    if (!bad && strcmp(fast, "base") != 0 && attn_use_kernels("base") == 0) {
        if (attn_forward(&base, Xq, Tq, Xk, Tk, d, &p, &cfg) == 0 &&
            fuzz_same_result(&base, &full))
            bad = "the baseline kernels differ from the fast ones";
        attn_use_kernels(fast);
    }
out:
    attn_result_destroy(&inc);
    attn_result_destroy(&full);
    attn_result_destroy(&base);
    if (!self)
        free(Xk);
    free(Xq);
    attn_params_destroy(&p);
    return bad;
}

#endif
