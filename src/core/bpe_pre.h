/* What bpe.c uses of bpe_pre.c: tokenizer.json's normalizer and
 * pre-tokenizer steps, compiled (PCRE2 for their regexes), and run over a
 * text that is valid UTF-8. Not the added tokens or the merges (bpe.c). */
#ifndef ATTNVIZ_BPE_PRE_H
#define ATTNVIZ_BPE_PRE_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>

#include "attnviz/bpe.h"
#include "bpe_charsmap.h"

/* A growing byte string, always NUL-terminated; failed once out of memory. */
typedef struct BpeStr {
    char *s;
    size_t n, cap;
    int failed;
} BpeStr;
void bpe_str_put(BpeStr *s, const char *p, size_t n);

/* A step with its own copies of the texts and its compiled regex. */
typedef struct BpeNorm {
    BpeNormalizer n;   /* pattern and content point into own */
    char *own;
    pcre2_code *re;    /* Replace with a regex */
    BpeCharsmap map;   /* Precompiled */
} BpeNorm;

typedef struct BpePre {
    BpePreTokenizer p; /* pattern and replacement point into own */
    char *own;
    pcre2_code *re;    /* Split (a literal is compiled as one too) */
    unsigned repl_cp;  /* Metaspace's replacement character */
} BpePre;

/* Pieces of text one after another in buf: piece i is off[i], len[i];
 * first[i] when it starts where the whole text starts. */
typedef struct BpePieces {
    char *buf;
    size_t n_buf, cap_buf;
    size_t *off, *len;
    int *first;
    int n, cap;
} BpePieces;

/* What one run of the steps allocates (zero-initialise, free with
 * bpe_pre_work_free). */
typedef struct BpePreWork {
    BpePieces a, b;
    struct BpeSpan *span;
    size_t cap_span;
    pcre2_match_data *md;
    pcre2_match_context *mc; /* a match limit: a pathological pattern ends, as no match */
    int failed;
} BpePreWork;

#define BPE_MATCH_LIMIT 1000000

int bpe_norm_compile(BpeNorm *dst, const BpeNormalizer *src, AttnErr *err);
void bpe_norm_free(BpeNorm *n);
/* text (valid UTF-8) through steps[0..n) into *out (malloc'ed, *out_len
 * bytes, NUL-terminated). 0 or -ATTN_E_NOMEM. */
int bpe_normalize(const BpeNorm *steps, int n, const char *text, size_t len, char **out,
                  size_t *out_len);

int bpe_pre_compile(BpePre *dst, const BpePreTokenizer *src, AttnErr *err);
void bpe_pre_free(BpePre *p);
/* text (valid UTF-8) through steps[0..n) (n > 0): the pieces, empty ones
 * left out, in w (valid until the next run); NULL when out of memory. */
const BpePieces *bpe_pre_run(BpePreWork *w, const BpePre *steps, int n, const char *text,
                             size_t len, int at_start);
void bpe_pre_work_free(BpePreWork *w);

#endif
