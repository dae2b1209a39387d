/* Gemma GGUF files (issue 35) beyond what test_gguf_models' fixtures show:
 * tiny float32 files written here (general.architecture gemma2 or gemma3,
 * llama.cpp's tensor names) and opened with lm_open_gguf:
 *   - the scores' scale no key gives: 1/√head_dim, but 1/√(hidden / heads)
 *     at the 27B models' depth (46 layers for Gemma 2, 62 for Gemma 3), as
 *     llama.cpp sets it: layer 0's log-odds between two keys scale by
 *     √(head_dim / (hidden / heads)) from one depth to the next;
 *   - a gemma3 file without attention.sliding_window (the converter leaves
 *     it out for sliding_window_pattern 1): no layer slides;
 *   - what is not computed refused by name: a rope scaling tensor, yarn
 *     scaling, attention biases, Gemma 3's q_norm in a Gemma 2 file;
 *   - Ollama's Gemma 3 files: rope.local.freq_base read as llama.cpp's
 *     rope.freq_base_swa, the vision tower's tensors (v.*, mm.*) not read;
 *   - where generation ends: the file's eos, eot (<end_of_turn>) and eom ids,
 *     those past the vocabulary left out.
 * Run from the repository root. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "attnviz/lm.h"
#include "attnviz/runtime.h"

enum { C = 32, H = 2, KV = 1, D = 8, I = 32, V = 16 };

typedef struct Buf {
    unsigned char *p;
    size_t n, cap;
    int count;
} Buf;

static void put(Buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void put_u32(Buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(Buf *b, uint64_t v) { put(b, &v, 8); }

static void put_str(Buf *b, const char *s)
{
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}

static void kv_u32(Buf *b, const char *arch, const char *key, uint32_t v)
{
    char k[160];
    snprintf(k, sizeof k, key, arch);
    put_str(b, k);
    put_u32(b, 4);
    put_u32(b, v);
    b->count++;
}

static void kv_f32(Buf *b, const char *arch, const char *key, float v)
{
    char k[160];
    snprintf(k, sizeof k, key, arch);
    put_str(b, k);
    put_u32(b, 6);
    put(b, &v, 4);
    b->count++;
}

static void kv_str(Buf *b, const char *key, const char *v)
{
    put_str(b, key);
    put_u32(b, 8);
    put_str(b, v);
    b->count++;
}

/* A number in [-1, 1) from name and i: the same tensor name gives the same
 * numbers in every file. */
static float noise(const char *name, int i)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    h ^= (uint32_t)i * 2654435761u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return (float)(h & 0xffffff) / 8388608.0f - 1.0f;
}

typedef struct File {
    Buf info, data;
} File;

/* Tensor name of ne0 × ne1 floats (ne1 0: a vector); norms 1 + small. */
static void tensor(File *f, const char *name, int ne0, int ne1)
{
    int norm = strstr(name, "norm") != NULL;
    put_str(&f->info, name);
    put_u32(&f->info, ne1 ? 2 : 1);
    put_u64(&f->info, (uint64_t)ne0);
    if (ne1)
        put_u64(&f->info, (uint64_t)ne1);
    put_u32(&f->info, 0); /* F32 */
    put_u64(&f->info, f->data.n);
    for (int i = 0; i < ne0 * (ne1 ? ne1 : 1); i++) {
        float v = norm ? 1.0f + 0.2f * noise(name, i) : 0.5f * noise(name, i);
        put(&f->data, &v, 4);
    }
    while (f->data.n % 32)
        put(&f->data, "", 1);
    f->info.count++;
}

typedef struct Spec {
    const char *arch;       /* gemma2, gemma3 */
    int L;
    int window;             /* attention.sliding_window; 0: no key */
    const char *rope_type;  /* rope.scaling.type, or NULL */
    const char *extra;      /* one more tensor (a vector of D/2 floats, H·D for a
                               bias), or NULL */
    const char *local_key;  /* the local rope base's key ("%s.rope.freq_base_swa"), or NULL */
    float local;            /* its value */
    int vision;             /* 1: a vision tower's tensors too, as Ollama's files keep them */
    int stops;              /* 1: eos 3, eot 7, eom V + 2 (past the vocabulary) */
    int ffn_meta, kv_meta;  /* feed_forward_length and head_count_kv in the metadata
                               when not 0 (the tensors keep I and KV) */
} Spec;

/* The file s describes, written to path. */
static void write_model(const char *path, const Spec *s)
{
    Buf kv = {0};
    File f = {{0}, {0}};
    const char *a = s->arch;
    int g3 = strcmp(a, "gemma3") == 0;
    kv_str(&kv, "general.architecture", a);
    kv_u32(&kv, a, "%s.block_count", (uint32_t)s->L);
    kv_u32(&kv, a, "%s.context_length", 64);
    kv_u32(&kv, a, "%s.embedding_length", C);
    kv_u32(&kv, a, "%s.feed_forward_length", (uint32_t)(s->ffn_meta ? s->ffn_meta : I));
    kv_u32(&kv, a, "%s.attention.head_count", H);
    kv_u32(&kv, a, "%s.attention.head_count_kv", (uint32_t)(s->kv_meta ? s->kv_meta : KV));
    kv_u32(&kv, a, "%s.attention.key_length", D);
    kv_u32(&kv, a, "%s.attention.value_length", D);
    kv_f32(&kv, a, "%s.attention.layer_norm_rms_epsilon", 1e-6f);
    if (s->window)
        kv_u32(&kv, a, "%s.attention.sliding_window", (uint32_t)s->window);
    if (!g3) /* caps that change nothing here, so the scale shows alone */
        kv_f32(&kv, a, "%s.attn_logit_softcapping", 1e6f);
    if (s->local_key)
        kv_f32(&kv, a, s->local_key, s->local);
    if (s->rope_type) {
        kv_str(&kv, "gemma3.rope.scaling.type", s->rope_type);
        kv_f32(&kv, a, "%s.rope.scaling.factor", 4.0f);
    }
    if (s->stops) {
        kv_u32(&kv, "", "tokenizer.ggml.eos_token_id", 3);
        kv_u32(&kv, "", "tokenizer.ggml.eot_token_id", 7);
        kv_u32(&kv, "", "tokenizer.ggml.eom_token_id", V + 2);
    }
    tensor(&f, "token_embd.weight", C, V);
    tensor(&f, "output_norm.weight", C, 0);
    for (int l = 0; l < s->L; l++) {
        char n[80];
#define T(name, ne0, ne1) (snprintf(n, sizeof n, "blk.%d." name, l), tensor(&f, n, ne0, ne1))
        T("attn_norm.weight", C, 0);
        T("attn_q.weight", C, H * D);
        T("attn_k.weight", C, KV * D);
        T("attn_v.weight", C, KV * D);
        T("attn_output.weight", H * D, C);
        if (g3) {
            T("attn_q_norm.weight", D, 0);
            T("attn_k_norm.weight", D, 0);
        }
        T("post_attention_norm.weight", C, 0);
        T("ffn_norm.weight", C, 0);
        T("ffn_gate.weight", C, I);
        T("ffn_up.weight", C, I);
        T("ffn_down.weight", I, C);
        T("post_ffw_norm.weight", C, 0);
#undef T
    }
    if (s->extra)
        tensor(&f, s->extra, strstr(s->extra, "bias") ? H * D : D / 2, 0);
    if (s->vision) { /* Ollama's names for Gemma 3's vision tower and projector */
        tensor(&f, "v.patch_embedding.weight", 12, 4);
        tensor(&f, "v.blk.0.attn_q.weight", 4, 4);
        tensor(&f, "mm.mm_input_projection.weight", C, 4);
    }

    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    Buf head = {0};
    put(&head, "GGUF", 4);
    put_u32(&head, 3);
    put_u64(&head, (uint64_t)f.info.count);
    put_u64(&head, (uint64_t)kv.count);
    put(&head, kv.p, kv.n);
    put(&head, f.info.p, f.info.n);
    while (head.n % 32)
        put(&head, "", 1);
    assert_int_equal(fwrite(head.p, 1, head.n, out), head.n);
    assert_int_equal(fwrite(f.data.p, 1, f.data.n, out), f.data.n);
    assert_int_equal(fclose(out), 0);
    free(head.p);
    free(kv.p);
    free(f.info.p);
    free(f.data.p);
}

static char tmp_path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_path, sizeof tmp_path, "/tmp/attnviz-gguf-gemma-%ld.gguf", (long)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(tmp_path);
    return 0;
}

static const int ids[] = {1, 5, 9};
enum { NT = 3 };

/* Layer 0's map (head head) of the model s describes on ids. */
static void map0(const Spec *s, int head, float *m)
{
    Lm lm;
    AttnErr err = {0};
    write_model(tmp_path, s);
    if (lm_open_gguf(&lm, tmp_path, &err) != 0)
        fail_msg("%s: %s", s->arch, err.msg);
    if (lm_forward(&lm, ids, NT, NULL, &err) != 0)
        fail_msg("%s: %s", s->arch, err.msg);
    rt_map(lm.rt, 0, head, m, NT);
    lm_close(&lm);
}

/* Query 2's log-odds of key k against itself, in layer 0's map m. */
static double log_odds(const float *m, int k)
{
    return log((double)m[2 * NT + k]) - log((double)m[2 * NT + 2]);
}

static void check_depth(const char *arch, int depth_27b)
{
    float deep[NT * NT], other[NT * NT];
    /* layer 0 is the same in both files: only the scale differs */
    double want = sqrt((double)D / (double)(C / H));
    for (int h = 0; h < H; h++) {
        map0(&(Spec){.arch = arch, .L = depth_27b, .window = 4096}, h, deep);
        map0(&(Spec){.arch = arch, .L = depth_27b - 1, .window = 4096}, h, other);
        for (int k = 0; k < 2; k++) {
            double a = log_odds(deep, k), b = log_odds(other, k);
            if (fabs(b) < 0.05)
                fail_msg("%s head %d key %d: log-odds %g too small to see the scale", arch, h,
                         k, b);
            if (fabs(a / b - want) > 1e-4)
                fail_msg("%s: at %d layers the log-odds are %g times those at %d (want %g: "
                         "1/sqrt(hidden / heads) against 1/sqrt(head_dim))", arch, depth_27b,
                         a / b, depth_27b - 1, want);
        }
    }
}

static void scale_at_27b_depth(void **state)
{
    (void)state;
    check_depth("gemma2", 46);
    check_depth("gemma3", 62);
}

static void gemma3_without_window(void **state)
{
    (void)state;
    Lm lm;
    AttnErr err = {0};
    const Spec without = {.arch = "gemma3", .L = 2}, with = {.arch = "gemma3", .L = 2, .window = 1};
    for (int pass = 0; pass < 2; pass++) {
        write_model(tmp_path, pass ? &with : &without);
        if (lm_open_gguf(&lm, tmp_path, &err) != 0)
            fail_msg("%s", err.msg);
        assert_int_equal(lm_forward(&lm, ids, NT, NULL, &err), 0);
        RtMaps *maps = rt_maps_take(lm.rt);
        assert_non_null(maps);
        float m[NT * NT];
        for (int l = 0; l < 2; l++) {
            /* with a window of 1 both layers slide (period 6): each query
             * sees itself only; without one none does */
            assert_int_equal(rt_maps_window(maps, l), pass ? 1 : 0);
            rt_maps_map(maps, l, 0, m, NT);
            if (pass)
                assert_true(m[2 * NT + 0] == 0.0f && m[2 * NT + 2] == 1.0f);
            else
                assert_true(m[2 * NT + 0] > 0.0f && m[2 * NT + 2] < 1.0f);
        }
        rt_maps_free(maps);
        lm_close(&lm);
    }
}

static char last_refusal[1024]; /* expect_refused's message */

static void expect_refused(const Spec *s, const char *want1, const char *want2)
{
    Lm lm;
    AttnErr err = {0};
    write_model(tmp_path, s);
    int rc = lm_open_gguf(&lm, tmp_path, &err);
    if (rc == 0) {
        lm_close(&lm);
        fail_msg("%s: opened; wanted a refusal naming %s", s->arch, want1);
    }
    assert_true(rc < 0);
    if (!strstr(err.msg, want1) || !strstr(err.msg, want2))
        fail_msg("message \"%s\" does not name %s and %s", err.msg, want1, want2);
    assert_string_equal(err.file, tmp_path);
    print_message("refused: %s\n", err.msg);
    snprintf(last_refusal, sizeof last_refusal, "%s", err.msg);
}

static void refused_by_name(void **state)
{
    (void)state;
    expect_refused(&(Spec){.arch = "gemma3", .L = 1, .window = 4, .extra = "rope_freqs.weight"},
                   "rope_freqs.weight",
                   "not read");
    expect_refused(&(Spec){.arch = "gemma3", .L = 1, .window = 4, .rope_type = "yarn"},
                   "\"yarn\"", "not computed");
    expect_refused(&(Spec){.arch = "gemma2", .L = 1, .window = 4, .extra = "blk.0.attn_q.bias"},
                   "blk.0.attn_q.bias",
                   "gemma2");
    expect_refused(&(Spec){.arch = "gemma2", .L = 1, .window = 4,
                           .extra = "blk.0.attn_q_norm.weight"},
                   "blk.0.attn_q_norm.weight", "not read");
    /* the config the metadata made, refused in the file's words: its keys,
     * not config.json's */
    expect_refused(&(Spec){.arch = "gemma2", .L = 1, .window = 4, .ffn_meta = 48},
                   "gemma2.feed_forward_length 48", "metadata: ");
    assert_null(strstr(last_refusal, "config.json"));
    assert_null(strstr(last_refusal, "intermediate_size"));
    expect_refused(&(Spec){.arch = "gemma2", .L = 1, .window = 4, .kv_meta = 3},
                   "gemma2.attention.head_count 2", "gemma2.attention.head_count_kv 3");
    assert_null(strstr(last_refusal, "num_key_value_heads"));
    /* and linear scaling, which is computed, opens */
    Lm lm;
    AttnErr err = {0};
    write_model(tmp_path, &(Spec){.arch = "gemma3", .L = 1, .window = 4, .rope_type = "linear"});
    if (lm_open_gguf(&lm, tmp_path, &err) != 0)
        fail_msg("linear: %s", err.msg);
    lm_close(&lm);
}

/* Ollama's Gemma 3 files: the local rope base under its own key, the
 * vision tower's tensors beside the language model's (not read: the maps
 * are those of the file without them). */
static void ollama_files(void **state)
{
    (void)state;
    float swa[NT * NT], ollama[NT * NT], with_vision[NT * NT], plain[NT * NT];
    const Spec base = {.arch = "gemma3", .L = 1, .window = 8, .local = 50.0f};
    Spec s = base;
    s.local_key = "%s.rope.freq_base_swa";
    map0(&s, 1, swa);
    s.local_key = "%s.rope.local.freq_base";
    map0(&s, 1, ollama);
    s.vision = 1;
    map0(&s, 1, with_vision);
    map0(&base, 1, plain); /* the default local base, 10000 */
    double moved = 0;
    for (int i = 0; i < NT * NT; i++) {
        assert_true(swa[i] == ollama[i]);
        assert_true(with_vision[i] == ollama[i]);
        moved = fmax(moved, fabs(plain[i] - swa[i]));
    }
    if (moved < 1e-3)
        fail_msg("a local rope base of 50 moves layer 0's map by only %g", moved);
}

/* Generation ends at every end-of-text id the file names: a chat model's
 * turn ends at its eot (<end_of_turn>, <|eot_id|>), not only at eos. */
static void test_stop_ids(void **state)
{
    (void)state;
    Lm lm;
    AttnErr err = {0};
    write_model(tmp_path, &(Spec){.arch = "gemma2", .L = 1, .window = 4096, .stops = 1});
    if (lm_open_gguf(&lm, tmp_path, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(lm.info.eos_id, 3);
    assert_int_equal(lm.info.n_stop, 2);
    assert_int_equal(lm.info.stop_ids[0], 3);
    assert_int_equal(lm.info.stop_ids[1], 7);
    assert_true(lm_is_stop(&lm.info, 7));
    assert_false(lm_is_stop(&lm.info, V + 2));
    assert_false(lm_is_stop(&lm.info, 0));
    lm_close(&lm);
    write_model(tmp_path, &(Spec){.arch = "gemma2", .L = 1, .window = 4096});
    if (lm_open_gguf(&lm, tmp_path, &err) != 0)
        fail_msg("%s", err.msg);
    for (int k = 0; k < lm.info.n_stop; k++) /* the architecture's default eos alone */
        assert_int_equal(lm.info.stop_ids[k], lm.info.eos_id);
    lm_close(&lm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scale_at_27b_depth),
        cmocka_unit_test(gemma3_without_window),
        cmocka_unit_test(refused_by_name),
        cmocka_unit_test(ollama_files),
        cmocka_unit_test(test_stop_ids),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
