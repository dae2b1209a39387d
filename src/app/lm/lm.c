/* The architectures the program computes (lm.h), picked by a folder's
 * config.json model_type, and the calls that go through their tables. */
#include <stdio.h>
#include <string.h>

#include "attnviz/gpt2io.h"
#include "lm_internal.h"

static const LmArch *const archs[] = {&lm_gpt2, &lm_llama};

#define N_ARCHS (sizeof archs / sizeof archs[0])

const char *lm_known_types(void)
{
    static char list[200];
    if (!list[0])
        for (size_t i = 0; i < N_ARCHS; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", archs[i]->types);
    return list;
}

/* 1 when type is one of the comma-separated types. */
static int type_in(const char *type, const char *types)
{
    size_t n = strlen(type);
    for (const char *p = types; *p;) {
        const char *e = strchr(p, ',');
        size_t m = e ? (size_t)(e - p) : strlen(p);
        if (m == n && strncmp(p, type, n) == 0)
            return 1;
        p += m;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

int lm_open(Lm *lm, const char *dir, AttnErr *err)
{
    char type[80], path[4200];
    memset(lm, 0, sizeof *lm);
    int rc = hf_config_model_type(dir, type, sizeof type, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < N_ARCHS; i++)
        if (type_in(type, archs[i]->types)) {
            lm->arch = archs[i];
            rc = archs[i]->open(lm, dir, err);
            if (rc == 0 && (rc = rt_create(&lm->rt, lm->rt_arch, lm->cfg, err)) < 0)
                archs[i]->close(lm->model);
            if (rc < 0) {
                memset(lm, 0, sizeof *lm);
                return rc;
            }
            const RtShape *s = &lm->rt->sh;
            lm->info.n_layer = s->n_layer;
            lm->info.n_head = s->n_head;
            lm->info.n_kv_head = s->n_kv_head;
            lm->info.d_head = s->d_head;
            lm->info.n_positions = s->n_positions;
            lm->info.n_vocab = s->n_vocab;
            return 0;
        }
    snprintf(path, sizeof path, "%s/config.json", dir);
    return attn_err_set(err, ATTN_E_UNSUPPORTED, path, 0, "model_type is \"%.60s\": attnviz computes %s",
                        type, lm_known_types());
}

void lm_close(Lm *lm)
{
    if (lm && lm->arch) {
        rt_destroy(lm->rt);
        lm->arch->close(lm->model);
    }
    if (lm)
        memset(lm, 0, sizeof *lm);
}

int lm_forward(Lm *lm, const int *ids, int T, const LmHooks *hooks, AttnErr *err)
{
    return rt_forward(lm->rt, lm->weights, ids, T, hooks, err);
}

void lm_maps_copy(const Lm *lm, float *out)
{
    rt_maps_copy(lm->rt, out);
}

void lm_map(const Lm *lm, int layer, int head, float *out, size_t ld)
{
    rt_map(lm->rt, layer, head, out, ld);
}

int lm_layer_each(const Lm *lm, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                  void *user)
{
    return rt_layer_each(lm->rt, layer, fn, user);
}

RtMaps *lm_maps_take(const Lm *lm)
{
    return rt_maps_take(lm->rt);
}

const float *lm_query(const Lm *lm, int layer, int head, int i)
{
    return rt_query(lm->rt, layer, head, i);
}

const float *lm_key(const Lm *lm, int layer, int head, int j)
{
    return rt_key(lm->rt, layer, head, j);
}

int lm_top_k(Lm *lm, int pos, int k, int *ids, float *probs, AttnErr *err)
{
    return rt_top_k(lm->rt, lm->weights, pos, k, ids, probs, NULL, err);
}
