/* Teach mode's panels (issue 15): the loss curve in the step view's place
 * (log scale, the step count, the current loss, the settings) and the
 * target drawn over the heatmap as outlined cells, the outline's strength
 * the target's weight, so the class sees the pattern and the map at once. */
#include "view_internal.h"

#include <stdio.h>
#include <string.h>

/* The target over the heatmap figure f: a dark and a light outline (seen
 * on every colour map), more opaque for more of the row's mass. */
void draw_teach_target(SDL_Renderer *r, const ViewState *s, const Figure *f)
{
    const float *t = s->teach_target;
    if (!t || f->Tq != s->teach_Tq || f->Tk != s->teach_Tk || f->cell <= 0)
        return;
    SDL_BlendMode old;
    SDL_GetRenderDrawBlendMode(r, &old);
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    int th = f->cell >= 12 ? S(s, 2) : 1;
    for (int i = f->row0; i < f->row0 + f->rows && i < f->Tq; i++)
        for (int j = f->col0; j < f->col0 + f->cols && j < f->Tk; j++) {
            float w = t[(size_t)i * s->teach_Tk + j];
            if (w <= 0.0f)
                continue;
            int x0 = f->grid.x + (int)lroundf((float)(j - f->col0) * f->cell);
            int x1 = f->grid.x + (int)lroundf((float)(j - f->col0 + 1) * f->cell);
            int y0 = f->grid.y + (int)lroundf((float)(i - f->row0) * f->cell);
            int y1 = f->grid.y + (int)lroundf((float)(i - f->row0 + 1) * f->cell);
            Uint8 a = (Uint8)(110.0f + 145.0f * (w > 1.0f ? 1.0f : w));
            SDL_Rect rc = {x0, y0, x1 - x0, y1 - y0};
            outline(r, rc, (SDL_Color){0, 0, 0, a}, 1);
            rc = (SDL_Rect){x0 + 1, y0 + 1, rc.w - 2, rc.h - 2};
            outline(r, rc, (SDL_Color){255, 80, 170, a}, th);
            rc = (SDL_Rect){rc.x + th, rc.y + th, rc.w - 2 * th, rc.h - 2 * th};
            outline(r, rc, (SDL_Color){0, 0, 0, (Uint8)(a / 2)}, 1);
        }
    SDL_SetRenderDrawBlendMode(r, old);
}

/* The curve's y for loss (log scale between lo and hi, both > 0). */
static float curve_y(double loss, double lo, double hi, SDL_Rect p)
{
    if (!(loss > lo))
        loss = lo;
    if (loss > hi)
        loss = hi;
    double f = hi > lo ? (log(loss) - log(lo)) / (log(hi) - log(lo)) : 0.5;
    return (float)(p.y + p.h - f * p.h);
}

/* The smallest and largest finite positive losses (1e-6 at least). */
static void loss_range(const double *l, long n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0.0;
    for (long k = 0; k < n; k++)
        if (isfinite(l[k])) {
            double v = l[k] > 1e-6 ? l[k] : 1e-6;
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
    if (*hi <= 0.0)
        *lo = *hi = 1.0;
    if (*hi < *lo * 1.5) { /* a flat curve: a little room around it */
        *hi *= 1.5;
        *lo /= 1.5;
    }
}

/* The curve in plot p: at most one point per pixel column, drawn in
 * pieces of thick_polyline's size. */
static void draw_curve(SDL_Renderer *r, const ViewState *s, SDL_Rect p, double lo, double hi)
{
    long n = s->n_teach_loss;
    if (n < 1 || p.w < 2)
        return;
    enum { PIECE = 64 };
    vec2 pts[PIECE];
    int np = 0, cols = n < p.w ? (int)n : p.w;
    SDL_Color c = theme(s)->accent;
    for (int x = 0; x < cols; x++) {
        long k = cols > 1 ? (long)((double)x * (double)(n - 1) / (cols - 1) + 0.5) : 0;
        pts[np][0] = (float)p.x + (cols > 1 ? (float)x * (float)(p.w - 1) / (float)(cols - 1) : 0.0f);
        pts[np][1] = curve_y(s->teach_loss[k], lo, hi, p);
        if (++np == PIECE || x == cols - 1) {
            if (np >= 2)
                thick_polyline(r, pts, np, (float)S(s, 2), c);
            pts[0][0] = pts[np - 1][0];
            pts[0][1] = pts[np - 1][1];
            np = 1;
        }
    }
    if (cols == 1)
        fill(r, (SDL_Rect){p.x - 2, (int)pts[0][1] - 2, 5, 5}, c);
}

/* The loss panel, in the step view's place while teaching. */
const char *const teach_button_label[TBTN_COUNT] = {
    "[1] self", "[2] previous", "[3] next", "[4] first", "[5] current map", "[0] clear",
    "[Space] run / pause", "[.] step", "[Backspace] reset"};

/* The buttons' row: under the panel's two text lines, left to right (those
 * that do not fit are left out: their keys still work). */
/* The panel's title: the step, loss and pace, or how to start. */
static void teach_title(const ViewState *s, char *buf, size_t n)
{
    double cur = s->n_teach_loss > 0 ? s->teach_loss[s->n_teach_loss - 1] : NAN;
    char pace[40];
    if (s->teach_pace > 0.0)
        snprintf(pace, sizeof pace, "pace \xC3\x97%g", s->teach_pace);
    else
        snprintf(pace, sizeof pace, "full speed");
    if (s->n_teach_loss > 0)
        snprintf(buf, n, "Teach: step %ld, loss %.4g  \xC2\xB7 %s%s", s->teach_steps, cur, pace,
                 s->teach_running ? "  \xE2\x96\xB6 running" : "");
    else
        snprintf(buf, n, "Teach: paint the target on the heatmap (1\xE2\x80\x93" "4 presets, 5 the current map)");
}

/* The title wrapped to the panel (two lines at most): their number. */
static int title_rows(View *v, const ViewState *s, SDL_Rect p, char out[2][400])
{
    char buf[300];
    teach_title(s, buf, sizeof buf);
    return wrap_lines(v, S(s, 15), buf, p.w - S(s, 24), out, 2);
}

/* The buttons under the title and settings, on as many rows as the
 * panel's width needs (none cut or dropped). */
void teach_layout(View *v, const ViewState *s, ViewLayout *l)
{
    memset(l->teach_btn, 0, sizeof l->teach_btn);
    SDL_Rect p = l->step;
    if (!s->teach || p.w <= 0 || p.h <= 0)
        return;
    char rows[2][400];
    int nt = title_rows(v, s, p, rows);
    int px = ctl_px(s), bh = text_line_height(v->text, px) + S(s, 6);
    int x0 = p.x + S(s, 12), x = x0;
    int y = p.y + S(s, 8) + nt * text_line_height(v->text, S(s, 15)) + S(s, 2) +
            text_line_height(v->text, S(s, 12)) + S(s, 4);
    for (int b = 0; b < TBTN_COUNT; b++) {
        int tw;
        text_size(v->text, px, teach_button_label[b], &tw, NULL);
        if (x > x0 && x + tw + S(s, 10) > p.x + p.w - S(s, 12)) {
            x = x0;
            y += bh + S(s, 4);
        }
        l->teach_btn[b] = (SDL_Rect){x, y, tw + S(s, 10), bh};
        x += tw + S(s, 10) + S(s, 4);
    }
}

static void draw_teach_buttons(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    for (int b = 0; b < TBTN_COUNT; b++) {
        SDL_Rect rc = l->teach_btn[b];
        if (rc.w <= 0)
            continue;
        int on = b == TBTN_RUN && s->teach_running;
        fill(r, rc, th->panel2);
        outline(r, rc, on ? th->accent : th->border, 1);
        text_draw(v->text, ctl_px(s), on ? th->accent : th->text, teach_button_label[b],
                  rc.x + S(s, 5), rc.y + S(s, 3), 0, 0);
    }
}

void draw_teach_panel(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    SDL_Rect p = l->step;
    if (p.w <= 0 || p.h <= 0)
        return;
    const Theme *th = theme(s);
    fill(r, p, th->panel);
    SDL_RenderSetClipRect(r, &p);
    int x = p.x + S(s, 12), y = p.y + S(s, 8);
    char rows[2][400], buf[300];
    int nt = title_rows(v, s, p, rows);
    for (int k = 0; k < nt; k++, y += text_line_height(v->text, S(s, 15)))
        text_draw(v->text, S(s, 15), th->text, rows[k], x, y, 0, 0);
    y += S(s, 2);
    char info[400];
    snprintf(info, sizeof info, "%s   (> / < faster / slower \xC2\xB7 L / Shift+L lr \xC3\x97" "2 / \xC3\xB7" "2 \xC2\xB7 O sgd / adam \xC2\xB7 U what trains)",
             s->teach_info ? s->teach_info : "");
    draw_text_fit(v, S(s, 12), th->dim, info, x, y, p.w - S(s, 24));
    y += text_line_height(v->text, S(s, 12)) + S(s, 2);
    draw_teach_buttons(v, r, s, l);
    y = l->teach_btn[TBTN_COUNT - 1].w ? l->teach_btn[TBTN_COUNT - 1].y + l->teach_btn[TBTN_COUNT - 1].h + S(s, 6)
                                       : y + text_line_height(v->text, S(s, 12)) + S(s, 6);
    /* the plot: log loss over steps, its top and bottom values at the left */
    int lab_w = S(s, 52);
    SDL_Rect plot = {x + lab_w, y, p.x + p.w - S(s, 14) - (x + lab_w), p.y + p.h - S(s, 22) - y};
    if (plot.h > S(s, 16) && plot.w > S(s, 40)) {
        double lo, hi;
        loss_range(s->teach_loss, s->n_teach_loss, &lo, &hi);
        outline(r, plot, th->border, 1);
        char t1[32], t2[32];
        snprintf(t1, sizeof t1, "%.3g", hi);
        snprintf(t2, sizeof t2, "%.3g", lo);
        text_draw(v->text, S(s, 11), th->dim, t1, x, plot.y, 0, 0);
        text_draw(v->text, S(s, 11), th->dim, t2, x, plot.y + plot.h - text_line_height(v->text, S(s, 11)), 0, 0);
        snprintf(buf, sizeof buf, "steps \xE2\x86\x92 (0 \xE2\x80\xA6 %ld), loss on a log scale", s->teach_steps);
        text_draw(v->text, S(s, 11), th->dim, buf, plot.x, plot.y + plot.h + S(s, 3), 0, 0);
        SDL_Rect in = {plot.x + 2, plot.y + 3, plot.w - 4, plot.h - 6};
        draw_curve(r, s, in, lo, hi);
    }
    SDL_RenderSetClipRect(r, NULL);
}
