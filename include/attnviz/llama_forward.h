/* The Llama family's forward pass (src/core/llama.c), Hugging Face's
 * modeling_llama / modeling_qwen2 / modeling_mistral in eval mode, on the
 * plain data of llama.h:
 *
 *   x = embed[ids]
 *   per layer l:  a = RMSNorm(x) = x · rsqrt(mean(x²) + eps) · w
 *                 q = a·Wq (+bq), k = a·Wk (+bk), v = a·Wv (+bv)
 *                 q, k rotated per head (rotate_half: element e < d/2 paired
 *                 with e + d/2, angle pos · θ^(−2e/d), llama3-scaled when
 *                 configured; the angles in double)
 *                 head h: scores = q_h · k_g(h)ᵀ / √head_dim, g(h) = h / (H / KV),
 *                 causal; weights = softmax (the maps); z_h = weights · v_g(h)
 *                 x = x + z · Wo (+bo)
 *                 x = x + down(silu(RMSNorm(x)·Wgate) · RMSNorm(x)·Wup)
 *   logits = RMSNorm(x) · lm_headᵀ   (on demand, one position; every row)
 *
 * The state mirrors Gpt2State (gpt2_forward.h): allocated once from a
 * config, holding the last ids, each layer's rotated queries and keys and
 * values (the cache, one key and value per key-value head), every layer and
 * head's map, and the last layer's output at every position. llama_forward
 * computes from the first changed id on; an incremental forward gives the
 * floats of a full one, bit for bit (each sum in one fixed order, threads
 * split columns and heads, never a sum). Matrices given in bfloat16 (llama.h)
 * are read as stored, [out, in]: each output a dot product of the float32
 * activations with the widened row (products summed in float32, in one
 * order whatever the number of positions). Not shared between threads. */
#ifndef ATTNVIZ_LLAMA_FORWARD_H
#define ATTNVIZ_LLAMA_FORWARD_H

#include <stddef.h>

#include "attnviz/error.h"
#include "attnviz/forward_hooks.h"
#include "attnviz/llama.h"

#define LLAMA_TOP_K 10 /* the predictions the window shows */

typedef struct LlamaState {
    LlamaConfig cfg; /* the config it was made for (a copy) */
    int qdim, kvdim; /* H · head_dim, KV · head_dim */
    int T;           /* tokens of the last forward, complete or cancelled */
    int n_done;      /* positions [0, n_done) up to date in every layer */
    int *ids;        /* [n_positions]: the last forward's tokens */
    int cap;         /* positions allocated (grows with T, to n_positions) */
    /* The maps: L × H × cap × cap floats, map (l, h) at (l·H + h)·cap², row
     * i at + i·cap holding keys 0..i and exactly 0 after (llama_map,
     * llama_maps_copy for the packed L × H × T × T). */
    float *maps;
    /* The cache: L × cap × (qdim + 2·kvdim): position i of layer l at
     * qkv + (l·cap + i)·(qdim + 2·kvdim): the rotated queries (qdim), the
     * rotated keys (kvdim), the values (kvdim), head h's part at h·head_dim. */
    float *qkv;
    float *kt;       /* L × KV × head_dim × cap: each key-value head's keys, transposed */
    double *rope;    /* cap × head_dim: cos (first half) and sin (second half) of each
                        position's angles (double, as the reference's) */
    double *inv_freq; /* head_dim / 2: θ^(−2e/d), llama3-scaled when configured */
    float *x;        /* cap × C: the residual stream (the last layer's output after a forward) */
    float *xn, *out; /* cap × C scratch */
    float *z;        /* cap × qdim scratch: the heads' context */
    float *gate, *up; /* cap × n_inner scratch: the MLP */
    float *zero;     /* max(qdim + 2·kvdim, C, I) zeros: the bias of a projection without one */
    float *xf;       /* C: the final norm of one position (llama_logits) */
} LlamaState;

/* What a forward calls between layers: forward_hooks.h. */
typedef ForwardHooks LlamaHooks;

/* 0 when cfg describes a model this forward computes: sizes positive, KV
 * divides H (-ATTN_E_HEADS naming both), head_dim even, eps and θ finite and
 * positive, llama3 numbers sane; else -ATTN_E_SHAPE / -ATTN_E_RANGE. */
int llama_config_check(const LlamaConfig *cfg, AttnErr *err);

/* A state for cfg (copied), holding no tokens; 0, the error of
 * llama_config_check, or -ATTN_E_NOMEM. The caller destroys it. Buffers
 * grow with the tokens (by half again, to n_positions at most), keeping what
 * they hold: for SmolLM2-135M about 160 KB a position (the cache, the
 * residual stream, scratch) and the maps, 4 · L · H bytes × cap² (1080 ×
 * cap²: 4.4 MB at 64 positions, 1.1 GB at 1024). */
int llama_state_create(LlamaState **out, const LlamaConfig *cfg, AttnErr *err);
void llama_state_destroy(LlamaState *s); /* NULL is fine */
/* Forget the computed tokens (after the weights changed). */
void llama_state_reset(LlamaState *s);

/* The forward of ids[0..T) on w, from the first position whose id differs
 * from the last forward's (or a cancelled one left undone). 0;
 * -ATTN_E_CANCELLED (s->T = T, s->n_done what is valid); s unchanged on
 * -ATTN_E_TOO_MANY_TOKENS (T > n_positions, or T > the sliding window:
 * attnviz does not apply the window, it refuses such a T) and -ATTN_E_RANGE
 * (an id outside [0, n_vocab)); -ATTN_E_NOMEM. */
int llama_forward(LlamaState *s, const LlamaWeights *w, const int *ids, int T,
                  const LlamaHooks *hooks, AttnErr *err);

/* The map of layer, head: row i at + i·s->cap. */
static inline const float *llama_map(const LlamaState *s, int layer, int head)
{
    return s->maps + ((size_t)layer * s->cfg.n_head + head) * s->cap * s->cap;
}
/* Every map packed, L × H × T × T floats, into out. */
void llama_maps_copy(const LlamaState *s, float *out);

/* Head head's rotated query of position i and the rotated key its
 * key-value head has at position j (head_dim floats each, pointers into s,
 * valid until the next forward): the score before the 1/√head_dim is their
 * dot product. i, j < s->n_done. */
const float *llama_query(const LlamaState *s, int layer, int head, int i);
const float *llama_key(const LlamaState *s, int layer, int head, int j);
/* The key-value head query head head uses: head / (H / KV). */
static inline int llama_kv_head(const LlamaConfig *c, int head)
{
    return head / (c->n_head / c->n_kv_head);
}

/* The next-token logits after pos (< s->n_done), every row of the output
 * layer (n_vocab floats, padding rows included). 0 or -ATTN_E_RANGE. */
int llama_logits(LlamaState *s, const LlamaWeights *w, int pos, float *logits, AttnErr *err);
/* The k most likely next tokens after pos, as gpt2_top_k: the softmax over
 * all n_vocab rows, most likely first, ties by smaller id; logits is n_vocab
 * floats of scratch (NULL: allocated here). */
int llama_top_k(LlamaState *s, const LlamaWeights *w, int pos, int k, int *ids, float *probs,
                float *logits, AttnErr *err);

#endif
