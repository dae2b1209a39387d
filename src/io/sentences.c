/* Sentences files: plain text, one sentence a line, '#' starts a comment
 * line, blank lines skipped, CRLF accepted. NUL bytes mean a binary file. */
#include "attnviz/io.h"

#include <stdlib.h>
#include <string.h>

void sentences_free(SentenceList *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        free(s->text[i]);
    free(s->text);
    free(s->line);
    memset(s, 0, sizeof *s);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
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
        if (s.n == cap) {
            cap = cap ? cap * 2 : 16;
            char **t = realloc(s.text, (size_t)cap * sizeof *t);
            if (!t)
                goto nomem;
            s.text = t;
            long *l = realloc(s.line, (size_t)cap * sizeof *l);
            if (!l)
                goto nomem;
            s.line = l;
        }
        char *copy = malloc(end - start + 1);
        if (!copy)
            goto nomem;
        memcpy(copy, data + start, end - start);
        copy[end - start] = '\0';
        s.text[s.n] = copy;
        s.line[s.n] = line;
        s.n++;
    }
    if (s.n == 0) {
        rc = attn_err_set(err, ATTN_E_EMPTY, name, 0,
                          "no sentences (only blank or '#' comment lines)");
        goto fail;
    }
    *out = s;
    return 0;
nomem:
    rc = attn_err_set(err, ATTN_E_NOMEM, name, line, "out of memory");
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
