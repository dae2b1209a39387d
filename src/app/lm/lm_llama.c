/* The Llama family (model_type llama, qwen2, mistral) behind lm.h:
 * io/llama_file.c's folder and core/llama.c's forward. */
#include "attnviz/llama_forward.h"
#include "attnviz/llamaio.h"
#include "lm_internal.h"

static const char *const arch_names[] = {"llama", "qwen2", "mistral"};

static int open_llama(Lm *lm, const char *dir, AttnErr *err)
{
    LlamaModel *m = NULL;
    LlamaState *st = NULL;
    int rc = llama_file_open(dir, &m, err);
    if (rc == 0 && (rc = llama_state_create(&st, &m->cfg, err)) < 0)
        llama_file_close(m);
    if (rc < 0)
        return rc;
    const LlamaConfig *c = &m->cfg;
    lm->model = m;
    lm->state = st;
    lm->info = (LmInfo){
        .arch = (unsigned)c->arch < 3 ? arch_names[c->arch] : "llama",
        .n_layer = c->n_layer,
        .n_head = c->n_head,
        .n_kv_head = c->n_kv_head,
        .d_head = c->head_dim,
        .n_positions = c->n_positions,
        .n_vocab = c->n_vocab,
        .bos_id = c->bos_id,
        .scale_attn = 1,
        .scale_by_layer = 0,
        .embed_name = "embed_tokens",
    };
    return 0;
}

static void close_llama(Lm *lm)
{
    llama_state_destroy(lm->state);
    llama_file_close(lm->model);
}

static int forward_llama(Lm *lm, const int *ids, int T, const LmHooks *hooks, AttnErr *err)
{
    const LlamaModel *m = lm->model;
    return llama_forward(lm->state, &m->weights, ids, T, hooks, err);
}

static void maps_copy_llama(const Lm *lm, float *out)
{
    llama_maps_copy(lm->state, out);
}

static const float *query_llama(const Lm *lm, int layer, int head, int i)
{
    return llama_query(lm->state, layer, head, i);
}

static const float *key_llama(const Lm *lm, int layer, int head, int j)
{
    return llama_key(lm->state, layer, head, j);
}

static int top_k_llama(Lm *lm, int pos, int k, int *ids, float *probs, AttnErr *err)
{
    const LlamaModel *m = lm->model;
    return llama_top_k(lm->state, &m->weights, pos, k, ids, probs, NULL, err);
}

const LmArch lm_llama = {
    .types = "llama, qwen2, mistral",
    .open = open_llama,
    .close = close_llama,
    .forward = forward_llama,
    .maps_copy = maps_copy_llama,
    .query = query_llama,
    .key = key_llama,
    .top_k = top_k_llama,
};
