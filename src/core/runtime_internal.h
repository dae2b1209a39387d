/* What runtime.c and runtime_maps.c share inside the core: a map's rows
 * recomputed from queries and transposed keys (the forward's floats). */
#ifndef ATTNVIZ_RUNTIME_INTERNAL_H
#define ATTNVIZ_RUNTIME_INTERNAL_H

#include <stddef.h>

#include "attnviz/runtime.h"

/* A map's rows [i0, i1) of T into out (row stride ld): rows below done
 * from the queries (q: row 0's, q_step floats to the next position) and
 * the keys transposed (kt, d_head rows of ldk), the rest 0; h the head
 * (its relative position bias). */
void rt_map_rows(const RtAttn *a, int h, int done, const float *q, size_t q_step, const float *kt,
                 int ldk, int dh, int T, float *out, size_t ld, int i0, int i1);

/* Row i (T keys) of head h whose query is q and whose key-value head's
 * keys are kt (d_head rows of ldk), weighted into row: the keys it sees
 * from *j0 to *j1, the others before *j0 exactly 0 (row[*j1..T) not
 * written). The forward, the recomputed maps and the cross-attention all
 * compute rows here. */
void rt_weights_row(const RtAttn *a, int h, const float *q, const float *kt, int ldk, int dh,
                    int i, int T, float *row, int *j0, int *j1);
/* rt_forward's forward, for any state (an encoder-decoder's two). */
int rt_forward_plain(Rt *rt, const void *w, const int *ids, int T, const ForwardHooks *hooks,
                     AttnErr *err);

#endif
