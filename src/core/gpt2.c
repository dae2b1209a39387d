/* GPT-2's forward pass (gpt2_forward.h): the state, the blocks in passes
 * as the equations go, the incremental start at the first changed token,
 * the maps, the queries and keys, the next token's logits and top k. Plain
 * C, libm and the worker thread of workers.h; no file, no screen. */
#include "attnviz/gpt2_forward.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attn.h"
#include "attnviz/workers.h"
#include "gpt2_kernels.h"

/* Below this many multiply-adds work runs on one thread: handing half to
 * the worker costs a few microseconds. */
enum { SPLIT_MIN = 1 << 16 };

int gpt2_config_check(const Gpt2Config *c, AttnErr *err)
{
    if (c->n_layer <= 0 || c->n_head <= 0 || c->n_embd <= 0 || c->n_positions <= 0 ||
        c->n_inner <= 0 || c->n_vocab <= 0)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0,
                            "GPT-2 sizes must be positive (n_layer %d, n_head %d, n_embd %d, "
                            "n_positions %d, n_inner %d, n_vocab %d)",
                            c->n_layer, c->n_head, c->n_embd, c->n_positions, c->n_inner,
                            c->n_vocab);
    if (c->n_embd % c->n_head)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0, "n_head %d does not divide n_embd %d",
                            c->n_head, c->n_embd);
    if ((unsigned)c->act > GPT2_ACT_RELU)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, NULL, 0, "activation %d", (int)c->act);
    if (!(c->ln_eps >= 0.0f) || !isfinite(c->ln_eps))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "layer_norm_epsilon %g", c->ln_eps);
    return 0;
}

int gpt2_state_create(Gpt2State **out, const Gpt2Config *cfg, AttnErr *err)
{
    *out = NULL;
    int rc = gpt2_config_check(cfg, err);
    if (rc < 0)
        return rc;
    Gpt2State *s = calloc(1, sizeof *s);
    if (!s || !(s->ids = calloc((size_t)cfg->n_positions, sizeof *s->ids)) ||
        !(s->xf = malloc((size_t)cfg->n_embd * sizeof *s->xf))) {
        gpt2_state_destroy(s);
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "GPT-2 state");
    }
    s->cfg = *cfg;
    s->d_head = cfg->n_embd / cfg->n_head;
    *out = s;
    return 0;
}

void gpt2_state_destroy(Gpt2State *s)
{
    if (!s)
        return;
    free(s->ids);
    free(s->maps);
    free(s->qkv);
    free(s->kt);
    free(s->x);
    free(s->xn);
    free(s->z);
    free(s->out);
    free(s->hid);
    free(s->xf);
    free(s);
}

void gpt2_state_reset(Gpt2State *s)
{
    s->T = 0;
    s->n_done = 0;
}

/* Room for T positions: the state's arrays grown (gpt2_grow). */
static int reserve(Gpt2State *s, int T)
{
    if (T <= s->cap)
        return 0;
    const Gpt2Config *c = &s->cfg;
    int cap = gpt2_next_cap(s->cap, T, c->n_positions);
    size_t L = (size_t)c->n_layer, H = (size_t)c->n_head, C = (size_t)c->n_embd;
    Gpt2Grow g = {L * H, L, 3 * C, L * H * (size_t)s->d_head, &s->maps, &s->qkv, &s->kt, 5,
                  {&s->x, &s->xn, &s->z, &s->out, &s->hid}, {C, C, C, C, (size_t)c->n_inner}};
    if (gpt2_grow(&g, (size_t)s->cap, (size_t)cap, (size_t)s->T) < 0)
        return -ATTN_E_NOMEM;
    s->cap = cap;
    return 0;
}

int gpt2_next_cap(int cap, int T, int max)
{
    int n = cap + cap / 2;
    n = n < T ? T : n;
    n = (n + 15) / 16 * 16;
    return n > max ? max : n;
}

int gpt2_grow(const Gpt2Grow *g, size_t oc, size_t nc, size_t keep)
{
    float *maps = calloc(g->n_maps * nc * nc, sizeof *maps);
    float *qkv = malloc(g->layers * nc * g->qkv_w * sizeof *qkv);
    float *kt = malloc(g->kt_rows * nc * sizeof *kt);
    int ok = maps && qkv && kt;
    for (int k = 0; k < g->n_rows && ok; k++) {
        float *p = realloc(*g->rows[k], nc * g->width[k] * sizeof(float));
        ok = p != NULL;
        if (ok)
            *g->rows[k] = p;
    }
    if (!ok) {
        free(maps);
        free(qkv);
        free(kt);
        return -ATTN_E_NOMEM;
    }
    for (size_t m = 0; m < g->n_maps; m++)
        for (size_t i = 0; i < keep; i++)
            memcpy(maps + (m * nc + i) * nc, *g->maps + (m * oc + i) * oc, (i + 1) * sizeof(float));
    for (size_t l = 0; l < g->layers && keep; l++)
        memcpy(qkv + l * nc * g->qkv_w, *g->qkv + l * oc * g->qkv_w, keep * g->qkv_w * sizeof(float));
    for (size_t r = 0; r < g->kt_rows && keep; r++)
        memcpy(kt + r * nc, *g->kt + r * oc, keep * sizeof(float));
    free(*g->maps);
    free(*g->qkv);
    free(*g->kt);
    *g->maps = maps;
    *g->qkv = qkv;
    *g->kt = kt;
    return 0;
}

/* ---- the passes ------------------------------------------------------------ */

/* out = LayerNorm(x) rows by rows (C each): the mean, the biased variance
 * (both summed in double, in order), eps inside the square root; each
 * output rounded to float once. */
static void layernorm(float *out, const float *x, const float *w, const float *b, int n, int C,
                      float eps)
{
    for (int i = 0; i < n; i++) {
        const float *xi = x + (size_t)i * C;
        float *o = out + (size_t)i * C;
        double sum = 0.0, var = 0.0;
        for (int c = 0; c < C; c++)
            sum += xi[c];
        double mean = sum / C;
        for (int c = 0; c < C; c++)
            var += (xi[c] - mean) * (xi[c] - mean);
        double rstd = 1.0 / sqrt(var / C + (double)eps);
        for (int c = 0; c < C; c++)
            o[c] = (float)((xi[c] - mean) * rstd * w[c] + b[c]);
    }
}

/* The MLP's activation in place on columns j0 … j1 of n rows (row stride
 * ld): GELU's tanh form (gelu_new, a kernel whose float depends on its
 * input alone, vector or not), its erf form, ReLU. */
static void activate(float *h, int ld, int n, int j0, int j1, Gpt2Act act)
{
    for (int i = 0; i < n; i++) {
        float *r = h + (size_t)i * ld;
        if (act == GPT2_ACT_GELU_TANH)
            gpt2_kernel_set()->gelu_tanh(r + j0, j1 - j0);
        else if (act == GPT2_ACT_GELU_ERF)
            for (int k = j0; k < j1; k++)
                r[k] = 0.5f * r[k] * (1.0f + erff(r[k] * 0.7071067811865476f));
        else
            for (int k = j0; k < j1; k++)
                r[k] = r[k] > 0.0f ? r[k] : 0.0f;
    }
}

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

/* The pieces on this thread and the worker when the work (multiply-adds)
 * is worth it, else here. */
void gpt2_share(void (*piece)(const void *, int), const void *job, int pieces, double work)
{
    Shared sh = {0, pieces, piece, job};
    if (pieces < 2 || work < SPLIT_MIN || workers_run2(shared_run, &sh, &sh) < 0)
        shared_run(&sh);
}

typedef struct LinJob {
    float *out;
    const float *A, *W, *bias;
    int ldo, lda, n, k, m, cols; /* cols: the columns of a piece */
    int act;                     /* a Gpt2Act applied to the piece after, or -1 */
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
    gpt2_kernel_set()->linear(j->out, j->ldo, j->A, j->lda, j->W, j->bias, j->n, j->k, j->m,
                              j0, j1);
    if (j->act >= 0)
        activate(j->out, j->ldo, j->n, j0, j1, (Gpt2Act)j->act);
}

/* A few rows: piece 0 the first chain (W's rows before h, from the bias)
 * into out, piece 1 the second (the rest, from 0) into out2 (row stride
 * m); each thread reads its half of W in one run, as the read bandwidth
 * is measured. */
static void few_piece(const void *arg, int piece)
{
    const LinJob *j = arg;
    int h = gpt2_half(j->k);
    if (piece == 0)
        gpt2_kernel_set()->linear_few(j->out, j->ldo, j->A, j->lda, j->W, j->bias, j->n, h,
                                      j->m, 0, j->m);
    else
        gpt2_kernel_set()->linear_few(j->out2, j->m, j->A + h, j->lda, j->W + (size_t)h * j->m,
                                      NULL, j->n, j->k - h, j->m, 0, j->m);
}

/* out (n × m, row stride ldo) = A (n × k) · W (k × m) + bias, the
 * activation act (-1: none) after: in pieces of columns (two of the
 * kernel's tiles, or more to make at most 16 pieces), or for a few rows
 * in the two halves of linear's sums, then added. */
static void linear_act(float *out, int ldo, const float *A, int lda, const float *W,
                       const float *bias, int n, int k, int m, int act)
{
    if (n <= FEW_ROWS) {
        float stack[2 * 4096], *out2 = (size_t)n * m <= 2 * 4096 ? stack : malloc(sizeof(float) * (size_t)n * m);
        if (out2) {
            LinJob j = {out, A, W, bias, ldo, lda, n, k, m, m, act, out2};
            gpt2_share(few_piece, &j, 2, (double)n * k * m);
            for (int i = 0; i < n; i++)
                for (int c = 0; c < m; c++)
                    out[(size_t)i * ldo + c] += out2[(size_t)i * m + c];
            if (act >= 0)
                activate(out, ldo, n, 0, m, (Gpt2Act)act);
            if (out2 != stack)
                free(out2);
            return;
        }
    }
    int tile = gpt2_kernel_set()->lin_cols, tiles = (m + tile - 1) / tile;
    int per = (tiles + 15) / 16 > 2 ? (tiles + 15) / 16 : 2;
    LinJob j = {out, A, W, bias, ldo, lda, n, k, m, per * tile, act, NULL};
    gpt2_share(lin_piece, &j, (tiles + per - 1) / per, (double)n * k * m);
}

void gpt2_linear(float *out, int ldo, const float *A, int lda, const float *W,
                 const float *bias, int n, int k, int m)
{
    linear_act(out, ldo, A, lda, W, bias, n, k, m, -1);
}

/* Rows shared by the two threads: x += add (add NULL: nothing), then xn =
 * LayerNorm(x) (lw NULL: none), rows [r0, r1) a piece. A row's floats are
 * the same whichever thread computes it. */
typedef struct RowJob {
    float *x, *xn;
    const float *add, *lw, *lb;
    int n, C, per;
    float eps;
} RowJob;

static void row_piece(const void *arg, int piece)
{
    const RowJob *j = arg;
    int r0 = piece * j->per, r1 = r0 + j->per < j->n ? r0 + j->per : j->n;
    size_t C = (size_t)j->C;
    if (j->add)
        for (size_t k = r0 * C; k < r1 * C; k++)
            j->x[k] += j->add[k];
    if (j->lw)
        layernorm(j->xn + r0 * C, j->x + r0 * C, j->lw, j->lb, r1 - r0, j->C, j->eps);
}

static void rows_pass(float *x, const float *add, float *xn, const float *lw, const float *lb,
                      int n, int C, float eps)
{
    int per = (n + 7) / 8;
    RowJob j = {x, xn, add, lw, lb, n, C, per, eps};
    gpt2_share(row_piece, &j, (n + per - 1) / per, 4.0 * n * C);
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
    gpt2_kernel_set()->linear_bf16(j->out, j->ldo, j->A, j->lda, j->W, j->bias, j->n, j->k, j0,
                                   j1);
}

void gpt2_linear_bf16(float *out, int ldo, const float *A, int lda, const uint16_t *W,
                      const float *bias, int n, int k, int m)
{
    int per = (m + 31) / 32 > 8 ? (m + 31) / 32 : 8;
    Lin16Job j = {out, A, bias, W, ldo, lda, n, k, m, per};
    gpt2_share(lin16_piece, &j, (m + per - 1) / per, (double)n * k * m);
}

typedef struct AttnJob {
    Gpt2State *s;
    int layer, start, T;
} AttnJob;

/* Head h of a layer for the query rows [start, T): scores from the
 * transposed keys, the scaling, the softmax (attn_softmax_row: the map's
 * row i holds i + 1 weights), the context z. */
static void attn_head(const void *arg, int h)
{
    const AttnJob *jb = arg;
    Gpt2State *s = jb->s;
    const Gpt2Kernels *K = gpt2_kernel_set();
    const Gpt2Config *c = &s->cfg;
    int C = c->n_embd, dh = s->d_head, cap = s->cap, l = jb->layer;
    float sq = (float)sqrt((double)dh), li = (float)(l + 1);
    const float *qkv = s->qkv + (size_t)l * cap * 3 * C;
    float *map = s->maps + ((size_t)l * c->n_head + h) * cap * cap;
    const float *kt = s->kt + ((size_t)l * c->n_head + h) * dh * cap;
    for (int i = jb->start; i < jb->T; i++) {
        float *row = map + (size_t)i * cap;
        K->scores(row, qkv + (size_t)i * 3 * C + h * dh, kt, cap, dh, i + 1);
        if (c->scale_attn_weights)
            for (int j = 0; j <= i; j++)
                row[j] /= sq;
        if (c->scale_by_inverse_layer_idx)
            for (int j = 0; j <= i; j++)
                row[j] /= li;
        attn_softmax_row(row, i + 1, i + 1);
        K->context(s->z + (size_t)i * C + h * dh, row, qkv + 2 * C + h * dh, 3 * C, i + 1, dh);
    }
}

/* Block l on positions [start, T) of the residual stream s->x, with the
 * cached keys and values of the positions before start. */
static void block(Gpt2State *s, const Gpt2Layer *w, int l, int start, int T)
{
    const Gpt2Config *c = &s->cfg;
    int C = c->n_embd, H = c->n_head, dh = s->d_head, cap = s->cap, n = T - start;
    size_t r0 = (size_t)start * C;
    float *x = s->x + r0, *xn = s->xn + r0, *z = s->z + r0, *out = s->out + r0;
    float *qkv = s->qkv + ((size_t)l * cap + start) * 3 * C;
    float *hid = s->hid + (size_t)start * c->n_inner;

    /* pass 1: a = ln_1(x); Q | K | V = a · c_attn + b; the keys transposed */
    rows_pass(x, NULL, xn, w->ln1_w, w->ln1_b, n, C, c->ln_eps);
    gpt2_linear(qkv, 3 * C, xn, C, w->attn_w, w->attn_b, n, C, 3 * C);
    for (int h = 0; h < H; h++) {
        float *kt = s->kt + ((size_t)l * H + h) * dh * cap;
        for (int d = 0; d < dh; d++)
            for (int i = 0; i < n; i++)
                kt[(size_t)d * cap + start + i] = qkv[(size_t)i * 3 * C + C + h * dh + d];
    }
    /* pass 2: each head's scores, weights (the maps) and z, heads split */
    AttnJob aj = {s, l, start, T};
    gpt2_share(attn_head, &aj, H, 2.0 * n * (start + T) * C);
    /* pass 3: x = x + z · c_proj + b */
    gpt2_linear(out, C, z, C, w->proj_w, w->proj_b, n, C, C);
    /* pass 4: x = x + act(ln_2(x) · c_fc + b) · c_proj + b (the
     * activation in c_fc's pieces, on the thread that computed them) */
    rows_pass(x, out, xn, w->ln2_w, w->ln2_b, n, C, c->ln_eps);
    linear_act(hid, c->n_inner, xn, C, w->fc_w, w->fc_b, n, C, c->n_inner, (int)c->act);
    gpt2_linear(out, C, hid, c->n_inner, w->mproj_w, w->mproj_b, n, c->n_inner, C);
    rows_pass(x, out, NULL, NULL, NULL, n, C, 0.0f);
}

int gpt2_forward(Gpt2State *s, const Gpt2Weights *w, const int *ids, int T,
                 const Gpt2Hooks *hooks, AttnErr *err)
{
    const Gpt2Config *c = &s->cfg;
    if (T < 0 || T > c->n_positions)
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, NULL, 0,
                            "%d tokens: this model takes at most %d", T, c->n_positions);
    for (int i = 0; i < T; i++)
        if (ids[i] < 0 || ids[i] >= c->n_vocab)
            return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                                "token %d (position %d) is not below the vocabulary's %d", ids[i],
                                i, c->n_vocab);
    /* the first position to compute: the first changed or not yet done */
    int start = 0, lim = T < s->n_done ? T : s->n_done;
    while (start < lim && ids[start] == s->ids[start])
        start++;
    if (reserve(s, T) < 0)
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "GPT-2 state for %d tokens", T);
    memcpy(s->ids, ids, (size_t)T * sizeof *ids);
    s->T = T;
    s->n_done = start;

    /* x = wte[ids] + wpe[pos] */
    int C = c->n_embd;
    for (int i = start; i < T; i++)
        for (int k = 0; k < C; k++)
            s->x[(size_t)i * C + k] =
                w->wte[(size_t)ids[i] * C + k] + w->wpe[(size_t)i * C + k];
    for (int l = 0; l < c->n_layer; l++) {
        if (hooks && hooks->cancel && hooks->cancel(hooks->user))
            return attn_err_set(err, ATTN_E_CANCELLED, NULL, 0, "at layer %d", l);
        if (start < T)
            block(s, &w->layers[l], l, start, T);
        if (hooks && hooks->layer_done)
            hooks->layer_done(hooks->user, l);
    }
    s->n_done = T;
    return 0;
}

void gpt2_maps_copy(const Gpt2State *s, float *out)
{
    size_t T = (size_t)s->T;
    for (int l = 0; l < s->cfg.n_layer; l++)
        for (int h = 0; h < s->cfg.n_head; h++) {
            const float *m = gpt2_map(s, l, h);
            for (size_t i = 0; i < T; i++, out += T)
                memcpy(out, m + i * s->cap, T * sizeof *out);
        }
}

const float *gpt2_query(const Gpt2State *s, int layer, int head, int i)
{
    return s->qkv + ((size_t)layer * s->cap + i) * 3 * s->cfg.n_embd + head * s->d_head;
}

const float *gpt2_key(const Gpt2State *s, int layer, int head, int j)
{
    return gpt2_query(s, layer, head, j) + s->cfg.n_embd;
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
    gpt2_kernel_set()->dots(j->out, j->x, j->rows, j->C, v0, v1);
}

void gpt2_dots(float *out, const float *x, const float *rows, int C, int V)
{
    DotJob j = {out, x, rows, C, V, (V + 15) / 16};
    gpt2_share(dot_piece, &j, (V + j.per - 1) / j.per, (double)V * C);
}

int gpt2_logits(Gpt2State *s, const Gpt2Weights *w, int pos, float *logits, AttnErr *err)
{
    const Gpt2Config *c = &s->cfg;
    if (pos < 0 || pos >= s->n_done)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "position %d: %d positions computed", pos, s->n_done);
    layernorm(s->xf, s->x + (size_t)pos * c->n_embd, w->lnf_w, w->lnf_b, 1, c->n_embd,
              c->ln_eps);
    gpt2_dots(logits, s->xf, w->lm_head, c->n_embd, c->n_vocab);
    return 0;
}

void gpt2_top_k_of(const float *logits, int V, int k, int *ids, float *probs)
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

int gpt2_top_k(Gpt2State *s, const Gpt2Weights *w, int pos, int k, int *ids, float *probs,
               float *logits, AttnErr *err)
{
    int V = s->cfg.n_vocab;
    if (k < 0 || k > V)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "top %d of %d tokens", k, V);
    float *own = NULL;
    if (!logits && !(logits = own = malloc((size_t)V * sizeof *logits)))
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "logits");
    int rc = gpt2_logits(s, w, pos, logits, err);
    if (rc < 0)
        goto cleanup;
    gpt2_top_k_of(logits, V, k, ids, probs);
cleanup:
    free(own);
    return rc;
}
