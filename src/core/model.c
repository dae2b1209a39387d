/* The model: text → tokens → embeddings → attention, in one place, so every
 * front end (command line, window, export, tests) shows the same numbers. */
#include "attnviz/model.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int model_init(Model *m, const EmbedTable *table, const AttnConfig *cfg)
{
    memset(m, 0, sizeof *m);
    m->table = table;
    m->d = table->d;
    m->cfg = *cfg;
    tok_init(&m->toks);
    tok_init(&m->ktoks);
    attn_result_init(&m->res);
    if (m->cfg.heads < 1)
        m->cfg.heads = 1;
    int rc = attn_params_create(&m->params, m->d, m->cfg.heads);
    if (rc < 0)
        return rc;
    if ((rc = model_set_keys(m, "", 0)) < 0)
        return rc;
    return model_set_text(m, "", 0);
}

void model_destroy(Model *m)
{
    if (!m)
        return;
    free(m->text);
    tok_free(&m->toks);
    free(m->keys_text);
    tok_free(&m->ktoks);
    free(m->own_Ek);
    free(m->own_Xk);
    free(m->own_koov);
    free(m->own_kedited);
    free(m->last_Xk);
    free(m->E);
    free(m->X);
    free(m->oov);
    free(m->edited);
    for (int i = 0; i < m->n_over; i++)
        free(m->over_word[i]);
    free(m->over_word);
    free(m->over_vec);
    free(m->avg_scores);
    free(m->avg_logits);
    free(m->logits);
    free(m->norms);
    free(m->avg);
    free(m->pe);
    free(m->last_X);
    attn_params_destroy(&m->last_params);
    attn_params_destroy(&m->params);
    attn_result_destroy(&m->res);
    memset(m, 0, sizeof *m);
}

static int find_override(const Model *m, const char *word)
{
    for (int i = 0; i < m->n_over; i++)
        if (strcmp(m->over_word[i], word) == 0)
            return i;
    return -1;
}

/* The vectors of n tokens of tl: an edited word's, the table's, or the
 * OOV vector, with their flags. */
static void embed_tokens(const Model *m, const TokenList *tl, int n, float *E,
                         unsigned char *oov, unsigned char *edited)
{
    int d = m->d;
    for (int i = 0; i < n; i++) {
        const char *w = tok_text(tl, i);
        float *e = E + (size_t)i * d;
        int o = find_override(m, w);
        int k = embed_find(m->table, w);
        oov[i] = k < 0;
        edited[i] = o >= 0;
        if (o >= 0)
            memcpy(e, m->over_vec + (size_t)o * d, (size_t)d * sizeof(float));
        else if (k >= 0)
            memcpy(e, embed_vector(m->table, k), (size_t)d * sizeof(float));
        else
            embed_oov_vector(w, d, e);
    }
}

/* A sentence's rows grown to n: E and X (n × d), the unknown and edited
 * flags (n); each kept when its realloc fails (then -1, the capacity as
 * it was). */
static int grow_rows(float **E, float **X, unsigned char **oov, unsigned char **ed, int n, int d)
{
    size_t nd = (size_t)n * d;
    float *e = realloc(*E, nd * sizeof(float));
    if (e)
        *E = e;
    float *x = realloc(*X, nd * sizeof(float));
    if (x)
        *X = x;
    unsigned char *o = realloc(*oov, (size_t)n);
    if (o)
        *oov = o;
    unsigned char *k = realloc(*ed, (size_t)n);
    if (k)
        *ed = k;
    return e && x && o && k ? 0 : -1;
}

/* Self-attention: the keys are the queries (the same arrays). */
static void alias_keys(Model *m)
{
    if (m->cross)
        return;
    m->Tk = m->T;
    m->Ek = m->E;
    m->Xk = m->X;
    m->koov = m->oov;
    m->kedited = m->edited;
    memcpy(m->klabels, m->labels, (size_t)m->T * sizeof m->labels[0]);
}

void model_embed(Model *m)
{
    embed_tokens(m, &m->toks, m->T, m->E, m->oov, m->edited);
    if (m->cross)
        embed_tokens(m, &m->ktoks, m->Tk, m->Ek, m->koov, m->kedited);
    alias_keys(m);
}

int model_set_text(Model *m, const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return -ATTN_E_NOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = tok_split(&m->toks, text, len);
    if (rc < 0) {
        free(copy);
        return rc;
    }
    free(m->text);
    m->text = copy;
    int T = m->toks.n;
    if (T > m->cap_T) {
        if (grow_rows(&m->E, &m->X, &m->oov, &m->edited, T, m->d) < 0) {
            m->T = 0;
            alias_keys(m);
            return -ATTN_E_NOMEM;
        }
        m->cap_T = T;
    }
    m->T = T;
    for (int i = 0; i < T; i++)
        m->labels[i] = tok_text(&m->toks, i);
    model_embed(m);
    return 0;
}

/* Grow the second sentence's arrays to Tk rows. */
static int reserve_keys(Model *m, int Tk)
{
    if (Tk <= m->cap_Tk)
        return 0;
    if (grow_rows(&m->own_Ek, &m->own_Xk, &m->own_koov, &m->own_kedited, Tk, m->d) < 0)
        return -ATTN_E_NOMEM;
    m->cap_Tk = Tk;
    return 0;
}

int model_set_keys(Model *m, const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return -ATTN_E_NOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = tok_split(&m->ktoks, text, len);
    if (rc == 0)
        rc = reserve_keys(m, m->ktoks.n);
    if (rc < 0) {
        free(copy);
        tok_split(&m->ktoks, "", 0);
        m->cross = 0;
        alias_keys(m);
        return rc;
    }
    free(m->keys_text);
    m->keys_text = copy;
    m->cross = m->ktoks.n > 0;
    if (m->cross) {
        m->Tk = m->ktoks.n;
        m->Ek = m->own_Ek;
        m->Xk = m->own_Xk;
        m->koov = m->own_koov;
        m->kedited = m->own_kedited;
        for (int j = 0; j < m->Tk; j++)
            m->klabels[j] = tok_text(&m->ktoks, j);
    }
    model_embed(m);
    return 0;
}

int model_causal(const Model *m)
{
    return m->cfg.causal && !m->cross;
}

void model_reset_params(Model *m)
{
    if (m->has_seed)
        attn_params_xavier(&m->params, m->seed);
    else
        attn_params_identity(&m->params);
}

void model_set_seed(Model *m, uint64_t seed)
{
    m->has_seed = 1;
    m->seed = seed;
    attn_params_xavier(&m->params, seed);
}

int model_set_heads(Model *m, int h)
{
    AttnParams p;
    int rc = attn_params_create(&p, m->d, h);
    if (rc < 0)
        return rc;
    attn_params_destroy(&m->params);
    m->params = p;
    m->cfg.heads = h;
    model_reset_params(m);
    return 0;
}

/* dst (h2 heads) = src (h1 heads) re-sliced: both are the same d×d matrix
 * of head-major d×dk slices. */
static void reslice(float *dst, int h2, const float *src, int h1, int d)
{
    int dk1 = d / h1, dk2 = d / h2;
    for (int r = 0; r < d; r++)
        for (int col = 0; col < d; col++)
            dst[((size_t)(col / dk2) * d + r) * dk2 + col % dk2] =
                src[((size_t)(col / dk1) * d + r) * dk1 + col % dk1];
}

int model_split_heads(Model *m, int h)
{
    AttnParams p;
    int rc = attn_params_create(&p, m->d, h);
    if (rc < 0)
        return rc;
    const AttnParams *o = &m->params;
    reslice(p.Wq, h, o->Wq, o->h, m->d);
    reslice(p.Wk, h, o->Wk, o->h, m->d);
    reslice(p.Wv, h, o->Wv, o->h, m->d);
    memcpy(p.Wo, o->Wo, (size_t)m->d * m->d * sizeof(float));
    memcpy(p.v, o->v, (size_t)m->d * sizeof(float));
    memcpy(p.vb, o->vb, (size_t)m->d * sizeof(float));
    attn_params_destroy(&m->params);
    m->params = p;
    m->cfg.heads = h;
    return 0;
}

int model_set_weights(Model *m, const ParsedWeights *w)
{
    if (w->params.d != m->d || w->params.h < 1 || !w->params.Wq)
        return -ATTN_E_SHAPE;
    int rc = attn_params_copy(&m->params, &w->params);
    if (rc < 0)
        return rc;
    m->cfg.heads = w->params.h;
    m->has_seed = w->has_seed;
    if (w->has_seed)
        m->seed = w->seed;
    return 0;
}

int model_apply_session(Model *m, const Session *s)
{
    if (s->d != m->d)
        return -ATTN_E_SHAPE;
    int rc = s->has_weights ? model_set_weights(m, &s->weights) : 0;
    if (rc < 0)
        return rc;
    m->cfg = s->cfg;
    m->cfg.heads = m->params.h;
    model_clear_word_vectors(m);
    for (int i = 0; i < s->n_vectors; i++)
        if ((rc = model_set_word_vector(m, s->words[i], s->vectors + (size_t)i * s->d)) < 0)
            return rc;
    const char *keys = s->keys ? s->keys : "";
    if ((rc = model_set_keys(m, keys, strlen(keys))) < 0)
        return rc;
    const char *text = s->sentence ? s->sentence : "";
    return model_set_text(m, text, strlen(text));
}

int model_set_word_vector(Model *m, const char *word, const float *vec)
{
    int d = m->d, o = find_override(m, word);
    if (o < 0) {
        if (m->n_over == m->cap_over) {
            int cap = m->cap_over ? m->cap_over * 2 : 8;
            char **w = realloc(m->over_word, (size_t)cap * sizeof *w);
            if (!w)
                return -ATTN_E_NOMEM;
            m->over_word = w;
            float *v = realloc(m->over_vec, (size_t)cap * d * sizeof(float));
            if (!v)
                return -ATTN_E_NOMEM;
            m->over_vec = v;
            m->cap_over = cap;
        }
        char *copy = strdup(word);
        if (!copy)
            return -ATTN_E_NOMEM;
        o = m->n_over++;
        m->over_word[o] = copy;
    }
    memcpy(m->over_vec + (size_t)o * d, vec, (size_t)d * sizeof(float));
    model_embed(m);
    return 0;
}

void model_clear_word_vectors(Model *m)
{
    for (int i = 0; i < m->n_over; i++)
        free(m->over_word[i]);
    m->n_over = 0;
    model_embed(m);
}

/* The encoding of positions 0 … T−1, computed once per model (T×d sines
 * and cosines per keystroke otherwise): the same floats as attn_posenc. */
static int posenc_rows(Model *m, int T)
{
    int d = m->d;
    if (T > m->n_pe) {
        float *pe = realloc(m->pe, (size_t)T * d * sizeof(float));
        if (!pe)
            return -ATTN_E_NOMEM;
        m->pe = pe;
        for (int p = m->n_pe; p < T; p++)
            for (int k = 0; k < d; k++)
                pe[(size_t)p * d + k] = attn_posenc(p, k, d);
        m->n_pe = T;
    }
    return 0;
}

/* X = E (+ PE) for T rows; each sentence's positions start at 0. */
static int make_input(Model *m, float *X, const float *E, int T)
{
    size_t n = (size_t)T * m->d;
    memcpy(X, E, n * sizeof(float));
    if (!m->cfg.posenc)
        return 0;
    int rc = posenc_rows(m, T);
    if (rc < 0)
        return rc;
    for (size_t e = 0; e < n; e++)
        X[e] += m->pe[e];
    return 0;
}

/* The rows [lo, hi) of the T rows of X that differ from the last
 * forward's last_T rows of last; with another T (a word typed or deleted)
 * every row from the first difference on counts as new. */
static void diff_rows(const float *X, int T, const float *last, int last_T, int d, int *lo,
                      int *hi)
{
    int n = T < last_T ? T : last_T;
    size_t row = (size_t)d * sizeof(float);
    *lo = 0;
    *hi = T;
    while (*lo < n && memcmp(X + (size_t)*lo * d, last + (size_t)*lo * d, row) == 0)
        (*lo)++;
    if (last_T != T)
        return;
    while (*hi > *lo && memcmp(X + (size_t)(*hi - 1) * d, last + (size_t)(*hi - 1) * d, row) == 0)
        (*hi)--;
    if (*lo == T)
        *hi = T;
}

/* Can the last forward be updated (same weights, settings, and one or two
 * sentences as before)? Then the changed query rows [q[0], q[1]) and key
 * rows [k[0], k[1]) and 1; else 0 with everything. */
static int changed_rows(const Model *m, int q[2], int k[2])
{
    q[0] = 0, q[1] = m->T, k[0] = 0, k[1] = m->Tk;
    /* the last forward's T is the result's; the heads' means are made
     * whole when the window starts keeping them */
    if (!m->last_ok || m->last_cross != m->cross || m->last_keep != m->keep_window_matrices ||
        memcmp(&m->last_cfg, &m->cfg, sizeof m->cfg) != 0 ||
        !attn_params_equal(&m->last_params, &m->params))
        return 0;
    diff_rows(m->X, m->T, m->last_X, m->res.Tq, m->d, &q[0], &q[1]);
    if (!m->cross) {
        k[0] = q[0], k[1] = q[1];
        return 1;
    }
    /* two sentences: their sizes may not change (no resize then) */
    if (m->res.Tq != m->T || m->res.Tk != m->Tk)
        return 0;
    diff_rows(m->Xk, m->Tk, m->last_Xk, m->res.Tk, m->d, &k[0], &k[1]);
    return 1;
}

/* Copy rows [lo, hi) of T rows of X into *last (grown to T rows; then all
 * of them). 0, or -1 when memory ran out. */
static int keep_rows(float **last, size_t *cap, const float *X, int T, int d, int lo, int hi)
{
    size_t n = (size_t)T * d;
    if (n > *cap) {
        float *x = realloc(*last, n * sizeof(float));
        if (!x)
            return -1;
        *last = x;
        *cap = n;
        lo = 0, hi = T;
    }
    memcpy(*last + (size_t)lo * d, X + (size_t)lo * d, (size_t)(hi - lo) * d * sizeof(float));
    return 0;
}

/* Remember what this forward saw (same_params: the weights are known to
 * equal the remembered ones); on failure the next one is whole. */
static void remember(Model *m, const int q[2], const int k[2], int same_params)
{
    m->last_ok = 0;
    if (keep_rows(&m->last_X, &m->cap_last, m->X, m->T, m->d, q[0], q[1]) < 0)
        return;
    if (m->cross && keep_rows(&m->last_Xk, &m->cap_lastk, m->Xk, m->Tk, m->d, k[0], k[1]) < 0)
        return;
    if (!same_params && attn_params_copy(&m->last_params, &m->params) < 0)
        return;
    m->last_cfg = m->cfg;
    m->last_cross = m->cross;
    m->last_keep = m->keep_window_matrices;
    m->last_ok = 1;
}

/* The heads' mean of the scores and logits over the entries that changed:
 * rows [q[0], q[1]) whole and, in the other rows, columns [k[0], k[1]).
 * Each head's logit is its score · s/τ, the float the forward pass makes. */
static void heads_mean(Model *m, const int q[2], const int k[2])
{
    int Tq = m->res.Tq, Tk = m->res.Tk, h = m->res.h;
    size_t qk = (size_t)Tq * Tk;
    float inv = 1.0f / (float)h, mult = m->logit_mult;
    const float *sc = m->res.scores;
    for (int i = 0; i < Tq; i++) {
        int row = i >= q[0] && i < q[1];
        int j0 = row ? 0 : k[0], j1 = row ? Tk : k[1];
        for (int j = j0; j < j1; j++) {
            size_t e = (size_t)i * Tk + j;
            float s = sc[e], l = sc[e] * mult;
            for (int c = 1; c < h; c++) {
                s += sc[(size_t)c * qk + e];
                l += sc[(size_t)c * qk + e] * mult;
            }
            m->avg_scores[e] = s * inv;
            m->avg_logits[e] = l * inv;
        }
    }
}

/* Keep the heads' means of scores and logits for the window. */
static int window_means(Model *m, const int q[2], const int k[2], int whole)
{
    size_t qk = (size_t)m->res.Tq * m->res.Tk;
    if (qk > m->cap_avg) {
        float *s = realloc(m->avg_scores, qk * sizeof(float));
        if (s)
            m->avg_scores = s;
        float *l = realloc(m->avg_logits, qk * sizeof(float));
        if (l)
            m->avg_logits = l;
        if (!s || !l)
            return -ATTN_E_NOMEM;
        m->cap_avg = qk;
        whole = 1;
    }
    int all_q[2] = {0, m->res.Tq}, all_k[2] = {0, m->res.Tk};
    heads_mean(m, whole ? all_q : q, whole ? all_k : k);
    return 0;
}

/* The last generation given out: models may compute on several threads at
 * once, each taking the next number, and the window's map sources take
 * theirs here too (model_next_generation). */
static atomic_ulong generations;

unsigned long model_next_generation(void)
{
    return atomic_fetch_add(&generations, 1) + 1;
}

int model_compute(Model *m)
{
    int T = m->T, Tk = m->Tk, d = m->d;
    if (T == 0 || Tk == 0) {
        m->generation = model_next_generation();
        m->res.Tq = m->res.Tk = 0;
        m->last_ok = 0;
        return 0;
    }
    int rc = make_input(m, m->X, m->E, T);
    if (rc == 0 && m->cross)
        rc = make_input(m, m->Xk, m->Ek, Tk);
    if (rc < 0) {
        m->last_ok = 0;
        return rc;
    }
    int q[2], k[2];
    int inc = changed_rows(m, q, k);
    int resized = inc && (m->res.Tq != T || m->res.Tk != Tk);
    m->last_lo = q[0];
    m->last_hi = q[1];
    m->last_klo = k[0];
    m->last_khi = k[1];
    if (inc && !resized && q[0] == T && k[0] == Tk)
        return 0; /* the same input as last time: the same results */
    m->generation = model_next_generation();
    m->res.skip_logits = m->res.skip_avg = 1; /* made when asked for: model_prepare */
    AttnConfig cfg = m->cfg;
    cfg.causal = model_causal(m);
    if (resized) /* one sentence: queries and keys are the same rows */
        rc = attn_forward_resize(&m->res, m->X, T, m->X, T, d, &m->params, &cfg, q[0], q[0]);
    else
        rc = attn_forward_update(&m->res, m->X, T, m->Xk, Tk, d, &m->params, &cfg, q[0], q[1],
                                 k[0], k[1]);
    if (rc < 0) {
        m->last_ok = 0;
        return rc;
    }
    m->logit_mult = attn_logit_scale(&cfg, m->res.dk);
    /* the means' stride changed, or everything was recomputed */
    int whole = (q[0] == 0 && q[1] == T) || resized;
    if (m->keep_window_matrices && m->res.h > 1 && window_means(m, q, k, whole) < 0) {
        m->last_ok = 0;
        return -ATTN_E_NOMEM;
    }
    remember(m, q, k, inc);
    return 0;
}

/* The buffer (*buf, *cap floats) of a matrix model_prepare makes, for n
 * floats of generation now; *stale when it does not hold that generation's
 * yet (the caller fills it then). NULL without memory. */
static float *on_demand(float **buf, size_t *cap, unsigned long *gen, size_t n,
                        unsigned long now, int *stale)
{
    *stale = *gen != now || !*buf;
    if (!*stale)
        return *buf;
    if (n > *cap || !*buf) {
        float *b = realloc(*buf, (n ? n : 1) * sizeof(float));
        if (!b)
            return NULL;
        *buf = b;
        *cap = n ? n : 1;
    }
    *gen = now;
    return *buf;
}

/* Every head's logits of the last compute, scores · s/τ (the forward pass's
 * own floats), made once per generation; NULL without memory. */
static const float *make_logits(Model *m)
{
    const AttnResult *r = &m->res;
    size_t n = (size_t)r->h * r->Tq * r->Tk;
    int stale;
    float *l = on_demand(&m->logits, &m->cap_logits, &m->logits_gen, n, m->generation, &stale);
    for (size_t e = 0; l && stale && e < n; e++)
        l[e] = r->scores[e] * m->logit_mult;
    return l;
}

/* The heads' mean of the weights of the last compute (attn_heads_mean),
 * made once per generation; NULL without memory. */
static const float *make_avg(Model *m)
{
    size_t n = (size_t)m->res.Tq * m->res.Tk;
    int stale;
    float *a = on_demand(&m->avg, &m->cap_avg_w, &m->avg_gen, n, m->generation, &stale);
    if (a && stale)
        attn_heads_mean(&m->res, a);
    return a;
}

/* Value-weighted attention of the last compute: head h's α[i, j] times
 * ‖v_j Wo_h‖ (the norm of key j's value through the rows of Wo that read
 * head h; in basic mode the output is Z itself: ‖v_j‖), the norms summed
 * in double, then the heads' mean at index h; made once per generation,
 * NULL without memory. */
static const float *make_norms(Model *m)
{
    const AttnResult *r = &m->res;
    int H = r->h, dk = r->dk, d = r->d, Tq = r->Tq, Tk = r->Tk;
    size_t TT = (size_t)Tq * Tk;
    int stale;
    float *nm = on_demand(&m->norms, &m->cap_norms, &m->norms_gen, (size_t)(H + 1) * TT, m->generation,
                          &stale);
    if (!nm || !stale)
        return nm;
    double *vn = malloc(sizeof *vn * ((size_t)Tk + 1));
    if (!vn) {
        m->norms_gen = 0;
        return NULL;
    }
    const float *Wo = m->cfg.mode == ATTN_MODE_LEARNED ? m->params.Wo : NULL;
    float *avg = nm + (size_t)H * TT;
    memset(avg, 0, sizeof(float) * TT);
    for (int h = 0; h < H; h++) {
        for (int j = 0; j < Tk; j++) {
            const float *v = r->V + ((size_t)h * Tk + j) * dk;
            double sq = 0;
            for (int c = 0; c < (Wo ? d : dk); c++) {
                double f = 0;
                for (int e = 0; Wo && e < dk; e++)
                    f += (double)v[e] * Wo[(size_t)(h * dk + e) * d + c];
                f = Wo ? f : v[c];
                sq += f * f;
            }
            vn[j] = sqrt(sq);
        }
        const float *w = attn_head_matrix(r->weights, r, h);
        float *out = nm + (size_t)h * TT;
        for (size_t e = 0; e < TT; e++) {
            out[e] = (float)(w[e] * vn[e % Tk]);
            avg[e] += out[e] / (float)H;
        }
    }
    free(vn);
    return nm;
}

/* The head model_matrix shows for head: itself, head 0 for a single head's
 * mean, or MODEL_HEAD_AVG. */
static int shown_head(const AttnResult *r, int head)
{
    if (head >= 0 && head < r->h)
        return head;
    return r->h == 1 ? 0 : MODEL_HEAD_AVG;
}

int model_prepare(Model *m, ModelMatrix which, int head)
{
    head = shown_head(&m->res, head);
    if (which == MODEL_WEIGHTS && head == MODEL_HEAD_AVG)
        return make_avg(m) ? 0 : -ATTN_E_NOMEM;
    if (which == MODEL_LOGITS && head != MODEL_HEAD_AVG)
        return make_logits(m) ? 0 : -ATTN_E_NOMEM;
    if (which == MODEL_NORMS)
        return make_norms(m) ? 0 : -ATTN_E_NOMEM;
    return 0; /* kept by the forward pass or model_compute */
}

/* A matrix model_prepare makes, when it holds this compute's. */
static const float *if_made(const float *buf, unsigned long gen, const Model *m)
{
    return buf && gen == m->generation ? buf : NULL;
}

const float *model_matrix(const Model *m, ModelMatrix which, int head)
{
    const AttnResult *r = &m->res;
    head = shown_head(r, head);
    if (which == MODEL_NORMS) {
        const float *nm = if_made(m->norms, m->norms_gen, m);
        return nm ? nm + (size_t)(head == MODEL_HEAD_AVG ? r->h : head) * r->Tq * r->Tk : NULL;
    }
    if (head == MODEL_HEAD_AVG)
        return which == MODEL_WEIGHTS ? if_made(m->avg, m->avg_gen, m)
               : !m->keep_window_matrices ? NULL
               : which == MODEL_SCORES ? m->avg_scores
                                       : m->avg_logits;
    size_t off = (size_t)head * r->Tq * r->Tk;
    if (which == MODEL_LOGITS) {
        const float *lg = if_made(m->logits, m->logits_gen, m);
        return lg ? lg + off : NULL;
    }
    return (which == MODEL_WEIGHTS ? r->weights : r->scores) + off;
}

int model_count_oov(const Model *m)
{
    int n = 0;
    for (int i = 0; i < m->T; i++)
        n += m->oov[i];
    for (int j = 0; m->cross && j < m->Tk; j++)
        n += m->koov[j];
    return n;
}

int model_step(const Model *m, int head, int i, int j, ModelStep *out)
{
    const AttnResult *r = &m->res;
    int T = r->Tq, dk = r->dk;
    if (head < 0)
        head = 0;
    if (i < 0 || j < 0 || i >= T || j >= r->Tk || head >= r->h)
        return -ATTN_E_RANGE;
    size_t hq = (size_t)head * T * dk, hk = (size_t)head * r->Tk * dk;
    size_t hm = (size_t)head * T * r->Tk, row = hm + (size_t)i * r->Tk;
    memset(out, 0, sizeof *out);
    out->i = i;
    out->j = j;
    out->head = head;
    out->dk = dk;
    out->q = r->Q + hq + (size_t)i * dk;
    out->k = r->K + hk + (size_t)j * dk;
    out->v = r->V + hk + (size_t)j * dk;
    out->z = r->Z + hq + (size_t)i * dk;
    out->score = r->scores[row + j];
    out->score_fn = m->cfg.score;
    out->scale = m->cfg.scale && m->cfg.score == ATTN_SCORE_DOT ? 1.0f / sqrtf((float)dk) : 1.0f;
    double dot = 0.0, qq = 0.0, kk = 0.0;
    for (int c = 0; c < dk; c++) {
        dot += (double)out->q[c] * out->k[c];
        qq += (double)out->q[c] * out->q[c];
        kk += (double)out->k[c] * out->k[c];
    }
    out->dot = (float)dot;
    out->qnorm = (float)sqrt(qq);
    out->knorm = (float)sqrt(kk);
    if (m->cfg.score == ATTN_SCORE_ADDITIVE)
        out->va = m->cfg.mode == ATTN_MODE_LEARNED ? m->params.v + (size_t)head * dk : m->params.vb;
    out->temperature = m->cfg.temperature;
    /* the logits as the forward pass computes them */
    float mult = m->logit_mult;
#define LOGIT(c) (r->scores[row + (c)] * mult)
    out->logit = LOGIT(j);
    out->weight = r->weights[row + j];
    out->masked = attn_masked(r, i, j);
    int nv = attn_causal_row_len(r->causal, i, r->Tk);
    float mx = -INFINITY;
    for (int c = 0; c < nv; c++)
        mx = LOGIT(c) > mx ? LOGIT(c) : mx;
    out->row_max = mx;
    for (int c = 0; c < nv; c++)
        out->exp_sum += exp((double)LOGIT(c) - mx);
#undef LOGIT
    out->exp_ij = out->masked ? 0.0 : exp((double)out->logit - mx);
    return 0;
}

AttnMap model_map(const Model *m, ModelMatrix which, int head)
{
    const AttnResult *r = &m->res;
    int fresh = r->Tq == m->T && r->Tk == m->Tk; /* else text set, not recomputed */
    AttnMap map = attn_map_make(fresh ? model_matrix(m, which, head) : NULL, fresh ? m->T : 0,
                                fresh ? m->Tk : 0, m->labels, m->klabels, (AttnMapKind)which);
    map.causal = r->causal;
    map.n_heads = r->h > 0 ? r->h : 1;
    map.head = head >= 0 && head < map.n_heads ? head : map.n_heads == 1 ? 0 : ATTN_MAP_AVG;
    return map;
}

AttnMaps model_maps(const Model *m, ModelMatrix which)
{
    const AttnResult *r = &m->res;
    AttnMaps ms = {0};
    int fresh = r->Tq == m->T && r->Tk == m->Tk;
    ms.v = fresh ? model_matrix(m, which, 0) : NULL;
    ms.L = 1;
    ms.H = r->h > 0 ? r->h : 1;
    ms.Tq = fresh ? m->T : 0;
    ms.Tk = fresh ? m->Tk : 0;
    ms.q_labels = m->labels;
    ms.k_labels = m->klabels;
    ms.kind = (AttnMapKind)which;
    ms.causal = r->causal;
    return ms;
}

void model_facts(const Model *m, int head, int ascii, char *buf, size_t n)
{
    const AttnConfig *c = &m->cfg;
    const char *sep = ascii ? ", " : " \xC2\xB7 ";
    char hb[48], fn[48] = "";
    attn_head_label(head, m->res.h, hb, sizeof hb);
    if (c->score != ATTN_SCORE_DOT)
        snprintf(fn, sizeof fn, "%s score%s", attn_score_name(c->score), sep);
    const char *scale = c->score != ATTN_SCORE_DOT ? "" : c->scale ? (ascii ? "scaled 1/sqrt(dk)" : "scaled 1/\xE2\x88\x9A" "dk") : "unscaled";
    snprintf(buf, n, "%s%s%s%s%s%sd=%d, dk=%d%s%s%s%s%s%s%s%s%s=%g",
             c->mode == ATTN_MODE_BASIC ? "basic" : "learned", sep,
             m->cross ? "cross-attention" : "", m->cross ? sep : "", hb, sep, m->d, m->res.dk,
             sep, fn, scale, *scale ? sep : "",
             m->cross ? "" : model_causal(m) ? "causal mask" : "no mask", m->cross ? "" : sep,
             c->posenc ? "posenc" : "no posenc", sep, ascii ? "tau" : "\xCF\x84", (double)c->temperature);
}

/* The first bytes of t that fit in max, cut at a character. */
static int fit_bytes(const char *t, int max)
{
    int n = (int)strlen(t);
    if (n > max)
        for (n = max; n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80; n--)
            ;
    return n;
}

ModelWeightsOrigin model_weights_origin(const Model *m)
{
    AttnParams def;
    if (attn_params_create(&def, m->params.d, m->params.h) < 0)
        return MODEL_WEIGHTS_DEFAULT;
    if (m->has_seed)
        attn_params_xavier(&def, m->seed);
    int same = attn_params_equal(&def, &m->params);
    attn_params_destroy(&def);
    if (!same || m->n_over > 0)
        return MODEL_WEIGHTS_EDITED;
    return m->has_seed ? MODEL_WEIGHTS_RANDOM : MODEL_WEIGHTS_DEFAULT;
}

void model_figure_text(const Model *m, ModelMatrix which, int head, char *title, size_t tn,
                       char *facts, size_t fn)
{
    char f[300], origin[64] = "";
    const char *t = m->text ? m->text : "";
    /* wider than any figure: cut at a character */
    if (m->cross)
        snprintf(title, tn, "\xE2\x80\x9C%.*s\xE2\x80\x9D \xE2\x86\x92 \xE2\x80\x9C%.*s\xE2\x80\x9D",
                 fit_bytes(t, 500), t, fit_bytes(m->keys_text, 500), m->keys_text);
    else
        snprintf(title, tn, "\xE2\x80\x9C%.*s\xE2\x80\x9D", fit_bytes(t, 1000), t);
    model_facts(m, head, 0, f, sizeof f);
    /* after the mode, the weights' origin: a slide of edited weights must
     * not pass for the defaults (basic mode uses none, but edited vectors) */
    ModelWeightsOrigin wo = model_weights_origin(m);
    int basic = m->cfg.mode == ATTN_MODE_BASIC;
    if (wo == MODEL_WEIGHTS_EDITED && (!basic || m->n_over > 0))
        snprintf(origin, sizeof origin, " (edited)");
    else if (wo == MODEL_WEIGHTS_RANDOM && !basic)
        snprintf(origin, sizeof origin, " (random, seed %llu)", (unsigned long long)m->seed);
    const char *mode = basic ? "basic" : "learned";
    size_t ml = strlen(mode);
    snprintf(facts, fn, "%s \xC2\xB7 %s%s%s",
             which == MODEL_WEIGHTS ? "attention weights" : attn_map_kind_name((AttnMapKind)which), mode, origin,
             f + ml);
}
