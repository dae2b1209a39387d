/* PLACEHOLDER until branch imp-st lands: the real .safetensors reader is
 * another engineer's (imp-st). This stub only lets branch imp-npy link; the
 * lead takes imp-st's file at the merge. */
#include "attnviz/attnio.h"

int attn_safetensors_parse(AttnFile *f, const void *data, size_t len, const char *name,
                           AttnErr *err)
{
    (void)f;
    (void)data;
    (void)len;
    return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                        ".safetensors files are not supported yet (placeholder)");
}
