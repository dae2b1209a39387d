/* A test-only architecture (issue 33): a small attention-only transformer
 * defined in this one file as the program's own are (arch.h: its
 * config.json fields, its tensors, its layer on the runtime), registered
 * with one line and run through the command line's --model path (the model
 * source's cli_open and cli_write, as main.c calls them, on options parsed
 * from an argv): --print csv, predictions and head-scores and
 * --export-attention, each number checked against a naive double-precision
 * forward computed here. Its fixture is written here: config.json with a
 * model_type of its own, a model.safetensors written by hand, GPT-2's test
 * tokenizer beside them. Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnviz/arch.h"
#include "attnviz/head_scores.h"
#include "attnviz/lm.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "test_gpt2_fs.h"

#define TOK "tests/fixtures/gpt2/f16-h5" /* a byte-level BPE of 40 tokens: A-D, digits, punctuation */
#define TEXT "ABCD#ABCD"                 /* its tokens: A B C D # A B C D */
#define NT 9

/* ---- the architecture -------------------------------------------------------------- *
 *   x = embed[ids] + pos[positions]
 *   per layer:  a = RMSNorm(x) · norm;  q, k, v = a·Wqᵀ, a·Wkᵀ, a·Wvᵀ (stored [out, in])
 *               head h: weights = softmax(q_h·k_hᵀ / √d, causal);  z_h = weights · v_h
 *               x = x + z·Woᵀ
 *   logits = (RMSNorm(x) · norm) · embedᵀ   (tied) */
typedef struct AoConfig {
    int n_layer, n_head, hidden, n_positions, n_vocab;
    float eps;
    int bos_id;
} AoConfig;

typedef struct AoLayer {
    const float *norm, *wq, *wk, *wv, *wo; /* [C]; [C, C] each, [in, out] */
} AoLayer;

typedef struct AoWeights {
    const float *embed, *pos;  /* [V, C], [P, C] */
    const AoLayer *layers;
    const float *norm;         /* [C] */
} AoWeights;

static int ao_check(const void *cfg, AttnErr *err)
{
    const AoConfig *c = cfg;
    if (c->n_layer < 1 || c->n_head < 1 || c->hidden < 1 || c->n_positions < 1 || c->n_vocab < 1)
        return attn_err_set(err, ATTN_E_SHAPE, NULL, 0, "sizes must be positive");
    return c->hidden % c->n_head ? attn_err_set(err, ATTN_E_HEADS, NULL, 0, "heads") : 0;
}

static void ao_shape(const void *cfg, RtShape *s)
{
    const AoConfig *c = cfg;
    *s = (RtShape){.n_layer = c->n_layer, .n_head = c->n_head, .n_kv_head = c->n_head,
                   .d_head = c->hidden / c->n_head, .hidden = c->hidden,
                   .n_positions = c->n_positions, .n_vocab = c->n_vocab};
}

static void ao_embed(Rt *rt, const void *wv, const int *ids, int start, int T)
{
    const AoWeights *w = wv;
    int C = rt->sh.hidden;
    for (int i = start; i < T; i++) {
        float *xi = rt_row(rt->x, C, i);
        const float *e = w->embed + (size_t)ids[i] * C, *p = w->pos + (size_t)i * C;
        for (int k = 0; k < C; k++)
            xi[k] = e[k] + p[k];
    }
}

/* out = RMSNorm of n rows of x (C wide) times g. */
static void rms(float *out, const float *x, const float *g, int n, int C, float eps)
{
    for (int i = 0; i < n; i++) {
        float ss = 0;
        for (int k = 0; k < C; k++)
            ss += x[(size_t)i * C + k] * x[(size_t)i * C + k];
        float r = 1.0f / sqrtf(ss / (float)C + eps);
        for (int k = 0; k < C; k++)
            out[(size_t)i * C + k] = x[(size_t)i * C + k] * r * g[k];
    }
}

static void ao_layer(Rt *rt, const void *wv, int l, int start, int T)
{
    const AoConfig *c = rt->cfg;
    const AoLayer *w = &((const AoWeights *)wv)->layers[l];
    int C = c->hidden, n = T - start, W = rt->qkv_w;
    float *x = rt_row(rt->x, C, start), *xn = rt_row(rt->xn, C, start);
    float *out = rt_row(rt->out, C, start), *qkv = rt_qkv(rt, l, start);
    RtAttn a = {.causal = 1, .mul = (float)(1.0 / sqrt((double)rt->sh.d_head))};
    rms(xn, x, w->norm, n, C, c->eps);
    rt_project(rt, qkv, W, xn, C, w->wq, NULL, NULL, n, C, C);
    rt_project(rt, qkv + C, W, xn, C, w->wk, NULL, NULL, n, C, C);
    rt_project(rt, qkv + 2 * C, W, xn, C, w->wv, NULL, NULL, n, C, C);
    rt_attend(rt, l, start, T, &a);
    rt_project(rt, out, C, rt_row(rt->z, C, start), C, w->wo, NULL, NULL, n, C, C);
    for (size_t i = 0; i < (size_t)n * C; i++)
        x[i] += out[i];
}

static void ao_logits(Rt *rt, const void *wv, const float *x, float *logits)
{
    const AoWeights *w = wv;
    const AoConfig *c = rt->cfg;
    rms(rt->xf, x, w->norm, 1, c->hidden, c->eps);
    for (int v = 0; v < c->n_vocab; v++) {
        float s = 0;
        for (int k = 0; k < c->hidden; k++)
            s += rt->xf[k] * w->embed[(size_t)v * c->hidden + k];
        logits[v] = s;
    }
}

static const RtArch rt_attnonly = {"attnonly", sizeof(AoConfig), ao_check, ao_shape, ao_embed,
                                   ao_layer, ao_logits};

static int ao_sizes_read(void *cfg, const char *file, AttnErr *err)
{
    AoConfig *c = cfg;
    c->bos_id = c->bos_id < c->n_vocab ? c->bos_id : -1;
    return c->hidden % c->n_head ? attn_err_set(err, ATTN_E_HEADS, file, 0,
                                                "d_model %d does not divide by num_heads %d",
                                                c->hidden, c->n_head) : 0;
}

static const ArchName ao_types[] = {{"attnonly", 0}, {NULL, 0}};

static const ArchField ao_fields[] = {
    {"model_type", AF_ENUM, ARCH_NOWHERE, AF_REQUIRED, .names = ao_types,
     .refused = "model_type \"%s\" is not attnonly"},
    {"num_layers", AF_INT, offsetof(AoConfig, n_layer), AF_REQUIRED, .hi = 64},
    {"num_heads", AF_INT, offsetof(AoConfig, n_head), AF_REQUIRED, .hi = 64},
    {"d_model", AF_INT, offsetof(AoConfig, hidden), AF_REQUIRED, .hi = 4096},
    {"max_positions", AF_INT, offsetof(AoConfig, n_positions), AF_REQUIRED, .hi = 4096},
    {"vocab_size", AF_INT, offsetof(AoConfig, n_vocab), AF_REQUIRED, .hi = 1 << 20},
    {"norm_eps", AF_FLOAT, offsetof(AoConfig, eps), AF_NULL, .dflt = 1e-5, .lo = 0, .hi = 1},
    {"bos_token_id", AF_ID, offsetof(AoConfig, bos_id), .dflt = -1},
    ARCH_STEP(ao_sizes_read),
};

enum { S_C, S_V, S_P };

static void ao_sizes(const void *cfg, long long *s)
{
    const AoConfig *c = cfg;
    s[S_C] = c->hidden;
    s[S_V] = c->n_vocab;
    s[S_P] = c->n_positions;
}

#define AO_MAT(name, field) \
    {"layers.%d." name, AT_MATRIX, AT_LAYER, 2, {S_C, S_C}, offsetof(AoLayer, field), \
     ARCH_NOWHERE, .tie = -1}

static const ArchTensor ao_tensors[] = {
    {"embed.weight", AT_PLAIN, 0, 2, {S_V, S_C}, offsetof(AoWeights, embed), ARCH_NOWHERE, .tie = -1},
    {"pos.weight", AT_PLAIN, 0, 2, {S_P, S_C}, offsetof(AoWeights, pos), ARCH_NOWHERE, .tie = -1},
    {"layers.%d.norm.weight", AT_PLAIN, AT_LAYER, 1, {S_C, 0}, offsetof(AoLayer, norm),
     ARCH_NOWHERE, .tie = -1},
    AO_MAT("q.weight", wq),
    AO_MAT("k.weight", wk),
    AO_MAT("v.weight", wv),
    AO_MAT("o.weight", wo),
    {"norm.weight", AT_PLAIN, 0, 1, {S_C, 0}, offsetof(AoWeights, norm), ARCH_NOWHERE, .tie = -1},
};

static int ao_shape_error(const void *cfg, const char *tensor, const char *want, const char *got,
                          const char *file, AttnErr *err)
{
    (void)cfg;
    return attn_err_set(err, ATTN_E_SHAPE, file, 0, "tensor %s is %s, config.json makes it %s",
                        tensor, got, want);
}

static void ao_facts(const void *cfg, ArchFacts *f)
{
    *f = (ArchFacts){((const AoConfig *)cfg)->bos_id, 1, 0};
}

#define AO_FILES "config.json, model.safetensors, vocab.json, merges.txt"

static const ArchDesc desc_attnonly = {
    .types = ao_types, .rt = &rt_attnonly, ARCH_TABLES(ao_fields, ao_tensors),
    ARCH_WEIGHTS(AoWeights, AoLayer), .sizes = ao_sizes, .facts = ao_facts,
    .required_note = "an attnonly config.json gives it", .folder_files = AO_FILES,
    .config_files = AO_FILES, .embed_name = "embed", .layers_key = "num_layers",
    .shape_error = ao_shape_error,
};

/* ---- the fixture ------------------------------------------------------------------- */
enum { L = 2, H = 2, C = 8, D = C / H, V = 40, P = 16 };
#define EPS 1e-5

/* The weights as the file stores them (matrices [out, in]). */
static float embed[V * C], pos[P * C], norms[L][C], mats[L][4][C * C], norm_f[C];
static char folder[64];

static float draw(uint64_t *s, float scale)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return scale * ((float)(*s >> 40) / (float)(1ull << 24) * 2.0f - 1.0f);
}

/* The tensors in a header (names, F32 shapes, offsets) and their bytes. */
typedef struct StEntry {
    char name[40];
    const float *data;
    int rows, cols; /* rows 0: a vector */
} StEntry;

static void write_safetensors(const char *path)
{
    static const char *const mat[] = {"q", "k", "v", "o"};
    StEntry t[3 + L * 5];
    int n = 0;
    t[n++] = (StEntry){"embed.weight", embed, V, C};
    t[n++] = (StEntry){"pos.weight", pos, P, C};
    for (int l = 0; l < L; l++) {
        t[n] = (StEntry){"", norms[l], 0, C};
        snprintf(t[n++].name, sizeof t[0].name, "layers.%d.norm.weight", l);
        for (int m = 0; m < 4; m++) {
            t[n] = (StEntry){"", mats[l][m], C, C};
            snprintf(t[n++].name, sizeof t[0].name, "layers.%d.%s.weight", l, mat[m]);
        }
    }
    t[n++] = (StEntry){"norm.weight", norm_f, 0, C};
    char head[4096];
    size_t at = (size_t)snprintf(head, sizeof head, "{"), off = 0;
    for (int i = 0; i < n; i++) {
        size_t bytes = sizeof(float) * (size_t)(t[i].rows ? t[i].rows : 1) * t[i].cols;
        char shape[32];
        if (t[i].rows)
            snprintf(shape, sizeof shape, "[%d, %d]", t[i].rows, t[i].cols);
        else
            snprintf(shape, sizeof shape, "[%d]", t[i].cols);
        at += (size_t)snprintf(head + at, sizeof head - at,
                               "%s\"%s\": {\"dtype\": \"F32\", \"shape\": %s, \"data_offsets\": [%zu, %zu]}",
                               i ? ", " : "", t[i].name, shape, off, off + bytes);
        off += bytes;
    }
    at += (size_t)snprintf(head + at, sizeof head - at, "}");
    while (at % 8)
        head[at++] = ' ';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t hl = at;
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(hl >> (8 * i));
    assert_int_equal(fwrite(le, 1, 8, f), 8);
    assert_int_equal(fwrite(head, 1, at, f), at);
    for (int i = 0; i < n; i++) {
        size_t count = (size_t)(t[i].rows ? t[i].rows : 1) * t[i].cols;
        assert_int_equal(fwrite(t[i].data, sizeof(float), count, f), count);
    }
    assert_int_equal(fclose(f), 0);
}

static void make_fixture(void)
{
    uint64_t s = 33;
    char p[400], path[400];
    for (int i = 0; i < V * C; i++)
        embed[i] = draw(&s, 1.0f);
    for (int i = 0; i < P * C; i++)
        pos[i] = draw(&s, 0.5f);
    for (int l = 0; l < L; l++) {
        for (int k = 0; k < C; k++)
            norms[l][k] = 1.0f + draw(&s, 0.3f);
        for (int m = 0; m < 4; m++)
            for (int i = 0; i < C * C; i++)
                mats[l][m][i] = draw(&s, 0.8f);
    }
    for (int k = 0; k < C; k++)
        norm_f[k] = 1.0f + draw(&s, 0.3f);
    snprintf(folder, sizeof folder, "/tmp/attnviz-attnonly-XXXXXX");
    assert_non_null(mkdtemp(folder));
    snprintf(p, sizeof p, "{\"model_type\": \"attnonly\", \"num_layers\": %d, \"num_heads\": %d, "
                          "\"d_model\": %d, \"max_positions\": %d, \"vocab_size\": %d, "
                          "\"norm_eps\": %g, \"bos_token_id\": 39}", L, H, C, P, V, EPS);
    fs_write_text(fs_join(path, folder, "config.json"), p);
    write_safetensors(fs_join(path, folder, "model.safetensors"));
    fs_copy(TOK "/vocab.json", fs_join(path, folder, "vocab.json"));
    fs_copy(TOK "/merges.txt", fs_join(path, folder, "merges.txt"));
}

/* ---- the naive forward, in double ---------------------------------------------------- */
static const int ids[NT] = {32, 33, 34, 35, 2, 32, 33, 34, 35}; /* TEXT's tokens */
static double ref_maps[L][H][NT][NT], ref_probs[V];

static void ref_rms(double *out, const double *x, const float *g)
{
    double ss = 0;
    for (int k = 0; k < C; k++)
        ss += x[k] * x[k];
    for (int k = 0; k < C; k++)
        out[k] = x[k] / sqrt(ss / C + EPS) * g[k];
}

static void reference(void)
{
    double x[NT][C], a[NT][C], q[NT][C], k[NT][C], v[NT][C], z[NT][C];
    for (int i = 0; i < NT; i++)
        for (int c = 0; c < C; c++)
            x[i][c] = (double)embed[ids[i] * C + c] + pos[i * C + c];
    for (int l = 0; l < L; l++) {
        for (int i = 0; i < NT; i++) {
            ref_rms(a[i], x[i], norms[l]);
            for (int o = 0; o < C; o++) {
                q[i][o] = k[i][o] = v[i][o] = 0;
                for (int c = 0; c < C; c++) {
                    q[i][o] += mats[l][0][o * C + c] * a[i][c];
                    k[i][o] += mats[l][1][o * C + c] * a[i][c];
                    v[i][o] += mats[l][2][o * C + c] * a[i][c];
                }
            }
        }
        for (int h = 0; h < H; h++)
            for (int i = 0; i < NT; i++) {
                double sc[NT], mx = -INFINITY, sum = 0;
                for (int j = 0; j <= i; j++) {
                    sc[j] = 0;
                    for (int d = 0; d < D; d++)
                        sc[j] += q[i][h * D + d] * k[j][h * D + d];
                    sc[j] /= sqrt((double)D);
                    mx = fmax(mx, sc[j]);
                }
                for (int j = 0; j < NT; j++) {
                    ref_maps[l][h][i][j] = j <= i ? exp(sc[j] - mx) : 0;
                    sum += ref_maps[l][h][i][j];
                }
                for (int d = 0; d < D; d++)
                    z[i][h * D + d] = 0;
                for (int j = 0; j <= i; j++) {
                    ref_maps[l][h][i][j] /= sum;
                    for (int d = 0; d < D; d++)
                        z[i][h * D + d] += ref_maps[l][h][i][j] * v[j][h * D + d];
                }
            }
        for (int i = 0; i < NT; i++)
            for (int o = 0; o < C; o++)
                for (int c = 0; c < C; c++)
                    x[i][o] += mats[l][3][o * C + c] * z[i][c];
    }
    double f[C], mx = -INFINITY, sum = 0;
    ref_rms(f, x[NT - 1], norm_f);
    for (int t = 0; t < V; t++) {
        ref_probs[t] = 0;
        for (int c = 0; c < C; c++)
            ref_probs[t] += f[c] * embed[t * C + c];
        mx = fmax(mx, ref_probs[t]);
    }
    for (int t = 0; t < V; t++)
        sum += (ref_probs[t] = exp(ref_probs[t] - mx));
    for (int t = 0; t < V; t++)
        ref_probs[t] /= sum;
}

/* ---- through the command line ------------------------------------------------------ */
/* The command line `attnviz --model FOLDER ARGS... TEXT` as main.c runs a
 * model (options parsed, the model source's cli_open, cli_write): its
 * stdout as a string (malloc'd), rc its return. */
static char *run(int *rc, AttnErr *err, ...)
{
    char *argv[16] = {"attnviz", "--model", folder};
    int argc = 3;
    va_list ap;
    va_start(ap, err);
    for (const char *a; argc < 14 && (a = va_arg(ap, const char *));)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc++] = TEXT;
    Options o;
    memset(err, 0, sizeof *err);
    assert_int_equal(options_parse(&o, argc, argv, err), 0);
    char out[128];
    snprintf(out, sizeof out, "%s/stdout.txt", folder);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    void *opened = NULL;
    *rc = source_model.cli_open(&o, o.model, &opened, err);
    if (*rc == 0) {
        *rc = source_model.cli_write(opened, &o, err);
        source_model.cli_free(opened);
    }
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    options_free(&o);
    size_t len;
    return test_slurp(out, &len);
}

static void test_csv(void **state)
{
    (void)state;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            char ls[8], hs[8];
            snprintf(ls, sizeof ls, "%d", l + 1);
            snprintf(hs, sizeof hs, "%d", h + 1);
            int rc;
            AttnErr err;
            char *text = run(&rc, &err, "--print", "csv", "--layer", ls, "--head", hs, NULL);
            if (rc != 0)
                fail_msg("%s: %s", err.file, err.msg);
            char *line = strtok(text, "\n");
            assert_string_equal(line, "query,A,B,C,D,#,A,B,C,D");
            for (int i = 0; i < NT; i++) {
                line = strtok(NULL, "\n");
                assert_non_null(line);
                char *p = strchr(line, ',');
                for (int j = 0; j < NT; j++) {
                    assert_non_null(p);
                    double got = strtod(p + 1, &p);
                    if (fabs(got - ref_maps[l][h][i][j]) > 2e-6)
                        fail_msg("layer %d head %d [%d][%d]: %.9g, the loop's %.9g", l, h, i, j,
                                 got, ref_maps[l][h][i][j]);
                }
            }
            free(text);
        }
}

static void test_predictions(void **state)
{
    (void)state;
    int rc, order[V];
    AttnErr err;
    char *text = run(&rc, &err, "--print", "predictions", NULL);
    if (rc != 0)
        fail_msg("%s: %s", err.file, err.msg);
    for (int t = 0; t < V; t++)
        order[t] = t;
    for (int a = 0; a < V; a++) /* the loop's ranking, most likely first */
        for (int b = a + 1; b < V; b++)
            if (ref_probs[order[b]] > ref_probs[order[a]]) {
                int tmp = order[a];
                order[a] = order[b];
                order[b] = tmp;
            }
    char *p = text;
    for (int r = 0; r < LM_TOP_K; r++) {
        int id = (int)strtol(p, &p, 10);
        double prob = strtod(p, &p);
        assert_int_equal(id, order[r]);
        assert_true(fabs(prob - ref_probs[id]) < 2e-6);
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    free(text);
}

static void test_head_scores(void **state)
{
    (void)state;
    static float maps[L * H * NT * NT];
    HeadScores want[L * H];
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < NT * NT; i++)
                maps[((l * H + h) * NT * NT) + i] = (float)ref_maps[l][h][i / NT][i % NT];
    head_scores_all(maps, L, H, NT, NT, ids, 0, want);
    int rc;
    AttnErr err;
    char *text = run(&rc, &err, "--print", "head-scores", NULL);
    if (rc != 0)
        fail_msg("%s: %s", err.file, err.msg);
    char *line = strtok(text, "\n");
    assert_string_equal(line, "layer,head,previous,self,first,duplicate,induction,entropy,distance");
    for (int k = 0; k < L * H; k++) {
        line = strtok(NULL, "\n");
        assert_non_null(line);
        int l = (int)strtol(line, &line, 10), h = (int)strtol(line + 1, &line, 10);
        assert_int_equal((l - 1) * H + h - 1, k);
        for (int s = 0; s < HEAD_SCORE_COUNT; s++) {
            line++; /* the comma */
            double got = *line == ',' || !*line ? NAN : strtod(line, &line);
            if (isnan(want[k].s[s]) ? !isnan(got) : !(fabs(got - want[k].s[s]) < 1e-4))
                fail_msg("head %d score %d: %g, the loop's maps give %g", k, s, got, want[k].s[s]);
        }
    }
    free(text);
}

static void test_export_attention(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/maps.npy", folder);
    int rc;
    AttnErr err;
    free(run(&rc, &err, "--export-attention", path, NULL));
    if (rc != 0)
        fail_msg("%s: %s", err.file, err.msg);
    size_t len;
    char *npy = test_slurp(path, &len);
    assert_non_null(npy);
    size_t head = 10 + (size_t)(unsigned char)npy[8] + 256u * (unsigned char)npy[9];
    assert_non_null(strstr(npy + 10, "'shape': (2, 2, 9, 9)"));
    assert_int_equal(len, head + sizeof(float) * L * H * NT * NT);
    const char *at = npy + head;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < NT; i++)
                for (int j = 0; j < NT; j++, at += sizeof(float)) {
                    float got;
                    memcpy(&got, at, sizeof got);
                    assert_true(fabs(got - ref_maps[l][h][i][j]) < 2e-6);
                }
    free(npy);
}

/* Its own refusals, in its own words, as a command line gives them. */
static void test_refusals(void **state)
{
    (void)state;
    char p[400], q[400], keep[400];
    int rc;
    AttnErr err;
    snprintf(p, sizeof p, "{\"model_type\": \"attnonly\", \"num_layers\": 2, \"num_heads\": 3, "
                          "\"d_model\": 8, \"max_positions\": 16, \"vocab_size\": 40}");
    fs_copy(fs_join(q, folder, "config.json"), fs_join(keep, folder, "config.keep"));
    fs_write_text(q, p);
    free(run(&rc, &err, "--print", "csv", NULL));
    assert_int_equal(rc, -ATTN_E_HEADS);
    assert_string_equal(err.msg, "d_model 8 does not divide by num_heads 3");
    fs_write_text(q, "{\"model_type\": \"attnonly\", \"num_layers\": 3, \"num_heads\": 2, "
                     "\"d_model\": 8, \"max_positions\": 16, \"vocab_size\": 40}");
    free(run(&rc, &err, "--print", "csv", NULL));
    assert_int_equal(rc, -ATTN_E_SHAPE);
    assert_string_equal(err.msg, "config.json says num_layers 3 but the file has 2 layers (no layers.2.*)");
    fs_write_text(q, "{\"model_type\": \"attnonly\", \"num_layers\": 2, \"num_heads\": 2, "
                     "\"max_positions\": 16, \"vocab_size\": 40}");
    free(run(&rc, &err, "--print", "csv", NULL));
    assert_int_equal(rc, -ATTN_E_PARSE);
    assert_string_equal(err.msg, "no \"d_model\": an attnonly config.json gives it");
    fs_copy(keep, q);
}

int main(void)
{
    lm_arch_register(&desc_attnonly);
    make_fixture();
    reference();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_predictions),
        cmocka_unit_test(test_head_scores),
        cmocka_unit_test(test_export_attention),
        cmocka_unit_test(test_refusals),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    fs_rm_tree(folder);
    return failed;
}
