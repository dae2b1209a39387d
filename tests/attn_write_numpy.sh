#!/usr/bin/env bash
# numpy reads what src/io/attn_write.c wrote: attention.npy (np.load),
# attention.npz (np.load with allow_pickle=False: "attention" float32 and
# "tokens" a unicode array) and attention.safetensors (its header parsed by
# hand, the tokens a JSON array in a string), each against expect.json
# (shape, every value's bits, the tokens). tests/test_attn_write.c writes
# them all into build/test-out/attn_write/; make test runs it before this.
# Builds nothing. Needs Debian's python3 with numpy (python3-numpy).
set -u
cd "$(dirname "$0")/.." || exit 2
PY=/usr/bin/python3
D=build/test-out/attn_write

if ! "$PY" -c 'import numpy' 2>/dev/null; then
    echo "FAIL - $PY cannot import numpy (apt-get install python3-numpy)"
    echo "attn-write-numpy: 0 passed, 1 failed"
    exit 1
fi
for f in attention.npy attention.npz attention.safetensors expect.json; do
    if [ ! -f "$D/$f" ]; then
        echo "FAIL - $D/$f is missing: run build/obj/tests/test_attn_write first (make test does)"
        echo "attn-write-numpy: 0 passed, 1 failed"
        exit 1
    fi
done

"$PY" - "$D" <<'EOF'
import json, struct, sys
import numpy as np

d = sys.argv[1]
with open(d + "/expect.json", encoding="utf-8") as f:
    exp = json.load(f)
shape = tuple(exp["shape"])
bits = np.array(exp["bits"], dtype="<u4").reshape(shape)
tokens = exp["tokens"]
count = int(np.prod(shape))
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        print("ok   - " + name)
        passed += 1
    else:
        print("FAIL - " + name + (": " + detail if detail else ""))
        failed += 1


def check_array(what, a):
    check(what + ": float32 of shape %s" % (shape,),
          a.dtype == np.dtype("<f4") and a.shape == shape, "%s %s" % (a.dtype, a.shape))
    if a.dtype.itemsize == 4 and a.shape == shape:
        same = np.array_equal(a.view("<u4"), bits)
        check(what + ": every value bit for bit", same,
              "" if same else "first difference at %s" % (np.argwhere(a.view("<u4") != bits)[0],))


def guard(what, fn):
    try:
        fn()
    except Exception as e:  # a file numpy cannot read is a failure, not a crash
        check(what, False, "%s: %s" % (type(e).__name__, e))


def npy():
    a = np.load(d + "/attention.npy", allow_pickle=False)
    check_array("npy", a)
    check("npy: C order", not np.isfortran(a))


def npz():
    with np.load(d + "/attention.npz", allow_pickle=False) as z:
        check("npz: members attention and tokens", sorted(z.files) == ["attention", "tokens"],
              str(z.files))
        check_array("npz attention", z["attention"])
        t = z["tokens"]
        check("npz: tokens a unicode array of %d" % shape[2],
              t.dtype.kind == "U" and t.shape == (shape[2],), "%s %s" % (t.dtype, t.shape))
        check("npz: tokens equal", t.tolist() == tokens, repr(t.tolist()))


def safetensors():
    with open(d + "/attention.safetensors", "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    check("safetensors: header size a multiple of 8", n % 8 == 0, str(n))
    hdr = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = hdr.get("__metadata__", {})
    check("safetensors: __metadata__ holds strings only",
          all(isinstance(v, str) for v in meta.values()), repr(meta))
    check("safetensors: tokens equal", json.loads(meta.get("tokens", "null")) == tokens,
          repr(meta.get("tokens")))
    att = hdr.get("attention", {})
    check("safetensors: attention F32 %s at [0, %d]" % (list(shape), count * 4),
          att.get("dtype") == "F32" and att.get("shape") == list(shape)
          and att.get("data_offsets") == [0, count * 4], repr(att))
    check("safetensors: no other tensor", sorted(hdr) == ["__metadata__", "attention"],
          repr(sorted(hdr)))
    check("safetensors: the file ends with the data", len(raw) == 8 + n + count * 4,
          "%d bytes" % len(raw))
    a = np.frombuffer(raw, dtype="<f4", count=count, offset=8 + n).reshape(shape)
    check_array("safetensors", a)


guard("npy: np.load", npy)
guard("npz: np.load", npz)
guard("safetensors: read", safetensors)
print("attn-write-numpy: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
