#!/usr/bin/env bash
# Memory of the model path (issue 33): peak resident memory of
#   (a) BIN --model DIR --print head-scores TEXT  (GPT-2 small at T = 1024,
#       the Llama-3.2-1B-shaped model at T = 4096, and at T = 1024 for scale),
#       each once as is and once under prlimit --as=8000000000;
#   (b) the window, BIN --model DIR TEXT (GPT-2 small at T = 1024, the
#       Llama-3.2-1B-shaped model at T = 4096) in a private 1280x800 Xvfb:
#       after the maps show and the worker is idle, and after `g` (the model
#       view; screenshots window-MODEL-T[+prlimit]-{maps,model-view}.png),
#       each once as is and once under prlimit --as=8000000000.
# One line per measurement:
#   what T=… RssAnon_MiB=… VmHWM_MiB=… wall_s=… [maxrss_MiB=… elapsed_s=… rc=…
#   lines=… prlimit=…] as_limit=none|8000000000
# RssAnon_MiB is the largest RssAnon seen polling /proc/PID/status every
# 50 ms (a lower bound on the true peak); VmHWM_MiB is the last VmHWM read
# before the process ended (also a lower bound); maxrss_MiB is
# /usr/bin/time's Maximum resident set size (exact peak RSS, file-backed
# weights included), elapsed_s its wall time of the process, lines the
# number of lines the command printed. Models come from make_models.py
# (made if missing). The texts go to OUT/text-MODEL-T.txt.
#
# Usage: tests/bench/mem/measure.sh BIN   (from the repository root)
# Env:   MODELS=/tmp/attnviz-mem-models  OUT=/tmp/attnviz-mem (logs, PNGs)
#        ATTNVIZ_DATADIR (default: the repository's assets/)
#        PARTS="cli window" (which of (a) and (b) run)
#        CLI_MODELS="gpt2 llama llama1024" (GPT-2 small at 1024, the Llama-shaped
#        model at 4096 and at 1024)  CLI_LIMITS="0 1" (0: as is, 1: prlimit)
#        WINDOW_MODELS="gpt2 llama"  WINDOW_LIMITS="0 1" (0: as is, 1: prlimit)
#        (a name in CLI_MODELS or WINDOW_MODELS may carry its own limit:
#        llama:1 runs only under prlimit)
#        GUARD_MIB=16000: a run whose RSS passes this is killed (the machine
#        has no swap; a Llama map array that overcommits would bring the OOM
#        killer)
set -u
BIN=${1:?usage: measure.sh BIN}
BIN=$(readlink -f "$BIN")
HERE=$(cd "$(dirname "$0")" && pwd)
MODELS=${MODELS:-/tmp/attnviz-mem-models}
OUT=${OUT:-/tmp/attnviz-mem}
GUARD_MIB=${GUARD_MIB:-16000}
AS_LIMIT=8000000000
mkdir -p "$OUT"
# the window looks for its built-in embedding table beside a copied binary too
export ATTNVIZ_DATADIR=${ATTNVIZ_DATADIR:-$(cd "$HERE/../../../assets" && pwd)}
[ -f "$MODELS/gpt2-small/model.safetensors" ] && [ -f "$MODELS/llama-1b-attn/model.safetensors" ] ||
    /usr/bin/python3 "$HERE/make_models.py" "$MODELS" >&2 || exit 1
GPT2=$MODELS/gpt2-small LLAMA=$MODELS/llama-1b-attn

now() { date +%s.%N; }
mib() { awk -v k="${1:-0}" 'BEGIN { printf "%.1f", k / 1024 }'; }
status_kb() { awk -v f="$2:" '$1 == f { print $2; exit }' "/proc/$1/status" 2>/dev/null; }
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null; }
# the descendant of $1 running BIN (time -> timeout -> prlimit, which execs BIN)
find_bin() {
    local p=$1 c
    for _ in 1 2 3 4; do
        [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$BIN" ] && { echo "$p"; return 0; }
        c=$(cat /proc/"$p"/task/*/children 2>/dev/null | awk '{ print $1; exit }')
        [ -n "$c" ] || return 1
        p=$c
    done
    return 1
}

# A text of exactly T tokens of MODEL (about one token a byte): paragraphs of
# sentences/long.txt repeated, cut to length, the length corrected until
# --print tokens gives T lines.
BASE=$(grep -v '^#' "$HERE/../../../sentences/long.txt" 2>/dev/null | tr '\n' ' ')
[ ${#BASE} -gt 200 ] || BASE='on monday morning the old train left the small station at seven. '
while [ ${#BASE} -lt 40000 ]; do BASE="$BASE$BASE"; done
fit_text() { # model T -> sets TEXT, NTOK
    local n=$2 i
    for i in 1 2 3 4 5 6 7 8; do
        TEXT=${BASE:0:$n}
        NTOK=$("$BIN" --model "$1" --print tokens "$TEXT" 2>/dev/null | wc -l)
        [ "$NTOK" = "$2" ] && return 0
        n=$((n + $2 - NTOK))
    done
    return 1
}

# cli WHAT T LIMIT ARGS...: run BIN ARGS (LIMIT 1: under prlimit --as), poll.
cli() {
    local what=$1 T=$2 limit=$3; shift 3
    local pre=() tag=$what
    [ "$limit" = 1 ] && { pre=(prlimit --as=$AS_LIMIT); tag="$what+prlimit"; }
    local log=$OUT/${what//[^A-Za-z0-9_+=.-]/_}-$T${tag#"$what"}
    local t0 pid bin="" hwm=0 anon=0 a h guard=0
    t0=$(now)
    /usr/bin/time -f '%M %e %x' -o "$log.time" timeout 300 "${pre[@]}" "$BIN" "$@" \
        >"$log.out" 2>"$log.err" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        [ -n "$bin" ] || bin=$(find_bin "$pid")
        if [ -n "$bin" ]; then
            a=$(status_kb "$bin" RssAnon); h=$(status_kb "$bin" VmHWM)
            [ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
            [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
            if [ "$hwm" -gt $((GUARD_MIB * 1024)) ]; then guard=1; kill "$bin"; fi
        fi
        sleep 0.05
    done
    wait "$pid"
    local wall rss el rc msg
    wall=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
    # the last line of time's file (a first line says so when a signal ended it)
    read -r rss el rc < <(tail -n 1 "$log.time" 2>/dev/null)
    grep -q 'terminated by signal' "$log.time" 2>/dev/null &&
        rc="sig$(awk '/terminated by signal/ { print $NF }' "$log.time")"
    msg=$(grep -v '^Command' "$log.err" | head -1)
    local res=ok
    [ "$rc" = 0 ] || res=failed
    [ "$guard" = 1 ] && res="killed(guard ${GUARD_MIB}MiB)"
    printf '%s T=%s RssAnon_MiB=%s VmHWM_MiB=%s wall_s=%s maxrss_MiB=%s elapsed_s=%s rc=%s lines=%s %s as_limit=%s%s\n' \
        "$what" "$T" "$(mib "$anon")" "$(mib "$hwm")" "$wall" "$(mib "${rss:-0}")" "${el:-nan}" "$rc" \
        "$(wc -l <"$log.out")" \
        "$([ "$limit" = 1 ] && echo "prlimit=$res" || echo "result=$res")" \
        "$([ "$limit" = 1 ] && echo $AS_LIMIT || echo none)" "${msg:+ msg=\"$msg\"}"
}

# ---- (a) the command line ------------------------------------------------------
PARTS=" ${PARTS:-cli window} "
[[ $PARTS == *" cli "* ]] &&
for which in ${CLI_MODELS:-gpt2 llama llama1024}; do
    limits=${CLI_LIMITS:-0 1}
    case $which in *:*) limits=${which#*:}; which=${which%%:*} ;; esac
    case $which in
    gpt2) set -- gpt2-small "$GPT2" 1024 ;;
    llama) set -- llama-1b-attn "$LLAMA" 4096 ;;
    llama1024) set -- llama-1b-attn "$LLAMA" 1024 ;;
    *) echo "measure.sh: CLI_MODELS: $which is not one of gpt2 llama llama1024" >&2; continue ;;
    esac
    if ! fit_text "$2" "$3"; then echo "$1: no text of $3 tokens (last $NTOK)"; continue; fi
    printf '%s' "$TEXT" >"$OUT/text-$1-$3.txt"
    for limit in $limits; do
        cli "$1:head-scores" "$3" "$limit" --model "$2" --print head-scores "$TEXT"
    done
done

# ---- (b) the window under a private Xvfb ----------------------------------------
[[ $PARTS == *" window "* ]] || exit 0
# wait_idle PID MAX_S: until the process's CPU time grows by at most 1 tick
# (10 ms) over 2 s, polled every 0.25 s; MAX_S seconds at most. Raises
# ANON_PEAK (the largest RssAnon seen, kB). 1 when the process ended or MAX_S
# passed.
ANON_PEAK=0
wait_idle() {
    local p=$1 max=$2 t0 last cur since a
    t0=$(now); last=$(cpu_ticks "$p"); since=$(now)
    while kill -0 "$p" 2>/dev/null; do
        sleep 0.25
        a=$(status_kb "$p" RssAnon)
        [ -n "$a" ] && [ "$a" -gt "$ANON_PEAK" ] && ANON_PEAK=$a
        cur=$(cpu_ticks "$p") || return 1
        if [ $((cur - last)) -gt 1 ]; then last=$cur; since=$(now); fi
        awk -v a="$since" -v b="$(now)" 'BEGIN { exit !(b - a >= 2) }' && return 0
        awk -v a="$t0" -v b="$(now)" -v m="$max" 'BEGIN { exit !(b - a > m) }' && return 1
    done
    return 1
}
window_line() { # what T pid wall limit
    printf '%s T=%s RssAnon_MiB=%s RssAnon_peak_MiB=%s VmHWM_MiB=%s wall_s=%s VmRSS_MiB=%s %s as_limit=%s\n' "$1" "$2" \
        "$(mib "$(status_kb "$3" RssAnon)")" "$(mib "$ANON_PEAK")" "$(mib "$(status_kb "$3" VmHWM)")" "$4" \
        "$(mib "$(status_kb "$3" VmRSS)")" "$([ "$5" = 1 ] && echo "prlimit=--as=$AS_LIMIT" || echo "prlimit=none")" \
        "$([ "$5" = 1 ] && echo $AS_LIMIT || echo none)"
}

D=""
for n in $(seq 91 140); do
    [ -e /tmp/.X11-unix/X$n ] || [ -e /tmp/.X$n-lock ] || { D=$n; break; }
done
Xvfb :$D -screen 0 1280x800x24 -noreset >"$OUT/xvfb.log" 2>&1 &
XPID=$!
APID=""
cleanup() {
    [ -n "$APID" ] && kill "$APID" 2>/dev/null
    kill "$XPID" 2>/dev/null
    wait "$XPID" 2>/dev/null # its CPU time counted as this script's children's
}
trap cleanup EXIT
for _ in $(seq 50); do [ -e /tmp/.X11-unix/X$D ] && break; sleep 0.1; done
export DISPLAY=:$D

# window NAME DIR T LIMIT MAX_S: BIN --model DIR TEXT (a text of exactly T
# tokens; LIMIT 1: under prlimit --as=AS_LIMIT, which execs BIN, so the pid
# is BIN's) in the 1280x800 screen; after the maps show and the process is
# idle (the worker's forward done) a line and a screenshot, then G (the
# model view), again a line and a screenshot; then the window is closed.
# MAX_S: the longest wait for the window and for each idle.
window() {
    local name=$1 dir=$2 T=$3 limit=$4 max=$5 pre=() tag=$1-$3 t0 t1 w wid a
    [ "$limit" = 1 ] && { pre=(prlimit --as=$AS_LIMIT); tag="$tag+prlimit"; }
    if ! fit_text "$dir" "$T"; then echo "$name: no text of $T tokens (last $NTOK)"; return 1; fi
    printf '%s' "$TEXT" >"$OUT/text-$name-$T.txt"
    ANON_PEAK=0
    t0=$(now)
    "${pre[@]}" "$BIN" --model "$dir" "$TEXT" >"$OUT/window-$tag.out" 2>"$OUT/window-$tag.err" &
    APID=$!
    # the window shows after the command line's first forward (on the main thread)
    wid=""
    while [ -z "$wid" ] && kill -0 "$APID" 2>/dev/null &&
        awk -v a="$t0" -v b="$(now)" -v m="$max" 'BEGIN { exit !(b - a < m) }'; do
        a=$(status_kb "$APID" RssAnon)
        [ -n "$a" ] && [ "$a" -gt "$ANON_PEAK" ] && ANON_PEAK=$a
        wid=$(timeout 5 xdotool search --sync --onlyvisible --name attnviz 2>/dev/null | head -1)
    done
    if [ -z "$wid" ]; then
        echo "$name:window T=$T: no window within $max s ($(head -1 "$OUT/window-$tag.err"))" \
            "$([ "$limit" = 1 ] && echo "prlimit=--as=$AS_LIMIT")"
        kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; APID=""
        return 1
    fi
    if wait_idle "$APID" "$max"; then
        w=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a - 2 }')
        window_line "$name:window-maps" "$T" "$APID" "$w" "$limit"
        command -v import >/dev/null && import -window root "$OUT/window-$tag-maps.png"
        timeout 10 xdotool windowfocus --sync "$wid"
        t1=$(now)
        timeout 10 xdotool key g
        sleep 0.3
        if wait_idle "$APID" "$max"; then
            w=$(awk -v a="$t1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a - 2 }')
            window_line "$name:window-model-view(g)" "$T" "$APID" "$w" "$limit"
            command -v import >/dev/null && import -window root "$OUT/window-$tag-model-view.png"
        else
            echo "$name:window T=$T: not idle within $max s after g (or it ended: $(head -1 "$OUT/window-$tag.err"))"
        fi
    else
        echo "$name:window T=$T: not idle within $max s (or it ended: $(head -1 "$OUT/window-$tag.err"))"
    fi
    kill "$APID" 2>/dev/null
    wait "$APID" 2>/dev/null
    APID=""
}

# the window's figures, each as is and under prlimit --as=8000000000
# (WINDOW_LIMITS="0 1"); WINDOW_MODELS picks among gpt2 llama
for which in ${WINDOW_MODELS:-gpt2 llama}; do
    limits=${WINDOW_LIMITS:-0 1}
    case $which in *:*) limits=${which#*:}; which=${which%%:*} ;; esac
    for limit in $limits; do
        case $which in
        gpt2) window gpt2-small "$GPT2" 1024 "$limit" 300 ;;
        # the Llama-3.2-1B-shaped model at 4096: two forwards of a minute or
        # more each on two cores (the command line's, then the worker's)
        llama) window llama-1b-attn "$LLAMA" 4096 "$limit" 1500 ;;
        esac
    done
done
echo "screenshots, logs and texts: $OUT"
