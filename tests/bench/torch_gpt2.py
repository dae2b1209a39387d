#!/usr/bin/env python3
"""The PyTorch side of `make bench`'s GPT-2 rows (issue 25): GPT-2 small's
equations written out in torch (transformers is not installed here; these
are modeling_gpt2's in eval mode, with output_attentions=True and
use_cache=True), on random weights of GPT-2 small's shapes made in memory
(std 0.02; the numbers do not change the time), float32, under
torch.inference_mode():

    x = wte[ids] + wpe[pos]
    per block: a = LN1(x); q | k | v = a @ c_attn + b; per head
               w = softmax(q kᵀ / √d_head, causal)   (kept: the attention maps)
               x = x + (w v) @ c_proj + b
               x = x + gelu_tanh(LN2(x) @ c_fc + b) @ mlp.c_proj + b
    ln_f(x)

Timed: a full forward of T = 64 and of T = 256 tokens (every layer's maps
returned, as gpt2_forward keeps them), and one cached step at T = 64: the
64th token given the first 63's keys and values (HF's past_key_values,
concatenated per layer as it does), its maps' new rows returned — what
gpt2_bench's keystroke computes. Each figure is the median of reps runs after
a warm-up, in ms. Prints one line like gpt2_bench's.

With --check, the equations are checked instead: the model folder DIR's
weights (gen_gpt2.py's model.safetensors, read with numpy) through forward()
on the bench's ids, its maps against gpt2_bench's (FILE: L × H × T × T
float32, from `gpt2_bench maps DIR T FILE`); prints the largest difference.

usage: torch_gpt2.py THREADS [reps]
       torch_gpt2.py --check DIR T FILE
"""
import math
import os
import sys
import time

# the thread count of the BLAS torch calls (Debian's torch: the system's
# libblas.so.3, OpenBLAS once make bench installed it), read when it loads:
# THREADS, or BLAS_THREADS in the environment
if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] != "--check":
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ.get("BLAS_THREADS", sys.argv[1])

import numpy as np
import torch
import torch.nn.functional as F

L, H, C, I, V, P = 12, 12, 768, 3072, 50257, 1024
D = C // H
EPS = 1e-5


def weights():
    g = torch.Generator().manual_seed(7)

    def r(*shape, centre=0.0, std=0.02):
        return torch.randn(*shape, generator=g) * std + centre

    blocks = []
    for _ in range(L):
        blocks.append(dict(
            ln1_w=r(C, centre=1.0), ln1_b=r(C),
            attn_w=r(C, 3 * C), attn_b=r(3 * C),
            proj_w=r(C, C), proj_b=r(C),
            ln2_w=r(C, centre=1.0), ln2_b=r(C),
            fc_w=r(C, I), fc_b=r(I),
            mproj_w=r(I, C), mproj_b=r(C)))
    return dict(wte=r(V, C), wpe=r(P, C, std=0.01), blocks=blocks,
                lnf_w=r(C, centre=1.0), lnf_b=r(C))


def forward(w, ids, past=None):
    """ids: the new tokens (1-d long tensor), past: per layer (k, v) of the
    tokens before them ([H, n, D] each) or None. Returns ln_f(x), every
    layer's maps [H, T_new, T_all] and the new (k, v)."""
    n0 = 0 if past is None else past[0][0].shape[1]
    T = ids.shape[0]
    x = w["wte"][ids] + w["wpe"][n0:n0 + T]
    maps, present = [], []
    for l, b in enumerate(w["blocks"]):
        a = F.layer_norm(x, (C,), b["ln1_w"], b["ln1_b"], EPS)
        qkv = torch.addmm(b["attn_b"], a, b["attn_w"])
        q, k, v = qkv.split(C, dim=1)
        q = q.view(T, H, D).transpose(0, 1)
        k = k.view(T, H, D).transpose(0, 1)
        v = v.view(T, H, D).transpose(0, 1)
        if past is not None:
            k = torch.cat((past[l][0], k), dim=1)
            v = torch.cat((past[l][1], v), dim=1)
        present.append((k, v))
        n = k.shape[1]
        s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(D)
        # causal: query i (position n0 + i) sees keys 0 … n0 + i, as HF's
        # torch.where(causal_mask, s, finfo.min)
        mask = torch.ones(T, n, dtype=torch.bool).tril(n0)
        s = torch.where(mask, s, torch.tensor(torch.finfo(s.dtype).min))
        p = torch.softmax(s, dim=-1)
        maps.append(p)
        z = torch.matmul(p, v).transpose(0, 1).reshape(T, C)
        x = x + torch.addmm(b["proj_b"], z, b["proj_w"])
        m = F.layer_norm(x, (C,), b["ln2_w"], b["ln2_b"], EPS)
        h = F.gelu(torch.addmm(b["fc_b"], m, b["fc_w"]), approximate="tanh")
        x = x + torch.addmm(b["mproj_b"], h, b["mproj_w"])
    return F.layer_norm(x, (C,), w["lnf_w"], w["lnf_b"], EPS), maps, present


def file_weights(d):
    """The float32 tensors of d/model.safetensors, named as gen_gpt2.py
    writes them, in forward()'s dict."""
    import json
    import struct
    with open(os.path.join(d, "model.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
    data = np.memmap(os.path.join(d, "model.safetensors"), dtype=np.uint8, mode="r", offset=8 + n)

    def t(name):
        e = head[name]
        a, b = e["data_offsets"]
        assert e["dtype"] == "F32"
        return torch.from_numpy(np.frombuffer(data[a:b], dtype="<f4").reshape(e["shape"]).copy())

    blocks = []
    for l in range(L):
        h = "h.%d." % l
        blocks.append(dict(
            ln1_w=t(h + "ln_1.weight"), ln1_b=t(h + "ln_1.bias"),
            attn_w=t(h + "attn.c_attn.weight"), attn_b=t(h + "attn.c_attn.bias"),
            proj_w=t(h + "attn.c_proj.weight"), proj_b=t(h + "attn.c_proj.bias"),
            ln2_w=t(h + "ln_2.weight"), ln2_b=t(h + "ln_2.bias"),
            fc_w=t(h + "mlp.c_fc.weight"), fc_b=t(h + "mlp.c_fc.bias"),
            mproj_w=t(h + "mlp.c_proj.weight"), mproj_b=t(h + "mlp.c_proj.bias")))
    return dict(wte=t("wte.weight"), wpe=t("wpe.weight"), blocks=blocks,
                lnf_w=t("ln_f.weight"), lnf_b=t("ln_f.bias"))


def check(d, T, path):
    w = file_weights(d)
    ids = torch.tensor([(i * 7919 + 13) % V for i in range(T)], dtype=torch.long)
    with torch.inference_mode():
        _, maps, _ = forward(w, ids)
    ours = torch.stack(maps).numpy()
    theirs = np.fromfile(path, dtype="<f4").reshape(L, H, T, T)
    diff = float(np.abs(ours - theirs).max())
    # how far the maps are from uniform rows: a difference far below this
    # means the same maps, not two near-uniform ones
    spread = float(np.abs(ours - np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]).max())
    print("torchgpt2check T=%d max_diff=%.3g max_from_uniform=%.3g" % (T, diff, spread))
    return 0 if diff < 1e-5 else 1


def timed(fn, reps):
    fn()  # warm-up
    t = []
    for _ in range(reps):
        a = time.perf_counter()
        fn()
        t.append((time.perf_counter() - a) * 1e3)
    return float(np.median(t))


def main():
    if sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    threads = int(sys.argv[1])
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.set_num_threads(threads)
    w = weights()
    ids = torch.tensor([(i * 7919 + 13) % V for i in range(P)], dtype=torch.long)
    with torch.inference_mode():
        out, maps, _ = forward(w, ids[:64])
        assert len(maps) == L and tuple(maps[0].shape) == (H, 64, 64) and out.dtype == torch.float32
        f64 = timed(lambda: forward(w, ids[:64]), reps)
        f256 = timed(lambda: forward(w, ids[:256]), reps)
        _, _, past = forward(w, ids[:63])
        alt = [ids[63:64], (ids[63:64] + 1) % V]
        k = [0]

        def step():
            k[0] += 1
            _, m, _ = forward(w, alt[k[0] % 2], past)
            assert tuple(m[-1].shape) == (H, 1, 64)

        s64 = timed(step, 3 * reps)
    print("torchgpt2 threads=%d blas_threads=%s fwd64_ms=%.3f fwd256_ms=%.3f step64_ms=%.3f torch=%s reps=%d"
          % (torch.get_num_threads(), os.environ.get("OPENBLAS_NUM_THREADS", "?"), f64, f256, s64, torch.__version__, reps))


if __name__ == "__main__":
    main()
