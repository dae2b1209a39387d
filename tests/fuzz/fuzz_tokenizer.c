/* libFuzzer target: tok_split on the input (capped at 64 KiB); checks the token count,
 * that every token is non-empty valid UTF-8 with no upper-case ASCII, that the
 * source ranges lie inside the input in order, and tok_utf8_len against a
 * reference decoder.
 * The logic lives in harness.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_tokenizer(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_tokenizer: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
