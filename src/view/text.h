/* Internal to the view: fonts by pixel size and a cache of rendered strings,
 * so labels cost one texture copy per frame, not a TTF_Render call. */
#ifndef ATTNVIZ_VIEW_TEXT_H
#define ATTNVIZ_VIEW_TEXT_H

#include <SDL.h>
#include <SDL_ttf.h>

#include "attnviz/error.h"

typedef struct TextCache TextCache;

/* Find DejaVu Sans (or any sans font) through fontconfig; 0 or -1. */
int text_find_font(char *out, size_t n);

TextCache *text_create(SDL_Renderer *r, const char *font_path, AttnErr *err);
void text_destroy(TextCache *t);
/* Draw through another renderer from now on (the cached textures go; the
 * fonts and the measurements stay). */
void text_set_renderer(TextCache *t, SDL_Renderer *r);

/* Draw UTF-8 text with its top-left (align 0), centre (1) or right edge (2)
 * at x, top at y; returns the width drawn. angle rotates about the top-left. */
int text_draw(TextCache *t, int px, SDL_Color c, const char *s, int x, int y,
              int align, double angle);
/* Size of text at px. */
void text_size(TextCache *t, int px, const char *s, int *w, int *h);
/* Height of a line at px. */
int text_line_height(TextCache *t, int px);

#endif
