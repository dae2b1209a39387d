/* The two themes' colours, defined once for the window, the PNG and the
 * SVG: dark for the screen, light for paper and bright rooms. No SDL. */
#ifndef ATTNVIZ_THEME_H
#define ATTNVIZ_THEME_H

#include "attnviz/colormap.h"

typedef struct AttnTheme {
    Rgb bg, panel, panel2, text, dim, accent, border, mask, error, pos, neg;
} AttnTheme;

const AttnTheme *theme_get(int dark);
/* Head h's colour (the line diagram's, the model view's headers): d3's
 * category10 (BertViz's head colours), then gold and indigo, twelve heads
 * apart; on the dark theme a third of the way to white. */
Rgb theme_head_color(int h, int dark);

#endif
