#!/usr/bin/env bash
# tools/attnviz-dump's writer and command line, and the attention fixtures
# (tests/test_dump.py, with Debian's numpy; no torch needed). Run from
# anywhere; prints one line a check and "dump: N passed, M failed"; exits 1
# when a check failed.
set -u
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "FAIL - $PY has no numpy (apt-get install python3-numpy)"
    echo "dump: 0 passed, 1 failed"
    exit 1
fi
"$PY" tests/test_dump.py || exit 1
