/* A GPT-2 model folder opened and closed: config.json parsed,
 * model.safetensors (or the shards model.safetensors.index.json names) mapped
 * read-only, the weights bound (gpt2_weights.c), the tokenizer's files noted.
 * A pytorch_model.bin is never read (unpickling runs code). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnviz/io.h"
#include "gpt2_own.h"

#define CONFIG_MAX (1L << 20) /* config.json */
#define INDEX_MAX (64L << 20) /* model.safetensors.index.json */
#define MAX_SHARDS 4096

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
        if (a && dir[a - 1] == '/')
            memmove(p + a, p + a + 1, b + 1);
    }
    return p;
}

/* 1 when dir/name is a regular file (symlinks followed, as the cache's). */
static int has_file(const char *dir, const char *name)
{
    char *p = join(dir, name);
    struct stat st;
    int yes = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return yes;
}

/* "ORG/NAME" when dir lies in a hub cache's models--ORG--NAME, else a
 * placeholder: for the download command in messages. */
static void hub_name(const char *dir, char *buf, size_t n)
{
    const char *p = strstr(dir, "models--");
    snprintf(buf, n, "ORG/NAME");
    if (!p)
        return;
    p += 8;
    size_t k = 0;
    for (; *p && *p != '/' && k + 1 < n; p++) {
        if (p[0] == '-' && p[1] == '-') {
            buf[k++] = '/';
            p++;
        } else {
            buf[k++] = *p;
        }
    }
    buf[k] = '\0';
}


/* The safetensors file path (taken over) mapped and parsed as one more
 * shard of own. */
static int add_shard(Gpt2ModelOwn *own, char *path, AttnErr *err)
{
    int k = own->n_shards;
    char **paths = realloc(own->paths, (size_t)(k + 1) * sizeof *paths);
    if (paths)
        own->paths = paths;
    void **maps = paths ? realloc(own->maps, (size_t)(k + 1) * sizeof *maps) : NULL;
    if (maps)
        own->maps = maps;
    size_t *lens = maps ? realloc(own->lens, (size_t)(k + 1) * sizeof *lens) : NULL;
    if (lens)
        own->lens = lens;
    SafeTensors *st = lens ? realloc(own->st, (size_t)(k + 1) * sizeof *st) : NULL;
    if (st)
        own->st = st;
    if (!path || !st) {
        free(path);
        return attn_err_set(err, ATTN_E_NOMEM, "", 0, "out of memory");
    }
    own->paths[k] = path;
    own->maps[k] = NULL;
    own->lens[k] = 0;
    memset(&own->st[k], 0, sizeof own->st[k]);
    own->n_shards++;
    int rc = io_map_file(path, ATTN_E_NOT_FOUND, &own->maps[k], &own->lens[k], err);
    if (rc == 0)
        rc = safetensors_parse(&own->st[k], own->maps[k], own->lens[k], path, err);
    for (int i = 0; i < own->st[k].n && rc == 0 && k > 0; i++) {
        const char *name = own->st[k].t[i].name;
        for (int j = 0; j < k && rc == 0; j++)
            if (safetensors_find(&own->st[j], name))
                rc = attn_err_set(err, ATTN_E_DUPLICATE, path, 0,
                                  "tensor %.200s is in %.200s too", name, own->paths[j]);
    }
    return rc;
}

/* A shard's file name from the index: a plain name in the folder. */
static int shard_name_ok(const char *s)
{
    return s && s[0] && s[0] != '.' && !strchr(s, '/') && !strchr(s, '\\');
}

/* Every shard the index's weight_map names, each once. */
static int open_index(Gpt2Model *m, const char *index, AttnErr *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = io_read_file(index, INDEX_MAX, &text, &len, err);
    if (rc < 0)
        return rc;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map"), *e;
    if (!cJSON_IsObject(map) || !map->child) {
        cJSON_Delete(root);
        return attn_err_set(err, ATTN_E_PARSE, index, 0,
                            "not a safetensors index: no \"weight_map\" object of tensor names");
    }
    cJSON_ArrayForEach(e, map) {
        if (!cJSON_IsString(e) || !shard_name_ok(e->valuestring)) {
            rc = attn_err_set(err, ATTN_E_PARSE, index, 0,
                              "weight_map[\"%.200s\"] is not a file name in the folder",
                              e->string);
            break;
        }
        int seen = 0;
        for (int i = 0; i < m->own->n_shards && !seen; i++) {
            const char *slash = strrchr(m->own->paths[i], '/');
            seen = strcmp(slash ? slash + 1 : m->own->paths[i], e->valuestring) == 0;
        }
        if (seen)
            continue;
        if (m->own->n_shards == MAX_SHARDS) {
            rc = attn_err_set(err, ATTN_E_TOO_LARGE, index, 0, "more than %d shards",
                              MAX_SHARDS);
            break;
        }
        rc = add_shard(m->own, join(m->dir, e->valuestring), err);
        if (rc < 0)
            break;
    }
    cJSON_Delete(root);
    return rc;
}

/* model.safetensors, or the index and its shards; *where (malloc'd) names
 * the weights in messages. */
static int open_weights(Gpt2Model *m, char **where, AttnErr *err)
{
    *where = join(m->dir, "model.safetensors");
    if (!*where)
        return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    if (has_file(m->dir, "model.safetensors"))
        return add_shard(m->own, join(m->dir, "model.safetensors"), err);
    if (has_file(m->dir, "model.safetensors.index.json")) {
        free(*where);
        *where = join(m->dir, "model.safetensors.index.json");
        return *where ? open_index(m, *where, err)
                      : attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    }
    static const char *const others[] = {"pytorch_model.bin", "pytorch_model.bin.index.json",
                                         "tf_model.h5", "flax_model.msgpack", "model.ckpt"};
    char hub[128];
    hub_name(m->dir, hub, sizeof hub);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (has_file(m->dir, others[i]))
            return attn_err_set(err, ATTN_E_UNSUPPORTED, m->dir, 0,
                                "has %s but no model.safetensors; attnviz never unpickles or "
                                "converts weights: get model.safetensors (huggingface-cli "
                                "download %s model.safetensors, or in Python "
                                "model.save_pretrained(folder, safe_serialization=True))",
                                others[i], hub);
    return attn_err_set(err, ATTN_E_NOT_FOUND, m->dir, 0,
                        "no model.safetensors in the folder (huggingface-cli download %s "
                        "model.safetensors)", hub);
}

/* vocab.json + merges.txt (both, or neither) and tokenizer.json. */
static int note_tokenizer(Gpt2Model *m, AttnErr *err)
{
    if (has_file(m->dir, "vocab.json") && has_file(m->dir, "merges.txt")) {
        m->vocab_path = join(m->dir, "vocab.json");
        m->merges_path = join(m->dir, "merges.txt");
        if (!m->vocab_path || !m->merges_path)
            return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    }
    if (has_file(m->dir, "tokenizer.json") &&
        !(m->tokenizer_path = join(m->dir, "tokenizer.json")))
        return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    return 0;
}

static int read_config(Gpt2Model *m, AttnErr *err)
{
    char *path = join(m->dir, "config.json"), *text = NULL, hub[128];
    size_t len = 0;
    if (!path)
        return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    int rc = 0;
    hub_name(m->dir, hub, sizeof hub);
    if (!has_file(m->dir, "config.json"))
        rc = attn_err_set(err, ATTN_E_NOT_FOUND, m->dir, 0,
                          "no config.json: not a Hugging Face model folder (config.json, "
                          "model.safetensors, vocab.json + merges.txt; huggingface-cli "
                          "download %s)", hub);
    if (rc == 0)
        rc = io_read_file(path, CONFIG_MAX, &text, &len, err);
    if (rc == 0)
        rc = gpt2_config_parse(&m->cfg, text, len, path, err);
    free(text);
    free(path);
    return rc;
}

int gpt2_file_open(const char *dir, Gpt2Model **out, AttnErr *err)
{
    struct stat st;
    *out = NULL;
    if (!dir || !*dir)
        return attn_err_set(err, ATTN_E_NOT_FOUND, "", 0, "no model folder given");
    if (stat(dir, &st) != 0)
        return attn_err_set(err, errno == ENOENT ? ATTN_E_NOT_FOUND : ATTN_E_IO, dir, 0,
                            "%s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return attn_err_set(err, ATTN_E_IO, dir, 0,
                            "is not a folder (a model is a folder: config.json, "
                            "model.safetensors, vocab.json, merges.txt)");
    Gpt2Model *m = calloc(1, sizeof *m);
    char *where = NULL;
    int rc = 0;
    if (!m || !(m->own = calloc(1, sizeof *m->own)) || !(m->dir = strdup(dir))) {
        rc = attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
        goto cleanup;
    }
    rc = read_config(m, err);
    if (rc == 0)
        rc = open_weights(m, &where, err);
    if (rc == 0)
        rc = gpt2_weights_bind(m, where, err);
    if (rc == 0)
        rc = note_tokenizer(m, err);
    if (rc == 0) {
        m->n_shards = m->own->n_shards;
        *out = m;
        m = NULL;
    }
cleanup:
    free(where);
    gpt2_file_close(m);
    return rc;
}

void gpt2_file_close(Gpt2Model *m)
{
    if (!m)
        return;
    Gpt2ModelOwn *own = m->own;
    for (int i = 0; own && i < own->n_shards; i++) {
        safetensors_free(&own->st[i]);
        if (own->maps[i])
            munmap(own->maps[i], own->lens[i]);
        free(own->paths[i]);
    }
    if (own) {
        free(own->paths);
        free(own->maps);
        free(own->lens);
        free(own->st);
        free(own->conv);
        free(own->layers);
        free(own);
    }
    free(m->dir);
    free(m->vocab_path);
    free(m->merges_path);
    free(m->tokenizer_path);
    free(m);
}
