"""A GGUF writer for the tests (llama.cpp's file format, versions 2 and 3).

Only what the tests need: metadata of every value type (arrays of arrays
too), tensors given as their bytes in any ggml type, the alignment, and
the knobs to write broken files on purpose (version, byte order, a
tensor's offset). Plain Python and numpy; never used by the program.

    w = GGUFWriter(version=3)
    w.add("general.architecture", "llama")
    w.add("llama.block_count", 2, UINT32)
    w.add("tokenizer.ggml.tokens", ["a", "b"])          # array of strings
    w.add_tensor("token_embd.weight", F32, [C, V], arr.astype("<f4").tobytes())
    w.write("x.gguf")

Shapes are ggml's ne order: the innermost (a row's length) first, so a
Hugging Face [out, in] matrix is [in, out] here.
"""

import struct

# value types (gguf.h's enum gguf_type)
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, \
    FLOAT64 = range(13)

# ggml tensor types (ggml.h's enum ggml_type), the ones the tests write
F32, F16, Q4_0, Q4_1 = 0, 1, 2, 3
Q5_0, Q5_1, Q8_0 = 6, 7, 8
Q2_K, Q3_K, Q4_K, Q5_K, Q6_K = 10, 11, 12, 13, 14
IQ2_XXS = 16
BF16 = 30

_SCALAR = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i",
           FLOAT32: "f", BOOL: "?", UINT64: "Q", INT64: "q", FLOAT64: "d"}


class Arr:
    """An array value of an explicit element type (ARRAY for arrays of arrays)."""

    def __init__(self, elem_type, items):
        self.elem_type = elem_type
        self.items = list(items)


def _guess(value):
    if isinstance(value, Arr):
        return ARRAY
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return UINT32 if 0 <= value < 2 ** 32 else INT64
    if isinstance(value, float):
        return FLOAT32
    if isinstance(value, (str, bytes)):
        return STRING
    if isinstance(value, (list, tuple)):
        return ARRAY
    raise TypeError("no GGUF type for %r" % (value,))


class GGUFWriter:
    def __init__(self, version=3, alignment=None, endian="<"):
        self.version = version
        self.alignment = alignment  # None: the default 32, no key written
        self.e = endian
        self.kv = []                # (key, type, value)
        self.tensors = []           # [name, ggml type, ne, bytes, offset or None]

    # ---- encoding ----
    def _pack(self, fmt, *v):
        return struct.pack(self.e + fmt, *v)

    def _str(self, s):
        b = s if isinstance(s, bytes) else s.encode("utf-8")
        return self._pack("Q", len(b)) + b

    def _value(self, t, v):
        if t == STRING:
            return self._str(v)
        if t == ARRAY:
            if isinstance(v, Arr):
                et, items = v.elem_type, v.items
            else:
                items = list(v)
                et = _guess(items[0]) if items else UINT32
            out = self._pack("I", et) + self._pack("Q", len(items))
            return out + b"".join(self._value(et, x) for x in items)
        return self._pack(_SCALAR[t], v)

    # ---- content ----
    def add(self, key, value, vtype=None):
        self.kv.append((key, _guess(value) if vtype is None else vtype, value))

    def add_tensor(self, name, ggml_type, ne, data, offset=None):
        """ne: ggml's dims, innermost first; offset: force the data offset."""
        self.tensors.append([name, ggml_type, list(ne), bytes(data), offset])

    def header_bytes(self):
        align = self.alignment or 32
        kv = list(self.kv)
        if self.alignment is not None:
            kv.append(("general.alignment", UINT32, self.alignment))
        out = b"GGUF" + self._pack("I", self.version)
        out += self._pack("QQ", len(self.tensors), len(kv))
        for key, t, v in kv:
            out += self._str(key) + self._pack("I", t) + self._value(t, v)
        off = 0
        for tensor in self.tensors:
            name, t, ne, data, forced = tensor
            if forced is None:
                off = (off + align - 1) // align * align
                tensor_off = off
                off += len(data)
            else:
                tensor_off = forced
            tensor.append(tensor_off)
            out += self._str(name) + self._pack("I", len(ne))
            out += b"".join(self._pack("Q", d) for d in ne)
            out += self._pack("I", t) + self._pack("Q", tensor_off)
        return out, align

    def to_bytes(self):
        for tensor in self.tensors:
            del tensor[5:]
        head, align = self.header_bytes()
        head += b"\0" * (-len(head) % align)
        blob = bytearray()
        for _name, _t, _ne, data, _forced, off in self.tensors:
            if len(blob) < off + len(data):
                blob.extend(b"\0" * (off + len(data) - len(blob)))
            blob[off:off + len(data)] = data
        return head + bytes(blob)

    def write(self, path):
        """to_bytes's file, written a tensor at a time (big files)."""
        for tensor in self.tensors:
            del tensor[5:]
        head, align = self.header_bytes()
        head += b"\0" * (-len(head) % align)
        with open(path, "wb") as f:
            f.write(head)
            at = 0
            for _name, _t, _ne, data, _forced, off in sorted(self.tensors, key=lambda t: t[5]):
                if off > at:
                    f.write(b"\0" * (off - at))
                    at = off
                if off < at:  # overlapping on purpose: write it where it says
                    f.seek(len(head) + off)
                f.write(data)
                at = max(at, off + len(data))
                f.seek(len(head) + at)
