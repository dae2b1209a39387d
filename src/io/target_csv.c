/* Teach targets from CSV files in the `--print csv` format: the header
 * names the key tokens, each row a query token and its target weights. */
#include "attnviz/teach_io.h"
#include "attnviz/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over the text, with the line it is on. */
typedef struct Csv {
    const char *p, *end, *name;
    long line;
    char field[1024];
    int truncated;
} Csv;

/* Read one field into c->field; returns the byte after it (',' '\n' or
 * end), or -1 for a quote left open or text after a closing quote. */
static int next_field(Csv *c)
{
    size_t n = 0;
    c->truncated = 0;
    if (c->p < c->end && *c->p == '"') {
        c->p++;
        for (;;) {
            if (c->p >= c->end)
                return -1;
            char ch = *c->p++;
            if (ch == '"') {
                if (c->p < c->end && *c->p == '"')
                    c->p++;
                else
                    break;
            } else if (ch == '\n') {
                c->line++;
            }
            if (n + 1 < sizeof c->field)
                c->field[n++] = ch;
            else
                c->truncated = 1;
        }
    } else {
        while (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r') {
            if (n + 1 < sizeof c->field)
                c->field[n++] = *c->p;
            else
                c->truncated = 1;
            c->p++;
        }
    }
    c->field[n] = '\0';
    if (c->p < c->end && *c->p == '\r')
        c->p++;
    if (c->p >= c->end)
        return 0;
    if (*c->p != ',' && *c->p != '\n')
        return -1;
    return *c->p++;
}

static int only_blank_left(const Csv *c)
{
    for (const char *q = c->p; q < c->end; q++)
        if (*q != '\n' && *q != '\r' && *q != ' ' && *q != '\t')
            return 0;
    return 1;
}

/* The header: "query", then exactly the key tokens. */
static int read_header(Csv *c, const char *const *k_labels, int Tk, AttnErr *err)
{
    int sep = next_field(c);
    if (sep < 0)
        return attn_err_set(err, ATTN_E_PARSE, c->name, c->line, "not CSV (a quote left open)");
    if (strcmp(c->field, "query") != 0)
        return attn_err_set(err, ATTN_E_PARSE, c->name, c->line,
                            "the header must start with \"query\" (the --print csv format), found \"%.60s\"",
                            c->field);
    for (int j = 0; j < Tk; j++) {
        if (sep != ',')
            return attn_err_set(err, ATTN_E_SHAPE, c->name, c->line,
                                "the header has %d key tokens, the sentence %d", j, Tk);
        if ((sep = next_field(c)) < 0)
            return attn_err_set(err, ATTN_E_PARSE, c->name, c->line, "not CSV (a quote left open)");
        if (c->truncated || strcmp(c->field, k_labels[j]) != 0)
            return attn_err_set(err, ATTN_E_SHAPE, c->name, c->line,
                                "column %d is \"%.60s\", but key token %d is \"%.60s\"", j + 2,
                                c->field, j + 1, k_labels[j]);
    }
    if (sep == ',')
        return attn_err_set(err, ATTN_E_SHAPE, c->name, c->line,
                            "the header has more than the sentence's %d key tokens", Tk);
    return 0;
}

/* Row i: its query token, then Tk numbers. */
static int read_row(Csv *c, int i, const char *q_label, int Tk, float *row, AttnErr *err)
{
    int sep = next_field(c);
    if (sep < 0)
        return attn_err_set(err, ATTN_E_PARSE, c->name, c->line, "not CSV (a quote left open)");
    if (c->truncated || strcmp(c->field, q_label) != 0)
        return attn_err_set(err, ATTN_E_SHAPE, c->name, c->line,
                            "row %d is for \"%.60s\", but query token %d is \"%.60s\"", i + 1,
                            c->field, i + 1, q_label);
    for (int j = 0; j < Tk; j++) {
        if (sep != ',')
            return attn_err_set(err, ATTN_E_SHAPE, c->name, c->line,
                                "%d numbers, the sentence has %d key tokens", j, Tk);
        if ((sep = next_field(c)) < 0)
            return attn_err_set(err, ATTN_E_PARSE, c->name, c->line, "not CSV (a quote left open)");
        char *end;
        double x = strtod(c->field, &end);
        if (end == c->field || *end != '\0')
            return attn_err_set(err, ATTN_E_PARSE, c->name, c->line,
                                "column %d: \"%.60s\" is not a number", j + 2, c->field);
        if (!isfinite(x) || x < 0 || x > 3e38)
            return attn_err_set(err, ATTN_E_RANGE, c->name, c->line,
                                "column %d: %.60s: target weights must be finite and at least 0",
                                j + 2, c->field);
        row[j] = (float)x;
    }
    if (sep == ',')
        return attn_err_set(err, ATTN_E_SHAPE, c->name, c->line,
                            "more than the sentence's %d key tokens' numbers", Tk);
    return 0;
}

int target_csv_parse(const char *data, size_t len, const char *name,
                     const char *const *q_labels, int Tq, const char *const *k_labels, int Tk,
                     float *out, AttnErr *err)
{
    Csv c = {data, data + len, name, 1, {0}, 0};
    if (memchr(data, '\0', len))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "a binary file, not CSV");
    float *t = malloc(((size_t)Tq * Tk + 1) * sizeof(float));
    if (!t)
        return -ATTN_E_NOMEM;
    int rc = read_header(&c, k_labels, Tk, err);
    for (int i = 0; rc == 0 && i < Tq; i++) {
        c.line++;
        if (c.p >= c.end || only_blank_left(&c))
            rc = attn_err_set(err, ATTN_E_SHAPE, name, c.line,
                              "%d rows, the sentence has %d query tokens", i, Tq);
        else
            rc = read_row(&c, i, q_labels[i], Tk, t + (size_t)i * Tk, err);
    }
    if (rc == 0 && !only_blank_left(&c))
        rc = attn_err_set(err, ATTN_E_SHAPE, name, c.line + 1,
                          "more rows than the sentence's %d query tokens", Tq);
    if (rc == 0)
        memcpy(out, t, (size_t)Tq * Tk * sizeof(float));
    free(t);
    return rc;
}

int target_csv_load(const char *path, const char *const *q_labels, int Tq,
                    const char *const *k_labels, int Tk, float *out, AttnErr *err)
{
    char *data;
    size_t len;
    int rc = io_read_file(path, ATTN_MAX_FILE_BYTES, &data, &len, err);
    if (rc < 0)
        return rc;
    rc = target_csv_parse(data, len, path, q_labels, Tq, k_labels, Tk, out, err);
    free(data);
    return rc;
}
