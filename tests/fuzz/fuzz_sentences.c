/* libFuzzer target: sentences_parse on the input (capped at 64 KiB); checks the error
 * contract and that every sentence is a trimmed, non-comment slice of one line.
 * The logic lives in harness.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_sentences(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_sentences: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
