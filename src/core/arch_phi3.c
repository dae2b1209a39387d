/* Phi-3 on the runtime (runtime.h): Hugging Face's modeling_phi3 in eval
 * mode (Phi-3-mini/medium, Phi-3.5-mini, Phi-4, Phi-4-mini: model_type phi3):
 *
 *   x = embed[ids]
 *   per layer l:  a = RMSNorm(x) = x · rsqrt(mean(x²) + eps) · w
 *                 q | k | v = a · qkv_projᵀ    (one fused matrix, rows [q; k; v]:
 *                                               H·hd + 2·KV·hd, no bias)
 *                 q, k rotated per head on their first R = int(hd · partial_rotary_factor)
 *                 dimensions (rotate_half within them: e paired with e + R/2; the rest
 *                 as they are), angle pos · θ^(−2e/R), longrope-scaled when configured:
 *                 divided by short_factor[e], or by long_factor[e] for the whole text
 *                 when it has more than original_max_position_embeddings tokens; cos and
 *                 sin times attention_factor (given, else √(1 + ln(max/orig) / ln(orig))
 *                 when max_position_embeddings > orig, else 1); angles in double
 *                 head h: scores = q_h · k_g(h)ᵀ / √hd, g(h) = h / (H / KV), causal, and
 *                 when sliding_window is not null (every layer) i − window < j;
 *                 weights = softmax; z_h = weights · v_g(h)
 *                 x = x + z · o_projᵀ
 *                 g | u = RMSNorm(x) · gate_up_projᵀ   (rows [gate; up]: 2·I)
 *                 x = x + down(silu(g) · u)
 *   logits = RMSNorm(x) · lm_headᵀ   (lm_head: the embeddings when tied; on demand)
 *
 * Matrices given in bfloat16 are read as stored, [out, in]: each output a
 * dot product of the float32 activations with the widened row.
 *
 * Then its description (arch.h): config.json as transformers' Phi3Config
 * writes it (its defaults: max and original max 4096, eps 1e-5, θ 10000,
 * partial_rotary_factor 1, untied, bos 1; rope_scaling none or longrope, by
 * "rope_type" or the older "type", "su" and "yarn" read as longrope as
 * Phi3Config does; hidden_act silu; every other choice refused by name,
 * each message naming phi3), and Hugging Face's tensor names (shapes as
 * stored, [out, in]; lm_head required when untied); and llama.cpp's GGUF
 * files of general.architecture phi3 as the config and tensors they came
 * from (longrope's factors from its rope_factors tensors). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

#define PHI3_MAX_FACTORS 1024 /* longrope's factors of each list: rotary dims / 2 */

typedef struct Phi3Config {
    int model_type;     /* 0: phi3 (the only one) */
    int n_layer;        /* num_hidden_layers: L */
    int n_head;         /* num_attention_heads: H */
    int n_kv_head;      /* num_key_value_heads (default H), dividing H */
    int head_dim;       /* head_dim when given, else hidden / H (floor, as transformers) */
    int hidden;         /* hidden_size: C */
    int n_inner;        /* intermediate_size: I (gate_up_proj has 2·I rows) */
    int n_positions;    /* max_position_embeddings: the most tokens (default 4096) */
    int orig_max;       /* original_max_position_embeddings (default 4096) */
    int n_vocab;        /* vocab_size */
    float rms_eps;      /* rms_norm_eps (default 1e-5) */
    double rope_theta;  /* rope_theta (default 10000) */
    double partial;     /* partial_rotary_factor, in (0, 1] */
    int rot_dims;       /* int(head_dim · partial): even, ≥ 2 */
    int longrope;       /* rope_scaling's type: 1 longrope, 0 none */
    double attn_factor; /* longrope: rope_scaling's attention_factor (0: absent, then computed) */
    int n_short, n_long;
    double short_f[PHI3_MAX_FACTORS], long_f[PHI3_MAX_FACTORS];
    int tied;           /* tie_word_embeddings */
    int sliding_window; /* 0: none; else on every layer: keys j ≤ i − window masked */
    int bos_id, eos_id; /* -1: none */
    /* a GGUF file's (config.json has neither): rope.dimension_count, the
     * rotary dimensions themselves (0: absent); attention.sliding_window,
     * 0 for none (-1: absent) */
    int gguf_rot_dims, gguf_window;
} Phi3Config;

typedef struct Phi3Layer {
    const float *attn_norm;   /* input_layernorm: [C] */
    const float *w_qkv;       /* qkv_proj: [C, H·hd + 2·KV·hd] */
    const float *wo;          /* o_proj: [H·hd, C] */
    const float *mlp_norm;    /* post_attention_layernorm: [C] */
    const float *w_gate_up;   /* gate_up_proj: [C, 2·I] (gate columns first) */
    const float *w_down;      /* down_proj: [I, C] */
    /* the same matrices in bfloat16, [out, in] (NULL: the float ones) */
    const RtMat *qkv_m, *wo_m, *gate_up_m, *down_m;
} Phi3Layer;

typedef struct Phi3Weights {
    const float *embed;       /* embed_tokens: [V, C] */
    const Phi3Layer *layers;
    const float *norm;        /* model.norm: [C] */
    const float *lm_head;     /* [V, C]: embed when tied */
    const RtMat *embed_m, *lm_head_m;
} Phi3Weights;

static int check(const void *cfg, AttnErr *err)
{
    const Phi3Config *c = cfg;
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_kv_head <= 0 || c->head_dim <= 0 ||
        c->hidden <= 0 || c->n_inner <= 0 || c->n_positions <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "phi3: sizes must be positive (num_hidden_layers %d, "
                            "num_attention_heads %d, num_key_value_heads %d, head_dim %d, "
                            "hidden_size %d, intermediate_size %d, max_position_embeddings %d, "
                            "vocab_size %d)", c->n_layer, c->n_head, c->n_kv_head, c->head_dim,
                            c->hidden, c->n_inner, c->n_positions, c->n_vocab);
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0, "phi3: num_attention_heads %d is not "
                            "divisible by num_key_value_heads %d", c->n_head, c->n_kv_head);
    if (c->rot_dims < 2 || c->rot_dims % 2 || c->rot_dims > c->head_dim)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "phi3: partial_rotary_factor %g of "
                            "head_dim %d gives %d rotary dimensions (they must be even and at "
                            "least 2)", c->partial, c->head_dim, c->rot_dims);
    if (!(c->rms_eps >= 0.0f) || !isfinite(c->rms_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "phi3: rms_norm_eps %g", c->rms_eps);
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "phi3: rope_theta %g", c->rope_theta);
    if (c->longrope && (c->n_short != c->rot_dims / 2 || c->n_long != c->rot_dims / 2 ||
                        c->orig_max <= 0 || !(c->attn_factor > 0.0) || !isfinite(c->attn_factor)))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "phi3: rope_scaling longrope: "
                            "short_factor (%d) and long_factor (%d) must have rotary dimensions "
                            "/ 2 = %d numbers each, original_max_position_embeddings %d and "
                            "attention factor %g be positive", c->n_short, c->n_long,
                            c->rot_dims / 2, c->orig_max, c->attn_factor);
    if (c->sliding_window < 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "phi3: sliding_window %d",
                            c->sliding_window);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const Phi3Config *c = cfg;
    RopeSpec rope = {.kind = ROPE_HALF, .dims = c->rot_dims, .theta = c->rope_theta};
    if (c->longrope) {
        rope.scaling = ROPE_SCALE_LONGROPE;
        rope.orig_max = c->orig_max;
        rope.short_f = c->short_f;
        rope.long_f = c->long_f;
        rope.attn_factor = c->attn_factor;
    }
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_kv_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .n_rows = 1, .row_w = {2 * c->n_inner},
                   .rope = rope};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const Phi3Weights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        rt_embed_row(xi, w->embed, w->embed_m, ids[i], C);
    }
}

/* Layer l on positions [start, T) of the residual stream. */
static void layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const Phi3Config *c = rt->cfg;
    const Phi3Layer *w = &((const Phi3Weights *)wv)->layers[l];
    int C = c->hidden, I = c->n_inner, qd = rt->qdim, W = rt->qkv_w, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *qkv = rt_qkv(rt, l, start);
    float *gu = rt_row(rt->rows[0], 2 * I, start);
    OpsNorm an = {OPS_NORM_RMS, w->attn_norm, NULL, c->rms_eps};
    OpsNorm mn = {OPS_NORM_RMS, w->mlp_norm, NULL, c->rms_eps};
    RtAttn a = {.causal = 1, .window = c->sliding_window,
                .mul = (float)(1.0 / sqrt((double)c->head_dim))};

    ops_add_norm(x, NULL, xn, &an, n, C);
    /* the fused rows [q; k; v] are the cache row's layout */
    rt_project(rt, qkv, W, xn, C, w->w_qkv, w->qkv_m, NULL, n, C, W);
    rt_rope(rt, l, start, T);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, qd, start), qd, w->wo, w->wo_m, NULL, n, qd, C);
    ops_add_norm(x, out, xn, &mn, n, C);
    rt_project(rt, gu, 2 * I, xn, C, w->w_gate_up, w->gate_up_m, NULL, n, C, 2 * I);
    for (int i = 0; i < n; i++) /* silu(gate) · up into each row's first half */
        ops_glu(gu + (size_t)i * 2 * I, gu + (size_t)i * 2 * I + I, (size_t)I, OPS_SILU);
    rt_project(rt, out, C, gu, 2 * I, w->w_down, w->down_m, NULL, n, I, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const Phi3Weights *w = wv;
    const Phi3Config *c = rt->cfg;
    OpsNorm fn = {OPS_NORM_RMS, w->norm, NULL, c->rms_eps};
    ops_norm(rt->xf, x, &fn, 1, c->hidden);
    rt_vocab_dots(out, rt->xf, w->lm_head, w->lm_head_m, c->hidden, c->n_vocab);
}

static const RtArch arch_phi3 = {"Phi-3", sizeof(Phi3Config), check, shape, embed, layer, logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(Phi3Config, field)
#define ONLY(field, value) {offsetof(Phi3Config, field), 1u << (value)}

static const ArchName types[] = {{"phi3", 0}, {NULL, 0}};
/* Phi3Config reads the older "su" and "yarn" as longrope */
static const ArchName rope_types[] = {
    {"default", 0}, {"longrope", 1}, {"su", 1}, {"yarn", 1}, {NULL, 0}};
static const ArchName silu[] = {{"silu", 0}, {NULL, 0}};

/* Sizes from others: the key-value heads and the head size. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    Phi3Config *c = cfg;
    if (!c->n_kv_head)
        c->n_kv_head = c->n_head;
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, file, 0, "phi3: num_attention_heads %d is not "
                            "divisible by num_key_value_heads %d", c->n_head, c->n_kv_head);
    if (!c->head_dim && !(c->head_dim = c->hidden / c->n_head))
        return attn_err_set(err, ATTN_E_HEADS, file, 0, "phi3: hidden_size %d has no "
                            "dimension for each of num_attention_heads %d", c->hidden, c->n_head);
    return 0;
}

/* The rotary dimensions; longrope's lists one per rotated pair, its
 * attention factor (transformers' _compute_longrope_parameters: factor =
 * max_position_embeddings / original_max_position_embeddings). */
static int rope_read(void *cfg, const char *file, AttnErr *err)
{
    Phi3Config *c = cfg;
    if (c->partial > 1.0)
        return attn_err_set(err, ATTN_E_RANGE, file, 0, "phi3: partial_rotary_factor %g is "
                            "outside (0, 1]", c->partial);
    c->rot_dims = (int)(c->head_dim * c->partial);
    if (c->gguf_rot_dims) { /* the converter's int(partial · hidden) // heads, given */
        if (c->gguf_rot_dims > c->head_dim)
            return attn_err_set(err, ATTN_E_SHAPE, file, 0, "phi3: rope.dimension_count %d is "
                                "more than the head's %d dimensions", c->gguf_rot_dims,
                                c->head_dim);
        c->rot_dims = c->gguf_rot_dims;
        c->partial = (double)c->rot_dims / c->head_dim;
    }
    if (c->rot_dims < 2 || c->rot_dims % 2)
        return attn_err_set(err, ATTN_E_SHAPE, file, 0, "phi3: partial_rotary_factor %g of "
                            "head_dim %d gives %d rotary dimensions (they must be even and at "
                            "least 2)", c->partial, c->head_dim, c->rot_dims);
    if (!c->longrope && (c->n_short || c->n_long)) { /* a GGUF file's rope_factors */
        if (!c->n_short || !c->n_long)
            return attn_err_set(err, ATTN_E_PARSE, file, 0, "phi3: tensor %s without %s: "
                                "longrope wants both", c->n_long ? "rope_factors_long.weight"
                                : "rope_factors_short.weight", c->n_long
                                ? "rope_factors_short.weight" : "rope_factors_long.weight");
        c->longrope = 1;
    }
    if (!c->longrope)
        return 0;
    if (c->n_short != c->rot_dims / 2 || c->n_long != c->rot_dims / 2)
        return attn_err_set(err, ATTN_E_SHAPE, file, 0, "phi3: rope_scaling's short_factor has "
                            "%d numbers and long_factor %d: longrope wants rotary dimensions / 2 "
                            "= %d each (head_dim %d, partial_rotary_factor %g)", c->n_short,
                            c->n_long, c->rot_dims / 2, c->head_dim, c->partial);
    if (c->attn_factor == 0.0) {
        double factor = (double)c->n_positions / c->orig_max;
        if (factor > 1.0 && c->orig_max < 2)
            return attn_err_set(err, ATTN_E_RANGE, file, 0, "phi3: original_max_position_"
                                "embeddings %d leaves longrope's attention factor undefined "
                                "(ln 1 = 0): give rope_scaling's attention_factor", c->orig_max);
        c->attn_factor = factor <= 1.0 ? 1.0 : sqrt(1.0 + log(factor) / log((double)c->orig_max));
    }
    return 0;
}

/* A token id outside the vocabulary is none; a GGUF file's window (its
 * converter writes null as 0). */
static int rest_read(void *cfg, const char *file, AttnErr *err)
{
    (void)file, (void)err;
    Phi3Config *c = cfg;
    if (c->gguf_window > 0)
        c->sliding_window = c->gguf_window;
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->n_vocab ? c->eos_id : -1;
    return 0;
}

#define INT(key, field, flags, dflt_, hi_) \
    {key, AF_INT, AT(field), flags, .dflt = dflt_, .hi = hi_, \
     .bad = "phi3: \"%s\" must be a whole number from 1 to " #hi_}
#define LONGROPE_LIST(key, field, count) \
    {"rope_scaling." key, AF_NUMBERS, AT(field), AF_REQUIRED | AF_NULL, .lo = 0, \
     .hi = PHI3_MAX_FACTORS, .count_off = AT(count), .when = ONLY(longrope, 1), \
     .missing = "phi3: rope_scaling of type longrope has no \"%s\" list", \
     .bad = "phi3: rope_scaling's \"%s\" must be a list of at most 1024 positive numbers"}

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(model_type), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (phi3)", .bad = "no \"model_type\" string (phi3)",
     .refused = "model_type \"%s\" is not phi3"},
    INT("hidden_size", hidden, AF_REQUIRED, 0, 131072),
    INT("num_hidden_layers", n_layer, AF_REQUIRED, 0, 4096),
    INT("num_attention_heads", n_head, AF_REQUIRED, 0, 4096),
    INT("intermediate_size", n_inner, AF_REQUIRED, 0, 1048576),
    INT("vocab_size", n_vocab, AF_REQUIRED, 0, 16777216),
    INT("num_key_value_heads", n_kv_head, AF_NULL, 0, 4096),
    INT("max_position_embeddings", n_positions, AF_NULL, 4096, 4194304),
    INT("original_max_position_embeddings", orig_max, AF_NULL, 4096, 4194304),
    INT("head_dim", head_dim, AF_NULL, 0, 16384),
    ARCH_STEP(sizes_read),
    {"rms_norm_eps", AF_FLOAT, AT(rms_eps), AF_NULL, .dflt = 1e-5, .lo = 0, .hi = 1,
     .bad = "phi3: \"%s\" must be a number above 0 and below 1"},
    {"rope_theta", AF_DOUBLE, AT(rope_theta), AF_NULL, .dflt = 10000.0, .lo = 0, .hi = 1e30,
     .bad = "phi3: \"%s\" must be a positive number"},
    {"partial_rotary_factor", AF_DOUBLE, AT(partial), AF_NULL, .dflt = 1.0, .lo = 0,
     .hi = INFINITY, .bad = "phi3: \"%s\" must be a number in (0, 1]"},
    /* only a GGUF file gives it (gguf_keys below) */
    INT("gguf_rope_dimension_count", gguf_rot_dims, AF_NULL, 0, 16384),
    /* a GGUF file's longrope: its rope_factors tensors and attn_factor key
     * (gguf_keys below; before rope_scaling's rows, which then stand) */
    {"gguf_short_factor", AF_NUMBERS, AT(short_f), AF_NULL, .lo = 0, .hi = PHI3_MAX_FACTORS,
     .count_off = AT(n_short),
     .bad = "phi3: tensor rope_factors_short.weight must hold at most 1024 numbers"},
    {"gguf_long_factor", AF_NUMBERS, AT(long_f), AF_NULL, .lo = 0, .hi = PHI3_MAX_FACTORS,
     .count_off = AT(n_long),
     .bad = "phi3: tensor rope_factors_long.weight must hold at most 1024 numbers"},
    {"gguf_attn_factor", AF_DOUBLE, AT(attn_factor), AF_NULL, .lo = 0, .hi = INFINITY,
     .bad = "phi3: phi3.rope.scaling.attn_factor must be a positive number"},
    {"rope_scaling", AF_OBJECT, ARCH_NOWHERE, .flags = AF_NULL},
    {"rope_scaling.rope_type", AF_ENUM, AT(longrope), AF_REQUIRED, .names = rope_types,
     .alias = "type", .missing = "phi3: rope_scaling has no \"rope_type\" (or \"type\") string",
     .bad = "phi3: rope_scaling has no \"rope_type\" (or \"type\") string",
     .refused = "phi3: rope_scaling type \"%s\" is not computed (none, \"default\" or "
                "\"longrope\")"},
    LONGROPE_LIST("short_factor", short_f, n_short),
    LONGROPE_LIST("long_factor", long_f, n_long),
    {"rope_scaling.attention_factor", AF_DOUBLE, AT(attn_factor), AF_NULL, .lo = 0,
     .hi = INFINITY, .when = ONLY(longrope, 1),
     .bad = "phi3: rope_scaling's \"%s\" must be a positive number"},
    ARCH_STEP(rope_read),
    {"hidden_act", AF_ENUM, ARCH_NOWHERE, AF_NULL, .names = silu,
     .bad = "phi3: \"%s\" must be a string",
     .refused = "phi3: hidden_act \"%s\" is not computed (only \"silu\")"},
    {"tie_word_embeddings", AF_BOOL, AT(tied), .dflt = 0},
    INT("sliding_window", sliding_window, AF_NULL, 0, 1073741824),
    {"gguf_sliding_window", AF_ID, AT(gguf_window), .dflt = -1,
     .bad = "phi3: phi3.attention.sliding_window must be a whole number from 0"},
    {"bos_token_id", AF_ID, AT(bos_id), AF_LIST, .dflt = 1},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = 32000}, /* Phi3Config's <|endoftext|> */
    ARCH_STEP(rest_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_I2, S_I, S_QKV, S_QD, S_V };

static void sizes(const void *cfg, long long *s)
{
    const Phi3Config *c = cfg;
    s[S_C] = c->hidden;
    s[S_I2] = 2LL * c->n_inner;
    s[S_I] = c->n_inner;
    s[S_QKV] = (long long)(c->n_head + 2 * c->n_kv_head) * c->head_dim;
    s[S_QD] = (long long)c->n_head * c->head_dim;
    s[S_V] = c->n_vocab;
}

#define W(field, f16) offsetof(Phi3Weights, field), offsetof(Phi3Weights, f16)
#define Y(field, f16) offsetof(Phi3Layer, field), offsetof(Phi3Layer, f16)
#define L_NORM(name, field) \
    {"model.layers.%d." name, AT_PLAIN, AT_LAYER, 1, {S_C, 0}, offsetof(Phi3Layer, field), \
     ARCH_NOWHERE, .tie = -1}
#define L_MAT(name, out, in, field, f16) \
    {"model.layers.%d." name, AT_MATRIX, AT_LAYER, 2, {out, in}, Y(field, f16), .tie = -1}

static const ArchTensor tensors[] = {
    {"model.embed_tokens.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(embed, embed_m), .tie = -1},
    L_NORM("input_layernorm.weight", attn_norm),
    L_MAT("self_attn.qkv_proj.weight", S_QKV, S_C, w_qkv, qkv_m),
    L_MAT("self_attn.o_proj.weight", S_C, S_QD, wo, wo_m),
    L_NORM("post_attention_layernorm.weight", mlp_norm),
    L_MAT("mlp.gate_up_proj.weight", S_I2, S_C, w_gate_up, gate_up_m),
    L_MAT("mlp.down_proj.weight", S_C, S_I, w_down, down_m),
    {"model.norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, offsetof(Phi3Weights, norm), ARCH_NOWHERE,
     .tie = -1},
    {"lm_head.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(lm_head, lm_head_m),
     .when = ONLY(tied, 0), .tie = 0,
     .missing = "phi3: no tensor lm_head.weight, and config.json says tie_word_embeddings "
                "false: the output layer is missing (attnviz never falls back to the "
                "embeddings)"},
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const Phi3Config *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "phi3 tensor %s: %s expected, %s found (as stored, [out, in]; "
                        "config.json: hidden_size %d, num_attention_heads %d, "
                        "num_key_value_heads %d, head_dim %d, intermediate_size %d, "
                        "vocab_size %d)", tensor, want, got, c->hidden, c->n_head,
                        c->n_kv_head, c->head_dim, c->n_inner, c->n_vocab);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const Phi3Config *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, -1};
}

/* ---- GGUF files ------------------------------------------------------------------- */
/* What llama.cpp's converter (Phi3MiniModel) writes: no head_dim (hidden /
 * heads, as llama.cpp takes it), the rotary dimensions themselves, null
 * sliding_window as 0; longrope as the tensors rope_factors_long/short
 * and the attention factor it computed (then chosen by the text's length
 * as Hugging Face does; llama.cpp chooses by its context's size). A rope
 * scaling type no converter writes is mapped so that the table refuses it
 * by name. */
static const ArchGgufKey gguf_keys[] = {
    {"%s.block_count", "num_hidden_layers"},
    {"%s.embedding_length", "hidden_size"},
    {"%s.feed_forward_length", "intermediate_size"},
    {"%s.attention.head_count", "num_attention_heads"},
    {"%s.attention.head_count_kv", "num_key_value_heads"},
    {"%s.context_length", "max_position_embeddings"},
    {"%s.rope.scaling.original_context_length", "original_max_position_embeddings"},
    {"%s.attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"%s.rope.freq_base", "rope_theta"},
    {"%s.rope.dimension_count", "gguf_rope_dimension_count"},
    {"%s.rope.scaling.type", "rope_scaling.rope_type"},
    {"%s.attention.sliding_window", "gguf_sliding_window"},
    {ARCH_GGUF_TENSOR "rope_factors_short.weight", "gguf_short_factor"},
    {ARCH_GGUF_TENSOR "rope_factors_long.weight", "gguf_long_factor"},
    {"%s.rope.scaling.attn_factor", "gguf_attn_factor"},
    {"tokenizer.ggml.bos_token_id", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token_id"},
    {NULL, NULL},
};

/* The fused matrices are kept as they are: attn_qkv's rows [q; k; v],
 * ffn_up's [gate; up]. */
static const ArchGgufName gguf_names[] = {
    {"token_embd.weight", "model.embed_tokens.weight", AG_SAME},
    {"output_norm.weight", "model.norm.weight", AG_SAME},
    {"output.weight", "lm_head.weight", AG_SAME},
    {"blk.%d.attn_norm.weight", "model.layers.%d.input_layernorm.weight", AG_SAME},
    {"blk.%d.attn_qkv.weight", "model.layers.%d.self_attn.qkv_proj.weight", AG_SAME},
    {"blk.%d.attn_output.weight", "model.layers.%d.self_attn.o_proj.weight", AG_SAME},
    {"blk.%d.ffn_norm.weight", "model.layers.%d.post_attention_layernorm.weight", AG_SAME},
    {"blk.%d.ffn_up.weight", "model.layers.%d.mlp.gate_up_proj.weight", AG_SAME},
    {"blk.%d.ffn_down.weight", "model.layers.%d.mlp.down_proj.weight", AG_SAME},
    {NULL, NULL, AG_SAME},
};

static const ArchGguf gguf[] = {
    {"phi3", "phi3", gguf_keys, gguf_names, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_phi3 = {
    .types = types, .rt = &arch_phi3, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(Phi3Weights, Phi3Layer), .sizes = sizes, .facts = facts,
    .required_note = "a phi3 config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "embed_tokens", .shape_error = shape_error, .gguf = gguf,
};
