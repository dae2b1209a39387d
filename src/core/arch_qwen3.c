/* Qwen3 (model_type qwen3: Qwen3 0.6B to 32B) on the runtime (runtime.h):
 * Hugging Face's modeling_qwen3 (transformers >= 4.53) in eval mode.
 * Qwen2's layout without its q, k, v biases, with a norm on each head's
 * queries and keys:
 *
 *   x = embed[ids]
 *   per layer l:  a = RMSNorm(x) = x · rsqrt(mean(x²) + eps) · w
 *                 q = a·Wq (+bq), k = a·Wk (+bk), v = a·Wv (+bv)
 *                       (biases only with attention_bias, then also bo)
 *                 each head's d = head_dim numbers of q and of k:
 *                   q_h = RMSNorm_d(q_h) · q_norm,  k_g = RMSNorm_d(k_g) · k_norm
 *                       (over the head's own d numbers, weights [d], same eps)
 *                 q, k rotated per head (rotate_half, angle pos · θ^(−2e/d),
 *                 rope_scaling linear or llama3 when configured; angles in double)
 *                 head h: scores = q_h · k_g(h)ᵀ / √d, g(h) = h / (H / KV),
 *                 causal (and on a sliding layer only keys j > i − window);
 *                 weights = softmax; z_h = weights · v_g(h)
 *                 x = x + z · Wo (+bo)
 *                 x = x + down(silu(RMSNorm(x)·Wgate) · RMSNorm(x)·Wup)
 *   logits = RMSNorm(x) · lm_headᵀ   (lm_head the embeddings when tied)
 *
 * d is the config's head_dim (transformers' default 128 when absent), not
 * hidden / heads. A layer slides only with use_sliding_window: as
 * layer_types says, else from max_window_layers on (Qwen3Config's rule).
 * Matrices given in bfloat16 are read as stored, [out, in].
 *
 * Then its description (arch.h): config.json as Qwen3Config writes it (its
 * defaults; rope_scaling none, default, linear or llama3; hidden_act silu;
 * every other choice refused naming qwen3 and the key or value) and Hugging
 * Face's tensor names (shapes as stored, [out, in]; lm_head required when
 * untied), and the GGUF rows that read llama.cpp's qwen3 files as that
 * config.json. The config and weights structs are this file's own. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

enum { Q3_ROPE_NONE = 0, Q3_ROPE_LINEAR, Q3_ROPE_LLAMA3 };

typedef struct Qwen3Config {
    int model_type;     /* 0: the one type */
    int n_layer;        /* num_hidden_layers: L */
    int n_head;         /* num_attention_heads: H */
    int n_kv_head;      /* num_key_value_heads: KV dividing H (absent: 32, null: H, as
                           Qwen3Config) */
    int head_dim;       /* head_dim: d (absent: 128; in a GGUF file hidden / heads) */
    int head_dim_given; /* head_dim as given, -1 when absent (for a GGUF file's default) */
    int hidden;         /* hidden_size: C */
    int n_inner;        /* intermediate_size: I */
    int n_positions;    /* max_position_embeddings */
    int n_vocab;        /* vocab_size */
    float rms_eps;      /* rms_norm_eps: every norm's, q_norm and k_norm too */
    double rope_theta;
    int rope;           /* Q3_ROPE_*: rope_scaling's type (none and "default": none) */
    double rope_factor, rope_low_freq, rope_high_freq;
    int rope_orig_max;  /* llama3's original_max_position_embeddings */
    int bias;           /* attention_bias: q, k, v and o biases */
    int tied;           /* tie_word_embeddings */
    int use_sliding_window;
    int sliding_window; /* read with use_sliding_window (absent 4096; null -1, then 0:
                           none); 0: no layer slides */
    int max_window_layers; /* the first layer that slides (default 28) */
    int n_layer_types;  /* layer_types given (its length), or 0 */
    unsigned char slides[4096]; /* layer_types: 1 sliding_attention */
    int bos_id, eos_id; /* -1: none */
} Qwen3Config;

typedef struct Qwen3Layer {
    const float *attn_norm;    /* input_layernorm: [C] */
    const float *wq, *bq;      /* q_proj: [C, H·d] (float32 [in, out]), [H·d] or NULL */
    const float *wk, *bk;      /* k_proj: [C, KV·d], [KV·d] or NULL */
    const float *wv, *bv;      /* v_proj: [C, KV·d], [KV·d] or NULL */
    const float *wo, *bo;      /* o_proj: [H·d, C], [C] or NULL */
    const float *q_norm, *k_norm; /* [d] each */
    const float *mlp_norm;     /* post_attention_layernorm: [C] */
    const float *w_gate, *w_up, *w_down; /* [C, I], [C, I], [I, C] */
    /* the same matrices in bfloat16, [out, in] (NULL: the float ones) */
    const RtMat *wq_m, *wk_m, *wv_m, *wo_m;
    const RtMat *gate_m, *up_m, *down_m;
} Qwen3Layer;

typedef struct Qwen3Weights {
    const float *embed;        /* embed_tokens: [V, C] */
    const Qwen3Layer *layers;
    const float *norm;         /* [C] */
    const float *lm_head;      /* [V, C]: embed when tied */
    const RtMat *embed_m, *lm_head_m;
} Qwen3Weights;

static int check(const void *cfg, AttnErr *err)
{
    const Qwen3Config *c = cfg;
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_kv_head <= 0 || c->head_dim <= 0 ||
        c->hidden <= 0 || c->n_inner <= 0 || c->n_positions <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "qwen3: sizes must be positive (num_hidden_layers %d, "
                            "num_attention_heads %d, num_key_value_heads %d, head_dim %d, "
                            "hidden_size %d, intermediate_size %d, max_position_embeddings %d, "
                            "vocab_size %d)", c->n_layer, c->n_head, c->n_kv_head, c->head_dim,
                            c->hidden, c->n_inner, c->n_positions, c->n_vocab);
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0, "qwen3: num_attention_heads %d is not "
                            "divisible by num_key_value_heads %d", c->n_head, c->n_kv_head);
    if (c->head_dim % 2)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "qwen3: head_dim %d is odd: the rotary "
                            "embedding pairs its halves", c->head_dim);
    if (!(c->rms_eps >= 0.0f) || !isfinite(c->rms_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "qwen3: rms_norm_eps %g", c->rms_eps);
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "qwen3: rope_theta %g", c->rope_theta);
    if (c->rope < Q3_ROPE_NONE || c->rope > Q3_ROPE_LLAMA3 ||
        (c->rope != Q3_ROPE_NONE && (!(c->rope_factor > 0.0) || !isfinite(c->rope_factor))))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "qwen3: rope_scaling factor %g must be "
                            "positive", c->rope_factor);
    if (c->rope == Q3_ROPE_LLAMA3 &&
        (!(c->rope_low_freq > 0.0) || !(c->rope_high_freq > c->rope_low_freq) ||
         !isfinite(c->rope_high_freq) || c->rope_orig_max <= 0))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "qwen3: rope_scaling llama3: low_freq_factor %g, high_freq_factor %g "
                            "(above low), original_max_position_embeddings %d must be positive",
                            c->rope_low_freq, c->rope_high_freq, c->rope_orig_max);
    if (c->sliding_window < 0 || c->max_window_layers < 0 || c->n_layer_types < 0 ||
        (c->n_layer_types && c->n_layer_types != c->n_layer))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "qwen3: sliding_window %d, "
                            "max_window_layers %d, layer_types of %d for %d layers",
                            c->sliding_window, c->max_window_layers, c->n_layer_types,
                            c->n_layer);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const Qwen3Config *c = cfg;
    static const RopeScaling scaling[] = {ROPE_SCALE_NONE, ROPE_SCALE_LINEAR, ROPE_SCALE_LLAMA3};
    RopeSpec rope = {.kind = ROPE_HALF, .dims = c->head_dim, .theta = c->rope_theta,
                     .scaling = scaling[c->rope], .factor = c->rope_factor,
                     .low_freq = c->rope_low_freq, .high_freq = c->rope_high_freq,
                     .orig_max = c->rope_orig_max};
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_kv_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .n_rows = 2, .row_w = {c->n_inner, c->n_inner},
                   .rope = rope};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const Qwen3Weights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        rt_embed_row(xi, w->embed, w->embed_m, ids[i], C);
    }
}

/* The keys layer l's queries see back (0: all): none without a window;
 * else as layer_types says, or from max_window_layers on. */
static int window_of(const Qwen3Config *c, int l)
{
    if (!c->sliding_window)
        return 0;
    if (c->n_layer_types)
        return c->slides[l] ? c->sliding_window : 0;
    return l >= c->max_window_layers ? c->sliding_window : 0;
}

static void layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const Qwen3Config *c = rt->cfg;
    const Qwen3Layer *w = &((const Qwen3Weights *)wv)->layers[l];
    int C = c->hidden, I = c->n_inner, d = c->head_dim, qd = rt->qdim, kvd = rt->kvdim;
    int W = rt->qkv_w, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *qkv = rt_qkv(rt, l, start);
    float *gate = rt_row(rt->rows[0], I, start), *up = rt_row(rt->rows[1], I, start);
    OpsNorm an = {OPS_NORM_RMS, w->attn_norm, NULL, c->rms_eps};
    OpsNorm mn = {OPS_NORM_RMS, w->mlp_norm, NULL, c->rms_eps};
    OpsNorm qn = {OPS_NORM_RMS, w->q_norm, NULL, c->rms_eps};
    OpsNorm kn = {OPS_NORM_RMS, w->k_norm, NULL, c->rms_eps};
    RtAttn a = {.causal = 1, .window = window_of(c, l), .mul = (float)(1.0 / sqrt((double)d))};

    ops_add_norm(x, NULL, xn, &an, n, C);
    RtProj p[3] = {{qkv, W, w->wq, w->wq_m, w->bq, qd},
                   {qkv + qd, W, w->wk, w->wk_m, w->bk, kvd},
                   {qkv + qd + kvd, W, w->wv, w->wv_m, w->bv, kvd}};
    rt_project_each(rt, p, 3, xn, C, n, C);
    /* q_norm and k_norm: each head's d numbers, before the rotation */
    for (int i = start; i < T; i++) {
        float *r = rt_qkv(rt, l, i);
        ops_norm(r, r, &qn, c->n_head, d);
        ops_norm(r + qd, r + qd, &kn, c->n_kv_head, d);
    }
    rt_rope(rt, l, start, T);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, qd, start), qd, w->wo, w->wo_m, w->bo, n, qd, C);
    ops_add_norm(x, out, xn, &mn, n, C);
    RtProj gu[2] = {{gate, I, w->w_gate, w->gate_m, NULL, I}, {up, I, w->w_up, w->up_m, NULL, I}};
    rt_project_each(rt, gu, 2, xn, C, n, C);
    ops_glu(gate, up, (size_t)n * I, OPS_SILU);
    rt_project(rt, out, C, gate, I, w->w_down, w->down_m, NULL, n, I, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const Qwen3Weights *w = wv;
    const Qwen3Config *c = rt->cfg;
    OpsNorm fn = {OPS_NORM_RMS, w->norm, NULL, c->rms_eps};
    ops_norm(rt->xf, x, &fn, 1, c->hidden);
    rt_vocab_dots(out, rt->xf, w->lm_head, w->lm_head_m, c->hidden, c->n_vocab);
}

static const RtArch arch_qwen3 = {"Qwen3", sizeof(Qwen3Config), check, shape, embed, layer,
                                  logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(Qwen3Config, field)
#define ONLY(field, mask) {offsetof(Qwen3Config, field), (mask)}

static const ArchName types[] = {{"qwen3", 0}, {NULL, 0}};
static const ArchName rope_types[] = {
    {"default", Q3_ROPE_NONE}, {"linear", Q3_ROPE_LINEAR}, {"llama3", Q3_ROPE_LLAMA3}, {NULL, 0},
};
static const ArchName silu[] = {{"silu", 0}, {NULL, 0}};
static const ArchName layer_types[] = {{"full_attention", 0}, {"sliding_attention", 1}, {NULL, 0}};

#define WHOLE(hi) "qwen3: \"%s\" must be a whole number from 1 to " #hi
#define SIZE(key, field, max) \
    {key, AF_INT, AT(field), AF_REQUIRED, .hi = max, .bad = WHOLE(max)}
#define BOOL(key, field) \
    {key, AF_BOOL, AT(field), .bad = "qwen3: \"%s\" must be true or false"}
#define ID(key, field) \
    {key, AF_ID, AT(field), AF_LIST, .dflt = -1, \
     .bad = "qwen3: \"%s\" must be null, a whole number from 0 or a list of them"}

/* num_key_value_heads null: the heads (absent: 32, Qwen3Config's default);
 * they divide; head_dim even. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    Qwen3Config *c = cfg;
    if (c->n_kv_head == -1)
        c->n_kv_head = c->n_head;
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, file, 0, "qwen3: num_attention_heads %d is not "
                            "divisible by num_key_value_heads %d%s", c->n_head, c->n_kv_head,
                            c->n_kv_head == 32 ? " (32 is Qwen3Config's default when absent)"
                                               : "");
    if (c->head_dim % 2)
        return attn_err_set(err, ATTN_E_SHAPE, file, 0, "qwen3: head_dim %d is odd: the rotary "
                            "embedding pairs its halves", c->head_dim);
    return 0;
}

static int llama3_read(void *cfg, const char *file, AttnErr *err)
{
    const Qwen3Config *c = cfg;
    if (c->rope == Q3_ROPE_LLAMA3 && !(c->rope_high_freq > c->rope_low_freq))
        return attn_err_set(err, ATTN_E_RANGE, file, 0, "qwen3: rope_scaling's high_freq_factor "
                            "%g must be above its low_freq_factor %g", c->rope_high_freq,
                            c->rope_low_freq);
    return 0;
}

/* The windows as Qwen3Config decides them; a token id outside the
 * vocabulary is none. */
static int rest_read(void *cfg, const char *file, AttnErr *err)
{
    Qwen3Config *c = cfg;
    if (c->sliding_window == -1) /* use_sliding_window with sliding_window null */
        c->sliding_window = 0;
    if (c->n_layer_types && c->n_layer_types != c->n_layer)
        return attn_err_set(err, ATTN_E_SHAPE, file, 0, "qwen3: layer_types has %d entries for "
                            "num_hidden_layers %d", c->n_layer_types, c->n_layer);
    for (int l = 0; l < c->n_layer_types; l++)
        if (c->slides[l] && !c->sliding_window)
            return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0, "qwen3: layer_types makes "
                                "layer %d \"sliding_attention\" but there is no window "
                                "(use_sliding_window false or sliding_window null): "
                                "transformers cannot mask it either", l);
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->n_vocab ? c->eos_id : -1;
    return 0;
}

#define SCALED ((1u << Q3_ROPE_LINEAR) | (1u << Q3_ROPE_LLAMA3))
#define LLAMA3(key, field) \
    {"rope_scaling." key, AF_DOUBLE, AT(field), AF_REQUIRED | AF_NULL, .lo = 0, .hi = INFINITY, \
     .when = ONLY(rope, 1u << Q3_ROPE_LLAMA3), \
     .missing = "qwen3: rope_scaling of type llama3 has no \"%s\"", \
     .bad = "qwen3: rope_scaling's \"%s\" must be a positive number"}

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(model_type), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (qwen3)", .bad = "no \"model_type\" string (qwen3)",
     .refused = "model_type \"%s\" is not qwen3"},
    SIZE("hidden_size", hidden, 131072),
    SIZE("num_hidden_layers", n_layer, 4096),
    SIZE("num_attention_heads", n_head, 4096),
    SIZE("intermediate_size", n_inner, 1048576),
    SIZE("vocab_size", n_vocab, 16777216),
    /* num_key_value_heads: checked as a size (null allowed), then kept as
     * an id: absent 32, null -1 (the heads) */
    {"num_key_value_heads", AF_INT, ARCH_NOWHERE, AF_NULL, .hi = 4096,
     .bad = "qwen3: \"%s\" must be null or a whole number from 1 to 4096"},
    {"num_key_value_heads", AF_ID, AT(n_kv_head), 0, .dflt = 32},
    {"max_position_embeddings", AF_INT, AT(n_positions), 0, .dflt = 32768, .hi = 4194304,
     .bad = WHOLE(4194304)},
    {"head_dim", AF_INT, AT(head_dim), 0, .dflt = 128, .hi = 16384,
     .bad = "qwen3: \"%s\" must be a whole number from 1 to 16384 (absent: 128; never hidden_size "
            "/ num_attention_heads)"},
    {"head_dim", AF_ID, AT(head_dim_given), 0, .dflt = -1},
    ARCH_STEP(sizes_read),
    {"rms_norm_eps", AF_FLOAT, AT(rms_eps), AF_NULL, .dflt = 1e-6, .lo = 0, .hi = 1,
     .bad = "qwen3: \"%s\" must be a number above 0 and below 1"},
    {"rope_theta", AF_DOUBLE, AT(rope_theta), AF_NULL, .dflt = 10000.0, .lo = 0, .hi = 1e30,
     .bad = "qwen3: \"%s\" must be a number above 0 and below 1e30"},
    {"rope_scaling", AF_OBJECT, ARCH_NOWHERE, .flags = AF_NULL,
     .bad = "qwen3: \"%s\" must be null or an object"},
    {"rope_scaling.rope_type", AF_ENUM, AT(rope), AF_REQUIRED, .names = rope_types,
     .alias = "type", .missing = "qwen3: rope_scaling has no \"rope_type\" (or \"type\") string",
     .bad = "qwen3: rope_scaling has no \"rope_type\" (or \"type\") string",
     .refused = "qwen3: rope_scaling type \"%s\" is not computed (none, \"default\", "
                "\"linear\" or \"llama3\")"},
    {"rope_scaling.factor", AF_DOUBLE, AT(rope_factor), AF_REQUIRED | AF_NULL, .lo = 0,
     .hi = INFINITY, .when = ONLY(rope, SCALED),
     .missing = "qwen3: rope_scaling of type linear or llama3 has no \"%s\"",
     .bad = "qwen3: rope_scaling's \"%s\" must be a positive number"},
    LLAMA3("low_freq_factor", rope_low_freq),
    LLAMA3("high_freq_factor", rope_high_freq),
    {"rope_scaling.original_max_position_embeddings", AF_INT, AT(rope_orig_max),
     AF_REQUIRED | AF_NULL, .hi = 1 << 24, .when = ONLY(rope, 1u << Q3_ROPE_LLAMA3),
     .missing = "qwen3: rope_scaling of type llama3 has no \"%s\"",
     .bad = "qwen3: rope_scaling's \"%s\" must be a positive number",
     .not_whole = "qwen3: rope_scaling's \"%s\" must be a whole number"},
    ARCH_STEP(llama3_read),
    {"hidden_act", AF_ENUM, ARCH_NOWHERE, AF_NULL, .names = silu,
     .bad = "qwen3: \"%s\" must be a string",
     .refused = "qwen3: hidden_act \"%s\" is not computed (only \"silu\")"},
    BOOL("tie_word_embeddings", tied),
    BOOL("attention_bias", bias),
    BOOL("use_sliding_window", use_sliding_window),
    /* sliding_window with use_sliding_window: checked as a size (null
     * allowed), then kept as an id: absent 4096, null -1 (none) */
    {"sliding_window", AF_INT, ARCH_NOWHERE, AF_NULL, .hi = 1 << 30,
     .when = ONLY(use_sliding_window, 1u << 1),
     .bad = "qwen3: \"%s\" must be null or a whole number from 1 to 1073741824"},
    {"sliding_window", AF_ID, AT(sliding_window), 0, .dflt = 4096,
     .when = ONLY(use_sliding_window, 1u << 1)},
    {"max_window_layers", AF_ID, AT(max_window_layers), 0, .dflt = 28,
     .bad = "qwen3: \"%s\" must be a whole number from 0"},
    {"layer_types", AF_NAMES, AT(slides), AF_NULL, .hi = 4096, .names = layer_types,
     .count_off = AT(n_layer_types),
     .bad = "qwen3: \"%s\" must be a list of at most 4096 strings",
     .refused = "qwen3: layer_types \"%s\" is not computed (full_attention or "
                "sliding_attention)"},
    ID("bos_token_id", bos_id),
    ID("eos_token_id", eos_id),
    ARCH_STEP(rest_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_I, S_QD, S_KVD, S_V, S_D };

static void sizes(const void *cfg, long long *s)
{
    const Qwen3Config *c = cfg;
    s[S_C] = c->hidden;
    s[S_I] = c->n_inner;
    s[S_QD] = (long long)c->n_head * c->head_dim;
    s[S_KVD] = (long long)c->n_kv_head * c->head_dim;
    s[S_V] = c->n_vocab;
    s[S_D] = c->head_dim;
}

#define W(field, f16) offsetof(Qwen3Weights, field), offsetof(Qwen3Weights, f16)
#define Y(field, f16) offsetof(Qwen3Layer, field), offsetof(Qwen3Layer, f16)
#define Y32(field) offsetof(Qwen3Layer, field), ARCH_NOWHERE
#define L_VEC(name, d, field) \
    {"model.layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .tie = -1}
#define L_MAT(name, out, in, field, f16) \
    {"model.layers.%d." name, AT_MATRIX, AT_LAYER, 2, {out, in}, Y(field, f16), .tie = -1}
#define L_BIAS(name, d, field) \
    {"model.layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .tie = -1, \
     .when = ONLY(bias, 1u << 1)}

static const ArchTensor tensors[] = {
    {"model.embed_tokens.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(embed, embed_m), .tie = -1},
    L_VEC("input_layernorm.weight", S_C, attn_norm),
    L_MAT("self_attn.q_proj.weight", S_QD, S_C, wq, wq_m),
    L_MAT("self_attn.k_proj.weight", S_KVD, S_C, wk, wk_m),
    L_MAT("self_attn.v_proj.weight", S_KVD, S_C, wv, wv_m),
    L_MAT("self_attn.o_proj.weight", S_C, S_QD, wo, wo_m),
    L_BIAS("self_attn.q_proj.bias", S_QD, bq),
    L_BIAS("self_attn.k_proj.bias", S_KVD, bk),
    L_BIAS("self_attn.v_proj.bias", S_KVD, bv),
    L_BIAS("self_attn.o_proj.bias", S_C, bo),
    L_VEC("self_attn.q_norm.weight", S_D, q_norm),
    L_VEC("self_attn.k_norm.weight", S_D, k_norm),
    L_VEC("post_attention_layernorm.weight", S_C, mlp_norm),
    L_MAT("mlp.gate_proj.weight", S_I, S_C, w_gate, gate_m),
    L_MAT("mlp.up_proj.weight", S_I, S_C, w_up, up_m),
    L_MAT("mlp.down_proj.weight", S_C, S_I, w_down, down_m),
    {"model.norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, offsetof(Qwen3Weights, norm), ARCH_NOWHERE,
     .tie = -1},
    {"lm_head.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(lm_head, lm_head_m),
     .when = ONLY(tied, 1u << 0), .tie = 0,
     .missing = "qwen3: no tensor lm_head.weight, and config.json says tie_word_embeddings "
                "false: the output layer is missing (attnviz never falls back to the "
                "embeddings)"},
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const Qwen3Config *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "qwen3 tensor %s: %s expected, %s found (as stored, [out, in]; "
                        "config.json: hidden_size %d, num_attention_heads %d, "
                        "num_key_value_heads %d, head_dim %d, intermediate_size %d, "
                        "vocab_size %d)", tensor, want, got, c->hidden, c->n_head,
                        c->n_kv_head, c->head_dim, c->n_inner, c->n_vocab);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const Qwen3Config *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, -1};
}

/* ---- GGUF files ------------------------------------------------------------------- */
/* What llama.cpp's converter writes for a Qwen3 folder (TextModel's keys:
 * no sliding window, no rope_freqs; rope scaling as a type and a factor,
 * yarn refused by the rope_scaling row). head_count first as
 * num_key_value_heads: a file without head_count_kv has as many key-value
 * heads as heads, as llama.cpp reads it (not Qwen3Config's 32). */
static const ArchGgufKey gguf_keys[] = {
    {"%s.block_count", "num_hidden_layers"},
    {"%s.embedding_length", "hidden_size"},
    {"%s.feed_forward_length", "intermediate_size"},
    {"%s.attention.head_count", "num_attention_heads"},
    {"%s.attention.head_count", "num_key_value_heads"},
    {"%s.attention.head_count_kv", "num_key_value_heads"},
    {"%s.attention.key_length", "head_dim"},
    {"%s.context_length", "max_position_embeddings"},
    {"%s.attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"%s.rope.freq_base", "rope_theta"},
    {"%s.rope.scaling.type", "rope_scaling.rope_type"},
    {"%s.rope.scaling.factor", "rope_scaling.factor"},
    {"tokenizer.ggml.bos_token_id", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token_id"},
    {NULL, NULL},
};

/* The q, k, v biases (attention_bias) are not named: llama.cpp's qwen3
 * has none, and a file holding them is refused naming the tensor. */
static const ArchGgufName gguf_names[] = {
    {"token_embd.weight", "model.embed_tokens.weight", AG_SAME},
    {"output_norm.weight", "model.norm.weight", AG_SAME},
    {"output.weight", "lm_head.weight", AG_SAME},
    {"blk.%d.attn_norm.weight", "model.layers.%d.input_layernorm.weight", AG_SAME},
    {"blk.%d.attn_q.weight", "model.layers.%d.self_attn.q_proj.weight", AG_SAME},
    {"blk.%d.attn_k.weight", "model.layers.%d.self_attn.k_proj.weight", AG_SAME},
    {"blk.%d.attn_v.weight", "model.layers.%d.self_attn.v_proj.weight", AG_SAME},
    {"blk.%d.attn_output.weight", "model.layers.%d.self_attn.o_proj.weight", AG_SAME},
    {"blk.%d.attn_q_norm.weight", "model.layers.%d.self_attn.q_norm.weight", AG_SAME},
    {"blk.%d.attn_k_norm.weight", "model.layers.%d.self_attn.k_norm.weight", AG_SAME},
    {"blk.%d.ffn_norm.weight", "model.layers.%d.post_attention_layernorm.weight", AG_SAME},
    {"blk.%d.ffn_gate.weight", "model.layers.%d.mlp.gate_proj.weight", AG_SAME},
    {"blk.%d.ffn_up.weight", "model.layers.%d.mlp.up_proj.weight", AG_SAME},
    {"blk.%d.ffn_down.weight", "model.layers.%d.mlp.down_proj.weight", AG_SAME},
    {NULL, NULL, AG_SAME},
};

/* A file without key_length: llama.cpp takes hidden / heads (not
 * Qwen3Config's 128); the tensors' shapes then check it. */
static void gguf_fix(void *cfg)
{
    Qwen3Config *c = cfg;
    if (c->head_dim_given < 0 && c->n_head > 0)
        c->head_dim = c->hidden / c->n_head;
}

static const ArchGguf gguf[] = {
    {"qwen3", "qwen3", gguf_keys, gguf_names, gguf_fix},
    {NULL, NULL, NULL, NULL, NULL},
};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_qwen3 = {
    .types = types, .rt = &arch_qwen3, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(Qwen3Weights, Qwen3Layer), .sizes = sizes, .facts = facts,
    .required_note = "a qwen3 config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "embed_tokens", .shape_error = shape_error, .gguf = gguf,
};
