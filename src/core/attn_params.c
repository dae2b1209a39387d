/* The weights of the learned mode (create, copy, compare, identity, Xavier
 * draws, one head's slice) and the sinusoidal positional encoding. Plain C
 * and libm. */
#include "attnviz/attn.h"
#include "attnviz/prng.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- weights ------------------------------------------------------------ */

int attn_params_create(AttnParams *p, int d, int h)
{
    memset(p, 0, sizeof *p);
    if (d < 1 || h < 1 || h > ATTN_MAX_HEADS || d % h != 0)
        return -ATTN_E_HEADS;
    size_t n = (size_t)d * (size_t)d; /* h × d × dk = d × d */
    p->d = d;
    p->h = h;
    p->dk = d / h;
    p->Wq = calloc(n, sizeof(float));
    p->Wk = calloc(n, sizeof(float));
    p->Wv = calloc(n, sizeof(float));
    p->Wo = calloc(n, sizeof(float));
    p->v = calloc((size_t)d, sizeof(float)); /* h × dk = d */
    p->vb = calloc((size_t)d, sizeof(float));
    if (!p->Wq || !p->Wk || !p->Wv || !p->Wo || !p->v || !p->vb) {
        attn_params_destroy(p);
        return -ATTN_E_NOMEM;
    }
    attn_params_identity(p);
    return 0;
}

void attn_params_destroy(AttnParams *p)
{
    if (!p)
        return;
    free(p->Wq);
    free(p->Wk);
    free(p->Wv);
    free(p->Wo);
    free(p->v);
    free(p->vb);
    memset(p, 0, sizeof *p);
}

int attn_params_copy(AttnParams *dst, const AttnParams *src)
{
    AttnParams tmp;
    int rc = attn_params_create(&tmp, src->d, src->h);
    if (rc < 0)
        return rc;
    size_t bytes = (size_t)src->d * (size_t)src->d * sizeof(float);
    memcpy(tmp.Wq, src->Wq, bytes);
    memcpy(tmp.Wk, src->Wk, bytes);
    memcpy(tmp.Wv, src->Wv, bytes);
    memcpy(tmp.Wo, src->Wo, bytes);
    /* a hand-made source without v keeps the defaults create set */
    if (src->v)
        memcpy(tmp.v, src->v, (size_t)src->d * sizeof(float));
    if (src->vb)
        memcpy(tmp.vb, src->vb, (size_t)src->d * sizeof(float));
    attn_params_destroy(dst);
    *dst = tmp;
    return 0;
}

int attn_params_equal(const AttnParams *a, const AttnParams *b)
{
    if (a->d != b->d || a->h != b->h || !a->Wq || !b->Wq)
        return 0;
    size_t bytes = (size_t)a->d * (size_t)a->d * sizeof(float), vbytes = (size_t)a->d * sizeof(float);
    if ((!a->v) != (!b->v) || (!a->vb) != (!b->vb))
        return 0;
    return memcmp(a->Wq, b->Wq, bytes) == 0 && memcmp(a->Wk, b->Wk, bytes) == 0 &&
           memcmp(a->Wv, b->Wv, bytes) == 0 && memcmp(a->Wo, b->Wo, bytes) == 0 &&
           (!a->v || memcmp(a->v, b->v, vbytes) == 0) &&
           (!a->vb || memcmp(a->vb, b->vb, vbytes) == 0);
}

void attn_params_identity(AttnParams *p)
{
    int d = p->d, dk = p->dk;
    for (int m = 0; m < 3; m++) {
        float *W = m == 0 ? p->Wq : m == 1 ? p->Wk : p->Wv;
        memset(W, 0, (size_t)d * d * sizeof(float));
        for (int k = 0; k < p->h; k++)
            for (int c = 0; c < dk; c++)
                W[(size_t)k * d * dk + (size_t)(k * dk + c) * dk + c] = 1.0f;
    }
    memset(p->Wo, 0, (size_t)d * d * sizeof(float));
    for (int r = 0; r < d; r++)
        p->Wo[(size_t)r * d + r] = 1.0f;
    attn_params_default_v(p);
}

static void xavier_fill(float *W, int rows, int cols, Prng *rng)
{
    float limit = sqrtf(6.0f / (float)(rows + cols));
    for (int i = 0; i < rows * cols; i++)
        W[i] = (2.0f * prng_uniform(rng) - 1.0f) * limit;
}

void attn_params_xavier(AttnParams *p, uint64_t seed)
{
    Prng rng;
    prng_seed(&rng, seed);
    size_t slice = (size_t)p->d * p->dk;
    for (int k = 0; k < p->h; k++) {
        xavier_fill(p->Wq + k * slice, p->d, p->dk, &rng);
        xavier_fill(p->Wk + k * slice, p->d, p->dk, &rng);
        xavier_fill(p->Wv + k * slice, p->d, p->dk, &rng);
    }
    xavier_fill(p->Wo, p->d, p->d, &rng);
    /* v and vb after every weight of a seed before they existed, so those
     * draws (and the seeded printouts) stay as they were */
    for (int k = 0; p->v && k < p->h; k++)
        xavier_fill(p->v + (size_t)k * p->dk, p->dk, 1, &rng);
    if (p->vb)
        xavier_fill(p->vb, p->d, 1, &rng);
}

float *attn_params_matrix(const AttnParams *p, int which, int head, int *rows,
                          int *cols)
{
    size_t slice = (size_t)p->d * p->dk;
    *rows = which >= 4 ? 1 : p->d;
    *cols = which == 3 || which == 5 ? p->d : p->dk;
    switch (which) {
    case 4: return p->v + (size_t)head * p->dk;
    case 5: return p->vb;
    case 0: return p->Wq + head * slice;
    case 1: return p->Wk + head * slice;
    case 2: return p->Wv + head * slice;
    default: return p->Wo;
    }
}

/* ---- positional encoding ------------------------------------------------ */

float attn_posenc(int pos, int k, int d)
{
    int i2 = k & ~1; /* 2i */
    double angle = pos / pow(10000.0, (double)i2 / d);
    return (float)((k & 1) ? cos(angle) : sin(angle));
}

void attn_posenc_add(float *X, int T, int d)
{
    for (int p = 0; p < T; p++)
        for (int k = 0; k < d; k++)
            X[(size_t)p * d + k] += attn_posenc(p, k, d);
}
