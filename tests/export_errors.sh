#!/usr/bin/env bash
# Export failures from the command line: for .png .svg .csv and .json, an
# export into a missing folder, onto an existing directory, with an unknown
# extension, onto a full disk (ulimit -f) and into a read-only folder must
# exit 1 with a message naming the path and leave nothing behind (no partial
# file, no temp file, an old file unchanged); a multi-export writes all four
# and --all-lines one numbered file per sentence.
# Run from the repository root: bash tests/export_errors.sh (ATTNVIZ_BIN
# overrides the binary, default build/attnviz). Prints one line per check and
# a summary; exits 1 when a check failed.
set -u

BIN=${ATTNVIZ_BIN:-build/attnviz}
# long enough that every format is well over 1 KiB
S="on monday morning the old train left the small station at seven and the children were excited because they were going to the sea"
EXTS="png svg csv json"

pass=0
failed=0
skipped=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-export.XXXXXX") || { echo "export-errors: cannot make a temp dir"; exit 1; }
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
IO=$TMP/io
W=$TMP/w
mkdir -p "$IO" "$W"

ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
skip() { echo "skip - $1"; skipped=$((skipped + 1)); }

if [ ! -x "$BIN" ]; then
    echo "FAIL - binary $BIN not found (build it with make)"
    echo "export-errors: 0 passed, 1 failed"
    exit 1
fi
case $BIN in /*) ABSBIN=$BIN ;; *) ABSBIN=$PWD/$BIN ;; esac

# run ARGS...: stdout in $IO/out, stderr in $IO/err, exit code in $rc
run() {
    "$BIN" "$@" >"$IO/out" 2>"$IO/err"
    rc=$?
}

# A listing of a folder (names, types, sizes and checksums), to compare.
snapshot() {
    (cd "$1" && find . -mindepth 1 -printf '%p %y %s\n' | LC_ALL=C sort
     find . -type f -exec md5sum {} + 2>/dev/null | LC_ALL=C sort)
}

tmp_files() { find "$1" -name '*.tmp-*' 2>/dev/null | wc -l; }

errline() { grep -v '^attnviz: note:' "$IO/err" | head -c 300; }

# check_error DESC PATTERN: exit 1, "attnviz: error:" naming PATTERN (fixed
# string), nothing on stdout
check_error() {
    local desc=$1 pat=$2
    if [ "$rc" -ge 128 ]; then
        bad "$desc: killed by signal $((rc - 128)) (exit $rc)"
        return 1
    elif [ "$rc" -ne 1 ]; then
        bad "$desc: exit $rc, want 1; stderr: $(errline)"
        return 1
    elif [ -s "$IO/out" ]; then
        bad "$desc: printed on stdout: $(head -c 200 "$IO/out")"
        return 1
    elif ! grep -q '^attnviz: error: ' "$IO/err"; then
        bad "$desc: no 'attnviz: error:' message: $(errline)"
        return 1
    elif ! grep -qF -- "$pat" "$IO/err"; then
        bad "$desc: message does not name '$pat': $(errline)"
        return 1
    fi
    return 0
}

# ---- a missing folder -------------------------------------------------------------
for e in $EXTS; do
    before=$(snapshot "$W")
    target=$W/missing/sub/out.$e
    run -s "$S" --export "$target"
    if check_error "missing folder (.$e)" "$target"; then
        if [ -e "$W/missing" ]; then bad "missing folder (.$e): the folder was created"
        elif [ "$(snapshot "$W")" != "$before" ]; then bad "missing folder (.$e): something was created in $W"
        else ok "missing folder (.$e): exit 1, names $target, nothing created"; fi
    fi
done

# ---- the target is an existing directory ---------------------------------------------
for e in $EXTS; do
    d=$W/adir.$e
    mkdir -p "$d"
    echo keep >"$d/inside.txt"
    before=$(snapshot "$W")
    run -s "$S" --export "$d"
    if check_error "directory as target (.$e)" "$d"; then
        if [ ! -d "$d" ]; then bad "directory as target (.$e): it is no longer a directory"
        elif [ "$(snapshot "$W")" != "$before" ]; then bad "directory as target (.$e): something changed: $(find "$W" -newer "$d/inside.txt" | head -5 | tr '\n' ' ')"
        else ok "directory as target (.$e): exit 1, directory and folder unchanged"; fi
    fi
    rm -rf "$d"
done

# ---- unknown extensions --------------------------------------------------------------------
for spec in "out.bmp|.bmp" "out.PNGX|.PNGX" "noext|unknown export format" "dir.d/noext|unknown export format"; do
    name=${spec%%|*}
    pat=${spec#*|}
    mkdir -p "$W/dir.d"
    before=$(snapshot "$W")
    run -s "$S" --export "$W/$name"
    if check_error "unknown extension ($name)" "$pat"; then
        if ! grep -qF -- "$W/$name" "$IO/err"; then bad "unknown extension ($name): the path is not named: $(errline)"
        elif [ "$(snapshot "$W")" != "$before" ]; then bad "unknown extension ($name): something was created"
        else ok "unknown extension ($name): exit 1, names '$pat'"; fi
    fi
    rm -rf "$W/dir.d"
done

# ---- a full disk: ulimit -f 1 (1 KiB) ------------------------------------------------------------
# The program must not die of SIGXFSZ: it should see the failed write, say so
# and leave no partial file and no temp file.
# full_disk DESC IGNORE EXT OLD: IGNORE=1 starts the program with SIGXFSZ
# already ignored (what main would do with signal(SIGXFSZ, SIG_IGN)); OLD=1
# puts an old file at the target first, which must stay byte for byte.
full_disk() {
    local desc=$1 ign=$2 e=$3 old=$4
    local dir=$W/full
    rm -rf "$dir"
    mkdir -p "$dir"
    local target=$dir/out.$e
    [ "$old" = 1 ] && printf 'the old file\n' >"$target"
    local before
    before=$(snapshot "$dir")
    # (the outer 2>/dev/null hides bash's "File size limit exceeded" report)
    if [ "$ign" = 1 ]; then
        { (trap '' XFSZ; ulimit -f 1; exec "$BIN" -s "$S" --export "$target" >"$IO/out" 2>"$IO/err"); } 2>/dev/null
    else
        { (ulimit -f 1; exec "$BIN" -s "$S" --export "$target" >"$IO/out" 2>"$IO/err"); } 2>/dev/null
    fi
    rc=$?
    local left
    left=$(tmp_files "$dir")
    if [ "$rc" -eq $((128 + 25)) ]; then
        bad "$desc: killed by SIGXFSZ (exit $rc; main should ignore SIGXFSZ); temp files left: $left"
        return
    fi
    if [ "$rc" -eq 0 ]; then
        local what="no file"
        [ -e "$target" ] && what="$(stat -c %s "$target") bytes$(grep -q IEND "$target" 2>/dev/null || [ "$e" != png ] || echo ', no IEND: truncated')"
        bad "$desc: exit 0 (reported success) on a full disk; the target now: $what"
        return
    fi
    check_error "$desc" "$target" || return
    if [ "$left" -ne 0 ]; then bad "$desc: $left temp file(s) left: $(cd "$dir" && ls)"
    elif [ "$(snapshot "$dir")" != "$before" ]; then
        if [ "$old" = 1 ]; then bad "$desc: the old file changed (now $(stat -c %s "$target" 2>/dev/null) bytes)"
        else bad "$desc: a partial file was left: $(cd "$dir" && ls -l | tail -n +2 | tr '\n' ' ')"; fi
    elif ! grep -qi 'large\|space\|write\|PNG' "$IO/err"; then bad "$desc: the message does not say why: $(errline)"
    else ok "$desc: exit 1 ($(grep '^attnviz: error' "$IO/err" | head -1 | sed "s|$dir/||" | head -c 80))"; fi
}
for e in $EXTS; do
    full_disk "full disk (.$e, new file)" 0 "$e" 0
    full_disk "full disk (.$e, over an old file)" 0 "$e" 1
done
# the same with SIGXFSZ already ignored: the program's own handling of the
# failed write (EFBIG), whatever main does about the signal
for e in $EXTS; do
    full_disk "full disk, SIGXFSZ ignored (.$e, new file)" 1 "$e" 0
    full_disk "full disk, SIGXFSZ ignored (.$e, over an old file)" 1 "$e" 1
done
rm -rf "$W/full"

# ---- a read-only folder, as a user who cannot write there -----------------------------------
ASUSER=()
ro_ok=1
if [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null 2>&1; then
        ASUSER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    else
        skip "read-only folder: running as root and setpriv (util-linux) is not available"
        ro_ok=0
    fi
fi
if [ "$ro_ok" = 1 ]; then
    chmod 755 "$TMP" "$W"
    chmod 777 "$IO"
    RW=$W/rw
    RO=$W/ro
    mkdir -p "$RW" "$RO"
    chmod 777 "$RW"
    chmod 555 "$RO"
    # can that user run the program at all (binary, data files, a writable folder)?
    "${ASUSER[@]}" "$ABSBIN" -s "$S" --export "$RW/probe.csv" >"$IO/out" 2>"$IO/err"
    rc=$?
    if [ "$rc" -ne 0 ] || [ ! -s "$RW/probe.csv" ]; then
        skip "read-only folder: the unprivileged user cannot run $BIN here (exit $rc: $(errline))"
    else
        for e in $EXTS; do
            before=$(snapshot "$RO")
            target=$RO/out.$e
            "${ASUSER[@]}" "$ABSBIN" -s "$S" --export "$target" >"$IO/out" 2>"$IO/err"
            rc=$?
            if check_error "read-only folder (.$e)" "$target"; then
                if [ "$(snapshot "$RO")" != "$before" ]; then bad "read-only folder (.$e): something was left: $(ls -A "$RO")"
                else ok "read-only folder (.$e): exit 1 ($(grep '^attnviz: error' "$IO/err" | head -1 | sed "s|$RO/||" | head -c 80))"; fi
            fi
        done
    fi
    chmod 755 "$RO"
    rm -rf "$RW" "$RO"
fi

# ---- a multi-export writes all four, nothing else ------------------------------------------
M=$W/multi
mkdir -p "$M"
run -s "$S" --export "$M/a.png" --export "$M/a.svg" --export "$M/a.csv" --export "$M/a.json"
if [ "$rc" -ne 0 ]; then
    bad "multi-export: exit $rc: $(errline)"
else
    n=$(find "$M" -mindepth 1 | wc -l)
    missing=""
    for e in $EXTS; do [ -s "$M/a.$e" ] || missing="$missing a.$e"; done
    if [ -n "$missing" ]; then bad "multi-export: missing or empty:$missing"
    elif [ "$n" -ne 4 ]; then bad "multi-export: $n entries, want 4: $(ls -A "$M" | tr '\n' ' ')"
    elif [ "$(tmp_files "$M")" -ne 0 ]; then bad "multi-export: temp files left"
    else ok "multi-export: a.png a.svg a.csv a.json written, nothing else"; fi
    # each is a whole file of its kind
    if [ "$(head -c 8 "$M/a.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
       tail -c 12 "$M/a.png" | grep -q IEND; then ok "multi-export: a.png is a whole PNG (signature ... IEND)"
    else bad "multi-export: a.png is not a whole PNG"; fi
    if grep -q '<svg' "$M/a.svg" && tail -c 20 "$M/a.svg" | grep -q '</svg>'; then ok "multi-export: a.svg is a whole SVG"
    else bad "multi-export: a.svg is not a whole SVG"; fi
    run -s "$S" --print csv
    if cmp -s "$IO/out" "$M/a.csv"; then ok "multi-export: a.csv is byte for byte --print csv"
    else bad "multi-export: a.csv differs from --print csv"; fi
    run -s "$S" --print json
    if cmp -s "$IO/out" "$M/a.json"; then ok "multi-export: a.json is byte for byte --print json"
    else bad "multi-export: a.json differs from --print json"; fi
fi
# a multi-export whose second target fails: exit 1, names it
M2=$W/multi2
mkdir -p "$M2"
run -s "$S" --export "$M2/a.csv" --export "$M2/missing/a.json"
if check_error "multi-export with a bad second target" "$M2/missing/a.json"; then
    if [ "$(tmp_files "$M2")" -ne 0 ]; then bad "multi-export with a bad second target: temp files left"
    else ok "multi-export with a bad second target: exit 1, names it, no temp files"; fi
fi
rm -rf "$M" "$M2"

# ---- --all-lines: one numbered file per sentence ----------------------------------------------
SF=sentences/classroom.txt
A=$W/all
mkdir -p "$A"
nsent=$(grep -cvE '^[[:space:]]*(#|$)' "$SF")
run -f "$SF" --all-lines --export "$A/x.png" --export "$A/x.csv"
if [ "$rc" -ne 0 ]; then
    bad "--all-lines: exit $rc: $(errline)"
else
    npng=$(find "$A" -name 'x-*.png' | wc -l)
    ncsv=$(find "$A" -name 'x-*.csv' | wc -l)
    digits=2
    [ "$nsent" -ge 100 ] && digits=3
    want_names=""
    for ((k = 1; k <= nsent; k++)); do want_names+=$(printf "x-%0${digits}d.csv x-%0${digits}d.png " "$k" "$k"); done
    got_names=$(cd "$A" && ls | LC_ALL=C sort | tr '\n' ' ')
    want_sorted=$(echo "$want_names" | tr ' ' '\n' | grep . | LC_ALL=C sort | tr '\n' ' ')
    if [ "$npng" -ne "$nsent" ] || [ "$ncsv" -ne "$nsent" ]; then
        bad "--all-lines: $npng PNG and $ncsv CSV files for $nsent sentences"
    elif [ "$got_names" != "$want_sorted" ]; then
        bad "--all-lines: names differ: $(echo "$got_names" | head -c 200)"
    elif [ "$(tmp_files "$A")" -ne 0 ]; then
        bad "--all-lines: temp files left"
    else
        ok "--all-lines: $nsent sentences in $SF -> x-01..x-$(printf "%0${digits}d" "$nsent") .png and .csv, nothing else"
    fi
    # the third file holds the third sentence
    third=$(grep -vE '^[[:space:]]*(#|$)' "$SF" | sed -n 3p)
    run -s "$third" --print csv
    if cmp -s "$IO/out" "$A/x-03.csv"; then ok "--all-lines: x-03.csv is the third sentence's --print csv"
    else bad "--all-lines: x-03.csv is not the third sentence's --print csv"; fi
fi
rm -rf "$A"

if [ "$skipped" -gt 0 ]; then
    echo "export-errors: $pass passed, $failed failed, $skipped skipped"
else
    echo "export-errors: $pass passed, $failed failed"
fi
[ "$failed" -eq 0 ]
