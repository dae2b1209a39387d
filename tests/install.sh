#!/usr/bin/env bash
# make install / make uninstall (issue 16, item 14): into a temporary
# DESTDIR, every file is there (program, data, .desktop entry, icon, man
# page); the man page has .TH and names every option of --help, renders with
# man (or groff) when there; the .desktop entry validates (or has its keys);
# uninstall leaves no file behind. Run from the repository root.
set -u
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }

bin=${ATTNVIZ_BIN:-build/attnviz}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/usr
root=$dest$prefix

if make -s --no-print-directory install DESTDIR="$dest" PREFIX="$prefix" >"$dest.log" 2>&1; then
    ok "make install DESTDIR=… PREFIX=$prefix"
else
    bad "make install failed: $(cat "$dest.log")"
fi
rm -f "$dest.log"

want="bin/attnviz share/applications/attnviz.desktop share/icons/hicolor/scalable/apps/attnviz.svg
share/man/man1/attnviz.1 share/attnviz/embeddings.txt"
for s in sentences/*.txt; do want="$want share/attnviz/$s"; done
for s in assets/models/nano-sort/* assets/models/shakespeare-tiny/*; do want="$want share/attnviz/${s#assets/}"; done
missing=""
for f in $want; do [ -f "$root/$f" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then ok "every file installed"; else bad "not installed:$missing"; fi
if [ -x "$root/bin/attnviz" ] && "$root/bin/attnviz" --version >/dev/null 2>&1; then
    ok "the installed program runs"
else
    bad "the installed program does not run"
fi
# the shipped model from the installed data, as a fresh machine has it
first=$(cd / && env -u ATTNVIZ_DATADIR "$root/bin/attnviz" --model nano-sort --print predictions CBABBC 2>&1 | head -1)
if [ "$(echo "$first" | cut -f3)" = '"A"' ]; then ok "the installed nano-sort continues CBABBC with A"
else bad "the installed nano-sort: $first"; fi
tok=$(cd / && env -u ATTNVIZ_DATADIR "$root/bin/attnviz" --model shakespeare-tiny --print tokens "To be" 2>&1 | tail -1)
if [ "$(echo "$tok" | cut -f2)" = '" be"' ]; then ok "the installed shakespeare-tiny opens (\"To be\": $tok)"
else bad "the installed shakespeare-tiny: $tok"; fi
extra=$(cd "$root" && find . -type f | sed 's|^\./||' | sort | while read -r f; do
    case " $(echo $want) " in *" $f "*) ;; *) echo "$f" ;; esac; done)
if [ -z "$extra" ]; then ok "nothing else installed"; else bad "unexpected files: $extra"; fi

# --- the man page: the same text as --help --------------------------------
# overstrikes (bold, underline) out of formatted text; col is not in every
# minimal system
plain() { if command -v col >/dev/null 2>&1; then col -b; else sed 's/.\x08//g'; fi; }
page=$root/share/man/man1/attnviz.1
if head -1 "$page" | grep -q '^\.TH ATTNVIZ 1 '; then ok "man page starts with .TH"; else bad "man page has no .TH"; fi
if command -v man >/dev/null 2>&1; then
    text=$(MANWIDTH=100 MANPAGER=cat PAGER=cat man -l "$page" 2>"$dest.err" | plain)
    if [ -n "$text" ] && [ ! -s "$dest.err" ]; then ok "man -l renders it"; else bad "man -l: $(cat "$dest.err")"; fi
    rm -f "$dest.err"
elif command -v groff >/dev/null 2>&1; then
    text=$(groff -man -Tutf8 "$page" | plain)
else
    text=$(sed 's/\\-/-/g; s/\\f[BRI]//g; s/\\&//g; s/^\.S[SH] //' "$page")
fi
if command -v groff >/dev/null 2>&1; then
    warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    if [ -z "$warn" ]; then ok "groff: no warnings"; else bad "groff warns: $warn"; fi
fi
# groff's UTF-8 output writes a hyphen as U+2010
text=$(printf '%s\n' "$text" | sed 's/\xe2\x80\x90/-/g')
# every option of --help (long and short names) and every section heading
opts=$("$bin" --help | grep -E '^ +-' | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | tr -d ' ,' | sort -u)
absent=""
for o in $opts; do
    printf '%s\n' "$text" | grep -qE -- "(^|[ ,])$o([ ,]|$)" || absent="$absent $o"
done
nopts=$(echo $opts | wc -w)
if [ -z "$absent" ] && [ "$nopts" -gt 20 ]; then ok "man page names all $nopts options of --help"
else bad "man page lacks:$absent (of $nopts options)"; fi
heads=$("$bin" --help | grep -E '^[A-Z][a-z ()]*:$' | tr -d ':')
absent=""
while read -r h; do [ -z "$h" ] || printf '%s\n' "$text" | grep -qx " *$h" || absent="$absent [$h]"; done <<<"$heads"
if [ -z "$absent" ]; then ok "man page has the sections of --help"; else bad "man page lacks sections:$absent"; fi
# each option with its whole text, as --help words it (continuation lines
# joined, white space squeezed): the page says the same
flat=$(printf '%s\n' "$text" | tr -s '[:space:]' ' ')
entries=$("$bin" --help | awk '
    /^ +-/ { if (e != "") print e; e = $0; next }
    /^       +[^ -]/ && e != "" { e = e " " $0; next }
    { if (e != "") print e; e = "" }
    END { if (e != "") print e }' | tr -s ' \t' ' ' | sed 's/^ //; s/ $//')
differ=0 n=0
while IFS= read -r e; do
    n=$((n + 1))
    case "$flat" in *"$e"*) ;; *) differ=$((differ + 1)); echo "  not in the page: $e" ;; esac
done <<<"$entries"
if [ "$differ" = 0 ] && [ "$n" -gt 20 ]; then ok "every option's text of --help is in the page ($n)"
else bad "$differ of $n options' texts differ from --help"; fi

# --- the .desktop entry -----------------------------------------------------
desk=$root/share/applications/attnviz.desktop
if command -v desktop-file-validate >/dev/null 2>&1; then
    out=$(desktop-file-validate "$desk" 2>&1)
    if [ -z "$out" ]; then ok "desktop-file-validate: valid"; else bad "desktop-file-validate: $out"; fi
else
    echo "note - desktop-file-validate not installed (desktop-file-utils): checking keys only"
fi
keys_ok=1
head -1 "$desk" | grep -qx '\[Desktop Entry\]' || keys_ok=0
for k in Type=Application Name= Exec=attnviz Icon=attnviz Categories=; do
    grep -q "^$k" "$desk" || { keys_ok=0; echo "  no $k"; }
done
grep -qE '^Categories=.*;$' "$desk" || keys_ok=0
if [ "$keys_ok" = 1 ]; then ok ".desktop has Type, Name, Exec, Icon, Categories"; else bad ".desktop keys"; fi
# the names it uses are the names installed
exe=$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$desk")
icon=$(sed -n 's/^Icon=//p' "$desk")
if [ -f "$root/bin/$exe" ] && [ -f "$root/share/icons/hicolor/scalable/apps/$icon.svg" ]; then
    ok ".desktop's Exec and Icon are the installed files"
else
    bad ".desktop's Exec ($exe) or Icon ($icon) not installed"
fi
if command -v xmllint >/dev/null 2>&1; then
    if xmllint --noout "$root/share/icons/hicolor/scalable/apps/attnviz.svg" 2>/dev/null; then
        ok "the icon is well-formed XML"; else bad "the icon is not well-formed XML"; fi
fi

# --- uninstall --------------------------------------------------------------
if make -s --no-print-directory uninstall DESTDIR="$dest" PREFIX="$prefix" >/dev/null 2>&1; then
    ok "make uninstall"
else
    bad "make uninstall failed"
fi
left=$(find "$dest" -type f -o -type l -o -name '*attnviz*')
if [ -z "$left" ]; then ok "uninstall leaves no file behind"; else bad "left after uninstall: $left"; fi

echo "install: $pass passed, $failed failed"
[ "$failed" = 0 ]
