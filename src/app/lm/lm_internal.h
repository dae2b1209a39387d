/* An architecture's table (lm.h): its loader and forward behind the
 * functions lm.c calls. Each lm_*.c defines one. */
#ifndef ATTNVIZ_LM_INTERNAL_H
#define ATTNVIZ_LM_INTERNAL_H

#include "attnviz/lm.h"

struct LmArch {
    const char *types; /* the model_types it computes, comma-separated */
    /* model and state into lm (lm->info filled); on error nothing kept */
    int (*open)(Lm *lm, const char *dir, AttnErr *err);
    void (*close)(Lm *lm);
    int (*forward)(Lm *lm, const int *ids, int T, const LmHooks *hooks, AttnErr *err);
    void (*maps_copy)(const Lm *lm, float *out);
    const float *(*query)(const Lm *lm, int layer, int head, int i);
    const float *(*key)(const Lm *lm, int layer, int head, int j);
    int (*top_k)(Lm *lm, int pos, int k, int *ids, float *probs, AttnErr *err);
};

extern const LmArch lm_gpt2;
extern const LmArch lm_llama;

#endif
