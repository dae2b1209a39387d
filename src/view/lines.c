/* The line diagram of a map of weights (s->weights): the query tokens on
 * the left, the key tokens on the right, and a curve from the selected query
 * to each key as thick as its weight (faint curves for every other query
 * with "all lines"); long sentences scroll, and the lines to keys out of
 * view end at the row above or below the visible ones, which names them.
 * The window and the export panels share it. */
#include "view_internal.h"

#include <cglm/cglm.h>
#include <stdio.h>
#include <string.h>

/* The head swatches (every head shown): boxes of the heads' colours with
 * their numbers in rows at the top of the panel under its title; the
 * diagram's area below them. */
SDL_Rect lines_area(View *v, const ViewState *s, SDL_Rect panel, SDL_Rect *sw)
{
    int th = S(s, 20);
    SDL_Rect la = {panel.x, panel.y + th, panel.w, panel.h - th};
    if (sw)
        memset(sw, 0, sizeof(SDL_Rect) * VIEW_HEADS_MAX);
    const AttnMaps *hm = s->line_heads;
    if (!hm || panel.w <= 0)
        return la;
    int px = S(s, 12), bw, bh = text_line_height(v->text, px) + S(s, 4), gap = S(s, 4);
    text_size(v->text, px, "16", &bw, NULL);
    bw += S(s, 10);
    int x = la.x + S(s, 8), y = la.y + S(s, 2);
    for (int h = 0; h < hm->H && h < VIEW_HEADS_MAX; h++) {
        if (x > la.x + S(s, 8) && x + bw > la.x + la.w - S(s, 8)) {
            x = la.x + S(s, 8);
            y += bh + gap;
        }
        if (sw)
            sw[h] = (SDL_Rect){x, y, bw, bh};
        x += bw + gap;
    }
    int used = y + bh + gap + S(s, 2) - la.y;
    la.y += used;
    la.h -= used;
    return la;
}

void draw_head_swatches(View *v, SDL_Renderer *r, const ViewState *s, const SDL_Rect *sw)
{
    int px = S(s, 12);
    for (int h = 0; h < s->line_heads->H && h < VIEW_HEADS_MAX; h++) {
        if (sw[h].w <= 0)
            continue;
        SDL_Color c = view_head_color(h, s->dark);
        int on = s->head_on && s->head_on[h];
        char buf[16];
        snprintf(buf, sizeof buf, "%d", h + 1);
        if (on) {
            fill(r, sw[h], c);
            Rgb t = colormap_text_on((Rgb){c.r, c.g, c.b});
            text_draw(v->text, px, rgb_color(t), buf, sw[h].x + sw[h].w / 2, sw[h].y + S(s, 2), 1, 0);
        } else { /* off: its colour as an outline only */
            outline(r, sw[h], c, S(s, 1) > 0 ? S(s, 1) : 1);
            text_draw(v->text, px, theme(s)->dim, buf, sw[h].x + sw[h].w / 2, sw[h].y + S(s, 2), 1, 0);
        }
    }
}

/* Token i's label on one side of the diagram (keys: the key side), in at
 * most room pixels: the token, or where a special token's does not fit
 * (Llama 3's "<|begin_of_text|>" in a narrow panel) a short form that is
 * whole: "BOS" for the first token, else the initials of its words in its
 * brackets ("<|start_header_id|>" → "<|shi|>"). Anything else too wide is
 * cut with "…" when drawn. */
static const char *line_label(View *v, const ViewState *s, int keys, int i, int room, int px, char *buf,
                              size_t n)
{
    const AttnMap *m = &s->weights;
    const char *t = keys ? m->k_labels[i] : m->q_labels[i];
    const unsigned char *special = keys ? s->k_special : s->q_special;
    int w;
    text_size(v->text, px, t, &w, NULL);
    if (w <= room || !special || !special[i])
        return t;
    if (i == 0) {
        snprintf(buf, n, "BOS");
        return buf;
    }
    /* the brackets kept ("<|", "<", "["), the words' first letters */
    size_t len = strlen(t), open = strncmp(t, "<|", 2) == 0 ? 2 : (t[0] == '<' || t[0] == '[') ? 1 : 0;
    size_t close = open == 2 && len >= 4 && strcmp(t + len - 2, "|>") == 0 ? 2
                   : open == 1 && len >= 2 && (t[len - 1] == '>' || t[len - 1] == ']') ? 1 : 0;
    size_t o = 0;
    for (size_t k = 0; k < open && o + 1 < n; k++)
        buf[o++] = t[k];
    for (size_t k = open; k + close < len && o + 1 < n; k++)
        if ((k == open || t[k - 1] == '_' || t[k - 1] == ' ' || t[k - 1] == '-') && t[k] != '_' && t[k] != ' ' &&
            t[k] != '-')
            buf[o++] = t[k];
    for (size_t k = len - close; k < len && o + 1 < n; k++)
        buf[o++] = t[k];
    buf[o] = '\0';
    return buf;
}

/* The widest label of one side as line_label gives them, at most room. */
static int side_width(View *v, const ViewState *s, int keys, int room, int px)
{
    const AttnMap *m = &s->weights;
    int most = 0, n = keys ? m->Tk : m->Tq;
    for (int i = 0; i < n; i++) {
        char buf[64];
        int w;
        text_size(v->text, px, line_label(v, s, keys, i, room, px, buf, sizeof buf), &w, NULL);
        most = w > most ? w : most;
    }
    return most < room ? most : room;
}

void lines_geometry(View *v, const ViewState *s, SDL_Rect area, LinesGeom *g)
{
    const AttnMap *m = &s->weights;
    int T = m->v ? (m->Tq > m->Tk ? m->Tq : m->Tk) : 0;
    memset(g, 0, sizeof *g);
    g->px = S(s, 15);
    int pad = S(s, 12);
    /* each side's labels the room they need, the curves kept at least
       S(48) (or a third of the area) wide between them */
    int curves = S(s, 48) > area.w / 3 ? S(s, 48) : area.w / 3;
    int room = (area.w - 2 * pad - 2 * S(s, 8) - curves) / 2;
    room = room < area.w / 4 ? area.w / 4 : room;
    g->room = room;
    int lq = m->v ? side_width(v, s, 0, room, g->px) : 0;
    int lk = m->v ? side_width(v, s, 1, room, g->px) : 0;
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
    g->right = area.x + area.w - S(s, 4);
    if (T && step < min_step) {
        step = min_step;
        count = (int)((area.h - S(s, 8)) / step);
        if (count >= 4) { /* the first and last rows: the edges */
            count -= 2;
            g->edges = 1;
        }
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

/* Where a line to key j ends: its row, or the edge row above or below the
 * visible ones (without edges: -1, not drawn). */
static int key_y(const LinesGeom *g, int j, float *y)
{
    int last = g->first + g->count;
    if (j >= g->first && j < last)
        *y = lines_y(g, j);
    else if (!g->edges)
        return -1;
    else /* the edge row's inner side: its names are under (over) the ends */
        *y = j < g->first ? lines_y(g, g->first - 1) + g->step * 0.5f : lines_y(g, last) - g->step * 0.5f;
    return 0;
}

/* Where the query's lines start: its row, or the edge row's inner side as
 * key_y's ends (its names are the keys' beyond). -1 for a line from a query
 * beyond the visible rows to a key beyond them on the same side: it would
 * run along the edge row, over its names, which list that key already. */
static int query_y(const LinesGeom *g, int q, int j, float *y)
{
    int last = g->first + g->count;
    if (q >= g->first && q < last) {
        *y = lines_y(g, q);
        return 0;
    }
    if ((q < g->first && j < g->first) || (q >= last && j >= last))
        return -1;
    return key_y(g, q, y);
}

static float row_max(const AttnMap *m, int i)
{
    float mx = 1e-9f;
    for (int j = 0; j < m->Tk; j++)
        mx = fmaxf(mx, attn_map_at(m, i, j));
    return mx;
}

/* Faint curves of every other visible query (all lines); in a long text,
 * where each weight is small, those above the uniform share 1 / Tk, as
 * strong as they are against their row's largest. */
static void all_lines(SDL_Renderer *r, const ViewState *s, const LinesGeom *g, int last)
{
    const AttnMap *m = &s->weights;
    vec2 pts[16];
    int longtext = m->Tk > 50;
    float thr = longtext ? 1.0f / m->Tk : 0.02f;
    for (int i = g->first; i < last && i < m->Tq; i++) {
        if (i == s->query)
            continue;
        float cut = row_cut(s, m, i), mx = longtext ? row_max(m, i) : 1.0f;
        for (int j = 0; j < m->Tk; j++) {
            float w = attn_map_at(m, i, j), yk;
            if (w < thr || w < cut || attn_map_masked(m, i, j) || key_y(g, j, &yk) < 0)
                continue;
            float ws = longtext ? 0.6f * w / mx : w;
            SDL_Color c = theme(s)->dim;
            c.a = (Uint8)fminf(255.0f, 30.0f + 170.0f * ws);
            bezier_points((float)g->x0, lines_y(g, i), (float)g->x1, yk, pts, 16);
            thick_polyline(r, pts, 16, fmaxf(0.8f, s->scale * (0.5f + 3.0f * ws)), c);
        }
    }
}

/* The edge rows: under the lines' ends the keys out of view the query's
 * lines go to, strongest first ("↑ station 0.21, time 0.12"), on the left how many
 * tokens are beyond ("↑ 120"). */
static void draw_edges(View *v, const ViewState *s, const LinesGeom *g, int lh)
{
    const Theme *th = theme(s);
    const AttnMap *m = &s->weights;
    int last = g->first + g->count, q = s->query;
    int T = m->Tq > m->Tk ? m->Tq : m->Tk;
    float cut = q >= 0 && q < m->Tq ? row_cut(s, m, q) : 0.0f;
    for (int side = 0; side < 2; side++) {
        int lo = side ? last : 0, hi = side ? m->Tk : g->first;
        int beyond = side ? T - last : g->first;
        if (beyond <= 0)
            continue;
        int y = (int)lines_y(g, side ? last : g->first - 1) - lh / 2;
        char buf[400];
        snprintf(buf, sizeof buf, "%s %d", side ? "\xE2\x86\x93" : "\xE2\x86\x91", beyond);
        text_draw(v->text, g->px, th->dim, buf, g->xl, y, 2, 0);
        if (q < 0 || q >= m->Tq)
            continue;
        /* the keys beyond with a line, strongest first (a few) */
        size_t used = (size_t)snprintf(buf, sizeof buf, "%s", side ? "\xE2\x86\x93 " : "\xE2\x86\x91 ");
        int done[8], nd = 0;
        while (nd < 8) {
            int best = -1;
            for (int j = lo; j < hi && j < m->Tk; j++) {
                float w = attn_map_at(m, q, j);
                int seen = 0;
                for (int k = 0; k < nd; k++)
                    seen |= done[k] == j;
                if (!seen && !attn_map_masked(m, q, j) && w > 0.0f && w >= cut &&
                    (best < 0 || w > attn_map_at(m, q, best)))
                    best = j;
            }
            if (best < 0)
                break;
            done[nd++] = best;
            if (used < sizeof buf)
                used += (size_t)snprintf(buf + used, sizeof buf - used, attn_map_at(m, q, best) < 0.1f ? "%s%s %.3f" : "%s%s %.2f",
                                         nd > 1 ? ", " : "", m->k_labels[best], (double)attn_map_at(m, q, best));
        }
        if (nd) /* from the lines' left end to the panel's edge: room for names */
            draw_text_fit(v, g->px, th->text, buf, g->x0 + S(s, 8), y, g->right - g->x0 - S(s, 8));
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
    if (s->line_heads && q >= 0 && q < m->Tq) { /* every head switched on, each its colour */
        /* each head's lines apart at both ends (up to 80 % of a row
         * between the first and the last, 9 px apart at most), so that
         * heads agreeing on a key are seen side by side, not mixed; no
         * line thicker than the gap to the next head's */
        int n_on = 0, k_on = 0;
        for (int h = 0; h < s->line_heads->H; h++)
            n_on += s->head_on && s->head_on[h];
        float spread = n_on > 1 ? fminf(g->step * 0.8f / (float)(n_on - 1), 9.0f * s->scale) : 0.0f;
        float thickest = n_on > 1 ? fmaxf(spread * 0.8f, s->scale) : 4.2f * s->scale;
        for (int h = 0; h < s->line_heads->H; h++) {
            AttnMap hm = attn_maps_get(s->line_heads, 0, h);
            if (!s->head_on || !s->head_on[h] || !hm.v || hm.Tq != m->Tq || hm.Tk != m->Tk)
                continue;
            float dy = spread * ((float)k_on++ - (float)(n_on - 1) * 0.5f);
            float mx = row_max(&hm, q), cut = row_cut(s, &hm, q);
            for (int j = 0; j < hm.Tk; j++) {
                float w = attn_map_at(&hm, q, j), yk, yq;
                if (attn_map_masked(&hm, q, j) || w <= 0.0f || w < cut || key_y(g, j, &yk) < 0 ||
                    query_y(g, q, j, &yq) < 0)
                    continue;
                float wn = w / mx;
                SDL_Color c = view_head_color(h, s->dark);
                c.a = (Uint8)(70 + 185 * wn);
                bezier_points((float)g->x0, yq + dy, (float)g->x1, yk + dy, pts, 24);
                thick_polyline(r, pts, 24, fminf(s->scale * (1.2f + 3.0f * wn), thickest), c);
            }
        }
    } else if (q >= 0 && q < m->Tq) {
        float mx = row_max(m, q), cut = row_cut(s, m, q);
        for (int j = 0; j < m->Tk; j++) {
            float w = attn_map_at(m, q, j), yk, yq;
            if (attn_map_masked(m, q, j) || w <= 0.0f || w < cut || key_y(g, j, &yk) < 0 ||
                query_y(g, q, j, &yq) < 0)
                continue;
            float wn = w / mx;
            SDL_Color c = th->accent;
            c.a = (Uint8)(40 + 215 * wn);
            bezier_points((float)g->x0, yq, (float)g->x1, yk, pts, 24);
            thick_polyline(r, pts, 24, s->scale * (1.0f + 9.0f * wn), c);
        }
    }
    if (g->edges)
        draw_edges(v, s, g, lh);
    for (int i = g->first; i < last; i++) {
        int y = (int)lines_y(g, i) - lh / 2;
        char buf[64];
        if (i < m->Tq) {
            SDL_Color cq = i == q ? th->accent : s->q_special && s->q_special[i] ? th->pos : th->text;
            if (s->q_unknown && s->q_unknown[i])
                cq.a = i == q ? 255 : 200;
            const char *t = line_label(v, s, 0, i, g->room, g->px, buf, sizeof buf);
            int w;
            text_size(v->text, g->px, t, &w, NULL);
            if (w <= g->room)
                text_draw(v->text, g->px, cq, t, g->xl, y, 2, 0);
            else
                draw_text_fit(v, g->px, cq, t, g->xl - g->room, y, g->room);
        }
        if (i < m->Tk)
            draw_text_fit(v, g->px, i == s->key ? th->accent : s->k_special && s->k_special[i] ? th->pos : th->text,
                          line_label(v, s, 1, i, g->room, g->px, buf, sizeof buf), g->xr, y, g->room);
    }
}
