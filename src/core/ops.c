/* The operations of ops.h: the products shared by the two threads, the
 * norms, activations, gated MLPs, logits and top k. Plain C, libm and the
 * worker thread of workers.h; no file, no screen. */
#include "ops.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/quant.h"
#include "attnviz/workers.h"
#include "lm_kernels.h"

/* Below this many multiply-adds work runs on one thread: handing half to
 * the worker costs a few microseconds. */
enum { SPLIT_MIN = 1 << 16 };

/* Work shared by two threads: each takes the next piece (of `pieces`)
 * until none is left, so a thread the system delays takes fewer. Which
 * thread computes a piece changes no float. */
typedef struct Shared {
    atomic_int next;
    int pieces;
    void (*piece)(const void *job, int k);
    const void *job;
} Shared;

static void shared_run(void *arg)
{
    Shared *sh = arg;
    for (int k; (k = atomic_fetch_add(&sh->next, 1)) < sh->pieces;)
        sh->piece(sh->job, k);
}

void ops_share(void (*piece)(const void *, int), const void *job, int pieces, double work)
{
    Shared sh = {0, pieces, piece, job};
    if (pieces < 2 || work < SPLIT_MIN || workers_run2(shared_run, &sh, &sh) < 0)
        shared_run(&sh);
}

/* ---- norms and activations --------------------------------------------------- */

/* Σ_c (x[c] − mean)^p over a row (p 1 or 2) in double: four sums over c
 * mod 4 (four chains in flight, not one of C additions' latency), added
 * pairwise, then the tail. */
static double row_sum(const float *x, int C, double mean, int p)
{
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    int c = 0;
    for (; c + 4 <= C; c += 4)
        for (int u = 0; u < 4; u++) {
            double d = x[c + u] - mean;
            s[u] += p == 1 ? d : d * d;
        }
    double t = (s[0] + s[1]) + (s[2] + s[3]);
    for (; c < C; c++)
        t += p == 1 ? x[c] - mean : (x[c] - mean) * (x[c] - mean);
    return t;
}

void ops_norm(float *out, const float *x, const OpsNorm *nm, int n, int C)
{
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * C;
        float *o = out + (size_t)i * C;
        if (nm->kind == OPS_NORM_LAYER) {
            double mean = row_sum(xi, C, 0.0, 1) / C, var = row_sum(xi, C, mean, 2);
            double rstd = 1.0 / sqrt(var / C + (double)nm->eps);
            for (int c = 0; c < C; c++)
                o[c] = (float)((xi[c] - mean) * rstd * nm->w[c] + (nm->b ? nm->b[c] : 0.0f));
            continue;
        }
        double r = 1.0 / sqrt(row_sum(xi, C, 0.0, 2) / C + (double)nm->eps);
        if (nm->kind == OPS_NORM_RMS)
            for (int c = 0; c < C; c++)
                o[c] = (float)(xi[c] * r * nm->w[c]);
        else
            for (int c = 0; c < C; c++)
                o[c] = (float)(xi[c] * r * (1.0 + (double)nm->w[c]));
    }
}

/* The activations on rows [0, n), columns j0 … j1 (row stride ld): GELU's
 * two forms are kernels whose float depends on its input alone, vector or
 * not (the erf form's erf within an ulp of the float nearest erf: lm_kernels' gelu_erf). */
static void act_rows(float *h, int ld, int n, int j0, int j1, OpsAct act)
{
    for (int i = 0; i < n; i++) {
        float *r = h + (size_t)i * ld;
        if (act == OPS_GELU_TANH)
            lm_kernel_set()->gelu_tanh(r + j0, j1 - j0);
        else if (act == OPS_GELU_ERF)
            lm_kernel_set()->gelu_erf(r + j0, j1 - j0);
        else if (act == OPS_RELU)
            for (int k = j0; k < j1; k++)
                r[k] = r[k] > 0.0f ? r[k] : 0.0f;
        else if (act == OPS_SILU)
            for (int k = j0; k < j1; k++)
                r[k] = r[k] / (1.0f + expf(-r[k]));
    }
}

typedef struct ActJob {
    float *h;
    int ld, n, j0, j1, per; /* per: the rows of a piece */
    OpsAct act;
} ActJob;

static void act_piece(const void *arg, int piece)
{
    const ActJob *j = arg;
    int r0 = piece * j->per, r1 = r0 + j->per < j->n ? r0 + j->per : j->n;
    act_rows(j->h + (size_t)r0 * j->ld, j->ld, r1 - r0, j->j0, j->j1, j->act);
}

/* A forward's many rows on the two threads (an activation costs about as
 * much as twenty multiply-adds), a keystroke's few on this one. */
void ops_activate(float *h, int ld, int n, int j0, int j1, OpsAct act)
{
    if (act == OPS_NO_ACT || n <= 0)
        return;
    int per = (n + 7) / 8;
    ActJob j = {h, ld, n, j0, j1, per, act};
    ops_share(act_piece, &j, (n + per - 1) / per, 20.0 * n * (j1 - j0));
}

void ops_glu(float *gate, const float *up, size_t n, OpsAct act)
{
    if (act == OPS_SILU) {
        for (size_t k = 0; k < n; k++)
            gate[k] = gate[k] / (1.0f + expf(-gate[k])) * up[k];
        return;
    }
    ops_activate(gate, (int)n, 1, 0, (int)n, act);
    for (size_t k = 0; k < n; k++)
        gate[k] *= up[k];
}

/* Rows shared by the two threads: x += add, then xn = norm(x), rows [r0,
 * r1) a piece. A row's floats are the same whichever thread computes it. */
typedef struct RowJob {
    float *x, *xn;
    const float *add;
    const OpsNorm *nm;
    int n, C, per;
} RowJob;

static void row_piece(const void *arg, int piece)
{
    const RowJob *j = arg;
    int r0 = piece * j->per, r1 = r0 + j->per < j->n ? r0 + j->per : j->n;
    size_t C = (size_t)j->C;
    if (j->add)
        for (size_t k = r0 * C; k < r1 * C; k++)
            j->x[k] += j->add[k];
    if (j->nm)
        ops_norm(j->xn + r0 * C, j->x + r0 * C, j->nm, r1 - r0, j->C);
}

void ops_add_norm(float *x, const float *add, float *xn, const OpsNorm *nm, int n, int C)
{
    int per = (n + 7) / 8;
    RowJob j = {x, xn, add, nm, n, C, per};
    ops_share(row_piece, &j, (n + per - 1) / per, 4.0 * n * C);
}

/* ---- products ---------------------------------------------------------------- */

typedef struct LinJob {
    float *out;
    const float *A, *W, *bias;
    int ldo, lda, n, k, m, cols; /* cols: the columns of a piece */
    OpsAct act;                  /* applied to the piece after */
    float *out2;                 /* a few rows: the second chain's sums */
} LinJob;

/* At most this many rows go to the kernel that reads W in whole rows (a
 * keystroke's, or a few typed while the last forward ran): the 48 products
 * of GPT-2 small took 14.7–15.2 ms for 3 rows against 18.6–20.0 through
 * the tiles, 16.3–17.2 against 17.6–19.4 for 4, about the same for 5. */
enum { FEW_ROWS = 4 };

static void lin_piece(const void *arg, int piece)
{
    const LinJob *j = arg;
    int j0 = piece * j->cols, j1 = j0 + j->cols < j->m ? j0 + j->cols : j->m;
    lm_kernel_set()->linear(j->out, j->ldo, j->A, j->lda, j->W, j->bias, j->n, j->k, j->m, j0,
                            j1);
    if (j->act != OPS_NO_ACT)
        act_rows(j->out, j->ldo, j->n, j0, j1, j->act);
}

/* A few rows: piece 0 the first chain (W's rows before h, from the bias)
 * into out, piece 1 the second (the rest, from 0) into out2 (row stride
 * m); each thread reads its half of W in one run, as the read bandwidth
 * is measured. */
static void few_piece(const void *arg, int piece)
{
    const LinJob *j = arg;
    int h = lm_half(j->k);
    if (piece == 0)
        lm_kernel_set()->linear_few(j->out, j->ldo, j->A, j->lda, j->W, j->bias, j->n, h, j->m,
                                    0, j->m);
    else
        lm_kernel_set()->linear_few(j->out2, j->m, j->A + h, j->lda, j->W + (size_t)h * j->m,
                                    NULL, j->n, j->k - h, j->m, 0, j->m);
}

typedef struct Lin16Job {
    float *out;
    const float *A, *bias;
    const uint16_t *W;
    int ldo, lda, n, k, m, cols;
} Lin16Job;

static void lin16_piece(const void *arg, int piece)
{
    const Lin16Job *j = arg;
    int j0 = piece * j->cols, j1 = j0 + j->cols < j->m ? j0 + j->cols : j->m;
    lm_kernel_set()->linear_bf16(j->out, j->ldo, j->A, j->lda, j->W, j->bias, j->n, j->k, j0,
                                 j1);
}

typedef struct LinQJob {
    float *out;
    const float *A, *bias;
    const RtMat *W;
    int ldo, lda, n, k, m, cols;
} LinQJob;

static void linq_piece(const void *arg, int piece)
{
    const LinQJob *j = arg;
    int j0 = piece * j->cols, j1 = j0 + j->cols < j->m ? j0 + j->cols : j->m;
    quant_linear_cols(j->out, j->ldo, j->A, j->lda, j->W->type, j->W->data, j->W->row_bytes,
                      j->W->perm, j->bias, j->n, j->k, j0, j1);
}

/* One product's job in pieces of columns for ops_share: piece k of job by
 * piece(job, k). */
typedef struct Prod {
    void (*piece)(const void *job, int k);
    int pieces;
    double work;
    union {
        LinJob lin;
        Lin16Job l16;
        LinQJob q;
    } job;
} Prod;

/* A float32 [in, out] product of many rows in pieces of columns (one of
 * the kernel's tiles, or more to make at most 64 pieces: small pieces even
 * out the two threads' ends), act applied to each piece after. */
static void prod_f32(Prod *p, float *out, int ldo, const float *A, int lda, const float *W,
                     const float *bias, int n, int k, int m, OpsAct act)
{
    int tile = lm_kernel_set()->lin_cols, tiles = (m + tile - 1) / tile;
    int per = (tiles + 63) / 64;
    p->job.lin = (LinJob){out, A, W, bias, ldo, lda, n, k, m, per * tile, act, NULL};
    p->piece = lin_piece;
    p->pieces = (tiles + per - 1) / per;
    p->work = (double)n * k * m;
}

/* A product with W as the file stores it ([out, in]) in pieces of at
 * least 8 and at most 32 rows of W: bfloat16 rows in order, k numbers
 * each, by the tiled kernel, any other by quant_linear_cols. */
static void prod_mat(Prod *p, float *out, int ldo, const float *A, int lda, const RtMat *W,
                     const float *bias, int n, int k, int m)
{
    int per = (m + 31) / 32 > 8 ? (m + 31) / 32 : 8;
    if (W->type == RT_MAT_BF16 && !W->perm && W->row_bytes == (size_t)k * 2) {
        p->job.l16 = (Lin16Job){out, A, bias, W->data, ldo, lda, n, k, m, per};
        p->piece = lin16_piece;
    } else {
        p->job.q = (LinQJob){out, A, bias, W, ldo, lda, n, k, m, per};
        p->piece = linq_piece;
    }
    p->pieces = (m + per - 1) / per;
    p->work = (double)n * k * m;
}

/* In pieces of columns (prod_f32), or for a few rows in the two halves of
 * linear's sums, then added. */
void ops_linear_act(float *out, int ldo, const float *A, int lda, const float *W,
                    const float *bias, int n, int k, int m, OpsAct act)
{
    if (n <= FEW_ROWS) {
        float stack[2 * 4096];
        float *out2 = (size_t)n * m <= 2 * 4096 ? stack : malloc(sizeof(float) * (size_t)n * m);
        if (out2) {
            LinJob j = {out, A, W, bias, ldo, lda, n, k, m, m, act, out2};
            ops_share(few_piece, &j, 2, (double)n * k * m);
            for (int i = 0; i < n; i++)
                for (int c = 0; c < m; c++)
                    out[(size_t)i * ldo + c] += out2[(size_t)i * m + c];
            if (act != OPS_NO_ACT)
                ops_activate(out, ldo, n, 0, m, act);
            if (out2 != stack)
                free(out2);
            return;
        }
    }
    Prod p;
    prod_f32(&p, out, ldo, A, lda, W, bias, n, k, m, act);
    ops_share(p.piece, &p.job, p.pieces, p.work);
}

void ops_linear(float *out, int ldo, const float *A, int lda, const float *W,
                const float *bias, int n, int k, int m)
{
    ops_linear_act(out, ldo, A, lda, W, bias, n, k, m, OPS_NO_ACT);
}

void ops_linear_mat(float *out, int ldo, const float *A, int lda, const RtMat *W,
                    const float *bias, int n, int k, int m)
{
    Prod p;
    prod_mat(&p, out, ldo, A, lda, W, bias, n, k, m);
    ops_share(p.piece, &p.job, p.pieces, p.work);
}

/* Several products' pieces as one job: piece k is product i's piece k −
 * (the pieces of the products before i). */
typedef struct Batch {
    Prod p[OPS_BATCH_MAX];
    int np;
} Batch;

static void batch_piece(const void *arg, int k)
{
    const Batch *b = arg;
    int i = 0;
    while (i < b->np - 1 && k >= b->p[i].pieces)
        k -= b->p[i++].pieces;
    b->p[i].piece(&b->p[i].job, k);
}

/* A keystroke's few rows of a float32 product take linear_few's two
 * halves (ops_linear_act): those products one at a time, as alone. */
void ops_linear_batch(const RtProj *pr, int np, const float *A, int lda, int n, int k)
{
    int alone = np > OPS_BATCH_MAX;
    for (int i = 0; i < np; i++)
        alone = alone || (!pr[i].wm && n <= FEW_ROWS);
    if (alone) {
        for (int i = 0; i < np; i++)
            if (pr[i].wm)
                ops_linear_mat(pr[i].out, pr[i].ldo, A, lda, pr[i].wm, pr[i].bias, n, k, pr[i].m);
            else
                ops_linear(pr[i].out, pr[i].ldo, A, lda, pr[i].W, pr[i].bias, n, k, pr[i].m);
        return;
    }
    Batch b = {.np = np};
    int pieces = 0;
    double work = 0;
    for (int i = 0; i < np; i++) {
        if (pr[i].wm)
            prod_mat(&b.p[i], pr[i].out, pr[i].ldo, A, lda, pr[i].wm, pr[i].bias, n, k, pr[i].m);
        else
            prod_f32(&b.p[i], pr[i].out, pr[i].ldo, A, lda, pr[i].W, pr[i].bias, n, k, pr[i].m,
                     OPS_NO_ACT);
        pieces += b.p[i].pieces;
        work += b.p[i].work;
    }
    ops_share(batch_piece, &b, pieces, work);
}

void ops_mat_row(float *dst, const RtMat *W, int r, int k)
{
    quant_row(dst, W->type, W->data, W->row_bytes, W->perm, r, k);
}

/* ---- the next token ---------------------------------------------------------- */

typedef struct DotJob {
    float *out;
    const float *x, *rows;
    int C, V, per; /* per: the rows of a piece */
} DotJob;

static void dot_piece(const void *arg, int piece)
{
    const DotJob *j = arg;
    int v0 = piece * j->per, v1 = v0 + j->per < j->V ? v0 + j->per : j->V;
    lm_kernel_set()->dots(j->out, j->x, j->rows, j->C, v0, v1);
}

void ops_dots(float *out, const float *x, const float *rows, int C, int V)
{
    DotJob j = {out, x, rows, C, V, (V + 15) / 16};
    ops_share(dot_piece, &j, (V + j.per - 1) / j.per, (double)V * C);
}

void ops_top_k_of(const float *logits, int V, int k, int *ids, float *probs)
{
    /* the softmax's denominator in double; NaN logits count as -inf */
    float mx = -INFINITY;
    for (int v = 0; v < V; v++)
        mx = logits[v] > mx ? logits[v] : mx;
    double sum = 0.0;
    for (int v = 0; v < V; v++)
        sum += logits[v] == logits[v] ? exp((double)logits[v] - mx) : 0.0;
    /* the k best by insertion into a sorted list: ids[0] the largest */
    int n = 0;
    for (int v = 0; v < V; v++) {
        float x = logits[v];
        if (x != x || (n == k && (k == 0 || !(x > logits[ids[n - 1]]))))
            continue;
        int at = n < k ? n++ : k - 1;
        while (at > 0 && x > logits[ids[at - 1]]) {
            ids[at] = ids[at - 1];
            at--;
        }
        ids[at] = v;
    }
    for (int r = 0; r < k; r++) {
        if (r >= n) { /* fewer than k numbers: the rest NaN, probability 0 */
            ids[r] = -1;
            probs[r] = 0.0f;
        } else {
            probs[r] = (float)(exp((double)logits[ids[r]] - mx) / sum);
        }
    }
}
