/* The Llama family (model_type llama, qwen2, mistral) behind lm.h:
 * io/llama_file.c's folder on core/arch_llama.c's table. */
#include "attnviz/llamaio.h"
#include "lm_internal.h"

static const char *const arch_names[] = {"llama", "qwen2", "mistral"};

static int open_llama(Lm *lm, const char *dir, AttnErr *err)
{
    LlamaModel *m = NULL;
    int rc = llama_file_open(dir, &m, err);
    if (rc < 0)
        return rc;
    lm->model = m;
    lm->cfg = &m->cfg;
    lm->weights = &m->weights;
    lm->rt_arch = &arch_llama;
    lm->info = (LmInfo){.arch = (unsigned)m->cfg.arch < 3 ? arch_names[m->cfg.arch] : "llama",
                        .bos_id = m->cfg.bos_id,
                        .scale_attn = 1,
                        .embed_name = "embed_tokens"};
    return 0;
}

static void close_llama(void *m)
{
    llama_file_close(m);
}

const LmArch lm_llama = {"llama, qwen2, mistral", open_llama, close_llama};
