/* SentencePiece's precompiled_charsmap (tokenizer.json's Precompiled
 * normalizer) read and run as Hugging Face's tokenizers runs it
 * (spm_precompiled). Internal to the core (bpe_pre.c); no base64 here (the
 * reader decodes the field). */
#ifndef ATTNVIZ_BPE_CHARSMAP_H
#define ATTNVIZ_BPE_CHARSMAP_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/error.h"

/* The blob: a little-endian u32 trie size in bytes, the double-array
 * trie's units (size / 4 of them), then the normalized strings, each ended
 * by a NUL; a key's value is where its string starts. */
typedef struct BpeCharsmap {
    uint32_t *unit;
    size_t n_unit;
    char *norm;        /* valid UTF-8 */
    size_t n_norm;
} BpeCharsmap;

/* blob (len bytes) into m (its own copies). -ATTN_E_PARSE with a detail
 * starting "precompiled_charsmap" for a blob shorter than its trie size
 * says, an empty trie, or normalized strings that are not UTF-8;
 * -ATTN_E_NOMEM. */
int bpe_charsmap_parse(BpeCharsmap *m, const void *blob, size_t len, AttnErr *err);
void bpe_charsmap_free(BpeCharsmap *m);

/* The normalized string of the first key (the shortest) that is a prefix
 * of s[0..n), stopping at a NUL byte, *len set; NULL when none (or when the
 * trie points outside itself or its strings: a corrupt map matches
 * nothing). */
const char *bpe_charsmap_match(const BpeCharsmap *m, const char *s, size_t n, size_t *len);

/* text (valid UTF-8) normalized into *out (malloc'ed, *out_len bytes,
 * NUL-terminated): each extended grapheme cluster shorter than 6 bytes that
 * has a match is replaced whole by it, else each of its characters by its
 * match or itself. 0 or -ATTN_E_NOMEM. */
int bpe_charsmap_normalize(const BpeCharsmap *m, const char *text, size_t len, char **out,
                           size_t *out_len);

#endif
