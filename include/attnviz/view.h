/* The view: layout (pure geometry and hit testing), fonts and a text cache,
 * and drawing of each panel through an SDL_Renderer it is given. The same
 * functions draw the window, the PNG exports and the render tests.
 * The view reads a ViewState (what to show) and never changes the model. */
#ifndef ATTNVIZ_VIEW_H
#define ATTNVIZ_VIEW_H

#include <SDL.h>

#include "attnviz/colormap.h"
#include "attnviz/error.h"
#include "attnviz/figure.h"
#include "attnviz/model.h"

/* The controls strip: buttons in order, each a label (and a shorter one
 * for a narrow window), lit when on, greyed when it does not apply now.
 * Whoever shows something fills them (the app: the shown source's
 * controls, then those every source has); a click names the index. */
#define VIEW_CTL_MAX 24
typedef struct ViewCtl {
    char label[64];
    char compact[32];      /* "": the label */
    unsigned char on, off;
} ViewCtl;

/* Teach mode's buttons (over the loss curve): the presets, the current map
 * as the target, clear, run / pause, one step, reset. */
typedef enum TeachButton {
    TBTN_SELF = 0, TBTN_PREVIOUS, TBTN_NEXT, TBTN_FIRST, TBTN_CURRENT, TBTN_CLEAR, TBTN_RUN,
    TBTN_STEP, TBTN_RESET, TBTN_COUNT
} TeachButton;

/* Weight editor tabs. */
/* Weight editor tabs (EDIT_V: the additive score's v; with two sentences
 * EDIT_X shows both sentences' vectors, the second's rows after the first's). */
typedef enum EditTarget { EDIT_WQ = 0, EDIT_WK, EDIT_WV, EDIT_WO, EDIT_X, EDIT_V, EDIT_COUNT } EditTarget;

/* Editor actions (buttons under the grid). */
typedef enum EditButton {
    EBTN_IDENTITY = 0, EBTN_ZERO, EBTN_RANDOM, EBTN_SWAP, EBTN_RESET, EBTN_COUNT
} EditButton;

/* One line of the help overlay: the keys and what they do. */
typedef struct ViewHelpLine {
    const char *keys, *what;
} ViewHelpLine;

/* The panels beside the heatmap. When the window (or the interface scale)
 * leaves no room for them side by side they become tabs of one area
 * (Ctrl+Tab or a click switches). */
typedef enum SidePanel { SIDE_LINES, SIDE_EDITOR, SIDE_STEP, SIDE_COUNT } SidePanel;

typedef struct ViewState {
    /* What the map panels (heatmap, line diagram, colour bar, tooltip) draw:
     * plain data (attnmap.h) borrowed from whoever made it.
     * view_state_set_model fills these from a Model; the step view and the
     * weight editor are the only panels that read the Model itself. */
    AttnMap map;           /* the heatmap: the shown matrix */
    AttnMap weights;       /* the line diagram; the tooltip's weight */
    AttnMap scores, logits;/* the tooltip's other numbers (v NULL: none) */
    unsigned long maps_gen;/* changes whenever the maps' numbers change */
    const unsigned char *q_unknown; /* rows whose token is not in the table, or NULL */
    const unsigned char *q_special, *k_special; /* special tokens ([CLS], <s> …)
                              among the rows and columns, drawn apart; or NULL */
    char title[1100];      /* a figure's title: the sentence in quotes */
    char facts[400];       /* a figure's facts line */
    AttnConfig cfg;        /* settings the controls and the status bar show */
    int d, dk, heads, n_unknown;
    const TokenList *toks; /* the tokens' places in the sentence, or NULL */
    const Model *m;        /* the Model whose weights the editor and whose
                              steps the step view show; NULL: those panels
                              say no_model instead */
    const TokenList *ktoks;/* the second sentence's tokens, or NULL */
    const unsigned char *k_unknown; /* its words not in the table, or NULL */
    int keys_bar;          /* 1: the second bar (a second text) is there */
    int stale;             /* 1: the maps are older than the text (dimmed) */
    const char *step_label;/* the step view's tab when it holds a source's
                              own text (NULL: "Step view") */
    const char *bar_label; /* the first bar's label ("Sentence", "File") */
    const char *keys_label, *keys_placeholder; /* the second bar's (NULL: "Keys", the
                                                 cross-attention's keys) */
    const char *panel_title; /* the heatmap panel's title; NULL: the
                              formula of the matrix shown (from cfg) */
    char status_facts[400];/* the status bar's facts (the query's name follows) */
    const AttnMaps *grid;  /* non-NULL: the model view of these maps instead
                              of the heatmap and the line diagram */
    int grid_layer, grid_head; /* its selected map */
    const AttnMaps *overview; /* non-NULL: every map, small, in the editor's
                              room beside the heatmap (the hovered cell's row
                              and column marked in each) */
    /* Head roles (issue 26), on the model view's maps (grid_score NULL:
     * no marks): each map's chosen score (L×H, map (l, h) at l·H + h; NaN
     * none), its name and the length of a full bar (1 for scores in
     * [0, 1], else the largest); grid_order non-NULL: the grid sorted,
     * slot p showing map grid_order[p] (each map then labelled with its
     * layer and head). score_map non-NULL: the score overview (an L × H
     * heatmap, rows layers, columns heads; none masked) in the model
     * view's room instead of the maps, coloured as score_cscale says, its
     * colour bar's caption score_caption. */
    const double *grid_score;
    const char *grid_score_name;
    double grid_score_full;
    const int *grid_order;
    const AttnMap *score_map;
    ColorScaleMode score_cscale;
    const char *score_caption;
    /* Every head of the layer in the line diagram (line_heads non-NULL:
     * 1 × H maps over weights' tokens), each in view_head_color(h); head_on
     * (H flags) says which are drawn. */
    const AttnMaps *line_heads;
    const unsigned char *head_on;
    const char *no_model;  /* without a Model: what the editor and step view
                              say instead (NULL: nothing drawn there) */
    const float *inside_q, *inside_k; /* with no_model: a head's query and key
                              (inside_d floats each), drawn as bars beside the
                              step view's text with their elementwise product */
    int inside_d;          /* 0: no vectors */
    const char *inside_caption; /* with no_model: what the step view says of
                              the head's query → key (over its bars), or NULL */
    int kv_group;          /* > 1: that many heads in a row share a key-value
                              head (grouped-query attention): the model view
                              brackets each group */
    const unsigned char *ablated; /* L × H of the model view (grid's L and H):
                              1 for a head switched off (issue 37), crossed
                              out in the model view and the overview; NULL: none */
    ViewCtl ctl[VIEW_CTL_MAX]; /* the controls strip */
    int n_ctl;
    int cross;             /* queries and keys from two texts */
    int head;              /* 0..h-1, or MODEL_HEAD_AVG */
    ModelMatrix matrix;    /* weights, scores or logits */
    ColormapId cmap;       /* sequential map for weights */
    ColorScaleMode cscale; /* how weights are coloured (fixed 0–1, the
                              map's max, each row's max); not scores */
    int query;             /* selected query row, or -1 */
    int key;               /* focused key column, or -1 */
    int hover_i, hover_j;  /* hovered cell, or -1 */
    int mouse_x, mouse_y;
    int all_lines;         /* draw every query's lines faintly */
    int lines_top;         /* only each query's strongest lines: this many
                              (0: every line); ties at the cut are kept */
    int dark;              /* dark theme (window); light for paper */
    float scale;           /* UI scale, 1 = 100% */
    float zoom;            /* heatmap zoom, 1 = fit */
    int pan_row, pan_col;  /* first visible row/column when zoomed */
    int lines_scroll;      /* first visible row of the line diagram */

    /* The compare view (issue 14): with cmp_ref non-NULL the heatmap area
     * shows the pinned reference, the current map (map) and their
     * difference (current − reference, diverging, centred on 0) side by
     * side, each a figure with its label; the PNG export of the heatmap
     * draws the three. */
    const AttnMap *cmp_ref;   /* the pinned map, or NULL: no comparison */
    const AttnMap *cmp_diff;  /* current − reference (ATTN_MAP_DIFFERENCE) */
    const char *cmp_ref_label;/* "reference: dot, head 1" */
    const char *cmp_cur_label;/* "current: cosine, head 1" */
    const char *cmp_what;     /* what differs: "dot vs cosine", "edited Wq" */
    const int *cmp_rows;      /* the reference's row of each current row (aligned
                                 by token or by position), or NULL: the same */

    /* teach mode (issue 15): the target drawn over the heatmap as outlined
     * cells, and the loss curve in the step view's place */
    int teach;                /* teach mode is on */
    const float *teach_target;/* teach_Tq × teach_Tk, rows summing to 1 or
                                 0, or NULL (drawn when the map's size) */
    int teach_Tq, teach_Tk;
    const double *teach_loss; /* the curve: the loss before, then after
                                 each step (n_teach_loss points) */
    long n_teach_loss, teach_steps;
    int teach_running;
    double teach_pace;        /* the pace's multiplier, 0 full speed */
    const char *teach_info;   /* the settings: optimiser, lr, what trains */

    /* window-only parts (ignored by the panel exports) */
    const char *sentence;  /* the text in the sentence bar */
    int sentence_focus;
    int sentence_all;      /* the focused bar's whole text is selected */
    int cursor;            /* byte offset of the text cursor */
    const char *keys_sentence; /* the second sentence bar (cross-attention:
                              keys and values); "" means self-attention */
    int keys_focus;        /* the keyboard is in the second bar (its text
                              cursor is keys_cursor); sentence_focus is
                              then set too: it says a bar has the keyboard */
    int keys_cursor;
    const char *preedit;   /* text an input method is composing, drawn
                              underlined at the cursor, or NULL */
    const char *prompt;    /* non-NULL: the bar asks for a file name */
    const char *status;    /* message, or NULL */
    int status_error;
    int help;              /* help overlay shown */
    int help_page;         /* its page when it does not fit at a readable size
                              (the view clamps it to the pages there are) */
    const ViewHelpLine *help_lines; /* its lines, made by the app from its
                              key table (the view knows no keys) */
    int n_help_lines;
    int step_reveal;       /* steps shown in the step view (1..4) */
    SidePanel side;        /* the tab shown when panels share an area */
    EditTarget edit_target;
    int edit_row, edit_col;/* editor cursor */
    int edit_focus;        /* keyboard goes to the editor */
    const char *edit_text; /* typing an exact value, or NULL */
    uint64_t seed_shown;   /* last random seed, 0 = none */
    int has_seed_shown;
} ViewState;

/* The most heads with a swatch of their own in the line diagram. */
#define VIEW_HEADS_MAX 64

typedef struct ViewLayout {
    int w, h;
    SDL_Rect sentence, keys_bar, controls, heatmap, lines, editor, step, status;
    SDL_Rect ctl[VIEW_CTL_MAX];   /* control buttons (ViewState.ctl) */
    int controls_compact;         /* 1: the short labels are shown */
    SDL_Rect grid;                /* visible heatmap cells */
    SDL_Rect colorbar;
    float cell;                   /* heatmap cell size in pixels */
    int rows_vis, cols_vis;       /* visible rows/columns */
    int row0, col0;               /* first visible row/column */
    SDL_Rect lines_left, lines_right; /* token columns of the line diagram */
    float line_step;              /* pixels between tokens in the diagram */
    int lines0, lines_vis;        /* first and count of visible tokens */
    SDL_Rect edit_tab[EDIT_COUNT];
    SDL_Rect edit_grid;           /* editor cells */
    float edit_cell_w, edit_cell_h;
    int edit_rows, edit_cols;
    int edit_col_labels;          /* the editor's column labels: 0 none (the
                                     line under the tabs names the cursor's),
                                     1 flat, 2 upright */
    SDL_Rect edit_btn[EBTN_COUNT];
    SDL_Rect teach_btn[TBTN_COUNT]; /* teach mode's buttons, w = 0 when off */
    SDL_Rect side_tab[SIDE_COUNT];  /* the shared area's tabs (w = 0: that
                                     panel has its own place, or none) */
    int side_shown;               /* the SidePanel shown there, or -1: no
                                     panels share an area */
    SDL_Rect step_text, step_bars;/* the step view's text and its bar groups
                                     (beside each other, or stacked in a
                                     tall panel) */
    Figure heat;                  /* the heatmap panel's figure */
    FigureGrid grid_fig;          /* the model view's grid, when shown */
    int overview_layers, overview_heads; /* the side panel's every layer and
                                     head: how many of them (the first) it
                                     holds whole */
    Figure score_fig;             /* the score overview, when shown */
    SDL_Rect head_swatch[VIEW_HEADS_MAX]; /* the line diagram's head colours
                                     (every head shown), w = 0 when none */
    Figure cmp[3];                /* the compare view: reference, current,
                                     difference (when cmp_ref is set) */
    SDL_Rect help_box;            /* the help overlay, when shown: every
                                     text of it inside */
    int help_pages;               /* its pages (PageDown / PageUp) */
} ViewLayout;

typedef struct View View;

/* The fonts a view draws with, found and read by the app (fonts.h): the
 * view opens them with SDL_ttf and reads no file itself. Borrowed by every
 * View, render and text cache made with them. */
typedef struct ViewFonts {
    const char *path;  /* the main font's file: named in errors, and opened
                          by SDL_ttf when data is NULL */
    const void *data;  /* the main font file's bytes (FreeType parses them
                          at every size), or NULL */
    size_t size;
    /* For a character cp the main font lacks: the file (path, n bytes with
     * its NUL) and face index of a font that has it; 0, or -1 when none
     * has. Asked while drawing, once a character; NULL: no fallbacks. */
    int (*fallback)(void *ctx, unsigned cp, char *path, size_t n, long *index);
    void *ctx;
} ViewFonts;

/* On error *err names the problem (a font SDL_ttf cannot open). */
View *view_create(SDL_Renderer *r, const ViewFonts *fonts, AttnErr *err);
void view_destroy(View *v);
/* Draw through another renderer from now on, keeping the fonts. */
void view_set_renderer(View *v, SDL_Renderer *r);
/* A fallback font became available (a page fetches them when first
 * needed): the characters no font had are looked up again and the text
 * drawn and measured again. */
void view_fonts_changed(View *v);
/* Pixel size of the UTF-8 text at the view's body size. */

/* Geometry of the whole window. */
void view_layout(View *v, const ViewState *s, int w, int h, ViewLayout *out);
/* Heatmap cell under (x, y): returns 1 and fills i, j, or 0. */
int view_hit_cell(const ViewLayout *l, int x, int y, int *i, int *j);
/* Row label under (x, y) (left of the grid): 1 and i, or 0. */
int view_hit_row_label(const ViewLayout *l, int x, int y, int *i);
/* Token in the line diagram: 1, i and side (0 query, 1 key), or 0. */
int view_hit_line_token(const ViewLayout *l, int x, int y, int *i, int *side);
/* Map of the model view under (x, y): 1 and its layer and head, or 0. */
int view_hit_grid(const ViewLayout *l, int x, int y, int *layer, int *head);
/* Cell of the score overview under (x, y): 1 and its layer and head, or 0. */
int view_hit_score_map(const ViewLayout *l, int x, int y, int *layer, int *head);
/* The line diagram's head swatch under (x, y): the head, or -1. */
int view_hit_head_swatch(const ViewLayout *l, int x, int y);
/* Head h's colour: the line diagram's lines and swatches, the model view's
 * head labels (one palette, distinct for the first 12, then round again). */
SDL_Color view_head_color(int h, int dark);
/* Teach mode's button under (x, y): its TeachButton, or -1. */
int view_hit_teach_button(const ViewLayout *l, int x, int y);
/* A tab of the shared side area: its SidePanel, or -1. */
int view_hit_side_tab(const ViewLayout *l, int x, int y);
/* Control button: its index in ViewState.ctl, or -1. */
int view_hit_control(const ViewLayout *l, int x, int y);
/* Editor cell: 1 and row/col, tab: 2 and target in *row, button: 3 and
 * EditButton in *row, else 0. */
int view_hit_editor(const ViewLayout *l, int x, int y, int *row, int *col);
/* Byte offset in the sentence nearest to x (for clicks in the bar). */
int view_sentence_offset(View *v, const ViewState *s, const ViewLayout *l, int x);
/* The same in the second sentence bar (keys_sentence). */
int view_keys_offset(View *v, const ViewState *s, const ViewLayout *l, int x);
/* The text cursor's rectangle in the bar that has the keyboard (the second
 * with keys_focus; after any pre-edit text): where an input method shows
 * its candidates. */
void view_sentence_caret(View *v, const ViewState *s, const ViewLayout *l, SDL_Rect *out);

/* Draw the whole window. */
void view_draw_window(View *v, SDL_Renderer *r, const ViewState *s,
                      const ViewLayout *l);

/* A standalone panel for export: PANEL_HEATMAP (title, labels, colour bar),
 * PANEL_LINES, PANEL_BOTH, at scale, in s->dark's theme. Size first: */
typedef enum ViewPanel { PANEL_HEATMAP = 0, PANEL_LINES, PANEL_BOTH } ViewPanel;
void view_panel_size(View *v, const ViewState *s, ViewPanel p, int *w, int *h);
void view_draw_panel(View *v, SDL_Renderer *r, const ViewState *s, ViewPanel p);

/* Render a panel (or, with whole_window, the window at w×h) offscreen on a
 * software renderer into a new RGB888 surface. Caller frees it. */
SDL_Surface *view_render_panel(const ViewFonts *fonts, const ViewState *s,
                               ViewPanel p, AttnErr *err);
SDL_Surface *view_render_window(const ViewFonts *fonts, const ViewState *s,
                                int w, int h, AttnErr *err);

/* A figure (figure.h) of map drawn offscreen by the software renderer into
 * a new RGB888 surface of the figure's size, in the dark or light theme,
 * with the query row outlined (-1: none). Caller frees it. */
SDL_Surface *view_render_figure(const ViewFonts *fonts, const Figure *f, const AttnMap *map,
                                int dark, int query, AttnErr *err);
/* The same for a grid of maps (figure_grid_layout). */
SDL_Surface *view_render_grid(const ViewFonts *fonts, const FigureGrid *g, const AttnMaps *ms,
                              int dark, AttnErr *err);
/* The model view as an export (Ctrl+E in G): the maps ms laid out by o
 * (an export's options: its natural size at s->scale) with room for s's
 * head roles, and drawn with them as the window draws them: each map's
 * score (s->grid_score, a bar and its number), in a sorted grid
 * (s->grid_order) each map's layer and head, the key-value brackets
 * (s->kv_group), the heads' colours; in s->dark's theme. Caller frees it.
 * The layout drawn goes to *layout unless NULL (svg_write_grid_marked
 * writes the same figure as SVG from it). */
SDL_Surface *view_render_model_grid(const ViewFonts *fonts, const ViewState *s, const AttnMaps *ms,
                                    const FigureOptions *o, FigureGrid *layout, AttnErr *err);

/* The compare view's PNG (s->cmp_ref set): the reference, current and
 * difference figures at their export size side by side, figure k's left
 * edge at x[k] and top at 0 (no difference map, when the tokens differ:
 * f[2].w = 0, the two maps alone); the reference's facts line ref_facts.
 * view_render_compare draws them offscreen into a new RGB888 surface. */
void view_compare_export_layout(const ViewState *s, const char *ref_facts, Figure f[3], int x[3]);
SDL_Surface *view_render_compare(const ViewFonts *fonts, const ViewState *s, const char *ref_facts,
                                 AttnErr *err);

/* Fill the map panels' data of s from m (NULL: nothing to show) for s's
 * head and matrix: call it again after changing either, or m. Makes what
 * they show that the forward pass keeps none of (model_prepare). */
void view_state_set_model(ViewState *s, Model *m);

/* Default state for a model: head 0, weights, viridis, query 0 (or the
 * token with most attention on others), light theme, scale 1. */
void view_state_init(ViewState *s, Model *m);

#endif
