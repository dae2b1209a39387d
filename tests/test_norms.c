/* Value-weighted attention ("norms", issue 37 part 2: runtime.h's
 * rt_value_norms, lm.h's lm_value_norms and lm_map_norms) against the
 * float64 reference the fixture scripts write (norms.npy: L × H × T × T,
 * α[i, j] · ‖v_j W_O,h‖ with v_j's bias, without W_O's, v_j of the head's
 * key-value head), for every fixture folder that has one. Each map within
 * 1e-5 of its reference's max (the tolerance); masked cells exactly
 * 0. The norms are made after a forward of the text with its last token
 * changed and then the text's (only the changed position's norms are made
 * again: a state that kept the stale ones fails), and the copy the window
 * keeps (rt_maps_take) gives the state's floats bit for bit. The toy
 * sentence model's norms against a naive double computation from its Wv,
 * Wo and inputs. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/embed.h"
#include "attnviz/lm.h"
#include "attnviz/model.h"

#include "test_util.h"
#include "test_gpt2_fs.h"
#include "test_fixtures.h"

#define TOL 1e-5

typedef struct Worst {
    double rel; /* the largest |difference| / the map's max */
    int maps;
} Worst;

/* fn for rt_maps_norms_each: each map equal to lm_map_norms' (want). */
typedef struct EachCheck {
    const float *want; /* L × H × T × T */
    int H, T, seen;
    int bad;
} EachCheck;

static void each_norms(void *user, int l, int h, const float *map)
{
    EachCheck *c = user;
    size_t TT = (size_t)c->T * c->T;
    if (memcmp(map, c->want + ((size_t)l * c->H + h) * TT, sizeof(float) * TT) != 0)
        c->bad = 1;
    __atomic_add_fetch(&c->seen, 1, __ATOMIC_SEQ_CST);
}

static void check_folder(const char *dir, Worst *w)
{
    AttnErr err = {0};
    int T;
    int *ids = fixture_ref_ids(dir, &T);
    Lm lm;
    if (lm_open(&lm, dir, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    int L = lm.info.n_layer, H = lm.info.n_head;
    AttnFile ref;
    fixture_open_npy(&ref, dir, "norms.npy");
    if (ref.L != L || ref.H != H || ref.Tq != T || ref.Tk != T)
        fail_msg("%s/norms.npy: %d x %d x %d x %d, the model %d x %d x %d x %d", dir, ref.L, ref.H,
                 ref.Tq, ref.Tk, L, H, T, T);
    /* the text with its last token changed, its norms, then the text's */
    int last = ids[T - 1];
    ids[T - 1] = (last + 1) % lm.info.n_vocab;
    assert_int_equal(lm_forward(&lm, ids, T, NULL, &err), 0);
    assert_int_equal(lm_value_norms(&lm, &err), 0);
    ids[T - 1] = last;
    assert_int_equal(lm_forward(&lm, ids, T, NULL, &err), 0);
    RtMaps *none = lm_maps_take(&lm); /* taken before the norms: it has none */
    assert_non_null(none);
    assert_false(rt_maps_has_norms(none));
    rt_maps_free(none);
    if (lm_value_norms(&lm, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    size_t TT = (size_t)T * T;
    float *all = malloc(sizeof(float) * TT * (size_t)(L * H)), *snap = malloc(sizeof(float) * TT);
    assert_true(all && snap);
    RtMaps *maps = lm_maps_take(&lm);
    assert_non_null(maps);
    assert_true(rt_maps_has_norms(maps));
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            float *got = all + ((size_t)l * H + h) * TT;
            lm_map_norms(&lm, l, h, got, (size_t)T);
            double top = 0, worst = 0;
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++)
                    top = fmax(top, attn_file_at(&ref, l, h, i, j));
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++) {
                    double want = attn_file_at(&ref, l, h, i, j), g = got[(size_t)i * T + j];
                    if (want == 0.0 && j > i && g != 0.0f)
                        fail_msg("%s: layer %d head %d (%d, %d): %.9g where the key is masked",
                                 dir, l + 1, h + 1, i, j, g);
                    double d = fabs(g - want);
                    worst = d > worst ? d : worst;
                    if (d > TOL * top)
                        fail_msg("%s: layer %d head %d row %d key %d: %.9g, the reference %.9g "
                                 "(the map's max %.6g)", dir, l + 1, h + 1, i, j, g, want, top);
                }
            w->rel = fmax(w->rel, top > 0 ? worst / top : worst);
            w->maps++;
            /* the window's copy: the same floats */
            rt_maps_norms_map(maps, l, h, snap, (size_t)T);
            assert_memory_equal(snap, got, sizeof(float) * TT);
        }
    EachCheck c = {all, H, T, 0, 0};
    assert_int_equal(rt_maps_norms_each(maps, each_norms, &c), 0);
    assert_int_equal(c.seen, L * H);
    assert_false(c.bad);
    rt_maps_free(maps);
    attn_file_close(&ref);
    lm_close(&lm);
    free(all), free(snap), free(ids);
}

static void norms_folder(const char *dir, void *user)
{
    Worst w = {0, 0};
    check_folder(dir, &w);
    ((Worst *)user)->rel = fmax(((Worst *)user)->rel, w.rel);
    ((Worst *)user)->maps += w.maps;
    printf("  %s: %d maps within %.2g of their max\n", dir, w.maps, w.rel);
}

static void test_every_fixture(void **state)
{
    (void)state;
    Worst all = {0, 0};
    int fams, n = fixture_each("norms.npy", 0, norms_folder, &all, &fams);
    printf("  %d folders, %d maps, worst %.2g of a map's max\n", n, all.maps, all.rel);
    /* every root has its fixtures (GPT-2, the Llama family, the five
     * families): a script that stopped writing norms.npy fails */
    assert_int_equal(fams, fixture_roots());
    assert_true(n >= 32);
}

/* The toy sentence model: every head's norms and their mean against a
 * naive double computation from the inputs X and the weights Wv, Wo (not
 * the forward's V), a causal mask's cells exactly 0; basic mode has no
 * Wo: ‖v_j‖ = ‖x_j‖. */
static void check_toy(AttnMode mode, int heads, uint64_t seed)
{
    EmbedTable *table;
    assert_int_equal(test_load_embeddings(&table), 0);
    AttnConfig cfg = attn_config_default();
    cfg.mode = mode;
    cfg.heads = heads;
    cfg.causal = 1;
    Model m;
    assert_int_equal(model_init(&m, table, &cfg), 0);
    model_set_seed(&m, seed);
    const char *text = "the cat sat on the mat and looked at the dog";
    assert_int_equal(model_set_text(&m, text, strlen(text)), 0);
    assert_int_equal(model_compute(&m), 0);
    assert_null(model_matrix(&m, MODEL_NORMS, 0)); /* not made yet */
    assert_int_equal(model_prepare(&m, MODEL_NORMS, 0), 0);
    int T = m.T, d = m.d, H = m.res.h, dk = m.res.dk;
    double *want = calloc((size_t)(H + 1) * T * T, sizeof *want), top = 0, worst = 0;
    assert_non_null(want);
    for (int h = 0; h < H; h++)
        for (int j = 0; j < T; j++) {
            double sq = 0;
            for (int c = 0; c < d; c++) {
                double f = 0;
                for (int e = 0; e < dk; e++) {
                    double v = 0; /* v_j = x_j · Wv_h, or x_j itself in basic mode */
                    for (int r = 0; r < d && mode == ATTN_MODE_LEARNED; r++)
                        v += (double)m.X[(size_t)j * d + r] * m.params.Wv[((size_t)h * d + r) * dk + e];
                    if (mode == ATTN_MODE_BASIC)
                        v = e == c ? m.X[(size_t)j * d + e] : 0.0;
                    f += mode == ATTN_MODE_BASIC ? v : v * m.params.Wo[(size_t)(h * dk + e) * d + c];
                }
                sq += f * f;
            }
            for (int i = 0; i < T; i++) {
                double x = model_matrix(&m, MODEL_WEIGHTS, h)[(size_t)i * T + j] * sqrt(sq);
                want[((size_t)h * T + i) * T + j] = x;
                want[((size_t)H * T + i) * T + j] += x / H;
            }
        }
    for (int h = 0; h <= H; h++) {
        const float *got = model_matrix(&m, MODEL_NORMS, h == H ? MODEL_HEAD_AVG : h);
        assert_non_null(got);
        for (size_t e = 0; e < (size_t)T * T; e++)
            top = fmax(top, want[(size_t)h * T * T + e]);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                double g = got[(size_t)i * T + j], w = want[((size_t)h * T + i) * T + j];
                if (j > i)
                    assert_true(g == 0.0);
                worst = fmax(worst, fabs(g - w));
            }
    }
    printf("  toy %s, %d heads: norms within %.2g of the max %.4g\n",
           mode == ATTN_MODE_BASIC ? "basic" : "learned", H, worst / top, top);
    assert_true(worst <= TOL * top);
    AttnMap map = model_map(&m, MODEL_NORMS, 0);
    assert_int_equal(map.kind, ATTN_MAP_NORMS);
    assert_string_equal(attn_map_kind_name(map.kind), "norms");
    free(want);
    model_destroy(&m);
    embed_destroy(table);
}

static void test_toy(void **state)
{
    (void)state;
    check_toy(ATTN_MODE_LEARNED, 4, 7);
    check_toy(ATTN_MODE_LEARNED, 1, 3);
    check_toy(ATTN_MODE_BASIC, 1, 0);
}

/* --print csv --matrix norms of a model: the adapter's map (%.9g: the
 * float back exactly), for two layer/head picks. */
static void test_cli(void **state)
{
    (void)state;
    const char *bin = getenv("ATTNVIZ_BIN") ? getenv("ATTNVIZ_BIN") : "build/attnviz";
    const char *dir = "tests/fixtures/gpt2/f32-h3";
    AttnErr err = {0};
    Lm lm;
    assert_int_equal(lm_open(&lm, dir, &err), 0);
    int ids[3] = {0, 2, 3}; /* '!#$': three byte tokens no merge joins */
    assert_int_equal(lm_forward(&lm, ids, 3, NULL, &err), 0);
    assert_int_equal(lm_value_norms(&lm, &err), 0);
    int picks[2][2] = {{1, 1}, {2, 3}};
    for (int p = 0; p < 2; p++) {
        char cmd[1200], line[400];
        float want[9];
        lm_map_norms(&lm, picks[p][0] - 1, picks[p][1] - 1, want, 3);
        snprintf(cmd, sizeof cmd, "%s --model %s --print csv --matrix norms --layer %d --head %d '!#$'", bin,
                 dir, picks[p][0], picks[p][1]);
        FILE *f = popen(cmd, "r");
        assert_non_null(f);
        assert_non_null(fgets(line, sizeof line, f)); /* the header */
        int rows = 0;
        while (fgets(line, sizeof line, f)) {
            char *c = strchr(line, ',');
            for (int j = 0; j < 3; j++) {
                assert_non_null(c);
                float x = strtof(c + 1, &c);
                assert_true(x == want[rows * 3 + j]);
            }
            rows++;
        }
        assert_int_equal(pclose(f), 0);
        assert_int_equal(rows, 3);
        assert_true(want[3] > 0.0f && want[1] == 0.0f); /* a value, and a masked cell */
    }
    lm_close(&lm);
}

/* A model's session keeps the norms shown ("norms": true; "matrix" stays
 * the file's scores' boolean), and the scores and weights as before. */
static void test_session(void **state)
{
    (void)state;
    const char *path = "build/test-out/norms-session.json";
    for (int matrix = 0; matrix <= 3; matrix += (matrix == 1 ? 2 : 1)) {
        AttnSession *s = calloc(1, sizeof *s), *back = calloc(1, sizeof *back);
        assert_true(s && back);
        snprintf(s->file, sizeof s->file, "%s", "tests/fixtures/gpt2/f32-h3");
        s->query = s->key = -1;
        s->matrix = matrix;
        AttnErr err = {0};
        if (attn_session_save(path, s, &err) != 0)
            fail_msg("%s", err.msg);
        if (attn_session_load(back, path, &err) != 0)
            fail_msg("%s", err.msg);
        assert_int_equal(back->matrix, matrix);
        free(s), free(back);
    }
    AttnSession *bad = calloc(1, sizeof *bad);
    AttnErr err = {0};
    const char *doc = "{\"attention_file\": \"x.npy\", \"norms\": 2}";
    assert_int_not_equal(attn_session_parse(bad, doc, strlen(doc), "s.json", &err), 0);
    assert_non_null(strstr(err.msg, "norms"));
    free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture),
        cmocka_unit_test(test_toy),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
