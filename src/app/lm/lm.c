/* The architectures the program computes (lm.h): the list (core/archs.c's,
 * then any registered), the one a folder's config.json model_type names
 * read by its description (io/model_file.c) and its forward made, and the
 * calls that go through the runtime. No architecture is named here. */
#include <stdio.h>
#include <string.h>

#include "attnviz/lm.h"
#include "attnviz/model_file.h"

#define LM_ARCHS_MAX 16

static const ArchDesc *added[LM_ARCHS_MAX];
static int n_added;

int lm_arch_register(const ArchDesc *a)
{
    if (n_added == LM_ARCHS_MAX)
        return -1;
    added[n_added++] = a;
    return 0;
}

const ArchDesc *lm_arch(int i)
{
    int n = 0;
    while (arch_builtin[n])
        n++;
    return i < n ? arch_builtin[i] : i - n < n_added ? added[i - n] : NULL;
}

const char *lm_known_types(void)
{
    static char list[400];
    list[0] = '\0';
    for (int i = 0; lm_arch(i); i++)
        for (const ArchName *t = lm_arch(i)->types; t->word; t++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "",
                     t->word);
    return list;
}

/* The architecture that computes model_type, or NULL. */
static const ArchDesc *arch_for(const char *type)
{
    for (int i = 0; lm_arch(i); i++)
        for (const ArchName *t = lm_arch(i)->types; t->word; t++)
            if (strcmp(t->word, type) == 0)
                return lm_arch(i);
    return NULL;
}

/* The end-of-text ids: the config's eos_id first, then every other the
 * files name (a list's, generation_config.json's, a GGUF file's eot),
 * each once, those within the vocabulary. */
static void stop_ids(LmInfo *info, const ModelFile *m)
{
    int cap = (int)(sizeof info->stop_ids / sizeof *info->stop_ids);
    info->n_stop = 0;
    for (int k = -1; k < m->n_stop && info->n_stop < cap; k++) {
        int id = k < 0 ? info->eos_id : m->stop_ids[k];
        if (id < 0 || id >= info->n_vocab || lm_is_stop(info, id))
            continue;
        info->stop_ids[info->n_stop++] = id;
    }
}

static int lm_start(Lm *lm, AttnErr *err);

int lm_open(Lm *lm, const char *dir, AttnErr *err)
{
    char type[80], path[4200];
    memset(lm, 0, sizeof *lm);
    int rc = hf_config_model_type(dir, type, sizeof type, err);
    if (rc < 0)
        return rc;
    const ArchDesc *a = arch_for(type);
    if (!a) {
        snprintf(path, sizeof path, "%s/config.json", dir);
        return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0,
                            "model_type is \"%.60s\": attnviz computes %s", type, lm_known_types());
    }
    rc = model_file_open(dir, a, &lm->model, err);
    return rc < 0 ? rc : lm_start(lm, err);
}

int lm_open_gguf(Lm *lm, const char *path, AttnErr *err)
{
    memset(lm, 0, sizeof *lm);
    int rc = model_file_open_gguf(path, lm_arch, &lm->model, err);
    return rc < 0 ? rc : lm_start(lm, err);
}

/* The state whose maps the program shows: an encoder-decoder's encoder
 * (lm_forward's view of one: the source's self-attention), else the one. */
static Rt *shown(const Lm *lm)
{
    return lm->rt->enc ? lm->rt->enc : lm->rt;
}

/* The forward's state for the model opened, and what the program shows of it. */
static int lm_start(Lm *lm, AttnErr *err)
{
    const ArchDesc *a = lm->model->arch;
    int rc = rt_create(&lm->rt, a->rt, lm->model->cfg, err);
    if (rc < 0) {
        model_file_close(lm->model);
        memset(lm, 0, sizeof *lm);
        return rc;
    }
    ArchFacts f = {-1, 1, 0, -1, -1};
    a->facts(lm->model->cfg, &f);
    const RtShape *s = &shown(lm)->sh;
    lm->arch = a;
    lm->info = (LmInfo){.arch = lm->model->model_type, .n_layer = s->n_layer,
                        .n_head = s->n_head, .n_kv_head = s->n_kv_head, .d_head = s->d_head,
                        .n_positions = s->n_positions, .n_vocab = s->n_vocab,
                        .bos_id = f.bos_id, .eos_id = f.eos_id, .scale_attn = f.scale_attn,
                        .scale_by_layer = f.scale_by_layer, .embed_name = a->embed_name,
                        .masked_lm = s->bidirectional && !a->rt->encoder,
                        .encdec = a->rt->encoder != NULL,
                        .start_id = f.start_id};
    stop_ids(&lm->info, lm->model);
    return 0;
}

int lm_twin(Lm *twin, const Lm *src, AttnErr *err)
{
    memset(twin, 0, sizeof *twin);
    int rc = rt_create(&twin->rt, src->arch->rt, src->model->cfg, err);
    if (rc < 0)
        return rc;
    twin->arch = src->arch;
    twin->info = src->info;
    twin->model = src->model;
    twin->twin = 1;
    return 0;
}

void lm_close(Lm *lm)
{
    if (lm && lm->arch) {
        rt_destroy(lm->rt);
        if (!lm->twin)
            model_file_close(lm->model);
    }
    if (lm)
        memset(lm, 0, sizeof *lm);
}

int lm_forward_target(Lm *lm, const int *ids, int T, const int *tgt, int Tt, const LmHooks *hooks,
                      AttnErr *err)
{
    if (lm->info.encdec) {
        LmHooks dec = {hooks ? hooks->cancel : NULL, NULL, hooks ? hooks->user : NULL, NULL};
        int start = lm->info.start_id;
        if (!tgt || Tt <= 0)
            tgt = &start, Tt = 1;
        return rt_forward_encdec(lm->rt, lm->model->weights, ids, T, tgt, Tt, &dec, hooks, err);
    }
    return rt_forward(lm->rt, lm->model->weights, ids, T, hooks, err);
}

int lm_forward(Lm *lm, const int *ids, int T, const LmHooks *hooks, AttnErr *err)
{
    return lm_forward_target(lm, ids, T, NULL, 0, hooks, err); /* an encoder-decoder: the start token */
}

int lm_forward_encdec(Lm *lm, const int *src, int Ts, const int *tgt, int Tt, const LmHooks *hooks,
                      AttnErr *err)
{
    return rt_forward_encdec(lm->rt, lm->model->weights, src, Ts, tgt, Tt, hooks, NULL, err);
}

int lm_layer_each(const Lm *lm, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                  void *user)
{
    return rt_layer_each(shown(lm), layer, fn, user);
}

RtMaps *lm_maps_take(const Lm *lm)
{
    return rt_maps_take(shown(lm));
}

int lm_value_norms(Lm *lm, AttnErr *err)
{
    return rt_value_norms(shown(lm), err);
}

int lm_layer_norms_each(const Lm *lm, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                        void *user)
{
    return rt_layer_norms_each(shown(lm), layer, fn, user);
}

void lm_map_norms(const Lm *lm, int layer, int head, float *out, size_t ld)
{
    rt_map_norms(shown(lm), layer, head, out, ld);
}

const float *lm_query(const Lm *lm, int layer, int head, int i)
{
    return rt_query(shown(lm), layer, head, i);
}

const float *lm_key(const Lm *lm, int layer, int head, int j)
{
    return rt_key(shown(lm), layer, head, j);
}

const RtAttn *lm_layer_attn(const Lm *lm, int layer)
{
    return rt_layer_attn(shown(lm), layer);
}

/* An encoder-decoder's predictions are its decoder's: position pos of the
 * target, or its last when pos is past it (lm_forward's view: the start
 * token alone). */
static int next_pos(const Lm *lm, int pos)
{
    return lm->info.encdec && pos >= lm->rt->n_done ? lm->rt->n_done - 1 : pos;
}

int lm_logits(Lm *lm, int pos, float *logits, AttnErr *err)
{
    return rt_logits(lm->rt, lm->model->weights, next_pos(lm, pos), logits, err);
}

int lm_top_k(Lm *lm, int pos, int k, int *ids, float *probs, AttnErr *err)
{
    return rt_top_k(lm->rt, lm->model->weights, next_pos(lm, pos), k, ids, probs, NULL, err);
}

int lm_logit_lens(Lm *lm, const int *ids, int T, int pos, int k, int *top_ids, float *probs,
                  AttnErr *err)
{
    if (lm->info.encdec)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0,
                            "the logit lens of an encoder-decoder (%s) is not computed", lm->info.arch);
    return rt_lens(lm->rt, lm->model->weights, ids, T, pos, k, top_ids, probs, err);
}

int lm_ablate(Lm *lm, int layer, int head, int on, AttnErr *err)
{
    if (layer < 0 || layer >= lm->info.n_layer)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "layer %d: the model has layers 1 to %d",
                            layer + 1, lm->info.n_layer);
    if (head < 0 || head >= lm->info.n_head)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "head %d: the model has heads 1 to %d",
                            head + 1, lm->info.n_head);
    rt_ablate(shown(lm), layer, head, on);
    return 0;
}

void lm_ablate_mode(Lm *lm, int mean)
{
    rt_ablate_mean(shown(lm), mean);
}

int lm_is_ablated(const Lm *lm, int layer, int head)
{
    return rt_is_ablated(shown(lm), layer, head);
}
