/* Colour maps for the heatmap and the weight editor: perceptually uniform
 * sequential maps (viridis, cividis, magma, greys) for weights, a diverging
 * blue-white-red map centred on 0 for raw scores, logits and weights.
 * No SDL: the SVG writer and the tests use it too. */
#ifndef ATTNVIZ_COLORMAP_H
#define ATTNVIZ_COLORMAP_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/attnmap.h"

typedef enum ColormapId {
    CMAP_VIRIDIS = 0,
    CMAP_CIVIDIS,
    CMAP_MAGMA,
    CMAP_GREYS,
    CMAP_SEQUENTIAL_COUNT,
    CMAP_DIVERGING = CMAP_SEQUENTIAL_COUNT
} ColormapId;

typedef struct Rgb {
    uint8_t r, g, b;
} Rgb;

/* Colours are looked up in a table of COLORMAP_STEPS + 1 entries. */
#define COLORMAP_STEPS 1024

/* Colour at t in [0, 1] (clamped; NaN gives the t = 0 colour). */
Rgb colormap_rgb(ColormapId id, float t);
const char *colormap_name(ColormapId id);
/* Id for a name ("viridis" ...), or -1. */
int colormap_from_name(const char *name);
/* Best t in [0, 1] for a colour (nearest of 1024 samples), for tests. */
float colormap_invert(ColormapId id, Rgb c);
/* Black or white, whichever reads better on background c. */
Rgb colormap_text_on(Rgb c);

/* How a map of weights (or a painted target) is coloured; scores, logits
 * and differences (signed, unbounded) always get the diverging map from -a
 * to a (a = max |v|), whatever the mode.
 *   CSCALE_FIXED  0 to 1: the same colour is the same weight on every map
 *                 (a map with numbers above 1 runs to its largest one)
 *   CSCALE_MAX    0 to the map's largest unmasked value
 *   CSCALE_ROW    each row from 0 to its own largest value (long sentences,
 *                 where every weight is small) */
typedef enum ColorScaleMode { CSCALE_FIXED = 0, CSCALE_MAX, CSCALE_ROW, CSCALE_COUNT } ColorScaleMode;

/* "fixed", "max", "row"; "?" out of range. */
const char *colormap_mode_name(ColorScaleMode mode);
/* The mode of a name (as colormap_mode_name gives), or -1. */
int colormap_mode_from_name(const char *name);

/* How values map to colours for one matrix: t = (v - lo) / (hi - lo).
 * With per_row (colormap_per_row) row i is coloured with
 * colormap_row_scale's scale instead; lo and hi are then 0 and 1, for the
 * colour bar. */
typedef struct ColorScale {
    ColormapId id;
    float lo, hi;
    int per_row;
} ColorScale;

/* 1 when m is coloured row by row in mode: CSCALE_ROW and not diverging. */
int colormap_per_row(const AttnMap *m, ColorScaleMode mode);
/* The scale of a map over its unmasked entries for mode: diverging for
 * scores, logits and differences (attn_map_kind_diverging, mode ignored),
 * else sequential as the mode says (per_row set for CSCALE_ROW). */
ColorScale colormap_scale_mode(const AttnMap *m, ColormapId sequential, ColorScaleMode mode);
/* The same in CSCALE_MAX mode: sequential maps from 0 to the largest
 * unmasked value. */
ColorScale colormap_scale_for_map(const AttnMap *m, ColormapId sequential);
/* M is rows×cols; with causal, entries j > i are masked and ignored. */
ColorScale colormap_scale_for(const float *M, int rows, int cols, int causal,
                              int diverging, ColormapId sequential);
/* The scale that colours row i of m: with s->per_row, 0 to the row's
 * largest unmasked value (1 when it has none above 0) in s's map, else *s. */
ColorScale colormap_row_scale(const ColorScale *s, const AttnMap *m, int i);
/* The colour of cell (i, j) of m under s (per row or not). */
Rgb colormap_cell_rgb(const ColorScale *s, const AttnMap *m, int i, int j);
float colormap_scale_t(const ColorScale *s, float v);
/* Index into a table of COLORMAP_STEPS + 1 colours for t (clamped to [0, 1],
 * NaN as 0): the one colormap_rgb looks up. */
int colormap_index(float t);
/* out[j] = lut[colormap_index(colormap_scale_t(s, v[j]))] for n values: a
 * heatmap row as texels, the same colours as colormap_scale_rgb. */
void colormap_scale_texels(const ColorScale *s, const float *v, int n,
                           const uint32_t *lut, uint32_t *out);
Rgb colormap_scale_rgb(const ColorScale *s, float v);
/* The map's table of COLORMAP_STEPS + 1 colours as 0x00RRGGBB texels. */
void colormap_lut(ColormapId id, uint32_t *lut);
/* A whole map as texels: row i at out + i·pitch, masked entries in mask,
 * the others as colormap_scale_texels gives them under row i's scale
 * (colormap_row_scale; lut from colormap_lut). */
void colormap_map_texels(const ColorScale *s, const AttnMap *map, const uint32_t *lut,
                         Rgb mask, uint32_t *out, int pitch);

/* Colour bar ticks on round numbers: the multiples of one step of 1, 2 or
 * 5 × 10^k in [lo, hi], the finest step that gives at most max_n ticks
 * (max_n from 5 to COLORMAP_MAX_TICKS: then there are always at least 2).
 * Fills v[0 … n-1] ascending and *decimals (what the step needs: 0.05 → 2,
 * 0.2 → 1, 5 → 0); returns n, 0 when lo < hi fails or either is not finite.
 * Every colour bar (window, PNG, SVG) places and labels its ticks so. */
#define COLORMAP_MAX_TICKS 8
int colormap_ticks(double lo, double hi, int max_n, double *v, int *decimals);
/* A tick's label: v with the decimals, and 0 as "0" (never "-0.0"). */
void colormap_tick_label(double v, int decimals, char *buf, size_t n);

/* A value printed in its heatmap cell: weights (sequential scales) with two
 * decimals, scores and logits with as many as their range allows in a cell
 * (2 below 1, 1 below 100, else 0); never "-0.00". */
void colormap_cell_label(const ColorScale *s, float v, char *buf, size_t n);

#endif
