/* Attention maps as plain data: a Tq×Tk matrix of numbers with its query
 * (row) and key (column) labels, which entries are masked and what the
 * numbers are. Whoever made a map (a Model's sentence, a file, a painted
 * target) owns the floats and the labels; a map only borrows them, so it
 * lives as long as its maker's last change. AttnMaps is L layers × H heads
 * of maps over the same tokens, laid out flat as (L, H, Tq, Tk), the way
 * llm.c keeps `att` as (L, B, NH, T, T).
 * Everything that draws or writes a map (heatmap, line diagram, colour bar,
 * tooltip, text/CSV printers, SVG) takes these, never a Model.
 * Plain C: no files, no screen. */
#ifndef ATTNVIZ_ATTNMAP_H
#define ATTNVIZ_ATTNMAP_H

#include <stddef.h>

/* What the numbers are. The first four match ModelMatrix. */
typedef enum AttnMapKind {
    ATTN_MAP_WEIGHTS = 0,  /* softmax weights α, rows sum to 1 */
    ATTN_MAP_SCORES = 1,   /* raw scores q·k */
    ATTN_MAP_LOGITS = 2,   /* scores · s / τ */
    ATTN_MAP_NORMS = 3,    /* value-weighted: α[i, j] · ‖v_j W_O,h‖, ≥ 0, rows not summing to 1 */
    ATTN_MAP_DIFF = 4,     /* a difference of two maps */
    ATTN_MAP_TARGET = 5,   /* a pattern painted as a target */
    ATTN_MAP_KIND_COUNT
} AttnMapKind;

#define ATTN_MAP_AVG (-1) /* head (or layer) of a mean over heads */

typedef struct AttnMap {
    const float *v;               /* Tq rows of Tk numbers, row i at v + i·stride */
    int Tq, Tk, stride;
    const char *const *q_labels;  /* Tq query tokens (rows) */
    const char *const *k_labels;  /* Tk key tokens (columns) */
    AttnMapKind kind;
    int causal;                   /* key j > query i is masked */
    const unsigned char *mask;    /* Tq×Tk, row stride Tk, 1 = masked; or NULL */
    int layer, head;              /* where it came from; ATTN_MAP_AVG = mean */
    int n_layers, n_heads;
} AttnMap;

/* L × H maps over the same tokens: map (l, h) starts at
 * v + ((l·H) + h)·Tq·Tk, rows of Tk numbers. */
typedef struct AttnMaps {
    const float *v;
    int L, H, Tq, Tk;
    const char *const *q_labels, *const *k_labels;
    AttnMapKind kind;
    int causal;
    const unsigned char *mask;    /* Tq×Tk, shared by every map; or NULL */
} AttnMaps;

/* A map over a plain Tq×Tk array (stride Tk), no mask. */
AttnMap attn_map_make(const float *v, int Tq, int Tk, const char *const *q_labels,
                      const char *const *k_labels, AttnMapKind kind);
/* Map (layer, head) of a collection; out of range gives a map with v NULL. */
AttnMap attn_maps_get(const AttnMaps *ms, int layer, int head);

static inline float attn_map_at(const AttnMap *m, int i, int j)
{
    return m->v[(size_t)i * (size_t)m->stride + (size_t)j];
}

/* The causal row length: keys [0, n) of query row i are not masked by the
 * causal mask (all Tk without it). The one place this rule is written. */
static inline int attn_causal_row_len(int causal, int i, int Tk)
{
    return causal && i + 1 < Tk ? i + 1 : Tk;
}

static inline int attn_map_masked(const AttnMap *m, int i, int j)
{
    return j >= attn_causal_row_len(m->causal, i, m->Tk) ||
           (m->mask && m->mask[(size_t)i * (size_t)m->Tk + (size_t)j]);
}

/* 1 when the numbers are centred on 0 (scores, logits, differences): they
 * get the diverging colour map. */
int attn_map_kind_diverging(AttnMapKind kind);
/* "weights", "raw scores", "logits", "norms", "difference", "target". */
const char *attn_map_kind_name(AttnMapKind kind);
/* The word on a colour bar: "weight", "score", "logit", "norm", "difference", "target". */
const char *attn_map_kind_unit(AttnMapKind kind);

/* The head label everywhere (printouts, SVG, PNG, window): "1 head",
 * "head 2 of 4", "average of 4 heads". */
void attn_head_label(int head, int n_heads, char *buf, size_t n);

#endif
