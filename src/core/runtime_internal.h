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

#endif
