/* The attention forward pass: the score functions and the passes, on one
 * thread or two (the kernels: attn_kernels.c). Plain C, libm and pthreads;
 * kernels never allocate (attn_forward grows the result's buffers first,
 * then runs the passes). */
#include "attn_kernels.h"
#include "attnviz/attn.h"
#include "attnviz/workers.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 1/√n: the dot product's scale for dk = n, and every entry of the additive
 * score's default vector of n numbers. */
static float inv_sqrt(int n)
{
    return 1.0f / sqrtf((float)n);
}

float attn_logit_scale(const AttnConfig *cfg, int dk)
{
    int s = cfg->scale && cfg->score == ATTN_SCORE_DOT;
    return (s ? inv_sqrt(dk) : 1.0f) / cfg->temperature;
}

static const char *const score_names[ATTN_SCORE_COUNT] = {"dot", "cosine", "additive"};

const char *attn_score_name(int score)
{
    return score >= 0 && score < ATTN_SCORE_COUNT ? score_names[score] : "?";
}

int attn_score_parse(const char *name)
{
    for (int k = 0; k < ATTN_SCORE_COUNT; k++)
        if (name && strcmp(name, score_names[k]) == 0)
            return k;
    return -1;
}

const char *attn_score_formula(int score, int scale, int ascii)
{
    /* [score][ascii]; dot has a second pair without the √dk */
    static const char *const f[ATTN_SCORE_COUNT + 1][2] = {
        {"softmax(q·k / √dk / τ)", "softmax(q.k / sqrt(dk) / tau)"},
        {"softmax(cos(q, k) / τ)", "softmax(cos(q, k) / tau)"},
        {"softmax(vᵀ tanh(q + k) / τ)", "softmax(v^T tanh(q + k) / tau)"},
        {"softmax(q·k / τ)", "softmax(q.k / tau)"},
    };
    if (score < 0 || score >= ATTN_SCORE_COUNT)
        return "?";
    int row = score == ATTN_SCORE_DOT && !scale ? ATTN_SCORE_COUNT : score;
    return f[row][ascii ? 1 : 0];
}

float attn_additive_term(float q, float k, float v)
{
    return v * tanhf(q + k);
}

/* The cosine in double: no overflow or underflow of the squares of any
 * finite float, and |cos| <= 1 after rounding. */
static float cosine_score(const float *q, const float *k, int n)
{
    double dot = 0.0, qq = 0.0, kk = 0.0;
    for (int c = 0; c < n; c++) {
        dot += (double)q[c] * k[c];
        qq += (double)q[c] * q[c];
        kk += (double)k[c] * k[c];
    }
    if (qq == 0.0 || kk == 0.0)
        return 0.0f; /* a zero vector has no direction: score 0, not NaN */
    double cs = dot / (sqrt(qq) * sqrt(kk));
    return (float)(cs > 1.0 ? 1.0 : cs < -1.0 ? -1.0 : cs);
}

float attn_score_one(int score, const float *q, const float *k, const float *v, int n)
{
    float s = 0.0f;
    if (score == ATTN_SCORE_COSINE)
        return cosine_score(q, k, n);
    if (score == ATTN_SCORE_ADDITIVE) {
        float dv = inv_sqrt(n);
        for (int c = 0; c < n; c++)
            s += attn_additive_term(q[c], k[c], v ? v[c] : dv);
        return s;
    }
    for (int c = 0; c < n; c++) /* in order, as every kernel sums */
        s += q[c] * k[c];
    return s;
}

AttnConfig attn_config_default(void)
{
    AttnConfig c = {ATTN_MODE_LEARNED, 1, 1, 0, 0, 1.0f, ATTN_SCORE_DOT};
    return c;
}

/* ---- the additive score's default vector ---------------------------------- */

void attn_params_default_v(AttnParams *p)
{
    float v = inv_sqrt(p->dk), vb = inv_sqrt(p->d);
    for (int c = 0; p->v && c < p->d; c++)
        p->v[c] = v;
    for (int c = 0; p->vb && c < p->d; c++)
        p->vb[c] = vb;
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
    free(r->scores); free(r->logits); free(r->weights); free(r->avg); free(r->avg_part);
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

int attn_kt_stride(int Tk)
{
    int ld = (Tk + 15) / 16 * 16;
    return ld % 64 == 0 ? ld + 16 : ld; /* rows 64 bytes apart in the cache's sets */
}

/* grow for the T×T matrices, keeping the first old floats: 64-byte aligned,
 * so their rows take whole-vector streaming stores (realloc's large blocks
 * start 16 bytes into a page). */
static int grow_aligned(float **buf, size_t old, size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, (n ? n : 1) * sizeof(float)) != 0)
        return -1;
    if (*buf && old)
        memcpy(p, *buf, (old < n ? old : n) * sizeof(float));
    free(*buf);
    *buf = p;
    return 0;
}

/* Grow the buffers to hold h heads of Tq×Tk and Tq/Tk rows of d floats. */
#define ATTN_THREAD_MIN_WORK (1L << 19) /* h·Tq·Tk·dk from here: rows split */
#define ATTN_HEADS_MIN_WORK (1L << 16)  /* from here (two heads or more): heads split */
enum { SPLIT_NONE, SPLIT_HEADS, SPLIT_ROWS };

/* How the passes are shared between two threads (run_passes). */
static int split_of(int h, int Tq, int Tk, int dk)
{
    long work = (long)h * Tq * Tk * dk;
    if (work >= ATTN_THREAD_MIN_WORK && Tq / 2 > 0)
        return SPLIT_ROWS;
    return h >= 2 && work >= ATTN_HEADS_MIN_WORK ? SPLIT_HEADS : SPLIT_NONE;
}

static int reserve(AttnResult *r, int Tq, int Tk, int d, int h)
{
    size_t qk = (size_t)Tq * Tk, hqk = qk * h, q = (size_t)Tq * d,
           k = (size_t)Tk * d;
    if (hqk > r->cap_qk) {
        if (grow_aligned(&r->scores, r->cap_qk, hqk) || grow_aligned(&r->weights, r->cap_qk, hqk))
            return -ATTN_E_NOMEM;
        r->cap_qk = hqk;
    }
    if (r->skip_logits) {
        free(r->logits);
        r->logits = NULL;
        r->cap_lg = 0;
    } else if (hqk > r->cap_lg) {
        if (grow_aligned(&r->logits, r->cap_lg, hqk))
            return -ATTN_E_NOMEM;
        r->cap_lg = hqk;
    }
    if (r->skip_avg) {
        free(r->avg);
        free(r->avg_part);
        r->avg = r->avg_part = NULL;
        r->cap_avg = r->cap_part = 0;
    } else if (qk > r->cap_avg) {
        if (grow_aligned(&r->avg, r->cap_avg, qk))
            return -ATTN_E_NOMEM;
        r->cap_avg = qk;
    }
    if (!r->skip_avg && split_of(h, Tq, Tk, d / h) == SPLIT_HEADS && qk > r->cap_part) {
        if (grow_aligned(&r->avg_part, r->cap_part, qk))
            return -ATTN_E_NOMEM;
        r->cap_part = qk;
    }
    if (q > r->cap_q) {
        if (grow(&r->Q, q) || grow(&r->Z, q) || grow(&r->concat, q) ||
            grow(&r->output, q))
            return -ATTN_E_NOMEM;
        r->cap_q = q;
    }
    if (k > r->cap_k) {
        if (grow(&r->K, k) || grow(&r->V, k))
            return -ATTN_E_NOMEM;
        r->cap_k = k;
    }
    size_t kt = (size_t)attn_kt_stride(Tk) * d;
    if (kt > r->cap_kt) {
        if (grow(&r->Kt, kt))
            return -ATTN_E_NOMEM;
        r->cap_kt = kt;
    }
    return 0;
}

/* ---- the forward pass --------------------------------------------------- */

/* Which input rows changed since the result's last forward: queries
 * [q_lo, q_hi), keys and values [k_lo, k_hi). Everything: {0, Tq, 0, Tk}. */
typedef struct Change {
    int q_lo, q_hi, k_lo, k_hi;
    int resized;     /* the shapes changed: rows from q_lo / k_lo on are new */
    int k_removed;   /* keys were dropped from the end (from k_lo on) */
} Change;

/* Keys from k_lo on changed or were dropped: a row that sees key k_lo (all
 * rows, or with the mask those from k_lo on) needs its softmax again. */
static int keys_changed(const Change *ch)
{
    return ch->k_hi > ch->k_lo || ch->k_removed;
}

/* The score function of a forward pass: cfg's, the additive vector of
 * head k at v + k · v_stride (NULL: the default 1/√dk), and the factor
 * from scores to logits. */
typedef struct ScoreFn {
    int score;
    const float *v;
    size_t v_stride;
    float mult;
} ScoreFn;

/* Pass 2 for query rows [i, i + nr) and keys [j0, j0 + n) of a head: the
 * scores, and logits = weights = scores · mult (lg, w may be NULL), at sc,
 * lg, w (row stride Tk). The dot product by the kernels; the other
 * functions pair by pair with attn_score_one, the float the step view
 * shows. A score depends only on its query and key, so any block of rows
 * and keys gives the same floats. */
static void scores_block(const AttnResult *r, const ScoreFn *f, int head, int i, int nr, int j0,
                         int n, float *sc, float *lg, float *w)
{
    int Tq = r->Tq, Tk = r->Tk, dk = r->dk;
    const float *Q = r->Q + ((size_t)head * Tq + i) * dk;
    if (f->score == ATTN_SCORE_DOT) {
        int ld = attn_kt_stride(Tk);
        const float *Kt = r->Kt + (size_t)head * ld * dk + j0;
        /* streamed stores paid at T = 1024 (16 MiB of scores with 4 heads)
         * and cost 5 % at T = 64 (64 KiB); even from 1 to 4 MiB */
        int stream = (size_t)r->h * Tq * Tk * sizeof(float) > ((size_t)2 << 20);
        attn_kernel_set()->scores_rows(Q, nr, dk, Kt, ld, n, Tk, f->mult, sc, lg, w, stream);
        return;
    }
    const float *K = r->K + ((size_t)head * Tk + j0) * dk;
    const float *v = f->v ? f->v + (size_t)head * f->v_stride : NULL;
    for (int a = 0; a < nr; a++)
        for (int j = 0; j < n; j++) {
            float s = attn_score_one(f->score, Q + (size_t)a * dk, K + (size_t)j * dk, v, dk);
            size_t o = (size_t)a * Tk + j;
            sc[o] = s;
            if (lg)
                lg[o] = s * f->mult;
            if (w)
                w[o] = s * f->mult;
        }
}

/* One head, query rows [i0, i1): passes 2-4, RB rows at a time. Blocks
 * without a changed query recompute only the changed keys' scores; their
 * rows are softmaxed again only when a changed key is visible to them
 * (always, unless causal). Unchanged outputs are left as they are. */
static void head_rows(AttnResult *r, int head, const ScoreFn *f, const Change *ch, int i0, int i1)
{
    const Kernels *K = attn_kernel_set();
    int Tq = r->Tq, Tk = r->Tk, dk = r->dk;
    float mult = f->mult;
    const float *V = r->V + (size_t)head * Tk * dk;
    float *Z = r->Z + (size_t)head * Tq * dk;
    size_t base = (size_t)head * Tq * Tk;
    for (int i = i0; i < i1; i += RB) {
        int nr = i1 - i < RB ? i1 - i : RB;
        size_t o = base + (size_t)i * Tk;
        float *lg = r->logits ? r->logits + o : NULL, *w = r->weights + o;
        int nv[RB], redo[RB], any = 0;
        for (int k = 0; k < nr; k++)
            nv[k] = attn_causal_row_len(r->causal, i + k, Tk);
        if (i + nr > ch->q_lo && i < ch->q_hi) {
            /* pass 2: scores, logits = scores · s / τ */
            scores_block(r, f, head, i, nr, 0, Tk, r->scores + o, lg, w);
            for (int k = 0; k < nr; k++)
                redo[k] = 1;
            any = 1;
        } else {
            int n = ch->k_hi - ch->k_lo;
            if (n > 0)
                scores_block(r, f, head, i, nr, ch->k_lo, n, r->scores + o + ch->k_lo,
                             lg ? lg + ch->k_lo : NULL, NULL);
            for (int k = 0; k < nr; k++) {
                redo[k] = keys_changed(ch) && (!r->causal || ch->k_lo <= i + k);
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
                K->softmax_row(w + (size_t)k * Tk, Tk, nv[k]);
        /* pass 4: context vectors (rows not redone come out the same) */
        K->context_rows(w, Tk, nv, nr, V, dk, Z + (size_t)i * dk);
    }
}

/* out[0, n) = the weights of heads [k0, k1) (k1 > k0) from element e0 of
 * each head's Tq × Tk matrix on, summed over the heads in order. */
static void sum_heads(const AttnResult *r, int k0, int k1, size_t e0, size_t n, float *restrict out)
{
    size_t qk = (size_t)r->Tq * r->Tk;
    memcpy(out, r->weights + (size_t)k0 * qk + e0, n * sizeof(float));
    for (int k = k0 + 1; k < k1; k++) {
        const float *restrict w = r->weights + (size_t)k * qk + e0;
        for (size_t e = 0; e < n; e++)
            out[e] += w[e];
    }
}

/* The heads' mean of query rows [i0, i1) into out (attn_heads_mean: heads
 * [0, h/2) summed in order, heads [h/2, h) likewise, the two sums added,
 * then divided; with two threads splitting the heads, each sums its half:
 * sum_half, finish_halves); in blocks of 4 KiB, in L1. */
static void average_into(const AttnResult *r, float *out, int i0, int i1)
{
    enum { BLOCK = 1024 };
    float right[BLOCK];
    size_t e1 = (size_t)i1 * r->Tk;
    int hl = r->h / 2;
    float inv_h = 1.0f / (float)r->h;
    for (size_t e0 = (size_t)i0 * r->Tk; e0 < e1; e0 += BLOCK) {
        size_t n = e1 - e0 < BLOCK ? e1 - e0 : BLOCK;
        float *restrict a = out + e0;
        if (hl == 0) { /* one head */
            sum_heads(r, 0, r->h, e0, n, a);
            for (size_t e = 0; e < n; e++)
                a[e] *= inv_h;
            continue;
        }
        sum_heads(r, 0, hl, e0, n, a);
        sum_heads(r, hl, r->h, e0, n, right);
        for (size_t e = 0; e < n; e++)
            a[e] = (a[e] + right[e]) * inv_h;
    }
}

void attn_heads_mean(const AttnResult *r, float *out)
{
    if (r->h > 0)
        average_into(r, out, 0, r->Tq);
}

/* One forward pass's inputs and settings, for the passes run by the jobs. */
typedef struct Fwd {
    AttnResult *r;
    const ScoreFn *f;
    const Change *ch;
    const float *Xq, *Xkv;
    const AttnParams *p; /* NULL or unused in basic mode */
    int d, learned;
    int avg0;            /* the heads' average from this row on */
    int mid;             /* with the heads split: pass 5's rows [avg0, mid)
                            on the first thread, [mid, Tq) on the second */
} Fwd;

/* After heads [k0, k1) (the first half of the heads or the second) on one
 * thread of the heads split: their sum (average_into), for the rows this
 * thread finishes in pass 5 into avg, for the other thread's rows into
 * avg_part, so that each thread reads only one sum the other made. */
static void sum_half(const Fwd *fw, int k0, int k1)
{
    AttnResult *r = fw->r;
    size_t lo = (size_t)fw->avg0 * r->Tk, mid = (size_t)fw->mid * r->Tk,
           hi = (size_t)r->Tq * r->Tk;
    float *first = k0 == 0 ? r->avg : r->avg_part, *second = k0 == 0 ? r->avg_part : r->avg;
    sum_heads(r, k0, k1, lo, mid - lo, first + lo);
    sum_heads(r, k0, k1, mid, hi - mid, second + mid);
}

/* The heads' mean of rows [i0, i1) (all before mid or all from mid on)
 * from the two halves' sums (sum_half): the first half's sum plus the
 * second's, then divided, as average_into. */
static void finish_halves(const Fwd *fw, int i0, int i1)
{
    AttnResult *r = fw->r;
    float inv_h = 1.0f / (float)r->h;
    /* rows before mid hold the first half's sum in avg, the others in part */
    const float *first = i0 < fw->mid ? r->avg : r->avg_part;
    const float *second = i0 < fw->mid ? r->avg_part : r->avg;
    for (size_t e = (size_t)i0 * r->Tk; e < (size_t)i1 * r->Tk; e++)
        r->avg[e] = (first[e] + second[e]) * inv_h;
}

/* Pass 1 for head k, query rows [q0, q1) and key rows [k0, k1): Q = Xq·Wq,
 * K = Xkv·Wk, V = Xkv·Wv (in basic mode Q = K = V = X), and those keys in
 * the transposed K of the score kernel. Row by row the same floats however
 * the rows are split. */
static void project_rows(const Fwd *fw, int k, int q0, int q1, int k0, int k1)
{
    AttnResult *r = fw->r;
    const Kernels *kn = attn_kernel_set();
    int Tq = r->Tq, Tk = r->Tk, d = fw->d, dk = r->dk;
    size_t slice = (size_t)d * dk;
    int nq = q1 - q0, nk = k1 - k0;
    float *Q = r->Q + (size_t)k * Tq * dk + (size_t)q0 * dk;
    float *K = r->K + (size_t)k * Tk * dk + (size_t)k0 * dk;
    float *V = r->V + (size_t)k * Tk * dk + (size_t)k0 * dk;
    const float *xq = fw->Xq + (size_t)q0 * d, *xkv = fw->Xkv + (size_t)k0 * d;
    if (fw->learned) {
        kn->matmul(Q, xq, d, fw->p->Wq + k * slice, nq, d, dk);
        kn->matmul(K, xkv, d, fw->p->Wk + k * slice, nk, d, dk);
        kn->matmul(V, xkv, d, fw->p->Wv + k * slice, nk, d, dk);
    } else {
        memcpy(Q, xq, (size_t)nq * d * sizeof(float));
        memcpy(K, xkv, (size_t)nk * d * sizeof(float));
        memcpy(V, xkv, (size_t)nk * d * sizeof(float));
    }
    int ld = attn_kt_stride(Tk);
    float *Kt = r->Kt + (size_t)k * ld * dk;
    for (int j = 0; j < nk; j++)
        for (int c = 0; c < dk; c++)
            Kt[(size_t)c * ld + k0 + j] = K[(size_t)j * dk + c];
}

/* Pass 1 for head k: the changed rows. */
static void project_head(const Fwd *fw, int k)
{
    const Change *ch = fw->ch;
    project_rows(fw, k, ch->q_lo, ch->q_hi, ch->k_lo, ch->k_hi);
}

/* Pass 5 for query rows [i0, i1) from row avg0 on: concatenate the heads'
 * Z, output = concat·Wo (row by row the same floats however the rows are
 * split), and the heads' mean of those rows (halves: from the sums of the
 * heads split's two threads). */
static void tail_rows(const Fwd *fw, int i0, int i1, int halves)
{
    AttnResult *r = fw->r;
    int d = fw->d, dk = r->dk, Tq = r->Tq;
    i0 = i0 > fw->avg0 ? i0 : fw->avg0;
    if (i0 >= i1)
        return;
    for (int i = i0; i < i1; i++)
        for (int k = 0; k < r->h; k++)
            memcpy(r->concat + (size_t)i * d + k * dk, r->Z + (size_t)k * Tq * dk + (size_t)i * dk,
                   (size_t)dk * sizeof(float));
    float *out = r->output + (size_t)i0 * d;
    const float *cat = r->concat + (size_t)i0 * d;
    if (fw->learned)
        attn_kernel_set()->matmul(out, cat, d, fw->p->Wo, i1 - i0, d, d);
    else
        memcpy(out, cat, (size_t)(i1 - i0) * d * sizeof(float));
    if (!r->avg) /* not kept */
        return;
    if (halves)
        finish_halves(fw, i0, i1);
    else
        average_into(r, r->avg, i0, i1);
}

/* Work for one thread: query rows [i0, i1) of every head (JOB_ROWS: passes
 * 2-4, their average, pass 5), heads [i0, i1) whole (JOB_HEADS: passes
 * 1-4; JOB_HALF: the same and their sum, sum_half), rows [i0, i1) of pass 5
 * and the average (JOB_TAIL; JOB_TAIL_HALVES: from the halves' sums), or
 * pass 1 of every head for query rows [i0, i1) and key rows [j0, j1)
 * (JOB_PROJ). */
enum { JOB_ROWS, JOB_HEADS, JOB_HALF, JOB_TAIL, JOB_TAIL_HALVES, JOB_PROJ };
typedef struct Job {
    const Fwd *fw;
    int kind, i0, i1, j0, j1;
} Job;

static void job_run(void *arg)
{
    const Job *j = arg;
    AttnResult *r = j->fw->r;
    if (j->kind == JOB_PROJ) {
        for (int k = 0; k < r->h; k++)
            project_rows(j->fw, k, j->i0, j->i1, j->j0, j->j1);
        return;
    }
    if (j->kind == JOB_HEADS || j->kind == JOB_HALF) {
        for (int k = j->i0; k < j->i1; k++) {
            project_head(j->fw, k);
            head_rows(r, k, j->fw->f, j->fw->ch, 0, r->Tq);
        }
        if (j->kind == JOB_HALF)
            sum_half(j->fw, j->i0, j->i1);
        return;
    }
    if (j->kind == JOB_ROWS)
        for (int k = 0; k < r->h; k++)
            head_rows(r, k, j->fw->f, j->fw->ch, j->i0, j->i1);
    tail_rows(j->fw, j->i0, j->i1, j->kind == JOB_TAIL_HALVES);
}

/* a and b on two threads, or (no worker) one after the other */
static void run_two(Job *a, Job *b)
{
    if (workers_run2(job_run, a, b) < 0) {
        job_run(a);
        job_run(b);
    }
}

/* Passes 1-5 and the heads' average, on two threads when it pays: large
 * inputs split the rows (pass 1's query and key rows, then the query rows
 * of passes 2-5), smaller ones with two heads or more split the heads,
 * then the rows of pass 5; the same floats either way. */
static void run_passes(const Fwd *fw)
{
    AttnResult *r = fw->r;
    int split = split_of(r->h, r->Tq, r->Tk, r->dk), half = r->Tq / 2;
    if (split == SPLIT_ROWS) {
        const Change *ch = fw->ch;
        int qm = ch->q_lo + (ch->q_hi - ch->q_lo) / 2, km = ch->k_lo + (ch->k_hi - ch->k_lo) / 2;
        Job pa = {fw, JOB_PROJ, ch->q_lo, qm, ch->k_lo, km};
        Job pb = {fw, JOB_PROJ, qm, ch->q_hi, km, ch->k_hi};
        run_two(&pa, &pb);
        Job a = {fw, JOB_ROWS, 0, half, 0, 0}, b = {fw, JOB_ROWS, half, r->Tq, 0, 0};
        run_two(&a, &b);
    } else if (split == SPLIT_HEADS) {
        int kind = r->avg ? JOB_HALF : JOB_HEADS; /* the halves' sums when the mean is kept */
        Job a = {fw, kind, 0, r->h / 2, 0, 0}, b = {fw, kind, r->h / 2, r->h, 0, 0};
        run_two(&a, &b);
        Job ta = {fw, JOB_TAIL_HALVES, fw->avg0, fw->mid, 0, 0};
        Job tb = {fw, JOB_TAIL_HALVES, fw->mid, r->Tq, 0, 0};
        run_two(&ta, &tb);
    } else {
        Job a = {fw, JOB_HEADS, 0, r->h, 0, 0}, t = {fw, JOB_TAIL, 0, r->Tq, 0, 0};
        job_run(&a);
        job_run(&t);
    }
}

/* Move h matrices of tq0 rows × tk0 columns to tq × tk in place, keeping
 * rows [0, kq) and columns [0, kk): the last row first when they grow, the
 * first first when they shrink, so no kept row is overwritten before it
 * moves (both must grow or both shrink). */
static void restride_matrices(float *a, int h, int tq0, int tk0, int tq, int tk, int kq, int kk)
{
    int grow = tq >= tq0 && tk >= tk0;
    for (int e0 = 0; e0 < h * kq; e0++) {
        int e = grow ? h * kq - 1 - e0 : e0;
        int k = e / kq, i = e % kq;
        memmove(a + ((size_t)k * tq + i) * tk, a + ((size_t)k * tq0 + i) * tk0,
                (size_t)kk * sizeof(float));
    }
}

/* Resize the last forward's arrays from r's shapes to Tq × Tk keeping the
 * first kq query rows and kk key rows (everything after is recomputed). In
 * rows kept whole, the new keys' weights start as 0 (masked). */
static void restride(AttnResult *r, int Tq, int Tk, int kq, int kk)
{
    int h = r->h, dk = r->dk, tq0 = r->Tq, tk0 = r->Tk;
    /* Q, Z: h × Tq × dk; K, V: h × Tk × dk */
    restride_matrices(r->Q, h, tq0, dk, Tq, dk, kq, dk);
    restride_matrices(r->Z, h, tq0, dk, Tq, dk, kq, dk);
    restride_matrices(r->K, h, tk0, dk, Tk, dk, kk, dk);
    restride_matrices(r->V, h, tk0, dk, Tk, dk, kk, dk);
    /* Kt: h × dk rows of Tk keys, at its padded stride */
    restride_matrices(r->Kt, h, dk, attn_kt_stride(tk0), dk, attn_kt_stride(Tk), dk, kk);
    restride_matrices(r->scores, h, tq0, tk0, Tq, Tk, kq, kk);
    if (r->logits)
        restride_matrices(r->logits, h, tq0, tk0, Tq, Tk, kq, kk);
    restride_matrices(r->weights, h, tq0, tk0, Tq, Tk, kq, kk);
    if (r->avg)
        restride_matrices(r->avg, 1, tq0, tk0, Tq, Tk, kq, kk);
    for (int k = 0; k < h; k++)
        for (int i = 0; i < kq; i++)
            memset(r->weights + ((size_t)k * Tq + i) * Tk + kk, 0, (size_t)(Tk - kk) * sizeof(float));
    for (int i = 0; r->avg && i < kq; i++)
        memset(r->avg + (size_t)i * Tk + kk, 0, (size_t)(Tk - kk) * sizeof(float));
    /* concat and output keep their rows where they are (stride d) */
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
    if (!(cfg->temperature > 0.0f) || !isfinite(cfg->temperature) || cfg->score < 0 ||
        cfg->score >= ATTN_SCORE_COUNT)
        return -ATTN_E_RANGE;
    if (!learned && cfg->score == ATTN_SCORE_ADDITIVE && p && p->vb && p->d != d)
        return -ATTN_E_SHAPE; /* vb holds p->d numbers, not d */
    int dk = d / h;
    /* a partial update needs the last forward's buffers, and its shapes
     * unless it says they changed (then only both growing or both shrinking:
     * the arrays are moved in place) */
    int had_logits = r->logits != NULL, had_avg = r->avg != NULL;
    int tq0 = r->Tq, tk0 = r->Tk;
    int same = tq0 == Tq && tk0 == Tk;
    int movable = ch.resized && tq0 > 0 && tk0 > 0 && ch.q_lo <= tq0 && ch.k_lo <= tk0 &&
                  ((Tq >= tq0 && Tk >= tk0) || (Tq <= tq0 && Tk <= tk0));
    if ((!same && !movable) || r->d != d || r->h != h || r->causal != cfg->causal ||
        had_logits != !r->skip_logits || had_avg != !r->skip_avg || ch.q_lo < 0 || ch.k_lo < 0 || ch.q_lo > Tq ||
        ch.k_lo > Tk || ch.q_hi > Tq || ch.k_hi > Tk)
        ch = (Change){0, Tq, 0, Tk, 0, 0};
    if (ch.q_hi < ch.q_lo)
        ch.q_hi = ch.q_lo;
    if (ch.k_hi < ch.k_lo)
        ch.k_hi = ch.k_lo;
    int rc = reserve(r, Tq, Tk, d, h);
    if (rc < 0) {
        r->Tq = r->Tk = 0; /* nothing of the last forward can be reused */
        return rc;
    }
    if (!same && (ch.q_lo > 0 || ch.k_lo > 0)) {
        restride(r, Tq, Tk, ch.q_lo, ch.k_lo);
        ch.k_removed = Tk < tk0;
    }
    r->Tq = Tq;
    r->Tk = Tk;
    r->d = d;
    r->h = h;
    r->dk = dk;
    r->causal = cfg->causal;
    /* the additive vector: each head's v, or in basic mode vb (p may be
     * NULL there: the defaults) */
    ScoreFn fn = {cfg->score, learned ? p->v : p ? p->vb : NULL, (size_t)dk,
                  attn_logit_scale(cfg, dk)};

    /* the first row whose weights and Z may change: a changed query's row;
     * without the mask every row when a key changed, with it the rows from
     * that key on */
    int nq = ch.q_hi - ch.q_lo;
    int z0 = Tq;
    if (nq > 0)
        z0 = ch.q_lo;
    if (keys_changed(&ch))
        z0 = !r->causal ? 0 : ch.k_lo < z0 ? ch.k_lo : z0;

    /* passes 1-4 per head: projections, scores, softmax, context vectors,
     * then the heads' average from row z0 */
    Fwd fw = {r, &fn, &ch, Xq, Xkv, p, d, learned, z0, z0 + (Tq - z0) / 2};
    run_passes(&fw);
    return 0;
}

int attn_forward(AttnResult *r, const float *Xq, int Tq, const float *Xkv,
                 int Tk, int d, const AttnParams *p, const AttnConfig *cfg)
{
    return forward(r, Xq, Tq, Xkv, Tk, d, p, cfg, (Change){0, Tq, 0, Tk, 0, 0});
}

int attn_forward_update(AttnResult *r, const float *Xq, int Tq, const float *Xkv, int Tk,
                        int d, const AttnParams *p, const AttnConfig *cfg, int q_lo,
                        int q_hi, int k_lo, int k_hi)
{
    return forward(r, Xq, Tq, Xkv, Tk, d, p, cfg, (Change){q_lo, q_hi, k_lo, k_hi, 0, 0});
}

int attn_forward_resize(AttnResult *r, const float *Xq, int Tq, const float *Xkv, int Tk,
                        int d, const AttnParams *p, const AttnConfig *cfg, int keep_q, int keep_k)
{
    return forward(r, Xq, Tq, Xkv, Tk, d, p, cfg, (Change){keep_q, Tq, keep_k, Tk, 1, 0});
}
