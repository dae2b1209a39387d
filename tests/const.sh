#!/usr/bin/env bash
# What a reader of a const Model may rely on (issue 24): no cast in src/core
# or include/attnviz drops const, none in src/view onto the project's own
# types (the compiler's -Wcast-qual finds them); no pointer is laundered
# through an integer there; src/core keeps no mutable static that is not
# atomic, thread-local, a lock or named as set under one ("under ..." in its
# comment). Run from the repository root; CC as the Makefile's.
set -u
cd "$(dirname "$0")/.." || exit 2
shopt -s nullglob
CC=${CC:-cc}
pass=0
fail=0
ok() { echo "  ok    $1"; pass=$((pass + 1)); }
bad() { echo "  FAIL  $1"; fail=$((fail + 1)); }
expect_clean() {
    if [ -z "$2" ]; then ok "$1"; else bad "$1:"; echo "$2" | sed 's/^/        /'; fi
}

# the libraries' headers as system headers: their casts are not ours
PKGS=$(sed -n 's/^PKGS[[:space:]]*:=[[:space:]]*//p' Makefile)
# shellcheck disable=SC2086
PKG_CFLAGS=$(pkg-config --cflags $PKGS 2>/dev/null | sed 's/-I/-isystem /g')
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Wcast-qual -fsyntax-only"

# The project's type names: every typedef of include/attnviz and src.
types() {
    cat include/attnviz/*.h src/*/*.h 2>/dev/null |
        perl -0777 -ne 'while (/typedef\s+(?:struct|enum|union)\s*\w*\s*\{.*?\}\s*(\w+)\s*;/gs) { print "$1\n" }
                        while (/typedef\s+(?:struct|enum|union)\s+\w+\s+(\w+)\s*;/g) { print "$1\n" }' |
        sort -u
}

# "file:line: cast" for each -Wcast-qual warning in the files given, at a
# place under the folders $WHERE (a regular expression); with ONTO, only
# casts onto one of the type names in it (one a line).
casts_dropping_const() {
    local f out
    for f in "$@"; do
        # shellcheck disable=SC2086
        if ! out=$($CC $CFLAGS $PKG_CFLAGS "$f" 2>&1); then
            echo "$f: does not compile: $(echo "$out" | grep -m1 error)" >&2
            echo "$f:0:0: does not compile"
        fi
        echo "$out" | grep -E "^($WHERE)[^:]*:[0-9]+:[0-9]+: warning: .*\[-Wcast-qual\]"
    done | sort -u | while IFS=: read -r file line col _; do
        [ "$line" = 0 ] && { echo "$file: does not compile"; continue; }
        cast=$(sed -n "${line}p" "$file" | cut -c"$col"- | sed -E 's/^(\([^()]*\)).*/\1/')
        if [ -n "${ONTO:-}" ]; then
            name=$(echo "$cast" | sed -E 's/^\(\s*(const\s+|struct\s+)*([A-Za-z_][A-Za-z0-9_]*).*/\2/')
            grep -qx "$name" <<<"$ONTO" || continue
        fi
        echo "$file:$line: $cast"
    done
}

# "file:line: text" for each pointer made from an integer in the files
# given: a cast to a pointer of an integer cast, or of a variable declared
# with an integer type that holds addresses (uintptr_t, intptr_t).
laundered() {
    perl -ne '
        BEGIN { $int = qr/(?:u?intptr_t|size_t|ptrdiff_t|(?:unsigned\s+)?long(?:\s+long)?|u?int64_t)/ }
        if ($ARGV ne $file) { $file = $ARGV; %addr = (); $n = 0 }
        $n++;
        my $l = $_;
        $l =~ s{/\*.*?\*/}{}g; $l =~ s{//.*}{}; $l =~ s{"(?:\\.|[^"\\])*"}{""}g;
        $addr{$1} = 1 while $l =~ /\bu?intptr_t\s+(\w+)/g;
        my $names = join "|", map { quotemeta } keys %addr;
        if ($l =~ /\(\s*[\w\s]+\*+\s*\)\s*\(\s*$int\s*\)/ ||
            ($names ne "" && $l =~ /\(\s*[\w\s]+\*+\s*\)\s*\(?\s*(?:$names)\b/)) {
            chomp; print "$ARGV:$n: $_\n"
        }' "$@"
}

# "file:line: text" for each static variable of the files given that is
# neither const, atomic, thread-local, a lock or once, nor said to be set
# "under" one in its line's comment.
mutable_statics() {
    perl -ne '
        if ($ARGV ne $file) { $file = $ARGV; $n = 0 }
        $n++;
        next unless /^\s*static\s/;
        next if /\bstatic\s+inline\b/ || /\b_Thread_local\b|\b__thread\b|\b_Atomic\b|\batomic_\w+\s/;
        next if /\bpthread_(?:once|mutex|cond|rwlock|spinlock)_t\b/;
        my $decl = $_;
        $decl =~ s{/\*.*?\*/}{}g; $decl =~ s{//.*}{};
        next unless $decl =~ /[;=]\s*(?:\{.*)?$/ || $decl =~ /=/;   # a variable, not a function
        (my $head = $decl) =~ s/=.*//s;
        next if $head =~ /\w\s*\((?!\s*\*)/;                         # a prototype
        my $const = $head =~ /\*\s*const\s+\w+\s*(?:\[|$|;)/ ||      # T *const name
                    ($head !~ /\*/ && $head =~ /\bconst\b/);         # const T name
        next if $const;
        next if m{/\*.*\bunder\b.*\*/};
        chomp; print "$ARGV:$n: $_\n"' "$@"
}

echo "const: the checks catch what they should"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-const-XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/t"
cat > "$tmp/t/dirty.c" <<'EOF'
#include <stdint.h>
typedef struct Thing { int n; } Thing;
float *f(const float *p) { return (float *)p; }
Thing *g(const Thing *t) { return (Thing *)t; }
void *h(const char *s) { return (void *)s; }
float *k(const float *p) { uintptr_t a = (uintptr_t)p; return (float *)a; }
float *l(const float *p) { return (float *)(uintptr_t)p; }
static int counter;
static const char *name;
static int guarded; /* set under its_once */
static const char *const names[] = {"a"};
static const int one = 1;
static int fn(int x);
static int (*hook)(int);
EOF
n=$(WHERE="$tmp/t" casts_dropping_const "$tmp/t/dirty.c" | wc -l)
[ "$n" = 3 ] && ok "three casts dropping const found" || bad "casts dropping const: $n found, not 3"
n=$(WHERE="$tmp/t" ONTO=$'Thing\nOther' casts_dropping_const "$tmp/t/dirty.c" | wc -l)
[ "$n" = 1 ] && ok "one onto the project's types" || bad "casts onto the project's types: $n found, not 1"
n=$(laundered "$tmp/t/dirty.c" | wc -l)
[ "$n" = 2 ] && ok "two pointers made from integers found" || bad "pointers from integers: $n found, not 2"
n=$(mutable_statics "$tmp/t/dirty.c" | wc -l)
[ "$n" = 3 ] && ok "three mutable statics found (counter, name, hook)" || bad "mutable statics: $n found, not 3"

echo "const: the tree"
# (not background_single.c: the one-thread web page's, compiled by emcc
# alone, as the Makefile leaves it out)
core=()
for f in src/core/*.c; do [ "$f" = src/core/background_single.c ] || core+=("$f"); done
view=(src/view/*.c)
[ ${#core[@]} -gt 0 ] && [ ${#view[@]} -gt 0 ] || { bad "no src/core or src/view files"; exit 1; }
expect_clean "no cast in src/core or include/attnviz drops const" \
    "$(WHERE='src/core|include/attnviz' casts_dropping_const "${core[@]}")"
expect_clean "no cast in src/view drops const onto the project's types" \
    "$(WHERE='src/view|include/attnviz' ONTO="$(types)" casts_dropping_const "${view[@]}")"
expect_clean "no pointer made from an integer in src/core, src/view or include/attnviz" \
    "$(laundered src/core/*.c src/core/*.h src/core/*.inc src/view/*.c src/view/*.h include/attnviz/*.h)"
expect_clean "src/core keeps no unsynchronised mutable static" \
    "$(mutable_statics src/core/*.c src/core/*.h src/core/*.inc)"

echo "const: $pass passed, $fail failed"
[ "$fail" = 0 ]
