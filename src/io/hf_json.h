/* The small readers the config.json parsers share (gpt2_config.c,
 * llama_config.c): the whole text as one JSON value with the line of a
 * syntax error, a whole number in a range, a boolean with a default. io only. */
#ifndef ATTNVIZ_IO_HF_JSON_H
#define ATTNVIZ_IO_HF_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "attnviz/error.h"

/* text (len bytes, no NUL needed) as one JSON value followed by nothing but
 * white space; NULL with -ATTN_E_PARSE in err (the line where it stopped)
 * when it is not. The caller cJSON_Deletes it. */
cJSON *hf_json_parse(const char *text, size_t len, const char *name, AttnErr *err);
/* 1 and *out when v is a whole number in [lo, hi], else 0. */
int hf_json_whole(const cJSON *v, double lo, double hi, int *out);
/* root's member key (case-sensitive; NULL key: NULL). */
const cJSON *hf_json_item(const cJSON *root, const char *key);
/* The boolean key of root into *out, dflt when absent; -ATTN_E_PARSE
 * naming the key when it is not true or false. */
int hf_json_bool(int *out, const cJSON *root, const char *key, int dflt, const char *name,
                 AttnErr *err);

#endif
