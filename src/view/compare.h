/* Internal to the view: the compare view's window part (compare.c). With
 * s->cmp_ref set the heatmap panel holds three figures side by side: the
 * pinned reference, the current map (s->map) and their difference. */
#ifndef ATTNVIZ_VIEW_COMPARE_H
#define ATTNVIZ_VIEW_COMPARE_H

#include "view_internal.h"

/* Lay the three figures out in area (the heatmap panel under its title)
 * into l->cmp[0..2], one cell size for all three, and make l->heat the
 * middle one: the hit tests of the heatmap then answer for the current map. */
void compare_layout(View *v, const ViewState *s, SDL_Rect area, ViewLayout *l);
/* The heatmap panel of the compare view: its title line (what differs) and
 * the three figures (or the reason there is no difference map). */
void compare_draw_window(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);

#endif
