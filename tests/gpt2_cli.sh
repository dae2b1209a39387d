#!/usr/bin/env bash
# GPT-2 on the command line (issue 25), on the shipped trained model
# (nano-sort, found among the installed models) and the fixtures: --print
# tokens, predictions, csv; --export-attention read back by the importer
# unchanged; --prepend-bos; errors (exit 1, a line starting "attnviz" that
# names the file or what is wrong; 2 for a usage error). Run from the
# repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-gpt2cli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }

run --model nano-sort --print tokens CBABBC
if [ $rc = 0 ] && [ "$(cut -f1 "$TMP/out" | tr '\n' ' ')" = "2 1 0 1 1 2 " ] && grep -q $'^0\t"A"$' "$TMP/out"; then
    ok "--print tokens: id, a tab, the text as JSON"
else bad "--print tokens (rc $rc): $(head -3 "$TMP/out")"; fi

run --model nano-sort --print tokens ""
if [ $rc = 0 ] && [ ! -s "$TMP/out" ]; then ok "--print tokens of an empty text prints nothing"; else bad "empty text's tokens (rc $rc)"; fi

run --model nano-sort --print tokens "ABCABCABCABCABC"
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 15 ]; then ok "--print tokens is not limited by n_positions (15 > 11)"
else bad "15 tokens (rc $rc, $(wc -l <"$TMP/out") lines)"; fi

run --model nano-sort --print predictions CBABBC
first=$(head -1 "$TMP/out")
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 3 ] && [ "$(cut -f1 <<<"$first")" = 0 ] &&
   awk -F'\t' '{ if ($2 + 0 > 0.9) exit 0; exit 1 }' <<<"$first" && [ "$(cut -f3 <<<"$first")" = '"A"' ]; then
    ok "--print predictions: the sorter's next letter is A (id, probability, text)"
else bad "--print predictions (rc $rc): $first"; fi

run --model nano-sort --print predictions --query 2 CBABBC
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 3 ]; then ok "--print predictions --query 2"; else bad "--query (rc $rc)"; fi

run --model nano-sort --print csv --layer 2 --head 3 CBABBC
if [ $rc = 0 ] && [ "$(head -1 "$TMP/out")" = "query,C,B,A,B,B,C" ] && [ "$(wc -l <"$TMP/out")" = 7 ]; then
    ok "--print csv of layer 2, head 3"
else bad "--print csv (rc $rc): $(head -2 "$TMP/out")"; fi
cp "$TMP/out" "$TMP/want.csv"

# an output row no token has (a padded vocabulary's: here f32-h3's 64 rows
# under a tokenizer of its first 40 tokens) prints "" as its text
mkdir -p "$TMP/pad"
ln -s "$PWD/tests/fixtures/gpt2/f32-h3/config.json" "$PWD/tests/fixtures/gpt2/f32-h3/model.safetensors" "$TMP/pad/"
python3 - tests/fixtures/gpt2/f32-h3 "$TMP/pad" <<'PY'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
vocab = {t: i for t, i in json.load(open(src + "/vocab.json", encoding="utf-8")).items() if i < 40}
lines = open(src + "/merges.txt", encoding="utf-8").read().split("\n")
keep = [lines[0]] + [m for m in lines[1:] if m and all(p in vocab for p in m.split(" ") + [m.replace(" ", "")])]
json.dump(vocab, open(dst + "/vocab.json", "w", encoding="utf-8"), ensure_ascii=False)
open(dst + "/merges.txt", "w", encoding="utf-8").write("\n".join(keep) + "\n")
PY
run --model "$TMP/pad" --print predictions "$(python3 -c 'import json,sys; print("".join(k.replace("\u0120"," ") for k,v in json.load(open(sys.argv[1])).items() if 0 < v < 6))' "$TMP/pad/vocab.json")"
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 10 ] &&
   awk -F'\t' '($1 >= 40) != ($3 == "\"\"") { exit 1 } $1 >= 40 { n++ } END { exit !(n > 0) }' "$TMP/out"; then
    ok "--print predictions: rows without a token print \"\""
else bad "rows without a token (rc $rc): $(tr '\n' ' ' <"$TMP/out"; cat "$TMP/err")"; fi

# a causal model's keys after the query are masked, not 0: "-" in the text,
# hatched with a "masked" key in the figures, whose title quotes the text
run --model nano-sort --print text --layer 1 --head 2 CBABBC
row1=$(sed -n 5p "$TMP/out")
if [ $rc = 0 ] && [ "$(tr -s ' ' <<<"$row1")" = "C 1.000 - - - - -" ]; then ok "--print text: masked keys are -"
else bad "--print text's first row (rc $rc): $row1"; fi
run --model nano-sort --layer 1 --head 2 --export "$TMP/m.svg" CBABBC
if [ $rc = 0 ] && grep -q '>masked<' "$TMP/m.svg" && grep -q 'nano-sort: “CBABBC”' "$TMP/m.svg"; then
    ok "--export .svg: masked cells keyed, the title quotes the text"
else bad "--export .svg (rc $rc): $(grep -o '<title>[^<]*' "$TMP/m.svg" | head -1)"; fi

for ext in npy npz safetensors; do
    run --model nano-sort --export-attention "$TMP/a.$ext" CBABBC
    if [ $rc != 0 ] || [ ! -s "$TMP/a.$ext" ]; then bad "--export-attention .$ext (rc $rc): $(cat "$TMP/err")"; continue; fi
    if [ $ext = npy ]; then
        run "$TMP/a.$ext" --print csv --layer 2 --head 3
        # an .npy holds no tokens: the positions stand for them
        if [ $rc = 0 ] && diff <(tail -n +2 "$TMP/want.csv" | cut -d, -f2-) <(tail -n +2 "$TMP/out" | cut -d, -f2-) >/dev/null
        then ok "--export-attention .npy: the importer reads the same numbers"
        else bad ".npy read back (rc $rc)"; fi
    else
        run "$TMP/a.$ext" --print csv --layer 2 --head 3
        if [ $rc = 0 ] && cmp -s "$TMP/want.csv" "$TMP/out"; then
            ok "--export-attention .$ext: the importer opens it again unchanged (numbers and tokens)"
        else bad ".$ext read back (rc $rc): $(diff "$TMP/want.csv" "$TMP/out" | head -3)"; fi
    fi
done

run --model nano-sort --export "$TMP/m.png" --export "$TMP/m.svg" --export "$TMP/m.csv" --view grid CBABBC
if [ $rc = 0 ] && [ -s "$TMP/m.png" ] && [ -s "$TMP/m.svg" ]; then ok "--export PNG, SVG of every layer and head (--view grid)"
else bad "--export (rc $rc): $(cat "$TMP/err")"; fi

run --model tests/fixtures/gpt2/f32-h3 --prepend-bos --print tokens "ab"
if [ $rc = 0 ] && [ "$(head -1 "$TMP/out")" = $'63\t"<|endoftext|>"' ]; then ok "--prepend-bos: the config's bos token first"
else bad "--prepend-bos (rc $rc): $(head -1 "$TMP/out")"; fi

# bad input: exit 1, "attnviz" and what is wrong
check_err() { # name, expected status, text the message must hold, args...
    local name=$1 want=$2 text=$3
    shift 3
    run "$@"
    if [ $rc = "$want" ] && grep -q "^attnviz" "$TMP/err" && grep -qF -- "$text" "$TMP/err"; then ok "$name (exit $want)"
    else bad "$name: rc $rc, stderr: $(head -2 "$TMP/err")"; fi
}
check_err "a model not found says where and how to get it" 1 "huggingface-cli download" --model no-such-model --print csv x
check_err "an empty text has no maps" 1 "empty" --model nano-sort --print csv ""
check_err "a text of characters the vocabulary lacks names them, not \"empty\"" 1 \
    "no tokens, no maps: the vocabulary has no token for “c”, “b”, “␣”, “a”" --model nano-sort --print predictions "cb a"
# characters the vocabulary lacks: named once each on stderr, the rest printed
run --model nano-sort --print tokens "CBABBCX ab"
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 6 ] &&
   grep -qF 'attnviz: warning: left out of the tokens: “X”, “␣”, “a”, “b” (nano-sort'"'"'s vocabulary has no token for them)' "$TMP/err"
then ok "left-out characters named on stderr (--print tokens)"; else bad "left-out characters (rc $rc): $(cat "$TMP/err")"; fi
run --model nano-sort --print predictions "CBA"
if [ $rc = 0 ] && [ ! -s "$TMP/err" ]; then ok "no warning when every character has a token"; else bad "a warning on CBA: $(cat "$TMP/err")"; fi
check_err "more tokens than n_positions" 1 "11" --model nano-sort --print csv "ABCABCABCABC"
check_err "a folder without a model says what a model folder holds" 1 "tests/fixtures/attention: not a model folder: no config.json" --model tests/fixtures/attention --print csv x
check_err "--print tokens without --model" 2 "--model" --print tokens x
check_err "--model with --keys" 2 "--model" --model nano-sort --keys x --print csv ABC
# a NaN weight: the scores it touches are NaN, the softmax gives such a row
# equal weights (as it always did), so the maps hold no NaN and print
mkdir -p "$TMP/nan" && cp tests/fixtures/gpt2/f32-h3/* "$TMP/nan/"
python3 - "$TMP/nan/model.safetensors" <<'PY'
import json, struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack("<Q", b[:8])[0]
t = json.loads(b[8:8 + n])["transformer.h.0.attn.c_attn.weight"]
b[8 + n + t["data_offsets"][0]:8 + n + t["data_offsets"][0] + 4] = struct.pack("<f", float("nan"))
open(p, "wb").write(b)
PY
run --model "$TMP/nan" --print csv "ABBA"
if [ $rc = 0 ] && [ "$(sed -n 5p "$TMP/out")" = "A,0.25,0.25,0.25,0.25" ] && ! grep -qi nan "$TMP/out"; then
    ok "a NaN weight: rows of equal weights, no NaN printed"
else bad "a NaN weight (rc $rc): $(sed -n 5p "$TMP/out") $(head -1 "$TMP/err")"; fi

echo "gpt2-cli: $pass passed, $failed failed"
[ "$failed" = 0 ]
