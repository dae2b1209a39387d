/* config.json → an architecture's config struct by its table (arch.h):
 * each row's key read in the table's order with its type, default and
 * refusals, its steps run where they stand, then the forward's check. The
 * meaning of a key is the table's; nothing here knows an architecture. Not
 * the weights (model_file.c). */
#include "attnviz/model_file.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_json.h"

/* Row f's own message msg, its "%s" replaced by arg (at most 60
 * characters of it). */
static int say(AttnErr *err, int code, const char *file, const char *msg, const char *arg)
{
    const char *p = strstr(msg, "%s");
    if (!p)
        return attn_err_set(err, code, file, 0, "%s", msg);
    return attn_err_set(err, code, file, 0, "%.*s%.60s%s", (int)(p - msg), msg, arg, p + 2);
}

/* Row f's value in root: its key (or alias), inside its object for
 * "object.member"; *member the key as the messages name it, *shown the
 * name found. *skip when the object is absent or null (the row not read). */
static const cJSON *lookup(const cJSON *root, const ArchField *f, const char **member,
                           const char **shown, int *skip)
{
    char parent[64];
    const char *dot = strchr(f->key, '.');
    *member = dot ? dot + 1 : f->key;
    *skip = 0;
    if (dot) {
        snprintf(parent, sizeof parent, "%.*s", (int)(dot - f->key), f->key);
        root = hf_json_item(root, parent);
        if (!cJSON_IsObject(root)) {
            *skip = 1;
            return NULL;
        }
    }
    const cJSON *v = hf_json_item(root, *member);
    *shown = *member;
    if (!v && (v = hf_json_item(root, f->alias)) != NULL)
        *shown = f->alias;
    return v;
}

static void put_int(void *cfg, const ArchField *f, int v)
{
    if (f->off != ARCH_NOWHERE)
        memcpy((char *)cfg + f->off, &v, sizeof v);
}

/* Row f's default into cfg. */
static void put_default(void *cfg, const ArchField *f)
{
    if (f->off == ARCH_NOWHERE || f->type == AF_OBJECT)
        return;
    if (f->type == AF_DOUBLE)
        memcpy((char *)cfg + f->off, &f->dflt, sizeof f->dflt);
    else if (f->type == AF_FLOAT || f->type == AF_F32)
        memcpy((char *)cfg + f->off, &(float){(float)f->dflt}, sizeof(float));
    else
        put_int(cfg, f, (int)f->dflt);
}

/* A whole number from 1 to hi: first a positive number (f->bad), then a
 * whole one not above hi (f->not_whole). */
static int read_int(void *cfg, const ArchField *f, const cJSON *v, const char *shown,
                    const char *file, AttnErr *err)
{
    double x = cJSON_IsNumber(v) ? v->valuedouble : 0;
    int positive = cJSON_IsNumber(v) && x > 0 && isfinite(x);
    if (positive && x == floor(x) && x <= f->hi) {
        put_int(cfg, f, (int)x);
        return 0;
    }
    if (positive && f->not_whole)
        return say(err, ATTN_E_RANGE, file, f->not_whole, shown);
    if (f->bad)
        return say(err, ATTN_E_RANGE, file, f->bad, shown);
    return attn_err_set(err, ATTN_E_RANGE, file, 0, "\"%s\" must be %sa whole number from 1 to %d",
                        shown, f->flags & AF_NULL ? "null or " : "", (int)f->hi);
}

static int read_number(void *cfg, const ArchField *f, const cJSON *v, const char *shown,
                       const char *file, AttnErr *err)
{
    double x = cJSON_IsNumber(v) ? v->valuedouble : 0;
    float x32 = f->type == AF_F32 ? (float)x : 0;
    int ok = cJSON_IsNumber(v) && (f->type == AF_F32 ? x32 > f->lo && x32 < f->hi
                                                     : x > f->lo && x < f->hi);
    if (ok && f->type == AF_FLOAT)
        x32 = (float)x;
    if (!ok && f->bad)
        return say(err, ATTN_E_RANGE, file, f->bad, shown);
    if (!ok)
        return attn_err_set(err, ATTN_E_RANGE, file, 0, "\"%s\" must be a number above %g and "
                            "below %g%s", shown, f->lo, f->hi,
                            f->type == AF_F32 ? " (as a float)" : "");
    if (f->off != ARCH_NOWHERE && f->type == AF_DOUBLE)
        memcpy((char *)cfg + f->off, &x, sizeof x);
    else if (f->off != ARCH_NOWHERE)
        memcpy((char *)cfg + f->off, &x32, sizeof x32);
    return 0;
}

static int read_enum(void *cfg, const ArchField *f, const cJSON *v, const char *shown,
                     const char *file, AttnErr *err)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return f->bad ? say(err, ATTN_E_PARSE, file, f->bad, shown)
                      : attn_err_set(err, ATTN_E_PARSE, file, 0, "\"%s\" must be a string", shown);
    for (const ArchName *n = f->names; n->word; n++)
        if (strcmp(v->valuestring, n->word) == 0) {
            put_int(cfg, f, n->value);
            return 0;
        }
    return say(err, ATTN_E_UNSUPPORTED, file, f->refused, v->valuestring);
}

/* A token id; null -1, a list its first (AF_LIST; an empty one -1). */
static int read_id(void *cfg, const ArchField *f, const cJSON *v, const char *shown,
                   const char *file, AttnErr *err)
{
    int id = -1;
    if ((f->flags & AF_LIST) && cJSON_IsArray(v))
        v = v->child;
    if (v && !cJSON_IsNull(v) && !hf_json_whole(v, 0, 2147483647.0, &id))
        return f->bad ? say(err, ATTN_E_RANGE, file, f->bad, shown)
                      : attn_err_set(err, ATTN_E_RANGE, file, 0, f->flags & AF_LIST
                                     ? "\"%s\" must be null, a whole number from 0 or a list "
                                       "of them"
                                     : "\"%s\" must be null or a whole number from 0", shown);
    put_int(cfg, f, id);
    return 0;
}

/* A list of names or numbers: each element into cfg, its length at
 * count_off. */
static int read_list(void *cfg, const ArchField *f, const cJSON *v, const char *shown,
                     const char *file, AttnErr *err)
{
    int n = 0;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > f->hi)
        return f->bad ? say(err, ATTN_E_PARSE, file, f->bad, shown)
                      : attn_err_set(err, ATTN_E_PARSE, file, 0, "\"%s\" must be a list of at "
                                     "most %d %s", shown, (int)f->hi,
                                     f->type == AF_NAMES ? "strings" : "numbers");
    for (const cJSON *e = v->child; e; e = e->next, n++) {
        if (f->type == AF_NUMBERS) {
            if (!cJSON_IsNumber(e) || !(e->valuedouble > f->lo) || !isfinite(e->valuedouble))
                return attn_err_set(err, ATTN_E_RANGE, file, 0, "\"%s\"'s element %d must be a "
                                    "number above %g", shown, n + 1, f->lo);
            if (f->off != ARCH_NOWHERE)
                memcpy((char *)cfg + f->off + (size_t)n * sizeof(double), &e->valuedouble,
                       sizeof(double));
            continue;
        }
        const ArchName *nm = f->names;
        while (nm->word && !(cJSON_IsString(e) && strcmp(e->valuestring, nm->word) == 0))
            nm++;
        if (!nm->word)
            return cJSON_IsString(e) ? say(err, ATTN_E_UNSUPPORTED, file, f->refused, e->valuestring)
                                     : attn_err_set(err, ATTN_E_PARSE, file, 0, "\"%s\"'s element "
                                                    "%d must be a string", shown, n + 1);
        if (f->off != ARCH_NOWHERE)
            ((unsigned char *)cfg)[f->off + (size_t)n] = (unsigned char)nm->value;
    }
    if (f->count_off != ARCH_NOWHERE)
        memcpy((char *)cfg + f->count_off, &n, sizeof n);
    return 0;
}

/* Row f of a's table on root. */
static int read_row(void *cfg, const ArchDesc *a, const ArchField *f, const cJSON *root,
                    const char *file, AttnErr *err)
{
    if (f->type == AF_STEP)
        return f->step(cfg, file, err);
    if (!arch_when(cfg, f->when))
        return 0;
    const char *member, *shown;
    int skip;
    const cJSON *v = lookup(root, f, &member, &shown, &skip);
    if (v && cJSON_IsNull(v) && (f->flags & AF_NULL_NONE)) {
        ArchField none = *f;
        none.dflt = 0;
        put_default(cfg, &none);
        return 0;
    }
    if (v && cJSON_IsNull(v) && (f->flags & AF_NULL))
        v = NULL;
    if (!v && (f->flags & AF_REQUIRED) && !skip)
        return f->missing ? say(err, ATTN_E_PARSE, file, f->missing, member)
                          : attn_err_set(err, ATTN_E_PARSE, file, 0, "no \"%s\": %s", member,
                                         a->required_note);
    if (!v) {
        if (f->type != AF_NAMES && f->type != AF_NUMBERS)
            put_default(cfg, f);
        return 0;
    }
    switch (f->type) {
    case AF_INT:
        return read_int(cfg, f, v, shown, file, err);
    case AF_DOUBLE:
    case AF_FLOAT:
    case AF_F32:
        return read_number(cfg, f, v, shown, file, err);
    case AF_BOOL:
        if (!cJSON_IsBool(v))
            return f->bad ? say(err, ATTN_E_PARSE, file, f->bad, shown)
                          : attn_err_set(err, ATTN_E_PARSE, file, 0, "\"%s\" must be true or false",
                                         shown);
        if (cJSON_IsTrue(v) && f->refused)
            return say(err, ATTN_E_UNSUPPORTED, file, f->refused, shown);
        put_int(cfg, f, cJSON_IsTrue(v));
        return 0;
    case AF_ENUM:
        return read_enum(cfg, f, v, shown, file, err);
    case AF_ID:
        return read_id(cfg, f, v, shown, file, err);
    case AF_NAMES:
    case AF_NUMBERS:
        return read_list(cfg, f, v, shown, file, err);
    case AF_OBJECT:
        if (cJSON_IsObject(v))
            return 0;
        return f->bad ? say(err, ATTN_E_PARSE, file, f->bad, shown)
                      : attn_err_set(err, ATTN_E_PARSE, file, 0, "\"%s\" must be null or an object",
                                     shown);
    default:
        return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0, "row \"%s\" of no known type", shown);
    }
}

/* 1 when word is one of the space-separated words of list. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && strncmp(p, word, n) == 0)
            return 1;
        p += k + (p[k] == ' ');
    }
    return 0;
}

/* The family whose class cls is (arch.h's arch_classes), or NULL. */
static const ArchClass *class_family(const char *cls)
{
    static const char *const tails[] = {"For", "Model", "LMHead", "WithLMHead", "MT"};
    for (const ArchClass *c = arch_classes; c->prefix; c++) {
        size_t n = strlen(c->prefix);
        for (size_t k = 0; strncmp(cls, c->prefix, n) == 0 && k < 5; k++)
            if (strncmp(cls + n, tails[k], strlen(tails[k])) == 0)
                return c;
    }
    return NULL;
}

/* A config that mixes families: architectures naming a class of another
 * family than its model_type's, refused naming both (transformers builds
 * the model by model_type; the class names what the file was saved from).
 * A model_type or class no family row knows is not judged. */
static int check_classes(const cJSON *root, const char *name, AttnErr *err)
{
    const cJSON *mt = hf_json_item(root, "model_type");
    const cJSON *list = hf_json_item(root, "architectures");
    if (!list || cJSON_IsNull(list))
        return 0;
    if (!cJSON_IsArray(list))
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "\"architectures\" must be a list of class names");
    const ArchClass *own = NULL;
    for (const ArchClass *c = arch_classes; cJSON_IsString(mt) && c->prefix && !own; c++)
        own = has_word(c->types, mt->valuestring) ? c : NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        if (!cJSON_IsString(e) || !e->valuestring)
            return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                "\"architectures\" must be a list of class names");
        const ArchClass *c = class_family(e->valuestring);
        if (own && c && !has_word(c->types, mt->valuestring))
            return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                                "architectures names %.60s, not a%s %s model: a config that "
                                "mixes families (model_type \"%.40s\"; %.60s is %s's class, "
                                "model_type \"%.*s\")", e->valuestring,
                                strchr("AEIOX", own->family[0]) ? "n" : "", own->family,
                                mt->valuestring, e->valuestring, c->family,
                                (int)strcspn(c->types, " "), c->types);
    }
    return 0;
}

/* The table on text; model_type's string into type (n bytes) when given. */
int model_config_read(const ArchDesc *a, void *cfg, const char *text, size_t len,
                      const char *name, char *type, size_t n, AttnErr *err)
{
    memset(cfg, 0, a->rt->cfg_size);
    if (!name)
        name = "config.json";
    cJSON *root = hf_json_parse(text, len, name, err);
    if (!root)
        return -ATTN_E_PARSE;
    int rc = cJSON_IsObject(root) ? 0 : attn_err_set(err, ATTN_E_PARSE, name, 0,
                                                      "not a JSON object");
    /* transformers 5 writes the rotary settings as "rope_parameters": not
     * read, so refused where "rope_theta" is not beside it (its defaults
     * would stand in silently) */
    const cJSON *objs[2] = {root, hf_json_item(root, "text_config")};
    int own = 0; /* a description with rows of its own for it says it itself */
    for (int i = 0; i < a->n_fields; i++)
        own |= a->fields[i].key && strncmp(a->fields[i].key, "rope_parameters", 15) == 0;
    for (int k = 0; k < 2 && rc == 0 && !own; k++)
        if (cJSON_IsObject(objs[k]) && hf_json_item(objs[k], "rope_parameters") &&
            !hf_json_item(objs[k], "rope_theta"))
            rc = attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0, "\"rope_parameters\" (transformers "
                              "5's layout) is not read yet: attnviz reads \"rope_theta\" and "
                              "\"rope_scaling\" as transformers 4 writes them");
    if (rc == 0)
        rc = check_classes(root, name, err);
    const cJSON *in = root; /* where the rows read: the top or an AF_ENTER's object */
    for (int i = 0; i < a->n_fields && rc == 0; i++) {
        const ArchField *f = &a->fields[i];
        if (f->type != AF_ENTER) {
            rc = read_row(cfg, a, f, in, name, err);
            continue;
        }
        if (!arch_when(cfg, f->when))
            continue;
        const cJSON *o = f->key ? hf_json_item(root, f->key) : NULL;
        if (f->key && !cJSON_IsObject(o) && (f->flags & AF_REQUIRED))
            rc = f->missing ? say(err, ATTN_E_PARSE, name, f->missing, f->key)
                            : attn_err_set(err, ATTN_E_PARSE, name, 0, "no \"%s\" object: %s",
                                           f->key, a->required_note);
        in = cJSON_IsObject(o) ? o : root;
    }
    if (rc == 0)
        rc = a->rt->check(cfg, err);
    if (rc < 0 && err && !err->file[0])
        snprintf(err->file, sizeof err->file, "%s", name);
    const cJSON *mt = hf_json_item(root, "model_type");
    /* every refusal names the family: the rows' own messages do, the
     * loader's usual ones get it appended */
    if (rc < 0 && err && cJSON_IsString(mt) && mt->valuestring && mt->valuestring[0] &&
        !strstr(err->msg, mt->valuestring) && strlen(err->msg) + strlen(mt->valuestring) + 24 < sizeof err->msg)
        snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg), " (model_type %.40s)",
                 mt->valuestring);
    if (rc == 0 && type)
        snprintf(type, n, "%s", cJSON_IsString(mt) && mt->valuestring ? mt->valuestring : "");
    cJSON_Delete(root);
    if (rc < 0)
        memset(cfg, 0, a->rt->cfg_size);
    return rc;
}

static void add_stop(const cJSON *v, int *ids, int *n, int cap)
{
    int id;
    if (!hf_json_whole(v, 0, 2147483647.0, &id))
        return;
    for (int k = 0; k < *n; k++)
        if (ids[k] == id)
            return;
    if (*n < cap)
        ids[(*n)++] = id;
}

void model_config_stop_ids(const char *text, size_t len, int *ids, int *n, int cap)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *v = cJSON_IsObject(root) ? hf_json_item(root, "eos_token_id") : NULL;
    if (cJSON_IsArray(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
            add_stop(e, ids, n, cap);
    } else if (v) {
        add_stop(v, ids, n, cap);
    }
    cJSON_Delete(root);
}

int model_config_parse(const ArchDesc *a, void *cfg, const char *text, size_t len,
                       const char *name, AttnErr *err)
{
    return model_config_read(a, cfg, text, len, name, NULL, 0, err);
}
