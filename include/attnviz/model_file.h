/* Hugging Face model folders read by an architecture's tables (arch.h):
 * config.json into its config struct, model.safetensors (or its shards)
 * into its weights struct, and where the tokenizer's files are; a model
 * named like `gpt2` or `openai-community/gpt2` found in the local Hugging
 * Face cache. Not the forward pass (src/core) nor the tokenizer. Float32
 * weights are used in place from the read-only mapping, bfloat16 ones where
 * the tables allow it; the others are converted to float32 once, into one
 * buffer the model owns. No SDL. Errors: 0 or a negative ATTN_E_* code, err
 * naming the file or tensor and what is wrong. */
#ifndef ATTNVIZ_MODEL_FILE_H
#define ATTNVIZ_MODEL_FILE_H

#include <stddef.h>

#include "attnviz/error.h"
#include "attnviz/arch.h"

/* ---- safetensors: the header as a table of tensors in the bytes -------------- */
typedef enum SafeDtype {
    SAFE_BOOL = 0, SAFE_U8, SAFE_I8, SAFE_F8_E5M2, SAFE_F8_E4M3, SAFE_I16, SAFE_U16,
    SAFE_F16, SAFE_BF16, SAFE_I32, SAFE_U32, SAFE_F32, SAFE_F64, SAFE_I64, SAFE_U64,
    SAFE_DTYPE_COUNT,
    SAFE_GGML = SAFE_DTYPE_COUNT /* a GGUF file's tensor of ggml's block type qtype */
} SafeDtype;

#define SAFE_MAX_DIMS 8
#define SAFE_MAX_HEADER ((size_t)100 << 20) /* the safetensors library's own cap */

typedef struct SafeTensor {
    const char *name;           /* in the table's own storage */
    SafeDtype dtype;
    int ndim;                   /* 0 for a scalar (masked_bias) */
    long long shape[SAFE_MAX_DIMS];
    size_t count;               /* elements: the shape's product */
    const unsigned char *data;  /* count · element size bytes, inside the file's */
    size_t nbytes;
    /* a GGUF file's tensor (model_gguf.c) under the table's name: its ggml
     * type (also for F32, F16, BF16), its name in the file, and its rows'
     * order when llama.cpp's converter permuted them (row r at perm[r];
     * NULL: in order); qtype -1 and the others NULL for a safetensors file's */
    int qtype;
    const char *file_name;
    const int32_t *perm;
    int transposed;     /* shape is the table's [in, out]; the file holds [out, in] */
} SafeTensor;

typedef struct SafeTensors {
    int n;
    SafeTensor *t;              /* n of them, sorted by name (no two alike) */
    char *names;                /* the names' storage */
} SafeTensors;

/* Parse the bytes of a .safetensors file (8-byte little-endian header size,
 * JSON header, data): every tensor's dtype known, its shape whole numbers,
 * its data_offsets inside the data, exactly its shape's bytes, no two
 * overlapping; __metadata__ skipped. st borrows bytes (its tensors point into
 * them). On error st holds nothing and err names `name`. */
int safetensors_parse(SafeTensors *st, const void *bytes, size_t len, const char *name,
                      AttnErr *err);
/* The tensor called name, or NULL. */
const SafeTensor *safetensors_find(const SafeTensors *st, const char *name);
void safetensors_free(SafeTensors *st);
/* t's numbers (F32, F16 or BF16, little-endian in the file) as float32 into
 * out (t->count floats), whatever out's and the data's alignment. */
void safetensors_to_f32(float *out, const SafeTensor *t);
const char *safetensors_dtype_name(SafeDtype t); /* "F32", "BOOL", ... */
int safetensors_dtype_size(SafeDtype t);         /* bytes an element */

/* ---- config.json ----------------------------------------------------------------- */
/* Parse config.json's text by a's table into cfg (a->rt->cfg_size bytes):
 * a JSON object, each row read in order (its defaults, its refusals), then
 * a's forward's check. On error cfg is zeroed and err names name (or
 * "config.json"). */
int model_config_parse(const ArchDesc *a, void *cfg, const char *text, size_t len,
                       const char *name, AttnErr *err);

/* ---- a model folder -------------------------------------------------------------- */
#define MODEL_MAX_STOP 8 /* end-of-text ids kept (ModelFile's stop_ids) */

typedef struct ModelFileOwn ModelFileOwn; /* the mappings and buffers (model_file.c) */

typedef struct ModelFile {
    const ArchDesc *arch;
    void *cfg;              /* a->rt->cfg_size bytes: the architecture's config */
    void *weights;          /* a->weights_size bytes, into the mappings or the converted buffer */
    char model_type[64];    /* config.json's */
    char *dir;              /* the folder read (a GGUF file: the file) */
    int gguf;               /* 1: a GGUF file (its tokenizer: model_file_gguf_vocab) */
    char *vocab_path;       /* vocab.json and merges.txt: both or neither (NULL) */
    char *merges_path;
    char *tokenizer_path;   /* tokenizer.json, or NULL */
    const char *prefix;     /* one of a->prefixes (how the tensors are named), or "" */
    int tied;               /* 1: a tied tensor took another's (lm_head the embeddings') */
    int n_converted;        /* tensors converted (or transposed) to float32 */
    int n_bf16;             /* tensors used in place as bfloat16 */
    size_t converted_bytes; /* the float32 buffer they were converted into */
    int n_shards;           /* safetensors files mapped (1 unless sharded) */
    int n_quant;            /* a GGUF file's matrices and tables used as stored */
    /* The ids generation ends at: every id of config.json's eos_token_id
     * (a number or a list: Llama 3 Instruct lists three) and of
     * generation_config.json's when the folder has one; a GGUF file's eos,
     * eot and eom ids. Not checked against the vocabulary (lm.c drops those
     * past it). */
    int stop_ids[MODEL_MAX_STOP];
    int n_stop;
    ModelFileOwn *own;
} ModelFile;

/* Open the model folder dir as architecture a: config.json, then
 * model.safetensors (or model.safetensors.index.json and its shards)
 * mapped read-only; every tensor of a's table found, its dtype (F32, F16,
 * BF16) and shape checked against the config; the tokenizer's files noted
 * (not read). Tensors of no row are ignored. On success *out owns everything
 * (model_file_close); on error *out is NULL, nothing is left open and err
 * names the file or tensor. */
int model_file_open(const char *dir, const ArchDesc *a, ModelFile **out, AttnErr *err);
/* Unmaps and frees everything; NULL is fine. */
void model_file_close(ModelFile *m);

/* ---- a GGUF file (llama.cpp's) --------------------------------------------------- */
/* Open the GGUF file path as the architecture whose description reads its
 * general.architecture (archs(0), archs(1), ... until NULL: the program's
 * list): the file mapped read-only, never copied whole; its metadata read
 * as the config.json its converter came from (the description's
 * ArchGguf keys) by the description's table, its tensors bound under the
 * table's names (their shapes checked), every matrix and the embedding
 * tables used as stored (any type quant.h computes), llama.cpp's rotary
 * row order undone by the rows' order, the vectors converted to float32.
 * Errors name the file and the key or tensor. */
int model_file_open_gguf(const char *path, const ArchDesc *(*archs)(int i), ModelFile **out,
                         AttnErr *err);
/* The tokenizer a GGUF model's file holds (its tokenizer.ggml.* keys). */
struct Bpe;
int model_file_gguf_vocab(const ModelFile *m, struct Bpe **out, AttnErr *err);

/* ---- finding a model by name ----------------------------------------------------- */
/* The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub; into buf.
 * -ATTN_E_NOT_FOUND when none can be made (no HOME). */
int hf_cache_dir(char *buf, size_t n, AttnErr *err);
/* name → a model folder (malloc'd into *dir): an existing folder as it is;
 * else in the cache, ORG/NAME as models--ORG--NAME, a bare NAME as
 * models--NAME, then models--openai-community--NAME and
 * models--distilbert--NAME; the snapshot that refs/main names, else the
 * only one. Not found: -ATTN_E_NOT_FOUND, err saying where it looked and the
 * command that downloads it. */
int hf_model_find(const char *name, char **dir, AttnErr *err);

/* The model_type of dir/config.json into buf (n bytes): 0, or an error naming
 * the file (missing, not JSON, no model_type or not a string). */
int hf_config_model_type(const char *dir, char *buf, size_t n, AttnErr *err);

#endif
