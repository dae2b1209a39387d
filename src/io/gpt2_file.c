/* A GPT-2 model folder opened and closed: config.json parsed,
 * model.safetensors (or the shards model.safetensors.index.json names) mapped
 * read-only, the weights bound (gpt2_weights.c), the tokenizer's files noted.
 * A pytorch_model.bin is never read (unpickling runs code). */
#include <stdlib.h>
#include <string.h>

#include "gpt2_own.h"
#include "st_folder.h"

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
    char *path = NULL, *text = NULL;
    size_t len = 0;
    int rc = hf_config_read(m->dir, "config.json, model.safetensors, vocab.json + merges.txt",
                            &text, &len, &path, err);
    if (rc == 0)
        rc = gpt2_config_parse(&m->cfg, text, len, path, err);
    free(text);
    free(path);
    return rc;
}

int gpt2_file_open(const char *dir, Gpt2Model **out, AttnErr *err)
{
    *out = NULL;
    int rc = io_model_folder(dir, "config.json, model.safetensors, vocab.json, merges.txt", err);
    if (rc < 0)
        return rc;
    Gpt2Model *m = calloc(1, sizeof *m);
    char *where = NULL;
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
