#!/usr/bin/env bash
# The induction probe on the command line (issue 26): --probe induction[:N]
# with --seed S on nano-sort (no bos token) and a fixture with one: its
# tokens (bos, N ids below the vocabulary, the same N again; the same seed
# the same tokens, another seed others), its head scores (induction as numpy
# computes it from the probe's own --export-attention and tokens), the usage
# errors (exit 2), a model too short for N (exit 1, saying the most N), and
# --help naming both meanings of --seed. Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
PY=/usr/bin/python3
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-probe.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }

# nano-sort: no bos, 3 tokens; N = 5: 10 tokens, the halves equal
run --model nano-sort --probe induction:5 --seed 3 --print tokens
cp "$TMP/out" "$TMP/a"
if [ "$rc" = 0 ] && "$PY" - "$TMP/a" 5 -1 3 <<'PY'; then ok "nano-sort: 5 ids below 3, twice, no bos"; else bad "nano-sort tokens: exit $rc $(head -c 300 "$TMP/err")"; fi
import sys
ids = [int(l.split("\t")[0]) for l in open(sys.argv[1]).read().splitlines()]
n, bos, vocab = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
head = [bos] if bos >= 0 else []
assert len(ids) == len(head) + 2 * n, ids
assert ids[:len(head)] == head, ids
body = ids[len(head):]
assert body[:n] == body[n:], ids
assert all(0 <= t < vocab for t in body), ids
PY
run --model nano-sort --probe induction:5 --seed 3 --print tokens
if [ "$rc" = 0 ] && cmp -s "$TMP/out" "$TMP/a"; then ok "the same seed: the same tokens"; else bad "same seed differs"; fi
run --model nano-sort --probe induction:5 --seed 4 --print tokens
if [ "$rc" = 0 ] && ! cmp -s "$TMP/out" "$TMP/a"; then ok "another seed: other tokens"; else bad "seed 4 gives seed 3's tokens"; fi

# a model with a bos token (63 of 64): first, then 7 twice
run --model tests/fixtures/gpt2/f32-h3 --probe induction:7 --seed 11 --print tokens
cp "$TMP/out" "$TMP/b"
if [ "$rc" = 0 ] && "$PY" - "$TMP/b" 7 63 64 <<'PY'; then ok "f32-h3: its bos token, then 7 ids twice"; else bad "f32-h3 tokens: exit $rc $(head -c 300 "$TMP/err")"; fi
import sys
ids = [int(l.split("\t")[0]) for l in open(sys.argv[1]).read().splitlines()]
n, bos, vocab = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert len(ids) == 1 + 2 * n and ids[0] == bos, ids
assert ids[1:1 + n] == ids[1 + n:], ids
assert all(0 <= t < vocab for t in ids), ids
PY

# its head scores: the probe's own maps, scored as numpy scores them
run --model tests/fixtures/gpt2/f32-h3 --probe induction:7 --seed 11 --print head-scores
cp "$TMP/out" "$TMP/scores.csv"
run --model tests/fixtures/gpt2/f32-h3 --probe induction:7 --seed 11 --export-attention "$TMP/att.npy"
if [ "$rc" = 0 ] && "$PY" - "$TMP/scores.csv" "$TMP/att.npy" "$TMP/b" <<'PY' 2>"$TMP/py"; then ok "f32-h3 probe: previous, duplicate, induction as numpy computes them"; else bad "probe scores: exit $rc $(tail -n 3 "$TMP/py") $(head -c 300 "$TMP/err")"; fi
import sys, numpy as np
rows = [l.split(",") for l in open(sys.argv[1]).read().splitlines()]
assert rows[0][:2] == ["layer", "head"] and rows[0][6] == "induction", rows[0]
A = np.load(sys.argv[2]).astype(np.float64)
ids = [int(l.split("\t")[0]) for l in open(sys.argv[3]).read().splitlines()]
L, H, T, _ = A.shape
assert T == len(ids) and len(rows) == 1 + L * H
for l in range(L):
    for h in range(H):
        a = A[l, h]
        prev = np.mean([a[i, i - 1] for i in range(1, T)])
        dup = [sum(a[i, j] for j in range(i) if ids[j] == ids[i]) for i in range(T) if ids[i] in ids[:i]]
        ind = [sum(a[i, j + 1] for j in range(i - 1) if ids[j] == ids[i]) for i in range(2, T) if ids[i] in ids[:i - 1]]
        got = rows[1 + l * H + h]
        assert (int(got[0]), int(got[1])) == (l + 1, h + 1)
        for k, want in ((2, prev), (5, np.mean(dup)), (6, np.mean(ind))):
            assert abs(float(got[k]) - want) < 1e-5, (l, h, k, got[k], want)
PY

# the usage errors and a model too short
run --probe induction --print tokens
if [ "$rc" = 2 ]; then ok "--probe without --model: exit 2"; else bad "--probe without --model: exit $rc"; fi
for arg in inductio induction:0 induction:512 induction:x induction: previous; do
  run --model nano-sort --probe "$arg" --print tokens
  if [ "$rc" = 2 ] && grep -q -- "--probe" "$TMP/err"; then ok "--probe $arg: exit 2"; else bad "--probe $arg: exit $rc"; fi
done
run --model nano-sort --probe induction ABC --print tokens
if [ "$rc" = 2 ]; then ok "--probe with a sentence: exit 2"; else bad "--probe with a sentence: exit $rc"; fi
run --model nano-sort --probe induction --print head-scores
if [ "$rc" = 1 ] && grep -q "N at most 5" "$TMP/err"; then ok "25 twice on 11 positions: exit 1, the most N said"; else bad "too long: exit $rc $(cat "$TMP/err")"; fi

# --help says both meanings of --seed
run --help
if grep -q -- "--probe induction\[:N\]" "$TMP/out" && grep -A2 -- "--seed N" "$TMP/out" | grep -q "probe"; then
  ok "--help: --probe, and --seed's two meanings"; else bad "--help"; fi

echo "probe.sh: $pass passed, $failed failed"
[ "$failed" = 0 ]
