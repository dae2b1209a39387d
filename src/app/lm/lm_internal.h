/* An architecture's table (lm.h): its loader behind the functions lm.c
 * calls; the forward is the runtime's (runtime.h) with the table its
 * loader names. Each lm_*.c defines one. */
#ifndef ATTNVIZ_LM_INTERNAL_H
#define ATTNVIZ_LM_INTERNAL_H

#include "attnviz/lm.h"

struct LmArch {
    const char *types; /* the model_types it computes, comma-separated */
    /* the folder into lm: model, cfg, weights, rt_arch and info's own
     * parts (arch, bos_id, the scaling flags, embed_name); on error nothing
     * kept */
    int (*open)(Lm *lm, const char *dir, AttnErr *err);
    void (*close)(void *model);
};

extern const LmArch lm_gpt2;
extern const LmArch lm_llama;

#endif
