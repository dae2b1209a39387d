/* A figure or a grid of maps drawn offscreen from plain data alone (no
 * View, no Model): a software renderer on an RGB888 surface of the figure's
 * size, the cells from one texture, the SDL back end (figure_draw). */
#include "attnviz/view.h"
#include "figure_draw.h"

#include <stdlib.h>

SDL_Texture *figure_heat_texture(SDL_Renderer *r, const Figure *f, const AttnMap *map,
                                 const AttnTheme *th)
{
    uint32_t *px = malloc((size_t)f->Tq * f->Tk * sizeof *px);
    uint32_t *lut = malloc((COLORMAP_STEPS + 1) * sizeof *lut);
    SDL_Texture *t = NULL;
    if (px && lut) {
        colormap_lut(f->cb.cs.id, lut);
        colormap_map_texels(&f->cb.cs, map, lut, th->mask, px, f->Tk);
        t = SDL_CreateTexture(r, SDL_PIXELFORMAT_RGB888, SDL_TEXTUREACCESS_STATIC, f->Tk, f->Tq);
        if (t) {
            SDL_UpdateTexture(t, NULL, px, f->Tk * 4);
            SDL_SetTextureScaleMode(t, SDL_ScaleModeNearest);
        }
    }
    free(px);
    free(lut);
    return t;
}

/* A software renderer on a new w×h RGB888 surface with a text cache, the
 * theme's background, then draw(d, what): figure or grid. */
static SDL_Surface *render(const ViewFonts *fonts, int w, int h, int dark, int query,
                           void (*draw)(FigureDraw *d, const void *fig, const void *maps),
                           const void *fig, const void *maps, AttnErr *err)
{
    if (w < 1 || h < 1 || w > 16384 || h > 16384) {
        attn_err_set(err, ATTN_E_TOO_LARGE, NULL, 0, "image of %d×%d pixels is too large", w, h);
        return NULL;
    }
    SDL_Surface *out = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = out ? SDL_CreateSoftwareRenderer(out) : NULL;
    TextCache *tc = NULL;
    if (!r) {
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create a %d×%d image: %s", w, h, SDL_GetError());
        goto fail;
    }
    if (!(tc = text_create(r, fonts, err)))
        goto fail;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    FigureDraw d = {r, tc, NULL, NULL, theme_get(dark), 1.0f, query, -1, -1, -1, 1, NULL, NULL, 0};
    draw(&d, fig, maps);
    SDL_RenderPresent(r);
    if (d.heat)
        SDL_DestroyTexture(d.heat);
    if (d.bar)
        SDL_DestroyTexture(d.bar);
    text_destroy(tc);
    SDL_DestroyRenderer(r);
    return out;
fail:
    text_destroy(tc);
    if (r)
        SDL_DestroyRenderer(r);
    SDL_FreeSurface(out);
    return NULL;
}

static void draw_figure(FigureDraw *d, const void *fig, const void *map)
{
    const Figure *f = fig;
    d->scale = (float)f->label_px / 14.0f;
    d->heat = f->Tq && f->Tk ? figure_heat_texture(d->r, f, map, d->th) : NULL;
    d->bar = figure_bar_texture(d->r, f->cb.cs.id);
    figure_draw(d, f, map);
}

static void draw_grid(FigureDraw *d, const void *grid, const void *maps)
{
    const FigureGrid *g = grid;
    d->scale = (float)g->head_px / 12.0f;
    d->bar = figure_bar_texture(d->r, g->cb.cs.id);
    d->heat = figure_grid_texture(d->r, g, maps, d->th);
    figure_draw_grid(d, g, maps);
}

SDL_Surface *view_render_figure(const ViewFonts *fonts, const Figure *f, const AttnMap *map,
                                int dark, int query, AttnErr *err)
{
    return render(fonts, f->w, f->h, dark, query, draw_figure, f, map, err);
}

SDL_Surface *view_render_grid(const ViewFonts *fonts, const FigureGrid *g, const AttnMaps *ms,
                              int dark, AttnErr *err)
{
    return render(fonts, g->w, g->h, dark, -1, draw_grid, g, ms, err);
}
