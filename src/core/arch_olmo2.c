/* OLMo 2 (model_type olmo2) on the runtime (runtime.h): Hugging Face's
 * modeling_olmo2 in eval mode. Its norms come after the attention and the
 * MLP, none before, and its queries and keys are normalised over the whole
 * projection before the heads are split:
 *
 *   x = embed[ids]
 *   per layer l:  q = q_norm(x·Wq (+bq)), k = k_norm(x·Wk (+bk)), v = x·Wv (+bv)
 *                 (RMSNorm(y) = y · rsqrt(mean(y²) + eps) · w over all
 *                 n_head·head_dim of q, all n_kv·head_dim of k)
 *                 q, k rotated per head (rotate_half, angle pos · θ^(−2e/d),
 *                 scaled linearly or as llama3's when configured; the angles
 *                 in double)
 *                 head h: scores = q_h · k_g(h)ᵀ / √head_dim, g(h) = h / (H / KV),
 *                 causal; weights = softmax; z_h = weights · v_g(h)
 *                 x = x + RMSNorm_post_attention(z · Wo (+bo))
 *                 x = x + RMSNorm_post_feedforward(down(silu(x·Wgate) · x·Wup))
 *   logits = RMSNorm(x) · lm_headᵀ   (on demand, one position; lm_head the
 *                                     embeddings when tied)
 *
 * Matrices given in bfloat16 are read as stored, [out, in]: each output a
 * dot product of the float32 activations with the widened row.
 *
 * Then its description (arch.h): config.json as transformers' Olmo2Config
 * writes it (its defaults; rope_scaling none, default, linear or llama3;
 * hidden_act silu; every other choice refused by name), and Hugging Face's
 * tensor names (shapes as stored, [out, in]; lm_head required when untied),
 * and the GGUF rows that read llama.cpp's olmo2 files as that config.json.
 * Everything here is this file's own; only desc_olmo2 is exported. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

enum { ROPE_DEFAULT = 0, ROPE_LINEAR, ROPE_LLAMA3 };

typedef struct Olmo2Config {
    int model_type;     /* 0: olmo2 (the one it computes) */
    int n_layer;        /* num_hidden_layers: L */
    int n_head;         /* num_attention_heads: H */
    int n_kv_head;      /* num_key_value_heads (default H), dividing H */
    int head_dim;       /* head_dim when given, else hidden / H */
    int hidden;         /* hidden_size: C */
    int n_inner;        /* intermediate_size: I */
    int n_positions;    /* max_position_embeddings (default 2048) */
    int n_vocab;        /* vocab_size */
    float rms_eps;      /* rms_norm_eps (default 1e-5), inside the square root */
    double rope_theta;  /* rope_theta (default 10000) */
    int rope_type;      /* ROPE_DEFAULT (also none), ROPE_LINEAR, ROPE_LLAMA3 */
    double rope_factor, rope_low_freq, rope_high_freq;
    int rope_orig_max;  /* llama3's original_max_position_embeddings */
    int bias;           /* attention_bias: q, k, v and o projections have biases */
    int tied;           /* tie_word_embeddings (default false) */
    int bos_id, eos_id; /* -1: none */
} Olmo2Config;

typedef struct Olmo2Layer {
    const float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo; /* float32 [in, out]; biases or NULL */
    const float *q_norm, *k_norm;       /* [H·head_dim], [KV·head_dim] */
    const float *post_attn, *post_ff;   /* [C] each */
    const float *w_gate, *w_up, *w_down;
    /* the matrices in bfloat16, [out, in] (NULL: the float ones) */
    const RtMat *wq_m, *wk_m, *wv_m, *wo_m, *gate_m, *up_m, *down_m;
} Olmo2Layer;

typedef struct Olmo2Weights {
    const float *embed;       /* [n_vocab, C] */
    const Olmo2Layer *layers;
    const float *norm;        /* the final norm: [C] */
    const float *lm_head;     /* [n_vocab, C]: embed when tied */
    const RtMat *embed_m, *lm_head_m;
} Olmo2Weights;

static int check(const void *cfg, AttnErr *err)
{
    const Olmo2Config *c = cfg;
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_kv_head <= 0 || c->head_dim <= 0 ||
        c->hidden <= 0 || c->n_inner <= 0 || c->n_positions <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "olmo2: sizes must be positive (num_hidden_layers %d, "
                            "num_attention_heads %d, num_key_value_heads %d, head_dim %d, "
                            "hidden_size %d, intermediate_size %d, max_position_embeddings %d, "
                            "vocab_size %d)", c->n_layer, c->n_head, c->n_kv_head, c->head_dim,
                            c->hidden, c->n_inner, c->n_positions, c->n_vocab);
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0, "olmo2: num_attention_heads %d is not "
                            "divisible by num_key_value_heads %d", c->n_head, c->n_kv_head);
    if (c->head_dim % 2)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "olmo2: head_dim %d is odd: the rotary "
                            "embedding pairs its halves", c->head_dim);
    if (!(c->rms_eps > 0.0f) || !isfinite(c->rms_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "olmo2: rms_norm_eps %g", c->rms_eps);
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "olmo2: rope_theta %g", c->rope_theta);
    if (c->rope_type != ROPE_DEFAULT && (!(c->rope_factor > 0.0) || !isfinite(c->rope_factor)))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "olmo2: rope_scaling factor %g must be "
                            "positive", c->rope_factor);
    if (c->rope_type == ROPE_LLAMA3 &&
        (!(c->rope_low_freq > 0.0) || !(c->rope_high_freq > c->rope_low_freq) ||
         !isfinite(c->rope_high_freq) || c->rope_orig_max <= 0))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "olmo2: rope_scaling llama3: "
                            "low_freq_factor %g, high_freq_factor %g (above low), "
                            "original_max_position_embeddings %d must be positive",
                            c->rope_low_freq, c->rope_high_freq, c->rope_orig_max);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const Olmo2Config *c = cfg;
    static const RopeScaling scaling[] = {ROPE_SCALE_NONE, ROPE_SCALE_LINEAR, ROPE_SCALE_LLAMA3};
    RopeSpec rope = {.kind = ROPE_HALF, .dims = c->head_dim, .theta = c->rope_theta,
                     .scaling = scaling[c->rope_type], .factor = c->rope_factor,
                     .low_freq = c->rope_low_freq, .high_freq = c->rope_high_freq,
                     .orig_max = c->rope_orig_max};
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_kv_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .n_rows = 2, .row_w = {c->n_inner, c->n_inner},
                   .rope = rope};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const Olmo2Weights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        rt_embed_row(xi, w->embed, w->embed_m, ids[i], C);
    }
}

/* Layer l on positions [start, T) of the residual stream. */
static void layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const Olmo2Config *c = rt->cfg;
    const Olmo2Layer *w = &((const Olmo2Weights *)wv)->layers[l];
    int C = c->hidden, I = c->n_inner, qd = rt->qdim, kvd = rt->kvdim, W = rt->qkv_w, n = T - start;
    float *x = rt_row(rt->x, C, start), *out = rt_row(rt->out, C, start);
    float *qkv = rt_qkv(rt, l, start);
    float *gate = rt_row(rt->rows[0], I, start), *up = rt_row(rt->rows[1], I, start);
    OpsNorm qn = {OPS_NORM_RMS, w->q_norm, NULL, c->rms_eps};
    OpsNorm kn = {OPS_NORM_RMS, w->k_norm, NULL, c->rms_eps};
    OpsNorm pa = {OPS_NORM_RMS, w->post_attn, NULL, c->rms_eps};
    OpsNorm pf = {OPS_NORM_RMS, w->post_ff, NULL, c->rms_eps};
    RtAttn a = {.causal = 1, .mul = (float)(1.0 / sqrt((double)c->head_dim))};

    /* the projections of x itself (no norm before), then q_norm and k_norm
     * in place over each position's whole query and key, before rope */
    RtProj p[3] = {{qkv, W, w->wq, w->wq_m, w->bq, qd},
                   {qkv + qd, W, w->wk, w->wk_m, w->bk, kvd},
                   {qkv + qd + kvd, W, w->wv, w->wv_m, w->bv, kvd}};
    rt_project_each(rt, p, 3, x, C, n, C);
    for (int i = start; i < T; i++) {
        float *row = rt_qkv(rt, l, i);
        ops_norm(row, row, &qn, 1, qd);
        ops_norm(row + qd, row + qd, &kn, 1, kvd);
    }
    rt_rope(rt, l, start, T);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, qd, start), qd, w->wo, w->wo_m, w->bo, n, qd, C);
    ops_add_norm(out, NULL, out, &pa, n, C); /* the norm after the attention */
    ops_add_norm(x, out, NULL, NULL, n, C);
    RtProj gu[2] = {{gate, I, w->w_gate, w->gate_m, NULL, I}, {up, I, w->w_up, w->up_m, NULL, I}};
    rt_project_each(rt, gu, 2, x, C, n, C);
    ops_glu(gate, up, (size_t)n * I, OPS_SILU);
    rt_project(rt, out, C, gate, I, w->w_down, w->down_m, NULL, n, I, C);
    ops_add_norm(out, NULL, out, &pf, n, C); /* the norm after the MLP */
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const Olmo2Weights *w = wv;
    const Olmo2Config *c = rt->cfg;
    OpsNorm fn = {OPS_NORM_RMS, w->norm, NULL, c->rms_eps};
    ops_norm(rt->xf, x, &fn, 1, c->hidden);
    rt_vocab_dots(out, rt->xf, w->lm_head, w->lm_head_m, c->hidden, c->n_vocab);
}

static const RtArch arch_olmo2 = {
    "OLMo 2", sizeof(Olmo2Config), check, shape, embed, layer, logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(Olmo2Config, field)
#define ONLY(field, value) {offsetof(Olmo2Config, field), 1u << (value)}

static const ArchName types[] = {{"olmo2", 0}, {NULL, 0}};
static const ArchName rope_types[] = {
    {"default", ROPE_DEFAULT}, {"linear", ROPE_LINEAR}, {"llama3", ROPE_LLAMA3}, {NULL, 0}};
static const ArchName silu[] = {{"silu", 0}, {"swish", 0}, {NULL, 0}};

/* Defaults from other sizes; the heads divide. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    Olmo2Config *c = cfg;
    if (!c->n_kv_head)
        c->n_kv_head = c->n_head;
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, file, 0, "olmo2: num_attention_heads %d is not "
                            "divisible by num_key_value_heads %d", c->n_head, c->n_kv_head);
    if (!c->head_dim) {
        if (c->hidden % c->n_head)
            return attn_err_set(err, ATTN_E_HEADS, file, 0, "olmo2: hidden_size %d is not "
                                "divisible by num_attention_heads %d (and no head_dim)",
                                c->hidden, c->n_head);
        c->head_dim = c->hidden / c->n_head;
    }
    return 0;
}

static int llama3_read(void *cfg, const char *file, AttnErr *err)
{
    const Olmo2Config *c = cfg;
    if (c->rope_type == ROPE_LLAMA3 && !(c->rope_high_freq > c->rope_low_freq))
        return attn_err_set(err, ATTN_E_RANGE, file, 0, "olmo2: rope_scaling's high_freq_factor "
                            "%g must be above its low_freq_factor %g", c->rope_high_freq,
                            c->rope_low_freq);
    return 0;
}

/* A token id outside the vocabulary is none. */
static int ids_read(void *cfg, const char *file, AttnErr *err)
{
    Olmo2Config *c = cfg;
    (void)file, (void)err;
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->n_vocab ? c->eos_id : -1;
    return 0;
}

#define SIZE(key_, field_, flags_, max_, max_s) \
    {key_, AF_INT, AT(field_), flags_, .hi = (max_), \
     .bad = "olmo2: \"%s\" must be a whole number from 1 to " max_s, \
     .not_whole = "olmo2: \"%s\" must be a whole number from 1 to " max_s}
#define SCALING(key_, field_, types_) \
    {"rope_scaling." key_, AF_DOUBLE, AT(field_), AF_REQUIRED | AF_NULL, .lo = 0, \
     .hi = INFINITY, .when = {AT(rope_type), types_}, \
     .missing = "olmo2: rope_scaling of this type has no \"%s\"", \
     .bad = "olmo2: rope_scaling's \"%s\" must be a positive number"}

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(model_type), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (olmo2)", .bad = "no \"model_type\" string (olmo2)",
     .refused = "model_type \"%s\" is not an OLMo 2 model (olmo2)"},
    SIZE("hidden_size", hidden, AF_REQUIRED, 1 << 17, "131072"),
    SIZE("num_hidden_layers", n_layer, AF_REQUIRED, 4096, "4096"),
    SIZE("num_attention_heads", n_head, AF_REQUIRED, 4096, "4096"),
    SIZE("intermediate_size", n_inner, AF_REQUIRED, 1 << 20, "1048576"),
    SIZE("vocab_size", n_vocab, AF_REQUIRED, 1 << 24, "16777216"),
    SIZE("num_key_value_heads", n_kv_head, AF_NULL, 4096, "4096"),
    {"max_position_embeddings", AF_INT, AT(n_positions), AF_NULL, .dflt = 2048, .hi = 1 << 22,
     .bad = "olmo2: \"%s\" must be a whole number from 1 to 4194304",
     .not_whole = "olmo2: \"%s\" must be a whole number from 1 to 4194304"},
    SIZE("head_dim", head_dim, AF_NULL, 1 << 14, "16384"),
    ARCH_STEP(sizes_read),
    {"rms_norm_eps", AF_FLOAT, AT(rms_eps), AF_NULL, .dflt = 1e-5, .lo = 0, .hi = 1,
     .bad = "olmo2: \"%s\" must be a number above 0 and below 1"},
    {"rope_theta", AF_DOUBLE, AT(rope_theta), AF_NULL, .dflt = 10000.0, .lo = 0, .hi = 1e30,
     .bad = "olmo2: \"%s\" must be a number above 0 and below 1e30"},
    {"rope_scaling", AF_OBJECT, ARCH_NOWHERE, .flags = AF_NULL},
    {"rope_scaling.rope_type", AF_ENUM, AT(rope_type), AF_REQUIRED, .names = rope_types,
     .alias = "type", .missing = "olmo2: rope_scaling has no \"rope_type\" (or \"type\") string",
     .bad = "olmo2: rope_scaling has no \"rope_type\" (or \"type\") string",
     .refused = "olmo2: rope_scaling type \"%s\" is not computed (none, \"default\", "
                "\"linear\" or \"llama3\")"},
    SCALING("factor", rope_factor, (1u << ROPE_LINEAR) | (1u << ROPE_LLAMA3)),
    SCALING("low_freq_factor", rope_low_freq, 1u << ROPE_LLAMA3),
    SCALING("high_freq_factor", rope_high_freq, 1u << ROPE_LLAMA3),
    {"rope_scaling.original_max_position_embeddings", AF_INT, AT(rope_orig_max),
     AF_REQUIRED | AF_NULL, .hi = 1 << 24, .when = ONLY(rope_type, ROPE_LLAMA3),
     .missing = "olmo2: rope_scaling of this type has no \"%s\"",
     .bad = "olmo2: rope_scaling's \"%s\" must be a whole number from 1 to 16777216",
     .not_whole = "olmo2: rope_scaling's \"%s\" must be a whole number from 1 to 16777216"},
    ARCH_STEP(llama3_read),
    {"hidden_act", AF_ENUM, ARCH_NOWHERE, AF_NULL, .names = silu,
     .bad = "olmo2: \"%s\" must be a string",
     .refused = "olmo2: hidden_act \"%s\" is not computed (only \"silu\")"},
    {"tie_word_embeddings", AF_BOOL, AT(tied), .dflt = 0},
    {"attention_bias", AF_BOOL, AT(bias), .dflt = 0},
    /* OLMo 3's windows in a GGUF file (general.architecture olmo2 too):
     * refused under a key no config.json has (Olmo2Config has no window),
     * named in the message as the file names it */
    {"gguf_sliding_window", AF_INT, ARCH_NOWHERE, AF_NULL, .hi = 0,
     .bad = "olmo2: \"%s\" (OLMo 3's sliding windows) is not computed",
     .not_whole = "olmo2: \"%s\" (OLMo 3's sliding windows) is not computed"},
    {"bos_token_id", AF_ID, AT(bos_id), AF_LIST, .dflt = -1},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = 50279},
    ARCH_STEP(ids_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_I, S_QD, S_KVD, S_V };

static void sizes(const void *cfg, long long *s)
{
    const Olmo2Config *c = cfg;
    s[S_C] = c->hidden;
    s[S_I] = c->n_inner;
    s[S_QD] = (long long)c->n_head * c->head_dim;
    s[S_KVD] = (long long)c->n_kv_head * c->head_dim;
    s[S_V] = c->n_vocab;
}

#define W(field, f16) offsetof(Olmo2Weights, field), offsetof(Olmo2Weights, f16)
#define Y(field, f16) offsetof(Olmo2Layer, field), offsetof(Olmo2Layer, f16)
#define Y32(field) offsetof(Olmo2Layer, field), ARCH_NOWHERE
#define L_VEC(name, d, field) \
    {"model.layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .tie = -1}
#define L_MAT(name, out, in, field, f16) \
    {"model.layers.%d." name, AT_MATRIX, AT_LAYER, 2, {out, in}, Y(field, f16), .tie = -1}
#define L_BIAS(name, d, field) \
    {"model.layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .tie = -1, \
     .when = ONLY(bias, 1)}

static const ArchTensor tensors[] = {
    {"model.embed_tokens.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(embed, embed_m), .tie = -1},
    L_MAT("self_attn.q_proj.weight", S_QD, S_C, wq, wq_m),
    L_MAT("self_attn.k_proj.weight", S_KVD, S_C, wk, wk_m),
    L_MAT("self_attn.v_proj.weight", S_KVD, S_C, wv, wv_m),
    L_MAT("self_attn.o_proj.weight", S_C, S_QD, wo, wo_m),
    L_BIAS("self_attn.q_proj.bias", S_QD, bq),
    L_BIAS("self_attn.k_proj.bias", S_KVD, bk),
    L_BIAS("self_attn.v_proj.bias", S_KVD, bv),
    L_BIAS("self_attn.o_proj.bias", S_C, bo),
    L_VEC("self_attn.q_norm.weight", S_QD, q_norm),
    L_VEC("self_attn.k_norm.weight", S_KVD, k_norm),
    L_VEC("post_attention_layernorm.weight", S_C, post_attn),
    L_VEC("post_feedforward_layernorm.weight", S_C, post_ff),
    L_MAT("mlp.gate_proj.weight", S_I, S_C, w_gate, gate_m),
    L_MAT("mlp.up_proj.weight", S_I, S_C, w_up, up_m),
    L_MAT("mlp.down_proj.weight", S_C, S_I, w_down, down_m),
    {"model.norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, offsetof(Olmo2Weights, norm), ARCH_NOWHERE,
     .tie = -1},
    {"lm_head.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(lm_head, lm_head_m),
     .when = ONLY(tied, 0), .tie = 0,
     .missing = "olmo2: no tensor lm_head.weight, and config.json says tie_word_embeddings "
                "false: the output layer is missing (attnviz never falls back to the "
                "embeddings)"},
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const Olmo2Config *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "olmo2: tensor %s: %s expected, %s found (as stored, [out, in]; "
                        "config.json: hidden_size %d, num_attention_heads %d, "
                        "num_key_value_heads %d, head_dim %d, intermediate_size %d, "
                        "vocab_size %d)", tensor, want, got, c->hidden, c->n_head,
                        c->n_kv_head, c->head_dim, c->n_inner, c->n_vocab);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const Olmo2Config *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, -1};
}

/* ---- GGUF files ------------------------------------------------------------------- */
/* What llama.cpp's converter writes for an OLMo 2 folder (TextModel's
 * keys; yarn refused by the rope_scaling row). OLMo 3's sliding window
 * (olmo2.attention.sliding_window) is read to be refused. */
static const ArchGgufKey gguf_keys[] = {
    {"%s.block_count", "num_hidden_layers"},
    {"%s.embedding_length", "hidden_size"},
    {"%s.feed_forward_length", "intermediate_size"},
    {"%s.attention.head_count", "num_attention_heads"},
    {"%s.attention.head_count_kv", "num_key_value_heads"},
    {"%s.attention.key_length", "head_dim"},
    {"%s.context_length", "max_position_embeddings"},
    {"%s.attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"%s.rope.freq_base", "rope_theta"},
    {"%s.rope.scaling.type", "rope_scaling.rope_type"},
    {"%s.rope.scaling.factor", "rope_scaling.factor"},
    {"%s.attention.sliding_window", "gguf_sliding_window"},
    {"tokenizer.ggml.bos_token_id", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token_id"},
    {NULL, NULL},
};

/* No pre-norms; q_norm and k_norm over the whole projection, as the
 * table's. The biases (attention_bias) are not named: llama.cpp's olmo2
 * never adds them, and a file holding them is refused naming the tensor. */
static const ArchGgufName gguf_names[] = {
    {"token_embd.weight", "model.embed_tokens.weight", AG_SAME},
    {"output_norm.weight", "model.norm.weight", AG_SAME},
    {"output.weight", "lm_head.weight", AG_SAME},
    {"blk.%d.attn_q.weight", "model.layers.%d.self_attn.q_proj.weight", AG_SAME},
    {"blk.%d.attn_k.weight", "model.layers.%d.self_attn.k_proj.weight", AG_SAME},
    {"blk.%d.attn_v.weight", "model.layers.%d.self_attn.v_proj.weight", AG_SAME},
    {"blk.%d.attn_output.weight", "model.layers.%d.self_attn.o_proj.weight", AG_SAME},
    {"blk.%d.attn_q_norm.weight", "model.layers.%d.self_attn.q_norm.weight", AG_SAME},
    {"blk.%d.attn_k_norm.weight", "model.layers.%d.self_attn.k_norm.weight", AG_SAME},
    {"blk.%d.post_attention_norm.weight", "model.layers.%d.post_attention_layernorm.weight",
     AG_SAME},
    {"blk.%d.post_ffw_norm.weight", "model.layers.%d.post_feedforward_layernorm.weight",
     AG_SAME},
    {"blk.%d.ffn_gate.weight", "model.layers.%d.mlp.gate_proj.weight", AG_SAME},
    {"blk.%d.ffn_up.weight", "model.layers.%d.mlp.up_proj.weight", AG_SAME},
    {"blk.%d.ffn_down.weight", "model.layers.%d.mlp.down_proj.weight", AG_SAME},
    {NULL, NULL, AG_SAME},
};

static const ArchGguf gguf[] = {
    {"olmo2", "olmo2", gguf_keys, gguf_names, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_olmo2 = {
    .types = types, .rt = &arch_olmo2, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(Olmo2Weights, Olmo2Layer), .sizes = sizes, .facts = facts,
    .required_note = "an olmo2 config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "embed_tokens", .shape_error = shape_error, .gguf = gguf,
};
