/* libFuzzer target: options_parse on argv = {"attnviz", pieces of the input split at
 * NUL bytes} (input capped at 4 KiB, 64 arguments); checks the error contract,
 * every value's range and that every string points into argv.
 * The logic lives in harness.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_options(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_options: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
