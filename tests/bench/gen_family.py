#!/usr/bin/python3
"""Writes a model folder of a real model's shapes with random weights for
`make bench`'s family rows (issue 34): config.json as the model ships it (the
fields that decide the computation) and model.safetensors in the dtype the
model ships (BF16; Pythia's F16), tensors named as Hugging Face names them.
Random numbers do not change the time. Deterministic (seeded).

  qwen3-0.6b   Qwen/Qwen3-0.6B: 28 layers, 16 heads, 8 key-value heads,
               head_dim 128, hidden 1024, intermediate 3072, vocab 151936, tied
  gemma3-1b    google/gemma-3-1b-pt (gemma3_text): 26 layers, 4 heads, 1
               key-value head, head_dim 256, hidden 1152, intermediate 6912,
               vocab 262144, sliding window 512 on five layers of six, tied
  pythia-160m  EleutherAI/pythia-160m (gpt_neox): 12 layers, 12 heads, hidden
               768, intermediate 3072, vocab 50304, rotary_pct 0.25, parallel
               residual, untied embed_out
  bert-base    google-bert/bert-base-uncased (BertForMaskedLM, F32 as it ships):
               12 layers, 12 heads, hidden 768, intermediate 3072, vocab 30522,
               512 positions, 2 token types, the masked-LM head
  t5-small     google-t5/t5-small (T5ForConditionalGeneration, F32 as it ships):
               6 + 6 layers, 8 heads of d_kv 64, d_model 512, d_ff 2048 (relu),
               vocab 32128, 32 relative buckets, tied

usage: gen_family.py NAME OUTDIR   (numpy only; about 1.2 GB, 2 GB, 0.3 GB, 0.4 GB, 0.25 GB)"""
import json
import os
import struct
import sys

import numpy as np

CONFIGS = {
    'qwen3-0.6b': dict(
        model_type='qwen3', hidden_size=1024, num_hidden_layers=28, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, intermediate_size=3072, vocab_size=151936,
        max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000.0,
        rope_scaling=None, tie_word_embeddings=True, hidden_act='silu', attention_bias=False,
        use_sliding_window=False, sliding_window=None, max_window_layers=28,
        bos_token_id=151643, eos_token_id=151645, torch_dtype='bfloat16'),
    'gemma3-1b': dict(
        model_type='gemma3_text', hidden_size=1152, num_hidden_layers=26, num_attention_heads=4,
        num_key_value_heads=1, head_dim=256, intermediate_size=6912, vocab_size=262144,
        max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000.0,
        rope_local_base_freq=10000.0, rope_scaling=None, sliding_window=512,
        sliding_window_pattern=6, query_pre_attn_scalar=256, attn_logit_softcapping=None,
        final_logit_softcapping=None, hidden_activation='gelu_pytorch_tanh',
        tie_word_embeddings=True, bos_token_id=2, eos_token_id=1, torch_dtype='bfloat16'),
    'pythia-160m': dict(
        model_type='gpt_neox', hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, vocab_size=50304, max_position_embeddings=2048,
        rotary_pct=0.25, rotary_emb_base=10000, use_parallel_residual=True,
        layer_norm_eps=1e-5, hidden_act='gelu', tie_word_embeddings=False,
        bos_token_id=0, eos_token_id=0, torch_dtype='float16'),
    'bert-base': dict(
        model_type='bert', hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
        intermediate_size=3072, vocab_size=30522, max_position_embeddings=512,
        type_vocab_size=2, layer_norm_eps=1e-12, hidden_act='gelu', pad_token_id=0,
        position_embedding_type='absolute', torch_dtype='float32'),
    't5-small': dict(
        model_type='t5', d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6,
        num_heads=8, vocab_size=32128, relative_attention_num_buckets=32,
        relative_attention_max_distance=128, feed_forward_proj='relu', layer_norm_epsilon=1e-6,
        is_encoder_decoder=True, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
        tie_word_embeddings=True, n_positions=512, torch_dtype='float32'),
}


def t5_shapes(c):
    C, Q, I, H = c['d_model'], c['num_heads'] * c['d_kv'], c['d_ff'], c['num_heads']
    out = {'shared.weight': (c['vocab_size'], C)}
    for side in ('encoder', 'decoder'):
        out[side + '.block.0.layer.0.SelfAttention.relative_attention_bias.weight'] = \
            (c['relative_attention_num_buckets'], H)
        out[side + '.final_layer_norm.weight'] = (C,)
        n = c['num_layers'] if side == 'encoder' else c['num_decoder_layers']
        for l in range(n):
            p = '%s.block.%d.layer.' % (side, l)
            atts = ['0.SelfAttention.'] + (['1.EncDecAttention.'] if side == 'decoder' else [])
            for a in atts:
                for m in 'qkv':
                    out[p + a + m + '.weight'] = (Q, C)
                out[p + a + 'o.weight'] = (C, Q)
            f = '2' if side == 'decoder' else '1'
            out[p + f + '.DenseReluDense.wi.weight'] = (I, C)
            out[p + f + '.DenseReluDense.wo.weight'] = (C, I)
            for k in range(int(f) + 1):
                out[p + '%d.layer_norm.weight' % k] = (C,)
    return out


def shapes(name):
    """name -> shape, as Hugging Face stores them ([out, in])."""
    c = CONFIGS[name]
    if c['model_type'] == 't5':
        return t5_shapes(c)
    C, L, I, V = c['hidden_size'], c['num_hidden_layers'], c['intermediate_size'], c['vocab_size']
    H = c['num_attention_heads']
    out = {}
    if c['model_type'] == 'bert':
        e = 'bert.embeddings.'
        out[e + 'word_embeddings.weight'] = (V, C)
        out[e + 'position_embeddings.weight'] = (c['max_position_embeddings'], C)
        out[e + 'token_type_embeddings.weight'] = (c['type_vocab_size'], C)
        h = 'cls.predictions.'
        out[h + 'transform.dense.weight'] = (C, C)
        out[h + 'bias'] = (V,)
        for n in (e + 'LayerNorm', h + 'transform.LayerNorm'):
            out[n + '.weight'] = (C,)
        for n in (e + 'LayerNorm', h + 'transform.LayerNorm', h + 'transform.dense'):
            out[n + '.bias'] = (C,)
        for l in range(L):
            p = 'bert.encoder.layer.%d.' % l
            for n in ('attention.self.query', 'attention.self.key', 'attention.self.value',
                      'attention.output.dense'):
                out[p + n + '.weight'] = (C, C)
                out[p + n + '.bias'] = (C,)
            for n in ('attention.output.LayerNorm', 'output.LayerNorm'):
                out[p + n + '.weight'] = (C,)
                out[p + n + '.bias'] = (C,)
            out[p + 'intermediate.dense.weight'] = (I, C)
            out[p + 'intermediate.dense.bias'] = (I,)
            out[p + 'output.dense.weight'] = (C, I)
            out[p + 'output.dense.bias'] = (C,)
        return out
    if c['model_type'] == 'gpt_neox':
        out['gpt_neox.embed_in.weight'] = (V, C)
        out['gpt_neox.final_layer_norm.weight'] = (C,)
        out['gpt_neox.final_layer_norm.bias'] = (C,)
        out['embed_out.weight'] = (V, C)
        for l in range(L):
            p = 'gpt_neox.layers.%d.' % l
            for n in ('input_layernorm', 'post_attention_layernorm'):
                out[p + n + '.weight'] = (C,)
                out[p + n + '.bias'] = (C,)
            out[p + 'attention.query_key_value.weight'] = (3 * C, C)
            out[p + 'attention.query_key_value.bias'] = (3 * C,)
            out[p + 'attention.dense.weight'] = (C, C)
            out[p + 'attention.dense.bias'] = (C,)
            out[p + 'mlp.dense_h_to_4h.weight'] = (I, C)
            out[p + 'mlp.dense_h_to_4h.bias'] = (I,)
            out[p + 'mlp.dense_4h_to_h.weight'] = (C, I)
            out[p + 'mlp.dense_4h_to_h.bias'] = (C,)
        return out
    KV, D = c['num_key_value_heads'], c['head_dim']
    out['model.embed_tokens.weight'] = (V, C)
    out['model.norm.weight'] = (C,)
    norms = ['input_layernorm', 'post_attention_layernorm']
    if c['model_type'] == 'gemma3_text':
        norms += ['pre_feedforward_layernorm', 'post_feedforward_layernorm']
    for l in range(L):
        p = 'model.layers.%d.' % l
        for n in norms:
            out[p + n + '.weight'] = (C,)
        out[p + 'self_attn.q_proj.weight'] = (H * D, C)
        out[p + 'self_attn.k_proj.weight'] = (KV * D, C)
        out[p + 'self_attn.v_proj.weight'] = (KV * D, C)
        out[p + 'self_attn.o_proj.weight'] = (C, H * D)
        out[p + 'self_attn.q_norm.weight'] = (D,)
        out[p + 'self_attn.k_norm.weight'] = (D,)
        out[p + 'mlp.gate_proj.weight'] = (I, C)
        out[p + 'mlp.up_proj.weight'] = (I, C)
        out[p + 'mlp.down_proj.weight'] = (C, I)
    return out


def encode(a, dtype):
    if dtype == 'F32':
        return a.astype('<f4').tobytes()
    if dtype == 'F16':
        return a.astype('<f2').tobytes()
    u = a.astype('<f4').view('<u4')
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype('<u2').tobytes()  # round to nearest even


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in CONFIGS:
        sys.exit('usage: gen_family.py %s OUTDIR' % '|'.join(CONFIGS))
    name, folder = sys.argv[1], sys.argv[2]
    c = CONFIGS[name]
    dtype = {'float16': 'F16', 'float32': 'F32'}.get(c['torch_dtype'], 'BF16')
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(c, f, indent=2)
    sh = shapes(name)
    names = sorted(sh)
    header, off = {'__metadata__': {'format': 'pt'}}, 0
    for n in names:
        nb = int(np.prod(sh[n])) * (4 if dtype == 'F32' else 2)
        header[n] = {'dtype': dtype, 'shape': list(sh[n]), 'data_offsets': [off, off + nb]}
        off += nb
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    rng = np.random.default_rng(34)
    tmp = os.path.join(folder, 'model.safetensors.tmp')
    with open(tmp, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for n in names:
            if len(sh[n]) == 1:  # norms near 1 (Gemma's 1 + w: near 0), biases small
                centre = 0.0 if n.endswith('.bias') or c['model_type'] == 'gemma3_text' else 1.0
                a = centre + rng.standard_normal(sh[n], dtype=np.float32) * 0.02
            else:
                a = rng.standard_normal(sh[n], dtype=np.float32) * 0.02
            f.write(encode(a, dtype))
    os.replace(tmp, os.path.join(folder, 'model.safetensors'))


if __name__ == '__main__':
    main()
