/* GPT-2 on the runtime (runtime.h), Hugging Face's modeling_gpt2 in eval
 * mode, on the plain data of gpt2.h:
 *
 *   x = wte[ids] + wpe[pos]
 *   per block l:  a = ln_1(x);  Q | K | V = a · c_attn + b     (Conv1D: [in, out])
 *                 per head: scores = Q·Kᵀ / √d_head / (l + 1)  (each factor when
 *                 its config flag is on), causal; weights = softmax; z = weights · V
 *                 x = x + z · c_proj + b
 *                 x = x + act(ln_2(x) · c_fc + b) · mlp.c_proj + b
 *   logits = ln_f(x) · lm_headᵀ      (on demand, for one position)
 *
 * Then its description (arch.h): config.json as Hugging Face's GPT2Config
 * writes it (its defaults, every size from the file, the activation by
 * name), the tensors with or without "transformer." (Conv1D weights stored
 * [in, out], float32 in place or converted; lm_head.weight kept only when it
 * differs from wte); and llama.cpp's GGUF files of general.architecture
 * gpt2 as the config and tensors they came from (the matrices transposed
 * back to [in, out], dequantized once). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attnviz/arch.h"
#include "attnviz/gpt2.h"
#include "ops.h"

int gpt2_config_check(const void *cfg, AttnErr *err)
{
    const Gpt2Config *c = cfg;
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_embd <= 0 || c->n_positions <= 0 ||
        c->n_inner <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "GPT-2 sizes must be positive (n_layer %d, n_head %d, n_embd %d, "
                            "n_positions %d, n_inner %d, n_vocab %d)",
                            c->n_layer, c->n_head, c->n_embd, c->n_positions, c->n_inner,
                            c->n_vocab);
    if (c->n_embd % c->n_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0, "n_head %d does not divide n_embd %d",
                            c->n_head, c->n_embd);
    if ((unsigned)c->act > GPT2_ACT_RELU)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0, "activation %d", (int)c->act);
    if (!(c->ln_eps >= 0.0f) || !isfinite(c->ln_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "layer_norm_epsilon %g", c->ln_eps);
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const Gpt2Config *c = cfg;
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_head,
                   .d_head = c->n_embd / c->n_head, .hidden = c->n_embd,
                   .n_positions = c->n_positions, .n_vocab = c->n_vocab,
                   .n_rows = 1, .row_w = {c->n_inner}};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const Gpt2Weights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++)
        for (int k = 0; k < C; k++)
            rt->x[(size_t)i * C + k] = w->wte[(size_t)ids[i] * C + k] + w->wpe[(size_t)i * C + k];
}

/* Block l on positions [start, T), in passes as the equations go. */
static void block(Rt *rt, const void *wv, int l, int start, int T)
{
    const Gpt2Config *c = rt->cfg;
    const Gpt2Layer *w = &((const Gpt2Weights *)wv)->layers[l];
    int C = c->n_embd, I = c->n_inner, n = T - start;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *hid = rt_row(rt->rows[0], I, start);
    OpsNorm ln1 = {OPS_NORM_LAYER, w->ln1_w, w->ln1_b, c->ln_eps};
    OpsNorm ln2 = {OPS_NORM_LAYER, w->ln2_w, w->ln2_b, c->ln_eps};
    RtAttn a = {.causal = 1};
    if (c->scale_attn_weights)
        a.div1 = (float)sqrt((double)rt->sh.d_head);
    if (c->scale_by_inverse_layer_idx)
        a.div2 = (float)(l + 1);

    ops_add_norm(x, NULL, xn, &ln1, n, C);
    ops_linear(rt_qkv(rt, l, start), rt->qkv_w, xn, C, w->attn_w, w->attn_b, n, C, 3 * C);
    rt_attend(rt, l, start, T, &a);
    rt_out_project(rt, l, out, C, rt_row(rt->z, C, start), C, w->proj_w, NULL, w->proj_b, n, C, C);
    ops_add_norm(x, out, xn, &ln2, n, C);
    /* the activation in c_fc's pieces, on the thread that computed them */
    ops_linear_act(hid, I, xn, C, w->fc_w, w->fc_b, n, C, I, (OpsAct)c->act);
    ops_linear(out, C, hid, I, w->mproj_w, w->mproj_b, n, I, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const Gpt2Weights *w = wv;
    const Gpt2Config *c = rt->cfg;
    OpsNorm lnf = {OPS_NORM_LAYER, w->lnf_w, w->lnf_b, c->ln_eps};
    ops_norm(rt->xf, x, &lnf, 1, c->n_embd);
    ops_dots(out, rt->xf, w->lm_head, c->n_embd, c->n_vocab);
}

const RtArch arch_gpt2 = {
    "GPT-2", sizeof(Gpt2Config), gpt2_config_check,
    shape, embed, block, logits, NULL, NULL};

/* ---- config.json ------------------------------------------------------------------ */
#define HF_GPT2_BOS 50256 /* GPT2Config's bos_token_id and eos_token_id */
#define AT(field) offsetof(Gpt2Config, field)

static const ArchName types[] = {{"gpt2", 0}, {NULL, 0}};
static const ArchName acts[] = {
    {"gelu_new", GPT2_ACT_GELU_TANH},
    {"gelu_pytorch_tanh", GPT2_ACT_GELU_TANH},
    {"gelu", GPT2_ACT_GELU_ERF},
    {"relu", GPT2_ACT_RELU},
    {NULL, 0},
};

/* n_inner null or absent: 4 · n_embd; the heads divide n_embd. */
static int sizes_read(void *cfg, const char *file, AttnErr *err)
{
    Gpt2Config *c = cfg;
    if (!c->n_inner)
        c->n_inner = 4 * c->n_embd;
    if (c->n_embd % c->n_head != 0)
        return attn_err_set(err, ATTN_E_HEADS, file, 0,
                            "n_embd %d does not divide by n_head %d", c->n_embd, c->n_head);
    return 0;
}

/* A token id outside the vocabulary is none. */
static int ids_read(void *cfg, const char *file, AttnErr *err)
{
    Gpt2Config *c = cfg;
    (void)file, (void)err;
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    c->eos_id = c->eos_id < c->n_vocab ? c->eos_id : -1;
    return 0;
}

static const ArchField fields[] = {
    {"model_type", AF_ENUM, ARCH_NOWHERE, AF_REQUIRED, .names = types,
     .missing = "no \"model_type\" (a GPT-2's is \"gpt2\")",
     .refused = "model_type is \"%s\": attnviz computes GPT-2 models (model_type \"gpt2\") only"},
    {"n_layer", AF_INT, AT(n_layer), AF_REQUIRED, .hi = 4096, .alias = "num_hidden_layers"},
    {"n_head", AF_INT, AT(n_head), AF_REQUIRED, .hi = 4096, .alias = "num_attention_heads"},
    {"n_embd", AF_INT, AT(n_embd), AF_REQUIRED, .hi = 1 << 17, .alias = "hidden_size"},
    {"n_positions", AF_INT, AT(n_positions), AF_REQUIRED, .hi = 1 << 20,
     .alias = "max_position_embeddings"},
    {"vocab_size", AF_INT, AT(n_vocab), AF_REQUIRED, .hi = 1 << 24},
    {"n_inner", AF_INT, AT(n_inner), AF_NULL, .hi = 1 << 20},
    ARCH_STEP(sizes_read),
    {"layer_norm_epsilon", AF_F32, AT(ln_eps), .dflt = 1e-5, .lo = 0, .hi = 1},
    {"activation_function", AF_ENUM, AT(act), .dflt = GPT2_ACT_GELU_TANH, .names = acts,
     .refused = "activation_function \"%s\" is not computed (gelu_new, gelu_pytorch_tanh, "
                "gelu or relu)"},
    {"scale_attn_weights", AF_BOOL, AT(scale_attn_weights), .dflt = 1},
    {"scale_attn_by_inverse_layer_idx", AF_BOOL, AT(scale_by_inverse_layer_idx), .dflt = 0},
    {"bos_token_id", AF_ID, AT(bos_id), .dflt = HF_GPT2_BOS},
    {"eos_token_id", AF_ID, AT(eos_id), .dflt = HF_GPT2_BOS},
    ARCH_STEP(ids_read),
};

/* ---- the tensors ------------------------------------------------------------------ */
enum { S_C, S_3C, S_I, S_V, S_P };

static void sizes(const void *cfg, long long *s)
{
    const Gpt2Config *c = cfg;
    s[S_C] = c->n_embd;
    s[S_3C] = 3LL * c->n_embd;
    s[S_I] = c->n_inner;
    s[S_V] = c->n_vocab;
    s[S_P] = c->n_positions;
}

#define W(field) offsetof(Gpt2Weights, field), ARCH_NOWHERE
#define Y(field) offsetof(Gpt2Layer, field), ARCH_NOWHERE
#define VEC(d) 1, {d, 0}
#define MAT(a, b) 2, {a, b}

static const ArchTensor tensors[] = {
    {"wte.weight", AT_PLAIN, 0, MAT(S_V, S_C), W(wte), .tie = -1},
    {"wpe.weight", AT_PLAIN, 0, MAT(S_P, S_C), W(wpe), .tie = -1},
    {"h.%d.ln_1.weight", AT_PLAIN, AT_LAYER, VEC(S_C), Y(ln1_w), .tie = -1},
    {"h.%d.ln_1.bias", AT_PLAIN, AT_LAYER, VEC(S_C), Y(ln1_b), .tie = -1},
    {"h.%d.attn.c_attn.weight", AT_PLAIN, AT_LAYER, MAT(S_C, S_3C), Y(attn_w), .tie = -1},
    {"h.%d.attn.c_attn.bias", AT_PLAIN, AT_LAYER, VEC(S_3C), Y(attn_b), .tie = -1},
    {"h.%d.attn.c_proj.weight", AT_PLAIN, AT_LAYER, MAT(S_C, S_C), Y(proj_w), .tie = -1},
    {"h.%d.attn.c_proj.bias", AT_PLAIN, AT_LAYER, VEC(S_C), Y(proj_b), .tie = -1},
    {"h.%d.ln_2.weight", AT_PLAIN, AT_LAYER, VEC(S_C), Y(ln2_w), .tie = -1},
    {"h.%d.ln_2.bias", AT_PLAIN, AT_LAYER, VEC(S_C), Y(ln2_b), .tie = -1},
    {"h.%d.mlp.c_fc.weight", AT_PLAIN, AT_LAYER, MAT(S_C, S_I), Y(fc_w), .tie = -1},
    {"h.%d.mlp.c_fc.bias", AT_PLAIN, AT_LAYER, VEC(S_I), Y(fc_b), .tie = -1},
    {"h.%d.mlp.c_proj.weight", AT_PLAIN, AT_LAYER, MAT(S_I, S_C), Y(mproj_w), .tie = -1},
    {"h.%d.mlp.c_proj.bias", AT_PLAIN, AT_LAYER, VEC(S_C), Y(mproj_b), .tie = -1},
    {"ln_f.weight", AT_PLAIN, 0, VEC(S_C), W(lnf_w), .tie = -1},
    {"ln_f.bias", AT_PLAIN, 0, VEC(S_C), W(lnf_b), .tie = -1},
    {"lm_head.weight", AT_PLAIN, AT_NO_PREFIX | AT_OPTIONAL | AT_SAME_TIES, MAT(S_V, S_C),
     W(lm_head), .tie = 0},
};

static int shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err)
{
    const Gpt2Config *c = cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0,
                        "tensor %s is %s, but config.json (n_embd %d, n_inner %d, "
                        "n_positions %d, vocab_size %d) makes it %s", tensor, got,
                        c->n_embd, c->n_inner, c->n_positions, c->n_vocab, want);
}

static void facts(const void *cfg, ArchFacts *f)
{
    const Gpt2Config *c = cfg;
    *f = (ArchFacts){c->bos_id, c->scale_attn_weights, c->scale_by_inverse_layer_idx, c->eos_id, -1};
}

static const char *const prefixes[] = {"transformer.", "", NULL};

/* ---- GGUF files ------------------------------------------------------------------- */
/* What llama.cpp's converter (GPT2Model) writes: the sizes (n_inner as
 * 4 · n_embd, which it always is there; n_positions from n_ctx) and the
 * epsilon; nothing of activation_function or the attention's scaling, so
 * GPT2Config's defaults (gelu_new, / √d_head), which llama.cpp computes
 * too. */
static const ArchGgufKey gguf_keys[] = {
    {"%s.block_count", "n_layer"},
    {"%s.embedding_length", "n_embd"},
    {"%s.feed_forward_length", "n_inner"},
    {"%s.attention.head_count", "n_head"},
    {"%s.context_length", "n_positions"},
    {"%s.attention.layer_norm_epsilon", "layer_norm_epsilon"},
    {"tokenizer.ggml.bos_token_id", "bos_token_id"},
    {"tokenizer.ggml.eos_token_id", "eos_token_id"},
    {NULL, NULL},
};

/* The Conv1D matrices transposed to [out, in] by the converter; c_attn
 * stays fused in its own q | k | v order. */
static const ArchGgufName gguf_names[] = {
    {"token_embd.weight", "wte.weight", AG_SAME},
    {"position_embd.weight", "wpe.weight", AG_SAME},
    {"output_norm.weight", "ln_f.weight", AG_SAME},
    {"output_norm.bias", "ln_f.bias", AG_SAME},
    {"output.weight", "lm_head.weight", AG_SAME},
    {"blk.%d.attn_norm.weight", "h.%d.ln_1.weight", AG_SAME},
    {"blk.%d.attn_norm.bias", "h.%d.ln_1.bias", AG_SAME},
    {"blk.%d.attn_qkv.weight", "h.%d.attn.c_attn.weight", AG_TRANSPOSED},
    {"blk.%d.attn_qkv.bias", "h.%d.attn.c_attn.bias", AG_SAME},
    {"blk.%d.attn_output.weight", "h.%d.attn.c_proj.weight", AG_TRANSPOSED},
    {"blk.%d.attn_output.bias", "h.%d.attn.c_proj.bias", AG_SAME},
    {"blk.%d.ffn_norm.weight", "h.%d.ln_2.weight", AG_SAME},
    {"blk.%d.ffn_norm.bias", "h.%d.ln_2.bias", AG_SAME},
    {"blk.%d.ffn_up.weight", "h.%d.mlp.c_fc.weight", AG_TRANSPOSED},
    {"blk.%d.ffn_up.bias", "h.%d.mlp.c_fc.bias", AG_SAME},
    {"blk.%d.ffn_down.weight", "h.%d.mlp.c_proj.weight", AG_TRANSPOSED},
    {"blk.%d.ffn_down.bias", "h.%d.mlp.c_proj.bias", AG_SAME},
    {NULL, NULL, AG_SAME},
};

static const ArchGguf gguf[] = {
    {"gpt2", "gpt2", gguf_keys, gguf_names, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

const ArchDesc desc_gpt2 = {
    .types = types, .rt = &arch_gpt2, ARCH_TABLES(fields, tensors),
    ARCH_WEIGHTS(Gpt2Weights, Gpt2Layer), .sizes = sizes, .facts = facts,
    .required_note = "a GPT-2 config.json gives every size",
    .folder_files = "config.json, model.safetensors, vocab.json, merges.txt",
    .config_files = "config.json, model.safetensors, vocab.json + merges.txt",
    .embed_name = "wte", .prefixes = prefixes,
    .unknown_weights = "no tensor wte.weight (nor transformer.wte.weight): not a GPT-2's weights",
    .layers_key = "n_layer", .shape_error = shape_error, .gguf = gguf,
};
