/* Every encoder-decoder's fixtures (tests/fixtures/families/<family>/<folder>/
 * with an encdec.json, written by that family's make_<family>.py with a
 * float64 transcription of its transformers modeling file: T5's, BART's)
 * opened through the adapter (lm.h) and run on the reference's source and
 * decoder ids with rt_forward_encdec:
 *   - the three groups of maps (encoder self-attention, decoder
 *     self-attention, cross-attention Tt x Ts) within 1e-5 of the
 *     reference, the decoder's masked cells exactly 0, every target
 *     position's next-token probabilities within 2e-6;
 *   - the prefix reuse: the target typed a token at a time, and a token
 *     changed in its middle, give a fresh forward's floats computing only
 *     the changed positions; a changed or shorter source recomputes the
 *     encoder and the whole target.
 * A family is found by its folder. Run from the repository root. */
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

#include "attnviz/arch.h"
#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/lm.h"
#include "attnviz/model_file.h"
#include "attnviz/runtime.h"

#include "test_gpt2_fs.h"
#include "test_fixtures.h"


static int *json_ids(const cJSON *o, const char *key, int *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    *n = cJSON_GetArraySize(a);
    int *ids = malloc(sizeof(int) * (size_t)(*n + 1));
    assert_non_null(ids);
    for (int i = 0; i < *n; i++)
        ids[i] = cJSON_GetArrayItem(a, i)->valueint;
    return ids;
}

static void open_lm(Lm *lm, const char *dir)
{
    AttnErr err = {0};
    memset(lm, 0, sizeof *lm);
    if (lm_open(lm, dir, &err) != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
}

static void forward(Lm *lm, const int *src, int Ts, const int *tgt, int Tt)
{
    AttnErr err = {0};
    if (rt_forward_encdec(lm->rt, lm->model->weights, src, Ts, tgt, Tt, NULL, NULL, &err) != 0)
        fail_msg("forward: %s", err.msg);
}

/* ---- the references --------------------------------------------------------------- */

/* The worst difference of the maps of a group (n_layer × H of Tq × Tk,
 * made by map) from ref; a masked cell of the reference must be 0. */
static double group_off(const Rt *rt, int n_layer, int Tq, int Tk,
                        void (*map)(const Rt *, int, int, float *, size_t), const AttnFile *ref,
                        const char *what)
{
    int H = rt->sh.n_head;
    assert_int_equal(ref->L, n_layer);
    assert_int_equal(ref->H, H);
    assert_int_equal(ref->Tq, Tq);
    assert_int_equal(ref->Tk, Tk);
    float *m = malloc(sizeof(float) * (size_t)Tq * Tk);
    assert_non_null(m);
    double worst = 0;
    for (int l = 0; l < n_layer; l++)
        for (int h = 0; h < H; h++) {
            map(rt, l, h, m, (size_t)Tk);
            for (int i = 0; i < Tq; i++)
                for (int j = 0; j < Tk; j++) {
                    double got = m[i * Tk + j], w = attn_file_at(ref, l, h, i, j);
                    if (w == 0.0 && got != 0.0)
                        fail_msg("%s layer %d head %d [%d, %d] is %g where the reference masks it",
                                 what, l + 1, h + 1, i, j, got);
                    worst = fabs(got - w) > worst ? fabs(got - w) : worst;
                }
        }
    free(m);
    return worst;
}

static void check_folder(const char *dir, void *user)
{
    char path[700];
    (void)user;
    snprintf(path, sizeof path, "%s/encdec.json", dir);
    cJSON *ref = read_json(path);
    int Ts, Tt;
    int *src = json_ids(ref, "source", &Ts), *tgt = json_ids(ref, "target", &Tt);
    Lm lm;
    open_lm(&lm, dir);
    Rt *rt = lm.rt;
    assert_non_null(rt->enc);
    assert_int_equal(rt->enc->sh.n_layer, cJSON_GetObjectItem(ref, "n_enc_layer")->valueint);
    assert_int_equal(rt->sh.n_layer, cJSON_GetObjectItem(ref, "n_dec_layer")->valueint);
    assert_int_equal(rt->sh.n_head, cJSON_GetObjectItem(ref, "n_head")->valueint);
    assert_int_equal(rt->enc->sh.bidirectional, 1);
    assert_int_equal(rt->sh.bidirectional, 0);
    forward(&lm, src, Ts, tgt, Tt);

    AttnFile enc, dec, cross, probs;
    fixture_open_npy(&enc, dir, "enc_maps.npy");
    fixture_open_npy(&dec, dir, "dec_maps.npy");
    fixture_open_npy(&cross, dir, "cross_maps.npy");
    fixture_open_npy(&probs, dir, "probs.npy");
    double we = group_off(rt->enc, rt->enc->sh.n_layer, Ts, Ts, rt_map, &enc, "encoder");
    double wd = group_off(rt, rt->sh.n_layer, Tt, Tt, rt_map, &dec, "decoder");
    double wc = group_off(rt, rt->sh.n_layer, Tt, Ts, rt_cross_map, &cross, "cross");
    int V = lm.info.n_vocab;
    float *lg = malloc(sizeof(float) * (size_t)V);
    assert_non_null(lg);
    double wp = 0;
    AttnErr err = {0};
    for (int i = 0; i < Tt; i++) {
        assert_int_equal(rt_logits(rt, lm.model->weights, i, lg, &err), 0);
        double mx = -INFINITY, sum = 0;
        for (int v = 0; v < V; v++)
            mx = lg[v] > mx ? lg[v] : mx;
        for (int v = 0; v < V; v++)
            sum += exp((double)lg[v] - mx);
        for (int v = 0; v < V; v++) {
            double d = fabs(exp((double)lg[v] - mx) / sum - attn_file_at(&probs, 0, 0, i, v));
            wp = d > wp ? d : wp;
        }
    }
    if (we > 1e-5 || wd > 1e-5 || wc > 1e-5 || wp > 2e-6)
        fail_msg("%s: maps off by %.3g (encoder), %.3g (decoder), %.3g (cross), 1e-5 allowed; "
                 "probabilities by %.3g (2e-6 allowed)", dir, we, wd, wc, wp);
    printf("  %s: maps within %.2g, %.2g, %.2g; probabilities within %.2g\n", dir, we, wd, wc,
           wp);
    attn_file_close(&enc), attn_file_close(&dec), attn_file_close(&cross);
    attn_file_close(&probs);
    free(lg), free(src), free(tgt);
    lm_close(&lm);
    cJSON_Delete(ref);
}

static void test_references(void **state)
{
    (void)state;
    int n = fixture_each("encdec.json", 1, check_folder, NULL, NULL);
    printf("  %d folders\n", n);
    assert_true(n >= 4);
}

/* ---- the prefix reuse ------------------------------------------------------------- */

/* a's and b's last forwards hold the same floats: the three groups and the logits. */
static void assert_same(Lm *a, Lm *b, const char *what)
{
    Rt *ra = a->rt, *rb = b->rt;
    int Ts = ra->Ts, Tt = ra->T, H = ra->sh.n_head, V = a->info.n_vocab;
    assert_int_equal(Ts, rb->Ts);
    assert_int_equal(Tt, rb->T);
    size_t n = (size_t)(Ts > Tt ? Ts : Tt) * (size_t)(Ts > Tt ? Ts : Tt);
    float *ma = calloc(n, sizeof(float)), *mb = calloc(n, sizeof(float));
    float *la = malloc(sizeof(float) * V), *lb = malloc(sizeof(float) * V);
    assert_true(ma && mb && la && lb);
    for (int l = 0; l < ra->enc->sh.n_layer; l++)
        for (int h = 0; h < ra->enc->sh.n_head; h++) {
            rt_map(ra->enc, l, h, ma, (size_t)Ts);
            rt_map(rb->enc, l, h, mb, (size_t)Ts);
            if (memcmp(ma, mb, sizeof(float) * Ts * Ts))
                fail_msg("%s: encoder layer %d head %d differs", what, l + 1, h + 1);
        }
    for (int l = 0; l < ra->sh.n_layer; l++)
        for (int h = 0; h < H; h++) {
            rt_map(ra, l, h, ma, (size_t)Tt);
            rt_map(rb, l, h, mb, (size_t)Tt);
            if (memcmp(ma, mb, sizeof(float) * Tt * Tt))
                fail_msg("%s: decoder layer %d head %d differs", what, l + 1, h + 1);
            rt_cross_map(ra, l, h, ma, (size_t)Ts);
            rt_cross_map(rb, l, h, mb, (size_t)Ts);
            if (memcmp(ma, mb, sizeof(float) * Tt * Ts))
                fail_msg("%s: cross layer %d head %d differs", what, l + 1, h + 1);
        }
    AttnErr err = {0};
    for (int i = 0; i < Tt; i++) {
        assert_int_equal(rt_logits(ra, a->model->weights, i, la, &err), 0);
        assert_int_equal(rt_logits(rb, b->model->weights, i, lb, &err), 0);
        if (memcmp(la, lb, sizeof(float) * V))
            fail_msg("%s: the logits of target position %d differ", what, i);
    }
    free(ma), free(mb), free(la), free(lb);
}

static void reuse_folder(const char *dir, void *user)
{
    char path[700];
    (void)user;
    snprintf(path, sizeof path, "%s/encdec.json", dir);
    cJSON *ref = read_json(path);
    int Ts, Tt;
    int *src = json_ids(ref, "source", &Ts), *tgt = json_ids(ref, "target", &Tt);
    Lm typed, full;
    open_lm(&typed, dir);
    open_lm(&full, dir);
    int V = typed.info.n_vocab, Ld = typed.rt->sh.n_layer, Le = typed.rt->enc->sh.n_layer;
    /* typing the target: each token computes one position a decoder layer */
    for (int t = 1; t <= Tt; t++) {
        long long before = typed.rt->n_computed, enc_before = typed.rt->enc->n_computed;
        forward(&typed, src, Ts, tgt, t);
        assert_int_equal(typed.rt->n_computed - before, Ld);
        if (t > 1)
            assert_int_equal(typed.rt->enc->n_computed, enc_before); /* the source kept */
    }
    forward(&full, src, Ts, tgt, Tt);
    assert_same(&typed, &full, "typed target");
    /* a token changed in the target's middle: from it on */
    tgt[Tt / 2] = (tgt[Tt / 2] + 1) % V;
    long long before = typed.rt->n_computed;
    forward(&typed, src, Ts, tgt, Tt);
    assert_int_equal(typed.rt->n_computed - before, (long long)(Tt - Tt / 2) * Ld);
    lm_close(&full);
    open_lm(&full, dir);
    forward(&full, src, Ts, tgt, Tt);
    assert_same(&typed, &full, "a target token changed");
    /* a changed source: the encoder, the cross keys and the whole target */
    src[2] = (src[2] + 7) % V;
    before = typed.rt->n_computed;
    long long enc_before = typed.rt->enc->n_computed;
    forward(&typed, src, Ts, tgt, Tt);
    assert_int_equal(typed.rt->n_computed - before, (long long)Tt * Ld);
    assert_int_equal(typed.rt->enc->n_computed - enc_before, (long long)Ts * Le);
    lm_close(&full);
    open_lm(&full, dir);
    forward(&full, src, Ts, tgt, Tt);
    assert_same(&typed, &full, "a source token changed");
    /* a shorter source */
    forward(&typed, src, Ts - 3, tgt, Tt);
    lm_close(&full);
    open_lm(&full, dir);
    forward(&full, src, Ts - 3, tgt, Tt);
    assert_same(&typed, &full, "a shorter source");
    lm_close(&typed);
    lm_close(&full);
    free(src), free(tgt);
    cJSON_Delete(ref);
}

static void test_prefix_reuse(void **state)
{
    (void)state;
    assert_true(fixture_each("encdec.json", 1, reuse_folder, NULL, NULL) >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_references),
        cmocka_unit_test(test_prefix_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
