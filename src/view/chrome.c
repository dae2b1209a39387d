/* The window's chrome around the panels: the sentence bar (text scrolled to
 * the cursor, pre-edit text, unknown words dotted, the caret; and the byte
 * offset under a click), the strip of controls, the status bar, the panels'
 * titles, the help overlay and the heatmap's tooltip. */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sentence bar ---------------------------------------------------------- */

/* The bar's label: a prompt, "File" for an attention file, or "Sentence". */
static const char *bar_label(const ViewState *s)
{
    return s->prompt ? s->prompt : !s->m && s->map.v ? "File" : "Sentence";
}

static int sentence_text_x(const ViewState *s, const ViewLayout *l, View *v)
{
    int lw;
    text_size(v->text, S(s, 13), bar_label(s), &lw, NULL);
    return l->sentence.x + S(s, 14) + lw + S(s, 16);
}

/* The bar's right-hand note, and the width left for the sentence before it. */
static void sentence_note(const ViewState *s, char *buf, size_t n)
{
    if (s->toks && !s->prompt)
        snprintf(buf, n, "T = %d  \xC2\xB7  PgUp/PgDn: more sentences", s->toks->n);
    else
        buf[0] = '\0';
}

static int sentence_clip_w(View *v, const ViewState *s, const ViewLayout *l, int x0)
{
    char note[96];
    int nw = 0;
    sentence_note(s, note, sizeof note);
    if (note[0])
        text_size(v->text, S(s, 13), note, &nw, NULL);
    int w = l->sentence.x + l->sentence.w - S(s, 14) - nw - S(s, 16) - x0;
    if (w < S(s, 100)) /* a narrow window: the note gives way */
        w = l->sentence.x + l->sentence.w - x0 - S(s, 8);
    return w;
}

#define BAR_WINDOW 240 /* bytes of a long sentence drawn around the cursor */

/* The part of the text the bar draws: all of it when short, else a window
 * around the cursor (a 1024-token paragraph is far wider than any screen). */
static void bar_range(const char *t, int cursor, size_t *v0, size_t *v1)
{
    size_t len = strlen(t), c = cursor > 0 ? (size_t)cursor : 0;
    if (c > len)
        c = len;
    *v0 = 0;
    *v1 = len;
    if (len <= BAR_WINDOW)
        return;
    size_t a = c > BAR_WINDOW / 2 ? c - BAR_WINDOW / 2 : 0;
    if (a + BAR_WINDOW > len)
        a = len - BAR_WINDOW;
    while (a > 0 && ((unsigned char)t[a] & 0xC0) == 0x80)
        a--;
    size_t b = a + BAR_WINDOW < len ? a + BAR_WINDOW : len;
    while (b < len && ((unsigned char)t[b] & 0xC0) == 0x80)
        b++;
    *v0 = a;
    *v1 = b;
}

/* Width of t[from, to) at px. */
static int span_width(View *v, int px, const char *t, size_t from, size_t to)
{
    char buf[BAR_WINDOW + 8];
    size_t n = to > from ? to - from : 0;
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, t + from, n);
    buf[n] = '\0';
    int w = 0;
    text_size(v->text, px, buf, &w, NULL);
    return w;
}

int view_sentence_offset(View *v, const ViewState *s, const ViewLayout *l, int x)
{
    const char *t = s->sentence ? s->sentence : "";
    size_t v0, v1;
    bar_range(t, s->cursor, &v0, &v1);
    int x0 = sentence_text_x(s, l, v), px = S(s, 20);
    int shift = 0, clip_w = sentence_clip_w(v, s, l, x0);
    int cw = span_width(v, px, t, v0, s->cursor > 0 ? (size_t)s->cursor : 0);
    if (s->sentence_focus && cw > clip_w - S(s, 20))
        shift = cw - clip_w + S(s, 20);
    int best = (int)v0, best_d = 1 << 30;
    for (size_t b = v0; b <= v1; b++) {
        if (b < v1 && ((unsigned char)t[b] & 0xC0) == 0x80)
            continue;
        int d = abs(x0 - shift + span_width(v, px, t, v0, b) - x);
        if (d < best_d) {
            best_d = d;
            best = (int)b;
        }
    }
    return best;
}

/* Where the bar's text goes: the visible byte range around the cursor, the
 * IME's pre-edit text drawn at the cursor, and the scroll that keeps both
 * in view. */
typedef struct BarGeom {
    int px, lh, cy, x0, tx;
    SDL_Rect clip;
    size_t v0, v1, cur;
    const char *pre;          /* pre-edit text ("" when none) */
    int cw, pw;               /* widths of the text before the cursor, of pre */
} BarGeom;

static void bar_geometry(View *v, const ViewState *s, const ViewLayout *l, BarGeom *g)
{
    const char *t = s->sentence ? s->sentence : "";
    size_t len = strlen(t);
    g->px = S(s, 20);
    g->lh = text_line_height(v->text, g->px);
    g->cy = l->sentence.y + (l->sentence.h - g->lh) / 2;
    g->x0 = sentence_text_x(s, l, v);
    g->clip = (SDL_Rect){g->x0, l->sentence.y, sentence_clip_w(v, s, l, g->x0), l->sentence.h};
    bar_range(t, s->cursor, &g->v0, &g->v1);
    g->cur = s->cursor > 0 ? (size_t)s->cursor : 0;
    g->cur = g->cur > len ? len : g->cur;
    g->cur = g->cur < g->v0 ? g->v0 : g->cur > g->v1 ? g->v1 : g->cur;
    g->pre = s->sentence_focus && s->preedit ? s->preedit : "";
    g->pw = 0;
    if (*g->pre)
        text_size(v->text, g->px, g->pre, &g->pw, NULL);
    g->cw = span_width(v, g->px, t, g->v0, g->cur);
    /* scrolled to the cursor while typing; from the start otherwise */
    int end = g->cw + g->pw, room = g->clip.w - S(s, 20);
    g->tx = g->x0 - (s->sentence_focus && end > room ? end - room : 0);
}

void view_sentence_caret(View *v, const ViewState *s, const ViewLayout *l, SDL_Rect *out)
{
    BarGeom g;
    bar_geometry(v, s, l, &g);
    *out = (SDL_Rect){g.tx + g.cw + g.pw, g.cy, S(s, 2) > 1 ? S(s, 2) : 1, g.lh};
}

void draw_sentence_bar(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    fill(r, l->sentence, th->panel);
    if (s->sentence_focus)
        outline(r, l->sentence, th->accent, S(s, 2) > 0 ? S(s, 2) : 1);
    int sp = S(s, 13), slh = text_line_height(v->text, sp);
    text_draw(v->text, sp, th->dim, bar_label(s),
              l->sentence.x + S(s, 14), l->sentence.y + (l->sentence.h - slh) / 2, 0, 0);
    const char *t = s->sentence ? s->sentence : "";
    BarGeom g;
    bar_geometry(v, s, l, &g);
    SDL_Rect clip = g.clip;
    SDL_RenderSetClipRect(r, &clip);
    int px = g.px, lh = g.lh, cy = g.cy, tx = g.tx, cw = g.cw;
    size_t v0 = g.v0, v1 = g.v1, cur = g.cur;
    if (*t || *g.pre) {
        /* the text with the pre-edit text at the cursor, underlined */
        char buf[BAR_WINDOW + 8 + 256];
        size_t n = 0, np = strlen(g.pre) < 255 ? strlen(g.pre) : 255;
        memcpy(buf, t + v0, cur - v0);
        n += cur - v0;
        memcpy(buf + n, g.pre, np);
        n += np;
        memcpy(buf + n, t + cur, v1 - cur);
        n += v1 - cur;
        buf[n] = '\0';
        text_draw(v->text, px, th->text, buf, tx, cy, 0, 0);
        if (g.pw) {
            SDL_Rect u = {tx + cw, cy + lh - S(s, 2), g.pw, S(s, 2) > 1 ? S(s, 2) : 1};
            fill(r, u, th->accent);
        }
    } else if (!s->sentence_focus) {
        text_draw(v->text, px, th->dim, "type a sentence (click here or press /)", tx, cy, 0, 0);
    }
    /* unknown words: a dotted underline */
    if (!s->prompt && s->toks && s->q_unknown) {
        const TokenList *tl = s->toks;
        for (int i = 0; i < tl->n; i++) {
            size_t a0 = tl->src_start[i], a1 = a0 + tl->src_len[i];
            if (!s->q_unknown[i] || a0 < v0 || a1 > v1)
                continue;
            int a = span_width(v, px, t, v0, a0) + (a0 >= cur ? g.pw : 0),
                b = span_width(v, px, t, v0, a1) + (a1 > cur ? g.pw : 0);
            set_color(r, th->error);
            int uy = cy + lh - S(s, 2), dot_w = S(s, 2) > 1 ? S(s, 2) : 1;
            for (int x = tx + a; x < tx + b; x += S(s, 4) > 2 ? S(s, 4) : 3) {
                SDL_Rect dot = {x, uy, dot_w, dot_w};
                SDL_RenderFillRect(r, &dot);
            }
        }
    }
    if (s->sentence_focus) {
        SDL_Rect caret = {tx + cw + g.pw, cy, S(s, 2) > 1 ? S(s, 2) : 1, lh};
        fill(r, caret, th->accent);
    }
    SDL_RenderSetClipRect(r, NULL);
    char right[96];
    sentence_note(s, right, sizeof right);
    if (right[0] && clip.x + clip.w < l->sentence.x + l->sentence.w - S(s, 16))
        text_draw(v->text, sp, th->dim, right, l->sentence.x + l->sentence.w - S(s, 14),
                  l->sentence.y + (l->sentence.h - slh) / 2, 2, 0);
}

/* ---- controls ---------------------------------------------------------------- */

const char *control_label(const ViewState *s, int c, int compact, char *buf, size_t n)
{
    if (s->ctl_labels) { /* another mode's controls */
        snprintf(buf, n, "%s", s->ctl_labels[c] ? s->ctl_labels[c] : "");
        return buf;
    }
    const AttnConfig *cfg = &s->cfg;
    char hb[40];
    switch (c) {
    case CTL_MODE:
        snprintf(buf, n, "[B] %s", cfg->mode == ATTN_MODE_BASIC ? "basic" : "learned");
        break;
    case CTL_SCALE: snprintf(buf, n, compact ? "[S] 1/\xE2\x88\x9A" "dk" : "[S] scale 1/\xE2\x88\x9A" "dk"); break;
    case CTL_MASK: snprintf(buf, n, compact ? "[M] mask" : "[M] causal mask"); break;
    case CTL_POSENC: snprintf(buf, n, compact ? "[P] pos" : "[P] pos. enc."); break;
    case CTL_HEAD:
        attn_head_label(s->head, s->heads, hb, sizeof hb);
        snprintf(buf, n, "[H] %s", hb);
        break;
    case CTL_HEADS_DOWN: snprintf(buf, n, "[[] \xE2\x88\x92"); break;
    case CTL_HEADS_UP: snprintf(buf, n, "[]] +"); break;
    case CTL_TEMP: snprintf(buf, n, "[T] \xCF\x84 = %.2f", (double)cfg->temperature); break;
    case CTL_SCORE: snprintf(buf, n, "[F] %s", attn_score_name(cfg->score)); break;
    case CTL_MATRIX: snprintf(buf, n, "[R] %s", attn_map_kind_name((AttnMapKind)s->matrix)); break;
    case CTL_CMAP: snprintf(buf, n, "[C] %s", colormap_name(s->cmap)); break;
    case CTL_ALL: snprintf(buf, n, compact ? "[A] all" : "[A] all queries"); break;
    case CTL_COMPARE: snprintf(buf, n, compact ? "[V] vs" : "[V] compare"); break;
    case CTL_EXPORT: snprintf(buf, n, compact ? "[^E] PNG" : "[^E] export PNG"); break;
    default: snprintf(buf, n, "[?] help"); break;
    }
    return buf;
}

static int control_active(const ViewState *s, int c)
{
    if (s->ctl_labels)
        return s->ctl_on && s->ctl_on[c];
    const AttnConfig *cfg = &s->cfg;
    switch (c) {
    case CTL_MODE: return cfg->mode == ATTN_MODE_LEARNED;
    case CTL_SCALE: return cfg->scale;
    case CTL_MASK: return cfg->causal;
    case CTL_POSENC: return cfg->posenc;
    case CTL_ALL: return s->all_lines;
    case CTL_HELP: return s->help;
    case CTL_COMPARE: return s->cmp_ref != NULL;
    case CTL_HEAD: case CTL_TEMP: case CTL_SCORE: case CTL_MATRIX: case CTL_CMAP: return 1;
    default: return 0;
    }
}

int ctl_px(const ViewState *s)
{
    return S(s, 13);
}

void draw_controls(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    fill(r, l->controls, th->panel);
    int px = ctl_px(s), lh = text_line_height(v->text, px);
    int compact = l->controls_compact == 1;
    for (int c = 0; c < CTL_COUNT; c++) {
        char buf[64];
        if (!l->ctl[c].w)
            continue;
        int on = control_active(s, c);
        SDL_Rect b = l->ctl[c];
        fill(r, b, th->panel2);
        outline(r, b, on ? th->accent : th->border, 1);
        text_draw(v->text, px, on ? th->accent : th->dim,
                  control_label(s, c, compact, buf, sizeof buf), b.x + b.w / 2,
                  b.y + (b.h - lh) / 2, 1, 0);
    }
}

/* ---- status bar, titles, help, tooltip ------------------------------------- */

void draw_status(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    fill(r, l->status, th->bg);
    SDL_Color line = th->border;
    set_color(r, line);
    SDL_RenderDrawLine(r, 0, l->status.y, l->w, l->status.y);
    const AttnConfig *c = &s->cfg;
    char buf[512], q[160] = "";
    const AttnMap *m = &s->map;
    if (s->query >= 0 && s->query < m->Tq)
        snprintf(q, sizeof q, " \xC2\xB7 query: %s", m->q_labels[s->query]);
    int heads = s->heads > 0 ? s->heads : 1;
    if (!s->m) /* an attention file: its own facts */
        snprintf(buf, sizeof buf, "%.300s%s", s->title, q);
    else
        snprintf(buf, sizeof buf,
             "%s \xC2\xB7 %d head%s \xC2\xB7 d=%d \xC2\xB7 dk=%d \xC2\xB7 %s \xC2\xB7 %s \xC2\xB7 \xCF\x84=%.2f \xC2\xB7 T=%d%s%s",
             c->mode == ATTN_MODE_BASIC ? "basic" : "learned", heads, heads == 1 ? "" : "s", s->d,
             s->dk, c->scale ? "scaled" : "unscaled", c->causal ? "causal mask" : "no mask",
             (double)c->temperature, m->Tq, q, s->n_unknown ? " \xC2\xB7 dotted = not in the table" : "");
    int px = S(s, 13), lh = text_line_height(v->text, px);
    int w = text_draw(v->text, px, th->dim, buf, S(s, 12), l->status.y + (l->status.h - lh) / 2, 0, 0);
    const char *msg = s->status ? s->status : "F1 or ? for help  \xC2\xB7  Ctrl+E export PNG  \xC2\xB7  Ctrl+S save session";
    text_draw(v->text, px, s->status_error ? th->error : (s->status ? th->text : th->dim), msg,
              S(s, 12) + w + S(s, 24), l->status.y + (l->status.h - lh) / 2, 0, 0);
}

void draw_panel_title(View *v, SDL_Renderer *r, const ViewState *s, SDL_Rect p, const char *t)
{
    int px = S(s, 13);
    SDL_RenderSetClipRect(r, &p);
    text_draw(v->text, px, theme(s)->dim, t, p.x + S(s, 6), p.y + S(s, 2), 0, 0);
    SDL_RenderSetClipRect(r, NULL);
}

/* The widest keys and description of help lines [k0, k1) at px. */
static void help_widths(View *v, const ViewHelpLine *keys, int k0, int k1, int px, int *kw, int *dw)
{
    *kw = *dw = 0;
    for (int k = k0; k < k1; k++) {
        int a, b;
        text_size(v->text, px, keys[k].keys, &a, NULL);
        text_size(v->text, px, keys[k].what, &b, NULL);
        *kw = a > *kw ? a : *kw;
        *dw = b > *dw ? b : *dw;
    }
}

/* The help overlay: one column when its lines fit the window's height,
 * else two (the text smaller when two are wider than the window). */
void draw_help(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    /* the lines the app made from its key table: the view knows no keys */
    const ViewHelpLine *keys = s->help_lines;
    int n = s->help_lines ? s->n_help_lines : 0;
    int px = S(s, 14), lh = text_line_height(v->text, px) + S(s, 3);
    int cols = n * lh + S(s, 60) > l->h ? 2 : 1, rows = (n + cols - 1) / cols;
    int kw[2] = {0, 0}, dw[2] = {0, 0}, w = 0;
    for (int tries = 0; tries < 4; tries++) {
        w = S(s, 20);
        for (int c = 0; c < cols; c++) {
            help_widths(v, keys, c * rows, c + 1 == cols ? n : (c + 1) * rows, px, &kw[c], &dw[c]);
            w += kw[c] + dw[c] + S(s, 40);
        }
        if (w <= l->w || px <= S(s, 10))
            break;
        px = px * l->w / w > S(s, 10) ? px * l->w / w : S(s, 10);
        lh = text_line_height(v->text, px) + S(s, 3);
    }
    SDL_Rect box = {0, 0, w < l->w ? w : l->w, rows * lh + S(s, 60)};
    box.x = (l->w - box.w) / 2;
    box.y = (l->h - box.h) / 2;
    if (box.y < 0)
        box.y = 0;
    SDL_Color shade = {0, 0, 0, 150};
    fill(r, (SDL_Rect){0, 0, l->w, l->h}, shade);
    fill(r, box, th->panel);
    outline(r, box, th->accent, 2);
    text_draw(v->text, S(s, 16), th->text, "attnviz keys  (Esc closes)", box.x + S(s, 20), box.y + S(s, 12), 0, 0);
    int x = box.x + S(s, 20);
    for (int c = 0; c < cols; c++) {
        for (int k = c * rows; k < n && k < (c + 1) * rows; k++) {
            int y = box.y + S(s, 44) + (k - c * rows) * lh;
            text_draw(v->text, px, th->accent, keys[k].keys, x, y, 0, 0);
            draw_text_fit(v, px, th->text, keys[k].what, x + kw[c] + S(s, 20), y,
                          box.x + box.w - (x + kw[c] + S(s, 20)) - S(s, 10));
        }
        x += kw[c] + dw[c] + S(s, 40);
    }
}

/* The hovered cell's query and key, and its numbers in the maps there are. */
void draw_tooltip(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const AttnMap *w = &s->weights, *sc = &s->scores, *lg = &s->logits;
    int i = s->hover_i, j = s->hover_j;
    if (!w->v || i < 0 || j < 0 || i >= w->Tq || j >= w->Tk)
        return;
    const Theme *th = theme(s);
    char l1[200], l2[200];
    snprintf(l1, sizeof l1, "query %s \xE2\x86\x92 key %s", w->q_labels[i], w->k_labels[j]);
    if (attn_map_masked(w, i, j))
        snprintf(l2, sizeof l2, "masked (key after query): weight 0");
    else if (sc->v && lg->v)
        snprintf(l2, sizeof l2, "score %.3f \xC2\xB7 logit %.3f \xC2\xB7 weight %.3f",
                 (double)attn_map_at(sc, i, j), (double)attn_map_at(lg, i, j), (double)attn_map_at(w, i, j));
    else if (sc->v)
        snprintf(l2, sizeof l2, "score %.3f \xC2\xB7 weight %.3f", (double)attn_map_at(sc, i, j),
                 (double)attn_map_at(w, i, j));
    else
        snprintf(l2, sizeof l2, "weight %.3f", (double)attn_map_at(w, i, j));
    int px = S(s, 13), lh = text_line_height(v->text, px), w1, w2;
    text_size(v->text, px, l1, &w1, NULL);
    text_size(v->text, px, l2, &w2, NULL);
    SDL_Rect box = {s->mouse_x + S(s, 16), s->mouse_y + S(s, 16), (w1 > w2 ? w1 : w2) + S(s, 16), 2 * lh + S(s, 12)};
    if (box.x + box.w > l->w)
        box.x = s->mouse_x - box.w - S(s, 8);
    if (box.y + box.h > l->h)
        box.y = s->mouse_y - box.h - S(s, 8);
    fill(r, box, th->panel2);
    outline(r, box, th->accent, 1);
    text_draw(v->text, px, th->text, l1, box.x + S(s, 8), box.y + S(s, 6), 0, 0);
    text_draw(v->text, px, th->text, l2, box.x + S(s, 8), box.y + S(s, 6) + lh, 0, 0);
}
