/* The runtime's value-weighted attention and its maps copied out
 * (runtime.h): each key's ‖v_j W_O,h‖ made from the cache and the W_O each
 * layer recorded, the norms maps (α times them), the queries, keys and
 * norms copied for another thread (RtMaps) and every map of a copy or of a
 * layer made on the two threads. The forward and the state are
 * runtime.c's. */
#include "attnviz/runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "runtime_internal.h"

/* ---- value-weighted attention (norms) -------------------------------------------- */

#define NORM_ROWS 64 /* keys a product takes at a time: bounded scratch */

static inline float widen(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* Head h's d_head rows of layer l's W_O as float32 [d_head, C] into wf
 * (bfloat16 [C, qdim]: columns h·d_head … of each row, widened), or a
 * pointer into the float32 [qdim, C] matrix itself. */
static const float *head_wo(const Rt *rt, int l, int h, float *wf)
{
    int dh = rt->sh.d_head, C = rt->sh.hidden;
    if (rt->wo[l])
        return rt->wo[l] + (size_t)h * dh * C;
    const uint16_t *w = rt->wo16[l] + (size_t)h * dh;
    for (int c = 0; c < C; c++)
        for (int d = 0; d < dh; d++)
            wf[(size_t)d * C + c] = widen(w[(size_t)c * rt->qdim + d]);
    return wf;
}

/* f (C floats) = v (d_head) · head h's columns of a bfloat16 [C, qdim]
 * W_O, read in place: a few keys (a keystroke's) cost no more than their
 * product, where widening the head's rows first would cost as much again
 * for every head. */
static void key_times_bf16(const Rt *rt, const uint16_t *w, const float *v, float *f)
{
    int dh = rt->sh.d_head;
    for (int c = 0; c < rt->sh.hidden; c++, w += rt->qdim) {
        float sum = 0.0f;
        for (int d = 0; d < dh; d++)
            sum += v[d] * widen(w[d]);
        f[c] = sum;
    }
}

#define NORM_FEW 8 /* keys below which a bfloat16 W_O is read in place */

/* Layer l's norms of keys [i0, i1), every head: v_j · W_O,h with the
 * product kernels (rows of f, C floats each; for a few keys of a bfloat16
 * W_O, key_times_bf16), its squares summed in double. */
static void layer_norms(Rt *rt, int l, int i0, int i1, float *f, float *wf)
{
    int dh = rt->sh.d_head, C = rt->sh.hidden, H = rt->sh.n_head;
    int few = rt->wo16[l] && i1 - i0 < NORM_FEW;
    for (int h = 0; h < H; h++) {
        const float *w = few ? NULL : head_wo(rt, l, h, wf);
        float *vn = rt->vnorm + ((size_t)l * H + h) * rt->cap;
        for (int a = i0; a < i1; a += NORM_ROWS) {
            int n = i1 - a < NORM_ROWS ? i1 - a : NORM_ROWS;
            const float *v = rt_qkv(rt, l, a) + rt->qdim + rt->kvdim + rt_kv_head(rt, h) * dh;
            if (few)
                for (int r = 0; r < n; r++)
                    key_times_bf16(rt, rt->wo16[l] + (size_t)h * dh, v + (size_t)r * rt->qkv_w, f + (size_t)r * C);
            else
                ops_linear(f, C, v, rt->qkv_w, w, rt->zero, n, dh, C);
            for (int r = 0; r < n; r++) {
                double sq = 0;
                for (int c = 0; c < C; c++)
                    sq += (double)f[(size_t)r * C + c] * f[(size_t)r * C + c];
                vn[a + r] = (float)sqrt(sq);
            }
        }
    }
}

int rt_value_norms(Rt *rt, AttnErr *err)
{
    int L = rt->sh.n_layer, dh = rt->sh.d_head, C = rt->sh.hidden, todo = 0;
    for (int l = 0; l < L; l++) {
        if (rt->norms_done[l] >= rt->layer_done[l])
            continue;
        if (!rt->wo[l] && !rt->wo16[l])
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "%s layer %d: no output projection recorded (rt_out_project): no norms",
                                rt->arch->name, l + 1);
        todo = 1;
    }
    if (!todo)
        return 0;
    float *f = malloc(sizeof *f * (size_t)NORM_ROWS * C);
    float *wf = malloc(sizeof *wf * (size_t)dh * C);
    if (!f || !wf) {
        free(f);
        free(wf);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "the value norms of %s", rt->arch->name);
    }
    for (int l = 0; l < L; l++)
        if (rt->norms_done[l] < rt->layer_done[l]) {
            layer_norms(rt, l, rt->norms_done[l], rt->layer_done[l], f, wf);
            rt->norms_done[l] = rt->layer_done[l];
        }
    free(f);
    free(wf);
    return 0;
}

const float *rt_norms_of(const Rt *rt, int layer, int head)
{
    if (rt->norms_done[layer] < rt->layer_done[layer] || !rt->vnorm)
        return NULL;
    return rt->vnorm + ((size_t)layer * rt->sh.n_head + head) * rt->cap;
}

/* Rows [i0, i1) of a weights map (T keys, row stride ld) times its keys'
 * norms vn: the norms map's. A 0 stays 0 whatever the key's norm (a masked
 * key, or one past a cancelled forward's positions, whose norm is not made). */
static void times_norms(float *out, size_t ld, int T, const float *vn, int i0, int i1)
{
    for (int i = i0; i < i1; i++) {
        float *row = out + (size_t)i * ld;
        for (int j = 0; j < T; j++)
            row[j] = row[j] != 0.0f ? row[j] * vn[j] : 0.0f;
    }
}

void rt_map_norms(const Rt *rt, int layer, int head, float *out, size_t ld)
{
    const float *vn = rt_norms_of(rt, layer, head);
    rt_map(rt, layer, head, out, ld);
    if (vn)
        times_norms(out, ld, rt->T, vn, 0, rt->T);
    for (int i = 0; !vn && i < rt->T; i++)
        memset(out + (size_t)i * ld, 0, sizeof(float) * (size_t)rt->T);
}

/* ---- the maps copied out --------------------------------------------------------- */

struct RtMaps {
    int L, H, KV, dh, T;
    RtAttn *attn; /* L */
    int *done;    /* L */
    float *q;     /* L × T × H·dh: the queries */
    float *kt;    /* L × KV × dh × T: the keys transposed */
    float *vn;    /* L × H × T: the keys' value norms (rt_value_norms), or NULL */
    int tame;     /* every query and key finite and below 1e18 in size: no
                     score can be NaN or overflow, so no weight is NaN */
};

RtMaps *rt_maps_take(const Rt *rt)
{
    const RtShape *s = &rt->sh;
    size_t L = (size_t)s->n_layer, T = (size_t)rt->T, qd = (size_t)rt->qdim;
    RtMaps *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    *m = (RtMaps){s->n_layer, s->n_head, s->n_kv_head, s->d_head, rt->T, NULL, NULL, NULL, NULL, NULL, 0};
    m->attn = malloc(sizeof *m->attn * L);
    m->done = malloc(sizeof *m->done * L);
    m->q = malloc(sizeof *m->q * (L * T * qd + 1));
    m->kt = malloc(sizeof *m->kt * (L * (size_t)rt->kvdim * T + 1));
    if (!m->attn || !m->done || !m->q || !m->kt) {
        rt_maps_free(m);
        return NULL;
    }
    memcpy(m->attn, rt->attn, sizeof *m->attn * L);
    memcpy(m->done, rt->layer_done, sizeof *m->done * L);
    for (size_t l = 0; l < L && T; l++) /* an empty state may have no cache yet */
        for (size_t i = 0; i < T; i++)
            memcpy(m->q + (l * T + i) * qd, rt_qkv(rt, (int)l, (int)i), sizeof(float) * qd);
    for (size_t r = 0; r < L * (size_t)rt->kvdim && T; r++)
        memcpy(m->kt + r * T, rt->kt + r * (size_t)rt->cap, sizeof(float) * T);
    int norms = T > 0;
    for (size_t l = 0; l < L; l++)
        norms &= rt->norms_done[l] >= rt->layer_done[l];
    if (norms && !(m->vn = malloc(sizeof *m->vn * L * (size_t)s->n_head * T))) {
        rt_maps_free(m);
        return NULL;
    }
    for (size_t r = 0; norms && r < L * (size_t)s->n_head; r++)
        memcpy(m->vn + r * T, rt->vnorm + r * (size_t)rt->cap, sizeof(float) * T);
    int ok = 1;
    for (size_t k = 0; k < L * T * qd; k++)
        ok &= fabsf(m->q[k]) < 1e18f;
    for (size_t k = 0; k < L * (size_t)rt->kvdim * T; k++)
        ok &= fabsf(m->kt[k]) < 1e18f;
    m->tame = ok;
    return m;
}

void rt_maps_free(RtMaps *m)
{
    if (!m)
        return;
    free(m->attn);
    free(m->done);
    free(m->q);
    free(m->kt);
    free(m->vn);
    free(m);
}

int rt_maps_tame(const RtMaps *m)
{
    return m->tame;
}

int rt_maps_window(const RtMaps *m, int layer)
{
    return m->attn[layer].causal ? m->attn[layer].window : 0;
}

int rt_maps_T(const RtMaps *m)
{
    return m->T;
}

size_t rt_maps_bytes(const RtMaps *m)
{
    return sizeof(float) * (size_t)m->L * m->T * ((size_t)(m->H + m->KV) * m->dh + (m->vn ? m->H : 0));
}

/* Rows [i0, i1) of map (layer, head) of m. */
static void snap_rows(const RtMaps *m, int layer, int head, float *out, size_t ld, int i0, int i1)
{
    size_t T = (size_t)m->T, qd = (size_t)m->H * m->dh;
    int g = head / (m->H / m->KV);
    rt_map_rows(&m->attn[layer], m->done[layer], m->q + (size_t)layer * T * qd + (size_t)head * m->dh,
             qd, m->kt + ((size_t)layer * m->KV + g) * m->dh * T, m->T, m->dh, m->T, out, ld, i0, i1);
}

/* The same rows of the norms map: the weights times the keys' norms (zeros
 * when m has none). */
static void snap_norm_rows(const RtMaps *m, int layer, int head, float *out, size_t ld, int i0,
                           int i1)
{
    if (!m->vn) {
        for (int i = i0; i < i1; i++)
            memset(out + (size_t)i * ld, 0, sizeof(float) * (size_t)m->T);
        return;
    }
    snap_rows(m, layer, head, out, ld, i0, i1);
    times_norms(out, ld, m->T, m->vn + ((size_t)layer * m->H + head) * m->T, i0, i1);
}

int rt_maps_has_norms(const RtMaps *m)
{
    return m->vn != NULL;
}

typedef struct SnapJob {
    const RtMaps *m;
    int layer, head, per, norms;
    float *out;
    size_t ld;
} SnapJob;

static void snap_piece(const void *arg, int k)
{
    const SnapJob *j = arg;
    int i0 = k * j->per, i1 = i0 + j->per < j->m->T ? i0 + j->per : j->m->T;
    (j->norms ? snap_norm_rows : snap_rows)(j->m, j->layer, j->head, j->out, j->ld, i0, i1);
}

/* In pieces of rows on the two threads (a row's floats are the same on
 * either): the one map the window shows. Not from inside another shared
 * job (rt_maps_each's maps are made a whole map a thread). */
void rt_maps_map(const RtMaps *m, int layer, int head, float *out, size_t ld)
{
    if (m->T <= 0)
        return;
    SnapJob j = {m, layer, head, (m->T + 31) / 32, 0, out, ld};
    ops_share(snap_piece, &j, (m->T + j.per - 1) / j.per, (double)m->T * m->T * m->dh / 2);
}

void rt_maps_norms_map(const RtMaps *m, int layer, int head, float *out, size_t ld)
{
    if (m->T <= 0)
        return;
    SnapJob j = {m, layer, head, (m->T + 31) / 32, 1, out, ld};
    ops_share(snap_piece, &j, (m->T + j.per - 1) / j.per, (double)m->T * m->T * m->dh / 2);
}

typedef struct EachJob {
    const void *src; /* an Rt (rt) or an RtMaps */
    int rt, l0, n, H, T;
    int norms;       /* 1: an RtMaps's norms maps */
    void (*fn)(void *user, int layer, int head, const float *map);
    void *user;
    float *scratch[2];
} EachJob;

/* Piece k: the maps k, k + 2, ... of layers [l0, l0 + n / H) in its own
 * scratch map. */
static void each_piece(const void *arg, int k)
{
    const EachJob *j = arg;
    for (int m = k; m < j->n; m += 2) {
        int l = j->l0 + m / j->H, h = m % j->H;
        if (j->rt)
            (j->norms ? rt_map_norms : rt_map)(j->src, l, h, j->scratch[k], (size_t)j->T);
        else
            (j->norms ? snap_norm_rows : snap_rows)(j->src, l, h, j->scratch[k], (size_t)j->T, 0, j->T);
        j->fn(j->user, l, h, j->scratch[k]);
    }
}

static int each(EachJob *j, int dh)
{
    size_t one = (size_t)j->T * j->T + 1;
    j->scratch[0] = malloc(sizeof(float) * one);
    j->scratch[1] = malloc(sizeof(float) * one);
    int rc = j->scratch[0] && j->scratch[1] ? 0 : -ATTN_E_NOMEM;
    if (rc == 0)
        ops_share(each_piece, j, 2, (double)j->n * j->T * j->T * dh);
    free(j->scratch[0]);
    free(j->scratch[1]);
    return rc;
}

int rt_maps_each(const RtMaps *m, void (*fn)(void *user, int layer, int head, const float *map),
                 void *user)
{
    EachJob j = {m, 0, 0, m->L * m->H, m->H, m->T, 0, fn, user, {NULL, NULL}};
    return each(&j, m->dh);
}

int rt_maps_norms_each(const RtMaps *m, void (*fn)(void *user, int layer, int head, const float *map),
                       void *user)
{
    if (!m->vn)
        return -ATTN_E_RANGE;
    EachJob j = {m, 0, 0, m->L * m->H, m->H, m->T, 1, fn, user, {NULL, NULL}};
    return each(&j, m->dh);
}

int rt_layer_each(const Rt *rt, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                  void *user)
{
    EachJob j = {rt, 1, layer, rt->sh.n_head, rt->sh.n_head, rt->T, 0, fn, user, {NULL, NULL}};
    return each(&j, rt->sh.d_head);
}

int rt_layer_norms_each(Rt *rt, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                        void *user)
{
    AttnErr err = {0};
    if (rt_value_norms(rt, &err) < 0 || !rt_norms_of(rt, layer, 0))
        return -ATTN_E_RANGE;
    EachJob j = {rt, 1, layer, rt->sh.n_head, rt->sh.n_head, rt->T, 1, fn, user, {NULL, NULL}};
    return each(&j, rt->sh.d_head);
}
