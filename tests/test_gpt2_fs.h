/* Scratch folders and files for the model readers' tests (test_gpt2_io.c,
 * test_hf_cache.c, test_llama_io.c, test_arch_*.c, ...): a temp folder
 * removed with everything in it, files written and copied, a .safetensors
 * file split into its JSON header and its data and written back, a JSON
 * file read, an error checked. Include after <cmocka.h>. */
#ifndef ATTNVIZ_TEST_GPT2_FS_H
#define ATTNVIZ_TEST_GPT2_FS_H

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#define GPT2_FIX "tests/fixtures/gpt2/"

/* rc and err are the error want_ (its code) whose message holds piece_ and
 * whose file holds file_ (NULL: any file). */
#define expect_err(rc_, err_, want_, piece_, file_)                                       \
    do {                                                                                   \
        const char *f_ = (file_);                                                          \
        if ((rc_) != -(want_) || (err_).code != (want_) || !strstr((err_).msg, (piece_)) || \
            (f_ && !strstr((err_).file, f_)))                                              \
            fail_msg("rc %d code %d \"%s\" (file \"%s\"); expected code %d with \"%s\"",    \
                     (rc_), (err_).code, (err_).msg, (err_).file, (want_), (piece_));      \
    } while (0)

/* path's JSON, or the test fails. */
static inline cJSON *read_json(const char *path)
{
    size_t len;
    char *s = test_slurp(path, &len);
    if (!s)
        fail_msg("%s: cannot read (run from the repository root)", path);
    cJSON *j = cJSON_ParseWithLength(s, len);
    free(s);
    assert_non_null(j);
    return j;
}

/* A new empty folder under $TMPDIR (or /tmp), malloc'd. */
static inline char *fs_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/attnviz-gpt2-XXXXXX", t && *t ? t : "/tmp");
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    char *out = strdup(d);
    assert_non_null(out);
    return out;
}

/* Remove path and, when it is a folder (not a symlink to one), all in it. */
static inline void fs_rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[1024];
            if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub)
                fs_rm_tree(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* dir/name into buf (static size 1024). */
static inline const char *fs_join(char *buf, const char *dir, const char *name)
{
    if (snprintf(buf, 1024, "%s/%s", dir, name) >= 1024)
        fail_msg("path too long: %s/%s", dir, name);
    return buf;
}

static inline void fs_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static inline void fs_write_text(const char *path, const char *text)
{
    fs_write(path, text, strlen(text));
}

static inline void fs_mkdir(const char *path)
{
    assert_int_equal(mkdir(path, 0755), 0);
}

static inline void fs_copy(const char *from, const char *to)
{
    size_t len;
    char *s = test_slurp(from, &len);
    if (!s)
        fail_msg("%s: cannot read (run from the repository root)", from);
    fs_write(to, s, len);
    free(s);
}

/* Copy the four files of a fixture folder into dir. */
static inline void fs_copy_model(const char *fixture, const char *dir)
{
    static const char *const files[] = {"config.json", "model.safetensors", "vocab.json",
                                        "merges.txt"};
    for (int i = 0; i < 4; i++) {
        char a[1024], b[1024];
        if (snprintf(a, sizeof a, GPT2_FIX "%s/%s", fixture, files[i]) >= (int)sizeof a)
            fail_msg("path too long: %s", fixture);
        fs_copy(a, fs_join(b, dir, files[i]));
    }
}

/* A .safetensors file as its parsed header and a copy of its data. */
typedef struct StParts {
    cJSON *header;
    unsigned char *data;
    size_t len;
} StParts;

static inline StParts fs_st_read(const char *path)
{
    size_t len;
    char *s = test_slurp(path, &len);
    if (!s)
        fail_msg("%s: cannot read (run from the repository root)", path);
    assert_true(len >= 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | (unsigned char)s[i];
    assert_true(n <= len - 8);
    StParts p;
    p.header = cJSON_ParseWithLength(s + 8, (size_t)n);
    assert_non_null(p.header);
    p.len = len - 8 - (size_t)n;
    p.data = malloc(p.len ? p.len : 1);
    assert_non_null(p.data);
    memcpy(p.data, s + 8 + n, p.len);
    free(s);
    return p;
}

/* header (padded with spaces to 8 bytes) and data into path; frees p. */
static inline void fs_st_write(const char *path, StParts *p)
{
    char *h = cJSON_PrintUnformatted(p->header);
    assert_non_null(h);
    size_t n = strlen(h), pad = (8 - n % 8) % 8;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned char sz[8];
    for (int i = 0; i < 8; i++)
        sz[i] = (unsigned char)((uint64_t)(n + pad) >> (8 * i)); /* size_t may have 32 bits */
    assert_int_equal(fwrite(sz, 1, 8, f), 8);
    assert_int_equal(fwrite(h, 1, n, f), n);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', f);
    assert_int_equal(fwrite(p->data, 1, p->len, f), p->len);
    assert_int_equal(fclose(f), 0);
    free(h);
    cJSON_Delete(p->header);
    free(p->data);
    memset(p, 0, sizeof *p);
}

#endif
