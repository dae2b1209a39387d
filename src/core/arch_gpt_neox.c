/* GPT-NeoX (Pythia, GPT-NeoX-20B) on the runtime (runtime.h): Hugging
 * Face's modeling_gpt_neox in eval mode (transformers >= 4.53):
 *
 *   x = embed_in[ids]
 *   per layer l:  a = LN1(x) = (x − mean) / √(var + eps) · w + b
 *                 f = a · Wqkv (+ bqkv): 3 · C outputs, head h's rows
 *                 [q_h | k_h | v_h] (the fused matrix viewed [H, 3, d]),
 *                 de-interleaved into the cache's q | k | v blocks
 *                 q, k rotated on the first r = int(d · rotary_pct) dims of
 *                 each head (rotate_half within them: e paired with e + r/2,
 *                 angle pos · θ^(−2e/r), θ = rotary_emb_base, divided by the
 *                 factor of rope_scaling linear; angles in double); the rest
 *                 as they are
 *                 head h: scores = q_h · k_hᵀ · d^(−1/2), causal;
 *                 weights = softmax; z_h = weights · v_h
 *                 o = z · Wdense (+ bdense)
 *                 m(y) = act(LN2(y) · W4h + b4h) · Wh + bh, act gelu (erf) or
 *                 the tanh form (gelu_new, gelu_fast, gelu_pytorch_tanh)
 *                 use_parallel_residual:  x = (m(x) + o) + x
 *                 else:                   x = x + o;  x = m(x) + x
 *   logits = LN_f(x) · embed_outᵀ   (on demand, one position; every row,
 *                                     padded vocabulary rows included)
 *
 * Matrices given in bfloat16 are read as stored, [out, in]: each output a
 * dot product of the float32 activations with the widened row.
 *
 * Then its description (arch.h): config.json as transformers'
 * GPTNeoXConfig writes it (its defaults; rope_scaling none, "default" or
 * linear, every other type refused by name; hidden_act gelu, gelu_new,
 * gelu_fast or gelu_pytorch_tanh; rotary_pct in (0, 1]), and Hugging Face's
 * tensor names (with or without "gpt_neox."; shapes as stored, [out, in];
 * embed_out required when untied; Pythia's attention.bias, masked_bias and
 * rotary_emb.inv_freq never read); and llama.cpp's GGUF files of
 * general.architecture gptneox as the config and tensors they came from
 * (gelu erf as the file's model means it: llama.cpp computes the tanh
 * form). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

#define FAMILY "gpt_neox"

typedef struct NeoxConfig {
    int hidden, n_layer, n_head, n_inner, n_vocab, n_positions;
    int head_dim, rot_dims;     /* derived: hidden / heads, int(head_dim · rotary_pct) */
    int act;                    /* OpsAct: OPS_GELU_ERF or OPS_GELU_TANH */
    double rotary_pct, rope_theta, rope_factor;
    int rope_linear;            /* rope_scaling linear */
    float eps;
    int parallel, bias, tied;
    int bos_id, eos_id;
    int gguf_rot_dims;          /* a GGUF file's rope.dimension_count (0: absent) */
} NeoxConfig;

typedef struct NeoxLayer {
    const float *ln1_w, *ln1_b, *ln2_w, *ln2_b;
    const float *qkv, *qkv_b, *dense, *dense_b;
    const float *fc, *fc_b, *proj, *proj_b;
    const RtMat *qkv_m, *dense_m, *fc_m, *proj_m;
} NeoxLayer;

typedef struct NeoxWeights {
    const float *embed, *lnf_w, *lnf_b, *head;
    const RtMat *embed_m, *head_m;
    NeoxLayer *layers;
} NeoxWeights;

static int check(const void *cfg, AttnErr *err)
{
    const NeoxConfig *c = cfg;
    if (c->n_layer <= 0 || c->n_head <= 0 || c->hidden <= 0 || c->n_inner <= 0 ||
        c->n_positions <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            FAMILY " sizes must be positive (num_hidden_layers %d, "
                            "num_attention_heads %d, hidden_size %d, intermediate_size %d, "
                            "max_position_embeddings %d, vocab_size %d)", c->n_layer, c->n_head,
                            c->hidden, c->n_inner, c->n_positions, c->n_vocab);
    if (c->hidden % c->n_head || c->head_dim != c->hidden / c->n_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                            FAMILY ": hidden_size %d is not divisible by num_attention_heads %d",
                            c->hidden, c->n_head);
    if (!(c->rotary_pct > 0.0 && c->rotary_pct <= 1.0))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            FAMILY ": rotary_pct %g is outside (0, 1]", c->rotary_pct);
    if (c->rot_dims <= 0 || c->rot_dims % 2 || c->rot_dims > c->head_dim ||
        c->rot_dims != (c->gguf_rot_dims ? c->gguf_rot_dims
                                         : (int)(c->head_dim * c->rotary_pct)))
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0,
                            FAMILY ": rotary_pct %g of head size %d rotates %d dimensions "
                            "(attnviz rotates an even number, at least 2)", c->rotary_pct,
                            c->head_dim, (int)(c->head_dim * c->rotary_pct));
    if (!(c->eps >= 0.0f) || !isfinite(c->eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, FAMILY ": layer_norm_eps %g", c->eps);
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, FAMILY ": rotary_emb_base %g",
                            c->rope_theta);
    if (c->rope_linear && (!(c->rope_factor > 0.0) || !isfinite(c->rope_factor)))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            FAMILY ": rope_scaling linear factor %g must be positive",
                            c->rope_factor);
    if (c->act != OPS_GELU_ERF && c->act != OPS_GELU_TANH)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0, FAMILY ": activation %d", c->act);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const NeoxConfig *c = cfg;
    RopeSpec rope = {.kind = ROPE_HALF, .dims = c->rot_dims, .theta = c->rope_theta,
                     .scaling = c->rope_linear ? ROPE_SCALE_LINEAR : ROPE_SCALE_NONE,
                     .factor = c->rope_linear ? c->rope_factor : 1.0};
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .n_rows = 3,
                   .row_w = {3 * c->hidden, c->n_inner, c->hidden}, .rope = rope};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const NeoxWeights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        rt_embed_row(xi, w->embed, w->embed_m, ids[i], C);
    }
}

/* The MLP of the normed rows xn into out: act(xn · W4h + b) · Wh + b. */
static void mlp(Rt *rt, const NeoxConfig *c, const NeoxLayer *w, float *out, const float *xn,
                float *hid, int n)
{
    int C = c->hidden, I = c->n_inner;
    rt_project_act(rt, hid, I, xn, C, w->fc, w->fc_m, w->fc_b, n, C, I, c->act);
    rt_project(rt, out, C, hid, I, w->proj, w->proj_m, w->proj_b, n, I, C);
}

/* Layer l on positions [start, T) of the residual stream. */
static void layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const NeoxConfig *c = rt->cfg;
    const NeoxLayer *w = &((const NeoxWeights *)wv)->layers[l];
    int C = c->hidden, H = c->n_head, d = c->head_dim, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *fused = rt_row(rt->rows[0], 3 * C, start);
    float *hid = rt_row(rt->rows[1], c->n_inner, start), *m = rt_row(rt->rows[2], C, start);
    OpsNorm ln1 = {OPS_NORM_LAYER, w->ln1_w, w->ln1_b, c->eps};
    OpsNorm ln2 = {OPS_NORM_LAYER, w->ln2_w, w->ln2_b, c->eps};
    RtAttn a = {.causal = 1, .mul = (float)(1.0 / sqrt((double)d))};

    ops_add_norm(x, NULL, xn, &ln1, n, C);
    rt_project(rt, fused, 3 * C, xn, C, w->qkv, w->qkv_m, w->qkv_b, n, C, 3 * C);
    /* head h's [q | k | v] rows into the cache's q, k and v blocks */
    for (int i = 0; i < n; i++) {
        const float *f = fused + (size_t)i * 3 * C;
        float *row = rt_qkv(rt, l, start + i);
        for (int h = 0; h < H; h++)
            for (int p = 0; p < 3; p++)
                memcpy(row + (size_t)p * C + (size_t)h * d, f + ((size_t)h * 3 + p) * d,
                       (size_t)d * sizeof(float));
    }
    rt_rope(rt, l, start, T);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, C, start), C, w->dense, w->dense_m, w->dense_b, n, C,
               C);
    if (c->parallel) {
        ops_add_norm(x, NULL, xn, &ln2, n, C); /* LN2 of the layer's input */
        mlp(rt, c, w, m, xn, hid, n);
        for (size_t k = 0; k < (size_t)n * C; k++)
            m[k] += out[k];
        ops_add_norm(x, m, NULL, NULL, n, C);
    } else {
        ops_add_norm(x, out, xn, &ln2, n, C);
        mlp(rt, c, w, out, xn, hid, n);
        ops_add_norm(x, out, NULL, NULL, n, C);
    }
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const NeoxWeights *w = wv;
    const NeoxConfig *c = rt->cfg;
    OpsNorm lnf = {OPS_NORM_LAYER, w->lnf_w, w->lnf_b, c->eps};
    ops_norm(rt->xf, x, &lnf, 1, c->hidden);
    rt_vocab_dots(out, rt->xf, w->head, w->head_m, c->hidden, c->n_vocab);
}

static const RtArch arch_gpt_neox = {
    "GPT-NeoX", sizeof(NeoxConfig), check, shape, embed, layer, logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(NeoxConfig, field)
#define ONLY(field, value) {offsetof(NeoxConfig, field), 1u << (value)}

static const ArchName types[] = {{FAMILY, 0}, {NULL, 0}};
static const ArchName acts[] = {
    {"gelu", OPS_GELU_ERF},
    {"gelu_new", OPS_GELU_TANH},
    {"gelu_fast", OPS_GELU_TANH},
    {"gelu_pytorch_tanh", OPS_GELU_TANH},
    {NULL, 0},
};
static const ArchName rope_types[] = {{"default", 0}, {"linear", 1}, {NULL, 0}};
static const ArchName nothing[] = {{NULL, 0}};

/* The head size and the rotated dimensions: transformers' int(head_size ·
 * rotary_pct), which the runtime rotates when even. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    NeoxConfig *c = cfg;
    if (c->hidden % c->n_head)
        return attn_err_set(err, ATTN_E_HEADS, file, 0,
                            FAMILY ": hidden_size %d is not divisible by num_attention_heads %d",
                            c->hidden, c->n_head);
    c->head_dim = c->hidden / c->n_head;
    return 0;
}

static int rotary_read(void *cfg, const char *file, AttnErr *err)
{
    NeoxConfig *c = cfg;
    if (c->gguf_rot_dims) { /* the converter's int(rotary_pct · head size), given */
        if (c->gguf_rot_dims > c->head_dim)
            return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                                FAMILY ": rope.dimension_count %d is more than the head's %d "
                                "dimensions", c->gguf_rot_dims, c->head_dim);
        c->rotary_pct = (double)c->gguf_rot_dims / c->head_dim;
    }
    if (!(c->rotary_pct > 0.0 && c->rotary_pct <= 1.0))
        return attn_err_set(err, ATTN_E_RANGE, file, 0,
                            FAMILY ": \"rotary_pct\" %g is outside (0, 1]", c->rotary_pct);
    c->rot_dims = c->gguf_rot_dims ? c->gguf_rot_dims : (int)(c->head_dim * c->rotary_pct);
    if (c->rot_dims < 2 || c->rot_dims % 2)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0,
                            FAMILY ": \"rotary_pct\" %g of head size %d rotates %d dimensions: "
                            "attnviz rotates an even number, at least 2", c->rotary_pct,
                            c->head_dim, c->rot_dims);
    return 0;
}

/* A token id outside the vocabulary is none. */
static int ids_read(void *cfg, const char *file, AttnErr *err)
{
    NeoxConfig *c = cfg;
    (void)file, (void)err;
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->n_vocab ? c->eos_id : -1;
    return 0;
}

#define SIZE(key, field, flags_, hi_, his) \
    {key, AF_INT, AT(field), flags_, .hi = hi_, \
     .bad = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his, \
     .not_whole = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his}
#define FLAG(key, field, d) \
    {key, AF_BOOL, AT(field), .dflt = d, \
     .bad = FAMILY " config.json: \"%s\" must be true or false"}

#define ID_BAD FAMILY " config.json: \"%s\" must be null, a whole number from 0 or a list of them"

static const ArchField fields[] = {
    {"model_type", AF_ENUM, ARCH_NOWHERE, AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" (a GPT-NeoX's is \"" FAMILY "\")",
     .bad = "no \"model_type\" string (a GPT-NeoX's is \"" FAMILY "\")",
     .refused = "model_type is \"%s\": this reader computes GPT-NeoX (\"" FAMILY "\") only"},
    SIZE("hidden_size", hidden, AF_REQUIRED, 1 << 17, "131072"),
    SIZE("num_hidden_layers", n_layer, AF_REQUIRED, 4096, "4096"),
    SIZE("num_attention_heads", n_head, AF_REQUIRED, 4096, "4096"),
    SIZE("intermediate_size", n_inner, AF_REQUIRED, 1 << 20, "1048576"),
    SIZE("vocab_size", n_vocab, AF_REQUIRED, 1 << 24, "16777216"),
    ARCH_STEP(sizes_read),
    {"max_position_embeddings", AF_INT, AT(n_positions), 0, .dflt = 2048, .hi = 1 << 22,
     .bad = FAMILY " config.json: \"%s\" must be a whole number from 1 to 4194304",
     .not_whole = FAMILY " config.json: \"%s\" must be a whole number from 1 to 4194304"},
    {"rotary_pct", AF_DOUBLE, AT(rotary_pct), 0, .dflt = 0.25, .lo = -INFINITY,
     .hi = INFINITY, .bad = FAMILY " config.json: \"%s\" must be a number in (0, 1]"},
    /* only a GGUF file gives it (gguf_keys below) */
    SIZE("gguf_rope_dimension_count", gguf_rot_dims, 0, 1 << 14, "16384"),
    {"rotary_emb_base", AF_DOUBLE, AT(rope_theta), 0, .dflt = 10000.0, .lo = 0,
     .hi = 1e30, .bad = FAMILY " config.json: \"%s\" must be a positive number"},
    ARCH_STEP(rotary_read),
    {"rope_scaling", AF_OBJECT, ARCH_NOWHERE, .flags = AF_NULL,
     .bad = FAMILY " config.json: \"%s\" must be null or an object"},
    {"rope_scaling.rope_type", AF_ENUM, AT(rope_linear), AF_REQUIRED, .names = rope_types,
     .alias = "type",
     .missing = FAMILY " config.json: rope_scaling has no \"rope_type\" (or \"type\") string",
     .bad = FAMILY " config.json: rope_scaling has no \"rope_type\" (or \"type\") string",
     .refused = FAMILY ": rope_scaling type \"%s\" is not computed (none, \"default\" or "
                "\"linear\")"},
    {"rope_scaling.factor", AF_DOUBLE, AT(rope_factor), AF_REQUIRED, .lo = 0, .hi = 1e30,
     .when = ONLY(rope_linear, 1),
     .missing = FAMILY " config.json: rope_scaling of type linear has no \"%s\"",
     .bad = FAMILY " config.json: rope_scaling's \"%s\" must be a positive number"},
    /* transformers 5's layout: not read, so refused rather than ignored */
    {"rope_parameters.rope_type", AF_ENUM, ARCH_NOWHERE, AF_REQUIRED, .names = nothing,
     .alias = "type",
     .missing = FAMILY " config.json: \"rope_parameters\" (transformers 5's layout) is not "
                "read: give rotary_pct, rotary_emb_base and rope_scaling",
     .bad = FAMILY " config.json: \"rope_parameters\" (transformers 5's layout) is not read: "
            "give rotary_pct, rotary_emb_base and rope_scaling",
     .refused = FAMILY " config.json: \"rope_parameters\" (transformers 5's layout, type "
                "\"%s\") is not read: give rotary_pct, rotary_emb_base and rope_scaling"},
    {"hidden_act", AF_ENUM, AT(act), 0, .dflt = OPS_GELU_ERF, .names = acts,
     .bad = FAMILY " config.json: \"%s\" must be a string",
     .refused = FAMILY ": hidden_act \"%s\" is not computed (gelu, gelu_new, gelu_fast or "
                "gelu_pytorch_tanh)"},
    {"layer_norm_eps", AF_F32, AT(eps), 0, .dflt = 1e-5, .lo = 0, .hi = 1,
     .bad = FAMILY " config.json: \"%s\" must be a number above 0 and below 1"},
    FLAG("use_parallel_residual", parallel, 1),
    FLAG("attention_bias", bias, 1),
    FLAG("tie_word_embeddings", tied, 0),
    {"bos_token_id", AF_ID, AT(bos_id), AF_LIST, .dflt = 0, .bad = ID_BAD},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = 2, .bad = ID_BAD},
    ARCH_STEP(ids_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_3C, S_I, S_V };

static void sizes(const void *cfg, long long *s)
{
    const NeoxConfig *c = cfg;
    s[S_C] = c->hidden;
    s[S_3C] = 3LL * c->hidden;
    s[S_I] = c->n_inner;
    s[S_V] = c->n_vocab;
}

#define W(field, f16) offsetof(NeoxWeights, field), offsetof(NeoxWeights, f16)
#define W32(field) offsetof(NeoxWeights, field), ARCH_NOWHERE
#define Y(field, f16) offsetof(NeoxLayer, field), offsetof(NeoxLayer, f16)
#define Y32(field) offsetof(NeoxLayer, field), ARCH_NOWHERE
#define L_VEC(name, d, field) \
    {"layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .tie = -1}
#define L_BIAS(name, d, field) \
    {"layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .tie = -1, \
     .when = ONLY(bias, 1)}
#define L_MAT(name, out, in, field, f16) \
    {"layers.%d." name, AT_MATRIX, AT_LAYER, 2, {out, in}, Y(field, f16), .tie = -1}

static const ArchTensor tensors[] = {
    {"embed_in.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(embed, embed_m), .tie = -1},
    L_VEC("input_layernorm.weight", S_C, ln1_w),
    L_VEC("input_layernorm.bias", S_C, ln1_b),
    L_MAT("attention.query_key_value.weight", S_3C, S_C, qkv, qkv_m),
    L_BIAS("attention.query_key_value.bias", S_3C, qkv_b),
    L_MAT("attention.dense.weight", S_C, S_C, dense, dense_m),
    L_BIAS("attention.dense.bias", S_C, dense_b),
    L_VEC("post_attention_layernorm.weight", S_C, ln2_w),
    L_VEC("post_attention_layernorm.bias", S_C, ln2_b),
    L_MAT("mlp.dense_h_to_4h.weight", S_I, S_C, fc, fc_m),
    L_VEC("mlp.dense_h_to_4h.bias", S_I, fc_b),
    L_MAT("mlp.dense_4h_to_h.weight", S_C, S_I, proj, proj_m),
    L_VEC("mlp.dense_4h_to_h.bias", S_C, proj_b),
    {"final_layer_norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, W32(lnf_w), .tie = -1},
    {"final_layer_norm.bias", AT_PLAIN, 0, 1, {S_C, 0}, W32(lnf_b), .tie = -1},
    {"embed_out.weight", AT_PLAIN, AT_NO_PREFIX, 2, {S_V, S_C}, W(head, head_m),
     .when = ONLY(tied, 0), .tie = 0,
     .missing = "no tensor embed_out.weight, and config.json says tie_word_embeddings false: "
                "the " FAMILY " output layer is missing (attnviz never falls back to "
                "embed_in)"},
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const NeoxConfig *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "tensor %s: %s expected, %s found (as stored, [out, in]; " FAMILY
                        " config.json: hidden_size %d, num_attention_heads %d, "
                        "intermediate_size %d, vocab_size %d)", tensor, want, got, c->hidden,
                        c->n_head, c->n_inner, c->n_vocab);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const NeoxConfig *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, -1};
}

static const char *const prefixes[] = {"gpt_neox.", "", NULL};

/* ---- GGUF files ------------------------------------------------------------------- */
/* What llama.cpp's converter (GPTNeoXModel) writes: the rotary dimensions
 * themselves; no rotary_emb_base (10000, GPTNeoXConfig's default and
 * llama.cpp's), no hidden_act (gelu, GPTNeoXConfig's default: llama.cpp
 * computes the tanh form instead), no head_count_kv. */
static const ArchGgufKey gguf_keys[] = {
    {"%s.block_count", "num_hidden_layers"},
    {"%s.embedding_length", "hidden_size"},
    {"%s.feed_forward_length", "intermediate_size"},
    {"%s.attention.head_count", "num_attention_heads"},
    {"%s.context_length", "max_position_embeddings"},
    {"%s.attention.layer_norm_epsilon", "layer_norm_eps"},
    {"%s.use_parallel_residual", "use_parallel_residual"},
    {"%s.rope.dimension_count", "gguf_rope_dimension_count"},
    {"%s.rope.freq_base", "rotary_emb_base"},
    {"%s.rope.scaling.type", "rope_scaling.rope_type"},
    {"%s.rope.scaling.factor", "rope_scaling.factor"},
    {"tokenizer.ggml.bos_token_id", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token_id"},
    {NULL, NULL},
};

/* query_key_value's rows regrouped from each head's q, k, v into all q,
 * all k, all v (weights and biases). */
static const ArchGgufName gguf_names[] = {
    {"token_embd.weight", "embed_in.weight", AG_SAME},
    {"output_norm.weight", "final_layer_norm.weight", AG_SAME},
    {"output_norm.bias", "final_layer_norm.bias", AG_SAME},
    {"output.weight", "embed_out.weight", AG_SAME},
    {"blk.%d.attn_norm.weight", "layers.%d.input_layernorm.weight", AG_SAME},
    {"blk.%d.attn_norm.bias", "layers.%d.input_layernorm.bias", AG_SAME},
    {"blk.%d.attn_qkv.weight", "layers.%d.attention.query_key_value.weight", AG_QKV_HEADS},
    {"blk.%d.attn_qkv.bias", "layers.%d.attention.query_key_value.bias", AG_QKV_HEADS},
    {"blk.%d.attn_output.weight", "layers.%d.attention.dense.weight", AG_SAME},
    {"blk.%d.attn_output.bias", "layers.%d.attention.dense.bias", AG_SAME},
    {"blk.%d.ffn_norm.weight", "layers.%d.post_attention_layernorm.weight", AG_SAME},
    {"blk.%d.ffn_norm.bias", "layers.%d.post_attention_layernorm.bias", AG_SAME},
    {"blk.%d.ffn_up.weight", "layers.%d.mlp.dense_h_to_4h.weight", AG_SAME},
    {"blk.%d.ffn_up.bias", "layers.%d.mlp.dense_h_to_4h.bias", AG_SAME},
    {"blk.%d.ffn_down.weight", "layers.%d.mlp.dense_4h_to_h.weight", AG_SAME},
    {"blk.%d.ffn_down.bias", "layers.%d.mlp.dense_4h_to_h.bias", AG_SAME},
    {NULL, NULL, AG_SAME},
};

static const ArchGguf gguf[] = {
    {"gptneox", FAMILY, gguf_keys, gguf_names, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_gpt_neox = {
    .types = types, .rt = &arch_gpt_neox, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(NeoxWeights, NeoxLayer), .sizes = sizes, .facts = facts,
    .required_note = "a GPT-NeoX (" FAMILY ") config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "embed_in", .prefixes = prefixes,
    .unknown_weights = "no tensor gpt_neox.embed_in.weight (nor embed_in.weight): not a "
                       "GPT-NeoX (" FAMILY ")'s weights",
    .layers_key = "num_hidden_layers", .shape_error = shape_error, .gguf = gguf,
};
