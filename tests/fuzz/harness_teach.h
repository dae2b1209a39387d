/* Fuzz harness logic for teach mode's target CSV reader (target_csv_parse),
 * shared by the libFuzzer target fuzz_target_csv.c and by
 * tests/test_fuzz_regress.c: NULL when every invariant held, else what did
 * not. Inputs above the cap are ignored. */
#ifndef ATTNVIZ_FUZZ_HARNESS_TEACH_H
#define ATTNVIZ_FUZZ_HARNESS_TEACH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/teach_io.h"

#define FUZZ_TARGET_CSV_MAX (64 * 1024)

/* Parse the input against fixed tokens (a comma and a quote among them):
 * on error the code is in err with the file name and a line, and the
 * output is untouched; on success every number is finite and >= 0. */
static inline const char *fuzz_check_target_csv(const uint8_t *data, size_t size)
{
    static const char *const q[] = {"the", "\"", "a,b"};
    static const char *const k[] = {"x", "the", ",", "y"};
    if (size > FUZZ_TARGET_CSV_MAX)
        return NULL;
    char *text = malloc(size ? size : 1); /* exactly the input: ASan sees over-reads */
    if (!text)
        return NULL;
    memcpy(text, data, size);
    float out[12];
    for (int e = 0; e < 12; e++)
        out[e] = -7.0f;
    AttnErr err = {0};
    int rc = target_csv_parse(text, size, "fuzz.csv", q, 3, k, 4, out, &err);
    const char *bad = NULL;
    if (rc < 0) {
        if (err.code != -rc)
            bad = "error code not in err";
        else if (strcmp(err.file, "fuzz.csv") != 0 || err.msg[0] == '\0')
            bad = "error without the file or a message";
        for (int e = 0; !bad && e < 12; e++)
            if (out[e] != -7.0f)
                bad = "output written on error";
    } else if (rc != 0) {
        bad = "positive return";
    } else {
        for (int e = 0; !bad && e < 12; e++)
            if (!isfinite(out[e]) || out[e] < 0.0f)
                bad = "a weight negative or not finite";
    }
    free(text);
    return bad;
}

#endif
