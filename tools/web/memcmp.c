/* memcmp for the wasm build (tools/web/web.mk links it before emscripten's
 * libc, whose memcmp compares byte by byte): 16 bytes at a time with
 * WebAssembly SIMD, then the bytes of the first block that differs. The
 * toy model's keystroke compares its rows with the last forward's to find
 * what changed (model_compute): a fifth of its time in the page went to
 * that byte loop (node --cpu-prof on tests/web/forward_bench), 2.18 µs a
 * keystroke at 7 words, 1.8 µs with this one (native 0.92: glibc's memcmp
 * is vectorised). The same result as any memcmp: the sign of the first
 * differing bytes' difference, as unsigned char. */
#include <stddef.h>
#include <string.h>
#include <wasm_simd128.h>

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        if (!wasm_i8x16_all_true(wasm_i8x16_eq(wasm_v128_load(p + i), wasm_v128_load(q + i))))
            break;
    for (; i < n; i++)
        if (p[i] != q[i])
            return p[i] - q[i];
    return 0;
}
