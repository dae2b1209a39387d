/* libFuzzer target: attn_json_parse on the input (capped at 64 KiB,
 * copied into a buffer of exactly its size): on error err names the file and
 * f is left empty; on success the sizes are in range and every part's
 * numbers lie inside the bytes (or the parser's buffer), tokens count Tq and Tk.
 * The logic lives in harness_attn.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_attn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_attn_json(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_attn_json: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
