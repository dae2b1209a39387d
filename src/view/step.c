/* The step view: for the selected query and the focused key (or the key the
 * query attends to most), the computation one step at a time: the text
 * lines q·k → score → logit → α → z, and bars of q, k, v, q∘k and z (each
 * key's share of z stacked), revealed step by step. Each score function
 * shows its own step ② (cosine: q·k over the norms; additive: the terms
 * v_c·tanh(q_c + k_c) summed, as bars too), all numbers from model_step.
 * With two sentences the query is the first's token, the key the second's. */
#include "view_internal.h"

#include <stdio.h>

/* Head k's Wq, Wk, Wv are the identity slice (the default weights), so its
 * dimensions are the embedding's named features k·dk … (k+1)·dk−1. */
static int head_is_identity(const AttnParams *p, int head)
{
    size_t slice = (size_t)p->d * p->dk;
    const float *W[3] = {p->Wq + head * slice, p->Wk + head * slice, p->Wv + head * slice};
    for (int m = 0; m < 3; m++)
        for (int r = 0; r < p->d; r++)
            for (int c = 0; c < p->dk; c++)
                if (W[m][(size_t)r * p->dk + c] != (r == head * p->dk + c ? 1.0f : 0.0f))
                    return 0;
    return 1;
}

/* Bars of a vector: one per dimension, centred on a zero line. */
void draw_bars(SDL_Renderer *r, const float *x, int n, SDL_Rect area, float amax,
                      SDL_Color pos, SDL_Color neg)
{
    if (n <= 0)
        return;
    float bw = (float)area.w / n;
    int mid = area.y + area.h / 2;
    for (int c = 0; c < n; c++) {
        float hgt = x[c] / amax * (area.h / 2.0f);
        SDL_Rect b = {area.x + (int)(c * bw) + 1, hgt >= 0 ? mid - (int)hgt : mid,
                      (int)fmaxf(1.0f, bw - 2), (int)fmaxf(1.0f, fabsf(hgt))};
        fill(r, b, x[c] >= 0 ? pos : neg);
    }
}

/* The key the step view shows for query i: the focused one, or the one i
 * attends to most besides itself. */
static int step_key(const ViewState *s, const float *W, int Tk, int i)
{
    int j = s->key;
    if (j < 0 || j >= Tk) {
        /* self-attention: not the query itself; cross: any key */
        int self = !s->m->cross;
        j = self && Tk > 1 && i == 0 ? 1 : 0;
        for (int k = 0; k < Tk; k++)
            if ((!self || k != i) && W[(size_t)i * Tk + k] > W[(size_t)i * Tk + j])
                j = k;
    }
    return j;
}

/* Step ②, the score, in the forward's own function: its numbers from st. */
static void score_line(const Model *m, const ModelStep *st, char *buf, size_t n)
{
    double tau = (double)m->cfg.temperature;
    if (st->score_fn == ATTN_SCORE_COSINE) {
        snprintf(buf, n, "\xE2\x91\xA1 q\xC2\xB7k %.3f \xC3\xB7 (\xE2\x80\x96q\xE2\x80\x96 %.3f \xC2\xB7 "
                 "\xE2\x80\x96k\xE2\x80\x96 %.3f) = cos %.3f,  \xC3\xB7\xCF\x84 %.2f = %.3f (logit)",
                 (double)st->dot, (double)st->qnorm, (double)st->knorm, (double)st->score, tau,
                 (double)st->logit);
    } else if (st->score_fn == ATTN_SCORE_ADDITIVE && st->va) {
        /* the first terms v_c·tanh(q_c + k_c), then their sum */
        char terms[160] = "";
        size_t used = 0;
        for (int c = 0; c < st->dk && c < 2 && used < sizeof terms; c++)
            used += (size_t)snprintf(terms + used, sizeof terms - used, "%s%.2f\xC2\xB7tanh(%.2f)",
                                     c ? " + " : "", (double)st->va[c], (double)(st->q[c] + st->k[c]));
        snprintf(buf, n, "\xE2\x91\xA1 \xCE\xA3 v\xC2\xB7tanh(q+k) = %s%s", terms, st->dk > 2 ? " + \xE2\x80\xA6" : "");
    } else {
        float sdiv = 1.0f / st->scale;
        snprintf(buf, n, "\xE2\x91\xA1 q\xE2\x88\x98k summed: score = %.3f,  \xC3\xB7%.2f = %.3f,  \xC3\xB7\xCF\x84 %.2f = %.3f (logit)",
                 (double)st->score, (double)sdiv, (double)(st->score / sdiv), tau, (double)st->logit);
    }
}

/* Step ③ in the heads' mean: this head's α, then every head's α_ij and
 * their mean, the number the heatmap shows. */
static void mean_line(const Model *m, const ModelStep *st, char *buf, size_t n)
{
    int h = m->res.h, Tk = m->res.Tk;
    size_t used = (size_t)snprintf(buf, n, "\xE2\x91\xA2 \xCE\xB1 = e^logit / \xCE\xA3 e^logit = %.3f in head %d; "
                                   "the heatmap's mean: (", (double)st->weight, st->head + 1);
    double sum = 0.0;
    for (int k = 0; k < h && used < n; k++) {
        const float *W = model_matrix(m, MODEL_WEIGHTS, k);
        double a = W ? W[(size_t)st->i * Tk + st->j] : 0.0;
        sum += a;
        used += (size_t)snprintf(buf + used, n - used, "%s%.3f", k ? " + " : "", a);
    }
    if (used < n)
        snprintf(buf + used, n - used, ") / %d = %.3f", h, sum / h);
}

/* The title and the first reveal lines of the computation, left of the
 * bars (cut to their room). Additive's step ② takes two lines: its first
 * terms, then their sum. */
static void draw_step_text(View *v, const ViewState *s, const ViewLayout *l, const ModelStep *st,
                           int reveal)
{
    const Theme *th = theme(s);
    const Model *m = s->m;
    int dk = m->res.dk;
    int px = S(s, 14), lh = text_line_height(v->text, px);
    int x = l->step_text.x, y = l->step_text.y, room = l->step_text.w;
    char buf[320];
    const char *qi = tok_text(&m->toks, st->i), *kj = tok_text(m->cross ? &m->ktoks : &m->toks, st->j);
    char which[80] = "";
    if (m->res.h > 1 && s->head < 0)
        snprintf(which, sizeof which, ", head %d of the %d heads' mean", st->head + 1, m->res.h);
    snprintf(buf, sizeof buf, "Step view: query \xE2\x80\x9C%s\xE2\x80\x9D \xE2\x86\x92 key \xE2\x80\x9C%s\xE2\x80\x9D%s%s", qi, kj,
             m->cross ? " of the 2nd sentence" : "", which);
    char title[2][400]; /* two lines when it must: the key's name is never cut */
    int nt = wrap_lines(v, S(s, 15), buf, room, title, 2);
    for (int k = 0; k < nt; k++, y += text_line_height(v->text, S(s, 15)))
        text_draw(v->text, S(s, 15), th->text, title[k], x, y, 0, 0);
    y += lh - text_line_height(v->text, S(s, 15)) + S(s, 8);
    char l1[200], l2[400], l2b[200] = "", l3[400], l4[200];
    if (m->cfg.mode == ATTN_MODE_BASIC)
        snprintf(l1, sizeof l1, "\xE2\x91\xA0 basic mode: q = k = v = x (no weights), dk = %d", dk);
    else
        snprintf(l1, sizeof l1, "\xE2\x91\xA0 q = x\xC2\xB7Wq,  k = x\xC2\xB7Wk,  v = x\xC2\xB7Wv   (dk = %d)", dk);
    score_line(m, st, l2, sizeof l2);
    if (st->score_fn == ATTN_SCORE_ADDITIVE && st->va)
        snprintf(l2b, sizeof l2b, "    summed: score = %.3f,  \xC3\xB7\xCF\x84 %.2f = %.3f (logit)", (double)st->score,
                 (double)m->cfg.temperature, (double)st->logit);
    if (st->masked)
        snprintf(l3, sizeof l3, "\xE2\x91\xA2 masked (key after query): \xCE\xB1 = 0");
    else if (m->res.h > 1 && s->head < 0)
        mean_line(m, st, l3, sizeof l3);
    else
        snprintf(l3, sizeof l3, "\xE2\x91\xA2 \xCE\xB1 = e^logit / \xCE\xA3 e^logit = %.3f / %.3f = %.3f  (max subtracted)",
                 st->exp_ij, st->exp_sum, (double)st->weight);
    snprintf(l4, sizeof l4, "\xE2\x91\xA3 z = \xCE\xA3 \xCE\xB1_ij v_j  (bars: each key's share)");
    /* each line with the reveal step it belongs to */
    const char *lines[5] = {l1, l2, l2b, l3, l4};
    const int step_of[5] = {1, 2, 2, 3, 4};
    int n = 0, shown[5];
    for (int k = 0; k < 5; k++)
        if (lines[k][0] && step_of[k] <= reveal)
            shown[n++] = k;
    /* wrapped when the panel has the rows for it, else each cut to one */
    int px2 = S(s, 13), lh2 = text_line_height(v->text, px2) + S(s, 3);
    int rows_free = (l->step_text.y + l->step_text.h - y) / lh2 - n;
    for (int k = 0; k < n; k++) {
        char wrapped[4][400];
        int most = rows_free > 0 ? 1 + (rows_free < 3 ? rows_free : 3) : 1;
        int nl = wrap_lines(v, px2, lines[shown[k]], room, wrapped, most);
        rows_free -= nl - 1;
        for (int w = 0; w < nl; w++, y += lh2)
            text_draw(v->text, px2, th->dim, wrapped[w], x, y, 0, 0);
    }
}

/* What the bar groups show: q, k, v, q∘k and z, their scales, and the
 * dimensions' labels when there is room for them. */
typedef struct StepBars {
    const float *q, *k, *v;
    float prod[ATTN_MAX_DIM], z[ATTN_MAX_DIM];
    float amax, pmax, zmax;    /* scales of q, k, v; of q∘k; of z */
    int n;                     /* bars per group */
    int label_dims;            /* dimension labels drawn */
    char dimlab[ATTN_MAX_DIM < 64 ? ATTN_MAX_DIM : 64][16];
    int lab_px, lab_h;
} StepBars;

static void step_bars(View *v, const ViewState *s, const ModelStep *st, int head, StepBars *b)
{
    const Model *m = s->m;
    int dk = m->res.dk;
    b->q = st->q;
    b->k = st->k;
    b->v = st->v;
    b->lab_px = S(s, 9);
    b->lab_h = 0;
    /* dimension labels under the bars, when there is room for them: the
     * named features when head's W is the identity slice (or in basic
     * mode), else the projection's own columns */
    b->label_dims = dk <= 64;
    if (b->label_dims) {
        int named = m->cfg.mode == ATTN_MODE_BASIC || head_is_identity(&m->params, head);
        for (int c = 0; c < dk; c++) {
            if (named)
                snprintf(b->dimlab[c], sizeof b->dimlab[c], "%.9s", embed_dim_name(m->table, head * dk + c));
            else
                snprintf(b->dimlab[c], sizeof b->dimlab[c], "%d", c);
        }
        b->lab_h = text_line_height(v->text, b->lab_px);
    }
    b->amax = 1e-6f;
    for (int c = 0; c < dk; c++)
        b->amax = fmaxf(b->amax, fmaxf(fabsf(b->q[c]), fmaxf(fabsf(b->k[c]), fabsf(b->v[c]))));
    b->pmax = 1e-6f;
    b->zmax = 1e-6f;
    b->n = dk < ATTN_MAX_DIM ? dk : ATTN_MAX_DIM;
    for (int c = 0; c < b->n; c++) {
        /* the score's terms: q_c·k_c, or additive's v_c·tanh(q_c + k_c) */
        b->prod[c] = st->score_fn == ATTN_SCORE_ADDITIVE && st->va
                         ? attn_additive_term(b->q[c], b->k[c], st->va[c]) : b->q[c] * b->k[c];
        b->pmax = fmaxf(b->pmax, fabsf(b->prod[c]));
        b->z[c] = st->z[c];
        b->zmax = fmaxf(b->zmax, fabsf(b->z[c]));
    }
}

/* Name the three largest of the n bars x in area a: which features carry
 * the score. Largest first; a label that would overlap one already drawn
 * is left out (neighbouring bars of similar height). */
static void draw_top_labels(View *v, const ViewState *s, SDL_Rect a, const float *x, float xmax,
                            const StepBars *b)
{
    int n = b->n, lab_px = b->lab_px, lab_h = b->lab_h;
    int top[3] = {-1, -1, -1};
    for (int c = 0; c < n; c++)
        for (int t = 0; t < 3; t++)
            if (top[t] < 0 || fabsf(x[c]) > fabsf(x[top[t]])) {
                for (int u = 2; u > t; u--)
                    top[u] = top[u - 1];
                top[t] = c;
                break;
            }
    SDL_Rect drawn[3];
    int nd = 0;
    for (int t = 0; t < 3; t++) {
        int c = top[t];
        if (c < 0 || fabsf(x[c]) < 0.05f * xmax)
            continue;
        float cx = a.x + (c + 0.5f) * (float)a.w / n;
        float hgt = x[c] / xmax * (a.h / 2.0f);
        int ty = x[c] >= 0 ? a.y + a.h / 2 - (int)hgt - lab_h : a.y + a.h / 2 - (int)hgt;
        int tw;
        text_size(v->text, lab_px, b->dimlab[c], &tw, NULL);
        /* kept inside the group's own width */
        if (cx - tw / 2 < a.x)
            cx = (float)(a.x + tw / 2);
        if (cx + tw / 2 > a.x + a.w)
            cx = (float)(a.x + a.w - tw / 2);
        SDL_Rect box = {(int)cx - tw / 2 - S(s, 1), ty, tw + S(s, 2), lab_h};
        int clash = 0;
        for (int u = 0; u < nd; u++)
            clash |= SDL_HasIntersection(&box, &drawn[u]) == SDL_TRUE;
        if (clash)
            continue;
        drawn[nd++] = box;
        text_draw(v->text, lab_px, theme(s)->text, b->dimlab[c], (int)cx, ty, 1, 0);
    }
}

/* z's bars as each key's share α_ij v_j stacked from the zero line, key j
 * in the accent colour, the others along viridis. */
static void draw_stacked_z(SDL_Renderer *r, const ViewState *s, SDL_Rect a, const ModelStep *st,
                           int head, const StepBars *b)
{
    const Theme *th = theme(s);
    const AttnResult *res = &s->m->res;
    int T = res->Tk, dk = res->dk, n = b->n, i = st->i, j = st->j; /* T: the keys */
    const float *W = model_matrix(s->m, MODEL_WEIGHTS, head);
    size_t hq = (size_t)head * T * dk;
    float zmax = b->zmax;
    float bwid = (float)a.w / n;
    int mid = a.y + a.h / 2;
    for (int c = 0; c < n; c++) {
        float up = 0, down = 0;
        for (int jj = 0; jj < T; jj++) {
            float part = W[(size_t)i * T + jj] * res->V[hq + (size_t)jj * dk + c];
            float hgt = part / zmax * (a.h / 2.0f);
            Rgb col = colormap_rgb(CMAP_VIRIDIS, T > 1 ? (float)jj / (T - 1) : 0.5f);
            SDL_Color cc = rgb_color(col);
            if (jj == j)
                cc = th->accent;
            SDL_Rect rc;
            if (hgt >= 0) {
                rc = (SDL_Rect){a.x + (int)(c * bwid) + 1, mid - (int)(up + hgt), (int)fmaxf(1, bwid - 2), (int)fmaxf(0, hgt)};
                up += hgt;
            } else {
                rc = (SDL_Rect){a.x + (int)(c * bwid) + 1, mid + (int)down, (int)fmaxf(1, bwid - 2), (int)fmaxf(0, -hgt)};
                down -= hgt;
            }
            if (rc.h > 0)
                fill(r, rc, cc);
        }
    }
}

/* The five bar groups right of the text: q, k, v from step 1, q∘k from
 * step 2, z from step 4; names on the panel's first line, bars below. */
static void draw_step_bars(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l,
                           const ModelStep *st, int head, int reveal)
{
    const Theme *th = theme(s);
    StepBars b;
    step_bars(v, s, st, head, &b);
    int bx = l->step_bars.x;
    int bw = (l->step_bars.w + S(s, 10)) / 5 - S(s, 10);
    int name_y = l->step_bars.y;
    int by = name_y + text_line_height(v->text, S(s, 12)) + S(s, 4);
    int bh = l->step_bars.y + l->step_bars.h - by;
    by += b.lab_h;
    bh -= 2 * b.lab_h;
    const char *names[5] = {"q", "k", "v", st->score_fn == ATTN_SCORE_ADDITIVE ? "v\xC2\xB7tanh(q+k)" : "q\xE2\x88\x98k", "z"};
    const float *vec[4] = {b.q, b.k, b.v, b.prod};
    for (int g = 0; g < 5; g++) {
        int need = g < 3 ? 1 : g == 3 ? 2 : 4;
        if (reveal < need)
            continue;
        SDL_Rect a = {bx + g * (bw + S(s, 10)), by, bw, bh};
        text_draw(v->text, S(s, 12), th->dim, names[g], a.x, name_y, 0, 0);
        if (b.label_dims && g < 4)
            draw_top_labels(v, s, a, vec[g], g == 3 ? b.pmax : b.amax, &b);
        set_color(r, th->border);
        SDL_RenderDrawLine(r, a.x, a.y + a.h / 2, a.x + a.w, a.y + a.h / 2);
        SDL_Color pc = g == 3 ? th->accent : th->pos;
        if (g < 4)
            draw_bars(r, vec[g], b.n, a, g == 3 ? b.pmax : b.amax, pc, th->neg);
        else if (s->m->res.Tk > 32)
            draw_bars(r, b.z, b.n, a, b.zmax, th->pos, th->neg); /* too many keys to stack */
        else
            draw_stacked_z(r, s, a, st, head, &b);
    }
}

void draw_step(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    if (!l->step.w)
        return;
    fill(r, l->step, theme(s)->panel);
    const Model *m = s->m;
    int T = m->res.Tq;
    if (!T || !m->res.Tk || s->query < 0 || s->query >= T)
        return;
    int i = s->query, head = s->head < 0 ? 0 : s->head, Tk = m->res.Tk;
    const float *W = s->head < 0 ? model_matrix(m, MODEL_WEIGHTS, MODEL_HEAD_AVG) : NULL;
    int j = step_key(s, W ? W : model_matrix(m, MODEL_WEIGHTS, head), Tk, i);
    for (int k = 1; s->head < 0 && k < m->res.h; k++) { /* the mean: its largest share's head */
        const float *Wk = model_matrix(m, MODEL_WEIGHTS, k), *Wh = model_matrix(m, MODEL_WEIGHTS, head);
        if (Wk && Wh && Wk[(size_t)i * Tk + j] > Wh[(size_t)i * Tk + j])
            head = k;
    }
    ModelStep st;
    if (model_step(m, head, i, j, &st) < 0)
        return;
    int reveal = s->step_reveal < 1 ? 4 : s->step_reveal;
    draw_step_text(v, s, l, &st, reveal);
    draw_step_bars(v, r, s, l, &st, head, reveal);
}
