/* libFuzzer target: GPT-2's tokenizer files: the input as a tokenizer.json (first byte even)
 * or a vocab.json and a merges.txt (first byte odd, split at the first NUL);
 * checks the error contract, or a tokenizer that encodes a sample text.
 * The logic lives in harness_bpe.h, shared with tests/test_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_bpe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *bad = fuzz_check_bpe_files(data, size);
    if (bad) {
        fprintf(stderr, "fuzz_bpe_files: invariant violated: %s\n", bad);
        abort();
    }
    return 0;
}
