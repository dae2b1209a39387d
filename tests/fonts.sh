#!/usr/bin/env bash
# The fonts the project's own set-up installs (issue 28, item 14): make
# deps installs DEB_BUILD, which names a fallback for emoji and symbols
# (fonts-symbola) beside the CJK one; README's package list says the same;
# after the set-up fontconfig knows a font with 🚂 (U+1F682), and the
# program's exports draw it with that font: a PNG of "🚂" is not the PNG of
# a character no font has (the main font's box), with the same vector.
# Run from the repository root.
set -u
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
bin=${ATTNVIZ_BIN:-build/attnviz}
# make run by this script, not as part of the make that runs the tests
unset MAKEFLAGS MFLAGS MAKELEVEL

debs=$(make -s --no-print-directory -pn deps 2>/dev/null | sed -n 's/^DEB_BUILD := //p' | head -1)
case " $debs " in
*" fonts-symbola "*) ok "DEB_BUILD names fonts-symbola" ;;
*) bad "DEB_BUILD lacks fonts-symbola: $debs" ;;
esac
# make deps with every package there: nothing to install (APT_DRY prints
# the apt-get line it would run)
dry=$(make -s --no-print-directory deps APT_DRY=1 2>&1)
if [ -z "$dry" ]; then ok "make deps: every package of DEB_BUILD installed"
else bad "make deps would still install: $dry"; fi
# README's package list (Building by hand) is the Makefile's
readme=$(sed -n '/^Debian\/Ubuntu packages: `/,/`/p' README.md | tr '\n' ' ' | sed 's/.*packages: `\([^`]*\)`.*/\1/')
missing=""
for p in $debs; do case " $readme " in *" $p "*) ;; *) missing="$missing $p" ;; esac; done
if [ -z "$missing" ]; then ok "README names every package of DEB_BUILD"
else bad "README's package list lacks:$missing"; fi

if command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list ':charset=1f682' file)" ]; then
    ok "fontconfig knows a font with U+1F682: $(fc-list ':charset=1f682' family | head -1)"
else
    bad "no font with U+1F682 after the set-up (fc-list ':charset=1f682')"
fi

# the export draws it: 🚂 and U+10FFFD (no font has it) given the same
# word vector (--embeddings), so only the glyphs can differ
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
vec=$(printf '0.5 %.0s' $(seq 1 16))
printf '\xF0\x9F\x9A\x82 %s\n\xF4\x8F\xBF\xBD %s\n' "$vec" "$vec" > "$dir/emb.txt"
if HOME=$dir "$bin" --embeddings "$dir/emb.txt" --export "$dir/train.png" $'\xF0\x9F\x9A\x82' >/dev/null 2>&1 &&
   HOME=$dir "$bin" --embeddings "$dir/emb.txt" --export "$dir/box.png" $'\xF4\x8F\xBF\xBD' >/dev/null 2>&1; then
    if cmp -s "$dir/train.png" "$dir/box.png"; then bad "the PNG of 🚂 is the PNG of a missing glyph's box"
    else ok "the PNG export draws 🚂, not the main font's box"; fi
else
    bad "attnviz --export failed: $(HOME=$dir "$bin" --embeddings "$dir/emb.txt" --export "$dir/t.png" x 2>&1 | head -2)"
fi

echo "fonts: $pass passed, $failed failed"
[ "$failed" = 0 ]
