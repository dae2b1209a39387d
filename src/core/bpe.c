/* Hugging Face's BPE in memory: the byte↔unicode table, the vocabulary and
 * the merges (hash maps), added tokens, the template's ids and the display text
 * of a token. The encoding is bpe_encode.c's; no files here. */
#include "attnviz/bpe.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/tokenizer.h"
#include "bpe_internal.h"

/* ---- the byte↔unicode table (GPT-2's bytes_to_unicode) --------------------- */

static unsigned byte_cp(unsigned char b)
{
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)
        return b;
    if (b <= 32)
        return 256u + b;          /* 0 .. 32 → U+0100 .. U+0120 ('Ġ' is the space) */
    if (b <= 160)
        return 289u + (b - 127u); /* 127 .. 160 → U+0121 .. U+0142 */
    return 323;                   /* 173 → U+0143 */
}

int bpe_char_byte(unsigned cp)
{
    if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255))
        return (int)cp;
    if (cp >= 256 && cp <= 288)
        return (int)(cp - 256);
    if (cp >= 289 && cp <= 322)
        return (int)(cp - 289 + 127);
    return cp == 323 ? 173 : -1;
}

int bpe_byte_char(unsigned char b, char out[2])
{
    unsigned cp = byte_cp(b);
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

/* The bytes of a token's text: every character decoded through the table,
 * or, when one is not in it (or the text is not UTF-8), the text itself, as
 * Hugging Face's ByteLevel decoder does. Returns the bytes written to out
 * (room for len). */
static size_t text_bytes(char *out, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        unsigned cp;
        int n = tok_utf8_decode(s + i, len - i, &cp);
        int b = n ? bpe_char_byte(cp) : -1;
        if (b < 0) {
            memcpy(out, text, len);
            return len;
        }
        out[o++] = (char)b;
        i += (size_t)n;
    }
    return o;
}

/* The byte of a byte-fallback token's text <0xNN> (any case, as Hugging
 * Face's ByteFallback decoder reads it), or -1. */
static int fallback_byte(const char *t, size_t n)
{
    static const char hex[] = "0123456789abcdef0123456789ABCDEF";
    if (n != 6 || memcmp(t, "<0x", 3) != 0 || t[5] != '>' || !t[3] || !t[4])
        return -1;
    const char *hi = strchr(hex, t[3]), *lo = strchr(hex, t[4]);
    if (!hi || !lo)
        return -1;
    return (int)((hi - hex) % 16 * 16 + (lo - hex) % 16);
}

/* A char_level token's bytes: a byte-fallback token's byte, else its text
 * with every '▁' a space (the Replace and ByteFallback decoders). */
static size_t text_bytes_chars(char *out, const char *text, size_t len)
{
    int fb = fallback_byte(text, len);
    if (fb >= 0) {
        out[0] = (char)fb;
        return 1;
    }
    size_t o = 0;
    for (size_t i = 0; i < len;)
        if (len - i >= 3 && memcmp(text + i, "\xE2\x96\x81", 3) == 0) {
            out[o++] = ' ';
            i += 3;
        } else {
            out[o++] = text[i++];
        }
    return o;
}

/* ---- hashing ---------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static uint64_t hash_pair(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    return key ^ (key >> 33);
}

static const char *vocab_text(const Bpe *b, int id)
{
    return b->arena + b->tok[id].text_off;
}

/* The slot of text in the vocabulary map: where its id + 1 is, or the
 * empty slot where it would go. */
static size_t vocab_probe(const Bpe *b, const char *text, size_t len)
{
    size_t mask = b->n_vslot - 1, i = (size_t)hash_bytes(text, len) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t v = b->vslot[i];
        if (!v)
            return i;
        const TokenRec *t = &b->tok[v - 1];
        if (t->text_len == len && memcmp(vocab_text(b, (int)v - 1), text, len) == 0)
            return i;
    }
}

int bpe_vocab_find(const Bpe *b, const char *text, size_t len)
{
    if (!b->n_vslot)
        return -1;
    uint32_t v = b->vslot[vocab_probe(b, text, len)];
    return v ? (int)v - 1 : -1;
}

/* The vocabulary map made n slots (a power of two, more than its tokens). */
static int vocab_grow_to(Bpe *b, size_t n)
{
    uint32_t *old = b->vslot;
    size_t n_old = b->n_vslot;
    b->vslot = calloc(n, sizeof *b->vslot);
    if (!b->vslot) {
        b->vslot = old;
        return -ATTN_E_NOMEM;
    }
    b->n_vslot = n;
    for (size_t i = 0; i < n_old; i++)
        if (old[i]) {
            int id = (int)old[i] - 1;
            b->vslot[vocab_probe(b, vocab_text(b, id), b->tok[id].text_len)] = old[i];
        }
    free(old);
    return 0;
}

static int vocab_grow(Bpe *b)
{
    return vocab_grow_to(b, b->n_vslot ? b->n_vslot * 2 : 1024);
}

const MergeSlot *bpe_merge_find(const Bpe *b, int left, int right)
{
    if (!b->n_mslot)
        return NULL;
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    size_t mask = b->n_mslot - 1;
    for (size_t i = (size_t)hash_pair(key) & mask;; i = (i + 1) & mask) {
        const MergeSlot *m = &b->mslot[i];
        if (m->rank < 0 || m->key == key)
            return m->rank < 0 ? NULL : m;
    }
}

/* Put (key → rank, id) into the map, replacing a pair merged before. */
static void merge_put(MergeSlot *slots, size_t n, uint64_t key, int rank, int id, size_t *used)
{
    size_t mask = n - 1, i = (size_t)hash_pair(key) & mask;
    while (slots[i].rank >= 0 && slots[i].key != key)
        i = (i + 1) & mask;
    if (slots[i].rank < 0)
        (*used)++;
    slots[i] = (MergeSlot){key, rank, id};
}

/* The merges' map made n slots (a power of two, more than its pairs). */
static int merge_grow_to(Bpe *b, size_t n)
{
    size_t used = 0;
    MergeSlot *slots = malloc(n * sizeof *slots);
    if (!slots)
        return -ATTN_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        slots[i].rank = -1;
    for (size_t i = 0; i < b->n_mslot; i++)
        if (b->mslot[i].rank >= 0)
            merge_put(slots, n, b->mslot[i].key, b->mslot[i].rank, b->mslot[i].id, &used);
    free(b->mslot);
    b->mslot = slots;
    b->n_mslot = n;
    b->n_mused = used;
    return 0;
}

static int merge_grow(Bpe *b)
{
    return merge_grow_to(b, b->n_mslot ? b->n_mslot * 2 : 1024);
}

/* ---- building ---------------------------------------------------------------- */

int bpe_reserve(Bpe *b, long n_tokens, long n_merges)
{
    n_tokens = n_tokens < BPE_MAX_VOCAB ? n_tokens : BPE_MAX_VOCAB;
    n_merges = n_merges < 2L * BPE_MAX_VOCAB ? n_merges : 2L * BPE_MAX_VOCAB; /* (more grow as added) */
    size_t v = b->n_vslot ? b->n_vslot : 1024, m = b->n_mslot ? b->n_mslot : 1024;
    while ((size_t)n_tokens * 2 > v)
        v *= 2;
    while ((size_t)n_merges * 2 > m)
        m *= 2;
    if ((n_tokens > 0 && v > b->n_vslot && vocab_grow_to(b, v) < 0) ||
        (n_merges > 0 && m > b->n_mslot && merge_grow_to(b, m) < 0))
        return -ATTN_E_NOMEM;
    return 0;
}

Bpe *bpe_create(const BpeOptions *opt)
{
    Bpe *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    if (opt)
        b->opt = *opt;
    for (int i = 0; i < 256; i++)
        b->byte_id[i] = b->byte_fb[i] = -1;
    b->min_score = HUGE_VAL;
    return b;
}

void bpe_set_options(Bpe *b, const BpeOptions *opt)
{
    b->opt = *opt;
}

int bpe_is_wordpiece(const Bpe *b)
{
    return b->opt.wordpiece;
}

int bpe_is_unigram(const Bpe *b)
{
    return b->opt.unigram;
}

void bpe_destroy(Bpe *b)
{
    if (!b)
        return;
    free(b->tok);
    free(b->arena);
    free(b->vslot);
    free(b->mslot);
    free(b->added);
    free(b->added_by_len);
    for (int i = 0; i < b->n_norm; i++)
        bpe_norm_free(&b->norm[i]);
    free(b->norm);
    for (int i = 0; i < b->n_pre; i++)
        bpe_pre_free(&b->pre[i]);
    free(b->pre);
    free(b->tmpl);
    free(b->score);
    free(b->pslot);
    free(b);
}

void bpe_ids_free(BpeIds *ids)
{
    if (!ids)
        return;
    free(ids->id);
    *ids = (BpeIds){0};
}

/* Room for n more bytes in the arena (made even for none: an empty token
 * points into it); -ATTN_E_NOMEM. */
static int arena_reserve(Bpe *b, size_t n)
{
    if (b->arena && b->arena_cap - b->arena_len >= n)
        return 0;
    size_t cap = b->arena_cap ? b->arena_cap : 1 << 16;
    while (cap - b->arena_len < n)
        cap *= 2;
    char *a = realloc(b->arena, cap);
    if (!a)
        return -ATTN_E_NOMEM;
    b->arena = a;
    b->arena_cap = cap;
    return 0;
}

/* The record of id, making the table reach it (new records empty). */
static TokenRec *token_slot(Bpe *b, int id)
{
    if (id >= b->cap_tok) {
        int cap = b->cap_tok ? b->cap_tok : 1024;
        while (cap <= id)
            cap *= 2;
        TokenRec *t = realloc(b->tok, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
        for (int i = b->cap_tok; i < cap; i++)
            t[i] = (TokenRec){.added = -1};
        b->tok = t;
        b->cap_tok = cap;
    }
    if (id >= b->n_vocab)
        b->n_vocab = id + 1;
    return &b->tok[id];
}

static int check_id(long id, AttnErr *err)
{
    if (id < 0 || id >= BPE_MAX_VOCAB)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "id %ld is outside 0 to %d", id,
                            BPE_MAX_VOCAB - 1);
    return 0;
}

int bpe_add_token(Bpe *b, const char *text, size_t len, long id, AttnErr *err)
{
    int rc = check_id(id, err);
    if (rc < 0)
        return rc;
    if (len > BPE_MAX_TOKEN_BYTES)
        return attn_err_set(err, ATTN_E_TOO_LARGE, NULL, 0,
                            "token %ld is %zu bytes long; the limit is %d", id, len,
                            BPE_MAX_TOKEN_BYTES);
    if (bpe_vocab_find(b, text, len) >= 0)
        return attn_err_set(err, ATTN_E_DUPLICATE, NULL, 0, "token \"%.*s\" appears twice",
                            (int)(len < 200 ? len : 200), text);
    if (id < b->n_vocab && b->tok[id].in_vocab)
        return attn_err_set(err, ATTN_E_DUPLICATE, NULL, 0,
                            "id %ld is given to both \"%.*s\" and \"%.*s\"", id,
                            (int)(b->tok[id].text_len < 200 ? b->tok[id].text_len : 200),
                            vocab_text(b, (int)id), (int)(len < 200 ? len : 200), text);
    if ((size_t)(b->n_tokens + 1) * 2 > b->n_vslot && vocab_grow(b) < 0)
        goto nomem;
    if (arena_reserve(b, 2 * len) < 0)
        goto nomem;
    TokenRec *t = token_slot(b, (int)id);
    if (!t)
        goto nomem;
    t->text_off = b->arena_len;
    t->text_len = (uint32_t)len;
    memcpy(b->arena + b->arena_len, text, len);
    t->raw_off = b->arena_len + len;
    if (b->opt.wordpiece) /* WordPiece's tokens are their text */
        memcpy(b->arena + t->raw_off, text, len);
    t->raw_len = (uint32_t)(b->opt.wordpiece ? len
                            : b->opt.char_level ? text_bytes_chars(b->arena + t->raw_off, text, len)
                                                : text_bytes(b->arena + t->raw_off, text, len));
    b->arena_len += len + t->raw_len;
    t->in_vocab = 1;
    b->vslot[vocab_probe(b, text, len)] = (uint32_t)id + 1;
    b->n_tokens++;
    unsigned cp;
    int n = tok_utf8_decode((const unsigned char *)text, len, &cp);
    if (n > 0 && (size_t)n == len && bpe_char_byte(cp) >= 0)
        b->byte_id[bpe_char_byte(cp)] = (int)id;
    int fb = fallback_byte(text, len);
    if (fb >= 0 && !memchr(text + 3, 0, 2) && strchr("0123456789ABCDEF", text[3]) &&
        strchr("0123456789ABCDEF", text[4]))
        b->byte_fb[fb] = (int)id; /* looked up as format!("<{b:#04X}>"): upper case */
    return 0;
nomem:
    return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
}

/* The merge left + right at rank; keep_first: a pair already added keeps
 * its rank. */
static int add_merge(Bpe *b, const char *left, size_t llen, const char *right, size_t rlen,
                     int rank, int keep_first, AttnErr *err)
{
    int a = bpe_vocab_find(b, left, llen), c = bpe_vocab_find(b, right, rlen);
    const char *missing = a < 0 ? left : c < 0 ? right : NULL;
    if (missing) {
        size_t n = a < 0 ? llen : rlen;
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "merge \"%.*s %.*s\": \"%.*s\" is not in the vocabulary",
                            (int)(llen < 200 ? llen : 200), left, (int)(rlen < 200 ? rlen : 200),
                            right, (int)(n < 200 ? n : 200), missing);
    }
    if (llen + rlen > BPE_MAX_TOKEN_BYTES)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "merge \"%.*s %.*s\": their join is not in the vocabulary",
                            (int)(llen < 200 ? llen : 200), left, (int)(rlen < 200 ? rlen : 200),
                            right);
    char join[BPE_MAX_TOKEN_BYTES];
    memcpy(join, left, llen);
    memcpy(join + llen, right, rlen);
    int id = bpe_vocab_find(b, join, llen + rlen);
    if (id < 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "merge \"%.*s %.*s\": their join \"%.*s\" is not in the vocabulary",
                            (int)(llen < 200 ? llen : 200), left, (int)(rlen < 200 ? rlen : 200),
                            right, (int)(llen + rlen < 400 ? llen + rlen : 400), join);
    if ((b->n_mused + 1) * 2 > b->n_mslot && merge_grow(b) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)c;
    b->n_merges++;
    if (!(keep_first && bpe_merge_find(b, a, c)))
        merge_put(b->mslot, b->n_mslot, key, rank, id, &b->n_mused);
    return 0;
}

int bpe_add_merge(Bpe *b, const char *left, size_t llen, const char *right, size_t rlen,
                  AttnErr *err)
{
    return add_merge(b, left, llen, right, rlen, b->n_merges, 0, err);
}

int bpe_add_merge_rank(Bpe *b, const char *left, size_t llen, const char *right, size_t rlen,
                       int rank, AttnErr *err)
{
    if (rank < 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "merge rank %d is negative", rank);
    return add_merge(b, left, llen, right, rlen, rank, 1, err);
}

/* Added tokens before a's place: those of a smaller first byte, or the same
 * first byte and longer content (so the first match found is the longest). */
static int added_before(const Bpe *b, const Added *x, const Added *a)
{
    unsigned char fx = (unsigned char)b->arena[x->moff], fa = (unsigned char)b->arena[a->moff];
    return fx < fa || (fx == fa && x->mlen >= a->mlen);
}

int bpe_add_special(Bpe *b, const char *content, size_t len, long id, unsigned flags,
                    AttnErr *err)
{
    int rc = check_id(id, err);
    if (rc < 0)
        return rc;
    if (len == 0 || len > BPE_MAX_TOKEN_BYTES)
        return attn_err_set(err, ATTN_E_PARSE, NULL, 0, "added token %ld: content is %s", id,
                            len ? "too long" : "empty");
    for (size_t i = 0; i < len;) {
        int n = tok_utf8_len((const unsigned char *)content + i, len - i);
        if (!n || (content[i] == 0))
            return attn_err_set(err, ATTN_E_PARSE, NULL, 0,
                                "added token %ld: content is not UTF-8 text", id);
        i += (size_t)n;
    }
    if (id < b->n_vocab && b->tok[id].added >= 0)
        return attn_err_set(err, ATTN_E_DUPLICATE, NULL, 0, "added token id %ld appears twice",
                            id);
    if (b->n_added == b->cap_added) {
        int cap = b->cap_added ? 2 * b->cap_added : 16;
        Added *a = realloc(b->added, (size_t)cap * sizeof *a);
        if (!a)
            return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        b->added = a;
        b->cap_added = cap;
    }
    char *norm = NULL;
    size_t nlen = 0;
    if ((flags & BPE_ADDED_NORMALIZED) && b->n_norm &&
        bpe_normalize(b->norm, b->n_norm, content, len, &norm, &nlen) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    if (norm && (nlen == 0 || nlen > BPE_MAX_TOKEN_BYTES)) {
        free(norm); /* normalized to nothing: matched as it is */
        norm = NULL;
    }
    if (arena_reserve(b, len + nlen) < 0 || !token_slot(b, (int)id)) {
        free(norm);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    }
    int *by_len = realloc(b->added_by_len, (size_t)(b->n_added + 1) * sizeof *by_len);
    if (!by_len) {
        free(norm);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    }
    b->added_by_len = by_len;
    Added a = {b->arena_len, (uint32_t)len, b->arena_len, (uint32_t)len, (int32_t)id, flags};
    memcpy(b->arena + b->arena_len, content, len);
    b->arena_len += len;
    if (norm) {
        a.moff = b->arena_len;
        a.mlen = (uint32_t)nlen;
        memcpy(b->arena + b->arena_len, norm, nlen);
        b->arena_len += nlen;
        free(norm);
    }
    int at = b->n_added;
    while (at > 0 && !added_before(b, &b->added[at - 1], &a))
        at--;
    memmove(b->added + at + 1, b->added + at, (size_t)(b->n_added - at) * sizeof a);
    b->added[at] = a;
    b->n_added++;
    for (int i = 0; i < b->n_added; i++)
        b->tok[b->added[i].id].added = i;
    /* the ids by content length, longest first, equal lengths in the order added */
    int k = b->n_added - 1;
    while (k > 0 && b->tok[by_len[k - 1]].added >= 0 &&
           b->added[b->tok[by_len[k - 1]].added].len < a.len) {
        by_len[k] = by_len[k - 1];
        k--;
    }
    by_len[k] = (int)id;
    for (int c = 0, i = 0; c <= 256; c++) {
        while (i < b->n_added && (unsigned char)b->arena[b->added[i].moff] < c)
            i++;
        b->added_at[c] = i;
    }
    return 0;
}

int bpe_add_normalizer(Bpe *b, const BpeNormalizer *n, AttnErr *err)
{
    BpeNorm *m = realloc(b->norm, (size_t)(b->n_norm + 1) * sizeof *m);
    if (!m)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    b->norm = m;
    int rc = bpe_norm_compile(&b->norm[b->n_norm], n, err);
    if (rc == 0)
        b->n_norm++;
    return rc;
}

int bpe_add_pre_tokenizer(Bpe *b, const BpePreTokenizer *p, AttnErr *err)
{
    BpePre *m = realloc(b->pre, (size_t)(b->n_pre + 1) * sizeof *m);
    if (!m)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    b->pre = m;
    int rc = bpe_pre_compile(&b->pre[b->n_pre], p, err);
    if (rc == 0)
        b->n_pre++;
    return rc;
}

void bpe_set_decode_none(Bpe *b, int id)
{
    if (id >= 0 && id < b->n_vocab)
        b->tok[id].decode_none = 1;
}

int bpe_set_template(Bpe *b, const int *before, int n_before, const int *after, int n_after,
                     AttnErr *err)
{
    if (n_before < 0 || n_after < 0 || n_before + n_after > 1024)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "the template has %d ids",
                            n_before + n_after);
    for (int i = 0; i < n_before + n_after; i++) {
        long id = i < n_before ? before[i] : after[i - n_before];
        if (id < 0 || id >= BPE_MAX_VOCAB)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "template id %ld is outside 0 to %d", id, BPE_MAX_VOCAB - 1);
    }
    int *t = n_before + n_after ? malloc((size_t)(n_before + n_after) * sizeof *t) : NULL;
    if (n_before + n_after && !t)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    if (n_before)
        memcpy(t, before, (size_t)n_before * sizeof *t);
    if (n_after)
        memcpy(t + n_before, after, (size_t)n_after * sizeof *t);
    free(b->tmpl);
    b->tmpl = t;
    b->n_before = n_before;
    b->n_after = n_after;
    return 0;
}

const int *bpe_template_before(const Bpe *b, int *n)
{
    *n = b->n_before;
    return b->n_before ? b->tmpl : NULL;
}

const int *bpe_template_after(const Bpe *b, int *n)
{
    *n = b->n_after;
    return b->n_after ? b->tmpl + b->n_before : NULL;
}

/* ---- the vocabulary ------------------------------------------------------------ */

int bpe_n_vocab(const Bpe *b) { return b->n_vocab; }
int bpe_n_merges(const Bpe *b) { return b->n_merges; }

int bpe_token_id(const Bpe *b, const char *text, size_t len)
{
    for (int i = 0; i < b->n_added; i++)
        if (b->added[i].len == len && memcmp(b->arena + b->added[i].off, text, len) == 0)
            return b->added[i].id;
    return bpe_vocab_find(b, text, len);
}

int bpe_is_special(const Bpe *b, int id)
{
    return id >= 0 && id < b->n_vocab && b->tok[id].added >= 0 &&
           (b->added[b->tok[id].added].flags & BPE_ADDED_SPECIAL);
}

const char *bpe_token_bytes(const Bpe *b, int id, size_t *len)
{
    *len = 0;
    if (id < 0 || id >= b->n_vocab)
        return NULL;
    const TokenRec *t = &b->tok[id];
    if (t->added >= 0) { /* normalized: as normalized, as Hugging Face decodes it */
        *len = b->added[t->added].mlen;
        return b->arena + b->added[t->added].moff;
    }
    if (!t->in_vocab)
        return NULL;
    *len = t->raw_len;
    return b->arena + t->raw_off;
}

/* Appends n bytes to out (cap bytes) at *o, counting past the end. */
static void put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
    if (*o < cap)
        memcpy(out + *o, s, *o + n < cap ? n : cap - *o);
    *o += n;
}

size_t bpe_token_text(const Bpe *b, int id, const char *space_mark, char *out, size_t cap)
{
    size_t len, o = 0;
    const unsigned char *s = (const unsigned char *)bpe_token_bytes(b, id, &len);
    for (size_t i = 0; s && i < len;) {
        int n = s[i] ? tok_utf8_len(s + i, len - i) : 0;
        if (s[i] == ' ' && space_mark) {
            put(out, cap, &o, space_mark, strlen(space_mark));
        } else if (n > 0) {
            put(out, cap, &o, (const char *)s + i, (size_t)n);
            i += (size_t)n;
            continue;
        } else {
            char hex[16];
            snprintf(hex, sizeof hex, "\xE2\x80\xB9" "0x%02X" "\xE2\x80\xBA", s[i]);
            put(out, cap, &o, hex, strlen(hex));
        }
        i++;
    }
    if (cap)
        out[o < cap ? o : cap - 1] = '\0';
    return o;
}

/* llama.cpp's clean_up_tokenization_spaces over s[0..n) in place (its
 * detokenize's three passes, byte by byte); the new length. */
static size_t clean_spaces(char *s, size_t n)
{
    size_t t = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) { /* " ?", " !", " .", " ," */
        char x = s[i];
        if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ','))
            t--;
        s[t++] = x;
    }
    n = t;
    t = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) { /* " ' " */
        char x = s[i];
        if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') {
            t--;
            s[++i] = '\0';
        }
        s[t++] = x;
    }
    n = t;
    t = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) { /* " 's", " 'm", " 're", " 've" */
        char x = s[i];
        if (s[i - 1] == ' ' && x == '\'' && i + 1 < n) {
            char x1 = s[i + 1];
            if (x1 == 's' || x1 == 'm')
                t--;
            else if (i + 2 < n && ((x1 == 'r' && s[i + 2] == 'e') || (x1 == 'v' && s[i + 2] == 'e')))
                t--;
        }
        s[t++] = x;
    }
    return t;
}

/* bpe_decode as llama_detokenize(ids, remove_special false, unparse_special
 * = !skip_special): control tokens (added, special) give nothing when
 * skip_special; the first token's piece loses one leading space when
 * decode_strip; then the clean-up when decode_clean. */
static int decode_llama(const Bpe *b, const int *ids, int n, int skip_special, char **out,
                        size_t *len)
{
    size_t total = 0, l;
    for (int i = 0; i < n; i++)
        if (bpe_token_bytes(b, ids[i], &l))
            total += l;
    char *s = malloc(total + 1);
    if (!s)
        return -ATTN_E_NOMEM;
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        const char *t = bpe_token_bytes(b, ids[i], &l);
        if (!t || (skip_special && bpe_is_special(b, ids[i])) ||
            (ids[i] >= 0 && ids[i] < b->n_vocab && b->tok[ids[i]].decode_none))
            l = 0;
        if (i == 0 && b->opt.decode_strip && l && *t == ' ') {
            t++;
            l--;
        }
        if (l)
            memcpy(s + o, t, l);
        o += l;
    }
    if (b->opt.decode_clean)
        o = clean_spaces(s, o);
    s[o] = '\0';
    *out = s;
    *len = o;
    return 0;
}

/* The WordPiece decoder's cleanup of one token's text (t, n bytes) into
 * out, as tokenizers' decoders/wordpiece.rs replaces, in its order. */
static size_t wordpiece_cleanup(char *out, const char *t, size_t n)
{
    static const char *const from[] = {" .", " ?", " !", " ,", " ' ", " n't", " 'm", " do not",
                                       " 's", " 've", " 're"};
    static const char *const to[] = {".", "?", "!", ",", "'", "n't", "'m", " don't", "'s", "'ve",
                                     "'re"};
    memmove(out, t, n);
    for (size_t r = 0; r < sizeof from / sizeof from[0]; r++) {
        size_t fl = strlen(from[r]), tl = strlen(to[r]), o = 0;
        for (size_t i = 0; i < n;) /* every replacement shortens or keeps the length */
            if (n - i >= fl && memcmp(out + i, from[r], fl) == 0) {
                memmove(out + o, to[r], tl);
                o += tl;
                i += fl;
            } else {
                out[o++] = out[i++];
            }
        n = o;
    }
    return n;
}

/* The WordPiece decoder: tokens joined by spaces, a continuing one
 * (wp_prefix) without its prefix and space, each cleaned up. */
static int decode_wordpiece(const Bpe *b, const int *ids, int n, int skip_special, char **out,
                            size_t *len)
{
    size_t total = 0, l, pl = strlen(b->opt.wp_prefix);
    for (int i = 0; i < n; i++)
        if (bpe_token_bytes(b, ids[i], &l))
            total += l + 1;
    char *s = malloc(total + 1);
    if (!s)
        return -ATTN_E_NOMEM;
    size_t o = 0;
    int k = 0; /* tokens decoded so far */
    for (int i = 0; i < n; i++) {
        const char *t = bpe_token_bytes(b, ids[i], &l);
        if (!t || (skip_special && bpe_is_special(b, ids[i])))
            continue;
        size_t at = o;
        if (k++ > 0) {
            if (pl && l >= pl && memcmp(t, b->opt.wp_prefix, pl) == 0) {
                t += pl;
                l -= pl;
            } else {
                s[o++] = ' ';
            }
        }
        memcpy(s + o, t, l);
        o += l;
        if (b->opt.decode_clean)
            o = at + wordpiece_cleanup(s + at, s + at, o - at);
    }
    s[o] = '\0';
    *out = s;
    *len = o;
    return 0;
}

/* The first token's bytes as the Metaspace decoder gives them: a
 * vocabulary token's text with every '▁' dropped (a byte-fallback token and
 * an added token as bpe_token_bytes has them), into out (room for its
 * bytes); the length. */
static size_t metaspace_first(const Bpe *b, int id, char *out)
{
    size_t l;
    const char *t = bpe_token_bytes(b, id, &l);
    const TokenRec *r = &b->tok[id];
    const char *text = b->arena + r->text_off;
    if (r->added >= 0 || fallback_byte(text, r->text_len) >= 0) {
        memcpy(out, t, l);
        return l;
    }
    size_t o = 0;
    for (size_t i = 0; i < r->text_len;)
        if (r->text_len - i >= 3 && memcmp(text + i, "\xE2\x96\x81", 3) == 0)
            i += 3;
        else
            out[o++] = text[i++];
    return o;
}

int bpe_decode(const Bpe *b, const int *ids, int n, int skip_special, char **out, size_t *len)
{
    if (b->opt.decode_wordpiece)
        return decode_wordpiece(b, ids, n, skip_special, out, len);
    if (b->opt.decode_llama)
        return decode_llama(b, ids, n, skip_special, out, len);
    int ms = b->opt.decode_metaspace && b->opt.char_level; /* tokens as text */
    int strip = ms ? 0 : b->opt.decode_strip, first = 1;
    size_t total = 0, l;
    for (int i = 0; i < n; i++)
        if (!(skip_special && bpe_is_special(b, ids[i])) && bpe_token_bytes(b, ids[i], &l))
            total += l;
    char *s = malloc(total + 1);
    if (!s)
        return -ATTN_E_NOMEM;
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        const char *t = bpe_token_bytes(b, ids[i], &l);
        if (!t || (skip_special && bpe_is_special(b, ids[i])))
            continue;
        if (first && ms) {
            o += metaspace_first(b, ids[i], s + o);
            first = 0;
            continue;
        }
        first = 0;
        for (; strip > 0 && l > 0 && *t == ' '; strip--, t++, l--) {
        }
        if (l)
            strip = 0; /* only the joined text's start */
        memcpy(s + o, t, l);
        o += l;
    }
    s[o] = '\0';
    *out = s;
    *len = o;
    return 0;
}
