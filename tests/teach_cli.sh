#!/usr/bin/env bash
# Teach mode on the command line (issue 15): --teach with presets and CSV
# targets, every optimiser, what trains; the "teach" object of --print json
# checked with numpy (its first loss is the cross-entropy of the printed
# starting weights against the printed target; the target a CSV gave is the
# CSV normalised; the loss falls); the current map as its own target is a
# fixed point (zero gradient); bad targets and values with their exit codes.
# Run from the repository root (ATTNVIZ_BIN overrides the binary).
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
PY=/usr/bin/python3
S="the train left the station on time"
pass=0 failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-teach.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }

# expect_error DESC CODE PATTERN ARGS...
expect_error() {
    local desc=$1 code=$2 pat=$3
    shift 3
    run "$@"
    if [ "$rc" -ne "$code" ]; then bad "$desc: exit $rc, want $code: $(head -c 300 "$TMP/err")"
    elif [ -s "$TMP/out" ]; then bad "$desc: printed on stdout"
    elif ! grep -qF -- "$pat" "$TMP/err"; then bad "$desc: stderr lacks '$pat': $(head -c 300 "$TMP/err")"
    else ok "$desc"; fi
}

# The checks' common part: the document, its teach object, the target T,
# the losses, the rows with a target.
cat >"$TMP/head.py" <<'EOF'
import json, sys, numpy as np
doc = json.load(open(sys.argv[1]))
t = doc["teach"]
T = np.array(t["target"], dtype=np.float64)
loss = np.array(t["loss"], dtype=np.float64)
assert np.all(np.isfinite(loss)), "a loss is not finite"
assert len(loss) == t["steps"] + 1, "loss has %d numbers for %d steps" % (len(loss), t["steps"])
rows = T.sum(axis=1) > 0
assert np.allclose(T.sum(axis=1)[rows], 1, atol=1e-6), "target rows do not sum to 1"
EOF

# check DESC PYTHON ARGS...: run with --print json; PYTHON (after head.py) raises to fail
check() {
    local desc=$1 py=$2
    shift 2
    run "$@" --print json
    if [ "$rc" -ne 0 ]; then bad "$desc: exit $rc: $(head -c 300 "$TMP/err")"; return; fi
    { cat "$TMP/head.py"; printf '%s\n' "$py"; } >"$TMP/check.py"
    if "$PY" "$TMP/check.py" "$TMP/out" >"$TMP/py" 2>&1; then ok "$desc"
    else bad "$desc: $(tail -n 3 "$TMP/py")"; fi
}

# 1. --steps 0: one loss, the cross-entropy of the weights printed against the target
check "--steps 0: loss of the printed weights (numpy)" '
W = np.array(doc["heads"][0]["weights"], dtype=np.float64)
want = -np.mean([np.sum(T[i][T[i] > 0] * np.log(W[i][T[i] > 0])) for i in range(len(T)) if rows[i]])
assert abs(loss[0] - want) < 1e-5 * max(1, abs(want)), (loss[0], want)
assert T.shape == W.shape and list(np.argmax(T, axis=1)) == [0, 0, 1, 2, 3, 4, 5]
' --teach previous --steps 0 "$S"

# 2. every preset learns: the loss falls to a small fraction (with positions:
# without them the two "the" are one key, and "first" cannot beat ln 2)
for p in self previous next first; do
    check "preset $p: the loss falls (adam)" '
assert loss[-1] < 0.25 * loss[0], (loss[0], loss[-1])
' --teach "$p" --steps 150 --seed 3 --posenc "$S"
done
check "without positions, two equal keys: a plateau at ln 2, not NaN" '
# every row wants key 1; key 4 is the same vector, so alpha <= 1/2: loss >= ln 2
assert np.log(2) - 1e-4 <= loss[-1] < np.log(2) + 0.05, loss[-1]
' --teach first --steps 300 --seed 3 "$S"
check "sgd, heads' mean, word vectors: the loss falls" '
assert t["optimizer"] == "sgd" and t["head"] == "avg" and t["train"] == ["wq", "wk", "x"], t
assert loss[-1] < 0.7 * loss[0], (loss[0], loss[-1])
assert abs(t["lr"] - 0.5) < 1e-7
' --teach first --optimizer sgd --lr 0.5 --train wq,wk,x --head avg -H 2 --seed 4 --steps 100 "$S"
check "additive score trains v; cross-attention" '
assert t["train"] == ["wq", "wk", "v"], t
assert doc["config"]["score"] == "additive"
assert T.shape == (3, 4), T.shape
assert loss[-1] < 0.5 * loss[0], (loss[0], loss[-1])
' --teach self --score additive --train wq,wk,v --keys "i am very happy" --steps 100 --seed 2 "je suis heureux"

# 3. CSV targets: the current map is a fixed point; a painted one is normalised
"$BIN" --print csv "$S" >"$TMP/target.csv"
check "the current map as the target: a fixed point (its gradient is 0)" '
assert np.max(np.abs(loss - loss[0])) < 1e-5, loss
W = np.array(doc["heads"][0]["weights"])
assert np.allclose(W, T, atol=1e-6)
' --teach "$TMP/target.csv" --optimizer sgd --lr 1 --steps 5 "$S"
"$PY" - "$TMP/target.csv" "$TMP/painted.csv" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
out = [lines[0]]
for i, line in enumerate(lines[1:]):
    cells = line.split(",")
    vals = ["0"] * (len(cells) - 1)
    if i != 3:                            # row 4: no target
        vals[(i + 2) % len(vals)] = "3"   # after the query (masked when causal) for most rows
        vals[0] = "1"
    out.append(",".join([cells[0]] + vals))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
EOF
check "a painted CSV: rows normalised, an empty row left out, masked mass dropped" '
assert not rows[3], "row 4 has no target"
assert np.allclose(T[0], np.eye(7)[0]), T[0]
assert np.allclose(T[6], np.eye(7)[0] * 0.25 + np.eye(7)[1] * 0.75), T[6]
assert np.count_nonzero(np.triu(T, 1)) == 0, "mass on masked keys"
' --teach "$TMP/painted.csv" --causal --steps 3 "$S"
if grep -qF "causal mask hides dropped" "$TMP/err"; then ok "the dropped mass is said on stderr"
else bad "no note for the dropped mass: $(cat "$TMP/err")"; fi

# 4. --export writes the trained state's numbers
run --teach previous --steps 100 --seed 3 --export "$TMP/trained.csv" "$S"
run --seed 3 --export "$TMP/untrained.csv" "$S"
if [ -s "$TMP/trained.csv" ] && ! cmp -s "$TMP/trained.csv" "$TMP/untrained.csv"; then
    ok "--export writes the trained weights"; else bad "--export: the trained export is missing or untrained"; fi

# 5. bad targets and values
printf 'query,the,train\nthe,1,0\n' >"$TMP/small.csv"
sed 's/^train,/engine,/' "$TMP/target.csv" >"$TMP/renamed.csv"
sed '3s/,0\.[0-9]*,/,-0.5,/' "$TMP/target.csv" >"$TMP/negative.csv"
sed '3s/,0\.[0-9]*,/,nan,/' "$TMP/target.csv" >"$TMP/nan.csv"
awk -F, 'NR == 1 { print; next } { printf "%s", $1; for (i = 2; i <= NF; i++) printf ",0"; print "" }' \
    "$TMP/target.csv" >"$TMP/zeros.csv"
expect_error "a CSV of the wrong size" 1 "small.csv:1: the header has 2 key tokens" --teach "$TMP/small.csv" "$S"
expect_error "a CSV whose tokens do not match" 1 "row 2 is for \"engine\"" --teach "$TMP/renamed.csv" "$S"
expect_error "a negative target value" 1 "negative.csv:3: column" --teach "$TMP/negative.csv" "$S"
expect_error "a NaN target value" 1 "nan.csv:3: column" --teach "$TMP/nan.csv" "$S"
expect_error "all rows empty" 1 "no row with weight" --teach "$TMP/zeros.csv" "$S"
expect_error "an unknown preset" 1 "not a preset (self, previous, next, first)" --teach sideways "$S"
expect_error "lr 0" 1 "--lr 0: the learning rate must be above 0" --teach self --lr 0 "$S"
expect_error "steps below 0" 1 "--steps -1: must be 0 or more" --teach self --steps -1 "$S"
expect_error "an unknown optimiser" 1 "--optimizer rmsprop: unknown optimiser" --teach self --optimizer rmsprop "$S"
expect_error "--train with an unknown name" 2 "--train needs a list of wq, wk, x and v" --teach self --train wq,wo "$S"
expect_error "--train v without the additive score" 2 "--train v needs --score additive" --teach self --train v "$S"
expect_error "--steps without --teach" 2 "need --teach TARGET" --steps 5 "$S"
expect_error "a head out of range" 1 "head 3: the model has 2 heads" --teach self --head 3 -H 2 "$S"
expect_error "Wq in basic mode" 1 "basic attention has no Wq or Wk" --teach self --mode basic "$S"
echo "teach-cli: $pass passed, $failed failed"
[ "$failed" = 0 ]
