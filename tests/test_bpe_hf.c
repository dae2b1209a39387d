/* Tests for today's open models' tokenizer.json files (src/io/bpe_files.c
 * and the pipeline of src/core/bpe.c, bpe_pre.c) on tests/fixtures/hftok/:
 * Llama 3, Qwen2, SmolLM2, Llama 2, Mistral, Gemma, GPT-NeoX, OLMo 2,
 * Phi-3 and DeepSeek V3 styles and the other Split behaviours, made by make_fixtures.py,
 * BERT's WordPiece (uncased and cased) and RoBERTa's, made by make_wordpiece.py,
 * T5's Unigram (SentencePiece's own models converted), made by make_unigram.py,
 * Unigrams with the Nmt and Lowercase normalizers and with unk_id null
 * (make_norms.py: the reference refuses a text with a character no piece
 * covers, ERROR in expected.tsv),
 * every case's ids (the template's
 * BOS included) and decoded text as Hugging Face's own tokenizers gave them
 * (make_expected.js); the BOS each template exposes; the labels of ▁ and
 * <0xNN> tokens; a model folder's tokenizer.json. Run from the repository
 * root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attnviz/bpe_files.h"
#include "test_util.h"

#define FIX "tests/fixtures/hftok/"

static Bpe *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, FIX "%s.json", name);
    AttnErr err = {0};
    Bpe *b = NULL;
    if (bpe_load_tokenizer_json(&b, path, &err) < 0)
        fail_msg("%s:%ld: %s", err.file, err.line, err.msg);
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

/* The input of case name from cases.tsv into out; its length. */
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
    fail_msg("no case %s in cases.tsv", name);
    return 0;
}

/* Every line of expected.tsv for tokenizer `which`; the number of lines. */
static int check_tokenizer(const char *which)
{
    size_t len;
    char *cases = test_slurp(FIX "cases.tsv", &len);
    char *data = test_slurp(FIX "expected.tsv", &len);
    assert_non_null(cases);
    assert_non_null(data);
    Bpe *b = load(which);
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
        if (strcmp(f[0], which) != 0)
            continue;
        char text[4096], want_dec[8192];
        size_t tn = case_text(cases, f[1], text, sizeof text);
        size_t wn = unhex(f[3], want_dec, sizeof want_dec);
        BpeIds ids = {0};
        AttnErr err = {0};
        int rc = bpe_encode_checked(b, text, tn, &ids, &err);
        if (strcmp(f[2], "ERROR") == 0) { /* refused by the reference: by us too, nothing kept */
            if (rc != -ATTN_E_UNSUPPORTED || ids.n || !strstr(err.msg, "unk_id is null")) {
                print_error("%s, \"%s\": the reference refuses it, got rc %d (%s)\n", which,
                            f[1], rc, err.msg);
                failed++;
            }
            bpe_ids_free(&ids);
            n++;
            continue;
        }
        if (rc != 0)
            fail_msg("%s, \"%s\": %s", which, f[1], err.msg);
        char got[8192] = "";
        for (int i = 0; i < ids.n; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", i ? " " : "", ids.id[i]);
        if (strcmp(got, f[2]) != 0) {
            print_error("%s, \"%s\":\n  want %s\n  got  %s\n", which, f[1], f[2], got);
            failed++;
        }
        /* decode: Hugging Face's string (invalid UTF-8 already U+FFFD) */
        char *dec = NULL, *clean = NULL;
        size_t dn = 0;
        assert_int_equal(bpe_decode(b, ids.id, ids.n, 0, &dec, &dn), 0);
        clean = malloc(3 * dn + 1);
        assert_non_null(clean);
        size_t cn = bpe_utf8_clean(clean, dec, dn);
        if (cn != wn || memcmp(clean, want_dec, wn) != 0) {
            print_error("%s, \"%s\": decode gives \"%.*s\", want \"%.*s\"\n", which, f[1],
                        (int)cn, clean, (int)wn, want_dec);
            failed++;
        }
        free(dec);
        free(clean);
        bpe_ids_free(&ids);
        n++;
    }
    bpe_destroy(b);
    free(data);
    free(cases);
    assert_int_equal(failed, 0);
    return n;
}

static void llama3_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("llama3") >= 40);
}

static void qwen2_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("qwen2") >= 40);
}

static void smollm2_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("smollm2") >= 40);
}

static void llama2_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("llama2") >= 40);
}

static void mistral_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("mistral") >= 40);
}

static void metaspace_always(void **state)
{
    (void)state;
    assert_true(check_tokenizer("metaspace") >= 40);
}

static void split_behaviours(void **state)
{
    (void)state;
    assert_true(check_tokenizer("splits") >= 40);
}

static void gemma_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("gemma") >= 70);
}

static void neox_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("neox") >= 70);
}

static void olmo2_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("olmo2") >= 70);
}

static void phi3_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("phi3") >= 70);
}

static void deepseek_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("deepseek") >= 70);
}

/* BERT's WordPiece (BertNormalizer, BertPreTokenizer, [CLS] ... [SEP]) */
static void bert_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("bert") >= 80);
}

/* a cased WordPiece: WhitespaceSplit and Whitespace, max_input_chars_per_word
 * 12, BertProcessing */
static void bert_cased_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("bert_cased") >= 80);
}

/* RoBERTa's byte-level BPE with RobertaProcessing (<s> ... </s>), <mask> lstrip */
static void roberta_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("roberta") >= 80);
}

/* T5's Unigram (tokenizers' Viterbi) with nmt_nfkc's precompiled_charsmap,
 * WhitespaceSplit + Metaspace, "$A </s>" */
static void t5_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("t5") >= 90);
}

/* the same model as today's SpmConverter writes it: Precompiled, Strip and
 * Replace in a Sequence, Metaspace "first" */
static void flan_t5_style(void **state)
{
    (void)state;
    assert_true(check_tokenizer("flan_t5") >= 90);
}

/* the older forms (Metaspace add_prefix_space, Unigram without
 * byte_fallback) and a charsmap of our own rules: a key spanning two
 * graphemes never matches, a key at a grapheme's start replaces it whole */
static void t5_old_forms(void **state)
{
    (void)state;
    assert_true(check_tokenizer("t5_old") >= 90);
}

/* WhitespaceSplit alone before a Unigram (no ▁ added) */
static void t5_whitespace_split(void **state)
{
    (void)state;
    assert_true(check_tokenizer("t5_ws") >= 90);
}

/* an identity Unigram with byte_fallback: unknown runs as their bytes */
static void unigram_byte_fallback(void **state)
{
    (void)state;
    assert_true(check_tokenizer("unigram_bytes") >= 90);
}

/* exact ties everywhere: the first path found wins (a later start must be
 * strictly better), and a score read as serde_json reads it ("qu") */
static void unigram_ties(void **state)
{
    (void)state;
    assert_true(check_tokenizer("unigram_ties") >= 90);
}

/* The Nmt normalizer (with NFKC, as nmt_nfkc without a charsmap) over T5's
 * pieces: controls, zero-width characters, tabs, CJK and emoji among the
 * cases. */
static void unigram_nmt(void **state)
{
    (void)state;
    assert_true(check_tokenizer("unigram_nmt") >= 95);
}

/* The Lowercase normalizer (char by char: no final sigma; İ to i and a
 * combining dot) before a byte-fallback Unigram. */
static void unigram_lowercase(void **state)
{
    (void)state;
    assert_true(check_tokenizer("unigram_lower") >= 95);
}

/* unk_id null: a text whose every character a piece covers is encoded; one
 * with a character none covers is refused, as the reference refuses it
 * (bpe_encode_checked), with the character named; bpe_encode leaves it out. */
static void unigram_no_unk(void **state)
{
    (void)state;
    assert_true(check_tokenizer("unigram_nounk") >= 95);
    Bpe *b = load("unigram_nounk");
    BpeIds ids = {0}, plain = {0};
    AttnErr err = {0};
    assert_int_equal(bpe_encode_checked(b, "a\xCE\xA9" "b", 4, &ids, &err), -ATTN_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "\xE2\x80\x9C\xCE\xA9\xE2\x80\x9D U+03A9 has no piece"));
    assert_int_equal(ids.n, 0);
    assert_int_equal(bpe_encode_checked(b, "a\x07" "b", 3, &ids, &err), -ATTN_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "U+0007 has no piece"));
    assert_null(strstr(err.msg, "\x07"));
    assert_int_equal(bpe_encode_template(b, "a\xCE\xA9" "b", 4, &plain), 0);
    assert_int_equal(bpe_encode_checked(b, "ab", 2, &ids, &err), 0);
    assert_true(plain.n == ids.n && memcmp(plain.id, ids.id, sizeof *ids.id * (size_t)ids.n) == 0);
    bpe_ids_free(&ids);
    bpe_ids_free(&plain);
    bpe_destroy(b);
}

/* t5_old.json with its precompiled_charsmap's base64 text replaced by the
 * text from..to of the original (cut) or with character at changed to
 * another base64 character (corrupt); parsed into *b, rc returned. */
static int charsmap_variant(const char *json, size_t at, size_t cut, int corrupt, Bpe **b,
                            AttnErr *err)
{
    const char *key = "\"precompiled_charsmap\":\"";
    const char *p = strstr(json, key);
    assert_non_null(p);
    size_t start = (size_t)(p - json) + strlen(key);
    size_t end = (size_t)(strchr(json + start, '"') - json);
    size_t len = strlen(json);
    char *v = malloc(len + 1);
    assert_non_null(v);
    memcpy(v, json, len + 1);
    if (corrupt) {
        v[start + at] = v[start + at] == 'A' ? 'Q' : 'A';
    } else {
        assert_true(cut <= end - start);
        memmove(v + start + cut, v + end, len - end + 1);
    }
    int rc = bpe_parse_tokenizer_json(b, v, strlen(v), "t5_old.json", err);
    free(v);
    return rc;
}

/* The charsmap reader on SentencePiece's own blob (t5_old.json's), cut at
 * every 4 base64 characters and with every character of its text changed:
 * a blob cut inside its trie is refused naming the file and the field,
 * never a crash; a corrupt trie still encodes every case to tokens of the
 * vocabulary (ASan in make SAN=1 watches the reads). */
static void charsmap_cut_and_corrupt(void **state)
{
    (void)state;
    size_t len;
    char *json = test_slurp(FIX "t5_old.json", &len);
    char *cases = test_slurp(FIX "cases.tsv", &len);
    assert_non_null(json);
    assert_non_null(cases);
    const char *p = strstr(json, "\"precompiled_charsmap\":\"") + 24;
    size_t n64 = (size_t)(strchr(p, '"') - p);
    /* the trie's size: the blob's first four bytes (little-endian), in its
     * first 8 base64 characters (6 bytes) */
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++)
        bits = bits << 6 | (uint64_t)(strchr(abc, p[i]) - abc);
    size_t trie = 0;
    for (int i = 0; i < 4; i++)
        trie |= (size_t)(bits >> (40 - 8 * i) & 0xFF) << (8 * i);
    assert_true(trie > 64 && 4 + trie < n64 * 3 / 4);
    int refused = 0, read = 0;
    for (size_t cut = 0; cut < n64; cut += 4) {
        AttnErr err = {0};
        Bpe *b = NULL;
        int rc = charsmap_variant(json, 0, cut, 0, &b, &err);
        if (cut / 4 * 3 < 4 + trie) { /* the trie is not all there */
            if (rc != -ATTN_E_PARSE || strcmp(err.file, "t5_old.json") != 0 ||
                !strstr(err.msg, "precompiled_charsmap") || b)
                fail_msg("cut at %zu: rc %d, %s: %s", cut, rc, err.file, err.msg);
            refused++;
        } else if (rc == 0) {
            read++;
        }
        bpe_destroy(b);
    }
    assert_true(refused > 100 && read > 0);
    static const char *const names[] = {"uni_graphemes", "uni_ligatures", "uni_fullwidth",
                                        "accents", "nfkc", "emoji"};
    for (size_t at = 8; at < n64; at++) {
        AttnErr err = {0};
        Bpe *b = NULL;
        if (charsmap_variant(json, at, 0, 1, &b, &err) < 0) {
            assert_non_null(strstr(err.msg, "precompiled_charsmap"));
            continue;
        }
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            char text[4096];
            size_t tn = case_text(cases, names[k], text, sizeof text);
            BpeIds ids = {0};
            assert_int_equal(bpe_encode_template(b, text, tn, &ids), 0);
            for (int i = 0; i < ids.n; i++)
                assert_true(ids.id[i] >= 0 && ids.id[i] < bpe_n_vocab(b));
            bpe_ids_free(&ids);
        }
        bpe_destroy(b);
    }
    free(cases);
    free(json);
}

/* The template's ids: Llama 3's <|begin_of_text|>, Llama 2's <s>; none for
 * Qwen2 and SmolLM2. bpe_encode gives the text's ids alone. */
static void template_ids(void **state)
{
    (void)state;
    static const struct {
        const char *file, *bos;
    } t[] = {{"llama3", "<|begin_of_text|>"}, {"llama2", "<s>"}, {"mistral", "<s>"},
             {"qwen2", NULL}, {"smollm2", NULL}, {"metaspace", NULL}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        Bpe *b = load(t[i].file);
        int nb = -1, na = -1;
        const int *before = bpe_template_before(b, &nb);
        assert_non_null(bpe_template_after(b, &na) == NULL ? "" : NULL);
        assert_int_equal(na, 0);
        if (t[i].bos) {
            assert_int_equal(nb, 1);
            assert_int_equal(before[0], bpe_token_id(b, t[i].bos, strlen(t[i].bos)));
            assert_true(bpe_is_special(b, before[0]));
        } else {
            assert_int_equal(nb, 0);
            assert_null(before);
        }
        BpeIds plain = {0}, full = {0};
        assert_int_equal(bpe_encode(b, "hi there", 8, &plain), 0);
        assert_int_equal(bpe_encode_template(b, "hi there", 8, &full), 0);
        assert_int_equal(full.n, plain.n + nb);
        for (int k = 0; k < plain.n; k++)
            assert_int_equal(full.id[nb + k], plain.id[k]);
        bpe_ids_free(&plain);
        bpe_ids_free(&full);
        bpe_destroy(b);
    }
}

/* Labels: '▁' is a space (shown with the caller's mark, as GPT-2's 'Ġ');
 * <0xNN> tokens are their byte (a lone part of a character as ‹0xNN›, a
 * whole one as itself); --print tokens prints the BOS first. */
static void sentencepiece_labels(void **state)
{
    (void)state;
    Bpe *b = load("mistral");
    char out[64];
    int id = bpe_token_id(b, "\xE2\x96\x81", 3);
    assert_true(id >= 0);
    assert_int_equal(bpe_token_text(b, id, "\xC4\xA0", out, sizeof out), 2);
    assert_string_equal(out, "\xC4\xA0");
    bpe_token_text(b, id, NULL, out, sizeof out);
    assert_string_equal(out, " ");
    id = bpe_token_id(b, "<0xE9>", 6);
    assert_true(id >= 0);
    bpe_token_text(b, id, NULL, out, sizeof out);
    assert_string_equal(out, "\xE2\x80\xB9" "0xE9" "\xE2\x80\xBA");
    id = bpe_token_id(b, "<0x41>", 6);
    bpe_token_text(b, id, NULL, out, sizeof out);
    assert_string_equal(out, "A");
    /* 龍 has no token: three byte-fallback tokens that decode to it */
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, "\xE9\xBE\x8D", 3, &ids), 0);
    assert_true(ids.n >= 3);
    char *dec = NULL;
    size_t dn = 0;
    assert_int_equal(bpe_decode(b, ids.id + ids.n - 3, 3, 0, &dec, &dn), 0);
    assert_int_equal(dn, 3);
    assert_memory_equal(dec, "\xE9\xBE\x8D", 3);
    free(dec);
    bpe_ids_free(&ids);
    /* --print tokens: <s> first, then ▁ tokens with their space */
    assert_int_equal(bpe_encode_template(b, "hi", 2, &ids), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(bpe_print_tokens(f, b, ids.id, ids.n), 0);
    rewind(f);
    char line[128];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "1\t\"<s>\"\n");
    fclose(f);
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

/* A model folder with only tokenizer.json opens through bpe_load_dir. */
static void model_folder(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-hftok-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    size_t len;
    char *data = test_slurp(FIX "llama3.json", &len);
    assert_non_null(data);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    free(data);
    Bpe *b = NULL;
    AttnErr err = {0};
    assert_int_equal(bpe_load_dir(&b, dir, &err), 0);
    int nb;
    const int *bos = bpe_template_before(b, &nb);
    assert_int_equal(nb, 1);
    assert_int_equal(bos[0], bpe_token_id(b, "<|begin_of_text|>", 17));
    bpe_destroy(b);
    remove(path);
    rmdir(dir);
}

/* A keystroke's tokenization stays small beside the forward: about 2 KB
 * of text through the Llama 3 style (PCRE2 split), the Mistral style
 * (characters, byte fallback) and T5's (the charsmap by graphemes, then
 * Viterbi), the time printed. */
static void encode_time(void **state)
{
    (void)state;
    size_t len;
    char *text = test_slurp("src/README.md", &len);
    assert_non_null(text);
    if (len > 2048)
        len = 2048;
    static const char *const names[] = {"llama3", "mistral", "t5"};
    for (int k = 0; k < 3; k++) {
        Bpe *b = load(names[k]);
        BpeIds ids = {0};
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(bpe_encode_template(b, text, len, &ids), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
        printf("%s: %d tokens (%zu bytes) in %.0f us\n", names[k], ids.n, len, us);
        assert_true(ids.n > 300);
        assert_true(us < 50000);
        bpe_ids_free(&ids);
        bpe_destroy(b);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama3_style),     cmocka_unit_test(qwen2_style),
        cmocka_unit_test(smollm2_style),    cmocka_unit_test(llama2_style),
        cmocka_unit_test(mistral_style),    cmocka_unit_test(metaspace_always),
        cmocka_unit_test(split_behaviours), cmocka_unit_test(gemma_style),
        cmocka_unit_test(neox_style),       cmocka_unit_test(olmo2_style),
        cmocka_unit_test(phi3_style),       cmocka_unit_test(deepseek_style),
        cmocka_unit_test(bert_style),       cmocka_unit_test(bert_cased_style),
        cmocka_unit_test(roberta_style),    cmocka_unit_test(t5_style),
        cmocka_unit_test(flan_t5_style),    cmocka_unit_test(t5_old_forms),
        cmocka_unit_test(t5_whitespace_split),
        cmocka_unit_test(unigram_byte_fallback), cmocka_unit_test(unigram_ties),
        cmocka_unit_test(unigram_nmt), cmocka_unit_test(unigram_lowercase),
        cmocka_unit_test(unigram_no_unk),
        cmocka_unit_test(charsmap_cut_and_corrupt),
        cmocka_unit_test(template_ids),
        cmocka_unit_test(sentencepiece_labels), cmocka_unit_test(model_folder),
        cmocka_unit_test(encode_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
