/* What bpe.c uses of bpe_split.c beyond bpe.h: the characters beside an
 * added token (its single_word, lstrip and rstrip options). Text valid UTF-8. */
#ifndef ATTNVIZ_BPE_SPLIT_H
#define ATTNVIZ_BPE_SPLIT_H

#include <stddef.h>

/* 1 when cp is a word character of the regex crate's \w. */
int bpe_is_word_char(unsigned cp);
/* 1 when the character ending at pos / starting at pos is a \w character. */
int bpe_word_before(const char *text, size_t pos);
int bpe_word_after(const char *text, size_t len, size_t pos);
/* The start of the white space that ends at pos, not before from. */
size_t bpe_space_before(const char *text, size_t from, size_t pos);
/* The end of the white space that starts at pos. */
size_t bpe_space_after(const char *text, size_t len, size_t pos);

#endif
