/* A Hugging Face model folder's weights files, for the model reader
 * (model_file.c): model.safetensors, or
 * model.safetensors.index.json and every shard its weight_map names, mapped
 * read-only and parsed; a tensor found by name in any of them. The paths'
 * small helpers too. io only. */
#ifndef ATTNVIZ_IO_ST_FOLDER_H
#define ATTNVIZ_IO_ST_FOLDER_H

#include <stddef.h>

#include "attnviz/model_file.h"

typedef struct StFolder {
    int n;              /* safetensors files mapped */
    char **paths;       /* n: each file's path */
    void **maps;        /* their read-only mappings */
    size_t *lens;
    SafeTensors *st;    /* their headers */
} StFolder;

/* dir/name, malloc'd (NULL when out of memory). */
char *io_path_join(const char *dir, const char *name);
/* 1 when dir/name is a regular file (symlinks followed, as the cache's). */
int io_has_file(const char *dir, const char *name);
/* "ORG/NAME" when dir lies in a hub cache's models--ORG--NAME, else a
 * placeholder: for the download command in messages. */
void hf_hub_name(const char *dir, char *buf, size_t n);

/* 0 when dir is a folder; -ATTN_E_NOT_FOUND when none is given or it does
 * not exist, -ATTN_E_IO for another kind of file (files: what a model
 * folder holds, for the message). */
int io_model_folder(const char *dir, const char *files, AttnErr *err);
/* dir's config.json, read whole (at most 1 MiB) into *text, its path into
 * *path (both malloc'd, also on error when made; the caller frees them);
 * none: -ATTN_E_NOT_FOUND saying what a model folder holds (files) and the
 * command that downloads it. */
int hf_config_read(const char *dir, const char *files, char **text, size_t *len, char **path,
                   AttnErr *err);
/* "[d0, d1, …]" into buf. */
void safetensors_shape_text(char *buf, size_t n, int ndim, const long long *dim);
/* 1 when t can be used in place as float32: F32, aligned to a float, on a
 * little-endian host. */
int safetensors_f32_in_place(const SafeTensor *t);

/* dir's model.safetensors, else its index and the shards it names (a
 * shard missing from the folder: -ATTN_E_NOT_FOUND naming it; an index
 * that is not JSON: -ATTN_E_PARSE naming it; a tensor in two shards
 * refused), else an error saying what the folder has instead. *where
 * (malloc'd, even on error when it could be made) names the weights in
 * later messages. On error what was opened stays in f for
 * st_folder_close. */
int st_folder_open(StFolder *f, const char *dir, char **where, AttnErr *err);
/* The tensor called name in any file (and that file's path), or NULL. */
const SafeTensor *st_folder_find(const StFolder *f, const char *name, const char **file);
/* Unmaps and frees what f holds, zeroing it. */
void st_folder_close(StFolder *f);

#endif
