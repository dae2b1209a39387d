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

Rgb theme_head_color(int h, int dark)
{
    static const unsigned char pal[12][3] = {{0x1f, 0x77, 0xb4}, {0xff, 0x7f, 0x0e}, {0x2c, 0xa0, 0x2c},
                                             {0xd6, 0x27, 0x28}, {0x94, 0x67, 0xbd}, {0x8c, 0x56, 0x4b},
                                             {0xe3, 0x77, 0xc2}, {0x7f, 0x7f, 0x7f}, {0xbc, 0xbd, 0x22},
                                             {0x17, 0xbe, 0xcf}, {0xe7, 0xba, 0x52}, {0x52, 0x54, 0xa3}};
    const unsigned char *p = pal[(h % 12 + 12) % 12];
    Rgb c = {p[0], p[1], p[2]};
    if (dark) {
        c.r = (unsigned char)(c.r + (255 - c.r) / 3);
        c.g = (unsigned char)(c.g + (255 - c.g) / 3);
        c.b = (unsigned char)(c.b + (255 - c.b) / 3);
    }
    return c;
}
