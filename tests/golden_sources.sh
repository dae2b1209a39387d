#!/usr/bin/env bash
# Golden test of the sources redesign (issue 24): for every command of
# tests/golden/sources_cases.txt, its stdout, exit status and the files it
# exported are byte-identical to what they were before (the hashes in
# tests/golden/sources.sha256). With --write, writes that file instead.
# Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
MODE=${1:-}
CASES=tests/golden/sources_cases.txt
WANT=tests/golden/sources.sha256
OUT=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-gsrc.XXXXXX") || exit 1
trap 'rm -rf "$OUT"' EXIT
got=$(mktemp "${TMPDIR:-/tmp}/attnviz-gsrc-got.XXXXXX") || exit 1
trap 'rm -rf "$OUT" "$got"' EXIT
while read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    rm -rf "${OUT:?}"/*
    eval "set -- ${args//OUT/$OUT}"
    "$BIN" "$@" >"$OUT/stdout" 2>/dev/null
    echo "$?" >"$OUT/status"
    for f in $(cd "$OUT" && ls | sort); do
        echo "$name $f $(sha256sum <"$OUT/$f" | cut -c1-64)"
    done
done <"$CASES" >"$got"
if [ "$MODE" = --write ]; then cp "$got" "$WANT"; echo "wrote $WANT"; exit 0; fi
if diff "$WANT" "$got" >"$OUT/diff"; then
    echo "ok   - $(wc -l <"$WANT") outputs of $(grep -c '^[a-z]' "$CASES") commands unchanged"
    exit 0
fi
echo "FAIL - outputs differ from $WANT:"
cat "$OUT/diff"
exit 1
