#!/usr/bin/env bash
# The shipped language model shakespeare-tiny (issue 38): found by its short
# name with no Hugging Face cache (HF_HOME, HF_HUB_CACHE and HOME pointed at
# an empty folder), its own byte-level vocabulary (not GPT-2's), and what
# real language models show: the induction probe (--seed 1, 2 and 3) finds a
# previous-token head (previous >= 0.5) and an induction head (induction >=
# 0.5); the speaker's name is copied when it comes again. The held-out loss against the bigram is
# computed by tests/tools/shakespeare_tiny/train.py, which trains the model
# (a test here would retrain it). Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-shakespeare.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
# no Hugging Face cache anywhere: the model must come from attnviz's own data
mkdir -p "$TMP/home"
run() { env -u HF_HUB_CACHE HF_HOME="$TMP/home/hf" HOME="$TMP/home" \
        "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
M=shakespeare-tiny

run --model $M --print tokens "To be, or not to be: that is the question."
if [ "$rc" = 0 ] && [ "$(sed -n 2p "$TMP/out" | cut -f2)" = '" be"' ] && [ "$(wc -l <"$TMP/out")" -le 16 ]; then
    ok "--model $M opens with empty Hugging Face caches; whole words are tokens"
else bad "--model $M tokens: exit $rc $(head -c 300 "$TMP/err") $(head -c 300 "$TMP/out")"; fi

# its own vocabulary: 2048 ids, <|endoftext|> the last; GPT-2's is 50257
if grep -q '"vocab_size": 2048' assets/models/$M/config.json &&
   grep -q '"<|endoftext|>": 2047' assets/models/$M/vocab.json; then
    ok "its own byte-level BPE vocabulary (2048 ids)"
else bad "vocabulary: not the model's own 2048 ids"; fi

# the induction probe: a previous-token head and an induction head, every seed
for seed in 1 2 3; do
    run --model $M --probe induction --seed $seed --print head-scores
    if [ "$rc" != 0 ]; then bad "probe seed $seed: exit $rc $(head -c 300 "$TMP/err")"; continue; fi
    best=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { if ($c["previous"] > p) { p = $c["previous"]; ph = "L" $1 " H" $2 }
          if ($c["induction"] > n) { n = $c["induction"]; nh = "L" $1 " H" $2 } }
        END { printf "%s %.3f %s %.3f %d", ph, p, nh, n, (p >= 0.5 && n >= 0.5) }' "$TMP/out")
    if [ "${best##* }" = 1 ]; then ok "probe seed $seed: previous-token head and induction head: ${best% *}"
    else bad "probe seed $seed: best previous / induction heads ${best% *} (both must be >= 0.5)"; fi
done

# a line of Richard II with the speaker's name again at its end: the name
# said before comes next, copied from earlier in the text
run --model $M --print predictions "KING RICHARD II:
Good uncle, tell me.

KING"
if [ "$rc" = 0 ] && [ "$(head -1 "$TMP/out" | cut -f3)" = '" RICHARD"' ]; then
    ok "the repeated speaker's name comes next: $(head -1 "$TMP/out" | cut -f2,3)"
else bad "predictions: exit $rc $(head -3 "$TMP/out") $(head -c 300 "$TMP/err")"; fi

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
