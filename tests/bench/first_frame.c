/* LD_PRELOAD hook for the start-up figure of `make bench`: wraps
 * SDL_RenderPresent; after the first real present it writes the
 * CLOCK_MONOTONIC time (seconds) to $ATTNVIZ_BENCH_STAMP and ends the
 * process, so "launch → first presented frame" needs no change to attnviz. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct SDL_Renderer SDL_Renderer;

void SDL_RenderPresent(SDL_Renderer *r)
{
    static void (*real)(SDL_Renderer *);
    if (!real)
        real = (void (*)(SDL_Renderer *))dlsym(RTLD_NEXT, "SDL_RenderPresent");
    real(r);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const char *path = getenv("ATTNVIZ_BENCH_STAMP");
    if (path) {
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%.9f\n", (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
            fclose(f);
        }
        _exit(0);
    }
}
