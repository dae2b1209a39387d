/* What a model's forward pass (core/runtime.c, every architecture) calls between
 * layers, each may be NULL: cancel before each layer (nonzero stops the
 * forward with -ATTN_E_CANCELLED), layer_done after each (the layer's maps,
 * queries, keys and values are then those of the new ids for every
 * position: the caller reads them from the state it passed). One type for
 * every architecture, so lm.h hands its caller's hooks through unchanged. */
#ifndef ATTNVIZ_FORWARD_HOOKS_H
#define ATTNVIZ_FORWARD_HOOKS_H

typedef struct ForwardHooks {
    int (*cancel)(void *user);
    void (*layer_done)(void *user, int layer);
    void *user;
} ForwardHooks;

#endif
