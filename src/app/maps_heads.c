/* Head roles in the window (issue 26) for every source of layers × heads
 * (maps_shown.h): the chosen score on each of the model view's maps (I
 * cycles it), the grid sorted by it (Y), the score overview of every layer
 * and head (U, Enter or a click opens one), and every head of the layer in the line
 * diagram (Q), each head switched on and off (Shift+1 …, a click on its
 * colour). The scores are head_scores.h's, made once for the maps shown. */
#include "attnviz/app_state.h"
#include "attnviz/attnio.h"
#include "attnviz/maps_shown.h"
#include "attnviz/source.h"
#include "app_internal.h"
#include "attnviz/probe.h"
#include "attnviz/app.h"
#include "attnviz/fonts.h"
#include "attnviz/io.h"
#include "attnviz/svg.h"
#include "attnviz/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const HeadScores *maps_heads_scores(MapsShown *ms)
{
    const AttnFile *f = &ms->imp->f;
    if (ms->scores && ms->scores_hidden == ms->hide_special)
        return ms->scores;
    free(ms->scores);
    import_score_overview_free(&ms->ov);
    size_t n = (size_t)f->L * f->H;
    ms->scores = malloc(sizeof *ms->scores * n);
    if (!ms->score_v)
        ms->score_v = malloc(sizeof *ms->score_v * n);
    if (!ms->order)
        ms->order = malloc(sizeof *ms->order * n);
    AttnErr err = {0};
    if (!ms->scores || !ms->score_v || !ms->order || import_head_scores(ms->imp, ms->scores, &err) < 0) {
        free(ms->scores);
        ms->scores = NULL;
        return NULL;
    }
    ms->scores_hidden = ms->hide_special;
    return ms->scores;
}

/* score_v and order for the chosen score: highest first, nones last, ties
 * in layer order (an insertion sort: a few hundred maps) */
static void rank(MapsShown *ms)
{
    int n = ms->imp->f.L * ms->imp->f.H;
    for (int p = 0; p < n; p++) {
        double x = ms->scores[p].s[ms->score];
        ms->score_v[p] = x;
        int q = p;
        while (q > 0) {
            double y = ms->score_v[ms->order[q - 1]];
            if (!(isnan(y) && !isnan(x)) && (isnan(x) || y >= x))
                break;
            ms->order[q] = ms->order[q - 1];
            q--;
        }
        ms->order[q] = p;
    }
}

static double full_bar(const MapsShown *ms)
{
    if (head_score_unit((HeadScoreId)ms->score))
        return 1.0;
    double hi = 0.0;
    for (int p = 0; p < ms->imp->f.L * ms->imp->f.H; p++)
        if (!isnan(ms->score_v[p]) && ms->score_v[p] > hi)
            hi = ms->score_v[p];
    return hi > 0.0 ? hi : 1.0;
}

/* Every head of the picked layer, made again when the pick changed. */
static int layer_heads(MapsShown *ms)
{
    Imported *im = ms->imp;
    if (ms->heads_v && ms->heads_gen == ms->gen)
        return 0;
    free(ms->heads_v);
    ms->heads_v = malloc(sizeof *ms->heads_v * (size_t)im->f.H * im->Tq * im->Tk + 1);
    AttnErr err = {0};
    if (!ms->heads_v || import_layer_heads(im, ms->layer, ms->heads_v, &err) < 0) {
        free(ms->heads_v);
        ms->heads_v = NULL;
        return -1;
    }
    ms->heads_gen = ms->gen;
    ms->heads_maps = (AttnMaps){ms->heads_v, 1, im->f.H, im->Tq, im->Tk, (const char *const *)im->q_lab,
                                (const char *const *)im->k_lab, ATTN_MAP_WEIGHTS, 0, im->mask};
    return 0;
}

/* Every head switched on (new maps with another number of heads). */
static int all_on(MapsShown *ms)
{
    int H = ms->imp->f.H;
    if ((ms->head_on = malloc((size_t)H)) != NULL)
        memset(ms->head_on, 1, (size_t)H);
    return ms->head_on != NULL;
}

void maps_heads_present(AppState *a)
{
    MapsShown *ms = a->kind->maps(a);
    ViewState *s = &a->vs;
    s->grid_score = NULL;
    s->grid_order = NULL;
    s->score_map = NULL;
    s->line_heads = NULL;
    s->head_on = NULL;
    if (ms->probe_T > 0) { /* the probe's seed stays in sight */
        size_t u = strlen(s->status_facts);
        snprintf(s->status_facts + u, sizeof s->status_facts - u, " \xC2\xB7 induction probe, seed %llu",
                 (unsigned long long)ms->probe_seed);
    }
    if (ms->grid && maps_heads_scores(ms)) {
        rank(ms);
        s->grid_score = ms->score_v;
        s->grid_score_name = head_score_name((HeadScoreId)ms->score);
        s->grid_score_full = full_bar(ms);
        if (ms->sorted)
            s->grid_order = ms->order;
        if (ms->score_view) {
            AttnErr err = {0};
            if (ms->ov.v && ms->ov_score != ms->score)
                import_score_overview_free(&ms->ov);
            if (!ms->ov.v && import_score_overview(&ms->ov, ms->imp, ms->scores, (HeadScoreId)ms->score, &err) == 0)
                ms->ov_score = ms->score;
            s->score_map = ms->ov.v ? &ms->ov.m : NULL;
            s->score_cscale = import_score_scale((HeadScoreId)ms->score, (ColorScaleMode)ms->ov_cscale,
                                                 ms->ov.caption, sizeof ms->ov.caption);
            s->score_caption = ms->ov.caption;
        }
    } else if (!ms->grid && ms->every_head && (ms->head_on || all_on(ms)) && layer_heads(ms) == 0) {
        s->line_heads = &ms->heads_maps;
        s->head_on = ms->head_on;
    }
}

/* The model view's arrows in a sorted grid move through the slots as
 * they are drawn: row by row of H maps. */
static void sorted_move(AppState *a, MapsShown *ms, int di, int dj)
{
    int L = ms->imp->f.L, H = ms->imp->f.H, p = 0;
    for (int k = 0; k < L * H; k++)
        if (ms->order[k] == ms->grid_layer * H + ms->grid_head)
            p = k;
    int row = p / H + di, col = p % H + dj;
    row = row < 0 ? 0 : row >= L ? L - 1 : row;
    col = col < 0 ? 0 : col >= H ? H - 1 : col;
    int m = ms->order[row * H + col];
    ms->grid_layer = m / H;
    ms->grid_head = m % H;
    double x = ms->score_v[m];
    app_status(a, 0, "#%d by %s: layer %d, head %d, %s %.4g (Enter opens it)", row * H + col + 1,
               head_score_name((HeadScoreId)ms->score), ms->grid_layer + 1, ms->grid_head + 1,
               head_score_name((HeadScoreId)ms->score), isnan(x) ? NAN : x);
    a->dirty = 1;
}

static void say_score(AppState *a, MapsShown *ms)
{
    static const char *const what[HEAD_SCORE_COUNT] = {
        "each query's weight on the token before it",
        "each query's weight on itself",
        "each query's weight on the first token (the attention sink)",
        "the weight on earlier copies of the query's token",
        "the weight on the token after an earlier copy of the query's token",
        "the spread of each row, in nats (0: one key)",
        "the mean distance from query to key, in tokens"};
    app_status(a, 0, "head score: %s, %s (I: next \xC2\xB7 Y: sort \xC2\xB7 U: overview)",
               head_score_name((HeadScoreId)ms->score), what[ms->score]);
}

/* Shift+C on the overview: its own colours, a score in [0, 1] fixed 0–1
 * first (one colour is one score on every model: 0.08 stays dim), then 0 to
 * the largest here, then each layer to its own; entropy and distance run
 * to their largest always. */
static void overview_cscale(AppState *a, MapsShown *ms)
{
    static const char *const what[CSCALE_COUNT] = {
        "fixed 0\xE2\x80\x93" "1 (the same colour is the same score on every model)",
        "0 to the largest score here (the strongest head stands out, however weak)",
        "each layer 0 to its own largest"};
    const char *name = head_score_name((HeadScoreId)ms->score);
    if (!head_score_unit((HeadScoreId)ms->score)) {
        app_status(a, 0, "the %s is not a score in [0, 1]: its colours run from 0 to the largest "
                   "(I: another score)", name);
        return;
    }
    ms->ov_cscale = (ms->ov_cscale + 1) % CSCALE_COUNT;
    app_status(a, 0, "the overview's colours: %s (Shift+C: next)", what[ms->ov_cscale]);
    a->dirty = 1;
}

int maps_heads_takes(AppActionKind k)
{
    return k == ACT_PROBE || k == ACT_HEAD_SCORE || k == ACT_GRID_SORT || k == ACT_SCORE_VIEW || k == ACT_LINES_HEADS ||
           k == ACT_HEAD_SWITCH;
}

int maps_heads_apply(AppState *a, const AppAction *act)
{
    MapsShown *ms = a->kind->maps(a);
    int H = ms->imp->f.H;
    if ((maps_heads_takes(act->kind) || act->kind == ACT_GRID_MOVE) && !ms->head_on)
        all_on(ms);
    switch (act->kind) {
    case ACT_PROBE: { /* the next seed: --seed's first, then one more each time */
        const Options *o = a->opt;
        uint64_t seed = ms->probe_started ? ms->probe_next : o && o->has_seed ? o->seed : 0;
        maps_probe_run(a, o && o->probe ? o->probe_n : PROBE_DEFAULT_N, seed);
        return 0;
    }
    case ACT_HEAD_SCORE: /* cross-attention: through the scores it has */
        do
            ms->score = ((ms->score + (act->i < 0 ? -1 : 1)) % HEAD_SCORE_COUNT + HEAD_SCORE_COUNT) %
                        HEAD_SCORE_COUNT;
        while (ms->imp->f.cross && !head_score_of_cross((HeadScoreId)ms->score));
        ms->score_self = -1;
        say_score(a, ms);
        break;
    case ACT_GRID_SORT:
        ms->sorted = !ms->sorted;
        ms->grid = 1;
        ms->score_view = 0;
        app_status(a, 0, ms->sorted ? "every map by its %s score, highest first (Y: layer order again)"
                                    : "every map in layer order (Y: by %s score)",
                   head_score_name((HeadScoreId)ms->score));
        break;
    case ACT_SCORE_VIEW:
        ms->score_view = !ms->score_view || !ms->grid;
        ms->grid = 1;
        app_status(a, 0, ms->score_view ? "the %s score of every layer and head: Enter or a click opens that "
                                          "head (I: another score \xC2\xB7 Shift+C: colours \xC2\xB7 U: the maps)"
                                        : "every layer and head, marked with its %s score",
                   head_score_name((HeadScoreId)ms->score));
        break;
    case ACT_LINES_HEADS:
        ms->every_head = !ms->every_head;
        ms->grid = 0;
        app_status(a, 0, ms->every_head ? "every head of the layer, each its own colour: Shift+1 \xE2\x80\xA6 or a "
                                          "click on a colour switches a head (Q: one head)"
                                        : "one head's lines (Q: every head)");
        break;
    case ACT_HEAD_SWITCH:
        if (act->i < 0 || act->i >= H) {
            app_status(a, 0, "there are %d heads", H);
            return 0;
        }
        if (!ms->head_on)
            return 0;
        ms->head_on[act->i] = !ms->head_on[act->i];
        ms->every_head = 1;
        ms->grid = 0;
        app_status(a, 0, "head %d's lines %s", act->i + 1, ms->head_on[act->i] ? "on" : "off");
        break;
    case ACT_CYCLE_CSCALE:
        if (!ms->grid || !ms->score_view)
            return -1; /* the maps' colours: the app's */
        overview_cscale(a, ms);
        return 0;
    case ACT_GRID_MOVE:
        if (!ms->grid || !ms->sorted || ms->score_view || !maps_heads_scores(ms))
            return -1;
        rank(ms);
        sorted_move(a, ms, act->i, act->j);
        return 0;
    default:
        return -1;
    }
    a->vs.hover_i = a->vs.hover_j = -1;
    a->dirty = 1;
    return 0;
}

void maps_heads_fit_score(MapsShown *ms)
{
    if (ms->imp->f.cross && !head_score_of_cross((HeadScoreId)ms->score)) {
        ms->score_self = ms->score; /* previous, self, induction … are none on cross-attention */
        ms->score = HEAD_SCORE_ENTROPY;
    } else if (!ms->imp->f.cross && ms->score_self >= 0) {
        ms->score = ms->score_self;
        ms->score_self = -1;
    }
}

void maps_heads_keep(MapsShown *now, MapsShown *old)
{
    now->probe_ids = old->probe_ids; /* the probe's tokens move over */
    old->probe_ids = NULL;
    now->probe_T = old->probe_T;
    now->probe_n = old->probe_n;
    now->probe_seed = old->probe_seed;
    now->probe_next = old->probe_next;
    now->probe_started = old->probe_started;
    now->score = old->score;
    now->score_self = old->score_self;
    maps_heads_fit_score(now);
    now->sorted = old->sorted;
    now->score_view = old->score_view;
    now->ov_cscale = old->ov_cscale;
    now->every_head = old->every_head;
    if (old->head_on && old->imp->f.H == now->imp->f.H && (now->head_on = malloc((size_t)now->imp->f.H)))
        memcpy(now->head_on, old->head_on, (size_t)now->imp->f.H);
}

void maps_heads_session_of(const MapsShown *ms, AttnSession *sn)
{
    int most = (int)(sizeof sn->heads_off / sizeof sn->heads_off[0]);
    sn->score = ms->score_self >= 0 ? ms->score_self : ms->score; /* the choice, not cross-attention's stand-in */
    sn->sorted = ms->sorted;
    sn->score_view = ms->score_view;
    sn->score_cscale = ms->ov_cscale;
    sn->every_head = ms->every_head;
    sn->n_heads_off = 0;
    for (int h = 0; ms->head_on && h < ms->imp->f.H && h < most; h++)
        if (!ms->head_on[h])
            sn->heads_off[sn->n_heads_off++] = h;
}

void maps_heads_session_apply(MapsShown *ms, const AttnSession *sn)
{
    ms->score = sn->score >= 0 && sn->score < HEAD_SCORE_COUNT ? sn->score : HEAD_SCORE_INDUCTION;
    ms->score_self = -1;
    maps_heads_fit_score(ms);
    ms->sorted = sn->sorted;
    ms->score_view = sn->score_view;
    ms->ov_cscale = sn->score_cscale >= 0 && sn->score_cscale < CSCALE_COUNT ? sn->score_cscale : CSCALE_FIXED;
    ms->every_head = sn->every_head;
    if (!ms->head_on && !all_on(ms))
        return;
    memset(ms->head_on, 1, (size_t)ms->imp->f.H);
    for (int i = 0; i < sn->n_heads_off; i++)
        if (sn->heads_off[i] >= 0 && sn->heads_off[i] < ms->imp->f.H)
            ms->head_on[sn->heads_off[i]] = 0;
}

void maps_heads_forget_scores(MapsShown *ms)
{
    free(ms->scores);
    ms->scores = NULL;
    import_score_overview_free(&ms->ov);
}

void maps_heads_free(MapsShown *ms)
{
    free(ms->head_on);
    free(ms->scores);
    free(ms->score_v);
    free(ms->order);
    free(ms->heads_v);
    free(ms->probe_ids);
    ms->probe_ids = NULL;
    import_score_overview_free(&ms->ov);
    ms->head_on = NULL;
    ms->scores = NULL;
    ms->score_v = NULL;
    ms->order = NULL;
    ms->heads_v = NULL;
}

void maps_probe_clear(MapsShown *ms)
{
    free(ms->probe_ids);
    ms->probe_ids = NULL;
    ms->probe_T = 0;
}

int maps_probe_show(AppState *a, const int *ids, int T, int n, uint64_t seed)
{
    int *keep = T > 0 && a->kind->probe ? malloc(sizeof *keep * (size_t)T) : NULL;
    if (!keep || a->kind->probe(a, ids, T) < 0) {
        free(keep);
        return -1;
    }
    MapsShown *ms = a->kind->maps(a);
    memcpy(keep, ids, sizeof *keep * (size_t)T);
    free(ms->probe_ids);
    ms->probe_ids = keep;
    ms->probe_T = T;
    ms->probe_n = n;
    ms->probe_seed = seed;
    ms->probe_next = seed + 1;
    ms->probe_started = 1;
    return 0;
}

int maps_probe_run(AppState *a, int n, uint64_t seed)
{
    if (!a->kind->probe || !a->kind->maps) {
        app_status(a, 1, "the induction probe runs a model (--model DIR|NAME, or open a model folder)");
        return -1;
    }
    int bos, vocab, max_T, ids[PROBE_MAX_TOKENS];
    a->kind->probe_setup(a, &bos, &vocab, &max_T);
    int most = (max_T - (bos >= 0)) / 2, asked = n;
    n = n > most ? most : n;
    int T = probe_induction_tokens(ids, n, bos, vocab, seed);
    if (T < 1 || maps_probe_show(a, ids, T, n, seed) < 0) {
        app_status(a, 1, "the induction probe cannot run on this model (%d positions)", max_T);
        return -1;
    }
    MapsShown *ms = a->kind->maps(a);
    ms->grid = 1;
    ms->score = HEAD_SCORE_INDUCTION;
    ms->score_view = 1;
    a->vs.hover_i = a->vs.hover_j = -1;
    app_status(a, 0, "induction probe, seed %llu: %s%d random tokens twice (%d tokens%s); the induction score of "
               "every head \xC2\xB7 Ctrl+P: seed %llu", (unsigned long long)seed, bos >= 0 ? "the bos token, " : "",
               n, T, n < asked ? ", as many as the model's positions take" : "",
               (unsigned long long)seed + 1);
    a->dirty = 1;
    return 0;
}

/* The SVG of a laid-out model view: the grid with its marks. */
typedef struct GridSvg {
    const FigureGrid *g;
    const AttnMaps *ms;
    const ViewState *s;
} GridSvg;

static int write_grid_svg(FILE *f, void *ctx)
{
    const GridSvg *c = ctx;
    SvgGridMarks mk = {c->s->grid_score, c->s->grid_score_full};
    return svg_write_grid_marked(f, c->g, c->ms, c->s->dark, &mk);
}

/* The model view's maps with their marks as a PNG at png and the same
 * figure as an SVG at svg (one layout for both). */
static int export_grid(AppState *a, MapsShown *ms, const ViewState *s, const char *png, const char *svg,
                       AttnErr *err)
{
    char facts[320];
    FigureOptions fo = import_grid_options(ms->imp, s->grid->kind, s->scale, s->cmap, s->cscale, facts,
                                           sizeof facts);
    if (s->grid_score) { /* what the marks are */
        size_t u = strlen(facts);
        snprintf(facts + u, sizeof facts - u, s->grid_order ? " \xC2\xB7 by %s score, highest first"
                                                            : " \xC2\xB7 beside each map: its %s score",
                 s->grid_score_name);
    }
    AppFonts fonts;
    int rc = fonts_open(&fonts, a->opt ? a->opt->font : NULL, err);
    if (rc < 0)
        return rc;
    FigureGrid *g = malloc(sizeof *g);
    SDL_Surface *surf = g ? view_render_model_grid(&fonts.view, s, s->grid, &fo, g, err) : NULL;
    fonts_close(&fonts);
    rc = !surf ? (err->code ? -err->code : attn_err_set(err, ATTN_E_NOMEM, png, 0, "out of memory"))
               : export_save_png(surf, png, err);
    SDL_FreeSurface(surf);
    if (rc == 0) {
        GridSvg c = {g, s->grid, s};
        rc = io_write_atomic(svg, write_grid_svg, &c, err);
    }
    free(g);
    return rc;
}

int maps_heads_export(AppState *a, const struct ViewState *s, const char *stem, char *said, size_t n, AttnErr *err)
{
    MapsShown *ms = a->kind->maps(a);
    char png[1200], svg[1200];
    snprintf(png, sizeof png, "%s.png", stem);
    snprintf(svg, sizeof svg, "%s.svg", stem);
    if (s->score_map && ms->ov.v) { /* the overview: --view heads' figure, PNG and SVG */
        OverviewLook look = {(HeadScoreId)ms->ov_score, (ColorScaleMode)ms->ov_cscale, s->cmap, s->scale, s->dark,
                             a->opt ? a->opt->font : NULL};
        int rc = import_write_overview(&ms->ov, &look, png, err);
        if (rc == 0)
            rc = import_write_overview(&ms->ov, &look, svg, err);
        snprintf(said, n, "%s and .svg", png);
        return rc;
    }
    snprintf(said, n, "%s and .svg", png);
    return export_grid(a, ms, s, png, svg, err);
}
