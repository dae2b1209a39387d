#!/usr/bin/env python3
"""The PyTorch side of `make bench`'s family rows (issue 34): each family's
modeling file's equations in eval mode written out in torch (transformers is
not installed here), float32 (PyTorch's fastest on this CPU; attnviz reads
the BF16 weights in place), under torch.inference_mode(), on random weights
of the real model's shapes made in memory (gen_family.py's shapes; the
numbers do not change the time):

  qwen3     x = embed[ids]; per layer: a = RMSNorm(x); q, k, v = a W; q, k
            RMSNorm per head (q_norm, k_norm), rotary (rotate_half); grouped
            heads; w = softmax(q kᵀ / √d, causal); x += (w v) Wo;
            x += down(silu(gate(RMSNorm x)) · up(RMSNorm x))
  gemma3    x = embed[ids] · √C; RMSNorm(1 + w) before and after attention and
            the MLP; q_norm, k_norm; rotary θ 10⁴ on sliding layers (window
            512), 10⁶ on every sixth; scores / √query_pre_attn_scalar; GeGLU
            (gelu tanh)
  gpt_neox  LayerNorm with biases; fused query_key_value per head; rotary on
            the first quarter of each head; parallel residual
            x += attn(ln1 x) + mlp(ln2 x); GELU (erf)
  bert      word + position + token-type embeddings, LayerNorm; per layer
            (post-norm): w = softmax(q kᵀ / √d) over every key (no mask);
            x = LN(x + (w v) Wo); x = LN(x + W2 gelu(W1 x)) (erf); T = 128

Timed: a full forward of T = 256 tokens (bert: 128), every layer's maps returned (as
attnviz's bench hands every row over); the median of reps after a warm-up,
in ms. One line like family_bench's.

usage: torch_families.py NAME THREADS [reps]   (NAME: gen_family.py's)
"""
import os
import sys
import time

if __name__ == "__main__" and len(sys.argv) > 2:
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ.get("BLAS_THREADS", sys.argv[2])

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_family import CONFIGS, shapes  # noqa: E402


def weights(name):
    g = torch.Generator().manual_seed(7)
    c = CONFIGS[name]
    w = {}
    for n, s in shapes(name).items():
        if len(s) == 1:
            centre = 0.0 if n.endswith('.bias') or c['model_type'] == 'gemma3_text' else 1.0
            w[n] = torch.randn(*s, generator=g) * 0.02 + centre
        else:
            w[n] = torch.randn(*s, generator=g) * 0.02
    return w


def rms(x, w, eps, one_plus=False):
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return x * (1.0 + w if one_plus else w)


def rotary(T, dims, theta):
    inv = 1.0 / theta ** (torch.arange(0, dims, 2, dtype=torch.float64) / dims)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    return emb.cos().float(), emb.sin().float()


def rot(x, cos, sin):
    d = cos.shape[-1]
    r, rest = x[..., :d], x[..., d:]
    half = torch.cat((-r[..., d // 2:], r[..., :d // 2]), dim=-1)
    return torch.cat((r * cos + half * sin, rest), dim=-1)


def causal(T, window=0):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    keep = j <= i
    if window:
        keep &= j > i - window
    return torch.where(keep, 0.0, float('-inf'))


def attend(q, k, v, scale, mask, H, KV):
    k = k.repeat_interleave(H // KV, dim=0)
    v = v.repeat_interleave(H // KV, dim=0)
    att = torch.softmax(q @ k.transpose(1, 2) * scale + mask, dim=-1)
    return att, (att @ v)


def forward_llama_like(name, w, ids):
    c = CONFIGS[name]
    T, C, H, KV, D = ids.shape[0], c['hidden_size'], c['num_attention_heads'], \
        c['num_key_value_heads'], c['head_dim']
    eps, gemma = c['rms_norm_eps'], c['model_type'] == 'gemma3_text'
    x = w['model.embed_tokens.weight'][ids]
    if gemma:
        x = x * torch.tensor(C ** 0.5, dtype=torch.float32)
        ropes = {0: rotary(T, D, c['rope_local_base_freq']), 1: rotary(T, D, c['rope_theta'])}
        masks = {0: causal(T, c['sliding_window']), 1: causal(T)}
        scale = c['query_pre_attn_scalar'] ** -0.5
    else:
        ropes = {1: rotary(T, D, c['rope_theta'])}
        masks = {1: causal(T)}
        scale = D ** -0.5
    maps = []
    for l in range(c['num_hidden_layers']):
        p = 'model.layers.%d.' % l
        glob = 1 if not gemma or (l + 1) % c['sliding_window_pattern'] == 0 else 0
        cos, sin = ropes[glob]
        a = rms(x, w[p + 'input_layernorm.weight'], eps, gemma)
        q = F.linear(a, w[p + 'self_attn.q_proj.weight']).view(T, H, D)
        k = F.linear(a, w[p + 'self_attn.k_proj.weight']).view(T, KV, D)
        v = F.linear(a, w[p + 'self_attn.v_proj.weight']).view(T, KV, D).transpose(0, 1)
        q = rot(rms(q, w[p + 'self_attn.q_norm.weight'], eps, gemma).transpose(0, 1), cos, sin)
        k = rot(rms(k, w[p + 'self_attn.k_norm.weight'], eps, gemma).transpose(0, 1), cos, sin)
        att, z = attend(q, k, v, scale, masks[glob], H, KV)
        maps.append(att)
        o = F.linear(z.transpose(0, 1).reshape(T, H * D), w[p + 'self_attn.o_proj.weight'])
        if gemma:
            x = x + rms(o, w[p + 'post_attention_layernorm.weight'], eps, True)
            a = rms(x, w[p + 'pre_feedforward_layernorm.weight'], eps, True)
            g = F.gelu(F.linear(a, w[p + 'mlp.gate_proj.weight']), approximate='tanh')
            m = F.linear(g * F.linear(a, w[p + 'mlp.up_proj.weight']), w[p + 'mlp.down_proj.weight'])
            x = x + rms(m, w[p + 'post_feedforward_layernorm.weight'], eps, True)
        else:
            x = x + o
            a = rms(x, w[p + 'post_attention_layernorm.weight'], eps)
            g = F.silu(F.linear(a, w[p + 'mlp.gate_proj.weight']))
            x = x + F.linear(g * F.linear(a, w[p + 'mlp.up_proj.weight']), w[p + 'mlp.down_proj.weight'])
    return rms(x, w['model.norm.weight'], eps, gemma), maps


def forward_neox(name, w, ids):
    c = CONFIGS[name]
    T, C, H, L = ids.shape[0], c['hidden_size'], c['num_attention_heads'], c['num_hidden_layers']
    D, eps = C // H, c['layer_norm_eps']
    cos, sin = rotary(T, int(D * c['rotary_pct']), c['rotary_emb_base'])
    mask = causal(T)
    x = w['gpt_neox.embed_in.weight'][ids]
    maps = []
    for l in range(L):
        p = 'gpt_neox.layers.%d.' % l
        a = F.layer_norm(x, (C,), w[p + 'input_layernorm.weight'], w[p + 'input_layernorm.bias'], eps)
        qkv = F.linear(a, w[p + 'attention.query_key_value.weight'],
                       w[p + 'attention.query_key_value.bias']).view(T, H, 3 * D).transpose(0, 1)
        q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
        att, z = attend(rot(q, cos, sin), rot(k, cos, sin), v, D ** -0.5, mask, H, H)
        maps.append(att)
        o = F.linear(z.transpose(0, 1).reshape(T, C), w[p + 'attention.dense.weight'],
                     w[p + 'attention.dense.bias'])
        b = F.layer_norm(x, (C,), w[p + 'post_attention_layernorm.weight'],
                         w[p + 'post_attention_layernorm.bias'], eps)
        h = F.gelu(F.linear(b, w[p + 'mlp.dense_h_to_4h.weight'], w[p + 'mlp.dense_h_to_4h.bias']))
        x = x + o + F.linear(h, w[p + 'mlp.dense_4h_to_h.weight'], w[p + 'mlp.dense_4h_to_h.bias'])
    return F.layer_norm(x, (C,), w['gpt_neox.final_layer_norm.weight'],
                        w['gpt_neox.final_layer_norm.bias'], eps), maps


def forward_bert(name, w, ids):
    c = CONFIGS[name]
    T, C, H, L = ids.shape[0], c['hidden_size'], c['num_attention_heads'], c['num_hidden_layers']
    D, eps = C // H, c['layer_norm_eps']
    e = 'bert.embeddings.'

    def ln(x, n):
        return F.layer_norm(x, (C,), w[n + '.weight'], w[n + '.bias'], eps)

    def lin(x, n):
        return F.linear(x, w[n + '.weight'], w[n + '.bias'])
    x = w[e + 'word_embeddings.weight'][ids] + w[e + 'position_embeddings.weight'][:T] \
        + w[e + 'token_type_embeddings.weight'][0]
    x = ln(x, e + 'LayerNorm')
    maps = []
    for l in range(L):
        p = 'bert.encoder.layer.%d.' % l
        q, k, v = (lin(x, p + 'attention.self.' + n).view(T, H, D).transpose(0, 1)
                   for n in ('query', 'key', 'value'))
        att, z = attend(q, k, v, D ** -0.5, 0.0, H, H)
        maps.append(att)
        x = ln(x + lin(z.transpose(0, 1).reshape(T, C), p + 'attention.output.dense'),
               p + 'attention.output.LayerNorm')
        h = F.gelu(lin(x, p + 'intermediate.dense'))
        x = ln(x + lin(h, p + 'output.dense'), p + 'output.LayerNorm')
    return x, maps


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in CONFIGS:
        sys.exit('usage: torch_families.py %s THREADS [reps]' % '|'.join(CONFIGS))
    name, threads = sys.argv[1], int(sys.argv[2])
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    torch.set_num_threads(threads)
    w = weights(name)
    V = CONFIGS[name]['vocab_size']
    mt = CONFIGS[name]['model_type']
    T = 128 if mt == 'bert' else 256
    ids = torch.tensor([(7919 * i + 13) % V for i in range(T)])
    fwd = {'gpt_neox': forward_neox, 'bert': forward_bert}.get(mt, forward_llama_like)
    with torch.inference_mode():
        fwd(name, w, ids)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fwd(name, w, ids)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print("familytorch model=%s threads=%d torch=%s fwd%d_ms=%.3f" % (
        name, threads, torch.__version__, T, times[len(times) // 2]))


if __name__ == "__main__":
    main()
