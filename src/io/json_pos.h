/* Positions in a JSON document that cJSON has parsed (src/io/json_pos.c);
 * internal to src/io. e is the document's end throughout. */
#ifndef ATTNVIZ_JSON_POS_H
#define ATTNVIZ_JSON_POS_H

#include <stddef.h>

/* Past white space as cJSON skips it (every byte up to the space). */
const char *jpos_skip_ws(const char *p, const char *e);
/* Past the string, array, object or scalar at p (at least one byte). */
const char *jpos_skip_value(const char *p, const char *e);
/* The k-th element of the array, or member of the object, at p (for a
 * member: where its key starts); NULL when there is none. */
const char *jpos_nth(const char *p, const char *e, long k);
/* The value of member key (spelled without escapes) of the object at p. */
const char *jpos_member(const char *p, const char *e, const char *key);
/* The line (from 1) of at in data. */
long jpos_line_at(const char *data, const char *at);
/* The line of the k-th item (k < 0: the value itself) of the value found
 * by following keys (NULL-terminated) from the document's top; 0 when not
 * found. */
long jpos_line(const char *data, size_t len, const char *const *keys, long k);

#endif
