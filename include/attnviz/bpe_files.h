/* A BPE tokenizer's files into a Bpe (attnviz/bpe.h): vocab.json (an
 * object token → id) with merges.txt ("#version" line, then "left right" a
 * line, in rank order), or Hugging Face's tokenizer.json:
 *   model          BPE: merges as "left right" strings or ["left", "right"]
 *                  pairs, ignore_merges, byte_fallback, unk_token, fuse_unk;
 *                  WordPiece; Unigram: vocab [[piece, score], ...] (the
 *                  scores read as serde_json reads them), unk_id,
 *                  byte_fallback (WordLevel and the rest refused by name)
 *   normalizer     null, NFC, NFD, NFKC, NFKD, Prepend, Replace (String or
 *                  Regex), Strip, Precompiled (precompiled_charsmap: base64
 *                  of SentencePiece's blob), BertNormalizer, Sequence of these
 *   pre_tokenizer  null, ByteLevel, Split (String or Regex pattern, every
 *                  behavior, invert), Digits, Metaspace (prepend_scheme
 *                  first / always / never, or the older add_prefix_space;
 *                  split), BertPreTokenizer, Whitespace, WhitespaceSplit,
 *                  Sequence of these; without a ByteLevel the
 *                  tokens are text (char_level: Llama 2, Mistral)
 *   added_tokens   lstrip, rstrip, single_word, normalized, special
 *   post_processor null, ByteLevel, TemplateProcessing (its "single": the
 *                  ids before and after "A", bpe_template_before / _after),
 *                  Sequence of these
 *   decoder        null, ByteLevel, Metaspace, Replace, ByteFallback, Fuse,
 *                  Strip, Sequence of these (for bpe_decode's leading space)
 * With vocab.json, a `<|endoftext|>` of the vocabulary is GPT-2's special
 * token. Errors name the file, the line and what is wrong (a merge whose
 * parts are not in the vocabulary, an id that is not a whole number, a
 * regex PCRE2 cannot compile, a type not listed above, named:
 * -ATTN_E_UNSUPPORTED "pre_tokenizer Whitespace is not supported (...)");
 * on error *out is NULL. */
#ifndef ATTNVIZ_BPE_FILES_H
#define ATTNVIZ_BPE_FILES_H

#include <stdio.h>

#include "attnviz/bpe.h"
#include "attnviz/error.h"

#define BPE_MAX_FILE_BYTES (256L << 20)

/* From bytes in memory (names for the messages). */
int bpe_parse_vocab_merges(Bpe **out, const char *vocab, size_t vocab_len, const char *vocab_name,
                           const char *merges, size_t merges_len, const char *merges_name,
                           AttnErr *err);
int bpe_parse_tokenizer_json(Bpe **out, const char *data, size_t len, const char *name,
                             AttnErr *err);

/* From files. */
int bpe_load_vocab_merges(Bpe **out, const char *vocab_path, const char *merges_path,
                          AttnErr *err);
int bpe_load_tokenizer_json(Bpe **out, const char *path, AttnErr *err);
/* A model folder's tokenizer: tokenizer.json when it is there (as Hugging
 * Face's fast tokenizer prefers it), else vocab.json and merges.txt; a
 * folder with only SentencePiece models (spiece.model, source.spm,
 * target.spm, ...) is -ATTN_E_UNSUPPORTED naming them. */
int bpe_load_dir(Bpe **out, const char *dir, AttnErr *err);

/* `--print tokens`: a line per token, its id, a tab and its display text
 * (bpe_token_text) as a JSON string. 0 or -ATTN_E_IO. */
int bpe_print_tokens(FILE *f, const Bpe *b, const int *ids, int n);
/* The same, the tokens from n_given on generated: a tab and "g" after each
 * of them (--generate). */
int bpe_print_tokens_marked(FILE *f, const Bpe *b, const int *ids, int n, int n_given);

#endif
