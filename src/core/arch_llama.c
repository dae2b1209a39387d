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
 * dot product of the float32 activations with the widened row. */
#include <math.h>
#include <string.h>

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
    return 0;
}

static void shape(const void *cfg, RtShape *s)
{
    const LlamaConfig *c = cfg;
    RopeSpec rope = {ROPE_HALF, c->head_dim, c->rope_theta,
                     c->rope_llama3 ? ROPE_SCALE_LLAMA3 : ROPE_SCALE_NONE, c->rope_factor,
                     c->rope_low_freq, c->rope_high_freq, c->rope_orig_max};
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_kv_head,
                   .d_head = c->head_dim, .hidden = c->hidden, .n_positions = c->n_positions,
                   .n_vocab = c->n_vocab, .window_limit = c->sliding_window,
                   .n_rows = 2, .row_w = {c->n_inner, c->n_inner}, .rope = rope};
}

static void embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const LlamaWeights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        if (w->embed_bf16)
            for (int k = 0; k < C; k++) {
                uint32_t bits = (uint32_t)w->embed_bf16[(size_t)ids[i] * C + k] << 16;
                memcpy(&xi[k], &bits, sizeof bits);
            }
        else
            memcpy(xi, w->embed + (size_t)ids[i] * C, (size_t)C * sizeof(float));
    }
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
    RtAttn a = {.causal = 1, .mul = (float)(1.0 / sqrt((double)c->head_dim))};

    ops_add_norm(x, NULL, xn, &an, n, C);
    rt_project(rt, qkv, W, xn, C, w->wq, w->wq_bf16, w->bq, n, C, qd);
    rt_project(rt, qkv + qd, W, xn, C, w->wk, w->wk_bf16, w->bk, n, C, kvd);
    rt_project(rt, qkv + qd + kvd, W, xn, C, w->wv, w->wv_bf16, w->bv, n, C, kvd);
    rt_rope(rt, l, start, T);
    rt_attend(rt, l, start, T, &a);
    rt_project(rt, out, C, rt_row(rt->z, qd, start), qd, w->wo, w->wo_bf16, w->bo, n, qd, C);
    ops_add_norm(x, out, xn, &mn, n, C);
    rt_project(rt, gate, I, xn, C, w->w_gate, w->gate_bf16, NULL, n, C, I);
    rt_project(rt, up, I, xn, C, w->w_up, w->up_bf16, NULL, n, C, I);
    ops_glu(gate, up, (size_t)n * I, OPS_SILU);
    rt_project(rt, out, C, gate, I, w->w_down, w->down_bf16, NULL, n, I, C);
    ops_add_norm(x, out, NULL, NULL, n, C);
}

static void logits(Rt *rt, const void *wv, const float *x, float *out)
{
    const LlamaWeights *w = wv;
    const LlamaConfig *c = rt->cfg;
    OpsNorm fn = {OPS_NORM_RMS, w->norm, NULL, c->rms_eps};
    ops_norm(rt->xf, x, &fn, 1, c->hidden);
    if (w->lm_head_bf16)
        ops_linear_bf16(out, c->n_vocab, rt->xf, c->hidden, w->lm_head_bf16, NULL, 1, c->hidden,
                        c->n_vocab);
    else
        ops_dots(out, rt->xf, w->lm_head, c->hidden, c->n_vocab);
}

const RtArch arch_llama = {
    "Llama", sizeof(LlamaConfig), llama_config_check,
    shape, embed, layer, logits};
