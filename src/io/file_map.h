/* The memory io_map_file gives for a file it has opened and checked: the
 * desktop's (file_map.c, a mapping) and the browser's one-thread page's
 * (file_map_web.c, which tools/web/web.mk builds instead). Each also
 * defines io_unmap_file (io.h), and io_alloc_large. Not for anything but
 * file.c and model_file.c. */
#ifndef ATTNVIZ_FILE_MAP_H
#define ATTNVIZ_FILE_MAP_H

#include <stddef.h>

/* The len bytes of the regular file open as fd, read-only, for
 * io_unmap_file; NULL (errno set) when they cannot be had. */
void *io_map_fd(int fd, size_t len);

/* bytes of memory for model_file.c's converted block (free() releases
 * it): on the desktop one of 8 MB or more is 2 MB aligned and marked for
 * 2 MB pages (the products read a matrix's rows a stride apart, each row
 * on another 4 KB page; bert-base's forward at T = 128 took 9 % less time
 * with them), which the kernel gives as the block is first written where
 * it has them, else 4 KB pages; in the browser, or smaller, malloc's.
 * NULL when memory cannot be had. */
void *io_alloc_large(size_t bytes);

#endif
