/* Internal to the view: fonts by pixel size and a cache of rendered strings,
 * so labels cost one texture copy per frame, not a TTF_Render call. */
#ifndef ATTNVIZ_VIEW_TEXT_H
#define ATTNVIZ_VIEW_TEXT_H

#include <SDL.h>
#include <SDL_ttf.h>

#include "attnviz/error.h"
#include "attnviz/view.h"

typedef struct TextCache TextCache;

/* A cache drawing with fonts (borrowed: they outlive it). */
TextCache *text_create(SDL_Renderer *r, const ViewFonts *fonts, AttnErr *err);
void text_destroy(TextCache *t);
/* Draw through another renderer from now on (the cached textures go; the
 * fonts and the measurements stay). */
void text_set_renderer(TextCache *t, SDL_Renderer *r);
/* Forget the characters no font had, and every string rendered or
 * measured: a fallback font has become available. */
void text_fonts_changed(TextCache *t);

/* Draw UTF-8 text with its top-left (align 0), centre (1) or right edge (2)
 * at x, top at y; returns the width drawn. angle rotates about the top-left. */
int text_draw(TextCache *t, int px, SDL_Color c, const char *s, int x, int y,
              int align, double angle);
/* Size of text at px. */
void text_size(TextCache *t, int px, const char *s, int *w, int *h);
/* Height of a line at px. */
int text_line_height(TextCache *t, int px);

/* For the layout tests: while boxes is non-NULL, every text drawn is
 * recorded there (up to max; *n counts them all): its box on the screen cut
 * to the renderer's clip rectangle (the bounding box when rotated), the
 * angle and the start of the text. text_record(NULL, 0, NULL) stops. */
typedef struct TextBox {
    SDL_Rect box;
    float qx[4], qy[4]; /* its corners in order (rotated: unclipped) */
    double angle;
    char text[200];
} TextBox;
void text_record(TextBox *boxes, int max, int *n);

#endif
