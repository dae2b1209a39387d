/* The window's chrome around the panels: the two sentence bars (text scrolled to
 * the cursor, pre-edit text, unknown words dotted, the caret; and the byte
 * offset under a click), the strip of controls, the status bar, the panels'
 * titles, the help overlay and the heatmap's tooltip. */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sentence bars ------------------------------------------------------- */

/* One of the two bars as the drawing sees it: the first (the sentence, or
 * a prompt, or an attention file's name) or the second (the keys and
 * values of cross-attention). The same code draws, measures and hit-tests
 * both. */
typedef struct BarView {
    const char *label, *text, *placeholder;
    int cursor, focus, keys;
    SDL_Rect rect;
    const TokenList *toks;       /* its tokens (for unknown words), or NULL */
    const unsigned char *unknown;
} BarView;

static void bar_view(const ViewState *s, const ViewLayout *l, int keys, BarView *b)
{
    memset(b, 0, sizeof *b);
    b->keys = keys;
    if (keys) {
        b->label = s->keys_label ? s->keys_label : "Keys";
        b->text = s->keys_sentence ? s->keys_sentence : "";
        b->placeholder = s->keys_placeholder ? s->keys_placeholder
                       : "keys from a second sentence (empty: self-attention) \xE2\x80\x94 Tab or Shift+Enter";
        b->cursor = s->keys_cursor;
        b->focus = s->keys_focus;
        b->rect = l->keys_bar;
        b->toks = s->ktoks;
        b->unknown = s->k_unknown;
        return;
    }
    b->label = s->prompt ? s->prompt : s->bar_label ? s->bar_label : "Sentence";
    b->text = s->sentence ? s->sentence : "";
    b->placeholder = "type a sentence (click here or press /)";
    b->cursor = s->cursor;
    b->focus = s->sentence_focus && !s->keys_focus;
    b->rect = l->sentence;
    b->toks = s->prompt ? NULL : s->toks;
    b->unknown = s->q_unknown;
}

/* The text's left edge: after the label, the same in both bars. */
static int sentence_text_x(const ViewState *s, const BarView *b, View *v)
{
    int lw, sw;
    text_size(v->text, S(s, 13), b->label, &lw, NULL);
    text_size(v->text, S(s, 13), "Sentence", &sw, NULL);
    return b->rect.x + S(s, 14) + (lw > sw ? lw : sw) + S(s, 16);
}

/* The bar's right-hand note, and the width left for the sentence before it. */
static void sentence_note(const ViewState *s, const BarView *b, char *buf, size_t n)
{
    if (b->keys && s->cross)
        snprintf(buf, n, "Tk = %d  \xC2\xB7  cross-attention: queries from the sentence", s->map.Tk);
    else if (b->keys)
        buf[0] = '\0';
    else if (s->toks && !s->prompt)
        snprintf(buf, n, "T = %d  \xC2\xB7  PgUp/PgDn: more sentences", s->toks->n);
    else
        buf[0] = '\0';
}

static int sentence_clip_w(View *v, const ViewState *s, const BarView *b, int x0)
{
    char note[120];
    int nw = 0;
    sentence_note(s, b, note, sizeof note);
    if (note[0])
        text_size(v->text, S(s, 13), note, &nw, NULL);
    int w = b->rect.x + b->rect.w - S(s, 14) - nw - S(s, 16) - x0;
    if (w < S(s, 100)) /* a narrow window: the note gives way */
        w = b->rect.x + b->rect.w - x0 - S(s, 8);
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

/* t[from, to) as the bar shows it, into out (cap bytes; returns the bytes
 * written, out ending in '\0'): control characters made visible as the
 * token labels show them (↵ a newline, → a tab, ␍, else ‹0xNN›), so a
 * generated line break is an arrow, not a box. The bar's widths are the
 * shown text's; the cursor's offsets stay the text's own bytes. */
#define BAR_SHOWN_CAP (BAR_WINDOW * 8 + 8) /* a window of control characters, ‹0xNN› each */
static size_t bar_shown(char *out, size_t cap, const char *t, size_t from, size_t to)
{
    size_t n = 0;
    for (size_t k = from; k < to && t[k]; k++) {
        unsigned char c = (unsigned char)t[k];
        char one[16] = {(char)c, 0};
        if (c == '\n')
            strcpy(one, "\xE2\x86\xB5");
        else if (c == '\t')
            strcpy(one, "\xE2\x86\x92");
        else if (c == '\r')
            strcpy(one, "\xE2\x90\x8D");
        else if (c < 0x20 || c == 0x7F)
            snprintf(one, sizeof one, "\xE2\x80\xB9" "0x%02X" "\xE2\x80\xBA", c);
        size_t m = strlen(one);
        if (n + m >= cap)
            break;
        memcpy(out + n, one, m);
        n += m;
    }
    out[n] = '\0';
    return n;
}

/* Width of t[from, to) as shown (bar_shown) at px. */
static int span_width(View *v, int px, const char *t, size_t from, size_t to)
{
    char buf[BAR_SHOWN_CAP];
    bar_shown(buf, sizeof buf, t, from, to > from + BAR_WINDOW + 8 ? from + BAR_WINDOW + 8 : to);
    int w = 0;
    text_size(v->text, px, buf, &w, NULL);
    return w;
}

static int bar_offset(View *v, const ViewState *s, const BarView *b, int x)
{
    const char *t = b->text;
    size_t v0, v1;
    bar_range(t, b->cursor, &v0, &v1);
    int x0 = sentence_text_x(s, b, v), px = S(s, 20);
    int shift = 0, clip_w = sentence_clip_w(v, s, b, x0);
    int cw = span_width(v, px, t, v0, b->cursor > 0 ? (size_t)b->cursor : 0);
    if (b->focus && cw > clip_w - S(s, 20))
        shift = cw - clip_w + S(s, 20);
    int best = (int)v0, best_d = 1 << 30;
    for (size_t k = v0; k <= v1; k++) {
        if (k < v1 && ((unsigned char)t[k] & 0xC0) == 0x80)
            continue;
        int d = abs(x0 - shift + span_width(v, px, t, v0, k) - x);
        if (d < best_d) {
            best_d = d;
            best = (int)k;
        }
    }
    return best;
}

int view_sentence_offset(View *v, const ViewState *s, const ViewLayout *l, int x)
{
    BarView b;
    bar_view(s, l, 0, &b);
    return bar_offset(v, s, &b, x);
}

int view_keys_offset(View *v, const ViewState *s, const ViewLayout *l, int x)
{
    BarView b;
    bar_view(s, l, 1, &b);
    return bar_offset(v, s, &b, x);
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

static void bar_geometry(View *v, const ViewState *s, const BarView *b, BarGeom *g)
{
    const char *t = b->text;
    size_t len = strlen(t);
    g->px = S(s, 20);
    g->lh = text_line_height(v->text, g->px);
    g->cy = b->rect.y + (b->rect.h - g->lh) / 2;
    g->x0 = sentence_text_x(s, b, v);
    g->clip = (SDL_Rect){g->x0, b->rect.y, sentence_clip_w(v, s, b, g->x0), b->rect.h};
    bar_range(t, b->cursor, &g->v0, &g->v1);
    g->cur = b->cursor > 0 ? (size_t)b->cursor : 0;
    g->cur = g->cur > len ? len : g->cur;
    g->cur = g->cur < g->v0 ? g->v0 : g->cur > g->v1 ? g->v1 : g->cur;
    g->pre = b->focus && s->preedit ? s->preedit : "";
    g->pw = 0;
    if (*g->pre)
        text_size(v->text, g->px, g->pre, &g->pw, NULL);
    g->cw = span_width(v, g->px, t, g->v0, g->cur);
    /* scrolled to the cursor while typing; from the start otherwise */
    int end = g->cw + g->pw, room = g->clip.w - S(s, 20);
    g->tx = g->x0 - (b->focus && end > room ? end - room : 0);
}

void view_sentence_caret(View *v, const ViewState *s, const ViewLayout *l, SDL_Rect *out)
{
    BarView b;
    BarGeom g;
    bar_view(s, l, s->keys_focus, &b);
    bar_geometry(v, s, &b, &g);
    *out = (SDL_Rect){g.tx + g.cw + g.pw, g.cy, S(s, 2) > 1 ? S(s, 2) : 1, g.lh};
}

/* Unknown words of the bar's text: a dotted underline. */
static void bar_unknown(View *v, SDL_Renderer *r, const ViewState *s, const BarView *b, const BarGeom *g)
{
    if (!b->toks || !b->unknown)
        return;
    const TokenList *tl = b->toks;
    int px = g->px, lh = g->lh, cy = g->cy, tx = g->tx;
    for (int i = 0; i < tl->n; i++) {
        size_t a0 = tl->src_start[i], a1 = a0 + tl->src_len[i];
        if (!b->unknown[i] || a0 < g->v0 || a1 > g->v1)
            continue;
        int a = span_width(v, px, b->text, g->v0, a0) + (a0 >= g->cur ? g->pw : 0),
            e = span_width(v, px, b->text, g->v0, a1) + (a1 > g->cur ? g->pw : 0);
        set_color(r, theme(s)->error);
        int uy = cy + lh - S(s, 2), dot_w = S(s, 2) > 1 ? S(s, 2) : 1;
        for (int x = tx + a; x < tx + e; x += S(s, 4) > 2 ? S(s, 4) : 3) {
            SDL_Rect dot = {x, uy, dot_w, dot_w};
            SDL_RenderFillRect(r, &dot);
        }
    }
}

static void draw_bar(View *v, SDL_Renderer *r, const ViewState *s, const BarView *b)
{
    const Theme *th = theme(s);
    fill(r, b->rect, th->panel);
    if (b->focus)
        outline(r, b->rect, th->accent, S(s, 2) > 0 ? S(s, 2) : 1);
    int sp = S(s, 13), slh = text_line_height(v->text, sp);
    text_draw(v->text, sp, th->dim, b->label, b->rect.x + S(s, 14), b->rect.y + (b->rect.h - slh) / 2, 0, 0);
    const char *t = b->text;
    BarGeom g;
    bar_geometry(v, s, b, &g);
    SDL_Rect clip = g.clip;
    SDL_RenderSetClipRect(r, &clip);
    int px = g.px, lh = g.lh, cy = g.cy, tx = g.tx, cw = g.cw;
    size_t v0 = g.v0, v1 = g.v1, cur = g.cur;
    if (*t && b->focus && s->sentence_all) { /* Ctrl+A: all selected */
        SDL_Color sel = th->accent;
        sel.a = 90;
        fill(r, (SDL_Rect){tx, cy, span_width(v, px, t, v0, v1), lh}, sel);
    }
    if (*t || *g.pre) {
        /* the text with the pre-edit text at the cursor, underlined */
        char buf[2 * BAR_SHOWN_CAP + 256];
        size_t n = bar_shown(buf, BAR_SHOWN_CAP, t, v0, cur);
        size_t np = strlen(g.pre) < 255 ? strlen(g.pre) : 255;
        memcpy(buf + n, g.pre, np);
        n += np;
        bar_shown(buf + n, BAR_SHOWN_CAP, t, cur, v1);
        text_draw(v->text, px, th->text, buf, tx, cy, 0, 0);
        if (g.pw) {
            SDL_Rect u = {tx + cw, cy + lh - S(s, 2), g.pw, S(s, 2) > 1 ? S(s, 2) : 1};
            fill(r, u, th->accent);
        }
    } else if (!b->focus || b->keys) {
        /* the second bar keeps its hint while empty: it says what empty means */
        int hp = b->keys ? S(s, 15) : px;
        text_draw(v->text, hp, th->dim, b->placeholder, tx + (b->focus ? S(s, 6) : 0),
                  b->rect.y + (b->rect.h - text_line_height(v->text, hp)) / 2, 0, 0);
    }
    bar_unknown(v, r, s, b, &g);
    if (b->focus) {
        SDL_Rect caret = {tx + cw + g.pw, cy, S(s, 2) > 1 ? S(s, 2) : 1, lh};
        fill(r, caret, th->accent);
    }
    SDL_RenderSetClipRect(r, NULL);
    char right[120];
    sentence_note(s, b, right, sizeof right);
    if (right[0] && clip.x + clip.w < b->rect.x + b->rect.w - S(s, 16))
        text_draw(v->text, sp, th->dim, right, b->rect.x + b->rect.w - S(s, 14),
                  b->rect.y + (b->rect.h - slh) / 2, 2, 0);
}

void draw_sentence_bar(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    BarView b;
    bar_view(s, l, 0, &b);
    draw_bar(v, r, s, &b);
    if (l->keys_bar.w && l->keys_bar.h) {
        bar_view(s, l, 1, &b);
        draw_bar(v, r, s, &b);
    }
}

/* ---- controls ---------------------------------------------------------------- */

const char *control_label(const ViewState *s, int c, int compact)
{
    const ViewCtl *k = &s->ctl[c];
    return compact && k->compact[0] ? k->compact : k->label;
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
    for (int c = 0; c < s->n_ctl; c++) {
        if (!l->ctl[c].w)
            continue;
        int off = s->ctl[c].off, on = s->ctl[c].on && !off;
        SDL_Rect b = l->ctl[c];
        SDL_Color tc = on ? th->accent : th->dim;
        if (off)
            tc.a = 120; /* greyed: the status bar says why when pressed */
        fill(r, b, off ? th->panel : th->panel2);
        outline(r, b, on ? th->accent : th->border, 1);
        text_draw(v->text, px, tc,
                  control_label(s, c, compact), b.x + b.w / 2,
                  b.y + (b.h - lh) / 2, 1, 0);
    }
}

/* The tabs of the side area, when panels share it: the shown one lit, and
 * the key that switches at the right when there is room. */
void draw_side_tabs(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    if (l->side_shown < 0)
        return;
    const Theme *th = theme(s);
    int px = ctl_px(s), lh = text_line_height(v->text, px), right = 0;
    for (int p = 0; p < SIDE_COUNT; p++) {
        SDL_Rect b = l->side_tab[p];
        if (!b.w)
            continue;
        int on = p == l->side_shown;
        fill(r, b, on ? th->panel : th->panel2);
        outline(r, b, on ? th->accent : th->border, 1);
        text_draw(v->text, px, on ? th->accent : th->dim, side_tab_label(s, p), b.x + b.w / 2,
                  b.y + (b.h - lh) / 2, 1, 0);
        right = b.x + b.w;
    }
    int edge = l->controls.x + l->controls.w; /* the window's right margin */
    const char *hint = "Ctrl+Tab";
    int tw, hpx = S(s, 12);
    text_size(v->text, hpx, hint, &tw, NULL);
    if (right + S(s, 12) + tw <= edge)
        text_draw(v->text, hpx, th->dim, hint, edge, l->side_tab[l->side_shown].y +
                  (l->side_tab[l->side_shown].h - text_line_height(v->text, hpx)) / 2, 2, 0);
}

/* ---- status bar, titles, help, tooltip ------------------------------------- */

/* t word-wrapped into at most max_lines lines of max_w pixels (the last
 * one cut with "…" when more would be needed); returns the lines. */
int wrap_lines(View *v, int px, const char *t, int max_w, char out[][400], int max_lines)
{
    int n = 0;
    while (*t && n < max_lines) {
        size_t len = 0, fit = 0;
        while (t[len] && len < 399) {
            len++;
            if (t[len] == ' ' || !t[len]) {
                char probe[400];
                snprintf(probe, sizeof probe, "%.*s", (int)len, t);
                int w;
                text_size(v->text, px, probe, &w, NULL);
                if (w > max_w && fit)
                    break;
                fit = len;
            }
        }
        fit = fit ? fit : len;
        snprintf(out[n], 400, "%.*s", (int)fit, t);
        int w;
        text_size(v->text, px, out[n], &w, NULL);
        if (w > max_w) { /* one word wider than the line: cut, with "…" */
            char whole[400];
            TextMeasure tm = figure_measure_text(v->text);
            snprintf(whole, sizeof whole, "%s", out[n]);
            figure_fit_text(&tm, px, whole, max_w, out[n], 400);
        }
        n++;
        t += fit;
        while (*t == ' ')
            t++;
    }
    if (*t && n)
        snprintf(out[n - 1] + strlen(out[n - 1]), 400 - strlen(out[n - 1]), " \xE2\x80\xA6");
    return n;
}

/* msg cut to max_w pixels at a word, with "…" (the whole of it is in the
 * help overlay, F1): a message never ends mid-word. */
static void status_fit(View *v, int px, const char *msg, int max_w, char *out, size_t n)
{
    int w;
    snprintf(out, n, "%s", msg);
    text_size(v->text, px, out, &w, NULL);
    if (w <= max_w)
        return;
    size_t len = strlen(out);
    while (len > 0) {
        while (len > 0 && out[len - 1] != ' ') /* back to the previous word's end */
            len--;
        while (len > 0 && out[len - 1] == ' ')
            len--;
        snprintf(out + len, n - len, " \xE2\x80\xA6");
        text_size(v->text, px, out, &w, NULL);
        if (w <= max_w)
            return;
    }
    snprintf(out, n, "\xE2\x80\xA6");
}

void draw_status(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    fill(r, l->status, th->bg);
    SDL_Color line = th->border;
    set_color(r, line);
    SDL_RenderDrawLine(r, 0, l->status.y, l->w, l->status.y);
    char buf[512], q[160] = "";
    const AttnMap *m = &s->map;
    if (s->query >= 0 && s->query < m->Tq)
        snprintf(q, sizeof q, " \xC2\xB7 query: %s", m->q_labels[s->query]);
    snprintf(buf, sizeof buf, "%s%s%s", s->status_facts, q,
             s->n_unknown ? " \xC2\xB7 dotted = not in the table" : "");
    int px = S(s, 13), lh = text_line_height(v->text, px), y = l->status.y + (l->status.h - lh) / 2;
    const char *msg = s->status ? s->status : "F1 or ? for help  \xC2\xB7  Ctrl+E export PNG  \xC2\xB7  Ctrl+S save session";
    int fw, mw, room = l->w - 2 * S(s, 12);
    text_size(v->text, px, buf, &fw, NULL);
    text_size(v->text, px, msg, &mw, NULL);
    int x = S(s, 12);
    if (!s->status || fw + S(s, 24) + mw <= room) { /* the facts give way to a long message */
        char facts[600];
        TextMeasure tm = figure_measure_text(v->text);
        figure_fit_text(&tm, px, buf, room, facts, sizeof facts);
        x += text_draw(v->text, px, th->dim, facts, x, y, 0, 0) + S(s, 24);
    }
    if (!s->status && l->w - S(s, 12) - x < mw)
        return; /* the hint only where it fits whole */
    char fitted[4400];
    status_fit(v, px, msg, l->w - S(s, 12) - x, fitted, sizeof fitted);
    text_draw(v->text, px, s->status_error ? th->error : (s->status ? th->text : th->dim), fitted,
              x, y, 0, 0);
}

/* A panel's title in its width: whole when it fits; else the keys' hints
 * after its "   " dropped from the last (" · " apart) until it fits, the
 * title alone at least (it says what the panel is), then its last
 * "(aside)"; else cut with "…". */
void draw_panel_title(View *v, SDL_Renderer *r, const ViewState *s, SDL_Rect p, const char *t)
{
    int px = S(s, 13), room = p.w - S(s, 12), w;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", t);
    text_size(v->text, px, buf, &w, NULL);
    char *hints = strstr(buf, "   ");
    while (w > room && hints) {
        char *last = NULL;
        for (char *k = strstr(hints, " \xC2\xB7 "); k; k = strstr(k + 1, " \xC2\xB7 "))
            last = k;
        if (last)
            *last = '\0';
        else
            *hints = '\0', hints = NULL;
        text_size(v->text, px, buf, &w, NULL);
    }
    char *aside = strstr(buf, " (");
    for (char *k = aside; k; k = strstr(k + 1, " ("))
        aside = k;
    if (w > room && aside && buf[strlen(buf) - 1] == ')') { /* "… (32 heads share 8 key-value heads)" */
        *aside = '\0';
        text_size(v->text, px, buf, &w, NULL);
    }
    SDL_RenderSetClipRect(r, &p);
    if (w <= room)
        text_draw(v->text, px, theme(s)->dim, buf, p.x + S(s, 6), p.y + S(s, 2), 0, 0);
    else
        draw_text_fit(v, px, theme(s)->dim, buf, p.x + S(s, 6), p.y + S(s, 2), room);
    SDL_RenderSetClipRect(r, NULL);
}

/* The help's size and page: one column when it fits the window's height,
 * else two; each column as wide as its own keys and texts; a smaller size
 * when that does not fit, down to a readable one (S(12)); then pages
 * (PageDown / PageUp) of two columns, or of one when two are too wide, or
 * of one with its texts wrapped; smaller than readable only when even that
 * is too wide. Which of these is decided over every page, so that the
 * pages split the lines the same way whichever one is shown: each line on
 * exactly one of them. */
typedef struct HelpFit {
    int px, lh, cols, per, first, count, pages, page, kw[2], dw[2];
    int wrap; /* one column at the readable size, its texts wrapped to this
                 width (per: the page's rows), or 0 */
    int n_last; /* the status bar's last message, wrapped (lines) */
    char last[3][400];
    SDL_Rect box; /* the overlay's box, every text inside it */
} HelpFit;

/* Rows of help line k's text wrapped to w (3 at most). */
static int help_rows(View *v, int px, const ViewHelpLine *line, int w)
{
    char out[3][400];
    return wrap_lines(v, px, line->what, w, out, 3);
}

/* One column at the readable size with the texts wrapped: pages of room
 * rows, filled in order. 0 when the texts would be too narrow. */
static int help_wrapped(View *v, const ViewState *s, int win_w, const ViewHelpLine *keys, int n, int room,
                        HelpFit *f)
{
    int kw = 0;
    for (int k = 0; k < n; k++) {
        int a;
        text_size(v->text, f->px, keys[k].keys, &a, NULL);
        kw = a > kw ? a : kw;
    }
    int dw = win_w - kw - S(s, 40) - S(s, 60);
    if (dw < S(s, 240))
        return 0;
    f->wrap = dw;
    f->cols = 1;
    f->kw[0] = kw;
    f->dw[0] = dw;
    f->kw[1] = f->dw[1] = 0;
    int want = s->help_page < 0 ? 0 : s->help_page;
    f->pages = 0;
    for (int k = 0; k < n || f->pages == 0;) {
        int first = k, rows = 0;
        while (k < n) {
            int r = help_rows(v, f->px, &keys[k], dw);
            if (rows && rows + r > room)
                break;
            rows += r;
            k++;
        }
        if (f->pages == 0 || f->pages <= want) { /* the wanted page, or the last */
            f->first = first;
            f->count = k - first;
            f->per = rows;
            f->page = f->pages;
        }
        f->pages++;
        if (k >= n)
            break;
    }
    return 1;
}

/* Page p of the lines in pages of cols columns of room lines: its lines,
 * columns and their widths in f; is it as narrow as the window? */
static int help_page_fits(View *v, const ViewState *s, int win_w, const ViewHelpLine *keys, int n, int cols,
                          int room, int p, HelpFit *f)
{
    int per_page = cols * room;
    f->page = p;
    f->first = p * per_page;
    f->count = n - f->first < per_page ? n - f->first : per_page;
    f->cols = cols > 1 && f->count > room ? 2 : 1;
    f->per = (f->count + f->cols - 1) / f->cols;
    f->per = f->per < 1 ? 1 : f->per;
    f->kw[0] = f->kw[1] = f->dw[0] = f->dw[1] = 0;
    for (int k = 0; k < f->count; k++) {
        int a, b, c = k / f->per;
        text_size(v->text, f->px, keys[f->first + k].keys, &a, NULL);
        text_size(v->text, f->px, keys[f->first + k].what, &b, NULL);
        f->kw[c] = a > f->kw[c] ? a : f->kw[c];
        f->dw[c] = b > f->dw[c] ? b : f->dw[c];
    }
    return f->kw[0] + f->dw[0] + f->kw[1] + f->dw[1] + f->cols * S(s, 40) + S(s, 20) <= win_w;
}

/* The lines in pages of cols columns of at most room lines (the page of
 * s->help_page in f): does every page fit the window's width? */
static int help_try(View *v, const ViewState *s, int win_w, const ViewHelpLine *keys, int n, int cols, int room,
                    HelpFit *f)
{
    int pages = n > 0 ? (n + cols * room - 1) / (cols * room) : 1;
    int want = s->help_page < 0 ? 0 : s->help_page >= pages ? pages - 1 : s->help_page, fits = 1;
    for (int p = 0; p < pages; p++) {
        HelpFit g = *f;
        fits &= help_page_fits(v, s, win_w, keys, n, cols, room, p, &g);
        if (p == want)
            *f = g; /* the wanted page, drawn even when the last try fails */
    }
    f->pages = pages;
    return fits;
}

/* Lines a column holds at f's size: the window's height less the title,
 * the page line and the status bar's message (f->n_last lines). */
static int help_room(const ViewState *s, int win_h, HelpFit *f, const char *status, View *v, int win_w)
{
    f->lh = text_line_height(v->text, f->px) + S(s, 3);
    f->n_last = status ? wrap_lines(v, f->px, status, win_w - S(s, 80), f->last, 3) : 0;
    int reserve = 2 + (f->n_last ? f->n_last + 1 : 0);
    int room = (win_h - S(s, 60) - reserve * f->lh) / f->lh;
    return room < 4 ? 4 : room;
}

static void help_fit(View *v, const ViewState *s, int win_w, int win_h, const ViewHelpLine *keys, int n,
                     HelpFit *f)
{
    int readable = S(s, 12);
    memset(f, 0, sizeof *f);
    f->per = f->cols = f->pages = 1;
    for (f->px = S(s, 14);; f->px = f->px * 9 / 10 > readable ? f->px * 9 / 10 : readable) {
        int room = help_room(s, win_h, f, s->status, v, win_w);
        if (n <= 2 * room && help_try(v, s, win_w, keys, n, 2, room, f))
            return; /* all of it on one page */
        if (f->px > readable)
            continue;
        if (help_try(v, s, win_w, keys, n, 2, room, f) || help_try(v, s, win_w, keys, n, 1, room, f))
            return; /* pages at the readable size */
        if (help_wrapped(v, s, win_w, keys, n, room, f))
            return; /* one column too wide: its texts wrapped */
        break;
    }
    while (f->px > 8) { /* one column too wide even so: smaller */
        f->px = f->px * 9 / 10;
        int room = help_room(s, win_h, f, s->status, v, win_w);
        if (help_try(v, s, win_w, keys, n, 1, room, f))
            return;
    }
}

/* The help's title: with pages, which one and the key that turns them. */
static void help_title(const HelpFit *f, char *buf, size_t n)
{
    if (f->pages > 1)
        snprintf(buf, n, "attnviz keys, page %d of %d  (PageDown / PageUp: the other pages, Esc closes)",
                 f->page + 1, f->pages);
    else
        snprintf(buf, n, "attnviz keys  (Esc closes)");
}

/* The help's lines, page and box for a window of win_w × win_h. */
static void help_place(View *v, const ViewState *s, int win_w, int win_h, HelpFit *f)
{
    const ViewHelpLine *keys = s->help_lines;
    int n = s->help_lines ? s->n_help_lines : 0;
    help_fit(v, s, win_w, win_h, keys, n, f);
    int colx1 = f->kw[0] + f->dw[0] + S(s, 40);
    int cols = f->wrap ? 1 : f->cols;
    int w = (cols > 1 ? colx1 : 0) + f->kw[cols - 1] + f->dw[cols - 1] + S(s, 60);
    char title[160];
    help_title(f, title, sizeof title);
    int tw, lw;
    text_size(v->text, S(s, 16), title, &tw, NULL);
    w = tw + S(s, 40) > w ? tw + S(s, 40) : w;
    for (int k = 0; k < f->n_last; k++) { /* the status's lines inside too */
        text_size(v->text, f->px, f->last[k], &lw, NULL);
        w = lw + S(s, 40) > w ? lw + S(s, 40) : w;
    }
    w = w > win_w ? win_w : w;
    int h = f->per * f->lh + S(s, 60) + (f->pages > 1 ? 2 * f->lh : 0) + (f->n_last ? (f->n_last + 1) * f->lh : 0);
    f->box = (SDL_Rect){(win_w - w) / 2, (win_h - h) / 2, w, h};
    f->box.x = f->box.x < 0 ? 0 : f->box.x;
    f->box.y = f->box.y < 0 ? 0 : f->box.y;
}

void help_layout(View *v, const ViewState *s, ViewLayout *l)
{
    HelpFit f;
    help_place(v, s, l->w, l->h, &f);
    l->help_box = f.box;
    l->help_pages = f.pages;
}

void draw_help(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l)
{
    const Theme *th = theme(s);
    /* the lines the app made from its key table: the view knows no keys */
    const ViewHelpLine *keys = s->help_lines;
    HelpFit f;
    help_place(v, s, l->w, l->h, &f);
    int px = f.px, lh = f.lh, per = f.per, first = f.first, count = f.count;
    int *kw = f.kw, colx[2] = {0, kw[0] + f.dw[0] + S(s, 40)};
    SDL_Rect box = f.box;
    SDL_Color shade = {0, 0, 0, 150};
    fill(r, (SDL_Rect){0, 0, l->w, l->h}, shade);
    fill(r, box, th->panel);
    outline(r, box, th->accent, 2);
    char title[160];
    help_title(&f, title, sizeof title);
    text_draw(v->text, S(s, 16), th->text, title, box.x + S(s, 20), box.y + S(s, 12), 0, 0);
    for (int k = 0, row = 0; k < count; k++) {
        int c = f.wrap ? 0 : k / per, x = box.x + S(s, 20) + colx[c];
        int y = box.y + S(s, 44) + (f.wrap ? row : k % per) * lh;
        text_draw(v->text, px, th->accent, keys[first + k].keys, x, y, 0, 0);
        if (!f.wrap) {
            text_draw(v->text, px, th->text, keys[first + k].what, x + S(s, 20) + kw[c], y, 0, 0);
            continue;
        }
        char part[3][400];
        int nr = wrap_lines(v, px, keys[first + k].what, f.wrap, part, 3);
        for (int p = 0; p < nr; p++, row++)
            text_draw(v->text, px, th->text, part[p], x + S(s, 20) + kw[c], y + p * lh, 0, 0);
    }
    if (f.pages > 1) {
        char more[96];
        snprintf(more, sizeof more, "page %d of %d  \xC2\xB7  PageDown / PageUp: the other keys", f.page + 1,
                 f.pages);
        text_draw(v->text, px, th->dim, more, box.x + S(s, 20), box.y + S(s, 44) + (per + 1) * lh, 0, 0);
    }
    /* the status bar's last message in full (the bar may have cut it) */
    for (int k = 0; k < f.n_last; k++)
        text_draw(v->text, px, s->status_error ? th->error : th->dim, f.last[k], box.x + S(s, 20),
                  box.y + S(s, 44) + (per + 1 + (f.pages > 1 ? 2 : 0) + k) * lh, 0, 0);
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
