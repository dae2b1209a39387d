/* Teach mode on a Model: a Teacher holds the target, the optimiser and the
 * word vectors being trained, and steps the model's weights (teach.c has
 * the maths). */
#include "attnviz/teach_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The optimiser's flat vector: Wq, Wk (h·d·dk = d² each), v, vb (d each),
 * then the words' vectors. */
static size_t off_wk(const Model *m) { return (size_t)m->d * m->d; }
static size_t off_v(const Model *m) { return 2 * (size_t)m->d * m->d; }
static size_t off_vb(const Model *m) { return off_v(m) + (size_t)m->d; }
static size_t off_words(const Model *m) { return off_vb(m) + (size_t)m->d; }

void teacher_free(Teacher *t)
{
    free(t->target);
    teach_opt_free(&t->opt);
    teach_grad_free(&t->g);
    free(t->loss);
    for (int w = 0; w < t->n_words; w++)
        free(t->words[w]);
    free(t->words);
    free(t->vecs);
    free(t->gvec);
    free(t->qword);
    free(t->kword);
    memset(t, 0, sizeof *t);
}

/* The word of token text s: its index, added (with its vector e) if new. */
static int word_index(Teacher *t, const char *s, const float *e, int d)
{
    for (int w = 0; w < t->n_words; w++)
        if (strcmp(t->words[w], s) == 0)
            return w;
    int w = t->n_words;
    if (!(t->words[w] = strdup(s)))
        return -1;
    memcpy(t->vecs + (size_t)w * d, e, (size_t)d * sizeof(float));
    t->n_words++;
    return w;
}

/* The distinct words of both sentences, their vectors as the model has them
 * (table, edited or OOV), and each token's word. */
static int collect_words(Teacher *t, const Model *m)
{
    int d = m->d, n = m->T + (m->cross ? m->Tk : 0);
    t->words = calloc((size_t)n, sizeof *t->words);
    t->vecs = calloc((size_t)n * d, sizeof(float));
    t->gvec = calloc((size_t)n * d, sizeof(float));
    t->qword = calloc((size_t)m->T, sizeof(int));
    t->kword = calloc((size_t)m->Tk, sizeof(int));
    if (!t->words || !t->vecs || !t->gvec || !t->qword || !t->kword)
        return -ATTN_E_NOMEM;
    for (int i = 0; i < m->T; i++)
        if ((t->qword[i] = word_index(t, tok_text(&m->toks, i), m->E + (size_t)i * d, d)) < 0)
            return -ATTN_E_NOMEM;
    for (int j = 0; j < m->Tk; j++) {
        const char *s = m->cross ? tok_text(&m->ktoks, j) : tok_text(&m->toks, j);
        if ((t->kword[j] = word_index(t, s, m->Ek + (size_t)j * d, d)) < 0)
            return -ATTN_E_NOMEM;
    }
    return 0;
}

/* What the model allows to train: 0, or an error with its message. */
static int check_settings(const Model *m, int head, int train, float lr, AttnErr *err)
{
    int learned = m->cfg.mode == ATTN_MODE_LEARNED, h = learned ? m->params.h : 1;
    if (m->T == 0 || m->res.Tq != m->T || m->res.Tk != m->Tk)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "no computed sentence to teach");
    if (head != MODEL_HEAD_AVG && (head < 0 || head >= h))
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "head %d: the model has %d head%s",
                            head + 1, h, h == 1 ? "" : "s");
    if (!train)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "nothing to train");
    if ((train & TEACH_V) && m->cfg.score != ATTN_SCORE_ADDITIVE)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "v is trained only with the additive score (--score additive)");
    if (!learned && (train & (TEACH_WQ | TEACH_WK)))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "basic attention has no Wq or Wk: train x (or v with the additive score)");
    if (!(lr > 0.0f) || !isfinite(lr))
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0, "learning rate %g: must be above 0",
                            (double)lr);
    return 0;
}

int teacher_start(Teacher *t, const Model *m, const float *target, int head, int train, int opt,
                  float lr, AttnErr *err)
{
    memset(t, 0, sizeof *t);
    int rc = check_settings(m, head, train, lr, err);
    if (rc < 0)
        return rc;
    t->Tq = m->T, t->Tk = m->Tk, t->head = head, t->train = train;
    size_t qk = (size_t)t->Tq * t->Tk;
    if (!(t->target = malloc(qk * sizeof(float))))
        return -ATTN_E_NOMEM;
    memcpy(t->target, target, qk * sizeof(float));
    int bi = 0, bj = 0;
    t->rows = teach_target_prepare(t->target, t->Tq, t->Tk, model_causal(m), &t->dropped, &bi, &bj);
    if (t->rows < 0) {
        float x = target[(size_t)bi * t->Tk + bj];
        teacher_free(t);
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "target row %d (\"%s\"), key %d (\"%s\"): %g: values must be finite and at least 0",
                            bi + 1, m->labels[bi], bj + 1, m->klabels[bj], (double)x);
    }
    if (t->rows == 0) {
        teacher_free(t);
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "the target has no row with weight on a key the query can see");
    }
    if ((rc = collect_words(t, m)) < 0 ||
        (rc = teach_opt_init(&t->opt, opt, lr, off_words(m) + (size_t)t->n_words * m->d)) < 0) {
        teacher_free(t);
        return rc;
    }
    teach_grad_init(&t->g);
    return 0;
}

static TeachInput teacher_input(const Teacher *t, const Model *m)
{
    TeachInput in = {m->T, m->Tk, m->d, m->X, m->Xk, &m->params, m->cfg, t->head, t->target,
                     t->train};
    in.cfg.causal = model_causal(m);
    if (m->cfg.mode == ATTN_MODE_BASIC)
        in.head = 0;
    return in;
}

static int record(Teacher *t, double loss)
{
    if (t->n_loss != t->steps)
        return 0;
    if (t->n_loss == t->cap_loss) {
        long cap = t->cap_loss ? 2 * t->cap_loss : 256;
        double *l = realloc(t->loss, (size_t)cap * sizeof(double));
        if (!l)
            return -ATTN_E_NOMEM;
        t->loss = l;
        t->cap_loss = cap;
    }
    t->loss[t->n_loss++] = loss;
    return 0;
}

static int same_sentences(const Teacher *t, const Model *m)
{
    return m->T == t->Tq && m->Tk == t->Tk && m->res.Tq == m->T && m->res.Tk == m->Tk;
}

/* The words' gradients (the sum over their tokens, in either sentence),
 * the update, and the new vectors into the model as edited vectors. */
static int step_words(Teacher *t, Model *m)
{
    int d = m->d;
    memset(t->gvec, 0, (size_t)t->n_words * d * sizeof(float));
    for (int i = 0; i < m->T; i++) /* X = E + PE: ∂/∂E = ∂/∂X */
        for (int c = 0; c < d; c++)
            t->gvec[(size_t)t->qword[i] * d + c] += t->g.dXq[(size_t)i * d + c];
    for (int j = 0; m->cross && j < m->Tk; j++)
        for (int c = 0; c < d; c++)
            t->gvec[(size_t)t->kword[j] * d + c] += t->g.dXk[(size_t)j * d + c];
    teach_opt_update(&t->opt, off_words(m), t->vecs, t->gvec, (size_t)t->n_words * d);
    for (int w = 0; w < t->n_words; w++) {
        int rc = model_set_word_vector(m, t->words[w], t->vecs + (size_t)w * d);
        if (rc < 0)
            return rc;
    }
    return model_compute(m);
}

int teacher_step(Teacher *t, Model *m)
{
    if (!same_sentences(t, m))
        return -ATTN_E_SHAPE;
    TeachInput in = teacher_input(t, m);
    double loss;
    int rc = teach_loss(&in, &t->g, &loss);
    if (rc < 0 || (rc = record(t, loss)) < 0)
        return rc;
    size_t dd = (size_t)m->d * m->d;
    teach_opt_begin(&t->opt);
    if (t->train & TEACH_WQ)
        teach_opt_update(&t->opt, 0, m->params.Wq, t->g.dWq, dd);
    if (t->train & TEACH_WK)
        teach_opt_update(&t->opt, off_wk(m), m->params.Wk, t->g.dWk, dd);
    if ((t->train & TEACH_V) && m->cfg.mode == ATTN_MODE_LEARNED)
        teach_opt_update(&t->opt, off_v(m), m->params.v, t->g.dv, (size_t)m->d);
    if ((t->train & TEACH_V) && m->cfg.mode == ATTN_MODE_BASIC)
        teach_opt_update(&t->opt, off_vb(m), m->params.vb, t->g.dvb, (size_t)m->d);
    t->steps++;
    return (t->train & TEACH_X) ? step_words(t, m) : 0;
}

int teacher_loss_now(Teacher *t, Model *m, double *loss)
{
    if (!same_sentences(t, m))
        return -ATTN_E_SHAPE;
    TeachInput in = teacher_input(t, m);
    int rc = teach_loss(&in, NULL, loss);
    return rc < 0 ? rc : record(t, *loss);
}

int teacher_plateau(const Teacher *t, long window, double tol)
{
    if (t->n_loss == 0)
        return 0;
    if (!isfinite(t->loss[t->n_loss - 1]))
        return 1;
    if (t->n_loss <= window)
        return 0;
    double before = INFINITY, recent = INFINITY;
    for (long k = 0; k < t->n_loss; k++) {
        double *best = k < t->n_loss - window ? &before : &recent;
        *best = fmin(*best, t->loss[k]);
    }
    return before - recent <= tol * fabs(before) + 1e-12;
}
