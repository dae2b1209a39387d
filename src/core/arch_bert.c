/* BERT-family encoders (BERT, RoBERTa, XLM-RoBERTa, DistilBERT) on the
 * runtime (runtime.h): Hugging Face's modeling_bert, modeling_roberta and
 * modeling_distilbert in eval mode, with their masked-LM heads:
 *
 *   x = LN_e(word[ids] + pos[p_i] + type[0])   (token type 0 everywhere;
 *        p_i = i (BERT, DistilBERT), or RoBERTa's create_position_ids_from_
 *        input_ids: pad + (the non-pad tokens up to i) for a non-pad token,
 *        pad for a pad token; DistilBERT has no token types)
 *   per layer (post-LN):
 *        q, k, v = x · Wq + bq, ...; head h: scores = q_h · k_hᵀ / √d, no
 *        mask (every query sees every key), weights = softmax,
 *        z_h = weights · v_h
 *        x = LN1(x + z · Wo + bo)
 *        x = LN2(x + act(x · Wi + bi) · Wo2 + bo2)
 *   logits = LN_h(act(x · Wd + bd)) · wordᵀ + b   (the masked-LM head: what
 *        fills position i; on demand, one position)
 *
 * act is hidden_act (DistilBERT's activation) in the layers and in BERT's
 * and DistilBERT's heads; RoBERTa's head is always gelu (erf).
 *
 * Then the description (arch.h): config.json as BertConfig, RobertaConfig,
 * XLMRobertaConfig and DistilBertConfig write it (their defaults; what is
 * not computed refused by name: position_embedding_type other than
 * absolute, is_decoder, add_cross_attention), and Hugging Face's tensor
 * names with the prefixes models ship (bert., roberta., distilbert., or
 * none; the heads' cls., lm_head., vocab_* without it; the pooler and the
 * next-sentence head never read). Not for the encoder-decoders (T5, BART). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "ops.h"

#define FAMILY "BERT family" /* in the table's messages: bert, roberta, xlm-roberta, distilbert */

enum { K_BERT = 0, K_ROBERTA, K_XLMR, K_DISTIL };
#define BERTS ((1u << K_BERT) | (1u << K_ROBERTA) | (1u << K_XLMR))
#define ROBERTAS ((1u << K_ROBERTA) | (1u << K_XLMR))

typedef struct BertConfig {
    int kind;                   /* K_*: the model_type */
    int hidden, n_layer, n_head, n_inner, n_vocab, n_pos_table, n_types;
    int head_dim, n_positions;  /* derived: the tokens a text may have */
    int act;                    /* OpsAct of the layers (and BERT's, DistilBERT's head) */
    int pos_absolute;           /* position_embedding_type: only absolute is read */
    int is_decoder, cross;      /* refused when true */
    int sinusoidal;             /* DistilBERT: the stored table is sinusoidal (read as stored) */
    float eps;
    int pad_id, bos_id, eos_id, tied;
} BertConfig;

typedef struct BertLayer {
    const float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *ln1_w, *ln1_b;
    const float *fc, *fc_b, *proj, *proj_b, *ln2_w, *ln2_b;
    const RtMat *wq_m, *wk_m, *wv_m, *wo_m, *fc_m, *proj_m;
} BertLayer;

typedef struct BertWeights {
    const float *word, *pos, *type, *eln_w, *eln_b;
    const float *hd, *hd_b, *hln_w, *hln_b, *dec_b; /* the masked-LM head */
    /* its decoder: BERT's, RoBERTa's, DistilBERT's row each (a row that does
       not apply is tied to the word embeddings: one place each) */
    const float *dec[3];
    const RtMat *word_m, *hd_m, *dec_m[3];
    BertLayer *layers;
} BertWeights;

static const char *const kind_name[] = {"bert", "roberta", "xlm-roberta", "distilbert"};

static int check(const void *cfg, AttnErr *err)
{
    const BertConfig *c = cfg;
    const char *f = c->kind >= 0 && c->kind <= K_DISTIL ? kind_name[c->kind] : "bert";
    if (c->n_layer <= 0 || c->n_head <= 0 || c->hidden <= 0 || c->n_inner <= 0 ||
        c->n_positions <= 0 || c->n_vocab <= 0 || c->n_pos_table <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "%s sizes must be positive (layers %d, heads %d, hidden %d, "
                            "intermediate %d, positions %d, vocab_size %d)", f, c->n_layer,
                            c->n_head, c->hidden, c->n_inner, c->n_positions, c->n_vocab);
    if (c->hidden % c->n_head || c->head_dim != c->hidden / c->n_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                            "%s: hidden size %d is not divisible by %d heads", f, c->hidden,
                            c->n_head);
    if (!(c->eps > 0.0f) || !isfinite(c->eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "%s: layer_norm_eps %g", f, c->eps);
    if (c->act != OPS_GELU_ERF && c->act != OPS_GELU_TANH && c->act != OPS_RELU)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0, "%s: activation %d", f, c->act);
    if (!c->pos_absolute || c->is_decoder || c->cross)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0,
                            "%s: only the absolute positions of an encoder are computed", f);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const BertConfig *c = cfg;
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .bidirectional = 1, .n_rows = 1,
                   .row_w = {c->n_inner}};
}

/* The position-table row of token i: RoBERTa's count of the non-pad tokens
 * up to i after the pad id (a pad token: the pad id itself), else i. */
static int position_of(const BertConfig *c, const int *ids, int i, int *seen)
{
    if (c->kind != K_ROBERTA && c->kind != K_XLMR)
        return i;
    if (ids[i] == c->pad_id)
        return c->pad_id;
    return c->pad_id + ++*seen;
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const BertWeights *w = wv;
    const BertConfig *c = rt->cfg;
    int C = c->hidden, seen = 0;
    OpsNorm ln = {OPS_NORM_LAYER, w->eln_w, w->eln_b, c->eps};
    for (int i = 0; i < start; i++) /* RoBERTa's count before start */
        position_of(c, ids, i, &seen);
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->xn, C, i);
        const float *p = w->pos + (size_t)position_of(c, ids, i, &seen) * C;
        rt_embed_row(xi, w->word, w->word_m, ids[i], C);
        for (int k = 0; k < C; k++)
            xi[k] = xi[k] + p[k];
        if (w->type)
            for (int k = 0; k < C; k++)
                xi[k] = xi[k] + w->type[k];
    }
    ops_norm(rt_row(rt->x, C, start), rt_row(rt->xn, C, start), &ln, T - start, C);
}

/* Layer l on positions [start, T): the residual stream x is the layer's
 * input and, after it, its output; xn holds the stream between the two
 * norms. */
static void layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const BertConfig *c = rt->cfg;
    const BertLayer *w = &((const BertWeights *)wv)->layers[l];
    int C = c->hidden, I = c->n_inner, n = T - start, qw = rt->qkv_w;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *hid = rt_row(rt->rows[0], I, start);
    float *row = rt_qkv(rt, l, start);
    OpsNorm ln1 = {OPS_NORM_LAYER, w->ln1_w, w->ln1_b, c->eps};
    OpsNorm ln2 = {OPS_NORM_LAYER, w->ln2_w, w->ln2_b, c->eps};
    RtAttn a = {.causal = 0, .div1 = sqrtf((float)c->head_dim)};

    RtProj qkv[3] = {{row, qw, w->wq, w->wq_m, w->bq, C},
                     {row + C, qw, w->wk, w->wk_m, w->bk, C},
                     {row + 2 * C, qw, w->wv, w->wv_m, w->bv, C}};
    rt_project_each(rt, qkv, 3, x, C, n, C);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, C, start), C, w->wo, w->wo_m, w->bo, n, C, C);
    ops_add_norm(x, out, xn, &ln1, n, C); /* xn = LN1(x + attention) */
    rt_project_act(rt, hid, I, xn, C, w->fc, w->fc_m, w->fc_b, n, C, I, c->act);
    rt_project(rt, out, C, hid, I, w->proj, w->proj_m, w->proj_b, n, I, C);
    ops_add_norm(xn, out, x, &ln2, n, C); /* x = LN2(xn + MLP) */
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const BertWeights *w = wv;
    const BertConfig *c = rt->cfg;
    int C = c->hidden;
    OpsNorm ln = {OPS_NORM_LAYER, w->hln_w, w->hln_b, c->eps};
    OpsAct act = c->kind == K_ROBERTA || c->kind == K_XLMR ? OPS_GELU_ERF : (OpsAct)c->act;
    rt_project(rt, rt->xf, C, x, C, w->hd, w->hd_m, w->hd_b, 1, C, C);
    ops_activate(rt->xf, C, 1, 0, C, act);
    ops_norm(rt->xf, rt->xf, &ln, 1, C); /* in place: the row's mean and variance come first */
    int k = c->kind == K_BERT ? 0 : c->kind == K_DISTIL ? 2 : 1;
    rt_vocab_dots(out, rt->xf, w->dec[k], w->dec_m[k], C, c->n_vocab);
    for (int v = 0; v < c->n_vocab; v++)
        out[v] += w->dec_b[v];
}

static const RtArch arch_bert = {
    "BERT", sizeof(BertConfig), check, shape, embed, layer, logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define AT(field) offsetof(BertConfig, field)
#define ONLY(field, value) {offsetof(BertConfig, field), 1u << (value)}
#define OF_BERT {offsetof(BertConfig, kind), BERTS}
#define OF_DISTIL {offsetof(BertConfig, kind), 1u << K_DISTIL}
#define ANY {0, 0}

static const ArchName types[] = {
    {"bert", K_BERT}, {"roberta", K_ROBERTA}, {"xlm-roberta", K_XLMR},
    {"distilbert", K_DISTIL}, {NULL, 0},
};
static const ArchName acts[] = {
    {"gelu", OPS_GELU_ERF},
    {"gelu_new", OPS_GELU_TANH},
    {"gelu_fast", OPS_GELU_TANH},
    {"gelu_pytorch_tanh", OPS_GELU_TANH},
    {"relu", OPS_RELU},
    {NULL, 0},
};
static const ArchName absolute[] = {{"absolute", 1}, {NULL, 0}};

/* What a row of another model_type leaves: DistilBERT's fixed eps and
 * absolute positions. */
static int distil_read(void *cfg, const char *file, AttnErr *err)
{
    BertConfig *c = cfg;
    (void)file, (void)err;
    if (c->kind == K_DISTIL) {
        c->eps = 1e-12f;
        c->pos_absolute = 1;
    }
    return 0;
}

/* The head size; the tokens a text may have (RoBERTa's positions start
 * after the pad id: max_position_embeddings − pad_token_id − 1). */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    BertConfig *c = cfg;
    const char *f = kind_name[c->kind];
    if (c->hidden % c->n_head)
        return attn_err_set(err, ATTN_E_HEADS, file, 0,
                            "%s config.json: the hidden size %d is not divisible by the %d heads",
                            f, c->hidden, c->n_head);
    c->head_dim = c->hidden / c->n_head;
    c->n_positions = c->n_pos_table;
    if (c->kind == K_ROBERTA || c->kind == K_XLMR) {
        if (c->pad_id < 0 || c->pad_id >= c->n_pos_table - 1)
            return attn_err_set(err, ATTN_E_RANGE, file, 0,
                                "%s config.json: pad_token_id %d leaves no position of the %d "
                                "(max_position_embeddings; positions start after the pad id)",
                                f, c->pad_id, c->n_pos_table);
        c->n_positions = c->n_pos_table - c->pad_id - 1;
    }
    return 0;
}

static int refusals_read(void *cfg, const char *file, AttnErr *err)
{
    BertConfig *c = cfg;
    const char *f = kind_name[c->kind];
    if (c->is_decoder)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0,
                            "%s config.json: \"is_decoder\" true (a causal decoder) is not "
                            "computed: attnviz computes the encoder", f);
    if (c->cross)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, file, 0,
                            "%s config.json: \"add_cross_attention\" true is not computed", f);
    if (c->bos_id >= c->n_vocab)
        c->bos_id = -1;
    if (c->eos_id >= c->n_vocab)
        c->eos_id = -1;
    return 0;
}

#define SIZE(key, field, dflt_, hi_, his, when_) \
    {key, AF_INT, AT(field), 0, .dflt = dflt_, .hi = hi_, .when = when_, \
     .bad = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his, \
     .not_whole = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his}
#define SIZE_A(key, field, dflt_, hi_, his, alias_) \
    {key, AF_INT, AT(field), 0, .dflt = dflt_, .hi = hi_, .alias = alias_, .when = OF_DISTIL, \
     .bad = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his, \
     .not_whole = FAMILY " config.json: \"%s\" must be a whole number from 1 to " his}
#define FLAG(key, field, when_) \
    {key, AF_BOOL, AT(field), .dflt = 0, .when = when_, \
     .bad = FAMILY " config.json: \"%s\" must be true or false"}
#define ROB {offsetof(BertConfig, kind), ROBERTAS}
#define NOT_ROB {offsetof(BertConfig, kind), (1u << K_BERT) | (1u << K_DISTIL)}
#define ID_BAD FAMILY " config.json: \"%s\" must be null, a whole number from 0 or a list of them"

static const ArchField fields[] = {
    {"model_type", AF_ENUM, AT(kind), AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" string (bert, roberta, xlm-roberta or distilbert)",
     .bad = "no \"model_type\" string (bert, roberta, xlm-roberta or distilbert)",
     .refused = "model_type \"%s\" is not a BERT-family encoder (bert, roberta, xlm-roberta or "
                "distilbert)"},
    /* BertConfig, RobertaConfig, XLMRobertaConfig */
    SIZE("hidden_size", hidden, 768, 1 << 17, "131072", OF_BERT),
    SIZE("num_hidden_layers", n_layer, 12, 4096, "4096", OF_BERT),
    SIZE("num_attention_heads", n_head, 12, 4096, "4096", OF_BERT),
    SIZE("intermediate_size", n_inner, 3072, 1 << 20, "1048576", OF_BERT),
    SIZE("type_vocab_size", n_types, 2, 1 << 20, "1048576", OF_BERT),
    {"hidden_act", AF_ENUM, AT(act), 0, .dflt = OPS_GELU_ERF, .names = acts, .when = OF_BERT,
     .bad = FAMILY " config.json: \"%s\" must be a string",
     .refused = FAMILY ": hidden_act \"%s\" is not computed (gelu, gelu_new, gelu_fast, "
                "gelu_pytorch_tanh or relu)"},
    {"layer_norm_eps", AF_F32, AT(eps), 0, .dflt = 1e-12, .lo = 0, .hi = 1, .when = OF_BERT,
     .bad = FAMILY " config.json: \"%s\" must be a number above 0 and below 1"},
    {"position_embedding_type", AF_ENUM, AT(pos_absolute), AF_NULL, .dflt = 1,
     .names = absolute, .when = OF_BERT,
     .bad = FAMILY " config.json: \"%s\" must be a string",
     .refused = FAMILY ": position_embedding_type \"%s\" is not computed (only \"absolute\")"},
    FLAG("is_decoder", is_decoder, OF_BERT),
    FLAG("add_cross_attention", cross, OF_BERT),
    /* DistilBertConfig (its attribute_map's names as aliases) */
    SIZE_A("dim", hidden, 768, 1 << 17, "131072", "hidden_size"),
    SIZE_A("n_layers", n_layer, 6, 4096, "4096", "num_hidden_layers"),
    SIZE_A("n_heads", n_head, 12, 4096, "4096", "num_attention_heads"),
    SIZE_A("hidden_dim", n_inner, 3072, 1 << 20, "1048576", NULL),
    {"activation", AF_ENUM, AT(act), 0, .dflt = OPS_GELU_ERF, .names = acts,
     .when = OF_DISTIL, .bad = FAMILY " config.json: \"%s\" must be a string",
     .refused = FAMILY ": activation \"%s\" is not computed (gelu or relu)"},
    FLAG("sinusoidal_pos_embds", sinusoidal, OF_DISTIL),
    /* every type */
    SIZE("vocab_size", n_vocab, 30522, 1 << 24, "16777216", ANY),
    SIZE("max_position_embeddings", n_pos_table, 512, 1 << 22, "4194304", ANY),
    /* BertConfig's and RobertaConfig's defaults differ in the token ids */
    {"pad_token_id", AF_ID, AT(pad_id), AF_LIST, .dflt = 0, .bad = ID_BAD, .when = NOT_ROB},
    {"pad_token_id", AF_ID, AT(pad_id), AF_LIST, .dflt = 1, .bad = ID_BAD, .when = ROB},
    {"bos_token_id", AF_ID, AT(bos_id), AF_LIST, .dflt = -1, .bad = ID_BAD, .when = NOT_ROB},
    {"bos_token_id", AF_ID, AT(bos_id), AF_LIST, .dflt = 0, .bad = ID_BAD, .when = ROB},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = -1, .bad = ID_BAD, .when = NOT_ROB},
    {"eos_token_id", AF_ID, AT(eos_id), AF_LIST, .dflt = 2, .bad = ID_BAD, .when = ROB},
    {"tie_word_embeddings", AF_BOOL, AT(tied), .dflt = 1,
     .bad = FAMILY " config.json: \"%s\" must be true or false"},
    ARCH_STEP(distil_read),
    ARCH_STEP(sizes_read),
    ARCH_STEP(refusals_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_I, S_V, S_P, S_TV };

static void sizes(const void *cfg, long long *s)
{
    const BertConfig *c = cfg;
    s[S_C] = c->hidden;
    s[S_I] = c->n_inner;
    s[S_V] = c->n_vocab;
    s[S_P] = c->n_pos_table;
    s[S_TV] = c->n_types;
}

#define W(field, f16) offsetof(BertWeights, field), offsetof(BertWeights, f16)
#define W32(field) offsetof(BertWeights, field), ARCH_NOWHERE
#define Y(field, f16) offsetof(BertLayer, field), offsetof(BertLayer, f16)
#define Y32(field) offsetof(BertLayer, field), ARCH_NOWHERE
#define L_VEC(name, d, field, when_) \
    {name, AT_PLAIN, AT_LAYER, 1, {d, 0}, Y32(field), .when = when_, .tie = -1}
#define L_MAT(name, out, in, field, when_) \
    {name, AT_MATRIX, AT_LAYER, 2, {out, in}, Y(field, field##_m), .when = when_, .tie = -1}
#define VEC(name, d, field, flags_, when_) \
    {name, AT_PLAIN, flags_, 1, {d, 0}, W32(field), .when = when_, .tie = -1}
#define BL "encoder.layer.%d."
#define DL "transformer.layer.%d."
#define BRT ONLY(kind, K_BERT)

static const ArchTensor tensors[] = {
    {"embeddings.word_embeddings.weight", AT_PLAIN, 0, 2, {S_V, S_C}, W(word, word_m),
     .tie = -1},
    {"embeddings.position_embeddings.weight", AT_PLAIN, 0, 2, {S_P, S_C}, W32(pos), .tie = -1},
    {"embeddings.token_type_embeddings.weight", AT_PLAIN, 0, 2, {S_TV, S_C}, W32(type),
     .when = OF_BERT, .tie = -1},
    VEC("embeddings.LayerNorm.weight", S_C, eln_w, 0, ANY),
    VEC("embeddings.LayerNorm.bias", S_C, eln_b, 0, ANY),
    /* BERT, RoBERTa */
    L_MAT(BL "attention.self.query.weight", S_C, S_C, wq, OF_BERT),
    L_VEC(BL "attention.self.query.bias", S_C, bq, OF_BERT),
    L_MAT(BL "attention.self.key.weight", S_C, S_C, wk, OF_BERT),
    L_VEC(BL "attention.self.key.bias", S_C, bk, OF_BERT),
    L_MAT(BL "attention.self.value.weight", S_C, S_C, wv, OF_BERT),
    L_VEC(BL "attention.self.value.bias", S_C, bv, OF_BERT),
    L_MAT(BL "attention.output.dense.weight", S_C, S_C, wo, OF_BERT),
    L_VEC(BL "attention.output.dense.bias", S_C, bo, OF_BERT),
    L_VEC(BL "attention.output.LayerNorm.weight", S_C, ln1_w, OF_BERT),
    L_VEC(BL "attention.output.LayerNorm.bias", S_C, ln1_b, OF_BERT),
    L_MAT(BL "intermediate.dense.weight", S_I, S_C, fc, OF_BERT),
    L_VEC(BL "intermediate.dense.bias", S_I, fc_b, OF_BERT),
    L_MAT(BL "output.dense.weight", S_C, S_I, proj, OF_BERT),
    L_VEC(BL "output.dense.bias", S_C, proj_b, OF_BERT),
    L_VEC(BL "output.LayerNorm.weight", S_C, ln2_w, OF_BERT),
    L_VEC(BL "output.LayerNorm.bias", S_C, ln2_b, OF_BERT),
    /* DistilBERT */
    L_MAT(DL "attention.q_lin.weight", S_C, S_C, wq, OF_DISTIL),
    L_VEC(DL "attention.q_lin.bias", S_C, bq, OF_DISTIL),
    L_MAT(DL "attention.k_lin.weight", S_C, S_C, wk, OF_DISTIL),
    L_VEC(DL "attention.k_lin.bias", S_C, bk, OF_DISTIL),
    L_MAT(DL "attention.v_lin.weight", S_C, S_C, wv, OF_DISTIL),
    L_VEC(DL "attention.v_lin.bias", S_C, bv, OF_DISTIL),
    L_MAT(DL "attention.out_lin.weight", S_C, S_C, wo, OF_DISTIL),
    L_VEC(DL "attention.out_lin.bias", S_C, bo, OF_DISTIL),
    L_VEC(DL "sa_layer_norm.weight", S_C, ln1_w, OF_DISTIL),
    L_VEC(DL "sa_layer_norm.bias", S_C, ln1_b, OF_DISTIL),
    L_MAT(DL "ffn.lin1.weight", S_I, S_C, fc, OF_DISTIL),
    L_VEC(DL "ffn.lin1.bias", S_I, fc_b, OF_DISTIL),
    L_MAT(DL "ffn.lin2.weight", S_C, S_I, proj, OF_DISTIL),
    L_VEC(DL "ffn.lin2.bias", S_C, proj_b, OF_DISTIL),
    L_VEC(DL "output_layer_norm.weight", S_C, ln2_w, OF_DISTIL),
    L_VEC(DL "output_layer_norm.bias", S_C, ln2_b, OF_DISTIL),
    /* the masked-LM heads (outside the encoder's prefix) */
    {"cls.predictions.transform.dense.weight", AT_MATRIX, AT_NO_PREFIX, 2, {S_C, S_C},
     W(hd, hd_m), .when = BRT, .tie = -1,
     .missing = "no tensor cls.predictions.transform.dense.weight: attnviz computes BERT with "
                "its masked-LM head (BertForMaskedLM's or BertForPreTraining's weights)"},
    VEC("cls.predictions.transform.dense.bias", S_C, hd_b, AT_NO_PREFIX, BRT),
    VEC("cls.predictions.transform.LayerNorm.weight", S_C, hln_w, AT_NO_PREFIX, BRT),
    VEC("cls.predictions.transform.LayerNorm.bias", S_C, hln_b, AT_NO_PREFIX, BRT),
    {"cls.predictions.decoder.weight", AT_PLAIN, AT_NO_PREFIX | AT_OPTIONAL | AT_SAME_TIES, 2,
     {S_V, S_C}, W(dec[0], dec_m[0]), .when = BRT, .tie = 0},
    VEC("cls.predictions.bias", S_V, dec_b, AT_NO_PREFIX, BRT),
    {"lm_head.dense.weight", AT_MATRIX, AT_NO_PREFIX, 2, {S_C, S_C}, W(hd, hd_m), .when = ROB,
     .tie = -1,
     .missing = "no tensor lm_head.dense.weight: attnviz computes RoBERTa with its masked-LM "
                "head (RobertaForMaskedLM's weights)"},
    VEC("lm_head.dense.bias", S_C, hd_b, AT_NO_PREFIX, ROB),
    VEC("lm_head.layer_norm.weight", S_C, hln_w, AT_NO_PREFIX, ROB),
    VEC("lm_head.layer_norm.bias", S_C, hln_b, AT_NO_PREFIX, ROB),
    {"lm_head.decoder.weight", AT_PLAIN, AT_NO_PREFIX | AT_OPTIONAL | AT_SAME_TIES, 2,
     {S_V, S_C}, W(dec[1], dec_m[1]), .when = ROB, .tie = 0},
    VEC("lm_head.bias", S_V, dec_b, AT_NO_PREFIX, ROB),
    {"vocab_transform.weight", AT_MATRIX, AT_NO_PREFIX, 2, {S_C, S_C}, W(hd, hd_m),
     .when = OF_DISTIL, .tie = -1,
     .missing = "no tensor vocab_transform.weight: attnviz computes DistilBERT with its "
                "masked-LM head (DistilBertForMaskedLM's weights)"},
    VEC("vocab_transform.bias", S_C, hd_b, AT_NO_PREFIX, OF_DISTIL),
    VEC("vocab_layer_norm.weight", S_C, hln_w, AT_NO_PREFIX, OF_DISTIL),
    VEC("vocab_layer_norm.bias", S_C, hln_b, AT_NO_PREFIX, OF_DISTIL),
    {"vocab_projector.weight", AT_PLAIN, AT_NO_PREFIX | AT_OPTIONAL | AT_SAME_TIES, 2,
     {S_V, S_C}, W(dec[2], dec_m[2]), .when = OF_DISTIL, .tie = 0},
    VEC("vocab_projector.bias", S_V, dec_b, AT_NO_PREFIX, OF_DISTIL),
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const BertConfig *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "tensor %s: %s expected, %s found (as stored, [out, in]; %s "
                        "config.json: hidden size %d, %d heads, intermediate size %d, "
                        "vocab_size %d, max_position_embeddings %d)", tensor, want, got,
                        kind_name[c->kind], c->hidden, c->n_head, c->n_inner, c->n_vocab,
                        c->n_pos_table);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const BertConfig *c = cfg;
    *f = (ArchFacts){c->bos_id, 1, 0, c->eos_id, -1};
}

static const char *const prefixes[] = {"bert.", "roberta.", "distilbert.", "", NULL};

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

const ArchDesc desc_bert = {
    .types = types, .rt = &arch_bert, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(BertWeights, BertLayer), .sizes = sizes, .facts = facts,
    .required_note = "a BERT-family config.json gives it",
    .folder_files = FOLDER_FILES, .config_files = FOLDER_FILES,
    .embed_name = "word_embeddings", .prefixes = prefixes,
    .unknown_weights = "no tensor embeddings.word_embeddings.weight (under bert., roberta., "
                       "distilbert. or none): not a BERT-family encoder's weights",
    .layers_key = "num_hidden_layers", .shape_error = shape_error,
};
