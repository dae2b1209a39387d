/* A GGUF file (llama.cpp's) opened as a model (model_file.h): the file
 * mapped, its header parsed (gguf.c), the architecture its
 * general.architecture names found among the descriptions' ArchGguf rows,
 * its metadata written as the config.json its converter came from and read
 * by the description's table (the same defaults, checks and refusals as a
 * folder's), its tensors renamed to the table's names with their shapes in
 * Hugging Face's order and bound by model_file_bind. The rows llama.cpp's
 * converter permuted for its rotary layout keep their place in the file:
 * the matrix is read through the rows' order (RtMat's perm), so the maps
 * are the Hugging Face model's. Nothing here knows an architecture. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gguf.h"
#include "attnviz/io.h"
#include "attnviz/model_file.h"
#include "hf_json.h"
#include "model_file_internal.h"

/* The description and row reading general.architecture arch, or NULL. */
static const ArchDesc *desc_for(const char *arch, const ArchDesc *(*archs)(int),
                                const ArchGguf **row)
{
    for (int i = 0; archs(i); i++)
        for (const ArchGguf *g = archs(i)->gguf; g && g->arch; g++)
            if (strcmp(g->arch, arch) == 0) {
                *row = g;
                return archs(i);
            }
    return NULL;
}

/* The GGUF architectures attnviz reads, for messages. */
static void known_archs(const ArchDesc *(*archs)(int), char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; archs(i); i++)
        for (const ArchGguf *g = archs(i)->gguf; g && g->arch; g++)
            snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? ", " : "", g->arch);
}

/* kv's value as JSON (numbers, bools, strings and arrays of them), or NULL. */
static cJSON *json_of(const GgufKV *kv)
{
    switch (kv->type) {
    case GGUF_U8: case GGUF_U16: case GGUF_U32: case GGUF_U64:
        return cJSON_CreateNumber((double)kv->v.u);
    case GGUF_I8: case GGUF_I16: case GGUF_I32: case GGUF_I64:
        return cJSON_CreateNumber((double)kv->v.i);
    case GGUF_F32: case GGUF_F64:
        return cJSON_CreateNumber(kv->v.f);
    case GGUF_BOOL:
        return cJSON_CreateBool(kv->v.u != 0);
    case GGUF_STRING: {
        char *s = malloc(kv->v.str.len + 1);
        if (!s)
            return NULL;
        memcpy(s, kv->v.str.s, kv->v.str.len);
        s[kv->v.str.len] = '\0';
        cJSON *j = cJSON_CreateString(s);
        free(s);
        return j;
    }
    case GGUF_ARRAY: {
        if (kv->arr_type == GGUF_STRING || kv->arr_type == GGUF_ARRAY || kv->arr_n > 1u << 20)
            return NULL;
        float *v = malloc((size_t)kv->arr_n * sizeof *v + 1);
        cJSON *a = v && gguf_array_f32(kv, v) == 0 ? cJSON_CreateArray() : NULL;
        for (uint64_t i = 0; a && i < kv->arr_n; i++)
            cJSON_AddItemToArray(a, kv->arr_type == GGUF_BOOL ? cJSON_CreateBool(v[i] != 0.0f)
                                                               : cJSON_CreateNumber(v[i]));
        free(v);
        return a;
    }
    default:
        return NULL;
    }
}

/* root[key] = v, "a.b" inside the object a (made when absent). */
static void json_put(cJSON *root, const char *key, cJSON *v)
{
    const char *dot = strchr(key, '.');
    if (!dot) {
        cJSON_DeleteItemFromObjectCaseSensitive(root, key);
        cJSON_AddItemToObject(root, key, v);
        return;
    }
    char head[128];
    snprintf(head, sizeof head, "%.*s", (int)(dot - key), key);
    cJSON *o = cJSON_GetObjectItemCaseSensitive(root, head);
    if (!cJSON_IsObject(o))
        o = cJSON_AddObjectToObject(root, head);
    json_put(o, dot + 1, v);
}

/* A "!" key row's "key=VALUE" written into root: 0, or -1 out of memory. */
static int absent_put(cJSON *root, const char *spec)
{
    char key[128];
    const char *eq = strchr(spec, '=');
    if (!eq || eq - spec >= (long)sizeof key)
        return 0; /* a table's mistake: nothing to write */
    snprintf(key, sizeof key, "%.*s", (int)(eq - spec), spec);
    cJSON *v = cJSON_Parse(eq + 1);
    if (!v)
        return -1;
    json_put(root, key, v);
    return 0;
}

/* The row of names whose GGUF name matches name (its layer in *layer, -1
 * when none), or NULL. */
static const ArchGgufName *name_row(const ArchGgufName *rows, const char *name, int *layer)
{
    for (const ArchGgufName *r = rows; r->gguf; r++) {
        const char *d = strstr(r->gguf, "%d");
        *layer = -1;
        if (!r->hf) { /* another model's, under the prefix r->gguf */
            if (strncmp(name, r->gguf, strlen(r->gguf)) == 0)
                return r;
            continue;
        }
        if (!d) {
            if (strcmp(r->gguf, name) == 0)
                return r;
            continue;
        }
        size_t pre = (size_t)(d - r->gguf);
        if (strncmp(name, r->gguf, pre) != 0)
            continue;
        const char *p = name + pre;
        char *end;
        long l = strtol(p, &end, 10);
        if (end == p || *p == '-' || *p == '+' || l > 100000 || strcmp(end, d + 2) != 0)
            continue;
        *layer = (int)l;
        return r;
    }
    return NULL;
}

/* The tensor a key row names (ARCH_GGUF_TENSOR), or NULL. */
static const char *key_tensor(const ArchGgufKey *k)
{
    size_t n = strlen(ARCH_GGUF_TENSOR);
    return strncmp(k->gguf, ARCH_GGUF_TENSOR, n) == 0 ? k->gguf + n : NULL;
}

/* 1 when a key row of row reads the tensor name. */
static int tensor_is_key(const ArchGguf *row, const char *name)
{
    for (const ArchGgufKey *k = row->keys; k->gguf; k++)
        if (key_tensor(k) && strcmp(key_tensor(k), name) == 0)
            return 1;
    return 0;
}

/* An F32 vector's numbers as a JSON list into *out (NULL: absent). */
static int tensor_json(const Gguf *g, const char *name, cJSON **out, const char *path,
                       AttnErr *err)
{
    const GgufTensor *t = gguf_tensor(g, name);
    *out = NULL;
    if (!t)
        return 0;
    if (t->type != 0 || t->ndim != 1 || t->ne[0] > 1 << 20)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0, "tensor %s: a vector of F32 "
                            "numbers expected (%d dimensions, type %d)", name, t->ndim, t->type);
    cJSON *a = *out = cJSON_CreateArray();
    for (int64_t i = 0; a && i < t->ne[0]; i++) {
        float f;
        memcpy(&f, t->data + (size_t)i * sizeof f, sizeof f);
        cJSON_AddItemToArray(a, cJSON_CreateNumber(f));
    }
    return a ? 0 : attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
}

/* The config.json a converter would have read: model_type, the rows'
 * keys (a "!" row's value when the file lacks its key), vocab_size from
 * the embedding's rows when no key gives it, and tie_word_embeddings when
 * the file has no output layer. */
static int make_config(const Gguf *g, const ArchGguf *row, const char *path, char **text,
                       AttnErr *err)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    cJSON_AddStringToObject(root, "model_type", row->model_type);
    for (const ArchGgufKey *k = row->keys; k->gguf; k++) {
        if (key_tensor(k)) {
            cJSON *v;
            int rc = tensor_json(g, key_tensor(k), &v, path, err);
            if (rc) {
                cJSON_Delete(root);
                return rc;
            }
            if (v)
                json_put(root, k->json, v);
            continue;
        }
        char key[160];
        int absent = k->gguf[0] == '!';
        snprintf(key, sizeof key, k->gguf + absent, row->arch);
        const GgufKV *kv = gguf_find(g, key);
        if (absent && !kv && absent_put(root, k->json) != 0) {
            cJSON_Delete(root);
            return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
        }
        if (absent || !kv)
            continue;
        cJSON *v = json_of(kv);
        if (!v) {
            cJSON_Delete(root);
            return attn_err_set(err, ATTN_E_PARSE, path, 0, "metadata key %s: a %s is not "
                                "read here", key, gguf_value_type_name(kv->type));
        }
        json_put(root, k->json, v);
    }
    const GgufTensor *emb = gguf_tensor(g, "token_embd.weight");
    if (!cJSON_GetObjectItemCaseSensitive(root, "vocab_size") && emb && emb->ndim == 2)
        cJSON_AddNumberToObject(root, "vocab_size", (double)emb->ne[1]);
    for (const ArchGgufName *r = row->names; r->gguf; r++)
        if (strcmp(r->gguf, "output.weight") == 0 &&
            !cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings"))
            cJSON_AddBoolToObject(root, "tie_word_embeddings", !gguf_tensor(g, "output.weight"));
    *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return *text ? 0 : attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
}

/* A config message names config.json's keys ("num_hidden_layers"): the
 * file's own names instead ("llama.block_count"), the rest of the message
 * as it is; a key the file does not give stays config.json's. */
/* Of the rows giving k's config.json key, the one whose value config.json
 * holds: the last the file has (make_config writes them in order, e.g. a
 * fallback before the key itself), else k. */
static const ArchGgufKey *key_giving(const Gguf *g, const ArchGguf *row, const ArchGgufKey *k)
{
    const ArchGgufKey *got = k;
    char key[160];
    for (const ArchGgufKey *r = k; r->gguf; r++) {
        snprintf(key, sizeof key, r->gguf, row->arch);
        if (strcmp(r->json, k->json) == 0 && gguf_find(g, key))
            got = r;
    }
    return got;
}

static void name_gguf_keys(AttnErr *err, const ArchGguf *row, const Gguf *g)
{
    char out[sizeof err->msg], quoted[96];
    for (const ArchGgufKey *k = row->keys; k->gguf; k++) {
        snprintf(quoted, sizeof quoted, "\"%s\"", k->json);
        char *at = strstr(err->msg, quoted);
        if (!at)
            continue;
        k = key_giving(g, row, k);
        char key[96];
        snprintf(key, sizeof key, k->gguf, row->arch);
        if (at == err->msg + 3 && strncmp(err->msg, "no ", 3) == 0) /* a required key absent */
            snprintf(out, sizeof out, "no %s (a %s file from llama.cpp's converter has it)", key,
                     row->arch);
        else
            snprintf(out, sizeof out, "%.*s%s%s", (int)(at - err->msg), err->msg, key,
                     at + strlen(quoted));
        snprintf(err->msg, sizeof err->msg, "%s", out);
        return;
    }
}

static int key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* The rest of a message about the config the file's metadata made, in the
 * file's words: "config.json" is its "metadata", and each config.json key
 * named bare (a shape's "hidden_size 64, num_attention_heads 4", a
 * division's) the GGUF key that gave it ("llama.embedding_length"). */
static void gguf_words(AttnErr *err, const ArchGguf *row, const Gguf *g)
{
    char out[sizeof err->msg];
    const char *cj = "config.json";
    char *at = strstr(err->msg, cj);
    if (at) {
        snprintf(out, sizeof out, "%.*smetadata%s", (int)(at - err->msg), err->msg, at + strlen(cj));
        snprintf(err->msg, sizeof err->msg, "%s", out);
    }
    for (const ArchGgufKey *k = row->keys; k->gguf; k++) {
        if (k->gguf[0] == '!' || strncmp(k->gguf, ARCH_GGUF_TENSOR, strlen(ARCH_GGUF_TENSOR)) == 0)
            continue;
        size_t n = strlen(k->json);
        for (char *p = strstr(err->msg, k->json); p; p = strstr(p + 1, k->json)) {
            if ((p > err->msg && key_char(p[-1])) || key_char(p[n]))
                continue; /* part of another word */
            char key[96];
            snprintf(key, sizeof key, key_giving(g, row, k)->gguf, row->arch);
            snprintf(out, sizeof out, "%.*s%s%s", (int)(p - err->msg), err->msg, key, p + n);
            snprintf(err->msg, sizeof err->msg, "%s", out);
            p += strlen(key) - 1;
        }
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const SafeTensor *)a)->name, ((const SafeTensor *)b)->name);
}

/* llama.cpp's rotary row order of heads of d rows: Hugging Face's row
 * h·d + p·d/2 + i is the file's h·d + 2i + p. */
static void rope_rows(int32_t *perm, int heads, int d)
{
    for (int h = 0; h < heads; h++)
        for (int p = 0; p < 2; p++)
            for (int i = 0; i < d / 2; i++)
                perm[h * d + p * (d / 2) + i] = h * d + 2 * i + p;
}

void model_gguf_name(const ModelFile *m, const char *table_name, char *buf, size_t n)
{
    const char *prefix = m->arch->prefixes ? m->arch->prefixes[0] : "";
    const char *plain = strncmp(table_name, prefix, strlen(prefix)) == 0
                        ? table_name + strlen(prefix) : table_name;
    snprintf(buf, n, "%s", table_name);
    for (const ArchGgufName *r = m->own->gguf_row->names; r->gguf; r++) {
        if (!r->hf)
            continue; /* another model's prefix */
        const char *d = strstr(r->hf, "%d");
        if (!d) {
            if (strcmp(r->hf, plain) == 0) {
                snprintf(buf, n, "%s", r->gguf);
                return;
            }
            continue;
        }
        size_t pre = (size_t)(d - r->hf);
        char *end;
        if (strncmp(plain, r->hf, pre) != 0)
            continue;
        long l = strtol(plain + pre, &end, 10);
        if (end != plain + pre && strcmp(end, d + 2) == 0) {
            snprintf(buf, n, r->gguf, (int)l);
            return;
        }
    }
}

/* GPT-NeoX's fused rows: Hugging Face's (h·3 + s)·d + i, head h's q, k or v
 * (s) row i, is the file's s·H·d + h·d + i. */
static void qkv_rows(int32_t *perm, int heads, int d)
{
    for (int h = 0; h < heads; h++)
        for (int s = 0; s < 3; s++)
            for (int i = 0; i < d; i++)
                perm[(h * 3 + s) * d + i] = s * heads * d + h * d + i;
}

/* 1 when the table's row hf is named without the file's prefix
 * (GPT-NeoX's embed_out, GPT-2's lm_head). */
static int unprefixed(const ArchDesc *a, const char *hf)
{
    for (int i = 0; i < a->n_tensors; i++)
        if ((a->tensors[i].flags & AT_NO_PREFIX) && strcmp(a->tensors[i].name, hf) == 0)
            return 1;
    return 0;
}

/* Every tensor of the file a row names, under the table's name (with the
 * description's first prefix unless the row is named without it), its
 * shape Hugging Face's [out, in]; another model's (a prefix row's) left
 * out with a note; a tensor no row names is refused (the model would be
 * computed without it). */
/* Where generation ends: the eos id the config took, and the file's
 * end-of-turn and end-of-message ids (llama.cpp's eot and eom: a chat
 * model's turn ends there). A key of another type adds nothing. */
static void gguf_stop_ids(ModelFile *m, const char *config, const char *path)
{
    model_config_stop_ids(config, strlen(config), m->stop_ids, &m->n_stop, MODEL_MAX_STOP);
    static const char *const keys[] = {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                                       "tokenizer.ggml.eom_token_id"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        int64_t id;
        AttnErr quiet = {0};
        char one[32];
        if (gguf_get_int(m->own->gguf, keys[k], &id, path, &quiet) == 0 && id >= 0 && id < 2147483647) {
            snprintf(one, sizeof one, "{\"eos_token_id\": %d}", (int)id);
            model_config_stop_ids(one, strlen(one), m->stop_ids, &m->n_stop, MODEL_MAX_STOP);
        }
    }
}

static int rename_tensors(ModelFile *m, const ArchGguf *row, const char *path, AttnErr *err)
{
    const Gguf *g = m->own->gguf;
    const ArchDesc *a = m->arch;
    const char *prefix = a->prefixes ? a->prefixes[0] : "";
    RtShape sh;
    a->rt->shape(m->cfg, &sh);
    SafeTensors *st = m->own->files.st;
    size_t names = 0, perms = 0;
    for (int i = 0; i < g->n_tensors; i++)
        names += strlen(prefix) + 160;
    for (const ArchGgufName *r = row->names; r->gguf; r++)
        perms += r->change != AG_SAME;
    int32_t *q = m->own->perms = malloc(((size_t)sh.n_layer * perms * 3 + 1) *
                                        (size_t)(sh.n_head > 0 ? sh.n_head : 1) *
                                        (size_t)(sh.d_head > 0 ? sh.d_head : 1) * sizeof *q);
    if (!q || !(st->t = calloc((size_t)g->n_tensors + 1, sizeof *st->t)) ||
        !(st->names = malloc(names + 1)))
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    char *at = st->names, others[200] = "";
    int n_others = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        const GgufTensor *gt = &g->t[i];
        int layer;
        if (tensor_is_key(row, gt->name)) /* read into the config */
            continue;
        const ArchGgufName *r = name_row(row->names, gt->name, &layer);
        if (r && !r->hf) {
            n_others++;
            if (!strstr(others, r->gguf) && strlen(others) + strlen(r->gguf) + 4 < sizeof others)
                snprintf(others + strlen(others), sizeof others - strlen(others), "%s%s*",
                         others[0] ? ", " : "", r->gguf);
            continue;
        }
        if (!r)
            return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0, "tensor %s is not read by "
                                "attnviz's %s (general.architecture %s): computing without it "
                                "would not be the model", gt->name, a->rt->name, row->arch);
        if (gt->ndim > 2)
            return attn_err_set(err, ATTN_E_SHAPE, path, 0, "tensor %s has %d dimensions "
                                "(at most 2)", gt->name, gt->ndim);
        SafeTensor *t = &st->t[st->n++];
        char plain[150];
        snprintf(plain, sizeof plain, r->hf, layer);
        int len = snprintf(at, 160 + strlen(prefix), "%s%s", unprefixed(a, r->hf) ? "" : prefix,
                           plain);
        t->name = at;
        at += len + 1;
        t->file_name = gt->name;
        t->qtype = gt->type;
        t->dtype = gt->type == 0 ? SAFE_F32 : gt->type == 1 ? SAFE_F16
                 : gt->type == 30 ? SAFE_BF16 : SAFE_GGML;
        t->ndim = gt->ndim;
        t->transposed = r->change == AG_TRANSPOSED && gt->ndim == 2;
        for (int k = 0; k < gt->ndim; k++) /* [out, in]; transposed: the table's [in, out] */
            t->shape[k] = gt->ne[t->transposed ? k : gt->ndim - 1 - k];
        t->count = (size_t)gt->ne[0] * (size_t)(gt->ndim == 2 ? gt->ne[1] : 1);
        t->data = gt->data;
        t->nbytes = gt->nbytes;
        if (r->change == AG_ROPE_Q || r->change == AG_ROPE_K || r->change == AG_QKV_HEADS) {
            int heads = r->change == AG_ROPE_K ? sh.n_kv_head : sh.n_head;
            int per = r->change == AG_QKV_HEADS ? 3 : 1;
            if (t->shape[0] != (long long)per * heads * sh.d_head || sh.d_head % 2)
                return attn_err_set(err, ATTN_E_SHAPE, path, 0, "tensor %s has %lld rows, "
                                    "not %d × %d heads of %d", gt->name, t->shape[0], per,
                                    heads, sh.d_head);
            if (per == 3)
                qkv_rows(q, heads, sh.d_head);
            else
                rope_rows(q, heads, sh.d_head);
            t->perm = q;
            q += (size_t)per * heads * sh.d_head;
        }
    }
    if (n_others)
        fprintf(stderr, "attnviz: note: %s: %d tensors of another model in the file (%s) "
                "are not read\n", path, n_others, others);
    qsort(st->t, (size_t)st->n, sizeof *st->t, by_name);
    for (int i = 1; i < st->n; i++)
        if (strcmp(st->t[i - 1].name, st->t[i].name) == 0)
            return attn_err_set(err, ATTN_E_PARSE, path, 0, "tensors %s and %s are both %s",
                                st->t[i - 1].file_name, st->t[i].file_name, st->t[i].name);
    return 0;
}

int model_file_open_gguf(const char *path, const ArchDesc *(*archs)(int i), ModelFile **out,
                         AttnErr *err)
{
    *out = NULL;
    ModelFile *m = calloc(1, sizeof *m);
    void *map = NULL;
    size_t len = 0;
    char *text = NULL;
    int rc = 0;
    if (!m || !(m->own = calloc(1, sizeof *m->own)) || !(m->dir = strdup(path)) ||
        !(m->own->gguf = calloc(1, sizeof *m->own->gguf)) ||
        !(m->own->files.paths = calloc(1, sizeof(char *))) ||
        !(m->own->files.maps = calloc(1, sizeof(void *))) ||
        !(m->own->files.lens = calloc(1, sizeof(size_t))) ||
        !(m->own->files.st = calloc(1, sizeof(SafeTensors)))) {
        rc = attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
        goto cleanup;
    }
    m->gguf = 1;
    m->own->files.n = 1;
    rc = io_map_file(path, ATTN_E_NOT_FOUND, &map, &len, err);
    if (rc == 0) {
        m->own->files.maps[0] = map;
        m->own->files.lens[0] = len;
        m->own->files.paths[0] = strdup(path);
        rc = gguf_parse(m->own->gguf, map, len, path, err);
    }
    GgufStr arch = {0};
    if (rc == 0 && (rc = gguf_get_str(m->own->gguf, "general.architecture", &arch, path, err)) == 1)
        rc = attn_err_set(err, ATTN_E_NOT_FOUND, path, 0, "no general.architecture");
    const ArchGguf *row = NULL;
    if (rc == 0) {
        char name[64], list[400];
        snprintf(name, sizeof name, "%.*s", (int)(arch.len < 60 ? arch.len : 60), arch.s);
        if (!(m->arch = desc_for(name, archs, &row))) {
            known_archs(archs, list, sizeof list);
            rc = attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0, "general.architecture is "
                              "\"%s\": attnviz computes %s", name, list);
        }
    }
    if (rc == 0 && !(m->cfg = calloc(1, m->arch->rt->cfg_size)))
        rc = attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    if (rc == 0 && !(m->weights = calloc(1, m->arch->weights_size)))
        rc = attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    if (rc == 0)
        rc = make_config(m->own->gguf, row, path, &text, err);
    if (rc == 0 && (rc = model_config_parse(m->arch, m->cfg, text, strlen(text), path, err)) < 0) {
        name_gguf_keys(err, row, m->own->gguf);
        gguf_words(err, row, m->own->gguf);
    }
    if (rc == 0)
        gguf_stop_ids(m, text, path);
    if (rc == 0 && row->fix)
        row->fix(m->cfg);
    m->own->gguf_row = row;
    if (rc == 0) {
        snprintf(m->model_type, sizeof m->model_type, "%s", row->model_type);
        rc = rename_tensors(m, row, path, err);
    }
    if (rc == 0 && (rc = model_file_bind(m, path, err)) < 0)
        gguf_words(err, row, m->own->gguf);
    if (rc == 0) {
        *out = m;
        m = NULL;
    }
cleanup:
    free(text);
    model_file_close(m);
    return rc;
}

