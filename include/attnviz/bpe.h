/* Hugging Face tokenizers' BPE in memory (GPT-2, Llama 3, Qwen2, SmolLM2,
 * RoBERTa, the SentencePiece-style Llama 2 / Mistral files), BERT's
 * WordPiece and T5's Unigram: no files
 * (src/io/bpe_files.c reads vocab.json, merges.txt and tokenizer.json).
 *
 * The pipeline, as Hugging Face's tokenizers run it:
 *   1. invalid UTF-8 becomes U+FFFD, one per maximal invalid subpart (what
 *      Python's decode(errors="replace") and the WHATWG TextDecoder do, so
 *      the ids are those Hugging Face gives for the text so decoded);
 *   2. added tokens not "normalized" (`<|endoftext|>`, ...) are cut out,
 *      leftmost-longest, with their lstrip / rstrip / single_word options;
 *   3. each text between them goes through the normalizer steps
 *      (bpe_add_normalizer: NFC, Prepend, Replace, ...), then the
 *      "normalized" added tokens are cut out of it the same way (their
 *      content normalized too);
 *   4. each remaining text goes through the pre-tokenizer steps
 *      (bpe_add_pre_tokenizer: Split by a regex (PCRE2, UTF and UCP),
 *      Digits, ByteLevel, Metaspace), each step splitting every piece of
 *      the one before; with no step, GPT-2's ByteLevel (BpeOptions'
 *      add_prefix_space and no_regex), or for char_level one piece;
 *   5. each piece merges by rank, lowest first, leftmost first among equal
 *      ranks: byte-level (the default) from its bytes' characters of
 *      GPT-2's byte↔unicode table ('Ġ' is the space), char_level
 *      (SentencePiece style) from its characters, a character without a
 *      token becoming its bytes' `<0xNN>` tokens (byte_fallback) or unk;
 *      or WordPiece (BERT's: BpeOptions.wordpiece), no merges: the longest
 *      vocabulary token from each start, "##" before those after the first;
 *      or Unigram (T5's: BpeOptions.unigram), no merges: the pieces of the
 *      best total score (Viterbi);
 *   6. the post-processor's ids around the whole (a template's BOS):
 *      bpe_template_before / bpe_template_after, or bpe_encode_template.
 * GPT-2's pattern is
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * written by hand over utf8proc's Unicode categories (\s is Unicode's
 * White_Space, as in the regex engines Hugging Face and Python use).
 * The text is used exactly as given: no trimming, CRLF and blank lines are
 * tokens too; there is no cap on the number of tokens.
 *
 * Building: bpe_create, then the normalizer and pre-tokenizer steps, then
 * every vocabulary token (bpe_add_token), then the merges in rank order
 * (bpe_add_merge), then the added tokens (bpe_add_special), then the
 * template. Errors are -ATTN_E_* codes with a detail in the AttnErr (no
 * file or line: the readers add them). A built Bpe is only read by the
 * encoding and display functions: several threads may use one at once. */
#ifndef ATTNVIZ_BPE_H
#define ATTNVIZ_BPE_H

#include <stddef.h>

#include "attnviz/error.h"

#define BPE_MAX_VOCAB (1 << 21) /* ids are 0 .. BPE_MAX_VOCAB - 1 */
#define BPE_MAX_TOKEN_BYTES 4096 /* one vocabulary or added token's text */

/* What tokenizer.json's model, pre_tokenizer and decoder may set; zero is
 * GPT-2's. */
typedef struct BpeOptions {
    int add_prefix_space; /* ByteLevel: a space before each piece not starting with one */
    int no_regex;         /* ByteLevel use_regex false: no pattern split */
    int ignore_merges;    /* a piece found whole in the vocabulary is one token */
    int has_unk;          /* bytes without a token become unk_id (else dropped) */
    int unk_id;
    int fuse_unk;         /* consecutive unknown bytes become one unk_id */
    int byte_fallback;    /* a character without a token: its bytes' <0xNN> tokens */
    int char_level;       /* no ByteLevel: the tokens are text (SentencePiece style);
                             a token's bytes are its text with U+2581 '▁' as the space
                             and <0xNN> as byte NN */
    int decode_strip;     /* bpe_decode drops up to this many leading spaces (the
                             decoder's Strip start, or 1 for its Metaspace) */
    /* llama.cpp's ways (src/core/gguf_vocab.c sets them for a GGUF file's vocabulary): */
    int added_longest_first; /* added tokens cut out as llama.cpp's tokenizer_st_partition
                                does: the longest first, each everywhere it occurs in the
                                text not yet cut, then the next; LSTRIP / RSTRIP take ASCII
                                white space (C's isspace) */
    int decode_llama;     /* bpe_decode joins as llama_detokenize(ids, remove_special false,
                             unparse_special = !skip_special): decode_strip takes at most
                             one space, off the first token's piece only */
    int raw_text;         /* no U+FFFD for invalid UTF-8 (llama.cpp's): added tokens are
                             matched on the bytes as given, the normalizer and pre-tokenizer
                             steps get them (only custom ones may then be used), char_level
                             splits a character by its first byte's length */
    int decode_clean;     /* with decode_llama: llama.cpp's clean_up_tokenization_spaces
                             (" ?" " !" " ." " ," lose the space, " ' " its two, " 's" " 'm"
                             " 're" " 've" theirs) */
    /* WordPiece (BERT's tokenizer.json model; with char_level: tokens are text,
       a token's bytes its text as it is): each piece the longest vocabulary
       token from its start, then the longest continuing one (wp_prefix before
       it) from where that ended, ...; a piece that cannot be covered, or of
       more than wp_max_chars characters, is one unk_id */
    int wordpiece;
    char wp_prefix[16];   /* continuing_subword_prefix ("##"), NUL-terminated */
    int wp_max_chars;     /* max_input_chars_per_word (0: no limit) */
    int decode_wordpiece; /* bpe_decode as the WordPiece decoder: tokens joined by spaces,
                             a continuing one (wp_prefix) joined without it, then its
                             cleanup (" ." → "." ...) when decode_clean */
    /* Unigram (T5's SentencePiece in tokenizer.json; with char_level: tokens are
       text): each piece cut by tokenizers' Viterbi over the pieces' scores
       (bpe_add_piece), the highest total, among equals the one first found
       (starts left to right, shorter tokens first); a character with no
       one-character piece is an unknown of score min - 10, consecutive unknowns
       fused into one unk_id (or their bytes' <0xNN> tokens with byte_fallback);
       with has_unk 0 they are dropped */
    int unigram;
    int decode_metaspace; /* with char_level, bpe_decode as the Metaspace decoder
                             (prepend_scheme not never): every '▁' of the first token
                             decoded dropped, not only a leading space (decode_strip
                             unused) */
} BpeOptions;

/* Added-token flags (tokenizer.json's added_tokens fields). */
enum {
    BPE_ADDED_SPECIAL = 1,     /* "special": skipped by bpe_decode's skip_special */
    BPE_ADDED_LSTRIP = 2,      /* takes the white space before it */
    BPE_ADDED_RSTRIP = 4,      /* takes the white space after it */
    BPE_ADDED_SINGLE_WORD = 8, /* only between non-word characters */
    BPE_ADDED_NORMALIZED = 16  /* matched after the normalizer, content normalized too */
};

typedef struct Bpe Bpe;

/* A list of token ids, grown as needed; zero-initialise, free with
 * bpe_ids_free. */
typedef struct BpeIds {
    int *id;
    int n, cap;
} BpeIds;

void bpe_ids_free(BpeIds *ids);

/* ---- building ------------------------------------------------------------ */
/* An empty tokenizer (opt NULL: GPT-2's options). NULL when out of memory. */
Bpe *bpe_create(const BpeOptions *opt);
void bpe_destroy(Bpe *b);
/* Options set after the vocabulary is known (an unk_id is one of its ids). */
void bpe_set_options(Bpe *b, const BpeOptions *opt);

/* Room for n_tokens vocabulary tokens and n_merges merges, made before
 * they are added (optional): their maps are then not grown on the way,
 * where each growth rehashes all that is in them in one call (262 144
 * tokens: tens of ms). 0 or -ATTN_E_NOMEM. */
int bpe_reserve(Bpe *b, long n_tokens, long n_merges);

/* Vocabulary token `text` (len bytes, byte-level characters as in vocab.json)
 * with its id. -ATTN_E_DUPLICATE when the text or the id is taken,
 * -ATTN_E_RANGE for an id outside 0 .. BPE_MAX_VOCAB - 1, -ATTN_E_TOO_LARGE
 * past BPE_MAX_TOKEN_BYTES. */
int bpe_add_token(Bpe *b, const char *text, size_t len, long id, AttnErr *err);

/* A Unigram piece: bpe_add_token's token with its score (finite). */
int bpe_add_piece(Bpe *b, const char *text, size_t len, long id, double score, AttnErr *err);

/* The next merge (rank = the merges added before it): left + right. Both
 * and their join must be vocabulary tokens (-ATTN_E_RANGE names the one that
 * is not). A pair merged twice keeps the later rank, as Hugging Face does. */
int bpe_add_merge(Bpe *b, const char *left, size_t llen, const char *right, size_t rlen,
                  AttnErr *err);
/* A merge with its rank given (equal ranks merge leftmost first, as
 * SentencePiece's equal scores do); a pair already added keeps its rank
 * (llama.cpp's bpe_ranks keep a pair's first). The same checks as
 * bpe_add_merge. */
int bpe_add_merge_rank(Bpe *b, const char *left, size_t llen, const char *right, size_t rlen,
                       int rank, AttnErr *err);

/* An added token: content (valid UTF-8, not empty) is cut out of the text as
 * the one token id (which may also be a vocabulary token's, as
 * <|endoftext|> is GPT-2's 50256); flags BPE_ADDED_*. -ATTN_E_PARSE for
 * content that is empty or not UTF-8, -ATTN_E_RANGE for a bad id. */
int bpe_add_special(Bpe *b, const char *content, size_t len, long id, unsigned flags,
                    AttnErr *err);

/* With decode_llama, token id (a vocabulary token) decodes to nothing, as
 * llama.cpp's token_to_piece gives nothing for an unused or undefined token
 * (its text stays its label). */
void bpe_set_decode_none(Bpe *b, int id);

/* ---- the pipeline around the model (tokenizer.json) ---------------------- */
enum { BPE_NORM_NFC = 1, BPE_NORM_NFD, BPE_NORM_NFKC, BPE_NORM_NFKD, BPE_NORM_PREPEND,
       BPE_NORM_REPLACE, BPE_NORM_CUSTOM, BPE_NORM_BERT,
       BPE_NORM_STRIP,       /* Strip: white space (Unicode's) off the left, the right */
       BPE_NORM_PRECOMPILED, /* Precompiled: SentencePiece's precompiled_charsmap, run as
                                tokenizers does: per extended grapheme cluster (under 6
                                bytes) the first key on its way, else per character */
       BPE_NORM_LOWERCASE,   /* Lowercase: each character's Rust char::to_lowercase */
       BPE_NORM_NMT          /* Nmt: SentencePiece's nmt_nfkc control-character rule as
                                tokenizers' normalizers/unicode.rs: C0/C1 controls but NUL,
                                tab and line ends dropped; tab, line ends, U+1680, the
                                zero-width U+200B-200F, U+2028/2029, U+2581, BOM and
                                U+FFFD a space */
};
/* A custom normalizer step (BPE_NORM_CUSTOM): text (len bytes, any bytes)
 * into *out (malloc'ed, *out_len bytes, NUL-terminated); 0 or -ATTN_E_NOMEM. */
typedef int (*BpeNormFn)(const void *ctx, const char *text, size_t len, char **out,
                         size_t *out_len);
/* BertNormalizer's options (BpeNormalizer.bert), in its order: clean text
 * (NUL, U+FFFD and control characters dropped, white space a space), each
 * CJK ideograph with a space either side, accents stripped (NFD, then the
 * nonspacing marks dropped), lower case (Rust's char::to_lowercase). */
enum { BPE_BERT_CLEAN = 1, BPE_BERT_CHINESE = 2, BPE_BERT_STRIP_ACCENTS = 4,
       BPE_BERT_LOWERCASE = 8 };

/* One normalizer step (a Sequence is its steps in order). */
typedef struct BpeNormalizer {
    int kind;                /* BPE_NORM_* */
    const char *pattern;     /* Replace: what is replaced, a literal or a regex */
    size_t pattern_len;
    int regex;
    const char *content;     /* Prepend: the text put before a non-empty text;
                                Replace: the replacement */
    size_t content_len;
    BpeNormFn fn;            /* Custom: the step */
    const void *fn_ctx;      /* Custom: fn's ctx (not copied: it must outlive the Bpe) */
    unsigned bert;           /* BertNormalizer: BPE_BERT_* */
    int strip_left, strip_right;  /* Strip */
    const void *charsmap;    /* Precompiled: the blob (base64-decoded), copied */
    size_t charsmap_len;
} BpeNormalizer;

/* Appends a normalizer step. -ATTN_E_PARSE for a regex PCRE2 cannot
 * compile (the detail says where) or a charsmap that is cut short or
 * corrupt (the detail starts "precompiled_charsmap"), -ATTN_E_NOMEM. */
int bpe_add_normalizer(Bpe *b, const BpeNormalizer *n, AttnErr *err);

enum { BPE_PRE_BYTE_LEVEL = 1, BPE_PRE_SPLIT, BPE_PRE_DIGITS, BPE_PRE_METASPACE,
       BPE_PRE_CUSTOM,
       BPE_PRE_BERT,             /* BertPreTokenizer: split at white space (dropped) and
                                    around each punctuation character (ASCII's or Unicode P*) */
       BPE_PRE_WHITESPACE_SPLIT, /* WhitespaceSplit: split at white space (dropped) */
       BPE_PRE_WHITESPACE        /* Whitespace: \w+|[^\w\s]+ kept, as the reference classes
                                    the characters (runs of word characters, runs of others) */
};
/* A custom split (BPE_PRE_CUSTOM): the end of the piece of text (len bytes
 * of valid UTF-8) that starts at pos < len; ctx is the step's. */
typedef size_t (*BpeSplitFn)(const void *ctx, const char *text, size_t len, size_t pos);
/* Split's behaviours: what becomes of the pattern's matches. */
enum { BPE_SPLIT_REMOVED, BPE_SPLIT_ISOLATED, BPE_SPLIT_MERGED_WITH_PREVIOUS,
       BPE_SPLIT_MERGED_WITH_NEXT, BPE_SPLIT_CONTIGUOUS };
enum { BPE_PREPEND_ALWAYS, BPE_PREPEND_FIRST, BPE_PREPEND_NEVER };

/* One pre-tokenizer step (a Sequence is its steps in order). */
typedef struct BpePreTokenizer {
    int kind;                /* BPE_PRE_* */
    int add_prefix_space;    /* ByteLevel: a space before each piece not starting with one */
    int no_regex;            /* ByteLevel: no split by GPT-2's pattern */
    const char *pattern;     /* Split: a literal, or a regex (PCRE2, UTF and UCP) */
    size_t pattern_len;
    int regex;
    int behavior;            /* Split: BPE_SPLIT_* */
    int invert;              /* Split: the pieces between matches are the matches */
    int individual_digits;   /* Digits: each digit alone, else runs of digits */
    const char *replacement; /* Metaspace: one character for the space (NULL: '▁') */
    size_t replacement_len;
    int prepend_scheme;      /* Metaspace: BPE_PREPEND_* (first: only at the text's start) */
    int split;               /* Metaspace: split before each replacement character */
    BpeSplitFn next;         /* Custom: cuts each piece into the pieces it gives */
    const void *next_ctx;    /* Custom: next's ctx (not copied: it must outlive the Bpe) */
} BpePreTokenizer;

/* Appends a pre-tokenizer step. -ATTN_E_PARSE for a regex PCRE2 cannot
 * compile, -ATTN_E_RANGE for a replacement that is not one character. */
int bpe_add_pre_tokenizer(Bpe *b, const BpePreTokenizer *p, AttnErr *err);

/* The post-processor's template for one text: n_before ids before it (the
 * BOS: Llama 3's <|begin_of_text|>, Llama 2's <s>) and n_after after it;
 * copied. -ATTN_E_RANGE for an id outside 0 .. BPE_MAX_VOCAB - 1. */
int bpe_set_template(Bpe *b, const int *before, int n_before, const int *after, int n_after,
                     AttnErr *err);
/* The template's ids before / after the text, *n set (0 and NULL when none:
 * GPT-2, Qwen2). */
const int *bpe_template_before(const Bpe *b, int *n);
const int *bpe_template_after(const Bpe *b, int *n);

/* ---- encoding ------------------------------------------------------------ */
/* The ids of text (len bytes, any bytes) appended to out. 0 or -ATTN_E_NOMEM
 * (out keeps what it had). */
int bpe_encode(const Bpe *b, const char *text, size_t len, BpeIds *out);
/* The template's ids before, bpe_encode's, the template's after: Hugging
 * Face's encode(text) with add_special_tokens. 0 or -ATTN_E_NOMEM. */
int bpe_encode_template(const Bpe *b, const char *text, size_t len, BpeIds *out);
/* bpe_encode_template's ids, or an error where Hugging Face's tokenizers
 * refuses the text: -ATTN_E_UNSUPPORTED for a Unigram whose unk_id is null
 * meeting a character no piece covers (err names it; byte_fallback does not
 * help, as in tokenizers' encode_optimized; bpe_encode and
 * bpe_encode_template leave such a character out), -ATTN_E_NOMEM. out
 * keeps what it had on an error. */
int bpe_encode_checked(const Bpe *b, const char *text, size_t len, BpeIds *out, AttnErr *err);

/* ---- the vocabulary ------------------------------------------------------- */
int bpe_n_vocab(const Bpe *b);  /* the largest id + 1 */
int bpe_n_merges(const Bpe *b); /* merges added (pairs merged twice count twice) */
/* The id of an added token's content, else of a vocabulary token's text;
 * -1 when neither. */
int bpe_token_id(const Bpe *b, const char *text, size_t len);
/* 1 for a WordPiece model (BERT's): white space and control characters
 * are dropped by its normalizer and pre-tokenizer, every other character
 * reaches a token (unk_id at worst). */
int bpe_is_wordpiece(const Bpe *b);
/* 1 for a Unigram model (T5's): white space becomes the next piece's ▁
 * (Metaspace), every other character a piece, unk_id (or bytes) at worst. */
int bpe_is_unigram(const Bpe *b);
/* 1 when id is an added token marked special (GPT-2: <|endoftext|>). */
int bpe_is_special(const Bpe *b, int id);
/* Token id's bytes (the byte-level characters decoded; an added token's
 * content as it is; a vocabulary token with a character outside the table,
 * its UTF-8 as Hugging Face's decoder gives it; a "normalized" added
 * token's content normalized, as Hugging Face decodes it; char_level: '▁' as a space,
 * <0xNN> as the one byte NN), *len set; NULL and 0 for
 * an id with no token. Not NUL-terminated. */
const char *bpe_token_bytes(const Bpe *b, int id, size_t *len);

/* Token id's display text into out (cap bytes, NUL-terminated when cap > 0):
 * its bytes, each whole UTF-8 character as it is and every other byte
 * (part of a character split across tokens, or a NUL) as ‹0xNN›; with
 * space_mark not NULL every space is written as space_mark (a label's "Ġ").
 * Returns the length the whole text needs (as snprintf); 0 for an unknown id. */
size_t bpe_token_text(const Bpe *b, int id, const char *space_mark, char *out, size_t cap);

/* The bytes of ids[0..n) joined (special tokens left out when skip_special),
 * up to decode_strip leading spaces dropped (byte-fallback bytes join into
 * the UTF-8 they make), into *out (malloc'ed, NUL-terminated, *len bytes before the NUL). Unknown
 * ids give nothing. 0 or -ATTN_E_NOMEM. */
int bpe_decode(const Bpe *b, const int *ids, int n, int skip_special, char **out, size_t *len);

/* ---- the pieces, for tests and the readers -------------------------------- */
/* Byte b's byte-level character (GPT-2's bytes_to_unicode) as UTF-8 into
 * out[0..2), returns its length (1 or 2). */
int bpe_byte_char(unsigned char b, char out[2]);
/* The byte whose byte-level character is code point cp, or -1. */
int bpe_char_byte(unsigned cp);
/* text with each maximal invalid UTF-8 subpart replaced by U+FFFD, into out
 * (room for 3 * len bytes); returns the bytes written. */
size_t bpe_utf8_clean(char *out, const char *text, size_t len);
/* The end of GPT-2's pattern's piece that starts at pos (< len) of text. */
size_t bpe_split_next(const char *text, size_t len, size_t pos);
/* 1 when code point cp is Unicode White_Space (the pattern's \s). */
int bpe_is_space(unsigned cp);

#endif
