/* A figure drawn offscreen: software renderer on an RGB888 surface of the
 * figure's size, the cells from one texture, the SDL back end (figure_draw).
 * The PNG exports of the command line and of the window come from here. */
#include "attnviz/view.h"
#include "figure_draw.h"

#include <stdlib.h>

static SDL_Texture *heat_texture(SDL_Renderer *r, const Figure *f, const AttnMap *map,
                                 const AttnTheme *th)
{
    uint32_t *px = malloc((size_t)f->Tq * f->Tk * sizeof *px);
    uint32_t *lut = malloc((COLORMAP_STEPS + 1) * sizeof *lut);
    SDL_Texture *t = NULL;
    if (px && lut) {
        colormap_lut(f->cs.id, lut);
        colormap_map_texels(&f->cs, map, lut, th->mask, px, f->Tk);
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

static SDL_Texture *bar_texture(SDL_Renderer *r, ColormapId id)
{
    SDL_Texture *t = SDL_CreateTexture(r, SDL_PIXELFORMAT_RGB888, SDL_TEXTUREACCESS_STATIC, 1, 256);
    if (!t)
        return NULL;
    uint32_t px[256];
    for (int k = 0; k < 256; k++) {
        Rgb c = colormap_rgb(id, 1.0f - k / 255.0f); /* top = high */
        px[k] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
    }
    SDL_UpdateTexture(t, NULL, px, 4);
    SDL_SetTextureScaleMode(t, SDL_ScaleModeNearest);
    return t;
}

SDL_Surface *view_render_figure(const char *font_path, const Figure *f, const AttnMap *map,
                                int dark, int query, AttnErr *err)
{
    if (f->w < 1 || f->h < 1 || f->w > 16384 || f->h > 16384) {
        attn_err_set(err, ATTN_E_TOO_LARGE, NULL, 0, "image of %d×%d pixels is too large", f->w, f->h);
        return NULL;
    }
    SDL_Surface *out = SDL_CreateRGBSurfaceWithFormat(0, f->w, f->h, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = out ? SDL_CreateSoftwareRenderer(out) : NULL;
    TextCache *tc = NULL;
    if (!r) {
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create a %d×%d image: %s", f->w, f->h,
                     SDL_GetError());
        goto fail;
    }
    if (!(tc = text_create(r, font_path, err)))
        goto fail;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    FigureDraw d = {r, tc, NULL, NULL, theme_get(dark), 1.0f, query, -1, -1, -1, 1};
    d.scale = (float)f->label_px / 14.0f;
    d.heat = f->Tq && f->Tk ? heat_texture(r, f, map, d.th) : NULL;
    d.bar = bar_texture(r, f->cs.id);
    figure_draw(&d, f, map);
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
