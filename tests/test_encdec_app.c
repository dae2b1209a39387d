/* An encoder-decoder in the window (issue 36), key by key through the
 * window's event path: tests/fixtures/families/t5/t5-relu-tied (a random
 * T5 with a stand-in WordPiece tokenizer) on cli.json's source: the
 * window shows the encoder on the text, a full square (a key after its
 * query has weight) of the source's tokens (</s> included), and its panel
 * the target's first token, the float64 reference's top token and
 * probability after the decoder's start token (cli.json's first_ids,
 * first_probs); a new source typed recomputes the maps and the panel.
 * Waits for conditions, never a fixed time alone. Run from the repository
 * root. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "attnviz/bpe.h"
#include "attnviz/colormap.h"
#include "attnviz/figure.h"
#include "attnviz/file_source.h"
#include "attnviz/model_source.h"
#include "attnviz/source.h"
#include "attnviz/import.h"
#include "attnviz/options.h"
#include "attnviz/wake.h"
#include "../src/app/sources/model_internal.h"
#include "../src/app/sources/model_window.h"
#include "test_app_util.h"
#include "test_gpt2_fs.h"

#include <SDL_image.h>

#define DIR "tests/fixtures/families/t5/t5-relu-tied"

/* What the tests take of a fixture's cli.json (the float64 reference): the
 * source, the target, their token counts (the decoder's start token
 * included), and the whole file for the rest. */
typedef struct {
    cJSON *json;
    const char *source, *target;
    int Ts, Tt;
} Ref;

static Ref ref_read(const char *dir)
{
    char path[300];
    snprintf(path, sizeof path, "%s/cli.json", dir);
    Ref r = {read_json(path), NULL, NULL, 0, 0};
    assert_non_null(r.json);
    r.source = cJSON_GetObjectItemCaseSensitive(r.json, "source")->valuestring;
    r.target = cJSON_GetObjectItemCaseSensitive(r.json, "target")->valuestring;
    r.Ts = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "source_ids"));
    r.Tt = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.json, "decoder_ids"));
    return r;
}

/* dir's model opened and the reference's source computed, as the command
 * line does before the window shows it. */
static ModelOpened *open_source(const char *dir, const Ref *r)
{
    ModelOpened *g = NULL;
    AttnErr err = {0};
    assert_int_equal(model_open_path(dir, 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, r->source, strlen(r->source), &err), 0);
    return g;
}

static void test_source(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    Ref r = ref_read(DIR);
    int top = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "first_ids"), 0)->valueint;
    double p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "first_probs"), 0)->valuedouble;
    g = open_source(DIR, &r);
    size_t len = 0;
    const char *bytes = bpe_token_bytes(g->bpe, top, &len);
    assert_non_null(bytes);
    char label[64];
    snprintf(label, sizeof label, "%.*s", (int)len, bytes); /* a word or </s>: shown as stored */
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    /* the source's tokens, the template's </s> last; a full square */
    assert_int_equal(a->vs.map.Tq, r.Ts);
    assert_int_equal(a->vs.map.Tk, r.Ts);
    assert_int_equal(a->vs.map.causal, 0);
    double after = 0;
    for (int j = 1; j < a->vs.map.Tk; j++)
        after += attn_map_at(&a->vs.map, 0, j);
    assert_true(after > 0.01);
    /* the panel: the target's first token, the reference's top one */
    if (!wait_panel(f, "The target's first token"))
        fail_msg("panel: %s", a->vs.no_model ? a->vs.no_model : "(none)");
    char want[64];
    snprintf(want, sizeof want, "%.1f%%", 100 * p);
    const char *first = strstr(a->vs.no_model, " 1. "), *second = strstr(a->vs.no_model, " 2. ");
    assert_non_null(first);
    assert_non_null(second);
    const char *pp = strstr(first, want), *tok = strstr(first, label);
    if (!pp || pp > second || !tok || tok > second)
        fail_msg("panel's first line lacks %s and %s: %s", want, label, first);
    /* a new source: the maps and the panel made again */
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_u, KMOD_LCTRL);
    type(f, "the cat sat on the mat.");
    key(f, SDLK_ESCAPE, 0);
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.map.Tq, 8); /* the cat sat on the mat . </s> */
    if (!wait_panel(f, "The target's first token"))
        fail_msg("panel: %s", a->vs.no_model ? a->vs.no_model : "(none)");
    cJSON_Delete(r.json);
}


/* Until the maps shown are group's with Tq × Tk cells, up to date. */
static int wait_group(Fix *f, int group, int Tq, int Tk)
{
    for (int k = 0; k < 400; k++) {
        loop_turn(f, 20);
        const ModelSource *s = f->a->src;
        if (s->group_shown == group && !f->a->vs.stale && f->a->vs.map.v && f->a->vs.map.Tq == Tq &&
            f->a->vs.map.Tk == Tk)
            return 1;
    }
    return 0;
}

/* The label of token id as the panel shows it, stored (a word or </s>). */
static void token_label(const ModelOpened *g, int id, char *out, size_t cap)
{
    size_t len = 0;
    const char *bytes = bpe_token_bytes(g->bpe, id, &len);
    assert_non_null(bytes);
    snprintf(out, cap, "%.*s", (int)len, bytes);
}

/* The panel's first line holds the probability p (as %.1f%%) and label. */
static void assert_first_line(const AppState *a, double p, const char *label)
{
    char want[64];
    snprintf(want, sizeof want, "%.1f%%", 100 * p);
    const char *first = strstr(a->vs.no_model, " 1. "), *second = strstr(a->vs.no_model, " 2. ");
    assert_non_null(first);
    assert_non_null(second);
    const char *pp = strstr(first, want), *tok = strstr(first, label);
    if (!pp || pp > second || !tok || tok > second)
        fail_msg("panel's first line lacks %s and %s: %s", want, label, first);
}

/* The second bar is the target: typed into (Shift+Enter), the decoder runs
 * on its ids and the panel shows the next token after its last position,
 * the float64 reference's (cli.json's top_ids, top_probs after
 * decoder_ids), and the maps shown are its cross-attention (the command
 * line's default group). A target one token
 * longer recomputes the decoder from its first changed position only
 * (rt->n_computed: positions × layers). */
static void test_target(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    Ref r = ref_read(DIR);
    int top = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "top_ids"), 0)->valueint;
    double p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "top_probs"), 0)->valuedouble;
    g = open_source(DIR, &r);
    char label[64];
    token_label(g, top, label, sizeof label);
    int L = g->lm.rt->sh.n_layer; /* the decoder's (t5-relu-tied: 3, the encoder 2) */
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    if (!wait_panel(f, "The target's first token"))
        fail_msg("panel: %s", a->vs.no_model ? a->vs.no_model : "(none)");
    /* the bars: the source, the target */
    app_present(a);
    assert_string_equal(a->vs.bar_label, "Source");
    assert_int_equal(a->vs.keys_bar, 1);
    assert_string_equal(a->vs.keys_label, "Target");
    key(f, SDLK_RETURN, KMOD_LSHIFT);
    assert_int_equal(a->vs.keys_focus, 1);
    type(f, r.target);
    key(f, SDLK_ESCAPE, 0);
    assert_string_equal(a->keys, r.target);
    if (!wait_panel(f, "What comes next in the target"))
        fail_msg("panel: %s", a->vs.no_model ? a->vs.no_model : "(none)");
    ModelSource *s = a->src;
    assert_int_equal(s->tgt.n, r.Tt);
    for (int i = 0; i < r.Tt; i++)
        assert_int_equal(s->tgt.id[i], cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r.json, "decoder_ids"), i)->valueint);
    assert_int_equal(s->last->Tt, r.Tt);
    assert_first_line(a, p, label);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts)) /* with a target: cross-attention, as the command line's default */
        fail_msg("no cross maps after a target: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    /* one token more: the decoder computes that position alone */
    long long before = s->last->computed;
    char longer[256];
    snprintf(longer, sizeof longer, "%s das", r.target);
    app_set_keys(a, longer);
    assert_int_equal(s->tgt.n, r.Tt + 1);
    for (int k = 0; k < 400 && !(s->last && s->last->Tt == r.Tt + 1 && s->last->n_pred > 0); k++)
        loop_turn(f, 20);
    assert_int_equal(s->last->Tt, r.Tt + 1);
    assert_int_equal(s->last->computed - before, (long long)L * 1);
    cJSON_Delete(r.json);
}

/* The three groups, Ctrl+X after Ctrl+X: the decoder's maps (target ×
 * target, causal) equal the command line's (--group decoder:
 * model_encdec_compute on the same texts), cross-attention (target
 * queries × source keys) the float64 reference's layer 1, head 1
 * (cli.json's cross_l1h1), each axis labelled with its side's tokens; a
 * shorter target typed while cross-attention is shown gives its rows;
 * then the encoder's again. */
static void test_groups(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL, *cli = NULL;
    AttnErr err = {0};
    Ref r = ref_read(DIR);
    g = open_source(DIR, &r);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    key(f, SDLK_RETURN, KMOD_LSHIFT);
    type(f, r.target);
    key(f, SDLK_ESCAPE, 0);
    if (!wait_panel(f, "What comes next in the target"))
        fail_msg("panel: %s", a->vs.no_model ? a->vs.no_model : "(none)");
    ModelSource *s = a->src;
    char start[64], first[64];
    token_label(s->g, s->g->lm.info.start_id, start, sizeof start);
    token_label(s->g, s->ids.id[0], first, sizeof first);
    /* the decoder's self-attention: as the command line's (from the cross
     * maps a target brings, Ctrl+Shift+X back) */
    key(f, SDLK_x, KMOD_LCTRL | KMOD_LSHIFT);
    if (!wait_group(f, GROUP_DECODER, r.Tt, r.Tt))
        fail_msg("no decoder maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    assert_int_equal(a->vs.map.causal, 1);
    assert_string_equal(s->ms.imp->q_shown[0], start);
    assert_int_equal(s->ms.imp->f.L, s->g->lm.rt->sh.n_layer); /* the decoder's 3 layers, not the encoder's 2 */
    assert_int_equal(model_open_path(DIR, 0, &cli, &err), 0);
    assert_int_equal(model_encdec_compute(cli, r.source, r.target, GROUP_DECODER, &err), 0);
    AttnMap want = import_map(cli->im, 0);
    assert_int_equal(want.Tq, r.Tt);
    for (int i = 0; i < r.Tt; i++)
        for (int j = 0; j < r.Tt; j++)
            if (fabsf(attn_map_at(&a->vs.map, i, j) - attn_map_at(&want, i, j)) > 1e-6f)
                fail_msg("decoder map (%d, %d): %g, the command line's %g", i, j, attn_map_at(&a->vs.map, i, j),
                         attn_map_at(&want, i, j));
    /* cross-attention: the float64 reference's */
    key(f, SDLK_x, KMOD_LCTRL);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("no cross maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    assert_string_equal(s->ms.imp->q_shown[0], start);
    assert_string_equal(s->ms.imp->k_shown[0], first);
    assert_int_equal(a->vs.map.causal, 0);
    cJSON *x = cJSON_GetObjectItemCaseSensitive(r.json, "cross_l1h1");
    assert_int_equal(cJSON_GetArraySize(x), r.Tt);
    for (int i = 0; i < r.Tt; i++)
        for (int j = 0; j < r.Ts; j++) {
            double w = cJSON_GetArrayItem(cJSON_GetArrayItem(x, i), j)->valuedouble;
            if (fabs(attn_map_at(&a->vs.map, i, j) - w) > 1e-5)
                fail_msg("cross map (%d, %d): %g, the reference's %g", i, j, attn_map_at(&a->vs.map, i, j), w);
        }
    /* a shorter target: the cross maps' rows follow it */
    app_set_keys(a, "das Haus");
    if (!wait_group(f, GROUP_CROSS, 3, r.Ts)) /* <pad> das haus */
        fail_msg("cross maps after a new target: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    /* and on to the encoder's */
    key(f, SDLK_x, KMOD_LCTRL);
    if (!wait_group(f, GROUP_ENCODER, r.Ts, r.Ts))
        fail_msg("no encoder maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    /* the model view's small maps are the encoder's (the worker ran no
     * encoder layer for them: the source is unchanged), every row a softmax */
    const AttnMaps *th = &s->ms.thumb_maps;
    double thumbs = 0.0;
    for (size_t c = 0; c < (size_t)th->L * th->H * th->Tq * th->Tk; c++)
        thumbs += th->v[c];
    if (thumbs < 0.5 * th->L * th->H * th->Tq) /* a thumbnail's cell: a block's mean weight */
        fail_msg("the encoder's thumbnails after Ctrl+X sum to %g", thumbs);
    model_opened_free(cli);
    cJSON_Delete(r.json);
}

/* Until the panel looks inside the shown group's query i → key j (the
 * last result's vectors of that pair); then the caption, or NULL. */
static const char *wait_inside(Fix *f, int group, int i, int j)
{
    for (int k = 0; k < 400; k++) {
        loop_turn(f, 20);
        const ModelSource *s = f->a->src;
        const Result *r = s->last;
        if (r && r->q && r->group == group && s->group_shown == group && r->sel_i == i && r->sel_j == j &&
            f->a->vs.inside_caption && strstr(f->a->vs.inside_caption, "Inside layer"))
            return f->a->vs.inside_caption;
    }
    return NULL;
}

/* The number after what in the caption (fails when it has none). */
static double caption_number(const char *caption, const char *what)
{
    const char *p = strstr(caption, what);
    if (!p)
        fail_msg("no \"%s\" in the panel: %s", what, caption);
    return strtod(p + strlen(what), NULL);
}

/* Inside a head of the decoder's groups (the step view's caption and bars,
 * which said "the encoder's maps only" before): cross-attention's query is
 * the decoder's and its keys the encoder's output: at layer 1, head 1, the
 * last target row, each source key's q · k (T5: the score itself, no
 * scaling, no bias in cross-attention) computed here from the bars'
 * vectors is the caption's score, and their softmax over the row is the
 * float64 reference's (cli.json's cross_l1h1, 1e-5), as is the caption's
 * weight; the decoder's self-attention: the caption's scores differ as the
 * logs of the command line's weights (--group decoder; T5's relative bias
 * included) and a key after the query is masked. */
/* Cross-attention's look inside of dir's model on its cli.json's source
 * and target: at layer 1, head 1, the last target row, each source key's
 * q · k from the bars' vectors times scale (the model's scaling) is the
 * caption's score, their softmax over the row the float64 reference's
 * (cross_l1h1, 1e-5), as is the caption's weight. Returns the opened
 * window's source (the cross maps shown). */
static ModelSource *inside_cross(Fix *f, const char *dir, double scale)
{
    AppState *a = f->a;
    ModelOpened *g = NULL;
    Ref r = ref_read(dir);
    cJSON *x = cJSON_GetObjectItemCaseSensitive(r.json, "cross_l1h1");
    g = open_source(dir, &r);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    app_set_keys(a, r.target);
    ModelSource *s = a->src;
    while (s->group != GROUP_CROSS)
        key(f, SDLK_x, KMOD_LCTRL);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("%s: no cross maps: %d × %d shown", dir, a->vs.map.Tq, a->vs.map.Tk);
    assert_int_equal(s->ms.layer, 0);
    assert_int_equal(s->ms.head, 0);
    int i = r.Tt - 1;
    a->vs.query = i;
    double score[64], top = -1e300, sum = 0.0;
    assert_true(r.Ts <= 64);
    for (int j = 0; j < r.Ts; j++) {
        a->vs.key = j;
        a->dirty = 1;
        const char *caption = wait_inside(f, GROUP_CROSS, i, j);
        if (!caption)
            fail_msg("%s: no look inside query %d → key %d of the cross maps: %s", dir, i, j,
                     a->vs.inside_caption ? a->vs.inside_caption : "(none)");
        if (!strstr(caption, "the encoder's output"))
            fail_msg("the caption does not say where the key comes from: %s", caption);
        assert_int_equal(a->vs.inside_d, s->g->lm.rt->sh.d_head);
        double dot = 0.0;
        for (int d = 0; d < a->vs.inside_d; d++)
            dot += (double)a->vs.inside_q[d] * a->vs.inside_k[d];
        score[j] = dot * scale;
        top = score[j] > top ? score[j] : top;
        assert_float_equal(caption_number(caption, "the score "), score[j], 6e-4);
        double w = cJSON_GetArrayItem(cJSON_GetArrayItem(x, i), j)->valuedouble;
        assert_float_equal(caption_number(caption, "keys: weight "), w, 6e-5);
    }
    for (int j = 0; j < r.Ts; j++)
        sum += exp(score[j] - top);
    for (int j = 0; j < r.Ts; j++) {
        double w = cJSON_GetArrayItem(cJSON_GetArrayItem(x, i), j)->valuedouble;
        if (fabs(exp(score[j] - top) / sum - w) > 1e-5)
            fail_msg("%s: softmax of the panel's scores, key %d: %g, the reference's %g", dir, j,
                     exp(score[j] - top) / sum, w);
    }
    cJSON_Delete(r.json);
    return s;
}

/* Inside a head of the decoder's groups (the step view's caption and bars,
 * which said "the encoder's maps only" before): cross-attention's query is
 * the decoder's and its keys the encoder's output (inside_cross: T5's
 * score is q · k itself, no scaling and no bias in cross-attention;
 * BART's q · k / √d_head); the decoder's self-attention: the caption's
 * scores differ as the logs of the command line's weights (--group
 * decoder; T5's relative bias included) and a key after the query is
 * masked. */
static void test_inside(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *cli = NULL;
    AttnErr err = {0};
    Ref r = ref_read(DIR);
    double score[64];
    const char *bart = "tests/fixtures/families/bart/bart-scaled-untied";
    ModelSource *s = inside_cross(f, bart, 1.0 / sqrt((double)8));
    assert_int_equal(s->g->lm.rt->sh.d_head, 8);
    inside_cross(f, DIR, 1.0);
    int i;
    /* the decoder's self-attention, against the command line's weights */
    key(f, SDLK_x, KMOD_LCTRL | KMOD_LSHIFT);
    if (!wait_group(f, GROUP_DECODER, r.Tt, r.Tt))
        fail_msg("no decoder maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    assert_int_equal(model_open_path(DIR, 0, &cli, &err), 0);
    assert_int_equal(model_encdec_compute(cli, r.source, r.target, GROUP_DECODER, &err), 0);
    AttnMap want = import_map(cli->im, 0);
    i = r.Tt - 2;
    a->vs.query = i;
    for (int j = 0; j <= i + 1; j++) {
        a->vs.key = j;
        a->dirty = 1;
        const char *caption = wait_inside(f, GROUP_DECODER, i, j);
        if (!caption)
            fail_msg("no look inside query %d → key %d of the decoder's maps", i, j);
        if (j > i) {
            if (!strstr(caption, "masked"))
                fail_msg("key %d after query %d not said masked: %s", j, i, caption);
            break;
        }
        score[j] = caption_number(caption, "the score ");
        assert_float_equal(caption_number(caption, "keys: weight "), attn_map_at(&want, i, j), 6e-5);
    }
    for (int j = 1; j <= i; j++) {
        double d = log(attn_map_at(&want, i, j) / attn_map_at(&want, i, 0));
        if (fabs((score[j] - score[0]) - d) > 2e-3)
            fail_msg("decoder scores of keys %d and 0: differ by %g, the command line's weights' logs by %g", j,
                     score[j] - score[0], d);
    }
    model_opened_free(cli);
    cJSON_Delete(r.json);
}

/* The group shown by default agrees with the command line's (cross) once
 * there is a target: opened with --target, the cross maps (Tt × Ts);
 * the target emptied, the encoder's, the title saying there is no target
 * yet; a target typed again, cross-attention; once Ctrl+X picked a group,
 * a new target keeps it. */
static void test_default_group(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    Ref r = ref_read(DIR);
    g = open_source(DIR, &r);
    f->o.target = r.target; /* --target, no --group */
    assert_int_equal(source_model.show(a, g), 0);
    f->o.target = NULL;
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("opened with a target: %d × %d shown, not its cross maps", a->vs.map.Tq, a->vs.map.Tk);
    app_present(a);
    if (!strstr(a->vs.panel_title, "cross-attention"))
        fail_msg("title: %s", a->vs.panel_title);
    app_set_keys(a, "");
    if (!wait_group(f, GROUP_ENCODER, r.Ts, r.Ts))
        fail_msg("no target: %d × %d shown, not the encoder's", a->vs.map.Tq, a->vs.map.Tk);
    app_present(a);
    if (!strstr(a->vs.panel_title, "encoder") || !strstr(a->vs.panel_title, "no target yet"))
        fail_msg("title without a target: %s", a->vs.panel_title);
    app_set_keys(a, r.target);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("a target typed: %d × %d shown, not its cross maps", a->vs.map.Tq, a->vs.map.Tk);
    key(f, SDLK_x, KMOD_LCTRL | KMOD_LSHIFT); /* the decoder's, chosen */
    if (!wait_group(f, GROUP_DECODER, r.Tt, r.Tt))
        fail_msg("no decoder maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    app_set_keys(a, "das Haus");
    if (!wait_group(f, GROUP_DECODER, 3, 3)) /* <pad> das haus */
        fail_msg("a group chosen, a new target: %d × %d shown, not its decoder maps", a->vs.map.Tq, a->vs.map.Tk);
    cJSON_Delete(r.json);
}

/* The model view's head score (G) on cross-attention: entropy, the score
 * issue 36 names for it, its number layer 1 head 1's entropy of the
 * float64 reference's map (cli.json's cross_l1h1: the mean over rows of
 * −Σ w log w); I and Shift+I go through the scores cross-attention has
 * (first, entropy), never previous, self, duplicate, induction or
 * distance (none there); the encoder's maps show the self-attention
 * default (induction) again. */
static void test_cross_scores(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    Ref r = ref_read(DIR);
    g = open_source(DIR, &r);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    app_set_keys(a, r.target);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("no cross maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    key(f, SDLK_g, 0);
    app_present(a);
    assert_non_null(a->vs.grid_score);
    assert_string_equal(a->vs.grid_score_name, "entropy");
    cJSON *x = cJSON_GetObjectItemCaseSensitive(r.json, "cross_l1h1");
    double want = 0.0;
    for (int i = 0; i < r.Tt; i++)
        for (int j = 0; j < r.Ts; j++) {
            double w = cJSON_GetArrayItem(cJSON_GetArrayItem(x, i), j)->valuedouble;
            want -= w > 0 ? w * log(w) / r.Tt : 0.0;
        }
    assert_float_equal(a->vs.grid_score[0], want, 1e-4);
    key(f, SDLK_x, KMOD_LCTRL); /* the encoder's: self-attention's default again */
    if (!wait_group(f, GROUP_ENCODER, r.Ts, r.Ts))
        fail_msg("no encoder maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    app_present(a);
    assert_string_equal(a->vs.grid_score_name, "induction");
    key(f, SDLK_x, KMOD_LCTRL | KMOD_LSHIFT);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("no cross maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    app_present(a);
    assert_string_equal(a->vs.grid_score_name, "entropy");
    static const char *const order[] = {"first", "entropy", "first"};
    for (int k = 0; k < 3; k++) {
        key(f, SDLK_i, k < 2 ? 0 : KMOD_LSHIFT);
        app_present(a);
        assert_string_equal(a->vs.grid_score_name, order[k]);
        if (k == 0 && fabs(a->vs.grid_score[0] - want) < 1e-9)
            fail_msg("first's number is entropy's: %g", want);
    }
    key(f, SDLK_i, 0); /* entropy again */
    key(f, SDLK_x, KMOD_LCTRL); /* the encoder's: self-attention's default */
    if (!wait_group(f, GROUP_ENCODER, r.Ts, r.Ts))
        fail_msg("no encoder maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    app_present(a);
    assert_string_equal(a->vs.grid_score_name, "entropy"); /* chosen with I: kept */
    key(f, SDLK_i, 0);
    app_present(a);
    assert_string_equal(a->vs.grid_score_name, "distance"); /* self-attention: every score */
    key(f, SDLK_x, KMOD_LCTRL);
    key(f, SDLK_x, KMOD_LCTRL);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("no cross maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    app_present(a);
    assert_string_equal(a->vs.grid_score_name, "entropy"); /* distance is none there */
    key(f, SDLK_x, KMOD_LCTRL);
    if (!wait_group(f, GROUP_ENCODER, r.Ts, r.Ts))
        fail_msg("no encoder maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    app_present(a);
    assert_string_equal(a->vs.grid_score_name, "distance"); /* the choice back */
    /* the command line's score overview of the cross maps (--view heads,
     * no --head-score): entropy's too */
    ModelOpened *cli = NULL;
    Options o;
    char *argv[] = {"attnviz", "--model", DIR, "--view", "heads", "--export", "/tmp/x.svg", NULL};
    if (options_parse(&o, 7, argv, &err) != 0)
        fail_msg("options: %s", err.msg);
    char dir[] = "/tmp/attnviz-test-encdec-heads-XXXXXX", svg[200];
    assert_non_null(mkdtemp(dir));
    snprintf(svg, sizeof svg, "%s/heads.svg", dir);
    o.exports[0] = svg;
    assert_int_equal(model_open_path(DIR, 0, &cli, &err), 0);
    assert_int_equal(model_encdec_compute(cli, r.source, r.target, GROUP_CROSS, &err), 0);
    if (import_write(cli->im, &o, &err) < 0)
        fail_msg("--view heads: %s", err.msg);
    FILE *fp = fopen(svg, "r");
    assert_non_null(fp);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    if (!strstr(buf, "entropy score of every head"))
        fail_msg("--view heads of cross-attention is not of entropy");
    unlink(svg);
    rmdir(dir);
    options_free(&o);
    model_opened_free(cli);
    cJSON_Delete(r.json);
}

/* A session keeps the target and the group: saved with cross-attention
 * shown, something else opened, then the session: the same target in the
 * second bar and its cross maps shown again. */
static void test_session(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    Ref r = ref_read(DIR);
    char dir[] = "/tmp/attnviz-test-encdec-session-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t5.json", dir);
    g = open_source(DIR, &r);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    app_set_keys(a, r.target); /* cross-attention with a target */
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("no cross maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    float cell = attn_map_at(&a->vs.map, r.Tt - 1, 2);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    assert_ptr_not_equal(a->kind, &source_model);
    assert_int_equal(open_now(a, path), 0);
    assert_ptr_equal(a->kind, &source_model);
    assert_string_equal(a->text, r.source);
    assert_string_equal(a->keys, r.target);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("the session's cross maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    assert_float_equal(attn_map_at(&a->vs.map, r.Tt - 1, 2), cell, 1e-6);
    unlink(path);
    rmdir(dir);
    cJSON_Delete(r.json);
}

/* Save a session on group at layer, head (0-based) with the query row,
 * open something else, then the session: once its group's maps arrive
 * they are shown at that layer and head (the encoder's, shown first, has
 * fewer layers: it used to clamp them) with that row, the map the command
 * line's (model_encdec_compute) of the same group, layer and head. */
static void session_round_trip(Fix *f, const char *path, int group, int layer, int head, int query, int Tq, int Tk)
{
    AppState *a = f->a;
    ModelSource *s = a->src;
    AttnErr err = {0};
    ModelOpened *cli = NULL;
    char text[400], target[400];
    snprintf(text, sizeof text, "%s", a->text);
    snprintf(target, sizeof target, "%s", a->keys);
    while (s->group != group)
        key(f, SDLK_x, KMOD_LCTRL);
    if (!wait_group(f, group, Tq, Tk))
        fail_msg("group %d: %d × %d shown", group, a->vs.map.Tq, a->vs.map.Tk);
    for (int k = 0; k < 8 && s->ms.layer != layer; k++)
        key(f, SDLK_l, 0);
    for (int k = 0; k < 8 && s->ms.head != head; k++)
        key(f, SDLK_h, 0);
    a->vs.query = query;
    assert_int_equal(s->ms.layer, layer);
    assert_int_equal(s->ms.head, head);
    assert_int_equal(app_save_session(a, path), 0);
    assert_int_equal(open_now(a, "tests/fixtures/attention/torch_layers.npz"), 0);
    assert_ptr_not_equal(a->kind, &source_model);
    assert_int_equal(open_now(a, path), 0);
    assert_ptr_equal(a->kind, &source_model);
    s = a->src;
    if (!wait_group(f, group, Tq, Tk))
        fail_msg("the session's group %d: %d × %d shown", group, a->vs.map.Tq, a->vs.map.Tk);
    for (int k = 0; k < 20; k++) /* the turn that shows them restores the picks */
        loop_turn(f, 10);
    if (s->ms.layer != layer || s->ms.head != head)
        fail_msg("the session's group %d at layer %d head %d shows layer %d head %d", group, layer + 1, head + 1,
                 s->ms.layer + 1, s->ms.head + 1);
    assert_int_equal(a->vs.query, query);
    assert_int_equal(model_open_path(DIR, 0, &cli, &err), 0);
    assert_int_equal(model_encdec_compute(cli, text, target, group, &err), 0);
    assert_int_equal(import_pick(cli->im, layer, head, 0, NULL, &err), 0);
    AttnMap want = import_map(cli->im, 0);
    assert_int_equal(want.Tq, Tq);
    for (int i = 0; i < Tq; i++)
        for (int j = 0; j < Tk; j++)
            if (fabsf(attn_map_at(&a->vs.map, i, j) - attn_map_at(&want, i, j)) > 1e-6f)
                fail_msg("group %d's map (%d, %d) after the session: %g, the command line's %g", group, i, j,
                         attn_map_at(&a->vs.map, i, j), attn_map_at(&want, i, j));
    model_opened_free(cli);
    unlink(path);
}

/* Sessions saved on the decoder's maps at its last layer (the encoder has
 * one fewer), then on cross-attention's at layer 3, head 4: each comes back
 * at its layer and head, not the encoder's clamp. */
static void test_session_layer(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    Ref r = ref_read(DIR);
    char dir[] = "/tmp/attnviz-test-encdec-layer-XXXXXX", path[200];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t5.json", dir);
    g = open_source(DIR, &r);
    int L = g->lm.rt->sh.n_layer;
    assert_true(L > g->lm.info.n_layer); /* the decoder's 3, the encoder's 2 */
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    app_set_keys(a, r.target);
    session_round_trip(f, path, GROUP_DECODER, L - 1, 1, 2, r.Tt, r.Tt);
    session_round_trip(f, path, GROUP_CROSS, L - 1, 3, r.Tt - 1, r.Tt, r.Ts);
    rmdir(dir);
    cJSON_Delete(r.json);
}

static Rgb img_rgb(const SDL_Surface *s, int x, int y)
{
    Uint32 p = ((const Uint32 *)((const Uint8 *)s->pixels + (size_t)y * s->pitch))[x];
    return (Rgb){(Uint8)(p >> 16), (Uint8)(p >> 8), (Uint8)p};
}

/* A file's bytes (malloc'd, NUL-ended), or NULL. */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b)
        b[n] = '\0';
    fclose(fp);
    return b;
}

/* The exports of the cross group shown, through Ctrl+E: the heatmap's PNG
 * (its cells the colours of the float64 reference's weights, cli.json's
 * cross_l1h1, at the export's layout: Tt rows × Ts columns) and beside it
 * the CSV, whose numbers are the reference's (1e-5) and whose bytes are the
 * command line's --print csv --group cross of the same source and target
 * (model_encdec_compute, import_write_csv: what --print csv prints); in the
 * model view (G) the PNG and SVG of every layer and head of the cross
 * group: the decoder's layers, Tt × Ts maps, entropy's marks. */
static void test_exports(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL, *cli = NULL;
    AttnErr err = {0};
    Ref r = ref_read(DIR);
    cJSON *x = cJSON_GetObjectItemCaseSensitive(r.json, "cross_l1h1");
    char dir[] = "/tmp/attnviz-test-encdec-export-XXXXXX", path[300];
    assert_non_null(mkdtemp(dir));
    a->export_dir = dir;
    g = open_source(DIR, &r);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    app_set_keys(a, r.target);
    if (!wait_group(f, GROUP_CROSS, r.Tt, r.Ts))
        fail_msg("no cross maps: %d × %d shown", a->vs.map.Tq, a->vs.map.Tk);
    a->vs.query = 0;
    app_draw(a, f->r);
    int n0 = a->export_count;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(a->export_count, n0 + 1);
    /* the PNG: every cell the reference's colour (the query row outlined) */
    SDL_Surface *raw = IMG_Load(a->last_export);
    assert_non_null(raw);
    SDL_Surface *img = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_RGB888, 0);
    SDL_FreeSurface(raw);
    assert_non_null(img);
    Figure fig;
    figure_layout_export(&fig, &a->vs.map, 2.0f * a->ui_scale * a->dpi_scale, a->vs.title, a->vs.facts, a->vs.cmap,
                         a->vs.cscale, a->vs.query);
    assert_int_equal(img->w, fig.w);
    assert_int_equal(img->h, fig.h);
    assert_int_equal(fig.Tq, r.Tt);
    assert_int_equal(fig.Tk, r.Ts);
    int bad = 0;
    for (int i = 1; i < r.Tt; i++)
        for (int j = 0; j < r.Ts; j++) {
            double w = cJSON_GetArrayItem(cJSON_GetArrayItem(x, i), j)->valuedouble;
            Rgb got = img_rgb(img, figure_cell_x(&fig, j) + 5, figure_cell_y(&fig, i) + 5);
            Rgb want = colormap_scale_rgb(&fig.cb.cs, (float)w);
            if (abs(got.r - want.r) + abs(got.g - want.g) + abs(got.b - want.b) > 3) {
                print_message("cell [%d][%d]: %d,%d,%d, the reference's %d,%d,%d\n", i, j, got.r, got.g, got.b,
                              want.r, want.g, want.b);
                bad++;
            }
        }
    assert_int_equal(bad, 0);
    SDL_FreeSurface(img);
    /* the CSV beside it: the reference's numbers, the command line's bytes */
    size_t n = strlen(a->last_export);
    snprintf(path, sizeof path, "%.*s.csv", (int)(n - 4), a->last_export);
    char *csv = slurp(path);
    assert_non_null(csv);
    const char *line = strchr(csv, '\n');
    assert_non_null(line);
    for (int i = 0; i < r.Tt; i++) {
        line = strchr(line + 1, ','); /* after the row's label */
        assert_non_null(line);
        for (int j = 0; j < r.Ts; j++) {
            char *end;
            double v = strtod(line + 1, &end), w = cJSON_GetArrayItem(cJSON_GetArrayItem(x, i), j)->valuedouble;
            if (fabs(v - w) > 1e-5)
                fail_msg("CSV (%d, %d): %g, the reference's %g", i, j, v, w);
            line = end;
        }
        line = strchr(line, '\n');
        assert_non_null(line);
    }
    assert_int_equal(model_open_path(DIR, 0, &cli, &err), 0);
    assert_int_equal(model_encdec_compute(cli, r.source, r.target, GROUP_CROSS, &err), 0);
    char cli_csv[300];
    snprintf(cli_csv, sizeof cli_csv, "%s/cli.csv", dir);
    assert_int_equal(import_write_csv(cli->im, cli_csv, &err), 0);
    char *want = slurp(cli_csv);
    assert_non_null(want);
    assert_string_equal(csv, want);
    free(want);
    free(csv);
    unlink(cli_csv);
    unlink(path);
    unlink(a->last_export);
    /* the model view: every layer and head of cross-attention, PNG and SVG */
    key(f, SDLK_g, 0);
    app_draw(a, f->r);
    n0 = a->export_count;
    key(f, SDLK_e, KMOD_LCTRL);
    assert_int_equal(a->status_err, 0);
    assert_int_equal(a->export_count, n0 + 1);
    assert_non_null(strstr(a->last_export, "/attnviz-model-view-"));
    n = strlen(a->last_export);
    snprintf(path, sizeof path, "%.*s.svg", (int)(n - 4), a->last_export);
    char *svg = slurp(path);
    assert_non_null(svg);
    const ModelSource *s = a->src;
    char dims[40];
    snprintf(dims, sizeof dims, "%d\xC3\x97%d", r.Tt, r.Ts); /* the facts: target rows × source columns */
    if (!strstr(svg, "entropy") || !strstr(svg, dims))
        fail_msg("the model view's SVG lacks entropy's marks or %s", dims);
    int layers = 0;
    for (const char *p = svg; (p = strstr(p, ">layer ")); p++)
        layers++;
    assert_int_equal(layers, s->g->lm.rt->sh.n_layer); /* the decoder's 3, not the encoder's 2 */
    free(svg);
    unlink(path);
    unlink(a->last_export);
    model_opened_free(cli);
    rmdir(dir);
    cJSON_Delete(r.json);
}

/* --export-attention's .npz of the three groups in the window: it opens on
 * cross-attention (the reference's layer 1, head 1), Ctrl+X shows the
 * encoder's maps then the decoder's, each the command line's of that
 * group at the layer picked (kept across groups), then cross again. */
static void test_npz_groups(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *cli = NULL;
    AttnErr err = {0};
    Ref r = ref_read(DIR);
    cJSON *x = cJSON_GetObjectItemCaseSensitive(r.json, "cross_l1h1");
    char dir[] = "/tmp/attnviz-test-encdec-npz-XXXXXX", path[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t5.npz", dir);
    assert_int_equal(model_open_path(DIR, 0, &cli, &err), 0);
    assert_int_equal(model_encdec_compute(cli, r.source, r.target, GROUP_CROSS, &err), 0);
    assert_int_equal(model_encdec_export(cli, path, &err), 0);
    assert_int_equal(open_now(a, path), 0);
    FileSource *fs = file_source_of(a);
    assert_non_null(fs);
    app_draw(a, f->r);
    assert_int_equal(a->vs.map.Tq, r.Tt);
    assert_int_equal(a->vs.map.Tk, r.Ts);
    for (int i = 0; i < r.Tt; i++)
        for (int j = 0; j < r.Ts; j++)
            assert_float_equal(attn_map_at(&a->vs.map, i, j),
                               cJSON_GetArrayItem(cJSON_GetArrayItem(x, i), j)->valuedouble, 1e-5);
    key(f, SDLK_l, 0); /* layer 2: the encoder's last */
    static const int groups[3] = {GROUP_ENCODER, GROUP_DECODER, GROUP_CROSS};
    for (int k = 0; k < 3; k++) {
        int group = groups[k], Tq = group == GROUP_ENCODER ? r.Ts : r.Tt, Tk = group == GROUP_DECODER ? r.Tt : r.Ts;
        key(f, SDLK_x, KMOD_LCTRL);
        app_draw(a, f->r);
        assert_int_equal(a->status_err, 0);
        assert_int_equal(fs->group, group);
        assert_int_equal(fs->ms.layer, 1);
        if (a->vs.map.Tq != Tq || a->vs.map.Tk != Tk)
            fail_msg("group %d: %d × %d shown, want %d × %d", group, a->vs.map.Tq, a->vs.map.Tk, Tq, Tk);
        assert_int_equal(model_encdec_compute(cli, r.source, r.target, group, &err), 0);
        assert_int_equal(import_pick(cli->im, 1, 0, 0, NULL, &err), 0);
        AttnMap want = import_map(cli->im, 0);
        for (int i = 0; i < Tq; i++)
            for (int j = 0; j < Tk; j++)
                if (fabsf(attn_map_at(&a->vs.map, i, j) - attn_map_at(&want, i, j)) > 1e-6f)
                    fail_msg("group %d (%d, %d): %g, the command line's %g", group, i, j,
                             attn_map_at(&a->vs.map, i, j), attn_map_at(&want, i, j));
        assert_string_equal(fs->ms.imp->q_shown[0], cli->im->q_shown[0]);
        assert_string_equal(fs->ms.imp->k_shown[0], cli->im->k_shown[0]);
    }
    model_opened_free(cli);
    unlink(path);
    rmdir(dir);
    cJSON_Delete(r.json);
}

/* One character typed whole (a multi-byte one in a single SDL_TEXTINPUT
 * event, as a keyboard sends it). */
static void type_char(Fix *f, const char *c)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    snprintf(e.text.text, sizeof e.text.text, "%s", c);
    send(f, &e);
}

/* A Unigram tokenizer whose unk_id is null (tests/fixtures/hftok/
 * unigram_nounk.json beside t5-unigram's weights) refuses a character it
 * lacks, as Hugging Face's tokenizers does: typed in the source or the
 * target, the status bar names it and the last maps stay shown (the
 * source's token count, the target's); taken back, the text computes and
 * the refusal leaves the status bar. */
static void test_refused_text(void **state)
{
    Fix *f = *state;
    AppState *a = f->a;
    ModelOpened *g = NULL;
    AttnErr err = {0};
    char *dir = fs_tmpdir(), p[1024];
    fs_copy("tests/fixtures/families/t5/t5-unigram/config.json", fs_join(p, dir, "config.json"));
    fs_copy("tests/fixtures/families/t5/t5-unigram/model.safetensors", fs_join(p, dir, "model.safetensors"));
    fs_copy("tests/fixtures/hftok/unigram_nounk.json", fs_join(p, dir, "tokenizer.json"));
    assert_int_equal(model_open_path(dir, 0, &g, &err), 0);
    assert_int_equal(model_compute_text(g, "the cat", 7, &err), 0);
    assert_int_equal(source_model.show(a, g), 0);
    assert_true(wait_maps(f));
    int Ts = a->vs.map.Tq;
    assert_true(Ts > 1);
    /* the source: " Ω" typed at its end */
    key(f, SDLK_RETURN, 0);
    key(f, SDLK_END, 0);
    type(f, " ");
    assert_true(wait_maps(f));
    int Tspace = a->vs.map.Tq; /* "the cat ": its trailing space a piece of its own or not */
    type_char(f, "\xCE\xA9");
    for (int k = 0; k < 100 && !strstr(a->status, "U+03A9"); k++)
        loop_turn(f, 20);
    if (!strstr(a->status, "\xE2\x80\x9C\xCE\xA9\xE2\x80\x9D U+03A9 has no piece") || !a->status_err)
        fail_msg("status after Ω: %s", a->status);
    assert_non_null(strstr(a->text, "\xCE\xA9")); /* the text typed is kept */
    for (int k = 0; k < 10; k++)
        loop_turn(f, 20);
    assert_int_equal(a->vs.map.Tq, Tspace); /* the last text taken's maps, not emptied */
    assert_non_null(a->vs.map.v);
    /* taken back: the text computes again */
    key(f, SDLK_BACKSPACE, 0);
    key(f, SDLK_BACKSPACE, 0);
    key(f, SDLK_ESCAPE, 0);
    assert_true(wait_maps(f));
    assert_int_equal(a->vs.map.Tq, Ts);
    assert_int_equal(a->status_err, 0);
    /* the target: "zΩ" */
    key(f, SDLK_RETURN, KMOD_LSHIFT);
    assert_int_equal(a->vs.keys_focus, 1);
    type(f, "z");
    type_char(f, "\xCE\xA9");
    key(f, SDLK_ESCAPE, 0);
    for (int k = 0; k < 100 && !strstr(a->status, "U+03A9"); k++)
        loop_turn(f, 20);
    if (!strstr(a->status, "the target: \xE2\x80\x9C\xCE\xA9\xE2\x80\x9D U+03A9 has no piece") || !a->status_err)
        fail_msg("status after a target with Ω: %s", a->status);
    key(f, SDLK_RETURN, KMOD_LSHIFT);
    key(f, SDLK_BACKSPACE, 0);
    key(f, SDLK_ESCAPE, 0);
    assert_string_equal(a->keys, "z");
    assert_int_equal(a->status_err, 0); /* the target taken whole: its refusal gone */
    fs_rm_tree(dir);
    free(dir);
}

static int setup_app(void **state)
{
    setenv("ATTNVIZ_DATADIR", "assets", 1);
    return group_setup(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cross_scores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_layer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_npz_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_text, setup, teardown),
    };
    return cmocka_run_group_tests(tests, setup_app, group_teardown);
}
