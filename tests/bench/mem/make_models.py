#!/usr/bin/python3
"""Writes the two models the memory measurement (tests/bench/mem/measure.sh,
issue 33) runs, with random weights (seeded, deterministic), in Hugging
Face's folder layout:

  gpt2-small/    GPT-2 small's shapes: 12 layers, 12 heads, n_embd 768,
                 n_positions 1024 (about 85 M parameters, 340 MB of float32)
  llama-1b-attn/ Llama-3.2-1B's attention: 16 layers, 32 query heads, 8
                 key-value heads, head_dim 64, max_position_embeddings 8192,
                 rope_theta 500000, tied embeddings; hidden_size 256 and
                 intermediate_size 512 (small: only the attention's shape
                 matters for the maps' memory)

Each folder: config.json, model.safetensors (float32, written here: an
8-byte little-endian header size, the JSON header padded with spaces to a
multiple of 8, then the tensors in C order, sorted by name), and a
byte-level tokenizer (vocab.json, merges.txt): GPT-2's 256
bytes_to_unicode characters, four merges and <|endoftext|> last, so that any
text tokenizes, about one token a byte.

Weights are small (std 0.02, norms' weights 1) so nothing overflows.

Run: /usr/bin/python3 tests/bench/mem/make_models.py [OUTDIR]
(default OUTDIR: /tmp/attnviz-mem-models; numpy only)."""
import json
import os
import struct
import sys

import numpy as np


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (as in tests/fixtures/gpt2)."""
    bs = (list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) +
          list(range(ord('®'), ord('ÿ') + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write_tokenizer(folder):
    """256 byte tokens (in byte order), 4 merges, <|endoftext|> last: 261 tokens."""
    table = bytes_to_unicode()  # in its own order: printable bytes first, then the rest
    bs = (list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) +
          list(range(ord('®'), ord('ÿ') + 1)))
    order = bs + [b for b in range(256) if b not in bs]
    byte_of = dict(zip(order, table))
    chars = [byte_of[b] for b in range(256)]
    sp = byte_of[0x20]  # 'Ġ'
    merges = [(sp, 't'), ('h', 'e'), (sp + 't', 'he'), ('i', 'n')]
    tokens = chars + [a + b for a, b in merges] + ['<|endoftext|>']
    assert len(set(tokens)) == len(tokens)
    with open(os.path.join(folder, 'vocab.json'), 'w', encoding='utf-8') as f:
        json.dump({t: i for i, t in enumerate(tokens)}, f, ensure_ascii=False)
    with open(os.path.join(folder, 'merges.txt'), 'w', encoding='utf-8') as f:
        f.write('#version: 0.2\n')
        for a, b in merges:
            f.write(f'{a} {b}\n')
    return len(tokens)


def write_safetensors(path, tensors):
    """tensors: name -> float32 array, written as F32 in name order."""
    names = sorted(tensors)
    header, off = {'__metadata__': {'format': 'pt'}}, 0
    for n in names:
        nb = tensors[n].size * 4
        header[n] = {'dtype': 'F32', 'shape': list(tensors[n].shape),
                     'data_offsets': [off, off + nb]}
        off += nb
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for n in names:
            f.write(np.ascontiguousarray(tensors[n], dtype='<f4').tobytes())
    return off


def normal(rng, shape, std=0.02):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std))


def gpt2_small(folder, rng):
    V = write_tokenizer(folder)
    L, H, C, P = 12, 12, 768, 1024
    w = {'wte.weight': normal(rng, (V, C)), 'wpe.weight': normal(rng, (P, C), 0.01)}
    for l in range(L):
        h = f'h.{l}.'
        w[h + 'ln_1.weight'] = np.ones(C, np.float32)
        w[h + 'ln_1.bias'] = np.zeros(C, np.float32)
        w[h + 'attn.c_attn.weight'] = normal(rng, (C, 3 * C))  # Conv1D: [in, out]
        w[h + 'attn.c_attn.bias'] = np.zeros(3 * C, np.float32)
        w[h + 'attn.c_proj.weight'] = normal(rng, (C, C))
        w[h + 'attn.c_proj.bias'] = np.zeros(C, np.float32)
        w[h + 'ln_2.weight'] = np.ones(C, np.float32)
        w[h + 'ln_2.bias'] = np.zeros(C, np.float32)
        w[h + 'mlp.c_fc.weight'] = normal(rng, (C, 4 * C))
        w[h + 'mlp.c_fc.bias'] = np.zeros(4 * C, np.float32)
        w[h + 'mlp.c_proj.weight'] = normal(rng, (4 * C, C))
        w[h + 'mlp.c_proj.bias'] = np.zeros(C, np.float32)
    w['ln_f.weight'] = np.ones(C, np.float32)
    w['ln_f.bias'] = np.zeros(C, np.float32)
    nbytes = write_safetensors(os.path.join(folder, 'model.safetensors'), w)
    cfg = {
        'activation_function': 'gelu_new', 'architectures': ['GPT2LMHeadModel'],
        'attn_pdrop': 0.1, 'bos_token_id': V - 1, 'embd_pdrop': 0.1, 'eos_token_id': V - 1,
        'initializer_range': 0.02, 'layer_norm_epsilon': 1e-05, 'model_type': 'gpt2',
        'n_ctx': P, 'n_embd': C, 'n_head': H, 'n_inner': None, 'n_layer': L,
        'n_positions': P, 'reorder_and_upcast_attn': False, 'resid_pdrop': 0.1,
        'scale_attn_by_inverse_layer_idx': False, 'scale_attn_weights': True,
        'summary_activation': None, 'summary_first_dropout': 0.1,
        'summary_proj_to_labels': True, 'summary_type': 'cls_index',
        'summary_use_proj': True, 'torch_dtype': 'float32',
        'transformers_version': '4.40.0', 'use_cache': True, 'vocab_size': V,
    }
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(cfg, f, indent=2)
    return nbytes


def llama_1b_attention(folder, rng):
    V = write_tokenizer(folder)
    L, H, KV, dh, C, I, P = 16, 32, 8, 64, 256, 512, 8192
    w = {'model.embed_tokens.weight': normal(rng, (V, C)),
         'model.norm.weight': np.ones(C, np.float32)}
    for l in range(L):
        p = f'model.layers.{l}.'
        w[p + 'input_layernorm.weight'] = np.ones(C, np.float32)
        w[p + 'post_attention_layernorm.weight'] = np.ones(C, np.float32)
        w[p + 'self_attn.q_proj.weight'] = normal(rng, (H * dh, C))  # [out, in]
        w[p + 'self_attn.k_proj.weight'] = normal(rng, (KV * dh, C))
        w[p + 'self_attn.v_proj.weight'] = normal(rng, (KV * dh, C))
        w[p + 'self_attn.o_proj.weight'] = normal(rng, (C, H * dh))
        w[p + 'mlp.gate_proj.weight'] = normal(rng, (I, C))
        w[p + 'mlp.up_proj.weight'] = normal(rng, (I, C))
        w[p + 'mlp.down_proj.weight'] = normal(rng, (C, I))
    nbytes = write_safetensors(os.path.join(folder, 'model.safetensors'), w)
    cfg = {
        'architectures': ['LlamaForCausalLM'], 'model_type': 'llama',
        'hidden_size': C, 'intermediate_size': I, 'num_hidden_layers': L,
        'num_attention_heads': H, 'num_key_value_heads': KV, 'head_dim': dh,
        'max_position_embeddings': P, 'vocab_size': V, 'rms_norm_eps': 1e-05,
        'rope_theta': 500000.0,
        'rope_scaling': {'rope_type': 'llama3', 'factor': 32.0, 'low_freq_factor': 1.0,
                         'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192},
        'tie_word_embeddings': True, 'hidden_act': 'silu',
        'bos_token_id': V - 1, 'eos_token_id': V - 1, 'torch_dtype': 'float32',
        'attention_bias': False, 'mlp_bias': False,
    }
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(cfg, f, indent=2)
    return nbytes


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/attnviz-mem-models'
    for name, make, seed in (('gpt2-small', gpt2_small, 33),
                             ('llama-1b-attn', llama_1b_attention, 34)):
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        nbytes = make(folder, np.random.default_rng(seed))
        print(f'{folder}: {nbytes / 2**20:.1f} MiB of float32 weights')


if __name__ == '__main__':
    main()
