/* File formats: sentences files, the text/CSV/JSON printouts of a model,
 * reading weights (or a session's weights) back from JSON, and atomic file
 * writes. No SDL: these are the parts the fuzzers hit.
 * JSON shape (--print json): see README "JSON format". */
#ifndef ATTNVIZ_IO_H
#define ATTNVIZ_IO_H

#include <stdio.h>

#include "attnviz/error.h"
#include "attnviz/model.h"

/* ---- sentences files: one sentence a line, '#' comments ----------------- */
/* A line may hold a pair for cross-attention, "query sentence ||| key
 * sentence": text is the first, keys the second (both trimmed; a side left
 * empty is an error naming the line). keys[i] is "" for a plain line. */
typedef struct SentenceList {
    int n;
    char **text;    /* n sentences, NUL-terminated, trimmed */
    char **keys;    /* n second sentences ("" when the line has none) */
    long *line;     /* their 1-based line numbers */
    char **src;     /* n: the file each came from, without its folder; NULL
                       for one file (sentences_parse, sentences_load) */
} SentenceList;

#define ATTN_MAX_FILE_BYTES (512L << 20) /* sentences/weights/session files */

int sentences_load(SentenceList *out, const char *path, AttnErr *err);
int sentences_parse(SentenceList *out, const char *data, size_t len,
                    const char *name, AttnErr *err);
void sentences_free(SentenceList *s);
/* Every sentences file (*.txt) of the folder dir, first the one named
 * first (when there), then the others by name, into one list with src set.
 * A file that cannot be read or parsed is left out, the first such named
 * in *warn (code set); -ATTN_E_IO when no file gave a sentence. */
int sentences_load_folder(SentenceList *out, const char *dir, const char *first, AttnErr *warn);

/* Read a whole (regular) file; refuses directories and files over max. */
int io_read_file(const char *path, long max, char **data, size_t *len,
                 AttnErr *err);
/* Map a whole (regular, non-empty) file read-only into *map, *len (free it
 * with io_unmap_file); a missing file is the error code missing (ATTN_E_IO
 * or ATTN_E_NOT_FOUND), a directory, another kind of file, an empty one
 * refused. */
int io_map_file(const char *path, int missing, void **map, size_t *len, AttnErr *err);
/* What io_map_file gave back (map, len as it said); NULL: nothing. */
void io_unmap_file(void *map, size_t len);

/* ---- printouts ------------------------------------------------------------ */
/* One map as an aligned table under a title line (masked entries "-"), or
 * as CSV: header "query,<key tokens>", one row per query token. Return 0
 * or -ATTN_E_IO. */
int print_map_text(FILE *f, const AttnMap *map, const char *title);
int print_map_csv(FILE *f, const AttnMap *map);
/* One map as JSON: {fields, "kind", "query_tokens", "key_tokens", "values"}
 * (non-finite values as null); fields, when not NULL, is a JSON object's
 * members written first ("\"layer\": 1, \"head\": 2"). */
int print_map_json(FILE *f, const AttnMap *map, const char *fields);
/* s as a JSON string, quoted and escaped (every writer of JSON uses it). */
void io_json_string(FILE *f, const char *s);
/* A model's matrix which (its weights when the model keeps no such
 * matrix: model_prepare first) of head (0..h-1 or MODEL_HEAD_AVG) through those, the
 * text with the model's facts as its title and its unknown words after. */
int print_text(FILE *f, const Model *m, ModelMatrix which, int head);
int print_csv(FILE *f, const Model *m, ModelMatrix which, int head);
/* The JSON document; session_json, when not NULL, is a JSON object's text
 * written as the value of a trailing "session" key. */
int print_json(FILE *f, const Model *m, const char *session_json);
/* The same with a trailing member "name": value_json (JSON text), or none
 * when value_json is NULL. */
int print_json_member(FILE *f, const Model *m, const char *name, const char *value_json);

/* ---- weights: read config.heads, heads[].Wq/Wk/Wv and Wo ------------------ */
/* Parse text (a --print json output or a session file) holding weights for
 * d dimensions: on success *out holds them (parsed_weights_free it;
 * model_set_weights puts them into a model), on error *out is zeroed. */
int weights_parse(ParsedWeights *out, int d, const char *data, size_t len,
                  const char *name, AttnErr *err);
int weights_load(ParsedWeights *out, int d, const char *path, AttnErr *err);

/* ---- atomic write: temp file in the same folder, fsync, rename ------------ */
typedef int (*IoWriter)(FILE *f, void *ctx);
/* Writes through writer into "path.tmp-XXXXXX", then renames over path.
 * On any failure the temp file is removed and path is untouched. */
int io_write_atomic(const char *path, IoWriter writer, void *ctx, AttnErr *err);

#endif
