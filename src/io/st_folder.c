/* A model folder's safetensors files (st_folder.h): model.safetensors or
 * the index's shards, mapped read-only and parsed, a tensor looked up in
 * them; the path helpers the model readers share. Not the weights' meaning
 * (model_file.c). */
#include "st_folder.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnviz/io.h"

#define CONFIG_MAX (1L << 20) /* config.json */
#define INDEX_MAX (64L << 20) /* model.safetensors.index.json */
#define MAX_SHARDS 4096

char *io_path_join(const char *dir, const char *name)
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

int io_has_file(const char *dir, const char *name)
{
    char *p = io_path_join(dir, name);
    struct stat st;
    int yes = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return yes;
}

void hf_hub_name(const char *dir, char *buf, size_t n)
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
static int add_shard(StFolder *own, char *path, AttnErr *err)
{
    int k = own->n;
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
    own->n++;
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
static int open_index(StFolder *f, const char *dir, const char *index, AttnErr *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = io_read_file(index, INDEX_MAX, &text, &len, err);
    if (rc < 0)
        return rc;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!root)
        return attn_err_set(err, ATTN_E_PARSE, index, 0,
                            "not JSON: a safetensors index is a JSON object with a "
                            "\"weight_map\" of tensor names to shard files");
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
        for (int i = 0; i < f->n && !seen; i++) {
            const char *slash = strrchr(f->paths[i], '/');
            seen = strcmp(slash ? slash + 1 : f->paths[i], e->valuestring) == 0;
        }
        if (seen)
            continue;
        if (f->n == MAX_SHARDS) {
            rc = attn_err_set(err, ATTN_E_TOO_LARGE, index, 0, "more than %d shards",
                              MAX_SHARDS);
            break;
        }
        rc = add_shard(f, io_path_join(dir, e->valuestring), err);
        if (rc < 0)
            break;
    }
    cJSON_Delete(root);
    return rc;
}

/* model.safetensors, or the index and its shards; *where (malloc'd) names
 * the weights in messages. */
int st_folder_open(StFolder *f, const char *dir, char **where, AttnErr *err)
{
    *where = io_path_join(dir, "model.safetensors");
    if (!*where)
        return attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
    if (io_has_file(dir, "model.safetensors"))
        return add_shard(f, io_path_join(dir, "model.safetensors"), err);
    if (io_has_file(dir, "model.safetensors.index.json")) {
        free(*where);
        *where = io_path_join(dir, "model.safetensors.index.json");
        return *where ? open_index(f, dir, *where, err)
                      : attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
    }
    static const char *const others[] = {"pytorch_model.bin", "pytorch_model.bin.index.json",
                                         "tf_model.h5", "flax_model.msgpack", "model.ckpt"};
    char hub[128];
    hf_hub_name(dir, hub, sizeof hub);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (io_has_file(dir, others[i]))
            return attn_err_set(err, ATTN_E_UNSUPPORTED, dir, 0,
                                "has %s but no model.safetensors; attnviz never unpickles or "
                                "converts weights: get model.safetensors (huggingface-cli "
                                "download %s model.safetensors, or in Python "
                                "model.save_pretrained(folder, safe_serialization=True))",
                                others[i], hub);
    return attn_err_set(err, ATTN_E_NOT_FOUND, dir, 0,
                        "no model.safetensors in the folder (huggingface-cli download %s "
                        "model.safetensors)", hub);
}

const SafeTensor *st_folder_find(const StFolder *f, const char *name, const char **file)
{
    for (int i = 0; i < f->n; i++) {
        const SafeTensor *t = safetensors_find(&f->st[i], name);
        if (t) {
            if (file)
                *file = f->paths[i];
            return t;
        }
    }
    return NULL;
}

void st_folder_close(StFolder *f)
{
    for (int i = 0; i < f->n; i++) {
        safetensors_free(&f->st[i]);
        if (f->maps[i])
            io_unmap_file(f->maps[i], f->lens[i]);
        free(f->paths[i]);
    }
    free(f->paths);
    free(f->maps);
    free(f->lens);
    free(f->st);
    memset(f, 0, sizeof *f);
}

int io_model_folder(const char *dir, const char *files, AttnErr *err)
{
    struct stat st;
    if (!dir || !*dir)
        return attn_err_set(err, ATTN_E_NOT_FOUND, "", 0, "no model folder given");
    if (stat(dir, &st) != 0)
        return attn_err_set(err, errno == ENOENT ? ATTN_E_NOT_FOUND : ATTN_E_IO, dir, 0,
                            "%s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return attn_err_set(err, ATTN_E_IO, dir, 0, "is not a folder (a model is a folder: %s)",
                            files);
    return 0;
}

int hf_config_read(const char *dir, const char *files, char **text, size_t *len, char **path,
                   AttnErr *err)
{
    char hub[128];
    *text = NULL;
    *len = 0;
    if (!(*path = io_path_join(dir, "config.json")))
        return attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
    hf_hub_name(dir, hub, sizeof hub);
    if (!io_has_file(dir, "config.json"))
        return attn_err_set(err, ATTN_E_NOT_FOUND, dir, 0,
                            "no config.json: not a Hugging Face model folder (%s; "
                            "huggingface-cli download %s)", files, hub);
    return io_read_file(*path, CONFIG_MAX, text, len, err);
}

void safetensors_shape_text(char *buf, size_t n, int ndim, const long long *dim)
{
    size_t at = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? ", " : "", dim[i]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}

int safetensors_f32_in_place(const SafeTensor *t)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return t->dtype == SAFE_F32 && (uintptr_t)t->data % sizeof(float) == 0 && b == 1;
}
