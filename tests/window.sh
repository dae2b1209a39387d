#!/usr/bin/env bash
# End-to-end test of the window (src/main.c, src/app/window.c): the real
# binary on a private Xvfb, real X11 keys through xdotool, screenshots through
# ImageMagick. Every wait is a polling loop with a time limit. Also checks
# that with no display the program refuses to start. Skips (exit 0) only when
# Xvfb, xdotool or ImageMagick's import are missing.
# Usage: ATTNVIZ_BIN=build/attnviz bash tests/window.sh   (from anywhere;
# WINDOW_KEEP=1 keeps the screenshots and logs in the temp folder)
set -u
cd "$(dirname "$0")/.." || exit 1

BIN=${ATTNVIZ_BIN:-build/attnviz}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
LIMIT=${WINDOW_TIMEOUT:-20} # seconds for each wait

for t in Xvfb xdotool import; do
  if ! command -v "$t" >/dev/null 2>&1; then
    echo "window: skipped: $t not found (sudo apt-get install xvfb xdotool imagemagick)"
    exit 0
  fi
done
for t in convert identify; do
  command -v "$t" >/dev/null 2>&1 || { echo "window: $t not found (imagemagick is half installed)"; exit 1; }
done
if [ ! -x "$BIN" ]; then
  echo "window: $BIN is not built (run make)"
  echo "window: 0 passed, 1 failed"
  exit 1
fi

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "  ok    $*"; }
fail() { failed=$((failed + 1)); echo "  FAIL  $*"; }
# check DESCRIPTION COMMAND...: pass when the command succeeds
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-window.XXXXXX") || exit 1
mkdir -p "$tmp/home" "$tmp/out"
app=""
xvfb=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  if [ -n "$app" ] && kill -0 "$app" 2>/dev/null; then
    kill "$app" 2>/dev/null
    wait "$app" 2>/dev/null
  fi
  if [ -n "$xvfb" ]; then
    kill "$xvfb" 2>/dev/null
    wait "$xvfb" 2>/dev/null
  fi
  if [ -n "${WINDOW_KEEP:-}" ]; then echo "window: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# wait_for SECONDS COMMAND...: poll every 0.1 s until COMMAND succeeds
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

# A UTF-8 locale for the program, so the title's em dash can reach X11.
loc=$(locale -a 2>/dev/null | grep -i -m1 -E '^(C\.utf-?8|en_US\.utf-?8)$')
loc=${loc:-C.UTF-8}

# ---- no display: a clear error, exit 1 ------------------------------------------
echo "window: no display"
err=$(cd "$tmp" && env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER HOME="$tmp/home" \
  timeout 30 "$BIN" 2>&1 >/dev/null)
rc=$?
check "exits with status 1 (got $rc)" [ "$rc" -eq 1 ]
check "stderr says 'cannot open a window' (got: ${err:-nothing})" grep -q "cannot open a window" <<<"$err"

# ---- a private X server ----------------------------------------------------------
d=120
xvfb_up() { kill -0 "$xvfb" 2>/dev/null && [ -e "/tmp/.X11-unix/X$d" ]; }
xvfb_gone() { ! kill -0 "$xvfb" 2>/dev/null; }
start_xvfb() {
  while [ "$d" -lt 400 ]; do
    if [ -e "/tmp/.X11-unix/X$d" ] || [ -e "/tmp/.X$d-lock" ]; then
      d=$((d + 1))
      continue
    fi
    Xvfb ":$d" -noreset -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
    xvfb=$!
    local n=$((LIMIT * 10))
    while [ "$n" -gt 0 ] && ! xvfb_gone; do
      xvfb_up && DISPLAY=":$d" xdotool getdisplaygeometry >/dev/null 2>&1 && return 0
      sleep 0.1
      n=$((n - 1))
    done
    kill "$xvfb" 2>/dev/null
    wait "$xvfb" 2>/dev/null
    xvfb=""
    d=$((d + 1)) # taken by someone else in the meantime: the next one
  done
  return 1
}
if ! start_xvfb; then
  echo "window: cannot start Xvfb:"
  cat "$tmp/xvfb.log" 2>/dev/null
  echo "window: $passed passed, $((failed + 1)) failed"
  exit 1
fi
export DISPLAY=":$d"
echo "window: Xvfb on $DISPLAY"

# ---- the window ------------------------------------------------------------------------
# start_app HOME ARGS...: the program in the background ($app), its window ($wid).
# Leak checks are off for a SAN build here: libdbus, libX11 and Mesa leak on
# the X11 path; the C tests check leaks on the dummy-driver path.
start_app() {
  local home=$1
  shift
  mkdir -p "$home"
  (cd "$tmp" && exec env -u SDL_VIDEODRIVER -u WAYLAND_DISPLAY -u XDG_DATA_HOME -u XDG_CONFIG_HOME \
    HOME="$home" LC_ALL="$loc" ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    "$BIN" "$@" >"$tmp/app.out" 2>"$tmp/app.err") &
  app=$!
  wid=$(timeout "$LIMIT" xdotool search --sync --onlyvisible --name '^attnviz' 2>/dev/null | head -1)
  [ -n "$wid" ]
}
# quit_app: Ctrl+Q, then the exit status in $rc (or 255 when it does not exit)
app_gone() { ! kill -0 "$app" 2>/dev/null; }
quit_app() {
  xdotool key ctrl+q
  rc=255
  wait_for "$LIMIT" app_gone || return 1
  wait "$app"
  rc=$?
  app=""
}
# the sentence in the autosave under HOME (written when the program quits)
autosaved_sentence() {
  local f
  f=$(find "$1" -name 'autosave*.json' 2>/dev/null | head -1)
  [ -n "$f" ] && grep -o '"sentence": *"[^"]*"' "$f" | tail -1 | sed 's/^"sentence": *"//; s/"$//'
}

if ! start_app "$tmp/home" --export-dir "$tmp/out"; then
  fail "a window named attnviz appears within ${LIMIT}s"
  echo "--- program stderr:"
  cat "$tmp/app.err"
  echo "window: $passed passed, $failed failed"
  exit 1
fi
pass "a window appears (id $wid)"

title() { xdotool getwindowname "$wid" 2>/dev/null; }
title_is() { [ "$(title)" = "$1" ]; }
want="attnviz — the train left the station on time"
wait_for 5 title_is "$want"
check "title is '$want' (got '$(title)')" title_is "$want"

eval "$(xdotool getwindowgeometry --shell "$wid")" # X Y WIDTH HEIGHT
check "window is 1280x800 (got ${WIDTH}x$HEIGHT)" [ "${WIDTH}x$HEIGHT" = 1280x800 ]
xdotool windowfocus --sync "$wid" 2>/dev/null
check "window has the keyboard focus" [ "$(xdotool getwindowfocus 2>/dev/null)" = "$wid" ]

# screenshot FILE; pixel FILE X Y (window coordinates) -> "R G B"
shot() { import -window root "$1" 2>/dev/null; }
pixel() {
  convert "$1" -crop "1x1+$((X + $2))+$((Y + $3))" -depth 8 txt:- 2>/dev/null |
    sed -n '2s/^[^(]*(\([0-9]*\),\([0-9]*\),\([0-9]*\).*/\1 \2 \3/p'
}
# the heatmap's cells at 1280x800, sampled 110x110
HEAT="440x440+$((X + 70))+$((Y + 140))"
heat_sig() { convert "$1" -crop "$HEAT" +repage -depth 8 rgb:- 2>/dev/null | md5sum | cut -c1-32; }

first_frame() { shot "$tmp/shot1.png" && [ "$(pixel "$tmp/shot1.png" 2 2)" = "20 22 26" ]; }
wait_for "$LIMIT" first_frame
check "dark background at the top-left corner (got $(pixel "$tmp/shot1.png" 2 2))" \
  [ "$(pixel "$tmp/shot1.png" 2 2)" = "20 22 26" ]
check "dark background at the bottom-right corner (got $(pixel "$tmp/shot1.png" 1277 797))" \
  [ "$(pixel "$tmp/shot1.png" 1277 797)" = "20 22 26" ]

# colourful: most sampled heatmap pixels have a chroma (max - min) of 60 or more
read -r colourful total distinct < <(convert "$tmp/shot1.png" -crop "$HEAT" +repage -sample 110x110 \
  -depth 8 txt:- 2>/dev/null | awk -F'[(),]' 'NR > 1 {
      r = $3; g = $4; b = $5; mx = r; mn = r
      if (g > mx) mx = g; if (b > mx) mx = b; if (g < mn) mn = g; if (b < mn) mn = b
      n++; if (mx - mn >= 60) c++; seen[r "," g "," b] = 1 }
    END { k = 0; for (s in seen) k++; print c + 0, n + 0, k }')
colourful_enough() { [ "$total" -gt 0 ] && [ $((colourful * 100)) -ge $((total * 60)) ] && [ "$distinct" -ge 5 ]; }
check "heatmap region is colourful ($colourful of $total samples, $distinct colours)" colourful_enough

# S: scaling off, the heatmap changes
sig1=$(heat_sig "$tmp/shot1.png")
xdotool key s
changed() { shot "$tmp/shot2.png" && [ "$(heat_sig "$tmp/shot2.png")" != "$sig1" ]; }
wait_for 10 changed
check "pressing s redraws the heatmap with other colours" [ "$(heat_sig "$tmp/shot2.png")" != "$sig1" ]
check "...and the background stays dark" [ "$(pixel "$tmp/shot2.png" 2 2)" = "20 22 26" ]

# a new sentence through the sentence bar
xdotool key Return
xdotool key ctrl+u
xdotool type --delay 30 "the bank of the river"
xdotool key Return
want="attnviz — the bank of the river"
wait_for "$LIMIT" title_is "$want"
check "typing a sentence changes the title to '$want' (got '$(title)')" title_is "$want"

# Ctrl+E writes the heatmap PNG into --export-dir
xdotool key ctrl+e
# (the file written last: the PNG is first written as NAME.png.tmp-PID.png)
export_png() {
  local f
  for f in "$tmp/out"/attnviz-heatmap-*.png; do
    case $f in *.tmp-*) ;; *) [ -f "$f" ] && { echo "$f"; return; } ;; esac
  done
}
exported() { [ -n "$(export_png)" ]; }
wait_for "$LIMIT" exported
png=$(export_png)
check "Ctrl+E writes attnviz-heatmap-*.png" [ -n "$png" ]
if [ -n "$png" ]; then
  check "the export is a PNG (magic bytes)" [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]
  if command -v file >/dev/null 2>&1; then
    check "file(1) says PNG image data ($(file -b "$png" | cut -c1-40))" grep -q "PNG image data" <<<"$(file -b "$png")"
  fi
  info=$(identify -format '%m %w %h' "$png" 2>/dev/null)
  read -r fmt w h <<<"$info"
  png_ok() { [ "${fmt:-}" = PNG ] && [ "${w:-0}" -gt 200 ] && [ "${h:-0}" -gt 200 ]; }
  check "identify reads it: $info" png_ok
  no_temp() { for f in "$tmp/out"/*.tmp-*; do [ -e "$f" ] && return 1; done; return 0; }
  check "no temporary file is left behind" no_temp
fi

# Ctrl+Q quits with status 0; the autosave holds the sentence typed
if quit_app; then
  check "Ctrl+Q: the program exits with status 0 (got $rc)" [ "$rc" -eq 0 ]
else
  fail "Ctrl+Q: the program exits within ${LIMIT}s"
fi
got=$(autosaved_sentence "$tmp/home")
check "the autosave (in the test's HOME) has the sentence typed (got '$got')" \
  [ "$got" = "the bank of the river" ]

# ---- a fresh start: / opens the sentence bar without typing a slash into it ------
echo "window: / at start"
if start_app "$tmp/home2"; then
  wait_for "$LIMIT" first_frame
  xdotool windowfocus --sync "$wid" 2>/dev/null
  xdotool key slash
  xdotool type --delay 30 " x"
  xdotool key Return
  want="the train left the station on time x"
  wait_for 5 title_is "attnviz — $want"
  quit_app
  got=$(autosaved_sentence "$tmp/home2")
  check "/ then ' x' at start: sentence '$want' (got '$got')" [ "$got" = "$want" ]
else
  fail "the window appears a second time"
fi

# ---- the next start restores the autosave; --fresh does not ------------------------
echo "window: autosave restore"
if start_app "$tmp/home"; then
  wait_for 5 title_is "attnviz — the bank of the river"
  check "a second start restores the last sentence (title '$(title)')" \
    [ "$(title)" = "attnviz — the bank of the river" ]
  quit_app
else
  fail "the window appears for the restore"
fi
# flags given now win over the restored autosave's settings (and it keeps the rest)
if start_app "$tmp/home" --causal --theme light; then
  wait_for 5 title_is "attnviz — the bank of the river"
  check "the autosave's sentence is restored with --causal (title '$(title)')" \
    [ "$(title)" = "attnviz — the bank of the river" ]
  light_frame() { shot "$tmp/light.png" && [ "$(pixel "$tmp/light.png" 2 2)" = "255 255 255" ]; }
  wait_for 5 light_frame
  check "--theme light gives the window a light background (pixel $(pixel "$tmp/light.png" 2 2))" \
    [ "$(pixel "$tmp/light.png" 2 2)" = "255 255 255" ]
  quit_app
  f=$(find "$tmp/home" -name 'autosave*.json' | head -1)
  check "--causal over the autosave: it now says causal true" grep -q '"causal": *true' "$f"
else
  fail "the window appears with --causal over the autosave"
fi
if start_app "$tmp/home" --fresh; then
  wait_for 5 title_is "attnviz — the train left the station on time"
  check "--fresh starts on the default sentence (title '$(title)')" \
    [ "$(title)" = "attnviz — the train left the station on time" ]
  quit_app
else
  fail "the window appears with --fresh"
fi
# --session FILE for a lesson not written yet starts it; Ctrl+S writes FILE
if start_app "$tmp/home" --session "$tmp/lesson1.json" "the check was cashed at the bank"; then
  wait_for 5 title_is "attnviz — the check was cashed at the bank"
  xdotool key m ctrl+s
  # saved when the file is written and the autosave beside it names it (Ctrl+S
  # writes the file, then the autosave, then its .from: a kill between them is
  # not what this checks)
  lesson_saved() {
    [ -s "$tmp/lesson1.json" ] &&
      grep -qx "$tmp/lesson1.json" "$(find "$tmp/home" -name 'autosave.json.from' | head -1)" 2>/dev/null
  }
  wait_for 5 lesson_saved
  check "Ctrl+S writes the new lesson's file" [ -s "$tmp/lesson1.json" ]
  check "the new lesson holds its sentence and the mask" \
    sh -c "grep -q 'the check was cashed at the bank' '$tmp/lesson1.json' && grep -q '\"causal\": *true' '$tmp/lesson1.json'"
  # killed right after the save: a plain start comes back to that state
  kill -9 "$app" 2>/dev/null
  wait "$app" 2>/dev/null
  if start_app "$tmp/home"; then
    wait_for 5 title_is "attnviz — the check was cashed at the bank"
    check "after a kill, a plain start restores the state just saved (title '$(title)')" \
      title_is "attnviz — the check was cashed at the bank"
    from=$(find "$tmp/home" -name 'autosave.json.from' | head -1)
    check "the autosave names the lesson that holds its state" grep -qx "$tmp/lesson1.json" "$from"
    f=$(find "$tmp/home" -name 'autosave.json' | head -1)
    check "the restored state has the mask on" grep -q '"causal": *true' "$f"
    quit_app
  else
    fail "the window appears after a kill"
  fi
else
  fail "the window appears with --session for a file not written yet"
fi

# ---- a model lesson survives kill -9, Ctrl+Q, and opens from its session file -----------
echo "window: a model lesson after a restart"
model="$PWD/assets/models/nano-sort"
# the window without its status bar (which says "saved", "restored", "opened")
lesson_sig() { convert "$1" -crop "$((WIDTH))x$((HEIGHT - 40))+$X+$Y" +repage -depth 8 rgb:- 2>/dev/null | md5sum | cut -c1-32; }
frame_settled() { # two screenshots a moment apart agree (the worker's maps came)
  shot "$1" && sleep 0.3 && shot "$1.2.png" && [ "$(lesson_sig "$1")" = "$(lesson_sig "$1.2.png")" ]
}
shown_file() { find "$tmp/home3" -name shown.json | head -1; }
if start_app "$tmp/home3" --model "$model" "CBABBC"; then
  wait_for 5 title_is "attnviz — CBABBC"
  xdotool windowfocus --sync "$wid" 2>/dev/null
  xdotool key --delay 60 l l h Return End
  xdotool type --delay 40 "AB"
  xdotool key --delay 60 Escape Up Up Right ctrl+plus ctrl+plus q shift+2 i
  wait_for 5 title_is "attnviz — CBABBCAB"
  xdotool key ctrl+s
  xdotool key Return # the name asked for: the default kept (in the folder it runs in)
  lesson_written() { [ -s "$tmp/attnviz-session.json" ]; }
  wait_for 5 lesson_written
  check "Ctrl+S with Enter writes attnviz-session.json" lesson_written
  wait_for 10 frame_settled "$tmp/lesson1.png"
  sig1=$(lesson_sig "$tmp/lesson1.png")
  kill -9 "$app" 2>/dev/null
  wait "$app" 2>/dev/null
  app=""
  f=$(shown_file)
  check "the autosave beside the sentence's holds the model's session" \
    sh -c "grep -q '\"text\": \"CBABBCAB\"' '$f' && grep -q '\"layer\": 2, \"head\": 1' '$f'"
  if start_app "$tmp/home3"; then
    wait_for 10 title_is "attnviz — CBABBCAB"
    check "after kill -9 a plain start shows the lesson's text (title '$(title)')" title_is "attnviz — CBABBCAB"
    same1() { frame_settled "$tmp/lesson2.png" && [ "$(lesson_sig "$tmp/lesson2.png")" = "$sig1" ]; }
    wait_for 10 same1
    check "...and the same screen (every head's lines, head 2 off, 132 %, layer 3)" same1
    xdotool windowfocus --sync "$wid" 2>/dev/null
    xdotool key --delay 60 u # the score overview, then Ctrl+Q
    wait_for 10 frame_settled "$tmp/lesson3.png"
    sig3=$(lesson_sig "$tmp/lesson3.png")
    check "U changes the screen" [ "$sig3" != "$sig1" ]
    quit_app
    check "Ctrl+Q: status 0 (got $rc)" [ "$rc" -eq 0 ]
    check "Ctrl+Q's autosave has the overview" grep -q '"score_view": true' "$(shown_file)"
  else
    fail "the window appears after a kill of the model lesson"
  fi
  if start_app "$tmp/home3"; then
    same3() { title_is "attnviz — CBABBCAB" && frame_settled "$tmp/lesson4.png" && [ "$(lesson_sig "$tmp/lesson4.png")" = "$sig3" ]; }
    wait_for 10 same3
    check "after Ctrl+Q a plain start shows the overview again" same3
    quit_app
  else
    fail "the window appears after Ctrl+Q of the model lesson"
  fi
  # the session file on the command line: as Ctrl+O opens it
  if start_app "$tmp/home4" "$tmp/attnviz-session.json"; then
    wait_for 10 title_is "attnviz — CBABBCAB"
    same4() { frame_settled "$tmp/lesson5.png" && [ "$(lesson_sig "$tmp/lesson5.png")" = "$sig1" ]; }
    wait_for 10 same4
    check "attnviz SESSION.json shows the lesson as saved (title '$(title)')" same4
    quit_app
  else
    fail "the window appears for attnviz SESSION.json of a model"
  fi
else
  fail "the window appears with --model"
fi

if [ "$failed" -gt 0 ] && [ -s "$tmp/app.err" ]; then
  echo "--- program stderr:"
  cat "$tmp/app.err"
fi
echo "window: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
