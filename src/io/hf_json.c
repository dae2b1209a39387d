/* The config.json reader's small pieces (hf_json.h): parsing with the
 * line of an error, whole numbers, members. Not any config's meaning. */
#include "hf_json.h"

#include <math.h>

cJSON *hf_json_parse(const char *text, size_t len, const char *name, AttnErr *err)
{
    const char *end = NULL;
    cJSON *root = text ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
    while (root && end && end < text + len &&
           (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
        end++;
    if (!root || (end && end < text + len)) {
        long line = 1;
        for (const char *p = text; p && end && p < end && p < text + len; p++)
            line += *p == '\n';
        int after = root != NULL;
        cJSON_Delete(root);
        attn_err_set(err, ATTN_E_PARSE, name, end ? line : 0,
                     after ? "text after the JSON object" : "not valid JSON");
        return NULL;
    }
    return root;
}

int hf_json_whole(const cJSON *v, double lo, double hi, int *out)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
        v->valuedouble != floor(v->valuedouble))
        return 0;
    *out = (int)v->valuedouble;
    return 1;
}

const cJSON *hf_json_item(const cJSON *root, const char *key)
{
    return key ? cJSON_GetObjectItemCaseSensitive(root, key) : NULL;
}
