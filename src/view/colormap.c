/* Colour maps as 9 control points each, interpolated linearly in sRGB with
 * cglm. The control points are the published maps sampled at t = k/8. */
#include "attnviz/colormap.h"

#include <cglm/cglm.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define N_STOPS 9

static const uint32_t stops[CMAP_SEQUENTIAL_COUNT + 1][N_STOPS] = {
    [CMAP_VIRIDIS] = {0x440154, 0x472c7a, 0x3b518b, 0x2c718e, 0x21908d,
                      0x27ad81, 0x5cc863, 0xaadc32, 0xfde725},
    [CMAP_CIVIDIS] = {0x00224e, 0x123570, 0x3b496c, 0x575d6d, 0x707173,
                      0x8a8678, 0xa59c74, 0xc3b369, 0xfee838},
    [CMAP_MAGMA] = {0x000004, 0x1c1044, 0x4f127b, 0x812581, 0xb5367a,
                    0xe55064, 0xfb8761, 0xfec287, 0xfcfdbf},
    [CMAP_GREYS] = {0xffffff, 0xf0f0f0, 0xd9d9d9, 0xbdbdbd, 0x969696,
                    0x737373, 0x525252, 0x252525, 0x000000},
    [CMAP_DIVERGING] = {0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7,
                        0xfddbc7, 0xf4a582, 0xd6604d, 0xb2182b},
};

static const char *const names[] = {"viridis", "cividis", "magma", "greys",
                                    "diverging"};

static void unpack(uint32_t c, vec3 out)
{
    out[0] = (float)((c >> 16) & 0xFF);
    out[1] = (float)((c >> 8) & 0xFF);
    out[2] = (float)(c & 0xFF);
}

#define LUT_N COLORMAP_STEPS

/* Exact colour at t from the control points. */
static Rgb interpolate(ColormapId id, float t)
{
    float x = t * (N_STOPS - 1);
    int k = (int)x;
    if (k >= N_STOPS - 1)
        k = N_STOPS - 2;
    vec3 a, b, c;
    unpack(stops[id][k], a);
    unpack(stops[id][k + 1], b);
    glm_vec3_lerp(a, b, x - (float)k, c);
    Rgb out = {(uint8_t)lroundf(c[0]), (uint8_t)lroundf(c[1]),
               (uint8_t)lroundf(c[2])};
    return out;
}

/* Every caller (heatmap texture, SVG, tests) goes through the same table of
 * LUT_N + 1 colours, so they agree exactly and a pixel costs a lookup. */
Rgb colormap_rgb(ColormapId id, float t)
{
    static Rgb lut[CMAP_DIVERGING + 1][LUT_N + 1];
    static int ready[CMAP_DIVERGING + 1];
    if ((int)id < 0 || id > CMAP_DIVERGING)
        id = CMAP_VIRIDIS;
    if (!ready[id]) {
        for (int k = 0; k <= LUT_N; k++)
            lut[id][k] = interpolate(id, (float)k / LUT_N);
        ready[id] = 1;
    }
    return lut[id][colormap_index(t)];
}

int colormap_index(float t)
{
    if (!(t > 0.0f))
        t = 0.0f;
    if (t > 1.0f)
        t = 1.0f;
    /* lroundf(t · LUT_N) for t in [0, 1], without the libm call: the product
     * is exact (LUT_N is a power of two) and so is y − i */
    float y = t * LUT_N;
    int i = (int)y;
    return i + (y - (float)i >= 0.5f);
}

/* Four floats: one SSE register, the width every x86-64 CPU has (a wider
 * generic vector would be split and partly done lane by lane). */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

void colormap_scale_texels(const ColorScale *s, const float *v, int n,
                           const uint32_t *lut, uint32_t *out)
{
    float lo = s->lo, span = s->hi - s->lo;
    int32_t idx[256];
    for (int j0 = 0; j0 < n; j0 += 256) {
        int m = n - j0 < 256 ? n - j0 : 256, j = 0;
        /* colormap_scale_t and colormap_index, four values at a time with
         * the same operations; then the table lookups */
        v4f lo4 = {lo, lo, lo, lo}, sp4 = {span, span, span, span};
        v4f zero = {0, 0, 0, 0}, one = {1, 1, 1, 1}, half = one * 0.5f;
        v4f n4 = one * (float)LUT_N;
        for (; j + 4 <= m; j += 4) {
            v4f x;
            memcpy(&x, v + j0 + j, sizeof x);
            v4f t = (x - lo4) / sp4;
            t = (v4f)((v4i)t & (t > zero));              /* NaN and t <= 0 → 0 */
            v4i lt1 = t < one;
            t = (v4f)(((v4i)t & lt1) | ((v4i)one & ~lt1)); /* t >= 1 → 1 */
            v4f y = t * n4;
            v4i i = __builtin_convertvector(y, v4i);
            i -= y - __builtin_convertvector(i, v4f) >= half; /* true is -1 */
            memcpy(idx + j, &i, sizeof i);
        }
        for (; j < m; j++)
            idx[j] = colormap_index((v[j0 + j] - lo) / span);
        for (j = 0; j < m; j++)
            out[j0 + j] = lut[idx[j]];
    }
}

const char *colormap_name(ColormapId id)
{
    return (int)id >= 0 && id <= CMAP_DIVERGING ? names[id] : "?";
}

int colormap_from_name(const char *name)
{
    for (int i = 0; i < CMAP_SEQUENTIAL_COUNT; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

float colormap_invert(ColormapId id, Rgb c)
{
    float best_t = 0.0f;
    int best = 1 << 30;
    for (int i = 0; i <= 1024; i++) {
        float t = (float)i / 1024.0f;
        Rgb s = colormap_rgb(id, t);
        int dr = s.r - c.r, dg = s.g - c.g, db = s.b - c.b;
        int e = dr * dr + dg * dg + db * db;
        if (e < best) {
            best = e;
            best_t = t;
        }
    }
    return best_t;
}

Rgb colormap_text_on(Rgb c)
{
    /* relative luminance of the background, sRGB approximated */
    float y = 0.2126f * c.r + 0.7152f * c.g + 0.0722f * c.b;
    Rgb black = {20, 20, 20}, white = {250, 250, 250};
    return y > 140.0f ? black : white;
}

static const char *const mode_names[CSCALE_COUNT] = {"fixed", "max", "row"};

const char *colormap_mode_name(ColorScaleMode mode)
{
    return (int)mode >= 0 && mode < CSCALE_COUNT ? mode_names[mode] : "?";
}

int colormap_mode_from_name(const char *name)
{
    for (int i = 0; name && i < CSCALE_COUNT; i++)
        if (strcmp(name, mode_names[i]) == 0)
            return i;
    return -1;
}

/* The largest unmasked value (|value| with absolute) of rows [i0, i1),
 * or 0 when there is none above 0. */
static float largest(const AttnMap *m, int i0, int i1, int absolute)
{
    float a = 0.0f;
    for (int i = i0; m->v && i < i1; i++) {
        const float *row = m->v + (size_t)i * m->stride;
        const unsigned char *mk = m->mask ? m->mask + (size_t)i * m->Tk : NULL;
        int n = attn_causal_row_len(m->causal, i, m->Tk);
        for (int j = 0; j < n; j++) {
            float x = absolute ? fabsf(row[j]) : row[j];
            /* NaN and ±inf are skipped: x <= FLT_MAX is false for both */
            a = x > a && x <= FLT_MAX && !(mk && mk[j]) ? x : a;
        }
    }
    return a;
}

int colormap_per_row(const AttnMap *m, ColorScaleMode mode)
{
    return mode == CSCALE_ROW && !attn_map_kind_diverging(m->kind);
}

ColorScale colormap_scale_mode(const AttnMap *m, ColormapId sequential, ColorScaleMode mode)
{
    int diverging = attn_map_kind_diverging(m->kind);
    ColorScale s = {diverging ? CMAP_DIVERGING : sequential, 0.0f, 1.0f, colormap_per_row(m, mode)};
    if (s.per_row)
        return s;
    float a = largest(m, 0, m->Tq, diverging);
    /* weights are at most 1: numbers above run to theirs; norms have no
     * fixed top: 0 to the map's max */
    if (!diverging && mode == CSCALE_FIXED && m->kind != ATTN_MAP_NORMS)
        a = a > 1.0f ? a : 1.0f;
    if (!(a > 1e-12f))
        a = 1.0f;
    s.lo = diverging ? -a : 0.0f;
    s.hi = a;
    return s;
}

ColorScale colormap_scale_for_map(const AttnMap *m, ColormapId sequential)
{
    return colormap_scale_mode(m, sequential, CSCALE_MAX);
}

ColorScale colormap_row_scale(const ColorScale *s, const AttnMap *m, int i)
{
    if (!s->per_row)
        return *s;
    float a = i >= 0 && i < m->Tq ? largest(m, i, i + 1, 0) : 0.0f;
    ColorScale r = {s->id, 0.0f, a > 1e-12f ? a : 1.0f, 0};
    return r;
}

Rgb colormap_cell_rgb(const ColorScale *s, const AttnMap *m, int i, int j)
{
    ColorScale r = colormap_row_scale(s, m, i);
    return colormap_scale_rgb(&r, attn_map_at(m, i, j));
}

ColorScale colormap_scale_for(const float *M, int rows, int cols, int causal,
                              int diverging, ColormapId sequential)
{
    AttnMap m = attn_map_make(M, rows, cols, NULL, NULL,
                              diverging ? ATTN_MAP_SCORES : ATTN_MAP_WEIGHTS);
    m.causal = causal;
    return colormap_scale_for_map(&m, sequential);
}

float colormap_scale_t(const ColorScale *s, float v)
{
    float t = (v - s->lo) / (s->hi - s->lo);
    return t != t ? 0.0f : t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

Rgb colormap_scale_rgb(const ColorScale *s, float v)
{
    return colormap_rgb(s->id, colormap_scale_t(s, v));
}

int colormap_ticks(double lo, double hi, int max_n, double *v, int *decimals)
{
    *decimals = 0;
    if (!(lo < hi) || !isfinite(lo) || !isfinite(hi) || !isfinite(hi - lo))
        return 0;
    max_n = max_n < 2 ? 2 : max_n > COLORMAP_MAX_TICKS ? COLORMAP_MAX_TICKS : max_n;
    static const double mult[3] = {1.0, 2.0, 5.0};
    /* from a step below span / max_n upwards: the first that fits */
    int e = (int)floor(log10((hi - lo) / max_n)) - 1;
    double step = 0.0, first = 0.0;
    int n = 0;
    for (int k = 0; k < 3 * 12; k++) {
        step = mult[k % 3] * pow(10.0, e + k / 3);
        first = ceil(lo / step - 1e-6);
        double last = floor(hi / step + 1e-6);
        n = last - first + 1 > 1e6 ? 1000000 : (int)(last - first + 1);
        if (n <= max_n)
            break;
    }
    for (int k = 0; k < n; k++) {
        v[k] = (first + k) * step;
        v[k] = v[k] == 0.0 ? 0.0 : v[k]; /* no -0 */
    }
    int d = (int)-floor(log10(step) + 1e-9);
    *decimals = d < 0 ? 0 : d > 12 ? 12 : d;
    return n;
}

void colormap_tick_label(double v, int decimals, char *buf, size_t n)
{
    snprintf(buf, n, "%.*f", decimals, v);
    /* "0.00" and "-0.00" are 0 */
    size_t sign = buf[0] == '-';
    if (strspn(buf + sign, "0.") == strlen(buf + sign))
        snprintf(buf, n, "0");
}

/* "0.00" or "-0.0" (all zeros after an optional sign) becomes "0", keeping
 * the decimals: "-0.00" → "0.00". */
static void drop_negative_zero(char *buf)
{
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
        memmove(buf, buf + 1, strlen(buf));
}

void colormap_cell_label(const ColorScale *s, float v, char *buf, size_t n)
{
    float a = fmaxf(fabsf(s->lo), fabsf(s->hi));
    int d = s->id != CMAP_DIVERGING ? 2 : a >= 100.0f ? 0 : a >= 1.0f ? 1 : 2;
    snprintf(buf, n, "%.*f", d, (double)v);
    drop_negative_zero(buf);
}


void colormap_lut(ColormapId id, uint32_t *lut)
{
    for (int k = 0; k <= COLORMAP_STEPS; k++) {
        Rgb c = colormap_rgb(id, (float)k / COLORMAP_STEPS);
        lut[k] = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
    }
}

void colormap_map_texels(const ColorScale *s, const AttnMap *map, const uint32_t *lut,
                         Rgb mask, uint32_t *out, int pitch)
{
    uint32_t mk = (uint32_t)mask.r << 16 | (uint32_t)mask.g << 8 | mask.b;
    for (int i = 0; i < map->Tq; i++) {
        uint32_t *row = out + (size_t)i * (size_t)pitch;
        int nv = attn_causal_row_len(map->causal, i, map->Tk);
        ColorScale rs = colormap_row_scale(s, map, i);
        colormap_scale_texels(&rs, map->v + (size_t)i * map->stride, nv, lut, row);
        for (int j = nv; j < map->Tk; j++)
            row[j] = mk;
        for (int j = 0; map->mask && j < nv; j++)
            if (map->mask[(size_t)i * map->Tk + j])
                row[j] = mk;
    }
}
