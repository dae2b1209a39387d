/* PLACEHOLDER until branch imp-st lands: the real .json attention reader is
 * another engineer's (imp-st). This stub only lets branch imp-npy link; the
 * lead takes imp-st's file at the merge. */
#include "attnviz/attnio.h"

int attn_json_parse(AttnFile *f, const char *data, size_t len, const char *name, AttnErr *err)
{
    (void)f;
    (void)data;
    (void)len;
    return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                        ".json attention files are not supported yet (placeholder)");
}

int attn_json_is_attention(const char *data, size_t len)
{
    (void)data;
    (void)len;
    return 0;
}
