/* The line diagram: every token twice, queries on the left and keys on the
 * right, and a curve from the selected query to each key as thick as its
 * attention weight (faint curves for every other query with "all lines");
 * long sentences scroll. The window and the export panels share it. */
#include "view_internal.h"

#include <cglm/cglm.h>
#include <string.h>

void lines_geometry(View *v, const ViewState *s, SDL_Rect area, LinesGeom *g)
{
    int T = shown_T(s);
    memset(g, 0, sizeof *g);
    g->px = S(s, 15);
    int lw = T ? max_label_width(v, s, g->px, T) : 0;
    if (lw > area.w / 3)
        lw = area.w / 3;
    int pad = S(s, 12);
    g->xl = area.x + pad + lw;
    g->xr = area.x + area.w - pad - lw;
    g->x0 = g->xl + S(s, 8);
    g->x1 = g->xr - S(s, 8);
    int lh = text_line_height(v->text, g->px);
    float step = T ? (float)(area.h - S(s, 8)) / T : 0;
    if (step > S(s, 64))
        step = (float)S(s, 64);
    float min_step = lh * 1.05f;
    int count = T;
    if (T && step < min_step) {
        step = min_step;
        count = (int)((area.h - S(s, 8)) / step);
        if (count < 1)
            count = 1;
    }
    g->step = step;
    g->count = count;
    int first = s->lines_scroll;
    if (first > T - count)
        first = T - count;
    if (first < 0)
        first = 0;
    g->first = first;
    float used = count * step;
    g->y0 = area.y + (int)((area.h - used) / 2 + step / 2);
}

static float lines_y(const LinesGeom *g, int i)
{
    return g->y0 + (i - g->first) * g->step;
}

/* n points along the curve from (x0, y0) to (x1, y1), leaving and arriving
 * horizontally. */
static void bezier_points(float x0, float y0, float x1, float y1, vec2 *pts, int n)
{
    float dx = (x1 - x0) * 0.5f;
    for (int k = 0; k < n; k++) {
        float t = (float)k / (n - 1);
        pts[k][0] = glm_bezier(t, x0, x0 + dx, x1 - dx, x1);
        pts[k][1] = glm_bezier(t, y0, y0, y1, y1);
    }
}

void draw_lines(View *v, SDL_Renderer *r, const ViewState *s, const LinesGeom *g)
{
    const Theme *th = theme(s);
    int T = shown_T(s);
    if (!T)
        return;
    const float *W = model_matrix(s->m, MODEL_WEIGHTS, s->head);
    int lh = text_line_height(v->text, g->px);
    int last = g->first + g->count;
    vec2 pts[24];

    if (s->all_lines) {
        for (int i = g->first; i < last; i++) {
            if (i == s->query)
                continue;
            for (int j = g->first; j < last; j++) {
                float w = W[(size_t)i * T + j];
                if (w < 0.02f)
                    continue;
                SDL_Color c = th->dim;
                c.a = (Uint8)fminf(255.0f, 30.0f + 170.0f * w);
                bezier_points((float)g->x0, lines_y(g, i), (float)g->x1, lines_y(g, j), pts, 16);
                thick_polyline(r, pts, 16, fmaxf(0.8f, s->scale * (0.5f + 3.0f * w)), c);
            }
        }
    }
    int q = s->query;
    if (q >= 0 && q < T) {
        float mx = 1e-9f;
        for (int j = 0; j < T; j++)
            mx = fmaxf(mx, W[(size_t)q * T + j]);
        for (int j = g->first; j < last; j++) {
            float w = W[(size_t)q * T + j];
            if (attn_masked(&s->m->res, q, j) || w <= 0.0f)
                continue;
            float wn = w / mx;
            SDL_Color c = th->accent;
            c.a = (Uint8)(40 + 215 * wn);
            float yq = q >= g->first && q < last ? lines_y(g, q)
                       : q < g->first ? (float)g->y0 - g->step : lines_y(g, last);
            bezier_points((float)g->x0, yq, (float)g->x1, lines_y(g, j), pts, 24);
            thick_polyline(r, pts, 24, s->scale * (1.0f + 9.0f * wn), c);
        }
    }
    for (int i = g->first; i < last; i++) {
        const char *t = tok_text(&s->m->toks, i);
        int y = (int)lines_y(g, i) - lh / 2;
        SDL_Color cq = i == q ? th->accent : th->text;
        SDL_Color ck = i == s->key ? th->accent : th->text;
        if (s->m->oov[i]) {
            cq.a = i == q ? 255 : 200;
        }
        text_draw(v->text, g->px, cq, t, g->xl, y, 2, 0);
        text_draw(v->text, g->px, ck, t, g->xr, y, 0, 0);
    }
}
