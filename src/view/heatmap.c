/* The window's heatmap panel: the figure layout (figure.c) of the shown map
 * fitted into the panel, zoomed and panned, measured with the view's fonts;
 * the map as a texture of one texel per cell, uploaded only when its
 * numbers, colours or theme change; its colour scale scanned once per map;
 * then the SDL back end (figure_draw.c) draws it. */
#include "view_internal.h"

#include <string.h>

/* What the shown map's numbers and colours are: a hover or a selection
 * redraws the frame, not the matrix. */
static void map_key(const ViewState *s, unsigned long key[8], int dark)
{
    unsigned long k[8] = {s->maps_gen, (unsigned long)s->map.Tq, (unsigned long)s->map.Tk,
                          (unsigned long)s->map.kind, (unsigned long)(long)s->map.head,
                          (unsigned long)s->cmap | (unsigned long)s->cscale << 8,
                          (unsigned long)(uintptr_t)s->map.v, (unsigned long)dark};
    memcpy(key, k, sizeof k);
}

ColorScale heat_scale(View *v, const ViewState *s)
{
    unsigned long key[8];
    map_key(s, key, 0);
    if (memcmp(key, v->scale_key, sizeof key) != 0) {
        v->heat_scale = colormap_scale_mode(&s->map, s->cmap, s->cscale);
        memcpy(v->scale_key, key, sizeof key);
    }
    return v->heat_scale;
}

void window_figure_options(const ViewState *s, SDL_Rect area, float max_cell, FigureOptions *o)
{
    memset(o, 0, sizeof *o);
    o->scale = s->scale;
    o->area_x = area.x;
    o->area_y = area.y;
    o->area_w = area.w;
    o->area_h = area.h;
    o->max_cell = max_cell;
    o->zoom = s->zoom;
    o->pan_row = s->pan_row;
    o->pan_col = s->pan_col;
    o->query = s->query;
    o->key = s->key;
    o->cmap = s->cmap;
    o->cscale = s->cscale;
}

void heat_figure(View *v, const ViewState *s, SDL_Rect area, float max_cell, Figure *f)
{
    FigureOptions o;
    window_figure_options(s, area, max_cell, &o);
    o.axis_titles = 1;
    ColorScale cs = heat_scale(v, s);
    o.cs = &cs;
    TextMeasure tm = figure_measure_text(v->text);
    figure_layout(f, &s->map, &o, &tm);
}

static void update_heat_texture(View *v, const ViewState *s)
{
    int Tq = s->map.Tq, Tk = s->map.Tk;
    unsigned long key[8];
    map_key(s, key, s->dark);
    if (v->heat && v->heat_w >= Tk && v->heat_h >= Tq && memcmp(key, v->heat_key, sizeof key) == 0)
        return;
    memcpy(v->heat_key, key, sizeof key);
    ColorScale cs = heat_scale(v, s);
    if (!v->heat || v->heat_w < Tk || v->heat_h < Tq) {
        if (v->heat)
            SDL_DestroyTexture(v->heat);
        int w = Tk > v->heat_w ? Tk : v->heat_w, h = Tq > v->heat_h ? Tq : v->heat_h;
        v->heat = SDL_CreateTexture(v->r, SDL_PIXELFORMAT_RGB888, SDL_TEXTUREACCESS_STREAMING, w, h);
        v->heat_w = v->heat ? w : 0;
        v->heat_h = v->heat ? h : 0;
        if (!v->heat)
            return;
        SDL_SetTextureScaleMode(v->heat, SDL_ScaleModeNearest);
    }
    void *pixels;
    int pitch;
    SDL_Rect rc = {0, 0, Tk, Tq};
    if (SDL_LockTexture(v->heat, &rc, &pixels, &pitch) != 0) {
        memset(v->heat_key, 0, sizeof v->heat_key);
        return;
    }
    /* the colour map's table as texels: the same colours colormap_scale_rgb
     * gives (it looks up t on COLORMAP_STEPS + 1 entries too) */
    if (v->heat_lut_id != (int)cs.id) {
        colormap_lut(cs.id, v->heat_lut);
        v->heat_lut_id = (int)cs.id;
    }
    colormap_map_texels(&cs, &s->map, v->heat_lut, theme_get(s->dark)->mask, pixels, pitch / 4);
    SDL_UnlockTexture(v->heat);
}

void draw_heatmap(View *v, SDL_Renderer *r, const ViewState *s, const Figure *f)
{
    if (!f->Tq || !f->Tk || !s->map.v)
        return;
    update_heat_texture(v, s);
    FigureDraw d = {r, v->text, v->heat, bar_texture(v, f->cb.cs.id), theme_get(s->dark), s->scale,
                    s->query, s->key, s->hover_i, s->hover_j, 0, s->q_special, s->k_special, 0};
    figure_draw(&d, f, &s->map);
}
