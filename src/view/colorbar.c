/* The colour bar's gradient: one 1×256 texture per colour map, top = high,
 * made once per view. The figure back end (figure_draw.c) draws the bar,
 * its ticks and caption with it. */
#include "view_internal.h"

SDL_Texture *bar_texture(View *v, ColormapId id)
{
    if (v->bar[id])
        return v->bar[id];
    SDL_Texture *t = figure_bar_texture(v->r, id);
    v->bar[id] = t;
    return t;
}
