/* The tokenizer of a GGUF file (llama.cpp's tokenizer.ggml.* metadata) as a
 * Bpe (bpe.h) that gives llama.cpp's own ids: the arrays are plain data here,
 * already read from the file (src/io/gguf.c reads it; nothing here reads a
 * file).
 *
 * What llama.cpp does (src/llama-vocab.cpp, src/unicode.cpp), and so this:
 *   - tokenizer.ggml.model "gpt2": byte-level BPE. tokenizer.ggml.pre names the
 *     split, written here by hand as llama.cpp writes its own (not a regex
 *     engine: its Unicode table, its quirks): llama-bpe (Llama 3, and the
 *     names llama.cpp gives the same split: llama3, llama-v3, falcon3, ...),
 *     qwen2, smollm, gpt-2, default (or none), dbrx, ... (gguf_vocab_pres).
 *     Merges rank as listed (a pair listed twice keeps its first rank);
 *     llama-bpe takes a piece whole when it is a token (ignore_merges).
 *   - "llama": SentencePiece style. Every text between special tokens gets a
 *     space before it (add_space_prefix, default true), spaces become '▁',
 *     and adjacent symbols merge into the token of highest score (equal
 *     scores: leftmost first), whatever its type; a character with no token
 *     becomes its bytes' <0xNN> tokens.
 *   - Special tokens (types control, unknown, user defined, and the texts
 *     llama.cpp makes control whatever their type: <|endoftext|>, </s>,
 *     <|im_end|>, <|eot_id|>, <end_of_turn>, <|fim_prefix|>, ...) are cut out
 *     of the text first, the longest first (parse_special). With general.name
 *     naming Phi-3, they take the white space after them (</s> too; not
 *     <unk>, <s>, <|endoftext|>), as llama.cpp does by name.
 *   - The template: the BOS before when add_bos (tokenizer.ggml.add_bos_token,
 *     else true for "llama" and llama-bpe, false for the others), the EOS after
 *     when add_eos (default false): llama_tokenize(text, add_special = true,
 *     parse_special = true) is bpe_encode_template's.
 *   - The text's bytes as llama.cpp takes them (not Hugging Face's U+FFFD
 *     per invalid subpart): special tokens matched on the bytes as given; a
 *     gpt2 model's text read as llama.cpp reads UTF-8 (each byte that starts
 *     no code point U+FFFD; an overlong form or a surrogate a code point); a
 *     llama model's split into characters by their first byte's length, a
 *     symbol without a token becoming its bytes' <0xNN>.
 *   - Decoding (bpe_decode): llama_detokenize(ids, remove_special = false,
 *     unparse_special = !skip_special): control and unknown tokens' text only
 *     when skip_special is 0, unused tokens nothing; the first token's space
 *     dropped when add_space_prefix; llama.cpp's clean-up of " ." " ," " 's"
 *     ... for the pre-tokenizers it applies it to.
 * Not done: llama.cpp's other tokenizers (bert, t5, rwkv, plamo2, gemma4), its
 * other pre-tokenizers (refused by name), and where llama.cpp itself would
 * fail or be undefined (a text that needs a byte token the vocabulary lacks,
 * or a gpt2 model's bytes reading as a code point past U+10FFFF: llama.cpp
 * throws, here the unk and U+FFFD; equal-length special tokens that overlap:
 * llama.cpp's order is its std::sort's, here the lower id's first; a
 * SentencePiece character without a token that a token would join: llama.cpp
 * may merge it, here it is its bytes at once; several texts of one of
 * llama.cpp's fill-in-the-middle lists: it makes one control, here all). */
#ifndef ATTNVIZ_GGUF_VOCAB_H
#define ATTNVIZ_GGUF_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/bpe.h"
#include "attnviz/error.h"

/* gguf's token types (tokenizer.ggml.token_type). */
enum { GGUF_TOKEN_NORMAL = 1, GGUF_TOKEN_UNKNOWN = 2, GGUF_TOKEN_CONTROL = 3,
       GGUF_TOKEN_USER_DEFINED = 4, GGUF_TOKEN_UNUSED = 5, GGUF_TOKEN_BYTE = 6 };

typedef struct GgufVocab {
    const char *model;            /* tokenizer.ggml.model: "gpt2" or "llama" */
    const char *pre;              /* tokenizer.ggml.pre (NULL: absent → "default") */
    int n_tokens;
    const char *const *tokens; const size_t *token_lens;   /* tokenizer.ggml.tokens */
    const float *scores;          /* tokenizer.ggml.scores or NULL */
    const int32_t *types;         /* tokenizer.ggml.token_type or NULL (GGUF_TOKEN_*) */
    int n_merges;
    const char *const *merges; const size_t *merge_lens;  /* tokenizer.ggml.merges: "a b" */
    int bos_id, eos_id, unk_id, pad_id;  /* -1: absent, llama.cpp's default then (gpt2: 11,
                                            llama: bos 1, eos 2, unk 0; none when past
                                            the vocabulary) */
    int add_bos, add_eos;         /* tokenizer.ggml.add_bos_token / add_eos_token (-1: absent:
                                     llama.cpp's default for the model) */
    int add_space_prefix;         /* tokenizer.ggml.add_space_prefix (-1: absent) */
    const char *name;             /* general.name or NULL (llama.cpp reads Phi-3's by it) */
} GgufVocab;

/* A Bpe that tokenizes as llama.cpp's llama_tokenize(text, add_special = true,
 * parse_special = true) does on that file (bpe_encode_template), and decodes as
 * its llama_detokenize. *out owned by the caller (bpe_destroy). Errors
 * (-ATTN_E_*) name the array and index ("tokenizer.ggml.merges[12]: \"a\" is not
 * a token") or the value ("tokenizer.ggml.pre \"xyz\" is not computed (...)"). */
int gguf_vocab_build(Bpe **out, const GgufVocab *v, AttnErr *err);

/* The names of tokenizer.ggml.pre built here, comma-separated, into out (cap
 * bytes, NUL-terminated when cap > 0); the length the whole list needs (as
 * snprintf). */
size_t gguf_vocab_pres(char *out, size_t cap);

#endif
