/* config.json → Gpt2Config: Hugging Face's GPT2Config as save_pretrained
 * writes it, its defaults where it leaves a key out; every size from the
 * file (none from constants), each checked. Not the weights (gpt2_file.c). */
#include "attnviz/gpt2io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_json.h"

#define HF_GPT2_BOS 50256 /* GPT2Config's bos_token_id and eos_token_id */

/* A size: its name, the name GPT2Config's attribute_map also accepts, the
 * largest value taken. */
static const struct {
    const char *key, *alias;
    int max;
    size_t off;
} sizes[] = {
    {"n_layer", "num_hidden_layers", 4096, offsetof(Gpt2Config, n_layer)},
    {"n_head", "num_attention_heads", 4096, offsetof(Gpt2Config, n_head)},
    {"n_embd", "hidden_size", 1 << 17, offsetof(Gpt2Config, n_embd)},
    {"n_positions", "max_position_embeddings", 1 << 20, offsetof(Gpt2Config, n_positions)},
    {"vocab_size", NULL, 1 << 24, offsetof(Gpt2Config, n_vocab)},
};

static int parse_sizes(Gpt2Config *cfg, const cJSON *root, const char *name, AttnErr *err)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const cJSON *v = hf_json_item(root, sizes[i].key);
        const char *key = sizes[i].key;
        if (!v && (v = hf_json_item(root, sizes[i].alias)) != NULL)
            key = sizes[i].alias;
        if (!v)
            return attn_err_set(err, ATTN_E_PARSE, name, 0, "no \"%s\": a GPT-2 config.json "
                                "gives every size", sizes[i].key);
        int *out = (int *)((char *)cfg + sizes[i].off);
        if (!hf_json_whole(v, 1, sizes[i].max, out))
            return attn_err_set(err, ATTN_E_RANGE, name, 0,
                                "\"%s\" must be a whole number from 1 to %d", key, sizes[i].max);
    }
    const cJSON *v = hf_json_item(root, "n_inner");
    if (!v || cJSON_IsNull(v))
        cfg->n_inner = 4 * cfg->n_embd;
    else if (!hf_json_whole(v, 1, 1 << 20, &cfg->n_inner))
        return attn_err_set(err, ATTN_E_RANGE, name, 0,
                            "\"n_inner\" must be null or a whole number from 1 to %d", 1 << 20);
    if (cfg->n_embd % cfg->n_head != 0)
        return attn_err_set(err, ATTN_E_HEADS, name, 0,
                            "n_embd %d does not divide by n_head %d", cfg->n_embd, cfg->n_head);
    return 0;
}

/* A token id: 50256 when absent, -1 when null or outside the vocabulary. */
static int parse_token(int *out, const cJSON *root, const char *key, int n_vocab,
                       const char *name, AttnErr *err)
{
    const cJSON *v = hf_json_item(root, key);
    int id = HF_GPT2_BOS;
    if (v && cJSON_IsNull(v))
        id = -1;
    else if (v && !hf_json_whole(v, 0, 2147483647.0, &id))
        return attn_err_set(err, ATTN_E_RANGE, name, 0,
                            "\"%s\" must be null or a whole number from 0", key);
    *out = id < n_vocab ? id : -1;
    return 0;
}

static int parse_act(Gpt2Config *cfg, const cJSON *root, const char *name, AttnErr *err)
{
    static const struct {
        const char *name;
        Gpt2Act act;
    } acts[] = {
        {"gelu_new", GPT2_ACT_GELU_TANH},
        {"gelu_pytorch_tanh", GPT2_ACT_GELU_TANH},
        {"gelu", GPT2_ACT_GELU_ERF},
        {"relu", GPT2_ACT_RELU},
    };
    const cJSON *v = hf_json_item(root, "activation_function");
    cfg->act = GPT2_ACT_GELU_TANH;
    if (!v)
        return 0;
    if (!cJSON_IsString(v) || !v->valuestring)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "\"activation_function\" must be a string");
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (strcmp(v->valuestring, acts[i].name) == 0) {
            cfg->act = acts[i].act;
            return 0;
        }
    return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                        "activation_function \"%.60s\" is not computed (gelu_new, "
                        "gelu_pytorch_tanh, gelu or relu)", v->valuestring);
}

static int parse_root(Gpt2Config *cfg, const cJSON *root, const char *name, AttnErr *err)
{
    if (!cJSON_IsObject(root))
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "not a JSON object");
    const cJSON *mt = hf_json_item(root, "model_type");
    if (!mt)
        return attn_err_set(err, ATTN_E_PARSE, name, 0,
                            "no \"model_type\" (a GPT-2's is \"gpt2\")");
    if (!cJSON_IsString(mt) || !mt->valuestring)
        return attn_err_set(err, ATTN_E_PARSE, name, 0, "\"model_type\" must be a string");
    if (strcmp(mt->valuestring, "gpt2") != 0)
        return attn_err_set(err, ATTN_E_UNSUPPORTED, name, 0,
                            "model_type is \"%.60s\": attnviz computes GPT-2 models "
                            "(model_type \"gpt2\") only", mt->valuestring);
    int rc = parse_sizes(cfg, root, name, err);
    if (rc < 0)
        return rc;
    const cJSON *eps = hf_json_item(root, "layer_norm_epsilon");
    cfg->ln_eps = eps && cJSON_IsNumber(eps) ? (float)eps->valuedouble : 1e-5f;
    if (eps && (!cJSON_IsNumber(eps) || !(cfg->ln_eps > 0 && cfg->ln_eps < 1)))
        return attn_err_set(err, ATTN_E_RANGE, name, 0, "\"layer_norm_epsilon\" must be a "
                            "number above 0 and below 1 (as a float)");
    rc = parse_act(cfg, root, name, err);
    if (rc == 0)
        rc = hf_json_bool(&cfg->scale_attn_weights, root, "scale_attn_weights", 1, name, err);
    if (rc == 0)
        rc = hf_json_bool(&cfg->scale_by_inverse_layer_idx, root,
                        "scale_attn_by_inverse_layer_idx", 0, name, err);
    if (rc == 0)
        rc = parse_token(&cfg->bos_id, root, "bos_token_id", cfg->n_vocab, name, err);
    if (rc == 0)
        rc = parse_token(&cfg->eos_id, root, "eos_token_id", cfg->n_vocab, name, err);
    return rc;
}

int gpt2_config_parse(Gpt2Config *cfg, const char *text, size_t len, const char *name,
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
