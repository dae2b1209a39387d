#!/usr/bin/env bash
# The layers keep to their rules: src/core uses no file and no screen and links
# alone, with libm, pthreads, utf8proc (GPT-2's pre-tokenizer's Unicode
# categories) and PCRE2 (tokenizer.json's split patterns) only (runs
# ATTNVIZ_CORE_ONLY, made by `make layers`); src/core and src/io, and the
# headers they include, include nothing of SDL, cglm or the view/app; src/view touches no file (the app finds and reads them; the
# view is handed fonts and gives back surfaces): no file call, no io header
# or function.
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

# "file:line: text" for every call in the code of the files that follow
# that opens, reads, maps, inspects or changes a file or folder (writing to
# a stream the caller gives, as svg.c does, is none of these).
fs_calls() {
    local f
    for f in "$@"; do
        STRIP_MODE=code strip "$f" |
            grep -nE "(^|[^.>[:alnum:]_])(fopen|fdopen|freopen|tmpfile|open|openat|creat|close|read|write|pread|pwrite|opendir|fdopendir|readdir|scandir|ftw|nftw|stat|lstat|fstat|fstatat|access|faccessat|readlink|realpath|mkdir|rmdir|mkstemp|mkdtemp|unlink|rename|remove|truncate|ftruncate|mmap|munmap|chdir|getcwd|popen|system|dlopen)[[:space:]]*\(" |
            sed "s|^|$f:|"
    done
}

# The functions src/io defines for the other layers (its files' functions
# that are not static), one a line.
io_functions() {
    local f
    for f in src/io/*.c; do
        STRIP_MODE=code strip "$f" |
            sed -nE '/^static/d; s/^[A-Za-z_][A-Za-z0-9_ *]*[ *]\**([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\(.*/\1/p'
    done | sort -u
}

# "file:line: text" for every call of one of io_functions in the code of
# the files that follow.
io_calls() {
    local f names
    names=$(io_functions | paste -sd '|')
    [ -n "$names" ] || return 0
    for f in "$@"; do
        STRIP_MODE=code strip "$f" |
            grep -nE "(^|[^.>[:alnum:]_])($names)[[:space:]]*\(" |
            sed "s|^|$f:|"
    done
}

# Patterns: what draws (SDL and friends, the view and the app), and what
# reads or writes files (io's headers and libraries).
SCREEN='SDL[^>"]*|SDL2/[^>"]*|cglm/[^>"]*|fontconfig/[^>"]*|X11/[^>"]*|attnviz/(view|app|app_state|svg|colormap|options)\.h|[^>"]*(view|app)/[^>"]*|text\.h'
FILES='attnviz/(io|session|paths|png)\.h|cjson/[^>"]*|zlib\.h|fcntl\.h|dirent\.h|sys/stat\.h|sys/mman\.h'
# … and for the view also io's other headers (src/io's own, attnio.h,
# teach_io.h), the app's fonts.h, unistd.h and fontconfig (which reads its
# font database).
VIEW_FILES="$FILES"'|attnviz/(attnio|teach_io|fonts)\.h|([^>"]*/)?io/[^>"]*|unistd\.h|fontconfig/[^>"]*'
for h in src/io/*.h; do VIEW_FILES="$VIEW_FILES|$(basename "$h" .h)\.h"; done

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
mkdir -p "$tmp/src/view"
printf '/* stat(p) and io_read_file(p) in a comment */\n#include <stdio.h>\nint f(FILE *out) { return fprintf(out, "open(x) png_write(")  + g->open(1) + s.stat(2) + my_stat(3); }\n' \
    > "$tmp/src/view/clean.c"
printf '#include <unistd.h>\n#include "attnviz/png.h"\n#include <fontconfig/fontconfig.h>\n#include "attn_npy.h"\nint f(const char *p) { struct stat st; return stat(p, &st) + access(p, 0); }\nint g(void) { char *d; size_t n; return io_read_file("x", 1, &d, &n, 0) + png_write("y", 1, 1, d, 4, 0); }\n' \
    > "$tmp/src/view/dirty.c"
io_functions | grep -qx io_read_file && io_functions | grep -qx png_write && ! io_functions | grep -qx png_writer &&
    ok "io's functions are listed (io_read_file, png_write; not the static png_writer)" || bad "io's functions are not listed"
[ -z "$(fs_calls "$tmp/src/view/clean.c")" ] && [ -z "$(io_calls "$tmp/src/view/clean.c")" ] &&
    [ -z "$(includes_of "$VIEW_FILES" "$tmp/src/view/clean.c")" ] &&
    ok "a stream it is given, members, comments and strings do not count in the view" ||
    bad "a stream it is given, a member, a comment or a string counted in the view"
[ "$(fs_calls "$tmp/src/view/dirty.c" | wc -l)" = 1 ] && [ "$(io_calls "$tmp/src/view/dirty.c" | wc -l)" = 1 ] &&
    [ "$(includes_of "$VIEW_FILES" "$tmp/src/view/dirty.c" | wc -l)" = 4 ] &&
    ok "stat, access, io_read_file, png_write, unistd.h, png.h, fontconfig and an io header are found in the view" ||
    bad "a file call, an io function or an io header not found in the view"

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
view=(src/view/*.c src/view/*.h)
[ ${#view[@]} -gt 0 ] || { bad "no src/view files"; exit 1; }
mapfile -t view_all < <(closure "${view[@]}")
expect_clean "src/view and its headers include no io, fonts, fontconfig or file-system header" \
    "$(includes_of "$VIEW_FILES" "${view_all[@]}")"
expect_clean "src/view and its headers make no file call (open, stat, mmap, mkdir …)" \
    "$(fs_calls "${view_all[@]}")"
# (its own files: a core header declares embed_load, which io defines)
expect_clean "src/view calls no io function" "$(io_calls "${view[@]}")"

echo "layers: the core links alone"
if [ ! -x "$CORE_ONLY" ]; then
    bad "$CORE_ONLY not built (make layers)"
else
    needed=$(readelf -d "$CORE_ONLY" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    if [ -z "$needed" ]; then
        bad "readelf cannot read $CORE_ONLY"
    elif echo "$needed" | grep -qiE 'sdl|cjson|libz|fontconfig|freetype|cglm|x11'; then
        bad "$CORE_ONLY needs more than libc, libm, libutf8proc and libpcre2-8: $needed"
    else
        ok "$CORE_ONLY needs only $needed"
    fi
    if out=$("$CORE_ONLY" 2>&1); then ok "${out:-core_only ran}"; else bad "core_only: $out"; fi
fi

echo "layers: $pass passed, $fail failed"
[ "$fail" = 0 ]
