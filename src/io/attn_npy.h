/* What the .npy and .npz readers share (implemented in attn_npy.c): numpy's
 * array header parsed from bytes in memory, an attention array's shape seen
 * as (L, H, Tq, Tk), and token strings cleaned into valid UTF-8. io only. */
#ifndef ATTNVIZ_IO_ATTN_NPY_H
#define ATTNVIZ_IO_ATTN_NPY_H

#include <stddef.h>

#include "attnviz/attnfile.h"
#include "attnviz/error.h"

#include <stdint.h>

#define NPY_MAX_DIMS 8

/* One .npy header: the dict's three keys and where the data starts. */
typedef struct NpyHeader {
    char descr[32];     /* e.g. "<f4", "<U12", "|S7" */
    int fortran;
    int ndim;
    uint64_t shape[NPY_MAX_DIMS]; /* 64-bit even where size_t is not (wasm32):
                                     a size past 2^32 is named, not wrapped */
    size_t data_off;    /* bytes from the magic to the first element */
    size_t data_len;    /* bytes after the header */
} NpyHeader;

/* Parse the magic, version (1.0, 2.0, 3.0) and header dict of the .npy
 * bytes p[0..len). Errors name `name` (and `what`, e.g. the npz member, when
 * not NULL). */
int attn_npy_header(NpyHeader *h, const void *p, size_t len, const char *what,
                    const char *name, AttnErr *err);

/* The header's descr as a float dtype ('<', '>' or '=' then f2, f4, f8). */
int attn_npy_float_dtype(const NpyHeader *h, AttnDtype *dt, int *big_endian,
                         const char *what, const char *name, AttnErr *err);

/* An attention array: T×T, H×T×T, L×H×T×T or L×1×H×T×T (Tq×Tk allowed)
 * into part (data borrowed from p), checking the caps and that the data is
 * all there. layer_only: a per-layer npz member (H×T×T or 1×H×T×T). */
int attn_npy_part(AttnPart *part, const NpyHeader *h, const void *p, int layer_only,
                  const char *what, const char *name, AttnErr *err);

/* The shape as "(2, 3, 4)" into buf. */
const char *attn_npy_shape_str(const NpyHeader *h, char *buf, size_t n);

/* A malloc'ed NUL-terminated copy of s[0..n) as valid UTF-8: every invalid
 * byte and every NUL becomes U+FFFD. NULL when out of memory. */
char *attn_utf8_clean_dup(const char *s, size_t n);

#endif
