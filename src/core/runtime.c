/* The runtime of runtime.h: the state and its growth, the layer loop with
 * its hooks and the reused prefix, the rotary embedding, a layer's
 * attention a row at a time, maps recomputed from the cache, queries and
 * keys, logits and top k (the value norms and the maps copied out:
 * runtime_maps.c). Plain C, libm and the worker thread; no file,
 * no screen. */
#include "attnviz/runtime.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "attnviz/attn.h"
#include "lm_kernels.h"
#include "ops.h"
#include "runtime_internal.h"

/* ---- the rotary embedding ------------------------------------------------------ */

/* The inverse frequencies θ^(−2e/d), e < d/2, and their scaling: linear
 * (divided by factor), Llama 3's (transformers' _compute_llama3_parameters:
 * wavelengths longer than the original context / low_freq_factor divided by
 * factor, shorter than original / high_freq_factor kept, the ones between
 * blended) or longrope's (divided by the short or, when lng, the long
 * factor of each: _compute_longrope_parameters). */
static void inv_freqs(double *f, const RopeSpec *r, int d, int lng)
{
    for (int e = 0; e < d / 2; e++) {
        double inv = 1.0 / pow(r->theta, (2.0 * e) / d);
        if (r->scaling == ROPE_SCALE_LINEAR) {
            inv /= r->factor;
        } else if (r->scaling == ROPE_SCALE_LLAMA3) {
            double old = r->orig_max, wavelen = 2.0 * 3.14159265358979323846 / inv;
            double low_wl = old / r->low_freq, high_wl = old / r->high_freq;
            if (wavelen > low_wl) {
                inv /= r->factor;
            } else if (wavelen >= high_wl) {
                double smooth = (old / wavelen - r->low_freq) / (r->high_freq - r->low_freq);
                inv = (1.0 - smooth) * inv / r->factor + smooth * inv;
            }
        } else if (r->scaling == ROPE_SCALE_LONGROPE) {
            inv /= lng ? r->long_f[e] : r->short_f[e];
        }
        f[e] = inv;
    }
}

/* Rotate n heads (stride d) of one position in place by the angles whose
 * cos and sin are cs[e], cs[dims/2 + e]. */
static void rotate(float *v, int n, int d, int dims, RopeKind kind, const double *cs)
{
    int half = dims / 2;
    for (int h = 0; h < n; h++, v += d)
        for (int e = 0; e < half; e++) {
            float *pa = kind == ROPE_HALF ? &v[e] : &v[2 * e];
            float *pb = kind == ROPE_HALF ? &v[e + half] : &v[2 * e + 1];
            double a = *pa, b = *pb, co = cs[e], si = cs[half + e];
            *pa = (float)(a * co - b * si);
            *pb = (float)(b * co + a * si);
        }
}

static const RopeSpec *rope_spec(const Rt *rt, int which)
{
    return which ? &rt->sh.rope2 : &rt->sh.rope;
}

static int rope_dims(const Rt *rt, int which)
{
    const RopeSpec *r = rope_spec(rt, which);
    return r->kind == ROPE_NONE ? 0 : r->dims > 0 ? r->dims : rt->sh.d_head;
}

void rt_rope_with(Rt *rt, int l, int start, int T, int which)
{
    int dims = rope_dims(rt, which), dh = rt->sh.d_head;
    RopeKind kind = rope_spec(rt, which)->kind;
    for (int i = start; i < T && dims; i++) {
        const double *cs = rt->rope[which] + (size_t)i * dims;
        float *q = rt_qkv(rt, l, i);
        rotate(q, rt->sh.n_head, dh, dims, kind, cs);
        rotate(q + rt->qdim, rt->sh.n_kv_head, dh, dims, kind, cs);
    }
}

void rt_rope(Rt *rt, int l, int start, int T)
{
    rt_rope_with(rt, l, start, T, 0);
}

/* The cos and sin of positions [start, T) of both rotary embeddings. */
static void rope_angles(Rt *rt, int start, int T)
{
    for (int k = 0; k < 2; k++) {
        int dims = rope_dims(rt, k);
        const RopeSpec *r = rope_spec(rt, k);
        double m = r->scaling == ROPE_SCALE_LONGROPE && r->attn_factor != 0.0 ? r->attn_factor : 1.0;
        for (int i = start; i < T && dims; i++) {
            double *cs = rt->rope[k] + (size_t)i * dims;
            for (int e = 0; e < dims / 2; e++) {
                double a = i * rt->inv_freq[k][e];
                cs[e] = cos(a) * m;
                cs[dims / 2 + e] = sin(a) * m;
            }
        }
    }
}

/* Longrope's factors for T tokens: 1 long, 0 short (also without longrope). */
static int rope_long_for(const Rt *rt, int T)
{
    for (int k = 0; k < 2; k++) {
        const RopeSpec *r = rope_spec(rt, k);
        if (r->kind != ROPE_NONE && r->scaling == ROPE_SCALE_LONGROPE)
            return T > r->orig_max;
    }
    return 0;
}

static void rope_freqs(Rt *rt, int lng)
{
    for (int k = 0; k < 2; k++)
        if (rope_dims(rt, k))
            inv_freqs(rt->inv_freq[k], rope_spec(rt, k), rope_dims(rt, k), lng);
    rt->rope_long = lng;
}

/* ---- the state ------------------------------------------------------------------- */

int rt_create(Rt **out, const RtArch *arch, const void *cfg, AttnErr *err)
{
    *out = NULL;
    int rc = arch->check(cfg, err);
    if (rc < 0)
        return rc;
    Rt *rt = calloc(1, sizeof *rt);
    if (!rt)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "%s state", arch->name);
    rt->arch = arch;
    if (!(rt->cfg = malloc(arch->cfg_size))) {
        free(rt);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "%s state", arch->name);
    }
    memcpy(rt->cfg, cfg, arch->cfg_size);
    arch->shape(rt->cfg, &rt->sh);
    const RtShape *s = &rt->sh;
    rt->qdim = s->n_head * s->d_head;
    rt->kvdim = s->n_kv_head * s->d_head;
    rt->qkv_w = rt->qdim + 2 * rt->kvdim;
    size_t zeros = (size_t)rt->qkv_w;
    zeros = zeros < (size_t)s->hidden ? (size_t)s->hidden : zeros;
    for (int k = 0; k < s->n_rows; k++)
        zeros = zeros < (size_t)s->row_w[k] ? (size_t)s->row_w[k] : zeros;
    if (!(rt->ids = calloc((size_t)s->n_positions, sizeof *rt->ids)) ||
        !(rt->layer_done = calloc((size_t)s->n_layer, sizeof *rt->layer_done)) ||
        !(rt->attn = calloc((size_t)s->n_layer, sizeof *rt->attn)) ||
        !(rt->xf = malloc((size_t)s->hidden * sizeof *rt->xf)) ||
        !(rt->zero = calloc(zeros, sizeof *rt->zero)) ||
        !(rt->ablated = calloc((size_t)s->n_layer * s->n_head, 1)) ||
        !(rt->wo = calloc((size_t)s->n_layer, sizeof *rt->wo)) ||
        !(rt->wom = calloc((size_t)s->n_layer, sizeof *rt->wom)) ||
        !(rt->norms_done = calloc((size_t)s->n_layer, sizeof *rt->norms_done)) ||
        !(rt->inv_freq[0] = malloc((size_t)(s->d_head / 2 + 1) * sizeof(double))) ||
        !(rt->inv_freq[1] = malloc((size_t)(s->d_head / 2 + 1) * sizeof(double)))) {
        rt_destroy(rt);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "%s state", arch->name);
    }
    rope_freqs(rt, 0);
    rt->Ts = -1;
    if (arch->encoder) {
        int rc2 = rt_create(&rt->enc, arch->encoder, cfg, err);
        if (rc2 < 0 || !(rt->xattn = calloc((size_t)s->n_layer, sizeof *rt->xattn))) {
            rt_destroy(rt);
            return rc2 < 0 ? rc2 : attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "%s state", arch->name);
        }
    }
    *out = rt;
    return 0;
}

void rt_destroy(Rt *rt)
{
    if (!rt)
        return;
    free(rt->cfg);
    free(rt->ids);
    free(rt->layer_done);
    free(rt->attn);
    free(rt->qkv);
    free(rt->kt);
    free(rt->x);
    free(rt->xn);
    free(rt->out);
    free(rt->z);
    for (int k = 0; k < 4; k++)
        free(rt->rows[k]);
    free(rt->hrow);
    for (int k = 0; k < 2; k++) {
        free(rt->rope[k]);
        free(rt->inv_freq[k]);
    }
    free(rt->zero);
    free(rt->xf);
    free(rt->ablated);
    free(rt->wo);
    free(rt->wom);
    free(rt->vnorm);
    free(rt->norms_done);
    rt_destroy(rt->enc);
    free(rt->xq);
    free(rt->xkv);
    free(rt->xkt);
    free(rt->xrow);
    free(rt->xmem);
    free(rt->xattn);
    free(rt);
}

void rt_reset(Rt *rt)
{
    rt->T = 0;
    rt->n_done = 0;
    memset(rt->layer_done, 0, sizeof *rt->layer_done * (size_t)rt->sh.n_layer);
    memset(rt->norms_done, 0, sizeof *rt->norms_done * (size_t)rt->sh.n_layer);
}

/* The positions to allocate for T: half again cap, at least T, a multiple
 * of 16, at most max. */
static int next_cap(int cap, int T, int max)
{
    int n = cap + cap / 2;
    n = n < T ? T : n;
    n = (n + 15) / 16 * 16;
    return n > max ? max : n;
}

/* The floats the state holds per position of capacity (the cache, the
 * transposed keys, the per-position rows, four weight rows per head) and the
 * rotary table's doubles: in 64 bits, as it may not fit in size_t where
 * that has 32 (wasm32). */
static unsigned long long bytes_for(const Rt *rt, size_t cap)
{
    const RtShape *s = &rt->sh;
    unsigned long long per = (unsigned long long)s->n_layer * (rt->qkv_w + rt->kvdim + s->n_head) +
                             3ULL * (unsigned long long)s->hidden + (unsigned long long)rt->qdim +
                             4ULL * (unsigned long long)s->n_head;
    for (int k = 0; k < s->n_rows; k++)
        per += (unsigned long long)s->row_w[k];
    if (rt->arch->encoder) /* the cross queries */
        per += (unsigned long long)s->n_layer * rt->qdim;
    unsigned long long dbl = (unsigned long long)rope_dims(rt, 0) + (unsigned long long)rope_dims(rt, 1);
    return cap * (per * sizeof(float) + dbl * sizeof(double));
}

/* *out = a * b * c * d, or 0 when the product does not fit in size_t: a
 * 32-bit size_t (wasm32) would wrap a long context's cache to a small
 * block, then written past its end. */
static int size_mul(size_t *out, size_t a, size_t b, size_t c, size_t d)
{
    size_t f[3] = {b, c, d}, p = a;
    for (int i = 0; i < 3; i++) {
        if (f[i] && p > SIZE_MAX / f[i])
            return 0;
        p *= f[i];
    }
    *out = p;
    return 1;
}

/* The cache and the transposed keys moved to nc positions (the first keep
 * kept), everything else reallocated: 0, or -ATTN_E_NOMEM with the state
 * as it was (a block already grown only larger). */
static int grow(Rt *rt, size_t nc, size_t keep)
{
    const RtShape *s = &rt->sh;
    size_t oc = (size_t)rt->cap, L = (size_t)s->n_layer, W = (size_t)rt->qkv_w;
    size_t kt_rows = L * (size_t)rt->kvdim, vn_rows = L * (size_t)s->n_head;
    size_t nq, nk, nv, nx, nr = 0;
    if (!size_mul(&nq, L, nc, W, sizeof(float)) || !size_mul(&nk, kt_rows, nc, 1, sizeof(float)) ||
        !size_mul(&nv, vn_rows, nc, 1, sizeof(float)) ||
        !size_mul(&nx, nc, (size_t)s->hidden, 1, sizeof(float)) ||
        !size_mul(&nr, nc, (size_t)rope_dims(rt, 0) + (size_t)rope_dims(rt, 1), 1, sizeof(double)))
        return -ATTN_E_NOMEM;
    size_t nxq = 0;
    if (rt->arch->encoder && !size_mul(&nxq, L, nc, (size_t)rt->qdim, sizeof(float)))
        return -ATTN_E_NOMEM;
    float *qkv = malloc(nq), *kt = malloc(nk);
    float *vn = malloc(nv), *xq = nxq ? malloc(nxq) : NULL;
    int ok = qkv && kt && vn && (!nxq || xq);
    if (ok) {
        float *x = realloc(rt->x, nx);
        ok = x != NULL;
        if (ok)
            rt->x = x;
    }
    for (int k = 0; k < 2 && ok; k++)
        if (rope_dims(rt, k)) {
            double *r = realloc(rt->rope[k], nc * (size_t)rope_dims(rt, k) * sizeof *r);
            ok = r != NULL;
            if (ok)
                rt->rope[k] = r;
        }
    if (!ok) {
        free(qkv);
        free(kt);
        free(vn);
        free(xq);
        return -ATTN_E_NOMEM;
    }
    for (size_t l = 0; l < L && keep && xq; l++)
        memcpy(xq + l * nc * (size_t)rt->qdim, rt->xq + l * oc * (size_t)rt->qdim,
               keep * (size_t)rt->qdim * sizeof(float));
    if (xq) {
        free(rt->xq);
        rt->xq = xq;
    }
    for (size_t l = 0; l < L && keep; l++)
        memcpy(qkv + l * nc * W, rt->qkv + l * oc * W, keep * W * sizeof(float));
    for (size_t r = 0; r < kt_rows && keep; r++)
        memcpy(kt + r * nc, rt->kt + r * oc, keep * sizeof(float));
    for (size_t r = 0; r < vn_rows; r++) { /* the new positions' norms 0 until made */
        if (keep)
            memcpy(vn + r * nc, rt->vnorm + r * oc, keep * sizeof(float));
        memset(vn + r * nc + keep, 0, (nc - keep) * sizeof(float));
    }
    free(rt->qkv);
    free(rt->kt);
    free(rt->vnorm);
    rt->qkv = qkv;
    rt->kt = kt;
    rt->vnorm = vn;
    rt->cap = (int)nc;
    return 0;
}

/* The forward's scratch for n positions (xn, out, z, four rows of weights
 * per head, the layer's own rows), or none (n = 0): held only while a forward
 * runs, so that a state between forwards keeps the cache and the residual
 * stream alone (a keystroke touches one row of each: its other pages are
 * never faulted in). 0 or -ATTN_E_NOMEM (none held). */
static int scratch(Rt *rt, size_t n)
{
    const RtShape *s = &rt->sh;
    float **p[] = {&rt->xn, &rt->out, &rt->z, &rt->hrow,
                   &rt->rows[0], &rt->rows[1], &rt->rows[2], &rt->rows[3]};
    size_t width[] = {(size_t)s->hidden, (size_t)s->hidden, (size_t)rt->qdim, (size_t)s->n_head * 4,
                      (size_t)s->row_w[0], (size_t)s->row_w[1], (size_t)s->row_w[2],
                      (size_t)s->row_w[3]};
    int k, count = 4 + s->n_rows, ok = 1;
    for (k = 0; k < 8; k++) {
        free(*p[k]);
        *p[k] = NULL;
    }
    for (k = 0; k < count && n && ok; k++) {
        size_t bytes;
        ok = size_mul(&bytes, n, width[k], 1, sizeof(float)) && (*p[k] = malloc(bytes)) != NULL;
    }
    if (!ok)
        scratch(rt, 0);
    return ok ? 0 : -ATTN_E_NOMEM;
}

/* ---- attention ------------------------------------------------------------------- */

/* The keys query i sees: [*j0, return). */
static int keys_of(const RtAttn *a, int i, int T, int *j0)
{
    int b = 0, e = a->causal ? i + 1 : T;
    if (a->window > 0) {
        b = i - a->window + 1 > 0 ? i - a->window + 1 : 0;
        if (!a->causal)
            e = i + a->window < T ? i + a->window : T;
    }
    *j0 = b;
    return e;
}

static void weights_of_scores(const RtAttn *a, int h, int i, float *row, int b, int e);

/* Row i (T keys) of a head whose query is q and whose key-value head's keys
 * are kt (d_head rows of ldk) into row: the keys it sees weighted, the
 * others exactly 0 before *j0 (row[*j1..T) is not written). The forward,
 * rt_map and rt_maps_map all compute rows here. */
void rt_weights_row(const RtAttn *a, int h, const float *q, const float *kt, int ldk, int dh,
                        int i, int T, float *row, int *j0, int *j1)
{
    int b, e = keys_of(a, i, T, &b);
    lm_kernel_set()->scores(row + b, q, kt + b, ldk, dh, e - b);
    weights_of_scores(a, h, i, row, b, e);
    *j0 = b;
    *j1 = e;
}

/* Row i's scores [b, e) (keys_of's) into its weights (the scalings, the
 * relative bias, the soft cap, the softmax), row[0 … b) set to 0. */
static void weights_of_scores(const RtAttn *a, int h, int i, float *row, int b, int e)
{
    if (a->div1 != 0.0f)
        for (int j = b; j < e; j++)
            row[j] /= a->div1;
    if (a->div2 != 0.0f)
        for (int j = b; j < e; j++)
            row[j] /= a->div2;
    if (a->mul != 0.0f)
        for (int j = b; j < e; j++)
            row[j] *= a->mul;
    if (a->rel)
        for (int j = b; j < e; j++)
            row[j] += a->rel[(size_t)rt_rel_bucket(j - i, !a->causal, a->rel_buckets, a->rel_max) *
                                 a->rel_heads + h];
    if (a->softcap != 0.0f)
        for (int j = b; j < e; j++)
            row[j] = a->softcap * tanhf(row[j] / a->softcap);
    attn_softmax_row(row + b, e - b, e - b);
    for (int j = 0; j < b; j++)
        row[j] = 0.0f;
}

int rt_rel_bucket(int d, int bidir, int buckets, int max_dist)
{
    int b = 0, n = buckets;
    if (bidir) {
        n /= 2;
        b = d > 0 ? n : 0;
        d = d < 0 ? -d : d;
    } else {
        d = d < 0 ? -d : 0; /* only the past: a future key's distance 0 */
    }
    int exact = n / 2;
    if (d < exact)
        return b + d;
    /* in float32 as transformers computes it (a bucket's edge moves with
       the rounding) */
    float f = logf((float)d / (float)exact) / (float)log((double)max_dist / exact) *
              (float)(n - exact);
    int large = exact + (int)f;
    return b + (large < n - 1 ? large : n - 1);
}

double rt_attn_score(const RtAttn *a, double s)
{
    return rt_attn_score_at(a, s, -1, 0, 0);
}

double rt_attn_score_at(const RtAttn *a, double s, int h, int i, int j)
{
    if (a->div1 != 0.0f)
        s /= a->div1;
    if (a->div2 != 0.0f)
        s /= a->div2;
    if (a->mul != 0.0f)
        s *= a->mul;
    if (a->rel && h >= 0)
        s += a->rel[(size_t)rt_rel_bucket(j - i, !a->causal, a->rel_buckets, a->rel_max) *
                        a->rel_heads + h];
    if (a->softcap != 0.0f)
        s = a->softcap * tanh(s / a->softcap);
    return s;
}

/* One step in words: "÷ √64" when it divides by √d_head (or multiplies by
 * its inverse, to the float), else "÷ x" or "× x". */
static size_t step_words(char *buf, size_t n, int first, int divide, float x, int d_head)
{
    float root = (float)sqrt((double)d_head), inv = (float)(1.0 / sqrt((double)d_head));
    const char *sep = first ? "" : " ";
    int r = (divide && x == root) || (!divide && x == inv)
                ? snprintf(buf, n, "%s\xC3\xB7 \xE2\x88\x9A%d", sep, d_head)
                : snprintf(buf, n, "%s%s %g", sep, divide ? "\xC3\xB7" : "\xC3\x97", (double)x);
    return r < 0 ? 0 : (size_t)r < n ? (size_t)r : n;
}

void rt_attn_describe(const RtAttn *a, int d_head, char *buf, size_t n)
{
    size_t u = 0;
    if (n)
        buf[0] = '\0';
    if (a->div1 != 0.0f)
        u += step_words(buf + u, n - u, u == 0, 1, a->div1, d_head);
    if (a->div2 != 0.0f && u < n)
        u += step_words(buf + u, n - u, u == 0, 1, a->div2, d_head);
    if (a->mul != 0.0f && u < n)
        u += step_words(buf + u, n - u, u == 0, 0, a->mul, d_head);
    if (a->rel && u < n)
        u += (size_t)snprintf(buf + u, n - u, "%s+ the relative position bias of j \xE2\x88\x92 i",
                              u ? " " : "");
    u = u < n ? u : n;
    if (a->softcap != 0.0f && u < n)
        snprintf(buf + u, n - u, ", then %g \xC2\xB7 tanh(s / %g)", (double)a->softcap, (double)a->softcap);
}

const RtAttn *rt_layer_attn(const Rt *rt, int layer)
{
    return &rt->attn[layer];
}

/* Head h's keys in layer l, transposed: d_head rows of cap. */
static const float *head_kt(const Rt *rt, int l, int h)
{
    return rt->kt + ((size_t)l * rt->sh.n_kv_head + rt_kv_head(rt, h)) * rt->sh.d_head * rt->cap;
}

typedef struct AttnJob {
    Rt *rt;
    int layer, start, T, own_keys; /* own_keys: each head its own key-value head's keys */
} AttnJob;

/* Key-value head g's keys of rows [start, T) into its transposed keys. */
static void keys_piece(const void *arg, int g)
{
    const AttnJob *jb = arg;
    Rt *rt = jb->rt;
    int dh = rt->sh.d_head, l = jb->layer;
    float *kt = rt->kt + ((size_t)l * rt->sh.n_kv_head + g) * dh * rt->cap;
    for (int d = 0; d < dh; d++)
        for (int i = jb->start; i < jb->T; i++)
            kt[(size_t)d * rt->cap + i] = rt_qkv(rt, l, i)[rt->qdim + g * dh + d];
}

/* Query head h for rows [start, T), four at a time: their scores into its
 * four scratch rows (four queries against one load of the keys: the
 * union of the keys they see, each score the chain rt_weights_row's
 * gives), then each row's weights (rt_weights_row's from there on) and its
 * context z from the key-value head's values (four rows at once when they
 * see the same keys: a bidirectional model's). */
static void attn_head(const void *arg, int h)
{
    const AttnJob *jb = arg;
    Rt *rt = jb->rt;
    int dh = rt->sh.d_head, g = rt_kv_head(rt, h), W = rt->qkv_w, l = jb->layer, T = jb->T;
    const RtAttn *a = &rt->attn[l];
    size_t cap = (size_t)rt->cap;
    float *rows = rt->hrow + (size_t)h * 4 * cap;
    const float *v = rt_qkv(rt, l, 0) + rt->qdim + rt->kvdim + g * dh;
    const float *kt = head_kt(rt, l, h);
    if (jb->own_keys)
        keys_piece(jb, g);
    for (int i = jb->start; i < T; i += 4) {
        int R = T - i < 4 ? T - i : 4, b[4], e[4], lo = T, hi = 0;
        for (int r = 0; r < R; r++) {
            e[r] = keys_of(a, i + r, T, &b[r]);
            lo = b[r] < lo ? b[r] : lo;
            hi = e[r] > hi ? e[r] : hi;
        }
        const float *q = rt_qkv(rt, l, i) + h * dh;
        if (R == 4)
            lm_kernel_set()->scores4(rows + lo, (int)cap, q, W, kt + lo, (int)cap, dh, hi - lo);
        else
            for (int r = 0; r < R; r++)
                lm_kernel_set()->scores(rows + r * cap + b[r], q + (size_t)r * W, kt + b[r],
                                        (int)cap, dh, e[r] - b[r]);
        int same = R == 4; /* the four see the same keys */
        for (int r = 0; r < R; r++)
            same = same && b[r] == lo && e[r] == hi;
        for (int r = 0; r < R; r++) {
            float *row = rows + r * cap;
            weights_of_scores(a, h, i + r, row, b[r], e[r]);
            if (rt->hooks && rt->hooks->row)
                rt->hooks->row(rt->hooks->user, l, h, i + r, row, e[r]);
            if (!same)
                lm_kernel_set()->context(rt->z + (size_t)(i + r) * rt->qdim + h * dh,
                                         row + b[r], v + (size_t)b[r] * W, W, e[r] - b[r], dh);
        }
        if (same)
            lm_kernel_set()->context4(rt->z + (size_t)i * rt->qdim + h * dh, rt->qdim, rows + lo,
                                      (int)cap, v + (size_t)lo * W, W, hi - lo, dh);
    }
}

int rt_ablate(Rt *rt, int layer, int head, int on)
{
    if (layer < 0 || layer >= rt->sh.n_layer || head < 0 || head >= rt->sh.n_head)
        return -1;
    unsigned char *c = &rt->ablated[(size_t)layer * rt->sh.n_head + head];
    if (*c != (on != 0)) {
        *c = on != 0;
        rt->n_ablated += on ? 1 : -1;
        rt_reset(rt); /* every position from this layer on changes */
    }
    return 0;
}

void rt_ablate_mean(Rt *rt, int on)
{
    if (rt->ablate_mean != (on != 0)) {
        rt->ablate_mean = on != 0;
        if (rt->n_ablated)
            rt_reset(rt);
    }
}

int rt_is_ablated(const Rt *rt, int layer, int head)
{
    return layer >= 0 && layer < rt->sh.n_layer && head >= 0 && head < rt->sh.n_head &&
           rt->ablated[(size_t)layer * rt->sh.n_head + head];
}

/* Layer l's ablated heads' context rows [start, T) of rt->z: zeros, or the
 * head's mean over all T rows (summed in double; the forward computed rows
 * [0, T) when the mode is mean, start is then 0). */
static void ablate_heads(Rt *rt, int l, int start, int T)
{
    int dh = rt->sh.d_head, H = rt->sh.n_head;
    for (int h = 0; h < H; h++) {
        if (!rt->ablated[(size_t)l * H + h])
            continue;
        for (int d = 0; d < dh; d++) {
            double sum = 0;
            for (int i = 0; rt->ablate_mean && i < T; i++)
                sum += rt_row(rt->z, rt->qdim, i)[h * dh + d];
            float v = rt->ablate_mean ? (float)(sum / T) : 0.0f;
            for (int i = start; i < T; i++)
                rt_row(rt->z, rt->qdim, i)[h * dh + d] = v;
        }
    }
}

void rt_attend(Rt *rt, int l, int start, int T, const RtAttn *a)
{
    int KV = rt->sh.n_kv_head, n = T - start;
    rt->attn[l] = *a;
    AttnJob aj = {rt, l, start, T, KV == rt->sh.n_head};
    /* the keys transposed by key-value head on the two threads (bert-base's
       128 rows: 98 304 floats a layer, read a row apart): in each head's job
       when no other head reads them (a handoff fewer), else a job first */
    if (!aj.own_keys)
        ops_share(keys_piece, &aj, KV, 4.0 * n * KV * rt->sh.d_head);
    ops_share(attn_head, &aj, rt->sh.n_head, 2.0 * n * (start + T) * rt->qdim);
    if (rt->n_ablated)
        ablate_heads(rt, l, start, T);
}

void rt_project(const Rt *rt, float *out, int ldo, const float *A, int lda, const float *W,
                const RtMat *wm, const float *bias, int n, int k, int m)
{
    if (wm)
        ops_linear_mat(out, ldo, A, lda, wm, bias, n, k, m);
    else
        ops_linear(out, ldo, A, lda, W, bias ? bias : rt->zero, n, k, m);
}

void rt_project_act(const Rt *rt, float *out, int ldo, const float *A, int lda, const float *W,
                    const RtMat *wm, const float *bias, int n, int k, int m, int act)
{
    if (wm) {
        ops_linear_mat(out, ldo, A, lda, wm, bias, n, k, m);
        ops_activate(out, ldo, n, 0, m, (OpsAct)act);
    } else {
        ops_linear_act(out, ldo, A, lda, W, bias ? bias : rt->zero, n, k, m, (OpsAct)act);
    }
}

void rt_project_each(const Rt *rt, const RtProj *p, int np, const float *A, int lda, int n, int k)
{
    for (int i0 = 0; i0 < np; i0 += OPS_BATCH_MAX) {
        RtProj q[OPS_BATCH_MAX];
        int c = np - i0 < OPS_BATCH_MAX ? np - i0 : OPS_BATCH_MAX;
        for (int i = 0; i < c; i++) /* a float32 product's bias never NULL */
            q[i] = p[i0 + i], q[i].bias = q[i].wm || q[i].bias ? q[i].bias : rt->zero;
        ops_linear_batch(q, c, A, lda, n, k);
    }
}

void rt_embed_row(float *dst, const float *table, const RtMat *m, int id, int C)
{
    if (m)
        ops_mat_row(dst, m, id, C);
    else
        memcpy(dst, table + (size_t)id * C, (size_t)C * sizeof(float));
}

void rt_vocab_dots(float *out, const float *x, const float *rows, const RtMat *m, int C, int V)
{
    if (m)
        ops_linear_mat(out, V, x, C, m, NULL, 1, C, V);
    else
        ops_dots(out, x, rows, C, V);
}

void rt_out_project(Rt *rt, int l, float *out, int ldo, const float *A, int lda, const float *W,
                    const RtMat *wm, const float *bias, int n, int k, int m)
{
    rt->wo[l] = wm ? NULL : W;
    rt->wom[l] = wm;
    rt_project(rt, out, ldo, A, lda, W, wm, bias, n, k, m);
}

/* ---- the forward ----------------------------------------------------------------- */

/* Where a forward copies one position's residual stream (the logit lens):
 * row pos of rt->x after the embedding into rows, after layer l into
 * rows + (l + 1)·C; only when pos is computed. */
typedef struct Tap {
    int pos;
    float *rows;
} Tap;

static void tap_copy(const Rt *rt, const Tap *tap, int k, int start, int T)
{
    int C = rt->sh.hidden;
    if (tap && tap->pos >= start && tap->pos < T)
        memcpy(tap->rows + (size_t)k * C, rt_row(rt->x, C, tap->pos), (size_t)C * sizeof(float));
}

static int forward(Rt *rt, const void *w, const int *ids, int T, const ForwardHooks *hooks,
                   const Tap *tap, AttnErr *err)
{
    const RtShape *s = &rt->sh;
    if (T < 0 || T > s->n_positions)
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, NULL, 0,
                            "%d tokens: this model takes at most %d", T, s->n_positions);
    for (int i = 0; i < T; i++)
        if (ids[i] < 0 || ids[i] >= s->n_vocab)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "token %d (position %d) is not below the vocabulary's %d", ids[i],
                                i, s->n_vocab);
    /* the first position to compute: the first changed or not yet done */
    int start = 0, lim = T < rt->n_done ? T : rt->n_done;
    int all = s->bidirectional || (rt->n_ablated && rt->ablate_mean); /* a mean reads every row */
    while (!all && start < lim && ids[start] == rt->ids[start])
        start++;
    int lng = rope_long_for(rt, T);
    if (lng != rt->rope_long)
        start = 0; /* longrope's factors changed: every angle does */
    int cap = T > rt->cap ? next_cap(rt->cap, T, s->n_positions) : rt->cap;
    if ((T > rt->cap && grow(rt, (size_t)cap, (size_t)rt->T) < 0) || scratch(rt, (size_t)cap) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "%s state for %d tokens (%llu bytes)",
                            rt->arch->name, T, bytes_for(rt, (size_t)cap));
    if (lng != rt->rope_long)
        rope_freqs(rt, lng);
    memcpy(rt->ids, ids, (size_t)T * sizeof *ids);
    rt->T = T;
    rt->n_done = start;
    for (int l = 0; l < s->n_layer; l++) {
        rt->layer_done[l] = rt->layer_done[l] < start ? rt->layer_done[l] : start;
        rt->norms_done[l] = rt->norms_done[l] < start ? rt->norms_done[l] : start;
    }

    rt->hooks = hooks;
    rt->arch->embed(rt, w, ids, start, T);
    tap_copy(rt, tap, 0, start, T);
    rope_angles(rt, start, T);
    for (int l = 0; l < s->n_layer; l++) {
        if (hooks && hooks->cancel && hooks->cancel(hooks->user)) {
            rt->hooks = NULL;
            scratch(rt, 0);
            return attn_err_set(err, ATTN_E_CANCELLED, NULL, 0, "at layer %d", l);
        }
        if (start < T) {
            rt->arch->layer(rt, w, l, start, T);
            rt->n_computed += T - start;
        }
        rt->layer_done[l] = T;
        tap_copy(rt, tap, l + 1, start, T);
        if (hooks && hooks->layer_done)
            hooks->layer_done(hooks->user, l);
    }
    rt->n_done = T;
    rt->hooks = NULL;
    scratch(rt, 0);
    return 0;
}

int rt_forward_plain(Rt *rt, const void *w, const int *ids, int T, const ForwardHooks *hooks,
                     AttnErr *err)
{
    return forward(rt, w, ids, T, hooks, NULL, err);
}

int rt_forward(Rt *rt, const void *w, const int *ids, int T, const ForwardHooks *hooks,
               AttnErr *err)
{
    if (rt->arch->encoder)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "%s is an encoder-decoder: its forward takes a source and a target",
                            rt->arch->name);
    return forward(rt, w, ids, T, hooks, NULL, err);
}

/* ---- maps, queries, keys ----------------------------------------------------------- */

/* A map's rows [i0, i1) of T into out (row stride ld): rows below done
 * from the queries (q: row 0's, q_step floats to the next position) and
 * keys, the rest 0. */
void rt_map_rows(const RtAttn *a, int h, int done, const float *q, size_t q_step, const float *kt,
                 int ldk, int dh, int T, float *out, size_t ld, int i0, int i1)
{
    for (int i = i0; i < i1; i++) {
        float *row = out + (size_t)i * ld;
        int j0 = 0, j1 = 0;
        if (i < done)
            rt_weights_row(a, h, q + (size_t)i * q_step, kt, ldk, dh, i, done, row, &j0, &j1);
        for (int j = j1; j < T; j++)
            row[j] = 0.0f;
    }
}

void rt_map(const Rt *rt, int layer, int head, float *out, size_t ld)
{
    rt_map_rows(&rt->attn[layer], head, rt->layer_done[layer], rt_query(rt, layer, head, 0),
             (size_t)rt->qkv_w, head_kt(rt, layer, head), rt->cap, rt->sh.d_head, rt->T, out, ld, 0,
             rt->T);
}

typedef struct MapsJob {
    const Rt *rt;
    float *out;
} MapsJob;

static void map_piece(const void *arg, int m)
{
    const MapsJob *j = arg;
    size_t T = (size_t)j->rt->T;
    rt_map(j->rt, m / j->rt->sh.n_head, m % j->rt->sh.n_head, j->out + (size_t)m * T * T, T);
}

void rt_maps_copy(const Rt *rt, float *out)
{
    MapsJob j = {rt, out};
    double T = rt->T;
    ops_share(map_piece, &j, rt->sh.n_layer * rt->sh.n_head,
              T * T * rt->sh.d_head * rt->sh.n_layer * rt->sh.n_head);
}

const float *rt_query(const Rt *rt, int layer, int head, int i)
{
    return rt_qkv(rt, layer, i) + (size_t)head * rt->sh.d_head;
}

const float *rt_key(const Rt *rt, int layer, int head, int j)
{
    return rt_qkv(rt, layer, j) + rt->qdim + (size_t)rt_kv_head(rt, head) * rt->sh.d_head;
}

/* ---- the next token ------------------------------------------------------------------ */

int rt_logits(Rt *rt, const void *w, int pos, float *logits, AttnErr *err)
{
    if (pos < 0 || pos >= rt->n_done)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "position %d: %d positions computed",
                            pos, rt->n_done);
    rt->arch->logits(rt, w, rt->x + (size_t)pos * rt->sh.hidden, logits);
    return 0;
}

int rt_top_k(Rt *rt, const void *w, int pos, int k, int *ids, float *probs, float *logits,
             AttnErr *err)
{
    int V = rt->sh.n_vocab;
    if (k < 0 || k > V)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "top %d of %d tokens", k, V);
    float *own = NULL;
    if (!logits && !(logits = own = malloc((size_t)V * sizeof *logits)))
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "logits");
    int rc = rt_logits(rt, w, pos, logits, err);
    if (rc == 0)
        ops_top_k_of(logits, V, k, ids, probs);
    free(own);
    return rc;
}

/* ---- the logit lens ---------------------------------------------------------------- */

int rt_lens(Rt *rt, const void *w, const int *ids, int T, int pos, int k, int *top_ids,
            float *probs, AttnErr *err)
{
    const RtShape *s = &rt->sh;
    if (pos < 0 || pos >= T)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "position %d of %d tokens", pos + 1, T);
    if (k < 0 || k > s->n_vocab)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "top %d of %d tokens", k, s->n_vocab);
    size_t C = (size_t)s->hidden, L1 = (size_t)s->n_layer + 1;
    float *rows = malloc(L1 * C * sizeof *rows);
    float *logits = malloc((size_t)s->n_vocab * sizeof *logits);
    int rc = 0;
    if (!rows || !logits) {
        rc = attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "the logit lens of %zu layers", L1);
        goto cleanup;
    }
    /* pass 1: a forward from pos on (the positions before it are the
     * cache's, as a forward's own: a position of the reused prefix would
     * not be computed, so not copied), pos's residual stream copied at each
     * step */
    if (rt->n_done > pos)
        rt->n_done = pos;
    Tap tap = {pos, rows};
    if ((rc = forward(rt, w, ids, T, NULL, &tap, err)) < 0)
        goto cleanup;
    /* pass 2: each copy through the final norm, output layer and soft cap */
    for (size_t l = 0; l < L1; l++) {
        rt->arch->logits(rt, w, rows + l * C, logits);
        ops_top_k_of(logits, s->n_vocab, k, top_ids + l * (size_t)k, probs + l * (size_t)k);
    }
cleanup:
    free(rows);
    free(logits);
    return rc;
}
