/* tokenizer.json's SentencePiece parts read as Hugging Face's tokenizers
 * reads them (src/io/bpe_spm.c); internal to src/io. */
#ifndef ATTNVIZ_BPE_SPM_H
#define ATTNVIZ_BPE_SPM_H

#include <stddef.h>
#include <stdint.h>

/* Standard padded base64 (no white space, no bits left over) into *out
 * (malloc'ed, *len bytes); -1 when it is not that or out of memory. */
int bpe_base64_decode(const char *s, unsigned char **out, size_t *len);
/* 1e0 .. 1e308, each correctly rounded. */
void bpe_pow10(double pow10[309]);
/* The JSON number at p (before e) as serde_json parses it into an f64
 * (pow10 from bpe_pow10); 0, or -1 when it is not a number or out of
 * range. */
int bpe_serde_number(const char *p, const char *e, const double *pow10, double *out);

#endif
