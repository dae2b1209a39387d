#!/usr/bin/env bash
# Golden test: --print text, csv and json are byte-identical to the files in
# tests/golden/ for every configuration of tests/golden/cases.txt (written
# by tests/golden/make.sh before the redesign of issue 12: a restructuring
# must not change one number or one byte; issue 14 added config.score and
# each head's "v" to the JSON only, shown by tests/golden/check_json_additions.py,
# and the cases with --keys and --score, whose numbers tests/score_oracle.sh
# checks against numpy; issue 17 defined the heads' mean as the sum of the
# first half of the heads plus the sum of the others, which moved seven
# averaged weights of sentfile.csv by one float step, 1e-8 or less). Run
# from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
pass=0 failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-golden.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
while read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    for fmt in text csv json; do
        ext=$fmt; [ "$fmt" = text ] && ext=txt
        want="tests/golden/$name.$ext"
        if [ ! -s "$want" ]; then
            echo "FAIL - $name $fmt: $want missing"; failed=$((failed + 1)); continue
        fi
        eval "\"$BIN\" $args --print $fmt" > "$TMP/out" 2>/dev/null
        if cmp -s "$TMP/out" "$want"; then
            echo "ok   - $name --print $fmt"; pass=$((pass + 1))
        else
            echo "FAIL - $name --print $fmt differs from $want:"
            diff "$want" "$TMP/out" | head -5
            failed=$((failed + 1))
        fi
    done
done < tests/golden/cases.txt
echo "golden: $pass passed, $failed failed"
[ "$failed" = 0 ]
