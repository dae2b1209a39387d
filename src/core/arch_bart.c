/* BART encoder-decoders (bart-base, bart-large, distilbart …) on the
 * runtime's encoder-decoder (runtime.h: rt_forward_encdec): Hugging Face's
 * modeling_bart BartForConditionalGeneration in eval mode:
 *
 *   encoder: x = LN_emb(shared[src] · s + pos_enc[i + 2])   (learned
 *        positions offset by 2; s = √d_model when scale_embedding, else 1)
 *   per encoder layer (post-norm, biases everywhere):
 *        q, k, v = x · W + b; head h: scores = q_h · k_hᵀ / √d (no mask)
 *        x = LN1(x + z · Wo + bo)
 *        x = LN2(x + act(x · W1 + b1) · W2 + b2)
 *   decoder: y = LN_emb'(shared[tgt] · s + pos_dec[i + 2])
 *   per decoder layer: causal self-attention as above, y = LN1(y + …);
 *        cross: q from y, k and v from the encoder's last output (made once
 *        per source), / √d, no mask, y = LNx(y + …); the MLP, y = LN2(y + …)
 *   logits = y · sharedᵀ (or lm_head's) + final_logits_bias
 *
 * No final norm after either stack (mBART's is not read).
 *
 * Marian (model_type marian: MarianMTModel, Helsinki-NLP's opus-mt-*) is
 * BART's layout but for its embeddings, modeling_marian's: positions are
 * MarianSinusoidalPositionalEmbedding's static table, row i (no offset) sin
 * in the first ⌈C/2⌉ columns, cos in the rest (not interleaved), never read
 * from the file (transformers neither saves nor loads it: an older file's
 * copy is ignored), and no embedding norm:
 *
 *   x = shared[src] · s + sinusoid[i]        y = shared[tgt] · s + sinusoid[i]
 *
 * A separate decoder vocabulary (share_encoder_decoder_embeddings false) is
 * refused by name; opus-mt's SentencePiece files (source.spm, target.spm)
 * are not read: its folder needs a tokenizer.json. Then the description
 * (arch.h): config.json as BartConfig and MarianConfig write it (their
 * defaults), the tensor names their ForConditionalGeneration saves (under
 * model., or none: BartModel's, whose logits have no bias), the word
 * embeddings under shared or the encoder's or decoder's embed_tokens. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

enum { BART, MARIAN };

typedef struct BartConfig {
    int kind; /* BART or MARIAN */
    int C, n_enc, n_dec, h_enc, h_dec, i_enc, i_dec, V, n_pos;
    int act;
    int scale_emb, tied, encdec;
    int pad_id, bos_id, eos_id, start_id;
    int dec_vocab, share_emb; /* Marian's: decoder_vocab_size (-1: vocab_size) */
} BartConfig;

typedef struct BartLayer {
    const float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *ln1_w, *ln1_b;
    const float *xq, *xbq, *xk, *xbk, *xv, *xbv, *xo, *xbo, *lnx_w, *lnx_b;
    const float *fc, *fc_b, *proj, *proj_b, *ln2_w, *ln2_b;
    const RtMat *wq_m, *wk_m, *wv_m, *wo_m, *xq_m, *xk_m, *xv_m, *xo_m, *fc_m, *proj_m;
} BartLayer;

typedef struct BartWeights {
    const float *shared, *pos[2], *lne_w[2], *lne_b[2]; /* [0]: the encoder's, [1]: the decoder's */
    const float *head[2], *final_bias;                   /* head: tied, untied */
    const RtMat *shared_m, *head_m[2];
    BartLayer *enc_layers, *layers;
} BartWeights;

#define EPS 1e-5f /* nn.LayerNorm's default: BartConfig has no eps */
#define POS_OFFSET 2

static const char *const type_names[] = {"bart", "marian"};

static int check(const void *cfg, AttnErr *err)
{
    const BartConfig *c = cfg;
    const char *name = type_names[c->kind == MARIAN];
    if (c->C <= 0 || c->n_enc <= 0 || c->n_dec <= 0 || c->h_enc <= 0 || c->h_dec <= 0 ||
        c->i_enc <= 0 || c->i_dec <= 0 || c->V <= 0 || c->n_pos <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "%s sizes must be positive", name);
    if (c->C % c->h_enc || c->C % c->h_dec)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                            "%s: d_model %d is not divisible by %d and %d heads", name, c->C,
                            c->h_enc, c->h_dec);
    return 0;
}

static void shape_of(const BartConfig *c, RtShape *s, int dec)
{
    int H = dec ? c->h_dec : c->h_enc, I = dec ? c->i_dec : c->i_enc;
    *s = (RtShape){.n_layer = dec ? c->n_dec : c->n_enc, .n_head = H, .n_kv_head = H,
                   .d_head = c->C / H, .hidden = c->C, .n_positions = c->n_pos,
                   .n_vocab = c->V, .bidirectional = !dec, .n_rows = 1, .row_w = {I}};
}

static void shape_enc(const void *cfg, RtShape *s)
{
    shape_of(cfg, s, 0);
}

static void shape_dec(const void *cfg, RtShape *s)
{
    shape_of(cfg, s, 1);
}

/* Marian's position i added to xi: MarianSinusoidalPositionalEmbedding's
 * row, angle i / 10000^(2j/C) for its j-th sin column and j-th cos column,
 * the sin columns first (⌈C/2⌉ of them), computed in double and rounded to
 * float as transformers builds its table. */
static void add_sinusoid(float *xi, int i, int C)
{
    int half = (C + 1) / 2;
    for (int e = 0; e < C; e++) {
        int j = e < half ? e : e - half;
        double a = (double)i / pow(10000.0, 2.0 * j / C);
        xi[e] += (float)(e < half ? sin(a) : cos(a));
    }
}

/* Side k's (0 encoder, 1 decoder) embedding of rows [start, T): the word
 * (scaled), its position (BART's learned one after the offset and the
 * embedding norm; Marian's sinusoid). */
static void embed_side(Rt *rt, const BartWeights *w, const int *ids, int start, int T, int k)
{
    const BartConfig *c = rt->cfg;
    int C = c->C;
    float s = c->scale_emb ? sqrtf((float)C) : 1.0f;
    OpsNorm ln = {OPS_NORM_LAYER, w->lne_w[k], w->lne_b[k], EPS};
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        rt_embed_row(xi, w->shared, w->shared_m, ids[i], C);
        for (int e = 0; e < C; e++)
            xi[e] *= s;
        if (c->kind == MARIAN) {
            add_sinusoid(xi, i, C);
            continue;
        }
        const float *p = w->pos[k] + (size_t)(i + POS_OFFSET) * C;
        for (int e = 0; e < C; e++)
            xi[e] += p[e];
    }
    if (c->kind == BART)
        ops_norm(rt_row(rt->x, C, start), rt_row(rt->x, C, start), &ln, T - start, C);
}

static void embed_enc(Rt *rt, const void *w, const int *ids, int start, int T)
{
    embed_side(rt, w, ids, start, T, 0);
}

static void embed_dec(Rt *rt, const void *w, const int *ids, int start, int T)
{
    embed_side(rt, w, ids, start, T, 1);
}

/* x = LN1(x + self-attention(x)) on rows [start, T). */
static void self_attention(Rt *rt, const BartLayer *w, int l, int start, int T, int causal)
{
    const BartConfig *c = rt->cfg;
    int C = c->C, W = rt->qkv_w, n = T - start;
    float *x = rt_row(rt->x, C, start), *out = rt_row(rt->out, C, start);
    float *qkv = rt_qkv(rt, l, start);
    OpsNorm ln = {OPS_NORM_LAYER, w->ln1_w, w->ln1_b, EPS};
    RtAttn a = {.causal = causal, .mul = (float)(1.0 / sqrt((double)rt->sh.d_head))};

    RtProj p[3] = {{qkv, W, w->wq, w->wq_m, w->bq, C},
                   {qkv + C, W, w->wk, w->wk_m, w->bk, C},
                   {qkv + 2 * C, W, w->wv, w->wv_m, w->bv, C}};
    rt_project_each(rt, p, 3, x, C, n, C);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, C, start), C, w->wo, w->wo_m, w->bo, n, C, C);
    ops_add_norm(x, out, x, &ln, n, C);
}

/* x = LN2(x + act(x · W1 + b1) · W2 + b2). */
static void mlp(Rt *rt, const BartLayer *w, int start, int T)
{
    const BartConfig *c = rt->cfg;
    int C = c->C, I = rt->sh.row_w[0], n = T - start;
    float *x = rt_row(rt->x, C, start), *out = rt_row(rt->out, C, start);
    float *hid = rt_row(rt->rows[0], I, start);
    OpsNorm ln = {OPS_NORM_LAYER, w->ln2_w, w->ln2_b, EPS};
    rt_project_act(rt, hid, I, x, C, w->fc, w->fc_m, w->fc_b, n, C, I, c->act);
    rt_project(rt, out, C, hid, I, w->proj, w->proj_m, w->proj_b, n, I, C);
    ops_add_norm(x, out, x, &ln, n, C);
}

static void enc_layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const BartLayer *w = &((const BartWeights *)wv)->enc_layers[l];
    self_attention(rt, w, l, start, T, 0);
    mlp(rt, w, start, T);
}

static void dec_layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const BartLayer *w = &((const BartWeights *)wv)->layers[l];
    const BartConfig *c = rt->cfg;
    int C = c->C, n = T - start;
    float *x = rt_row(rt->x, C, start), *out = rt_row(rt->out, C, start);
    OpsNorm ln = {OPS_NORM_LAYER, w->lnx_w, w->lnx_b, EPS};
    RtAttn a = {.mul = (float)(1.0 / sqrt((double)rt->sh.d_head))};

    self_attention(rt, w, l, start, T, 1);
    rt_project(rt, rt_cross_q(rt, l, start), C, x, C, w->xq, w->xq_m, w->xbq, n, C, C);
    rt_cross_attend(rt, l, start, T, &a);
    rt_project(rt, out, C, rt_row(rt->z, C, start), C, w->xo, w->xo_m, w->xbo, n, C, C);
    ops_add_norm(x, out, x, &ln, n, C);
    mlp(rt, w, start, T);
}

/* Each decoder layer's cross keys and values of the encoder's output. */
static void source(Rt *rt, const void *wv, float *mem, int Ts)
{
    const BartWeights *wt = wv;
    const BartConfig *c = rt->cfg;
    int C = c->C;
    for (int l = 0; l < c->n_dec; l++) {
        const BartLayer *w = &wt->layers[l];
        RtProj kv[2] = {{rt_cross_kv(rt, l, 0), 2 * C, w->xk, w->xk_m, w->xbk, C},
                        {rt_cross_kv(rt, l, 0) + C, 2 * C, w->xv, w->xv_m, w->xbv, C}};
        rt_project_each(rt, kv, 2, mem, C, Ts, C);
    }
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const BartWeights *w = wv;
    const BartConfig *c = rt->cfg;
    rt_vocab_dots(out, x, w->head[!c->tied], w->head_m[!c->tied], c->C, c->V);
    for (int v = 0; w->final_bias && v < c->V; v++)
        out[v] += w->final_bias[v];
}

static const RtArch arch_bart_encoder = {
    "BART or Marian encoder", sizeof(BartConfig), check, shape_enc, embed_enc, enc_layer, NULL,
    NULL, NULL};
static const RtArch arch_bart = {
    "BART or Marian", sizeof(BartConfig), check, shape_dec, embed_dec, dec_layer, logits,
    &arch_bart_encoder, source};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(BartConfig, field)
/* A key whose default is BART's or Marian's (BartConfig's, MarianConfig's). */
#define OF_BART {offsetof(BartConfig, kind), 1u << BART}
#define OF_MARIAN {offsetof(BartConfig, kind), 1u << MARIAN}

static const ArchName types[] = {{"bart", BART}, {"marian", MARIAN}, {NULL, 0}};
static const ArchName acts[] = {
    {"gelu", OPS_GELU_ERF}, {"gelu_new", OPS_GELU_TANH}, {"relu", OPS_RELU},
    {"silu", OPS_SILU}, {"swish", OPS_SILU}, {NULL, 0},
};
static const ArchName nothing[] = {{NULL, 0}};

/* Marian's refusal: a decoder vocabulary of its own (its own embedding and
 * lm_head, not computed). (A folder whose tokenizer is only SentencePiece's
 * source.spm and target.spm, as Helsinki-NLP ships opus-mt-*, is refused
 * naming them where the tokenizer is read: bpe_files.c.) */
static int marian_read(const BartConfig *c, const char *file, AttnErr *err)
{
    if (!c->share_emb || (c->dec_vocab >= 0 && c->dec_vocab != c->V))
        return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0,
                            "marian config.json: a separate decoder vocabulary "
                            "(share_encoder_decoder_embeddings %s, decoder_vocab_size %d, "
                            "vocab_size %d) is not computed", c->share_emb ? "true" : "false",
                            c->dec_vocab >= 0 ? c->dec_vocab : c->V, c->V);
    return 0;
}

static int ids_read(void *cfg, const char *file, AttnErr *err)
{
    BartConfig *c = cfg;
    const char *name = type_names[c->kind];
    if (!c->encdec)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0,
                            "%s config.json: \"is_encoder_decoder\" false is not computed", name);
    if (c->start_id >= c->V)
        return attn_err_set(err, ATTN_E_RANGE, file, 0,
                            "%s config.json: decoder_start_token_id %d is not below vocab_size %d",
                            name, c->start_id, c->V);
    if (c->C % c->h_enc || c->C % c->h_dec)
        return attn_err_set(err, ATTN_E_HEADS, file, 0,
                            "%s config.json: d_model %d is not divisible by the heads (%d "
                            "encoder, %d decoder)", name, c->C, c->h_enc, c->h_dec);
    int rc = c->kind == MARIAN ? marian_read(c, file, err) : 0;
    if (rc)
        return rc;
    c->bos_id = c->bos_id < c->V ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->V ? c->eos_id : -1;
    return 0;
}

#define SIZE_W(key, field, dflt_, hi_, his, when_) \
    {key, AF_INT, AT(field), 0, .dflt = dflt_, .hi = hi_, .when = when_, \
     .bad = "\"%s\" must be a whole number from 1 to " his, \
     .not_whole = "\"%s\" must be a whole number from 1 to " his}
#define ALWAYS {0, 0}
#define SIZE(key, field, dflt_, hi_, his) SIZE_W(key, field, dflt_, hi_, his, ALWAYS)
#define ID_BAD "\"%s\" must be null, a whole number from 0 or a list of them"
#define ID(key, field, dflt_, when_) \
    {key, AF_ID, AT(field), AF_LIST, .dflt = dflt_, .when = when_, .bad = ID_BAD}
#define FLAG(key, field, dflt_) \
    {key, AF_BOOL, AT(field), .dflt = dflt_, .bad = "\"%s\" must be true or false"}

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(kind), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (bart, marian)",
     .bad = "no \"model_type\" string (bart, marian)",
     .refused = "model_type \"%s\" is not a BART model (bart, marian)"},
    /* a config that mixes families: T5's keys (another family's class in
     * architectures: the config reader's check, io/model_config.c) */
    {"num_layers", AF_ENUM, ARCH_NOWHERE, 0, .names = nothing,
     .bad = "\"%s\" is T5's key, not BART's or Marian's (encoder_layers): a config that "
            "mixes families",
     .refused = "\"num_layers\" is T5's key, not BART's or Marian's (encoder_layers): a "
                "config that mixes families"},
    SIZE_W("vocab_size", V, 50265, 1 << 24, "16777216", OF_BART),
    SIZE_W("vocab_size", V, 58101, 1 << 24, "16777216", OF_MARIAN),
    SIZE("d_model", C, 1024, 1 << 17, "131072"),
    SIZE("encoder_layers", n_enc, 12, 4096, "4096"),
    SIZE("decoder_layers", n_dec, 12, 4096, "4096"),
    SIZE("encoder_attention_heads", h_enc, 16, 4096, "4096"),
    SIZE("decoder_attention_heads", h_dec, 16, 4096, "4096"),
    SIZE("encoder_ffn_dim", i_enc, 4096, 1 << 20, "1048576"),
    SIZE("decoder_ffn_dim", i_dec, 4096, 1 << 20, "1048576"),
    SIZE("max_position_embeddings", n_pos, 1024, 1 << 22, "4194304"),
    {"activation_function", AF_ENUM, AT(act), 0, .dflt = OPS_GELU_ERF, .names = acts,
     .bad = "\"%s\" must be a string",
     .refused = "activation_function \"%s\" is not computed (gelu, gelu_new, relu or silu)"},
    FLAG("scale_embedding", scale_emb, 0),
    FLAG("tie_word_embeddings", tied, 1),
    FLAG("is_encoder_decoder", encdec, 1),
    ID("pad_token_id", pad_id, 1, OF_BART),
    ID("bos_token_id", bos_id, 0, OF_BART),
    ID("eos_token_id", eos_id, 2, OF_BART),
    ID("decoder_start_token_id", start_id, 2, OF_BART),
    /* MarianConfig's: the decoder starts with the pad token; no BOS */
    ID("pad_token_id", pad_id, 58100, OF_MARIAN),
    ID("bos_token_id", bos_id, -1, OF_MARIAN),
    ID("eos_token_id", eos_id, 0, OF_MARIAN),
    ID("decoder_start_token_id", start_id, 58100, OF_MARIAN),
    {"decoder_vocab_size", AF_ID, AT(dec_vocab), AF_NULL, .dflt = -1, .when = OF_MARIAN,
     .bad = "\"%s\" must be null or a whole number from 0"},
    {"share_encoder_decoder_embeddings", AF_BOOL, AT(share_emb), .dflt = 1, .when = OF_MARIAN,
     .bad = "\"%s\" must be true or false"},
    ARCH_STEP(ids_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_V, S_P, S_IE, S_ID, S_ONE };

static void sizes(const void *cfg, long long *s)
{
    const BartConfig *c = cfg;
    s[S_C] = c->C;
    s[S_V] = c->V;
    s[S_P] = (long long)c->n_pos + POS_OFFSET;
    s[S_IE] = c->i_enc;
    s[S_ID] = c->i_dec;
    s[S_ONE] = 1;
}

#define W(field, f16) offsetof(BartWeights, field), offsetof(BartWeights, f16)
#define W32(field) offsetof(BartWeights, field), ARCH_NOWHERE
#define Y(field, f16) offsetof(BartLayer, field), offsetof(BartLayer, f16)
#define Y32(field) offsetof(BartLayer, field), ARCH_NOWHERE
#define MAT(fl, name, out, in, field) \
    {name, AT_MATRIX, fl, 2, {out, in}, Y(field, field##_m), .tie = -1}
#define VEC(fl, name, d, field) {name, AT_PLAIN, fl, 1, {d, 0}, Y32(field), .tie = -1}
#define ATT(fl, B, kind, q, bq, k, bk, v, bv, o, bo) \
    MAT(fl, B kind ".q_proj.weight", S_C, S_C, q), VEC(fl, B kind ".q_proj.bias", S_C, bq), \
    MAT(fl, B kind ".k_proj.weight", S_C, S_C, k), VEC(fl, B kind ".k_proj.bias", S_C, bk), \
    MAT(fl, B kind ".v_proj.weight", S_C, S_C, v), VEC(fl, B kind ".v_proj.bias", S_C, bv), \
    MAT(fl, B kind ".out_proj.weight", S_C, S_C, o), VEC(fl, B kind ".out_proj.bias", S_C, bo)
#define MLP(fl, B, I) \
    MAT(fl, B "fc1.weight", I, S_C, fc), VEC(fl, B "fc1.bias", I, fc_b), \
    MAT(fl, B "fc2.weight", S_C, I, proj), VEC(fl, B "fc2.bias", S_C, proj_b), \
    VEC(fl, B "final_layer_norm.weight", S_C, ln2_w), VEC(fl, B "final_layer_norm.bias", S_C, ln2_b)
#define EL "encoder.layers.%d."
#define DL "decoder.layers.%d."
#define TIED {offsetof(BartConfig, tied), 2u}
/* a table only BART's files have: Marian's positions are computed, never read */
#define BART_VECW(name, field) \
    {name, AT_PLAIN, 0, 1, {S_C, 0}, W32(field), .when = OF_BART, .tie = -1}
#define UNTIED {offsetof(BartConfig, tied), 1u}

/* The word embeddings: BartModel's and MarianModel's shared, which their
 * encoder and decoder use as embed_tokens, and a tied lm_head too (one
 * parameter: transformers saves shared; a file converted from a
 * pytorch_model.bin keeps one of the others, older ones all of them) */
static const char *const embed_names[] = {"encoder.embed_tokens.weight",
                                          "decoder.embed_tokens.weight", NULL};
static const char *const tied_names[] = {"encoder.embed_tokens.weight",
                                         "decoder.embed_tokens.weight", "/lm_head.weight", NULL};

static const ArchTensor tensors[] = {
    {"shared.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(shared, shared_m), .when = TIED, .tie = -1,
     .alt = tied_names},
    {"shared.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(shared, shared_m), .when = UNTIED, .tie = -1,
     .alt = embed_names},
    {"encoder.embed_positions.weight", AT_PLAIN, 0, 2, {S_P, S_C}, W32(pos[0]), .when = OF_BART,
     .tie = -1},
    {"decoder.embed_positions.weight", AT_PLAIN, 0, 2, {S_P, S_C}, W32(pos[1]), .when = OF_BART,
     .tie = -1},
    BART_VECW("encoder.layernorm_embedding.weight", lne_w[0]),
    BART_VECW("encoder.layernorm_embedding.bias", lne_b[0]),
    BART_VECW("decoder.layernorm_embedding.weight", lne_w[1]),
    BART_VECW("decoder.layernorm_embedding.bias", lne_b[1]),
    {"lm_head.weight", AT_PLAIN, AT_NO_PREFIX | AT_OPTIONAL | AT_SAME_TIES, 2, {S_V, S_C},
     W(head[0], head_m[0]), .when = TIED, .tie = 0},
    {"lm_head.weight", AT_PLAIN, AT_NO_PREFIX, 2, {S_V, S_C}, W(head[1], head_m[1]),
     .when = UNTIED, .tie = -1,
     .missing = "no tensor lm_head.weight: config.json's tie_word_embeddings is false"},
    /* BartModel's file has none: no bias */
    {"final_logits_bias", AT_PLAIN, AT_NO_PREFIX | AT_OPTIONAL, 2, {S_ONE, S_V}, W32(final_bias),
     .tie = -1},
    ATT(AT_ENC_LAYER, EL, "self_attn", wq, bq, wk, bk, wv, bv, wo, bo),
    VEC(AT_ENC_LAYER, EL "self_attn_layer_norm.weight", S_C, ln1_w),
    VEC(AT_ENC_LAYER, EL "self_attn_layer_norm.bias", S_C, ln1_b),
    MLP(AT_ENC_LAYER, EL, S_IE),
    ATT(AT_LAYER, DL, "self_attn", wq, bq, wk, bk, wv, bv, wo, bo),
    VEC(AT_LAYER, DL "self_attn_layer_norm.weight", S_C, ln1_w),
    VEC(AT_LAYER, DL "self_attn_layer_norm.bias", S_C, ln1_b),
    ATT(AT_LAYER, DL, "encoder_attn", xq, xbq, xk, xbk, xv, xbv, xo, xbo),
    VEC(AT_LAYER, DL "encoder_attn_layer_norm.weight", S_C, lnx_w),
    VEC(AT_LAYER, DL "encoder_attn_layer_norm.bias", S_C, lnx_b),
    MLP(AT_LAYER, DL, S_ID),
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const BartConfig *c = cfg;
    char pos[64] = "";
    if (c->kind == BART) /* Marian's positions are computed: no table */
        snprintf(pos, sizeof pos, ", max_position_embeddings %d + 2", c->n_pos);
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "tensor %s: %s expected, %s found (as stored, [out, in]; %s "
                        "config.json: d_model %d, encoder_ffn_dim %d, decoder_ffn_dim %d, "
                        "vocab_size %d%s)", tensor, want, got, type_names[c->kind == MARIAN],
                        c->C, c->i_enc, c->i_dec, c->V, pos);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const BartConfig *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, c->start_id};
}

static const char *const prefixes[] = {"model.", "", NULL};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_bart = {
    .types = types, .rt = &arch_bart, ARCH_TABLES(fields, tensors),
    ARCH_ENCDEC_WEIGHTS(BartWeights, BartLayer), .sizes = sizes, .facts = facts,
    .required_note = "a BART or Marian config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "shared", .prefixes = prefixes,
    .unknown_weights = "no tensor shared.weight, encoder.embed_tokens.weight or "
                       "decoder.embed_tokens.weight (under model. or none): not a BART or "
                       "Marian model's weights",
    .layers_key = "decoder_layers", .shape_error = shape_error,
};
