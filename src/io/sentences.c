/* Sentences files: plain text, one sentence a line, '#' starts a comment
 * line, blank lines skipped, CRLF accepted. NUL bytes mean a binary file.
 * A line "query ||| keys" is a pair for cross-attention (the first "|||"
 * splits it; both sides trimmed, neither may be empty). */
#include "attnviz/io.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sentences_free(SentenceList *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        free(s->text[i]);
        if (s->keys)
            free(s->keys[i]);
    }
    for (int i = 0; s->src && i < s->n; i++)
        free(s->src[i]);
    free(s->text);
    free(s->keys);
    free(s->line);
    free(s->src);
    memset(s, 0, sizeof *s);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static char *copy_range(const char *a, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, a, n);
        c[n] = '\0';
    }
    return c;
}

/* Room for one more sentence in s (capacity *cap). */
static int grow(SentenceList *s, int *cap)
{
    if (s->n < *cap)
        return 0;
    int c = *cap ? *cap * 2 : 16;
    char **t = realloc(s->text, (size_t)c * sizeof *t);
    if (!t)
        return -1;
    s->text = t;
    char **k = realloc(s->keys, (size_t)c * sizeof *k);
    if (!k)
        return -1;
    s->keys = k;
    long *l = realloc(s->line, (size_t)c * sizeof *l);
    if (!l)
        return -1;
    s->line = l;
    *cap = c;
    return 0;
}

/* The trimmed line data[start, end) into s: one sentence, or a pair split
 * at its first "|||". An empty side is an error. */
static int add_line(SentenceList *s, const char *data, size_t start, size_t end, long line,
                    const char *name, AttnErr *err)
{
    const char *p = data + start, *bar = NULL;
    for (size_t i = start; i + 3 <= end; i++)
        if (memcmp(data + i, "|||", 3) == 0) {
            bar = data + i;
            break;
        }
    size_t qn = bar ? (size_t)(bar - p) : end - start;
    const char *k = bar ? bar + 3 : data + end;
    size_t kn = (size_t)(data + end - k);
    while (qn > 0 && is_blank(p[qn - 1]))
        qn--;
    while (kn > 0 && is_blank(*k)) {
        k++;
        kn--;
    }
    if (bar && qn == 0)
        return attn_err_set(err, ATTN_E_PARSE, name, line,
                            "empty query sentence before '|||'");
    if (bar && kn == 0)
        return attn_err_set(err, ATTN_E_PARSE, name, line,
                            "empty key sentence after '|||'");
    char *q = copy_range(p, qn), *kc = copy_range(k, kn);
    if (!q || !kc) {
        free(q);
        free(kc);
        return attn_err_set(err, ATTN_E_NOMEM, name, line, "out of memory");
    }
    s->text[s->n] = q;
    s->keys[s->n] = kc;
    s->line[s->n] = line;
    s->n++;
    return 0;
}

int sentences_parse(SentenceList *out, const char *data, size_t len,
                    const char *name, AttnErr *err)
{
    SentenceList s = {0};
    int cap = 0, rc = 0;
    long line = 0;
    size_t i = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len) {
        size_t start = i;
        while (i < len && data[i] != '\n')
            i++;
        size_t end = i;
        if (i < len)
            i++;
        line++;
        if (memchr(data + start, '\0', end - start)) {
            rc = attn_err_set(err, ATTN_E_PARSE, name, line,
                              "contains a NUL byte (is this a binary file?)");
            goto fail;
        }
        while (start < end && is_blank(data[start]))
            start++;
        while (end > start && is_blank(data[end - 1]))
            end--;
        if (start == end || data[start] == '#')
            continue;
        if (grow(&s, &cap) < 0) {
            rc = attn_err_set(err, ATTN_E_NOMEM, name, line, "out of memory");
            goto fail;
        }
        if ((rc = add_line(&s, data, start, end, line, name, err)) < 0)
            goto fail;
    }
    if (s.n == 0) {
        rc = attn_err_set(err, ATTN_E_EMPTY, name, 0,
                          "no sentences (only blank or '#' comment lines)");
        goto fail;
    }
    *out = s;
    return 0;
fail:
    sentences_free(&s);
    return rc;
}

int sentences_load(SentenceList *out, const char *path, AttnErr *err)
{
    char *data;
    size_t len;
    int rc = io_read_file(path, ATTN_MAX_FILE_BYTES, &data, &len, err);
    if (rc < 0)
        return rc;
    rc = sentences_parse(out, data, len, path, err);
    free(data);
    return rc;
}

/* Move b's sentences to the end of a, each with its file's name. */
static int append(SentenceList *a, SentenceList *b, const char *name)
{
    int n = a->n + b->n;
    char **text = realloc(a->text, (size_t)n * sizeof *text);
    if (text)
        a->text = text;
    char **keys = realloc(a->keys, (size_t)n * sizeof *keys);
    if (keys)
        a->keys = keys;
    long *line = realloc(a->line, (size_t)n * sizeof *line);
    if (line)
        a->line = line;
    char **src = realloc(a->src, (size_t)n * sizeof *src);
    if (src)
        a->src = src;
    if (!text || !keys || !line || !src)
        return -ATTN_E_NOMEM;
    for (int i = 0; i < b->n; i++) {
        char *copy = strdup(name);
        if (!copy)
            return -ATTN_E_NOMEM;
        int k = a->n++;
        a->text[k] = b->text[i];
        a->keys[k] = b->keys ? b->keys[i] : strdup("");
        a->line[k] = b->line[i];
        a->src[k] = copy;
        b->text[i] = NULL;
        if (b->keys)
            b->keys[i] = NULL;
        if (!a->keys[k])
            return -ATTN_E_NOMEM;
    }
    return 0;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The *.txt names of dir, sorted, first (when there) at the front. */
static int folder_names(const char *dir, const char *first, char ***out)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0, cap = 16;
    char **names = malloc((size_t)cap * sizeof *names);
    for (struct dirent *e; names && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 4, ".txt") != 0)
            continue;
        if (n == cap) {
            char **more = realloc(names, (size_t)(cap *= 2) * sizeof *names);
            if (!more)
                break;
            names = more;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (!names)
        return -1;
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int k = 1; first && k < n; k++)
        if (strcmp(names[k], first) == 0) {
            char *f = names[k];
            memmove(names + 1, names, (size_t)k * sizeof *names);
            names[0] = f;
        }
    *out = names;
    return n;
}

int sentences_load_folder(SentenceList *out, const char *dir, const char *first, AttnErr *warn)
{
    memset(out, 0, sizeof *out);
    char **names;
    int n = folder_names(dir, first, &names), rc = 0;
    if (n < 0)
        return attn_err_set(warn, ATTN_E_IO, dir, 0, "cannot read the folder");
    for (int k = 0; k < n && rc == 0; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        SentenceList one;
        AttnErr e = {0};
        if (sentences_load(&one, path, &e) < 0) {
            if (warn && !warn->code)
                *warn = e; /* left out; the first such said */
            continue;
        }
        rc = append(out, &one, names[k]);
        sentences_free(&one);
    }
    for (int k = 0; k < n; k++)
        free(names[k]);
    free(names);
    if (rc == 0 && out->n == 0)
        rc = attn_err_set(warn, ATTN_E_IO, dir, 0, "no sentences files in the folder");
    if (rc < 0)
        sentences_free(out);
    return rc;
}
