/* Teach mode's files: targets from CSV files in the `--print csv` format
 * (the header names the key tokens, each row a query token and its target
 * weights), what trains as a list of names, the "teach" JSON object. */
#include "attnviz/teach_io.h"
#include "attnviz/io.h"

#include <math.h>
#include <stdio.h>
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

static const char *const train_names[4] = {"wq", "wk", "x", "v"};

int teach_train_parse(const char *list)
{
    int bits = 0;
    const char *p = list;
    if (!p || !*p)
        return -1;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        int k = 0;
        while (k < 4 && !(strlen(train_names[k]) == n && strncmp(p, train_names[k], n) == 0))
            k++;
        if (k == 4 || (bits & (1 << k)))
            return -1;
        bits |= 1 << k;
        if (!end)
            return bits;
        p = end + 1;
    }
}

void teach_train_names(int train, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < 4; k++)
        if ((train & (1 << k)) && len + 4 < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", train_names[k]);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

int teach_print_json(FILE *f, const Teacher *t)
{
    fputs("{\"target\": [", f);
    for (int i = 0; i < t->Tq; i++) {
        fputs(i ? ", [" : "[", f);
        for (int j = 0; j < t->Tk; j++) {
            fputs(j ? ", " : "", f);
            json_num(f, t->target[(size_t)i * t->Tk + j]);
        }
        fputc(']', f);
    }
    fputs("],\n  \"head\": ", f);
    if (t->head < 0)
        fputs("\"avg\"", f);
    else
        fprintf(f, "%d", t->head + 1);
    fputs(", \"train\": [", f);
    for (int k = 0, n = 0; k < 4; k++)
        if (t->train & (1 << k))
            fprintf(f, "%s\"%s\"", n++ ? ", " : "", train_names[k]);
    fprintf(f, "], \"optimizer\": \"%s\", \"lr\": %.9g, \"steps\": %ld,\n  \"loss\": [",
            teach_opt_name(t->opt.kind), (double)t->opt.lr, t->steps);
    for (long k = 0; k < t->n_loss; k++) {
        fputs(k ? ", " : "", f);
        json_num(f, t->loss[k]);
    }
    fputs("]}", f);
    return ferror(f) ? -ATTN_E_IO : 0;
}
