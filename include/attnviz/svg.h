/* Vector heatmap of one attention matrix for papers: an SVG with the
 * sentence and the model's settings as a title, query labels left of the
 * rows, key labels above the columns, one <rect class="cell"> per entry
 * (data-i, data-j, data-value with %.9g, fill from the same colour scale as
 * the PNG: colormap_scale_for / colormap_scale_rgb), hatched grey masked
 * cells (class "cell masked"), the selected query row outlined and a colour
 * bar. Plain C, no SDL; the output is well-formed XML with valid UTF-8. */
#ifndef ATTNVIZ_SVG_H
#define ATTNVIZ_SVG_H

#include <stdio.h>

#include "attnviz/colormap.h"
#include "attnviz/model.h"

typedef struct SvgOptions {
    int head;           /* 0..h-1 or MODEL_HEAD_AVG */
    ModelMatrix matrix; /* weights (sequential map) or scores/logits (diverging) */
    ColormapId cmap;    /* the sequential map for weights */
    int dark;           /* 1: dark theme (#14161a background, light text) */
    int query;          /* highlighted row, or -1 */
} SvgOptions;

/* Side of one cell in px for T tokens: 40 for small T, shrinking with T to
 * at least 4. Values are printed in the cells when it is >= 28. */
int svg_cell_size(int T);

/* Write the whole document to f. Returns 0 or -ATTN_E_IO. */
int svg_write_heatmap(FILE *f, const Model *m, const SvgOptions *o);

#endif
