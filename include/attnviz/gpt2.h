/* GPT-2 as plain data: its sizes (from config.json) and its weights as
 * float32 arrays (pointers into a mapped file, or converted copies: the
 * loader in io/ owns them, model_file.h). The forward pass that reads them lives in
 * src/core/arch_gpt2.c (no files); this header is what the loader and it share.
 * Shapes follow Hugging Face's GPT-2: Conv1D weights are stored [in, out]. */
#ifndef ATTNVIZ_GPT2_H
#define ATTNVIZ_GPT2_H

#include "attnviz/arch.h"
#include "attnviz/error.h"
#include "attnviz/runtime.h"

typedef enum Gpt2Act {
    GPT2_ACT_GELU_TANH = 0, /* gelu_new, gelu_pytorch_tanh */
    GPT2_ACT_GELU_ERF,      /* gelu */
    GPT2_ACT_RELU           /* relu */
} Gpt2Act;

typedef struct Gpt2Config {
    int n_layer, n_head, n_embd; /* L, H, C (C = H · d_head) */
    int n_positions;             /* rows of wpe: the most tokens */
    int n_inner;                 /* the MLP's width (4 · C when config says null) */
    int n_vocab;                 /* rows of wte */
    float ln_eps;                /* layer_norm_epsilon, inside the square root */
    Gpt2Act act;
    int scale_attn_weights;      /* 1: scores / √d_head */
    int scale_by_inverse_layer_idx; /* 1: scores also / (layer index + 1) */
    int bos_id, eos_id;          /* -1: none */
} Gpt2Config;

typedef struct Gpt2Layer {
    const float *ln1_w, *ln1_b;   /* ln_1: [C], [C] */
    const float *attn_w, *attn_b; /* attn.c_attn: [C, 3C], [3C] (Q | K | V) */
    const float *proj_w, *proj_b; /* attn.c_proj: [C, C], [C] */
    const float *ln2_w, *ln2_b;   /* ln_2: [C], [C] */
    const float *fc_w, *fc_b;     /* mlp.c_fc: [C, n_inner], [n_inner] */
    const float *mproj_w, *mproj_b; /* mlp.c_proj: [n_inner, C], [C] */
} Gpt2Layer;

typedef struct Gpt2Weights {
    const float *wte;        /* [n_vocab, C] */
    const float *wpe;        /* [n_positions, C] */
    const Gpt2Layer *layers; /* n_layer of them */
    const float *lnf_w, *lnf_b; /* ln_f: [C], [C] */
    const float *lm_head;    /* [n_vocab, C]: wte when tied */
} Gpt2Weights;

/* GPT-2 on the runtime (src/core/arch_gpt2.c): rt_create(&rt, &arch_gpt2,
 * &cfg, err), rt_forward(rt, &weights, ...); its config.json and tensors as
 * tables (model_file_open(dir, &desc_gpt2, ...) reads a folder into a
 * Gpt2Config and Gpt2Weights). */
extern const RtArch arch_gpt2;
extern const ArchDesc desc_gpt2;
/* 0 when cfg describes a model the forward computes (sizes positive, n_head
 * divides n_embd, a known activation, ln_eps >= 0), else -ATTN_E_HEADS,
 * -ATTN_E_SHAPE or -ATTN_E_UNSUPPORTED with a detail in err. */
int gpt2_config_check(const void *cfg /* a Gpt2Config */, AttnErr *err);

#endif
