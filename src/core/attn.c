/* The attention forward pass, positional encoding and weight set-up.
 * Plain C and libm; kernels never allocate (attn_forward grows the result's
 * buffers first, then runs the passes). */
#include "attnviz/attn.h"
#include "attnviz/prng.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi" /* v8f never crosses a call boundary */
#endif
/* Eight floats as one value: one AVX register, or two SSE registers in the
 * default x86-64 build. */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef float v8u __attribute__((vector_size(32), aligned(4), may_alias)); /* unaligned */
/* Macros, not functions: a helper compiled for the default target would be
 * split into SSE halves before it is inlined into the AVX2 clones. */
#define LD8(p) ((v8f) * (const v8u *)(p))
#define ST8(p, v) (*(v8u *)(p) = (v8u)(v))
#define SPLAT8(x) ((v8f){(x), (x), (x), (x), (x), (x), (x), (x)}) /* x: no side effects */

/* The kernels are compiled for x86-64 (SSE2) and x86-64-v3 (AVX2, FMA: every
 * x86-64 CPU since about 2015); the dynamic loader picks one (GNU ifunc:
 * gcc >= 6, clang >= 14, ELF). Elsewhere only the plain build. */
#if defined(__x86_64__) && defined(__ELF__) &&                                   \
    ((defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 6) ||            \
     (defined(__clang__) && __clang_major__ >= 14))
#define ATTN_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ATTN_KERNEL
#endif

float attn_logit_scale(const AttnConfig *cfg, int dk)
{
    return (cfg->scale ? 1.0f / sqrtf((float)dk) : 1.0f) / cfg->temperature;
}

AttnConfig attn_config_default(void)
{
    AttnConfig c = {ATTN_MODE_LEARNED, 1, 1, 0, 0, 1.0f};
    return c;
}

/* ---- weights ------------------------------------------------------------ */

int attn_params_create(AttnParams *p, int d, int h)
{
    memset(p, 0, sizeof *p);
    if (d < 1 || h < 1 || h > ATTN_MAX_HEADS || d % h != 0)
        return -ATTN_E_HEADS;
    size_t n = (size_t)d * (size_t)d; /* h × d × dk = d × d */
    p->d = d;
    p->h = h;
    p->dk = d / h;
    p->Wq = calloc(n, sizeof(float));
    p->Wk = calloc(n, sizeof(float));
    p->Wv = calloc(n, sizeof(float));
    p->Wo = calloc(n, sizeof(float));
    if (!p->Wq || !p->Wk || !p->Wv || !p->Wo) {
        attn_params_destroy(p);
        return -ATTN_E_NOMEM;
    }
    attn_params_identity(p);
    return 0;
}

void attn_params_destroy(AttnParams *p)
{
    if (!p)
        return;
    free(p->Wq);
    free(p->Wk);
    free(p->Wv);
    free(p->Wo);
    memset(p, 0, sizeof *p);
}

int attn_params_copy(AttnParams *dst, const AttnParams *src)
{
    AttnParams tmp;
    int rc = attn_params_create(&tmp, src->d, src->h);
    if (rc < 0)
        return rc;
    size_t bytes = (size_t)src->d * (size_t)src->d * sizeof(float);
    memcpy(tmp.Wq, src->Wq, bytes);
    memcpy(tmp.Wk, src->Wk, bytes);
    memcpy(tmp.Wv, src->Wv, bytes);
    memcpy(tmp.Wo, src->Wo, bytes);
    attn_params_destroy(dst);
    *dst = tmp;
    return 0;
}

int attn_params_equal(const AttnParams *a, const AttnParams *b)
{
    if (a->d != b->d || a->h != b->h || !a->Wq || !b->Wq)
        return 0;
    size_t bytes = (size_t)a->d * (size_t)a->d * sizeof(float);
    return memcmp(a->Wq, b->Wq, bytes) == 0 && memcmp(a->Wk, b->Wk, bytes) == 0 &&
           memcmp(a->Wv, b->Wv, bytes) == 0 && memcmp(a->Wo, b->Wo, bytes) == 0;
}

void attn_params_identity(AttnParams *p)
{
    int d = p->d, dk = p->dk;
    for (int m = 0; m < 3; m++) {
        float *W = m == 0 ? p->Wq : m == 1 ? p->Wk : p->Wv;
        memset(W, 0, (size_t)d * d * sizeof(float));
        for (int k = 0; k < p->h; k++)
            for (int c = 0; c < dk; c++)
                W[(size_t)k * d * dk + (size_t)(k * dk + c) * dk + c] = 1.0f;
    }
    memset(p->Wo, 0, (size_t)d * d * sizeof(float));
    for (int r = 0; r < d; r++)
        p->Wo[(size_t)r * d + r] = 1.0f;
}

static void xavier_fill(float *W, int rows, int cols, Prng *rng)
{
    float limit = sqrtf(6.0f / (float)(rows + cols));
    for (int i = 0; i < rows * cols; i++)
        W[i] = (2.0f * prng_uniform(rng) - 1.0f) * limit;
}

void attn_params_xavier(AttnParams *p, uint64_t seed)
{
    Prng rng;
    prng_seed(&rng, seed);
    size_t slice = (size_t)p->d * p->dk;
    for (int k = 0; k < p->h; k++) {
        xavier_fill(p->Wq + k * slice, p->d, p->dk, &rng);
        xavier_fill(p->Wk + k * slice, p->d, p->dk, &rng);
        xavier_fill(p->Wv + k * slice, p->d, p->dk, &rng);
    }
    xavier_fill(p->Wo, p->d, p->d, &rng);
}

float *attn_params_matrix(const AttnParams *p, int which, int head, int *rows,
                          int *cols)
{
    size_t slice = (size_t)p->d * p->dk;
    *rows = p->d;
    *cols = which == 3 ? p->d : p->dk;
    switch (which) {
    case 0: return p->Wq + head * slice;
    case 1: return p->Wk + head * slice;
    case 2: return p->Wv + head * slice;
    default: return p->Wo;
    }
}

/* ---- positional encoding ------------------------------------------------ */

float attn_posenc(int pos, int k, int d)
{
    int i2 = k & ~1; /* 2i */
    double angle = pos / pow(10000.0, (double)i2 / d);
    return (float)((k & 1) ? cos(angle) : sin(angle));
}

void attn_posenc_add(float *X, int T, int d)
{
    for (int p = 0; p < T; p++)
        for (int k = 0; k < d; k++)
            X[(size_t)p * d + k] += attn_posenc(p, k, d);
}

/* ---- kernels ------------------------------------------------------------ */

/* out (n×m) = A (n×k, row stride lda) · B (k×m). Four output rows × 16
 * columns are summed in registers while p runs over k (each B row is loaded
 * once for four rows); every output is still summed over p in order. */
ATTN_KERNEL static void matmul(float *restrict out, const float *restrict A, int lda,
                               const float *restrict B, int n, int k, int m)
{
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        const float *a[4] = {A + (size_t)i * lda, A + (size_t)(i + 1) * lda,
                             A + (size_t)(i + 2) * lda, A + (size_t)(i + 3) * lda};
        float *o = out + (size_t)i * m;
        int j = 0;
        for (; j + 16 <= m; j += 16) {
            v8f c[4][2] = {{{0}}};
            for (int p = 0; p < k; p++) {
                v8f b0 = LD8(B + (size_t)p * m + j), b1 = LD8(B + (size_t)p * m + j + 8);
#pragma GCC unroll 8
                for (int r = 0; r < 4; r++) {
                    v8f x = SPLAT8(a[r][p]);
                    c[r][0] += x * b0;
                    c[r][1] += x * b1;
                }
            }
#pragma GCC unroll 8
            for (int r = 0; r < 4; r++) {
                ST8(o + (size_t)r * m + j, c[r][0]);
                ST8(o + (size_t)r * m + j + 8, c[r][1]);
            }
        }
        for (; j < m; j++)
#pragma GCC unroll 8
            for (int r = 0; r < 4; r++) {
                float s = 0.0f;
                for (int p = 0; p < k; p++)
                    s += a[r][p] * B[(size_t)p * m + j];
                o[(size_t)r * m + j] = s;
            }
    }
    for (; i < n; i++) {
        const float *a = A + (size_t)i * lda;
        float *o = out + (size_t)i * m;
        int j = 0;
        for (; j + 8 <= m; j += 8) {
            v8f c = {0};
            for (int p = 0; p < k; p++)
                c += SPLAT8(a[p]) * LD8(B + (size_t)p * m + j);
            ST8(o + j, c);
        }
        for (; j < m; j++) {
            float s = 0.0f;
            for (int p = 0; p < k; p++)
                s += a[p] * B[(size_t)p * m + j];
            o[j] = s;
        }
    }
}

/* exp(x) for x <= 0 (the softmax after subtracting the row max), written so
 * the compiler can vectorise it: x = n·ln2 + r with |r| <= ln2/2, e^r by a
 * degree-6 polynomial (relative error below 2e-7), 2^n through the exponent
 * bits. Below -87 (where float exp underflows) the result is 0. */
static inline float exp_neg(float x0)
{
    float x = x0 < -87.0f ? -87.0f : x0;
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* round */
    float r = x - n * 0.693145751953125f - n * 1.428606765330187e-06f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 +
              r * (1.0f / 120 + r * (1.0f / 720))))));
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return x0 < -87.0f ? 0.0f : p * scale; /* underflow is exactly 0 */
}

ATTN_KERNEL void attn_softmax_row(float *row, int n, int n_valid);

/* Rare path for rows with NaN or infinite logits (weights near 1e38):
 * +inf entries share the weight, NaN counts as -inf, and a row with nothing
 * usable becomes uniform, so no NaN ever leaves the softmax. */
static void softmax_nonfinite(float *row, int n_valid)
{
    int n_inf = 0, n_ok = 0; /* NaN entries count as -inf below */
    for (int j = 0; j < n_valid; j++) {
        n_inf += row[j] == INFINITY;
        n_ok += isfinite(row[j]);
    }
    if (n_inf) {
        for (int j = 0; j < n_valid; j++)
            row[j] = row[j] == INFINITY ? 1.0f / (float)n_inf : 0.0f;
        return;
    }
    if (!n_ok) {
        for (int j = 0; j < n_valid; j++)
            row[j] = 1.0f / (float)n_valid;
        return;
    }
    for (int j = 0; j < n_valid; j++)
        if (!isfinite(row[j]))
            row[j] = -INFINITY;
    attn_softmax_row(row, n_valid, n_valid);
}

ATTN_KERNEL void attn_softmax_row(float *row, int n, int n_valid)
{
    if (n_valid > n)
        n_valid = n;
    if (n_valid <= 0) {
        memset(row, 0, (size_t)n * sizeof(float));
        return;
    }
    /* stable softmax: subtract the row max so exp never overflows; the max
     * and a NaN count eight lanes at a time */
    v8f mx8 = SPLAT8(-INFINITY);
    v8i nan8 = {0};
    int j = 0;
    for (; j + 8 <= n_valid; j += 8) {
        v8f x = LD8(row + j);
        v8i gt = x > mx8;
        mx8 = (v8f)(((v8i)x & gt) | ((v8i)mx8 & ~gt));
        nan8 += x != x; /* -1 in each NaN lane */
    }
    float mx = -INFINITY;
    int nans = 0;
    for (int u = 0; u < 8; u++) {
        mx = mx8[u] > mx ? mx8[u] : mx;
        nans -= nan8[u];
    }
    for (; j < n_valid; j++) {
        mx = row[j] > mx ? row[j] : mx;
        nans += row[j] != row[j];
    }
    if (!isfinite(mx) || nans) {
        softmax_nonfinite(row, n_valid);
    } else {
        v8f m8 = SPLAT8(mx), sum8 = {0};
        j = 0;
        for (; j + 8 <= n_valid; j += 8) {
            /* exp_neg, eight lanes (see there); in line, since clang will not
             * pass a v8f to a function in the SSE2 build */
            v8f x0 = LD8(row + j) - m8;
            v8i keep = x0 >= SPLAT8(-87.0f); /* -1 where x0 >= -87 */
            v8f x = (v8f)(((v8i)x0 & keep) | ((v8i)SPLAT8(-87.0f) & ~keep));
            v8f nn = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* round */
            v8f r = x - nn * 0.693145751953125f - nn * 1.428606765330187e-06f;
            v8f p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 +
                    r * (1.0f / 120 + r * (1.0f / 720))))));
            v8i bits = (__builtin_convertvector(nn, v8i) + 127) << 23;
            v8f e = (v8f)((v8i)(p * (v8f)bits) & keep); /* underflow: exactly 0 */
            ST8(row + j, e);
            sum8 += e;
        }
        float sum = 0.0f;
        for (; j < n_valid; j++) {
            row[j] = exp_neg(row[j] - mx);
            sum += row[j];
        }
        for (int u = 0; u < 8; u++)
            sum += sum8[u];
        float inv = 1.0f / sum; /* sum >= 1: the max contributes exp(0) */
        v8f inv8 = SPLAT8(inv);
        j = 0;
        for (; j + 8 <= n_valid; j += 8)
            ST8(row + j, LD8(row + j) * inv8);
        for (; j < n_valid; j++)
            row[j] *= inv;
    }
    for (int j2 = n_valid; j2 < n; j2++)
        row[j2] = 0.0f;
}

/* ---- buffers ------------------------------------------------------------ */

void attn_result_init(AttnResult *r)
{
    memset(r, 0, sizeof *r);
}

void attn_result_destroy(AttnResult *r)
{
    if (!r)
        return;
    free(r->Q); free(r->K); free(r->V);
    free(r->scores); free(r->logits); free(r->weights); free(r->avg);
    free(r->Z); free(r->concat); free(r->output); free(r->Kt);
    attn_result_init(r);
}

static int grow(float **buf, size_t n)
{
    float *p = realloc(*buf, (n ? n : 1) * sizeof(float));
    if (!p)
        return -1;
    *buf = p;
    return 0;
}

/* Grow the buffers to hold h heads of Tq×Tk and Tq/Tk rows of d floats. */
static int reserve(AttnResult *r, int Tq, int Tk, int d, int h)
{
    size_t qk = (size_t)Tq * Tk, hqk = qk * h, q = (size_t)Tq * d,
           k = (size_t)Tk * d;
    if (hqk > r->cap_qk) {
        if (grow(&r->scores, hqk) || grow(&r->weights, hqk))
            return -ATTN_E_NOMEM;
        r->cap_qk = hqk;
    }
    if (r->skip_logits) {
        free(r->logits);
        r->logits = NULL;
        r->cap_lg = 0;
    } else if (hqk > r->cap_lg) {
        if (grow(&r->logits, hqk))
            return -ATTN_E_NOMEM;
        r->cap_lg = hqk;
    }
    if (qk > r->cap_avg) {
        if (grow(&r->avg, qk))
            return -ATTN_E_NOMEM;
        r->cap_avg = qk;
    }
    if (q > r->cap_q) {
        if (grow(&r->Q, q) || grow(&r->Z, q) || grow(&r->concat, q) ||
            grow(&r->output, q))
            return -ATTN_E_NOMEM;
        r->cap_q = q;
    }
    if (k > r->cap_k) {
        if (grow(&r->K, k) || grow(&r->V, k) || grow(&r->Kt, k))
            return -ATTN_E_NOMEM;
        r->cap_k = k;
    }
    return 0;
}

/* ---- the forward pass --------------------------------------------------- */

#define RB 4 /* query rows per block: they share every key and value load */

/* Pass 2 for nr <= RB query rows q (nr×dk) against n keys Kt (dk rows of
 * stride ldk): scores, and logits = weights = scores·mult (the softmax
 * input), in rows of stride ldo; lg and w may be NULL. 16 keys at a time
 * with RB×16 sums in registers; each score is summed over c in order, so a
 * score is the same float whichever block or column range computes it. */
ATTN_KERNEL static void scores_rows(const float *q, int nr, int dk, const float *Kt, int ldk,
                                    int n, int ldo, float mult, float *sc, float *lg, float *w)
{
    int j0 = 0;
    if (nr == RB) {
        v8f m8 = SPLAT8(mult);
        for (; j0 + 16 <= n; j0 += 16) {
            v8f a[RB][2] = {{{0}}};
            for (int c = 0; c < dk; c++) {
                v8f k0 = LD8(Kt + (size_t)c * ldk + j0), k1 = LD8(Kt + (size_t)c * ldk + j0 + 8);
#pragma GCC unroll 8
                for (int r = 0; r < RB; r++) {
                    v8f qc = SPLAT8(q[(size_t)r * dk + c]);
                    a[r][0] += qc * k0;
                    a[r][1] += qc * k1;
                }
            }
#pragma GCC unroll 8
            for (int r = 0; r < RB; r++)
#pragma GCC unroll 2
                for (int h = 0; h < 2; h++) {
                    size_t o = (size_t)r * ldo + j0 + 8 * h;
                    v8f l = a[r][h] * m8;
                    ST8(sc + o, a[r][h]);
                    if (lg)
                        ST8(lg + o, l);
                    if (w)
                        ST8(w + o, l);
                }
        }
    }
    for (int r = 0; r < nr; r++)
        for (int j = j0; j < n; j++) {
            float s = 0.0f;
            for (int c = 0; c < dk; c++)
                s += q[(size_t)r * dk + c] * Kt[(size_t)c * ldk + j];
            size_t o = (size_t)r * ldo + j;
            float l = s * mult;
            sc[o] = s;
            if (lg)
                lg[o] = l;
            if (w)
                w[o] = l;
        }
}

/* Pass 4 for nr <= RB rows: z_r = Σ_{j < nv[r]} α_rj v_j (nv ascending: the
 * causal mask). The keys every row uses with RB×16 sums in registers, then
 * each row's own extra keys; masked keys are skipped, never multiplied by 0. */
ATTN_KERNEL static void context_rows(const float *w, int Tk, const int *nv, int nr,
                                     const float *V, int dk, float *z)
{
    int c0 = 0;
    if (nr == RB) {
        for (; c0 + 16 <= dk; c0 += 16) {
            v8f a[RB][2] = {{{0}}};
            for (int j = 0; j < nv[0]; j++) {
                v8f v0 = LD8(V + (size_t)j * dk + c0), v1 = LD8(V + (size_t)j * dk + c0 + 8);
#pragma GCC unroll 8
                for (int r = 0; r < RB; r++) {
                    v8f al = SPLAT8(w[(size_t)r * Tk + j]);
                    a[r][0] += al * v0;
                    a[r][1] += al * v1;
                }
            }
#pragma GCC unroll 8
            for (int r = 1; r < RB; r++)
                for (int j = nv[0]; j < nv[r]; j++) {
                    v8f al = SPLAT8(w[(size_t)r * Tk + j]);
                    a[r][0] += al * LD8(V + (size_t)j * dk + c0);
                    a[r][1] += al * LD8(V + (size_t)j * dk + c0 + 8);
                }
#pragma GCC unroll 8
            for (int r = 0; r < RB; r++) {
                ST8(z + (size_t)r * dk + c0, a[r][0]);
                ST8(z + (size_t)r * dk + c0 + 8, a[r][1]);
            }
        }
    }
    for (int r = 0; r < nr; r++) {
        int c = c0;
        for (; c + 8 <= dk; c += 8) {
            v8f a = {0};
            for (int j = 0; j < nv[r]; j++)
                a += SPLAT8(w[(size_t)r * Tk + j]) * LD8(V + (size_t)j * dk + c);
            ST8(z + (size_t)r * dk + c, a);
        }
        for (; c < dk; c++) {
            float s = 0.0f;
            for (int j = 0; j < nv[r]; j++)
                s += w[(size_t)r * Tk + j] * V[(size_t)j * dk + c];
            z[(size_t)r * dk + c] = s;
        }
    }
}

/* Which input rows changed since the result's last forward: queries
 * [q_lo, q_hi), keys and values [k_lo, k_hi). Everything: {0, Tq, 0, Tk}. */
typedef struct Change {
    int q_lo, q_hi, k_lo, k_hi;
} Change;

/* One head, query rows [i0, i1): passes 2-4, RB rows at a time. Blocks
 * without a changed query recompute only the changed keys' scores; their
 * rows are softmaxed again only when a changed key is visible to them
 * (always, unless causal). Unchanged outputs are left as they are. */
static void head_rows(AttnResult *r, int head, float mult, const Change *ch, int i0, int i1)
{
    int Tq = r->Tq, Tk = r->Tk, dk = r->dk;
    const float *Q = r->Q + (size_t)head * Tq * dk;
    const float *V = r->V + (size_t)head * Tk * dk;
    const float *Kt = r->Kt + (size_t)head * Tk * dk;
    float *Z = r->Z + (size_t)head * Tq * dk;
    size_t base = (size_t)head * Tq * Tk;
    for (int i = i0; i < i1; i += RB) {
        int nr = i1 - i < RB ? i1 - i : RB;
        size_t o = base + (size_t)i * Tk;
        float *lg = r->logits ? r->logits + o : NULL, *w = r->weights + o;
        int nv[RB], redo[RB], any = 0;
        for (int k = 0; k < nr; k++)
            nv[k] = r->causal && i + k + 1 < Tk ? i + k + 1 : Tk;
        if (i + nr > ch->q_lo && i < ch->q_hi) {
            /* pass 2: scores, logits = scores · s / τ */
            scores_rows(Q + (size_t)i * dk, nr, dk, Kt, Tk, Tk, Tk, mult, r->scores + o, lg, w);
            for (int k = 0; k < nr; k++)
                redo[k] = 1;
            any = 1;
        } else {
            int n = ch->k_hi - ch->k_lo;
            if (n > 0)
                scores_rows(Q + (size_t)i * dk, nr, dk, Kt + ch->k_lo, Tk, n, Tk, mult,
                            r->scores + o + ch->k_lo, lg ? lg + ch->k_lo : NULL, NULL);
            for (int k = 0; k < nr; k++) {
                redo[k] = n > 0 && ch->k_lo < nv[k];
                any |= redo[k];
                if (redo[k]) /* the softmax input again, as pass 2 makes it */
                    for (int j = 0; j < Tk; j++)
                        w[(size_t)k * Tk + j] = r->scores[o + (size_t)k * Tk + j] * mult;
            }
        }
        if (!any)
            continue;
        /* pass 3: softmax over the unmasked keys */
        for (int k = 0; k < nr; k++)
            if (redo[k])
                attn_softmax_row(w + (size_t)k * Tk, Tk, nv[k]);
        /* pass 4: context vectors (rows not redone come out the same) */
        context_rows(w, Tk, nv, nr, V, dk, Z + (size_t)i * dk);
    }
}

typedef struct {
    AttnResult *r;
    const Change *ch;
    float mult;
    int i0, i1;
} RowJob;

static void *row_job(void *arg)
{
    RowJob *j = arg;
    for (int k = 0; k < j->r->h; k++)
        head_rows(j->r, k, j->mult, j->ch, j->i0, j->i1);
    return NULL;
}

#define ATTN_THREAD_MIN_WORK (1L << 22) /* h·Tq·Tk·dk below this: one thread */

static void run_heads(AttnResult *r, float mult, const Change *ch)
{
    long work = (long)r->h * r->Tq * r->Tk * r->dk;
    int half = r->Tq / 2;
    RowJob a = {r, ch, mult, 0, half}, b = {r, ch, mult, half, r->Tq};
    pthread_t t;
    if (work >= ATTN_THREAD_MIN_WORK && half > 0 &&
        pthread_create(&t, NULL, row_job, &b) == 0) {
        row_job(&a);
        pthread_join(t, NULL);
        return;
    }
    a.i1 = r->Tq;
    row_job(&a);
}

static int forward(AttnResult *r, const float *Xq, int Tq, const float *Xkv, int Tk, int d,
                   const AttnParams *p, const AttnConfig *cfg, Change ch)
{
    int learned = cfg->mode == ATTN_MODE_LEARNED;
    if (Tq < 0 || Tk < 0 || d < 1)
        return -ATTN_E_SHAPE;
    if (learned && (!p || p->d != d || p->h < 1 || d % p->h != 0))
        return -ATTN_E_SHAPE;
    int h = learned ? p->h : 1;
    if (!(cfg->temperature > 0.0f) || !isfinite(cfg->temperature))
        return -ATTN_E_RANGE;
    int dk = d / h;
    /* a partial update needs the last forward's shapes and buffers */
    int had_logits = r->logits != NULL;
    if (r->Tq != Tq || r->Tk != Tk || r->d != d || r->h != h || r->causal != cfg->causal ||
        had_logits != !r->skip_logits || ch.q_lo < 0 || ch.k_lo < 0 || ch.q_hi > Tq ||
        ch.k_hi > Tk)
        ch = (Change){0, Tq, 0, Tk};
    if (ch.q_hi < ch.q_lo)
        ch.q_hi = ch.q_lo;
    if (ch.k_hi < ch.k_lo)
        ch.k_hi = ch.k_lo;
    int rc = reserve(r, Tq, Tk, d, h);
    if (rc < 0) {
        r->Tq = r->Tk = 0; /* nothing of the last forward can be reused */
        return rc;
    }
    r->Tq = Tq;
    r->Tk = Tk;
    r->d = d;
    r->h = h;
    r->dk = dk;
    r->causal = cfg->causal;
    float mult = attn_logit_scale(cfg, dk);

    /* pass 1: projections Q = Xq·Wq, K = Xkv·Wk, V = Xkv·Wv per head, of the
     * changed rows; in basic mode Q = K = V = X */
    size_t slice = (size_t)d * dk;
    int nq = ch.q_hi - ch.q_lo, nk = ch.k_hi - ch.k_lo;
    for (int k = 0; k < h; k++) {
        float *Q = r->Q + (size_t)k * Tq * dk + (size_t)ch.q_lo * dk;
        float *K = r->K + (size_t)k * Tk * dk + (size_t)ch.k_lo * dk;
        float *V = r->V + (size_t)k * Tk * dk + (size_t)ch.k_lo * dk;
        const float *xq = Xq + (size_t)ch.q_lo * d, *xkv = Xkv + (size_t)ch.k_lo * d;
        if (learned) {
            matmul(Q, xq, d, p->Wq + k * slice, nq, d, dk);
            matmul(K, xkv, d, p->Wk + k * slice, nk, d, dk);
            matmul(V, xkv, d, p->Wv + k * slice, nk, d, dk);
        } else {
            memcpy(Q, xq, (size_t)nq * d * sizeof(float));
            memcpy(K, xkv, (size_t)nk * d * sizeof(float));
            memcpy(V, xkv, (size_t)nk * d * sizeof(float));
        }
        float *Kt = r->Kt + (size_t)k * Tk * dk;
        for (int j = 0; j < nk; j++)
            for (int c = 0; c < dk; c++)
                Kt[(size_t)c * Tk + ch.k_lo + j] = K[(size_t)j * dk + c];
    }

    /* passes 2-4 per head: scores, softmax, context vectors; large inputs
     * split the query rows between two threads */
    run_heads(r, mult, &ch);

    /* pass 5: concatenate the heads' Z, then output = concat·Wo, from the
     * first row whose Z may have changed: a changed query's row; without the
     * mask every row when a key changed, with it the rows from that key on */
    int z0 = Tq;
    if (nq > 0)
        z0 = ch.q_lo;
    if (nk > 0)
        z0 = !r->causal ? 0 : ch.k_lo < z0 ? ch.k_lo : z0;
    for (int i = z0; i < Tq; i++)
        for (int k = 0; k < h; k++)
            memcpy(r->concat + (size_t)i * d + k * dk,
                   r->Z + (size_t)k * Tq * dk + (size_t)i * dk,
                   (size_t)dk * sizeof(float));
    float *out = r->output + (size_t)z0 * d;
    const float *cat = r->concat + (size_t)z0 * d;
    if (learned)
        matmul(out, cat, d, p->Wo, Tq - z0, d, d);
    else
        memcpy(out, cat, (size_t)(Tq - z0) * d * sizeof(float));

    /* the heads' average, for the "all heads" view */
    size_t e0 = (size_t)z0 * Tk, qk = (size_t)Tq * Tk;
    float inv_h = 1.0f / (float)h;
    memcpy(r->avg + e0, r->weights + e0, (qk - e0) * sizeof(float));
    for (int k = 1; k < h; k++) {
        const float *w = r->weights + (size_t)k * qk;
        for (size_t e = e0; e < qk; e++)
            r->avg[e] += w[e];
    }
    for (size_t e = e0; e < qk; e++)
        r->avg[e] *= inv_h;
    return 0;
}

int attn_forward(AttnResult *r, const float *Xq, int Tq, const float *Xkv,
                 int Tk, int d, const AttnParams *p, const AttnConfig *cfg)
{
    return forward(r, Xq, Tq, Xkv, Tk, d, p, cfg, (Change){0, Tq, 0, Tk});
}

int attn_forward_update(AttnResult *r, const float *Xq, int Tq, const float *Xkv, int Tk,
                        int d, const AttnParams *p, const AttnConfig *cfg, int q_lo,
                        int q_hi, int k_lo, int k_hi)
{
    return forward(r, Xq, Tq, Xkv, Tk, d, p, cfg, (Change){q_lo, q_hi, k_lo, k_hi});
}
