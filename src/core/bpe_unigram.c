/* A Unigram's pieces (tokenizer.json's Unigram model, T5's): each token's
 * score and the set of the pieces' prefixes that ends bpe_encode.c's
 * Viterbi search early. Not the encoding (bpe_encode.c). */
#include <stdint.h>
#include <stdlib.h>

#include "attnviz/bpe.h"
#include "attnviz/tokenizer.h"
#include "bpe_internal.h"

/* A prefix key's first slot (keys are FNV states, mixed once more). */
static size_t slot_of(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    return (size_t)(key ^ (key >> 33));
}

static void prefix_put(uint64_t *slots, size_t n, uint64_t key, size_t *used)
{
    size_t i = slot_of(key) & (n - 1);
    while (slots[i] && slots[i] != key)
        i = (i + 1) & (n - 1);
    if (!slots[i]) {
        slots[i] = key;
        (*used)++;
    }
}

int bpe_prefix_has(const Bpe *b, uint64_t key)
{
    if (!b->n_pslot)
        return 0;
    size_t i = slot_of(key) & (b->n_pslot - 1);
    while (b->pslot[i]) {
        if (b->pslot[i] == key)
            return 1;
        i = (i + 1) & (b->n_pslot - 1);
    }
    return 0;
}

/* Room for n more prefixes at a load of at most one half. */
static int prefix_reserve(Bpe *b, size_t n)
{
    if ((b->n_pused + n) * 2 <= b->n_pslot)
        return 0;
    size_t cap = b->n_pslot ? b->n_pslot : 1024, used = 0;
    while ((b->n_pused + n) * 2 > cap)
        cap *= 2;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < b->n_pslot; i++)
        if (b->pslot[i])
            prefix_put(slots, cap, b->pslot[i], &used);
    free(b->pslot);
    b->pslot = slots;
    b->n_pslot = cap;
    b->n_pused = used;
    return 0;
}

int bpe_add_piece(Bpe *b, const char *text, size_t len, long id, double score, AttnErr *err)
{
    int rc = bpe_add_token(b, text, len, id, err);
    if (rc < 0)
        return rc;
    if (id >= b->cap_score) {
        int cap = b->cap_score ? b->cap_score : 1024;
        while (cap <= id)
            cap *= 2;
        double *s = realloc(b->score, (size_t)cap * sizeof *s);
        if (!s)
            return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        for (int i = b->cap_score; i < cap; i++)
            s[i] = 0.0;
        b->score = s;
        b->cap_score = cap;
    }
    b->score[id] = score;
    if (score < b->min_score)
        b->min_score = score;
    if (prefix_reserve(b, len) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    uint64_t h = BPE_FNV_START;
    for (size_t i = 0; i < len;) {
        int k = tok_utf8_len((const unsigned char *)text + i, len - i);
        if (k <= 0)
            k = 1;
        h = bpe_fnv(h, text + i, (size_t)k);
        i += (size_t)k;
        prefix_put(b->pslot, b->n_pslot, bpe_prefix_key(h), &b->n_pused);
    }
    return 0;
}
