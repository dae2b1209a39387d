/* Gemma 2 and Gemma 3 on the runtime (runtime.h): Hugging Face's
 * modeling_gemma2 / modeling_gemma3 (Gemma3ForCausalLM, and the language
 * model of Gemma3ForConditionalGeneration) in eval mode, transformers ≥ 4.53:
 *
 *   N(x; w) = x · rsqrt(mean(x²) + eps) · (1 + w)        (every norm)
 *   x = embed[ids] · float32(√hidden_size)
 *   per layer l:  a = N(x; input_layernorm)
 *                 q = a·Wq (+bq), k = a·Wk (+bk), v = a·Wv (+bv)
 *                 Gemma 3: q, k = N(q_h; q_norm), N(k_g; k_norm) per head
 *                 q, k rotated per head (rotate_half, angle pos · θ^(−2e/d)):
 *                   Gemma 2 θ = rope_theta; Gemma 3's sliding layers
 *                   θ = rope_local_base_freq unscaled, its full layers
 *                   rope_theta with rope_scaling linear (inv / factor) or none
 *                 head h: s = q_h · k_g(h)ᵀ · query_pre_attn_scalar^(−1/2),
 *                   Gemma 2: s = cap · tanh(s / cap) (attn_logit_softcapping;
 *                   Gemma 3 never applies it), causal, and on sliding
 *                   layers i − window < j;
 *                   weights = softmax; z_h = weights · v_g(h)
 *                 x = x + N(z · Wo (+bo); post_attention_layernorm)
 *                 m = N(x; pre_feedforward_layernorm)
 *                 x = x + N(down(gelu(m·Wgate) · m·Wup); post_feedforward_layernorm)
 *   logits = N(x; norm) · lm_headᵀ (the embeddings when tied), then
 *            cap · tanh(logits / cap) (final_logit_softcapping; none: as is;
 *            a gemma3 folder: never, as Gemma3ForConditionalGeneration)
 *
 * Sliding layers: layer_types when given; else Gemma 2's even layers (0, 2,
 * 4, …), Gemma 3's every layer i but those where (i + 1) is a multiple of
 * sliding_window_pattern (default 6). Matrices given in bfloat16 are read as
 * stored, [out, in].
 *
 * Then its description (arch.h): config.json as Gemma2Config and
 * Gemma3TextConfig write it (each one's defaults; a gemma3 folder's
 * text_config with Gemma3TextConfig's), every choice not computed refused by
 * name, and Hugging Face's tensor names (shapes as stored, [out, in]): under
 * model. (gemma2, gemma3_text) or language_model.model. /
 * model.language_model. (gemma3), the vision tower's tensors not read.
 * And llama.cpp's GGUF files of general.architecture gemma2 and gemma3
 * (read as gemma2 and gemma3_text): its keys and tensor names, the norms
 * the converter stored as 1 + w used as stored, and what llama.cpp assumes
 * for what the converter drops (the scores' scale, the sliding pattern). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

enum { G_GEMMA2 = 0, G_GEMMA3_TEXT, G_GEMMA3 };
#define G2_ONLY (1u << G_GEMMA2)
#define G3_ANY ((1u << G_GEMMA3_TEXT) | (1u << G_GEMMA3))

#define GEMMA_MAX_LAYERS 4096

typedef struct GemmaConfig {
    int arch;               /* G_GEMMA2, G_GEMMA3_TEXT, G_GEMMA3 */
    int hidden, n_layer, n_head, n_kv_head, head_dim, n_inner, n_vocab, n_positions;
    float rms_eps;
    double rope_theta, rope_local; /* global layers' θ; Gemma 3's sliding layers' */
    int rope_linear;        /* rope_scaling linear on the global layers */
    double rope_factor;
    double qpas;            /* query_pre_attn_scalar */
    double attn_cap, final_cap; /* 0: none */
    int sliding_window, pattern;
    int n_layer_types;      /* layer_types given: its entries */
    unsigned char slides[GEMMA_MAX_LAYERS]; /* 1: layer l slides */
    int act;                /* OpsAct: the GeGLU's GELU */
    int tied, attn_bias;
    int bos_id, eos_id;
    int norms_as_stored;    /* 1: every norm multiplies by w as stored (a GGUF
                               file's, where the converter wrote 1 + w) */
} GemmaConfig;

typedef struct GemmaLayer {
    const float *in_norm, *post_attn_norm, *pre_ff_norm, *post_ff_norm, *q_norm, *k_norm;
    const float *wq, *wk, *wv, *wo, *bq, *bk, *bv, *bo;
    const float *w_gate, *w_up, *w_down;
    const RtMat *wq_m, *wk_m, *wv_m, *wo_m, *gate_m, *up_m, *down_m;
} GemmaLayer;

typedef struct GemmaWeights {
    const float *embed, *norm, *lm_head;
    const RtMat *embed_m, *lm_head_m;
    GemmaLayer *layers;
} GemmaWeights;

static const char *const type_names[] = {"gemma2", "gemma3_text", "gemma3"};

static const char *type_name(const GemmaConfig *c)
{
    return c->arch >= 0 && c->arch <= G_GEMMA3 ? type_names[c->arch] : "gemma";
}

static int check(const void *cfg, AttnErr *err)
{
    const GemmaConfig *c = cfg;
    const char *t = type_name(c);
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_kv_head <= 0 || c->head_dim <= 0 ||
        c->hidden <= 0 || c->n_inner <= 0 || c->n_positions <= 0 || c->n_vocab <= 0 ||
        c->n_layer > GEMMA_MAX_LAYERS)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "%s: sizes must be positive (num_hidden_layers %d (at most %d), "
                            "num_attention_heads %d, num_key_value_heads %d, head_dim %d, "
                            "hidden_size %d, intermediate_size %d, max_position_embeddings %d, "
                            "vocab_size %d)", t, c->n_layer, GEMMA_MAX_LAYERS, c->n_head,
                            c->n_kv_head, c->head_dim, c->hidden, c->n_inner, c->n_positions,
                            c->n_vocab);
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                            "%s: num_attention_heads %d is not divisible by num_key_value_heads "
                            "%d", t, c->n_head, c->n_kv_head);
    if (c->head_dim % 2)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "%s: head_dim %d is odd: the rotary embedding pairs its halves", t,
                            c->head_dim);
    if (!(c->rms_eps >= 0.0f) || !isfinite(c->rms_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "%s: rms_norm_eps %g", t, c->rms_eps);
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta) ||
        (c->arch != G_GEMMA2 && (!(c->rope_local > 0.0) || !isfinite(c->rope_local))))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "%s: rope_theta %g and rope_local_base_freq %g must be positive", t,
                            c->rope_theta, c->rope_local);
    if (c->rope_linear && (!(c->rope_factor > 0.0) || !isfinite(c->rope_factor)))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "%s: rope_scaling linear's factor %g must be positive", t,
                            c->rope_factor);
    if (!(c->qpas > 0.0) || !isfinite(c->qpas))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "%s: query_pre_attn_scalar %g must be positive", t, c->qpas);
    if (!(c->attn_cap >= 0.0) || !(c->final_cap >= 0.0) || !isfinite(c->attn_cap) ||
        !isfinite(c->final_cap))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "%s: attn_logit_softcapping %g and final_logit_softcapping %g must "
                            "be positive (or null: none)", t, c->attn_cap, c->final_cap);
    if (c->sliding_window <= 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "%s: sliding_window %d", t,
                            c->sliding_window);
    if (c->act != OPS_GELU_TANH && c->act != OPS_GELU_ERF)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0, "%s: hidden_activation %d", t,
                            c->act);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const GemmaConfig *c = cfg;
    RopeSpec global = {.kind = ROPE_HALF, .dims = c->head_dim, .theta = c->rope_theta,
                       .scaling = c->rope_linear ? ROPE_SCALE_LINEAR : ROPE_SCALE_NONE,
                       .factor = c->rope_factor};
    RopeSpec local = {.kind = ROPE_HALF, .dims = c->head_dim, .theta = c->rope_local};
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_kv_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .n_rows = 2, .row_w = {c->n_inner, c->n_inner},
                   .rope = global};
    if (c->arch != G_GEMMA2)
        s->rope2 = local;
}

/* embed[id] · √hidden_size, the scale rounded to float32 first (the
 * modeling files' normalizer tensor). */
static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const GemmaWeights *w = wv;
    int C = rt->sh.hidden;
    float scale = (float)sqrt((double)C);
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        rt_embed_row(xi, w->embed, w->embed_m, ids[i], C);
        for (int k = 0; k < C; k++)
            xi[k] *= scale;
    }
}

/* Hugging Face's norms multiply by 1 + w; a GGUF file holds 1 + w itself. */
static OpsNormKind norm_kind(const GemmaConfig *c)
{
    return c->norms_as_stored ? OPS_NORM_RMS : OPS_NORM_RMS_1P;
}

/* Layer l on positions [start, T) of the residual stream. */
static void layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const GemmaConfig *c = rt->cfg;
    const GemmaLayer *w = &((const GemmaWeights *)wv)->layers[l];
    int C = c->hidden, I = c->n_inner, qd = rt->qdim, kvd = rt->kvdim, W = rt->qkv_w, n = T - start;
    int d = c->head_dim, slides = c->slides[l];
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *qkv = rt_qkv(rt, l, start);
    float *gate = rt_row(rt->rows[0], I, start), *up = rt_row(rt->rows[1], I, start);
    OpsNormKind nk = norm_kind(c);
    OpsNorm in = {nk, w->in_norm, NULL, c->rms_eps};
    OpsNorm post_attn = {nk, w->post_attn_norm, NULL, c->rms_eps};
    OpsNorm pre_ff = {nk, w->pre_ff_norm, NULL, c->rms_eps};
    OpsNorm post_ff = {nk, w->post_ff_norm, NULL, c->rms_eps};
    RtAttn a = {.causal = 1, .window = slides ? c->sliding_window : 0,
                .mul = (float)(1.0 / sqrt(c->qpas)), .softcap = (float)c->attn_cap};

    ops_add_norm(x, NULL, xn, &in, n, C);
    RtProj p[3] = {{qkv, W, w->wq, w->wq_m, w->bq, qd},
                   {qkv + qd, W, w->wk, w->wk_m, w->bk, kvd},
                   {qkv + qd + kvd, W, w->wv, w->wv_m, w->bv, kvd}};
    rt_project_each(rt, p, 3, xn, C, n, C);
    if (c->arch != G_GEMMA2) {
        OpsNorm qn = {nk, w->q_norm, NULL, c->rms_eps};
        OpsNorm kn = {nk, w->k_norm, NULL, c->rms_eps};
        for (int i = start; i < T; i++) {
            float *q = rt_qkv(rt, l, i);
            ops_norm(q, q, &qn, c->n_head, d);
            ops_norm(q + qd, q + qd, &kn, c->n_kv_head, d);
        }
    }
    rt_rope_with(rt, l, start, T, c->arch != G_GEMMA2 && slides);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, qd, start), qd, w->wo, w->wo_m, w->bo, n, qd, C);
    ops_norm(out, out, &post_attn, n, C);
    ops_add_norm(x, out, xn, &pre_ff, n, C);
    RtProj gu[2] = {{gate, I, w->w_gate, w->gate_m, NULL, I}, {up, I, w->w_up, w->up_m, NULL, I}};
    rt_project_each(rt, gu, 2, xn, C, n, C);
    ops_glu(gate, up, (size_t)n * I, (OpsAct)c->act);
    rt_project(rt, out, C, gate, I, w->w_down, w->down_m, NULL, n, I, C);
    ops_norm(out, out, &post_ff, n, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const GemmaWeights *w = wv;
    const GemmaConfig *c = rt->cfg;
    OpsNorm fn = {norm_kind(c), w->norm, NULL, c->rms_eps};
    ops_norm(rt->xf, x, &fn, 1, c->hidden);
    rt_vocab_dots(out, rt->xf, w->lm_head, w->lm_head_m, c->hidden, c->n_vocab);
    if (c->final_cap > 0.0) {
        float cap = (float)c->final_cap;
        for (int v = 0; v < c->n_vocab; v++)
            out[v] = tanhf(out[v] / cap) * cap;
    }
}

static const RtArch arch_gemma = {
    "Gemma", sizeof(GemmaConfig), check, shape, embed, layer, logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(GemmaConfig, field)
#define ONLY(field, value) {offsetof(GemmaConfig, field), 1u << (value)}
#define G2 {offsetof(GemmaConfig, arch), G2_ONLY}
#define G3 {offsetof(GemmaConfig, arch), G3_ANY}

static const ArchName types[] = {
    {"gemma2", G_GEMMA2}, {"gemma3_text", G_GEMMA3_TEXT}, {"gemma3", G_GEMMA3}, {NULL, 0},
};
static const ArchName rope_types[] = {{"default", 0}, {"linear", 1}, {NULL, 0}};
static const ArchName acts[] = {
    {"gelu_pytorch_tanh", OPS_GELU_TANH}, {"gelu_new", OPS_GELU_TANH}, {"gelu", OPS_GELU_ERF},
    {NULL, 0},
};
static const ArchName layer_types[] = {{"full_attention", 0}, {"sliding_attention", 1}, {NULL, 0}};

/* One size from others; the heads divide. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    GemmaConfig *c = cfg;
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, file, 0,
                            "%s: num_attention_heads %d is not divisible by num_key_value_heads "
                            "%d", type_name(c), c->n_head, c->n_kv_head);
    return 0;
}

/* Which layers slide: layer_types (one per layer), else Gemma 2's even
 * layers or Gemma 3's pattern; Gemma 3's attention soft cap and a gemma3
 * folder's final one are read but not applied (transformers' Gemma 3
 * classes apply neither; Gemma3ForCausalLM applies the final one); a token
 * id outside the vocabulary is none. */
static int rest_read(void *cfg, const char *file, AttnErr *err)
{
    GemmaConfig *c = cfg;
    if (c->n_layer_types && c->n_layer_types != c->n_layer)
        return attn_err_set(err, ATTN_E_SHAPE, file, 0, "%s: layer_types has %d entries for "
                            "num_hidden_layers %d", type_name(c), c->n_layer_types, c->n_layer);
    for (int l = 0; !c->n_layer_types && l < c->n_layer && l < GEMMA_MAX_LAYERS; l++)
        c->slides[l] = c->arch == G_GEMMA2 ? (l + 1) % 2 != 0 : (l + 1) % c->pattern != 0;
    if (c->arch != G_GEMMA2)
        c->attn_cap = 0.0; /* Gemma3Attention hands no soft cap to its attention */
    if (c->arch == G_GEMMA3)
        c->final_cap = 0.0; /* Gemma3ForConditionalGeneration's logits are not capped */
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->n_vocab ? c->eos_id : -1;
    return 0;
}

#define NOTE "(Gemma: gemma2, gemma3_text, or a gemma3 folder's text_config)"
#define INT_ROW(key, field, flags_, dflt_, hi_, when_) \
    {key, AF_INT, AT(field), flags_, .dflt = dflt_, .hi = hi_, .when = when_, \
     .bad = "\"%s\" must be a whole number from 1 to " #hi_ " " NOTE}
#define NUM_ROW(key, type_, field, flags_, dflt_, when_) \
    {key, type_, AT(field), flags_, .dflt = dflt_, .lo = 0, .hi = 1e30, .when = when_, \
     .bad = "\"%s\" must be a positive number " NOTE}
#define CAP_ROW(key, field, flags_, dflt_, when_) \
    {key, AF_DOUBLE, AT(field), flags_, .dflt = dflt_, .lo = 0, .hi = 1e30, .when = when_, \
     .bad = "\"%s\" must be null (no soft cap) or a positive number " NOTE}
#define NO_WHEN {0, 0}

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(arch), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (gemma2, gemma3_text or gemma3)",
     .bad = "no \"model_type\" string (gemma2, gemma3_text or gemma3)",
     .refused = "model_type \"%s\" is not a Gemma model computed here (gemma2, gemma3_text or "
                "gemma3)"},
    /* a gemma3 folder: its language model's config */
    {"text_config", AF_ENTER, ARCH_NOWHERE, AF_REQUIRED, .when = ONLY(arch, G_GEMMA3),
     .missing = "gemma3: no \"%s\" object (the language model's config: Gemma3TextConfig)"},
    INT_ROW("hidden_size", hidden, AF_REQUIRED, 0, 131072, NO_WHEN),
    INT_ROW("num_hidden_layers", n_layer, AF_REQUIRED, 0, 4096, NO_WHEN),
    INT_ROW("intermediate_size", n_inner, AF_REQUIRED, 0, 1048576, NO_WHEN),
    INT_ROW("num_attention_heads", n_head, AF_NULL, 8, 4096, NO_WHEN),
    INT_ROW("num_key_value_heads", n_kv_head, AF_NULL, 4, 4096, NO_WHEN),
    INT_ROW("head_dim", head_dim, AF_NULL, 256, 16384, NO_WHEN),
    INT_ROW("vocab_size", n_vocab, AF_NULL, 256000, 16777216, G2),
    INT_ROW("vocab_size", n_vocab, AF_NULL, 262208, 16777216, G3),
    INT_ROW("max_position_embeddings", n_positions, AF_NULL, 8192, 4194304, G2),
    INT_ROW("max_position_embeddings", n_positions, AF_NULL, 131072, 4194304, G3),
    ARCH_STEP(sizes_read),
    {"rms_norm_eps", AF_FLOAT, AT(rms_eps), AF_NULL, .dflt = 1e-6, .lo = 0, .hi = 1,
     .bad = "\"%s\" must be a number above 0 and below 1 " NOTE},
    NUM_ROW("rope_theta", AF_DOUBLE, rope_theta, AF_NULL, 10000.0, G2),
    NUM_ROW("rope_theta", AF_DOUBLE, rope_theta, AF_NULL, 1000000.0, G3),
    NUM_ROW("rope_local_base_freq", AF_DOUBLE, rope_local, AF_NULL, 10000.0, G3),
    {"rope_scaling", AF_OBJECT, ARCH_NOWHERE, .flags = AF_NULL},
    {"rope_scaling.rope_type", AF_ENUM, AT(rope_linear), AF_REQUIRED, .names = rope_types,
     .alias = "type", .missing = "Gemma's rope_scaling has no \"rope_type\" (or \"type\") string",
     .bad = "Gemma's rope_scaling has no \"rope_type\" (or \"type\") string",
     .refused = "Gemma's rope_scaling type \"%s\" is not computed (none, \"default\" or "
                "\"linear\")"},
    {"rope_scaling.factor", AF_DOUBLE, AT(rope_factor), AF_REQUIRED | AF_NULL, .lo = 0,
     .hi = 1e30, .when = ONLY(rope_linear, 1),
     .missing = "Gemma's rope_scaling of type linear has no \"%s\"",
     .bad = "Gemma's rope_scaling's \"%s\" must be a positive number"},
    NUM_ROW("query_pre_attn_scalar", AF_DOUBLE, qpas, AF_NULL, 256.0, NO_WHEN),
    CAP_ROW("attn_logit_softcapping", attn_cap, AF_NULL_NONE, 50.0, G2),
    CAP_ROW("final_logit_softcapping", final_cap, AF_NULL_NONE, 30.0, G2),
    CAP_ROW("attn_logit_softcapping", attn_cap, AF_NULL, 0.0, G3),
    CAP_ROW("final_logit_softcapping", final_cap, AF_NULL, 0.0, G3),
    INT_ROW("sliding_window", sliding_window, 0, 4096, 1073741824, NO_WHEN),
    INT_ROW("sliding_window_pattern", pattern, AF_NULL, 6, 4096, G3),
    {"layer_types", AF_NAMES, AT(slides), AF_NULL, .hi = GEMMA_MAX_LAYERS, .names = layer_types,
     .count_off = AT(n_layer_types),
     .refused = "Gemma's layer_types \"%s\" is not computed (full_attention or "
                "sliding_attention)"},
    {"hidden_activation", AF_ENUM, AT(act), AF_NULL, .dflt = OPS_GELU_TANH, .names = acts,
     .bad = "Gemma's \"%s\" must be a string",
     .refused = "Gemma's hidden_activation \"%s\" is not computed (gelu_pytorch_tanh, gelu_new "
                "or gelu)"},
    {"tie_word_embeddings", AF_BOOL, AT(tied), 0, .dflt = 1},
    {"attention_bias", AF_BOOL, AT(attn_bias), 0, .dflt = 0},
    {"use_bidirectional_attention", AF_BOOL, ARCH_NOWHERE, AF_NULL,
     .refused = "Gemma's %s true (an encoder's attention) is not computed"},
    {"bos_token_id", AF_ID, AT(bos_id), AF_LIST, .dflt = 2},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = 1},
    ARCH_STEP(rest_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_I, S_QD, S_KVD, S_V, S_D };

static void sizes(const void *cfg, long long *s)
{
    const GemmaConfig *c = cfg;
    s[S_C] = c->hidden;
    s[S_I] = c->n_inner;
    s[S_QD] = (long long)c->n_head * c->head_dim;
    s[S_KVD] = (long long)c->n_kv_head * c->head_dim;
    s[S_V] = c->n_vocab;
    s[S_D] = c->head_dim;
}

#define W(field, f16) offsetof(GemmaWeights, field), offsetof(GemmaWeights, f16)
#define Y(field, f16) offsetof(GemmaLayer, field), offsetof(GemmaLayer, f16)
#define Y32(field) offsetof(GemmaLayer, field), ARCH_NOWHERE
#define L_VEC(name, d, field, when_) \
    {"layers.%d." name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .when = when_, .tie = -1}
#define L_MAT(name, out, in, field, f16) \
    {"layers.%d." name, AT_MATRIX, AT_LAYER, 2, {out, in}, Y(field, f16), .tie = -1}

static const ArchTensor tensors[] = {
    {"embed_tokens.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(embed, embed_m), .tie = -1},
    L_VEC("input_layernorm.weight", S_C, in_norm, NO_WHEN),
    L_MAT("self_attn.q_proj.weight", S_QD, S_C, wq, wq_m),
    L_MAT("self_attn.k_proj.weight", S_KVD, S_C, wk, wk_m),
    L_MAT("self_attn.v_proj.weight", S_KVD, S_C, wv, wv_m),
    L_MAT("self_attn.o_proj.weight", S_C, S_QD, wo, wo_m),
    L_VEC("self_attn.q_proj.bias", S_QD, bq, ONLY(attn_bias, 1)),
    L_VEC("self_attn.k_proj.bias", S_KVD, bk, ONLY(attn_bias, 1)),
    L_VEC("self_attn.v_proj.bias", S_KVD, bv, ONLY(attn_bias, 1)),
    L_VEC("self_attn.o_proj.bias", S_C, bo, ONLY(attn_bias, 1)),
    L_VEC("self_attn.q_norm.weight", S_D, q_norm, G3),
    L_VEC("self_attn.k_norm.weight", S_D, k_norm, G3),
    L_VEC("post_attention_layernorm.weight", S_C, post_attn_norm, NO_WHEN),
    L_VEC("pre_feedforward_layernorm.weight", S_C, pre_ff_norm, NO_WHEN),
    L_VEC("post_feedforward_layernorm.weight", S_C, post_ff_norm, NO_WHEN),
    L_MAT("mlp.gate_proj.weight", S_I, S_C, w_gate, gate_m),
    L_MAT("mlp.up_proj.weight", S_I, S_C, w_up, up_m),
    L_MAT("mlp.down_proj.weight", S_C, S_I, w_down, down_m),
    {"norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, offsetof(GemmaWeights, norm), ARCH_NOWHERE,
     .tie = -1},
    {"lm_head.weight", AT_PLAIN, AT_NO_PREFIX, 2, {S_V, S_C}, W(lm_head, lm_head_m),
     .when = ONLY(tied, 0), .tie = 0,
     .missing = "no tensor lm_head.weight, and config.json says tie_word_embeddings false: the "
                "Gemma model's output layer is missing (attnviz never falls back to the "
                "embeddings)"},
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const GemmaConfig *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "tensor %s: %s expected, %s found (as stored, [out, in]; %s "
                        "config.json: hidden_size %d, num_attention_heads %d, "
                        "num_key_value_heads %d, head_dim %d, intermediate_size %d, "
                        "vocab_size %d)", tensor, want, got, type_name(c), c->hidden, c->n_head,
                        c->n_kv_head, c->head_dim, c->n_inner, c->n_vocab);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const GemmaConfig *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, -1};
}

/* gemma2 and gemma3_text: model.*; a gemma3 folder: language_model.model.*
 * (as released), model.language_model.* (as transformers ≥ 4.52 saves it) */
static const char *const prefixes[] = {"model.", "language_model.model.", "model.language_model.",
                                       NULL};
static const char *const ignored[] = {"vision_tower.", "multi_modal_projector.",
                                      "model.vision_tower.", "model.multi_modal_projector.", NULL};

/* ---- GGUF files ------------------------------------------------------------------- */
/* The keys llama.cpp's converter writes (Gemma2Model, Gemma3Model): no
 * query_pre_attn_scalar, no sliding pattern (llama.cpp hard-codes Gemma 2's
 * even layers and Gemma 3's period 6, the Hugging Face defaults the table
 * then gives), rope_theta absent from Gemma 2 files (10000, both). */
#define GGUF_KEYS(...) \
    {"%s.block_count", "num_hidden_layers"}, \
    {"%s.embedding_length", "hidden_size"}, \
    {"%s.feed_forward_length", "intermediate_size"}, \
    {"%s.attention.head_count", "num_attention_heads"}, \
    {"%s.attention.head_count_kv", "num_key_value_heads"}, \
    {"%s.attention.key_length", "head_dim"}, \
    {"%s.context_length", "max_position_embeddings"}, \
    {"%s.attention.layer_norm_rms_epsilon", "rms_norm_eps"}, \
    {"%s.rope.freq_base", "rope_theta"}, \
    {"%s.attention.sliding_window", "sliding_window"}, \
    {"%s.attn_logit_softcapping", "attn_logit_softcapping"}, \
    {"%s.final_logit_softcapping", "final_logit_softcapping"}, \
    {"tokenizer.ggml.bos_token_id", "bos_token_id"}, \
    {"tokenizer.ggml.eos_token_id", "eos_token_id"}, \
    __VA_ARGS__ \
    {NULL, NULL}

/* Gemma 2 without a window: llama.cpp's 4096, the table's default too */
static const ArchGgufKey gguf_keys2[] = {GGUF_KEYS()};
static const ArchGgufKey gguf_keys3[] = {GGUF_KEYS(
    {"%s.rope.local.freq_base", "rope_local_base_freq"}, /* Ollama's names */
    {"%s.rope.global.freq_base", "rope_theta"},
    {"%s.rope.freq_base_swa", "rope_local_base_freq"},
    {"%s.rope.scaling.type", "rope_scaling.rope_type"},
    {"%s.rope.scaling.factor", "rope_scaling.factor"},
    /* Gemma3Model leaves the window out when sliding_window_pattern is 1:
     * every layer global */
    {"!%s.attention.sliding_window", "sliding_window_pattern=1"},)};

/* llama.cpp's names; the converter's pre_feedforward_layernorm is ffn_norm
 * (Gemma has no norm in llama's place), its numbers are Hugging Face's but
 * for every norm's 1 + w (gguf_fix). */
#define GGUF_NAMES(...) \
    {"token_embd.weight", "embed_tokens.weight", AG_SAME}, \
    {"output_norm.weight", "norm.weight", AG_SAME}, \
    {"output.weight", "lm_head.weight", AG_SAME}, \
    {"blk.%d.attn_norm.weight", "layers.%d.input_layernorm.weight", AG_SAME}, \
    {"blk.%d.attn_q.weight", "layers.%d.self_attn.q_proj.weight", AG_SAME}, \
    {"blk.%d.attn_k.weight", "layers.%d.self_attn.k_proj.weight", AG_SAME}, \
    {"blk.%d.attn_v.weight", "layers.%d.self_attn.v_proj.weight", AG_SAME}, \
    {"blk.%d.attn_output.weight", "layers.%d.self_attn.o_proj.weight", AG_SAME}, \
    {"blk.%d.post_attention_norm.weight", "layers.%d.post_attention_layernorm.weight", \
     AG_SAME}, \
    {"blk.%d.ffn_norm.weight", "layers.%d.pre_feedforward_layernorm.weight", AG_SAME}, \
    {"blk.%d.ffn_gate.weight", "layers.%d.mlp.gate_proj.weight", AG_SAME}, \
    {"blk.%d.ffn_up.weight", "layers.%d.mlp.up_proj.weight", AG_SAME}, \
    {"blk.%d.ffn_down.weight", "layers.%d.mlp.down_proj.weight", AG_SAME}, \
    {"blk.%d.post_ffw_norm.weight", "layers.%d.post_feedforward_layernorm.weight", AG_SAME}, \
    __VA_ARGS__ \
    {NULL, NULL, AG_SAME}

static const ArchGgufName gguf_gemma2[] = {GGUF_NAMES()};
/* Ollama's converter keeps Gemma 3's vision tower in the same file, under
 * v. and mm. (llama.cpp's writes it to a file of its own) */
static const ArchGgufName gguf_gemma3[] = {GGUF_NAMES(
    {"blk.%d.attn_q_norm.weight", "layers.%d.self_attn.q_norm.weight", AG_SAME},
    {"blk.%d.attn_k_norm.weight", "layers.%d.self_attn.k_norm.weight", AG_SAME},
    {"v.", NULL, AG_SAME},
    {"mm.", NULL, AG_SAME},)};

/* What a GGUF file changes: its norms hold 1 + w; and the scores' scale,
 * which no key gives, is llama.cpp's (f_attention_scale): 1/√head_dim, but
 * 1/√(hidden / heads) at the 27B models' depth (46 layers for Gemma 2, 62
 * for Gemma 3), as Google's gemma_pytorch sets query_pre_attn_scalar. */
static void gguf_fix(void *cfg)
{
    GemmaConfig *c = cfg;
    int depth_27b = c->arch == G_GEMMA2 ? 46 : 62;
    c->norms_as_stored = 1;
    if (c->n_layer == depth_27b && c->n_head > 0)
        c->qpas = (double)(c->hidden / c->n_head);
    else
        c->qpas = (double)c->head_dim;
}

static const ArchGguf gguf[] = {
    {"gemma2", "gemma2", gguf_keys2, gguf_gemma2, gguf_fix},
    {"gemma3", "gemma3_text", gguf_keys3, gguf_gemma3, gguf_fix},
    {NULL, NULL, NULL, NULL, NULL},
};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_gemma = {
    .types = types, .rt = &arch_gemma, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(GemmaWeights, GemmaLayer), .sizes = sizes, .facts = facts,
    .required_note = "a Gemma config.json (gemma2, gemma3_text; a gemma3 folder's text_config) "
                     "gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "embed_tokens", .shape_error = shape_error,
    .prefixes = prefixes,
    .unknown_weights = "no Gemma embed_tokens.weight under model. (gemma2, gemma3_text), "
                       "language_model.model. or model.language_model. (gemma3): not a Gemma "
                       "checkpoint",
    .layers_key = "num_hidden_layers",
    .ignored = ignored,
    .ignored_note = "gemma3: only the language model is read; the vision tower's tensors "
                    "(vision_tower.*, multi_modal_projector.*) are ignored",
    .gguf = gguf,
};
