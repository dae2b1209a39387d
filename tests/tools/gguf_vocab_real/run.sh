#!/usr/bin/env bash
# gguf_vocab.c against llama.cpp itself on real vocabularies: the vocabulary
# GGUF files llama.cpp keeps for its own tests (models/ggml-vocab-*.gguf of the
# llama.cpp node-llama-cpp 3.22.1 ships: Llama 3, Qwen2, GPT-2, Llama 2,
# Phi-3, StarCoder, Refact, MPT, Command-R) and some of them with another
# tokenizer.ggml.pre (default, none, smollm, dbrx, qwen2, llama-bpe), on every
# text of texts.py: the ids, and the text decoded both ways (llama.cpp's through
# ctypes, ref.py). Developers only (numpy, the npm package; not `make test`):
# after `make`, from the
# repository root,
#   npm install --no-audit --no-fund --ignore-scripts --omit=optional --prefix /tmp/nlc-tok \
#       node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1
#   NLC=/tmp/nlc-tok bash tests/tools/gguf_vocab_real/run.sh
set -eu
NLC=${NLC:-/tmp/nlc-tok}
OUT=${OUT:-/tmp/gguf_vocab_real}
HERE=tests/tools/gguf_vocab_real
mkdir -p "$OUT"
[ -d "$OUT/lcpp" ] || git clone -q "$NLC/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$OUT/lcpp"
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iinclude -I/usr/include/cjson "$HERE/ids.c" \
    build/obj/src/core/*.o -lcjson -lpcre2-8 -lutf8proc -lm -lpthread -o "$OUT/ids"
/usr/bin/python3 "$HERE/texts.py" "$OUT/lcpp" "$OUT/texts.hex"
fail=0
compare() { # name: llama.cpp's lines against ours
    NLC=$NLC /usr/bin/python3 "$HERE/ref.py" "$OUT/$1.gguf" "$OUT/texts.hex" "$OUT/ref-$1.tsv"
    "$OUT/ids" "$OUT/$1.json" "$OUT/texts.hex" > "$OUT/got-$1.tsv"
    local n d
    n=$(wc -l < "$OUT/ref-$1.tsv")
    d=$(paste "$OUT/ref-$1.tsv" "$OUT/got-$1.tsv" | awk -F'\t' '$1 != $4 || $2 != $5 || $3 != $6' | wc -l)
    echo "$1: $n texts, $d differ"
    [ "$d" = 0 ] || fail=1
}
for v in llama-bpe qwen2 gpt-2 llama-spm phi-3 starcoder refact mpt command-r; do
    cp "$OUT/lcpp/models/ggml-vocab-$v.gguf" "$OUT/$v.gguf"
    /usr/bin/python3 "$HERE/dump.py" "$OUT/lcpp" "$OUT/$v.gguf" "$OUT/$v.json" > /dev/null
    compare "$v"
done
for spec in "gpt-2 default gpt2-default" "gpt-2 - gpt2-nopre" "gpt-2 smollm gpt2-smollm" \
            "llama-bpe dbrx llama-dbrx" "qwen2 llama-bpe qwen-llama3" "llama-bpe qwen2 llama-qwen2"; do
    set -- $spec
    /usr/bin/python3 "$HERE/rewrite.py" "$OUT/$1" "$2" "$OUT/$3"
    compare "$3"
done
[ "$fail" = 0 ] && echo "all equal" || { echo "FAILED"; exit 1; }
