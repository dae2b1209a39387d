/* The head scores of an Imported (issue 26) on the command line: every
 * layer and head's scores as CSV (--print head-scores), and the score
 * overview (--view heads --head-score NAME): an L × H heatmap of one score,
 * exported as PNG or SVG through the figure code. Not the window's marks. */
#include "attnviz/import.h"

#include <SDL.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attnviz/app.h"
#include "attnviz/figure.h"
#include "attnviz/fonts.h"
#include "attnviz/io.h"
#include "attnviz/svg.h"
#include "attnviz/view.h"

static HeadScores *scores_of(const Imported *im, AttnErr *err)
{
    HeadScores *s = malloc(sizeof *s * (size_t)im->f.L * (size_t)im->f.H);
    if (!s) {
        attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory");
        return NULL;
    }
    if (import_head_scores(im, s, err) < 0) {
        free(s);
        return NULL;
    }
    return s;
}

int import_print_head_scores(FILE *f, const Imported *im, AttnErr *err)
{
    HeadScores *s = scores_of(im, err);
    if (!s)
        return -err->code;
    fputs("layer,head", f);
    for (int k = 0; k < HEAD_SCORE_COUNT; k++)
        fprintf(f, ",%s", head_score_name((HeadScoreId)k));
    fputc('\n', f);
    for (int l = 0; l < im->f.L; l++)
        for (int h = 0; h < im->f.H; h++) {
            const HeadScores *one = &s[(size_t)l * im->f.H + h];
            fprintf(f, "%d,%d", l + 1, h + 1);
            for (int k = 0; k < HEAD_SCORE_COUNT; k++)
                if (isnan(one->s[k]))
                    fputc(',', f);
                else
                    fprintf(f, ",%.6g", one->s[k]);
            fputc('\n', f);
        }
    free(s);
    return ferror(f) ? attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed") : 0;
}

void import_score_overview_free(ScoreOverview *ov)
{
    int n = ov->m.Tq + ov->m.Tk;
    for (int i = 0; ov->labels && i < n; i++)
        free(ov->labels[i]);
    free(ov->labels), free(ov->v), free(ov->mask);
    memset(ov, 0, sizeof *ov);
}

int import_score_overview(ScoreOverview *ov, const Imported *im, const HeadScores *given, HeadScoreId k,
                          AttnErr *err)
{
    int L = im->f.L, H = im->f.H, nones = 0;
    memset(ov, 0, sizeof *ov);
    HeadScores *own = given ? NULL : scores_of(im, err);
    const HeadScores *s = given ? given : own;
    if (!s)
        return -err->code;
    ov->v = malloc(sizeof *ov->v * (size_t)L * H);
    ov->mask = malloc((size_t)L * H);
    ov->labels = calloc((size_t)(L + H + 2), sizeof *ov->labels);
    int ok = ov->v && ov->mask && ov->labels;
    for (int i = 0; ok && i < L + H; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, i < L ? "layer %d" : "head %d", i < L ? i + 1 : i - L + 1);
        ok = (ov->labels[i] = strdup(buf)) != NULL;
    }
    for (int c = 0; ok && c < L * H; c++) {
        double x = s[c].s[k];
        ov->mask[c] = (unsigned char)isnan(x);
        ov->v[c] = isnan(x) ? 0.0f : (float)x;
        nones += isnan(x);
    }
    free(own);
    ov->m = attn_map_make(ov->v, L, H, (const char *const *)ov->labels, (const char *const *)ov->labels + L,
                          ATTN_MAP_WEIGHTS);
    if (!ok) {
        import_score_overview_free(ov);
        return attn_err_set(err, ATTN_E_NOMEM, im->title, 0, "out of memory");
    }
    ov->m.mask = ov->mask;
    ov->m.layer = ov->m.head = ATTN_MAP_AVG;
    ov->m.n_layers = L;
    ov->m.n_heads = H;
    snprintf(ov->title, sizeof ov->title, "%s: %s score of every head", im->title, head_score_name(k));
    snprintf(ov->facts, sizeof ov->facts, "%d layers \xC3\x97 %d heads \xC2\xB7 %d tokens%s%s", L, H, im->Tq,
             im->f.cross ? " \xC2\xB7 cross-attention" : "", nones ? " \xC2\xB7 masked: none" : "");
    return 0;
}

ColorScaleMode import_score_scale(HeadScoreId k, ColorScaleMode asked, char *caption, size_t n)
{
    ColorScaleMode cs = head_score_unit(k) ? asked : CSCALE_MAX;
    snprintf(caption, n, cs == CSCALE_FIXED ? "%s, fixed 0\xE2\x80\x93" "1"
                         : cs == CSCALE_ROW ? "%s, each layer 0 to its max" : "%s, 0 to the largest",
             head_score_name(k));
    return cs;
}

/* The figure of the overview: no "queries"/"keys" titles; the colour bar
 * names the score and its scale (a score in [0, 1] as asked, entropy and
 * distance to the map's max). */
static void overview_layout(Figure *fig, ScoreOverview *ov, const OverviewLook *look)
{
    FigureOptions fo = figure_options_export(look->scale, ov->title, ov->facts);
    fo.axis_titles = 0;
    fo.cmap = look->cmap;
    fo.cscale = import_score_scale(look->score, look->cscale, ov->caption, sizeof ov->caption);
    fo.caption = ov->caption;
    figure_layout(fig, &ov->m, &fo, &figure_measure_dejavu);
    /* the row labels may be cut up to the grid's padding: the drawn font
       can be a little wider than the metrics measured */
    fig->label_w += fig->label_px / 4;
}

typedef struct SvgCtx {
    const Figure *fig;
    const ScoreOverview *ov;
    int dark;
} SvgCtx;

static int write_svg(FILE *f, void *ctx)
{
    const SvgCtx *c = ctx;
    return svg_write_figure(f, c->fig, &c->ov->m, c->dark, -1, -1);
}

int import_write_overview(ScoreOverview *ov, const OverviewLook *look, const char *path, AttnErr *err)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    const char *ext = dot && (!slash || dot > slash) ? dot : "";
    int svg = strcasecmp(ext, ".svg") == 0, rc;
    if (!svg && strcasecmp(ext, ".png") != 0)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                            "--view heads exports the score overview as .png or .svg, not '%s'",
                            *ext ? ext : "(none)");
    Figure *fig = malloc(sizeof *fig);
    if (!fig)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    overview_layout(fig, ov, look);
    if (svg) {
        SvgCtx c = {fig, ov, look->dark};
        rc = io_write_atomic(path, write_svg, &c, err);
    } else {
        if (!SDL_WasInit(SDL_INIT_VIDEO))
            SDL_SetHint(SDL_HINT_VIDEODRIVER, "dummy");
        AppFonts fonts;
        if ((rc = fonts_open(&fonts, look->font, err)) == 0) {
            SDL_Surface *surf = view_render_figure(&fonts.view, fig, &ov->m, look->dark, -1, err);
            fonts_close(&fonts);
            rc = surf ? export_save_png(surf, path, err)
                      : err->code ? -err->code : attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
            SDL_FreeSurface(surf);
        }
    }
    free(fig);
    return rc;
}

int import_export_heads(const Imported *im, const Options *o, ColormapId cmap, const char *path, AttnErr *err)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    const char *ext = dot && (!slash || dot > slash) ? dot : "";
    if (strcasecmp(ext, ".svg") != 0 && strcasecmp(ext, ".png") != 0)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                            "--view heads exports the score overview as .png or .svg, not '%s'",
                            *ext ? ext : "(none)");
    /* cross-attention's default: entropy (induction and the rest are none there) */
    HeadScoreId k = !o->head_score_set && im->f.cross ? HEAD_SCORE_ENTROPY : (HeadScoreId)o->head_score;
    ScoreOverview ov;
    int rc = import_score_overview(&ov, im, NULL, k, err);
    if (rc < 0)
        return rc;
    OverviewLook look = {k, o->color_scale_set ? (ColorScaleMode)o->color_scale : CSCALE_FIXED, cmap,
                         (float)o->scale, o->theme_dark, o->font};
    rc = import_write_overview(&ov, &look, path, err);
    import_score_overview_free(&ov);
    return rc;
}
