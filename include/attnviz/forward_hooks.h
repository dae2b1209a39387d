/* What a model's forward pass (core/runtime.c, every architecture) calls,
 * each may be NULL: cancel before each layer (nonzero stops the forward with
 * -ATTN_E_CANCELLED), layer_done after each (the layer's maps, queries,
 * keys and values are then those of the new ids for every position: the
 * caller reads them from the state it passed), row with each row of
 * weights as the forward makes it (query i of head in layer: w[0..n) the
 * weights of keys 0..n−1, every later key 0; only the rows the forward
 * computes, from the first changed position on). row is called from both
 * threads at once, for different heads: it may write only what is that
 * row's own. One type for every architecture, so lm.h hands its caller's
 * hooks through unchanged. */
#ifndef ATTNVIZ_FORWARD_HOOKS_H
#define ATTNVIZ_FORWARD_HOOKS_H

typedef struct ForwardHooks {
    int (*cancel)(void *user);
    void (*layer_done)(void *user, int layer);
    void *user;
    void (*row)(void *user, int layer, int head, int i, const float *w, int n);
} ForwardHooks;

#endif
