/* The window at projector sizes (issue 16, item 3): at 1280 × 800 and
 * 1024 × 768, with the interface at 100 %, 115 %, 132 % and 150 %, every
 * panel lies inside the window and apart from the others, the weight editor
 * and the step view are always reachable (their own place, or a tab of the
 * side area that Ctrl+Tab and a click switch to), the editor's and the step
 * view's parts stay inside their panels, and no two texts drawn overlap
 * (every text drawn is recorded by the view's text layer). Scenes: one
 * sentence, four heads, two sentences (cross-attention), teach mode.
 * Run from the repository root with SDL_VIDEODRIVER=dummy. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attnviz/attn_write.h"
#include "attnviz/input.h"
#include "attnviz/model_source.h"
#include "attnviz/source.h"
#include "attnviz/theme.h"
#include "attnviz/teach_app.h"

#include "test_util.h"
#include "test_app_util.h"
#include "../src/view/text.h"

#include <unistd.h>

#define MAX_BOXES 4096

static TextBox boxes[MAX_BOXES];
static int n_boxes;

static const struct {
    int w, h;
} sizes[] = {{1280, 800}, {1024, 768}};
static const float scales[] = {1.0f, 1.15f, 1.32f, 1.5f};

static int inside(SDL_Rect in, SDL_Rect out)
{
    return in.x >= out.x && in.y >= out.y && in.x + in.w <= out.x + out.w && in.y + in.h <= out.y + out.h;
}

static int apart(SDL_Rect a, SDL_Rect b)
{
    return a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0 || !SDL_HasIntersection(&a, &b);
}

/* Draw the app into a w × h software renderer, recording the texts; the
 * surface drawn, for the caller to free. */
static SDL_Surface *draw_surface(Fix *f, int w, int h)
{
    SDL_Surface *surf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB888);
    assert_non_null(surf);
    SDL_Renderer *r = SDL_CreateSoftwareRenderer(surf);
    assert_non_null(r);
    view_set_renderer(f->a->view, r);
    text_record(boxes, MAX_BOXES, &n_boxes);
    app_draw(f->a, r);
    text_record(NULL, 0, NULL);
    assert_true(n_boxes <= MAX_BOXES);
    assert_int_equal(f->a->layout.w, w);
    view_set_renderer(f->a->view, f->r);
    SDL_DestroyRenderer(r);
    return surf;
}

static void draw_at(Fix *f, int w, int h)
{
    SDL_FreeSurface(draw_surface(f, w, h));
}

/* The panels: inside the window, pairwise apart. */
static void check_panels(const ViewLayout *l, const char *where)
{
    SDL_Rect win = {0, 0, l->w, l->h};
    const SDL_Rect p[] = {l->sentence, l->keys_bar, l->controls, l->heatmap, l->lines, l->editor,
                          l->step, l->status, l->side_tab[0], l->side_tab[1], l->side_tab[2]};
    const char *name[] = {"sentence", "keys", "controls", "heatmap", "lines", "editor",
                          "step", "status", "tab 1", "tab 2", "tab 3"};
    int n = (int)(sizeof p / sizeof p[0]);
    for (int a = 0; a < n; a++) {
        if (p[a].w > 0 && !inside(p[a], win))
            fail_msg("%s: %s (%d,%d %dx%d) leaves the window", where, name[a], p[a].x, p[a].y, p[a].w, p[a].h);
        for (int b = a + 1; b < n; b++)
            if (!apart(p[a], p[b]))
                fail_msg("%s: %s and %s overlap", where, name[a], name[b]);
    }
}

/* The editor's tabs, grid and buttons inside it, cells big enough to hit;
 * the step view's text and bars inside it, apart. */
static void check_parts(const ViewLayout *l, const char *where)
{
    if (l->editor.w > 0) {
        for (int t = 0; t < EDIT_COUNT; t++)
            if (!inside(l->edit_tab[t], l->editor))
                fail_msg("%s: editor tab %d is cut off", where, t + 1);
        for (int b = 0; b < EBTN_COUNT; b++)
            if (!inside(l->edit_btn[b], l->editor))
                fail_msg("%s: editor button %d is cut off", where, b);
        if (!inside(l->edit_grid, l->editor))
            fail_msg("%s: the editor's grid is cut off", where);
        if (l->edit_cell_w < 6 || l->edit_cell_h < 6)
            fail_msg("%s: editor cells of %.1f x %.1f pixels", where, (double)l->edit_cell_w,
                     (double)l->edit_cell_h);
    }
    if (l->step.w > 0) {
        if (!inside(l->step_text, l->step) || !inside(l->step_bars, l->step))
            fail_msg("%s: the step view's text or bars leave it", where);
        if (!apart(l->step_text, l->step_bars))
            fail_msg("%s: the step view's text runs over its bars", where);
    }
}

/* Do two texts' boxes (convex quadrilaterals: rotated labels are) overlap
 * by more than a pixel? No axis among their edges' normals separates them. */
static int quads_overlap(const TextBox *a, const TextBox *b)
{
    const TextBox *q[2] = {a, b};
    for (int s = 0; s < 2; s++)
        for (int e = 0; e < 2; e++) { /* two edge directions a box */
            double nx = -(q[s]->qy[e + 1] - q[s]->qy[e]), ny = q[s]->qx[e + 1] - q[s]->qx[e];
            double len = sqrt(nx * nx + ny * ny);
            if (len == 0)
                return 0;
            nx /= len, ny /= len;
            double lo[2] = {1e18, 1e18}, hi[2] = {-1e18, -1e18};
            for (int t = 0; t < 2; t++)
                for (int k = 0; k < 4; k++) {
                    double p = q[t]->qx[k] * nx + q[t]->qy[k] * ny;
                    lo[t] = fmin(lo[t], p), hi[t] = fmax(hi[t], p);
                }
            if (fmin(hi[0], hi[1]) - fmax(lo[0], lo[1]) <= 1.0)
                return 0;
        }
    return 1;
}

/* No two texts overlap (two rotated column labels are each other's
 * neighbours along a diagonal: their bounding boxes may), every text is
 * inside the window. */
static void check_texts(const ViewLayout *l, const char *where)
{
    SDL_Rect win = {0, 0, l->w, l->h};
    for (int a = 0; a < n_boxes; a++) {
        if (!inside(boxes[a].box, win))
            fail_msg("%s: text \"%s\" (%d,%d %dx%d) leaves the window", where, boxes[a].text, boxes[a].box.x,
                     boxes[a].box.y, boxes[a].box.w, boxes[a].box.h);
        for (int b = a + 1; b < n_boxes; b++) {
            if (boxes[a].angle != 0.0 && boxes[b].angle != 0.0)
                continue;
            SDL_Rect x;
            if (SDL_IntersectRect(&boxes[a].box, &boxes[b].box, &x) && x.w > 1 && x.h > 1 &&
                quads_overlap(&boxes[a], &boxes[b]))
                fail_msg("%s: \"%s\" (%d,%d %dx%d) and \"%s\" (%d,%d %dx%d) overlap", where, boxes[a].text,
                         boxes[a].box.x, boxes[a].box.y, boxes[a].box.w, boxes[a].box.h, boxes[b].text,
                         boxes[b].box.x, boxes[b].box.y, boxes[b].box.w, boxes[b].box.h);
        }
    }
}

/* Every size and scale: the checks with each tab of the side area shown;
 * the editor and the step view each shown at least once. */
static void check_scene(Fix *f, const char *scene)
{
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
            char where[160];
            f->a->ui_scale = scales[k];
            int seen_editor = 0, seen_step = 0;
            for (int tab = 0; tab < SIDE_COUNT; tab++) {
                snprintf(where, sizeof where, "%s, %dx%d at %.0f%%, tab %d", scene, sizes[z].w, sizes[z].h,
                         (double)(scales[k] * 100), tab);
                f->a->vs.side = (SidePanel)tab;
                draw_at(f, sizes[z].w, sizes[z].h);
                const ViewLayout *l = &f->a->layout;
                check_panels(l, where);
                check_parts(l, where);
                check_texts(l, where);
                seen_editor |= l->editor.w > 0;
                seen_step |= l->step.w > 0;
            }
            if (!seen_editor || !seen_step)
                fail_msg("%s: the editor (%d) or the step view (%d) cannot be reached", where, seen_editor,
                         seen_step);
        }
    f->a->ui_scale = 1.0f;
    f->a->vs.side = SIDE_LINES;
}

static void test_one_sentence(void **state)
{
    check_scene(*state, "one sentence");
}

static void test_four_heads(void **state)
{
    Fix *f = *state;
    app_apply(f->a, &(AppAction){ACT_STEP_HEADS, 1, 0, 0.0f});
    app_apply(f->a, &(AppAction){ACT_STEP_HEADS, 1, 0, 0.0f});
    assert_int_equal(f->m.cfg.heads, 4);
    check_scene(f, "four heads");
}

static void test_two_sentences(void **state)
{
    Fix *f = *state;
    app_set_keys(f->a, "le train est parti de la gare");
    assert_true(f->m.cross);
    check_scene(f, "two sentences");
}

/* The compare view: its three figures take the line diagram's room, or
 * (tabs) the whole width under the tabs while its tab is shown. */
static void test_compare_view(void **state)
{
    Fix *f = *state;
    app_apply(f->a, &(AppAction){ACT_COMPARE, 0, 0, 0.0f});
    app_apply(f->a, &(AppAction){ACT_TOGGLE_SCALE, 0, 0, 0.0f});
    check_scene(f, "compare");
    /* at 132 % the Compare tab gives the figures the whole width */
    f->a->ui_scale = 1.32f;
    f->a->vs.side = SIDE_LINES;
    draw_at(f, 1280, 800);
    const ViewLayout *l = &f->a->layout;
    assert_int_equal(l->side_shown, SIDE_LINES);
    assert_true(l->heatmap.x + l->heatmap.w > l->side_tab[SIDE_STEP].x + l->side_tab[SIDE_STEP].w);
    assert_true(l->heatmap.y > l->side_tab[SIDE_LINES].y);
    f->a->ui_scale = 1.0f;
}

static void test_teach_mode(void **state)
{
    Fix *f = *state;
    app_apply(f->a, &(AppAction){ACT_TEACH, 0, 0, 0.0f});
    app_apply(f->a, &(AppAction){ACT_TEACH_PRESET, TEACH_PREVIOUS, 0, 0.0f});
    app_apply(f->a, &(AppAction){ACT_TEACH_STEP, 0, 0, 0.0f});
    assert_true(f->a->teach && f->a->teach->on);
    check_scene(f, "teach mode");
}

/* The keyboard reaches every tab: Ctrl+Tab walks them (the editor's takes
 * the keyboard), Ctrl+Shift+Tab walks back, a click on a tab shows it. */
static void test_ctrl_tab_walks_the_tabs(void **state)
{
    Fix *f = *state;
    f->a->ui_scale = 1.32f;
    draw_at(f, 1280, 800);
    const ViewLayout *l = &f->a->layout;
    assert_int_equal(l->side_shown, SIDE_LINES);
    assert_true(l->side_tab[SIDE_EDITOR].w > 0 && l->side_tab[SIDE_STEP].w > 0);
    assert_int_equal(l->editor.w, 0);
    key(f, SDLK_TAB, KMOD_LCTRL);
    draw_at(f, 1280, 800);
    assert_int_equal(l->side_shown, SIDE_EDITOR);
    assert_true(l->editor.w > 0);
    assert_int_equal(f->a->vs.edit_focus, 1);
    key(f, SDLK_TAB, KMOD_LCTRL);
    draw_at(f, 1280, 800);
    assert_int_equal(l->side_shown, SIDE_STEP);
    assert_int_equal(f->a->vs.edit_focus, 0);
    key(f, SDLK_TAB, KMOD_LCTRL | KMOD_LSHIFT);
    draw_at(f, 1280, 800);
    assert_int_equal(l->side_shown, SIDE_EDITOR);
    /* a click on the lines' tab */
    SDL_Rect t = l->side_tab[SIDE_LINES];
    click(f, t.x + t.w / 2, t.y + t.h / 2);
    draw_at(f, 1280, 800);
    assert_int_equal(l->side_shown, SIDE_LINES);
    /* 1 (Wq) from the heatmap brings the editor's tab and its keyboard */
    key(f, SDLK_1, 0);
    draw_at(f, 1280, 800);
    assert_int_equal(l->side_shown, SIDE_EDITOR);
    assert_int_equal(f->a->vs.edit_focus, 1);
    /* at 100 % every panel has its place: no tabs */
    f->a->ui_scale = 1.0f;
    draw_at(f, 1280, 800);
    assert_int_equal(l->side_shown, -1);
    for (int p = 0; p < SIDE_COUNT; p++)
        assert_int_equal(l->side_tab[p].w, 0);
}

/* Is text among the recorded boxes (whole, or its start when cut)? */
static int drawn(const char *text)
{
    size_t n = strlen(text) < sizeof boxes[0].text - 1 ? strlen(text) : sizeof boxes[0].text - 1;
    for (int k = 0; k < n_boxes && k < MAX_BOXES; k++)
        if (strncmp(boxes[k].text, text, n) == 0)
            return 1;
    return 0;
}

/* The texts drawn inside r, in drawing order, joined by spaces. */
static void texts_in(SDL_Rect r, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < n_boxes && k < MAX_BOXES && used < n; k++)
        if (inside(boxes[k].box, r))
            used += (size_t)snprintf(out + used, n - used, "%s ", boxes[k].text);
}

/* The heads' mean in the step view (issue 28, item 8): its title names the
 * head whose steps it shows (the one with the largest share, not head 1
 * silently), and step ③ gives every head's α for the cell and their mean,
 * the heatmap's number. */
static void test_step_view_of_the_mean(void **state)
{
    Fix *f = *state;
    for (int k = 0; k < 4 && f->m.res.h < 4; k++)
        key(f, SDLK_RIGHTBRACKET, 0);
    assert_int_equal(f->m.res.h, 4);
    for (int k = 0; k < 8 && f->a->vs.head >= 0; k++)
        key(f, SDLK_h, 0);
    assert_int_equal(f->a->vs.head, MODEL_HEAD_AVG);
    for (int k = 0; k < 8 && f->a->vs.query != 1; k++)
        key(f, f->a->vs.query > 1 ? SDLK_UP : SDLK_DOWN, 0); /* query "train" */
    for (int k = 0; k < 8 && f->a->vs.key != 4; k++)
        key(f, SDLK_RIGHT, 0); /* key "station" */
    int i = f->a->vs.query, j = f->a->vs.key, T = f->m.res.Tk;
    assert_int_equal(i, 1);
    assert_int_equal(j, 4);
    draw_at(f, 1280, 800);
    char all[4000], want[400];
    texts_in(f->a->layout.step, all, sizeof all);
    int top = 0;
    double mean = 0.0;
    size_t used = (size_t)snprintf(want, sizeof want, "(");
    for (int k = 0; k < 4; k++) {
        const float *W = model_matrix(&f->m, MODEL_WEIGHTS, k);
        if (W[i * T + j] > model_matrix(&f->m, MODEL_WEIGHTS, top)[i * T + j])
            top = k;
        mean += W[i * T + j];
        used += (size_t)snprintf(want + used, sizeof want - used, "%s%.3f", k ? " + " : "", (double)W[i * T + j]);
    }
    assert_true(top != 0); /* the test means something: head 1 is not the largest */
    snprintf(want + used, sizeof want - used, ") / 4 = %.3f", mean / 4);
    assert_float_equal(mean / 4, model_matrix(&f->m, MODEL_WEIGHTS, MODEL_HEAD_AVG)[i * T + j], 1e-6);
    if (!strstr(all, want))
        fail_msg("the step view of the mean lacks \"%s\": %s", want, all);
    char title[80];
    snprintf(title, sizeof title, "head %d of the 4 heads' mean", top + 1);
    if (!strstr(all, title))
        fail_msg("the step view of the mean does not say \"%s\": %s", title, all);
    assert_null(strstr(all, "(head 1)"));
}

/* A long text through the sentence bar: Enter, Ctrl+U, the text in text
 * events of up to 31 bytes (as a paste by an input method), Esc. */
static void type_long(Fix *f, const char *text)
{
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_u, KMOD_CTRL);
    for (size_t at = 0, n = strlen(text); at < n;) {
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = SDL_TEXTINPUT;
        size_t k = n - at < 31 ? n - at : 31;
        memcpy(e.text.text, text + at, k);
        app_handle_event(f->a, &e);
        at += k;
    }
    key(f, SDLK_ESCAPE, 0);
}

/* Long texts' line diagram (issue 28, item 12): 331 tokens, the diagram
 * shows those around the query; its lines to the keys out of view end at
 * the edge row, which names the strongest of them; A (all queries' lines)
 * changes the diagram even though every weight is small. */
static void test_lines_long_text(void **state)
{
    Fix *f = *state;
    static const char *const words[] = {"the", "train", "left", "on", "time", "and", "a", "man", "went",
                                        "to", "bank", "of", "river", "with", "his", "dog", "rain"};
    char text[4000];
    size_t used = 0;
    unsigned x = 7;
    for (int k = 0; k < 330; k++) {
        x = x * 1103515245u + 12345u;
        used += (size_t)snprintf(text + used, sizeof text - used, "%s ", words[(x >> 16) % 17]);
    }
    snprintf(text + used, sizeof text - used, "station");
    type_long(f, text);
    assert_int_equal(f->m.T, 331);
    const ViewLayout *l = &f->a->layout;
    assert_true(l->lines_vis > 0 && l->lines_vis < 331);
    /* the query's strongest key below the view (the diagram shows the top lines) */
    const AttnMap *m = &f->a->vs.weights;
    int q = f->a->vs.query, best = -1;
    for (int j = l->lines0 + l->lines_vis; j < m->Tk; j++)
        if (best < 0 || attn_map_at(m, q, j) > attn_map_at(m, q, best))
            best = j;
    assert_true(best >= 0);
    draw_at(f, 1280, 800);
    char all[20000], want[80];
    texts_in(f->a->layout.lines, all, sizeof all);
    snprintf(want, sizeof want, "\xE2\x86\x93 %s ", m->k_labels[best]);
    if (!strstr(all, want))
        fail_msg("the line diagram does not name the key below the view (\"%s\"): %s", want, all);
    /* all queries' lines: the diagram changes */
    SDL_Rect lr = f->a->layout.lines;
    SDL_Surface *before = SDL_CreateRGBSurfaceWithFormat(0, lr.w, lr.h, 24, SDL_PIXELFORMAT_RGB888);
    assert_non_null(before);
    app_draw(f->a, f->r);
    SDL_BlitSurface(f->surf, &lr, before, NULL);
    key(f, SDLK_a, 0);
    assert_true(f->a->vs.all_lines);
    app_draw(f->a, f->r);
    SDL_Surface *after = SDL_CreateRGBSurfaceWithFormat(0, lr.w, lr.h, 24, SDL_PIXELFORMAT_RGB888);
    assert_non_null(after);
    SDL_BlitSurface(f->surf, &lr, after, NULL);
    long differ = 0;
    for (int y = 0; y < lr.h; y++)
        differ += memcmp((char *)before->pixels + y * before->pitch, (char *)after->pixels + y * after->pitch,
                         (size_t)lr.w * 4) != 0;
    SDL_FreeSurface(before);
    SDL_FreeSurface(after);
    if (differ < lr.h / 4)
        fail_msg("A (all queries' lines) changes %ld of the line diagram's %d rows at 331 tokens", differ, lr.h);
}

/* The compare view at projector sizes (issue 28, item 10): at 132 % pinning
 * from another tab opens the Compare tab; the three grids share the width
 * (the reference's colour bar is the current map's), every label drawn;
 * at 1280 × 800 the reference and current maps show their numbers (the
 * difference's, wider, when they fit). */
static void test_compare_projector(void **state)
{
    Fix *f = *state;
    f->a->ui_scale = 1.32f;
    for (int z = 0; z < 2; z++) {
        draw_at(f, sizes[z].w, sizes[z].h);
        if (f->a->cmp)
            key(f, SDLK_v, 0); /* unpin */
        for (int k = 0; k < 3 && f->a->vs.side != SIDE_EDITOR; k++)
            key(f, SDLK_TAB, KMOD_CTRL);
        draw_at(f, sizes[z].w, sizes[z].h);
        assert_int_equal(f->a->layout.side_shown, SIDE_EDITOR);
        key(f, SDLK_v, 0);
        key(f, SDLK_p, 0); /* posenc: a difference */
        draw_at(f, sizes[z].w, sizes[z].h);
        const ViewLayout *l = &f->a->layout;
        char where[40];
        snprintf(where, sizeof where, "%dx%d at 132 %%", sizes[z].w, sizes[z].h);
        if (l->side_shown != SIDE_LINES)
            fail_msg("%s: pinning leaves the Compare tab hidden", where);
        for (int k = 0; k < 3; k++) {
            if (l->cmp[k].cell < (z == 0 ? 40.0f : 28.0f)) /* were 32 and 20 px (5 px in the main area) */
                fail_msg("%s: compare figure %d has cells of %.1f px", where, k, (double)l->cmp[k].cell);
            if (l->cmp[k].every_r != 1 || l->cmp[k].every_c != 1)
                fail_msg("%s: compare figure %d drops labels", where, k);
        }
        if (z == 0 && (!l->cmp[0].value_px || !l->cmp[1].value_px || !drawn("0.")))
            fail_msg("%s: the reference and current maps' cells of %.1f px show no numbers", where,
                     (double)l->cmp[0].cell);
        key(f, SDLK_p, 0);
    }
    /* a permuted sentence (item 10): its difference aligned by token, the
     * current map with its own row labels; still no label dropped */
    if (f->a->cmp)
        key(f, SDLK_v, 0); /* unpin */
    key(f, SDLK_p, 0); /* with P: a difference, its colour bar's ticks "−0.15" */
    f->a->ui_scale = 1.0f; /* Ctrl+Plus twice, as a teacher does: 115 % then 132.25 % */
    key(f, SDLK_EQUALS, KMOD_CTRL);
    key(f, SDLK_EQUALS, KMOD_CTRL);
    assert_true(fabsf(f->a->ui_scale - 1.3225f) < 1e-4f);
    key(f, SDLK_v, 0);
    app_set_sentence(f->a, "time on station the left train the");
    for (int z = 0; z < 2; z++) {
        draw_at(f, sizes[z].w, sizes[z].h);
        const ViewLayout *l = &f->a->layout;
        assert_non_null(f->a->vs.cmp_diff);
        print_message("%dx%d permuted: cells %.1f %.1f %.1f, side %d\n", sizes[z].w, sizes[z].h,
                      (double)l->cmp[0].cell, (double)l->cmp[1].cell, (double)l->cmp[2].cell, l->side_shown);
        for (int k = 0; k < 3; k++)
            if (l->cmp[k].every_r != 1 || l->cmp[k].every_c != 1)
                fail_msg("%dx%d at 132 %%, permuted: compare figure %d (cells %.1f px) drops labels",
                         sizes[z].w, sizes[z].h, k, (double)l->cmp[k].cell);
        check_texts(l, "permuted");
    }
    /* one word changed (issue 38, item 7): the same number of tokens,
     * compared position by position; the three grids full size with every
     * label, their rows on one line, and what differs said whole (wrapped,
     * not cut), at 100 % and at 132 % */
    key(f, SDLK_v, 0); /* unpin */
    app_set_sentence(f->a, SENTENCE);
    for (int pct = 0; pct < 2; pct++) {
        f->a->ui_scale = pct ? 1.3225f : 1.0f;
        key(f, SDLK_v, 0);
        app_set_sentence(f->a, "the train left the station on soon"); /* typed: test_compare.c */
        for (int z = 0; z < 2; z++) {
            draw_at(f, sizes[z].w, sizes[z].h);
            const ViewLayout *l = &f->a->layout;
            char where[60], shown[8000];
            snprintf(where, sizeof where, "%dx%d at %s, a word changed", sizes[z].w, sizes[z].h, pct ? "132 %" : "100 %");
            if (!f->a->vs.cmp_diff)
                fail_msg("%s: no difference map (%s)", where, f->a->vs.cmp_what);
            print_message("%s: cells %.1f %.1f %.1f\n", where, (double)l->cmp[0].cell, (double)l->cmp[1].cell,
                          (double)l->cmp[2].cell);
            for (int k = 0; k < 3; k++) {
                if (l->cmp[k].every_r != 1 || l->cmp[k].every_c != 1)
                    fail_msg("%s: compare figure %d drops labels", where, k);
                if (l->cmp[k].cell < (z == 0 || pct ? 25.0f : 18.0f)) /* 1024 × 768 at 100 %: beside the editor */
                    fail_msg("%s: compare figure %d has cells of %.1f px", where, k, (double)l->cmp[k].cell);
                if (l->cmp[k].grid.y != l->cmp[1].grid.y || l->cmp[k].cell != l->cmp[1].cell)
                    fail_msg("%s: figure %d's rows are not the current map's", where, k);
            }
            texts_in(l->heatmap, shown, sizeof shown);
            if (!strstr(shown, f->a->vs.cmp_what))
                fail_msg("%s: \"%s\" not drawn whole: %s", where, f->a->vs.cmp_what, shown);
            check_texts(l, where);
        }
        key(f, SDLK_v, 0); /* unpin */
        app_set_sentence(f->a, SENTENCE);
    }
}

/* Show side panel p (Ctrl+Tab) at w × h. */
static void show_side(Fix *f, int p, int w, int h)
{
    draw_at(f, w, h);
    for (int k = 0; k < 4 && f->a->layout.side_shown != p; k++) {
        key(f, SDLK_TAB, KMOD_CTRL);
        draw_at(f, w, h);
    }
    assert_int_equal(f->a->layout.side_shown, p);
}

/* Small text at 132 % (issue 28, item 11), at 1280 × 800 and 1024 × 768:
 * the step view's title is not cut (it wraps: the key's name whole), and
 * teach mode's buttons are all there on as many rows as they need, each
 * label inside its button. */
static void test_projector_texts(void **state)
{
    Fix *f = *state;
    f->a->ui_scale = 1.32f;
    for (int z = 0; z < 2; z++) {
        int w = sizes[z].w, h = sizes[z].h;
        for (int k = 0; k < 8 && f->a->vs.query != 1; k++)
            key(f, f->a->vs.query > 1 ? SDLK_UP : SDLK_DOWN, 0); /* query "train" */
        for (int k = 0; k < 8 && f->a->vs.key != 4; k++)
            key(f, SDLK_RIGHT, 0); /* key "station" */
        show_side(f, SIDE_STEP, w, h);
        char all[8000];
        texts_in(f->a->layout.step, all, sizeof all);
        if (!strstr(all, "\xE2\x80\x9Cstation\xE2\x80\x9D"))
            fail_msg("%dx%d at 132 %%: the step view's title is cut: %s", w, h, all);
        key(f, SDLK_w, 0);
        show_side(f, SIDE_STEP, w, h);
        const ViewLayout *l = &f->a->layout;
        for (int b = 0; b < TBTN_COUNT; b++) {
            if (l->teach_btn[b].w <= 0 || !inside(l->teach_btn[b], l->step))
                fail_msg("%dx%d at 132 %%: teach button %d is cut or missing", w, h, b);
            for (int c = 0; c < b; c++)
                if (!apart(l->teach_btn[b], l->teach_btn[c]))
                    fail_msg("%dx%d at 132 %%: teach buttons %d and %d overlap", w, h, c, b);
        }
        int found = 0;
        for (int k = 0; k < n_boxes && k < MAX_BOXES; k++)
            if (strcmp(boxes[k].text, "[5] current map") == 0) {
                found = 1;
                if (!inside(boxes[k].box, l->teach_btn[TBTN_CURRENT]))
                    fail_msg("%dx%d at 132 %%: \"[5] current map\" leaves its button", w, h);
            }
        assert_true(found);
        key(f, SDLK_w, 0);
    }
}

/* The help on a projector: at 132 % in teach mode its lines do not fit at
 * a readable size, so it has pages (PageDown, PageUp); every line is on one
 * page, every text inside the window and at least the readable size. */
static void test_help_pages(void **state)
{
    Fix *f = *state;
    app_apply(f->a, &(AppAction){ACT_TEACH, 0, 0, 0.0f});
    f->a->ui_scale = 1.32f;
    key(f, SDLK_F1, 0);
    assert_true(f->a->vs.help);
    const ViewState *vs = &f->a->vs;
    int n = vs->n_help_lines, pages = 0, *seen = calloc((size_t)n, sizeof *seen);
    assert_non_null(seen);
    for (int p = 0; p < 4; p++) {
        draw_at(f, 1280, 800);
        char label[40];
        snprintf(label, sizeof label, "page %d of ", p + 1);
        if (!drawn(label))
            break;
        pages++;
        for (int k = 0; k < n; k++)
            seen[k] += drawn(vs->help_lines[k].what);
        for (int b = 0; b < n_boxes; b++)
            if (boxes[b].box.y + boxes[b].box.h > 800 || boxes[b].box.x + boxes[b].box.w > 1280)
                fail_msg("\"%s\" leaves the window", boxes[b].text);
        key(f, SDLK_PAGEDOWN, 0);
    }
    assert_true(pages >= 2);
    for (int k = 0; k < n; k++)
        if (seen[k] != 1)
            fail_msg("help line \"%s\" on %d pages", vs->help_lines[k].what, seen[k]);
    key(f, SDLK_PAGEUP, 0);
    key(f, SDLK_PAGEUP, 0);
    key(f, SDLK_PAGEUP, 0);
    key(f, SDLK_PAGEUP, 0);
    draw_at(f, 1280, 800);
    assert_true(drawn("page 1 of "));
    free(seen);
    f->a->ui_scale = 1.0f;
}

/* A 2000-character word (issue 28, item 14): its labels are cut to their
 * room; the turned key label does not run over the panel's title, the
 * step view's title keeps the key's name and stays in the window. */
static void test_long_word(void **state)
{
    Fix *f = *state;
    char text[2100] = "the ";
    memset(text + 4, 'x', 2000);
    snprintf(text + 2004, sizeof text - 2004, " train left");
    app_set_sentence(f->a, text);
    assert_int_equal(f->m.T, 4);
    f->a->vs.query = 1;
    f->a->vs.key = 2;
    check_scene(f, "a 2000-character word");
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
            f->a->ui_scale = scales[k];
            draw_at(f, sizes[z].w, sizes[z].h);
            int title_bottom = -1;
            for (int b = 0; b < n_boxes && b < MAX_BOXES; b++)
                if (strncmp(boxes[b].text, "Attention weights", 17) == 0)
                    title_bottom = boxes[b].box.y + boxes[b].box.h;
            assert_true(title_bottom > 0);
            for (int b = 0; b < n_boxes && b < MAX_BOXES; b++)
                if (boxes[b].angle != 0.0 && boxes[b].box.y < title_bottom)
                    fail_msg("%dx%d at %.0f%%: the turned label \"%.20s…\" (top %d) runs over the panel "
                             "title (bottom %d)", sizes[z].w, sizes[z].h, (double)(scales[k] * 100),
                             boxes[b].text, boxes[b].box.y, title_bottom);
        }
    f->a->ui_scale = 1.0f;
    draw_at(f, 1280, 800);
    char all[8000];
    texts_in(f->a->layout.step, all, sizeof all);
    if (!strstr(all, "key \xE2\x80\x9Ctrain\xE2\x80\x9D"))
        fail_msg("the step view's title lost the key: %s", all);
}

/* The weight editor on a projector (issue 28, item 11): at 1024 × 768 and
 * 1280 × 800 after Ctrl+Plus twice (and at 100 %), every one of the 16
 * feature names at once, left of its own row of the grid, whole or cut to
 * 3 letters or more, each at the readable size (the help's smallest: 12 px
 * at 100 %) or larger. */
static void test_editor_names(void **state)
{
    Fix *f = *state;
    for (int z = 0; z < 2; z++)
        for (int big = 0; big < 2; big++) {
            f->a->ui_scale = 1.0f;
            if (big) {
                key(f, SDLK_EQUALS, KMOD_CTRL);
                key(f, SDLK_EQUALS, KMOD_CTRL);
            }
            int w = sizes[z].w, h = sizes[z].h;
            draw_at(f, w, h);
            if (f->a->layout.side_shown >= 0) /* the editor is a tab: Ctrl+Tab to it */
                show_side(f, SIDE_EDITOR, w, h);
            assert_true(f->a->layout.editor.w > 0);
            const ViewLayout *l = &f->a->layout;
            int px = (int)lroundf(12.0f * f->a->vs.scale);
            TTF_Font *font = TTF_OpenFont(test_fonts()->path, px);
            assert_non_null(font);
            int readable = TTF_FontHeight(font);
            TTF_CloseFont(font);
            assert_int_equal(l->edit_rows, 16);
            for (int i = 0; i < 16; i++) {
                const char *name = embed_dim_name(f->m.table, i);
                int y0 = l->edit_grid.y + (int)(i * l->edit_cell_h);
                int y1 = l->edit_grid.y + (int)((i + 1) * l->edit_cell_h);
                int found = 0;
                for (int b = 0; b < n_boxes && b < MAX_BOXES && !found; b++) {
                    const TextBox *t = &boxes[b];
                    size_t n = strlen(t->text);
                    int cy = t->box.y + t->box.h / 2;
                    if (t->angle == 0.0 && n >= 3 && strncmp(t->text, name, n) == 0 &&
                        t->box.x + t->box.w <= l->edit_grid.x && t->box.x >= l->editor.x && cy >= y0 &&
                        cy <= y1) {
                        found = 1;
                        if (t->box.h < readable)
                            fail_msg("%dx%d at %.0f%%: \"%s\" drawn %d px high, under the readable %d", w, h,
                                     (double)(f->a->vs.scale * 100), t->text, t->box.h, readable);
                    }
                }
                if (!found)
                    fail_msg("%dx%d at %.0f%%: the feature name \"%s\" is not left of its row (%d-%d)", w, h,
                             (double)(f->a->vs.scale * 100), name, y0, y1);
            }
            check_texts(l, "editor names");
        }
    f->a->ui_scale = 1.0f;
}

/* The help at 1024 × 768 after Ctrl+Plus twice (issue 28, item 11): too
 * wide for one column at the readable size, its texts wrap (no smaller
 * text): every line begins on exactly one page, every text drawn at the
 * readable size or larger and inside the window. */
static void test_help_1024(void **state)
{
    Fix *f = *state;
    f->a->ui_scale = 1.0f;
    key(f, SDLK_EQUALS, KMOD_CTRL);
    key(f, SDLK_EQUALS, KMOD_CTRL);
    key(f, SDLK_F1, 0);
    assert_true(f->a->vs.help);
    const ViewState *vs = &f->a->vs;
    TTF_Font *font = TTF_OpenFont(test_fonts()->path, (int)lroundf(12.0f * vs->scale));
    assert_non_null(font);
    int readable = TTF_FontHeight(font);
    TTF_CloseFont(font);
    int n = vs->n_help_lines, pages = 0, *seen = calloc((size_t)n, sizeof *seen);
    assert_non_null(seen);
    for (int p = 0; p < 6; p++) {
        draw_at(f, 1024, 768);
        char label[40];
        snprintf(label, sizeof label, "page %d of ", p + 1);
        if (!drawn(label))
            break;
        pages++;
        for (int k = 0; k < n; k++) {
            char start[24]; /* its first words: a wrapped text's first line starts so */
            snprintf(start, sizeof start, "%.20s", vs->help_lines[k].what);
            seen[k] += drawn(start);
        }
        for (int b = 0; b < n_boxes && b < MAX_BOXES; b++) {
            if (boxes[b].box.y + boxes[b].box.h > 768 || boxes[b].box.x + boxes[b].box.w > 1024)
                fail_msg("\"%s\" leaves the window", boxes[b].text);
            if (boxes[b].box.h < readable)
                fail_msg("\"%s\" is %d px high, under the readable %d", boxes[b].text, boxes[b].box.h, readable);
        }
        key(f, SDLK_PAGEDOWN, 0);
    }
    assert_true(pages >= 2);
    for (int k = 0; k < n; k++)
        if (seen[k] != 1)
            fail_msg("help line \"%s\" on %d pages", vs->help_lines[k].what, seen[k]);
    free(seen);
    f->a->ui_scale = 1.0f;
}

/* Show nano-sort on text through the source's own entry (the command line's). */
static void show_model(Fix *f, const char *text)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    setenv("ATTNVIZ_DATADIR", "assets", 1); /* nano-sort */
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    assert_int_equal(source_model.show(f->a, g), 0);
    assert_true(wait_maps(f));
}

/* The help of a model (issue 38, item 3): at 1280 × 800 and 1024 × 768, at
 * 100 % and after Ctrl+Plus twice, every line the key table gives the
 * model is on exactly one page (PageDown turns them, the title and the
 * page line say so), every text of the overlay inside its box and the box
 * inside the window; PageDown past the last page and one PageUp show the
 * page before the last. */
static void test_help_model(void **state)
{
    Fix *f = *state;
    show_model(f, "CBABBC");
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int big = 0; big < 2; big++) {
            int w = sizes[z].w, h = sizes[z].h;
            f->a->ui_scale = 1.0f;
            if (big) {
                key(f, SDLK_EQUALS, KMOD_CTRL);
                key(f, SDLK_EQUALS, KMOD_CTRL);
            }
            key(f, SDLK_F1, 0);
            assert_true(f->a->vs.help);
            const ViewState *vs = &f->a->vs;
            int n = vs->n_help_lines, pages = 0, *seen = calloc((size_t)n, sizeof *seen);
            assert_non_null(seen);
            for (int p = 0; p < 8; p++) {
                draw_at(f, w, h);
                const ViewLayout *l = &f->a->layout;
                SDL_Rect win = {0, 0, w, h};
                if (!inside(l->help_box, win))
                    fail_msg("%dx%d at %d%%: the help's box leaves the window", w, h, big ? 132 : 100);
                int title = -1;
                for (int b = 0; b < n_boxes && b < MAX_BOXES; b++)
                    if (strncmp(boxes[b].text, "attnviz keys", 12) == 0)
                        title = b;
                assert_true(title >= 0);
                for (int b = title; b < n_boxes && b < MAX_BOXES; b++)
                    if (!inside(boxes[b].box, l->help_box))
                        fail_msg("%dx%d at %d%%, page %d: \"%s\" leaves the help's box", w, h, big ? 132 : 100,
                                 p + 1, boxes[b].text);
                for (int k = 0; k < n; k++) {
                    char start[24]; /* its first words: a wrapped text's first line starts so */
                    snprintf(start, sizeof start, "%.20s", vs->help_lines[k].what);
                    seen[k] += drawn(start);
                }
                pages++;
                if (l->help_pages <= 1)
                    break;
                char label[40];
                snprintf(label, sizeof label, "page %d of %d", p + 1, l->help_pages);
                assert_true(drawn(label));
                assert_non_null(strstr(boxes[title].text, "PageDown"));
                if (p + 1 == l->help_pages)
                    break;
                key(f, SDLK_PAGEDOWN, 0);
            }
            for (int k = 0; k < n; k++)
                if (seen[k] != 1)
                    fail_msg("%dx%d at %d%%: help line \"%s\" on %d of %d pages", w, h, big ? 132 : 100,
                             vs->help_lines[k].what, seen[k], pages);
            if (pages > 1) { /* past the last page: one PageUp goes back one */
                key(f, SDLK_PAGEDOWN, 0);
                key(f, SDLK_PAGEUP, 0);
                draw_at(f, w, h);
                char label[40];
                snprintf(label, sizeof label, "page %d of %d", pages - 1, pages);
                assert_true(drawn(label));
            }
            free(seen);
            key(f, SDLK_ESCAPE, 0);
            assert_false(f->a->vs.help);
        }
    f->a->ui_scale = 1.0f;
}

/* Pixels of colour c in r of surf. */
static int count_color(SDL_Surface *surf, SDL_Rect r, Rgb c)
{
    int n = 0;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) {
            Uint8 rgb[3];
            SDL_GetRGB(((Uint32 *)surf->pixels)[y * surf->pitch / 4 + x], surf->format, rgb, rgb + 1, rgb + 2);
            n += rgb[0] == c.r && rgb[1] == c.g && rgb[2] == c.b;
        }
    return n;
}

/* Inside a model's head on a projector (issue 38, item 4): at 1280 × 800
 * and 1024 × 768, at 100 % and after Ctrl+Plus twice (the step view a tab
 * of the side area, Ctrl+Tab to it), the q and k bars (the positive and
 * negative colours) in the step view's left two thirds, q∘k's in its right
 * third; not the text alone. */
static void test_inside_head_bars(void **state)
{
    Fix *f = *state;
    show_model(f, "CBABBC");
    assert_true(wait_panel(f, "What comes next after"));
    const AttnTheme *th = theme_get(f->a->vs.dark);
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int big = 0; big < 2; big++) {
            int w = sizes[z].w, h = sizes[z].h;
            f->a->ui_scale = 1.0f;
            if (big) {
                key(f, SDLK_EQUALS, KMOD_CTRL);
                key(f, SDLK_EQUALS, KMOD_CTRL);
            }
            draw_at(f, w, h);
            if (f->a->layout.side_shown >= 0)
                show_side(f, SIDE_STEP, w, h);
            SDL_Surface *surf = draw_surface(f, w, h);
            SDL_Rect p = f->a->layout.step;
            assert_true(p.w > 0 && p.h > 0);
            /* the bars are right of the text in a wide panel, under it in a tall one */
            SDL_Rect qk = p, prod = p;
            if (p.h * 2 <= p.w) {
                qk.x = p.x + p.w * 9 / 20;
                qk.w = p.x + p.w - qk.x;
            }
            qk.w = qk.w * 2 / 3;
            prod.x = qk.x + qk.w;
            prod.w = p.x + p.w - prod.x;
            int pos = count_color(surf, qk, th->pos), neg = count_color(surf, qk, th->neg);
            int pr = count_color(surf, prod, th->accent) + count_color(surf, prod, th->neg) +
                     count_color(surf, prod, th->pos);
            SDL_FreeSurface(surf);
            if (pos < 50 || neg < 50 || pr < 50)
                fail_msg("%dx%d at %d%%: the step view's bars: %d, %d (q and k: positive, negative), %d (q\xE2\x88\x98k) "
                         "pixels", w, h, big ? 132 : 100, pos, neg, pr);
        }
    f->a->ui_scale = 1.0f;
}

/* The side panel's every layer and head (issue 38, item 8): an attention
 * file of 12 × 12 heads (GPT-2 small's) over 40 tokens at 1280 × 800 and
 * 1024 × 768: every map whole inside the panel; of 16 × 32 (Llama 3.2
 * 1B's), those left out named in the panel's title with G. */
static void test_overview_every_head(void **state)
{
    Fix *f = *state;
    static const int shapes[2][2] = {{12, 12}, {16, 32}};
    enum { T = 40 };
    char dir[] = "/tmp/attnviz-test-overview-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/maps.npy", dir);
    for (int k = 0; k < 2; k++) {
        int L = shapes[k][0], H = shapes[k][1];
        float *v = calloc((size_t)L * H * T * T, sizeof *v);
        assert_non_null(v);
        for (int m = 0; m < L * H; m++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j <= i; j++)
                    v[((size_t)m * T + i) * T + j] = 1.0f / (float)(i + 1);
        AttnErr err = {0};
        assert_int_equal(attn_write_attention(path, v, L, H, T, T, NULL, &err), 0);
        free(v);
        assert_int_equal(open_now(f->a, path), 0);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int w = sizes[z].w, h = sizes[z].h;
            draw_at(f, w, h);
            const ViewLayout *l = &f->a->layout;
            assert_true(l->editor.w > 0);
            assert_int_equal(l->grid_fig.L, L);
            assert_int_equal(l->grid_fig.H, H);
            for (int a = 0; a < l->overview_layers; a++)
                for (int b = 0; b < l->overview_heads; b++) {
                    FigRect r = figure_grid_map_rect(&l->grid_fig, a, b);
                    if (!inside((SDL_Rect){r.x, r.y, r.w, r.h}, l->editor))
                        fail_msg("%dx%d, %d x %d heads: map (%d, %d) leaves the panel", w, h, L, H, a + 1, b + 1);
                }
            if (H == 12 && (l->overview_layers != L || l->overview_heads != H))
                fail_msg("%dx%d: %d of 12 layers, %d of 12 heads in the panel", w, h, l->overview_layers,
                         l->overview_heads);
            if (l->overview_heads < H) {
                char want[80];
                snprintf(want, sizeof want, "heads 1\xE2\x80\x93%d of %d", l->overview_heads, H);
                int said = 0;
                for (int b = 0; b < n_boxes && b < MAX_BOXES; b++)
                    said |= strstr(boxes[b].text, want) && strstr(boxes[b].text, "G");
                if (!said)
                    fail_msg("%dx%d: %d of %d heads shown, not said", w, h, l->overview_heads, H);
            }
            for (int a = 0; a < n_boxes && a < MAX_BOXES; a++) { /* the panel's labels: whole, apart */
                SDL_Rect ba = boxes[a].box;
                SDL_Point ca = {ba.x + ba.w / 2, ba.y + ba.h / 2};
                if (!SDL_PointInRect(&ca, &l->editor))
                    continue;
                if (!inside(ba, l->editor))
                    fail_msg("%dx%d, %d x %d heads: \"%s\" leaves the panel", w, h, L, H, boxes[a].text);
                for (int b = a + 1; b < n_boxes && b < MAX_BOXES; b++) {
                    SDL_Rect x, bb = boxes[b].box;
                    SDL_Point cb = {bb.x + bb.w / 2, bb.y + bb.h / 2};
                    if (SDL_PointInRect(&cb, &l->editor) && SDL_IntersectRect(&ba, &bb, &x) && x.w > 1 && x.h > 1)
                        fail_msg("%dx%d, %d x %d heads: \"%s\" and \"%s\" overlap", w, h, L, H, boxes[a].text,
                                 boxes[b].text);
                }
            }
        }
    }
    unlink(path);
    rmdir(dir);
}

/* The model view from the back of a room (issue 38, item 10): 4 layers ×
 * 6 heads at 1280 × 800, each map's score a number as high as the status
 * bar's text; the colour bar's 0 and 1 whole inside the maps' panel. */
static void test_grid_readable(void **state)
{
    Fix *f = *state;
    enum { L = 4, H = 6, T = 8 };
    static float v[L * H * T * T];
    for (int m = 0; m < L * H; m++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++)
                v[(m * T + i) * T + j] = 1.0f / (float)(i + 1);
    char dir[] = "/tmp/attnviz-test-grid-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/maps.npy", dir);
    AttnErr err = {0};
    assert_int_equal(attn_write_attention(path, v, L, H, T, T, NULL, &err), 0);
    assert_int_equal(open_now(f->a, path), 0);
    key(f, SDLK_g, 0);
    for (int k = 0; k < 8 && !(f->a->vs.grid_score_name && strcmp(f->a->vs.grid_score_name, "self") == 0); k++)
        key(f, SDLK_i, 0); /* self: a number for every map */
    draw_at(f, 1280, 800);
    const ViewLayout *l = &f->a->layout;
    int status_h = 0, numbers = 0, zero = 0, one = 0;
    for (int b = 0; b < n_boxes && b < MAX_BOXES; b++)
        if (boxes[b].box.y >= l->status.y && boxes[b].box.h > status_h)
            status_h = boxes[b].box.h;
    assert_true(status_h > 0);
    SDL_Rect panel = {l->heatmap.x, l->heatmap.y, l->w - l->heatmap.x, l->heatmap.h};
    for (int b = 0; b < n_boxes && b < MAX_BOXES; b++) {
        const TextBox *t = &boxes[b];
        if (t->box.y >= l->status.y)
            continue;
        if ((strncmp(t->text, "0.", 2) == 0 || strcmp(t->text, "1.00") == 0) &&
            t->box.x < l->grid_fig.cb.bar.x) { /* a map's score, not the colour bar's tick */
            numbers++;
            if (t->box.h < status_h)
                fail_msg("the score \"%s\" is %d px high, the status bar's text %d", t->text, t->box.h, status_h);
        }
        if (strcmp(t->text, "0") == 0 || strcmp(t->text, "1.0") == 0) {
            *(strcmp(t->text, "0") == 0 ? &zero : &one) = 1;
            if (!inside(t->box, panel))
                fail_msg("the colour bar's \"%s\" is cut by the panel's edge", t->text);
        }
    }
    if (numbers < L * H)
        fail_msg("%d score numbers for %d maps", numbers, L * H);
    assert_true(zero && one);
    unlink(path);
    rmdir(dir);
}

/* A heatmap too small for each token's label (31 tokens at 1024 × 768
 * after Ctrl+Plus twice) says that its labels are thinned and which key
 * shows them all (issue 28, item 11: never silently); + zooms in until each
 * row has its label, and the note goes. */
static void test_thinned_labels_said(void **state)
{
    Fix *f = *state;
    app_set_sentence(f->a, "the train left the station on time and the bank of the river was closed so i "
                           "went to the shop to buy food for my cat and then home again");
    f->a->ui_scale = 1.0f;
    key(f, SDLK_EQUALS, KMOD_CTRL);
    key(f, SDLK_EQUALS, KMOD_CTRL);
    draw_at(f, 1024, 768);
    assert_true(f->a->layout.heat.every_r > 1);
    assert_true(drawn("labels thinned"));
    for (int k = 0; k < 6 && (f->a->layout.heat.every_r > 1 || f->a->layout.heat.every_c > 1); k++) {
        key(f, SDLK_EQUALS, 0);
        draw_at(f, 1024, 768);
    }
    assert_int_equal(f->a->layout.heat.every_r, 1);
    assert_int_equal(f->a->layout.heat.every_c, 1);
    assert_false(drawn("labels thinned"));
    f->a->ui_scale = 1.0f;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_sentence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_four_heads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_sentences, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_word, setup, teardown),
        cmocka_unit_test_setup_teardown(test_teach_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_view_of_the_mean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lines_long_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_projector, setup, teardown),
        cmocka_unit_test_setup_teardown(test_projector_texts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_tab_walks_the_tabs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_editor_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_1024, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inside_head_bars, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overview_every_head, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_readable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thinned_labels_said, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
