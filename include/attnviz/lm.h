/* A language model of any architecture the program computes, behind one
 * set of calls (src/app/lm/lm.c): the model source (sources/
 * model_source.c) opens a folder, runs the forward and reads maps, vectors
 * and predictions through it and never names an architecture. An
 * architecture is a description (arch.h: its config.json and tensor tables
 * and its forward, one file in src/core); lm.c reads the folder by it
 * (io's model_file.h) and runs the runtime on it. Adding one is its file
 * and one row in src/core/archs.c, or lm_arch_register (a test's).
 *
 * Threads: as the forwards' own states, an Lm is used by one thread at a
 * time (the source's worker while it runs). */
#ifndef ATTNVIZ_LM_H
#define ATTNVIZ_LM_H

#include "attnviz/arch.h"
#include "attnviz/error.h"
#include "attnviz/forward_hooks.h"
#include "attnviz/runtime.h"


/* What the source needs to know of a model, from its config. */
typedef struct LmInfo {
    const char *arch;       /* "gpt2", "llama", ...: the config's model_type */
    int n_layer, n_head;    /* L, H: the maps */
    int n_kv_head;          /* heads of keys and values (H unless grouped) */
    int d_head;             /* a head's query and key size */
    int n_positions;        /* the most tokens */
    int n_vocab;            /* rows of the output layer */
    int bos_id;             /* the config's bos_token_id, -1: none */
    int eos_id;             /* its eos_token_id (a list's first), -1: none */
    int scale_attn;         /* 1: scores / √d_head */
    int scale_by_layer;     /* 1: scores also / (layer + 1) */
    const char *embed_name; /* the input embedding's name in messages ("wte") */
    int masked_lm;          /* 1: an encoder (BERT's): every query sees every key, and
                               a position's logits are what fills it, not what follows */
    int stop_ids[8];        /* the ids generation ends at: eos_id, then the files' others
                               (model_file.h's stop_ids) within the vocabulary */
    int n_stop;
    int encdec;             /* 1: an encoder-decoder (T5's, BART's): what lm_forward
                               shows of it is its encoder on the text (n_layer, n_head
                               … the encoder's; maps, queries, keys, norms and head
                               ablation too), the predictions its decoder's after its
                               start token (lm_forward_encdec: a target) */
    int start_id;           /* its decoder_start_token_id (-1: none) */
} LmInfo;

/* 1 when id is one of info's end-of-text ids (generation stops after it). */
static inline int lm_is_stop(const LmInfo *info, int id)
{
    for (int k = 0; k < info->n_stop; k++)
        if (info->stop_ids[k] == id)
            return 1;
    return 0;
}

/* What a forward calls between layers (forward_hooks.h; in layer_done,
 * lm_layer_each makes the layer's new maps). */
typedef ForwardHooks LmHooks;

typedef struct ModelFile ModelFile;

typedef struct Lm {
    const ArchDesc *arch;
    LmInfo info;
    ModelFile *model;     /* the folder read (model_file.h): its config and weights */
    Rt *rt;               /* the forward's state: key/value cache, queries and keys */
    int twin;             /* 1: model is another Lm's (lm_twin), not closed by lm_close */
} Lm;

/* Add an architecture to those lm_open picks from (after the built-in
 * ones): 0, or -1 when the list is full. Not while a model opens. */
int lm_arch_register(const ArchDesc *a);
/* The i-th architecture lm_open picks from (the built-in ones, then those
 * added), or NULL past the last: model_file_open_gguf's list. */
const ArchDesc *lm_arch(int i);

/* Open the model folder dir: its config.json's model_type picks the
 * architecture; then its weights and a forward state. 0, or an error naming
 * the file or tensor (*lm then holds nothing). */
int lm_open(Lm *lm, const char *dir, AttnErr *err);
/* The same for a GGUF file (llama.cpp's): its general.architecture picks
 * the architecture (model_file_open_gguf). */
int lm_open_gguf(Lm *lm, const char *path, AttnErr *err);
/* A second forward state on src's model: its weights shared, not copied;
 * its own cache, prefix reuse and heads switched off (none at first), so
 * two forwards that differ in their ablation each keep their prefix. 0 or
 * -ATTN_E_NOMEM (*twin then holds nothing). src stays open while the twin
 * is used, and both are used by one thread at a time. */
int lm_twin(Lm *twin, const Lm *src, AttnErr *err);
/* Frees everything (a twin: its state alone); a zeroed or closed Lm is fine. */
void lm_close(Lm *lm);

/* An encoder-decoder's forward (runtime.h's rt_forward_encdec): the
 * source src[0..Ts), the decoder's ids tgt[0..Tt) (its start token first). */
int lm_forward_encdec(Lm *lm, const int *src, int Ts, const int *tgt, int Tt, const LmHooks *hooks,
                      AttnErr *err);
/* lm_forward's with an encoder-decoder's target: ids the source, the
 * decoder on tgt[0..Tt) (its start token first; NULL: the start token
 * alone), hooks' layers the encoder's (the window's), the decoder's forward
 * cancellable by them too. A decoder-only model: lm_forward's. */
int lm_forward_target(Lm *lm, const int *ids, int T, const int *tgt, int Tt, const LmHooks *hooks,
                      AttnErr *err);
/* The forward of ids[0..T) (the unchanged prefix of the last one kept):
 * 0, -ATTN_E_CANCELLED (the next forward goes on), or an error. */
int lm_forward(Lm *lm, const int *ids, int T, const LmHooks *hooks, AttnErr *err);
/* What every map of the last forward is made from, copied out (runtime.h's
 * RtMaps: the maps another thread keeps); NULL: out of memory. */
RtMaps *lm_maps_take(const Lm *lm);
/* fn(user, layer, head, map) for each map of layer (runtime.h's
 * rt_layer_each: on the two threads): in a layer hook, the maps just made. */
int lm_layer_each(const Lm *lm, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                  void *user);
/* Value-weighted attention (runtime.h's rt_value_norms): the per-key norms
 * ‖v_j W_O,h‖ of the last forward made (only the positions it changed),
 * so that lm_maps_take's copy carries them and lm_map_norms gives the
 * norms maps α[i, j] · ‖v_j W_O,h‖. 0 or an error. */
int lm_value_norms(Lm *lm, AttnErr *err);
/* lm_layer_each's norms maps (a layer hook's: the layer's norms made first). */
int lm_layer_norms_each(const Lm *lm, int layer, void (*fn)(void *user, int layer, int head, const float *map),
                        void *user);
void lm_map_norms(const Lm *lm, int layer, int head, float *out, size_t ld);
/* Layer's attention as the last forward computed it (the shown state's). */
const RtAttn *lm_layer_attn(const Lm *lm, int layer);
/* Head head's query of position i and key of position j in layer (d_head
 * floats, as the scores use them: their dot product is the score before
 * the scaling); valid until the next forward. */
const float *lm_query(const Lm *lm, int layer, int head, int i);
const float *lm_key(const Lm *lm, int layer, int head, int j);
/* The logits after position pos of the last forward (n_vocab floats). */
int lm_logits(Lm *lm, int pos, float *logits, AttnErr *err);
/* The k most likely next tokens after position pos, most likely first. */
int lm_top_k(Lm *lm, int pos, int k, int *ids, float *probs, AttnErr *err);

/* The logit lens of position pos of ids[0..T) (runtime.h's rt_lens: a
 * forward from pos on, then each layer's residual stream through the output):
 * (L + 1) × k ids and probabilities, layer 0 the embeddings', layer L
 * lm_top_k's. The last forward is then ids'. */
int lm_logit_lens(Lm *lm, const int *ids, int T, int pos, int k, int *top_ids, float *probs,
                  AttnErr *err);

/* Head ablation (runtime.h's rt_ablate): head's output in layer (both
 * 0-based) zeroed, or replaced by its mean over the text's positions when
 * lm_ablate_mode(lm, 1), in every later forward, the predictions, the
 * logit lens and generation; the next forward computes every position.
 * 0, or -ATTN_E_RANGE naming the 1-based layer or head that does not exist. */
int lm_ablate(Lm *lm, int layer, int head, int on, AttnErr *err);
void lm_ablate_mode(Lm *lm, int mean);
int lm_is_ablated(const Lm *lm, int layer, int head);

/* The model_types the program computes, for messages: "gpt2, llama, ...". */
const char *lm_known_types(void);

#endif
