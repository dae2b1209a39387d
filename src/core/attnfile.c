/* Attention read from a file, as plain data (attnfile.h): element types and
 * their conversion to float, one element or one Tq×Tk map of the stored
 * tensor (a head, averages, the rollout), dropping tokens, token labels. */
#include "attnviz/attnfile.h"
#include "attnviz/background.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- element types -------------------------------------------------------- */

int attn_dtype_size(AttnDtype t)
{
    switch (t) {
    case ATTN_DT_F16:
    case ATTN_DT_BF16:
        return 2;
    case ATTN_DT_F32:
        return 4;
    case ATTN_DT_F64:
        return 8;
    default:
        return 0;
    }
}

const char *attn_dtype_name(AttnDtype t)
{
    static const char *const names[ATTN_DT_COUNT] = {"float16", "bfloat16", "float32",
                                                     "float64"};
    return (unsigned)t < ATTN_DT_COUNT ? names[t] : "unknown";
}

float attn_f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0) { /* zero or subnormal: m · 2^-24, exact in a float */
        float x = (float)m * 0x1p-24f;
        return sign ? -x : x;
    }
    if (e == 31) /* inf, or NaN with its payload */
        bits = sign | 0x7f800000u | (m << 13);
    else
        bits = sign | ((e - 15 + 127) << 23) | (m << 13);
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

float attn_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static int host_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

static uint16_t swap16(uint16_t u)
{
    return (uint16_t)((u >> 8) | (u << 8));
}

static uint32_t swap32(uint32_t u)
{
    return (u >> 24) | ((u >> 8) & 0xff00u) | ((u << 8) & 0xff0000u) | (u << 24);
}

static uint64_t swap64(uint64_t u)
{
    return ((uint64_t)swap32((uint32_t)u) << 32) | swap32((uint32_t)(u >> 32));
}

/* One element at p (any alignment) as a double: exact for every type. */
static double load(const unsigned char *p, AttnDtype t, int swap)
{
    switch (t) {
    case ATTN_DT_F16:
    case ATTN_DT_BF16: {
        uint16_t u;
        memcpy(&u, p, 2);
        if (swap)
            u = swap16(u);
        return t == ATTN_DT_F16 ? attn_f16_to_float(u) : attn_bf16_to_float(u);
    }
    case ATTN_DT_F32: {
        uint32_t u;
        float x;
        memcpy(&u, p, 4);
        if (swap)
            u = swap32(u);
        memcpy(&x, &u, 4);
        return x;
    }
    case ATTN_DT_F64: {
        uint64_t u;
        double x;
        memcpy(&u, p, 8);
        if (swap)
            u = swap64(u);
        memcpy(&x, &u, 8);
        return x;
    }
    default:
        return NAN;
    }
}

/* ---- one element, one map's layout ---------------------------------------- */

/* The part holding layer *l of the whole tensor; *l becomes the part's own
 * layer. NULL when l is out of range. */
static const AttnPart *part_for(const AttnFile *f, int *l)
{
    if (*l < 0)
        return NULL;
    for (int k = 0; k < f->n_parts && k < ATTN_FILE_MAX_LAYERS; k++) {
        const AttnPart *p = &f->parts[k];
        if (*l < p->L)
            return p;
        *l -= p->L;
    }
    return NULL;
}

/* Out of range (l, h, i, j) gives NaN. */
float attn_file_at(const AttnFile *f, int l, int h, int i, int j)
{
    if (f && f->computed) {
        if (l < 0 || l >= f->L || h < 0 || h >= f->H || i < 0 || i >= f->Tq || j < 0 || j >= f->Tk)
            return NAN;
        float *m = malloc(sizeof *m * (size_t)f->Tq * (size_t)f->Tk), x = NAN;
        if (m) {
            f->computed(f->computed_user, l, h, m);
            x = m[(size_t)i * (size_t)f->Tk + (size_t)j];
        }
        free(m);
        return x;
    }
    const AttnPart *p = f ? part_for(f, &l) : NULL;
    if (!p || !p->data || h < 0 || h >= p->H || i < 0 || i >= p->Tq || j < 0 || j >= p->Tk)
        return NAN;
    size_t idx;
    if (p->fortran)
        idx = (size_t)l + (size_t)p->L * ((size_t)h + (size_t)p->H *
                                          ((size_t)i + (size_t)p->Tq * (size_t)j));
    else
        idx = (((size_t)l * (size_t)p->H + (size_t)h) * (size_t)p->Tq + (size_t)i) *
                  (size_t)p->Tk + (size_t)j;
    const unsigned char *b = p->data;
    return (float)load(b + idx * (size_t)attn_dtype_size(p->dtype), p->dtype,
                       p->big_endian != host_big_endian());
}

/* Where the map (l, h) is: its first element and the byte steps between
 * rows and between columns. */
typedef struct MapView {
    const unsigned char *base;
    AttnDtype dt;
    int swap;
    size_t esize, row_step, col_step;
    int Tq, Tk;
} MapView;

static int map_view(const AttnFile *f, int l, int h, MapView *mv)
{
    const AttnPart *p = part_for(f, &l);
    if (!p)
        return -ATTN_E_RANGE;
    if (!p->data || p->H != f->H || p->Tq != f->Tq || p->Tk != f->Tk || h < 0 || h >= p->H ||
        attn_dtype_size(p->dtype) == 0)
        return -ATTN_E_SHAPE;
    mv->dt = p->dtype;
    mv->swap = p->big_endian != host_big_endian();
    mv->esize = (size_t)attn_dtype_size(p->dtype);
    mv->Tq = p->Tq;
    mv->Tk = p->Tk;
    size_t first;
    if (p->fortran) {
        first = (size_t)l + (size_t)p->L * (size_t)h;
        mv->row_step = (size_t)p->L * (size_t)p->H;
        mv->col_step = mv->row_step * (size_t)p->Tq;
    } else {
        first = ((size_t)l * (size_t)p->H + (size_t)h) * (size_t)p->Tq * (size_t)p->Tk;
        mv->row_step = (size_t)p->Tk;
        mv->col_step = 1;
    }
    mv->base = (const unsigned char *)p->data + first * mv->esize;
    mv->row_step *= mv->esize;
    mv->col_step *= mv->esize;
    return 0;
}

/* One row of a map into dst (add: added to dst), one loop per type so the
 * loops stay simple (contiguous rows vectorise). */
#define ROW_LOOP(U, SWAP, CONV)                                        \
    for (int j = 0; j < n; j++, p += step) {                           \
        U u;                                                           \
        memcpy(&u, p, sizeof u);                                       \
        if (swap)                                                      \
            u = SWAP(u);                                               \
        double x = CONV(u);                                            \
        dst[j] = add ? dst[j] + x : x;                                 \
    }

static double f32_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static double f64_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void row_double(const MapView *m, int i, double *restrict dst, int add)
{
    const unsigned char *p = m->base + (size_t)i * m->row_step;
    const size_t step = m->col_step;
    const int n = m->Tk, swap = m->swap;
    switch (m->dt) {
    case ATTN_DT_F16:
        ROW_LOOP(uint16_t, swap16, attn_f16_to_float)
        break;
    case ATTN_DT_BF16:
        ROW_LOOP(uint16_t, swap16, attn_bf16_to_float)
        break;
    case ATTN_DT_F32:
        ROW_LOOP(uint32_t, swap32, f32_bits)
        break;
    default:
        ROW_LOOP(uint64_t, swap64, f64_bits)
        break;
    }
}

/* A map stored by columns (Fortran order) as floats into out: read down
 * each column, where the elements are nearest. */
static void map_by_columns(const MapView *m, float *out)
{
    for (int j = 0; j < m->Tk; j++) {
        const unsigned char *p = m->base + (size_t)j * m->col_step;
        for (int i = 0; i < m->Tq; i++, p += m->row_step)
            out[(size_t)i * (size_t)m->Tk + (size_t)j] = (float)load(p, m->dt, m->swap);
    }
}

/* The map as floats into out: native float32 rows are copied, the rest
 * converted row by row (row: Tk doubles). */
static void map_float(const MapView *m, float *out, double *row)
{
    if (m->col_step > m->row_step) {
        map_by_columns(m, out);
        return;
    }
    for (int i = 0; i < m->Tq; i++) {
        float *o = out + (size_t)i * (size_t)m->Tk;
        if (m->dt == ATTN_DT_F32 && !m->swap && m->col_step == 4) {
            memcpy(o, m->base + (size_t)i * m->row_step, (size_t)m->Tk * 4);
            continue;
        }
        row_double(m, i, row, 0);
        for (int j = 0; j < m->Tk; j++)
            o[j] = (float)row[j];
    }
}

/* acc (Tq×Tk) += the map (l, h). */
static int map_add(const AttnFile *f, int l, int h, double *acc)
{
    if (f->computed) { /* made as floats, added as the stored floats would be */
        size_t n = (size_t)f->Tq * (size_t)f->Tk;
        float *m = malloc(sizeof *m * n);
        if (!m)
            return -ATTN_E_NOMEM;
        f->computed(f->computed_user, l, h, m);
        for (size_t k = 0; k < n; k++)
            acc[k] += m[k];
        free(m);
        return 0;
    }
    MapView m;
    int rc = map_view(f, l, h, &m);
    if (rc < 0)
        return rc;
    for (int i = 0; i < m.Tq; i++)
        row_double(&m, i, acc + (size_t)i * (size_t)m.Tk, 1);
    return 0;
}

/* ---- maps: a head, averages, the rollout ----------------------------------- */

/* acc += the maps (l, h) of a Fortran-order part for its layers l in
 * [a, b) and h in [h0, h1), in one pass over the storage: the L·H values
 * of a cell (i, j) are next to each other. */
static void part_sum_fortran(const AttnPart *p, int a, int b, int h0, int h1, double *acc)
{
    const size_t es = (size_t)attn_dtype_size(p->dtype), group = (size_t)p->L * (size_t)p->H;
    const int swap = p->big_endian != host_big_endian();
    const unsigned char *d = p->data;
    for (int j = 0; j < p->Tk; j++)
        for (int i = 0; i < p->Tq; i++) {
            const unsigned char *g = d + ((size_t)i + (size_t)p->Tq * (size_t)j) * group * es;
            double s = 0;
            for (int h = h0; h < h1; h++)
                for (int l = a; l < b; l++)
                    s += load(g + ((size_t)l + (size_t)p->L * (size_t)h) * es, p->dtype, swap);
            acc[(size_t)i * (size_t)p->Tk + (size_t)j] += s;
        }
}

/* acc = the sum of the maps (l, h) for l in [l0, l1), h in [h0, h1). */
static int sum_maps(const AttnFile *f, int l0, int l1, int h0, int h1, double *acc)
{
    memset(acc, 0, sizeof(double) * (size_t)f->Tq * (size_t)f->Tk);
    for (int l = l0; f->computed && l < l1; l++)
        for (int h = h0; h < h1; h++) {
            int rc = map_add(f, l, h, acc);
            if (rc < 0)
                return rc;
        }
    if (f->computed)
        return 0;
    int first = 0; /* the part's first layer */
    for (int k = 0; k < f->n_parts && k < ATTN_FILE_MAX_LAYERS && first < l1; k++) {
        const AttnPart *p = &f->parts[k];
        const int a = l0 > first ? l0 - first : 0, b = l1 - first < p->L ? l1 - first : p->L;
        if (a < b && p->fortran) {
            MapView m; /* checks the part's shape */
            int rc = map_view(f, first + a, h0, &m);
            if (rc < 0)
                return rc;
            part_sum_fortran(p, a, b, h0, h1, acc);
        } else {
            for (int l = a; l < b; l++)
                for (int h = h0; h < h1; h++) {
                    int rc = map_add(f, first + l, h, acc);
                    if (rc < 0)
                        return rc;
                }
        }
        first += p->L;
    }
    return first < l1 ? -ATTN_E_SHAPE : 0; /* the parts hold fewer layers than f->L */
}

/* Rows [i0, i1) of C = A·B, n×n, row-major, four rows of C at a time (each
 * row of B is read once for four rows of C). */
static void matmul_rows(double *restrict C, const double *restrict A, const double *restrict B,
                        int n, int i0, int i1)
{
    const size_t N = (size_t)n;
    memset(C + (size_t)i0 * N, 0, sizeof(double) * N * (size_t)(i1 - i0));
    int i = i0;
    for (; i + 4 <= i1; i += 4) {
        double *restrict c0 = C + (size_t)i * N, *restrict c1 = c0 + N;
        double *restrict c2 = c1 + N, *restrict c3 = c2 + N;
        const double *a = A + (size_t)i * N;
        for (size_t k = 0; k < N; k++) {
            const double a0 = a[k], a1 = a[N + k], a2 = a[2 * N + k], a3 = a[3 * N + k];
            const double *restrict b = B + k * N;
            for (size_t j = 0; j < N; j++) {
                c0[j] += a0 * b[j];
                c1[j] += a1 * b[j];
                c2[j] += a2 * b[j];
                c3[j] += a3 * b[j];
            }
        }
    }
    for (; i < i1; i++) {
        double *restrict c = C + (size_t)i * N;
        for (size_t k = 0; k < N; k++) {
            const double a = A[(size_t)i * N + k];
            const double *restrict b = B + k * N;
            for (size_t j = 0; j < N; j++)
                c[j] += a * b[j];
        }
    }
}

typedef struct MatmulJob {
    double *C;
    const double *A, *B;
    int n, i0, i1;
} MatmulJob;

static void *matmul_job(void *arg)
{
    MatmulJob *j = arg;
    matmul_rows(j->C, j->A, j->B, j->n, j->i0, j->i1);
    return NULL;
}

#define ROLLOUT_THREAD_MIN_N 96 /* smaller products: one thread */

/* C = A·B, n×n: the rows in two halves on two threads when n is large
 * and this thread may wait for another (bg_may_wait). */
static void matmul(double *C, const double *A, const double *B, int n)
{
    const int half = n / 2 / 4 * 4;
    MatmulJob a = {C, A, B, n, 0, half}, b = {C, A, B, n, half, n};
    pthread_t t;
    if (n >= ROLLOUT_THREAD_MIN_N && bg_may_wait() && pthread_create(&t, NULL, matmul_job, &b) == 0) {
        matmul_job(&a);
        pthread_join(t, NULL);
        return;
    }
    a.i1 = n;
    matmul_job(&a);
}

/* Ā_l into a: ½·(mean over heads of layer l) + ½·I, each row renormalised
 * to sum to 1 (a row summing to 0 is left as it is). */
static int rollout_layer(const AttnFile *f, int l, double *a)
{
    const int T = f->Tq;
    int rc = sum_maps(f, l, l + 1, 0, f->H, a);
    if (rc < 0)
        return rc;
    const double w = 0.5 / f->H;
    for (int i = 0; i < T; i++) {
        double *r = a + (size_t)i * (size_t)T, sum = 0;
        for (int j = 0; j < T; j++) {
            r[j] = r[j] * w + (i == j ? 0.5 : 0.0);
            sum += r[j];
        }
        if (sum != 0)
            for (int j = 0; j < T; j++)
                r[j] /= sum;
    }
    return 0;
}

/* R = Ā_layer · … · Ā_0 into r (T×T doubles). */
static int rollout(const AttnFile *f, int layer, double *r)
{
    const size_t n = (size_t)f->Tq * (size_t)f->Tq;
    double *a = malloc(sizeof(double) * n), *t = malloc(sizeof(double) * n);
    int rc = a && t ? rollout_layer(f, 0, r) : -ATTN_E_NOMEM;
    for (int l = 1; rc == 0 && l <= layer; l++) {
        rc = rollout_layer(f, l, a);
        if (rc == 0) {
            matmul(t, a, r, f->Tq);
            memcpy(r, t, sizeof(double) * n);
        }
    }
    free(a);
    free(t);
    return rc;
}

/* Averages are plain means of the stored values (a -inf or NaN entry makes
 * its cell -inf or NaN); the rollout works on the values as they are. */
int attn_file_map(const AttnFile *f, AttnPick pick, int layer, int head, float *out)
{
    if (!f || !out || f->L <= 0 || f->H <= 0 || f->Tq <= 0 || f->Tk <= 0)
        return -ATTN_E_RANGE;
    int need_layer = pick == ATTN_PICK_HEAD || pick == ATTN_PICK_LAYER_AVG ||
                     pick == ATTN_PICK_ROLLOUT;
    int need_head = pick == ATTN_PICK_HEAD || pick == ATTN_PICK_HEAD_ALL_AVG;
    if ((unsigned)pick > ATTN_PICK_ROLLOUT || (need_layer && (layer < 0 || layer >= f->L)) ||
        (need_head && (head < 0 || head >= f->H)))
        return -ATTN_E_RANGE;
    if (pick == ATTN_PICK_ROLLOUT && f->Tq != f->Tk)
        return -ATTN_E_SHAPE;
    const size_t n = (size_t)f->Tq * (size_t)f->Tk;
    double *acc = malloc(sizeof(double) * (pick == ATTN_PICK_HEAD ? (size_t)f->Tk : n));
    if (!acc)
        return -ATTN_E_NOMEM;
    int rc = 0;
    double count = 1;
    switch (pick) {
    case ATTN_PICK_HEAD: {
        MapView m;
        if (f->computed) {
            f->computed(f->computed_user, layer, head, out);
            free(acc);
            return 0;
        }
        rc = map_view(f, layer, head, &m);
        if (rc == 0)
            map_float(&m, out, acc);
        free(acc);
        return rc;
    }
    case ATTN_PICK_LAYER_AVG:
        rc = sum_maps(f, layer, layer + 1, 0, f->H, acc);
        count = f->H;
        break;
    case ATTN_PICK_HEAD_ALL_AVG:
        rc = sum_maps(f, 0, f->L, head, head + 1, acc);
        count = f->L;
        break;
    case ATTN_PICK_ALL_AVG:
        rc = sum_maps(f, 0, f->L, 0, f->H, acc);
        count = (double)f->L * f->H;
        break;
    default:
        rc = rollout(f, layer, acc);
        break;
    }
    if (rc == 0)
        for (size_t k = 0; k < n; k++)
            out[k] = (float)(acc[k] / count);
    free(acc);
    return rc;
}

/* ---- dropping tokens ------------------------------------------------------- */

void attn_map_drop(float *v, int *Tq, int *Tk, const unsigned char *dropq,
                   const unsigned char *dropk)
{
    const int rows = *Tq, cols = *Tk;
    int kq = 0, kk = 0;
    size_t w = 0;
    for (int j = 0; j < cols; j++)
        kk += !(dropk && dropk[j]);
    for (int i = 0; i < rows; i++) {
        if (dropq && dropq[i])
            continue;
        const float *r = v + (size_t)i * (size_t)cols;
        float *o = v + w;
        double sum = 0;
        for (int j = 0; j < cols; j++)
            if (!(dropk && dropk[j]))
                v[w++] = r[j]; /* w ≤ i·cols + j: nothing unread is overwritten */
        for (int j = 0; j < kk; j++)
            sum += o[j];
        if (sum != 0 && isfinite(sum))
            for (int j = 0; j < kk; j++)
                o[j] = (float)(o[j] / sum);
        kq++;
    }
    *Tq = kq;
    *Tk = kk;
}

/* ---- tokens ---------------------------------------------------------------- */

int attn_token_special(const char *tok)
{
    static const char *const special[] = {"[CLS]", "[SEP]", "[PAD]", "[MASK]",
                                          "[UNK]", "<s>",   "</s>",  "<pad>",
                                          "<unk>", "<mask>", "<|endoftext|>"};
    if (!tok)
        return 0;
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
        if (strcmp(tok, special[k]) == 0)
            return 1;
    /* <|…|>: GPT-2's, Llama 3's and Qwen2's control tokens (<|begin_of_text|>,
     * <|im_start|>, <|eot_id|> ...): no space or line inside */
    size_t n = strlen(tok);
    if (n < 5 || strncmp(tok, "<|", 2) != 0 || strcmp(tok + n - 2, "|>") != 0)
        return 0;
    return strcspn(tok + 2, " \t\r\n|") == n - 4;
}

/* A token that is only the marker keeps it (an empty label would hide a
 * real token). Longer than buf: cut at a character boundary. */
const char *attn_token_shown(const char *tok, char *buf, size_t n)
{
    if (!buf || n == 0)
        return "";
    if (!tok)
        tok = "";
    size_t skip = 0;
    if ((unsigned char)tok[0] == 0xC4 && (unsigned char)tok[1] == 0xA0)
        skip = 2;
    else if ((unsigned char)tok[0] == 0xE2 && (unsigned char)tok[1] == 0x96 &&
             (unsigned char)tok[2] == 0x81)
        skip = 3;
    if (tok[skip] != '\0')
        tok += skip;
    size_t len = strlen(tok);
    if (len > n - 1) {
        len = n - 1;
        while (len > 0 && ((unsigned char)tok[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(buf, tok, len);
    buf[len] = '\0';
    return buf;
}

/* ---- NaN ------------------------------------------------------------------- */

/* The first NaN of maps made when asked: each map made in turn. */
static int computed_nan(const AttnFile *f, int pos[4])
{
    size_t n = (size_t)f->Tq * (size_t)f->Tk;
    float *m = malloc(sizeof *m * n);
    int found = 0;
    for (int l = 0; m && !found && l < f->L; l++)
        for (int h = 0; !found && h < f->H; h++) {
            f->computed(f->computed_user, l, h, m);
            for (size_t x = 0; x < n && !found; x++)
                if (isnan(m[x])) {
                    found = 1;
                    if (pos) {
                        pos[0] = l;
                        pos[1] = h;
                        pos[2] = (int)(x / (size_t)f->Tk);
                        pos[3] = (int)(x % (size_t)f->Tk);
                    }
                }
        }
    free(m);
    return found;
}

int attn_file_find_nan(const AttnFile *f, int pos[4])
{
    if (!f)
        return 0;
    if (f->computed)
        return computed_nan(f, pos);
    int l0 = 0;
    for (int k = 0; k < f->n_parts && k < ATTN_FILE_MAX_LAYERS; k++) {
        const AttnPart *p = &f->parts[k];
        const size_t es = (size_t)attn_dtype_size(p->dtype);
        const size_t n = (size_t)p->L * (size_t)p->H * (size_t)p->Tq * (size_t)p->Tk;
        const unsigned char *b = p->data;
        const int swap = p->big_endian != host_big_endian();
        size_t x = 0;
        if (b && p->dtype == ATTN_DT_F32 && !swap) /* the common case: blocks, no NaN in them */
            for (float blk[1024]; x + 1024 <= n; x += 1024) {
                memcpy(blk, b + x * 4, sizeof blk);
                int any = 0;
                for (int k = 0; k < 1024; k++)
                    any |= blk[k] != blk[k];
                if (any)
                    break; /* found in this block: the element loop names it */
            }
        for (; b && es && x < n; x++) {
            if (!isnan(load(b + x * es, p->dtype, swap)))
                continue;
            size_t r = x; /* the storage index as (l, h, i, j) */
            int c[4]; /* C order: j fastest; Fortran: l fastest */
            const int dims[4] = {p->L, p->H, p->Tq, p->Tk};
            for (int d = 0; d < 4; d++) {
                int axis = p->fortran ? d : 3 - d;
                c[axis] = (int)(r % (size_t)dims[axis]);
                r /= (size_t)dims[axis];
            }
            if (pos) {
                pos[0] = l0 + c[0];
                pos[1] = c[1];
                pos[2] = c[2];
                pos[3] = c[3];
            }
            return 1;
        }
        l0 += p->L;
    }
    return 0;
}
