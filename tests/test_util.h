/* Helpers the test files share: the built-in embedding table, SDL's dummy
 * video driver and the view's fonts, reading a file back, counting a
 * folder's entries. Include after <cmocka.h> (and after <SDL.h> for
 * test_sdl_dummy and test_fonts). Static inline, so
 * a file that uses some of them does not warn about the others. */
#ifndef ATTNVIZ_TEST_UTIL_H
#define ATTNVIZ_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/embed.h"

#define TEST_EMBEDDINGS "assets/embeddings.txt"

/* The built-in table into *t; 0, or -1 with a message (run from the
 * repository root). */
static inline int test_load_embeddings(EmbedTable **t)
{
    AttnErr err = {0};
    if (embed_load(t, TEST_EMBEDDINGS, &err, NULL) < 0) {
        fprintf(stderr, "cannot load %s: %s (run from the repository root)\n", TEST_EMBEDDINGS,
                err.msg);
        return -1;
    }
    return 0;
}

#ifdef SDL_h_
/* SDL video on the dummy driver (unless the caller chose one); 0 or -1. */
static inline int test_sdl_dummy(void)
{
    setenv("SDL_VIDEODRIVER", "dummy", 0);
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "SDL_Init: %s\n", SDL_GetError());
        return -1;
    }
    return 0;
}

#include "attnviz/fonts.h"

/* The fonts the view tests draw with, as the program finds them (fonts.h:
 * DejaVu Sans, fallbacks through fontconfig), opened once a process and
 * kept to its end; NULL with a message when there is no font. */
static inline const ViewFonts *test_fonts(void)
{
    static AppFonts fonts;
    static int state; /* 0 not opened, 1 open, -1 none */
    if (state == 0) {
        AttnErr err = {0};
        state = fonts_open(&fonts, NULL, &err) == 0 ? 1 : -1;
        if (state < 0)
            fprintf(stderr, "fonts_open: %s\n", err.msg);
    }
    return state > 0 ? &fonts.view : NULL;
}
#endif

/* Everything written to f so far (f positioned at its end), NUL-terminated;
 * f stays open. */
static inline char *test_read_back(FILE *f, size_t *len)
{
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    *len = (size_t)n;
    return b;
}

/* The whole file, NUL-terminated, or NULL when it cannot be opened. */
static inline char *test_slurp(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    char *b = test_read_back(f, len);
    fclose(f);
    return b;
}

/* Entries in a folder, "." and ".." aside. */
static inline int test_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

#endif
