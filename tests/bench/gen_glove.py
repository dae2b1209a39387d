#!/usr/bin/env python3
"""Synthetic embedding files for `make bench` (deterministic, seeded).

  gen_glove.py glove OUT N D        GloVe text: N unique words, D numbers each
                                    (like glove.6B.50d: up to 5 decimals)
  gen_glove.py words OUT N D        a small table with N words (d = D)
  gen_glove.py sentence TABLE T     T words of TABLE joined by spaces, to stdout

The file is written to OUT.tmp and renamed, so an interrupted run leaves no
half file for the cache check in run.sh.
"""
import os
import sys

import numpy as np

LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def unique_words(rng, n):
    """n distinct lower-case words of 2-12 letters, GloVe-like lengths."""
    lengths = np.clip(rng.poisson(6.5, n), 2, 12)
    seen = set()
    words = []
    codes = rng.integers(0, 26, (n, 12))
    for i in range(n):
        w = LETTERS[codes[i, : lengths[i]]].tobytes().decode()
        if w in seen:
            w = "%s%d" % (w, i)
        seen.add(w)
        words.append(w)
    return words


def write_table(out, n, d, seed):
    rng = np.random.default_rng(seed)
    words = unique_words(rng, n)
    tmp = out + ".tmp"
    fmt = " ".join(["%.5f"] * d)
    block = 20000
    with open(tmp, "w", encoding="utf-8") as f:
        for s in range(0, n, block):
            vals = rng.normal(0.0, 0.45, (min(block, n - s), d)).round(5)
            lines = ["%s %s\n" % (words[s + i], fmt % tuple(row)) for i, row in enumerate(vals.tolist())]
            f.write("".join(lines))
    os.replace(tmp, out)


def sentence(table, T):
    words = []
    with open(table, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            w = line.split(" ", 1)[0]
            if w and all(c.isalnum() or c in "'-" for c in w):  # one token each
                words.append(w)
    rng = np.random.default_rng(T)
    idx = rng.integers(0, len(words), T)
    print(" ".join(words[i] for i in idx))


def main():
    kind = sys.argv[1]
    if kind in ("glove", "words"):
        write_table(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), 2024 if kind == "glove" else 64)
    elif kind == "sentence":
        sentence(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: gen_glove.py glove|words OUT N D | sentence TABLE T")


if __name__ == "__main__":
    main()
