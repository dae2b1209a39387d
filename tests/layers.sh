#!/usr/bin/env bash
# The layers keep to their rules: src/core uses no file and no screen and links
# alone, with libm, pthreads and utf8proc (GPT-2's pre-tokenizer's Unicode
# categories) only (runs ATTNVIZ_CORE_ONLY, made by `make layers`); src/core and src/io,
# and the headers they include, include nothing of SDL, cglm or the view/app.
set -u
cd "$(dirname "$0")/.." || exit 2
shopt -s nullglob

CORE_ONLY=${ATTNVIZ_CORE_ONLY:-build/obj/tests/core_only}
pass=0
fail=0
ok() { echo "  ok    $1"; pass=$((pass + 1)); }
bad() { echo "  FAIL  $1"; fail=$((fail + 1)); }

# The file without its comments (newlines kept, so line numbers stay); with
# "code", string and character literals emptied too.
strip() {
    perl -0777 -pe '
        my $code = $ENV{STRIP_MODE} eq "code";
        s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}{
            my $m = $1;
            $m =~ m{^/} ? "\n" x ($m =~ tr/\n//) : $code ? "\"\"" : $m
        }gse' "$1"
}

# The files given and every header they include with quotes, found next to
# the includer or under include/, each once.
closure() {
    local -A seen=()
    local todo=("$@") f inc dir
    while ((${#todo[@]})); do
        f=${todo[0]}
        todo=("${todo[@]:1}")
        [[ -n ${seen[$f]:-} ]] && continue
        seen[$f]=1
        echo "$f"
        dir=$(dirname "$f")
        while IFS= read -r inc; do
            if [ -f "$dir/$inc" ]; then todo+=("$dir/$inc")
            elif [ -f "include/$inc" ]; then todo+=("include/$inc")
            fi
        done < <(STRIP_MODE=comments strip "$f" |
                 sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p')
    done
}

# "file:line: text" for every #include of a name matching the ERE $1 in
# the files that follow.
includes_of() {
    local pat=$1 f
    shift
    for f in "$@"; do
        STRIP_MODE=comments strip "$f" |
            grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($pat)[>\"]" |
            sed "s|^|$f:|"
    done
}

# "file:line: text" for every call of a file or screen function (or use of
# a standard stream) in the code of the files that follow.
file_calls() {
    local f
    for f in "$@"; do
        STRIP_MODE=code strip "$f" |
            grep -nE "(^|[^.>[:alnum:]_])(fopen|fdopen|freopen|tmpfile|open|openat|creat|close|read|write|fread|fwrite|fgets|fgetc|getc|fputs|fputc|putc|fprintf|vfprintf|fscanf|printf|vprintf|puts|putchar|perror|opendir|mkstemp|mkdtemp|unlink|rename|remove|mmap|popen|system)[[:space:]]*\(|(^|[^[:alnum:]_])(stdin|stdout|stderr|FILE)([^[:alnum:]_]|$)" |
            sed "s|^|$f:|"
    done
}

# Patterns: what draws (SDL and friends, the view and the app), and what
# reads or writes files (io's headers and libraries).
SCREEN='SDL[^>"]*|SDL2/[^>"]*|cglm/[^>"]*|fontconfig/[^>"]*|X11/[^>"]*|attnviz/(view|app|app_state|svg|colormap|options)\.h|[^>"]*(view|app)/[^>"]*|text\.h'
FILES='attnviz/(io|session|paths|png)\.h|cjson/[^>"]*|zlib\.h|fcntl\.h|dirent\.h|sys/stat\.h|sys/mman\.h'

# expect_clean WHAT OUTPUT: one ok when OUTPUT is empty, else a failure
# with OUTPUT.
expect_clean() {
    if [ -z "$2" ]; then ok "$1"; else bad "$1:"; echo "$2" | sed 's/^/        /'; fi
}

echo "layers: the checks catch what they should"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-layers-XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/core"
printf '/* fopen() in a comment, #include <SDL.h> too */\n#include "h.h"\nint f(void) { return g("open(x)"); }\n' \
    > "$tmp/src/core/clean.c"
printf '#include "inner.h"\n' > "$tmp/src/core/h.h"
printf '#include <SDL.h>\n' > "$tmp/src/core/inner.h"
printf '#include "attnviz/io.h"\nvoid f(void) { FILE *x = fopen("a", "r"); }\n' > "$tmp/src/core/dirty.c"
[ "$(closure "$tmp/src/core/clean.c" | wc -l)" = 3 ] &&
    [ -n "$(includes_of "$SCREEN" $(closure "$tmp/src/core/clean.c"))" ] &&
    ok "an SDL include two headers deep is found" || bad "an SDL include two headers deep is not found"
[ -z "$(file_calls "$tmp/src/core/clean.c")" ] && [ -z "$(includes_of "$SCREEN" "$tmp/src/core/clean.c")" ] &&
    ok "comments and strings do not count" || bad "comments or strings counted"
[ "$(file_calls "$tmp/src/core/dirty.c" | wc -l)" = 1 ] && [ -n "$(includes_of "$FILES" "$tmp/src/core/dirty.c")" ] &&
    ok "fopen, FILE and io.h are found" || bad "fopen, FILE or io.h not found"

echo "layers: the tree"
core=(src/core/*.c src/core/*.inc src/core/*.h)
io=(src/io/*.c src/io/*.h)
[ ${#core[@]} -gt 0 ] && [ ${#io[@]} -gt 0 ] || { bad "no src/core or src/io files"; exit 1; }
mapfile -t core_all < <(closure "${core[@]}")
mapfile -t io_all < <(closure "${io[@]}")
expect_clean "src/core and its headers include no SDL, cglm, view or app header" \
    "$(includes_of "$SCREEN" "${core_all[@]}")"
expect_clean "src/io and its headers include no SDL, cglm, view or app header" \
    "$(includes_of "$SCREEN" "${io_all[@]}")"
expect_clean "src/core and its headers include no io header, cJSON or zlib" \
    "$(includes_of "$FILES" "${core_all[@]}")"
expect_clean "src/core and its headers open, read, write and print nothing" \
    "$(file_calls "${core_all[@]}")"

echo "layers: the core links alone"
if [ ! -x "$CORE_ONLY" ]; then
    bad "$CORE_ONLY not built (make layers)"
else
    needed=$(readelf -d "$CORE_ONLY" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    if [ -z "$needed" ]; then
        bad "readelf cannot read $CORE_ONLY"
    elif echo "$needed" | grep -qiE 'sdl|cjson|libz|fontconfig|freetype|cglm|x11'; then
        bad "$CORE_ONLY needs more than libc, libm and libutf8proc: $needed"
    else
        ok "$CORE_ONLY needs only $needed"
    fi
    if out=$("$CORE_ONLY" 2>&1); then ok "${out:-core_only ran}"; else bad "core_only: $out"; fi
fi

echo "layers: $pass passed, $fail failed"
[ "$fail" = 0 ]
