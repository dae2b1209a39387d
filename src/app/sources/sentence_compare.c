/* The sentence source's part of the compare view: what made a map (the
 * settings, head, matrix, weights, the sentences, the edited word vectors)
 * and what differs between that and the model now, in words ("scaled vs
 * unscaled", "head 1 vs head 2", "edited Wq", …). */
#include "attnviz/app_state.h"
#include "attnviz/source.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What produced a map. The reference owns its copies (params, texts); the
 * current one borrows the model's. */
typedef struct CmpSnap {
    AttnConfig cfg;
    int causal;                 /* the mask in effect (model_causal) */
    int head, n_heads;
    AttnMapKind kind;
    AttnParams params;
    char *text, *keys_text;
    int n_over;                 /* edited word vectors */
    uint64_t over_hash;         /* of their words and numbers */
} CmpSnap;

/* ---- snapshots --------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++)
        h = (h ^ b[k]) * 1099511628211ULL;
    return h;
}

/* The model's state now, borrowing its arrays. */
static CmpSnap snap_of(const AppState *a, AttnMapKind kind)
{
    const Model *m = a->m;
    CmpSnap c;
    memset(&c, 0, sizeof c);
    c.cfg = m->cfg;
    c.causal = model_causal(m);
    c.head = a->vs.head;
    c.n_heads = m->res.h ? m->res.h : 1;
    c.kind = kind;
    c.params = m->params;
    c.text = m->text ? m->text : "";
    c.keys_text = m->keys_text ? m->keys_text : "";
    c.n_over = m->n_over;
    c.over_hash = 14695981039346656037ULL;
    for (int k = 0; k < m->n_over; k++) {
        c.over_hash = fnv(c.over_hash, m->over_word[k], strlen(m->over_word[k]) + 1);
        c.over_hash = fnv(c.over_hash, m->over_vec + (size_t)k * m->d, (size_t)m->d * sizeof(float));
    }
    return c;
}

static void snap_free(CmpSnap *c)
{
    attn_params_destroy(&c->params);
    free(c->text);
    free(c->keys_text);
    memset(c, 0, sizeof *c);
}

static const char *kind_word(AttnMapKind k)
{
    return k == ATTN_MAP_WEIGHTS ? "weights" : k == ATTN_MAP_SCORES ? "scores"
           : k == ATTN_MAP_LOGITS ? "logits" : attn_map_kind_name(k);
}

/* The weights matrices that differ: "edited Wq", … (same shape only: a
 * change of heads is said as such). */
static void params_diffs(SourceDiffs *d, const AttnParams *r, const AttnParams *c)
{
    static const char *const names[6] = {"Wq", "Wk", "Wv", "Wo", "v", "v"};
    if (r->d != c->d || r->h != c->h || r->dk != c->dk)
        return;
    size_t dd = (size_t)r->d * (size_t)r->d;
    const float *ra[6] = {r->Wq, r->Wk, r->Wv, r->Wo, r->v, r->vb};
    const float *ca[6] = {c->Wq, c->Wk, c->Wv, c->Wo, c->v, c->vb};
    size_t n[6] = {dd, dd, dd, dd, (size_t)r->h * (size_t)r->dk, (size_t)r->d};
    int said_v = 0;
    for (int k = 0; k < 6; k++) {
        if (!ra[k] || !ca[k] || memcmp(ra[k], ca[k], n[k] * sizeof(float)) == 0)
            continue;
        if (k >= 4 && said_v++)
            continue;
        char w[40], rb[40];
        snprintf(w, sizeof w, "edited %s", names[k]);
        snprintf(rb, sizeof rb, "%s as pinned", names[k]);
        source_diff_add(d, w, rb, w);
    }
}

static void what_differs(SourceDiffs *d, const CmpSnap *r, const CmpSnap *c)
{
    char a[80], b[80];
    if (strcmp(r->text, c->text) != 0 || strcmp(r->keys_text, c->keys_text) != 0)
        source_diff_add(d, "another sentence", "pinned sentence", "another sentence");
    if (r->kind != c->kind)
        source_diff_vs(d, kind_word(r->kind), kind_word(c->kind));
    if (r->cfg.mode != c->cfg.mode)
        source_diff_vs(d, r->cfg.mode == ATTN_MODE_BASIC ? "basic" : "learned",
               c->cfg.mode == ATTN_MODE_BASIC ? "basic" : "learned");
    if (r->cfg.score != c->cfg.score)
        source_diff_vs(d, attn_score_name(r->cfg.score), attn_score_name(c->cfg.score));
    if (!r->cfg.scale != !c->cfg.scale)
        source_diff_vs(d, r->cfg.scale ? "scaled" : "unscaled", c->cfg.scale ? "scaled" : "unscaled");
    if (r->causal != c->causal)
        source_diff_switch(d, "mask", r->causal, c->causal);
    if (!r->cfg.posenc != !c->cfg.posenc)
        source_diff_switch(d, "posenc", r->cfg.posenc, c->cfg.posenc);
    if (r->cfg.temperature != c->cfg.temperature) {
        int p = 2; /* enough decimals to tell them apart */
        do {
            snprintf(a, sizeof a, "\xCF\x84 %.*f", p, (double)r->cfg.temperature);
            snprintf(b, sizeof b, "\xCF\x84 %.*f", p, (double)c->cfg.temperature);
        } while (strcmp(a, b) == 0 && ++p < 9);
        source_diff_vs(d, a, b);
    }
    if (r->n_heads != c->n_heads) {
        snprintf(a, sizeof a, "%d head%s", r->n_heads, r->n_heads == 1 ? "" : "s");
        snprintf(b, sizeof b, "%d head%s", c->n_heads, c->n_heads == 1 ? "" : "s");
        source_diff_vs(d, a, b);
    }
    if (r->head != c->head) {
        source_head_word(r->head, a, sizeof a);
        source_head_word(c->head, b, sizeof b);
        source_diff_vs(d, a, b);
    }
    params_diffs(d, &r->params, &c->params);
    if (r->n_over != c->n_over || r->over_hash != c->over_hash)
        source_diff_add(d, "edited word vectors", "word vectors as pinned", "edited word vectors");
}


/* A copy of what made the shown map: the reference's own (params, texts). */
void *sentence_snap(const AppState *a)
{
    CmpSnap *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    CmpSnap now = snap_of(a, a->vs.map.kind);
    *c = now;
    c->params = (AttnParams){0};
    c->text = strdup(now.text);
    c->keys_text = strdup(now.keys_text);
    if (!c->text || !c->keys_text || attn_params_copy(&c->params, &a->m->params) < 0) {
        snap_free(c);
        free(c);
        return NULL;
    }
    return c;
}

void sentence_snap_free(void *snap)
{
    snap_free(snap);
    free(snap);
}

void sentence_snap_diff(const AppState *a, const void *ref, const AttnMap *map, SourceDiffs *d, char *base,
                        size_t n)
{
    const CmpSnap *r = ref;
    CmpSnap now = snap_of(a, map->kind);
    char hb[48];
    what_differs(d, r, &now);
    source_head_word(r->head, hb, sizeof hb);
    snprintf(base, n, "%s, %s", kind_word(r->kind), hb);
}
