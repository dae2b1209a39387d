/* T5 encoder-decoders (t5-small …, flan-t5, mT5) on the runtime's
 * encoder-decoder (runtime.h: rt_forward_encdec): Hugging Face's
 * modeling_t5 T5ForConditionalGeneration in eval mode:
 *
 *   encoder: x = shared[src]   (no position embedding, no scaling)
 *   per encoder layer (pre-norm, RMS norm without a mean, no biases):
 *        h = rms(x); q, k, v = h · Wq, h · Wk, h · Wv (num_heads × d_kv each,
 *        which need not be d_model); head h: scores = q_h · k_hᵀ (no 1/√d)
 *        + bias[bucket(j − i)][h] (block 0's relative_attention_bias, in
 *        every layer; buckets both ways), no mask; x += z · Wo
 *        h = rms(x); x += ff(h)
 *   mem = rms_final_enc(x)
 *   decoder: y = shared[tgt]   (the decoder's ids: the start token first)
 *   per decoder layer:
 *        self-attention as above, causal, its own block 0 table (the
 *        buckets of the past only)
 *        h = rms(y); cross: q = h · Wq', k, v = mem · Wk', mem · Wv' (made
 *        once per source), scores = q_h · k_hᵀ, no bias, no mask; y += z · Wo'
 *        h = rms(y); y += ff(h)
 *   logits = (rms_final_dec(y) · d_model^−½ when the head is tied) · lm_headᵀ
 *
 * ff(h) = act(h · wi) · wo, or gated (flan-t5's gated-gelu: gelu_new)
 * (act(h · wi_0) ⊙ (h · wi_1)) · wo.
 *
 * Then the description (arch.h): config.json as T5Config writes it (its
 * defaults; feed_forward_proj's activation; num_decoder_layers null: as
 * num_layers), and the tensor names T5ForConditionalGeneration saves. Not
 * for UMT5 (a table per layer) or the encoder alone (T5EncoderModel). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

#define FAMILY "t5" /* in the table's messages */

/* feed_forward_proj: the activation (OpsAct) and whether gated */
#define FF_GATED 16
enum { K_T5 = 0, K_MT5 };

typedef struct T5Config {
    int kind;
    int C, d_kv, I, n_enc, n_dec, n_head, V, buckets, max_dist, n_positions;
    int ff;                 /* OpsAct | FF_GATED */
    float eps;
    int tied, pad_id, eos_id, start_id, encdec;
} T5Config;

typedef struct T5Layer {
    const float *wq, *wk, *wv, *wo, *ln_sa;     /* self-attention */
    const float *xq, *xk, *xv, *xo, *ln_x;      /* cross-attention (decoder) */
    const float *wi, *wi1, *wff, *ln_ff;        /* the feed-forward (wi: wi_0 when gated) */
    const RtMat *wq_m, *wk_m, *wv_m, *wo_m, *xq_m, *xk_m, *xv_m, *xo_m, *wi_m, *wi1_m, *wff_m;
} T5Layer;

typedef struct T5Weights {
    const float *shared, *enc_rel, *dec_rel, *enc_ln, *dec_ln;
    const float *head[2];   /* the output layer: tied (shared's), untied (lm_head's) */
    const RtMat *shared_m, *head_m[2];
    T5Layer *enc_layers, *layers;
} T5Weights;

static int check(const void *cfg, AttnErr *err)
{
    const T5Config *c = cfg;
    if (c->C <= 0 || c->d_kv <= 0 || c->I <= 0 || c->n_enc <= 0 || c->n_dec <= 0 ||
        c->n_head <= 0 || c->V <= 0 || c->buckets < 2 || c->max_dist <= 0 || c->n_positions <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "t5 sizes must be positive (d_model %d, d_kv %d, d_ff %d, layers %d "
                            "and %d, heads %d, vocab_size %d, buckets %d)", c->C, c->d_kv, c->I,
                            c->n_enc, c->n_dec, c->n_head, c->V, c->buckets);
    if (!(c->eps > 0.0f) || !isfinite(c->eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "t5: layer_norm_epsilon %g", c->eps);
    return 0;
}

static void shape_common(const T5Config *c, RtShape *s, int n_layer, int bidir)
{
    *s = (RtShape){.n_layer = n_layer, .n_head = c->n_head, .n_kv_head = c->n_head,
                   .d_head = c->d_kv, .hidden = c->C, .n_positions = c->n_positions,
                   .n_vocab = c->V, .bidirectional = bidir, .n_rows = 2,
                   .row_w = {c->I, c->I}};
}

static void shape_enc(const void *cfg, RtShape *s)
{
    shape_common(cfg, s, ((const T5Config *)cfg)->n_enc, 1);
}

static void shape_dec(const void *cfg, RtShape *s)
{
    shape_common(cfg, s, ((const T5Config *)cfg)->n_dec, 0);
}

/* The same embedding for the source and the target: shared's rows. */
static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const T5Weights *w = wv;
    const T5Config *c = rt->cfg;
    for (int i = start; i < T; i++)
        rt_embed_row(rt_row(rt->x, c->C, i), w->shared, w->shared_m, ids[i], c->C);
}

/* Self-attention of layer w on rows [start, T) with the relative bias
 * table rel: x += attention(rms(x)). */
static void self_attention(Rt *rt, const T5Layer *w, const float *rel, int l, int start, int T,
                           int causal)
{
    const T5Config *c = rt->cfg;
    int C = c->C, qd = rt->qdim, W = rt->qkv_w, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *qkv = rt_qkv(rt, l, start);
    OpsNorm ln = {OPS_NORM_RMS, w->ln_sa, NULL, c->eps};
    RtAttn a = {.causal = causal, .rel = rel, .rel_buckets = c->buckets,
                .rel_max = c->max_dist, .rel_heads = c->n_head}; /* no 1/√d */

    ops_add_norm(x, NULL, xn, &ln, n, C);
    rt_project(rt, qkv, W, xn, C, w->wq, w->wq_m, NULL, n, C, qd);
    rt_project(rt, qkv + qd, W, xn, C, w->wk, w->wk_m, NULL, n, C, qd);
    rt_project(rt, qkv + 2 * qd, W, xn, C, w->wv, w->wv_m, NULL, n, C, qd);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, qd, start), qd, w->wo, w->wo_m, NULL, n, qd, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

/* x += ff(rms(x)) on rows [start, T). */
static void feed_forward(Rt *rt, const T5Layer *w, int start, int T)
{
    const T5Config *c = rt->cfg;
    int C = c->C, I = c->I, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start);
    float *hid = rt_row(rt->rows[0], I, start), *up = rt_row(rt->rows[1], I, start);
    OpsNorm ln = {OPS_NORM_RMS, w->ln_ff, NULL, c->eps};
    OpsAct act = (OpsAct)(c->ff & ~FF_GATED);

    ops_add_norm(x, NULL, xn, &ln, n, C);
    if (c->ff & FF_GATED) {
        RtProj p[2] = {{hid, I, w->wi, w->wi_m, NULL, I}, {up, I, w->wi1, w->wi1_m, NULL, I}};
        rt_project_each(rt, p, 2, xn, C, n, C);
        ops_glu(hid, up, (size_t)n * I, act);
    } else {
        rt_project_act(rt, hid, I, xn, C, w->wi, w->wi_m, NULL, n, C, I, act);
    }
    rt_project(rt, out, C, hid, I, w->wff, w->wff_m, NULL, n, I, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void enc_layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const T5Weights *w = wv;
    self_attention(rt, &w->enc_layers[l], w->enc_rel, l, start, T, 0);
    feed_forward(rt, &w->enc_layers[l], start, T);
}

static void dec_layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const T5Weights *wt = wv;
    const T5Layer *w = &wt->layers[l];
    const T5Config *c = rt->cfg;
    int C = c->C, qd = rt->qdim, n = T - start;
    OpsNorm ln = {OPS_NORM_RMS, w->ln_x, NULL, c->eps};
    RtAttn none = {0}; /* no scaling, no bias */
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start);

    self_attention(rt, w, wt->dec_rel, l, start, T, 1);
    ops_add_norm(x, NULL, xn, &ln, n, C);
    rt_project(rt, rt_cross_q(rt, l, start), qd, xn, C, w->xq, w->xq_m, NULL, n, C, qd);
    rt_cross_attend(rt, l, start, T, &none);
    rt_project(rt, out, C, rt_row(rt->z, qd, start), qd, w->xo, w->xo_m, NULL, n, qd, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
    feed_forward(rt, w, start, T);
}

/* The encoder's final norm on mem, then each decoder layer's cross keys
 * and values of it. */
static void source(Rt *rt, const void *wv, float *mem, int Ts)
{
    const T5Weights *wt = wv;
    const T5Config *c = rt->cfg;
    int C = c->C, kvd = rt->kvdim;
    OpsNorm ln = {OPS_NORM_RMS, wt->enc_ln, NULL, c->eps};
    ops_norm(mem, mem, &ln, Ts, C);
    for (int l = 0; l < c->n_dec; l++) {
        const T5Layer *w = &wt->layers[l];
        rt_project(rt, rt_cross_kv(rt, l, 0), 2 * kvd, mem, C, w->xk, w->xk_m, NULL, Ts, C, kvd);
        rt_project(rt, rt_cross_kv(rt, l, 0) + kvd, 2 * kvd, mem, C, w->xv, w->xv_m, NULL, Ts, C,
                   kvd);
    }
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const T5Weights *w = wv;
    const T5Config *c = rt->cfg;
    OpsNorm ln = {OPS_NORM_RMS, w->dec_ln, NULL, c->eps};
    ops_norm(rt->xf, x, &ln, 1, c->C);
    if (c->tied) { /* transformers rescales before a tied head */
        float s = (float)pow((double)c->C, -0.5);
        for (int k = 0; k < c->C; k++)
            rt->xf[k] *= s;
    }
    rt_vocab_dots(out, rt->xf, w->head[!c->tied], w->head_m[!c->tied], c->C, c->V);
}

static const RtArch arch_t5_encoder = {
    "T5 encoder", sizeof(T5Config), check, shape_enc, embed, enc_layer, NULL, NULL, NULL};
static const RtArch arch_t5 = {
    "T5", sizeof(T5Config), check, shape_dec, embed, dec_layer, logits, &arch_t5_encoder, source};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(T5Config, field)

static const ArchName types[] = {{"t5", K_T5}, {"mt5", K_MT5}, {NULL, 0}};
static const ArchName ffs[] = {
    {"relu", OPS_RELU},
    {"gelu", OPS_GELU_ERF},
    {"gated-gelu", OPS_GELU_TANH | FF_GATED}, /* T5Config: gelu_new */
    {"gated-relu", OPS_RELU | FF_GATED},
    {"gated-silu", OPS_SILU | FF_GATED},
    {NULL, 0},
};

static const ArchName nothing[] = {{NULL, 0}};

/* num_decoder_layers absent or null: as many as the encoder's; the token
 * ids in the vocabulary. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    T5Config *c = cfg;
    if (!c->n_dec)
        c->n_dec = c->n_enc;
    if (!c->encdec)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0,
                            "t5 config.json: \"is_encoder_decoder\" false (an encoder or "
                            "decoder alone) is not computed");
    if (c->start_id >= c->V)
        return attn_err_set(err, ATTN_E_RANGE, file, 0,
                            "t5 config.json: decoder_start_token_id %d is not below vocab_size %d",
                            c->start_id, c->V);
    if (c->eos_id >= c->V)
        c->eos_id = -1;
    return 0;
}

#define SIZE(key, field, dflt_, hi_, his) \
    {key, AF_INT, AT(field), 0, .dflt = dflt_, .hi = hi_, \
     .bad = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his, \
     .not_whole = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his}
#define ID_BAD FAMILY " config.json: \"%s\" must be null, a whole number from 0 or a list of them"

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(kind), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (t5 or mt5)",
     .bad = "no \"model_type\" string (t5 or mt5)",
     .refused = "model_type \"%s\" is not a T5 model (t5 or mt5)"},
    /* a config that mixes families: BART's keys (another family's class in
     * architectures: the config reader's check, io/model_config.c) */
    {"encoder_layers", AF_ENUM, ARCH_NOWHERE, 0, .names = nothing,
     .bad = FAMILY " config.json: \"%s\" is BART's key, not T5's (num_layers): a config that "
            "mixes families",
     .refused = FAMILY " config.json: \"encoder_layers\" is BART's key, not T5's (num_layers): "
                "a config that mixes families"},
    SIZE("vocab_size", V, 32128, 1 << 24, "16777216"),
    SIZE("d_model", C, 512, 1 << 17, "131072"),
    SIZE("d_kv", d_kv, 64, 1 << 14, "16384"),
    SIZE("d_ff", I, 2048, 1 << 20, "1048576"),
    SIZE("num_layers", n_enc, 6, 4096, "4096"),
    {"num_decoder_layers", AF_INT, AT(n_dec), AF_NULL, .dflt = 0, .hi = 4096,
     .bad = FAMILY " config.json: \"%s\" must be null or a whole number from 1 to 4096",
     .not_whole = FAMILY " config.json: \"%s\" must be null or a whole number from 1 to 4096"},
    SIZE("num_heads", n_head, 8, 4096, "4096"),
    SIZE("relative_attention_num_buckets", buckets, 32, 1 << 16, "65536"),
    SIZE("relative_attention_max_distance", max_dist, 128, 1 << 22, "4194304"),
    SIZE("n_positions", n_positions, 512, 1 << 20, "1048576"),
    {"layer_norm_epsilon", AF_F32, AT(eps), 0, .dflt = 1e-6, .lo = 0, .hi = 1,
     .bad = FAMILY " config.json: \"%s\" must be a number above 0 and below 1"},
    {"feed_forward_proj", AF_ENUM, AT(ff), 0, .dflt = OPS_RELU, .names = ffs,
     .bad = FAMILY " config.json: \"%s\" must be a string",
     .refused = FAMILY ": feed_forward_proj \"%s\" is not computed (relu, gelu, gated-gelu, "
                "gated-relu or gated-silu)"},
    {"tie_word_embeddings", AF_BOOL, AT(tied), .dflt = 1,
     .bad = FAMILY " config.json: \"%s\" must be true or false"},
    {"is_encoder_decoder", AF_BOOL, AT(encdec), .dflt = 1,
     .bad = FAMILY " config.json: \"%s\" must be true or false"},
    {"pad_token_id", AF_ID, AT(pad_id), AF_LIST, .dflt = 0, .bad = ID_BAD},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = 1, .bad = ID_BAD},
    {"decoder_start_token_id", AF_ID, AT(start_id), AF_LIST, .dflt = 0, .bad = ID_BAD},
    ARCH_STEP(sizes_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_I, S_V, S_Q, S_B, S_H };

static void sizes(const void *cfg, long long *s)
{
    const T5Config *c = cfg;
    s[S_C] = c->C;
    s[S_I] = c->I;
    s[S_V] = c->V;
    s[S_Q] = (long long)c->n_head * c->d_kv;
    s[S_B] = c->buckets;
    s[S_H] = c->n_head;
}

#define W(field, f16) offsetof(T5Weights, field), offsetof(T5Weights, f16)
#define W32(field) offsetof(T5Weights, field), ARCH_NOWHERE
#define Y(field, f16) offsetof(T5Layer, field), offsetof(T5Layer, f16)
#define Y32(field) offsetof(T5Layer, field), ARCH_NOWHERE
#define ANY {0, 0}
#define MAT(fl, name, out, in, field) \
    {name, AT_MATRIX, fl, 2, {out, in}, Y(field, field##_m), .tie = -1}
#define VEC(fl, name, field) {name, AT_PLAIN, fl, 1, {S_C, 0}, Y32(field), .tie = -1}
#define EB "encoder.block.%d.layer."
#define DB "decoder.block.%d.layer."
#define REL_MISSING(side) \
    "no tensor " side ".block.0.layer.0.SelfAttention.relative_attention_bias.weight: T5's " \
    "relative position bias (block 0's, added in every layer of the " side ")"

/* the feed-forward's rows of a block whose feed-forward is sublayer N */
#define FF(fl, B, N, when_ungated, when_gated) \
    {B N ".DenseReluDense.wi.weight", AT_MATRIX, fl, 2, {S_I, S_C}, Y(wi, wi_m), \
     .when = when_ungated, .tie = -1}, \
    {B N ".DenseReluDense.wi_0.weight", AT_MATRIX, fl, 2, {S_I, S_C}, Y(wi, wi_m), \
     .when = when_gated, .tie = -1}, \
    {B N ".DenseReluDense.wi_1.weight", AT_MATRIX, fl, 2, {S_I, S_C}, Y(wi1, wi1_m), \
     .when = when_gated, .tie = -1}, \
    MAT(fl, B N ".DenseReluDense.wo.weight", S_C, S_I, wff), \
    VEC(fl, B N ".layer_norm.weight", ln_ff)

/* ArchWhen reads an int's bit: ff's values below FF_GATED are ungated */
#define UNGATED {offsetof(T5Config, ff), (1u << FF_GATED) - 1u}
#define IS_GATED {offsetof(T5Config, ff), ~((1u << FF_GATED) - 1u)}

static const ArchTensor tensors[] = {
    {"shared.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(shared, shared_m), .tie = -1},
    {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", AT_PLAIN, 0, 2,
     {S_B, S_H}, W32(enc_rel), .tie = -1, .missing = REL_MISSING("encoder")},
    {"decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", AT_PLAIN, 0, 2,
     {S_B, S_H}, W32(dec_rel), .tie = -1, .missing = REL_MISSING("decoder")},
    {"encoder.final_layer_norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, W32(enc_ln), .tie = -1},
    {"decoder.final_layer_norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, W32(dec_ln), .tie = -1},
    /* tied (T5Config's default): the file may leave it out */
    {"lm_head.weight", AT_PLAIN, AT_OPTIONAL | AT_SAME_TIES, 2, {S_V, S_C},
     W(head[0], head_m[0]), .when = {offsetof(T5Config, tied), 2u}, .tie = 0},
    /* untied: its own (a row of its own: a tied row whose condition is false
       takes shared's pointers) */
    {"lm_head.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(head[1], head_m[1]),
     .when = {offsetof(T5Config, tied), 1u}, .tie = -1,
     .missing = "no tensor lm_head.weight: config.json's tie_word_embeddings is false (flan-t5's "
                "own output layer)"},
    MAT(AT_ENC_LAYER, EB "0.SelfAttention.q.weight", S_Q, S_C, wq),
    MAT(AT_ENC_LAYER, EB "0.SelfAttention.k.weight", S_Q, S_C, wk),
    MAT(AT_ENC_LAYER, EB "0.SelfAttention.v.weight", S_Q, S_C, wv),
    MAT(AT_ENC_LAYER, EB "0.SelfAttention.o.weight", S_C, S_Q, wo),
    VEC(AT_ENC_LAYER, EB "0.layer_norm.weight", ln_sa),
    FF(AT_ENC_LAYER, EB, "1", UNGATED, IS_GATED),
    MAT(AT_LAYER, DB "0.SelfAttention.q.weight", S_Q, S_C, wq),
    MAT(AT_LAYER, DB "0.SelfAttention.k.weight", S_Q, S_C, wk),
    MAT(AT_LAYER, DB "0.SelfAttention.v.weight", S_Q, S_C, wv),
    MAT(AT_LAYER, DB "0.SelfAttention.o.weight", S_C, S_Q, wo),
    VEC(AT_LAYER, DB "0.layer_norm.weight", ln_sa),
    MAT(AT_LAYER, DB "1.EncDecAttention.q.weight", S_Q, S_C, xq),
    MAT(AT_LAYER, DB "1.EncDecAttention.k.weight", S_Q, S_C, xk),
    MAT(AT_LAYER, DB "1.EncDecAttention.v.weight", S_Q, S_C, xv),
    MAT(AT_LAYER, DB "1.EncDecAttention.o.weight", S_C, S_Q, xo),
    VEC(AT_LAYER, DB "1.layer_norm.weight", ln_x),
    FF(AT_LAYER, DB, "2", UNGATED, IS_GATED),
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const T5Config *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "tensor %s: %s expected, %s found (as stored, [out, in]; t5 config.json: "
                        "d_model %d, num_heads %d × d_kv %d, d_ff %d, vocab_size %d, "
                        "relative_attention_num_buckets %d)", tensor, want, got, c->C,
                        c->n_head, c->d_kv, c->I, c->V, c->buckets);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const T5Config *c = cfg;
    *f = (ArchFacts){-1, 0, 0, c->eos_id, c->start_id};
}

static const char *const prefixes[] = {"", NULL};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_t5 = {
    .types = types, .rt = &arch_t5, ARCH_TABLES(fields, tensors),
    ARCH_ENCDEC_WEIGHTS(T5Weights, T5Layer), .sizes = sizes, .facts = facts,
    .required_note = "a T5 config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "shared", .prefixes = prefixes,
    .unknown_weights = "no tensor shared.weight: not a T5 model's weights",
    .layers_key = "num_decoder_layers", .shape_error = shape_error,
};
