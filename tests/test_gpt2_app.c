/* The GPT-2 source in the window (issue 25), on the shipped nano-sort: the
 * text typed into the bar goes to the worker thread, the window is woken
 * when the maps come (SDL's user event), and after every scripted edit
 * (append, replace the last letter, change one in the middle, shorten) the
 * maps shown equal a full recompute of the same text bit for bit; the
 * selection, layer and head stay; the panel says what comes next. Waits
 * for conditions (the wake event, the maps), never for a fixed time alone.
 * A lesson (a text typed, layer, head, query, key and a view: every head's
 * lines, the model view sorted, the overview, the rollout) saved with
 * Ctrl+S, then the app closed without an autosave (a kill) and started
 * again: the same screen; after a change and the autosave, that too.
 * Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "attnviz/background.h"
#include "attnviz/model_source.h"
#include "attnviz/maps_shown.h"
#include "attnviz/source.h"
#include "attnviz/theme.h"
#include "attnviz/wake.h"
#include "test_app_util.h"
#include "../src/view/text.h"

#include <unistd.h>

#define SPACE_SHOWN "\xE2\x90\xA3" /* ␣: a space as the labels and messages show it */

/* Show nano-sort on text through the source's own entry (the command line's). */
static void show_model(Fix *f, const char *text)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    assert_int_equal(source_model.show(f->a, g), 0);
    assert_ptr_equal(f->a->kind, &source_model);
}

/* The maps shown (every layer and head) equal a full forward of text. */
static void assert_full_recompute(Fix *f, const char *text)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    const MapsShown *ms = f->a->kind->maps(f->a);
    const AttnFile *now = &ms->imp->f, *want = &g->im->f;
    assert_int_equal(now->Tq, want->Tq);
    assert_int_equal(now->L, want->L);
    assert_maps_equal(now, want, now->L);
    model_opened_free(g);
}

/* Inside the shown head (layer 1, head 1): the query of position i and the
 * key of j, as the forward computes them, drawn as bars right of the step
 * view's text (q and k in the positive and negative colours, q∘k in the
 * accent), their dot product in the text. */
static void inside_head(Fix *f, int i, int j)
{
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, a->text, strlen(a->text), &err), 0);
    int d = g->lm.info.d_head;
    assert_int_equal(a->vs.inside_d, d);
    assert_memory_equal(a->vs.inside_q, lm_query(&g->lm, 0, 0, i), sizeof(float) * (size_t)d);
    assert_memory_equal(a->vs.inside_k, lm_key(&g->lm, 0, 0, j), sizeof(float) * (size_t)d);
    double dot = 0.0;
    for (int c = 0; c < d; c++)
        dot += (double)a->vs.inside_q[c] * a->vs.inside_k[c];
    char want[64];
    snprintf(want, sizeof want, "= %.3f; the score", dot);
    assert_non_null(a->vs.inside_caption);
    assert_non_null(strstr(a->vs.inside_caption, want));
    model_opened_free(g);
    app_draw(a, f->r);
    const AttnTheme *th = theme_get(a->vs.dark);
    const SDL_Rect *p = &a->layout.step;
    int n[3] = {0, 0, 0}, third = p->x + p->w * 9 / 20 + (p->w * 11 / 20) * 2 / 3; /* q∘k's bars */
    for (int y = p->y; y < p->y + p->h; y++)
        for (int x = p->x + p->w / 2; x < p->x + p->w; x++) {
            Uint8 rgb[3];
            SDL_GetRGB(((Uint32 *)f->surf->pixels)[y * f->surf->pitch / 4 + x], f->surf->format, rgb, rgb + 1,
                       rgb + 2);
            Rgb c[3] = {th->pos, th->neg, th->accent};
            for (int k = 0; k < 3; k++)
                if (rgb[0] == c[k].r && rgb[1] == c[k].g && rgb[2] == c[k].b)
                    n[x < third ? k : 2]++; /* the product's bars, positive or negative, count as its */
        }
    if (!(n[0] > 50 && n[1] > 50 && n[2] > 50))
        fail_msg("bars: %d, %d (q, k: positive, negative), %d (q∘k) pixels in the step view", n[0], n[1], n[2]);
}

/* The map shown equals text's norms map (lm_map_norms of a fresh model)
 * of the layer and head shown, bit for bit. */
static void assert_norms_shown(Fix *f, const char *text)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    assert_int_equal(lm_value_norms(&g->lm, &err), 0);
    const MapsShown *ms = f->a->kind->maps(f->a);
    int T = g->ids.n;
    float *want = malloc(sizeof(float) * (size_t)T * T);
    assert_non_null(want);
    lm_map_norms(&g->lm, ms->layer, ms->head, want, (size_t)T);
    assert_int_equal(f->a->vs.map.kind, ATTN_MAP_NORMS);
    assert_int_equal(f->a->vs.map.Tq, T);
    for (int i = 0; i < T; i++)
        assert_memory_equal(f->a->vs.map.v + (size_t)i * f->a->vs.map.stride, want + (size_t)i * T,
                            sizeof(float) * (size_t)T);
    assert_int_equal(ms->thumb_maps.kind, ATTN_MAP_NORMS); /* the model view's too */
    free(want);
    model_opened_free(g);
}

/* R shows the norms (issue 37): the map, the control and the model view;
 * typing keeps them (the worker makes each keystroke's), R again the weights. */
static void test_norms(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    g->for_window = 1; /* as the command line opens it for the window: the norms made too */
    assert_int_equal(model_compute_text(g, "CBABBC", 6, &err), 0);
    assert_int_equal(source_model.show(f->a, g), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0); /* layer 2, head 2 */
    key(f, SDLK_h, 0);
    key(f, SDLK_r, 0);
    assert_norms_shown(f, "CBABBC");
    int found = 0;
    for (int k = 0; k < a->vs.n_ctl; k++)
        found |= strstr(a->vs.ctl[k].label, "[R] norms") != NULL;
    assert_true(found);
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    type(f, "A");
    assert_true(wait_maps(f));
    assert_string_equal(a->text, "CBABBCA");
    assert_norms_shown(f, "CBABBCA");
    key(f, SDLK_ESCAPE, 0);
    key(f, SDLK_r, 0);
    assert_int_equal(a->vs.map.kind, ATTN_MAP_WEIGHTS);
    assert_full_recompute(f, "CBABBCA");
}

static void test_live_edits(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    show_model(f, "CBABBC");
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.map.Tq, 6);
    assert_string_equal(a->vs.bar_label, "Text");
    /* what comes after the text: the sorter's first letter, A */
    assert_int_equal(a->vs.query, 5);
    /* the maps shown at once, the predictions when the worker has them */
    assert_true(wait_panel(f, "What comes next after"));
    assert_non_null(strstr(a->vs.no_model, "\xE2\x80\x9C" "A" "\xE2\x80\x9D"));
    inside_head(f, 5, 5);
    key(f, SDLK_l, 0); /* layer 2, head 2: kept through the edits */
    key(f, SDLK_h, 0);
    key(f, SDLK_UP, 0);
    /* append */
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    type(f, "AB");
    assert_true(wait_maps(f));
    assert_string_equal(a->text, "CBABBCAB");
    assert_int_equal(a->vs.map.Tq, 8);
    assert_full_recompute(f, "CBABBCAB");
    /* replace the last letter */
    key(f, SDLK_BACKSPACE, 0);
    type(f, "C");
    assert_true(wait_maps(f));
    assert_full_recompute(f, "CBABBCAC");
    /* change one in the middle, then shorten */
    app_set_sentence(a, "CBCBBCAC");
    assert_true(wait_maps(f));
    assert_full_recompute(f, "CBCBBCAC");
    app_set_sentence(a, "CBC");
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.map.Tq, 3);
    assert_full_recompute(f, "CBC");
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 1);
    assert_int_equal(a->vs.query, 2); /* the selection clamped to the shorter text */
    /* a quick burst of keys: only the newest text's maps are shown */
    app_set_sentence(a, "A");
    app_set_sentence(a, "AB");
    app_set_sentence(a, "ABC");
    assert_true(wait_maps(f));
    assert_full_recompute(f, "ABC");
    key(f, SDLK_ESCAPE, 0);
}

/* A slow forward shows its layers as they finish: each layer made 150 ms
 * slower, the window shows the new text's first layer before the others,
 * dimmed (stale), and its numbers are already the full recompute's; then
 * every layer. A new selection on those maps brings its predictions and
 * leaves the maps shown as they are (the same object). */
static void test_partial_layers(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    setenv("ATTNVIZ_TEST_SLOW_LAYERS_MS", "150", 1); /* read when the model is shown */
    show_model(f, "CBABBC");
    unsetenv("ATTNVIZ_TEST_SLOW_LAYERS_MS");
    assert_true(wait_maps(f));
    app_set_sentence(a, "CBABBCA");
    int seen = 0;
    for (int k = 0; k < 400 && !seen; k++) {
        loop_turn(f, 20);
        seen = a->vs.stale && a->kind->maps(a)->imp->f.Tq == 7;
    }
    assert_true(seen);
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path("nano-sort", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "CBABBCA", 7, &err), 0);
    const AttnFile *now = &a->kind->maps(a)->imp->f;
    assert_maps_equal(now, &g->im->f, 1); /* the first layer's maps */
    model_opened_free(g);
    assert_true(wait_maps(f));
    assert_full_recompute(f, "CBABBCA");
    const Imported *shown = a->kind->maps(a)->imp;
    key(f, SDLK_UP, 0); /* another query: its predictions come, the maps stay */
    assert_true(wait_panel(f, "(position 6)"));
    assert_ptr_equal(a->kind->maps(a)->imp, shown);
    assert_full_recompute(f, "CBABBCA");
}

/* The sentence's settings are not the model's: refused with a reason; the
 * help lists the model's keys; compare and the model view work on it. */
static void test_keys(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    show_model(f, "CBABBC");
    assert_true(wait_maps(f));
    key(f, SDLK_m, 0); /* the sentence's causal mask */
    assert_non_null(strstr(a->status, "its own"));
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid);
    assert_int_equal(a->vs.grid->L, 3);
    key(f, SDLK_g, 0);
    key(f, SDLK_v, 0); /* pin head 1, then head 2 */
    key(f, SDLK_h, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.cmp_diff);
    assert_non_null(strstr(a->vs.cmp_what, "head 1 vs head 2"));
}

/* What comes next follows typing: with the query on the last token, it
 * stays the last token as letters are typed at the end ("(position N)"
 * follows); Up and Down move the query while the bar is edited; End selects
 * the last row, Home the first. */
static void test_query_follows_typing(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    show_model(f, "CBABBC");
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.query, 5);
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    type(f, "A");
    assert_true(wait_maps(f));
    type(f, "B");
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.map.Tq, 8);
    assert_int_equal(a->vs.query, 7);
    assert_true(wait_panel(f, "(position 8)"));
    key(f, SDLK_UP, 0); /* still editing: the query moves, the text stays */
    assert_true(a->vs.sentence_focus);
    assert_int_equal(a->vs.query, 6);
    assert_string_equal(a->text, "CBABBCAB");
    assert_true(wait_panel(f, "(position 7)"));
    type(f, "C"); /* not on the last row: it stays where it is */
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.query, 6);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    assert_int_equal(a->vs.query, 8);
    key(f, SDLK_ESCAPE, 0);
    key(f, SDLK_HOME, 0);
    assert_int_equal(a->vs.query, 0);
    key(f, SDLK_END, 0);
    assert_int_equal(a->vs.query, 8);
    assert_true(wait_panel(f, "(position 9)"));
}

/* Characters nano-sort's vocabulary (A, B, C) lacks are named in the
 * status bar as they are typed, each once, and said to have no token; a
 * text of nothing else says so instead of "type some text"; a text the
 * vocabulary covers clears the message. */
/* The model view's title in its panel at a large interface size
 * (issue 38): the keys' hints that do not fit are left out, the title
 * ("Every layer … marked: induction") whole and inside the panel, not cut
 * at its edge. */
static void test_titles_fit(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    show_model(f, "CBABBC");
    assert_true(wait_maps(f));
    key(f, SDLK_g, 0);
    for (int k = 0; k < 3; k++)
        key(f, SDLK_EQUALS, KMOD_CTRL);
    static TextBox boxes[2048];
    int n = 0, found = 0;
    text_record(boxes, 2048, &n);
    app_draw(a, f->r);
    text_record(NULL, 0, NULL);
    const ViewLayout *l = &a->layout;
    SDL_Rect last = l->editor.w ? l->editor : l->lines;
    int right = last.x + last.w; /* the model view's panel's right edge */
    for (int b = 0; b < n && b < 2048; b++)
        if (strncmp(boxes[b].text, "Every layer (rows) and head (columns), marked: induction", 56) == 0) {
            found++;
            if (boxes[b].box.x + boxes[b].box.w >= right - 2)
                fail_msg("at %.0f %% the title runs to the panel's edge (%d of %d): %s", a->ui_scale * 100.0,
                         boxes[b].box.x + boxes[b].box.w, right, boxes[b].text);
        }
    assert_int_equal(found, 1);
}

static void test_left_out(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    show_model(f, "CBABBC");
    assert_true(wait_maps(f));
    assert_null(strstr(a->status, "no token"));
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    type(f, "X ab");
    assert_true(wait_maps(f));
    assert_string_equal(a->text, "CBABBCX ab");
    assert_int_equal(a->vs.map.Tq, 6);
    assert_non_null(strstr(a->status, "\xE2\x80\x9CX\xE2\x80\x9D, \xE2\x80\x9C" SPACE_SHOWN "\xE2\x80\x9D, "
                                      "\xE2\x80\x9C" "a\xE2\x80\x9D, \xE2\x80\x9C" "b\xE2\x80\x9D"));
    assert_non_null(strstr(a->status, "nano-sort's vocabulary has no token for them"));
    type(f, "aX"); /* each character named once */
    assert_null(strstr(strstr(a->status, "\xE2\x80\x9C" "a") + 1, "\xE2\x80\x9C" "a"));
    key(f, SDLK_u, KMOD_CTRL);
    type(f, "cb a");
    assert_null(strstr(a->status, "type some text"));
    assert_non_null(strstr(a->status, "no tokens"));
    assert_non_null(strstr(a->status, "vocabulary has no token for \xE2\x80\x9C" "c\xE2\x80\x9D"));
    key(f, SDLK_u, KMOD_CTRL);
    type(f, "CAB");
    assert_true(wait_maps(f));
    assert_null(strstr(a->status, "no token"));
    key(f, SDLK_ESCAPE, 0);
}

/* Ctrl+O on a folder that is no model: the status says what a model folder
 * holds, the model on screen stays. */
static void test_not_a_model_folder(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-not-model-XXXXXX";
    assert_non_null(mkdtemp(dir));
    show_model(f, "CBA");
    assert_true(wait_maps(f));
    assert_int_equal(open_now(a, dir), -1);
    assert_int_equal(a->status_err, 1);
    assert_non_null(strstr(a->status, dir));
    assert_non_null(strstr(a->status, "not a model folder: no config.json"));
    assert_null(strstr(a->status, "is a directory"));
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, "CBA");
    rmdir(dir);
}

/* A session: the model's folder, its text, the layer, head and view; opened
 * again after another source, it computes the text and shows them. */
static void test_session(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-gpt2-session-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.json", dir);
    show_model(f, "ACBBA");
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0);
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_UP, 0);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    assert_ptr_not_equal(a->kind, &source_model);
    int rc = open_now(a, path);
    if (rc < 0)
        fprintf(stderr, "%s\n", a->status);
    assert_int_equal(rc, 0);
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, "ACBBA");
    assert_true(wait_maps(f));
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->layer, 2);
    assert_int_equal(ms->head, 1);
    assert_int_equal(a->vs.query, 3);
    assert_full_recompute(f, "ACBBA");
    unlink(path);
    rmdir(dir);
}

/* The window's pixels above the status bar (which says "saved" or
 * "restored"), as a copy. */
static Uint32 *screen_copy(Fix *f)
{
    app_draw(f->a, f->r);
    int rows = f->a->layout.status.y, pitch = f->surf->pitch;
    Uint32 *c = malloc((size_t)rows * pitch + 1);
    assert_non_null(c);
    memcpy(c, f->surf->pixels, (size_t)rows * pitch);
    return c;
}

/* The app closed without an autosave (a kill), then started again as a
 * plain start does: the sentence's state, then what was shown over it;
 * later: on a thread that must not wait (the threaded page's main thread),
 * where the restore ends in the loop's tick after its open, not inside
 * app_restore_shown. */
static void restart_as(Fix *f, const char *autosave, int later)
{
    AppState *a = f->a;
    view_destroy(a->view);
    app_free(a);
    assert_int_equal(app_init(a, &f->m, &f->o, &f->sl), 0);
    AttnErr err = {0};
    a->view = view_create(f->r, test_fonts(), &err);
    assert_non_null(a->view);
    snprintf(a->autosave_path, sizeof a->autosave_path, "%s", autosave);
    bg_set_may_wait(!later);
    assert_int_equal(app_restore_shown(a), 0);
    if (later) {
        assert_true(app_opening(a)); /* not waited for */
        assert_ptr_not_equal(a->kind, &source_model);
        assert_int_equal(app_open_wait(a), 0); /* as the loop's ticks */
        bg_set_may_wait(1);
    }
    assert_ptr_equal(a->kind, &source_model);
    assert_true(wait_maps(f));
    assert_true(wait_panel(f, "What comes next after"));
}

static void restart(Fix *f, const char *autosave)
{
    restart_as(f, autosave, 0);
}

/* What a lesson shows, for comparing before and after. */
typedef struct Shown {
    char text[64];
    int layer, head, rollout, hide, grid, score, sorted, score_view, every_head, query, key, dark, cscale, cmap, side;
    int ov_cscale;
    unsigned char on[3];
    float ui;
} Shown;

static void shown_now(const AppState *a, Shown *w)
{
    const MapsShown *ms = a->kind->maps(a);
    memset(w, 0, sizeof *w);
    snprintf(w->text, sizeof w->text, "%s", a->text);
    *w = (Shown){.layer = ms->layer, .head = ms->head, .rollout = ms->rollout, .hide = ms->hide_special,
                 .grid = ms->grid, .score = ms->score, .sorted = ms->sorted, .score_view = ms->score_view,
                 .every_head = ms->every_head, .query = a->vs.query, .key = a->vs.key, .dark = a->vs.dark,
                 .cscale = (int)a->vs.cscale, .cmap = (int)a->vs.cmap, .side = (int)a->vs.side,
                 .ov_cscale = ms->ov_cscale, .ui = a->ui_scale};
    snprintf(w->text, sizeof w->text, "%s", a->text);
    for (int h = 0; h < 3; h++)
        w->on[h] = ms->head_on ? ms->head_on[h] : 1; /* none yet: every head on */
}

/* After a restart: the state and the window above the status bar are
 * before's and pix's (bytes of it; else fail with what), the status bar
 * says said, and Ctrl+S writes session. */
static void assert_restored(Fix *f, const Shown *before, const Uint32 *pix, size_t bytes, const char *said,
                            const char *session, const char *what)
{
    Shown after;
    shown_now(f->a, &after);
    assert_memory_equal(before, &after, sizeof after);
    Uint32 *again = screen_copy(f);
    int differs = memcmp(pix, again, bytes) != 0;
    free(again);
    if (differs)
        fail_msg("%s", what);
    assert_non_null(strstr(f->a->status, said));
    assert_string_equal(f->a->session_path, session);
}

/* A lesson: layer 3, head 2, a text typed, a query and key picked, then
 * the keys of one view (keys, n of them), at 132 %. */
static void lesson(Fix *f, const SDL_Keycode *keys, const Uint16 *mods, int n)
{
    show_model(f, "CBABBC");
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0);
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    type(f, "AB");
    key(f, SDLK_ESCAPE, 0);
    assert_true(wait_maps(f));
    key(f, SDLK_UP, 0);
    key(f, SDLK_UP, 0);
    key(f, SDLK_RIGHT, 0);
    key(f, SDLK_RIGHT, 0);
    key(f, SDLK_EQUALS, KMOD_CTRL);
    key(f, SDLK_EQUALS, KMOD_CTRL);
    key(f, SDLK_d, 0);
    key(f, SDLK_c, 0);
    for (int k = 0; k < n; k++)
        key(f, keys[k], mods[k]);
    assert_true(wait_panel(f, "What comes next after"));
}

/* Ctrl+S asks for a name (Enter keeps the default, in the folder the
 * program runs in); killed after, a plain start shows the same screen;
 * then a change, Ctrl+Q's autosave and a plain start: the change too. */
static void saved_killed_restored(Fix *f, const SDL_Keycode *keys, const Uint16 *mods, int n)
{
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-lesson-XXXXXX", autosave[200], saved[200], cwd[1024], data[1100];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(data, sizeof data, "%s/assets", cwd);
    setenv("ATTNVIZ_DATADIR", data, 1);
    snprintf(autosave, sizeof autosave, "%s/autosave.json", dir);
    snprintf(saved, sizeof saved, "%s/attnviz-session.json", dir);
    lesson(f, keys, mods, n);
    snprintf(a->autosave_path, sizeof a->autosave_path, "%s", autosave);
    assert_int_equal(chdir(dir), 0);
    key(f, SDLK_s, KMOD_CTRL);
    assert_non_null(a->vs.prompt);
    assert_string_equal(a->prompt_buf, "attnviz-session.json");
    key(f, SDLK_RETURN, 0);
    assert_int_equal(chdir(cwd), 0);
    if (a->status_err)
        fail_msg("Ctrl+S: %s", a->status);
    assert_true(access(saved, R_OK) == 0);
    Shown before, after;
    shown_now(a, &before);
    assert_string_equal(before.text, "CBABBCAB");
    assert_int_equal(before.layer, 2);
    Uint32 *pix = screen_copy(f);
    size_t bytes = (size_t)a->layout.status.y * f->surf->pitch;

    restart(f, autosave); /* kill -9, a plain start */
    assert_int_equal(a->layout.status.y * f->surf->pitch, (int)bytes);
    assert_restored(f, &before, pix, bytes, "as you last saved it", saved, /* Ctrl+S goes on writing it */
                    "the restored window differs from the one saved");
    restart_as(f, autosave, 1); /* the same where the start may not wait */
    assert_restored(f, &before, pix, bytes, "as you last saved it", saved,
                    "the window restored after its open differs from the one saved");

    int cmap = before.cmap;
    key(f, SDLK_c, 0); /* a change, then the autosave */
    shown_now(a, &before);
    assert_int_not_equal(before.cmap, cmap);
    assert_true(a->unsaved); /* the timer's autosave writes it (a kill after it: the same) */
    int wait_ms;
    app_tick(a, a->autosave_at + APP_AUTOSAVE_MS, &wait_ms);
    assert_false(a->unsaved);
    free(pix);
    pix = screen_copy(f);
    restart(f, autosave);
    assert_restored(f, &before, pix, bytes, "unsaved work", "", /* the saved file holds the older state */
                    "the window restored after Ctrl+Q differs");
    free(pix);

    /* the session on the command line (main.c's window_session) opens as
     * Ctrl+O does: the same screen as a restart from it */
    restart(f, autosave);
    assert_int_equal(open_now(a, saved), 0);
    assert_true(wait_maps(f));
    assert_true(wait_panel(f, "What comes next after"));
    shown_now(a, &after);
    assert_int_equal(after.layer, 2);
    assert_string_equal(after.text, "CBABBCAB");

    setenv("ATTNVIZ_DATADIR", "assets", 1);
    char side[300];
    snprintf(side, sizeof side, "%s/shown.json", dir);
    unlink(side);
    snprintf(side, sizeof side, "%s.from", autosave);
    unlink(side);
    unlink(autosave);
    unlink(saved);
    assert_int_equal(rmdir(dir), 0);
}

/* The head view with every head's lines, head 2's switched off, E. */
static void test_lesson_lines(void **state)
{
    static const SDL_Keycode keys[] = {SDLK_e, SDLK_i, SDLK_i, SDLK_q, SDLK_2, SDLK_COMMA, SDLK_TAB};
    static const Uint16 mods[] = {0, 0, 0, 0, KMOD_SHIFT, 0, KMOD_CTRL};
    Fix *f = *state;
    saved_killed_restored(f, keys, mods, 7);
    assert_int_not_equal(f->a->vs.side, SIDE_LINES); /* Ctrl+Tab's tab came back */
}

/* The model view sorted by a score (Y), then its overview (U) with its
 * own colour scale (Shift+C there: 0 to the largest score). */
static void test_lesson_overview(void **state)
{
    static const SDL_Keycode keys[] = {SDLK_i, SDLK_y, SDLK_u, SDLK_c};
    static const Uint16 mods[] = {KMOD_SHIFT, 0, 0, KMOD_SHIFT};
    Fix *f = *state;
    saved_killed_restored(f, keys, mods, 4);
    assert_int_equal(f->a->kind->maps(f->a)->ov_cscale, CSCALE_MAX);
}

/* The rollout (O) in the model view (G). */
static void test_lesson_rollout(void **state)
{
    static const SDL_Keycode keys[] = {SDLK_o, SDLK_g};
    static const Uint16 mods[] = {0, 0};
    saved_killed_restored(*state, keys, mods, 2);
}

static int gpt2_group_setup(void **state)
{
    setenv("ATTNVIZ_DATADIR", "assets", 1);
    return group_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_live_edits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_norms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_layers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_model_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_follows_typing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_titles_fit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lesson_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lesson_overview, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lesson_rollout, setup, teardown),
    };
    return cmocka_run_group_tests(tests, gpt2_group_setup, group_teardown);
}
