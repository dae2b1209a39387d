#!/usr/bin/env bash
# The Llama family on the command line (issue 27): a fixture's weights beside
# a tokenizer open with --model as GPT-2's do (--print, --export-attention
# read back unchanged), and bad folders exit 1 with a line starting
# "attnviz" naming what is wrong (never 2). Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-llamacli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
# folder NAME FIXTURE: the fixture's files (copied: some are edited) and a tokenizer
folder() {
    mkdir -p "$TMP/$1"
    cp tests/fixtures/llama/"$2"/*.json tests/fixtures/llama/"$2"/*.safetensors "$TMP/$1/"
    rm -f "$TMP/$1/ref.json"
    cp tests/fixtures/gpt2/f16-h5/vocab.json tests/fixtures/gpt2/f16-h5/merges.txt "$TMP/$1/"
}
TEXT='ABBA!"#$%CD'

folder ok qwen2-kv2-bf16
run --model "$TMP/ok" --print tokens "$TEXT"
n=$(wc -l <"$TMP/out")
run --model "$TMP/ok" --print csv --layer 2 --head 3 "$TEXT"
if [ $rc = 0 ] && [ "$n" -gt 3 ] && [ "$(wc -l <"$TMP/out")" = $((n + 1)) ]; then ok "a Qwen2 (bf16) model: --print csv"; else bad "--print csv (rc $rc): $(cat "$TMP/err")"; fi
cp "$TMP/out" "$TMP/want.csv"
run --model "$TMP/ok" --export-attention "$TMP/a.npz" "$TEXT"
run "$TMP/a.npz" --print csv --layer 2 --head 3
if [ $rc = 0 ] && cmp -s "$TMP/out" "$TMP/want.csv"; then ok "--export-attention .npz read back unchanged"
else bad "the .npz read back (rc $rc): $(diff "$TMP/out" "$TMP/want.csv" | head -3)"; fi
run --model "$TMP/ok" --print predictions "$TEXT"
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 10 ]; then ok "--print predictions: 10 lines"; else bad "predictions (rc $rc)"; fi

# refused, exit 1: edit config.json with python (json in, json out)
edit() { python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); $2; json.dump(c, open(p,'w'))" "$TMP/$1/config.json"; }
expect() { # name, what the message must hold, args
    local name=$1 want=$2; shift 2
    run "$@"
    if [ $rc = 1 ] && grep -q '^attnviz' "$TMP/err" && grep -qF -- "$want" "$TMP/err"; then ok "$name (exit 1)"
    else bad "$name: rc $rc, $(head -2 "$TMP/err")"; fi
}
folder rope llama3-rope-mha; edit rope "c['rope_scaling']['rope_type']='yarn'"
expect "an unknown rope type" yarn --model "$TMP/rope" "$TEXT"
folder ft llama-kv1-tied; edit ft "c['model_type']='falcon'"
expect "another model_type, named with those computed" 'falcon' --model "$TMP/ft" "$TEXT"
grep -qF 'llama, qwen2, mistral' "$TMP/err" && ok "... the message lists llama, qwen2, mistral" || bad "the known types: $(cat "$TMP/err")"
folder kv llama-kv1-tied; edit kv "c['num_key_value_heads']=3"
expect "heads not divisible by key-value heads" num_key_value_heads --model "$TMP/kv" "$TEXT"
folder shape llama-kv1-tied; edit shape "c['num_key_value_heads']=2"
expect "a tensor whose shape disagrees, both shapes named" 'k_proj' --model "$TMP/shape" "$TEXT"
grep -q 'expected, \[' "$TMP/err" && ok "... with the expected and the found shape" || bad "shapes: $(cat "$TMP/err")"
folder untied llama-kv1-tied; edit untied "c['tie_word_embeddings']=False"
expect "untied without lm_head.weight" lm_head --model "$TMP/untied" "$TEXT"
folder shard mistral-sharded; rm "$TMP"/shard/model-00002-of-00002.safetensors
expect "a shard the index lists but the folder lacks" model-00002-of-00002.safetensors --model "$TMP/shard" "$TEXT"
folder idx mistral-sharded; echo '{"weight_map": ' >"$TMP/idx/model.safetensors.index.json"
expect "an index that is not JSON" 'model.safetensors.index.json' --model "$TMP/idx" "$TEXT"

# a sliding window (mistral, 4 keys): the keys before it masked ("-"), as the
# causal ones, in --print text, and exactly 0 in the CSV; the rest weighted
folder win mistral-window
run --model "$TMP/win" --print text --layer 2 --head 3 "$TEXT"
last=$(tail -n 1 "$TMP/out")
# the last row (query 8 of 8): keys 1-4 outside the window, 5-8 inside
if [ $rc = 0 ] && echo "$last" | awk '{ n = NF; ok = ($(n-7) == "-" && $(n-4) == "-" && $(n-3) != "-" && $(n) != "-") } END { exit !ok }'
then ok "a sliding window's keys masked in --print text"; else bad "the window in --print text (rc $rc): $last"; fi
run --model "$TMP/win" --print csv --layer 2 --head 3 "$TEXT"
if [ $rc = 0 ] && awk -F, 'END { exit !($2 == 0 && $5 == 0 && $6 > 0) }' "$TMP/out"; then ok "masked window cells are 0 in the CSV"
else bad "the window in the CSV (rc $rc): $(tail -n 1 "$TMP/out")"; fi

echo "llama-cli: $pass passed, $failed failed"
[ "$failed" = 0 ]
