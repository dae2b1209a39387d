/* GPT-2 (model_type gpt2) behind lm.h: io/gpt2_file.c's folder and
 * core/gpt2.c's forward. */
#include "attnviz/gpt2_forward.h"
#include "attnviz/gpt2io.h"
#include "lm_internal.h"

static int open_gpt2(Lm *lm, const char *dir, AttnErr *err)
{
    Gpt2Model *m = NULL;
    Gpt2State *st = NULL;
    int rc = gpt2_file_open(dir, &m, err);
    if (rc == 0 && (rc = gpt2_state_create(&st, &m->cfg, err)) < 0)
        gpt2_file_close(m);
    if (rc < 0)
        return rc;
    const Gpt2Config *c = &m->cfg;
    lm->model = m;
    lm->state = st;
    lm->info = (LmInfo){
        .arch = "gpt2",
        .n_layer = c->n_layer,
        .n_head = c->n_head,
        .n_kv_head = c->n_head,
        .d_head = c->n_embd / c->n_head,
        .n_positions = c->n_positions,
        .n_vocab = c->n_vocab,
        .bos_id = c->bos_id,
        .scale_attn = c->scale_attn_weights,
        .scale_by_layer = c->scale_by_inverse_layer_idx,
        .embed_name = "wte",
    };
    return 0;
}

static void close_gpt2(Lm *lm)
{
    gpt2_state_destroy(lm->state);
    gpt2_file_close(lm->model);
}

static int forward_gpt2(Lm *lm, const int *ids, int T, const LmHooks *hooks, AttnErr *err)
{
    const Gpt2Model *m = lm->model;
    return gpt2_forward(lm->state, &m->weights, ids, T, hooks, err);
}

static void maps_copy_gpt2(const Lm *lm, float *out)
{
    gpt2_maps_copy(lm->state, out);
}

static const float *query_gpt2(const Lm *lm, int layer, int head, int i)
{
    return gpt2_query(lm->state, layer, head, i);
}

static const float *key_gpt2(const Lm *lm, int layer, int head, int j)
{
    return gpt2_key(lm->state, layer, head, j);
}

static int top_k_gpt2(Lm *lm, int pos, int k, int *ids, float *probs, AttnErr *err)
{
    const Gpt2Model *m = lm->model;
    return gpt2_top_k(lm->state, &m->weights, pos, k, ids, probs, NULL, err);
}

const LmArch lm_gpt2 = {
    .types = "gpt2",
    .open = open_gpt2,
    .close = close_gpt2,
    .forward = forward_gpt2,
    .maps_copy = maps_copy_gpt2,
    .query = query_gpt2,
    .key = key_gpt2,
    .top_k = top_k_gpt2,
};
