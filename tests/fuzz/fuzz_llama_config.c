/* libFuzzer target: model_config_parse(&desc_llama) on config.json bytes (capped at 64
 * KiB, copied into a buffer of exactly its size): on error err names the
 * file and the config is zeroed; on success the sizes, heads, rotary
 * numbers, flags and token ids are in range and llama_config_check agrees.
 * The logic lives in harness_llama.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_llama.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_llama_config(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_llama_config: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
