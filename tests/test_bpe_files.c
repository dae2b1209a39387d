/* Tests for GPT-2's tokenizer files (src/io/bpe_files.c) on the fixtures of
 * tests/fixtures/gpt2tok/ (a vocabulary and merges made by make_fixtures.py,
 * whose reference encoder's ids were checked against Hugging Face's
 * tokenizers by check_hf.js): every case's ids through vocab.json +
 * merges.txt, tokenizer.json, tokenizer_pairs.json and
 * tokenizer_options.json; every token's display text; --print tokens'
 * lines; bad files (their file, line and message; T5's Unigram and
 * Precompiled fields among them); a model folder, and one with only
 * SentencePiece models; the time to tokenize about 1024 tokens. Run from
 * the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attnviz/bpe_files.h"
#include "test_util.h"

#define FIX "tests/fixtures/gpt2tok/"

static Bpe *load_json(const char *name)
{
    AttnErr err = {0};
    Bpe *b = NULL;
    if (bpe_load_tokenizer_json(&b, name, &err) < 0)
        fail_msg("%s:%ld: %s", err.file, err.line, err.msg);
    return b;
}

static Bpe *load_vocab_merges(void)
{
    AttnErr err = {0};
    Bpe *b = NULL;
    if (bpe_load_vocab_merges(&b, FIX "vocab.json", FIX "merges.txt", &err) < 0)
        fail_msg("%s:%ld: %s", err.file, err.line, err.msg);
    return b;
}

static size_t unhex(const char *hex, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned v;
        assert_int_equal(sscanf(hex + i, "%2x", &v), 1);
        out[k++] = (char)v;
    }
    return k;
}

/* Every line of cases.tsv through b: the ids of column col (2: the plain
 * tokenizer's, 3: tokenizer_options.json's). */
static void check_cases(const Bpe *b, int col, const char *what)
{
    size_t len;
    char *data = test_slurp(FIX "cases.tsv", &len);
    assert_non_null(data);
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
        char text[4096];
        size_t tn = unhex(f[1], strlen(f[1]), text);
        BpeIds ids = {0};
        assert_int_equal(bpe_encode(b, text, tn, &ids), 0);
        char got[8192] = "";
        for (int i = 0; i < ids.n; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", i ? " " : "", ids.id[i]);
        if (strcmp(got, f[col]) != 0) {
            print_error("%s, \"%s\":\n  want %s\n  got  %s\n", what, f[0], f[col], got);
            failed++;
        }
        bpe_ids_free(&ids);
        n++;
    }
    free(data);
    assert_true(n >= 250);
    assert_int_equal(failed, 0);
}

static void cases_vocab_merges(void **state)
{
    (void)state;
    Bpe *b = load_vocab_merges();
    assert_int_equal(bpe_n_vocab(b), 859);
    assert_int_equal(bpe_n_merges(b), 600);
    check_cases(b, 2, "vocab.json + merges.txt");
    assert_true(bpe_is_special(b, 858));
    bpe_destroy(b);
}

static void cases_tokenizer_json(void **state)
{
    (void)state;
    Bpe *b = load_json(FIX "tokenizer.json");
    check_cases(b, 2, "tokenizer.json");
    bpe_destroy(b);
    b = load_json(FIX "tokenizer_pairs.json");
    check_cases(b, 2, "tokenizer_pairs.json");
    bpe_destroy(b);
    b = load_json(FIX "tokenizer_options.json");
    assert_int_equal(bpe_n_vocab(b), 863);
    assert_int_equal(bpe_n_merges(b), 601);
    check_cases(b, 3, "tokenizer_options.json");
    bpe_destroy(b);
}

/* Every token's display text as make_fixtures.py's display() gives it. */
static void display_texts(void **state)
{
    (void)state;
    Bpe *b = load_vocab_merges();
    size_t len;
    char *data = test_slurp(FIX "display.tsv", &len);
    assert_non_null(data);
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        char want[512], got[512];
        size_t wn = unhex(tab + 1, strlen(tab + 1), want);
        want[wn] = '\0';
        int id = atoi(line);
        assert_int_equal(bpe_token_text(b, id, NULL, got, sizeof got), wn);
        if (strcmp(got, want) != 0)
            fail_msg("id %d: got \"%s\", want \"%s\"", id, got, want);
        n++;
    }
    assert_int_equal(n, 859);
    free(data);
    bpe_destroy(b);
}

static void print_tokens(void **state)
{
    (void)state;
    Bpe *b = load_json(FIX "tokenizer.json");
    static const char text[] = "\"Hi\"\tyou\n\xF0\x9F\xA6\x80<|endoftext|>";
    BpeIds ids = {0};
    assert_int_equal(bpe_encode(b, text, sizeof text - 1, &ids), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(bpe_print_tokens(f, b, ids.id, ids.n), 0);
    size_t len;
    char *out = test_read_back(f, &len);
    /* the ids and texts make_fixtures.py's encode() and display() give; 🦀
     * (F0 9F A6 80) is three tokens, the first two bytes merged */
    assert_string_equal(out, "380\t\"\\\"\"\n"
                             "252\t\"H\"\n"
                             "548\t\"i\"\n"
                             "380\t\"\\\"\"\n"
                             "31\t\"\\t\"\n"
                             "188\t\"y\"\n"
                             "742\t\"ou\"\n"
                             "451\t\"\\n\"\n"
                             "734\t\"‹0xF0›‹0x9F›\"\n"
                             "640\t\"‹0xA6›\"\n"
                             "540\t\"‹0x80›\"\n"
                             "858\t\"<|endoftext|>\"\n");
    free(out);
    fclose(f);
    /* an empty text prints nothing */
    f = tmpfile();
    assert_non_null(f);
    assert_int_equal(bpe_print_tokens(f, b, NULL, 0), 0);
    assert_int_equal(ftell(f), 0);
    fclose(f);
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

/* ---- bad files ----------------------------------------------------------------------------- */

typedef struct Bad {
    const char *vocab, *merges; /* vocab.json and merges.txt; merges NULL: vocab is a tokenizer.json */
    int code;
    const char *file;
    long line;
    const char *msg; /* a part of the message */
} Bad;

#define V3 "{\"a\": 0, \"b\": 1, \"ab\": 2}"
#define TJ_BODY(model) "\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false},\n" \
                       " \"model\": " model
#define TJ(model) "{" TJ_BODY(model) "}"
/* a Unigram model with these pieces, from line 3 */
#define UNI(vocab) "{\"pre_tokenizer\": {\"type\": \"Metaspace\"},\n" \
                   " \"model\": {\"type\": \"Unigram\", \"unk_id\": 0,\n \"vocab\": " vocab "}}"
/* a Precompiled normalizer with this precompiled_charsmap, on line 2 */
#define CHARSMAP(b64) "{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 0]]},\n" \
                      " \"normalizer\": {\"type\": \"Precompiled\", \"precompiled_charsmap\": " b64 "}}"

static const Bad bad_files[] = {
    {"{\"a\": 0,\n \"b\": }", "", ATTN_E_PARSE, "vocab.json", 2, "not valid JSON"},
    {"[1, 2]", "", ATTN_E_PARSE, "vocab.json", 1, "an object of token: id"},
    {"{}", "", ATTN_E_EMPTY, "vocab.json", 1, "no tokens"},
    {"{\"a\": 0,\n \"b\": \"1\"}", "", ATTN_E_PARSE, "vocab.json", 2, "\"b\": the id is not a whole number"},
    {"{\"a\": 0,\n\n \"b\": 1.5}", "", ATTN_E_PARSE, "vocab.json", 3, "not a whole number"},
    {"{\"a\": -1}", "", ATTN_E_RANGE, "vocab.json", 1, "id -1 is outside"},
    {"{\"a\": 0, \"b\":\n 3000000}", "", ATTN_E_RANGE, "vocab.json", 1, "outside 0 to 2097151"},
    {"{\"a\": 0,\n \"a\": 1}", "", ATTN_E_DUPLICATE, "vocab.json", 2, "\"a\" appears twice"},
    {"{\"a\": 0,\n \"b\": 0}", "", ATTN_E_DUPLICATE, "vocab.json", 2, "id 0 is given to both \"a\" and \"b\""},
    {"{\"a\": 0} x", "", ATTN_E_PARSE, "vocab.json", 1, "text after the end"},
    {V3, "#version: 0.2\na b\nab\n", ATTN_E_PARSE, "merges.txt", 3, "two tokens and one space"},
    {V3, "a  b", ATTN_E_PARSE, "merges.txt", 1, "two tokens and one space"},
    {V3, "a b \n", ATTN_E_PARSE, "merges.txt", 1, "two tokens and one space"},
    {V3, " a", ATTN_E_PARSE, "merges.txt", 1, "two tokens and one space"},
    {V3, "a b\r\n\r\nb c\r\n", ATTN_E_RANGE, "merges.txt", 3, "merge \"b c\": \"c\" is not in the vocabulary"},
    {V3, "a b\nb a\n", ATTN_E_RANGE, "merges.txt", 2, "their join \"ba\" is not in the vocabulary"},
    {"{\"model\": ", NULL, ATTN_E_PARSE, "tokenizer.json", 1, "not valid JSON"},
    {"[]", NULL, ATTN_E_PARSE, "tokenizer.json", 0, "expected a JSON object"},
    {"{\"pre_tokenizer\": {\"type\": \"ByteLevel\"}}", NULL, ATTN_E_PARSE, "tokenizer.json", 0, "\"model\""},
    {TJ("{\"type\": \"WordLevel\", \"vocab\": {}}"), NULL, ATTN_E_UNSUPPORTED, "tokenizer.json", 2,
     "model type WordLevel is not supported (BPE, WordPiece and Unigram are)"},
    /* Unigram (T5's) */
    {UNI("[]"), NULL, ATTN_E_EMPTY, "tokenizer.json", 3, "a Unigram needs at least one piece"},
    {UNI("{\"a\": 0}"), NULL, ATTN_E_PARSE, "tokenizer.json", 3, "model.vocab: expected the pieces"},
    {UNI("[[\"<unk>\", 0],\n [\"a\", \"-1.5\"]]"), NULL, ATTN_E_PARSE, "tokenizer.json", 4,
     "piece 1 (\"a\"): the score is not a number"},
    {UNI("[[\"<unk>\", 0],\n [\"a\"]]"), NULL, ATTN_E_PARSE, "tokenizer.json", 4,
     "piece 1 is not [piece, score]"},
    {UNI("[[\"<unk>\", 0],\n [\"a\", 1e400]]"), NULL, ATTN_E_RANGE, "tokenizer.json", 4,
     "piece 1 (\"a\"): score inf is out of range"},
    {UNI("[[\"<unk>\", 0],\n [\"<unk>\", -1]]"), NULL, ATTN_E_DUPLICATE, "tokenizer.json", 4,
     "\"<unk>\" appears twice"},
    {"{\"model\":\n {\"type\": \"Unigram\", \"unk_id\": 2, \"vocab\": [[\"<unk>\", 0], [\"a\", -1]]}}",
     NULL, ATTN_E_RANGE, "tokenizer.json", 2, "unk_id 2 is not an id of the vocabulary (0 to 1)"},
    {"{\"model\":\n {\"type\": \"Unigram\", \"unk_id\": -1, \"vocab\": [[\"<unk>\", 0]]}}",
     NULL, ATTN_E_PARSE, "tokenizer.json", 2, "unk_id must be a whole number from 0, or null"},
    {"{\"model\":\n {\"type\": \"Unigram\", \"unk_id\": 0.5, \"vocab\": [[\"<unk>\", 0]]}}",
     NULL, ATTN_E_PARSE, "tokenizer.json", 2, "unk_id must be a whole number"},
    /* Precompiled: the field and tokenizer.json named */
    {CHARSMAP("\"a!b=\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap is not base64"},
    {CHARSMAP("\"EAAAAAECAwQ\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap is not base64"},
    {CHARSMAP("\"EAAAAAECAwR=\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap is not base64"},
    {CHARSMAP("\"EAAAAAECAwQ=\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap: its trie size 16 is past its end (4 bytes after the size)"},
    {CHARSMAP("\"EAA=\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap is 2 bytes: shorter than its 4-byte trie size"},
    {CHARSMAP("\"\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap is 0 bytes"},
    {CHARSMAP("\"AAAAAA==\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap: the trie is empty"},
    {CHARSMAP("\"BAAAAAAAAAD/\""), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "precompiled_charsmap: the normalized strings are not UTF-8"},
    {CHARSMAP("null"), NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "Precompiled needs a string \"precompiled_charsmap\""},
    {"{\"pre_tokenizer\":\n {\"type\": \"Metaspace\", \"add_prefix_space\": false, "
     "\"prepend_scheme\": \"always\"},\n \"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 0]]}}",
     NULL, ATTN_E_PARSE, "tokenizer.json", 2, "add_prefix_space false does not match"},
    {TJ("{\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"vocab\": {\"a\": 0}}"), NULL,
     ATTN_E_RANGE, "tokenizer.json", 2, "unk_token is not a token of the vocabulary"},
    {TJ("{\"type\": \"WordPiece\", \"continuing_subword_prefix\": 2, \"vocab\": {\"a\": 0}}"),
     NULL, ATTN_E_PARSE, "tokenizer.json", 2, "continuing_subword_prefix must be a string"},
    {"{\"decoder\":\n {\"type\": \"WordPiece\", \"prefix\": \"@@\"},\n"
     TJ_BODY("{\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}") "}", NULL, ATTN_E_UNSUPPORTED,
     "tokenizer.json", 2, "decoder WordPiece prefix \"@@\" is not the model's"},
    {"{\"post_processor\": {\"type\": \"BertProcessing\", \"cls\": [\"[CLS]\", 1]},\n"
     TJ_BODY("{\"vocab\": {}}") "}", NULL, ATTN_E_PARSE, "tokenizer.json", 1,
     "BertProcessing needs \"sep\": [token, id"},
    {"{\"normalizer\":\n {\"type\": \"ByteLevel\"}, \"model\": {}}", NULL, ATTN_E_UNSUPPORTED,
     "tokenizer.json", 2, "normalizer ByteLevel is not supported (NFC, NFD, NFKC, NFKD, Prepend, "
     "Replace, Strip, Precompiled, BertNormalizer, Lowercase, Nmt and Sequence are)"},
    {"{\"normalizer\":\n {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"},\n"
     " {\"type\": \"StripAccents\"}]}, \"model\": {}}", NULL, ATTN_E_UNSUPPORTED,
     "tokenizer.json", 2, "normalizer StripAccents"},
    {"{\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Punctuation\"}]},"
     " \"model\": {}}", NULL, ATTN_E_UNSUPPORTED, "tokenizer.json", 1, "pre_tokenizer Punctuation"},
    {"{\"pre_tokenizer\": {\"type\": \"UnicodeScripts\"}, \"model\": {}}", NULL, ATTN_E_UNSUPPORTED,
     "tokenizer.json", 1, "pre_tokenizer UnicodeScripts"},
    {TJ("{\"dropout\": 0.1, \"vocab\": {}}"), NULL, ATTN_E_UNSUPPORTED, "tokenizer.json", 2, "model.dropout"},
    {"{\"post_processor\": {\"type\": \"RobertaProcessing\"},\n" TJ_BODY("{\"vocab\": {}}") "}", NULL,
     ATTN_E_PARSE, "tokenizer.json", 1, "post_processor: RobertaProcessing needs \"cls\""},
    {"{\"post_processor\": {\"type\": \"Cut\"},\n" TJ_BODY("{\"vocab\": {}}") "}", NULL,
     ATTN_E_UNSUPPORTED, "tokenizer.json", 1, "post_processor Cut is not supported"},
    {"{\"decoder\":\n {\"type\": \"WordPiece\"},\n" TJ_BODY("{\"vocab\": {}}") "}", NULL,
     ATTN_E_UNSUPPORTED, "tokenizer.json", 2, "decoder WordPiece is not supported with a BPE model"},
    {"{\"pre_tokenizer\":\n {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a\"}, \"behavior\": "
     "\"Isolated\"}, \"model\": {\"vocab\": " V3 ", \"merges\": []}}", NULL, ATTN_E_PARSE,
     "tokenizer.json", 2, "regex \"(a\": missing closing parenthesis"},
    {"{\"pre_tokenizer\":\n {\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, \"behavior\": "
     "\"Sideways\"}, \"model\": {\"vocab\": " V3 ", \"merges\": []}}", NULL, ATTN_E_UNSUPPORTED,
     "tokenizer.json", 2, "Split behavior Sideways"},
    {"{\"pre_tokenizer\":\n {\"type\": \"Metaspace\", \"prepend_scheme\": \"sometimes\"},"
     " \"model\": {\"vocab\": " V3 ", \"merges\": []}}", NULL, ATTN_E_UNSUPPORTED,
     "tokenizer.json", 2, "prepend_scheme sometimes"},
    {"{\"post_processor\":\n {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": "
     "{\"id\": \"<s>\"}}, {\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {}},"
     TJ_BODY("{\"vocab\": " V3 ", \"merges\": []}") "}", NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "special token <s> has no ids"},
    {TJ("{\"end_of_word_suffix\": \"</w>\", \"vocab\": {}}"), NULL, ATTN_E_UNSUPPORTED, "tokenizer.json",
     2, "end_of_word_suffix"},
    {TJ("{\"merges\": []}"), NULL, ATTN_E_PARSE, "tokenizer.json", 0, "the vocabulary"},
    {TJ("{\"vocab\": " V3 "}"), NULL, ATTN_E_PARSE, "tokenizer.json", 0, "model.merges"},
    {TJ("{\"vocab\": " V3 ",\n \"merges\": [\"a b\",\n 42]}"), NULL, ATTN_E_PARSE, "tokenizer.json", 4,
     "merge 2: expected"},
    {TJ("{\"vocab\": " V3 ",\n \"merges\": [[\"a\", \"b\"],\n [\"a\", \"b\", \"c\"]]}"), NULL, ATTN_E_PARSE,
     "tokenizer.json", 4, "merge 2"},
    {TJ("{\"vocab\": " V3 ",\n \"merges\": [\"a b\", \"b\",\n \"b a\"]}"), NULL, ATTN_E_PARSE,
     "tokenizer.json", 3, "merge 2"},
    {TJ("{\"vocab\": " V3 ",\n \"merges\": [\"a b\",\n \"b a\"]}"), NULL, ATTN_E_RANGE, "tokenizer.json", 4,
     "\"ba\" is not in the vocabulary"},
    {TJ("{\"vocab\": {\"a\": 0,\n \"b\": true}, \"merges\": []}"), NULL, ATTN_E_PARSE, "tokenizer.json", 3,
     "\"b\": the id is not a whole number"},
    {TJ("{\"vocab\": " V3 ", \"merges\": [], \"unk_token\":\n \"<unk>\"}"), NULL, ATTN_E_RANGE,
     "tokenizer.json", 3, "unk_token"},
    {"{\"added_tokens\": [{\"id\": 3, \"content\": \"<s>\"},\n {\"id\": 4, \"content\": \"\"}],\n"
     TJ_BODY("{\"vocab\": " V3 ", \"merges\": []}") "}", NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "added token 4: content is empty"},
    {"{\"added_tokens\": [\n {\"id\": \"3\", \"content\": \"<s>\"}],\n"
     TJ_BODY("{\"vocab\": " V3 ", \"merges\": []}") "}", NULL, ATTN_E_PARSE, "tokenizer.json", 2,
     "added token 1: expected a whole number"},
    {"{\"added_tokens\": {},\n" TJ_BODY("{\"vocab\": " V3 ", \"merges\": []}") "}", NULL, ATTN_E_PARSE,
     "tokenizer.json", 1, "added_tokens: an array"},
};

static void bad_inputs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        const Bad *t = &bad_files[i];
        AttnErr err = {0};
        Bpe *b = (Bpe *)&err;
        int rc = t->merges ? bpe_parse_vocab_merges(&b, t->vocab, strlen(t->vocab), "vocab.json",
                                                    t->merges, strlen(t->merges), "merges.txt", &err)
                           : bpe_parse_tokenizer_json(&b, t->vocab, strlen(t->vocab),
                                                      "tokenizer.json", &err);
        if (rc != -t->code || err.code != t->code || strcmp(err.file, t->file) != 0 ||
            err.line != t->line || !strstr(err.msg, t->msg) || b != NULL)
            fail_msg("case %zu: rc %d, %s:%ld: %s (want code %d, %s:%ld: ...%s...)", i, rc, err.file,
                     err.line, err.msg, t->code, t->file, t->line, t->msg);
    }
}

/* tokenizer.json and vocab.json cut at many places: an error, never a crash. */
static void truncated_files(void **state)
{
    (void)state;
    static const char *const files[] = {FIX "tokenizer_options.json", FIX "vocab.json"};
    for (int k = 0; k < 2; k++) {
        size_t len;
        char *data = test_slurp(files[k], &len);
        assert_non_null(data);
        while (len && (data[len - 1] == '\n' || data[len - 1] == ' '))
            len--;
        for (size_t cut = 0; cut < len; cut += 1 + cut / 16) {
            char *part = malloc(cut ? cut : 1);
            assert_non_null(part);
            memcpy(part, data, cut);
            AttnErr err = {0};
            Bpe *b = NULL;
            int rc = k == 0 ? bpe_parse_tokenizer_json(&b, part, cut, "t.json", &err)
                            : bpe_parse_vocab_merges(&b, part, cut, "v.json", "", 0, "m.txt", &err);
            if (rc != -ATTN_E_PARSE || b)
                fail_msg("%s cut at %zu: rc %d (%s)", files[k], cut, rc, err.msg);
            free(part);
        }
        free(data);
    }
}

/* ---- folders ------------------------------------------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
    size_t len;
    char *data = test_slurp(from, &len);
    assert_non_null(data);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    free(data);
}

static void model_folder(void **state)
{
    (void)state;
    AttnErr err = {0};
    Bpe *b = NULL;
    assert_int_equal(bpe_load_dir(&b, FIX, &err), 0); /* tokenizer.json */
    assert_int_equal(bpe_n_merges(b), 600);
    bpe_destroy(b);
    char dir[] = "/tmp/attnviz-bpe-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(bpe_load_dir(&b, dir, &err), -ATTN_E_IO);
    assert_null(b);
    assert_non_null(strstr(err.msg, "neither tokenizer.json nor vocab.json"));
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    copy_file(FIX "vocab.json", path);
    assert_int_equal(bpe_load_dir(&b, dir, &err), -ATTN_E_IO);
    assert_non_null(strstr(err.msg, "merges.txt is missing"));
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    copy_file(FIX "merges.txt", path);
    assert_int_equal(bpe_load_dir(&b, dir, &err), 0);
    assert_true(bpe_is_special(b, 858));
    bpe_destroy(b);
    assert_int_equal(bpe_load_dir(&b, "/nonexistent/attnviz", &err), -ATTN_E_IO);
    assert_int_equal(bpe_load_tokenizer_json(&b, "/nonexistent/tokenizer.json", &err), -ATTN_E_IO);
    assert_string_equal(err.file, "/nonexistent/tokenizer.json");
    unlink(path);
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    unlink(path);
    rmdir(dir);
}

/* A folder whose tokenizer is SentencePiece's only (T5's spiece.model;
 * Marian's source.spm and target.spm beside a vocab.json without merges):
 * refused naming those files; with a tokenizer.json the .spm files are
 * not looked at. */
static void sentencepiece_folder(void **state)
{
    (void)state;
    char dir[] = "/tmp/attnviz-spm-XXXXXX", path[256];
    static const char *const made[] = {"spiece.model", "source.spm", "target.spm", "vocab.json",
                                       "tokenizer.json"};
    assert_non_null(mkdtemp(dir));
    AttnErr err = {0};
    Bpe *b = (Bpe *)&err;
    snprintf(path, sizeof path, "%s/spiece.model", dir);
    copy_file(FIX "merges.txt", path); /* any bytes: it is only named */
    assert_int_equal(bpe_load_dir(&b, dir, &err), -ATTN_E_UNSUPPORTED);
    assert_null(b);
    assert_string_equal(err.file, dir);
    assert_non_null(strstr(err.msg, "SentencePiece's spiece.model only"));
    unlink(path);
    for (int i = 1; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[i]);
        copy_file(FIX "vocab.json", path);
    }
    assert_int_equal(bpe_load_dir(&b, dir, &err), -ATTN_E_UNSUPPORTED);
    assert_non_null(strstr(err.msg, "SentencePiece's source.spm, target.spm only"));
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    copy_file("tests/fixtures/hftok/t5_old.json", path);
    assert_int_equal(bpe_load_dir(&b, dir, &err), 0);
    assert_true(bpe_is_special(b, bpe_token_id(b, "</s>", 4)));
    bpe_destroy(b);
    for (int i = 1; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, made[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* About 1024 tokens (the text of src/README.md) through the fixtures'
 * tokenizer: how long one encoding takes (printed, not checked). */
static void encode_speed(void **state)
{
    (void)state;
    Bpe *b = load_json(FIX "tokenizer.json");
    size_t len;
    char *text = test_slurp("src/README.md", &len);
    assert_non_null(text);
    BpeIds ids = {0};
    size_t n = 0;
    while (n < len && ids.n < 1024) {
        n = n + 256 < len ? n + 256 : len;
        ids.n = 0;
        assert_int_equal(bpe_encode(b, text, n, &ids), 0);
    }
    int reps = 200;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < reps; r++) {
        ids.n = 0;
        assert_int_equal(bpe_encode(b, text, n, &ids), 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 / reps;
    print_message("bpe_encode: %d tokens (%zu bytes) in %.0f us\n", ids.n, n, us);
    bpe_ids_free(&ids);
    free(text);
    bpe_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cases_vocab_merges),
        cmocka_unit_test(cases_tokenizer_json),
        cmocka_unit_test(display_texts),
        cmocka_unit_test(print_tokens),
        cmocka_unit_test(bad_inputs),
        cmocka_unit_test(truncated_files),
        cmocka_unit_test(model_folder),
        cmocka_unit_test(sentencepiece_folder),
        cmocka_unit_test(encode_speed),
    };
    return cmocka_run_group_tests_name("bpe_files", tests, NULL, NULL);
}
