/* One forward for every transformer (src/core/runtime.c): the state, the
 * layer loop, the unchanged prefix reused, the attention of a layer, the
 * rotary embedding, a head's query and key, maps recomputed on demand, the
 * value-weighted maps (norms), the logits and their top k. An architecture is a table (RtArch) of its own
 * file (src/core/arch_*.c): its config's check and shapes, its embedding,
 * its layer written with ops.h's operations and rt_attend, its logits.
 *
 * No map is stored. The state keeps what the maps are made from, each
 * layer's queries and keys (with the values: the key/value cache); the
 * forward computes each head's weights a row at a time into scratch, uses
 * them for the context and drops them. rt_map recomputes any map from the
 * cache with the same kernels and options, so its floats are the forward's
 * bit for bit. For a causal model the forward computes only the positions
 * from the first changed token on (every number of a position is computed
 * the same way whichever position it starts from: an incremental forward
 * gives a full one's floats); a bidirectional one computes all of them.
 *
 * Not shared between threads: one thread calls rt_forward (which may hand
 * halves of its work to the worker of workers.h) and reads the results
 * after it returns, or in the layer hook. */
#ifndef ATTNVIZ_RUNTIME_H
#define ATTNVIZ_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/error.h"
#include "attnviz/forward_hooks.h"

typedef struct Rt Rt;

/* A matrix used as the file stores it, [out, in] (arch.h): out rows of in
 * numbers of one of ggml's types (its numbering: RT_MAT_BF16 bfloat16, the
 * GGUF files' block types), row r at data + (perm ? perm[r] : r) ·
 * row_bytes, read in place from the mapping by the products, each row
 * widened or dequantized as the kernel reads it. */
typedef struct RtMat {
    int type;
    const void *data;
    size_t row_bytes;
    const int32_t *perm;   /* NULL: the rows in order */
} RtMat;
#define RT_MAT_BF16 30     /* ggml's GGML_TYPE_BF16 */

#define LM_TOP_K 10 /* the predictions the window shows */

/* The rotary embedding: rotate_half (element e of the rotated part paired
 * with e + dims/2: Llama's) or interleaved pairs (2e, 2e + 1); the first
 * dims of a head's dimensions rotated (the rest as they are); the angle of
 * position p, pair e: p · θ^(−2e/dims), the inverse frequencies scaled
 * linearly (divided by factor), as Llama 3's, or as longrope's (Phi-3:
 * divided by short_f[e], or by long_f[e] for the whole text when it has
 * more than orig_max tokens; cos and sin multiplied by attn_factor);
 * angles in double. */
typedef enum RopeKind { ROPE_NONE = 0, ROPE_HALF, ROPE_PAIRS } RopeKind;
typedef enum RopeScaling {
    ROPE_SCALE_NONE = 0, ROPE_SCALE_LINEAR, ROPE_SCALE_LLAMA3, ROPE_SCALE_LONGROPE
} RopeScaling;
typedef struct RopeSpec {
    RopeKind kind;
    int dims;           /* the rotated dimensions of a head: even, ≤ d_head (0: all) */
    double theta;
    RopeScaling scaling;
    double factor, low_freq, high_freq; /* low and high: llama3's */
    int orig_max;       /* llama3's and longrope's original_max_position_embeddings */
    /* longrope's dims/2 factors each: pointers into the architecture's
     * config (the state's copy: rt_create asks for the copy's shape) */
    const double *short_f, *long_f;
    double attn_factor; /* longrope: cos and sin times this (0: 1) */
} RopeSpec;

/* A layer's attention: which keys a query sees (causal: j ≤ i; window > 0:
 * also j > i − window), and the scores' scaling in this order: / div1,
 * / div2, · mul (each 0: not applied), then softcap · tanh(s / softcap)
 * (0: none). */
typedef struct RtAttn {
    int causal, window;
    float div1, div2, mul, softcap;
    /* a relative position bias (T5's; NULL: none), added after the scaling
     * and before the soft cap: head h, query i, key j gets rel[b · rel_heads
     * + h], b the bucket of j − i of rel_buckets (rt_rel_bucket: both
     * directions when the attention is not causal, else only the past) */
    const float *rel;
    int rel_buckets, rel_max, rel_heads;
} RtAttn;

/* T5's bucket (transformers' _relative_position_bucket, its float32 log)
 * of the relative position d = key − query: half the buckets for each
 * direction when bidir, else the past only (a future key: bucket 0); the
 * first half of a direction's buckets exact distances, the rest
 * logarithmic up to max_dist. */
int rt_rel_bucket(int d, int bidir, int buckets, int max_dist);

/* The score a's layer makes of a query · key dot product (its scalings and
 * soft cap in order, in double: the panel's number); rt_attn_describe puts
 * the steps in words ("÷ √64", "× 0.0625", "then 50 · tanh(s / 50)"). */
double rt_attn_score(const RtAttn *a, double dot);
/* The same for head h, query i, key j: with the relative position bias
 * (T5's) when a has one, added where the forward adds it. */
double rt_attn_score_at(const RtAttn *a, double dot, int h, int i, int j);
void rt_attn_describe(const RtAttn *a, int d_head, char *buf, size_t n);

/* What an architecture's config gives the runtime. The cache holds per
 * layer and position the queries (n_head · d_head), keys and values
 * (n_kv_head · d_head each), head h's at h · d_head; query head h uses
 * key-value head h / (n_head / n_kv_head). */
typedef struct RtShape {
    int n_layer, n_head, n_kv_head, d_head;
    int hidden;         /* C: the residual stream */
    int n_positions;    /* the most tokens */
    int n_vocab;        /* rows of the logits */
    int bidirectional;  /* 1: every query sees every key, nothing reused */
    int n_rows;         /* per-position scratch the layer asks for ... */
    int row_w[4];       /* ... of these widths (rt->rows[k]) */
    RopeSpec rope;      /* rt_rope's */
    RopeSpec rope2;     /* a second one some layers use (rt_rope_with(..., 1):
                           Gemma 3's local layers); kind ROPE_NONE: none */
} RtShape;

/* An architecture (one file each, src/core/arch_*.c). cfg is its own
 * config struct (cfg_size bytes, copied into the state), w its weights. */
typedef struct RtArch {
    const char *name;   /* in messages: "GPT-2 state for 4096 tokens" */
    size_t cfg_size;
    int (*check)(const void *cfg, AttnErr *err); /* 0, or the error naming the field */
    void (*shape)(const void *cfg, RtShape *out);
    /* rt->x's rows [start, T) from the tokens */
    void (*embed)(Rt *rt, const void *w, const int *ids, int start, int T);
    /* layer l on positions [start, T) of rt->x: writes the cache's rows
     * (rt_qkv), calls rt_attend, adds into rt->x */
    void (*layer)(Rt *rt, const void *w, int l, int start, int T);
    /* the logits (n_vocab) of one position's last-layer output x */
    void (*logits)(Rt *rt, const void *w, const float *x, float *logits);
    /* An encoder-decoder's (both NULL for the others): this table is its
     * decoder's (causal; each layer also attends over the source with
     * rt_cross_attend), encoder the encoder's (bidirectional, on the same
     * config and weights; its logits NULL). source makes every decoder
     * layer's cross keys and values (rt_cross_kv's rows) from the
     * encoder's last-layer output mem (Ts rows of the encoder's hidden
     * size; scratch it may overwrite: its final norm in place). */
    const struct RtArch *encoder;
    void (*source)(Rt *rt, const void *w, float *mem, int Ts);
} RtArch;

struct Rt {
    const RtArch *arch;
    void *cfg;          /* the architecture's config (a copy) */
    RtShape sh;
    int qdim, kvdim;    /* n_head · d_head, n_kv_head · d_head */
    int qkv_w;          /* qdim + 2 · kvdim: a cache row */
    int T;              /* tokens of the last forward, complete or cancelled */
    int n_done;         /* positions [0, n_done) up to date in every layer */
    int *ids;           /* [n_positions]: the last forward's tokens */
    int cap;            /* positions allocated (grows with T, to n_positions) */
    int *layer_done;    /* L: positions up to date in each layer's cache */
    RtAttn *attn;       /* L: each layer's attention as it was computed */
    float *qkv;         /* L × cap × qkv_w: the cache, position i of layer l at (l·cap + i)·qkv_w */
    float *kt;          /* L × n_kv_head × d_head × cap: the keys transposed */
    float *x;           /* cap × C: the residual stream (the last layer's output after a forward) */
    float *xn, *out;    /* cap × C scratch */
    float *z;           /* cap × qdim: the heads' context */
    float *rows[4];     /* cap × row_w[k]: the layer's own scratch */
    float *hrow;        /* n_head × 4 × cap: four rows of weights per head (the forward's) */
    double *rope[2];    /* cap × dims: cos (first half), sin (second) of each position's
                           angles, of sh.rope and sh.rope2 */
    double *inv_freq[2]; /* dims / 2 each */
    int rope_long;      /* longrope: the cache's angles use the long factors */
    const ForwardHooks *hooks; /* the running forward's (its rows go to hooks->row) */
    float *zero;        /* zeros: the bias of a product without one */
    float *xf;          /* C: scratch of the logits */
    const float **wo;   /* L: each layer's output projection as rt_out_project saw it
                           (float32 [in, out]), or NULL ... */
    const RtMat **wom;  /* ... as the file stores it, [out, in] (rt_value_norms reads it) */
    float *vnorm;       /* L × H × cap: ‖v_j W_O,h‖ of key j, head h (rt_value_norms) */
    int *norms_done;    /* L: positions of vnorm up to date in each layer */
    unsigned char *ablated; /* L × H: 1 where rt_attend replaces the head's z */
    int n_ablated;      /* heads set in ablated */
    int ablate_mean;    /* 1: an ablated head's z is its mean over the T positions; 0: zeros */
    long long n_computed; /* positions × layers every forward so far computed (what the
                             reused prefix saved shows in it; the tests' measure) */
    /* an encoder-decoder's decoder state (arch->encoder set): */
    Rt *enc;            /* the encoder's state (the source's tokens) */
    int Ts;             /* source positions the cross keys hold (-1: none made) */
    float *xq;          /* L × cap × qdim: the cross queries of each target position */
    float *xkv;         /* L × Ts × 2·kvdim: the cross keys, then values, of each source position */
    float *xkt;         /* L × kvdim × Ts: the cross keys transposed */
    float *xrow;        /* n_head × Ts: a row of cross weights per head */
    float *xmem;        /* Ts × the encoder's hidden: source's scratch */
    RtAttn *xattn;      /* L: each layer's cross-attention as computed */
};

/* A state for arch and cfg (checked, copied), holding no tokens: 0, the
 * check's error, or -ATTN_E_NOMEM. Its buffers grow with the tokens (by
 * half again, to n_positions at most), keeping what they hold. */
int rt_create(Rt **out, const RtArch *arch, const void *cfg, AttnErr *err);
void rt_destroy(Rt *rt); /* NULL is fine */
/* Forget the computed tokens (the next forward computes all). */
void rt_reset(Rt *rt);

/* Head ablation: rt_attend replaces head's context z in layer (before the
 * layer's output projection reads it) by zeros, or with rt_ablate_mean on
 * by that head's mean z over the T positions of the text. A changed set or
 * mode forgets the computed tokens (rt_reset). A mean depends on every
 * position, so with mean ablation each forward computes all positions (as
 * a bidirectional model's); zeros keep the prefix reuse. The head's own
 * layer's maps are unchanged; later layers' differ. 0, or -1 when layer or
 * head is out of range. */
int rt_ablate(Rt *rt, int layer, int head, int on);
void rt_ablate_mean(Rt *rt, int on);
int rt_is_ablated(const Rt *rt, int layer, int head);

/* The forward of ids[0..T) on w: 0; -ATTN_E_CANCELLED when hooks->cancel
 * said so (rt->T = T, rt->n_done what is valid: the next forward computes
 * the rest); rt unchanged on -ATTN_E_TOO_MANY_TOKENS (T > n_positions) and -ATTN_E_RANGE (an id outside [0, n_vocab));
 * -ATTN_E_NOMEM naming the bytes the state would need. T = 0 is empty. */
int rt_forward(Rt *rt, const void *w, const int *ids, int T, const ForwardHooks *hooks,
               AttnErr *err);

/* An encoder-decoder's forward (arch->encoder set): the encoder on the
 * source src[0..Ts) (every position: bidirectional) when it changed, then
 * every decoder layer's cross keys and values, then the decoder on the
 * target tgt[0..Tt) (the decoder's ids: its start token first), the
 * unchanged prefix reused unless the source changed. hooks are the
 * decoder's forward's, enc_hooks the encoder's (either NULL: none; a
 * source unchanged runs no encoder layer). rt_forward on such a state:
 * -ATTN_E_RANGE. Errors as rt_forward's. */
int rt_forward_encdec(Rt *rt, const void *w, const int *src, int Ts, const int *tgt, int Tt,
                      const ForwardHooks *hooks, const ForwardHooks *enc_hooks, AttnErr *err);
/* The cross-attention map of decoder layer, head: Tt × Ts weights (row i
 * at out + i·ld, ld ≥ Ts) recomputed from the cross queries and keys kept
 * (the forward's floats); rows not computed all 0. */
void rt_cross_map(const Rt *rt, int layer, int head, float *out, size_t ld);
/* For the decoder's layers: the cross query row of position i in layer l
 * (qdim floats), source position j's cross key row (kvdim floats, the
 * value's follows it). */
static inline float *rt_cross_q(const Rt *rt, int l, int i)
{
    return rt->xq + ((size_t)l * rt->cap + i) * rt->qdim;
}
static inline float *rt_cross_kv(const Rt *rt, int l, int j)
{
    return rt->xkv + ((size_t)l * rt->Ts + j) * 2 * rt->kvdim;
}
/* Layer l's cross-attention for target rows [start, T) (the cross queries
 * made): each head's weights over the Ts source keys (a: no mask, its
 * scaling) and its context into rt->z. */
void rt_cross_attend(Rt *rt, int l, int start, int T, const RtAttn *a);

/* The map of layer, head (T × T weights, row i at out + i·ld, ld ≥ T),
 * recomputed from the cache: a query's masked keys exactly 0; rows of
 * positions the layer has not computed (a cancelled forward) all 0. */
void rt_map(const Rt *rt, int layer, int head, float *out, size_t ld);
/* Every map packed, L × H × T × T, into out (on the two threads). */
void rt_maps_copy(const Rt *rt, float *out);

/* Value-weighted attention ("norms", Kobayashi et al. 2020, their ‖αf(x)‖):
 * N[i, j] = α[i, j] · ‖v_j W_O,h‖, v_j key j's value (its bias included)
 * of head h's key-value head, W_O,h the d_head rows of the layer's output
 * projection that read head h (its bias left out: it is added after the
 * heads are summed), the Euclidean norm of a C-vector; masked cells 0.
 * rt_value_norms makes the per-key norms the maps need (L · H · T floats,
 * never a map): the products with the kernels (float), the squares summed
 * in double; only the positions not made since the last forward changed
 * them (a keystroke: one position a layer). 0, -ATTN_E_NOMEM, or
 * -ATTN_E_RANGE when a computed layer recorded no output projection (its
 * architecture calls rt_project for it, not rt_out_project). */
int rt_value_norms(Rt *rt, AttnErr *err);
/* Key j's ‖v_j W_O,h‖ of layer, head: T floats (valid until the next
 * forward), or NULL when rt_value_norms has not made them since. */
const float *rt_norms_of(const Rt *rt, int layer, int head);
/* The norms map of layer, head, as rt_map (rt_value_norms first: without
 * it every row is 0). */
void rt_map_norms(const Rt *rt, int layer, int head, float *out, size_t ld);

/* What every map of the last forward is made from, copied out of the
 * state: each layer's queries and transposed keys, its attention's options
 * and the rows it computed (L · T · (H + KV) · d_head floats), and the
 * per-key value norms when rt_value_norms made them (L · H · T). The maps a
 * thread keeps (the window's) while the state computes the next text;
 * rt_maps_map gives rt_map's floats. */
typedef struct RtMaps RtMaps;
RtMaps *rt_maps_take(const Rt *rt); /* NULL: out of memory */
/* The same of an encoder-decoder's cross-attention (rt the decoder's
 * state): the cross queries of its T target positions and the cross keys
 * of its Ts source positions, maps T × Ts (rt_cross_map's) recomputed
 * when asked; no value norms. NULL: out of memory. */
RtMaps *rt_maps_take_cross(const Rt *rt);
void rt_maps_free(RtMaps *m);       /* NULL is fine */
int rt_maps_T(const RtMaps *m);
int rt_maps_Tk(const RtMaps *m);    /* a map's keys: T, a cross group's Ts */
/* 1 when layer's attention is causal (keys after the query masked); 0 for
 * a bidirectional model's (every map a full T × T square). */
int rt_maps_causal(const RtMaps *m, int layer);
/* The sliding window of layer's attention (keys j <= i - window masked), 0: none. */
int rt_maps_window(const RtMaps *m, int layer);
/* 1 when no map of m can hold a NaN (every query and key finite and below
 * 1e18: no score overflows); 0 when one may (then look: attnfile.h). */
int rt_maps_tame(const RtMaps *m);
size_t rt_maps_bytes(const RtMaps *m);
void rt_maps_map(const RtMaps *m, int layer, int head, float *out, size_t ld);
/* fn(user, layer, head, map) for every map (T × T, row stride T), the maps
 * made on the two threads (fn is called from both, each map once, in no
 * set order: it writes only what is the map's own). 0 or -ATTN_E_NOMEM. */
int rt_maps_each(const RtMaps *m, void (*fn)(void *user, int layer, int head, const float *map),
                 void *user);
/* The norms maps (rt_value_norms) of m: 1 when m carries their per-key
 * norms (then rt_maps_norms_map and rt_maps_norms_each work as rt_maps_map
 * and rt_maps_each, each map α times the norms of its keys: rt_map_norms'
 * floats), 0 when it does not (then they give zeros, and -ATTN_E_RANGE). */
int rt_maps_has_norms(const RtMaps *m);
void rt_maps_norms_map(const RtMaps *m, int layer, int head, float *out, size_t ld);
int rt_maps_norms_each(const RtMaps *m, void (*fn)(void *user, int layer, int head, const float *map),
                       void *user);
/* The same for the maps of one layer of the state (a layer hook's); the
 * norms' version makes the layer's value norms first (rt_value_norms' of
 * this layer: in a layer hook, the layer's new positions). */
int rt_layer_norms_each(Rt *rt, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                        void *user);
int rt_layer_each(const Rt *rt, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                  void *user);

/* Layer's attention as the last forward computed it. */
const RtAttn *rt_layer_attn(const Rt *rt, int layer);

/* Head head's query of position i and the key its key-value head has at
 * position j in layer (d_head floats, pointers into rt, valid until the next
 * forward; rotated when the model rotates them): the score before the
 * scaling is their dot product. i, j < rt->n_done. */
const float *rt_query(const Rt *rt, int layer, int head, int i);
const float *rt_key(const Rt *rt, int layer, int head, int j);
static inline int rt_kv_head(const Rt *rt, int head)
{
    return head / (rt->sh.n_head / rt->sh.n_kv_head);
}

/* The logits after position pos (< n_done) into logits (n_vocab floats): 0
 * or -ATTN_E_RANGE. */
int rt_logits(Rt *rt, const void *w, int pos, float *logits, AttnErr *err);
/* The k most likely next tokens after pos, most likely first (ties: the
 * smaller id), with their softmax probabilities; logits is n_vocab floats
 * of scratch (NULL: allocated here). */
int rt_top_k(Rt *rt, const void *w, int pos, int k, int *ids, float *probs, float *logits,
             AttnErr *err);

/* The logit lens of position pos (0-based, < T): a forward of ids[0..T)
 * that computes pos and every position after it (the unchanged prefix
 * before pos reused; the state holds that forward after) keeping pos's
 * residual stream after the
 * embedding and after each layer, each through the architecture's logits
 * (its final norm, output layer and final soft cap) and its k most likely
 * tokens with their softmax probabilities, as rt_top_k: (L + 1) × k ids and
 * probabilities, row 0 the embeddings', row L equal to rt_top_k(pos). 0,
 * -ATTN_E_RANGE (pos or k), the forward's error, or -ATTN_E_NOMEM. */
int rt_lens(Rt *rt, const void *w, const int *ids, int T, int pos, int k, int *top_ids,
            float *probs, AttnErr *err);

/* ---- for the architectures' layers ------------------------------------------- */
/* The cache's row of position i in layer l; rt->x's, rt->xn's, rt->out's,
 * rt->z's and scratch k's row of position i. */
static inline float *rt_qkv(const Rt *rt, int l, int i)
{
    return rt->qkv + ((size_t)l * rt->cap + i) * rt->qkv_w;
}
static inline float *rt_row(float *base, int width, int i)
{
    return base + (size_t)i * width;
}
/* The rotary embedding of rt->sh.rope on the queries and keys of layer l's
 * positions [start, T); rt_rope_with's which 1: of rt->sh.rope2. */
void rt_rope(Rt *rt, int l, int start, int T);
void rt_rope_with(Rt *rt, int l, int start, int T, int which);
/* Layer l's attention on the query rows [start, T): the keys transposed,
 * then each head's scores, scaling, mask, softmax and context into rt->z,
 * heads on the two threads; a remembers how (for rt_map). */
void rt_attend(Rt *rt, int l, int start, int T, const RtAttn *a);
/* out (n × m, row stride ldo) = A (n × k) · W + bias: W float32 [in, out],
 * or as the file stores it when wm is set (bias NULL: none). */
void rt_project(const Rt *rt, float *out, int ldo, const float *A, int lda, const float *W,
                const RtMat *wm, const float *bias, int n, int k, int m);
/* rt_project, then the activation act (the core's OpsAct: a GELU, ReLU,
 * SiLU) on out's m columns: on each piece of columns as the two threads
 * finish it (float32 W), while it is in the cache, not in a pass of its
 * own after; the same floats. */
void rt_project_act(const Rt *rt, float *out, int ldo, const float *A, int lda, const float *W,
                    const RtMat *wm, const float *bias, int n, int k, int m, int act);
/* One of several products of the same input rows (rt_project_each): out
 * (row stride ldo, m columns) = A · W + bias, W float32 [in, out] or wm as
 * the file stores it (bias NULL: none). */
typedef struct RtProj {
    float *out;
    int ldo;
    const float *W;
    const RtMat *wm;
    const float *bias;
    int m;
} RtProj;
/* rt_project for each of p[0 … np) on the same A (n × k): one job for the
 * two threads (four products at most: more in several), as a layer's
 * query, key and value products, or its gate and up; each float as
 * rt_project gives it. */
void rt_project_each(const Rt *rt, const RtProj *p, int np, const float *A, int lda, int n, int k);
/* The C numbers of token id's embedding into dst: row id of the float32
 * table [vocab, C], or of m when set. */
void rt_embed_row(float *dst, const float *table, const RtMat *m, int id, int C);
/* out[v] = x · row v for v < V: the logits' output layer, rows of C
 * floats, or m's rows when set. */
void rt_vocab_dots(float *out, const float *x, const float *rows, const RtMat *m, int C, int V);

/* rt_project for layer l's attention output projection (z · W_O + bias):
 * records W and wm (the state's per-layer W_O, for rt_value_norms), then
 * projects as rt_project does. Every architecture calls it for that product. */
void rt_out_project(Rt *rt, int l, float *out, int ldo, const float *A, int lda, const float *W,
                    const RtMat *wm, const float *bias, int n, int k, int m);

/* The kernels' instruction set: "avx512", "avx2" (both with fused
 * multiply-add: the same floats) or "base" (separate rounding: other
 * floats). ATTNVIZ_LM_KERNELS=name picks one at start; lm_use_kernels
 * switches (tests; not during a forward), -1 when the CPU lacks it. */
const char *lm_kernels(void);
int lm_use_kernels(const char *name);

#endif
