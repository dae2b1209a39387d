#!/usr/bin/python3
"""Check assets/embeddings.txt and sentences/*.txt for attnviz.

Run:  /usr/bin/python3 tests/check_embeddings.py      (needs numpy)
Exits 0 when every check passes, 1 otherwise.

Basic self-attention as attnviz shows it: Q = K = V = X (the embeddings of
the sentence's tokens), weights = row-wise softmax(X X^T / sqrt(d)).
The checks make sure the hand-made vectors give the classroom stories their
intended pictures (train -> station, bank -> river / money, it -> animal, ...).

Basic cross-attention (sentences/translation.txt, lines "query ||| keys"):
Q = X of the first sentence, K = V = X of the second, weights = row-wise
softmax(Xq Xk^T / sqrt(d)). Each pair line is followed by a comment
"# align: q=k q=k ..." naming, for its content words, the key each query
must weigh most (its translation); the check holds the table to it.
"""
import glob
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EMB = os.path.join(ROOT, "assets", "embeddings.txt")
SENT_DIR = os.path.join(ROOT, "sentences")
TRANSLATION = os.path.join(SENT_DIR, "translation.txt")
PAIR_MARK = "|||"
SEED_PAIR = ("je suis heureux", "i am happy")   # lecture seed 002

DIMS = ("noun verb adj func person place time motion "
        "transport finance sport nature feeling food animal plural").split()
PUNCT = set('.,;:!?"()[]{}')

failures = []


def check(ok, msg):
    print(("  ok    " if ok else "  FAIL  ") + msg)
    if not ok:
        failures.append(msg)


def tokenize(line):
    """The program's tokenizer: ASCII letters lower-cased, split on white
    space, each of . , ; : ! ? " ( ) [ ] { } a token of its own;
    apostrophes and hyphens stay inside words."""
    out, cur = [], []
    for ch in line:
        if ch.isspace() or ch in PUNCT:
            if cur:
                out.append("".join(cur))
                cur = []
            if ch in PUNCT:
                out.append(ch)
        else:
            cur.append(ch.lower() if "A" <= ch <= "Z" else ch)
    if cur:
        out.append("".join(cur))
    return out


def load_table(path):
    words, vecs, dims_lines, problems = [], [], [], []
    seen = set()
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#"):
                if line.startswith("# dims:"):
                    dims_lines.append(line)
                continue
            if not line.strip():
                problems.append(f"line {lineno}: empty line")
                continue
            parts = line.split(" ")
            word, nums = parts[0], parts[1:]
            if len(nums) != 16:
                problems.append(f"line {lineno}: {word!r} has {len(nums)} numbers, want 16")
                continue
            for s in nums:
                frac = s.split(".")[1] if "." in s else ""
                if len(frac) > 3:
                    problems.append(f"line {lineno}: {s} has more than 3 decimals")
            if word in seen:
                problems.append(f"line {lineno}: duplicate word {word!r}")
            if word != word.lower() or not word.isascii():
                problems.append(f"line {lineno}: {word!r} is not lowercase ASCII")
            seen.add(word)
            words.append(word)
            vecs.append([float(s) for s in nums])
    return words, np.array(vecs, dtype=np.float64), dims_lines, problems


def sentence_lines():
    for path in sorted(glob.glob(os.path.join(SENT_DIR, "*.txt"))):
        with open(path, encoding="utf-8") as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.strip()
                if line and not line.startswith("#"):
                    yield os.path.relpath(path, ROOT), lineno, line


def sides(line):
    """A sentences-file line as its sentences: one, or two for a pair."""
    return [p.strip() for p in line.split(PAIR_MARK)]


def translation_pairs(path):
    """(lineno, query, keys, align, problems) for each pair line of path;
    align is the list of (query word, key word) from the "# align:" comment
    on the next line."""
    with open(path, encoding="utf-8") as f:
        lines = [raw.strip() for raw in f]
    out = []
    for i, line in enumerate(lines):
        if not line or line.startswith("#"):
            continue
        problems, align = [], []
        parts = sides(line)
        if len(parts) != 2 or not all(parts):
            problems.append("not a pair 'query ||| keys' with two sides")
            parts = (parts + ["", ""])[:2]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not nxt.startswith("# align:"):
            problems.append("no '# align:' comment on the next line")
            nxt = "# align:"
        for item in nxt[len("# align:"):].split():
            q, eq, k = item.partition("=")
            if not eq or not q or not k:
                problems.append(f"align item {item!r} is not query=key")
            elif q not in tokenize(parts[0]) or k not in tokenize(parts[1]):
                problems.append(f"align {item}: {q!r} not a query or {k!r} not a key")
            else:
                align.append((q, k))
        out.append((i + 1, parts[0], parts[1], align, problems))
    return out


def cross_attention(table, query, keys):
    """Basic cross-attention: softmax(Xq Xk^T / sqrt(d)) row by row."""
    qt, kt = tokenize(query), tokenize(keys)
    Xq = np.array([table[t] for t in qt])
    Xk = np.array([table[t] for t in kt])
    S = Xq @ Xk.T / np.sqrt(Xq.shape[1])
    S -= S.max(axis=1, keepdims=True)
    W = np.exp(S)
    W /= W.sum(axis=1, keepdims=True)
    return qt, kt, W


def check_translations(table):
    pairs = translation_pairs(TRANSLATION)
    check(len(pairs) >= 7, f"translation.txt has at least 7 pairs ({len(pairs)})")
    check(bool(pairs) and pairs[0][1:3] == SEED_PAIR,
          "translation.txt starts with the seed's 'je suis heureux ||| i am happy'")
    for lineno, query, keys, align, problems in pairs:
        where = f"translation.txt:{lineno}"
        check(not problems, f"{where} is a pair with its alignment"
              + ("" if not problems else ": " + "; ".join(problems)))
        check(len(align) >= 2, f"{where} aligns at least 2 words ({len(align)})")
        if problems:
            continue
        print(f"  {query} ||| {keys}")
        qt, kt, W = cross_attention(table, query, keys)
        for q, k in align:
            row = W[qt.index(q)]
            cells = "  ".join(f"{t}:{w:.3f}" for t, w in zip(kt, row))
            print(f"    {q:>8} -> {cells}")
            # The best key must be the translation and win clearly: a tie
            # (two keys with the same vector) would make argmax a coin toss.
            wk = max(w for t, w in zip(kt, row) if t == k)
            rest = [(w, t) for t, w in zip(kt, row) if t != k] or [(0.0, "-")]
            second, other = max(rest)
            check(wk > second + 1e-3,
                  f"{where}: {q} -> {k} ({k} {wk:.3f}, best other {other} {second:.3f})")
        # Information only: the other way round (keys' words as queries).
        kt2, qt2, W2 = cross_attention(table, keys, query)
        back = [f"{k}->{qt2[int(np.argmax(W2[kt2.index(k)]))]}" for _, k in align]
        print("    the other way round: " + "  ".join(back))


def attention(table, sentence):
    toks = tokenize(sentence)
    X = np.array([table[t] for t in toks])
    S = X @ X.T / np.sqrt(X.shape[1])
    S -= S.max(axis=1, keepdims=True)
    W = np.exp(S)
    W /= W.sum(axis=1, keepdims=True)
    return toks, W


def show_row(toks, W, q):
    i = toks.index(q)
    cells = "  ".join(f"{t}:{w:.3f}" for t, w in zip(toks, W[i]))
    print(f"    {q:>8} -> {cells}")


def why(table, q, k):
    """The features q and k share: the terms of their dot product."""
    terms = table[q] * table[k]
    parts = [f"{DIMS[i]} {terms[i]:.2f}" for i in np.argsort(-terms) if terms[i] > 0]
    print(f"    why {q}->{k}: {q}.{k} = {terms.sum():.2f} = " + (" + ".join(parts) or "0"))


def weight(toks, W, q, k):
    """Weight from query q to key k (the first occurrence of each)."""
    return W[toks.index(q), toks.index(k)]


def others(toks, W, q, exclude):
    """Weights from q to every key position whose word is not in exclude."""
    i = toks.index(q)
    return [(t, W[i, j]) for j, t in enumerate(toks) if t not in exclude]


def main():
    print("== table format")
    words, M, dims_lines, problems = load_table(EMB)
    table = dict(zip(words, M))
    check(not problems, "every line: word + 16 numbers, <= 3 decimals, lowercase, no duplicates"
          + ("" if not problems else ": " + "; ".join(problems[:10])))
    check(len(dims_lines) == 1 and dims_lines[0] == "# dims: " + " ".join(DIMS),
          "exactly one '# dims:' line with the 16 dimensions in order")
    check(len(words) >= 450, f"at least 450 words (have {len(words)})")
    needed = ['.', ',', '?', '!', ';', ':', '"', '(', ')', 'je', 'suis', 'heureux',
              'left', 'leave', 'leaves', 'cashed', 'cash', 'was', 'is', 'are', 'were']
    missing = [w for w in needed if w not in table]
    check(not missing, "required words present" + (f": missing {missing}" if missing else ""))
    check(bool(len(M)) and M.min() >= 0 and M.max() <= 1.5,
          "values in [0, 1.5] (interpretable features)")

    print("== sentences")
    n_lines, missing = 0, []
    bad_pairs = []
    for rel, lineno, line in sentence_lines():
        n_lines += 1
        if not line.isascii():
            missing.append(f"{rel}:{lineno} non-ASCII text")
        parts = sides(line)
        if len(parts) > 2 or not all(parts):
            bad_pairs.append(f"{rel}:{lineno}")
        for t in (t for part in parts for t in tokenize(part)):
            if t not in table:
                missing.append(f"{rel}:{lineno} {t!r}")
    check(n_lines > 0, f"sentence files have lines ({n_lines})")
    check(not missing, "every sentence token is in the table (both sides of a pair)"
          + ("" if not missing else ": " + ", ".join(missing[:20])))
    check(not bad_pairs, "every '|||' line is one pair with two non-empty sides"
          + ("" if not bad_pairs else ": " + ", ".join(bad_pairs[:20])))
    with open(os.path.join(SENT_DIR, "default.txt"), encoding="utf-8") as f:
        first = f.readline().rstrip("\n")
    check(first == "the train left the station on time",
          "sentences/default.txt starts with the train sentence")
    per_file = {}
    for rel, _, line in sentence_lines():
        per_file.setdefault(os.path.basename(rel), []).append(len(tokenize(line)))
    n_class = len(per_file.get("classroom.txt", []))
    check(n_class >= 24, f"classroom.txt has at least 24 sentences ({n_class})")
    longs = per_file.get("long.txt", [])
    check(2 <= len(longs) <= 3 and all(40 <= n <= 120 for n in longs),
          f"long.txt has 2-3 paragraphs of 40-120 tokens ({longs})")
    if failures:
        print(f"FAILED: {len(failures)} check(s)")
        return 1

    print("== attention: the train left the station on time")
    toks, W = attention(table, "the train left the station on time")
    show_row(toks, W, "train")
    why(table, "train", "station")
    ws = weight(toks, W, "train", "station")
    rest = others(toks, W, "train", {"train", "station"})
    check(all(w < ws for _, w in rest), "train attends to station more than to any other word but itself")
    small = [w for t, w in rest if t in ("the", "on")]
    check(all(w < ws and w < 1 / 7 for w in small), "the, on get little weight from train (< station, < 1/7)")

    print("== attention: the check was cashed at the bank")
    toks, W = attention(table, "the check was cashed at the bank")
    show_row(toks, W, "check")
    why(table, "check", "cashed")
    why(table, "check", "bank")
    wc = weight(toks, W, "check", "cashed")
    wb = weight(toks, W, "check", "bank")
    rest = others(toks, W, "check", {"check", "cashed", "bank"})
    check(all(w < min(wc, wb) for _, w in rest), "check attends to cashed and bank more than to the rest")

    print("== attention: one vector for bank, two meanings")
    toks, W = attention(table, "she sat on the river bank and watched the water")
    show_row(toks, W, "bank")
    why(table, "bank", "river")
    why(table, "bank", "water")
    wr = weight(toks, W, "bank", "river")
    rest = others(toks, W, "bank", {"bank", "river"})
    check(all(w < wr for _, w in rest), "river bank: bank attends to river most (after itself)")
    toks, W = attention(table, "he deposited money at the bank")
    show_row(toks, W, "bank")
    why(table, "bank", "money")
    wm = weight(toks, W, "bank", "money")
    rest = others(toks, W, "bank", {"bank", "money"})
    check(all(w < wm for _, w in rest), "money bank: bank attends to money most (after itself)")

    print("== attention: pronoun resolution")
    toks, W = attention(table, "the animal didn't cross the street because it was too tired")
    show_row(toks, W, "it")
    why(table, "it", "animal")
    why(table, "it", "street")
    check(weight(toks, W, "it", "animal") > weight(toks, W, "it", "street"),
          "too tired: it attends to animal more than to street")
    toks, W = attention(table, "the animal didn't cross the street because it was too wide")
    show_row(toks, W, "it")
    print("    (information only: basic attention cannot use 'wide' to pick street)")

    print("== cross-attention: translations find each other")
    check_translations(table)

    print("== information only")
    for s, q in [("the keys to the cabinet are on the table", "are"),
                 ("the trophy didn't fit in the suitcase because it was too big", "it"),
                 ("he swung the bat and hit the ball over the fence", "bat"),
                 ("the bat flew out of the cave at night", "bat"),
                 ("je suis heureux", "heureux"),
                 ("i am happy", "happy")]:
        print(f"  {s}")
        toks, W = attention(table, s)
        show_row(toks, W, q)

    if failures:
        print(f"FAILED: {len(failures)} check(s)")
        return 1
    print("all embedding checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
