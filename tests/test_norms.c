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
    assert_int_equal(fams, 7);
    assert_true(n >= 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
