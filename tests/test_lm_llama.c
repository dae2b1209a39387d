/* The Llama family through the model source (issue 27): a Llama fixture's
 * weights (tests/fixtures/llama, F32, F16, BF16, sharded, grouped-query)
 * beside a tokenizer opened with model_open_path, as `--model DIR` does;
 * the text's maps, vectors and predictions are exactly the runtime's (core/arch_llama.c) on
 * the same ids (the forward itself is checked against its float64
 * reference by test_llama and test_llama_io); a tokenizer.json's BOS first. In the window: the maps
 * follow typing, equal to a full recompute, and the model view brackets
 * the heads that share a key-value head. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <glob.h>
#include <unistd.h>

#include "attnviz/model_source.h"
#include "attnviz/llama.h"
#include "attnviz/model_file.h"
#include "attnviz/maps_shown.h"
#include "attnviz/source.h"
#include "attnviz/theme.h"
#include "attnviz/wake.h"
#include "test_app_util.h"
#include "../src/view/text.h"

#define CFG(m) ((const LlamaConfig *)(m)->cfg)
#define WTS(m) ((const LlamaWeights *)(m)->weights)

#define LFIX "tests/fixtures/llama"
#define TOK "tests/fixtures/gpt2/f16-h5" /* a byte-level BPE of 40 tokens: A-D, digits, punctuation */

static char folder[64];

/* A model folder: fixture's config and weights (links, from LFIX or base), TOK's tokenizer. */
static void make_folder_at(const char *base, const char *fixture);
static void make_folder(const char *fixture)
{
    make_folder_at(LFIX, fixture);
}

static void make_folder_at(const char *base, const char *fixture)
{
    static const char *const tok[] = {"vocab.json", "merges.txt"};
    char cwd[2048], from[4400], to[400];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(folder, sizeof folder, "/tmp/attnviz-lmllama-XXXXXX");
    assert_non_null(mkdtemp(folder));
    snprintf(from, sizeof from, "%s/%s/%s", cwd, base, fixture);
    DIR *d = opendir(from);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || (!strstr(e->d_name, ".safetensors") && strcmp(e->d_name, "config.json") &&
                                    !strstr(e->d_name, ".index.json")))
            continue;
        snprintf(from, sizeof from, "%s/%s/%s/%s", cwd, base, fixture, e->d_name);
        snprintf(to, sizeof to, "%s/%s", folder, e->d_name);
        assert_int_equal(symlink(from, to), 0);
    }
    closedir(d);
    for (int k = 0; k < 2; k++) {
        snprintf(from, sizeof from, "%s/%s/%s", cwd, TOK, tok[k]);
        snprintf(to, sizeof to, "%s/%s", folder, tok[k]);
        assert_int_equal(symlink(from, to), 0);
    }
}

static void remove_folder(void)
{
    DIR *d = opendir(folder);
    char path[400];
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(folder);
}

/* The source's maps, vectors and predictions of text equal the runtime's (core/arch_llama.c)
 * own forward on the source's ids. */
static void check_fixture(const char *fixture, const char *text)
{
    make_folder(fixture);
    ModelOpened *g = NULL;
    AttnErr err = {0};
    if (model_open_path(folder, 0, &g, &err) < 0)
        fail_msg("%s: %s", fixture, err.msg);
    assert_string_equal(g->lm.info.embed_name, "embed_tokens");
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    ModelFile *m = NULL;
    Rt *st = NULL;
    assert_int_equal(model_file_open(folder, &desc_llama, &m, &err), 0);
    assert_int_equal(rt_create(&st, &arch_llama, CFG(m), &err), 0);
    int T = g->ids.n, L = CFG(m)->n_layer, H = CFG(m)->n_head;
    assert_true(T > 3);
    assert_int_equal(rt_forward(st, WTS(m), g->ids.id, T, NULL, &err), 0);
    assert_int_equal(g->lm.info.n_kv_head, CFG(m)->n_kv_head);
    assert_int_equal(g->im->f.L, L);
    assert_int_equal(g->im->f.H, H);
    assert_int_equal(g->im->f.Tq, T);
    float *want = malloc(sizeof(float) * (size_t)T * T), *got = malloc(sizeof(float) * (size_t)T * T);
    assert_true(want && got);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            rt_map(st, l, h, want, (size_t)T);
            assert_int_equal(attn_file_map(&g->im->f, ATTN_PICK_HEAD, l, h, got), 0);
            assert_memory_equal(got, want, sizeof(float) * (size_t)T * T);
        }
    free(want);
    free(got);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            size_t d = sizeof(float) * (size_t)CFG(m)->head_dim;
            assert_memory_equal(lm_query(&g->lm, l, h, T - 1), rt_query(st, l, h, T - 1), d);
            assert_memory_equal(lm_key(&g->lm, l, h, 1), rt_key(st, l, h, 1), d);
        }
    int a[LM_TOP_K], b[LM_TOP_K];
    float pa[LM_TOP_K], pb[LM_TOP_K];
    assert_int_equal(lm_top_k(&g->lm, T - 1, LM_TOP_K, a, pa, &err), 0);
    assert_int_equal(rt_top_k(st, WTS(m), T - 1, LM_TOP_K, b, pb, NULL, &err), 0);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(pa, pb, sizeof pa);
    rt_destroy(st);
    model_file_close(m);
    model_opened_free(g);
    remove_folder();
}

static void test_fixtures(void **state)
{
    (void)state;
    check_fixture("llama-kv1-tied", "ABBA!\"#$%CD");
    check_fixture("llama-kv2-bias-f16", "DCBA?(1+2)=3");
    check_fixture("llama3-rope-mha", "A,B,C,D;0123456789.ABCD");
    check_fixture("qwen2-kv2-bf16", "CAB@BAD:42");
    check_fixture("mistral-sharded", "BAD/CAB*7");
}

/* A tokenizer.json whose template adds the BOS (Llama 3's style: 660,
 * Mistral's <s>: 1): the BOS is the first token and counted in T (in the
 * maps as in the tokens); --prepend-bos adds no second one; the BOS is a
 * special token, so hiding it (E, --drop) leaves rows that sum to 1 again
 * (the attention sink taken out). */
static void check_bos(const char *dir, int bos, const char *bos_text)
{
    static const char text[] = "The train left the station";
    for (int prepend = 0; prepend < 2; prepend++) {
        ModelOpened *g = NULL;
        AttnErr err = {0};
        if (model_open_path(dir, prepend, &g, &err) < 0)
            fail_msg("%s: %s", dir, err.msg);
        assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
        int T = g->ids.n;
        assert_int_equal(g->ids.id[0], bos);
        assert_int_not_equal(g->ids.id[1], bos);
        assert_int_equal(g->im->f.Tq, T);
        BpeIds bare = {0};
        assert_int_equal(bpe_encode(g->bpe, text, strlen(text), &bare), 0);
        assert_int_equal(bare.n + 1, T);
        assert_memory_equal(bare.id, g->ids.id + 1, sizeof(int) * (size_t)bare.n);
        bpe_ids_free(&bare);
        assert_true(g->im->n_special >= 1);
        assert_int_equal(import_pick(g->im, 1, 1, 0, bos_text, &err), 0);
        assert_int_equal(g->im->Tq, T - 1);
        for (int i = 0; i < T - 1; i++) {
            double sum = 0.0;
            for (int j = 0; j <= i; j++)
                sum += g->im->v[(size_t)i * (T - 1) + j];
            assert_true(fabs(sum - 1.0) < 1e-5);
        }
        model_opened_free(g);
    }
}

static void test_template_bos(void **state)
{
    (void)state;
    check_bos(LFIX "/llama3-tok", 660, "<|begin_of_text|>");
    check_bos(LFIX "/mistral-tok", 1, "<s>");
}

static Rgb pixel(const Fix *f, int x, int y)
{
    const Uint32 *row = (const Uint32 *)((const Uint8 *)f->surf->pixels + (size_t)y * f->surf->pitch);
    Uint32 p = row[x];
    return (Rgb){(Uint8)(p >> 16), (Uint8)(p >> 8), (Uint8)p};
}

static int near(Rgb p, Rgb c)
{
    return abs(p.r - c.r) + abs(p.g - c.g) + abs(p.b - c.b) < 30;
}

/* Typing in the window: the maps of a full recompute, bit for bit; the
 * model view (G) brackets the query heads of each key-value head (4 heads,
 * 1 key-value head: one bracket "KV 1" over the four columns). */
static void test_window(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    make_folder("llama-kv1-tied");
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path(folder, 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "ABBA", 4, &err), 0);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    type(f, "CD!");
    assert_true(wait_maps(f));
    assert_string_equal(a->text, "ABBACD!");
    ModelOpened *full = NULL;
    assert_int_equal(model_open_path(folder, 0, &full, &err), 0);
    assert_int_equal(model_compute_text(full, "ABBACD!", 7, &err), 0);
    const AttnFile *now = &a->kind->maps(a)->imp->f, *want = &full->im->f;
    assert_int_equal(now->Tq, want->Tq);
    assert_maps_equal(now, want, want->L);
    model_opened_free(full);
    key(f, SDLK_ESCAPE, 0);
    assert_int_equal(a->vs.kv_group, 4);
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.grid);
    /* the bracket: a thick line in the text's colour from the first head's
       map to the fourth's, above their headers, broken in the middle by its
       label "KV 1" (drawn there, in the same colour); its band is the
       layout's, above the headers */
    const FigureGrid *gr = &a->layout.grid_fig;
    FigRect m0 = figure_grid_map_rect(gr, 0, 0), m3 = figure_grid_map_rect(gr, 0, 3);
    assert_int_equal(gr->kv_group, 4);
    assert_true(gr->kv_h > 0 && gr->kv_y + gr->kv_h < m0.y);
    FigKvBracket b;
    assert_true(figure_grid_kv_bracket(gr, 0, &figure_measure_dejavu, &b));
    assert_false(figure_grid_kv_bracket(gr, 1, &figure_measure_dejavu, &b));
    Rgb fg = theme_get(a->vs.dark)->text;
    int thick = 0, left = 0, right = 0, label = 0;
    for (int y = gr->kv_y; y < gr->kv_y + gr->kv_h; y++) {
        int run = 0, longest = 0, in_gap = 0;
        for (int x = m0.x; x < m3.x + m3.w; x++) {
            int on = near(pixel(f, x, y), fg);
            run = on ? run + 1 : 0;
            longest = run > longest ? run : longest;
            int mid = x > m0.x + (m3.x + m3.w - m0.x) / 3 && x < m3.x + m3.w - (m3.x + m3.w - m0.x) / 3;
            in_gap += on && mid;
        }
        if (longest >= (m3.x + m3.w - m0.x) / 4) { /* a row of the line: its two halves */
            thick++;
            left += near(pixel(f, m0.x + 1, y), fg);
            right += near(pixel(f, m3.x + m3.w - 2, y), fg);
        } else {
            label += in_gap > 0;
        }
    }
    if (thick < 3 || !left || !right)
        fail_msg("the bracket over the 4 heads: %d rows thick (3 wanted), ends %d %d", thick, left, right);
    if (label < 5)
        fail_msg("no label on the bracket (%d rows of text in its middle)", label);
    /* Ctrl+E: the bracket and its label in the PNG's SVG too */
    char dir[] = "/tmp/attnviz-test-llama-kv-XXXXXX";
    assert_non_null(mkdtemp(dir));
    a->export_dir = dir;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->status_err, 0);
    char svg[4200], buf[1 << 16];
    size_t n = strlen(a->last_export);
    snprintf(svg, sizeof svg, "%.*s.svg", (int)(n - 4), a->last_export);
    FILE *fp = fopen(svg, "rb");
    assert_non_null(fp);
    size_t got = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[got] = '\0';
    assert_non_null(strstr(buf, "<g class=\"kv\" data-kv=\"0\">"));
    assert_non_null(strstr(buf, ">KV 1</text>"));
    assert_null(strstr(buf, "data-kv=\"1\""));
    unlink(svg);
    unlink(a->last_export);
    rmdir(dir);
    remove_folder();
}

/* Every family's fixtures (tests/fixtures/families/<family>/<folder>, found
 * by folder) in the window: typed text's maps equal a full recompute, the
 * model view brackets the heads sharing a key-value head, and the layers'
 * sliding windows are the maps' masked cells. */
static void test_families_window(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    glob_t gl;
    assert_int_equal(glob("tests/fixtures/families/*/*/ref.json", 0, NULL, &gl), 0);
    assert_true(gl.gl_pathc >= 1);
    for (size_t k = 0; k < gl.gl_pathc; k++) {
        char base[600], name[200];
        snprintf(base, sizeof base, "%s", gl.gl_pathv[k]);
        *strrchr(base, '/') = '\0';
        snprintf(name, sizeof name, "%s", strrchr(base, '/') + 1);
        *strrchr(base, '/') = '\0';
        make_folder_at(base, name);
        ModelOpened *g = NULL, *full = NULL;
        AttnErr err = {0};
        if (model_open_path(folder, 0, &g, &err) < 0)
            fail_msg("%s: %s", name, err.msg);
        assert_int_equal(model_compute_text(g, "ABBA", 4, &err), 0);
        assert_int_equal(source_model.show(a, g), 0);
        assert_true(wait_maps(f));
        key(f, SDLK_RETURN, 0);
        key(f, SDLK_END, 0);
        type(f, "CD!\"#$%CD");
        assert_true(wait_maps(f));
        key(f, SDLK_ESCAPE, 0);
        assert_int_equal(model_open_path(folder, 0, &full, &err), 0);
        assert_int_equal(model_compute_text(full, a->text, strlen(a->text), &err), 0);
        const Imported *im = a->kind->maps(a)->imp;
        const AttnFile *now = &im->f, *want = &full->im->f;
        assert_int_equal(now->Tq, want->Tq);
        assert_maps_equal(now, want, want->L);
        const LmInfo *in = &full->lm.info;
        assert_int_equal(a->vs.kv_group, in->n_kv_head < in->n_head ? in->n_head / in->n_kv_head : 0);
        int T = now->Tq, slid = 0;
        for (int l = 0; l < in->n_layer; l++) {
            int w = rt_layer_attn(full->lm.rt, l)->window;
            assert_int_equal(im->windows ? im->windows[l] : 0, w);
            if (w <= 0 || w >= T)
                continue;
            while (a->kind->maps(a)->layer != l)
                key(f, SDLK_l, 0);
            app_draw(a, f->r);
            /* the last query's keys before its window: masked cells, the window's not */
            assert_true(attn_map_masked(&a->vs.map, T - 1, T - 1 - w));
            assert_false(attn_map_masked(&a->vs.map, T - 1, T - w));
            slid = 1;
        }
        printf("  %s: %d tokens, maps as a full recompute%s\n", name, T, slid ? ", windows masked" : "");
        model_opened_free(full);
        remove_folder();
    }
    globfree(&gl);
}

/* Llama 3's BOS "<|begin_of_text|>" is whole on both sides of the line
 * diagram (issue 38): too wide for the panel beside the curves, it is
 * drawn "BOS" on each side, inside the panel, at 100 % and 132 %; the
 * heatmap keeps its name. */
static void test_bos_label(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path(LFIX "/llama3-tok", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "The train left the station", 26, &err), 0);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    static TextBox boxes[2048];
    for (int zoom = 0; zoom < 2; zoom++) {
        if (zoom) {
            key(f, SDLK_EQUALS, KMOD_CTRL);
            key(f, SDLK_EQUALS, KMOD_CTRL);
        }
        int n = 0, bos = 0, cut = 0;
        text_record(boxes, 2048, &n);
        app_draw(a, f->r);
        text_record(NULL, 0, NULL);
        SDL_Rect p = a->layout.lines;
        assert_true(p.w > 0);
        for (int b = 0; b < n && b < 2048; b++) {
            SDL_Rect r = boxes[b].box;
            if (r.x + r.w <= p.x || r.x >= p.x + p.w || r.y + r.h <= p.y || r.y >= p.y + p.h)
                continue;
            if (strcmp(boxes[b].text, "BOS") == 0 && r.x >= p.x && r.x + r.w <= p.x + p.w)
                bos++;
            cut += strstr(boxes[b].text, "begin_of") != NULL;
        }
        if (bos != 2 || cut)
            fail_msg("at %d %%: %d whole BOS labels in the lines panel (2 wanted), %d cut", zoom ? 132 : 100, bos,
                     cut);
    }
}

/* Hiding the BOS (E) moves the rows up one: the selected row's predictions
 * and vectors are still its token's (the text's position, not the row's). */
static void test_hidden_bos(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path(LFIX "/llama3-tok", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "The train left", 14, &err), 0);
    int T = g->ids.n;
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_e, 0);
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.Tq, T - 1);
    assert_int_equal(a->vs.query, T - 2); /* the last row shown: the text's last token */
    char want[64];
    snprintf(want, sizeof want, "(position %d)", T);
    if (!wait_panel(f, want))
        fail_msg("the panel says %s, not %s", a->vs.no_model, want);
    key(f, SDLK_UP, 0); /* row T - 3 shown: position T - 1 */
    snprintf(want, sizeof want, "(position %d)", T - 1);
    if (!wait_panel(f, want))
        fail_msg("after Up the panel says %s, not %s", a->vs.no_model, want);
}

/* A session of a Llama model: its folder, text, layer and head; opened
 * again after another source, the same maps (the BOS first). */
static void test_session(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[] = "/tmp/attnviz-test-llama-session-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.json", dir);
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path(LFIX "/llama3-tok", 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "The train left", 14, &err), 0);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    assert_ptr_not_equal(a->kind, &source_model);
    if (open_now(a, path) < 0)
        fail_msg("%s", a->status);
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, "The train left");
    assert_true(wait_maps(f));
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 1);
    assert_string_equal(ms->imp->f.q_tokens[0], "<|begin_of_text|>");
    ModelOpened *full = NULL;
    assert_int_equal(model_open_path(LFIX "/llama3-tok", 0, &full, &err), 0);
    assert_int_equal(model_compute_text(full, "The train left", 14, &err), 0);
    const AttnFile *now = &ms->imp->f, *want = &full->im->f;
    assert_int_equal(now->Tq, want->Tq);
    assert_maps_equal(now, want, want->L);
    model_opened_free(full);
    unlink(path);
    rmdir(dir);
}

/* GGUF files in the window (issue 35): each fixture opened as Ctrl+O or a
 * drop opens it (app_open_path), typed into, its maps those of the file
 * computed whole; a session of it opened again after another source. */
static void test_gguf_window(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    glob_t gl;
    assert_int_equal(glob("tests/fixtures/gguf_models/*/model.gguf", 0, NULL, &gl), 0);
    assert_true(gl.gl_pathc >= 1);
    char dir[] = "/tmp/attnviz-test-gguf-session-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.json", dir);
    for (size_t k = 0; k < gl.gl_pathc; k++) {
        const char *file = gl.gl_pathv[k];
        app_set_sentence(a, "the train"); /* the text the model opens on */
        if (open_now(a, file) < 0)
            fail_msg("%s: %s", file, a->status);
        assert_ptr_equal(a->kind, &source_model);
        assert_true(wait_maps(f));
        key(f, SDLK_RETURN, 0);
        key(f, SDLK_END, 0);
        type(f, " left the station");
        assert_true(wait_maps(f));
        key(f, SDLK_ESCAPE, 0);
        key(f, SDLK_h, 0);
        ModelOpened *full = NULL;
        AttnErr err = {0};
        assert_int_equal(model_open_path(file, 0, &full, &err), 0);
        assert_int_equal(model_compute_text(full, a->text, strlen(a->text), &err), 0);
        const AttnFile *now = &a->kind->maps(a)->imp->f, *want = &full->im->f;
        assert_int_equal(now->Tq, want->Tq);
        assert_maps_equal(now, want, want->L);

        assert_int_equal(app_save_session(a, path), 0);
        assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
        assert_ptr_not_equal(a->kind, &source_model);
        if (open_now(a, path) < 0)
            fail_msg("%s's session: %s", file, a->status);
        assert_ptr_equal(a->kind, &source_model);
        assert_true(wait_maps(f));
        assert_int_equal(a->kind->maps(a)->head, 1);
        now = &a->kind->maps(a)->imp->f;
        assert_maps_equal(now, want, want->L);
        printf("  %s: %d tokens typed, maps as a full recompute, its session reopened\n", file,
               now->Tq);
        model_opened_free(full);
        unlink(path);
    }
    rmdir(dir);
    globfree(&gl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_template_bos),
        cmocka_unit_test_setup_teardown(test_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bos_label, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hidden_bos, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_families_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gguf_window, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
