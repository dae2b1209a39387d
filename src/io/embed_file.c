/* Reader for GloVe / word2vec text embeddings (see attnviz/embed.h): one pass
 * over the whole file held in memory, a locale-free float parser, geometric
 * growth of a few big arrays, and the open-addressing index that
 * core/embed.c's lookup uses. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "attnviz/embed.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EMBED_MAX_FILE ((uint64_t)8 << 30) /* 8 GiB */
/* The most bytes the read buffer may hold: the limit and one more byte to
 * see the end, or, where size_t has 32 bits (wasm32), all it can count. */
#define EMBED_MAX_CAP \
    (EMBED_MAX_FILE < SIZE_MAX ? (size_t)(EMBED_MAX_FILE + 1) : SIZE_MAX)
#define EMBED_MAX_WORD 1000                /* bytes in one word */
#define EMBED_SHOW 60                      /* bytes of a token shown in messages */

/* printf arguments for "%.*s%s": at most EMBED_SHOW bytes, then "..." */
#define SHOW(p, n)                                                     \
    (int)((size_t)(n) > EMBED_SHOW ? EMBED_SHOW : (size_t)(n)), (p),   \
        ((size_t)(n) > EMBED_SHOW ? "..." : "")

enum { FLOAT_OK = 0, FLOAT_BAD = 1, FLOAT_NONFINITE = 2 };

/* Everything the one pass needs besides the table it fills. */
typedef struct Parser {
    const char *name;
    AttnErr *err;
    EmbedTable *t;
    const char *start;    /* input after any BOM */
    const char *end;      /* end of the input */
    long line;            /* current 1-based line */
    size_t cap_rows;      /* rows allocated in vectors / word_off */
    size_t words_len;     /* bytes used in t->words */
    size_t words_cap;
    long rows;            /* data rows seen, duplicates included */
    int started;          /* a data row or the header has been seen */
    long header_line;     /* 0 when there is no word2vec header */
    long header_n;
    long dims_line;       /* 0 when there is no "# dims:" line */
    long dims_count;
    long dup_line;        /* line of the first duplicate, 0 if none */
    int dup_index;        /* word it duplicates */
    float scratch[ATTN_MAX_DIM]; /* the first row, before d is known */
} Parser;

static int is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static int is_digit(char c)
{
    return (unsigned)(c - '0') < 10u;
}

/* Case-insensitive match of the lower-case word lit at [p, end). */
static int match_ci(const char *p, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return 0;
    }
    return 1;
}

static const double pow10_tab[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Parse one decimal number at *pp (it must end at a separator or at end).
 * Up to 19 significant digits go into an integer that is scaled by exact
 * powers of ten in double, then rounded once to float. Advances *pp. */
static int parse_float(const char **pp, const char *end, float *out)
{
    const char *p = *pp;
    int neg = 0, any = 0, nd = 0;
    uint64_t m = 0;
    int64_t e10 = 0;

    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    /* 1. integer digits */
    for (; p < end && is_digit(*p); p++) {
        any = 1;
        if (nd < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            nd += m != 0;
        } else {
            e10++;
        }
    }
    /* 2. fraction digits */
    if (p < end && *p == '.') {
        for (p++; p < end && is_digit(*p); p++) {
            any = 1;
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd += m != 0;
                e10--;
            }
        }
    }
    if (!any) {
        if (match_ci(p, end, "infinity"))
            p += 8;
        else if (match_ci(p, end, "inf") || match_ci(p, end, "nan"))
            p += 3;
        else
            return FLOAT_BAD;
        return (p == end || is_sep(*p)) ? FLOAT_NONFINITE : FLOAT_BAD;
    }
    /* 3. exponent */
    if (p < end && (*p == 'e' || *p == 'E')) {
        int eneg = 0;
        int64_t ex = 0;
        p++;
        if (p < end && (*p == '-' || *p == '+')) {
            eneg = *p == '-';
            p++;
        }
        if (p == end || !is_digit(*p))
            return FLOAT_BAD;
        for (; p < end && is_digit(*p); p++)
            if (ex < 100000)
                ex = ex * 10 + (*p - '0');
        e10 += eneg ? -ex : ex;
    }
    if (p < end && !is_sep(*p))
        return FLOAT_BAD;
    *pp = p;

    /* 4. scale: m < 1e19, so beyond these bounds the float is inf or 0 */
    float f = 0.0f;
    if (m != 0) {
        if (e10 > 40)
            return FLOAT_NONFINITE;
        if (e10 >= -70) {
            double v = (double)m;
            int e = (int)e10;
            if (e < 0) {
                for (; e < -22; e += 22)
                    v /= 1e22;
                v /= pow10_tab[-e];
            } else {
                for (; e > 22; e -= 22)
                    v *= 1e22;
                v *= pow10_tab[e];
            }
            if (v >= 0x1.ffffffp127) /* rounds to inf as a float */
                return FLOAT_NONFINITE;
            f = (float)v;
        }
    }
    *out = neg ? -f : f;
    return FLOAT_OK;
}

static int nomem(Parser *ps, size_t bytes)
{
    return attn_err_set(ps->err, ATTN_E_NOMEM, ps->name, ps->line,
                        "out of memory (asking for %zu bytes)", bytes);
}

/* Make room for at least need rows in vectors and word_off. */
static int grow_rows(Parser *ps, size_t need)
{
    EmbedTable *t = ps->t;
    if (need <= ps->cap_rows)
        return 0;
    size_t cap = ps->cap_rows * 2;
    if (cap < need)
        cap = need;
    size_t row = (size_t)t->d * sizeof(float);
    if (cap > SIZE_MAX / row || cap > SIZE_MAX / sizeof(size_t))
        return nomem(ps, SIZE_MAX);
    float *v = realloc(t->vectors, cap * row);
    if (!v)
        return nomem(ps, cap * row);
    t->vectors = v;
    size_t *o = realloc(t->word_off, cap * sizeof(size_t));
    if (!o)
        return nomem(ps, cap * sizeof(size_t));
    t->word_off = o;
    ps->cap_rows = cap;
    return 0;
}

static int grow_words(Parser *ps, size_t need)
{
    if (need <= ps->words_cap)
        return 0;
    size_t cap = ps->words_cap * 2;
    if (cap < need)
        cap = need;
    char *w = realloc(ps->t->words, cap);
    if (!w)
        return nomem(ps, cap);
    ps->t->words = w;
    ps->words_cap = cap;
    return 0;
}

/* Replace the index by one of n_slots slots holding the current words. */
static int rehash(Parser *ps, size_t n_slots)
{
    EmbedTable *t = ps->t;
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return nomem(ps, n_slots * sizeof *slots);
    free(t->slots);
    t->slots = slots;
    t->n_slots = n_slots;
    for (int i = 0; i < t->n; i++) {
        const char *w = t->words + t->word_off[i];
        t->slots[embed_hash_probe(t, w, strlen(w))] = (uint32_t)i + 1;
    }
    return 0;
}

/* d has just been fixed: check it against "# dims:" and allocate for about
 * n_est rows, rest bytes of input remaining. */
static int start_table(Parser *ps, size_t n_est, size_t rest)
{
    EmbedTable *t = ps->t;
    if (ps->dims_line && ps->dims_count != t->d)
        return attn_err_set(ps->err, ATTN_E_SHAPE, ps->name, ps->dims_line,
                            "\"# dims:\" names %ld dimensions but the vectors "
                            "have %d", ps->dims_count, t->d);
    if (n_est > (size_t)INT_MAX)
        n_est = (size_t)INT_MAX;
    if (n_est < 16)
        n_est = 16;
    int rc = grow_rows(ps, n_est);
    if (rc)
        return rc;
    /* min(n_est * 16, rest + 1) without the product, which a 32-bit size_t
     * (wasm32) would wrap */
    size_t wbytes = n_est > (rest + 1) / 16 ? rest + 1 : n_est * 16;
    rc = grow_words(ps, wbytes);
    if (rc)
        return rc;
    size_t slots = 16;
    while (slots < 2 * n_est && slots <= SIZE_MAX / 4) /* 32 bits: no wrap to 0 */
        slots *= 2;
    return rehash(ps, slots);
}

/* "N D" of two unsigned integers: the word2vec header. The numbers are
 * long long: INT_MAX + 1 (a count too large) must fit where long has 32
 * bits (wasm32). */
static int parse_header(Parser *ps, const char *q, const char *eol, int *is_header)
{
    long long v[2];
    int k = 0;
    *is_header = 0;
    while (q < eol) {
        if (k == 2 || !is_digit(*q))
            return 0;
        long long x = 0;
        int big = 0;
        for (; q < eol && is_digit(*q); q++) {
            x = x * 10 + (*q - '0');
            if (x > INT_MAX) {
                big = 1;
                x = (long long)INT_MAX + 1;
            }
        }
        if (q < eol && !is_sep(*q))
            return 0;
        v[k++] = big ? (long long)INT_MAX + 1 : x;
        while (q < eol && is_sep(*q))
            q++;
    }
    if (k != 2)
        return 0;
    *is_header = 1;
    if (v[1] < 1 || v[1] > ATTN_MAX_DIM)
        return attn_err_set(ps->err, ATTN_E_RANGE, ps->name, ps->line,
                            "header dimension %lld is outside 1..%d", v[1],
                            ATTN_MAX_DIM);
    if (v[0] > INT_MAX)
        return attn_err_set(ps->err, ATTN_E_TOO_LARGE, ps->name, ps->line,
                            "header word count is larger than %d", INT_MAX);
    ps->header_line = ps->line;
    ps->header_n = (long)v[0]; /* at most INT_MAX */
    ps->t->d = (int)v[1];
    size_t rest = (size_t)(ps->end - eol);
    size_t most = rest / (2 * (size_t)v[1]) + 1; /* "w 0 0 ...": 2 bytes a number */
    return start_table(ps, (size_t)v[0] < most ? (size_t)v[0] : most, rest);
}

/* A comment line; q points at '#'. Only "# dims: ..." matters. */
static int parse_comment(Parser *ps, const char *q, const char *eol)
{
    EmbedTable *t = ps->t;
    for (q++; q < eol && is_sep(*q); q++)
        ;
    if (eol - q < 5 || memcmp(q, "dims:", 5) != 0)
        return 0;
    if (ps->dims_line)
        return attn_err_set(ps->err, ATTN_E_PARSE, ps->name, ps->line,
                            "second \"# dims:\" line (first at line %ld)",
                            ps->dims_line);
    q += 5;
    /* 1. count the names and their bytes */
    long count = 0;
    size_t bytes = 0;
    for (const char *s = q; s < eol;) {
        while (s < eol && is_sep(*s))
            s++;
        if (s == eol)
            break;
        const char *b = s;
        while (s < eol && !is_sep(*s))
            s++;
        count++;
        bytes += (size_t)(s - b) + 1;
    }
    /* 2. copy them */
    t->dim_buf = malloc(bytes + 1);
    if (!t->dim_buf)
        return nomem(ps, bytes + 1);
    t->dim_off = malloc(((size_t)count + 1) * sizeof(size_t));
    if (!t->dim_off)
        return nomem(ps, ((size_t)count + 1) * sizeof(size_t));
    size_t used = 0;
    long k = 0;
    for (const char *s = q; s < eol;) {
        while (s < eol && is_sep(*s))
            s++;
        if (s == eol)
            break;
        const char *b = s;
        while (s < eol && !is_sep(*s))
            s++;
        t->dim_off[k++] = used;
        memcpy(t->dim_buf + used, b, (size_t)(s - b));
        used += (size_t)(s - b);
        t->dim_buf[used++] = '\0';
    }
    t->has_dim_names = 1;
    ps->dims_line = ps->line;
    ps->dims_count = count;
    if (t->d && count != t->d)
        return attn_err_set(ps->err, ATTN_E_SHAPE, ps->name, ps->line,
                            "\"# dims:\" names %ld dimensions but the vectors "
                            "have %d", count, t->d);
    return 0;
}

/* One "word v1 ... vd" row in [q, eol); line_start/next bound the line. */
static int parse_row(Parser *ps, const char *q, const char *eol,
                     const char *line_start, const char *next)
{
    EmbedTable *t = ps->t;
    int rc;

    /* 1. the word */
    const char *w = q;
    for (; q < eol && !is_sep(*q); q++)
        if (*q == '\0')
            return attn_err_set(ps->err, ATTN_E_PARSE, ps->name, ps->line,
                                "word \"%.*s%s\" contains a NUL byte",
                                SHOW(w, q - w));
    size_t wlen = (size_t)(q - w);
    if (wlen > EMBED_MAX_WORD)
        return attn_err_set(ps->err, ATTN_E_PARSE, ps->name, ps->line,
                            "word \"%.*s%s\" is %zu bytes long (at most %d)",
                            SHOW(w, wlen), wlen, EMBED_MAX_WORD);
    if (ps->rows >= INT_MAX)
        return attn_err_set(ps->err, ATTN_E_TOO_LARGE, ps->name, ps->line,
                            "more than %d rows", INT_MAX);

    /* 2. the numbers, straight into row n (or scratch for the first row) */
    float *dst = ps->scratch;
    long max = ATTN_MAX_DIM;
    if (t->d) {
        rc = grow_rows(ps, (size_t)t->n + 1);
        if (rc)
            return rc;
        dst = t->vectors + (size_t)t->n * (size_t)t->d;
        max = t->d;
    }
    long count = 0;
    for (;;) {
        while (q < eol && is_sep(*q))
            q++;
        if (q == eol)
            break;
        const char *tok = q;
        float v;
        int st = parse_float(&q, eol, &v);
        if (st != FLOAT_OK) {
            const char *te = tok;
            while (te < eol && !is_sep(*te))
                te++;
            if (st == FLOAT_NONFINITE)
                return attn_err_set(ps->err, ATTN_E_NONFINITE, ps->name,
                                    ps->line, "value \"%.*s%s\" for word "
                                    "\"%.*s%s\" is not a finite float",
                                    SHOW(tok, te - tok), SHOW(w, wlen));
            return attn_err_set(ps->err, ATTN_E_PARSE, ps->name, ps->line,
                                "not a number: \"%.*s%s\" (word \"%.*s%s\")",
                                SHOW(tok, te - tok), SHOW(w, wlen));
        }
        if (count < max)
            dst[count] = v;
        count++;
    }
    if (count == 0)
        return attn_err_set(ps->err, ATTN_E_PARSE, ps->name, ps->line,
                            "word \"%.*s%s\" has no numbers", SHOW(w, wlen));
    if (!t->d) {
        if (count > ATTN_MAX_DIM)
            return attn_err_set(ps->err, ATTN_E_RANGE, ps->name, ps->line,
                                "%ld numbers in a row; at most %d dimensions",
                                count, ATTN_MAX_DIM);
        t->d = (int)count;
        size_t rest = (size_t)(ps->end - line_start);
        rc = start_table(ps, rest / (size_t)(next - line_start) + 16, rest);
        if (rc)
            return rc;
        memcpy(t->vectors, ps->scratch, (size_t)count * sizeof(float));
    } else if (count != t->d) {
        if (ps->header_line && t->n == 0 && ps->rows == 0)
            return attn_err_set(ps->err, ATTN_E_SHAPE, ps->name, ps->line,
                                "expected %d numbers (header at line %ld), "
                                "found %ld", t->d, ps->header_line, count);
        return attn_err_set(ps->err, ATTN_E_SHAPE, ps->name, ps->line,
                            "expected %d numbers, found %ld", t->d, count);
    }
    ps->rows++;

    /* 3. index it, or count it as a duplicate */
    size_t s = embed_hash_probe(t, w, wlen);
    if (t->slots[s]) {
        if (t->n_duplicates++ == 0) {
            ps->dup_line = ps->line;
            ps->dup_index = (int)t->slots[s] - 1;
        }
        return 0;
    }
    rc = grow_words(ps, ps->words_len + wlen + 1);
    if (rc)
        return rc;
    t->word_off[t->n] = ps->words_len;
    memcpy(t->words + ps->words_len, w, wlen);
    ps->words_len += wlen;
    t->words[ps->words_len++] = '\0';
    t->slots[s] = (uint32_t)t->n + 1;
    t->n++;
    if ((size_t)t->n * 2 > t->n_slots) /* keep n_slots >= 2n */
        return rehash(ps, t->n_slots * 2);
    return 0;
}

/* Line number of data row `row` (0-based; all rows before it are unique).
 * Only needed for the duplicate warning, so a rescan is cheaper than
 * storing a line per word. */
static long line_of_row(const char *p, const char *end, long header_line, int row)
{
    long line = 0;
    int k = 0;
    while (p < end) {
        line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol ? eol + 1 : end;
        if (!eol)
            eol = end;
        const char *q = p;
        while (q < eol && is_sep(*q))
            q++;
        if (q < eol && *q != '#' && line != header_line && k++ == row)
            return line;
        p = next;
    }
    return 0;
}

/* No "# dims:" line: name the dimensions d0, d1, ... */
static int default_dim_names(Parser *ps)
{
    EmbedTable *t = ps->t;
    size_t d = (size_t)t->d;
    t->dim_buf = malloc(d * 6); /* "d1023" + NUL */
    if (!t->dim_buf)
        return nomem(ps, d * 6);
    t->dim_off = malloc(d * sizeof(size_t));
    if (!t->dim_off)
        return nomem(ps, d * sizeof(size_t));
    size_t used = 0;
    for (size_t k = 0; k < d; k++) {
        t->dim_off[k] = used;
        used += (size_t)snprintf(t->dim_buf + used, 6, "d%zu", k) + 1;
    }
    return 0;
}

int embed_parse(EmbedTable **out, const char *data, size_t len,
                const char *name, AttnErr *err, AttnErr *warn)
{
    Parser *ps = NULL;
    EmbedTable *t = NULL;
    int rc = 0;

    if (!name)
        name = "<memory>";
    if (warn)
        memset(warn, 0, sizeof *warn);
    if (!out || (!data && len))
        return attn_err_set(err, ATTN_E_RANGE, name, 0, "invalid argument");
    *out = NULL;
    if (!data)
        data = ""; /* len is 0; NULL + 0 is undefined */
    if ((uint64_t)len > EMBED_MAX_FILE)
        return attn_err_set(err, ATTN_E_TOO_LARGE, name, 0,
                            "%zu bytes; at most 8 GiB", len);

    ps = calloc(1, sizeof *ps);
    t = calloc(1, sizeof *t);
    if (!ps || !t) {
        rc = attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
        goto cleanup;
    }
    ps->name = name;
    ps->err = err;
    ps->t = t;
    ps->end = data + len;

    /* 1. one pass over the lines */
    const char *p = data;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    ps->start = p;
    while (p < ps->end) {
        ps->line++;
        const char *eol = memchr(p, '\n', (size_t)(ps->end - p));
        const char *next = eol ? eol + 1 : ps->end;
        if (!eol)
            eol = ps->end;
        const char *q = p;
        while (q < eol && is_sep(*q))
            q++;
        if (q == eol) {
            /* blank */
        } else if (*q == '#') {
            rc = parse_comment(ps, q, eol);
        } else if (!ps->started) {
            int is_header;
            ps->started = 1;
            rc = parse_header(ps, q, eol, &is_header);
            if (!rc && !is_header)
                rc = parse_row(ps, q, eol, p, next);
        } else {
            rc = parse_row(ps, q, eol, p, next);
        }
        if (rc)
            goto cleanup;
        p = next;
    }

    /* 2. whole-file checks */
    if (ps->rows == 0) {
        rc = attn_err_set(err, ATTN_E_EMPTY, name, ps->line > 0 ? ps->line : 1,
                          "no words: the file is empty or has only comments");
        goto cleanup;
    }
    if (ps->header_line && ps->header_n != ps->rows) {
        rc = attn_err_set(err, ATTN_E_SHAPE, name, ps->header_line,
                          "header says %ld words, the file has %ld",
                          ps->header_n, ps->rows);
        goto cleanup;
    }
    if (!t->has_dim_names && (rc = default_dim_names(ps)) != 0)
        goto cleanup;

    /* 3. give back the unused tail of the big arrays (failure is harmless) */
    size_t n = (size_t)t->n;
    float *v = realloc(t->vectors, n * (size_t)t->d * sizeof(float));
    if (v)
        t->vectors = v;
    size_t *o = realloc(t->word_off, n * sizeof(size_t));
    if (o)
        t->word_off = o;
    char *w = realloc(t->words, ps->words_len);
    if (w)
        t->words = w;

    if (t->n_duplicates && warn) {
        const char *dw = embed_word(t, ps->dup_index);
        size_t dl = strlen(dw);
        attn_err_set(warn, ATTN_E_DUPLICATE, name, ps->dup_line,
                     "duplicate word \"%.*s%s\" (first at line %ld) ignored",
                     SHOW(dw, dl),
                     line_of_row(ps->start, ps->end, ps->header_line,
                                 ps->dup_index));
    }
    *out = t;
    t = NULL;

cleanup:
    embed_destroy(t);
    free(ps);
    return rc;
}

int embed_load(EmbedTable **out, const char *path, AttnErr *err, AttnErr *warn)
{
    FILE *f = NULL;
    char *buf = NULL;
    size_t len = 0, cap;
    struct stat st;
    int rc;

    if (out)
        *out = NULL;
    if (warn)
        memset(warn, 0, sizeof *warn);
    if (!out || !path)
        return attn_err_set(err, ATTN_E_RANGE, path, 0, "invalid argument");

    f = fopen(path, "rb");
    if (!f) {
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "cannot open: %s",
                          strerror(errno));
        goto cleanup;
    }
    if (fstat(fileno(f), &st) != 0) {
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "cannot stat: %s",
                          strerror(errno));
        goto cleanup;
    }
    if (S_ISDIR(st.st_mode)) {
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "is a directory");
        goto cleanup;
    }
    if ((uint64_t)st.st_size > EMBED_MAX_FILE) {
        rc = attn_err_set(err, ATTN_E_TOO_LARGE, path, 0,
                          "%lld bytes; at most 8 GiB", (long long)st.st_size);
        goto cleanup;
    }
    if ((uint64_t)st.st_size >= EMBED_MAX_CAP) { /* only where size_t has 32 bits */
        rc = attn_err_set(err, ATTN_E_TOO_LARGE, path, 0,
                          "%lld bytes; more than this program can hold in memory",
                          (long long)st.st_size);
        goto cleanup;
    }
    /* 1. read: a regular file takes one fread (cap = size + 1 sees EOF) */
    cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
    buf = malloc(cap);
    if (!buf) {
        rc = attn_err_set(err, ATTN_E_NOMEM, path, 0,
                          "out of memory reading %zu bytes", cap);
        goto cleanup;
    }
    for (;;) {
        if (len == cap) {
            if ((uint64_t)len > EMBED_MAX_FILE) {
                rc = attn_err_set(err, ATTN_E_TOO_LARGE, path, 0,
                                  "more than 8 GiB");
                goto cleanup;
            }
            if (cap == EMBED_MAX_CAP) { /* only where size_t has 32 bits */
                rc = attn_err_set(err, ATTN_E_TOO_LARGE, path, 0,
                                  "more than this program can hold in memory");
                goto cleanup;
            }
            size_t ncap = cap > EMBED_MAX_CAP / 2 ? EMBED_MAX_CAP : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                rc = attn_err_set(err, ATTN_E_NOMEM, path, 0,
                                  "out of memory reading %zu bytes", ncap);
                goto cleanup;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0 || feof(f))
            break;
    }
    if (ferror(f)) {
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "read error: %s",
                          strerror(errno));
        goto cleanup;
    }
    /* 2. parse */
    rc = embed_parse(out, buf, len, path, err, warn);

cleanup:
    free(buf);
    if (f)
        fclose(f);
    return rc;
}
