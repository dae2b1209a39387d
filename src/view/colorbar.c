/* The heatmap's colour bar: a gradient texture per colour map and five
 * ticks with the colour scale's labels, and the room those labels need. */
#include "view_internal.h"

/* Room right of the colour bar for its tick labels (at least the usual
 * "0.25" width, so the grid does not jump while typing). */
int tick_width(View *v, const ViewState *s)
{
    int w = S(s, 40);
    if (shown_T(s) > 0) {
        heat_scale(v, s);
        for (int k = 0; k <= 4; k++) {
            int tw;
            text_size(v->text, S(s, 12), v->ticks[k], &tw, NULL);
            w = tw > w ? tw : w;
        }
    }
    return w + S(s, 6);
}

static SDL_Texture *bar_texture(View *v, ColormapId id)
{
    if (v->bar[id])
        return v->bar[id];
    SDL_Texture *t = SDL_CreateTexture(v->r, SDL_PIXELFORMAT_RGB888,
                                       SDL_TEXTUREACCESS_STATIC, 1, 256);
    if (!t)
        return NULL;
    uint32_t px[256];
    for (int k = 0; k < 256; k++) {
        Rgb c = colormap_rgb(id, 1.0f - k / 255.0f); /* top = high */
        px[k] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
    }
    SDL_UpdateTexture(t, NULL, px, 4);
    SDL_SetTextureScaleMode(t, SDL_ScaleModeNearest); /* 256 steps: no visible bands */
    v->bar[id] = t;
    return t;
}

/* The colour bar at bar: the shown matrix's colour map, top = high, and
 * five ticks with the scale's labels right of it. */
void draw_colorbar(View *v, SDL_Renderer *r, const ViewState *s, SDL_Rect bar)
{
    const Theme *th = theme(s);
    ColorScale cs = heat_scale(v, s);
    SDL_Texture *bt = bar_texture(v, cs.id);
    if (bt)
        SDL_RenderCopy(r, bt, NULL, &bar);
    outline(r, bar, th->border, 1);
    int tp = S(s, 12), tlh = text_line_height(v->text, tp);
    for (int k = 0; k <= 4; k++) {
        int y = bar.y + bar.h - (int)lroundf(bar.h * k / 4.0f);
        set_color(r, th->dim);
        SDL_RenderDrawLine(r, bar.x + bar.w, y, bar.x + bar.w + S(s, 4), y);
        text_draw(v->text, tp, th->dim, v->ticks[k], bar.x + bar.w + S(s, 6),
                  y - tlh / 2, 0, 0);
    }
}
