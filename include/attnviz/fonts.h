/* The fonts the app hands the view (view.h's ViewFonts), found and read
 * here so that the view touches no file: the main font (--font, or DejaVu
 * Sans through fontconfig, its path remembered in a cache file) read into
 * memory, and fallback fonts that fontconfig finds for characters the main
 * font lacks (Chinese, Japanese, Korean), asked for while drawing. */
#ifndef ATTNVIZ_FONTS_H
#define ATTNVIZ_FONTS_H

#include <stddef.h>

#include "attnviz/error.h"
#include "attnviz/view.h"

typedef struct AppFonts {
    ViewFonts view;  /* what view_create and the offscreen renders take */
    char *path;      /* the main font's file (owned) */
    char *data;      /* its bytes (owned), or NULL: SDL_ttf opens path */
    void *fallback_state; /* the platform's font list (fontconfig's on the
                             desktop), loaded at the first fallback asked for */
    int fallback_failed;
} AppFonts;

/* Find and read the main font: the file font_path, or with NULL DejaVu Sans
 * through fontconfig (fonts_find_default). A file that cannot be read is
 * left for SDL_ttf to open by its path (its error then names it). Returns 0,
 * or -ATTN_E_IO (no font found: err says how to install one) or
 * -ATTN_E_NOMEM; f is then closed. Views made with f->view borrow it: close
 * it after them, and do not move it while open (f->view.ctx points to it). */
int fonts_open(AppFonts *f, const char *font_path, AttnErr *err);
/* Free what fonts_open holds; f zeroed (or closed) does nothing. */
void fonts_close(AppFonts *f);

/* The path of DejaVu Sans (or any sans font): on the desktop through
 * fontconfig, looked up once a process and remembered in
 * $XDG_CACHE_HOME/attnviz/font (or ~/.cache/attnviz/font) for the next
 * (src/app/platform_desktop.c); 0 or -1. */
int fonts_find_default(char *out, size_t n);

#endif
