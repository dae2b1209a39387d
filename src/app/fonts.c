/* The view's fonts found and read (see attnviz/fonts.h): the main font's
 * path (given, remembered in a cache file, or asked of fontconfig), its
 * bytes, and the fallback font fontconfig names for a character. The view
 * opens what it is given; it draws nothing here. */
#include "attnviz/fonts.h"

#include "attnviz/io.h"

#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int find_with_fontconfig(char *out, size_t n);

/* ---- the main font --------------------------------------------------------- */

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

/* The lookup runs once a process; fontconfig is then shut down again (the
 * fallbacks load their own configuration), so it holds no memory for the
 * rest of the run. */
int fonts_find_default(char *out, size_t n)
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

/* ---- fallback fonts ------------------------------------------------------ */

/* The language that picks a collection's face (Noto Sans CJK SC, JP or KR)
 * for the scripts whose glyphs differ between them. */
static const char *cjk_lang(unsigned cp)
{
    if ((cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0xFF66 && cp <= 0xFF9F))
        return "ja";
    if ((cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0x1100 && cp <= 0x11FF) ||
        (cp >= 0x3130 && cp <= 0x318F))
        return "ko";
    if ((cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0xFF00 && cp <= 0xFF65) || (cp >= 0x20000 && cp <= 0x3FFFF))
        return "zh-cn";
    return NULL;
}

static int scalable_file(const char *file)
{
    size_t len = strlen(file);
    const char *ext = len > 4 ? file + len - 4 : "";
    return strcmp(ext, ".ttf") == 0 || strcmp(ext, ".otf") == 0 ||
           strcmp(ext, ".ttc") == 0 || strcmp(ext, ".otc") == 0;
}

/* The best sans font (file and face index) that has cp, by fontconfig's
 * order for "sans-serif" with that character; 0 or -1. */
static int fallback_file(FcConfig *fc, unsigned cp, char *out, size_t n, long *index)
{
    FcPattern *pat = FcPatternCreate();
    FcCharSet *cs = FcCharSetCreate();
    int rc = -1;
    if (pat && cs && FcCharSetAddChar(cs, cp)) {
        const char *lang = cjk_lang(cp);
        FcPatternAddCharSet(pat, FC_CHARSET, cs);
        FcPatternAddString(pat, FC_FAMILY, (const FcChar8 *)"sans-serif");
        FcPatternAddBool(pat, FC_SCALABLE, FcTrue);
        if (lang)
            FcPatternAddString(pat, FC_LANG, (const FcChar8 *)lang);
        FcConfigSubstitute(fc, pat, FcMatchPattern);
        FcDefaultSubstitute(pat);
        FcResult res;
        FcFontSet *set = FcFontSort(fc, pat, FcFalse, NULL, &res);
        for (int i = 0; set && i < set->nfont && rc < 0; i++) {
            FcCharSet *have = NULL;
            FcChar8 *file = NULL;
            int idx = 0;
            if (FcPatternGetCharSet(set->fonts[i], FC_CHARSET, 0, &have) != FcResultMatch ||
                !FcCharSetHasChar(have, cp) ||
                FcPatternGetString(set->fonts[i], FC_FILE, 0, &file) != FcResultMatch ||
                !scalable_file((const char *)file) || strlen((const char *)file) >= n)
                continue;
            FcPatternGetInteger(set->fonts[i], FC_INDEX, 0, &idx);
            memcpy(out, file, strlen((const char *)file) + 1);
            *index = idx & 0xFFFF; /* the upper bits name a variable instance */
            rc = 0;
        }
        if (set)
            FcFontSetDestroy(set);
    }
    if (cs)
        FcCharSetDestroy(cs);
    if (pat)
        FcPatternDestroy(pat);
    return rc;
}

/* ViewFonts.fallback: fontconfig's configuration and font list are loaded
 * at the first character the main font lacks, and kept until fonts_close. */
static int fallback(void *ctx, unsigned cp, char *out, size_t n, long *index)
{
    AppFonts *f = ctx;
    if (!f->fc && !f->fc_failed && !(f->fc = FcInitLoadConfigAndFonts()))
        f->fc_failed = 1;
    return f->fc ? fallback_file(f->fc, cp, out, n, index) : -1;
}

/* ---- open / close ---------------------------------------------------------- */

int fonts_open(AppFonts *f, const char *font_path, AttnErr *err)
{
    char found[4096];
    memset(f, 0, sizeof *f);
    if (!font_path) {
        if (fonts_find_default(found, sizeof found) < 0)
            return attn_err_set(err, ATTN_E_IO, NULL, 0,
                                "no font found: install DejaVu Sans "
                                "(sudo apt-get install fonts-dejavu-core) or use --font FILE");
        font_path = found;
    }
    if (!(f->path = strdup(font_path)))
        return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
    size_t size = 0;
    f->data = slurp(font_path, &size);
    f->view = (ViewFonts){f->path, f->data, f->data ? size : 0, fallback, f};
    return 0;
}

void fonts_close(AppFonts *f)
{
    if (!f)
        return;
    if (f->fc)
        FcConfigDestroy(f->fc);
    free(f->data);
    free(f->path);
    memset(f, 0, sizeof *f);
}
