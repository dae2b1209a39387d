/* Tokenizer files parsed from memory (vocab.json + merges.txt, or
 * tokenizer.json: BPE, WordPiece, Unigram) into a Bpe through cJSON; every
 * error names the file and the line (json_pos.c finds it). Not the
 * tokenizer itself (src/core/bpe.c), nor reading files and folders
 * (bpe_dir.c). */
#include "attnviz/bpe_files.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/background.h"
#include "attnviz/io.h"
#include "bpe_spm.h"
#include "json_pos.h"
#include "json_sliced.h"

/* ---- shared ------------------------------------------------------------------- */

/* Adds file and line to an error the core filled; returns rc. */
static int located(int rc, AttnErr *err, const char *name, long line)
{
    if (err) {
        snprintf(err->file, sizeof err->file, "%s", name);
        err->line = line;
    }
    return rc;
}

/* After every JSON_BREATHE_EVERY items of a loop over a large file's
 * values: the one-thread page draws between (bg_breathe). */
static void breathe_after(long k)
{
    if ((k + 1) % JSON_BREATHE_EVERY == 0)
        bg_breathe();
}

/* How many items the array or object has (a walk of its list, which a
 * large one's memory makes long: breaking too). */
static long count_items(const cJSON *c)
{
    long n = 0;
    for (const cJSON *x = c->child; x; x = x->next)
        breathe_after(n++);
    return n;
}

/* One JSON document (only white space after it) into *out: parsed a part
 * at a time (json_sliced.c: the one-thread page draws between), and one
 * that is refused there parsed again whole, for cJSON's place of the
 * error. */
static int parse_json(cJSON **out, const char *data, size_t len, const char *name, AttnErr *err)
{
    const char *end = NULL;
    if (json_parse_sliced(out, data, len) == 0)
        return 0;
    *out = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (!*out) {
        const char *at = cJSON_GetErrorPtr();
        long line = at && at >= data && at <= data + len ? jpos_line_at(data, at) : 0;
        return attn_err_set(err, ATTN_E_PARSE, name, line, "not valid JSON");
    }
    while (end && end < data + len && (*end == ' ' || *end == '\n' || *end == '\r' ||
                                       *end == '\t' || *end == '\0'))
        end++;
    if (end && end < data + len) {
        cJSON_Delete(*out);
        *out = NULL;
        return attn_err_set(err, ATTN_E_PARSE, name, jpos_line_at(data, end),
                            "text after the end of the JSON document");
    }
    return 0;
}

/* The object token → id at path (keys from the top, NULL-terminated). */
static int read_vocab(Bpe *b, const cJSON *vocab, const char *data, size_t len, const char *name,
                      const char *const *path, AttnErr *err)
{
    if (!cJSON_IsObject(vocab))
        return attn_err_set(err, ATTN_E_PARSE, name, jpos_line(data, len, path, -1),
                            "expected the vocabulary: an object of token: id");
    if (bpe_reserve(b, count_items(vocab), 0) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    long k = 0;
    for (const cJSON *t = vocab->child; t; t = t->next, k++) {
        int rc;
        if (!cJSON_IsNumber(t) || t->valuedouble != floor(t->valuedouble))
            rc = attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                              "token \"%.200s\": the id is not a whole number", t->string);
        else if (t->valuedouble < 0 || t->valuedouble >= BPE_MAX_VOCAB)
            rc = attn_err_set(err, ATTN_E_RANGE, NULL, 0, "token \"%.200s\": id %.0f is outside 0 to %d",
                              t->string, t->valuedouble, BPE_MAX_VOCAB - 1);
        else
            rc = bpe_add_token(b, t->string, strlen(t->string), (long)t->valuedouble, err);
        if (rc < 0)
            return located(rc, err, name, jpos_line(data, len, path, k));
        breathe_after(k);
    }
    if (k == 0)
        return attn_err_set(err, ATTN_E_EMPTY, name, jpos_line(data, len, path, -1),
                            "the vocabulary has no tokens");
    return 0;
}

/* "left right": one space between two tokens; 0 or -1. */
static int split_merge(const char *s, size_t n, size_t *at)
{
    const char *sp = memchr(s, ' ', n);
    if (!sp || sp == s || sp == s + n - 1 || memchr(sp + 1, ' ', (size_t)(s + n - sp - 1)))
        return -1;
    *at = (size_t)(sp - s);
    return 0;
}

/* ---- vocab.json + merges.txt -------------------------------------------------- */

static int read_merges_txt(Bpe *b, const char *data, size_t len, const char *name, AttnErr *err)
{
    const char *p = data, *e = data + len;
    for (long line = 1; p < e; line++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *end = nl ? nl : e;
        size_t n = (size_t)(end - p);
        if (n && p[n - 1] == '\r')
            n--;
        size_t at;
        if (n == 0 || (n >= 8 && memcmp(p, "#version", 8) == 0)) {
            /* blank lines and the "#version: 0.2" line hold no merge */
        } else if (split_merge(p, n, &at) < 0) {
            return attn_err_set(err, ATTN_E_PARSE, name, line,
                                "expected a merge: two tokens and one space between them");
        } else {
            int rc = bpe_add_merge(b, p, at, p + at + 1, n - at - 1, err);
            if (rc < 0)
                return located(rc, err, name, line);
        }
        p = nl ? nl + 1 : e;
        breathe_after(line);
    }
    return 0;
}

int bpe_parse_vocab_merges(Bpe **out, const char *vocab, size_t vocab_len, const char *vocab_name,
                           const char *merges, size_t merges_len, const char *merges_name,
                           AttnErr *err)
{
    static const char *const top[] = {NULL};
    cJSON *root = NULL;
    *out = NULL;
    Bpe *b = bpe_create(NULL);
    if (!b)
        return attn_err_set(err, ATTN_E_NOMEM, vocab_name, 0, "out of memory");
    int rc = parse_json(&root, vocab, vocab_len, vocab_name, err);
    if (rc == 0)
        rc = read_vocab(b, root, vocab, vocab_len, vocab_name, top, err);
    if (rc == 0)
        rc = read_merges_txt(b, merges, merges_len, merges_name, err);
    /* as transformers' GPT2Tokenizer: <|endoftext|> is its special token */
    int eot = rc == 0 ? bpe_token_id(b, "<|endoftext|>", 13) : -1;
    if (eot >= 0)
        rc = located(bpe_add_special(b, "<|endoftext|>", 13, eot, BPE_ADDED_SPECIAL, err), err,
                     vocab_name, 0);
    json_delete_sliced(root);
    if (rc < 0)
        bpe_destroy(b);
    else
        *out = b;
    return rc;
}

/* ---- tokenizer.json ------------------------------------------------------------ */

/* A member that must be absent, null or one of the given JSON values
 * ("false", "\"\"", "0"); else unsupported. */
static int must_be_default(const cJSON *obj, const char *key, const char *data, size_t len,
                           const char *name, const char *const *path, AttnErr *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v) || (cJSON_IsString(v) && !v->valuestring[0]) ||
        (cJSON_IsNumber(v) && v->valuedouble == 0))
        return 0;
    const char *keys[4] = {path[0], path[1], key, NULL};
    return attn_err_set(err, ATTN_E_UNSUPPORTED, name, jpos_line(data, len, keys, -1),
                        "%s.%s is set: not supported", path[0] ? path[0] : "", key);
}

static int flag(const cJSON *obj, const char *key, int absent)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v ? cJSON_IsTrue(v) : absent;
}

static const char *type_of(const cJSON *obj)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "type");
    return cJSON_IsString(t) ? t->valuestring : "(no type)";
}

/* Where a tokenizer.json is read from, for the messages. */
typedef struct Doc {
    const char *data, *name;
    size_t len;
    AttnErr *err;
} Doc;

/* The line of top-level member key. */
static long top_line(const Doc *d, const char *key)
{
    const char *keys[2] = {key, NULL};
    return jpos_line(d->data, d->len, keys, -1);
}

static int unsupported(const Doc *d, const char *key, const char *type, const char *known)
{
    return attn_err_set(d->err, ATTN_E_UNSUPPORTED, d->name, top_line(d, key),
                        "%s %s is not supported (%s are)", key, type, known);
}

static int malformed(const Doc *d, const char *key, const char *what)
{
    return attn_err_set(d->err, ATTN_E_PARSE, d->name, top_line(d, key), "%s: %s", key, what);
}

/* A "pattern": {"String": "..."} or {"Regex": "..."}; -1 when neither. */
static int read_pattern(const cJSON *obj, const char **pat, int *regex)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "pattern");
    const cJSON *str = cJSON_GetObjectItemCaseSensitive(p, "String");
    const cJSON *re = cJSON_GetObjectItemCaseSensitive(p, "Regex");
    if (cJSON_IsString(str)) {
        *pat = str->valuestring;
        *regex = 0;
    } else if (cJSON_IsString(re)) {
        *pat = re->valuestring;
        *regex = 1;
    } else {
        return -1;
    }
    return 0;
}

static const char *string_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The core's detail (a regex that does not compile) with the file and the
 * line of key. */
static int step_error(int rc, const Doc *d, const char *key)
{
    return rc < 0 ? located(rc, d->err, d->name, top_line(d, key)) : rc;
}

#define MAX_NESTING 8 /* Sequences within Sequences */

/* normalizer (or one step of its Sequence) into b. */
static int read_normalizer(Bpe *b, const cJSON *n, const Doc *d, int depth)
{
    static const char *const known =
        "NFC, NFD, NFKC, NFKD, Prepend, Replace, Strip, Precompiled, BertNormalizer, "
        "Lowercase, Nmt and Sequence";
    const char *type = type_of(n);
    if (!n || cJSON_IsNull(n))
        return 0;
    if (!cJSON_IsObject(n))
        return malformed(d, "normalizer", "expected an object or null");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers");
        if (!cJSON_IsArray(list) || depth >= MAX_NESTING)
            return malformed(d, "normalizer", "a Sequence needs an array \"normalizers\"");
        for (const cJSON *x = list->child; x; x = x->next) {
            int rc = read_normalizer(b, x, d, depth + 1);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    static const char *const forms[] = {"NFC", "NFD", "NFKC", "NFKD"};
    BpeNormalizer st = {0};
    for (int i = 0; i < 4; i++)
        if (strcmp(type, forms[i]) == 0)
            st.kind = BPE_NORM_NFC + i;
    if (strcmp(type, "Lowercase") == 0) {
        st.kind = BPE_NORM_LOWERCASE;
    } else if (strcmp(type, "Nmt") == 0) {
        st.kind = BPE_NORM_NMT;
    } else if (strcmp(type, "Prepend") == 0) {
        st.kind = BPE_NORM_PREPEND;
        st.content = string_of(n, "prepend");
        if (!st.content)
            return malformed(d, "normalizer", "Prepend needs a string \"prepend\"");
    } else if (strcmp(type, "BertNormalizer") == 0) {
        /* strip_accents null (or absent): as lowercase */
        const cJSON *strip = cJSON_GetObjectItemCaseSensitive(n, "strip_accents");
        int lower = flag(n, "lowercase", 1), no_strip = cJSON_IsBool(strip) ? !cJSON_IsTrue(strip) : !lower;
        st.kind = BPE_NORM_BERT;
        st.bert = (flag(n, "clean_text", 1) ? BPE_BERT_CLEAN : 0) | (lower ? BPE_BERT_LOWERCASE : 0) |
                  (flag(n, "handle_chinese_chars", 1) ? BPE_BERT_CHINESE : 0) |
                  (no_strip ? 0 : BPE_BERT_STRIP_ACCENTS);
    } else if (strcmp(type, "Strip") == 0) {
        st.kind = BPE_NORM_STRIP;
        st.strip_left = flag(n, "strip_left", 0);
        st.strip_right = flag(n, "strip_right", 0);
    } else if (strcmp(type, "Precompiled") == 0) {
        unsigned char *blob = NULL;
        size_t blob_len = 0;
        const char *b64 = string_of(n, "precompiled_charsmap");
        if (!b64)
            return malformed(d, "normalizer", "Precompiled needs a string \"precompiled_charsmap\"");
        if (bpe_base64_decode(b64, &blob, &blob_len) < 0)
            return attn_err_set(d->err, ATTN_E_PARSE, d->name, top_line(d, "normalizer"),
                                "normalizer: precompiled_charsmap is not base64 (standard, "
                                "padded)");
        st.kind = BPE_NORM_PRECOMPILED;
        st.charsmap = blob;
        st.charsmap_len = blob_len;
        int rc = step_error(bpe_add_normalizer(b, &st, d->err), d, "normalizer");
        free(blob);
        return rc;
    } else if (strcmp(type, "Replace") == 0) {
        st.kind = BPE_NORM_REPLACE;
        st.content = string_of(n, "content");
        if (read_pattern(n, &st.pattern, &st.regex) < 0 || !st.content)
            return malformed(d, "normalizer",
                             "Replace needs a \"pattern\" (String or Regex) and a string \"content\"");
        st.pattern_len = strlen(st.pattern);
    } else if (!st.kind) {
        return unsupported(d, "normalizer", type, known);
    }
    if (st.content)
        st.content_len = strlen(st.content);
    return step_error(bpe_add_normalizer(b, &st, d->err), d, "normalizer");
}

/* 1 when the pre-tokenizer is (or its Sequence holds) a ByteLevel. */
static int has_byte_level(const cJSON *p, int depth)
{
    if (!cJSON_IsObject(p) || depth > MAX_NESTING)
        return 0;
    if (strcmp(type_of(p), "ByteLevel") == 0)
        return 1;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(p, "pretokenizers");
    if (strcmp(type_of(p), "Sequence") == 0 && cJSON_IsArray(list))
        for (const cJSON *x = list->child; x; x = x->next)
            if (has_byte_level(x, depth + 1))
                return 1;
    return 0;
}

/* Metaspace's prepend_scheme, or without one its older add_prefix_space
 * (false: never, as the tokenizers that wrote such files read it); -1
 * unknown. */
static int prepend_scheme(const cJSON *m)
{
    const char *s = string_of(m, "prepend_scheme");
    if (!s)
        return flag(m, "add_prefix_space", 1) ? BPE_PREPEND_ALWAYS : BPE_PREPEND_NEVER;
    return strcmp(s, "always") == 0 ? BPE_PREPEND_ALWAYS
           : strcmp(s, "first") == 0 ? BPE_PREPEND_FIRST
           : strcmp(s, "never") == 0 ? BPE_PREPEND_NEVER : -1;
}

/* pre_tokenizer (or one step of its Sequence) into b. */
static int read_pre_tokenizer(Bpe *b, const cJSON *p, const Doc *d, int depth)
{
    static const char *const known = "ByteLevel, Split, Digits, Metaspace, BertPreTokenizer, "
                                     "Whitespace, WhitespaceSplit and Sequence";
    static const char *const behaviors[] = {"Removed", "Isolated", "MergedWithPrevious",
                                            "MergedWithNext", "Contiguous"};
    const char *type = type_of(p);
    if (!p || cJSON_IsNull(p))
        return 0;
    if (!cJSON_IsObject(p))
        return malformed(d, "pre_tokenizer", "expected an object or null");
    BpePreTokenizer st = {0};
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(p, "pretokenizers");
        if (!cJSON_IsArray(list) || depth >= MAX_NESTING)
            return malformed(d, "pre_tokenizer", "a Sequence needs an array \"pretokenizers\"");
        for (const cJSON *x = list->child; x; x = x->next) {
            int rc = read_pre_tokenizer(b, x, d, depth + 1);
            if (rc < 0)
                return rc;
        }
        return 0;
    } else if (strcmp(type, "ByteLevel") == 0) {
        st.kind = BPE_PRE_BYTE_LEVEL;
        st.add_prefix_space = flag(p, "add_prefix_space", 0);
        st.no_regex = !flag(p, "use_regex", 1);
    } else if (strcmp(type, "Split") == 0) {
        const char *behavior = string_of(p, "behavior");
        st.kind = BPE_PRE_SPLIT;
        st.behavior = -1;
        for (int i = 0; behavior && i < 5; i++)
            if (strcmp(behavior, behaviors[i]) == 0)
                st.behavior = i;
        if (read_pattern(p, &st.pattern, &st.regex) < 0)
            return malformed(d, "pre_tokenizer", "Split needs a \"pattern\" (String or Regex)");
        if (st.behavior < 0)
            return attn_err_set(d->err, ATTN_E_UNSUPPORTED, d->name, top_line(d, "pre_tokenizer"),
                                "pre_tokenizer Split behavior %s is not supported (Removed, "
                                "Isolated, MergedWithPrevious, MergedWithNext and Contiguous are)",
                                behavior ? behavior : "(none)");
        st.pattern_len = strlen(st.pattern);
        st.invert = flag(p, "invert", 0);
    } else if (strcmp(type, "BertPreTokenizer") == 0) {
        st.kind = BPE_PRE_BERT;
    } else if (strcmp(type, "WhitespaceSplit") == 0) {
        st.kind = BPE_PRE_WHITESPACE_SPLIT;
    } else if (strcmp(type, "Whitespace") == 0) {
        st.kind = BPE_PRE_WHITESPACE;
    } else if (strcmp(type, "Digits") == 0) {
        st.kind = BPE_PRE_DIGITS;
        st.individual_digits = flag(p, "individual_digits", 0);
    } else if (strcmp(type, "Metaspace") == 0) {
        st.kind = BPE_PRE_METASPACE;
        st.replacement = string_of(p, "replacement");
        st.replacement_len = st.replacement ? strlen(st.replacement) : 0;
        st.prepend_scheme = prepend_scheme(p);
        st.split = flag(p, "split", 1);
        /* as tokenizers: add_prefix_space false beside another scheme is refused */
        if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p, "add_prefix_space")) &&
            st.prepend_scheme >= 0 && st.prepend_scheme != BPE_PREPEND_NEVER)
            return malformed(d, "pre_tokenizer", "Metaspace's add_prefix_space false does not "
                                                 "match its prepend_scheme");
        if (st.prepend_scheme < 0)
            return attn_err_set(d->err, ATTN_E_UNSUPPORTED, d->name, top_line(d, "pre_tokenizer"),
                                "pre_tokenizer Metaspace prepend_scheme %s is not supported "
                                "(first, always and never are)", string_of(p, "prepend_scheme"));
    } else {
        return unsupported(d, "pre_tokenizer", type, known);
    }
    return step_error(bpe_add_pre_tokenizer(b, &st, d->err), d, "pre_tokenizer");
}

/* decoder: only what the tokens' display needs (BpeOptions.decode_strip);
 * the rest of a known decoder is what char_level or ByteLevel do anyway. */
static int read_decoder(BpeOptions *o, const cJSON *dec, const Doc *d, int depth)
{
    static const char *const known =
        "ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, WordPiece and Sequence";
    const char *type = type_of(dec);
    if (!dec || cJSON_IsNull(dec))
        return 0;
    if (!cJSON_IsObject(dec))
        return malformed(d, "decoder", "expected an object or null");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(dec, "decoders");
        if (!cJSON_IsArray(list) || depth >= MAX_NESTING)
            return malformed(d, "decoder", "a Sequence needs an array \"decoders\"");
        for (const cJSON *x = list->child; x; x = x->next) {
            int rc = read_decoder(o, x, d, depth + 1);
            if (rc < 0)
                return rc;
        }
    } else if (strcmp(type, "Metaspace") == 0) {
        o->decode_strip = o->decode_metaspace = prepend_scheme(dec) != BPE_PREPEND_NEVER;
    } else if (strcmp(type, "WordPiece") == 0) {
        const char *prefix = string_of(dec, "prefix");
        if (!o->wordpiece)
            return attn_err_set(d->err, ATTN_E_UNSUPPORTED, d->name, top_line(d, "decoder"),
                                "decoder WordPiece is not supported with a BPE model (only "
                                "with a WordPiece one)");
        if (prefix && strcmp(prefix, o->wp_prefix) != 0)
            return attn_err_set(d->err, ATTN_E_UNSUPPORTED, d->name, top_line(d, "decoder"),
                                "decoder WordPiece prefix \"%.40s\" is not the model's "
                                "continuing_subword_prefix \"%s\"", prefix, o->wp_prefix);
        o->decode_wordpiece = 1;
        o->decode_clean = flag(dec, "cleanup", 1);
    } else if (strcmp(type, "Strip") == 0) {
        const cJSON *start = cJSON_GetObjectItemCaseSensitive(dec, "start");
        const char *content = string_of(dec, "content");
        if (content && strcmp(content, " ") == 0 && cJSON_IsNumber(start) &&
            start->valuedouble >= 0 && start->valuedouble <= 64)
            o->decode_strip = (int)start->valuedouble;
    } else if (strcmp(type, "Replace") != 0 && strcmp(type, "ByteFallback") != 0 &&
               strcmp(type, "Fuse") != 0 && strcmp(type, "ByteLevel") != 0) {
        return unsupported(d, "decoder", type, known);
    }
    return 0;
}

/* post_processor: TemplateProcessing's ids before and after the text. */
typedef struct Template {
    int before[64], after[64];
    int n_before, n_after;
} Template;

static int read_template(Template *t, const cJSON *p, const Doc *d)
{
    const cJSON *single = cJSON_GetObjectItemCaseSensitive(p, "single");
    const cJSON *specials = cJSON_GetObjectItemCaseSensitive(p, "special_tokens");
    int seen_a = 0;
    if (!cJSON_IsArray(single))
        return malformed(d, "post_processor", "TemplateProcessing needs an array \"single\"");
    for (const cJSON *x = single->child; x; x = x->next) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(x, "SpecialToken");
        const cJSON *seq = cJSON_GetObjectItemCaseSensitive(x, "Sequence");
        if (cJSON_IsObject(seq)) {
            const char *id = string_of(seq, "id");
            if (seen_a || !id || strcmp(id, "A") != 0)
                return malformed(d, "post_processor",
                                 "the single template has one Sequence, \"A\"");
            seen_a = 1;
            continue;
        }
        const char *name = string_of(sp, "id");
        const cJSON *tok = name ? cJSON_GetObjectItemCaseSensitive(specials, name) : NULL;
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(tok, "ids");
        if (!cJSON_IsArray(ids))
            return attn_err_set(d->err, ATTN_E_PARSE, d->name, top_line(d, "post_processor"),
                                "post_processor: the template's special token %.200s has no ids "
                                "in special_tokens", name ? name : "(no id)");
        for (const cJSON *v = ids->child; v; v = v->next) {
            int *n = seen_a ? &t->n_after : &t->n_before;
            if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
                v->valuedouble < 0 || v->valuedouble >= BPE_MAX_VOCAB || *n >= 64)
                return attn_err_set(d->err, ATTN_E_RANGE, d->name, top_line(d, "post_processor"),
                                    "post_processor: special token %.200s: an id that is not "
                                    "0 to %d (or more than 64 of them)", name, BPE_MAX_VOCAB - 1);
            (seen_a ? t->after : t->before)[(*n)++] = (int)v->valuedouble;
        }
    }
    if (!seen_a)
        return malformed(d, "post_processor", "the single template has no Sequence \"A\"");
    return 0;
}

/* BertProcessing's and RobertaProcessing's "cls" before the text and
 * "sep" after it, each [text, id]. */
static int read_cls_sep(Template *t, const cJSON *p, const Doc *d, const char *type)
{
    static const char *const keys[] = {"cls", "sep"};
    for (int k = 0; k < 2; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, keys[k]);
        const cJSON *id = cJSON_GetArrayItem(v, 1);
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 ||
            !cJSON_IsString(cJSON_GetArrayItem(v, 0)) || !cJSON_IsNumber(id) ||
            id->valuedouble != floor(id->valuedouble) || id->valuedouble < 0 ||
            id->valuedouble >= BPE_MAX_VOCAB)
            return attn_err_set(d->err, ATTN_E_PARSE, d->name, top_line(d, "post_processor"),
                                "post_processor: %s needs \"%s\": [token, id from 0 to %d]",
                                type, keys[k], BPE_MAX_VOCAB - 1);
        *(k ? &t->after[t->n_after++] : &t->before[t->n_before++]) = (int)id->valuedouble;
    }
    return 0;
}

static int read_post(Template *t, const cJSON *p, const Doc *d, int depth)
{
    static const char *const known =
        "TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel and Sequence";
    const char *type = type_of(p);
    if (!p || cJSON_IsNull(p))
        return 0;
    if (!cJSON_IsObject(p))
        return malformed(d, "post_processor", "expected an object or null");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(p, "processors");
        if (!cJSON_IsArray(list) || depth >= MAX_NESTING)
            return malformed(d, "post_processor", "a Sequence needs an array \"processors\"");
        for (const cJSON *x = list->child; x; x = x->next) {
            int rc = read_post(t, x, d, depth + 1);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    if (strcmp(type, "TemplateProcessing") == 0) {
        if (t->n_before || t->n_after)
            return malformed(d, "post_processor", "more than one TemplateProcessing");
        return read_template(t, p, d);
    }
    if (strcmp(type, "BertProcessing") == 0 || strcmp(type, "RobertaProcessing") == 0) {
        if (t->n_before || t->n_after)
            return malformed(d, "post_processor", "more than one template");
        return read_cls_sep(t, p, d, type);
    }
    if (strcmp(type, "ByteLevel") == 0)
        return 0; /* offsets only */
    return unsupported(d, "post_processor", type, known);
}

/* A Unigram model's options (T5's): its tokens are text, byte_fallback,
 * and unk_id (a whole number, or null for none; checked against the
 * vocabulary once it is read). */
static int read_unigram(BpeOptions *o, const cJSON *root, const cJSON *model, const Doc *d)
{
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_id");
    o->unigram = o->char_level = 1;
    o->byte_fallback = flag(model, "byte_fallback", 0);
    if (unk && !cJSON_IsNull(unk)) {
        if (!cJSON_IsNumber(unk) || unk->valuedouble != floor(unk->valuedouble) ||
            unk->valuedouble < 0)
            return malformed(d, "model", "Unigram's unk_id must be a whole number from 0, or null");
        if (unk->valuedouble >= BPE_MAX_VOCAB)
            return attn_err_set(d->err, ATTN_E_RANGE, d->name, top_line(d, "model"),
                                "model: unk_id %.0f is not an id of the vocabulary",
                                unk->valuedouble);
        o->has_unk = 1;
        o->unk_id = (int)unk->valuedouble;
    }
    return read_decoder(o, cJSON_GetObjectItemCaseSensitive(root, "decoder"), d, 0);
}

/* A WordPiece model's options (BERT's): its tokens are text, its
 * continuing_subword_prefix ("##" when absent) and max_input_chars_per_word
 * (100 when absent). */
static int read_wordpiece(BpeOptions *o, const cJSON *root, const cJSON *model, const Doc *d)
{
    const cJSON *prefix = cJSON_GetObjectItemCaseSensitive(model, "continuing_subword_prefix");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(model, "max_input_chars_per_word");
    int no_prefix = !prefix || cJSON_IsNull(prefix), no_max = !max || cJSON_IsNull(max);
    if (!no_prefix && !(cJSON_IsString(prefix) && strlen(prefix->valuestring) < sizeof o->wp_prefix))
        return malformed(d, "model", "WordPiece's continuing_subword_prefix must be a string of "
                                     "at most 15 bytes");
    if (!no_max && !(cJSON_IsNumber(max) && max->valuedouble == floor(max->valuedouble) &&
                     max->valuedouble >= 0 && max->valuedouble <= 1e9))
        return malformed(d, "model", "WordPiece's max_input_chars_per_word must be a whole "
                                     "number from 0");
    o->wordpiece = o->char_level = 1;
    snprintf(o->wp_prefix, sizeof o->wp_prefix, "%s", no_prefix ? "##" : prefix->valuestring);
    o->wp_max_chars = no_max ? 100 : (int)max->valuedouble;
    return read_decoder(o, cJSON_GetObjectItemCaseSensitive(root, "decoder"), d, 0);
}

/* The options of model, pre_tokenizer and decoder (what BpeOptions holds),
 * checked. */
static int read_options(BpeOptions *o, const cJSON *root, const Doc *d)
{
    static const char *const model_path[] = {"model", NULL, NULL};
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(model, "type");
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    int rc;
    memset(o, 0, sizeof *o);
    if (!cJSON_IsObject(model))
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, top_line(d, "model"),
                            "expected \"model\": an object");
    int wordpiece = cJSON_IsString(type) && strcmp(type->valuestring, "WordPiece") == 0;
    int unigram = cJSON_IsString(type) && strcmp(type->valuestring, "Unigram") == 0;
    if (type && !wordpiece && !unigram &&
        !(cJSON_IsString(type) && strcmp(type->valuestring, "BPE") == 0))
        return attn_err_set(d->err, ATTN_E_UNSUPPORTED, d->name, top_line(d, "model"),
                            "model type %s is not supported (BPE, WordPiece and Unigram are)",
                            type_of(model));
    if (wordpiece)
        return read_wordpiece(o, root, model, d);
    if (unigram)
        return read_unigram(o, root, model, d);
    /* a lone ByteLevel is GPT-2's: the options, no steps */
    if (cJSON_IsObject(pre) && strcmp(type_of(pre), "ByteLevel") == 0) {
        o->add_prefix_space = flag(pre, "add_prefix_space", 0);
        o->no_regex = !flag(pre, "use_regex", 1);
    }
    o->char_level = !has_byte_level(pre, 0);
    o->ignore_merges = flag(model, "ignore_merges", 0);
    o->fuse_unk = flag(model, "fuse_unk", 0);
    o->byte_fallback = flag(model, "byte_fallback", 0);
    static const char *const fixed[] = {"dropout", "continuing_subword_prefix",
                                        "end_of_word_suffix"};
    for (int i = 0; i < 3; i++)
        if ((rc = must_be_default(model, fixed[i], d->data, d->len, d->name, model_path,
                                  d->err)) < 0)
            return rc;
    return read_decoder(o, cJSON_GetObjectItemCaseSensitive(root, "decoder"), d, 0);
}

/* model.unk_token: none (null) or a vocabulary token, into o. */
static int read_unk(BpeOptions *o, const Bpe *b, const cJSON *model, const char *data,
                    size_t len, const char *name, AttnErr *err)
{
    static const char *const k_unk[] = {"model", "unk_token", NULL};
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    if (!unk || cJSON_IsNull(unk))
        return 0;
    int id = cJSON_IsString(unk) ? bpe_token_id(b, unk->valuestring, strlen(unk->valuestring))
                                 : -1;
    if (id < 0)
        return attn_err_set(err, ATTN_E_RANGE, name, jpos_line(data, len, k_unk, -1),
                            "unk_token is not a token of the vocabulary");
    o->has_unk = 1;
    o->unk_id = id;
    return 0;
}

/* model.vocab of a Unigram: [[piece, score], ...], each piece's id its
 * index; the scores read from the text as serde_json reads them. */
static int read_pieces(Bpe *b, const cJSON *vocab, const Doc *d)
{
    static const char *const path[] = {"model", "vocab", NULL};
    const char *e = d->data + d->len, *raw = jpos_skip_ws(d->data, e);
    double pow10[309];
    bpe_pow10(pow10);
    if (!cJSON_IsArray(vocab))
        return attn_err_set(d->err, ATTN_E_PARSE, d->name, jpos_line(d->data, d->len, path, -1),
                            "model.vocab: expected the pieces, an array of [piece, score]");
    for (const char *const *k = path; raw && *k; k++)
        raw = jpos_member(raw, e, *k);
    raw = raw ? jpos_nth(raw, e, 0) : NULL;
    if (bpe_reserve(b, count_items(vocab), 0) < 0)
        return attn_err_set(d->err, ATTN_E_NOMEM, d->name, 0, "out of memory");
    long k = 0;
    for (const cJSON *t = vocab->child; t; t = t->next, k++) {
        const cJSON *piece = cJSON_GetArrayItem(t, 0), *score = cJSON_GetArrayItem(t, 1);
        double v = 0;
        int rc = 0;
        if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != 2 || !cJSON_IsString(piece))
            rc = attn_err_set(d->err, ATTN_E_PARSE, NULL, 0,
                              "model.vocab: piece %ld is not [piece, score]", k);
        else if (!cJSON_IsNumber(score))
            rc = attn_err_set(d->err, ATTN_E_PARSE, NULL, 0,
                              "model.vocab: piece %ld (\"%.100s\"): the score is not a number", k,
                              piece->valuestring);
        else if (!raw || bpe_serde_number(jpos_skip_ws(jpos_nth(raw, e, 1) ? jpos_nth(raw, e, 1) : e, e), e, pow10,
                                      &v) < 0)
            rc = attn_err_set(d->err, ATTN_E_RANGE, NULL, 0,
                              "model.vocab: piece %ld (\"%.100s\"): score %g is out of range",
                              k, piece->valuestring, score->valuedouble);
        else
            rc = bpe_add_piece(b, piece->valuestring, strlen(piece->valuestring), k, v, d->err);
        if (rc < 0)
            return located(rc, d->err, d->name, jpos_line(d->data, d->len, path, k));
        raw = jpos_skip_ws(jpos_skip_value(raw, e), e); /* the next piece's text */
        raw = raw < e && *raw == ',' ? jpos_skip_ws(raw + 1, e) : NULL;
        breathe_after(k);
    }
    if (k == 0)
        return attn_err_set(d->err, ATTN_E_EMPTY, d->name, jpos_line(d->data, d->len, path, -1),
                            "model.vocab: a Unigram needs at least one piece (its unk)");
    return 0;
}

static int read_merges_json(Bpe *b, const cJSON *merges, const char *data, size_t len,
                            const char *name, AttnErr *err)
{
    static const char *const path[] = {"model", "merges", NULL};
    if (!cJSON_IsArray(merges))
        return attn_err_set(err, ATTN_E_PARSE, name, jpos_line(data, len, path, -1),
                            "expected model.merges: an array");
    if (bpe_reserve(b, 0, count_items(merges)) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    long k = 0;
    for (const cJSON *m = merges->child; m; m = m->next, k++) {
        const cJSON *l = cJSON_GetArrayItem(m, 0), *r = cJSON_GetArrayItem(m, 1);
        size_t at;
        int rc;
        if (cJSON_IsString(m) && split_merge(m->valuestring, strlen(m->valuestring), &at) == 0)
            rc = bpe_add_merge(b, m->valuestring, at, m->valuestring + at + 1,
                               strlen(m->valuestring) - at - 1, err);
        else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 && cJSON_IsString(l) &&
                 cJSON_IsString(r) && l->valuestring[0] && r->valuestring[0])
            rc = bpe_add_merge(b, l->valuestring, strlen(l->valuestring), r->valuestring,
                               strlen(r->valuestring), err);
        else
            rc = attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                              "merge %ld: expected \"left right\" or [\"left\", \"right\"]", k + 1);
        if (rc < 0)
            return located(rc, err, name, jpos_line(data, len, path, k));
        breathe_after(k);
    }
    return 0;
}

static int read_added(Bpe *b, const cJSON *added, const char *data, size_t len, const char *name,
                      AttnErr *err)
{
    static const char *const path[] = {"added_tokens", NULL};
    if (!added || cJSON_IsNull(added))
        return 0;
    if (!cJSON_IsArray(added))
        return attn_err_set(err, ATTN_E_PARSE, name, jpos_line(data, len, path, -1),
                            "expected added_tokens: an array");
    long k = 0;
    for (const cJSON *a = added->child; a; a = a->next, k++) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(a, "content");
        int rc;
        if (!cJSON_IsNumber(id) || id->valuedouble != floor(id->valuedouble) ||
            !cJSON_IsString(content)) {
            rc = attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                              "added token %ld: expected a whole number \"id\" and a string "
                              "\"content\"", k + 1);
        } else {
            unsigned flags = (flag(a, "special", 0) ? BPE_ADDED_SPECIAL : 0) |
                             (flag(a, "lstrip", 0) ? BPE_ADDED_LSTRIP : 0) |
                             (flag(a, "rstrip", 0) ? BPE_ADDED_RSTRIP : 0) |
                             (flag(a, "single_word", 0) ? BPE_ADDED_SINGLE_WORD : 0) |
                             (flag(a, "normalized", 1) ? BPE_ADDED_NORMALIZED : 0);
            double v = id->valuedouble;
            rc = bpe_add_special(b, content->valuestring, strlen(content->valuestring),
                                 v < 0 ? -1 : v >= BPE_MAX_VOCAB ? BPE_MAX_VOCAB : (long)v, flags,
                                 err);
        }
        if (rc < 0)
            return located(rc, err, name, jpos_line(data, len, path, k));
        breathe_after(k);
    }
    return 0;
}

/* The normalizer and pre-tokenizer steps, the vocabulary, merges, added
 * tokens and template into a new tokenizer with o (and the unk_token, an
 * id of that vocabulary). */
static int build_tokenizer_json(Bpe **out, BpeOptions *o, const cJSON *root, const Doc *d)
{
    static const char *const vocab_path[] = {"model", "vocab", NULL};
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    const char *data = d->data, *name = d->name;
    size_t len = d->len;
    AttnErr *err = d->err;
    Template t = {0};
    Bpe *b = bpe_create(o);
    if (!b)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    int rc = read_normalizer(b, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), d, 0);
    if (rc == 0 && !(cJSON_IsObject(pre) && strcmp(type_of(pre), "ByteLevel") == 0))
        rc = read_pre_tokenizer(b, pre, d, 0);
    if (rc == 0)
        rc = read_post(&t, cJSON_GetObjectItemCaseSensitive(root, "post_processor"), d, 0);
    if (rc == 0 && o->unigram)
        rc = read_pieces(b, cJSON_GetObjectItemCaseSensitive(model, "vocab"), d);
    else if (rc == 0)
        rc = read_vocab(b, cJSON_GetObjectItemCaseSensitive(model, "vocab"), data, len, name,
                        vocab_path, err);
    if (rc == 0 && o->unigram && o->has_unk && o->unk_id >= bpe_n_vocab(b))
        rc = attn_err_set(err, ATTN_E_RANGE, name, top_line(d, "model"),
                          "model: unk_id %d is not an id of the vocabulary (0 to %d)", o->unk_id,
                          bpe_n_vocab(b) - 1);
    if (rc == 0 && !o->unigram)
        rc = read_unk(o, b, model, data, len, name, err);
    if (rc == 0 && !o->wordpiece && !o->unigram) /* WordPiece and Unigram have no merges */
        rc = read_merges_json(b, cJSON_GetObjectItemCaseSensitive(model, "merges"), data, len,
                              name, err);
    if (rc == 0)
        rc = read_added(b, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), data, len,
                        name, err);
    if (rc == 0)
        rc = step_error(bpe_set_template(b, t.before, t.n_before, t.after, t.n_after, err), d,
                        "post_processor");
    if (rc < 0) {
        bpe_destroy(b);
        return rc;
    }
    bpe_set_options(b, o);
    *out = b;
    return 0;
}

int bpe_parse_tokenizer_json(Bpe **out, const char *data, size_t len, const char *name,
                             AttnErr *err)
{
    cJSON *root = NULL;
    BpeOptions o;
    Doc d = {data, name, len, err};
    *out = NULL;
    int rc = parse_json(&root, data, len, name, err);
    if (rc == 0 && !cJSON_IsObject(root))
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "expected a JSON object");
    if (rc == 0)
        rc = read_options(&o, root, &d);
    if (rc == 0)
        rc = build_tokenizer_json(out, &o, root, &d);
    json_delete_sliced(root);
    return rc;
}
