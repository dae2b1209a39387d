#!/usr/bin/env bash
# Command-line tests for attnviz: --print text/csv/json, numbers checked
# against an independent numpy implementation, the -w round trip, the ways
# to give a sentence, and every error with its exit code and message.
# Run from the repository root: bash tests/cli.sh  (ATTNVIZ_BIN overrides
# the binary, default build/attnviz). Prints one line per check and a
# summary; exits 1 when a check failed.
set -u

BIN=${ATTNVIZ_BIN:-build/attnviz}
PY=/usr/bin/python3            # the system python has numpy
EMB=assets/embeddings.txt
S="the train left the station on time"

pass=0
failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnviz-cli.XXXXXX") || { echo "cli: cannot make a temp dir"; exit 1; }
trap 'rm -rf "$TMP"' EXIT

ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }

if [ ! -x "$BIN" ]; then
    echo "FAIL - binary $BIN not found (build it with make)"
    echo "cli: 0 passed, 1 failed"
    exit 1
fi

# run ARGS...: stdout in $TMP/out, stderr in $TMP/err, exit code in $rc
run() {
    "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}

# expect_ok DESC ARGS...: exit 0
expect_ok() {
    local desc=$1
    shift
    run "$@"
    if [ "$rc" -eq 0 ]; then ok "$desc"; else bad "$desc: exit $rc: $(head -c 300 "$TMP/err")"; fi
}

# expect_error DESC CODE PATTERN ARGS...: exit CODE, nothing on stdout,
# stderr's first line starts with "attnviz: error:" (code 1) or "attnviz: "
# (usage, code 2), and stderr contains PATTERN (fixed string).
expect_error() {
    local desc=$1 code=$2 pat=$3
    shift 3
    run "$@"
    local first
    first=$(head -n 1 "$TMP/err")
    if [ "$rc" -ne "$code" ]; then
        bad "$desc: exit $rc, want $code; stderr: $(head -c 300 "$TMP/err")"
    elif [ -s "$TMP/out" ]; then
        bad "$desc: printed on stdout: $(head -c 200 "$TMP/out")"
    elif [ "$code" -eq 1 ] && [[ "$first" != "attnviz: error: "* ]]; then
        bad "$desc: message does not start with 'attnviz: error:': $first"
    elif [ "$code" -eq 2 ] && [[ "$first" != "attnviz: "* ]]; then
        bad "$desc: usage message does not start with 'attnviz: ': $first"
    elif ! grep -qF -- "$pat" "$TMP/err"; then
        bad "$desc: stderr does not mention '$pat': $first"
    else
        ok "$desc"
    fi
}

# ---- the numpy reference -----------------------------------------------------
cat >"$TMP/ref.py" <<'EOF'
# Recompute a --print json document with numpy from the embedding file, the
# paper's positional encoding, the weights (checked against Xavier(seed) from
# splitmix64, or the identity) and the attention formulas.
# usage: ref.py EMB mode heads scale causal posenc tau seed|none < doc.json
import json, math, sys
import numpy as np

emb_path, mode, heads, scale, causal, posenc, tau, seed = sys.argv[1:9]
heads, scale, causal, posenc, tau = int(heads), int(scale), int(causal), int(posenc), float(tau)
doc = json.load(sys.stdin)
M64 = (1 << 64) - 1
errors = []

def expect(cond, what):
    if not cond:
        errors.append(what)

def close(name, got, want, tol=1e-5):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        errors.append("%s: shape %s, want %s" % (name, got.shape, want.shape))
        return
    err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
    m = float(err.max()) if err.size else 0.0
    if not m < tol:
        errors.append("%s: max error %g" % (name, m))

def splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)

def oov_vector(word, d):
    h = 14695981039346656037
    for b in word.encode("utf-8"):
        h = ((h ^ b) * 1099511628211) & M64
    out = []
    for _ in range(d):
        h, z = splitmix(h)
        out.append((z >> 40) / 16777216.0 - 0.5)
    return np.array(out, dtype=np.float32)

table = {}
for line in open(emb_path, encoding="utf-8"):
    parts = line.split()
    if not parts or line.lstrip().startswith("#"):
        continue
    if parts[0] not in table:
        table[parts[0]] = np.array([float(x) for x in parts[1:]], dtype=np.float32)
d = len(next(iter(table.values())))

cfg = doc["config"]
expect(cfg["mode"] == mode, "config.mode %r" % cfg["mode"])
learned = mode == "learned"
h = heads if learned else 1
dk = d // h
expect(cfg["heads"] == h, "config.heads %r, want %d" % (cfg["heads"], h))
expect(cfg["d_model"] == d and cfg["d_k"] == dk, "config d_model/d_k")
expect(cfg["scale"] == bool(scale) and cfg["causal"] == bool(causal) and cfg["posenc"] == bool(posenc),
       "config flags")
expect(abs(cfg["temperature"] - tau) < 1e-6, "config.temperature %r" % cfg["temperature"])
expect(cfg["seed"] == (None if seed == "none" else int(seed)), "config.seed %r" % cfg["seed"])

if errors:  # the document is not for the configuration asked for
    for e in errors:
        print("  " + e)
    sys.exit(1)

tokens = doc["tokens"]
T = len(tokens)
expect(doc["oov"] == [t not in table for t in tokens], "oov flags")

# X = E (+ PE)
E = np.array([table[t] if t in table else oov_vector(t, d) for t in tokens], dtype=np.float64)
if posenc:
    for p in range(T):
        for k in range(d):
            i2 = k - (k % 2)
            a = p / (10000.0 ** (i2 / d))
            E[p, k] += math.sin(a) if k % 2 == 0 else math.cos(a)
X = np.array(doc["X"], dtype=np.float64)
close("X", X, E, 1e-6)

# the weights
if learned:
    Wq = np.array([hd["Wq"] for hd in doc["heads"]], dtype=np.float64)
    Wk = np.array([hd["Wk"] for hd in doc["heads"]], dtype=np.float64)
    Wv = np.array([hd["Wv"] for hd in doc["heads"]], dtype=np.float64)
    Wo = np.array(doc["Wo"], dtype=np.float64)
    if seed == "none":
        I = np.eye(d)
        ident = np.array([I[:, k * dk:(k + 1) * dk] for k in range(h)])
        for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
            close(name + " (identity)", W, ident, 1e-9)
        close("Wo (identity)", Wo, I, 1e-9)
    else:
        st = int(seed)
        def xavier(rows, cols):
            global st
            lim = math.sqrt(6.0 / (rows + cols))
            out = np.empty(rows * cols)
            for i in range(rows * cols):
                st, z = splitmix(st)
                out[i] = (2.0 * ((z >> 40) / 16777216.0) - 1.0) * lim
            return out.reshape(rows, cols)
        want = {"Wq": [], "Wk": [], "Wv": []}
        for k in range(h):
            for name in ("Wq", "Wk", "Wv"):
                want[name].append(xavier(d, dk))
        wo = xavier(d, d)
        for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
            close(name + " (xavier)", W, np.array(want[name]), 1e-6)
        close("Wo (xavier)", Wo, wo, 1e-6)
else:
    for hd in doc["heads"]:
        expect(hd["Wq"] is None and hd["Wk"] is None and hd["Wv"] is None, "basic: W null")
    expect(doc["Wo"] is None, "basic: Wo null")

# attention
mult = (1.0 / math.sqrt(dk) if scale else 1.0) / cfg["temperature"]
concat = np.zeros((T, d))
for k in range(h):
    hd = doc["heads"][k]
    if learned:
        Q, K, V = X @ Wq[k], X @ Wk[k], X @ Wv[k]
    else:
        Q = K = V = X
    S = Q @ K.T
    L = S * mult
    if causal:
        L = np.where(np.tri(T, T, dtype=bool), L, -np.inf)
    L = L - L.max(axis=1, keepdims=True)
    W = np.exp(L)
    W = W / W.sum(axis=1, keepdims=True)
    Z = W @ V
    concat[:, k * dk:(k + 1) * dk] = Z
    close("head %d Q" % k, hd["Q"], Q)
    close("head %d K" % k, hd["K"], K)
    close("head %d V" % k, hd["V"], V)
    close("head %d scores" % k, hd["scores"], S)
    close("head %d weights" % k, hd["weights"], W)
    close("head %d Z" % k, hd["Z"], Z)
    Wj = np.array(hd["weights"])
    close("head %d row sums" % k, Wj.sum(axis=1), np.ones(T), 1e-6)
    if causal:
        expect(np.all(Wj[np.triu_indices(T, 1)] == 0.0), "head %d: masked weights not 0" % k)
out = concat @ Wo if learned else concat
close("output", doc["output"], out)

if errors:
    for e in errors:
        print("  " + e)
    sys.exit(1)
EOF

# ---- --print text -------------------------------------------------------------
run --print text "$S"
if [ "$rc" -eq 0 ]; then
    rows=$(awk 'NF == 8 && $1 ~ /^(the|train|left|station|on|time)$/ && $2 ~ /^[0-9.]+$/' "$TMP/out" | wc -l)
    header_ok=1
    for w in the train left station on time; do grep -qw "$w" "$TMP/out" || header_ok=0; done
    order=$(awk 'NF == 8 && $2 ~ /^[0-9.]+$/ {printf "%s ", $1}' "$TMP/out")
    if [ "$rows" -eq 7 ] && [ "$header_ok" -eq 1 ] && [ "$order" = "$S " ]; then
        ok "--print text: the tokens and 7 rows"
    else
        bad "--print text: $rows rows, order '$order'"
    fi
else
    bad "--print text: exit $rc"
fi

# ---- --print csv ----------------------------------------------------------------
run --print csv "$S"
if [ "$rc" -eq 0 ]; then
    hdr=$(head -n 1 "$TMP/out")
    n=$(wc -l <"$TMP/out")
    if [ "$hdr" = "query,the,train,left,the,station,on,time" ] && [ "$n" -eq 8 ]; then
        ok "--print csv: header and 8 lines"
    else
        bad "--print csv: header '$hdr', $n lines"
    fi
    sums=$(awk -F, 'NR > 1 { s = 0; for (i = 2; i <= NF; i++) s += $i;
        d = s - 1; if (d < 0) d = -d; if (d > 1e-6 || NF != 8) bad++ }
        END { print bad + 0 }' "$TMP/out")
    if [ "$sums" = 0 ]; then ok "--print csv: every row sums to 1 (1e-6)"; else bad "--print csv: $sums rows do not sum to 1"; fi
else
    bad "--print csv: exit $rc"
fi
run --print csv --causal "$S"
upper=$(awk -F, 'NR > 1 { for (i = NR + 1; i <= NF; i++) if ($i + 0 != 0) bad++ } END { print bad + 0 }' "$TMP/out")
if [ "$rc" -eq 0 ] && [ "$upper" = 0 ]; then ok "--print csv --causal: upper triangle is 0"; else bad "--print csv --causal: exit $rc, $upper nonzero masked entries"; fi
run --print csv -H 2 --seed 3 --head avg "$S"
sums=$(awk -F, 'NR > 1 { s = 0; for (i = 2; i <= NF; i++) s += $i; d = s - 1; if (d < 0) d = -d; if (d > 1e-6) bad++ } END { print bad + 0 }' "$TMP/out")
if [ "$rc" -eq 0 ] && [ "$sums" = 0 ] && [ "$(wc -l <"$TMP/out")" -eq 8 ]; then ok "--print csv --head avg: rows sum to 1"; else bad "--print csv --head avg: exit $rc"; fi

# ---- --print json ---------------------------------------------------------------
run --print json "$S"
if [ "$rc" -eq 0 ] && "$PY" -c 'import json, sys; json.load(sys.stdin)' <"$TMP/out" 2>"$TMP/pyerr"; then
    ok "--print json: parses with python's json"
else
    bad "--print json: exit $rc; $(head -c 300 "$TMP/pyerr" 2>/dev/null)"
fi

# numbers against numpy: OPTIONS | mode heads scale causal posenc tau seed
numpy_check() {
    local opts=$1 expect=$2 sentence=${3:-$S}
    # shellcheck disable=SC2086
    run --print json $opts "$sentence"
    if [ "$rc" -ne 0 ]; then
        bad "numpy: --print json $opts: exit $rc: $(head -c 200 "$TMP/err")"
        return
    fi
    # shellcheck disable=SC2086
    if "$PY" "$TMP/ref.py" "$EMB" $expect <"$TMP/out" >"$TMP/pyout" 2>&1; then
        ok "numpy: --print json $opts"
    else
        bad "numpy: --print json $opts: $(head -c 600 "$TMP/pyout")"
    fi
}
if "$PY" -c 'import numpy' 2>/dev/null; then
    numpy_check "" "learned 1 1 0 0 1 none"
    numpy_check "-H 1 --seed 7" "learned 1 1 0 0 1 7"
    numpy_check "-H 2 --seed 7" "learned 2 1 0 0 1 7"
    numpy_check "-H 4 --seed 7" "learned 4 1 0 0 1 7"
    numpy_check "-H 4" "learned 4 1 0 0 1 none"
    numpy_check "--causal" "learned 1 1 1 0 1 none"
    numpy_check "--no-scale" "learned 1 0 0 0 1 none"
    numpy_check "--posenc" "learned 1 1 0 1 1 none"
    numpy_check "-t 0.7" "learned 1 1 0 0 0.7 none"
    numpy_check "--seed 7" "learned 1 1 0 0 1 7"
    numpy_check "-m basic" "basic 1 1 0 0 1 none"
    numpy_check "-m basic --causal --posenc -t 2.3" "basic 1 1 1 1 2.3 none"
    numpy_check "-H 4 --seed 7 --causal --no-scale --posenc -t 0.7" "learned 4 0 1 1 0.7 7"
    numpy_check "-H 2 --seed 12345 --causal" "learned 2 1 1 0 1 12345" \
        "The check (zzyzx) was cashed at the bank, said Qwfp!"
else
    bad "numpy not available for $PY"
fi

# ---- -w round trip --------------------------------------------------------------
for opts in "-H 2 --seed 7" "-H 4 --seed 99 --causal --posenc -t 0.7" "-H 1" "-m basic"; do
    # shellcheck disable=SC2086
    "$BIN" --print json $opts "$S" >"$TMP/a.json" 2>/dev/null
    rc1=$?
    extra=$(echo "$opts" | sed -e 's/-H [0-9]*//' -e 's/--seed [0-9]*//')
    # shellcheck disable=SC2086
    "$BIN" --print json -w "$TMP/a.json" $extra "$S" >"$TMP/b.json" 2>"$TMP/err"
    rc2=$?
    if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ -s "$TMP/a.json" ] && cmp -s "$TMP/a.json" "$TMP/b.json"; then
        ok "--print json $opts | -w: identical JSON"
    else
        bad "--print json $opts | -w: exit $rc1/$rc2, $(cmp "$TMP/a.json" "$TMP/b.json" 2>&1 | head -c 200) $(head -c 200 "$TMP/err")"
    fi
done

# ---- exports match the printouts --------------------------------------------------
run --print csv --export "$TMP/e.csv" --export "$TMP/e.json" -H 2 --seed 5 "$S"
"$BIN" --print json -H 2 --seed 5 "$S" >"$TMP/p.json" 2>/dev/null
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$TMP/e.csv" && cmp -s "$TMP/p.json" "$TMP/e.json"; then
    ok "--export .csv/.json: the same bytes as --print"
else
    bad "--export .csv/.json: exit $rc or different bytes"
fi
if ls "$TMP" | grep -q 'tmp-'; then bad "--export left a temp file"; else ok "--export leaves no temp file"; fi

# ---- ways to give the sentence -----------------------------------------------------
run --print csv -s "The Cat sat."
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,the,cat,sat,." ]; then ok "-s TEXT"; else bad "-s TEXT: exit $rc: $(head -n 1 "$TMP/out")"; fi
run --print csv -f sentences/classroom.txt --line 3
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,the,bank,approved,the,loan,for,the,new,house" ]; then
    ok "-f sentences/classroom.txt --line 3"
else
    bad "-f --line 3: exit $rc: $(head -n 1 "$TMP/out")"
fi
run --print csv -f sentences/classroom.txt
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,she,sat,on,the,river,bank,and,watched,the,water" ]; then
    ok "-f FILE: the first sentence"
else
    bad "-f FILE: exit $rc: $(head -n 1 "$TMP/out")"
fi
run --print csv the cat sat on the mat
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,the,cat,sat,on,the,mat" ] && [ "$(wc -l <"$TMP/out")" -eq 7 ]; then
    ok "positional words"
else
    bad "positional words: exit $rc: $(head -n 1 "$TMP/out")"
fi

# ---- OOV words on stderr ------------------------------------------------------------
run --print text "the zzyzx train qwfpgj"
if [ "$rc" -eq 0 ] && grep -q "zzyzx" "$TMP/err" && grep -q "qwfpgj" "$TMP/err" && ! grep -q "train" "$TMP/err"; then
    ok "OOV words reported on stderr"
else
    bad "OOV words: exit $rc, stderr: $(head -c 200 "$TMP/err")"
fi
run --print text "$S"
if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ]; then ok "no OOV note when every word is known"; else bad "unexpected stderr: $(head -c 200 "$TMP/err")"; fi

# ---- errors ---------------------------------------------------------------------------
expect_error "unknown option -> 2" 2 "--bogus" --bogus "$S"
expect_error "-t 0 -> 1" 1 "temperature" -t 0 --print text "$S"
expect_error "-t -1 -> 1" 1 "temperature" -t -1 --print text "$S"
expect_error "only punctuation -> 1" 1 "only punctuation" --print text -s "... !? ,"
expect_error "-t nan -> 1" 1 "temperature" -t nan --print text "$S"
expect_error "-t inf -> 1" 1 "temperature" -t inf --print text "$S"
expect_error "-t abc -> 2" 2 "temperature" -t abc --print text "$S"
expect_error "--heads 3 -> 1 (does not divide 16)" 1 "divide" --heads 3 --print text "$S"
expect_error "--heads 0 -> 1" 1 "--heads" --heads 0 --print text "$S"
expect_error "--heads 1000 -> 1" 1 "--heads" --heads 1000 --print text "$S"
expect_error "missing embeddings file -> 1" 1 "$TMP/nope.txt" -e "$TMP/nope.txt" --print text "$S"
printf 'a 1 2 3\nb 4 5 6\nc 1 2\nd 1 2 3\n' >"$TMP/ragged.txt"
expect_error "ragged embeddings row -> 1 naming file:line" 1 "$TMP/ragged.txt:3" -e "$TMP/ragged.txt" --print text "a b"
expect_error "empty sentence -> 1" 1 "empty" -s "   " --print text
python_words=$("$PY" -c 'print(" ".join(["w"] * 5000))')
expect_error "5000-token sentence -> 1 mentioning 1024" 1 "1024" -s "$python_words" --print text
expect_error "--query 99 -> 1" 1 "--query" --query 99 --print text "$S"
expect_error "--head 3 with 2 heads -> 1" 1 "--head" -H 2 --head 3 --print csv "$S"
"$BIN" --print json -H 2 --seed 7 "$S" >"$TMP/w.json" 2>/dev/null
"$PY" - "$TMP/w.json" "$TMP/shape.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["heads"][0]["Wq"] = doc["heads"][0]["Wq"][:-1]   # 15 rows instead of 16
json.dump(doc, open(sys.argv[2], "w"))
EOF
expect_error "weights with wrong shapes -> 1" 1 "$TMP/shape.json" -w "$TMP/shape.json" --print text "$S"
printf '{"config": {"heads": 1},\n "heads": [' >"$TMP/broken.json"
expect_error "weights that are not JSON -> 1 with the line" 1 "$TMP/broken.json:2" -w "$TMP/broken.json" --print text "$S"
mkdir -p "$TMP/adir"
expect_error "a directory as -f -> 1" 1 "$TMP/adir" -f "$TMP/adir" --print text
printf 'a sentence\nbin\000ary\n' >"$TMP/binary.txt"
expect_error "a binary file with NUL as -f -> 1" 1 "$TMP/binary.txt:2" -f "$TMP/binary.txt" --print text
expect_error "--line 999 -> 1" 1 "999" -f sentences/classroom.txt --line 999 --print text
expect_error "--export x.unknown -> 1" 1 "x.unknown" --export "$TMP/x.unknown" "$S"
if [ -e "$TMP/x.unknown" ]; then bad "--export x.unknown created a file"; else ok "--export x.unknown created nothing"; fi
expect_error "--export into a missing folder -> 1" 1 "$TMP/missing/o.csv" --export "$TMP/missing/o.csv" "$S"
expect_error "--print with a bad format -> 2" 2 "--print" --print xml "$S"
expect_error "-s and words together -> 2" 2 "either" -s "a b" c d

# ---- --matrix: the heatmap of raw scores or logits in PNG and SVG ---------------------
M3="the river bank"
"$BIN" --print json -H 2 --seed 7 "$M3" >"$TMP/m.json" 2>/dev/null
for kind in weights scores logits; do
    expect_ok "--matrix $kind --export svg" --export "$TMP/m-$kind.svg" --matrix $kind -H 2 --head 2 --seed 7 "$M3"
done
if "$PY" - "$TMP/m.json" "$TMP" <<'EOF'
import json, math, re, sys
doc = json.load(open(sys.argv[1]))
h = doc["heads"][1]
dk = doc["config"]["d_k"]
want = {"weights": h["weights"], "scores": h["scores"],
        "logits": [[s / math.sqrt(dk) for s in row] for row in h["scores"]]}
for kind, M in want.items():
    svg = open("%s/m-%s.svg" % (sys.argv[2], kind)).read()
    cells = re.findall(r'data-i="(\d+)" data-j="(\d+)" data-value="([^"]+)"', svg)
    assert len(cells) == 9, (kind, len(cells))
    for i, j, v in cells:
        w = M[int(i)][int(j)]
        assert abs(float(v) - w) <= 1e-5 * max(1.0, abs(w)), (kind, i, j, v, w)
EOF
then ok "--matrix weights/scores/logits: the SVG cells hold that matrix (vs --print json)"
else bad "--matrix: SVG cells do not match --print json"; fi
expect_ok "--matrix scores --export png" --export "$TMP/m-scores.png" --matrix scores --seed 7 "$M3"
expect_ok "--matrix weights --export png" --export "$TMP/m-weights.png" --seed 7 "$M3"
if ! cmp -s "$TMP/m-scores.png" "$TMP/m-weights.png"; then ok "--matrix scores draws another picture"
else bad "--matrix scores PNG equals the weights PNG"; fi
expect_error "--matrix with a bad name -> 2" 2 "--matrix" --matrix probs --print csv "$M3"
# --color-scale: weights 0 to the max (default), on 0–1, or each row to its own max
expect_ok "--color-scale max --export png" --export "$TMP/cs-max.png" --color-scale max --seed 7 "$M3"
expect_ok "--color-scale fixed --export png" --export "$TMP/cs-fixed.png" --color-scale fixed --seed 7 "$M3"
expect_ok "--color-scale row --export svg" --export "$TMP/cs-row.svg" --color-scale row --seed 7 "$M3"
if cmp -s "$TMP/cs-max.png" "$TMP/m-weights.png"; then ok "--color-scale max is the default"
else bad "--color-scale max PNG differs from the default's"; fi
if ! cmp -s "$TMP/cs-fixed.png" "$TMP/m-weights.png"; then ok "--color-scale fixed draws another picture than the default"
else bad "--color-scale fixed PNG equals the default's"; fi
if grep -q '>max</text>' "$TMP/cs-row.svg"; then ok "--color-scale row: the colour bar says each row runs to its max"
else bad "--color-scale row: no 'max' tick in the SVG"; fi
expect_error "--color-scale with a bad name -> 2" 2 "'rows'" --color-scale rows --export "$TMP/x.png" "$M3"

# ---- flags given with --session win over the session's settings -----------------------
"$BIN" --print json -H 2 --seed 7 "the bank of the river" >"$TMP/s.json" 2>/dev/null
"$PY" - "$TMP/s.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["session"] = {"version": 1, "sentence": "the bank of the river",
                  "settings": {"mode": "learned", "heads": 2, "scale": True, "causal": False,
                               "posenc": False, "temperature": 1.0},
                  "view": {"query": 1, "key": -1, "head": 0, "matrix": 0, "colormap": 0,
                           "all_lines": False, "ui_scale": 1.0, "sentence_index": 0, "edit_target": 0},
                  "embeddings": {}}
json.dump(doc, open(sys.argv[1], "w"))
EOF
run --session "$TMP/s.json" --print json
cp "$TMP/out" "$TMP/s-plain.json"
run --session "$TMP/s.json" --causal -t 2 --print json
if [ "$rc" -eq 0 ] && "$PY" - "$TMP/s-plain.json" "$TMP/out" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["config"]["causal"] is False and b["config"]["causal"] is True, "causal"
assert abs(b["config"]["temperature"] - 2.0) < 1e-6, "temperature"
assert a["config"]["heads"] == b["config"]["heads"] == 2, "heads"
assert a["heads"][0]["Wq"] == b["heads"][0]["Wq"], "the session's weights stay"
w = b["heads"][0]["weights"]
assert w[0][1] == 0 and w[0][2] == 0, "masked"
EOF
then ok "--session with --causal -t 2: the flags win, the session's weights stay"
else bad "--session: command-line flags did not override the session ($(head -c 200 "$TMP/err"))"; fi
run --session "$TMP/s.json" -H 4 --print json
if [ "$rc" -eq 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["config"]["heads"] == 4 and len(d["heads"]) == 4' "$TMP/out"
then ok "--session with -H 4: four heads"; else bad "--session -H 4: exit $rc"; fi
expect_error "--session with -H 5 (d = 16) -> 1" 1 "--heads 5" --session "$TMP/s.json" -H 5 --print json

# ---- issue 14: a second sentence (--keys, '|||' pairs) and the score functions -------
expect_error "--keys \"\" -> 2" 2 "--keys needs a sentence" --keys "" --print json "$S"
expect_error "--keys with --causal -> 2 saying why" 2 "the causal mask applies to self-attention only" \
    --keys "i am happy" --causal --print json "$S"
expect_error "--score bogus -> 2 naming the value and the choices" 2 \
    "--score must be dot, cosine or additive, got 'bogus'" --score bogus --print json "$S"
expect_error "--keys of only spaces -> 1" 1 "no tokens" --keys "   " --print json "$S"
expect_error "--keys with an attention file -> 2" 2 "--keys" --keys "a b" \
    --attention "$TMP/none.npz" --print csv
printf 'je suis heureux ||| i am happy\nfirst |||   \n' > "$TMP/translation.txt"
expect_error "'|||' with an empty side -> 1 naming file and line" 1 \
    "translation.txt:2: empty key sentence after '|||'" -f "$TMP/translation.txt" --print text
printf '  ||| keys\n' > "$TMP/t2.txt"
expect_error "'|||' with an empty query side -> 1" 1 "t2.txt:1: empty query sentence before '|||'" \
    -f "$TMP/t2.txt" --print text
long_keys=$("$PY" -c 'print(" ".join(["word"] * 1500))')
run -s "je suis heureux" --keys "$long_keys" --print csv
if [ "$rc" -eq 0 ] && grep -qF -- "--keys: 1500 tokens, the first 1024 are used" "$TMP/err" &&
   [ "$(head -n 1 "$TMP/out" | tr ',' '\n' | wc -l)" -eq 1025 ]; then
    ok "--keys of 1500 tokens: kept, the first 1024 used, a note on stderr"
else bad "--keys 1500 tokens: exit $rc: $(head -c 300 "$TMP/err")"; fi

# --keys: JSON with key_tokens, key_oov and X_keys, K and V Tk rows, maps Tq x Tk
run -s "je suis heureux" --keys "i am very happy today" --heads 2 --seed 4 --print json
if [ "$rc" -eq 0 ] && "$PY" - "$TMP/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tokens"] == ["je", "suis", "heureux"], d["tokens"]
assert d["key_tokens"] == ["i", "am", "very", "happy", "today"], d["key_tokens"]
assert len(d["key_oov"]) == 5 and len(d["X_keys"]) == 5 and len(d["X_keys"][0]) == 16
assert d["config"]["causal"] is False and d["config"]["score"] == "dot"
for h in d["heads"]:
    assert len(h["Q"]) == 3 and len(h["K"]) == 5 and len(h["V"]) == 5 and len(h["K"][0]) == 8
    assert len(h["scores"]) == 3 and all(len(r) == 5 for r in h["scores"])
    assert all(abs(sum(r) - 1) < 1e-5 for r in h["weights"]) and len(h["weights"][0]) == 5
    assert len(h["Z"]) == 3 and len(h["v"]) == 8
assert len(d["output"]) == 3
EOF
then ok "--keys --print json: key_tokens, key_oov, X_keys, K/V 5 rows, maps 3 x 5"
else bad "--keys --print json: exit $rc: $(head -c 300 "$TMP/err")"; fi
run -s "je suis heureux" --keys "i am very happy today" --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,i,am,very,happy,today" ] &&
   [ "$(wc -l < "$TMP/out")" -eq 4 ]; then ok "--keys --print csv: header of key tokens, one row a query"
else bad "--keys --print csv: $(head -n 1 "$TMP/out")"; fi
run -s "je suis heureux" --keys "i am happy zyzzyva" --print text
if [ "$rc" -eq 0 ] && grep -q "cross-attention" "$TMP/out" && grep -q "^keys not in the embedding table.* zyzzyva" "$TMP/out"
then ok "--keys --print text: cross-attention, the keys' unknown words listed"
else bad "--keys --print text: exit $rc: $(head -c 300 "$TMP/out")"; fi
# a pair line gives both sentences; --keys wins over it
printf '# pairs\nthe train left\nje suis heureux ||| i am happy\n' > "$TMP/pairs.txt"
run -f "$TMP/pairs.txt" --line 2 --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,i,am,happy" ] && sed -n 2p "$TMP/out" | grep -q "^je,"
then ok "-f --line 2 with a pair: queries from the first side, keys from the second"
else bad "-f pair line: exit $rc: $(head -n 2 "$TMP/out")"; fi
run -f "$TMP/pairs.txt" --line 2 --keys "you are sad" --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,you,are,sad" ]
then ok "--keys overrides the file's second sentence"; else bad "--keys over a pair: $(head -n 1 "$TMP/out")"; fi
run -f "$TMP/pairs.txt" --line 1 --print csv
if [ "$rc" -eq 0 ] && [ "$(head -n 1 "$TMP/out")" = "query,the,train,left" ]
then ok "-f a plain line: self-attention"; else bad "-f plain line: $(head -n 1 "$TMP/out")"; fi
run -f "$TMP/pairs.txt" --line 2 --causal --print json
if [ "$rc" -eq 0 ] && grep -q "causal mask applies to self-attention only" "$TMP/err" &&
   "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["config"]["causal"] is False and d["heads"][0]["weights"][0][2] > 0' "$TMP/out"
then ok "a pair line with --causal: a note, no mask"; else bad "pair + --causal: exit $rc: $(head -c 200 "$TMP/err")"; fi

# --score: config.score, each head's v (dk numbers; basic: vb, d numbers)
run --score additive --heads 4 --print json "$S"
if [ "$rc" -eq 0 ] && "$PY" - "$TMP/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["score"] == "additive"
assert len(d["heads"]) == 4 and all(len(h["v"]) == 4 for h in d["heads"])
assert all(abs(x - 0.5) < 1e-7 for h in d["heads"] for x in h["v"]), "default v = 1/sqrt(dk)"
EOF
then ok "--score additive --print json: config.score, v of dk = 4 numbers per head"
else bad "--score additive: exit $rc: $(head -c 300 "$TMP/err")"; fi
run --score cosine --mode basic --print json "$S"
if [ "$rc" -eq 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["config"]["score"] == "cosine" and len(d["heads"][0]["v"]) == 16' "$TMP/out"
then ok "--score cosine --mode basic: heads[0].v is vb, 16 numbers"; else bad "--score cosine basic: exit $rc"; fi

# weights and sessions: v read back; a wrong length refused naming file and head
run --score additive --heads 2 --seed 8 --print json "$S"
cp "$TMP/out" "$TMP/wv.json"
run -w "$TMP/wv.json" --score additive --heads 2 --print json "$S"
if [ "$rc" -eq 0 ] && "$PY" -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:3]); assert [h["v"] for h in a["heads"]] == [h["v"] for h in b["heads"]] and a["heads"][1]["weights"] == b["heads"][1]["weights"]' "$TMP/wv.json" "$TMP/out"
then ok "-w: each head's v read back (same v, same weights)"; else bad "-w v round trip: exit $rc: $(head -c 200 "$TMP/err")"; fi
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["heads"][1]["v"] = d["heads"][1]["v"][:3]; json.dump(d, open(sys.argv[2], "w"))' "$TMP/wv.json" "$TMP/w.json"
expect_error "-w with heads[1].v of 3 numbers -> 1" 1 "w.json: heads[1].v: expected 8 numbers, found 3" \
    -w "$TMP/w.json" --print json "$S"
"$PY" - "$TMP/wv.json" "$TMP/sk.json" "$TMP/sbad.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["session"] = {"version": 1, "sentence": "je suis heureux", "keys": "i am happy",
                "settings": {"score": "additive"}}
json.dump(d, open(sys.argv[2], "w"))
d["heads"][0]["v"] = [1, 2]
json.dump(d, open(sys.argv[3], "w"))
EOF
run --session "$TMP/sk.json" --print json
if [ "$rc" -eq 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["key_tokens"] == ["i","am","happy"] and d["config"]["score"] == "additive"' "$TMP/out"
then ok "--session with keys and score: both sentences, additive"; else bad "--session keys: exit $rc: $(head -c 200 "$TMP/err")"; fi
run --session "$TMP/sk.json" --keys "you are sad" --score cosine --print json
if [ "$rc" -eq 0 ] && "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["key_tokens"] == ["you","are","sad"] and d["config"]["score"] == "cosine"' "$TMP/out"
then ok "--session with --keys and --score: the flags win"; else bad "--session --keys: exit $rc: $(head -c 200 "$TMP/err")"; fi
expect_error "--session whose heads[0].v has 2 numbers -> 1" 1 "sbad.json: heads[0].v: expected 8 numbers, found 2" \
    --session "$TMP/sbad.json" --print json

# ---- help and version ---------------------------------------------------------------
run -h
if [ "$rc" -eq 0 ] && grep -q "^usage: attnviz" "$TMP/out"; then ok "-h -> 0 with the usage"; else bad "-h: exit $rc"; fi
if grep -q -- "--keys TEXT" "$TMP/out" && grep -q -- "--score dot|cosine|additive" "$TMP/out"
then ok "-h lists --keys and --score"; else bad "-h lacks --keys or --score"; fi
run -V
if [ "$rc" -eq 0 ] && grep -Eq "^attnviz [0-9]+\.[0-9]+" "$TMP/out"; then ok "-V -> 0 with the version"; else bad "-V: exit $rc"; fi

echo "cli: $pass passed, $failed failed"
[ "$failed" -eq 0 ]
