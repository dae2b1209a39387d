/* Tests for the model reader on GPT-2 (src/io/safetensors.c, model_config.c,
 * model_file.c with core/arch_gpt2.c's tables) on the folders of
 * tests/fixtures/gpt2/make_gpt2_fixtures.py and assets/models/nano-sort:
 * config and sizes, both name prefixes, the buffers ignored, tied and untied
 * output layers, weights spot-checked against the script's numbers (F16 and
 * BF16 converted here independently), float32 used in place; and every bad
 * input refused with its code and a message naming the file or tensor:
 * headers (too large, truncated at every byte, overlapping or out-of-range
 * offsets, unknown dtypes), shapes, missing tensors, n_layer, dtypes,
 * model_type, n_embd % n_head, pytorch_model.bin only, shards. Run from the
 * repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/gpt2.h"
#include "attnviz/model_file.h"

#include "test_gpt2_fs.h"

#define CFG(m) ((const Gpt2Config *)(m)->cfg)
#define WTS(m) ((const Gpt2Weights *)(m)->weights)

static const char *const fixtures[] = {"f32-h3", "f32-bare-h4", "f16-h5", "bf16-h6",
                                       "f32-h1-noscale", "f32-h2-erf", "f32-h2-relu"};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

/* ---- helpers -------------------------------------------------------------------- */

/* rc is -code, err has that code and a message holding piece (and, when
 * file is not NULL, names a file holding it). */
/* IEEE half and bfloat16 → float from the definitions (not the core's). */
static float half_bits(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
    float v = e == 0 ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 0x400), e - 25);
    return sign ? -v : v;
}

static float bf16_bits(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static int json_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valueint;
}

/* The weight called full (a file's name) in m, or NULL. */
static const float *weight_of(const ModelFile *m, const char *full)
{
    static const struct {
        const char *name;
        size_t off;
    } layer[] = {
        {"ln_1.weight", offsetof(Gpt2Layer, ln1_w)},
        {"ln_1.bias", offsetof(Gpt2Layer, ln1_b)},
        {"attn.c_attn.weight", offsetof(Gpt2Layer, attn_w)},
        {"attn.c_attn.bias", offsetof(Gpt2Layer, attn_b)},
        {"attn.c_proj.weight", offsetof(Gpt2Layer, proj_w)},
        {"attn.c_proj.bias", offsetof(Gpt2Layer, proj_b)},
        {"ln_2.weight", offsetof(Gpt2Layer, ln2_w)},
        {"ln_2.bias", offsetof(Gpt2Layer, ln2_b)},
        {"mlp.c_fc.weight", offsetof(Gpt2Layer, fc_w)},
        {"mlp.c_fc.bias", offsetof(Gpt2Layer, fc_b)},
        {"mlp.c_proj.weight", offsetof(Gpt2Layer, mproj_w)},
        {"mlp.c_proj.bias", offsetof(Gpt2Layer, mproj_b)},
    };
    const Gpt2Weights *w = WTS(m);
    if (!strcmp(full, "lm_head.weight"))
        return w->lm_head;
    size_t pl = strlen(m->prefix);
    if (strncmp(full, m->prefix, pl) != 0)
        return NULL;
    const char *n = full + pl;
    if (!strcmp(n, "wte.weight"))
        return w->wte;
    if (!strcmp(n, "wpe.weight"))
        return w->wpe;
    if (!strcmp(n, "ln_f.weight"))
        return w->lnf_w;
    if (!strcmp(n, "ln_f.bias"))
        return w->lnf_b;
    int l, at = 0;
    if (sscanf(n, "h.%d.%n", &l, &at) != 1 || !at || l < 0 || l >= CFG(m)->n_layer)
        return NULL;
    for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++)
        if (!strcmp(n + at, layer[i].name))
            return *(const float *const *)((const char *)&w->layers[l] + layer[i].off);
    return NULL;
}

/* Every spot value of ref.json equals the weight's float, and the float its
 * raw bits make in the file's dtype. */
static void check_spots(const ModelFile *m, const cJSON *ref, const char *dtype)
{
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(ref, "spots")) {
        const char *name = cJSON_GetObjectItemCaseSensitive(s, "tensor")->valuestring;
        const char *bits = cJSON_GetObjectItemCaseSensitive(s, "bits")->valuestring;
        int i = json_int(s, "index");
        float want = (float)cJSON_GetObjectItemCaseSensitive(s, "value")->valuedouble;
        const float *w = weight_of(m, name);
        if (!w)
            fail_msg("%s: no weight %s", m->dir, name);
        uint32_t u = (uint32_t)strtoul(bits, NULL, 16);
        float from_bits;
        if (!strcmp(dtype, "F16"))
            from_bits = half_bits((uint16_t)u);
        else if (!strcmp(dtype, "BF16"))
            from_bits = bf16_bits((uint16_t)u);
        else
            memcpy(&from_bits, &u, sizeof from_bits);
        if (memcmp(&w[i], &want, sizeof want) || memcmp(&from_bits, &want, sizeof want))
            fail_msg("%s: %s[%d] is %.9g; the script stored %.9g (bits %s: %.9g)", m->dir, name,
                     i, (double)w[i], (double)want, bits, (double)from_bits);
    }
}

static ModelFile *open_ok(const char *dir)
{
    ModelFile *m = NULL;
    AttnErr err = {0};
    int rc = model_file_open(dir, &desc_gpt2, &m, &err);
    if (rc != 0)
        fail_msg("%s: %s (%s)", dir, err.msg, err.file);
    assert_non_null(m);
    return m;
}

/* ---- every fixture ------------------------------------------------------------------ */

static void opens_fixtures(void **state)
{
    (void)state;
    for (size_t f = 0; f < N_FIXTURES; f++) {
        char dir[256], path[300];
        snprintf(dir, sizeof dir, GPT2_FIX "%s", fixtures[f]);
        snprintf(path, sizeof path, "%s/ref.json", dir);
        cJSON *ref = read_json(path);
        ModelFile *m = open_ok(dir);
        const Gpt2Config *c = CFG(m);
        assert_int_equal(c->n_layer, json_int(ref, "n_layer"));
        assert_int_equal(c->n_head, json_int(ref, "n_head"));
        assert_int_equal(c->n_embd, json_int(ref, "n_embd"));
        assert_int_equal(c->n_inner, json_int(ref, "n_inner"));
        assert_int_equal(c->n_positions, json_int(ref, "n_positions"));
        assert_int_equal(c->n_vocab, json_int(ref, "vocab_size"));
        assert_int_equal(c->bos_id, c->n_vocab - 1); /* the fixtures' <|endoftext|> */
        assert_int_equal(c->eos_id, c->n_vocab - 1);
        const char *dtype = cJSON_GetObjectItemCaseSensitive(ref, "dtype")->valuestring;
        assert_string_equal(m->prefix,
                            cJSON_GetObjectItemCaseSensitive(ref, "prefix")->valuestring);
        int tied = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "tied"));
        assert_int_equal(m->tied, tied);
        if (tied)
            assert_ptr_equal(WTS(m)->lm_head, WTS(m)->wte);
        else
            assert_true(WTS(m)->lm_head != WTS(m)->wte);
        /* float32 in place; F16/BF16: every weight converted, once */
        int n_weights = 4 + 12 * c->n_layer + !tied;
        assert_int_equal(m->n_converted, strcmp(dtype, "F32") ? n_weights : 0);
        assert_true(!strcmp(dtype, "F32") == (m->converted_bytes == 0));
        assert_int_equal(m->n_shards, 1);
        assert_non_null(m->vocab_path);
        assert_non_null(strstr(m->vocab_path, "/vocab.json"));
        assert_non_null(strstr(m->merges_path, "/merges.txt"));
        assert_null(m->tokenizer_path);
        check_spots(m, ref, dtype);
        model_file_close(m);
        cJSON_Delete(ref);
    }
    model_file_close(NULL);
}

static void fixture_configs(void **state)
{
    (void)state;
    ModelFile *m = open_ok(GPT2_FIX "f16-h5");
    assert_int_equal(CFG(m)->act, GPT2_ACT_GELU_TANH); /* gelu_pytorch_tanh */
    assert_true(CFG(m)->ln_eps == 1e-2f);
    assert_int_equal(CFG(m)->scale_attn_weights, 1);
    assert_int_equal(CFG(m)->scale_by_inverse_layer_idx, 1);
    model_file_close(m);
    m = open_ok(GPT2_FIX "f32-h1-noscale");
    assert_int_equal(CFG(m)->scale_attn_weights, 0);
    assert_int_equal(CFG(m)->scale_by_inverse_layer_idx, 0);
    assert_true(CFG(m)->ln_eps == 1e-5f);
    model_file_close(m);
    m = open_ok(GPT2_FIX "f32-h2-erf");
    assert_int_equal(CFG(m)->act, GPT2_ACT_GELU_ERF);
    assert_int_equal(CFG(m)->n_inner, 20);
    model_file_close(m);
    m = open_ok(GPT2_FIX "f32-h2-relu");
    assert_int_equal(CFG(m)->act, GPT2_ACT_RELU);
    model_file_close(m);
    m = open_ok(GPT2_FIX "f32-bare-h4"); /* the old style: no n_inner, n_ctx */
    assert_int_equal(CFG(m)->n_inner, 64);
    assert_int_equal(CFG(m)->act, GPT2_ACT_GELU_TANH);
    model_file_close(m);
}

/* llm-viz's trained sorter, converted: 3 × 3 heads, n_embd 48, A B C, 11
 * positions, its own output layer. */
static void opens_nano_sort(void **state)
{
    (void)state;
    ModelFile *m = open_ok("assets/models/nano-sort");
    const Gpt2Config *c = CFG(m);
    assert_int_equal(c->n_layer, 3);
    assert_int_equal(c->n_head, 3);
    assert_int_equal(c->n_embd, 48);
    assert_int_equal(c->n_inner, 192);
    assert_int_equal(c->n_positions, 11);
    assert_int_equal(c->n_vocab, 3);
    assert_int_equal(c->bos_id, -1);
    assert_int_equal(c->eos_id, -1);
    assert_int_equal(m->tied, 0);
    assert_int_equal(m->n_converted, 0);
    assert_string_equal(m->prefix, "");
    assert_non_null(m->vocab_path);
    model_file_close(m);
}

/* ---- config.json -------------------------------------------------------------------- */

static int parse_cfg(Gpt2Config *c, const char *text, AttnErr *err)
{
    return model_config_parse(&desc_gpt2, c, text, strlen(text), "config.json", err);
}

#define SIZES "\"n_layer\": 2, \"n_head\": 3, \"n_embd\": 24, \"n_positions\": 16"

static void config_defaults(void **state)
{
    (void)state;
    Gpt2Config c;
    AttnErr err = {0};
    assert_int_equal(parse_cfg(&c, "{\"model_type\": \"gpt2\", " SIZES
                                    ", \"vocab_size\": 50257}", &err), 0);
    assert_int_equal(c.n_layer, 2);
    assert_int_equal(c.n_head, 3);
    assert_int_equal(c.n_embd, 24);
    assert_int_equal(c.n_positions, 16);
    assert_int_equal(c.n_vocab, 50257);
    assert_int_equal(c.n_inner, 96);
    assert_true(c.ln_eps == 1e-5f);
    assert_int_equal(c.act, GPT2_ACT_GELU_TANH);
    assert_int_equal(c.scale_attn_weights, 1);
    assert_int_equal(c.scale_by_inverse_layer_idx, 0);
    assert_int_equal(c.bos_id, 50256);
    assert_int_equal(c.eos_id, 50256);
    /* null n_inner, null ids, ids outside a small vocabulary, the aliases */
    assert_int_equal(parse_cfg(&c, "{\"model_type\": \"gpt2\", \"num_hidden_layers\": 1, "
                                    "\"num_attention_heads\": 5, \"hidden_size\": 20, "
                                    "\"max_position_embeddings\": 7, \"vocab_size\": 9, "
                                    "\"n_inner\": null, \"bos_token_id\": null, "
                                    "\"activation_function\": \"relu\", "
                                    "\"layer_norm_epsilon\": 1e-12}", &err), 0);
    assert_int_equal(c.n_layer, 1);
    assert_int_equal(c.n_head, 5);
    assert_int_equal(c.n_inner, 80);
    assert_int_equal(c.n_positions, 7);
    assert_int_equal(c.bos_id, -1);
    assert_int_equal(c.eos_id, -1);
    assert_int_equal(c.act, GPT2_ACT_RELU);
    assert_true(c.ln_eps == 1e-12f);
}

static const struct {
    const char *text;
    int code;
    const char *piece;
    long line;
} bad_configs[] = {
    {"{\"model_type\": \"llama\", " SIZES ", \"vocab_size\": 9}", ATTN_E_UNSUPPORTED,
     "model_type is \"llama\"", 0},
    {"{" SIZES ", \"vocab_size\": 9}", ATTN_E_PARSE, "no \"model_type\"", 0},
    {"{\"model_type\": 2, " SIZES ", \"vocab_size\": 9}", ATTN_E_PARSE, "must be a string", 0},
    {"{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_head\": 5, \"n_embd\": 24, "
     "\"n_positions\": 16, \"vocab_size\": 9}", ATTN_E_HEADS,
     "n_embd 24 does not divide by n_head 5", 0},
    {"{\"model_type\": \"gpt2\", " SIZES ", \"vocab_size\": 9, \"activation_function\": "
     "\"swish\"}", ATTN_E_UNSUPPORTED, "activation_function \"swish\" is not computed", 0},
    {"{\"model_type\": \"gpt2\", " SIZES "}", ATTN_E_PARSE, "no \"vocab_size\"", 0},
    {"{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_head\": 3, \"n_positions\": 16, "
     "\"vocab_size\": 9}", ATTN_E_PARSE, "no \"n_embd\"", 0},
    {"{\"model_type\": \"gpt2\", \"n_layer\": 0, \"n_head\": 3, \"n_embd\": 24, "
     "\"n_positions\": 16, \"vocab_size\": 9}", ATTN_E_RANGE, "\"n_layer\" must be a whole", 0},
    {"{\"model_type\": \"gpt2\", \"n_layer\": 2.5, \"n_head\": 3, \"n_embd\": 24, "
     "\"n_positions\": 16, \"vocab_size\": 9}", ATTN_E_RANGE, "\"n_layer\" must be a whole", 0},
    {"{\"model_type\": \"gpt2\", " SIZES ", \"vocab_size\": 9, \"n_inner\": -4}", ATTN_E_RANGE,
     "\"n_inner\" must be null or", 0},
    {"{\"model_type\": \"gpt2\", " SIZES ", \"vocab_size\": 9, \"layer_norm_epsilon\": 0}",
     ATTN_E_RANGE, "layer_norm_epsilon", 0},
    {"{\"model_type\": \"gpt2\", " SIZES ", \"vocab_size\": 9, \"scale_attn_weights\": 1}",
     ATTN_E_PARSE, "\"scale_attn_weights\" must be true or false", 0},
    {"{\"model_type\": \"gpt2\", " SIZES ", \"vocab_size\": 9, \"eos_token_id\": -1}",
     ATTN_E_RANGE, "\"eos_token_id\" must be null", 0},
    {"{\n\"model_type\": \"gpt2\",\n\"n_layer\": 2,,\n}", ATTN_E_PARSE, "not valid JSON", 3},
    {"{\"model_type\": \"gpt2\"} x", ATTN_E_PARSE, "text after the JSON object", 1},
    {"[1, 2]", ATTN_E_PARSE, "not a JSON object", 0},
    {"", ATTN_E_PARSE, "not valid JSON", 1},
};

static void config_refused(void **state)
{
    (void)state;
    static const Gpt2Config zero;
    for (size_t i = 0; i < sizeof bad_configs / sizeof bad_configs[0]; i++) {
        Gpt2Config c;
        memset(&c, 0x5a, sizeof c);
        AttnErr err = {0};
        int rc = parse_cfg(&c, bad_configs[i].text, &err);
        expect_err(rc, err, bad_configs[i].code, bad_configs[i].piece, "config.json");
        assert_int_equal(err.line, bad_configs[i].line);
        assert_memory_equal(&c, &zero, sizeof c);
        assert_int_equal(parse_cfg(&c, bad_configs[i].text, NULL), -bad_configs[i].code);
    }
}

/* ---- the safetensors header ---------------------------------------------------------- */

/* 8-byte size, the header as given (not padded), then len bytes of data
 * (0, 1, 2, ...), in a buffer of exactly that size; *n its length. */
static unsigned char *st_make(const char *header, size_t len, size_t *n)
{
    size_t h = strlen(header);
    *n = 8 + h + len;
    unsigned char *b = malloc(*n);
    assert_non_null(b);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    for (size_t i = 0; i < len; i++)
        b[8 + h + i] = (unsigned char)i;
    return b;
}

static void safetensors_good(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = st_make("{\"__metadata__\": {\"format\": \"pt\"}, "
                               "\"z\": {\"dtype\": \"F32\", \"shape\": [2, 3], "
                               "\"data_offsets\": [0, 24]}, "
                               "\"a\": {\"dtype\": \"BOOL\", \"shape\": [1, 1, 2, 2], "
                               "\"data_offsets\": [28, 32]}, "
                               "\"m\": {\"dtype\": \"F32\", \"shape\": [], "
                               "\"data_offsets\": [24, 28]}, "
                               "\"e\": {\"dtype\": \"F16\", \"shape\": [0, 4], "
                               "\"data_offsets\": [32, 32]}}    ", 32, &n);
    SafeTensors st;
    AttnErr err = {0};
    assert_int_equal(safetensors_parse(&st, b, n, "x.safetensors", &err), 0);
    assert_int_equal(st.n, 4);
    assert_string_equal(st.t[0].name, "a"); /* sorted by name */
    const SafeTensor *z = safetensors_find(&st, "z"), *m = safetensors_find(&st, "m");
    const SafeTensor *a = safetensors_find(&st, "a"), *e = safetensors_find(&st, "e");
    assert_non_null(z);
    assert_null(safetensors_find(&st, "y"));
    assert_int_equal(z->dtype, SAFE_F32);
    assert_int_equal(z->ndim, 2);
    assert_int_equal(z->shape[1], 3);
    assert_int_equal(z->count, 6);
    assert_int_equal(z->nbytes, 24);
    assert_ptr_equal(z->data, b + n - 32);
    assert_int_equal(m->ndim, 0);
    assert_int_equal(m->count, 1);
    assert_int_equal(a->dtype, SAFE_BOOL);
    assert_int_equal(a->count, 4);
    assert_int_equal(e->count, 0);
    assert_string_equal(safetensors_dtype_name(SAFE_BF16), "BF16");
    assert_int_equal(safetensors_dtype_size(SAFE_I64), 8);
    safetensors_free(&st);
    safetensors_free(&st);
    free(b);
}

#define T1(dt, sh, off) "{\"t\": {\"dtype\": \"" dt "\", \"shape\": " sh \
                        ", \"data_offsets\": " off "}}"

static const struct {
    const char *header;
    size_t data;
    int code;
    const char *piece;
} bad_headers[] = {
    {T1("F32", "[2]", "[0, 8]"), 4, ATTN_E_RANGE, "tensor t: data_offsets [0, 8] go past the 4"},
    {T1("F32", "[2]", "[0, 12]"), 12, ATTN_E_SHAPE, "tensor t: data_offsets [0, 12] hold 12"},
    {T1("F32", "[2]", "[8, 0]"), 12, ATTN_E_PARSE, "begin <= end"},
    {T1("F32", "[2]", "[-8, 0]"), 12, ATTN_E_PARSE, "\"data_offsets\" must be"},
    {T1("F32", "[2]", "[0.5, 8.5]"), 12, ATTN_E_PARSE, "\"data_offsets\" must be"},
    {T1("F32", "[2]", "[0]"), 12, ATTN_E_PARSE, "\"data_offsets\" must be"},
    {T1("F32", "[2]", "[0, 18446744073709551616]"), 12, ATTN_E_PARSE, "\"data_offsets\""},
    {T1("Q4_K", "[2]", "[0, 8]"), 8, ATTN_E_UNSUPPORTED, "tensor t: unknown dtype \"Q4_K\""},
    {T1("F32", "[2, -1]", "[0, 8]"), 8, ATTN_E_PARSE, "tensor t: shape[1] is not a whole"},
    {T1("F32", "[1,1,1,1,1,1,1,1,1]", "[0, 4]"), 4, ATTN_E_UNSUPPORTED, "9 dimensions"},
    {T1("F32", "[4294967296, 4294967296, 4]", "[0, 8]"), 8, ATTN_E_SHAPE, "need more than"},
    {"{\"t\": {\"shape\": [2], \"data_offsets\": [0, 8]}}", 8, ATTN_E_PARSE, "no \"dtype\""},
    {"{\"t\": {\"dtype\": \"F32\", \"data_offsets\": [0, 8]}}", 8, ATTN_E_PARSE, "no \"shape\""},
    {"{\"t\": [1]}", 8, ATTN_E_PARSE, "tensor t is not an object"},
    {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}, "
     "\"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [4, 12]}}", 12,
     ATTN_E_RANGE, "tensors a [0, 8] and b [4, 12] overlap"},
    {"{\"a\": {\"dtype\": \"U8\", \"shape\": [2], \"data_offsets\": [0, 2]}, "
     "\"a\": {\"dtype\": \"U8\", \"shape\": [2], \"data_offsets\": [2, 4]}}", 4,
     ATTN_E_DUPLICATE, "tensor a is in the header twice"},
    {"{\"__metadata__\": [1], \"t\": {\"dtype\": \"F32\", \"shape\": [1], "
     "\"data_offsets\": [0, 4]}}", 4, ATTN_E_PARSE, "__metadata__ is not an object"},
    {"[1, 2]", 0, ATTN_E_PARSE, "not one JSON object"},
    {"{\"t\": 1} x", 0, ATTN_E_PARSE, "not one JSON object"},
    {" {}", 0, ATTN_E_PARSE, "not one JSON object"},
    {"{\"t\": ", 0, ATTN_E_PARSE, "not one JSON object"},
    {"", 0, ATTN_E_PARSE, "not one JSON object"},
};

static void safetensors_refused(void **state)
{
    (void)state;
    static const SafeTensors zero;
    for (size_t i = 0; i < sizeof bad_headers / sizeof bad_headers[0]; i++) {
        size_t n;
        unsigned char *b = st_make(bad_headers[i].header, bad_headers[i].data, &n);
        SafeTensors st;
        memset(&st, 0x5a, sizeof st);
        AttnErr err = {0};
        int rc = safetensors_parse(&st, b, n, "bad.safetensors", &err);
        expect_err(rc, err, bad_headers[i].code, bad_headers[i].piece, "bad.safetensors");
        assert_memory_equal(&st, &zero, sizeof st);
        free(b);
    }
    /* a header size over the cap, or past the end */
    unsigned char big[16] = {0, 0, 0, 0x10, 0, 0, 0, 0, '{', '}'};
    SafeTensors st;
    AttnErr err = {0};
    expect_err(safetensors_parse(&st, big, sizeof big, "big", &err), err, ATTN_E_TOO_LARGE,
               "a header of 268435456 bytes; at most 104857600", "big");
    unsigned char past[12] = {9, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
    expect_err(safetensors_parse(&st, past, sizeof past, "past", &err), err, ATTN_E_PARSE,
               "ends inside its 9-byte header", "past");
    expect_err(safetensors_parse(&st, past, 5, "short", &err), err, ATTN_E_PARSE,
               "shorter than the 8-byte header size", "short");
    expect_err(safetensors_parse(&st, NULL, 0, NULL, &err), err, ATTN_E_PARSE, "shorter", NULL);
}

/* Every proper prefix of a real model file is refused, never read past. */
static void safetensors_truncated(void **state)
{
    (void)state;
    size_t len;
    char *s = test_slurp(GPT2_FIX "f32-h1-noscale/model.safetensors", &len);
    assert_non_null(s);
    for (size_t n = 0; n < len; n++) {
        unsigned char *b = malloc(n ? n : 1);
        assert_non_null(b);
        memcpy(b, s, n);
        SafeTensors st;
        AttnErr err = {0};
        int rc = safetensors_parse(&st, b, n, "cut", &err);
        if (rc >= 0 || err.code != -rc || !err.msg[0] || st.n || st.t)
            fail_msg("cut at %zu of %zu: rc %d \"%s\"", n, len, rc, err.msg);
        free(b);
    }
    SafeTensors st;
    assert_int_equal(safetensors_parse(&st, s, len, "whole", NULL), 0);
    safetensors_free(&st);
    /* and through model_file_open, cut in the size, the header, the data */
    char *dir = fs_tmpdir(), p[1024];
    fs_copy_model("f32-h1-noscale", dir);
    size_t cuts[] = {0, 5, 100, len / 2, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        fs_write(fs_join(p, dir, "model.safetensors"), s, cuts[i]);
        ModelFile *m = (ModelFile *)1;
        AttnErr err = {0};
        int rc = model_file_open(dir, &desc_gpt2, &m, &err);
        assert_true(rc < 0);
        assert_null(m);
        assert_non_null(strstr(err.file, "model.safetensors"));
        assert_true(err.msg[0] != '\0');
    }
    fs_rm_tree(dir);
    free(dir);
    free(s);
}

/* ---- model folders that are wrong -------------------------------------------------- */

/* A copy of fixture in a new temp folder, its header edited by edit (when
 * not NULL) and its config.json replaced by config (when not NULL). */
typedef void (*HeaderEdit)(StParts *p);

static char *model_copy(const char *fixture, HeaderEdit edit, const char *config)
{
    char *dir = fs_tmpdir(), p[1024];
    fs_copy_model(fixture, dir);
    if (edit) {
        StParts st = fs_st_read(fs_join(p, dir, "model.safetensors"));
        edit(&st);
        fs_st_write(p, &st);
    }
    if (config)
        fs_write_text(fs_join(p, dir, "config.json"), config);
    return dir;
}

static void open_fails(const char *dir, int code, const char *piece, const char *file)
{
    ModelFile *m = (ModelFile *)1;
    AttnErr err = {0};
    int rc = model_file_open(dir, &desc_gpt2, &m, &err);
    assert_null(m);
    expect_err(rc, err, code, piece, file);
}

static cJSON *entry(StParts *p, const char *name)
{
    cJSON *e = cJSON_GetObjectItemCaseSensitive(p->header, name);
    assert_non_null(e);
    return e;
}

static void set_shape2(cJSON *e, int a, int b)
{
    cJSON_ReplaceItemInObjectCaseSensitive(e, "shape", cJSON_CreateIntArray((int[]){a, b}, 2));
}

static void edit_rename(StParts *p)
{
    cJSON *e = cJSON_DetachItemFromObjectCaseSensitive(p->header, "transformer.h.1.ln_2.bias");
    assert_non_null(e);
    cJSON_AddItemToObject(p->header, "transformer.h.1.ln_2.bias_renamed", e);
}

/* c_attn's [24, 72] said to be [72, 24]: the same bytes, a wrong shape */
static void edit_shape(StParts *p)
{
    set_shape2(entry(p, "transformer.h.0.attn.c_attn.weight"), 72, 24);
}

static void edit_dtype_i32(StParts *p)
{
    cJSON *e = entry(p, "transformer.h.0.mlp.c_fc.bias");
    cJSON_ReplaceItemInObjectCaseSensitive(e, "dtype", cJSON_CreateString("I32"));
}

/* ln_f.bias as 12 F64 numbers: the same 96 bytes */
static void edit_dtype_f64(StParts *p)
{
    cJSON *e = entry(p, "transformer.ln_f.bias");
    cJSON_ReplaceItemInObjectCaseSensitive(e, "dtype", cJSON_CreateString("F64"));
    cJSON_ReplaceItemInObjectCaseSensitive(e, "shape", cJSON_CreateIntArray((int[]){12}, 1));
}

/* wpe's bytes overlapping wte's */
static void edit_overlap(StParts *p)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(entry(p, "transformer.wte.weight"), "data_offsets");
    cJSON *b = cJSON_GetObjectItemCaseSensitive(entry(p, "transformer.wpe.weight"), "data_offsets");
    int begin = cJSON_GetArrayItem(a, 0)->valueint + 4;
    int size = cJSON_GetArrayItem(b, 1)->valueint - cJSON_GetArrayItem(b, 0)->valueint;
    cJSON_ReplaceItemInArray(b, 0, cJSON_CreateNumber(begin));
    cJSON_ReplaceItemInArray(b, 1, cJSON_CreateNumber(begin + size));
}

/* the BOOL buffers as U8 and one as I64 of the same bytes: still ignored */
static void edit_buffers(StParts *p)
{
    cJSON *e = entry(p, "h.0.attn.bias");
    cJSON_ReplaceItemInObjectCaseSensitive(e, "dtype", cJSON_CreateString("I64"));
    cJSON_ReplaceItemInObjectCaseSensitive(e, "shape", cJSON_CreateIntArray((int[]){32}, 1));
    e = entry(p, "h.1.attn.bias");
    cJSON_ReplaceItemInObjectCaseSensitive(e, "dtype", cJSON_CreateString("U8"));
}

static void refuses_bad_models(void **state)
{
    (void)state;
    char *d = model_copy("f32-h3", edit_rename, NULL);
    open_fails(d, ATTN_E_NOT_FOUND, "no tensor transformer.h.1.ln_2.bias", "model.safetensors");
    fs_rm_tree(d);
    free(d);
    d = model_copy("f32-h3", edit_shape, NULL);
    open_fails(d, ATTN_E_SHAPE, "tensor transformer.h.0.attn.c_attn.weight is [72, 24], but "
               "config.json (n_embd 24, n_inner 96, n_positions 16, vocab_size 64) makes it "
               "[24, 72]", "model.safetensors");
    fs_rm_tree(d);
    free(d);
    d = model_copy("f32-h3", edit_dtype_i32, NULL);
    open_fails(d, ATTN_E_UNSUPPORTED, "tensor transformer.h.0.mlp.c_fc.bias is I32: attnviz "
               "reads F32, F16 and BF16 weights", "model.safetensors");
    fs_rm_tree(d);
    free(d);
    d = model_copy("f32-h3", edit_dtype_f64, NULL);
    open_fails(d, ATTN_E_UNSUPPORTED, "tensor transformer.ln_f.bias is F64", "model.safetensors");
    fs_rm_tree(d);
    free(d);
    d = model_copy("f32-h3", edit_overlap, NULL);
    open_fails(d, ATTN_E_RANGE, "overlap", "model.safetensors");
    fs_rm_tree(d);
    free(d);
    d = model_copy("bf16-h6", edit_buffers, NULL);
    ModelFile *m = open_ok(d);
    assert_int_equal(m->tied, 1);
    model_file_close(m);
    fs_rm_tree(d);
    free(d);
}

#define CFG_H3(layers, heads, pos) \
    "{\"model_type\": \"gpt2\", \"n_layer\": " layers ", \"n_head\": " heads \
    ", \"n_embd\": 24, \"n_positions\": " pos ", \"vocab_size\": 64}"

static void refuses_bad_configs_in_folders(void **state)
{
    (void)state;
    char *d = model_copy("f32-h3", NULL, CFG_H3("3", "3", "16"));
    open_fails(d, ATTN_E_SHAPE, "config.json says n_layer 3 but the file has 2 layers (no "
               "transformer.h.2.*)", "model.safetensors");
    fs_rm_tree(d);
    free(d);
    d = model_copy("f32-h3", NULL, CFG_H3("2", "3", "17"));
    open_fails(d, ATTN_E_SHAPE, "tensor transformer.wpe.weight is [16, 24], but config.json",
               "model.safetensors");
    fs_rm_tree(d);
    free(d);
    d = model_copy("f32-h3", NULL, CFG_H3("2", "5", "16"));
    open_fails(d, ATTN_E_HEADS, "n_embd 24 does not divide by n_head 5", "config.json");
    fs_rm_tree(d);
    free(d);
    d = model_copy("f32-h3", NULL, "{\"model_type\": \"gpt_neox\"}");
    open_fails(d, ATTN_E_UNSUPPORTED, "model_type is \"gpt_neox\"", "config.json");
    fs_rm_tree(d);
    free(d);
    /* fewer layers than the file: the first ones (as transformers does) */
    d = model_copy("f32-h3", NULL, CFG_H3("1", "3", "16"));
    ModelFile *m = open_ok(d);
    assert_int_equal(CFG(m)->n_layer, 1);
    model_file_close(m);
    fs_rm_tree(d);
    free(d);
}

static void refuses_bad_folders(void **state)
{
    (void)state;
    char *d = fs_tmpdir(), p[1024], q[1024];
    open_fails(fs_join(p, d, "nope"), ATTN_E_NOT_FOUND, "No such file", "nope");
    open_fails(d, ATTN_E_NOT_FOUND, "no config.json: not a Hugging Face model folder", d);
    fs_copy(GPT2_FIX "f32-h3/config.json", fs_join(p, d, "config.json"));
    open_fails(d, ATTN_E_NOT_FOUND, "no model.safetensors in the folder", d);
    fs_write_text(fs_join(p, d, "pytorch_model.bin"), "PK\3\4 a pickle");
    open_fails(d, ATTN_E_UNSUPPORTED, "has pytorch_model.bin but no model.safetensors; attnviz "
               "never unpickles", d);
    open_fails(fs_join(q, d, "config.json"), ATTN_E_IO, "is not a folder", "config.json");
    fs_write(fs_join(p, d, "model.safetensors"), "", 0);
    open_fails(d, ATTN_E_EMPTY, "empty file", "model.safetensors");
    fs_write_text(fs_join(p, d, "config.json"), "{\"model_type\": \"gpt2\",");
    open_fails(d, ATTN_E_PARSE, "not valid JSON", "config.json");
    fs_rm_tree(d);
    free(d);
    /* the name the download command gives, from a cache folder's path */
    d = fs_tmpdir();
    snprintf(q, sizeof q, "%s/models--openai-community--gpt2", d);
    fs_mkdir(q);
    fs_copy(GPT2_FIX "f32-h3/config.json", fs_join(p, q, "config.json"));
    open_fails(q, ATTN_E_NOT_FOUND, "huggingface-cli download openai-community/gpt2 "
               "model.safetensors", q);
    fs_rm_tree(d);
    free(d);
}

/* ---- float32 not aligned; shards; tokenizer.json ----------------------------------- */

/* Two bytes (a U8 tensor) before all the others: every float32 misaligned. */
static void edit_misalign(StParts *p)
{
    cJSON *e;
    cJSON_ArrayForEach(e, p->header) {
        cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
        for (int k = 0; off && k < 2; k++)
            cJSON_ReplaceItemInArray(off, k,
                                     cJSON_CreateNumber(cJSON_GetArrayItem(off, k)->valueint + 2));
    }
    cJSON *pad = cJSON_CreateObject();
    cJSON_AddStringToObject(pad, "dtype", "U8");
    cJSON_AddItemToObject(pad, "shape", cJSON_CreateIntArray((int[]){2}, 1));
    cJSON_AddItemToObject(pad, "data_offsets", cJSON_CreateIntArray((int[]){0, 2}, 2));
    cJSON_AddItemToObject(p->header, "pad", pad);
    unsigned char *d = malloc(p->len + 2);
    assert_non_null(d);
    d[0] = d[1] = 7;
    memcpy(d + 2, p->data, p->len);
    free(p->data);
    p->data = d;
    p->len += 2;
}

static void misaligned_float32_converted(void **state)
{
    (void)state;
    char *d = model_copy("f32-h2-erf", edit_misalign, NULL);
    ModelFile *m = open_ok(d), *ref = open_ok(GPT2_FIX "f32-h2-erf");
    int n = 4 + 12 * CFG(m)->n_layer + 1; /* and its own lm_head */
    assert_int_equal(m->n_converted, n);
    assert_int_equal(ref->n_converted, 0);
    size_t C = (size_t)CFG(m)->n_embd;
    assert_memory_equal(WTS(m)->wte, WTS(ref)->wte, (size_t)CFG(m)->n_vocab * C * 4);
    assert_memory_equal(WTS(m)->lm_head, WTS(ref)->lm_head,
                        (size_t)CFG(m)->n_vocab * C * 4);
    assert_memory_equal(WTS(m)->layers[1].fc_w, WTS(ref)->layers[1].fc_w,
                        C * (size_t)CFG(m)->n_inner * 4);
    model_file_close(m);
    model_file_close(ref);
    fs_rm_tree(d);
    free(d);
}

/* f32-h3 split into two shards (h.1.* and the rest) with an index. */
static char *sharded_copy(int duplicate)
{
    char *d = fs_tmpdir(), p[1024];
    fs_copy_model("f32-h3", d);
    StParts all = fs_st_read(fs_join(p, d, "model.safetensors"));
    unlink(p);
    StParts part[2];
    cJSON *index = cJSON_CreateObject(), *map = cJSON_AddObjectToObject(index, "weight_map");
    for (int k = 0; k < 2; k++) {
        part[k].header = cJSON_CreateObject();
        part[k].data = malloc(all.len);
        assert_non_null(part[k].data);
        part[k].len = 0;
    }
    cJSON *e;
    cJSON_ArrayForEach(e, all.header) {
        if (!strcmp(e->string, "__metadata__"))
            continue;
        int k = strstr(e->string, ".h.1.") != NULL;
        cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
        int b = cJSON_GetArrayItem(off, 0)->valueint, en = cJSON_GetArrayItem(off, 1)->valueint;
        for (int c = 0; c < 1 + (duplicate && !strcmp(e->string, "transformer.ln_f.bias")); c++) {
            int kk = c ? 1 - k : k;
            cJSON *t = cJSON_Duplicate(e, 1);
            cJSON *o = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
            cJSON_ReplaceItemInArray(o, 0, cJSON_CreateNumber((double)part[kk].len));
            cJSON_ReplaceItemInArray(o, 1, cJSON_CreateNumber((double)(part[kk].len + en - b)));
            memcpy(part[kk].data + part[kk].len, all.data + b, (size_t)(en - b));
            part[kk].len += (size_t)(en - b);
            cJSON_AddItemToObject(part[kk].header, e->string, t);
        }
        cJSON_AddStringToObject(map, e->string, k ? "model-00002-of-00002.safetensors"
                                                  : "model-00001-of-00002.safetensors");
    }
    fs_st_write(fs_join(p, d, "model-00001-of-00002.safetensors"), &part[0]);
    fs_st_write(fs_join(p, d, "model-00002-of-00002.safetensors"), &part[1]);
    char *text = cJSON_Print(index);
    fs_write_text(fs_join(p, d, "model.safetensors.index.json"), text);
    free(text);
    cJSON_Delete(index);
    cJSON_Delete(all.header);
    free(all.data);
    return d;
}

static void opens_shards(void **state)
{
    (void)state;
    char *d = sharded_copy(0), p[1024];
    ModelFile *m = open_ok(d), *ref = open_ok(GPT2_FIX "f32-h3");
    assert_int_equal(m->n_shards, 2);
    size_t C = (size_t)CFG(m)->n_embd;
    for (int l = 0; l < 2; l++)
        assert_memory_equal(WTS(m)->layers[l].attn_w, WTS(ref)->layers[l].attn_w,
                            C * 3 * C * 4);
    assert_memory_equal(WTS(m)->lnf_b, WTS(ref)->lnf_b, C * 4);
    model_file_close(m);
    model_file_close(ref);
    unlink(fs_join(p, d, "model-00002-of-00002.safetensors"));
    open_fails(d, ATTN_E_NOT_FOUND, "No such file", "model-00002-of-00002.safetensors");
    fs_write_text(fs_join(p, d, "model.safetensors.index.json"),
                  "{\"weight_map\": {\"wte.weight\": \"../x.safetensors\"}}");
    open_fails(d, ATTN_E_PARSE, "weight_map[\"wte.weight\"] is not a file name in the folder",
               "index.json");
    fs_write_text(p, "{\"metadata\": {}}");
    open_fails(d, ATTN_E_PARSE, "no \"weight_map\" object", "index.json");
    fs_rm_tree(d);
    free(d);
    d = sharded_copy(1);
    open_fails(d, ATTN_E_DUPLICATE, "tensor transformer.ln_f.bias is in", "model-0000");
    fs_rm_tree(d);
    free(d);
}

static void notes_tokenizer_files(void **state)
{
    (void)state;
    char *d = model_copy("f32-h2-relu", NULL, NULL), p[1024];
    unlink(fs_join(p, d, "merges.txt"));
    fs_write_text(fs_join(p, d, "tokenizer.json"), "{}");
    ModelFile *m = open_ok(d);
    assert_null(m->vocab_path); /* vocab.json without merges.txt: neither */
    assert_null(m->merges_path);
    assert_non_null(m->tokenizer_path);
    assert_string_equal(m->tokenizer_path, p);
    model_file_close(m);
    fs_rm_tree(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opens_fixtures),
        cmocka_unit_test(fixture_configs),
        cmocka_unit_test(opens_nano_sort),
        cmocka_unit_test(config_defaults),
        cmocka_unit_test(config_refused),
        cmocka_unit_test(safetensors_good),
        cmocka_unit_test(safetensors_refused),
        cmocka_unit_test(safetensors_truncated),
        cmocka_unit_test(refuses_bad_models),
        cmocka_unit_test(refuses_bad_configs_in_folders),
        cmocka_unit_test(refuses_bad_folders),
        cmocka_unit_test(misaligned_float32_converted),
        cmocka_unit_test(opens_shards),
        cmocka_unit_test(notes_tokenizer_files),
    };
    return cmocka_run_group_tests_name("gpt2 io", tests, NULL, NULL);
}
