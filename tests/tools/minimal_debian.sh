#!/bin/bash
# The two commands as a new user meets them (issue 16, item 16): a minimal
# Debian bookworm (debootstrap --variant=minbase) with make and git only,
# a fresh clone of this repository, then
#   1. a user without root: `make run` must print the exact apt-get line;
#   2. root: `make test` installs what it needs and passes;
#   3. root: `make run` opens the window (on a private Xvfb; screenshot).
# Needs root, debootstrap and the network; not part of `make test`.
# Usage: sudo tests/tools/minimal_debian.sh [ROOTDIR]   (default /tmp/deb)
set -u
R=${1:-/tmp/deb}
repo=$(cd "$(dirname "$0")/../.." && pwd)
log() { echo "=== $(date -u +%T) $*"; }
[ "$(id -u)" = 0 ] || { echo "minimal_debian: run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "minimal_debian: apt-get install debootstrap" >&2; exit 2; }
if [ ! -x "$R/usr/bin/apt-get" ]; then
    log "debootstrap --variant=minbase bookworm $R"
    debootstrap --variant=minbase bookworm "$R" http://deb.debian.org/debian >"$R.log" 2>&1 ||
        { tail -20 "$R.log"; exit 1; }
fi
mkdir -p "$R/tmp/.X11-unix"
for m in proc sys dev dev/pts tmp/.X11-unix; do mountpoint -q "$R/$m" || mount --bind "/$m" "$R/$m"; done
trap 'for m in tmp/.X11-unix dev/pts dev sys proc; do umount "$R/$m" 2>/dev/null; done' EXIT
log "apt-get install make git (all the new user has)"
chroot "$R" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make git >/dev/null'
rm -rf "$R/root/attnviz" "$R/home/student/attnviz"
git clone -q "$repo" "$R/root/attnviz"
log "a user without root: make run"
chroot "$R" /bin/sh -c 'id student >/dev/null 2>&1 || useradd -m student'
git clone -q "$repo" "$R/home/student/attnviz" && chroot "$R" chown -R student /home/student/attnviz
chroot "$R" su student -c 'cd ~/attnviz && make run; echo "make run exit $?"'
log "root: make test"
chroot "$R" /bin/bash -c 'cd /root/attnviz && s=$(date +%s); make test >/root/make-test.log 2>&1; echo "make test exit $? after $(( $(date +%s) - s )) s"; grep -E "^[a-z-]+: [0-9]+ passed|make test:" /root/make-test.log'
log "root: make run on a private display"
d=77; while [ -e /tmp/.X11-unix/X$d ]; do d=$((d + 1)); done
Xvfb :$d -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & xp=$!
chroot "$R" /bin/sh -c "cd /root/attnviz && DISPLAY=:$d make run >/root/make-run.log 2>&1" & rp=$!
for _ in $(seq 1 600); do DISPLAY=:$d xdotool search --onlyvisible --name . >/dev/null 2>&1 && break; sleep 0.2; done
sleep 2
DISPLAY=:$d import -window root "$R.png" && log "screenshot $R.png"
pkill -f /root/attnviz/build/attnviz; wait $rp; kill $xp
log done
