#!/bin/sh
# The man page attnviz.1 from the program's own --help (one text for both):
# "usage:" lines → SYNOPSIS, the next line → DESCRIPTION, "Heading:" lines →
# subsections of OPTIONS, "  -x, --long ARG   text" → a tagged paragraph,
# deeper-indented lines → the text continued. Usage: mkman.sh BINARY > attnviz.1
set -eu
bin=$1
version=$("$bin" --version | awk '{print $NF}')
"$bin" --help | awk -v version="$version" '
function esc(s) {
    gsub(/\\/, "\\e", s)
    s = minus(s)
    # a line starting with a dot or a quote would be a request: put \& first
    if (s ~ /^[.'\'']/) s = "\\&" s
    return s
}
# Options are typed: their dashes are minus signs (\-), also inside a name
# (--sentence-file); a hyphen inside a word of the text (1-based) stays.
function minus(s,    out, i, c, opt) {
    out = ""; opt = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "-" && (opt || i == 1 || substr(s, i - 1, 1) ~ /[ (,]/))
            opt = 1
        else if (c !~ /[-A-Za-z0-9]/)
            opt = 0
        out = out (c == "-" && opt ? "\\-" : c)
    }
    return out
}
BEGIN {
    print ".TH ATTNVIZ 1 \"\" \"attnviz " version "\" \"User Commands\""
    # option names are typed: never hyphenated, no stretched spaces
    print ".nh"
    print ".ad l"
    print ".SH NAME"
    print "attnviz \\- see self-attention: a sentence'\''s attention as a heatmap and lines, with editable weights"
}
/^usage: / { sub(/^usage: +/, ""); print ".SH SYNOPSIS"; syn(); next }
syn_open && /^       [^ ]/ { sub(/^ +/, ""); print ".br"; syn(); next }
syn_open { syn_open = 0; print ".SH DESCRIPTION"; print esc($0); print ".SH OPTIONS"; next }
/^[^ ].*:$/ { sub(/:$/, ""); print ".SS " esc($0); next }
/^ +-/ {
    line = $0
    sub(/^ +/, "", line)
    # the option ends at two spaces, else at the help column (27)
    p = index(line, "  ")
    if (p) { spec = substr(line, 1, p - 1); text = substr(line, p) }
    else { spec = substr($0, 1, 26); text = substr($0, 27); sub(/^ +/, "", spec) }
    sub(/^ +/, "", text); sub(/ +$/, "", spec)
    print ".TP"
    print "\\fB" esc(spec) "\\fR"
    print esc(text)
    next
}
/^ +[^ ]/ { sub(/^ +/, ""); print esc($0); next }
function syn(    name, rest) {
    name = $1; rest = $0; sub(/^[^ ]+ */, "", rest)
    print ".B " name
    if (rest != "") print esc(rest)
    syn_open = 1
}
'
