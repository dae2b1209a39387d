/* Fuzz regression test: replays every checked-in fuzz input through the same
 * entry points the libFuzzer targets use (tests/fuzz/harness.h, and
 * tests/fuzz/fuzz_embed.c itself for the embed target):
 *   tests/fuzz/corpus/<target>/...   seed corpora
 *   tests/fuzz/crashes/<target>-NAME inputs that once crashed a target
 * Each input runs in a forked child (with a time limit), so an input that
 * aborts or crashes fails this test with its file name instead of killing
 * the whole suite; under SAN=1 the sanitizers check every input too.
 * Run from the repository root (make test does). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/attn_harness.h"
#include "fuzz/harness.h"
#include "fuzz/harness_attn.h"
#include "fuzz/harness_gpt2.h"
#include "fuzz/harness_llama.h"
#include "fuzz/harness_arch.h"
#include "fuzz/harness_bpe.h"
#include "fuzz/harness_teach.h"
#include "fuzz/harness_gguf.h"

/* The embed target's own entry point, unchanged, under another name. */
#define LLVMFuzzerTestOneInput fuzz_embed_entry
#include "fuzz/fuzz_embed.c"
#undef LLVMFuzzerTestOneInput

#define CORPUS_DIR  "tests/fuzz/corpus"
#define CRASHES_DIR "tests/fuzz/crashes"
#define CHILD_SECONDS 30

static const char *check_embed(const uint8_t *data, size_t size)
{
    fuzz_embed_entry(data, size); /* abort()s on a violated invariant */
    return NULL;
}

typedef const char *(*CheckFn)(const uint8_t *data, size_t size);

typedef struct Target {
    const char *name;
    CheckFn check;
} Target;

static const Target targets[] = {
    {"tokenizer", fuzz_check_tokenizer},
    {"sentences", fuzz_check_sentences},
    {"weights", fuzz_check_weights},
    {"options", fuzz_check_options},
    {"forward", fuzz_check_forward},
    {"embed", check_embed},
    {"npy", fuzz_check_npy},
    {"npz", fuzz_check_npz},
    {"safetensors", fuzz_check_safetensors},
    {"attn_json", fuzz_check_attn_json},
    {"attn_session", fuzz_check_attn_session},
    {"target_csv", fuzz_check_target_csv},
    {"st_model", fuzz_check_st_model},
    {"gpt2_config", fuzz_check_gpt2_config},
    {"llama_config", fuzz_check_llama_config},
    {"arch_config", fuzz_check_arch_config},
    {"bpe", fuzz_check_bpe},
    {"bpe_files", fuzz_check_bpe_files},
    {"gguf", fuzz_check_gguf},
};
#define N_TARGETS ((int)(sizeof targets / sizeof targets[0]))

static int read_whole(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        uint8_t *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return -1;
    }
    *data = buf;
    *size = n;
    return 0;
}

/* Run one file through check in a child. Returns 0 when it passed; otherwise
 * prints why and returns 1. */
static int replay_file(const Target *t, const char *path)
{
    uint8_t *data = NULL;
    size_t size = 0;
    if (read_whole(path, &data, &size) < 0) {
        print_error("%s: cannot read: %s\n", path, strerror(errno));
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        print_error("%s: fork failed: %s\n", path, strerror(errno));
        free(data);
        return 1;
    }
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        alarm(CHILD_SECONDS);
        const char *bad = t->check(data, size);
        free(data);
        if (bad) {
            fprintf(stderr, "%s: fuzz_%s invariant violated: %s\n", path, t->name, bad);
            fflush(stderr);
            _exit(3);
        }
        exit(0); /* exit, not _exit: LeakSanitizer runs at exit under SAN=1 */
    }
    free(data);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            print_error("%s: waitpid failed: %s\n", path, strerror(errno));
            return 1;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFSIGNALED(status))
        print_error("%s: fuzz_%s died from signal %d%s\n", path, t->name,
                    WTERMSIG(status),
                    WTERMSIG(status) == SIGALRM ? " (time limit)"
                    : WTERMSIG(status) == SIGABRT ? " (abort: invariant or sanitizer)"
                                                  : "");
    else
        print_error("%s: fuzz_%s exited with status %d\n", path, t->name,
                    WEXITSTATUS(status));
    return 1;
}

static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Sorted names of the regular files in dir whose names start with prefix.
 * Returns the count (0 when dir does not exist), -1 on error. */
static int list_files(const char *dir, const char *prefix, char ***out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        char *path = malloc(len);
        if (!path)
            break;
        snprintf(path, len, "%s/%s", dir, e->d_name);
        if (!is_regular(path)) {
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                free(path);
                break;
            }
            names = nn;
        }
        names[n++] = path;
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort: stable, small n */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *tmp = names[j];
            names[j] = names[j - 1];
            names[j - 1] = tmp;
        }
    *out = names;
    return n;
}

static void free_files(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Replays corpus/<name>/ and crashes/<name>-* through the target. */
static void replay_target(void **state)
{
    const Target *t = *state;
    char dir[256], prefix[64];
    snprintf(dir, sizeof dir, CORPUS_DIR "/%s", t->name);
    snprintf(prefix, sizeof prefix, "%s-", t->name);

    char **corpus, **crashes;
    int nc = list_files(dir, "", &corpus);
    int nx = list_files(CRASHES_DIR, prefix, &crashes);
    if (nc < 0 || nx < 0)
        fail_msg("cannot list %s or %s", dir, CRASHES_DIR);
    if (nc == 0) {
        free_files(crashes, nx);
        fail_msg("%s: no seed inputs (run from the repository root)", dir);
    }
    int failed = 0;
    for (int i = 0; i < nc; i++)
        failed += replay_file(t, corpus[i]);
    for (int i = 0; i < nx; i++)
        failed += replay_file(t, crashes[i]);
    print_message("fuzz_%s: %d corpus + %d crash inputs, %d failed\n", t->name,
                  nc, nx, failed);
    free_files(corpus, nc);
    free_files(crashes, nx);
    assert_int_equal(failed, 0);
}

/* Every file in crashes/ must name a known target, or it would be skipped. */
static void crash_files_name_a_target(void **state)
{
    (void)state;
    char **files;
    int n = list_files(CRASHES_DIR, "", &files);
    assert_true(n >= 0);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        const char *base = files[i] + strlen(CRASHES_DIR) + 1;
        int ok = 0;
        for (int k = 0; k < N_TARGETS && !ok; k++) {
            size_t l = strlen(targets[k].name);
            ok = strncmp(base, targets[k].name, l) == 0 && base[l] == '-';
        }
        if (!ok) {
            print_error("%s: name it <target>-NAME (target: tokenizer, sentences, "
                        "weights, options, embed, forward, npy, npz, safetensors, attn_json, target_csv, "
                        "attn_session, st_model, gpt2_config, llama_config, arch_config, bpe, bpe_files or gguf)\n", files[i]);
            bad++;
        }
    }
    free_files(files, n);
    assert_int_equal(bad, 0);
}

/* The harness itself must reject what it should: a hand-made weights file
 * with a NaN-producing shape is refused, a good one passes. */
static void harness_sanity(void **state)
{
    (void)state;
    static const char good[] =
        "{\"config\":{\"heads\":2},\"heads\":[{\"Wq\":null,\"Wk\":null,\"Wv\":null},"
        "{\"Wq\":null,\"Wk\":null,\"Wv\":null}],\"Wo\":null}";
    assert_null(fuzz_check_weights((const uint8_t *)good, sizeof good - 1));
    static const char words[] = "Hello, W\xc3\xb6rld \xff!";
    assert_null(fuzz_check_tokenizer((const uint8_t *)words, sizeof words - 1));
    static const char args[] = "--print\0json\0-H\0" "2\0je suis";
    assert_null(fuzz_check_options((const uint8_t *)args, sizeof args - 1));
    static const char lines[] = "\xef\xbb\xbf# c\r\n a b \r\n\nc";
    assert_null(fuzz_check_sentences((const uint8_t *)lines, sizeof lines - 1));
    static const char att[] = "{\"tokens\": [\"a\", \"b\"], \"attention\": [[1, 0], [0.5, 0.5]]}";
    assert_null(fuzz_check_attn_json((const uint8_t *)att, sizeof att - 1));
    static const char st[] = "\x50\0\0\0\0\0\0\0"
        "{\"attention\": {\"dtype\": \"F16\", \"shape\": [1, 1], \"data_offsets\": [0, 2]}}"
        "        " "\x00\x3c";
    assert_int_equal(sizeof st - 1, 8 + 80 + 2);
    assert_null(fuzz_check_safetensors((const uint8_t *)st, sizeof st - 1));
    assert_null(fuzz_check_st_model((const uint8_t *)st, sizeof st - 1));
    static const char cfg[] = "{\"model_type\": \"gpt2\", \"n_layer\": 1, \"n_head\": 2, "
                              "\"n_embd\": 4, \"n_positions\": 8, \"vocab_size\": 5}";
    assert_null(fuzz_check_gpt2_config((const uint8_t *)cfg, sizeof cfg - 1));
    static const char lcfg[] = "{\"model_type\": \"qwen2\", \"hidden_size\": 8, "
                               "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
                               "\"intermediate_size\": 4, \"vocab_size\": 5}";
    assert_null(fuzz_check_llama_config((const uint8_t *)lcfg, sizeof lcfg - 1));
    static const char text[] = "It's 12 \xF0\x9F\x98\x80<|endoftext|>\xFF";
    assert_null(fuzz_check_bpe((const uint8_t *)text, sizeof text - 1));
    static const char tj[] = "\0{\"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"model\": "
                             "{\"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\"]}}";
    assert_null(fuzz_check_bpe_files((const uint8_t *)tj, sizeof tj - 1));
    static const char gg[] = "GGUF\3\0\0\0" "\0\0\0\0\0\0\0\0" "\0\0\0\0\0\0\0\0";
    assert_int_equal(sizeof gg - 1, 24);
    assert_null(fuzz_check_gguf((const uint8_t *)gg, sizeof gg - 1));
}

/* The split against PCRE2 at every code point, in three places (between a
 * letter and a digit, after a space, doubled before a space): a code point
 * Hugging Face's Unicode 16.0 classes otherwise than PCRE2's 14.0 is left out
 * (the fuzz target's rule), and those must stay few. */
static void bpe_split_every_code_point(void **state)
{
    (void)state;
    long compared = 0;
    for (unsigned cp = 1; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        char c[4];
        int n = (int)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)c);
        char texts[3][16];
        size_t lens[3];
        lens[0] = (size_t)snprintf(texts[0], sizeof texts[0], "a%.*s1", n, c);
        lens[1] = (size_t)snprintf(texts[1], sizeof texts[1], "x %.*s", n, c);
        lens[2] = (size_t)snprintf(texts[2], sizeof texts[2], "%.*s%.*s 'll", n, c, n, c);
        if (fuzz_class_pcre2(c, (size_t)n) != fuzz_class_split(cp))
            continue;
        compared++;
        for (int k = 0; k < 3; k++) {
            const char *bad = fuzz_bpe_split_check(texts[k], lens[k]);
            if (bad)
                fail_msg("U+%04X in text %d: %s", cp, k, bad);
        }
    }
    assert_true(compared > 1100000);
}

int main(void)
{
    struct CMUnitTest tests[N_TARGETS + 3];
    int n = 0;
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(harness_sanity);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(crash_files_name_a_target);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(bpe_split_every_code_point);
    for (int k = 0; k < N_TARGETS; k++) {
        struct CMUnitTest u = cmocka_unit_test_prestate(replay_target, (void *)&targets[k]);
        static char names[N_TARGETS][48];
        snprintf(names[k], sizeof names[k], "replay_%s", targets[k].name);
        u.name = names[k];
        tests[n++] = u;
    }
    return cmocka_run_group_tests_name("fuzz regressions", tests, NULL, NULL);
}
