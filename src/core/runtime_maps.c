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

/* Layer l's W_O as stored, [C, qdim], widened or dequantized whole into
 * wm (C × qdim floats): the many keys' path reads each head's columns from
 * it. */
static void widen_wo(const Rt *rt, int l, float *wm)
{
    for (int c = 0; c < rt->sh.hidden; c++)
        ops_mat_row(wm + (size_t)c * rt->qdim, rt->wom[l], c, rt->qdim);
}

/* Head h's d_head rows of layer l's W_O as float32 [d_head, C] into wf
 * (from the widened [C, qdim] wm: columns h·d_head … of each row), or a
 * pointer into the float32 [qdim, C] matrix itself. */
static const float *head_wo(const Rt *rt, int l, int h, const float *wm, float *wf)
{
    int dh = rt->sh.d_head, C = rt->sh.hidden;
    if (rt->wo[l])
        return rt->wo[l] + (size_t)h * dh * C;
    for (int c = 0; c < C; c++)
        for (int d = 0; d < dh; d++)
            wf[(size_t)d * C + c] = wm[(size_t)c * rt->qdim + (size_t)h * dh + d];
    return wf;
}

#define NORM_FEW 8 /* keys below which a W_O as stored is read a row at a time */

/* The few keys [i0, i1) of layer l, every head, from a W_O as stored read
 * a row at a time (row, qdim floats of scratch): a keystroke's cost is its
 * product, where widening the whole matrix first would cost as much again.
 * Each f_c = v_j · the head's part of row c in order, its square added to
 * sq (H × NORM_FEW doubles) as c goes. */
static void few_norms(Rt *rt, int l, int i0, int i1, float *row, double *sq)
{
    int dh = rt->sh.d_head, H = rt->sh.n_head, n = i1 - i0;
    memset(sq, 0, sizeof *sq * (size_t)H * NORM_FEW);
    for (int c = 0; c < rt->sh.hidden; c++) {
        ops_mat_row(row, rt->wom[l], c, rt->qdim);
        for (int h = 0; h < H; h++) {
            const float *w = row + (size_t)h * dh;
            for (int r = 0; r < n; r++) {
                const float *v = rt_qkv(rt, l, i0 + r) + rt->qdim + rt->kvdim +
                                 rt_kv_head(rt, h) * dh;
                float f = 0.0f;
                for (int d = 0; d < dh; d++)
                    f += v[d] * w[d];
                sq[h * NORM_FEW + r] += (double)f * f;
            }
        }
    }
    for (int h = 0; h < H; h++)
        for (int r = 0; r < n; r++)
            rt->vnorm[((size_t)l * H + h) * rt->cap + i0 + r] = (float)sqrt(sq[h * NORM_FEW + r]);
}

/* Layer l's norms of keys [i0, i1), every head: v_j · W_O,h with the
 * product kernels (rows of f, C floats each; for a few keys of a W_O as
 * stored, few_norms), its squares summed in double. */
static void layer_norms(Rt *rt, int l, int i0, int i1, float *f, float *wf, float *wm,
                        double *sq)
{
    int dh = rt->sh.d_head, C = rt->sh.hidden, H = rt->sh.n_head;
    if (rt->wom[l] && i1 - i0 < NORM_FEW) {
        few_norms(rt, l, i0, i1, wf, sq);
        return;
    }
    if (rt->wom[l])
        widen_wo(rt, l, wm);
    for (int h = 0; h < H; h++) {
        const float *w = head_wo(rt, l, h, wm, wf);
        float *vn = rt->vnorm + ((size_t)l * H + h) * rt->cap;
        for (int a = i0; a < i1; a += NORM_ROWS) {
            int n = i1 - a < NORM_ROWS ? i1 - a : NORM_ROWS;
            const float *v = rt_qkv(rt, l, a) + rt->qdim + rt->kvdim + rt_kv_head(rt, h) * dh;
            ops_linear(f, C, v, rt->qkv_w, w, rt->zero, n, dh, C);
            for (int r = 0; r < n; r++) {
                double s2 = 0;
                for (int c = 0; c < C; c++)
                    s2 += (double)f[(size_t)r * C + c] * f[(size_t)r * C + c];
                vn[a + r] = (float)sqrt(s2);
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
        if (!rt->wo[l] && !rt->wom[l])
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "%s layer %d: no output projection recorded (rt_out_project): no norms",
                                rt->arch->name, l + 1);
        todo = 1;
    }
    if (!todo)
        return 0;
    /* wf: a head's [d_head, C], or a row of W_O (qdim ≤ H · d_head); wm: a
     * whole W_O widened (only when a layer's is as stored and many keys) */
    size_t wide = (size_t)dh * C > (size_t)rt->qdim ? (size_t)dh * C : (size_t)rt->qdim;
    float *f = malloc(sizeof *f * (size_t)NORM_ROWS * C), *wf = malloc(sizeof *wf * wide);
    double *sq = malloc(sizeof *sq * (size_t)rt->sh.n_head * NORM_FEW);
    int need_wm = 0;
    for (int l = 0; l < L; l++)
        need_wm |= rt->wom[l] && rt->layer_done[l] - rt->norms_done[l] >= NORM_FEW;
    float *wm = need_wm ? malloc(sizeof *wm * (size_t)C * rt->qdim) : NULL;
    if (!f || !wf || !sq || (need_wm && !wm)) {
        free(f), free(wf), free(sq), free(wm);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "the value norms of %s", rt->arch->name);
    }
    for (int l = 0; l < L; l++)
        if (rt->norms_done[l] < rt->layer_done[l]) {
            layer_norms(rt, l, rt->norms_done[l], rt->layer_done[l], f, wf, wm, sq);
            rt->norms_done[l] = rt->layer_done[l];
        }
    free(f), free(wf), free(sq), free(wm);
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
    int Tk;       /* the keys of a map: T, or a cross group's source positions */
    int cross;    /* 1: an encoder-decoder's cross-attention (rt_maps_take_cross) */
    RtAttn *attn; /* L */
    int *done;    /* L */
    float *q;     /* L × T × H·dh: the queries */
    float *kt;    /* L × KV × dh × T: the keys transposed */
    float *vn;    /* L × H × T: the keys' value norms (rt_value_norms), or NULL */
    float *rel;   /* the layers' relative position bias tables copied (attn[l].rel
                     points here: the weights may close before the copy), or NULL */
    int tame;     /* every query and key finite and below 1e18 in size: no
                     score can be NaN or overflow, so no weight is NaN */
};

/* The relative position bias tables m->attn's layers point to, copied
 * into m->rel and pointed to there: 0 or -1 (out of memory). */
static int copy_rel(RtMaps *m)
{
    size_t n = 0;
    for (int l = 0; l < m->L; l++)
        n += m->attn[l].rel ? (size_t)m->attn[l].rel_buckets * m->attn[l].rel_heads : 0;
    if (!n)
        return 0;
    if (!(m->rel = malloc(sizeof *m->rel * n)))
        return -1;
    float *at = m->rel;
    for (int l = 0; l < m->L; l++) {
        if (!m->attn[l].rel)
            continue;
        size_t k = (size_t)m->attn[l].rel_buckets * m->attn[l].rel_heads;
        memcpy(at, m->attn[l].rel, sizeof *at * k);
        m->attn[l].rel = at;
        at += k;
    }
    return 0;
}

RtMaps *rt_maps_take(const Rt *rt)
{
    const RtShape *s = &rt->sh;
    size_t L = (size_t)s->n_layer, T = (size_t)rt->T, qd = (size_t)rt->qdim;
    RtMaps *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    *m = (RtMaps){s->n_layer, s->n_head, s->n_kv_head, s->d_head, rt->T, rt->T, 0, NULL, NULL, NULL, NULL,
                  NULL, NULL, 0};
    m->attn = malloc(sizeof *m->attn * L);
    m->done = malloc(sizeof *m->done * L);
    m->q = malloc(sizeof *m->q * (L * T * qd + 1));
    m->kt = malloc(sizeof *m->kt * (L * (size_t)rt->kvdim * T + 1));
    if (!m->attn || !m->done || !m->q || !m->kt) {
        rt_maps_free(m);
        return NULL;
    }
    memcpy(m->attn, rt->attn, sizeof *m->attn * L);
    if (copy_rel(m) < 0) {
        rt_maps_free(m);
        return NULL;
    }
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

RtMaps *rt_maps_take_cross(const Rt *rt)
{
    const RtShape *s = &rt->sh;
    int Ts = rt->Ts > 0 ? rt->Ts : 0;
    size_t L = (size_t)s->n_layer, T = (size_t)rt->T, qd = (size_t)rt->qdim, kt_n = L * (size_t)rt->kvdim * Ts;
    RtMaps *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    *m = (RtMaps){s->n_layer, s->n_head, s->n_kv_head, s->d_head, rt->T, Ts, 1, NULL, NULL, NULL, NULL,
                  NULL, NULL, 0};
    m->attn = malloc(sizeof *m->attn * L);
    m->done = malloc(sizeof *m->done * L);
    m->q = malloc(sizeof *m->q * (L * T * qd + 1));
    m->kt = malloc(sizeof *m->kt * (kt_n + 1));
    if (!m->attn || !m->done || !m->q || !m->kt || !rt->xattn) {
        rt_maps_free(m);
        return NULL;
    }
    memcpy(m->attn, rt->xattn, sizeof *m->attn * L);
    if (copy_rel(m) < 0) {
        rt_maps_free(m);
        return NULL;
    }
    memcpy(m->done, rt->layer_done, sizeof *m->done * L);
    for (size_t l = 0; l < L && Ts; l++) /* no source yet: every row 0 */
        for (size_t i = 0; i < T; i++)
            memcpy(m->q + (l * T + i) * qd, rt_cross_q(rt, (int)l, (int)i), sizeof(float) * qd);
    if (Ts)
        memcpy(m->kt, rt->xkt, sizeof(float) * kt_n);
    else
        memset(m->done, 0, sizeof *m->done * L);
    int ok = 1;
    for (size_t k = 0; k < L * T * qd && Ts; k++)
        ok &= fabsf(m->q[k]) < 1e18f;
    for (size_t k = 0; k < kt_n; k++)
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
    free(m->rel);
    free(m);
}

int rt_maps_tame(const RtMaps *m)
{
    return m->tame;
}

int rt_maps_causal(const RtMaps *m, int layer)
{
    return m->attn[layer].causal;
}

int rt_maps_window(const RtMaps *m, int layer)
{
    return m->attn[layer].causal ? m->attn[layer].window : 0;
}

int rt_maps_T(const RtMaps *m)
{
    return m->T;
}

int rt_maps_Tk(const RtMaps *m)
{
    return m->Tk;
}

size_t rt_maps_bytes(const RtMaps *m)
{
    return sizeof(float) * (size_t)m->L *
           ((size_t)m->T * m->H * m->dh + (size_t)m->Tk * m->KV * m->dh + (m->vn ? (size_t)m->T * m->H : 0));
}

/* Rows [i0, i1) of a cross map (layer, head): every target row below done
 * over all Tk source keys (no mask), the rest 0, as rt_cross_map. */
static void cross_rows(const RtMaps *m, int layer, int head, float *out, size_t ld, int i0, int i1)
{
    size_t T = (size_t)m->T, qd = (size_t)m->H * m->dh;
    int g = head / (m->H / m->KV);
    const float *kt = m->kt + ((size_t)layer * m->KV + g) * m->dh * m->Tk;
    for (int i = i0; i < i1; i++) {
        float *row = out + (size_t)i * ld;
        int j0 = 0, j1 = 0;
        if (i < m->done[layer] && m->Tk > 0)
            rt_weights_row(&m->attn[layer], head, m->q + ((size_t)layer * T + i) * qd + (size_t)head * m->dh, kt,
                           m->Tk, m->dh, i, m->Tk, row, &j0, &j1);
        for (int j = 0; j < j0; j++)
            row[j] = 0.0f;
        for (int j = j1; j < m->Tk; j++)
            row[j] = 0.0f;
    }
}

/* Rows [i0, i1) of map (layer, head) of m. */
static void snap_rows(const RtMaps *m, int layer, int head, float *out, size_t ld, int i0, int i1)
{
    if (m->cross) {
        cross_rows(m, layer, head, out, ld, i0, i1);
        return;
    }
    size_t T = (size_t)m->T, qd = (size_t)m->H * m->dh;
    int g = head / (m->H / m->KV);
    rt_map_rows(&m->attn[layer], head, m->done[layer], m->q + (size_t)layer * T * qd + (size_t)head * m->dh,
             qd, m->kt + ((size_t)layer * m->KV + g) * m->dh * T, m->T, m->dh, m->T, out, ld, i0, i1);
}

/* The same rows of the norms map: the weights times the keys' norms (zeros
 * when m has none). */
static void snap_norm_rows(const RtMaps *m, int layer, int head, float *out, size_t ld, int i0,
                           int i1)
{
    if (!m->vn) {
        for (int i = i0; i < i1; i++)
            memset(out + (size_t)i * ld, 0, sizeof(float) * (size_t)m->Tk);
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
    ops_share(snap_piece, &j, (m->T + j.per - 1) / j.per, (double)m->T * m->Tk * m->dh / 2);
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
    int Tk;          /* each map's columns (an RtMaps's: T, or a cross group's source) */
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
            (j->norms ? snap_norm_rows : snap_rows)(j->src, l, h, j->scratch[k], (size_t)j->Tk, 0, j->T);
        j->fn(j->user, l, h, j->scratch[k]);
    }
}

static int each(EachJob *j, int dh)
{
    size_t one = (size_t)j->T * j->Tk + 1;
    j->scratch[0] = malloc(sizeof(float) * one);
    j->scratch[1] = malloc(sizeof(float) * one);
    int rc = j->scratch[0] && j->scratch[1] ? 0 : -ATTN_E_NOMEM;
    if (rc == 0)
        ops_share(each_piece, j, 2, (double)j->n * j->T * j->Tk * dh);
    free(j->scratch[0]);
    free(j->scratch[1]);
    return rc;
}

int rt_maps_each(const RtMaps *m, void (*fn)(void *user, int layer, int head, const float *map),
                 void *user)
{
    EachJob j = {m, 0, 0, m->L * m->H, m->H, m->T, m->Tk, 0, fn, user, {NULL, NULL}};
    return each(&j, m->dh);
}

int rt_maps_norms_each(const RtMaps *m, void (*fn)(void *user, int layer, int head, const float *map),
                       void *user)
{
    if (!m->vn)
        return -ATTN_E_RANGE;
    EachJob j = {m, 0, 0, m->L * m->H, m->H, m->T, m->Tk, 1, fn, user, {NULL, NULL}};
    return each(&j, m->dh);
}

int rt_layer_each(const Rt *rt, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                  void *user)
{
    EachJob j = {rt, 1, layer, rt->sh.n_head, rt->sh.n_head, rt->T, rt->T, 0, fn, user, {NULL, NULL}};
    return each(&j, rt->sh.d_head);
}

int rt_layer_norms_each(Rt *rt, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                        void *user)
{
    AttnErr err = {0};
    if (rt_value_norms(rt, &err) < 0 || !rt_norms_of(rt, layer, 0))
        return -ATTN_E_RANGE;
    EachJob j = {rt, 1, layer, rt->sh.n_head, rt->sh.n_head, rt->T, rt->T, 1, fn, user, {NULL, NULL}};
    return each(&j, rt->sh.d_head);
}
