#!/usr/bin/env bash
# The sources redesign (issue 24) stays done: outside the files of the
# sources (src/app/sources/, and the list in src/app/source.c), no code asks
# which source is shown. Counted on the code without comments and strings:
#  1. a kind compared with a named kind (== &source_…, != &source_…) or by
#     its name (strcmp of ->name);
#  2. a source's own state reached from outside it (a->imp, file_source_of,
#     FileSource, a->src cast to a kind's struct);
#  3. the view inferring what is shown from a missing Model (!s->m, s->m ?)
#     or the app from one (!a->m, a->m ?, a->m &&, a->m ||);
#  4. the old per-kind flags (a->grid, imp_layer, imp_ctl, ctl_labels).
# Then the check itself is checked: a planted line of each kind is caught.
# Run from the repository root.
set -u
cd "$(dirname "$0")/.." || exit 2
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }

# the file's code: comments and string literals emptied, lines kept
code() {
    perl -0777 -pe 's{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}{
        my $m = $1; $m =~ m{^/} ? "\n" x ($m =~ tr/\n//) : "\"\""}gse' "$1"
}

PAT='(==|!=)[[:space:]]*&source_|&source_[a-z_]+[[:space:]]*(==|!=)|strcmp\([^)]*->name|a->imp([^a-z_]|$)|file_source_of[[:space:]]*\(|FileSource|\(([A-Z][A-Za-z]*Source)[[:space:]]*\*\)[[:space:]]*a->src|!s->m([^-a-z_]|$)|s->m[[:space:]]*\?|!a->m([^-a-z_]|$)|a->m[[:space:]]*(\?|&&|\|\|)|a->grid([^_a-z]|$)|imp_layer|imp_ctl|ctl_labels'

asks() {
    local f
    for f in "$@"; do
        code "$f" | grep -nE "$PAT" | sed "s|^|$f:|"
    done
}

files=$(find src -name '*.c' -o -name '*.h' | grep -v '^src/app/sources/' | grep -v '^src/app/source\.c$' | sort)
found=$(asks $files)
if [ -z "$found" ]; then
    ok "outside src/app/sources/ no code asks which source is shown ($(echo "$files" | wc -l) files)"
else
    bad "code outside the sources asks which source is shown:"
    echo "$found" | sed 's/^/    /'
fi

# the check catches each kind of question (and not a comment or a string)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-sources.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
for line in 'if (a->kind == &source_file) x();' 'if (strcmp(a->kind->name, "file") == 0) x();' \
            'int l = a->imp->layer;' 'FileSource *fs = file_source_of(a);' 'if (!s->m) label = "File";' \
            'label = s->m ? "Sentence" : "File";' 'if (a->m && a->grid) x();'; do
    n=$((n + 1))
    printf 'static void f(void)\n{\n    %s\n}\n' "$line" > "$tmp/p$n.c"
    if [ -n "$(asks "$tmp/p$n.c")" ]; then ok "caught: $line"; else bad "not caught: $line"; fi
done
printf '/* a->imp and !s->m in a comment */\nstatic const char *t = "a->kind == &source_file";\n' > "$tmp/quiet.c"
if [ -z "$(asks "$tmp/quiet.c")" ]; then ok "comments and strings do not count"; else bad "a comment or string counted"; fi

echo "sources: $pass passed, $failed failed"
[ "$failed" = 0 ]
