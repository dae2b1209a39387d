/* PROPOSAL for src/core/attn.c (not built by anything; `make bench` measured
 * it by splicing it into a copy of attn.c). Four replacements, each marked
 * "REPLACES". Output is bit-identical to the attn.c it was measured against
 * (all buffers, 96 shapes: d 16/50/64, h 1/2/4/5, T 1-257, causal on/off,
 * gcc and clang, and under ASan+UBSan).
 *
 * Why: with the project's -O2 and no -march, gcc 12 keeps the block sums of
 * the plain-array loops in memory (generic tuning) and leaves the exp loop
 * scalar; the kernels below are written with GNU C vector types (gcc, clang)
 * so the sums stay in registers, and are compiled twice — SSE2 and
 * x86-64-v3 (AVX2) — with the loader picking one (target_clones/ifunc). */

/* ==== 1. ADD after the #includes ========================================== */

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

/* ==== 2. REPLACES static void matmul(...) ================================= */

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

/* ==== 3. REPLACES void attn_softmax_row(...) — and ADD this declaration
 *         just before softmax_nonfinite (clang: a function cannot become
 *         multi-versioned after its first use):
 *
 *   ATTN_KERNEL void attn_softmax_row(float *row, int n, int n_valid);
 * ========================================================================= */

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

/* ==== 4. REPLACES "#define BLK 16" and static void head_rows(...) ========= */

#define RB 4 /* query rows per block: they share every key and value load */

/* Pass 2 for nr <= RB query rows q (nr×dk) against the keys Kt (dk×Tk):
 * scores, and logits = weights = scores·mult (the softmax input). 16 keys at
 * a time with RB×16 sums in registers; each score is summed over c in order. */
ATTN_KERNEL static void scores_rows(const float *q, int nr, int dk, const float *Kt, int Tk,
                                    float mult, float *sc, float *lg, float *w)
{
    int j0 = 0;
    if (nr == RB) {
        v8f m8 = SPLAT8(mult);
        for (; j0 + 16 <= Tk; j0 += 16) {
            v8f a[RB][2] = {{{0}}};
            for (int c = 0; c < dk; c++) {
                v8f k0 = LD8(Kt + (size_t)c * Tk + j0), k1 = LD8(Kt + (size_t)c * Tk + j0 + 8);
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
                    size_t o = (size_t)r * Tk + j0 + 8 * h;
                    v8f l = a[r][h] * m8;
                    ST8(sc + o, a[r][h]);
                    ST8(lg + o, l);
                    ST8(w + o, l);
                }
        }
    }
    for (int r = 0; r < nr; r++)
        for (int j = j0; j < Tk; j++) {
            float s = 0.0f;
            for (int c = 0; c < dk; c++)
                s += q[(size_t)r * dk + c] * Kt[(size_t)c * Tk + j];
            size_t o = (size_t)r * Tk + j;
            sc[o] = s;
            lg[o] = w[o] = s * mult;
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

/* One head, query rows [i0, i1): passes 2-4, RB rows at a time. */
static void head_rows(AttnResult *r, int head, float mult, int i0, int i1)
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
        /* pass 2: scores, logits = scores · s / τ */
        scores_rows(Q + (size_t)i * dk, nr, dk, Kt, Tk, mult, r->scores + o, r->logits + o,
                    r->weights + o);
        /* pass 3: softmax over the unmasked keys */
        int nv[RB];
        for (int k = 0; k < nr; k++) {
            nv[k] = r->causal && i + k + 1 < Tk ? i + k + 1 : Tk;
            attn_softmax_row(r->weights + o + (size_t)k * Tk, Tk, nv[k]);
        }
        /* pass 4: context vectors */
        context_rows(r->weights + o, Tk, nv, nr, V, dk, Z + (size_t)i * dk);
    }
}

/* ==== 5. CHANGE the threading threshold (see the bench figures: a
 *         pthread_create per forward costs more than the work below it) ===== */

#define ATTN_THREAD_MIN_WORK (1L << 22) /* h·Tq·Tk·dk below this: one thread */
