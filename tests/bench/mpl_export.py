#!/usr/bin/env python3
"""The matplotlib side of `make bench`, figure 4: draw the attention matrix
that `attnviz --print csv` printed (read from a file made beforehand) the way
`attnviz --export x.png` does: title, key labels on top (45°), query labels on
the left, viridis from 0, the values in the cells when they fit, a colour bar,
saved as a PNG of the given pixel size. The whole process is timed by
run.sh, interpreter start included.

usage: mpl_export.py MATRIX.csv OUT.png WIDTH_PX HEIGHT_PX
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    src, out, wpx, hpx = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(src, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    keys = rows[0][1:]
    queries = [r[0] for r in rows[1:]]
    W = np.array([[float(v) for v in r[1:]] for r in rows[1:]], dtype=np.float32)
    T = len(keys)

    dpi = 100
    fig, ax = plt.subplots(figsize=(wpx / dpi, hpx / dpi), dpi=dpi)
    im = ax.imshow(W, cmap="viridis", vmin=0.0, vmax=float(W.max()), interpolation="nearest")
    ax.xaxis.tick_top()
    step = max(1, T // 64)  # label every token while they are legible
    ax.set_xticks(range(0, T, step))
    ax.set_xticklabels(keys[::step], rotation=45, ha="left")
    ax.set_yticks(range(0, T, step))
    ax.set_yticklabels(queries[::step])
    if T <= 16:
        for i in range(T):
            for j in range(T):
                v = W[i, j]
                ax.text(j, i, "%.2f" % v, ha="center", va="center",
                        color="black" if v > 0.6 * W.max() else "white")
    fig.colorbar(im, ax=ax)
    title = " ".join(keys) if T <= 12 else " ".join(keys[:12]) + " …"
    fig.suptitle(title + "\nlearned · head 1/1 · weights · scaled 1/√dk · no mask · τ = 1.00",
                 x=0.05, ha="left")
    fig.savefig(out, dpi=dpi)


if __name__ == "__main__":
    main()
