/* Where a value is in a JSON document, for messages that name its line:
 * cJSON gives no position for a well-formed document, so this small
 * scanner finds the n-th member of an object or element of an array (and
 * lets a reader walk an array's raw text beside cJSON's values). Not a
 * parser: the document has been checked by cJSON first. */
#include "json_pos.h"

#include <string.h>

/* White space as cJSON skips it: every byte up to the space, NUL included. */
const char *jpos_skip_ws(const char *p, const char *e)
{
    while (p < e && (unsigned char)*p <= ' ')
        p++;
    return p;
}

/* Past the string, array, object or scalar at p (at least one byte). */
const char *jpos_skip_value(const char *p, const char *e)
{
    int depth = 0;
    do {
        if (p >= e)
            return e;
        if (*p == '"') {
            for (p++; p < e && *p != '"'; p++)
                if (*p == '\\')
                    p++;
            p++;
        } else if (*p == '{' || *p == '[') {
            depth++;
            p++;
        } else if (*p == '}' || *p == ']') {
            depth--;
            p++;
        } else if (depth == 0) {
            do
                p++;
            while (p < e && (unsigned char)*p > ' ' && !strchr(",]}", *p));
        } else {
            p++;
        }
    } while (depth > 0);
    return p < e ? p : e;
}

/* The k-th element of the array, or member of the object, at p (for a
 * member: where its key starts); NULL when there is none. */
const char *jpos_nth(const char *p, const char *e, long k)
{
    if (p >= e || (*p != '[' && *p != '{'))
        return NULL;
    int obj = *p == '{';
    p = jpos_skip_ws(p + 1, e);
    for (long i = 0; p < e && *p != ']' && *p != '}'; i++) {
        if (i == k)
            return p;
        if (obj) {
            p = jpos_skip_ws(jpos_skip_value(p, e), e);
            if (p < e && *p == ':')
                p = jpos_skip_ws(p + 1, e);
        }
        p = jpos_skip_ws(jpos_skip_value(p, e), e);
        if (p < e && *p == ',')
            p = jpos_skip_ws(p + 1, e);
    }
    return NULL;
}

/* The value of member key (spelled without escapes) of the object at p. */
const char *jpos_member(const char *p, const char *e, const char *key)
{
    size_t n = strlen(key);
    for (long i = 0;; i++) {
        const char *m = jpos_nth(p, e, i);
        if (!m)
            return NULL;
        const char *v = jpos_skip_ws(jpos_skip_value(m, e), e);
        if (v < e && *v == ':')
            v = jpos_skip_ws(v + 1, e);
        if (m + n + 2 <= e && m[0] == '"' && memcmp(m + 1, key, n) == 0 && m[n + 1] == '"')
            return v;
    }
}

long jpos_line_at(const char *data, const char *at)
{
    long line = 1;
    for (const char *p = data; p < at; p++)
        line += *p == '\n';
    return line;
}

/* The line of the k-th item (k < 0: the value itself) of the value found
 * by following keys from the document's top; 0 when not found. */
long jpos_line(const char *data, size_t len, const char *const *keys, long k)
{
    const char *e = data + len, *p = jpos_skip_ws(data, e);
    for (; p && *keys; keys++)
        p = jpos_member(p, e, *keys);
    if (p && k >= 0)
        p = jpos_nth(p, e, k);
    return p ? jpos_line_at(data, p) : 0;
}
