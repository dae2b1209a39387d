/* A JSON document parsed by cJSON a part at a time, so that a large one (a
 * tokenizer.json of 30 MB, its model.vocab and model.merges) gives the
 * one-thread page its thread back between parts (bg_breathe): the top
 * value, its members' values and theirs are walked here, and each value
 * below them (a merge, a piece, a number) is parsed by one cJSON call and
 * linked into the same tree cJSON's whole parse gives. Not for error
 * messages: a document refused here is parsed whole by the caller, whose
 * message names cJSON's place. */
#include "json_sliced.h"

#include <string.h>

#include "attnviz/background.h"
#include "json_pos.h"

/* The depth down to which containers are walked here (0: the top value). */
#define WALK_DEPTH 2

typedef struct Walk {
    const char *e; /* the document's end */
    long parts;    /* cJSON calls so far */
} Walk;

/* One value at p parsed by cJSON, *end past it; NULL when it is none.
 * What cJSON would skip before a value (white space, a byte-order mark)
 * is not a value's start here: the document's parse refuses it there. */
static cJSON *sliced_leaf(Walk *w, const char *p, const char **end)
{
    if (p >= w->e || !*p || !strchr("\"{[-0123456789tfn", *p))
        return NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(w->e - p), end, 0);
    if (++w->parts % JSON_BREATHE_EVERY == 0)
        bg_breathe();
    return v;
}

/* item after *tail in c's children, as cJSON links them (the first one's
 * prev is the last). */
static void append(cJSON *c, cJSON **tail, cJSON *item)
{
    if (*tail) {
        (*tail)->next = item;
        item->prev = *tail;
    } else {
        c->child = item;
    }
    *tail = item;
    c->child->prev = item;
}

static cJSON *sliced_value(Walk *w, const char *p, const char **end, int depth);

/* The object or array at p, its members or elements one by one. */
static cJSON *sliced_container(Walk *w, const char *p, const char **end, int depth)
{
    const char *e = w->e;
    int obj = *p == '{';
    char close = obj ? '}' : ']';
    cJSON *c = obj ? cJSON_CreateObject() : cJSON_CreateArray(), *tail = NULL;
    if (!c)
        return NULL;
    p = jpos_skip_ws(p + 1, e);
    if (p < e && *p == close) {
        *end = p + 1;
        return c;
    }
    for (;;) {
        cJSON *key = NULL, *v;
        if (obj) { /* "key": as cJSON's parse_object, a string, white space, a colon */
            if (p >= e || *p != '"' || !(key = sliced_leaf(w, p, &p)))
                break;
            p = jpos_skip_ws(p, e);
            if (p >= e || *p != ':') {
                cJSON_Delete(key);
                break;
            }
            p = jpos_skip_ws(p + 1, e);
        }
        v = sliced_value(w, p, &p, depth + 1);
        if (!v) {
            cJSON_Delete(key);
            break;
        }
        if (key) {
            v->string = key->valuestring;
            key->valuestring = NULL;
            cJSON_Delete(key);
        }
        append(c, &tail, v);
        p = jpos_skip_ws(p, e);
        if (p < e && *p == ',') {
            p = jpos_skip_ws(p + 1, e);
        } else if (p < e && *p == close) {
            *end = p + 1;
            return c;
        } else {
            break;
        }
    }
    cJSON_Delete(c);
    return NULL;
}

static cJSON *sliced_value(Walk *w, const char *p, const char **end, int depth)
{
    if (depth <= WALK_DEPTH && p < w->e && (*p == '{' || *p == '['))
        return sliced_container(w, p, end, depth);
    return sliced_leaf(w, p, end);
}

int json_parse_sliced(cJSON **out, const char *data, size_t len)
{
    Walk w = {data + len, 0};
    const char *p = data, *end = NULL;
    if (len > 4 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) /* a byte-order mark, as cJSON skips it */
        p += 3;
    p = jpos_skip_ws(p, w.e);
    *out = sliced_value(&w, p, &end, 0);
    if (!*out)
        return -1;
    /* as bpe_files.c's parse_json: nothing but white space after it */
    while (end < w.e && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t' || *end == '\0'))
        end++;
    if (end < w.e) {
        json_delete_sliced(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* c's children freed, those down to WALK_DEPTH a child at a time, then c
 * (detached). */
static void sliced_delete(cJSON *c, int depth, long *n)
{
    cJSON *x = c->child;
    c->child = NULL;
    while (x) {
        cJSON *next = x->next;
        x->next = x->prev = NULL; /* cJSON_Delete frees the siblings after it too */
        if (depth < WALK_DEPTH && (cJSON_IsObject(x) || cJSON_IsArray(x)))
            sliced_delete(x, depth + 1, n);
        else
            cJSON_Delete(x);
        if (++*n % JSON_BREATHE_EVERY == 0)
            bg_breathe();
        x = next;
    }
    cJSON_Delete(c);
}

void json_delete_sliced(cJSON *root)
{
    long n = 0;
    if (root && (cJSON_IsObject(root) || cJSON_IsArray(root)))
        sliced_delete(root, 0, &n);
    else
        cJSON_Delete(root);
}
