#!/usr/bin/env python3
"""GPT-2 small's shapes with random weights, written as a Hugging Face model
folder for `make bench`'s gpt2_open_ms and gpt2_rss_T1024_MB (no real model
is downloaded): DIR/config.json (openai-community/gpt2's) and
DIR/model.safetensors laid out as that model's file is: float32 tensors
named without the `transformer.` prefix (wte, wpe, h.N.*, ln_f), no
lm_head.weight (tied), each block's attn.bias buffer (1 × 1 × 1024 × 1024,
the causal mask), metadata {"format": "pt"}, the header padded so the data
starts 8-byte aligned: 548 MB. Weights: normal, std 0.02 (layer norms' 1 ±
0.02), as GPT-2's initialisation; numpy only. Written to DIR.tmp, then
renamed, so a half-written folder is never taken for a model.

usage: gen_gpt2.py DIR [small|medium|large|xl]
(the other sizes' shapes, to check by hand that they open and compute: 1.4,
3.1 and 6.2 GB)
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

SIZES = {"small": (12, 12, 768), "medium": (24, 16, 1024), "large": (36, 20, 1280), "xl": (48, 25, 1600)}
L, H, C = SIZES[sys.argv[2] if len(sys.argv) > 2 else "small"]
I, V, P = 4 * C, 50257, 1024

CONFIG = {
    "activation_function": "gelu_new",
    "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1,
    "bos_token_id": 50256,
    "embd_pdrop": 0.1,
    "eos_token_id": 50256,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05,
    "model_type": "gpt2",
    "n_ctx": P,
    "n_embd": C,
    "n_head": H,
    "n_layer": L,
    "n_positions": P,
    "resid_pdrop": 0.1,
    "summary_activation": None,
    "summary_first_dropout": 0.1,
    "summary_proj_to_labels": True,
    "summary_type": "cls_index",
    "summary_use_proj": True,
    "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
    "vocab_size": V,
}


def shapes():
    """name → (shape, kind): kind "w" a weight, "b" a bias, "ln" a layer
    norm's gain, "mask" the causal buffer."""
    s = {"wte.weight": ((V, C), "w"), "wpe.weight": ((P, C), "w"),
         "ln_f.weight": ((C,), "ln"), "ln_f.bias": ((C,), "b")}
    for l in range(L):
        h = "h.%d." % l
        s.update({
            h + "ln_1.weight": ((C,), "ln"), h + "ln_1.bias": ((C,), "b"),
            h + "attn.bias": ((1, 1, P, P), "mask"),
            h + "attn.c_attn.weight": ((C, 3 * C), "w"), h + "attn.c_attn.bias": ((3 * C,), "b"),
            h + "attn.c_proj.weight": ((C, C), "w"), h + "attn.c_proj.bias": ((C,), "b"),
            h + "ln_2.weight": ((C,), "ln"), h + "ln_2.bias": ((C,), "b"),
            h + "mlp.c_fc.weight": ((C, I), "w"), h + "mlp.c_fc.bias": ((I,), "b"),
            h + "mlp.c_proj.weight": ((I, C), "w"), h + "mlp.c_proj.bias": ((C,), "b"),
        })
    return s


def main():
    out = sys.argv[1]
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with open(os.path.join(tmp, "config.json"), "w", encoding="utf-8") as f:
        json.dump(CONFIG, f, indent=2)
    s = shapes()
    names = sorted(s)
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for n in names:
        size = 4 * int(np.prod(s[n][0]))
        header[n] = {"dtype": "F32", "shape": list(s[n][0]), "data_offsets": [off, off + size]}
        off += size
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * (-(8 + len(hb)) % 8)
    rng = np.random.default_rng(25)
    mask = np.tril(np.ones((P, P), dtype=np.float32)).reshape(1, 1, P, P)
    with open(os.path.join(tmp, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for n in names:
            shape, kind = s[n]
            if kind == "mask":
                a = mask
            else:
                a = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
                if kind == "ln":
                    a += np.float32(1.0)
            f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
