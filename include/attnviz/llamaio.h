/* Llama-family model folders (model_type llama, qwen2, mistral) read into
 * llama.h's plain data: config.json → LlamaConfig, model.safetensors (or an
 * index and its shards) → LlamaWeights. Not the forward
 * pass (src/core/arch_llama.c) nor the tokenizer (bpe_files.h reads
 * tokenizer.json). No SDL. Errors: 0 or a negative ATTN_E_* code, err
 * naming the file or tensor and what is wrong.
 *
 * Weights: when every matrix is BF16 (as SmolLM2, Qwen2.5 and Llama 3.2
 * ship), the matrices are used in place from the read-only mapping, [out,
 * in] as stored (llama.h's *_bf16 pointers: the kernel widens each number to
 * float32 exactly and sums in float32); otherwise every matrix is converted
 * to float32 and transposed to [in, out] once, into one block the model
 * owns (GPT-2's [in, out] kernels). The embeddings and lm_head, [vocab,
 * hidden] rows, are used in place when BF16 or aligned F32, else converted;
 * vectors (norms, biases) in place when aligned F32, else converted (a few
 * KB). */
#ifndef ATTNVIZ_LLAMAIO_H
#define ATTNVIZ_LLAMAIO_H

#include <stddef.h>

#include "attnviz/error.h"
#include "attnviz/llama.h"

/* Parse a Hugging Face LlamaConfig, Qwen2Config or MistralConfig.
 * Required: model_type (llama, qwen2 or mistral; another refused naming
 * it), hidden_size, num_hidden_layers, num_attention_heads,
 * intermediate_size, vocab_size. Defaults as transformers' own:
 * num_key_value_heads = num_attention_heads, head_dim = hidden_size /
 * num_attention_heads (which must divide), max_position_embeddings (2048
 * llama, 32768 qwen2, 131072 mistral), rms_norm_eps 1e-6, rope_theta
 * 10000, tie_word_embeddings false, attention_bias false (llama only;
 * qwen2 has q, k, v biases always), hidden_act silu (another refused by
 * name), mlp_bias false (true refused). rope_scaling null, or an object
 * whose rope_type (or older "type") is "default" (none) or "llama3" with
 * factor, low_freq_factor, high_freq_factor and
 * original_max_position_embeddings (a missing one refused naming it);
 * another type refused naming it. Mistral's sliding_window (null: none)
 * and Qwen2's with use_sliding_window true become cfg->sliding_window
 * (the forward refuses more tokens than it). bos/eos_token_id null, absent
 * or outside the vocabulary: -1 (a list: its first). num_attention_heads
 * not divisible by num_key_value_heads: -ATTN_E_HEADS naming both. On
 * error *cfg is zeroed. */
int llama_config_parse(LlamaConfig *cfg, const char *text, size_t len, const char *name,
                       AttnErr *err);

typedef struct LlamaModelOwn LlamaModelOwn; /* the mappings and buffers (llama_file.c) */

typedef struct LlamaModel {
    LlamaConfig cfg;
    LlamaWeights weights;   /* into the mapping or the converted block */
    char *dir;              /* the folder read */
    char *tokenizer_path;   /* tokenizer.json, or NULL */
    int n_shards;           /* safetensors files mapped (1 unless sharded) */
    int n_converted;        /* tensors converted (or transposed) to float32 */
    int n_bf16;             /* tensors used in place as bfloat16 */
    size_t converted_bytes; /* the float32 block they were converted into */
    LlamaModelOwn *own;
} LlamaModel;

/* Open the model folder dir: config.json, then model.safetensors (or
 * model.safetensors.index.json and its shards) mapped read-only; every
 * weight's dtype (F32, F16, BF16) and shape checked against the config,
 * a wrong shape named with both shapes as stored, [out, in] (e.g.
 * "model.layers.0.self_attn.k_proj.weight: [32, 64] expected, [64, 64]
 * found"); tie_word_embeddings false without lm_head.weight refused naming
 * lm_head; tensors of no weight ignored. On success *out owns everything
 * (llama_file_close); on error *out is NULL and err names the file or
 * tensor. */
int llama_file_open(const char *dir, LlamaModel **out, AttnErr *err);
/* Unmaps and frees everything; NULL is fine. */
void llama_file_close(LlamaModel *m);

#endif
