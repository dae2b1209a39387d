/* The runtime's encoder-decoders (runtime.h: rt_forward_encdec): the
 * encoder's state inside the decoder's, every decoder layer's cross keys
 * and values made once per source and kept, the cross queries kept per
 * target position, the cross-attention of a layer a row at a time, and
 * its maps recomputed from what is kept (Tt × Ts). The forward itself is
 * runtime.c's. */
#include "attnviz/runtime.h"

#include <stdlib.h>
#include <string.h>

#include "lm_kernels.h"
#include "ops.h"
#include "runtime_internal.h"

/* Every decoder layer's cross keys and values from the encoder's output
 * for its Ts positions, and the keys transposed: 0 or -ATTN_E_NOMEM. */
static int make_source(Rt *rt, const void *w, int Ts, AttnErr *err)
{
    size_t L = (size_t)rt->sh.n_layer, kvd = (size_t)rt->kvdim, Ce = (size_t)rt->enc->sh.hidden;
    size_t n = (size_t)Ts;
    free(rt->xkv), free(rt->xkt), free(rt->xrow), free(rt->xmem);
    rt->xkv = malloc(sizeof(float) * L * n * 2 * kvd);
    rt->xkt = malloc(sizeof(float) * L * kvd * n);
    rt->xrow = malloc(sizeof(float) * (size_t)rt->sh.n_head * n);
    rt->xmem = malloc(sizeof(float) * n * Ce);
    if (!rt->xkv || !rt->xkt || !rt->xrow || !rt->xmem)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "%s cross keys of %d source tokens",
                            rt->arch->name, Ts);
    rt->Ts = Ts;
    memcpy(rt->xmem, rt->enc->x, sizeof(float) * n * Ce);
    rt->arch->source(rt, w, rt->xmem, Ts);
    for (size_t l = 0; l < L; l++)
        for (size_t c = 0; c < kvd; c++)
            for (size_t j = 0; j < n; j++)
                rt->xkt[(l * kvd + c) * n + j] = rt_cross_kv(rt, (int)l, (int)j)[c];
    return 0;
}

int rt_forward_encdec(Rt *rt, const void *w, const int *src, int Ts, const int *tgt, int Tt,
                      const ForwardHooks *hooks, const ForwardHooks *enc_hooks, AttnErr *err)
{
    if (!rt->arch->encoder)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "%s is not an encoder-decoder",
                            rt->arch->name);
    if (Ts <= 0)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "%s: no source tokens (an encoder-decoder's target needs a source)",
                            rt->arch->name);
    Rt *e = rt->enc;
    if (rt->Ts != Ts || e->n_done != Ts || memcmp(e->ids, src, sizeof *src * (size_t)Ts)) {
        rt->Ts = -1;
        rt_reset(rt); /* every target position attends over the new source */
        int rc = rt_forward_plain(e, w, src, Ts, enc_hooks, err);
        if (rc == 0)
            rc = make_source(rt, w, Ts, err);
        if (rc < 0)
            return rc;
    }
    return rt_forward_plain(rt, w, tgt, Tt, hooks, err);
}

typedef struct CrossJob {
    Rt *rt;
    int layer, start, T;
} CrossJob;

/* Head h's cross keys in layer l, transposed: d_head rows of Ts. */
static const float *cross_kt(const Rt *rt, int l, int h)
{
    return rt->xkt + ((size_t)l * rt->kvdim + (size_t)rt_kv_head(rt, h) * rt->sh.d_head) * rt->Ts;
}

/* Query head h's cross weights for target rows [start, T), a row at a
 * time, then its context from the source's values. */
static void cross_head(const void *arg, int h)
{
    const CrossJob *jb = arg;
    Rt *rt = jb->rt;
    int dh = rt->sh.d_head, l = jb->layer, Ts = rt->Ts, W2 = 2 * rt->kvdim;
    float *row = rt->xrow + (size_t)h * Ts;
    const float *v = rt_cross_kv(rt, l, 0) + rt->kvdim + rt_kv_head(rt, h) * dh;
    for (int i = jb->start; i < jb->T; i++) {
        int j0, j1;
        rt_weights_row(&rt->xattn[l], h, rt_cross_q(rt, l, i) + h * dh, cross_kt(rt, l, h), Ts, dh, i,
                    Ts, row, &j0, &j1);
        lm_kernel_set()->context(rt->z + (size_t)i * rt->qdim + h * dh, row + j0,
                                 v + (size_t)j0 * W2, W2, j1 - j0, dh);
    }
}

void rt_cross_attend(Rt *rt, int l, int start, int T, const RtAttn *a)
{
    rt->xattn[l] = *a;
    rt->xattn[l].causal = 0; /* every target position sees the whole source */
    rt->xattn[l].window = 0;
    CrossJob aj = {rt, l, start, T};
    ops_share(cross_head, &aj, rt->sh.n_head, 2.0 * (T - start) * rt->Ts * rt->qdim);
}

void rt_cross_map(const Rt *rt, int layer, int head, float *out, size_t ld)
{
    int Ts = rt->Ts > 0 ? rt->Ts : 0;
    for (int i = 0; i < rt->T; i++) {
        float *row = out + (size_t)i * ld;
        int j0, j1;
        if (i < rt->layer_done[layer] && Ts)
            rt_weights_row(&rt->xattn[layer], head, rt_cross_q(rt, layer, i) + head * rt->sh.d_head,
                        cross_kt(rt, layer, head), Ts, rt->sh.d_head, i, Ts, row, &j0, &j1);
        else
            memset(row, 0, sizeof(float) * (size_t)Ts);
    }
}
