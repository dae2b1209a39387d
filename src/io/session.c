/* Session files: the --print json document with a trailing "session" object.
 * Writing reads a Model; reading validates the whole file into a Session
 * (session_data.h), which model_apply_session puts into a Model.
 * The session object: "version", "sentence", "keys" (the second sentence,
 * "" for self-attention), "settings" (mode, heads, scale, causal, posenc,
 * temperature, score), "view", "embeddings" (edited word vectors), "vb"
 * (basic mode's additive vector, d numbers, written in every mode) and, in
 * basic mode, "learned" (config, heads[{Wq, Wk, Wv, v}], Wo: the learned
 * weights the document itself prints as null). So v (each head's "v": the
 * document's heads in learned mode, session.learned's in basic mode) and
 * vb (session.vb) both round-trip whatever the mode; vb is read only
 * with weights (every session written has them). */
#include "attnviz/session.h"
#include "attnviz/io.h"
#include "attnviz/teach_io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* session.view.color_scale: ColorScaleMode's names (colormap.h) in its
 * order; io knows no view, so the three names are here too. */
static const char *const cscale_names[3] = {"fixed", "max", "row"};

typedef struct {
    const Model *m;
    const char *session;
} SaveCtx;

static int write_session(FILE *f, void *ctx)
{
    SaveCtx *c = ctx;
    return print_json(f, c->m, c->session);
}

static cJSON *matrix_json(const float *a, int rows, int cols)
{
    cJSON *m = cJSON_CreateArray();
    for (int i = 0; m && i < rows; i++) {
        cJSON *row = cJSON_CreateArray();
        if (!row) {
            cJSON_Delete(m);
            return NULL;
        }
        for (int j = 0; j < cols; j++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber(a[(size_t)i * cols + j]));
        cJSON_AddItemToArray(m, row);
    }
    return m;
}

/* session.learned = {"config": {"heads", "seed"}, "heads": [{Wq, Wk, Wv}], "Wo"} */
static int add_learned(cJSON *s, const Model *m)
{
    const AttnParams *p = &m->params;
    cJSON *l = cJSON_AddObjectToObject(s, "learned");
    cJSON *cfg = l ? cJSON_AddObjectToObject(l, "config") : NULL;
    cJSON *heads = l ? cJSON_AddArrayToObject(l, "heads") : NULL;
    if (!cfg || !heads)
        return 0;
    cJSON_AddNumberToObject(cfg, "heads", p->h);
    cJSON_AddNumberToObject(cfg, "d_model", p->d);
    if (m->has_seed)
        cJSON_AddNumberToObject(cfg, "seed", (double)m->seed);
    size_t slice = (size_t)p->d * p->dk;
    for (int k = 0; k < p->h; k++) {
        cJSON *h = cJSON_CreateObject();
        if (!h)
            return 0;
        cJSON_AddItemToArray(heads, h);
        cJSON_AddItemToObject(h, "Wq", matrix_json(p->Wq + k * slice, p->d, p->dk));
        cJSON_AddItemToObject(h, "Wk", matrix_json(p->Wk + k * slice, p->d, p->dk));
        cJSON_AddItemToObject(h, "Wv", matrix_json(p->Wv + k * slice, p->d, p->dk));
        cJSON_AddItemToObject(h, "v", cJSON_CreateFloatArray(p->v + (size_t)k * p->dk, p->dk));
    }
    cJSON_AddItemToObject(l, "Wo", matrix_json(p->Wo, p->d, p->d));
    return 1;
}

/* view.teach: teach mode's target and settings (issue 15); 0 out of memory */
static int add_teach(cJSON *view, const SessionView *sv)
{
    SessionView def;
    session_view_default(&def);
    if (!sv->teach_on && !sv->teach_target && sv->teach_lr == def.teach_lr && sv->teach_opt == def.teach_opt &&
        sv->teach_train == def.teach_train && sv->teach_head == def.teach_head)
        return 1; /* never taught: the file as before */
    cJSON *t = cJSON_AddObjectToObject(view, "teach");
    char train[40];
    teach_train_names(sv->teach_train, train, sizeof train);
    if (!t || !cJSON_AddBoolToObject(t, "on", sv->teach_on) ||
        !cJSON_AddNumberToObject(t, "head", sv->teach_head) || !cJSON_AddStringToObject(t, "train", train) ||
        !cJSON_AddStringToObject(t, "optimizer", teach_opt_name(sv->teach_opt)) ||
        !cJSON_AddNumberToObject(t, "lr", sv->teach_lr))
        return 0;
    if (sv->teach_target && sv->teach_Tq > 0 && sv->teach_Tk > 0) {
        cJSON *rows = matrix_json(sv->teach_target, sv->teach_Tq, sv->teach_Tk);
        if (!rows)
            return 0;
        cJSON_AddItemToObject(t, "target", rows);
    }
    return 1;
}

int session_save(const char *path, const Model *m, const SessionView *sv, AttnErr *err)
{
    int rc;
    cJSON *s = cJSON_CreateObject();
    cJSON *settings = cJSON_AddObjectToObject(s, "settings");
    cJSON *view = cJSON_AddObjectToObject(s, "view");
    cJSON *emb = cJSON_AddObjectToObject(s, "embeddings");
    if (!s || !settings || !view || !emb) {
        cJSON_Delete(s);
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    }
    cJSON_AddNumberToObject(s, "version", 1);
    cJSON_AddStringToObject(s, "sentence", m->text ? m->text : "");
    cJSON_AddStringToObject(s, "keys", m->keys_text ? m->keys_text : "");
    cJSON_AddItemToObject(s, "vb", cJSON_CreateFloatArray(m->params.vb, m->d));
    const AttnConfig *c = &m->cfg;
    cJSON_AddStringToObject(settings, "mode", c->mode == ATTN_MODE_BASIC ? "basic" : "learned");
    cJSON_AddNumberToObject(settings, "heads", m->params.h);
    cJSON_AddBoolToObject(settings, "scale", c->scale);
    cJSON_AddBoolToObject(settings, "causal", c->causal);
    cJSON_AddBoolToObject(settings, "posenc", c->posenc);
    cJSON_AddNumberToObject(settings, "temperature", c->temperature);
    cJSON_AddStringToObject(settings, "score", attn_score_name(c->score));
    cJSON_AddNumberToObject(view, "query", sv->query);
    cJSON_AddNumberToObject(view, "key", sv->key);
    cJSON_AddNumberToObject(view, "head", sv->head);
    cJSON_AddNumberToObject(view, "matrix", sv->matrix);
    cJSON_AddNumberToObject(view, "colormap", sv->cmap);
    cJSON_AddStringToObject(view, "color_scale", cscale_names[sv->cscale >= 0 && sv->cscale < 3 ? sv->cscale : 0]);
    cJSON_AddBoolToObject(view, "all_lines", sv->all_lines);
    cJSON_AddBoolToObject(view, "dark", sv->dark);
    cJSON_AddNumberToObject(view, "ui_scale", sv->ui_scale);
    cJSON_AddNumberToObject(view, "sentence_index", sv->sentence_index);
    cJSON_AddNumberToObject(view, "edit_target", sv->edit_target);
    if (!add_teach(view, sv)) {
        cJSON_Delete(s);
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    }
    for (int i = 0; i < m->n_over; i++) {
        cJSON *a = cJSON_CreateArray();
        for (int k = 0; k < m->d; k++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(m->over_vec[(size_t)i * m->d + k]));
        cJSON_AddItemToObject(emb, m->over_word[i], a);
    }
    /* basic mode prints no weights (they are unused), but the learned ones
     * come back when the class switches to learned again: keep them here in
     * the shape weights_parse reads */
    if (c->mode == ATTN_MODE_BASIC && !add_learned(s, m)) {
        cJSON_Delete(s);
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    }
    char *text = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    if (!text)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    SaveCtx ctx = {m, text};
    rc = io_write_atomic(path, write_session, &ctx, err);
    cJSON_free(text);
    return rc;
}

static int get_cscale(const cJSON *o, int *out, const char *name, AttnErr *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "color_scale");
    if (!v)
        return 0; /* older sessions: fixed 0–1, the default when they were saved */
    for (int k = 0; cJSON_IsString(v) && k < 3; k++)
        if (strcmp(v->valuestring, cscale_names[k]) == 0) {
            *out = k;
            return 0;
        }
    return attn_err_set(err, ATTN_E_PARSE, name, 0,
                        "session.view.color_scale: expected \"fixed\", \"max\" or \"row\", got %s%s%s",
                        cJSON_IsString(v) ? "\"" : "", cJSON_IsString(v) ? v->valuestring : "something else",
                        cJSON_IsString(v) ? "\"" : "");
}

static int get_bool(const cJSON *o, const char *key, int *out, const char *name, AttnErr *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsBool(v))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "session.%s: expected true or false", key);
    *out = cJSON_IsTrue(v);
    return 0;
}

static int get_int(const cJSON *o, const char *key, int lo, int hi, int *out,
                   const char *name, AttnErr *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < lo || v->valuedouble > hi)
        return attn_err_set(err, ATTN_E_RANGE, name, 0,
                            "session: %s must be a whole number from %d to %d", key, lo, hi);
    *out = (int)v->valuedouble;
    return 0;
}

/* session.settings over *cfg */
static int parse_settings(const cJSON *s, AttnConfig *cfg, const char *name, AttnErr *err)
{
    int rc;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "settings");
    if (!st)
        return 0;
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(st, "mode");
    if (mode) {
        if (cJSON_IsString(mode) && strcmp(mode->valuestring, "basic") == 0)
            cfg->mode = ATTN_MODE_BASIC;
        else if (cJSON_IsString(mode) && strcmp(mode->valuestring, "learned") == 0)
            cfg->mode = ATTN_MODE_LEARNED;
        else
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "session.settings.mode: basic or learned");
    }
    const cJSON *score = cJSON_GetObjectItemCaseSensitive(st, "score");
    if (score) {
        int sc = cJSON_IsString(score) ? attn_score_parse(score->valuestring) : -1;
        if (sc < 0)
            return attn_err_set(err, ATTN_E_PARSE, name, 0,
                                "session.settings.score: dot, cosine or additive");
        cfg->score = sc;
    }
    if ((rc = get_bool(st, "scale", &cfg->scale, name, err)) < 0 ||
        (rc = get_bool(st, "causal", &cfg->causal, name, err)) < 0 ||
        (rc = get_bool(st, "posenc", &cfg->posenc, name, err)) < 0)
        return rc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(st, "temperature");
    if (t) {
        /* the range --temperature accepts, compared as the float it was */
        if (!cJSON_IsNumber(t) || !((float)t->valuedouble >= 1e-6f && t->valuedouble <= 1e6))
            return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                "session.settings.temperature must be a number from 1e-6 to 1e6");
        cfg->temperature = (float)t->valuedouble;
    }
    return 0;
}

/* session.view into *v (the defaults for what it leaves out) */
/* view.teach.target: rows of equal length, finite numbers >= 0 */
static int parse_teach_target(const cJSON *tg, SessionView *v, const char *name, AttnErr *err)
{
    int Tq = cJSON_GetArraySize(tg), Tk = Tq > 0 ? cJSON_GetArraySize(cJSON_GetArrayItem(tg, 0)) : 0;
    if (!cJSON_IsArray(tg) || Tq < 1 || Tq > ATTN_MAX_TOKENS || Tk < 1 || Tk > ATTN_MAX_TOKENS)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "session.view.teach.target: expected rows of numbers (at most %d by %d)",
                            ATTN_MAX_TOKENS, ATTN_MAX_TOKENS);
    float *t = malloc((size_t)Tq * Tk * sizeof *t);
    if (!t)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    int i = 0;
    for (const cJSON *row = tg->child; row; row = row->next, i++) {
        int j = 0;
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != Tk) {
            free(t);
            return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                                "session.view.teach.target: row %d has not %d numbers", i + 1, Tk);
        }
        for (const cJSON *x = row->child; x; x = x->next, j++) {
            if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0) {
                free(t);
                return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                    "session.view.teach.target: row %d, column %d: expected a number >= 0",
                                    i + 1, j + 1);
            }
            t[(size_t)i * Tk + j] = (float)x->valuedouble;
        }
    }
    v->teach_target = t;
    v->teach_Tq = Tq;
    v->teach_Tk = Tk;
    return 0;
}

/* view.teach: on, head, train, optimizer, lr, target (all optional) */
static int parse_teach(const cJSON *vw, SessionView *v, const char *name, AttnErr *err)
{
    int rc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(vw, "teach");
    if (!t)
        return 0;
    if (!cJSON_IsObject(t))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "session.view.teach: expected an object");
    if ((rc = get_bool(t, "on", &v->teach_on, name, err)) < 0 ||
        (rc = get_int(t, "head", -1, ATTN_MAX_HEADS - 1, &v->teach_head, name, err)) < 0)
        return rc;
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(t, "train");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(t, "optimizer");
    const cJSON *lr = cJSON_GetObjectItemCaseSensitive(t, "lr");
    if (tr && (!cJSON_IsString(tr) || (v->teach_train = teach_train_parse(tr->valuestring)) < 0))
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "session.view.teach.train: expected names from wq, wk, x, v separated by commas");
    if (op && (!cJSON_IsString(op) || (v->teach_opt = teach_opt_parse(op->valuestring)) < 0))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "session.view.teach.optimizer: expected sgd or adam");
    if (lr && (!cJSON_IsNumber(lr) || !(lr->valuedouble > 0) || lr->valuedouble > 1e3))
        return attn_err_set(err, ATTN_E_RANGE, name, 0, "session.view.teach.lr: expected a number > 0 (at most 1000)");
    if (lr)
        v->teach_lr = (float)lr->valuedouble;
    const cJSON *tg = cJSON_GetObjectItemCaseSensitive(t, "target");
    return tg ? parse_teach_target(tg, v, name, err) : 0;
}

static int parse_view(const cJSON *s, SessionView *v, const char *name, AttnErr *err)
{
    int rc;
    session_view_default(v);
    const cJSON *vw = cJSON_GetObjectItemCaseSensitive(s, "view");
    if (!vw)
        return 0;
    if ((rc = get_int(vw, "query", -1, 1 << 20, &v->query, name, err)) < 0 ||
        (rc = get_int(vw, "key", -1, 1 << 20, &v->key, name, err)) < 0 ||
        (rc = get_int(vw, "head", -1, ATTN_MAX_HEADS - 1, &v->head, name, err)) < 0 ||
        (rc = get_int(vw, "matrix", 0, 3, &v->matrix, name, err)) < 0 ||
        (rc = get_int(vw, "colormap", 0, 3, &v->cmap, name, err)) < 0 ||
        (rc = get_cscale(vw, &v->cscale, name, err)) < 0 ||
        (rc = get_int(vw, "sentence_index", 0, 1 << 24, &v->sentence_index, name, err)) < 0 ||
        (rc = get_int(vw, "edit_target", 0, 5, &v->edit_target, name, err)) < 0 || /* EDIT_V */
        (rc = get_bool(vw, "all_lines", &v->all_lines, name, err)) < 0 ||
        (rc = get_bool(vw, "dark", &v->dark, name, err)) < 0)
        return rc;
    const cJSON *us = cJSON_GetObjectItemCaseSensitive(vw, "ui_scale");
    if (cJSON_IsNumber(us) && us->valuedouble >= 0.5 && us->valuedouble <= 3.0)
        v->ui_scale = (float)us->valuedouble;
    return parse_teach(vw, v, name, err);
}

/* session.embeddings (edited word vectors of d numbers) into out */
static int parse_vectors(const cJSON *s, Session *out, int d, const char *name, AttnErr *err)
{
    const cJSON *emb = cJSON_GetObjectItemCaseSensitive(s, "embeddings");
    if (emb && !cJSON_IsObject(emb))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "session.embeddings: expected an object");
    int n_emb = emb ? cJSON_GetArraySize(emb) : 0;
    if (!n_emb)
        return 0;
    out->vectors = malloc((size_t)n_emb * d * sizeof(float));
    out->words = calloc((size_t)n_emb, sizeof *out->words);
    if (!out->vectors || !out->words)
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    const cJSON *e;
    cJSON_ArrayForEach(e, emb) {
        int i = out->n_vectors;
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != d)
            return attn_err_set(err, ATTN_E_SHAPE, name, 0,
                                "session.embeddings.%s: expected %d numbers", e->string, d);
        int k = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, e) {
            if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || fabs(x->valuedouble) > 1e4)
                return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                    "session.embeddings.%s[%d]: a number from -10000 to 10000",
                                    e->string, k);
            out->vectors[(size_t)i * d + k++] = (float)x->valuedouble;
        }
        if (!(out->words[i] = strdup(e->string)))
            return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
        out->n_vectors++;
    }
    return 0;
}

/* session.vb (d numbers) into the weights' vb; absent: as they are */
static int parse_vb(const cJSON *s, Session *out, int d, const char *name, AttnErr *err)
{
    const cJSON *vb = cJSON_GetObjectItemCaseSensitive(s, "vb");
    if (!vb)
        return 0;
    if (!cJSON_IsArray(vb) || cJSON_GetArraySize(vb) != d)
        return attn_err_set(err, ATTN_E_SHAPE, name, 0, "session.vb: expected %d numbers, found %d",
                            d, cJSON_IsArray(vb) ? cJSON_GetArraySize(vb) : 0);
    int k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, vb) {
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || fabs(x->valuedouble) > 1e6)
            return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                "session.vb[%d]: a number from -1e6 to 1e6", k);
        out->weights.params.vb[k++] = (float)x->valuedouble;
    }
    return 0;
}

/* The weights: the document's own in learned mode, session.learned in
 * basic mode; none when the file has neither. */
static int parse_weights(const cJSON *root, const cJSON *s, Session *out, int d,
                         const char *data, size_t len, const char *name, AttnErr *err)
{
    int rc;
    const cJSON *wo = cJSON_GetObjectItemCaseSensitive(root, "Wo");
    const cJSON *learned = cJSON_GetObjectItemCaseSensitive(s, "learned");
    if (wo && !cJSON_IsNull(wo)) {
        rc = weights_parse(&out->weights, d, data, len, name, err);
    } else if (cJSON_IsObject(learned)) {
        char *text = cJSON_PrintUnformatted(learned);
        if (!text)
            return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
        rc = weights_parse(&out->weights, d, text, strlen(text), name, err);
        cJSON_free(text);
    } else {
        return 0;
    }
    if (rc < 0)
        return rc;
    out->has_weights = 1;
    out->cfg.heads = out->weights.params.h;
    return parse_vb(s, out, d, name, err);
}

/* session.keys: the second sentence ("" or absent: self-attention, NULL) */
static int parse_keys(const cJSON *s, Session *out, const char *name, AttnErr *err)
{
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(s, "keys");
    if (!keys)
        return 0;
    if (!cJSON_IsString(keys))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "session.keys: expected a string");
    if (keys->valuestring[0] && !(out->keys = strdup(keys->valuestring)))
        return attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    return 0;
}

int session_parse(Session *out, int d, const AttnConfig *base, const char *data,
                  size_t len, const char *name, AttnErr *err)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(data, len);
    if (!root)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "not valid JSON");
    out->d = d;
    out->cfg = base ? *base : attn_config_default();
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "session");
    const cJSON *sentence = cJSON_GetObjectItemCaseSensitive(s, "sentence");
    if (!cJSON_IsObject(s))
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0,
                          "no \"session\" object (use --weights for a --print json file)");
    else if (!cJSON_IsString(sentence))
        rc = attn_err_set(err, ATTN_E_PARSE, name, 0, "session.sentence: expected a string");
    else if (!(out->sentence = strdup(sentence->valuestring)))
        rc = attn_err_set(err, ATTN_E_NOMEM, name, 0, "out of memory");
    else
        rc = parse_keys(s, out, name, err);
    if (rc == 0 && (rc = parse_settings(s, &out->cfg, name, err)) == 0 &&
        (rc = parse_view(s, &out->view, name, err)) == 0 &&
        (rc = parse_vectors(s, out, d, name, err)) == 0)
        rc = parse_weights(root, s, out, d, data, len, name, err);
    cJSON_Delete(root);
    if (rc < 0)
        session_free(out);
    return rc;
}

int session_load(Session *out, int d, const AttnConfig *base, const char *path, AttnErr *err)
{
    char *data;
    size_t len;
    memset(out, 0, sizeof *out);
    int rc = io_read_file(path, ATTN_MAX_FILE_BYTES, &data, &len, err);
    if (rc < 0)
        return rc;
    rc = session_parse(out, d, base, data, len, path, err);
    free(data);
    return rc;
}
