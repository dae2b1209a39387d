/* Tokenizer: UTF-8 text in, word and punctuation tokens out.
 * ASCII letters are lower-cased, white space separates tokens, punctuation
 * (. , ; : ! ? " ( ) [ ] { } and their Unicode friends) becomes tokens of its
 * own, and so does each CJK ideograph, kana and Hangul syllable (as BERT's
 * BasicTokenizer does with ideographs: Chinese has no spaces between words);
 * everything else stays whole (a multi-byte character is never cut).
 * Invalid UTF-8 bytes become U+FFFD. At most ATTN_MAX_TOKENS are kept;
 * n_total counts all of them so callers can report the cut. */
#ifndef ATTNVIZ_TOKENIZER_H
#define ATTNVIZ_TOKENIZER_H

#include <stddef.h>

#define ATTN_MAX_TOKENS 1024

typedef struct TokenList {
    int n;                          /* tokens kept, <= ATTN_MAX_TOKENS */
    int n_total;                    /* tokens in the text */
    int n_replaced;                 /* invalid bytes replaced by U+FFFD */
    char *buf;                      /* token texts, each NUL-terminated */
    size_t cap;                     /* bytes allocated in buf */
    size_t off[ATTN_MAX_TOKENS];    /* start of token i in buf */
    size_t src_start[ATTN_MAX_TOKENS]; /* byte range of token i in the text */
    size_t src_len[ATTN_MAX_TOKENS];
} TokenList;

void tok_init(TokenList *tl);
void tok_free(TokenList *tl);

/* Split text (len bytes, need not end in NUL; NUL bytes count as space).
 * Returns 0 or -ATTN_E_NOMEM. */
int tok_split(TokenList *tl, const char *text, size_t len);

static inline const char *tok_text(const TokenList *tl, int i)
{
    return tl->buf + tl->off[i];
}

/* 1 when token i is a punctuation token (one character of the set above). */
int tok_is_punct(const TokenList *tl, int i);

/* Number of bytes of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
int tok_utf8_len(const unsigned char *s, size_t avail);
/* The same, and the code point in *cp (U+FFFD when invalid). */
int tok_utf8_decode(const unsigned char *s, size_t avail, unsigned *cp);

#endif
