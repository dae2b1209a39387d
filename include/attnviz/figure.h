/* One figure layout for every heatmap picture: the title and facts lines,
 * the axis titles ("queries" down the side, "keys" across the top), the
 * row and column labels, the cells with their values, the colour bar with
 * its ticks and caption, and the legend of masked cells. Computed once, as
 * pure geometry in pixels with text measured through a callback (as
 * microui asks `text_width`), then drawn by two back ends: the SDL renderer
 * (figure_draw, for the window and the PNG) and the SVG writer
 * (svg_write_figure). So a PNG and an SVG of one figure have the same size
 * and every cell at the same place with the same colour.
 * Not for: the window's other panels. No SDL here. */
#ifndef ATTNVIZ_FIGURE_H
#define ATTNVIZ_FIGURE_H

#include "attnviz/attnmap.h"
#include "attnviz/colormap.h"

/* How wide and how tall text is at a font size of px pixels. */
typedef struct TextMeasure {
    int (*width)(void *ctx, int px, const char *s);
    int (*line_height)(void *ctx, int px);
    void *ctx;
} TextMeasure;

/* DejaVu Sans's own advance widths and line height, without a font file:
 * the same on every machine. The exports lay out with it, so the PNG (drawn
 * in DejaVu Sans) and the SVG share one layout. */
extern const TextMeasure figure_measure_dejavu;
/* Its ascent (top of a line to its baseline) at px, for the SVG; the
 * advance of one code point in em. */
double figure_ascent(int px);
double figure_dejavu_em(unsigned cp);

/* t cut to max_w pixels at px with "…" (whole characters) into out (n
 * bytes, at least 8); the whole of t when it fits. Every back end and the
 * layout cut text with it. */
void figure_fit_text(const TextMeasure *tm, int px, const char *t, int max_w, char *out, size_t n);
/* The same for a label the layout made room for (max_w measured with
 * figure_measure_dejavu) drawn with a font (tm): the font's hinting may
 * make it a pixel or two wider, so it is cut only past a quarter of px
 * (and a pixel) of slack. */
void figure_fit_label(const TextMeasure *tm, int px, const char *t, int max_w, char *out, size_t n);

typedef struct FigRect {
    int x, y, w, h;
} FigRect;

typedef struct FigureOptions {
    float scale;         /* 1 = 100 %; every size below is multiplied by it */
    const char *title;   /* first line, cut to the width with "…"; NULL: none */
    const char *facts;   /* second line; NULL: none */
    int axis_titles;     /* "queries" and "keys" beside the labels */
    int area_x, area_y;  /* fit into this area (the window's panel); */
    int area_w, area_h;  /* area_w 0: the natural size of an export, from
                            (0, 0), with cells from Tq and Tk */
    float max_cell;      /* largest cell in pixels when fitting (0: none) */
    float zoom;          /* >= 1 when fitting: cells grow, rows/cols scroll */
    int pan_row, pan_col;/* first visible row/column when zoomed */
    int query, key;      /* selected row and column (labels give way), -1 */
    ColormapId cmap;     /* the sequential map (weights, targets) */
    ColorScaleMode cscale;/* how weights are coloured (0: fixed 0–1) */
    const ColorScale *cs;/* the map's colour scale when known (a view caches
                            it), or NULL: scanned from the map for cscale */
    int values_fit;      /* numbers in the cells whenever they fit (the
                            compare view), not only in cells of 34 px × scale,
                            and labels a whole line apart */
    int no_colorbar;     /* none (bar.w 0): the next figure's serves both */
    const char *caption; /* the colour bar's caption (the bar at least as
                            tall), or NULL: the map's unit ("weight") */
    /* a grid of maps (figure_grid_layout): room for marks right of each
     * map and a label line above each (0: none), and an order (slot p
     * shows map order[p], l·H + h; NULL: layer order) */
    int grid_mark_w, grid_label_h;
    int grid_tight;      /* a small panel's grid: narrow gaps and cells under a
                            pixel rather than maps left out */
    const int *grid_order;
    int grid_mark_px;    /* the marks' numbers, sort labels and key-value
                            labels: their text size (0: 13 × scale) */
    int grid_numbers;    /* 1: a number beside each mark's bar */
    int grid_kv_group;   /* > 1: that many heads in a row share a key-value
                            head; a labelled bracket over each group
                            (not when sorted) */
} FigureOptions;

/* Options of an export figure at scale, with its title and facts. */
FigureOptions figure_options_export(float scale, const char *title, const char *facts);

/* At most this many colour bar ticks (round numbers, colormap_ticks). */
#define FIGURE_TICKS COLORMAP_MAX_TICKS

#define FIGURE_FACT_LINES 3

/* The title and facts lines at the top of a figure. The facts wrap at
 * their " · " separators onto up to three lines rather than widen the
 * figure past its content. */
typedef struct FigTitles {
    char title[512];           /* the title as drawn (cut with "…") */
    char facts[FIGURE_FACT_LINES][320]; /* the facts lines as drawn */
    int n_facts;               /* 0: none */
    int title_px, facts_px;
    FigRect title_box;         /* h = 0: no title */
    FigRect facts_box[FIGURE_FACT_LINES];
} FigTitles;

/* A colour bar with its ticks, its caption ("weight", turned 90°) and the
 * swatch of masked cells. Ticks sit on round numbers (0, 0.2 … 1; 0, 0.05
 * … 0.2), as many as the bar's height has room for; a per-row scale has
 * two, "0" and "max", and the caption says so. */
typedef struct FigColorbar {
    ColorScale cs;             /* the colours of the figure's map(s); with
                                  cs.per_row each row on its own scale (0 to
                                  its max, colormap_row_scale) */
    FigRect bar;
    int tick_px, tick_x;       /* tick labels: size, left edge */
    int n_ticks;
    int tick_y[FIGURE_TICKS];  /* tick k (bottom up) at this y */
    char ticks[FIGURE_TICKS][32];
    const char *caption;
    int caption_x, caption_cy; /* left x and centre y of the turned caption */
    FigRect legend;            /* the masked swatch, w = 0 when none */
    int line_w;                /* tick line width */
} FigColorbar;

typedef struct Figure {
    int w, h;                  /* the whole figure */
    FigTitles t;
    int axis_px;               /* 0: no axis titles */
    int keys_cx, keys_y;       /* "keys": centre x, top */
    int queries_x, queries_cy; /* "queries": left x, centre y (turned 90°) */
    int Tq, Tk;
    FigRect grid;              /* the visible cells */
    float cell;                /* cell side in pixels */
    int row0, col0, rows, cols;/* first visible row/column, counts */
    int label_px, label_lh;    /* token labels */
    int label_w;               /* room for a label (longer ones are cut) */
    int key_w;                 /* the widest key label (capped): the room
                                  of a turned one when the rows have none */
    int rotate;                /* key labels flat (0), at -45° (1) or upright
                                  at -90° (2: in the window, where at -45°
                                  every other one would be left out) */
    int every_r, every_c;      /* a label every so many rows/columns */
    int value_px;              /* numbers in the cells, 0 = none */
    FigColorbar cb;
    int line_w;                /* outline width of the selected row */
} Figure;

/* A grid of small maps, L layers down × H heads across, over the same
 * tokens and one colour scale (so heads compare): what a real model's
 * attention looks like at a glance. Map (l, h)'s cells start at
 * (x0 + h·(map_w + gap), y0 + l·(map_h + gap)). */
/* The most maps a sorted grid places (beyond: layer order). */
#define FIGURE_GRID_SLOTS 4096

typedef struct FigureGrid {
    int w, h;
    FigTitles t;
    int L, H, Tq, Tk;
    int x0, y0, map_w, map_h, gap;
    float cell;
    int head_px;               /* "head 1" … over the columns */
    int layer_px;              /* "layer 1" … left of the rows */
    int sel_l, sel_h;          /* highlighted map, or -1 */
    FigColorbar cb;
    /* The window's head roles (issue 26): mark_w pixels right of each map
     * for its score, label_h above each for its layer and head; sorted: map
     * (l, h) is in slot slot[l·H + h] (row slot / H, column slot % H), the
     * headers left out. */
    int mark_w, label_h;
    int sorted;
    int slot[FIGURE_GRID_SLOTS];
    /* each mark: a bar bar_w wide bar_x right of its map, its number (when
     * numbers) beside it; numbers and labels in mark_px text */
    int mark_px, bar_x, bar_w, numbers;
    /* grouped-query heads: kv_group heads share a key-value head; their
     * brackets in a band kv_h tall from kv_y, above the head headers
     * (kv_group 0: none, kv_h 0) */
    int kv_group, kv_y, kv_h;
} FigureGrid;

/* Key-value group k's bracket (heads k·kv_group …): the line (x0 … x1 at
 * y, t thick, with ticks down to the band's bottom) and its label "KV k+1",
 * or "k+1" where that does not fit, or none (label[0] == 0); the line
 * leaves a gap gap_x0 … gap_x1 for the label, centred at label_cx. */
typedef struct FigKvBracket {
    int x0, x1, y, t, tick_h;
    int gap_x0, gap_x1, label_cx, label_y;
    char label[16];
} FigKvBracket;
/* 0 when k is not a group of g's; measures the label with tm. */
int figure_grid_kv_bracket(const FigureGrid *g, int k, const TextMeasure *tm, FigKvBracket *b);

/* Lay the map out. A map with no rows or columns gives a figure with only
 * its title, facts and a note. */
void figure_layout(Figure *f, const AttnMap *map, const FigureOptions *o,
                   const TextMeasure *tm);

/* Lay out the maps of ms (one scale over all of them): the natural size of
 * an export with o->area_w 0, else fitted into the area. o->query and
 * o->key select the highlighted map (layer, head) here. */
void figure_grid_layout(FigureGrid *g, const AttnMaps *ms, const FigureOptions *o,
                        const TextMeasure *tm);
/* Where map (l, h) is, and the map under (x, y): 1 and l, h, or 0. */
FigRect figure_grid_map_rect(const FigureGrid *g, int l, int h);
int figure_grid_hit(const FigureGrid *g, int x, int y, int *l, int *h);
/* Pixel edge of cell column j (row i) inside a map of the grid. */
int figure_grid_cell_x(const FigureGrid *g, int h, int j);
int figure_grid_cell_y(const FigureGrid *g, int l, int i);

/* An export's figure (PNG and SVG alike): the natural size at scale, title
 * and facts on top, DejaVu Sans metrics, weights coloured as cscale says,
 * query row selected (-1: none). */
void figure_layout_export(Figure *f, const AttnMap *map, float scale, const char *title,
                          const char *facts, ColormapId cmap, ColorScaleMode cscale, int query);

/* Pixel edges of cell column j and row i (j = col0 + cols gives the right
 * edge): cells tile the grid with no gap and no overlap. */
int figure_cell_x(const Figure *f, int j);
int figure_cell_y(const Figure *f, int i);
/* Row/column label i is drawn (thinned labels give way to the selected). */
int figure_row_label_shown(const Figure *f, int i, int query);
int figure_col_label_shown(const Figure *f, int j, int key);
/* Cell under (x, y): 1 and i, j, or 0. */
int figure_hit_cell(const Figure *f, int x, int y, int *i, int *j);

#endif
