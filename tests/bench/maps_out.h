/* The benches' full forwards make every map, as the PyTorch peers return
 * them: the rows handed over by the forward's row hook (forward_hooks.h)
 * into one L × H × T × T array. */
#ifndef ATTNVIZ_BENCH_MAPS_OUT_H
#define ATTNVIZ_BENCH_MAPS_OUT_H

#include <string.h>

#include "attnviz/forward_hooks.h"

/* Every map made as the forward makes its rows (the maps the peer returns):
 * row i of map (layer, head) of a T × T array, the keys after it 0. */
typedef struct MapsOut {
    float *maps;
    int H, T;
} MapsOut;

static inline void map_row(void *user, int layer, int head, int i, const float *w, int n)
{
    const MapsOut *o = user;
    float *row = o->maps + (((size_t)layer * o->H + head) * o->T + i) * o->T;
    memcpy(row, w, sizeof(float) * n);
    memset(row + n, 0, sizeof(float) * (size_t)(o->T - n));
}

#endif
