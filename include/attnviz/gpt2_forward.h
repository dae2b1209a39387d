/* GPT-2's forward pass (src/core/gpt2.c), Hugging Face's modeling_gpt2 in
 * eval mode, on the plain data of gpt2.h:
 *
 *   x = wte[ids] + wpe[pos]
 *   per block l:  a = ln_1(x);  Q | K | V = a · c_attn + b     (Conv1D: [in, out])
 *                 per head: scores = Q·Kᵀ / √d_head / (l + 1)  (each factor when
 *                 its config flag is on), causal; weights = softmax; z = weights · V
 *                 x = x + z · c_proj + b
 *                 x = x + act(ln_2(x) · c_fc + b) · mlp.c_proj + b
 *   logits = ln_f(x) · lm_headᵀ      (on demand, for one position)
 *
 * A Gpt2State is allocated once from a config (llama2.c's RunState) and holds
 * what a later call reuses: the ids it last computed, each layer's queries,
 * keys and values (the key/value cache), every layer and head's attention
 * map, and the last block's output for every position. gpt2_forward compares
 * the new ids with the last ones and computes only the positions from the
 * first difference on: attention is causal, so the rows before it cannot
 * change. Every number of a position is computed the same way whichever
 * position the computation starts from (each sum runs over its terms in one
 * fixed order, threads split columns and heads, never a sum), so an
 * incremental forward gives the floats of a full one, bit for bit.
 *
 * The state is not shared between threads: one thread calls gpt2_forward
 * (it may hand halves of its work to the worker of workers.h) and reads the
 * results after it returns, or in the layer callback. */
#ifndef ATTNVIZ_GPT2_FORWARD_H
#define ATTNVIZ_GPT2_FORWARD_H

#include <stddef.h>

#include "attnviz/error.h"
#include "attnviz/forward_hooks.h"
#include "attnviz/gpt2.h"

#define GPT2_TOP_K 10 /* the predictions the window shows */

typedef struct Gpt2State {
    Gpt2Config cfg;  /* the config it was made for (a copy) */
    int d_head;      /* C / H */
    int T;           /* tokens of the last forward, complete or cancelled */
    int n_done;      /* positions [0, n_done) are up to date in every layer:
                        T after a complete forward, less after a cancelled one */
    int *ids;        /* [n_positions]: the last forward's tokens */
    int cap;         /* positions allocated (grows with T, up to n_positions) */
    /* The attention maps: L × H × cap × cap floats. Map (l, h) starts at
     * maps + (l·H + h)·cap², row i (query i) at + i·cap holds the weights of
     * keys 0..i, and is exactly 0 after key i; rows < T are the maps' rows
     * (gpt2_map, gpt2_maps_copy for the packed L × H × T × T). Rows of layers
     * not yet done in a forward keep the last forward's numbers. */
    float *maps;
    /* The key/value cache and the queries: L × cap × 3C, position i of
     * layer l at qkv + (l·cap + i)·3C, c_attn's output as it comes: the
     * query (C), key (C) and value (C), head h's part at h·d_head of each
     * (raw: before the 1/√d_head). gpt2_query and gpt2_key point into it. */
    float *qkv;
    float *kt;       /* L × H × d_head × cap: each head's keys, transposed */
    float *x;        /* cap × C: the residual stream; after a forward, the last
                        block's output (before ln_f) at every position */
    float *xn, *z, *out; /* cap × C scratch: a layer norm, the heads' z, a projection */
    float *hid;      /* cap × n_inner scratch: the MLP's hidden layer */
    float *xf;       /* C: ln_f of one position (gpt2_logits) */
} Gpt2State;

/* What a forward calls between layers: forward_hooks.h. */
typedef ForwardHooks Gpt2Hooks;

/* 0 when cfg describes a model this forward computes (sizes positive, n_head
 * divides n_embd, a known activation, ln_eps >= 0), else -ATTN_E_HEADS,
 * -ATTN_E_SHAPE or -ATTN_E_UNSUPPORTED with a detail in err. */
int gpt2_config_check(const Gpt2Config *cfg, AttnErr *err);

/* A state for cfg (copied) into *out, holding no tokens; 0, or the error of
 * gpt2_config_check, or -ATTN_E_NOMEM. The caller destroys it. Its buffers
 * grow with the tokens (by half again, to n_positions at most), keeping
 * what they hold: for GPT-2 small, 172 KB a position (the cache, the
 * residual stream, scratch) and the maps, 576 bytes × cap² (2.4 MB at 64
 * positions, 0.6 GB at 1024). */
int gpt2_state_create(Gpt2State **out, const Gpt2Config *cfg, AttnErr *err);
/* Frees s and everything it holds; NULL is fine. */
void gpt2_state_destroy(Gpt2State *s);
/* Forget the computed tokens (the next forward computes all): after the
 * weights changed with the config unchanged. */
void gpt2_state_reset(Gpt2State *s);

/* The forward pass of ids[0..T) on w (the weights of s's config): computes
 * the positions from the first one whose id differs from the last forward's
 * (or that a cancelled forward left undone) to T, in every layer. 0 when
 * complete; -ATTN_E_CANCELLED when hooks->cancel said so (s->T = T and the
 * ids are stored, s->n_done tells what is valid: the next forward computes
 * the rest); -ATTN_E_TOO_MANY_TOKENS when T > n_positions and -ATTN_E_RANGE
 * for an id outside [0, n_vocab) (s unchanged); -ATTN_E_NOMEM. T = 0 is an
 * empty state. */
int gpt2_forward(Gpt2State *s, const Gpt2Weights *w, const int *ids, int T,
                 const Gpt2Hooks *hooks, AttnErr *err);

/* The attention map of layer, head: row i at + i·s->cap (see maps). */
static inline const float *gpt2_map(const Gpt2State *s, int layer, int head)
{
    return s->maps + ((size_t)layer * s->cfg.n_head + head) * s->cap * s->cap;
}
/* Every map packed, L × H × T × T floats, into out (what the exports write). */
void gpt2_maps_copy(const Gpt2State *s, float *out);

/* Head head's query of position i and key of position j in layer (d_head
 * floats each, pointers into s, valid until the next forward): the score
 * before the scaling is their dot product. i, j < s->n_done. */
const float *gpt2_query(const Gpt2State *s, int layer, int head, int i);
const float *gpt2_key(const Gpt2State *s, int layer, int head, int j);

/* The next-token logits after position pos (< s->n_done) into logits
 * (n_vocab floats): ln_f of the last block's output there, times lm_headᵀ.
 * 0, or -ATTN_E_RANGE for pos outside what was computed. */
int gpt2_logits(Gpt2State *s, const Gpt2Weights *w, int pos, float *logits, AttnErr *err);

/* The k most likely next tokens after position pos, most likely first (ties:
 * the smaller id first), with their probabilities (the softmax of every
 * logit, summed in double) into ids[k] and probs[k]; logits is n_vocab floats
 * of scratch (NULL: allocated here). k is at most n_vocab. 0, or as
 * gpt2_logits, or -ATTN_E_NOMEM. */
int gpt2_top_k(Gpt2State *s, const Gpt2Weights *w, int pos, int k, int *ids, float *probs,
               float *logits, AttnErr *err);

/* The kernels' instruction set: "avx512", "avx2" (both with fused
 * multiply-add: the same floats) or "base" (separate rounding: other floats).
 * ATTNVIZ_GPT2_KERNELS=name picks one at start; gpt2_use_kernels switches
 * (tests; not during a forward), -1 when the CPU lacks it. */
const char *gpt2_kernels(void);
int gpt2_use_kernels(const char *name);

#endif
