#!/usr/bin/env bash
# What fills the blank on the command line (issue 36): each encoder fixture
# with a tokenizer (tests/fixtures/families/bert/*/tokenizer.json, whose
# ref.json has "top_at") opened with --model on its text: --print tokens
# gives the ids Hugging Face's tokenizers gave (ref.json's, [CLS] ... [SEP]
# or <s> ... </s> included); --print predictions without --query shows the
# first mask token's top 10, the same as --query at that position, with
# the float64 reference's ids and probabilities (2e-6); the exported maps
# are full squares (a key after the query has weight); --generate is
# refused (an encoder fills blanks, it does not continue). Run from the
# repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-encoders.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
# ref.json's list "key" as one space-separated line
list() { tr -d '\n ' <"$1" | sed -n "s/.*\"$2\":\[\([^]]*\)\].*/\1/p" | tr ',' ' '; }
n=0
for d in tests/fixtures/families/bert/*/; do
    d=${d%/}
    [ -f "$d/tokenizer.json" ] || continue
    name=$(basename "$d")
    case $name in
        bert-*) text='The capital of France is [MASK].' ;;
        roberta-*) text='The capital of France is <mask>. <mask>!' ;;
        *) bad "$name: no text for this fixture"; continue ;;
    esac
    n=$((n + 1))
    want_ids=$(tr -d '\n ' <"$d/ref.json" | sed -n 's/.*"ids":\[\([^]]*\)\],"n_layer".*/\1/p' | tr ',' ' ')
    pos=$(tr -d '\n ' <"$d/ref.json" | sed -n 's/.*"top_at":{"pos":\([0-9]*\).*/\1/p')
    top_ids=$(tr -d '\n ' <"$d/ref.json" | sed -n 's/.*"top_at":{[^}]*"ids":\[\([^]]*\)\].*/\1/p' | tr ',' ' ')
    top_p=$(tr -d '\n ' <"$d/ref.json" | sed -n 's/.*"top_at":{[^}]*"probs":\[\([^]]*\)\].*/\1/p' | tr ',' ' ')

    run --model "$d" --print tokens "$text"
    got=$(cut -f1 "$TMP/out" | tr '\n' ' ' | sed 's/ $//')
    if [ $rc = 0 ] && [ "$got" = "$want_ids" ] && [ ! -s "$TMP/err" ]; then ok "$name: --print tokens ($want_ids)"
    else bad "$name: --print tokens (rc $rc): got \"$got\", want \"$want_ids\"; $(head -c 300 "$TMP/err")"; fi

    run --model "$d" --print predictions "$text"
    cp "$TMP/out" "$TMP/blank"
    if [ $rc = 0 ] && [ "$(cut -f1 "$TMP/out" | tr '\n' ' ' | sed 's/ $//')" = "$top_ids" ] &&
       awk -F'\t' -v want="$top_p" 'BEGIN { n = split(want, w, " ") }
            { d = $2 - w[NR]; if (d < 0) d = -d; if (d > 2e-6) bad = 1 }
            END { exit !(bad == 0 && NR == n) }' "$TMP/out"
    then ok "$name: --print predictions fills the blank at position $((pos + 1)) as the reference"
    else bad "$name: predictions (rc $rc): $(tr '\n' ' ' <"$TMP/out" | head -c 300) want ids $top_ids"; fi

    run --model "$d" --print predictions --query $((pos + 1)) "$text"
    if [ $rc = 0 ] && cmp -s "$TMP/out" "$TMP/blank"; then ok "$name: --query $((pos + 1)) gives the same"
    else bad "$name: --query $((pos + 1)) (rc $rc) differs"; fi

    # the first row of layer 1 head 1: keys after the query weigh (no mask)
    run --model "$d" --print csv --layer 1 --head 1 "$text"
    if [ $rc = 0 ] && awk -F, 'NR == 2 { for (i = 3; i <= NF; i++) s += $i } END { exit !(s > 0) }' "$TMP/out"
    then ok "$name: the maps are full squares"
    else bad "$name: --print csv (rc $rc): $(head -c 300 "$TMP/out$TMP/err")"; fi

    run --model "$d" --generate 3 "$text"
    if [ $rc = 1 ] && grep -q "is an encoder: it fills a blank" "$TMP/err" && [ ! -s "$TMP/out" ]
    then ok "$name: --generate is refused by name (exit 1)"
    else bad "$name: --generate (rc $rc): $(head -c 300 "$TMP/err")"; fi
done
[ "$n" -ge 2 ] || bad "fewer than 2 encoder fixtures with a tokenizer ($n)"
echo "encoders-cli: $n folders, $pass passed, $failed failed"
[ "$failed" = 0 ]
