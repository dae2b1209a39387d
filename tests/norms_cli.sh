#!/usr/bin/env bash
# Value-weighted attention on the command line (issue 37, part 2): --print
# csv --matrix norms of a model (shakespeare-tiny, a GPT-2 fixture) and of
# the toy sentence model, checked against a property the weights give
# independently: norms[i, j] / weights[i, j] is key j's ‖v_j W_O,h‖, the
# same down each column (a map that scaled rows, or mixed up keys, fails);
# masked cells 0; --print csv following --matrix for every kind of the
# sentence model (logits = scores / √dk at τ 1); the exports with --matrix
# norms (the CSV the same numbers, --export-attention's .npz the maps); and
# bad input: an attention file (exit 1: files have no values, nothing on
# stdout), --matrix scores with --model (exit 1), an unknown kind (exit 2).
# Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-norms.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
F=tests/fixtures/gpt2/f32-h3
TEXT="First Citizen: Before we proceed any further hear me speak. First Citizen"  # no comma: the CSV split by commas

# columns(weights.csv, norms.csv): "ok" when every column's norms / weights
# ratio is one number (within 1e-5 relative) and norms are 0 where weights
# are, else the first cell that breaks it
columns() {
    awk -F, 'NR == FNR { if (FNR > 1) for (j = 2; j <= NF; j++) w[FNR, j] = $j; next }
             FNR > 1 { for (j = 2; j <= NF; j++) {
                 if (w[FNR, j] == 0) { if ($j != 0) { print "row " FNR - 1 " key " j - 1 ": " $j " where the weight is 0"; exit } continue }
                 if ($j < 0) { print "row " FNR - 1 " key " j - 1 ": negative " $j; exit }
                 r = $j / w[FNR, j]
                 if (!((j) in n)) n[j] = r
                 else if ((r - n[j]) > 1e-5 * n[j] || (n[j] - r) > 1e-5 * n[j]) {
                     print "key " j - 1 ": ratio " r " in row " FNR - 1 ", " n[j] " above"; exit } }
                 }
             END { print "ok" }' "$1" "$2" | head -1
}

for pick in "--layer 1 --head 1" "--layer 2 --head 3" "--layer 2 --head 4"; do
    run --model shakespeare-tiny --print csv $pick "$TEXT"; cp "$TMP/out" "$TMP/w.csv"
    run --model shakespeare-tiny --print csv --matrix norms $pick "$TEXT"; cp "$TMP/out" "$TMP/n.csv"
    verdict=$(columns "$TMP/w.csv" "$TMP/n.csv")
    rows=$(awk -F, 'NR > 1 { s = 0; for (j = 2; j <= NF; j++) s += $j; if (s > 1.01 || s < 0.99) n++ } END { print n + 0 }' "$TMP/n.csv")
    if [ $rc = 0 ] && [ "$verdict" = ok ] && [ "$(head -1 "$TMP/n.csv")" = "$(head -1 "$TMP/w.csv")" ] &&
       [ "$(wc -l <"$TMP/n.csv")" = "$(wc -l <"$TMP/w.csv")" ] && [ "$rows" -gt 0 ]; then
        ok "shakespeare-tiny $pick: norms = weights times one number per key (rows not summing to 1: $rows)"
    else bad "shakespeare-tiny $pick (rc $rc): $verdict; rows off 1: $rows"; fi
done

# the GPT-2 fixture: the same, and the key's number is not the same for every key
run --model $F --print csv --layer 2 --head 2 '!#$%&'; cp "$TMP/out" "$TMP/w.csv"
run --model $F --print csv --matrix norms --layer 2 --head 2 '!#$%&'; cp "$TMP/out" "$TMP/n.csv"
spread=$(awk -F, 'NR == 2 { a = $2 } NR == 3 { b = $3 } END { print (a != b) }' "$TMP/n.csv")
if [ $rc = 0 ] && [ "$(columns "$TMP/w.csv" "$TMP/n.csv")" = ok ] && [ "$spread" = 1 ]; then
    ok "$F: norms = weights times each key's norm"
else bad "$F (rc $rc): $(columns "$TMP/w.csv" "$TMP/n.csv")"; fi

# the toy sentence model: --print csv follows --matrix for every kind
S="the cat sat on the mat"
for m in weights scores logits norms; do
    "$BIN" --seed 5 --heads 2 --head 2 --print csv --matrix $m "$S" >"$TMP/$m.csv" 2>"$TMP/err"
    eval "rc_$m=$?"
done
logits_ok=$(paste -d, "$TMP/scores.csv" "$TMP/logits.csv" | awk -F, 'NR > 1 { n = (NF - 2) / 2
    for (j = 2; j <= n + 1; j++) { s = $j / 2.8284271247; l = $(j + n + 1); if (s - l > 1e-5 || l - s > 1e-5) { print "no"; exit } } }
    END { print "yes" }' | head -1)
if [ "$rc_weights$rc_scores$rc_logits$rc_norms" = 0000 ] && [ "$logits_ok" = yes ] &&
   ! cmp -s "$TMP/weights.csv" "$TMP/scores.csv" && ! cmp -s "$TMP/weights.csv" "$TMP/norms.csv" &&
   [ "$(columns "$TMP/weights.csv" "$TMP/norms.csv")" = ok ]; then
    ok "the sentence model: --print csv prints the --matrix asked (logits = scores / sqrt(8); norms = weights times a number per key)"
else bad "the sentence model's --print csv --matrix: rc $rc_weights$rc_scores$rc_logits$rc_norms, logits $logits_ok, norms $(columns "$TMP/weights.csv" "$TMP/norms.csv")"; fi

# the exports with --matrix norms: CSV the printed numbers, PNG written, the .npz's maps
run --model $F --matrix norms --layer 2 --head 2 --export "$TMP/e.csv" --export "$TMP/e.png" --export "$TMP/e.svg" \
    --export-attention "$TMP/e.npz" '!#$%&'
if [ $rc = 0 ] && cmp -s "$TMP/e.csv" "$TMP/n.csv" && [ -s "$TMP/e.png" ] && grep -q "norms" "$TMP/e.svg"; then
    ok "--export .csv/.png/.svg with --matrix norms: the CSV is --print csv's, the SVG says norms"
else bad "--export with --matrix norms (rc $rc): $(cat "$TMP/err")"; fi

# bad input
A=tests/fixtures/attention/batch1.npy
run "$A" --matrix norms --print csv
if [ $rc = 1 ] && [ ! -s "$TMP/out" ] && grep -q "no values" "$TMP/err" && grep -q "batch1.npy" "$TMP/err"; then
    ok "--matrix norms on an attention file: exit 1, the file named, no values said, nothing on stdout"
else bad "--matrix norms on a file (rc $rc): $(cat "$TMP/out" "$TMP/err")"; fi
run --model $F --matrix scores --print csv '!#$'
if [ $rc = 1 ] && [ ! -s "$TMP/out" ] && grep -q "weights and norms" "$TMP/err"; then
    ok "--matrix scores with --model: exit 1, the kinds a model has said"
else bad "--matrix scores with --model (rc $rc): $(cat "$TMP/err")"; fi
run --model $F --matrix norm --print csv '!#$'
if [ $rc = 2 ] && [ ! -s "$TMP/out" ] && grep -q "norms" "$TMP/err"; then
    ok "--matrix norm (a typo): usage, exit 2, the kinds listed"
else bad "--matrix norm (rc $rc): $(cat "$TMP/err")"; fi

echo "norms_cli: $pass passed, $failed failed"
[ $failed = 0 ]
