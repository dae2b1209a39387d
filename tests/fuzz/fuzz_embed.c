/* libFuzzer target for the embedding reader: feeds arbitrary bytes to
 * embed_parse (capped at 1 MB) and, on success, checks the table's invariants
 * (every word findable, finite vectors, dimension names present). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/embed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    EmbedTable *t = NULL;
    AttnErr err, warn;
    int rc = embed_parse(&t, (const char *)data, size, "fuzz", &err, &warn);
    if (rc != 0) {
        if (t || err.code != -rc || err.code <= 0 || err.code >= ATTN_E_COUNT_)
            abort();
        if (err.code != ATTN_E_NOMEM && err.line < 1)
            abort(); /* parse errors always name a line */
        return 0;
    }
    if (!t || t->n < 1 || t->d < 1 || t->d > ATTN_MAX_DIM)
        abort();
    if ((t->n_slots & (t->n_slots - 1)) || t->n_slots < 2 * (size_t)t->n)
        abort();
    if (t->n_duplicates > 0 && (warn.code != ATTN_E_DUPLICATE || warn.line < 1))
        abort();
    for (int i = 0; i < t->n; i++) {
        if (embed_find(t, embed_word(t, i)) != i)
            abort();
        const float *v = embed_vector(t, i);
        for (int k = 0; k < t->d; k++)
            if (!isfinite(v[k]))
                abort();
    }
    for (int k = 0; k < t->d; k++)
        (void)strlen(embed_dim_name(t, k));
    float oov[8];
    embed_oov_vector(embed_word(t, 0), 8, oov);
    for (int k = 0; k < 8; k++)
        if (!(oov[k] >= -0.5f && oov[k] < 0.5f))
            abort();
    embed_destroy(t);
    return 0;
}
