/* libFuzzer target: attn_session_parse on the input (capped at 64 KiB):
 * on error err names the file and the session is zeroed; on success the
 * file is named and the picks are in range, and attn_session_is agrees.
 * The logic lives in harness_attn.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_attn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_attn_session(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_attn_session: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
