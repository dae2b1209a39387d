/* Render tests for the fonts (src/view/text.c, with the fonts that
 * src/app/fonts.c finds), issue 16 item 11: text the main font (DejaVu
 * Sans) cannot draw, "我很高兴", is drawn with a fallback font found
 * through fontconfig, not as the main font's missing-glyph boxes
 * ("tofu"): each character's ink differs from the box and from the other
 * characters', ideographs are one em wide, Latin and CJK runs share one
 * baseline and their widths add up; text the main font draws is drawn as
 * before, pixel for pixel. Skipped when the machine has no CJK font
 * (Debian: fonts-noto-cjk). Run with SDL_VIDEODRIVER=dummy. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <SDL_ttf.h>
#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/view/text.h"
#include "test_util.h"

#define PX 40
#define W 640
#define H 80

/* fontconfig keeps part of its configuration until FcFini (see test_view.c) */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:FcInitLoadConfigAndFonts\nleak:libfontconfig.so\n";
}

/* An ink mask: 1 where a pixel is inked, cropped to the ink's bounding box. */
typedef struct {
    int w, h, x0, y0, y1; /* size; where the box was; its last row */
    unsigned char *m;
} Ink;

static Ink ink_of(SDL_Surface *s, int from_alpha)
{
    Ink k = {0, 0, s->w, s->h, -1, NULL};
    int x1 = -1;
    SDL_LockSurface(s);
    for (int pass = 0; pass < 2; pass++) {
        for (int y = 0; y < s->h; y++)
            for (int x = 0; x < s->w; x++) {
                Uint32 p = ((Uint32 *)((Uint8 *)s->pixels + y * s->pitch))[x];
                Uint8 r, g, b, a;
                SDL_GetRGBA(p, s->format, &r, &g, &b, &a);
                if ((from_alpha ? a : r) <= 96)
                    continue;
                if (pass == 0) {
                    k.x0 = x < k.x0 ? x : k.x0;
                    k.y0 = y < k.y0 ? y : k.y0;
                    x1 = x > x1 ? x : x1;
                    k.y1 = y > k.y1 ? y : k.y1;
                } else {
                    k.m[(y - k.y0) * k.w + (x - k.x0)] = 1;
                }
            }
        if (pass == 0) {
            if (x1 < 0)
                break;
            k.w = x1 - k.x0 + 1;
            k.h = k.y1 - k.y0 + 1;
            k.m = calloc((size_t)(k.w * k.h), 1);
            assert_non_null(k.m);
        }
    }
    SDL_UnlockSurface(s);
    return k;
}

/* Share of differing pixels of two masks (1 when their sizes differ). */
static double ink_diff(const Ink *a, const Ink *b)
{
    if (a->w != b->w || a->h != b->h)
        return 1.0;
    int d = 0;
    for (int i = 0; i < a->w * a->h; i++)
        d += a->m[i] != b->m[i];
    return (double)d / (a->w * a->h);
}

typedef struct {
    SDL_Surface *surf;
    SDL_Renderer *r;
    TextCache *t;
} Canvas;

static void canvas_open(Canvas *c)
{
    AttnErr err;
    memset(&err, 0, sizeof err);
    c->surf = SDL_CreateRGBSurfaceWithFormat(0, W, H, 32, SDL_PIXELFORMAT_ARGB8888);
    assert_non_null(c->surf);
    c->r = SDL_CreateSoftwareRenderer(c->surf);
    assert_non_null(c->r);
    c->t = text_create(c->r, test_fonts(), &err);
    if (!c->t)
        fprintf(stderr, "text_create: %s\n", err.msg);
    assert_non_null(c->t);
}

static void canvas_close(Canvas *c)
{
    text_destroy(c->t);
    SDL_DestroyRenderer(c->r);
    SDL_FreeSurface(c->surf);
}

/* s in white on black through the text cache; its ink. */
static Ink draw_ink(Canvas *c, const char *s, int *drawn)
{
    SDL_SetRenderDrawColor(c->r, 0, 0, 0, 255);
    SDL_RenderClear(c->r);
    SDL_Color white = {255, 255, 255, 255};
    int w = text_draw(c->t, PX, white, s, 10, 10, 0, 0.0);
    if (drawn)
        *drawn = w;
    SDL_RenderPresent(c->r);
    return ink_of(c->surf, 0);
}

/* The main font opened directly with SDL_ttf, as the reference. */
static TTF_Font *main_font(void)
{
    char path[4096];
    assert_int_equal(fonts_find_default(path, sizeof path), 0);
    TTF_Font *f = TTF_OpenFont(path, PX);
    assert_non_null(f);
    return f;
}

/* Whether fontconfig knows a font with 我 (U+6211), asked independently of
 * fonts.c (fc-list ':charset=6211'). */
static int have_cjk_font(void)
{
    FcPattern *pat = FcPatternCreate();
    FcCharSet *cs = FcCharSetCreate();
    FcCharSetAddChar(cs, 0x6211);
    FcPatternAddCharSet(pat, FC_CHARSET, cs);
    FcObjectSet *os = FcObjectSetBuild(FC_FILE, (char *)0);
    FcFontSet *set = FcFontList(NULL, pat, os);
    int n = set ? set->nfont : 0;
    if (set)
        FcFontSetDestroy(set);
    FcObjectSetDestroy(os);
    FcCharSetDestroy(cs);
    FcPatternDestroy(pat);
    return n > 0;
}

/* Whether fontconfig knows a font with 🚂 (U+1F682): Debian's
 * fonts-symbola, which make deps installs. */
static int have_symbol_font(void)
{
    FcPattern *pat = FcPatternCreate();
    FcCharSet *cs = FcCharSetCreate();
    FcCharSetAddChar(cs, 0x1F682);
    FcPatternAddCharSet(pat, FC_CHARSET, cs);
    FcObjectSet *os = FcObjectSetBuild(FC_FILE, (char *)0);
    FcFontSet *set = FcFontList(NULL, pat, os);
    int n = set ? set->nfont : 0;
    if (set)
        FcFontSetDestroy(set);
    FcObjectSetDestroy(os);
    FcCharSetDestroy(cs);
    FcPatternDestroy(pat);
    return n > 0;
}

/* cmocka 1.1 has no skip with a message */
#define skip_why(msg)                          \
    do {                                       \
        print_message("skipped: %s\n", msg);   \
        skip();                                \
    } while (0)

static int group_setup(void **state)
{
    (void)state;
    if (test_sdl_dummy() < 0 || (!TTF_WasInit() && TTF_Init() != 0))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    TTF_Quit();
    SDL_Quit();
    return 0;
}

static const char *const HAN[4] = {"\xE6\x88\x91", "\xE5\xBE\x88", "\xE9\xAB\x98",
                                   "\xE5\x85\xB4"}; /* 我 很 高 兴 */

static void test_cjk_not_tofu(void **state)
{
    (void)state;
    if (!have_cjk_font())
        skip_why("no CJK font installed (fc-list :lang=zh is empty; Debian: fonts-noto-cjk)");
    TTF_Font *main = main_font();
    /* the premise: the main font lacks these, so they need the fallback */
    static const Uint32 cp[4] = {0x6211, 0x5F88, 0x9AD8, 0x5174};
    for (int i = 0; i < 4; i++)
        assert_int_equal(TTF_GlyphIsProvided32(main, cp[i]), 0);
    SDL_Color white = {255, 255, 255, 255};
    SDL_Surface *box = TTF_RenderUTF8_Blended(main, HAN[0], white);
    assert_non_null(box);
    Ink tofu = ink_of(box, 1);
    SDL_FreeSurface(box);
    assert_non_null(tofu.m);

    Canvas c;
    canvas_open(&c);
    Ink ink[4];
    for (int i = 0; i < 4; i++) {
        ink[i] = draw_ink(&c, HAN[i], NULL);
        assert_non_null(ink[i].m);
        double d = ink_diff(&ink[i], &tofu);
        if (d < 0.2)
            print_error("%s looks like the main font's box (%.0f%% of pixels differ)\n",
                        HAN[i], 100 * d);
        assert_true(d >= 0.2);
    }
    /* boxes are all alike; four characters are not */
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            assert_true(ink_diff(&ink[i], &ink[j]) >= 0.2);
    /* ideographs are one em wide: four of them, four em (rounded advances) */
    int w, h, lh;
    text_size(c.t, PX, "\xE6\x88\x91\xE5\xBE\x88\xE9\xAB\x98\xE5\x85\xB4", &w, &h);
    lh = text_line_height(c.t, PX);
    if (w < 4 * PX - 4 || w > 4 * PX + 4)
        print_error("width of four ideographs at %d px: %d\n", PX, w);
    assert_true(w >= 4 * PX - 4 && w <= 4 * PX + 4);
    assert_int_equal(h, lh);
    for (int i = 0; i < 4; i++)
        free(ink[i].m);
    free(tofu.m);
    canvas_close(&c);
    TTF_CloseFont(main);
}

/* "I am 高兴": two runs in two fonts, one line; widths add up, the drawn
 * width is the measured one, the ideographs stand on the Latin baseline. */
static void test_mixed_runs(void **state)
{
    (void)state;
    if (!have_cjk_font())
        skip_why("no CJK font installed (Debian: fonts-noto-cjk)");
    Canvas c;
    canvas_open(&c);
    const char *mixed = "I am \xE9\xAB\x98\xE5\x85\xB4";
    int wl, wc, wm, hm, drawn;
    text_size(c.t, PX, "I am ", &wl, NULL);
    text_size(c.t, PX, "\xE9\xAB\x98\xE5\x85\xB4", &wc, NULL);
    text_size(c.t, PX, mixed, &wm, &hm);
    assert_int_equal(wm, wl + wc);
    assert_int_equal(hm, text_line_height(c.t, PX));
    Ink latin = draw_ink(&c, "I", NULL);
    Ink han = draw_ink(&c, "\xE9\xAB\x98", NULL);
    Ink all = draw_ink(&c, mixed, &drawn);
    assert_int_equal(drawn, wm);
    /* the same glyphs alone and in the line: at the same heights */
    assert_int_equal(all.y0, latin.y0 < han.y0 ? latin.y0 : han.y0);
    assert_int_equal(all.y1, latin.y1 > han.y1 ? latin.y1 : han.y1);
    /* 高's foot within 0.15 em of the baseline that I stands on */
    assert_true(abs(han.y1 - latin.y1) <= PX * 15 / 100);
    /* and the ink reaches as far as the measured width says */
    assert_true(all.x0 + all.w >= 10 + wl + wc * 3 / 4);
    free(latin.m);
    free(han.m);
    free(all.m);
    canvas_close(&c);
}

/* Emoji and symbols (issue 28, item 14): 🚂 🙂 🎉 are drawn with the
 * fallback font (fonts-symbola), not as the main font's box: each one's
 * ink differs from the box and from the others'; in a line of Latin text
 * too ("the 🚂 left": wider than "the  left" by the emoji's own width). */
static void test_emoji_not_tofu(void **state)
{
    (void)state;
    if (!have_symbol_font())
        skip_why("no font with U+1F682 installed (Debian: fonts-symbola; make deps installs it)");
    static const char *const EMOJI[3] = {"\xF0\x9F\x9A\x82", "\xF0\x9F\x99\x82", "\xF0\x9F\x8E\x89"};
    static const Uint32 cp[3] = {0x1F682, 0x1F642, 0x1F389};
    TTF_Font *main = main_font();
    for (int i = 0; i < 3; i++)
        assert_int_equal(TTF_GlyphIsProvided32(main, cp[i]), 0);
    SDL_Color white = {255, 255, 255, 255};
    SDL_Surface *box = TTF_RenderUTF8_Blended(main, EMOJI[0], white);
    assert_non_null(box);
    Ink tofu = ink_of(box, 1);
    SDL_FreeSurface(box);
    assert_non_null(tofu.m);
    Canvas c;
    canvas_open(&c);
    Ink ink[3];
    for (int i = 0; i < 3; i++) {
        ink[i] = draw_ink(&c, EMOJI[i], NULL);
        assert_non_null(ink[i].m);
        double d = ink_diff(&ink[i], &tofu);
        if (d < 0.2)
            print_error("%s looks like the main font's box (%.0f%% of pixels differ)\n", EMOJI[i], 100 * d);
        assert_true(d >= 0.2);
    }
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            assert_true(ink_diff(&ink[i], &ink[j]) >= 0.2);
    int w_line, w_gap, w_one;
    text_size(c.t, PX, "the \xF0\x9F\x9A\x82 left", &w_line, NULL);
    text_size(c.t, PX, "the  left", &w_gap, NULL);
    text_size(c.t, PX, EMOJI[0], &w_one, NULL);
    assert_int_equal(w_line, w_gap + w_one);
    assert_true(w_one >= PX / 2);
    for (int i = 0; i < 3; i++)
        free(ink[i].m);
    free(tofu.m);
    canvas_close(&c);
    TTF_CloseFont(main);
}

/* Text the main font has goes the old way: exactly SDL_ttf's rendering with
 * the main font (so every other picture stays as it was), and a character
 * no font has is the main font's box, every time. */
/* A character is drawn with the fallback the app names for it, whatever
 * was drawn before: Symbola has 中 too, and once a snake had opened it
 * first, 中 was drawn in Symbola's ideograph (the first open face that
 * had it), not Noto Sans CJK's as when drawn first. The same ink either
 * way; Symbola's 中 (drawn by SDL_ttf directly) is another. */
static void test_fallback_not_by_open_order(void **state)
{
    (void)state;
    if (!have_cjk_font() || !have_symbol_font()) {
        skip_why("no CJK or no symbol font (Debian: fonts-noto-cjk, fonts-symbola)");
        return;
    }
    const char *zh = "\xE4\xB8\xAD", *snake = "\xF0\x9F\x90\x8D";
    Canvas first, after;
    canvas_open(&first);
    Ink alone = draw_ink(&first, zh, NULL);
    canvas_close(&first);
    canvas_open(&after);
    Ink s = draw_ink(&after, snake, NULL);
    assert_true(s.w > 0);
    Ink later = draw_ink(&after, zh, NULL);
    canvas_close(&after);
    assert_true(alone.w > 0 && later.w > 0);
    assert_true(ink_diff(&alone, &later) == 0.0);
    /* Symbola's own 中, the wrong one, differs: the check can fail */
    TTF_Font *sym = TTF_OpenFont("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf", PX);
    if (sym && TTF_GlyphIsProvided32(sym, 0x4E2D)) {
        SDL_Color white = {255, 255, 255, 255};
        SDL_Surface *g = TTF_RenderUTF8_Blended(sym, zh, white);
        assert_non_null(g);
        Ink wrong = ink_of(g, 1);
        assert_true(ink_diff(&alone, &wrong) > 0.1);
        free(wrong.m);
        SDL_FreeSurface(g);
    }
    if (sym)
        TTF_CloseFont(sym);
    free(alone.m);
    free(s.m);
    free(later.m);
}

static void test_main_font_unchanged(void **state)
{
    (void)state;
    static const char *const s[] = {"the train left", "\xCF\x84 = 1.00 \xC2\xB7 \xE2\x88\x9A",
                                    "\xF4\x8F\xBF\xBD" /* U+10FFFD, private */};
    TTF_Font *main = main_font();
    Canvas c;
    canvas_open(&c);
    SDL_Color white = {255, 255, 255, 255};
    size_t bytes = (size_t)c.surf->pitch * H;
    unsigned char *want = malloc(bytes);
    assert_non_null(want);
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        for (int twice = 0; twice < 2; twice++) {
            /* the reference: SDL_ttf's surface copied by the same renderer */
            SDL_SetRenderDrawColor(c.r, 0, 0, 0, 255);
            SDL_RenderClear(c.r);
            SDL_Surface *ref = TTF_RenderUTF8_Blended(main, s[i], white);
            assert_non_null(ref);
            SDL_Texture *tex = SDL_CreateTextureFromSurface(c.r, ref);
            assert_non_null(tex);
            SDL_Rect dst = {10, 10, ref->w, ref->h};
            SDL_RenderCopy(c.r, tex, NULL, &dst);
            SDL_RenderPresent(c.r);
            SDL_DestroyTexture(tex);
            SDL_FreeSurface(ref);
            memcpy(want, c.surf->pixels, bytes);
            int rw, drawn;
            TTF_SizeUTF8(main, s[i], &rw, NULL);
            Ink got = draw_ink(&c, s[i], &drawn);
            assert_int_equal(drawn, rw);
            assert_non_null(got.m);
            if (memcmp(want, c.surf->pixels, bytes) != 0)
                print_error("[%s] is not drawn as the main font draws it\n", s[i]);
            assert_memory_equal(want, c.surf->pixels, bytes);
            free(got.m);
        }
    }
    free(want);
    canvas_close(&c);
    TTF_CloseFont(main);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cjk_not_tofu),
        cmocka_unit_test(test_mixed_runs),
        cmocka_unit_test(test_emoji_not_tofu),
        cmocka_unit_test(test_fallback_not_by_open_order),
        cmocka_unit_test(test_main_font_unchanged),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
