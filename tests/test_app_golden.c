/* Pixel golden of whole windows drawn by the application (app_draw on the
 * offscreen 1280x800 software renderer), for the sentence and for an
 * attention file: written before the sources redesign (issue 24), which
 * changed one pixel only where it meant to (the file's strip gained [V]
 * compare, its help lists only the keys a file takes); the sentence's
 * re-recorded when the weight editor's texts became the readable size
 * (issue 28, item 11; the frames looked at); issue 26 changed the
 * model view (each map's score beside it, the heads' colours) and the
 * help (the head roles' keys) on purpose; issue 36 the file's help (its Ctrl+X row:
 * an encoder-decoder's .npz groups; the frame looked at) and its Ctrl+E row (the
 * CSV beside a map's PNG; looked at).
 * Each frame's FNV-1a hash over R, G, B is compared
 * with the table; on a change the frame is written to
 * build/test-out/appgolden-NAME.png. ATTNVIZ_GOLDEN_PRINT=1 prints the table.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include "attnviz/png.h"
#include "test_app_util.h"

#define LAYERS "tests/fixtures/attention/torch_layers.npz"
#define CROSS "tests/fixtures/attention/torch_cross.npz"

typedef struct Golden {
    const char *name;
    uint64_t hash;
} Golden;

static const Golden expected[] = {
    {"sentence-default", 0x5b9cc251c2042455ULL},
    {"sentence-heads-causal", 0x8bbbf32aaae70b73ULL},
    {"sentence-cross-compare", 0xb3fc550d72e3d697ULL},
    {"file-head", 0x7566d2055bd563b0ULL},
    {"file-layer2-head3-hover", 0x70d723411366c63dULL},
    {"file-grid", 0x0fed244740e5e8d4ULL},
    {"file-rollout-help", 0x749b678b406d1b64ULL},
    {"file-cross", 0x32ed8a24e09b2bc6ULL},
};

static int changed;

static uint64_t frame_hash(SDL_Surface *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int y = 0; y < s->h; y++) {
        const Uint32 *row = (const Uint32 *)((const Uint8 *)s->pixels + (size_t)y * s->pitch);
        for (int x = 0; x < s->w; x++) {
            uint8_t rgb[3] = {(uint8_t)(row[x] >> 16), (uint8_t)(row[x] >> 8), (uint8_t)row[x]};
            for (int k = 0; k < 3; k++)
                h = (h ^ rgb[k]) * 0x100000001b3ULL;
        }
    }
    return h;
}

/* Draw the state as the window does and compare the frame's hash. */
static void frame(Fix *f, const char *name)
{
    app_draw(f->a, f->r);
    SDL_RenderPresent(f->r);
    uint64_t h = frame_hash(f->surf);
    const Golden *g = NULL;
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; k++)
        if (!strcmp(expected[k].name, name))
            g = &expected[k];
    assert_non_null(g);
    if (getenv("ATTNVIZ_GOLDEN_PRINT")) {
        printf("    {\"%s\", 0x%016llxULL},\n", name, (unsigned long long)h);
        return;
    }
    if (h != g->hash) {
        char path[256];
        AttnErr err = {0};
        mkdir("build", 0755);
        mkdir("build/test-out", 0755);
        snprintf(path, sizeof path, "build/test-out/appgolden-%s.png", name);
        SDL_LockSurface(f->surf);
        png_write(path, f->surf->w, f->surf->h, f->surf->pixels, f->surf->pitch, &err);
        SDL_UnlockSurface(f->surf);
        fprintf(stderr, "%s: pixels changed (0x%016llx, expected 0x%016llx); see %s\n", name,
                (unsigned long long)h, (unsigned long long)g->hash, path);
        changed++;
    }
}

static void test_sentence_windows(void **state)
{
    Fix *f = *state;
    changed = 0;
    frame(f, "sentence-default");
    key(f, SDLK_RIGHTBRACKET, 0); /* two heads */
    key(f, SDLK_m, 0);            /* the causal mask */
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    motion(f, 400, 400, 0);
    frame(f, "sentence-heads-causal");
    app_set_keys(f->a, "a train at the station");
    key(f, SDLK_v, 0); /* pin */
    key(f, SDLK_s, 0); /* unscaled: the difference */
    frame(f, "sentence-cross-compare");
    assert_int_equal(changed, 0);
}

static void test_file_windows(void **state)
{
    Fix *f = *state;
    changed = 0;
    assert_int_equal(open_now(f->a, LAYERS), 0);
    frame(f, "file-head");
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_DOWN, 0);
    motion(f, 300, 350, 0);
    frame(f, "file-layer2-head3-hover");
    key(f, SDLK_g, 0);
    key(f, SDLK_RIGHT, 0);
    motion(f, 500, 300, 0);
    frame(f, "file-grid");
    key(f, SDLK_g, 0);
    key(f, SDLK_o, 0);
    key(f, SDLK_F1, 0);
    frame(f, "file-rollout-help");
    key(f, SDLK_F1, 0);
    assert_int_equal(open_now(f->a, CROSS), 0);
    frame(f, "file-cross");
    assert_int_equal(changed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sentence_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_windows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
