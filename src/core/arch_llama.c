/* The Llama family on the runtime (runtime.h): Hugging Face's
 * modeling_llama / modeling_qwen2 / modeling_mistral in eval mode, on the
 * plain data of llama.h:
 *
 *   x = embed[ids]
 *   per layer l:  a = RMSNorm(x) = x · rsqrt(mean(x²) + eps) · w
 *                 q = a·Wq (+bq), k = a·Wk (+bk), v = a·Wv (+bv)
 *                 q, k rotated per head (rotate_half, angle pos · θ^(−2e/d),
 *                 llama3-scaled when configured; the angles in double)
 *                 head h: scores = q_h · k_g(h)ᵀ / √head_dim, g(h) = h / (H / KV),
 *                 causal; weights = softmax; z_h = weights · v_g(h)
 *                 x = x + z · Wo (+bo)
 *                 x = x + down(silu(RMSNorm(x)·Wgate) · RMSNorm(x)·Wup)
 *   logits = RMSNorm(x) · lm_headᵀ   (on demand, one position; every row)
 *
 * Matrices given in bfloat16 are read as stored, [out, in]: each output a
 * dot product of the float32 activations with the widened row.
 *
 * Then its description (arch.h): config.json as transformers' LlamaConfig,
 * Qwen2Config and MistralConfig write it (their defaults; rope_scaling none
 * or llama3 with each of its numbers; hidden_act silu; every other choice
 * refused by name; the sliding windows), and Hugging Face's tensor names
 * (shapes as stored, [out, in]; lm_head required when untied). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "attnviz/llama.h"
#include "ops.h"

int llama_config_check(const void *cfg, AttnErr *err)
{
    const LlamaConfig *c = cfg;
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_kv_head <= 0 || c->head_dim <= 0 ||
        c->hidden <= 0 || c->n_inner <= 0 || c->n_positions <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "sizes must be positive (num_hidden_layers %d, num_attention_heads "
                            "%d, num_key_value_heads %d, head_dim %d, hidden_size %d, "
                            "intermediate_size %d, max_position_embeddings %d, vocab_size %d)",
                            c->n_layer, c->n_head, c->n_kv_head, c->head_dim, c->hidden,
                            c->n_inner, c->n_positions, c->n_vocab);
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                            "num_attention_heads %d is not divisible by num_key_value_heads %d",
                            c->n_head, c->n_kv_head);
    if (c->head_dim % 2)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "head_dim %d is odd: the rotary embedding pairs its halves",
                            c->head_dim);
    if (!(c->rms_eps >= 0.0f) || !isfinite(c->rms_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "rms_norm_eps %g", c->rms_eps);
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "rope_theta %g", c->rope_theta);
    if (c->rope_llama3 &&
        (!(c->rope_factor > 0.0) || !isfinite(c->rope_factor) || !(c->rope_low_freq > 0.0) ||
         !(c->rope_high_freq > c->rope_low_freq) || !isfinite(c->rope_high_freq) ||
         c->rope_orig_max <= 0))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "rope_scaling llama3: factor %g, low_freq_factor %g, "
                            "high_freq_factor %g (above low), original_max_position_embeddings "
                            "%d must be positive", c->rope_factor, c->rope_low_freq,
                            c->rope_high_freq, c->rope_orig_max);
    if (c->sliding_window < 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "sliding_window %d", c->sliding_window);
    if (c->n_rope_freqs && c->n_rope_freqs != c->head_dim / 2)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "rope_freqs has %d factors for head_dim "
                            "%d (one a pair: %d)", c->n_rope_freqs, c->head_dim, c->head_dim / 2);
    for (int e = 0; e < c->n_rope_freqs; e++)
        if (!(c->rope_freqs[e] > 0.0) || !isfinite(c->rope_freqs[e]))
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "rope_freqs[%d] %g", e,
                                c->rope_freqs[e]);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const LlamaConfig *c = cfg;
    RopeSpec rope = {.kind = ROPE_HALF, .dims = c->head_dim, .theta = c->rope_theta,
                     .scaling = c->rope_llama3 ? ROPE_SCALE_LLAMA3 : ROPE_SCALE_NONE,
                     .factor = c->rope_factor, .low_freq = c->rope_low_freq,
                     .high_freq = c->rope_high_freq, .orig_max = c->rope_orig_max};
    if (c->n_rope_freqs) /* each pair's factor given: longrope's division, never long */
        rope = (RopeSpec){.kind = ROPE_HALF, .dims = c->head_dim, .theta = c->rope_theta,
                          .scaling = ROPE_SCALE_LONGROPE, .orig_max = 1 << 30,
                          .short_f = c->rope_freqs, .long_f = c->rope_freqs};
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_kv_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .n_rows = 2, .row_w = {c->n_inner, c->n_inner},
                   .rope = rope};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const LlamaWeights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        rt_embed_row(xi, w->embed, w->embed_m, ids[i], C);
    }
}

/* The keys layer l's queries see back: its sliding window, or 0 (all):
 * Mistral's on every layer, Qwen2's from max_window_layers on or as
 * layer_types says (transformers' Qwen2Config.layer_types). */
static int window_of(const LlamaConfig *c, int l)
{
    if (!c->sliding_window)
        return 0;
    if (c->arch != LLAMA_ARCH_QWEN2)
        return c->sliding_window;
    if (c->n_layer_types)
        return c->slides[l] ? c->sliding_window : 0;
    return l >= c->max_window_layers ? c->sliding_window : 0;
}

/* Layer l on positions [start, T) of the residual stream. */
static void layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const LlamaConfig *c = rt->cfg;
    const LlamaLayer *w = &((const LlamaWeights *)wv)->layers[l];
    int C = c->hidden, I = c->n_inner, qd = rt->qdim, kvd = rt->kvdim, W = rt->qkv_w, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *qkv = rt_qkv(rt, l, start);
    float *gate = rt_row(rt->rows[0], I, start), *up = rt_row(rt->rows[1], I, start);
    OpsNorm an = {OPS_NORM_RMS, w->attn_norm, NULL, c->rms_eps};
    OpsNorm mn = {OPS_NORM_RMS, w->mlp_norm, NULL, c->rms_eps};
    RtAttn a = {.causal = 1, .window = window_of(c, l),
                .mul = (float)(1.0 / sqrt((double)c->head_dim))};

    ops_add_norm(x, NULL, xn, &an, n, C);
    RtProj p[3] = {{qkv, W, w->wq, w->wq_m, w->bq, qd},
                   {qkv + qd, W, w->wk, w->wk_m, w->bk, kvd},
                   {qkv + qd + kvd, W, w->wv, w->wv_m, w->bv, kvd}};
    rt_project_each(rt, p, 3, xn, C, n, C);
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
    const LlamaWeights *w = wv;
    const LlamaConfig *c = rt->cfg;
    OpsNorm fn = {OPS_NORM_RMS, w->norm, NULL, c->rms_eps};
    ops_norm(rt->xf, x, &fn, 1, c->hidden);
    rt_vocab_dots(out, rt->xf, w->lm_head, w->lm_head_m, c->hidden, c->n_vocab);
}

const RtArch arch_llama = {
    "Llama", sizeof(LlamaConfig), llama_config_check,
    shape, embed, layer, logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(LlamaConfig, field)
#define ONLY(field, value) {offsetof(LlamaConfig, field), 1u << (value)}

static const ArchName types[] = {
    {"llama", LLAMA_ARCH_LLAMA}, {"qwen2", LLAMA_ARCH_QWEN2}, {"mistral", LLAMA_ARCH_MISTRAL},
    {NULL, 0},
};
static const ArchName rope_types[] = {{"default", 0}, {"llama3", 1}, {NULL, 0}};
static const ArchName silu[] = {{"silu", 0}, {NULL, 0}};
static const ArchName layer_types[] = {{"full_attention", 0}, {"sliding_attention", 1}, {NULL, 0}};

/* The defaults of a model_type and of one size from others; the heads
 * divide. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    static const int max_pos[] = {2048, 32768, 4096 * 32}; /* llama, qwen2, mistral */
    LlamaConfig *c = cfg;
    c->use_sliding_window = c->arch == LLAMA_ARCH_MISTRAL;
    if (!c->n_kv_head)
        c->n_kv_head = c->n_head;
    if (!c->n_positions)
        c->n_positions = max_pos[c->arch];
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, file, 0,
                            "num_attention_heads %d is not divisible by num_key_value_heads %d",
                            c->n_head, c->n_kv_head);
    if (!c->head_dim) {
        if (c->hidden % c->n_head)
            return attn_err_set(err, ATTN_E_HEADS, file, 0,
                                "hidden_size %d is not divisible by num_attention_heads %d (and "
                                "no head_dim)", c->hidden, c->n_head);
        c->head_dim = c->hidden / c->n_head;
    }
    return 0;
}

static int llama3_read(void *cfg, const char *file, AttnErr *err)
{
    const LlamaConfig *c = cfg;
    if (c->rope_llama3 && !(c->rope_high_freq > c->rope_low_freq))
        return attn_err_set(err, ATTN_E_RANGE, file, 0, "rope_scaling's high_freq_factor %g must "
                            "be above its low_freq_factor %g", c->rope_high_freq,
                            c->rope_low_freq);
    return 0;
}

/* qwen2's q, k, v biases; a token id outside the vocabulary is none. */
static int rest_read(void *cfg, const char *file, AttnErr *err)
{
    LlamaConfig *c = cfg;
    if (c->n_layer_types && c->n_layer_types != c->n_layer)
        return attn_err_set(err, ATTN_E_SHAPE, file, 0, "layer_types has %d entries for "
                            "num_hidden_layers %d", c->n_layer_types, c->n_layer);
    c->qkv_bias = c->o_bias || c->arch == LLAMA_ARCH_QWEN2;
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->n_vocab ? c->eos_id : -1;
    return 0;
}

#define LLAMA3(key, field) \
    {"rope_scaling." key, AF_DOUBLE, AT(field), AF_REQUIRED | AF_NULL, .lo = 0, .hi = INFINITY, \
     .when = ONLY(rope_llama3, 1), .missing = "rope_scaling of type llama3 has no \"%s\"", \
     .bad = "rope_scaling's \"%s\" must be a positive number"}

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(arch), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (llama, qwen2 or mistral)",
     .bad = "no \"model_type\" string (llama, qwen2 or mistral)",
     .refused = "model_type \"%s\" is not a Llama-family model (llama, qwen2 or mistral)"},
    {"hidden_size", AF_INT, AT(hidden), AF_REQUIRED, .hi = 1 << 17},
    {"num_hidden_layers", AF_INT, AT(n_layer), AF_REQUIRED, .hi = 4096},
    {"num_attention_heads", AF_INT, AT(n_head), AF_REQUIRED, .hi = 4096},
    {"intermediate_size", AF_INT, AT(n_inner), AF_REQUIRED, .hi = 1 << 20},
    {"vocab_size", AF_INT, AT(n_vocab), AF_REQUIRED, .hi = 1 << 24},
    {"num_key_value_heads", AF_INT, AT(n_kv_head), AF_NULL, .hi = 4096},
    {"max_position_embeddings", AF_INT, AT(n_positions), AF_NULL, .hi = 1 << 22},
    {"head_dim", AF_INT, AT(head_dim), AF_NULL, .hi = 1 << 14},
    ARCH_STEP(sizes_read),
    {"rms_norm_eps", AF_FLOAT, AT(rms_eps), AF_NULL, .dflt = 1e-6, .lo = 0, .hi = 1},
    {"rope_theta", AF_DOUBLE, AT(rope_theta), AF_NULL, .dflt = 10000.0, .lo = 0, .hi = 1e30},
    {"rope_scaling", AF_OBJECT, ARCH_NOWHERE, .flags = AF_NULL},
    {"rope_scaling.rope_type", AF_ENUM, AT(rope_llama3), AF_REQUIRED, .names = rope_types,
     .alias = "type", .missing = "rope_scaling has no \"rope_type\" (or \"type\") string",
     .bad = "rope_scaling has no \"rope_type\" (or \"type\") string",
     .refused = "rope_scaling type \"%s\" is not computed (none, \"default\" or \"llama3\")"},
    LLAMA3("factor", rope_factor),
    LLAMA3("low_freq_factor", rope_low_freq),
    LLAMA3("high_freq_factor", rope_high_freq),
    {"rope_scaling.original_max_position_embeddings", AF_INT, AT(rope_orig_max),
     AF_REQUIRED | AF_NULL, .hi = 1 << 24, .when = ONLY(rope_llama3, 1),
     .missing = "rope_scaling of type llama3 has no \"%s\"",
     .bad = "rope_scaling's \"%s\" must be a positive number",
     .not_whole = "rope_scaling's \"%s\" must be a whole number"},
    ARCH_STEP(llama3_read),
    {"hidden_act", AF_ENUM, ARCH_NOWHERE, AF_NULL, .names = silu,
     .refused = "hidden_act \"%s\" is not computed (only \"silu\")"},
    {"tie_word_embeddings", AF_BOOL, AT(tied), .dflt = 0},
    {"attention_bias", AF_BOOL, AT(o_bias), .when = ONLY(arch, LLAMA_ARCH_LLAMA)},
    {"mlp_bias", AF_BOOL, ARCH_NOWHERE, .refused = "%s true is not computed"},
    {"use_sliding_window", AF_BOOL, AT(use_sliding_window), .when = ONLY(arch, LLAMA_ARCH_QWEN2)},
    {"sliding_window", AF_INT, AT(sliding_window), AF_NULL, .hi = 1 << 30,
     .when = ONLY(use_sliding_window, 1)},
    {"max_window_layers", AF_ID, AT(max_window_layers), 0, .dflt = 28,
     .when = ONLY(arch, LLAMA_ARCH_QWEN2)},
    {"layer_types", AF_NAMES, AT(slides), AF_NULL, .hi = 4096, .names = layer_types,
     .count_off = AT(n_layer_types), .when = ONLY(arch, LLAMA_ARCH_QWEN2),
     .refused = "layer_types \"%s\" is not computed (full_attention or sliding_attention)"},
    {"bos_token_id", AF_ID, AT(bos_id), AF_LIST, .dflt = -1},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = -1},
    /* a GGUF file's rope_freqs.weight (gguf_keys below); no config.json has it */
    {"rope_freqs", AF_NUMBERS, AT(rope_freqs), AF_NULL, .lo = 0, .hi = 1024,
     .count_off = AT(n_rope_freqs)},
    ARCH_STEP(rest_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_I, S_QD, S_KVD, S_V };

static void sizes(const void *cfg, long long *s)
{
    const LlamaConfig *c = cfg;
    s[S_C] = c->hidden;
    s[S_I] = c->n_inner;
    s[S_QD] = (long long)c->n_head * c->head_dim;
    s[S_KVD] = (long long)c->n_kv_head * c->head_dim;
    s[S_V] = c->n_vocab;
}

#define W(field, f16) offsetof(LlamaWeights, field), offsetof(LlamaWeights, f16)
#define Y(field, f16) offsetof(LlamaLayer, field), offsetof(LlamaLayer, f16)
#define Y32(field) offsetof(LlamaLayer, field), ARCH_NOWHERE
#define L_NORM(name, field) \
    {"model.layers.%d." name, AT_PLAIN, AT_LAYER, 1, {S_C, 0}, Y32(field), .tie = -1}
#define L_MAT(name, out, in, field, f16) \
    {"model.layers.%d." name, AT_MATRIX, AT_LAYER, 2, {out, in}, Y(field, f16), .tie = -1}
#define L_BIAS(name, d, field, flag) \
    {"model.layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .tie = -1, \
     .when = ONLY(flag, 1)}

static const ArchTensor tensors[] = {
    {"model.embed_tokens.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(embed, embed_m), .tie = -1},
    L_NORM("input_layernorm.weight", attn_norm),
    L_MAT("self_attn.q_proj.weight", S_QD, S_C, wq, wq_m),
    L_MAT("self_attn.k_proj.weight", S_KVD, S_C, wk, wk_m),
    L_MAT("self_attn.v_proj.weight", S_KVD, S_C, wv, wv_m),
    L_MAT("self_attn.o_proj.weight", S_C, S_QD, wo, wo_m),
    L_BIAS("self_attn.q_proj.bias", S_QD, bq, qkv_bias),
    L_BIAS("self_attn.k_proj.bias", S_KVD, bk, qkv_bias),
    L_BIAS("self_attn.v_proj.bias", S_KVD, bv, qkv_bias),
    L_BIAS("self_attn.o_proj.bias", S_C, bo, o_bias),
    L_NORM("post_attention_layernorm.weight", mlp_norm),
    L_MAT("mlp.gate_proj.weight", S_I, S_C, w_gate, gate_m),
    L_MAT("mlp.up_proj.weight", S_I, S_C, w_up, up_m),
    L_MAT("mlp.down_proj.weight", S_C, S_I, w_down, down_m),
    {"model.norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, offsetof(LlamaWeights, norm), ARCH_NOWHERE,
     .tie = -1},
    {"lm_head.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(lm_head, lm_head_m),
     .when = ONLY(tied, 0), .tie = 0,
     .missing = "no tensor lm_head.weight, and config.json says tie_word_embeddings false: the "
                "output layer is missing (attnviz never falls back to the embeddings)"},
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const LlamaConfig *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "tensor %s: %s expected, %s found (as stored, [out, in]; "
                        "config.json: hidden_size %d, num_attention_heads %d, "
                        "num_key_value_heads %d, head_dim %d, intermediate_size %d, "
                        "vocab_size %d)", tensor, want, got, c->hidden, c->n_head,
                        c->n_kv_head, c->head_dim, c->n_inner, c->n_vocab);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const LlamaConfig *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, -1};
}

/* ---- GGUF files ------------------------------------------------------------------- */
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
    {"%s.vocab_size", "vocab_size"},
    {"tokenizer.ggml.bos_token_id", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token_id"},
    {ARCH_GGUF_TENSOR "rope_freqs.weight", "rope_freqs"},
    {NULL, NULL},
};

/* llama.cpp's converter permutes Llama's query and key rows (and their
 * biases) for its rotary layout; Qwen2's it keeps. */
#define GGUF_NAMES(q, k) \
    {"token_embd.weight", "model.embed_tokens.weight", AG_SAME}, \
    {"output_norm.weight", "model.norm.weight", AG_SAME}, \
    {"output.weight", "lm_head.weight", AG_SAME}, \
    {"blk.%d.attn_norm.weight", "model.layers.%d.input_layernorm.weight", AG_SAME}, \
    {"blk.%d.attn_q.weight", "model.layers.%d.self_attn.q_proj.weight", q}, \
    {"blk.%d.attn_k.weight", "model.layers.%d.self_attn.k_proj.weight", k}, \
    {"blk.%d.attn_v.weight", "model.layers.%d.self_attn.v_proj.weight", AG_SAME}, \
    {"blk.%d.attn_output.weight", "model.layers.%d.self_attn.o_proj.weight", AG_SAME}, \
    {"blk.%d.attn_q.bias", "model.layers.%d.self_attn.q_proj.bias", q}, \
    {"blk.%d.attn_k.bias", "model.layers.%d.self_attn.k_proj.bias", k}, \
    {"blk.%d.attn_v.bias", "model.layers.%d.self_attn.v_proj.bias", AG_SAME}, \
    {"blk.%d.attn_output.bias", "model.layers.%d.self_attn.o_proj.bias", AG_SAME}, \
    {"blk.%d.ffn_norm.weight", "model.layers.%d.post_attention_layernorm.weight", AG_SAME}, \
    {"blk.%d.ffn_gate.weight", "model.layers.%d.mlp.gate_proj.weight", AG_SAME}, \
    {"blk.%d.ffn_up.weight", "model.layers.%d.mlp.up_proj.weight", AG_SAME}, \
    {"blk.%d.ffn_down.weight", "model.layers.%d.mlp.down_proj.weight", AG_SAME}, \
    {NULL, NULL, AG_SAME}

static const ArchGgufName gguf_llama[] = {GGUF_NAMES(AG_ROPE_Q, AG_ROPE_K)};
static const ArchGgufName gguf_qwen2[] = {GGUF_NAMES(AG_SAME, AG_SAME)};

static const ArchGguf gguf[] = {
    {"llama", "llama", gguf_keys, gguf_llama, NULL},
    {"qwen2", "qwen2", gguf_keys, gguf_qwen2, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_llama = {
    .types = types, .rt = &arch_llama, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(LlamaWeights, LlamaLayer), .sizes = sizes, .facts = facts,
    .required_note = "a Llama-family config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "embed_tokens", .shape_error = shape_error, .gguf = gguf,
};
