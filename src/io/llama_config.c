/* config.json → LlamaConfig for model_type llama, qwen2 and mistral:
 * transformers' LlamaConfig, Qwen2Config and MistralConfig as
 * save_pretrained writes them, their defaults where a key is left out;
 * rope_scaling none or llama3, every other choice the forward does not
 * compute refused by name. Not the weights (llama_file.c). */
#include "attnviz/llamaio.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attnviz/llama.h"
#include "hf_json.h"

static const struct {
    const char *name;
    LlamaArch arch;
    int max_pos; /* max_position_embeddings when absent */
} archs[] = {
    {"llama", LLAMA_ARCH_LLAMA, 2048},
    {"qwen2", LLAMA_ARCH_QWEN2, 32768},
    {"mistral", LLAMA_ARCH_MISTRAL, 4096 * 32},
};

/* A required size: its key, the largest value taken. */
static const struct {
    const char *key;
    int max;
    size_t off;
} sizes[] = {
    {"hidden_size", 1 << 17, offsetof(LlamaConfig, hidden)},
    {"num_hidden_layers", 4096, offsetof(LlamaConfig, n_layer)},
    {"num_attention_heads", 4096, offsetof(LlamaConfig, n_head)},
    {"intermediate_size", 1 << 20, offsetof(LlamaConfig, n_inner)},
    {"vocab_size", 1 << 24, offsetof(LlamaConfig, n_vocab)},
};

/* An optional whole number from 1 to max: dflt when absent or null. */
static int opt_size(int *out, const cJSON *root, const char *key, int dflt, int max,
                    const char *name, AttnErr *err)
{
    const cJSON *v = hf_json_item(root, key);
    *out = dflt;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!hf_json_whole(v, 1, max, out))
        return attn_err_set(err, ATTN_E_RANGE, name, 0,
                            "\"%s\" must be null or a whole number from 1 to %d", key, max);
    return 0;
}

/* An optional number above lo (and below hi): dflt when absent or null. */
static int opt_number(double *out, const cJSON *root, const char *key, double dflt, double lo,
                      double hi, const char *name, AttnErr *err)
{
    const cJSON *v = hf_json_item(root, key);
    *out = dflt;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || !(v->valuedouble > lo && v->valuedouble < hi))
        return attn_err_set(err, ATTN_E_RANGE, name, 0,
                            "\"%s\" must be a number above %g and below %g", key, lo, hi);
    *out = v->valuedouble;
    return 0;
}

static int parse_sizes(LlamaConfig *c, const cJSON *root, int max_pos, const char *name,
                       AttnErr *err)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const cJSON *v = hf_json_item(root, sizes[i].key);
        if (!v)
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "no \"%s\": a Llama-family "
                                "config.json gives it", sizes[i].key);
        if (!hf_json_whole(v, 1, sizes[i].max, (int *)((char *)c + sizes[i].off)))
            return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                "\"%s\" must be a whole number from 1 to %d", sizes[i].key,
                                sizes[i].max);
    }
    int rc = opt_size(&c->n_kv_head, root, "num_key_value_heads", c->n_head, 4096, name, err);
    if (rc == 0)
        rc = opt_size(&c->n_positions, root, "max_position_embeddings", max_pos, 1 << 22, name,
                      err);
    if (rc == 0)
        rc = opt_size(&c->head_dim, root, "head_dim", 0, 1 << 14, name, err);
    if (rc < 0)
        return rc;
    if (c->n_head % c->n_kv_head)
        return attn_err_set(err, ATTN_E_HEADS, name, 0,
                            "num_attention_heads %d is not divisible by num_key_value_heads %d",
                            c->n_head, c->n_kv_head);
    if (!c->head_dim) {
        if (c->hidden % c->n_head)
            return attn_err_set(err, ATTN_E_HEADS, name, 0,
                                "hidden_size %d is not divisible by num_attention_heads %d (and "
                                "no head_dim)", c->hidden, c->n_head);
        c->head_dim = c->hidden / c->n_head;
    }
    return 0;
}

/* A number of the llama3 block, which must be there. */
static int llama3_number(double *out, const cJSON *rs, const char *key, const char *name,
                         AttnErr *err)
{
    const cJSON *v = hf_json_item(rs, key);
    if (!v || cJSON_IsNull(v))
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "rope_scaling of type llama3 has no \"%s\"", key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble))
        return attn_err_set(err, ATTN_E_RANGE, name, 0,
                            "rope_scaling's \"%s\" must be a positive number", key);
    *out = v->valuedouble;
    return 0;
}

static int parse_rope(LlamaConfig *c, const cJSON *root, const char *name, AttnErr *err)
{
    int rc = opt_number(&c->rope_theta, root, "rope_theta", 10000.0, 0.0, 1e30, name, err);
    const cJSON *rs = hf_json_item(root, "rope_scaling");
    if (rc < 0 || !rs || cJSON_IsNull(rs))
        return rc;
    if (!cJSON_IsObject(rs))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"rope_scaling\" must be null or an "
                            "object");
    const cJSON *t = hf_json_item(rs, "rope_type");
    if (!t)
        t = hf_json_item(rs, "type");
    if (!cJSON_IsString(t) || !t->valuestring)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "rope_scaling has no \"rope_type\" (or \"type\") string");
    if (strcmp(t->valuestring, "default") == 0)
        return 0;
    if (strcmp(t->valuestring, "llama3") != 0)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                            "rope_scaling type \"%.60s\" is not computed (none, \"default\" or "
                            "\"llama3\")", t->valuestring);
    double orig = 0;
    c->rope_llama3 = 1;
    rc = llama3_number(&c->rope_factor, rs, "factor", name, err);
    if (rc == 0)
        rc = llama3_number(&c->rope_low_freq, rs, "low_freq_factor", name, err);
    if (rc == 0)
        rc = llama3_number(&c->rope_high_freq, rs, "high_freq_factor", name, err);
    if (rc == 0)
        rc = llama3_number(&orig, rs, "original_max_position_embeddings", name, err);
    if (rc == 0 && (orig != floor(orig) || orig > (1 << 24)))
        rc = attn_err_set(err, ATTN_E_RANGE, name, 0, "rope_scaling's "
                          "\"original_max_position_embeddings\" must be a whole number");
    if (rc == 0 && !(c->rope_high_freq > c->rope_low_freq))
        rc = attn_err_set(err, ATTN_E_RANGE, name, 0, "rope_scaling's high_freq_factor %g must "
                          "be above its low_freq_factor %g", c->rope_high_freq,
                          c->rope_low_freq);
    if (rc == 0)
        c->rope_orig_max = (int)orig;
    return rc;
}

/* A string key that must be value when present. */
static int only(const cJSON *root, const char *key, const char *value, const char *name,
                AttnErr *err)
{
    const cJSON *v = hf_json_item(root, key);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsString(v) || !v->valuestring)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"%s\" must be a string", key);
    if (strcmp(v->valuestring, value) != 0)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                            "%s \"%.60s\" is not computed (only \"%s\")", key, v->valuestring,
                            value);
    return 0;
}

/* A token id: -1 when absent, null or outside the vocabulary; a list's first. */
static int parse_token(int *out, const cJSON *root, const char *key, int n_vocab,
                       const char *name, AttnErr *err)
{
    const cJSON *v = hf_json_item(root, key);
    int id = -1;
    if (cJSON_IsArray(v))
        v = v->child;
    if (v && !cJSON_IsNull(v) && !hf_json_whole(v, 0, 2147483647.0, &id))
        return attn_err_set(err, ATTN_E_RANGE, name, 0,
                            "\"%s\" must be null, a whole number from 0 or a list of them", key);
    *out = id < n_vocab ? id : -1;
    return 0;
}

/* The sliding window: Mistral's sliding_window, Qwen2's when
 * use_sliding_window is true; 0 for none. */
static int parse_window(LlamaConfig *c, const cJSON *root, const char *name, AttnErr *err)
{
    int use = c->arch == LLAMA_ARCH_MISTRAL, rc = 0;
    if (c->arch == LLAMA_ARCH_QWEN2)
        rc = hf_json_bool(&use, root, "use_sliding_window", 0, name, err);
    if (rc == 0 && use)
        rc = opt_size(&c->sliding_window, root, "sliding_window", 0, 1 << 30, name, err);
    return rc;
}

static int parse_root(LlamaConfig *c, const cJSON *root, const char *name, AttnErr *err)
{
    if (!cJSON_IsObject(root))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "not a JSON object");
    const cJSON *mt = hf_json_item(root, "model_type");
    if (!cJSON_IsString(mt) || !mt->valuestring)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "no \"model_type\" string (llama, qwen2 or mistral)");
    size_t a = 0, n_archs = sizeof archs / sizeof archs[0];
    while (a < n_archs && strcmp(mt->valuestring, archs[a].name) != 0)
        a++;
    if (a == n_archs)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                            "model_type \"%.60s\" is not a Llama-family model (llama, qwen2 or "
                            "mistral)", mt->valuestring);
    c->arch = archs[a].arch;
    int rc = parse_sizes(c, root, archs[a].max_pos, name, err);
    double eps = 0;
    if (rc == 0)
        rc = opt_number(&eps, root, "rms_norm_eps", 1e-6, 0.0, 1.0, name, err);
    c->rms_eps = (float)eps;
    if (rc == 0)
        rc = parse_rope(c, root, name, err);
    if (rc == 0)
        rc = only(root, "hidden_act", "silu", name, err);
    if (rc == 0)
        rc = hf_json_bool(&c->tied, root, "tie_word_embeddings", 0, name, err);
    int bias = 0, mlp_bias = 0;
    if (rc == 0 && c->arch == LLAMA_ARCH_LLAMA)
        rc = hf_json_bool(&bias, root, "attention_bias", 0, name, err);
    c->qkv_bias = bias || c->arch == LLAMA_ARCH_QWEN2;
    c->o_bias = bias;
    if (rc == 0)
        rc = hf_json_bool(&mlp_bias, root, "mlp_bias", 0, name, err);
    if (rc == 0 && mlp_bias)
        rc = attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0, "mlp_bias true is not computed");
    if (rc == 0)
        rc = parse_window(c, root, name, err);
    if (rc == 0)
        rc = parse_token(&c->bos_id, root, "bos_token_id", c->n_vocab, name, err);
    if (rc == 0)
        rc = parse_token(&c->eos_id, root, "eos_token_id", c->n_vocab, name, err);
    if (rc == 0)
        rc = llama_config_check(c, err);
    if (rc < 0 && err && !err->file[0])
        snprintf(err->file, sizeof err->file, "%s", name);
    return rc;
}

int llama_config_parse(LlamaConfig *cfg, const char *text, size_t len, const char *name,
                       AttnErr *err)
{
    memset(cfg, 0, sizeof *cfg);
    if (!name)
        name = "config.json";
    cJSON *root = hf_json_parse(text, len, name, err);
    if (!root)
        return -ATTN_E_PARSE;
    int rc = parse_root(cfg, root, name, err);
    cJSON_Delete(root);
    if (rc < 0)
        memset(cfg, 0, sizeof *cfg);
    return rc;
}
