/* GPT-2 (model_type gpt2) behind lm.h: io/gpt2_file.c's folder on
 * core/arch_gpt2.c's table. */
#include "attnviz/gpt2io.h"
#include "lm_internal.h"

static int open_gpt2(Lm *lm, const char *dir, AttnErr *err)
{
    Gpt2Model *m = NULL;
    int rc = gpt2_file_open(dir, &m, err);
    if (rc < 0)
        return rc;
    lm->model = m;
    lm->cfg = &m->cfg;
    lm->weights = &m->weights;
    lm->rt_arch = &arch_gpt2;
    lm->info = (LmInfo){.arch = "gpt2",
                        .bos_id = m->cfg.bos_id,
                        .scale_attn = m->cfg.scale_attn_weights,
                        .scale_by_layer = m->cfg.scale_by_inverse_layer_idx,
                        .embed_name = "wte"};
    return 0;
}

static void close_gpt2(void *m)
{
    gpt2_file_close(m);
}

const LmArch lm_gpt2 = {"gpt2", open_gpt2, close_gpt2};
