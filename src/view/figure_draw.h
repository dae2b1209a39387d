/* Internal to the view: the SDL back end of the figure layout (figure.h),
 * for the window's heatmap panel and the PNG export. */
#ifndef ATTNVIZ_FIGURE_DRAW_H
#define ATTNVIZ_FIGURE_DRAW_H

#include <SDL.h>

#include "attnviz/figure.h"
#include "attnviz/theme.h"
#include "text.h"

typedef struct FigureDraw {
    SDL_Renderer *r;
    TextCache *text;
    SDL_Texture *heat;      /* one texel per cell of the map (masked in the
                               theme's mask colour), or NULL: filled cell by cell */
    SDL_Texture *bar;       /* the colour map bottom to top, or NULL */
    const AttnTheme *th;
    float scale;            /* the figure's scale (line widths) */
    int query, key;         /* selected row and column, -1 */
    int hover_i, hover_j;   /* hovered cell, -1 */
    int background;         /* 1: clear the figure's rectangle first */
    const unsigned char *q_special, *k_special; /* labels drawn in the theme's
                               blue (special tokens like [CLS]), or NULL */
    int head_colors;        /* a grid's head headers in view_head_color's */
} FigureDraw;

/* The colour map as a 1×256 gradient texture, top = high; NULL on error. */
SDL_Texture *figure_bar_texture(SDL_Renderer *r, ColormapId id);

/* The map's cells as a Tk×Tq texture of f's colour scale (masked cells
 * in th's mask colour), for FigureDraw.heat; NULL on error (figure_render.c). */
SDL_Texture *figure_heat_texture(SDL_Renderer *r, const Figure *f, const AttnMap *map,
                                 const AttnTheme *th);

/* Measuring through the text cache, for figure_layout. */
TextMeasure figure_measure_text(TextCache *t);

void figure_draw(const FigureDraw *d, const Figure *f, const AttnMap *map);
/* Every map of a grid as one texture (map (l, h) at texel (h·Tk, l·Tq)),
 * for figure_draw_grid's FigureDraw.heat; NULL on error. */
SDL_Texture *figure_grid_texture(SDL_Renderer *r, const FigureGrid *g, const AttnMaps *ms,
                                 const AttnTheme *th);
/* A grid of maps (figure_grid_layout) with its headers and colour bar; the
 * cells from d->heat when it is figure_grid_texture's, else cell by cell. */
void figure_draw_grid(const FigureDraw *d, const FigureGrid *g, const AttnMaps *ms);

#endif
