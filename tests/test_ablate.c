/* Head ablation (issue 37, item 3: lm.h's lm_ablate, runtime.h's rt_ablate)
 * against the float64 references the fixture scripts write with the same
 * heads switched off (ablate.npy / ablate_maps.npy: the heads' z zeroed;
 * ablate_mean.npy / ablate_mean_maps.npy: replaced by its mean over the T
 * positions), for every fixture folder that has them: the GPT-2s, the
 * Llama family and the five families of tests/fixtures/families. The heads
 * are the scripts' ABLATE_HEADS rule: 1-based 1.2 and 2.1, each number
 * modulo the model's. For each folder and mode:
 *   - every position's probabilities within 2.5e-6 (TOL_P), every map within 1e-5;
 *   - the first layer's maps (where the ablation happens, before it acts)
 *     bit for bit those of the forward without ablation;
 *   - computed after a forward of the text with its last token changed on
 *     the same state, so a mean ablation that reused the prefix fails;
 *   - zero ablation: typing a token at a time gives a full forward's floats;
 *   - switching the heads back on gives the unablated floats again;
 *   - the logit lens's last layer: the ablated top 5, bit for bit.
 * Then the CLI: --print predictions with --ablate (today's format, the
 * adapter's numbers), later layers' csv changed and the ablated layer's
 * not, and bad input. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "attnviz/attnfile.h"
#include "attnviz/attnio.h"
#include "attnviz/lm.h"

#include "test_gpt2_fs.h"
#include "test_fixtures.h"

/* The 2e-6 for predictions, but one fixture's float32 rounding goes
 * past it: phi3-window-su-bf16 with 1.2 and 2.1 zeroed, position 10's top
 * token (p 0.476) is 2.1e-6 off with the avx512 kernels, 1.1e-6 with avx2,
 * 6.5e-7 with base (the same forward, other rounding); every other folder
 * is within 1.9e-6 (mistral-window) */
#define TOL_P 2.5e-6
#define TOL_MAP 1e-5

/* The scripts' ABLATE_HEADS: 0-based (0, 1 % H) and (1 % L, 0). */
static void ablate_heads(Lm *lm, int on)
{
    AttnErr err = {0};
    int L = lm->info.n_layer, H = lm->info.n_head;
    assert_int_equal(lm_ablate(lm, 0, 1 % H, on, &err), 0);
    assert_int_equal(lm_ablate(lm, 1 % L, 0, on, &err), 0);
}

/* Softmax of position pos's logits, in double. */
static void probs_of(Lm *lm, int pos, double *p, float *lg)
{
    AttnErr err = {0};
    int V = lm->info.n_vocab;
    assert_int_equal(lm_logits(lm, pos, lg, &err), 0);
    double mx = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++)
        mx = lg[v] > mx ? lg[v] : mx;
    for (int v = 0; v < V; v++)
        sum += (p[v] = exp((double)lg[v] - mx));
    for (int v = 0; v < V; v++)
        p[v] /= sum;
}

/* lm's last forward (T tokens) against name.npy and name_maps.npy: the
 * worst differences into worst[0] (probabilities) and worst[1] (maps). */
static void check_ref(Lm *lm, const char *dir, const char *name, int T, double worst[2])
{
    char file[100];
    int L = lm->info.n_layer, H = lm->info.n_head, V = lm->info.n_vocab;
    AttnFile probs, maps;
    snprintf(file, sizeof file, "%s.npy", name);
    fixture_open_npy(&probs, dir, file);
    snprintf(file, sizeof file, "%s_maps.npy", name);
    fixture_open_npy(&maps, dir, file);
    assert_true(maps.L == L && maps.H == H && maps.Tq == T && probs.Tq == T && probs.Tk == V);
    float *m = malloc(sizeof(float) * T * T), *lg = malloc(sizeof(float) * V);
    double *p = malloc(sizeof(double) * V);
    assert_true(m && lg && p);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            rt_map(lm->rt, l, h, m, (size_t)T);
            for (int i = 0; i < T * T; i++) {
                double d = fabs(m[i] - attn_file_at(&maps, l, h, i / T, i % T));
                worst[1] = d > worst[1] ? d : worst[1];
            }
        }
    for (int i = 0; i < T; i++) {
        probs_of(lm, i, p, lg);
        for (int v = 0; v < V; v++) {
            double d = fabs(p[v] - attn_file_at(&probs, 0, 0, i, v));
            worst[0] = d > worst[0] ? d : worst[0];
        }
    }
    if (worst[0] > TOL_P || worst[1] > TOL_MAP)
        fail_msg("%s, %s: probabilities off by %.3g (%.2g allowed), maps by %.3g (%.2g allowed)",
                 dir, name, worst[0], TOL_P, worst[1], TOL_MAP);
    attn_file_close(&probs);
    attn_file_close(&maps);
    free(m), free(lg), free(p);
}

/* Every float of a's and b's last forwards (T tokens) the same: maps of
 * layers [l0, l1) and, when logits, every position's logits. */
static void assert_same(Lm *a, Lm *b, int T, int l0, int l1, int logits, const char *what)
{
    AttnErr err = {0};
    int H = a->info.n_head, V = a->info.n_vocab;
    float *ma = malloc(sizeof(float) * T * T), *mb = malloc(sizeof(float) * T * T);
    float *la = malloc(sizeof(float) * V), *lb = malloc(sizeof(float) * V);
    assert_true(ma && mb && la && lb);
    for (int l = l0; l < l1; l++)
        for (int h = 0; h < H; h++) {
            rt_map(a->rt, l, h, ma, (size_t)T);
            rt_map(b->rt, l, h, mb, (size_t)T);
            if (memcmp(ma, mb, sizeof(float) * T * T))
                fail_msg("%s: layer %d head %d's map differs", what, l + 1, h + 1);
        }
    for (int i = 0; logits && i < T; i++) {
        assert_int_equal(lm_logits(a, i, la, &err), 0);
        assert_int_equal(lm_logits(b, i, lb, &err), 0);
        if (memcmp(la, lb, sizeof(float) * V))
            fail_msg("%s: position %d's logits differ", what, i);
    }
    free(ma), free(mb), free(la), free(lb);
}

static void forward(Lm *lm, const int *ids, int T, const char *dir)
{
    AttnErr err = {0};
    if (lm_forward(lm, ids, T, NULL, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
}

/* The logit lens of the last position with the heads switched off: its
 * last layer is the ablated forward's top 5, bit for bit (the lens is a
 * full forward of its own: it must ablate as the forward does). */
static void check_lens(Lm *lm, const int *ids, int T)
{
    AttnErr err = {0};
    int L1 = lm->info.n_layer + 1, k = lm->info.n_vocab < 5 ? lm->info.n_vocab : 5;
    int *top = malloc(sizeof(int) * (size_t)(L1 * k)), want[5];
    float *probs = malloc(sizeof(float) * (size_t)(L1 * k)), want_p[5];
    assert_true(top && probs);
    assert_int_equal(lm_top_k(lm, T - 1, k, want, want_p, &err), 0);
    assert_int_equal(lm_logit_lens(lm, ids, T, T - 1, k, top, probs, &err), 0);
    for (int r = 0; r < k; r++) {
        assert_int_equal(top[(L1 - 1) * k + r], want[r]);
        assert_true(probs[(L1 - 1) * k + r] == want_p[r]);
    }
    free(top), free(probs);
}

/* One folder, both modes. */
static void check_folder(const char *dir, double worst[2])
{
    int T;
    int *ids = fixture_ref_ids(dir, &T), *other = malloc(sizeof(int) * T);
    assert_non_null(other);
    Lm lm, plain;
    AttnErr err = {0};
    if (lm_open(&lm, dir, &err) != 0 || lm_open(&plain, dir, &err) != 0)
        fail_msg("%s: %s", dir, err.msg);
    memcpy(other, ids, sizeof(int) * T);
    other[T - 1] = (ids[T - 1] + 1) % lm.info.n_vocab; /* the last token changed */
    forward(&plain, ids, T, dir);
    for (int mean = 0; mean < 2; mean++) {
        lm_ablate_mode(&lm, mean);
        ablate_heads(&lm, 1);
        forward(&lm, other, T, dir); /* then ids on the same state: the prefix reused or not */
        forward(&lm, ids, T, dir);
        check_ref(&lm, dir, mean ? "ablate_mean" : "ablate", T, worst);
        check_lens(&lm, ids, T);
        /* the first layer's maps: made before its heads' outputs are switched off */
        assert_same(&lm, &plain, T, 0, 1, 0, dir);
        /* back on: the plain forward's floats */
        ablate_heads(&lm, 0);
        assert_false(lm_is_ablated(&lm, 0, 1 % lm.info.n_head));
        forward(&lm, ids, T, dir);
        assert_same(&lm, &plain, T, 0, lm.info.n_layer, 1, dir);
    }
    /* zero ablation: typing a token at a time equals a full forward */
    Lm full;
    assert_int_equal(lm_open(&full, dir, &err), 0);
    lm_ablate_mode(&lm, 0);
    ablate_heads(&lm, 1);
    ablate_heads(&full, 1);
    for (int t = 1; t <= T; t++) {
        forward(&lm, ids, t, dir);
        rt_reset(full.rt);
        forward(&full, ids, t, dir);
        assert_same(&lm, &full, t, 0, lm.info.n_layer, 1, dir);
    }
    lm_close(&full);
    lm_close(&lm);
    lm_close(&plain);
    free(ids), free(other);
}

static void ablate_folder(const char *dir, void *user)
{
    (void)user;
    double worst[2] = {0, 0};
    check_folder(dir, worst);
    printf("  %s: probabilities within %.2g, maps within %.2g\n", dir, worst[0], worst[1]);
}

static void test_every_fixture(void **state)
{
    (void)state;
    int fams, n = fixture_each("ablate.npy", 0, ablate_folder, NULL, &fams);
    /* every root has its references (a script that stopped writing them fails) */
    assert_int_equal(fams, fixture_roots());
    assert_true(n >= 30);
}

/* A head that does not exist: -ATTN_E_RANGE naming the 1-based number. */
static void test_range(void **state)
{
    (void)state;
    Lm lm;
    AttnErr err = {0};
    assert_int_equal(lm_open(&lm, GPT2_FIX "f32-h3", &err), 0);
    assert_int_equal(lm_ablate(&lm, 2, 0, 1, &err), -ATTN_E_RANGE);
    assert_non_null(strstr(err.msg, "layer 3"));
    assert_int_equal(lm_ablate(&lm, 0, 3, 1, &err), -ATTN_E_RANGE);
    assert_non_null(strstr(err.msg, "head 4"));
    assert_int_equal(lm_ablate(&lm, -1, 0, 1, &err), -ATTN_E_RANGE);
    lm_close(&lm);
}

/* popen's whole stdout (stderr to /dev/null) into buf; the exit status. */
static int run(const char *args, char *buf, size_t n)
{
    const char *bin = getenv("ATTNVIZ_BIN") ? getenv("ATTNVIZ_BIN") : "build/attnviz";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t got = fread(buf, 1, n - 1, p);
    buf[got] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The same, stderr only (stdout must be empty). */
static int run_err(const char *args, char *buf, size_t n)
{
    const char *bin = getenv("ATTNVIZ_BIN") ? getenv("ATTNVIZ_BIN") : "build/attnviz";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/null", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t got = fread(buf, 1, n - 1, p);
    buf[got] = 0;
    int st = pclose(p);
    char out[64];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", bin, args);
    p = popen(cmd, "r");
    assert_non_null(p);
    assert_int_equal(fread(out, 1, sizeof out, p), 0); /* nothing on stdout */
    pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void **state)
{
    (void)state;
    const char *dir = GPT2_FIX "f32-h3";
    static char out[20000], plain[20000], want[4000];
    char args[800];
    AttnErr err = {0};
    /* the text: three byte tokens that no merge joins: ids 0, 2, 3 */
    int ids[3] = {0, 2, 3}, top[10];
    float probs[10];
    Lm lm;
    assert_int_equal(lm_open(&lm, dir, &err), 0);
    ablate_heads(&lm, 1);
    assert_int_equal(lm_forward(&lm, ids, 3, NULL, &err), 0);
    assert_int_equal(lm_top_k(&lm, 2, LM_TOP_K, top, probs, &err), 0);
    snprintf(args, sizeof args, "--model %s --print predictions --ablate 1.2,2.1 '!#$'", dir);
    assert_int_equal(run(args, out, sizeof out), 0);
    /* today's format (id, %.6f probability, the token as a JSON string),
     * the adapter's numbers */
    char *line = out;
    for (int r = 0; r < LM_TOP_K; r++) {
        int id;
        double p;
        if (sscanf(line, "%d\t%lf\t\"", &id, &p) != 2)
            fail_msg("not a prediction line: %s", line);
        assert_int_equal(id, top[r]);
        snprintf(want, sizeof want, "%.6f", (double)probs[r]);
        assert_true(p == strtod(want, NULL));
        line = strchr(line, '\n');
        assert_non_null(line);
        line++;
    }
    assert_int_equal(*line, 0);
    snprintf(args, sizeof args, "--model %s --print predictions '!#$'", dir);
    assert_int_equal(run(args, plain, sizeof plain), 0);
    assert_string_not_equal(out, plain);
    /* --generate 1 with the heads off: the ablated forward's most likely token
     * (the last line of --print tokens, marked g) */
    snprintf(args, sizeof args, "--model %s --print tokens --generate 1 --ablate 1.2,2.1 '!#$'", dir);
    assert_int_equal(run(args, out, sizeof out), 0);
    char *last = out + strlen(out) - 1;
    while (last > out && last[-1] != '\n')
        last--;
    assert_int_equal(atoi(last), top[0]);
    assert_non_null(strstr(last, "\tg"));
    lm_close(&lm);

    /* csv: layer 1 (where 1.2 is switched off) unchanged, layer 2 changed */
    for (int layer = 1; layer <= 2; layer++) {
        snprintf(args, sizeof args, "--model %s --print csv --layer %d --head 1 --ablate 1.2 '!#$'",
                 dir, layer);
        assert_int_equal(run(args, out, sizeof out), 0);
        snprintf(args, sizeof args, "--model %s --print csv --layer %d --head 1 '!#$'", dir, layer);
        assert_int_equal(run(args, plain, sizeof plain), 0);
        assert_true(strlen(out) > 20);
        if (layer == 1)
            assert_string_equal(out, plain);
        else
            assert_string_not_equal(out, plain);
    }

    /* the title of figures and prints names the heads switched off */
    snprintf(args, sizeof args, "--model %s --print text --ablate 1.2,2.1 --ablate-mean '!#$'", dir);
    assert_int_equal(run(args, out, sizeof out), 0);
    assert_true(strncmp(out, "f32-h3 with 1.2, 2.1 mean-ablated: layer 1 of 2", 47) == 0);
    snprintf(args, sizeof args, "--model %s --print text --ablate 2.3 '!#$'", dir);
    assert_int_equal(run(args, out, sizeof out), 0);
    assert_true(strncmp(out, "f32-h3 with 2.3 ablated: ", 25) == 0);

    /* bad input: exit 1 naming the number, 2 for usage; nothing on stdout */
    static const struct {
        const char *args, *named;
        int rc;
    } bad[] = {
        {"--print predictions --ablate 3.1", "layer 3", 1},
        {"--print predictions --ablate 1.1,1.4", "head 4", 1},
        {"--print predictions --ablate 1.x", "--ablate", 2},
        {"--print predictions --ablate 0.1", "--ablate", 2},
        {"--print predictions --ablate 1.2,", "--ablate", 2},
        {"--print predictions --ablate-mean", "--ablate-mean", 2},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        snprintf(args, sizeof args, "--model %s %s '!#$'", dir, bad[k].args);
        int rc = run_err(args, out, sizeof out);
        if (rc != bad[k].rc || !strstr(out, bad[k].named))
            fail_msg("%s: exit %d, '%s'", bad[k].args, rc, out);
    }
    assert_int_equal(run_err("--print csv --ablate 1.1 'a b'", out, sizeof out), 2);
    /* (the window takes --ablate: test_lm_window's test_ablate_flag) */
    /* the probe: its head scores computed with the heads switched off (layer
     * 2's change, layer 1's not) */
    snprintf(args, sizeof args, "--model %s --probe induction:5 --print head-scores --ablate 1.2", dir);
    assert_int_equal(run(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "--model %s --probe induction:5 --print head-scores", dir);
    assert_int_equal(run(args, plain, sizeof plain), 0);
    char *l2a = strstr(out, "\n2,"), *l2p = strstr(plain, "\n2,");
    assert_true(l2a && l2p);
    assert_true(strncmp(out, plain, (size_t)(l2p - plain)) == 0);
    assert_string_not_equal(l2a, l2p);
    snprintf(args, sizeof args, "--model %s --probe induction:5 --print head-scores --ablate 9.1", dir);
    assert_int_equal(run_err(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "layer 9"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
