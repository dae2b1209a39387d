/* Embedding table: word -> d-dimensional vector, read from GloVe or word2vec
 * text files. Offers embed_load / embed_parse (io/embed_file.c: one pass, a
 * few large allocations, no malloc per word), and in the core (core/embed.c,
 * no file) lookup by exact word, the dimension names from a "# dims: a b c"
 * comment, and a deterministic vector for unknown words.
 * Not for: tokenizing (tokenizer.h) or positional encoding (attn.h). */
#ifndef ATTNVIZ_EMBED_H
#define ATTNVIZ_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/error.h"

#define ATTN_MAX_DIM 1024

typedef struct EmbedTable {
    int n;                /* number of words */
    int d;                /* dimensions */
    float *vectors;       /* n×d, row i belongs to word i */
    char *words;          /* every word NUL-terminated, in file order */
    size_t *word_off;     /* n offsets into words */
    char *dim_buf;        /* the d dimension names, NUL-terminated */
    size_t *dim_off;      /* d offsets into dim_buf */
    int has_dim_names;    /* 1 when the file had a "# dims:" line */
    uint32_t *slots;      /* open-addressing hash: word index + 1, 0 = empty */
    size_t n_slots;       /* power of two */
    int n_duplicates;     /* duplicate words skipped (the first one wins) */
} EmbedTable;

/* Parse a whole file. On success *out owns a new table (embed_destroy it).
 * A duplicate word keeps the first vector and fills *warn (when not NULL)
 * with the line of the first duplicate. Errors name the file and line. */
int embed_load(EmbedTable **out, const char *path, AttnErr *err, AttnErr *warn);

/* The same from memory; name is used in messages. data need not end in NUL. */
int embed_parse(EmbedTable **out, const char *data, size_t len,
                const char *name, AttnErr *err, AttnErr *warn);

void embed_destroy(EmbedTable *t); /* accepts NULL */

/* Index of word (exact match), or -1. */
int embed_find(const EmbedTable *t, const char *word);

/* The slot of word [w, w+n) in t->slots (n_slots a power of two with at
 * least one empty slot; w need not end in NUL): the slot that holds its
 * index + 1, or the empty slot where it belongs. Whoever builds a table
 * fills the index with it: t->slots[embed_hash_probe(t, w, n)] = i + 1. */
size_t embed_hash_probe(const EmbedTable *t, const char *w, size_t n);

static inline const float *embed_vector(const EmbedTable *t, int i)
{
    return t->vectors + (size_t)i * (size_t)t->d;
}
static inline const char *embed_word(const EmbedTable *t, int i)
{
    return t->words + t->word_off[i];
}
/* Name of dimension k: from "# dims:", else "d0", "d1", ... */
static inline const char *embed_dim_name(const EmbedTable *t, int k)
{
    return t->dim_buf + t->dim_off[k];
}

/* Deterministic vector for an unknown word: a 64-bit FNV-1a hash of its bytes
 * seeds a splitmix64 stream; components uniform in [-0.5, 0.5). The same on
 * every machine and run. */
void embed_oov_vector(const char *word, int d, float *out);

#endif
