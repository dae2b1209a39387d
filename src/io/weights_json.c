/* Reads learned weights back from JSON: a --print json document or a session
 * file (which has the same shape). Only config.heads, config.seed,
 * heads[].Wq/Wk/Wv, heads[].v, Wo and vb are used; every shape and value is
 * checked. The additive score's vectors: each head's "v" is its dk numbers
 * of params.v, except in a document whose config.mode is "basic", where
 * heads[0].v is vb (d numbers, as --print json writes it); a top-level
 * "vb" (d numbers, sessions write it) sets vb too. What the file leaves
 * out keeps the defaults (attn_params_default_v). Fills a ParsedWeights:
 * putting it into a Model is model_set_weights's. */
#include "attnviz/io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WEIGHT 1e6 /* larger values would overflow scores to infinity */

/* Line of the byte at pos in data (1-based). */
static long line_of(const char *data, size_t len, size_t pos)
{
    long line = 1;
    for (size_t i = 0; i < pos && i < len; i++)
        line += data[i] == '\n';
    return line;
}

/* Copy a rows×cols JSON array of arrays of numbers into out. null means
 * "no matrix" and leaves out untouched, returning 1. */
static int read_matrix(const cJSON *a, int rows, int cols, float *out,
                       const char *what, const char *name, AttnErr *err)
{
    if (!a || cJSON_IsNull(a))
        return 1;
    if (!cJSON_IsArray(a))
        return attn_err_set(err, ATTN_E_SHAPE, name, 0, "%s: expected an array", what);
    int n = cJSON_GetArraySize(a);
    if (n != rows)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                            "%s: expected %d rows, found %d", what, rows, n);
    int i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, a) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != cols)
            return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                                "%s row %d: expected %d numbers, found %d", what,
                                i, cols, cJSON_IsArray(row) ? cJSON_GetArraySize(row) : 0);
        int j = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, row) {
            if (!cJSON_IsNumber(v))
                return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                    "%s[%d][%d]: expected a number", what, i, j);
            double x = v->valuedouble;
            if (!isfinite(x) || fabs(x) > MAX_WEIGHT)
                return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                    "%s[%d][%d] = %g: weights must be finite and at most %g in size",
                                    what, i, j, x, MAX_WEIGHT);
            out[(size_t)i * cols + j] = (float)x;
            j++;
        }
        i++;
    }
    return 0;
}

/* A JSON array of n numbers into out (what names it in messages); NULL
 * leaves out untouched. */
static int read_vector(const cJSON *a, int n, float *out, const char *what,
                       const char *name, AttnErr *err)
{
    if (!a)
        return 0;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0, "%s: expected %d numbers, found %d%s",
                            what, n, cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0,
                            cJSON_IsArray(a) ? "" : " (not an array)");
    int j = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a) {
        if (!cJSON_IsNumber(v))
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "%s[%d]: expected a number", what, j);
        double x = v->valuedouble;
        if (!isfinite(x) || fabs(x) > MAX_WEIGHT)
            return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                "%s[%d] = %g: weights must be finite and at most %g in size",
                                what, j, x, MAX_WEIGHT);
        out[j++] = (float)x;
    }
    return 0;
}

/* Head k's "v": its dk numbers of p->v, or vb (d numbers) when basic. */
static int read_head_v(const cJSON *hobj, AttnParams *p, int k, int basic,
                       const char *name, AttnErr *err)
{
    char what[32];
    snprintf(what, sizeof what, "heads[%d].v", k);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(hobj, "v");
    if (basic)
        return k == 0 ? read_vector(a, p->d, p->vb, what, name, err) : 0;
    return read_vector(a, p->dk, p->v + (size_t)k * p->dk, what, name, err);
}

int weights_parse(ParsedWeights *out, int d, const char *data, size_t len,
                  const char *name, AttnErr *err)
{
    AttnParams p = {0};
    memset(out, 0, sizeof *out);
    int rc = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (root && end) {
        /* one document: only white space may follow it */
        while (end < data + len && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t' || *end == '\0'))
            end++;
        if (end < data + len) {
            long line = line_of(data, len, (size_t)(end - data));
            cJSON_Delete(root);
            return attn_err_set(err, ATTN_E_PARSE, name, line, "text after the end of the JSON document");
        }
    }
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long line = at && at >= data && at <= data + len ? line_of(data, len, (size_t)(at - data)) : 0;
        return attn_err_set(err, ATTN_E_PARSE, name, line, "not valid JSON");
    }
    if (!cJSON_IsObject(root)) {
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "expected a JSON object");
        goto cleanup;
    }
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(root, "config");
    const cJSON *heads = cJSON_GetObjectItemCaseSensitive(config, "heads");
    if (!cJSON_IsNumber(heads)) {
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "missing number config.heads");
        goto cleanup;
    }
    double hd = heads->valuedouble;
    if (hd != floor(hd) || hd < 1 || hd > ATTN_MAX_HEADS || d % (int)hd != 0) {
        rc = attn_err_set(err, ATTN_E_HEADS, name, 0,
                          "config.heads = %g must be a whole number that divides d = %d",
                          hd, d);
        goto cleanup;
    }
    int h = (int)hd;
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(config, "mode");
    int basic = cJSON_IsString(mode) && strcmp(mode->valuestring, "basic") == 0;
    const cJSON *dmod = cJSON_GetObjectItemCaseSensitive(config, "d_model");
    if (cJSON_IsNumber(dmod) && dmod->valuedouble != d) {
        rc = attn_err_set(err, ATTN_E_SHAPE, name, 0,
                          "config.d_model = %g but the embeddings have d = %d",
                          dmod->valuedouble, d);
        goto cleanup;
    }
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(root, "heads");
    if (!cJSON_IsArray(hs) || cJSON_GetArraySize(hs) != h) {
        rc = attn_err_set(err, ATTN_E_SHAPE, name, 0,
                          "expected \"heads\": an array of %d objects", h);
        goto cleanup;
    }
    rc = attn_params_create(&p, d, h);
    if (rc < 0) {
        rc = attn_err_set(err, -rc, name, 0, "cannot make %d heads", h);
        goto cleanup;
    }
    int k = 0;
    const cJSON *hobj;
    size_t slice = (size_t)p.d * p.dk;
    cJSON_ArrayForEach(hobj, hs) {
        static const char *const wn[3] = {"Wq", "Wk", "Wv"};
        float *W[3] = {p.Wq + k * slice, p.Wk + k * slice, p.Wv + k * slice};
        if (!cJSON_IsObject(hobj)) {
            rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "heads[%d]: expected an object", k);
            goto cleanup;
        }
        for (int w = 0; w < 3; w++) {
            char what[32];
            snprintf(what, sizeof what, "heads[%d].%s", k, wn[w]);
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(hobj, wn[w]);
            if (!a) {
                rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "missing %s", what);
                goto cleanup;
            }
            rc = read_matrix(a, p.d, p.dk, W[w], what, name, err);
            if (rc < 0)
                goto cleanup;
        }
        if ((rc = read_head_v(hobj, &p, k, basic, name, err)) < 0)
            goto cleanup;
        k++;
    }
    rc = read_vector(cJSON_GetObjectItemCaseSensitive(root, "vb"), p.d, p.vb, "vb", name, err);
    if (rc < 0)
        goto cleanup;
    const cJSON *wo = cJSON_GetObjectItemCaseSensitive(root, "Wo");
    if (!wo) {
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "missing Wo");
        goto cleanup;
    }
    rc = read_matrix(wo, p.d, p.d, p.Wo, "Wo", name, err);
    if (rc < 0)
        goto cleanup;
    out->params = p;
    memset(&p, 0, sizeof p);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(config, "seed");
    /* a seed is metadata here: kept only when it is a whole number that
     * --seed accepts (0 to 2^53), never converted out of range */
    if (cJSON_IsNumber(seed) && seed->valuedouble >= 0 && seed->valuedouble <= 9007199254740992.0 &&
        seed->valuedouble == floor(seed->valuedouble)) {
        out->has_seed = 1;
        out->seed = (uint64_t)seed->valuedouble;
    }
    rc = 0;
cleanup:
    attn_params_destroy(&p);
    cJSON_Delete(root);
    return rc;
}

int weights_load(ParsedWeights *out, int d, const char *path, AttnErr *err)
{
    char *data;
    size_t len;
    memset(out, 0, sizeof *out);
    int rc = io_read_file(path, ATTN_MAX_FILE_BYTES, &data, &len, err);
    if (rc < 0)
        return rc;
    rc = weights_parse(out, d, data, len, path, err);
    free(data);
    return rc;
}
