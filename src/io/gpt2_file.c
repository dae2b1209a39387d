/* A GPT-2 model folder opened and closed: config.json parsed,
 * model.safetensors (or the shards model.safetensors.index.json names) mapped
 * read-only, the weights bound (gpt2_weights.c), the tokenizer's files noted.
 * A pytorch_model.bin is never read (unpickling runs code). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnviz/io.h"
#include "gpt2_own.h"
#include "st_folder.h"

#define CONFIG_MAX (1L << 20) /* config.json */

/* vocab.json + merges.txt (both, or neither) and tokenizer.json. */
static int note_tokenizer(Gpt2Model *m, AttnErr *err)
{
    if (io_has_file(m->dir, "vocab.json") && io_has_file(m->dir, "merges.txt")) {
        m->vocab_path = io_path_join(m->dir, "vocab.json");
        m->merges_path = io_path_join(m->dir, "merges.txt");
        if (!m->vocab_path || !m->merges_path)
            return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    }
    if (io_has_file(m->dir, "tokenizer.json") &&
        !(m->tokenizer_path = io_path_join(m->dir, "tokenizer.json")))
        return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    return 0;
}

static int read_config(Gpt2Model *m, AttnErr *err)
{
    char *path = io_path_join(m->dir, "config.json"), *text = NULL, hub[128];
    size_t len = 0;
    if (!path)
        return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    int rc = 0;
    hf_hub_name(m->dir, hub, sizeof hub);
    if (!io_has_file(m->dir, "config.json"))
        rc = attn_err_set(err, ATTN_E_NOT_FOUND, m->dir, 0,
                          "no config.json: not a Hugging Face model folder (config.json, "
                          "model.safetensors, vocab.json + merges.txt; huggingface-cli "
                          "download %s)", hub);
    if (rc == 0)
        rc = io_read_file(path, CONFIG_MAX, &text, &len, err);
    if (rc == 0)
        rc = gpt2_config_parse(&m->cfg, text, len, path, err);
    free(text);
    free(path);
    return rc;
}

int gpt2_file_open(const char *dir, Gpt2Model **out, AttnErr *err)
{
    struct stat st;
    *out = NULL;
    if (!dir || !*dir)
        return attn_err_set(err, ATTN_E_NOT_FOUND, "", 0, "no model folder given");
    if (stat(dir, &st) != 0)
        return attn_err_set(err, errno == ENOENT ? ATTN_E_NOT_FOUND : ATTN_E_IO, dir, 0,
                            "%s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return attn_err_set(err, ATTN_E_IO, dir, 0,
                            "is not a folder (a model is a folder: config.json, "
                            "model.safetensors, vocab.json, merges.txt)");
    Gpt2Model *m = calloc(1, sizeof *m);
    char *where = NULL;
    int rc = 0;
    if (!m || !(m->own = calloc(1, sizeof *m->own)) || !(m->dir = strdup(dir))) {
        rc = attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
        goto cleanup;
    }
    rc = read_config(m, err);
    if (rc == 0)
        rc = st_folder_open(&m->own->files, m->dir, &where, err);
    if (rc == 0)
        rc = gpt2_weights_bind(m, where, err);
    if (rc == 0)
        rc = note_tokenizer(m, err);
    if (rc == 0) {
        m->n_shards = m->own->files.n;
        *out = m;
        m = NULL;
    }
cleanup:
    free(where);
    gpt2_file_close(m);
    return rc;
}

void gpt2_file_close(Gpt2Model *m)
{
    if (!m)
        return;
    Gpt2ModelOwn *own = m->own;
    if (own) {
        st_folder_close(&own->files);
        free(own->conv);
        free(own->layers);
        free(own);
    }
    free(m->dir);
    free(m->vocab_path);
    free(m->merges_path);
    free(m->tokenizer_path);
    free(m);
}
