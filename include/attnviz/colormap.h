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

/* How values map to colours for one matrix: sequential maps run from 0 to
 * the largest unmasked value, the diverging map from -a to a (a = max |v|). */
typedef struct ColorScale {
    ColormapId id;
    float lo, hi;
} ColorScale;

/* The scale of a map over its unmasked entries: diverging for scores,
 * logits and differences (attn_map_kind_diverging), else sequential. */
ColorScale colormap_scale_for_map(const AttnMap *m, ColormapId sequential);
/* M is rows×cols; with causal, entries j > i are masked and ignored. */
ColorScale colormap_scale_for(const float *M, int rows, int cols, int causal,
                              int diverging, ColormapId sequential);
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
 * the others as colormap_scale_texels gives them (lut from colormap_lut). */
void colormap_map_texels(const ColorScale *s, const AttnMap *map, const uint32_t *lut,
                         Rgb mask, uint32_t *out, int pitch);

/* Colour bar ticks: k of 0 … n_steps evenly from lo to hi, with as many
 * decimals as the step needs (1.00 0.75 0.50 …, 0.0020 0.0015 …), never
 * "-0". Every colour bar (window, PNG, SVG) labels its ticks with this. */
int colormap_tick_decimals(float lo, float hi, int n_steps);
void colormap_tick_label(float lo, float hi, int k, int n_steps, char *buf, size_t n);

/* A value printed in its heatmap cell: weights (sequential scales) with two
 * decimals, scores and logits with as many as their range allows in a cell
 * (2 below 1, 1 below 100, else 0); never "-0.00". */
void colormap_cell_label(const ColorScale *s, float v, char *buf, size_t n);

#endif
