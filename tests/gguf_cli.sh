#!/usr/bin/env bash
# GGUF files on the command line (issue 35): every file of
# tests/fixtures/gguf_models opened by its path, --print tokens,
# predictions, csv, head-scores, --export-attention read back, a PNG (the
# numbers are test_gguf_models's, the ids test_gguf_vocab's); the same file found by name in a fake Ollama store
# ($OLLAMA_MODELS: a manifest naming the blob) and a fake LM Studio one
# (~/.lmstudio/models/PUBLISHER/REPO), bit for bit the same output; and
# the refusals, each exit 1 with a message naming the file or the name and
# nothing on stdout: a name found nowhere (every place looked named), a
# file that is not GGUF, a truncated file, an architecture attnviz does
# not compute, a tensor of a type it does not read, an Ollama manifest
# that is not JSON. Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
export ATTNVIZ_DATADIR=assets
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-gguf.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export HOME=$TMP/home OLLAMA_MODELS=$TMP/ollama
mkdir -p "$HOME"
run() { "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
TEXT='the train left the station'
refused() { # refused WHAT NEEDLE...: exit 1, nothing on stdout, stderr holds each needle
    local what=$1 n
    shift
    if [ $rc != 1 ] || [ -s "$TMP/out" ]; then bad "$what: rc $rc, stdout $(head -c 100 "$TMP/out")"; return; fi
    for n in "$@"; do
        grep -qF -- "$n" "$TMP/err" || { bad "$what: no \"$n\" in: $(head -c 400 "$TMP/err")"; return; }
    done
    ok "$what"
}

n=0
for f in tests/fixtures/gguf_models/*/model.gguf; do
    d=$(dirname "$f")
    name=$(basename "$d")
    n=$((n + 1))
    run --model "$f" --print tokens "$TEXT"
    T=$(wc -l <"$TMP/out")
    if [ $rc = 0 ] && [ "$T" -ge 5 ]; then ok "$name: --print tokens ($T tokens)"
    else bad "$name: --print tokens (rc $rc): $(head -c 300 "$TMP/err")"; continue; fi
    cp "$TMP/out" "$TMP/tokens"

    run --model "$f" --print predictions "$TEXT"
    if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = 10 ]; then ok "$name: --print predictions"
    else bad "$name: --print predictions (rc $rc): $(head -c 300 "$TMP/err")"; fi
    cp "$TMP/out" "$TMP/pred"

    run --model "$f" --print csv --layer 1 --head 2 "$TEXT"
    if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" = $((T + 1)) ]; then ok "$name: --print csv"
    else bad "$name: --print csv (rc $rc): $(head -c 300 "$TMP/err")"; fi
    cp "$TMP/out" "$TMP/want.csv"

    run --model "$f" --print head-scores "$TEXT"
    if [ $rc = 0 ] && [ "$(wc -l <"$TMP/out")" -gt 2 ]; then ok "$name: --print head-scores"
    else bad "$name: --print head-scores (rc $rc): $(head -c 300 "$TMP/err")"; fi

    run --model "$f" --export-attention "$TMP/a.npz" "$TEXT"
    run "$TMP/a.npz" --print csv --layer 1 --head 2
    if [ $rc = 0 ] && cmp -s "$TMP/out" "$TMP/want.csv"; then ok "$name: --export-attention read back"
    else bad "$name: --export-attention read back (rc $rc): $(head -c 300 "$TMP/err")"; fi

    run --model "$f" --export "$TMP/a.png" "$TEXT"
    if [ $rc = 0 ] && [ "$(head -c 4 "$TMP/a.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then ok "$name: --export PNG"
    else bad "$name: --export PNG (rc $rc): $(head -c 300 "$TMP/err")"; fi

    # the same file by name in Ollama's store: a manifest naming the blob
    hex=$(sha256sum "$f" | cut -d' ' -f1)
    mkdir -p "$OLLAMA_MODELS/blobs" "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/$name"
    cp "$f" "$OLLAMA_MODELS/blobs/sha256-$hex"
    printf '{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":%d}]}\n' \
        "$hex" "$(stat -c %s "$f")" >"$OLLAMA_MODELS/manifests/registry.ollama.ai/library/$name/q8"
    run --model "$name:q8" --print predictions "$TEXT"
    if [ $rc = 0 ] && cmp -s "$TMP/out" "$TMP/pred"; then ok "$name: found in Ollama's store as $name:q8"
    else bad "$name: Ollama's store (rc $rc): $(head -c 300 "$TMP/err")"; fi

    # and in LM Studio's
    mkdir -p "$HOME/.lmstudio/models/tests/$name"
    cp "$f" "$HOME/.lmstudio/models/tests/$name/$name-Q8_0.gguf"
    run --model "tests/$name" --print tokens "$TEXT"
    if [ $rc = 0 ] && cmp -s "$TMP/out" "$TMP/tokens"; then ok "$name: found in LM Studio's store as tests/$name"
    else bad "$name: LM Studio's store (rc $rc): $(head -c 300 "$TMP/err")"; fi
done
[ "$n" -ge 3 ] && ok "$n GGUF fixtures" || bad "only $n GGUF fixtures found"

f=$(ls tests/fixtures/gguf_models/*/model.gguf | head -n 1)
run --model no-such-model:7b --print tokens "$TEXT"
refused "a name found nowhere" "no-such-model:7b" "Hugging Face cache" "Ollama's $OLLAMA_MODELS" "LM Studio"

printf 'not a model at all' >"$TMP/x.gguf"
run --model "$TMP/x.gguf" --print tokens "$TEXT"
refused "a file that is not GGUF" "$TMP/x.gguf" "not a GGUF file"

head -c 4000 "$f" >"$TMP/short.gguf"
run --model "$TMP/short.gguf" --print tokens "$TEXT"
refused "a truncated file" "$TMP/short.gguf"

mkdir -p "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/broken"
echo '{"layers": [' >"$OLLAMA_MODELS/manifests/registry.ollama.ai/library/broken/latest"
run --model broken --print tokens "$TEXT"
refused "an Ollama manifest that is not JSON" "manifests/registry.ollama.ai/library/broken/latest"

# a file of another architecture, and one with an i-quant tensor (written
# by tests/tools/gguf_writer.py: plain Python, no numpy)
if command -v python3 >/dev/null 2>&1; then
    python3 - "$TMP" <<'EOF'
import sys
sys.path.insert(0, 'tests/tools')
import gguf_writer as gw
tmp = sys.argv[1]
w = gw.GGUFWriter()
w.add('general.architecture', 'mamba')
w.add_tensor('token_embd.weight', gw.F32, [4, 2], bytes(32))
w.write(tmp + '/mamba.gguf')
w = gw.GGUFWriter()
w.add('general.architecture', 'llama')
for k, v in (('block_count', 1), ('embedding_length', 256), ('feed_forward_length', 256),
             ('attention.head_count', 4), ('context_length', 64)):
    w.add('llama.' + k, v, gw.UINT32)
w.add('llama.attention.layer_norm_rms_epsilon', 1e-5, gw.FLOAT32)
w.add_tensor('token_embd.weight', gw.F32, [256, 8], bytes(256 * 8 * 4))
w.add_tensor('output_norm.weight', gw.F32, [256], bytes(256 * 4))
w.add_tensor('output.weight', gw.F32, [256, 8], bytes(256 * 8 * 4))
w.add_tensor('blk.0.attn_norm.weight', gw.F32, [256], bytes(256 * 4))
w.add_tensor('blk.0.ffn_norm.weight', gw.F32, [256], bytes(256 * 4))
for n, rows in (('attn_q', 256), ('attn_k', 256), ('attn_v', 256), ('attn_output', 256),
                ('ffn_gate', 256), ('ffn_up', 256), ('ffn_down', 256)):
    if n == 'attn_v':  # IQ2_XXS: 66 bytes a block of 256
        w.add_tensor('blk.0.%s.weight' % n, gw.IQ2_XXS, [256, rows], bytes(66 * rows))
    else:
        w.add_tensor('blk.0.%s.weight' % n, gw.F32, [256, rows], bytes(256 * rows * 4))
w.write(tmp + '/iq.gguf')
w = gw.GGUFWriter()
w.add('general.architecture', 'llama')
w.add('llama.embedding_length', 64, gw.UINT32)
w.add('llama.attention.head_count', 4, gw.UINT32)
w.add_tensor('token_embd.weight', gw.F32, [64, 10], bytes(64 * 10 * 4))
w.write(tmp + '/noblocks.gguf')
w.add('llama.block_count', 1, gw.UINT32)
w.add('llama.feed_forward_length', 64, gw.UINT32)
w.write(tmp + '/notensors.gguf')
EOF
    run --model "$TMP/mamba.gguf" --print tokens "$TEXT"
    refused "an architecture attnviz does not compute" "$TMP/mamba.gguf" '"mamba"' "llama" "qwen2"
    run --model "$TMP/iq.gguf" --print tokens "$TEXT"
    refused "a tensor of a type attnviz does not read" "$TMP/iq.gguf" "blk.0.attn_v.weight" "IQ2_XXS"
    run --model "$TMP/noblocks.gguf" --print tokens "$TEXT"
    refused "a missing hyperparameter, named as the file names it" "$TMP/noblocks.gguf" "no llama.block_count"
    run --model "$TMP/notensors.gguf" --print tokens "$TEXT"
    refused "a missing tensor, named as the file would name it" "$TMP/notensors.gguf" "no tensor blk.0."
fi

echo "gguf cli: $pass passed, $failed failed"
[ "$failed" = 0 ]
