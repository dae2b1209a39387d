#!/usr/bin/env python3
"""The numpy side of `make bench`, figure 1: the same float32 multi-head
attention forward as attn_forward runs for a Model (learned mode, d 64, 4
heads, no mask): Q/K/V projections, scores, scaled logits, stable softmax,
weighted sum and concat · Wo, every head's scores and weights kept (a
Model's forward keeps no separate logits and no heads' average: they are
made when shown). Timed inside Python with
time.perf_counter: batches of k forwards (a batch >= 2 ms), the median time
per forward. Prints one line like bench.c's.

usage: numpy_forward.py T [seconds]
"""
import sys
import time

import numpy as np

D, H = 64, 4


def blas_name():
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "?"
    for name in ("openblas", "blis", "mkl", "atlas", "libblas"):
        if name in maps:
            return name
    return "?"


def main():
    T = int(sys.argv[1])
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 0.4
    dk = D // H
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (T, D)).astype(np.float32)
    lim = np.float32(np.sqrt(6.0 / (D + dk)))
    # head-major h × d × dk as in AttnParams, joined once (not timed) into the
    # d × (h·dk) matrices numpy users would write
    Wq, Wk, Wv = (rng.uniform(-lim, lim, (H, D, dk)).astype(np.float32) for _ in range(3))
    Wo = rng.uniform(-1, 1, (D, D)).astype(np.float32) * np.float32(np.sqrt(6.0 / (2 * D)))
    Wq_all = np.ascontiguousarray(Wq.transpose(1, 0, 2).reshape(D, D))
    Wk_all = np.ascontiguousarray(Wk.transpose(1, 0, 2).reshape(D, D))
    Wv_all = np.ascontiguousarray(Wv.transpose(1, 0, 2).reshape(D, D))
    mult = np.float32(1.0 / np.sqrt(dk))

    def forward():
        Q = (X @ Wq_all).reshape(T, H, dk).transpose(1, 0, 2)   # h×T×dk
        K = (X @ Wk_all).reshape(T, H, dk).transpose(1, 0, 2)
        V = (X @ Wv_all).reshape(T, H, dk).transpose(1, 0, 2)
        scores = Q @ K.transpose(0, 2, 1)                       # h×T×T
        logits = scores * mult
        w = np.exp(logits - logits.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        Z = w @ V                                               # h×T×dk
        concat = Z.transpose(1, 0, 2).reshape(T, D)
        out = concat @ Wo
        return out, scores, w

    for _ in range(3):
        out, scores, w = forward()
    assert out.dtype == np.float32 and scores.dtype == np.float32 and w.dtype == np.float32
    t0 = time.perf_counter()
    forward()
    one = time.perf_counter() - t0
    k = max(1, int(np.ceil(2e-3 / one))) if one > 0 else 1000
    per = []
    start = time.perf_counter()
    while len(per) < 2000 and (len(per) < 15 or time.perf_counter() - start < budget):
        a = time.perf_counter()
        for _ in range(k):
            forward()
        per.append((time.perf_counter() - a) / k)
    med = float(np.median(per))
    flops = 8.0 * T * D * D + 4.0 * T * T * D
    print("numpy T=%d median_us=%.3f gflops=%.3f batches=%d per_batch=%d blas=%s numpy=%s"
          % (T, med * 1e6, flops / med * 1e-9, len(per), k, blas_name(), np.__version__))


if __name__ == "__main__":
    main()
