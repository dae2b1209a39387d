/* The theme colours (theme.h): one table for every back end. */
#include "attnviz/theme.h"

static const AttnTheme dark_theme = {
    {20, 22, 26}, {30, 33, 40}, {37, 41, 50}, {230, 230, 230}, {150, 156, 168},
    {255, 179, 0}, {62, 67, 80}, {74, 76, 86}, {255, 107, 107}, {110, 170, 230},
    {240, 120, 100}};
static const AttnTheme light_theme = {
    {255, 255, 255}, {244, 245, 247}, {232, 234, 238}, {26, 26, 26}, {90, 98, 112},
    {200, 110, 0}, {200, 204, 212}, {214, 216, 222}, {200, 40, 40}, {40, 110, 190},
    {200, 70, 50}};

const AttnTheme *theme_get(int dark)
{
    return dark ? &dark_theme : &light_theme;
}
