#!/usr/bin/env bash
# An encoder-decoder on the command line (issue 36): each fixture with a
# cli.json (tests/fixtures/families/{t5,bart,marian}/*/, its stand-in WordPiece
# tokenizer.json) opened with --model, the text the source and --target the
# decoder's text: --print tokens gives the source's ids (the template's
# included); --print predictions the float64 reference's 10 most likely
# tokens after the decoder's last position (ids exact, probabilities 2e-6);
# --print csv (cross by default) its cross map of layer 1 head 1, target
# rows x source columns (1e-5), the decoder's start token first; --group
# decoder a causal square, --group encoder a full one; --export-attention
# a .npz of encoder, decoder, cross, source_tokens and target_tokens (read
# with Debian's python3 and numpy) that `attnviz FILE.npz --group G` reads
# back to the same --print csv. Without --target, cross's one row and a note
# on stderr naming --group encoder. Bad input: --target
# on a decoder-only model or an encoder (exit 2 naming --target), --target
# without --model (exit 2), a target with no source, --generate or --print
# logit-lens on an encoder-decoder (exit 1), --group with
# a wrong name or on a .npy (exit 2); a Marian folder with only SentencePiece's
# source.spm / target.spm (exit 1 naming them); a Unigram tokenizer whose
# unk_id is null meeting a character it lacks (exit 1 naming it, as Hugging
# Face's tokenizers refuses it). Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-encdec.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
# cli.json's list "key" as one space-separated line
list() { tr -d '\n ' <"$1" | sed -n "s/.*\"$2\":\[\([^]]*\)\].*/\1/p" | tr ',' ' '; }
n=0
for d in tests/fixtures/families/t5/*/ tests/fixtures/families/bart/*/ tests/fixtures/families/marian/*/; do
    d=${d%/}
    [ -f "$d/cli.json" ] || continue
    name=$(basename "$d")
    n=$((n + 1))
    src=$(sed -n 's/^ "source": "\(.*\)",$/\1/p' "$d/cli.json")
    tgt=$(sed -n 's/^ "target": "\(.*\)",$/\1/p' "$d/cli.json")
    want_ids=$(list "$d/cli.json" source_ids)
    dec_ids=$(list "$d/cli.json" decoder_ids)
    top_ids=$(list "$d/cli.json" top_ids)
    top_p=$(list "$d/cli.json" top_probs)

    run --model "$d" --print tokens "$src"
    got=$(cut -f1 "$TMP/out" | tr '\n' ' ' | sed 's/ $//')
    if [ $rc = 0 ] && [ "$got" = "$want_ids" ] && [ ! -s "$TMP/err" ]; then ok "$name: --print tokens: the source's ($want_ids)"
    else bad "$name: --print tokens (rc $rc): got \"$got\", want \"$want_ids\"; $(head -c 300 "$TMP/err")"; fi

    run --model "$d" --target "$tgt" --print predictions "$src"
    if [ $rc = 0 ] && [ "$(cut -f1 "$TMP/out" | tr '\n' ' ' | sed 's/ $//')" = "$top_ids" ] &&
       awk -F'\t' -v want="$top_p" 'BEGIN { n = split(want, w, " ") }
            { d = $2 - w[NR]; if (d < 0) d = -d; if (d > 2e-6) bad = 1 }
            END { exit !(bad == 0 && NR == n) }' "$TMP/out"
    then ok "$name: --print predictions after the decoder's last position as the reference"
    else bad "$name: predictions (rc $rc): $(cat "$TMP/out" "$TMP/err" | tr "\n" " " | head -c 300) want ids $top_ids"; fi

    # the cross map, layer 1 head 1: rows the decoder's ids, columns the source's
    run --model "$d" --target "$tgt" --print csv --layer 1 --head 1 "$src"
    tr -d '\n ' <"$d/cli.json" | sed -n 's/.*"cross_l1h1":\[\[\([^"]*\)\]\],.*/\1/p' | sed 's/\],\[/\n/g' >"$TMP/want"
    rows=$(($(wc -l <"$TMP/out") - 1))
    if [ $rc = 0 ] && [ "$rows" = "$(echo "$dec_ids" | wc -w)" ] &&
       [ "$(head -n 1 "$TMP/out" | awk -F, '{ print NF - 1 }')" = "$(echo "$want_ids" | wc -w)" ] &&
       awk -F, 'NR == FNR { for (j = 1; j <= NF; j++) w[FNR, j] = $j; n = NF; next }
                FNR > 1 { for (j = 2; j <= NF; j++) { d = $j - w[FNR - 1, j - 1]; if (d < 0) d = -d; if (d > 1e-5) bad = 1 }; m++ }
                END { exit !(bad == 0 && m > 0) }' "$TMP/want" "$TMP/out"
    then ok "$name: --print csv: the cross map (target x source) as the reference"
    else bad "$name: cross csv (rc $rc, $rows rows): $(cat "$TMP/out" "$TMP/err" | head -c 400)"; fi

    # the decoder's maps: a triangle; the encoder's: a full square
    run --model "$d" --target "$tgt" --group decoder --print csv --layer 1 --head 1 "$src"
    if [ $rc = 0 ] && awk -F, 'NR == 2 { for (i = 3; i <= NF; i++) s += $i } END { exit !(s == 0 && NR > 2) }' "$TMP/out"
    then ok "$name: --group decoder: causal"
    else bad "$name: --group decoder (rc $rc): $(cat "$TMP/out" "$TMP/err" | head -c 300)"; fi
    run --model "$d" --target "$tgt" --group encoder --print csv --layer 1 --head 1 "$src"
    if [ $rc = 0 ] && [ "$(($(wc -l <"$TMP/out") - 1))" = "$(echo "$want_ids" | wc -w)" ] &&
       awk -F, 'NR == 2 { for (i = 3; i <= NF; i++) s += $i } END { exit !(s > 0) }' "$TMP/out"
    then ok "$name: --group encoder: the source's full square"
    else bad "$name: --group encoder (rc $rc): $(cat "$TMP/out" "$TMP/err" | head -c 300)"; fi

    # --export-attention: the three groups and both token lists in the .npz
    run --model "$d" --target "$tgt" --export-attention "$TMP/$name.npz" "$src"
    if [ $rc = 0 ] && /usr/bin/python3 - "$TMP/$name.npz" "$d/cli.json" <<'PYEOF'
import json, sys
import numpy as np
with np.load(sys.argv[1], allow_pickle=False) as z:
    r = json.load(open(sys.argv[2]))
    Ts, Tt = len(r['source_ids']), len(r['decoder_ids'])
    e, d, c = z['encoder'], z['decoder'], z['cross']
    ok = sorted(z.files) == ['cross', 'decoder', 'encoder', 'source_tokens', 'target_tokens']
    ok = ok and e.shape[2:] == (Ts, Ts) and d.shape[2:] == (Tt, Tt) and c.shape[2:] == (Tt, Ts)
    ok = ok and len(z['source_tokens']) == Ts and len(z['target_tokens']) == Tt
    ok = ok and np.abs(c[0, 0] - np.array(r['cross_l1h1'])).max() < 1e-5
    ok = ok and np.triu(d, 1).max() == 0 and np.triu(e[:, :, :, :], 1).max() > 0
    sys.exit(0 if ok else 1)
PYEOF
    then ok "$name: --export-attention: encoder, decoder, cross and the token lists"
    else bad "$name: --export-attention (rc $rc): $(head -c 300 "$TMP/err")"; fi

    # read back: attnviz FILE.npz --group G prints what the model printed
    same=1
    for grp in cross encoder decoder; do
        "$BIN" --model "$d" --target "$tgt" --group $grp --print csv --layer 2 --head 2 "$src" >"$TMP/a" 2>&1 &&
            "$BIN" "$TMP/$name.npz" --group $grp --print csv --layer 2 --head 2 >"$TMP/b" 2>&1 &&
            cmp -s "$TMP/a" "$TMP/b" || same=0
    done
    "$BIN" "$TMP/$name.npz" --print csv --layer 2 --head 2 >"$TMP/c" 2>&1 || same=0
    "$BIN" --model "$d" --target "$tgt" --print csv --layer 2 --head 2 "$src" >"$TMP/a" 2>&1 || same=0
    if [ $same = 1 ] && cmp -s "$TMP/a" "$TMP/c"; then ok "$name: the .npz read back with --group (cross without it) prints the model's maps"
    else bad "$name: the .npz read back differs: $(head -c 300 "$TMP/b")"; fi

    run --model "$d" --target "$tgt" --print predictions ""
    if [ $rc = 1 ] && grep -q "a target with no source" "$TMP/err" && [ ! -s "$TMP/out" ]
    then ok "$name: a target with no source is refused (exit 1)"
    else bad "$name: a target with no source (rc $rc): $(head -c 300 "$TMP/err")"; fi
done
[ "$n" -ge 6 ] || bad "fewer than 6 encoder-decoder fixtures with a cli.json ($n)"

# no --target: cross-attention (the default group) is the start token's one
# row, said on stderr once, naming --group encoder; not said when cross is chosen
d=tests/fixtures/families/t5/t5-relu-tied
run --model "$d" --print csv --layer 1 --head 1 "the house"
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 2 ] && grep -q "no --target: cross-attention is the decoder start token's one row; --group encoder" "$TMP/err"
then ok "no --target: one cross row and a note naming --group encoder"
else bad "no --target (rc $rc): $(cat "$TMP/out" "$TMP/err" | head -c 300)"; fi
run --model "$d" --group cross --print csv --layer 1 --head 1 "the house"
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 2 ] && [ ! -s "$TMP/err" ]
then ok "no --target, --group cross chosen: no note"
else bad "--group cross without --target (rc $rc): $(head -c 300 "$TMP/err")"; fi

# Marian as Helsinki-NLP ships it: SentencePiece's files, vocab.json, no tokenizer.json
mkdir "$TMP/opus" && cp tests/fixtures/families/marian/marian-swish-tied/{config.json,model.safetensors} "$TMP/opus" &&
    : >"$TMP/opus/source.spm" && : >"$TMP/opus/target.spm" && echo '{"</s>": 0}' >"$TMP/opus/vocab.json"
run --model "$TMP/opus" --target "das haus" --print predictions "the house"
if [ $rc = 1 ] && grep -q "no tokenizer.json: the tokenizer is SentencePiece's source.spm, target.spm only.*writes tokenizer.json" "$TMP/err" && [ ! -s "$TMP/out" ]
then ok "a Marian folder without tokenizer.json refused naming source.spm (exit 1)"
else bad "a Marian folder without tokenizer.json (rc $rc): $(head -c 300 "$TMP/err")"; fi

# a Unigram tokenizer without an unknown piece (unk_id null) meeting a character
# it lacks: Hugging Face's tokenizers refuses the text, so does attnviz (the
# source, and the target), naming the character; the rest of the text works
mkdir "$TMP/nounk" && cp tests/fixtures/families/t5/t5-unigram/{config.json,model.safetensors} "$TMP/nounk" &&
    cp tests/fixtures/hftok/unigram_nounk.json "$TMP/nounk/tokenizer.json"
for args in "--print tokens" "--print csv" "--target x --print predictions" "--target zΩ --print predictions"; do
    text="the cat Ω sat"
    case $args in *zΩ*) text="the cat" ;; esac
    # shellcheck disable=SC2086
    run --model "$TMP/nounk" $args "$text"
    if [ $rc = 1 ] && grep -q "“Ω” U+03A9 has no piece in the Unigram vocabulary and tokenizer.json's unk_id is null" "$TMP/err" &&
       [ ! -s "$TMP/out" ]
    then ok "unk_id null: $args refuses Ω by name (exit 1)"
    else bad "unk_id null: $args (rc $rc): $(cat "$TMP/out" "$TMP/err" | head -c 300)"; fi
done
run --model "$TMP/nounk" --print tokens "the cat sat"
if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" -gt 2 ]; then ok "unk_id null: a text it covers encodes"
else bad "unk_id null: a covered text (rc $rc): $(head -c 300 "$TMP/err")"; fi

for d in tests/fixtures/families/bert/bert-wordpiece-mask tests/fixtures/gpt2/f32-h3; do
    run --model "$d" --target "x" --print predictions "the cat"
    if [ $rc = 2 ] && grep -q -- "--target: .* is not an encoder-decoder" "$TMP/err" && [ ! -s "$TMP/out" ]
    then ok "$(basename "$d"): --target refused by name (exit 2)"
    else bad "$(basename "$d"): --target (rc $rc): $(head -c 300 "$TMP/err")"; fi
done
for what in "--generate 3" "--print logit-lens"; do
    # shellcheck disable=SC2086
    run --model tests/fixtures/families/t5/t5-relu-tied $what "the house"
    if [ $rc = 1 ] && grep -q -- "${what%% [0-9]*}: t5-relu-tied (t5) is an encoder-decoder" "$TMP/err" && [ ! -s "$TMP/out" ]
    then ok "$what on an encoder-decoder refused by name (exit 1)"
    else bad "$what on an encoder-decoder (rc $rc): $(cat "$TMP/out" "$TMP/err" | head -c 300)"; fi
done
run --target "x" --print csv "the cat"
if [ $rc = 2 ] && grep -q -- "--target .* needs --model" "$TMP/err"; then ok "--target without --model (exit 2)"
else bad "--target without --model (rc $rc): $(head -c 300 "$TMP/err")"; fi
run --model tests/fixtures/families/t5/t5-relu-tied --group both --print csv "the cat"
if [ $rc = 2 ] && grep -q -- "--group must be encoder, decoder or cross" "$TMP/err"; then ok "--group both (exit 2)"
else bad "--group both (rc $rc): $(head -c 300 "$TMP/err")"; fi
run --model tests/fixtures/gpt2/f32-h3 --export-attention "$TMP/gpt2.npy" "the cat"
run "$TMP/gpt2.npy" --group encoder --print csv
if [ $rc = 2 ] && grep -q -- "--group encoder picks an encoder-decoder's maps in its .npz" "$TMP/err"
then ok "--group on a .npy (exit 2)"; else bad "--group on a .npy (rc $rc): $(head -c 300 "$TMP/err")"; fi
echo "encdec-cli: $n folders, $pass passed, $failed failed"
[ "$failed" = 0 ]
