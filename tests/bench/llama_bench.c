/* The Llama family in `make bench` (issue 27, "Speed and memory"): run.sh
 * builds this with the core and io objects and drives it, one line of
 * "key=value" results a mode.
 *
 *   llama_bench forward [reps]  on random weights made in memory with
 *                               SmolLM2-135M's shapes (30 layers × 9 heads,
 *                               3 key-value heads, head_dim 64, hidden 576,
 *                               intermediate 1536, vocab 49152, tied): a full
 *                               forward of T = 256 and the keystroke at T = 64,
 *                               the weights float32 [in, out] (an F32 or F16
 *                               file, converted)
 *   llama_bench forward-bf16    the same with the matrices and the table in
 *                               bfloat16 as a BF16 file's mapping holds them
 *                               (SmolLM2-135M's own case)
 *   llama_bench forward[-bf16] REPS qwen05|llama1b
 *                               the same with Qwen2.5-0.5B's or Llama-3.2-1B's
 *                               shapes (by hand: the larger models' keystroke)
 *   llama_bench maps T FILE     the L × H × T × T maps of the bench's ids on
 *                               those weights, raw float32, into FILE
 *                               (torch_llama.py --check compares its own)
 *
 * A full forward is rt_reset + rt_forward on a Llama state that held
 * as many tokens (no allocation timed), every map handed over row by row as the forward makes it (maps_out.h). The keystroke
 * replaces the last of 64 tokens (two ids alternating): one position through
 * every layer, the last row of all 270 maps; key64_top_ms adds the top 10
 * predictions there (all 49152 output rows). Medians of reps, in ms. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz/gpt2.h"
#include "attnviz/llama.h"

#include "maps_out.h"
#include "bench_time.h"

static void die(const char *what, const AttnErr *err)
{
    fprintf(stderr, "llama_bench: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    exit(1);
}

/* HuggingFaceTB/SmolLM2-135M's config.json */
static const LlamaConfig SMOL = {.arch = LLAMA_ARCH_LLAMA, .n_layer = 30, .n_head = 9,
                                 .n_kv_head = 3, .head_dim = 64, .hidden = 576,
                                 .n_inner = 1536, .n_positions = 8192, .n_vocab = 49152,
                                 .rms_eps = 1e-5f, .rope_theta = 100000.0, .tied = 1,
                                 .bos_id = 0, .eos_id = 0};

/* Qwen/Qwen2.5-0.5B's and meta-llama/Llama-3.2-1B's shapes (by hand: "opens
 * and updates", issue 27; no biases made for Qwen2's q, k, v) */
static const LlamaConfig QWEN05 = {.arch = LLAMA_ARCH_LLAMA, .n_layer = 24, .n_head = 14,
                                   .n_kv_head = 2, .head_dim = 64, .hidden = 896,
                                   .n_inner = 4864, .n_positions = 32768, .n_vocab = 151936,
                                   .rms_eps = 1e-6f, .rope_theta = 1000000.0, .tied = 1,
                                   .bos_id = -1, .eos_id = -1};
static const LlamaConfig LLAMA1B = {.arch = LLAMA_ARCH_LLAMA, .n_layer = 16, .n_head = 32,
                                    .n_kv_head = 8, .head_dim = 64, .hidden = 2048,
                                    .n_inner = 8192, .n_positions = 131072, .n_vocab = 128256,
                                    .rms_eps = 1e-5f, .rope_theta = 500000.0, .tied = 1,
                                    .bos_id = 128000, .eos_id = 128001};
static const LlamaConfig *CFG = &SMOL; /* the shapes timed */

static uint64_t rng = 88172645463325252ULL;
static float frand(void) /* uniform in [-1, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)(rng >> 40) / (float)(1 << 23) - 1.0f;
}

static float *fill(size_t n, float centre, float spread)
{
    float *a = malloc(n * sizeof *a);
    if (!a)
        die("out of memory", NULL);
    for (size_t i = 0; i < n; i++)
        a[i] = centre + spread * frand();
    return a;
}

static uint16_t *fill16(size_t n, float spread)
{
    uint16_t *a = malloc(n * sizeof *a);
    if (!a)
        die("out of memory", NULL);
    for (size_t i = 0; i < n; i++) {
        float x = spread * frand();
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        a[i] = (uint16_t)(u >> 16);
    }
    return a;
}

static LlamaLayer layers[30];

/* A bfloat16 matrix of rows of k numbers as the forward takes it (runtime.h's RtMat). */
static const RtMat *mat16(size_t rows, size_t k)
{
    RtMat *m = malloc(sizeof *m);
    if (!m)
        die("out of memory", NULL);
    *m = (RtMat){RT_MAT_BF16, fill16(rows * k, 0.05f), k * 2, NULL};
    return m;
}

/* weights of spread 0.05 (std 0.03), norms 1-ish: the numbers do not change
 * the time; bf16: the matrices and the table in bfloat16 [out, in], as a
 * BF16 file is used from its mapping (SmolLM2 ships BF16), else float32 [in,
 * out] as converted F32/F16 files are */
static LlamaWeights random_weights(const LlamaConfig *c, int bf16)
{
    size_t C = (size_t)c->hidden, I = (size_t)c->n_inner;
    size_t qd = (size_t)c->n_head * c->head_dim, kvd = (size_t)c->n_kv_head * c->head_dim;
    for (int l = 0; l < c->n_layer; l++) {
        LlamaLayer *y = &layers[l];
        y->attn_norm = fill(C, 1.0f, 0.1f);
        y->mlp_norm = fill(C, 1.0f, 0.1f);
        y->wq = fill(C * qd, 0, 0.05f);
        y->wk = fill(C * kvd, 0, 0.05f);
        y->wv = fill(C * kvd, 0, 0.05f);
        y->wo = fill(qd * C, 0, 0.05f);
        y->w_gate = fill(C * I, 0, 0.05f);
        y->w_up = fill(C * I, 0, 0.05f);
        y->w_down = fill(I * C, 0, 0.05f);
        if (bf16) {
            free((void *)y->wq), free((void *)y->wk), free((void *)y->wv), free((void *)y->wo);
            free((void *)y->w_gate), free((void *)y->w_up), free((void *)y->w_down);
            y->wq = y->wk = y->wv = y->wo = y->w_gate = y->w_up = y->w_down = NULL;
            y->wq_m = mat16(qd, C), y->wk_m = mat16(kvd, C), y->wv_m = mat16(kvd, C);
            y->wo_m = mat16(C, qd), y->gate_m = mat16(I, C), y->up_m = mat16(I, C);
            y->down_m = mat16(C, I);
        }
    }
    LlamaWeights w = {NULL, layers, fill(C, 1.0f, 0.1f), NULL, NULL, NULL};
    if (bf16)
        w.embed_m = w.lm_head_m = mat16((size_t)c->n_vocab, C);
    else
        w.embed = w.lm_head = fill((size_t)c->n_vocab * C, 0, 0.05f);
    return w;
}

/* the ids torch_llama.py uses too: (7919·i + 13) mod V */
static void make_ids(int *ids, int n, int V)
{
    for (int i = 0; i < n; i++)
        ids[i] = (int)((7919L * i + 13) % V);
}

static int mode_forward(int reps, int bf16)
{
    LlamaWeights w = random_weights(CFG, bf16);
    Rt *s;
    AttnErr err = {0};
    if (rt_create(&s, &arch_llama, CFG, &err) < 0)
        die("state", &err);
    int ids[256];
    make_ids(ids, 256, CFG->n_vocab);
    double t[64], full, key, top;
    reps = reps < 1 ? 1 : reps > 15 ? 15 : reps;
    if (rt_forward(s, &w, ids, 256, NULL, &err) < 0)
        die("forward", &err);
    /* every map made, as the peer returns them (no map is kept by the forward) */
    MapsOut o = {malloc(sizeof(float) * CFG->n_layer * CFG->n_head * 256 * 256), CFG->n_head, 256};
    ForwardHooks rows = {NULL, NULL, &o, map_row};
    if (!o.maps)
        die("out of memory", NULL);
    for (int r = 0; r < reps; r++) {
        rt_reset(s);
        double t0 = now_ms();
        if (rt_forward(s, &w, ids, 256, &rows, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - t0;
    }
    free(o.maps);
    full = median(t, reps);
    if (rt_forward(s, &w, ids, 64, NULL, &err) < 0)
        die("forward", &err);
    int n = 3 * reps, tk[LM_TOP_K];
    float pr[LM_TOP_K], *lg = malloc(sizeof(float) * CFG->n_vocab);
    for (int r = 0; r < n; r++) {
        ids[63] = r % 2 ? 42 : 4242;
        double t0 = now_ms();
        if (rt_forward(s, &w, ids, 64, NULL, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - t0;
    }
    key = median(t, n);
    for (int r = 0; r < n; r++) {
        ids[63] = r % 2 ? 43 : 4243;
        double t0 = now_ms();
        if (rt_forward(s, &w, ids, 64, NULL, &err) < 0 ||
            rt_top_k(s, &w, 63, LM_TOP_K, tk, pr, lg, &err) < 0)
            die("forward", &err);
        t[r] = now_ms() - t0;
    }
    top = median(t, n);
    printf("llama%s kernels=%s fwd256_ms=%.3f key64_ms=%.3f key64_top_ms=%.3f\n",
           bf16 ? "bf16" : "f32", lm_kernels(), full, key, top);
    free(lg);
    rt_destroy(s);
    return 0;
}

static int mode_maps(int T, const char *file)
{
    LlamaWeights w = random_weights(CFG, 0);
    Rt *s;
    AttnErr err = {0};
    int ids[256];
    if (T < 1 || T > 256)
        die("T from 1 to 256", NULL);
    make_ids(ids, T, CFG->n_vocab);
    if (rt_create(&s, &arch_llama, CFG, &err) < 0 || rt_forward(s, &w, ids, T, NULL, &err) < 0)
        die("forward", &err);
    size_t n = (size_t)CFG->n_layer * CFG->n_head * T * T;
    float *m = malloc(n * sizeof *m);
    FILE *f = fopen(file, "wb");
    if (!m || !f)
        die(file, NULL);
    rt_maps_copy(s, m);
    if (fwrite(m, sizeof *m, n, f) != n || fclose(f) != 0)
        die(file, NULL);
    free(m);
    rt_destroy(s);
    return 0;
}

int main(int argc, char **argv)
{
    const char *shape = argc > 3 ? argv[3] : "";
    CFG = strcmp(shape, "qwen05") == 0 ? &QWEN05 : strcmp(shape, "llama1b") == 0 ? &LLAMA1B : &SMOL;
    if (argc >= 2 && strcmp(argv[1], "forward") == 0)
        return mode_forward(argc > 2 ? atoi(argv[2]) : 5, 0);
    if (argc >= 2 && strcmp(argv[1], "forward-bf16") == 0)
        return mode_forward(argc > 2 ? atoi(argv[2]) : 5, 1);
    if (argc == 4 && strcmp(argv[1], "maps") == 0)
        return mode_maps(atoi(argv[2]), argv[3]);
    fprintf(stderr, "usage: llama_bench forward [reps] | forward-bf16 [reps] | maps T FILE\n");
    return 2;
}
