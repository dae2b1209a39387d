/* A GGUF file's tokenizer (tokenizer.ggml.*, as plain arrays) built into a
 * Bpe that gives llama.cpp's ids: its pre-tokenizers' splits written by hand
 * over its own Unicode table, its special tokens' types and the texts it
 * makes special, SentencePiece's merge by score as ranks, its BOS and decoding
 * options. Not the file (src/io/gguf.c) nor the encoding itself (bpe_encode.c). */
#include "attnviz/gguf_vocab.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/tokenizer.h"

/* ---- llama.cpp's Unicode (src/unicode-data.cpp) -------------------------------------- */

/* Category flags as llama.cpp's unicode_cpt_flags has them; GU_SPACE is its
 * White_Space. Every code point has one category (Cn is GU_UNDEF); a
 * position past the piece has none (0). */
enum { GU_UNDEF = 0x01, GU_N = 0x02, GU_L = 0x04, GU_Z = 0x08, GU_M = 0x10, GU_P = 0x20,
       GU_S = 0x40, GU_C = 0x80, GU_SPACE = 0x100 };

#include "gguf_unicode_tab.inc"

static unsigned gu_flags(unsigned cp)
{
    if (cp >= 0x110000)
        return GU_UNDEF;
    size_t lo = 0, hi = sizeof gu_ranges / sizeof gu_ranges[0] - 1; /* ranges[hi] starts past cp */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((gu_ranges[mid] >> 8) <= cp)
            lo = mid;
        else
            hi = mid;
    }
    unsigned f = gu_ranges[lo] & 0xFF;
    size_t a = 0, b = sizeof gu_space / sizeof gu_space[0];
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (gu_space[mid] < cp)
            a = mid + 1;
        else
            b = mid;
    }
    if (a < sizeof gu_space / sizeof gu_space[0] && gu_space[a] == cp)
        f |= GU_SPACE;
    return f;
}

/* The code point at s[i] (i < n) as llama.cpp's unicode_cpt_from_utf8 reads
 * one: by its first byte, continuation bytes checked, nothing else (an
 * overlong form or a surrogate is a code point); its length, or 0 when not
 * one (llama.cpp then takes that byte as U+FFFD). */
static int lax_utf8(const unsigned char *s, size_t n, size_t i, unsigned *cp)
{
    unsigned c = s[i];
    int k = c < 0x80 ? 1 : c < 0xC0 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF8 ? 4 : 0;
    if (!k || (size_t)k > n - i)
        return 0;
    unsigned v = k == 1 ? c : c & (0x7Fu >> k);
    for (int j = 1; j < k; j++) {
        if ((s[i + (size_t)j] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[i + (size_t)j] & 0x3Fu);
    }
    *cp = v;
    return k;
}

/* A gpt2 model's text as llama.cpp's BPE sees it (unicode_cpts_from_utf8,
 * then unicode_cpt_to_utf8): each byte that starts no code point becomes
 * U+FFFD, every code point is written back in UTF-8's form (a surrogate
 * too); one past U+10FFFF, where llama.cpp throws, becomes U+FFFD. */
static int utf8_as_llama(const void *ctx, const char *text, size_t len, char **out,
                         size_t *out_len)
{
    (void)ctx;
    char *o = malloc(3 * len + 1);
    if (!o)
        return -ATTN_E_NOMEM;
    const unsigned char *s = (const unsigned char *)text;
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        unsigned cp = 0xFFFD;
        int k = lax_utf8(s, len, i, &cp);
        i += (size_t)(k ? k : 1);
        if (cp > 0x10FFFF)
            cp = 0xFFFD;
        if (cp < 0x80) {
            o[n++] = (char)cp;
        } else if (cp < 0x800) {
            o[n++] = (char)(0xC0 | cp >> 6);
            o[n++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            o[n++] = (char)(0xE0 | cp >> 12);
            o[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
            o[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            o[n++] = (char)(0xF0 | cp >> 18);
            o[n++] = (char)(0x80 | (cp >> 12 & 0x3F));
            o[n++] = (char)(0x80 | (cp >> 6 & 0x3F));
            o[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    o[n] = '\0';
    *out = o;
    *out_len = n;
    return 0;
}

/* A llama model's text as llama.cpp's SPM tokenizer sees it: a space before
 * it when *ctx (add_space_prefix; every text between special tokens gets
 * one), then every space '▁'; the bytes otherwise as given. */
static int escape_spaces(const void *ctx, const char *text, size_t len, char **out,
                         size_t *out_len)
{
    int prefix = *(const int *)ctx && len;
    char *o = malloc(3 * (len + 1) + 1);
    if (!o)
        return -ATTN_E_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < len + (size_t)prefix; i++) {
        if (prefix && i == 0) {
            memcpy(o + n, "\xE2\x96\x81", 3);
            n += 3;
            continue;
        }
        char c = text[i - (size_t)prefix];
        if (c == ' ') {
            memcpy(o + n, "\xE2\x96\x81", 3);
            n += 3;
        } else {
            o[n++] = c;
        }
    }
    o[n] = '\0';
    *out = o;
    *out_len = n;
    return 0;
}

/* A position in a piece: the code point at byte i of s[0..n) and where the
 * next starts; past the end, cp is NONE and flags 0 (llama.cpp's
 * OUT_OF_RANGE). */
#define NONE 0xFFFFFFFFu

typedef struct At {
    unsigned cp, flags;
    size_t next;
} At;

static At at(const char *s, size_t n, size_t i)
{
    At a = {NONE, 0, n};
    if (i >= n)
        return a;
    unsigned cp = 0xFFFD;
    int k = lax_utf8((const unsigned char *)s, n, i, &cp);
    if (!k) /* utf8_as_llama leaves none: one byte, U+FFFD */
        k = 1;
    a.cp = cp;
    a.flags = gu_flags(cp);
    a.next = i + (size_t)k;
    return a;
}

static unsigned ascii_lower(unsigned cp)
{
    return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
}

/* ---- the splits (llama.cpp's unicode_regex_split, one piece at a time) ---------------- */

/* 's 't 're 've 'm 'll 'd at i (any case when fold): the end, or 0. */
static size_t contraction(const char *s, size_t n, size_t i, int fold)
{
    At a = at(s, n, i);
    if (a.cp != '\'' || a.next >= n)
        return 0;
    At b = at(s, n, a.next);
    unsigned c1 = fold ? ascii_lower(b.cp) : b.cp;
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd')
        return b.next;
    if (b.next >= n)
        return 0;
    At c = at(s, n, b.next);
    unsigned c2 = fold ? ascii_lower(c.cp) : c.cp;
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l'))
        return c.next;
    return 0;
}

/* From i, the code points that have one of the flags in mask (want 1) or
 * none of them and some flag (want 0): where the run ends. */
static size_t run(const char *s, size_t n, size_t i, unsigned mask, int want)
{
    for (;;) {
        At a = at(s, n, i);
        int has = (a.flags & mask) != 0;
        if (!a.flags || has != want)
            return i;
        i = a.next;
    }
}

/* White space at i: \s*[\r\n]+ (the end after its last \r or \n, when
 * newlines), \s+(?!\S) (all but the last before a character), \s+; 0 when
 * no white space. */
static size_t spaces(const char *s, size_t n, size_t i, int newlines)
{
    size_t last_start = i, end = i, after_rn = 0;
    int count = 0;
    for (At a = at(s, n, i); a.flags & GU_SPACE; a = at(s, n, a.next)) {
        if (newlines && (a.cp == '\r' || a.cp == '\n'))
            after_rn = a.next;
        last_start = end;
        end = a.next;
        count++;
    }
    if (after_rn)
        return after_rn;
    if (count > 1 && end < n)
        return last_start;
    return count ? end : 0;
}

/* GPT-2's 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * as unicode_regex_split_custom_gpt2. */
static size_t split_gpt2(const char *s, size_t n, size_t i)
{
    size_t e = contraction(s, n, i, 0);
    if (e)
        return e;
    At a = at(s, n, i);
    size_t from = a.cp == ' ' ? a.next : i;
    unsigned f2 = a.cp == ' ' ? at(s, n, a.next).flags : a.flags;
    if (f2 & GU_L)
        return run(s, n, from, GU_L, 1);
    if (f2 & GU_N)
        return run(s, n, from, GU_N, 1);
    if (!(f2 & (GU_SPACE | GU_L | GU_N)) && f2)
        return run(s, n, from, GU_SPACE | GU_L | GU_N, 0);
    e = spaces(s, n, i, 0);
    return e ? e : a.next;
}

/* Llama 3's (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 * ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ (digits max 3), and
 * Qwen2's, the same with \p{N} (digits max 1): unicode_regex_split_custom_llama3
 * and _qwen2. */
static size_t split_llama3(const char *s, size_t n, size_t i, int digits_max)
{
    size_t e = contraction(s, n, i, 1);
    if (e)
        return e;
    At a = at(s, n, i);
    if (!(a.cp == '\r' || a.cp == '\n' || (a.flags & GU_N)) &&
        ((a.flags & GU_L) || (at(s, n, a.next).flags & GU_L)))
        return run(s, n, a.next, GU_L, 1);
    if (a.flags & GU_N) {
        size_t j = i;
        for (int k = 0; k < digits_max; k++) {
            At d = at(s, n, j);
            if (!(d.flags & GU_N))
                break;
            j = d.next;
        }
        return j;
    }
    unsigned f2 = a.cp == ' ' ? at(s, n, a.next).flags : a.flags;
    if (!(f2 & (GU_SPACE | GU_L | GU_N)) && a.flags) {
        size_t j = run(s, n, a.cp == ' ' ? a.next : i, GU_SPACE | GU_L | GU_N, 0);
        for (At c = at(s, n, j); c.cp == '\r' || c.cp == '\n'; c = at(s, n, c.next))
            j = c.next;
        return j;
    }
    e = spaces(s, n, i, 1);
    return e ? e : a.next;
}

/* A code point in llama.cpp's default first class [\p{P}\$\+<=>\^~\|] as its
 * std::regex sees the text: ASCII punctuation but '`', and $+<=>^~|; beyond
 * ASCII, punctuation that is not white space. */
static int punct_class(unsigned cp, unsigned flags)
{
    if (cp < 128)
        return cp > ' ' && cp < 127 && !isalnum((int)cp) && cp != '`';
    return (flags & GU_P) && !(flags & GU_SPACE);
}

/* One match of class (a code point, or a run with runs), or the run of code
 * points up to the next match, as std::regex_iterator's matches and the text
 * between them are pieces. */
static size_t split_class(const char *s, size_t n, size_t i, int (*in)(unsigned, unsigned),
                          int runs)
{
    At a = at(s, n, i);
    int want = in(a.cp, a.flags);
    if (want && !runs)
        return a.next;
    size_t j = i;
    for (At c = a; c.flags && in(c.cp, c.flags) == want; c = at(s, n, c.next))
        j = c.next;
    return j;
}

static int number_class(unsigned cp, unsigned flags)
{
    (void)cp;
    return (flags & GU_N) != 0;
}

/* [0-9][0-9][0-9] (ASCII digits, three at a time), or the text up to the
 * next three. */
static int three_digits(const char *s, size_t n, size_t i)
{
    return i + 3 <= n && s[i] >= '0' && s[i] <= '9' && s[i + 1] >= '0' && s[i + 1] <= '9' &&
           s[i + 2] >= '0' && s[i + 2] <= '9';
}

static size_t split_digits3(const char *s, size_t n, size_t i)
{
    if (three_digits(s, n, i))
        return i + 3;
    size_t j = at(s, n, i).next;
    while (j < n && !three_digits(s, n, j))
        j = at(s, n, j).next;
    return j;
}

enum { SP_GPT2, SP_LLAMA3, SP_QWEN2, SP_NUMBER, SP_PUNCT_RUNS, SP_NUMBER_RUNS, SP_DIGITS3,
       SP_COUNT };
static const int split_kind[SP_COUNT] = {SP_GPT2, SP_LLAMA3, SP_QWEN2, SP_NUMBER,
                                         SP_PUNCT_RUNS, SP_NUMBER_RUNS, SP_DIGITS3};

static size_t split_next(const void *ctx, const char *s, size_t n, size_t i)
{
    switch (*(const int *)ctx) {
    case SP_GPT2: return split_gpt2(s, n, i);
    case SP_LLAMA3: return split_llama3(s, n, i, 3);
    case SP_QWEN2: return split_llama3(s, n, i, 1);
    case SP_NUMBER: return split_class(s, n, i, number_class, 0);
    case SP_PUNCT_RUNS: return split_class(s, n, i, punct_class, 1);
    case SP_NUMBER_RUNS: return split_class(s, n, i, number_class, 1);
    default: return split_digits3(s, n, i);
    }
}

/* ---- tokenizer.ggml.pre: llama.cpp's llm_tokenizer_bpe and its options ----------------- */

typedef struct Pre {
    const char *name;
    signed char steps[4]; /* SP_*, -1 after the last */
    unsigned char ignore_merges, add_bos, clean;
} Pre;

#define LLAMA3 {SP_LLAMA3, -1, -1, -1}
#define QWEN2 {SP_QWEN2, -1, -1, -1}
#define SMOLLM {SP_NUMBER, SP_GPT2, -1, -1}
#define GPT2 {SP_GPT2, -1, -1, -1}

/* The names llama.cpp's llama_vocab::impl::load gives each split to, with
 * the options it sets for them (only those whose tokenization is the split's
 * alone: no names that also change special tokens or add separators). */
static const Pre pres[] = {
    {"default", {SP_PUNCT_RUNS, SP_GPT2, SP_NUMBER_RUNS, SP_DIGITS3}, 0, 0, 1},
    {"llama-bpe", LLAMA3, 1, 1, 1}, {"llama3", LLAMA3, 1, 1, 1}, {"llama-v3", LLAMA3, 1, 1, 1},
    {"falcon3", LLAMA3, 1, 1, 1}, {"falcon-h1", LLAMA3, 1, 1, 1}, {"pixtral", LLAMA3, 1, 1, 1},
    {"midm-2.0", LLAMA3, 1, 1, 1}, {"lfm2", LLAMA3, 1, 1, 1}, {"jina-v5-nano", LLAMA3, 1, 1, 1},
    {"dbrx", LLAMA3, 0, 0, 1}, {"smaug-bpe", LLAMA3, 0, 0, 1},
    {"qwen2", QWEN2, 0, 0, 0}, {"deepseek-r1-qwen", QWEN2, 0, 0, 0}, {"kormo", QWEN2, 0, 0, 0},
    {"f2llmv2", QWEN2, 0, 0, 0}, {"hunyuan", QWEN2, 0, 0, 0}, {"solar-open", QWEN2, 0, 0, 0},
    {"megrez", QWEN2, 0, 0, 1}, {"stablelm2", QWEN2, 0, 0, 1},
    {"smollm", SMOLLM, 0, 0, 0}, {"command-r", SMOLLM, 0, 0, 0}, {"starcoder", SMOLLM, 0, 0, 1},
    {"refact", SMOLLM, 0, 0, 1}, {"codeshell", SMOLLM, 0, 0, 1}, {"exaone", SMOLLM, 0, 0, 1},
    {"minerva-7b", SMOLLM, 0, 0, 1}, {"mellum2", SMOLLM, 0, 0, 1},
    {"gpt-2", GPT2, 0, 0, 1}, {"phi-2", GPT2, 0, 0, 1}, {"jina-es", GPT2, 0, 0, 1},
    {"jina-de", GPT2, 0, 0, 1}, {"gigachat", GPT2, 0, 0, 1}, {"a.x-4.0", GPT2, 0, 0, 1},
    {"mellum", GPT2, 0, 0, 1}, {"exaone4", GPT2, 0, 0, 1}, {"mpt", GPT2, 0, 0, 1},
    {"olmo", GPT2, 0, 0, 1}, {"jais", GPT2, 0, 0, 1}, {"trillion", GPT2, 0, 0, 0},
    {"granite-docling", GPT2, 0, 0, 0},
};

size_t gguf_vocab_pres(char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof pres / sizeof pres[0]; i++) {
        int k = snprintf(out + (n < cap ? n : cap), n < cap ? cap - n : 0, "%s%s", i ? ", " : "",
                         pres[i].name);
        n += k > 0 ? (size_t)k : 0;
    }
    return n;
}

static const Pre *find_pre(const char *name)
{
    if (!name || !name[0])
        name = "default";
    for (size_t i = 0; i < sizeof pres / sizeof pres[0]; i++)
        if (strcmp(pres[i].name, name) == 0)
            return &pres[i];
    return NULL;
}

/* ---- the tokens ------------------------------------------------------------------------ */

/* llama_token_attr's bits that matter here. */
enum { A_NORMAL = 1, A_UNKNOWN = 2, A_CONTROL = 4, A_USER_DEFINED = 8, A_UNUSED = 16,
       A_BYTE = 32, A_RSTRIP = 64 };

/* Texts llama.cpp makes control tokens whatever their type (its end-of-turn,
 * end-of-generation and fill-in-the-middle lists). */
static const char *const made_control[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>", "<|eom_id|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "</s>", "<eos>", "<turn|>", "<|tool_response>", "[e~[",
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
    "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
    "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
    "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>",
};

/* The token texts as a hash map (text → id), for the rules by text and the
 * score merges' halves. */
typedef struct Texts {
    const GgufVocab *v;
    int32_t *slot; /* id + 1, 0 empty */
    size_t n_slot;
} Texts;

static uint64_t hash_text(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 31);
}

/* The id of text, or -1; with add, id is put where text would be (its
 * first id kept, the earlier returned). */
static int texts_find(Texts *t, const char *s, size_t n, int add)
{
    size_t mask = t->n_slot - 1;
    for (size_t i = (size_t)hash_text(s, n) & mask;; i = (i + 1) & mask) {
        int32_t v = t->slot[i];
        if (!v) {
            if (add >= 0)
                t->slot[i] = add + 1;
            return -1;
        }
        int id = v - 1;
        if (t->v->token_lens[id] == n && memcmp(t->v->tokens[id], s, n) == 0)
            return id;
    }
}

static int text_id(Texts *t, const char *s)
{
    return texts_find(t, s, strlen(s), -1);
}

/* Each token's attributes: its type, the control texts, llama.cpp's
 * exceptions by text (gpt-oss's always shown, o200k_harmony's and
 * solar-open's <|end|>, gemma4's </s>), Phi-3's strip by name. */
static void token_attrs(const GgufVocab *v, Texts *t, unsigned *attr)
{
    static const unsigned of_type[] = {0, A_NORMAL, A_UNKNOWN, A_CONTROL, A_USER_DEFINED,
                                       A_UNUSED, A_BYTE};
    for (int i = 0; i < v->n_tokens; i++) {
        int32_t ty = v->types ? v->types[i] : GGUF_TOKEN_NORMAL;
        attr[i] = ty >= 1 && ty <= 6 ? of_type[ty] : 0;
    }
    for (size_t k = 0; k < sizeof made_control / sizeof made_control[0]; k++) {
        int id = text_id(t, made_control[k]);
        if (id >= 0)
            attr[id] |= A_CONTROL;
    }
    static const char *const shown[] = {"<|channel|>", "<|message|>", "<|start|>",
                                        "<|constrain|>"};
    for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++) {
        int id = text_id(t, shown[k]);
        if (id >= 0)
            attr[id] = A_USER_DEFINED;
    }
    int end = text_id(t, "<|end|>"), ret = text_id(t, "<|return|>"),
        call = text_id(t, "<|call|>") >= 0 || text_id(t, "<|calls|>") >= 0,
        flush = text_id(t, "<|flush|>");
    if (end >= 0 && call && (ret >= 0 || flush >= 0))
        attr[end] = A_USER_DEFINED;
    int s_end = text_id(t, "</s>");
    if (s_end >= 0 && text_id(t, "<|tool_response>") >= 0)
        attr[s_end] = A_NORMAL;
    if (v->name) {
        char low[256];
        size_t n = strlen(v->name);
        n = n < sizeof low - 1 ? n : sizeof low - 1;
        for (size_t i = 0; i < n; i++)
            low[i] = (char)tolower((unsigned char)v->name[i]);
        low[n] = '\0';
        if (strstr(low, "phi-3") || strstr(low, "phi3")) {
            for (int i = 0; i < v->n_tokens; i++)
                if (attr[i] & (A_CONTROL | A_USER_DEFINED | A_UNKNOWN))
                    attr[i] |= A_RSTRIP;
            if (s_end >= 0)
                attr[s_end] |= A_RSTRIP;
            const char *keep[] = {"<unk>", "<s>", "<|endoftext|>"};
            for (size_t k = 0; k < 3; k++)
                if (text_id(t, keep[k]) >= 0)
                    attr[text_id(t, keep[k])] &= ~(unsigned)A_RSTRIP;
        }
    }
}

/* ---- building -------------------------------------------------------------------------- */

static int is_spm(const GgufVocab *v)
{
    return strcmp(v->model, "llama") == 0;
}

/* An id of the file, or llama.cpp's default for the model when absent (-1)
 * or past the vocabulary; -1 when none. */
static int special_id(const GgufVocab *v, int id, int dflt)
{
    if (id >= 0 && id < v->n_tokens)
        return id;
    return dflt < v->n_tokens ? dflt : -1;
}

static int add_tokens(Bpe *b, const GgufVocab *v, const unsigned *attr, AttnErr *err)
{
    char empty[32];
    for (int i = 0; i < v->n_tokens; i++) {
        const char *s = v->tokens[i];
        size_t n = v->token_lens[i];
        if (!n) { /* as llama.cpp names an empty token */
            n = (size_t)snprintf(empty, sizeof empty, "[EMPTY_%d]", i);
            s = empty;
        }
        int other = bpe_token_id(b, s, n);
        if (other >= 0)
            return attn_err_set(err, ATTN_E_DUPLICATE, NULL, 0,
                                "tokenizer.ggml.tokens[%d]: \"%.*s\" is also token %d", i,
                                (int)(n < 200 ? n : 200), s, other);
        AttnErr e = {0};
        int rc = bpe_add_token(b, s, n, i, &e);
        if (rc < 0)
            return attn_err_set(err, -rc, NULL, 0, "tokenizer.ggml.tokens[%d]: %s", i, e.msg);
        if (!(attr[i] & (A_NORMAL | A_UNKNOWN | A_CONTROL | A_USER_DEFINED | A_BYTE)))
            bpe_set_decode_none(b, i); /* unused or undefined: token_to_piece gives nothing */
    }
    return 0;
}

static int add_merges(Bpe *b, const GgufVocab *v, AttnErr *err)
{
    for (int i = 0; i < v->n_merges; i++) {
        const char *m = v->merges[i];
        size_t n = v->merge_lens[i];
        const char *sp = n > 1 ? memchr(m + 1, ' ', n - 1) : NULL;
        if (!sp)
            return attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                                "tokenizer.ggml.merges[%d]: \"%.*s\" is not two tokens and a space",
                                i, (int)(n < 200 ? n : 200), m);
        size_t ln = (size_t)(sp - m), rn = n - ln - 1;
        const char *r = sp + 1;
        const char *bad = bpe_token_id(b, m, ln) < 0 ? m : bpe_token_id(b, r, rn) < 0 ? r : NULL;
        if (bad) {
            size_t bn = bad == m ? ln : rn;
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "tokenizer.ggml.merges[%d]: \"%.*s\" is not a token", i,
                                (int)(bn < 200 ? bn : 200), bad);
        }
        AttnErr e = {0};
        int rc = bpe_add_merge_rank(b, m, ln, r, rn, i, &e);
        if (rc < 0)
            return attn_err_set(err, -rc, NULL, 0, "tokenizer.ggml.merges[%d]: %s", i, e.msg);
    }
    return 0;
}

static int score_desc(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a > b ? -1 : a < b ? 1 : 0;
}

static float score_of(const GgufVocab *v, int i)
{
    float s = v->scores ? v->scores[i] : 0.0f;
    return isnan(s) ? -INFINITY : s;
}

/* llama.cpp's SentencePiece merges (llm_tokenizer_spm): two adjacent symbols
 * join when their text is a token, the token of highest score first, equal
 * scores leftmost first. As ranks: every split of a token into two tokens is
 * a merge, ranked by the token's score among the distinct scores. */
static int add_score_merges(Bpe *b, const GgufVocab *v, Texts *t, AttnErr *err)
{
    int n = v->n_tokens, rc = 0, m = 0;
    float *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    for (int i = 0; i < n; i++)
        sorted[i] = score_of(v, i);
    qsort(sorted, (size_t)n, sizeof *sorted, score_desc);
    for (int i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[m - 1])
            sorted[m++] = sorted[i];
    for (int id = 0; id < n && rc == 0; id++) {
        const char *s = v->tokens[id];
        size_t len = v->token_lens[id];
        float sc = score_of(v, id);
        int lo = 0, hi = m - 1; /* the rank: sorted[rank] == sc */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (sorted[mid] > sc)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t i = 0; i < len && rc == 0;) {
            int k = tok_utf8_len((const unsigned char *)s + i, len - i);
            i += (size_t)(k > 0 ? k : 1);
            if (i >= len)
                break;
            if (texts_find(t, s, i, -1) >= 0 && texts_find(t, s + i, len - i, -1) >= 0) {
                AttnErr e = {0};
                rc = bpe_add_merge_rank(b, s, i, s + i, len - i, lo, &e);
                if (rc < 0)
                    rc = attn_err_set(err, -rc, NULL, 0, "tokenizer.ggml.tokens[%d]: %s", id,
                                      e.msg);
            }
        }
    }
    free(sorted);
    return rc;
}

/* The special tokens (control, unknown, user defined), cut out of the text
 * whole: llama.cpp's special-token cache, in id order. */
static int add_specials(Bpe *b, const GgufVocab *v, const unsigned *attr, AttnErr *err)
{
    for (int i = 0; i < v->n_tokens; i++) {
        if (!(attr[i] & (A_CONTROL | A_UNKNOWN | A_USER_DEFINED)) || !v->token_lens[i])
            continue;
        unsigned flags = 0;
        if (attr[i] & (A_CONTROL | A_UNKNOWN))
            flags |= BPE_ADDED_SPECIAL;
        if (attr[i] & A_RSTRIP)
            flags |= BPE_ADDED_RSTRIP;
        AttnErr e = {0};
        int rc = bpe_add_special(b, v->tokens[i], v->token_lens[i], i, flags, &e);
        if (rc < 0)
            return attn_err_set(err, -rc, NULL, 0, "tokenizer.ggml.tokens[%d]: %s", i, e.msg);
    }
    return 0;
}

static int add_steps(Bpe *b, const GgufVocab *v, const Pre *pre, int space_prefix, AttnErr *err)
{
    static const int yes = 1, no = 0;
    BpeNormalizer spm = {.kind = BPE_NORM_CUSTOM, .fn = escape_spaces,
                         .fn_ctx = space_prefix ? &yes : &no};
    BpeNormalizer bpe = {.kind = BPE_NORM_CUSTOM, .fn = utf8_as_llama};
    int rc = bpe_add_normalizer(b, is_spm(v) ? &spm : &bpe, err);
    for (int k = 0; !is_spm(v) && k < 4 && pre->steps[k] >= 0 && rc == 0; k++) {
        BpePreTokenizer p = {.kind = BPE_PRE_CUSTOM, .next = split_next,
                             .next_ctx = &split_kind[pre->steps[k]]};
        rc = bpe_add_pre_tokenizer(b, &p, err);
    }
    return rc;
}

static int check(const GgufVocab *v, const Pre **pre, AttnErr *err)
{
    if (!v->model || (strcmp(v->model, "gpt2") != 0 && strcmp(v->model, "llama") != 0))
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0,
                            "tokenizer.ggml.model \"%.60s\" is not computed (gpt2, llama)",
                            v->model ? v->model : "");
    *pre = find_pre(is_spm(v) ? NULL : v->pre);
    if (!*pre) {
        char names[1024];
        gguf_vocab_pres(names, sizeof names);
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0,
                            "tokenizer.ggml.pre \"%.60s\" is not computed (%s)", v->pre, names);
    }
    if (v->n_tokens <= 0 || v->n_tokens > BPE_MAX_VOCAB || !v->tokens || !v->token_lens)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "tokenizer.ggml.tokens has %d tokens (1 to %d)", v->n_tokens,
                            BPE_MAX_VOCAB);
    if (!is_spm(v) && (v->n_merges < 0 || (v->n_merges && (!v->merges || !v->merge_lens))))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "tokenizer.ggml.merges has %d merges",
                            v->n_merges);
    for (int i = 0; i < v->n_tokens; i++)
        if (!v->tokens[i] && v->token_lens[i])
            return attn_err_set(err, ATTN_E_PARSE, NULL, 0, "tokenizer.ggml.tokens[%d] is missing",
                                i);
    return 0;
}

/* The template's BOS and EOS as llama.cpp adds them (add_special). */
static int set_template(Bpe *b, const GgufVocab *v, const Pre *pre, AttnErr *err)
{
    int spm = is_spm(v);
    int bos = special_id(v, v->bos_id, spm ? 1 : 11), eos = special_id(v, v->eos_id, spm ? 2 : 11);
    int add_bos = v->add_bos >= 0 ? v->add_bos : spm || pre->add_bos;
    int add_eos = v->add_eos >= 0 ? v->add_eos : 0;
    if (add_bos && bos < 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id "
                            "is not set");
    if (add_eos && eos < 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id "
                            "is not set");
    return bpe_set_template(b, &bos, add_bos, &eos, add_eos, err);
}

int gguf_vocab_build(Bpe **out, const GgufVocab *v, AttnErr *err)
{
    const Pre *pre = NULL;
    int rc = check(v, &pre, err);
    *out = NULL;
    if (rc < 0)
        return rc;
    int spm = is_spm(v);
    int space_prefix = v->add_space_prefix >= 0 ? v->add_space_prefix : spm;
    int unk = special_id(v, v->unk_id, spm ? 0 : -1);
    BpeOptions opt = {.ignore_merges = !spm && pre->ignore_merges,
                      .char_level = spm,
                      .byte_fallback = spm,
                      .has_unk = spm && unk >= 0,
                      .unk_id = unk >= 0 ? unk : 0,
                      .decode_strip = space_prefix,
                      .added_longest_first = 1,
                      .raw_text = 1,
                      .decode_llama = 1,
                      .decode_clean = !spm && pre->clean};
    Texts t = {v, NULL, 0};
    unsigned *attr = malloc((size_t)v->n_tokens * sizeof *attr);
    for (t.n_slot = 1024; t.n_slot < 2 * (size_t)v->n_tokens;)
        t.n_slot *= 2;
    t.slot = calloc(t.n_slot, sizeof *t.slot);
    Bpe *b = bpe_create(&opt);
    if (!attr || !t.slot || !b) {
        rc = attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        goto cleanup;
    }
    for (int i = 0; i < v->n_tokens; i++)
        texts_find(&t, v->tokens[i] ? v->tokens[i] : "", v->token_lens[i], i);
    token_attrs(v, &t, attr);
    rc = add_steps(b, v, pre, space_prefix, err);
    if (rc == 0)
        rc = add_tokens(b, v, attr, err);
    if (rc == 0)
        rc = spm ? add_score_merges(b, v, &t, err) : add_merges(b, v, err);
    if (rc == 0)
        rc = add_specials(b, v, attr, err);
    if (rc == 0)
        rc = set_template(b, v, pre, err);
cleanup:
    free(attr);
    free(t.slot);
    if (rc < 0)
        bpe_destroy(b);
    else
        *out = b;
    return rc;
}
