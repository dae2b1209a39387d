/* libFuzzer target: gguf_parse on the input (capped at 64 KiB, copied into a
 * buffer of exactly its size): on error err names the file and g is left
 * empty; on success every key and tensor is found by name, every string,
 * array and tensor lies inside the bytes, shapes and sizes agree, no two
 * tensors overlap. The logic lives in harness_gguf.h, shared with
 * tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_gguf(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_gguf: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
