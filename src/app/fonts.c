/* The view's fonts found and read (see attnviz/fonts.h): the main font's
 * path (given, or the platform's: platform.h), its bytes, and the fallback
 * font the platform names for a character. The view opens what it is
 * given; it draws nothing here. */
#include "attnviz/fonts.h"

#include "attnviz/io.h"
#include "platform.h"

#include <stdlib.h>
#include <string.h>

/* ---- the main font --------------------------------------------------------- */

int fonts_find_default(char *out, size_t n)
{
    return platform_font_default(out, n);
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

/* ViewFonts.fallback: the platform's font list is loaded at the first
 * character the main font lacks, and kept until fonts_close. */
static int fallback(void *ctx, unsigned cp, char *out, size_t n, long *index)
{
    AppFonts *f = ctx;
    return platform_font_fallback(&f->fallback_state, &f->fallback_failed, cp, out, n, index);
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
    platform_font_fallback_free(f->fallback_state);
    free(f->data);
    free(f->path);
    memset(f, 0, sizeof *f);
}
