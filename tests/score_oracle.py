#!/usr/bin/python3
"""Issue 14's numbers against numpy in double precision: for each golden
case of tests/golden/cases.txt that names --keys or --score (and a few
self-attention ones for contrast), run `attnviz ARGS --print json` and
recompute everything from the embedding file: X and X_keys (each sentence's
own positional encoding from position 0), the weights and v/vb (identity
and 1/sqrt(n), or Xavier from the seed: Wq Wk Wv per head, Wo, then v per
head, then vb), then Q K V, the chosen score function (dot q.k; cosine
q.k/(|q||k|), 0 for a zero norm; additive v.tanh(q + k), basic mode
q = k = x with vb), the logits (dot: s/sqrt(dk)/tau when scaled; others
/tau), the mask (self-attention only), softmax, Z and the output. Prints
one line a case and "score oracle: N passed, M failed"; exits 1 on a
failure. usage: score_oracle.py BIN (from the repository root)."""
import json
import math
import shlex
import subprocess
import sys

import numpy as np

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/attnviz"
M64 = (1 << 64) - 1


def splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def oov_vector(word, d):
    h = 14695981039346656037
    for b in word.encode("utf-8"):
        h = ((h ^ b) * 1099511628211) & M64
    out = []
    for _ in range(d):
        h, z = splitmix(h)
        out.append((z >> 40) / 16777216.0 - 0.5)
    return np.array(out, dtype=np.float32)


def load_table(path):
    table = {}
    for line in open(path, encoding="utf-8"):
        parts = line.split()
        if not parts or line.lstrip().startswith("#"):
            continue
        if parts[0] not in table:
            table[parts[0]] = np.array([float(x) for x in parts[1:]], dtype=np.float32)
    return table


TABLE = load_table("assets/embeddings.txt")
D = len(next(iter(TABLE.values())))


def embed(tokens, posenc):
    """E (+ PE from position 0), in double"""
    E = np.array([TABLE[t] if t in TABLE else oov_vector(t, D) for t in tokens], dtype=np.float64)
    if posenc:
        for p in range(len(tokens)):
            for k in range(D):
                a = p / (10000.0 ** ((k - k % 2) / D))
                E[p, k] += math.sin(a) if k % 2 == 0 else math.cos(a)
    return E


def weights(h, seed):
    dk = D // h
    if seed is None:
        I = np.eye(D)
        sl = [I[:, k * dk:(k + 1) * dk] for k in range(h)]
        return sl, sl, sl, I, np.full((h, dk), 1 / math.sqrt(dk)), np.full(D, 1 / math.sqrt(D))
    st = seed

    def xavier(rows, cols):
        nonlocal st
        lim = math.sqrt(6.0 / (rows + cols))
        out = np.empty(rows * cols)
        for i in range(rows * cols):
            st, z = splitmix(st)
            out[i] = (2.0 * ((z >> 40) / 16777216.0) - 1.0) * lim
        return out.reshape(rows, cols)
    Wq, Wk, Wv = [], [], []
    for _ in range(h):
        Wq.append(xavier(D, dk))
        Wk.append(xavier(D, dk))
        Wv.append(xavier(D, dk))
    Wo = xavier(D, D)
    v = np.array([xavier(dk, 1)[:, 0] for _ in range(h)])
    vb = xavier(D, 1)[:, 0]
    return Wq, Wk, Wv, Wo, v, vb


def scores(fn, Q, K, v):
    if fn == "dot":
        return Q @ K.T
    if fn == "cosine":
        nq, nk = np.linalg.norm(Q, axis=1), np.linalg.norm(K, axis=1)
        den = np.outer(nq, nk)
        return np.where(den > 0, (Q @ K.T) / np.where(den > 0, den, 1), 0.0)
    return np.array([[np.sum(v * np.tanh(q + k)) for k in K] for q in Q])


def check(args):
    """the errors of one command line's --print json"""
    argv = shlex.split(args)
    out = subprocess.run([BIN] + argv + ["--print", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        return ["exit %d: %s" % (out.returncode, out.stderr[:200])]
    doc = json.loads(out.stdout)
    errs = []

    def close(name, got, want, tol=2e-5):
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            errs.append("%s: shape %s, want %s" % (name, got.shape, want.shape))
            return
        e = np.abs(got - want) / np.maximum(1.0, np.abs(want))
        if e.size and not float(e.max()) < tol:
            errs.append("%s: max error %g" % (name, float(e.max())))

    def opt(name, default=None):
        return argv[argv.index(name) + 1] if name in argv else default
    basic = opt("--mode") == "basic"
    h = 1 if basic else int(opt("--heads", "1"))
    seed = int(opt("--seed")) if "--seed" in argv else None
    fn = opt("--score", "dot")
    tau = float(opt("-t", "1"))
    scale, posenc = "--no-scale" not in argv, "--posenc" in argv
    cross = "--keys" in argv
    causal = "--causal" in argv and not cross
    dk = D // h
    c = doc["config"]
    if c["score"] != fn or c["causal"] != causal or ("key_tokens" in doc) != cross:
        errs.append("config: score %r causal %r, key_tokens %r" % (c["score"], c["causal"], "key_tokens" in doc))
    X = embed(doc["tokens"], posenc)
    close("X", doc["X"], X, 1e-6)
    Xk = X
    if cross:
        Xk = embed(doc["key_tokens"], posenc)
        close("X_keys", doc["X_keys"], Xk, 1e-6)
    Tq, Tk = len(X), len(Xk)
    Wq, Wk, Wv, Wo, v, vb = weights(h if not basic else 1, seed)
    if basic and seed is not None:  # basic mode's vb comes from the model's own heads
        vb = weights(int(opt("--heads", "1")), seed)[5]
    concat = np.zeros((Tq, D))
    mult = ((1 / math.sqrt(dk)) if (scale and fn == "dot") else 1.0) / tau
    for k, hd in enumerate(doc["heads"]):
        if basic:
            Q, K, V, va = X, Xk, Xk, vb
        else:
            Q, K, V, va = X @ Wq[k], Xk @ Wk[k], Xk @ Wv[k], v[k]
        close("head %d v" % k, hd["v"], va, 1e-6)
        S = scores(fn, Q, K, va)
        L = S * mult
        if causal:
            L = np.where(np.tri(Tq, Tk, dtype=bool), L, -np.inf)
        W = np.exp(L - L.max(axis=1, keepdims=True))
        W = W / W.sum(axis=1, keepdims=True)
        Z = W @ V
        concat[:, k * dk:(k + 1) * dk] = Z
        for name, got, want in (("Q", hd["Q"], Q), ("K", hd["K"], K), ("V", hd["V"], V),
                                ("scores", hd["scores"], S), ("weights", hd["weights"], W),
                                ("Z", hd["Z"], Z)):
            close("head %d %s" % (k, name), got, want)
    close("output", doc["output"], concat if basic else concat @ Wo)
    return errs


def main():
    passed = failed = 0
    for line in open("tests/golden/cases.txt", encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        name, args = line.split(None, 1)
        if "--keys" not in args and "--score" not in args and name not in ("default", "posenc", "causal"):
            continue
        if "-f " in args:
            continue
        errs = check(args.strip())
        if errs:
            failed += 1
            print("FAIL - %s: %s" % (name, "; ".join(errs[:4])))
        else:
            passed += 1
            print("ok   - %s matches numpy (double)" % name)
    print("score oracle: %d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


sys.exit(main())
