/* A Llama-family model folder opened and closed: config.json parsed, the
 * safetensors files mapped (st_folder.c), each weight of
 * Hugging Face's names checked against the config and bound to
 * LlamaWeights (bfloat16 matrices and tables used in place from the
 * mapping; others converted to float32 once, matrices transposed to [in,
 * out]), tokenizer.json noted (not read). */
#include "attnviz/llamaio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/io.h"
#include "st_folder.h"

struct LlamaModelOwn {
    StFolder files;
    float *conv;        /* the converted tensors, one block (or NULL) */
    LlamaLayer *layers; /* cfg.n_layer */
};

typedef enum Kind {
    VEC = 0, /* a norm's gain or a bias: in place when it can be */
    ROWS,    /* the embeddings, lm_head: [vocab, hidden] as stored, in place when it can be */
    MATRIX   /* a projection, stored [out, in]: transposed into the block */
} Kind;

/* One weight to bind: its name, its shape as stored, where its pointer goes;
 * then what was found. */
typedef struct Slot {
    char name[96];
    Kind kind;
    int ndim;
    long long dim[2];
    const float **dst;
    const uint16_t **dst16; /* matrices and tables: where a bfloat16 one goes */
    const SafeTensor *t;
    const char *file;
    int convert, bf16;      /* converted into the block; used as bfloat16 in place */
} Slot;

static void slot(Slot *s, const float **dst, const uint16_t **dst16, Kind kind, long long d0,
                 long long d1, const char *fmt, int layer)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, fmt, layer);
    s->dst = dst;
    s->dst16 = dst16;
    s->kind = kind;
    s->ndim = kind == VEC ? 1 : 2;
    s->dim[0] = d0;
    s->dim[1] = d1;
}

/* Every weight the config asks for; *n of them. */
static Slot *make_slots(LlamaModel *m, int *n)
{
    const LlamaConfig *c = &m->cfg;
    long long C = c->hidden, I = c->n_inner, qd = (long long)c->n_head * c->head_dim;
    long long kvd = (long long)c->n_kv_head * c->head_dim;
    Slot *s = calloc((size_t)(3 + 16 * c->n_layer), sizeof *s);
    if (!s)
        return NULL;
    LlamaWeights *w = &m->weights;
    int k = 0;
    slot(&s[k++], &w->embed, &w->embed_bf16, ROWS, c->n_vocab, C, "model.embed_tokens.weight", 0);
    for (int l = 0; l < c->n_layer; l++) {
        LlamaLayer *y = &m->own->layers[l];
        slot(&s[k++], &y->attn_norm, NULL, VEC, C, 0, "model.layers.%d.input_layernorm.weight", l);
        slot(&s[k++], &y->wq, &y->wq_bf16, MATRIX, qd, C, "model.layers.%d.self_attn.q_proj.weight", l);
        slot(&s[k++], &y->wk, &y->wk_bf16, MATRIX, kvd, C, "model.layers.%d.self_attn.k_proj.weight", l);
        slot(&s[k++], &y->wv, &y->wv_bf16, MATRIX, kvd, C, "model.layers.%d.self_attn.v_proj.weight", l);
        slot(&s[k++], &y->wo, &y->wo_bf16, MATRIX, C, qd, "model.layers.%d.self_attn.o_proj.weight", l);
        if (c->qkv_bias) {
            slot(&s[k++], &y->bq, NULL, VEC, qd, 0, "model.layers.%d.self_attn.q_proj.bias", l);
            slot(&s[k++], &y->bk, NULL, VEC, kvd, 0, "model.layers.%d.self_attn.k_proj.bias", l);
            slot(&s[k++], &y->bv, NULL, VEC, kvd, 0, "model.layers.%d.self_attn.v_proj.bias", l);
        }
        if (c->o_bias)
            slot(&s[k++], &y->bo, NULL, VEC, C, 0, "model.layers.%d.self_attn.o_proj.bias", l);
        slot(&s[k++], &y->mlp_norm, NULL, VEC, C, 0, "model.layers.%d.post_attention_layernorm.weight",
             l);
        slot(&s[k++], &y->w_gate, &y->gate_bf16, MATRIX, I, C, "model.layers.%d.mlp.gate_proj.weight", l);
        slot(&s[k++], &y->w_up, &y->up_bf16, MATRIX, I, C, "model.layers.%d.mlp.up_proj.weight", l);
        slot(&s[k++], &y->w_down, &y->down_bf16, MATRIX, C, I, "model.layers.%d.mlp.down_proj.weight", l);
    }
    slot(&s[k++], &w->norm, NULL, VEC, C, 0, "model.norm.weight", 0);
    if (!c->tied)
        slot(&s[k++], &w->lm_head, &w->lm_head_bf16, ROWS, c->n_vocab, C, "lm_head.weight", 0);
    *n = k;
    return s;
}

/* s's tensor found, of a float dtype and the config's shape. */
static int check(LlamaModel *m, Slot *s, const char *where, AttnErr *err)
{
    s->t = st_folder_find(&m->own->files, s->name, &s->file);
    if (!s->t && s->dst == &m->weights.lm_head)
        return attn_err_set(err, ATTN_E_NOT_FOUND, where, 0,
                            "no tensor lm_head.weight, and config.json says "
                            "tie_word_embeddings false: the output layer is missing (attnviz "
                            "never falls back to the embeddings)");
    if (!s->t)
        return attn_err_set(err, ATTN_E_NOT_FOUND, where, 0, "no tensor %s", s->name);
    const SafeTensor *t = s->t;
    if (t->dtype != SAFE_F32 && t->dtype != SAFE_F16 && t->dtype != SAFE_BF16)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, s->file, 0,
                            "tensor %s is %s: attnviz reads F32, F16 and BF16 weights", s->name,
                            safetensors_dtype_name(t->dtype));
    int same = t->ndim == s->ndim;
    for (int i = 0; same && i < s->ndim; i++)
        same = t->shape[i] == s->dim[i];
    if (!same) {
        const LlamaConfig *c = &m->cfg;
        char want[64], got[160];
        safetensors_shape_text(want, sizeof want, s->ndim, s->dim);
        safetensors_shape_text(got, sizeof got, t->ndim, t->shape);
        return attn_err_set(err, ATTN_E_SHAPE, s->file, 0,
                            "tensor %s: %s expected, %s found (as stored, [out, in]; "
                            "config.json: hidden_size %d, num_attention_heads %d, "
                            "num_key_value_heads %d, head_dim %d, intermediate_size %d, "
                            "vocab_size %d)", s->name, want, got, c->hidden, c->n_head,
                            c->n_kv_head, c->head_dim, c->n_inner, c->n_vocab);
    }
    s->convert = s->kind == MATRIX || !safetensors_f32_in_place(t);
    return 0;
}

/* 1 when t can be read in place as bfloat16: BF16, 2-aligned, a
 * little-endian host. */
static int bf16_in_place(const SafeTensor *t)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return t->dtype == SAFE_BF16 && (uintptr_t)t->data % 2 == 0 && b == 1;
}

/* Which tensors are used as bfloat16 from the mapping: the tables when
 * they can be; the matrices when every one of them can (the forward then
 * reads them all with one kernel), else all are converted. */
static void pick_bf16(Slot *s, int n)
{
    int all = 1;
    for (int i = 0; i < n; i++)
        all &= s[i].kind != MATRIX || bf16_in_place(s[i].t);
    for (int i = 0; i < n; i++)
        if (s[i].kind != VEC && bf16_in_place(s[i].t) && (all || s[i].kind == ROWS)) {
            s[i].bf16 = 1;
            s[i].convert = 0;
        }
}

/* A matrix stored [out, in] (any float dtype) as float32 [in, out] into dst;
 * row is `in` floats of scratch. */
static void transpose_into(float *dst, const SafeTensor *t, float *row)
{
    size_t out = (size_t)t->shape[0], in = (size_t)t->shape[1];
    size_t esz = (size_t)safetensors_dtype_size(t->dtype);
    SafeTensor r = *t;
    r.count = in;
    for (size_t j = 0; j < out; j++) {
        r.data = t->data + j * in * esz;
        safetensors_to_f32(row, &r);
        for (size_t p = 0; p < in; p++)
            dst[p * out + j] = row[p];
    }
}

static int bind(LlamaModel *m, const char *where, AttnErr *err)
{
    LlamaModelOwn *own = m->own;
    int n = 0, rc = 0;
    own->layers = calloc((size_t)m->cfg.n_layer, sizeof *own->layers);
    Slot *s = own->layers ? make_slots(m, &n) : NULL;
    if (!s)
        return attn_err_set(err, ATTN_E_NOMEM, where, 0, "out of memory");
    size_t floats = 0, widest = 1;
    for (int i = 0; i < n && rc == 0; i++)
        rc = check(m, &s[i], where, err);
    if (rc == 0)
        pick_bf16(s, n);
    for (int i = 0; i < n && rc == 0; i++) {
        m->n_bf16 += s[i].bf16;
        if (s[i].convert) {
            floats += s[i].t->count;
            m->n_converted++;
            widest = s[i].t->ndim == 2 && (size_t)s[i].t->shape[1] > widest
                         ? (size_t)s[i].t->shape[1] : widest;
        }
    }
    float *row = NULL;
    if (rc == 0 && floats) {
        own->conv = malloc(floats * sizeof(float));
        row = malloc(widest * sizeof(float));
        if (!own->conv || !row)
            rc = attn_err_set(err, ATTN_E_NOMEM, where, 0,
                              "out of memory converting %zu numbers to float32", floats);
        m->converted_bytes = floats * sizeof(float);
    }
    float *at = own->conv;
    for (int i = 0; i < n && rc == 0; i++) {
        if (s[i].bf16) {
            *s[i].dst16 = (const uint16_t *)(const void *)s[i].t->data;
            continue;
        }
        if (!s[i].convert) {
            *s[i].dst = (const float *)(const void *)s[i].t->data;
            continue;
        }
        if (s[i].kind == MATRIX)
            transpose_into(at, s[i].t, row);
        else
            safetensors_to_f32(at, s[i].t);
        *s[i].dst = at;
        at += s[i].t->count;
    }
    if (rc == 0) {
        m->weights.layers = own->layers;
        if (m->cfg.tied) {
            m->weights.lm_head = m->weights.embed;
            m->weights.lm_head_bf16 = m->weights.embed_bf16;
        }
    }
    free(row);
    free(s);
    return rc;
}

#define FOLDER_FILES "config.json, model.safetensors, tokenizer.json"

static int read_config(LlamaModel *m, AttnErr *err)
{
    char *path = NULL, *text = NULL;
    size_t len = 0;
    int rc = hf_config_read(m->dir, FOLDER_FILES, &text, &len, &path, err);
    if (rc == 0)
        rc = llama_config_parse(&m->cfg, text, len, path, err);
    free(text);
    free(path);
    return rc;
}

int llama_file_open(const char *dir, LlamaModel **out, AttnErr *err)
{
    *out = NULL;
    int rc = io_model_folder(dir, FOLDER_FILES, err);
    if (rc < 0)
        return rc;
    LlamaModel *m = calloc(1, sizeof *m);
    char *where = NULL;
    if (!m || !(m->own = calloc(1, sizeof *m->own)) || !(m->dir = strdup(dir))) {
        rc = attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
        goto cleanup;
    }
    rc = read_config(m, err);
    if (rc == 0)
        rc = st_folder_open(&m->own->files, m->dir, &where, err);
    if (rc == 0)
        rc = bind(m, where, err);
    if (rc == 0 && io_has_file(m->dir, "tokenizer.json") &&
        !(m->tokenizer_path = io_path_join(m->dir, "tokenizer.json")))
        rc = attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    if (rc == 0) {
        m->n_shards = m->own->files.n;
        *out = m;
        m = NULL;
    }
cleanup:
    free(where);
    llama_file_close(m);
    return rc;
}

void llama_file_close(LlamaModel *m)
{
    if (!m)
        return;
    if (m->own) {
        st_folder_close(&m->own->files);
        free(m->own->conv);
        free(m->own->layers);
        free(m->own);
    }
    free(m->dir);
    free(m->tokenizer_path);
    free(m);
}
