/* A GPT-2's tensors (Hugging Face's names, with or without "transformer.")
 * bound to Gpt2Weights: each one's dtype and shape checked against the
 * config; float32 used in place where aligned, F16 and BF16 (and misaligned
 * float32) converted into one float32 block. Not the files (gpt2_file.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnfile.h"
#include "gpt2_own.h"

#define PER_LAYER 12

/* One weight to bind: its name without the prefix, the shape the config
 * gives it, where its pointer goes; then what was found. */
typedef struct Slot {
    char name[64];
    int ndim;
    long long dim[2];
    const float **dst;
    const SafeTensor *t;
    const char *file; /* the safetensors file holding it */
    int convert;
} Slot;

typedef struct Bind {
    Gpt2Model *m;
    const char *where;
    AttnErr *err;
} Bind;

/* The tensor called name in any shard (and its file), or NULL. */
static const SafeTensor *find(const Gpt2ModelOwn *own, const char *name, const char **file)
{
    return st_folder_find(&own->files, name, file);
}

static void slot(Slot *s, const float **dst, int ndim, long long d0, long long d1,
                 const char *fmt, int layer)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, fmt, layer);
    s->dst = dst;
    s->ndim = ndim;
    s->dim[0] = d0;
    s->dim[1] = d1;
}

/* Every weight the config asks for, in the order of gpt2.h; *n of them. */
static Slot *make_slots(Gpt2Model *m, Gpt2Layer *layers, int *n)
{
    const Gpt2Config *c = &m->cfg;
    long long C = c->n_embd, I = c->n_inner;
    Slot *s = calloc((size_t)(5 + PER_LAYER * c->n_layer), sizeof *s);
    if (!s)
        return NULL;
    Gpt2Weights *w = &m->weights;
    int k = 0;
    slot(&s[k++], &w->wte, 2, c->n_vocab, C, "wte.weight", 0);
    slot(&s[k++], &w->wpe, 2, c->n_positions, C, "wpe.weight", 0);
    for (int l = 0; l < c->n_layer; l++) {
        Gpt2Layer *y = &layers[l];
        slot(&s[k++], &y->ln1_w, 1, C, 0, "h.%d.ln_1.weight", l);
        slot(&s[k++], &y->ln1_b, 1, C, 0, "h.%d.ln_1.bias", l);
        slot(&s[k++], &y->attn_w, 2, C, 3 * C, "h.%d.attn.c_attn.weight", l);
        slot(&s[k++], &y->attn_b, 1, 3 * C, 0, "h.%d.attn.c_attn.bias", l);
        slot(&s[k++], &y->proj_w, 2, C, C, "h.%d.attn.c_proj.weight", l);
        slot(&s[k++], &y->proj_b, 1, C, 0, "h.%d.attn.c_proj.bias", l);
        slot(&s[k++], &y->ln2_w, 1, C, 0, "h.%d.ln_2.weight", l);
        slot(&s[k++], &y->ln2_b, 1, C, 0, "h.%d.ln_2.bias", l);
        slot(&s[k++], &y->fc_w, 2, C, I, "h.%d.mlp.c_fc.weight", l);
        slot(&s[k++], &y->fc_b, 1, I, 0, "h.%d.mlp.c_fc.bias", l);
        slot(&s[k++], &y->mproj_w, 2, I, C, "h.%d.mlp.c_proj.weight", l);
        slot(&s[k++], &y->mproj_b, 1, C, 0, "h.%d.mlp.c_proj.bias", l);
    }
    slot(&s[k++], &w->lnf_w, 1, C, 0, "ln_f.weight", 0);
    slot(&s[k++], &w->lnf_b, 1, C, 0, "ln_f.bias", 0);
    *n = k;
    return s;
}

/* A missing tensor: named, and when its whole layer is missing, the layers
 * the file has. */
static int missing(const Bind *b, const Slot *s, int layer)
{
    const Gpt2Model *m = b->m;
    char name[96];
    snprintf(name, sizeof name, "%sh.%d.ln_1.weight", m->prefix, layer);
    if (layer >= 0 && !find(m->own, name, NULL)) {
        int have = 0;
        for (;; have++) {
            snprintf(name, sizeof name, "%sh.%d.ln_1.weight", m->prefix, have);
            if (!find(m->own, name, NULL))
                break;
        }
        return attn_err_set(b->err, ATTN_E_SHAPE, b->where, 0,
                            "config.json says n_layer %d but the file has %d layer%s (no "
                            "%sh.%d.*)", m->cfg.n_layer, have, have == 1 ? "" : "s", m->prefix,
                            layer);
    }
    return attn_err_set(b->err, ATTN_E_NOT_FOUND, b->where, 0, "no tensor %s%s", m->prefix,
                        s->name);
}

/* s's tensor found, of a float dtype attnviz reads and the config's shape. */
static int check(const Bind *b, Slot *s, int layer)
{
    Gpt2Model *m = b->m;
    char full[96];
    snprintf(full, sizeof full, "%s%s", strncmp(s->name, "lm_head", 7) ? m->prefix : "",
             s->name);
    s->t = find(m->own, full, &s->file);
    if (!s->t)
        return missing(b, s, layer);
    const SafeTensor *t = s->t;
    if (t->dtype != SAFE_F32 && t->dtype != SAFE_F16 && t->dtype != SAFE_BF16)
        return attn_err_set(b->err, ATTN_E_UNSUPPORTED, s->file, 0,
                            "tensor %s is %s: attnviz reads F32, F16 and BF16 weights", full,
                            safetensors_dtype_name(t->dtype));
    int same = t->ndim == s->ndim;
    for (int i = 0; same && i < s->ndim; i++)
        same = t->shape[i] == s->dim[i];
    if (!same) {
        char want[64], got[160];
        safetensors_shape_text(want, sizeof want, s->ndim, s->dim);
        safetensors_shape_text(got, sizeof got, t->ndim, t->shape);
        return attn_err_set(b->err, ATTN_E_SHAPE, s->file, 0,
                            "tensor %s is %s, but config.json (n_embd %d, n_inner %d, "
                            "n_positions %d, vocab_size %d) makes it %s", full, got,
                            m->cfg.n_embd, m->cfg.n_inner, m->cfg.n_positions, m->cfg.n_vocab,
                            want);
    }
    s->convert = !safetensors_f32_in_place(t);
    return 0;
}

/* The prefix the file's names use: "transformer." or "". */
static int find_prefix(const Bind *b)
{
    if (find(b->m->own, "transformer.wte.weight", NULL))
        b->m->prefix = "transformer.";
    else if (find(b->m->own, "wte.weight", NULL))
        b->m->prefix = "";
    else
        return attn_err_set(b->err, ATTN_E_NOT_FOUND, b->where, 0,
                            "no tensor wte.weight (nor transformer.wte.weight): not a GPT-2's "
                            "weights");
    return 0;
}

/* lm_head.weight when the file has one that differs from wte (a fine-tune's
 * own output layer): checked into s, 1; else 0 (tied: wte). */
static int untied_head(const Bind *b, Slot *s, const Slot *wte, int *rc)
{
    Gpt2Model *m = b->m;
    slot(s, &m->weights.lm_head, 2, m->cfg.n_vocab, m->cfg.n_embd, "lm_head.weight", 0);
    *rc = 0;
    if (!find(m->own, "lm_head.weight", NULL))
        return 0;
    *rc = check(b, s, -1);
    if (*rc < 0)
        return 0;
    const SafeTensor *h = s->t, *e = wte->t;
    if (h->data == e->data ||
        (h->dtype == e->dtype && h->nbytes == e->nbytes && memcmp(h->data, e->data, h->nbytes) == 0))
        return 0;
    return 1;
}

int gpt2_weights_bind(Gpt2Model *m, const char *where, AttnErr *err)
{
    Bind b = {m, where, err};
    Gpt2ModelOwn *own = m->own;
    int n = 0, rc = find_prefix(&b);
    if (rc < 0)
        return rc;
    own->layers = calloc((size_t)m->cfg.n_layer, sizeof *own->layers);
    Slot *s = own->layers ? make_slots(m, own->layers, &n) : NULL;
    if (!s)
        return attn_err_set(err, ATTN_E_NOMEM, where, 0, "out of memory");
    for (int i = 0; i < n && rc == 0; i++)
        rc = check(&b, &s[i], i >= 2 && i < 2 + PER_LAYER * m->cfg.n_layer
                                  ? (i - 2) / PER_LAYER : -1);
    int untied = rc == 0 && untied_head(&b, &s[n], &s[0], &rc);
    n += untied;
    m->tied = !untied;
    size_t floats = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (s[i].convert) {
            floats += s[i].t->count;
            m->n_converted++;
        }
    if (rc == 0 && floats) {
        own->conv = malloc(floats * sizeof(float));
        if (!own->conv)
            rc = attn_err_set(err, ATTN_E_NOMEM, where, 0,
                              "out of memory converting %zu numbers to float32", floats);
        m->converted_bytes = floats * sizeof(float);
    }
    float *at = own->conv;
    for (int i = 0; i < n && rc == 0; i++) {
        if (s[i].convert) {
            safetensors_to_f32(at, s[i].t);
            *s[i].dst = at;
            at += s[i].t->count;
        } else {
            *s[i].dst = (const float *)(const void *)s[i].t->data;
        }
    }
    if (rc == 0) {
        m->weights.layers = own->layers;
        if (!m->weights.lm_head)
            m->weights.lm_head = m->weights.wte;
    }
    free(s);
    return rc;
}
