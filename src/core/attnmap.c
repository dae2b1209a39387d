/* Attention maps as plain data (see attnmap.h): taking one map out of a
 * collection, and the names every writer and panel uses for what a map
 * holds and which head it shows. */
#include "attnviz/attnmap.h"

#include <stdio.h>

AttnMap attn_map_make(const float *v, int Tq, int Tk, const char *const *q_labels,
                      const char *const *k_labels, AttnMapKind kind)
{
    AttnMap m = {0};
    m.v = v;
    m.Tq = Tq;
    m.Tk = Tk;
    m.stride = Tk;
    m.q_labels = q_labels;
    m.k_labels = k_labels;
    m.kind = kind;
    m.n_layers = m.n_heads = 1;
    return m;
}

AttnMap attn_maps_get(const AttnMaps *ms, int layer, int head)
{
    AttnMap m = attn_map_make(NULL, ms->Tq, ms->Tk, ms->q_labels, ms->k_labels, ms->kind);
    m.causal = ms->causal;
    m.mask = ms->mask;
    m.layer = layer;
    m.head = head;
    m.n_layers = ms->L;
    m.n_heads = ms->H;
    if (ms->v && layer >= 0 && layer < ms->L && head >= 0 && head < ms->H)
        m.v = ms->v + ((size_t)layer * (size_t)ms->H + (size_t)head) * (size_t)ms->Tq * (size_t)ms->Tk;
    return m;
}

int attn_map_kind_diverging(AttnMapKind kind)
{
    return kind == ATTN_MAP_SCORES || kind == ATTN_MAP_LOGITS || kind == ATTN_MAP_DIFF;
}

const char *attn_map_kind_name(AttnMapKind kind)
{
    static const char *const names[ATTN_MAP_KIND_COUNT] = {"weights", "raw scores", "logits",
                                                          "norms", "difference", "target"};
    return kind >= 0 && kind < ATTN_MAP_KIND_COUNT ? names[kind] : "values";
}

const char *attn_map_kind_unit(AttnMapKind kind)
{
    static const char *const units[ATTN_MAP_KIND_COUNT] = {"weight", "score", "logit",
                                                          "norm", "difference", "target"};
    return kind >= 0 && kind < ATTN_MAP_KIND_COUNT ? units[kind] : "value";
}

void attn_head_label(int head, int n_heads, char *buf, size_t n)
{
    if (n_heads <= 1)
        snprintf(buf, n, "1 head");
    else if (head < 0 || head >= n_heads)
        snprintf(buf, n, "average of %d heads", n_heads);
    else
        snprintf(buf, n, "head %d of %d", head + 1, n_heads);
}
