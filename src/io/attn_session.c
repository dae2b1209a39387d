/* Sessions of an attention file: which file, layer, head and view were
 * shown, so Ctrl+S and a later start come back to them. A small JSON
 * object ({"attention_file": "...", "layer": 2, ...}) written atomically;
 * the numbers stay in the attention file. */
#include "attnviz/attnio.h"
#include "attnviz/head_scores.h"
#include "attnviz/io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "view"."color_scale": ColorScaleMode's names, as a sentence's session has them */
static const char *const CSCALE_NAMES[3] = {"fixed", "max", "row"};

/* "group": OptGroup's order (GROUP_CROSS 0, GROUP_ENCODER, GROUP_DECODER) */
static const char *const GROUP_NAMES[3] = {"cross", "encoder", "decoder"};

static int write_session(FILE *f, void *ctx)
{
    const AttnSession *s = ctx;
    fputs("{\"attention_file\": ", f);
    io_json_string(f, s->file);
    fprintf(f, ",\n \"layer\": %d, \"head\": %d, \"rollout\": %s, \"hide_special\": %s,\n"
               " \"grid\": %s, \"grid_layer\": %d, \"grid_head\": %d, \"query\": %d, \"key\": %d",
            s->layer, s->head, s->rollout ? "true" : "false", s->hide_special ? "true" : "false",
            s->grid ? "true" : "false", s->grid_layer, s->grid_head, s->query, s->key);
    if (s->has_text) {
        fputs(",\n \"text\": ", f);
        io_json_string(f, s->text);
    }
    if (s->n_probe > 0) {
        fprintf(f, ",\n \"probe\": {\"seed\": %.0f, \"n\": %d, \"tokens\": [", s->probe_seed, s->probe_n);
        for (int i = 0; i < s->n_probe; i++)
            fprintf(f, "%s%d", i ? ", " : "", s->probe[i]);
        fputs("]}", f);
    }
    const char *score = head_score_name((HeadScoreId)s->score);
    if (s->matrix == 3) /* a model's norms (a reader without them shows the weights) */
        fputs(",\n \"norms\": true", f);
    fprintf(f, ",\n \"matrix\": %s, \"score\": \"%s\", \"sorted\": %s, \"score_view\": %s,"
               " \"score_color_scale\": \"%s\", \"every_head\": %s, \"heads_off\": [", s->matrix == 1 ? "true" : "false",
            score ? score : "induction", s->sorted ? "true" : "false", s->score_view ? "true" : "false",
            CSCALE_NAMES[s->score_cscale >= 0 && s->score_cscale < 3 ? s->score_cscale : 0],
            s->every_head ? "true" : "false");
    for (int i = 0; i < s->n_heads_off; i++)
        fprintf(f, "%s%d", i ? ", " : "", s->heads_off[i] + 1);
    fputs("]", f);
    if (s->n_ablated > 0 || s->logit_lens) {
        fputs(",\n \"ablated\": [", f);
        for (int i = 0; i < s->n_ablated; i++)
            fprintf(f, "%s[%d, %d]", i ? ", " : "", s->ablated[i][0] + 1, s->ablated[i][1] + 1);
        fprintf(f, "], \"ablate_mean\": %s, \"logit_lens\": %s", s->ablate_mean ? "true" : "false",
                s->logit_lens ? "true" : "false");
    }
    if (s->has_target) {
        fputs(",\n \"target\": ", f);
        io_json_string(f, s->target);
        if (s->group >= 0 && s->group < 3)
            fprintf(f, ", \"group\": \"%s\"", GROUP_NAMES[s->group]);
    }
    if (s->has_view)
        fprintf(f, ",\n \"view\": {\"colormap\": %d, \"color_scale\": \"%s\", \"all_lines\": %s, \"dark\": %s, "
                   "\"ui_scale\": %g, \"lines_top\": %d, \"side_tab\": %d}", s->cmap,
                CSCALE_NAMES[s->cscale >= 0 && s->cscale < 3 ? s->cscale : 0], s->all_lines ? "true" : "false",
                s->dark ? "true" : "false", (double)s->ui_scale, s->lines_top, s->side);
    fputs("}\n", f);
    return ferror(f) ? -ATTN_E_IO : 0;
}

int attn_session_save(const char *path, const AttnSession *s, AttnErr *err)
{
    return io_write_atomic(path, write_session, (void *)s, err);
}

int attn_session_is(const char *data, size_t len)
{
    cJSON *root = cJSON_ParseWithLength(data, len);
    int is = cJSON_IsObject(root) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "attention_file"));
    cJSON_Delete(root);
    return is;
}

/* An integer member in [lo, hi], or def when absent. */
static int member(const cJSON *root, const char *key, int lo, int hi, int def, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
        v->valuedouble != (double)(int)v->valuedouble)
        return -1;
    *out = (int)v->valuedouble;
    return 0;
}

/* "probe": {"seed": S, "n": N, "tokens": [ids]}: whole numbers, at most
 * 1024 tokens. */
static int parse_probe(AttnSession *s, const cJSON *p, const char *name, AttnErr *err)
{
    if (!p)
        return 0;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(p, "seed");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "n");
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(p, "tokens");
    int count = cJSON_IsArray(tok) ? cJSON_GetArraySize(tok) : -1;
    int ok = cJSON_IsObject(p) && cJSON_IsNumber(seed) && seed->valuedouble >= 0 &&
             seed->valuedouble <= 9007199254740992.0 && seed->valuedouble == floor(seed->valuedouble) &&
             cJSON_IsNumber(n) && n->valuedouble >= 1 && n->valuedouble <= 511 && count >= 1 &&
             count <= (int)(sizeof s->probe / sizeof s->probe[0]);
    const cJSON *t;
    int i = 0;
    const cJSON *list = ok ? tok : NULL;
    cJSON_ArrayForEach(t, list) {
        ok = ok && cJSON_IsNumber(t) && t->valuedouble >= 0 && t->valuedouble < 2147483647.0 &&
             t->valuedouble == (double)(int)t->valuedouble;
        if (ok)
            s->probe[i++] = (int)t->valuedouble;
    }
    if (!ok)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"probe\" must be {\"seed\": S, \"n\": N, "
                                                       "\"tokens\": [1 to 1024 token ids]}");
    s->n_probe = count;
    s->probe_n = (int)n->valuedouble;
    s->probe_seed = seed->valuedouble;
    return 0;
}

/* "heads_off": [1-based head numbers], at most 256 of them. */
static int parse_heads_off(AttnSession *s, const cJSON *list, const char *name, AttnErr *err)
{
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    int most = (int)(sizeof s->heads_off / sizeof s->heads_off[0]), ok = n >= 0 && n <= most, i = 0;
    const cJSON *t, *each = ok ? list : NULL;
    cJSON_ArrayForEach(t, each) {
        ok = ok && cJSON_IsNumber(t) && t->valuedouble >= 1 && t->valuedouble <= most &&
             t->valuedouble == (double)(int)t->valuedouble;
        if (ok)
            s->heads_off[i++] = (int)t->valuedouble - 1;
    }
    if (!ok)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"heads_off\" must be a list of head numbers from 1 to %d",
                            most);
    s->n_heads_off = n;
    return 0;
}

/* "ablated": [[layer, head], ...], 1-based, at most 256; "ablate_mean"
 * and "logit_lens": true or false. Whether the model has those heads is
 * the source's to check. */
static int parse_ablated(AttnSession *s, const cJSON *root, const char *name, AttnErr *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "ablated");
    if (member(root, "ablate_mean", 0, 1, 0, &s->ablate_mean) < 0 ||
        member(root, "logit_lens", 0, 1, 0, &s->logit_lens) < 0)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"ablate_mean\" and \"logit_lens\" must be true or false");
    if (!list)
        return 0;
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1, i = 0;
    int ok = n >= 0 && n <= (int)(sizeof s->ablated / sizeof s->ablated[0]);
    const cJSON *pair, *from = ok ? list : NULL;
    cJSON_ArrayForEach(pair, from) {
        const cJSON *l = cJSON_GetArrayItem(pair, 0), *h = cJSON_GetArrayItem(pair, 1);
        ok = ok && cJSON_IsArray(pair) && cJSON_GetArraySize(pair) == 2 && cJSON_IsNumber(l) && cJSON_IsNumber(h) &&
             l->valuedouble >= 1 && l->valuedouble <= 4096 && h->valuedouble >= 1 && h->valuedouble <= 4096 &&
             l->valuedouble == floor(l->valuedouble) && h->valuedouble == floor(h->valuedouble);
        if (!ok)
            break;
        s->ablated[i][0] = (int)l->valuedouble - 1;
        s->ablated[i++][1] = (int)h->valuedouble - 1;
    }
    if (!ok)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"ablated\" must be a list of at most 256 [layer, head] "
                                                       "pairs, each a whole number from 1");
    s->n_ablated = n;
    return 0;
}

/* The head roles: "score" a score's name, the switches, the overview's
 * colour scale, "heads_off". */
static int parse_heads(AttnSession *s, const cJSON *root, const char *name, AttnErr *err)
{
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(root, "score");
    s->score = HEAD_SCORE_INDUCTION;
    if (score && (s->score = head_score_from_name(cJSON_GetStringValue(score))) < 0)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"score\" must be one of previous, self, first, duplicate, "
                                                       "induction, entropy, distance");
    static const char *const keys[] = {"matrix", "sorted", "score_view", "every_head"};
    int *fields[] = {&s->matrix, &s->sorted, &s->score_view, &s->every_head};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (member(root, keys[k], 0, 1, 0, fields[k]) < 0)
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"%s\" must be true or false", keys[k]);
    int norms = 0;
    if (member(root, "norms", 0, 1, 0, &norms) < 0)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"norms\" must be true or false");
    if (norms)
        s->matrix = 3;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(root, "score_color_scale");
    s->score_cscale = cs ? -1 : 0;
    for (int k = 0; k < 3; k++)
        if (cJSON_IsString(cs) && strcmp(cs->valuestring, CSCALE_NAMES[k]) == 0)
            s->score_cscale = k;
    if (s->score_cscale < 0)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"score_color_scale\" must be \"fixed\", \"max\" or \"row\"");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(root, "heads_off");
    return off ? parse_heads_off(s, off, name, err) : 0;
}

/* "view": the colour map, colour scale, theme, interface size and lines;
 * absent: has_view 0. */
/* An encoder-decoder's "target" (a string) and "group" ("encoder",
 * "decoder" or "cross"); neither: has_target 0, group -1. */
static int parse_target(AttnSession *s, const cJSON *root, const char *name, AttnErr *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "target");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "group");
    s->group = -1;
    if (t && (!cJSON_IsString(t) || strlen(t->valuestring) >= sizeof s->target))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"target\" must be a string of fewer than %zu bytes",
                            sizeof s->target);
    if (t) {
        s->has_target = 1;
        snprintf(s->target, sizeof s->target, "%s", t->valuestring);
    }
    if (!g)
        return 0;
    for (int k = 0; k < 3 && cJSON_IsString(g); k++)
        if (strcmp(g->valuestring, GROUP_NAMES[k]) == 0) {
            s->group = k;
            return 0;
        }
    return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"group\" must be \"encoder\", \"decoder\" or \"cross\", not %s",
                        cJSON_IsString(g) ? g->valuestring : "a non-string");
}

static int parse_view(AttnSession *s, const cJSON *root, const char *name, AttnErr *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "view");
    if (!v)
        return 0;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(v, "color_scale");
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(v, "ui_scale");
    s->cscale = -1;
    for (int k = 0; k < 3; k++)
        if (cJSON_IsString(cs) && strcmp(cs->valuestring, CSCALE_NAMES[k]) == 0)
            s->cscale = k;
    s->dark = 1;
    s->ui_scale = 1.0f;
    s->lines_top = 8;
    if (!cJSON_IsObject(v) || member(v, "colormap", 0, 3, 0, &s->cmap) < 0 ||
        member(v, "all_lines", 0, 1, 0, &s->all_lines) < 0 || member(v, "dark", 0, 1, 1, &s->dark) < 0 ||
        member(v, "lines_top", 0, 1024, 8, &s->lines_top) < 0 || member(v, "side_tab", 0, 15, 0, &s->side) < 0 ||
        (cs && s->cscale < 0) ||
        (us && !(cJSON_IsNumber(us) && us->valuedouble >= 0.5 && us->valuedouble <= 3.0)))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"view\" must be {\"colormap\": 0 to 3, \"color_scale\": "
                                                       "\"fixed\", \"max\" or \"row\", \"all_lines\", \"dark\": true "
                                                       "or false, \"ui_scale\": 0.5 to 3, \"lines_top\": 0 to 1024, "
                                                       "\"side_tab\": 0 to 15}");
    if (s->cscale < 0)
        s->cscale = 0;
    if (us)
        s->ui_scale = (float)us->valuedouble;
    s->has_view = 1;
    return 0;
}

int attn_session_parse(AttnSession *s, const char *data, size_t len, const char *name, AttnErr *err)
{
    memset(s, 0, sizeof *s);
    cJSON *root = cJSON_ParseWithLength(data, len);
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(root, "attention_file");
    int rc = 0;
    if (!cJSON_IsObject(root) || !cJSON_IsString(file) || !file->valuestring[0] ||
        strlen(file->valuestring) >= sizeof s->file)
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "not an attention session (no \"attention_file\")");
    static const char *const keys[] = {"layer", "head", "rollout", "hide_special", "grid",
                                       "grid_layer", "grid_head", "query", "key"};
    int *fields[] = {&s->layer, &s->head, &s->rollout, &s->hide_special, &s->grid,
                     &s->grid_layer, &s->grid_head, &s->query, &s->key};
    for (size_t k = 0; rc == 0 && k < sizeof keys / sizeof keys[0]; k++)
        if (member(root, keys[k], -1, ATTN_FILE_MAX_TOKENS, k < 2 ? 0 : k >= 7 ? -1 : 0, fields[k]) < 0)
            rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "\"%s\" must be a whole number from -1 to %d",
                              keys[k], ATTN_FILE_MAX_TOKENS);
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(root, "text");
    if (rc == 0 && text && (!cJSON_IsString(text) || strlen(text->valuestring) >= sizeof s->text))
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "\"text\" must be a string of fewer than %zu bytes",
                          sizeof s->text);
    if (rc == 0 && text) {
        s->has_text = 1;
        snprintf(s->text, sizeof s->text, "%s", text->valuestring);
    }
    if (rc == 0)
        rc = parse_probe(s, cJSON_GetObjectItemCaseSensitive(root, "probe"), name, err);
    if (rc == 0)
        rc = parse_heads(s, root, name, err);
    if (rc == 0)
        rc = parse_ablated(s, root, name, err);
    if (rc == 0)
        rc = parse_target(s, root, name, err);
    if (rc == 0)
        rc = parse_view(s, root, name, err);
    if (rc == 0)
        snprintf(s->file, sizeof s->file, "%s", file->valuestring);
    cJSON_Delete(root);
    if (rc < 0)
        memset(s, 0, sizeof *s);
    return rc;
}

int attn_session_load(AttnSession *s, const char *path, AttnErr *err)
{
    char *data = NULL;
    size_t len = 0;
    memset(s, 0, sizeof *s);
    if (io_read_file(path, ATTN_MAX_FILE_BYTES, &data, &len, err) < 0)
        return -err->code;
    int rc = attn_session_parse(s, data, len, path, err);
    free(data);
    return rc;
}

AttnPathKind attn_path_kind(const char *path)
{
    if (attn_path_is_attention(path))
        return ATTN_PATH_FILE;
    size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 5, ".json") != 0)
        return ATTN_PATH_OTHER;
    char *data = NULL;
    size_t len = 0;
    AttnErr ignore = {0};
    AttnPathKind k = ATTN_PATH_OTHER;
    if (io_read_file(path, ATTN_MAX_FILE_BYTES, &data, &len, &ignore) == 0)
        k = attn_json_is_attention(data, len) ? ATTN_PATH_FILE
            : attn_session_is(data, len)      ? ATTN_PATH_SESSION
                                              : ATTN_PATH_OTHER;
    free(data);
    return k;
}
