/* GGUF models found by name in Ollama's store (a manifest naming a blob)
 * and in LM Studio's folders (model_stores.h). Reads folders and manifests,
 * opens no model; not the Hugging Face cache (hf_cache.c). */
#include "attnviz/model_stores.h"

#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "attnviz/io.h"

#define PATH_MAX_ 4096
#define MANIFEST_MAX (1L << 20)
#define NAME_PART_MAX 200
#define OLLAMA_SYSTEM_DIR "/usr/share/ollama/.ollama/models"
#define LMSTUDIO_FILES_NAMED 8 /* a refusal lists at most this many files */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path, long long *size)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    if (size)
        *size = (long long)st.st_size;
    return 1;
}

/* "; "-separated places appended to looked (cut, never overrun). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void note(char *looked, size_t n, const char *fmt, ...)
{
    if (!looked || !n)
        return;
    size_t at = strnlen(looked, n);
    if (at + 1 >= n)
        return;
    if (at) {
        snprintf(looked + at, n - at, "; ");
        at = strnlen(looked, n);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(looked + at, n - at, fmt, ap);
    va_end(ap);
}

/* A part of a model name: letters, digits, '-', '_', '.', not starting
 * with '.', at most NAME_PART_MAX bytes (no way out of the store). */
static int part_ok(const char *s, size_t len)
{
    if (!len || len > NAME_PART_MAX || s[0] == '.')
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.'))
            return 0;
    return 1;
}

/* name split at '/' into at most 3 checked parts; the count, or 0. */
static int split_parts(const char *name, size_t len, char parts[3][NAME_PART_MAX + 1])
{
    int n = 0;
    const char *p = name, *end = name + len;
    while (p <= end) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *stop = slash ? slash : end;
        if (n == 3 || !part_ok(p, (size_t)(stop - p)))
            return 0;
        memcpy(parts[n], p, (size_t)(stop - p));
        parts[n++][stop - p] = '\0';
        if (!slash)
            break;
        p = slash + 1;
    }
    return n;
}

/* ---- Ollama -------------------------------------------------------------------------- */

/* The layer of the model's weights in a manifest: its digest's hex and its
 * size (-1 when the manifest gives none). */
static int manifest_model_layer(const char *manifest, const char *text, size_t len, char hex[65],
                                long long *size, AttnErr *err)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    int rc = 0;
    if (!cJSON_IsObject(root)) {
        rc = attn_err_set(err, ATTN_E_PARSE, manifest, 0, "not an Ollama manifest: %s",
                          root ? "not a JSON object" : "not valid JSON");
        goto cleanup;
    }
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsArray(layers)) {
        rc = attn_err_set(err, ATTN_E_PARSE, manifest, 0, "no \"layers\" list");
        goto cleanup;
    }
    int i = 0;
    const cJSON *layer;
    cJSON_ArrayForEach(layer, layers) {
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(layer, "mediaType");
        if (!cJSON_IsString(mt) || strcmp(mt->valuestring, OLLAMA_MODEL_MEDIA_TYPE) != 0) {
            i++;
            continue;
        }
        const cJSON *dg = cJSON_GetObjectItemCaseSensitive(layer, "digest");
        const char *d = cJSON_IsString(dg) ? dg->valuestring : NULL;
        int ok = d && strncmp(d, "sha256:", 7) == 0 && strlen(d + 7) == 64;
        for (int k = 0; ok && k < 64; k++)
            ok = isxdigit((unsigned char)d[7 + k]) != 0;
        if (!ok) {
            rc = attn_err_set(err, ATTN_E_PARSE, manifest, 0, "layers[%d] (%s): \"digest\" %s%.80s%s "
                              "is not \"sha256:\" and 64 hex digits", i, OLLAMA_MODEL_MEDIA_TYPE,
                              d ? "\"" : "", d ? d : "is missing or not a string", d ? "\"" : "");
            goto cleanup;
        }
        memcpy(hex, d + 7, 64);
        hex[64] = '\0';
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(layer, "size");
        *size = cJSON_IsNumber(sz) && sz->valuedouble >= 0 ? (long long)sz->valuedouble : -1;
        goto cleanup;
    }
    rc = attn_err_set(err, ATTN_E_PARSE, manifest, 0, "no layer of mediaType %s (the model's "
                      "weights) among its %d layers", OLLAMA_MODEL_MEDIA_TYPE, i);
cleanup:
    cJSON_Delete(root);
    return rc;
}

/* The blob a manifest names, in the store root: 0 with *path, or an error
 * naming the manifest (the store is broken). */
static int ollama_blob(const char *root, const char *manifest, const char *name, char **path,
                       AttnErr *err)
{
    char *text = NULL, hex[65], blob[PATH_MAX_];
    size_t len = 0;
    long long want = -1, have = 0;
    int rc = io_read_file(manifest, MANIFEST_MAX, &text, &len, err);
    if (rc == 0)
        rc = manifest_model_layer(manifest, text, len, hex, &want, err);
    free(text);
    if (rc < 0)
        return rc;
    if (snprintf(blob, sizeof blob, "%s/blobs/sha256-%s", root, hex) >= (int)sizeof blob)
        return attn_err_set(err, ATTN_E_TOO_LARGE, manifest, 0, "the blob's path is too long");
    if (!is_file(blob, &have))
        return attn_err_set(err, ATTN_E_NOT_FOUND, manifest, 0, "the model layer's digest "
                            "sha256:%.12s... names the blob %.300s, which is missing (ollama pull "
                            "%.200s fetches it again)", hex, blob, name);
    if (want >= 0 && have != want)
        return attn_err_set(err, ATTN_E_IO, manifest, 0, "the blob %.300s is %lld bytes, the "
                            "model layer's \"size\" says %lld (an interrupted pull? ollama pull "
                            "%.200s)", blob, have, want, name);
    *path = strdup(blob);
    return *path ? 0 : attn_err_set(err, ATTN_E_NOMEM, manifest, 0, "out of memory");
}

int ollama_find(const char *name, char **path, char *looked, size_t looked_n, AttnErr *err)
{
    *path = NULL;
    /* the tag: after the last ':' (past the last '/') */
    const char *slash = strrchr(name, '/');
    const char *colon = strrchr(slash ? slash : name, ':');
    size_t base_len = colon ? (size_t)(colon - name) : strlen(name);
    const char *tag = colon ? colon + 1 : "latest";
    char parts[3][NAME_PART_MAX + 1];
    int n = split_parts(name, base_len, parts);
    if (!n || !part_ok(tag, strlen(tag))) {
        note(looked, looked_n, "not an Ollama model name (NAME[:TAG] or ORG/NAME[:TAG])");
        return 1;
    }
    char rel[PATH_MAX_];
    snprintf(rel, sizeof rel, "manifests/%s/%s/%s/%s", n == 3 ? parts[0] : "registry.ollama.ai",
             n == 1 ? "library" : parts[n - 2], parts[n - 1], tag);

    const char *env = getenv("OLLAMA_MODELS"), *home = getenv("HOME");
    char roots[2][PATH_MAX_];
    int nr = 0;
    if (env && *env) {
        snprintf(roots[nr++], PATH_MAX_, "%s", env);
    } else {
        if (home && *home)
            snprintf(roots[nr++], PATH_MAX_, "%s/.ollama/models", home);
        snprintf(roots[nr++], PATH_MAX_, "%s", OLLAMA_SYSTEM_DIR);
    }
    for (int r = 0; r < nr; r++) {
        char manifest[PATH_MAX_ + 300];
        if (snprintf(manifest, sizeof manifest, "%s/%s", roots[r], rel) >= (int)sizeof manifest)
            continue;
        if (is_file(manifest, NULL))
            return ollama_blob(roots[r], manifest, name, path, err);
        note(looked, looked_n, "Ollama's %s", manifest);
    }
    return 1;
}

/* ---- LM Studio ------------------------------------------------------------------------- */

static int has_gguf_ext(const char *s)
{
    size_t n = strlen(s);
    return n > 5 && strcasecmp(s + n - 5, ".gguf") == 0;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .gguf files of dir (not mmproj*), sorted, into *names (count). */
static int gguf_files(const char *dir, char ***names, AttnErr *err)
{
    *names = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0, cap = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char full[PATH_MAX_];
        if (e->d_name[0] == '.' || !has_gguf_ext(e->d_name) ||
            strncasecmp(e->d_name, "mmproj", 6) == 0 ||
            snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= (int)sizeof full ||
            !is_file(full, NULL))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            char **nn = realloc(*names, (size_t)cap * sizeof *nn);
            if (!nn) {
                rc = attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
                break;
            }
            *names = nn;
        }
        if (!((*names)[n] = strdup(e->d_name))) {
            rc = attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (rc < 0) {
        for (int i = 0; i < n; i++)
            free((*names)[i]);
        free(*names);
        *names = NULL;
        return rc;
    }
    if (n > 1)
        qsort(*names, (size_t)n, sizeof **names, by_str);
    return n;
}

/* The one .gguf of dir into *path; several: an error naming them. */
static int one_gguf(const char *dir, const char *name, char **path, AttnErr *err)
{
    char **files;
    int n = gguf_files(dir, &files, err);
    if (n < 0)
        return n;
    int rc = 1;
    if (n == 1) {
        char full[PATH_MAX_];
        if (snprintf(full, sizeof full, "%s/%s", dir, files[0]) >= (int)sizeof full)
            rc = attn_err_set(err, ATTN_E_TOO_LARGE, dir, 0, "the path of %.200s is too long",
                              files[0]);
        else if (!(*path = strdup(full)))
            rc = attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
        else
            rc = 0;
    } else if (n > 1) {
        char list[1024] = "";
        for (int i = 0; i < n && i < LMSTUDIO_FILES_NAMED; i++)
            note(list, sizeof list, "%s", files[i]);
        rc = attn_err_set(err, ATTN_E_DUPLICATE, dir, 0, "holds %d .gguf files (%.600s%s): name "
                          "one, e.g. --model %.200s/%.200s", n, list,
                          n > LMSTUDIO_FILES_NAMED ? "; ..." : "", name, files[0]);
    }
    for (int i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}

int lmstudio_find(const char *name, char **path, char *looked, size_t looked_n, AttnErr *err)
{
    *path = NULL;
    char parts[3][NAME_PART_MAX + 1];
    int n = strchr(name, ':') ? 0 : split_parts(name, strlen(name), parts);
    if (n < 2 || (n == 3 && !has_gguf_ext(parts[2]))) {
        note(looked, looked_n, "not an LM Studio model name (PUBLISHER/REPO or "
             "PUBLISHER/REPO/FILE.gguf)");
        return 1;
    }
    const char *home = getenv("HOME");
    if (!home || !*home) {
        note(looked, looked_n, "no LM Studio folders ($HOME is not set)");
        return 1;
    }
    static const char *const roots[] = {".lmstudio/models", ".cache/lm-studio/models"};
    for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++) {
        char dir[PATH_MAX_];
        if (snprintf(dir, sizeof dir, "%s/%s/%s/%s", home, roots[r], parts[0], parts[1]) >=
            (int)sizeof dir)
            continue;
        if (n == 3) {
            char full[PATH_MAX_ + NAME_PART_MAX + 2];
            snprintf(full, sizeof full, "%s/%s", dir, parts[2]);
            if (is_file(full, NULL)) {
                *path = strdup(full);
                return *path ? 0 : attn_err_set(err, ATTN_E_NOMEM, full, 0, "out of memory");
            }
            note(looked, looked_n, "LM Studio's %s", full);
            continue;
        }
        if (is_dir(dir)) {
            int rc = one_gguf(dir, name, path, err);
            if (rc <= 0)
                return rc;
            note(looked, looked_n, "LM Studio's %s (no .gguf file in it)", dir);
            continue;
        }
        note(looked, looked_n, "LM Studio's %s", dir);
    }
    return 1;
}

int model_store_find(const char *name, char **path, char *looked, size_t looked_n, AttnErr *err)
{
    *path = NULL;
    if (looked && looked_n)
        looked[0] = '\0';
    if (!name || !*name)
        return attn_err_set(err, ATTN_E_NOT_FOUND, "", 0, "no model named");
    int rc = ollama_find(name, path, looked, looked_n, err);
    if (rc <= 0)
        return rc;
    return lmstudio_find(name, path, looked, looked_n, err);
}
