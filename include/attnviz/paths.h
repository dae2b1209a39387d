/* Where attnviz finds its data (the embedding table, the sentences folder):
 * $ATTNVIZ_DATADIR, then next to the binary (build/attnviz → ../assets,
 * ../sentences), then the install prefix (share/attnviz). */
#ifndef ATTNVIZ_PATHS_H
#define ATTNVIZ_PATHS_H

#include <stddef.h>

/* kind: "embeddings.txt", "sentences" or "models/NAME". Returns 0 and fills
 * out, or -1. */
int paths_find_data(const char *kind, char *out, size_t n);

#endif
