/* Internal to the view (the files of src/view): the View object, the two
 * themes, the drawing helpers every panel uses, and the geometry and drawing
 * entry points the panel files share. Where each thing is:
 *   view.c      create and destroy a view; the window's frame, panel by panel
 *   layout.c    the window's geometry and hit testing
 *   draw.c      the theme colours; fills, outlines, anti-aliased lines, text
 *               cut to a width, the widest token label
 *   shown.c     the maps the panels show, from a Model (view_state_set_model)
 *   heatmap.c   the window's heatmap panel: the figure (figure.c) fitted into
 *               it, the map's texture and colour scale, drawn by figure_draw.c
 *   colorbar.c  the colour bar gradients
 *   lines.c     the query → key line diagram
 *   editor.c    the weight editor
 *   step.c      the step view
 *   chrome.c    sentence bar, controls strip, status bar, panel titles, help
 *               overlay, tooltip
 *   panel.c     the export panels: their size and drawing
 *   figure.c, figure_draw.c, figure_render.c, svg.c: the figure layout of a
 *               map and its SDL and SVG back ends
 */
#ifndef ATTNVIZ_VIEW_INTERNAL_H
#define ATTNVIZ_VIEW_INTERNAL_H

#include <cglm/types.h>
#include <math.h>

#include "attnviz/theme.h"
#include "attnviz/view.h"
#include "figure_draw.h"
#include "text.h"

typedef struct Theme {
    SDL_Color bg, panel, panel2, text, dim, accent, border, mask, error, pos, neg;
} Theme;

/* draw.c: theme.h's colours as SDL colours */
const Theme *theme_colors(int dark);

struct View {
    SDL_Renderer *r;
    TextCache *text;
    SDL_Texture *heat;     /* one texel per cell of the shown map */
    int heat_w, heat_h;    /* the heat texture's size in texels */
    unsigned long heat_key[8]; /* what the texels show: skip unchanged uploads */
    ColorScale heat_scale;     /* the shown map's colour scale (a scan of its
                                  Tq×Tk values), for scale_key */
    unsigned long scale_key[8];
    uint32_t heat_lut[COLORMAP_STEPS + 1]; /* the colour map as texels */
    int heat_lut_id;           /* which map heat_lut holds, or -1 */
    SDL_Texture *bar[CMAP_DIVERGING + 1]; /* colour bar gradients */
    SDL_Texture *grid_tex;     /* the model view's maps (figure_grid_texture) */
    unsigned long grid_key[6]; /* what grid_tex shows */
    SDL_Texture *edit_tex;     /* the weight editor's cells, when they are tiny */
    int edit_tw, edit_th;
    unsigned long edit_key[5]; /* what edit_tex shows */
};

/* The colours of s's theme. */
static inline const Theme *theme(const ViewState *s)
{
    return theme_colors(s->dark);
}

/* v scaled by the interface size, in whole pixels */
static inline int S(const ViewState *s, float v)
{
    return (int)lroundf(v * s->scale);
}

static inline void set_color(SDL_Renderer *r, SDL_Color c)
{
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, c.a);
}

static inline SDL_Color rgb_color(Rgb c)
{
    SDL_Color o = {c.r, c.g, c.b, 255};
    return o;
}

/* ---- draw.c ---- */

/* Opaque fills skip blending: the software renderer would otherwise blend
 * every pixel of every panel. */
void fill(SDL_Renderer *r, SDL_Rect rc, SDL_Color c);
/* Bars of x[0..n): one per dimension in area, centred on a zero line, of
 * height x / amax of the half; pos and neg colour the signs (step.c). */
void draw_bars(SDL_Renderer *r, const float *x, int n, SDL_Rect area, float amax, SDL_Color pos, SDL_Color neg);
/* Rectangle outline of thickness t pixels, drawn inside rc. */
void outline(SDL_Renderer *r, SDL_Rect rc, SDL_Color c, int t);
/* A thick anti-aliased polyline of n points (at most 64), w pixels wide. */
void thick_polyline(SDL_Renderer *r, const vec2 *pts, int n, float w, SDL_Color c);
/* Text cut to max_w pixels with an ellipsis. */
void draw_text_fit(View *v, int px, SDL_Color c, const char *t, int x, int y, int max_w);
/* Width of the widest of n labels at px. */
int max_label_width(View *v, const char *const *labels, int n, int px);

/* ---- heatmap.c ---- */

/* The heatmap figure of s->map fitted into area (cells at most max_cell
 * pixels, zoomed and panned), measured with the view's fonts. */
void heat_figure(View *v, const ViewState *s, SDL_Rect area, float max_cell, Figure *f);
/* The figure options of a window's map in area: s's scale, zoom, pan,
 * query, key and colours. */
void window_figure_options(const ViewState *s, SDL_Rect area, float max_cell, FigureOptions *o);
/* Draw it: the map's texture (uploaded when the numbers change), labels,
 * outlines, colour bar. */
void draw_heatmap(View *v, SDL_Renderer *r, const ViewState *s, const Figure *f);
/* The shown map's colour scale, scanned once per map. */
ColorScale heat_scale(View *v, const ViewState *s);

/* ---- heads.c ---- */

/* Room for the model view's marks and labels in o (grid_score set). */
void heads_grid_options(View *v, const ViewState *s, FigureOptions *o);
/* Each map's score beside it; in a sorted grid its layer and head above. */
void draw_grid_marks(View *v, SDL_Renderer *r, const ViewState *s, const FigureGrid *g);
/* Heads that share a key-value head (g->kv_group of them, in order): a
 * labelled bracket over each group's columns of the model view (not when
 * sorted), in the band the layout left above the headers. */
void draw_kv_groups(View *v, SDL_Renderer *r, const ViewState *s, const FigureGrid *g);
/* The model view's and overview's heads switched off (s->ablated), crossed out. */
void draw_ablated(View *v, SDL_Renderer *r, const ViewState *s, const FigureGrid *g);
/* The score overview (s->score_map) fitted into area, and drawn. */
void layout_score_map(View *v, const ViewState *s, SDL_Rect area, Figure *f);
void draw_score_map(View *v, SDL_Renderer *r, const ViewState *s, const Figure *f);

/* ---- colorbar.c ---- */

/* The colour map as a gradient texture, top = high (cached per map). */
SDL_Texture *bar_texture(View *v, ColormapId id);

/* ---- lines.c ---- */

/* Line diagram geometry shared by the window and the export. */
typedef struct LinesGeom {
    int xl, xr;          /* right edge of query labels, left edge of key labels */
    int x0, x1;          /* line ends */
    int y0;              /* centre of the first visible row */
    float step;
    int first, count;
    int edges;           /* not every token fits: a row above and below the
                            visible ones where lines to the others end, named */
    int right;           /* the area's right edge (the edge rows' names) */
    int px;
    int room;            /* the most a side's label may take (wider: a
                            special token's short form, else cut) */
} LinesGeom;

/* Fit the diagram into area: rows at least a line apart, scrolled by
 * s->lines_scroll when they do not all fit. */
void lines_geometry(View *v, const ViewState *s, SDL_Rect area, LinesGeom *g);
/* The line diagram's area in its panel: under the title and, with every
 * head shown, under the heads' swatches (into sw, VIEW_HEADS_MAX of them,
 * when not NULL). */
SDL_Rect lines_area(View *v, const ViewState *s, SDL_Rect panel, SDL_Rect *sw);
/* The swatches (s->line_heads set) at their places sw. */
void draw_head_swatches(View *v, SDL_Renderer *r, const ViewState *s, const SDL_Rect *sw);
void draw_lines(View *v, SDL_Renderer *r, const ViewState *s, const LinesGeom *g);

/* ---- editor.c ---- */

/* The editor's tab and button labels (the layout measures them); the
 * tabs' short forms where the long ones do not fit on one row. */
extern const char *const edit_tab_label[EDIT_COUNT];
extern const char *const edit_tab_short[EDIT_COUNT];
/* The editor's texts (labels, the line under the tabs, values): the
 * interface's readable size, as the help's smallest. */
#define EDIT_TEXT_PX(s) S(s, 12)
/* Column j's label of the edited matrix ("q3", or a dimension's name cut
 * to 4 letters). */
void edit_col_name(const ViewState *s, int j, char *buf, size_t n);
/* The weight editor's matrix (rows × cols, row-major): the table's vectors
 * E for the X tab, else the shown head's Wq/Wk/Wv, Wo, or the additive v
 * (vb in basic mode). */
const float *edit_matrix(const ViewState *s, int *rows, int *cols);
extern const char *const edit_button_label[EBTN_COUNT];
void draw_editor(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);

/* ---- step.c ---- */

void draw_step(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);
/* teach.c: the target outlined over the heatmap figure f; the loss panel
 * in the step view's place */
void draw_teach_target(SDL_Renderer *r, const ViewState *s, const Figure *f);
void draw_teach_panel(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);
/* teach.c: where the teach panel's buttons go (in the step view's place) */
void teach_layout(View *v, const ViewState *s, ViewLayout *l);
extern const char *const teach_button_label[TBTN_COUNT];

/* ---- chrome.c ---- */

void draw_sentence_bar(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);
/* A control's label: full ("[M] causal mask") or compact ("[M] mask"). */
const char *control_label(const ViewState *s, int c, int compact);
/* Font size of the controls (and the editor's tabs). */
int ctl_px(const ViewState *s);
void draw_controls(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);
void draw_status(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);
/* t word-wrapped into at most max_lines lines of max_w pixels (the last
 * one cut with "…" when more would be needed); returns the lines. */
int wrap_lines(View *v, int px, const char *t, int max_w, char out[][400], int max_lines);
/* The side area's tabs when panels share it (layout_side_tabs). */
void draw_side_tabs(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);
/* A SidePanel's tab label in this mode ("Lines", "Weights", "Loss" ...). */
const char *side_tab_label(const ViewState *s, int p);
/* A panel's title in its top-left corner. */
void draw_panel_title(View *v, SDL_Renderer *r, const ViewState *s, SDL_Rect p, const char *t);
/* The help overlay's box and number of pages (s->help shown). */
void help_layout(View *v, const ViewState *s, ViewLayout *l);
void draw_help(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);
/* Query, key and the numbers of the hovered cell, next to the mouse. */
void draw_tooltip(View *v, SDL_Renderer *r, const ViewState *s, const ViewLayout *l);

#endif
