/* Pixel golden of the view: a guard for restructurings, which must not
 * change a pixel. First recorded before src/view/view.c was split into one
 * file per panel (issue 12, point 3; the split changed none); re-recorded
 * once, on purpose, when the heatmap became the shared figure layout (axis
 * titles, colour bar caption and masked legend, the facts line of the SVG;
 * the images were looked at), and the windows again when the weight
 * editor's texts became the readable size (issue 28, item 11: labels,
 * values and the line under the tabs at 12 px, not 10-11; short tabs and
 * upright or no column labels where they do not fit; looked at); the help
 * frame when Ctrl+E's row came to name the CSV (issue 36; looked at).
 * Change them only for a change meant to be seen.
 *
 * Windows (view_render_window) and export panels (view_render_panel) are
 * drawn offscreen by the software renderer, in scenes that reach every part
 * of the view (sentence bar with pre-edit text and unknown words, controls
 * full and compact, heatmap zoomed and with the causal hatch, line diagram
 * with all queries' lines, weight editor cell by cell and as one texture, step
 * view fully and partly revealed, status bar, help overlay, tooltip, the
 * three export panels), and each image's FNV-1a hash over its R, G, B bytes
 * is compared with the one recorded below. Every
 * image is written to build/test-out/golden-NAME.png, and every hash printed
 * (ATTNVIZ_GOLDEN_PRINT=1 prints the table to paste below).
 * Run from the repository root with SDL_VIDEODRIVER=dummy. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnviz/app.h"
#include "attnviz/app_state.h"
#include "attnviz/input.h"
#include "attnviz/model.h"
#include "attnviz/source.h"
#include "attnviz/view.h"

#include "test_util.h"

#define SENTENCE "the train left the station on time"

/* Under ASan: fontconfig's own leak in FcInit (see tests/test_view.c). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:FcInitLoadConfigAndFonts\nleak:libfontconfig.so\n";
}

static EmbedTable *table;
static int changed; /* images whose hash differs, in the current test */

/* name → FNV-1a 64 of the image, recorded on the unsplit view.c */
typedef struct Golden {
    const char *name;
    uint64_t hash;
} Golden;

static const Golden expected[] = {
    {"window-default", 0x4a28b6be8bb2606aULL},
    {"window-teach", 0xe23982ffda0c7ea1ULL},
    {"window-heads4-tooltip", 0xe6099d8c5a0fa0f5ULL},
    {"window-heads4-help", 0xe6b6b68489ff3692ULL},
    {"window-light-editing", 0x39d19a02397441f0ULL},
    {"window-narrow-zoom", 0xe56d851c98543bd3ULL},
    {"window-prompt", 0x5ae2682c90e6031bULL},
    {"window-long", 0x8f890e8dc99c3a2aULL},
    {"window-basic-scale150", 0xd575f95bd64fc468ULL},
    {"window-empty", 0x2fae99f5d46ef7eaULL},
    {"panel-heatmap", 0x04e78394a923aa2bULL},
    {"panel-lines", 0x7424447eb1a1ccfdULL},
    {"panel-both", 0x37cf8c0787a8ddaeULL},
    {"panel-heatmap-causal-dark", 0x3cc48881f5cfba13ULL},
    {"panel-both-long", 0x5ffce7f35971f9d5ULL},
};

static int group_setup(void **state)
{
    (void)state;
    return test_sdl_dummy() < 0 || test_load_embeddings(&table) < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    embed_destroy(table);
    SDL_Quit();
    return 0;
}

/* FNV-1a over the size and every pixel's R, G, B (not the padding byte). */
static uint64_t image_hash(SDL_Surface *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    uint32_t size[2] = {(uint32_t)s->w, (uint32_t)s->h};
    const uint8_t *sz = (const uint8_t *)size;
    for (size_t k = 0; k < sizeof size; k++)
        h = (h ^ sz[k]) * 0x100000001b3ULL;
    assert_int_equal(s->format->format, SDL_PIXELFORMAT_RGB888);
    for (int y = 0; y < s->h; y++) {
        const uint32_t *row = (const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * s->pitch);
        for (int x = 0; x < s->w; x++) {
            uint8_t rgb[3] = {(uint8_t)(row[x] >> 16), (uint8_t)(row[x] >> 8), (uint8_t)row[x]};
            for (int k = 0; k < 3; k++)
                h = (h ^ rgb[k]) * 0x100000001b3ULL;
        }
    }
    return h;
}

/* Save, hash and compare one image (counted in changed); frees it. */
static void check(const char *name, SDL_Surface *surf, AttnErr *err)
{
    if (!surf)
        fprintf(stderr, "%s: %s\n", name, err->msg);
    assert_non_null(surf);
    char path[256];
    mkdir("build", 0755);
    mkdir("build/test-out", 0755);
    snprintf(path, sizeof path, "build/test-out/golden-%s.png", name);
    AttnErr werr = {0};
    if (export_save_png(surf, path, &werr) < 0)
        fprintf(stderr, "%s: %s\n", path, werr.msg);
    uint64_t h = image_hash(surf);
    int w = surf->w, hh = surf->h;
    SDL_FreeSurface(surf);
    const Golden *g = NULL;
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; k++)
        if (!strcmp(expected[k].name, name))
            g = &expected[k];
    assert_non_null(g);
    if (getenv("ATTNVIZ_GOLDEN_PRINT"))
        printf("    {\"%s\", 0x%016llxULL},\n", name, (unsigned long long)h);
    else
        printf("golden %-28s %4dx%-4d 0x%016llx %s\n", name, w, hh, (unsigned long long)h,
               h == g->hash ? "same" : "CHANGED");
    if (h != g->hash) {
        fprintf(stderr, "%s: pixels changed (0x%016llx, expected 0x%016llx); see %s\n", name,
                (unsigned long long)h, (unsigned long long)g->hash, path);
        changed++;
    }
}

static void make_model(Model *m, const char *text, AttnMode mode, int causal, int heads)
{
    AttnConfig cfg = attn_config_default();
    cfg.mode = mode;
    cfg.causal = causal;
    cfg.heads = heads;
    assert_int_equal(model_init(m, table, &cfg), 0);
    m->keep_window_matrices = 1; /* as the window does */
    assert_int_equal(model_set_text(m, text, strlen(text)), 0);
    assert_int_equal(model_compute(m), 0);
}

/* The window's state for m: dark, the sentence in the bar, cursor at its end. */
static void window_state(ViewState *s, Model *m)
{
    view_state_init(s, m);
    s->dark = 1;
    s->sentence = m->text;
    s->cursor = (int)strlen(m->text);
}

/* Render s as the app does: its maps (of m, s's model) for its head and
 * matrix first. */
static void window(const char *name, Model *m, const ViewState *s, int w, int h)
{
    AttnErr err = {0};
    ViewState t = *s;
    view_state_set_model(&t, m);
    source_sentence_controls(&t, NULL);
    check(name, view_render_window(test_fonts(), &t, w, h, &err), &err);
}

static void panel(const char *name, Model *m, const ViewState *s, ViewPanel p)
{
    AttnErr err = {0};
    ViewState t = *s;
    view_state_set_model(&t, m);
    check(name, view_render_panel(test_fonts(), &t, p, &err), &err);
}

/* A sentence of n words from a short list (some not in the table). */
static char *long_sentence(int n)
{
    static const char *const words[] = {"the", "bank", "river", "money", "train", "left",
                                        "station", "zorblax", "on", "time", "a", "cat"};
    size_t cap = (size_t)n * 10 + 1, len = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    for (int k = 0; k < n; k++)
        len += (size_t)snprintf(t + len, cap - len, "%s%s", k ? " " : "",
                                words[(k * 5 + k / 12) % (sizeof words / sizeof words[0])]);
    return t;
}

static void test_golden_windows(void **state)
{
    (void)state;
    Model m;
    ViewState s;
    changed = 0;

    /* the default window: one head, weights, step view */
    make_model(&m, SENTENCE, ATTN_MODE_LEARNED, 0, 1);
    window_state(&s, &m);
    window("window-default", &m, &s, 1280, 800);
    /* teach mode: the target (each word to the one before) outlined over
     * the heatmap, a falling loss curve in the step view's place */
    static float target[7 * 7];
    static double loss[80];
    for (int i = 0; i < 7; i++)
        target[i * 7 + (i > 0 ? i - 1 : 0)] = 1.0f;
    for (int k = 0; k < 80; k++)
        loss[k] = 0.05 + 2.0 * pow(0.93, k);
    s.teach = 1;
    s.teach_target = target;
    s.teach_Tq = s.teach_Tk = 7;
    s.teach_loss = loss;
    s.n_teach_loss = 80;
    s.teach_steps = 79;
    s.teach_running = 1;
    s.teach_info = "adam \xC2\xB7 lr 0.1 \xC2\xB7 training wq,wk \xC2\xB7 the shown head";
    window("window-teach", &m, &s, 1280, 800);
    model_destroy(&m);

    /* 4 heads, causal, logits of head 2, a focused key, a hovered cell */
    make_model(&m, SENTENCE, ATTN_MODE_LEARNED, 1, 4);
    window_state(&s, &m);
    s.head = 1;
    s.matrix = MODEL_LOGITS;
    s.query = 4;
    s.key = 2;
    s.hover_i = 5;
    s.hover_j = 3;
    s.mouse_x = 420;
    s.mouse_y = 430;
    window("window-heads4-tooltip", &m, &s, 1280, 800);
    /* the heads' average, the help overlay (no tooltip under it) */
    s.head = MODEL_HEAD_AVG;
    s.matrix = MODEL_WEIGHTS;
    s.help = 1;
    static ViewHelpLine help[APP_HELP_MAX];
    static char help_text[8192];
    s.help_lines = help;
    s.n_help_lines = app_help_build(help, APP_HELP_MAX, help_text, sizeof help_text, 0);
    window("window-heads4-help", &m, &s, 1280, 800);
    model_destroy(&m);

    /* light theme, typing with pre-edit text, an unknown word, the editor
     * on X with a value being typed, an error, two steps, all lines */
    make_model(&m, "the zorblax train left the bank", ATTN_MODE_LEARNED, 0, 2);
    window_state(&s, &m);
    s.dark = 0;
    s.sentence_focus = 1;
    s.cursor = 11;
    s.preedit = "\xC3\xBC" "ber";
    s.edit_target = EDIT_X;
    s.edit_row = 1;
    s.edit_col = 2;
    s.edit_focus = 1;
    s.edit_text = "0.5";
    s.status = "cannot write out.png: Permission denied";
    s.status_error = 1;
    s.step_reveal = 2;
    s.all_lines = 1;
    s.seed_shown = 42;
    s.has_seed_shown = 1;
    s.cmap = CMAP_MAGMA;
    window("window-light-editing", &m, &s, 1280, 800);
    model_destroy(&m);

    /* a narrow window: compact controls, no editor or step view; zoomed
     * and panned raw scores in cividis */
    make_model(&m, SENTENCE, ATTN_MODE_LEARNED, 1, 1);
    window_state(&s, &m);
    s.zoom = 2.0f;
    s.pan_row = 1;
    s.pan_col = 2;
    s.matrix = MODEL_SCORES;
    s.cmap = CMAP_CIVIDIS;
    s.status = "exported heatmap.png";
    window("window-narrow-zoom", &m, &s, 900, 560);
    /* the bar asking for a file name */
    s.zoom = 1.0f;
    s.prompt = "Save session as";
    s.sentence = "lesson-1.json";
    s.sentence_focus = 1;
    s.cursor = 6;
    s.edit_target = EDIT_WO;
    window("window-prompt", &m, &s, 1100, 700);
    model_destroy(&m);

    /* 300 words: thinned and rotated labels, the bar's window around the
     * cursor, scrolled lines, the editor's tiny cells as one texture */
    char *longt = long_sentence(300);
    make_model(&m, longt, ATTN_MODE_LEARNED, 0, 1);
    window_state(&s, &m);
    s.sentence_focus = 1;
    s.cursor = (int)(strlen(longt) / 2);
    s.query = 120;
    s.key = 130;
    s.lines_scroll = 100;
    s.edit_target = EDIT_X;
    s.edit_row = 120;
    s.edit_col = 3;
    window("window-long", &m, &s, 1280, 800);
    model_destroy(&m);
    free(longt);

    /* basic mode at 150 %: named dimensions under the step view's bars */
    make_model(&m, SENTENCE, ATTN_MODE_BASIC, 0, 1);
    window_state(&s, &m);
    s.scale = 1.5f;
    s.edit_target = EDIT_WK;
    s.key = 4;
    window("window-basic-scale150", &m, &s, 1920, 1200);
    model_destroy(&m);

    /* no sentence yet: the invitation to type */
    AttnConfig cfg = attn_config_default();
    assert_int_equal(model_init(&m, table, &cfg), 0);
    assert_int_equal(model_set_text(&m, "", 0), 0);
    assert_int_equal(model_compute(&m), 0);
    assert_int_equal(m.T, 0);
    window_state(&s, &m);
    window("window-empty", &m, &s, 1280, 800);
    model_destroy(&m);
    assert_int_equal(changed, 0);
}

static void test_golden_panels(void **state)
{
    (void)state;
    Model m;
    ViewState s;
    changed = 0;

    make_model(&m, SENTENCE, ATTN_MODE_LEARNED, 0, 1);
    view_state_init(&s, &m);
    panel("panel-heatmap", &m, &s, PANEL_HEATMAP);
    panel("panel-lines", &m, &s, PANEL_LINES);
    panel("panel-both", &m, &s, PANEL_BOTH);
    model_destroy(&m);

    make_model(&m, SENTENCE, ATTN_MODE_LEARNED, 1, 4);
    view_state_init(&s, &m);
    s.dark = 1;
    s.head = MODEL_HEAD_AVG;
    s.scale = 2.0f;
    s.query = 5;
    s.key = 1;
    panel("panel-heatmap-causal-dark", &m, &s, PANEL_HEATMAP);
    model_destroy(&m);

    /* a title cut with an ellipsis, 2-pixel cells, the lines' height cap */
    char *longt = long_sentence(300);
    make_model(&m, longt, ATTN_MODE_LEARNED, 0, 1);
    view_state_init(&s, &m);
    s.query = 40;
    panel("panel-both-long", &m, &s, PANEL_BOTH);
    model_destroy(&m);
    free(longt);
    assert_int_equal(changed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_windows),
        cmocka_unit_test(test_golden_panels),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
