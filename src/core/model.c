/* The model: text → tokens → embeddings → attention, in one place, so every
 * front end (command line, window, export, tests) shows the same numbers. */
#include "attnviz/model.h"

#include <math.h>
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
    attn_result_init(&m->res);
    if (m->cfg.heads < 1)
        m->cfg.heads = 1;
    int rc = attn_params_create(&m->params, m->d, m->cfg.heads);
    if (rc < 0)
        return rc;
    return model_set_text(m, "", 0);
}

void model_destroy(Model *m)
{
    if (!m)
        return;
    free(m->text);
    tok_free(&m->toks);
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

void model_embed(Model *m)
{
    int d = m->d;
    for (int i = 0; i < m->T; i++) {
        const char *w = tok_text(&m->toks, i);
        float *e = m->E + (size_t)i * d;
        int o = find_override(m, w);
        int k = embed_find(m->table, w);
        m->oov[i] = k < 0;
        m->edited[i] = o >= 0;
        if (o >= 0)
            memcpy(e, m->over_vec + (size_t)o * d, (size_t)d * sizeof(float));
        else if (k >= 0)
            memcpy(e, embed_vector(m->table, k), (size_t)d * sizeof(float));
        else
            embed_oov_vector(w, d, e);
    }
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
        size_t n = (size_t)T * m->d;
        float *E = realloc(m->E, n * sizeof(float));
        if (E)
            m->E = E;
        float *X = realloc(m->X, n * sizeof(float));
        if (X)
            m->X = X;
        unsigned char *oov = realloc(m->oov, (size_t)T);
        if (oov)
            m->oov = oov;
        unsigned char *ed = realloc(m->edited, (size_t)T);
        if (ed)
            m->edited = ed;
        if (!E || !X || !oov || !ed) {
            m->T = 0;
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

/* X = E + PE, with the encoding of each position computed once per model
 * (T×d sines and cosines per keystroke otherwise). The same floats as
 * attn_posenc_add. */
static int add_posenc(Model *m)
{
    int T = m->T, d = m->d;
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
    for (size_t e = 0; e < (size_t)T * d; e++)
        m->X[e] += m->pe[e];
    return 0;
}

/* The rows [lo, hi) of X that differ from the last forward's, when that
 * forward can be updated (same weights and settings): 1. With another T
 * (a word typed or deleted) every row from the first difference on counts
 * as new. Else 0, with [0, T). */
static int changed_rows(const Model *m, int *lo, int *hi)
{
    int T = m->T, d = m->d;
    *lo = 0;
    *hi = T;
    /* the last forward kept the logits exactly when it kept the window's
     * matrices; its T is the result's */
    if (!m->last_ok || (m->res.logits != NULL) != (m->keep_window_matrices != 0) ||
        memcmp(&m->last_cfg, &m->cfg, sizeof m->cfg) != 0 ||
        !attn_params_equal(&m->last_params, &m->params))
        return 0;
    int last_T = m->res.Tq, n = T < last_T ? T : last_T;
    size_t row = (size_t)d * sizeof(float);
    while (*lo < n && memcmp(m->X + (size_t)*lo * d, m->last_X + (size_t)*lo * d, row) == 0)
        (*lo)++;
    if (last_T != T)
        return 1;
    while (*hi > *lo &&
           memcmp(m->X + (size_t)(*hi - 1) * d, m->last_X + (size_t)(*hi - 1) * d, row) == 0)
        (*hi)--;
    if (*lo == T)
        *hi = T;
    return 1;
}

/* Remember what this forward saw (same_params: the weights are known to
 * equal the remembered ones); on failure the next one is whole. */
static void remember(Model *m, int lo, int hi, int same_params)
{
    int T = m->T, d = m->d;
    size_t n = (size_t)T * d;
    m->last_ok = 0;
    if (n > m->cap_last) {
        float *x = realloc(m->last_X, n * sizeof(float));
        if (!x)
            return;
        m->last_X = x;
        m->cap_last = n;
        lo = 0, hi = T;
    }
    if (!same_params && attn_params_copy(&m->last_params, &m->params) < 0)
        return;
    memcpy(m->last_X + (size_t)lo * d, m->X + (size_t)lo * d, (size_t)(hi - lo) * d * sizeof(float));
    m->last_cfg = m->cfg;
    m->last_ok = 1;
}

/* The heads' mean of the scores and logits over the entries that changed:
 * rows [lo, hi) and, in the other rows, columns [lo, hi). */
static void heads_mean(Model *m, int lo, int hi)
{
    int T = m->T, h = m->res.h;
    size_t qk = (size_t)T * T;
    float inv = 1.0f / (float)h;
    for (int i = 0; i < T; i++) {
        int j0 = i >= lo && i < hi ? 0 : lo, j1 = i >= lo && i < hi ? T : hi;
        for (int j = j0; j < j1; j++) {
            size_t e = (size_t)i * T + j;
            float s = m->res.scores[e], l = m->res.logits[e];
            for (int k = 1; k < h; k++) {
                s += m->res.scores[(size_t)k * qk + e];
                l += m->res.logits[(size_t)k * qk + e];
            }
            m->avg_scores[e] = s * inv;
            m->avg_logits[e] = l * inv;
        }
    }
}

int model_compute(Model *m)
{
    static unsigned long generations;
    int T = m->T, d = m->d;
    if (T == 0) {
        m->generation = ++generations;
        m->res.Tq = m->res.Tk = 0;
        m->last_ok = 0;
        return 0;
    }
    memcpy(m->X, m->E, (size_t)T * d * sizeof(float));
    int rc = m->cfg.posenc ? add_posenc(m) : 0;
    if (rc < 0) {
        m->last_ok = 0;
        return rc;
    }
    int lo, hi;
    int inc = changed_rows(m, &lo, &hi);
    int resized = inc && m->res.Tq != T;
    m->last_lo = lo;
    m->last_hi = hi;
    if (inc && !resized && lo == T)
        return 0; /* the same input as last time: the same results */
    m->generation = ++generations;
    m->res.skip_logits = !m->keep_window_matrices;
    if (resized)
        rc = attn_forward_resize(&m->res, m->X, T, m->X, T, d, &m->params, &m->cfg, lo, lo);
    else
        rc = attn_forward_update(&m->res, m->X, T, m->X, T, d, &m->params, &m->cfg, lo, hi, lo, hi);
    if (rc < 0) {
        m->last_ok = 0;
        return rc;
    }
    size_t qk = (size_t)T * T;
    int whole = (lo == 0 && hi == T) || resized; /* the means' stride changed */
    if (m->keep_window_matrices && m->res.h > 1) {
        if (qk > m->cap_avg) {
            float *s = realloc(m->avg_scores, qk * sizeof(float));
            if (s)
                m->avg_scores = s;
            float *l = realloc(m->avg_logits, qk * sizeof(float));
            if (l)
                m->avg_logits = l;
            if (!s || !l) {
                m->last_ok = 0;
                return -ATTN_E_NOMEM;
            }
            m->cap_avg = qk;
            whole = 1;
        }
        heads_mean(m, whole ? 0 : lo, whole ? T : hi);
    }
    remember(m, lo, hi, inc);
    return 0;
}

const float *model_matrix(const Model *m, ModelMatrix which, int head)
{
    const AttnResult *r = &m->res;
    if (head < 0 || head >= r->h) {
        if (r->h == 1)
            head = 0;
        else
            return which == MODEL_WEIGHTS ? r->avg
                   : !m->keep_window_matrices ? NULL
                   : which == MODEL_SCORES ? m->avg_scores
                                           : m->avg_logits;
    }
    size_t off = (size_t)head * r->Tq * r->Tk;
    if (which == MODEL_LOGITS)
        return r->logits ? r->logits + off : NULL;
    return (which == MODEL_WEIGHTS ? r->weights : r->scores) + off;
}

int model_count_oov(const Model *m)
{
    int n = 0;
    for (int i = 0; i < m->T; i++)
        n += m->oov[i];
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
    out->scale = m->cfg.scale ? 1.0f / sqrtf((float)dk) : 1.0f;
    out->temperature = m->cfg.temperature;
    /* the logits as the forward pass computed them, kept or not */
    float mult = attn_logit_scale(&m->cfg, dk);
#define LOGIT(c) (r->logits ? r->logits[row + (c)] : r->scores[row + (c)] * mult)
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
    int fresh = r->Tq == m->T && r->Tk == m->T; /* else text set, not recomputed */
    AttnMap map = attn_map_make(fresh ? model_matrix(m, which, head) : NULL, fresh ? m->T : 0,
                                fresh ? m->T : 0, m->labels, m->labels, (AttnMapKind)which);
    map.causal = r->causal;
    map.n_heads = r->h > 0 ? r->h : 1;
    map.head = head >= 0 && head < map.n_heads ? head : map.n_heads == 1 ? 0 : ATTN_MAP_AVG;
    return map;
}

AttnMaps model_maps(const Model *m, ModelMatrix which)
{
    const AttnResult *r = &m->res;
    AttnMaps ms = {0};
    int fresh = r->Tq == m->T && r->Tk == m->T;
    ms.v = fresh ? model_matrix(m, which, 0) : NULL;
    ms.L = 1;
    ms.H = r->h > 0 ? r->h : 1;
    ms.Tq = ms.Tk = fresh ? m->T : 0;
    ms.q_labels = ms.k_labels = m->labels;
    ms.kind = (AttnMapKind)which;
    ms.causal = r->causal;
    return ms;
}

void model_facts(const Model *m, int head, int ascii, char *buf, size_t n)
{
    const AttnConfig *c = &m->cfg;
    const char *sep = ascii ? ", " : " \xC2\xB7 ";
    char hb[48];
    attn_head_label(head, m->res.h, hb, sizeof hb);
    snprintf(buf, n, "%s%s%s%sd=%d, dk=%d%s%s%s%s%s%s%s%s=%g",
             c->mode == ATTN_MODE_BASIC ? "basic" : "learned", sep, hb, sep, m->d, m->res.dk,
             sep, c->scale ? (ascii ? "scaled 1/sqrt(dk)" : "scaled 1/\xE2\x88\x9A" "dk") : "unscaled",
             sep, c->causal ? "causal mask" : "no mask", sep, c->posenc ? "posenc" : "no posenc",
             sep, ascii ? "tau" : "\xCF\x84", (double)c->temperature);
}

void model_figure_text(const Model *m, ModelMatrix which, int head, char *title, size_t tn,
                       char *facts, size_t fn)
{
    char f[300];
    const char *t = m->text ? m->text : "";
    size_t n = strlen(t);
    if (n > 1000) /* wider than any figure: cut at a character */
        for (n = 1000; n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80; n--)
            ;
    snprintf(title, tn, "\xE2\x80\x9C%.*s\xE2\x80\x9D", (int)n, t);
    model_facts(m, head, 0, f, sizeof f);
    snprintf(facts, fn, "%s \xC2\xB7 %s",
             which == MODEL_WEIGHTS ? "attention weights" : attn_map_kind_name((AttnMapKind)which), f);
}
