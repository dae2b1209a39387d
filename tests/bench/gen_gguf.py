#!/usr/bin/python3
"""A GGUF file of Llama-3.2-1B's shapes with random weights, for make bench
(issue 35's speed rows): 16 layers, hidden 2048, 32 query heads and 8
key-value heads of 64, intermediate 8192, a vocabulary of 128256, the
output layer tied to the embeddings, quantized by ggml's own quantizer
(llama.cpp's libggml-base from the npm registry, as
tests/fixtures/gguf_models/gguflib.py) into

  q8_0     every matrix Q8_0 (what a Q8_0 file holds);
  q4_k_m   Q4_K_M's mix as llama-quantize makes it: Q4_K, with attn_v and
           ffn_down in Q6_K on the layers use_more_bits picks and the
           tied embedding table in Q6_K.

The tokenizer is a SentencePiece-style vocabulary of placeholder pieces
(the bench feeds ids). Usage: gen_gguf.py q8_0|q4_k_m OUT.gguf"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'fixtures', 'gguf_models'))
import gguflib as gl  # noqa: E402

gw = gl.gw
L, C, H, KV, D, I, V = 16, 2048, 32, 8, 64, 8192, 128256


def use_more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def main():
    kind, out = sys.argv[1], sys.argv[2]
    gl.LIB = gl.ggml()
    rng = np.random.default_rng(35)
    w = gw.GGUFWriter()
    w.add('general.architecture', 'llama')
    w.add('general.name', 'llama-3.2-1b-shapes-' + kind)
    for key, v in (('block_count', L), ('context_length', 131072), ('embedding_length', C),
                   ('feed_forward_length', I), ('attention.head_count', H),
                   ('attention.head_count_kv', KV), ('rope.dimension_count', D),
                   ('attention.key_length', D), ('attention.value_length', D),
                   ('vocab_size', V)):
        w.add('llama.' + key, v, gw.UINT32)
    w.add('llama.rope.freq_base', 500000.0, gw.FLOAT32)
    w.add('llama.attention.layer_norm_rms_epsilon', 1e-5, gw.FLOAT32)
    pieces = ['<unk>', '<s>', '</s>'] + ['<0x%02X>' % b for b in range(256)]
    pieces += ['\u2581t%d' % i for i in range(V - len(pieces))]
    types = [2, 3, 3] + [6] * 256 + [1] * (V - 259)
    w.add('tokenizer.ggml.model', 'llama')
    w.add('tokenizer.ggml.tokens', gw.Arr(gw.STRING, pieces))
    w.add('tokenizer.ggml.scores', gw.Arr(gw.FLOAT32, [-float(i) for i in range(V)]))
    w.add('tokenizer.ggml.token_type', gw.Arr(gw.INT32, types))
    w.add('tokenizer.ggml.bos_token_id', 1, gw.UINT32)
    w.add('tokenizer.ggml.eos_token_id', 2, gw.UINT32)

    def put(name, shape, tname, scale):
        a = rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
        if len(shape) == 1:
            a += 1.0
            w.add_tensor(name, gw.F32, [shape[0]], a.astype('<f4').tobytes())
            return
        data, _ = quantize_fast(a, tname)
        w.add_tensor(name, gl.TYPES[tname], [shape[1], shape[0]], data)

    q8 = kind == 'q8_0'
    put('token_embd.weight', (V, C), 'Q8_0' if q8 else 'Q6_K', 0.02)
    put('output_norm.weight', (C,), 'F32', 0.1)
    for l in range(L):
        b = 'blk.%d.' % l
        more = use_more_bits(l, L)
        put(b + 'attn_norm.weight', (C,), 'F32', 0.1)
        put(b + 'ffn_norm.weight', (C,), 'F32', 0.1)
        for n, shape in (('attn_q', (H * D, C)), ('attn_k', (KV * D, C)),
                         ('attn_v', (KV * D, C)), ('attn_output', (C, H * D)),
                         ('ffn_gate', (I, C)), ('ffn_up', (I, C)), ('ffn_down', (C, I))):
            t = 'Q8_0' if q8 else ('Q6_K' if more and n in ('attn_v', 'ffn_down') else 'Q4_K')
            put(b + n + '.weight', shape, t, 0.02)
        print('layer %d of %d' % (l + 1, L), file=sys.stderr)
    w.write(out)


def quantize_fast(a, tname):
    """ggml's quantizer without reading the numbers back."""
    import ctypes
    t = gl.TYPES[tname]
    tr = gl.LIB.ggml_get_type_traits(t).contents
    rows, n = a.shape
    size = rows * n // tr.blck_size * tr.type_size
    dst = ctypes.create_string_buffer(size)
    got = gl.LIB.ggml_quantize_chunk(t, np.ascontiguousarray(a).ctypes.data, dst, 0, rows, n,
                                     None)
    assert got == size
    return dst.raw, None


if __name__ == '__main__':
    main()
