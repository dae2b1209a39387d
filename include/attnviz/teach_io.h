/* Teach mode's files (issue 15): a target read from a CSV file in the
 * `--print csv` format (header `query,<key tokens>`, one row per query
 * token: its token, then one number per key), and the "teach" object of
 * `--print json`. No SDL. */
#ifndef ATTNVIZ_TEACH_IO_H
#define ATTNVIZ_TEACH_IO_H

#include <stddef.h>

#include <stdio.h>

#include "attnviz/error.h"
#include "attnviz/teach_model.h"

/* Parse data (name for messages) into out (Tq×Tk). The header's key
 * tokens must be k_labels and the rows' first fields q_labels, in order
 * and as many; every other field a finite number >= 0. Fields are CSV
 * (quoted with doubled quotes inside), lines end in LF or CRLF, blank lines
 * at the end are allowed. Errors name the line and column: -ATTN_E_PARSE
 * (not CSV, a field not a number), -ATTN_E_SHAPE (tokens or sizes that do
 * not match), -ATTN_E_RANGE (negative, NaN or infinite). out is written
 * only on success. */
int target_csv_parse(const char *data, size_t len, const char *name,
                     const char *const *q_labels, int Tq, const char *const *k_labels, int Tk,
                     float *out, AttnErr *err);

/* The same from a file (at most ATTN_MAX_FILE_BYTES). */
int target_csv_load(const char *path, const char *const *q_labels, int Tq,
                    const char *const *k_labels, int Tk, float *out, AttnErr *err);

/* What trains, as --train writes it: "wq", "wk", "x", "v" (TEACH_* bits in
 * that order), separated by commas. teach_train_parse gives the bits, or
 * -1 for an unknown or repeated name or an empty list. */
int teach_train_parse(const char *list);
void teach_train_names(int train, char *buf, size_t n);

/* The value of --print json's "teach": {"target": [[...]] (as used:
 * normalised, masked mass dropped), "head": 1-based or "avg", "train":
 * [...], "optimizer", "lr", "steps", "loss": [steps + 1 numbers]}. */
int teach_print_json(FILE *f, const Teacher *t);

#endif
