/* A source for the tests alone (issue 24): L × H maps made from a formula,
 * opened from a path "formula:L,H,T". It proves that a new kind of input is
 * new files plus one line (source_register): nothing in src/app or src/view
 * knows it. Head h of layer l: query i attends to key j ≤ i with weight
 * proportional to exp(−|i − j − h| / (l + 1)), so each head looks h tokens
 * back, sharper in the first layers. Include after cmocka.h. */
#ifndef ATTNVIZ_TEST_FORMULA_SOURCE_H
#define ATTNVIZ_TEST_FORMULA_SOURCE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/app_state.h"
#include "attnviz/import.h"
#include "attnviz/maps_shown.h"
#include "attnviz/source.h"

typedef struct FormulaSource {
    MapsShown ms;
    char path[1024];
} FormulaSource;

/* Weight (l, h, i, j) of the formula, in double precision. */
static double formula_weight(int l, int h, int i, int j)
{
    if (j > i)
        return 0.0;
    double sum = 0.0;
    for (int k = 0; k <= i; k++)
        sum += exp(-fabs((double)(i - k - h)) / (l + 1));
    return exp(-fabs((double)(i - j - h)) / (l + 1)) / sum;
}

static int formula_parse(const char *path, int *L, int *H, int *T)
{
    char end;
    return sscanf(path, "formula:%d,%d,%d%c", L, H, T, &end) == 3 && *L >= 1 && *L <= 16 && *H >= 1 &&
           *H <= 16 && *T >= 1 && *T <= 64;
}

static int formula_accepts(const char *path)
{
    int L, H, T;
    return formula_parse(path, &L, &H, &T);
}

/* The maps and their tokens ("t0", "t1", …) as an Imported, picked at
 * layer 0, head 0. */
static Imported *formula_make(const char *path, AttnErr *err)
{
    int L, H, T;
    if (!formula_parse(path, &L, &H, &T)) {
        attn_err_set(err, ATTN_E_PARSE, path, 0, "not formula:L,H,T");
        return NULL;
    }
    float *v = malloc(sizeof(float) * (size_t)L * H * T * T);
    char **tok = calloc((size_t)T + 1, sizeof *tok);
    Imported *im = malloc(sizeof *im);
    if (!v || !tok || !im) {
        free(v);
        free(tok);
        free(im);
        attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
        return NULL;
    }
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++)
                    v[(((size_t)l * H + h) * T + i) * T + j] = (float)formula_weight(l, h, i, j);
    for (int i = 0; i < T; i++) {
        char b[16];
        snprintf(b, sizeof b, "t%d", i);
        tok[i] = strdup(b);
    }
    if (import_from_buffer(im, path, v, L, H, T, T, tok, NULL, err) < 0 ||
        import_pick(im, 0, 0, 0, NULL, err) < 0) {
        if (im->f.n_parts)
            import_close(im);
        free(im);
        return NULL;
    }
    return im;
}

static MapsShown *formula_maps(const AppState *a)
{
    FormulaSource *fs = a->src;
    return &fs->ms;
}

static void formula_close(AppState *a)
{
    FormulaSource *fs = a->src;
    if (fs)
        maps_shown_free(&fs->ms);
    free(fs);
    a->src = NULL;
}

static int formula_show(AppState *a, void *opened);

static int formula_open(AppState *a, const char *path)
{
    AttnErr err = {0};
    Imported *im = formula_make(path, &err);
    if (!im) {
        app_status(a, 1, "cannot open: %s", err.msg);
        return -1;
    }
    return formula_show(a, im);
}

extern const SourceKind source_formula;

static int formula_show(AppState *a, void *opened)
{
    Imported *im = opened;
    FormulaSource *fs = calloc(1, sizeof *fs);
    if (!fs || maps_shown_init(&fs->ms, im) < 0) {
        if (!fs) {
            import_close(im);
            free(im);
        }
        free(fs);
        return -ATTN_E_NOMEM;
    }
    snprintf(fs->path, sizeof fs->path, "%s", im->f.name);
    app_show_source(a, &source_formula, fs);
    maps_shown_start(a, fs->path);
    return 0;
}

static int formula_apply(AppState *a, const AppAction *act)
{
    return maps_shown_apply(a, act);
}

static int formula_takes(AppActionKind k)
{
    return maps_shown_takes(k) || k == ACT_COMPARE;
}

static void formula_present(AppState *a)
{
    FormulaSource *fs = a->src;
    maps_shown_present(a, "A formula's maps: no weights, no steps.", "from a formula");
    a->vs.bar_label = "Formula";
    a->vs.sentence = fs->path;
}

static void formula_shown_size(const AppState *a, int *Tq, int *Tk)
{
    maps_shown_size(formula_maps(a), Tq, Tk);
}

static const char *formula_title(const AppState *a)
{
    FormulaSource *fs = a->src;
    return fs->path;
}

static int formula_save(AppState *a, const char *path)
{
    FormulaSource *fs = a->src;
    return maps_shown_save(a, fs->path, NULL, path);
}

static int formula_cli_open(const Options *o, const char *path, void **opened, AttnErr *err)
{
    Imported *im = formula_make(path, err);
    *opened = im;
    if (!im)
        return -err->code;
    if (import_pick(im, o->layer, o->head, o->rollout, o->drop, err) < 0) {
        import_close(im);
        free(im);
        *opened = NULL;
        return -err->code;
    }
    return 0;
}

static int formula_cli_write(void *opened, const Options *o, AttnErr *err)
{
    return import_write(opened, o, err);
}

static void formula_cli_free(void *opened)
{
    if (opened) {
        import_close(opened);
        free(opened);
    }
}

const SourceKind source_formula = {
    .name = "formula",
    .caps = SOURCE_LAYERS,
    .takes = formula_takes,
    .accepts = formula_accepts,
    .open = formula_open,
    .close = formula_close,
    .apply = formula_apply,
    .present = formula_present,
    .controls = maps_shown_controls,
    .shown_size = formula_shown_size,
    .save = formula_save,
    .title = formula_title,
    .maps = formula_maps,
    .snap = maps_shown_snap,
    .snap_free = maps_shown_snap_free,
    .snap_diff = maps_shown_snap_diff,
    .compare_hint = "the layer or head",
    .cli_open = formula_cli_open,
    .cli_write = formula_cli_write,
    .show = formula_show,
    .cli_free = formula_cli_free,
};

#endif
