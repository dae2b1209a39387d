/* libFuzzer target: attn_npy_parse on the input (capped at 64 KiB): the
 * error contract, or every part inside its buffer with its whole extent
 * (each byte read), sizes within the caps, tokens valid UTF-8 of the right
 * counts; attn_file_close releases everything (LeakSanitizer).
 * The logic lives in attn_harness.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_npy(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_npy: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
