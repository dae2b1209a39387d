/* attnviz error codes: one table gives the enum and the messages.
 * Library functions return 0 or a negative ATTN_E_* code and fill an AttnErr
 * with the file, line and a detail; only main.c prints and exits. */
#ifndef ATTNVIZ_ERROR_H
#define ATTNVIZ_ERROR_H

#include <stddef.h>

#define ATTN_ERROR_LIST(X)                                   \
    X(OK, "no error")                                        \
    X(NOMEM, "out of memory")                                \
    X(IO, "cannot read or write file")                       \
    X(PARSE, "parse error")                                  \
    X(EMPTY, "empty input")                                  \
    X(TOO_MANY_TOKENS, "too many tokens")                    \
    X(SHAPE, "wrong shape")                                  \
    X(RANGE, "value out of range")                           \
    X(HEADS, "heads must divide d")                          \
    X(NONFINITE, "value is NaN or infinite")                 \
    X(DUPLICATE, "duplicate entry")                          \
    X(TOO_LARGE, "input too large")                          \
    X(UNSUPPORTED, "unsupported")                            \
    X(NOT_FOUND, "not found")                                \
    X(CANCELLED, "cancelled")                                \
    X(USAGE, "usage error")

#define ATTN_ERR_ENUM(name, msg) ATTN_E_##name,
enum { ATTN_ERROR_LIST(ATTN_ERR_ENUM) ATTN_E_COUNT_ };
#undef ATTN_ERR_ENUM

/* Error detail: the code, where it happened and what was wrong. */
typedef struct AttnErr {
    int code;          /* positive ATTN_E_* value (0 when none) */
    char file[512];    /* file name, or "" */
    long line;         /* 1-based line number, or 0 */
    char msg[1024];    /* human detail, e.g. "expected 16 numbers, found 15" */
} AttnErr;

/* Message for a code, positive or negative. */
const char *attn_strerror(int code);

/* Fill err (when not NULL) and return -code. printf-style detail. */
int attn_err_set(AttnErr *err, int code, const char *file, long line,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* "file:line: detail" (or the parts that are set) into buf. */
void attn_err_format(const AttnErr *err, char *buf, size_t n);

#endif
