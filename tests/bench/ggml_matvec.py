#!/usr/bin/python3
"""llama.cpp's own product with a quantized matrix, for quant_bench's rows.

ggml_mul_mat of a TYPE matrix of M rows of K numbers (random floats that
ggml quantizes) with N rows of activations, computed by ggml's CPU backend
(the library llama.cpp's CPU build picks for this machine) on THREADS
threads: the median ms of REPS computations, and GB/s of weight bytes, in
quant_bench's format ("ggml type=... ms=... GBps=..."). The weights come in
copies filling 256 MB that the repetitions take in turn, as quant_bench's do.

  ggml_matvec.py LIBDIR TYPE M K N THREADS [REPS]

LIBDIR holds libggml-base.so and libggml-cpu-*.so: node-llama-cpp's prebuilt
binaries (npm install --no-audit --no-fund --ignore-scripts --omit=optional
--prefix DIR node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1, then
DIR/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64). Not a dependency
of the program or of its tests.
"""
import ctypes
import os
import statistics
import sys
import time

import numpy as np

TYPES = {"Q4_K": 12, "Q6_K": 14, "Q8_0": 8, "Q4_0": 2, "Q5_K": 13, "F16": 1}
# the CPU variants, best first; the first this CPU runs (its flags) is used
VARIANTS = [("zen4", {"avx512f", "avx512_vnni", "avx512bw", "avx512vbmi", "avx512_bf16"}),
            ("icelake", {"avx512f", "avx512_vnni", "avx512bw", "avx512vbmi"}),
            ("skylakex", {"avx512f", "avx512bw"}), ("haswell", {"avx2", "fma", "f16c"}),
            ("sse42", {"sse4_2"}), ("x64", set())]


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    libdir, tname = sys.argv[1], sys.argv[2]
    m, k, n, threads = (int(x) for x in sys.argv[3:7])
    reps = int(sys.argv[7]) if len(sys.argv) > 7 else 9
    base = ctypes.CDLL(os.path.join(libdir, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    flags = cpu_flags()
    name = next(v for v, need in VARIANTS if need <= flags and os.path.exists(os.path.join(libdir, "libggml-cpu-%s.so" % v)))
    cpu = ctypes.CDLL(os.path.join(libdir, "libggml-cpu-%s.so" % name), mode=ctypes.RTLD_GLOBAL)
    vp = ctypes.c_void_p
    base.ggml_init.restype = vp
    base.ggml_init.argtypes = [InitParams]
    base.ggml_new_tensor_2d.restype = vp
    base.ggml_new_tensor_2d.argtypes = [vp, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    base.ggml_mul_mat.restype = vp
    base.ggml_mul_mat.argtypes = [vp, vp, vp]
    base.ggml_new_graph.restype = vp
    base.ggml_new_graph.argtypes = [vp]
    base.ggml_build_forward_expand.argtypes = [vp, vp]
    base.ggml_get_data.restype = vp
    base.ggml_get_data.argtypes = [vp]
    base.ggml_nbytes.restype = ctypes.c_size_t
    base.ggml_nbytes.argtypes = [vp]
    base.ggml_backend_graph_compute.restype = ctypes.c_int
    base.ggml_backend_graph_compute.argtypes = [vp, vp]
    base.ggml_quantize_chunk.restype = ctypes.c_size_t
    base.ggml_quantize_chunk.argtypes = [ctypes.c_int, vp, vp, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, vp]
    cpu.ggml_backend_cpu_init.restype = vp
    cpu.ggml_backend_cpu_set_n_threads.argtypes = [vp, ctypes.c_int]

    t = TYPES[tname]
    rng = np.random.default_rng(35)
    w = (rng.standard_normal((m, k)) * 0.02).astype(np.float32)
    act = rng.standard_normal((n, k)).astype(np.float32)
    # one quantized copy, repeated into copies of the graph's weight tensor
    probe = ctypes.create_string_buffer(m * k * 4)
    size = base.ggml_quantize_chunk(t, w.ctypes.data, probe, 0, m, k, None)
    copies = 256 * 1024 * 1024 // size + 1
    ctx = base.ggml_init(InitParams(size * copies + n * k * 4 + n * m * 4 + 64 * 1024 * 1024, None, False))
    backend = cpu.ggml_backend_cpu_init()
    cpu.ggml_backend_cpu_set_n_threads(backend, threads)
    b = base.ggml_new_tensor_2d(ctx, 0, k, n)
    ctypes.memmove(base.ggml_get_data(b), act.ctypes.data, n * k * 4)
    graphs = []
    for _ in range(copies):
        a = base.ggml_new_tensor_2d(ctx, t, k, m)
        assert base.ggml_nbytes(a) == size
        ctypes.memmove(base.ggml_get_data(a), probe, size)
        out = base.ggml_mul_mat(ctx, a, b)
        g = base.ggml_new_graph(ctx)
        base.ggml_build_forward_expand(g, out)
        graphs.append(g)
    assert base.ggml_backend_graph_compute(backend, graphs[0]) == 0  # warm
    ms = []
    for r in range(reps):
        g = graphs[(r + 1) % copies]
        t0 = time.perf_counter()
        base.ggml_backend_graph_compute(backend, g)
        ms.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median(ms)
    print("ggml type=%s m=%d k=%d n=%d threads=%d ms=%.3f GBps=%.2f cpu=%s" %
          (tname, m, k, n, threads, med, size / (med * 1e6), name))


if __name__ == "__main__":
    main()
