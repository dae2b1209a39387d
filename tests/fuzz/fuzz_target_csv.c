/* libFuzzer target: teach targets from CSV (target_csv_parse): the error
 * contract, nothing written on error, finite weights >= 0 on success. The
 * logic lives in harness_teach.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_teach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_target_csv(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_target_csv: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
