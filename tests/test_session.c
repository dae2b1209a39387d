/* Tests for session files (src/io/session.c), the atomic writer under them
 * (src/io/file.c) and the app's save/autosave/open (src/app/app.c):
 * the round trip (config, weights bit for bit, edited vectors, sentence,
 * view; --print json of both models byte-identical; weights_load reads a
 * session), session_parse's plain data with no model, every kind of bad
 * file leaving the model unchanged, failed saves
 * (failing writer, full disk, missing folder, a directory) leaving the old
 * file intact and no temp file, SIGKILL in the middle of saves never leaving
 * a partial session, and autosave/open through the AppState.
 * Run from the repository root with SDL_VIDEODRIVER=dummy. */
#define _XOPEN_SOURCE 700 /* setrlimit, SIGXFSZ */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attnviz/app.h"
#include "attnviz/app_state.h"
#include "attnviz/embed.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/session.h"

#include "test_util.h"

#define SENT_A "the train left the station on time"
#define SENT_B "the bank of the river was muddy after the rain"

static EmbedTable *table;

/* Under ASan: fontconfig leaks while loading its configuration (see
 * test_app.c); not attnviz's. Unused in normal builds. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:FcInitLoadConfigAndFonts\nleak:libfontconfig.so\n";
}

static int group_setup(void **state)
{
    (void)state;
    return test_sdl_dummy() < 0 || test_load_embeddings(&table) < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
    (void)state;
    embed_destroy(table);
    table = NULL;
    SDL_Quit();
    return 0;
}

/* ---- helpers ---------------------------------------------------------------- */

/* session_parse for m's d and settings, then model_apply_session, as
 * app_load_session does for a file: on error the parser must leave its
 * output zeroed (nothing to free) and m and sv are not touched. */
static int parse_into(Model *m, SessionView *sv, const char *data, size_t len,
                      const char *name, AttnErr *err)
{
    Session s, zero;
    memset(&s, 0x5a, sizeof s);
    memset(&zero, 0, sizeof zero);
    int rc = session_parse(&s, m->d, &m->cfg, data, len, name, err);
    if (rc < 0) {
        assert_memory_equal(&s, &zero, sizeof s);
        return rc;
    }
    rc = model_apply_session(m, &s);
    if (rc == 0)
        *sv = s.view;
    session_free(&s);
    return rc;
}

static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char buf[512];
    snprintf(buf, sizeof buf, "%s/attnviz-session-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(buf);
    assert_non_null(d);
    return strdup(d);
}

/* Remove the files (and empty sub-folders) of dir, then dir. */
static void rm_dir(char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[1200];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p) != 0)
                rmdir(p);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Entries of dir whose name contains ".tmp-"; remove them when asked. */
static int count_tmp(const char *dir, int remove)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp-")) {
            n++;
            if (remove) {
                char p[1200];
                snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
                unlink(p);
            }
        }
    closedir(d);
    return n;
}

static char *json_of(const Model *m, size_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(print_json(f, m, NULL), 0);
    assert_int_equal(fflush(f), 0);
    char *b = test_read_back(f, len);
    assert_true(*len > 0);
    fclose(f);
    return b;
}

/* Everything a session load may change, as bytes: config, seed, weights,
 * edited vectors, sentence, and the printout of the computed state. */
static char *state_bytes(const Model *m, size_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    const AttnConfig *c = &m->cfg;
    fprintf(f, "mode %d heads %d scale %d causal %d posenc %d tau %a\n", (int)c->mode,
            c->heads, c->scale, c->causal, c->posenc, (double)c->temperature);
    fprintf(f, "seed %d %llu\n", m->has_seed, (unsigned long long)m->seed);
    const AttnParams *p = &m->params;
    fprintf(f, "params %d %d %d\n", p->d, p->h, p->dk);
    size_t slice = (size_t)p->h * p->d * p->dk;
    fwrite(p->Wq, sizeof(float), slice, f);
    fwrite(p->Wk, sizeof(float), slice, f);
    fwrite(p->Wv, sizeof(float), slice, f);
    fwrite(p->Wo, sizeof(float), (size_t)p->d * p->d, f);
    fwrite(p->v, sizeof(float), (size_t)p->d, f); /* h × dk = d */
    fwrite(p->vb, sizeof(float), (size_t)p->d, f);
    fprintf(f, "\nscore %d keys %s Tk %d\n", c->score, m->keys_text ? m->keys_text : "(null)", m->Tk);
    fprintf(f, "\nover %d\n", m->n_over);
    for (int i = 0; i < m->n_over; i++) {
        fprintf(f, "%s:", m->over_word[i]);
        fwrite(m->over_vec + (size_t)i * m->d, sizeof(float), (size_t)m->d, f);
    }
    fprintf(f, "\ntext %s\nT %d\n", m->text ? m->text : "(null)", m->T);
    fwrite(m->E, sizeof(float), (size_t)m->T * m->d, f);
    assert_int_equal(print_json(f, m, NULL), 0);
    assert_int_equal(fflush(f), 0);
    char *b = test_read_back(f, len);
    fclose(f);
    return b;
}

/* The model the round trip saves: 2 seeded heads, causal, posenc, no
 * scaling, τ 0.7, two edited word vectors (one not in the sentence). */
static void model_rich(Model *m, const char *text)
{
    AttnConfig cfg = attn_config_default();
    assert_int_equal(model_init(m, table, &cfg), 0);
    assert_int_equal(model_set_heads(m, 2), 0);
    model_set_seed(m, 12345);
    m->cfg.causal = 1;
    m->cfg.posenc = 1;
    m->cfg.scale = 0;
    m->cfg.temperature = 0.7f;
    assert_int_equal(model_set_text(m, text, strlen(text)), 0);
    float v[ATTN_MAX_DIM];
    for (int k = 0; k < m->d; k++)
        v[k] = 0.1f * (float)k - 0.3333333f;
    assert_int_equal(model_set_word_vector(m, "train", v), 0);
    for (int k = 0; k < m->d; k++)
        v[k] = -1.0f / (float)(k + 3);
    assert_int_equal(model_set_word_vector(m, "\xC3\xBC" "ber", v), 0);
    assert_int_equal(model_compute(m), 0);
}

static void model_plain(Model *m, const char *text)
{
    AttnConfig cfg = attn_config_default();
    assert_int_equal(model_init(m, table, &cfg), 0);
    assert_int_equal(model_set_text(m, text, strlen(text)), 0);
    assert_int_equal(model_compute(m), 0);
}

static void view_rich(SessionView *sv)
{
    session_view_default(sv);
    sv->query = 3;
    sv->key = 2;
    sv->head = 1;
    sv->matrix = 1;
    sv->cmap = 2;
    sv->all_lines = 1;
    sv->dark = 0;
    sv->ui_scale = 1.3f;
    sv->sentence_index = 2;
    sv->edit_target = 4;
}

static void assert_params_equal(const AttnParams *a, const AttnParams *b)
{
    assert_int_equal(a->d, b->d);
    assert_int_equal(a->h, b->h);
    assert_int_equal(a->dk, b->dk);
    size_t slice = (size_t)a->h * a->d * a->dk * sizeof(float);
    assert_memory_equal(a->Wq, b->Wq, slice);
    assert_memory_equal(a->Wk, b->Wk, slice);
    assert_memory_equal(a->Wv, b->Wv, slice);
    assert_memory_equal(a->Wo, b->Wo, (size_t)a->d * a->d * sizeof(float));
}

/* ---- round trip ------------------------------------------------------------- */

static void test_round_trip(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/s.json", dir);
    Model a, b, w;
    model_rich(&a, SENT_A);
    SessionView sv, got;
    view_rich(&sv);
    AttnErr err = {0};
    assert_int_equal(session_save(path, &a, &sv, &err), 0);
    assert_int_equal(test_count_entries(dir), 1);

    model_plain(&b, "something else entirely");
    memset(&got, 0x55, sizeof got);
    assert_int_equal(app_load_session(&b, &got, path, &err), 0);
    /* config */
    assert_int_equal(b.cfg.mode, a.cfg.mode);
    assert_int_equal(b.cfg.heads, 2);
    assert_int_equal(b.cfg.scale, 0);
    assert_int_equal(b.cfg.causal, 1);
    assert_int_equal(b.cfg.posenc, 1);
    assert_memory_equal(&b.cfg.temperature, &a.cfg.temperature, sizeof(float));
    assert_memory_equal(&b.cfg, &a.cfg, sizeof a.cfg);
    assert_int_equal(b.has_seed, 1);
    assert_true(b.seed == 12345);
    /* weights, bit for bit */
    assert_params_equal(&b.params, &a.params);
    /* edited vectors */
    assert_int_equal(b.n_over, a.n_over);
    assert_int_equal(b.n_over, 2);
    for (int i = 0; i < a.n_over; i++) {
        assert_string_equal(b.over_word[i], a.over_word[i]);
        assert_memory_equal(b.over_vec + (size_t)i * b.d, a.over_vec + (size_t)i * a.d,
                            (size_t)a.d * sizeof(float));
    }
    /* sentence */
    assert_string_equal(b.text, SENT_A);
    /* view */
    assert_int_equal(got.query, 3);
    assert_int_equal(got.key, 2);
    assert_int_equal(got.head, 1);
    assert_int_equal(got.matrix, 1);
    assert_int_equal(got.cmap, 2);
    assert_int_equal(got.all_lines, 1);
    assert_int_equal(got.dark, 0);
    assert_memory_equal(&got.ui_scale, &sv.ui_scale, sizeof(float));
    assert_int_equal(got.sentence_index, 2);
    assert_int_equal(got.edit_target, 4);
    /* --print json of both: the same bytes */
    assert_int_equal(model_compute(&b), 0);
    size_t la, lb;
    char *ja = json_of(&a, &la), *jb = json_of(&b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ja, jb, la);
    free(ja);
    free(jb);

    /* saving the loaded model gives the same file */
    char path2[1100];
    snprintf(path2, sizeof path2, "%s/s2.json", dir);
    assert_int_equal(session_save(path2, &b, &got, &err), 0);
    size_t f1, f2;
    char *s1 = test_slurp(path, &f1), *s2 = test_slurp(path2, &f2);
    assert_int_equal(f1, f2);
    assert_memory_equal(s1, s2, f1);
    free(s1);
    free(s2);

    /* a session is a weights file too */
    model_plain(&w, "the train");
    assert_int_equal(app_load_weights(&w, path, &err), 0);
    assert_int_equal(w.cfg.heads, 2);
    assert_params_equal(&w.params, &a.params);

    model_destroy(&a);
    model_destroy(&b);
    model_destroy(&w);
    rm_dir(dir);
}

/* session_parse gives plain data, with no model: what the file says, and
 * for what it leaves out the base settings it is given and the default
 * view. model_apply_session then sets exactly that, and refuses a session
 * of another d without touching the model. */
static void test_parse_plain_data(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/s.json", dir);
    Model a, b;
    model_rich(&a, SENT_A);
    SessionView sv;
    view_rich(&sv);
    AttnErr err = {0};
    assert_int_equal(session_save(path, &a, &sv, &err), 0);
    size_t len;
    char *text = test_slurp(path, &len);
    assert_non_null(text);
    Session s;
    assert_int_equal(session_parse(&s, a.d, NULL, text, len, "s.json", &err), 0);
    free(text);
    assert_string_equal(s.sentence, SENT_A);
    assert_int_equal(s.d, a.d);
    assert_memory_equal(&s.cfg, &a.cfg, sizeof a.cfg);
    assert_int_equal(s.has_weights, 1);
    assert_params_equal(&s.weights.params, &a.params);
    assert_int_equal(s.weights.has_seed, 1);
    assert_true(s.weights.seed == 12345);
    assert_int_equal(s.n_vectors, 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(s.words[i], a.over_word[i]);
        assert_memory_equal(s.vectors + (size_t)i * a.d, a.over_vec + (size_t)i * a.d,
                            (size_t)a.d * sizeof(float));
    }
    assert_memory_equal(&s.view, &sv, sizeof sv);
    session_free(&s);
    assert_null(s.sentence);
    assert_null(s.weights.params.Wq);
    assert_int_equal(s.n_vectors, 0);

    /* only a sentence: the base's settings, no weights, the default view */
    const char *bare = "{\"session\":{\"sentence\":\"the bank\"}}";
    AttnConfig base = attn_config_default();
    base.causal = 1;
    base.temperature = 2.5f;
    base.heads = 4;
    assert_int_equal(session_parse(&s, a.d, &base, bare, strlen(bare), "bare.json", &err), 0);
    assert_memory_equal(&s.cfg, &base, sizeof base);
    assert_int_equal(s.has_weights, 0);
    assert_int_equal(s.n_vectors, 0);
    SessionView def;
    session_view_default(&def);
    assert_memory_equal(&s.view, &def, sizeof def);

    /* another d: refused, the model unchanged */
    model_plain(&b, "something else");
    model_set_seed(&b, 9);
    float v[ATTN_MAX_DIM] = {0.25f};
    assert_int_equal(model_set_word_vector(&b, "else", v), 0);
    size_t blen, alen;
    char *before = state_bytes(&b, &blen);
    s.d = a.d / 2;
    assert_int_equal(model_apply_session(&b, &s), -ATTN_E_SHAPE);
    char *after = state_bytes(&b, &alen);
    assert_int_equal(alen, blen);
    assert_memory_equal(after, before, blen);
    free(after);
    /* applied: the sentence, the base's settings but the model's own heads
     * and weights, no edited vectors */
    s.d = a.d;
    AttnParams keep = {0};
    assert_int_equal(attn_params_copy(&keep, &b.params), 0);
    assert_int_equal(model_apply_session(&b, &s), 0);
    assert_string_equal(b.text, "the bank");
    assert_int_equal(b.T, 2);
    assert_int_equal(b.cfg.causal, 1);
    assert_true(b.cfg.temperature == 2.5f);
    assert_int_equal(b.cfg.heads, 1);
    assert_params_equal(&b.params, &keep);
    assert_int_equal(b.has_seed, 1);
    assert_int_equal(b.n_over, 0);
    session_free(&s);
    attn_params_destroy(&keep);
    free(before);
    model_destroy(&a);
    model_destroy(&b);
    rm_dir(dir);
}

/* Save m with a default view and load it into a fresh default model. */
static int save_load(const Model *m, Model *out, AttnErr *err)
{
    char *dir = make_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/s.json", dir);
    SessionView sv, got;
    session_view_default(&sv);
    int rc = session_save(path, m, &sv, err);
    assert_int_equal(rc, 0);
    model_plain(out, "x");
    rc = app_load_session(out, &got, path, err);
    rm_dir(dir);
    return rc;
}

/* Issue 14: a session with a second sentence, each score function and
 * edited v and vb comes back field by field, in learned and in basic mode
 * (v and vb both kept whatever the mode): config (score included), every
 * weight and v/vb bit for bit, both sentences, Tk and the key tokens, and
 * the --print json of both models byte for byte. */
static void test_round_trip_keys_score_v(void **state)
{
    (void)state;
    static const struct { AttnMode mode; int score; const char *keys; } cases[] = {
        {ATTN_MODE_LEARNED, ATTN_SCORE_ADDITIVE, "je suis heureux , Zyzzx"},
        {ATTN_MODE_LEARNED, ATTN_SCORE_COSINE, "  la voiture rouge  "},
        {ATTN_MODE_BASIC, ATTN_SCORE_ADDITIVE, "i am happy"},
        {ATTN_MODE_BASIC, ATTN_SCORE_COSINE, ""},
        {ATTN_MODE_LEARNED, ATTN_SCORE_DOT, "one"},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        Model a, b;
        model_rich(&a, SENT_A);
        a.cfg.mode = cases[t].mode;
        a.cfg.score = cases[t].score;
        for (int j = 0; j < a.d; j++) { /* not the defaults, not round in binary */
            a.params.v[j] = 0.1f * (float)j - 0.77f;
            a.params.vb[j] = 1.0f / (float)(j + 7) - 0.3f;
        }
        assert_int_equal(model_set_keys(&a, cases[t].keys, strlen(cases[t].keys)), 0);
        assert_int_equal(model_compute(&a), 0);
        AttnErr err = {0};
        assert_int_equal(save_load(&a, &b, &err), 0);
        assert_memory_equal(&b.cfg, &a.cfg, sizeof a.cfg);
        assert_int_equal(b.cfg.score, cases[t].score);
        assert_params_equal(&b.params, &a.params);
        assert_memory_equal(b.params.v, a.params.v, (size_t)a.d * sizeof(float));
        assert_memory_equal(b.params.vb, a.params.vb, (size_t)a.d * sizeof(float));
        assert_string_equal(b.text, SENT_A);
        assert_int_equal(b.cross, a.cross);
        assert_int_equal(b.cross, cases[t].keys[0] != '\0');
        if (a.cross) {
            assert_string_equal(b.keys_text, a.keys_text);
            assert_int_equal(b.Tk, a.Tk);
            for (int j = 0; j < a.Tk; j++)
                assert_string_equal(b.klabels[j], a.klabels[j]);
        }
        assert_int_equal(model_compute(&b), 0);
        size_t la, lb;
        char *ja = json_of(&a, &la), *jb = json_of(&b, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(ja, jb, la);
        free(ja);
        free(jb);
        model_destroy(&a);
        model_destroy(&b);
    }
}

/* A basic-mode session's heads[0].v is vb; session_parse also gives Session.keys
 * (NULL for "") and the score as plain data. */
static void test_parse_keys_score(void **state)
{
    (void)state;
    Model a;
    model_rich(&a, SENT_A);
    a.cfg.score = ATTN_SCORE_COSINE;
    assert_int_equal(model_set_keys(&a, "i am happy", 10), 0);
    assert_int_equal(model_compute(&a), 0);
    char *dir = make_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/k.json", dir);
    SessionView sv;
    session_view_default(&sv);
    AttnErr err = {0};
    assert_int_equal(session_save(path, &a, &sv, &err), 0);
    Session s;
    assert_int_equal(session_load(&s, a.d, NULL, path, &err), 0);
    assert_non_null(s.keys);
    assert_string_equal(s.keys, "i am happy");
    assert_int_equal(s.cfg.score, ATTN_SCORE_COSINE);
    session_free(&s);
    assert_int_equal(model_set_keys(&a, "", 0), 0);
    assert_int_equal(model_compute(&a), 0);
    assert_int_equal(session_save(path, &a, &sv, &err), 0);
    assert_int_equal(session_load(&s, a.d, NULL, path, &err), 0);
    assert_null(s.keys);
    session_free(&s);
    model_destroy(&a);
    rm_dir(dir);
}

/* Sentences with quotes, backslashes, control characters, tabs, newlines,
 * non-ASCII and invalid UTF-8 come back byte for byte. */
static void test_round_trip_odd_sentences(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "he said \"hi\" to the caf\xC3\xA9 \\ \xC3\xBC" "ber",
        "tabs\tand\nnew lines\r\nand a bell \x07 and \x01",
        "invalid \xFF\xFE utf-8 \xC3",
        "",
        "   leading and trailing   ",
    };
    for (size_t c = 0; c < sizeof texts / sizeof texts[0]; c++) {
        Model a, b;
        model_rich(&a, texts[c]);
        AttnErr err = {0};
        assert_int_equal(save_load(&a, &b, &err), 0);
        assert_string_equal(b.text, texts[c]);
        assert_int_equal(model_compute(&b), 0);
        size_t la, lb;
        char *ja = json_of(&a, &la), *jb = json_of(&b, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(ja, jb, la);
        free(ja);
        free(jb);
        model_destroy(&a);
        model_destroy(&b);
    }
}

/* Every temperature the command line accepts (-t 1e-6 .. 1e6) is saved in a
 * session that loads again. */
static void test_round_trip_temperature_limits(void **state)
{
    (void)state;
    static const char *const taus[] = {"1e-6", "0.05", "20", "1e6"};
    for (size_t c = 0; c < sizeof taus / sizeof taus[0]; c++) {
        Options o;
        AttnErr err = {0};
        char *argv[] = {"attnviz", "-t", (char *)taus[c], NULL};
        assert_int_equal(options_parse(&o, 3, argv, &err), 0);
        Model a, b;
        assert_int_equal(model_init(&a, table, &o.cfg), 0);
        assert_int_equal(model_set_text(&a, SENT_A, strlen(SENT_A)), 0);
        assert_int_equal(model_compute(&a), 0);
        memset(&err, 0, sizeof err);
        int rc = save_load(&a, &b, &err);
        int same = memcmp(&b.cfg.temperature, &a.cfg.temperature, sizeof(float)) == 0;
        if (rc != 0)
            fprintf(stderr, "-t %s (tau %.9g): the saved session does not load: %s\n", taus[c],
                    (double)a.cfg.temperature, err.msg);
        model_destroy(&a);
        model_destroy(&b);
        options_free(&o);
        assert_int_equal(rc, 0);
        assert_true(same);
    }
}

/* A session saved while basic mode is on (B toggles it) keeps the learned
 * weights the teacher set up: toggling back to learned after loading gives
 * the same weights and heads as before saving. */
static void test_round_trip_basic_mode_keeps_weights(void **state)
{
    (void)state;
    Model a, b;
    model_rich(&a, SENT_A);
    a.cfg.mode = ATTN_MODE_BASIC;
    assert_int_equal(model_compute(&a), 0);
    AttnErr err = {0};
    assert_int_equal(save_load(&a, &b, &err), 0);
    assert_int_equal(b.cfg.mode, ATTN_MODE_BASIC);
    assert_string_equal(b.text, SENT_A);
    int same = b.params.h == a.params.h && b.has_seed == a.has_seed;
    if (same) {
        size_t slice = (size_t)a.params.h * a.params.d * a.params.dk * sizeof(float);
        same = !memcmp(b.params.Wq, a.params.Wq, slice) && !memcmp(b.params.Wk, a.params.Wk, slice) &&
               !memcmp(b.params.Wv, a.params.Wv, slice) &&
               !memcmp(b.params.Wo, a.params.Wo, (size_t)a.d * a.d * sizeof(float));
    }
    if (!same)
        fprintf(stderr, "basic-mode session: saved 2 seeded heads (seed 12345), loaded %d head(s), "
                        "has_seed %d, weights differ\n", b.params.h, b.has_seed);
    model_destroy(&a);
    model_destroy(&b);
    assert_true(same);
}

/* ---- bad files leave the model unchanged ----------------------------------- */

/* The good session text, changed by edit (which gets the parsed root). */
static char *mutate(const char *good, void (*edit)(cJSON *root))
{
    cJSON *root = cJSON_Parse(good);
    assert_non_null(root);
    edit(root);
    char *s = cJSON_PrintUnformatted(root);
    assert_non_null(s);
    cJSON_Delete(root);
    return s;
}

static cJSON *sess(cJSON *root)
{
    cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "session");
    assert_non_null(s);
    return s;
}

static void edit_no_session(cJSON *root) { cJSON_DeleteItemFromObject(root, "session"); }
static void edit_session_array(cJSON *root)
{
    cJSON_ReplaceItemInObject(root, "session", cJSON_CreateArray());
}
static void edit_sentence_number(cJSON *root)
{
    cJSON_ReplaceItemInObject(sess(root), "sentence", cJSON_CreateNumber(42));
}
static void edit_temperature_neg(cJSON *root)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(sess(root), "settings"),
                              "temperature", cJSON_CreateNumber(-1));
}
static void edit_temperature_string(cJSON *root)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(sess(root), "settings"),
                              "temperature", cJSON_CreateString("0.7"));
}
static void edit_causal_number(cJSON *root)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(sess(root), "settings"),
                              "causal", cJSON_CreateNumber(1));
}
static void edit_mode_bad(cJSON *root)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(sess(root), "settings"),
                              "mode", cJSON_CreateString("fancy"));
}
static void edit_vector_short(cJSON *root)
{
    cJSON *emb = cJSON_GetObjectItemCaseSensitive(sess(root), "embeddings");
    cJSON *v = cJSON_GetObjectItemCaseSensitive(emb, "train");
    assert_non_null(v);
    cJSON_DeleteItemFromArray(v, 0);
}
static void edit_vector_string(cJSON *root)
{
    cJSON *emb = cJSON_GetObjectItemCaseSensitive(sess(root), "embeddings");
    cJSON *v = cJSON_GetObjectItemCaseSensitive(emb, "train");
    cJSON_ReplaceItemInArray(v, 3, cJSON_CreateString("x"));
}
static void edit_embeddings_array(cJSON *root)
{
    cJSON_ReplaceItemInObject(sess(root), "embeddings", cJSON_CreateArray());
}
static void edit_heads_3(cJSON *root)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(root, "config"), "heads",
                              cJSON_CreateNumber(3));
}
static void edit_wo_short(cJSON *root)
{
    cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(root, "Wo"), 0);
}
static void edit_view_query_frac(cJSON *root)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(sess(root), "view"), "query",
                              cJSON_CreateNumber(1.5));
}
static void edit_view_cmap_big(cJSON *root)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(sess(root), "view"), "colormap",
                              cJSON_CreateNumber(99));
}

static cJSON *head_of(cJSON *root, int k)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "heads"), k);
}
static void edit_v_short(cJSON *root)
{
    cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(head_of(root, 1), "v"), 0);
}
static void edit_v_string(cJSON *root)
{
    cJSON_ReplaceItemInObject(head_of(root, 0), "v", cJSON_CreateString("v"));
}
static void edit_vb_long(cJSON *root)
{
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(sess(root), "vb"), cJSON_CreateNumber(1));
}
static void edit_score_bad(cJSON *root)
{
    cJSON *st = cJSON_GetObjectItemCaseSensitive(sess(root), "settings");
    cJSON_ReplaceItemInObject(st, "score", cJSON_CreateString("dotty"));
}
static void edit_keys_number(cJSON *root)
{
    cJSON_ReplaceItemInObject(sess(root), "keys", cJSON_CreateNumber(3));
}

static void test_errors_leave_model(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/good.json", dir);
    Model src, m;
    model_rich(&src, SENT_B);
    SessionView sv;
    view_rich(&sv);
    AttnErr err = {0};
    assert_int_equal(session_save(path, &src, &sv, &err), 0);
    size_t glen;
    char *good = test_slurp(path, &glen);
    assert_non_null(good);

    model_plain(&m, SENT_A);
    float v[ATTN_MAX_DIM] = {0.5f, -0.25f};
    assert_int_equal(model_set_word_vector(&m, "left", v), 0);
    assert_int_equal(model_compute(&m), 0);
    size_t blen;
    char *before = state_bytes(&m, &blen);
    SessionView keep_sv, out_sv;
    memset(&keep_sv, 0x5a, sizeof keep_sv);

    static const struct {
        const char *what;
        void (*edit)(cJSON *);
        int code;
    } cases[] = {
        {"no session object", edit_no_session, ATTN_E_PARSE},
        {"session is an array", edit_session_array, ATTN_E_PARSE},
        {"sentence a number", edit_sentence_number, ATTN_E_PARSE},
        {"temperature -1", edit_temperature_neg, ATTN_E_RANGE},
        {"temperature a string", edit_temperature_string, ATTN_E_RANGE},
        {"causal a number", edit_causal_number, ATTN_E_PARSE},
        {"mode unknown", edit_mode_bad, ATTN_E_PARSE},
        {"embeddings vector of d-1", edit_vector_short, ATTN_E_SHAPE},
        {"embeddings vector with a string", edit_vector_string, ATTN_E_RANGE},
        {"embeddings an array", edit_embeddings_array, ATTN_E_PARSE},
        {"config.heads 3", edit_heads_3, ATTN_E_HEADS},
        {"Wo a row short", edit_wo_short, ATTN_E_SHAPE},
        {"view.query 1.5", edit_view_query_frac, ATTN_E_RANGE},
        {"heads[1].v a number short", edit_v_short, ATTN_E_SHAPE},
        {"heads[0].v a string", edit_v_string, ATTN_E_SHAPE},
        {"session.vb d+1 numbers", edit_vb_long, ATTN_E_SHAPE},
        {"settings.score unknown", edit_score_bad, ATTN_E_PARSE},
        {"keys a number", edit_keys_number, ATTN_E_PARSE},
        {"view.colormap 99", edit_view_cmap_big, ATTN_E_RANGE},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *bad = mutate(good, cases[c].edit);
        memset(&err, 0, sizeof err);
        out_sv = keep_sv;
        int rc = parse_into(&m, &out_sv, bad, strlen(bad), "bad.json", &err);
        if (rc != -cases[c].code)
            fprintf(stderr, "case '%s': rc %d (want %d): %s\n", cases[c].what, rc,
                    -cases[c].code, err.msg);
        assert_int_equal(rc, -cases[c].code);
        assert_int_equal(err.code, cases[c].code);
        assert_true(err.msg[0] != '\0');
        assert_memory_equal(&out_sv, &keep_sv, sizeof keep_sv);
        size_t alen;
        char *after = state_bytes(&m, &alen);
        if (alen != blen || memcmp(after, before, blen) != 0)
            fprintf(stderr, "case '%s': the model changed\n", cases[c].what);
        assert_int_equal(alen, blen);
        assert_memory_equal(after, before, blen);
        free(after);
        free(bad);
    }

    /* not JSON, truncated, empty: from files, through app_load_session */
    static const char *const texts[] = {"this is not json\n", "{\"session\": {\"sentence\": \"a b\"",
                                        "", "[1, 2, 3]\n", "null"};
    char bad_path[1100];
    snprintf(bad_path, sizeof bad_path, "%s/bad.json", dir);
    for (size_t c = 0; c < sizeof texts / sizeof texts[0]; c++) {
        spit(bad_path, texts[c]);
        memset(&err, 0, sizeof err);
        out_sv = keep_sv;
        assert_int_equal(app_load_session(&m, &out_sv, bad_path, &err), -ATTN_E_PARSE);
        assert_true(err.msg[0] != '\0');
        assert_non_null(strstr(err.file, "bad.json"));
        assert_memory_equal(&out_sv, &keep_sv, sizeof keep_sv);
        size_t alen;
        char *after = state_bytes(&m, &alen);
        assert_int_equal(alen, blen);
        assert_memory_equal(after, before, blen);
        free(after);
    }
    /* the truncated real session */
    assert_int_equal(parse_into(&m, &out_sv, good, glen / 2, "half.json", &err), -ATTN_E_PARSE);
    {
        size_t alen;
        char *after = state_bytes(&m, &alen);
        assert_int_equal(alen, blen);
        assert_memory_equal(after, before, blen);
        free(after);
    }
    /* a missing file and a folder */
    snprintf(bad_path, sizeof bad_path, "%s/nope.json", dir);
    assert_int_equal(app_load_session(&m, &out_sv, bad_path, &err), -ATTN_E_IO);
    assert_int_equal(app_load_session(&m, &out_sv, dir, &err), -ATTN_E_IO);
    /* --print json output (no session) is refused with a hint */
    size_t jl;
    char *pj = json_of(&src, &jl);
    memset(&err, 0, sizeof err);
    assert_int_equal(parse_into(&m, &out_sv, pj, jl, "p.json", &err), -ATTN_E_PARSE);
    assert_non_null(strstr(err.msg, "session"));
    free(pj);
    {
        size_t alen;
        char *after = state_bytes(&m, &alen);
        assert_int_equal(alen, blen);
        assert_memory_equal(after, before, blen);
        free(after);
    }

    /* and the unchanged good file does load (the mutations were the errors) */
    assert_int_equal(parse_into(&m, &out_sv, good, glen, "good.json", &err), 0);
    assert_string_equal(m.text, SENT_B);
    assert_params_equal(&m.params, &src.params);

    free(before);
    free(good);
    model_destroy(&src);
    model_destroy(&m);
    rm_dir(dir);
}

/* ---- atomic saves -------------------------------------------------------------- */

static int write_then_fail(FILE *f, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < 20000; i++)
        fputs("partial data ", f);
    fflush(f);
    return -1;
}

static void test_atomic_failing_writer(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/s.json", dir);
    Model m;
    model_rich(&m, SENT_A);
    SessionView sv;
    view_rich(&sv);
    AttnErr err = {0};
    assert_int_equal(session_save(path, &m, &sv, &err), 0);
    size_t l0, l1;
    char *old = test_slurp(path, &l0);
    assert_true(io_write_atomic(path, write_then_fail, NULL, &err) < 0);
    assert_int_equal(err.code, ATTN_E_IO);
    assert_true(err.msg[0] != '\0');
    char *now = test_slurp(path, &l1);
    assert_int_equal(l0, l1);
    assert_memory_equal(old, now, l0);
    assert_int_equal(count_tmp(dir, 0), 0);
    assert_int_equal(test_count_entries(dir), 1);
    free(old);
    free(now);
    model_destroy(&m);
    rm_dir(dir);
}

/* A full disk: in a child with RLIMIT_FSIZE below the session's size (and
 * SIGXFSZ ignored, so write() fails with EFBIG instead of killing). */
static void test_atomic_full_disk(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[1024], fresh[1100];
    snprintf(path, sizeof path, "%s/s.json", dir);
    snprintf(fresh, sizeof fresh, "%s/new.json", dir);
    Model a, b;
    model_plain(&a, "the train");
    model_rich(&b, SENT_B);
    SessionView sv;
    view_rich(&sv);
    AttnErr err = {0};
    assert_int_equal(session_save(path, &a, &sv, &err), 0);
    size_t l0, l1;
    char *old = test_slurp(path, &l0);
    /* how big b's session is */
    char probe[1100];
    snprintf(probe, sizeof probe, "%s/probe.json", dir);
    assert_int_equal(session_save(probe, &b, &sv, &err), 0);
    struct stat st;
    assert_int_equal(stat(probe, &st), 0);
    assert_true(st.st_size > 8192);
    unlink(probe);

    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {(rlim_t)st.st_size / 3, (rlim_t)st.st_size / 3};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(10);
        AttnErr e = {0};
        char msg[1200];
        int rc = session_save(path, &b, &sv, &e);
        attn_err_format(&e, msg, sizeof msg);
        fprintf(stderr, "full disk (replace): rc %d: %s\n", rc, msg);
        if (rc >= 0)
            _exit(11);
        if (e.code != ATTN_E_IO || !e.msg[0] || !strstr(msg, path))
            _exit(12);
        memset(&e, 0, sizeof e);
        rc = session_save(fresh, &b, &sv, &e);
        if (rc >= 0)
            _exit(13);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        fprintf(stderr, "full-disk child killed by signal %d\n", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char *now = test_slurp(path, &l1);
    assert_non_null(now);
    assert_int_equal(l0, l1);
    assert_memory_equal(old, now, l0);
    assert_int_equal(access(fresh, F_OK), -1);
    assert_int_equal(count_tmp(dir, 0), 0);
    assert_int_equal(test_count_entries(dir), 1);
    free(old);
    free(now);
    model_destroy(&a);
    model_destroy(&b);
    rm_dir(dir);
}

static void test_atomic_bad_targets(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[1100];
    Model m;
    model_rich(&m, SENT_A);
    SessionView sv;
    view_rich(&sv);
    AttnErr err = {0};
    char msg[1200];
    /* a missing folder: the message names the path, nothing is created */
    snprintf(path, sizeof path, "%s/missing/deeper/s.json", dir);
    assert_true(session_save(path, &m, &sv, &err) < 0);
    assert_int_equal(err.code, ATTN_E_IO);
    attn_err_format(&err, msg, sizeof msg);
    assert_non_null(strstr(msg, path));
    assert_int_equal(test_count_entries(dir), 0);
    /* the path is a folder: it fails, the folder stays (and stays empty) */
    snprintf(path, sizeof path, "%s/adir", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    memset(&err, 0, sizeof err);
    assert_true(session_save(path, &m, &sv, &err) < 0);
    assert_int_equal(err.code, ATTN_E_IO);
    attn_err_format(&err, msg, sizeof msg);
    assert_non_null(strstr(msg, path));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(test_count_entries(path), 0);
    assert_int_equal(test_count_entries(dir), 1);
    /* also with a trailing slash */
    char slash[1200];
    snprintf(slash, sizeof slash, "%s/", path);
    assert_true(session_save(slash, &m, &sv, &err) < 0);
    assert_int_equal(test_count_entries(path), 0);
    assert_int_equal(test_count_entries(dir), 1);
    /* a file as a folder in the path */
    char file[1100];
    snprintf(file, sizeof file, "%s/plain", dir);
    spit(file, "x");
    snprintf(path, sizeof path, "%s/plain/s.json", dir);
    assert_true(session_save(path, &m, &sv, &err) < 0);
    assert_int_equal(test_count_entries(dir), 2);
    model_destroy(&m);
    rm_dir(dir);
}

/* ---- SIGKILL in the middle of saves ------------------------------------------- */

static void test_sigkill_never_partial(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/s.json", dir);
    Model a, b, r;
    model_rich(&a, SENT_A);
    model_rich(&b, SENT_B);
    model_plain(&r, "x");
    SessionView sv;
    view_rich(&sv);
    AttnErr err = {0};
    assert_int_equal(session_save(path, &a, &sv, &err), 0);

    srand(20240601u);
    int rounds = 40, left = 0, saw_a = 0, saw_b = 0, changed = 0, on_disk_b = 0;
    for (int round = 0; round < rounds; round++) {
        fflush(NULL);
        int pfd[2];
        assert_int_equal(pipe(pfd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(pfd[0]);
            AttnErr e = {0};
            /* tell the parent the loop started */
            if (write(pfd[1], "g", 1) != 1)
                _exit(20);
            close(pfd[1]);
            /* the first save writes the sentence that is not on disk */
            for (unsigned long k = on_disk_b ? 0 : 1;; k++)
                if (session_save(path, k & 1 ? &b : &a, &sv, &e) < 0)
                    _exit(21);
        }
        close(pfd[1]);
        char c;
        assert_int_equal(read(pfd[0], &c, 1), 1);
        close(pfd[0]);
        struct timespec ts = {0, (long)(rand() % 3001) * 1000L};
        nanosleep(&ts, NULL);
        assert_int_equal(kill(pid, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status))
            fprintf(stderr, "round %d: the saver exited with %d\n", round,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGKILL);
        SessionView got;
        memset(&err, 0, sizeof err);
        int rc = app_load_session(&r, &got, path, &err);
        if (rc < 0)
            fprintf(stderr, "round %d: the file does not load: %s\n", round, err.msg);
        assert_int_equal(rc, 0);
        int is_a = strcmp(r.text, SENT_A) == 0, is_b = strcmp(r.text, SENT_B) == 0;
        assert_true(is_a || is_b);
        saw_a += is_a;
        saw_b += is_b;
        changed += is_b != on_disk_b;
        on_disk_b = is_b;
        assert_int_equal(got.query, sv.query);
        assert_params_equal(&r.params, &a.params);
        int t = count_tmp(dir, 1);
        assert_true(t <= 1); /* at most the one temp file of the killed save */
        left += t;
        assert_int_equal(test_count_entries(dir), 1);
    }
    fprintf(stderr, "sigkill: %d rounds, file was A %d times and B %d times (changed in %d "
                    "rounds); %d temp file(s) left behind by the kills (removed)\n",
            rounds, saw_a, saw_b, changed, left);
    model_destroy(&a);
    model_destroy(&b);
    model_destroy(&r);
    rm_dir(dir);
}

/* ---- through the app --------------------------------------------------------------- */

typedef struct AppFix {
    Options o;
    Model m;
    AppState *a;
    char *dir;
} AppFix;

static int app_setup(void **state)
{
    AppFix *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    AttnErr err = {0};
    char *argv[] = {"attnviz", NULL};
    if (options_parse(&f->o, 1, argv, &err) != 0)
        return -1;
    if (model_init(&f->m, table, &f->o.cfg) != 0 ||
        model_set_text(&f->m, SENT_A, strlen(SENT_A)) != 0)
        return -1;
    f->a = calloc(1, sizeof *f->a);
    if (!f->a || app_init(f->a, &f->m, &f->o, NULL) != 0)
        return -1;
    f->dir = make_tmpdir();
    *state = f;
    return 0;
}

static int app_teardown(void **state)
{
    AppFix *f = *state;
    if (!f)
        return 0;
    app_free(f->a);
    free(f->a);
    model_destroy(&f->m);
    options_free(&f->o);
    rm_dir(f->dir);
    free(f);
    return 0;
}

static void key(AppState *a, SDL_Keycode sym)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    app_handle_event(a, &e);
}

static void test_app_autosave(void **state)
{
    AppFix *f = *state;
    AppState *a = f->a;
    snprintf(a->autosave_path, sizeof a->autosave_path, "%s/autosave.json", f->dir);
    assert_int_equal(f->m.cfg.causal, 0);
    key(a, SDLK_m);
    assert_int_equal(f->m.cfg.causal, 1);
    assert_int_equal(a->unsaved, 1);
    assert_int_equal(app_autosave(a, 0), 0);
    assert_int_equal(a->unsaved, 0);
    assert_int_equal(access(a->autosave_path, F_OK), 0);
    /* nothing new: no write (the file stays as it was) */
    struct stat st0, st1;
    assert_int_equal(stat(a->autosave_path, &st0), 0);
    assert_int_equal(unlink(a->autosave_path), 0);
    assert_int_equal(app_autosave(a, 0), 0);
    assert_int_equal(access(a->autosave_path, F_OK), -1);
    assert_int_equal(app_autosave(a, 1), 0);
    assert_int_equal(stat(a->autosave_path, &st1), 0);
    assert_int_equal(st0.st_size, st1.st_size);

    Model n;
    model_plain(&n, "the bank");
    SessionView sv;
    AttnErr err = {0};
    assert_int_equal(app_load_session(&n, &sv, a->autosave_path, &err), 0);
    assert_int_equal(n.cfg.causal, 1);
    assert_string_equal(n.text, SENT_A);
    assert_int_equal(sv.query, a->vs.query);
    assert_int_equal(count_tmp(f->dir, 0), 0);
    model_destroy(&n);

    /* autosave into a folder that is gone: an error, unsaved stays set */
    key(a, SDLK_m);
    assert_int_equal(a->unsaved, 1);
    snprintf(a->autosave_path, sizeof a->autosave_path, "%s/gone/autosave.json", f->dir);
    assert_true(app_autosave(a, 0) < 0);
    assert_int_equal(a->unsaved, 1);
    /* no autosave path: nothing to do */
    a->autosave_path[0] = '\0';
    assert_int_equal(app_autosave(a, 1), 0);
}

static void test_app_save_session_errors(void **state)
{
    AppFix *f = *state;
    AppState *a = f->a;
    char path[1200];
    snprintf(path, sizeof path, "%s/s.json", f->dir);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(a->unsaved, 0);
    size_t l0, l1;
    char *old = test_slurp(path, &l0);
    key(a, SDLK_m);
    assert_int_equal(a->unsaved, 1);
    snprintf(path, sizeof path, "%s/missing/s.json", f->dir);
    assert_int_equal(app_save_session(a, path), -1);
    assert_int_equal(a->status_err, 1);
    assert_non_null(strstr(a->status, path));
    assert_int_equal(a->unsaved, 1);
    snprintf(path, sizeof path, "%s/s.json", f->dir);
    char *now = test_slurp(path, &l1);
    assert_int_equal(l0, l1);
    assert_memory_equal(old, now, l0);
    free(old);
    free(now);
}

static void test_app_open_path(void **state)
{
    AppFix *f = *state;
    AppState *a = f->a;
    char good[1200], bad[1200], half[1200];
    snprintf(good, sizeof good, "%s/b.json", f->dir);
    snprintf(bad, sizeof bad, "%s/bad.json", f->dir);
    snprintf(half, sizeof half, "%s/half.json", f->dir);
    Model b;
    model_rich(&b, SENT_B);
    SessionView sv;
    session_view_default(&sv);
    sv.query = 4;
    sv.key = 2;
    sv.head = 1;
    sv.matrix = 2;
    sv.cmap = 3;
    sv.ui_scale = 1.5f;
    sv.edit_target = 1;
    AttnErr err = {0};
    assert_int_equal(session_save(good, &b, &sv, &err), 0);

    assert_string_equal(a->text, SENT_A);
    assert_int_equal(app_open_path(a, good), 0);
    assert_int_equal(a->status_err, 0);
    assert_string_equal(a->text, SENT_B);
    assert_string_equal(f->m.text, SENT_B);
    assert_int_equal(f->m.T, b.T);
    assert_int_equal(f->m.cfg.causal, 1);
    assert_int_equal(f->m.cfg.heads, 2);
    assert_int_equal(f->m.res.h, 2);
    assert_params_equal(&f->m.params, &b.params);
    assert_int_equal(a->vs.query, 4);
    assert_int_equal(a->vs.key, 2);
    assert_int_equal(a->vs.head, 1);
    assert_int_equal((int)a->vs.matrix, 2);
    assert_int_equal((int)a->vs.cmap, 3);
    assert_true(a->ui_scale == 1.5f);
    assert_int_equal((int)a->vs.edit_target, 1);
    assert_string_equal(a->session_path, good);
    assert_int_equal(a->unsaved, 0);
    /* the app's model is the saved one: same --print json */
    size_t la, lb;
    char *ja = json_of(&f->m, &la), *jb = json_of(&b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ja, jb, la);
    free(ja);
    free(jb);

    /* bad files keep the sentence and say so */
    size_t glen;
    char *gtext = test_slurp(good, &glen);
    FILE *hf = fopen(half, "wb");
    assert_non_null(hf);
    fwrite(gtext, 1, glen / 2, hf);
    fclose(hf);
    free(gtext);
    static const char *const bad_texts[] = {
        "{\"session\": {\"sentence\": 3}}",
        "not json at all",
        "{\"session\": {\"sentence\": \"i am happy\", \"settings\": {\"temperature\": -1}}}",
    };
    size_t before_len;
    char *before = state_bytes(&f->m, &before_len);
    for (size_t c = 0; c < sizeof bad_texts / sizeof bad_texts[0] + 2; c++) {
        const char *p = bad;
        if (c < sizeof bad_texts / sizeof bad_texts[0])
            spit(bad, bad_texts[c]);
        else if (c == sizeof bad_texts / sizeof bad_texts[0])
            p = half;
        else {
            snprintf(bad, sizeof bad, "%s/none.json", f->dir);
            p = bad;
        }
        a->status_err = 0;
        assert_int_equal(app_open_path(a, p), -1);
        assert_int_equal(a->status_err, 1);
        assert_true(a->status[0] != '\0');
        assert_string_equal(a->text, SENT_B);
        assert_int_equal(a->vs.query, 4);
        assert_string_equal(a->session_path, good);
        size_t l;
        char *after = state_bytes(&f->m, &l);
        assert_int_equal(l, before_len);
        assert_memory_equal(after, before, l);
        free(after);
    }
    free(before);
    model_destroy(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_parse_plain_data),
        cmocka_unit_test(test_round_trip_odd_sentences),
        cmocka_unit_test(test_round_trip_keys_score_v),
        cmocka_unit_test(test_parse_keys_score),
        cmocka_unit_test(test_round_trip_temperature_limits),
        cmocka_unit_test(test_round_trip_basic_mode_keeps_weights),
        cmocka_unit_test(test_errors_leave_model),
        cmocka_unit_test(test_atomic_failing_writer),
        cmocka_unit_test(test_atomic_full_disk),
        cmocka_unit_test(test_atomic_bad_targets),
        cmocka_unit_test(test_sigkill_never_partial),
        cmocka_unit_test_setup_teardown(test_app_autosave, app_setup, app_teardown),
        cmocka_unit_test_setup_teardown(test_app_save_session_errors, app_setup, app_teardown),
        cmocka_unit_test_setup_teardown(test_app_open_path, app_setup, app_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
