/* The two themes' colours, defined once for the window, the PNG and the
 * SVG: dark for the screen, light for paper and bright rooms. No SDL. */
#ifndef ATTNVIZ_THEME_H
#define ATTNVIZ_THEME_H

#include "attnviz/colormap.h"

typedef struct AttnTheme {
    Rgb bg, panel, panel2, text, dim, accent, border, mask, error, pos, neg;
} AttnTheme;

const AttnTheme *theme_get(int dark);

#endif
