#!/usr/bin/env bash
# Build every libFuzzer target into build/fuzz/ and run each one for
# FUZZ_SECONDS (default 60) on a scratch copy of its checked-in corpus
# (tests/fuzz/corpus/<target>/ never grows). Crash, leak, timeout and OOM
# inputs are left as build/fuzz/<target>-crash-*, -leak-*, -timeout-*, -oom-*.
# Exits non-zero when a build fails or any target finds a problem.
#
#   FUZZ_SECONDS=60   seconds per target
#   FUZZ_TARGETS="tokenizer weights"   run only these (default: all)
#   FUZZ_CC=clang     compiler (must support -fsanitize=fuzzer)
#   FUZZ_JOBS=1       targets run at the same time
set -u
cd "$(dirname "$0")/../.." || exit 2

SECS=${FUZZ_SECONDS:-60}
CC=${FUZZ_CC:-clang}
JOBS=${FUZZ_JOBS:-1}
OUT=build/fuzz
ALL_TARGETS="tokenizer sentences weights options embed forward npy npz safetensors attn_json attn_session target_csv st_model gpt2_config llama_config arch_config bpe bpe_files gguf gguf_vocab"
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}

if ! command -v "$CC" >/dev/null 2>&1; then
    echo "fuzz: $CC not found (libFuzzer needs clang; apt-get install clang)" >&2
    exit 2
fi
if ! pkg-config --exists libcjson zlib libzip libutf8proc libpcre2-8; then
    echo "fuzz: libcjson, zlib, libzip, utf8proc or PCRE2 not found (apt-get install libcjson-dev zlib1g-dev libzip-dev libutf8proc-dev libpcre2-dev)" >&2
    exit 2
fi

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra -Iinclude $(pkg-config --cflags libcjson zlib libzip libutf8proc libpcre2-8)"
# src/io/png.c needs zlib and threads, src/io/attn_npz.c libzip, the core's
# pre-tokenizer utf8proc, the bpe targets' check of it PCRE2
LIBS="$(pkg-config --libs libcjson zlib libzip libutf8proc libpcre2-8) -lm -lpthread"
# (not background_single.c and file_map_web.c: the web pages',
# emcc's alone, each defining what its native twin does)
SRC=$(ls src/core/*.c src/io/*.c src/app/options.c |
    grep -v -e '^src/core/background_single\.c$' -e '^src/io/file_map_web\.c$')

mkdir -p "$OUT/obj" || exit 2
echo "fuzz: building library objects with $($CC --version | head -n1)"
objs=()
for f in $SRC; do
    o="$OUT/obj/$(echo "${f%.c}" | tr / _).o"
    if ! $CC $CFLAGS $SAN -fsanitize=fuzzer-no-link -c "$f" -o "$o"; then
        echo "fuzz: cannot compile $f" >&2
        exit 2
    fi
    objs+=("$o")
done
for t in $TARGETS; do
    if [ ! -f "tests/fuzz/fuzz_$t.c" ]; then
        echo "fuzz: no target tests/fuzz/fuzz_$t.c" >&2
        exit 2
    fi
    if ! $CC $CFLAGS $SAN -fsanitize=fuzzer "tests/fuzz/fuzz_$t.c" "${objs[@]}" \
            -o "$OUT/fuzz_$t" $LIBS; then
        echo "fuzz: cannot build fuzz_$t" >&2
        exit 2
    fi
done

run_one() {
    local t=$1 work="$OUT/work/$1"
    rm -rf "$work"
    mkdir -p "$work/corpus"
    if [ -d "tests/fuzz/corpus/$t" ]; then
        cp tests/fuzz/corpus/"$t"/* "$work/corpus/" 2>/dev/null
    fi
    local dict=()
    [ -f "tests/fuzz/$t.dict" ] && dict=("-dict=tests/fuzz/$t.dict")
    # The first directory receives new inputs; the seeds stay read-only.
    "$OUT/fuzz_$t" "$work/corpus" "${dict[@]}" \
        -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$OUT/$t-" -print_final_stats=1 \
        >"$OUT/$t.log" 2>&1
    echo $? >"$work/rc"
}

echo "fuzz: running $TARGETS for ${SECS}s each (logs in $OUT/<target>.log)"
running=0
for t in $TARGETS; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n 2>/dev/null || wait
        running=$((running - 1))
    fi
done
wait

fail=0
printf '%-12s %12s %10s %8s  %s\n' target execs exec/s corpus result
for t in $TARGETS; do
    log="$OUT/$t.log"
    rc=$(cat "$OUT/work/$t/rc" 2>/dev/null || echo 99)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
    ncorp=$(ls "$OUT/work/$t/corpus" | wc -l)
    if [ "$rc" = 0 ]; then
        result=ok
    else
        fail=1
        art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n1)
        what=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)[^(]*|runtime error: .*|invariant violated: .*' "$log")
        result="FAILED (rc $rc) ${what:-see $log} ${art:+-> $art}"
    fi
    printf '%-12s %12s %10s %8s  %s\n' "$t" "${execs:-?}" "${speed:-?}" "$ncorp" "$result"
done
if [ "$fail" != 0 ]; then
    echo "fuzz: FAILED; reproduce with $OUT/fuzz_<target> <file>, then copy the file to tests/fuzz/crashes/<target>-NAME" >&2
    exit 1
fi
echo "fuzz: all targets ran clean"
