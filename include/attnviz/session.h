/* Sessions: everything a teacher set up, in one JSON file of the same shape
 * as --print json plus a "session" object (sentence, settings, selection,
 * colour map, edited word vectors), so --weights reads it too. Saving is
 * atomic (temp file, fsync, rename). No SDL. */
#ifndef ATTNVIZ_SESSION_H
#define ATTNVIZ_SESSION_H

#include "attnviz/error.h"
#include "attnviz/model.h"

/* The view settings a session keeps. */
typedef struct SessionView {
    int query, key, head;   /* head: 0.. or MODEL_HEAD_AVG */
    int matrix;             /* ModelMatrix */
    int cmap;               /* ColormapId */
    int all_lines;
    int dark;               /* window theme: 1 dark, 0 light */
    float ui_scale;
    int sentence_index;
    int edit_target;
} SessionView;

void session_view_default(SessionView *sv);

/* Write m (computed) and sv to path atomically. */
int session_save(const char *path, const Model *m, const SessionView *sv,
                 AttnErr *err);

/* Read a session: on success m has the file's sentence, settings, weights
 * and edited vectors (recompute it), and sv its view. On error m and sv are
 * unchanged. */
int session_parse(Model *m, SessionView *sv, const char *data, size_t len,
                  const char *name, AttnErr *err);
int session_load(Model *m, SessionView *sv, const char *path, AttnErr *err);

#endif
