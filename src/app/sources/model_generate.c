/* Generation (--generate, issue 37): the text continued a token at a time,
 * each one incremental forward (the runtime reuses the prefix) and the
 * token chosen from the last position's logits by core/generate.c; the ids
 * appended as chosen, never the decoded text tokenized again. Not the
 * printing (model_open.c's command line). */
#include "attnviz/generate.h"
#include "attnviz/lm.h"
#include "attnviz/model_source.h"
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

static int ids_push(BpeIds *ids, int id)
{
    if (ids->n == ids->cap) {
        int cap = ids->cap ? 2 * ids->cap : 16;
        int *p = realloc(ids->id, (size_t)cap * sizeof *p);
        if (!p)
            return -ATTN_E_NOMEM;
        ids->id = p;
        ids->cap = cap;
    }
    ids->id[ids->n++] = id;
    return 0;
}

int model_generate(ModelOpened *g, int n, const GenSettings *s, Prng *r, AttnErr *err)
{
    int V = g->lm.info.n_vocab, rc = 0;
    float *logits = malloc((size_t)V * sizeof *logits);
    int *order = malloc((size_t)V * sizeof *order);
    double *p = malloc((size_t)V * sizeof *p);
    if (!logits || !order || !p) {
        rc = attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
        goto cleanup;
    }
    if (g->lm.info.encdec) {
        rc = attn_err_set(err, ATTN_E_UNSUPPORTED, g->path, 0,
                          "%s (%s) is an encoder-decoder: generation of its target is not computed "
                          "yet (--target gives one)", g->name, g->lm.info.arch);
        goto cleanup;
    }
    for (int k = 0; k < n; k++) {
        int T = g->ids.n;
        if (T >= g->lm.info.n_positions)
            break; /* full: the caller checked T + n */
        if ((rc = lm_forward(&g->lm, g->ids.id, T, NULL, err)) < 0 ||
            (rc = lm_logits(&g->lm, T - 1, logits, err)) < 0)
            goto cleanup;
        int id = gen_pick(logits, V, s, r, order, p);
        if (ids_push(&g->ids, id) < 0) {
            rc = attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
            goto cleanup;
        }
        if (lm_is_stop(&g->lm.info, id))
            break; /* the end of the text: kept, as Hugging Face's generate keeps it */
    }
cleanup:
    free(logits);
    free(order);
    free(p);
    return rc;
}

int model_generated_text(const ModelOpened *g, char **out, size_t *len)
{
    int given = g->n_given < g->ids.n ? g->n_given : g->ids.n;
    return bpe_decode(g->bpe, g->ids.id + given, g->ids.n - given, 0, out, len);
}

/* What ids[given..n) add to the decoded text: the whole decoded past what
 * ids[0..given) decode to (as a streamer prints: a space the decoder strips
 * at the start of a text stays between the text and its continuation), or,
 * when that is not a prefix of it, the continuation decoded alone. */
static int new_part(const Bpe *b, const int *ids, int n, int given, char **out, size_t *len)
{
    char *before = NULL;
    size_t n_before = 0;
    int rc = bpe_decode(b, ids, n, 1, out, len);
    if (rc == 0)
        rc = bpe_decode(b, ids, given, 1, &before, &n_before);
    if (rc == 0 && n_before <= *len && memcmp(*out, before, n_before) == 0) {
        memmove(*out, *out + n_before, *len - n_before + 1);
        *len -= n_before;
    } else if (rc == 0) {
        free(*out);
        *out = NULL;
        rc = bpe_decode(b, ids + given, n - given, 1, out, len);
    }
    free(before);
    return rc;
}

char *model_continued_text(const Bpe *b, const int *ids, int n, int given, const char *text)
{
    char *part = NULL;
    size_t n_part = 0, n_text = strlen(text);
    char *joined = new_part(b, ids, n, given, &part, &n_part) == 0 ? malloc(n_text + n_part + 1) : NULL;
    if (joined) {
        memcpy(joined, text, n_text);
        memcpy(joined + n_text, part, n_part);
        joined[n_text + n_part] = '\0';
    }
    free(part);
    return joined;
}

int model_generated_join(ModelOpened *g, const char *text, AttnErr *err)
{
    int given = g->n_given < g->ids.n ? g->n_given : g->ids.n;
    char *joined = model_continued_text(g->bpe, g->ids.id, g->ids.n, given, text);
    if (!joined)
        return attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
    free(g->text);
    g->text = joined;
    return 0;
}
