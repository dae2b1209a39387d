/* libFuzzer target: model_config_parse(&desc_gpt2) on config.json bytes (capped at 64 KiB,
 * copied into a buffer of exactly its size): on error err names the file and
 * the config is zeroed; on success every size is at least 1, n_embd divides
 * by n_head, eps is in (0, 1), the flags are 0 or 1, bos and eos are -1 or in
 * the vocabulary.
 * The logic lives in harness_gpt2.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_gpt2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_gpt2_config(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_gpt2_config: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
