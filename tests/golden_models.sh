#!/usr/bin/env bash
# Golden test of the models computed here (issue 33): every GPT-2 and
# Llama-family fixture and nano-sort through --model, printed (tokens,
# predictions at two positions, a map as csv, text and json, head scores)
# and exported (--export-attention .npy, .npz, .safetensors; the grid as
# .svg and .csv), each output's sha256 against tests/golden/models/sums.txt,
# written by this script with MAKE=1 before the runtime was restructured:
# a restructuring changes no byte. Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-goldmodels.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
SUMS=tests/golden/models/sums.txt
TEXT='ABBA!"#$%CD ab'
# the Llama fixtures beside GPT-2's tokenizer files (the fixtures have none)
for d in tests/fixtures/llama/*/; do
    n=$(basename "$d"); [ -f "$d/tokenizer.json" ] && continue
    mkdir -p "$TMP/llama-$n"
    cp "$d"/*.json "$d"/*.safetensors "$TMP/llama-$n/"; rm -f "$TMP/llama-$n/ref.json"
    cp tests/fixtures/gpt2/f16-h5/vocab.json tests/fixtures/gpt2/f16-h5/merges.txt "$TMP/llama-$n/"
done
models="nano-sort"
for d in tests/fixtures/gpt2/*/; do [ -f "$d/config.json" ] && models="$models $d"; done
for d in tests/fixtures/llama/*-tok/ "$TMP"/llama-*/; do models="$models $d"; done
out="$TMP/sums"; : >"$out"
for m in $models; do
    name=$(basename "$m"); t=$TEXT; [ "$name" = nano-sort ] && t=CBABBCAB
    case=0
    one() { # what the case is, then the arguments; the sum of stdout and of each file it wrote
        local what=$1; shift
        case=$((case + 1))
        rm -f "$TMP"/x.*
        "$BIN" --model "$m" "$@" "$t" >"$TMP/stdout" 2>"$TMP/stderr"; local rc=$?
        # an .npz by its members' bytes (the zip's own dates change)
        [ -f "$TMP/x.npz" ] && python3 -c 'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); b=b"".join(z.read(n) for n in sorted(z.namelist())); open(sys.argv[1],"wb").write(b)' "$TMP/x.npz"
        local s; s=$(cat "$TMP/stdout" "$TMP/stderr" "$TMP"/x.* 2>/dev/null | sha256sum | cut -c1-64)
        echo "$name $what rc=$rc $s" >>"$out"
    }
    one tokens --print tokens
    one predictions --print predictions
    one predictions-q2 --print predictions --query 2
    one csv-l0h0 --print csv --layer 1 --head 1
    one csv-avg --print csv --layer avg
    one text --print text --layer 2 --head 1
    one json --print json --layer 1 --head 2
    one head-scores --print head-scores
    one npy --export-attention "$TMP/x.npy"
    one npz --export-attention "$TMP/x.npz"
    one st --export-attention "$TMP/x.safetensors"
    one grid --view grid --export "$TMP/x.svg" --export "$TMP/x.csv"
    one avg-svg --layer 2 --export "$TMP/x.svg"
done
if [ "${MAKE:-0}" = 1 ]; then cp "$out" "$SUMS"; echo "wrote $SUMS ($(wc -l <"$SUMS") cases)"; exit 0; fi
pass=0 failed=0
while read -r name what rest; do
    got=$(grep -F "$name $what " "$out" | head -1)
    if [ "$got" = "$name $what $rest" ]; then pass=$((pass + 1))
    else echo "FAIL - $name $what: want '$rest', got '${got#"$name $what "}'"; failed=$((failed + 1)); fi
done <"$SUMS"
echo "golden models: $pass passed, $failed failed"
[ "$failed" = 0 ]
