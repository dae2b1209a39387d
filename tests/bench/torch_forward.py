#!/usr/bin/env python3
"""The PyTorch side of `make bench` (issue 17): the peer a BertViz user runs.
torch.nn.MultiheadAttention(d 64, 4 heads, bias=False) in eval mode under
torch.no_grad(), need_weights=True and average_attn_weights=False (attnviz
keeps every head's weights, so the peer must too), two threads, float32,
self-attention on one sequence of T tokens. Timed inside Python as
numpy_forward.py: batches of k forwards (a batch >= 2 ms), the median time
per forward. Prints one line like bench.c's. run.sh runs it with
OMP_WAIT_POLICY=ACTIVE (the peer's best: its threads spin between parallel
regions rather than sleep).

usage: torch_forward.py T [seconds]
"""
import sys
import time

import numpy as np
import torch

D, H = 64, 4


def main():
    T = int(sys.argv[1])
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 0.4
    torch.set_num_threads(2)
    torch.manual_seed(7)
    mha = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True).eval()
    X = torch.rand(1, T, D) * 2 - 1
    # the same numbers as a second tensor: torch 1.13's "fast path" for
    # query is key is value fails with bias=False (qkv_bias None), so the
    # keys and values are an equal copy and the regular path runs
    Xkv = X.clone()

    def forward():
        with torch.no_grad():
            return mha(X, Xkv, Xkv, need_weights=True, average_attn_weights=False)

    for _ in range(3):
        out, w = forward()
    assert tuple(w.shape) == (1, H, T, T) and out.dtype == torch.float32
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
    print("torch T=%d median_us=%.3f gflops=%.3f batches=%d per_batch=%d torch=%s threads=%d"
          % (T, med * 1e6, flops / med * 1e-9, len(per), k, torch.__version__, torch.get_num_threads()))


if __name__ == "__main__":
    main()
