/* Offscreen rendering: a software renderer on an RGB888 surface, so exports
 * and tests get the same pixels with or without a display. The surface goes
 * back to the caller: the app writes it (export_save_png). */
#include "attnviz/view.h"
#include "figure_draw.h"
#include "view_internal.h"

#include <stdlib.h>

/* Create the surface and renderer, run draw, free the renderer. */
static SDL_Surface *render_offscreen(const ViewFonts *fonts, const ViewState *s,
                                     ViewPanel p, int whole, int w, int h,
                                     AttnErr *err)
{
    /* a tiny renderer to measure the text, then the real one at the size */
    SDL_Surface *probe = SDL_CreateRGBSurfaceWithFormat(0, 8, 8, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = probe ? SDL_CreateSoftwareRenderer(probe) : NULL;
    View *v = r ? view_create(r, fonts, err) : NULL;
    SDL_Surface *out = NULL;
    if (!v) {
        if (!probe || !r)
            attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create an offscreen renderer: %s",
                         SDL_GetError());
        goto cleanup;
    }
    if (!whole)
        view_panel_size(v, s, p, &w, &h);
    if (w < 1 || h < 1 || w > 16384 || h > 16384) {
        attn_err_set(err, ATTN_E_TOO_LARGE, NULL, 0, "image of %d×%d pixels is too large", w, h);
        goto cleanup;
    }
    out = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r2 = out ? SDL_CreateSoftwareRenderer(out) : NULL;
    if (!r2) {
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create a %d×%d image: %s", w, h,
                     SDL_GetError());
        SDL_FreeSurface(out);
        out = NULL;
        goto cleanup;
    }
    view_set_renderer(v, r2);
    SDL_DestroyRenderer(r);
    r = r2;
    if (whole) {
        ViewLayout l;
        view_layout(v, s, w, h, &l);
        view_draw_window(v, r, s, &l);
    } else {
        view_draw_panel(v, r, s, p);
    }
    SDL_RenderPresent(r);
cleanup:
    view_destroy(v);
    if (r)
        SDL_DestroyRenderer(r);
    SDL_FreeSurface(probe);
    return out;
}

SDL_Surface *view_render_panel(const ViewFonts *fonts, const ViewState *s,
                               ViewPanel p, AttnErr *err)
{
    return render_offscreen(fonts, s, p, 0, 0, 0, err);
}

SDL_Surface *view_render_window(const ViewFonts *fonts, const ViewState *s,
                                int w, int h, AttnErr *err)
{
    return render_offscreen(fonts, s, PANEL_HEATMAP, 1, w, h, err);
}

/* The grid's maps, the key-value brackets, the marks and sort labels on
 * r, as the window draws them. */
static void draw_model_grid(View *v, SDL_Renderer *r, const ViewState *s, const AttnMaps *ms,
                            const FigureGrid *g)
{
    const AttnTheme *th = theme_get(s->dark);
    FigureDraw d = {r, v->text, figure_grid_texture(r, g, ms, th), figure_bar_texture(r, g->cb.cs.id), th,
                    (float)g->head_px / 12.0f, -1, -1, -1, -1, 1, NULL, NULL, s->grid_score != NULL};
    figure_draw_grid(&d, g, ms);
    draw_kv_groups(v, r, s, g);
    draw_grid_marks(v, r, s, g);
    SDL_RenderPresent(r);
    if (d.heat)
        SDL_DestroyTexture(d.heat);
    if (d.bar)
        SDL_DestroyTexture(d.bar);
}

SDL_Surface *view_render_model_grid(const ViewFonts *fonts, const ViewState *s, const AttnMaps *ms,
                                    const FigureOptions *base, FigureGrid *layout, AttnErr *err)
{
    /* a tiny renderer to measure the marks, then the real one at the size */
    SDL_Surface *probe = SDL_CreateRGBSurfaceWithFormat(0, 8, 8, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = probe ? SDL_CreateSoftwareRenderer(probe) : NULL;
    View *v = r ? view_create(r, fonts, err) : NULL;
    FigureGrid *g = malloc(sizeof *g);
    SDL_Surface *out = NULL;
    if (!v || !g) {
        if (!probe || !r || !g)
            attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create an offscreen renderer: %s", SDL_GetError());
        goto cleanup;
    }
    FigureOptions o = *base;
    o.scale = s->scale;
    heads_grid_options(v, s, &o);
    figure_grid_layout(g, ms, &o, &figure_measure_dejavu);
    if (g->w < 1 || g->h < 1 || g->w > 16384 || g->h > 16384) {
        attn_err_set(err, ATTN_E_TOO_LARGE, NULL, 0, "image of %d×%d pixels is too large", g->w, g->h);
        goto cleanup;
    }
    out = SDL_CreateRGBSurfaceWithFormat(0, g->w, g->h, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r2 = out ? SDL_CreateSoftwareRenderer(out) : NULL;
    if (!r2) {
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create a %d×%d image: %s", g->w, g->h, SDL_GetError());
        SDL_FreeSurface(out);
        out = NULL;
        goto cleanup;
    }
    view_set_renderer(v, r2);
    SDL_DestroyRenderer(r);
    r = r2;
    draw_model_grid(v, r, s, ms, g);
    if (layout)
        *layout = *g;
cleanup:
    view_destroy(v);
    if (r)
        SDL_DestroyRenderer(r);
    SDL_FreeSurface(probe);
    free(g);
    return out;
}
