/* libFuzzer target: config.json bytes (capped at 64 KiB) through every
 * architecture's description (arch_builtin: model_config_parse, the
 * runtime's check and shape, a state made): on error err names the file
 * and the config is zeroed; on success the shape is one a state can be made
 * of. The logic lives in harness_arch.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_arch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_arch_config(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_arch_config: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
