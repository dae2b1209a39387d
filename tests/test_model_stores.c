/* Tests for finding GGUF models in Ollama's and LM Studio's stores
 * (src/io/model_stores.c) in fake stores built in a temp folder, HOME and
 * OLLAMA_MODELS set per test: Ollama's manifests for NAME, NAME:TAG,
 * ORG/NAME:TAG and HOST/ORG/NAME:TAG, its model layer's blob (a real GGUF
 * fixture that then parses), $OLLAMA_MODELS over ~/.ollama/models; broken
 * manifests (not JSON, no model layer, a bad digest, a missing blob, a
 * blob of the wrong size) refused naming the manifest and the field; LM
 * Studio's two folders in order, projectors (mmproj*) left out, several
 * .gguf files refused naming them and PUBLISHER/REPO/FILE.gguf picking one;
 * not found: every place looked; names that would leave the store refused.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/gguf.h"
#include "attnviz/io.h"
#include "attnviz/model_stores.h"

#include "test_gpt2_fs.h"

#define GGUF_FIX "tests/fixtures/gguf/small_v3_align16.gguf"
#define HEX_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static const char *const env_vars[] = {"HOME", "OLLAMA_MODELS"};
#define N_ENV 2

typedef struct Env {
    char *saved[N_ENV];
    char *root;
    char home[1024], ollama[1024];
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
    fs_join(e->home, e->root, "home");
    fs_join(e->ollama, e->root, "ollama");
    fs_mkdir(e->home);
    fs_mkdir(e->ollama);
    setenv("HOME", e->home, 1);
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

/* root/rel written with text (its folders made). */
static void put(const char *root, const char *rel, const char *text)
{
    char dir[1024], p[1024];
    snprintf(dir, sizeof dir, "%s", rel);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        mkdirs(root, dir);
    }
    fs_write_text(fs_join(p, root, rel), text);
}

/* A manifest as Ollama writes one: a config, a license layer, then the
 * model layer with digest and size (size < 0: none written). */
static void put_manifest(const char *store, const char *rel, const char *hex, long size)
{
    char text[2048];
    char sz[64] = "";
    if (size >= 0)
        snprintf(sz, sizeof sz, ", \"size\": %ld", size);
    snprintf(text, sizeof text,
             "{\"schemaVersion\": 2, \"mediaType\": "
             "\"application/vnd.docker.distribution.manifest.v2+json\", \"config\": "
             "{\"mediaType\": \"application/vnd.docker.container.image.v1+json\", \"digest\": "
             "\"sha256:" HEX_B "\", \"size\": 485}, \"layers\": [{\"mediaType\": "
             "\"application/vnd.ollama.image.license\", \"digest\": \"sha256:" HEX_B "\", "
             "\"size\": 12}, {\"mediaType\": \"application/vnd.ollama.image.model\", "
             "\"digest\": \"sha256:%s\"%s}]}", hex, sz);
    put(store, rel, text);
}

/* The GGUF fixture as the blob of hex in store; its size. */
static long put_blob(const char *store, const char *hex)
{
    char rel[256], p[1024];
    snprintf(rel, sizeof rel, "blobs/sha256-%s", hex);
    mkdirs(store, "blobs");
    fs_copy(GGUF_FIX, fs_join(p, store, rel));
    size_t len;
    free(test_slurp(GGUF_FIX, &len));
    return (long)len;
}

/* model_store_find(name) finds want (a path under root). */
static void finds(const char *name, const char *root, const char *rel)
{
    char *path = NULL, looked[2048], want[1024];
    AttnErr err = {0};
    int rc = model_store_find(name, &path, looked, sizeof looked, &err);
    if (rc != 0)
        fail_msg("%s: rc %d, %s (looked: %s)", name, rc, err.msg, looked);
    assert_string_equal(path, fs_join(want, root, rel));
    free(path);
}

/* model_store_find(name) is a store error of code with piece, err naming
 * the file (a piece of its path). */
static void refuses(const char *name, int code, const char *piece, const char *file)
{
    char *path = NULL, looked[2048];
    AttnErr err = {0};
    int rc = model_store_find(name, &path, looked, sizeof looked, &err);
    expect_err(rc, err, code, piece, file);
    assert_null(path);
}

static void ollama_names(void **state)
{
    Env *e = *state;
    setenv("OLLAMA_MODELS", e->ollama, 1);
    long size = put_blob(e->ollama, HEX_A);
    put_manifest(e->ollama, "manifests/registry.ollama.ai/library/tiny/latest", HEX_A, size);
    put_manifest(e->ollama, "manifests/registry.ollama.ai/library/tiny/q4", HEX_A, -1);
    put_manifest(e->ollama, "manifests/registry.ollama.ai/someone/model/7b-q8_0", HEX_A, size);
    put_manifest(e->ollama, "manifests/hf.co/org/repo-GGUF/Q4_K_M", HEX_A, size);
    finds("tiny", e->ollama, "blobs/sha256-" HEX_A);
    finds("tiny:latest", e->ollama, "blobs/sha256-" HEX_A);
    finds("tiny:q4", e->ollama, "blobs/sha256-" HEX_A);
    finds("someone/model:7b-q8_0", e->ollama, "blobs/sha256-" HEX_A);
    finds("hf.co/org/repo-GGUF:Q4_K_M", e->ollama, "blobs/sha256-" HEX_A);

    /* the blob is the GGUF file: it maps and parses */
    char *path = NULL, looked[2048];
    AttnErr err = {0};
    assert_int_equal(model_store_find("tiny", &path, looked, sizeof looked, &err), 0);
    void *map;
    size_t len;
    assert_int_equal(io_map_file(path, ATTN_E_NOT_FOUND, &map, &len, &err), 0);
    Gguf g;
    assert_int_equal(gguf_parse(&g, map, len, path, &err), 0);
    assert_non_null(gguf_tensor(&g, "token_embd.weight"));
    gguf_free(&g);
    io_unmap_file(map, len);
    free(path);

    /* a tag not pulled: not found, the manifest's path among the places */
    assert_int_equal(model_store_find("tiny:70b", &path, looked, sizeof looked, &err), 1);
    assert_null(path);
    char want[2048];
    snprintf(want, sizeof want, "Ollama's %s/manifests/registry.ollama.ai/library/tiny/70b",
             e->ollama);
    if (!strstr(looked, want))
        fail_msg("looked \"%s\" lacks \"%s\"", looked, want);
    /* a tag names no LM Studio folder */
    assert_non_null(strstr(looked, "not an LM Studio model name"));
}

/* $OLLAMA_MODELS unset: ~/.ollama/models; set: only it. */
static void ollama_home(void **state)
{
    Env *e = *state;
    char store[1024];
    fs_join(store, e->home, ".ollama/models");
    mkdirs(e->home, ".ollama/models");
    long size = put_blob(store, HEX_B);
    put_manifest(store, "manifests/registry.ollama.ai/library/qwen3/0.6b", HEX_B, size);
    finds("qwen3:0.6b", store, "blobs/sha256-" HEX_B);
    setenv("OLLAMA_MODELS", e->ollama, 1);
    char *path = NULL, looked[2048];
    AttnErr err = {0};
    assert_int_equal(model_store_find("qwen3:0.6b", &path, looked, sizeof looked, &err), 1);
    assert_null(strstr(looked, ".ollama/models"));
    assert_non_null(strstr(looked, e->ollama));
}

/* Broken manifests: each refused naming the manifest and what is wrong. */
static void ollama_broken(void **state)
{
    Env *e = *state;
    setenv("OLLAMA_MODELS", e->ollama, 1);
    const char *m = "manifests/registry.ollama.ai/library/bad/latest";
    put(e->ollama, m, "{\"layers\": [ ");
    refuses("bad", ATTN_E_PARSE, "not an Ollama manifest: not valid JSON", m);
    put(e->ollama, m, "[1, 2]");
    refuses("bad", ATTN_E_PARSE, "not a JSON object", m);
    put(e->ollama, m, "{\"schemaVersion\": 2}");
    refuses("bad", ATTN_E_PARSE, "no \"layers\" list", m);
    put(e->ollama, m, "{\"layers\": [{\"mediaType\": \"application/vnd.ollama.image.projector\", "
                      "\"digest\": \"sha256:" HEX_A "\"}]}");
    refuses("bad", ATTN_E_PARSE, "no layer of mediaType application/vnd.ollama.image.model", m);
    put(e->ollama, m, "{\"layers\": [{\"mediaType\": \"application/vnd.ollama.image.model\", "
                      "\"digest\": \"sha256:../../etc/passwd\"}]}");
    refuses("bad", ATTN_E_PARSE, "layers[0] (application/vnd.ollama.image.model): \"digest\" "
                                 "\"sha256:../../etc/passwd\" is not", m);
    put(e->ollama, m, "{\"layers\": [{\"mediaType\": \"application/vnd.ollama.image.model\"}]}");
    refuses("bad", ATTN_E_PARSE, "\"digest\" is missing", m);
    put_manifest(e->ollama, m, HEX_B, 100);
    refuses("bad", ATTN_E_NOT_FOUND, "sha256:fedcba987654... names the blob", m);
    refuses("bad", ATTN_E_NOT_FOUND, "which is missing (ollama pull bad fetches it again)", m);
    long size = put_blob(e->ollama, HEX_B);
    put_manifest(e->ollama, m, HEX_B, size + 1);
    char piece[128];
    snprintf(piece, sizeof piece, "is %ld bytes, the model layer's \"size\" says %ld", size,
             size + 1);
    refuses("bad", ATTN_E_IO, piece, m);
    put_manifest(e->ollama, m, HEX_B, size);
    finds("bad", e->ollama, "blobs/sha256-" HEX_B);
}

static void lmstudio_folders(void **state)
{
    Env *e = *state;
    setenv("OLLAMA_MODELS", e->ollama, 1);
    put(e->home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf", "x");
    put(e->home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/mmproj-Qwen3-F16.gguf", "x");
    put(e->home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/README.md", "x");
    finds("lmstudio-community/Qwen3-0.6B-GGUF", e->home,
          ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf");
    /* the older folder, when the newer has none */
    put(e->home, ".cache/lm-studio/models/TheBloke/Old-GGUF/old.Q8_0.gguf", "x");
    finds("TheBloke/Old-GGUF", e->home, ".cache/lm-studio/models/TheBloke/Old-GGUF/old.Q8_0.gguf");
    /* both: the newer first */
    put(e->home, ".cache/lm-studio/models/lmstudio-community/Qwen3-0.6B-GGUF/other.gguf", "x");
    finds("lmstudio-community/Qwen3-0.6B-GGUF", e->home,
          ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf");
    /* several: refused naming them (sorted); FILE.gguf picks one */
    put(e->home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf", "x");
    refuses("lmstudio-community/Qwen3-0.6B-GGUF", ATTN_E_DUPLICATE,
            "holds 2 .gguf files (Qwen3-0.6B-Q4_K_M.gguf; Qwen3-0.6B-Q8_0.gguf): name one, e.g. "
            "--model lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf",
            ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF");
    finds("lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf", e->home,
          ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf");
    finds("lmstudio-community/Qwen3-0.6B-GGUF/other.gguf", e->home,
          ".cache/lm-studio/models/lmstudio-community/Qwen3-0.6B-GGUF/other.gguf");
    /* Ollama first: an ORG/NAME in both stores is Ollama's */
    long size = put_blob(e->ollama, HEX_A);
    put_manifest(e->ollama, "manifests/registry.ollama.ai/TheBloke/Old-GGUF/latest", HEX_A, size);
    finds("TheBloke/Old-GGUF", e->ollama, "blobs/sha256-" HEX_A);
}

/* Found nowhere: every place looked, in order. */
static void not_found(void **state)
{
    Env *e = *state;
    setenv("OLLAMA_MODELS", e->ollama, 1);
    mkdirs(e->home, ".lmstudio/models/pub/empty");
    char *path = NULL, looked[2048], want[4][2048];
    AttnErr err = {0};
    assert_int_equal(model_store_find("pub/empty", &path, looked, sizeof looked, &err), 1);
    assert_null(path);
    snprintf(want[0], sizeof want[0], "Ollama's %s/manifests/registry.ollama.ai/pub/empty/latest",
             e->ollama);
    snprintf(want[1], sizeof want[1], "LM Studio's %s/.lmstudio/models/pub/empty (no .gguf file in "
             "it)", e->home);
    snprintf(want[2], sizeof want[2], "LM Studio's %s/.cache/lm-studio/models/pub/empty", e->home);
    const char *at = looked;
    for (int i = 0; i < 3; i++) {
        const char *hit = strstr(at, want[i]);
        if (!hit)
            fail_msg("looked \"%s\" lacks (after the earlier ones) \"%s\"", looked, want[i]);
        at = hit + strlen(want[i]);
    }
    /* a bare name: Ollama's library only */
    assert_int_equal(model_store_find("nosuchmodel", &path, looked, sizeof looked, &err), 1);
    snprintf(want[3], sizeof want[3], "Ollama's %s/manifests/registry.ollama.ai/library/nosuchmodel/latest",
             e->ollama);
    assert_non_null(strstr(looked, want[3]));
    assert_non_null(strstr(looked, "not an LM Studio model name"));
    /* a tiny buffer is cut, never overrun */
    char tiny[16];
    memset(tiny, 'x', sizeof tiny);
    assert_int_equal(model_store_find("pub/empty", &path, tiny, 10, &err), 1);
    assert_non_null(memchr(tiny, '\0', 10));
    assert_int_equal(tiny[10], 'x');
}

/* Names that would leave a store are no store's names. */
static void names_checked(void **state)
{
    Env *e = *state;
    setenv("OLLAMA_MODELS", e->ollama, 1);
    /* a manifest a ".." would reach from library/ */
    long size = put_blob(e->ollama, HEX_A);
    put_manifest(e->ollama, "manifests/registry.ollama.ai/x/latest", HEX_A, size);
    put(e->home, ".lmstudio/secret.gguf", "x");
    static const char *const bad[] = {"../x", "library/../../x", ".x", "a//b", "a/", "/etc/passwd",
                                      "a:b:c/d", "a/b/c/d", "a/b/../../../secret.gguf", "a b",
                                      "tiny:", "tiny:../x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *path = NULL, looked[2048];
        AttnErr err = {0};
        int rc = model_store_find(bad[i], &path, looked, sizeof looked, &err);
        if (rc == 0 || path)
            fail_msg("\"%s\" found %s", bad[i], path);
        if (rc == 1 && !strstr(looked, "not an Ollama model name") && !strstr(looked, "Ollama's"))
            fail_msg("\"%s\": looked \"%s\"", bad[i], looked);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ollama_names, setup, teardown),
        cmocka_unit_test_setup_teardown(ollama_home, setup, teardown),
        cmocka_unit_test_setup_teardown(ollama_broken, setup, teardown),
        cmocka_unit_test_setup_teardown(lmstudio_folders, setup, teardown),
        cmocka_unit_test_setup_teardown(not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(names_checked, setup, teardown),
    };
    return cmocka_run_group_tests_name("model stores", tests, NULL, NULL);
}
