/* Tests for a GGUF file's tokenizer (src/core/gguf_vocab.c): each vocabulary
 * of tests/fixtures/gguf_vocab/ (made by make_fixtures.py from the
 * tokenizer.json fixtures, as llama.cpp's converter writes them) built from
 * its arrays (the JSON dump beside each .gguf: no GGUF reader here), every
 * case of hftok/cases.tsv and gguf_vocab/cases.tsv tokenized and decoded,
 * compared with llama.cpp's own ids and text (expected.tsv, by
 * make_expected.py through node-llama-cpp's prebuilt libllama: the bytes as
 * given, invalid UTF-8 too). Also: a wrong split
 * or merge order is caught by those ids, and the errors name the array,
 * index or value. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gguf_vocab.h"
#include "test_util.h"

#define FIX "tests/fixtures/gguf_vocab/"

/* A vocabulary's arrays as read from its JSON dump, owning them. */
typedef struct Arrays {
    cJSON *root;
    GgufVocab v;
    const char **tokens, **merges;
    size_t *token_lens, *merge_lens;
    float *scores;
    int32_t *types;
    int n, nm;
} Arrays;

static int num(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(x) ? x->valueint : -1;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* A copy of s without its NUL, as a GGUF file's strings are (SAN=1 catches
 * a read past one); *len set. */
static const char *unterminated(const char *s, size_t *len)
{
    *len = strlen(s);
    char *c = malloc(*len ? *len : 1);
    assert_non_null(c);
    memcpy(c, s, *len);
    return c;
}

static void load_arrays(Arrays *a, const char *name)
{
    char path[256];
    size_t len;
    snprintf(path, sizeof path, FIX "%s.json", name);
    char *text = test_slurp(path, &len);
    assert_non_null(text);
    memset(a, 0, sizeof *a);
    a->root = cJSON_ParseWithLength(text, len);
    free(text);
    assert_non_null(a->root);
    const cJSON *r = a->root;
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(r, "tokens");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(r, "scores");
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(r, "types");
    const cJSON *mg = cJSON_GetObjectItemCaseSensitive(r, "merges");
    int n = cJSON_GetArraySize(tok), nm = cJSON_IsArray(mg) ? cJSON_GetArraySize(mg) : 0;
    a->n = n;
    a->nm = nm;
    a->tokens = calloc((size_t)n, sizeof *a->tokens);
    a->token_lens = calloc((size_t)n, sizeof *a->token_lens);
    a->types = calloc((size_t)n, sizeof *a->types);
    a->scores = cJSON_IsArray(sc) ? calloc((size_t)n, sizeof *a->scores) : NULL;
    a->merges = calloc((size_t)nm + 1, sizeof *a->merges);
    a->merge_lens = calloc((size_t)nm + 1, sizeof *a->merge_lens);
    assert_true(a->tokens && a->token_lens && a->types && a->merges && a->merge_lens);
    for (int i = 0; i < n; i++) {
        a->tokens[i] = unterminated(cJSON_GetArrayItem(tok, i)->valuestring, &a->token_lens[i]);
        a->types[i] = cJSON_GetArrayItem(ty, i)->valueint;
        if (a->scores)
            a->scores[i] = (float)cJSON_GetArrayItem(sc, i)->valuedouble;
    }
    for (int i = 0; i < nm; i++)
        a->merges[i] = unterminated(cJSON_GetArrayItem(mg, i)->valuestring, &a->merge_lens[i]);
    a->v = (GgufVocab){.model = str(r, "model"), .pre = str(r, "pre"), .n_tokens = n,
                       .tokens = a->tokens, .token_lens = a->token_lens, .scores = a->scores,
                       .types = a->types, .n_merges = nm, .merges = a->merges,
                       .merge_lens = a->merge_lens, .bos_id = num(r, "bos"),
                       .eos_id = num(r, "eos"), .unk_id = num(r, "unk"), .pad_id = num(r, "pad"),
                       .add_bos = num(r, "add_bos"), .add_eos = num(r, "add_eos"),
                       .add_space_prefix = num(r, "add_space_prefix"), .name = str(r, "name")};
}

static void free_arrays(Arrays *a)
{
    for (int i = 0; i < a->n; i++)
        free((void *)a->tokens[i]);
    for (int i = 0; i < a->nm; i++)
        free((void *)a->merges[i]);
    free(a->tokens);
    free(a->token_lens);
    free(a->types);
    free(a->scores);
    free(a->merges);
    free(a->merge_lens);
    cJSON_Delete(a->root);
}

static Bpe *build(const GgufVocab *v)
{
    Bpe *b = NULL;
    AttnErr err = {0};
    if (gguf_vocab_build(&b, v, &err) < 0)
        fail_msg("gguf_vocab_build: %s", err.msg);
    return b;
}

static size_t unhex(const char *hex, char *out, size_t cap)
{
    size_t k = 0, n = strlen(hex);
    for (size_t i = 0; i + 1 < n && k < cap; i += 2) {
        unsigned v;
        assert_int_equal(sscanf(hex + i, "%2x", &v), 1);
        out[k++] = (char)v;
    }
    return k;
}

/* The input of case name (from either cases.tsv) into out; its length. */
static size_t case_text(const char *cases, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *p = cases; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, n) == 0 && p[n] == '\t') {
            char hex[8192];
            size_t k = strcspn(p + n + 1, "\n");
            assert_true(k < sizeof hex);
            memcpy(hex, p + n + 1, k);
            hex[k] = '\0';
            return unhex(hex, out, cap);
        }
    }
    fail_msg("no case %s", name);
    return 0;
}

static char *all_cases(void)
{
    size_t n1, n2;
    char *a = test_slurp("tests/fixtures/hftok/cases.tsv", &n1);
    char *b = test_slurp(FIX "cases.tsv", &n2);
    assert_non_null(a);
    assert_non_null(b);
    char *c = malloc(n1 + n2 + 2);
    assert_non_null(c);
    memcpy(c, a, n1);
    c[n1] = '\n';
    memcpy(c + n1 + 1, b, n2);
    c[n1 + n2 + 1] = '\0';
    free(a);
    free(b);
    return c;
}

/* decode(ids, skip_special) against hex (llama.cpp's bytes); 0 when equal. */
static int check_decode(const Bpe *b, const BpeIds *ids, int skip, const char *hex,
                        const char *what)
{
    char want[8192], *dec = NULL;
    size_t wn = unhex(hex, want, sizeof want), dn = 0;
    assert_int_equal(bpe_decode(b, ids->id, ids->n, skip, &dec, &dn), 0);
    int bad = dn != wn || memcmp(dec, want, wn) != 0;
    if (bad)
        print_error("%s: decode(skip %d) gives \"%.*s\", llama.cpp \"%.*s\"\n", what, skip,
                    (int)dn, dec, (int)wn, want);
    free(dec);
    return bad;
}

/* Every line of expected.tsv for vocabulary `which`, through b: the lines
 * whose ids differ (decoding too when decode); *n_lines set. */
static int run_cases(const Bpe *b, const char *which, int decode, int *n_lines, int quiet)
{
    size_t len;
    char *cases = all_cases();
    char *data = test_slurp(FIX "expected.tsv", &len);
    assert_non_null(data);
    int n = 0, failed = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[5] = {line, NULL, NULL, NULL, NULL};
        for (int i = 1; i < 5; i++) {
            f[i] = strchr(f[i - 1], '\t');
            assert_non_null(f[i]);
            *f[i]++ = '\0';
        }
        if (strcmp(f[0], which) != 0)
            continue;
        char text[4096], what[128];
        size_t tn = case_text(cases, f[1], text, sizeof text);
        snprintf(what, sizeof what, "%s, %s", which, f[1]);
        BpeIds ids = {0};
        assert_int_equal(bpe_encode_template(b, text, tn, &ids), 0);
        char got[16384] = "";
        for (int i = 0; i < ids.n; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", i ? " " : "", ids.id[i]);
        int bad = strcmp(got, f[2]) != 0;
        if (bad && !quiet)
            print_error("%s:\n  llama.cpp %s\n  here      %s\n", what, f[2], got);
        if (!bad && decode)
            bad = check_decode(b, &ids, 0, f[3], what) | check_decode(b, &ids, 1, f[4], what);
        failed += bad;
        bpe_ids_free(&ids);
        n++;
    }
    free(data);
    free(cases);
    *n_lines = n;
    return failed;
}

static void check_vocab(const char *which)
{
    Arrays a;
    load_arrays(&a, which);
    Bpe *b = build(&a.v);
    int n = 0;
    int failed = run_cases(b, which, 1, &n, 0);
    bpe_destroy(b);
    free_arrays(&a);
    assert_true(n >= 100);
    assert_int_equal(failed, 0);
}

#define VOCAB_TEST(fn, name)                                                                       \
    static void fn(void **state)                                                                   \
    {                                                                                              \
        (void)state;                                                                               \
        check_vocab(name);                                                                         \
    }

VOCAB_TEST(llama3_bpe, "llama3")
VOCAB_TEST(llama3_no_bos, "llama3-nobos")
VOCAB_TEST(qwen2_pre, "qwen2")
VOCAB_TEST(longest_special_first, "qwen2-overlap")
VOCAB_TEST(smollm_pre, "smollm2")
VOCAB_TEST(gpt2_pre, "gpt2")
VOCAB_TEST(neox_user_defined, "neox")
VOCAB_TEST(default_pre, "olmo2-default")
VOCAB_TEST(llama2_spm, "llama2")
VOCAB_TEST(mistral_equal_scores, "mistral")
VOCAB_TEST(gemma_spm, "gemma")
VOCAB_TEST(phi3_rstrip, "phi3")

/* Every token of every vocabulary decoded alone, both ways, as llama.cpp's
 * detokenize gives it (pieces.tsv): control and unknown tokens' text only
 * when not skipped, unused tokens nothing, ▁ and <0xNN>, byte-level text. */
static void every_piece(void **state)
{
    (void)state;
    size_t len;
    char *data = test_slurp(FIX "pieces.tsv", &len);
    assert_non_null(data);
    char cur[64] = "";
    Arrays a;
    Bpe *b = NULL;
    int n = 0, failed = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *f[4] = {line, NULL, NULL, NULL};
        for (int i = 1; i < 4; i++) {
            f[i] = strchr(f[i - 1], '\t');
            assert_non_null(f[i]);
            *f[i]++ = '\0';
        }
        if (strcmp(cur, f[0]) != 0) {
            if (b) {
                bpe_destroy(b);
                free_arrays(&a);
            }
            snprintf(cur, sizeof cur, "%s", f[0]);
            load_arrays(&a, cur);
            b = build(&a.v);
        }
        BpeIds ids = {.id = (int[]){atoi(f[1])}, .n = 1};
        char what[96];
        snprintf(what, sizeof what, "%s, token %s", f[0], f[1]);
        failed += check_decode(b, &ids, 0, f[2], what) + check_decode(b, &ids, 1, f[3], what);
        n++;
    }
    bpe_destroy(b);
    free_arrays(&a);
    free(data);
    assert_true(n > 7000);
    assert_int_equal(failed, 0);
}

/* The comparison catches a wrong split: the vocabulary of `which` built with
 * pre `pre` instead of its own gives other ids on some cases. */
static int wrong_pre(const char *which, const char *pre)
{
    Arrays a;
    load_arrays(&a, which);
    a.v.pre = pre;
    Bpe *b = build(&a.v);
    int n = 0, failed = run_cases(b, which, 0, &n, 1);
    bpe_destroy(b);
    free_arrays(&a);
    return failed;
}

static void wrong_split_is_caught(void **state)
{
    (void)state;
    assert_true(wrong_pre("llama3", "gpt-2") > 0);
    assert_true(wrong_pre("qwen2", "gpt-2") > 0);
    assert_true(wrong_pre("smollm2", "gpt-2") > 0);
    assert_true(wrong_pre("gpt2", "default") > 0);
    assert_true(wrong_pre("olmo2-default", "gpt-2") > 0);
    assert_true(wrong_pre("llama3", "dbrx") > 0); /* the same split, no ignore_merges, no BOS */
}

/* ... and a wrong merge order: Mistral's vocabulary (every score -1000, so
 * llama.cpp merges leftmost first) with its scores made the ids' order (as a
 * merge by rank or by id would merge) gives other ids; Llama 2's with every
 * score equal too. */
static void wrong_merge_order_is_caught(void **state)
{
    (void)state;
    const char *which[] = {"mistral", "llama2"};
    for (int k = 0; k < 2; k++) {
        Arrays a;
        load_arrays(&a, which[k]);
        for (int i = 0; i < a.v.n_tokens; i++)
            a.scores[i] = k == 0 ? -(float)i : 0.0f;
        Bpe *b = build(&a.v);
        int n = 0, failed = run_cases(b, which[k], 0, &n, 1);
        assert_true(failed > 0);
        bpe_destroy(b);
        free_arrays(&a);
    }
}

/* Special tokens found by text: with a vocabulary where "</s>" is a normal
 * token, llama.cpp still cuts it out whole (it makes </s> control), and a
 * user-defined run of spaces is cut out before the longer word around it. */
static void special_by_text(void **state)
{
    (void)state;
    const char *tok[] = {"a", "b", "</s>", "<", "/", "s", ">", "Ġ", "ĠĠ"};
    size_t lens[9];
    int32_t types[9] = {1, 1, 1, 1, 1, 1, 1, 1, 4};
    for (int i = 0; i < 9; i++)
        lens[i] = strlen(tok[i]);
    GgufVocab v = {.model = "gpt2", .pre = "gpt-2", .n_tokens = 9, .tokens = tok,
                   .token_lens = lens, .types = types, .bos_id = -1, .eos_id = -1,
                   .unk_id = -1, .pad_id = -1, .add_bos = -1, .add_eos = -1,
                   .add_space_prefix = -1};
    Bpe *b = build(&v);
    BpeIds ids = {0};
    assert_int_equal(bpe_encode_template(b, "a</s>b", 6, &ids), 0);
    assert_int_equal(ids.n, 3); /* a, </s>, b: no BOS for gpt-2 */
    assert_int_equal(ids.id[0], 0);
    assert_int_equal(ids.id[1], 2);
    assert_int_equal(ids.id[2], 1);
    char *d = NULL;
    size_t dn = 0;
    assert_int_equal(bpe_decode(b, ids.id, ids.n, 1, &d, &dn), 0);
    assert_string_equal(d, "ab"); /* control: silent when skipped */
    free(d);
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

static void expect_error(const GgufVocab *v, const char *want)
{
    Bpe *b = (Bpe *)1;
    AttnErr err = {0};
    assert_true(gguf_vocab_build(&b, v, &err) < 0);
    assert_null(b);
    if (!strstr(err.msg, want))
        fail_msg("error \"%s\" does not say \"%s\"", err.msg, want);
}

static void errors_name_the_field(void **state)
{
    (void)state;
    const char *tok[] = {"a", "b", "ab", "a"};
    size_t lens[] = {1, 1, 2, 1};
    const char *merges[] = {"a b", "a c", "ab"};
    size_t mlens[] = {3, 3, 2};
    GgufVocab v = {.model = "gpt2", .pre = "gpt-2", .n_tokens = 3, .tokens = tok,
                   .token_lens = lens, .n_merges = 1, .merges = merges, .merge_lens = mlens,
                   .bos_id = -1, .eos_id = -1, .unk_id = -1, .pad_id = -1, .add_bos = -1,
                   .add_eos = -1, .add_space_prefix = -1};
    Bpe *b = build(&v);
    bpe_destroy(b);
    GgufVocab w = v;
    w.pre = "xyz";
    expect_error(&w, "tokenizer.ggml.pre \"xyz\" is not computed (default, llama-bpe");
    w = v;
    w.model = "bert";
    expect_error(&w, "tokenizer.ggml.model \"bert\" is not computed (gpt2, llama)");
    w = v;
    w.n_merges = 2;
    expect_error(&w, "tokenizer.ggml.merges[1]: \"c\" is not a token");
    w = v;
    w.merges = merges + 2;
    expect_error(&w, "tokenizer.ggml.merges[0]: \"ab\" is not two tokens and a space");
    w = v;
    w.n_tokens = 4;
    expect_error(&w, "tokenizer.ggml.tokens[3]: \"a\" is also token 0");
    w = v;
    w.add_bos = 1; /* the default bos 11 is past the vocabulary */
    expect_error(&w, "tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id");
    w = v;
    w.n_tokens = 0;
    expect_error(&w, "tokenizer.ggml.tokens has 0 tokens");
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Arbitrary arrays (tokens of random bytes, some not UTF-8, random types,
 * scores, merges, options): the build succeeds or fails with a message,
 * never a crash, and a built vocabulary encodes and decodes any bytes (the
 * sanitizer build checks the memory). */
static void random_arrays(void **state)
{
    (void)state;
    static const char *const pieces[] = {"a", "b", " ", "<", ">", "s", "/", "\xC3", "\xA9",
                                         "\xE2\x96\x81", "\xC4\xA0", "1", "'", "\n", "<s>",
                                         "</s>", "<0x41>", "\xF0\x9F\x98\x80"};
    static const char *const pre_names[] = {"gpt-2", "llama-bpe", "qwen2", "smollm", "default",
                                            NULL, "nope"};
    uint64_t seed = 88172645463325252ull;
#define RND() xorshift(&seed)
    int built = 0, refused = 0;
    for (int trial = 0; trial < 300; trial++) {
        enum { N = 40 };
        char text[N][16], merge[N][40];
        const char *tok[N], *mg[N];
        size_t lens[N], mlens[N];
        int32_t types[N];
        float scores[N];
        int n = 1 + (int)(RND() % N), nm = (int)(RND() % N);
        for (int i = 0; i < n; i++) {
            text[i][0] = '\0';
            for (int k = (int)(RND() % 3); k >= 0; k--)
                strcat(text[i], pieces[RND() % (sizeof pieces / sizeof pieces[0])]);
            tok[i] = text[i];
            lens[i] = strlen(text[i]);
            types[i] = (int32_t)(RND() % 8);
            scores[i] = (float)(RND() % 7) - 3.0f;
        }
        for (int i = 0; i < nm; i++) {
            const char *l = tok[RND() % (uint64_t)n], *sp = RND() % 8 ? " " : "",
                       *r = tok[RND() % (uint64_t)n];
            snprintf(merge[i], sizeof merge[i], "%s%s%s", l, sp, r);
            mg[i] = merge[i];
            mlens[i] = strlen(merge[i]);
        }
        GgufVocab v = {.model = RND() % 2 ? "gpt2" : "llama",
                       .pre = pre_names[RND() % (sizeof pre_names / sizeof pre_names[0])],
                       .n_tokens = n, .tokens = tok, .token_lens = lens,
                       .scores = RND() % 2 ? scores : NULL, .types = RND() % 4 ? types : NULL,
                       .n_merges = nm, .merges = mg, .merge_lens = mlens,
                       .bos_id = (int)(RND() % (uint64_t)(n + 2)) - 1, .eos_id = -1,
                       .unk_id = (int)(RND() % (uint64_t)(n + 2)) - 1, .pad_id = -1,
                       .add_bos = (int)(RND() % 3) - 1, .add_eos = (int)(RND() % 3) - 1,
                       .add_space_prefix = (int)(RND() % 3) - 1,
                       .name = RND() % 4 ? NULL : "phi3"};
        Bpe *b = NULL;
        AttnErr err = {0};
        if (gguf_vocab_build(&b, &v, &err) < 0) {
            assert_null(b);
            assert_true(err.msg[0] != '\0');
            refused++;
            continue;
        }
        built++;
        for (int t = 0; t < 10; t++) {
            char in[64] = "";
            for (int k = (int)(RND() % 8); k >= 0; k--)
                strcat(in, pieces[RND() % (sizeof pieces / sizeof pieces[0])]);
            BpeIds ids = {0};
            assert_int_equal(bpe_encode_template(b, in, strlen(in), &ids), 0);
            for (int i = 0; i < ids.n; i++)
                assert_true(ids.id[i] >= 0 && ids.id[i] < n);
            char *d = NULL;
            size_t dn = 0;
            assert_int_equal(bpe_decode(b, ids.id, ids.n, (int)(RND() % 2), &d, &dn), 0);
            free(d);
            bpe_ids_free(&ids);
        }
        bpe_destroy(b);
    }
#undef RND
    assert_true(built > 20);
    assert_true(refused > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama3_bpe),
        cmocka_unit_test(llama3_no_bos),
        cmocka_unit_test(qwen2_pre),
        cmocka_unit_test(longest_special_first),
        cmocka_unit_test(smollm_pre),
        cmocka_unit_test(gpt2_pre),
        cmocka_unit_test(neox_user_defined),
        cmocka_unit_test(default_pre),
        cmocka_unit_test(llama2_spm),
        cmocka_unit_test(mistral_equal_scores),
        cmocka_unit_test(gemma_spm),
        cmocka_unit_test(phi3_rstrip),
        cmocka_unit_test(every_piece),
        cmocka_unit_test(wrong_split_is_caught),
        cmocka_unit_test(wrong_merge_order_is_caught),
        cmocka_unit_test(special_by_text),
        cmocka_unit_test(errors_name_the_field),
        cmocka_unit_test(random_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
