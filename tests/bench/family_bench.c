/* The model families in `make bench` (issue 34, "Speed"): run.sh builds this
 * with every object but main.o and drives it, one line of "key=value"
 * results a run.
 *
 *   family_bench DIR [reps]   opens the folder DIR as the program does
 *                             (lm_open: its config.json's model_type picks the
 *                             architecture; tests/bench/gen_family.py writes
 *                             random weights of a real model's shapes, BF16 as
 *                             those models ship), then times
 *     fwd256_ms   a full forward of T = 256 (the state reset, no allocation
 *                 timed), every map handed over row by row as the forward
 *                 makes it (maps_out.h: what the PyTorch peer returns);
 *     key64_ms    the keystroke at T = 64: the last of 64 tokens replaced
 *                 (two ids alternating): one position through every layer;
 *     key64_top_ms  the same with the top 10 predictions there (every row of
 *                 the output layer): what the window waits for;
 *     key64_weights_ms, key64_norms_ms  the keystroke as the window's worker
 *                 makes it (issue 37, norms): after each layer every map of
 *                 the layer made and read once (as the model view's
 *                 thumbnails and scores read them), then the value norms and
 *                 the maps' copy (rt_maps_take), with the weights shown
 *                 (lm_layer_each) or the norms (lm_layer_norms_each: the
 *                 layer's value norms, then alpha times them), alternated;
 *                 norms_ratio their quotient (the goal: <= 1.2).
 * An encoder (BERT's) instead times fwd128_ms, a full forward of T = 128
 * with every map handed over (fwd128_cpu_ms: its CPU time, both threads),
 * and fwd128_top_ms, a forward and the masked-LM head's top 10 at position
 * 64 (encoder_bench).
 * An encoder-decoder (T5's) times instead
 *     encdec32_ms  a full forward of a 32-token source and a 32-token target
 *                  (the source changed each run: the encoder, the cross keys
 *                  and every target position; the goal: <= 40 ms);
 *     target_key_ms  the target's last token changed (one position a
 *                  decoder layer, the source kept).
 * Medians of reps, in ms. The ids are (7919 i + 13) mod V, as the peer's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz/lm.h"
#include "attnviz/model_file.h"

#include "maps_out.h"
#include "bench_time.h"

static void die(const char *what, const AttnErr *err)
{
    fprintf(stderr, "family_bench: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    exit(1);
}

/* The window worker's keystroke: each layer's maps read once as they are
 * made (weights, or norms), then the norms and the copy. */
typedef struct KeyHook {
    Lm *lm;
    int norms;
    float sums[2];
} KeyHook;

static void read_map(void *user, int layer, int head, const float *map)
{
    KeyHook *k = user;
    (void)layer;
    float s = 0;
    for (int i = 0; i < 64 * 64; i++)
        s += map[i];
    k->sums[head & 1] += s; /* a value used: the read is not optimised away */
}

static void key_layer(void *user, int layer)
{
    KeyHook *k = user;
    (k->norms ? lm_layer_norms_each : lm_layer_each)(k->lm, layer, read_map, k);
}

static double window_key(Lm *lm, int *k, int norms, int id)
{
    AttnErr err = {0};
    KeyHook kh = {lm, norms, {0, 0}};
    LmHooks hooks = {NULL, key_layer, &kh, NULL};
    k[63] = id;
    double a = now_ms();
    if (lm_forward(lm, k, 64, &hooks, &err) < 0 || lm_value_norms(lm, &err) < 0)
        die("forward", &err);
    RtMaps *m = lm_maps_take(lm);
    if (!m)
        die("out of memory", NULL);
    double t = now_ms() - a;
    rt_maps_free(m);
    return t + 0.0 * (kh.sums[0] + kh.sums[1]);
}

/* An encoder (BERT's, issue 36): no prefix to reuse, so every edit is a
 * whole forward; timed at T = 128 (the size) with every map handed
 * over, and with the masked-LM head's top 10 at one position after it (the
 * blank's panel). */
static int encoder_bench(Lm *lm, const int *ids, int reps, double open_ms)
{
    enum { T = 128 };
    AttnErr err = {0};
    int L = lm->info.n_layer, H = lm->info.n_head, top[LM_TOP_K];
    float pr[LM_TOP_K];
    MapsOut mo = {malloc(sizeof(float) * (size_t)L * H * T * T), H, T};
    if (!mo.maps)
        die("out of memory", NULL);
    ForwardHooks rows = {NULL, NULL, &mo, map_row};
    double t[64], tt[64], tc[64];
    if (lm_forward(lm, ids, T, NULL, &err) < 0) /* warm: the pages of the weights */
        die("forward", &err);
    for (int r = 0; r < reps; r++) {
        rt_reset(lm->rt);
        double a = now_ms(), c = cpu_now_ms();
        if (lm_forward(lm, ids, T, &rows, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
        tc[r] = cpu_now_ms() - c;
        rt_reset(lm->rt);
        a = now_ms();
        if (lm_forward(lm, ids, T, NULL, &err) < 0 || lm_top_k(lm, T / 2, LM_TOP_K, top, pr, &err) < 0)
            die("forward", &err);
        tt[r] = now_ms() - a;
    }
    printf("family arch=%s L=%d H=%d KV=%d d=%d V=%d kernels=%s open_ms=%.1f fwd128_ms=%.3f "
           "fwd128_top_ms=%.3f fwd128_cpu_ms=%.3f\n",
           lm->info.arch, L, H, lm->info.n_kv_head, lm->info.d_head, lm->info.n_vocab, lm_kernels(),
           open_ms, median(t, reps), median(tt, reps), median(tc, reps));
    free(mo.maps);
    lm_close(lm);
    return 0;
}

/* The encoder-decoder's timings (rt_forward_encdec), one line. */
static int encdec_bench(Lm *lm, int reps, double open_ms)
{
    AttnErr err = {0};
    int V = lm->info.n_vocab, src[2][32], tgt[32];
    double t[64];
    for (int i = 0; i < 32; i++) {
        src[0][i] = (int)((7919LL * i + 13) % V);
        src[1][i] = (int)((7919LL * i + 17) % V);
        tgt[i] = (int)((104729LL * i + 5) % V);
    }
    tgt[0] = 0; /* the decoder's start token */
    const void *w = lm->model->weights;
    if (rt_forward_encdec(lm->rt, w, src[1], 32, tgt, 32, NULL, NULL, &err) < 0) /* warm */
        die("forward", &err);
    for (int r = 0; r < reps; r++) {
        double a = now_ms();
        if (rt_forward_encdec(lm->rt, w, src[r % 2], 32, tgt, 32, NULL, NULL, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    double full = median(t, reps);
    for (int r = 0; r < reps; r++) {
        tgt[31] = (int)((r * 31 + 7) % V);
        double a = now_ms();
        if (rt_forward_encdec(lm->rt, w, src[0], 32, tgt, 32, NULL, NULL, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    printf("family arch=%s encoder L=%d decoder L=%d H=%d d=%d V=%d kernels=%s open_ms=%.1f "
           "encdec32_ms=%.3f target_key_ms=%.3f\n", lm->info.arch, lm->rt->enc->sh.n_layer,
           lm->info.n_layer, lm->info.n_head, lm->info.d_head, V, lm_kernels(), open_ms, full,
           median(t, reps));
    lm_close(lm);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: family_bench DIR [reps]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    Lm lm = {0};
    AttnErr err = {0};
    double t0 = now_ms();
    if (lm_open(&lm, argv[1], &err) < 0)
        die(argv[1], &err);
    double open_ms = now_ms() - t0;
    if (lm.rt->enc)
        return encdec_bench(&lm, reps, open_ms);
    int V = lm.info.n_vocab, L = lm.info.n_layer, H = lm.info.n_head, ids[256];
    for (int i = 0; i < 256; i++)
        ids[i] = (int)((7919LL * i + 13) % V);
    if (lm.info.masked_lm)
        return encoder_bench(&lm, ids, reps, open_ms);

    MapsOut mo = {malloc(sizeof(float) * (size_t)L * H * 256 * 256), H, 256};
    if (!mo.maps)
        die("out of memory", NULL);
    ForwardHooks rows = {NULL, NULL, &mo, map_row};
    double t[64];
    if (lm_forward(&lm, ids, 256, NULL, &err) < 0) /* warm: the pages of the weights */
        die("forward", &err);
    for (int r = 0; r < reps; r++) {
        rt_reset(lm.rt);
        double a = now_ms();
        if (lm_forward(&lm, ids, 256, &rows, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    double fwd = median(t, reps);

    int k[64], top[LM_TOP_K];
    float pr[LM_TOP_K];
    memcpy(k, ids, sizeof k);
    rt_reset(lm.rt);
    if (lm_forward(&lm, k, 64, NULL, &err) < 0)
        die("forward", &err);
    for (int r = 0; r < reps; r++) {
        k[63] = ids[r % 2 ? 63 : 62];
        double a = now_ms();
        if (lm_forward(&lm, k, 64, NULL, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    double key = median(t, reps);
    for (int r = 0; r < reps; r++) {
        k[63] = ids[r % 2 ? 61 : 60];
        double a = now_ms();
        if (lm_forward(&lm, k, 64, NULL, &err) < 0 || lm_top_k(&lm, 63, LM_TOP_K, top, pr, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - a;
    }
    double key_top = median(t, reps);
    double tw[64], tn[64];
    for (int r = 0; r < reps; r++) { /* weights and norms shown, alternated */
        tw[r] = window_key(&lm, k, 0, ids[r % 2 ? 59 : 58]);
        tn[r] = window_key(&lm, k, 1, ids[r % 2 ? 57 : 56]);
    }
    double kw = median(tw, reps), kn = median(tn, reps);
    printf("family arch=%s L=%d H=%d KV=%d d=%d V=%d kernels=%s open_ms=%.1f fwd256_ms=%.3f "
           "key64_ms=%.3f key64_top_ms=%.3f key64_weights_ms=%.3f key64_norms_ms=%.3f norms_ratio=%.3f\n",
           lm.info.arch, L, H, lm.info.n_kv_head, lm.info.d_head, V, lm_kernels(), open_ms, fwd, key, key_top,
           kw, kn, kn / kw);
    free(mo.maps);
    lm_close(&lm);
    return 0;
}
