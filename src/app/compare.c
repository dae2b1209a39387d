#define _DEFAULT_SOURCE
/* The compare view (issue 14): V pins the map on screen as the reference,
 * with a snapshot of what made it (settings, head, matrix, weights, the
 * sentences, the edited word vectors). Every draw then gives the view the
 * reference, the current map and their difference (current − reference),
 * and says what differs by comparing the snapshot with the model now
 * ("scaled vs unscaled", "head 1 vs head 2", "edited Wq", …). The same
 * tokens in another order (a permuted sentence) are aligned by token: the
 * difference is in the current map's order, each cell against the
 * reference's cell of the same query and key tokens. Other tokens of the
 * same number (a word changed: tired → warm) are compared position by
 * position, the difference labelled with both tokens where they differ;
 * maps of other sizes get no difference, and the reason. The window's export of a
 * comparison writes the three panels as one PNG and the difference as CSV. */
#include "app_internal.h"
#include "platform.h"
#include "attnviz/source.h"
#include "attnviz/app.h"
#include "attnviz/fonts.h"
#include "attnviz/view.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this a permuted sentence's difference is rounding (the softmax
 * sums its row in another order), and said as none. */
#define PERMUTED_ZERO 1e-6f

struct AppCompare {
    void *ref;                  /* what made the reference (the source's snapshot) */
    const SourceKind *kind;     /* whose snapshot */
    float *v;                   /* the reference map, Tq×Tk */
    unsigned char *mask;        /* its masked entries, Tq×Tk */
    char **q_labels, **k_labels;
    AttnMap map;
    char ref_facts[400];        /* the reference figure's facts line */
    float *diff;                /* current − reference */
    unsigned char *dmask;
    size_t cap;
    int *rq, *rk;               /* the reference's row and column of each
                                   current row and column (aligned by token) */
    int rcap;
    char **dq, **dk;            /* compared by position: "tired→warm" where the tokens differ */
    int dq_n, dk_n;
    AttnMap dmap;
    char ref_label[300], cur_label[300], what[700];
};

/* ---- pin, unpin --------------------------------------------------------------------- */

static void labels_free(char **l, int n)
{
    for (int k = 0; l && k < n; k++)
        free(l[k]);
    free(l);
}

static void cmp_destroy(struct AppCompare *c)
{
    if (!c)
        return;
    if (c->ref)
        c->kind->snap_free(c->ref);
    free(c->v);
    free(c->mask);
    labels_free(c->q_labels, c->map.Tq);
    labels_free(c->k_labels, c->map.Tk);
    free(c->diff);
    free(c->dmask);
    free(c->rq);
    free(c->rk);
    labels_free(c->dq, c->dq_n);
    labels_free(c->dk, c->dk_n);
    free(c);
}

void compare_free(AppState *a)
{
    cmp_destroy(a->cmp);
    a->cmp = NULL;
    a->vs.cmp_ref = a->vs.cmp_diff = NULL;
    a->vs.cmp_ref_label = a->vs.cmp_cur_label = a->vs.cmp_what = NULL;
    a->vs.cmp_rows = NULL;
}

static char **labels_copy(const char *const *l, int n)
{
    char **out = calloc((size_t)n + 1, sizeof *out);
    for (int k = 0; out && k < n; k++)
        if (!(out[k] = strdup(l && l[k] ? l[k] : ""))) {
            labels_free(out, k);
            return NULL;
        }
    return out;
}

/* Copy the shown map (its numbers, masked entries, labels) and what made it. */
static struct AppCompare *pin(const AppState *a)
{
    const AttnMap *m = &a->vs.map;
    struct AppCompare *c = calloc(1, sizeof *c);
    size_t n = (size_t)m->Tq * (size_t)m->Tk;
    if (!c)
        return NULL;
    c->v = malloc(n * sizeof *c->v);
    c->mask = malloc(n);
    c->q_labels = labels_copy(m->q_labels, m->Tq);
    c->k_labels = labels_copy(m->k_labels, m->Tk);
    c->map = *m;
    c->kind = a->kind;
    c->ref = a->kind->snap(a);
    if (!c->v || !c->mask || !c->q_labels || !c->k_labels || !c->ref) {
        cmp_destroy(c);
        return NULL;
    }
    for (int i = 0; i < m->Tq; i++)
        for (int j = 0; j < m->Tk; j++) {
            c->v[(size_t)i * m->Tk + j] = attn_map_at(m, i, j);
            c->mask[(size_t)i * m->Tk + j] = (unsigned char)attn_map_masked(m, i, j);
        }
    c->map.v = c->v;
    c->map.stride = m->Tk;
    c->map.mask = c->mask;
    c->map.causal = 0; /* in the mask now */
    c->map.q_labels = (const char *const *)c->q_labels;
    c->map.k_labels = (const char *const *)c->k_labels;
    snprintf(c->ref_facts, sizeof c->ref_facts, "%s", a->vs.facts);
    return c;
}

void compare_toggle(AppState *a)
{
    a->dirty = 1;
    if (a->cmp) {
        compare_free(a);
        app_status(a, 0, "compare: unpinned, the heatmap alone again");
        return;
    }
    if (!a->kind->snap) {
        app_status(a, 1, "compare: a %s has nothing to compare", a->kind->name);
        return;
    }
    a->kind->present(a); /* the maps of now */
    if (!a->vs.map.v || !a->vs.map.Tq || !a->vs.map.Tk) {
        app_status(a, 1, "compare: nothing to pin (type a sentence)");
        return;
    }
    if (!(a->cmp = pin(a))) {
        app_status(a, 1, "compare: out of memory");
        return;
    }
    compare_view(a);
    if (a->layout.side_tab[SIDE_LINES].w > 0) /* the figures' room is a tab: open it */
        a->vs.side = SIDE_LINES;
    app_status(a, 0, "compare: pinned as the reference; change %s to see the difference (V unpins)",
               a->kind->compare_hint ? a->kind->compare_hint : "what is shown");
}

/* ---- every draw ------------------------------------------------------------------------ */

/* The reference's index of each of the n current labels: the k-th
 * occurrence of a token in the current map is the k-th occurrence of that
 * token in the reference. 0 when the two are not the same tokens (in any
 * order). */
static int align_labels(const char *const *ref, const char *const *cur, int n, int *out)
{
    int same = 1; /* the common case first, in one pass: the same places */
    for (int i = 0; i < n && same; i++)
        same = strcmp(ref[i], cur && cur[i] ? cur[i] : "") == 0;
    for (int i = 0; i < n && same; i++)
        out[i] = i;
    for (int i = 0; i < n && !same; i++) { /* quadratic: only for another order */
        const char *t = cur && cur[i] ? cur[i] : "";
        int before = 0; /* earlier occurrences of t in the current labels */
        for (int k = 0; k < i; k++)
            before += strcmp(cur && cur[k] ? cur[k] : "", t) == 0;
        out[i] = -1;
        for (int r = 0; r < n && out[i] < 0; r++)
            if (strcmp(ref[r], t) == 0 && before-- == 0)
                out[i] = r;
        if (out[i] < 0)
            return 0;
    }
    return 1;
}

enum { ALIGN_NONE, ALIGN_TOKEN, ALIGN_SAME, ALIGN_POSITION };

/* How the current map's rows and columns meet the reference's: ALIGN_SAME
 * the same tokens in the same places, ALIGN_TOKEN the same tokens in
 * another order (a permuted sentence: c->rq and c->rk say where each row
 * and column was), ALIGN_POSITION other tokens of the same number (a word
 * changed: each row and column against the reference's at its place),
 * ALIGN_NONE another size (or no memory): no difference means anything. */
static int align(struct AppCompare *c, const AttnMap *cur)
{
    const AttnMap *r = &c->map;
    if (r->Tq != cur->Tq || r->Tk != cur->Tk)
        return 0;
    int n = r->Tq > r->Tk ? r->Tq : r->Tk;
    if (n > c->rcap) {
        int *q = realloc(c->rq, (size_t)n * sizeof *q);
        if (q)
            c->rq = q;
        int *k = realloc(c->rk, (size_t)n * sizeof *k);
        if (k)
            c->rk = k;
        if (!q || !k)
            return 0;
        c->rcap = n;
    }
    if (!align_labels(r->q_labels, cur->q_labels, r->Tq, c->rq) ||
        !align_labels(r->k_labels, cur->k_labels, r->Tk, c->rk)) {
        for (int k = 0; k < n; k++)
            c->rq[k] = c->rk[k] = k;
        return ALIGN_POSITION;
    }
    for (int i = 0; i < r->Tq; i++)
        if (c->rq[i] != i)
            return ALIGN_TOKEN;
    for (int j = 0; j < r->Tk; j++)
        if (c->rk[j] != j)
            return ALIGN_TOKEN;
    return ALIGN_SAME;
}

/* Labels compared by position: the current one where the two agree, else
 * "reference→current". NULL without memory. */
static char **both_labels(const char *const *ref, const char *const *cur, int n)
{
    char **out = calloc((size_t)n + 1, sizeof *out);
    for (int k = 0; out && k < n; k++) {
        const char *r = ref && ref[k] ? ref[k] : "", *c = cur && cur[k] ? cur[k] : "";
        size_t len = strlen(r) + strlen(c) + 4;
        if (!(out[k] = malloc(len))) {
            labels_free(out, k);
            return NULL;
        }
        if (strcmp(r, c) == 0)
            snprintf(out[k], len, "%s", c);
        else
            snprintf(out[k], len, "%s\xE2\x86\x92%s", r, c);
    }
    return out;
}

/* The tokens that differ, for the subtitle: "“tired” → “warm”", at most
 * three, then how many more (the rows' labels, else the columns'). */
static void changed_tokens(const AttnMap *r, const AttnMap *cur, char *buf, size_t n)
{
    const char *const *rl = r->q_labels, *const *cl = cur->q_labels;
    int T = r->Tq, shown = 0, more = 0;
    size_t u = 0;
    buf[0] = '\0';
    for (int pass = 0; pass < 2 && !shown; pass++, rl = r->k_labels, cl = cur->k_labels, T = r->Tk)
        for (int k = 0; k < T; k++) {
            const char *a = rl && rl[k] ? rl[k] : "", *b = cl && cl[k] ? cl[k] : "";
            if (strcmp(a, b) == 0)
                continue;
            if (shown == 3) {
                more++;
                continue;
            }
            u += (size_t)snprintf(buf + u, u < n ? n - u : 0,
                                  "%s\xE2\x80\x9C%s\xE2\x80\x9D \xE2\x86\x92 \xE2\x80\x9C%s\xE2\x80\x9D",
                                  shown ? ", " : "", a, b);
            u = u < n ? u : n;
            shown++;
        }
    if (more)
        snprintf(buf + u, u < n ? n - u : 0, " and %d more", more);
}

/* current − reference, cell by cell over the same tokens (c->rq, c->rk:
 * the reference's row and column of each current one; in the current
 * map's order, with its labels). A masked weight is a weight of 0 (the
 * mask is part of the change): masked only where both are. Scores and
 * logits under a mask are not used: masked where either is. Returns the
 * largest |difference|, or -1 without memory. */
static float difference(struct AppCompare *c, const AttnMap *cur)
{
    size_t n = (size_t)cur->Tq * (size_t)cur->Tk;
    if (n > c->cap) {
        float *d = realloc(c->diff, n * sizeof *d);
        if (d)
            c->diff = d;
        unsigned char *mk = realloc(c->dmask, n);
        if (mk)
            c->dmask = mk;
        if (!d || !mk)
            return -1.0f;
        c->cap = n;
    }
    int weights = cur->kind == ATTN_MAP_WEIGHTS && c->map.kind == ATTN_MAP_WEIGHTS;
    float most = 0.0f;
    for (int i = 0; i < cur->Tq; i++)
        for (int j = 0; j < cur->Tk; j++) {
            size_t k = (size_t)i * cur->Tk + j, rk = (size_t)c->rq[i] * cur->Tk + c->rk[j];
            int mr = c->mask[rk], mc = attn_map_masked(cur, i, j);
            float r = c->v[rk], v = attn_map_at(cur, i, j);
            if (weights) {
                r = mr ? 0.0f : r;
                v = mc ? 0.0f : v;
            }
            c->diff[k] = v - r;
            c->dmask[k] = (unsigned char)(weights ? mr && mc : mr || mc);
            if (!c->dmask[k] && fabsf(c->diff[k]) > most)
                most = fabsf(c->diff[k]);
        }
    const char *const *ql = cur->q_labels, *const *kl = cur->k_labels;
    if (c->dq) /* compared by position: both tokens where they differ */
        ql = (const char *const *)c->dq;
    if (c->dk)
        kl = (const char *const *)c->dk;
    c->dmap = attn_map_make(c->diff, cur->Tq, cur->Tk, ql, kl, ATTN_MAP_DIFF);
    c->dmap.mask = c->dmask;
    c->dmap.head = cur->head;
    c->dmap.n_heads = cur->n_heads;
    return most;
}

/* The labels and the difference for the view state s (its maps set). */
static void fill_view(struct AppCompare *c, const AppState *a, ViewState *s)
{
    SourceDiffs d;
    char base[120];
    memset(&d, 0, sizeof d);
    c->kind->snap_diff(a, c->ref, &s->map, &d, base, sizeof base);
    snprintf(c->ref_label, sizeof c->ref_label, "reference: %s", d.n ? d.ref : base);
    snprintf(c->cur_label, sizeof c->cur_label, "current: %s", d.n ? d.cur : base);
    int how = align(c, &s->map);
    labels_free(c->dq, c->dq_n);
    labels_free(c->dk, c->dk_n);
    c->dq = c->dk = NULL;
    c->dq_n = c->dk_n = 0;
    if (how == ALIGN_POSITION) {
        c->dq = both_labels(c->map.q_labels, s->map.q_labels, s->map.Tq);
        c->dk = both_labels(c->map.k_labels, s->map.k_labels, s->map.Tk);
        c->dq_n = c->dq ? s->map.Tq : 0;
        c->dk_n = c->dk ? s->map.Tk : 0;
    }
    float most = how ? difference(c, &s->map) : -1.0f;
    int have = how && most >= 0.0f;
    if (have && how == ALIGN_TOKEN && most <= PERMUTED_ZERO) /* rounding, not a difference: drawn as 0 */
        for (size_t k = 0; k < (size_t)s->map.Tq * (size_t)s->map.Tk; k++)
            c->diff[k] = 0.0f;
    if (how == ALIGN_SAME && have) {
        snprintf(c->what, sizeof c->what, "%s", d.n ? d.what : "no difference");
    } else if (how == ALIGN_POSITION && have) { /* a word changed: the same places compared */
        char changed[400];
        changed_tokens(&c->map, &s->map, changed, sizeof changed);
        snprintf(c->what, sizeof c->what, "%s%sother tokens, as many: compared position by position (%s)",
                 d.n ? d.what : "", d.n ? " \xE2\x80\x94 " : "", changed);
    } else if (have) { /* a permuted sentence: the permutation lesson */
        snprintf(c->what, sizeof c->what, "%s%ssame tokens reordered, aligned by token: %s",
                 d.n ? d.what : "", d.n ? " \xE2\x80\x94 " : "",
                 most <= PERMUTED_ZERO ? "no difference (attention alone ignores word order)"
                                       : "they differ");
    } else {
        snprintf(c->what, sizeof c->what, "%s%s%s", d.n ? d.what : "", d.n ? " \xE2\x80\x94 " : "",
                 how ? "out of memory: no difference map"
                     : "a different number of tokens: no difference map");
    }
    s->cmp_ref = &c->map;
    s->cmp_rows = have ? c->rq : NULL;
    s->cmp_diff = have && c->dmap.v == c->diff && c->diff ? &c->dmap : NULL;
    s->cmp_ref_label = c->ref_label;
    s->cmp_cur_label = c->cur_label;
    s->cmp_what = c->what;
}

void compare_view(AppState *a)
{
    if (!a->cmp || a->cmp->kind != a->kind || !a->vs.map.v) { /* pinned from another source */
        a->vs.cmp_ref = a->vs.cmp_diff = NULL;
        a->vs.cmp_ref_label = a->vs.cmp_cur_label = a->vs.cmp_what = NULL;
        a->vs.cmp_rows = NULL;
        return;
    }
    a->cmp->dmap.v = NULL;
    fill_view(a->cmp, a, &a->vs);
}

/* ---- the export ------------------------------------------------------------------------- */

static int write_diff_csv(FILE *f, void *ctx)
{
    return print_map_csv(f, ctx);
}

int compare_export(AppState *a, ViewState *s, const char *png_path)
{
    AttnErr err = {0};
    struct AppCompare *c = a->cmp;
    c->dmap.v = NULL;
    fill_view(c, a, s);
    AppFonts fonts;
    int rc = fonts_open(&fonts, a->opt ? a->opt->font : NULL, &err);
    SDL_Surface *surf = rc < 0 ? NULL : view_render_compare(&fonts.view, s, c->ref_facts, &err);
    fonts_close(&fonts);
    rc = surf ? export_save_png(surf, png_path, &err) : -1;
    SDL_FreeSurface(surf);
    char csv[1300] = "";
    if (rc >= 0 && s->cmp_diff) {
        size_t n = strlen(png_path);
        snprintf(csv, sizeof csv, "%.*s.csv", (int)(n > 4 ? n - 4 : n), png_path);
        rc = io_write_atomic(csv, write_diff_csv, (void *)s->cmp_diff, &err);
    }
    if (rc < 0) {
        char buf[1200];
        attn_err_format(&err, buf, sizeof buf);
        app_status(a, 1, "export failed: %s", buf);
        return -1;
    }
    platform_file_written(png_path); /* a page: both downloaded, as Ctrl+E's PNG */
    if (csv[0])
        platform_file_written(csv);
    char full[4096], full_csv[4096];
    if (!realpath(png_path, full))
        snprintf(full, sizeof full, "%s", png_path);
    snprintf(a->last_export, sizeof a->last_export, "%s", full);
    a->export_count++;
    if (!csv[0]) {
        app_status(a, 0, "wrote %s (reference and current; a different number of tokens: no difference CSV)", full);
        return 0;
    }
    if (!realpath(csv, full_csv))
        snprintf(full_csv, sizeof full_csv, "%s", csv);
    a->export_count++;
    app_status(a, 0, "wrote %s and the difference %s", full, full_csv);
    return 0;
}
