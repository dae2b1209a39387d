#!/usr/bin/env bash
# --generate on the command line (issue 37, item 1), on the shipped sorter
# (nano-sort: 11 positions) and a GPT-2 fixture: the continuation alone,
# --print tokens with its g column, other --print and --export on the text
# with its continuation, greedy = the step-by-step argmax of --print
# predictions, sampling the same for a seed, the stop at the eos token, and
# bad input (exit 1 naming the limit, 2 for usage; nothing on stdout). Run
# from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-generate.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
F=tests/fixtures/gpt2/f32-h3

# the sorter sorts: CBABBC, then its letters in order (6 + 5 = all 11 positions)
run --model nano-sort --generate 5 CBABBC
if [ $rc = 0 ] && [ "$(cat "$TMP/out")" = ABBBC ] && [ "$(wc -l <"$TMP/out")" = 1 ] && [ ! -s "$TMP/err" ]; then
    ok "--generate 5: the continuation on one line (T + N = n_positions works)"
else bad "--generate 5 (rc $rc): $(cat "$TMP/out" "$TMP/err")"; fi

run --model nano-sort --generate 0 CBABBC
if [ $rc = 0 ] && [ "$(cat "$TMP/out")" = "" ] && [ "$(wc -l <"$TMP/out")" = 1 ]; then ok "--generate 0: an empty line"
else bad "--generate 0 (rc $rc)"; fi

run --model nano-sort --generate 5 --print tokens CBABBC
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 11 ] && [ "$(grep -c $'\tg$' "$TMP/out")" = 5 ] &&
   [ "$(head -6 "$TMP/out" | grep -c $'\tg$')" = 0 ] && [ "$(sed -n 7p "$TMP/out")" = $'0\t"A"\tg' ] &&
   [ "$(awk -F'\t' 'NR <= 6 { print NF }' "$TMP/out" | sort -u)" = 2 ]; then
    ok "--print tokens: the text's lines as before, the generated ones with a third column g"
else bad "--print tokens (rc $rc): $(tr '\n' ' ' <"$TMP/out")"; fi

# greedy: each token the most likely after the text so far (--print predictions' first line)
text=CBABBC; cont=""
for step in 1 2 3 4 5; do
    run --model nano-sort --print predictions "$text"
    next=$(head -1 "$TMP/out" | cut -f3 | tr -d '"')
    text="$text$next"; cont="$cont$next"
done
run --model nano-sort --generate 5 CBABBC
if [ "$(cat "$TMP/out")" = "$cont" ]; then ok "greedy: each token is --print predictions' first after the text so far ($cont)"
else bad "greedy $(cat "$TMP/out") against the predictions' $cont"; fi

# other --print and --export work on the text with its continuation
run --model nano-sort --generate 3 --print csv --layer 3 --head 1 CBABBC
if [ $rc = 0 ] && [ "$(head -1 "$TMP/out")" = "query,C,B,A,B,B,C,A,B,B" ] && [ "$(wc -l <"$TMP/out")" = 10 ]; then
    ok "--print csv: the maps of the text and its 3 tokens"
else bad "--print csv (rc $rc): $(head -1 "$TMP/out")"; fi
run --model nano-sort --print csv --layer 3 --head 1 CBABBCABB
if cmp -s "$TMP/out" <("$BIN" --model nano-sort --generate 3 --print csv --layer 3 --head 1 CBABBC 2>/dev/null); then
    ok "--print csv: the same maps as the whole text typed"
else bad "--print csv of the continued text differs from the typed one"; fi
run --model nano-sort --generate 5 --print predictions CBABBC
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 3 ]; then ok "--print predictions after the last generated token"
else bad "--print predictions (rc $rc)"; fi
run --model nano-sort --generate 2 --export "$TMP/m.svg" --export-attention "$TMP/a.npy" CBABBC
if [ $rc = 0 ] && [ ! -s "$TMP/out" ] && grep -q 'nano-sort: “CBABBCAB”' "$TMP/m.svg" &&
   "$BIN" "$TMP/a.npy" --print csv 2>/dev/null | head -1 | grep -q '^query\(,[^,]*\)\{8\}$'; then
    ok "--export and --export-attention: the text with its continuation (the title quotes it), nothing printed"
else bad "--export with --generate (rc $rc): $(grep -o '<title>[^<]*' "$TMP/m.svg" | head -1)"; fi

# sampling: the same tokens for a seed, others for other seeds
run --model $F --generate 12 --sample --temperature 2 --seed 11 "AB1"; a=$(cat "$TMP/out")
run --model $F --generate 12 --sample --temperature 2 --seed 11 "AB1"; b=$(cat "$TMP/out")
others=""
for s in 12 13 14 15; do others="$others$("$BIN" --model $F --generate 12 --sample --temperature 2 --seed $s AB1 2>/dev/null)|"; done
if [ $rc = 0 ] && [ -n "$a" ] && [ "$a" = "$b" ] && [ "$(tr '|' '\n' <<<"$others" | grep -cxF -- "$a")" -lt 4 ]; then
    ok "--sample --seed: the same continuation twice ($a), others from other seeds"
else bad "--sample (rc $rc): '$a' '$b' / $others"; fi
run --model $F --generate 8 --sample --top-k 1 --seed 3 "AB1"; k1=$(cat "$TMP/out")
run --model $F --generate 8 "AB1"
if [ "$k1" = "$(cat "$TMP/out")" ]; then ok "--top-k 1 is greedy"; else bad "--top-k 1 '$k1' against greedy '$(cat "$TMP/out")'"; fi

# the eos token (63, <|endoftext|>) ends the continuation early
stopped=""
for s in $(seq 0 30); do
    out=$("$BIN" --model $F --generate 12 --sample --temperature 2 --seed $s AB1 2>/dev/null)
    if [[ "$out" == *"<|endoftext|>" ]]; then stopped=$s; break; fi
done
if [ -n "$stopped" ]; then
    run --model $F --generate 12 --sample --temperature 2 --seed "$stopped" --print tokens AB1
    if [ "$(tail -1 "$TMP/out")" = $'63\t"<|endoftext|>"\tg' ] && [ "$(wc -l <"$TMP/out")" -lt 15 ]; then
        ok "the eos token ends the continuation (seed $stopped: $(grep -c $'\tg$' "$TMP/out") tokens of 12)"
    else bad "eos (seed $stopped): $(tail -2 "$TMP/out")"; fi
else bad "no seed of 0-30 stopped at the eos token"; fi

# every end-of-text id ends it: a list's later ones (Llama 3 Instruct lists
# three), generation_config.json's (chat models list theirs there)
L=tests/fixtures/llama/llama3-tok
run --model $L --generate 8 --print tokens "the train"
gen=$(grep $'\tg$' "$TMP/out" | cut -f1 | tr '\n' ' ')
third=$(cut -d' ' -f3 <<<"$gen")
if [ $rc = 0 ] && [ -n "$third" ] && ! cut -d' ' -f1,2 <<<"$gen" | grep -qw "$third"; then
    for d in list gen; do mkdir -p "$TMP/$d" && cp $L/config.json $L/model.safetensors $L/tokenizer.json "$TMP/$d/"; done
    sed -i "s/\"eos_token_id\": 661/\"eos_token_id\": [661, 660, $third]/" "$TMP/list/config.json"
    printf '{"bos_token_id": 660, "eos_token_id": [661, %s]}\n' "$third" >"$TMP/gen/generation_config.json"
    for d in list gen; do
        run --model "$TMP/$d" --generate 8 --print tokens "the train"
        if [ $rc = 0 ] && [ "$(grep -c $'\tg$' "$TMP/out")" = 3 ] && [ "$(tail -1 "$TMP/out" | cut -f1)" = "$third" ]; then
            ok "eos ids in $d: generation ends at the third token ($third), a later id of the list"
        else bad "eos ids in $d (rc $rc): $(grep $'\tg$' "$TMP/out" | cut -f1 | tr '\n' ' ') $(cat "$TMP/err")"; fi
    done
else bad "greedy --generate 8 (rc $rc): no third token unlike the first two: $gen"; fi

# bad input
run --model nano-sort --generate 6 CBABBC
if [ $rc = 1 ] && [ ! -s "$TMP/out" ] && grep -q "11 positions" "$TMP/err" && grep -q "at most --generate 5" "$TMP/err"; then
    ok "T + N past n_positions: exit 1 naming the limit"
else bad "--generate 6 (rc $rc): $(cat "$TMP/err")"; fi
run --model nano-sort --generate 99999999999999999999 CBABBC
if [ $rc = 1 ] && [ ! -s "$TMP/out" ] && grep -q "11 positions" "$TMP/err"; then ok "a huge N: exit 1 naming the limit"
else bad "huge N (rc $rc): $(cat "$TMP/err")"; fi
for args in "--generate -1" "--generate x" "--generate 2.5" "--generate ''" "--generate 3 --top-k 2" \
            "--generate 3 --sample --top-k -1" "--sample --print tokens" "--generate 3 --seed 4" "--generate 3 --temperature 2"; do
    eval run --model nano-sort "$args" CBABBC
    if [ $rc = 2 ] && [ ! -s "$TMP/out" ] && grep -q "^attnviz: --" "$TMP/err"; then ok "usage: $args (exit 2)"
    else bad "usage $args (rc $rc): $(head -1 "$TMP/err")"; fi
done
run --generate 3 CBABBC
if [ $rc = 2 ] && grep -q "needs --model" "$TMP/err"; then ok "--generate without --model: exit 2"; else bad "no model (rc $rc)"; fi
run --model nano-sort --generate 3 ""
if [ $rc = 1 ] && [ ! -s "$TMP/out" ] && grep -q "empty" "$TMP/err"; then ok "an empty text: exit 1"; else bad "empty (rc $rc)"; fi

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
