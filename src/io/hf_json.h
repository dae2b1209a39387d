/* The small readers of config.json (model_config.c, model_file.c): the
 * whole text as one JSON value with the line of a syntax error, a whole
 * number in a range, a member; the table's reader itself. io only. */
#ifndef ATTNVIZ_IO_HF_JSON_H
#define ATTNVIZ_IO_HF_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "attnviz/arch.h"
#include "attnviz/error.h"

/* text (len bytes, no NUL needed) as one JSON value followed by nothing but
 * white space; NULL with -ATTN_E_PARSE in err (the line where it stopped)
 * when it is not. The caller cJSON_Deletes it. */
cJSON *hf_json_parse(const char *text, size_t len, const char *name, AttnErr *err);
/* 1 and *out when v is a whole number in [lo, hi], else 0. */
int hf_json_whole(const cJSON *v, double lo, double hi, int *out);
/* root's member key (case-sensitive; NULL key: NULL). */
const cJSON *hf_json_item(const cJSON *root, const char *key);
/* model_config_parse, and model_type's string into type (n bytes) on
 * success when type is given (model_config.c). */
int model_config_read(const ArchDesc *a, void *cfg, const char *text, size_t len,
                      const char *name, char *type, size_t n, AttnErr *err);
/* The ids of the config text's top-level eos_token_id (a whole number or a
 * list of them; anything else: none) added to ids[0..*n) (cap at most, each
 * once). A text that does not parse adds none: the config's own reader
 * names what is wrong with it. */
void model_config_stop_ids(const char *text, size_t len, int *ids, int *n, int cap);

#endif
