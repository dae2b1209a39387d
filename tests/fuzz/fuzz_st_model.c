/* libFuzzer target: safetensors_parse on a model file's bytes (capped at
 * 64 KiB, copied into a buffer of exactly its size): on error err names the
 * file and the table is left empty; on success every tensor is found by its
 * name, its bytes lie inside the input, match its dtype and shape and
 * overlap no other's.
 * The logic lives in harness_gpt2.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_gpt2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_st_model(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_st_model: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
