/* The Bpe's insides, shared by bpe.c (building, the vocabulary, display)
 * and bpe_encode.c (encoding); nothing else includes this. */
#ifndef ATTNVIZ_BPE_INTERNAL_H
#define ATTNVIZ_BPE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/bpe.h"
#include "bpe_pre.h"

typedef struct TokenRec {
    size_t text_off, raw_off; /* the text in the file's form, and its bytes */
    uint32_t text_len, raw_len;
    int32_t added;            /* index in Bpe.added, or -1 */
    uint8_t in_vocab;
    uint8_t decode_none;      /* decode_llama gives nothing for it (bpe_set_decode_none) */
} TokenRec;

typedef struct MergeSlot {
    uint64_t key;  /* left id << 32 | right id */
    int32_t rank;  /* -1: empty slot */
    int32_t id;    /* the merged token */
} MergeSlot;

typedef struct Added {
    size_t off;    /* content in the arena */
    uint32_t len;
    size_t moff;   /* what is matched: the content, normalized when "normalized" */
    uint32_t mlen;
    int32_t id;
    unsigned flags;
} Added;

struct Bpe {
    BpeOptions opt;
    TokenRec *tok;          /* by id, n_vocab of them (cap_tok allocated) */
    int n_vocab, cap_tok, n_tokens;
    char *arena;            /* every text and byte string */
    size_t arena_len, arena_cap;
    uint32_t *vslot;        /* vocabulary text → id + 1 (0: empty) */
    size_t n_vslot;
    MergeSlot *mslot;
    size_t n_mslot, n_mused;
    int n_merges;
    int byte_id[256];       /* the token of each byte's character, or -1 */
    Added *added;           /* sorted by first byte, then longest first */
    int n_added, cap_added;
    int added_at[257];      /* added[added_at[c] .. added_at[c + 1]) start with byte c */
    int *added_by_len;      /* the added tokens' ids, longest content first (ties: as added) */
    int byte_fb[256];       /* the <0xNN> token of each byte, or -1 */
    BpeNorm *norm;          /* the normalizer's steps */
    int n_norm;
    BpePre *pre;            /* the pre-tokenizer's steps (none: GPT-2's ByteLevel) */
    int n_pre;
    int *tmpl;              /* the template's ids: n_before, then n_after */
    int n_before, n_after;
    double *score;          /* Unigram: each id's score (cap_score of them) */
    int cap_score;
    double min_score;       /* the lowest score of a piece */
    uint64_t *pslot;        /* Unigram: bpe_prefix_key of every piece's every prefix that
                               ends a character (0: empty); a false match only costs a
                               lookup more */
    size_t n_pslot, n_pused;
};

/* The running FNV-1a state over a text's bytes, and the key of the prefix
 * it has read. */
#define BPE_FNV_START 1469598103934665603ull
static inline uint64_t bpe_fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}
static inline uint64_t bpe_prefix_key(uint64_t h)
{
    h ^= h >> 29;
    return h ? h : 1;
}
/* 1 when key is some piece's prefix (or a false match). */
int bpe_prefix_has(const Bpe *b, uint64_t key);

/* The id of vocabulary token text, or -1. */
int bpe_vocab_find(const Bpe *b, const char *text, size_t len);
/* The merge of the pair (left, right), or NULL. */
const MergeSlot *bpe_merge_find(const Bpe *b, int left, int right);

#endif
