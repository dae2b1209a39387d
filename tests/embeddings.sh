#!/usr/bin/env bash
# The embedding table reads right in basic self-attention (train→station,
# check→cashed/bank, both banks, it→animal), in basic cross-attention each
# word of sentences/translation.txt finds its translation (heureux→happy),
# and it covers every sentence file (both sides of a "|||" pair):
# tests/check_embeddings.py, with Debian's numpy.
set -u
cd "$(dirname "$0")/.." || exit 1
/usr/bin/python3 tests/check_embeddings.py >/tmp/attnviz-check-embeddings.$$ 2>&1
rc=$?
tail -n 3 /tmp/attnviz-check-embeddings.$$
[ $rc = 0 ] || cat /tmp/attnviz-check-embeddings.$$
rm -f /tmp/attnviz-check-embeddings.$$
echo "embeddings: $([ $rc = 0 ] && echo passed || echo FAILED)"
exit $rc
