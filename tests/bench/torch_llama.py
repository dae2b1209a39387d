#!/usr/bin/env python3
"""The PyTorch side of `make bench`'s llama_forward_T256_vs_torch (issue 27):
modeling_llama's equations in eval mode written out in torch (transformers is
not installed here), float32, under torch.inference_mode(), on random weights
of SmolLM2-135M's shapes made in memory (the numbers do not change the time):

    x = embed[ids]
    per layer: a = RMSNorm(x); q, k, v = a Wqᵀ, a Wkᵀ, a Wvᵀ; rotary (rotate_half)
               on q and k; head h uses key-value head h // (H // KV) (repeat_kv);
               w = softmax(q kᵀ / √d, causal)   (kept: the attention maps)
               x = x + (w v) Woᵀ
               x = x + down(silu(gate(RMSNorm(x))) · up(RMSNorm(x)))
    RMSNorm(x)

the same as make_llama_fixtures.py's float64 reference (which test_llama_io
checks attnviz against) and llama_bench's forward. Timed: a full forward of
T = 256 tokens, every layer's maps returned; the median of reps after a
warm-up, in ms. Prints one line like llama_bench's.

usage: torch_llama.py THREADS [reps]
"""
import os
import sys
import time

if __name__ == "__main__" and len(sys.argv) > 1:
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ.get("BLAS_THREADS", sys.argv[1])

import torch
import torch.nn.functional as F

L, H, KV, D, C, I, V = 30, 9, 3, 64, 576, 1536, 49152
EPS, THETA = 1e-5, 100000.0


def weights():
    g = torch.Generator().manual_seed(7)

    def r(*shape, centre=0.0, std=0.03):
        return torch.randn(*shape, generator=g) * std + centre

    layers = [dict(n1=r(C, centre=1.0), n2=r(C, centre=1.0), q=r(H * D, C), k=r(KV * D, C),
                   v=r(KV * D, C), o=r(C, H * D), gate=r(I, C), up=r(I, C), down=r(C, I))
              for _ in range(L)]
    return dict(embed=r(V, C), layers=layers, norm=r(C, centre=1.0))


def rmsnorm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def rotate_half(x):
    return torch.cat((-x[..., D // 2:], x[..., :D // 2]), dim=-1)


def forward(w, ids):
    T = ids.shape[0]
    inv = 1.0 / THETA ** (torch.arange(0, D, 2, dtype=torch.float64) / D)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos().float(), emb.sin().float()
    mask = torch.full((T, T), float("-inf")).triu(1)
    x = w["embed"][ids]
    maps = []
    for b in w["layers"]:
        a = rmsnorm(x, b["n1"])
        q = F.linear(a, b["q"]).view(T, H, D).transpose(0, 1)
        k = F.linear(a, b["k"]).view(T, KV, D).transpose(0, 1)
        v = F.linear(a, b["v"]).view(T, KV, D).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // KV, dim=0)
        v = v.repeat_interleave(H // KV, dim=0)
        att = torch.softmax(q @ k.transpose(1, 2) / D ** 0.5 + mask, dim=-1)
        maps.append(att)
        x = x + F.linear((att @ v).transpose(0, 1).reshape(T, H * D), b["o"])
        a = rmsnorm(x, b["n2"])
        x = x + F.linear(F.silu(F.linear(a, b["gate"])) * F.linear(a, b["up"]), b["down"])
    return rmsnorm(x, w["norm"]), maps


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.set_num_threads(threads)
    w = weights()
    ids = torch.tensor([(7919 * i + 13) % V for i in range(256)])
    with torch.inference_mode():
        forward(w, ids)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            forward(w, ids)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print("llamatorch threads=%d torch=%s fwd256_ms=%.3f" % (threads, torch.__version__,
                                                              times[len(times) // 2]))


if __name__ == "__main__":
    main()
