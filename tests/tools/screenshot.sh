#!/usr/bin/env bash
# Regenerates the README pictures from the real program (not a test: it
# writes into the source tree):
#   assets/screenshots/window.png   the window at 1280x800 under a private Xvfb,
#                                   query "train" selected, taken with import
#   assets/screenshots/heatmap.png  attnviz --export ... --query 2
#   assets/screenshots/model-view.png  every layer and head of a PyTorch
#                                   fixture (--view grid --export)
#   assets/screenshots/nano-sort.png   the window on the shipped trained
#                                   model (--model nano-sort CBABBC), key 2 focused
# Needs Xvfb, xdotool and ImageMagick (sudo apt-get install xvfb xdotool imagemagick).
# Usage: bash tests/tools/screenshot.sh   (ATTNVIZ_BIN picks the binary)
# shellcheck disable=SC2317 # functions called through trap and wait_for
set -u
cd "$(dirname "$0")/../.." || exit 1

BIN=${ATTNVIZ_BIN:-build/attnviz}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
OUT=assets/screenshots
LIMIT=20
SENTENCE="the train left the station on time"

die() {
  echo "screenshot: $*" >&2
  exit 1
}
for t in Xvfb xdotool import convert; do
  command -v "$t" >/dev/null 2>&1 || die "$t not found (sudo apt-get install xvfb xdotool imagemagick)"
done
[ -x "$BIN" ] || die "$BIN is not built (run make)"
mkdir -p "$OUT" || die "cannot create $OUT"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-shot.XXXXXX") || exit 1
app=""
xvfb=""
cleanup() {
  if [ -n "$app" ] && kill -0 "$app" 2>/dev/null; then
    kill "$app" 2>/dev/null
    wait "$app" 2>/dev/null
  fi
  if [ -n "$xvfb" ]; then
    kill "$xvfb" 2>/dev/null
    wait "$xvfb" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

wait_for() {
  local n=$(($1 * 10))
  shift
  while [ "$n" -gt 0 ]; do
    "$@" && return 0
    sleep 0.1
    n=$((n - 1))
  done
  return 1
}

# ---- the exported heatmap ---------------------------------------------------------
"$BIN" --export "$tmp/heatmap.png" --query 2 "$SENTENCE" || die "the export failed"
mv -f "$tmp/heatmap.png" "$OUT/heatmap.png" || die "cannot write $OUT/heatmap.png"
echo "screenshot: wrote $OUT/heatmap.png"
"$BIN" tests/fixtures/attention/torch_layers.npz --view grid --export "$tmp/model-view.png" ||
  die "the model-view export failed"
mv -f "$tmp/model-view.png" "$OUT/model-view.png" || die "cannot write $OUT/model-view.png"
echo "screenshot: wrote $OUT/model-view.png"

# ---- the window under Xvfb ------------------------------------------------------------
d=120
while [ -e "/tmp/.X11-unix/X$d" ] || [ -e "/tmp/.X$d-lock" ]; do d=$((d + 1)); done
Xvfb ":$d" -noreset -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
xvfb=$!
xvfb_up() { [ -e "/tmp/.X11-unix/X$d" ] && DISPLAY=":$d" xdotool getdisplaygeometry >/dev/null 2>&1; }
wait_for "$LIMIT" xvfb_up || die "Xvfb :$d did not start: $(cat "$tmp/xvfb.log")"
export DISPLAY=":$d"

loc=$(locale -a 2>/dev/null | grep -i -m1 -E '^(C\.utf-?8|en_US\.utf-?8)$')
mkdir -p "$tmp/home"
(cd "$tmp" && exec env -u SDL_VIDEODRIVER -u WAYLAND_DISPLAY -u XDG_DATA_HOME \
  HOME="$tmp/home" LC_ALL="${loc:-C.UTF-8}" "$BIN" --fresh --query 2 "$SENTENCE" \
  >"$tmp/app.log" 2>&1) &
app=$!
wid=$(timeout "$LIMIT" xdotool search --sync --onlyvisible --name '^attnviz' 2>/dev/null | head -1)
[ -n "$wid" ] || die "no window appeared: $(cat "$tmp/app.log")"
xdotool windowfocus --sync "$wid" 2>/dev/null
xdotool mousemove 1279 799 # away from the heatmap: no tooltip

# select query "train" (row 2) with the keyboard: up to the first row, then down
xdotool key k k j
# a settled frame: the dark background drawn and two shots in a row alike
prev=""
settled() {
  import -window "$wid" "$tmp/window.png" 2>/dev/null || return 1
  local bg sig
  bg=$(convert "$tmp/window.png" -crop 1x1+2+2 -depth 8 txt:- 2>/dev/null | sed -n '2s/^[^(]*(\([0-9,]*\)).*/\1/p')
  sig=$(convert "$tmp/window.png" -depth 8 rgb:- 2>/dev/null | md5sum)
  [ "$bg" = "20,22,26" ] && [ "$sig" = "$prev" ] && return 0
  prev=$sig
  sleep 0.3
  return 1
}
wait_for "$LIMIT" settled || die "the window did not settle (see $tmp/window.png)"
size=$(identify -format '%wx%h' "$tmp/window.png")
[ "$size" = 1280x800 ] || die "window shot is $size, not 1280x800"
mv -f "$tmp/window.png" "$OUT/window.png" || die "cannot write $OUT/window.png"
echo "screenshot: wrote $OUT/window.png"

xdotool key ctrl+q
app_gone() { ! kill -0 "$app" 2>/dev/null; }
wait_for "$LIMIT" app_gone && app=""

# ---- the shipped trained model ----------------------------------------------------------
(cd "$tmp" && exec env -u SDL_VIDEODRIVER -u WAYLAND_DISPLAY -u XDG_DATA_HOME \
  HOME="$tmp/home" LC_ALL="${loc:-C.UTF-8}" "$BIN" --fresh --model nano-sort CBABBC \
  >"$tmp/app.log" 2>&1) &
app=$!
wid=$(timeout "$LIMIT" xdotool search --sync --onlyvisible --name '^attnviz' 2>/dev/null | head -1)
[ -n "$wid" ] || die "no window appeared: $(cat "$tmp/app.log")"
xdotool windowfocus --sync "$wid" 2>/dev/null
xdotool mousemove 1279 799
xdotool key Right Right
prev=""
wait_for "$LIMIT" settled || die "the model's window did not settle (see $tmp/window.png)"
mv -f "$tmp/window.png" "$OUT/nano-sort.png" || die "cannot write $OUT/nano-sort.png"
echo "screenshot: wrote $OUT/nano-sort.png"
xdotool key ctrl+q
wait_for "$LIMIT" app_gone && app=""
exit 0
