#define _DEFAULT_SOURCE
/* A test-only architecture (issue 33): a small attention-only transformer
 * defined in this one file as the program's own are (arch.h: its
 * config.json fields, its tensors, its layer on the runtime), registered
 * with one line and run through the command line's --model path (the model
 * source's cli_open and cli_write, as main.c calls them, on options parsed
 * from an argv): --print csv, predictions and head-scores and
 * --export-attention and --export, each number checked against a naive
 * double-precision forward computed here. Then in the window, the real app
 * in-process (test_app_util.h's offscreen Fix), shown as `--model FOLDER
 * TEXT` shows it (cli_open, then the source's show): the maps (L, H), what
 * comes next, live typing, the model view (G, arrows, Enter), a session
 * saved and opened again, and the window's PNG and compare CSV exports,
 * against the same loop. Its fixture is written here: config.json with a
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
#include "attnviz/colormap.h"
#include "attnviz/figure.h"
#include "attnviz/head_scores.h"
#include "attnviz/lm.h"
#include "attnviz/maps_shown.h"
#include "attnviz/model_source.h"
#include "attnviz/options.h"
#include "attnviz/source.h"
#include "test_app_util.h"
#include "test_gpt2_fs.h"

#include <SDL_image.h>

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
                                   ao_layer, ao_logits, NULL, NULL};

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
    *f = (ArchFacts){((const AoConfig *)cfg)->bos_id, 1, 0, -1, -1};
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

/* The n tokens tok (n <= P) through the model: every map into maps (L × H
 * × n × n, 0 above the diagonal), the next token's probabilities after
 * the last into probs (V). */
static void naive(const int *tok, int n, double *maps, double *probs)
{
    double x[P][C], a[P][C], q[P][C], k[P][C], v[P][C], z[P][C];
#define M(l, h, i, j) maps[(((size_t)(l) * H + (h)) * n + (i)) * n + (j)]
    assert_true(n >= 1 && n <= P);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++)
            x[i][c] = (double)embed[tok[i] * C + c] + pos[i * C + c];
    for (int l = 0; l < L; l++) {
        for (int i = 0; i < n; i++) {
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
            for (int i = 0; i < n; i++) {
                double sc[P], mx = -INFINITY, sum = 0;
                for (int j = 0; j <= i; j++) {
                    sc[j] = 0;
                    for (int d = 0; d < D; d++)
                        sc[j] += q[i][h * D + d] * k[j][h * D + d];
                    sc[j] /= sqrt((double)D);
                    mx = fmax(mx, sc[j]);
                }
                for (int j = 0; j < n; j++) {
                    M(l, h, i, j) = j <= i ? exp(sc[j] - mx) : 0;
                    sum += M(l, h, i, j);
                }
                for (int d = 0; d < D; d++)
                    z[i][h * D + d] = 0;
                for (int j = 0; j <= i; j++) {
                    M(l, h, i, j) /= sum;
                    for (int d = 0; d < D; d++)
                        z[i][h * D + d] += M(l, h, i, j) * v[j][h * D + d];
                }
            }
        for (int i = 0; i < n; i++)
            for (int o = 0; o < C; o++)
                for (int c = 0; c < C; c++)
                    x[i][o] += mats[l][3][o * C + c] * z[i][c];
    }
#undef M
    double f[C], mx = -INFINITY, sum = 0;
    ref_rms(f, x[n - 1], norm_f);
    for (int t = 0; t < V; t++) {
        probs[t] = 0;
        for (int c = 0; c < C; c++)
            probs[t] += f[c] * embed[t * C + c];
        mx = fmax(mx, probs[t]);
    }
    for (int t = 0; t < V; t++)
        sum += (probs[t] = exp(probs[t] - mx));
    for (int t = 0; t < V; t++)
        probs[t] /= sum;
}

static void reference(void)
{
    naive(ids, NT, &ref_maps[0][0][0][0], ref_probs);
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
    assert_string_equal(err.msg, "d_model 8 does not divide by num_heads 3 (model_type attnonly)");
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

/* ---- in the window --------------------------------------------------------------- *
 * The real app in-process (test_app_util.h's Fix: an offscreen 1280×800
 * window, events handed over as its loop does), the model shown the way
 * `attnviz --model FOLDER TEXT` shows it: options parsed, the model
 * source's cli_open, then its show (main.c, then window.c). */

/* text's tokens in the fixture's tokenizer: one a character (A-D, digits
 * and punctuation but " and $, whose merges would join them). */
static int tokens_of(const char *text, int *out)
{
    int n = 0;
    for (const char *c = text; *c; c++) {
        assert_true(*c >= '!' && *c <= 'D' && *c != '"' && *c != '$' && n < P);
        out[n++] = *c - '!';
    }
    return n;
}

/* The naive loop's maps of text (L × H × n × n, malloc'd), n its tokens. */
static double *naive_of(const char *text, int *n, double *probs)
{
    int tok[P];
    double p[V];
    *n = tokens_of(text, tok);
    double *maps = malloc(sizeof(double) * L * H * (size_t)*n * *n);
    assert_non_null(maps);
    naive(tok, *n, maps, probs ? probs : p);
    return maps;
}

static const double *naive_map(const double *maps, int n, int l, int h)
{
    return maps + ((size_t)l * H + h) * n * n;
}

/* `attnviz --model FOLDER TEXT` into the window: cli_open on the parsed
 * options, then the source's show, which takes it. */
static void show_cli(Fix *f, const char *text)
{
    char *argv[] = {"attnviz", "--model", folder, (char *)text, NULL};
    Options o;
    AttnErr err = {0};
    assert_int_equal(options_parse(&o, 4, argv, &err), 0);
    void *opened = NULL;
    if (source_model.cli_open(&o, o.model, &opened, &err) < 0)
        fail_msg("%s: %s", err.file, err.msg);
    assert_int_equal(((ModelOpened *)opened)->for_window, 1);
    options_free(&o);
    assert_int_equal(source_model.show(f->a, opened), 0);
    assert_ptr_equal(f->a->kind, &source_model);
    assert_string_equal(f->a->text, text);
}

/* A model's Imported of text computed afresh (not for the window: no
 * thumbnails made on the way). */
static ModelOpened *fresh(const char *text)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    if (model_open_path(folder, 0, &g, &err) < 0)
        fail_msg("%s: %s", err.file, err.msg);
    assert_int_equal(model_compute_text(g, text, strlen(text), &err), 0);
    return g;
}

/* m (the window's map) is the loop's want (n × n): every key up to the
 * query within 2e-6, the later ones masked. */
static void assert_map_naive(const AttnMap *m, const double *want, int n, const char *what)
{
    assert_non_null(m->v);
    assert_int_equal(m->Tq, n);
    assert_int_equal(m->Tk, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (j > i) {
                assert_true(m->causal || (m->mask && m->mask[(size_t)i * n + j]));
                continue;
            }
            double got = attn_map_at(m, i, j);
            if (!(fabs(got - want[(size_t)i * n + j]) <= 2e-6))
                fail_msg("%s [%d][%d]: %.9g, the loop's %.9g", what, i, j, got, want[(size_t)i * n + j]);
        }
}

/* The map shown in the head view, after a frame. */
static const AttnMap *shown(Fix *f)
{
    app_draw(f->a, f->r);
    return &f->a->vs.map;
}

/* 1. The map shown: layer 1 head 1, then L (layer 2), then H (head 2). */
static void test_window_maps(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    show_cli(f, TEXT);
    assert_true(wait_maps(f));
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->imp->f.L, L);
    assert_int_equal(ms->imp->f.H, H);
    assert_int_equal(ms->layer, 0);
    assert_int_equal(ms->head, 0);
    assert_string_equal(a->vs.map.q_labels[4], "#");
    assert_map_naive(shown(f), &ref_maps[0][0][0][0], NT, "layer 1 head 1");
    key(f, SDLK_l, 0);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 0);
    assert_map_naive(shown(f), &ref_maps[1][0][0][0], NT, "layer 2 head 1");
    key(f, SDLK_h, 0);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 1);
    assert_map_naive(shown(f), &ref_maps[1][1][0][0], NT, "layer 2 head 2");
}

/* The tokenizer's token texts (vocab.json read here), id → text. */
static void vocab_texts(char text[V][16])
{
    size_t len;
    char *json = test_slurp(TOK "/vocab.json", &len);
    assert_non_null(json);
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    memset(text, 0, (size_t)V * 16);
    for (cJSON *e = doc->child; e; e = e->next) {
        assert_true(e->valueint >= 0 && e->valueint < V);
        snprintf(text[e->valueint], 16, "%s", e->string);
    }
    cJSON_Delete(doc);
    free(json);
}

/* The ids by probs, most likely first. */
static void ranking(const double *probs, int *order)
{
    for (int t = 0; t < V; t++)
        order[t] = t;
    for (int a = 0; a < V; a++)
        for (int b = a + 1; b < V; b++)
            if (probs[order[b]] > probs[order[a]]) {
                int tmp = order[a];
                order[a] = order[b];
                order[b] = tmp;
            }
}

/* The panel's "What comes next" after position pos (1-based) lists the
 * loop's LM_TOP_K most likely tokens of probs, in order, with their
 * percentages. */
static void assert_panel_naive(Fix *f, int pos, const char *last, const double *probs)
{
    char want[80], vocab[V][16];
    int order[V];
    snprintf(want, sizeof want, "What comes next after \xE2\x80\x9C%s\xE2\x80\x9D (position %d):\n", last, pos);
    if (!wait_panel(f, want))
        fail_msg("the panel says \"%s\", not \"%s\"", f->a->vs.no_model ? f->a->vs.no_model : "", want);
    vocab_texts(vocab);
    ranking(probs, order);
    const char *p = strstr(f->a->vs.no_model, want) + strlen(want);
    for (int r = 0; r < LM_TOP_K; r++) {
        int rank;
        double pct;
        assert_int_equal(sscanf(p, "%d. %lf%%", &rank, &pct), 2);
        assert_int_equal(rank, r + 1);
        const char *open = strstr(p, "\xE2\x80\x9C"), *end = strchr(p, '\n');
        assert_true(open && end && open < end);
        open += 3;
        char tok[64];
        snprintf(tok, sizeof tok, "%.*s", (int)(end - open - 3), open); /* before the closing ” */
        if (strcmp(tok, vocab[order[r]]) != 0 || fabs(pct - 100.0 * probs[order[r]]) > 0.051)
            fail_msg("rank %d: \"%s\" %.1f%%, the loop's \"%s\" %.4f%%", r + 1, tok, pct, vocab[order[r]],
                     100.0 * probs[order[r]]);
        p = end + 1;
    }
}

/* 2. What comes next after the text: the loop's top tokens. */
static void test_window_predictions(void **state)
{
    Fix *f = *state;
    show_cli(f, TEXT);
    assert_true(wait_maps(f));
    assert_int_equal(f->a->vs.query, NT - 1);
    assert_panel_naive(f, NT, "D", ref_probs);
}

/* 3. Typing: the text's maps follow, every layer and head a fresh
 * compute's bit for bit and the loop's; the predictions follow. */
static void test_window_typing(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    static const char typed[] = TEXT "C#1";
    show_cli(f, TEXT);
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0); /* layer 2, head 2: kept through the edit */
    key(f, SDLK_h, 0);
    key(f, SDLK_SLASH, 0);
    key(f, SDLK_END, 0);
    type(f, "C#1");
    assert_true(wait_maps(f));
    assert_string_equal(a->text, typed);
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 1);
    ModelOpened *g = fresh(typed);
    int n, tok[P];
    assert_int_equal(tokens_of(typed, tok), g->ids.n);
    assert_memory_equal(g->ids.id, tok, sizeof(int) * (size_t)g->ids.n);
    const AttnFile *now = &ms->imp->f;
    assert_int_equal(now->Tq, g->ids.n);
    assert_maps_equal(now, &g->im->f, L);
    model_opened_free(g);
    double probs[V], *want = naive_of(typed, &n, probs);
    float *got = malloc(sizeof(float) * (size_t)n * n);
    assert_non_null(got);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            assert_int_equal(attn_file_map(now, ATTN_PICK_HEAD, l, h, got), 0);
            AttnMap m = attn_map_make(got, n, n, NULL, NULL, ATTN_MAP_WEIGHTS);
            m.causal = 1;
            assert_map_naive(&m, naive_map(want, n, l, h), n, "typed");
        }
    assert_map_naive(shown(f), naive_map(want, n, 1, 1), n, "typed, shown");
    key(f, SDLK_ESCAPE, 0);
    for (int k = 0; k < P && a->vs.query < n - 1; k++) /* the last row: what comes after the text */
        key(f, SDLK_DOWN, 0);
    assert_int_equal(a->vs.query, n - 1);
    assert_panel_naive(f, n, "1", probs);
    free(got);
    free(want);
}

/* 4. The model view (G): every layer × head, each the size of the
 * thumbnails of L × H maps, the numbers of a fresh Imported's thumbnails
 * (so the loop's: the maps are smaller than a thumbnail's side); arrows
 * and Enter open a head. */
static void test_window_model_view(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    show_cli(f, TEXT);
    assert_true(wait_maps(f));
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->grid, 1);
    assert_ptr_equal(a->vs.grid, &ms->thumb_maps);
    const AttnMaps *t = &ms->thumb_maps;
    int side = maps_thumb_side(L, H), tq, tk;
    import_thumb_size(NT, NT, side, &tq, &tk);
    assert_int_equal(t->L, L);
    assert_int_equal(t->H, H);
    assert_int_equal(t->Tq, tq);
    assert_int_equal(t->Tk, tk);
    assert_int_equal(tq, NT); /* 9 tokens: every cell its own */
    ModelOpened *g = fresh(TEXT);
    assert_null(g->im->pre_thumbs);
    float *want = NULL;
    AttnErr err = {0};
    int wq_, wk_;
    assert_int_equal(import_thumbs(g->im, side, &want, &wq_, &wk_, &err), 0);
    assert_int_equal(wq_, tq);
    assert_int_equal(wk_, tk);
    assert_memory_equal(t->v, want, sizeof(float) * L * H * (size_t)tq * tk);
    free(want);
    model_opened_free(g);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            AttnMap m = attn_maps_get(t, l, h);
            m.causal = 1;
            assert_map_naive(&m, &ref_maps[l][h][0][0], NT, "thumbnail");
        }
    /* from layer 1 head 1: Down, Right, Enter open layer 2 head 2 */
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_RIGHT, 0);
    assert_int_equal(ms->grid_layer, 1);
    assert_int_equal(ms->grid_head, 1);
    key(f, SDLK_RETURN, 0);
    assert_int_equal(ms->grid, 0);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 1);
    assert_map_naive(shown(f), &ref_maps[1][1][0][0], NT, "opened layer 2 head 2");
    assert_null(a->vs.grid);
    /* again: G, Left, Enter: layer 2 head 1 */
    key(f, SDLK_g, 0);
    key(f, SDLK_LEFT, 0);
    key(f, SDLK_RETURN, 0);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 0);
    assert_map_naive(shown(f), &ref_maps[1][0][0][0], NT, "opened layer 2 head 1");
}

/* 5. A session: the model's folder, its text, layer, head and query;
 * opened again after another source, the same model computes the same. */
static void test_window_session(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char path[200], real[4096];
    snprintf(path, sizeof path, "%s/s.json", folder);
    show_cli(f, TEXT);
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0);
    key(f, SDLK_h, 0);
    key(f, SDLK_UP, 0);
    assert_int_equal(a->vs.query, NT - 2);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(a->status_err, 0);
    size_t len;
    char *saved = test_slurp(path, &len);
    assert_non_null(saved);
    assert_non_null(realpath(folder, real));
    if (!strstr(saved, real))
        fail_msg("the session does not name %s:\n%s", real, saved);
    free(saved);
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    assert_ptr_not_equal(a->kind, &source_model);
    app_set_sentence(a, "ABBA"); /* the bar's text is not the session's */
    if (open_now(a, path) < 0)
        fail_msg("%s", a->status);
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, TEXT);
    assert_true(wait_maps(f));
    const MapsShown *ms = a->kind->maps(a);
    assert_int_equal(ms->layer, 1);
    assert_int_equal(ms->head, 1);
    assert_int_equal(a->vs.query, NT - 2);
    assert_map_naive(shown(f), &ref_maps[1][1][0][0], NT, "the session's layer 2 head 2");
    ModelOpened *g = fresh(TEXT);
    assert_maps_equal(&ms->imp->f, &g->im->f, L);
    model_opened_free(g);
    unlink(path);
}

static Rgb img_rgb(const SDL_Surface *s, int x, int y)
{
    Uint32 p = ((const Uint32 *)((const Uint8 *)s->pixels + (size_t)y * s->pitch))[x];
    return (Rgb){(Uint8)(p >> 16), (Uint8)(p >> 8), (Uint8)p};
}

/* The numbers of a --print csv file (after the header and each row's
 * label) into v; how many. */
static int csv_numbers(const char *path, double *v, int n)
{
    FILE *fp = fopen(path, "r");
    char line[4096];
    int k = 0;
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof line, fp));
    assert_int_equal(strncmp(line, "query,", 6), 0);
    while (fgets(line, sizeof line, fp))
        for (char *p = strchr(line, ','); p && k < n; p = strchr(p + 1, ','))
            v[k++] = strtod(p + 1, NULL);
    fclose(fp);
    return k;
}

/* 6. The window's exports: Ctrl+E's PNG of the shown map (layer 2 head 1)
 * has its cells in the loop's map's colours; in the compare view (V pins
 * it, H shows head 2) Ctrl+E's CSV is head 2 − head 1, the loop's. */
static void test_window_exports(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    char dir[200];
    snprintf(dir, sizeof dir, "%s/exports", folder);
    assert_int_equal(mkdir(dir, 0700), 0);
    a->export_dir = dir;
    show_cli(f, TEXT);
    assert_true(wait_maps(f));
    key(f, SDLK_l, 0);
    app_draw(a, f->r);
    int n0 = a->export_count;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(a->export_count, n0 + 1);
    size_t n = strlen(a->last_export);
    assert_true(n > 4 && strcmp(a->last_export + n - 4, ".png") == 0);
    SDL_Surface *raw = IMG_Load(a->last_export);
    assert_non_null(raw);
    SDL_Surface *img = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_RGB888, 0);
    SDL_FreeSurface(raw);
    assert_non_null(img);
    Figure fig; /* the export's layout: window.c's scale, the state's map */
    figure_layout_export(&fig, &a->vs.map, 2.0f * a->ui_scale * a->dpi_scale, a->vs.title, a->vs.facts,
                         a->vs.cmap, a->vs.cscale, a->vs.query);
    assert_int_equal(img->w, fig.w);
    assert_int_equal(img->h, fig.h);
    assert_int_equal(fig.Tq, NT);
    assert_false(fig.cb.cs.per_row);
    int bad = 0;
    for (int i = 0; i < NT; i++) {
        if (i == a->vs.query)
            continue; /* its outline */
        for (int j = 0; j <= i; j++) {
            Rgb got = img_rgb(img, figure_cell_x(&fig, j) + 5, figure_cell_y(&fig, i) + 5);
            Rgb want = colormap_scale_rgb(&fig.cb.cs, (float)ref_maps[1][0][i][j]);
            if (abs(got.r - want.r) + abs(got.g - want.g) + abs(got.b - want.b) > 3) {
                print_message("cell [%d][%d]: %d,%d,%d, the loop's %d,%d,%d\n", i, j, got.r, got.g, got.b,
                              want.r, want.g, want.b);
                bad++;
            }
        }
    }
    assert_int_equal(bad, 0);
    SDL_FreeSurface(img);
    unlink(a->last_export);
    /* the compare view's CSV */
    key(f, SDLK_v, 0);
    key(f, SDLK_h, 0);
    app_draw(a, f->r);
    assert_non_null(a->vs.cmp_diff);
    assert_non_null(strstr(a->vs.cmp_what, "head 1 vs head 2"));
    n0 = a->export_count;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->status_err, 0);
    assert_true(a->export_count > n0);
    char csv[4200];
    n = strlen(a->last_export);
    snprintf(csv, sizeof csv, "%.*s.csv", (int)(n - 4), a->last_export);
    double got[NT * NT];
    assert_int_equal(csv_numbers(csv, got, NT * NT), NT * NT);
    for (int i = 0; i < NT; i++)
        for (int j = 0; j <= i; j++) {
            double want = ref_maps[1][1][i][j] - ref_maps[1][0][i][j];
            if (!(fabs(got[i * NT + j] - want) <= 4e-6))
                fail_msg("difference [%d][%d]: %.9g, the loop's %.9g", i, j, got[i * NT + j], want);
        }
    unlink(csv);
    unlink(a->last_export);
    key(f, SDLK_v, 0);
    fs_rm_tree(dir);
}

/* The command line's --export of the map: .csv (the loop's numbers) and
 * .png beside it. */
static void test_cli_export(void **state)
{
    (void)state;
    char csv[128], png[128];
    snprintf(csv, sizeof csv, "%s/map.csv", folder);
    snprintf(png, sizeof png, "%s/map.png", folder);
    int rc;
    AttnErr err;
    free(run(&rc, &err, "--layer", "2", "--head", "2", "--export", csv, "--export", png, NULL));
    if (rc != 0)
        fail_msg("%s: %s", err.file, err.msg);
    double got[NT * NT];
    assert_int_equal(csv_numbers(csv, got, NT * NT), NT * NT);
    for (int i = 0; i < NT; i++)
        for (int j = 0; j < NT; j++)
            if (!(fabs(got[i * NT + j] - ref_maps[1][1][i][j]) <= 2e-6))
                fail_msg("[%d][%d]: %.9g, the loop's %.9g", i, j, got[i * NT + j], ref_maps[1][1][i][j]);
    SDL_Surface *img = IMG_Load(png);
    assert_non_null(img);
    assert_true(img->w > 100 && img->h > 100);
    SDL_FreeSurface(img);
    unlink(csv);
    unlink(png);
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
        cmocka_unit_test(test_cli_export),
        cmocka_unit_test_setup_teardown(test_window_maps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_predictions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_typing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_model_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_exports, setup, teardown),
    };
    int failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
    fs_rm_tree(folder);
    return failed;
}
