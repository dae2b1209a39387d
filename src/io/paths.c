/* Finding the data files: environment, next to the binary, install prefix. */
#include "attnviz/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ATTN_DATADIR
#define ATTN_DATADIR "/usr/local/share/attnviz"
#endif

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

int paths_find_data(const char *kind, char *out, size_t n)
{
    const char *env = getenv("ATTNVIZ_DATADIR");
    /* the embedding table and the models are under assets/ in a source tree */
    int is_emb = strcmp(kind, "embeddings.txt") == 0 || strncmp(kind, "models/", 7) == 0;
    if (env && *env) {
        snprintf(out, n, "%s/%s", env, kind);
        if (exists(out))
            return 0;
    }
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            /* build/attnviz in a source tree: ../assets, ../sentences */
            snprintf(out, n, "%s/../%s%s", exe, is_emb ? "assets/" : "", kind);
            if (exists(out))
                return 0;
            /* PREFIX/bin/attnviz: ../share/attnviz */
            snprintf(out, n, "%s/../share/attnviz/%s", exe, kind);
            if (exists(out))
                return 0;
        }
    }
    snprintf(out, n, "%s/%s", ATTN_DATADIR, kind);
    return exists(out) ? 0 : -1;
}
