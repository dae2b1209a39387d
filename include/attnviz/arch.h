/* An architecture as data (issue 33): its config.json fields as a table
 * (key, type, default, where the value goes), its tensors as a table (the
 * name, the shape in the config's sizes, where the pointer goes) and its
 * forward (runtime.h's RtArch). One file holds all three (src/core/arch_*.c);
 * the loader in io/ (model_file.h) reads any folder by them and the program
 * picks one by config.json's model_type (lm.h). No file is read here and no
 * JSON parsed: a table says what to read, its steps (plain functions on the
 * config struct) what a table cannot say.
 *
 * Messages: each row's refusals are the loader's usual ones unless the row
 * gives its own (missing, bad, not_whole, refused), in which a "%s" stands
 * for the key (for refused: the value, at most 60 characters). */
#ifndef ATTNVIZ_ARCH_H
#define ATTNVIZ_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attnviz/error.h"
#include "attnviz/runtime.h"

#define ARCH_NOWHERE SIZE_MAX /* an offset: the value is checked, not kept */

/* ---- config.json ------------------------------------------------------------------ */
typedef enum ArchFieldType {
    AF_INT = 0, /* a whole number from 1 to hi (int) */
    AF_DOUBLE,  /* a number above lo and below hi (double) */
    AF_FLOAT,   /* the same, kept as float */
    AF_F32,     /* a number whose float is above lo and below hi (float) */
    AF_BOOL,    /* true or false (int 0 or 1) */
    AF_ENUM,    /* one of names (int: its value) */
    AF_ID,      /* a token id: a whole number from 0, null -1 (int) */
    AF_OBJECT,  /* an object whose members are rows "key.member" (nothing kept) */
    AF_STEP,    /* no key: step runs here, in the table's order */
    AF_NAMES,   /* a list of at most hi of names (unsigned char each: its value),
                   its length (int) at count_off */
    AF_NUMBERS, /* a list of at most hi numbers above lo (double each), its
                   length (int) at count_off */
    AF_ENTER    /* the rows after it read inside the object key (an absent
                   one: from the top, or refused with AF_REQUIRED); key NULL:
                   from the top again */
} ArchFieldType;

#define AF_REQUIRED 1 /* absent: refused (inside an absent object: not read) */
#define AF_NULL     2 /* null is as if absent */
#define AF_LIST     4 /* AF_ID: a list of ids gives its first */
#define AF_NULL_NONE 8 /* null gives 0 (none), absent the default (Gemma 2's soft caps) */

/* A string config.json may give and what it stands for. */
typedef struct ArchName {
    const char *word;
    int value;
} ArchName;

/* A row applies only when the int at off of the config has its bit in mask
 * (mask 0: always), e.g. a key only one model_type reads. */
typedef struct ArchWhen {
    size_t off;
    unsigned mask;
} ArchWhen;

/* 1 when w holds for the config cfg. */
static inline int arch_when(const void *cfg, ArchWhen w)
{
    int v;
    if (!w.mask)
        return 1;
    memcpy(&v, (const char *)cfg + w.off, sizeof v);
    return v >= 0 && v < 32 && ((w.mask >> v) & 1u);
}

typedef struct ArchField {
    const char *key;        /* "key", or "object.member" inside an AF_OBJECT row's */
    ArchFieldType type;
    size_t off;             /* into the config struct, or ARCH_NOWHERE */
    int flags;              /* AF_REQUIRED, AF_NULL, AF_LIST */
    double dflt;            /* when absent */
    double lo, hi;          /* AF_INT: hi the largest; numbers: both excluded */
    const ArchName *names;  /* AF_ENUM: the strings taken, ending with {NULL, 0} */
    const char *alias;      /* read when key is absent (GPT2Config's attribute_map) */
    ArchWhen when;
    const char *missing, *bad, *not_whole, *refused; /* own messages (NULL: the usual; bad
                                                         also for a bool, id or object of
                                                         the wrong type) */
    size_t count_off;       /* AF_NAMES, AF_NUMBERS: where the length goes */
    /* AF_STEP: derived values and checks on the config read so far; 0 or an
     * error naming file */
    int (*step)(void *cfg, const char *file, AttnErr *err);
} ArchField;

#define ARCH_STEP(fn) {.type = AF_STEP, .off = ARCH_NOWHERE, .step = (fn)}

/* ---- the weights ------------------------------------------------------------------ */
typedef enum ArchTensorKind {
    AT_PLAIN = 0, /* used as stored: float32 in place when it can be, else converted
                     once; bfloat16 in place when the row has off16 and it can be */
    AT_MATRIX     /* a product's matrix, stored [out, in]: bfloat16 in place when
                     every matrix can be, else float32 transposed to [in, out] */
} ArchTensorKind;

#define AT_LAYER     1 /* one per layer: "%d" in the name, off into a layer's struct */
#define AT_NO_PREFIX 2 /* named without the file's prefix (lm_head) */
#define AT_OPTIONAL  4 /* absent: tied */
#define AT_SAME_TIES 8 /* the same numbers as the tied row's: tied */
#define AT_ENC_LAYER 16 /* an encoder-decoder's: one per encoder layer (the count its
                           RtArch.encoder's shape gives), off into a layer struct of
                           the array at enc_layers_off */

#define ARCH_MAX_SIZES 8

typedef struct ArchTensor {
    const char *name;   /* Hugging Face's, without the prefix */
    ArchTensorKind kind;
    int flags;
    int ndim;           /* 1 or 2 */
    int dim[2];         /* indices into the sizes the description's sizes() gives */
    size_t off, off16;  /* where its float32 pointer and its handle as stored (const RtMat *)
                           go (ARCH_NOWHERE: none) */
    ArchWhen when;      /* not bound when false: tied when tie >= 0 */
    int tie;            /* the row (not a layer's) whose pointers it takes when tied, or -1 */
    const char *missing; /* own message when absent (NULL: "no tensor NAME") */
    /* other names of the same numbers (NULL, or ending with NULL), prefixed
     * as name is ("/" first: without the prefix, as lm_head.weight): one
     * table transformers ties to one parameter (BART's shared, its
     * encoder's and decoder's embed_tokens and a tied lm_head), which a file
     * stores under any of them. The first present is read when name is
     * absent; every one present must hold the same numbers. */
    const char *const *alt;
} ArchTensor;

/* ---- GGUF files (llama.cpp's) -------------------------------------------------------- */
/* A GGUF file is read as the config.json and tensors its converter came
 * from: its metadata keys become config.json's keys (then read by the
 * table above, defaults and refusals as for a folder) and its tensors take
 * the table's names. */
/* An ArchGgufKey's gguf naming a tensor, not a key: ARCH_GGUF_TENSOR
 * "rope_factors_long.weight" gives that F32 vector's numbers as a list (a
 * converter's numbers it stored as a tensor: Phi-3's longrope factors); the
 * tensor is then read as that key, never as a weight. */
#define ARCH_GGUF_TENSOR "tensor:"

typedef struct ArchGgufKey {
    const char *gguf;   /* the metadata key, "%s" for the architecture ("%s.block_count");
                           or ARCH_GGUF_TENSOR and a tensor's name; "!KEY": a row
                           for a file without KEY (what the converter's leaving it
                           out means) */
    const char *json;   /* the config.json key it gives ("num_hidden_layers";
                           "rope_scaling.factor" inside an object); a "!" row's
                           "key=VALUE", VALUE JSON ("sliding_window_pattern=1") */
} ArchGgufKey;

/* How llama.cpp's converter changed a tensor's numbers. */
typedef enum ArchGgufChange {
    AG_SAME = 0,
    AG_ROPE_Q,          /* rows permuted for llama.cpp's rotary layout, by the query heads */
    AG_ROPE_K,          /* the same by the key-value heads */
    AG_QKV_HEADS,       /* a fused query-key-value's rows regrouped from each head's
                           q, k, v (GPT-NeoX's) into all q, all k, all v */
    AG_TRANSPOSED       /* a [in, out] matrix (GPT-2's Conv1D) stored [out, in] */
} ArchGgufChange;

typedef struct ArchGgufName {
    const char *gguf;   /* llama.cpp's name ("blk.%d.attn_q.weight"); with hf NULL a
                           prefix ("v."): another model's tensors in the same file
                           (Ollama's vision tower), never read, a note on stderr */
    const char *hf;     /* the table's row name (without the prefix) */
    ArchGgufChange change;
} ArchGgufName;

typedef struct ArchGguf {
    const char *arch;           /* general.architecture */
    const char *model_type;     /* the config.json model_type it reads as */
    const ArchGgufKey *keys;    /* ending with {NULL, NULL} */
    const ArchGgufName *names;  /* ending with {NULL, NULL} */
    /* the config's changes a GGUF file makes (NULL: none), after its
     * config is read: e.g. Gemma's norms stored as 1 + w */
    void (*fix)(void *cfg);
} ArchGguf;

/* What the program shows of a model besides its shape. */
typedef struct ArchFacts {
    int bos_id;         /* -1: none */
    int scale_attn;     /* 1: scores / √d_head */
    int scale_by_layer; /* 1: scores also / (layer + 1) */
    int eos_id;         /* the end-of-text token generation stops at; -1: none */
    int start_id;       /* an encoder-decoder's decoder_start_token_id; -1: none */
} ArchFacts;

typedef struct ArchDesc {
    const ArchName *types;  /* the model_types it computes, ending with {NULL, 0} */
    const RtArch *rt;       /* its forward; rt->cfg_size is the config struct's size */
    const ArchField *fields;
    int n_fields;
    const char *required_note; /* after "no \"KEY\": " for a required key */
    const char *folder_files;  /* what a model folder holds, for messages */
    const char *config_files;  /* the same when config.json is missing */
    const char *embed_name;    /* the input embedding's name in messages */
    void (*facts)(const void *cfg, ArchFacts *out);
    /* the weights: a struct of weights_size bytes, its layers (layer_size
     * bytes each) an array it points to at layers_off */
    size_t weights_size, layer_size, layers_off;
    size_t enc_layers_off; /* an encoder-decoder's encoder layers (AT_ENC_LAYER rows), of
                              layer_size bytes each, an array it points to here */
    const ArchTensor *tensors;
    int n_tensors;
    void (*sizes)(const void *cfg, long long *sizes); /* ARCH_MAX_SIZES at most */
    const char *const *prefixes; /* NULL, or the prefixes tried (ending with NULL)
                                    on the first tensor's name */
    const char *unknown_weights; /* when none of them fits */
    const char *layers_key;      /* a whole layer missing named with this key (NULL:
                                    as any missing tensor) */
    /* another model's tensors in the same file (a vision tower's), under
     * these prefixes (ending with NULL; NULL: none): never read, and when the
     * file has any, "attnviz: note: FILE: ignored_note" on stderr */
    const char *const *ignored;
    const char *ignored_note;
    /* -ATTN_E_SHAPE for tensor, its shape got where the config makes want */
    int (*shape_error)(const void *cfg, const char *tensor, const char *want, const char *got,
                       const char *file, AttnErr *err);
    /* the GGUF architectures it reads, ending with {NULL} (NULL: none) */
    const ArchGguf *gguf;
} ArchDesc;

/* A description's two tables, and its weights struct W whose layers (an
 * array of Y) it points to at W's member `layers`. */
#define ARCH_TABLES(fields_, tensors_) \
    .fields = (fields_), .n_fields = (int)(sizeof(fields_) / sizeof(fields_)[0]), \
    .tensors = (tensors_), .n_tensors = (int)(sizeof(tensors_) / sizeof(tensors_)[0])
#define ARCH_WEIGHTS(W, Y) \
    .weights_size = sizeof(W), .layer_size = sizeof(Y), .layers_off = offsetof(W, layers)
/* The same for an encoder-decoder: W's members enc_layers (the encoder's)
 * and layers (the decoder's), both arrays of Y. */
#define ARCH_ENCDEC_WEIGHTS(W, Y) \
    ARCH_WEIGHTS(W, Y), .enc_layers_off = offsetof(W, enc_layers)

/* The architectures the program has (src/core/archs.c), ending with NULL. */
extern const ArchDesc *const arch_builtin[];

/* A family's model classes as config.json's "architectures" names them:
 * prefix followed by For, Model, LMHead, WithLMHead or MT; family its name in
 * messages; types the model_types (space-separated) whose class it is. */
typedef struct ArchClass {
    const char *prefix, *family, *types;
} ArchClass;

/* Every family's (src/core/archs.c), ending with {NULL}: a config whose
 * architectures name a class of a family its model_type is not is refused
 * (a config that mixes families); a class of no row is not judged. */
extern const ArchClass arch_classes[];

#endif
