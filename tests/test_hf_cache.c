/* Tests for finding a model by name (src/io/hf_cache.c) in fake Hugging Face
 * caches built in a temp folder (models--ORG--NAME/refs/main,
 * snapshots/<commit>/ whose files are symlinks into ../../blobs/): the cache
 * folder from HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME in that order;
 * ORG/NAME and bare names (models--NAME, then openai-community, then
 * distilbert); refs/main's snapshot, else the only one; an existing folder
 * first; not found: where it looked and the download command. A snapshot
 * found opens with model_file_open through its symlinks. Run from the
 * repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/gpt2.h"
#include "attnviz/model_file.h"

#include "test_gpt2_fs.h"

#define CFG(m) ((const Gpt2Config *)(m)->cfg)
#define WTS(m) ((const Gpt2Weights *)(m)->weights)

static const char *const env_vars[] = {"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"};
#define N_ENV 4

typedef struct Env {
    char *saved[N_ENV];
    char *root; /* the temp folder */
} Env;

static int setup(void **state)
{
    Env *e = calloc(1, sizeof *e);
    assert_non_null(e);
    for (int i = 0; i < N_ENV; i++) {
        const char *v = getenv(env_vars[i]);
        e->saved[i] = v ? strdup(v) : NULL;
        unsetenv(env_vars[i]);
    }
    e->root = fs_tmpdir();
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    Env *e = *state;
    for (int i = 0; i < N_ENV; i++) {
        if (e->saved[i])
            setenv(env_vars[i], e->saved[i], 1);
        else
            unsetenv(env_vars[i]);
        free(e->saved[i]);
    }
    fs_rm_tree(e->root);
    free(e->root);
    free(e);
    return 0;
}

/* root/rel made (with its parents). */
static void mkdirs(const char *root, const char *rel)
{
    char p[1024];
    fs_join(p, root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

/* A repo folder in cache as the hub writes it: the fixture's files as blobs,
 * snapshots/<commit>/<file> symlinks to ../../blobs/<n>, refs/main naming
 * commit when ref is set. */
static void add_repo(const char *cache, const char *repo, const char *commit, int ref,
                     const char *fixture)
{
    static const char *const files[] = {"config.json", "model.safetensors", "vocab.json",
                                        "merges.txt"};
    char rel[512], p[1024], from[1024], link[512];
    snprintf(rel, sizeof rel, "%s/blobs", repo);
    mkdirs(cache, rel);
    snprintf(rel, sizeof rel, "%s/snapshots/%s", repo, commit);
    mkdirs(cache, rel);
    for (int i = 0; i < 4; i++) {
        char blob[600];
        snprintf(blob, sizeof blob, "%s/%s/blobs/%s-%d", cache, repo, commit, i);
        snprintf(from, sizeof from, GPT2_FIX "%s/%s", fixture, files[i]);
        fs_copy(from, blob);
        snprintf(link, sizeof link, "../../blobs/%s-%d", commit, i);
        snprintf(rel, sizeof rel, "%s/snapshots/%s/%s", repo, commit, files[i]);
        assert_int_equal(symlink(link, fs_join(p, cache, rel)), 0);
    }
    if (ref) {
        snprintf(rel, sizeof rel, "%s/refs", repo);
        mkdirs(cache, rel);
        snprintf(rel, sizeof rel, "%s/refs/main", repo);
        fs_write_text(fs_join(p, cache, rel), commit); /* the hub writes no newline */
    }
}

/* hf_model_find(name) is the snapshot cache/repo/snapshots/commit. */
static void finds(const char *name, const char *cache, const char *repo, const char *commit)
{
    char *dir = NULL, want[1024];
    AttnErr err = {0};
    int rc = hf_model_find(name, &dir, &err);
    if (rc != 0)
        fail_msg("%s: %s", name, err.msg);
    snprintf(want, sizeof want, "%s/%s/snapshots/%s", cache, repo, commit);
    assert_string_equal(dir, want);
    free(dir);
}

static void not_found(const char *name, const char *piece)
{
    char *dir = (char *)1;
    AttnErr err = {0};
    int rc = hf_model_find(name, &dir, &err);
    assert_null(dir);
    if (rc != -ATTN_E_NOT_FOUND || err.code != ATTN_E_NOT_FOUND || !strstr(err.msg, piece))
        fail_msg("%s: rc %d \"%s\"; expected \"%s\"", name, rc, err.msg, piece);
    assert_string_equal(err.file, name);
}

static void cache_dir_order(void **state)
{
    Env *e = *state;
    char buf[1024], want[1600];
    AttnErr err = {0};
    assert_int_equal(hf_cache_dir(buf, sizeof buf, &err), -ATTN_E_NOT_FOUND);
    assert_non_null(strstr(err.msg, "HF_HUB_CACHE"));
    setenv("HOME", "/home/u", 1);
    assert_int_equal(hf_cache_dir(buf, sizeof buf, &err), 0);
    assert_string_equal(buf, "/home/u/.cache/huggingface/hub");
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    assert_int_equal(hf_cache_dir(buf, sizeof buf, &err), 0);
    assert_string_equal(buf, "/x/cache/huggingface/hub");
    setenv("HF_HOME", "~/hf", 1);
    assert_int_equal(hf_cache_dir(buf, sizeof buf, &err), 0);
    assert_string_equal(buf, "/home/u/hf/hub");
    setenv("HF_HUB_CACHE", e->root, 1);
    assert_int_equal(hf_cache_dir(buf, sizeof buf, &err), 0);
    assert_string_equal(buf, e->root);
    setenv("HF_HUB_CACHE", "", 1); /* empty: as unset */
    assert_int_equal(hf_cache_dir(buf, sizeof buf, &err), 0);
    assert_string_equal(buf, "/home/u/hf/hub");
    memset(want, 'a', 1500);
    want[0] = '/';
    want[1500] = '\0';
    setenv("HF_HUB_CACHE", want, 1);
    assert_int_equal(hf_cache_dir(buf, 1024, &err), -ATTN_E_TOO_LARGE);
}

/* Each variable's cache is searched when it is the one in force. */
static void finds_through_each_variable(void **state)
{
    Env *e = *state;
    char cache[1024], base[512];
    static const char commit[] = "607a30d783dfa663caf39e06633721c8d4cfcd7e";
    snprintf(base, sizeof base, "%s/home", e->root);
    snprintf(cache, sizeof cache, "%s/.cache/huggingface/hub", base);
    mkdirs(e->root, "home/.cache/huggingface/hub");
    add_repo(cache, "models--openai-community--gpt2", commit, 1, "f32-h3");
    setenv("HOME", base, 1);
    finds("gpt2", cache, "models--openai-community--gpt2", commit);
    finds("openai-community/gpt2", cache, "models--openai-community--gpt2", commit);

    mkdirs(e->root, "xdg/huggingface/hub");
    snprintf(base, sizeof base, "%s/xdg", e->root);
    setenv("XDG_CACHE_HOME", base, 1);
    not_found("gpt2", "xdg/huggingface/hub (looked for models--gpt2, "
              "models--openai-community--gpt2, models--distilbert--gpt2); download it with: "
              "huggingface-cli download openai-community/gpt2");
    snprintf(cache, sizeof cache, "%s/xdg/huggingface/hub", e->root);
    add_repo(cache, "models--gpt2", "aaaa", 1, "f32-bare-h4");
    finds("gpt2", cache, "models--gpt2", "aaaa");

    snprintf(base, sizeof base, "%s/hfhome", e->root);
    mkdirs(e->root, "hfhome/hub");
    setenv("HF_HOME", base, 1);
    not_found("gpt2", "hfhome/hub (looked for");
    snprintf(cache, sizeof cache, "%s/hub", base);
    add_repo(cache, "models--distilbert--distilgpt2", "bbbb", 1, "f32-h2-relu");
    finds("distilgpt2", cache, "models--distilbert--distilgpt2", "bbbb");
    not_found("distilgpt2-x", "huggingface-cli download distilbert/distilgpt2-x");

    snprintf(cache, sizeof cache, "%s/hubcache", e->root);
    mkdirs(e->root, "hubcache");
    setenv("HF_HUB_CACHE", cache, 1);
    not_found("distilgpt2", "hubcache (looked for models--distilgpt2, "
              "models--openai-community--distilgpt2, models--distilbert--distilgpt2)");
    not_found("someone/tiny-gpt2", "(looked for models--someone--tiny-gpt2); download it "
              "with: huggingface-cli download someone/tiny-gpt2");
    add_repo(cache, "models--someone--tiny-gpt2", "cccc", 0, "f16-h5");
    finds("someone/tiny-gpt2", cache, "models--someone--tiny-gpt2", "cccc");
}

/* The bare name's order: models--NAME before models--openai-community--NAME
 * before models--distilbert--NAME. */
static void bare_name_order(void **state)
{
    Env *e = *state;
    setenv("HF_HUB_CACHE", e->root, 1);
    add_repo(e->root, "models--distilbert--gpt2", "d1", 1, "f32-h2-relu");
    finds("gpt2", e->root, "models--distilbert--gpt2", "d1");
    add_repo(e->root, "models--openai-community--gpt2", "o1", 1, "f32-h2-relu");
    finds("gpt2", e->root, "models--openai-community--gpt2", "o1");
    add_repo(e->root, "models--gpt2", "g1", 1, "f32-h2-relu");
    finds("gpt2", e->root, "models--gpt2", "g1");
    /* a repo folder without a snapshot (a download cut short) is passed over */
    mkdirs(e->root, "models--gpt2-medium/blobs");
    add_repo(e->root, "models--openai-community--gpt2-medium", "m1", 1, "f32-h2-relu");
    finds("gpt2-medium", e->root, "models--openai-community--gpt2-medium", "m1");
}

/* refs/main's snapshot; the only one without it; several without it: an
 * error naming the repo. */
static void snapshot_choice(void **state)
{
    Env *e = *state;
    char p[1024];
    setenv("HF_HUB_CACHE", e->root, 1);
    add_repo(e->root, "models--openai-community--gpt2", "old", 0, "f32-h2-relu");
    finds("gpt2", e->root, "models--openai-community--gpt2", "old");
    add_repo(e->root, "models--openai-community--gpt2", "new", 1, "f32-h3");
    finds("gpt2", e->root, "models--openai-community--gpt2", "new");
    /* refs/main with a newline, as a hand-written one may have */
    fs_write_text(fs_join(p, e->root, "models--openai-community--gpt2/refs/main"), "old\n");
    finds("gpt2", e->root, "models--openai-community--gpt2", "old");
    /* refs/main naming a snapshot that is not there, two snapshots */
    fs_write_text(p, "gone");
    not_found("gpt2", "models--openai-community--gpt2/snapshots holds 2 snapshots and "
              "refs/main names none of them");
    unlink(p);
    not_found("gpt2", "holds 2 snapshots");
}

/* An existing folder is taken as it is; names that are neither a folder nor
 * a hub id are refused without looking in the cache. */
static void folders_and_bad_names(void **state)
{
    Env *e = *state;
    setenv("HF_HUB_CACHE", e->root, 1);
    char *dir = NULL;
    AttnErr err = {0};
    assert_int_equal(hf_model_find(e->root, &dir, &err), 0);
    assert_string_equal(dir, e->root);
    free(dir);
    assert_int_equal(hf_model_find("tests/fixtures/gpt2/f32-h3", &dir, &err), 0);
    assert_string_equal(dir, "tests/fixtures/gpt2/f32-h3");
    free(dir);
    static const char *const bad[] = {"../gpt2", "a/b/c", "/no/such/folder", "gpt2 small",
                                      "./gpt2", "a--b", "org/", "~/x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        not_found(bad[i], "no such folder, nor a model name like gpt2");
    dir = (char *)1;
    assert_int_equal(hf_model_find("", &dir, &err), -ATTN_E_NOT_FOUND);
    assert_null(dir);
}

/* A snapshot found opens: its files are symlinks into the blobs. */
static void opens_a_snapshot(void **state)
{
    Env *e = *state;
    setenv("HF_HUB_CACHE", e->root, 1);
    add_repo(e->root, "models--openai-community--gpt2", "abc", 1, "bf16-h6");
    char *dir = NULL;
    AttnErr err = {0};
    assert_int_equal(hf_model_find("openai-community/gpt2", &dir, &err), 0);
    ModelFile *m = NULL;
    if (model_file_open(dir, &desc_gpt2, &m, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    assert_int_equal(CFG(m)->n_head, 6);
    assert_non_null(strstr(m->vocab_path, "snapshots/abc/vocab.json"));
    model_file_close(m);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cache_dir_order, setup, teardown),
        cmocka_unit_test_setup_teardown(finds_through_each_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(bare_name_order, setup, teardown),
        cmocka_unit_test_setup_teardown(snapshot_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(folders_and_bad_names, setup, teardown),
        cmocka_unit_test_setup_teardown(opens_a_snapshot, setup, teardown),
    };
    return cmocka_run_group_tests_name("hf cache", tests, NULL, NULL);
}
