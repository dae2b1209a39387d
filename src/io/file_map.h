/* The memory io_map_file gives for a file it has opened and checked: the
 * desktop's (file_map.c, a mapping) and the browser's one-thread page's
 * (file_map_single.c, which tools/web/web.mk builds instead). Each also
 * defines io_unmap_file (io.h). Not for anything but file.c. */
#ifndef ATTNVIZ_FILE_MAP_H
#define ATTNVIZ_FILE_MAP_H

#include <stddef.h>

/* The len bytes of the regular file open as fd, read-only, for
 * io_unmap_file; NULL (errno set) when they cannot be had. */
void *io_map_fd(int fd, size_t len);

#endif
