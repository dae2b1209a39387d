/* What a Gpt2Model owns behind its public fields, shared by gpt2_file.c (the
 * folder, the mappings) and gpt2_weights.c (tensors → Gpt2Weights). io only. */
#ifndef ATTNVIZ_IO_GPT2_OWN_H
#define ATTNVIZ_IO_GPT2_OWN_H

#include <stddef.h>

#include "attnviz/gpt2io.h"
#include "st_folder.h"

struct Gpt2ModelOwn {
    StFolder files;     /* the safetensors files, mapped */
    float *conv;        /* the converted tensors, one block (or NULL) */
    Gpt2Layer *layers;  /* cfg.n_layer */
};

/* m->cfg's weights from m->own's tables into m->weights (with prefix, tied,
 * n_converted, converted_bytes, own->conv, own->layers). where names the
 * weights in messages about a missing tensor (model.safetensors or the
 * index). On error what was made stays in m->own for the caller to free. */
int gpt2_weights_bind(Gpt2Model *m, const char *where, AttnErr *err);

#endif
