/* An encoder-decoder (T5, BART: issue 36) on the command line
 * (model_internal.h): the text is the source, --target the decoder's
 * text; the forward, the maps of the group --group picks as g->im (the
 * cross maps read from the live state, Tt × Ts), and --export-attention's
 * .npz of the three groups and the two token lists. The window's view of
 * one is lm.h's (lm_forward: its encoder). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnviz/attn_write.h"
#include "attnviz/attnio.h"
#include "attnviz/import.h"
#include "attnviz/lm.h"
#include "attnviz/options.h"
#include "model_internal.h"

int model_decoder_ids(const ModelOpened *g, const char *target, size_t len, BpeIds *out, AttnErr *err)
{
    BpeIds t = {0};
    int rc = target ? model_encode(g, target, len, &t, err) : 0;
    if (rc < 0) {
        bpe_ids_free(&t);
        return rc;
    }
    int n = t.n > 0 ? t.n : 1; /* the start token and t.n − 1 of the target's */
    if (n > out->cap) {
        int *p = realloc(out->id, sizeof *p * (size_t)n);
        if (!p) {
            bpe_ids_free(&t);
            return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        }
        out->id = p;
        out->cap = n;
    }
    out->n = n;
    out->id[0] = g->lm.info.start_id;
    for (int i = 1; i < n; i++)
        out->id[i] = t.id[i - 1];
    bpe_ids_free(&t);
    return 0;
}

static int decoder_ids(ModelOpened *g, const char *target, AttnErr *err)
{
    int rc = model_decoder_ids(g, target, target ? strlen(target) : 0, &g->tgt, err);
    return rc < 0 ? rc : 0;
}

/* A cross map of the live state (Tt × Ts): the command line's maps read it
 * while g is open. */
static void cross_map(const void *user, int l, int h, float *out)
{
    const Rt *rt = user;
    rt_cross_map(rt, l, h, out, (size_t)rt->Ts);
}

static int cross_each(const void *user, void (*fn)(void *, int, int, const float *), void *fn_user)
{
    const Rt *rt = user;
    float *m = malloc(sizeof *m * ((size_t)rt->T * rt->Ts + 1));
    if (!m)
        return -ATTN_E_NOMEM;
    for (int l = 0; l < rt->sh.n_layer; l++)
        for (int h = 0; h < rt->sh.n_head; h++) {
            rt_cross_map(rt, l, h, m, (size_t)rt->Ts);
            fn(fn_user, l, h, m);
        }
    free(m);
    return 0;
}

/* The labels of ids[0..n) (malloc'd, NULL-ended; as stored with "Ġ" when
 * shown is 0, with ␣ when 1), or NULL. */
static char **labels_of(const Bpe *b, const int *ids, int n, int shown)
{
    char **t = calloc((size_t)n + 1, sizeof *t);
    for (int i = 0; t && i < n; i++)
        if (!(t[i] = shown ? model_shown_label(b, ids[i]) : model_token_text(b, ids[i], "\xC4\xA0", "?"))) {
            attn_tokens_free(t);
            return NULL;
        }
    return t;
}

/* The cross-attention maps as an Imported: target queries × source keys. */
static Imported *cross_imported(ModelOpened *g, AttnErr *err)
{
    Rt *rt = g->lm.rt;
    int Tt = g->tgt.n, Ts = g->ids.n;
    char **q = labels_of(g->bpe, g->tgt.id, Tt, 0), **k = labels_of(g->bpe, g->ids.id, Ts, 0);
    char **qs = labels_of(g->bpe, g->tgt.id, Tt, 1), **ks = labels_of(g->bpe, g->ids.id, Ts, 1);
    Imported *im = malloc(sizeof *im);
    if (!q || !k || !qs || !ks || !im) {
        attn_tokens_free(q), attn_tokens_free(k), attn_tokens_free(qs), attn_tokens_free(ks);
        free(im);
        attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
        return NULL;
    }
    ImportMaps from = {cross_map, cross_each, rt, NULL, 0};
    if (import_from_maps(im, g->name, &from, rt->sh.n_layer, rt->sh.n_head, Tt, Ts, q, k, err) < 0) {
        attn_tokens_free(qs), attn_tokens_free(ks);
        free(im);
        return NULL;
    }
    for (int i = 0; i < Tt; i++) { /* labels with the space marker */
        free(im->q_shown[i]);
        im->q_shown[i] = qs[i];
    }
    for (int j = 0; j < Ts && im->k_shown; j++) {
        free(im->k_shown[j]);
        im->k_shown[j] = ks[j];
    }
    if (!im->k_shown)
        attn_tokens_free(ks);
    else
        free(ks);
    free(qs);
    im->causal = 0;
    return im;
}

/* --export-attention's sources of an encoder-decoder's three groups. */
static int enc_map_out(void *user, int l, int h, float *out)
{
    const Rt *e = ((const Rt *)user)->enc;
    rt_map(e, l, h, out, (size_t)e->T);
    return 0;
}

static int dec_map_out(void *user, int l, int h, float *out)
{
    const Rt *rt = user;
    rt_map(rt, l, h, out, (size_t)rt->T);
    return 0;
}

static int cross_map_out(void *user, int l, int h, float *out)
{
    cross_map(user, l, h, out);
    return 0;
}

/* The .npz of the three groups and the two token lists. */
int model_encdec_export(const ModelOpened *g, const char *path, AttnErr *err)
{
    Rt *rt = g->lm.rt;
    int Ts = g->ids.n, Tt = g->tgt.n;
    AttnWriteGroup groups[3] = {
        {"encoder", enc_map_out, rt, rt->enc->sh.n_layer, rt->enc->sh.n_head, Ts, Ts},
        {"decoder", dec_map_out, rt, rt->sh.n_layer, rt->sh.n_head, Tt, Tt},
        {"cross", cross_map_out, rt, rt->sh.n_layer, rt->sh.n_head, Tt, Ts},
    };
    char **src = labels_of(g->bpe, g->ids.id, Ts, 0), **tgt = labels_of(g->bpe, g->tgt.id, Tt, 0);
    int rc = src && tgt ? attn_write_groups_npz(path, groups, 3, (const char *const *)src, Ts,
                                                (const char *const *)tgt, Tt, err)
                        : attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
    attn_tokens_free(src);
    attn_tokens_free(tgt);
    return rc;
}

/* After model_encdec_compute's rc on the command line: with no --target
 * and no --group, a note that the default group, cross-attention, is the
 * start token's one row (the window shows the encoder's maps then). */
void model_encdec_note(const Options *o, int rc)
{
    if (rc == 0 && !o->target && !o->group_set && o->group == GROUP_CROSS)
        fprintf(stderr, "attnviz: note: no --target: cross-attention is the decoder start token's "
                        "one row; --group encoder shows the source's maps\n");
}

/* An encoder-decoder on the command line: the text is the source, target
 * the decoder's text; the forward, then g->im the maps of group. */
int model_encdec_compute(ModelOpened *g, const char *text, const char *target, int group, AttnErr *err)
{
    if (!*text)
        return attn_err_set(err, ATTN_E_RANGE, g->path, 0, "%s", target && *target
                            ? "a target with no source: the text is the source (the encoder's), "
                              "--target the decoder's"
                            : "the text is empty: no source tokens, no maps");
    int rc = model_opened_set_text(g, text, strlen(text), err);
    if (rc == 0)
        rc = model_check_ids(g, text, strlen(text), err);
    if (rc == 0)
        rc = decoder_ids(g, target, err);
    if (rc == 0 && g->tgt.n > g->lm.info.n_positions)
        rc = attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, g->path, 0, "--target: %d tokens: %s takes at most %d",
                          g->tgt.n, g->name, g->lm.info.n_positions);
    if (rc == 0)
        rc = lm_forward_encdec(&g->lm, g->ids.id, g->ids.n, g->tgt.id, g->tgt.n, NULL, err);
    if (rc < 0)
        return rc;
    g->group = group;
    if (g->im) {
        import_close(g->im);
        free(g->im);
    }
    Rt *rt = g->lm.rt;
    if (group == GROUP_CROSS) {
        g->im = cross_imported(g, err);
    } else {
        Rt *side = group == GROUP_ENCODER ? rt->enc : rt;
        const BpeIds *ids = group == GROUP_ENCODER ? &g->ids : &g->tgt;
        RtMaps *maps = rt_maps_take(side);
        if (!maps)
            return attn_err_set(err, ATTN_E_NOMEM, g->path, 0, "out of memory");
        g->im = model_maps_imported(g->bpe, g->name, maps, ids->id, ids->n, side->sh.n_layer, side->sh.n_head,
                                    err);
    }
    if (!g->im)
        return -err->code;
    return import_pick(g->im, 0, 0, 0, NULL, err) < 0 ? -err->code : 0;
}
