/* The attention-file source's state (src/app/sources/file_source.c), as
 * plain data for its tests: the opened file with its picked map, what is
 * picked, the model view's selection and its small maps. */
#ifndef ATTNVIZ_FILE_SOURCE_H
#define ATTNVIZ_FILE_SOURCE_H

#include "attnviz/attnmap.h"
#include "attnviz/import.h"
#include "attnviz/maps_shown.h"

struct AppState;

typedef struct FileSource {
    MapsShown ms;              /* the file's maps (its Imported) and what is picked */
    int group;                 /* an encoder-decoder's .npz (--export-attention's): the group
                                  shown (OptGroup; Ctrl+X the next), cross unless --group */
    int group_named;           /* 1 once the group is known (--group, Ctrl+X): the title names it */
} FileSource;

/* The file shown in a, or NULL when a shows another source. */
FileSource *file_source_of(const struct AppState *a);
/* Show im (opened and picked; a owns it from now on, also on error) in
 * place of what a shows. 0 or -ATTN_E_NOMEM. */
int file_source_show(struct AppState *a, Imported *im);

#endif
