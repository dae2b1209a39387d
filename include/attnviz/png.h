/* PNG writing from a raw pixel buffer given as stb's stbi_write_png takes
 * it (width, height, pixels, stride), fast rather than small. No SDL: the
 * app hands it an RGB888 surface's pixels (export_save_png). */
#ifndef ATTNVIZ_PNG_H
#define ATTNVIZ_PNG_H

#include <stddef.h>

#include "attnviz/error.h"

/* Filtered bytes (h rows of 1 + 3·w) from which two threads share the work. */
#define PNG_SPLIT_BYTES ((size_t)1 << 20)
/* The largest image, in filtered bytes (16384 × 16384 is 0.8 GiB). */
#define PNG_MAX_BYTES ((size_t)1 << 30)

/* Write the w×h image at pixels to path as an 8-bit RGB PNG, atomically
 * (a temporary file in the same folder, then a rename: a failure leaves
 * path as it was and no file behind). Each pixel is a 32-bit word
 * 0x00RRGGBB in the machine's byte order, what an SDL_PIXELFORMAT_RGB888
 * surface holds (the top byte is ignored); row y starts stride bytes after
 * row y − 1 (stride ≥ 4·w; a multiple of 4, as a surface's pitch is).
 * Returns 0, -ATTN_E_RANGE (no pixels, w or h < 1, a short or unaligned
 * stride), -ATTN_E_TOO_LARGE (over PNG_MAX_BYTES) or -ATTN_E_IO / NOMEM
 * with err naming path. */
int png_write(const char *path, int w, int h, const void *pixels, int stride,
              AttnErr *err);

#endif
