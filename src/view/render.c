/* Offscreen rendering: a software renderer on an RGB888 surface, so exports
 * and tests get the same pixels with or without a display, and PNG writing
 * through a temporary file and a rename. */
#include "attnviz/io.h"
#include "attnviz/view.h"

#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Create the surface and renderer, run draw, free the renderer. */
static SDL_Surface *render_offscreen(const char *font_path, const ViewState *s,
                                     ViewPanel p, int whole, int w, int h,
                                     AttnErr *err)
{
    if (!SDL_WasInit(SDL_INIT_VIDEO)) {
        /* the software renderer needs no video driver; text needs none either */
    }
    SDL_Surface *probe = SDL_CreateRGBSurfaceWithFormat(0, 8, 8, 24, SDL_PIXELFORMAT_RGB888);
    SDL_Renderer *r = probe ? SDL_CreateSoftwareRenderer(probe) : NULL;
    View *v = r ? view_create(r, font_path, err) : NULL;
    SDL_Surface *out = NULL;
    if (!v) {
        if (!probe || !r)
            attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create an offscreen renderer: %s",
                         SDL_GetError());
        goto cleanup;
    }
    if (!whole)
        view_panel_size(v, s, p, &w, &h);
    view_destroy(v);
    v = NULL;
    SDL_DestroyRenderer(r);
    r = NULL;
    if (w < 1 || h < 1 || w > 16384 || h > 16384) {
        attn_err_set(err, ATTN_E_TOO_LARGE, NULL, 0, "image of %d×%d pixels is too large", w, h);
        goto cleanup;
    }
    out = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB888);
    if (out)
        SDL_FillRect(out, NULL, 0); /* defined padding bytes for the PNG writer */
    r = out ? SDL_CreateSoftwareRenderer(out) : NULL;
    v = r ? view_create(r, font_path, err) : NULL;
    if (!v) {
        if (!out || !r)
            attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "cannot create a %d×%d image: %s", w, h,
                         SDL_GetError());
        SDL_FreeSurface(out);
        out = NULL;
        goto cleanup;
    }
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

SDL_Surface *view_render_panel(const char *font_path, const ViewState *s,
                               ViewPanel p, AttnErr *err)
{
    return render_offscreen(font_path, s, p, 0, 0, 0, err);
}

SDL_Surface *view_render_window(const char *font_path, const ViewState *s,
                                int w, int h, AttnErr *err)
{
    return render_offscreen(font_path, s, PANEL_HEATMAP, 1, w, h, err);
}

/* libpng directly rather than IMG_SavePNG: the same lossless PNG, with the
 * SUB filter and zlib level 3 instead of trying every filter at level 6,
 * which made encoding most of an export's run time. */
/* libpng reports through our status line, not by printing */
static void png_quiet_error(png_structp png, png_const_charp msg)
{
    (void)msg;
    png_longjmp(png, 1);
}

static void png_quiet_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static int write_png(FILE *f, SDL_Surface *surf)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_quiet_error,
                                              png_quiet_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    uint8_t *row = malloc((size_t)surf->w * 3);
    volatile int rc = -1;
    if (!png || !info || !row)
        goto cleanup;
    if (setjmp(png_jmpbuf(png)))
        goto cleanup;
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)surf->w, (png_uint_32)surf->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, 0, PNG_FILTER_SUB);
    png_set_compression_level(png, 3);
    png_write_info(png, info);
    /* RGB888 is one 32-bit XRGB pixel; PNG rows are R, G, B bytes */
    for (int y = 0; y < surf->h; y++) {
        const uint32_t *px = (const uint32_t *)((const uint8_t *)surf->pixels + (size_t)y * surf->pitch);
        for (int x = 0; x < surf->w; x++) {
            row[3 * x] = (uint8_t)(px[x] >> 16);
            row[3 * x + 1] = (uint8_t)(px[x] >> 8);
            row[3 * x + 2] = (uint8_t)px[x];
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    rc = 0;
cleanup:
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    free(row);
    return rc;
}

static int png_writer(FILE *f, void *ctx)
{
    return write_png(f, ctx);
}

int view_save_png(SDL_Surface *surf, const char *path, AttnErr *err)
{
    if (surf->format->format != SDL_PIXELFORMAT_RGB888)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0, "PNG export needs an RGB888 image");
    return io_write_atomic(path, png_writer, surf, err);
}
