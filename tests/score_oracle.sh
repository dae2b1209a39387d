#!/usr/bin/env bash
# Cross-attention and the score functions against numpy (tests/score_oracle.py,
# Debian's python3-numpy): every golden case with --keys or --score. Run from
# anywhere; exits 1 when a check failed.
set -u
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "FAIL - $PY has no numpy (apt-get install python3-numpy)"
    echo "score oracle: 0 passed, 1 failed"
    exit 1
fi
"$PY" tests/score_oracle.py "${ATTNVIZ_BIN:-build/attnviz}"
