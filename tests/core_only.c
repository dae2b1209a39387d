/* The core alone, linked with src/core's objects, libm, pthreads and
 * utf8proc only (tests/layers.sh runs it): a table made in memory, no file;
 * a model, a session and weights from plain data; an attention file's maps
 * over a buffer; a tiny GPT-2 and a tiny Llama (grouped-query heads) made in
 * memory; GPT-2's tokenizer on a
 * vocabulary made in memory. Exit 0 when every check holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attnfile.h"
#include "attnviz/bpe.h"
#include "attnviz/embed.h"
#include "attnviz/gpt2.h"
#include "attnviz/llama.h"
#include "attnviz/model.h"
#include "attnviz/session_data.h"

static int failures;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "core_only: %s:%d: failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                      \
            failures++;                                                          \
        }                                                                        \
    } while (0)

#define D 4

static const char *const words[] = {"the", "train", "left", "station", "on", "time"};
#define N_WORDS ((int)(sizeof words / sizeof words[0]))

/* The table by hand: words, vectors, dimension names and the index,
 * allocated as embed_destroy frees them. */
static EmbedTable *table_by_hand(void)
{
    EmbedTable *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n = N_WORDS;
    t->d = D;
    t->vectors = malloc(sizeof(float) * N_WORDS * D);
    t->word_off = malloc(sizeof(size_t) * N_WORDS);
    t->words = malloc(64);
    t->dim_buf = malloc(16);
    t->dim_off = malloc(sizeof(size_t) * D);
    t->n_slots = 16;
    t->slots = calloc(t->n_slots, sizeof *t->slots);
    if (!t->vectors || !t->word_off || !t->words || !t->dim_buf || !t->dim_off || !t->slots) {
        embed_destroy(t);
        return NULL;
    }
    size_t off = 0;
    for (int i = 0; i < N_WORDS; i++) {
        size_t n = strlen(words[i]);
        memcpy(t->words + off, words[i], n + 1);
        t->word_off[i] = off;
        off += n + 1;
        for (int k = 0; k < D; k++)
            t->vectors[i * D + k] = (float)((i + 1) * (k % 2 ? -1 : 1)) * 0.25f + (float)k * 0.1f;
        t->slots[embed_hash_probe(t, words[i], n)] = (uint32_t)i + 1;
    }
    for (int k = 0; k < D; k++) {
        snprintf(t->dim_buf + 3 * k, 4, "d%d", k);
        t->dim_off[k] = (size_t)(3 * k);
    }
    return t;
}

/* Every row of head's weights (MODEL_HEAD_AVG: the mean, made first) sums
 * to 1, with masked entries 0 when causal. */
static void check_rows(Model *m, int head)
{
    CHECK(model_prepare(m, MODEL_WEIGHTS, head) == 0);
    const float *W = model_matrix(m, MODEL_WEIGHTS, head);
    CHECK(W != NULL);
    if (!W)
        return;
    for (int i = 0; i < m->T; i++) {
        double sum = 0;
        for (int j = 0; j < m->T; j++) {
            float w = W[i * m->T + j];
            CHECK(w >= 0.0f && w <= 1.0f);
            if (m->cfg.causal && j > i)
                CHECK(w == 0.0f);
            sum += w;
        }
        CHECK(fabs(sum - 1.0) < 1e-5);
    }
}

static void check_table(const EmbedTable *t)
{
    for (int i = 0; i < N_WORDS; i++)
        CHECK(embed_find(t, words[i]) == i);
    CHECK(embed_find(t, "bank") == -1);
    CHECK(embed_find(t, "") == -1);
    CHECK(strcmp(embed_dim_name(t, 2), "d2") == 0);
    float a[D], b[D];
    embed_oov_vector("bank", D, a);
    embed_oov_vector("bank", D, b);
    CHECK(memcmp(a, b, sizeof a) == 0);
    for (int k = 0; k < D; k++)
        CHECK(a[k] >= -0.5f && a[k] < 0.5f);
    embed_oov_vector("river", D, b);
    CHECK(memcmp(a, b, sizeof a) != 0);
}

static void check_model(Model *m)
{
    const char *s = "the train left the station bank";
    CHECK(model_set_text(m, s, strlen(s)) == 0);
    CHECK(m->T == 6);
    CHECK(model_count_oov(m) == 1 && m->oov[5] == 1);
    CHECK(memcmp(m->E + 1 * D, embed_vector(m->table, 1), sizeof(float) * D) == 0);
    CHECK(model_compute(m) == 0);
    CHECK(m->res.h == 2);
    for (int h = 0; h < 2; h++)
        check_rows(m, h);
    check_rows(m, MODEL_HEAD_AVG);
    m->cfg.causal = 1;
    CHECK(model_compute(m) == 0);
    check_rows(m, 0);
    check_rows(m, MODEL_HEAD_AVG);
}

/* A session and weights as the parsers would give them, built by hand. */
static void check_session(Model *m)
{
    Session s;
    memset(&s, 0, sizeof s);
    s.sentence = malloc(32);
    s.words = calloc(1, sizeof *s.words);
    s.vectors = malloc(sizeof(float) * D);
    if (!s.sentence || !s.words || !s.vectors || !(s.words[0] = malloc(8)) ||
        attn_params_create(&s.weights.params, D, 1) < 0) {
        CHECK(!"out of memory");
        session_free(&s);
        return;
    }
    strcpy(s.sentence, "time on the station");
    strcpy(s.words[0], "station");
    for (int k = 0; k < D; k++)
        s.vectors[k] = 0.5f - (float)k;
    s.n_vectors = 1;
    s.d = D;
    s.cfg = attn_config_default();
    s.cfg.scale = 0;
    s.has_weights = 1;
    attn_params_xavier(&s.weights.params, 7);
    s.weights.has_seed = 1;
    s.weights.seed = 7;
    session_view_default(&s.view);

    s.d = D + 1; /* not for this model: refused, nothing changes */
    CHECK(model_apply_session(m, &s) == -ATTN_E_SHAPE);
    CHECK(m->T == 6 && m->cfg.heads == 2);
    s.d = D;
    CHECK(model_apply_session(m, &s) == 0);
    CHECK(m->T == 4 && strcmp(m->text, "time on the station") == 0);
    CHECK(m->cfg.heads == 1 && m->cfg.scale == 0 && m->cfg.causal == 0);
    CHECK(attn_params_equal(&m->params, &s.weights.params));
    CHECK(m->has_seed == 1 && m->seed == 7);
    CHECK(m->edited[3] == 1 && m->edited[0] == 0);
    CHECK(memcmp(m->E + 3 * D, s.vectors, sizeof(float) * D) == 0);
    CHECK(model_compute(m) == 0);
    check_rows(m, 0);

    /* weights for another d are refused */
    ParsedWeights w;
    memset(&w, 0, sizeof w);
    CHECK(attn_params_create(&w.params, 2 * D, 2) == 0);
    CHECK(model_set_weights(m, &w) == -ATTN_E_SHAPE);
    CHECK(m->params.d == D && m->params.h == 1);
    parsed_weights_free(&w);
    session_free(&s);
    CHECK(s.sentence == NULL && s.n_vectors == 0);
}

/* An attention file by hand over a buffer: 2 layers of 1 head, 2×2 maps. */
static void check_attnfile(void)
{
    static AttnFile f;
    static const float v[8] = {1, 0, 0.5f, 0.5f, 0, 1, 1, 0};
    memset(&f, 0, sizeof f);
    f.n_parts = 1;
    f.parts[0] = (AttnPart){.data = v, .dtype = ATTN_DT_F32, .L = 2, .H = 1, .Tq = 2, .Tk = 2};
    f.L = 2, f.H = 1, f.Tq = 2, f.Tk = 2;
    float out[4];
    CHECK(attn_file_map(&f, ATTN_PICK_ALL_AVG, 0, 0, out) == 0);
    CHECK(out[0] == 0.5f && out[1] == 0.5f && out[2] == 0.75f && out[3] == 0.25f);
    /* Ā_0 = (1 0; ¼ ¾), Ā_1 = (½ ½; ½ ½): row 0 of Ā_1·Ā_0 = (⅝, ⅜) */
    CHECK(attn_file_map(&f, ATTN_PICK_ROLLOUT, 1, 0, out) == 0);
    CHECK(fabsf(out[0] - 0.625f) < 1e-6f && fabsf(out[1] - 0.375f) < 1e-6f);
}

/* Row i of the map (l, h), recomputed (runtime.h: no map is stored). */
static const float *map_row(const Rt *s, int l, int h, int i)
{
    static float buf[16 * 16];
    rt_map(s, l, h, buf, (size_t)s->T);
    return buf + (size_t)i * s->T;
}

/* A GPT-2 of 2 layers, 2 heads, 8 dimensions, weights from a fixed formula:
 * every map row sums to 1 with zeros after the diagonal; one more token
 * gives the same first rows; the top 3 tokens' probabilities decrease. */
static void check_gpt2(void)
{
    enum { L = 2, H = 2, C = 8, I = 16, P = 6, V = 5 };
    static float pool[L * (4 * C + C * 3 * C + 3 * C + C * C + C + C * I + I + I * C + C) +
                      V * C + P * C + 2 * C];
    for (size_t k = 0; k < sizeof pool / sizeof pool[0]; k++)
        pool[k] = (float)((int)(k * 37 % 101) - 50) / 60.0f;
    float *p = pool;
    Gpt2Layer layers[L];
    for (int l = 0; l < L; l++) {
        Gpt2Layer *y = &layers[l];
        y->ln1_w = p, p += C, y->ln1_b = p, p += C, y->ln2_w = p, p += C, y->ln2_b = p, p += C;
        y->attn_w = p, p += C * 3 * C, y->attn_b = p, p += 3 * C;
        y->proj_w = p, p += C * C, y->proj_b = p, p += C;
        y->fc_w = p, p += C * I, y->fc_b = p, p += I, y->mproj_w = p, p += I * C;
        y->mproj_b = p, p += C;
    }
    Gpt2Weights w = {.wte = p, .wpe = p + V * C, .layers = layers, .lnf_w = p + (V + P) * C,
                     .lnf_b = p + (V + P + 1) * C, .lm_head = p};
    Gpt2Config cfg = {.n_layer = L, .n_head = H, .n_embd = C, .n_positions = P, .n_inner = I,
                      .n_vocab = V, .ln_eps = 1e-5f, .act = GPT2_ACT_GELU_TANH,
                      .scale_attn_weights = 1, .bos_id = -1, .eos_id = -1};
    Rt *s;
    const int ids[P] = {1, 4, 0, 2, 2, 3};
    CHECK(rt_create(&s, &arch_gpt2, &cfg, NULL) == 0);
    if (!s)
        return;
    CHECK(rt_forward(s, &w, ids, 4, NULL, NULL) == 0);
    float first[4 * 4];
    for (int i = 0; i < 4; i++)
        memcpy(first + i * 4, map_row(s, 1, 1, i), sizeof(float) * 4);
    CHECK(rt_forward(s, &w, ids, 5, NULL, NULL) == 0);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < 5; i++) {
                const float *row = map_row(s, l, h, i);
                double sum = 0;
                for (int j = 0; j < 5; j++) {
                    CHECK(j <= i || row[j] == 0.0f);
                    sum += row[j];
                }
                CHECK(fabs(sum - 1.0) < 1e-5);
            }
    for (int i = 0; i < 4; i++)
        CHECK(memcmp(first + i * 4, map_row(s, 1, 1, i), sizeof(float) * 4) == 0);
    int top[3];
    float prob[3];
    CHECK(rt_top_k(s, &w, 4, 3, top, prob, NULL, NULL) == 0);
    CHECK(prob[0] >= prob[1] && prob[1] >= prob[2] && prob[2] > 0.0f && prob[0] < 1.0f);
    CHECK(rt_forward(s, &w, ids, P + 1, NULL, NULL) == -ATTN_E_TOO_MANY_TOKENS);
    rt_destroy(s);
}

/* A Llama of 2 layers, 4 query heads sharing 2 key-value heads, 8
 * dimensions, weights from a fixed formula: every map row sums to 1 with
 * zeros after the diagonal; one more token gives the same first rows;
 * heads 0 and 1 share their keys. */
static void check_llama(void)
{
    enum { L = 2, H = 4, KV = 2, DH = 4, C = 8, I = 12, P = 6, V = 5 };
    static float pool[L * (2 * C + C * H * DH + 2 * C * KV * DH + H * DH * C + 3 * C * I) +
                      V * C + C];
    for (size_t k = 0; k < sizeof pool / sizeof pool[0]; k++)
        pool[k] = (float)((int)(k * 41 % 103) - 51) / 50.0f;
    float *p = pool;
    LlamaLayer layers[L];
    for (int l = 0; l < L; l++) {
        LlamaLayer *y = &layers[l];
        memset(y, 0, sizeof *y);
        y->attn_norm = p, p += C, y->mlp_norm = p, p += C;
        y->wq = p, p += C * H * DH, y->wk = p, p += C * KV * DH, y->wv = p, p += C * KV * DH;
        y->wo = p, p += H * DH * C;
        y->w_gate = p, p += C * I, y->w_up = p, p += C * I, y->w_down = p, p += I * C;
    }
    LlamaWeights w = {.embed = p, .layers = layers, .norm = p + V * C, .lm_head = p};
    LlamaConfig cfg = {.n_layer = L, .n_head = H, .n_kv_head = KV, .head_dim = DH, .hidden = C,
                       .n_inner = I, .n_positions = P, .n_vocab = V, .rms_eps = 1e-5f,
                       .rope_theta = 10000.0, .tied = 1, .bos_id = -1, .eos_id = -1};
    Rt *s;
    const int ids[P] = {1, 4, 0, 2, 2, 3};
    CHECK(rt_create(&s, &arch_llama, &cfg, NULL) == 0);
    if (!s)
        return;
    CHECK(rt_forward(s, &w, ids, 4, NULL, NULL) == 0);
    float first[4 * 4];
    for (int i = 0; i < 4; i++)
        memcpy(first + i * 4, map_row(s, 1, 3, i), sizeof(float) * 4);
    CHECK(rt_forward(s, &w, ids, 5, NULL, NULL) == 0);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < 5; i++) {
                const float *row = map_row(s, l, h, i);
                double sum = 0;
                for (int j = 0; j < 5; j++) {
                    CHECK(j <= i || row[j] == 0.0f);
                    sum += row[j];
                }
                CHECK(fabs(sum - 1.0) < 1e-5);
            }
    for (int i = 0; i < 4; i++)
        CHECK(memcmp(first + i * 4, map_row(s, 1, 3, i), sizeof(float) * 4) == 0);
    CHECK(rt_key(s, 0, 0, 2) == rt_key(s, 0, 1, 2));
    CHECK(rt_key(s, 0, 1, 2) != rt_key(s, 0, 2, 2));
    int top[3];
    float prob[3];
    CHECK(rt_top_k(s, &w, 4, 3, top, prob, NULL, NULL) == 0);
    CHECK(prob[0] >= prob[1] && prob[1] >= prob[2] && prob[2] > 0.0f && prob[0] < 1.0f);
    rt_destroy(s);
}

/* Every byte, "Ġ t", "h e", "Ġt he" and <|endoftext|>: " the<|endoftext|>" is
 * two tokens, "Ġthe" and the special one. */
static void check_bpe(void)
{
    Bpe *b = bpe_create(NULL);
    CHECK(b != NULL);
    if (!b)
        return;
    for (int i = 0; i < 256; i++) {
        char c[2];
        int n = bpe_byte_char((unsigned char)i, c);
        CHECK(bpe_add_token(b, c, (size_t)n, i, NULL) == 0);
    }
    CHECK(bpe_add_token(b, "\xC4\xA0t", 3, 256, NULL) == 0);
    CHECK(bpe_add_token(b, "he", 2, 257, NULL) == 0);
    CHECK(bpe_add_token(b, "\xC4\xA0the", 5, 258, NULL) == 0);
    CHECK(bpe_add_merge(b, "\xC4\xA0", 2, "t", 1, NULL) == 0);
    CHECK(bpe_add_merge(b, "h", 1, "e", 1, NULL) == 0);
    CHECK(bpe_add_merge(b, "\xC4\xA0t", 3, "he", 2, NULL) == 0);
    CHECK(bpe_add_special(b, "<|endoftext|>", 13, 259, BPE_ADDED_SPECIAL, NULL) == 0);
    BpeIds ids = {0};
    CHECK(bpe_encode(b, " the<|endoftext|>", 17, &ids) == 0);
    CHECK(ids.n == 2 && ids.id[0] == 258 && ids.id[1] == 259);
    char text[16];
    CHECK(bpe_token_text(b, 258, NULL, text, sizeof text) == 4 && strcmp(text, " the") == 0);
    bpe_ids_free(&ids);
    bpe_destroy(b);
}

int main(void)
{
    EmbedTable *t = table_by_hand();
    if (!t) {
        fprintf(stderr, "core_only: out of memory\n");
        return 1;
    }
    check_table(t);
    AttnConfig cfg = attn_config_default();
    cfg.heads = 2;
    Model m;
    CHECK(model_init(&m, t, &cfg) == 0);
    check_model(&m);
    check_session(&m);
    check_attnfile();
    check_gpt2();
    check_llama();
    check_bpe();
    model_destroy(&m);
    embed_destroy(t);
    if (failures) {
        fprintf(stderr, "core_only: %d check(s) failed\n", failures);
        return 1;
    }
    printf("core_only: the core alone, on a table made in memory: all checks passed\n");
    return 0;
}
