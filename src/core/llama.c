/* The Llama family's forward pass (llama_forward.h): the state, the layers
 * in passes as Hugging Face's modeling_llama goes, the rotary angles in
 * double, grouped-query attention, the incremental start at the first
 * changed token, the next token's logits. GPT-2's kernels and thread
 * sharing (gpt2_kernels.h) do the products. No file, no screen. */
#include "attnviz/llama_forward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attn.h"
#include "gpt2_kernels.h"

int llama_config_check(const LlamaConfig *c, AttnErr *err)
{
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

/* The inverse frequencies θ^(−2e/d), e < d/2, and Llama 3's scaling of
 * them (transformers' _compute_llama3_parameters): wavelengths longer than
 * the original context / low_freq_factor divided by factor, shorter than
 * original / high_freq_factor kept, the ones between blended. */
static void inv_freqs(double *f, const LlamaConfig *c)
{
    int d = c->head_dim;
    for (int e = 0; e < d / 2; e++) {
        double inv = 1.0 / pow(c->rope_theta, (2.0 * e) / d);
        if (c->rope_llama3) {
            double old = c->rope_orig_max, wavelen = 2.0 * 3.14159265358979323846 / inv;
            double low_wl = old / c->rope_low_freq, high_wl = old / c->rope_high_freq;
            if (wavelen > low_wl) {
                inv /= c->rope_factor;
            } else if (wavelen >= high_wl) {
                double smooth = (old / wavelen - c->rope_low_freq) /
                                (c->rope_high_freq - c->rope_low_freq);
                inv = (1.0 - smooth) * inv / c->rope_factor + smooth * inv;
            }
        }
        f[e] = inv;
    }
}

int llama_state_create(LlamaState **out, const LlamaConfig *cfg, AttnErr *err)
{
    *out = NULL;
    int rc = llama_config_check(cfg, err);
    if (rc < 0)
        return rc;
    int qdim = cfg->n_head * cfg->head_dim, kvdim = cfg->n_kv_head * cfg->head_dim;
    size_t zeros = (size_t)(qdim + 2 * kvdim);
    zeros = zeros < (size_t)cfg->hidden ? (size_t)cfg->hidden : zeros;
    zeros = zeros < (size_t)cfg->n_inner ? (size_t)cfg->n_inner : zeros;
    LlamaState *s = calloc(1, sizeof *s);
    if (!s || !(s->ids = calloc((size_t)cfg->n_positions, sizeof *s->ids)) ||
        !(s->xf = malloc((size_t)cfg->hidden * sizeof *s->xf)) ||
        !(s->zero = calloc(zeros, sizeof *s->zero)) ||
        !(s->inv_freq = malloc((size_t)(cfg->head_dim / 2) * sizeof *s->inv_freq))) {
        llama_state_destroy(s);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "Llama state");
    }
    s->cfg = *cfg;
    s->qdim = qdim;
    s->kvdim = kvdim;
    inv_freqs(s->inv_freq, cfg);
    *out = s;
    return 0;
}

void llama_state_destroy(LlamaState *s)
{
    if (!s)
        return;
    free(s->ids);
    free(s->maps);
    free(s->qkv);
    free(s->kt);
    free(s->rope);
    free(s->inv_freq);
    free(s->x);
    free(s->xn);
    free(s->out);
    free(s->z);
    free(s->gate);
    free(s->up);
    free(s->zero);
    free(s->xf);
    free(s);
}

void llama_state_reset(LlamaState *s)
{
    s->T = 0;
    s->n_done = 0;
}

/* Room for T positions: the rotary angles realloc'ed, the rest grown as
 * GPT-2's state is (gpt2_grow: a map row's entries after its diagonal
 * are never written, so the maps are zeroed first). */
static int reserve(LlamaState *s, int T)
{
    if (T <= s->cap)
        return 0;
    const LlamaConfig *c = &s->cfg;
    int cap = gpt2_next_cap(s->cap, T, c->n_positions);
    size_t L = (size_t)c->n_layer, H = (size_t)c->n_head, KV = (size_t)c->n_kv_head;
    size_t dh = (size_t)c->head_dim, C = (size_t)c->hidden, I = (size_t)c->n_inner;
    double *rope = realloc(s->rope, (size_t)cap * dh * sizeof *rope);
    if (!rope)
        return -ATTN_E_NOMEM;
    s->rope = rope;
    Gpt2Grow g = {L * H, L, (size_t)(s->qdim + 2 * s->kvdim), L * KV * dh, &s->maps, &s->qkv,
                  &s->kt, 6, {&s->x, &s->xn, &s->out, &s->z, &s->gate, &s->up},
                  {C, C, C, (size_t)s->qdim, I, I}};
    if (gpt2_grow(&g, (size_t)s->cap, (size_t)cap, (size_t)s->T) < 0)
        return -ATTN_E_NOMEM;
    s->cap = cap;
    return 0;
}

/* ---- the passes ------------------------------------------------------------ */

/* out = RMSNorm(x) row by row (C each): x · rsqrt(mean(x²) + eps) · w, the
 * sum of squares in double, in order; each output rounded to float once. */
static void rmsnorm(float *out, const float *x, const float *w, int n, int C, float eps)
{
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * C;
        float *o = out + (size_t)i * C;
        double ss = 0.0;
        for (int c = 0; c < C; c++)
            ss += (double)xi[c] * xi[c];
        double r = 1.0 / sqrt(ss / C + (double)eps);
        for (int c = 0; c < C; c++)
            o[c] = (float)(xi[c] * r * w[c]);
    }
}

/* Rotate n heads of one position in place (rotate_half): element e < d/2
 * with e + d/2 by the angle whose cos and sin are cs[e], cs[d/2 + e]. */
static void rotate(float *v, int n, int d, const double *cs)
{
    int half = d / 2;
    for (int h = 0; h < n; h++, v += d)
        for (int e = 0; e < half; e++) {
            double a = v[e], b = v[e + half], co = cs[e], si = cs[half + e];
            v[e] = (float)(a * co - b * si);
            v[e + half] = (float)(b * co + a * si);
        }
}

typedef struct AttnJob {
    LlamaState *s;
    int layer, start, T;
} AttnJob;

/* Query head h of a layer for rows [start, T): scores against its
 * key-value head's transposed keys, times 1/√head_dim, the softmax (the
 * map's row i holds i + 1 weights), the context z from that head's values. */
static void attn_head(const void *arg, int h)
{
    const AttnJob *jb = arg;
    LlamaState *s = jb->s;
    const Gpt2Kernels *K = gpt2_kernel_set();
    const LlamaConfig *c = &s->cfg;
    int dh = c->head_dim, cap = s->cap, l = jb->layer, g = llama_kv_head(c, h);
    int W = s->qdim + 2 * s->kvdim;
    float scale = (float)(1.0 / sqrt((double)dh));
    const float *qkv = s->qkv + (size_t)l * cap * W;
    float *map = s->maps + ((size_t)l * c->n_head + h) * cap * cap;
    const float *kt = s->kt + ((size_t)l * c->n_kv_head + g) * dh * cap;
    const float *v = qkv + s->qdim + s->kvdim + g * dh;
    for (int i = jb->start; i < jb->T; i++) {
        float *row = map + (size_t)i * cap;
        K->scores(row, qkv + (size_t)i * W + h * dh, kt, cap, dh, i + 1);
        for (int j = 0; j <= i; j++)
            row[j] *= scale;
        attn_softmax_row(row, i + 1, i + 1);
        K->context(s->z + (size_t)i * s->qdim + h * dh, row, v, W, i + 1, dh);
    }
}

/* out (n × m, row stride ldo) = A (n × k) · W + bias, W float32 [in, out]
 * or, when w16 is set, bfloat16 [out, in] (bias NULL: none). */
static void project(LlamaState *s, float *out, int ldo, const float *A, int lda, const float *W,
                    const uint16_t *w16, const float *bias, int n, int k, int m)
{
    if (w16)
        gpt2_linear_bf16(out, ldo, A, lda, w16, bias, n, k, m);
    else
        gpt2_linear(out, ldo, A, lda, W, bias ? bias : s->zero, n, k, m);
}

/* Layer l on positions [start, T) of the residual stream s->x, with the
 * cached keys and values of the positions before start. */
static void layer(LlamaState *s, const LlamaLayer *w, int l, int start, int T)
{
    const LlamaConfig *c = &s->cfg;
    int C = c->hidden, I = c->n_inner, dh = c->head_dim, KV = c->n_kv_head;
    int qd = s->qdim, kvd = s->kvdim, W = qd + 2 * kvd, cap = s->cap, n = T - start;
    float *x = s->x + (size_t)start * C, *xn = s->xn + (size_t)start * C;
    float *out = s->out + (size_t)start * C, *z = s->z + (size_t)start * qd;
    float *gate = s->gate + (size_t)start * I, *up = s->up + (size_t)start * I;
    float *qkv = s->qkv + ((size_t)l * cap + start) * W;

    /* pass 1: a = RMSNorm(x); q, k, v = a · W (+ b) */
    rmsnorm(xn, x, w->attn_norm, n, C, c->rms_eps);
    project(s, qkv, W, xn, C, w->wq, w->wq_bf16, w->bq, n, C, qd);
    project(s, qkv + qd, W, xn, C, w->wk, w->wk_bf16, w->bk, n, C, kvd);
    project(s, qkv + qd + kvd, W, xn, C, w->wv, w->wv_bf16, w->bv, n, C, kvd);
    /* pass 2: the rotary embedding on q and k; the keys transposed */
    for (int i = 0; i < n; i++) {
        const double *cs = s->rope + (size_t)(start + i) * dh;
        rotate(qkv + (size_t)i * W, c->n_head, dh, cs);
        rotate(qkv + (size_t)i * W + qd, KV, dh, cs);
    }
    for (int g = 0; g < KV; g++) {
        float *kt = s->kt + ((size_t)l * KV + g) * dh * cap;
        for (int d = 0; d < dh; d++)
            for (int i = 0; i < n; i++)
                kt[(size_t)d * cap + start + i] = qkv[(size_t)i * W + qd + g * dh + d];
    }
    /* pass 3: each query head's scores, weights (the maps) and z, heads split */
    AttnJob aj = {s, l, start, T};
    gpt2_share(attn_head, &aj, c->n_head, 2.0 * n * (start + T) * qd);
    /* pass 4: x = x + z · Wo (+ bo) */
    project(s, out, C, z, qd, w->wo, w->wo_bf16, w->bo, n, qd, C);
    for (size_t k = 0; k < (size_t)n * C; k++)
        x[k] += out[k];
    /* pass 5: x = x + down(silu(gate(a)) · up(a)), a = RMSNorm(x) */
    rmsnorm(xn, x, w->mlp_norm, n, C, c->rms_eps);
    project(s, gate, I, xn, C, w->w_gate, w->gate_bf16, NULL, n, C, I);
    project(s, up, I, xn, C, w->w_up, w->up_bf16, NULL, n, C, I);
    for (size_t k = 0; k < (size_t)n * I; k++)
        gate[k] = gate[k] / (1.0f + expf(-gate[k])) * up[k];
    project(s, out, C, gate, I, w->w_down, w->down_bf16, NULL, n, I, C);
    for (size_t k = 0; k < (size_t)n * C; k++)
        x[k] += out[k];
}

int llama_forward(LlamaState *s, const LlamaWeights *w, const int *ids, int T,
                  const LlamaHooks *hooks, AttnErr *err)
{
    const LlamaConfig *c = &s->cfg;
    if (T < 0 || T > c->n_positions)
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, NULL, 0,
                            "%d tokens: this model takes at most %d", T, c->n_positions);
    if (c->sliding_window > 0 && T > c->sliding_window)
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, NULL, 0,
                            "%d tokens: more than the model's sliding window of %d, which "
                            "attnviz does not apply", T, c->sliding_window);
    for (int i = 0; i < T; i++)
        if (ids[i] < 0 || ids[i] >= c->n_vocab)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "token %d (position %d) is not below the vocabulary's %d", ids[i],
                                i, c->n_vocab);
    int start = 0, lim = T < s->n_done ? T : s->n_done;
    while (start < lim && ids[start] == s->ids[start])
        start++;
    if (reserve(s, T) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "Llama state for %d tokens", T);
    memcpy(s->ids, ids, (size_t)T * sizeof *ids);
    s->T = T;
    s->n_done = start;

    /* x = embed[ids]; each new position's rotary cos and sin (angles in double) */
    int C = c->hidden, dh = c->head_dim;
    for (int i = start; i < T; i++) {
        float *xi = s->x + (size_t)i * C;
        if (w->embed_bf16)
            for (int k = 0; k < C; k++) {
                uint32_t bits = (uint32_t)w->embed_bf16[(size_t)ids[i] * C + k] << 16;
                memcpy(&xi[k], &bits, sizeof bits);
            }
        else
            memcpy(xi, w->embed + (size_t)ids[i] * C, (size_t)C * sizeof(float));
        double *cs = s->rope + (size_t)i * dh;
        for (int e = 0; e < dh / 2; e++) {
            double a = i * s->inv_freq[e];
            cs[e] = cos(a);
            cs[dh / 2 + e] = sin(a);
        }
    }
    for (int l = 0; l < c->n_layer; l++) {
        if (hooks && hooks->cancel && hooks->cancel(hooks->user))
            return attn_err_set(err, ATTN_E_CANCELLED, NULL, 0, "at layer %d", l);
        if (start < T)
            layer(s, &w->layers[l], l, start, T);
        if (hooks && hooks->layer_done)
            hooks->layer_done(hooks->user, l);
    }
    s->n_done = T;
    return 0;
}

void llama_maps_copy(const LlamaState *s, float *out)
{
    size_t T = (size_t)s->T;
    for (int l = 0; l < s->cfg.n_layer; l++)
        for (int h = 0; h < s->cfg.n_head; h++) {
            const float *m = llama_map(s, l, h);
            for (size_t i = 0; i < T; i++, out += T)
                memcpy(out, m + i * s->cap, T * sizeof *out);
        }
}

const float *llama_query(const LlamaState *s, int layer, int head, int i)
{
    size_t W = (size_t)(s->qdim + 2 * s->kvdim);
    return s->qkv + ((size_t)layer * s->cap + i) * W + (size_t)head * s->cfg.head_dim;
}

const float *llama_key(const LlamaState *s, int layer, int head, int j)
{
    size_t W = (size_t)(s->qdim + 2 * s->kvdim);
    return s->qkv + ((size_t)layer * s->cap + j) * W + s->qdim +
           (size_t)llama_kv_head(&s->cfg, head) * s->cfg.head_dim;
}

/* ---- the next token ---------------------------------------------------------- */

int llama_logits(LlamaState *s, const LlamaWeights *w, int pos, float *logits, AttnErr *err)
{
    const LlamaConfig *c = &s->cfg;
    if (pos < 0 || pos >= s->n_done)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "position %d: %d positions computed", pos, s->n_done);
    rmsnorm(s->xf, s->x + (size_t)pos * c->hidden, w->norm, 1, c->hidden, c->rms_eps);
    if (w->lm_head_bf16)
        gpt2_linear_bf16(logits, c->n_vocab, s->xf, c->hidden, w->lm_head_bf16, NULL, 1,
                         c->hidden, c->n_vocab);
    else
        gpt2_dots(logits, s->xf, w->lm_head, c->hidden, c->n_vocab);
    return 0;
}

int llama_top_k(LlamaState *s, const LlamaWeights *w, int pos, int k, int *ids, float *probs,
                float *logits, AttnErr *err)
{
    int V = s->cfg.n_vocab;
    if (k < 0 || k > V)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "top %d of %d tokens", k, V);
    float *own = NULL;
    if (!logits && !(logits = own = malloc((size_t)V * sizeof *logits)))
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "logits");
    int rc = llama_logits(s, w, pos, logits, err);
    if (rc == 0)
        gpt2_top_k_of(logits, V, k, ids, probs);
    free(own);
    return rc;
}
