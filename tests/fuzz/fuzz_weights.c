/* libFuzzer target: weights_parse on the input (capped at 64 KiB) into a Model over a
 * tiny built-in GloVe table (d = 4, attn_config_default()); on error the model
 * must be unchanged, on success model_set_text + model_compute must give
 * NaN-free attention rows that sum to 1 (also causal, posenc, tau = 1e-3).
 * The logic lives in harness.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_weights(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_weights: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
