/* The embedding table in memory (see attnviz/embed.h): lookup through its
 * open-addressing index, the deterministic vector of an unknown word, and
 * freeing. No file here: io/embed_file.c reads GloVe/word2vec into a table. */
#include "attnviz/embed.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a64(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

size_t embed_hash_probe(const EmbedTable *t, const char *w, size_t n)
{
    size_t mask = t->n_slots - 1;
    size_t s = (size_t)fnv1a64(w, n) & mask;
    for (;;) {
        uint32_t v = t->slots[s];
        if (v == 0)
            return s;
        const char *cand = t->words + t->word_off[v - 1];
        /* strncmp, not memcmp: cand may be shorter than n and end the buffer
         * (w holds no NUL, so a shorter cand differs at its terminator) */
        if (strncmp(cand, w, n) == 0 && cand[n] == '\0')
            return s;
        s = (s + 1) & mask;
    }
}

void embed_destroy(EmbedTable *t)
{
    if (!t)
        return;
    free(t->vectors);
    free(t->words);
    free(t->word_off);
    free(t->dim_buf);
    free(t->dim_off);
    free(t->slots);
    free(t);
}

int embed_find(const EmbedTable *t, const char *word)
{
    if (!t || !word || !t->slots || t->n_slots == 0)
        return -1;
    uint32_t v = t->slots[embed_hash_probe(t, word, strlen(word))];
    return (int)v - 1;
}

void embed_oov_vector(const char *word, int d, float *out)
{
    if (!out || d <= 0)
        return;
    if (!word)
        word = "";
    uint64_t state = fnv1a64(word, strlen(word));
    for (int k = 0; k < d; k++) {
        uint64_t r = splitmix64_next(&state);
        out[k] = (float)(r >> 40) * (1.0f / 16777216.0f) - 0.5f;
    }
}
