/* What model_file.c and model_gguf.c share: a model's own storage and the
 * binding of its tensor table to the tensors found. io only. */
#ifndef ATTNVIZ_IO_MODEL_FILE_INTERNAL_H
#define ATTNVIZ_IO_MODEL_FILE_INTERNAL_H

#include <stdint.h>

#include "attnviz/model_file.h"
#include "st_folder.h"

struct ModelFileOwn {
    StFolder files;     /* the safetensors files mapped; a GGUF file: its one
                           mapping and its tensors under the table's names */
    float *conv;        /* the converted tensors, one block (or NULL) */
    RtMat *mats;        /* the matrices used in place, as stored (or NULL) */
    void *layers;       /* n_layer of the description's layer struct */
    void *enc_layers;   /* an encoder-decoder's encoder layers (or NULL) */
    struct Gguf *gguf;  /* a GGUF file's header (NULL: a folder) */
    const ArchGguf *gguf_row; /* and the row that reads it */
    int32_t *perms;     /* the row orders of its permuted matrices */
};

/* Every row of m->arch's tensor table found in m->own->files, checked and
 * bound into m->weights (where: the weights in messages). */
int model_file_bind(ModelFile *m, const char *where, AttnErr *err);
/* A GGUF model's tensor table_name (with its prefix) as the file names it
 * ("blk.3.attn_q.weight"), or table_name when no row names it. */
void model_gguf_name(const ModelFile *m, const char *table_name, char *buf, size_t n);

#endif
