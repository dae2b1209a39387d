#define _DEFAULT_SOURCE
/* Generation, head ablation and the logit lens in the window (issue 37),
 * the model source's (model_source.c) tools beyond the maps: Ctrl+G picks
 * the next token on the worker from the forward it already ran, as
 * --generate picks (core/generate.c), Ctrl+Left/Right step through the
 * generated tokens; Ctrl+K switches heads off on the worker's state
 * (lm_ablate), the predictions then also with every head on (a second
 * state, lm_twin, each keeping its own prefix); Ctrl+R the
 * logit lens (lm_logit_lens). Not the command line's (model_open.c,
 * model_generate.c). */
#include "attnviz/source.h"
#include "../app_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "model_window.h"

/* ---- on the worker ---------------------------------------------------------------------- */

/* The request's heads switched off in lm (a change resets the state: the
 * next forward computes every position; the heads staying off, the next
 * keeps the prefix). */
int explore_sync_ablation(Lm *lm, const Request *q, AttnErr *err)
{
    int L = lm->info.n_layer, H = lm->info.n_head;
    lm_ablate_mode(lm, q->ablate_mean);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            int want = q->ablated && q->ablated[l * H + h];
            if (lm_is_ablated(lm, l, h) != want && lm_ablate(lm, l, h, want, err) < 0)
                return -err->code;
        }
    return 0;
}

/* Token id's probability in softmax(logits), computed as lm_top_k computes
 * its probabilities (the largest logit subtracted, the sum in double, NaN
 * as -inf): the same float for the same logits. */
static float prob_of(const float *logits, int V, int id)
{
    float mx = -INFINITY;
    for (int v = 0; v < V; v++)
        mx = logits[v] > mx ? logits[v] : mx;
    double sum = 0.0;
    for (int v = 0; v < V; v++)
        sum += logits[v] == logits[v] ? exp((double)logits[v] - mx) : 0.0;
    return logits[id] == logits[id] ? (float)(exp((double)logits[id] - mx) / sum) : 0.0f;
}

/* Ctrl+G on the worker: the token after the last position, picked from its
 * logits as --generate picks (core/generate.c), with the UI's draws. */
static void pick_next(Lm *lm, const Request *q, Result *r, float *logits)
{
    int V = lm->info.n_vocab;
    int *order = malloc(sizeof *order * (size_t)V);
    double *p = malloc(sizeof *p * (size_t)V);
    AttnErr err = {0};
    if (order && p && lm_logits(lm, q->T - 1, logits, &err) == 0) {
        r->prng = q->prng;
        r->gen_id = gen_pick(logits, V, &q->gs, &r->prng, order, p);
        r->gen_p = prob_of(logits, V, r->gen_id);
    }
    free(order);
    free(p);
}

/* The logit lens of the predictions' position (lm_logit_lens: a forward
 * from that position on, each layer's residual stream through the output). */
static void lens_of(Lm *lm, const Request *q, Result *r)
{
    int L1 = lm->info.n_layer + 1, k = lm->info.n_vocab < LENS_TOP_K ? lm->info.n_vocab : LENS_TOP_K;
    AttnErr err = {0};
    r->lens_ids = calloc((size_t)L1 * LENS_TOP_K, sizeof *r->lens_ids);
    r->lens_p = calloc((size_t)L1 * LENS_TOP_K, sizeof *r->lens_p);
    if (!r->lens_ids || !r->lens_p || k < 1)
        return;
    int *ids = malloc(sizeof *ids * (size_t)L1 * k);
    float *p = malloc(sizeof *p * (size_t)L1 * k);
    if (ids && p && lm_logit_lens(lm, q->ids, q->T, q->pred_pos, k, ids, p, &err) == 0) {
        for (int l = 0; l < L1; l++)
            for (int m = 0; m < LENS_TOP_K; m++) {
                r->lens_ids[l * LENS_TOP_K + m] = m < k ? ids[l * k + m] : -1;
                r->lens_p[l * LENS_TOP_K + m] = m < k ? p[l * k + m] : 0.0f;
            }
        r->lens_pos = q->pred_pos;
    }
    free(ids);
    free(p);
}

/* The worker's second state (lm_twin of lm) with every head on: made when
 * heads are first switched off, kept while any are (each state then reuses
 * its own prefix: a keystroke costs one extra incremental forward, not two
 * whole ones), freed when none are. NULL when memory is short. */
static Lm *plain_state(Lm *lm, Lm **plain, int need)
{
    if (!need && *plain) {
        lm_close(*plain);
        free(*plain);
        *plain = NULL;
    }
    if (!need || *plain)
        return *plain;
    AttnErr err = {0};
    Lm *t = malloc(sizeof *t);
    if (t && lm_twin(t, lm, &err) == 0)
        return *plain = t;
    free(t);
    return NULL;
}

/* With heads switched off: the predictions' probabilities with every head
 * on, from the forward of the plain state (lm keeps the ablation), and the
 * most likely token then with its probability both ways. plain == lm when
 * memory was short for a second state: lm's ablation is cleared for that
 * forward (the next request's sets it again; both forwards are then whole
 * ones, as before the second state). */
static void without_ablation(Lm *lm, Lm *plain, const Request *q, Result *r, float *logits,
                             const LmHooks *hooks)
{
    int V = lm->info.n_vocab;
    float *abl = malloc(sizeof *abl * (size_t)V);
    Request none = *q;
    AttnErr err = {0};
    none.ablated = NULL;
    if (abl && lm_logits(lm, q->pred_pos, abl, &err) == 0 &&
        (plain != lm || explore_sync_ablation(lm, &none, &err) == 0) &&
        lm_forward(plain, q->ids, q->T, hooks, &err) == 0 && lm_logits(plain, q->pred_pos, logits, &err) == 0) {
        for (int k = 0; k < r->n_pred; k++)
            r->base_p[k] = prob_of(logits, V, r->pred_ids[k]);
        int top = 0;
        for (int v = 1; v < V; v++) /* ties: the lowest id, as the top k ranks */
            top = logits[v] > logits[top] ? v : top;
        r->base_top = top;
        r->base_top_p = prob_of(logits, V, top);
        r->base_top_p_abl = prob_of(abl, V, top);
        r->has_base = 1;
    }
    free(abl);
}

void explore_worker(Lm *lm, Lm **plain, const Request *q, Result *r, const LmHooks *hooks)
{
    for (int k = 0; q->ablated && k < r->L * r->H; k++)
        r->n_ablated += q->ablated[k] != 0;
    float *logits = malloc(sizeof *logits * (size_t)lm->info.n_vocab);
    if (logits && q->gen)
        pick_next(lm, q, r, logits);
    if (q->lens && q->pred_pos >= 0 && q->pred_pos < q->T)
        lens_of(lm, q, r);
    Lm *p = plain_state(lm, plain, r->n_ablated > 0);
    if (logits && r->n_ablated && r->n_pred)
        without_ablation(lm, p ? p : lm, q, r, logits, hooks);
    free(logits);
    r->computed = lm->rt->n_computed;
    r->computed_plain = p ? p->rt->n_computed : -1;
}

/* ---- on the UI thread -------------------------------------------------------------------- */

void explore_init(ModelSource *s, const Options *o)
{
    s->gen_start = s->gen_end = s->gen_view = -1;
    /* Ctrl+G as --generate would pick: greedy, or --sample's settings */
    if (o && o->sample)
        s->gs = (GenSettings){1, o->temp_set ? o->cfg.temperature : 1.0, o->top_k};
    prng_seed(&s->prng, o && o->has_seed ? o->seed : 0);
    const LmInfo *c = &s->g->lm.info; /* --ablate's heads: the window's to switch on and off from now on */
    s->ablate_mean = o && o->ablate_mean;
    if ((s->ablated = calloc((size_t)c->n_layer * c->n_head, 1)))
        for (int l = 0; l < c->n_layer; l++)
            for (int h = 0; h < c->n_head; h++)
                s->n_ablated += s->ablated[l * c->n_head + h] = (unsigned char)lm_is_ablated(&s->g->lm, l, h);
}

#define GEN_MARK "\xE2\x9C\xA6" /* ✦: a generated token's label */

/* The generated tokens' labels marked (those of ids[gen_start, gen_end)
 * that r's ids still hold), before the maps are picked. */
void explore_mark_generated(const ModelSource *s, Imported *im, const Result *r)
{
    if (s->gen_start < 0)
        return;
    for (int i = s->gen_start; i < s->gen_end && i < r->T && i < s->ids.n && r->ids[i] == s->ids.id[i]; i++) {
        size_t n = strlen(im->q_shown[i]) + sizeof GEN_MARK;
        char *t = malloc(n);
        if (!t)
            return;
        snprintf(t, n, GEN_MARK "%s", im->q_shown[i]);
        free(im->q_shown[i]); /* the keys' labels are the same strings */
        im->q_shown[i] = t;
    }
}

static int ids_push(BpeIds *ids, int id)
{
    if (ids->n == ids->cap) {
        int cap = ids->cap ? 2 * ids->cap : 16;
        int *p = realloc(ids->id, sizeof *p * (size_t)cap);
        if (!p)
            return -ATTN_E_NOMEM;
        ids->id = p;
        ids->cap = cap;
    }
    ids->id[ids->n++] = id;
    return 0;
}

/* The bar's text: the text generation started from, and what the tokens
 * generated since add to it as the decoder joins them (never tokenized
 * again: the ids are those picked). */
static int gen_text_show(AppState *a, ModelSource *s)
{
    char *t = model_continued_text(s->g->bpe, s->ids.id, s->ids.n, s->gen_start, s->gen_text);
    size_t len = t ? strlen(t) : 0;
    if (!t || app_text_reserve(a, len) < 0) {
        free(t);
        return -ATTN_E_NOMEM;
    }
    memcpy(a->text, t, len + 1);
    a->text_len = len;
    a->vs.cursor = (int)len;
    free(t);
    return 0;
}

/* The token r picked, appended to the text; the next asked for while
 * tokens are left, or the reason it stops (the end-of-text token, the
 * model's positions) said. */
void explore_gen_append(AppState *a, ModelSource *s, const Result *r)
{
    const LmInfo *c = &s->g->lm.info;
    int shown = s->ms.imp ? s->ms.imp->Tq : 0;
    if (s->gen_start < 0 || s->gen_end != s->ids.n) { /* a new run from the text as it is */
        free(s->gen_text);
        s->gen_text = strdup(a->text ? a->text : "");
        s->gen_start = s->ids.n;
    }
    if (!s->gen_text || ids_push(&s->ids, r->gen_id) < 0 || gen_text_show(a, s) < 0) {
        s->gen_left = 0;
        app_status(a, 1, "out of memory");
        return;
    }
    s->prng = r->prng;
    s->gen_end = s->ids.n;
    s->gen_left--;
    s->gen_view = -1;
    if (a->vs.query == shown - 1 || s->follow_end) { /* the query row follows the end */
        s->follow_end = 1;
        s->follow_row = a->vs.query;
    }
    char *w = model_visible(model_token_text(s->g->bpe, r->gen_id, SPACE_MARK, "?"));
    int n = s->gen_end - s->gen_start;
    if (lm_is_stop(c, r->gen_id)) {
        s->gen_left = 0;
        app_status(a, 0, "stopped at \xE2\x80\x9C%s\xE2\x80\x9D, %s's end-of-text token (%d generated; "
                   "Ctrl+Left/Right step through them)", w ? w : "?", s->g->name, n);
    } else if (s->ids.n >= c->n_positions) {
        s->gen_left = 0;
        app_status(a, 0, "stopped at %d tokens: %s takes no more (n_positions %d; %d generated)", s->ids.n,
                   s->g->name, c->n_positions, n);
    } else {
        app_status(a, 0, "generated \xE2\x80\x9C%s\xE2\x80\x9D (%.1f%%%s)%s%s", w ? w : "?", 100.0 * r->gen_p,
                   s->gs.sample ? ", sampled" : ", the most likely", s->gen_left > 0 ? ": Esc stops" : "",
                   s->gen_left > 0 ? "" : " \xC2\xB7 Ctrl+Left/Right: the generated tokens' rows");
    }
    free(w);
    s->stale = 1;
    lmsrc_submit(a);
    a->dirty = 1;
}

/* A token's text as the panel quotes it (␣ for its space); malloc'd. */
static char *quoted(const ModelSource *s, int id)
{
    return model_visible(model_token_text(s->g->bpe, id, SPACE_MARK, "\xE2\x80\xB9no token\xE2\x80\xBA"));
}

/* "L1 H4, L2 H1" of the heads switched off into out. */
void explore_ablated_list(const ModelSource *s, char *out, size_t cap)
{
    int L = s->g->lm.info.n_layer, H = s->g->lm.info.n_head;
    size_t u = 0;
    out[0] = '\0';
    for (int l = 0; l < L && s->ablated; l++)
        for (int h = 0; h < H && u < cap; h++)
            if (s->ablated[l * H + h])
                u += (size_t)snprintf(out + u, cap - u, "%sL%d H%d", u ? ", " : "", l + 1, h + 1);
}

/* The predictions after r->pred_pos into p (n bytes): the ten most likely;
 * with heads switched off each one's probability with every head on too,
 * and how the most likely token then fares; the token generated there
 * marked. Returns the bytes written. */
size_t explore_predictions_text(const ModelSource *s, const Result *r, char *p, size_t n)
{
    size_t u = 0;
#define PUT(...) (u += (size_t)snprintf(p + u, u < n ? n - u : 0, __VA_ARGS__), u = u < n ? u : n)
    int next = r->pred_pos + 1, chosen = -1;
    if (s->gen_start >= 0 && next >= s->gen_start && next < s->gen_end && next < s->ids.n)
        chosen = s->ids.id[next];
    char *t = model_shown_label(s->g->bpe, r->ids[r->pred_pos]);
    if (chosen >= 0)
        PUT("Generated token %d of %d was chosen from these, after \xE2\x80\x9C%s\xE2\x80\x9D (position %d)%s:\n",
            next - s->gen_start + 1, s->gen_end - s->gen_start, t ? t : "?", r->pred_pos + 1,
            s->gs.sample ? ", sampled" : "");
    else if (s->g->lm.info.masked_lm && r->ids[r->pred_pos] == model_mask_id(s->g->bpe))
        PUT("What fills the blank (\xE2\x80\x9C%s\xE2\x80\x9D, position %d):\n", t ? t : "?", r->pred_pos + 1);
    else if (s->g->lm.info.masked_lm)
        PUT("What fills position %d (\xE2\x80\x9C%s\xE2\x80\x9D):\n", r->pred_pos + 1, t ? t : "?");
    else if (s->g->lm.info.encdec && r->Tt > 1) { /* the decoder's next token after the target's last */
        char *w = model_shown_label(s->g->bpe, r->tgt_last);
        PUT("What comes next in the target, after \xE2\x80\x9C%s\xE2\x80\x9D (decoder position %d, over this "
            "source):\n", w ? w : "?", r->Tt);
        free(w);
    } else if (s->g->lm.info.encdec) /* an empty target: the decoder on its start token */
        PUT("The target's first token (the decoder after its start token, over this source):\n");
    else
        PUT("What comes next after \xE2\x80\x9C%s\xE2\x80\x9D (position %d):\n", t ? t : "?", r->pred_pos + 1);
    free(t);
    int base = r->has_base && r->n_ablated;
    if (r->n_ablated) {
        char list[300];
        explore_ablated_list(s, list, sizeof list);
        PUT("with %s %s%s\n", list, s->ablate_mean ? "mean-ablated" : "off",
            base ? "; in brackets: every head on" : "");
    }
    if (base) { /* first: the panel may have room for a few lines only */
        char *w = quoted(s, r->base_top);
        double d = log((double)r->base_top_p_abl) - log((double)r->base_top_p);
        PUT("\xE2\x80\x9C%s\xE2\x80\x9D, first with every head on: %.1f%% \xE2\x86\x92 %.1f%%, "
            "\xCE\x94 log p = %+.3f\n", w ? w : "?", 100.0 * r->base_top_p, 100.0 * r->base_top_p_abl, d);
        free(w);
    }
    int listed = 0;
    for (int k = 0; k < r->n_pred; k++) {
        char *w = quoted(s, r->pred_ids[k]);
        char was[40] = "";
        if (base)
            snprintf(was, sizeof was, " (%.1f%%)", 100.0 * r->base_p[k]);
        PUT("%2d. %5.1f%%%s  \xE2\x80\x9C%s\xE2\x80\x9D%s\n", k + 1, 100.0 * r->pred_p[k], was, w ? w : "?",
            r->pred_ids[k] == chosen ? "  \xE2\x97\x80 chosen" : "");
        listed |= r->pred_ids[k] == chosen;
        free(w);
    }
    if (chosen >= 0 && !listed) {
        char *w = quoted(s, chosen);
        PUT("\xE2\x97\x80 chosen: \xE2\x80\x9C%s\xE2\x80\x9D (not among these: sampled)\n", w ? w : "?");
        free(w);
    }
#undef PUT
    return u;
}

/* The logit lens after r->lens_pos into p: a row a layer, 0 the
 * embeddings, the last the predictions. Returns the bytes written. */
size_t explore_lens_text(const ModelSource *s, const Result *r, char *p, size_t n)
{
    size_t u = 0;
#define PUT(...) (u += (size_t)snprintf(p + u, u < n ? n - u : 0, __VA_ARGS__), u = u < n ? u : n)
    if (r->lens_pos < 0 || !r->lens_ids) {
        PUT("Logit lens: computing\xE2\x80\xA6");
        return u;
    }
    char *t = model_shown_label(s->g->bpe, r->ids[r->lens_pos]);
    PUT("Logit lens after \xE2\x80\x9C%s\xE2\x80\x9D (position %d): each layer's residual stream through the "
        "final norm and output layer, its top %d (Ctrl+R: back)\n", t ? t : "?", r->lens_pos + 1, LENS_TOP_K);
    free(t);
    for (int l = 0; l <= r->L; l++) {
        if (l == 0)
            PUT("embeddings:");
        else if (l == r->L)
            PUT("layer %d (the predictions):", l);
        else
            PUT("layer %d:", l);
        for (int m = 0; m < LENS_TOP_K && r->lens_ids[l * LENS_TOP_K + m] >= 0; m++) {
            char *w = quoted(s, r->lens_ids[l * LENS_TOP_K + m]);
            PUT("%s \xE2\x80\x9C%s\xE2\x80\x9D %.1f%%", m ? " \xC2\xB7" : "", w ? w : "?",
                100.0 * r->lens_p[l * LENS_TOP_K + m]);
            free(w);
        }
        PUT("\n");
    }
#undef PUT
    return u;
}

/* Ctrl+G (n tokens), Ctrl+Shift+G (ten), Esc (n = 0: stop). */
static void generate(AppState *a, ModelSource *s, int n)
{
    const LmInfo *c = &s->g->lm.info;
    if (n <= 0) {
        if (s->gen_left > 0)
            app_status(a, 0, "generation stopped (%d tokens generated)", s->gen_end - s->gen_start);
        s->gen_left = 0;
        return;
    }
    if (s->ids.n == 0) {
        app_status(a, 0, "type some text first: Ctrl+G continues it");
        return;
    }
    if (s->ids.n >= c->n_positions) {
        app_status(a, 1, "the text's %d tokens fill %s's %d positions (n_positions): nothing more to generate",
                   s->ids.n, s->g->name, c->n_positions);
        return;
    }
    if (s->gen_start >= 0 && s->gen_end == s->ids.n && lm_is_stop(c, s->ids.id[s->ids.n - 1])) {
        app_status(a, 0, "the text ends with %s's end-of-text token: generation stopped there (type to go on)",
                   s->g->name);
        return;
    }
    s->gen_left = n;
    app_status(a, 0, "generating %d token%s%s", n, n == 1 ? "" : "s", n > 1 ? " (Esc stops)" : "");
    lmsrc_submit(a);
}

/* The shown map's row of text position p (the inverse of text_pos): -1
 * when p is hidden (E). */
static int shown_row(const ModelSource *s, int p)
{
    const Imported *im = s->ms.imp;
    if (!im || !im->q_drop)
        return p;
    if (p < 0 || p >= im->f.Tq || im->q_drop[p])
        return -1;
    int row = 0;
    for (int i = 0; i < p; i++)
        row += !im->q_drop[i];
    return row;
}

/* Ctrl+Left / Ctrl+Right: the previous / next generated token; the query
 * row is the one it was chosen after (what that position looked at), the
 * panel the predictions it was chosen from. */
static void gen_step(AppState *a, ModelSource *s, int dir)
{
    int n = s->gen_start >= 0 ? s->gen_end - s->gen_start : 0;
    if (n <= 0 || s->gen_end > s->ids.n) {
        app_status(a, 0, "no generated tokens: Ctrl+G appends the one the model picks next");
        return;
    }
    int k = s->gen_view < 0 ? (dir > 0 ? 0 : n - 1) : s->gen_view + (dir > 0 ? 1 : -1);
    k = k < 0 ? 0 : k >= n ? n - 1 : k;
    int p = s->gen_start + k, row = shown_row(s, p - 1);
    if (row < 0 || !s->ms.imp || row >= s->ms.imp->Tq) {
        app_status(a, 0, "the token before generated token %d is hidden (E shows it)", k + 1);
        return;
    }
    s->gen_view = k;
    s->follow_end = 0;
    a->vs.query = row;
    char *w = quoted(s, s->ids.id[p]), *b = model_shown_label(s->g->bpe, s->ids.id[p - 1]);
    app_status(a, 0, "generated token %d of %d: \xE2\x80\x9C%s\xE2\x80\x9D, chosen after \xE2\x80\x9C%s\xE2\x80\x9D: "
               "its row is what position %d looked at, the panel what it was chosen from", k + 1, n, w ? w : "?",
               b ? b : "?", p);
    free(w);
    free(b);
    a->dirty = 1;
}

/* Ctrl+K: the shown head (the model view's selection there) switched off
 * or on again; Ctrl+Shift+K (one = 0): every head on; Alt+K (one = 2): a
 * head off gives zeros or its mean over the text (--ablate-mean's). */
static void ablate(AppState *a, ModelSource *s, int one)
{
    int L = s->g->lm.info.n_layer, H = s->g->lm.info.n_head;
    const MapsShown *ms = &s->ms;
    if (one == 2) {
        s->ablate_mean = !s->ablate_mean;
        app_status(a, 0, "a head switched off now gives %s (Alt+K: %s)%s",
                   s->ablate_mean ? "its mean output over the text" : "zeros",
                   s->ablate_mean ? "zeros" : "its mean", s->n_ablated ? "" : "; Ctrl+K switches the shown head off");
        if (!s->n_ablated) {
            a->dirty = 1;
            return; /* nothing computed changes until a head is off */
        }
        s->abl_serial++;
        s->stale = 1;
        lmsrc_submit(a);
        a->dirty = 1;
        return;
    }
    if (!s->ablated && !(s->ablated = calloc((size_t)L * H, 1))) {
        app_status(a, 1, "out of memory");
        return;
    }
    if (!one) {
        if (!s->n_ablated) {
            app_status(a, 0, "every head is on (Ctrl+K switches the shown one off)");
            return;
        }
        memset(s->ablated, 0, (size_t)L * H);
        s->n_ablated = 0;
        app_status(a, 0, "every head on again");
    } else {
        int l = ms->grid ? ms->grid_layer : ms->layer, h = ms->grid ? ms->grid_head : ms->head;
        if (l < 0 || h < 0 || l >= L || h >= H || (!ms->grid && ms->rollout)) {
            app_status(a, 0, "pick one layer and head to switch off (L, H; the average and rollout are not one head)");
            return;
        }
        unsigned char *c = &s->ablated[l * H + h];
        *c = !*c;
        s->n_ablated += *c ? 1 : -1;
        app_status(a, 0, "layer %d head %d %s (%d head%s off; Ctrl+K again: on, Ctrl+Shift+K: every head on)",
                   l + 1, h + 1, *c ? (s->ablate_mean ? "replaced by its mean over the text" : "switched off: its output zeroed")
                                    : "on again", s->n_ablated, s->n_ablated == 1 ? "" : "s");
    }
    s->abl_serial++;
    s->stale = 1;
    lmsrc_submit(a);
    a->dirty = 1;
}

/* The language model's own actions (issue 37); 1 when act was one. */
int explore_apply(AppState *a, const AppAction *act)
{
    ModelSource *s = a->src;
    switch (act->kind) {
    case ACT_GENERATE: generate(a, s, act->i); return 1;
    case ACT_GEN_STEP: gen_step(a, s, act->i); return 1;
    case ACT_ABLATE: ablate(a, s, act->i); return 1;
    case ACT_LOGIT_LENS:
        s->lens_shown = !s->lens_shown;
        app_status(a, 0, s->lens_shown ? "the logit lens of the selected position: each layer's top 5 (Ctrl+R: "
                                         "what comes next)" : "what comes next (Ctrl+R: the logit lens)");
        lmsrc_submit(a);
        a->dirty = 1;
        return 1;
    default: return 0;
    }
}

/* The session's part of the model's own: the heads switched off, how,
 * and whether the logit lens is shown. */
void explore_session_out(const AppState *a, AttnSession *sn)
{
    const ModelSource *s = a->src;
    int L = s->g->lm.info.n_layer, H = s->g->lm.info.n_head, most = (int)(sizeof sn->ablated / sizeof sn->ablated[0]);
    sn->n_ablated = 0;
    for (int l = 0; l < L && s->ablated; l++)
        for (int h = 0; h < H && sn->n_ablated < most; h++)
            if (s->ablated[l * H + h]) {
                sn->ablated[sn->n_ablated][0] = l;
                sn->ablated[sn->n_ablated++][1] = h;
            }
    sn->ablate_mean = s->ablate_mean;
    sn->logit_lens = s->lens_shown;
}

void explore_session_in(AppState *a, const AttnSession *sn)
{
    ModelSource *s = a->src;
    int L = s->g->lm.info.n_layer, H = s->g->lm.info.n_head, skipped = 0;
    if (!s->ablated)
        return;
    memset(s->ablated, 0, (size_t)L * H);
    s->n_ablated = 0;
    for (int i = 0; i < sn->n_ablated; i++) {
        int l = sn->ablated[i][0], h = sn->ablated[i][1];
        if (l < 0 || l >= L || h < 0 || h >= H) {
            skipped++;
            continue;
        }
        s->n_ablated += !s->ablated[l * H + h];
        s->ablated[l * H + h] = 1;
    }
    s->ablate_mean = sn->ablate_mean;
    s->lens_shown = sn->logit_lens;
    s->abl_serial++;
    s->stale = 1;
    if (skipped)
        app_status(a, 1, "%d of the session's switched-off heads are not %s's (it has %d layers of %d heads): "
                         "left on", skipped, s->g->name, L, H);
    lmsrc_submit(a);
}

int model_source_shown(const AppState *a, ModelShown *out)
{
    memset(out, 0, sizeof *out);
    if (a->kind != &source_model || !a->src)
        return -1;
    const ModelSource *s = a->src;
    const Result *r = s->last;
    out->T = s->ids.n;
    out->ids = s->ids.id;
    out->gen_start = s->gen_start;
    out->gen_end = s->gen_end;
    out->gen_left = s->gen_left;
    out->n_ablated = s->n_ablated;
    out->ablated = s->ablated;
    out->stale = s->stale;
    out->pred_pos = out->lens_pos = -1;
    if (!r)
        return 0;
    out->pred_pos = r->n_pred ? r->pred_pos : -1;
    out->n_pred = r->n_pred;
    out->pred_ids = r->pred_ids;
    out->pred_p = r->pred_p;
    out->has_base = r->has_base;
    out->base_p = r->base_p;
    out->base_top = r->base_top;
    out->base_top_p = r->base_top_p;
    out->base_top_p_abl = r->base_top_p_abl;
    out->computed = r->computed;
    out->computed_plain = r->computed_plain;
    out->lens_pos = r->lens_ids ? r->lens_pos : -1;
    out->lens_k = LENS_TOP_K;
    out->lens_ids = r->lens_ids;
    out->lens_p = r->lens_p;
    return 0;
}

