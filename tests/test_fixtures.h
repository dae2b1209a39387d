/* What the tests of the model fixtures share (test_families.c, test_lens.c,
 * test_ablate.c): every fixture folder holding a file, found by folder (the
 * GPT-2s, the Llama family and each family of tests/fixtures/families: a
 * family added is found with no line here), its reference ids and its .npy
 * references. Include after cmocka.h and test_gpt2_fs.h; run from the
 * repository root. */
#ifndef ATTNVIZ_TEST_FIXTURES_H
#define ATTNVIZ_TEST_FIXTURES_H

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"

/* fn(dir, user) for every fixture folder holding file, in name order: those
 * of tests/fixtures/gpt2 and tests/fixtures/llama (families_only 0) and of
 * each tests/fixtures/families/<family>. Returns how many; *groups (when
 * not NULL) how many of those parent folders have one. */
static inline int fixture_each(const char *file, int families_only,
                               void (*fn)(const char *dir, void *user), void *user, int *groups)
{
    static const char *const where[] = {"tests/fixtures/families/*/*/", "tests/fixtures/gpt2/*/",
                                        "tests/fixtures/llama/*/"};
    int n = 0, g = 0;
    char last[600] = "";
    for (int k = 0; k < (families_only ? 1 : 3); k++) {
        char pattern[300];
        glob_t gl;
        snprintf(pattern, sizeof pattern, "%s%s", where[k], file);
        if (glob(pattern, 0, NULL, &gl) != 0)
            continue;
        for (size_t i = 0; i < gl.gl_pathc; i++) {
            char dir[600], parent[600];
            snprintf(dir, sizeof dir, "%s", gl.gl_pathv[i]);
            *strrchr(dir, '/') = '\0';
            snprintf(parent, sizeof parent, "%s", dir);
            *strrchr(parent, '/') = '\0';
            g += strcmp(parent, last) != 0;
            snprintf(last, sizeof last, "%s", parent);
            fn(dir, user);
            n++;
        }
        globfree(&gl);
    }
    if (groups)
        *groups = g;
    return n;
}

static inline void fixture_none(const char *dir, void *user)
{
    (void)dir, (void)user;
}

/* How many fixture roots (GPT-2, the Llama family, each family's folder)
 * have model fixtures (a ref.json): a test of a reference every root's
 * generator writes wants that many (a new family needs no line there). */
static inline int fixture_roots(void)
{
    int groups = 0;
    fixture_each("ref.json", 0, fixture_none, NULL, &groups);
    return groups;
}

/* ref.json's ids: malloc'd, *T of them. */
static inline int *fixture_ref_ids(const char *dir, int *T)
{
    char path[700];
    size_t len;
    snprintf(path, sizeof path, "%s/ref.json", dir);
    char *s = test_slurp(path, &len);
    if (!s)
        fail_msg("%s: cannot read (run from the repository root)", path);
    cJSON *j = cJSON_ParseWithLength(s, len);
    free(s);
    const cJSON *jids = cJSON_GetObjectItemCaseSensitive(j, "ids");
    assert_non_null(jids);
    *T = cJSON_GetArraySize(jids);
    int *ids = malloc(sizeof(int) * (size_t)*T);
    assert_non_null(ids);
    for (int i = 0; i < *T; i++)
        ids[i] = cJSON_GetArrayItem(jids, i)->valueint;
    cJSON_Delete(j);
    return ids;
}

/* dir/name opened as an attention file (a reference .npy), or the test fails. */
static inline void fixture_open_npy(AttnFile *f, const char *dir, const char *name)
{
    char path[700];
    AttnErr err = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (attn_file_open(f, path, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
}

#endif
