/* The Llama family (model_type llama, qwen2, mistral) as plain data: its
 * sizes (from config.json) and its weights as float32 arrays the loader in
 * io/ owns (model_file.h). The forward pass that reads them lives in src/core
 * (arch_llama.c on the runtime, no files); this header is what the two share.
 * Each matrix is either float32 [in, out], row-major (the loader transposes
 * the file's [out, in] once, so the forward uses GPT-2's Conv1D kernel), or
 * [out, in] exactly as the file stores it (its *_m handle set, runtime.h's
 * RtMat, and the float one NULL: used from the mapping, each number
 * widened to float32 exactly as the kernel reads it). The embedding table
 * and the output layer are [vocab, hidden], one row a token, either way. */
#ifndef ATTNVIZ_LLAMA_H
#define ATTNVIZ_LLAMA_H

#include <stdint.h>

#include "attnviz/arch.h"
#include "attnviz/error.h"
#include "attnviz/runtime.h"

typedef enum LlamaArch {
    LLAMA_ARCH_LLAMA = 0, /* model_type "llama" */
    LLAMA_ARCH_QWEN2,     /* "qwen2": q, k, v biases always, none on o */
    LLAMA_ARCH_MISTRAL    /* "mistral": Llama's layout, a sliding window */
} LlamaArch;

typedef struct LlamaConfig {
    LlamaArch arch;
    int n_layer;        /* num_hidden_layers: L */
    int n_head;         /* num_attention_heads: H (query heads) */
    int n_kv_head;      /* num_key_value_heads: KV, dividing H (head h uses
                           key-value head h / (H / KV)) */
    int head_dim;       /* head_dim when given, else hidden / H */
    int hidden;         /* hidden_size: C */
    int n_inner;        /* intermediate_size: I */
    int n_positions;    /* max_position_embeddings: the most tokens */
    int n_vocab;        /* vocab_size: rows of the embeddings and the output layer */
    float rms_eps;      /* rms_norm_eps, inside the square root */
    double rope_theta;  /* the rotary base θ */
    /* rope_scaling "llama3" (rope_llama3 = 1) with its four numbers; else none */
    int rope_llama3;
    double rope_factor, rope_low_freq, rope_high_freq;
    int rope_orig_max;  /* original_max_position_embeddings */
    int qkv_bias;       /* q, k, v projections have biases (qwen2; llama's attention_bias) */
    int o_bias;         /* o_proj has a bias (llama's attention_bias) */
    int tied;           /* tie_word_embeddings: the output layer is the embeddings */
    int sliding_window; /* 0: none; else the most keys a query sees on a sliding
                           layer (Mistral's sliding_window: every layer; Qwen2's
                           with use_sliding_window: layers from max_window_layers
                           on, or as layer_types says): keys j ≤ i − window masked */
    int use_sliding_window; /* config.json's sliding_window read (mistral; qwen2's
                               use_sliding_window) */
    int max_window_layers;  /* qwen2: the first layer that slides (default 28) */
    int n_layer_types;      /* qwen2's layer_types given (its length), or 0 */
    unsigned char slides[4096]; /* layer_types: 1 sliding_attention, 0 full_attention */
    /* a GGUF file's rope_freqs.weight (Llama 3's rope scaling as llama.cpp
     * keeps it: each pair's inverse frequency divided by its factor), or 0 */
    int n_rope_freqs;
    double rope_freqs[1024];
    int bos_id, eos_id; /* -1: none */
} LlamaConfig;

typedef struct LlamaLayer {
    const float *attn_norm;    /* input_layernorm: [C] */
    const float *wq, *bq;      /* q_proj: [C, H·head_dim], [H·head_dim] or NULL */
    const float *wk, *bk;      /* k_proj: [C, KV·head_dim], [KV·head_dim] or NULL */
    const float *wv, *bv;      /* v_proj: [C, KV·head_dim], [KV·head_dim] or NULL */
    const float *wo, *bo;      /* o_proj: [H·head_dim, C], [C] or NULL */
    const float *mlp_norm;     /* post_attention_layernorm: [C] */
    const float *w_gate, *w_up; /* gate_proj, up_proj: [C, I] each */
    const float *w_down;       /* down_proj: [I, C] */
    /* the same matrices in bfloat16, [out, in] (NULL: the float ones) */
    const RtMat *wq_m, *wk_m, *wv_m, *wo_m;
    const RtMat *gate_m, *up_m, *down_m;
} LlamaLayer;

typedef struct LlamaWeights {
    const float *embed;        /* embed_tokens: [n_vocab, C] */
    const LlamaLayer *layers;  /* n_layer of them */
    const float *norm;         /* the final norm: [C] */
    const float *lm_head;      /* [n_vocab, C]: embed when tied */
    /* the same two in bfloat16 (NULL: the float ones) */
    const RtMat *embed_m, *lm_head_m;
} LlamaWeights;

/* The family on the runtime (src/core/arch_llama.c), and its config.json
 * and tensors as tables (model_file_open(dir, &desc_llama, ...)). */
extern const RtArch arch_llama;
extern const ArchDesc desc_llama;
/* 0 when cfg describes a model the forward computes: sizes positive, KV
 * divides H (-ATTN_E_HEADS naming both), head_dim even, eps and θ finite and
 * positive, llama3 numbers sane; else -ATTN_E_SHAPE / -ATTN_E_RANGE. */
int llama_config_check(const void *cfg /* a LlamaConfig */, AttnErr *err);

#endif
