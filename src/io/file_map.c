/* io_map_file's memory on the desktop (file_map.h): the file mapped, its
 * pages read when first touched. Not the one-thread page's
 * (file_map_single.c). */
#include "attnviz/io.h"

#include "file_map.h"

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
