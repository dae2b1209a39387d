/* What the .json and .safetensors attention parsers share (implemented in
 * attn_json.c): a stored shape seen as (L, H, Tq, Tk), token lists from JSON
 * arrays, the host's byte order, and releasing what a parser made. io only. */
#ifndef ATTNVIZ_IO_ATTN_PARSE_H
#define ATTNVIZ_IO_ATTN_PARSE_H

#include <cjson/cJSON.h>

#include "attnviz/attnfile.h"
#include "attnviz/error.h"

/* nd dims (T×T, H×T×T, L×H×T×T, L×1×H×T×T) → dims4 = (L, H, Tq, Tk), each
 * from 1 to its ATTN_FILE_MAX_*; errors name what (e.g. "tensor attention"). */
int attn_parse_shape(const double *dims, int nd, int dims4[4], const char *what,
                     const char *name, AttnErr *err);

/* f's tokens from JSON arrays of strings: tok (self-attention: Tq = Tk
 * entries, q = k) or qtok and ktok (cross: Tq and Tk entries); each may be
 * NULL, and qtok/ktok win over tok. where prefixes the key in messages
 * ("__metadata__." or ""). f->L, H, Tq, Tk must be set. */
int attn_parse_tokens(AttnFile *f, const cJSON *tok, const cJSON *qtok, const cJSON *ktok,
                      const char *where, const char *name, AttnErr *err);

/* 1 when this machine stores numbers most significant byte first. */
int attn_parse_host_big_endian(void);

/* Free f's tokens and buffer (what a parser made, never f->map) and zero f:
 * the parsers' clean-up on error. */
void attn_parse_release(AttnFile *f);

#endif
