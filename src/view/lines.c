/* The line diagram of a map of weights (s->weights): the query tokens on
 * the left, the key tokens on the right, and a curve from the selected query
 * to each key as thick as its weight (faint curves for every other query
 * with "all lines"); long sentences scroll. The window and the export
 * panels share it. */
#include "view_internal.h"

#include <cglm/cglm.h>
#include <string.h>

void lines_geometry(View *v, const ViewState *s, SDL_Rect area, LinesGeom *g)
{
    const AttnMap *m = &s->weights;
    int T = m->v ? (m->Tq > m->Tk ? m->Tq : m->Tk) : 0;
    memset(g, 0, sizeof *g);
    g->px = S(s, 15);
    int lq = m->v ? max_label_width(v, m->q_labels, m->Tq, g->px) : 0;
    int lk = m->v ? max_label_width(v, m->k_labels, m->Tk, g->px) : 0;
    lq = lq > area.w / 3 ? area.w / 3 : lq;
    lk = lk > area.w / 3 ? area.w / 3 : lk;
    int pad = S(s, 12);
    g->xl = area.x + pad + lq;
    g->xr = area.x + area.w - pad - lk;
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

/* The weight a line of row i needs to be drawn: the s->lines_top-th
 * largest of the row (ties kept), or 0 for every line. */
static float row_cut(const ViewState *s, const AttnMap *m, int i)
{
    int k = s->lines_top;
    if (k <= 0 || k >= m->Tk)
        return 0.0f;
    float top[32]; /* the k largest so far, largest first (k <= 21) */
    int n = 0;
    for (int j = 0; j < m->Tk; j++) {
        float w = attn_map_at(m, i, j);
        if (attn_map_masked(m, i, j) || !(w > 0.0f))
            continue;
        if (n == k && w <= top[k - 1])
            continue;
        int p = n < k ? n++ : k - 1;
        while (p > 0 && top[p - 1] < w) {
            top[p] = top[p - 1];
            p--;
        }
        top[p] = w;
    }
    return n == k ? top[k - 1] : 0.0f;
}

/* Faint curves of every other query (all lines). */
static void all_lines(SDL_Renderer *r, const ViewState *s, const LinesGeom *g, int last)
{
    const AttnMap *m = &s->weights;
    vec2 pts[16];
    for (int i = g->first; i < last && i < m->Tq; i++) {
        if (i == s->query)
            continue;
        float cut = row_cut(s, m, i);
        for (int j = g->first; j < last && j < m->Tk; j++) {
            float w = attn_map_at(m, i, j);
            if (w < 0.02f || w < cut || attn_map_masked(m, i, j))
                continue;
            SDL_Color c = theme(s)->dim;
            c.a = (Uint8)fminf(255.0f, 30.0f + 170.0f * w);
            bezier_points((float)g->x0, lines_y(g, i), (float)g->x1, lines_y(g, j), pts, 16);
            thick_polyline(r, pts, 16, fmaxf(0.8f, s->scale * (0.5f + 3.0f * w)), c);
        }
    }
}

void draw_lines(View *v, SDL_Renderer *r, const ViewState *s, const LinesGeom *g)
{
    const Theme *th = theme(s);
    const AttnMap *m = &s->weights;
    if (!m->v || !m->Tq || !m->Tk)
        return;
    int lh = text_line_height(v->text, g->px);
    int last = g->first + g->count;
    vec2 pts[24];
    if (s->all_lines)
        all_lines(r, s, g, last);
    int q = s->query;
    if (q >= 0 && q < m->Tq) {
        float mx = 1e-9f, cut = row_cut(s, m, q);
        for (int j = 0; j < m->Tk; j++)
            mx = fmaxf(mx, attn_map_at(m, q, j));
        for (int j = g->first; j < last && j < m->Tk; j++) {
            float w = attn_map_at(m, q, j);
            if (attn_map_masked(m, q, j) || w <= 0.0f || w < cut)
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
        int y = (int)lines_y(g, i) - lh / 2;
        if (i < m->Tq) {
            SDL_Color cq = i == q ? th->accent : s->q_special && s->q_special[i] ? th->pos : th->text;
            if (s->q_unknown && s->q_unknown[i])
                cq.a = i == q ? 255 : 200;
            text_draw(v->text, g->px, cq, m->q_labels[i], g->xl, y, 2, 0);
        }
        if (i < m->Tk)
            text_draw(v->text, g->px, i == s->key ? th->accent : s->k_special && s->k_special[i] ? th->pos : th->text,
                      m->k_labels[i], g->xr, y, 0, 0);
    }
}
