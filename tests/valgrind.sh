#!/usr/bin/env bash
# valgrind --leak-check=full on the headless paths and on a scripted window
# session (the soak test's event stream under the dummy driver): no definite
# leak and no memory error from project code. Skipped for the SAN=1 build
# (ASan and valgrind do not mix) and when valgrind is missing.
set -u
bin=${ATTNVIZ_BIN:-build/attnviz}
case $bin in *-san) echo "valgrind: skipped for the sanitizer build"; exit 0;; esac
command -v valgrind >/dev/null || { echo "valgrind: not installed, skipped (apt-get install valgrind)"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
vg() {
  local name=$1; shift
  SDL_VIDEODRIVER=dummy valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
       --error-exitcode=97 --suppressions=tests/valgrind.supp "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  # the program's own exit status (1 on the error paths) is not the point here
  if [ $rc != 97 ] && [ $rc -lt 128 ] && ! grep -q "definitely lost" "$tmp/err"; then
    echo "ok   $name"; pass=$((pass+1))
  else
    echo "FAIL $name"; cat "$tmp/err" | head -40; fail=$((fail+1))
  fi
}
vg "print text" "$bin" --print text "the train left the station on time"
vg "print json, 2 heads, seed" "$bin" --print json -H 2 --seed 3 je suis heureux
vg "export png+svg+csv+json" "$bin" --export "$tmp/a.png" --export "$tmp/a.svg" \
   --export "$tmp/a.csv" --export "$tmp/a.json" --view both --query 2 --causal
vg "error path: bad weights" "$bin" --print text -w tests/fuzz/corpus/weights/$(ls tests/fuzz/corpus/weights | head -1) hello
vg "error path: missing file" "$bin" --print text -f "$tmp/missing.txt"
soak=build/obj/tests/test_soak
if [ -x "$soak" ]; then
  ATTNVIZ_SOAK_N=300 vg "scripted window session (300 events)" "$soak"
fi
echo "valgrind: $pass passed, $fail failed"
[ "$fail" = 0 ]
