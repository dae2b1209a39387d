/* Fuzz harness logic for the Llama family's config.json reader
 * (model_config_parse with desc_llama), shared by the libFuzzer target
 * fuzz_llama_config.c and tests/test_fuzz_regress.c: NULL when every
 * invariant held, else what did not. Inputs above the cap are ignored. */
#ifndef ATTNVIZ_FUZZ_HARNESS_LLAMA_H
#define ATTNVIZ_FUZZ_HARNESS_LLAMA_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/llama.h"
#include "attnviz/model_file.h"

#define FUZZ_LLAMA_CONFIG_MAX (1u << 16)

/* On error: err.code is -rc, a message, the file named, the config zeroed.
 * On success: a known architecture, every size at least 1, KV dividing H,
 * head_dim even, eps in [0, 1), θ positive and finite, llama3's numbers
 * positive with high above low, flags 0 or 1 (qwen2: q, k, v biases and no
 * o bias), bos and eos -1 or in the vocabulary, and the forward's own
 * check agreeing. */
static inline const char *fuzz_check_llama_config(const uint8_t *data, size_t size)
{
    static const LlamaConfig zero;
    if (size > FUZZ_LLAMA_CONFIG_MAX)
        return NULL;
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return NULL;
    if (size)
        memcpy(copy, data, size);
    LlamaConfig c;
    memset(&c, 0x5a, sizeof c);
    AttnErr err;
    memset(&err, 0, sizeof err);
    int rc = model_config_parse(&desc_llama, &c, copy, size, "fuzz", &err);
    free(copy);
    if (rc == -ATTN_E_NOMEM)
        return NULL;
    if (rc != 0) {
        if (err.code != -rc || err.code <= 0 || err.code >= ATTN_E_COUNT_)
            return "err.code is not -rc";
        if (!memchr(err.msg, '\0', sizeof err.msg) || err.msg[0] == '\0')
            return "error without a message";
        if (strcmp(err.file, "fuzz") != 0)
            return "error does not name the file";
        return memcmp(&c, &zero, sizeof c) ? "the config is not zeroed on error" : NULL;
    }
    if ((unsigned)c.arch > LLAMA_ARCH_MISTRAL)
        return "architecture out of range";
    if (c.n_layer < 1 || c.n_head < 1 || c.n_kv_head < 1 || c.head_dim < 1 || c.hidden < 1 ||
        c.n_inner < 1 || c.n_positions < 1 || c.n_vocab < 1)
        return "a size below 1";
    if (c.n_head % c.n_kv_head || c.head_dim % 2)
        return "key-value heads do not divide the heads, or head_dim odd";
    if (!(c.rms_eps >= 0.0f && c.rms_eps < 1.0f))
        return "rms_norm_eps out of [0, 1)";
    if (!(c.rope_theta > 0.0) || !isfinite(c.rope_theta))
        return "rope_theta not positive and finite";
    if (c.rope_llama3 && !(c.rope_factor > 0 && c.rope_low_freq > 0 &&
                           c.rope_high_freq > c.rope_low_freq && c.rope_orig_max > 0))
        return "llama3 scaling numbers out of range";
    if ((c.rope_llama3 | c.qkv_bias | c.o_bias | c.tied) & ~1)
        return "a flag not 0 or 1";
    if (c.arch == LLAMA_ARCH_QWEN2 && (!c.qkv_bias || c.o_bias))
        return "qwen2 without its q, k, v biases, or with an o bias";
    if (c.o_bias && !c.qkv_bias)
        return "an o bias without q, k, v biases";
    if (c.sliding_window < 0)
        return "a negative sliding window";
    if (c.bos_id < -1 || c.bos_id >= c.n_vocab || c.eos_id < -1 || c.eos_id >= c.n_vocab)
        return "bos or eos outside -1 .. n_vocab - 1";
    if (llama_config_check(&c, &err) != 0)
        return "llama_config_check refuses what the parser accepted";
    return NULL;
}

#endif
