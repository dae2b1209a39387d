/* Fonts and the text cache: strings are rendered once into textures keyed by
 * (size, colour, text) and reused every frame; the cache empties itself
 * when full. Fonts are opened per pixel size on first use. */
#include "text.h"

#include "attnviz/io.h"

#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int find_with_fontconfig(char *out, size_t n);

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

struct TextCache {
    SizeEntry sizes_cache[SIZE_SLOTS];
    int sizes_used;
    SDL_Renderer *r;
    char *font_path;
    void *font_data;           /* the whole font file, opened at each size */
    size_t font_size;
    int sizes[MAX_SIZES];
    TTF_Font *fonts[MAX_SIZES];
    int n_sizes;
    Entry slots[CACHE_SLOTS];
    int used;
};

/* Where the font fontconfig found last time is remembered: starting
 * fontconfig (parsing its configuration) costs a third of a headless
 * export. $XDG_CACHE_HOME/attnviz/font, or ~/.cache/attnviz/font. */
static int cache_path(char *out, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        return snprintf(out, n, "%s/attnviz/font", xdg) < (int)n ? 0 : -1;
    if (home && *home)
        return snprintf(out, n, "%s/.cache/attnviz/font", home) < (int)n ? 0 : -1;
    return -1;
}

static int read_cached_font(char *out, size_t n)
{
    char path[4096];
    struct stat st;
    if (cache_path(path, sizeof path) < 0)
        return -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    out[strcspn(out, "\n")] = '\0';
    return out[0] == '/' && stat(out, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -1;
}

static int write_font_line(FILE *f, void *font)
{
    return fprintf(f, "%s\n", (const char *)font) > 0 ? 0 : -ATTN_E_IO;
}

static void write_cached_font(const char *font)
{
    char path[4096];
    if (cache_path(path, sizeof path) < 0)
        return;
    /* create the two folders; errors only mean no cache */
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char *parent = strrchr(path, '/');
    if (parent) {
        *parent = '\0';
        mkdir(path, 0700);
        *parent = '/';
    }
    mkdir(path, 0700);
    *slash = '/';
    AttnErr ignore;
    io_write_atomic(path, write_font_line, (void *)font, &ignore);
}

/* The lookup runs once a process; fontconfig is then shut down again (it is
 * used for nothing else), so it holds no memory for the rest of the run. */
int text_find_font(char *out, size_t n)
{
    static char found[4096];
    static int state; /* 0 not looked up, 1 found, -1 none */
    if (state == 0 && read_cached_font(found, sizeof found) == 0)
        state = 1;
    if (state == 0) {
        state = find_with_fontconfig(found, sizeof found) == 0 ? 1 : -1;
        FcFini();
        if (state == 1)
            write_cached_font(found);
    }
    if (state < 0 || strlen(found) >= n)
        return -1;
    memcpy(out, found, strlen(found) + 1);
    return 0;
}

static int find_with_fontconfig(char *out, size_t n)
{
    int rc = -1;
    if (!FcInit())
        return -1;
    FcPattern *pat = FcNameParse((const FcChar8 *)"DejaVu Sans:style=Book");
    if (!pat)
        return -1;
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    FcResult res;
    FcPattern *match = FcFontMatch(NULL, pat, &res);
    if (match) {
        FcChar8 *file = NULL;
        if (FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch && file) {
            size_t len = strlen((const char *)file);
            /* only scalable fonts SDL_ttf can open */
            if (len > 4 && len < n && (strcmp((const char *)file + len - 4, ".ttf") == 0 ||
                                       strcmp((const char *)file + len - 4, ".otf") == 0)) {
                memcpy(out, file, len + 1);
                rc = 0;
            }
        }
        FcPatternDestroy(match);
    }
    FcPatternDestroy(pat);
    return rc;
}

/* The font file in memory (FreeType then parses it from there at every
 * size, instead of reading it with a thousand small seeks and reads: a
 * quarter of a headless export's system calls), or NULL. */
static char *slurp(const char *path, size_t *size)
{
    char *data;
    AttnErr ignore;
    if (io_read_file(path, 64L << 20, &data, size, &ignore) < 0)
        return NULL;
    if (*size == 0) {
        free(data);
        return NULL;
    }
    return data;
}

static TTF_Font *open_font(const char *path, const void *data, size_t size, int px)
{
    if (data) {
        SDL_RWops *rw = SDL_RWFromConstMem(data, (int)size);
        return rw ? TTF_OpenFontRW(rw, 1, px) : NULL;
    }
    return TTF_OpenFont(path, px);
}

TextCache *text_create(SDL_Renderer *r, const char *font_path, AttnErr *err)
{
    char found[4096];
    if (!TTF_WasInit() && TTF_Init() != 0) {
        attn_err_set(err, ATTN_E_IO, NULL, 0, "cannot start SDL_ttf: %s", TTF_GetError());
        return NULL;
    }
    if (!font_path) {
        if (text_find_font(found, sizeof found) < 0) {
            attn_err_set(err, ATTN_E_IO, NULL, 0,
                         "no font found: install DejaVu Sans "
                         "(sudo apt-get install fonts-dejavu-core) or use --font FILE");
            return NULL;
        }
        font_path = found;
    }
    size_t size = 0;
    void *data = slurp(font_path, &size);
    TTF_Font *probe = open_font(font_path, data, size, 14);
    if (!probe) {
        attn_err_set(err, ATTN_E_IO, font_path, 0,
                     "cannot open font: %s (use --font FILE with a .ttf file, "
                     "or sudo apt-get install fonts-dejavu-core)", TTF_GetError());
        free(data);
        return NULL;
    }
    TextCache *t = calloc(1, sizeof *t);
    if (!t || !(t->font_path = strdup(font_path))) {
        free(t);
        TTF_CloseFont(probe);
        free(data);
        attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        return NULL;
    }
    t->font_data = data;
    t->font_size = size;
    t->r = r;
    t->sizes[0] = 14;
    t->fonts[0] = probe;
    t->n_sizes = 1;
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
    for (int i = 0; i < t->n_sizes; i++)
        TTF_CloseFont(t->fonts[i]);
    free(t->font_data); /* after the fonts that read from it */
    free(t->font_path);
    free(t);
}

static TTF_Font *font_at(TextCache *t, int px)
{
    if (px < 4)
        px = 4;
    if (px > 400)
        px = 400;
    for (int i = 0; i < t->n_sizes; i++)
        if (t->sizes[i] == px)
            return t->fonts[i];
    if (t->n_sizes == MAX_SIZES) {
        /* sizes change only when the UI scale does: start over */
        flush(t);
        for (int i = 1; i < t->n_sizes; i++)
            TTF_CloseFont(t->fonts[i]);
        t->n_sizes = 1;
    }
    TTF_Font *f = open_font(t->font_path, t->font_data, t->font_size, px);
    if (!f)
        return t->fonts[0];
    t->sizes[t->n_sizes] = px;
    t->fonts[t->n_sizes++] = f;
    return f;
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
    TTF_Font *f = font_at(t, px);
    SDL_Surface *surf = TTF_RenderUTF8_Blended(f, s, c);
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
    if (angle != 0.0) {
        SDL_Point centre = {0, 0};
        if (align == 2)
            centre.x = e->w;
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
        TTF_SizeUTF8(font_at(t, px), s, &ww, &hh);
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
