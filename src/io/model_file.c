/* A Hugging Face model folder opened by an architecture's tables (arch.h):
 * config.json parsed (model_config.c), the safetensors files mapped
 * (st_folder.c), each row of the tensor table found (per layer, with the
 * file's prefix), its dtype and shape checked against the config and bound
 * into the weights struct: float32 in place, bfloat16 in place where the
 * table allows it, the rest converted to float32 once (matrices transposed
 * to [in, out]) into one block; tied rows take another's pointers. The
 * tokenizer's files noted, not read; a pytorch_model.bin never read
 * (unpickling runs code). Nothing here knows an architecture. */
#include "attnviz/model_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/background.h"
#include "attnviz/gguf.h"
#include "attnviz/io.h"
#include "attnviz/quant.h"
#include "file_map.h"
#include "hf_json.h"
#include "model_file_internal.h"

/* One tensor to bind: its row and layer, its name in the file, the shape
 * the config gives it, where its pointers go; then what was found. */
typedef struct Slot {
    const ArchTensor *row;
    int layer;              /* -1: not a layer's */
    char name[128];
    long long dim[2];
    const float **dst;
    const RtMat **dst16;    /* NULL: no place for a matrix as stored */
    const SafeTensor *t;
    const char *file;       /* the safetensors file holding it */
    int convert, bf16, tied;
    int mat;                /* a GGUF file's: used as stored (an RtMat) */
} Slot;

typedef struct Bind {
    ModelFile *m;
    const char *where;      /* the weights in messages (model.safetensors or the index) */
    AttnErr *err;
    int n_layer;
    int n_enc;              /* an encoder-decoder's encoder layers (0: none) */
    long long sizes[ARCH_MAX_SIZES];
} Bind;

static const SafeTensor *find(const ModelFile *m, const char *name, const char **file)
{
    const SafeTensor *t = st_folder_find(&m->own->files, name, file);
    /* TensorFlow-era names (bert-base-uncased's LayerNorm.gamma and .beta),
       which transformers' loader renames to weight and bias */
    static const char *const now[] = {"LayerNorm.weight", "LayerNorm.bias"};
    static const char *const then[] = {"LayerNorm.gamma", "LayerNorm.beta"};
    size_t n = strlen(name);
    for (int k = 0; !t && k < 2; k++) {
        size_t e = strlen(now[k]);
        char old[256];
        if (n >= e && n - e + strlen(then[k]) < sizeof old && strcmp(name + n - e, now[k]) == 0) {
            snprintf(old, sizeof old, "%.*s%s", (int)(n - e), name, then[k]);
            t = st_folder_find(&m->own->files, old, file);
        }
    }
    return t;
}

/* Row r's name in the file for layer l. */
static void full_name(const ModelFile *m, const ArchTensor *r, int l, char *buf, size_t n)
{
    char plain[128];
    snprintf(plain, sizeof plain, r->name, l);
    snprintf(buf, n, "%s%s", r->flags & AT_NO_PREFIX ? "" : m->prefix, plain);
}

static void slot(Bind *b, Slot *s, const ArchTensor *r, int l)
{
    const ArchDesc *a = b->m->arch;
    char *layers = r->flags & AT_ENC_LAYER ? b->m->own->enc_layers : b->m->own->layers;
    char *base = l >= 0 ? layers + (size_t)l * a->layer_size : (char *)b->m->weights;
    memset(s, 0, sizeof *s);
    s->row = r;
    s->layer = l;
    full_name(b->m, r, l, s->name, sizeof s->name);
    for (int i = 0; i < r->ndim; i++)
        s->dim[i] = b->sizes[r->dim[i]];
    s->dst = (const float **)(void *)(base + r->off);
    if (r->off16 != ARCH_NOWHERE)
        s->dst16 = (const RtMat **)(void *)(base + r->off16);
}

/* Every tensor of the table the config asks for, layers in order; *n. */
static Slot *make_slots(Bind *b, int *n)
{
    const ArchDesc *a = b->m->arch;
    const int kinds = AT_LAYER | AT_ENC_LAYER;
    int per_layer = 0, per_enc = 0, k = 0;
    for (int i = 0; i < a->n_tensors; i++) {
        per_layer += (a->tensors[i].flags & AT_LAYER) != 0;
        per_enc += (a->tensors[i].flags & AT_ENC_LAYER) != 0;
    }
    size_t rows = (size_t)(a->n_tensors > 0 ? a->n_tensors : 0);
    size_t layers = (size_t)(b->n_layer > 0 ? b->n_layer : 0);
    size_t enc = (size_t)(b->n_enc > 0 ? b->n_enc : 0);
    Slot *s = calloc(rows + (size_t)per_layer * layers + (size_t)per_enc * enc, sizeof *s);
    for (int i = 0; s && i < a->n_tensors; i++) {
        const ArchTensor *r = &a->tensors[i];
        int kind = r->flags & kinds;
        if (!kind) {
            slot(b, &s[k++], r, -1);
            continue;
        }
        int j = i; /* a run of a layer's rows, layer by layer */
        while (j < a->n_tensors && (a->tensors[j].flags & kinds) == kind)
            j++;
        for (int l = 0; l < (kind == AT_ENC_LAYER ? b->n_enc : b->n_layer); l++)
            for (int q = i; q < j; q++)
                slot(b, &s[k++], &a->tensors[q], l);
        i = j - 1;
    }
    *n = k;
    return s;
}

/* Another name alt of a row (arch.h: its prefix, or none after "/"). */
static void alt_name(const ModelFile *m, const char *alt, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", alt[0] == '/' ? "" : m->prefix, alt + (alt[0] == '/'));
}

/* A missing tensor: the row's own message; a whole layer missing named with
 * the config's layer count when the description says how; a row with
 * other names with them; else its name. */
static int missing(const Bind *b, const Slot *s)
{
    const ModelFile *m = b->m;
    const ArchDesc *a = m->arch;
    if (m->gguf) { /* named as the file would name it */
        char gname[160];
        model_gguf_name(m, s->name, gname, sizeof gname);
        return attn_err_set(b->err, ATTN_E_NOT_FOUND, b->where, 0, "no tensor %s", gname);
    }
    if (s->row->missing)
        return attn_err_set(b->err, ATTN_E_NOT_FOUND, b->where, 0, "%s", s->row->missing);
    if (s->row->alt) {
        char names[512] = "", one[160];
        for (int k = 0; s->row->alt[k]; k++) {
            alt_name(m, s->row->alt[k], one, sizeof one);
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     k ? (s->row->alt[k + 1] ? ", " : " or ") : "", one);
        }
        return attn_err_set(b->err, ATTN_E_NOT_FOUND, b->where, 0,
                            "no tensor %s, nor %s (the same numbers under another name)", s->name,
                            names);
    }
    const ArchTensor *first = NULL;
    for (int i = 0; i < a->n_tensors && !first; i++)
        first = a->tensors[i].flags & AT_LAYER ? &a->tensors[i] : NULL;
    char name[160], lp[96];
    if (s->layer >= 0 && (s->row->flags & AT_LAYER) && a->layers_key && first) {
        full_name(m, first, s->layer, name, sizeof name);
        if (!find(m, name, NULL)) {
            int have = 0;
            for (;; have++) {
                full_name(m, first, have, name, sizeof name);
                if (!find(m, name, NULL))
                    break;
            }
            const char *d = strstr(first->name, "%d");
            snprintf(name, sizeof name, "%.*s%%d.", d ? (int)(d - first->name) : 0, first->name);
            snprintf(lp, sizeof lp, name, s->layer);
            return attn_err_set(b->err, ATTN_E_SHAPE, b->where, 0,
                                "config.json says %s %d but the file has %d layer%s (no %s%s*)",
                                a->layers_key, b->n_layer, have, have == 1 ? "" : "s",
                                m->prefix, lp);
        }
    }
    return attn_err_set(b->err, ATTN_E_NOT_FOUND, b->where, 0, "no tensor %s", s->name);
}

/* A GGUF file's tensor (shape checked): of a type quant.h computes; a
 * matrix, and a table that has a place for one, used as stored; a vector
 * in place when float32 in order, else converted. */
static int check_gguf(const Bind *b, Slot *s)
{
    const SafeTensor *t = s->t;
    if (!qtype_supported(t->qtype)) {
        const char *tn = qtype_name(t->qtype);
        char num[32];
        snprintf(num, sizeof num, "type %d", t->qtype);
        return attn_err_set(b->err, ATTN_E_UNSUPPORTED, s->file, 0,
                            "tensor %s is %s: attnviz reads F32, F16, BF16, Q8_0, Q4_0, Q4_1, "
                            "Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K", t->file_name,
                            tn ? tn : num);
    }
    /* a matrix without a place for one as stored converted (a transposed
     * one back to the table's [in, out]) */
    s->mat = s->dst16 && !t->transposed && (s->row->kind == AT_MATRIX || t->qtype != QT_F32);
    s->convert = !s->mat && (t->qtype != QT_F32 || t->perm || t->transposed ||
                             !safetensors_f32_in_place(t));
    return 0;
}

/* 1 when two stored tensors hold the same numbers as stored. */
static int same_numbers(const SafeTensor *h, const SafeTensor *e)
{
    return h->data == e->data || (h->dtype == e->dtype && h->nbytes == e->nbytes &&
                                  memcmp(h->data, e->data, h->nbytes) == 0);
}

/* s's tensor under its row's other names (arch.h: alt) when its own is
 * absent, s->name then the one found; every other name present holding
 * the same numbers, else refused naming both. */
static int find_alt(const Bind *b, Slot *s)
{
    const char *const *alt = s->row->alt;
    char name[sizeof s->name];
    for (int k = 0; !s->t && alt && alt[k]; k++) {
        alt_name(b->m, alt[k], name, sizeof name);
        if ((s->t = find(b->m, name, &s->file)) != NULL)
            memcpy(s->name, name, sizeof name);
    }
    for (int k = -1; s->t && alt && (k < 0 || alt[k]); k++) {
        if (k < 0)
            snprintf(name, sizeof name, "%s%s", b->m->prefix, s->row->name);
        else
            alt_name(b->m, alt[k], name, sizeof name);
        const SafeTensor *o = find(b->m, name, NULL);
        if (o && o != s->t && !same_numbers(o, s->t))
            return attn_err_set(b->err, ATTN_E_UNSUPPORTED, b->where, 0,
                                "tensors %s and %s differ: transformers ties them to one "
                                "parameter, so they are not one model's", s->name, name);
    }
    return 0;
}

/* s's tensor found, of a float dtype attnviz reads and the config's shape. */
static int check(const Bind *b, Slot *s)
{
    s->t = find(b->m, s->name, &s->file);
    int rc = find_alt(b, s);
    if (rc < 0)
        return rc;
    if (!s->t)
        return missing(b, s);
    const SafeTensor *t = s->t;
    if (t->dtype != SAFE_GGML && t->dtype != SAFE_F32 && t->dtype != SAFE_F16 && t->dtype != SAFE_BF16)
        return attn_err_set(b->err, ATTN_E_UNSUPPORTED, s->file, 0,
                            "tensor %s is %s: attnviz reads F32, F16 and BF16 weights", s->name,
                            safetensors_dtype_name(t->dtype));
    int same = t->ndim == s->row->ndim; /* a transposed one: its shape the table's way */
    for (int i = 0; same && i < s->row->ndim; i++)
        same = t->shape[i] == s->dim[i];
    if (!same) {
        char want[64], got[160];
        safetensors_shape_text(want, sizeof want, s->row->ndim, s->dim);
        safetensors_shape_text(got, sizeof got, t->ndim, t->shape);
        return b->m->arch->shape_error(b->m->cfg, t->file_name ? t->file_name : s->name, want,
                                       got, s->file, b->err);
    }
    if (t->qtype >= 0)
        return check_gguf(b, s);
    s->convert = s->row->kind == AT_MATRIX || !safetensors_f32_in_place(t);
    return 0;
}

/* The slot of row r (not a layer's). */
static Slot *slot_of(Slot *s, int n, const ArchTensor *r)
{
    for (int i = 0; i < n; i++)
        if (s[i].row == r)
            return &s[i];
    return NULL;
}

/* Slot i checked, or tied: its row's condition false, or optional and
 * absent, or the same numbers as its tie's. */
static int check_or_tie(const Bind *b, Slot *s, int i, int n)
{
    const ArchTensor *r = s[i].row;
    const Slot *tie = r->tie >= 0 ? slot_of(s, n, &b->m->arch->tensors[r->tie]) : NULL;
    if (!arch_when(b->m->cfg, r->when) ||
        ((r->flags & AT_OPTIONAL) && !find(b->m, s[i].name, NULL))) {
        s[i].tied = 1;
        return 0;
    }
    int rc = check(b, &s[i]);
    if (rc == 0 && tie && tie->t && (r->flags & AT_SAME_TIES))
        s[i].tied = same_numbers(s[i].t, tie->t);
    return rc;
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

/* Which tensors are used as bfloat16 from the mapping: a plain one with a
 * bfloat16 place when it can be; the matrices when every one of them can
 * (the forward then reads them all with one kernel), else all are
 * converted. */
static void pick_bf16(Slot *s, int n)
{
    int all = 1;
    for (int i = 0; i < n; i++)
        if (s[i].t && s[i].t->qtype >= 0)
            return; /* a GGUF file: its matrices as stored, whatever the type */
    for (int i = 0; i < n; i++)
        all &= s[i].tied || s[i].row->kind != AT_MATRIX || bf16_in_place(s[i].t);
    for (int i = 0; i < n; i++)
        if (!s[i].tied && s[i].dst16 && bf16_in_place(s[i].t) &&
            (all || s[i].row->kind != AT_MATRIX)) {
            s[i].bf16 = 1;
            s[i].convert = 0;
        }
}

/* Row j of t ([out, in] as the table names it, a vector one row) as
 * float32 into row: a safetensors file's by its dtype, a GGUF file's by its
 * type from the file's row perm[j]. */
static void tensor_row(float *row, const SafeTensor *t, long long j)
{
    long long rows = t->ndim == 2 ? t->shape[0] : 1, cols = (long long)t->count / rows;
    if (t->qtype < 0) {
        SafeTensor r = *t;
        r.count = (size_t)cols;
        r.data = t->data + (size_t)(j * cols) * (size_t)safetensors_dtype_size(t->dtype);
        safetensors_to_f32(row, &r);
        return;
    }
    size_t rb = t->nbytes / (size_t)rows;
    qtype_to_f32(t->qtype, t->data + (size_t)(t->perm ? t->perm[j] : j) * rb, row, cols);
}

/* Rows of a matrix transposed at a time (transpose_into): each row of dst
 * gets TRANSPOSE_ROWS floats in a run, a cache line, not one. */
enum { TRANSPOSE_ROWS = 16 };

/* A matrix stored [out, in] as float32 [in, out] into dst, TRANSPOSE_ROWS
 * of its rows at a time (bert-base's open: each float of dst otherwise
 * lands on another cache line, for large matrices another page); rows is
 * TRANSPOSE_ROWS · `in` floats of scratch. */
static void transpose_into(float *dst, const SafeTensor *t, float *rows)
{
    size_t out = (size_t)t->shape[0], in = (size_t)t->shape[1];
    for (size_t j0 = 0; j0 < out; j0 += TRANSPOSE_ROWS) {
        size_t nb = out - j0 < TRANSPOSE_ROWS ? out - j0 : TRANSPOSE_ROWS;
        for (size_t b = 0; b < nb; b++)
            tensor_row(rows + b * in, t, (long long)(j0 + b));
        for (size_t p = 0; p < in; p++)
            for (size_t b = 0; b < nb; b++)
                dst[p * out + j0 + b] = rows[b * in + p];
    }
}

/* A GGUF file's [out, in] matrix the table has [in, out] (shape): float32
 * [in, out] into dst, TRANSPOSE_ROWS of its rows at a time (as
 * transpose_into); rows is TRANSPOSE_ROWS · `in` floats of scratch. */
static void untranspose_into(float *dst, const SafeTensor *t, float *rows)
{
    size_t in = (size_t)t->shape[0], out = (size_t)t->shape[1];
    size_t rb = t->nbytes / out;
    for (size_t j0 = 0; j0 < out; j0 += TRANSPOSE_ROWS) {
        size_t nb = out - j0 < TRANSPOSE_ROWS ? out - j0 : TRANSPOSE_ROWS;
        for (size_t b = 0; b < nb; b++)
            qtype_to_f32(t->qtype, t->data + (j0 + b) * rb, rows + b * in, (long long)in);
        for (size_t p = 0; p < in; p++)
            for (size_t b = 0; b < nb; b++)
                dst[p * out + j0 + b] = rows[b * in + p];
    }
}

/* t's numbers as float32 into out, in the table's order (a GGUF file's
 * permuted bias back in order). */
static void tensor_to_f32(float *out, const SafeTensor *t)
{
    if (t->qtype < 0) {
        safetensors_to_f32(out, t);
        return;
    }
    long long rows = t->ndim == 2 ? t->shape[0] : 1, cols = (long long)t->count / rows;
    if (t->ndim == 1 && t->perm) {
        float *all = malloc((size_t)cols * sizeof *all);
        if (!all)
            return;
        qtype_to_f32(t->qtype, t->data, all, cols);
        for (long long c = 0; c < cols; c++)
            out[c] = all[t->perm[c]];
        free(all);
        return;
    }
    for (long long r = 0; r < rows; r++)
        tensor_row(out + r * cols, t, r);
}

/* The pointers of every slot: in place, or converted into one block. */
static int convert_all(const Bind *b, Slot *s, int n)
{
    ModelFile *m = b->m;
    size_t floats = 0, widest = 1;
    for (int i = 0; i < n; i++) {
        m->n_bf16 += s[i].bf16;
        m->n_quant += !s[i].tied && s[i].mat;
        if (!s[i].tied && s[i].convert) {
            floats += s[i].t->count;
            m->n_converted++;
            if (s[i].row->kind == AT_MATRIX && (size_t)s[i].t->shape[1] > widest)
                widest = (size_t)s[i].t->shape[1];
            if (s[i].t->transposed && (size_t)s[i].t->shape[0] > widest)
                widest = (size_t)s[i].t->shape[0];
        }
    }
    float *row = NULL;
    if (m->n_bf16 + m->n_quant &&
        !(m->own->mats = calloc((size_t)(m->n_bf16 + m->n_quant), sizeof *m->own->mats)))
        return attn_err_set(b->err, ATTN_E_NOMEM, b->where, 0, "out of memory");
    if (floats) {
        m->own->conv = io_alloc_large(floats * sizeof(float));
        row = malloc(TRANSPOSE_ROWS * widest * sizeof(float));
        m->converted_bytes = floats * sizeof(float);
        if (!m->own->conv || !row) {
            free(row);
            return attn_err_set(b->err, ATTN_E_NOMEM, b->where, 0,
                                "out of memory converting %zu numbers to float32", floats);
        }
    }
    float *at = m->own->conv;
    RtMat *mat = m->own->mats;
    for (int i = 0; i < n; i++) {
        if (s[i].tied)
            continue;
        if (s[i].bf16) {
            *mat = (RtMat){RT_MAT_BF16, s[i].t->data, (size_t)s[i].t->shape[s[i].t->ndim - 1] * 2,
                           NULL};
            *s[i].dst16 = mat++;
        } else if (s[i].mat) {
            const SafeTensor *t = s[i].t;
            long long rows = t->ndim == 2 ? t->shape[0] : 1;
            *mat = (RtMat){t->qtype, t->data, t->nbytes / (size_t)rows, t->perm};
            *s[i].dst16 = mat++;
        } else if (!s[i].convert) {
            *s[i].dst = (const float *)(const void *)s[i].t->data;
        } else {
            if (s[i].t->transposed)
                untranspose_into(at, s[i].t, row);
            else if (s[i].row->kind == AT_MATRIX)
                transpose_into(at, s[i].t, row);
            else
                tensor_to_f32(at, s[i].t);
            *s[i].dst = at;
            at += s[i].t->count;
            bg_breathe(); /* a model of 160 layers converts 126 MB: the one-thread page draws between */
        }
    }
    free(row);
    return 0;
}

/* The file's prefix: the first of the description's under which its first
 * tensor is found (by its name or another of its prefixed names), else the
 * first under which its first layer's first tensor is when the first row
 * has other names (a file whose embeddings are only a tied lm_head's: that
 * row then says what is missing). */
static int find_prefix(const Bind *b)
{
    const ArchDesc *a = b->m->arch;
    char name[160], plain[128];
    b->m->prefix = "";
    const char *const *alt = a->tensors[0].alt;
    const ArchTensor *layer = NULL;
    for (int i = 0; alt && i < a->n_tensors && !layer; i++) /* a row with other names only */
        layer = a->tensors[i].flags & (AT_LAYER | AT_ENC_LAYER) ? &a->tensors[i] : NULL;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; a->prefixes && a->prefixes[i]; i++)
            for (int k = -1; k < 0 || (pass == 0 && alt && alt[k]); k++) {
                if (pass == 1 && !layer)
                    break;
                if (pass == 1)
                    snprintf(plain, sizeof plain, layer->name, 0);
                else if (k >= 0 && alt[k][0] == '/')
                    continue;
                snprintf(name, sizeof name, "%s%s", a->prefixes[i],
                         pass == 1 ? plain : k < 0 ? a->tensors[0].name : alt[k]);
                if (find(b->m, name, NULL)) {
                    b->m->prefix = a->prefixes[i];
                    return 0;
                }
            }
    return a->prefixes ? attn_err_set(b->err, ATTN_E_NOT_FOUND, b->where, 0, "%s",
                                      a->unknown_weights) : 0;
}

int model_file_bind(ModelFile *m, const char *where, AttnErr *err)
{
    const ArchDesc *a = m->arch;
    RtShape sh;
    a->rt->shape(m->cfg, &sh);
    Bind b = {.m = m, .where = where, .err = err, .n_layer = sh.n_layer};
    if (a->rt->encoder) {
        RtShape esh;
        a->rt->encoder->shape(m->cfg, &esh);
        b.n_enc = esh.n_layer;
    }
    a->sizes(m->cfg, b.sizes);
    int n = 0, rc = find_prefix(&b);
    if (rc < 0)
        return rc;
    m->own->layers = calloc((size_t)b.n_layer, a->layer_size);
    m->own->enc_layers = b.n_enc ? calloc((size_t)b.n_enc, a->layer_size) : NULL;
    Slot *s = m->own->layers && (!b.n_enc || m->own->enc_layers) ? make_slots(&b, &n) : NULL;
    if (!s)
        return attn_err_set(err, ATTN_E_NOMEM, where, 0, "out of memory");
    memcpy((char *)m->weights + a->layers_off, &m->own->layers, sizeof(void *));
    if (b.n_enc)
        memcpy((char *)m->weights + a->enc_layers_off, &m->own->enc_layers, sizeof(void *));
    for (int i = 0; i < n && rc == 0; i++)
        rc = check_or_tie(&b, s, i, n);
    if (rc == 0)
        pick_bf16(s, n);
    if (rc == 0)
        rc = convert_all(&b, s, n);
    for (int i = 0; i < n && rc == 0; i++) {
        const Slot *tie = s[i].tied ? slot_of(s, n, &a->tensors[s[i].row->tie]) : NULL;
        if (!tie)
            continue;
        m->tied = 1;
        *s[i].dst = *tie->dst;
        if (s[i].dst16 && tie->dst16)
            *s[i].dst16 = *tie->dst16;
    }
    free(s);
    return rc;
}

/* A line on stderr when the files hold tensors under one of the
 * description's ignored prefixes (another model's: not read). */
static void note_ignored(const ModelFile *m, const char *where)
{
    const ArchDesc *a = m->arch;
    const StFolder *f = &m->own->files;
    for (int i = 0; a->ignored && i < f->n; i++)
        for (int k = 0; k < f->st[i].n; k++)
            for (int p = 0; a->ignored[p]; p++)
                if (strncmp(f->st[i].t[k].name, a->ignored[p], strlen(a->ignored[p])) == 0) {
                    fprintf(stderr, "attnviz: note: %s: %s\n", where, a->ignored_note);
                    return;
                }
}

/* vocab.json + merges.txt (both, or neither) and tokenizer.json. */
static int note_tokenizer(ModelFile *m, AttnErr *err)
{
    if (io_has_file(m->dir, "vocab.json") && io_has_file(m->dir, "merges.txt")) {
        m->vocab_path = io_path_join(m->dir, "vocab.json");
        m->merges_path = io_path_join(m->dir, "merges.txt");
        if (!m->vocab_path || !m->merges_path)
            return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    }
    if (io_has_file(m->dir, "tokenizer.json") &&
        !(m->tokenizer_path = io_path_join(m->dir, "tokenizer.json")))
        return attn_err_set(err, ATTN_E_NOMEM, m->dir, 0, "out of memory");
    return 0;
}

/* generation_config.json's end-of-text ids too (where chat models list
 * theirs: <|eot_id|>, <|im_end|>, <end_of_turn>). Optional: a file that is
 * missing, unreadable or not JSON adds nothing (generation then stops at
 * config.json's ids). */
static void generation_stop_ids(ModelFile *m)
{
    char *path = io_path_join(m->dir, "generation_config.json"), *text = NULL;
    size_t len = 0;
    AttnErr quiet = {0};
    if (path && io_has_file(m->dir, "generation_config.json") &&
        io_read_file(path, 1 << 20, &text, &len, &quiet) == 0)
        model_config_stop_ids(text, len, m->stop_ids, &m->n_stop, MODEL_MAX_STOP);
    free(text);
    free(path);
}

static int read_config(ModelFile *m, AttnErr *err)
{
    char *path = NULL, *text = NULL;
    size_t len = 0;
    int rc = hf_config_read(m->dir, m->arch->config_files, &text, &len, &path, err);
    if (rc == 0)
        rc = model_config_read(m->arch, m->cfg, text, len, path, m->model_type,
                               sizeof m->model_type, err);
    if (rc == 0)
        model_config_stop_ids(text, len, m->stop_ids, &m->n_stop, MODEL_MAX_STOP);
    free(text);
    free(path);
    if (rc == 0)
        generation_stop_ids(m);
    return rc;
}

int model_file_open(const char *dir, const ArchDesc *a, ModelFile **out, AttnErr *err)
{
    *out = NULL;
    int rc = io_model_folder(dir, a->folder_files, err);
    if (rc < 0)
        return rc;
    ModelFile *m = calloc(1, sizeof *m);
    char *where = NULL;
    if (!m || !(m->own = calloc(1, sizeof *m->own)) || !(m->dir = strdup(dir)) ||
        !(m->cfg = calloc(1, a->rt->cfg_size)) || !(m->weights = calloc(1, a->weights_size))) {
        rc = attn_err_set(err, ATTN_E_NOMEM, dir, 0, "out of memory");
        goto cleanup;
    }
    m->arch = a;
    rc = read_config(m, err);
    if (rc == 0)
        rc = st_folder_open(&m->own->files, m->dir, &where, err);
    if (rc == 0)
        rc = model_file_bind(m, where, err);
    if (rc == 0)
        note_ignored(m, where);
    if (rc == 0)
        rc = note_tokenizer(m, err);
    if (rc == 0) {
        m->n_shards = m->own->files.n;
        *out = m;
        m = NULL;
    }
cleanup:
    free(where);
    model_file_close(m);
    return rc;
}

void model_file_close(ModelFile *m)
{
    if (!m)
        return;
    if (m->own) {
        st_folder_close(&m->own->files);
        free(m->own->conv);
        free(m->own->mats);
        free(m->own->perms);
        gguf_free(m->own->gguf);
        free(m->own->gguf);
        free(m->own->layers);
        free(m->own->enc_layers);
        free(m->own);
    }
    free(m->cfg);
    free(m->weights);
    free(m->dir);
    free(m->vocab_path);
    free(m->merges_path);
    free(m->tokenizer_path);
    free(m);
}
