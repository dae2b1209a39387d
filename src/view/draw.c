/* Drawing helpers every panel uses: the themes' colours (theme.h) as SDL
 * colours, fills and outlines, thick anti-aliased lines, text cut to a width, the widest token
 * label. */
#include "view_internal.h"

#include <cglm/cglm.h>
#include <string.h>

/* theme.h's colours as opaque SDL colours, converted once */
const Theme *theme_colors(int dark)
{
    static Theme t[2];
    static int done[2];
    dark = dark != 0;
    if (!done[dark]) {
        const AttnTheme *a = theme_get(dark);
        const Rgb *src[] = {&a->bg, &a->panel, &a->panel2, &a->text, &a->dim, &a->accent,
                            &a->border, &a->mask, &a->error, &a->pos, &a->neg};
        SDL_Color *dst[] = {&t[dark].bg, &t[dark].panel, &t[dark].panel2, &t[dark].text,
                            &t[dark].dim, &t[dark].accent, &t[dark].border, &t[dark].mask,
                            &t[dark].error, &t[dark].pos, &t[dark].neg};
        for (size_t k = 0; k < sizeof src / sizeof src[0]; k++)
            *dst[k] = rgb_color(*src[k]);
        done[dark] = 1;
    }
    return &t[dark];
}

/* Opaque fills skip blending: the software renderer would otherwise blend
 * every pixel of every panel. */
void fill(SDL_Renderer *r, SDL_Rect rc, SDL_Color c)
{
    set_color(r, c);
    if (c.a == 255) {
        SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
        SDL_RenderFillRect(r, &rc);
        SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    } else {
        SDL_RenderFillRect(r, &rc);
    }
}

/* Rectangle outline of thickness t pixels, drawn inside rc. */
void outline(SDL_Renderer *r, SDL_Rect rc, SDL_Color c, int t)
{
    set_color(r, c);
    for (int k = 0; k < t; k++) {
        SDL_Rect o = {rc.x + k, rc.y + k, rc.w - 2 * k, rc.h - 2 * k};
        if (o.w <= 0 || o.h <= 0)
            break;
        SDL_RenderDrawRect(r, &o);
    }
}

/* A thick anti-aliased line: a core quad and two 1-px feathered edges. */
void thick_polyline(SDL_Renderer *r, const vec2 *pts, int n, float w,
                           SDL_Color c)
{
    enum { MAXP = 64 };
    SDL_Vertex vx[MAXP * 4];
    int idx[(MAXP - 1) * 18];
    if (n > MAXP)
        n = MAXP;
    float half = w * 0.5f, feather = 1.0f;
    for (int k = 0; k < n; k++) {
        vec2 dir, nrm;
        if (k == 0)
            glm_vec2_sub((float *)pts[1], (float *)pts[0], dir);
        else if (k == n - 1)
            glm_vec2_sub((float *)pts[n - 1], (float *)pts[n - 2], dir);
        else
            glm_vec2_sub((float *)pts[k + 1], (float *)pts[k - 1], dir);
        glm_vec2_normalize(dir);
        nrm[0] = -dir[1];
        nrm[1] = dir[0];
        float off[4] = {-(half + feather), -half, half, half + feather};
        for (int e = 0; e < 4; e++) {
            SDL_Vertex *p = &vx[k * 4 + e];
            p->position.x = pts[k][0] + nrm[0] * off[e];
            p->position.y = pts[k][1] + nrm[1] * off[e];
            p->color = c;
            if (e == 0 || e == 3)
                p->color.a = 0;
            p->tex_coord.x = p->tex_coord.y = 0;
        }
    }
    int ni = 0;
    for (int k = 0; k + 1 < n; k++)
        for (int e = 0; e < 3; e++) {
            int a = k * 4 + e, b = a + 1, c2 = a + 4, d = a + 5;
            idx[ni++] = a; idx[ni++] = b; idx[ni++] = c2;
            idx[ni++] = b; idx[ni++] = d; idx[ni++] = c2;
        }
    SDL_RenderGeometry(r, NULL, vx, n * 4, idx, ni);
}

/* Draw text cut to max_w pixels with an ellipsis: a 1024-token sentence as
 * one texture would be tens of thousands of pixels wide. */
void draw_text_fit(View *v, int px, SDL_Color c, const char *t, int x, int y, int max_w)
{
    char buf[1024];
    TextMeasure tm = figure_measure_text(v->text);
    figure_fit_text(&tm, px, t, max_w, buf, sizeof buf);
    text_draw(v->text, px, c, buf, x, y, 0, 0);
}

int max_label_width(View *v, const char *const *labels, int n, int px)
{
    int mw = 0;
    for (int i = 0; i < n; i++) {
        int w;
        text_size(v->text, px, labels[i], &w, NULL);
        if (w > mw)
            mw = w;
    }
    return mw;
}

/* theme_head_color as an SDL colour. */
SDL_Color view_head_color(int h, int dark)
{
    Rgb c = theme_head_color(h, dark);
    return (SDL_Color){c.r, c.g, c.b, 255};
}
