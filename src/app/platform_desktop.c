#define _DEFAULT_SOURCE
/* The desktop's side of platform.h: fonts through fontconfig (the main
 * font's path remembered in a cache file), the X11 window title, and the
 * event loop that blocks in SDL_WaitEvent. Not for the browser build
 * (platform_web.c). */
#include "platform.h"

#include "attnviz/error.h"
#include "attnviz/io.h"

#include <SDL_syswm.h>
#include <fontconfig/fontconfig.h>
#include <locale.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The lookup runs once a process; fontconfig is then shut down again (the
 * fallbacks load their own configuration), so it holds no memory for the
 * rest of the run. */
int platform_font_default(char *out, size_t n)
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

/* fontconfig's configuration and font list are loaded at the first
 * character the main font lacks, and kept in *state. */
int platform_font_fallback(void **state, int *failed, unsigned cp, char *out, size_t n,
                           long *index)
{
    if (!*state && !*failed && !(*state = FcInitLoadConfigAndFonts()))
        *failed = 1;
    return *state ? fallback_file(*state, cp, out, n, index) : -1;
}

void platform_font_fallback_free(void *state)
{
    if (state)
        FcConfigDestroy(state);
}

/* fontconfig's fonts are all on the disk from the start */
int platform_fonts_changed(void)
{
    return 0;
}

/* ---- the window ------------------------------------------------------------ */

void platform_window_setup(void)
{
    /* the character set (numbers stay C) for SDL's UTF-8 window title on X11;
     * set after SDL_Init, whose X input method would otherwise parse the
     * locale's whole Compose table (~50 ms of start-up) */
    setlocale(LC_CTYPE, "");
    SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
}

void platform_window_title(SDL_Window *w, const char *title)
{
    SDL_SetWindowTitle(w, title);
    /* SDL stores WM_NAME as UTF8_STRING, which older X tools (xdotool,
     * xwininfo in a C locale) cannot read; store it in the ICCCM encodings
     * as well (STRING when Latin-1 suffices, else COMPOUND_TEXT). The
     * window manager's title, _NET_WM_NAME, stays UTF-8. */
    SDL_SysWMinfo info;
    SDL_VERSION(&info.version);
    if (!SDL_GetWindowWMInfo(w, &info) || info.subsystem != SDL_SYSWM_X11)
        return;
    /* libX11 is already loaded by SDL's X11 driver: look the calls up there
     * rather than linking it, so the headless paths do not load X at all */
    static void *x11;
    if (!x11 && !(x11 = SDL_LoadObject("libX11.so.6")))
        return;
    int (*to_prop)(Display *, char **, int, XICCEncodingStyle, XTextProperty *) =
        (int (*)(Display *, char **, int, XICCEncodingStyle, XTextProperty *))SDL_LoadFunction(x11, "Xutf8TextListToTextProperty");
    void (*set_name)(Display *, Window, XTextProperty *) =
        (void (*)(Display *, Window, XTextProperty *))SDL_LoadFunction(x11, "XSetWMName");
    int (*xfree)(void *) = (int (*)(void *))SDL_LoadFunction(x11, "XFree");
    int (*xflush)(Display *) = (int (*)(Display *))SDL_LoadFunction(x11, "XFlush");
    if (!to_prop || !set_name || !xfree || !xflush)
        return;
    XTextProperty prop;
    char *list[1] = {(char *)title};
    if (to_prop(info.info.x11.display, list, 1, XStdICCTextStyle, &prop) >= Success) {
        set_name(info.info.x11.display, info.info.x11.window, &prop);
        xfree(prop.value);
        xflush(info.info.x11.display);
    }
}

/* Block until an event, or wait at most as long as the frame said (an
 * autosave due): idle at 0% CPU unless something is due. An open the
 * events or the start asked for is opened before the next frame (the
 * desktop's model opens on a worker thread: nothing to break up), the
 * start's restore so before the first. */
void platform_run_loop(const PlatformLoop *loop)
{
    char path[4096];
    while (!loop->done(loop->ctx)) {
        while (loop->asked && loop->asked(loop->ctx, path, sizeof path))
            loop->open(loop->ctx, path);
        int wait_ms = loop->frame(loop->ctx);
        SDL_Event e;
        int got = wait_ms < 0 ? SDL_WaitEvent(&e) : SDL_WaitEventTimeout(&e, wait_ms);
        if (got)
            loop->events(loop->ctx, &e);
    }
}

/* The file is where the status bar says: nothing to hand over. */
void platform_file_written(const char *path)
{
    (void)path;
}

/* The session is kept where it was written, as any file. */
void platform_session_written(const char *path)
{
    (void)path;
}

/* The desktop has nothing to say after the fact. */
int platform_note(char *out, size_t n)
{
    (void)out, (void)n;
    return 0;
}

const char platform_help_save[] = "save session / save as";
const char platform_help_open[] = "open a session, sentences, attention file or model folder (or drop one)";
