#!/usr/bin/env bash
# Attention files on the command line (issue 13): real attention from
# PyTorch (tests/fixtures/attention, written by numpy's own writers:
# make_torch.py) printed and exported as attnviz reads it, compared with the
# values torch and numpy computed (torch_expected.json: maps, a layer's mean
# over heads, the rollout in float64); the other layouts of the same numbers
# (per-layer npz, a 5-D npy, JSON); --drop; the exports; and every bad file.
# Run from the repository root (python3-numpy for the references).
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
PY=/usr/bin/python3
FIX=tests/fixtures/attention
pass=0 failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-import.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }

# compare_json DESC EXPR ARGS...: the printed map's values equal EXPR (a
# Python expression over the expected JSON `e`) to 1e-6
compare_json() {
    local desc=$1 expr=$2
    shift 2
    run "$@" --print json
    if [ "$rc" -ne 0 ]; then bad "$desc: exit $rc: $(head -c 300 "$TMP/err")"; return; fi
    if "$PY" - "$TMP/out" "$FIX/torch_expected.json" "$expr" <<'PY' 2>"$TMP/py"; then ok "$desc"; else bad "$desc: $(tail -n 3 "$TMP/py")"; fi
import json, sys
import numpy as np
got = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
want = np.array(eval(sys.argv[3]), dtype=np.float64)
v = np.array(got["values"], dtype=np.float64)
assert v.shape == want.shape, (v.shape, want.shape)
err = np.abs(v - want).max()
assert err <= 1e-6, f"max error {err}"
PY
}

S="$FIX/torch_layers.npz"
compare_json "npz (savez_compressed): layer 1 head 1" 'e["maps"][0]["map"]' "$S" --layer 1 --head 1
compare_json "npz: layer 2 head 3" 'e["maps"][1]["map"]' "$S" --layer 2 --head 3
compare_json "npz: layer 3 head 4" 'e["maps"][2]["map"]' "$S" --layer 3 --head 4
compare_json "npz: layer 3, heads averaged" 'e["layer_mean"]["map"]' "$S" --layer 3 --head avg
compare_json "npz: rollout through the last layer" 'e["rollout"]["map"]' "$S" --rollout
compare_json "npz: rollout through layer 3" 'e["rollout"]["map"]' "$S" --rollout --layer 3
compare_json "per-layer npz (savez, layer_N as 1×H×T×T)" 'e["maps"][1]["map"]' "$FIX/torch_perlayer.npz" --layer 2 --head 3
compare_json "npy of L×1×H×T×T" 'e["maps"][2]["map"]' "$FIX/torch_attention.npy" --layer 3 --head 4
compare_json "--attention FILE" 'e["maps"][0]["map"]' --attention "$S"
compare_json "cross-attention npz: head 2" 'e["cross_maps"][0]["map"]' "$FIX/torch_cross.npz" --head 2
compare_json "all layers and heads averaged" \
    'np.mean([np.load("'"$S"'")["attention"][l][h] for l in range(3) for h in range(4)], axis=0)' \
    "$S" --layer avg --head avg
compare_json "head 2 averaged over the layers" \
    'np.mean([np.load("'"$S"'")["attention"][l][1] for l in range(3)], axis=0)' "$S" --layer avg --head 2

# the tokens as stored, in the CSV header and rows; cross: queries down, keys across
run "$S" --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,<s>,The,Ġtrain,Ġleft,Ġthe,Ġstation,</s>" ] &&
   [ "$(wc -l < "$TMP/out")" -eq 8 ]; then ok "CSV: header of the stored tokens, 7 rows"; else bad "CSV: $(head -n 2 "$TMP/out") $(cat "$TMP/err")"; fi
run "$FIX/torch_cross.npz" --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out" | tr ',' '\n' | wc -l)" -eq 8 ] && [ "$(wc -l < "$TMP/out")" -eq 6 ] &&
   sed -n 2p "$TMP/out" | grep -q '^<pad>,'; then ok "cross CSV: 7 key columns, 5 query rows"; else bad "cross CSV: $(head -n 2 "$TMP/out")"; fi

# --drop: the special tokens' rows and columns go, every row sums to 1 again
run "$S" --drop '<s>,</s>' --print json
if [ "$rc" -eq 0 ] && "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["query_tokens"] == ["The", "Ġtrain", "Ġleft", "Ġthe", "Ġstation"], d["query_tokens"]
for row in d["values"]:
    assert abs(sum(row) - 1) < 1e-5, sum(row)
' "$TMP/out"; then ok "--drop <s>,</s>: 5 tokens left, rows sum to 1"; else bad "--drop: $(cat "$TMP/err")"; fi
run "$S" --drop 'train' --print csv
if [ "$rc" -eq 0 ] && ! head -n 1 "$TMP/out" | grep -q train; then ok "--drop matches the token as shown (Ġ dropped)"; else bad "--drop train: $(head -n 1 "$TMP/out")"; fi

# --tokens wins over the file's; position names without tokens
printf 'a\nb\nc\nd\ne\nf\ng\n' > "$TMP/t7"
run "$FIX/torch_attention.npy" --tokens "$TMP/t7" --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,a,b,c,d,e,f,g" ]; then ok "--tokens names the npy's tokens"; else bad "--tokens: $(head -n 1 "$TMP/out") $(cat "$TMP/err")"; fi
run "$FIX/torch_attention.npy" --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,0,1,2,3,4,5,6" ]; then ok "no tokens: positions"; else bad "positions: $(head -n 1 "$TMP/out")"; fi

# JSON attention files, told from sessions by their content
"$PY" - "$S" "$TMP/a.json" <<'PY'
import json, sys
import numpy as np
z = np.load(sys.argv[1])
json.dump({"tokens": [str(t) for t in z["tokens"]], "attention": z["attention"].tolist()}, open(sys.argv[2], "w"))
PY
compare_json ".json attention file (by content)" 'e["maps"][1]["map"]' "$TMP/a.json" --layer 2 --head 3

# scores beside the weights (make_scores.py): --matrix scores picks them
for ext in npz safetensors; do
    compare_json "$ext with scores: the weights by default" \
        'np.load("'"$FIX"'/scores.npz")["attention"][1][0]' "$FIX/scores.$ext" --layer 2 --head 1
    compare_json "$ext with scores: --matrix scores" \
        'np.load("'"$FIX"'/scores.npz")["scores"][1][0]' "$FIX/scores.$ext" --layer 2 --head 1 --matrix scores
done
compare_json "scores averaged over the heads" \
    'np.load("'"$FIX"'/scores.npz")["scores"][0].mean(axis=0)' "$FIX/scores.npz" --head avg --matrix scores

# a session of an attention file: the file, its layer and head; flags win
printf '{"attention_file": "%s", "layer": 1, "head": 2}\n' "$PWD/$S" > "$TMP/sess.json"
compare_json "a session names the file, layer and head" 'e["maps"][1]["map"]' "$TMP/sess.json"
compare_json "flags win over the session's" 'e["maps"][2]["map"]' "$TMP/sess.json" --layer 3 --head 4

# exports: PNG and SVG of the map and of every layer and head
run "$S" --layer 2 --head 3 --export "$TMP/m.png" --export "$TMP/m.svg" --export "$TMP/m.csv" --export "$TMP/m.json"
if [ "$rc" -eq 0 ] && [ -s "$TMP/m.png" ] && xmllint --noout "$TMP/m.svg" 2>/dev/null && [ -s "$TMP/m.csv" ] &&
   grep -q '"layer": 2' "$TMP/m.json"; then ok "exports of the map: png, svg, csv, json"; else bad "exports: $(cat "$TMP/err")"; fi
run "$S" --view grid --export "$TMP/g.png" --export "$TMP/g.svg"
n=$(grep -c '<g class="map"' "$TMP/g.svg" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ -s "$TMP/g.png" ] && [ "$n" = 12 ]; then ok "--view grid: 3 layers × 4 heads"; else bad "grid: $n maps, $(cat "$TMP/err")"; fi

# bad files and bad options: one line naming the file, exit 1 (2 for usage)
expect_fail() { # DESC CODE PATTERN ARGS...
    local desc=$1 code=$2 pat=$3
    shift 3
    run "$@" --print csv
    if [ "$rc" -eq "$code" ] && grep -q -- "$pat" "$TMP/err" && [ "$(wc -l < "$TMP/err")" -le 2 ]; then ok "$desc"; else
        bad "$desc: exit $rc, $(head -c 300 "$TMP/err")"; fi
}
expect_fail "missing file is named" 1 "nope.npy" "$TMP/nope.npy"
expect_fail "--layer out of range" 1 "the file has 3 layers" "$S" --layer 4
expect_fail "--head out of range" 1 "the file has 4 heads" "$S" --head 5
expect_fail "a missing tokens file is named" 1 "nope-tokens" "$FIX/torch_attention.npy" --tokens "$TMP/nope-tokens"
printf 'a\nb\n' > "$TMP/t2"
expect_fail "--tokens length mismatch" 1 "t2" "$FIX/torch_attention.npy" --tokens "$TMP/t2"
: > "$TMP/t0"
expect_fail "an empty tokens file" 1 "t0" "$FIX/torch_attention.npy" --tokens "$TMP/t0"
expect_fail "--rollout of cross-attention" 1 "rollout" "$FIX/torch_cross.npz" --rollout
expect_fail "--tokens alone for cross-attention" 1 "key" "$FIX/torch_cross.npz" --tokens "$TMP/t7"
expect_fail "--key-tokens without --tokens" 2 "key-tokens" "$S" --key-tokens "$TMP/t7"
expect_fail "--layer without an attention file" 2 "attention file" -s "the cat" --layer 2
expect_fail "--drop of an unknown token" 1 "no such token" "$S" --drop zebra
expect_fail "--matrix scores without scores in the file" 1 "no scores beside" "$S" --matrix scores
expect_fail "--matrix logits of an attention file" 1 "no logits" "$FIX/scores.npz" --matrix logits
"$PY" -c 'import numpy as np, sys; a = np.full((2, 5, 5), 0.2, np.float32); a[1, 3, 2] = np.nan; np.save(sys.argv[1], a)' "$TMP/nan.npy"
expect_fail "a NaN is named by its place" 1 "NaN at layer 1, head 2, row 4, column 3" "$TMP/nan.npy"
head -c 100 "$FIX/torch_attention.npy" > "$TMP/trunc.npy"
expect_fail "a truncated npy" 1 "trunc.npy" "$TMP/trunc.npy"
printf 'not a numpy file at all, just some text here\n' > "$TMP/magic.npy"
expect_fail "wrong magic" 1 "magic.npy" "$TMP/magic.npy"
"$PY" -c 'import numpy as np, sys; np.save(sys.argv[1], np.zeros((3, 4, 5), np.int32))' "$TMP/int.npy"
expect_fail "an integer dtype" 1 "int.npy" "$TMP/int.npy"
printf '{"attention_file": "%s", "layer": "x"}\n' "$PWD/$S" > "$TMP/badsess.json"
expect_fail "a bad session of an attention file" 1 '"layer" must be a whole number' "$TMP/badsess.json"
printf '{"attention_file": "%s"}\n' "$TMP/gone.npz" > "$TMP/gonesess.json"
expect_fail "a session whose file is gone names it" 1 "gone.npz" "$TMP/gonesess.json"

# values that are not softmax output: said, shown as they are
"$PY" -c 'import numpy as np, sys; np.save(sys.argv[1], np.array([[1.5, -2.0], [0.25, 3.0]], np.float64))' "$TMP/scores.npy"
run "$TMP/scores.npy" --print json
if [ "$rc" -eq 0 ] && grep -q "do not sum to 1" "$TMP/err" && grep -q '"kind": "raw scores"' "$TMP/out"; then
    ok "scores: a note that rows do not sum to 1, diverging"; else bad "scores: $(cat "$TMP/err") $(head -c 200 "$TMP/out")"; fi

echo "import: $pass passed, $failed failed"
[ "$failed" = 0 ]
