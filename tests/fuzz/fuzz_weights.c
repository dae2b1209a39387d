/* libFuzzer target: weights_parse on the input (capped at 64 KiB) for d = 4,
 * the d of a tiny built-in GloVe table (attn_config_default()); on error the
 * parser gives nothing back, on success its weights are consistent and
 * model_set_weights takes them into a Model, where model_set_text +
 * model_compute must give NaN-free attention rows that sum to 1 (also
 * causal, posenc, tau = 1e-3).
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
