/* Tests for an attention file in the window (src/app/import_app.c,
 * import.c, the view's model view): opened like a session (Ctrl+O's path),
 * the head view's map is the file's (checked against attn_file_map), L / H /
 * O step through layers, heads and the rollout, G shows every layer and
 * head, arrows and Enter (or a click) open one; the sentence's editing
 * actions are refused; a bad file leaves what was shown. Uses the PyTorch
 * fixtures of tests/fixtures/attention. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/app_state.h"
#include "attnviz/attnfile.h"
#include "attnviz/colormap.h"
#include "attnviz/file_source.h"
#include "attnviz/import.h"
#include "attnviz/input.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "attnviz/theme.h"
#include "attnviz/view.h"

#include "test_util.h"
#include "test_app_util.h"

/* The file's maps shown, or NULL (the sentence is). */
static MapsShown *FS(const AppState *a)
{
    FileSource *fs = file_source_of(a);
    return fs ? &fs->ms : NULL;
}

#define LAYERS "tests/fixtures/attention/torch_layers.npz"
#define CROSS "tests/fixtures/attention/torch_cross.npz"

/* The view's heatmap map equals the file's map (pick, layer, head). */
static void assert_shows(Fix *f, AttnPick pick, int layer, int head)
{
    AppState *a = f->a;
    app_draw(a, f->r);
    const AttnMap *m = &a->vs.map;
    assert_non_null(FS(a));
    assert_int_equal(m->Tq, FS(a)->imp->f.Tq);
    assert_int_equal(m->Tk, FS(a)->imp->f.Tk);
    float *want = malloc(sizeof(float) * (size_t)m->Tq * m->Tk);
    assert_non_null(want);
    assert_int_equal(attn_file_map(&FS(a)->imp->f, pick, layer, head, want), 0);
    for (int i = 0; i < m->Tq; i++)
        for (int j = 0; j < m->Tk; j++)
            assert_float_equal(attn_map_at(m, i, j), want[(size_t)i * m->Tk + j], 1e-6);
    free(want);
}

static void test_open_and_pick(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, LAYERS), 0);
    assert_non_null(FS(a));
    assert_int_equal(FS(a)->imp->f.L, 3);
    assert_int_equal(FS(a)->imp->f.H, 4);
    assert_shows(f, ATTN_PICK_HEAD, 0, 0);
    assert_null(a->vs.m); /* no Model behind the panels */
    assert_string_equal(a->vs.map.q_labels[2], "train"); /* Ġ dropped when shown */
    key(f, SDLK_l, 0);
    assert_shows(f, ATTN_PICK_HEAD, 1, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_h, 0);
    assert_shows(f, ATTN_PICK_HEAD, 1, 2);
    key(f, SDLK_h, KMOD_LSHIFT);
    assert_shows(f, ATTN_PICK_HEAD, 1, 1);
    for (int k = 0; k < 3; k++) /* heads 3, 4, then the average */
        key(f, SDLK_h, 0);
    assert_shows(f, ATTN_PICK_LAYER_AVG, 1, -1);
    key(f, SDLK_o, 0);
    assert_shows(f, ATTN_PICK_ROLLOUT, 1, -1);
    key(f, SDLK_l, 0);
    assert_shows(f, ATTN_PICK_ROLLOUT, 2, -1);
    key(f, SDLK_o, 0);
    assert_shows(f, ATTN_PICK_HEAD, 2, 0);
    key(f, SDLK_l, 0); /* after the last layer: the average of the layers */
    assert_shows(f, ATTN_PICK_HEAD_ALL_AVG, -1, 0);
    /* the controls strip: layer, head, rollout, special tokens, model view */
    assert_int_equal(ctl_rect(f, ACT_TEMPERATURE, 1).w, 0); /* τ means nothing here */
    click_rect(f, ctl_rect(f, ACT_CYCLE_LAYER, 1));
    assert_shows(f, ATTN_PICK_HEAD, 0, 0); /* after the average: layer 1 */
    click_rect(f, ctl_rect(f, ACT_CYCLE_HEAD, 1));
    assert_shows(f, ATTN_PICK_HEAD, 0, 1);
    click_rect(f, ctl_rect(f, ACT_TOGGLE_ROLLOUT, 0));
    assert_shows(f, ATTN_PICK_ROLLOUT, 0, -1);
    click_rect(f, ctl_rect(f, ACT_TOGGLE_ROLLOUT, 0));
    click_rect(f, ctl_rect(f, ACT_TOGGLE_GRID, 0));
    assert_int_equal(FS(a)->grid, 1);
    key(f, SDLK_g, 0);
    /* the query row moves within the file's tokens */
    for (int k = 0; k < 20; k++)
        key(f, SDLK_DOWN, 0);
    assert_int_equal(a->vs.query, 6);
}

/* How many of the heatmap's unmasked cells (the query's row left out: its
 * outline) are not drawn in the colour of their number. */
static int cells_off(Fix *f)
{
    const AttnMap *m = &f->a->vs.map;
    const Figure *h = &f->a->layout.heat;
    ColorScale cs = colormap_scale_mode(m, f->a->vs.cmap, f->a->vs.cscale);
    int off = 0;
    SDL_LockSurface(f->surf);
    for (int i = 0; i < m->Tq; i++)
        for (int j = 0; j < attn_causal_row_len(m->causal, i, m->Tk); j++) {
            if (i == f->a->vs.query || (m->mask && m->mask[(size_t)i * m->Tk + j]))
                continue;
            int x = figure_cell_x(h, j) + 3, y = figure_cell_y(h, i) + 3;
            uint32_t p = ((const uint32_t *)((const uint8_t *)f->surf->pixels + y * f->surf->pitch))[x];
            Rgb want = colormap_cell_rgb(&cs, m, i, j);
            off += (p >> 16 & 0xFF) != want.r || (p >> 8 & 0xFF) != want.g || (p & 0xFF) != want.b;
        }
    SDL_UnlockSurface(f->surf);
    return off;
}

/* The map shown checked after each step: its generation is one no map shown
 * before had, and every cell is drawn in its number's colour. */
static void assert_fresh_map(Fix *f, unsigned long *seen, int *n)
{
    app_draw(f->a, f->r);
    for (int k = 0; k < *n; k++)
        assert_true(f->a->vs.maps_gen != seen[k]);
    seen[(*n)++] = f->a->vs.maps_gen;
    assert_int_equal(cells_off(f), 0);
}

/* The same file opened again (a new source, which once counted its picks
 * from 0 again) and its layers and heads stepped through. The view keeps
 * the heatmap's texture while the generation, shape, head and buffer stay:
 * the second source reached the first one's number at another layer, its
 * buffer came back at the same address, and the first source's colours
 * were drawn under the second one's numbers (the one-thread page's
 * nano-sort session in tests/web/single_test.mjs, when a busy machine
 * made the worker hand over one more result). */
static void test_reopened_maps_redrawn(void **state)
{
    Fix *f = *state;
    unsigned long seen[16];
    int n = 0;
    assert_int_equal(app_open_path(f->a, LAYERS), 0);
    assert_fresh_map(f, seen, &n);
    key(f, SDLK_l, 0);
    assert_fresh_map(f, seen, &n);
    key(f, SDLK_l, 0); /* layer 3, head 1: the texture kept */
    assert_fresh_map(f, seen, &n);
    assert_int_equal(app_open_path(f->a, LAYERS), 0); /* layer 1 again, by two other picks */
    assert_int_equal(FS(f->a)->layer, 0);
    assert_fresh_map(f, seen, &n);
    key(f, SDLK_h, 0);
    assert_fresh_map(f, seen, &n);
    key(f, SDLK_h, KMOD_LSHIFT);
    assert_int_equal(FS(f->a)->layer, 0);
    assert_int_equal(FS(f->a)->head, 0);
    assert_fresh_map(f, seen, &n);
    key(f, SDLK_l, 0);
    assert_fresh_map(f, seen, &n);
}

/* E hides the special tokens (<s>, </s>) and renormalises the rows; E
 * again shows them */
static void test_special_tokens(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, LAYERS), 0);
    assert_int_equal(FS(a)->imp->n_special, 2);
    app_draw(a, f->r);
    assert_int_equal(a->vs.q_special[0], 1); /* <s> */
    assert_int_equal(a->vs.q_special[1], 0);
    assert_int_equal(a->vs.k_special[6], 1); /* </s> */
    key(f, SDLK_e, 0);
    app_draw(a, f->r);
    const AttnMap *m = &a->vs.map;
    assert_int_equal(m->Tq, 5);
    assert_int_equal(m->Tk, 5);
    assert_string_equal(m->q_labels[0], "The");
    for (int i = 0; i < m->Tq; i++) {
        double sum = 0;
        for (int j = 0; j < m->Tk; j++)
            sum += attn_map_at(m, i, j);
        assert_float_equal(sum, 1.0, 1e-5);
    }
    key(f, SDLK_l, 0); /* stays hidden on another layer */
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.Tq, 5);
    key(f, SDLK_e, 0);
    assert_shows(f, ATTN_PICK_HEAD, 1, 0);
}

/* E keeps the selected query on its token (issue 28, item 5): a file
 * opens on row 1 as before; hiding and showing the special tokens moves
 * the row with the token; a hidden special token selected gives the next
 * token kept. The status bar names it ("query: TOKEN"). */
static void test_special_tokens_keep_query(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, LAYERS), 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.query, 1);
    assert_string_equal(a->vs.map.q_labels[1], "The");
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    app_draw(a, f->r);
    const char *tok = a->vs.map.q_labels[a->vs.query];
    char want[64];
    snprintf(want, sizeof want, "%s", tok);
    key(f, SDLK_e, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.Tq, 5);
    assert_int_equal(a->vs.query, 2);
    assert_string_equal(a->vs.map.q_labels[a->vs.query], want);
    key(f, SDLK_e, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.query, 3);
    assert_string_equal(a->vs.map.q_labels[a->vs.query], want);
    /* <s> selected, then hidden: the first token kept */
    for (int k = 0; k < 5; k++)
        key(f, SDLK_UP, 0);
    assert_int_equal(a->vs.query, 0);
    key(f, SDLK_e, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.query, 0);
    assert_string_equal(a->vs.map.q_labels[0], "The");
    key(f, SDLK_e, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.query, 1); /* still "The" */
    /* the last token, </s>, hidden: the last kept */
    for (int k = 0; k < 9; k++)
        key(f, SDLK_DOWN, 0);
    assert_int_equal(a->vs.query, 6);
    key(f, SDLK_e, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.query, 4);
}

/* Case-insensitive: does s contain w? */
static int has_word(const char *s, const char *w)
{
    for (; *s; s++) {
        size_t k = 0;
        while (w[k] && s[k] && (s[k] | 0x20) == (w[k] | 0x20))
            k++;
        if (!w[k])
            return 1;
    }
    return 0;
}

/* File mode's help lists none of the sentence's keys (issue 28, item 13):
 * no line names the editor, the temperature, teach mode or the positional
 * encoding; the Ctrl+O prompt is one line starting "Open" that names what
 * it opens: attention files by extension, and model folders. */
static void test_file_help_and_open_prompt(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    static const char *const sentence_words[] = {"editor", "temperature", "teach", "positional"};
    assert_int_equal(open_now(a, LAYERS), 0);
    key(f, SDLK_F1, 0);
    assert_true(a->vs.help);
    assert_true(a->vs.n_help_lines > 5);
    for (int k = 0; k < a->vs.n_help_lines; k++)
        for (size_t w = 0; w < sizeof sentence_words / sizeof sentence_words[0]; w++)
            if (has_word(a->vs.help_lines[k].what, sentence_words[w]) ||
                has_word(a->vs.help_lines[k].keys, sentence_words[w]))
                fail_msg("file mode's help: \"%s  %s\" names %s", a->vs.help_lines[k].keys,
                         a->vs.help_lines[k].what, sentence_words[w]);
    key(f, SDLK_ESCAPE, 0);
    key(f, SDLK_o, KMOD_LCTRL);
    assert_non_null(a->vs.prompt);
    const char *p = a->vs.prompt;
    assert_true(strncmp(p, "Open", 4) == 0);
    assert_null(strchr(p, '\n'));
    assert_non_null(strstr(p, ".npy"));
    assert_non_null(strstr(p, ".npz"));
    assert_non_null(strstr(p, ".safetensors"));
    assert_true(has_word(p, "model"));
    key(f, SDLK_ESCAPE, 0);
}

static void test_model_view(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, LAYERS), 0);
    key(f, SDLK_g, 0);
    assert_int_equal(FS(a)->grid, 1);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid);
    assert_int_equal(a->layout.grid_fig.L, 3);
    assert_int_equal(a->layout.grid_fig.H, 4);
    /* arrows move the selection, Enter opens it in the head view */
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_RIGHT, 0);
    key(f, SDLK_RIGHT, 0);
    key(f, SDLK_RIGHT, 0);
    key(f, SDLK_RIGHT, 0); /* clamped at head 4 */
    assert_int_equal(FS(a)->grid_layer, 2);
    assert_int_equal(FS(a)->grid_head, 3);
    key(f, SDLK_RETURN, 0);
    assert_int_equal(FS(a)->grid, 0);
    assert_shows(f, ATTN_PICK_HEAD, 2, 3);
    /* the pointer over a cell of one small map marks its row and column in
     * every map and names its tokens */
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    const FigureGrid *g = &a->layout.grid_fig;
    FigRect m0 = figure_grid_map_rect(g, 0, 1);
    motion(f, m0.x + (int)(4.5f * g->cell), m0.y + (int)(2.5f * g->cell), 0);
    assert_int_equal(a->vs.hover_i, 2);
    assert_int_equal(a->vs.hover_j, 4);
    assert_non_null(strstr(a->status, "\xE2\x80\x9Ctrain\xE2\x80\x9D")); /* row 3: Ġtrain, shown as train */
    assert_non_null(strstr(a->status, "\xE2\x80\x9Cthe\xE2\x80\x9D"));   /* column 5 */
    app_draw(a, f->r);
    SDL_RenderPresent(f->r); /* the software renderer draws its batch */
    FigRect m1 = figure_grid_map_rect(g, 2, 3); /* another map: its row 3 outlined on the left edge */
    Rgb ac = theme_get(a->vs.dark)->accent;
    const uint8_t *px = (const uint8_t *)f->surf->pixels + (size_t)figure_grid_cell_y(g, 2, 2) * f->surf->pitch +
                        (size_t)m1.x * 4;
    Uint32 v;
    memcpy(&v, px, 4);
    Uint8 r8, g8, b8;
    SDL_GetRGB(v, f->surf->format, &r8, &g8, &b8);
    if (!(r8 == ac.r && g8 == ac.g && b8 == ac.b))
        SDL_SaveBMP(f->surf, "build/test-out/import_hover.bmp"); /* to look at */
    assert_true(r8 == ac.r && g8 == ac.g && b8 == ac.b);
    key(f, SDLK_g, 0);
    /* a click on a small map opens that one */
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    FigRect r = figure_grid_map_rect(&a->layout.grid_fig, 1, 2);
    click(f, r.x + r.w / 2, r.y + r.h / 2);
    assert_int_equal(FS(a)->grid, 0);
    assert_shows(f, ATTN_PICK_HEAD, 1, 2);
}

/* Ctrl+S keeps the file, layer, head and view; opening the session (after
 * the sentence came back) shows them again. */
static void test_session(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char path[96], sp[96];
    snprintf(path, sizeof path, "/tmp/attnviz-test-attn-session-%d.json", (int)getpid());
    snprintf(sp, sizeof sp, "/tmp/attnviz-test-attn-session-%d.txt", (int)getpid());
    assert_int_equal(open_now(a, LAYERS), 0);
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_h, 0); /* layer 2, head 3 */
    key(f, SDLK_e, 0); /* special tokens hidden */
    key(f, SDLK_DOWN, 0);
    int query = a->vs.query;
    assert_int_equal(app_save_session(a, path), 0);
    assert_null(strstr(a->status, "not saved"));
    FILE *fp = fopen(sp, "w");
    assert_non_null(fp);
    fputs("the cat sat\n", fp);
    fclose(fp);
    assert_int_equal(open_now(a, sp), 0); /* the sentence again */
    assert_null(FS(a));
    assert_int_equal(open_now(a, path), 0);
    assert_non_null(FS(a));
    assert_int_equal(FS(a)->layer, 1);
    assert_int_equal(FS(a)->head, 2);
    assert_int_equal(FS(a)->hide_special, 1);
    assert_int_equal(a->vs.query, query);
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.Tq, 5); /* without <s> and </s> */
    assert_string_equal(a->session_path, path); /* Ctrl+S saves here now */
    unlink(path);
    unlink(sp);
}

/* The head view's overview: every map, small, in the editor's room; the
 * heatmap's hovered cell marked in each; a click opens one. */
static void test_overview(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, LAYERS), 0);
    app_draw(a, f->r);
    const FigureGrid *g = &a->layout.grid_fig;
    assert_int_equal(FS(a)->grid, 0);
    assert_int_equal(g->L, 3);
    assert_int_equal(g->H, 4);
    assert_true(a->layout.cell > 0); /* the heatmap is there too */
    int x = figure_cell_x(&a->layout.heat, 4) + 3, y = figure_cell_y(&a->layout.heat, 2) + 3;
    motion(f, x, y, 0);
    assert_int_equal(a->vs.hover_i, 2);
    assert_int_equal(a->vs.hover_j, 4);
    app_draw(a, f->r);
    SDL_RenderPresent(f->r);
    FigRect m = figure_grid_map_rect(g, 2, 3);
    Rgb ac = theme_get(a->vs.dark)->accent;
    const uint8_t *px = (const uint8_t *)f->surf->pixels + (size_t)figure_grid_cell_y(g, 2, 2) * f->surf->pitch +
                        (size_t)m.x * 4;
    Uint32 v;
    memcpy(&v, px, 4);
    Uint8 r8, g8, b8;
    SDL_GetRGB(v, f->surf->format, &r8, &g8, &b8);
    assert_true(r8 == ac.r && g8 == ac.g && b8 == ac.b);
    click(f, m.x + m.w / 2, m.y + m.h / 2);
    assert_shows(f, ATTN_PICK_HEAD, 2, 3);
}

/* A file with scores beside the weights: R (or its control) switches. */
static void test_scores(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, "tests/fixtures/attention/scores.npz"), 0);
    assert_int_equal(FS(a)->imp->has_scores, 1);
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.kind, ATTN_MAP_WEIGHTS);
    key(f, SDLK_r, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.kind, ATTN_MAP_SCORES);
    float want[25];
    assert_int_equal(attn_file_map(&FS(a)->imp->sf, ATTN_PICK_HEAD, 0, 0, want), 0);
    for (int k = 0; k < 25; k++)
        assert_float_equal(attn_map_at(&a->vs.map, k / 5, k % 5), want[k], 1e-6);
    click_rect(f, ctl_rect(f, ACT_CYCLE_MATRIX, 1));
    assert_shows(f, ATTN_PICK_HEAD, 0, 0); /* the weights again */
    /* a file without scores says so */
    assert_int_equal(open_now(a, LAYERS), 0);
    key(f, SDLK_r, 0);
    assert_non_null(strstr(a->status, "no scores"));
}

static void test_model_actions_refused(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    float tau = f->m.cfg.temperature;
    int causal = f->m.cfg.causal;
    assert_int_equal(open_now(a, LAYERS), 0);
    unsigned long gen = FS(a)->gen;
    key(f, SDLK_m, 0); /* the mask */
    key(f, SDLK_t, 0); /* τ */
    key(f, SDLK_RETURN, 0); /* the sentence bar */
    assert_int_equal(f->m.cfg.causal, causal);
    assert_float_equal(f->m.cfg.temperature, tau, 0.0f);
    assert_int_equal(a->vs.sentence_focus, 0);
    assert_int_equal(FS(a)->gen, gen);
    assert_non_null(strstr(a->status, "no sentence, weights or settings"));
    /* the editor and the step view say why they are empty */
    app_draw(a, f->r);
    assert_non_null(a->vs.no_model);
}

/* The numbers of a --print csv file (its header row and label column
 * skipped) into v, at most n; how many. */
static int read_csv_numbers(const char *path, double *v, int n)
{
    FILE *fp = fopen(path, "r");
    char line[4096];
    int k = 0;
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof line, fp)); /* the keys */
    while (fgets(line, sizeof line, fp)) {
        char *p = strchr(line, ',');
        while (p && k < n) {
            v[k++] = strtod(p + 1, NULL);
            p = strchr(p + 1, ',');
        }
    }
    fclose(fp);
    return k;
}

/* The compare view on a file: V pins layer 2 head 1, H steps to head 2;
 * the reference, current and difference are the file's maps; Ctrl+E writes
 * the three panels and current − reference as CSV. */
static void test_compare_file(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-cmpfile-XXXXXX";
    assert_non_null(mkdtemp(dir));
    a->export_dir = dir;
    assert_int_equal(open_now(a, LAYERS), 0);
    key(f, SDLK_l, 0); /* layer 2, head 1 */
    key(f, SDLK_v, 0);
    assert_non_null(a->cmp);
    assert_int_equal(a->status_err, 0);
    key(f, SDLK_h, 0); /* head 2 */
    app_draw(a, f->r);
    assert_non_null(a->vs.cmp_ref);
    assert_non_null(a->vs.cmp_diff);
    assert_non_null(strstr(a->vs.cmp_what, "head 1 vs head 2"));
    assert_non_null(strstr(a->vs.cmp_ref_label, "head 1"));
    assert_non_null(strstr(a->vs.cmp_cur_label, "head 2"));
    int T = a->vs.map.Tq, Tk = a->vs.map.Tk;
    float *ref = malloc(sizeof(float) * (size_t)T * Tk), *cur = malloc(sizeof(float) * (size_t)T * Tk);
    assert_int_equal(attn_file_map(&FS(a)->imp->f, ATTN_PICK_HEAD, 1, 0, ref), 0);
    assert_int_equal(attn_file_map(&FS(a)->imp->f, ATTN_PICK_HEAD, 1, 1, cur), 0);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < Tk; j++) {
            assert_float_equal(attn_map_at(a->vs.cmp_ref, i, j), ref[(size_t)i * Tk + j], 1e-6);
            assert_float_equal(attn_map_at(a->vs.cmp_diff, i, j), cur[(size_t)i * Tk + j] - ref[(size_t)i * Tk + j],
                               1e-6);
        }
    int n0 = a->export_count;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->export_count, n0 + 2);
    assert_int_equal(a->status_err, 0);
    char csv[4200];
    size_t n = strlen(a->last_export);
    snprintf(csv, sizeof csv, "%.*s.csv", (int)(n - 4), a->last_export);
    double *got = calloc((size_t)T * Tk, sizeof *got);
    assert_int_equal(read_csv_numbers(csv, got, T * Tk), T * Tk);
    for (int k = 0; k < T * Tk; k++)
        assert_true(fabs(got[k] - ((double)cur[k] - ref[k])) < 1e-6);
    /* another layer: said as such; V again unpins */
    key(f, SDLK_l, 0);
    app_draw(a, f->r);
    assert_non_null(strstr(a->vs.cmp_what, "layer 2 vs layer 3"));
    key(f, SDLK_v, 0);
    assert_null(a->cmp);
    free(got);
    free(ref);
    free(cur);
}

/* The command line's way into the window: --layer and --head choose the
 * map the window opens on (cli_open, then show, as main does). */
static void test_cli_layer_head(void **state)
{
    Fix *f = *state;
    char *argv[] = {"attnviz", "--attention", LAYERS, "--layer", "2", "--head", "3", NULL};
    Options o;
    AttnErr err = {0};
    assert_int_equal(options_parse(&o, 7, argv, &err), 0);
    const SourceKind *k = source_for_path(LAYERS);
    assert_ptr_equal(k, &source_file);
    void *opened = NULL;
    assert_int_equal(k->cli_open(&o, LAYERS, &opened, &err), 0);
    assert_int_equal(k->show(f->a, opened), 0);
    assert_shows(f, ATTN_PICK_HEAD, 1, 2);
    assert_int_equal(FS(f->a)->layer, 1);
    assert_int_equal(FS(f->a)->head, 2);
    options_free(&o);
}

static void test_cross_and_bad_files(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    assert_int_equal(open_now(a, CROSS), 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.Tq, 5);
    assert_int_equal(a->vs.map.Tk, 7);
    assert_string_equal(a->vs.map.q_labels[1], "Der"); /* ▁ dropped */
    assert_string_equal(a->vs.map.k_labels[6], "</s>");
    key(f, SDLK_o, 0); /* no rollout of cross-attention: said, map kept */
    assert_int_equal(a->status_err, 1);
    assert_int_equal(a->vs.map.Tq, 5);
    /* a broken file: an error in the status bar, the file stays shown */
    char path[96], sp[96];
    snprintf(path, sizeof path, "/tmp/attnviz-test-import-%d.npy", (int)getpid());
    snprintf(sp, sizeof sp, "/tmp/attnviz-test-import-%d.txt", (int)getpid());
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fwrite("\x93NUMPY\x01\x00garbage", 1, 15, fp);
    fclose(fp);
    assert_int_equal(open_now(a, path), -1);
    assert_int_equal(a->status_err, 1);
    assert_non_null(strstr(a->status, path));
    assert_non_null(FS(a));
    assert_int_equal(a->vs.map.Tk, 7);
    unlink(path);
    /* a sentences file brings the sentence back */
    fp = fopen(sp, "w");
    assert_non_null(fp);
    fputs("the cat sat\n", fp);
    fclose(fp);
    assert_int_equal(open_now(a, sp), 0);
    assert_null(FS(a));
    app_draw(a, f->r);
    assert_ptr_equal(a->vs.m, &f->m);
    assert_int_equal(a->vs.map.Tq, 3);
    unlink(sp);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_open_and_pick),
        T(test_reopened_maps_redrawn),
        T(test_special_tokens),
        T(test_special_tokens_keep_query),
        T(test_file_help_and_open_prompt),
        T(test_model_view),
        T(test_session),
        T(test_overview),
        T(test_scores),
        T(test_model_actions_refused),
        T(test_compare_file),
        T(test_cli_layer_head),
        T(test_cross_and_bad_files),
    };
#undef T
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
