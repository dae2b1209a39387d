/* Sessions: everything a teacher set up, in one JSON file of the same shape
 * as --print json plus a "session" object (sentence, settings, selection,
 * colour map, edited word vectors), so --weights reads it too. Saving is
 * atomic (temp file, fsync, rename); reading gives a Session
 * (session_data.h), never writes a Model. No SDL. */
#ifndef ATTNVIZ_SESSION_H
#define ATTNVIZ_SESSION_H

#include "attnviz/error.h"
#include "attnviz/model.h"
#include "attnviz/session_data.h"

/* Write m (computed) and sv to path atomically. */
int session_save(const char *path, const Model *m, const SessionView *sv,
                 AttnErr *err);

/* Read a session for a model of d dimensions: on success *out holds the
 * file's sentence, settings (those it leaves out are base's; base NULL:
 * attn_config_default()), weights, edited vectors and view (session_free
 * it; model_apply_session puts it into a model). On error *out is zeroed. */
int session_parse(Session *out, int d, const AttnConfig *base, const char *data,
                  size_t len, const char *name, AttnErr *err);
int session_load(Session *out, int d, const AttnConfig *base, const char *path,
                 AttnErr *err);

#endif
