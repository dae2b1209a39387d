/* GGUF files (llama.cpp's format, versions 2 and 3, little-endian) read in
 * place: the header, the typed metadata (every value type, arrays of arrays
 * too) and the tensor infos, each tensor's bytes pointing into the caller's
 * mapping; every count, length, offset and size checked against the file
 * before anything is allocated. Not the dequantization (quant.h), nor which
 * architecture or tokenizer a file holds. No SDL.
 *
 * Stricter than llama.cpp's reader where a model could not use the file
 * anyway (an empty tensor name, 0 dimensions, a dimension of 0), more
 * lenient where nothing is lost (arrays of arrays, tensors in any aligned
 * order, unknown tensor types kept with nbytes 0 for the loader to name).
 *
 * Conventions: strings are GgufStr (pointer and length into the bytes, not
 * NUL-terminated); keys and tensor names are NUL-terminated copies. Errors:
 * 0 or a negative ATTN_E_* code, err naming the file and the field ("tensor
 * blk.0.attn_q.weight: ...", "metadata key 7 (\"general.name\"): ..."). */
#ifndef ATTNVIZ_GGUF_H
#define ATTNVIZ_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "attnviz/error.h"

/* Metadata value types (gguf.h's enum gguf_type). */
typedef enum GgufType {
    GGUF_U8 = 0, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32,
    GGUF_BOOL, GGUF_STRING, GGUF_ARRAY, GGUF_U64, GGUF_I64, GGUF_F64,
    GGUF_TYPE_COUNT
} GgufType;

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4
#define GGUF_MAX_ARRAY_DEPTH 8   /* arrays of arrays nested deeper are refused */

typedef struct GgufStr {
    const char *s;              /* into the file's bytes, not NUL-terminated */
    size_t len;
} GgufStr;

typedef struct GgufKV {
    char *key;                  /* NUL-terminated copy */
    GgufType type;
    union {
        uint64_t u;             /* U8, U16, U32, U64; BOOL as 0 or 1 */
        int64_t i;              /* I8, I16, I32, I64 */
        double f;               /* F32, F64 */
        GgufStr str;            /* STRING */
    } v;
    GgufType arr_type;          /* GGUF_ARRAY: its elements' type, their count, their bytes */
    uint64_t arr_n;
    const unsigned char *arr_data;
    size_t arr_bytes;
} GgufKV;

typedef struct GgufTensor {
    char *name;                 /* NUL-terminated copy */
    int type;                   /* ggml's type number, as stored (maybe one attnviz does not compute) */
    int ndim;                   /* 1..4 */
    int64_t ne[4];              /* ggml's order: ne[0] the innermost (a row's length); 1 past ndim */
    const unsigned char *data;  /* into the bytes */
    size_t nbytes;              /* by the type's block size and bytes (0 when the type is unknown) */
} GgufTensor;

typedef struct Gguf {
    int version;
    size_t alignment;
    int n_kv;
    GgufKV *kv;                 /* in the file's order */
    int n_tensors;
    GgufTensor *t;              /* in the file's order */
    size_t data_offset;         /* where the tensor data starts in the file */
    /* private: lookups (sorted by key, by name) */
    const GgufKV **kv_by_key;
    const GgufTensor **t_by_name;
} Gguf;

/* Parse the bytes of a GGUF file (mapped by the caller); g borrows them. On
 * error g holds nothing (all zero) and err names `name` and the field. */
int gguf_parse(Gguf *g, const void *bytes, size_t len, const char *name, AttnErr *err);
/* Frees what gguf_parse allocated and zeroes g; NULL or a zeroed g is fine. */
void gguf_free(Gguf *g);

const GgufKV *gguf_find(const Gguf *g, const char *key);         /* NULL: absent */
const GgufTensor *gguf_tensor(const Gguf *g, const char *name); /* NULL: absent */

/* Typed getters: 0 found (converted), 1 absent, negative ATTN_E_* with err
 * naming file and key when of another type or out of range. */
int gguf_get_int(const Gguf *g, const char *key, int64_t *out, const char *file,
                 AttnErr *err);  /* any integer type or bool */
int gguf_get_float(const Gguf *g, const char *key, double *out, const char *file,
                   AttnErr *err);  /* F32, F64 or an integer */
int gguf_get_str(const Gguf *g, const char *key, GgufStr *out, const char *file,
                 AttnErr *err);
/* An array of elem (GGUF_ARRAY: an array of any element type). */
int gguf_get_array(const Gguf *g, const char *key, GgufType elem, const GgufKV **out,
                   const char *file, AttnErr *err);

/* An array's elements into out (kv->arr_n of them): 0, or -ATTN_E_PARSE
 * when the elements are not of a type that converts, -ATTN_E_RANGE when a
 * number does not fit (i32). Strings: GgufStr into the bytes. f32: any
 * number type (bool as 0/1), converted as C converts. i32: any integer
 * type or bool whose value fits. */
int gguf_array_strings(const GgufKV *kv, GgufStr *out);
int gguf_array_f32(const GgufKV *kv, float *out);
int gguf_array_i32(const GgufKV *kv, int32_t *out);
/* An array of arrays' elements as GgufKV of type GGUF_ARRAY (key NULL). */
int gguf_array_arrays(const GgufKV *kv, GgufKV *out);

/* "u8", "i32", "string", "array", ... (NULL past the table). */
const char *gguf_value_type_name(int type);

/* ---- ggml tensor types ---------------------------------------------------------- */
/* "F32", "Q4_K", "IQ2_XXS", ...; NULL when unknown (removed or newer than this table). */
const char *gguf_type_name(int ggml_type);
/* Elements a block and bytes a block of a ggml type; 0 when unknown. */
int gguf_type_block(int ggml_type);
size_t gguf_type_bytes(int ggml_type);

#endif
