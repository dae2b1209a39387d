/* libFuzzer target: GPT-2's tokenizer (bpe_encode) on the input as text, with two
 * tokenizers built in memory; checks the ids, the round trip through
 * bpe_decode, the display texts and the split against PCRE2's.
 * The logic lives in harness_bpe.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_bpe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_bpe(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_bpe: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
