#!/usr/bin/python3
"""Seed corpora of the npy and npz fuzz targets (tests/fuzz/corpus/npy,
tests/fuzz/corpus/npz): small files written by numpy itself. Run with
/usr/bin/python3 (which has numpy) from anywhere."""
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
npy = os.path.join(here, 'npy')
npz = os.path.join(here, 'npz')
os.makedirs(npy, exist_ok=True)
os.makedirs(npz, exist_ok=True)


def soft(shape, dtype):
    a = np.arange(int(np.prod(shape)), dtype='f8').reshape(shape) % 7
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(dtype)


np.save(os.path.join(npy, 'tt_f32'), soft((4, 4), '<f4'))
np.save(os.path.join(npy, 'htt_f16_be'), soft((2, 3, 3), '>f2'))
np.save(os.path.join(npy, 'lhtt_f64'), soft((2, 2, 3, 3), '<f8'))
np.save(os.path.join(npy, 'l1htt_fortran'), np.asfortranarray(soft((2, 1, 2, 3, 3), '<f4')))
np.save(os.path.join(npy, 'cross'), soft((2, 3, 5), '<f4'))
with open(os.path.join(npy, 'v2'), 'wb') as f:
    np.lib.format.write_array(f, soft((3, 3), '<f4'), version=(2, 0))
with open(os.path.join(npy, 'v3'), 'wb') as f:
    np.lib.format.write_array(f, soft((2, 2), '>f8'), version=(3, 0))
np.save(os.path.join(npy, 'int32'), np.arange(4, dtype='<i4').reshape(2, 2))
for name in os.listdir(npy):
    if name.endswith('.npy'):
        os.replace(os.path.join(npy, name), os.path.join(npy, name[:-4]))

words = np.array(['the', 'caf\u00e9', '\U0001F600', '[SEP]'])
np.savez(os.path.join(npz, 'stored_tokens_u'), attention=soft((2, 4, 4), '<f4'), tokens=words)
np.savez_compressed(os.path.join(npz, 'deflated_tokens_s'), attention=soft((3, 3), '<f2'),
                    tokens=np.array([b'a', b'bb', b'ccc']))
np.savez_compressed(os.path.join(npz, 'layers'), layer_0=soft((2, 3, 3), '<f4'),
                    layer_1=soft((1, 2, 3, 3), '<f4'), tokens=np.array(['x', 'y', 'z']))
np.savez(os.path.join(npz, 'cross_tokens'), attention=soft((2, 3), '>f8'),
         query_tokens=np.array(['q1', 'q2']), key_tokens=np.array(['k1', 'k2', 'k3']))
for name in os.listdir(npz):
    if name.endswith('.npz'):
        os.replace(os.path.join(npz, name), os.path.join(npz, name[:-4]))
