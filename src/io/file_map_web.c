/* io_map_file's memory on the browser's pages (file_map.h; tools/web/web.mk
 * builds it instead of file_map.c for both). The page's files are in its
 * memory, and emscripten's mmap copies a whole file into the heap in one
 * call, after zeroing it, on the browser's main thread (a model of 126 MB:
 * 77 ms with the page frozen; from the threaded page's worker the call is
 * proxied there, 200 ms); here the file is read into memory a slice at a
 * time (on the threaded page each pread proxied on its own, so frames come
 * between; on the one-thread page with bg_breathe between slices), so a
 * model opened from a drop keeps the page drawing, and the memory is
 * touched once. Not for the desktop. */
#include "attnviz/background.h"
#include "attnviz/io.h"

#include "file_map.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* Bytes read between two breaks: a few ms of copying in the page. */
#define SLICE_BYTES (4u << 20)

void *io_map_fd(int fd, size_t len)
{
    char *map = malloc(len);
    if (!map)
        return NULL;
    for (size_t at = 0; at < len;) {
        size_t want = len - at < SLICE_BYTES ? len - at : SLICE_BYTES;
        ssize_t got = pread(fd, map + at, want, (off_t)at);
        if (got <= 0) {
            int e = got < 0 ? errno : EIO;
            free(map);
            errno = e;
            return NULL;
        }
        at += (size_t)got;
        bg_breathe();
    }
    return map;
}

void io_unmap_file(void *map, size_t len)
{
    (void)len;
    free(map);
}

void *io_alloc_large(size_t bytes)
{
    return malloc(bytes);
}
