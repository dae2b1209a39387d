#!/usr/bin/python3
"""Writes the seed corpora of the attention readers' fuzz targets:
tests/fuzz/corpus/safetensors/ and tests/fuzz/corpus/attn_json/, from the
test fixtures (tests/fixtures/attention/, made by make_safetensors.py: every
shape, dtype, layer_N, cross-attention, tokens, and every bad case) plus a
few small hand-made seeds. Run from anywhere; deterministic."""
import glob
import json
import os
import shutil
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, 'tests', 'fixtures', 'attention')
OUT = os.path.join(ROOT, 'tests', 'fuzz', 'corpus')


def st(header, data=b''):
    h = json.dumps(header).encode()
    return struct.pack('<Q', len(h)) + h + data


def main():
    for target, ext in (('safetensors', '.safetensors'), ('attn_json', '.json')):
        d = os.path.join(OUT, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for f in sorted(glob.glob(os.path.join(FIX, '*' + ext))):
            shutil.copy(f, os.path.join(d, os.path.basename(f)))
    extra_st = {
        'tiny_f16': st({'attention': {'dtype': 'F16', 'shape': [1, 1], 'data_offsets': [0, 2]}},
                       b'\x00\x3c'),
        'tiny_bf16_cross': st({'__metadata__': {'query_tokens': '["a"]', 'key_tokens': '["b", "c"]'},
                               'attention': {'dtype': 'BF16', 'shape': [1, 2],
                                             'data_offsets': [0, 4]}}, b'\x00\x3f\x00\x3f'),
        'tiny_layers': st({'layer_0': {'dtype': 'F32', 'shape': [1, 1, 1], 'data_offsets': [0, 4]},
                           'layer_1': {'dtype': 'F64', 'shape': [1, 1, 1, 1],
                                       'data_offsets': [4, 12]}},
                          struct.pack('<fd', 1.0, 1.0)),
        'empty_header': st({}),
    }
    for name, b in extra_st.items():
        with open(os.path.join(OUT, 'safetensors', name), 'wb') as f:
            f.write(b)
    extra_json = {
        'session_like': '{"tokens": ["pay", "attention"], "heads": [{"weights": [[1, 0], [0, 1]]}],'
                        ' "session": {"sentence": "pay attention"}}',
        'tiny': '{"attention": [[1]]}',
        'escaped_key': '{"\\u0061ttention": [[0.5, 0.5], [1, 0]], "tokens": ["x", "y"]}',
        'bom_ws': '\ufeff \n {"attention" : [ [ 1e-3 , 0.999 ] , [ 0 , 1 ] ] }\n',
    }
    for name, t in extra_json.items():
        with open(os.path.join(OUT, 'attn_json', name), 'wb') as f:
            f.write(t.encode())


if __name__ == '__main__':
    main()
