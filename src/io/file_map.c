/* io_map_file's memory on the desktop (file_map.h): the file mapped, its
 * pages read when first touched; and model_file.c's large blocks in 2 MB
 * pages. Not the browser's (file_map_web.c). */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include "attnviz/io.h"

#include "file_map.h"

#include <stdlib.h>
#include <sys/mman.h>

void *io_map_fd(int fd, size_t len)
{
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    return map == MAP_FAILED ? NULL : map;
}

void io_unmap_file(void *map, size_t len)
{
    if (map)
        munmap(map, len);
}

enum { HUGE_PAGE = 2 << 20, HUGE_MIN = 4 * HUGE_PAGE };

void *io_alloc_large(size_t bytes)
{
#ifdef MADV_HUGEPAGE
    void *p = NULL;
    if (bytes >= HUGE_MIN && posix_memalign(&p, HUGE_PAGE, bytes) == 0) {
        madvise(p, bytes / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE); /* refused: 4 KB pages */
        return p;
    }
#endif
    return malloc(bytes);
}
