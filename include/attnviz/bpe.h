/* GPT-2's byte-level BPE tokenizer in memory: no files (src/io/bpe_files.c
 * reads vocab.json, merges.txt and tokenizer.json into one).
 *
 * The pipeline, as Hugging Face's tokenizers run it for GPT-2:
 *   1. invalid UTF-8 becomes U+FFFD, one per maximal invalid subpart (what
 *      Python's decode(errors="replace") and the WHATWG TextDecoder do, so
 *      the ids are those Hugging Face gives for the text so decoded);
 *   2. added tokens (`<|endoftext|>`, ...) are cut out, leftmost-longest,
 *      with their lstrip / rstrip / single_word options;
 *   3. the rest is split by GPT-2's pattern
 *      's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *      (written by hand over utf8proc's Unicode categories: \s is Unicode's
 *      White_Space, as in the regex engines Hugging Face and Python use);
 *   4. each piece's bytes become the byte-level characters (the byte↔unicode
 *      table: 'Ġ' is the space) and merge by rank, lowest first, leftmost
 *      first among equal ranks.
 * The text is used exactly as given: no trimming, CRLF and blank lines are
 * tokens too; there is no cap on the number of tokens.
 *
 * Building: bpe_create, then every vocabulary token (bpe_add_token), then the
 * merges in rank order (bpe_add_merge), then the added tokens
 * (bpe_add_special). Errors are -ATTN_E_* codes with a detail in the AttnErr
 * (no file or line: the readers add them). A built Bpe is only read by the
 * encoding and display functions: several threads may use one at once. */
#ifndef ATTNVIZ_BPE_H
#define ATTNVIZ_BPE_H

#include <stddef.h>

#include "attnviz/error.h"

#define BPE_MAX_VOCAB (1 << 21) /* ids are 0 .. BPE_MAX_VOCAB - 1 */
#define BPE_MAX_TOKEN_BYTES 4096 /* one vocabulary or added token's text */

/* What tokenizer.json's model and pre_tokenizer may set; zero is GPT-2's. */
typedef struct BpeOptions {
    int add_prefix_space; /* ByteLevel: a space before each piece not starting with one */
    int no_regex;         /* ByteLevel use_regex false: no pattern split */
    int ignore_merges;    /* a piece found whole in the vocabulary is one token */
    int has_unk;          /* bytes without a token become unk_id (else dropped) */
    int unk_id;
    int fuse_unk;         /* consecutive unknown bytes become one unk_id */
} BpeOptions;

/* Added-token flags (tokenizer.json's added_tokens fields). */
enum {
    BPE_ADDED_SPECIAL = 1,     /* "special": skipped by bpe_decode's skip_special */
    BPE_ADDED_LSTRIP = 2,      /* takes the white space before it */
    BPE_ADDED_RSTRIP = 4,      /* takes the white space after it */
    BPE_ADDED_SINGLE_WORD = 8, /* only between non-word characters */
    BPE_ADDED_NORMALIZED = 16  /* matched in the second pass (after the others) */
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

/* Vocabulary token `text` (len bytes, byte-level characters as in vocab.json)
 * with its id. -ATTN_E_DUPLICATE when the text or the id is taken,
 * -ATTN_E_RANGE for an id outside 0 .. BPE_MAX_VOCAB - 1, -ATTN_E_TOO_LARGE
 * past BPE_MAX_TOKEN_BYTES. */
int bpe_add_token(Bpe *b, const char *text, size_t len, long id, AttnErr *err);

/* The next merge (rank = the merges added before it): left + right. Both
 * and their join must be vocabulary tokens (-ATTN_E_RANGE names the one that
 * is not). A pair merged twice keeps the later rank, as Hugging Face does. */
int bpe_add_merge(Bpe *b, const char *left, size_t llen, const char *right, size_t rlen,
                  AttnErr *err);

/* An added token: content (valid UTF-8, not empty) is cut out of the text as
 * the one token id (which may also be a vocabulary token's, as
 * <|endoftext|> is GPT-2's 50256); flags BPE_ADDED_*. -ATTN_E_PARSE for
 * content that is empty or not UTF-8, -ATTN_E_RANGE for a bad id. */
int bpe_add_special(Bpe *b, const char *content, size_t len, long id, unsigned flags,
                    AttnErr *err);

/* ---- encoding ------------------------------------------------------------ */
/* The ids of text (len bytes, any bytes) appended to out. 0 or -ATTN_E_NOMEM
 * (out keeps what it had). */
int bpe_encode(const Bpe *b, const char *text, size_t len, BpeIds *out);

/* ---- the vocabulary ------------------------------------------------------- */
int bpe_n_vocab(const Bpe *b);  /* the largest id + 1 */
int bpe_n_merges(const Bpe *b); /* merges added (pairs merged twice count twice) */
/* The id of an added token's content, else of a vocabulary token's text;
 * -1 when neither. */
int bpe_token_id(const Bpe *b, const char *text, size_t len);
/* 1 when id is an added token marked special (GPT-2: <|endoftext|>). */
int bpe_is_special(const Bpe *b, int id);
/* Token id's bytes (the byte-level characters decoded; an added token's
 * content as it is; a vocabulary token with a character outside the table,
 * its UTF-8 as Hugging Face's decoder gives it), *len set; NULL and 0 for
 * an id with no token. Not NUL-terminated. */
const char *bpe_token_bytes(const Bpe *b, int id, size_t *len);

/* Token id's display text into out (cap bytes, NUL-terminated when cap > 0):
 * its bytes, each whole UTF-8 character as it is and every other byte
 * (part of a character split across tokens, or a NUL) as ‹0xNN›; with
 * space_mark not NULL every space is written as space_mark (a label's "Ġ").
 * Returns the length the whole text needs (as snprintf); 0 for an unknown id. */
size_t bpe_token_text(const Bpe *b, int id, const char *space_mark, char *out, size_t cap);

/* The bytes of ids[0..n) joined (special tokens left out when skip_special),
 * into *out (malloc'ed, NUL-terminated, *len bytes before the NUL). Unknown
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
