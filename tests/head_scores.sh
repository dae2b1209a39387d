#!/usr/bin/env bash
# --print head-scores and --view heads on the command line (issue 26): the
# CSV's shape (every layer and head whatever --layer and --head say), its
# values against numpy on a PyTorch fixture and against hand-worked ones on
# a file with repeated tokens, a model's, cross-attention's blanks, the usage
# errors (exit 2), the overview's PNG and SVG. Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
PY=/usr/bin/python3
FIX=tests/fixtures/attention
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-heads.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
HEADER=layer,head,previous,self,first,duplicate,induction,entropy,distance

# the CSV's shape: the header, L × H lines of nine fields, layer and head 1-based in order
run "$FIX/torch_layers.npz" --print head-scores
if [ "$rc" = 0 ] && [ "$(head -n 1 "$TMP/out")" = "$HEADER" ] &&
   "$PY" - "$TMP/out" 3 4 <<'PY'; then ok "torch_layers.npz: 3 x 4 heads, 9 fields"; else bad "shape: exit $rc $(head -c 300 "$TMP/err")"; fi
import sys
lines = open(sys.argv[1]).read().splitlines()[1:]
L, H = int(sys.argv[2]), int(sys.argv[3])
assert len(lines) == L * H, len(lines)
for k, line in enumerate(lines):
    f = line.split(",")
    assert len(f) == 9, line
    assert (int(f[0]), int(f[1])) == (k // H + 1, k % H + 1), line
PY
cp "$TMP/out" "$TMP/all.csv"
run "$FIX/torch_layers.npz" --layer 2 --head 3 --print head-scores
if [ "$rc" = 0 ] && cmp -s "$TMP/out" "$TMP/all.csv"; then ok "--layer and --head change nothing"; else bad "--layer/--head: exit $rc"; fi

# the values against numpy's, from the definitions
if "$PY" - "$TMP/all.csv" "$FIX/torch_layers.npz" <<'PY' 2>"$TMP/py"; then ok "torch_layers.npz: every score as numpy computes it"; else bad "numpy: $(tail -n 3 "$TMP/py")"; fi
import sys, numpy as np
rows = [l.split(",") for l in open(sys.argv[1]).read().splitlines()[1:]]
z = np.load(sys.argv[2])
A, tok = z["attention"].astype(np.float64), [str(t) for t in z["tokens"]]
L, H, T, _ = A.shape
for l in range(L):
    for h in range(H):
        a = A[l, h]
        i = np.arange(T)
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.where(a > 0, -a * np.log(np.where(a > 0, a, 1)), 0).sum(1).mean()
        dup = [sum(a[q, j] for j in range(q) if tok[j] == tok[q]) for q in range(T)
               if any(tok[j] == tok[q] for j in range(q))]
        ind = [sum(a[q, j + 1] for j in range(q - 1) if tok[j] == tok[q]) for q in range(T)
               if any(tok[j] == tok[q] for j in range(q - 1))]
        want = [a[i[1:], i[1:] - 1].mean(), np.diag(a).mean(), a[1:, 0].mean(),
                np.mean(dup) if dup else None, np.mean(ind) if ind else None, ent,
                (a * np.abs(i[:, None] - i[None, :])).sum(1).mean()]
        got = rows[l * H + h][2:]
        for w, g in zip(want, got):
            if w is None:
                assert g == "", (l, h, got)
            else:
                assert abs(float(g) - w) <= 1e-5 * (1 + abs(w)), (l, h, w, g)
PY

# a file with repeated tokens, worked by hand: "The" and "ĠThe" differ
cat >"$TMP/rep.json" <<'EOF_JSON'
{"tokens": ["<s>", "a", "The", "a", "\u0120The", "The"],
 "attention": [[1,0,0,0,0,0], [0.5,0.5,0,0,0,0], [0.25,0.25,0.5,0,0,0],
               [0.1,0.2,0.3,0.4,0,0], [0.2,0.2,0.2,0.2,0.2,0], [0.1,0.1,0.1,0.5,0.1,0.1]]}
EOF_JSON
run "$TMP/rep.json" --print head-scores
# previous (0.5+0.25+0.3+0.2+0.1)/5 = 0.27, self (1+0.5+0.5+0.4+0.2+0.1)/6 = 0.45,
# first (0.5+0.25+0.1+0.2+0.1)/5 = 0.23, duplicate (0.2+0.1)/2, induction (0.3+0.5)/2
if [ "$rc" = 0 ] && [ "$(sed -n 2p "$TMP/out" | cut -d, -f1-7)" = "1,1,0.27,0.45,0.23,0.15,0.4" ]; then
    ok "repeated tokens: previous, self, first, duplicate, induction by hand"
else bad "repeated tokens: exit $rc: $(cat "$TMP/out" "$TMP/err")"; fi
run "$TMP/rep.json" --drop "<s>" --print head-scores
# without <s>: rows renormalised, a The a ĠThe The (positions from 0 again): duplicate
# queries 2 (a at 0: 0.2/0.9) and 4 (The at 1: 0.1/0.9); self each row's diagonal
if [ "$rc" = 0 ] && "$PY" -c "import sys; f = open('$TMP/out').read().splitlines()[1].split(','); \
assert abs(float(f[5]) - 0.15 / 0.9) < 1e-5 and abs(float(f[3]) - (1 + 0.5 / 0.75 + 0.4 / 0.9 + 0.2 / 0.8 + 0.1 / 0.9) / 5) < 1e-5, f"; then
    ok "--drop: the scores of the maps as shown"
else bad "--drop: exit $rc: $(cat "$TMP/out" "$TMP/err")"; fi

# no tokens: every token distinct, duplicate and induction blank; cross-attention's blanks
run "$FIX/json_notokens.json" --print head-scores
if [ "$rc" = 0 ] && [ "$(sed -n 2p "$TMP/out" | cut -d, -f6,7)" = "," ]; then ok "no tokens: duplicate and induction none"; else bad "no tokens: $(cat "$TMP/out" "$TMP/err")"; fi
run "$FIX/cross_tokens.npz" --print head-scores
if [ "$rc" = 0 ] && [ "$(sed -n 2p "$TMP/out" | cut -d, -f3,4,6,7,9)" = ",,,," ] &&
   [ -n "$(sed -n 2p "$TMP/out" | cut -d, -f5)" ] && [ -n "$(sed -n 2p "$TMP/out" | cut -d, -f8)" ]; then
    ok "cross-attention: only first and entropy"
else bad "cross: $(cat "$TMP/out" "$TMP/err")"; fi

# a model: 2 layers x 3 heads, every score defined on a text with repeats
run --model tests/fixtures/gpt2/f32-h3 --print head-scores "ABCABCAB"
if [ "$rc" = 0 ] && [ "$(head -n 1 "$TMP/out")" = "$HEADER" ] && [ "$(wc -l <"$TMP/out")" = 7 ] &&
   ! grep -q ',,\|,$' "$TMP/out"; then ok "model: 6 heads, every score"; else bad "model: exit $rc: $(cat "$TMP/out" "$TMP/err")"; fi
run --model tests/fixtures/gpt2/f32-h3 --print head-scores "A"
if [ "$rc" = 0 ] && [ "$(sed -n 2p "$TMP/out" | cut -d, -f3-)" = ",1,,,,0,0" ]; then ok "one token: self 1, entropy 0, distance 0"; else bad "one token: $(cat "$TMP/out" "$TMP/err")"; fi

# usage errors: exit 2
for args in "--print head-scores the cat" "--view heads --export $TMP/x.png the cat" \
            "$FIX/json_tt.json --view heads --head-score foo --export $TMP/x.png" \
            "$FIX/json_tt.json --head-score self --print head-scores"; do
    # shellcheck disable=SC2086
    run $args
    if [ "$rc" = 2 ]; then ok "exit 2: $args"; else bad "exit $rc, want 2: $args"; fi
done
run "$FIX/json_tt.json" --view heads --export "$TMP/x.csv"
if [ "$rc" = 1 ] && [ ! -e "$TMP/x.csv" ]; then ok "--view heads: .csv refused"; else bad "--view heads .csv: exit $rc"; fi

# the overview: PNG and SVG, file and model, each score
run "$FIX/torch_layers.npz" --view heads --export "$TMP/o.png" --export "$TMP/o.svg"
if [ "$rc" = 0 ] && [ "$(head -c 8 "$TMP/o.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
   grep -q '>induction, fixed 0–1<' "$TMP/o.svg" && grep -q '>layer 3<' "$TMP/o.svg" && grep -q '>head 4<' "$TMP/o.svg"; then
    ok "file: the overview as PNG and SVG"
else bad "file overview: exit $rc: $(head -c 300 "$TMP/err")"; fi
for s in previous self first duplicate induction entropy distance; do
    run --model tests/fixtures/gpt2/f32-h3 --view heads --head-score "$s" --export "$TMP/m-$s.svg" "ABCABCAB"
    case $s in entropy|distance) scale="0 to the largest";; *) scale="fixed 0–1";; esac
    if [ "$rc" = 0 ] && grep -q ">$s, $scale<" "$TMP/m-$s.svg"; then ok "model: --head-score $s ($scale)"; else bad "model $s: exit $rc: $(head -c 300 "$TMP/err")"; fi
done
# a score in [0, 1] on a fixed 0–1 scale unless --color-scale says otherwise (issue 38, item 11):
# its colour bar's top tick is 1 (the largest score here is below 0.9), with max the largest
run --model nano-sort --view heads --export "$TMP/n.svg" CBABBC
run2() { "$BIN" --model nano-sort --view heads --color-scale max --export "$TMP/n-max.svg" CBABBC 2>"$TMP/err"; }
if [ "$rc" = 0 ] && run2 && grep -q '>1.0<' "$TMP/n.svg" && grep -q '>induction, fixed 0–1<' "$TMP/n.svg" &&
   ! grep -q '>1.0<' "$TMP/n-max.svg" && grep -q '>induction, 0 to the largest<' "$TMP/n-max.svg"; then
    ok "nano-sort: induction fixed 0–1 by default, --color-scale max to the largest"
else bad "fixed scale: exit $rc: $(head -c 300 "$TMP/err")"; fi
run --model tests/fixtures/gpt2/f32-h3 --view heads --export "$TMP/m.png" "ABCABCAB"
if [ "$rc" = 0 ] && [ -s "$TMP/m.png" ]; then ok "model: the overview as PNG"; else bad "model png: exit $rc"; fi
if command -v xmllint >/dev/null 2>&1; then
    if xmllint --noout "$TMP/o.svg" "$TMP/m-entropy.svg" 2>"$TMP/xml"; then ok "SVG well-formed"; else bad "xmllint: $(head -c 300 "$TMP/xml")"; fi
fi

echo "head_scores: $pass passed, $failed failed"
[ "$failed" = 0 ]
