#!/usr/bin/env bash
# Every model family on the command line (issue 34), found by its fixture
# folders (tests/fixtures/families/<family>/<folder>/: no line here per
# family): each folder's weights beside a small byte-level tokenizer open
# with --model; --print tokens, csv (one line per token and the header),
# predictions (10 lines, probabilities summing to at most 1),
# --print head-scores (L × H lines), --export-attention .npz read back as
# the same CSV, a PNG and a session of the model. Then the probe runs on
# each family. Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-families.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
TEXT='ABBA!"#$%CD'
n=0
for ref in tests/fixtures/families/*/*/ref.json; do
    src=$(dirname "$ref")
    name=$(basename "$src")
    fam=$(basename "$(dirname "$src")")
    d=$TMP/$name
    mkdir -p "$d"
    cp "$src"/config.json "$src"/*.safetensors "$d/"
    # 40 byte-level tokens (tests/fixtures/gpt2/f16-h5): every fixture's vocabulary is larger
    cp tests/fixtures/gpt2/f16-h5/vocab.json tests/fixtures/gpt2/f16-h5/merges.txt "$d/"
    L=$(sed -n 's/.*"n_layer": *\([0-9]*\).*/\1/p' "$ref")
    H=$(sed -n 's/.*"n_head": *\([0-9]*\).*/\1/p' "$ref")
    n=$((n + 1))

    run --model "$d" --print tokens "$TEXT"
    T=$(wc -l <"$TMP/out")
    if [ $rc = 0 ] && [ "$T" -gt 3 ]; then ok "$fam/$name: --print tokens ($T tokens)"
    else bad "$fam/$name: --print tokens (rc $rc): $(head -c 300 "$TMP/err")"; continue; fi

    run --model "$d" --print csv --layer "$L" --head "$H" "$TEXT"
    cp "$TMP/out" "$TMP/want.csv"
    if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = $((T + 1)) ]; then ok "$fam/$name: --print csv of layer $L head $H"
    else bad "$fam/$name: --print csv (rc $rc): $(head -c 300 "$TMP/err")"; fi

    run --model "$d" --print predictions "$TEXT"
    if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 10 ] &&
       awk -F'\t' '{ s += $2; if ($2 < 0 || $2 > 1) bad = 1 } END { exit !(bad == 0 && s <= 1.000001 && s > 0) }' "$TMP/out"
    then ok "$fam/$name: --print predictions"
    else bad "$fam/$name: predictions (rc $rc): $(head -c 300 "$TMP/out$TMP/err")"; fi

    run --model "$d" --print head-scores "$TEXT"
    if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = $((L * H + 1)) ]; then ok "$fam/$name: --print head-scores ($L x $H)"
    else bad "$fam/$name: head-scores (rc $rc, $(wc -l <"$TMP/out") lines): $(head -c 300 "$TMP/err")"; fi

    run --model "$d" --export-attention "$TMP/a.npz" "$TEXT"
    run "$TMP/a.npz" --print csv --layer "$L" --head "$H"
    if [ $rc = 0 ] && cmp -s "$TMP/out" "$TMP/want.csv"; then ok "$fam/$name: --export-attention read back unchanged"
    else bad "$fam/$name: the .npz read back (rc $rc): $(diff "$TMP/out" "$TMP/want.csv" | head -3)"; fi

    run --model "$d" --export "$TMP/m.png" --export "$TMP/s.json" "$TEXT"
    if [ $rc = 0 ] && [ -s "$TMP/m.png" ] && grep -q "\"$d\"\|$name" "$TMP/s.json"; then ok "$fam/$name: a PNG and a session"
    else bad "$fam/$name: PNG and session (rc $rc): $(head -c 300 "$TMP/err")"; fi

    run --model "$d" --probe induction:6 --seed 1 --print head-scores
    if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = $((L * H + 1)) ]; then ok "$fam/$name: the induction probe"
    else bad "$fam/$name: the probe (rc $rc): $(head -c 300 "$TMP/err")"; fi
done
[ "$n" -ge 1 ] || bad "no family fixture found under tests/fixtures/families"
echo "families-cli: $n folders, $pass passed, $failed failed"
[ "$failed" = 0 ]
