/* Encoding with a built Bpe: added tokens cut out (leftmost-longest, before
 * and after the normalizer), the pre-tokenizer's pieces (GPT-2's split by
 * bpe_split.c, the other steps by bpe_pre.c), each piece merged by rank
 * through a heap of candidate pairs (lowest rank first, leftmost among
 * equals) over bytes or characters (byte fallback, unk), the template's
 * ids around. Not the building or the display (bpe.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/bpe.h"
#include "attnviz/tokenizer.h"
#include "bpe_internal.h"
#include "bpe_split.h"

/* ---- encoding ---------------------------------------------------------------------- */

typedef struct Sym {
    int id, prev, next; /* next -1: the last; id -1: merged into its left */
} Sym;

typedef struct Cand {
    int rank, left, right; /* the pair sym[left], sym[right] */
    int a, c, id;          /* their ids then, and the merged token's */
} Cand;

/* What one bpe_encode call allocates: the pieces' symbols and candidate
 * heap, a scratch copy for a piece given a prefix space. */
typedef struct Work {
    const Bpe *b;
    BpeIds *out;
    Sym *sym;
    Cand *heap;
    size_t cap_sym, n_heap;
    char *scratch;
    size_t cap_scratch;
    BpePreWork pre;
    struct Lattice *lat;  /* Unigram: the best path ending at each byte, cap_lat of them */
    size_t cap_lat;
    int failed;
    /* Unigram without an unk_id: the first character no piece covers (its
     * UTF-8, NUL-terminated; "" none), which Hugging Face's tokenizers
     * refuses ("Encountered an unknown token but `unk_id` is missing"):
     * its length first (0: none), then its UTF-8 */
    char unknown[8];
} Work;

static int push_id(Work *w, int id)
{
    BpeIds *o = w->out;
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 64;
        int *p = realloc(o->id, (size_t)cap * sizeof *p);
        if (!p) {
            w->failed = 1;
            return -1;
        }
        o->id = p;
        o->cap = cap;
    }
    o->id[o->n++] = id;
    return 0;
}

static int cand_less(const Cand *x, const Cand *y)
{
    return x->rank < y->rank || (x->rank == y->rank && x->left < y->left);
}

/* The pair sym[left], sym[right] onto the heap when a merge joins it. */
static void push_pair(Work *w, int left, int right)
{
    const MergeSlot *m = bpe_merge_find(w->b, w->sym[left].id, w->sym[right].id);
    if (!m)
        return;
    Cand c = {m->rank, left, right, w->sym[left].id, w->sym[right].id, m->id};
    size_t i = w->n_heap++;
    while (i > 0 && cand_less(&c, &w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = c;
}

static Cand pop_pair(Work *w)
{
    Cand top = w->heap[0], last = w->heap[--w->n_heap];
    size_t i = 0, n = w->n_heap;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= n)
            break;
        if (k + 1 < n && cand_less(&w->heap[k + 1], &w->heap[k]))
            k++;
        if (!cand_less(&w->heap[k], &last))
            break;
        w->heap[i] = w->heap[k];
        i = k;
    }
    if (n)
        w->heap[i] = last;
    return top;
}

/* Room for a piece of n bytes: n symbols and 3n candidates (n - 1 at
 * first, at most two more per merge). */
static int reserve_piece(Work *w, size_t n)
{
    if (n <= w->cap_sym)
        return 0;
    size_t cap = w->cap_sym ? w->cap_sym : 64;
    while (cap < n)
        cap *= 2;
    free(w->sym);
    free(w->heap);
    w->sym = malloc(cap * sizeof *w->sym);
    w->heap = malloc(3 * cap * sizeof *w->heap);
    w->cap_sym = w->sym && w->heap ? cap : 0;
    if (!w->cap_sym)
        w->failed = 1;
    return w->cap_sym ? 0 : -1;
}

/* A piece's whole byte-level text in the vocabulary (ignore_merges): its id, or -1. */
static int whole_piece(Work *w, const unsigned char *s, size_t n)
{
    char buf[2 * 256];
    if (n > sizeof buf / 2)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        o += (size_t)bpe_byte_char(s[i], buf + o);
    return bpe_vocab_find(w->b, buf, o);
}

static void merge_syms(Work *w, int ns);

static void add_sym(Sym *sym, int *ns, int id)
{
    sym[*ns] = (Sym){id, *ns - 1, *ns + 1};
    (*ns)++;
}

/* One piece (n bytes): its bytes' tokens, merged by rank, onto out. */
static void encode_piece(Work *w, const unsigned char *s, size_t n)
{
    const Bpe *b = w->b;
    int whole = b->opt.ignore_merges ? whole_piece(w, s, n) : -1;
    if (whole >= 0 || reserve_piece(w, 2 * n) < 0) {
        if (whole >= 0)
            push_id(w, whole);
        return;
    }
    Sym *sym = w->sym;
    int ns = 0;
    for (size_t i = 0; i < n; i++) {
        int id = b->byte_id[s[i]];
        if (id < 0 && b->opt.byte_fallback) {
            char c[2];
            int k = bpe_byte_char(s[i], c), ok = 1;
            for (int j = 0; j < k; j++)
                ok &= b->byte_fb[(unsigned char)c[j]] >= 0;
            for (int j = 0; ok && j < k; j++, ns++)
                sym[ns] = (Sym){b->byte_fb[(unsigned char)c[j]], ns - 1, ns + 1};
            if (ok)
                continue;
        }
        if (id < 0) {
            if (!b->opt.has_unk)
                continue; /* no token and no unk: the byte is dropped, as Hugging Face does */
            id = b->opt.unk_id;
            if (b->opt.fuse_unk && ns > 0 && sym[ns - 1].id == id && b->byte_id[s[i - 1]] < 0)
                continue;
        }
        sym[ns] = (Sym){id, ns - 1, ns + 1};
        ns++;
    }
    merge_syms(w, ns);
}

/* Merges sym[0..ns) by rank and pushes the tokens left. */
static void merge_syms(Work *w, int ns)
{
    Sym *sym = w->sym;
    if (!ns)
        return;
    sym[ns - 1].next = -1;
    w->n_heap = 0;
    for (int i = 0; i + 1 < ns; i++)
        push_pair(w, i, i + 1);
    while (w->n_heap) {
        Cand c = pop_pair(w);
        Sym *l = &sym[c.left], *r = &sym[c.right];
        if (l->id != c.a || l->next != c.right || r->id != c.c)
            continue; /* a side was merged since */
        l->id = c.id;
        l->next = r->next;
        if (r->next >= 0)
            sym[r->next].prev = c.left;
        r->id = -1;
        if (l->prev >= 0)
            push_pair(w, l->prev, c.left);
        if (l->next >= 0)
            push_pair(w, c.left, l->next);
    }
    for (int i = 0; i >= 0; i = sym[i].next)
        push_id(w, sym[i].id);
}

/* A character's length by its first byte alone, as llama.cpp's
 * unicode_len_utf8 gives it (at most avail). */
static int lead_len(unsigned char c, size_t avail)
{
    int k = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    return (size_t)k < avail ? k : (int)avail;
}

/* One char_level piece (n bytes of UTF-8): its characters' tokens (a
 * character without one: its bytes' <0xNN> tokens with byte_fallback, else
 * unk, fused with fuse_unk), merged by rank, onto out. As Hugging Face's
 * BPE::merge_word, a pending unk is added after byte-fallback tokens that
 * follow it. */
static void encode_chars(Work *w, const char *s, size_t n)
{
    const Bpe *b = w->b;
    int whole = b->opt.ignore_merges ? bpe_vocab_find(b, s, n) : -1;
    if (whole >= 0 || reserve_piece(w, n) < 0) {
        if (whole >= 0)
            push_id(w, whole);
        return;
    }
    Sym *sym = w->sym;
    int ns = 0, unk = 0;
    for (size_t i = 0; i < n;) {
        int k = b->opt.raw_text ? lead_len((unsigned char)s[i], n - i)
                                : tok_utf8_len((const unsigned char *)s + i, n - i);
        if (k <= 0)
            k = 1;
        int id = bpe_vocab_find(b, s + i, (size_t)k), ok = b->opt.byte_fallback;
        if (id >= 0) {
            if (unk)
                add_sym(sym, &ns, b->opt.unk_id);
            unk = 0;
            add_sym(sym, &ns, id);
        } else {
            for (int j = 0; ok && j < k; j++)
                ok = b->byte_fb[(unsigned char)s[i + (size_t)j]] >= 0;
            for (int j = 0; ok && j < k; j++, ns++)
                sym[ns] = (Sym){b->byte_fb[(unsigned char)s[i + (size_t)j]], ns - 1, ns + 1};
            if (!ok && b->opt.has_unk) {
                if (unk && !b->opt.fuse_unk)
                    add_sym(sym, &ns, b->opt.unk_id);
                unk = 1;
            }
        }
        i += (size_t)k;
    }
    if (unk)
        add_sym(sym, &ns, b->opt.unk_id);
    merge_syms(w, ns);
}

/* One WordPiece piece (n bytes of UTF-8), as tokenizers' models/wordpiece:
 * from each start the longest vocabulary token (after the first,
 * wp_prefix + the text), shorter by a character at a time; a start where
 * none is found, or a piece of more than wp_max_chars characters, makes the
 * whole piece one unk. */
static void encode_wordpiece(Work *w, const char *s, size_t n)
{
    const Bpe *b = w->b;
    size_t pl = strlen(b->opt.wp_prefix), chars = 0;
    for (size_t i = 0; i < n; i++)
        chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    int first = w->out->n;
    if (b->opt.wp_max_chars > 0 && chars > (size_t)b->opt.wp_max_chars)
        goto unknown;
    if (w->cap_scratch < pl + n + 1) {
        free(w->scratch);
        w->cap_scratch = 2 * (pl + n) + 1;
        if (!(w->scratch = malloc(w->cap_scratch))) {
            w->cap_scratch = 0;
            w->failed = 1;
            return;
        }
    }
    memcpy(w->scratch, b->opt.wp_prefix, pl);
    for (size_t start = 0; start < n;) {
        size_t end = n;
        int id = -1;
        while (end > start) {
            if (start == 0) {
                id = bpe_vocab_find(b, s, end);
            } else {
                memcpy(w->scratch + pl, s + start, end - start);
                id = bpe_vocab_find(b, w->scratch, pl + end - start);
            }
            if (id >= 0)
                break;
            do /* one character shorter */
                end--;
            while (end > start && ((unsigned char)s[end] & 0xC0) == 0x80);
        }
        if (id < 0)
            goto unknown;
        if (push_id(w, id) < 0)
            return;
        start = end;
    }
    return;
unknown:
    w->out->n = first;
    if (b->opt.has_unk)
        push_id(w, b->opt.unk_id);
}

/* ---- Unigram ------------------------------------------------------------------------ */

/* The best path found so far that ends at a byte: its score, where its last
 * token starts (-1: none yet) and that token (UNK: an unknown character). */
typedef struct Lattice {
    double score;
    long start;
    int id;
} Lattice;

#define UNK (-2)

/* The best path to `from` and then token id (score s) up to `end` replaces
 * the best one ending there only when strictly better: the first found wins
 * a tie, as in tokenizers' encode_optimized. */
static void relax(Lattice *lat, size_t from, size_t end, double s, int id)
{
    double score = s + lat[from].score;
    if (lat[end].start < 0 || score > lat[end].score)
        lat[end] = (Lattice){score, (long)from, id};
}

/* The tokens of text[start, end) that the Viterbi path fused: an unknown
 * run's text is looked up whole (as tokenizers' tokenize), then its bytes'
 * <0xNN> tokens (byte_fallback, all or none), then unk. */
static void push_unknown(Work *w, const char *s, size_t start, size_t end)
{
    const Bpe *b = w->b;
    int id = bpe_vocab_find(b, s + start, end - start), ok = b->opt.byte_fallback;
    if (id >= 0) {
        push_id(w, id);
        return;
    }
    for (size_t i = start; ok && i < end; i++)
        ok = b->byte_fb[(unsigned char)s[i]] >= 0;
    for (size_t i = start; ok && i < end; i++)
        push_id(w, b->byte_fb[(unsigned char)s[i]]);
    if (!ok && b->opt.has_unk)
        push_id(w, b->opt.unk_id);
}

/* One Unigram piece (n bytes of UTF-8): pass 1 finds, for each character
 * boundary left to right, every vocabulary token starting there (shortest
 * first, while the text read is some token's prefix) and an unknown for a
 * character no one-character token covers; pass 2 walks the best path back
 * from the end, fusing unknowns, and pushes its tokens in order. */
static void encode_unigram(Work *w, const char *s, size_t n)
{
    const Bpe *b = w->b;
    if (w->cap_lat < 2 * (n + 1)) {
        free(w->lat);
        w->cap_lat = 4 * n + 64;
        if (!(w->lat = malloc(w->cap_lat * sizeof *w->lat))) {
            w->cap_lat = 0;
            w->failed = 1;
            return;
        }
    }
    Lattice *lat = w->lat;
    /* no piece at all: every character unknown (bpe_add_token's tokens are not pieces) */
    double unk_score = (b->cap_score ? b->min_score : 0.0) - 10.0;
    for (size_t i = 0; i <= n; i++)
        lat[i] = (Lattice){0.0, -1, 0};
    /* pass 1 */
    for (size_t i = 0; i < n;) {
        int mblen = tok_utf8_len((const unsigned char *)s + i, n - i), single = 0;
        if (mblen <= 0)
            mblen = 1;
        uint64_t h = BPE_FNV_START;
        for (size_t j = i; j < n;) {
            int k = tok_utf8_len((const unsigned char *)s + j, n - j);
            if (k <= 0)
                k = 1;
            h = bpe_fnv(h, s + j, (size_t)k);
            j += (size_t)k;
            if (!bpe_prefix_has(b, bpe_prefix_key(h)))
                break;
            int id = bpe_vocab_find(b, s + i, j - i);
            if (id < 0)
                continue;
            relax(lat, i, j, id < b->cap_score ? b->score[id] : 0.0, id);
            single |= j - i == (size_t)mblen;
        }
        if (!single && !b->opt.has_unk && !w->unknown[0] && (size_t)mblen < sizeof w->unknown - 1) {
            w->unknown[0] = (char)mblen;
            memcpy(w->unknown + 1, s + i, (size_t)mblen);
        }
        if (!single)
            relax(lat, i, i + (size_t)mblen, unk_score, b->opt.has_unk ? b->opt.unk_id : UNK);
        i += (size_t)mblen;
    }
    /* pass 2: the path's tokens, last first, in the second half (start,
     * id, and the end in the score field) */
    Lattice *path = lat + n + 1;
    size_t n_tok = 0;
    for (long end = (long)n; end > 0; end = lat[end].start) {
        int id = lat[end].id;
        int unk = id == UNK || (b->opt.has_unk && id == b->opt.unk_id);
        if (unk && n_tok && path[n_tok - 1].id == UNK)
            path[n_tok - 1].start = lat[end].start; /* fused: the run starts here now */
        else
            path[n_tok++] = (Lattice){(double)end, lat[end].start, unk ? UNK : id};
    }
    for (size_t k = n_tok; k-- > 0;) {
        if (path[k].id == UNK)
            push_unknown(w, s, (size_t)path[k].start, (size_t)path[k].score);
        else
            push_id(w, path[k].id);
    }
}

/* Text without added tokens: the pre-tokenizer's pieces, each merged; with
 * no pre-tokenizer step, GPT-2's pattern's pieces (after a prefix space
 * when the options ask for one), or for char_level the text as one piece. */
static void encode_plain(Work *w, const char *text, size_t len, int at_start)
{
    const Bpe *b = w->b;
    if (!len)
        return;
    if (b->n_pre) {
        const BpePieces *p = bpe_pre_run(&w->pre, b->pre, b->n_pre, text, len, at_start);
        if (!p) {
            w->failed = 1;
            return;
        }
        for (int i = 0; i < p->n && !w->failed; i++) {
            if (b->opt.unigram)
                encode_unigram(w, p->buf + p->off[i], p->len[i]);
            else if (b->opt.wordpiece)
                encode_wordpiece(w, p->buf + p->off[i], p->len[i]);
            else if (b->opt.char_level)
                encode_chars(w, p->buf + p->off[i], p->len[i]);
            else
                encode_piece(w, (const unsigned char *)p->buf + p->off[i], p->len[i]);
        }
        return;
    }
    if (b->opt.unigram) {
        encode_unigram(w, text, len);
        return;
    }
    if (b->opt.wordpiece) {
        encode_wordpiece(w, text, len);
        return;
    }
    if (b->opt.char_level) {
        encode_chars(w, text, len);
        return;
    }
    if (w->b->opt.add_prefix_space && text[0] != ' ') {
        if (w->cap_scratch < len + 1) {
            free(w->scratch);
            w->cap_scratch = 2 * len + 1;
            w->scratch = malloc(w->cap_scratch);
            if (!w->scratch) {
                w->cap_scratch = 0;
                w->failed = 1;
                return;
            }
        }
        w->scratch[0] = ' ';
        memcpy(w->scratch + 1, text, len);
        text = w->scratch;
        len++;
    }
    if (w->b->opt.no_regex) {
        encode_piece(w, (const unsigned char *)text, len);
        return;
    }
    for (size_t pos = 0; pos < len && !w->failed;) {
        size_t end = bpe_split_next(text, len, pos);
        encode_piece(w, (const unsigned char *)text + pos, end - pos);
        pos = end;
    }
}

/* The first added token of the pass at or after pos (leftmost, then
 * longest): its index, with *start and *stop its extent (lstrip and rstrip
 * applied, never before from); -1 when none. A single_word token with a
 * word character beside it is passed over with the text it matched, as
 * Hugging Face's leftmost-longest search passes it. */
static int find_added(const Bpe *b, int pass, const char *t, size_t len, size_t from, size_t pos,
                      size_t *start, size_t *stop)
{
    while (pos < len) {
        unsigned char c = (unsigned char)t[pos];
        const Added *a = NULL;
        for (int i = b->added_at[c]; i < b->added_at[c + 1] && !a; i++)
            if (!!(b->added[i].flags & BPE_ADDED_NORMALIZED) == pass &&
                b->added[i].mlen <= len - pos &&
                memcmp(t + pos, b->arena + b->added[i].moff, b->added[i].mlen) == 0)
                a = &b->added[i];
        if (!a) {
            pos++;
            continue;
        }
        size_t end = pos + a->mlen;
        if ((a->flags & BPE_ADDED_SINGLE_WORD) &&
            (bpe_word_before(t, pos) || bpe_word_after(t, len, end))) {
            pos = end;
            continue;
        }
        *start = a->flags & BPE_ADDED_LSTRIP ? bpe_space_before(t, from, pos) : pos;
        *stop = a->flags & BPE_ADDED_RSTRIP ? bpe_space_after(t, len, end) : end;
        return (int)(a - b->added);
    }
    return -1;
}

static void encode_added(Work *w, int pass, const char *text, size_t len, int at_start);

/* The first occurrence of needle (n > 0 bytes) in text[0..len), or NULL. */
static const char *find_bytes(const char *text, size_t len, const char *needle, size_t n)
{
    for (size_t i = 0; i + n <= len; i++)
        if (text[i] == needle[0] && memcmp(text + i, needle, n) == 0)
            return text + i;
    return NULL;
}

static int ascii_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* llama.cpp's tokenizer_st_partition: added token k of added_by_len (the
 * longest first) is cut out of text wherever it occurs, left to right, the
 * text between going on to token k + 1; what no added token takes is
 * plain text (pass 1). */
static void partition_llama(Work *w, const char *text, size_t len, int k)
{
    const Bpe *b = w->b;
    while (len && !w->failed) {
        if (k == b->n_added) {
            encode_added(w, 1, text, len, 0);
            return;
        }
        int id = b->added_by_len[k];
        const Added *a = &b->added[b->tok[id].added];
        const char *m = find_bytes(text, len, b->arena + a->off, a->len);
        if (!m) {
            k++;
            continue;
        }
        size_t left = (size_t)(m - text), right = left + a->len;
        if (a->flags & BPE_ADDED_LSTRIP)
            while (left > 0 && ascii_space(text[left - 1]))
                left--;
        partition_llama(w, text, left, k + 1);
        push_id(w, a->id);
        if (a->flags & BPE_ADDED_RSTRIP)
            while (right < len && ascii_space(text[right]))
                right++;
        text += right;
        len -= right;
    }
}

/* Pass 0 cuts out the added tokens matched as they are; pass 1 normalizes
 * each text pass 0 left and cuts out those matched after normalization;
 * the rest is plain text. at_start: text starts where the whole text
 * starts (Metaspace's prepend_scheme "first"). */
static void encode_added(Work *w, int pass, const char *text, size_t len, int at_start)
{
    const Bpe *b = w->b;
    char *norm = NULL;
    if (!len || w->failed)
        return;
    if (pass == 1 && b->n_norm) {
        size_t n;
        if (bpe_normalize(b->norm, b->n_norm, text, len, &norm, &n) < 0) {
            w->failed = 1;
            return;
        }
        text = norm;
        len = n;
    }
    if (pass == 2) {
        encode_plain(w, text, len, at_start);
    } else if (pass == 0 && b->opt.added_longest_first) {
        partition_llama(w, text, len, 0);
    } else if (!b->n_added) {
        encode_added(w, pass + 1, text, len, at_start);
    } else {
        size_t from = 0, start, stop;
        int i;
        while (!w->failed && (i = find_added(b, pass, text, len, from, from, &start, &stop)) >= 0) {
            encode_added(w, pass + 1, text + from, start - from, at_start && from == 0);
            push_id(w, b->added[i].id);
            from = stop;
        }
        encode_added(w, pass + 1, text + from, len - from, at_start && from == 0);
    }
    free(norm);
}

/* bpe_encode's work; unknown (8 bytes) gets Work.unknown. */
static int encode_text(const Bpe *b, const char *text, size_t len, BpeIds *out, char *unknown)
{
    Work w = {.b = b, .out = out};
    int n0 = out->n;
    char *clean = malloc(3 * len + 1);
    if (!clean)
        return -ATTN_E_NOMEM;
    size_t n = b->opt.raw_text ? len : bpe_utf8_clean(clean, text, len);
    if (b->opt.raw_text && len)
        memcpy(clean, text, len);
    encode_added(&w, 0, clean, n, 1);
    free(clean);
    free(w.sym);
    free(w.heap);
    free(w.scratch);
    free(w.lat);
    bpe_pre_work_free(&w.pre);
    memcpy(unknown, w.unknown, sizeof w.unknown);
    if (w.failed) {
        out->n = n0;
        return -ATTN_E_NOMEM;
    }
    return 0;
}

int bpe_encode(const Bpe *b, const char *text, size_t len, BpeIds *out)
{
    char unknown[8];
    return encode_text(b, text, len, out, unknown);
}

/* bpe_encode_template's work; unknown (8 bytes) gets Work.unknown. */
static int template_ids(const Bpe *b, const char *text, size_t len, BpeIds *out, char *unknown)
{
    int n0 = out->n, n = b->n_before + b->n_after;
    if (out->cap - out->n < n) {
        int cap = out->n + n + 64;
        int *p = realloc(out->id, (size_t)cap * sizeof *p);
        if (!p)
            return -ATTN_E_NOMEM;
        out->id = p;
        out->cap = cap;
    }
    for (int i = 0; i < b->n_before; i++)
        out->id[out->n++] = b->tmpl[i];
    if (encode_text(b, text, len, out, unknown) < 0) {
        out->n = n0;
        return -ATTN_E_NOMEM;
    }
    if (out->cap - out->n < b->n_after) {
        int cap = out->n + b->n_after;
        int *p = realloc(out->id, (size_t)cap * sizeof *p);
        if (!p) {
            out->n = n0;
            return -ATTN_E_NOMEM;
        }
        out->id = p;
        out->cap = cap;
    }
    for (int i = 0; i < b->n_after; i++)
        out->id[out->n++] = b->tmpl[b->n_before + i];
    return 0;
}

int bpe_encode_template(const Bpe *b, const char *text, size_t len, BpeIds *out)
{
    char unknown[8];
    return template_ids(b, text, len, out, unknown);
}

int bpe_encode_checked(const Bpe *b, const char *text, size_t len, BpeIds *out, AttnErr *err)
{
    char u[8] = "";
    int n0 = out->n;
    if (template_ids(b, text, len, out, u) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory encoding %zu bytes", len);
    if (!u[0])
        return 0;
    out->n = n0;
    unsigned cp = 0;
    tok_utf8_decode((const unsigned char *)u + 1, (size_t)u[0], &cp);
    u[1 + u[0]] = '\0';
    int shown = cp >= 0x20 && cp != 0x7F && !(cp >= 0x80 && cp < 0xA0);
    return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0,
                        "%s%s%sU+%04X has no piece in the Unigram vocabulary and tokenizer.json's "
                        "unk_id is null: Hugging Face's tokenizers refuses the text too "
                        "(\"Encountered an unknown token but `unk_id` is missing\")",
                        shown ? "\xE2\x80\x9C" : "", shown ? u + 1 : "", shown ? "\xE2\x80\x9D " : "",
                        cp);
}
