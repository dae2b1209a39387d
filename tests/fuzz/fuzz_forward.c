/* libFuzzer target: attention forward passes built from the bytes (shapes,
 * settings, weights and inputs, NaN and infinities included), then changes
 * of some rows: attn_forward_update must give exactly the floats of a whole
 * attn_forward, weights stay in [0, 1], and the baseline kernels agree with
 * the fast ones. The logic lives in harness.h, shared with
 * tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_forward(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_forward: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
