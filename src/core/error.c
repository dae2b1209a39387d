/* The error table's messages and the helpers that fill an AttnErr. */
#include "attnviz/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const messages[] = {
#define ATTN_ERR_MSG(name, msg) msg,
    ATTN_ERROR_LIST(ATTN_ERR_MSG)
#undef ATTN_ERR_MSG
};

const char *attn_strerror(int code)
{
    if (code < 0)
        code = -code;
    if (code >= ATTN_E_COUNT_)
        return "unknown error";
    return messages[code];
}

int attn_err_set(AttnErr *err, int code, const char *file, long line,
                 const char *fmt, ...)
{
    if (code < 0)
        code = -code;
    if (err) {
        err->code = code;
        snprintf(err->file, sizeof err->file, "%s", file ? file : "");
        err->line = line;
        if (fmt) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err->msg, sizeof err->msg, fmt, ap);
            va_end(ap);
        } else {
            snprintf(err->msg, sizeof err->msg, "%s", attn_strerror(code));
        }
    }
    return -code;
}

void attn_err_format(const AttnErr *err, char *buf, size_t n)
{
    if (!err || !n)
        return;
    const char *msg = err->msg[0] ? err->msg : attn_strerror(err->code);
    if (err->file[0] && err->line > 0)
        snprintf(buf, n, "%s:%ld: %s", err->file, err->line, msg);
    else if (err->file[0])
        snprintf(buf, n, "%s: %s", err->file, msg);
    else
        snprintf(buf, n, "%s", msg);
}
