/* The SVG back end of the figure layout (figure.h): a heatmap figure for
 * papers, the same size and the same cells as its PNG. One <rect
 * class="cell"> per entry (data-i, data-j, data-value with %.9g, fill from
 * the figure's colour scale), masked cells "cell masked" in the theme's
 * mask colour with a hatch line, the selected query row outlined, the colour
 * bar with ticks, caption and legend. Plain C, no SDL; the output is
 * well-formed XML with valid UTF-8. */
#ifndef ATTNVIZ_SVG_H
#define ATTNVIZ_SVG_H

#include <stdio.h>

#include "attnviz/attnmap.h"
#include "attnviz/error.h"
#include "attnviz/figure.h"

/* Write fig (laid out for map) to f in the dark (1) or light theme, with
 * query row and key column highlighted (-1: none). Returns 0 or
 * -ATTN_E_IO. */
int svg_write_figure(FILE *f, const Figure *fig, const AttnMap *map, int dark, int query, int key);
/* Write a grid of maps (figure_grid_layout): one <g class="map"
 * data-layer data-head> of cells per map, the headers, the selected map
 * outlined and the shared colour bar. */
int svg_write_grid(FILE *f, const FigureGrid *g, const AttnMaps *ms, int dark);
/* The model view's marks on a grid, as the window draws them. */
typedef struct SvgGridMarks {
    const double *score;  /* L·H scores (map l·H + h; NaN: none), or NULL */
    double full;          /* the score that fills a bar (0: 1) */
} SvgGridMarks;
/* The same with the model view's head roles (Ctrl+E in G): each map's
 * score as a bar and, when g->numbers, its number (class "mark"), a sorted
 * grid's "L2 H2" over each map, the headers in the heads' colours (mk
 * NULL or mk->score NULL: none of these); the key-value brackets
 * (g->kv_group, class "kv") with or without. */
int svg_write_grid_marked(FILE *f, const FigureGrid *g, const AttnMaps *ms, int dark, const SvgGridMarks *mk);

#endif
