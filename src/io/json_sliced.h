/* A JSON document parsed and freed in slices (src/io/json_sliced.c), for a
 * large one read on the one-thread page (a tokenizer.json of 30 MB);
 * internal to src/io. */
#ifndef ATTNVIZ_JSON_SLICED_H
#define ATTNVIZ_JSON_SLICED_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Elements parsed (or freed, or read by a caller's loop) between two
 * bg_breathe: about a millisecond of work in the page. */
#define JSON_BREATHE_EVERY 1024

/* The document in data (only white space after it) into *out, the same
 * tree as cJSON_ParseWithLengthOpts gives, with bg_breathe between its
 * parts. 0, or -1 with *out NULL when the document is not valid JSON, or
 * memory ran out: then parse it whole for cJSON's error (its place). */
int json_parse_sliced(cJSON **out, const char *data, size_t len);
/* cJSON_Delete, with bg_breathe between its parts. NULL: nothing. */
void json_delete_sliced(cJSON *root);

#endif
