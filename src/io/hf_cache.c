/* A model found by name: an existing folder, else the local Hugging Face hub
 * cache (models--ORG--NAME/snapshots/<the commit refs/main names>, whose
 * files are symlinks into ../../blobs/). Reads folders, opens no model. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "attnviz/model_file.h"
#include "attnviz/io.h"

#define REF_MAX 128

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* value (a leading "~/" made $HOME/) followed by tail, into buf; 0 or -1. */
static int path_from(char *buf, size_t n, const char *value, const char *tail)
{
    const char *home = getenv("HOME");
    int w;
    if (value[0] == '~' && (value[1] == '/' || !value[1]) && home && *home)
        w = snprintf(buf, n, "%s%s%s", home, value + 1, tail);
    else
        w = snprintf(buf, n, "%s%s", value, tail);
    return w >= 0 && (size_t)w < n ? 0 : -1;
}

int hf_cache_dir(char *buf, size_t n, AttnErr *err)
{
    static const struct {
        const char *var, *tail;
    } order[] = {
        {"HF_HUB_CACHE", ""},
        {"HF_HOME", "/hub"},
        {"XDG_CACHE_HOME", "/huggingface/hub"},
        {"HOME", "/.cache/huggingface/hub"},
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *v = getenv(order[i].var);
        if (!v || !*v)
            continue;
        if (path_from(buf, n, v, order[i].tail) < 0)
            return attn_err_set(err, ATTN_E_TOO_LARGE, "", 0, "$%s is too long a path",
                                order[i].var);
        return 0;
    }
    return attn_err_set(err, ATTN_E_NOT_FOUND, "", 0,
                        "no Hugging Face cache: none of HF_HUB_CACHE, HF_HOME and HOME is set");
}

/* A hub model id: NAME or ORG/NAME of letters, digits, '-', '_', '.'. */
static int hub_id_ok(const char *name)
{
    int slashes = 0;
    size_t n = strlen(name);
    if (!n || n > 200 || name[0] == '.' || name[0] == '/' || name[n - 1] == '/' ||
        strstr(name, "..") || strstr(name, "--"))
        return 0;
    for (const char *p = name; *p; p++) {
        if (*p == '/')
            slashes++;
        else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                   (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
            return 0;
    }
    return slashes <= 1 && !strstr(name, "/.");
}

/* The commit refs/main names (trimmed), or "" when there is none. */
static void read_ref(const char *repo, char *ref, size_t n)
{
    char path[4096];
    ref[0] = '\0';
    if (snprintf(path, sizeof path, "%s/refs/main", repo) >= (int)sizeof path)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t got = fread(ref, 1, n - 1, f);
    fclose(f);
    ref[got] = '\0';
    ref[strcspn(ref, " \t\r\n")] = '\0';
    if (!ref[0] || ref[0] == '.' || strchr(ref, '/'))
        ref[0] = '\0';
}

/* repo's snapshot into *dir: refs/main's, else the only one. 0 when found,
 * 1 when the repo has none, or an error (several and no refs/main). */
static int snapshot(const char *repo, char **dir, AttnErr *err, const char *name)
{
    char ref[REF_MAX], path[4096], only[4096];
    read_ref(repo, ref, sizeof ref);
    if (ref[0] && snprintf(path, sizeof path, "%s/snapshots/%s", repo, ref) < (int)sizeof path &&
        is_dir(path)) {
        *dir = strdup(path);
        return *dir ? 0 : attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    }
    if (snprintf(path, sizeof path, "%s/snapshots", repo) >= (int)sizeof path)
        return 1;
    DIR *d = opendir(path);
    if (!d)
        return 1;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096];
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub ||
            !is_dir(sub))
            continue;
        if (count++ == 0)
            snprintf(only, sizeof only, "%s", sub);
    }
    closedir(d);
    if (count == 0)
        return 1;
    if (count > 1)
        return attn_err_set(err, ATTN_E_NOT_FOUND, name, 0,
                            "%.300s/snapshots holds %d snapshots and refs/main names none of "
                            "them: give the folder of the one to open", repo, count);
    *dir = strdup(only);
    return *dir ? 0 : attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
}

/* The cache's folder names for name: models--ORG--NAME, or for a bare
 * NAME models--NAME, models--openai-community--NAME, models--distilbert--NAME. */
static int candidates(const char *name, char out[3][256])
{
    const char *slash = strchr(name, '/');
    if (slash) {
        snprintf(out[0], 256, "models--%.*s--%s", (int)(slash - name), name, slash + 1);
        return 1;
    }
    snprintf(out[0], 256, "models--%s", name);
    snprintf(out[1], 256, "models--openai-community--%s", name);
    snprintf(out[2], 256, "models--distilbert--%s", name);
    return 3;
}

int hf_model_find(const char *name, char **dir, AttnErr *err)
{
    *dir = NULL;
    if (!name || !*name)
        return attn_err_set(err, ATTN_E_NOT_FOUND, "", 0, "no model named");
    if (is_dir(name)) {
        *dir = strdup(name);
        return *dir ? 0 : attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    }
    if (!hub_id_ok(name))
        return attn_err_set(err, ATTN_E_NOT_FOUND, name, 0,
                            "no such folder, nor a model name like gpt2 or "
                            "openai-community/gpt2 to find in the Hugging Face cache");
    char cache[2048], names[3][256], repo[4096];
    int rc = hf_cache_dir(cache, sizeof cache, err);
    if (rc < 0)
        return rc;
    int n = candidates(name, names);
    for (int i = 0; i < n; i++) {
        if (snprintf(repo, sizeof repo, "%s/%s", cache, names[i]) >= (int)sizeof repo ||
            !is_dir(repo))
            continue;
        rc = snapshot(repo, dir, err, name);
        if (rc <= 0)
            return rc;
    }
    char looked[800];
    int at = 0;
    for (int i = 0; i < n; i++)
        at += snprintf(looked + at, sizeof looked - (size_t)at, "%s%s", i ? ", " : "", names[i]);
    const char *org = strchr(name, '/') ? ""
                      : strncmp(name, "distil", 6) == 0 ? "distilbert/" : "openai-community/";
    return attn_err_set(err, ATTN_E_NOT_FOUND, name, 0,
                        "no such folder, and not in the Hugging Face cache %.200s (looked for "
                        "%.300s); download it with: huggingface-cli download %s%s",
                        cache, looked, org, name);
}

/* ---- which architecture a folder holds ------------------------------------------------ */

#define CONFIG_MAX (4L << 20)

int hf_config_model_type(const char *dir, char *buf, size_t n, AttnErr *err)
{
    char path[4200];
    char *text = NULL;
    size_t len = 0;
    buf[0] = '\0';
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = io_read_file(path, CONFIG_MAX, &text, &len, err);
    if (rc < 0)
        return rc;
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *mt = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "model_type") : NULL;
    if (!root)
        rc = attn_err_set(err, ATTN_E_PARSE, path, 0, "not valid JSON");
    else if (!mt)
        rc = attn_err_set(err, ATTN_E_PARSE, path, 0, "no \"model_type\" (a GPT-2's is \"gpt2\")");
    else if (!cJSON_IsString(mt) || !mt->valuestring)
        rc = attn_err_set(err, ATTN_E_PARSE, path, 0, "\"model_type\" must be a string");
    else
        snprintf(buf, n, "%s", mt->valuestring);
    cJSON_Delete(root);
    free(text);
    return rc;
}
