#!/usr/bin/env bash
# One figure, two back ends: the SVG export, rendered by a real SVG renderer
# (rsvg-convert, librsvg2-bin), has the size of the PNG export of the same
# figure with the same options, and every heatmap cell at the same place in
# the same colour (read from each <rect class="cell">'s x, y, width, height
# and fill, sampled inside the cell in both images, away from the printed
# number). Run from the repository root.
set -u
BIN=${ATTNVIZ_BIN:-build/attnviz}
PY=/usr/bin/python3
pass=0 failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-figure.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
if ! command -v rsvg-convert >/dev/null; then
    bad "rsvg-convert not found (apt-get install librsvg2-bin)"; echo "figure: $pass passed, $failed failed"; exit 1
fi

# compare NAME ARGS...: export NAME.png and NAME.svg with ARGS, compare
compare() {
    local name=$1; shift
    if ! "$BIN" "$@" --export "$TMP/$name.png" --export "$TMP/$name.svg" 2>"$TMP/err"; then
        bad "$name: export failed: $(head -c 200 "$TMP/err")"; return
    fi
    if ! rsvg-convert "$TMP/$name.svg" -o "$TMP/$name-svg.png" 2>"$TMP/err"; then
        bad "$name: rsvg-convert failed: $(head -c 200 "$TMP/err")"; return
    fi
    for f in "$name" "$name-svg"; do
        convert "$TMP/$f.png" -alpha off -depth 8 "rgb:$TMP/$f.rgb" 2>/dev/null
    done
    local out
    out=$("$PY" - "$TMP/$name" <<'PY'
import re, sys
import numpy as np
base = sys.argv[1]
svg = open(base + ".svg", encoding="utf-8").read()
m = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)" viewBox="0 0 (\d+) (\d+)"', svg)
W, H = int(m.group(1)), int(m.group(2))
png = np.fromfile(base + ".rgb", dtype=np.uint8)
rs = np.fromfile(base + "-svg.rgb", dtype=np.uint8)
if png.size != W * H * 3 or rs.size != W * H * 3:
    print(f"size: svg says {W}x{H}, png has {png.size // 3} px, rendered svg {rs.size // 3} px"); sys.exit(1)
png = png.reshape(H, W, 3); rs = rs.reshape(H, W, 3)
cells = re.findall(r'<rect class="cell( masked)?" data-i="(\d+)" data-j="(\d+)" data-value="[^"]*" '
                   r'x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)" fill="#([0-9a-f]{6})"', svg)
if not cells:
    print("no cells"); sys.exit(1)
q = re.search(r'class="query" data-i="(\d+)"', svg)
query = int(q.group(1)) if q else -1
bad = 0
for masked, i, j, x, y, w, h, fill in cells:
    x, y, w, h = int(x), int(y), int(w), int(h)
    want = tuple(int(fill[k:k + 2], 16) for k in (0, 2, 4))
    # the cell's first and last pixels (a shifted edge shows there), off
    # the number in its middle and the hatch line, on both images; the
    # selected row's edges and its neighbours' are under its outline
    pts = [(x + w // 8, y + h // 8), (x + w - 1 - w // 8, y + h // 8)]
    if query < 0 or abs(int(i) - query) > 1:
        pts += [(x, y + h // 2), (x + w - 1, y + h // 2), (x + w // 2, y), (x + w // 2, y + h - 1)]
    for px, py in pts:
        a, b = tuple(png[py, px]), tuple(rs[py, px])
        if a != want or b != want:
            bad += 1
            if bad < 5:
                print(f"cell ({i},{j}) at ({px},{py}): png {a}, svg {b}, fill {want}")
print(f"{len(cells)} cells, {bad} differ, {W}x{H}")
sys.exit(1 if bad else 0)
PY
)
    if [ $? -eq 0 ]; then ok "$name: $out"; else bad "$name: $out"; fi
}

S="the train left the station on time"
compare weights -s "$S" --query 3
compare causal-logits -s "$S" --causal --heads 2 --seed 3 --matrix logits --head avg --scale 1
compare scores-dark -s "the animal did not cross the street because it was too tired" --matrix scores --theme dark --colormap magma --scale 3
compare long-sentence -f sentences/long.txt --line 1 --scale 1
compare one-token -s "hello" --scale 2
echo "figure: $pass passed, $failed failed"
[ "$failed" = 0 ]
