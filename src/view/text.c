/* Fonts and the text cache: strings are rendered once into textures keyed by
 * (size, colour, text) and reused every frame; the cache empties itself
 * when full. Fonts are opened per pixel size on first use, from the bytes
 * or paths the app gives (ViewFonts: this file reads no file itself).
 * Characters the main font lacks (Chinese, Japanese, Korean in DejaVu Sans)
 * are drawn with the fallback font the app names for them, run by run. */
#include "text.h"

#include "attnviz/tokenizer.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 12
#define CACHE_SLOTS 4096 /* power of two */
#define CACHE_MAX 3000   /* flush when this many are held */

typedef struct Entry {
    char *text;
    int px;
    uint32_t rgba;
    SDL_Texture *tex;
    int w, h;
} Entry;

#define SIZE_SLOTS 8192 /* measured strings, power of two */

typedef struct SizeEntry {
    char *text;
    int px, w, h;
} SizeEntry;

/* A font file (a face of it: .ttc files hold several), opened per size;
 * fonts[0] is open from the start. */
typedef struct Face {
    char *path;
    const void *data;          /* the whole font file (the app's), opened at each size */
    size_t size;
    long index;                /* the face in a collection */
    int sizes[MAX_SIZES];
    TTF_Font *fonts[MAX_SIZES];
    int n_sizes;
} Face;

#define MAX_FACES 8     /* the main font and the fallbacks */
#define MISS_SLOTS 512  /* characters no font has, power of two */

/* A character the main font lacks and the fallback face drawing it. */
typedef struct Chosen {
    unsigned cp1; /* code point + 1; 0: a free slot */
    int face;
} Chosen;

struct TextCache {
    SizeEntry sizes_cache[SIZE_SLOTS];
    int sizes_used;
    SDL_Renderer *r;
    Face faces[MAX_FACES];     /* faces[0]: the main font */
    int n_faces;
    ViewFonts fonts;           /* where the fallbacks come from */
    unsigned miss[MISS_SLOTS]; /* code point + 1 of characters no font has */
    int n_miss;
    Chosen chosen[MISS_SLOTS]; /* the face the app named for a character */
    int n_chosen;
    Entry slots[CACHE_SLOTS];
    int used;
};

static TTF_Font *open_face(const Face *f, int px)
{
    if (f->data) {
        SDL_RWops *rw = SDL_RWFromConstMem(f->data, (int)f->size);
        return rw ? TTF_OpenFontIndexRW(rw, 1, px, f->index) : NULL;
    }
    return TTF_OpenFontIndex(f->path, px, f->index);
}

TextCache *text_create(SDL_Renderer *r, const ViewFonts *fonts, AttnErr *err)
{
    if (!TTF_WasInit() && TTF_Init() != 0) {
        attn_err_set(err, ATTN_E_IO, NULL, 0, "cannot start SDL_ttf: %s", TTF_GetError());
        return NULL;
    }
    if (!fonts || !fonts->path) {
        attn_err_set(err, ATTN_E_IO, NULL, 0, "no font given");
        return NULL;
    }
    const char *font_path = fonts->path;
    Face main = {0};
    main.path = (char *)font_path;
    main.data = fonts->data;
    main.size = fonts->data ? fonts->size : 0;
    TTF_Font *probe = open_face(&main, 14);
    if (!probe) {
        attn_err_set(err, ATTN_E_IO, font_path, 0,
                     "cannot open font: %s (use --font FILE with a .ttf file, "
                     "or sudo apt-get install fonts-dejavu-core)", TTF_GetError());
        return NULL;
    }
    TextCache *t = calloc(1, sizeof *t);
    if (!t || !(main.path = strdup(font_path))) {
        free(t);
        TTF_CloseFont(probe);
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        return NULL;
    }
    main.sizes[0] = 14;
    main.fonts[0] = probe;
    main.n_sizes = 1;
    t->faces[0] = main;
    t->n_faces = 1;
    t->fonts = *fonts;
    t->r = r;
    return t;
}

static void flush_sizes(TextCache *t)
{
    for (int i = 0; i < SIZE_SLOTS; i++) {
        free(t->sizes_cache[i].text);
        t->sizes_cache[i].text = NULL;
    }
    t->sizes_used = 0;
}

static void flush(TextCache *t)
{
    for (int i = 0; i < CACHE_SLOTS; i++) {
        Entry *e = &t->slots[i];
        if (e->text) {
            free(e->text);
            SDL_DestroyTexture(e->tex);
            memset(e, 0, sizeof *e);
        }
    }
    t->used = 0;
}

void text_destroy(TextCache *t)
{
    if (!t)
        return;
    flush(t);
    flush_sizes(t);
    for (int k = 0; k < t->n_faces; k++) {
        Face *f = &t->faces[k];
        for (int i = 0; i < f->n_sizes; i++)
            TTF_CloseFont(f->fonts[i]);
        free(f->path);
    }
    free(t);
}

void text_fonts_changed(TextCache *t)
{
    memset(t->miss, 0, sizeof t->miss);
    t->n_miss = 0;
    memset(t->chosen, 0, sizeof t->chosen);
    t->n_chosen = 0;
    flush(t);
    flush_sizes(t);
}

/* Face k at px pixels. */
static TTF_Font *face_at(TextCache *t, int k, int px)
{
    Face *f = &t->faces[k];
    if (px < 4)
        px = 4;
    if (px > 400)
        px = 400;
    for (int i = 0; i < f->n_sizes; i++)
        if (f->sizes[i] == px)
            return f->fonts[i];
    if (f->n_sizes == MAX_SIZES) {
        /* sizes change only when the UI scale does: start over */
        flush(t);
        for (int i = 1; i < f->n_sizes; i++)
            TTF_CloseFont(f->fonts[i]);
        f->n_sizes = 1;
    }
    TTF_Font *font = open_face(f, px);
    if (!font)
        return f->fonts[0];
    f->sizes[f->n_sizes] = px;
    f->fonts[f->n_sizes++] = font;
    return font;
}

static TTF_Font *font_at(TextCache *t, int px)
{
    return face_at(t, 0, px);
}

/* ---- fallback fonts ------------------------------------------------------ */

/* The face the app names for cp (the platform's choice: fontconfig's on
 * the desktop), opened now or one already open, or -1. Fallback fonts are
 * opened by SDL_ttf from the file the app names, not read whole: a CJK
 * collection is 20 MB of which a label uses a few glyphs. The app's
 * choice, not the first open face that has cp: Symbola has 中 too, and
 * which of the two was opened first depends on what was drawn first (a
 * page's fonts arriving later, while the text is already there). */
static int add_fallback(TextCache *t, unsigned cp)
{
    char path[4096];
    long index = 0;
    if (!t->fonts.fallback || t->fonts.fallback(t->fonts.ctx, cp, path, sizeof path, &index) < 0)
        return -1;
    for (int k = 0; k < t->n_faces; k++)
        if (t->faces[k].index == index && strcmp(t->faces[k].path, path) == 0)
            return k > 0 && TTF_GlyphIsProvided32(t->faces[k].fonts[0], cp) ? k : -1;
    if (t->n_faces == MAX_FACES)
        return -1;
    Face *f = &t->faces[t->n_faces];
    memset(f, 0, sizeof *f);
    f->index = index;
    f->path = path;
    TTF_Font *font = open_face(f, 14);
    if (!font || !TTF_GlyphIsProvided32(font, cp) || !(f->path = strdup(path))) {
        if (font)
            TTF_CloseFont(font);
        memset(f, 0, sizeof *f);
        return -1;
    }
    f->sizes[0] = 14;
    f->fonts[0] = font;
    f->n_sizes = 1;
    return t->n_faces++;
}

static int missed(TextCache *t, unsigned cp, int add)
{
    unsigned h = (cp * 2654435761u) & (MISS_SLOTS - 1);
    for (int probe = 0; probe < MISS_SLOTS; probe++) {
        unsigned *e = &t->miss[(h + (unsigned)probe) & (MISS_SLOTS - 1)];
        if (*e == cp + 1)
            return 1;
        if (*e == 0) {
            if (add && t->n_miss < MISS_SLOTS / 2) {
                *e = cp + 1;
                t->n_miss++;
            }
            return 0;
        }
    }
    return 0;
}

/* The slot of cp in t->chosen: its own, or the free one where it would go
 * (NULL when the table is full). */
static Chosen *chosen_slot(TextCache *t, unsigned cp)
{
    unsigned h = (cp * 2654435761u) & (MISS_SLOTS - 1);
    for (int probe = 0; probe < MISS_SLOTS; probe++) {
        Chosen *c = &t->chosen[(h + (unsigned)probe) & (MISS_SLOTS - 1)];
        if (c->cp1 == cp + 1 || c->cp1 == 0)
            return c;
    }
    return NULL;
}

/* The face that draws cp: the main font when it has it (or when no font
 * has it: its missing-glyph box then), else the fallback the app names
 * for it (asked once a character; with a full table, the first open
 * fallback that has it). */
static int face_for(TextCache *t, unsigned cp)
{
    if (cp < 0x80 || TTF_GlyphIsProvided32(t->faces[0].fonts[0], cp))
        return 0;
    Chosen *c = chosen_slot(t, cp);
    if (c && c->cp1)
        return c->face;
    if (missed(t, cp, 0))
        return 0;
    int k = add_fallback(t, cp);
    if (k < 0 && !c) /* the table full: any open face that has it */
        for (int j = 1; j < t->n_faces && k < 0; j++)
            if (TTF_GlyphIsProvided32(t->faces[j].fonts[0], cp))
                k = j;
    if (k < 0) {
        missed(t, cp, 1);
        return 0;
    }
    if (c && t->n_chosen < MISS_SLOTS / 2) {
        *c = (Chosen){cp + 1, k};
        t->n_chosen++;
    }
    return k;
}

/* Length in bytes of the run at s drawn by one face (*face). */
static size_t next_run(TextCache *t, const char *s, int *face)
{
    size_t len = strlen(s), i = 0;
    *face = -1;
    while (i < len) {
        unsigned cp;
        int n = tok_utf8_decode((const unsigned char *)s + i, len - i, &cp);
        int k = n ? face_for(t, cp) : 0;
        if (*face >= 0 && k != *face)
            break;
        *face = k;
        i += (size_t)(n ? n : 1);
    }
    return i;
}

/* Whether all of s is drawn by the main font (the common case: one call). */
static int main_font_only(TextCache *t, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p && *p < 0x80)
        p++;
    if (!*p)
        return 1;
    int face;
    return next_run(t, s, &face) == strlen(s) && face == 0;
}

/* Width of s at px, run by run; rendering copies each run into buf. */
static int runs_width(TextCache *t, int px, const char *s, char *buf)
{
    int w = 0;
    for (size_t i = 0; s[i];) {
        int face, rw = 0;
        size_t n = next_run(t, s + i, &face);
        memcpy(buf, s + i, n);
        buf[n] = '\0';
        TTF_SizeUTF8(face_at(t, face, px), buf, &rw, NULL);
        w += rw;
        i += n;
    }
    return w;
}

/* s drawn run by run into one surface as high as a line of the main font,
 * the runs on its baseline. */
static SDL_Surface *render_runs(TextCache *t, int px, SDL_Color c, const char *s)
{
    char *buf = malloc(strlen(s) + 1);
    if (!buf)
        return NULL;
    TTF_Font *main = font_at(t, px);
    int w = runs_width(t, px, s, buf), asc = TTF_FontAscent(main);
    SDL_Surface *out = SDL_CreateRGBSurfaceWithFormat(0, w > 0 ? w : 1, TTF_FontHeight(main),
                                                      32, SDL_PIXELFORMAT_ARGB8888);
    int x = 0;
    for (size_t i = 0; out && s[i];) {
        int face, rw = 0;
        size_t n = next_run(t, s + i, &face);
        memcpy(buf, s + i, n);
        buf[n] = '\0';
        TTF_Font *f = face_at(t, face, px);
        TTF_SizeUTF8(f, buf, &rw, NULL);
        SDL_Surface *run = TTF_RenderUTF8_Blended(f, buf, c);
        if (run) {
            SDL_Rect dst = {x, asc - TTF_FontAscent(f), run->w, run->h};
            SDL_SetSurfaceBlendMode(run, SDL_BLENDMODE_NONE);
            SDL_BlitSurface(run, NULL, out, &dst);
            SDL_FreeSurface(run);
        }
        x += rw;
        i += n;
    }
    free(buf);
    return out;
}

static SDL_Surface *render_text(TextCache *t, int px, SDL_Color c, const char *s)
{
    if (main_font_only(t, s))
        return TTF_RenderUTF8_Blended(font_at(t, px), s, c);
    return render_runs(t, px, c, s);
}

static void size_text(TextCache *t, int px, const char *s, int *w, int *h)
{
    if (main_font_only(t, s)) {
        TTF_SizeUTF8(font_at(t, px), s, w, h);
        return;
    }
    char *buf = malloc(strlen(s) + 1);
    *w = buf ? runs_width(t, px, s, buf) : 0;
    *h = TTF_FontHeight(font_at(t, px));
    free(buf);
}

static uint32_t hash(const char *s, int px, uint32_t rgba)
{
    uint32_t h = 2166136261u ^ (uint32_t)px * 16777619u ^ rgba;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static Entry *lookup(TextCache *t, int px, SDL_Color c, const char *s)
{
    uint32_t rgba = (uint32_t)c.r << 24 | (uint32_t)c.g << 16 | (uint32_t)c.b << 8 | c.a;
    uint32_t h = hash(s, px, rgba);
    for (int probe = 0; probe < CACHE_SLOTS; probe++) {
        Entry *e = &t->slots[(h + (uint32_t)probe) & (CACHE_SLOTS - 1)];
        if (!e->text)
            break;
        if (e->px == px && e->rgba == rgba && strcmp(e->text, s) == 0)
            return e;
    }
    if (t->used >= CACHE_MAX)
        flush(t);
    SDL_Surface *surf = render_text(t, px, c, s);
    if (!surf)
        return NULL;
    SDL_Texture *tex = SDL_CreateTextureFromSurface(t->r, surf);
    int w = surf->w, hh = surf->h;
    SDL_FreeSurface(surf);
    if (!tex)
        return NULL;
    char *copy = strdup(s);
    if (!copy) {
        SDL_DestroyTexture(tex);
        return NULL;
    }
    for (int probe = 0;; probe++) {
        Entry *e = &t->slots[(h + (uint32_t)probe) & (CACHE_SLOTS - 1)];
        if (!e->text) {
            e->text = copy;
            e->px = px;
            e->rgba = rgba;
            e->tex = tex;
            e->w = w;
            e->h = hh;
            t->used++;
            return e;
        }
    }
}

static struct {
    TextBox *boxes;
    int max, *n;
} rec;

void text_record(TextBox *boxes, int max, int *n)
{
    rec.boxes = boxes;
    rec.max = max;
    rec.n = n;
    if (n)
        *n = 0;
}

/* The box of text drawn at dst (rotated by angle about centre), cut to
 * the clip rectangle, into the record. */
static void record(SDL_Renderer *r, SDL_Rect dst, double angle, SDL_Point centre, const char *s)
{
    SDL_Rect b = dst, clip;
    float qx[4], qy[4];
    double a = angle * 3.14159265358979323846 / 180.0, ca = cos(a), sa = sin(a);
    double cx = dst.x + centre.x, cy = dst.y + centre.y, x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
    for (int k = 0; k < 4; k++) { /* corners in order round the box, rotated */
        double px = dst.x + (k == 1 || k == 2 ? dst.w : 0) - cx, py = dst.y + (k >= 2 ? dst.h : 0) - cy;
        qx[k] = (float)(cx + px * ca - py * sa);
        qy[k] = (float)(cy + px * sa + py * ca);
        x0 = fmin(x0, qx[k]), x1 = fmax(x1, qx[k]), y0 = fmin(y0, qy[k]), y1 = fmax(y1, qy[k]);
    }
    if (angle != 0.0) /* the rotated corners' bounding box */
        b = (SDL_Rect){(int)floor(x0), (int)floor(y0), (int)ceil(x1 - x0), (int)ceil(y1 - y0)};
    SDL_RenderGetClipRect(r, &clip);
    if (!SDL_RectEmpty(&clip) && !SDL_IntersectRect(&b, &clip, &b))
        return;
    if (angle == 0.0) /* the clipped box's corners */
        for (int k = 0; k < 4; k++) {
            qx[k] = (float)(b.x + (k == 1 || k == 2 ? b.w : 0));
            qy[k] = (float)(b.y + (k >= 2 ? b.h : 0));
        }
    int k = (*rec.n)++;
    if (k < rec.max) {
        memcpy(rec.boxes[k].qx, qx, sizeof qx);
        memcpy(rec.boxes[k].qy, qy, sizeof qy);
        rec.boxes[k].box = b;
        rec.boxes[k].angle = angle;
        snprintf(rec.boxes[k].text, sizeof rec.boxes[k].text, "%s", s);
    }
}

int text_draw(TextCache *t, int px, SDL_Color c, const char *s, int x, int y,
              int align, double angle)
{
    if (!s || !*s)
        return 0;
    Entry *e = lookup(t, px, c, s);
    if (!e)
        return 0;
    SDL_Rect dst = {x, y, e->w, e->h};
    if (align == 1)
        dst.x -= e->w / 2;
    else if (align == 2)
        dst.x -= e->w;
    SDL_Point centre = {align == 2 ? e->w : 0, 0};
    if (rec.boxes)
        record(t->r, dst, angle, centre, s);
    if (angle != 0.0) {
        SDL_RenderCopyEx(t->r, e->tex, NULL, &dst, angle, &centre, SDL_FLIP_NONE);
    } else {
        SDL_RenderCopy(t->r, e->tex, NULL, &dst);
    }
    return e->w;
}

/* Measured sizes are cached too: layout asks for every label every frame. */
void text_size(TextCache *t, int px, const char *s, int *w, int *h)
{
    int ww = 0, hh = 0;
    if (s && *s) {
        uint32_t k = hash(s, px, 0);
        SizeEntry *e = NULL;
        for (int probe = 0; probe < SIZE_SLOTS; probe++) {
            SizeEntry *c = &t->sizes_cache[(k + (uint32_t)probe) & (SIZE_SLOTS - 1)];
            if (!c->text) {
                e = c;
                break;
            }
            if (c->px == px && strcmp(c->text, s) == 0) {
                if (w)
                    *w = c->w;
                if (h)
                    *h = c->h;
                return;
            }
        }
        size_text(t, px, s, &ww, &hh);
        if (t->sizes_used >= SIZE_SLOTS * 3 / 4) {
            flush_sizes(t);
            e = &t->sizes_cache[k & (SIZE_SLOTS - 1)];
        }
        if (e && (e->text = strdup(s)) != NULL) {
            e->px = px;
            e->w = ww;
            e->h = hh;
            t->sizes_used++;
        }
    } else {
        hh = TTF_FontHeight(font_at(t, px));
    }
    if (w)
        *w = ww;
    if (h)
        *h = hh;
}

int text_line_height(TextCache *t, int px)
{
    return TTF_FontHeight(font_at(t, px));
}

void text_set_renderer(TextCache *t, SDL_Renderer *r)
{
    flush(t);
    t->r = r;
}
